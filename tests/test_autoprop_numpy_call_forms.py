"""Ordinary numpy call forms that autoprop refused while HIPS autograd's numpy wrapper
differentiates the function (session 10's coverage measurement against autograd's
``numpy_vjps.py``/``linalg.py``: 137 functions, 543 call forms; before, 128 functions had
every form right, after this file and ``np.linalg.eig`` (tests/test_autoprop_linalg.py) 134,
the other 3 being ``np.array``/``np.full`` of Tensors, which numpy does not dispatch (a
TapeEscapeWarning says so), and ``nan_to_num`` past a nan (the 0*inf rule: 0, autograd nan);
none refused):

* ``np.sum``/``np.prod``/``np.max``/``np.min`` with ``initial=``, ``np.sum``/``np.mean``/
  ``np.prod`` with ``where=`` (and max/min with ``where=`` and ``initial=``): refused
  ("that option has no registered derivative"). HIPS autograd takes them but ignores
  ``where=`` (a wrong gradient), so the oracle here is central differences and numpy's values.
* the ndarray methods ``t.repeat``, ``t.take``, ``t.cumprod``, ``t.conj``, ``t.real``,
  ``t.imag``, ``t.mT``, ``t.all``/``any``/``argsort``/``nonzero``: AttributeError.
* ``np.take(t, i, mode='raise')`` (numpy's default, spelled out), ``mode='wrap'``/``'clip'``:
  refused.
* ``np.linalg.det`` and ``np.linalg.pinv`` of 0 x 0 (and 3 x 0) matrices: an IndexError or
  "zero-size array to reduction operation maximum" in the backward pass.

Beyond autograd's list, ordinary numpy code that autoprop refused: ``np.add.reduce`` and the
other ufunc methods that are a recorded function, ``np.convolve``/``np.correlate``,
``np.trapezoid``, ``np.polyval``, ``np.quantile``/``np.percentile``, ``np.apply_along_axis``
and ``np.float_power``.

Each is checked in reverse mode (VJP) and forward mode (JVP) against central differences and,
where autograd gets it right, against autograd.
"""

import types
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central

import autoprop as ap
import autoprop.numpy as apn

R = np.random.default_rng(10)
X = R.standard_normal((3, 4))
MASK = X > 0


def _vjp_jvp(f, x, w, t):
    """autoprop's gradient of sum(f(x) * w) and its JVP along t, and f's value."""
    v = ap.Variable(x)
    with ap.GradientTape() as tape:
        y = f(v)
        loss = ap.reduce_sum(y * w)
    g = tape.gradient(loss, v)
    v2 = ap.Variable(x)
    with ap.ForwardAccumulator(v2, t) as acc:
        y2 = f(v2)
    return y.numpy(), g.numpy(), acc.jvp(y2).numpy()


def _check(f, x=X, *, autograd_f=None):
    want = np.asarray(f(x))
    w = R.standard_normal(want.shape)
    t = R.standard_normal(np.shape(x))
    y, g, j = _vjp_jvp(f, x, w, t)
    assert y.shape == want.shape and y.dtype == want.dtype
    np.testing.assert_allclose(y, want, rtol=1e-13, atol=1e-15)
    cd = central(lambda z: np.sum(np.asarray(f(z)) * w), x, h=1e-6)
    np.testing.assert_allclose(g, cd, rtol=1e-6, atol=1e-8)
    h = 1e-6
    np.testing.assert_allclose(j, (np.asarray(f(x + h * t)) - np.asarray(f(x - h * t))) / (2 * h),
                               rtol=1e-6, atol=1e-8)
    if autograd_f is not None:
        oracle = autograd.grad(lambda z: anp.sum(autograd_f(z) * w))(x)
        np.testing.assert_allclose(g, oracle, rtol=1e-12, atol=1e-14)
    return g


REDUCTIONS = [  # (id, f on numpy's names, autograd's f or None where autograd is wrong)
    ("sum initial", lambda a: np.sum(a, initial=1.5), lambda a: anp.sum(a) + 1.5),
    ("sum axis where", lambda a: np.sum(a, axis=0, where=MASK), None),
    ("sum method where initial", lambda a: a.sum(axis=1, where=MASK, initial=1.0), None),
    ("mean where", lambda a: np.mean(a, axis=1, where=MASK), None),
    ("mean where keepdims", lambda a: np.mean(a, axis=(0, 1), where=MASK, keepdims=True), None),
    ("prod where initial", lambda a: np.prod(a, axis=1, where=MASK, initial=2.0), None),
    ("max initial", lambda a: np.max(a, axis=0, initial=0.5),
     lambda a: anp.maximum(anp.max(a, axis=0), 0.5)),
    ("amin where initial", lambda a: np.amin(a, axis=1, where=MASK, initial=0.3), None),
    ("max where initial keepdims", lambda a: np.max(a, where=MASK, initial=-9.0, keepdims=True), None),
    ("method max initial", lambda a: a.max(axis=1, initial=1.0), None),
]


@pytest.mark.parametrize("f, ag", [c[1:] for c in REDUCTIONS], ids=[c[0] for c in REDUCTIONS])
def test_numpy_s_initial_and_where_of_the_reductions_are_recorded(f, ag):
    # before: TypeError "autoprop cannot record numpy.sum(..., where=...): that option has
    # no registered derivative"; the entries where= leaves out get gradient 0
    _check(f, autograd_f=ag)


