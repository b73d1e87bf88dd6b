"""``--dtype`` reaches a CS231n pair's ``--init`` arrays; ``--jacobian`` with it is refused (session 30; session 29's
leftover of dtype29). Before, ``--dtype float32`` made a pair's inputs float32 but left the lists of its ``*_param``
dicts float64 (the header said so: "(lists) passed as float64 arrays"), so a pair was checked in neither dtype; and
``--jacobian`` drew its X float64 whatever ``--dtype`` said: an option accepted and ignored."""

from test_cli import both, check_source, run_here
from test_cli_loss_mode_s25 import TANH

PAIR = '''import numpy as np


def scale_forward(x, w, scale_param):
    s = scale_param["s"]
    out = np.empty(x.shape, dtype=s.dtype)  # computes in its state's dtype
    out[...] = x * w * s
    return out, (x, w, s)


def scale_backward(dout, cache):
    x, w, s = cache
    return FACTORdout * w * s, (dout * x * s).sum(axis=0)
'''
ARGS = ("--input-shape", "4,3;3", "--init", '{"scale_param": {"s": [0.5, 1.5, 2.0]}}')


def _pair(tmp_path, factor, *extra):
    return check_source(tmp_path, PAIR.replace("FACTOR", factor), "scale", *ARGS, *extra, file="pair.py")


def test_a_pairs_init_arrays_are_made_in_dtype_and_its_float32_code_checked_on_the_copy(tmp_path):
    """Was: "scale_param['s'] (lists) passed as float64 arrays" and a plain float64 PASS."""
    code, text = _pair(tmp_path, "", "--dtype", "float32")
    assert "scale_param['s'] (lists) passed as float32 arrays" in text, text
    assert code == 0 and "PASS: scale (its float32 code checked on a float64 copy" in text, text
    assert "Its own float32 backward, run on the same inputs and parameters, gives the copy's gradients" in text, text
    code, text = _pair(tmp_path, "")
    assert code == 0 and "passed as float64 arrays" in text and "float64 copy" not in text, text


def test_a_pairs_doubled_gradient_fails_in_float32(tmp_path):
    code, text = _pair(tmp_path, "2 * ", "--dtype", "float32")
    assert code == 1 and "FAIL: scale: gradient mismatch in dx" in text and "2 times" in text, text


def test_jacobian_with_a_low_dtype_is_refused(tmp_path):
    """Was: exit 0, the Jacobian of a float64 X under --dtype float32."""
    f = tmp_path / "tanh.py"
    f.write_text(TANH)
    for low in ("float32", "float16"):
        p = run_here("check", f"{f}::Tanh", "--input-shape", "2,3", "--tape", "--jacobian", "--dtype", low)
        text = both(p)
        assert p.returncode == 2 and f"--jacobian with --dtype {low}: the Jacobian is drawn in float64" in text, text
    p = run_here("check", f"{f}::Tanh", "--input-shape", "2,3", "--tape", "--jacobian", "--dtype", "float64")
    assert p.returncode == 0 and "jacobian dY/dX" in both(p), both(p)
