"""Session 42 (helper verify42): verify41b F4, F5 and F7 fixed, each pinned here."""


import numpy as np
import pytest
from test_cli import run_here

from gradcheck import check_layer
from gradcheck.errors import InputModifiedError

CLIP = '''
import numpy as np

class MaxNormTrainOnly:
    """A max-norm clip of W inside forward, in training mode only (verify41b F7)."""
    def __init__(self):
        self.params = {"W": np.random.default_rng(0).normal(size=(5, 3))}
        self.grads = {"W": np.zeros((5, 3))}
    def forward(self, X, training=False):
        self.X = X
        if training:
            self.params["W"] /= np.maximum(np.linalg.norm(self.params["W"], axis=0, keepdims=True), 1.0)
        return X @ self.params["W"]
    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T
'''


def _said(text: str) -> str:
    return " ".join(text.split())


def test_f7_param_write_in_training_only_names_the_mode_in_process():
    ns: dict = {}
    exec(compile(CLIP, "clip.py", "exec"), ns)  # noqa: S102 - the layer under test
    with pytest.raises(InputModifiedError) as info:
        check_layer(ns["MaxNormTrainOnly"](), np.random.default_rng(1).standard_normal((4, 5)), twin=None,
                    training=True)
    text = _said(str(info.value))
    assert "each call forward(X, training=True) changes it again" in text, text
    assert "training or eval" not in text


def test_f7_param_write_in_training_only_names_the_mode_sandboxed(tmp_path):
    (tmp_path / "clip.py").write_text(CLIP)
    out = run_here("check", f"{tmp_path / 'clip.py'}::MaxNormTrainOnly", "--input-shape", "4,5")  # the layer sandboxed
    text = _said(out.stdout + out.stderr)
    assert out.returncode == 1, text
    assert "each call forward(X, training=True) changes it again" in text and "training or eval" not in text, text


# --- F4: compile's Softmax/Sigmoid + logits-loss warning, and the accuracy's threshold, look past containers ------
import warnings  # noqa: E402

import autoprop as ap  # noqa: E402
import manualprop as mp  # noqa: E402

L = ap.layers
NESTED = [
    (lambda: mp.Sequential(mp.Linear(4, 3, rng=0), mp.Sequential(mp.ReLU(), mp.Softmax())), mp.SoftmaxCrossEntropy,
     "Softmax, layer 1.1"),
    (lambda: mp.Sequential(mp.Linear(4, 3, rng=0), mp.Softmax(), mp.Flatten()), mp.SoftmaxCrossEntropy,
     "Softmax, layer 1 "),
    (lambda: mp.Sequential(mp.Linear(4, 1, rng=0), mp.Sequential(mp.Sequential(mp.Sigmoid()))),
     mp.BinaryCrossEntropyWithLogits, "Sigmoid, layer 1.0.0"),
    (lambda: L.Sequential(L.Linear(4, 3, rng=0), L.Sequential(L.ReLU(), L.Softmax())), ap.losses.SoftmaxCrossEntropy,
     "Softmax, layer 1.1"),
    (lambda: L.Sequential(L.Linear(4, 3, rng=0), L.Softmax(), L.Flatten()), ap.losses.SoftmaxCrossEntropy,
     "Softmax, layer 1 "),
]


@pytest.mark.parametrize("make, loss, said", NESTED)
def test_f4_probabilities_from_a_nested_sequential_or_before_flatten_are_warned(make, loss, said):
    with pytest.warns(UserWarning, match=rf"outputs are those of its {said}.*{loss.__name__} takes logits"):
        make().compile("sgd", loss())


