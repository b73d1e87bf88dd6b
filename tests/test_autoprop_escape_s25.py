"""review25a's partial escapes (session 25): a value that left the tape coming back through a keyword
argument of a recorded op (np.pad's constant_values=, np.linalg.norm's ord=), a real escape hidden by the
breadcrumb cap after 10,000 logged values, constants autoprop's own composites make (np.std, np.diagflat,
np.linspace) counted as the user's, and the ForwardAccumulator's boundary case (an escape read back by the
very next op). Every refused gradient's true value is stated from central differences; every allowed one is
checked against them."""

import contextlib
import warnings

import numpy as np
import pytest

import autoprop as ap


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        yield


def _central(f, x0, h=1e-6):
    x0 = np.asarray(x0, dtype=float)
    out = np.zeros_like(x0)
    for i in range(x0.size):
        e = np.zeros_like(x0)
        e.flat[i] = h
        out.flat[i] = (f(x0 + e) - f(x0 - e)) / (2 * h)
    return out


def _pad_loss(x):
    return np.sum(np.pad(x, 1, constant_values=float(x[0])))


def test_pad_constant_values_from_float_is_refused_in_reverse_and_forward_mode():
    """review25a H1: np.sum(np.pad(x, 1, constant_values=float(x[0]))) at [1, 2, 3] gave the gradient
    [1, 1, 1] (the truth [3, 1, 1]: x[0] is also each of the two padded entries) and the jvp 1.0 (truth 3.0),
    with no error: the escaped value came back as a keyword argument, which the check did not read."""
    x0 = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(_central(lambda v: np.sum(np.pad(v, 1, constant_values=v[0])), x0), [3, 1, 1],
                               rtol=1e-8)
    x = ap.Variable(x0)
    with _quiet():
        with ap.GradientTape() as tape:
            y = _pad_loss(x)
        with pytest.raises(ap.TapeEscapeError, match="left the tape implicitly"):
            tape.gradient(y, x)
        with ap.ForwardAccumulator(x, np.array([1.0, 0.0, 0.0])) as acc:
            y = _pad_loss(x)
        with pytest.raises(ap.TapeEscapeError, match="ForwardAccumulator.jvp"):
            acc.jvp(y)
    # a plain keyword constant that did not come from the tape, with no escape, is still differentiated
    with ap.GradientTape() as tape:
        y = np.sum(np.pad(x, 1, constant_values=7.0))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 1.0, 1.0])


def test_a_keyword_float_constant_counts_for_the_check_a_static_one_does_not():
    """The check reads every recorded op's keyword arguments as it reads its positional ones; the ones that
    cannot hold a value (an integer, a dtype, pinv's rcond threshold, a record's own saved arrays) do not
    count, so logging with float() then pinv or a cast stays allowed."""
    from autoprop.core.observe import kwargs_carry_value

    assert kwargs_carry_value({"constant_values": 2.5})
    assert kwargs_carry_value({"constant_values": np.array([1.0, 2.0])})
    assert not kwargs_carry_value({"axis": 0, "keepdims": False, "dtype": np.dtype("float64")})
    assert not kwargs_carry_value({"rcond": 1e-15})
    assert not kwargs_carry_value({"saved": np.ones(3)})
    a0 = np.array([[2.0, 0.3], [0.1, 1.5], [0.4, -0.2]])
    a = ap.Variable(a0)
    with _quiet(), ap.GradientTape() as tape:
        _logged = float(np.sum(a))
        y = np.sum(np.linalg.pinv(a)) + np.sum(a.astype(np.float64))
    g = tape.gradient(y, a).numpy()
    np.testing.assert_allclose(g, _central(lambda v: np.sum(np.linalg.pinv(v)) + np.sum(v), a0), rtol=1e-6)


