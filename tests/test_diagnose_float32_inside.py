"""A forward that computes in float32 and casts back to float64 (a new-user tester's U5, session 8):
its values are float32 numbers, whose round-off (about 6e-8 relative) swamps a central difference
at h = 6e-6, so the check cannot resolve the gradient. Before, tanh got "at a kink" and "no known
bug pattern"; now the structural probe names the precision and stops, as it does for a float32 Y."""

import numpy as np
import pytest

from gradcheck.diagnose import _float32_values, diagnose_layer


class Tanh32:
    def forward(self, X, training=False):
        self.Y = np.tanh(X.astype(np.float32)).astype(np.float64)
        return self.Y

    def backward(self, dY):
        return dY * (1 - self.Y ** 2)


class Tanh64(Tanh32):
    def forward(self, X, training=False):
        self.Y = np.tanh(X)
        return self.Y


def test_float32_inside_is_named_and_stops():
    d = diagnose_layer(Tanh32(), (4, 3), name="Tanh32")
    assert not d.passed
    codes = [f.code for f in d.findings if f.severity == "error"]
    assert codes == ["float32"], codes
    assert "rounded to float32" in d.findings[0].message or any(
        "rounded to float32" in f.message for f in d.findings)
    assert not any(f.code in ("wrong-values", "kink") for f in d.findings)


def test_float64_forward_passes():
    assert diagnose_layer(Tanh64(), (4, 3), name="Tanh64").passed


@pytest.mark.parametrize("Y, expected", [
    (np.tanh(np.linspace(-1, 1, 12)).astype(np.float32).astype(np.float64), True),
    (np.tanh(np.linspace(-1, 1, 12)), False),
    (np.round(np.linspace(-5, 5, 12)), False),  # integer values are float32 numbers too: not a sign
    (np.array([0.5, 0.25, 1.5]), False),  # fewer than 4 non-integer values: no verdict
])
def test_float32_values_rule(Y, expected):
    assert _float32_values(Y, [np.zeros(2)]) is expected
    assert _float32_values(Y, [np.zeros(2, dtype=np.float32)]) is False  # float32 inputs: expected
