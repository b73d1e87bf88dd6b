"""flaky32: a reply read after its call's time, while the machine's load starved the call, was then waited on for
bytes that never came (session 31's CI failed so: `test_each_forward_of_a_starved_batch_has_the_allowance`).

``Sandbox._chunk`` checks the time after each read of the reply pipe, so that a reply that keeps coming still has
its time limit. Past the limit it called ``_wait``, which, for a starved call, gave the time back and then waited in
``select`` for more of the reply: but the whole reply had already been read, the child was waiting for its next
request, and the grader waited on until the allowance (``STARVED_FACTOR`` limits) was used up, then reported the
machine "too busy" (``SandboxStarved``) of a call that had answered. On a loaded machine the grader, descheduled
between its read and the time check, checks after the limit; here that delay stands in deterministically.
"""

import numpy as np
import pytest
from test_sandbox_starved_s16 import SLOW_FORWARD, SLOW_IMPORT, ReplyPipe, waiting_all_along

from gradcheck import sandbox
from gradcheck.sandbox import Sandbox, SandboxError


def test_a_starved_reply_read_after_its_time_is_not_waited_on(tmp_path, monkeypatch):
    """The child's forward sleeps 1.5 s (limit 0.5 s) while ``/proc`` says it waited for a CPU all along: given its
    time back in steps, it replies; the grader runs again 0.7 s after reading the reply, past the time it was given. Before the
    fix: SandboxStarved after the whole allowance (about 5 s more); now the reply is returned."""
    (tmp_path / "slow.py").write_text(SLOW_FORWARD)
    waiting_all_along(monkeypatch)
    monkeypatch.setattr(sandbox, "os", late := ReplyPipe(late=0.7))  # past the 0.5 s given back at a time
    X = np.arange(6.0).reshape(2, 3) + 100  # X[0, 0] >= 100: this forward sleeps
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=0.5, session_timeout=60) as sb:
        layer = sb.load_layer("slow.py", "ReLU", {})
        late.sb = sb
        y = layer.forward(X)
        assert late.seen  # the grader did read this reply, then ran again past the call's time
        assert np.array_equal(y, X)
        assert np.array_equal(layer.forward(X - 100), X - 100)  # the sandbox still serves requests


def test_a_reply_read_whole_then_the_grader_descheduled_is_not_the_submissions_time(tmp_path, monkeypatch):
    """review33 LATE_READ_NOT_STARVED: an identity forward's whole reply was read, then the grading process did not
    run for 3 s (limit 2 s); the child, asleep waiting for its next request, is not starved, and the call was killed
    as "did not finish within 2 s": the time check after a read took the clock when the grader got round to it. Now
    a reply's bytes count from before the read that got them (:meth:`Sandbox._chunk`); the reply is returned."""
    (tmp_path / "quick.py").write_text(SLOW_IMPORT.replace("time.sleep(2.5)", "pass"))
    monkeypatch.setattr(sandbox, "os", late := ReplyPipe(late=3.0))
    X = np.arange(6.0).reshape(2, 3)
    with Sandbox(files=[str(tmp_path / "quick.py")], timeout=2.0, session_timeout=60) as sb:
        layer = sb.load_layer("quick.py", "ReLU", {})
        late.sb = sb
        y = layer.forward(X)
        assert len(late.seen) == 1  # the grader read this reply, then was off the cores past the call's limit
        assert np.array_equal(y, X)
        assert np.array_equal(layer.forward(X + 1), X + 1)  # the sandbox still serves requests


def test_a_reply_that_keeps_coming_past_its_limit_is_killed(tmp_path, monkeypatch):
    """review33 (surviving mutant ``sandbox.py:1205``): the time check after a read is what stops a reply that never
    needs a wait, its bytes always there: the reply pipe gives 8 bytes each 0.1 s (286 bytes: some 3.6 s; the
    limit is 1 s). The call is killed at its limit, named, before the reply is whole; without the check it was returned."""
    (tmp_path / "quick.py").write_text(SLOW_IMPORT.replace("time.sleep(2.5)", "pass"))
    X = np.arange(6.0).reshape(2, 3)
    with Sandbox(files=[str(tmp_path / "quick.py")], timeout=1.0, session_timeout=60) as sb:
        layer = sb.load_layer("quick.py", "ReLU", {})
        monkeypatch.setattr(sandbox, "os", whole := ReplyPipe(trickle=(1 << 20, 0.0)))
        whole.sb = sb
        assert np.array_equal(layer.forward(X), X)  # the reply at full speed: its size
        monkeypatch.setattr(sandbox, "os", slow := ReplyPipe(trickle=(8, 0.1)))
        slow.sb = sb
        with pytest.raises(SandboxError, match=r"^ReLU\.forward\(X\) with X of shape \(2, 3\) did not finish within "
                                               r"1 s \(wall clock\); the sandbox process was killed"):
            layer.forward(X)
        assert 0 < sum(map(len, slow.seen)) < sum(map(len, whole.seen))  # killed while its reply was coming
        with pytest.raises(SandboxError):  # the sandbox is dead
            layer.forward(X)
