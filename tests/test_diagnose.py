"""gradcheck.diagnose and the numerical methods: planted bugs are named, cases C26-C29, check_vjp."""

import warnings

import numpy as np
import pytest
from student_layers import StudentLinear as Lin

import manualprop as mp
from gradcheck import check_layer
from gradcheck.diagnose import check_vjp, diagnose_layer, name_signature
from gradcheck.numerical import (
    batch_independent,
    default_eps,
    layer_numerical_gradients,
    norm_relative_error,
    step_error_curve,
)

# ----------------------------------------------------------------- planted bugs


class Transposed(Lin):
    def dW(self, dY):
        return (dY.T @ self.X).T


class Sign(Lin):
    def dX(self, dY):
        return -dY @ self.params["W"]


class Twice(Lin):
    def dW(self, dY):
        return 2 * dY.T @ self.X


class Half(Lin):
    def dW(self, dY):
        return 0.5 * dY.T @ self.X


class MeanDb(Lin):
    def db(self, dY):
        return dY.mean(axis=0)


class BatchTimes(Lin):
    def dW(self, dY):
        return len(dY) * dY.T @ self.X


class OverBatch(Lin):
    def dW(self, dY):
        return dY.T @ self.X / len(dY)


class NotSummed(Lin):
    def db(self, dY):
        return dY


class First(Lin):
    def dW(self, dY):
        return np.outer(dY[0], self.X[0])


class Last(Lin):
    def dW(self, dY):
        for n in range(len(dY)):
            g = np.outer(dY[n], self.X[n])
        return g


class FirstX(Lin):
    def dX(self, dY):
        out = np.zeros_like(self.X)
        out[0] = dY[0] @ self.params["W"]
        return out


class Zero(Lin):
    def dW(self, dY):
        return np.zeros_like(self.params["W"])


class Never(Lin):
    def backward(self, dY):
        self.grads["b"] = self.db(dY)
        return self.dX(dY)


class Accum(Lin):
    def backward(self, dY):
        self.grads["W"] += self.dW(dY)
        self.grads["b"] = self.db(dY)
        return self.dX(dY)


class Shared(Lin):
    cache = {}

    def forward(self, X, training=False):
        self.cache["X"] = X
        return X @ self.params["W"].T + self.params["b"]

    def dW(self, dY):
        return dY.T @ self.cache["X"]

    def dX(self, dY):
        return dY @ self.params["W"]


class Stale(Lin):
    X = None

    def forward(self, X, training=False):
        if self.X is None:  # BUG: the cache is set on the first call only
            self.X = X
        return X @ self.params["W"].T + self.params["b"]


class InPlace:
    params, grads = {}, {}

    def forward(self, X, training=False):
        self.mask = X > 0
        X[~self.mask] = 0
        return X

    def backward(self, dY):
        return dY * self.mask


@pytest.mark.parametrize(
    "cls, code, tensor",
    [
        (Transposed, "transposed-square", "dW"),  # a square W: right shape, its own code (session 28)
        (Sign, "wrong-sign", "dX"),
        (Twice, "factor", "dW"),
        (Half, "factor", "dW"),
        (MeanDb, "bias-mean", "db"),
        (BatchTimes, "factor-batch", "dW"),
        (OverBatch, "factor-inverse-batch", "dW"),
        (NotSummed, "not-summed", "db"),
        (First, "first-sample-only", "dW"),
        (Last, "last-sample-only", "dW"),
        (FirstX, "first-sample-only", "dX"),
        (Zero, "zero", "dW"),
        (Never, "never-written", "dW"),
        (Accum, "accumulated", "dW"),
        (Shared, "shared-cache", "dW"),
        (Stale, "stale-cache", "dW"),
        (InPlace, "input-modified", "dX"),
    ],
)
def test_planted_bug_is_named(cls, code, tensor):
    d = diagnose_layer(cls(), (6, 4))
    assert not d.passed
    assert d.codes[0] == code, (d.codes, d.sentence())
    first = next(f for f in d.findings if f.severity == "error")
    assert first.tensor == tensor
    assert d.sentence().startswith(f"FAIL: {cls.__name__}: ")


