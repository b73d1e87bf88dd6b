"""A target that is a plain value because the computation left the tape (tester22a's rows "MLP tanh
MSE with .dot .ravel", "np.array(list of 1-d tensors)", "GMM scipy.special.logsumexp"): every
gradient used to be None with only a TapeEscapeWarning; tape.gradient now raises a TypeError that
says why and names the fix. A plain target with no escape keeps TensorFlow's answer, None.
"""

import warnings

import autograd
import autograd.numpy as agn
import autograd.scipy.special as ags
import numpy as np
import pytest
import scipy.special

import autoprop as ap
from autoprop.scipy import special as aps

rng = np.random.default_rng(22)
X, YB = rng.normal(size=(6, 4)), rng.normal(size=6)
W1, W2 = rng.normal(size=(4, 5)), rng.normal(size=(5, 1))
PTS, MU = rng.normal(size=(12, 2)), rng.normal(size=(3, 2))


def _quiet_tape(fn, *xs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        with ap.GradientTape() as tape:
            y = fn(*xs)
    return tape, y


def test_ndarray_dot_of_a_variable_gives_a_plain_target_and_gradient_says_why():
    w1, w2 = ap.Variable(W1, name="W1"), ap.Variable(W2, name="W2")
    tape, loss = _quiet_tape(lambda a, b: ((np.tanh(X.dot(a)).dot(b).ravel() - YB) ** 2).sum(), w1, w2)
    assert not isinstance(loss, ap.Tensor)
    with pytest.raises(TypeError, match=r"target is a plain numpy float64, not a Tensor, because the computation "
                                        r"left the tape: Variable 'W1' of shape \(4, 5\).*a @ t or np.dot\(a, t\)"):
        tape.gradient(loss, [w1, w2])
    # the same program written with @ is recorded, and its gradient is autograd's
    with ap.GradientTape() as tape:
        loss = ((np.tanh(X @ w1) @ w2).ravel() - YB) ** 2
        loss = loss.sum()
    got = tape.gradient(loss, [w1, w2])
    ref = autograd.grad(lambda a, b: agn.sum((agn.dot(agn.tanh(agn.dot(X, a)), b).ravel() - YB) ** 2), (0, 1))(W1, W2)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-12)


def test_np_array_of_tensors_gives_a_plain_target_and_gradient_says_why():
    x = ap.Variable(X[:3])
    tape, y = _quiet_tape(lambda v: np.sum(np.array([v[0] * 2, v[1], v[2] ** 2])), x)
    with pytest.raises(TypeError, match=r"a tensor of shape \(4,\) that carries gradient was turned into a plain "
                                        r"value by numpy conversion.*np\.stack"):
        tape.gradient(y, x)


def test_scipy_logsumexp_gives_a_plain_target_and_its_twin_is_recorded():
    def gmm(lse, mu):
        comp = -0.5 * np.sum((PTS[:, None, :] - mu[None]) ** 2, axis=2)
        return -np.sum(lse(comp, axis=1))

    mu = ap.Variable(MU)
    tape, y = _quiet_tape(lambda m: gmm(scipy.special.logsumexp, m), mu)
    with pytest.raises(TypeError, match=r"inside scipy\.special\.logsumexp, a scipy function that converts its input "
                                        r"to numpy: use autoprop\.scipy\.special\.logsumexp \(the same signature"):
        tape.gradient(y, mu)
    with ap.GradientTape() as tape:
        y = gmm(aps.logsumexp, mu)
    ref = autograd.grad(lambda m: -agn.sum(ags.logsumexp(-0.5 * agn.sum((PTS[:, None, :] - m[None]) ** 2, axis=2),
                                                         axis=1)))(MU)
    np.testing.assert_allclose(tape.gradient(y, mu).numpy(), ref, rtol=1e-12)


def test_a_plain_target_without_an_escape_is_still_none_and_logging_a_value_is_harmless():
    x = ap.Variable(X[0])
    with ap.GradientTape() as tape:
        np.sum(x ** 2)
    assert tape.gradient(np.float64(3.0), x) is None  # (TensorFlow: an unwatched constant)
    with ap.GradientTape(persistent=True) as tape:
        y = np.sum(x ** 2)
        logged = y.numpy()  # explicit and quiet: the target is still the Tensor y
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * X[0])
    with pytest.raises(TypeError, match=r"plain numpy ndarray.*by \.numpy\(\).*give the Tensor itself"):
        tape.gradient(logged, x)  # the logged value given as the target: said, not None


def test_a_plain_constant_beside_a_tensor_target_is_no_escape():
    """review24a: ``tape.gradient([loss, 0.0], x)`` after ``loss.numpy()`` was logged raised the escape TypeError
    ("the target is a plain float ... because the computation left the tape"), though loss is a Tensor target; the
    plain entry is a constant, as TensorFlow's (session 22 gave loss's gradient)."""
    x = ap.Variable(X[0])
    with ap.GradientTape(persistent=True) as tape:
        loss = np.sum(x ** 2)
        logged = loss.numpy()  # noqa: F841 - the logging that records the quiet escape
    np.testing.assert_allclose(tape.gradient([loss, 0.0], x).numpy(), 2 * X[0])
    np.testing.assert_allclose(tape.gradient({"l": loss, "reg": np.float64(0.0)}, x).numpy(), 2 * X[0])
    with pytest.raises(TypeError, match=r"target is a plain float"):
        tape.gradient([0.0, 1.0], x)  # (nothing but plain values: said, as before)


def test_a_constant_tensor_target_made_of_escaped_values_is_refused_not_none():
    """fn41: with ``import autoprop.numpy as np`` an RNN filling a numpy buffer (``H[t + 1] = np.tanh(...)``) ends in
    ``np.sum(H)``, a constant Tensor: tape.gradient gave None (zeros with unconnected_gradients='zero') and
    ForwardAccumulator.jvp None, where the loss depends on W (central differences: not zero). Both now refuse, as a
    plain target is refused; a constant Tensor target with no escape is still None (TensorFlow's)."""
    import autoprop.numpy as anp

    W = ap.Variable(W1[:3, :3])

    def rnn(w):
        H = anp.zeros((4, 3))
        for t in range(3):
            H[t + 1] = anp.tanh(H[t] @ w + 1.0)
        return anp.sum(H ** 2)

    for zero in ("none", "zero"):
        tape, loss = _quiet_tape(rnn, W)
        assert isinstance(loss, ap.Tensor)
        with pytest.raises(TypeError, match=r"the target is a constant Tensor \(shape \(\)\) that no operation on this "
                                            r"tape made.*assignment into a numpy array"):
            tape.gradient(loss, W, unconnected_gradients=zero)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        with ap.ForwardAccumulator(W, np.ones((3, 3))) as acc:
            loss = rnn(W)
        with pytest.raises(ap.TapeEscapeError, match=r"ForwardAccumulator\.jvp: refused"):
            acc.jvp(loss)
    with ap.GradientTape() as tape:
        anp.sum(W ** 2)
        c = anp.sum(anp.ones(3))  # a constant Tensor, no escape: None, as TensorFlow's
    assert tape.gradient(c, W) is None
