"""Issue 15 / verify40 M2: a student's ordinary numpy inside ``@autoprop.function``.

On main each numpy function below worked eagerly and was refused at trace time with a message about an
operation the user never wrote (autoprop.getitem key=, take_along_axis, where, concatenate, .numpy()).
Now the positions and masks autoprop builds from shapes alone (np.trace, np.diag, np.roll, np.tile,
np.pad(mode='reflect'), np.tril/np.triu, np.cumprod) are constants of the trace (``observe.static``);
the positions and masks built from values (np.sort's, np.partition's, np.median's, the NaN masks and counts of
np.nansum, np.nanmean, np.nanmax, np.nanvar, np.nanstd) are computed again from each replay's values (``tape.replayed``); np.percentile, np.quantile and np.interp,
which read the values in Python, are refused under their own name, as np.roll's shift, np.tril's k and
np.partition's kth when they are arrays (arguments of the call). Each test failed on main (5e9d8bfd).
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import autoprop as ap
from autoprop.tracing import TraceError

W0 = np.arange(12.0).reshape(3, 4) / 10 - 0.4
_RAMP = ap.constant(np.linspace(1.0, 2.0, 4))  # (made outside the function: a constant of the trace)

# (the user's loss of W and x; HIPS autograd's loss of W for one x, written without the function under test)
OPS = {
    "trace": (lambda W, x: np.trace(x @ W), lambda W, x: anp.trace(anp.dot(x, W))),
    "diag-2d": (lambda W, x: np.sum(np.diag(x @ W) ** 2),
                lambda W, x: anp.sum(anp.stack([anp.dot(x, W)[i, i] for i in range(4)]) ** 2)),
    "diag-1d": (lambda W, x: np.sum(np.diag(np.sum(x @ W, 0)) @ W.T),
                lambda W, x: anp.sum(anp.dot(anp.diag(anp.sum(anp.dot(x, W), 0)), W.T))),
    "roll": (lambda W, x: np.sum(np.roll(x @ W, 1, axis=1) ** 3),
             lambda W, x: anp.sum(anp.concatenate([anp.dot(x, W)[:, 3:], anp.dot(x, W)[:, :3]], 1) ** 3)),
    "tile": (lambda W, x: np.sum(np.tile(x @ W, 2) ** 2 * 1.5),
             lambda W, x: anp.sum(anp.concatenate([anp.dot(x, W)] * 2, 1) ** 2 * 1.5)),
    "pad-reflect": (lambda W, x: np.sum(np.pad(x @ W, 1, mode="reflect") ** 3),
                    lambda W, x: anp.sum(anp.dot(x, W)[np.ix_([1, 0, 1, 2, 3, 4, 3], [1, 0, 1, 2, 3, 2])] ** 3)),
    "tril-triu": (lambda W, x: np.sum(np.tril(x @ W) ** 2) + np.sum(np.triu(x @ W, 1) ** 3),
                  lambda W, x: anp.sum((anp.dot(x, W) * np.tri(5, 4)) ** 2)
                  + anp.sum((anp.dot(x, W) * (1 - np.tri(5, 4, 0))) ** 3)),
    "cumprod": (lambda W, x: np.sum(np.cumprod(x @ W, axis=1)),
                lambda W, x: sum(anp.sum(anp.prod(anp.dot(x, W)[:, :j + 1], axis=1)) for j in range(4))),
    "sort": (lambda W, x: np.sum(np.sort(x @ W, axis=1) ** 3 * _RAMP),
             lambda W, x: anp.sum(anp.stack([anp.sort(r) for r in anp.dot(x, W)]) ** 3 * np.linspace(1.0, 2.0, 4))),
    "partition": (lambda W, x: np.sum(np.partition(x @ W, 1, axis=1)[:, :2] ** 3),
                  lambda W, x: anp.sum(anp.stack([anp.sort(r)[:2] for r in anp.dot(x, W)]) ** 3)),
    "median": (lambda W, x: np.sum(np.median(x @ W, axis=0) ** 3),
               lambda W, x: anp.sum(anp.stack([anp.sort(c)[2] for c in anp.dot(x, W).T]) ** 3)),
    "nanmean": (lambda W, x: np.sum(np.nanmean(x @ W, axis=0) ** 3), lambda W, x: anp.sum(anp.mean(anp.dot(x, W), 0) ** 3)),
    "nanmax": (lambda W, x: np.sum(np.nanmax(x @ W, axis=0) ** 3), lambda W, x: anp.sum(anp.max(anp.dot(x, W), 0) ** 3)),
    "nanvar": (lambda W, x: np.sum(np.nanvar(x @ W, axis=0, ddof=1)), lambda W, x: anp.sum(anp.var(anp.dot(x, W), 0, ddof=1))),
    "nanstd": (lambda W, x: np.sum(np.nanstd(x @ W, axis=1)), lambda W, x: anp.sum(anp.std(anp.dot(x, W), 1))),
    "nansum": (lambda W, x: np.nansum((x @ W) ** 3), lambda W, x: anp.sum(anp.dot(x, W) ** 3)),
}


def _steps(f):
    W = ap.Variable(W0.copy(), name="W")

    def step(x):
        with ap.GradientTape() as tape:
            loss = f(W, x)
        return loss, tape.gradient(loss, W)
    return step, ap.function(step)


def _equal(a, b):
    return all(np.array_equal(np.asarray(u), np.asarray(v), equal_nan=True) for u, v in zip(a, b))


@pytest.mark.parametrize("name", list(OPS))
def test_traced_loss_and_gradient_equal_eager_over_new_values(name):
    eager, traced = _steps(OPS[name][0])
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = rng.standard_normal((5, 3))
        assert _equal(traced(x), eager(x)), name  # main: TraceError naming an internal operation
    assert traced.trace_count == 1


@pytest.mark.parametrize("name", list(OPS))
def test_gradient_matches_hips_autograd(name):
    x = np.random.default_rng(4).standard_normal((5, 3))
    _, traced = _steps(OPS[name][0])
    traced(x)  # (the trace's own call: eager)
    loss, grad = traced(x)  # a replay
    oracle = OPS[name][1]
    assert np.allclose(np.asarray(loss), oracle(W0, x), rtol=1e-12, atol=1e-12)
    assert np.allclose(np.asarray(grad), autograd.grad(oracle)(W0, x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["median", "nanmax", "nanmean", "nansum", "nanvar", "nanstd", "sort"])
def test_traced_on_finite_values_replayed_with_nans_equal_eager(name):
    eager, traced = _steps(OPS[name][0])
    nans = np.where(np.arange(15).reshape(5, 3) % 4 == 0, np.nan, 1.0 + np.arange(15).reshape(5, 3) / 7)
    with np.errstate(invalid="ignore", divide="ignore"):
        for x in (np.random.default_rng(5).standard_normal((5, 3)), nans, np.full((5, 3), np.nan)):
            assert _equal(traced(x), eager(x)), name  # a NaN check taken once at trace time would be frozen
    assert traced.trace_count == 1


@pytest.mark.parametrize("call, name", [
    (lambda W, x: np.percentile(x @ W, 30), "np.percentile"),
    (lambda W, x: np.quantile(x @ W, 0.3, axis=0).sum(), "np.quantile"),
    (lambda W, x: np.sum(np.interp(np.sum(x @ W, 1), ap.constant([0.0, 1.0, 2.0]), W[0, :3])), "np.interp"),
])
def test_value_positioned_functions_are_refused_by_their_own_name(call, name):
    eager, traced = _steps(call)
    x = np.random.default_rng(6).standard_normal((5, 3))
    eager(x)  # (works eagerly)
    with pytest.raises(TraceError) as e:
        traced(x)
    msg = str(e.value)
    assert msg.startswith(f"autoprop.function: {name} (its") or msg.startswith(f"autoprop.function: {name} (the")
    assert "from the values" in msg and "outside the function" in msg and "autoprop." + name[3:] not in msg


@pytest.mark.parametrize("call, name, what", [
    (lambda y, k: np.roll(y, k, axis=1), "np.roll", "positions come"),
    (lambda y, k: np.tril(y, k), "np.tril", "mask comes"),
    (lambda y, k: np.partition(y, k, axis=1), "np.partition", "kth comes"),
])
def test_an_option_passed_as_an_argument_is_still_refused_by_the_functions_name(call, name, what):
    W = ap.Variable(W0.copy())

    @ap.function
    def f(x, k):
        with ap.GradientTape() as tape:
            loss = np.sum(call(x @ W, k) ** 3)
        return loss, tape.gradient(loss, W)
    with pytest.raises(TraceError) as e:  # the positions come from k's value: never a constant of the trace
        f(np.ones((5, 3)), np.asarray(1))
    assert str(e.value).startswith(f"autoprop.function: {name} (its {what} from an option that is an array")


@pytest.mark.parametrize("fn", [np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanvar, np.nanstd, np.nanprod,
                                np.nancumsum])
def test_a_nan_function_of_a_0d_tensor_is_traced(fn):
    """verify40b F1: a nan-function of a 0-d tensor (``np.nansum(np.sum(x @ W))``) worked eagerly and raised, at
    every traced call, "autoprop.core.tape.replayed: <ufunc 'isnan'> returned bool, not an array"."""
    eager, traced = _steps(lambda W, x: np.sum(fn(np.sum(x @ W))) * 1.5)
    nan = np.full((5, 3), 1.0)
    nan[2, 1] = np.nan
    with np.errstate(invalid="ignore"):
        for x in (np.random.default_rng(7).standard_normal((5, 3)), nan, np.ones((5, 3))):
            assert _equal(traced(x), eager(x)), fn.__name__
    assert traced.trace_count == 1
