"""grade45: grading reads a log's small eps as ``gradcheck check`` does (gradcheck/_log_eps.py). Deep Learning from
Scratch's verbatim ``cross_entropy_error``, ``-sum(log(y[..., t] + 1e-7)) / N``, beside the book's backward (the
gradient of ``-log(y)``) scored 0/4 for the right TwoLayerNet and 0/2 for a CS231n ``softmax_loss`` written with the
same eps: at the grader's point tiny probabilities make the eps move the loss's derivative beyond the 1e-6 rtol. Now
each gradient that matched the reference and fails central differences only through the eps is confirmed on the copy
without it, said in a note; a real bug beside it (db2) and a backward wrong through an eps of its own still lose
their points. One grading run (the grader is CPU-heavy)."""

import json

import pytest
from test_model_gradients_s45 import DLFS, GRADE_TEST

FUNCTIONS = """
import numpy as np

def cross_entropy_error(y, t):
    return -np.sum(np.log(y[np.arange(len(t)), t] + 1e-7)) / len(t)
"""
LOSSES = """
import numpy as np

def _p(x):
    p = np.exp(x - x.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)

def softmax_loss(x, y):
    N, p = x.shape[0], _p(x)
    loss = -np.mean(np.log(p[np.arange(N), y] + 1e-7))
    dx = p.copy()
    dx[np.arange(N), y] -= 1.0
    return loss, dx / N

def softmax_loss_denominator(x, y):
    N, p = x.shape[0], _p(x)
    loss = -np.mean(np.log(p[np.arange(N), y] + 1e-7))
    dp = np.zeros_like(p)
    dp[np.arange(N), y] = -1.0 / (p[np.arange(N), y] + 1e-2) / N
    return loss, p * (dp - (dp * p).sum(axis=1, keepdims=True))
"""
def _relu(text: str) -> str:
    """``text`` (the model test's tanh network) with a ReLU hidden layer, as the book's: at inputs of size 8 its
    probabilities get small, where the eps matters (eps/y well above the grader's rtol 1e-6)."""
    out = text.replace("np.tanh(", "np.maximum(0, ").replace("(1 - self.h ** 2)", "(self.h > 0)")
    out = out.replace("(1 - h ** 2)", "(h > 0)").replace("rng.standard_normal((5, 4))", "8 * np.random.default_rng(5).standard_normal((5, 4))")
    assert out.count("np.maximum(0, ") == 2 - ("Ref" in text) and "tanh" not in out and "h ** 2" not in out
    return out


TESTS = _relu(GRADE_TEST + """

@pytest.mark.points(4)
def test_model_db2(student, grade, rng):
    \"\"\"TwoLayerNet.gradient, db2 a mean\"\"\"
    net = student.layer("two_layer_net_bug.py", "TwoLayerNet", targets="labels:3@5", input_size=4, hidden_size=5,
                        output_size=3)
    grade.layer_gradients(net, rng.standard_normal((5, 4)), Ref(net.targets), points=4)
""") + """

def _loss(student, grade, rng, name):
    import manualprop as mp
    from gradcheck.grading import class_labels

    x, y = 3 * rng.standard_normal((8, 5)), class_labels(rng, 8, 5)
    grade.loss_gradient(student.loss("layers.py", name), y, x, mp.SoftmaxCrossEntropy(), points=2)


@pytest.mark.points(2)
def test_loss(student, grade, rng):
    \"\"\"softmax_loss\"\"\"
    _loss(student, grade, rng, "softmax_loss")


@pytest.mark.points(2)
def test_loss_denominator(student, grade, rng):
    \"\"\"softmax_loss_denominator\"\"\"
    _loss(student, grade, rng, "softmax_loss_denominator")
"""


def test_log_eps_is_read_as_check_reads_it_in_grading(tmp_path):
    from gradcheck.grading.runner import grade_submission

    sub = tmp_path / "sub"
    (sub / "common").mkdir(parents=True)
    (sub / "common" / "__init__.py").write_text("")
    (sub / "common" / "functions.py").write_text(FUNCTIONS)
    net = _relu(DLFS).replace("import numpy as np", "import numpy as np\nfrom common.functions import cross_entropy_error")
    net = net.replace("return -np.sum(np.log(y[np.arange(len(t)), t])) / len(t)", "return cross_entropy_error(y, t)")
    assert "cross_entropy_error(y, t)" in net
    (sub / "two_layer_net.py").write_text(net.replace("BIAS", "dy.sum(0)"))
    (sub / "two_layer_net_bug.py").write_text(net.replace("BIAS", "dy.mean(0)"))
    (sub / "layers.py").write_text(LOSSES)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(TESTS)
    r = grade_submission(sub, tmp_path / "tests", tmp_path / "out", seed=1)
    got = {t["name"]: t for t in json.loads((tmp_path / "out" / "results.json").read_text())["tests"]}
    scores = {n: t["score"] for n, t in got.items()}
    assert r.status == "graded"
    assert scores == {"TwoLayerNet.gradient": 4.0, "TwoLayerNet.gradient, db2 a mean": 3.0, "softmax_loss": 2.0,
                      "softmax_loss_denominator": 0.0}, {n: t["output"][:600] for n, t in got.items()}
    for n in ("TwoLayerNet.gradient", "softmax_loss"):
        assert "with the 1e-07 removed from its log(y + 1e-07)" in got[n]["output"], got[n]["output"]
    assert "- `db2`: **wrong**" in got["TwoLayerNet.gradient, db2 a mean"]["output"]
    assert "dW1, db1, dW2: confirmed by central differences" in got["TwoLayerNet.gradient, db2 a mean"]["output"]


@pytest.mark.parametrize("source", [
    "EPS = 0.05\n\ndef helper(z):\n    EPS = 1e-7\n    return z + EPS\n\ndef loss(p):\n    return -np.log(p + EPS)\n",
    "eps = 1e-7\n\ndef loss(p, eps=0.05):\n    return -np.log(p + eps)\n",
    "EPS = 1e-7\nEPS += 0.05\n\ndef loss(p):\n    return -np.log(p + EPS)\n",
])
def test_a_name_bound_twice_is_no_small_constant(source):
    """verify45d F2: a log's eps read through a name bound elsewhere to another value (a function's local, a
    parameter's default, an augmented assignment) was taken for the small one and removed, so the eps-free copy
    passed a forward computing another loss (0.45 times the reference's): full marks where main gave 0/2."""
    from gradcheck._log_eps import eps_free_text

    assert eps_free_text("import numpy as np\n" + source) is None


def test_a_name_bound_once_is_still_read():
    from gradcheck._log_eps import eps_free_text

    got = eps_free_text("import numpy as np\nEPS = 1e-7\n\ndef loss(p):\n    return -np.log(p + EPS)\n")
    assert got is not None and got[1] == [1e-7] and "np.log(p)" in got[0]