def test_where_leaves_the_masked_entries_gradient_zero_and_mean_counts_the_kept():
    g = _check(lambda a: np.mean(a, axis=1, where=MASK))
    np.testing.assert_array_equal(g[~MASK], 0.0)
    w = np.ones(3)
    y, g, _ = _vjp_jvp(lambda a: np.mean(a, axis=1, where=MASK), X, w, np.ones_like(X))
    np.testing.assert_allclose(g, MASK / MASK.sum(axis=1, keepdims=True), rtol=1e-15)


def test_an_empty_reduction_gives_initial_as_numpy():
    e = np.ones((0, 3))
    for f in (lambda a: np.max(a, axis=0, initial=0.25), lambda a: np.sum(a, axis=0, initial=2.0),
              lambda a: np.prod(a, axis=0, initial=3.0)):
        v = ap.Variable(e)
        with ap.GradientTape() as tape:
            y = f(v)
            loss = ap.reduce_sum(y)
        np.testing.assert_array_equal(y.numpy(), f(e))
        assert tape.gradient(loss, v).shape == (0, 3)


def test_where_and_initial_refusals_say_what_numpy_says():
    x = ap.Variable(X)
    with pytest.raises(ValueError, match=r"numpy.max\(\.\.\., where=\.\.\.\) needs initial="):
        np.max(x, where=MASK)
    with pytest.raises(ValueError, match=r"a mask of shape \(2,\) does not broadcast"):
        np.sum(x, where=np.array([True, False]))
    with pytest.raises(TypeError, match="unexpected keyword argument 'initial'"):
        x.mean(initial=1.0)  # np.mean has no initial= (numpy itself raises this for np.mean)


METHODS = [  # (id, method form, numpy's function form, autograd's)
    ("repeat", lambda a: a.repeat(2, axis=1), lambda a: anp.repeat(a, 2, axis=1)),
    ("repeat flat", lambda a: a.repeat(3), lambda a: anp.repeat(a, 3)),
    ("take", lambda a: a.take([0, 5, 5, -1]), lambda a: anp.ravel(a)[np.array([0, 5, 5, -1])]),
    ("take axis", lambda a: a.take([2, 0, 2], axis=1), lambda a: a[:, np.array([2, 0, 2])]),
    ("cumprod", lambda a: a.cumprod(axis=1), None),
    ("conj", lambda a: a.conj(), lambda a: anp.conj(a)),
    ("conjugate", lambda a: a.conjugate(), lambda a: anp.conjugate(a)),
    ("real", lambda a: a.real * 2.0, lambda a: anp.real(a) * 2.0),
    ("mT", lambda a: a.mT, lambda a: anp.swapaxes(a, -1, -2)),
]


@pytest.mark.parametrize("f, ag", [c[1:] for c in METHODS], ids=[c[0] for c in METHODS])
def test_the_ndarray_methods_a_student_calls_are_on_tensors(f, ag):
    # before: AttributeError: 'Variable' object has no attribute 'repeat' (& co.)
    _check(f, autograd_f=ag)


def test_the_value_only_methods_give_numpy_s_answers():
    x = ap.Variable(X)
    assert x.all() == X.all() and (x.any(axis=0) == X.any(axis=0)).all()
    np.testing.assert_array_equal(np.asarray(x.argsort(axis=0)), X.argsort(axis=0))
    for got, want in zip((x > 0).nonzero(), (X > 0).nonzero()):
        np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(x.imag.numpy(), np.zeros_like(X))
    with pytest.raises(TypeError, match=r"t = np.partition\(t, kth, axis=-1\)"):
        x.partition(1)


@pytest.mark.parametrize("mode, idx", [("raise", [0, 5, 5]), ("wrap", [-1, 13, 2]), ("clip", [-3, 20, 4])])
def test_np_take_s_modes(mode, idx):
    # before: mode='raise' (numpy's default, spelled out) was refused with every other mode
    w = np.array([1.0, 10.0, 100.0])
    y, g, _ = _vjp_jvp(lambda a: np.take(a, idx, mode=mode), X, w, np.ones_like(X))
    np.testing.assert_array_equal(y, np.take(X, idx, mode=mode))
    want = np.zeros(X.size)
    np.add.at(want, np.take(np.arange(X.size), idx, mode=mode), w)  # repeats accumulate
    np.testing.assert_array_equal(g, want.reshape(X.shape))
    _check(lambda a: np.take(a, [0, 3, 3] if mode == "raise" else idx, axis=1, mode=mode))
    with pytest.raises(ValueError, match="mode must be 'raise', 'wrap' or 'clip'"):
        np.take(ap.Variable(X), [0], mode="nope")


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0)])
def test_det_of_an_empty_matrix_is_one_with_an_empty_gradient(shape):
    # before: "zero-size array to reduction operation maximum which has no identity" in backward
    v = ap.Variable(np.zeros(shape))
    with ap.GradientTape() as tape:
        y = np.linalg.det(v)
        loss = ap.reduce_sum(y)
    np.testing.assert_array_equal(y.numpy(), np.linalg.det(np.zeros(shape)))
    assert tape.gradient(loss, v).shape == shape
    with ap.ForwardAccumulator(v, np.zeros(shape)) as acc:
        y = np.linalg.det(v)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), np.zeros(shape[:-2]))


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3)])
def test_pinv_of_an_empty_matrix(shape):
    # before: IndexError: index -1 is out of bounds for axis 0 with size 0 (the rank test)
    v = ap.Variable(np.zeros(shape))
    with ap.GradientTape() as tape:
        y = np.linalg.pinv(v)
        loss = ap.reduce_sum(y)
    assert y.shape == shape[::-1]
    assert tape.gradient(loss, v).shape == shape


