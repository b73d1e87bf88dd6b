"""Session 30's leftover (fixr30): the run-queue wait a starved call, session or submission is given back was summed
over every thread of every process of the tree, so a submission starting many threads that wait side by side (each
runnable, each waiting a whole wall clock) could be owed many times the wall clock the grader lost, up to
``STARVED_FACTOR`` limits and then "the grading machine was too busy" (a grader error, regraded every run) instead of
its own timeout. Now the wait is each process's main thread's (the one that runs the grader's requests), none for a
process that lowered its own priority, and what is owed never exceeds the CPU time the tree was short. ``/proc`` is
faked, as the other starvation tests fake it."""

import os
import time
import types

import pytest

from gradcheck import sandbox
from gradcheck.grading import runner
from tests.test_grading_redteam30 import _Meter


def _stat(pid, nice, state=b"R"):
    """A ``/proc/PID/stat`` line: state, utime 100 ticks, nice, start time ``pid``."""
    fields = [state] + [b"0"] * 39
    fields[11], fields[16], fields[19] = b"100", str(nice).encode(), str(pid).encode()
    return b"%d (python3) " % pid + b" ".join(fields)


#: pid -> (nice, {tid: seconds waited on a run queue}, children)
PROCS = {100: (0, {100 + i: 10.0 for i in range(50)}, [200, 300]),  # the sandbox: 50 threads waiting side by side
         200: (0, {200: 2.0}, []),                                     # a process of the tree at the root's priority
         300: (19, {300: 30.0}, [])}                                   # one that lowered its own priority


def _fake_proc(monkeypatch):
    def read(path):
        parts = path.split("/")
        nice, tasks, kids = PROCS[int(parts[2])]
        if parts[-1] == "stat" and len(parts) == 4:
            return _stat(int(parts[2]), nice)
        if parts[-1] == "children":
            return b" ".join(b"%d" % k for k in kids) if int(parts[4]) == int(parts[2]) else b""
        return b"1000 %d 7" % int(tasks[int(parts[4])] * 1e9)  # schedstat: cpu ns, wait ns, slices

    fake_os = types.SimpleNamespace(listdir=lambda path: [str(t) for t in PROCS[int(path.split("/")[2])][1]],
                                    sysconf=os.sysconf)
    monkeypatch.setattr(sandbox, "_proc_read", read)
    monkeypatch.setattr(sandbox, "os", fake_os)
    monkeypatch.setattr(sandbox, "_SCHEDSTAT", True)


def test_the_wait_is_each_processs_main_threads_at_the_roots_priority(monkeypatch):
    """Was: {100: 500.0, 200: 2.0, 300: 30.0} (50 threads' 10 s each, summed; a niced process's own choice)."""
    _fake_proc(monkeypatch)
    waits = sandbox._tree_waits(100)
    assert waits == {(100, 100): pytest.approx(10.0), (200, 200): pytest.approx(2.0), (300, 300): 0.0}, waits
    monkeypatch.undo()
    _fake_proc(monkeypatch)
    assert sandbox._tree_wait(100) == pytest.approx(12.0)


def test_the_sandbox_reads_cpu_and_wait_in_one_walk(monkeypatch):
    """Session 49: ``_tree_usage`` (a call's start and end: ``Sandbox._mark``, ``_cpu_short``) is ``_tree_cpu``'s CPU
    time and state and ``_tree_wait``'s sum, read in one walk of ``/proc`` (each file once; two walks before)."""
    _fake_proc(monkeypatch)
    read, opened = sandbox._proc_read, []
    monkeypatch.setattr(sandbox, "_proc_read", lambda path: opened.append(path) or read(path))
    usage = sandbox._tree_usage(100)
    assert usage == (pytest.approx(3 * 100 / os.sysconf("SC_CLK_TCK")), True, pytest.approx(12.0))
    assert len(opened) == len(set(opened))  # one walk: no file read twice
    assert (sandbox._tree_cpu(100), sandbox._tree_wait(100)) == (usage[:2], usage[2])
    sb = sandbox.Sandbox.__new__(sandbox.Sandbox)  # a sandbox's reading at a call's start, its process stood in for
    sb._proc = types.SimpleNamespace(pid=100)
    opened.clear()
    sb._mark()
    assert (sb._cpu0, sb._wait0) == (pytest.approx(usage[0]), pytest.approx(12.0))
    assert len(opened) == len(set(opened)) and any(p.endswith("schedstat") for p in opened)


def test_what_is_owed_never_exceeds_the_cpu_time_short():
    """Was: 90 s owed to a call 0.5 s short of its CPU time whose tree's waits summed to 90 s."""
    owed = sandbox._owed
    assert owed(0.5, True, 100.0, 10.0, 0.0) == pytest.approx(0.5)
    assert owed(0.5, True, 10.3, 10.0, 0.0) == pytest.approx(0.3)  # a wait below it: the wait, as before
    assert owed(0.5, True, 100.0, 10.0, 0.48) == pytest.approx(0.5)  # the cap is the CPU time short, whatever given


def test_the_runner_gives_back_at_most_the_cpu_time_short():
    """Was: a tree 9 s short whose waits summed to 1e6 s was given the backstop (STARVED_FACTOR limits) at once."""
    start = time.monotonic() - 10.0  # a 10 s limit just passed
    end, why = runner._starved_end(_Meter(1.0, True, 1e6), start, 10.0)
    assert why == "" and end - start == pytest.approx(19.0, abs=0.5)
    assert end - start < sandbox.STARVED_FACTOR * 10.0 - 1.0
