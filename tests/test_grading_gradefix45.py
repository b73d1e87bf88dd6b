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
