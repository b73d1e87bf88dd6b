"""check_layer: non-deterministic forwards, dropout masks shared with the twin, the default atol,
chunked scans (forward_many)."""

import numpy as np
import pytest

import manualprop as mp
from gradcheck import check_layer
from gradcheck.check import ATOL_FLOOR, NONDETERMINISTIC, compare, default_atol
from gradcheck.numerical import local_forward_many, many_scan, numerical_gradient, scalar_objective

# ----------------------------------------------------------------- determinism (issue item 4)


def test_dropout_without_fixed_mask_is_non_deterministic_not_kinks():
    res = check_layer(mp.Dropout(0.5, rng=0), (4, 6), training=True)
    assert not res.passed
    assert res.failing_tensors == ["Y"] and res.kinks == {}
    assert res.notes[0].startswith(NONDETERMINISTIC) and "differ by up to" in res.notes[0]
    assert [c.pair for c in res.records[0].comparisons] == ["call1-vs-call2"]
    assert res.gradients["numerical"] == {}  # no finite differences were taken
    assert "repeat" in res.table() and "FAIL Dropout Y (forward value, call1-vs-call2)" in res.table()


def test_fresh_generator_per_call_is_non_deterministic():
    class Noisy:
        params, grads = {}, {}

        def forward(self, X, training=False):
            self.m = np.random.default_rng().random(X.shape) > 0.5
            return X * self.m

        def backward(self, dY):
            return dY * self.m

    res = check_layer(Noisy(), (3, 5), twin=None)
    assert not res.passed and res.notes[0].startswith(NONDETERMINISTIC)


@pytest.mark.parametrize("how", ["true", "array"])
def test_fixed_dropout_passes_three_ways_with_the_manual_mask(how):
    drop = mp.Dropout(0.5, rng=0)
    mask = np.random.default_rng(9).random((4, 6)) > 0.5
    drop.fix_mask(True if how == "true" else mask.astype(float))
    res = check_layer(drop, (4, 6), training=True)
    assert res.passed, res.table()
    assert res.twin == "autoprop.layers.dropout.Dropout" or res.twin.endswith(".Dropout")
    dx = res.records[1]
    assert dx.tensor == "dX" and [c.pair for c in dx.comparisons] == [
        "manual-vs-numerical", "tape-vs-numerical", "manual-vs-tape"]
    manual, tape = res.gradients["manual"]["dX"], res.gradients["tape"]["dX"]
    np.testing.assert_array_equal(manual, tape)
    assert np.count_nonzero(manual == 0) > 0  # some elements really dropped
    if how == "array":
        np.testing.assert_array_equal(manual != 0, mask)


# ----------------------------------------------------------------- default atol (issue item 5)


def test_default_atol_formula():
    Y, G = np.full(1000, 2.0), np.full(1000, -3.0)
    u = np.finfo(np.float64).eps
    assert default_atol(Y, G, 6e-6) == pytest.approx(u * 6000 / 6e-6)
    assert default_atol(Y, G, 6e-6, "richardson") == pytest.approx(2 * u * 6000 / 6e-6)
    assert default_atol(Y, G, 6e-6, "complex") == ATOL_FLOOR
    assert default_atol(np.ones(3), np.ones(3), 6e-6) == ATOL_FLOOR


class MeanBiasConv(mp.Conv2D):
    """Planted bug: the bias gradient averaged over the batch."""

    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["b"] = self.grads["b"] / dY.shape[0]
        return dX


def test_big_correct_conv_passes_by_default_and_a_planted_bug_still_fails():
    conv = mp.Conv2D(8, 8, 3, padding=1, rng=0)
    res = check_layer(conv, (4, 8, 16, 16), twin=None, mode="full")
    assert res.passed, res.table()
    assert res.atol > 1e-8 and any(n.startswith(f"atol={res.atol:.3g}") for n in res.notes)
    # the fixed 1e-9 of before fails this correct layer on rounding alone
    dX = compare(res.gradients["manual"]["dX"], res.gradients["numerical"]["dX"], "manual-vs-numerical",
                 rtol=1e-6, atol=1e-9)
    assert not dX.passed and dX.max_abs_error < 1e-7
    bad = check_layer(MeanBiasConv(8, 8, 3, padding=1, rng=0), (4, 8, 16, 16), twin=None, mode="fast")
    assert bad.failing_tensors == ["db"] and bad.atol > 1e-8


