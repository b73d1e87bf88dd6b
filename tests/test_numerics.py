"""Issue 12 §4, numerics and TF parity: saturated derivatives from the input (both
packages), masked -inf logits, the 0·inf rule, gradient(v, v), list operands, list axes,
expm1's VJP, and shared case C16. Each test asserts the issue's numbers."""

import warnings

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp
from autoprop.core import registry as R


def _tape_grad(f, x, g=None):
    x = ap.constant(x)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x, output_gradients=g).numpy()


def _jvp(f, x, t):
    x = ap.constant(x)
    with ap.ForwardAccumulator(x, t) as acc:
        y = f(x)
    return acc.jvp(y).numpy()


def _manual_grad(layer, x):
    x = np.asarray(x)
    layer.forward(x)
    return layer.backward(np.ones_like(x))


def _rel(a, b):
    return np.max(np.abs(np.asarray(a, np.float64) - b) / np.abs(b))


# --- saturated derivatives, computed from the input ------------------------------------
# independent references: sech^2(x) = 4e/(1+e)^2, e = exp(-2|x|); s'(x) = e/(1+e)^2, e = exp(-|x|)
def _sech2(x):
    e = np.exp(-2 * np.abs(x))
    return 4 * e / (1 + e) ** 2


def _dsigmoid(x):
    e = np.exp(-np.abs(x))
    return e / (1 + e) ** 2


SATURATED = [
    ("Tanh", ap.tanh, 20.0, 1.70e-17, _sech2),
    ("Sigmoid", ap.sigmoid, 40.0, 4.25e-18, _dsigmoid),
    ("ELU", lambda x: ap.layers.ELU()(x), -40.0, 4.25e-18, np.exp),
]


@pytest.mark.parametrize("name, f, x0, value, ref", SATURATED, ids=[c[0] for c in SATURATED])
def test_saturated_derivatives_keep_relative_precision_in_both_packages(name, f, x0, value, ref):
    manual = _manual_grad(getattr(mp, name)(), [x0])[0]
    tape = _tape_grad(f, np.array([x0]))[0]
    fwd = _jvp(f, np.array([x0]), np.ones(1))[0]
    scalar = float(_tape_grad(f, x0))  # 0-d input: the plain backward's other path
    for got in (manual, tape, fwd, scalar):
        assert got == pytest.approx(value, rel=5e-3, abs=0)          # the 3 digits
        assert got == pytest.approx(ref(x0), rel=1e-14, abs=0)       # full relative precision


@pytest.mark.parametrize("name, f, ref", [("Tanh", ap.tanh, _sech2), ("Sigmoid", ap.sigmoid, _dsigmoid)])
def test_saturated_derivatives_across_the_whole_range(name, f, ref):
    x = np.concatenate([np.linspace(-300, 300, 601), np.linspace(-3, 3, 61)])
    want = ref(x)
    assert _rel(_manual_grad(getattr(mp, name)(), x), want) < 1e-14
    assert _rel(_tape_grad(f, x), want) < 1e-14
    assert _rel(_jvp(f, x, np.ones_like(x)), want) < 1e-14


def test_elu_across_the_range_and_alpha_at_zero():
    x = np.concatenate([np.linspace(-700, 0, 701), [1e-300, 2.0]])
    want = np.where(x > 0, 1.0, 0.5 * np.exp(np.minimum(x, 0)))
    manual = _manual_grad(mp.ELU(alpha=0.5), x)
    tape = _tape_grad(lambda v: ap.layers.ELU(alpha=0.5)(v), x)
    for got in (manual, tape):
        assert _rel(got, want) < 1e-14
        assert got[700] == 0.5  # ELU'(0) = alpha in both (minimum's half-split would give 0.25)


def test_float32_tanh_near_minus_9_is_not_twice_too_large():
    x = np.array([-9.0], dtype=np.float32)
    true = _sech2(-9.0)  # 6.09e-08, in float64
    assert true == pytest.approx(6.0919e-8, rel=1e-4, abs=0)
    naive = float(1 - np.tanh(x[0]) ** 2)  # what the output-based formula gives
    assert naive / true > 1.9
    for got in (_manual_grad(mp.Tanh(), x)[0], _tape_grad(ap.tanh, x)[0]):
        assert np.asarray(got).dtype == np.float32
        assert got == pytest.approx(true, rel=1e-6, abs=0)


