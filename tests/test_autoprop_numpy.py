"""numpy code differentiated as written: every name of autoprop.numpy, reached both as
``anp.f(...)`` and as plain ``np.f(tensor, ...)``, against HIPS autograd (and central
differences); indexing in every form; refusals that say what to write instead."""

import warnings

import autograd
import autograd.numpy as agn
import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp
from autoprop.core import registry as R

rng = np.random.default_rng(2024)


def pos(*s):
    return rng.uniform(0.4, 1.8, s)


def unit(*s):
    return rng.uniform(-0.9, 0.9, s)


def nrm(*s):
    return rng.standard_normal(s)


# (name, f(m, *xs) using the numpy-like module m, inputs)
CASES = [
    ("add", lambda m, a, b: m.add(a, b), [nrm(3, 4), nrm(4)]),
    ("subtract", lambda m, a, b: m.subtract(a, b), [nrm(3, 1), nrm(4)]),
    ("multiply", lambda m, a, b: m.multiply(a, b), [nrm(2, 3), nrm(2, 1)]),
    ("divide", lambda m, a, b: m.divide(a, b), [nrm(3), pos(2, 3)]),
    ("true_divide", lambda m, a, b: m.true_divide(a, b), [nrm(3), pos(3)]),
    ("power", lambda m, a, b: m.power(a, b), [pos(2, 3), nrm(3)]),
    ("negative", lambda m, a: m.negative(a), [nrm(3)]),
    ("positive", lambda m, a: m.positive(a) * 2.0, [nrm(3)]),
    ("reciprocal", lambda m, a: m.reciprocal(a), [pos(3)]),
    ("exp", lambda m, a: m.exp(a), [nrm(3)]),
    ("expm1", lambda m, a: m.expm1(a), [nrm(3)]),
    ("log", lambda m, a: m.log(a), [pos(3)]),
    ("log1p", lambda m, a: m.log1p(a), [pos(3)]),
    ("log2", lambda m, a: m.log2(a), [pos(3)]),
    ("log10", lambda m, a: m.log10(a), [pos(3)]),
    ("sqrt", lambda m, a: m.sqrt(a), [pos(3)]),
    ("square", lambda m, a: m.square(a), [nrm(3)]),
    ("abs", lambda m, a: m.abs(a), [nrm(5) + 0.05]),
    ("sin", lambda m, a: m.sin(a), [nrm(3)]),
    ("cos", lambda m, a: m.cos(a), [nrm(3)]),
    ("tan", lambda m, a: m.tan(a), [unit(3)]),
    ("arcsin", lambda m, a: m.arcsin(a), [unit(3)]),
    ("arccos", lambda m, a: m.arccos(a), [unit(3)]),
    ("arctan", lambda m, a: m.arctan(a), [nrm(3)]),
    ("arctan2", lambda m, a, b: m.arctan2(a, b), [nrm(2, 3), nrm(3)]),
    ("sinh", lambda m, a: m.sinh(a), [nrm(3)]),
    ("cosh", lambda m, a: m.cosh(a), [nrm(3)]),
    ("tanh", lambda m, a: m.tanh(a), [nrm(3)]),
    ("maximum", lambda m, a, b: m.maximum(a, b), [nrm(3, 4), nrm(4)]),
    ("minimum", lambda m, a, b: m.minimum(a, b), [nrm(3, 4), nrm(3, 1)]),
    ("clip", lambda m, a: m.clip(a, -0.5, 0.7), [nrm(4, 3)]),
    ("where", lambda m, a, b: m.where(np.array([True, False, True]), a, b), [nrm(2, 3), nrm(3)]),
    ("matmul", lambda m, a, b: m.matmul(a, b), [nrm(2, 3, 4), nrm(4, 2)]),
    ("dot", lambda m, a, b: m.dot(a, b), [nrm(2, 3, 4), nrm(5, 4, 2)]),
    ("dot2d", lambda m, a, b: m.dot(a, b), [nrm(3, 4), nrm(4)]),
    ("einsum", lambda m, a, b: m.einsum("bij,jk->bik", a, b), [nrm(2, 3, 4), nrm(4, 5)]),
    ("einsum_implicit", lambda m, a, b: m.einsum("ij,jk", a, b), [nrm(3, 4), nrm(4, 2)]),
    ("einsum_ellipsis", lambda m, a, b: m.einsum("...ij,...j->...i", a, b), [nrm(2, 3, 4), nrm(4)]),
    ("einsum_trace_free", lambda m, a: m.einsum("ij->j", a), [nrm(3, 4)]),
    ("einsum_outer", lambda m, a, b: m.einsum("i,j->ij", a, b), [nrm(3), nrm(2)]),
    ("tensordot", lambda m, a, b: m.tensordot(a, b, axes=([1, 0], [0, 2])), [nrm(3, 2, 4), nrm(2, 5, 3)]),
    ("tensordot_int", lambda m, a, b: m.tensordot(a, b, 1), [nrm(3, 4), nrm(4, 2)]),
    ("outer", lambda m, a, b: m.outer(a, b), [nrm(3), nrm(2, 2)]),
    ("sum", lambda m, a: m.sum(a, axis=1), [nrm(3, 4)]),
    ("mean", lambda m, a: m.mean(a, axis=(0, 2), keepdims=True), [nrm(2, 3, 4)]),
    ("var", lambda m, a: m.var(a, axis=0), [nrm(4, 3)]),
    ("var_ddof", lambda m, a: m.var(a, ddof=1), [nrm(4, 3)]),
    ("std", lambda m, a: m.std(a, axis=-1, keepdims=True), [nrm(3, 4)]),
    ("prod", lambda m, a: m.prod(a, axis=0), [nrm(3, 4)]),
    ("prod_with_zero", lambda m, a: m.prod(a * np.array([1.0, 0.0, 1.0])), [nrm(3)]),
    ("max", lambda m, a: m.max(a, axis=1), [nrm(3, 4)]),
    ("min", lambda m, a: m.min(a), [nrm(3, 4)]),
    ("amax", lambda m, a: m.amax(a, axis=0), [nrm(3, 4)]),
    ("amin", lambda m, a: m.amin(a, axis=-1), [nrm(3, 4)]),
    ("cumsum", lambda m, a: m.cumsum(a, axis=1), [nrm(3, 4)]),
    ("cumsum_flat", lambda m, a: m.cumsum(a), [nrm(3, 4)]),
    ("logaddexp", lambda m, a, b: m.logaddexp(a, b), [nrm(3, 4), nrm(4)]),
    ("reshape", lambda m, a: m.reshape(a, (4, 3)), [nrm(2, 6)]),
    ("ravel", lambda m, a: m.ravel(a), [nrm(2, 3)]),
    ("transpose", lambda m, a: m.transpose(a, (1, 2, 0)), [nrm(2, 3, 4)]),
    ("swapaxes", lambda m, a: m.swapaxes(a, 0, 2), [nrm(2, 3, 4)]),
    ("moveaxis", lambda m, a: m.moveaxis(a, 0, -1), [nrm(2, 3, 4)]),
    ("expand_dims", lambda m, a: m.expand_dims(a, 1), [nrm(2, 3)]),
    ("squeeze", lambda m, a: m.squeeze(a), [nrm(2, 1, 3)]),
    ("broadcast_to", lambda m, a: m.broadcast_to(a, (2, 3, 4)), [nrm(3, 1)]),
    ("concatenate", lambda m, a, b: m.concatenate([a, b], axis=1), [nrm(2, 3), nrm(2, 1)]),
    ("stack", lambda m, a, b: m.stack([a, b], axis=-1), [nrm(2, 3), nrm(2, 3)]),
    ("split", lambda m, a: m.sum(m.split(a, [1, 3], axis=1)[1] ** 2) + m.sum(m.split(a, 2)[1] ** 3),
     [nrm(4, 5)]),
    ("pad", lambda m, a: m.pad(a, ((1, 2), (0, 1)), mode="constant"), [nrm(2, 3)]),
    ("flip", lambda m, a: m.flip(a, axis=0), [nrm(3, 2)]),
    ("take", lambda m, a: m.take(a, np.array([0, 2, 2, 0]), axis=1), [nrm(3, 4)]),
    ("take_flat", lambda m, a: m.take(a, np.array([5, 1, 5])), [nrm(3, 4)]),
    ("take_along_axis", lambda m, a: m.take_along_axis(a, np.array([[0, 0], [2, 1], [1, 1]]), axis=1),
     [nrm(3, 4)]),
    ("triu", lambda m, a: m.triu(a, 1), [nrm(4, 4)]),
    ("tril", lambda m, a: m.tril(a), [nrm(3, 4)]),
]


