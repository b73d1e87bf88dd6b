"""Session 44's MEDIUM findings of outside44 and newuser44 (helper medium44)."""
import re
import shlex

import numpy as np

GELU_TANH = """
import numpy as np

C = np.sqrt(2 / np.pi)


class GELU:
    def forward(self, X):
        self.X = X
        self.t = np.tanh(C * (X + 0.044715 * X ** 3))
        return 0.5 * X * (1 + self.t)

    def backward(self, dY):
        X, t = self.X, self.t
        return dY * (0.5 * (1 + t) + 0.5 * X * (1 - t ** 2) * C * (1 + 3 * 0.044715 * X ** 2))
"""


def _flat(text):
    return " ".join(text.split())


def test_a_pass_suggests_only_a_reference_and_twin_that_compute_the_layers_function(capsys, tmp_path):
    """outside44 M2: a right tanh-approximation GELU was told ``--reference manualprop.GELU`` (the erf form by default)
    and ``--twin``, each of which made it FAIL; the advice now names the setting that computes the layer's function,
    and following it PASSes."""
    from gradcheck.cli import main

    f = tmp_path / "act.py"
    f.write_text(GELU_TANH)
    base = ["check", f"{f}::GELU", "--input-shape", "6,5"]
    assert main(base) == 0
    out = _flat(capsys.readouterr().out)
    ref = re.search(r"pass (--reference manualprop\.GELU[^()]*?) to compare them", out)
    twin = re.search(r"add (--twin[^()]*?) to compare with the tape", out)
    assert ref and twin, out
    assert "approximate" in ref[1] and "tanh" in ref[1] and "tanh" in twin[1], out
    for advice in (ref[1], twin[1]):
        assert main(base + shlex.split(advice)) == 0, (advice, capsys.readouterr().out)
    capsys.readouterr()


CE_ONEHOT = """
import numpy as np


class CEOneHot:
    def forward(self, y_pred, y_true):
        z = y_pred - y_pred.max(1, keepdims=True)
        self.p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
        self.y = y_true
        return -np.sum(y_true * np.log(self.p)) / len(y_pred)

    def backward(self):
        return (self.p - self.y) / len(self.p)
"""


def test_a_one_hot_cross_entropy_checked_at_real_targets_is_told_to_pass_targets_onehot(capsys, tmp_path):
    """newuser44 F7: a right one-hot cross-entropy checked at the default (Gaussian) targets FAILed with "no known bug
    pattern"; the check tries one-hot targets for the same y_pred and, as the loss passes there, says so."""
    from gradcheck.cli import main

    f = tmp_path / "losses.py"
    f.write_text(CE_ONEHOT)
    assert main(["check", f"{f}::CEOneHot", "--loss", "--input-shape", "4,3"]) == 1  # at real targets it IS wrong
    out = _flat(capsys.readouterr().out)
    assert "no known bug pattern" not in out, out
    assert "dy_pred is right for one-hot targets" in out and "--targets onehot" in out, out


def _norm_bwd(dY, xh, std, axes):
    return (dY - dY.mean(axis=axes, keepdims=True) - xh * (dY * xh).mean(axis=axes, keepdims=True)) / std


class InstanceNorm:
    """X (N, C, L), statistics per sample and channel (axis 2), no affine."""

    def forward(self, X):
        self.std = np.sqrt(X.var(axis=2, keepdims=True) + 1e-5)
        self.xh = (X - X.mean(axis=2, keepdims=True)) / self.std
        return self.xh

    def backward(self, dY):
        return _norm_bwd(dY, self.xh, self.std, (2,))


class InstanceNormBatchAxes(InstanceNorm):
    def backward(self, dY):  # batch norm's axes (0, 2) where forward's statistics are over (2,)
        return _norm_bwd(dY, self.xh, self.std, (0, 2))


class InstanceNormNoVarPath(InstanceNorm):
    def backward(self, dY):
        return (dY - dY.mean(axis=2, keepdims=True)) / self.std


def test_a_normalisation_whose_backward_averages_over_other_axes_is_named_so():
    """outside44 M1: an instance norm whose backward takes the paths' means over (0, 2) was told its paths through
    the statistics were missing; it has them, over the wrong axes, and is told so (the missing path still is)."""
    from gradcheck import diagnose_layer

    X = np.random.default_rng(1).standard_normal((3, 4, 5))
    wrong = diagnose_layer(InstanceNormBatchAxes(), X)
    assert not wrong.passed
    said = " ".join(f.message for f in wrong.errors)
    assert "over axes (0, 2) of the input where forward's statistics are over axis 2 alone" in said, said
    assert "treated as constants" not in said, said
    missing = diagnose_layer(InstanceNormNoVarPath(), X)
    assert any(f.code == "missing-mean-var-paths" for f in missing.errors)
    assert diagnose_layer(InstanceNorm(), X).passed


