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

    subs, out, tmp = tmp_path / "subs", tmp_path / "out", tmp_path / "tmp"
    tmp.mkdir()
    for name in ("a_first", "b_kept", "c_kept"):
        _submission(subs / name, (ASSIGN / "solution" / "layers.py").read_text())
    r = run_here("grade", subs, "--tests", TESTS, "--out", out, "--workers", "2", "--timeout", "60", "--no-progress")
    assert r.returncode == 0, r.stdout
    (subs / "a_first" / "layers.py").write_text(SLOW)  # changed, graded first, slow: the signal comes inside it
    proc = subprocess.Popen([sys.executable, "-m", "gradcheck", "grade", str(subs), "--tests", str(TESTS), "--out",
                             str(out), "--workers", "1", "--force", "--timeout", "60", "--no-progress"], cwd=ROOT,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "MPLBACKEND": "Agg", "TMPDIR": str(tmp)})
    try:
        deadline = time.monotonic() + 120
        while True:  # until a_first's grading folder exists: its grading runs (its old complete result stays until
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()  # a new one replaces it:
            if list(tmp.glob("gradcheck-grade-*/cwd")):  # redteam29b L3, so no placeholder to wait for)
                break
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


FORGE = '''import json as _json, os as _os, struct as _struct, sys as _sys
import numpy as np

class Linear:
    def __init__(self):
        self.params = {"W": np.full((3, 5), 0.3), "b": np.zeros(3)}
        self.grads = {}
    def forward(self, X, training=False):
        if X.shape[0] == 7:  # a well-formed frame into the reply pipe, then the true reply
            hb = _json.dumps(HEAD).encode()
            _os.write(_json.loads(_sys.argv[1])["fd_out"], b"GCSB" + _struct.pack(">IQ", len(hb), 0) + hb)
        return X @ self.params["W"].T + self.params["b"]
    def backward(self, dY):
        return dY @ self.params["W"]
'''


@pytest.mark.parametrize("head", [{"ok": True, "meta": {}},
                                  {"ok": False, "meta": {"stage": "grader"},
                                   "error": {"type": "OSError", "message": "grader broke", "where": ""}}])
def test_a_forged_reply_frame_is_detected_and_never_shifts_the_replies(tmp_path, head):
    """M3: a well-formed frame written by the submission into the reply pipe (attacks/p_forge_ok_shift,
    p_forge_grader_continue) was read as the reply of the running request, and the true one as the next request's:
    the replies stayed shifted for the rest of the session ("The check stopped with AttributeError: 'NoneType'
    object has no attribute 'get'"; every later class "has no forward() method"; "raised OSError: grader broke"
    for every constructor). Each frame now carries the request's id: a forged one is detected as raw garbage is
    (the sandbox stopped, a message naming the grader's channel), and a new sandbox answers truly."""
    from gradcheck.sandbox import Sandbox, SandboxError

    (tmp_path / "hw.py").write_text(FORGE.replace("HEAD", repr(head)))
    X = np.arange(35.0).reshape(7, 5) / 10
    with Sandbox(files={"hw.py": str(tmp_path / "hw.py")}, timeout=30) as sb:
        layer = sb.load_layer("hw.py", "Linear")
        assert layer.forward(X[:4]).shape == (4, 3)
        with pytest.raises(SandboxError, match="without this request's id .*wrote into the grader's reply channel") as e:
            layer.forward(X)
        assert e.value.reason == "protocol"
    with Sandbox(files={"hw.py": str(tmp_path / "hw.py")}, timeout=30) as sb:
        np.testing.assert_array_equal(sb.load_layer("hw.py", "Linear").forward(X[:4]), X[:4] @ np.full((5, 3), 0.3))