@pytest.mark.parametrize(
    "cls, words",
    [
        (MeanDb, "db is the mean over the batch, not the sum"),
        (Twice, "dW is 2 times the correct gradient: a constant"),
        (Half, "dW is 0.5 times the correct gradient: a constant"),
        (BatchTimes, "a 1/batch is missing"),
        (OverBatch, "an extra 1/batch"),
        (Transposed, "dW is transposed"),
        (Sign, "wrong sign"),
        (NotSummed, "not summed over the batch"),
        (First, "first sample only"),
        (Accum, "gradients accumulated across calls instead of overwritten"),
        (Shared, "cache overwritten by a later forward"),
    ],
)
def test_plain_words(cls, words):
    assert words in diagnose_layer(cls(), (6, 4)).sentence()


def test_correct_layer_passes_every_probe():
    d = diagnose_layer(Lin(), (6, 4), mode="full")
    assert d.passed and d.codes == []
    assert [p.name for p in d.probes][:2] == ["deterministic forward", "input left unchanged"]
    assert all(p.passed for p in d.probes), d.probes
    assert d.sentence() == "PASS: StudentLinear: every gradient matches."
    assert d.to_dict()["passed"] is True


@pytest.mark.parametrize("mode", ["full", "fast", "sample"])
def test_modes_agree_on_verdict_and_point_at_elements(mode):
    res = check_layer(MeanDb(), (6, 4), twin=None, mode=mode)
    assert res.failing_tensors == ["db"]
    c = res.records[2].get("manual-vs-numerical")
    # fast mode scans the failing tensor element by element afterwards
    assert c.how == ("sample" if mode == "sample" else "elements")
    assert c.worst_index != ()
    ok = res.records[0].get("manual-vs-numerical")
    assert ok.how == {"full": "elements", "fast": "directional", "sample": "sample"}[mode]


def test_batched_scan_equals_element_loop():
    layer = mp.Conv2D(2, 3, 3, padding=1, rng=0)
    X = np.random.default_rng(1).standard_normal((3, 2, 5, 5))
    G = np.random.default_rng(2).standard_normal((3, 3, 5, 5))
    fwd = lambda x: layer.forward(x)  # noqa: E731
    assert batch_independent(fwd, [X])[0]
    a = layer_numerical_gradients(fwd, X, {}, G, batched=True)["X"]
    b = layer_numerical_gradients(fwd, X, {}, G, batched=False)["X"]
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


def test_batch_statistics_use_the_loop():
    bn = mp.BatchNorm1D(4)
    X = np.random.default_rng(0).standard_normal((8, 4))
    ok, why = batch_independent(lambda x: bn.forward(x, training=True), [X])
    assert not ok and "interact" in why


@pytest.mark.parametrize(
    "method, tol", [("forward", 1e-6), ("richardson", 1e-9), ("complex", 1e-12), ("central", 1e-9)]
)
def test_methods_on_tanh(method, tol):
    res = check_layer(
        mp.Tanh(), (4, 3), twin=None, method=method, rtol=max(tol, 1e-6) * 10, atol=tol
    )
    assert res.passed, res.table()
    assert res.eps == default_eps("central" if method == "complex" else method)


def test_complex_step_detects_non_analytic_forward():
    notes = []
    X = np.random.default_rng(0).standard_normal((3, 4))
    G = np.ones((3, 4))
    layer_numerical_gradients(lambda x: np.abs(x), X, {}, G, method="complex", notes=notes)
    assert any("complex step not used" in n for n in notes)


def test_default_steps_follow_nocedal_wright():
    u = np.finfo(np.float64).eps
    assert default_eps("central") == pytest.approx(u ** (1 / 3))
    assert default_eps("forward") == pytest.approx(u**0.5)
    assert default_eps("central", np.float32) == pytest.approx(np.finfo(np.float32).eps ** (1 / 3))