UFUNC_METHODS = [  # (id, ufunc-method form, autograd's equivalent)
    ("add.reduce", lambda a: np.add.reduce(a), lambda a: anp.sum(a, axis=0)),
    ("add.reduce axis keepdims", lambda a: np.add.reduce(a, axis=1, keepdims=True),
     lambda a: anp.sum(a, axis=1, keepdims=True)),
    ("add.reduce axis tuple", lambda a: np.add.reduce(a, axis=(0, 1)), lambda a: anp.sum(a)),
    ("multiply.reduce None", lambda a: np.multiply.reduce(a, axis=None), lambda a: anp.prod(a)),
    ("maximum.reduce", lambda a: np.maximum.reduce(a, axis=1), lambda a: anp.max(a, axis=1)),
    ("minimum.reduce", lambda a: np.minimum.reduce(a), lambda a: anp.min(a, axis=0)),
    ("logaddexp.reduce", lambda a: np.logaddexp.reduce(a, axis=1),
     lambda a: anp.log(anp.sum(anp.exp(a), axis=1))),
    ("logaddexp.reduce keepdims", lambda a: np.logaddexp.reduce(a, axis=1, keepdims=True),  # (review26a: refused)
     lambda a: anp.log(anp.sum(anp.exp(a), axis=1, keepdims=True))),
    ("add.accumulate", lambda a: np.add.accumulate(a), lambda a: anp.cumsum(a, axis=0)),
    ("multiply.accumulate", lambda a: np.multiply.accumulate(a, axis=1), None),
    ("maximum.accumulate", lambda a: np.maximum.accumulate(a, axis=1), None),  # (autograd lacks
    ("minimum.accumulate", lambda a: np.minimum.accumulate(a), None),  # them: central differences)
    ("multiply.outer", lambda a: np.multiply.outer(a[0], a[1]), lambda a: anp.outer(a[0], a[1])),
    ("subtract.outer 2-d", lambda a: np.subtract.outer(a, a[0]),
     lambda a: anp.reshape(a, (3, 4, 1)) - a[0]),
]


@pytest.mark.parametrize("f, ag", [c[1:] for c in UFUNC_METHODS], ids=[c[0] for c in UFUNC_METHODS])
def test_ufunc_reduce_accumulate_and_outer_are_the_numpy_functions_they_compute(f, ag):
    # before: TypeError "autoprop cannot record numpy.add.reduce on a Tensor: only plain
    # calls of ufuncs are recorded"
    _check(f, autograd_f=ag)


def _with_names(f, module):
    """``f`` with its global ``np`` bound to ``module`` (the table's numpy forms through
    ``autoprop.numpy``'s names)."""
    return types.FunctionType(f.__code__, dict(f.__globals__, np=module), f.__name__, f.__defaults__,
                              f.__closure__)


@pytest.mark.parametrize("f, ag", [c[1:] for c in UFUNC_METHODS], ids=[c[0] for c in UFUNC_METHODS])
def test_autoprop_numpy_ufuncs_have_the_methods_numpy_code_calls(f, ag):
    """``anp.add.reduce``, ``anp.maximum.accumulate``, ``anp.multiply.outer``,
    ``anp.logaddexp.reduce`` ... (tester25a: AttributeError "'function' object has no attribute
    'reduce'"): the same records as numpy's own methods on Tensors, checked as those are
    (central differences, forward mode, autograd where it has the function)."""
    _check(_with_names(f, apn), autograd_f=ag)


