"""Session 12 (diag12, Z6): the header said "mode: forward has no training switch: one mode" for a forward with no
training switch that draws a dropout mask on every call (a class, or a CS231n pair whose dropout_param has no
'mode' and defaults to 'train'): its training behaviour ran, held fixed. The header now says the mode that ran."""

import pytest
from test_cli import both, run, run_here, student

LAYERS = '''
import numpy as np


class AlwaysDrop:
    """no switch: a mask drawn on every call from a stored generator"""
    def __init__(self, p=0.5):
        self.p, self.rng = p, np.random.default_rng(0)

    def forward(self, X):
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class Scale:
    def forward(self, X):
        return 2 * X

    def backward(self, dY):
        return 2 * dY


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param.get("mode", "train")
    mask = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) >= p) / (1 - p)
    return (x * mask if mask is not None else x), (dropout_param, mask)


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    return dout * mask if mask is not None else dout
'''

TRAINING = ("mode: training (forward has no training switch, and it draws a random mask on every call: its "
            "training behaviour ran, the draws held fixed for the check)")


@pytest.mark.parametrize("name, init", [("AlwaysDrop", None), ("dropout", '{"dropout_param": {"p": 0.5}}')])
def test_a_random_forward_without_a_switch_is_said_to_run_in_training(tmp_path, name, init):
    p = run_here("check", f"{student(tmp_path, LAYERS)}::{name}", "--input-shape", "4,3", *(["--init", init] if init else []))
    out = both(p)
    assert p.returncode == 0, out
    assert TRAINING in out and "mode: eval" not in out, out


def test_a_deterministic_forward_without_a_switch_says_one_mode(tmp_path):
    p = run("check", f"{student(tmp_path, LAYERS)}::Scale", "--input-shape", "4,3")  # the console script
    out = both(p)
    assert p.returncode == 0 and "mode: forward has no training switch: one mode" in out, out
