"""gradcheck.numerical and the relative-error formula, on values known in closed form."""

import numpy as np
import pytest

from gradcheck import DEFAULT_EPS, layer_numerical_gradients, numerical_gradient, relative_error
from gradcheck.check import compare
from gradcheck.numerical import scalar_objective, step_sizes


def test_default_eps_is_cube_root_of_machine_epsilon():
    assert DEFAULT_EPS == pytest.approx(6.0554544523933395e-06, rel=1e-12)


def test_step_sizes_scale_with_magnitude():
    h = step_sizes(np.array([0.0, 0.5, -1.0, 10.0, -1e3]), eps=1e-6)
    np.testing.assert_allclose(h, [1e-6, 1e-6, 1e-6, 1e-5, 1e-3], rtol=0, atol=1e-20)


def test_linear_closed_form_to_1e8():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((3, 5))
    b = rng.standard_normal(3)
    X = rng.standard_normal((8, 5))
    G = rng.standard_normal((8, 3))
    params = {"W": W, "b": b}
    W0, b0 = W.copy(), b.copy()

    def forward(x):
        return x @ params["W"].T + params["b"]

    num = layer_numerical_gradients(forward, X, params, G)
    np.testing.assert_allclose(num["X"], G @ W0, rtol=0, atol=1e-8)
    np.testing.assert_allclose(num["W"], G.T @ X, rtol=0, atol=1e-8)
    np.testing.assert_allclose(num["b"], G.sum(axis=0), rtol=0, atol=1e-8)
    # every perturbed element was restored exactly
    assert np.array_equal(W, W0) and np.array_equal(b, b0)


def test_nonlinear_closed_form_to_1e8():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 3)) * 3
    G = rng.standard_normal((4, 3))
    grad = numerical_gradient(lambda: scalar_objective(np.sin(x) * np.exp(0.1 * x), G), x)
    expected = G * np.exp(0.1 * x) * (np.cos(x) + 0.1 * np.sin(x))
    np.testing.assert_allclose(grad, expected, rtol=0, atol=1e-8)


def test_large_entries_use_relative_step():
    # f = sum(x**3)/3 at x ~ 1e4: an absolute step of 6e-6 would lose the difference
    # to rounding; the relative step keeps ~1e-10 relative accuracy.
    x = np.array([1.0e4, -2.5e4])
    grad = numerical_gradient(lambda: float(np.sum(x**3) / 3), x)
    np.testing.assert_allclose(grad, x**2, rtol=1e-8)


def test_input_restored_when_objective_raises():
    x = np.array([1.0, 2.0, 3.0])
    calls = []

    def f():
        calls.append(x.copy())
        if len(calls) == 3:
            raise RuntimeError("boom")
        return float(x.sum())

    with pytest.raises(RuntimeError):
        numerical_gradient(f, x)
    assert np.array_equal(x, [1.0, 2.0, 3.0])


def test_rejects_integer_array():
    with pytest.raises(TypeError, match="floating-point"):
        numerical_gradient(lambda: 0.0, np.arange(3))


def test_relative_error_formula_on_given_numbers():
    assert float(relative_error(1.0, 1.1)) == pytest.approx(0.1 / 2.1, rel=1e-15)
    assert float(relative_error(-2.0, 2.0)) == 1.0
    assert float(relative_error(0.0, 0.0)) == 0.0
    assert float(relative_error(1e-300, 0.0)) == 1.0
    # with the checker's floor atol/rtol = 1e-9/1e-6 = 1e-3, a 1e-12 difference of
    # near-zero values is 1e-9 relative, not 1
    assert float(relative_error(1e-12, 0.0, tiny=1e-3)) == pytest.approx(1e-9, rel=1e-12)
    np.testing.assert_allclose(relative_error([3.0, 0.5], [1.0, 0.5]), [0.5, 0.0])


