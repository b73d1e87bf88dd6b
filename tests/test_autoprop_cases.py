"""The shared gradient cases (/work/shared/cases/gradient-cases.md) that concern the tape,
each with its whole kind of fault, and GradientTape.explain for every cause of None."""

import warnings

import numpy as np
import pytest

import autoprop as ap


def _grad(f, *values, **tape_kw):
    ts = [ap.constant(v) for v in values]
    with ap.GradientTape(**tape_kw) as tape:
        tape.watch(ts)
        y = f(*ts)
    return tape.gradient(y, ts)


# --- C02 integer sources ----------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda v: ap.constant(v), lambda v: ap.Variable(v)])
def test_c02_integer_sources_get_none_with_a_warning_to_cast(make):
    a, b = make(1), make(2)
    assert a.dtype.kind == "i"
    with ap.GradientTape() as tape:
        with pytest.warns(UserWarning, match="cast it to float"):
            tape.watch([a, b])
        f = a * b
    with pytest.warns(UserWarning, match="Cast it to float"):
        ga, gb = tape.gradient(f, [a, b])
    assert ga is None and gb is None
    assert "integer" in tape.explain(f, a) and "Cast it to float" in tape.explain(f, a)


def test_c02_same_values_as_floats():
    ga, gb = _grad(lambda a, b: a * b, 1.0, 2.0)
    assert (ga.numpy(), gb.numpy()) == (2.0, 1.0)
    (g,) = _grad(lambda a: ap.sum(a / 2), [110.0])
    np.testing.assert_array_equal(g.numpy(), [0.5])
    assert g.dtype == np.float64


def test_c02_integer_gradient_is_never_zero_or_truncated():
    a = ap.constant(np.array([3, 4]))
    w = ap.Variable([0.5, 0.5])
    with ap.GradientTape() as tape:
        y = ap.sum(w * a)
    with pytest.warns(UserWarning):
        gw, ga = tape.gradient(y, [w, a])
    np.testing.assert_array_equal(gw.numpy(), [3.0, 4.0])
    assert ga is None


# --- C03 op not recorded ----------------------------------------------------------------
def test_c03_op_after_block_is_none_and_explained():
    x = ap.constant(9.0)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        inside = x**2
    after = x**2
    assert tape.gradient(inside, x).numpy() == 18.0
    assert tape.gradient(after, x) is None
    why = tape.explain(after, x)
    assert "after the tape's `with` block exited" in why and "inside the block" in why


def test_c03_non_persistent_after_block_explanation_survives_the_release():
    x = ap.constant(9.0)
    with ap.GradientTape() as tape:
        tape.watch(x)
    f = x**2
    assert tape.gradient(f, x) is None
    assert "after the tape's `with` block exited" in tape.explain(f, x)


def test_c03_persistent_gradient_inside_block_is_differentiable():
    y = ap.constant(2.0)
    v = ap.Variable(3.0)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(y)
        w = y * y * v
        with pytest.warns(UserWarning):
            gy_in = tape.gradient(w, y)
    gy_out = tape.gradient(w, y)
    assert gy_in.numpy() == 12.0 and gy_out.numpy() == 12.0
    assert tape.gradient(gy_in, v).numpy() == 4.0
    assert tape.gradient(gy_out, v) is None
    assert "after the tape's `with` block exited" in tape.explain(gy_out, v) or "not recorded" in tape.explain(gy_out, v)


