"""An ML-From-Scratch-style loss whose arguments' names say nothing (``loss(self, a, b)``, ``gradient(self, a, b)``,
a the prediction) FAILed with 1e15 errors, 'no known bug pattern', and no word of the order it was called in
(newuser32 F3). Now the header says the order assumed, how to name the arguments, and, when the gradient matches the
loss in the other order, says so; a gradient wrong in both orders gets no such sentence."""
import textwrap

import pytest
from test_cli import both, run_here

LOSSES = textwrap.dedent('''
    import numpy as np


    class BCEab:
        def loss(self, a, b):
            a = np.clip(a, 1e-15, 1 - 1e-15)
            return -b * np.log(a) - (1 - b) * np.log(1 - a)

        def gradient(self, a, b):
            a = np.clip(a, 1e-15, 1 - 1e-15)
            return -(b / a) + (1 - b) / (1 - a)


    class BCEabBug(BCEab):
        def gradient(self, a, b):
            a = np.clip(a, 1e-15, 1 - 1e-15)
            return -(b / a) + (1 - b) / a
''')

ASSUMED = ("loss(a, b) and gradient(a, b): the names do not say which is the prediction, so ML-From-Scratch's order "
           "(y, y_pred), the target first, is assumed; name them (y, y_pred) or (y_pred, y_true) to say which")
OTHER = "in the other order, loss(a, b) and gradient(a, b) with the prediction first, gradient matches"


@pytest.mark.parametrize(("cls", "other"), [("BCEab", True), ("BCEabBug", False)])
def test_an_unread_order_is_said_and_the_other_order_tried(tmp_path, cls, other):
    path = tmp_path / "losses.py"
    path.write_text(LOSSES)
    p = run_here("check", f"{path}::{cls}", "--loss", "--input-shape", "4,3", "--targets", "unit")
    text = " ".join(both(p).split())
    assert p.returncode == 1 and f"FAIL: {cls}: gradient mismatch in dy_pred" in text, text
    after = text.split(f"FAIL: {cls}:")[-1]  # said under the FAIL too, where it is read
    assert ASSUMED in text and "argument order: " + ASSUMED in after, text
    assert (OTHER in after) is other, text
