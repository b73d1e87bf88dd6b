"""``gradcheck check --method complex``: the complex step through the sandbox (session 24's leftover).

newuser23 M2: it was accepted and run as central differences, exit 0; session 24 refused it (exit 2) because the
sandbox's wire carried real arrays only. Now a forward of the complex step is a request whose reply may hold
complex128 alone (``reply_dtypes``), every other reply no complex array, both enforced by the one decoder
(:func:`gradcheck._sandbox_child.decode`) and the child's packer. The derivatives are the same plan as in process
(``numerical._complex_input``, chunked by ``many_scan``), compared here with central differences and with
``check_layer(method='complex')`` on the same layer in process. A forward that is not complex-analytic (abs,
``.astype(float)``) is differenced by central differences with a note naming why, never PASSed by a wrong step.
"""

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck import _sandbox_child as wire
from gradcheck.errors import GradientShapeError
from gradcheck.sandbox import Sandbox

LAYERS = """
import numpy as np
class Tanh:
    def __init__(self):
        self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.Y = np.tanh(X); return self.Y
    def backward(self, dY):
        return dY * (1 - self.Y**2)
class TanhBug(Tanh):
    def backward(self, dY):
        return dY * (1 - self.Y)
class ReLU:
    def __init__(self):
        self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.X = X; return np.maximum(X, 0)
    def backward(self, dY):
        return dY * (self.X > 0)
class ReLUBug(ReLU):
    def backward(self, dY):
        return dY * (self.X >= -0.5)
class Abs:
    def __init__(self):
        self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.X = X; return np.abs(X)
    def backward(self, dY):
        return dY * np.sign(self.X)
class AbsBug(Abs):
    def backward(self, dY):
        return dY
class CastTanh(Tanh):
    def forward(self, X, training=False):
        self.Y = np.tanh(X.astype(float)); return self.Y
class CastTanhBug(CastTanh):
    def backward(self, dY):
        return dY * (1 - self.Y)
class TanhPlusAbs:
    # review23's case: the complex step is blind to 1e-6 |X|, and backward misses its 1e-6 sign(X)
    def __init__(self):
        self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.X = X; return np.tanh(X) + 1e-6 * np.abs(X)
    def backward(self, dY):
        return dY * (1 - np.tanh(self.X) ** 2)
class Linear:
    def __init__(self, in_features=5, out_features=3):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self.grads = {}
    def forward(self, X, training=False):
        self.X = X; return X @ self.params["W"].T + self.params["b"]
    def backward(self, dY):
        self.grads = {"W": dY.T @ self.X, "b": dY.sum(axis=0)}
        return dY @ self.params["W"]
class LinearBugDX(Linear):
    def backward(self, dY):
        super().backward(dY)
        return dY @ self.params["W"] * 1.0001
class MSE:
    def forward(self, y_true, y_pred):
        self.d = y_pred - y_true; return float((self.d ** 2).mean())
    def backward(self):
        return 2 * self.d / self.d.size
"""


def check(tmp_path, name, *extra, shape="6,5", method="complex", mode="full"):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::{name}", "--input-shape", shape, "--method", method, "--mode", mode, *extra)
    return p, both(p)


def row_error(text, tensor):
    """The manual~num figure of ``tensor``'s row in the table."""
    import re

    return float(re.search(rf" {tensor} \([\d, ]*\) (\S+)", text).group(1))


def test_a_correct_tanh_passes_by_the_complex_step_to_machine_precision(tmp_path):
    """Squire & Trapp (1998): no subtraction, so no cancellation: the error is round-off's, where central
    differences' is their truncation and cancellation (3e-10 here)."""
    p, text = check(tmp_path, "Tanh")
    assert p.returncode == 0 and "PASS: Tanh" in text, text
    assert "numerical = complex step Im L(x+ih)/h with h=1e-20 for dX" in text, text
    cx = row_error(text, "dX")
    pc, central = check(tmp_path, "Tanh", method="central")
    assert pc.returncode == 0 and "numerical = central differences" in central
    assert cx < 1e-13 < 1e-11 < row_error(central, "dX"), (cx, row_error(central, "dX"))


