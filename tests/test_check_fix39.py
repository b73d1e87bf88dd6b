"""Session 39's fixes of ``gradcheck check`` (verify38 F1-F3, F10; newuser38 F6-F8, F10)."""

import inspect
import re

import numpy as np
import pytest
from test_cli import check_source
from test_cli_loss_mode_s25 import TANH
from test_dropout_conventions import CS231N
from test_newuser38 import NoShiftCE

import gradcheck
import manualprop as mp
from gradcheck.errors import UsageError

CS231N_DROPOUT = CS231N.replace("BACKWARD", "dout * mask").replace("< p) / p", "< p) SCALE")
PAIR_INIT = ("--init", '{"dropout_param": {"p": 0.8, "mode": "train", "seed": 3}}')


@pytest.mark.parametrize("scale", ["", "/ p"])
def test_a_cs231n_dropout_against_a_reference_built_at_its_keep_probability_is_a_usage_error(tmp_path, scale):
    """verify38 F1: CS231n's dropout_param p (0.8) keeps 80%; manualprop.Dropout(p=0.8) drops 80%. The pair without
    1/p PASSed at seed 0 (means 0.80 and 1.00 within 6 standard errors of the reference's scale-5 mean); the kept
    shares, observed exactly, are now compared first: a usage error naming the convention and the rate, at any seed."""
    code, out = check_source(tmp_path, CS231N_DROPOUT.replace("SCALE", scale), "dropout", "--input-shape", "8,5",
                             "--seed", "0", *PAIR_INIT, "--reference", "manualprop.Dropout", "--reference-init",
                             '{"p": 0.8}')
    text = " ".join(out.split())
    assert code == 2, text  # (before: the unscaled pair exit 0, PASS; the right one PASS, no word of the mis-built p)
    assert "the reference drops 80% of the entries in training (built with p=0.8), dropout keeps 80%: " \
           "manualprop.Dropout's p is the drop probability (0.2 here)" in text, text
    assert "--reference-init '{\"p\": 0.2}'" in text, text


def test_the_reference_init_hint_of_a_dropout_says_its_p_is_the_drop_probability(tmp_path):
    code, out = check_source(tmp_path, CS231N_DROPOUT.replace("SCALE", ""), "dropout", "--input-shape", "8,5",
                             *PAIR_INIT, "--reference", "manualprop.Dropout")
    text = " ".join(out.split())
    assert code == 2, text
    assert "Give the reference its own arguments with --reference-init '{\"p\": ...}'" in text, text
    assert "Dropout's p is the probability of DROPPING an entry" in text, text
    assert "CS231n's dropout_param['p'] and keep_prob are the probability of keeping one" in text, text


MASKED_ATTENTION = """
import numpy as np


class MaskedAttention:
    def forward(self, Q, K, V, mask):
        S = Q @ K.transpose(0, 2, 1) / np.sqrt(Q.shape[-1])
        S = np.where(mask.astype(bool), S, -1e9)
        A = np.exp(S - S.max(axis=-1, keepdims=True))
        A /= A.sum(axis=-1, keepdims=True)
        self.cache = (Q, K, V, A, mask)
        return A @ V

    def backward(self, dY):
        Q, K, V, A, mask = self.cache
        dA = dY @ V.transpose(0, 2, 1)
        dS = np.where(mask.astype(bool), A * (dA - (dA * A).sum(axis=-1, keepdims=True)), 0.0) / np.sqrt(Q.shape[-1])
        return dS @ K, dS.transpose(0, 2, 1) @ Q, A.transpose(0, 2, 1) @ dY
"""


