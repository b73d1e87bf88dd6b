"""Keras's ``weight_decay`` on every optimizer (newuser36 H2): decoupled, ``p <- p - p * wd * lr``
before the step (keras/src/optimizers/base_optimizer.py, ``BaseOptimizer._apply_weight_decay``),
not PyTorch's L2 added to the gradient. Before the fix ``Adam(0.1, weight_decay=0.1)`` gave
torch.optim.Adam's 9.800027 where Keras gives 9.602058.

Oracles: torch.optim.AdamW (decoupled decay, the same formula; numbers computed with
/work/main/.venv-peers/bin/python, torch 2.13 CPU, float64, and written here), and Keras's
formulas in plain numpy in the test.
"""

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp
from manualprop import SGD, Adam, RMSProp, RMSprop


def quadratic_steps(opt, p0, steps, variable):
    """``steps`` updates of the loss sum(p**2)/2 (gradient p) from ``p0``: the final p."""
    if variable:
        p = ap.Variable(np.array(p0, dtype=float))
        for _ in range(steps):
            with ap.GradientTape() as tape:
                loss = ap.reduce_sum(p * p) / 2
            opt.apply_gradients(zip(tape.gradient(loss, [p]), [p]))
        return p.numpy()
    p = np.array(p0, dtype=float)
    for _ in range(steps):
        opt.apply_gradients([(p.copy(), p)])
    return p


@pytest.mark.parametrize("variable", [False, True], ids=["array", "Variable"])
def test_adam_weight_decay_is_adamw_the_testers_figure(variable):
    # torch: p = tensor([10.]); AdamW([p], lr=0.1, weight_decay=0.1, eps=1e-8); 2 steps on
    # (p*p/2).sum() -> 9.602057756867888 (Keras's own formula, epsilon added to sqrt(v) not
    # sqrt(v_hat): 9.602058, newuser36). torch.optim.Adam's L2 gives 9.80002746: the old number.
    got = quadratic_steps(Adam(learning_rate=0.1, weight_decay=0.1), [10.0], 2, variable)
    np.testing.assert_allclose(got, [9.602057756867888], rtol=1e-13)
    assert abs(got[0] - 9.602058) < 5e-7


def test_adam_weight_decay_matches_adamw_on_a_vector():
    # torch: AdamW([p], lr=0.05, betas=(0.8, 0.99), weight_decay=0.3, eps=1e-8), p0 and the
    # four gradients from np.random.default_rng(0) as below, p.grad set then step().
    rng = np.random.default_rng(0)
    p = rng.standard_normal(5)
    grads = [rng.standard_normal(5) for _ in range(4)]
    opt = Adam(learning_rate=0.05, beta_1=0.8, beta_2=0.99, weight_decay=0.3)
    for g in grads:
        opt.apply_gradients([(g, p)])
    want = [0.15254258719733949, -0.23991288652236362, 0.62546880520746, 0.1892145613444078,
            -0.3994196550539144]
    np.testing.assert_allclose(p, want, rtol=1e-12)


@pytest.mark.parametrize("variable", [False, True], ids=["array", "Variable"])
def test_sgd_momentum_weight_decay_is_keras_the_testers_figure(variable):
    # Keras's SGD by hand (lr 0.1, momentum 0.9, wd 0.1, loss p**2/2 from 10):
    #   step 1: g = 10;  p = 10 - 10*0.01 = 9.9;     m = -0.1*10 = -1;           p = 8.9
    #   step 2: g = 8.9; p = 8.9 - 8.9*0.01 = 8.811; m = 0.9*(-1) - 0.89 = -1.79; p = 7.021
    # (PyTorch's L2 gives 6.931, the old number)
    got = quadratic_steps(SGD(learning_rate=0.1, momentum=0.9, weight_decay=0.1), [10.0], 2, variable)
    np.testing.assert_allclose(got, [7.021], rtol=1e-13)


def keras_rmsprop(p, grads, lr, rho, eps, wd):
    """keras.optimizers.RMSprop (momentum 0, not centered) with weight decay, in numpy."""
    v = np.zeros_like(p)
    for g in grads:
        p = p - p * wd * lr
        v = rho * v + (1 - rho) * g * g
        p = p - lr * g / np.sqrt(v + eps)
    return p


