"""Session 45's MEDIUM findings of the students' and staff's testers (builder medium45): each test failed
before its fix."""
import json

import pytest
from test_cli import both, run_here, student

from gradcheck.grading.runner import GRADER_ERROR, grade_submission


def test_grading_tests_that_do_not_import_tell_the_student_it_is_the_graders_side_and_not_final(tmp_path):
    """staff45 F3: a grading-test module failing to import (pytest exit 2) told every student "The autograder
    could not finish (pytest exit code 2); score 0", no word that it is not their fault nor that 0 is not final."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text("x = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "from ref_layerz import Conv\n\n\ndef test_a(student, grade):\n    'A'\n")
    res = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", unsafe_no_isolation=True)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res.status == GRADER_ERROR and data["extra_data"]["status"] == GRADER_ERROR
    out = data["output"]
    assert "a problem on the grader's side, not in your submission" in out, out
    assert "not final" in out and "pytest exit code 2" in out and "Course staff have the log" in out, out


TEMPORAL = """
import numpy as np


def temporal_softmax_loss(x, Y, mask, verbose=False):
    N, T, V = x.shape
    x_flat, y_flat, mask_flat = x.reshape(N * T, V), Y.reshape(N * T), mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat /= N
    dx_flat *= mask_flat[:, None]
    return loss, dx_flat.reshape(N, T, V)
"""
_MASK = [[1, 1, 0], [1, 0, 0]]


@pytest.mark.parametrize("y", ["y", "captions"])
def test_temporal_softmax_loss_with_integer_labels_in_init(tmp_path, y):
    """students45 F2: CS231n's temporal_softmax_loss(x, y, mask) with y in --init as the assignment's (N, T) integer
    array was given a float64 y (IndexError), and the message named no way out. A nested list of integers named like
    labels (y) is now an int64 array of a loss function's data; for another name the message names the way that
    works, --targets labels:C with the mask in --init (which is checked here to PASS)."""
    f = student(tmp_path, TEMPORAL.replace("Y", y), "rnn_layers.py")
    init = json.dumps({y: [[0, 1, 3], [2, 2, 0]], "mask": _MASK})
    p = run_here("check", f"{f}::temporal_softmax_loss", "--loss", "--input-shape", "2,3,4", "--init", init)
    text = both(p)
    if y == "y":
        assert p.returncode == 0 and "PASS: temporal_softmax_loss" in text, text
        return
    assert p.returncode == 3 and "IndexError" in text, text
    way = (f"{f}::temporal_softmax_loss --loss --input-shape 2,3,4 --targets labels:4 --init "
           f"'{json.dumps({'mask': _MASK})}'")
    assert "captions came from --init as a nested list of integers, a float64 array" in text, text
    assert f"leave it out of --init and draw it: gradcheck check {way}" in text, text
    p = run_here("check", *way.replace("'", "").split(" --init ")[0].split(), "--init", json.dumps({"mask": _MASK}))
    assert p.returncode == 0 and "PASS: temporal_softmax_loss" in both(p), both(p)


NG_RNN = """
import numpy as np


def rnn_cell_forward(xt, a_prev, parameters):
    a_next = np.tanh(parameters["Waa"] @ a_prev + parameters["Wax"] @ xt + parameters["ba"])
    return a_next, (a_next, a_prev, xt, parameters)


def rnn_forward(x, a0, parameters):
    n_x, m, T_x = x.shape
    a, a_next, caches = np.zeros((a0.shape[0], m, T_x)), a0, []
    for t in range(T_x):
        a_next, cache = rnn_cell_forward(x[:, :, t], a_next, parameters)
        a[:, :, t] = a_next
        caches.append(cache)
    return a, (caches, x)


