"""A Ctrl-C in the middle of a ``gradcheck`` subcommand: one line and exit 130, as at start-up and in ``grade``.

Before (session 20's new user), a Ctrl-C during ``gradcheck check``, ``zoo`` or ``train`` printed Python's 30-44
line KeyboardInterrupt traceback; only a Ctrl-C while the command started gave the clean line. Now the CLI's
``main`` words it (``gradcheck._startup.say_stopped``).
"""

import os
import signal
import subprocess
from pathlib import Path

import pytest

from gradcheck._startup import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated
from tests.test_cli import run_here

ROOT = Path(__file__).resolve().parents[1]


def _stop(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize("command, module, function, args", [
    ("check", "gradcheck.check_command", "run_check",
     ["examples/student_linear_buggy.py::Linear", "--input-shape", "8,5", "--init",
      '{"in_features": 5, "out_features": 3}']),
    ("zoo", "gradcheck.zoo", "run_zoo", []),
    ("train", "gradcheck.train", "run_training", ["--epochs", "1"]),
])
def test_a_ctrl_c_mid_run_prints_one_line_and_exits_130(monkeypatch, command, module, function, args):
    import importlib

    monkeypatch.setattr(importlib.import_module(module), function, _stop)
    p = run_here(command, *args)
    assert p.returncode == EXIT_INTERRUPTED, (p.returncode, p.stdout, p.stderr)
    assert p.stderr == (f"gradcheck: stopped by Ctrl-C (SIGINT) during `gradcheck {command}`, before it finished; "
                        "nothing it printed or wrote is a complete result; rerun the same command.\n"), p.stderr


def test_a_sigterm_turned_into_terminated_exits_143(monkeypatch):
    import gradcheck.zoo

    def stop(*args, **kwargs):
        raise Terminated

    monkeypatch.setattr(gradcheck.zoo, "run_zoo", stop)
    p = run_here("zoo")
    assert p.returncode == EXIT_TERMINATED and p.stderr.startswith("gradcheck: stopped by SIGTERM"), p.stderr


def test_a_real_sigint_after_start_up_gives_the_line_not_a_traceback(tmp_path):
    """The console script's code, SIGINT sent by the process itself when ``gradcheck train`` imports its module
    (after the start-up guard: the handler of ``main`` words it)."""
    from tests.test_startup_signals import HOOK, SCRIPT, python

    (tmp_path / "sitecustomize.py").write_text(HOOK.format(at="gradcheck.train", sig=int(signal.SIGINT)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    code = "import sys\n" + SCRIPT.format(argv0="/venv/bin/gradcheck")
    p = subprocess.run(python("-c", code, "train", "--epochs", "1"), capture_output=True, text=True,
                       timeout=120, env=env, cwd=tmp_path)
    assert "Traceback" not in p.stderr and p.returncode == EXIT_INTERRUPTED, (p.returncode, p.stderr)
    assert p.stderr.startswith("gradcheck: stopped by Ctrl-C (SIGINT) during `gradcheck train`"), p.stderr


@pytest.mark.parametrize("module", [True, False], ids=["python -m gradcheck", "console script"])
@pytest.mark.parametrize("sig, code, how", [(signal.SIGINT, EXIT_INTERRUPTED, "Ctrl-C (SIGINT)"),
                                            (signal.SIGTERM, EXIT_TERMINATED, "SIGTERM (a time limit")])
def test_a_real_signal_mid_check_exits_130_or_143_with_one_line(tmp_path, module, sig, code, how):
    """Session 21 (session 20's leftover): a real signal in the middle of ``gradcheck check`` (sent by the process
    itself when the check imports its sandbox, after start-up), run as ``python -m gradcheck`` and as the console
    script. Before: SIGTERM ended both by the signal with no word (rc -15; only start-up's SIGTERM was handled, and
    the in-process test raised ``Terminated`` by hand); now one line and 143 (SIGINT 130), as at start-up."""
    from tests.test_startup_signals import HOOK, SCRIPT, python

    (tmp_path / "sitecustomize.py").write_text(HOOK.format(at="gradcheck.sandbox", sig=int(sig)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    how_run = ["-m", "gradcheck"] if module else ["-c", "import sys\n" + SCRIPT.format(argv0="/venv/bin/gradcheck")]
    args = ["check", str(ROOT / "examples" / "student_linear_buggy.py") + "::Linear", "--input-shape", "8,5",
            "--init", '{"in_features": 5, "out_features": 3}']
    p = subprocess.run(python(*how_run, *args), capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.startswith(f"gradcheck: stopped by {how}") and p.stderr.count("\n") == 1, p.stderr
    assert "during `gradcheck check`, before it finished" in p.stderr and p.stdout == "", (p.stdout, p.stderr)
