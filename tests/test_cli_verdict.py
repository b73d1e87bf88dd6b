"""Defects a new-user tester found in `gradcheck check` (session 5): a random forward held fixed in the
sandbox as in process, --tape --jacobian on a layer the tape loses track of, a mismatch within the numerical
estimate's own uncertainty named as noise (not as a bug), exit codes that follow --help's rule, --twin
--jacobian without a twin, a 0-d parameter through the sandbox, the zoo's dilated ConvTranspose2D batch.

Run through the installed console script (``gradcheck``), as the tester did.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "gradcheck"


def run(*args, cwd=ROOT, timeout=600):
    cmd = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gradcheck"]
    env = {**os.environ, "MPLBACKEND": "Agg", "NO_COLOR": "1"}
    return subprocess.run(cmd + [str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def flat(p):
    """stdout and stderr with the terminal wrapping undone."""
    return " ".join((p.stdout + "\n" + p.stderr).split())


def write(tmp_path, text, name="layer.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text))
    return f


# --------------------------------------------------------------------------- F: a 0-d parameter

PRELU = """
import numpy as np

class PReLUf:
    def __init__(self):
        self.params = {"alpha": np.array(0.25)}
        self.grads = {"alpha": np.array(0.0)}

    def forward(self, X, training=False):
        self.X = X
        a = float(self.params["alpha"])  # only a 0-d (or size-1) array converts
        assert np.shape(self.params["alpha"]) == (), np.shape(self.params["alpha"])
        return np.where(X > 0, X, a * X)

    def backward(self, dY):
        self.grads["alpha"] = np.array(np.sum(dY * np.where(self.X > 0, 0.0, self.X)))
        return dY * np.where(self.X > 0, 1.0, float(self.params["alpha"]))
"""


def test_zero_d_parameter_keeps_its_shape_in_the_sandbox(tmp_path):
    p = run("check", f"{write(tmp_path, PRELU)}::PReLUf", "--input-shape", "4,3")
    assert p.returncode == 0, flat(p)
    assert "PASS: PReLUf: every gradient (dX, dalpha) match" in flat(p)


def test_wire_codec_keeps_zero_d_arrays():
    from gradcheck._sandbox_child import Packer, decode

    packer = Packer(np)
    head = packer.encode({"a": np.array(0.25), "b": np.arange(6.0).reshape(2, 3)[:, ::2]})
    back = decode(np, head, packer.payload())
    assert back["a"].shape == () and back["a"] == 0.25
    assert back["b"].shape == (2, 2) and back["b"].tolist() == [[0.0, 2.0], [3.0, 5.0]]


# --------------------------------------------------------------------------- G: the zoo's batches

def test_zoo_has_no_batch_of_one():
    from gradcheck.zoo import ENTRIES

    ones = [e.label for e in ENTRIES if isinstance(e.input_shape, tuple) and len(e.input_shape) > 1
            and e.input_shape[0] == 1 and e.build is None and e.inputs is None]
    assert ones == []
