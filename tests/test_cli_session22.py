"""Session 22 (left22) through the CLI in this process: a CS231n function pair whose backward ignores its mode, run in
its sandbox, is named ``backward-ignores-mode`` as it is in-process (session 21's leftover: the other mode's forward
is the pair built again in the child from its --init with the mode flipped)."""

import json

from test_cli import both, run_here

S21 = "tests/buggy_layers/session21.py"
INIT = json.dumps({"dropout_param": {"mode": "test", "p": 0.6, "seed": 5}})


def flat(p):
    return " ".join(both(p).split())


def test_sandboxed_pair_whose_backward_ignores_its_mode_is_named():
    """Was 'dx differs from the correct gradient in 24 of 24 elements (no known bug pattern)'."""
    p = run_here("check", f"{S21}::dropoutignoresmode", "--input-shape", "4,6", "--init", INIT)
    text = flat(p)
    assert p.returncode == 1 and "FAIL: dropoutignoresmode" in text, text
    assert ("diagnosis: dx is the gradient of the train-mode forward (dropout_param['mode'] = 'train'), but this "
            "forward ran in test mode (dropout_param['mode'] = 'test')") in text, text
    assert "branch on dropout_param['mode']" in text and "no known bug pattern" not in text, text


def test_sandboxed_pair_that_branches_on_its_mode_passes():
    for mode in ("test", "train"):
        init = json.dumps({"dropout_param": {"mode": mode, "p": 0.6, "seed": 5}})
        p = run_here("check", f"{S21}::dropout", "--input-shape", "4,6", "--init", init)
        assert p.returncode == 0 and "PASS: dropout" in flat(p), flat(p)
