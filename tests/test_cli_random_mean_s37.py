"""newuser37 F7: ``gradcheck check --training --reference manualprop.Dropout`` PASSed a dropout scaling its kept
entries by 1/p (E[Y] = X (1-p)/p), at p = 0.5, where 1/p = 1/(1-p), and at p = 0.2: its forward and backward agree
with each other, the gradient check holds its mask, and the reference, drawing its own, was not compared. Now the
training output's mean is compared with the reference's over about 4000 entries (:func:`gradcheck.diagnose.random_mean_finding`), as
built and, at p = 0.5, with both built at p = 0.3; a correct inverted dropout PASSes with the comparison said.
"""

import inspect

import pytest
from buggy_layers.switches import Drop
from test_cli import check_source

DROPOUT = "import numpy as np\n\n\n" + inspect.getsource(Drop).replace("class Drop:", "class Dropout:")  # inverted
SCALE = "/ (1 - self.p)"
ARGS = ("--input-shape", "6,5", "--training", "--reference", "manualprop.Dropout")


def _check(tmp_path, source, p):
    init = f'{{"p": {p}}}'
    return check_source(tmp_path, source, "Dropout", "--init", init, "--reference-init", init, *ARGS)


@pytest.mark.parametrize("p", ["0.5", "0.2"])
def test_a_dropout_scaling_by_one_over_p_fails_naming_the_means(tmp_path, p):
    assert SCALE in DROPOUT
    code, out = _check(tmp_path, DROPOUT.replace(SCALE, "/ self.p"), p)
    text = " ".join(out.split())
    assert code == 1, text  # (before: exit 0, "reference manualprop.Dropout was not compared: the forward is random")
    assert "FAIL: Dropout: a random forward's mean differs from the reference" in text, text
    at = " at p=0.3" if p == "0.5" else ""
    scale = "3.333" if p == "0.5" else "5"  # 1/p where the reference's 1/(1-p) is 1.429, 1.25
    assert f"in training mode, Dropout's output{at} averages" in text, text
    assert f"of the entries, scaled by {scale}, manualprop.Dropout keeps" in text, text
    assert "Inverted dropout scales the kept entries by 1/(1 - p)" in text, text


def test_a_correct_inverted_dropout_passes_with_the_means_compared(tmp_path):
    code, out = _check(tmp_path, DROPOUT, "0.5")
    text = " ".join(out.split())
    assert code == 0, text
    assert ("reference: the training output's mean compared with manualprop.Dropout's over 4000 entries, within 6 "
            "standard errors (as built: ") in text and "; at p=0.3: " in text, text
    assert "was compared in training mode by the output's mean alone" in text, text


def test_a_dropout_that_does_not_scale_at_all_fails(tmp_path):
    """Classic (non-inverted) dropout in training (the scale left to eval time) against the inverted reference."""
    code, out = _check(tmp_path, DROPOUT.replace(SCALE, ""), "0.2")
    text = " ".join(out.split())
    assert code == 1, text
    assert "of the entries, scaled by 1, manualprop.Dropout keeps" in text, text


KEEP = """
import numpy as np

class Dropout:
    def __init__(self, keep_prob=0.5):
        self.keep_prob = keep_prob

    def forward(self, X, training=True):
        if not training:
            return X
        self.mask = (np.random.rand(*X.shape) < self.keep_prob) / SCALE
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask
"""


def test_a_keep_prob_dropout_dividing_by_one_minus_keep_prob_fails_at_the_other_value(tmp_path):
    """verify37 F1: keep_prob=0.5 with / (1 - keep_prob) PASSed: the reference (manualprop.Dropout takes p, not
    keep_prob) could not be built at keep_prob=0.3, and that comparison was skipped; it is made against the reference
    as built, whose mean is 1 at any p. The right / keep_prob PASSes."""
    args = ("--input-shape", "8,5", "--training", "--reference", "manualprop.Dropout")
    code, out = check_source(tmp_path, KEEP.replace("SCALE", "(1 - self.keep_prob)"), "Dropout", *args)
    text = " ".join(out.split())
    assert code == 1, text  # (before: exit 0)
    assert "Dropout's output at keep_prob=0.3 averages" in text, text
    code, out = check_source(tmp_path, KEEP.replace("SCALE", "self.keep_prob"), "Dropout", *args, file="right.py")
    assert code == 0, " ".join(out.split())


SPATIAL = """
import numpy as np

class Dropout2d:
    def __init__(self, p=0.5):
        self.p = p

    def forward(self, X, training=True):
        if not training:
            return X
        self.mask = (np.random.rand(X.shape[0], X.shape[1], 1, 1) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask
"""


@pytest.mark.parametrize("seed", ["1", "3", "5"])
def test_a_correct_spatial_dropout_passes(tmp_path, seed):
    """verify37 F3: one mask per (sample, channel) FAILed at 6 of seeds 0-9 ("7 standard errors"): the standard error
    took ~4000 entries as independent draws where ~250 masks were drawn. It is read from per-sample means now."""
    code, out = check_source(tmp_path, SPATIAL, "Dropout2d", "--input-shape", "2,3,8,8", "--training", "--reference",
                             "manualprop.Dropout", "--seed", seed)
    assert code == 0, " ".join(out.split())  # (before: exit 1 at seeds 1, 3, 5)
