"""A class whose ``backward(dY)`` returns ``(dX, dW, db)`` (the session-9 tester's V11c; gradcheck/_adapters.py
``ReturnedGradients``). Before, ``gradcheck check`` said "wrong result (exit 1) ... gave dX as a tuple". Now a
tuple of one gradient per input, then one per weight in the order the class defines them (CS231n's
``affine_backward`` and PyTorch's ``autograd.Function.backward`` return theirs so), is read as those gradients and
checked, the header saying how; a tuple that does not line up is a protocol error (exit 3) saying what came back and
what was expected."""

import json

import pytest
from test_cli import both, run, run_here, student

LINEAR = """
import numpy as np

class Linear:
    def __init__(self, n_in=5, n_out=3):
        rng = np.random.default_rng(0)
        self.W = 0.5 * rng.standard_normal((n_in, n_out))
        self.b = rng.standard_normal(n_out)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        return {RETURN}
"""
RIGHT = "dY @ self.W.T, self.X.T @ dY, dY.sum(axis=0)"

PARAMS = """
import numpy as np

class Linear:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((5, 3)), "b": rng.standard_normal(3)}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        return dY @ self.params["W"].T, self.X.T @ dY, {DB}
"""

RNN = """
import numpy as np

class Cell:
    def __init__(self):
        rng = np.random.default_rng(1)
        self.Wx, self.Wh = 0.5 * rng.standard_normal((4, 4)), 0.5 * rng.standard_normal((4, 4))

    def forward(self, x, h):
        self.x, self.h = x, h
        self.out = np.tanh(x @ self.Wx + h @ self.Wh)
        return self.out

    def backward(self, dY):
        dz = dY * (1 - self.out ** 2)
        return {RETURN}
"""


def check(f, cls="Linear", shape="4,5", *extra, through=run_here):
    return through("check", f"{f}::{cls}", "--input-shape", shape, *extra)


def test_attribute_layer_returning_its_weights_gradients_is_checked(tmp_path):
    f = student(tmp_path, LINEAR.replace("{RETURN}", RIGHT))
    p = check(f, "Linear", "4,5", "--json", tmp_path / "d.json", through=run)  # the console script
    t = both(p)
    assert p.returncode == 0, t
    assert ("protocol: backward(dY) -> (dX, dW, db), read as one gradient per input, then one per weight in the "
            "order the class defines them (W (5, 3), b (3,)), as a CS231n backward and PyTorch's autograd.Function "
            "return them (gradcheck's own protocol: backward returns dX alone and stores self.dW)") in t, t
    assert "PASS: Linear: every gradient (dX, dW, db) matches" in t, t
    assert json.loads((tmp_path / "d.json").read_text())["protocol"]["protocol"] == "returned"


@pytest.mark.parametrize("ret, words", [
    ("dY @ self.W.T, self.X.T @ dY, dY.mean(axis=0)", "db is the mean over the batch, not the sum"),
    ("dY @ self.W.T, 2 * (self.X.T @ dY), dY.sum(axis=0)", "dW is 2 times the correct gradient"),
])
def test_a_wrong_returned_weight_gradient_fails_by_name(tmp_path, ret, words):
    f = student(tmp_path, LINEAR.replace("{RETURN}", ret))
    p = check(f)
    assert p.returncode == 1, both(p)
    assert words in both(p), both(p)


def test_params_dict_layer_returning_its_weights_gradients(tmp_path):
    good = check(student(tmp_path, PARAMS.replace("{DB}", "dY.sum(axis=0)"), "good.py"))
    assert good.returncode == 0 and "PASS: Linear: every gradient (dX, dW, db) matches" in both(good), both(good)
    bad = check(student(tmp_path, PARAMS.replace("{DB}", "-dY.sum(axis=0)"), "bad.py"))
    assert bad.returncode == 1 and "db has the wrong sign" in both(bad), both(bad)