def test_autoprop_numpy_ufunc_methods_take_numpys_positional_arguments_and_plain_arrays():
    x = ap.constant(X)
    np.testing.assert_array_equal(apn.add.reduce(x, 1).numpy(), np.add.reduce(X, 1))
    np.testing.assert_array_equal(apn.maximum.reduce(x, 1, None, None, True).numpy(),
                                  np.maximum.reduce(X, 1, keepdims=True))
    np.testing.assert_array_equal(apn.multiply.accumulate(x, 1).numpy(), np.multiply.accumulate(X, 1))
    # numpy's order after the array: axis, dtype, out (review26a's surviving mutant swapped dtype and out)
    r = apn.add.reduce(x, 1, np.float32)
    assert r.dtype == np.add.reduce(X, 1, np.float32).dtype == np.float32
    with pytest.raises(TypeError, match=r"numpy.sum\(\.\.\., out=\.\.\.\): writing into an existing array"):
        apn.add.reduce(x, 1, None, np.empty(X.shape[0]))
    out = apn.add.reduce(X)  # a plain array: numpy's own values, as a constant Tensor
    assert isinstance(out, ap.Tensor) and out.dtype == np.float64
    np.testing.assert_array_equal(out.numpy(), np.add.reduce(X))
    z = np.zeros(3)  # ufunc.at on plain arrays: numpy's own, in place
    assert apn.add.at(z, [0, 0, 2], 1.0) is None
    np.testing.assert_array_equal(z, [2.0, 0.0, 1.0])
    apn.multiply.at(z, indices=[0], b=3.0)  # (by keyword too: never dropped)
    np.testing.assert_array_equal(z, [6.0, 0.0, 1.0])
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):
        apn.add.at(z, [0], 1.0, where=True)
    assert (apn.add.nin, apn.add.nout, apn.add.identity) == (2, 1, 0)
    with pytest.raises(TypeError, match=r"numpy.add.at on a Tensor.*writes in place"):
        apn.add.at(x, [0], 1.0)
    with pytest.raises(TypeError, match=r"numpy.add.reduceat on a Tensor.*np.stack\(\[np.sum\(x\[i:j\]"):
        apn.add.reduceat(x, [0, 2])
    # (logaddexp.accumulate is recorded, as logcumsumexp: tests/test_autoprop_lse_s27.py)
    np.testing.assert_array_equal(np.asarray(apn.logaddexp.accumulate(x)), np.logaddexp.accumulate(x.numpy()))
    with pytest.raises(TypeError, match=r"multiple values for argument 'axis'"):
        apn.add.reduce(x, 1, axis=0)
    with pytest.raises(TypeError, match=r"autoprop cannot record numpy.logaddexp.reduce\(\.\.\., initial=\.\.\.\)"):
        apn.logaddexp.reduce(x, 1, initial=0.0)  # (the name was 'numpy.numpy.logaddexp.reduce')


def test_the_hinted_running_logsumexp_is_recorded_and_right():
    """The rewrite session 26's refusal of logaddexp.accumulate named (logsumexp of the masked rows): numpy's
    values, and d y_j / d x_i = exp(x_i - y_j) for i <= j (the softmax of each prefix)."""
    from autoprop.scipy.special import logsumexp

    x0, w = R.standard_normal(5), R.standard_normal(5)
    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = logsumexp(np.where(np.tri(5, dtype=bool), x, -np.inf), axis=1)
        loss = ap.reduce_sum(y * w)
    want = np.logaddexp.accumulate(x0)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-15)
    jac = np.exp(x0[None, :] - want[:, None]) * np.tri(5)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), w @ jac, rtol=1e-13)


def test_running_max_and_min_route_each_gradient_to_the_running_extreme():
    """np.maximum.accumulate (a drawdown's running max) was refused by a message that said it
    was supported. jax.lax.cummax gives [1, 5, 0, 4] and cummin [10, 0, 0, 0] below. Ties
    (session 19): split evenly among the tied elements, as the max reduction of each prefix
    (the registry's rule; it was the first position; torch's cummax takes the last, jax splits
    by its scan tree: subgradients all); a NaN stays, as numpy's."""
    w = np.arange(1.0, 5.0)
    for x0, u, want in [([1.0, 3.0, 2.0, 5.0], np.maximum, [1, 5, 0, 4]),
                        ([1.0, 3.0, 2.0, 5.0], np.minimum, [10, 0, 0, 0]),
                        ([3.0, 3.0, 1.0, 4.0], np.maximum, [3.5, 2.5, 0, 4]),
                        ([2.0, np.nan, 1.0, 5.0], np.maximum, [1, 9, 0, 0])]:
        v = ap.Variable(np.array(x0))
        with ap.GradientTape() as tape:
            r = u.accumulate(v)
            y = np.sum(r * w)
        np.testing.assert_array_equal(r.numpy(), u.accumulate(np.array(x0)))
        np.testing.assert_array_equal(tape.gradient(y, v).numpy(), want)


def test_the_other_ufunc_methods_are_refused_by_name():
    x = ap.Variable(X)
    with pytest.raises(TypeError, match=r"numpy.add.at on a Tensor.*writes in place"):
        np.add.at(x, [0], 1.0)
    with pytest.raises(TypeError, match=r"numpy.hypot.reduce on a Tensor"):
        np.hypot.reduce(x)


@pytest.mark.parametrize("fn", [np.convolve, np.correlate])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, m", [(5, 3), (3, 5), (4, 4), (2, 5), (6, 1)])
def test_convolve_and_correlate_every_mode_and_length(fn, mode, n, m):
    # before: "autoprop cannot record numpy.convolve on a Tensor: it has no registered
    # derivative"; numpy swaps the pair when v is the longer (correlate also reverses)
    a, v = R.standard_normal(n), R.standard_normal(m)  # (autograd has no convolve: numpy
    assert _check(lambda z: fn(z, v, mode), a).shape == (n,)  # and central differences)
    assert _check(lambda z: fn(a, z, mode), v).shape == (m,)


def test_convolve_of_a_signal_with_an_integer_kernel_and_its_refusals():
    x = R.standard_normal(6)
    _check(lambda z: np.convolve(z, np.array([1, -2, 1])), x)  # a second difference
    _check(lambda z: np.convolve(z, np.ones(3) / 3, mode="same"), x)  # a moving average
    with pytest.raises(ValueError, match="mode must be 'full', 'same' or 'valid'"):
        np.convolve(ap.Variable(x), x, mode="circular")
    with pytest.raises(ValueError, match=r"non-empty 1-D arrays; got shapes \(2, 3\)"):
        np.convolve(ap.Variable(x.reshape(2, 3)), x)


