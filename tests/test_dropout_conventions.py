"""Session 13 (M4): a Dropout is NOT CHECKED when its mask drops every entry, decided by what the mask does, not
by the value of p: CS231n's p is the probability of KEEPING a unit (p = 1.0 drops nothing), others' ``rate`` (or
p) the probability of dropping (1.0 drops everything). Each convention is checked from the CLI: nothing dropped
is a PASS, everything dropped is NOT CHECKED (exit 3) with a sentence that names both conventions, and a
backward that passes dY through unchanged (the mask forgotten) still FAILs where some entries are dropped.
A CS231n pair whose mask drops every entry (mode 'train' from --init, the seed given) PASSed on main: zeros
compared with zeros."""

import re

import pytest
from test_cli import both, run, run_here, student

KEEP_CLASS = """
import numpy as np

class Dropout:
    def __init__(self, p=0.5, seed=0, bug=False):
        self.p, self.rng, self.bug = p, np.random.default_rng(seed), bug

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) < self.p) / max(self.p, 1e-300)  # p: the keep probability
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None or self.bug else dY * self.mask
"""

RATE_CLASS = KEEP_CLASS.replace("p=0.5", "rate=0.5").replace("self.p, self.rng, self.bug = p", "self.rate, self.rng, self.bug = rate").replace(
    "(self.rng.random(X.shape) < self.p) / max(self.p, 1e-300)  # p: the keep probability",
    "(self.rng.random(X.shape) >= self.rate) / max(1 - self.rate, 1e-300)  # rate: the drop probability")

CS231N = """
import numpy as np

def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    else:
        out = x
    return out, (dropout_param, mask)

def dropout_backward(dout, cache):
    dropout_param, mask = cache
    if dropout_param["mode"] == "train":
        return BACKWARD
    return dout
"""

NOT_CHECKED = "keep probability of 0"


def _class(tmp_path, body, init):
    return run_here("check", f"{student(tmp_path, body, 'drop_cls.py')}::Dropout", "--input-shape", "4,6",
               "--init", init)


def _pair(tmp_path, p, bug=False):
    f = student(tmp_path, CS231N.replace("BACKWARD", "dout" if bug else "dout * mask"), "drop_pair.py")
    through = run if (p, bug) == (1.0, False) else run_here  # one case through the console script
    return through("check", f"{f}::dropout", "--input-shape", "4,6", "--init",
                   f'{{"dropout_param": {{"p": {p}, "mode": "train", "seed": 0}}}}')


@pytest.mark.parametrize("body, init, code", [
    (KEEP_CLASS, '{"p": 1.0}', 0),  # keep probability 1: nothing dropped, a pass-through is right
    (KEEP_CLASS, '{"p": 0.5, "bug": true}', 1),  # half dropped: the pass-through bug FAILs
    (KEEP_CLASS, '{"p": 1e-12}', 3),  # keep probability ~0: every entry dropped
    (RATE_CLASS, '{"rate": 0.0}', 0),  # drop rate 0: nothing dropped
    (RATE_CLASS, '{"rate": 0.5, "bug": true}', 1),
    (RATE_CLASS, '{"rate": 1.0}', 3),  # drop rate 1: every entry dropped
])
def test_a_class_is_judged_by_what_its_mask_drops(tmp_path, body, init, code):
    p = _class(tmp_path, body, init)
    out = both(p)
    assert p.returncode == code, out
    assert ("PASS: Dropout" in out) == (code == 0), out
    if code == 3:
        assert "NOT CHECKED: Dropout [training]: every entry dropped" in out and NOT_CHECKED in out, out


@pytest.mark.parametrize("p, bug, code", [(1.0, False, 0), (0.5, True, 1), (0.5, False, 0), (1e-4, False, 3)])
def test_a_cs231n_pair_is_judged_by_what_its_mask_drops(tmp_path, p, bug, code):
    """p = 1e-4 with seed 0: the mask keeps no entry of the 4x6 input, the forward returns zeros for any input."""
    r = _pair(tmp_path, p, bug)
    out = both(r)
    assert r.returncode == code, out
    assert ("PASS: dropout" in out) == (code == 0), out
    if code == 3:
        assert "every entry dropped" in out and NOT_CHECKED in out and "drops every entry" in out, out


#: The same layers with no mask before a training forward: the eval forward returns X and leaves ``self.mask``
#: unset, so backward after it on a fresh layer raises (tester13 L3's keep-probability layer).
NO_MASK_YET = {"keep": KEEP_CLASS, "rate": RATE_CLASS}
for _k, _body in list(NO_MASK_YET.items()):
    NO_MASK_YET[_k] = _body.replace("        if not training:\n            self.mask = None\n            return X",
                                    "        if not training:\n            return X").replace(
        "return dY if self.mask is None or self.bug else dY * self.mask", "return dY if self.bug else dY * self.mask")


@pytest.mark.parametrize("convention, init", [("keep", '{"p": 1.0}'), ("rate", '{"rate": 0.0}')])
def test_a_dropout_that_drops_nothing_has_one_header_whatever_its_fresh_state(tmp_path, convention, init):
    """tester13 L3: keep-probability p = 1.0 showed "eval and training" with two rows, drop-rate 0.0 "checked
    once": the first layer had no mask before a training forward (its eval check ran after the training mode,
    ``_eval_after_training``), the second reset it in eval. Each drops nothing, so each mode is the other: one
    header and one row for both, the note saying how eval was reached."""
    said = {}
    for fresh in (False, True):
        body = (NO_MASK_YET if fresh else {"keep": KEEP_CLASS, "rate": RATE_CLASS})[convention]
        p = run_here("check", f"{student(tmp_path, body, f'drop_{fresh}.py')}::Dropout", "--input-shape", "4,6",
                     "--init", init)
        out = both(p)
        assert p.returncode == 0 and "PASS: Dropout" in out, out
        assert len(re.findall(r"^Dropout(?: \[\w+\])?\s+dX\s", p.stdout, re.M)) == 1 and "[training]" not in out, out
        said[fresh] = " ".join(p.stdout.split("\n\n")[0].split("\n")[2:]).split()  # the header's mode line
        assert ("after the training mode on the same layer (backward after forward(X, training=False) on a fresh "
                "layer raised" in out) == fresh, out
    assert said[True] == said[False], said
    assert " ".join(said[False]).startswith("mode: eval (forward(X, training=False)): forward takes training, but "
                                            "checked once (the note under the table says why)"), said
    # the why, said once, in the note under the table (docs20: not also in the header)
    assert " ".join(out.split()).count("training and eval forwards give the same output on this input: checked "
                                       "once") == 1, out


def test_a_dropout_without_a_mask_yet_still_fails_where_it_drops(tmp_path):
    """The one-row rule asks for the same output and the same backward: where the mask drops entries (p = 0.5)
    both modes are shown, a pass-through backward (the mask forgotten) FAILs in training mode, and the layer's
    eval backward, which multiplies by the mask the training forward left, FAILs in eval mode, named."""
    f = student(tmp_path, NO_MASK_YET["keep"], "drop_half.py")
    bad = run_here("check", f"{f}::Dropout", "--input-shape", "4,6", "--init", '{"p": 0.5, "bug": true}')
    assert bad.returncode == 1 and "FAIL Dropout [training] dX" in both(bad), both(bad)
    stale = run_here("check", f"{f}::Dropout", "--input-shape", "4,6", "--init", '{"p": 0.5}')
    out = " ".join(both(stale).split())
    assert stale.returncode == 1 and "FAIL: Dropout [eval]" in out and "Dropout [training] dX" in out, out
    assert "backward multiplies by the mask a training forward left behind" in out, out