# ----------------------------------------------------------------- cases C26-C29


def _dot_grad(x, y, h, dtype):
    x, y = x.astype(dtype), y.astype(dtype)
    g = np.zeros(x.size, dtype)
    for i in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp[i] += dtype(h)
        xm[i] -= dtype(h)
        g[i] = (np.dot(xp, y) - np.dot(xm, y)) / (dtype(2) * dtype(h))
    return g


def test_c26_float32_dot_product():
    x, y = np.linspace(0.5, 1.5, 200), np.linspace(1.5, 0.5, 200)
    e64 = norm_relative_error(_dot_grad(x, y, 1e-3, np.float64), y)
    e32 = norm_relative_error(_dot_grad(x, y, 1e-3, np.float32), y.astype(np.float32))
    assert 1e-12 < e64 < 1e-11  # about 3e-12
    assert 1e-3 < e32 < 2.5e-3  # about 1.5e-3
    # h = 1e-6: f(x+h) and f(x-h) round to the same float32 or to neighbours, so every entry is
    # an exact multiple of one float32 spacing / 2h (7.63). Which entries are non-zero depends on
    # the BLAS summation order (OpenBLAS Haswell: 22 of 200, Prescott/SkylakeX: none); the
    # multiples, the mostly-zero and the garbage estimate do not.
    g = _dot_grad(x, y, 1e-6, np.float32)
    quantum = np.float64(np.spacing(np.float32(x @ y))) / 2e-6
    assert quantum == pytest.approx(7.63, abs=5e-3)
    k = g / quantum
    assert np.allclose(k, np.rint(k), rtol=0, atol=1e-5)
    assert np.count_nonzero(g) < x.size // 2
    assert norm_relative_error(g, y) > 0.5

    class Dot:  # f(x) = x . y as a layer
        params, grads = {}, {}

        def forward(self, X, training=False):
            return np.atleast_1d(X @ y)

        def backward(self, dY):
            return dY[0] * y

    with pytest.warns(
        UserWarning, match="upcasting to float64 because central differences in float32"
    ):
        res = check_layer(Dot(), x.astype(np.float32), twin=None, mode="full")
    assert res.passed and res.records[0].get("manual-vs-numerical").norm_rel_error < 1e-9


def test_c27_step_size_v_curve_numbers():
    est = step_error_curve(np.exp, 1.0, [0.1, 6e-6, 1e-10, 1e-16])
    err = np.abs(est - np.e)
    assert err[0] == pytest.approx(4.5e-3, rel=0.02)
    assert 5e-12 < err[1] < 3e-11  # about 1.5e-11
    assert err[2] == pytest.approx(6.7e-7, rel=0.05)
    assert est[3] == 0.0
    hs = np.logspace(-13, -1, 49)
    errs = np.abs(step_error_curve(np.exp, 1.0, hs) - np.e)
    best = hs[np.argmin(errs)]
    assert 1e-7 < best < 1e-4  # the bottom of the V sits near cbrt(eps) = 6e-6


def test_c28_relu_kink_is_not_a_wrong_gradient():
    res = check_layer(mp.ReLU(), np.array([[1e-4]]), twin=None, eps=5e-3, upstream=np.ones((1, 1)))
    num = res.gradients["numerical"]["dX"][0, 0]
    assert num == pytest.approx(0.51, rel=1e-9)
    assert res.gradients["manual"]["dX"][0, 0] == 1.0
    assert res.passed
    assert res.kinks == {"dX": [(0, 0)]}
    assert "1 element(s) at a kink" in res.table()
    d = diagnose_layer(mp.ReLU(), np.array([[1e-4, -2.0, 3.0]]), eps=5e-3, mode="full")
    assert d.passed and "at a kink" in d.sentence()


def test_kink_with_a_wrong_value_still_fails():
    class BadRelu:
        params, grads = {}, {}

        def forward(self, X, training=False):
            self.X = X
            return np.maximum(X, 0)

        def backward(self, dY):
            return dY * 3.0 * (self.X > 0)  # outside [d-, d+]

    assert not check_layer(BadRelu(), np.array([[1e-4]]), twin=None, eps=5e-3).passed


