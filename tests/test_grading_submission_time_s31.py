"""left30's leftover: the runner's ``--submission-timeout`` counted the wall clock of the whole grading, the grader's
own time between sandbox requests and sandboxes included (its scan and diagnoses aside), where a session's limit
charges only its requests (``Sandbox._session_origin``). Now the sandbox module writes the wall clock of the
submission's requests (``sandbox.requests_seconds``) beside the results, and the runner charges the submission those
alone: the grader's own time extends the limit, up to the limit itself."""

import json

import numpy as np
import pytest

from gradcheck import sandbox
from gradcheck.grading import runner
from tests.test_grading_policy import SOLUTION, _sandbox, graded


def test_the_requests_seconds_grow_with_each_request_and_are_written(tmp_path):
    path = tmp_path / "submission-seconds"
    try:
        sandbox.charge_requests_to(path)
        assert float(path.read_text()) == pytest.approx(sandbox.requests_seconds(), abs=1e-3)  # written at once
        before = sandbox.requests_seconds()
        with _sandbox(tmp_path, SOLUTION) as sb:
            layer = sb.load_layer("layers.py", "ReLU", {})
            layer.forward(np.ones((2, 3)))
        assert sandbox.requests_seconds() > before
        sandbox.write_requests_seconds()
        assert float(path.read_text()) == pytest.approx(sandbox.requests_seconds(), abs=1e-3)
    finally:
        sandbox.charge_requests_to(None)


def test_the_runner_reads_the_graders_own_time_from_the_submissions_seconds(tmp_path):
    f = tmp_path / runner.SUBMISSION_SECONDS
    assert runner._uncharged(f, 10.0, 6.0) == 0.0  # no file: no request made yet, GRADER_SECONDS alone says
    f.write_text("1.500")
    assert runner._uncharged(f, 5.0, 6.0) == pytest.approx(3.5)  # 5 s so far, 1.5 s of them the submission's
    assert runner._uncharged(f, 20.0, 6.0) == pytest.approx(6.0)  # at most the limit
    f.write_text("nan")
    assert runner._uncharged(f, 20.0, 6.0) == 0.0


#: the staff's own slow step (a reference computed at length): 5.5 s of the grader's time, none of the submission's
TESTS = '''
import time
import pytest
from manualprop import ReLU as RefReLU

@pytest.mark.points(2)
def test_relu(student, grade, rng):
    grade.layer_gradients(student.layer("layers.py", "ReLU"), rng.standard_normal((4, 5)) + 0.5, RefReLU(), seed=1)

@pytest.mark.points(1)
def test_graders_own_step(student, grade, rng):
    time.sleep(5.5)
    grade.layer_gradients(student.layer("layers.py", "ReLU"), rng.standard_normal((4, 5)) + 0.5, RefReLU(), seed=2)
'''


def test_the_graders_own_time_is_not_the_submissions(tmp_path):
    """Was: "Score 0, too slow: the whole submission took more than 6 s to grade" (5.5 s of it the staff test's, between
    two requests of the same sandbox)."""
    r, data = graded(tmp_path, SOLUTION, TESTS, submission_timeout=6.0)
    assert "too slow" not in json.dumps(data), data
    assert r.score == pytest.approx(3.0), data
