"""staff45 F1: a grading test's ``pytest.mark.timeout(n)`` is its limit per call, whatever ``--timeout`` says.

The docs' template and both shipped assignments put ``timeout(...)`` in ``pytestmark`` (cs231n_layers: 5 s, its
README: "each call into the student's code may take 5 s"), but the marker was capped by ``--timeout``, whose
default is 3: the README's batch command graded calls at 3 s where the assignment's ``run_autograder`` (``--timeout
5``) allowed 5, so the shipped solution with a 3.5 s first call scored 38 / 48 locally and 48 / 48 on Gradescope.
The marker is now the test's limit; ``--timeout`` is the limit of the tests without one.
"""

import types
from pathlib import Path

import pytest

from gradcheck.grading import plugin
from gradcheck.grading.runner import grade_submission
from gradcheck.sandbox import support


def _timeout(marker, grading_timeout=3.0):
    mark = None if marker is None else types.SimpleNamespace(name="timeout", args=(marker,), kwargs={})
    item = types.SimpleNamespace(get_closest_marker=lambda name: mark if name == "timeout" else None,
                                 iter_markers=lambda name: iter([mark] if mark and name == "timeout" else []),
                                 nodeid="t.py::test_x", config=types.SimpleNamespace(getoption=lambda name: grading_timeout))
    return plugin.Student(None, item).timeout


def test_the_marker_is_the_test_s_limit_above_and_below_the_option():
    assert _timeout(5) == 5.0  # was min(5, 3) = 3: the test's own 5 s ignored
    assert _timeout(1.5) == 1.5
    assert _timeout(None) == 3.0 and _timeout(None, 7.0) == 7.0


@pytest.mark.parametrize("bad", [0, -1, "5", float("nan"), float("inf"), True])
def test_a_marker_that_is_not_a_positive_number_is_the_test_s_mistake(bad):
    with pytest.raises(pytest.UsageError, match=r"timeout\(seconds\) needs a number of seconds >= 0.01"):
        plugin._marker_timeout(types.SimpleNamespace(nodeid="t.py::test_x", iter_markers=lambda name: iter(
            [types.SimpleNamespace(name="timeout", args=(bad,), kwargs={})] if name == "timeout" else [])))


TESTS = '''
import pytest
from manualprop import ReLU as RefReLU

pytestmark = [pytest.mark.timeout(4)]


@pytest.mark.points(2)
def test_relu_forward(student, grade, rng):
    """ReLU: forward output"""
    grade.layer_forward(student.layer("layers.py", "ReLU"), rng.standard_normal((4, 3)) + 0.1, RefReLU(), points=2)
'''

ROOT = Path(__file__).resolve().parents[1]
# the example's solution whose ReLU constructor sleeps 1.5 s: within the test's 4 s, over --timeout 1
SLOW_CONSTRUCTOR = "import time\n" + (ROOT / "assignments/linear_relu_ce/solution/layers.py").read_text().replace(
    "    def __init__(self):\n        self.params, self.grads = {}, {}",
    "    def __init__(self):\n        time.sleep(1.5)\n        self.params, self.grads = {}, {}", 1)


def test_a_call_within_the_test_s_marker_is_graded_when_the_option_is_lower(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_relu.py").write_text(TESTS)
    assert "time.sleep(1.5)" in SLOW_CONSTRUCTOR
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(SLOW_CONSTRUCTOR)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", timeout=1.0,
                         unsafe_no_isolation=support()[0] == "none")
    assert (r.status, r.score, r.max_score) == ("graded", 2.0, 2.0), r.message  # was 0: "did not finish within 1 s"
