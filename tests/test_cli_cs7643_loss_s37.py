"""CS7643's SoftmaxCrossEntropy under ``gradcheck check --loss`` (corpus37 F2).

Its forward returns ``(probs, loss)`` and its ``backward()`` returns nothing and stores dL/dx in
``self.dx``, as CS7643's layers store dX (which ``check`` reads already). A correct one got a
wrong FAIL: "gave L as a tuple" (exit 1), and with forward returning the loss alone "backward()
returned None ... Did you forget the return statement?" (exit 1). Now L is the tuple's one
number and dL/dy_pred is read from ``self.dx``; a tuple in which not exactly one item is a
number is exit 3 naming the layout, never a verdict.
"""

import pytest
from test_cli import check_source

CS7643 = """
import numpy as np

class SoftmaxCrossEntropy:
    def __init__(self):
        self.dx = None
        self.cache = None

    def forward(self, x, y):
        probs = np.exp(x - np.max(x, axis=1, keepdims=True))
        probs /= np.sum(probs, axis=1, keepdims=True)
        N, _ = x.shape
        loss = -np.sum(np.log(probs[np.arange(N), y])) / N
        self.cache = (probs, y, N)
        return probs, loss

    def backward(self):
        probs, y, N = self.cache
        dx = probs.copy()
        dx[np.arange(N), y] -= 1
        dx /= N{bug}
        self.dx = dx


class LossAlone(SoftmaxCrossEntropy):
    def forward(self, x, y):
        return super().forward(x, y)[1]


class TwoNumbers(SoftmaxCrossEntropy):
    def forward(self, x, y):
        probs, loss = super().forward(x, y)
        return loss, 2.0 * loss


class NoNumber(SoftmaxCrossEntropy):
    def forward(self, x, y):
        probs, loss = super().forward(x, y)
        return probs, probs
"""
ARGS = ("--input-shape", "4,5", "--loss", "--targets", "labels")


@pytest.mark.parametrize("name", ["SoftmaxCrossEntropy", "LossAlone"])
def test_a_correct_cs7643_loss_passes_read_from_its_tuple_and_self_dx(tmp_path, name):
    code, text = check_source(tmp_path, CS7643.format(bug=""), name, *ARGS)
    assert code == 0, text  # before: exit 1, "gave L as a tuple" / "backward() returned None"
    assert f"PASS: {name}: dL/dy_pred matches" in text
    assert "stores dL/dy_pred in self.dx (as CS7643's layers do): it is read there" in text
    if name == "SoftmaxCrossEntropy":
        assert ("forward returns 2 items (an array of shape (4, 5), a number): L is item 2, the one number "
                "(CS7643's (probs, loss))") in text


@pytest.mark.parametrize("name", ["SoftmaxCrossEntropy", "LossAlone"])
def test_a_planted_bug_in_self_dx_fails_naming_dy_pred(tmp_path, name):
    # dx not divided by N (a factor 4 on 4 samples): the stored self.dx is what is compared
    code, text = check_source(tmp_path, CS7643.format(bug="\n        dx *= N"), name, *ARGS)
    assert code == 1, text
    assert f"FAIL: {name}" in text and "dy_pred" in text


@pytest.mark.parametrize("name,says", [("TwoNumbers", "here 2 are"), ("NoNumber", "here none is")])
def test_a_tuple_without_exactly_one_number_is_exit_3_naming_the_layout(tmp_path, name, says):
    code, text = check_source(tmp_path, CS7643.format(bug=""), name, *ARGS)
    assert code == 3, text  # before: exit 1, "gave L as a tuple", a wrong result
    assert f"{name}.forward returns a tuple of 2 items" in text
    assert "reads the loss L from a tuple only when exactly one item is a number" in text and says in text
    assert "FAIL" not in text