def test_f4_a_residual_ending_in_softmax_is_not_looked_into():
    """A Residual's output is x + F(x), not the Softmax's probabilities: no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mp.Sequential(mp.Linear(3, 3, rng=0), mp.Residual(mp.Softmax())).compile("sgd", mp.SoftmaxCrossEntropy())


@pytest.mark.parametrize("pkg", ["mp", "ap"])
def test_f4_accuracy_of_a_sigmoid_inside_a_nested_sequential_thresholds_at_one_half(pkg):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(float).reshape(-1, 1)
    if pkg == "mp":
        m = mp.Sequential(mp.Linear(4, 1, rng=0), mp.Sequential(mp.Sigmoid()))
        loss = mp.MeanSquaredError()
    else:
        m = L.Sequential(L.Linear(4, 1, rng=0), L.Sequential(L.Sigmoid()))
        loss = ap.losses.MeanSquaredError()
    m.compile("sgd", loss, metrics=["accuracy"])
    p = np.asarray(m.predict(X))
    hand = float(np.mean((p > 0.5) == (y > 0.5)))
    assert hand != float(np.mean(y))  # the share of label 1 (what a threshold at 0 gives) is another number
    assert m.evaluate(X, y, verbose=0)[1] == pytest.approx(hand, abs=1e-12)


# --- F5: manualprop.Sequential has autoprop's weights API (BatchNorm running statistics too) and refuses `variables =`
def _bn_model(seed):
    return mp.Sequential(mp.Linear(4, 6, rng=seed), mp.BatchNorm1D(6), mp.ReLU(),
                         mp.Sequential(mp.Linear(6, 3, rng=seed + 1), mp.BatchNorm1D(3)))


def test_f5_set_weights_of_get_weights_copies_the_inference_output_with_running_statistics():
    X = np.random.default_rng(0).normal(size=(16, 4))
    a, b = _bn_model(0), _bn_model(5)
    for _ in range(3):
        a.forward(X * 3 + 1, training=True)
    w = a.get_weights()
    assert [np.shape(v) for v in w] == [(6, 4), (6,), (6,), (6,), (3, 6), (3,), (3,), (3,), (6,), (6,), (3,), (3,)]
    arrays = b.weights
    b.set_weights(w)
    assert all(x is y for x, y in zip(arrays, b.weights))  # copied into the layers' own arrays
    np.testing.assert_array_equal(b.forward(X), a.forward(X))
    np.testing.assert_array_equal(b[3][1].running_var, a[3][1].running_var)
    a.forward(X, training=True)
    assert not np.array_equal(w[-1], a[3][1].running_var)  # get_weights gave copies


def test_f5_weights_alone_warn_naming_the_state_left():
    a, b = _bn_model(0), _bn_model(5)
    a.forward(np.ones((4, 4)) + np.arange(4)[:, None], training=True)
    with pytest.warns(UserWarning, match=r"got the 8 weights alone; the state arrays BatchNorm1D.running_mean"):
        b.set_weights(a.get_weights()[:8])
    np.testing.assert_array_equal(b.params["0.W"], a.params["0.W"])
    np.testing.assert_array_equal(b[1].running_mean, np.zeros(6))


@pytest.mark.parametrize("values, match", [
    (lambda w: w[:5], r"got 5 values for the 8 weights of the layer \(or 12 with its 4 state arrays"),
    (lambda w: [w[0].T, *w[1:]], r"value 0 for weight '0.W' has shape \(4, 6\); the weight's shape is \(6, 4\)"),
])
def test_f5_a_wrong_count_or_shape_is_refused_and_nothing_assigned(values, match):
    a, b = _bn_model(0), _bn_model(5)
    before = b.get_weights()
    with pytest.raises(ValueError, match=match):
        b.set_weights(values(a.get_weights()))
    assert all(np.array_equal(x, y) for x, y in zip(before, b.get_weights()))


def test_f5_a_complex_value_is_refused():
    b = mp.Sequential(mp.Linear(2, 2, rng=0))
    w = b.get_weights()
    with pytest.raises(TypeError, match=r"weight '0.W' of dtype float64 cannot hold a value of dtype complex128"):
        b.set_weights([w[0] + 1j, w[1]])


def test_f5_variables_is_params_and_cannot_be_assigned():
    a, b = mp.Sequential(mp.Linear(4, 2, rng=0)), mp.Sequential(mp.Linear(4, 2, rng=1))
    assert b.variables.keys() == b.params.keys() and all(b.variables[k] is b.params[k] for k in b.params)
    with pytest.raises(TypeError, match=r"Sequential.variables cannot be assigned.*b.set_weights\(a.get_weights\(\)\)"):
        b.variables = a.variables
    assert "variables" not in vars(b)


def test_f5_the_two_packages_list_the_same_state_in_the_same_order():
    m = _bn_model(0)
    t = L.Sequential(L.Linear(4, 6, rng=0), L.BatchNorm1D(6), L.ReLU(),
                     L.Sequential(L.Linear(6, 3, rng=1), L.BatchNorm1D(3)))
    t(np.ones((2, 4)))
    assert [(type(x).__name__, n) for x, n in m._states()] == [(type(x).__name__, n) for x, n in t._states()]
    assert len(m.get_weights()) == len(t.get_weights())
