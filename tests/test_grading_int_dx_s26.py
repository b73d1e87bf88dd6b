"""Session 26 (left26c; redteam25, note25 "Left"): an int64 dX fails its own part in the grader, not the whole test.

The sandbox's reader of backward's reply refused an integer gradient for the whole call, so a Linear returning
``dX.astype(np.int64)`` beside a correct dW and db lost every part of the gradient tests (16/28, where a wrong float dX
keeps dW and db). The graded backward now reads integer gradients as they came and each such part fails alone with
``gradcheck check``'s words; the check itself still stops on an integer dX (exit 1).
"""

import json
from pathlib import Path

from gradcheck.grading import runner

ROOT = Path(__file__).resolve().parents[1] / "assignments" / "linear_relu_ce"
RIGHT = "        return dY @ self.params[\"W\"]\n"


def _graded(tmp_path, old, new):
    src = (ROOT / "solution" / "layers.py").read_text(encoding="utf-8")
    assert src.count(old) == 1, old
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(src.replace(old, new), encoding="utf-8")
    res = runner.grade_submission(tmp_path / "sub", ROOT / "tests", tmp_path / "out", seed=5)
    rows = {t["name"]: t for t in json.loads((tmp_path / "out" / "results.json").read_text())["tests"]}
    return res, rows


def test_an_int64_dx_loses_the_dx_parts_alone(tmp_path):
    res, rows = _graded(tmp_path, RIGHT, '        return (dY @ self.params["W"]).astype(np.int64)\n')
    grads = rows["Linear: gradients dX, dW, db (2 points each)"]
    assert grads["score"] == 4.0, grads  # was 0.0: dW and db are right
    assert "returned dX of dtype int64; gradients must be float64" in grads["output"], grads
    assert "dW" not in grads["output"].split("dtype int64")[0], grads
    hidden = rows["Hidden: Linear gradients for random sizes and batch sizes"]
    assert 0.0 < hidden["score"] < hidden["max_score"], hidden  # was 0.0
    assert rows["All layers: outputs and gradients are float64"]["score"] == 0.0  # the dtype policy's own test
    wrong = tmp_path / "w"
    wrong.mkdir()
    res_float, _ = _graded(wrong, RIGHT, RIGHT.replace("]\n", "] * 2.0\n"))  # a wrong float dX: dW, db kept
    assert abs(res.score - res_float.score) < 1e-9 and res.score > 16.0, (res.score, res_float.score)  # 22.67
