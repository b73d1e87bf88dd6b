"""`gradcheck check` on layers whose ``backward(dZ, lr)`` steps their own weights, as corpus35 met them in public
numpy code (a FullyConnected with ``params``/``gradients`` dicts, deeplearning.ai's ``gradients['dW']`` beside
``params['W']``):

- F4: the gradient backward stores beside its step (``self.gradients['dW']``) is checked as well as the step: a
  wrong stored one beside a right step PASSed (the step alone was read, though the header said the stored one was);
- F1: weights the first forward creates (``params['W']`` None until then) are made before the probe of the steps:
  the probe found no weight to step, the weights moved at each backward and a correct dX FAILed ("second backward
  differs");
- F2: a subclass ``backward(self, dY, *args)`` handing its arguments on to ``super().backward(dY, *args)`` (the form
  the 1/m diagnosis suggests) is given the rate its base takes: it exited 3 ("missing 1 required positional
  argument: 'lr'").

Each runs the CLI (:func:`test_cli.run_here`, the student's code in its sandbox) and fails on the code before these
fixes.
"""

import pytest
from test_cli import both, check_source, run_here, student

# a Dense with params/gradients dicts whose backward(dZ, lr) stores the gradients and steps the weights with them;
# EAGER: the weights made in __init__, LAZY: by the first forward; STORED_DW / STEP_DB / DX planted bugs
DENSE = """
import numpy as np

class Dense:
    def __init__(self, out_dim=3, in_dim=None):
        self.out_dim, self.params, self.gradients = out_dim, {"W": None, "b": None}, {"dW": None, "db": None}
        if in_dim is not None:
            self.build(in_dim)
    def build(self, in_dim):
        rng = np.random.default_rng(3)
        self.params["W"] = rng.normal(size=(in_dim, self.out_dim))
        self.params["b"] = rng.normal(size=self.out_dim) * 0.1
    def forward(self, X):
        if self.params["W"] is None:
            self.build(X.shape[1])
        self.X = X
        return X @ self.params["W"] + self.params["b"]
    def backward(self, dZ, lr):
        dW, db = self.X.T @ dZ, dZ.sum(axis=0)
        self.gradients["dW"] = STORED_DW
        self.gradients["db"] = db
        dX = dZ @ self.params["W"].T
        self.params["W"] = self.params["W"] - lr * dW
        self.params["b"] = self.params["b"] - lr * STEP_DB
        return DX
"""

RIGHT = {"STORED_DW": "dW", "STEP_DB": "db", "DX": "dX"}


def dense(**bugs):
    src = DENSE
    for k, v in {**RIGHT, **bugs}.items():
        src = src.replace(k, v)
    return src


def check(tmp_path, src, name="Dense", init='{"out_dim": 3, "in_dim": 4}'):
    p = run_here("check", f"{student(tmp_path, src, 'dense.py')}::{name}", "--input-shape", "5,4", "--init", init)
    return p.returncode, both(p)


LAZY = '{"out_dim": 3}'


# --------------------------------------------------------------------------- F4: stored and stepped, both checked

@pytest.mark.parametrize("init", ['{"out_dim": 3, "in_dim": 4}', LAZY])
def test_a_wrong_stored_gradients_dw_beside_a_right_step_fails(tmp_path, init):
    """``self.gradients['dW'] = X[:1].T @ dZ[:1]`` (the first sample only) beside ``W -= lr * X.T @ dZ`` PASSed (exit
    0, dW ok): the step was read into grads['W'] and the stored gradients['dW'] never looked at, while the header
    said "one backward stores itself, dW beside the step, is checked instead"."""
    code, out = check(tmp_path, dense(STORED_DW="self.X[:1].T @ dZ[:1]"), init=init)
    assert code == 1, out
    assert ("FAIL: Dense: gradient mismatch in dW (dW is self.gradients['dW'] as backward stores it, which is wrong; "
            "its step of W is right (it matches a central difference of forward))") in out, out
    assert "the check reads the stored self.gradients['dW']" in out, out
    assert "PASS" not in out, out


