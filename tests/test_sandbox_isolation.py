"""The namespaces strength of the sandbox (gradcheck.isolation), seen from inside the child.

The student file records what it can see and do as string attributes of its layer
(the sandbox reports simple public attributes back as ``layer.scalars``).
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcheck.isolation import SITE, SUBMISSION, TMP_BYTES, UID_BASE, UID_COUNT
from gradcheck.sandbox import Sandbox, SandboxError, support

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(support()[0] == "none", reason="no namespaces on this machine")

PROBE = '''
import _thread, importlib, json, os, sys, threading

def _try(fn):
    try:
        return fn()
    except BaseException as exc:
        return type(exc).__name__

def _write(path, n):
    with open(path, "wb") as fh:
        for _ in range(n):
            fh.write(b"x" * (1 << 20))
    return "ok"

class Probe:
    def __init__(self):
        self.params, self.grads = {}, {}
        facts = {
            "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "pid": os.getpid(),
            "thread": _try(lambda: threading.Thread(target=lambda: None).start() or "started"),
            "raw_thread": _try(lambda: sys.modules.pop("_thread") and importlib.import_module("_thread")
                              .start_new_thread(print, ()) and "started"),
            "tmp_small": _try(lambda: _write("/tmp/a.bin", 1)),
            "tmp_big": _try(lambda: [_write(f"/tmp/f{i}.bin", 30) for i in range(4)]),
            "submission_write": _try(lambda: _write("%(sub)s/x.bin", 1)),
        }
        self.facts = json.dumps(facts)[:199]
        self.more = json.dumps({"cwd": os.getcwd(), "repo": _try(lambda: os.stat(%(repo)r) and "visible"),
                                "passwd": _try(lambda: os.stat("/etc/passwd") and "visible")})
        self.path = json.dumps([p for p in sys.path if "python3" not in p])

    def forward(self, X, training=False):
        return X

    def backward(self, dY):
        return dY
''' % {"repo": str(ROOT / "assignments"), "sub": SUBMISSION}


def _facts(tmp_path, name="probe.py"):
    f = tmp_path / name
    f.write_text(PROBE)
    sb = Sandbox(files={name: str(f)}, isolation="namespaces", timeout=20)
    layer = sb.load_layer(name, "Probe")
    return sb, json.loads(layer.scalars["facts"]), {**json.loads(layer.scalars["more"]),
                                                    "path": json.loads(layer.scalars["path"])}


def test_the_child_runs_as_a_dedicated_uid_without_threads_and_sees_only_its_view(tmp_path):
    sb, facts, more = _facts(tmp_path)
    try:
        assert sb.isolation_level == support()[0]
        if os.geteuid() == 0:
            assert UID_BASE <= facts["uid"] < UID_BASE + UID_COUNT and facts["gid"] == facts["uid"]
            assert facts["groups"] == [] and facts["thread"] == "PermissionError"  # said why (Z10)
            assert facts["raw_thread"] == "RuntimeError"  # past the message: RLIMIT_NPROC of its own uid
        assert facts["pid"] <= 3  # a PID namespace of its own
        assert more["cwd"] == SUBMISSION and more["path"] == [SUBMISSION, SITE]  # stdlib, numpy, its files
        assert facts["tmp_small"] == "ok" and facts["tmp_big"] == "OSError"  # the private /tmp is capped
        assert facts["submission_write"] in ("OSError", "PermissionError")  # read-only
        assert more["repo"] == more["passwd"] == "FileNotFoundError"
    finally:
        sb.close()
    assert TMP_BYTES < 4 * 30 << 20


def test_two_sandboxes_at_once_get_different_uids(tmp_path):
    if os.geteuid() != 0:
        if os.environ.get("CI"):  # CI runs as root: the per-slot uid must be proven there
            pytest.fail("CI must run as root to prove a uid per sandbox")
        pytest.skip("a uid per sandbox needs root")
    a, fa, _ = _facts(tmp_path, "a.py")
    b, fb, _ = _facts(tmp_path, "b.py")
    try:
        assert fa["uid"] != fb["uid"]
    finally:
        a.close()
        b.close()


def test_a_symlinked_file_is_not_copied_and_the_notes_say_why(tmp_path):
    (tmp_path / "layers.py").symlink_to(ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py")
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, isolation="namespaces") as sb:
        assert sb.notes == ["layers.py was not copied into the sandbox: it is a symbolic link (links are never "
                            "followed: upload the file itself)."]
        assert not os.listdir(sb.workdir)


def test_exit_code_70_after_student_code_is_the_students(tmp_path):
    f = tmp_path / "s.py"
    f.write_text("import os\nclass L:\n    def __init__(self):\n        self.params = {}\n"
                 "    def forward(self, X, training=False):\n        os._exit(70)\n    def backward(self, dY):\n"
                 "        return dY\n")
    with Sandbox(files={"s.py": str(f)}, isolation="namespaces") as sb:
        layer = sb.load_layer("s.py", "L")
        with pytest.raises(SandboxError) as info:
            layer.forward(np.ones((2, 2)))
    assert info.value.reason == "exit" and "exit code 70" in str(info.value)


def test_isolation_must_be_a_known_strength():
    from gradcheck.errors import UsageError

    with pytest.raises(UsageError, match="isolation must be 'process' or 'namespaces'"):
        Sandbox(files={}, isolation="container")
    assert sys.platform.startswith("linux")