@pytest.mark.parametrize(
    "leave,how",
    [
        (lambda t: np.asarray(t), "np.asarray"),
        (lambda t: np.array(t), "np.array"),
        (lambda t: t.numpy(), ".numpy()"),
    ],
)
def test_c03_numpy_midway_cuts_the_path_with_explanation(leave, how):
    x = ap.constant([1.0, 2.0, 3.0])
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        sq = x**2
        y = ap.sum(ap.constant(leave(sq)))  # the value left the tape in the middle
        y_ok = ap.sum(x**2)
    if how == ".numpy()":  # the explicit exit: None, as TensorFlow's
        assert tape.gradient(y, x) is None
    else:  # an implicit one: y is a constant made of the escaped value, refused as a plain target (fn41)
        with pytest.raises(TypeError, match=r"the target is a constant Tensor"):
            tape.gradient(y, x)
    np.testing.assert_array_equal(tape.gradient(y_ok, x).numpy(), [2.0, 4.0, 6.0])
    why = tape.explain(y, x)
    assert "left the tape" in why and ("numpy" in why or ".numpy()" in why)


def test_c03_float_midway_cuts_the_path():
    x = ap.constant(2.0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        with pytest.warns(ap.TapeEscapeWarning, match="float"):
            z = ap.constant(float(y)) * 3.0
    with pytest.raises(TypeError, match=r"the target is a constant Tensor .* by float\(\)"):  # (fn41: was None)
        tape.gradient(z, x)
    assert "float()" in tape.explain(z, x)


# --- C04 non-differentiable operations: one rule, None -------------------------------------
NONDIFF = [
    ("argmax", lambda x: ap.numpy.argmax(x)),
    ("argmin", lambda x: np.argmin(x)),
    ("round", lambda x: np.round(x)),
    ("floor", lambda x: np.floor(x)),
    ("ceil", lambda x: np.ceil(x)),
    ("sign", lambda x: np.sign(x)),
    ("greater", lambda x: x > 0.5),
    ("equal", lambda x: x == 2.0),
    ("int cast", lambda x: x.astype(np.int64)),
    ("bool cast", lambda x: x.astype(bool)),
]


@pytest.mark.parametrize("name,op", NONDIFF, ids=[n for n, _ in NONDIFF])
def test_c04_non_differentiable_ops_pass_no_gradient(name, op):
    x = ap.constant([0.2, 2.0, 1.4])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = ap.sum(ap.constant(1.0) * op(x))  # any further tape op on the result
    assert tape.gradient(y, x) is None
    why = tape.explain(y, x)
    assert "pass no gradient" in why and "never an identity pass-through" in why


def test_c04_mixed_path_keeps_only_the_differentiable_part():
    x = ap.constant([0.2, 2.0, 1.4])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = ap.sum(x * ap.numpy.round(x))  # round(x) is a constant factor
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 2.0, 1.0])


# --- C07 tape lifetime (order) ------------------------------------------------------------
def test_c07_either_order():
    x = ap.constant(3.0)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(y, x).numpy() == 6.0
    assert tape.gradient(z, x).numpy() == 108.0
    assert tape.gradient(y, x).numpy() == 6.0


# --- C10 every reduction and every broadcasting binary op ---------------------------------
REDUCTIONS = [
    ("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min), ("prod", np.prod),
    ("var", np.var), ("std", np.std), ("logsumexp", ap.logsumexp), ("norm", ap.norm),
]


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name,f", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_c10_reductions_return_the_input_shape(name, f, axis, keepdims):
    rng = np.random.default_rng(0)
    x = ap.constant(rng.uniform(0.5, 1.5, (2, 3, 4)))
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = f(x, axis=axis, keepdims=keepdims)
        L = ap.sum(y * y)
    g = tape.gradient(L, x)
    assert g.shape == (2, 3, 4) and np.isfinite(g.numpy()).all()


BINARY = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
    ("divide", np.divide), ("power", np.power), ("maximum", np.maximum),
    ("minimum", np.minimum), ("arctan2", np.arctan2), ("logaddexp", np.logaddexp),
    # a mask along the broadcast shape's last axis that picks from both branches
    ("where", lambda a, b: np.where(np.arange(np.broadcast_shapes(a.shape, b.shape)[-1]) % 2 == 0, a, b)),
]


