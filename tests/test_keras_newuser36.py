"""newuser36's Keras findings in autoprop (H3, M3, L5, L3), each against Keras's documented behaviour."""

import numpy as np
import pytest

import autoprop as ap

# --- H3: BatchNormalization's moving statistics are non-trainable weights, as Keras's ----------

def bn_model():
    return ap.Sequential([ap.layers.Linear(4, 3, rng=0), ap.layers.BatchNormalization()])


def test_batchnormalization_moving_statistics_are_non_trainable_weights():
    x = np.random.default_rng(1).normal(2.0, 3.0, size=(16, 4))
    a = bn_model()
    a(x, training=True)
    bn = a.layers[1]
    # Keras: BatchNormalization.weights = [gamma, beta, moving_mean, moving_variance], the last
    # two non-trainable; the model's 6 weights, 2 of them non-trainable (newuser36: 4 and 0)
    assert [v.name for v in bn.weights] == ["gamma", "beta", "moving_mean", "moving_variance"]
    assert bn.non_trainable_weights == [bn.moving_mean, bn.moving_variance]
    assert isinstance(bn.moving_mean, ap.Variable) and not bn.moving_mean.trainable
    assert len(a.weights) == 6 and len(a.non_trainable_weights) == 2
    assert [v.name for v in a.trainable_weights] == ["0.W", "0.b", "1.gamma", "1.beta"]
    # the first training call's statistics, Keras's rule by hand (momentum 0.99, biased var)
    h = a.layers[0](x).numpy()
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.01 * h.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.99 + 0.01 * h.var(axis=0), rtol=1e-12)


def test_copying_weights_copies_the_inference_output():
    """The Keras idiom zip(a.weights, b.weights) + assign: the copy's inference output is a's
    (before: the moving statistics were not weights, maxdiff 0.336)."""
    x = np.random.default_rng(1).normal(2.0, 3.0, size=(16, 4))
    a, b = bn_model(), bn_model()
    b(x[:2])  # built (as a Keras model must be for its weights to exist)
    for _ in range(5):
        a(x, training=True)
    mean_before = a.layers[1].moving_mean
    for src, dst in zip(a.weights, b.weights, strict=True):
        dst.assign(src)
    np.testing.assert_array_equal(b(x, training=False).numpy(), a(x, training=False).numpy())
    assert not np.array_equal(a(x, training=False).numpy(), bn_model()(x, training=False).numpy())
    assert a.layers[1].moving_mean is mean_before  # updated by assign: the same Variable


def test_moving_statistics_get_no_gradient_and_fit_does_not_train_them():
    x = np.random.default_rng(2).normal(size=(8, 4))
    y = np.random.default_rng(3).normal(size=(8, 3))
    m = bn_model()
    m.compile(optimizer=ap.optimizers.SGD(0.1, weight_decay=0.1), loss=ap.losses.MeanSquaredError())
    m.fit(x, y, epochs=1, batch_size=8, verbose=0, shuffle=False)
    bn = m.layers[1]
    # the one training call's statistics at the initial weights: neither decayed nor stepped
    h0 = bn_model().layers[0](x).numpy()
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.01 * h0.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.99 + 0.01 * h0.var(axis=0), rtol=1e-12)
    with ap.GradientTape() as tape:
        loss = ap.reduce_sum(m(x, training=True) ** 2)
    grads = tape.gradient(loss, m.weights)
    assert [g is None for g in grads] == [False] * 4 + [True] * 2


# --- M3: evaluate returns Keras's scalar or [loss, *metrics]; return_dict, batch_size, verbose ---

def classifier(metrics):
    import manualprop as mp
    x = np.random.default_rng(1).normal(2.0, 3.0, size=(16, 4))
    y = np.array([0, 1, 2, 0] * 4)
    tape = ap.Sequential([ap.layers.Linear(4, 3, rng=0)])
    tape.compile(optimizer=ap.optimizers.SGD(0.1), loss=ap.losses.SoftmaxCrossEntropy(), metrics=metrics)
    manual = mp.Sequential(mp.Linear(4, 3, rng=0))
    manual.compile(optimizer=mp.SGD(0.1), loss=mp.SoftmaxCrossEntropy(), metrics=metrics)
    return x, y, tape, manual


