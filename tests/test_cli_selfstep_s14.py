"""`gradcheck check` on layers whose backward steps their own weights (issue 10, session 14): a layer that also
stores its gradients (``self.dW``, ``self.grads['W']``) has the stored ones checked as well as its step, so a wrong
stored gradient that an optimizer or a reader would take is no PASS (finding 1); a rate held by a global instance or
a module-level object reached through two attributes, and weights nested two levels deep, are found and set
(finding 2).

Each runs the CLI (the student's code in its sandbox) and fails on the code before these fixes.
"""

import pytest
from test_cli import both, run, run_here, student

# --------------------------------------------------------------------------- finding 1: stored and stepped

STORES = """
import numpy as np

class Linear:
    def __init__(self):
        rng = np.random.default_rng(7)
        self.W = rng.standard_normal((5, 3)) * 0.5; self.b = rng.standard_normal(3) * 0.1; self.lr = 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        self.dW = STORED_DW
        self.db = dY.sum(0)
        dX = dY @ self.W.T
        self.W -= self.lr * (STEP_DW)
        self.b -= self.lr * self.db
        return dX
"""

RIGHT = "self.X.T @ dY"


@pytest.mark.parametrize(("stored", "step", "code", "said"), [
    (RIGHT, RIGHT, 0, None),
    (RIGHT + " / len(dY)", RIGHT, 1, "self.dW as backward stores it, which is wrong; its step of W is right"),
    (RIGHT, "2 * self.dW", 1, "W's step over the rate, which is wrong; self.dW as backward stores it is right"),
    (RIGHT + " / len(dY)", "3 * self.dW", 1, "self.dW as backward stores it, which is wrong; its step of W is wrong too"),
])
def test_a_stored_gradient_beside_the_step_is_checked(tmp_path, stored, step, code, said):
    """``self.dW = X.T @ dY / N`` (wrong) with ``self.W -= lr * X.T @ dY`` (right) PASSed: the step was checked in
    dW's place and the stored dW, which an optimizer or a reader takes as W's gradient, ignored. Both are checked:
    the one further from a central difference is read, and the FAIL line says which is wrong."""
    src = STORES.replace("STORED_DW", stored).replace("STEP_DW", step)
    p = run_here("check", f"{student(tmp_path, src, 'st.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    if code:
        assert f"FAIL: Linear: gradient mismatch in dW (dW is {said}" in " ".join(out.split()), out
        assert "PASS" not in out, out
    else:
        assert "PASS: Linear: every gradient (dX, dW, db)" in out, out


GRADS_DICT = """
import numpy as np

class Linear:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((5, 3)) * 0.5, "b": rng.standard_normal(3) * 0.1}
        self.grads = {}
        self.lr = 0.1
    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]
    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        self.grads["b"] = dY.STORED(0)
        dX = dY @ self.params["W"].T
        self.params["W"] -= self.lr * self.grads["W"]
        self.params["b"] -= self.lr * dY.STEP(0)
        return dX
"""


@pytest.mark.parametrize(("stored", "step", "code"), [("sum", "sum", 0), ("mean", "sum", 1), ("sum", "mean", 1)])
def test_a_stored_grads_dict_beside_the_step_is_checked(tmp_path, stored, step, code):
    """``self.grads['b'] = dY.mean(0)`` (wrong) with ``self.params['b'] -= lr * dY.sum(0)`` PASSed: the step
    overwrote grads['b']. The stored one is checked too."""
    src = GRADS_DICT.replace("STORED", stored).replace("STEP", step)
    p = run_here("check", f"{student(tmp_path, src, 'gd.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    if code:
        assert "FAIL: Linear: gradient mismatch in db" in out and "PASS" not in out, out
        which = "self.grads['b'] as backward stores it, which is wrong" if stored == "mean" else \
            "b's step over the rate, which is wrong; self.grads['b'] as backward stores it is right"
        assert which in " ".join(out.split()), out
    else:
        assert "PASS: Linear: every gradient (dX, dW, db)" in out, out


# --------------------------------------------------------------------------- finding 2: where the rate and weights are

GLOBAL_HOLDERS = """
import types

import numpy as np

class SGD:
    def __init__(self, lr):
        self.lr = lr
    def step(self, layer, dW, db):
        layer.W -= self.lr * dW
        layer.b -= self.lr * db

class Hyper:
    def __init__(self):
        self.train = types.SimpleNamespace(learning_rate=0.1)

opt = SGD(0.1)
cfg = types.SimpleNamespace(optim=types.SimpleNamespace(lr=0.1))
CONFIG = {"optim": {"lr": 0.1}}
hp = Hyper()
HYPER = (0.1,)

class Linear:
    def __init__(self):
        rng = np.random.default_rng(3)
        self.W = rng.standard_normal((5, 3)) * 0.5; self.b = rng.standard_normal(3) * 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        dX = dY @ self.W.T
        dW, db = self.X.T @ dY, dY.BIAS(0)
        STEP
        return dX
"""

STEPS = {
    "opt.step": ("opt.step(self, dW, db)", "opt.lr (a module's global)"),
    "cfg.optim.lr": ("self.W -= cfg.optim.lr * dW; self.b -= cfg.optim.lr * db", "cfg.optim.lr (a module's global)"),
    "CONFIG": ('self.W -= CONFIG["optim"]["lr"] * dW; self.b -= CONFIG["optim"]["lr"] * db',
               "CONFIG['optim']['lr'] (a module's global)"),
    "hp.train": ("lr = hp.train.learning_rate; self.W -= lr * dW; self.b -= lr * db",
                 "hp.train.learning_rate (a module's global)"),
}


@pytest.mark.parametrize("how", list(STEPS))
@pytest.mark.parametrize(("bias", "code"), [("sum", 0), ("mean", 1)])
def test_a_rate_held_by_a_global_instance_or_two_attributes_deep_is_found(tmp_path, how, bias, code):
    """A rate held by a module-level optimizer whose method backward calls (``opt.step(self, dW, db)``), or reached
    through two attributes or keys of a module-level object (``cfg.optim.lr``, ``CONFIG['optim']['lr']``), was not
    found: exit 3 for a correct layer and a wrong one alike. Found, it is set to 0.25 for each call and put back."""
    step, said = STEPS[how]
    src = GLOBAL_HOLDERS.replace("STEP", step).replace("BIAS", bias)
    p = run_here("check", f"{student(tmp_path, src, 'gl.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    assert f"it steps with the rate in {said}, set to 0.25" in " ".join(out.split()), out
    assert ("FAIL: Linear: gradient mismatch in db" in out) == bool(code), out
    assert ("PASS: Linear: every gradient (dX, dW, db)" in out) == (not code), out


def test_a_global_rate_that_cannot_be_set_is_still_not_checkable(tmp_path):
    """A rate in a module-level tuple (``HYPER[0]``) cannot be set: exit 3, naming the weights that moved."""
    src = GLOBAL_HOLDERS.replace("STEP", "self.W -= HYPER[0] * dW; self.b -= HYPER[0] * db").replace("BIAS", "sum")
    p = run("check", f"{student(tmp_path, src, 'tu.py')}::Linear", "--input-shape", "4,5")  # the console script
    out = " ".join(both(p).split())
    assert p.returncode == 3, out
    assert "backward updates the weights itself (W, b moved), at a rate gradcheck could not find or set" in out, out


@pytest.mark.parametrize("how", ["opt.step", "cfg.optim.lr", "CONFIG"])
def test_a_global_rate_is_put_back(tmp_path, how):
    """The global optimizer's or config's rate holds its own value after the probe, a backward, and a backward
    that raised."""
    import sys
    import types

    import numpy as np

    from gradcheck import _adapters

    src = GLOBAL_HOLDERS.replace("STEP", STEPS[how][0]).replace("BIAS", "sum")
    path = student(tmp_path, src, f"gl_api_{how.replace('.', '_')}.py")
    mod = types.ModuleType(path.stem)
    mod.__file__ = str(path)
    sys.modules[path.stem] = mod
    try:
        exec(compile(src, str(path), "exec"), vars(mod))  # noqa: S102 - the test's own layer
        rates = lambda: (mod.opt.lr, mod.cfg.optim.lr, mod.CONFIG)  # noqa: E731
        kept = (0.1, 0.1, {"optim": {"lr": 0.1}})
        obj = mod.Linear()
        X = np.random.default_rng(0).standard_normal((4, 5))
        assert STEPS[how][1] in _adapters.stored_results(obj, [X], training=False)
        assert rates() == kept
        W = obj.W.copy()
        Y = obj.forward(X)
        obj.backward(np.ones_like(Y))
        assert rates() == kept
        np.testing.assert_allclose(obj.W_grad, X.T @ np.ones_like(Y), rtol=1e-12)
        np.testing.assert_array_equal(obj.W, W)
        with pytest.raises(ValueError, match="matmul|shapes|dimension"):
            obj.backward(np.ones((4, 7)))
        assert rates() == kept
    finally:
        sys.modules.pop(path.stem, None)


NESTED = """
import numpy as np

class Dense:
    def __init__(self):
        rng = np.random.default_rng(4)
        self.params = {"W": rng.standard_normal((5, 3)) * 0.5, "b": rng.standard_normal(3) * 0.1}
    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

class Inner:
    def __init__(self):
        rng = np.random.default_rng(5)
        self.W = rng.standard_normal((5, 3)) * 0.5; self.b = rng.standard_normal(3) * 0.1

class Block:
    def __init__(self):
        self.inner = Inner()

class Net:
    def __init__(self):
        self.layers = [Dense()]; self.block = Block(); self.lr = 0.1
    def forward(self, X):
        self.X = X
        return self.layers[0].forward(X) + X @ self.block.inner.W + self.block.inner.b
    def backward(self, dY):
        l = self.layers[0]
        dX = dY @ l.params["W"].T + dY @ self.block.inner.W.T
        self.layers[0].params["W"] -= self.lr * (l.X.T @ dY)
        self.layers[0].params["b"] -= self.lr * dY.BIAS(0)
        self.block.inner.W -= self.lr * (self.X.T @ dY)
        self.block.inner.b -= self.lr * dY.sum(0)
        return dX
"""


@pytest.mark.parametrize(("bias", "code"), [("sum", 0), ("mean", 1)])
def test_weights_nested_two_levels_deep_are_probed(tmp_path, bias, code):
    """``self.layers[0].params['W']`` (a plain object's params dict in a list) stepped in backward was not probed:
    exit 3 for a correct layer. Its steps are read as its gradients, as ``self.block.inner.W``'s are."""
    p = run_here("check", f"{student(tmp_path, NESTED.replace('BIAS', bias), 'nest.py')}::Net", "--input-shape", "4,5")
    out = " ".join(both(p).split())
    assert p.returncode == code, out
    assert "moving block.inner.W, block.inner.b, layers.0.params['W'], layers.0.params['b'])" in out, out
    assert ("FAIL: Net: gradient mismatch in dlayers.0.b" in out) == bool(code), out
    assert ("PASS: Net: every gradient" in out) == (not code), out
