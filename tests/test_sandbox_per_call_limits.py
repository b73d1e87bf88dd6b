"""tester15 H2: ``--timeout`` is a limit per call into the student's code, also for the probes a load makes
(10 to 50 calls in one request), and the session limit grows by ``timeout`` for each further call of a batch
or of the probes, and says so; an infinite loop at import still costs one limit."""

import textwrap

import numpy as np
import pytest

from gradcheck.sandbox import Sandbox, SandboxError
from tests.test_cli import run_here

SLOW = textwrap.dedent('''
    import time

    import numpy as np


    class ReLU:
        def forward(self, X):
            time.sleep(0.15)  # each call far under the limit; the load's probes make about 14
            self.mask = X > 0
            return X * self.mask

        def backward(self, dY):
            return dY * self.mask
''')


def test_the_probes_of_a_load_have_the_limit_for_each_call(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    r = run_here("check", "slow.py::ReLU", "--input-shape", "2,2", "--timeout", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "did not finish" not in r.stdout + r.stderr


def test_a_call_of_the_probes_over_the_limit_is_still_stopped(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW.replace("time.sleep(0.15)", "time.sleep(0.15 if np.size(X) < 5 else 60)"))
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=1.0) as sb:
        with pytest.raises(SandboxError, match=r"did not finish within 1 s \(wall clock\)"):
            sb.load_layer("slow.py", "ReLU", {}, probe_inputs=[np.ones((3, 3))])


def test_an_infinite_loop_at_import_costs_one_limit(tmp_path):
    (tmp_path / "loop.py").write_text("while True:\n    pass\n")
    with Sandbox(files=[str(tmp_path / "loop.py")], timeout=1.0) as sb:
        with pytest.raises(SandboxError, match=r"importing loop.py did not finish within 1 s"):
            sb.load_layer("loop.py", "ReLU", {})


def test_the_session_limit_grows_with_the_forwards_of_a_batch(tmp_path):
    """12 forwards of 0.5 s in one batch: 6 s, beyond the 4 s the session began with (before: "did not finish
    within the session limit of 4 s")."""
    (tmp_path / "slow.py").write_text(SLOW.replace("0.15", "0.5"))
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=1.5, session_timeout=4.0) as sb:
        layer = sb.load_layer("slow.py", "ReLU", {}, probe_inputs=[np.ones((2, 2))])
        probes = sb._extra_calls  # the load's probes: each call after the first extends the session
        assert probes >= 5
        assert len(layer.forward_many([np.ones((2, 2))] * 12)) == 12
        assert sb._extra_calls == probes + 11