def test_tanh_vjp_never_warns_at_huge_inputs():
    x = np.array([-1e4, -800.0, 800.0, 1e4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(_tape_grad(ap.tanh, x), 0.0)
        np.testing.assert_array_equal(_manual_grad(mp.Tanh(), x), 0.0)


def test_tanh_and_sigmoid_second_derivatives_are_exact_at_zero():
    # from the input, so higher orders are smooth too: tanh''' (0) = -2, sigma'''(0) = -1/8
    for f, want in ((ap.tanh, -2.0), (ap.sigmoid, -0.125)):
        x = ap.constant(0.0)
        with ap.GradientTape() as t3:
            t3.watch(x)
            with ap.GradientTape() as t2:
                t2.watch(x)
                with ap.GradientTape() as t1:
                    t1.watch(x)
                    y = f(x)
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        assert float(t3.gradient(d2, x)) == pytest.approx(want, abs=1e-15)


def test_expm1_vjp_uses_exp_of_the_input():
    for got in (_tape_grad(ap.expm1, -30.0), _jvp(ap.expm1, -30.0, 1.0)):
        assert abs(float(got) / np.exp(-30.0) - 1) < 1e-15  # was 1.7e-4 with y + 1


# --- all -inf inputs and masked logits ----------------------------------------------------
def test_logsumexp_and_logaddexp_with_every_input_minus_inf_have_gradient_zero():
    with np.errstate(divide="ignore", invalid="ignore"):
        g = _tape_grad(lambda x: ap.logsumexp(x), np.array([-np.inf, -np.inf]))
        np.testing.assert_array_equal(g, [0.0, 0.0])
        g = _tape_grad(lambda x: ap.logsumexp(x, axis=1), np.array([[-np.inf, -np.inf], [0.0, -np.inf]]))
        np.testing.assert_array_equal(g, [[0.0, 0.0], [1.0, 0.0]])
        g = _tape_grad(lambda x: np.logaddexp(x, x * 2.0), -np.inf)
        assert float(g) == 0.0
        g = _jvp(lambda x: ap.logsumexp(x), np.array([-np.inf, -np.inf]), np.ones(2))
        assert float(g) == 0.0


SCE_Z = np.array([[0.0, -np.inf, 1.0]])
SCE_TF = [0.26894142, 0.0, -0.26894142]  # TF's gradient, label 2


@pytest.mark.parametrize("y", [np.array([2]), np.array([[0.0, 0.0, 1.0]])], ids=["labels", "probs"])
def test_softmax_cross_entropy_with_masked_logits_matches_tensorflow(y):
    m = mp.SoftmaxCrossEntropy(reduction="sum")
    loss_m = m.forward(y, SCE_Z)
    np.testing.assert_allclose(m.backward(), [SCE_TF], rtol=1e-7)
    z = ap.Variable(SCE_Z)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ap.GradientTape() as tape:
            loss_t = ap.losses.SoftmaxCrossEntropy(reduction="sum")(y, z)
        g = tape.gradient(loss_t, z).numpy()
    np.testing.assert_allclose(g, [SCE_TF], rtol=1e-7)
    assert loss_m == pytest.approx(float(loss_t), rel=1e-15)
    assert loss_m == pytest.approx(np.log1p(np.exp(-1.0)), rel=1e-15)


def test_masked_logits_are_accepted_again_once_their_signature_is_cached():
    """manualprop checks shape and dtype once per signature: the cached path must keep the -inf mask rule."""
    m = mp.SoftmaxCrossEntropy(reduction="sum")
    for _ in range(3):
        m.forward(np.array([2]), SCE_Z)
        np.testing.assert_allclose(m.backward(), [SCE_TF], rtol=1e-7)
    with pytest.raises(ValueError, match="NaN/inf"):  # and a NaN with the same signature is still refused
        m.forward(np.array([2]), np.array([[0.0, np.nan, 1.0]]))


def test_softmax_cross_entropy_refuses_nan_plus_inf_and_an_all_masked_row():
    for bad, words in ((np.array([[np.nan, 0.0]]), "NaN/inf"), (np.array([[np.inf, 0.0]]), "NaN/inf"),
                       (np.array([[0.0, 0.0], [-np.inf, -np.inf]]), "row 1")):
        with pytest.raises(ValueError, match=words):
            mp.SoftmaxCrossEntropy().forward(np.array([0] * len(bad)), bad)
        with pytest.raises(ValueError, match=words):
            ap.losses.SoftmaxCrossEntropy()(np.array([0] * len(bad)), ap.constant(bad))


# --- the 0·inf rule ---------------------------------------------------------------------
# (primitive, argument values, which argument): the local derivative there is inf or nan
ZERO_INF = [
    ("sqrt", (0.0,), 0), ("log", (0.0,), 0), ("log2", (0.0,), 0), ("log10", (0.0,), 0), ("cbrt", (0.0,), 0),
    ("logit", (0.0,), 0), ("xlogy", (1.0, 0.0), 1),
    ("log1p", (-1.0,), 0), ("reciprocal", (0.0,), 0), ("arcsin", (1.0,), 0), ("arccos", (1.0,), 0),
    ("arcsin", (2.0,), 0), ("log", (-1.0,), 0), ("exp", (1000.0,), 0), ("expm1", (1000.0,), 0),
    ("sinh", (1000.0,), 0), ("cosh", (1000.0,), 0), ("square", (np.inf,), 0), ("sin", (np.inf,), 0),
    ("divide", (1.0, 0.0), 0), ("divide", (1.0, 0.0), 1), ("divide", (0.0, 0.0), 1),
    ("power", (0.0, 0.5), 0), ("power", (-1.0, 0.5), 1), ("multiply", (1.0, np.inf), 0),
    ("multiply", (np.inf, 1.0), 1), ("arctan2", (0.0, 0.0), 0), ("arctan2", (0.0, 0.0), 1),
    ("logaddexp", (-np.inf, -np.inf), 0), ("tan", (np.pi / 2,), 0),
]


@pytest.mark.parametrize("name, args, i", ZERO_INF, ids=[f"{c[0]}{c[1]}[{c[2]}]" for c in ZERO_INF])
def test_zero_upstream_gradient_times_an_infinite_derivative_is_zero(name, args, i):
    prim = R.PRIMITIVES[name]
    xs = [ap.constant(a) for a in args]
    with np.errstate(all="ignore"):
        with ap.GradientTape() as tape:
            tape.watch(xs[i])
            y = prim(*xs)
        g = tape.gradient(y, xs[i], output_gradients=np.zeros(y.shape))
        assert float(g) == 0.0
        with ap.ForwardAccumulator(xs[i], 0.0) as acc:
            y = prim(*xs)
        assert float(acc.jvp(y)) == 0.0
        # and under a recording outer tape (the VJP computed on Tensors)
        with ap.GradientTape() as outer:
            with ap.GradientTape() as tape:
                tape.watch(xs[i])
                y = prim(*xs)
            g = tape.gradient(y, xs[i], output_gradients=ap.constant(np.zeros(y.shape)))
        assert float(g) == 0.0
    del outer


def test_the_rule_keeps_real_infinities_and_nans():
    with np.errstate(all="ignore"):
        assert float(_tape_grad(ap.sqrt, 0.0)) == np.inf
        assert float(_tape_grad(ap.log, 0.0)) == np.inf
        assert np.isnan(float(_tape_grad(ap.log, -1.0, g=np.nan)))
        assert np.isnan(float(_tape_grad(lambda x: ap.sqrt(x), -1.0)))


def test_where_over_sqrt_at_zero_is_one_as_tensorflow():
    with np.errstate(all="ignore"):
        assert float(_tape_grad(lambda x: ap.where(x < 1, x, ap.sqrt(x)), 0.0)) == 1.0
        assert float(_tape_grad(lambda x: ap.where(x > 0, ap.log(x), 0.0), 0.0)) == 0.0
        g = _tape_grad(lambda x: ap.where(x > 0, 1.0 / x, x), np.array([0.0, 2.0]))
    np.testing.assert_array_equal(g, [1.0, -0.25])


def test_the_rule_applies_before_summing_back_a_broadcast():
    # divide's db for b of shape (1,) broadcast against a (3,): the nan must not reach the sum
    a, b = ap.constant([1.0, 2.0, 3.0]), ap.constant([0.0])
    with np.errstate(all="ignore"):
        with ap.GradientTape() as tape:
            tape.watch(b)
            y = ap.sum(ap.where(np.array([False, False, False]), a / b, 0.0))
        assert tape.gradient(y, b).numpy().tolist() == [0.0]


# --- TF parity: gradient(v, v), list operands, list axes, tie text -------------------------
def test_gradient_of_a_source_with_respect_to_itself_is_one():
    v = ap.Variable([1.0, 2.0])
    c = ap.constant(3.0)
    with ap.GradientTape(persistent=True) as tape:
        pass
    assert tape.gradient(v, v).numpy().tolist() == [1.0, 1.0]
    assert float(tape.gradient(c, c)) == 1.0
    np.testing.assert_array_equal(tape.jacobian(v, v).numpy(), np.eye(2))
    gv, gc = tape.gradient([v, c], [v, c])
    assert gv.numpy().tolist() == [1.0, 1.0] and float(gc) == 1.0
    with ap.GradientTape() as tape:
        y = v * 3.0
    gy, gv = tape.gradient(y, [y, v])  # a target that is also a source: its seed is its gradient
    assert gy.numpy().tolist() == [1.0, 1.0] and gv.numpy().tolist() == [3.0, 3.0]


def test_python_list_operands():
    w = ap.Variable(np.arange(6.0).reshape(3, 2))
    with ap.GradientTape(persistent=True) as tape:
        y1 = [[1.0, 2.0, 3.0]] @ w
        y2 = np.matmul([[1.0, 2.0, 3.0]], w)
        y3 = R.add([1.0, 2.0], w)
        y4 = R.multiply(w, (2.0, 3.0))
    assert y1.numpy().tolist() == [[16.0, 22.0]]
    for y in (y1, y2):
        assert tape.gradient(y, w).numpy().tolist() == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    assert tape.gradient(y3, w).numpy().tolist() == [[1.0, 1.0]] * 3
    assert tape.gradient(y4, w).numpy().tolist() == [[2.0, 3.0]] * 3


def test_list_axes_are_accepted_as_tensorflow():
    x = ap.Variable(np.arange(24.0).reshape(2, 3, 4))
    with ap.GradientTape(persistent=True) as tape:
        s = ap.reduce_sum(x, axis=[0, 1])
        m = ap.reduce_mean(x, axis=[0, 2])
        mx = ap.reduce_max(x, axis=[1, 2])
        k = x.sum(axis=[0, 1, 2])
    assert s.numpy().tolist() == [60.0, 66.0, 72.0, 78.0]
    assert m.numpy().tolist() == [7.5, 11.5, 15.5]
    assert mx.numpy().tolist() == [11.0, 23.0] and float(k) == 276.0
    np.testing.assert_array_equal(tape.gradient(s, x).numpy(), np.ones((2, 3, 4)))
    np.testing.assert_array_equal(tape.gradient(m, x).numpy(), np.full((2, 3, 4), 1 / 8))
    gmx = tape.gradient(mx, x).numpy()
    assert gmx.sum() == 2.0 and gmx[0, 2, 3] == 1.0 and gmx[1, 2, 3] == 1.0


def test_tie_rule_text_names_the_right_framework():
    doc = " ".join(R.__doc__.split())  # the text, whatever its line breaks
    assert "TensorFlow's and JAX's rule" not in doc
    assert "PyTorch's and JAX's rule" in doc and "first argument" in doc
    text = open("lessons/10-gradient-tape.md", encoding="utf-8").read()
    section = text.split("## Differences from TensorFlow", 1)[1].split("\n## ", 1)[0]
    for fact in ("float64", "(out, in)", "(in, out)", "recorded", "first argument"):
        assert fact in section


def test_maximum_tie_splits_and_minimum_too():
    for f in (ap.maximum, ap.minimum):
        a, b = ap.constant(1.0), ap.constant(1.0)
        with ap.GradientTape() as tape:
            tape.watch([a, b])
            y = f(a, b)
        assert [float(g) for g in tape.gradient(y, [a, b])] == [0.5, 0.5]


# --- shared case C16: sigmoid and BCE --------------------------------------------------------
def test_c16_sigmoid_values_and_derivatives_without_warnings():
    x = np.array([0.12, 0.34, -1234.1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layer = mp.Sigmoid()
        y = layer.forward(x)
        dm = layer.backward(np.ones(3))
        xt = ap.constant(x)
        with ap.GradientTape() as tape:
            tape.watch(xt)
            yt = ap.sigmoid(xt)
        dt = tape.gradient(yt, xt).numpy()
    for v in (y, yt.numpy()):
        assert v.round(10).tolist() == [0.5299640518, 0.5841905229, 0.0]
    for d in (dm, dt):
        assert d.round(10).tolist() == [0.2491021556, 0.2429119558, 0.0]


def test_c16_log_sigmoid_in_float32_and_bce_with_logits_at_minus_800():
    x = ap.constant(np.float32(-300.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ap.GradientTape() as tape:
            tape.watch(x)
            ls = -ap.logaddexp(np.float32(0.0), -x)  # log sigmoid(x), stable
        g = tape.gradient(ls, x)
    assert ls.dtype == np.float32 and float(ls) == -300.0 and float(g) == 1.0
    bce = mp.BinaryCrossEntropyWithLogits()
    assert bce.forward(np.array([1.0]), np.array([-800.0])) == 800.0
    assert bce.backward().tolist() == [-1.0]
    z = ap.Variable([-800.0])
    with ap.GradientTape() as tape:
        loss = ap.losses.BinaryCrossEntropyWithLogits()(np.array([1.0]), z)
    assert float(loss) == 800.0 and tape.gradient(loss, z).numpy().tolist() == [-1.0]


@pytest.mark.parametrize("dtype, big", [(np.float32, 89.0), (np.float64, 710.0)])
def test_sech2_of_a_scalar_or_an_array_never_warns_and_keeps_the_dtype(dtype, big):
    from manualprop.layers import _sech2

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in (dtype(big), dtype(-10 * big), np.array(big, dtype), np.array([-big, 0, 3 * big], dtype)):
            r = _sech2(x)
            assert np.asarray(r).dtype == dtype and np.all(np.asarray(r)[np.abs(x) >= big] == 0)
    assert _sech2(np.array(0.5, dtype)) == pytest.approx(1 / np.cosh(0.5) ** 2, rel=1e-6)
    assert np.isnan(_sech2(np.array([np.nan])))[0]