class ScaledDropout:
    """f = sum(dropout(w * x)), inverted dropout keep 0.5, mask from manualprop.Dropout."""

    def __init__(self, rng=0):
        self.params = {"w": np.array([1.0])}
        self.grads = {}
        self.drop = mp.Dropout(0.5, rng=rng)

    def fix_mask(self, mask=True):
        self.drop.fix_mask(mask)

    def forward(self, X, training=True):
        self.X = X
        return self.drop.forward(self.params["w"] * X, training=True)

    def backward(self, dY):
        d = self.drop.backward(dY)
        self.grads = {"w": np.array([np.sum(d * self.X)])}
        return d * self.params["w"]


def test_c29_dropout_mask_held_fixed():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    layer = ScaledDropout()
    layer.fix_mask([1, 0, 1, 1])  # the documented mechanism
    res = check_layer(layer, x, twin=None, upstream=np.ones(4))
    assert res.gradients["numerical"]["dw"][0] == pytest.approx(16.0, rel=1e-9)
    assert res.gradients["manual"]["dw"][0] == 16.0 and res.passed

    # a fresh mask per call: plain central differences are absurd ...
    free = ScaledDropout(rng=3)
    h = 1e-5
    p = free.params["w"]
    p[0] = 1 + h
    fp = free.forward(x).sum()
    p[0] = 1 - h
    fm = free.forward(x).sum()
    p[0] = 1.0
    assert abs((fp - fm) / (2 * h)) > 1000
    # ... the checker notices and holds the mask with fix_mask(True)
    d = diagnose_layer(ScaledDropout(rng=3), x, mode="full", upstream=np.ones(4))
    assert d.passed, d.report()
    assert "held-mask" in [f.code for f in d.findings]
    keep = d.result.gradients["manual"]["dX"] != 0
    assert d.result.gradients["numerical"]["dw"][0] == pytest.approx(2 * x[keep].sum(), rel=1e-9)


def test_rng_rewound_and_true_randomness_detected():
    class OwnRng:
        def __init__(self):
            self.params, self.grads, self.rng = {"w": np.array([1.0])}, {}, np.random.default_rng(5)

        def forward(self, X, training=False):
            self.m = (self.rng.random(X.shape) >= 0.5) * 2.0
            self.X = X
            return self.params["w"] * X * self.m

        def backward(self, dY):
            self.grads = {"w": np.array([np.sum(dY * self.X * self.m)])}
            return dY * self.params["w"] * self.m

    d = diagnose_layer(OwnRng(), (3, 8), mode="full")
    assert d.passed and "rewound-rng" in [f.code for f in d.findings]

    class Fresh(OwnRng):
        def forward(self, X, training=False):
            self.rng = np.random.default_rng()  # a new unseeded generator every call
            return super().forward(X)

    d = diagnose_layer(Fresh(), (3, 8))
    assert d.codes == ["non-deterministic"] and d.result is None
    assert "non-deterministic" in d.sentence()


# ----------------------------------------------------------------- models and ops


def test_sequential_names_first_failing_layer():
    model = mp.Sequential(mp.Linear(5, 4, rng=0), mp.Tanh(), MeanDb(4, 3), mp.Tanh())
    d = diagnose_layer(model, (6, 5))
    assert d.codes[0] == "first-failing-layer"
    i, sub = d.sublayer
    assert i == 2 and sub.codes == ["bias-mean"]
    assert "layers[2] (MeanDb)" in d.sentence() and "mean over the batch" in d.sentence()


def test_sequential_that_passes():
    model = mp.Sequential(mp.Linear(5, 4, rng=0), mp.ReLU(), mp.Linear(4, 2, rng=1))
    assert diagnose_layer(model, (6, 5)).passed


