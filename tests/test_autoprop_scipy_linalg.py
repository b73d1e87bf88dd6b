"""``autoprop.scipy.linalg``: scipy.linalg's common calls, recorded (tester22a M2).

scipy.linalg's functions convert a Tensor to numpy: ``sla.solve_triangular(L, y, lower=True)`` in a
GP likelihood gave -2.687 where central differences give 6.660 (r_scipy_linalg.py), with a warning
whose advice (``ap.numpy_function``) passes no gradient either. The twins are checked here against
scipy's values, central differences of scipy's own function entry by entry (so the gradient lives
where scipy reads: a triangle), HIPS autograd where it defines the same derivative, and forward
mode; jax.scipy.linalg agreed to 1e-14 on symmetric directions (it symmetrizes its input), see the
commit message.
"""

from __future__ import annotations

import warnings

import autograd
import autograd.numpy as anp
import autograd.scipy.linalg as asl
import numpy as np
import pytest
import scipy.linalg as sl

import autoprop as ap
from autoprop.scipy import linalg as al

RNG = np.random.default_rng(22)
N = 4
_M = RNG.normal(size=(N, N))
SPD = _M @ _M.T + N * np.eye(N)
GEN = _M + 3.0 * np.eye(N)
B = RNG.normal(size=(N, 2))
BV = RNG.normal(size=N)

CASES = {  # name: (f(module, a, b...), inputs)
    "solve_triangular lower": (lambda m, a, b: m.solve_triangular(a, b, lower=True), GEN, B),
    "solve_triangular upper trans=1": (lambda m, a, b: m.solve_triangular(a, b, trans=1), GEN, B),
    "solve_triangular unit trans=C": (
        lambda m, a, b: m.solve_triangular(a, b, lower=True, unit_diagonal=True, trans="C"), GEN, B),
    "solve_triangular vector": (lambda m, a, b: m.solve_triangular(a, b), GEN, BV),
    "cholesky upper": (lambda m, a: m.cholesky(a), SPD),
    "cholesky lower": (lambda m, a: m.cholesky(a, lower=True), SPD),
    "cho_solve lower": (lambda m, a, b: m.cho_solve(m.cho_factor(a, lower=True), b), SPD, B),
    "cho_solve upper": (lambda m, a, b: m.cho_solve(m.cho_factor(a), b), SPD, BV),
    "solve": (lambda m, a, b: m.solve(a, b), GEN, B),
    "solve transposed": (lambda m, a, b: m.solve(a, b, transposed=True), GEN, BV),
    "solve pos": (lambda m, a, b: m.solve(a, b, assume_a="pos"), SPD, B),
    "solve sym lower": (lambda m, a, b: m.solve(a, b, assume_a="sym", lower=True), SPD, B),
    "solve her": (lambda m, a, b: m.solve(a, b, assume_a="her"), SPD, B),
    "solve diagonal": (lambda m, a, b: m.solve(a, b, assume_a="diagonal"), GEN, B),
    "solve tridiagonal": (lambda m, a, b: m.solve(a, b, assume_a="tridiagonal"), GEN, B),
    "solve lower triangular": (lambda m, a, b: m.solve(a, b, assume_a="lower triangular"), GEN, B),
    "inv": (lambda m, a: m.inv(a), GEN),
    "inv pos lower": (lambda m, a: m.inv(a, assume_a="pos", lower=True), SPD),
    "det": (lambda m, a: m.det(a), GEN),
    "expm": (lambda m, a: m.expm(a), 0.5 * _M),
    "expm batched": (lambda m, a: m.expm(a), 0.4 * RNG.normal(size=(2, 3, 3))),
}


def _scipy_central(f, args, g, h=1e-6):
    """d sum(g * f(scipy, ...)) / d each entry of each argument, by central differences."""
    out = []
    for k, x in enumerate(args):
        d = np.zeros(np.shape(x))
        for idx in np.ndindex(d.shape):
            e = np.zeros(d.shape)
            e[idx] = h
            hi = [y + e if j == k else y for j, y in enumerate(args)]
            lo = [y - e if j == k else y for j, y in enumerate(args)]
            d[idx] = np.sum(g * (f(sl, *hi) - f(sl, *lo))) / (2 * h)
        out.append(d)
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_value_vjp_and_jvp_agree_with_scipy_and_central_differences(name):
    f, *args = CASES[name]
    want = f(sl, *args)
    vs = [ap.Variable(x) for x in args]
    with ap.GradientTape() as tape:
        y = f(al, *vs)
    assert isinstance(y, ap.Tensor) and y.shape == np.shape(want)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-14)
    g = RNG.normal(size=np.shape(want))
    grads = tape.gradient(y, vs, output_gradients=g)
    for got, cd in zip(grads, _scipy_central(f, args, g)):
        np.testing.assert_allclose(got.numpy(), cd, rtol=1e-6, atol=1e-8)
    tangents = [RNG.normal(size=np.shape(x)) for x in args]
    with ap.ForwardAccumulator(vs, tangents) as acc:
        y = f(al, *vs)
    h = 1e-6
    cd = (f(sl, *[x + h * t for x, t in zip(args, tangents)]) - f(sl, *[x - h * t for x, t in zip(args, tangents)])) / (2 * h)
    np.testing.assert_allclose(acc.jvp(y).numpy(), cd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name, oracle", [
    ("solve_triangular lower", asl), ("solve_triangular upper trans=1", asl),
    ("solve", anp.linalg), ("inv", anp.linalg), ("det", anp.linalg),  # (autograd's scipy ones have no VJP)
])
def test_gradients_agree_with_hips_autograd(name, oracle):
    f, *args = CASES[name]
    g = RNG.normal(size=np.shape(f(sl, *args)))
    vs = [ap.Variable(x) for x in args]
    with ap.GradientTape() as tape:
        y = f(al, *vs)
    ours = tape.gradient(y, vs, output_gradients=g)
    for k, got in enumerate(ours):
        want = autograd.grad(lambda x, k=k: anp.sum(
            g * f(oracle, *[x if j == k else a for j, a in enumerate(args)])))(args[k])
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14)