X35 = R.standard_normal((3, 5))
NUMERIC = [  # (id, numpy call, autograd's equivalent or None)
    ("trapezoid", lambda a: np.trapezoid(a), lambda a: anp.sum((a[:, 1:] + a[:, :-1]) / 2, axis=-1)),
    ("trapezoid dx axis", lambda a: np.trapezoid(a, dx=0.5, axis=0), None),
    ("trapezoid x", lambda a: np.trapezoid(a, x=np.array([0.0, 0.1, 0.5, 0.6, 1.0])), None),
    ("trapezoid of x", lambda a: np.trapezoid(X35[0], x=a[0]), None),
    ("polyval x", lambda a: np.polyval(np.array([1.0, -2.0, 3.0]), a), lambda a: a * a - 2 * a + 3),
    ("polyval p", lambda a: np.polyval(a[0], 0.7), None),
    ("quantile scalar", lambda a: np.quantile(a, 0.3), None),
    ("quantile list axis", lambda a: np.quantile(a, [0.1, 0.9], axis=1), None),
    ("percentile keepdims", lambda a: np.percentile(a, 50, axis=0, keepdims=True), None),
    ("quantile None keepdims", lambda a: np.quantile(a, [0.2, 0.5], axis=None, keepdims=True), None),
    ("apply_along_axis scalar", lambda a: np.apply_along_axis(lambda r: np.sum(r ** 2), 1, a),
     lambda a: anp.sum(a ** 2, axis=1)),
    ("apply_along_axis vector", lambda a: np.apply_along_axis(lambda r: r[:2] * 2, 0, a), None),
    ("apply_along_axis matrix", lambda a: np.apply_along_axis(lambda r: np.outer(r, r), 1, a), None),
    ("float_power", lambda a: np.float_power(np.abs(a) + 1, 2.5), lambda a: (anp.abs(a) + 1) ** 2.5),
]


@pytest.mark.parametrize("f, ag", [c[1:] for c in NUMERIC], ids=[c[0] for c in NUMERIC])
def test_numpy_s_numerical_helpers_are_recorded(f, ag):
    # before: "autoprop cannot record numpy.trapezoid (polyval, quantile, percentile,
    # apply_along_axis, float_power) on a Tensor: it has no registered derivative"
    _check(f, X35, autograd_f=ag)


def test_quantile_refuses_what_it_does_not_record():
    x = ap.Variable(X35)
    with pytest.raises(TypeError, match=r"weights=.*not recorded"):  # (every method is recorded)
        np.quantile(x, 0.5, method="inverted_cdf", weights=np.ones(X35.shape))
    with pytest.raises(ValueError, match=r"percentiles must be in the range \[0, 100\]"):
        np.percentile(x, 120)


LIST_CALLS = [  # tester10 T13: numpy does not look inside a list for __array_function__
    ("mean", lambda x: np.mean([x[0] ** 2, x[1] * 3]) + x[0] * 0),
    ("prod", lambda x: x[0] + np.prod([x[0], x[1]])),
    ("max", lambda x: np.max([x[0], x[1]])),
    ("sum of a comprehension", lambda x: np.sum([r * i for i, r in enumerate(x)])),
    ("mean of a tuple", lambda x: np.mean((x, x))),
    ("linalg.norm", lambda x: np.linalg.norm([x[0], x[1]])),
]