@pytest.mark.parametrize("init", ['{"out_dim": 3, "in_dim": 4}', LAZY])
def test_a_wrong_step_beside_a_right_stored_gradient_fails(tmp_path, init):
    """``params['b'] -= lr * dZ.mean(0)`` beside ``gradients['db'] = dZ.sum(0)``: the step is checked in db's place."""
    code, out = check(tmp_path, dense(STEP_DB="dZ.mean(axis=0)"), init=init)
    assert code == 1, out
    assert ("FAIL: Dense: gradient mismatch in db (db is b's step over the rate, which is wrong; self.gradients['db'] "
            "as backward stores it is right, and the step is not the rate times it)") in out, out


@pytest.mark.parametrize("init", ['{"out_dim": 3, "in_dim": 4}', LAZY])
def test_a_stored_gradient_that_is_the_step_passes(tmp_path, init):
    """The correct layer, eager or lazy, PASSes with its steps probed (F1: the lazy one's header said "no weights to
    step (the probe moved none)" and dX FAILed)."""
    code, out = check(tmp_path, dense(), init=init)
    assert code == 0, out
    assert "PASS: Dense: every gradient (dX, dW, db)" in out, out
    assert "probed: proportional to the rate and to dY, the same on a second call, moving params['W'], " \
           "params['b']" in out, out
    assert "no weights to step" not in out and "second backward differs" not in out, out
    assert "a gradient backward also stores beside the step, self.dW, grads['W'] or gradients['dW'], is checked in " \
           "its place and must agree with the step" in out, out
    assert ("created by the first forward, then checked: params['W'], params['b']" in out) == (init == LAZY), out


# --------------------------------------------------------------------------- F1: weights the first forward creates

def test_lazy_weights_with_dx_after_the_step_fail_naming_dx(tmp_path):
    """dX computed with the weights after the step: FAILs naming dX, with the reason (the rate changes dX), where
    before the probe could not see the step at all."""
    src = dense(DX="dZ @ self.params['W'].T")
    code, out = check(tmp_path, src, init=LAZY)
    assert code == 1, out
    assert "FAIL: Dense: gradient mismatch in dX." in out, out
    assert "dX with the weights after its own gradient-descent step" in out, out


def test_lazy_weights_with_a_wrong_stored_and_stepped_dw_fail_naming_dw(tmp_path):
    """dW of the first sample only, stored and stepped alike: the probe finds no disagreement, the check FAILs dW
    (it compared nothing and FAILed dX before)."""
    src = dense().replace("dW, db = self.X.T @ dZ", "dW, db = self.X[:1].T @ dZ[:1]")
    code, out = check(tmp_path, src, init=LAZY)
    assert code == 1, out
    assert "FAIL: Dense: gradient mismatch in dW." in out, out
    assert "dX (5, 4)" in out and "FAIL (second backward differs)" not in out, out


# --------------------------------------------------------------------------- F2: backward(self, dY, *args)

HANDED = """

class Handed(Dense):
    def backward(self, dY, *args):
        seen.append(args)
        dX = super().backward(dY, *args)
        SCALE
        return dX

seen = []
"""


def test_a_subclass_handing_its_arguments_on_is_given_the_rate(tmp_path):
    """``def backward(self, dY, *args): dX = super().backward(dY, *args)`` over ``backward(self, dZ, lr)`` exited 3
    (``missing 1 required positional argument: 'lr'``): it was called with dY alone. It is called with the rate as
    its first extra argument, so its steps are read as a plain ``backward(dY, lr)``'s are: the correct one PASSes."""
    code, out = check(tmp_path, dense() + HANDED.replace("SCALE", "pass"), "Handed", LAZY)
    assert code == 0, out
    assert "PASS: Handed: every gradient (dX, dW, db)" in out, out
    assert "it is called with lr=0.25" in out and "missing 1 required positional argument" not in out, out


