"""tester15's grader findings (session 15): M1 a float32 forward, M2/M7 how parameters are named, M3 a signal,
M8 folder sizes, L1 a folder named layers.py, L5 the examples' policy marker, L6 --json's folder.

Plain (unsandboxed) layers where a check is one call; the sandbox only where the finding lives there.
"""

import numpy as np
from student_layers import StudentLinear

from gradcheck.grading.checks import _distinct, layer_forward, layer_gradients
from manualprop import Linear as RefLinear

X = np.random.default_rng(1).standard_normal((8, 5))


class Float32Inside(StudentLinear):
    """The reference's backward, exact; forward computed in float32 and cast back (tester15 M1)."""

    def __init__(self):
        super().__init__(5, 3)

    def forward(self, X, training=False):
        self.X = X
        W, b = self.params["W"].astype(np.float32), self.params["b"].astype(np.float32)
        return (X.astype(np.float32) @ W.T + b).astype(np.float64)

    def backward(self, dY):
        self.grads["W"], self.grads["b"] = dY.T @ self.X, dY.sum(axis=0)
        return dY @ self.params["W"]


def test_a_float32_forward_gets_checks_diagnosis_not_a_question_about_determinism():
    """M1: dX, dW, db equal to the reference's failed as 'disagrees with central differences ... Is the layer
    deterministic?'; check says FAIL: wrong precision of Y, values rounded to float32. The grader says that."""
    v = layer_gradients(Float32Inside(), X, RefLinear(5, 3), parts={"dX": 2, "dW": 2, "db": 2}, seed=1)
    assert [p.passed for p in v.parts] == [False] * 3
    for p in v.parts:
        assert p.message.startswith(f"{p.name} matches the reference's, but it cannot be confirmed")
        assert "forward returns float64 values rounded to float32" in p.message and "deterministic" not in p.message
    fwd = layer_forward(Float32Inside(), X, RefLinear(5, 3))
    got, _, want = fwd.parts[0].message.rpartition(": got ")[2].rstrip(".").partition(", expected ")
    assert got != want and float(got) != float(want)  # printed identical (-2.10883 twice) before


def test_two_numbers_are_printed_with_the_digits_that_tell_them_apart():
    assert _distinct(-2.108829, -2.10883) == ("-2.108829", "-2.10883")
    assert _distinct(1.0, 1.0) == ("1", "1") and _distinct(0.5, 2.0) == ("0.5", "2")
    a, b = _distinct(1.0, 1.0 + 2.0 ** -52)
    assert a != b and float(b) == 1.0 + 2.0 ** -52


def test_an_exit_code_of_128_plus_a_signal_under_bubblewrap_is_that_signal():
    """M3: a segfault in the namespaces sandbox (bwrap exits 139 = 128 + SIGSEGV) was read as 'exit code 139 ...
    Does the code call sys.exit, exit() or os._exit?'; the signal is named as for a child run directly (-11)."""
    from types import SimpleNamespace

    from gradcheck.sandbox import Sandbox

    bwrapped, direct = SimpleNamespace(isolation_level="namespaces+uid"), SimpleNamespace(isolation_level="none")
    assert Sandbox._signal_of(bwrapped, 139) == 11 and Sandbox._signal_of(direct, -11) == 11
    assert Sandbox._signal_of(bwrapped, -9) == 9 and Sandbox._signal_of(bwrapped, 137) == 9
    assert Sandbox._signal_of(direct, 139) is None  # no wrapper: an exit code the code chose
    assert Sandbox._signal_of(bwrapped, 3) is None and Sandbox._signal_of(bwrapped, 255) is None