def test_explicit_atol_is_kept():
    res = check_layer(mp.Linear(5, 3, rng=0), (8, 5), twin=None, atol=1e-11)
    assert res.atol == 1e-11 and not any(n.startswith("atol=") for n in res.notes)


# ----------------------------------------------------------------- forward_many (issue item 3)


def test_many_scan_equals_the_element_loop():
    lin = mp.Linear(4, 3, rng=0)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5, 4))
    G = rng.standard_normal((5, 3))

    def fwd(*xs):
        return lin.forward(*xs)

    many = local_forward_many(fwd, lin.params)
    for key in ("W", "b", 0):
        sc = many_scan(many, [X], lin.params, key, G, max_per_call=6)
        arr = X.copy() if key == 0 else lin.params[key]
        f = (lambda a=arr: scalar_objective(lin.forward(a), G)) if key == 0 else (lambda: scalar_objective(fwd(X), G))
        ref = numerical_gradient(f, arr, detail=True)
        np.testing.assert_allclose(sc.grad, ref.grad, rtol=0, atol=1e-12)
        np.testing.assert_allclose(sc.d_plus, ref.d_plus, rtol=0, atol=1e-9)
    W0 = lin.params["W"].copy()
    many_scan(many, [X], lin.params, "W", G)
    np.testing.assert_array_equal(lin.params["W"], W0)  # restored


def test_layer_with_forward_many_uses_chunks():
    calls = []

    class Batched:
        def __init__(self):
            self.inner = mp.Linear(6, 4, rng=0)
            self.params, self.grads = self.inner.params, self.inner.grads

        def forward(self, X, training=False):
            calls.append("forward" if X.flags.c_contiguous else "layout")  # gradcheck._layout's Fortran-ordered rerun
            return self.inner.forward(X)

        def backward(self, dY):
            dX = self.inner.backward(dY)
            self.grads = self.inner.grads
            return dX

        def forward_many(self, inputs_list, params_list, training=False, edits_list=None):
            calls.append("many")
            return local_forward_many(lambda *x: self.inner.forward(*x), self.params)(
                inputs_list, params_list, edits_list)

    res = check_layer(Batched(), (5, 6), twin=None, mode="full", batched=False, training=False)
    assert res.passed, res.table()
    # X (30), W (24), b (4) elements: 116 forwards by the element loop, a handful of chunks here
    assert calls.count("many") <= 6 and calls.count("forward") <= 3 and calls.count("layout") == 1


class _Offset:
    """Y = X + c with a large c (so the finite differences are noisy) and a backward wrong by the factor k."""

    def __init__(self, c=1e8, k=1.5):
        self.params, self.grads, self.c, self.k = {}, {}, c, k

    def forward(self, X, training=False):
        return X + self.c

    def backward(self, dY):
        return self.k * dY


@pytest.mark.parametrize("mode", ["fast", "full"])
def test_a_5_percent_error_fails_in_fast_mode_as_in_full_mode_when_the_differences_are_noisy(mode):
    """Found by a new user: fast mode's directional screen allowed atol*sqrt(n) per direction, so a
    backward 1.5x too large passed (error 0.57 against atol 0.092) where full mode failed.
    A direction's quotient has the same round-off as one element's; a failing screen only costs the
    element scan."""
    X = np.random.default_rng(0).standard_normal((8, 5))
    assert not check_layer(_Offset(k=1.05), X, twin=None, mode=mode).passed
    assert check_layer(_Offset(k=1.0), X, twin=None, mode=mode).passed


