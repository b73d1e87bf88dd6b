"""verify41 M1: ``ap.stop_gradient`` inside ``ap.function`` was refused, blaming an
``ap.constant`` the user never wrote. ``tf.stop_gradient`` works inside ``tf.function``
(a target held fixed, a straight-through estimator): the replay passes the value on, and no
gradient flows through it.
"""
import numpy as np

import autoprop as ap


def _step_of(W):
    def step(x):
        with ap.GradientTape() as t:
            h = x @ W
            y = np.sum((h - ap.stop_gradient(h) * 0.5) ** 2)  # the target 0.5 h held fixed
        return y, t.gradient(y, W)
    return step


def test_a_held_target_replays_as_eager_and_as_the_formula():
    rng = np.random.default_rng(0)
    W = ap.Variable(rng.standard_normal((3, 2)), name="W")
    step = _step_of(W)
    traced = ap.function(step)
    for _ in range(3):  # the trace, then two replays on new values
        x = rng.standard_normal((4, 3))
        (y0, g0), (y1, g1) = step(x), traced(x)
        np.testing.assert_array_equal(g1.numpy(), g0.numpy())
        assert float(y1) == float(y0)
        h = x @ W.numpy()  # dy/dh = 2 (h - 0.5 h) = h, with the target held
        np.testing.assert_allclose(g1.numpy(), x.T @ h, rtol=1e-12)
    assert traced.trace_count == 1


def test_a_stopped_variable_is_read_at_each_replay():
    rng = np.random.default_rng(1)
    W = ap.Variable(rng.standard_normal((3, 2)), name="W")
    V = ap.Variable(rng.standard_normal((3, 2)), name="V")

    @ap.function
    def step(x):
        with ap.GradientTape() as t:
            y = np.sum((x @ W) * (x @ ap.stop_gradient(V)))
        return t.gradient(y, [W, V])

    x = rng.standard_normal((4, 3))
    for _ in range(3):
        gW, gV = step(x)
        assert gV is None
        np.testing.assert_allclose(gW.numpy(), x.T @ (x @ V.numpy()), rtol=1e-12)
        V.assign(V.numpy() + 1.0)  # a replay must read the new value, not the first call's
    assert step.trace_count == 1


def test_a_straight_through_round_gives_the_identitys_gradient():
    rng = np.random.default_rng(2)
    W = ap.Variable(rng.standard_normal((3, 2)), name="W")

    @ap.function
    def step(x):
        with ap.GradientTape() as t:
            h = x @ W
            q = h + ap.stop_gradient(np.round(h) - h)  # forward rounds, backward is the identity
            y = np.sum(q * h)
        return t.gradient(y, W)

    for _ in range(2):
        x = rng.standard_normal((4, 3))
        h = x @ W.numpy()
        expected = x.T @ (np.round(h) + h)  # d/dh [q h] with dq/dh = 1: q + h
        np.testing.assert_allclose(step(x).numpy(), expected, rtol=1e-12)
