"""Session 42 (helper verify42): verify41b F4, F5 and F7 fixed, each pinned here."""

import subprocess
import sys

import numpy as np
import pytest

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
    out = subprocess.run([sys.executable, "-m", "gradcheck", "check", f"{tmp_path / 'clip.py'}::MaxNormTrainOnly",
                          "--input-shape", "4,5"], capture_output=True, text=True, timeout=300)
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
