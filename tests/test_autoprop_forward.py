"""Forward mode (ForwardAccumulator, one JVP per primitive) and second derivatives.

The dot-product identity <v, J u> = <u, J^T v> is checked for every registered
differentiable primitive: the JVP and VJP rules are written independently, so it is
a real check of both.
"""

import numpy as np
import pytest
from primitive_samples import SAMPLES

import autoprop as ap
from autoprop.core import registry as R
from autoprop.core.forward import jvp_by_transpose

_r = np.random.default_rng(12345)


def _dot_identity(prim, args, kwargs):
    tensors = [ap.constant(a) if isinstance(a, np.ndarray) else a for a in args]
    diff = [i for i, a in enumerate(args)
            if isinstance(a, np.ndarray) and a.dtype.kind == "f" and prim.vjps[i] is not None]
    us = [_r.standard_normal(args[i].shape) for i in diff]
    with ap.ForwardAccumulator([tensors[i] for i in diff], us) as acc:
        out = prim(*tensors, **kwargs)
    outs = out if isinstance(out, list) else [out]  # (a MultiPrimitive: one per output)
    jv = [acc.jvp(o).numpy() for o in outs]
    v = [_r.standard_normal(o.shape) for o in outs]
    with ap.GradientTape() as tape:
        tape.watch([tensors[i] for i in diff])
        out2 = prim(*tensors, **kwargs)
    grads = tape.gradient(out2, [tensors[i] for i in diff],
                          output_gradients=v if isinstance(out, list) else v[0])
    lhs = float(sum(np.sum(a * b) for a, b in zip(v, jv)))
    rhs = float(sum(np.sum(u * g.numpy()) for u, g in zip(us, grads)))
    return lhs, rhs


@pytest.mark.parametrize("name", sorted(R.PRIMITIVES))
def test_jvp_vjp_dot_product_identity_for_every_primitive(name):
    prim = R.PRIMITIVES[name]
    args, kwargs = SAMPLES[name].make(_r)  # tests/test_autoprop_registry.py: every name has one
    if prim.vjps is None:
        tensors = [ap.constant(a) if isinstance(a, np.ndarray) else a for a in args]
        floats = [t for t in tensors if isinstance(t, ap.Tensor) and t.dtype.kind == "f"]
        with ap.ForwardAccumulator(floats, [np.ones(t.shape) for t in floats]) as acc:
            y = prim(*tensors, **kwargs)
        assert acc.jvp(y) is None  # non-differentiable: no tangent either
        return
    lhs, rhs = _dot_identity(prim, args, kwargs)
    rtol = 1e-6 if name == "cast" else 1e-10  # the sample casts to float32
    np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=1e-12)


# (a MultiPrimitive, several outputs, has its own JVP and no transpose trick: the identity above)
@pytest.mark.parametrize("name", sorted(n for n, p in R.PRIMITIVES.items() if p.vjps is not None
                                        and not isinstance(p, R.MultiPrimitive)))
def test_explicit_jvp_matches_the_transpose_trick(name):
    prim = R.PRIMITIVES[name]
    args, kwargs = SAMPLES[name].make(_r)
    out = prim.fwd(*args, **kwargs)
    for i, a in enumerate(args):
        if not (isinstance(a, np.ndarray) and a.dtype.kind == "f") or prim.vjps[i] is None:
            continue
        t = _r.standard_normal(a.shape)
        explicit = np.broadcast_to(np.asarray(prim.jvps[i](t, out, *args, **kwargs)), out.shape)
        derived = jvp_by_transpose(prim, i, t, out, args, kwargs)
        np.testing.assert_allclose(explicit, derived, rtol=1e-10, atol=1e-12)