def test_keras_rmsprop_takes_weight_decay():
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal(4)
    grads = [rng.standard_normal(4) for _ in range(3)]
    p = p0.copy()
    opt = RMSprop(learning_rate=0.1, weight_decay=0.2)
    for g in grads:
        opt.apply_gradients([(g, p)])
    np.testing.assert_allclose(p, keras_rmsprop(p0, grads, 0.1, 0.9, 1e-7, 0.2), rtol=1e-13)
    # one step from 10 by hand: 10 - 10*0.2*0.1 = 9.8, then - 0.1*10/sqrt(10 + 1e-7)
    q = np.array([10.0])
    RMSprop(learning_rate=0.1, weight_decay=0.2).apply_gradients([(np.array([10.0]), q)])
    np.testing.assert_allclose(q, [9.8 - 1.0 / np.sqrt(10 + 1e-7)], rtol=1e-14)


@pytest.mark.parametrize("make", [
    lambda wd: SGD(learning_rate=0.1, momentum=0.9, weight_decay=wd),
    lambda wd: SGD(learning_rate=0.1, momentum=0.9, nesterov=True, weight_decay=wd),
    lambda wd: Adam(learning_rate=0.1, weight_decay=wd),
    lambda wd: RMSProp(learning_rate=0.01, momentum=0.5, centered=True, weight_decay=wd),
    lambda wd: RMSprop(learning_rate=0.01, momentum=0.5, centered=True, weight_decay=wd),
], ids=["SGD", "SGD-nesterov", "Adam", "RMSProp", "RMSprop"])
def test_every_optimizer_shrinks_then_steps(make):
    """Decay 0.5 == p <- p - p*0.5*lr by hand, then the same optimizer without decay stepping
    with the gradient taken before the shrink (Keras's order), for five steps."""
    p, q = np.array([1.0, -3.0]), np.array([1.0, -3.0])
    decayed, plain = make(0.5), make(0.0)
    for _ in range(5):
        g = 2 * q
        decayed.apply_gradients([(2 * p, p)])
        q -= q * 0.5 * plain.learning_rate
        plain.apply_gradients([(g, q)])
    np.testing.assert_allclose(p, q, rtol=1e-14)


def test_plain_sgd_decay_equals_l2_in_the_loss_and_momentum_does_not():
    """Without momentum Keras's decay and PyTorch's L2 are the same step; with it they differ."""
    p, q = np.array([2.0]), np.array([2.0])
    for _ in range(3):
        SGD(0.1, weight_decay=0.5).apply_gradients([(2 * p, p)])
        SGD(0.1).apply_gradients([(2 * q + 0.5 * q, q)])
    np.testing.assert_allclose(p, q, rtol=1e-14)
    a, b = np.array([2.0]), np.array([2.0])
    da, db = SGD(0.1, momentum=0.9, weight_decay=0.5), SGD(0.1, momentum=0.9)
    for _ in range(3):
        da.apply_gradients([(2 * a, a)])
        db.apply_gradients([(2 * b + 0.5 * b, b)])
    assert abs(a[0] - b[0]) > 1e-3


def test_exclude_from_weight_decay_by_name_and_by_object():
    model = ap.Sequential([ap.layers.Linear(3, 2, rng=0)])
    W, b = model.trainable_weights
    W0, b0 = W.numpy(), b.numpy()
    opt = SGD(learning_rate=0.5, weight_decay=0.1)
    opt.exclude_from_weight_decay(var_names=[r"\.b$"])  # Keras: re.search on the name
    opt.apply_gradients([(np.zeros_like(W0), W), (np.zeros_like(b0), b)])
    np.testing.assert_allclose(W.numpy(), W0 * (1 - 0.05), rtol=1e-15)
    np.testing.assert_array_equal(b.numpy(), b0)
    arr, kept = np.array([1.0, 2.0]), np.array([1.0, 2.0])
    opt = Adam(learning_rate=0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_list=[kept])
    opt.apply_gradients([(np.zeros(2), arr), (np.zeros(2), kept)])
    np.testing.assert_allclose(arr, [0.95, 1.9], rtol=1e-15)  # zero gradient: Adam's step is 0
    np.testing.assert_array_equal(kept, [1.0, 2.0])
    with pytest.raises(TypeError, match="var_names must be strings; got int"):
        opt.exclude_from_weight_decay(var_names=[3])


