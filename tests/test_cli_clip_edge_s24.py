"""review24: a BCE clipping its prediction at 1e-3 (or 1e-5, 1e-7) whose backward forgets the clip passed under
--pred unit: a clip within EDGE_ROOM of 0 or 1 was never straddled (session 23's rule against log's difference error
near 1e-7). Now every third entry goes inside such a clip (at c / 2) with a step of c / 4 that stays inside, where
forward is flat: a backward forgetting the clip FAILs there; one masking the clipped entries passes; one using the
clipped prediction without a mask (the clip in forward and backward alike) is read as passing, the line saying so."""

import pytest
from test_cli import both, run_here, student

BACKWARDS = {
    "buggy": "return (self.q - self.y) / (self.q * (1 - self.q)) / self.y.size",
    "masked": "g = (self.p - self.y) / (self.p * (1 - self.p)) / self.y.size\n"
              "        return np.where((self.q < E) | (self.q > 1 - E), 0.0, g)",
    "unmasked": "return (self.p - self.y) / (self.p * (1 - self.p)) / self.y.size",
}


def _bce(eps, kind):
    return f"""
import numpy as np
E = {eps}

class BCE:
    def forward(self, y_true, y_pred):
        self.y, self.q, self.p = y_true, y_pred, np.clip(y_pred, E, 1 - E)
        return float(-np.mean(self.y * np.log(self.p) + (1 - self.y) * np.log(1 - self.p)))

    def backward(self):
        {BACKWARDS[kind]}
"""


def _check(tmp_path, eps, kind):
    f = student(tmp_path, _bce(eps, kind))
    p = run_here("check", f"{f}::BCE", "--loss", "--input-shape", "8,3", "--pred", "unit", "--targets", "labels:2")
    return p, both(p)


@pytest.mark.parametrize("eps", ["1e-7", "1e-5", "1e-3"])
def test_backward_forgetting_a_clip_near_the_edge_fails(tmp_path, eps):
    p, text = _check(tmp_path, eps, "buggy")
    assert p.returncode == 1 and "FAIL: BCE: gradient mismatch in dy_pred." in text, text
    assert f"forward clips y_pred at {float(eps):.10g} and {1 - float(eps):.10g}" in text, text
    assert "numerical=0." in text, text  # forward is flat inside the clip: the differences are exactly 0


@pytest.mark.parametrize("eps,kind", [("1e-7", "masked"), ("1e-3", "masked"), ("1e-5", "unmasked"),
                                      ("1e-3", "unmasked")])
def test_correct_backwards_pass_inside_the_clip(tmp_path, eps, kind):
    p, text = _check(tmp_path, eps, kind)
    assert p.returncode == 0 and "PASS: BCE" in text, text
    assert "inside the clip" in text, text
    assert ("read as passing" in text) == (kind == "unmasked"), text