def test_a_reference_whose_forward_takes_other_inputs_is_a_usage_error(tmp_path):
    """verify38 F3: Q, K, V and an integer mask given to manualprop.ScaledDotProductAttention (forward(Q, K, V,
    training=False)) raised "got multiple values for argument 'training'" as a traceback from gradcheck's internals."""
    code, out = check_source(tmp_path, MASKED_ATTENTION, "MaskedAttention", "--input-shape", "2,4,3;2,5,3;2,5,6;2,4,5",
                             "--indices", "3:2", "--reference", "manualprop.ScaledDotProductAttention")
    text = " ".join(out.split())
    assert code == 2, text  # (before: exit 1 and a TypeError traceback)
    assert "Traceback" not in text, text
    assert "--reference manualprop.ScaledDotProductAttention: its forward takes 3 inputs (Q, K, V), " \
           "MaskedAttention's 4 (Q, K, V, mask): the reference cannot compute MaskedAttention's output, having no " \
           "mask argument. Check without --reference" in text, text


SOFTMAX = """
import numpy as np


class Softmax:
    def forward(self, X):
        e = np.exp(X SHIFT)
        self.Y = e / e.sum(axis=1, keepdims=True)
        return self.Y

    def backward(self, dY):
        return self.Y * (dY - (dY * self.Y).sum(axis=1, keepdims=True))
"""


@pytest.mark.parametrize(("shift", "failing"), [("", "X + 1000"), ("- X.max()", "X +/- 1000 by row"),
                                                ("- X.max(axis=1, keepdims=True)", None)])
def test_a_softmax_layer_checked_against_a_reference_is_compared_at_large_inputs_too(tmp_path, shift, failing):
    """newuser38 F10: a Softmax layer without the max shift PASSed --reference manualprop.Softmax (compared at the
    drawn N(0, 1) input alone; NaN at inputs of 1000); one shifted by the global max is caught by rows shifted apart
    (verify38 F10). The probe runs on a copy of the sandboxed layer (its forward and backward the copy's)."""
    code, out = check_source(tmp_path, SOFTMAX.replace("SHIFT", shift), "Softmax", "--input-shape", "4,5",
                             "--reference", "manualprop.Softmax")
    text = " ".join(out.split())
    if failing is None:
        # the reference's VJP is computed without cancellation (softmax47), the student's textbook one is not:
        # they agree to round-off, no longer bit for bit (the table's manual~ref column)
        found = re.search(r"dX \(X \+/- 1000 by row\) \(4, 5\) - (\S+) \S+ all 20 ok", text)
        assert code == 0 and found and float(found[1]) <= 1e-13, text
        return
    assert code == 1, text  # (before: exit 0, PASS)
    assert f"FAIL: Softmax: forward mismatch in Y ({failing})" in text, text
    assert f"at {failing} (inputs of that size come with training), Y, dX differ from the reference's (NaN or inf)" \
           in text and "subtract each row's max first" in text, text


def test_a_softmax_cross_entropy_shifted_by_the_global_max_fails_at_rows_shifted_apart():
    """verify38 F10: y_pred +- 1000 shifts every row alike, which a global max absorbs; rows +1000 and -1000 in turn
    lie 2000 apart: exp of the lower rows underflows to 0, log(0) = -inf."""
    class GlobalShiftCE(NoShiftCE):
        def forward(self, y_true, y_pred):
            return super().forward(y_true, y_pred - y_pred.max())

    rng = np.random.default_rng(0)
    y, z = rng.integers(0, 3, size=4), rng.standard_normal((4, 3))
    with np.errstate(all="ignore"):
        res = gradcheck.check_loss(GlobalShiftCE(), y, z, twin=None, reference=mp.SoftmaxCrossEntropy())
    failing = sorted(r.tensor for r in res.records if not r.passed)
    assert failing == ["L (y_pred +/- 1000 by row)", "dy_pred (y_pred +/- 1000 by row)"], failing  # (before: PASS)


class _ClassicKeep:
    """Classic dropout whose p is the KEEP probability (stored as ``keep``): Y = X * mask in training, p X in eval."""

    def __init__(self, p=0.8, seed=0):
        self.keep, self.rng = p, np.random.default_rng(seed)

    def forward(self, X, training=True):
        self.mask = self.rng.random(X.shape) < self.keep if training else None
        return X * self.mask if training else X * self.keep

    def backward(self, dY):
        return dY * self.mask if self.mask is not None else dY * self.keep


