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
    assert codes == ["float32-values"], codes  # its own code (session 9): "float32" is a float32 array
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


# Session 9 (the tester's V11a): only PART of a float64 output carries float32 round-off, so the probe above
# (every value a float32 number) does not fire; the check failed with "no known bug pattern" and a list of
# elements "at a kink". Now the diagnosis says precision is lost inside forward (:func:`_float32_inside`).


class Swish32:
    """x * sigmoid(x) with the exponential in float32: Y is float64 and its values are not float32 numbers."""

    def forward(self, X, training=False):
        self.X = X
        return X * (1 / (1 + np.exp(-X, dtype=np.float32)))

    def backward(self, dY):
        s = 1 / (1 + np.exp(-self.X))
        return dY * (s + self.X * s * (1 - s))


class TanhHalf32:
    def forward(self, X, training=False):
        self.X, Y = X, np.tanh(X)
        Y[:, :2] = np.tanh(X[:, :2], dtype=np.float32)  # two columns of Y in float32
        return Y

    def backward(self, dY):
        return dY * (1 - np.tanh(self.X) ** 2)


class LinearW32:
    """X @ W with W cast to float32: exact in X (dX passes), but dW's central differences are float32 noise."""

    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((5, 3))}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].astype(np.float32)

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T


@pytest.mark.parametrize("cls, shape, what", [(Swish32, (4, 5), ""), (TanhHalf32, (4, 5), ""),
                                               (LinearW32, (4, 5), " and parameters")])
def test_float32_in_part_of_forward_is_named_not_a_kink(cls, shape, what):
    d = diagnose_layer(cls(), shape, name=cls.__name__)
    assert not d.passed
    assert d.codes == ["float32-inside"], d.report()
    s = d.sentence()
    assert f"forward loses precision inside for a float64 input: moving the inputs{what} by a quarter" in s, s
    assert "so part of forward runs in float32" in s and "np.exp(x, dtype=np.float32)" in s, s
    assert "kink" not in s and "no known bug pattern" not in s, s


def test_float32_inside_probe_is_silent_on_float64_forwards():
    """Every planted-bug and correct layer of tests/buggy_layers computes in float64: the probe names none (three
    seeds), whatever its kinks (ReLU, max pool), normalisations and BLAS products."""
    from buggy_layers import CORRECT, EXPECTED, UNNAMED, is_loss, load
    PRECISION = ("float32-inside", "float16-inside", "piecewise-constant")  # session 10: float16, np.round

    from gradcheck import _validation as V
    from gradcheck.diagnose import _f64, _float32_inside

    named = []
    for key in [k for k in [*CORRECT, *UNNAMED, *(k for k, c in EXPECTED.items() if c not in PRECISION)]
                if not is_loss(k)]:  # a loss class has no input of its own (buggy_layers.diagnose_loss)
        layer, X, kw = load(key)
        for seed in range(3):
            inputs = V.layer_inputs(X, np.random.default_rng([seed, 3]), key)
            if _float32_inside(_f64(layer, kw.get("training", False)), inputs, V.layer_params(layer, key), seed):
                named.append((key, seed))
    assert named == []


def test_float32_inside_probe_restores_the_parameters():
    layer, X = LinearW32(), np.random.default_rng(1).standard_normal((4, 5))
    W = layer.params["W"].copy()
    from gradcheck.diagnose import _f64, _float32_inside

    assert _float32_inside(_f64(layer, False), [X], layer.params)["what"] == " and parameters"
    assert np.array_equal(layer.params["W"], W)


def test_fail_line_reads_the_finding_code_not_its_words():
    """The FAIL line tells a float64 Y with float32 round-off ("wrong precision") from a float32 array ("wrong
    dtype") by the finding's code, whatever its message says."""
    from gradcheck.check_command import _wrong_what
    from gradcheck.diagnose import Diagnosis, Finding

    def fail_line(code, tensor="Y"):
        return _wrong_what(Diagnosis("L", findings=[Finding(code, "any words at all", tensor)]))

    assert fail_line("float32-values") == "wrong precision of Y"
    assert fail_line("float32-inside") == "wrong precision of Y"
    assert fail_line("float32") == "wrong dtype of Y"
    assert fail_line("float32", "dW") == "wrong dtype of dW"


def test_cli_names_float32_inside(tmp_path):
    from test_cli import both, run

    f = tmp_path / "swish32.py"
    f.write_text("import numpy as np\n\n\n" + __import__("inspect").getsource(Swish32))
    p = run("check", f"{f}::Swish32", "--input-shape", "4,5")
    t = both(p)
    assert p.returncode == 1, t
    assert "diagnosis: forward loses precision inside for a float64 input" in t, t
    assert "no known bug pattern" not in t.split("diagnosis:")[1], t


class OffsetLayerNorm:
    """a float64 forward that adds 1e7 inside (33 bits cancelled): its round-off is float64's, not float32's"""

    def forward(self, X, training=False):
        X = X * 1e-3 + 1e7
        return (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + 1e-5)

    def backward(self, dY):
        raise NotImplementedError


@pytest.mark.parametrize("seed", range(4))
def test_float64_cancellation_is_not_float32_inside(seed):
    """Session 12: the probe named it float32 round-off; its round-off is off float32's grid and several times
    what float32 makes (_float32_grid), so the precision probe names nothing and the noise finding speaks."""
    from gradcheck.diagnose import _f64, _float32_inside, _precision_inside

    X = np.random.default_rng(seed).standard_normal((4, 3))
    f32 = _float32_inside(_f64(OffsetLayerNorm(), False), [X], {}, seed)
    assert f32 is not None and not f32["aligned"] and f32["noise"] > 5, f32
    assert _precision_inside(_f64(OffsetLayerNorm(), False), [X], {}, seed) is None
    for cls in (Swish32, TanhHalf32):  # off the grid (float32 of a computed value) and on it
        X = np.random.default_rng(seed).standard_normal((4, 5))
        assert _precision_inside(_f64(cls(), False), [X], {}, seed)[0] == "float32-inside"
