"""tfport46's findings (TensorFlow's guides ported to autoprop): F12 ap.constant of a Variable in a tape,
F8 Adam's epsilon against Keras's, F1 compile's loss strings, F10 an integer member of a target structure,
F11 sliced assign, F9 one rule for sign/round/floor. Values from TensorFlow's documented behaviour, Keras 3's
``keras/src/optimizers/adam.py`` written out, and HIPS autograd."""

import re
import warnings

import autograd
import autograd.numpy as agnp
import numpy as np
import pytest

import autoprop as ap
import manualprop as mp


# --- F12: ap.constant(v) is tf.constant(v): a constant copy, the gradient of the rest -------------------
@pytest.mark.parametrize("make", [
    lambda v: ap.constant(v),
    lambda v: ap.constant(v, dtype=np.float32),  # a cast: also a constant
    lambda v: ap.constant(v * 1.0, dtype=np.float32),  # a computed Tensor cast: a constant
], ids=["variable", "variable-cast", "tensor-cast"])
def test_constant_of_a_variable_is_a_quiet_constant(make):
    v = ap.Variable(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither a TapeEscapeWarning nor any other
        with ap.GradientTape() as tape:
            y = make(v) * 2 + v * 3
        g = tape.gradient(y, v)
    # TensorFlow: tf.constant(v) * 2 + v * 3 -> 3.0; autograd with the first term held constant: 3.0
    assert float(g) == 3.0 == autograd.grad(lambda x: 3.0 * 2 + x * 3)(3.0)
    assert float(y) == 15.0


def test_real_escapes_stay_refused_beside_constant():
    v = ap.Variable(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        with ap.GradientTape() as tape:
            y = ap.Variable(0.0) * 0 + np.asarray(v) * 2 + v * 3  # the implicit np.asarray exit
    with pytest.raises(ap.TapeEscapeError, match="numpy conversion"):
        tape.gradient(y, v)
    with ap.GradientTape() as tape:  # a list of Tensors still warns (a slip for convert_to_tensor)
        with pytest.warns(ap.TapeEscapeWarning):
            ap.constant([v, v])


# --- F8: Adam's epsilon beside Keras's "epsilon hat" --------------------------------------------------
def _keras_adam(g, steps, lr=1e-3, b1=0.9, b2=0.999, eps=1e-7):
    """keras/src/optimizers/adam.py update_step (amsgrad=False), written out."""
    w, m, v, out = np.zeros_like(g), np.zeros_like(g), np.zeros_like(g), []
    for t in range(1, steps + 1):
        alpha = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        w = w - m * alpha / (np.sqrt(v) + eps)
        out.append(w.copy())
    return out


def test_adam_docstring_states_keras_epsilon_exactly():
    g = np.array([1e-6, 1e-4, 1e-2])
    keras = _keras_adam(g, 10)
    doc = ap.optimizers.Adam.__doc__
    assert "pass ``epsilon=1e-7`` for it" not in doc  # the false claim (tfport46 F8)
    assert "epsilon = epsilon_keras / sqrt(1 - beta_2**t)" in doc
    # the docstring's identity, step by step: epsilon_keras / sqrt(1 - beta_2**t) at each step gives Keras's
    opt, w = ap.optimizers.Adam(learning_rate=1e-3), ap.Variable(np.zeros(3))
    for t in range(1, 11):
        opt.epsilon = 1e-7 / np.sqrt(1 - 0.999**t)
        opt.apply_gradients([(ap.constant(g), w)])
        np.testing.assert_allclose(w.numpy(), keras[t - 1], rtol=1e-12, atol=0)
    # and the difference it states: a fixed epsilon=1e-7 on a 1e-6 gradient, first step
    opt, w = ap.optimizers.Adam(learning_rate=1e-3, epsilon=1e-7), ap.Variable(np.zeros(3))
    opt.apply_gradients([(ap.constant(g), w)])
    assert f"{w.numpy()[0]:.2e}" == "-9.09e-04" and f"{keras[0][0]:.2e}" == "-2.40e-04"


# --- F1: compile's loss strings name the matching loss -------------------------------------------------
@pytest.mark.parametrize("string, expected", [
    ("mse", r"use ap\.losses\.MeanSquaredError\(\)"),
    ("mean_squared_error", r"use ap\.losses\.MeanSquaredError\(\)"),
    ("huber", r"use ap\.losses\.Huber\(\)"),
    ("binary_crossentropy", r"use ap\.losses\.BinaryCrossEntropyWithLogits\(\) \(it takes logits"),
    ("sparse_categorical_crossentropy", r"use ap\.losses\.SoftmaxCrossEntropy\(\) \(it takes logits"),
    ("kld", r"'kld', which has no loss object here; the Keras strings with one: \['mse', 'huber'"),
])
def test_compile_loss_string_names_the_matching_loss(string, expected):
    model = ap.Sequential(ap.layers.Linear(2, 1, rng=0))
    with pytest.raises(TypeError, match=expected) as err:
        model.compile("sgd", string)
    if string in ("mse", "huber"):
        assert "SoftmaxCrossEntropy" not in str(err.value)
    with pytest.raises(TypeError, match=expected.replace(r"ap\.losses\.", r"manualprop\.")):
        mp.Sequential(mp.Linear(2, 1, rng=0)).compile("sgd", string)


def test_the_named_losses_give_keras_values_for_mse_and_huber():
    yt, yp = np.array([[0.0], [1.0], [3.0]]), np.array([[0.5], [1.0], [0.0]])
    # keras.losses.mean_squared_error / huber (delta=1): mean over the last axis, then over the batch
    assert float(ap.losses.MeanSquaredError()(yt, yp)) == pytest.approx((0.25 + 0 + 9) / 3, rel=1e-15)
    assert float(ap.losses.Huber()(yt, yp)) == pytest.approx((0.125 + 0 + 2.5) / 3, rel=1e-15)


# --- F10: an integer member of a target structure --------------------------------------------------------
def test_integer_member_warning_names_the_member_not_every_source():
    x = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        y = x * 3.0
        yi = ap.constant(np.array(4)) * 1
    with pytest.warns(UserWarning) as got:
        g = tape.gradient({"a": y, "b": yi}, x)
    assert float(g) == 3.0  # TensorFlow: 3.0
    text = " ".join(str(w.message) for w in got)
    assert "target['b'] (int64)" in text and "contributes nothing" in text
    assert "every source gets None" not in text and "the other 1 member of the target structure" in text


def test_integer_whole_target_still_says_every_source_gets_none():
    x = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        yi = ap.constant(np.array(4)) * 1
    with pytest.warns(UserWarning, match="the target has the dtype int64.*every source gets None"):
        assert tape.gradient(yi, x) is None


# --- F11: sliced assign ------------------------------------------------------------------------------------
def test_sliced_assign_names_the_alternatives():
    v = ap.Variable(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(AttributeError, match=re.escape("v.assign(ap.tensor_scatter_nd_update(v, [[0]], [5.0]))")):
        v[0].assign(5.0)
    with pytest.raises(AttributeError, match=r"'assign_add'.*tensor_scatter_nd_add"):
        v[1:].assign_add(1.0)
    assert not hasattr(v[0], "assign") and hasattr(v, "assign")  # duck typing unchanged
    v.assign(ap.tensor_scatter_nd_update(v, [[0]], [5.0]))  # the named alternative: TF's v[0].assign(5.0)
    assert v.numpy().tolist() == [5.0, 2.0, 3.0]


# --- F9: one rule for sign, round, floor, ceil --------------------------------------------------------------
def test_sign_round_floor_share_one_documented_rule():
    x = ap.Variable(0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ap.GradientTape(persistent=True) as tape:
            alone = [np.sign(x), np.round(x), np.floor(x), np.ceil(x)]
            mixed = np.sign(x) * x + np.round(x) * x + x * 2
    for y in alone:
        assert tape.gradient(y, x) is None
        assert float(tape.gradient(y, x, unconnected_gradients="zero")) == 0.0
    # autograd: d/dx (sign(x) x + round(x) x + 2x) at 0.5 = sign + round + 2 = 1 + 0 + 2
    expected = autograd.grad(lambda t: agnp.sign(t) * t + agnp.round(t) * t + t * 2)(0.5)
    assert float(tape.gradient(mixed, x)) == expected == 3.0
    lesson = open("lessons/10-gradient-tape.md", encoding="utf-8").read()
    assert "zeros for `tf.sign`" in lesson and "`sign` passes no gradient." in lesson
