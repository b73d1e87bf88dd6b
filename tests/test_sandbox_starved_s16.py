"""tester16g H3: a call's time limit is the submission's own CPU time when the machine's other load starves
it (the same correct submission scored 28 or 0 by the load); a call asleep is still stopped at the limit.

The starved case is made deterministic by standing in for ``/proc``'s reading (``_tree_usage``, the sandbox's one
walk): a child that sleeps while it says the child is runnable and has used no CPU, and that it waited on a run queue
for a CPU all the while (:func:`waiting_all_along`), is exactly a child the load kept off the cores. A child that only looks
runnable when ``/proc`` is read, and sleeps between (redteam30 S1), has waited for nothing: tests/test_grading_redteam30.py."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from gradcheck import sandbox
from gradcheck.errors import GraderError
from gradcheck.sandbox import STARVED_FACTOR, Sandbox, SandboxError, SandboxStarved


def waiting_all_along(monkeypatch):
    """``/proc`` stood in for as a process tree the machine's load keeps off the cores: runnable, no CPU time had
    and every second since now spent waiting on a run queue for a CPU (``_tree_usage``: CPU, runnable, wait, as a
    sandbox reads them; ``_tree_waits`` as the grading runner's meter reads them, ``test_grading_tester23g``)."""
    t0 = time.monotonic()
    monkeypatch.setattr(sandbox, "_tree_usage", lambda pid: (0.0, True, time.monotonic() - t0))
    monkeypatch.setattr(sandbox, "_tree_waits", lambda pid: {(pid, 0): time.monotonic() - t0})


SLOW_IMPORT = ("import time\ntime.sleep(2.5)\n\nclass ReLU:\n    def forward(self, X):\n        return X\n\n"
               "    def backward(self, dY):\n        return dY\n")


def test_a_starved_import_gets_the_cpu_time_it_did_not_have(tmp_path, monkeypatch):
    (tmp_path / "slow.py").write_text(SLOW_IMPORT)
    waiting_all_along(monkeypatch)  # runnable, no CPU had, waiting for one
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=1.0) as sb:
        layer = sb.load_layer("slow.py", "ReLU", {})
        assert layer is not None


def test_a_starved_call_is_still_stopped_at_its_wall_clock_backstop(tmp_path, monkeypatch):
    """Stopped there while still runnable and short of its CPU time, the call was the machine's load's: a grader
    error (:class:`SandboxStarved`, graded again), never the student's "too slow" (tester22g H2); the sandbox is
    dead, and a later request says the same."""
    (tmp_path / "slow.py").write_text(SLOW_IMPORT.replace("2.5", "60"))
    waiting_all_along(monkeypatch)
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=0.5) as sb:
        t0 = time.monotonic()
        with pytest.raises(SandboxStarved, match=r"importing slow.py was stopped at its time limit .* had waited "
                                                 r"[0-9.]+ s more for a CPU .*too busy to time the submission fairly"):
            sb.load_layer("slow.py", "ReLU", {})
        assert time.monotonic() - t0 >= STARVED_FACTOR * 0.5  # after the allowance, not before
        with pytest.raises(SandboxStarved):
            sb.load_layer("slow.py", "ReLU", {})
    assert STARVED_FACTOR * 0.5 < 60
    assert issubclass(SandboxStarved, GraderError) and not issubclass(SandboxStarved, SandboxError)


def test_a_sleeping_import_is_stopped_at_the_limit(tmp_path):
    """Asleep, the process is not starved: the limit stays wall clock (the real ``/proc`` reading)."""
    (tmp_path / "slow.py").write_text(SLOW_IMPORT.replace("2.5", "60"))
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=1.0) as sb:
        with pytest.raises(SandboxError, match=r"did not finish within 1 s \(wall clock\)"):
            sb.load_layer("slow.py", "ReLU", {})


def test_a_process_that_used_its_cpu_time_is_not_starved(tmp_path, monkeypatch):
    (tmp_path / "slow.py").write_text(SLOW_IMPORT.replace("2.5", "60"))
    real = sandbox._tree_usage  # (the run-queue wait read as it is)
    monkeypatch.setattr(sandbox, "_tree_usage",
                        lambda pid, t=[0.0]: (t.__setitem__(0, t[0] + 5.0) or t[0], True, real(pid)[2]))
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=1.0) as sb:
        with pytest.raises(SandboxError, match=r"did not finish within 1 s \(wall clock\)"):
            sb.load_layer("slow.py", "ReLU", {})


def test_tree_cpu_reads_a_busy_child_and_a_sleeping_one():
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for _ in range(600):  # until the busy child has run 0.2 s of CPU (no bound on the wall clock asserted)
            used, runnable = sandbox._tree_cpu(busy.pid)
            if used >= 0.2:
                break
            time.sleep(0.05)
        assert used >= 0.2 and runnable
        for _ in range(600):  # until the sleeping child has started and fallen asleep
            before, runnable_idle = sandbox._tree_cpu(idle.pid)
            if before > 0 and not runnable_idle:
                break
            time.sleep(0.05)
        time.sleep(0.3)
        after, runnable_idle = sandbox._tree_cpu(idle.pid)
        assert after - before < 0.05 and not runnable_idle  # asleep: no CPU used, not runnable
        assert sandbox._tree_cpu(2 ** 22 + 7) == (0.0, False)  # no such process
    finally:
        busy.kill(), idle.kill(), busy.wait(), idle.wait()