def test_norm_order_from_float_is_refused():
    """review25a LOW: np.linalg.norm(x, ord=float(t)) read the order as a branch (2.0 is the 2-norm), so the
    derivative through the order, d||x||_p/dp, was lost with no error. A float order is a value the check
    sees (a finite one: inf picks max|x|, whose slope in p is 0 in the limit); an integer order is static."""
    x0 = np.array([1.0, 2.0, 3.0, 4.0])

    def f(v):  # ||v||_p with p = v[0] + 1
        p = v[0] + 1
        return np.sum(np.abs(v) ** p) ** (1 / p)
    truth = _central(f, x0)
    assert abs(truth[0] - np.linalg.norm(x0) ** -1 * x0[0]) > 0.3  # the order's own slope is not small
    for order in (lambda c: c + 1, lambda c: (c + 1) * 1.5, lambda c: -(c + 1)):
        x = ap.Variable(x0)
        with _quiet(), ap.GradientTape() as tape:
            y = np.linalg.norm(x, ord=order(float(x[0])))
        with pytest.raises(ap.TapeEscapeError):
            tape.gradient(y, x)
    x = ap.Variable(x0.reshape(2, 2))
    with _quiet(), ap.GradientTape() as tape:
        y = np.linalg.norm(x, ord=float(x[0, 0]))  # the matrix 1-norm, a float order
    with pytest.raises(ap.TapeEscapeError):
        tape.gradient(y, x)
    for order in (2, 2.0, np.inf, 1):  # no escape: the same numbers as numpy's and a gradient
        x = ap.Variable(x0)
        with ap.GradientTape() as tape:
            y = np.linalg.norm(x, ord=order)
        assert float(y.numpy()) == pytest.approx(np.linalg.norm(x0, ord=order), rel=1e-15)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                                   _central(lambda v, o=order: np.linalg.norm(v, ord=o), x0), rtol=1e-6)


def _logged_then_escaped(n, how):
    """review25a H2's reproducer (r/crumbs.py): ``n`` logged values, then a partial escape (an assignment into an
    ndarray) that the loss reads back; the true gradient of sum(w*w) + 0.5 sum(w*w) is 3 w = [3, 6]."""
    w = ap.Variable([1.0, 2.0])
    with _quiet(), ap.GradientTape() as tape:
        h = w * w
        for _ in range(n):
            _v = h[0].item() if how == "item" else (h[0].numpy() if how == "numpy" else float(h[1]))
        out = np.zeros(2)
        out[0] = h[0]
        out[1] = h[1]
        loss = np.sum(out * np.array([1.0, 1.0])) + 0.5 * np.sum(w * w)
    return tape, loss, w


def test_a_real_escape_after_ten_thousand_logged_values_is_still_refused():
    """review25a H2: after 10,000 breadcrumbs on one tape (observe.MAX_CRUMBS, the explicit exits counted too)
    the partial escape was not recorded: the gradient [1, 2] was given, the truth [3, 6]."""
    from autoprop.core import observe

    for how in ("numpy", "item"):
        tape, loss, w = _logged_then_escaped(observe.MAX_CRUMBS, how)
        assert len(tape._escapes) == observe.MAX_CRUMBS  # the breadcrumbs stay capped
        with pytest.raises(ap.TapeEscapeError, match="left the tape implicitly"):
            tape.gradient(loss, w)
    # implicit escapes beyond the cap: kept one per tensor (the first, and a count), so memory stays bounded by
    # the tape's own size; the message counts all of them
    tape, loss, w = _logged_then_escaped(observe.MAX_CRUMBS + 500, "float")
    assert len(tape._escapes) == observe.MAX_CRUMBS
    with pytest.raises(ap.TapeEscapeError, match="10502 values"):
        tape.gradient(loss, w)
    # the check still tells escapes by source: beyond the cap, the value of another source
    w, c = ap.Variable([1.0, 2.0]), ap.Variable([3.0])
    with _quiet(), ap.GradientTape(persistent=True) as tape:
        for _ in range(observe.MAX_CRUMBS):
            _v = c.numpy()
        cf = float(c[0] * 2.0)  # an implicit escape of c, beyond the cap
        loss = np.sum(w * w) * cf
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), [12.0, 24.0])  # d/dw 6 (w0^2 + w1^2)
    with pytest.raises(ap.TapeEscapeError):
        tape.gradient(loss, [w, c])


def test_escape_crumbs_stay_bounded_in_a_long_logged_loop():
    """One recording with many float() logs of the same tensor: one kept entry beyond the cap, not one per log."""
    from autoprop.core import observe

    w = ap.Variable([1.0, 2.0])
    with _quiet(), ap.GradientTape() as tape:
        s = np.sum(w * w)
        for _ in range(observe.MAX_CRUMBS + 3000):
            _v = float(s)
    assert len(tape._escapes) == observe.MAX_CRUMBS
    assert len(tape._escape_overflow) == 1
    np.testing.assert_array_equal(tape.gradient(s, w).numpy(), [2.0, 4.0])  # made before the escapes


def test_forward_mode_refuses_an_escape_read_back_by_the_very_next_op():
    """review25a's mutation (ForwardAccumulator._refuse_partial_escape's ``e[2] <= last`` made ``<``): an escape
    counted at op n and read back by op n itself. c = float(x[0]); y = x * c at x = [1, 2]: the true tangent along
    (1, 0) is d(x * x0)/dx0 = (2 x0, x1) = [2, 2] (the recorded spelling's, below); the mutant gave [1, 0]."""
    x = ap.Variable([1.0, 2.0])
    with _quiet(), ap.ForwardAccumulator(x, np.array([1.0, 0.0])) as acc:
        c = float(x[0])
        y = x * c
    with pytest.raises(ap.TapeEscapeError, match="ForwardAccumulator.jvp"):
        acc.jvp(y)
    with _quiet(), ap.ForwardAccumulator(x, np.array([1.0, 0.0])) as acc:
        y = x * x[0]  # the recorded spelling
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [2.0, 2.0])