@pytest.mark.parametrize("f", [c[1] for c in LIST_CALLS], ids=[c[0] for c in LIST_CALLS])
def test_a_list_of_tensors_given_to_a_recorded_numpy_function_raises_not_a_wrong_gradient(f):
    # before: a TapeEscapeWarning and the gradient [0, 0] (np.mean) or [1, 0] (np.prod:
    # expected [3, 1]), a plausible wrong number once warnings are silenced, as notebooks do
    import warnings

    x = ap.Variable(np.array([1.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ap.GradientTape(), pytest.raises(ap.TapeEscapeError, match=(
                r"inside a list or tuple: numpy converts a container to a plain array without "
                r"dispatching to autoprop.*Stack the Tensors first: numpy\.")):
            f(x)


def test_the_stacked_forms_the_error_names_give_autograd_s_gradients():
    x = ap.Variable(np.array([1.0, 2.0]))
    with ap.GradientTape(persistent=True) as tape:
        a = np.mean(np.stack([x[0] ** 2, x[1] * 3]))
        b = x[0] + ap.numpy.prod([x[0], x[1]])
    np.testing.assert_allclose(tape.gradient(a, x).numpy(), [1.0, 1.5], rtol=1e-15)  # autograd's
    np.testing.assert_allclose(tape.gradient(b, x).numpy(), [3.0, 1.0], rtol=1e-15)
    with ap.GradientTape() as tape:  # outside a recorded function: np.array still only warns
        with pytest.warns(ap.TapeEscapeWarning):
            np.array([x[0], x[1]])


def test_quantile_is_differentiated_in_q_and_over_axis_tuples():
    # found by tests/test_numpy_keywords.py on the first version: q was read as a constant
    # (a zero gradient for a Tensor q) and a tuple axis raised a TypeError
    q = np.array([0.15, 0.6])
    _check(lambda z: np.quantile(X35, z, axis=1), q)
    _check(lambda z: np.percentile(X35, z * 100.0), q)
    _check(lambda a: np.quantile(a, 0.4, axis=(0, 1), keepdims=True), X35)
    _check(lambda a: np.percentile(a.reshape(3, 5, 1), [10, 90], axis=(-1, 0)), X35)
    with pytest.raises(TypeError, match="overwrite_input=True"):
        np.quantile(ap.Variable(X35), 0.5, overwrite_input=True)


def test_session18_names_index_outputs_constants_and_heaviside_at_zero():
    """argpartition/searchsorted give numpy's integer indices (no gradient, as argsort),
    heaviside's gradient reaches x2 only where x1 = 0 (jax: the same);
    ldexp's integer exponent gets none; cumulative_sum with include_initial."""
    x0 = np.array([0.3, -1.2, 2.0, 0.7, -0.4])
    v = ap.Variable(x0)
    h2 = ap.Variable(np.array([0.5, 0.25, 0.75]))
    with ap.GradientTape(persistent=True) as tape:
        top = np.sum(v[np.argpartition(-v, 2)[:2]])
        srt = np.sort(v)
        tail = np.sum(srt[np.searchsorted(srt, 0.0):])
        h = np.sum(np.heaviside(np.array([-1.0, 0.0, 2.0]), h2) * np.array([1.0, 10.0, 100.0]))
        ld = np.sum(np.ldexp(v, np.arange(5)))
        cs = np.cumulative_sum(v, include_initial=True)
    assert float(top.numpy()) == 2.7 and np.isclose(float(tail.numpy()), 3.0)
    np.testing.assert_array_equal(tape.gradient(top, v).numpy(), [0, 0, 1, 1, 0])
    np.testing.assert_array_equal(tape.gradient(tail, v).numpy(), [1, 0, 1, 1, 0])
    assert float(h.numpy()) == 10 * 0.25 + 100.0
    np.testing.assert_array_equal(tape.gradient(h, h2).numpy(), [0.0, 10.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(ld, v).numpy(), 2.0 ** np.arange(5))
    np.testing.assert_array_equal(cs.numpy(), np.cumulative_sum(x0, include_initial=True))
    with pytest.raises(TypeError, match="exponent x2 must be integers"):
        np.ldexp(v, 1.5)


def test_interp_nanstd_compress_extract_delete_values_and_gradients():
    """interp's gradients to fp and x are jax.numpy.interp's (stored: [0.5, 0.8, 0.7, 0.8, 0.2]
    and [-1.5, 3.2, -1.1]); nanstd ignores NaNs as numpy's; compress/extract/delete gather."""
    x0, xp = np.array([0.3, -1.2, 2.0, 0.7, -0.4]), np.arange(5.0)
    fp, xv = ap.Variable(x0), ap.Variable(np.array([0.5, 1.7, 3.2]))
    with ap.GradientTape(persistent=True) as tape:
        y = np.interp(xv, xp, fp)
        s = np.sum(y)
    np.testing.assert_allclose(y.numpy(), np.interp(xv.numpy(), xp, x0), rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(s, fp).numpy(), [0.5, 0.8, 0.7, 0.8, 0.2], rtol=1e-14)
    np.testing.assert_allclose(tape.gradient(s, xv).numpy(), [-1.5, 3.2, -1.1], rtol=1e-14)
    xs = np.array([-1.0, 0.0, 4.0, 5.0])  # outside, on the ends: numpy's values (left=, right=)
    np.testing.assert_array_equal(np.interp(ap.constant(xs), xp, fp, left=7.0, right=9.0).numpy(),
                                  np.interp(xs, xp, x0, left=7.0, right=9.0))
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]])
    v = ap.Variable(a)
    with ap.GradientTape() as tape:
        sd = np.nanstd(v, axis=1)
        tot = np.sum(sd)
    np.testing.assert_allclose(sd.numpy(), np.nanstd(a, axis=1), rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(tot, v).numpy(), [[-0.5, 0, 0.5], [-0.5, 0.5, 0]], rtol=1e-15)
    np.testing.assert_array_equal(np.compress([1, 0, 1], ap.constant(a), axis=1).numpy()[0], [1.0, 3.0])
    np.testing.assert_array_equal(np.extract(x0 > 0, ap.constant(x0)).numpy(), [0.3, 2.0, 0.7])
    np.testing.assert_array_equal(np.delete(ap.constant(x0), [1, 3]).numpy(), [0.3, 2.0, -0.4])


@pytest.mark.parametrize("fn", [np.var, np.std])
@pytest.mark.parametrize("kw", [{}, {"axis": 1, "ddof": 1}, {"axis": 0, "keepdims": True}])
def test_var_and_std_with_where_agree_with_numpy_and_central_differences(fn, kw):
    # before: "autoprop cannot record numpy.var(..., where=...)" (sum/mean(where=) worked)
    # its own generator (the module's R gave inputs that depended on the tests run before it under
    # -n 2); this draw keeps one entry of column 2, where the variance is exactly 0 in numpy
    x = np.random.default_rng(57).standard_normal((3, 4))
    w = x > -0.5
    w[:, :2] = True
    assert w.sum(axis=0).tolist() == [3, 3, 1, 2]
    v = ap.Variable(x)
    with ap.GradientTape() as tape:
        y = fn(v, where=w, **kw)
    np.testing.assert_allclose(y.numpy(), fn(x, where=w, **kw), rtol=1e-13)
    u = np.cos(np.arange(y.size)).reshape(y.shape)
    g = tape.gradient(y, v, output_gradients=u).numpy()
    np.testing.assert_allclose(g, central(lambda z: np.sum(fn(z, where=w, **kw) * u), x, h=1e-6), rtol=1e-6, atol=1e-8)
    assert np.all(g[~w] == 0)


def test_a_masked_mean_is_the_kept_entries_sum_over_their_count_as_numpy():
    # a mean over where= was mean(all, zeros left out) * n / kept: one ulp off numpy's sum / kept, so
    # the variance of a column with one kept entry came out 4.9e-32, not numpy's exact 0
    x = np.random.default_rng(57).standard_normal((3, 4))
    w = x > -0.5
    w[:, :2] = True
    got = np.mean(ap.constant(x), axis=0, keepdims=True, where=w).numpy()
    np.testing.assert_allclose(got, np.mean(x, axis=0, keepdims=True, where=w), rtol=1e-15)
    assert got[0, 2] == x[0, 2]  # one kept entry: the mean is that entry, exactly
    assert np.var(ap.constant(x), axis=0, where=w).numpy()[2] == 0.0


def test_bincount_with_tensor_weights_scatters_the_gradient_back():
    # before: "no registered derivative"; d sum(b**2)/dw_i = 2 b[x_i]
    x0, idx = np.array([0.3, -1.2, 2.0, 0.7, -0.4]), np.array([0, 1, 1, 2, 0])
    v = ap.Variable(x0)
    with ap.GradientTape() as tape:
        b = np.bincount(idx, weights=v, minlength=4)
        y = np.sum(b ** 2)
    np.testing.assert_allclose(b.numpy(), np.bincount(idx, weights=x0, minlength=4), rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), 2 * np.bincount(idx, weights=x0)[idx], rtol=1e-15)
    np.testing.assert_array_equal(np.bincount(ap.constant(idx)), [2, 2, 1])