class LabelSmoothCE:
    """Deep Learning from Scratch's order: forward(x, t), the prediction first."""

    def forward(self, x, t):
        N, K = x.shape
        z = np.exp(x - x.max(axis=1, keepdims=True))
        self.p = z / z.sum(axis=1, keepdims=True)
        self.y = np.full((N, K), 0.1 / K)
        self.y[np.arange(N), t] += 0.9
        return -(self.y * np.log(self.p)).sum() / N

    def backward(self, dout=1):
        return dout * (self.p - self.y) / self.p.shape[0]


def test_check_loss_says_it_called_a_prediction_first_forward_in_kerass_order():
    """outside44 M3: ``check_loss(loss, y_true, y_pred)`` on a ``forward(x, t)`` loss blamed the student's forward; the
    error now says check_loss passed (y_true, y_pred) positionally while forward's names put the prediction first."""
    import pytest

    from gradcheck import StudentCodeError, check_loss

    rng = np.random.default_rng(0)
    with pytest.raises(StudentCodeError) as err:
        check_loss(LabelSmoothCE(), rng.integers(0, 5, 6), rng.standard_normal((6, 5)), twin=None)
    said = " ".join(str(err.value).split())
    assert "check_loss calls LabelSmoothCE.forward(y_true, y_pred) positionally (Keras's order), so x was given " \
           "y_true and t y_pred" in said, said


GETATTR_LAYERS = """
import numpy as np


class DictLinear:
    def __init__(self, i, o):
        r = np.random.default_rng(0)
        self.__dict__["params"] = {"W": r.standard_normal((o, i)), "b": np.zeros(o)}
        self.__dict__["grads"] = {}

    def __getattr__(self, name):
        return self.params[name]

    def forward(self, X):
        self.__dict__["X"] = X
        return X @ self.W.T + self.b

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(0)
        return dY @ self.W


class GetattrAll:
    def __getattr__(self, name):
        return np.ones(3)

    def forward(self, X):
        return X * 2

    def backward(self, dY):
        return dY * 2
"""


def test_a_getattr_raising_keyerror_or_answering_every_name_is_told_so(capsys, tmp_path):
    """newuser44 F3, F4: a ``__getattr__`` raising KeyError for a missing name was reported as "__init__ raised
    KeyError: 'connect_to'" (gradcheck's own lookup after __init__), one answering every name as an error of
    gradcheck; both now say what gradcheck looked up and that __getattr__ must raise AttributeError."""
    from gradcheck.cli import main

    f = tmp_path / "getattr_layers.py"
    f.write_text(GETATTR_LAYERS)
    assert main(["check", f"{f}::DictLinear", "--input-shape", "4,5", "--init", '{"i": 5, "o": 3}']) == 3
    said = _flat(capsys.readouterr().err)
    assert "DictLinear.__getattr__ raised KeyError" in said and "when gradcheck looked up an attribute" in said, said
    assert "__init__(i=5, o=3) raised" not in said and "raise AttributeError for a name" in said, said
    assert main(["check", f"{f}::GetattrAll", "--input-shape", "4,5"]) == 3
    said = _flat(capsys.readouterr().err)
    assert "GetattrAll.__getattr__ answers every name" in said and "error of gradcheck" not in said, said


RELU_RECOMPUTE = """
import numpy as np


class ReLU:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.maximum(X, 0)

    def backward(self, dY):
        return dY * (self.forward(self.X) > 0)
"""


def test_a_backward_calling_forward_is_noted_and_the_stubs_say_the_rule(capsys, tmp_path):
    """newuser44 F2: a right backward that calls forward PASSed without a word while both example assignments' graders
    fail it (their gradcheck_no_forward_in_backward policy), and the students' stubs did not say the rule."""
    from pathlib import Path

    from gradcheck.cli import main

    f = tmp_path / "layers.py"
    f.write_text(RELU_RECOMPUTE)
    assert main(["check", f"{f}::ReLU", "--input-shape", "8,5"]) == 0  # a note, not a FAIL: the numbers are right
    out = _flat(capsys.readouterr().out)
    assert "NOTE: ReLU.backward calls ReLU.forward (1 time(s) in one backward" in out, out
    root = Path(__file__).resolve().parents[1] / "assignments"
    for stub, words in (("linear_relu_ce", "backward must not call forward"),
                        ("cs231n_layers", "``NAME_backward`` must not call ``NAME_forward``")):
        assert words in _flat((root / stub / "stub" / "layers.py").read_text()), stub