def test_the_sandboxed_complex_step_equals_the_in_process_one(tmp_path):
    """One plan: the gradients the CLI's sandbox path computes are check_layer's in process, to the last bit."""
    import importlib.util

    from gradcheck import check_layer
    from gradcheck.diagnose import diagnose_layer

    f = student(tmp_path, LAYERS)
    spec = importlib.util.spec_from_file_location("cx_layers_local", f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    X = np.random.default_rng(3).standard_normal((4, 5))
    local = check_layer(mod.Linear(), X, twin=None, method="complex", mode="full")
    with Sandbox(files=[str(f)], timeout=10) as sb:
        remote = check_layer(sb.load_layer(f.name, "Linear"), X, twin=None, method="complex", mode="full")
        diag = diagnose_layer(sb.load_layer(f.name, "Linear"), X, method="complex", mode="full", name="Linear")
    assert local.complex_step == remote.complex_step == ["dX"] and diag.passed
    for a, b in zip(local.records, remote.records):
        for ca, cb in zip(a.comparisons, b.comparisons):
            assert ca.max_rel_error == cb.max_rel_error, (a.tensor, ca, cb)


@pytest.mark.parametrize("name", ["TanhBug", "ReLUBug", "LinearBugDX"])
def test_a_wrong_backward_fails(tmp_path, name):
    p, text = check(tmp_path, name)
    assert p.returncode == 1 and f"FAIL: {name}" in text and "PASS" not in text, text


def test_a_wrong_backward_fails_in_fast_mode_at_a_size_that_samples(tmp_path):
    """Fast mode: the directional test (central) fails, the 64 sampled entries are differenced by the complex step."""
    p, text = check(tmp_path, "TanhBug", shape="120,100", mode="fast")
    assert p.returncode == 1 and "FAIL: TanhBug" in text and "64/12000" in text, text
    assert "complex step Im L(x+ih)/h with h=1e-20 for dX" in text, text


def test_relu_by_np_maximum_is_differenced_exactly_off_its_kink(tmp_path):
    """np.maximum on complex numbers compares real parts first, so it keeps x + ih where x > 0: its complex step is
    the derivative, 1 or 0, exactly."""
    p, text = check(tmp_path, "ReLU")
    assert p.returncode == 0 and "PASS: ReLU" in text and "complex step Im L(x+ih)/h" in text, text
    assert row_error(text, "dX") < 1e-13, text


@pytest.mark.parametrize("name, why", [
    ("Abs", "forward returned a real array for a complex input (it drops the imaginary part)"),
    ("CastTanh", "forward returned a real array for a complex input (it drops the imaginary part)"),
    ("TanhPlusAbs", "the forward is not complex-analytic"),
])
def test_a_forward_that_is_not_complex_analytic_gets_central_differences_and_says_why(tmp_path, name, why):
    p, text = check(tmp_path, name)
    assert "complex step not used for @X: " in text and why in text.split("complex step not used for @X: ")[1], text
    assert "numerical = central differences (the complex step was asked for but not used: see the notes)" in text
    if name == "TanhPlusAbs":  # backward misses 1e-6 sign(X): central differences see it, the complex step would not
        assert p.returncode == 1 and "FAIL: TanhPlusAbs" in text, text
    else:
        assert p.returncode == 0 and f"PASS: {name}" in text, text


SWITCH = """
import numpy as np
class Switch:
    def __init__(self):
        self.params, self.grads = {}, {}
        self.n = 0
    def forward(self, X, training=False):
        self.Y = np.tanh(X)
        if np.iscomplexobj(X):
            self.n += 1
            if self.n > 3:  # the screen's 3 directions (COMPLEX_DIRECTIONS) got complex outputs; the scan real ones
                return self.Y.real.copy()
        return self.Y
    def backward(self, dY):
        return dY * (1 - self.Y)
"""


def test_a_forward_that_drops_the_imaginary_part_after_the_screen_is_refused_not_read_as_0(tmp_path):
    """The scan's real outputs are refused by the one reply validator (read as complex, their Im would be a
    derivative of 0): the check stops naming why, with no advice on --input-shape (the shape was right)."""
    f = student(tmp_path, SWITCH)
    p = run_here("check", f"{f}::Switch", "--input-shape", "6,5", "--method", "complex", "--mode", "full")
    text = both(p)
    assert p.returncode == 1 and "PASS" not in text, text
    assert "gave Y as a numpy array of dtype float64 for a complex input (the complex step); expected complex128" \
        in text and "change --input-shape" not in text, text


@pytest.mark.parametrize("name", ["AbsBug", "CastTanhBug"])
def test_a_wrong_backward_of_a_forward_that_drops_the_imaginary_part_fails(tmp_path, name):
    p, text = check(tmp_path, name)
    assert p.returncode == 1 and f"FAIL: {name}" in text and "complex step not used" in text, text


def test_parameters_are_central_and_the_footer_says_which_is_which(tmp_path):
    p, text = check(tmp_path, "Linear")
    assert p.returncode == 0, text
    assert "complex step Im L(x+ih)/h with h=1e-20 for dX; central differences for dW, db" in text, text
    assert row_error(text, "dX") < 1e-13, text


def test_method_complex_with_loss_is_refused(tmp_path):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3", "--method", "complex")
    assert p.returncode == 2 and "--method complex is for a layer's check" in both(p), both(p)


def test_help_says_what_complex_does():
    p = run_here("check", "--help")
    text = both(p)
    assert "complex: the complex step Im L(X+ih)/h" in text and "refused" not in text.split("--method")[1][:400]


@pytest.mark.parametrize("method", ["forward", "richardson"])
def test_another_method_with_loss_is_refused_not_ignored(tmp_path, method):
    """review24g: --loss --method forward (or richardson) ran central differences, exit 0 (check_loss has no method):
    an option accepted and not honoured. --method central, what runs, is still accepted."""
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3", "--method", method)
    text = both(p)
    assert p.returncode == 2 and f"--method {method}" in text and "central differences" in text, text
    assert "PASS" not in text, text
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3", "--method", "central")
    assert p.returncode == 0 and "PASS: MSE" in both(p), both(p)


# --- the wire: which dtypes a reply may hold ---------------------------------------------------------------

HOSTILE = """
import numpy as np
class Sub(np.ndarray):
    def astype(self, *a, **k):
        raise RuntimeError("astype ran in the parent")
    def __array__(self, *a, **k):
        raise RuntimeError("__array__ ran in the parent")
class ComplexForReal:
    params, grads = {}, {}
    def forward(self, X, training=False):
        return X + 0j
    def backward(self, dY):
        return dY
class ObjectOut(ComplexForReal):
    def forward(self, X, training=False):
        return np.array([object()] * X.size, dtype=object).reshape(X.shape)
class ComplexSub(ComplexForReal):
    def forward(self, X, training=False):
        return np.tanh(X).view(Sub)
class Complex64(ComplexForReal):
    def forward(self, X, training=False):
        return np.tanh(X).astype(np.complex64)
"""


@pytest.fixture()
def hostile(tmp_path):
    f = student(tmp_path, HOSTILE)
    with Sandbox(files=[str(f)], timeout=10) as sb:
        yield lambda name: sb.load_layer(f.name, name)


def test_a_complex_output_for_a_real_input_is_refused_not_cast(hostile):
    layer = hostile("ComplexForReal")
    X = np.ones((2, 3))
    with pytest.raises(GradientShapeError, match="dtype complex128"):
        layer.forward(X)
    with pytest.raises(GradientShapeError, match="dtype complex128"):
        layer.forward_many([X, X])
    Z = layer.forward(X + 1e-20j)  # asked for: read as it is
    assert Z.dtype == np.complex128 and np.array_equal(Z, X + 1e-20j)


def test_an_object_array_for_a_complex_input_is_refused_naming_its_dtype(hostile):
    with pytest.raises(GradientShapeError, match="dtype object for a complex input"):
        hostile("ObjectOut").forward(np.ones((2, 3)) + 1e-20j)


def test_a_complex_subclass_is_read_as_its_base_class_only(hostile):
    X = np.linspace(-1, 1, 6).reshape(2, 3) + 1e-20j
    Y = hostile("ComplexSub").forward(X)
    assert type(Y) is np.ndarray and Y.dtype == np.complex128 and np.array_equal(Y, np.tanh(X))


def test_complex64_is_not_the_complex_step_dtype(hostile):
    """complex64's float32 parts would make the step's derivative a float32 one: refused, naming it."""
    with pytest.raises(GradientShapeError, match="dtype complex64 for a complex input"):
        hostile("Complex64").forward(np.ones((2, 3)) + 1e-20j)


def test_the_decoder_takes_only_the_dtypes_the_request_allowed():
    real, cx = np.arange(3.0), np.arange(3.0) + 1j
    for arr, allowed in ((cx, wire.ALLOWED_DTYPES), (real, wire.COMPLEX_DTYPES)):
        packer = wire.Packer(np, wire.ALLOWED_DTYPES | wire.COMPLEX_DTYPES)  # a forged reply: any dtype packed
        head = packer.encode({"value": arr})
        with pytest.raises(wire.ProtocolViolation, match="an array of dtype"):
            wire.decode(np, head, packer.payload(), allowed=allowed)
    with pytest.raises(ValueError, match="only numeric arrays"):
        wire.Packer(np).ref(cx)  # a reply the request did not allow complex: the child packs none
    with pytest.raises(ValueError, match="only numeric arrays"):
        wire.Packer(np, wire.COMPLEX_DTYPES).ref(real)
    packer = wire.Packer(np, wire.COMPLEX_DTYPES)
    assert np.array_equal(wire.decode(np, packer.encode(cx), packer.payload(), allowed=wire.COMPLEX_DTYPES), cx)
    forged = {"__nd__": True, "dtype": ["<c16"], "shape": [0], "offset": 0, "nbytes": 0}
    with pytest.raises(wire.ProtocolViolation):
        wire.decode(np, forged, b"")


def test_a_reply_may_hold_only_what_the_request_named():
    assert wire.reply_dtypes({}) == wire.ALLOWED_DTYPES
    assert wire.reply_dtypes({"reply_dtypes": ["<c16"]}) == wire.COMPLEX_DTYPES
    assert wire.reply_dtypes({"reply_dtypes": ["<c8", "|O", 5]}) == frozenset()
    packer = wire.Packer(np, wire.COMPLEX_DTYPES)
    assert wire.describe(np, packer, np.ones(2))["kind"] == "badarray"
    assert wire.describe(np, packer, 1.5)["kind"] == "other"
    assert wire.describe(np, wire.Packer(np), np.ones(2) * 1j)["kind"] == "badarray"