# --- every registered numpy function with its arrays given by keyword ----------------------------
_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_VEC = np.array([0.3, -1.2, 2.5, 0.7])
_CANDIDATES = [  # positional argument lists tried in turn; the first one numpy's positional call takes
    (_SPD,), (_VEC,), (_SPD, _SPD), (_SPD, np.array([1.0, -2.0, 0.5])), (_VEC, _VEC),
    (np.array([0.5, 1.5]), np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, -1.0])),  # interp
    (_SPD, 2), (np.array(0.5), np.array(2.0)), (_VEC, _VEC, _VEC),
]


def _leaves(out):
    """The Tensors of a result (tuples, lists, numpy's named results), in order."""
    if isinstance(out, ap.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _leaves(o)]
    return []


def _call(f, args, by_keyword, names):
    """f's value leaves and the gradient of sum(leaf * w) in each float Variable argument; the
    first ``by_keyword`` positional arguments' count stays positional, the rest go by name."""
    vs = [ap.Variable(a) if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ap.GradientTape(persistent=True) as tape:
            out = f(*vs[:by_keyword], **dict(zip(names[by_keyword:], vs[by_keyword:])))
            leaves = [t for t in _leaves(out) if t.dtype.kind == "f"]
            loss = sum(ap.reduce_sum(t * np.cos(np.arange(t.size)).reshape(t.shape)) for t in leaves)
    grads = ([tape.gradient(loss, v) for v in vs if isinstance(v, ap.Variable)]
             if leaves else [])
    return [t.numpy() for t in _leaves(out)], [None if g is None else g.numpy() for g in grads]


def _numpy_names(f):
    import inspect
    names = []
    for p in inspect.signature(f).parameters.values():
        if p.kind is not p.POSITIONAL_OR_KEYWORD or p.default is not p.empty:
            break
        names.append(p.name)
    return names


def test_every_registered_numpy_function_takes_its_arrays_by_keyword_as_by_position():
    # before: np.linalg.inv(a=t), det(a=t), np.real(val=t), np.imag(val=t), np.sinc(x=t) ended in
    # RecursionError (the record found no Tensor among its positional arguments and called numpy,
    # which dispatched back), np.diag(v=t), diagflat(v=), fliplr(m=), flipud(m=), rot90(m=),
    # np.fft.fftshift(x=)/ifftshift(x=) in "_moved.<locals>.fn() missing 1 required positional
    # argument: 'a'", np.fix(x=t) in an internal name's TypeError
    from autoprop.core.registry import _FUNCTIONS
    checked, failed = [], []
    for f in _FUNCTIONS:
        names = _numpy_names(f)
        if not names:
            continue
        for args in _CANDIDATES:
            if len(args) > len(names):
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    f(*args)
                want = _call(f, args, len(args), names)
            except Exception:  # (numpy's positional call does not take these)
                continue
            break
        else:
            continue
        label = f"{getattr(f, '__module__', 'numpy')}.{f.__name__}"
        for k in range(len(args)):  # the arguments from position k on given by their numpy names
            try:  # numpy's own refusal (np.unique_all(x=a): positional-only) is kept
                f(*args[:k], **dict(zip(names[k:], args[k:])))
            except TypeError:
                with pytest.raises(TypeError):
                    _call(f, args, k, names)
                continue
            try:
                got = _call(f, args, k, names)
            except Exception as exc:
                failed.append(f"{label}[{k}]: {type(exc).__name__}: {str(exc)[:80]}")
                continue
            same = len(got[0]) == len(want[0]) and len(got[1]) == len(want[1]) and all(
                np.array_equal(a, b, equal_nan=True) for a, b in zip(got[0], want[0])) and all(
                (a is None and b is None) or (a is not None and b is not None
                                              and np.array_equal(a, b, equal_nan=True))
                for a, b in zip(got[1], want[1]))
            if not same:
                failed.append(f"{label}[{k}]: another value or gradient")
        checked.append(label)
    assert not failed, failed
    assert len(checked) >= 150, len(checked)  # (the sweep reaches numpy's whole vocabulary)
    for name in ("numpy.linalg.inv", "numpy.linalg.det", "numpy.real", "numpy.imag", "numpy.sinc",
                 "numpy.diag", "numpy.diagflat", "numpy.fliplr", "numpy.flipud", "numpy.rot90",
                 "numpy.fft.fftshift", "numpy.fft.ifftshift", "numpy.fix", "numpy.linalg.solve",
                 "numpy.interp"):
        assert name in checked, name


def test_keyword_arrays_are_differentiated_as_numpy_names_them():
    a = ap.Variable(_SPD)
    with ap.GradientTape(persistent=True) as tape:
        inv, det = np.linalg.inv(a=a), np.linalg.det(a=a)
        sol = np.linalg.solve(b=np.ones(3), a=a)  # (any order, as numpy)
    np.testing.assert_allclose(tape.gradient(det, a).numpy(), np.linalg.det(_SPD) * np.linalg.inv(_SPD).T,
                               rtol=1e-13)
    np.testing.assert_allclose(inv.numpy(), np.linalg.inv(_SPD), rtol=1e-14)
    np.testing.assert_allclose(sol.numpy(), np.linalg.solve(_SPD, np.ones(3)), rtol=1e-14)
    with pytest.raises(TypeError, match="positional-only"):  # numpy's own refusal, kept
        np.linalg.cholesky(a=a)


@pytest.mark.parametrize("dx, dxp, dfp", [(np.float32, np.float32, np.float32), (np.float64, np.float32, np.float32),
                                          (np.float32, np.float64, np.float32), (np.int64, np.float32, np.float32)])
def test_interp_is_float64_as_numpy_whatever_the_inputs_dtypes(dx, dxp, dfp):
    # before: float32 inputs gave a float32 result (numpy's interp computes in float64)
    xs = np.array([0.1, 0.35, 0.8, 2.0, -1.0]).astype(dx)
    xp_ = np.linspace(0, 1, 4).astype(dxp)
    fp = np.array([0.3, -1.7, 2.9, 0.1]).astype(dfp)
    want = np.interp(xs, xp_, fp)
    f = ap.Variable(fp)
    with ap.GradientTape() as tape:
        y = np.interp(ap.constant(xs), xp_, f)
        loss = ap.reduce_sum(y * np.arange(1.0, 6.0))
    assert y.dtype == want.dtype == np.float64
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-14, atol=1e-15)
    g = tape.gradient(loss, f)  # d/dfp: the interpolation weights, in fp's own dtype
    cd = central(lambda z: np.sum(np.interp(xs, xp_, z) * np.arange(1.0, 6.0)), fp.astype(np.float64), h=1e-6)
    assert g.dtype == np.dtype(dfp)
    np.testing.assert_allclose(g.numpy(), cd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("x", [np.array([False, True, True]), np.array([0, 2, 5]),
                               np.array([[0, 2, 5], [1, 1, 3]], np.uint8),
                               np.array([[True, False, True], [False, False, True]])])
def test_trapezoid_with_boolean_or_integer_sample_points_is_numpy_s(x):
    # before: a boolean x raised "numpy boolean subtract ... not supported" (numpy's diff of
    # booleans is their xor, which numpy's trapezoid uses)
    y = np.array([[1.0, 2.0, 4.0], [0.5, 3.0, 1.0]])
    w = np.array([1.0, -2.0])
    v = ap.Variable(y)
    with ap.GradientTape() as tape:
        r = np.trapezoid(v, x=ap.constant(x))
        loss = ap.reduce_sum(r * w)
    np.testing.assert_array_equal(r.numpy(), np.trapezoid(y, x=x))
    cd = central(lambda z: np.sum(np.trapezoid(z, x=x) * w), y, h=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), cd, rtol=1e-9, atol=1e-9)


def test_isfortran_and_flags_answer_from_the_value():
    # before: np.isfortran(t) raised AttributeError: 'Tensor' object has no attribute 'flags'
    f, c = np.asfortranarray(np.ones((2, 3))), np.ones((2, 3))
    assert np.isfortran(ap.constant(f)) is np.isfortran(f) is True
    assert np.isfortran(ap.constant(c)) is np.isfortran(c) is False
    t = ap.constant(c)
    assert t.flags.c_contiguous and not t.flags.writeable
    t.flags.writeable = True  # (a throw-away view's flag: the Tensor's values stay unwritable)
    assert not t.flags.writeable
