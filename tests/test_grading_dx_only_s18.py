"""A Linear of examples/seed_style_linear.py's style in a graded assignment (tester18g MEDIUM 5).

``self.W``/``self.b`` and a backward returning dX only: the grader cannot set or grade parameters that have no
gradient, and said "Linear's parameters are none; the assignment expects W, b (... or attributes self.W and
self.b)" of a layer holding exactly those. The message now says what is missing: their gradients.
"""

from pathlib import Path

import numpy as np
import pytest

from gradcheck.errors import StudentCodeError
from gradcheck.grading import checks
from gradcheck.sandbox import Sandbox
from manualprop import Linear as RefLinear

SEED_STYLE = Path(__file__).resolve().parents[1] / "examples" / "seed_style_linear.py"


SQUARE = """
import numpy as np

class LinInOut:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((4, 4))
        self.b = np.zeros(4)

    def forward(self, X):
        return X @ self.W + self.b

    def backward(self, dY):
        return dY @ self.W.T

class LinOutIn(LinInOut):
    def forward(self, X):
        return X @ self.W.T + self.b

    def backward(self, dY):
        return dY @ self.W

class LinOutInBiasSign(LinOutIn):
    def forward(self, X):
        return X @ self.W.T - self.b  # BUG

class LinInOutTanh(LinInOut):
    def forward(self, X):
        return np.tanh(X @ self.W + self.b)  # BUG: an activation the assignment's Linear has not
"""


def test_attribute_layer_without_gradients_is_told_what_is_missing(tmp_path):
    with Sandbox(files={"layers.py": str(SEED_STYLE)}, timeout=5, hostile=True) as sb:
        layer = sb.load_layer("layers.py", "Linear", {"in_features": 5, "out_features": 3})
        with pytest.raises(StudentCodeError) as err:
            checks.layer_gradients(layer, np.ones((4, 5)), RefLinear(5, 3, rng=0), numerical=False)
    msg = str(err.value)
    assert "parameters are none" not in msg, msg
    assert msg.startswith("Linear holds self.W, self.b but its backward stores no gradient for them "
                          "(no self.dW, self.db, nor a grads dict)"), msg


def test_forward_test_sets_the_weights_of_a_dx_only_layer_in_its_layout(tmp_path):
    """Session 20 (session 19's leftover 2): the forward test of a seed-style Linear (self.W used in forward, backward
    returning dX only) gave 0/2, the grader able to set weights only through params. It now sets them in the child in
    the student's layout, told by shape (the example's W (5, 3), the reference's (3, 5)) or, for a square W, by the
    forward itself, and says which; a correct forward earns its points, a buggy one still loses them."""
    sq = tmp_path / "sq.py"
    sq.write_text(SQUARE)
    X5, X4 = (np.random.default_rng(1).standard_normal(s) for s in ((4, 5), (6, 4)))
    got = {}
    with Sandbox(files={"layers.py": str(SEED_STYLE), "sq.py": str(sq)}, timeout=5, hostile=True) as sb:
        layer = sb.load_layer("layers.py", "Linear", {"in_features": 5, "out_features": 3})
        got["Linear"] = checks.layer_forward(layer, X5, RefLinear(5, 3, rng=0), points=2)
        for name in ("LinInOut", "LinOutIn", "LinOutInBiasSign", "LinInOutTanh"):
            got[name] = checks.layer_forward(sb.load_layer("sq.py", name, {}), X4, RefLinear(4, 4, rng=0), points=2)
    assert {k: v.fraction for k, v in got.items()} == {"Linear": 1.0, "LinInOut": 1.0, "LinOutIn": 1.0,
                                                       "LinOutInBiasSign": 0.0, "LinInOutTanh": 0.0}
    assert got["Linear"].notes == ["Linear.W has no gradient (backward returns dX only): the grader set it to its "
                                   "point in the layout (in, out) told by its shape, transposed from the reference's."]
    square = "told by forward (square: moving W[0, 1] moved one output column)"
    assert got["LinInOut"].notes == [f"LinInOut.W has no gradient (backward returns dX only): the grader set it to its "
                                     f"point in the layout (in, out) {square}, transposed from the reference's."]
    assert got["LinOutIn"].notes == [f"LinOutIn.W has no gradient (backward returns dX only): the grader set it to its "
                                     f"point in the layout (out, in) {square}."]
    assert "the output differs from the expected one" in got["LinOutInBiasSign"].markdown()
    assert "(out, in) told by forward" in got["LinOutInBiasSign"].markdown()


def test_the_header_says_the_layout_the_forward_test_uses(tmp_path):
    """The layout is told once (gradcheck._adapters._layout): by shape, and for a square W by forward; the header of
    ``gradcheck check`` says it as the grader's note does (in-process adapter, no sandbox)."""
    from gradcheck import _adapters

    ns = {}
    exec(compile(SQUARE, str(tmp_path / "sq.py"), "exec"), ns)  # noqa: S102 - the test's own layers
    X = np.random.default_rng(2).standard_normal((6, 4))
    texts = {n: _adapters.adapt(ns[n](), [X])[1]["text"] for n in ("LinInOut", "LinOutIn", "LinInOutTanh")}
    assert texts["LinInOut"].endswith("-> dX only; W (in, out, told by forward: square)"), texts
    assert texts["LinOutIn"].endswith("-> dX only; W (out, in, told by forward: square)"), texts
    assert texts["LinInOutTanh"].endswith("-> dX only; W (in, out, told by forward: square)"), texts