@pytest.mark.parametrize("reference", [False, True])
def test_classic_dropout_is_named_with_its_keep_rate_with_or_without_a_reference(reference):
    """verify38 F2: the fix said "mask / (1 - p)", wrong for a p that is the keep probability (0.8 here: 1/(1-p) = 5,
    not 1.25); it now says the scale in numbers, mask / 0.8, and both conventions. With --reference
    manualprop.Dropout the eval output 0.8 X against the reference's X was a generic "other-function" mismatch."""
    d = gradcheck.diagnose_layer(_ClassicKeep(0.8), (20, 10), reference=mp.Dropout(0.2, rng=0) if reference else None)
    assert not d.passed and d.codes == ["classic-dropout"], d.codes  # (before, with the reference: other-function)
    text = " ".join(d.sentence().split())
    assert "mask / 0.8, the keep probability (mask / (1 - p) for a drop probability p, PyTorch's; mask / p for a " \
           "keep probability p, CS231n's)" in text, text


REPEAT = """
import numpy as np


class Repeat:
    def __init__(self, repeats=50):
        self.r = repeats

    def forward(self, X):
        return np.repeat(X, self.r, axis=1)

    def backward(self, dY):
        return dY.reshape(dY.shape[0], -1, self.r).sum(axis=2)
"""


def test_a_check_made_long_by_its_output_says_so_up_front(tmp_path, monkeypatch):
    """newuser38 F6: 24e6 outputs from a 4x30 input took 258 s without a word (the plan counted the input's 120
    elements alone). Here, with LONG_CHECK forced between the input's plan (390 x 120) and the output's (390 x 6000),
    the line names the output's elements and the forwards planned."""
    from gradcheck import check_command as cc

    monkeypatch.setattr(cc, "LONG_CHECK", 1_000_000)
    code, out = check_source(tmp_path, REPEAT, "Repeat", "--input-shape", "4,30")
    text = " ".join(out.split())
    assert code == 0, text
    assert "gradcheck: a long check: Repeat's output on its input of 120 elements has 6,000 elements, and --mode " \
           "fast runs up to about 390 forwards, each computing the whole output. A smaller output finds the same " \
           "bugs" in text, text  # (before: no word)


SHARED_ACTIVATION = """
import numpy as np


class Linear:
    def __init__(self, n_in, n_out, rng):
        self.params = {"W": rng.standard_normal((n_in, n_out)) * 0.5, "b": rng.standard_normal(n_out) * 0.1}
        self.grads = {}

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return dY @ self.params["W"].T


""" + TANH.partition("import numpy as np\n")[2] + """

class MLPShared:
    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.l1, self.l2, self.act = Linear(5, 4, rng), Linear(4, WIDTH, rng), Tanh()

    def forward(self, X):
        h = self.act.forward(self.l1.forward(X))
        return self.act.forward(self.l2.forward(h))

    def backward(self, dY):
        dY = self.l2.backward(self.act.backward(dY))
        return self.l1.backward(self.act.backward(dY))
"""
REUSED = "forward calls self.act twice (line 36, 37), one object for every use: one layer object keeps one cache"


@pytest.mark.parametrize(("width", "code"), [("4", 1), ("3", 3)])
def test_one_activation_object_used_twice_in_forward_is_named(tmp_path, width, code):
    """newuser38 F8: self.act after l1 and after l2 (backward's second use reads the second call's cache): FAIL in dX,
    dl1.W, dl1.b with "no known bug pattern"; with widths that differ, backward raised (exit 3) naming the right line
    alone. Both now name the reuse."""
    code_, out = check_source(tmp_path, SHARED_ACTIVATION.replace("WIDTH", width), "MLPShared", "--input-shape", "6,5")
    text = " ".join(out.split())
    assert code_ == code, text
    assert (f"diagnosis: {REUSED}" if code == 1 else f"Likely why: {REUSED}") in text, text  # (before: not said)


