"""Session 20's tester's findings (tester t20s, fixer fixs20) checked through the CLI in this process and in
:func:`gradcheck.diagnose.diagnose_layer`: bugs hidden by parameters that start constant (zeros, ones), found at
drawn parameter values."""

import numpy as np
from test_cli import both, run_here

from gradcheck.diagnose import constant_params, diagnose_layer
from tests.buggy_layers import load

BUGGY = "tests/buggy_layers/session20b.py"


def test_constant_parameters_are_also_checked_at_drawn_values(tmp_path):
    """H1: a LayerNorm whose dX never multiplies by gamma (ones at init) passed; the header now says its constant
    parameters and the check at drawn values FAILs it, while the correct LayerNorm (gamma ones, beta zeros) PASSes
    with the same header line."""
    p = run_here("check", f"{BUGGY}::LNGammaForgot", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 1, text
    assert ("parameters beta, gamma are constant at init (zeros/ones), which can hide terms: also checked at drawn "
            "values") in " ".join(text.split()), text
    assert "FAILS at the drawn ones" in " ".join(text.split()) and "FAIL: LNGammaForgot" in text, text
    p = run_here("check", f"{BUGGY}::LNOnes", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 0, text
    assert "parameters beta, gamma are constant at init (zeros/ones)" in " ".join(text.split()), text
    assert "PASS: LNOnes" in text and "FAILS at the drawn" not in " ".join(text.split()), text


def test_params_dict_layer_with_a_constant_gamma_fails_at_drawn_values():
    """H1 in process, params dicts: dX = dy * (gamma + beta) with gamma = 1.5 everywhere and beta zeros FAILs, the
    student's own parameters left as they were; the correct layer passes, naming both as constant."""
    layer, X, kw = load("session20b.py::AffineBiasInDx")
    assert constant_params(layer, "AffineBiasInDx") == ["beta", "gamma"]
    d = diagnose_layer(layer, X, **kw)
    assert not d.passed and d.drawn == ["beta", "gamma"] and d.drawn_failed, d.report()
    assert np.all(layer.params["gamma"] == 1.5) and np.all(layer.params["beta"] == 0)  # checked on a copy
    assert not diagnose_layer(*load("session20b.py::AffineBiasInDx")[:2], drawn=False).drawn  # was a PASS
    assert diagnose_layer(*load("session20b.py::AffineBiasInDx")[:2], drawn=False).passed
    layer, X, kw = load("session20b.py::Affine")
    d = diagnose_layer(layer, X, **kw)
    assert d.passed and d.drawn == ["beta", "gamma"] and not d.drawn_failed, d.report()


def test_no_constant_parameter_no_second_check():
    """A parameter of distinct entries is not constant; a one-entry parameter is only at 0 or +-1."""
    layer, _, _ = load("session20b.py::LinearReLUZeroBias")
    assert constant_params(layer, "L") == ["b"]
    layer.params["b"][...] = [0.1, 0.2, 0.3]
    assert constant_params(layer, "L") == []


def test_float32_cache_in_backward_fails_on_every_seed():
    """H2: a tanh whose cached output is float32 passed on seeds 0 and 3 (max relative error 9.3e-7) and failed with
    "no known bug pattern" on seed 2; now it fails on each seed with float32 named (the line that casts), and the
    float64 tanh passes on each."""
    for seed in range(4):
        layer, X, _ = load("session20b.py::TanhFloat32Cache")
        d = diagnose_layer(layer, X, mode="full", seed=seed)
        assert d.codes == ["float32-backward"], (seed, d.sentence())
        assert "astype(np.float32)" in d.sentence() and "compute every array backward reads in float64" in d.sentence()
        layer, X, _ = load("session20b.py::TanhCache")
        assert diagnose_layer(layer, X, mode="full", seed=seed).passed, seed


DROPOUT_INVERTED = open("tests/buggy_layers/session20b.py").read().split("class DropoutInverted:")[1].split("\n\n\n")[0]


def test_inverted_dropout_switch_is_named_and_a_sibling_eps_is_not(tmp_path):
    """M1, M3: a dropout drawing its mask in eval and the identity in training: with --reference the diagnosis
    spoke of "the constant 1e-300 that forward adds inside np.log", a sibling file's (the copy without it was
    checked without the reference, so it passed); now the switch is named inverted, and without --reference the
    PASS warns of it."""
    (tmp_path / "layer.py").write_text("import numpy as np\n\n\nclass DropoutInverted:" + DROPOUT_INVERTED + "\n")
    (tmp_path / "other.py").write_text("import numpy as np\n\n\ndef ce(y):\n    return -np.log(y + 1e-300).sum()\n")
    p = run_here("check", f"{tmp_path}/layer.py::DropoutInverted", "--input-shape", "4,3", "--reference",
                 "manualprop.Dropout", "--init", '{"p": 0.5}')
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "np.log" not in text and "1e-300" not in text, text
    assert ("forward is random in eval mode and deterministic in training mode (the identity there)" in text
            and "the switch looks inverted" in text and "the reference, in training mode, drops units" in text), text
    layer, X, _ = load("session20b.py::DropoutInverted")
    d = diagnose_layer(layer, X)
    assert d.passed and any(f.code == "inverted-switch" for f in d.findings), d.report()
    assert "the switch looks inverted" in " ".join(d.report().split())


def test_eval_scaling_of_a_dropout_is_forward_s_factor():
    """M2: an eval forward returning x * (1 - p), backward the identity, against manualprop.Dropout: was "dX is
    1.42857 times the correct gradient" (a factor in backward); now the factor is forward's, named as the eval
    scaling inverted dropout does not have."""
    import manualprop
    from gradcheck import _adapters
    from tests.buggy_layers.session20b import DropoutEvalScale

    X = np.random.default_rng(0).standard_normal((6, 5))
    layer = _adapters.adapt(DropoutEvalScale(0.3), [X])[0]
    d = diagnose_layer(layer, X, reference=manualprop.Dropout(p=0.3), training=False)
    assert d.codes == ["forward-factor"], d.sentence()
    assert "in eval mode forward multiplies by 1 - p = 0.7, but inverted dropout is the identity in eval" in d.sentence()


AFFINE = """
import numpy as np

class Affine:
    def __init__(self, d_in, d_out):
        rng = np.random.default_rng(3)
        self.params = {"W": rng.normal(0, 0.1, (d_in, d_out)), "b": rng.normal(0, 0.1, d_out)}
        self.grads = {}

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["W"], self.grads["b"] = self.X.T @ dY, dY.sum(0)
        return dY @ self.params["W"].T

class ReLU:
    def forward(self, x):
        self.mask = x > 0
        return x * self.mask

    def backward(self, dy):
        return dy * self.mask

class DropoutNewRng:
    def __init__(self, p=0.2):
        self.p = p

    def forward(self, x, training=True):
        rng = np.random.default_rng()
        self.mask = (rng.random(x.shape) >= self.p) / (1 - self.p) if training else np.ones_like(x)
        return x * self.mask

    def backward(self, dy):
        return dy * self.mask
"""


def test_reference_built_from_its_own_arguments(tmp_path):
    """M7: a constructor naming its sizes d_in, d_out with --reference manualprop.Linear was a dead end naming
    "Linear" as the class without the attribute; now the student's class is named and --reference-init gives the
    reference its own arguments, with which the check runs and passes."""
    f = tmp_path / "affine.py"
    f.write_text(AFFINE)
    args = ["check", f"{f}::Affine", "--input-shape", "6,4", "--init", '{"d_in": 4, "d_out": 3}', "--reference",
            "manualprop.Linear"]
    p = run_here(*args)
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "of Affine: its constructor needs 'in_features' and Affine has no attribute" in text, text
    assert """--reference-init '{"in_features": ..., "out_features": ...}'""" in text, text
    p = run_here(*args, "--reference-init", '{"in_features": 4, "out_features": 3}')
    assert p.returncode == 0 and "PASS: Affine" in both(p) and "forward output match" in both(p), both(p)


def test_indices_on_a_float_layer_point_at_indices(tmp_path):
    """M8: a ReLU checked with --indices 5 returned integers and was told to remove a cast it does not have."""
    f = tmp_path / "layers.py"
    f.write_text(AFFINE)
    p = run_here("check", f"{f}::ReLU", "--input-shape", "4,3", "--indices", "5")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "--indices 5 made input 0 integer indices" in text and "check it without --indices" in text, text
    assert "remove the cast" not in text, text


def test_a_per_call_mask_is_no_hidden_weight(tmp_path):
    """M9: a dropout drawing from a generator made in each forward got a WARNING calling self.mask a weight
    "inside an object gradcheck does not read weights from"; a per-call random mask is no weight."""
    f = tmp_path / "layers.py"
    f.write_text(AFFINE)
    p = run_here("check", f"{f}::DropoutNewRng", "--input-shape", "6,5")
    text = " ".join(both(p).split())
    assert p.returncode == 3 and "non-deterministic" in text, text
    assert "does not read weights from" not in text and "WARNING: forward reads self.mask" not in text, text


def test_low_findings_wording():
    """LOW: an empty shape between ';' is refused (was dropped silently); a list item's path is written as Python
    (self.layers[0].dW, not self.layers.0.dW); a factor below 1 reads as "9 times too small", naming H*W."""
    import pytest

    from gradcheck import _validation as V
    from gradcheck._adapters import undecided_text
    from gradcheck.diagnose import name_signature
    from gradcheck.errors import UsageError

    with pytest.raises(UsageError, match=r"shape 1 \(counting from 0\) between the ';' is empty"):
        V.parse_input_shapes("6,4;;4")
    assert V.parse_input_shapes("6,4;4;4") == [(6, 4), (4,), (4,)]
    text = undecided_text(["layers.0.W"])
    assert "self.layers[0].dW" in text and "self.layers[0]._W" in text and "layers.0.dW" not in text, text
    n = np.random.default_rng(0).standard_normal(4)
    f = name_signature("dbeta", n / 9, n, n_batch=2, y_size=72)
    assert f.code == "factor" and "0.111111 times the correct gradient: a constant factor is wrong somewhere (9 " \
        "times too small; 9 = the 9 output positions per sample, e.g. H*W" in f.message, f.message


class _ComplexOut:
    def forward(self, x):
        return x.astype(np.complex128) * (1 + 1j)

    def backward(self, dy):
        return dy


class _TransposedDx:
    def forward(self, x, training=False):
        return x * 2

    def backward(self, dy):
        return (dy * 2).T


def test_hostile_outputs_wording():
    """LOW: gradcheck's own cast of a complex Y warned ComplexWarning, shown as the student's output; an activation's
    transposed dX was advised to swap a Linear's dW product."""
    import warnings

    from gradcheck import _adapters

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _adapters.adapt(_ComplexOut(), [np.ones((3, 4))])  # raised ComplexWarning before
    d = diagnose_layer(_TransposedDx(), (3, 4))
    said = " ".join(d.sentence().split())
    assert "transposed" in said and "a .T too many" in said and "dW = dY.T @ X" not in said, said


SEED = "tests/buggy_layers/session21.py"


def test_seed_style_constant_weights_are_also_checked_at_drawn_values():
    """Session 21 (session 20's leftover 2): a seed-style layer (self.W without a gradient, backward(dY) -> dX alone)
    whose W starts all ones (square: W.T == W) passed with dX = dY @ W; at zeros it was "NOT CHECKED: every entry
    dropped" (a mask story for a weight). Both now FAIL at the drawn values, drawn in the sandbox's child and put
    back; the header says which weight was constant; the correct twins PASS."""
    for cls, words in (("SeedLinearOnesNoT", "(ones), which can hide terms: also checked at drawn values"),
                       ("SeedLinearZerosNoT", "(zeros), which can hide terms: also checked at drawn values")):
        p = run_here("check", f"{SEED}::{cls}", "--input-shape", "5,4")
        text = " ".join(both(p).split())
        assert p.returncode == 1 and f"FAIL: {cls}" in text, text
        assert f"weight W (no gradient: it only enters dX) is constant at init {words}" in text, text
        assert "dX multiplies dY by the transposed weight" in text, text
        assert ("FAILS at the drawn ones" if "Ones" in cls else "at its initial values the output is 0 for any "
                "input (no check), so the table and verdict below are at the drawn values") in text, text
    for cls in ("SeedLinearOnes", "SeedLinearZeros"):
        p = run_here("check", f"{SEED}::{cls}", "--input-shape", "5,4")
        text = " ".join(both(p).split())
        assert p.returncode == 0 and f"PASS: {cls}" in text and "constant at init" in text, text


def test_seed_weights_drawn_in_process_are_put_back():
    """The in-process read (the adapted layer's seed weights): drawn for the check, the student's zeros put back."""
    layer, X, kw = load("session21.py::SeedLinearZerosNoT")
    d = diagnose_layer(layer, X, **kw)
    assert not d.passed and d.drawn == ["W"] and d.drawn_seed == ["W"] and d.drawn_only, d.report()
    assert d.codes == ["transposed-weight"] and np.all(layer.obj.W == 0)
    assert not diagnose_layer(*load("session21.py::SeedLinearOnesNoT")[:2], drawn=False).drawn
    assert diagnose_layer(*load("session21.py::SeedLinearOnesNoT")[:2], drawn=False).passed  # as before
