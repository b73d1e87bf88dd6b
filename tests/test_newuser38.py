"""newuser38's findings: where an error is located, and what --twin says of a twin of another output shape.

F4: an exception raised inside numpy's Cython code (``rng.binomial(1, 1.5)``) was located in numpy
(``numpy/random/_common.pyx:440``, a relative co_filename resolved against the sandbox's folder, or the innermost
frame outside gradcheck in-process), never at the student's line that made the call.
F3: an exception inside a sub-layer's method (a correct ``Linear.backward`` handed a wrong dY by the caller's
loop in forward order) named only the sub-layer's line, not the caller's.
F2: ``--twin`` with a twin built with other arguments (no padding) reported gradcheck's own ``L = sum(Y * G)`` as
"autoprop.multiply(...) operands could not be broadcast together".
"""

import inspect
import os
import textwrap

import numpy as np
import pytest

import gradcheck
from gradcheck import _sandbox_child as child
from gradcheck.errors import GradcheckError


class BinomialDropout:
    """A dropout whose keep probability is above 1: numpy's Cython code raises."""

    def forward(self, X):
        self.mask = np.random.default_rng(0).binomial(1, 1.5, size=X.shape)  # the line to name
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


_LINE = inspect.getsource(BinomialDropout).splitlines().index(
    "        self.mask = np.random.default_rng(0).binomial(1, 1.5, size=X.shape)  # the line to name"
) + inspect.getsourcelines(BinomialDropout)[1]


def test_in_process_error_is_located_at_the_callers_line_not_in_numpy():
    with pytest.raises(GradcheckError) as info:
        gradcheck.check_layer(BinomialDropout(), (4, 3), twin=None)
    msg = str(info.value)
    assert "p < 0, p > 1 or p is NaN" in msg
    assert f"(at test_newuser38.py:{_LINE} in forward)" in msg, msg
    assert ".pyx" not in msg