def test_forward_accumulator_api():
    x = ap.Variable([1.0, 2.0])
    c = ap.constant(5.0)
    with ap.ForwardAccumulator(x, [1.0, 1.0]) as acc:
        y = ap.sum(x**2) * c
        z = c * 2.0
    assert acc.jvp(y).numpy() == 30.0
    assert acc.jvp(z) is None
    assert acc.jvp(z, unconnected_gradients="zero").numpy() == 0.0
    np.testing.assert_array_equal(acc.jvp(x).numpy(), [1.0, 1.0])
    d = acc.jvp({"y": y, "both": [y, z]})
    assert d["y"].numpy() == 30.0 and d["both"][1] is None
    with pytest.raises(ValueError, match="shape"):
        ap.ForwardAccumulator(x, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="tangents"):
        ap.ForwardAccumulator([x, c], [np.ones(2)])


def test_forward_mode_through_numpy_code_and_matches_reverse_mode():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((3, 4))
    x = ap.constant(rng.standard_normal(4))
    u = rng.standard_normal(4)

    def f(x):
        h = np.tanh(W @ x)
        return np.concatenate([h, np.cumsum(h) ** 2])

    with ap.ForwardAccumulator(x, u) as acc:
        y = f(x)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y2 = f(x)
    J = tape.jacobian(y2, x).numpy()
    np.testing.assert_allclose(acc.jvp(y).numpy(), J @ u, rtol=1e-12, atol=1e-14)


def test_hvp_forward_over_reverse_and_reverse_over_forward():
    f = lambda x: ap.sum(ap.sin(x) * x**2)  # noqa: E731
    x0 = np.array([0.3, -1.2, 2.0])
    v = np.array([1.0, -0.5, 0.25])
    H = ap.hessian(f, x0).numpy()
    x = ap.constant(x0)
    with ap.ForwardAccumulator(x, v) as acc:
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(g).numpy(), H @ v, rtol=1e-12)
    with ap.GradientTape() as tape:
        tape.watch(x)
        with ap.ForwardAccumulator(x, v) as acc:
            y = f(x)
        d = acc.jvp(y)
    np.testing.assert_allclose(tape.gradient(d, x).numpy(), H @ v, rtol=1e-12)
    np.testing.assert_allclose(ap.hessian_vector_product(f, x0, v).numpy(), H @ v, rtol=1e-12)


def _fd_hessian(f, x0, h=1e-5):
    def grad(v):
        t = ap.constant(v)
        with ap.GradientTape() as tape:
            tape.watch(t)
            y = f(t)
        return tape.gradient(y, t).numpy()

    n = x0.size
    cols = []
    for e in np.eye(n):
        e = e.reshape(x0.shape)
        cols.append(((grad(x0 + h * e) - grad(x0 - h * e)) / (2 * h)).reshape(-1))
    return np.stack(cols, axis=0).reshape(x0.shape + x0.shape)


@pytest.mark.parametrize("name", ["rosenbrock", "logsumexp", "mlp_like", "matrix"])
def test_hessian_and_hvp_match_finite_differences_of_the_gradient(name):
    rng = np.random.default_rng(7)
    fs = {
        "rosenbrock": (lambda x: ap.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2),
                       rng.uniform(-1, 1, 4)),
        "logsumexp": (lambda x: ap.logsumexp(x * 2.0) + ap.sum(x**4) / 4, rng.standard_normal(5)),
        "mlp_like": (lambda x: ap.sum(ap.tanh(np.outer(x, x) @ np.ones(3))), rng.standard_normal(3)),
        "matrix": (lambda X: np.sum(np.einsum("ij,jk->ik", X, X.T) ** 2), rng.standard_normal((2, 3))),
    }
    f, x0 = fs[name]
    H = ap.hessian(f, x0).numpy()
    np.testing.assert_allclose(H, _fd_hessian(f, x0), rtol=1e-6, atol=1e-6)
    v = rng.standard_normal(x0.shape)
    hv = ap.hessian_vector_product(f, x0, v).numpy()
    np.testing.assert_allclose(hv.reshape(-1), H.reshape(x0.size, x0.size) @ v.reshape(-1),
                               rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="scalar"):
        ap.hessian(lambda x: x * 2.0, x0)