def reference_loss_and_accuracy(x, y):
    """The loss and accuracy of Linear(4, 3, rng=0) by numpy: softmax cross-entropy, argmax."""
    import manualprop as mp
    lin = mp.Linear(4, 3, rng=0)
    z = x @ lin.params["W"].T + lin.params["b"]  # (W is (out, in), PyTorch's)
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(y)), y].mean(), float(np.mean(z.argmax(axis=1) == y))


@pytest.mark.parametrize("which", ["tape", "manual"])
def test_evaluate_returns_keras_loss_and_metrics(which):
    x, y, tape, manual = classifier(["accuracy"])
    model = tape if which == "tape" else manual
    want_loss, want_acc = reference_loss_and_accuracy(x, y)
    loss, acc = model.evaluate(x, y, verbose=0)  # Keras's idiom (before: the keys 'loss', 'accuracy')
    assert isinstance(loss, float) and isinstance(acc, float)
    assert loss == pytest.approx(want_loss, rel=1e-12) and acc == want_acc
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(logs) == ["loss", "accuracy"] and logs["loss"] == pytest.approx(want_loss, rel=1e-12)
    # batches of 5 (5, 5, 5, 1): the mean weighted by batch size, the same loss
    assert model.evaluate(x, y, batch_size=5, verbose=0)[0] == pytest.approx(want_loss, rel=1e-12)
    _, _, tape1, manual1 = classifier(())
    only = (tape1 if which == "tape" else manual1).evaluate(x, y, verbose=0)
    assert isinstance(only, float) and only == pytest.approx(want_loss, rel=1e-12)  # no metrics: a scalar


def test_evaluate_refuses_bad_keras_arguments():
    x, y, tape, _ = classifier(["accuracy"])
    with pytest.raises(ValueError, match=r"Sequential.evaluate: batch_size must be"):
        tape.evaluate(x, y, batch_size=0, verbose=0)
    with pytest.raises(ValueError, match=r"verbose must be 'auto', 0, 1 or 2 \(as Keras's\); got 'yes'"):
        tape.evaluate(x, y, verbose="yes")
    with pytest.raises(TypeError, match="return_dict must be True or False; got 1"):
        tape.evaluate(x, y, verbose=0, return_dict=1)


def test_evaluate_verbose_0_is_silent_and_auto_shows_the_bar(capsys):
    x, y, tape, _ = classifier(["accuracy"])
    tape.evaluate(x, y, verbose=0)
    assert capsys.readouterr().err == ""
    tape.evaluate(x, y)
    assert "evaluate" in capsys.readouterr().err


# --- L5: assigning a value the variable's dtype cannot hold is refused, as tf.Variable ---------

def test_float_into_an_int_variable_is_refused_not_truncated():
    v = ap.Variable([1, 2], name="counts")
    with pytest.raises(TypeError) as e:
        v.assign([1.5, 2.5])  # numpy's cast gave [1, 2] silently (newuser36 L5)
    assert str(e.value) == (
        "Variable 'counts'.assign: the variable's dtype int64 cannot hold a value of dtype float64 "
        "(got [1.5 2.5]; numpy would truncate it), as tf.Variable refuses it. Cast the value "
        "yourself (np.round(value).astype('int64')), or make the variable float from the start")
    for method in (v.assign_add, v.assign_sub):
        with pytest.raises(TypeError, match=r"'counts'\.assign_(add|sub): the variable's dtype int64"):
            method(np.array([0.5, 0.5]))
    assert v.numpy().tolist() == [1, 2]
    w = ap.Variable(np.array([1.0, 2.0]), name="w")
    with pytest.raises(TypeError, match=r"dtype float64 cannot hold a value of dtype complex128 .* "
                                        r"drop its imaginary part"):
        w.assign(np.array([1j, 2.0]))


