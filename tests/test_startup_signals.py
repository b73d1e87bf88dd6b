"""A signal while the ``gradcheck`` command imports exits 130/143 with a message (issue 10, session 14's leftover).

Before, a Ctrl-C in the first second of ``gradcheck grade`` (importing numpy, the pipeline and the grader, before
``gradcheck.cli`` was imported) printed Python's KeyboardInterrupt traceback, and a SIGTERM ended the process with
no word (killed by the signal). The signal is sent by the process itself at a chosen import (a meta-path hook), so
the moment is exact on any machine; the process is started as the console script starts it
(``from gradcheck.cli import main``, ``sys.argv[0]`` the script named ``gradcheck``) or as ``python -m gradcheck``.
The window before gradcheck's first line (Python's own start-up, its ``site`` import) is not ours to guard.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gradcheck._startup import EXIT_INTERRUPTED, EXIT_TERMINATED, running_as_command

ROOT = Path(__file__).resolve().parents[1]

#: sends ``SIG`` to this process when the module ``AT`` starts to import
HOOK = """
import os, signal, sys
class _Hook:
    def find_spec(self, name, path=None, target=None):
        if name == {at!r}:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), {sig})
        return None
sys.meta_path.insert(0, _Hook())
"""

SCRIPT = "sys.argv[0] = {argv0!r}\nfrom gradcheck.cli import main\nsys.exit(main())\n"

#: ``python -S -c WITH_SIGINT SIG_DFL|SIG_IGN PROGRAM ARGS...`` runs ``PROGRAM ARGS...`` with SIGINT's disposition
#: set to the one named. A non-interactive shell starts a background job (``pytest ... &`` in a script) with SIGINT
#: ignored, as POSIX asks of a shell without job control, its children inherit that, and Python installs its
#: KeyboardInterrupt handler only when SIGINT is not ignored at start (the signal module's documentation): the Ctrl-C
#: tests then tested how pytest was launched, not the command (session 32: 8 failed in the background, passed in the
#: foreground). ``-S``: the wrapper imports no ``sitecustomize`` (the tests' hook), nothing but ``os``, ``signal`` and
#: ``sys``; ``execv`` keeps SIG_DFL and SIG_IGN.
WITH_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, getattr(signal, sys.argv[1])); "
               "os.execv(sys.argv[2], sys.argv[2:])")


def with_sigint(disposition: str, *command: str) -> list[str]:
    """``command`` (a program and its arguments) started with SIGINT at ``disposition`` (``"SIG_DFL"`` or
    ``"SIG_IGN"``), for ``subprocess.run``."""
    return [sys.executable, "-S", "-c", WITH_SIGINT, disposition, *command]


def python(*args: str) -> list[str]:
    """``python ARGS...`` started with SIGINT at its default disposition, whatever this process's is."""
    return with_sigint("SIG_DFL", sys.executable, *args)


def _run(at: str, sig: int, tmp_path: Path, *, argv0: str = "/venv/bin/gradcheck", module: bool = False,
         background: bool = False, inherited: bool = False) -> subprocess.CompletedProcess:
    """Run the command with the hook installed first (a ``sitecustomize``, as Python's start-up imports it):
    ``python -m gradcheck grade ...``, or the console script's code with ``sys.argv[0] = argv0``; with SIGINT at its
    default (:func:`python`), also when started from a background job (``background``: SIGINT ignored before), or as
    it is inherited from such a job (``inherited``: SIGINT ignored)."""
    (tmp_path / "sitecustomize.py").write_text(HOOK.format(at=at, sig=int(sig)))
    args = ["grade", str(ROOT / "assignments" / "linear_relu_ce" / "solution"), "--tests", "nowhere", "--out", "x"]
    how = ["-m", "gradcheck"] if module else ["-c", "import sys\n" + SCRIPT.format(argv0=argv0)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    command = with_sigint("SIG_IGN", sys.executable, *how, *args) if inherited else python(*how, *args)
    command = with_sigint("SIG_IGN", *command) if background else command
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)


CASES = [(signal.SIGINT, EXIT_INTERRUPTED, "Ctrl-C (SIGINT)"), (signal.SIGTERM, EXIT_TERMINATED, "SIGTERM")]