@pytest.mark.parametrize("sa,sb", [((4, 4), (4,)), ((1,), (5, 4)), ((4, 1), (1, 4)),
                                   ((2, 1, 3), (4, 1)), ((), (2, 3))])
@pytest.mark.parametrize("name,f", BINARY, ids=[b[0] for b in BINARY])
def test_c10_broadcasting_binary_ops_sum_back_to_each_input(name, f, sa, sb):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2.0, sa)
    b = rng.uniform(0.5, 2.0, sb) + 0.1
    W = rng.standard_normal(np.broadcast_shapes(sa, sb))
    ga, gb = _grad(lambda x, y: ap.sum(ap.constant(W) * f(x, y)), a, b)
    assert ga.shape == sa and gb.shape == sb
    h = 1e-6
    for arr, g, which in ((a, ga, 0), (b, gb, 1)):
        flat = np.array(arr, dtype=float).reshape(-1)
        num = np.zeros_like(flat)
        for i in range(flat.size):
            p, m = flat.copy(), flat.copy()
            p[i] += h
            m[i] -= h
            args_p = [p.reshape(np.shape(arr)), b] if which == 0 else [a, p.reshape(np.shape(arr))]
            args_m = [m.reshape(np.shape(arr)), b] if which == 0 else [a, m.reshape(np.shape(arr))]
            fp = np.sum(W * np.asarray(f(*[ap.constant(v) for v in args_p]).numpy()))
            fm = np.sum(W * np.asarray(f(*[ap.constant(v) for v in args_m]).numpy()))
            num[i] = (fp - fm) / (2 * h)
        np.testing.assert_allclose(g.numpy().reshape(-1), num, rtol=1e-6, atol=1e-7)