def test_safe_and_same_kind_casts_stay_allowed():
    w = ap.Variable(np.array([1.0, 2.0]))
    w.assign([3, 4])  # int into a float variable: exact
    assert w.numpy().tolist() == [3.0, 4.0] and w.dtype == np.float64
    v = ap.Variable([1, 2])
    v.assign([3, 4])
    v.assign_add(np.array([1, 1], dtype=np.int32))
    assert v.numpy().tolist() == [4, 5] and v.dtype == np.int64
    f = ap.Variable(np.float32([1.0]))
    f.assign(np.float64([2.5]))  # float64 into float32: a cast within the kind, as TF's Python floats
    assert f.numpy().tolist() == [2.5] and f.dtype == np.float32
    f.assign(ap.constant(np.float64([0.25])))
    assert f.numpy().tolist() == [0.25]


# --- L3: a loss called in PyTorch's order (logits, labels) is told Keras's order ----------------

def test_softmax_cross_entropy_in_pytorch_order_names_keras_order():
    logits = np.random.RandomState(0).randn(4, 3)
    labels = np.array([0, 2, 1, 1])
    with pytest.raises(TypeError) as e:
        ap.losses.SoftmaxCrossEntropy()(logits, labels)  # before: "convert with y_pred.astype(np.float64)"
    assert str(e.value) == (
        "autoprop.losses.SoftmaxCrossEntropy(reduction='mean'): y_pred has dtype int64 (shape (4,)) and "
        "y_true dtype float64 (shape (4, 3)): the arguments look swapped. Losses take Keras's order, "
        "loss(y_true, y_pred): the targets first, then the predictions, SoftmaxCrossEntropy()(labels, "
        "logits) (PyTorch's F.cross_entropy(input, target) takes the logits first)")
    # the right order gives the loss (a control), and the other losses say the same
    want = -np.mean([np.log(np.exp(z[y]) / np.exp(z).sum()) for z, y in zip(logits, labels)])
    assert float(ap.losses.SoftmaxCrossEntropy()(labels, logits)) == pytest.approx(want, rel=1e-12)
    with pytest.raises(TypeError, match=r"MeanSquaredError.*the arguments look swapped"):
        ap.losses.MeanSquaredError()(np.array([0.5, 1.5]), np.array([1, 2]))
    # integer predictions beside integer targets: not a swap, the dtype message as before
    with pytest.raises(TypeError, match=r"y_pred must have dtype float32 or float64; got int64"):
        ap.losses.MeanSquaredError()(np.array([1, 2]), np.array([1, 2]))


def test_set_weights_get_weights_copy_a_model_and_name_an_unbuilt_layer():
    """Keras's b.set_weights(a.get_weights()): the copy's inference output is a's; into a model whose
    BatchNormalization is not built yet (2 weights, not 6) it is refused, naming the layer, where
    zip(a.weights, b.weights) copies the first 2 silently (newuser36's H3 case: maxdiff 0.336)."""
    x = np.random.default_rng(1).normal(2.0, 3.0, size=(16, 4))
    a, b = bn_model(), bn_model()
    for _ in range(5):
        a(x, training=True)
    with pytest.raises(ValueError) as e:
        b.set_weights(a.get_weights())
    assert str(e.value) == (
        "Sequential.set_weights: got 6 values for the 2 weights of the layer; not built yet: "
        "BatchNormalization (its weights are made by its first call: call the model once, e.g. on "
        "a batch of the data)")
    assert np.array_equal(b.weights[0].numpy(), bn_model().weights[0].numpy())  # nothing assigned
    b(x[:2])
    got = a.get_weights()
    assert [w.shape for w in got] == [(3, 4), (3,), (3,), (3,), (3,), (3,)]
    b.set_weights(got)
    np.testing.assert_array_equal(b(x).numpy(), a(x).numpy())
    got[0][:] = 0.0  # copies: a is unchanged
    assert np.abs(a.weights[0].numpy()).max() > 0
    with pytest.raises(ValueError, match=r"value 2 for weight '1.gamma' has shape \(4,\); the weight's shape is \(3,\)"):
        b.set_weights(got[:2] + [np.ones(4)] + got[3:])
