"""Session 26 (left26c; review25g L1, note25 "Left"): check_layer and ``gradcheck check`` give one verdict on a
regularised layer. check_layer compared backward with the gradient of forward alone, so a correct ``dW += 2*l2*W``
FAILed there (with a note) where ``gradcheck check`` (diagnose_layer) PASSes it; the diagnosis's split of that term
(checked against the penalty the layer states, the rest against central differences) could not be called from check
(an import cycle). check_layer now takes the diagnosis's result through ``gradcheck.check.penalty_split``.
"""

import numpy as np

import gradcheck
from gradcheck import check as check_module


class Dense:
    """The review's repro/api_penalty.py: nnfs's attribute name for the L2 strength; ``data`` scales the data part."""

    def __init__(self, l2_coef=2.0, data=1.0, weight_regularizer_l2=0.01):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
        self.grads = {}
        self.weight_regularizer_l2, self.l2_coef, self.data = weight_regularizer_l2, l2_coef, data

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = self.data * self.X.T @ dY + self.l2_coef * self.weight_regularizer_l2 * self.params["W"]
        self.grads["b"] = dY.sum(0)
        return dY @ self.params["W"].T


X = np.random.default_rng(1).standard_normal((4, 3))


def test_a_correct_regularised_layer_passes_check_layer_as_the_cli_passes_it():
    assert gradcheck.check_layer is check_module.check_layer  # one function, public and internal
    r = gradcheck.check_layer(Dense(), X)
    assert r.passed, (r.failing_tensors, r.notes)  # was: FAIL dW, with a note pointing to diagnose_layer
    assert any(n.startswith("dW has a term that does not multiply dY, backward(0)'s dW: it is the gradient of the "
                            "penalty the layer states (weight_regularizer_l1, weight_regularizer_l2 = 0, 0.01")
               for n in r.notes), r.notes
    assert gradcheck.diagnose_layer(Dense(), X).passed
    layer = Dense()
    W = layer.params["W"].copy()
    gradcheck.check_layer(layer, X)
    assert np.array_equal(layer.params["W"], W)  # the student's weights as they were


def test_a_wrong_penalty_or_data_part_still_fails_check_layer():
    for wrong, tensor in ((Dense(l2_coef=1.0), "dW"), (Dense(data=2.0), "dW")):
        r = gradcheck.check_layer(wrong, X)
        d = gradcheck.diagnose_layer(type(wrong)(wrong.l2_coef, wrong.data), X)
        assert not r.passed and r.failing_tensors == [tensor], (r.failing_tensors, r.notes)
        assert not d.passed


def test_without_the_diagnosis_check_layer_keeps_its_own_fail_and_note(monkeypatch):
    monkeypatch.setattr(check_module, "penalty_split", None)
    r = gradcheck.check_layer(Dense(), X)
    assert not r.passed and any("does not multiply dY" in n for n in r.notes)
