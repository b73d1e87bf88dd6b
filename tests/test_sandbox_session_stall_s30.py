"""review29 SESSION_STALL (session 30): the grader's own stall near the end of a sandbox's session was charged to
the submission's call. The time the grader did not run while it waited was added to the call's limit, but that
allowance was capped by the session's end; and the session's clock ran on through the grader's own work between
requests (its comparisons, a staff test's reference layer), so a grader step that stalled past the session's end made
the next call a timeout ("did not finish within the session limit"), a part the student lost.

Now the session is charged the wall clock of its requests only, less the grader's stalls while it waited
(:meth:`gradcheck.sandbox.Sandbox._session_origin`). The submission's own time is still limited: a call that sleeps
past its limit is stopped as before.

No assertion reads the wall clock: the stall is a jump of the sandbox module's clock (the grader "was off the cores"
for that long, which takes no real time), injected in the grader's wait or in a grader step between requests, and the
tests assert the verdicts and reasons.
"""

import time
import types

import numpy as np
import pytest
from test_sandbox import INIT, linear

from gradcheck import sandbox
from gradcheck.grading.checks import layer_gradients
from gradcheck.sandbox import Sandbox, SandboxError
from manualprop import Linear

#: longer than any session below: a stall past its end wherever it falls
STALL = 1000.0


def _clock(monkeypatch):
    """The sandbox module's ``time`` with a ``monotonic`` that can jump forward (``clock.jump(s)``: the grader was
    stalled for ``s`` seconds); the rest of ``time`` as it is, and every other module's clock untouched."""
    offset = [0.0]
    clock = types.SimpleNamespace(**{k: getattr(time, k) for k in dir(time) if not k.startswith("__")})
    clock.monotonic = lambda: time.monotonic() + offset[0]
    clock.jump = lambda s: offset.__setitem__(0, offset[0] + s)
    monkeypatch.setattr(sandbox, "time", clock)
    return clock


def _stall_in_wait(monkeypatch, clock, sb):
    """The grader's wait for the child's reply overruns by :data:`STALL` seconds once, when ``armed[0]`` is set (the
    grading process was descheduled while it waited); returns ``armed``, False again once it stalled."""
    real, armed = sandbox.select.select, [False]
    real_read, early = sandbox.os.read, [True]

    def descheduled(*args):
        out = real(*args)
        if armed[0]:
            armed[0] = False
            clock.jump(STALL)
        return out

    def not_yet(fd, n):  # the grader reads before it waits: on a loaded machine the child's reply can be in the pipe
        # by then, and the grader never waits; the first read of the reply pipe once armed finds it empty, so it waits
        # (where the stall is), as it does whenever the child is slower than the grader. Only the reply pipe's: the
        # grader's own reads of /proc come first in each request (its CPU time, ``Sandbox._mark``) and swallow an
        # error (flakysweep32: the one-shot spent there, a reply already in the pipe was read without a wait)
        if fd == sb._r and armed[0] and early[0]:
            early[0] = False
            raise BlockingIOError
        return real_read(fd, n)

    monkeypatch.setattr(sandbox.select, "select", descheduled)
    monkeypatch.setattr(sandbox.os, "read", not_yet)
    return armed


def _reply_first(monkeypatch, sb):
    """The grader is off the cores from each request's send until the child's reply is in the pipe (the order a
    loaded machine gives: the child answers before the grader's first read, flakysweep32), whatever the load."""
    real_send, real_select = sb._send, sandbox.select.select

    def send_then_descheduled(*args):
        real_send(*args)
        assert sb._r in real_select([sb._r], [], [], 60.0)[0], "no reply in 60 s"

    monkeypatch.setattr(sb, "_send", send_then_descheduled)


def test_a_grader_stall_while_it_waits_near_the_sessions_end_is_not_the_calls(tmp_path, monkeypatch):
    """Was: SandboxError "... did not finish within the session limit of 4 s ...": the call's added allowance
    (``_grace``) was capped by the session's end, which the stall had passed; the forward had replied at once."""
    clock = _clock(monkeypatch)
    f = linear(tmp_path)
    with Sandbox(files=[str(f)], timeout=2.0, session_timeout=4.0) as sb:
        layer = sb.load_layer("student.py", "Linear", INIT)
        _reply_first(monkeypatch, sb)
        armed = _stall_in_wait(monkeypatch, clock, sb)
        X = np.arange(10.0).reshape(2, 5)
        armed[0] = True
        Y = layer.forward(X)
        assert not armed[0]  # the grader did stall, in this forward
        W, b = layer.params["W"], layer.params["b"]
        assert np.array_equal(Y, X @ W.T + b)
        assert np.array_equal(layer.forward(X + 1), (X + 1) @ W.T + b)  # and the session is not used up either


