"""Session 34 (fixu34; newuser34 H1): a function pair's string keyword argument whose other values the source does
not name by ``==`` was checked at its default alone, and a bug in the other path PASSed (and graded full marks):
``if mode == "max": ... else: <average>`` and ``{"max": np.max, "average": np.mean}[mode]``. The dict's keys are
values too, and an else branch with no named value is run with :data:`gradcheck._adapters.ELSE_VALUE`."""

import json
from pathlib import Path

import numpy as np
from test_cli_tester33 import POOL
from test_pair_values_s34 import SHAPE, pair

from gradcheck import check_layer
from gradcheck._adapters import ELSE_VALUE
from gradcheck.grading.runner import grade_submission
from gradcheck.sources import keyword_values

IFELSE = 'A = win.max(axis=(2, 4)) if mode == "max" else win.mean(axis=(2, 4))'
DICT = 'A = {"max": np.max, "average": np.mean}[mode](win, axis=(2, 4))'
GET = 'ops = {"max": np.max, "average": np.mean}\n    A = ops.get(mode)(win, axis=(2, 4))'


def text(forward=IFELSE, share="1.0 / (f * f)"):
    """test_cli_tester33's pool pair with forward's line ``forward`` and backward's average path in an else branch
    (``if mode == "max": ... else:``, no other value named) spreading dA * ``share``."""
    return (POOL.replace(IFELSE, forward).replace('elif mode == "average":', "else:")
            .replace("SHARE", share))


def test_an_else_branch_with_no_named_value_is_checked(tmp_path):
    lay = pair(tmp_path, text(share="1.0 / f"))  # BUG: average's gradient is dA / (f * f)
    assert keyword_values(lay) == [("mode", "max", [ELSE_VALUE])]
    res = check_layer(lay, SHAPE, twin=None)
    assert not res.passed and res.failing_tensors == ["dA_prev"], res.table()
    assert res.name == f"pool [mode={ELSE_VALUE!r}]", res.name
    assert f"each value of mode checked: mode='max' PASS, mode={ELSE_VALUE!r} FAIL" in res.notes, res.notes
    ok = check_layer(pair(tmp_path, text(), name="pool_ok"), SHAPE, twin=None)
    assert ok.passed, ok.table()


def test_an_else_branch_that_raises_adds_no_value(tmp_path):
    fwd = 'if mode == "max":\n        A = win.max(axis=(2, 4))\n    else:\n        raise ValueError(mode)'
    lay = pair(tmp_path, text(fwd).replace("        share = 1.0 / (f * f)\n        return", "        raise ValueError(mode)  #"))
    assert keyword_values(lay) == []


def test_dict_dispatch_keys_are_values(tmp_path):
    for i, fwd in enumerate((DICT, GET)):
        lay = pair(tmp_path, text(fwd, share="1.0 / f"), name=f"pool_d{i}")
        assert keyword_values(lay) == [("mode", "max", ["average"])], fwd
        res = check_layer(lay, SHAPE, twin=None)
        assert not res.passed and res.name == "pool [mode='average']", (fwd, res.name)


TESTS = '''
import pytest
from gradcheck import function_pair
from pool_ref import pool_forward, pool_backward


@pytest.mark.points(4)
def test_pool(student, grade, rng):
    grade.layer_gradients(student.layer("pool.py", "pool", hparameters={"f": 2, "stride": 2}),
                          rng.standard_normal((2, 4, 4, 3)),
                          function_pair(pool_forward, pool_backward, hparameters={"f": 2, "stride": 2}), points=4)
'''


