"""Session 42 (helper verify42): verify41b F4, F5 and F7 fixed, each pinned here."""

import subprocess
import sys

import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck.errors import InputModifiedError

CLIP = '''
import numpy as np

class MaxNormTrainOnly:
    """A max-norm clip of W inside forward, in training mode only (verify41b F7)."""
    def __init__(self):
        self.params = {"W": np.random.default_rng(0).normal(size=(5, 3))}
        self.grads = {"W": np.zeros((5, 3))}
    def forward(self, X, training=False):
        self.X = X
        if training:
            self.params["W"] /= np.maximum(np.linalg.norm(self.params["W"], axis=0, keepdims=True), 1.0)
        return X @ self.params["W"]
    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T
'''


def _said(text: str) -> str:
    return " ".join(text.split())


def test_f7_param_write_in_training_only_names_the_mode_in_process():
    ns: dict = {}
    exec(compile(CLIP, "clip.py", "exec"), ns)  # noqa: S102 - the layer under test
    with pytest.raises(InputModifiedError) as info:
        check_layer(ns["MaxNormTrainOnly"](), np.random.default_rng(1).standard_normal((4, 5)), twin=None,
                    training=True)
    text = _said(str(info.value))
    assert "each call forward(X, training=True) changes it again" in text, text
    assert "training or eval" not in text


def test_f7_param_write_in_training_only_names_the_mode_sandboxed(tmp_path):
    (tmp_path / "clip.py").write_text(CLIP)
    out = subprocess.run([sys.executable, "-m", "gradcheck", "check", f"{tmp_path / 'clip.py'}::MaxNormTrainOnly",
                          "--input-shape", "4,5"], capture_output=True, text=True, timeout=300)
    text = _said(out.stdout + out.stderr)
    assert out.returncode == 1, text
    assert "each call forward(X, training=True) changes it again" in text and "training or eval" not in text, text