def test_a_slow_grader_step_between_requests_is_not_the_sessions(tmp_path, monkeypatch):
    """Was: the next call's SandboxError "did not finish within the session limit of 4 s": the session's clock ran
    while the grader worked between two requests (here a step that stalled past the session's end)."""
    clock = _clock(monkeypatch)
    f = linear(tmp_path)
    with Sandbox(files=[str(f)], timeout=2.0, session_timeout=4.0) as sb:
        layer = sb.load_layer("student.py", "Linear", INIT)
        X = np.ones((2, 5))
        Y = layer.forward(X)
        clock.jump(STALL)  # the grader's own step (a comparison, the reference layer) stalled
        dX = layer.backward(np.ones_like(Y))
        assert np.array_equal(dX, np.ones((2, 3)) @ layer.params["W"])


def test_a_stalled_grader_step_in_a_grade_costs_the_student_no_part(tmp_path, monkeypatch):
    """The grade of a correct Linear (assignments' solution, graded by :func:`layer_gradients` against the staff's
    reference) whose reference layer, the grader's own step between the sandbox's requests, stalls past the
    session's end: was 0 of 3 parts ("too slow"), now all three."""
    from pathlib import Path

    solution = Path(__file__).resolve().parents[1] / "assignments" / "linear_relu_ce" / "solution" / "layers.py"
    (tmp_path / "layers.py").write_text(solution.read_text())
    clock = _clock(monkeypatch)

    class StalledReference(Linear):
        def forward(self, X, training=False):
            clock.jump(STALL)
            return super().forward(X, training=training)

    X = np.random.default_rng(1).standard_normal((4, 8))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=2.0, session_timeout=4.0,
                 hostile=True) as sb:
        layer = sb.load_layer("layers.py", "Linear", {"in_features": 8, "out_features": 8})
        verdict = layer_gradients(layer, X, StalledReference(8, 8), seed=1)
    text = verdict.markdown()
    assert verdict.passed and verdict.fraction == 1.0, text
    assert "too slow" not in text


def test_the_submissions_own_time_is_still_limited_after_a_grader_stall(tmp_path, monkeypatch):
    """A forward that sleeps past its limit is still stopped, as its own timeout, when the grader stalled in its
    wait: the stall moves the limit, it does not lift it."""
    clock = _clock(monkeypatch)
    f = linear(tmp_path, forward="import time\nif X[0, 0] >= 100:\n    time.sleep(600)")
    with Sandbox(files=[str(f)], timeout=1.0, session_timeout=4.0) as sb:
        layer = sb.load_layer("student.py", "Linear", INIT)
        armed = _stall_in_wait(monkeypatch, clock, sb)
        armed[0] = True
        with pytest.raises(SandboxError, match=r"did not finish within 1 s \(wall clock\)") as ei:
            layer.forward(np.full((2, 5), 100.0))
        assert not armed[0] and ei.value.reason == "timeout"
        assert "wall clock: the time the grader itself did not run)" in str(ei.value)  # not "the machine's load"


def test_the_sessions_own_limit_still_stops_the_submission_after_a_grader_step(tmp_path, monkeypatch):
    """The session's limit still holds the submission's own time: a forward that sleeps is stopped at the session's
    limit (its own limit raised far past it), after a grader step that stalled between requests."""
    clock = _clock(monkeypatch)
    f = linear(tmp_path, forward="import time\nif X[0, 0] >= 100:\n    time.sleep(600)")
    with Sandbox(files=[str(f)], timeout=2.0, session_timeout=4.0) as sb:
        layer = sb.load_layer("student.py", "Linear", INIT)
        clock.jump(STALL)
        sb.timeout = 1000.0
        with pytest.raises(SandboxError, match=r"did not finish within the session limit of [0-9.]+ s \(4 s") as ei:
            layer.forward(np.full((2, 5), 100.0))
        assert ei.value.reason == "timeout"