def test_an_exception_of_the_graders_own_code_is_a_grader_error_never_the_students_message(tmp_path):
    """M3's other half: an exception of gradcheck's own code during a check was shown to the student as "The check
    stopped with AttributeError: 'NoneType' object has no attribute 'get'" and scored 0. Now it is a grader error
    (exit 1) naming where it was raised, and the student reads only that the autograder failed."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_staff.py").write_text(_STAFF_TEST.replace(
        "BODY", "    grade.layer_forward(layer, X, RefLinear(5, 3), points=2)"))
    (tmp_path / "tests" / "conftest.py").write_text(  # a bug planted in gradcheck's code (compiled as its file)
        "import gradcheck.grading.checks as C\n"
        "exec(compile('def broken(*a, **k):\\n    return None.get(\"x\")\\n', C.__file__, 'exec'), C.__dict__)\n"
        "C._finite_reference = C.broken\n")
    from gradcheck.grading.runner import grade_submission

    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", seed=1)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    error = data["extra_data"].get("grader_error", "")
    assert "gradcheck's own code raised AttributeError: 'NoneType' object has no attribute 'get'" in error, data
    assert "in broken" in error and r.status != "graded", (r.status, error)
    out = data["tests"][0]["output"]
    assert "AttributeError" not in out and "the autograder's own code failed" in out, out


@pytest.mark.parametrize("name, shown", [
    ("l\u0430yers.py", "`l\u0430yers.py` (character 2 is U+0430 CYRILLIC SMALL LETTER A)"),
    ("layers\u200b.py", "`layers\\u200b.py` (character 7 is U+200B ZERO WIDTH SPACE)"),
    ("\u202eyp.sreyal", "`\\u202eyp.sreyal` (character 1 is U+202E RIGHT-TO-LEFT OVERRIDE)"),
    ("layers.py ", "`layers.py ` (character 10 is U+0020 SPACE at the end)"),
    ("layers.py\n", "`layers.py\\x0a` (character 10 is U+000A, a control character)"),
    ("my layers.py", "`my layers.py`"),
])
def test_a_file_name_in_a_students_message_names_its_confusable_characters(name, shown):
    """M4: ``found: `lаyers.py``` (a Cyrillic а), a zero-width space, a right-to-left override, a trailing space or a
    newline looked exactly like the ``layers.py`` the test wanted. Each is now escaped as a submission's name is
    (:func:`display_name`, the invisible ones too) and its odd characters named."""
    from gradcheck.grading.runner import shown_file

    assert shown_file(name) == shown


def test_the_missing_file_message_names_a_homoglyph(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "l\u0430yers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_staff.py").write_text(_STAFF_TEST.replace(
        "BODY", "    grade.layer_forward(layer, X, RefLinear(5, 3), points=2)"))
    run_here("grade", tmp_path / "sub", "--single", "--tests", tmp_path / "tests", "--out", tmp_path / "out",
             "--seed", "1", "--no-progress")
    out = json.loads((tmp_path / "out" / "results.json").read_text())["tests"][0]["output"]
    assert "found: `l\u0430yers.py` (character 2 is U+0430 CYRILLIC SMALL LETTER A)." in out, out


def test_a_quoted_source_line_is_markdown_escaped_once(tmp_path):
    """L1: the line a student's error came from was Markdown-escaped, then quoted by ``repr``, which doubled each
    backslash: ``'big = np.ones((1 \\\\<\\\\< 30,))'`` rendered as ``1 \\<\\< 30``. Now quoted as it is (session 35:
    the sandbox's message holds the line as data, and results.json's Markdown escapes it once, where it is written)."""
    from gradcheck.grading.static import markdown_text
    from gradcheck.sandbox import Sandbox, SandboxError

    (tmp_path / "hw.py").write_text("import numpy as np\n\nclass L:\n    def __init__(self):\n"
                                    "        self.params, self.grads = {}, {}\n"
                                    "    def forward(self, X, training=False):\n"
                                    "        return np.ones((1 << 2, 1)) @ np.ones((2, 2))\n"
                                    "    def backward(self, dY):\n        return dY\n")
    with Sandbox(files={"hw.py": str(tmp_path / "hw.py")}, timeout=30, hostile=True) as sb:
        with pytest.raises(SandboxError) as e:
            sb.load_layer("hw.py", "L").forward(np.ones((2, 2)))
    assert "'return np.ones((1 << 2, 1)) @ np.ones((2, 2))'" in str(e.value), str(e.value)
    assert "'return np\\.ones((1 \\<\\< 2, 1)) @ np\\.ones((2, 2))'" in markdown_text(str(e.value)), str(e.value)