def rnn_cell_backward(da_next, cache):
    a_next, a_prev, xt, parameters = cache
    dtanh = (1 - a_next ** 2) * da_next
    return {"dxt": parameters["Wax"].T @ dtanh, "da_prev": parameters["Waa"].T @ dtanh, "dWax": dtanh @ xt.T,
            "dWaa": dtanh @ a_prev.T, "dba": DBA}


def rnn_backward(da, caches):
    caches, x = caches
    n_a, m, T_x = da.shape
    dx, dWax, dWaa = np.zeros(x.shape), np.zeros((n_a, x.shape[0])), np.zeros((n_a, n_a))
    dba, da_prevt = np.zeros((n_a, 1)), np.zeros((n_a, m))
    for t in reversed(range(T_x)):
        g = rnn_cell_backward(da[:, :, t] + da_prevt, caches[t])
        dx[:, :, t], da_prevt = g["dxt"], g["da_prev"]
        dWax, dWaa, dba = dWax + g["dWax"], dWaa + g["dWaa"], dba + g["dba"]STEP
    return {"dx": dx, "da0": da_prevt, "dWax": dWax, "dWaa": dWaa, "dba": dba}
"""
_PARAMS = {"parameters": {"Wax": [[0.5, -0.3, 0.2], [0.1, 0.4, -0.6], [-0.2, 0.3, 0.1], [0.6, -0.1, 0.2],
                                  [0.3, 0.2, -0.4]],
                          "Waa": [[0.1 * ((i * 5 + j) % 7 - 3) for j in range(5)] for i in range(5)],
                          "ba": [[0.1], [-0.2], [0.05], [0.3], [-0.1]]}}


@pytest.mark.parametrize("bug", ["mean", "over_T"])
def test_andrew_ngs_rnn_reads_axis_1_as_the_batch(tmp_path, bug):
    """students45 F4: Course 5's rnn (x of shape (n_x, m, T_x), a0 (n_a, m)) whose db was averaged over the batch m
    was told "an extra 1/T (T = 4, the time steps on axis 1 of x (3, 4, 6))" with a fix for the (N, T, D) layout,
    db = dout.sum(axis=(0, 1)); a db divided by T_x (6) was only "a constant factor"."""
    dba = "np.mean(dtanh, axis=1, keepdims=True)" if bug == "mean" else "np.sum(dtanh, axis=1, keepdims=True)"
    f = student(tmp_path, NG_RNN.replace("DBA", dba).replace("STEP", " / T_x" if bug == "over_T" else ""), "rnn.py")
    p = run_here("check", f"{f}::rnn", "--input-shape", "3,4,6;5,4", "--init", json.dumps(_PARAMS))
    text = both(p)
    assert p.returncode == 1 and "FAIL: rnn: gradient mismatch in dba" in text, text
    assert "axis=(0, 1)" not in text and "time steps on axis 1" not in text, text
    said = ("a0 (5, 4) has x's axis-1 size 4 on its axis 1, where a state (n_a, m) holds the batch; Wax (5, 3) has "
            "x's axis-0 size 3 on its axis 1, where a weight (n_a, n_x) takes the features")
    if bug == "mean":
        assert ("dba is 4 times too small: an extra 1/4, the size of axis 1 of x (3, 4, 6), which holds the batch m "
                f"here, not the time steps ({said}: Andrew Ng's layout (n_x, m, T_x)") in text, text
    else:
        assert ("dba is 6 times too small: an extra 1/T_x (T_x = 6, the time steps on axis 2 of x (3, 4, 6), Andrew "
                f"Ng's layout (n_x, m, T_x): {said})") in text, text


def test_cs231n_temporal_affine_keeps_its_time_axis_reading():
    """students45 F4's other side: CS231n's temporal_affine (x (N, T, D), w (D, M)) whose db is divided by T is still
    read as the extra 1/T, its fix for the (N, T, D) layout, with what says that layout."""
    from buggy_layers import diagnose, first_code

    d = diagnose("tester18.py::taffinemeant")
    assert first_code(d) == "factor-inverse-time", d.sentence()
    assert ("the time steps on axis 1 of x (2, 3, 4), the (N, T, D) layout: w (4, 5) has x's axis-2 size 4 on its "
            "axis 0, where a weight (D, H) takes the features); a gradient summed over the time steps is not averaged "
            "over them; sum over axes 0 and 1 and do not divide (e.g. db = dout.sum(axis=(0, 1)))") in d.sentence()


MICROGRAD = """
import math


