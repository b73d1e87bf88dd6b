"""newuser30 (session 31): the messages of a CS231n function pair named a method of the layer the checker makes
of the pair (``affine.backward(dY) ... raised``, ``affine.forward takes 3 inputs``), which the student never wrote;
every message of the pair route now names the student's own function (``gradcheck._validation.called``)."""

import json
import re

import pytest
from test_cli import both, run_here, student

from gradcheck import _validation as V

PAIR = """
import numpy as np

def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1) @ w + b
    return out, (x, w, b)

def affine_backward(dout, cache):
    x, w, b = cache
    dx = (dout @ w.T).reshape(x.shape)
    dw = x.reshape(x.shape[0], -1).T @ dout
    db = BUG
    return dx, dw, db
"""


@pytest.mark.parametrize("bug, said, code", [
    ("1 / 0", "affine_backward(dY) with dY of shape (4, 3) raised ZeroDivisionError: division by zero", 3),
    ("None", "affine_backward(dY) with dY of shape (4, 3) returned None for db", 1),
    ("dout.sum(0) * np.nan", "affine_backward(dY) with dY of shape (4, 3) gave db containing 3 non-finite", 1),
])
def test_a_pair_s_errors_name_its_own_backward(tmp_path, bug, said, code):
    f = student(tmp_path, PAIR.replace("BUG", bug))
    p = run_here("check", f"{f}::affine", "--input-shape", "4,5;5,3;3")
    out = both(p)
    assert p.returncode == code and said in out
    assert not re.search(r"\baffine\.(forward|backward)\b", out)


def test_a_pair_s_usage_error_names_its_own_forward(tmp_path):
    f = student(tmp_path, PAIR.replace("BUG", "dout.sum(0)"))
    p = run_here("check", f"{f}::affine", "--input-shape", "4,5;5,3")
    assert p.returncode == 2
    assert "2 input shapes given, but affine_forward takes 3 inputs (x, w, b)." in both(p)


def test_called_names_a_pair_inside_the_block_only():
    class affine:  # noqa: N801 - a pair's layer is named after its stem
        protocol = {"calls": ["affine_forward", "affine_backward"]}

    class Linear:
        pass

    with V.own_call_names(affine(), Linear()):
        assert V.called("affine", "backward(dY) with dY of shape (2, 3)") == "affine_backward(dY) with dY of shape (2, 3)"
        assert V.called("affine", "forward") == "affine_forward"
        assert V.called("Linear", "backward(dY)") == "Linear.backward(dY)"
    assert V.called("affine", "forward") == "affine.forward"


def test_a_graded_pair_s_output_names_its_own_backward(tmp_path):
    from pathlib import Path

    from gradcheck.grading.runner import grade_batch

    root = Path(__file__).resolve().parents[1] / "assignments" / "cs231n_layers"
    sub = tmp_path / "subs" / "s1"
    sub.mkdir(parents=True)
    src = (root / "solution" / "layers.py").read_text()
    assert "    db = dout.sum(axis=0)\n" in src
    (sub / "layers.py").write_text(src.replace("    db = dout.sum(axis=0)\n", "    db = 1 / 0\n"))
    grade_batch(tmp_path / "subs", root / "tests", tmp_path / "out", workers=1, progress=False, plot=False)
    res = json.loads(next((tmp_path / "out").rglob("results.json")).read_text())
    outs = " ".join(t["output"] for t in res["tests"] if t["name"].startswith("affine_backward"))
    assert "affine_backward(dY) with dY of shape" in outs and "raised ZeroDivisionError" in outs
    assert not re.search(r"\baffine\.(forward|backward)\b", " ".join(t["output"] for t in res["tests"]))
