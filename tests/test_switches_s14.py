"""Session 14 (switches): a PASS must not hide a branch gradcheck did not run, and a probe must not misread
non-finite outputs.

- F1: a forward that reads an attribute switch gradcheck does not know as a mode (a boolean ``self.use_noise``,
  a string ``self.kind`` compared with words that are no mode words) is checked with every value the switch can
  take, each row labelled with the switch's name and value; a bug in the other branch FAILs. When its other
  values cannot be found it is NOT CHECKED (exit 3), naming the switch and the value checked.
- F2 (L3): a keep-probability Dropout with p = 1.0 and a drop-rate Dropout with rate = 0.0 (both the identity in
  both modes) report the same way.
- F3: a forward whose output is NaN is reported as a non-finite output, not as a forward that does not use W
  (the usage probe compared NaN outputs as equal).
"""

from test_cli import both, run, student

NAN_FORWARD = """
import numpy as np

class NaNForward:
    def __init__(self):
        self.W = np.ones((5, 3)) * 0.1
    def forward(self, X):
        self.X = X
        return np.log(X) @ self.W
    def backward(self, dY):
        self.dW = np.log(self.X).T @ dY
        return (dY @ self.W.T) / self.X
"""


def test_f3_a_nan_output_is_no_unused_weight(tmp_path):
    p = run("check", f"{student(tmp_path, NAN_FORWARD, 'nan_fwd.py')}::NaNForward", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 1, out
    assert "does not use W" not in out, out
    assert "NaNForward.forward(X) gave Y containing" in out and "non-finite" in out, out
