"""A parameter's gradient given as one number names the shape expected and the sum that makes it (fixn22 #4)."""

import textwrap

import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck.errors import GradientShapeError
from gradcheck.sandbox import Sandbox

SOURCE = textwrap.dedent("""
    import numpy as np

    class Linear:
        def __init__(self, in_features, out_features):
            rng = np.random.default_rng(1)
            self.params = {"W": rng.normal(size=(out_features, in_features)), "b": np.zeros(out_features)}
            self.grads = {}

        def forward(self, X, training=False):
            self.X = X
            return X @ self.params["W"].T + self.params["b"]

        def backward(self, dY):
            self.grads["W"] = dY.T @ self.X
            self.grads["b"] = DB
            return dY @ self.params["W"]
""")


@pytest.mark.parametrize("db, needle", [
    ("dY.sum()", r"expected a numpy ndarray of b's shape \(3,\): sum over the batch axis only, db = "
                 r"dY.sum\(axis=0\), not over every axis"),
    ("float(dY.mean())", r"of b's shape \(3,\)"),
])
def test_db_as_one_number_names_the_shape_and_the_axis(tmp_path, db, needle):
    f = tmp_path / "student.py"
    f.write_text(SOURCE.replace("DB", db))
    with Sandbox(files={"student.py": str(f)}, timeout=10) as sb:
        layer = sb.load_layer("student.py", "Linear", {"in_features": 5, "out_features": 3})
        with pytest.raises(GradientShapeError, match=needle):
            check_layer(layer, np.random.default_rng(0).standard_normal((4, 5)), twin=None)
