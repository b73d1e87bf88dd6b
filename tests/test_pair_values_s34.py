"""Session 34 (left34; tester33 F2, left by session 33): a function pair's string keyword argument with a default
(Andrew Ng's ``pool_forward(A_prev, hparameters, mode="max")`` whose source compares ``mode == "average"``) is
checked at each value by the Python API (:func:`gradcheck.check_layer`, :func:`gradcheck.diagnose_layer`, what
notebook 09 calls) and by ``gradcheck grade``, in the one loop ``gradcheck check`` runs
(:func:`gradcheck.sources.each_keyword_value`). Before, both checked the default alone: a broken ``mode="average"``
backward passed the API and scored full marks."""

import importlib.util
import json
from pathlib import Path

import pytest
from test_cli_tester33 import POOL

from gradcheck import check_layer, diagnose_layer, function_pair
from gradcheck.grading.runner import grade_submission

HP = {"f": 2, "stride": 2}
SHAPE = (2, 4, 4, 3)


def source(share: str, other: str = "average") -> str:
    """test_cli_tester33's pool pair (the CLI's F2 test) with average's gradient ``share`` and its name ``other``."""
    return POOL.replace("SHARE", share).replace('"average"', f'"{other}"')


BUGGY, RIGHT = source("1.0"), source("1.0 / (f * f)")  # average's gradient is dA / (f * f): 4 times it without