def test_two_inputs_and_same_shaped_weights_say_how_they_were_paired(tmp_path):
    right = "dz @ self.Wx.T, dz @ self.Wh.T, self.x.T @ dz, self.h.T @ dz"
    p = check(student(tmp_path, RNN.replace("{RETURN}", right), "good.py"), "Cell", "3,4;3,4")
    t = both(p)
    assert p.returncode == 0, t
    assert "backward(dY) -> (dx, dh, dWx, dWh)" in t and "(Wx (4, 4), Wh (4, 4))" in t, t
    assert "Wx and Wh have the same shape: paired by that order" in t, t
    swapped = "dz @ self.Wx.T, dz @ self.Wh.T, self.h.T @ dz, self.x.T @ dz"
    p = check(student(tmp_path, RNN.replace("{RETURN}", swapped), "bad.py"), "Cell", "3,4;3,4")
    assert p.returncode == 1, both(p)
    assert ("dWx holds the gradient of Wh and vice versa: backward returns them in the wrong order; return them in "
            "the order the class defines its weights in") in both(p), both(p)


@pytest.mark.parametrize("ret, came, want", [
    ("dY @ self.W.T, dY", "a tuple of 2 arrays ((4, 5), (4, 3))",
     "the tuple (dX, dW, db) of shapes (4, 5), (5, 3), (3,)"),
    ("[dY @ self.W.T, dY.sum(axis=0), dY.sum(axis=0)]", "a list of 3 arrays ((4, 5), (3,), (3,))",
     "one per weight in the order the class defines them (W, b)"),
    ("dY @ self.W.T, self.X.T @ dY, 'db'", "a tuple of 3 items ((4, 5), (5, 3), str)", "expected dX alone (shape (4, 5))"),
])
def test_a_tuple_that_does_not_line_up_is_a_protocol_error(tmp_path, ret, came, want):
    p = check(student(tmp_path, LINEAR.replace("{RETURN}", ret)))
    t = both(p)
    assert p.returncode == 3, t
    assert f"Linear.backward(dY) returned {came}; gradcheck expected dX alone (shape (4, 5))" in t, t
    assert want in t and "Traceback" not in t, t


STORES = LINEAR.replace("        return {RETURN}", """        self.dW, self.db = {STORED}
        return {RETURN}""")
GRADS = PARAMS.replace("        return dY @ self.params[\"W\"].T, self.X.T @ dY, {DB}", """        self.grads = {"W": {STORED_W}, "b": dY.sum(axis=0)}
        return dY @ self.params["W"].T, self.X.T @ dY, dY.sum(axis=0)""")


@pytest.mark.parametrize("src, words, code", [
    # X18: the stored gradient (the optimizer's) wrong, the returned one right: was a PASS
    (STORES.replace("{STORED}", "2 * (self.X.T @ dY), dY.sum(axis=0)").replace("{RETURN}", RIGHT),
     "backward stores self.dW and returns dW, and they differ: the check reads the stored self.dW", 1),
    (GRADS.replace("{STORED_W}", "2 * (self.X.T @ dY)"),
     "backward stores grads['W'] and returns dW, and they differ: the check reads the stored grads['W']", 1),
    # the returned one wrong, the stored one right
    (STORES.replace("{STORED}", "self.X.T @ dY, dY.sum(axis=0)").replace("{RETURN}", RIGHT.replace("dY.sum(", "dY.mean(")),
     "backward stores self.db and returns db, and they differ: the check reads the returned db", 1),
    # the correct twin: both right (computed apart) and nothing said
    (STORES.replace("{STORED}", "self.X.T @ dY, dY.sum(axis=0)").replace("{RETURN}", RIGHT), "", 0),
    (GRADS.replace("{STORED_W}", "self.X.T @ dY"), "", 0),
])
def test_gradients_both_stored_and_returned_are_both_checked(tmp_path, src, words, code):
    p = check(student(tmp_path, src))
    t = both(p)
    assert p.returncode == code, t
    if code:
        assert " ".join(words.split()) in " ".join(t.split()) and "(both must be right)" in " ".join(t.split()), t
        assert "FAIL: Linear: gradient mismatch in" in t, t
    else:
        assert "PASS: Linear: every gradient (dX, dW, db) matches" in t and "they differ" not in t, t


