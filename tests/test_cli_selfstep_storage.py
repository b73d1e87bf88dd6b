"""`gradcheck check` on layers whose backward steps their own weights, wherever the weights and the rate are held
(issue 10, tester12 M1, M2): weights in a ``params`` dict, a ``params`` list (DLfS-2), a dict or list attribute;
a rate held as a class attribute (``class Opt: lr = 0.1``). A correct plain SGD step PASSes with the step read as
the gradient, a wrong one FAILs naming the gradient, an optimizer in backward (momentum, Adam) exits 3 naming
what was seen, as for weights held in attributes (``self.W``) and a rate held by the instance.

Each runs the CLI (the student's code in its sandbox) and fails on the code before these fixes: one test the
console script, the others its ``gradcheck.cli.main`` in this process (``test_cli.run_here``), which spares the
start of a Python per check.
"""

import types

import numpy as np
import pytest
from test_cli import both, run, run_here, student

from gradcheck import _adapters

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
import types

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
    p = run_here("check", f"{student(tmp_path, layer(store, db=db), 'sgd.py')}::Linear", "--input-shape", "4,5")
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
    p = run_here("check", f"{student(tmp_path, layer(store, MOMENTUM), 'mom.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    w = STORED[store][1].removeprefix("self.")
    assert p.returncode == 3, out
    assert "is not a plain gradient-descent step" in out and f"{w} moved differently" in out, out
    assert "momentum" in out and "not checkable as written and no gradient was compared" in out, out
    assert "FAIL" not in out and "PASS" not in out, out


ADAM = """
import types

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
    p = run_here("check", f"{student(tmp_path, ADAM.replace('STEP', step), 'adam.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    if code:
        assert "not proportional to dY" in out and "params['W']" in out, out
        assert "not checkable as written" in out, out
    else:
        assert "steps with the rate in self.lr" in out and "moving params['W'], params['b']" in out, out
        assert "PASS: Linear: every gradient (dX, dW, db)" in out, out


# --------------------------------------------------------------------------- M2: a rate held by a class

CLASS_RATE = """
import types

import numpy as np

class Opt:
    lr = 0.1

class Linear:
    HEAD
    def __init__(self):
        rng = np.random.default_rng(1)
        self.W = rng.normal(size=(5, 3)); self.b = rng.normal(size=3) * 0.1; self.opt = Opt()
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        dX = dY @ self.W.T
        DECAY
        self.W -= RATE * (self.X.T @ dY)
        self.b -= RATE * dY.BIAS(axis=0)
        return dX
"""

RATES = {"self.opt.lr": "", "Opt.lr": "", "self.lr": "lr = 0.1", "Linear.lr": "lr = 0.1",
         "type(self).lr": "lr = 0.1", "self.Inner.lr": "class Inner:\n        lr = 0.1"}


def class_rate(rate, bias="sum", decay=""):
    return (CLASS_RATE.replace("HEAD", RATES[rate]).replace("RATE", rate).replace("BIAS", bias)
            .replace("DECAY", decay or "pass"))


@pytest.mark.parametrize("rate", list(RATES))
@pytest.mark.parametrize(("bias", "code"), [("sum", 0), ("mean", 1)])
def test_a_rate_held_as_a_class_attribute_is_found(tmp_path, rate, bias, code):
    """``class Opt: lr = 0.1`` used as ``self.opt.lr`` or ``Opt.lr`` (or ``class Linear: lr = 0.1`` as
    ``self.lr``) was not found: the step was taken as a backward that changes its parameters, a FAIL in dX of
    a correct layer. Found, the rate is set to 0.25 for each call and the step read (M2)."""
    p = run_here("check", f"{student(tmp_path, class_rate(rate, bias), 'cls.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    assert "updates the weights itself: it steps with the rate in" in out and "a class attribute" in out, out
    assert "moving W, b" in out, out
    if code:
        assert "FAIL: Linear: gradient mismatch in db." in out, out
    else:
        assert "PASS: Linear: every gradient (dX, dW, db)" in out, out


def test_a_class_rate_with_weight_decay_is_not_checkable(tmp_path):
    """tester12's step_attr_wd_frozen: weight decay times ``self.opt.lr`` (a class attribute), W *= 1 - lr * 0.01,
    FAILed dX; now probed and refused, the decay named: the step is lr * (dW + 0.01 W), an L2 penalty's gradient (M2)."""
    src = class_rate("self.opt.lr", decay="self.W *= (1 - self.opt.lr * 0.01)")
    p = run("check", f"{student(tmp_path, src, 'wd.py')}::Linear", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 3, out
    assert "not proportional to dY" in out and "0.01 * W in every entry" in out, out
    assert "weight-decay term (an L2 penalty's gradient) in the gradient" in out, out
    assert "lr set to 0.25" in out and "not checkable as written" in out, out


@pytest.mark.parametrize("rate", ["self.opt.lr", "Opt.lr", "self.lr"])
def test_a_class_rate_is_put_back_after_each_call_and_on_error(tmp_path, rate):
    """The probe sets the class attribute to 0.25 for each call: after the probe, after a backward and after a
    backward that raised, the class holds its own rate again, and the instance has no attribute of it (M2)."""
    src = class_rate(rate)
    path = student(tmp_path, src, "cls.py")
    ns = {"__name__": "cls_rate_student"}  # a class of module "builtins" is no student's
    exec(compile(src, str(path), "exec"), ns)  # noqa: S102 - the test's own layer
    owner = ns["Opt"] if "opt" in rate.lower() else ns["Linear"]
    obj = ns["Linear"]()
    X = np.random.default_rng(0).standard_normal((4, 5))
    text = _adapters.stored_results(obj, [X], training=False)
    assert "a class attribute" in text, text
    assert owner.__dict__["lr"] == 0.1 and "lr" not in vars(obj) and "lr" not in vars(obj.opt)
    W = obj.W.copy()
    Y = obj.forward(X)
    obj.backward(np.ones_like(Y))
    assert owner.__dict__["lr"] == 0.1 and "lr" not in vars(obj) and "lr" not in vars(obj.opt)
    np.testing.assert_allclose(obj.W_grad, X.T @ np.ones_like(Y), rtol=1e-12)
    np.testing.assert_array_equal(obj.W, W)  # put back
    with pytest.raises(ValueError, match="matmul|shapes|dimension"):
        obj.backward(np.ones((4, 7)))
    assert owner.__dict__["lr"] == 0.1 and "lr" not in vars(obj) and "lr" not in vars(obj.opt)


# --------------------------------------------------------------------------- nearby: DLfS-2 lists beside a state list

DLFS2 = """
import types

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
    p = run_here("check", f"{student(tmp_path, DLFS2.replace('DB', db), 'dl.py')}::Affine", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    assert "params[0]/grads[0], params[1]/grads[1])" in out and "vel[0]" not in out, out
    assert ("FAIL: Affine: gradient mismatch in dparams[1]." in out) == bool(code), out


def test_a_dparams_list_beside_params_is_read(tmp_path):
    """``self.params = [W, b]`` with ``self.dparams = [dW, db]``: dparams[0] was listed twice among params[0]'s
    candidate gradients, so the layer was refused ("several gradient attributes (dparams[0], dparams[0])")."""
    src = DLFS2.replace("self.grads", "self.dparams").replace("DB", "sum")
    src = "\n".join(line for line in src.split("\n") if "self.vel" not in line)
    p = run_here("check", f"{student(tmp_path, src, 'dp.py')}::Affine", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 0, out
    assert "params[0]/dparams[0], params[1]/dparams[1])" in out and "several gradient" not in out, out


# --------------------------------------------------------------------------- nearby: a rate held by a module

GLOBAL_RATE = """
import types

import numpy as np
HEAD

class Linear:
    def __init__(self):
        rng = np.random.default_rng(1)
        self.W = rng.normal(size=(5, 3)); self.b = rng.normal(size=3) * 0.1
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= THE_RATE * (self.X.T @ dY)
        self.b -= THE_RATE * dY.BIAS(axis=0)
        return dX
"""


@pytest.mark.parametrize(("head", "rate", "said"), [
    ("LEARNING_RATE = 0.1", "LEARNING_RATE", "glob_rate.LEARNING_RATE (a module's global)"),
    ("import rate_config", "rate_config.lr", "rate_config.lr (a module's global)"),
])
@pytest.mark.parametrize(("bias", "code"), [("sum", 0), ("mean", 1)])
def test_a_rate_held_by_a_module_is_found(tmp_path, head, rate, said, bias, code):
    """``LEARNING_RATE = 0.1`` at the top of the student's file, or ``config.lr`` of a module it imports, was not
    found: a correct layer FAILed dX ("not linear in dY"). Found, it is set to 0.25 for each call and put back."""
    student(tmp_path, "lr = 0.1\n", "rate_config.py")
    src = GLOBAL_RATE.replace("HEAD", head).replace("THE_RATE", rate).replace("BIAS", bias)
    p = run_here("check", f"{student(tmp_path, src, 'glob_rate.py')}::Linear", "--input-shape", "4,5", cwd=tmp_path)
    out = both(p)
    assert p.returncode == code, out
    assert f"it steps with the rate in {said}, set to 0.25" in out and "moving W, b" in out, out
    assert ("FAIL: Linear: gradient mismatch in db." in out) == bool(code), out
    assert ("PASS: Linear: every gradient (dX, dW, db)" in out) == (not code), out


def test_a_module_rate_is_put_back(tmp_path):
    """The module's global holds its own value after the probe, a backward, and a backward that raised."""
    import sys
    src = GLOBAL_RATE.replace("HEAD", "LEARNING_RATE = 0.1").replace("THE_RATE", "LEARNING_RATE").replace("BIAS", "sum")
    path = student(tmp_path, src, "glob_rate_api.py")
    mod = types.ModuleType("glob_rate_api")
    mod.__file__ = str(path)
    sys.modules["glob_rate_api"] = mod
    try:
        exec(compile(src, str(path), "exec"), vars(mod))  # noqa: S102 - the test's own layer
        obj = mod.Linear()
        X = np.random.default_rng(0).standard_normal((4, 5))
        text = _adapters.stored_results(obj, [X], training=False)
        assert "glob_rate_api.LEARNING_RATE (a module's global)" in text, text
        assert mod.LEARNING_RATE == 0.1
        Y = obj.forward(X)
        obj.backward(np.ones_like(Y))
        assert mod.LEARNING_RATE == 0.1
        np.testing.assert_allclose(obj.W_grad, X.T @ np.ones_like(Y), rtol=1e-12)
        with pytest.raises(ValueError, match="matmul|shapes|dimension"):
            obj.backward(np.ones((4, 7)))
        assert mod.LEARNING_RATE == 0.1
    finally:
        sys.modules.pop("glob_rate_api", None)


# --------------------------------------------------------------------------- nearby: a rate held in a config dict

CONFIG_RATE = """
import numpy as np

class Linear:
    def __init__(self):
        rng = np.random.default_rng(1)
        self.W = rng.normal(size=(5, 3)); self.b = rng.normal(size=3) * 0.1
        self.config = {"learning_rate": 0.1, "momentum": 0.9}
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        dX = dY @ self.W.T
        self.W -= self.config["learning_rate"] * (self.X.T @ dY)
        self.b -= self.config["learning_rate"] * dY.BIAS(axis=0)
        return dX
"""


@pytest.mark.parametrize(("bias", "code"), [("sum", 0), ("mean", 1)])
def test_a_rate_held_in_a_config_dict_is_found(tmp_path, bias, code):
    """``self.config['learning_rate']`` (CS231n's optim config) was not found: a correct layer FAILed dX. Found, it
    is set to 0.25 for each call and put back, the dict's other keys untouched."""
    p = run_here("check", f"{student(tmp_path, CONFIG_RATE.replace('BIAS', bias), 'cfg.py')}::Linear",
            "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == code, out
    assert "it steps with the rate in self.config['learning_rate'], set to 0.25" in out, out
    assert ("FAIL: Linear: gradient mismatch in db." in out) == bool(code), out
    assert ("PASS: Linear: every gradient (dX, dW, db)" in out) == (not code), out


def test_a_config_dict_rate_is_put_back(tmp_path):
    path = student(tmp_path, CONFIG_RATE.replace("BIAS", "sum"), "cfg_api.py")
    ns = {"__name__": "cfg_api"}
    exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102 - the test's own layer
    obj = ns["Linear"]()
    X = np.random.default_rng(0).standard_normal((4, 5))
    assert "self.config['learning_rate']" in _adapters.stored_results(obj, [X], training=False)
    Y = obj.forward(X)
    obj.backward(np.ones_like(Y))
    with pytest.raises(ValueError, match="matmul|shapes|dimension"):
        obj.backward(np.ones((4, 7)))
    assert obj.config == {"learning_rate": 0.1, "momentum": 0.9}
    np.testing.assert_allclose(obj.W_grad, X.T @ np.ones_like(Y), rtol=1e-12)
