"""Session 29's numpy names (autoprop/core/prims/polynomial.py)
checked against jax: each case is a scalar loss ``fn(np, *inputs)`` at fixed inputs (``np`` is numpy
over autoprop Tensors, or jax.numpy), and ``write_refs`` (run by hand under .venv-peers: jax
0.10.2) stores jax's gradient of each in tests/poly29_refs.py. The roots cases use losses symmetric
in the roots (sums of powers), so that no assertion depends on LAPACK's order of eigenvalues."""

import numpy as np

try:  # (imported from tests/ as poly29_cases, and as tests.poly29_cases by tests/complex_scan.py)
    from primitive_samples import F
except ImportError:  # pragma: no cover
    from tests.primitive_samples import F

_r = np.random.default_rng(29)
X8 = np.arange(8.0).reshape(2, 2, 2) + _r.uniform(-0.3, 0.3, (2, 2, 2))
W22 = np.array([[0.25, 0.75], [1.0, 0.5]]) + _r.uniform(0.0, 0.2, (2, 2))
X234 = _r.standard_normal((2, 3, 4))
W42 = _r.uniform(0.5, 1.5, (4, 2))  # (X8, W22, W42: kept so that the draws below stay as written)
P5 = np.array([1.5, -2.0, 0.7, 3.0, -1.2])
Q3 = np.array([0.8, 1.3, -0.4])
PH = np.array([0.0, 0.78, 5.49, 5.5, 1.2, -4.0, 2.5])  # jumps over pi: unwrap corrects them
XS = np.array([0.3, 4.1, -2.7, 7.9, -0.45, 1e-310])  # (a subnormal: frexp's exponent -1028)
ROOTS_R = np.array([0.5, -1.25, 2.0, 3.5])  # distinct real roots
P_CPLX = np.array([1.0, -0.4, 2.1, 0.3, 1.7])  # two complex-conjugate pairs of roots
M3 = np.array([[2.0, 0.3, -0.1], [0.4, 1.0, 0.2], [0.0, 0.5, -1.5]])


def _w(n):
    return np.arange(1.0, n + 1.0)


#: name: (fn(np, *inputs) -> scalar, inputs)
JAX_CASES = {
    "ediff1d": (lambda np, x, b: (np.ediff1d(x, to_begin=b, to_end=np.array([1.0, 2.0])) ** 2 * _w(7)).sum(),
                (X234[0, :2, :2], np.array([0.3, -0.2]))),
    "resize": (lambda np, x: (np.resize(x, (3, 5)) ** 2 * _w(15).reshape(3, 5)).sum()
               + (np.resize(x, (1, 2)) * 3.0).sum(), (X234[0, :2, :3],)),
    "unwrap": (lambda np, p: (np.unwrap(p) ** 2 * _w(7)).sum() + (np.unwrap(p, period=4.0) * _w(7)).sum(), (PH,)),
    "unwrap_2d": (lambda np, p: (np.unwrap(p, axis=0, discont=4.0) ** 3).sum(), (PH[:6].reshape(3, 2) * 2.0,)),
    "apply_over_axes": (lambda np, x: (np.apply_over_axes(np.sum, x, [0, 2]) ** 2).sum()
                        + (np.apply_over_axes(np.mean, x ** 2, [-1]) * _w(3).reshape(1, 3, 1)).sum(), (X234,)),
    "modf": (lambda np, x: (np.modf(x)[0] ** 2 * _w(5)).sum() + np.modf(x)[1].sum(), (XS[:5],)),
    "frexp": (lambda np, x: (np.frexp(x)[0] ** 2 * _w(5)).sum(), (XS[:5],)),
    "i0": (lambda np, x: (np.i0(x) * _w(5)).sum(), (XS[:5] / 2.0,)),
    "polyadd": (lambda np, p, q: (np.polyadd(p, q) ** 2 * _w(5)).sum() + (np.polyadd(q, p) * _w(5)).sum(), (P5, Q3)),
    "polysub": (lambda np, p, q: (np.polysub(q, p) ** 2 * _w(5)).sum() + (np.polysub(p, q) * _w(5)).sum(), (P5, Q3)),
    "polymul": (lambda np, p, q: (np.polymul(p, q) ** 2 * _w(7)).sum(), (P5, Q3)),
    "polyder": (lambda np, p: (np.polyder(p) ** 2 * _w(4)).sum() + (np.polyder(p, 3) * _w(2)).sum(), (P5,)),
    "polyint": (lambda np, p, k: (np.polyint(p, 2, k=k) ** 2 * _w(7)).sum() + (np.polyint(p) * _w(6)).sum(),
                (P5, np.array([0.5, -1.5]))),
    "poly_roots": (lambda np, z: (np.poly(z) ** 2 * _w(5)).sum(), (ROOTS_R,)),
    "poly_matrix": (lambda np, a: (np.real(np.poly(a)) * _w(4)).sum(), (M3,)),
    "polydiv": (lambda np, u, v: (np.polydiv(u, v)[0] ** 2 * _w(3)).sum() + (np.polydiv(u, v)[1][-2:] * _w(2)).sum(),
                (P5, Q3)),
    "roots_real": (lambda np, p: (np.real(np.roots(p)) ** 3).sum(), (np.array([1.0, -4.75, 2.375, 8.9375, -4.375]),)),
    "roots_complex": (lambda np, p: (np.real(np.roots(p)) ** 3 + np.imag(np.roots(p)) ** 2).sum(), (P_CPLX,)),
}


