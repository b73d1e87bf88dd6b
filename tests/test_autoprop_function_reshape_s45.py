"""autoprop.function: a replay never runs on with a shape the trace did not record, and never refuses after it changed
state (verify45c). The user's numpy on an integer or boolean argument (``y[m]``) is computed before any step of the
replay: another shape (another count of ``m``) traces again, as a new input signature, before any Variable changes
(H1, M5). ``ap.numpy_function`` whose output has another shape or dtype than when traced: refused at the replay before
any event (stateful=True, refused at the trace after an event) or traced again (stateful=False, the call's arguments
as inputs) (H2: anp.var of a longer output kept the traced count). ``anp.take`` with boolean indices reads them as
0 and 1, as numpy (H3: a mask). Each against the same code run eagerly and plain numpy."""
import autograd
import autograd.numpy as agnp
import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp
from autoprop.tracing import TraceError

SCALE = ap.constant(np.arange(1.0, 5.0))


def _step(W, c, opt, y, m):
    c.assign_add(1.0)
    with ap.GradientTape() as tape:
        loss = anp.sum(W ** 2)
    opt.apply_gradients(zip(tape.gradient(loss, [W]), [W]))
    return anp.sum(anp.take(W, y[m], axis=0) * SCALE)


def test_another_count_of_y_m_traces_again_after_the_events_of_the_step():
    """H1: an assign and an SGD update, then take(W, y[m]) with another count of m: was a TraceError after the
    assign and the update had run; now the call's result and state are the eager call's, and each count traces
    once."""
    states = [(ap.Variable(np.cos(np.arange(24.0)).reshape(6, 4)), ap.Variable(np.zeros(())),
               ap.optimizers.SGD(learning_rate=0.1)) for _ in range(2)]
    traced = ap.function(lambda y, m: _step(*states[0], y, m))
    calls = [([0, 1, 2], [1, 0, 1]), ([3, 4, 5], [1, 1, 1]), ([5, 0, 2], [0, 1, 1]), ([1, 1, 4], [1, 1, 1]),
             ([2, 3, 4], [0, 0, 1])]
    for y, m in calls:
        y, m = np.array(y), np.array(m, dtype=bool)
        got = traced(y, m).numpy()
        want = _step(*states[1], y, m).numpy()
        assert got == want
        assert np.array_equal(states[0][0].numpy(), states[1][0].numpy())
        assert states[0][1].numpy() == states[1][1].numpy()
    assert traced.traces == 3  # counts 2, 3, 1
    assert traced.trace_count == 1  # one input signature


def _nf_loss(x, y, stateful, after=None):
    out = ap.numpy_function(lambda v: np.flatnonzero(v).astype(float) + 1.0, [y], stateful=stateful)
    loss = anp.var(out) * anp.sum(x[:len(out)] ** 2)
    if after is not None:
        after.assign_add(1.0)
    return loss


def test_numpy_function_of_another_length_refused_before_any_event():
    """H2: stateful=True (the default): an output of another length at a replay raises TraceError, before the
    assign that follows it in the step (it gave anp.var of the traced count: 92.77 for 66.04)."""
    c = ap.Variable(np.zeros(()))
    x = np.linspace(0.5, 3.0, 4)
    f = ap.function(lambda x, y: _nf_loss(x, y, True, c))
    y = np.array([0, 0, 1, 1])
    assert f(x, y).numpy() == _nf_loss(ap.constant(x), y, True).numpy()
    assert f(x, np.array([1, 0, 0, 1])).numpy() == _nf_loss(ap.constant(x), np.array([1, 0, 0, 1]), True).numpy()
    with pytest.raises(TraceError, match=r"numpy_function.*shape \(4,\).*traced call's returned float64 of shape "
                                         r"\(2,\).*stateful=False"):
        f(x, np.array([1, 1, 1, 1]))
    assert c.numpy() == 2.0  # the trace's and the replay's assign; not the refused call's