def test_c10_the_case_numbers():
    W = np.arange(16.0).reshape(4, 4)
    dX, db = _grad(lambda X, b: ap.sum(W * (X + b)), np.zeros((4, 4)), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(dX.numpy(), W)
    np.testing.assert_array_equal(db.numpy(), [24.0, 28.0, 32.0, 36.0])


# --- C12 empty and 0-d ------------------------------------------------------------------
def test_c12_cumsum_of_empty():
    (g,) = _grad(lambda X: np.sum(np.cumsum(X, axis=-1)), np.zeros((2, 0)))
    assert g.shape == (2, 0)


@pytest.mark.parametrize("f", [np.sum, np.mean, np.prod, lambda x: np.cumsum(x)[0],
                               lambda x: np.exp(x), lambda x: x[()] * 2.0])
def test_c12_zero_d_sources_keep_shape(f):
    (g,) = _grad(lambda x: f(x), 1.5)
    assert g.shape == ()


# --- C17 sqrt at zero -------------------------------------------------------------------
def test_c17_written_out_norm_is_zero_at_zero_by_the_zero_times_inf_rule():
    # the square sends g = 2 sqrt(0) = 0 into sqrt, whose derivative there is inf: the
    # 0·inf rule (lesson 12) makes that contribution 0, the true gradient 2x = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        (g1,) = _grad(lambda x: ap.sqrt(ap.sum(x**2)) ** 2, np.zeros(3))
        (g2,) = _grad(lambda x: ap.exp(-ap.sqrt(ap.sum(x**2)) ** 2), np.zeros(3))
    np.testing.assert_array_equal(g1.numpy(), np.zeros(3))
    np.testing.assert_array_equal(g2.numpy(), np.zeros(3))
    # the norm itself has no derivative at 0: a nonzero upstream gradient meets sqrt's inf,
    # then the square's 0 (inf * 0 = nan, never a number that looks right)
    with np.errstate(divide="ignore", invalid="ignore"):
        (g3,) = _grad(lambda x: ap.sqrt(ap.sum(x**2)), np.zeros(3))
    assert np.isnan(g3.numpy()).all()


def test_c17_norm_helper_is_zero_at_zero_never_nan():
    (g1,) = _grad(lambda x: ap.norm(x) ** 2, np.zeros(3))
    (g2,) = _grad(lambda x: ap.exp(-ap.norm(x) ** 2), np.zeros(3))
    (g3,) = _grad(lambda x: ap.norm(x), np.zeros(3))
    (g4,) = _grad(lambda x: ap.sum(np.linalg.norm(x, axis=1)), np.array([[0.0, 0.0], [3.0, 4.0]]))
    for g in (g1, g2, g3):
        np.testing.assert_array_equal(g.numpy(), np.zeros(3))
    np.testing.assert_allclose(g4.numpy(), [[0.0, 0.0], [0.6, 0.8]])
    (g5,) = _grad(lambda x: ap.norm(x), [3.0, 4.0])
    np.testing.assert_allclose(g5.numpy(), [0.6, 0.8])


# --- C19 power ----------------------------------------------------------------------------
def test_c19_power_cases():
    (g,) = _grad(lambda x: x**3, -2.0)
    assert g.numpy() == 12.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a, b = ap.constant(-2.0), ap.constant(-3.0)
        with ap.GradientTape() as tape:
            tape.watch([a, b])
            y = a**b
        ga, gb = tape.gradient(y, [a, b])
    assert y.numpy() == -0.125
    assert ga.numpy() == -0.1875
    assert np.isnan(gb.numpy())
    _, gb0 = _grad(lambda a, b: a**b, 0.0, 1.0)
    assert gb0.numpy() == 0.0


def test_c19_x_times_sqrt_x_at_zero_is_the_true_zero():
    # d/dx [x * x**0.5] = x**0.5 + x * 0.5 * x**-0.5: at 0 the second term's upstream
    # gradient is x = 0, and 0 times the infinite derivative is 0 (the 0·inf rule)
    with np.errstate(divide="ignore", invalid="ignore"):
        (g,) = _grad(lambda x: x * x**0.5, 0.0)
    assert g.numpy() == 0.0
    (g,) = _grad(lambda x: x**1.5, 0.0)  # written as one power: 1.5 * 0**0.5 = 0
    assert g.numpy() == 0.0


# --- C25 in-place after forward -------------------------------------------------------------
def test_c25_every_in_place_form_is_refused_or_harmless():
    t = ap.constant([1.0, 2.0])
    v = ap.Variable([1.0, 2.0], name="v")
    for op in ("+=", "-=", "*=", "/=", "**=", "@="):
        # a Tensor one name holds is rebound to a new tensor (TF's eager semantics); held by
        # another name too (here the test's t), it is refused: numpy would change both
        ns = {"t": ap.constant([1.0, 2.0])}
        key = ns["t"]._key
        exec(f"t {op} t", ns)
        assert ns["t"]._key != key
        np.testing.assert_allclose(np.asarray(ns["t"]), eval(f"t.numpy() {op[:-1]} t.numpy()"))
        with pytest.raises(TypeError, match="something else also holds"):
            exec(f"t {op} t", {"t": t})
        assert t.numpy().tolist() == [1.0, 2.0]
        with pytest.raises(RuntimeError, match=r"Variable 'v': `v \S+ value` is not supported"):
            exec(f"v {op} v", {"v": v})
    assert v.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="item assignment"):
        t[0] = 5.0
    with pytest.raises(TypeError, match="out="):
        np.add(t, 1.0, out=np.zeros(2))
    arr = np.zeros(2)
    arr += t  # a constant's values into a numpy array: numpy's own add (corpus35 F3), harmless to every tape
    assert arr.tolist() == [1.0, 2.0] and t.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match=r"`arr` is a numpy array .*`arr \+= <Tensor>`"):
        arr += v  # a trainable Variable: refused (its gradient could be lost), arr unchanged
    assert arr.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(t)[0] = 9.0
    v = ap.Variable([1.0, 2.0])
    with ap.GradientTape() as tape:
        y = ap.sum(v * v)
    v.assign([10.0, 10.0])  # swaps in a new array: the saved values stay
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 4.0])


