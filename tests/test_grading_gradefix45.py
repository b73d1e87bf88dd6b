"""verify45b's findings on the grader's time limits (session 45, gradefix45): a request in progress is the
submission's time for ``--submission-timeout`` (F6); the load and import failure caches keyed by the limit they failed
under (F9); timeout markers written with keywords read, and malformed ones refused at collection and by the packer
(F4, F5, F10); the "too slow" message names the tests' own limits (F7)."""

import threading
import time
import types

import pytest

from gradcheck import sandbox
from gradcheck.grading import runner
from tests.test_grading_policy import SOLUTION, _sandbox

SLEEPY = SOLUTION.replace("class ReLU", "import time as _t\n\n\nclass ReLU", 1) + '''

class Sleepy(ReLU):
    def forward(self, X):
        _t.sleep(1.5)
        return super().forward(X)
'''


def test_a_request_in_progress_is_written_as_the_submissions_and_the_runner_counts_it(tmp_path):
    """F6: an endless call was the grader's own time while it ran (only a request that came back was in the file), so
    one call under a large marker ran twice ``--submission-timeout``."""
    import numpy as np

    path = tmp_path / runner.SUBMISSION_SECONDS
    seen = []
    try:
        sandbox.charge_requests_to(path)
        with _sandbox(tmp_path, SLEEPY) as sb:
            layer = sb.load_layer("layers.py", "Sleepy", {})
            call = threading.Thread(target=layer.forward, args=(np.ones((2, 3)),))
            call.start()
            while call.is_alive() and not seen:
                fields = path.read_text().split()
                if len(fields) == 2:
                    seen = fields
                time.sleep(0.05)
            call.join()
        assert seen and float(seen[1]) <= time.monotonic()  # the start of the call in progress
        after = path.read_text().split()
        assert len(after) == 1 and float(after[0]) >= 1.5  # the call came back: charged, nothing in progress
    finally:
        sandbox.charge_requests_to(None)
    path.write_text(f"1.500 {time.monotonic() - 4.0:.3f}")  # 1.5 s of requests done, one running for 4 s
    assert runner._uncharged(path, 10.0, 20.0) == pytest.approx(4.5, abs=0.1)  # not 8.5
    assert runner._uncharged(path, 5.0, 20.0) == 0.0


def _student_with(holder, seconds):
    """A :class:`plugin.Student` for a test marked ``timeout(seconds)`` (no pytest session: stand-ins)."""
    from gradcheck.grading import plugin

    marker = types.SimpleNamespace(args=(seconds,), kwargs={})
    item = types.SimpleNamespace(get_closest_marker=lambda name: marker if name == "timeout" else None,
                                 iter_markers=lambda name: iter([marker] if name == "timeout" else []), nodeid="t.py::t",
                                 config=types.SimpleNamespace(getoption=lambda name: 3.0 if "timeout" in name else 0))
    return plugin.Student(holder, item)


def test_a_load_that_timed_out_under_a_smaller_limit_is_tried_again_under_a_larger_one():
    """F9: test_a timeout(1) timed out a 1.5 s constructor; test_b timeout(10) was refused it at once ("not run
    again"), 0 / 6 for a right submission, 5 / 6 with the tests in the other order."""
    from gradcheck.sandbox import SandboxError

    limits = []

    def load_layer(file, class_name, init, **kw):
        limits.append(len(limits))
        raise SandboxError("building layers.py::ReLU() did not finish within 1 s.", reason="timeout")

    sb = types.SimpleNamespace(load_layer=load_layer)
    holder = types.SimpleNamespace(require=lambda f: None, files=lambda: {}, root=".", load_failures={},
                                   imported=lambda file, timeout: sb)
    for seconds in (1, 1, 10, 10, 5):
        with pytest.raises(SandboxError):
            _student_with(holder, seconds).layer("layers.py", "ReLU")
    assert len(limits) == 2  # under 1 s once, under 10 s once; not again under 1 s, 10 s or 5 s


def test_an_import_that_timed_out_under_a_smaller_limit_is_tried_again_under_a_larger_one(tmp_path):
    from gradcheck.grading import plugin
    from gradcheck.sandbox import SandboxError

    holder = plugin._SandboxHolder.__new__(plugin._SandboxHolder)
    holder.import_failures, holder._imported, tried = {}, set(), []

    def import_file(file):
        tried.append(file)
        raise SandboxError("importing layers.py did not finish within 1 s.", reason="timeout")

    holder.get = lambda timeout: types.SimpleNamespace(import_file=import_file)
    for seconds in (1.0, 1.0, 10.0, 2.0):
        with pytest.raises(SandboxError):
            holder.imported("layers.py", seconds)
    assert tried == ["layers.py"] * 2
    holder.import_failures["layers.py"] = (SandboxError("the sandbox's process was killed", reason="signal"), 1.0)
    with pytest.raises(SandboxError, match="not imported again"):  # a crash is not a matter of time
        holder.imported("layers.py", 100.0)


def _item(own=(), module=()):
    """A stand-in test item with its own ``timeout`` marks ``own`` and its file's ``module`` (real pytest marks)."""
    nodes = [types.SimpleNamespace(nodeid="t.py", name="t.py", own_markers=[m.mark for m in module]),
             types.SimpleNamespace(nodeid="t.py::test_x", name="test_x", own_markers=[m.mark for m in own])]
    marks = [m.mark for m in [*own, *module]]  # closest first, as pytest's iter_markers gives them
    return types.SimpleNamespace(nodeid="t.py::test_x", listchain=lambda: nodes,
                                 iter_markers=lambda name: iter([m for m in marks if m.name == name]))


