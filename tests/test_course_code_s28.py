"""Session 28 (fixs28): tester28s ran public course code through ``gradcheck check``.

Each test writes the published code's pattern as a small student-style file: Georgia Tech CS7643 A2's layers
(``backward(dout)`` returns nothing and sets ``self.dx``, ``self.dw``, ``self.db``), tinynn's weights built by the
first forward into ``self.params = {p: None ...}``, a float16 cast in float32 code's backward.
"""

from test_cli import both, run_here, student

FLOAT32_DENSE = """
import numpy as np

class Dense:
    def __init__(self, num_in, num_out):
        rng = np.random.default_rng(0)
        self.params = {"w": rng.uniform(-0.5, 0.5, (num_in, num_out)).astype(np.float32),
                       "b": np.zeros(num_out, dtype=np.float32)}
        self.grads = {}

    def forward(self, X):
        self.X = X
        return X @ self.params["w"] + self.params["b"]

    def backward(self, grad):
        self.grads["w"] = (self.X.T @ grad){cast}
        self.grads["b"] = np.sum(grad, axis=0)
        return grad @ self.params["w"].T
"""


def test_a_float16_cast_in_float32_code_keeps_its_fail_on_the_float64_copy(tmp_path):
    """Was PASS (tn-dense-dw-f16): the copy wrote the student's float16 cast float64 with the file's float32."""
    args = ["--input-shape", "4,5", "--init", '{"num_in": 5, "num_out": 3}']
    f = student(tmp_path, FLOAT32_DENSE.replace("{cast}", ".astype(np.float16)"))
    p = run_here("check", f"{f}::Dense", *args)
    text = both(p)
    assert p.returncode == 1, text
    assert "Dense was checked on a copy of its files with those dtypes written float64" in text, text
    assert "FAIL: Dense: gradient mismatch in dw." in text and "backward returns dw as float16" in text, text
    ok = student(tmp_path, FLOAT32_DENSE.replace("{cast}", ".astype(np.float32)"), "ok.py")
    p = run_here("check", f"{ok}::Dense", *args)
    assert p.returncode == 0 and "PASS: Dense (its float32 code checked on a float64 copy" in both(p), both(p)
