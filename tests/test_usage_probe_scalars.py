"""Tester 13 M4: the usage probe (which arrays forward reads) moved every number, a dropout's ``self.rate`` too:
``np.random.binomial(1, p)`` with p past 1 raised, and the header said "no gradient found (found without measuring
which arrays forward uses: ... p < 0, p > 1 or p is NaN)". Scalars (floats, 0-d arrays) are not moved: a float is a
parameter only when backward sets its gradient (PReLU's alpha is still found)."""

import pytest
from test_cli import both, run, student

DROPOUT = """
import numpy as np

class Layer_Dropout:  # Neural Networks from Scratch
    def __init__(self, rate):
        self.rate = RATE

    def forward(self, inputs, training):
        self.inputs = inputs
        if not training:
            self.output = inputs.copy()
            self.binary_mask = np.ones_like(inputs)
            return
        self.binary_mask = np.random.binomial(1, self.rate, size=inputs.shape) / self.rate
        self.output = inputs * self.binary_mask

    def backward(self, dvalues):
        self.dinputs = dvalues * self.binary_mask
"""


@pytest.mark.parametrize("rate", ["1 - rate", "np.array(1 - rate)"])
def test_a_dropout_rate_is_not_moved_by_the_usage_probe(tmp_path, rate):
    path = student(tmp_path, DROPOUT.replace("RATE", rate), f"m4_{len(rate)}.py")
    p = run("check", f"{path}::Layer_Dropout", "--input-shape", "4,3", "--init", '{"rate": 0.5}')
    out = both(p)
    assert "found without measuring" not in out and "p > 1" not in out, out
    assert "protocol: a class with forward/backward and no parameters" in out, out
    assert p.returncode == 0 and "PASS: Layer_Dropout" in out, out