@pytest.mark.parametrize("src, line", [
    (STORES.replace("{STORED}", "2 * (self.X.T @ dY), dY.sum(axis=0)").replace("{RETURN}", RIGHT),
     "FAIL: Linear: gradient mismatch in dW (dW is the stored self.dW, not the dW backward returns (the two differ))."),
    (GRADS.replace("{STORED_W}", "2 * (self.X.T @ dY)"),
     "FAIL: Linear: gradient mismatch in dW (dW is the stored grads['W'], not the dW backward returns (the two "
     "differ))."),
    (STORES.replace("{STORED}", "self.X.T @ dY, dY.sum(axis=0)").replace("{RETURN}", RIGHT.replace("dY.sum(", "dY.mean(")),
     "FAIL: Linear: gradient mismatch in db (db is the db backward returns, not the stored self.db (the two differ))."),
    (STORES.replace("self.dW, self.db = {STORED}", "self.db = dY.mean(axis=0)").replace(
        "{RETURN}", "dY @ self.W.T, self.X.T @ dY"),
     "FAIL: Linear: gradient mismatch in db (db is the stored self.db (backward does not return db))."),
])
def test_the_fail_line_says_which_of_the_two_gradients_is_wrong(tmp_path, src, line):
    """X18: the header said which one was read, the FAIL line only "gradient mismatch in dW"."""
    p = check(student(tmp_path, src))
    assert p.returncode == 1 and line in both(p), both(p)


@pytest.mark.parametrize("ret, code, words", [
    # X9: every gradient's shape differs, so the items pair by shape whatever their order (was exit 3)
    ("dY @ self.W.T, dY.sum(axis=0), self.X.T @ dY", 0, "PASS: Linear: every gradient (dX, dW, db) matches"),
    ("[self.X.T @ dY, dY.sum(axis=0), dY @ self.W.T]", 0, "PASS: Linear: every gradient (dX, dW, db) matches"),
    ("dY @ self.W.T, dY.mean(axis=0), self.X.T @ dY", 1, "db is the mean over the batch, not the sum"),
    # a forgotten gradient is a wrong result naming it (was exit 3)
    ("dY @ self.W.T, self.X.T @ dY", 1, "returned None for db; expected an array of shape (3,)"),
    ("dY @ self.W.T, None, dY.sum(axis=0)", 1, "returned None for dW; expected an array of shape (5, 3)"),
])
def test_items_with_distinct_shapes_pair_by_shape(tmp_path, ret, code, words):
    p = check(student(tmp_path, LINEAR.replace("{RETURN}", ret)))
    t = " ".join(both(p).split())
    assert p.returncode == code, t
    assert words in t, t
    order = "dW, db, dX" if ret.startswith("[") else "dX, None, db" if "None" in ret else \
        "dX, db, dW" if "sum" in ret.split(",")[1] or "mean" in ret.split(",")[1] else "dX, dW"
    assert f"backward returns ({order}): paired by shape, every gradient's shape differing" in t, t


def test_a_gradient_not_returned_but_stored_is_read_from_where_it_is_stored(tmp_path):
    src = STORES.replace("self.dW, self.db = {STORED}", "self.db = dY.mean(axis=0)  # BUG").replace(
        "{RETURN}", "dY @ self.W.T, self.X.T @ dY")
    p = check(student(tmp_path, src))
    t = " ".join(both(p).split())
    assert p.returncode == 1, t
    assert "db not returned; the check reads the stored self.db in its place" in t, t
    assert "db is the mean over the batch, not the sum" in t, t