def test_the_sandbox_still_checks_a_layer_as_before(tmp_path):
    (tmp_path / "ok.py").write_text(SLOW_IMPORT.replace("time.sleep(2.5)", "pass"))
    with Sandbox(files=[str(tmp_path / "ok.py")], timeout=5.0) as sb:
        layer = sb.load_layer("ok.py", "ReLU", {})
        assert np.array_equal(layer.forward(np.ones((2, 2))), np.ones((2, 2)))


SLOW_FORWARD = ("import time\n\nclass ReLU:\n    def forward(self, X):\n        if X[0, 0] >= 100:\n"
                "            time.sleep(1.5)\n        return X\n\n    def backward(self, dY):\n        return dY\n")


def test_each_forward_of_a_starved_batch_has_the_allowance(tmp_path, monkeypatch):
    """tester22g H2: a forward_many batch of N forwards had N limits and ONE starved allowance
    ((STARVED_FACTOR - 1) x the limit) in all, so on a loaded machine a correct layer's batch was killed and scored
    "too slow" (identical submissions 36, 36, 34, 36 at --timeout 0.5). The load stands in deterministically: each
    forward of the batch sleeps 3 limits while ``/proc`` says runnable with no CPU had. Now the batch's limit grows
    by each starved forward's overrun (each still within its own allowance). The limit is 0.5 s, not less
    (tester23g: at 0.1 s, so a 1 s allowance, the test failed twice at load 10-12: the sandbox's own real work in a
    call, which the stand-in counts as no CPU had, took longer than that); the load probes' forwards do not sleep.

    The allowance is 20 limits here (10 s of wall clock for each 1.5 s forward), not the module's 10 (5 s): CI of
    ad20368 on a loaded 2-core machine saw one 1.5 s sleep and its reply take more than 5 s. The rule is the
    factor's, whichever it is: 12 forwards need 12 x 1.5 = 18 s; one allowance gives 12 x 0.5 + 19 x 0.5 = 15.5 s."""
    (tmp_path / "slow.py").write_text(SLOW_FORWARD)
    waiting_all_along(monkeypatch)
    monkeypatch.setattr(sandbox, "STARVED_FACTOR", 20)
    X = np.arange(6.0).reshape(2, 3) + 100
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=0.5, session_timeout=120) as sb:
        layer = sb.load_layer("slow.py", "ReLU", {})
        t0 = time.monotonic()
        ys = layer.forward_many([X + k for k in range(12)])
    assert time.monotonic() - t0 > 12 * 0.5 + (20 - 1) * 0.5  # more than one allowance gives
    assert [float(y[0, 0]) for y in ys] == [100.0 + k for k in range(12)]


class ReplyPipe:
    """``os`` as gradcheck.sandbox sees it, but for the first read of ``sb``'s reply pipe once ``sb`` is set: with
    ``empty``, that read finds the pipe empty (BlockingIOError) whatever it holds, so the grader waits in ``select``
    even where a loaded machine let the child reply before the grader read (flaky32: the stand-in for a stalled
    ``select`` was never called); with ``late`` seconds, the first read that returns bytes is followed by that long
    off the cores before the grader runs again; with ``trickle=(k, pause)``, every read of the reply pipe waits
    ``pause`` seconds, then returns at most ``k`` bytes: a reply that keeps coming, slowly. ``seen``: what was read then
    (every read's bytes with ``trickle``). Every other name is the real ``os``'s."""

    def __init__(self, empty=False, late=0.0, trickle=None):
        self.empty, self.late, self.trickle, self.sb, self.seen = empty, late, trickle, None, []

    def read(self, fd, n):
        if self.trickle and self.sb is not None and fd == self.sb._r:
            k, pause = self.trickle
            time.sleep(pause)
            self.seen.append(data := os.read(fd, min(n, k)))
            return data
        mine = self.sb is not None and fd == self.sb._r and not self.seen
        if mine and self.empty:
            self.seen.append(b"")
            raise BlockingIOError
        data = os.read(fd, n)
        if mine and data:
            self.seen.append(data)
            time.sleep(self.late)
        return data

    def __getattr__(self, name):
        return getattr(os, name)


def test_a_reply_the_grader_was_too_late_to_read_is_not_the_submissions_time(tmp_path, monkeypatch):
    """The grader's own time off the cores was charged to the call: an identity forward, its whole reply in the pipe
    within microseconds, was killed as "did not finish within 2 s" when the grading process did not run for 3 s while
    it waited (a loaded or stalled machine; the child, asleep waiting for its next request, is not "starved"). Now the
    time a wait overran what it asked for is added to the call's limit. The stand-in: the grader's select sleeps 3 s
    once, then looks; the reply pipe reads empty once, so that the grader does wait (:class:`ReplyPipe`)."""
    (tmp_path / "quick.py").write_text(SLOW_IMPORT.replace("time.sleep(2.5)", "pass"))
    real, stall = sandbox.select.select, [False]

    def descheduled(*args):
        if stall[0]:
            stall[0] = False
            time.sleep(3.0)
        return real(*args)

    monkeypatch.setattr(sandbox.select, "select", descheduled)
    monkeypatch.setattr(sandbox, "os", pipe := ReplyPipe(empty=True))
    with Sandbox(files=[str(tmp_path / "quick.py")], timeout=2.0) as sb:
        layer = sb.load_layer("quick.py", "ReLU", {})
        stall[0], pipe.sb = True, sb  # (the reply pipe read empty once: the grader waits even if the reply came first)
        assert np.array_equal(layer.forward(np.ones((2, 2))), np.ones((2, 2)))
        assert not stall[0]  # the grader did stall for 3 s in this forward
