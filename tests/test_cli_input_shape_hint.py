"""The shape --input-shape gave, named when forward raises numpy's shape error (session 8)."""

from test_cli import both, run, student


def test_a_shape_error_in_forward_points_at_input_shape_too(tmp_path):
    """A conv for 2 channels checked with 3 (a new-user tester's U8, session 8): numpy's shape error
    alone read as the student's bug; the message now says which shape --input-shape gave."""
    f = student(tmp_path, """
    import numpy as np

    class Linear:
        def __init__(self, in_features, out_features):
            self.W = np.random.default_rng(0).standard_normal((in_features, out_features))

        def forward(self, X, training=False):
            self.X = X
            return X @ self.W

        def backward(self, dY):
            self.dW = self.X.T @ dY
            return dY @ self.W.T
    """)
    p = run("check", f"{f}::Linear", "--input-shape", "8,4", "--init", '{"in_features": 5, "out_features": 3}')
    text = both(p)
    assert p.returncode == 3, text
    assert "X had the shape --input-shape gave, 8,4" in text and "change --input-shape" in text