#: one sample per composite of polynomial.py, as tests/primitive_samples.py's FUNCTION_SAMPLES: value,
#: gradient, JVP and second order (tests/test_autoprop_polynomial.py), and on complex input
#: (tests/complex_scan.py adds them to its COMPOSITE_SAMPLES)
SAMPLES29 = {
    "polyadd": F(lambda np, a, b: np.polyadd(a, b) ** 2, (4,), (2,), autograd=False),
    "polysub": F(lambda np, a, b: np.polysub(b, a) * a[0], (4,), (2,), autograd=False),
    "polymul": F(lambda np, a, b: np.polymul(a, b) ** 2 + np.polyder(np.polymul(a, a), 2).sum(), (3,), (3,),
                 autograd=False),
    "polyder": F(lambda np, a: np.polyder(a * a, 2), (4,), autograd=False),
    "polyint": F(lambda np, a, k: np.polyint(a * a, 2, k=k) ** 2, (3,), (2,), autograd=False),
    "polydiv": F(lambda np, u, v: np.polydiv(u, v)[0] ** 2, (5,), (3,), domain=[(-2, 2), (0.5, 2)],
                 autograd=False),
    "poly": F(lambda np, z: np.poly(z) ** 2, (3,), autograd=False),
    "roots": F(lambda np, p: np.sum(np.roots(p) ** 2), (4,), domain=[(0.5, 2)], autograd=False),
    "ediff1d": F(lambda np, a, b: np.ediff1d(a * a, to_begin=b) ** 2, (2, 3), (1,), autograd=False),
    "resize": F(lambda np, a: np.resize(a * a, (2, 5)), (3,), autograd=False),
    "unwrap": F(lambda np, a: np.unwrap(a * 4.0) ** 2, (5,), autograd=False),
    "apply_over_axes": F(lambda np, a: np.apply_over_axes(np.sum, a * a, [0, 1]), (2, 3), autograd=False),
    "modf29": F(lambda np, a: np.modf(a * a)[0] ** 2, (4,), domain=[(1.1, 1.3)], autograd=False),
    "frexp29": F(lambda np, a: np.frexp(a * a)[0] ** 3, (4,), domain=[(1.1, 1.3)], autograd=False),
    "i029": F(lambda np, a: np.i0(a * a), (4,), autograd=False),
}


def write_refs(path):  # pragma: no cover - run by hand under .venv-peers (jax)
    """``cd tests && ../../main/.venv-peers/bin/python -c "import poly29_cases as c;
    c.write_refs('poly29_refs.py')"``."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    refs = {}
    for name, (fn, xs) in JAX_CASES.items():
        g = jax.grad(lambda *a, fn=fn: fn(jnp, *a), argnums=tuple(range(len(xs))))(*[jnp.asarray(x) for x in xs])
        refs[name] = [np.asarray(d).tolist() for d in g]
    with open(path, "w") as fh:
        fh.write('"""jax 0.10.2 references for tests/test_autoprop_polynomial.py, written by '
                 '``poly29_cases.write_refs``."""\n\nREFS = {\n')
        for k, v in refs.items():
            fh.write(f"    {k!r}: {v!r},\n")
        fh.write("}\n")