class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data, self.grad, self._prev, self._op = data, 0.0, set(_children), _op
        self._backward = lambda: None

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        self.grad = 1.0
        self._backward()
"""


def test_micrograd_value_is_out_of_scope_before_it_is_asked_for_its_data(tmp_path):
    """students45 F7: micrograd's ``::Value`` was first asked for --init '{"data": ...}', and given it, told scalar
    autograd graphs are outside what gradcheck checks; the out-of-scope message now comes first."""
    f = student(tmp_path, MICROGRAD, "engine.py")
    p = run_here("check", f"{f}::Value", "--input-shape", "3")
    text = both(p)
    assert p.returncode == 2, text
    assert "Value looks like a scalar autograd value (micrograd's Value" in text, text
    assert "only --init can give" not in text, text


def test_a_file_importing_a_chapter_file_gets_that_files_pardir_package(tmp_path):
    """students45 F8: ch05/wrap.py holding ``from two_layer_net import Sigmoid`` beside Deep Learning from Scratch's
    chapter file, whose ``sys.path.append(os.pardir)`` imports ``common``, did not import in the sandbox
    ("No module named 'common'"): only the checked file's own sys.path.append(os.pardir) was followed."""
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text("")
    (tmp_path / "common" / "functions.py").write_text(
        "import numpy as np\n\n\ndef sigmoid(x):\n    return 1 / (1 + np.exp(-x))\n")
    ch05 = tmp_path / "ch05"
    ch05.mkdir()
    (ch05 / "two_layer_net.py").write_text(
        "import sys, os\nsys.path.append(os.pardir)\nfrom common.functions import sigmoid\n\n\n"
        "class Sigmoid:\n    def forward(self, x):\n        self.out = sigmoid(x)\n        return self.out\n\n"
        "    def backward(self, dout):\n        return dout * (1.0 - self.out) * self.out\n")
    (ch05 / "wrap.py").write_text("from two_layer_net import Sigmoid\n\n\nclass Wrapped(Sigmoid):\n    pass\n")
    p = run_here("check", ch05 / "wrap.py::Wrapped", "--input-shape", "3,4", cwd=ch05)
    text = both(p)
    assert p.returncode == 0 and "PASS: Wrapped" in text, text
    assert "common" not in text, text


def test_a_backward_zeroing_dy_in_place_is_told_it_is_the_books_relu_and_harmless_there():
    """students45 F5 (LOW): Deep Learning from Scratch's Relu.backward as printed (``dout[self.mask] = 0; dx = dout``)
    gets exit 3 for writing into dY with no word that this is the book's code, harmless in its networks."""
    import numpy as np

    from gradcheck.sources import dY_written

    G = np.random.default_rng(0).standard_normal((6, 4))
    zeroed = np.where(G > 0, G, 0.0)
    text = str(dY_written("Relu", zeroed, G))
    assert "Relu.backward modified its upstream gradient dY in place" in text, text
    assert (f"Here it set {int((G <= 0).sum())} of 24 entries of dY to 0, as Deep Learning from Scratch's Relu.backward does as printed "
            "(dout[self.mask] = 0; dx = dout)") in text, text
    assert "Deep Learning from Scratch" not in str(dY_written("Relu", 2 * G, G))
    assert dY_written("Relu", G.copy(), G) is None
    assert "Deep Learning from Scratch" not in str(dY_written("Linear", np.zeros_like(G), G))  # all of dY zeroed
