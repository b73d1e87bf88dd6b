"""manualprop.optim: update rules against hand-computed steps on f(p) = sum(p**2)."""

import re

import numpy as np
import pytest

from manualprop import SGD, Adam, RMSProp


class FakeVariable:
    """Stands in for autoprop's Variable: assign_sub() and numpy(), no in-place array."""

    def __init__(self, value):
        self._value = np.array(value, dtype=float)
        self.calls = 0

    def assign_sub(self, delta):
        self.calls += 1
        self._value = self._value - delta

    def numpy(self):
        return self._value.copy()


class FakeTensor:
    """A gradient object exposing numpy() (as autoprop's Tensor may)."""

    def __init__(self, value):
        self._value = np.asarray(value)

    def numpy(self):
        return self._value


def run_quadratic(opt, p0, steps, style):
    """Minimise sum(p**2) (gradient 2p); return the trajectory p1..p_steps."""
    traj = []
    if style == "array":
        p = np.array(p0, dtype=float)
        for _ in range(steps):
            opt.apply_gradients([(2 * p, p)])
            traj.append(p.copy())
    elif style == "variable":
        v = FakeVariable(p0)
        for _ in range(steps):
            opt.apply_gradients([(FakeTensor(2 * v.numpy()), v)])
            traj.append(v.numpy())
    else:  # dict style
        params = {"p": np.array(p0, dtype=float)}
        for _ in range(steps):
            opt.step(params, {"p": 2 * params["p"]})
            traj.append(params["p"].copy())
    return np.array(traj)


STYLES = ["array", "variable", "dict"]


@pytest.mark.parametrize("style", STYLES)
def test_sgd_plain(style):
    traj = run_quadratic(SGD(learning_rate=0.1), [1.0, -2.0], 3, style)
    # p <- p - 0.1 * 2p = 0.8 p
    np.testing.assert_allclose(traj[:, 0], [0.8, 0.64, 0.512], rtol=1e-14)
    np.testing.assert_allclose(traj[:, 1], [-1.6, -1.28, -1.024], rtol=1e-14)


@pytest.mark.parametrize("style", STYLES)
def test_sgd_momentum_pytorch_formula(style):
    traj = run_quadratic(SGD(learning_rate=0.1, momentum=0.9), [1.0, -2.0], 3, style)
    # step 1: g=2,    v=2,                 p=1-0.2=0.8
    # step 2: g=1.6,  v=0.9*2+1.6=3.4,     p=0.8-0.34=0.46
    # step 3: g=0.92, v=0.9*3.4+0.92=3.98, p=0.46-0.398=0.062
    np.testing.assert_allclose(traj[:, 0], [0.8, 0.46, 0.062], rtol=1e-13)
    np.testing.assert_allclose(traj[:, 1], [-1.6, -0.92, -0.124], rtol=1e-13)


@pytest.mark.parametrize("style", STYLES)
def test_sgd_nesterov(style):
    traj = run_quadratic(SGD(learning_rate=0.1, momentum=0.9, nesterov=True), [1.0], 2, style)
    # step 1: g=2,    v=2,              g+0.9v=3.8,            p=1-0.38=0.62
    # step 2: g=1.24, v=1.8+1.24=3.04, g+0.9v=1.24+2.736=3.976, p=0.62-0.3976=0.2224
    np.testing.assert_allclose(traj[:, 0], [0.62, 0.2224], rtol=1e-13)


@pytest.mark.parametrize("style", STYLES)
def test_sgd_weight_decay_is_keras_decoupled(style):
    traj = run_quadratic(SGD(learning_rate=0.1, momentum=0.9, weight_decay=0.5), [1.0], 2, style)
    # Keras's decay p <- p - p*0.5*0.1 before the step, the gradient 2p taken before it
    # step 1: g=2,   p=1-0.05=0.95,        v=2,             p=0.95-0.2=0.75
    # step 2: g=1.5, p=0.75-0.0375=0.7125, v=1.8+1.5=3.3,   p=0.7125-0.33=0.3825
    # (PyTorch's L2 in the gradient gave 0.3375 at step 2)
    np.testing.assert_allclose(traj[:, 0], [0.75, 0.3825], rtol=1e-13)


def test_state_is_per_variable_and_holds_a_reference():
    opt = SGD(learning_rate=0.1, momentum=0.9)
    a, b = np.array([1.0]), np.array([1.0])
    opt.apply_gradients([(np.array([1.0]), a), (np.array([-1.0]), b)])
    opt.apply_gradients([(np.array([1.0]), a), (np.array([-1.0]), b)])
    # a: v=1 then 1.9 -> a = 1 - 0.1 - 0.19 = 0.71 ; b mirrors it
    np.testing.assert_allclose(a, [0.71], rtol=1e-14)
    np.testing.assert_allclose(b, [1.29], rtol=1e-14)
    assert opt.state[id(a)]["var"] is a
    np.testing.assert_allclose(opt.state[id(b)]["momentum_buffer"], [-1.9], rtol=1e-14)