def test_a_subclass_handing_its_arguments_on_is_checked_stored_and_stepped(tmp_path):
    """The subclass the 1/m diagnosis suggests (rescaling only what backward stores) is now checked, not refused: the
    stored gradient and the step disagree, and the FAIL names which is wrong (here the stored one, doubled)."""
    src = dense() + HANDED.replace("SCALE", "self.gradients['dW'] = self.gradients['dW'] * 2")
    code, out = check(tmp_path, src, "Handed", LAZY)
    assert code == 1, out
    assert ("FAIL: Handed: gradient mismatch in dW (dW is self.gradients['dW'] as backward stores it, which is wrong; "
            "its step of W is right") in out, out


def test_the_rate_handed_on_reaches_the_base_positionally():
    """:func:`gradcheck._adapters._forwarded_rate`: the function it makes takes the base's rate by name and hands it
    on as the first extra argument; a backward that does not hand ``*args`` to a backward, or a base without a rate,
    gives None."""
    import inspect

    from gradcheck._adapters import _forwarded_rate

    class Base:
        def backward(self, dZ, lr):
            return ("base", dZ, lr)

    class Handed(Base):
        def backward(self, dY, *args):
            return super().backward(dY, *args)

    class Swallows(Base):
        def backward(self, dY, *args):
            return dY

    class NoRate:
        def backward(self, dZ):
            return dZ

    class HandedNoRate(NoRate):
        def backward(self, dY, *args):
            return super().backward(dY, *args)

    f = _forwarded_rate(Handed.backward, Handed)
    assert list(inspect.signature(f).parameters) == ["self", "dY", "lr"]
    assert f(Handed(), 7.0, lr=0.25) == ("base", 7.0, 0.25)
    assert f(Handed(), 7.0, 0.5) == ("base", 7.0, 0.5)
    assert "super().backward(dY, *args)" in inspect.getsource(f)  # the student's source, read by the probes
    assert _forwarded_rate(Swallows.backward, Swallows) is None
    assert _forwarded_rate(HandedNoRate.backward, HandedNoRate) is None
    assert _forwarded_rate(Base.backward, Base) is None


# Ng's convention in a layer that steps itself: dW and db (and so the step) carry 1/m
NG_STEP = """
import numpy as np

class FC:
    def __init__(self, in_dim=4, out_dim=3):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.normal(size=(out_dim, in_dim)), np.zeros((out_dim, 1))
    def forward(self, X):
        self.X = X
        return self.W @ X + self.b
    def backward(self, dZ, lr):
        m = dZ.shape[1]
        dW, db, dX = dZ @ self.X.T / m, dZ.sum(axis=1, keepdims=True) / m, self.W.T @ dZ
        self.W, self.b = self.W - lr * dW, self.b - lr * db
        return dX
"""
FOLLOWED = """

class FCM(FC):
    def backward(self, dY, lr):
        return super().backward(dY, lr * dY.shape[1])
"""


def test_the_one_over_m_advice_for_a_layer_stepping_itself_works_when_followed(tmp_path):
    """corpus35 F2's advice: multiplying dW and db by m after super().backward left the step's 1/m (the suggested
    subclass FAILed); the advice for a layer whose backward steps itself is a rate m times larger, and it PASSes."""
    code, out = check_source(tmp_path, NG_STEP, "FC", "--input-shape", "4,5")
    assert code == 1 and "dW and db are 5 times too small" in out, out
    assert "class FCM(FC): def backward(self, dY, lr): return super().backward(dY, lr * dY.shape[1])" in out, out
    code, out = check_source(tmp_path, NG_STEP + FOLLOWED, "FCM", "--input-shape", "4,5", file="followed.py")
    assert code == 0 and "PASS: FCM: every gradient (dX, dW, db)" in out, out
