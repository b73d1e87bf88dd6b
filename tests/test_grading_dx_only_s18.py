"""A Linear of examples/seed_style_linear.py's style in a graded assignment (tester18g MEDIUM 5).

``self.W``/``self.b`` and a backward returning dX only: the grader cannot set or grade parameters that have no
gradient, and said "Linear's parameters are none; the assignment expects W, b (... or attributes self.W and
self.b)" of a layer holding exactly those. The message now says what is missing: their gradients.
"""

from pathlib import Path

import numpy as np
import pytest

from gradcheck.errors import StudentCodeError
from gradcheck.grading import checks
from gradcheck.sandbox import Sandbox
from manualprop import Linear as RefLinear

SEED_STYLE = Path(__file__).resolve().parents[1] / "examples" / "seed_style_linear.py"


def test_attribute_layer_without_gradients_is_told_what_is_missing(tmp_path):
    with Sandbox(files={"layers.py": str(SEED_STYLE)}, timeout=5, hostile=True) as sb:
        layer = sb.load_layer("layers.py", "Linear", {"in_features": 5, "out_features": 3})
        with pytest.raises(StudentCodeError) as err:
            checks.layer_forward(layer, np.ones((4, 5)), RefLinear(5, 3, rng=0), points=2)
    msg = str(err.value)
    assert "parameters are none" not in msg, msg
    assert msg.startswith("Linear holds self.W, self.b but its backward stores no gradient for them "
                          "(no self.dW, self.db, nor a grads dict)"), msg