def test_step_and_apply_gradients_share_state():
    opt = SGD(learning_rate=0.1, momentum=0.9)
    p = np.array([1.0])
    opt.step({"p": p}, {"p": 2 * p})
    opt.apply_gradients([(2 * p, p)])
    np.testing.assert_allclose(p, [0.46], rtol=1e-13)


def test_gradients_are_not_modified_and_dtype_is_kept():
    opt = SGD(learning_rate=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)
    p = np.array([1.0, 2.0], dtype=np.float32)
    g = np.array([0.5, -0.5])
    g_before = g.copy()
    for _ in range(3):
        opt.apply_gradients([(g, p)])
    np.testing.assert_array_equal(g, g_before)
    assert p.dtype == np.float32


def test_none_gradient_is_skipped():
    opt = SGD(learning_rate=0.1)
    p, q = np.array([1.0]), np.array([1.0])
    with pytest.warns(UserWarning, match="gradients do not exist for variable #0"):
        opt.apply_gradients([(None, p), (np.array([1.0]), q)])
    assert p[0] == 1.0 and q[0] == 0.9
    v = FakeVariable([1.0])
    with pytest.raises(ValueError, match="no gradients provided for any variable"):
        opt.apply_gradients([(None, v)])  # as TensorFlow: nothing to apply is an error
    assert v.calls == 0


def test_optimizer_bad_input():
    opt = SGD(learning_rate=0.1)
    with pytest.raises(
        ValueError,
        match=r"^SGD\(.*\)\.apply_gradients: gradient for variable #0 must have the variable's shape \(2,\); got \(3,\)$",
    ):
        opt.apply_gradients([(np.zeros(3), np.zeros(2))])
    with pytest.raises(
        TypeError,
        match=r"variable #1 must be a NumPy array \(updated in place\) or an object with assign_sub\(\) and numpy\(\); got float",
    ):
        opt.apply_gradients([(np.zeros(2), np.zeros(2)), (np.zeros(()), 1.0)])
    with pytest.raises(
        TypeError, match=r"item 0 must be a \(grad, var\) pair \(tuple or list of 2\); got ndarray"
    ):
        opt.apply_gradients([np.zeros(2)])
    with pytest.raises(
        ValueError, match=r"gradient for params\['w'\] must contain only finite values"
    ):
        opt.step({"w": np.zeros(2)}, {"w": np.array([np.nan, 0.0])})
    with pytest.raises(
        TypeError, match=r"gradient for variable #0 must have dtype float32 or float64; got int64"
    ):
        opt.apply_gradients([(np.zeros(2, dtype=np.int64), np.zeros(2))])
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"variable #0 must be a writeable array"):
        opt.apply_gradients([(np.zeros(2), frozen)])
    with pytest.raises(
        ValueError,
        match=r"\.step: params and grads must have the same keys; got params-only \['b'\], grads-only \['c'\]",
    ):
        opt.step({"a": np.zeros(1), "b": np.zeros(1)}, {"a": np.zeros(1), "c": np.zeros(1)})


def test_sgd_hyperparameter_errors():
    with pytest.raises(ValueError, match=r"^SGD: momentum must be in \[0.0, 1.0\); got 1.0$"):
        SGD(momentum=1.0)
    with pytest.raises(ValueError, match=r"^SGD: learning_rate must be in \[0.0, inf\); got -0.1$"):
        SGD(learning_rate=-0.1)
    with pytest.raises(ValueError, match=r"^SGD: nesterov=True must have momentum > 0"):
        SGD(nesterov=True)
    with pytest.raises(TypeError, match=r"^SGD: weight_decay must be a real number; got str"):
        SGD(weight_decay="0.1")


# ---------------------------------------------------------------- Adam, RMSProp
# Expected values: the textbook formulas evaluated in 40-digit Decimal arithmetic
# (Adam with m_hat / (sqrt(v_hat) + eps); RMSProp as in torch.optim.RMSprop's docs),
# minimising p**2 from p = 1.


@pytest.mark.parametrize("style", STYLES)
def test_adam_pytorch_defaults_hand_steps(style):
    traj = run_quadratic(Adam(learning_rate=0.1), [1.0], 3, style)
    np.testing.assert_allclose(
        traj[:, 0],
        [0.9000000004999999975, 0.8004122286917921452, 0.7015862729460295452],
        rtol=1e-13,
    )


