"""Session 25's leftovers of session 24 (left25) checked through the CLI: bugs that FAILed with "no known bug pattern"
and are named from the numbers now, penalties read by the names of their strengths, and students' protocols."""

import json
import pathlib

from test_cli import both, run_here

TABLE = pathlib.Path(__file__).parent / "buggy_layers"


def test_pool_backward_ignoring_the_stride_is_named(tmp_path):
    """tester24s g07/g11: Kulbear's published ``pool_backward`` (deep-learning.ai's pooling pair) takes each window's
    corner at (h, w) where forward takes (h*stride, w*stride): FAILed "no known bug pattern" (22 of 96 elements
    wrong); named now, in max and average mode, with the fix; the course's own pair still passes."""
    f = TABLE / "session25.py"
    for mode in ("max", "average"):
        init = json.dumps({"hparameters": {"stride": 2, "f": 2}, "mode": mode})
        p = run_here("check", f"{f}::poolstride", "--input-shape", "2,4,4,3", "--init", init)
        text = both(p)
        assert p.returncode == 1, text
        assert f"diagnosis: dA_prev is {mode} pooling's gradient over windows whose corners are at (h, w), not at " \
               "(h*stride, w*stride): forward (stride 2, windows of 2x2)" in text, text
        assert "vert_start = h * stride, horiz_start = w * stride" in text and "no known bug pattern" not in text, text
        p = run_here("check", f"{f}::pool", "--input-shape", "2,4,4,3", "--init", init)
        assert p.returncode == 0 and "PASS: pool" in both(p), both(p)
    init = json.dumps({"hparameters": {"stride": 2, "f": 2}})  # g11: mode left at its default, "max"
    p = run_here("check", f"{f}::poolstride", "--input-shape", "2,4,4,3", "--init", init)
    assert p.returncode == 1 and "dA_prev is max pooling's gradient over windows" in both(p), both(p)

