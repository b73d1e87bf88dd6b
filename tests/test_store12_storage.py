"""Session 12 (store12): where students keep weights and gradients, read as they wrote them (Z11, NoBias, Y23, Y25,
Y6, Y12, Y16, Z15); the planted bugs are also in tests/buggy_layers/styles.py."""

from test_cli import both, run, student

SWAP = """

class Scale:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.gamma, self.beta = rng.standard_normal(3), rng.standard_normal(3)
    def forward(self, X):
        self.X = X
        return X * self.gamma + self.beta
    def backward(self, dY):
        self.dbeta, self.dgamma = (self.X * dY).sum(0), dY.sum(0)
        return dY * self.gamma
"""


def test_a_swap_in_attributes_is_named_by_the_students_attributes(tmp_path):
    """Z11: the diagnosis said grads['gamma'] = dgamma where the student wrote self.dgamma."""
    p = run("check", f"{student(tmp_path, SWAP, 'z11.py')}::Scale", "--input-shape", "6,3")
    out = both(p)
    assert p.returncode == 1, out
    assert "self.dgamma holds the gradient of beta and vice versa" in out, out
    assert "self.dgamma = dgamma, self.dbeta = dbeta" in out and "grads[" not in out, out