def test_adam_defaults_are_pytorchs():
    opt = Adam()
    assert (opt.learning_rate, opt.beta_1, opt.beta_2, opt.epsilon, opt.weight_decay) == (
        0.001,
        0.9,
        0.999,
        1e-8,
        0.0,
    )


def test_adam_first_step_is_learning_rate_times_sign_whatever_the_scale():
    for scale in (1e-3, 1.0, 1e3):
        p = np.array([1.0, 1.0])
        Adam(learning_rate=0.01).apply_gradients([(np.array([scale, -scale]), p)])
        step = 0.01 * scale / (scale + 1e-8)  # m_hat = g, sqrt(v_hat) = |g|
        np.testing.assert_allclose(p, [1 - step, 1 + step], rtol=1e-15)
        np.testing.assert_allclose(p, [0.99, 1.01], atol=1e-6)


def test_adam_step_counts_are_per_variable():
    opt = Adam(learning_rate=0.1)
    a, b = np.array([1.0]), np.array([1.0])
    opt.apply_gradients([(2 * a, a)])
    opt.apply_gradients([(2 * a, a), (2 * b, b)])  # b's first step
    assert opt.state[id(a)]["step"] == 2 and opt.state[id(b)]["step"] == 1
    np.testing.assert_allclose(a, [0.8004122286917921452], rtol=1e-13)
    np.testing.assert_allclose(b, [0.9000000004999999975], rtol=1e-13)


RMS_EXPECTED = {
    (False, 0.0): [0.90000000499999975, 0.83291796797003308, 0.77998227324363502],
    (False, 0.9): [0.90000000499999975, 0.74291797247003286, 0.55291493422896235],
    (True, 0.0): [0.89949622352458359, 0.83175937971154478, 0.77806841075341110],
    (True, 0.9): [0.89949622352458359, 0.74130598088367001, 0.54965016531652335],
}


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("centered,momentum", list(RMS_EXPECTED))
def test_rmsprop_hand_steps(centered, momentum, style):
    opt = RMSProp(learning_rate=0.01, momentum=momentum, centered=centered)
    traj = run_quadratic(opt, [1.0], 3, style)
    np.testing.assert_allclose(traj[:, 0], RMS_EXPECTED[centered, momentum], rtol=1e-13)


def test_rmsprop_defaults_are_pytorchs():
    opt = RMSProp()
    assert (opt.learning_rate, opt.rho, opt.momentum, opt.epsilon, opt.centered) == (
        0.01,
        0.99,
        0.0,
        1e-8,
        False,
    )


def test_weight_decay_without_momentum_equals_adding_l2_to_the_loss():
    # plain SGD: Keras's decay 0.5 on p**2 (grad 2p) follows exactly the path of no decay on
    # 1.25 p**2 (grad 2.5p); with momentum or an adaptive optimizer it does not
    # (tests/test_keras_weight_decay.py)
    p, q = np.array([1.0, -3.0]), np.array([1.0, -3.0])
    decayed, plain = SGD(learning_rate=0.1, weight_decay=0.5), SGD(learning_rate=0.1)
    for _ in range(5):
        decayed.apply_gradients([(2 * p, p)])
        plain.apply_gradients([(2.5 * q, q)])
    np.testing.assert_allclose(p, q, rtol=1e-14)
    assert not np.allclose(p, [1.0, -3.0])


@pytest.mark.parametrize("make", [Adam, RMSProp, lambda: RMSProp(momentum=0.9, centered=True)])
def test_adaptive_optimizers_minimise_a_quadratic(make):
    # f(p) = 0.5 p^T A p - c^T p, minimum at A^{-1} c
    A = np.array([[3.0, 0.5], [0.5, 1.0]])
    c = np.array([1.0, -2.0])
    opt = make()
    opt.learning_rate = 0.01
    p = np.zeros(2)
    for _ in range(3000):
        opt.step({"p": p}, {"p": A @ p - c})
    np.testing.assert_allclose(p, np.linalg.solve(A, c), atol=2e-2)


def test_adam_rmsprop_hyperparameter_errors():
    with pytest.raises(ValueError, match=r"^Adam: beta_2 must be in \[0.0, 1.0\); got 1.0$"):
        Adam(beta_2=1.0)
    with pytest.raises(ValueError, match=r"^Adam: epsilon must be in \[0.0, inf\); got -1e-08$"):
        Adam(epsilon=-1e-8)
    with pytest.raises(ValueError, match=r"^RMSProp: rho must be in \[0.0, 1.0\); got 1.5$"):
        RMSProp(rho=1.5)
    with pytest.raises(
        ValueError, match=r"^RMSProp: centered must be one of False, True; got 'yes'$"
    ):
        RMSProp(centered="yes")
    with pytest.raises(
        ValueError,
        match=r"^Adam\(learning_rate=0.001, .*\)\.step: gradient for params\['w'\] must have the variable's shape \(2,\); got \(1,\)$",
    ):
        Adam().step({"w": np.zeros(2)}, {"w": np.zeros(1)})


