"""The memory a gradient check needs in the sandbox (session 8, gap 2).

Before: a 1024-wide Linear graded with ``--memory-mb 256`` passed its forward and backward, then the
numerical differences' copies (a stacked batch of inputs, the parameters sent with each chunk) ran the
sandbox out of memory, and dX and dW were "wrong: the numerical check could not run: ... ended the
sandbox process with exit code 70 ... Does the code call sys.exit": the student's fault. Now the check
estimates what it needs first (the child as it started, the layer's copies and the copies it adds) and refuses
as a grader error (``MemoryBudgetError``) naming the budget and the estimate. A check that fits still runs.
tester17g F2: the estimate used the child's PEAK address space, so a submission that reserved its whole limit
at import (``np.empty``, never touched) and freed it made every check a grader error; now memory freed is
free, and memory the submission holds is its own fault (a 0 for those parts, saying so).
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


#: Reserves all the address space its limit leaves at import, never touching it, then frees it (tester17g's
#: hog_adaptive) or keeps a part of it (hog_dbmean): a correct Linear otherwise.
HOG = """import resource as _r
import numpy as _np
_n = _r.getrlimit(_r.RLIMIT_AS)[0]
while _n > 0:
    try:
        _HOG = _np.empty(_n // 8)
        break
    except MemoryError:
        _n -= 8 << 20
KEEP = {keep}
if KEEP:
    del _HOG
    _HOG = _np.empty(KEEP << 17)
else:
    del _HOG
""" + SOLUTION


def _grade(tmp_path, d, memory_mb, isolation, name="Linear", source=HOARDING):
    (tmp_path / "layers.py").write_text(source)
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
    verdict, now = _grade(tmp_path, 128, 256, "process")
    assert verdict.passed, verdict.markdown()
    assert now is not None and now < 256  # the child's address space after the numerical differences


def test_memory_a_submission_reserved_and_freed_is_free_and_memory_it_holds_is_its_own_fault(tmp_path):
    """tester17g F2: hog_adaptive (its whole RLIMIT_AS reserved at import and freed) made every check a grader
    error, "raise --memory-mb" never helping; it is graded normally now. a submission that keeps 100 MiB: the check does
    not fit beside it, a 0 for the gradients saying the submission's code holds the memory, not a grader error."""
    verdict, now = _grade(tmp_path, 32, 256, "process", source=HOG.replace("{keep}", "0"))
    assert verdict.passed, verdict.markdown()
    held, _ = _grade(tmp_path, 32, 256, "process", source=HOG.replace("{keep}", "100"))
    assert not held.passed and {p.name for p in held.parts} == {"dX", "dW", "db"}
    for p in held.parts:
        assert "your code holds about" in p.message and "of the 256 MiB the sandbox allows" in p.message, p.message
        held_mib = float(p.message.split("holds about ")[1].split(" MiB")[0])
        assert 60 < held_mib < 140, p.message  # the 100 MiB it keeps, give or take the model's allowance


@pytest.mark.skipif(support()[0] == "none", reason="no namespaces on this machine")
def test_running_out_midway_because_the_submission_hoards_memory_is_the_submissions_fault(tmp_path):
    """A 1024-wide Linear at 384 MiB is estimated to fit and runs out midway because its own cache grows at
    each forward (2 MiB a call): the memory its code still holds then says whose it was (tester17g F2: the
    submission's own allocation counts against it), a 0 for its gradients, not a grader error."""
    verdict, _ = _grade(tmp_path, 1024, 384, "namespaces", "HoardingLinear")
    assert not verdict.passed
    for p in verdict.parts:
        assert "your code holds about" in p.message and "ran out of memory midway" in p.message, p.message
