"""Session 23 (left23): session 22's grader leftovers in the sandbox."""

import numpy as np
import pytest
from test_sandbox import write

from gradcheck.sandbox import Sandbox, SandboxError, _tree_stopped

STOPS_ITSELF = """
import signal

import numpy as np


class Stops:
    def forward(self, X, training=False):
        signal.raise_signal(signal.SIGSTOP)  # the guard refuses os.kill, not this: it stops only itself
        return X

    def backward(self, dY):
        return dY
"""


@pytest.mark.parametrize("hostile", [False, True])
def test_a_submission_stopping_itself_is_a_clear_timeout_not_a_hang(tmp_path, hostile):
    """tester22g's leftover: ``signal.raise_signal(SIGSTOP)`` in forward. The call times out at its limit (no hang:
    the process is stopped, not runnable, so not 'starved' either) and the message says the process stopped itself,
    not "Is there an infinite loop"."""
    f = write(tmp_path, STOPS_ITSELF)
    with Sandbox(files={"student.py": str(f)}, timeout=1.0, session_timeout=20, hostile=hostile) as sb:
        layer = sb.load_layer("student.py", "Stops", {})
        with pytest.raises(SandboxError) as info:
            layer.forward(np.ones((2, 3)))
    assert info.value.reason == "timeout", info.value
    text = " ".join(str(info.value).split())
    assert "did not finish within 1 s (wall clock)" in text and "had stopped itself" in text, text
    assert "infinite loop" not in text, text


def test_tree_stopped_reads_the_state_of_a_process_and_its_children():
    import os
    import signal
    import subprocess
    import sys
    import time

    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert not _tree_stopped(p.pid)
        os.kill(p.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while not _tree_stopped(p.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _tree_stopped(p.pid)
    finally:
        p.kill()
        p.wait()


def test_sweep_removes_only_folders_whose_maker_ended(tmp_path, monkeypatch):
    """tester22g's leftover: ``kill -9`` of the grader left /tmp/gradcheck-grade-* and gradcheck-zygote-* (no cleanup
    runs). Each folder now has a marker beside it naming its maker; a later ``gradcheck check``/``grade`` removes the
    folders whose maker is gone, and leaves a running process's, one without a marker, and a link."""
    import os
    import subprocess
    import sys
    import tempfile

    from gradcheck import _tmpdirs

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    killed = subprocess.run([sys.executable, "-c", "import os, sys; sys.path.insert(0, sys.argv[1]); "
                             "import tempfile; tempfile.tempdir = sys.argv[2]; from gradcheck import _tmpdirs; "
                             "d = _tmpdirs.mkdtemp('gradcheck-grade-'); open(d + '/f', 'w').write('x'); print(d); "
                             "os.kill(os.getpid(), 9)", os.getcwd(), str(tmp_path)],
                            capture_output=True, text=True)
    assert killed.returncode == -9
    left = killed.stdout.strip()
    mine = _tmpdirs.mkdtemp("gradcheck-zygote-")  # this process runs: kept
    plain = tmp_path / "gradcheck-sandbox-old"  # no marker (an older gradcheck): kept
    plain.mkdir()
    dead = open(left + ".owner").read().split()[0]  # the killed process's pid
    (tmp_path / "gradcheck-link.owner").write_text(f"{dead} 0\n")  # a dead maker ...
    os.symlink(str(plain), tmp_path / "gradcheck-link")  # ... of a link: not followed, not removed
    assert os.path.isdir(left) and os.path.isfile(left + ".owner")
    assert _tmpdirs.sweep() == [left]
    assert not os.path.exists(left) and not os.path.exists(left + ".owner")
    assert os.path.isdir(mine) and plain.is_dir() and os.path.islink(tmp_path / "gradcheck-link")
    with _tmpdirs.TemporaryDirectory("gradcheck-grade-") as d:
        assert os.path.isfile(d + ".owner")
    assert not os.path.exists(d) and not os.path.exists(d + ".owner")
    _tmpdirs.remove(mine)
    assert sorted(os.listdir(tmp_path)) == ["gradcheck-link", "gradcheck-sandbox-old"]