def test_the_gp_likelihood_of_r_scipy_linalg_gets_its_gradient():
    # r_scipy_linalg.py: -2.687 (the solve's path lost) where central differences give 6.660
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(8, 3)), rng.normal(size=8)

    def nll(linalg, ell):
        d2 = np.sum((X[:, None] - X[None]) ** 2, -1)
        L = linalg.cholesky(np.exp(-d2 / (2 * ell ** 2)) + 0.1 * np.eye(8), lower=True)
        a = linalg.solve_triangular(L, y, lower=True)
        return 0.5 * a @ a + np.sum(np.log(np.diag(L)))

    ell = ap.Variable(1.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no escape
        with ap.GradientTape() as tape:
            loss = nll(al, ell)
    h = 1e-6
    cd = (nll(sl, 1.3 + h) - nll(sl, 1.3 - h)) / (2 * h)
    assert float(loss) == pytest.approx(nll(sl, 1.3), rel=1e-13)
    assert float(tape.gradient(loss, ell)) == pytest.approx(cd, rel=1e-7)
    assert cd == pytest.approx(6.659918, rel=1e-6)


def test_bad_input_is_refused_as_scipy_refuses_it():
    """The twins' refusals, each on a Tensor (a call on plain arrays is scipy's own function)."""
    bad = GEN.copy()
    bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        al.solve(ap.constant(bad), B)
    assert np.isnan(al.solve_triangular(ap.constant(bad), B, lower=True, check_finite=False).numpy()).sum() == 0  # (not read)
    with pytest.raises(ValueError, match="not a recognized matrix structure"):
        al.solve(ap.constant(GEN), B, assume_a="triangular")
    with pytest.raises(np.linalg.LinAlgError):
        al.solve(ap.constant(GEN - 10 * np.eye(N)), B, assume_a="pos")  # scipy's Cholesky solver refuses it too
    with pytest.raises(NotImplementedError):
        al.solve(ap.constant(GEN + 1j * GEN), B, transposed=True)
    with pytest.raises(ValueError, match=r"trans must be.*got 3"):
        al.solve_triangular(ap.constant(GEN), B, trans=3)
    with pytest.raises(ValueError, match=r"square matrix.*\(4, 2\)"):
        al.inv(ap.constant(B))
    c, lower = al.cho_factor(ap.constant(SPD))
    assert lower is False and np.all(np.tril(c.numpy(), -1) == 0)  # scipy's holds a's entries there


def _escape_message(fn, *args, **kw):
    x = ap.Variable(args[0])
    with pytest.warns(ap.TapeEscapeWarning) as caught, ap.GradientTape():
        fn(x, *args[1:], **kw)
    return " ".join(str(w.message) for w in caught)


def test_the_escape_warning_names_the_twin_or_numpys_spelling_and_never_numpy_function_as_a_fix():
    msg = _escape_message(sl.solve_triangular, GEN, B, lower=True)
    assert "use autoprop.scipy.linalg.solve_triangular (the same signature, recorded)" in msg
    msg = _escape_message(sl.eigh, SPD)  # no twin here, numpy's is recorded
    assert "use np.linalg.eigh on the Tensor instead" in msg
    assert "use autoprop.scipy.linalg.expm" in _escape_message(sl.expm, GEN)
    msg = _escape_message(sl.sqrtm, SPD)  # neither: custom_gradient, and numpy_function gives no gradient
    assert "@ap.custom_gradient" in msg and "its output is a constant: no gradient" in msg
    assert "or ap.numpy_function." not in msg and "ap.numpy_function(...) for plain-numpy code" not in msg


def test_expm_second_derivative_agrees_with_central_differences_of_scipys_frechet_derivative():
    # the VJP is expm of a block matrix through the record itself, so an outer tape differentiates it
    A0, G, T = 0.5 * _M, RNG.normal(size=(N, N)), RNG.normal(size=(N, N))
    A = ap.Variable(A0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = np.sum(al.expm(A) * G)
        z = np.sum(inner.gradient(y, A) * T)
    np.testing.assert_allclose(outer.gradient(z, A).numpy(),
                               _scipy_central(lambda m, a: np.sum(sl.expm_frechet(a.T, G, compute_expm=False) * T),
                                              [A0], 1.0)[0], rtol=1e-6, atol=1e-8)
    with ap.GradientTape() as tape:
        E = al.expm(A)
    np.testing.assert_allclose(tape.gradient(E, A, output_gradients=G).numpy(),
                               sl.expm_frechet(A0.T, G, compute_expm=False), rtol=1e-13, atol=1e-14)
