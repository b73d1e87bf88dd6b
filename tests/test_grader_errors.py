"""gradcheck's own failures are never the student's: a GraderError raised while the checked
code runs (its sandbox out of memory) passes through the call wrapper unchanged, exit 2."""

import os
import re
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


def test_ctrl_c_passes_through_the_call_wrapper():
    stop = KeyboardInterrupt()

    def forward(X):
        raise stop

    with pytest.raises(KeyboardInterrupt) as info:
        call_student(forward, np.zeros(3), owner="Linear", call="forward(X)")
    assert info.value is stop


def test_pytest_timeouts_failure_raised_by_its_handler_passes_through_the_call_wrapper(request):
    # flaky33: pytest-timeout's failure, raised by its SIGALRM handler in the checked code's frame, was worded as
    # the code's error ("Linear.forward(X) raised Failed: Timeout >600.0s") and cost a part of a graded test
    import pytest_timeout

    def forward(X):  # the timer fires while the checked code runs: pytest-timeout's own function raises
        pytest_timeout.timeout_sigalrm(request.node, pytest_timeout.Settings(600.0, "signal", False, True))

    with pytest.raises(pytest.fail.Exception, match="Timeout") as info:
        call_student(forward, np.zeros(3), owner="Linear", call="forward(X)")
    assert not isinstance(info.value, StudentCodeError)


@pytest.mark.parametrize("outcome", [lambda: pytest.skip("not today"), lambda: pytest.exit("stopped"),
                                     lambda: pytest.xfail("x"), lambda: pytest.fail("Timeout >600.0s")],
                         ids=["skip", "exit", "xfail", "fail_like_a_timeout"])
def test_a_pytest_outcome_the_checked_code_raises_is_its_error_inside_a_test(outcome):
    # review34 API_STUDENT_SKIP_PASSES_THROUGH: a student's backward calling pytest.skip() skipped the staff's pytest
    # test that checked it in process (was "1 failed" before session 33), pytest.exit would end the staff's session;
    # a pytest.fail worded like a timeout but raised by the student is the student's too
    assert "PYTEST_CURRENT_TEST" in os.environ

    def backward(dY):
        outcome()

    try:  # caught here, whatever it is: before, the outcome skipped this test or ended the session
        call_student(backward, np.zeros(3), owner="Linear", call="backward(dY)")
    except BaseException as exc:  # noqa: BLE001
        caught = exc
    assert isinstance(caught, StudentCodeError), repr(caught)
    assert re.match(r"Linear.backward\(dY\) raised (Skipped|Exit|XFailed|Failed)", str(caught)), str(caught)


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
