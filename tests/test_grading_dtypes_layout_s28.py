"""redteam28 F6: the example assignment's dtypes test compared the student's gradients with the reference's values in
the student's own layout, so honest layouts that every gradient test and ``gradcheck check`` accept (a weight stored
(in, out), the same built by the first forward, a bias of shape (1, out)) lost its 2 points with a wrong diagnosis
("dW is transposed ... swap the factors of the product"; "db has shape (1, 3), expected (3,), the shape of b" of a
(1, 3) b). ``checks.dtypes`` now compares each ``d<key>`` in the reference's layout, as ``layer_gradients`` does."""

import csv
from pathlib import Path

import pytest

from gradcheck.grading.runner import grade_batch
from gradcheck.sandbox import support

ASSIGN = Path(__file__).resolve().parents[1] / "assignments" / "linear_relu_ce"
SOLUTION = (ASSIGN / "solution" / "layers.py").read_text()
LINEAR = SOLUTION[SOLUTION.index("class Linear"):SOLUTION.index("class ReLU")]

EAGER = '''class Linear:
    """Y = X @ W + b, W (in, out)."""

    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.W = rng.standard_normal((in_features, out_features)) / np.sqrt(in_features)
        self.b = np.zeros(out_features)
        self.dW, self.db = None, None

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW = self.X.T @ dY
        self.db = dY.sum(axis=0)
        return dY @ self.W.T


'''
LAZY = '''class Linear:
    """Y = X @ W + b, W (in, out), built by the first forward (Keras style)."""

    def __init__(self, in_features, out_features, rng=None):
        self.out_features, self.rng = out_features, np.random.default_rng(rng)
        self.W, self.b, self.dW, self.db = None, None, None, None

    def forward(self, X):
        if self.W is None:
            self.W = self.rng.standard_normal((X.shape[1], self.out_features)) / np.sqrt(X.shape[1])
            self.b = np.zeros(self.out_features)
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW = self.X.T @ dY
        self.db = dY.sum(axis=0)
        return dY @ self.W.T


'''
ROW_BIAS = '''class Linear:
    """Y = X @ W.T + b, W (out, in), b (1, out) as a row."""

    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        k = 1.0 / np.sqrt(in_features)
        self.params = {"W": rng.uniform(-k, k, size=(out_features, in_features)), "b": np.zeros((1, out_features))}
        self.grads = {}

    def forward(self, X):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0, keepdims=True)
        return dY @ self.params["W"]


'''


def test_honest_layouts_keep_the_dtypes_points(tmp_path):
    if support()[0] == "none":
        pytest.skip(f"no namespaces here: {support()[1]}")
    assert SOLUTION.count(LINEAR) == 1
    subs = tmp_path / "subs"
    for name, linear in (("solution", LINEAR), ("eager_attr", EAGER), ("lazy_attr", LAZY), ("row_bias", ROW_BIAS)):
        (subs / name).mkdir(parents=True)
        (subs / name / "layers.py").write_text(SOLUTION.replace(LINEAR, linear))
    res = grade_batch(subs, ASSIGN / "tests", tmp_path / "out", workers=2, seed=5, timeout=10.0, progress=False)
    rows = {r["submission"]: r for r in csv.DictReader(open(tmp_path / "out" / "gradebook.csv", encoding="utf-8"))}
    part = "All layers: outputs and gradients are float64"
    assert {n: rows[n][part] for n in rows} == {n: "2" for n in ("solution", "eager_attr", "lazy_attr", "row_bias")}
    assert {s.name: s.score for s in res.submissions} == {n: 28.0 for n in rows}