class _InplaceReLU:
    """A ReLU whose backward zeroes the upstream gradient in place: right numbers, wrong in a DAG."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.mask = X > 0
        return np.maximum(X, 0)

    def backward(self, dY):
        dY[~self.mask] = 0
        return dY


def test_a_backward_that_writes_into_dy_is_refused_in_process_and_in_the_sandbox(tmp_path):
    """Found by a new user: `dY[~mask] = 0; return dY` passed (forward writing into X was refused)."""
    from gradcheck.errors import StudentCodeError
    from gradcheck.sandbox import Sandbox

    X = np.random.default_rng(0).standard_normal((4, 5))
    with pytest.raises(StudentCodeError, match="modified its upstream gradient dY in place"):
        check_layer(_InplaceReLU(), X, twin=None)
    f = tmp_path / "inplace.py"
    f.write_text("import numpy as np\n\nclass R:\n    def __init__(self):\n        self.params, self.grads = {}, {}\n\n"
                 "    def forward(self, X, training=False):\n        self.mask = X > 0\n        return np.maximum(X, 0)\n\n"
                 "    def backward(self, dY):\n        dY[~self.mask] = 0\n        return dY\n")
    with Sandbox(files={"inplace.py": str(f)}, timeout=30) as sb:
        layer = sb.load_layer("inplace.py", "R")
        layer.forward(X)
        dY = np.ones_like(X)
        layer.backward(dY)  # the child's write reaches the caller's array, as in process
        np.testing.assert_array_equal(dY, (X > 0).astype(float))
        with pytest.raises(StudentCodeError, match="modified its upstream gradient dY in place"):
            check_layer(layer, X, twin=None)


def test_a_default_atol_that_is_a_sizeable_part_of_the_gradient_grows_the_step_and_fails_a_1_percent_error():
    """Found by a new user: Y = X + 1e5 at (256, 64) gives atol 0.048 against |dX| <= 4, so a backward 1%
    too large passed with only a warning. The step of dX now grows (Y is linear in X: no truncation) until
    its round-off is below rtol * |dX|, so the error fails and a correct backward passes."""
    X = np.random.default_rng(0).standard_normal((256, 64))
    res = check_layer(_Offset(c=1e5, k=1.01), X, twin=None, mode="full")
    assert not res.passed and res.failing_tensors == ["dX"]
    c = res.records[0].get("manual-vs-numerical")
    assert c.max_rel_error == pytest.approx(0.01 / 2.01, rel=1e-3)  # |a-b| / (|a|+|b|) of a 1% error
    assert any("dX was differenced with a step" in n for n in res.notes), res.notes
    assert not any("WARNING: the default atol=" in n for n in res.notes), res.notes
    good = check_layer(_Offset(c=1e5, k=1.0), X, twin=None, mode="full")
    assert good.passed and good.records[0].get("manual-vs-numerical").max_abs_error < 1e-6
    quiet = check_layer(_Offset(c=1.0, k=1.0), X, twin=None)  # an ordinary output: the step is not grown
    assert not any("differenced with a step" in n or "% of the largest" in n for n in quiet.notes), quiet.notes


class _BigBiasLinear:
    """Y = X W^T + b with a bias of size ``bias``; dW multiplied by ``1 + wrong``."""

    def __init__(self, bias, wrong):
        rng = np.random.default_rng(1)
        self.params = {"W": rng.standard_normal((3, 5)), "b": np.full(3, float(bias))}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.wrong = wrong

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X * (1 + self.wrong)
        self.grads["b"] = dY.sum(0)
        return dY @ self.params["W"]


@pytest.mark.parametrize("mode", ["fast", "full", "sample"])
@pytest.mark.parametrize("bias", [1e4, 1e6, 1e8])
def test_a_1_percent_wrong_dw_fails_under_a_large_bias_and_a_right_one_passes(bias, mode):
    """Issue 10 sec. 3: at bias 1e8 the default atol (0.059) swamped |dW| <= 5.9 and the 1% error passed."""
    X = np.random.default_rng(0).standard_normal((8, 5))
    bad = check_layer(_BigBiasLinear(bias, 0.01), X, twin=None, mode=mode, n_samples=15)
    assert bad.failing_tensors == ["dW"], bad.table()
    c = bad.records[1].get("manual-vs-numerical")  # |manual - numerical| = 0.01 |dW| = |manual| / 101
    manual = bad.gradients["manual"]["dW"]
    assert c.max_abs_error == pytest.approx(np.abs(manual).max() / 101, rel=1e-3)
    good = check_layer(_BigBiasLinear(bias, 0.0), X, twin=None, mode=mode, n_samples=15)
    assert good.passed, good.table()
    assert not any("WARNING" in n for n in good.notes), good.notes
    grown = [n for n in good.notes if "differenced with a step" in n]
    # dX, dW: atol 0.059 > 1e-3 |g|; db's entries move by eps * 1e8, its round-off under the floor (newuser23 H1)
    assert len(grown) == (2 if bias == 1e8 else 0), good.notes
    if bias == 1e8:
        atol = float(grown[1].rpartition("compared with atol=")[2])
        assert "10000 times larger" in grown[1] and atol < 1e-4 < 0.059  # round-off / 1e4 + the measured change