@pytest.mark.parametrize("at", ["numpy", "datetime", "gradcheck.diagnose", "gradcheck.grading.runner"])
@pytest.mark.parametrize("sig, code, how", CASES)
def test_a_signal_while_the_command_imports_exits_with_a_message(tmp_path, at, sig, code, how):
    """numpy and the pipeline import under ``gradcheck/__init__``; the grader's modules while ``main`` builds the
    parser. Before: a traceback and exit 1 (SIGINT), or a silent death by the signal (SIGTERM: rc -15). ``datetime``:
    numpy's C extensions import it through ``PyCapsule_Import``, which turns the KeyboardInterrupt (or Terminated)
    raised there into an ImportError; before (load35, seen 8 s into a start-up at load 26): exit 1 and numpy's
    "Importing the numpy C-extensions failed ... a bad install or environment", for Ctrl-C and SIGTERM alike."""
    p = _run(at, sig, tmp_path)
    assert "Traceback" not in p.stderr and p.returncode == code, (p.returncode, p.stderr)
    assert p.stderr.strip() == (f"gradcheck: stopped by {how}"
                                + " (a time limit of the system running the grader, or a kill)" * (sig == signal.SIGTERM)
                                + " while starting, before anything was done; rerun the same command."), p.stderr
    assert p.stdout == "", p.stdout


@pytest.mark.parametrize("sig, code, how", CASES)
def test_python_dash_m_gradcheck_is_the_command_too(tmp_path, sig, code, how):
    p = _run("gradcheck.check", sig, tmp_path, module=True)
    assert "Traceback" not in p.stderr and p.returncode == code and f"stopped by {how}" in p.stderr, \
        (p.returncode, p.stderr)


def test_a_library_import_changes_no_signal_handling(tmp_path):
    """A program that imports gradcheck keeps its own Ctrl-C (a KeyboardInterrupt it may catch) and SIGTERM."""
    p = _run("gradcheck.check", signal.SIGINT, tmp_path, argv0="/home/me/train.py")
    assert p.returncode != EXIT_INTERRUPTED and "KeyboardInterrupt" in p.stderr, (p.returncode, p.stderr)
    code = "import signal, gradcheck; print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)"
    p = subprocess.run(python("-c", code), capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.stdout.strip() == "True", p.stderr


@pytest.mark.parametrize("argv0, orig, expected", [
    ("/venv/bin/gradcheck", ["python", "/venv/bin/gradcheck", "grade"], True),
    ("/opt/venv/Scripts/gradcheck.exe", ["gradcheck.exe"], True),
    ("-m", ["python", "-m", "gradcheck", "check"], True),
    ("-m", ["python", "-X", "importtime", "-mgradcheck"], True),
    ("-m", ["python", "-W", "error", "-m", "gradcheck"], True),
    ("-m", ["python", "-m", "pytest", "tests"], False),
    ("/venv/bin/pytest", ["python", "/venv/bin/pytest"], False),
    ("gradcheck.py", ["python", "gradcheck.py"], False),
    ("-c", ["python", "-c", "import gradcheck", "-m", "gradcheck"], False),
])
def test_running_as_command(monkeypatch, argv0, orig, expected):
    monkeypatch.setattr(sys, "argv", [argv0])
    monkeypatch.setattr(sys, "orig_argv", orig)
    assert running_as_command() is expected


def test_the_ctrl_c_tests_hold_when_pytest_runs_as_a_background_job(tmp_path):
    """The tests' children start with SIGINT at its default (:func:`python`), whatever pytest's is: from a process
    that ignores it, as a background job of a script does, the command still exits 130 with the line. Before: SIGINT
    was ignored, the command ran on to its usage error (exit 2), and 8 Ctrl-C tests failed in that case alone."""
    p = _run("numpy", signal.SIGINT, tmp_path, background=True)
    assert p.returncode == EXIT_INTERRUPTED and "stopped by Ctrl-C (SIGINT) while starting" in p.stderr, \
        (p.returncode, p.stderr)


def test_the_command_keeps_sigint_ignored_when_it_starts_so(tmp_path):
    """A decision (session 33): ``gradcheck`` started with SIGINT ignored (``gradcheck grade ... &`` in a script)
    keeps ignoring it, as Python itself does (its KeyboardInterrupt handler is installed only when SIGINT is not
    ignored at start), and as a background job of a shell is meant to be shielded from the terminal's Ctrl-C; it
    stops on SIGTERM, with the gradebook written (docs/gradescope.md). Here SIGINT arrives while the grader's modules
    import and the command runs on to its own end: the usage error of ``--tests nowhere``, exit 2, no stop line. The
    same SIGTERM stops it (exit 143)."""
    p = _run("gradcheck.grading.runner", signal.SIGINT, tmp_path, inherited=True)
    assert p.returncode == 2 and "stopped by" not in p.stderr and "nowhere" in p.stderr, (p.returncode, p.stderr)
    p = _run("gradcheck.grading.runner", signal.SIGTERM, tmp_path, inherited=True)
    assert p.returncode == EXIT_TERMINATED and "stopped by SIGTERM" in p.stderr, (p.returncode, p.stderr)