def _raise_in(workdir, source, call):
    """Run ``source`` (a module written to workdir/layers.py) from inside workdir, as the sandbox runs it, and
    return child._error of what ``call(namespace)`` raises."""
    path = os.path.join(workdir, "layers.py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(source))
    ns = {"__name__": "layers"}
    exec(compile(open(path).read(), path, "exec"), ns)
    try:
        call(ns)
    except Exception as exc:  # noqa: BLE001
        return child._error(exc, workdir)
    raise AssertionError("no exception")


def test_sandbox_error_skips_cython_frames(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the sandbox's cwd: a relative co_filename resolved there looked like ours
    e = _raise_in(str(tmp_path), """\
        import numpy as np

        def forward(X):
            return np.random.default_rng(0).binomial(1, 1.5, size=X.shape)
        """, lambda ns: ns["forward"](np.ones(3)))
    assert e["where"] == "layers.py:4 in forward", e
    assert "binomial" in e["line"]


def test_sandbox_error_names_the_calling_line_of_a_sub_layers_method(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    e = _raise_in(str(tmp_path), """\
        import numpy as np

        class Linear:
            def __init__(self, n_in, n_out):
                self.W = np.ones((n_out, n_in))

            def backward(self, dY):
                return dY @ self.W

        class MLP:
            def __init__(self):
                self.layers = [Linear(5, 4), Linear(4, 3)]

            def backward(self, dY):
                for layer in self.layers:
                    dY = layer.backward(dY)
                return dY
        """, lambda ns: ns["MLP"]().backward(np.ones((2, 3))))
    assert e["where"] == "layers.py:8 in backward", e
    assert (e["caller"], e["caller_line"]) == ("layers.py:16 in backward", "dY = layer.backward(dY)"), e


def test_sandbox_error_of_a_helper_function_names_no_caller(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a helper of the same file (im2col) is where the error is: no second location
    e = _raise_in(str(tmp_path), """\
        import numpy as np

        def im2col(X):
            return X.reshape(7, -1)

        def forward(X):
            return im2col(X)
        """, lambda ns: ns["forward"](np.ones((2, 3))))
    assert e["where"] == "layers.py:4 in im2col", e
    assert not e.get("caller")


def test_a_twin_of_another_output_shape_is_said_so():
    import autoprop as ap
    import manualprop as mp
    from gradcheck.errors import TwinError

    with pytest.raises(TwinError) as info:  # the checked layer pads by 1, the twin was built without padding
        gradcheck.check_layer(mp.Conv2D(2, 3, 3, padding=1, rng=0), (2, 2, 5, 5), twin=ap.layers.Conv2D(2, 3, 3))
    msg = str(info.value)
    assert "autoprop.multiply" not in msg and "broadcast" not in msg, msg
    assert "output of shape (2, 3, 3, 3)" in msg and "Conv2D's is (2, 3, 5, 5)" in msg, msg
    assert "--twin-init" in msg


class ShiftLinear:
    """Y = (X + b) @ W, affine in X; backward forgets the shift in dW (X.T @ dY for (X + b).T @ dY)."""

    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((4, 3))
        self.b = np.random.default_rng(1).standard_normal(4)

    def forward(self, X):
        self.X = X
        return (X + self.b) @ self.W

    def backward(self, dY):
        self.dW = self.X.T @ dY
        self.db = (dY @ self.W.T).sum(0)
        return dY @ self.W.T


class TanhDense:
    """Y = tanh(X @ W + b) whose dW skips tanh's derivative: the signature's own case."""

    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((4, 3))
        self.b = np.random.default_rng(1).standard_normal(3)

    def forward(self, X):
        self.X, self.Y = X, np.tanh(X @ self.W + self.b)
        return self.Y

    def backward(self, dY):
        dZ = dY * (1 - self.Y ** 2)
        self.dW = self.X.T @ dY  # the bug: dY for dZ
        self.db = dZ.sum(0)
        return dZ @ self.W.T


def test_an_affine_layer_is_not_told_it_skips_an_activations_derivative():
    from gradcheck.diagnose import diagnose_layer

    text = diagnose_layer(ShiftLinear(), (8, 4)).report()
    assert "FAIL" in text and "dW" in text
    assert "applies a nonlinearity" not in text and "f'(Z)" not in text, text
    assert "forward is affine in X" in " ".join(text.split()), text  # the lead's weight-not-on-input
    text = diagnose_layer(TanhDense(), (8, 4)).report()  # still named where forward has one
    assert "forward applies a nonlinearity to Z" in text, text


class NoShiftCE:
    """Lesson 03's exercise 1 written without the log-sum-exp shift: right at N(0, 1) logits, NaN at 1000."""

    def forward(self, y_true, y_pred):
        e = np.exp(y_pred)
        self.p, self.y = e / e.sum(axis=1, keepdims=True), y_true
        return float(-np.log(self.p[np.arange(len(y_true)), y_true]).mean())

    def backward(self):
        d = self.p.copy()
        d[np.arange(len(self.y)), self.y] -= 1.0
        return d / len(self.y)


class ShiftCE(NoShiftCE):
    def forward(self, y_true, y_pred):
        return super().forward(y_true, y_pred - y_pred.max(axis=1, keepdims=True))


def test_a_loss_checked_against_a_reference_is_compared_at_large_logits_too():
    import manualprop as mp

    rng = np.random.default_rng(0)
    y, z = rng.integers(0, 4, size=8), rng.standard_normal((8, 4))
    with np.errstate(all="ignore"):
        res = gradcheck.check_loss(NoShiftCE(), y, z, twin=None, reference=mp.SoftmaxCrossEntropy())
    assert not res.passed
    assert any("y_pred + 1000" in r.tensor and not r.passed for r in res.records), [r.tensor for r in res.records]
    assert any("overflow" in n and "log-sum-exp" in n for n in res.notes), res.notes
    res = gradcheck.check_loss(ShiftCE(), y, z, twin=None, reference=mp.SoftmaxCrossEntropy())
    assert res.passed, res.notes
    assert any("y_pred + 1000" in r.tensor and r.passed for r in res.records)
    res = gradcheck.check_loss(NoShiftCE(), y, z, twin=None)  # without a reference: as before, no large probe
    assert res.passed and not any("1000" in r.tensor for r in res.records)


class NaiveBCEWithLogits:
    """Lesson 05's exercise 1 ("stable at any logit") through log(sigmoid): L is inf at |x| = 1000, its gradient not."""

    def forward(self, y_true, y_pred):
        self.t, self.s = y_true, 1 / (1 + np.exp(-y_pred))
        return float(np.mean(-(y_true * np.log(self.s) + (1 - y_true) * np.log(1 - self.s))))

    def backward(self):
        return (self.s - self.t) / self.t.size


def test_a_loss_whose_value_alone_overflows_fails_on_l_with_its_gradient_read():
    import manualprop as mp

    rng = np.random.default_rng(1)
    t, x = rng.random((8, 3)), rng.standard_normal((8, 3))
    with np.errstate(all="ignore"):
        res = gradcheck.check_loss(NaiveBCEWithLogits(), t, x, twin=None,
                                   reference=mp.BinaryCrossEntropyWithLogits())
    failing = sorted(r.tensor for r in res.records if not r.passed)
    assert failing == ["L (y_pred + 1000)", "L (y_pred - 1000)"], failing  # the gradient rows are right: read
