"""Session 34 (left34): tester33's findings session 33 left, on Andrew Ng's ``rnn_cell_forward/backward`` pair:
F8, ``--tape`` said the tape "saw no use of params['Wya']" where forward reads Wya for ``yt_pred``, the output
backward takes no gradient of; F13, ``dWax = dtanh @ xt`` (a missing transpose, xt square) FAILed with "no known
bug pattern" where check names the same bug in ``linear_backward`` (``dW = dZ @ A_prev``)."""

import json

import numpy as np
from test_cli import both, run_here, student

RNN = """
import numpy as np

def softmax(z):
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)

def rnn_cell_forward(xt, a_prev, parameters):
    Wax, Waa, Wya = parameters["Wax"], parameters["Waa"], parameters["Wya"]
    ba, by = parameters["ba"], parameters["by"]
    a_next = np.tanh(Waa @ a_prev + Wax @ xt + ba)
    yt_pred = softmax(Wya @ a_next + by)
    return a_next, yt_pred, (a_next, a_prev, xt, parameters)

def rnn_cell_backward(da_next, cache):
    a_next, a_prev, xt, parameters = cache
    dtanh = da_next * (1 - a_next ** 2)
    return {"dxt": parameters["Wax"].T @ dtanh, "da_prev": parameters["Waa"].T @ dtanh,
            "dWax": DWAX, "dWaa": dtanh @ a_prev.T, "dba": dtanh.sum(axis=1, keepdims=True)}

class Unused:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((4, 3)), "U": rng.standard_normal((3, 3))}
        self.grads = {}
    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"]
    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "U": np.zeros((3, 3))}
        return dY @ self.params["W"].T
"""


def init(n_x):
    rng = np.random.default_rng(1)
    return json.dumps({"parameters": {k: rng.standard_normal(s).round(4).tolist() for k, s in (
        ("Wax", (5, n_x)), ("Waa", (5, 5)), ("Wya", (2, 5)), ("ba", (5, 1)), ("by", (2, 1)))}})


def test_tape_says_what_forward_does_with_a_weight_only_an_unchecked_output_reads(tmp_path):
    """F8: Wya and by feed yt_pred alone, an output rnn_cell_backward takes no gradient of: forward reads them, and
    the tape's gradient through the checked a_next is 0; before, "the tape saw no use of params['Wya']"."""
    f = student(tmp_path, RNN.replace("DWAX", "dtanh @ xt.T"))
    p = run_here("check", f"{f}::rnn_cell", "--input-shape", "3,4;5,4", "--init", init(3), "--tape")
    text = both(p)
    assert p.returncode == 0, text
    assert "saw no use of params['Wya']" not in text and "saw no use of params['by']" not in text, text
    for k in ("Wya", "by"):
        assert (f"forward reads params['{k}'], but only for what the checked output does not depend on (an output "
                f"backward takes no upstream gradient for, such as yt_pred beside a_next, or a value forward "
                f"discards): the tape's d{k} is 0") in text, text
    assert "params['Wax']" not in text, text  # the weights a_next reads get no such note


def test_tape_still_says_no_use_of_a_weight_forward_never_reads(tmp_path):
    """The other case of the same note: U is never read by forward."""
    f = student(tmp_path, RNN)
    p = run_here("check", f"{f}::Unused", "--input-shape", "2,4", "--tape")
    text = both(p)
    assert "the tape saw no use of params['U'] in forward" in text, text
    assert "forward reads params['U']" not in text, text


def test_a_weight_gradient_with_a_square_input_untransposed_is_named(tmp_path):
    """F13: dWax = dtanh @ xt (xt square, 3 x 3) is named as linear_backward's dW = dZ @ A_prev is, by the same
    rule (diagnose._inner_weight_signature); before, "no known bug pattern"."""
    f = student(tmp_path, RNN.replace("DWAX", "dtanh @ xt"))
    p = run_here("check", f"{f}::rnn_cell", "--input-shape", "3,3;5,3", "--init", init(3))
    text = both(p)
    assert p.returncode == 1, text
    assert "FAIL: rnn_cell: gradient mismatch in dWax." in text, text
    assert ("dWax multiplies the gradient at the product by the transposed weight: it is d @ xt where d @ xt.T is "
            "due") in text and "dWax = d @ xt.T, not d @ xt." in text, text
    assert "no known bug pattern" not in text, text


def test_the_right_pair_at_a_square_input_passes(tmp_path):
    """The new rule names a failing gradient only: the right dWax at the same square xt passes."""
    f = student(tmp_path, RNN.replace("DWAX", "dtanh @ xt.T"))
    p = run_here("check", f"{f}::rnn_cell", "--input-shape", "3,3;5,3", "--init", init(3))
    assert p.returncode == 0, both(p)
