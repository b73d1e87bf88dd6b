"""Session 41 (helper check41), verify40b F3: a loss reducing over every element otherwise than its reference is named
as that reduction (factor y_pred.size), not a constant factor."""

import pytest
from test_cli import check_source

LOSSES = """
import numpy as np

class MSESumAll:
    def forward(self, y_pred, y_true):
        self.d = y_pred - y_true
        return np.sum(self.d ** 2)
    def backward(self):
        return 2 * self.d

class MSEMeanAll:
    def forward(self, y_pred, y_true):
        self.d = y_pred - y_true
        return np.mean(self.d ** 2)
    def backward(self):
        return 2 * self.d / self.d.size
"""


@pytest.mark.parametrize("name, init, said", [
    ("MSESumAll", "{}", "L is 30 times too large: L and dy_pred are the reference's times 30, the number of elements of "
     "y_pred (6 x 5), and dy_pred agrees with central differences of this L: the loss sums over all elements where "
     "the reference averages over all of them; divide by y_pred.size"),
    ("MSEMeanAll", '{"reduction": "sum"}', "L is 30 times too small: L and dy_pred are the reference's divided by 30, "
     "the number of elements of y_pred (6 x 5)"),
])
def test_a_loss_reducing_over_every_element_otherwise_is_named_so(tmp_path, name, init, said):
    code, out = check_source(tmp_path, LOSSES, name, "--loss", "--input-shape", "6,5", "--reference",
                             "manualprop.MeanSquaredError", "--reference-init", init)
    text = " ".join(out.split())
    assert code == 1 and said in text, text
    assert "constant factor" not in text, text
