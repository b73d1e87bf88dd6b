"""Every documented keyword of the dispatched numpy functions checked here either works
(numpy's value, and a gradient that agrees with HIPS autograd) or is refused by name:
accepting an option and ignoring it would be a silently wrong number (issue 12, section 3:
``np.round(t, 2)`` returned ``[1., 6.]``, ``np.reshape(t, (3, 2), order='F')`` C order).

Covered: round/around/rint (decimals, out), reshape (shape, order, copy), ravel (order),
and the Tensor methods round, reshape, ravel, flatten. The keyword tables are checked
against ``inspect.signature`` of the installed numpy, so a keyword numpy adds fails here
until it is handled.
"""

import inspect

import autograd
import autograd.numpy as agn
import numpy as np
import pytest

import autoprop as ap

X = np.array([[1.234, 5.678, -2.345], [0.555, -0.125, 9.876]])
XF = np.asfortranarray(X)
STRIDED = np.arange(24.0).reshape(2, 3, 4).transpose(1, 0, 2)[:, ::-1]  # neither C nor F

# numpy function -> (the array arguments, {keyword: values that must work}, {keyword: values refused})
OPTIONS = {
    np.round: ((X,), {"decimals": [0, 1, 2, -1]}, {"out": [np.empty_like(X)], "decimals": [1.5]}),
    np.around: ((X,), {"decimals": [0, 2]}, {"out": [np.empty_like(X)]}),
    np.reshape: ((X,), {"shape": [(3, 2), (-1,), 6, (1, 6)], "order": ["C", "F", "A"], "copy": [None, True, False]},
                 {"order": ["K", "x"]}),
    np.ravel: ((X,), {"order": ["C", "F", "A", "K"]}, {"order": ["x"]}),
}
ARRAY_ARGS = {"a"}


def _call(f, args, kw):
    if f is np.reshape and "shape" not in kw:
        kw = dict(kw, shape=(3, 2))
    return f(*args, **kw)


@pytest.mark.parametrize("f", list(OPTIONS), ids=lambda f: f.__name__)
def test_the_tables_name_every_documented_keyword(f):
    documented = set(inspect.signature(f).parameters) - ARRAY_ARGS
    _, works, refused = OPTIONS[f]
    assert documented == set(works) | set(refused), f"numpy.{f.__name__}: {documented}"


CASES = [(f, k, v) for f, (_, works, _) in OPTIONS.items() for k, vs in works.items() for v in vs]


@pytest.mark.parametrize("f,key,value", CASES, ids=[f"{f.__name__}-{k}-{v}" for f, k, v in CASES])
def test_each_accepted_keyword_gives_numpys_value(f, key, value):
    args = OPTIONS[f][0]
    for a in (args[0], np.asfortranarray(args[0])):
        try:
            want = _call(f, (a,), {key: value})
        except ValueError:  # copy=False where numpy would need a copy: a Tensor never shows one
            assert key == "copy" and value is False
            continue
        got = _call(f, (ap.constant(a),), {key: value})
        np.testing.assert_array_equal(got.numpy(), want)


REFUSED = [(f, k, v) for f, (_, _, refused) in OPTIONS.items() for k, vs in refused.items() for v in vs]


@pytest.mark.parametrize("f,key,value", REFUSED, ids=[f"{f.__name__}-{k}-{type(v).__name__}" for f, k, v in REFUSED])
def test_each_refused_keyword_is_refused_by_name(f, key, value):
    with pytest.raises((TypeError, ValueError), match=key):
        _call(f, (ap.constant(OPTIONS[f][0][0]),), {key: value})


def test_the_issue_numbers():
    t = ap.constant([1.234, 5.678])
    assert np.round(t, 2).numpy().tolist() == [1.23, 5.68]
    assert t.round(1).numpy().tolist() == [1.2, 5.7]
    r = np.reshape(ap.constant(np.arange(6.0)), (3, 2), order="F")
    assert r.numpy().tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


@pytest.mark.parametrize("method,kw", [("reshape", {"order": "F"}), ("reshape", {"order": "A"}),
                                       ("ravel", {"order": "F"}), ("ravel", {"order": "K"}),
                                       ("flatten", {"order": "F"}), ("flatten", {"order": "A"})])
@pytest.mark.parametrize("a", [X, XF, STRIDED], ids=["C", "F", "strided"])
def test_tensor_methods_follow_numpy_and_their_gradient_is_autograds(method, kw, a):
    args = (a.size,) if method == "reshape" else ()
    want = getattr(a, method)(*args, **kw)
    G = np.random.default_rng(0).standard_normal(want.shape)
    t = ap.constant(a)
    with ap.GradientTape() as tape:
        tape.watch(t)
        y = getattr(t, method)(*args, **kw)
        L = ap.sum(ap.constant(G) * y)
    np.testing.assert_array_equal(y.numpy(), want)
    # the gradient puts G back where each element came from
    order = kw["order"]
    if order == "A":
        order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    if order == "K":
        src = np.empty_like(a, dtype=np.intp)
        src[...] = np.arange(a.size).reshape(a.shape)
        ref = np.zeros(a.size)
        ref[np.ravel(src, order="K")] = G
        ref = ref.reshape(a.shape)
    else:
        ref = autograd.grad(lambda z: agn.sum(G * agn.reshape(z, (-1,), order=order)))(np.ascontiguousarray(a))
    np.testing.assert_array_equal(tape.gradient(L, t).numpy(), ref)


def test_reshape_order_f_forward_mode_and_second_order():
    a = ap.constant(X)
    u = np.random.default_rng(1).standard_normal(X.shape)
    with ap.ForwardAccumulator(a, u) as acc:
        y = np.reshape(a, (3, 2), order="F")
    np.testing.assert_array_equal(acc.jvp(y).numpy(), np.reshape(u, (3, 2), order="F"))
    with ap.GradientTape() as outer:
        outer.watch(a)
        with ap.GradientTape() as inner:
            inner.watch(a)
            L = ap.sum(np.reshape(a, (3, 2), order="F") ** 3)
        s = ap.sum(inner.gradient(L, a))  # sum(3 x^2): its gradient is 6 x
    np.testing.assert_allclose(outer.gradient(s, a).numpy(), 6 * X, rtol=1e-15)
