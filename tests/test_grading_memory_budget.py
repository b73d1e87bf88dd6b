"""The memory a gradient check needs in the sandbox (session 8, gap 2).

Before: a 1024-wide Linear graded with ``--memory-mb 256`` passed its forward and backward, then the
numerical differences' copies (a stacked batch of inputs, the parameters sent with each chunk) ran the
sandbox out of memory, and dX and dW were "wrong: the numerical check could not run: ... ended the
sandbox process with exit code 70 ... Does the code call sys.exit": the student's fault. Now the check
estimates what it needs first (the child's peak so far and the copies it adds) and refuses as a grader
error (``MemoryBudgetError``) naming the budget and the estimate. A check that fits still runs.
"""

from pathlib import Path

import numpy as np
import pytest

from gradcheck.errors import GraderError
from gradcheck.grading.checks import MemoryBudgetError, layer_gradients
from gradcheck.sandbox import Sandbox, support
from manualprop import Linear

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()


#: A correct Linear that keeps 2 MiB more at every forward (a cache never emptied): it runs out midway wherever
#: the check itself fits (session 16: until then the grader's own copies piled up, M6, and did so for SOLUTION).
HOARDING = SOLUTION + """

_HOARD = []


class HoardingLinear(Linear):
    def forward(self, X, training=False):
        _HOARD.append(np.ones(1 << 18))
        return super().forward(X, training)
"""


def _grade(tmp_path, d, memory_mb, isolation, name="Linear"):
    (tmp_path / "layers.py").write_text(HOARDING)
    X = np.random.default_rng(1).standard_normal((16, d))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=600, memory_mb=memory_mb,
                 isolation=isolation, hostile=True) as sb:
        layer = sb.load_layer("layers.py", name, {"in_features": d, "out_features": d})
        return layer_gradients(layer, X, Linear(d, d), seed=1), sb.address_space_mib()


@pytest.mark.parametrize("isolation", ["namespaces", "process"])
def test_a_check_that_does_not_fit_the_sandbox_is_a_grader_error_before_it_runs(tmp_path, isolation):
    if isolation == "namespaces" and support()[0] == "none":
        pytest.skip("no namespaces on this machine")
    with pytest.raises(MemoryBudgetError) as err:
        _grade(tmp_path, 1024, 256, isolation)
    msg = str(err.value)
    assert isinstance(err.value, GraderError) and "the sandbox allows 256 MiB (--memory-mb)" in msg
    estimate = float(msg.split("needs about ")[1].split(" MiB")[0])
    assert 256 < estimate < 1024, msg
    assert f"raise --memory-mb to at least {int(np.ceil(estimate / 64) * 64)}" in msg
    assert msg.startswith("checking Linear's gradients by central differences on inputs of shapes (16, 1024)")


def test_a_check_that_fits_runs_and_its_estimate_covers_what_it_used(tmp_path):
    verdict, peak = _grade(tmp_path, 128, 256, "process")
    assert verdict.passed, verdict.markdown()
    assert peak is not None and peak < 256  # the child's whole peak, the numerical differences included


@pytest.mark.skipif(support()[0] == "none", reason="no namespaces on this machine")
def test_running_out_midway_after_matching_the_reference_is_a_grader_error_too(tmp_path):
    """The estimate is a model: a 1024-wide Linear at 384 MiB is estimated to fit (the child's peak so
    far is small) and runs out midway (its own cache grows at each forward: the grader's copies no longer
    pile up). Every gradient had matched the reference's, so this is the grader's, not a 0 for dX and dW."""
    with pytest.raises(MemoryBudgetError, match=r"ran out of the sandbox's 384 MiB \(--memory-mb\) midway, "
                                                r"although they matched the reference's"):
        _grade(tmp_path, 1024, 384, "namespaces", "HoardingLinear")
