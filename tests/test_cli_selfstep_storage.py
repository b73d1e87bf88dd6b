"""`gradcheck check` on layers whose backward steps their own weights, wherever the weights and the rate are held
(issue 10, tester12 M1, M2): weights in a ``params`` dict, a ``params`` list (DLfS-2), a dict or list attribute;
a rate held as a class attribute (``class Opt: lr = 0.1``). A correct plain SGD step PASSes with the step read as
the gradient, a wrong one FAILs naming the gradient, an optimizer in backward (momentum, Adam) exits 3 naming
what was seen, as for weights held in attributes (``self.W``) and a rate held by the instance.

Each runs the CLI (the student's code in its sandbox) and fails on the code before these fixes.
"""

import pytest
from test_cli import both, run, student

# --------------------------------------------------------------------------- nearby: DLfS-2 lists beside a state list

DLFS2 = """
import numpy as np

class Affine:
    def __init__(self):
        rng = np.random.default_rng(1)
        self.params = [rng.normal(size=(5, 3)), rng.normal(size=3) * 0.1]
        self.grads = [np.zeros((5, 3)), np.zeros(3)]
        self.vel = [np.zeros((5, 3)), np.zeros(3)]
    def forward(self, X):
        self.X = X
        W, b = self.params
        return X @ W + b
    def backward(self, dY):
        W, b = self.params
        self.grads[0][...] = self.X.T @ dY
        self.grads[1][...] = dY.DB(axis=0)
        return dY @ W.T
"""


@pytest.mark.parametrize(("db", "code"), [("sum", 0), ("mean", 1)])
def test_dlfs2_grads_are_not_read_for_a_state_list_beside_params(tmp_path, db, code):
    """``grads[0]`` is a candidate name for any list's item 0: beside ``self.vel = [...]`` (an optimizer's state,
    forward does not use it) it was also read as vel[0]'s gradient and checked against 0, a FAIL of a correct
    layer. A gradient paired with a weight forward uses is that weight's only."""
    p = run("check", f"{student(tmp_path, DLFS2.replace('DB', db), 'dl.py')}::Affine", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    assert "params[0]/grads[0], params[1]/grads[1])" in out and "vel[0]" not in out, out
    assert ("FAIL: Affine: gradient mismatch in dparams[1]." in out) == bool(code), out
