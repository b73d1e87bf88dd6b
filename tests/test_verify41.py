"""verify41 H1: ``b.set_weights(a.get_weights())`` copies a model holding a BatchNorm1D/BatchNorm2D.

Their running statistics are state (PyTorch's buffers), not Variables, so ``weights`` left them out and
the copy's inference output differed from the original's, silently (max diff 2.32 with a BatchNorm1D,
0.851 with a BatchNorm2D). Oracle: the original model's own inference output (Keras's ``set_weights``
and PyTorch's ``load_state_dict`` both copy the statistics), and the statistics themselves.
"""

import warnings

import numpy as np
import pytest

import autoprop as ap

L = ap.layers


def _trained(make, x):
    a = make()
    for _ in range(3):
        a(x, training=True)  # training forwards move the running statistics away from 0 and 1
    b = make()
    b(x[:2], training=False)
    return a, b


@pytest.mark.parametrize("make, shape", [
    (lambda: ap.Sequential([L.Linear(4, 3, rng=0), L.BatchNorm1D(3)]), (16, 4)),
    (lambda: ap.Sequential([L.Conv2D(2, 3, 3, rng=0), L.BatchNorm2D(3), L.Flatten(), L.Linear(48, 2, rng=1)]),
     (4, 2, 6, 6)),
])
def test_set_weights_of_get_weights_copies_the_running_statistics(make, shape):
    x = np.random.default_rng(0).normal(3.0, 2.0, size=shape)
    a, b = _trained(make, x)
    got = a.get_weights()
    assert len(got) == len(a.weights) + 2  # the weights, then running_mean and running_var
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b.set_weights(got)
    np.testing.assert_array_equal(b(x, training=False).numpy(), a(x, training=False).numpy())
    bn_a, bn_b = a.layers[1], b.layers[1]
    np.testing.assert_array_equal(bn_b.running_mean, bn_a.running_mean)
    np.testing.assert_array_equal(bn_b.running_var, bn_a.running_var)
    got[-1][:] = 7.0  # copies: neither model changes with the list
    assert not np.any(bn_a.running_var == 7.0) and not np.any(bn_b.running_var == 7.0)


def test_the_weights_alone_leave_the_state_and_say_so():
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(16, 4))
    a, b = _trained(lambda: ap.Sequential([L.Linear(4, 3, rng=0), L.BatchNorm1D(3)]), x)
    got = a.get_weights()
    with pytest.warns(UserWarning, match=r"got the 4 weights alone; the state arrays BatchNorm1D.running_mean, "
                                         r"BatchNorm1D.running_var .* were left as they were"):
        b.set_weights(got[:4])
    np.testing.assert_array_equal(b.weights[0].numpy(), a.weights[0].numpy())
    np.testing.assert_array_equal(b.layers[1].running_mean, np.zeros(3))
    with pytest.raises(ValueError, match=r"got 5 values for the 4 weights of the layer \(or 6 with its 2 state "
                                         r"arrays, as get_weights\(\) lists them\)"):
        b.set_weights(got[:5])
    with pytest.raises(ValueError, match=r"value 5 for state BatchNorm1D.running_var has shape \(4,\); "
                                         r"the state's shape is \(3,\)"):
        b.set_weights(got[:5] + [np.ones(4)])


# --- verify41 H2: compile(metrics=["accuracy"]) on a binary classifier reported the share of label 0 ---

import manualprop as mp  # noqa: E402
from manualprop.training import accuracy  # noqa: E402

_X = np.random.default_rng(0).standard_normal((40, 4))


@pytest.mark.parametrize("package", ["manualprop", "autoprop"])
def test_evaluate_accuracy_of_a_binary_classifier_is_the_share_classified_right(package):
    y = np.random.default_rng(1).integers(0, 2, (40, 1)).astype(float)
    if package == "manualprop":
        model = mp.Sequential(mp.Linear(4, 1, rng=0))
        model.compile("sgd", mp.BinaryCrossEntropyWithLogits(), metrics=["accuracy"])
        logits = model.forward(_X)
    else:
        model = ap.Sequential([L.Linear(4, 1, rng=0)])
        model.compile("sgd", ap.losses.BinaryCrossEntropyWithLogits(), metrics=["accuracy"])
        logits = model.predict(_X)
    by_hand = np.mean((logits > 0) == (y == 1))
    assert by_hand != np.mean(y == 0)  # the number reported before: the share of label 0 (0.325 here)
    assert model.evaluate(_X, y, verbose=0, return_dict=True)["accuracy"] == pytest.approx(by_hand, abs=1e-12)


