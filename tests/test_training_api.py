"""The Keras-style training API in both packages: compile / fit / train_step / evaluate."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import autoprop as ap
import manualprop as mp


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return train_test_split(X / 16.0, y, test_size=0.25, random_state=0, stratify=y)


def _models(lr=0.1):
    m = mp.Sequential(mp.Linear(64, 32, rng=1), mp.Tanh(), mp.Linear(32, 10, rng=2))
    m.compile(mp.SGD(lr, momentum=0.9), mp.SoftmaxCrossEntropy(), ["accuracy"])
    t = ap.Sequential(ap.layers.Linear(64, 32, rng=1), ap.layers.Tanh(), ap.layers.Linear(32, 10, rng=2))
    t.compile(ap.optimizers.SGD(lr, momentum=0.9), ap.losses.SoftmaxCrossEntropy(), ["accuracy"])
    return m, t


def test_manual_and_tape_fit_agree_epoch_by_epoch_and_learn_digits(digits):
    Xtr, Xte, ytr, yte = digits
    m, t = _models()
    hm = m.fit(Xtr, ytr, epochs=6, batch_size=32, validation_data=(Xte, yte), seed=0, verbose=0)
    ht = t.fit(Xtr, ytr, epochs=6, batch_size=32, validation_data=(Xte, yte), seed=0, verbose=0)
    assert set(hm.history) == set(ht.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    for k in hm.history:
        np.testing.assert_allclose(ht.history[k], hm.history[k], rtol=1e-9)
    assert hm.history["loss"][-1] < hm.history["loss"][0] / 5
    assert hm.history["val_accuracy"][-1] >= 0.95
    assert hm.epoch == list(range(6))
    np.testing.assert_allclose(t.evaluate(Xte, yte, verbose=0, return_dict=True)["accuracy"],
                               m.evaluate(Xte, yte, verbose=0, return_dict=True)["accuracy"])


def test_tensorflow_training_loop_runs_as_written(digits):
    Xtr, _, ytr, _ = digits
    model = ap.Sequential(ap.layers.Linear(64, 16, rng=3), ap.layers.ReLU(), ap.layers.Linear(16, 10, rng=4))
    loss_fn = ap.losses.SoftmaxCrossEntropy()
    optimizer = ap.optimizers.Adam(learning_rate=1e-2)
    losses = []
    for start in list(range(0, 1280, 64)) * 3:
        x_batch, y_batch = Xtr[start:start + 64], ytr[start:start + 64]
        with ap.GradientTape() as tape:
            logits = model(x_batch, training=True)
            loss_value = loss_fn(y_batch, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        losses.append(float(loss_value))
    assert np.mean(losses[-20:]) < np.mean(losses[:20]) * 0.3


def test_overridden_train_step_is_used_by_fit(digits):
    Xtr, _, ytr, _ = digits

    class L2Model(ap.Sequential):
        """Keras-style override: adds an L2 penalty and counts its steps."""

        steps = 0

        def train_step(self, data):
            x, y = data
            with ap.GradientTape() as tape:
                y_pred = self(x, training=True)
                penalty = 1e-3 * sum(ap.sum(v * v) for v in self.trainable_variables)
                loss = self.loss(y, y_pred) + penalty
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            type(self).steps += 1
            return {"loss": float(loss), "penalty": float(penalty)}

    model = L2Model(ap.layers.Linear(64, 10, rng=0))
    model.compile(ap.optimizers.SGD(0.1), ap.losses.SoftmaxCrossEntropy())
    hist = model.fit(Xtr[:100], ytr[:100], epochs=2, batch_size=25, verbose=0)
    assert L2Model.steps == 8
    assert set(hist.history) == {"loss", "penalty"}
    assert all(p > 0 for p in hist.history["penalty"])


def test_fit_errors_are_clear():
    m, t = _models()
    with pytest.raises(ValueError, match="same number of samples"):
        m.fit(np.zeros((5, 64)), np.zeros(4, dtype=int), verbose=0)
    with pytest.raises(RuntimeError, match="compile"):
        ap.Sequential(ap.layers.Linear(2, 2, rng=0)).fit(np.zeros((2, 2)), np.zeros(2, dtype=int))
    with pytest.raises(ValueError, match="unknown metric"):
        t.compile(ap.optimizers.SGD(0.1), ap.losses.SoftmaxCrossEntropy(), ["f1"])
    with pytest.raises(ValueError, match="epochs"):
        m.fit(np.zeros((5, 64)), np.zeros(5, dtype=int), epochs=0, verbose=0)


def test_same_seed_same_batches_no_shuffle_keeps_order():
    from manualprop.training import iterate_minibatches

    a = [b.tolist() for b in iterate_minibatches(10, 4, True, np.random.default_rng(5))]
    b = [b.tolist() for b in iterate_minibatches(10, 4, True, np.random.default_rng(5))]
    assert a == b and sorted(sum(a, [])) == list(range(10))
    assert [b.tolist() for b in iterate_minibatches(5, 2, False, None)] == [[0, 1], [2, 3], [4]]


def test_compile_accepts_keras_optimizer_names_and_refuses_loss_strings():
    t = ap.Sequential(ap.layers.Linear(4, 3, rng=0))
    t.compile("adam", ap.losses.SoftmaxCrossEntropy())
    assert isinstance(t.optimizer, ap.optimizers.Adam)
    m = mp.Sequential(mp.Linear(4, 3, rng=0)).compile("SGD", mp.SoftmaxCrossEntropy())
    assert isinstance(m.optimizer, mp.SGD)
    with pytest.raises(TypeError, match=r"not the string 'sparse_categorical_crossentropy'.*SoftmaxCrossEntropy\(\)"):
        t.compile("sgd", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="unknown optimizer 'adagrad'"):
        m.compile("adagrad", mp.SoftmaxCrossEntropy())


def test_train_step_must_return_a_dict():
    class Bad(ap.Sequential):
        def train_step(self, data):
            return None

    model = Bad(ap.layers.Linear(4, 3, rng=0)).compile("sgd", ap.losses.SoftmaxCrossEntropy())
    with pytest.raises(TypeError, match="Bad.train_step must return a dict of metrics.*got NoneType"):
        model.fit(np.zeros((4, 4)), np.zeros(4, dtype=int), verbose=0)


def test_apply_gradients_without_any_gradient_raises_and_partial_warns():
    w, v = ap.Variable([1.0], name="w"), ap.Variable([2.0], name="v")
    opt = ap.optimizers.SGD(0.5)
    with pytest.raises(ValueError, match=r"no gradients provided for any variable \(variable #0 \('w'\)"):
        opt.apply_gradients([(None, w)])
    with pytest.warns(UserWarning, match=r"gradients do not exist for variable #1 \('v'\)"):
        opt.apply_gradients([(np.array([2.0]), w), (None, v)])
    np.testing.assert_array_equal(w.numpy(), [0.0])
    np.testing.assert_array_equal(v.numpy(), [2.0])


def test_wrong_input_dtype_names_the_one_that_fits():
    with pytest.raises(TypeError, match=r"X must have dtype float64 \(the dtype of the parameters\); got int64"):
        mp.Linear(2, 2, rng=0).forward(np.ones((1, 2), dtype=np.int64))
