"""`gradcheck check --loss` (session 16, issue 10 leftovers): the header never calls a factor of 1 a bug (tester15b
M2); the eps NOTE names only the loss's own constants, says "its" only for a forward with one and "in a denominator"
only where there is one (tester15b M1); an eps larger than the tolerance is not read as 0 (FAIL, named); a backward
whose eps differs from forward's is named (tester15b L3). Each test fails on the code before its fix."""

import json

import numpy as np
from test_cli import both, run_here, student

from gradcheck import _adapters


class _NearlyKL:
    """KL(a || b) with backward 1.003 times dL/da: the directional test fails (relative 1.5e-3), the factor fits."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return np.sum(a * np.log(a / b)) / a.shape[0]

    def backward(self):
        return 1.003 * (np.log(self.a / self.b) + 1) / self.a.shape[0]


def test_a_factor_of_one_is_never_called_a_bug():
    """Before: "backward's result is 1 times the central differences of L with respect to a (a sign or a constant
    factor wrong)"."""
    rng = np.random.default_rng(0)
    p, q = rng.uniform(0.1, 0.9, (6, 4)), rng.uniform(0.1, 0.9, (6, 4))
    why = _adapters.BoundLoss(_NearlyKL(), (q, p), None).info["by_role"]
    assert "close to the central differences of L with respect to a (a factor of 1.003: no sign or factor" in why, why
    assert "1 times" not in why and "constant factor wrong" not in why, why