OWN = {  # composites whose implementation makes a float constant of its own (a count, 0..num-1, an appended 0)
    "std": (lambda x: np.std(x), lambda v: np.std(v)),
    "std ddof": (lambda x: np.std(x, ddof=1), lambda v: np.std(v, ddof=1)),
    "std where": (lambda x: np.std(x, where=np.array([True, True, False, True])),
                  lambda v: np.std(v, where=np.array([True, True, False, True]))),
    "diagflat": (lambda x: np.sum(np.diagflat(x) ** 3),
                 lambda v: np.sum(np.diagflat(v) ** 3)),
    "diag": (lambda x: np.sum(np.diag(x) ** 3),
             lambda v: np.sum(np.diag(v) ** 3)),
    "linspace": (lambda x: np.sum(np.linspace(x[0], x[1], 5) ** 2), lambda v: np.sum(np.linspace(v[0], v[1], 5) ** 2)),
    "gradient": (lambda x: np.sum(np.gradient(x) ** 2), lambda v: np.sum(np.gradient(v) ** 2)),
    "gradient 2": (lambda x: np.sum(np.gradient(x, 2, edge_order=2) ** 2),
                   lambda v: np.sum(np.gradient(v, 2, edge_order=2) ** 2)),
    "nanmean": (lambda x: np.nanmean(x ** 2), lambda v: np.nanmean(v ** 2)),
    "tril": (lambda x: np.sum(np.tril(x.reshape(2, 2)) ** 2), lambda v: np.sum(np.tril(v.reshape(2, 2)) ** 2)),
    "trapezoid": (lambda x: np.trapezoid(x ** 2), lambda v: np.trapezoid(v ** 2)),
    "corrcoef": (lambda x: np.sum(np.corrcoef(x.reshape(2, 2)) * 1), lambda v: np.sum(np.corrcoef(v.reshape(2, 2)))),
    # session 26 (review25a's leftover): the quantile family's weights from an integer or autoprop's own q, and
    # vander's column of ones
    "nanmedian": (lambda x: np.nanmedian(x ** 2), lambda v: np.nanmedian(v ** 2)),
    "nanmedian axis": (lambda x: np.sum(np.nanmedian(np.stack([x, x ** 2]), axis=1)),
                       lambda v: np.sum(np.nanmedian(np.stack([v, v ** 2]), axis=1))),
    "percentile 30": (lambda x: np.percentile(x ** 2, 30), lambda v: np.percentile(v ** 2, 30)),
    "percentile [10, 90]": (lambda x: np.sum(np.percentile(x ** 2, [10, 90])), lambda v: np.sum(np.percentile(v ** 2, [10, 90]))),
    "nanpercentile 35": (lambda x: np.nanpercentile(x ** 2, 35), lambda v: np.nanpercentile(v ** 2, 35)),
    "quantile 1": (lambda x: np.quantile(x ** 2, 1), lambda v: np.quantile(v ** 2, 1)),
    "quantile of x": (lambda x: np.quantile(x ** 2, x[0] / 4), lambda v: np.quantile(v ** 2, v[0] / 4)),
    "vander": (lambda x: np.sum(np.vander(x / 4, 3) ** 2), lambda v: np.sum(np.vander(v / 4, 3) ** 2)),
}


@pytest.mark.parametrize("name", list(OWN))
def test_logging_then_a_composite_with_its_own_constants_is_not_refused(name):
    """review25a M2: a value logged with float() mid-tape and never used, then np.std, np.diagflat or np.linspace,
    raised TapeEscapeError: their implementations' own constants (sqrt(n - ddof), the appended 0, 0..num-1) looked
    like a place the value could come back. Marked at creation (observe.own), they do not count; the gradient is
    central differences'."""
    fn, ref = OWN[name]
    x0 = np.array([1.0, 2.0, 4.0, 7.0])
    x = ap.Variable(x0)
    with _quiet(), ap.GradientTape() as tape:
        _logged = float(np.sum(x))
        y = fn(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), _central(ref, x0), rtol=1e-7, atol=1e-9)
    with _quiet(), ap.GradientTape() as tape:  # the user's constant still counts: the logged value used
        c = float(np.sum(x))
        y = fn(x) * c
    with pytest.raises(ap.TapeEscapeError):
        tape.gradient(y, x)