def test_compare_reports_worst_element_and_values():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.array([[1.0, 2.0], [3.3, 4.0]])
    c = compare(a, b, "manual-vs-numerical", rtol=1e-6, atol=1e-9)
    assert c.worst_index == (1, 0)
    assert (c.worst_a, c.worst_b) == (3.0, 3.3)
    assert c.max_abs_error == pytest.approx(0.3, rel=1e-12)
    assert c.max_rel_error == pytest.approx(0.3 / 6.3, rel=1e-12)
    assert not c.passed
    assert c.names == ("manual", "numerical")


def test_compare_pass_rule_is_abs_or_rel():
    # |a-b| = 5e-10 <= atol passes although it is 100% relative
    assert compare(np.array([5e-10]), np.array([0.0]), "p-vs-q", rtol=1e-6, atol=1e-9).passed
    assert not compare(np.array([5e-9]), np.array([0.0]), "p-vs-q", rtol=1e-6, atol=1e-9).passed
    # relative 1e-7 passes for a large value whose absolute error is far above atol
    assert compare(np.array([1e4]), np.array([1e4 * (1 + 2e-7)]), "p-vs-q", rtol=1e-6, atol=1e-9).passed


# ----------------------------------------------------------------- one kernel, several plans


@pytest.mark.parametrize("method, tol", [("central", 1e-9), ("forward", 1e-7), ("richardson", 1e-11),
                                         ("complex", 1e-15)])
def test_kernel_differentiates_sin_to_each_methods_order(method, tol):
    from gradcheck.numerical import default_eps, difference_quotient

    x0 = 0.7
    est = difference_quotient(lambda t: np.sin(x0 + t), default_eps(method), method)
    assert abs(est - np.cos(x0)) < tol


@pytest.mark.parametrize("method", ["central", "forward", "richardson"])
def test_every_plan_gives_the_element_loops_quotients(method):
    """Stacked batch, chunked remote and the loop run the same copies through the same kernel."""
    from gradcheck.numerical import batched_input_scan, local_forward_many, many_scan

    rng = np.random.default_rng(5)
    W = rng.standard_normal((4, 3))
    X = rng.standard_normal((6, 4))
    G = rng.standard_normal((6, 3))

    def forward(x):
        return np.tanh(x @ W)

    x = X.copy()
    loop = numerical_gradient(lambda: scalar_objective(forward(x), G), x, method=method, eps=1e-4)
    stacked = batched_input_scan(forward, [X], 0, G, eps=1e-4, method=method).grad
    chunked = many_scan(local_forward_many(forward, {}), [X], {}, 0, G, eps=1e-4, method=method,
                        max_per_call=8).grad
    np.testing.assert_allclose(stacked, loop, rtol=0, atol=1e-9)
    np.testing.assert_allclose(chunked, loop, rtol=0, atol=1e-12)
    exact = (G * (1 - forward(X) ** 2)) @ W.T
    assert np.abs(loop - exact).max() < {"central": 1e-7, "forward": 1e-3, "richardson": 1e-10}[method]


def test_numerical_jacobian_of_a_linear_map_is_its_matrix():
    from gradcheck.numerical import numerical_jacobian

    A = np.random.default_rng(2).standard_normal((3, 4))
    J = numerical_jacobian(lambda x: A @ x, np.ones(4))
    np.testing.assert_allclose(J, A, rtol=0, atol=1e-9)
    copies = []
    Jm = numerical_jacobian(None, np.ones(4), forward_many=lambda xs: copies.append(len(xs)) or [A @ x for x in xs])
    np.testing.assert_array_equal(Jm, J)
    assert copies == [8]  # every perturbed copy in one call


