"""newuser37 F7: ``gradcheck check --training --reference manualprop.Dropout`` PASSed a dropout scaling its kept
entries by 1/p (E[Y] = X (1-p)/p), at p = 0.5, where 1/p = 1/(1-p), and at p = 0.2: its forward and backward agree
with each other, the gradient check holds its mask, and the reference, drawing its own, was not compared. Now the
training output's mean is compared with the reference's over about 4000 entries (:mod:`gradcheck._random_mean`), as
built and, at p = 0.5, with both built at p = 0.3; a correct inverted dropout PASSes with the comparison said.
"""

import pytest
from test_cli import check_source

DROPOUT = """
import numpy as np

class Dropout:
    def __init__(self, p=0.5, seed=None):
        self.p = p
        self.rng = np.random.default_rng(seed)

    def forward(self, X, training=True):
        if not training or self.p == 0:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask
"""
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
