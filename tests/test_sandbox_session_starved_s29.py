"""flaky28's MEDIUM (session 29): a CPU-bound call that reached the *session* limit was reported
:class:`SandboxStarved` ("the grading machine was too busy", a grader error a regrade cannot clear) even on an idle
machine: ``_timeout`` applied the running call's starved test, whose call had used a fraction of its own limit.

The session limit now has its own rule, the per-call measure over the whole session
(:meth:`gradcheck.sandbox.Sandbox._session_starved`): the CPU time its requests were due (the wall clock they ran)
against the CPU time the process had; a process that had it used its session (a timeout, the submission's), a
runnable one short of it gets the rest, up to ``STARVED_FACTOR`` times the session's limit, and only then is starved.
No assertion depends on the machine's speed: ``/proc``'s reading is stood in for, as in test_sandbox_starved_s16, and
which limit comes first is fixed by arithmetic."""

import time

import numpy as np
import pytest
from test_sandbox import INIT, linear

from gradcheck import sandbox
from gradcheck.sandbox import STARVED_FACTOR, Sandbox, SandboxError, SandboxStarved


def test_a_busy_call_at_the_session_limit_on_an_idle_machine_is_the_submissions_timeout(tmp_path, monkeypatch):
    """Was: SandboxStarved "... was stopped at its time limit (1000 s of wall clock for each call ...) while its process
    was still runnable and 984.05 s short of that much CPU time: the grading machine was too busy" (flaky28's
    busy_session.py on an idle machine). The forward loops (stood in for: runnable, with all the CPU time since the
    session began), its own limit raised to 1000 s after the load, so the session's (4 s plus 2 s per further call
    of the load's probes, the per-call limit when they ran: a probe's 2 s as in the tests below, where the 12 s of
    before waited 10 s more per probe for nothing) comes first whatever the machine's speed."""
    f = linear(tmp_path, forward="import time\nif X[0, 0] >= 100:\n    time.sleep(600)")
    with Sandbox(files=[str(f)], timeout=2.0, session_timeout=4.0) as sb:
        layer = sb.load_layer("student.py", "Linear", INIT)
        sb.timeout = 1000.0  # this forward's own limit far past the session's end
        had = sandbox._tree_cpu(sb._proc.pid)[0]  # its CPU time so far, and from here all the wall clock's
        real = sandbox._tree_usage  # (the run-queue wait read as it is)
        monkeypatch.setattr(sandbox, "_tree_usage",
                            lambda pid: (had + time.monotonic() - sb._started, True, real(pid)[2]))
        with pytest.raises(SandboxError, match=r"did not finish within the session limit of [0-9.]+ s \(4 s, plus ") \
                as ei:  # (plus 1000 s, the raised limit, for each further call: the message reads it now)
            layer.forward(np.full((2, 5), 100.0))
        assert ei.value.reason == "timeout" and "too busy" not in str(ei.value)
        assert sb._given == 0.0  # it had its CPU time: no allowance


def _session(sb, used, monkeypatch, waited=None):
    """``sb`` set at known times: a request from 1001 after 1 s of others (the session charged from 1000, its 4 s
    ending at 1004: only requests are charged, session 30), 0.3 s of CPU time when ready (so 4.3 s due at the end);
    ``used``: the CPU time ``/proc`` reads and whether the process is runnable; ``waited()``: the seconds it waited on
    a run queue for a CPU since it was ready (its run-queue wait stood in for; redteam30 S1: only that time is the
    load's), by default the CPU time it did not have of the 4.0 s its requests ran, plus every second it was given
    since (it waited through them). ``/proc``'s reading (``_tree_usage``: CPU, runnable, wait) stood in for."""
    sb._started, sb._extra, sb._slack, sb._given, sb._due = 1000.0, 0.0, 0.0, 0.0, None
    sb._req_wall, sb._req_t0, sb._ready_cpu, sb._student_ran, sb._ready_wait = 1.0, 1001.0, 0.3, True, 0.0
    waited = waited or (lambda: 4.3 - used[0] + sb._given)
    monkeypatch.setattr(sandbox, "_tree_usage", lambda pid: (used[0], used[1], waited()))


def test_a_session_short_of_its_cpu_time_gets_the_rest_and_then_is_charged(tmp_path, monkeypatch):
    f = linear(tmp_path)
    with Sandbox(files=[str(f)], timeout=2.0, session_timeout=4.0) as sb:
        used, wait = [1.8, True], [2.5]  # runnable, 1.5 s of the 4.0 s its requests ran, waiting the rest
        _session(sb, used, monkeypatch, lambda: wait[0])
        assert sb._session_end == 1004.0
        assert sb._session_starved(1004.0) and sb._given == pytest.approx(2.5)  # the CPU time it had not had
        assert sb._session_end == pytest.approx(1006.5)
        used[0] = 4.3  # it had it: its own timeout
        assert not sb._session_starved(1006.5) and sb._session_short is None
        used[0], used[1], wait[0] = 1.8, False, 0.0  # asleep or waiting (no run-queue wait): not the machine's load
        sb._given, sb._slack, sb._due = 0.0, 0.0, None
        assert not sb._session_starved(1004.0) and sb._session_short is None


def test_a_starved_session_is_starved_only_past_its_allowance(tmp_path, monkeypatch):
    f = linear(tmp_path)
    with Sandbox(files=[str(f)], timeout=2.0, session_timeout=4.0) as sb:
        _session(sb, [1.8, True], monkeypatch)  # never gets more CPU time
        now, grants = 1004.0, 0
        while sb._session_starved(now):
            now, grants = sb._session_end, grants + 1
        cap = 1000.0 + STARVED_FACTOR * 4.0
        assert now == pytest.approx(cap) and grants == 15 and sb._session_short == pytest.approx(2.5)
        with pytest.raises(SandboxStarved, match=r"forward was stopped at the session's time limit \(4 s of wall clock, "
                                                 r"up to 10 times that .*had waited 2.50 s more for a CPU .*too busy"):
            sb._timeout("forward", 2e9)  # the call's own limit later: the session's ended it
