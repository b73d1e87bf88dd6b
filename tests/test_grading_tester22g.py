"""tester22g's grader findings (session 22): H1 a staff mistake in a ``grade.*`` call's arguments graded as every
student's 0 with exit 0, and ``points=`` taken by the one-part checks but not by ``layer_gradients``."""

import json

import numpy as np
import pytest

from gradcheck.grading.checks import GradingTestError, layer_gradients
from manualprop import Linear
from tests.test_cli import run_here
from tests.test_grading_tester21g import _STAFF_TEST, ASSIGN, _linear


def _staff(tmp_path, marker: str, body: str):
    """Grade the assignment's solution with one staff test of ``body`` (``points(2)`` replaced by ``marker``)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_staff.py").write_text(_STAFF_TEST.replace("points(2)", marker).replace("BODY", body))
    r = run_here("grade", tmp_path / "sub", "--single", "--tests", tmp_path / "tests", "--out", tmp_path / "out",
                 "--seed", "1", "--no-progress")
    return r, json.loads((tmp_path / "out" / "results.json").read_text())


@pytest.mark.parametrize("call, said", [
    ("grade.layer_gradients(layer, X, RefLinear(5, 3), point=3)", "got an unexpected keyword argument 'point'"),
    ("grade.layer_forward(layer, X, RefLinear(5, 3), parts={'Y': 3})", "got an unexpected keyword argument 'parts'"),
    ("grade.layer_forward(layer, X)", "missing a required argument: 'reference'"),
])
def test_a_staff_mistake_in_a_grade_calls_arguments_is_a_grader_error(tmp_path, call, said):
    """H1: ``grade.layer_gradients(..., points=3)`` raised its TypeError in gradcheck's frame (the fixture forwards
    the keywords), so the test's own mistake was not seen as the staff's: the shipped solution scored 25/28, every
    student lost the test's 3 points, exit 0. Now the staff's arguments are bound against the check's signature
    before it runs: a grader error naming the test and the keyword, exit 1, nothing scored."""
    r, data = _staff(tmp_path, "points(3)", f"    {call}")
    assert r.returncode == 1, (r.stdout, r.stderr, data)
    error = " ".join(data["extra_data"]["grader_error"].split())
    assert error.startswith("test test_staff.py::test_linear: grade.") and said in error, error
    assert "this test is faulty" in data["tests"][0]["output"]


def test_points_is_taken_by_layer_gradients_as_by_the_one_part_checks(tmp_path):
    """H1's other half: ``points=`` is what ``layer_forward``, ``loss_value`` and ``loss_gradient`` take; the
    multi-part ``layer_gradients`` now takes it too, the check's total shared equally by its tensors (a ``db``
    wrong costs a third of ``points=3``), and the solution earns it all."""
    r, data = _staff(tmp_path, "points(3)", "    grade.layer_gradients(layer, X, RefLinear(5, 3), points=3, seed=2)")
    assert r.returncode == 0 and "grader_error" not in data["extra_data"], data
    assert data["tests"][0]["score"] == 3.0, data
    (tmp_path / "hw.py").write_text("import numpy as np\n\n" + _linear("L", frozenset({"db_mean"})))
    from gradcheck.sandbox import Sandbox

    X = np.random.default_rng(0).standard_normal((8, 5))
    with Sandbox(files={"hw.py": str(tmp_path / "hw.py")}, timeout=30) as sb:
        v = layer_gradients(sb.load_layer("hw.py", "L"), X, Linear(5, 3), seed=2, points=3)
    assert [(p.name, p.points, p.passed) for p in v.parts] == [("dX", 1.0, True), ("dW", 1.0, True),
                                                               ("db", 1.0, False)]
    with pytest.raises(GradingTestError, match="both parts= and points= were given"):
        layer_gradients(Linear(5, 3), X, Linear(5, 3), parts={"dX": 1}, points=3)


@pytest.mark.parametrize("name, kept", [("notes 10:30.txt", "notes 10:30.txt"), ("see http:/x.txt", "see http:/x.txt"),
                                        ("lab:2/c.txt", "lab:2/c.txt")])
def test_a_colon_in_a_member_name_is_unpacked(tmp_path, name, kept):
    """M1: any top-level member with ':' was refused ("would be written outside the submission's folder"), so a
    zip holding ``notes 10:30.txt`` beside layers.py graded nothing. On Linux a colon is a file name's; only a
    Windows drive prefix (``C:``) is refused."""
    import io
    import zipfile

    from gradcheck.grading.archive import unpack

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("layers.py", "x = 1\n")
        z.writestr(name, "hello\n")
    (tmp_path / "sub.zip").write_bytes(buf.getvalue())
    (tmp_path / "out").mkdir()
    unpack(tmp_path / "sub.zip", tmp_path / "out")
    assert (tmp_path / "out" / kept).read_text() == "hello\n" and (tmp_path / "out" / "layers.py").exists()


@pytest.mark.parametrize("name", ["C:/x/layers.py", "c:layers.py", "D:\\\\evil.py", "/etc/x.py", "../x.py"])
def test_a_drive_an_absolute_path_and_dotdot_are_still_refused(tmp_path, name):
    import io
    import zipfile

    from gradcheck.grading.archive import ArchiveRefused, unpack

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo(name), "x = 1\n")
    (tmp_path / "sub.zip").write_bytes(buf.getvalue())
    (tmp_path / "out").mkdir()
    with pytest.raises(ArchiveRefused, match="would be written outside the submission's folder"):
        unpack(tmp_path / "sub.zip", tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_a_stopped_force_run_keeps_the_old_results_of_submissions_it_never_started(tmp_path):
    """M5: ``--force`` stopped by SIGTERM wrote "not graded" over the complete results of every submission it had
    not started (25 of 32 became 'not graded'). An old result now stays until a new one replaces it: the never
    started keep their rows and results.json (still complete, so a rerun keeps them); the one that started, and
    whose files changed, is not graded."""
    import csv
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.test_grading_sigterm import ROOT, SLOW, TESTS, _submission

    subs, out = tmp_path / "subs", tmp_path / "out"
    for name in ("a_first", "b_kept", "c_kept"):
        _submission(subs / name, (ASSIGN / "solution" / "layers.py").read_text())
    r = run_here("grade", subs, "--tests", TESTS, "--out", out, "--workers", "2", "--timeout", "60", "--no-progress")
    assert r.returncode == 0, r.stdout
    (subs / "a_first" / "layers.py").write_text(SLOW)  # changed, graded first, slow: the signal comes inside it
    proc = subprocess.Popen([sys.executable, "-m", "gradcheck", "grade", str(subs), "--tests", str(TESTS), "--out",
                             str(out), "--workers", "1", "--force", "--timeout", "60", "--no-progress"], cwd=ROOT,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "MPLBACKEND": "Agg"})
    try:
        deadline = time.monotonic() + 120
        while True:  # until a_first's placeholder replaced its old result: its grading runs
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            try:
                if json.loads((out / "a_first" / "results.json").read_text())["extra_data"]["complete"] is False:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143 and "Traceback" not in stderr, (stdout, stderr)
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    assert rows["a_first"]["score"] == "" and rows["a_first"]["status"].startswith("not graded"), rows
    for name in ("b_kept", "c_kept"):
        assert rows[name]["score"] == "28", rows[name]
        data = json.loads((out / name / "results.json").read_text())
        assert data["score"] == 28 and data["extra_data"]["complete"] is True, data