def test_grade_fails_the_else_branch_bug(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_pool.py").write_text(TESTS)
    (tmp_path / "tests" / "pool_ref.py").write_text(text())
    scores = {}
    for name, share in (("right", "1.0 / (f * f)"), ("buggy", "1.0 / f")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pool.py").write_text(text(share=share))
        r = grade_submission(tmp_path / name, tmp_path / "tests", tmp_path / f"out_{name}", timeout=20.0)
        scores[name] = [t["score"] for t in json.loads(Path(r.results_path).read_text())["tests"]]
    assert scores == {"right": [4.0], "buggy": [0.0]}, scores


def pool3(tmp_path, share, name):
    """The channels-last pool pair at f = 3 (Andrew Ng's layout), average's gradient dA * ``share``."""
    import importlib.util

    from gradcheck import function_pair

    f = tmp_path / f"{name}.py"
    f.write_text(text(share=share))
    spec = importlib.util.spec_from_file_location(name, f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return function_pair(mod.pool_forward, mod.pool_backward, hparameters={"f": 3, "stride": 3}, mode="average")


def test_average_pool_diagnosis_names_the_area_of_a_channels_last_window(tmp_path):
    """newuser34 M1: the area was read from axes 2 and 3, W * C / (W' * C) = f of an (N, H, W, C) input: "3 inputs
    per output" of a 3 x 3 window."""
    from gradcheck import diagnose_layer

    d = " ".join(diagnose_layer(pool3(tmp_path, "1.0 / f", "side"), (2, 6, 6, 3), mode="full").sentence().split())
    assert "dA_prev is 3 times the correct gradient" in d and "(9 = 3 x 3 inputs per output)" in d, d
    assert "by one side (3) alone" in d, d
    d = " ".join(diagnose_layer(pool3(tmp_path, "1.0", "none"), (2, 6, 6, 3), mode="full").sentence().split())
    assert "dA_prev is 9 times the correct gradient" in d and "(9 inputs per output)" in d, d


FORWARD_TESTS = '''
import pytest
from gradcheck import function_pair
from pool_ref import pool_forward, pool_backward


@pytest.mark.points(2)
def test_pool_forward(student, grade, rng):
    grade.layer_forward(student.layer("pool.py", "pool", hparameters={"f": 2, "stride": 2}),
                        rng.standard_normal((2, 4, 4, 3)),
                        function_pair(pool_forward, pool_backward, hparameters={"f": 2, "stride": 2}))
'''


def test_grade_forward_compares_each_value_with_the_reference(tmp_path):
    """newuser34 M4: a wrong average forward (a sum, its backward to match) scored full marks where the test left mode
    at its default: the forward was compared with the reference at the default alone."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_pool.py").write_text(FORWARD_TESTS)
    (tmp_path / "tests" / "pool_ref.py").write_text(text(DICT))
    out = {}
    for name, fwd in (("right", IFELSE), ("summed", IFELSE.replace("win.mean", "win.sum"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pool.py").write_text(text(fwd, share="1.0"))
        r = grade_submission(tmp_path / name, tmp_path / "tests", tmp_path / f"out_{name}", timeout=20.0)
        (t,) = json.loads(Path(r.results_path).read_text())["tests"]
        out[name] = (t["score"], " ".join(t.get("output", "").replace("\\", "").split()))
    assert out["right"][0] == 2.0, out
    score, msg = out["summed"]
    assert score == 0.0 and "at mode='average': the output differs from the expected one" in msg, msg


class PlainDense:
    """A layer whose forward takes no training keyword (check_layer and the CLI read it through the adapter)."""

    def __init__(self, bias_sum=True):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((5, 3)), "b": rng.standard_normal(3)}
        self.grads, self.bias_sum = {}, bias_sum

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        self.grads["b"] = dY.sum(axis=0) if self.bias_sum else dY.mean(axis=0)
        return dY @ self.params["W"].T


def test_diagnose_layer_takes_a_forward_without_training_as_check_layer_does():
    """newuser34 M3: diagnose_layer said "forward must accept a training keyword" of a correct layer check_layer
    passes; now both read it through check_layer's adapter route."""
    from gradcheck import diagnose_layer

    X = np.random.default_rng(1).standard_normal((8, 5))
    assert check_layer(PlainDense(), X).passed
    d = diagnose_layer(PlainDense(), X)
    assert d.passed, d.sentence()
    d = diagnose_layer(PlainDense(bias_sum=False), X)
    assert not d.passed and d.result.failing_tensors == ["db"], d.sentence()


def test_grade_forward_grades_the_else_value_only_where_both_sources_have_an_else(tmp_path):
    """An if/elif student (no else: zeros at an unnamed value) against a reference with an else branch: graded at
    'average', which both run, not at the else branch's stand-in value (RUN.sh G0: the correct pool lost 2 points)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_pool.py").write_text(FORWARD_TESTS)
    (tmp_path / "tests" / "pool_ref.py").write_text(text())
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "pool.py").write_text(POOL.replace("SHARE", "1.0 / (f * f)").replace(
        IFELSE, 'A = np.zeros(win.shape[:1] + win.shape[3:4])\n    if mode == "max":\n        A = win.max(axis=(2, 4))'
        '\n    elif mode == "average":\n        A = win.mean(axis=(2, 4))'))
    r = grade_submission(tmp_path / "s", tmp_path / "tests", tmp_path / "out", timeout=20.0)
    (t,) = json.loads(Path(r.results_path).read_text())["tests"]
    assert t["score"] == 2.0, t.get("output")
