"""``gradcheck check`` runs in the strongest sandbox this machine gives (redteam37 F2c).

Its default was the process sandbox, where the audit hook is the only guard besides the seccomp filter, and numpy alone
switches the hook off (raw memory through ``__array_interface__``): a checked file wrote a file on the host and ran
ctypes as the user running check, root there. Now ``--isolation auto`` (the default) picks the grader's namespaces
sandbox where :func:`gradcheck.sandbox.support` finds it, says which in the header, and warns when only the process
sandbox is left and check runs as root. conftest.py sets ``GRADCHECK_ISOLATION=process`` for the other tests (speed);
these tests clear it. The layer reports the host name it sees: ``gradcheck-sandbox`` is the namespaces sandbox's own
(bwrap ``--hostname``; ``os.uname`` has no audit event), anything else the host's.
"""

import os
import re
import socket

import pytest
from test_cli import run_here

from gradcheck import sandbox

NODE = '''
import os
import numpy as np

class Tanh:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        raise RuntimeError(f"NODE {os.uname().nodename} NODE")

    def backward(self, dY):
        return dY
'''

HAS_NAMESPACES = sandbox.support()[0] != "none"


def _node(p) -> str:
    text = " ".join((p.stdout + p.stderr).split())
    found = re.search(r"NODE (\S+) NODE", text)
    assert found, text
    return found[1]


@pytest.fixture
def node_file(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADCHECK_ISOLATION", raising=False)
    (tmp_path / "node.py").write_text(NODE)
    return tmp_path / "node.py"


@pytest.mark.skipif(not HAS_NAMESPACES, reason="no namespaces sandbox here: auto is the process sandbox")
def test_check_defaults_to_the_namespaces_sandbox_and_says_so(node_file):
    p = run_here("check", f"{node_file}::Tanh", "--input-shape", "4,3")
    assert p.returncode == 3, p.stdout + p.stderr
    assert _node(p) == "gradcheck-sandbox"
    assert "isolation namespaces (auto)" in p.stdout, p.stdout


def test_an_explicit_process_isolation_is_the_process_sandbox(node_file):
    p = run_here("check", f"{node_file}::Tanh", "--input-shape", "4,3", "--isolation", "process")
    assert p.returncode == 3, p.stdout + p.stderr
    assert _node(p) == socket.gethostname() != "gradcheck-sandbox"
    assert "isolation process" in p.stdout and "(auto)" not in p.stdout and "runs as root" not in p.stderr


def test_the_environment_variable_gives_the_default(node_file, monkeypatch):
    monkeypatch.setenv("GRADCHECK_ISOLATION", "process")
    p = run_here("check", f"{node_file}::Tanh", "--input-shape", "4,3")
    assert _node(p) == socket.gethostname() and "isolation process," not in p.stdout
    monkeypatch.setenv("GRADCHECK_ISOLATION", "sandboxed")
    p = run_here("check", f"{node_file}::Tanh", "--input-shape", "4,3")
    assert p.returncode == 2
    assert "GRADCHECK_ISOLATION='sandboxed': expected one of auto, process, namespaces" in " ".join(p.stderr.split())


@pytest.mark.skipif(not HAS_NAMESPACES, reason="no namespaces sandbox here")
def test_tape_stays_in_the_process_sandbox(node_file):
    """--tape runs the forward on autoprop tensors, which the namespaces sandbox does not mount: auto is process."""
    p = run_here("check", f"{node_file}::Tanh", "--input-shape", "4,3", "--tape")
    assert _node(p) == socket.gethostname()
    assert "isolation process (auto)" in p.stdout, p.stdout


def test_root_without_namespaces_is_warned(node_file, monkeypatch):
    """Only the process sandbox here, run as root: a warning that the file acts as root past its hook; not with an
    explicit --isolation process (the user said the file is trusted)."""
    monkeypatch.setattr(sandbox, "support", lambda: ("none", "bubblewrap (bwrap) is not installed"))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    p = run_here("check", f"{node_file}::Tanh", "--input-shape", "4,3")
    said = " ".join(p.stderr.split())
    assert _node(p) == socket.gethostname() and "isolation process (auto)" in p.stdout
    assert "gradcheck check runs as root and this machine has no operating-system sandbox" in said, said
    assert "(gradcheck.sandbox.support(): bubblewrap (bwrap) is not installed)" in said
    p = run_here("check", f"{node_file}::Tanh", "--input-shape", "4,3", "--isolation", "process")
    assert "runs as root" not in p.stderr
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    p = run_here("check", f"{node_file}::Tanh", "--input-shape", "4,3")
    assert "runs as root" not in p.stderr and "isolation process (auto)" in p.stdout
