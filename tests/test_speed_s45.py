"""Session 45's speed change keeps every value and every error (issue 15).

``Optimizer.apply_gradients`` of plain SGD hands its pairs straight to the checked array update
(``manualprop.optim._SGD_ON``: ``_sgd_on_arrays`` for arrays, autoprop's ``_sgd_on_variables`` for
Variables), as ``step`` does, instead of through ``_update_all``. The update must be the general
path's bit for bit, a bad pair must get the general path's message with no variable changed, and a
subclass's ``_update_all``, momentum and a None gradient must still take the general path.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autoprop as ap
from manualprop import optim as moptim


def _pairs(kind, bad=None):
    """Three (grad, var) pairs of Variables and Tensors (``kind="ap"``) or of arrays (``"np"``);
    ``bad``: (position, what) makes that gradient NaN, +inf, -inf, float32 or of the wrong shape."""
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (3,), (2, 3)]
    vs = [rng.standard_normal(s) for s in shapes]
    gs = [rng.standard_normal(s) for s in shapes]
    if bad is not None:
        i, what = bad
        if what == "shape":
            gs[i] = rng.standard_normal((5,))
        elif what == "float32":
            gs[i] = gs[i].astype(np.float32)
        else:
            gs[i] = gs[i].copy()
            gs[i].flat[1] = {"nan": np.nan, "+inf": np.inf, "-inf": -np.inf}[what]
    if kind == "ap":
        return [ap.constant(g) for g in gs], [ap.Variable(v) for v in vs]
    return gs, vs


def _values(variables):
    return [np.array(v.numpy() if hasattr(v, "numpy") else v) for v in variables]


def _outcome(kind, bad, opt, general):
    """(error type and message or None, warnings, the variables after) of one apply_gradients call;
    ``general``: with ``_SGD_ON`` empty, so that only the general path (``_update_all``) runs."""
    grads, variables = _pairs(kind, bad)
    saved = dict(moptim._SGD_ON)
    if general:
        moptim._SGD_ON.clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                opt.apply_gradients(zip(grads, variables))
                error = None
            except (TypeError, ValueError) as exc:
                error = (type(exc), str(exc))
    finally:
        moptim._SGD_ON.clear()
        moptim._SGD_ON.update(saved)
    return error, [str(w.message) for w in caught], _values(variables), opt.iterations


def _same(a, b):
    """Two outcomes of :func:`_outcome` alike: the same error, warnings and iterations, the variables bit for bit."""
    return a[0] == b[0] and a[1] == b[1] and a[3] == b[3] and all(
        x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a[2], b[2]))


@pytest.mark.parametrize("kind", ["ap", "np"])
def test_plain_sgd_skips_update_all_and_gives_its_bits(kind, monkeypatch):
    grads, variables = _pairs(kind)
    expected = [v - 0.1 * g for v, g in zip(_values(variables), _values(grads))]
    called = []
    real = moptim.Optimizer._update_all
    monkeypatch.setattr(moptim.Optimizer, "_update_all", lambda self, *a, **k: called.append(1) or real(self, *a, **k))
    opt = ap.optimizers.SGD(0.1)
    opt.apply_gradients(zip(grads, variables))
    assert called == []  # (fails before session 45: every call went through _update_all)
    assert all(np.array_equal(a, b) for a, b in zip(expected, _values(variables)))
    assert opt.iterations == 1
    # the general path, forced, gives the same bits
    assert _same(_outcome(kind, None, ap.optimizers.SGD(0.1), False), _outcome(kind, None, ap.optimizers.SGD(0.1), True))


@pytest.mark.parametrize("kind", ["ap", "np"])
@pytest.mark.parametrize("bad", [(2, "nan"), (0, "+inf"), (1, "-inf"), (2, "shape"), (1, "float32")])
def test_a_bad_pair_gets_the_general_message_and_nothing_changes(kind, bad):
    fast = _outcome(kind, bad, ap.optimizers.SGD(0.1), False)
    general = _outcome(kind, bad, ap.optimizers.SGD(0.1), True)
    assert _same(fast, general)
    if bad[1] != "float32":  # (a float32 gradient is cast, as the general path does)
        error, _, after, iterations = fast
        assert error is not None and error[0] is ValueError and "#" + str(bad[0]) in error[1]
        assert all(np.array_equal(a, b) for a, b in zip(_values(_pairs(kind)[1]), after))
        assert iterations == 0


def test_none_gradient_warns_and_updates_the_others():
    fast = _outcome("ap", None, ap.optimizers.SGD(0.1), False)
    grads, variables = _pairs("ap")
    grads[1] = None
    opt = ap.optimizers.SGD(0.1)
    with pytest.warns(UserWarning, match="gradients do not exist for variable #1"):
        opt.apply_gradients(zip(grads, variables))
    after = _values(variables)
    assert np.array_equal(after[0], fast[2][0]) and np.array_equal(after[2], fast[2][2])
    assert np.array_equal(after[1], _values(_pairs("ap")[1])[1])


def test_a_subclass_update_all_and_momentum_take_the_general_path(monkeypatch):
    seen = []

    class Logged(ap.optimizers.SGD):
        def _update_all(self, grads, variables, *args, **kwargs):
            seen.append(len(grads))
            return super()._update_all(grads, variables, *args, **kwargs)

    grads, variables = _pairs("ap")
    Logged(0.1).apply_gradients(zip(grads, variables))
    assert seen == [3]  # (fails when the fast path ignores an overridden _update_all)
    called = []
    real = moptim.Optimizer._update_all
    monkeypatch.setattr(moptim.Optimizer, "_update_all", lambda self, *a, **k: called.append(1) or real(self, *a, **k))
    grads, variables = _pairs("ap")
    ap.optimizers.SGD(0.1, momentum=0.9).apply_gradients(zip(grads, variables))
    assert called == [1]  # (fails when the fast path ignores momentum)


# Three frames fewer in the eager step (session 45): Tanh's input check inline, the gradient's target check
# only for a target that is no Tensor, the loss reading the logits' shape from the value. Each check still fires.

@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("wrap", [ap.constant, ap.Variable, lambda a: a])
def test_tanh_still_refuses_a_non_finite_input(bad, wrap):
    from autoprop import layers as al

    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    x[1, 2] = bad
    with pytest.raises(ValueError, match=r"Tanh.*x.*(NaN|inf)") as caught:
        al.Tanh()(wrap(x))
    with pytest.raises(ValueError) as alone:  # the message of the check the layer ran before this session
        al.Tanh()._input(x)
    assert str(caught.value) == str(alone.value)
    net = al.Sequential(al.Linear(4, 4), al.Tanh())
    net.layers[0].variables["W"].assign(np.full((4, 4), bad))  # a NaN/inf the Linear makes reaches the Tanh
    with pytest.raises(ValueError, match="(NaN|inf)"):
        net(np.ones((3, 4)), training=True)


def test_tanh_inline_gives_the_recorded_gradient():
    from autoprop import layers as al

    x = ap.Variable(np.linspace(-2.0, 2.0, 12).reshape(3, 4))
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(al.Tanh()(x))
    assert np.allclose(tape.gradient(y, x).numpy(), 1 / np.cosh(x.numpy()) ** 2, rtol=1e-13, atol=0)


@pytest.mark.parametrize("target", [None, "loss", b"loss"])
def test_gradient_still_refuses_a_target_that_is_no_value(target):
    x = ap.Variable(np.ones(3))
    with ap.GradientTape() as tape:
        ap.reduce_sum(x * x)
    with pytest.raises(ap.core.tape.TapeArgumentError, match="not a Tensor"):
        tape.gradient(target, x)
    with ap.GradientTape() as tape:
        ap.reduce_sum(x * x)
    with pytest.raises(ap.core.tape.TapeArgumentError, match="not a Tensor"):
        tape.gradient([target], [x])


def test_the_loss_reads_the_logits_shape():
    from autoprop import losses as alo

    z = ap.Variable(np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]]))
    with ap.GradientTape() as tape:
        loss = alo.SoftmaxCrossEntropy()(np.array([1, 2]), z)
    p = np.exp(z.numpy() - z.numpy().max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    assert np.isclose(float(loss.numpy()), -np.mean(np.log(p[[0, 1], [1, 2]])), rtol=1e-14)
    assert np.allclose(tape.gradient(loss, z).numpy(), (p - np.eye(3)[[1, 2]]) / 2, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="label"):
        alo.SoftmaxCrossEntropy()(np.array([1, 3]), z)  # a label out of range (3 classes)
