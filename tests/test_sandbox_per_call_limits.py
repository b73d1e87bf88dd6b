"""tester15 H2: ``--timeout`` is a limit per call into the student's code, also for the probes a load makes
(10 to 50 calls in one request), and the session limit grows by ``timeout`` for each further call of a batch
or of the probes, and says so; an infinite loop at import still costs one limit."""

import textwrap

import numpy as np
import pytest

from gradcheck import sandbox
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


#: forwards of 1 s, the first 12 only (the load's probes make 10: 10 s against a limit of 8 s), the check's after them
#: at full speed
LOAD_SLOW = SLOW.replace("    def forward(self, X):\n        time.sleep(0.15)  # each call far under the limit; the load's "
                         "probes make about 14\n",
                         "    calls = 0\n\n    def forward(self, X):\n        ReLU.calls += 1\n"
                         "        if ReLU.calls <= 12:\n            time.sleep(1.0)\n")


def test_the_probes_of_a_load_have_the_limit_for_each_call(tmp_path):
    """The load's 10 probe forwards sleep 1 s each, 10 s in one request, each 7 s under the limit of one call, 8 s
    (before: 0.15 s against 1 s, a margin of 0.85 s that a loaded CI machine can eat)."""
    assert LOAD_SLOW.count("time.sleep(1.0)") == 1
    (tmp_path / "slow.py").write_text(LOAD_SLOW)
    r = run_here("check", "slow.py::ReLU", "--input-shape", "2,2", "--timeout", "8", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "did not finish" not in r.stdout + r.stderr


def test_a_call_of_the_probes_over_the_limit_is_still_stopped(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW.replace("time.sleep(0.15)", "time.sleep(0.15 if np.size(X) < 5 else 60)"))
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=1.0) as sb:
        with pytest.raises(SandboxError, match=r"did not finish within 1 s \(wall clock\)"):
            sb.load_layer("slow.py", "ReLU", {}, probe_inputs=[np.ones((3, 3))])


def test_an_infinite_loop_at_import_costs_one_limit(tmp_path, monkeypatch):
    # 60 limits of allowance, not 10: a busy loop is stopped once it has had its limit in CPU time, which a loaded
    # or stalled machine may not give it within 10 limits (then SandboxStarved, not the timeout asserted)
    monkeypatch.setattr(sandbox, "STARVED_FACTOR", 60)
    (tmp_path / "loop.py").write_text("while True:\n    pass\n")
    with Sandbox(files=[str(tmp_path / "loop.py")], timeout=1.0) as sb:
        with pytest.raises(SandboxError, match=r"importing loop.py did not finish within 1 s"):
            sb.load_layer("loop.py", "ReLU", {})


def test_the_session_limit_grows_with_the_forwards_of_a_batch(tmp_path):
    """12 forwards of 0.5 s in one batch: 6 s, beyond the 4 s the session began with (before: "did not finish
    within the session limit of 4 s"). Each call's limit is 8 s, not 1.5: 0.5 s sleeps against 1.5 s left a margin of
    1 s, which a loaded CI machine can eat; the extension is read from the sandbox's count, not the clock."""
    (tmp_path / "slow.py").write_text(SLOW.replace("0.15", "0.5"))
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=8.0, session_timeout=4.0) as sb:
        layer = sb.load_layer("slow.py", "ReLU", {}, probe_inputs=[np.ones((2, 2))])
        probes = sb._extra_calls  # the load's probes: each call after the first extends the session
        assert probes >= 5
        assert len(layer.forward_many([np.ones((2, 2))] * 12)) == 12
        assert sb._extra_calls == probes + 11
