"""gradcheck's own failures are never the student's: a GraderError raised while the checked
code runs (its sandbox out of memory) passes through the call wrapper unchanged, exit 2."""

from pathlib import Path

import numpy as np
import pytest

from gradcheck._validation import call_student, raised
from gradcheck.errors import GraderError, StudentCodeError
from gradcheck.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
CORRECT = str(ROOT / "examples" / "student_linear_correct.py")


def test_the_sandbox_out_of_memory_inside_a_checked_call_is_gradchecks_error_not_the_students():
    # 200 MB of input (shared memory the child maps: 80 MB now fits beside numpy) into a sandbox of 256 MiB: the child fails receiving it, before any student
    # code; through call_student (as the check pipeline calls forward and backward) it stays a
    # GraderError, exit 2, and the message does not say the code raised
    with Sandbox(files={"s.py": CORRECT}, memory_mb=256) as sb:
        layer = sb.load_layer("s.py", "Linear", {"in_features": 5, "out_features": 3})
        with pytest.raises(GraderError) as info:
            call_student(layer.forward, np.zeros((5_000_000, 5)), owner="Linear", call="forward(X)")
    assert not isinstance(info.value, StudentCodeError) and info.value.exit_code == 2
    msg = str(info.value)
    assert "not a fault of the checked code" in msg and "raised GraderError" not in msg
    assert ".." not in msg.replace("...", "")


def test_a_students_exception_still_becomes_a_student_code_error_with_one_full_stop():
    def forward(X):
        raise ValueError("shapes do not match.")

    with pytest.raises(StudentCodeError) as info:
        call_student(forward, np.zeros(3), owner="Linear", call="forward(X)")
    msg = str(info.value)
    assert msg.startswith("Linear.forward(X) raised ValueError: shapes do not match")
    assert msg.endswith("in forward).") and ".." not in msg and "match." not in msg
    assert raised(ValueError("")).startswith("ValueError: (no message)")


@pytest.mark.parametrize("stop", [pytest.fail.Exception("Timeout >600.0s"), pytest.skip.Exception("skipped"),
                                  pytest.exit.Exception("stopped"), KeyboardInterrupt()], ids=type)
def test_what_stops_the_run_passes_through_the_call_wrapper(stop):
    # flaky33: pytest-timeout's failure, raised by its SIGALRM handler in the checked code's frame, was worded as
    # the code's error ("Linear.forward(X) raised Failed: Timeout >600.0s") and cost a part of a graded test
    def forward(X):
        raise stop

    with pytest.raises(type(stop)) as info:
        call_student(forward, np.zeros(3), owner="Linear", call="forward(X)")
    assert info.value is stop


def test_a_students_sys_exit_is_still_the_students():
    def forward(X):
        raise SystemExit(3)

    with pytest.raises(StudentCodeError, match=r"Linear.forward\(X\) raised SystemExit: 3"):
        call_student(forward, np.zeros(3), owner="Linear", call="forward(X)")


def test_outside_a_pytest_test_an_outcome_is_the_checked_code_s_own(monkeypatch):
    # gradcheck check of a layer whose forward calls pytest.fail(...) itself: its error, worded, not a traceback
    monkeypatch.delenv("PYTEST_CURRENT_TEST")

    def forward(X):
        pytest.fail("my own check")

    with pytest.raises(StudentCodeError, match=r"Linear.forward\(X\) raised Failed: my own check"):
        call_student(forward, np.zeros(3), owner="Linear", call="forward(X)")