def _ours(m, f, xs, g):
    ts = [ap.constant(x) for x in xs]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        y = f(m, *ts)
    return y, tape.gradient(y, ts, output_gradients=g)


#: autograd gives nan here (it divides by the zero); the tape's prod is exact
FD_ONLY = {"prod_with_zero"}


def _central_differences(f, xs, g, h=1e-6):
    out = []
    for k, x in enumerate(xs):
        num = np.zeros(x.size)
        for i in range(x.size):
            e = np.zeros(x.size)
            e[i] = h
            up = [v if j != k else v + e.reshape(v.shape) for j, v in enumerate(xs)]
            dn = [v if j != k else v - e.reshape(v.shape) for j, v in enumerate(xs)]
            num[i] = (np.sum(f(np, *up) * g) - np.sum(f(np, *dn) * g)) / (2 * h)
        out.append(num.reshape(x.shape))
    return out


@pytest.mark.parametrize("name,f,xs", CASES, ids=[c[0] for c in CASES])
def test_both_spellings_match_autograd(name, f, xs):
    """The oracle is autograd; where autograd has no VJP for a function (positive, flip,
    take, take_along_axis, outer of 2-D, broadcast_to adding axes, where with
    broadcasting) or is wrong (prod with a zero), central differences are used."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_y = f(np, *xs)
        g = rng.standard_normal(np.shape(ref_y))
        try:
            if name in FD_ONLY:
                raise NotImplementedError(name)
            ref = autograd.grad(lambda *a: agn.sum(f(agn, *a) * g), argnum=tuple(range(len(xs))))(*xs)
            tol = dict(rtol=1e-10, atol=1e-12)
        except (NotImplementedError, KeyError, ValueError, AssertionError, TypeError):
            ref = _central_differences(f, xs, g)
            tol = dict(rtol=1e-6, atol=1e-8)
    for m in (np, anp):
        y, grads = _ours(m, f, xs, g)
        assert isinstance(y, ap.Tensor), f"{m.__name__}.{name} did not return a Tensor"
        np.testing.assert_allclose(y.numpy(), ref_y, rtol=1e-12, atol=1e-14)
        for got, want in zip(grads, ref):
            np.testing.assert_allclose(got.numpy(), want, **tol)


def test_every_required_name_exists_in_anp():
    required = """add subtract multiply divide true_divide power negative positive reciprocal exp
    expm1 log log1p log2 log10 sqrt square abs sin cos tan arcsin arccos arctan arctan2 sinh
    cosh tanh maximum minimum clip where matmul dot einsum tensordot outer sum mean var std
    prod max min amax amin cumsum logaddexp reshape ravel transpose swapaxes moveaxis
    expand_dims squeeze broadcast_to concatenate stack split pad flip take take_along_axis
    triu tril""".split()
    missing = [n for n in required if not callable(getattr(anp, n, None))]
    assert not missing
    covered = {c[0].split("_")[0] for c in CASES} | {c[0] for c in CASES}
    assert not [n for n in required if n not in covered]


def test_anp_accepts_plain_arrays_and_returns_tensors():
    assert isinstance(anp.exp(np.ones(2)), ap.Tensor)
    assert isinstance(anp.stack([np.ones(2), np.zeros(2)]), ap.Tensor)
    assert isinstance(anp.split(np.ones(4), 2)[0], ap.Tensor)


# --- indexing, every form; repeated indices accumulate --------------------------------------
KEYS = [
    ("int", 1), ("negative int", -1), ("slice", slice(1, None, 2)), ("None", (None, 0)),
    ("Ellipsis", (Ellipsis, 1)), ("bool mask", np.array([True, False, True, True])),
    ("bool mask 2d", "mask2d"), ("int array repeated", np.array([0, 0, 3, 0])),
    ("list repeated", [2, 2, 1]), ("two int arrays", (np.array([0, 0, 1]), np.array([1, 1, 2]))),
    ("int array + slice", (np.array([3, 3]), slice(None, 2))),
    ("slice + int array", (slice(None), np.array([2, 2, 0]))),
    ("2d int array", np.array([[0, 0], [1, 0]])),
    ("tensor index", "tensor"),
    # numpy reads a tuple inside the key tuple as an index array: its repeats add too
    ("tuple in key repeated", ((0, 0, 3),)), ("tuple + slice", ((3, 3, 0), slice(None, 2))),
    ("range", range(1, 3)),
]


@pytest.mark.parametrize("name,key", KEYS, ids=[k[0] for k in KEYS])
def test_indexing_every_form_matches_autograd(name, key):
    x = nrm(4, 3)
    if isinstance(key, str) and key == "mask2d":
        key = x > 0
    akey = key
    if isinstance(key, str) and key == "tensor":
        akey = np.array([1, 1, 0])
        key = ap.constant(akey)
    y_ref = x[akey]
    g = rng.standard_normal(np.shape(y_ref))
    ref = autograd.grad(lambda z: agn.sum(z[akey] * g))(x)
    X = ap.constant(x)
    with ap.GradientTape() as tape:
        tape.watch(X)
        y = X[key]
    np.testing.assert_array_equal(y.numpy(), y_ref)
    np.testing.assert_allclose(tape.gradient(y, X, output_gradients=g).numpy(), ref, rtol=1e-13)


def test_repeated_indices_accumulate_in_second_order_too():
    x = ap.constant([1.0, 2.0, 3.0])
    idx = np.array([0, 0, 2])
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = ap.sum(x[idx] ** 3)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), [6.0, 0.0, 27.0])
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), [12.0, 0.0, 18.0])


# --- refusals ------------------------------------------------------------------------------
def test_unsupported_function_names_itself_and_says_what_to_do():
    x = ap.Variable([3.0, 1.0, 2.0])
    for call, name in ((lambda: np.spacing(x), "numpy.spacing"), (lambda: np.geomspace(x[0], x[1], 3), "numpy.geomspace"),
                       (lambda: np.logspace(x[0], x[1], 3), "numpy.logspace")):
        with pytest.raises(TypeError, match=name) as err:
            call()
        assert "numpy_function" in str(err.value)


def test_out_and_ufunc_methods_and_options_are_refused():
    x = ap.Variable([3.0, 1.0])
    with pytest.raises(TypeError, match=r"out=.*in-place"):
        np.exp(x, out=np.empty(2))
    with pytest.raises(TypeError, match="out="):
        np.sum(x, out=np.empty(()))
    with pytest.raises(TypeError, match=r"numpy.add.reduceat"):  # (reduce is recorded: np.sum)
        np.add.reduceat(x, [0])
    with pytest.raises(TypeError, match="where="):  # a ufunc's where= (a reduction's is recorded)
        np.exp(x, where=np.array([True, False]))
    with pytest.raises(TypeError, match="mode=<function"):  # (every named mode is recorded)
        np.pad(x, 1, mode=lambda v, w, i, k: None)
    with ap.GradientTape() as tape:  # np.einsum takes the diagonal first: differentiable
        y = np.einsum("ii->", ap.Variable(np.eye(2)))
    assert y.numpy() == 2.0
    np.testing.assert_array_equal(tape.gradient(y, tape.watched_variables())[0].numpy(), np.eye(2))
    with pytest.raises(NotImplementedError, match="repeated index"):  # the primitive itself
        with ap.GradientTape() as tape:
            z = ap.Variable(np.eye(2))
            y = R.PRIMITIVES["einsum"](z, subscripts="ii->")
        tape.gradient(y, z)


def test_value_only_helpers_and_like_constructors():
    x = ap.Variable([1.0, 2.0])
    assert np.allclose(x, [1.0, 2.0]) and np.array_equal(x, [1.0, 2.0])
    z = np.zeros_like(x)
    assert isinstance(z, ap.Tensor) and z.shape == (2,)
    with ap.GradientTape() as tape:
        y = np.sum(x * np.ones_like(x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(np.where(x > 1.5)[0], [1])