def test_numpy_function_after_an_event_refused_at_the_trace():
    """stateful=True after an assign: a replay could refuse a new shape only after the assign, so the trace refuses
    it; with stateful=False and the call's arguments as inputs it runs first at each replay."""
    c = ap.Variable(np.zeros(()))

    def after(x, y, stateful):
        c.assign_add(1.0)
        return _nf_loss(x, y, stateful)
    x = np.linspace(0.5, 3.0, 4)
    with pytest.raises(TraceError, match=r"numpy_function\(<lambda>\) after a Variable.assign\* or apply_gradients"):
        ap.function(lambda x, y: after(x, y, True))(x, np.array([0, 0, 1, 1]))
    f = ap.function(lambda x, y: after(x, y, False))
    for y in ([0, 0, 1, 1], [1, 1, 1, 1], [0, 1, 0, 0], [1, 0, 0, 1]):
        y = np.array(y)
        assert f(x, y).numpy() == _nf_loss(ap.constant(x), y, False).numpy()
    assert f.traces == 3


@pytest.mark.parametrize("fn", [lambda v: np.flatnonzero(v) + 0.5, lambda v: np.tile(v + 0.25, int(v.sum())),
                                lambda v: np.repeat(v * 1.5, v)])
def test_numpy_function_stateless_traces_each_shape(fn):
    """stateful=False: anp.var, anp.tile, the output's size read in Python, with outputs whose length follows y:
    the eager values and gradients at every call (the trace froze the first length: wrong values)."""
    x = np.linspace(-1.0, 2.0, 6)

    def loss(x, y):
        with ap.GradientTape() as tape:
            tape.watch(x)
            o = ap.numpy_function(fn, [y], stateful=False)
            v = anp.var(o) + anp.sum(anp.tile(o, 2)) * anp.sum(x[:o.shape[0] % 6] ** 3) + o.shape[0] * anp.sum(x)
        return v, tape.gradient(v, x)
    f = ap.function(loss)
    for y in ([0, 2, 1], [1, 1, 0], [2, 2, 1], [0, 0, 1], [0, 2, 1]):
        y = np.array(y)
        (lv, dv), (le, de) = f(x, y), loss(ap.constant(x), y)
        assert lv.numpy() == le.numpy()
        assert np.array_equal(dv.numpy(), de.numpy())


def test_take_boolean_indices_as_numpy():
    """H3: numpy's take reads booleans as the indices 0 and 1 (np.take(X, b, axis=1): 4 columns); it gave a
    boolean mask's 3 columns. Eagerly and in a trace (refused there: 'a boolean mask')."""
    X = np.arange(20.0).reshape(5, 4)
    b = np.array([True, False, True, True])
    assert np.array_equal(anp.take(ap.constant(X), b, axis=1).numpy(), np.take(X, b, axis=1))
    assert np.array_equal(ap.constant(X).take(b).numpy(), np.take(X, b))
    x = ap.constant(np.sin(X))
    with ap.GradientTape() as tape:
        tape.watch(x)
        loss = anp.sum(anp.take(x, b, axis=1) ** 3)
    want = autograd.grad(lambda a: agnp.sum(a[:, b.astype(int)] ** 3))(np.sin(X))  # (column 1 taken three times)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), want, rtol=1e-13)
    f = ap.function(lambda t, m: anp.take(t, m, axis=0) * 2.0)
    for m in (b, ~b, np.array([True, True, False, False])):
        assert np.array_equal(f(X, m).numpy(), np.take(X, m, axis=0) * 2.0)


@pytest.mark.parametrize("pad", [np.int64(0), np.int32(0), np.float64(0.0)])
def test_numpy_scalar_in_the_users_numpy_on_an_argument(pad):
    """M4: ``y != np.int64(0)`` traces as ``y != 0`` does (it was refused: 'the result would be frozen')."""
    X = np.sin(np.arange(20.0)).reshape(5, 4) + 1.5
    f = ap.function(lambda x, y: anp.sum(x, where=(y != pad)[:, None]))
    for y in ([0, 1, 2, 0, 3], [1, 1, 0, 0, 3], [0, 0, 0, 0, 1]):
        y = np.array(y)
        assert f(X, y).numpy() == np.sum(X, where=(y != 0)[:, None])