@pytest.mark.parametrize(
    "name, args",
    [
        ("tanh", [np.linspace(-2, 2, 7)]),
        ("exp", [np.linspace(-1, 1, 5)]),
        ("matmul", [np.arange(6.0).reshape(2, 3) / 5, np.arange(12.0).reshape(3, 4) / 7]),
        ("multiply", [np.linspace(-1, 1, 4), np.linspace(2, 3, 4)]),
    ],
)
def test_check_vjp_registry_entries(name, args):
    res = check_vjp(name, None, *args)
    assert res.passed, res.table()
    assert any("J u from" in n for n in res.notes)


def test_check_vjp_student_transposed_matmul():
    A, B = np.random.default_rng(0).standard_normal((2, 3, 3))
    res = check_vjp(np.matmul, [lambda g, a, x, y: g @ y, lambda g, a, x, y: x.T @ g], A, B)
    assert [r.tensor for r in res.records if not r.passed] == ["d0", "<u,J^T v> 0"]
    assert res.records[3].passed


def test_check_vjp_kink_at_abs_zero():
    res = check_vjp(np.abs, lambda g, a, x: g * np.sign(x), np.array([-1.0, 1e-7, 2.0]), eps=1e-5)
    assert res.passed and res.kinks == {"dx": [(1,)]}


def test_name_signature_direct():
    n = np.arange(1.0, 7.0).reshape(2, 3)
    assert name_signature("dW", -n, n).code == "wrong-sign"
    assert name_signature("dW", 3 * n, n).code == "factor"
    assert name_signature("dW", n, n) is None


def test_no_warnings_in_clean_diagnosis():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        diagnose_layer(Lin(), (3, 4))


# ----------------------------------------------------------------- plots


def test_plots_heatmaps_v_curve_and_jacobian(tmp_path):
    from matplotlib.figure import Figure

    import autoprop.layers as apl
    from gradcheck.plots import plot_gradient_heatmaps, plot_jacobian, plot_step_error, save_figure

    res = check_layer(Transposed(5, 5), (6, 5), twin=None)
    fig = plot_gradient_heatmaps(res)
    assert isinstance(fig, Figure) and "dW: FAIL" in fig._suptitle.get_text()
    assert {"manual dW", "numerical dW"} <= {ax.get_title() for ax in fig.axes}
    v = plot_step_error()
    labels = [t.get_text() for t in v.axes[0].get_legend().get_texts()]
    assert any("slope 2" in t for t in labels) and any("exactly 0" in t for t in labels)
    lin = mp.Linear(3, 2, rng=0)
    twin = apl.Linear(3, 2)
    for k in ("W", "b"):
        twin.variables[k].assign(lin.params[k])
    X = np.random.default_rng(0).standard_normal((2, 3))
    jac = plot_jacobian(lambda x: lin.forward(x), lambda x: twin(x), X, title="Linear")
    assert "4 x 6" in jac._suptitle.get_text()
    for f, n in ((fig, "h.png"), (v, "v.png"), (jac, "j.png")):
        assert (tmp_path / n).exists() or save_figure(f, tmp_path / n)
        assert (tmp_path / n).stat().st_size > 10_000


def test_name_signature_permuted_hint_and_partial_zero():
    n = np.random.default_rng(0).standard_normal((2, 3, 4, 4))
    f = name_signature("dX", n.transpose(1, 0, 2, 3).reshape(n.shape), n)
    assert f.code == "permuted" and ".transpose(1, 0, 2, 3), not .reshape(2, 3, 4, 4)" in f.message
    f = name_signature("dX", n.transpose(1, 0, 2, 3), n)  # a wrong shape, the same values
    assert f.code == "permuted" and "transposed with axes (1, 0, 2, 3)" in f.message
    w = n[0, 0]
    hint = "dW = X.T @ dY"
    assert name_signature("dW", w.T, w, hint=hint).message.endswith(hint)
    assert name_signature("dW", w[:, :3].T, w[:, :3], hint=hint).message.endswith(hint)
    # zero where the correct value is known, nonzero elsewhere: not "all zeros"
    assert name_signature("dW", np.array([0.0, 5.0]), np.array([1.0, np.nan])) is None
