"""autoprop.function and numpy options given as Python lists (fn41; verify40b F4): np.pad's ``pad_width`` list read
from outside the traced function was frozen at its first items (the eager value changed, the replay did not),
while np.tile's list was refused, inline literals too. A list of Python ints is now part of the signature, for
both: a call whose list holds other items traces again; an array option is still refused by the function's name."""

import numpy as np
import pytest

import autoprop as ap
from autoprop.tracing import TraceError

W0 = np.arange(6.0).reshape(2, 3) / 5 - 0.3
X = np.array([[1.0, -0.5], [0.25, 2.0]])


def _pair(body):
    """(eager, traced) steps returning (loss, dL/dW) for ``body(y)`` of ``y = x @ W``."""
    W = ap.Variable(W0.copy())

    def step(x):
        with ap.GradientTape() as tape:
            loss = np.sum(body(x @ W) ** 2)
        return loss, tape.gradient(loss, W)
    return step, ap.function(step)


def _same(a, b):
    return all(np.array_equal(np.asarray(p), np.asarray(q)) for p, q in zip(a, b))


@pytest.mark.parametrize("body_of", [
    lambda o: lambda y: np.pad(y, o, mode="reflect"),
    lambda o: lambda y: np.pad(y, o, constant_values=0.7),
    lambda o: lambda y: np.pad(y, [o, [0, 1]], mode="edge"),
    lambda o: lambda y: np.tile(y, o),
])
def test_a_list_option_read_from_outside_is_read_at_each_call(body_of):
    opt = [1, 1]
    eager, traced = _pair(body_of(opt))
    for items in ([1, 1], [2, 1], [1, 1], [2, 1]):
        opt[:] = items
        e = eager(X)
        t = traced(X)
        assert _same((t[0], t[1]), (e[0].numpy(), e[1].numpy())), items  # before: the first items' value
    assert traced.trace_count == 1 and traced.traces == 4  # (one signature, traced again at each change)


def test_an_inline_list_of_tile_is_traced_once_and_an_array_option_is_refused():
    eager, traced = _pair(lambda y: np.tile(y, [2, 1]))
    for _ in range(2):
        assert _same(traced(X), [v.numpy() for v in eager(X)])  # before: TraceError (a list refused)
    assert traced.traces == 1
    reps = np.array([2, 1])
    _, traced = _pair(lambda y: np.tile(y, reps))
    with pytest.raises(TraceError, match=r"np\.tile \(its positions come from an option that is an array"):
        traced(X)
    widths = np.array([1, 1])
    _, traced = _pair(lambda y: np.pad(y, widths, mode="reflect"))
    with pytest.raises(TraceError, match=r"np\.pad \(its widths come from an option that is an array"):
        traced(X)  # before: frozen silently


def test_anp_array_of_plain_data_is_a_plain_array_so_data_preparation_writes_in_place():
    """fn41: HIPS autograd's gmm.py and gplvm.py, ported by ``import autoprop.numpy as np``, prepare their data with
    ``features = rs.randn(n, 2) * np.array([a, b])`` then ``features[:, 0] += 1`` (examples/data.py's
    make_pinwheel); anp.array gave a constant Tensor and the write was refused. Plain data now gives numpy's array,
    as anp.zeros and autograd.numpy.array do; a Tensor inside still gives a recorded Tensor."""
    import autograd
    import autograd.numpy as agn

    import autoprop.numpy as anp

    def prepare(np_):
        rs = np.random.RandomState(0)
        features = rs.randn(6, 2) * np_.array([0.3, 0.05])
        features[:, 0] += 1  # before: TypeError (t += value on a view of a Tensor)
        return features

    data = prepare(anp)
    assert type(data) is np.ndarray and type(anp.asarray([1, 2])) is np.ndarray
    np.testing.assert_array_equal(data, prepare(np))
    mu = ap.Variable([0.5, -0.25])
    with ap.GradientTape() as tape:
        loss = anp.sum(anp.array([mu[0] * 2.0, 1.0]) @ (data @ mu)[:2])  # a Tensor inside: recorded
    ref = autograd.grad(lambda m: agn.sum(agn.array([m[0] * 2.0, 1.0]) @ agn.dot(data, m)[:2]))(np.array([0.5, -0.25]))
    np.testing.assert_allclose(tape.gradient(loss, mu).numpy(), ref, rtol=1e-12)
    assert type(ap.convert_to_tensor([1.0, 2.0])) is ap.Tensor
