"""The grader stops a grading child with SIGINT (pytest tears down, closing its sandbox), also when the grader was
started with SIGINT ignored: a background job of a script (``gradcheck grade ... &``), whose SIGTERM stops it. The
child that no zygote forks (``python -m pytest``; one submission, or no zygote) inherited the ignored SIGINT, so the
stop waited out its grace and killed the child with SIGKILL: no teardown (flaky33). Here the grader's side runs in a
process started with SIGINT ignored; the child's test waits until it is stopped."""

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.test_startup_signals import with_sigint

ROOT = Path(__file__).resolve().parents[1]

GRADER = textwrap.dedent("""
    import pathlib, signal, sys, time
    from gradcheck.grading import runner
    tmp = pathlib.Path(sys.argv[1])
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # as a background job's
    proc = runner._pytest_child(["-q", "-p", "no:cacheprovider", str(tmp / "test_wait.py")], tmp, runner._child_env())
    while not (tmp / "started").exists() and proc.poll() is None:
        time.sleep(0.05)
    runner._stop_children([proc], grace=60.0)  # SIGINT; SIGKILL only after the grace
    out = proc.communicate()[0].decode()  # (its exit code read)
    print(proc.returncode, (tmp / "started").read_text(), "KeyboardInterrupt" in out)
""")

TEST = textwrap.dedent("""
    import os, pathlib, signal, time

    def test_wait():
        h = signal.getsignal(signal.SIGINT)
        pathlib.Path("started.tmp").write_text(getattr(h, "__name__", str(h)))
        os.replace("started.tmp", "started")  # (whole when it appears: the grader reads it after its SIGINT)
        time.sleep(600)
""")


def test_the_grader_s_sigint_stops_its_child_when_the_grader_ignores_sigint(tmp_path):
    (tmp_path / "test_wait.py").write_text(TEST)
    p = subprocess.run(with_sigint("SIG_IGN", sys.executable, "-c", GRADER, str(tmp_path)), capture_output=True,
                       text=True, timeout=600, cwd=ROOT, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    code, handler, interrupted = p.stdout.split()
    # pytest's exit code 2 (interrupted, torn down); before: -9 (SIGKILL after the grace), the handler SIG_IGN
    assert (int(code), handler, interrupted) == (2, "default_int_handler", "True"), (p.stdout, p.stderr)