def test_a_variable_without_gradient_is_not_decayed():
    p, q = np.array([1.0]), np.array([1.0])
    with pytest.warns(UserWarning, match="gradients do not exist for variable #0"):
        SGD(0.1, weight_decay=0.5).apply_gradients([(None, p), (np.array([0.0]), q)])
    assert p[0] == 1.0 and q[0] == pytest.approx(0.95, rel=1e-15)


def test_none_weight_decay_is_keras_default_and_autoprop_shares_the_class():
    assert Adam(weight_decay=None).weight_decay == 0.0 and RMSprop().weight_decay == 0.0
    assert ap.optimizers.Adam is mp.Adam and ap.optimizers.SGD is mp.SGD
    assert "decoupled" in Adam.__doc__ and "AdamW" in Adam.__doc__


def test_var_names_in_step_match_the_params_keys():
    """review37 F1: step(params, grads) matches var_names against the dict keys (the names the user
    sees; arrays have no name). Before the fix "l1.b" was decayed to [0.95, 1.9] with no warning."""
    P = {"l1.W": np.ones((2, 2)), "l1.b": np.array([1.0, 2.0])}
    opt = SGD(learning_rate=0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_names=[r"\.b$"])
    opt.step(P, {"l1.W": np.zeros((2, 2)), "l1.b": np.zeros(2)})
    np.testing.assert_array_equal(P["l1.b"], [1.0, 2.0])
    np.testing.assert_allclose(P["l1.W"], np.full((2, 2), 0.95), rtol=1e-15)


def test_step_of_a_model_matches_var_names_against_its_flat_keys():
    model = mp.Sequential([mp.Linear(3, 2, rng=0)])
    (kw, W), (kb, b) = model.params.items()
    W0, b0 = W.copy(), b.copy()
    for g in model.grads.values():
        g[...] = 0.0
    opt = SGD(learning_rate=0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_names=[kb.replace(".", r"\.") + "$"])
    opt.step(model)
    np.testing.assert_array_equal(model.params[kb], b0)
    np.testing.assert_allclose(model.params[kw], W0 * 0.95, rtol=1e-15)


@pytest.mark.parametrize("how", ["apply_gradients", "step"])
def test_a_var_names_pattern_that_matches_nothing_is_warned_of_by_name(how):
    """review37 F1: Keras's habit var_names=["bias"] on autoprop's "0.W", "0.b" matches nothing: every
    variable is decayed (Keras's rule, kept), and a UserWarning names the pattern and the names seen.
    Before the fix: no warning."""
    model = ap.Sequential([ap.layers.Linear(4, 3, rng=0)])
    W, b = model.trainable_variables
    b0 = b.numpy().copy()
    opt = Adam(learning_rate=0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_names=["bias", r"\.W$"])
    with pytest.warns(UserWarning, match=r"the pattern 'bias' matches none of the 2 variables") as got:
        if how == "step":
            opt.step({"0.W": W, "0.b": b}, {"0.W": np.zeros(W.shape), "0.b": np.zeros(b.shape)})
        else:
            opt.apply_gradients([(np.zeros(v.shape), v) for v in model.trainable_variables])
    texts = [str(w.message) for w in got if "exclude_from_weight_decay" in str(w.message)]
    assert len(texts) == 1 and "'0.b'" in texts[0] and r"\.W$" not in texts[0]  # the one that matched: silent
    np.testing.assert_allclose(b.numpy(), b0 * 0.95, rtol=1e-15)  # zero gradient: only the decay
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned of once, not at every step
        opt.apply_gradients([(np.zeros(v.shape), v) for v in model.trainable_variables])


def test_each_exclude_call_replaces_the_previous_var_list():
    """Keras: each exclude_from_weight_decay call replaces the previous choice (kills review37's
    wd_ids_accumulate: a, excluded by the first call only, is decayed after the second)."""
    a, b = np.array([1.0, 2.0]), np.array([1.0, 2.0])
    opt = SGD(learning_rate=0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_list=[a])
    opt.exclude_from_weight_decay(var_list=[b])
    opt.apply_gradients([(np.zeros(2), a), (np.zeros(2), b)])
    np.testing.assert_allclose(a, [0.95, 1.9], rtol=1e-15)
    np.testing.assert_array_equal(b, [1.0, 2.0])