def test_one_layer_object_twice_in_a_sequential_is_named():
    """Lesson 07's "one layer object used twice in the chain" (its own example), diagnosed in process."""
    relu = mp.ReLU()
    shared = mp.Sequential(mp.Linear(4, 5, rng=1), relu, mp.Linear(5, 5, rng=2), relu, mp.Linear(5, 2, rng=3))
    d = gradcheck.diagnose_layer(shared, (6, 4))
    assert d.codes[0] == "reused-sublayer", d.codes  # (before: wrong-values alone, "no known bug pattern")
    assert d.sentence().startswith("FAIL: Sequential: Sequential.layers holds one object at layers[1] and layers[3]")


def test_an_autoprop_linear_says_where_its_weights_are_when_read_by_keras_names():
    """newuser38 F7: TF's Hessian example reads layer1.kernel; ap.layers.Linear(5, 8).kernel (and .W) raised a bare
    "'Linear' object has no attribute 'kernel'". No alias: an AttributeError naming layer.variables['W'], its shape
    (out, in) and Keras's kernel as its transpose."""
    import autoprop as ap

    layer = ap.layers.Linear(5, 8)
    with pytest.raises(AttributeError, match=r"layer\.variables, by name: 'W' of shape \(8, 5\) \(out_features, "
                                             r"in_features\), the transpose of Keras's kernel \(in, out\) = \(5, 8\)"):
        layer.kernel  # noqa: B018 - the attribute read is the test
    with pytest.raises(AttributeError, match=r"read layer\.variables\['W'\] \(all of them: W, b\)"):
        layer.W  # noqa: B018
    assert not hasattr(layer, "kernel") and getattr(layer, "foo", None) is None


def test_a_dropout_at_odds_with_itself_fails_beside_a_reference_given_its_rate():
    """verify39 F5: a dropout dropping 60% and scaling by 1/(1 - 0.3), its reference given p=0.3 by the user, was a
    usage error ('not built at one rate'); its own scale says its rate is 0.3, so the share is its bug: a FAIL. A
    layer unbiased at another rate (or the keep/drop flip) is still the usage error."""
    from gradcheck.diagnose import random_mean_finding

    class Drop:
        def __init__(self, drop, scale, seed=0):
            self.drop, self.scale, self.rng, self.params, self.grads = drop, scale, np.random.default_rng(seed), {}, {}

        def forward(self, X, training=False):
            return X * (self.rng.random(X.shape) >= self.drop) * self.scale if training else X

        def backward(self, dY):
            return dY

    def found(layer):
        return random_mean_finding([(layer, mp.Dropout(0.3, rng=1), "", True)], "Drop", (6, 5), 0,
                                   "manualprop.Dropout", given_rate=True)

    assert found(Drop(0.6, 1 / 0.7)).code == "random-mean"  # before: UsageError
    with pytest.raises(UsageError, match="not built at one rate"):
        found(Drop(0.5, 2.0))  # unbiased at 0.5: the reference's rate is the likely slip
    with pytest.raises(UsageError, match="is the drop probability"):
        found(Drop(0.7, 1.0))  # keeps 30% where the reference drops 30%: the convention


def test_a_loss_value_at_large_logits_is_said_as_a_value_on_the_verdict_line(tmp_path):
    """verify39 F6: the FAIL line said "gradient mismatch in L (y_pred + 1000)": L there is the loss's value."""
    src = "import numpy as np\n\n\n" + inspect.getsource(NoShiftCE)  # (forward(y_true, y_pred): by its names)
    code, out = check_source(tmp_path, src, "NoShiftCE", "--input-shape", "6,5", "--loss", "--targets", "labels",
                             "--reference", "manualprop.SoftmaxCrossEntropy")
    text = " ".join(out.split())
    assert code == 1 and ("FAIL: NoShiftCE: the loss values L (y_pred + 1000), L (y_pred - 1000) differ from the reference's; "
                          "gradient mismatch in dy_pred (y_pred + 1000), dy_pred (y_pred - 1000).") in text, text
