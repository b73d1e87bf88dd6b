"""Session 19's tester's findings (tester19s, fixer fixs19) checked through the CLI in this process: a GLU
whose gradients are named gA, gB (``g<Name>``, one row of :data:`gradcheck._adapters.GRAD_NAMES`)."""

from test_cli import both, run_here, student

GLU = """
import numpy as np

class GLU:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.A = rng.normal(size=(5, 3))
        self.B = rng.normal(size=(5, 3))

    def forward(self, X):
        self.X, self.a = X, X @ self.A
        self.s = 1 / (1 + np.exp(-(X @ self.B)))
        return self.a * self.s

    def backward(self, dY):
        da, db = dY * self.s, dY * self.a * self.s * (1 - self.s)
        self.gA, self.gB = self.X.T @ da, self.X.T @ db
        return da @ self.A.T + db @ self.B.T

class GLUSwapped(GLU):
    def backward(self, dY):
        dX = super().backward(dY)
        self.gA, self.gB = self.gB, self.gA
        return dX
"""


def test_g_name_is_the_gradient_of_its_weight(tmp_path):
    """gA and gB are read as the gradients of A and B alike (was: A a parameter with no gradient, B's gradient
    unknown, FAIL), so the right layer passes and the swapped one fails on both."""
    f = student(tmp_path, GLU)
    p = run_here("check", f"{f}::GLU", "--input-shape", "4,5")
    text = both(p)
    assert p.returncode == 0, text
    assert "protocol: attribute style (A/gA, B/gB)" in text and "PASS: GLU: every gradient (dX, dA, dB)" in text
    assert "no gradient" not in text and "cannot tell" not in text
    p = run_here("check", f"{f}::GLUSwapped", "--input-shape", "4,5")
    text = both(p)
    assert p.returncode == 1 and "gradient mismatch in dA, dB" in text, text


def test_pieces_joined_in_the_wrong_order_are_named():
    """SplitHeadsSwap's dX = [d2 * (1 - t**2), d1] where [d1, d2 * (1 - t**2)] is due: the correct gradient rolled
    along axis 1, named as pieces joined in the wrong order (was: "no transpose of its axes reproduces it")."""
    import numpy as np

    from gradcheck.compare import close
    from gradcheck.diagnose import _permutation

    n = np.random.default_rng(0).standard_normal((4, 6))
    code, fields = _permutation(np.concatenate([n[:, 3:], n[:, :3]], axis=1), n, lambda a, b: close(a, b, 1e-9))
    assert code == "permuted" and "its last 3 of 6 entries along axis 1 come first" in fields["how"]
    assert "np.concatenate([b, a], axis=1) where [a, b] is due" in fields["how"]