def test_accuracy_reads_labels_one_hot_and_multi_label_targets_or_names_the_shapes():
    rng = np.random.default_rng(2)
    logits, labels = rng.standard_normal((12, 3)), rng.integers(0, 3, 12)
    want = np.mean(logits.argmax(axis=1) == labels)
    assert accuracy(labels, logits) == want
    assert accuracy(labels[:, None], logits) == want  # (N, 1) labels, as Keras's sparse accuracy
    assert accuracy(np.eye(3)[labels], logits) == want  # one-hot: categorical accuracy
    targets = rng.integers(0, 2, (12, 3))  # multi-label 0/1 targets of a binary cross-entropy: entry by entry
    assert accuracy(targets, logits, loss=mp.BinaryCrossEntropyWithLogits()) == np.mean((logits > 0) == targets)
    assert accuracy(targets[:, 0], logits[:, :1]) == np.mean((logits[:, 0] > 0) == targets[:, 0])
    with pytest.raises(ValueError, match=r"accuracy: targets of shape \(12, 3\) beside logits of shape \(12, 3\); "
                                         r"expected integer labels of shape \(12,\) or one-hot targets"):
        accuracy(rng.standard_normal((12, 3)), logits)  # regression targets: no accuracy


# --- verify41 H3: PyTorch's rnn(x, h0) bound h0 to `training` and ran from a zero state, silently ---

_rs = np.random.default_rng(3)
_XR, _H0, _C0 = _rs.standard_normal((2, 4, 3)), _rs.standard_normal((2, 5)), _rs.standard_normal((2, 5))
_XT, _MASK = _rs.standard_normal((2, 4, 6)), np.triu(np.ones((4, 4), bool), 1)


@pytest.mark.parametrize("call, message", [
    (lambda: mp.RNN(3, 5, rng=0).forward(_XR, _H0),
     r"RNN\(input_size=3, hidden_size=5\).forward: training must be True or False; got ndarray of shape \(2, 5\); "
     r"the initial state is keyword-only: forward\(X, h0=h0\)"),
    (lambda: mp.GRU(3, 5, rng=0).forward(_XR, _H0), r"GRU.*got ndarray of shape \(2, 5\).*forward\(X, h0=h0\)"),
    (lambda: mp.LSTM(3, 5, rng=0).forward(_XR, (_H0, _C0)), r"LSTM.*got a tuple of 2.*forward\(X, h0=h0, c0=c0\)"),
    (lambda: mp.TransformerBlock(6, 2, 8, rng=0).forward(_XT, _MASK), r"TransformerBlock.*a mask is not an argument"),
    (lambda: mp.MultiHeadAttention(6, 2, rng=0).forward(_XT, _MASK), r"MultiHeadAttention.*a mask is not an argument"),
    (lambda: ap.layers.GRU(3, 5, rng=0)(_XR, _H0), r"GRU.*__call__: training must be True or False; got ndarray"),
    (lambda: ap.layers.LSTM(3, 5, rng=0)(_XR, (_H0, _C0)), r"LSTM.*__call__: .*got a tuple of 2.*keyword-only"),
])
def test_a_state_or_mask_in_the_place_of_training_is_refused(call, message):
    with pytest.raises(TypeError, match=message):  # before: the zero-state (or unmasked) output, no word
        call()


def test_the_state_by_keyword_and_a_positional_bool_still_run():
    g = mp.GRU(3, 5, rng=0)
    assert not np.array_equal(g.forward(_XR, h0=_H0), g.forward(_XR))  # the state matters: the refusal guards a change
    np.testing.assert_array_equal(g.forward(_XR, True), g.forward(_XR, training=True))
    a = ap.layers.GRU(3, 5, rng=0)
    for k, v in a.variables.items():
        v.assign(g.params[k])
    np.testing.assert_allclose(a(_XR, h0=_H0).numpy(), g.forward(_XR, h0=_H0), rtol=1e-12, atol=1e-14)
    assert a(_XR, 1).shape == (2, 4, 5)