# --- explain: one test per cause ----------------------------------------------------------
def test_explain_never_watched_constant():
    x = ap.constant(3.0)
    with ap.GradientTape() as tape:
        y = x * x
    assert "never watched" in tape.explain(y, x) and "tape.watch" in tape.explain(y, x)


def test_explain_non_trainable_variable_and_watch_accessed_off():
    v = ap.Variable(3.0, trainable=False)
    with ap.GradientTape() as tape:
        y = v * v
    assert "non-trainable" in tape.explain(y, v)
    w = ap.Variable(3.0)
    with ap.GradientTape(watch_accessed_variables=False) as tape:
        y = w * w
    assert "watch_accessed_variables=False" in tape.explain(y, w)


def test_explain_integer_dtype():
    a = ap.constant([1, 2])
    with ap.GradientTape() as tape:
        y = a * 2
    assert "integer" in tape.explain(y, a)


def test_explain_stop_recording():
    x = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        with tape.stop_recording():
            y = x * x
        z = y * 3.0
    assert tape.gradient(z, x) is None
    assert "stop_recording" in tape.explain(z, x)


def test_explain_stop_recording_on_a_watched_tensor_used_later():
    x = ap.constant(2.0)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = ap.exp(x)
        z = y * x  # recorded, but y's path is cut
    assert tape.gradient(z, x).numpy() == np.exp(2.0)
    assert "stop_recording" in tape.explain(y, x)


def test_explain_stop_gradient():
    x = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        y = ap.stop_gradient(x * x) * 3.0
    assert tape.gradient(y, x) is None
    assert "stop_gradient" in tape.explain(y, x)


def test_explain_numpy_function():
    x = ap.Variable([1.0, 2.0])
    with ap.GradientTape() as tape:
        y = ap.sum(ap.numpy_function(np.sort, [x * 2.0], np.float64))
    assert tape.gradient(y, x) is None
    assert "numpy_function" in tape.explain(y, x)


def test_explain_variable_rebound_to_plain_array():
    # heuristic (documented): the plain array must meet a recorded value, as in any
    # model where another layer's Variables are still in use
    class Model:
        def __init__(self):
            self.w1 = ap.Variable([[1.0, 0.5], [0.2, 1.0]])
            self.w = ap.Variable([1.0, 2.0])

    m = Model()
    w_var = m.w
    m.w = m.w.numpy()  # the bug: the Variable replaced by a plain array
    x = ap.constant([3.0, 4.0])
    with ap.GradientTape() as tape:
        y = ap.sum(ap.tanh(m.w1 @ x) * m.w)
    gw1, gw = tape.gradient(y, [m.w1, w_var])
    assert gw is None and gw1.shape == (2, 2)
    why = tape.explain(y, w_var)
    assert "rebound" in why and "heuristic" in why


def test_explain_tape_already_used():
    x = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x).numpy() == 4.0
    assert "already used" in tape.explain(y, x)


def test_explain_connected_and_unrelated():
    x, u = ap.Variable(2.0), ap.Variable(1.0)
    with ap.GradientTape(persistent=True) as tape:
        y = x * x
        _ = u * 2.0
    assert "connected" in tape.explain(y, x)
    assert "does not depend" in tape.explain(y, u)


def test_explain_target_not_a_tensor():
    x = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        with pytest.warns(ap.TapeEscapeWarning, match="float"):
            y = float(x * x)
    assert "not a Tensor" in tape.explain(y, x)


def test_non_persistent_gradient_none_keeps_explanation():
    x = ap.constant(2.0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = ap.sum(ap.constant(np.asarray(x * 2.0)))
    with pytest.raises(TypeError, match=r"the target is a constant Tensor"):  # (fn41: was None)
        tape.gradient(y, x)
    assert "left the tape" in tape.explain(y, x)