def test_plain_sgd_loop_matches_the_general_rule_bit_for_bit_and_refuses_a_late_nan():
    # plain SGD updates float arrays of the gradient's dtype in one loop; a cast (float64
    # gradient, float32 variable), a Variable, or a rule with state takes the general loop:
    # each gives exactly p - lr * g in the variable's dtype
    rng = np.random.default_rng(0)
    ps = [rng.standard_normal((64, 256)), rng.standard_normal(256), rng.standard_normal((3, 4)).astype(np.float32)]
    gs = [rng.standard_normal(p.shape) for p in ps]  # the last one float64 for a float32 variable
    expect = [p - 0.1 * g.astype(p.dtype) for p, g in zip(ps, gs)]
    for pairs in (list(zip(gs[:2], ps[:2])), [(gs[2], ps[2])]):
        SGD(learning_rate=0.1).apply_gradients(pairs)
    for p, e in zip(ps, expect):
        np.testing.assert_array_equal(p, e)
        assert p.dtype == e.dtype
    v = FakeVariable([1.0, -2.0])
    SGD(learning_rate=0.1).apply_gradients([(np.array([0.5, 0.25]), v)])
    np.testing.assert_array_equal(v.numpy(), np.array([1.0, -2.0]) - 0.1 * np.array([0.5, 0.25]))
    # a NaN in the last chunk of the last gradient (more than DOT_CHUNK elements), after good
    # pairs: refused with the usual message, and no variable has changed
    before = [p.copy() for p in ps[:2]]
    bad = gs[0].copy()
    bad[-1, -1] = np.nan
    with pytest.raises(ValueError, match=r"gradient for variable #1 must contain only finite values"):
        SGD(learning_rate=0.1).apply_gradients([(gs[1], ps[1]), (bad, ps[0])])
    with pytest.raises(ValueError, match=r"gradient for params\['0.W'\] must contain only finite values"):
        SGD(learning_rate=0.1).step({"0.b": ps[1], "0.W": ps[0]}, {"0.b": gs[1], "0.W": bad})
    for p, b in zip(ps[:2], before):
        np.testing.assert_array_equal(p, b)


@pytest.mark.parametrize("at", [0, 2, 3])
@pytest.mark.parametrize("spoil, message", [
    ("nan", r"gradient for params\['{key}'\] must contain only finite values"),
    ("inf32", r"gradient for params\['{key}'\] must contain only finite values"),
    ("shape", r"gradient for params\['{key}'\] must have the variable's shape"),
    ("read-only", r"params\['{key}'\] must be a writeable array \(updated in place\); got a read-only array"),
])
def test_plain_sgd_step_refuses_a_spoiled_pair_after_good_steps_and_updates_nothing(at, spoil, message):
    # plain SGD's step on arrays checks every pair in one loop (issue 15) and updates only when
    # all passed: a spoiled pair at any position, after two good steps of the same signature,
    # gets the general path's message and leaves every variable as it was
    rng = np.random.default_rng(1)
    keys = ["0.W", "0.b", "2.W", "2.b"]
    shapes = [(32, 64), (32,), (10, 32), (10,)]
    dtypes = [np.float64, np.float64, np.float64, np.float32] if spoil == "inf32" else [np.float64] * 4
    params = {k: rng.standard_normal(s).astype(d) for k, s, d in zip(keys, shapes, dtypes)}
    grads = {k: rng.standard_normal(s).astype(d) for k, s, d in zip(keys, shapes, dtypes)}
    opt = SGD(learning_rate=0.5)
    for _ in range(2):
        expect = {k: params[k] - np.asarray(0.5 * grads[k], params[k].dtype) for k in keys}
        opt.step(params, grads)
        for k in keys:
            np.testing.assert_array_equal(params[k], expect[k])
    key = keys[3 if spoil == "inf32" else at]
    if spoil == "nan":
        grads[key] = grads[key].copy()
        grads[key].flat[-1] = np.nan
    elif spoil == "inf32":
        grads[key] = grads[key].copy()
        grads[key][0] = np.inf
    elif spoil == "shape":
        grads[key] = grads[key][:-1]
    else:
        params[key].flags.writeable = False
    before = {k: params[k].copy() for k in keys}
    with pytest.raises(ValueError, match=message.format(key=re.escape(key))):
        opt.step(params, grads)
    for k in keys:
        np.testing.assert_array_equal(params[k], before[k])