@pytest.mark.parametrize(("own", "seconds"), [
    (pytest.mark.timeout(timeout=10), 10.0),  # pytest-timeout's keyword: was None (--timeout's 3 s)
    (pytest.mark.timeout(10, method="thread"), 10.0),
    (pytest.mark.timeout(timeout=2.5, method="signal", func_only=True), 2.5),
    (pytest.mark.timeout(4, "thread"), 4.0),
])
def test_a_marker_in_pytest_timeout_s_spelling_is_read(own, seconds):
    from gradcheck.grading import plugin

    assert plugin._marker_timeout(_item([own])) == seconds
    assert plugin._marker_timeout(_item([own], [pytest.mark.timeout(1)])) == seconds  # the test's own wins


@pytest.mark.parametrize(("own", "module", "said"), [
    ([pytest.mark.timeout(seconds=10)], [], "seconds is not one of them"),
    ([pytest.mark.timeout()], [], "needs a number of seconds >= 0.01"),
    ([pytest.mark.timeout(1e-300)], [], "needs a number of seconds >= 0.01"),
    ([pytest.mark.timeout(0.005)], [], "needs a number of seconds >= 0.01"),
    ([pytest.mark.timeout(10, timeout=5)], [], "timeout is not one of them, or is given twice"),
    ([pytest.mark.timeout(10, method="process")], [], "method must be one of"),
    ([pytest.mark.timeout(10, func_only="yes")], [], "func_only must be True or False"),
    ([pytest.mark.timeout(1), pytest.mark.timeout(100)], [], "2 timeout(seconds) markers on t.py::test_x"),
    ([pytest.mark.timeout(10)], [pytest.mark.timeout(-5)], "got timeout(-5)"),
])
def test_a_marker_that_cannot_be_read_one_way_is_refused(own, module, said):
    from gradcheck.grading import plugin

    with pytest.raises(pytest.UsageError) as err:
        plugin._marker_timeout(_item(own, module))
    assert said in str(err.value) and str(err.value).startswith("t.py::test_x: ")


def test_the_autograder_packer_refuses_tests_whose_markers_grading_refuses(tmp_path):
    """F10: ``gradcheck assignment autograder`` packed tests with ``timeout(0)``; every Gradescope submission was then
    a grader error ("pytest exit code 4")."""
    from gradcheck.assignment import autograder_zip
    from gradcheck.errors import UsageError

    (tmp_path / "hw" / "tests").mkdir(parents=True)
    (tmp_path / "hw" / "tests" / "test_relu.py").write_text(
        "import pytest\n\n\n@pytest.mark.timeout(timeout=0)\ndef test_relu(student, grade):\n    pass\n")
    with pytest.raises(UsageError, match=r"(?s)cannot be collected .*needs a number of seconds >= 0.01") as err:
        autograder_zip(tmp_path / "hw", tmp_path / "dist")
    assert "not packed" in str(err.value) and not (tmp_path / "dist").exists()


def test_the_too_slow_message_gives_the_tests_own_limit_per_call():
    """F7: "Each call into your code is limited to 3 s" (--timeout) where the tests' markers allowed 5 s or 1e9 s."""
    assert runner._call_limits([5.0], 3.0) == "5 s"
    assert runner._call_limits([3.0, 5.0, 5], 3.0) == "3 to 5 s (each test's own)"
    assert runner._call_limits(None, 3.0) == "3 s" and runner._call_limits(["x", True, -1], 4.0) == "4 s"


FOREVER_TESTS = '''
import pytest
from manualprop import ReLU as RefReLU

pytestmark = [pytest.mark.timeout(timeout=100)]


@pytest.mark.points(1)
def test_relu_forward(student, grade, rng):
    """ReLU: forward output"""
    grade.layer_forward(student.layer("layers.py", "ReLU"), rng.standard_normal((4, 3)), RefReLU(), points=1)
'''


def test_the_too_slow_message_of_a_grading_names_the_test_s_marker(tmp_path):
    """F7 end to end: a constructor that never returns, under the test's timeout(timeout=100), graded with
    --submission-timeout 3: the message names the test's 100 s (was --timeout's 3 s). (The time it took is not
    asserted: the unit test above covers the limit, a timed test would depend on the machine's load.)"""
    import json

    from gradcheck.grading.runner import grade_submission
    from gradcheck.sandbox import support

    for d in ("sub", "tests"):
        (tmp_path / d).mkdir()
    (tmp_path / "tests" / "test_relu.py").write_text(FOREVER_TESTS)
    (tmp_path / "sub" / "layers.py").write_text(SOLUTION.replace(
        "    def __init__(self):\n        self.params, self.grads = {}, {}",
        "    def __init__(self):\n        while True:\n            pass\n        self.params, self.grads = {}, {}", 1))
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", submission_timeout=3.0,
                         unsafe_no_isolation=support()[0] == "none")
    out = json.loads((tmp_path / "out" / "results.json").read_text())["output"]
    assert r.score == 0 and "too slow" in out and "limited to 100 s," in out, out
