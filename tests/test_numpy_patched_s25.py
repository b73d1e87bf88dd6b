"""review25g M3: a checked file that replaces a numpy function with one returning float64 (a reproducible
``np.random.randn``) and whose forward casts to float32 itself was NOT CHECKED (exit 3) blaming the replacement;
the same file without the replacement FAILs naming the cast. A replacement is blamed only when it really returns
float32 on float64 input (called once, numpy's global generator left as it was)."""

import numpy as np
from test_cli import both, run_here, student

from gradcheck._adapters import numpy_patched

LIN = """
import numpy as np

_rng = np.random.default_rng(0)
np.random.randn = lambda *shape: _rng.standard_normal(shape)  # PATCH


class Lin:
    def __init__(self):
        self.params = {"W": np.random.randn(3, 2)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return (X @ self.params["W"]).astype(np.float32)  # BUG: casts to float32

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T
"""


def test_a_replacement_returning_float64_is_not_blamed_for_the_layers_own_cast(tmp_path):
    for name, body in (("patched.py", LIN), ("unpatched.py", LIN.replace("np.random.randn = lambda", "# lambda"))):
        f = student(tmp_path, body, name=name)
        p = run_here("check", f"{f}::Lin", "--input-shape", "4,3")
        text = both(p)
        assert p.returncode == 1 and "FAIL: Lin: wrong dtype of Y" in text, text
        assert "astype(np.float32)" in text and "replaced numpy" not in text, text


def test_only_replacements_that_return_float32_are_named(monkeypatch):
    state = np.random.get_state()
    monkeypatch.setattr(np.random, "randn", lambda *shape: np.random.standard_normal(shape))  # float64: not named
    monkeypatch.setattr(np, "zeros", lambda *a, **k: np.ones(*a, **k) * 0)
    assert numpy_patched(None) == {}
    assert all(np.array_equal(a, b) for a, b in zip(np.random.get_state(), state) if isinstance(a, np.ndarray))
    dot = np.dot
    monkeypatch.setattr(np, "dot", lambda a, b: dot(a, b).astype(np.float32))  # nnfs.init's np.dot
    assert list(numpy_patched(None)) == ["np.dot"]
    monkeypatch.setattr(np, "dot", lambda *a: 1 / 0)  # one that raises on the probe: not named either
    assert numpy_patched(None) == {}
