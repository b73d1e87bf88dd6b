"""Session 45's MEDIUM findings of the students' and staff's testers (builder medium45): each test failed
before its fix."""
import json

import pytest
from test_cli import both, run_here, student

from gradcheck.grading.runner import GRADER_ERROR, grade_submission


def test_grading_tests_that_do_not_import_tell_the_student_it_is_the_graders_side_and_not_final(tmp_path):
    """staff45 F3: a grading-test module failing to import (pytest exit 2) told every student "The autograder
    could not finish (pytest exit code 2); score 0", no word that it is not their fault nor that 0 is not final."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text("x = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "from ref_layerz import Conv\n\n\ndef test_a(student, grade):\n    'A'\n")
    res = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", unsafe_no_isolation=True)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res.status == GRADER_ERROR and data["extra_data"]["status"] == GRADER_ERROR
    out = data["output"]
    assert "a problem on the grader's side, not in your submission" in out, out
    assert "not final" in out and "pytest exit code 2" in out and "Course staff have the log" in out, out


TEMPORAL = """
import numpy as np


def temporal_softmax_loss(x, Y, mask, verbose=False):
    N, T, V = x.shape
    x_flat, y_flat, mask_flat = x.reshape(N * T, V), Y.reshape(N * T), mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat /= N
    dx_flat *= mask_flat[:, None]
    return loss, dx_flat.reshape(N, T, V)
"""
_MASK = [[1, 1, 0], [1, 0, 0]]


@pytest.mark.parametrize("y", ["y", "captions"])
def test_temporal_softmax_loss_with_integer_labels_in_init(tmp_path, y):
    """students45 F2: CS231n's temporal_softmax_loss(x, y, mask) with y in --init as the assignment's (N, T) integer
    array was given a float64 y (IndexError), and the message named no way out. A nested list of integers named like
    labels (y) is now an int64 array of a loss function's data; for another name the message names the way that
    works, --targets labels:C with the mask in --init (which is checked here to PASS)."""
    f = student(tmp_path, TEMPORAL.replace("Y", y), "rnn_layers.py")
    init = json.dumps({y: [[0, 1, 3], [2, 2, 0]], "mask": _MASK})
    p = run_here("check", f"{f}::temporal_softmax_loss", "--loss", "--input-shape", "2,3,4", "--init", init)
    text = both(p)
    if y == "y":
        assert p.returncode == 0 and "PASS: temporal_softmax_loss" in text, text
        return
    assert p.returncode == 3 and "IndexError" in text, text
    way = (f"{f}::temporal_softmax_loss --loss --input-shape 2,3,4 --targets labels:4 --init "
           f"'{json.dumps({'mask': _MASK})}'")
    assert f"captions came from --init as a nested list of integers, a float64 array" in text, text
    assert f"leave it out of --init and draw it: gradcheck check {way}" in text, text
    p = run_here("check", *way.replace("'", "").split(" --init ")[0].split(), "--init", json.dumps({"mask": _MASK}))
    assert p.returncode == 0 and "PASS: temporal_softmax_loss" in both(p), both(p)
