"""`gradcheck check` on layers whose backward steps their own weights, wherever the weights and the rate are held
(issue 10, tester12 M1, M2): weights in a ``params`` dict, a ``params`` list (DLfS-2), a dict or list attribute;
a rate held as a class attribute (``class Opt: lr = 0.1``). A correct plain SGD step PASSes with the step read as
the gradient, a wrong one FAILs naming the gradient, an optimizer in backward (momentum, Adam) exits 3 naming
what was seen, as for weights held in attributes (``self.W``) and a rate held by the instance.

Each runs the CLI (the student's code in its sandbox) and fails on the code before these fixes.
"""

import pytest
from test_cli import both, run, student

STORED = {
    # M1: self.params = {"W": ..., "b": ...}, no grads dict
    "dict": ("self.params = {'W': W, 'b': b}", "self.params['W']", "self.params['b']"),
    # DLfS-2 style, without the grads list: self.params = [W, b]
    "list": ("self.params = [W, b]", "self.params[0]", "self.params[1]"),
    # a dict attribute of another name
    "weights": ("self.weights = {'W': W, 'b': b}", "self.weights['W']", "self.weights['b']"),
    # a list of another name, a tuple
    "Ws": ("self.Ws = [W, b]", "self.Ws[0]", "self.Ws[1]"),
}

LAYER = """
import numpy as np

class Linear:
    def __init__(self):
        rng = np.random.default_rng(1)
        W, b = rng.normal(size=(5, 3)), rng.normal(size=3) * 0.1
        STORE
        self.vel = [np.zeros((5, 3)), np.zeros(3)]
    def forward(self, X):
        self.X = X
        return X @ WREF + BREF
    def backward(self, dY, lr=0.01):
        dX = dY @ WREF.T
        dW, db = self.X.T @ dY, DB
        STEP
        return dX
"""

SGD = "WREF -= lr * dW\n        BREF -= lr * db"
MOMENTUM = ("self.vel[0] = 0.9 * self.vel[0] - lr * dW\n        WREF += self.vel[0]\n"
            "        self.vel[1] = 0.9 * self.vel[1] - lr * db\n        BREF += self.vel[1]")


def layer(store, step=SGD, db="dY.sum(axis=0)"):
    st, w, b = STORED[store]
    return LAYER.replace("STORE", st).replace("STEP", step).replace("WREF", w).replace("BREF", b).replace("DB", db)


@pytest.mark.parametrize("store", list(STORED))
@pytest.mark.parametrize(("db", "code"), [("dY.sum(axis=0)", 0), ("dY.mean(axis=0)", 1)])
def test_a_self_stepping_backward_reads_weights_held_in_containers(tmp_path, store, db, code):
    """``self.params['W'] -= lr * dW`` with no grads dict FAILed a correct layer ("grads has no key 'W'"): the
    weights in a dict or list are probed and their steps read as the gradients, as ``self.W``'s are (M1)."""
    p = run("check", f"{student(tmp_path, layer(store, db=db), 'sgd.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    w = STORED[store][1].removeprefix("self.")
    assert "backward(dY, lr) updates the weights itself" in out and "is read as its gradient" in out, out
    assert f"moving {w}, " in out, out  # the probe found the weights it steps
    assert "has no key" not in out, out
    if code:
        assert "FAIL: Linear: gradient mismatch in d" in out, out
        assert "PASS" not in out, out
    else:
        assert "PASS: Linear: every gradient" in out, out


@pytest.mark.parametrize("store", list(STORED))
def test_an_optimizer_on_weights_held_in_containers_is_not_checkable(tmp_path, store):
    """Momentum on ``self.params['W']`` gave exit 1 (a missing gradient): it is probed and refused, exit 3,
    naming the weight and what was seen, as momentum on ``self.W`` is (M1)."""
    p = run("check", f"{student(tmp_path, layer(store, MOMENTUM), 'mom.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    w = STORED[store][1].removeprefix("self.")
    assert p.returncode == 3, out
    assert "is not a plain gradient-descent step" in out and f"{w} moved differently" in out, out
    assert "momentum" in out and "not checkable as written and no gradient was compared" in out, out
    assert "FAIL" not in out and "PASS" not in out, out


ADAM = """
import numpy as np

class Linear:
    def __init__(self, lr=0.01):
        rng = np.random.default_rng(1)
        self.params = {"W": rng.normal(size=(5, 3)), "b": np.zeros(3)}
        self.m = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.lr = lr; self.t = 0
    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]
    def backward(self, dY):
        g = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        dX = dY @ self.params["W"].T
        self.t += 1
        for k in g:
            self.m[k] = 0.9 * self.m[k] + 0.1 * g[k]
            self.v[k] = 0.999 * self.v[k] + 0.001 * g[k] ** 2
            self.params[k] -= STEP
        return dX
"""


@pytest.mark.parametrize(("step", "code"), [("self.lr * g[k]", 0),
                                            ("self.lr * self.m[k] / (np.sqrt(self.v[k]) + 1e-8)", 3)])
def test_a_rate_attribute_steps_weights_in_a_params_dict(tmp_path, step, code):
    """tester12's step_attr_sgd_lr_params: a rate in ``self.lr``, the weights in ``self.params``; plain SGD
    (moments kept but unused) PASSes, Adam exits 3 (M1)."""
    p = run("check", f"{student(tmp_path, ADAM.replace('STEP', step), 'adam.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    if code:
        assert "not proportional to dY" in out and "params['W']" in out, out
        assert "not checkable as written" in out, out
    else:
        assert "steps with the rate in self.lr" in out and "moving params['W'], params['b']" in out, out
        assert "PASS: Linear: every gradient (dX, dW, db)" in out, out


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


def test_a_dparams_list_beside_params_is_read(tmp_path):
    """``self.params = [W, b]`` with ``self.dparams = [dW, db]``: dparams[0] was listed twice among params[0]'s
    candidate gradients, so the layer was refused ("several gradient attributes (dparams[0], dparams[0])")."""
    src = DLFS2.replace("self.grads", "self.dparams").replace("DB", "sum")
    src = "\n".join(line for line in src.split("\n") if "self.vel" not in line)
    p = run("check", f"{student(tmp_path, src, 'dp.py')}::Affine", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 0, out
    assert "params[0]/dparams[0], params[1]/dparams[1])" in out and "several gradient" not in out, out
