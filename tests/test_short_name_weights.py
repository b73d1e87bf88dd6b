"""Session 13 (Z15 again): an array forward reads, whose change moves the output, with no gradient beside weights
with theirs, is a weight whose gradient backward forgot, whatever its name: a hidden bias ``bh`` beside W/dW and
b/db (a short lowercase name, once read as a constant buffer: PASS with a WARNING) FAILs. An array forward WRITES
(a scratch buffer, a running statistic) stays a buffer; a constant is marked private (``self._bg``)."""

from test_cli import both, run, run_here, student

HIDDEN = """
import numpy as np

class Hidden:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b, self.bh = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal(3)
        self.buf = np.zeros((5, 3))

    def forward(self, X):
        self.X = X
        self.buf = X @ self.W + self.b  # a scratch buffer forward writes
        self.h = np.tanh(self.buf + self.bh)
        return self.h

    def backward(self, dY):
        g = dY * (1 - self.h ** 2)
        self.dW, self.db = self.X.T @ g, g.sum(0)
        DBH
        return g @ self.W.T
"""


def _check(tmp_path, dbh, name):
    body = HIDDEN.replace("DBH", dbh)
    return run_here("check", f"{student(tmp_path, body, name)}::Hidden", "--input-shape", "5,4")


def test_a_forgotten_hidden_bias_is_not_checked(tmp_path):
    """H4: bh may be a weight whose gradient backward forgot or a constant: neither PASS nor FAIL, exit 3."""
    p = _check(tmp_path, "pass  # BUG: dbh forgotten", "hidden_bug.py")
    out = both(p)
    assert p.returncode == 3, out
    assert ("NOT CHECKED as a whole: Hidden: the gradients that were checked match (see above), but gradcheck cannot "
            "tell whether bh is a weight whose gradient backward forgot (then set self.dbh) or a constant (then name "
            "it self._bh, or pass --constants bh).") in out, out
    assert "PASS" not in out and "FAIL" not in out, out


def test_its_correct_twin_with_a_scratch_buffer_passes(tmp_path):
    p = _check(tmp_path, "self.dbh = g.sum(0)", "hidden_ok.py")
    out = both(p)
    assert p.returncode == 0 and "PASS: Hidden: every gradient (dX, dW, db, dbh)" in out, out
    assert "buf" not in out.split("name tensor")[0], out  # the scratch buffer: neither a weight nor a warning


def test_a_private_constant_is_a_buffer(tmp_path):
    body = HIDDEN.replace("self.bh", "self._bh").replace("DBH", "pass")
    p = run("check", f"{student(tmp_path, body, 'hidden_private.py')}::Hidden", "--input-shape", "5,4")  # the script
    out = both(p)
    assert p.returncode == 0 and "_bh" in out and "PASS: Hidden" in out, out