def pair(tmp_path, text, name="pool_student", **params):
    """The pool pair of ``text`` imported from a file (the checker reads its source) as gradcheck.function_pair."""
    f = tmp_path / f"{name}.py"
    f.write_text(text)
    spec = importlib.util.spec_from_file_location(name, f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return function_pair(mod.pool_forward, mod.pool_backward, hparameters=dict(HP), **params)


def test_check_layer_checks_each_value_and_names_the_failing_one(tmp_path):
    res = check_layer(pair(tmp_path, BUGGY), SHAPE, twin=None)
    assert not res.passed
    assert res.name == "pool [mode='average']" and res.at_value == "mode='average'", res.name
    assert res.failing_tensors == ["dA_prev"], res.table()
    assert "each value of mode checked: mode='max' PASS, mode='average' FAIL" in res.notes, res.notes
    (default,) = res.other_modes  # the default's check, passing, beside it
    assert default.name == "pool [mode='max']" and default.passed and default.at_value == ""


def test_check_layer_passes_a_pair_right_at_each_value(tmp_path):
    res = check_layer(pair(tmp_path, RIGHT), SHAPE, twin=None)
    assert res.passed, res.table()
    assert "each value of mode checked: mode='max' PASS, mode='average' PASS" in res.notes, res.notes
    assert [r.name for r in [res, *res.other_modes]] == ["pool [mode='max']", "pool [mode='average']"]


def test_a_value_given_is_checked_alone(tmp_path):
    """mode given to function_pair (as --init gives it): that value alone, no other."""
    res = check_layer(pair(tmp_path, BUGGY, mode="average"), SHAPE, twin=None)
    assert not res.passed and res.name == "pool" and res.failing_tensors == ["dA_prev"]
    assert not any("each value of" in n for n in res.notes), res.notes
    res = check_layer(pair(tmp_path, BUGGY, mode="max"), SHAPE, twin=None)
    assert res.passed and not any("each value of" in n for n in res.notes), res.notes


def test_values_false_checks_the_layer_as_given(tmp_path):
    res = check_layer(pair(tmp_path, BUGGY), SHAPE, twin=None, values=False)
    assert res.passed and res.name == "pool", res.table()


def test_diagnose_layer_as_notebook_09_calls_it_names_the_value_and_the_bug(tmp_path):
    d = diagnose_layer(pair(tmp_path, BUGGY), SHAPE, mode="full")
    assert not d.passed and d.name == "pool [mode='average']", d.name
    assert "dA_prev is 4 times the correct gradient" in d.sentence(), d.sentence()
    assert "each value of mode checked: mode='max' PASS, mode='average' FAIL" in " ".join(d.report().split()), d.report()
    assert diagnose_layer(pair(tmp_path, RIGHT), SHAPE, mode="full").passed


def test_the_loop_is_the_one_the_cli_runs(tmp_path):
    """One loop for exit codes (gradcheck check) and results alike: the values found, each checked once."""
    from gradcheck.sources import each_keyword_value, keyword_values

    layer = pair(tmp_path, RIGHT)
    assert keyword_values(layer) == [("mode", "max", ["average"])]
    seen = []
    others, line = each_keyword_value(layer, "pool", [], 0, lambda lay, k, v: seen.append((lay._kwargs[k], k, v)) or 1)
    assert seen == [("average", "mode", "average")] and [(k, v, c) for k, v, c in others] == [("mode", "average", 1)]
    assert line == "each value of mode checked: mode='max' PASS, mode='average' FAIL"
    assert "mode" not in layer._kwargs  # the value is set on a copy


def test_an_error_at_another_value_names_the_value(tmp_path):
    from gradcheck.errors import StudentCodeError

    broken = BUGGY.replace("        share = 1.0\n", "        raise NotImplementedError('average')\n")
    with pytest.raises(StudentCodeError, match=r"pool with mode='average' \(its default mode='max' checked first\)"):
        check_layer(pair(tmp_path, broken), SHAPE, twin=None)


GRADING_TESTS = '''
import numpy as np
import pytest


class RefMaxPool:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, A_prev, training=False):
        m, H, W, C = A_prev.shape
        self.win, self.shape = A_prev.reshape(m, H // 2, 2, W // 2, 2, C), A_prev.shape
        return self.win.max(axis=(2, 4))

    def backward(self, dA):
        mask = self.win == self.win.max(axis=(2, 4), keepdims=True)
        return (mask * dA[:, :, None, :, None, :]).reshape(self.shape)


@pytest.mark.points(2)
def test_pool(student, grade, rng):
    grade.layer_gradients(student.layer("pool.py", "pool", hparameters={"f": 2, "stride": 2}),
                          rng.standard_normal((2, 4, 4, 3)), RefMaxPool(), points=2)


@pytest.mark.points(2)
def test_pool_max_given(student, grade, rng):
    grade.layer_gradients(student.layer("pool.py", "pool", hparameters={"f": 2, "stride": 2}, mode="max"),
                          rng.standard_normal((2, 4, 4, 3)), RefMaxPool(), points=2)
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Two submissions graded: right at both values, and wrong at the other (named avg_pool: a Markdown character,
    which the grader escaped in the child's strings until session 35, and left34 sent the values hex-encoded)."""
    root = tmp_path_factory.mktemp("pair_values")
    (root / "tests").mkdir()
    (root / "tests" / "test_pool.py").write_text(GRADING_TESTS)
    out = {}
    for name, text in (("right", source("1.0 / (f * f)", "avg_pool")), ("buggy", source("1.0", "avg_pool"))):
        (root / name).mkdir()
        (root / name / "pool.py").write_text(text)
        r = grade_submission(root / name, root / "tests", root / f"out_{name}", timeout=20.0)
        tests = json.loads(Path(r.results_path).read_text())["tests"]
        out[name] = {t["name"]: (t["score"], " ".join(t.get("output", "").replace("\\", "").split())) for t in tests}
    return out


def test_grade_scores_a_pair_right_at_each_value_full_marks(graded):
    assert graded["right"]["test_pool"][0] == 2.0, graded["right"]
    assert graded["right"]["test_pool_max_given"][0] == 2.0, graded["right"]


def test_grade_fails_the_part_wrong_at_another_value_and_names_it(graded):
    score, out = graded["buggy"]["test_pool"]
    assert score == 0.0, out
    assert "disagrees with central differences at mode='avg_pool'" in out, out
    assert "This test leaves mode at its default (mode='max')" in out, out
    assert "accumulate" not in out, out  # not the hint of a gradient matching on the first call only


def test_grade_checks_a_value_the_test_gives_alone(graded):
    """mode='max' in the test's arguments: that value alone, the avg_pool bug not graded there (docs/gradescope.md)."""
    score, out = graded["buggy"]["test_pool_max_given"]
    assert score == 2.0, out
