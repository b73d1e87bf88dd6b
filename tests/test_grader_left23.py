"""Session 23 (left23): session 22's grader leftovers (tester22g): the sandbox, the temporary folders, the messages."""

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


@pytest.mark.parametrize("hostile", [False, True])
def test_an_error_message_names_the_interpreters_folders_without_their_host_paths(tmp_path, hostile):
    """tester22g's leftover: a student's message showed "cannot import name 'sigmoid_helper' from 'code'
    (/root/.pyenv/versions/3.11.7/lib/python3.11/code.py)", a path of the grading machine. The standard library's
    folder is now named, not shown."""
    import os
    import sys

    from gradcheck.errors import StudentCodeError

    f = write(tmp_path, "from code import sigmoid_helper\n")
    with Sandbox(files={"student.py": str(f)}, timeout=3, hostile=hostile) as sb:
        with pytest.raises(StudentCodeError) as info:
            sb.load_layer("student.py", "Linear", {})
    text = str(info.value).replace("\\", "")  # a hostile sandbox's text is Markdown-escaped
    assert "cannot import name 'sigmoid_helper' from 'code' (<standard library>/code.py)" in text, text
    for host in {sys.prefix, sys.base_prefix, os.path.realpath(sys.base_prefix), os.path.dirname(os.__file__)}:
        assert host not in text, (host, text)


def test_code_span_holds_any_backticks_whole():
    """tester22g's leftover: a file named ``la`yers](http://x).py`` ended its one-backtick span at its own backtick."""
    from gradcheck.grading.runner import shown_file
    from gradcheck.grading.static import code_span

    assert code_span("layers.py") == "`layers.py`"
    assert code_span("la`yers](http://x).py") == "``la`yers](http://x).py``"
    assert code_span("a``b`") == "``` a``b` ```" and code_span("`x") == "`` `x ``"
    assert code_span(" x ") == "`  x  `"  # CommonMark strips one space at each end
    assert shown_file("la`yers.py") == "``la`yers.py``"


def test_a_file_named_with_a_backtick_is_shown_whole_when_layers_py_is_missing(tmp_path):
    from gradcheck.grading.checks import GradingFailure
    from gradcheck.grading.plugin import _SandboxHolder

    sub = tmp_path / "tom"
    sub.mkdir()
    (sub / "la`yers](x).py").write_text("x = 1\n")
    (sub / ".la`yers.py").write_text("x = 1\n")
    with pytest.raises(GradingFailure) as exc:
        _SandboxHolder(None, sub).require("layers.py")
    msg = str(exc.value)
    assert "found: ``la`yers](x).py``" in msg and "Not read: ``.la`yers.py`` (a file whose name" in msg, msg


def _zip_of(members, tmp_path):
    import zipfile

    z = tmp_path / "sub.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return z


def test_a_path_too_long_is_not_called_a_name_too_long(tmp_path):
    """tester22g's leftover: a member 31 folders of 250 bytes deep (a 7,534-byte path, each name short enough) was
    refused as "a name longer than a file system allows (255 bytes per file or folder name)"."""
    from gradcheck.grading.archive import ArchiveRefused, unpack

    deep = "/".join(["d" * 250] * 20) + "/layers.py"  # 5,029 bytes, 20 folders: past PATH_MAX, within MAX_DEPTH
    (out := tmp_path / "out").mkdir()
    with pytest.raises(ArchiveRefused) as err:
        unpack(_zip_of({deep: b"x = 1\n"}, tmp_path), out)
    text = str(err.value)
    assert "has a path of 5,029 bytes through 20 folders, longer than a file system allows for a whole path" in text
    assert "though each name in it is short enough" in text and "fewer folders" in err.value.advice, text
    (out2 := tmp_path / "out2").mkdir()
    with pytest.raises(ArchiveRefused) as err:
        unpack(_zip_of({"a/" + "n" * 300 + ".py": b""}, tmp_path), out2)
    assert "has a file or folder name of 303 bytes ('nnnn" in str(err.value), str(err.value)


def test_a_member_renamed_in_its_header_is_not_called_damaged(tmp_path):
    """tester22g's leftover: a member whose local header names it otherwise than the archive's index was refused as
    "damaged (its compressed bytes do not decompress)"."""
    from gradcheck.grading.archive import ArchiveRefused, unpack

    z = _zip_of({"layers.py": b"x = 1\n"}, tmp_path)
    b = bytearray(z.read_bytes())
    i = b.find(b"layers.py")  # the local header's name comes first; the index's stays
    b[i:i + 9] = b"Layers.py"
    z.write_bytes(bytes(b))
    (out := tmp_path / "out").mkdir()
    with pytest.raises(ArchiveRefused) as err:
        unpack(z, out)
    text = str(err.value)
    assert text.startswith("its member 'layers.py' has another name in its own header than in the archive's index")
    assert "damaged" not in text, text