def test_an_own_mark_never_spreads_to_a_value_computed_with_the_users():
    """observe.own's marks: numpy arithmetic on a marked float or array gives an unmarked one (the user's escaped
    value mixed in would otherwise pass the check), and an operation with a Tensor records the marked operand."""
    from autoprop.core.observe import OwnArray, OwnFloat, carries_value, own

    f, a = own(2.0), own(np.arange(3.0))
    assert type(f) is OwnFloat and type(a) is OwnArray and not carries_value(f) and not carries_value(a)
    for v in (f * 3.0, f + np.float64(1.0), a * 2.0, a + np.ones(3), np.concatenate([a, np.ones(1)]), a.sum(),
              np.dot(a, np.ones(3)), np.sqrt(a)):
        assert carries_value(v) and type(v) not in (OwnFloat, OwnArray), type(v)
    t = ap.constant([1.0, 2.0, 3.0])
    for v in (a * t, t * a, f * t):
        assert isinstance(v, ap.Tensor) and type(v._value) is np.ndarray


@pytest.mark.parametrize("q", [0.3, np.array([0.1, 0.9])])
def test_a_users_float_quantile_still_counts_after_a_logged_value(q):
    """The quantile weights come from q: a float q the user gave could be a value that left the tape (as the 0.3 of
    x * 0.3), so it counts; autoprop's own q (nanmedian's 0.5, an integer percentile's q / 100) does not (above).
    The same call with the explicit exit .item() is not refused."""
    x0 = np.array([1.0, 2.0, 4.0, 7.0])
    x = ap.Variable(x0)
    with _quiet(), ap.GradientTape() as tape:
        _logged = float(np.sum(x))
        y = np.sum(np.quantile(x, q))
    with pytest.raises(ap.TapeEscapeError):
        tape.gradient(y, x)
    with _quiet(), ap.GradientTape() as tape:
        _logged = np.sum(x).item()
        y = np.sum(np.quantile(x, q))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), _central(lambda v: np.sum(np.quantile(v, q)), x0),
                               rtol=1e-7, atol=1e-9)


def _layer_cases():
    from autoprop import layers as L
    return {
        "LayerNorm": (lambda: L.LayerNorm(5), (4, 5)), "LeakyReLU": (lambda: L.LeakyReLU(), (4, 5)),
        "GELU": (lambda: L.GELU(), (4, 5)), "GELU-tanh": (lambda: L.GELU(approximate="tanh"), (4, 5)),
        "ELU": (lambda: L.ELU(), (4, 5)), "Softplus": (lambda: L.Softplus(), (4, 5)),
        "BatchNorm1D": (lambda: L.BatchNorm1D(5), (4, 5)), "BatchNorm2D": (lambda: L.BatchNorm2D(2), (2, 2, 3, 3)),
        "BatchNormalization": (lambda: L.BatchNormalization(), (4, 5)),
        "Dropout": (lambda: L.Dropout(0.3, rng=0), (4, 5)), "RNN": (lambda: L.RNN(5, 3, rng=0), (2, 3, 5)),
        "LSTM": (lambda: L.LSTM(5, 3, rng=0), (2, 3, 5)), "GRU": (lambda: L.GRU(5, 3, rng=0), (2, 3, 5)),
        "MultiHeadAttention": (lambda: L.MultiHeadAttention(4, 2, rng=0), (2, 3, 4)),
        "TransformerBlock": (lambda: L.TransformerBlock(4, 2, 8, rng=0), (2, 3, 4)),
    }


@pytest.mark.parametrize("name", list(_layer_cases()))
@pytest.mark.parametrize("training", [False, True])
def test_logging_then_autoprops_own_layers_is_not_refused(name, training):
    """review26a M: after a float() logged mid-tape, LayerNorm, LeakyReLU, GELU, ELU, Softplus (and BatchNorm in
    either mode, Dropout training, RNN/LSTM/GRU's zero initial state, attention's 1/sqrt(d)) were refused "the result
    would be wrong": their own constants counted as the user's. Now the gradient is the one without the float()."""
    make, shape = _layer_cases()[name]
    x0 = np.random.default_rng(3).standard_normal(shape)
    grads = []
    for logged in (False, True):
        layer = make()  # (the same initial weights and dropout mask each time: seeded)
        x = ap.Variable(x0)
        with _quiet(), ap.GradientTape() as tape:
            h = np.tanh(x)
            if logged:
                _print_me = float(np.mean(h))
            y = layer(h, training=training)
            loss = np.sum(np.sin(y))
        grads.append(tape.gradient(loss, x).numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