def test_close_is_the_rule_compare_decides_with():
    """check, zoo, train, diagnose and grade use compare() or close(): one rule, one verdict."""
    from gradcheck.compare import close

    rng = np.random.default_rng(0)
    for _ in range(200):
        a = rng.standard_normal(5) * 10.0 ** rng.integers(-12, 2)
        b = a + rng.standard_normal(5) * 10.0 ** rng.integers(-14, 0)
        rtol, atol = 10.0 ** rng.integers(-9, -3), 10.0 ** rng.integers(-12, -6)
        assert close(a, b, rtol, atol) == compare(a, b, "a-vs-b", rtol=rtol, atol=atol).passed
    assert close([1.0, np.nan], [1.0, np.nan], 0, 0, equal_nan=True)
    assert not close([1.0, np.nan], [1.0, np.nan], 1e-6, 1e-9)
    assert not close(np.ones(2), np.ones(3))


def test_directional_derivatives_use_the_method_asked_for():
    """Fast mode's screen forms the quotient of the method given (not always central)."""
    import manualprop as mp
    from gradcheck import check_layer
    from gradcheck.numerical import directional_derivatives

    rng = np.random.default_rng(3)
    X, G = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    f = np.tanh
    h = 1e-3
    got = {m: directional_derivatives(f, [X], {}, G, input_names=["X"], groups=[["X"]], n_dirs=1, eps=h,
                                      rng=np.random.default_rng(0), method=m)[("X",)][0]
           for m in ("central", "forward", "richardson")}
    u = got["central"][0]["X"]
    L = lambda t: float(np.sum(f(X + t * u) * G))  # noqa: E731
    central = (L(h) - L(-h)) / (2 * h)
    assert got["central"][1] == pytest.approx(central, rel=1e-12)
    assert got["forward"][1] == pytest.approx((L(h) - L(0.0)) / h, rel=1e-12)
    half = (L(h / 2) - L(-h / 2)) / h
    assert got["richardson"][1] == pytest.approx((4 * half - central) / 3, rel=1e-9)
    exact = float(np.sum(G * (1 - np.tanh(X) ** 2) * u))
    assert abs(got["richardson"][1] - exact) < abs(got["central"][1] - exact)  # O(h^4) beats O(h^2)
    with pytest.raises(ValueError, match="complex step"):
        directional_derivatives(f, [X], {}, G, input_names=["X"], groups=[["X"]], method="complex")
    # Richardson's larger step no longer fails the screen of a correct layer (it used central there)
    r = check_layer(mp.Tanh(), (4, 5), method="richardson", mode="fast", twin=None)
    assert r.passed and all(c.how == "directional" for rec in r.records for c in rec.comparisons)


def test_grown_step_stops_where_truncation_and_round_off_balance():
    """phi(t) = 1e8 + exp(1 + t): round-off u*1e8/h (3.7e-3 at the default step) swamps phi'(0) = e.
    The step grows while the estimates agree within round-off; at eps = 6e-2 truncation
    (h^2 e / 6 = 1.6e-3) shows, so 6e-3 is kept, and its error bound covers its real error."""
    from gradcheck.numerical import difference_quotient, grown_step

    def estimate(e):
        return difference_quotient(lambda t: 1e8 + np.exp(1.0 + t), e)

    u = float(np.finfo(np.float64).eps)
    eps0 = DEFAULT_EPS
    atol0 = u * 1e8 / eps0
    est, eps, atol = grown_step(estimate, estimate(eps0), eps0, atol0, 1e-6 * np.e)
    assert eps == pytest.approx(eps0 * 1000)
    assert abs(est - np.e) <= atol < atol0 / 100
    assert abs(abs(est - np.e) - np.e * eps**2 / 6) <= u * 1e8 / eps  # truncation, and round-off below it
    # a function linear in t has no truncation: the step grows up to the target (or max_eps)
    lin = grown_step(lambda e: difference_quotient(lambda t: 1e8 + 3.0 * t, e), 3.0, eps0, atol0, 3e-6)
    assert lin[1] == pytest.approx(eps0 * 1e4) and abs(lin[0] - 3.0) <= lin[2] < atol0 / 1000
