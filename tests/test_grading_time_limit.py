"""The time limit of one call in the numerical check of a grade (session 8, V7).

Before: a correct CS231n conv lost its points at load 8.5 on 2 CPUs: "`dx`: **wrong** - ...
conv.forward_many (256 forwards) did not finish within 3 s (wall clock) ... Is there an infinite
loop": the checker's own batch of 256 forwards had one call's limit. Now each forward of the batch
has it: a slow correct layer gets its points, a forward that loops is still stopped, and its parts
read "too slow", never "wrong".
"""

from pathlib import Path

import numpy as np

from gradcheck.grading.checks import layer_gradients
from gradcheck.sandbox import Sandbox
from manualprop import Linear

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()
SLOW = SOLUTION + """

class SlowLinear(Linear):
    calls = 0

    def forward(self, X, training=False):
        import time
        SlowLinear.calls += 1
        time.sleep(0.02)  # 0.02 s per call: a loaded machine
        while SlowLinear.calls > LOOP_AFTER:
            pass
        return super().forward(X, training=training)
"""


def _grade(tmp_path, loop_after):
    (tmp_path / "layers.py").write_text(SLOW.replace("LOOP_AFTER", str(loop_after)))
    X = np.random.default_rng(1).standard_normal((4, 8))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=1.0, session_timeout=120) as sb:
        layer = sb.load_layer("layers.py", "SlowLinear", {"in_features": 8, "out_features": 8})
        return layer_gradients(layer, X, Linear(8, 8), seed=1)


def test_a_correct_layer_slower_than_the_limit_over_all_its_forwards_gets_its_points(tmp_path):
    verdict = _grade(tmp_path, 10**9)  # 64 weights: over 128 forwards, 2.5 s at least, each 0.02 s
    assert verdict.passed and verdict.fraction == 1.0, verdict.markdown()


def test_a_forward_that_loops_in_the_numerical_check_is_too_slow_not_wrong(tmp_path):
    verdict = _grade(tmp_path, 40)  # the first forward and backward pass; the loop begins midway
    assert not verdict.passed and verdict.fraction == 0.0
    text = verdict.markdown()
    assert "**wrong**" not in text and text.count("**too slow**") == len(verdict.parts) == 3, text
    assert "a forward after the first" in text and "did not finish within 1 s (wall clock), the limit" in text
