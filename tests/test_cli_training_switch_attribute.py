"""Issue 10 (tester9's X3, X5, X7): training switches that are no argument of forward. Each class here is
checked through ``gradcheck check`` as a student runs it; each planted bug passed before (the training branch
never run, or a "PASS" of forward's default alone with no warning).

The planted bug: a Dropout whose training backward forgets the 1/(1-p) scale must FAIL in training mode;
its correct twin must PASS in both modes (the switch is set, not guessed).
"""

import importlib.util

import numpy as np
import pytest
from test_cli import both, run, run_here, student
from test_cli_training_switch_and_loss_order import DROPOUT

from gradcheck import _adapters

#: the Dropout of issue 10's switch tests, its switch an attribute self.{attr} (no argument), ``{methods}``
#: nn.Module's train()/eval() or nothing; its backward forgets the 1/(1-p) scale (RIGHT: the correct one)
ATTRIBUTE = (DROPOUT.replace("self.p = p\n", "self.p, self.{attr} = p, {start}\n{methods}")
             .replace(", {arg}={default}", "").replace("{train_test}", "self.{attr}"))
METHODS = """
    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)
"""


def checked(path, *extra, through=run_here):
    """``gradcheck check path::Dropout`` on an 8x6 input (48 entries: a mask of 12 dropped all of them once in 4,096 runs, and a Dropout whose every entry is dropped has dX = 0 right or wrong): the process and its output, unwrapped; ``through`` ``run`` for the console script."""
    p = through("check", f"{path}::Dropout", "--input-shape", "8,6", *extra)
    return p, both(p)


def attribute(tmp_path, attr="training", start="False", methods=True, right=False):
    return student(tmp_path, ATTRIBUTE.format(attr=attr, start=start, methods=METHODS if methods else "")
                   .replace("dY * (self.mask > 0)", "dY * self.mask" if right else "dY * (self.mask > 0)"))


@pytest.mark.parametrize("start", ["False", "True"])
def test_self_training_with_train_eval_checks_both_modes(tmp_path, start):
    """X3: PyTorch's self.training (train()/eval()): "forward has no training argument", the default alone ran
    and the buggy training backward passed (from self.training = False)."""
    p, out = checked(attribute(tmp_path, start=start))
    assert "forward has no training switch" not in out, out
    assert "mode: eval and training (self.training = False, then True): forward reads self.training" in out, out
    assert p.returncode == 1 and "FAIL: Dropout [training]" in out, out


@pytest.mark.parametrize("attr", ["is_train", "train_mode"])
def test_attribute_set_by_the_training_loop_is_set_for_each_mode(tmp_path, attr):
    """X3: self.is_train set by the student's loop (no train()/eval()): set before each forward."""
    p, out = checked(attribute(tmp_path, attr, methods=False))
    assert f"mode: eval and training (self.{attr} = False, then True)" in out, out
    assert p.returncode == 1 and "FAIL: Dropout [training]" in out, out


def test_correct_attribute_dropout_passes_both_modes(tmp_path):
    p, out = checked(attribute(tmp_path, right=True), through=run)  # the console script
    assert "mode: eval and training (self.training = False, then True)" in out, out
    assert p.returncode == 0 and "PASS: Dropout" in out and "WARNING" not in out, out


@pytest.mark.parametrize(("flag", "mode", "code"), [("--training", "training (self.training = True)", 1),
                                                    ("--eval", "eval (self.training = False)", 0)])
def test_training_and_eval_flags_pick_one_attribute_mode(tmp_path, flag, mode, code):
    """X3: --training said "has no effect here: the forward has no training argument" and passed."""
    p, out = checked(attribute(tmp_path), flag)
    assert f"mode: {mode}: as {flag} asks" in out and "has no effect" not in out, out
    assert p.returncode == code, out


@pytest.mark.parametrize(("start", "methods"), [(False, True), (True, True), (False, False)])
def test_adapt_puts_the_attribute_back(tmp_path, start, methods):
    """The probes set the switch; adapt leaves it as the student's object had it."""
    path = attribute(tmp_path, start=start, methods=methods, right=True)  # a file: forward's source is read
    spec = importlib.util.spec_from_file_location("attribute_dropout", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    obj = mod.Dropout()
    assert _adapters.mode_keyword(obj.forward) == ("self.training", False, True)
    layer, info = _adapters.adapt(obj, [np.ones((4, 3))])
    assert obj.training is start and info["mode_keyword"] == ["self.training", "False", "True"]
    layer.forward(np.ones((4, 3)), training=not start)
    assert obj.training is start  # set for the call, then put back (tests/test_walk_reach.py)


def test_train_method_of_a_training_loop_is_never_called(tmp_path):
    """train(X, y) is a training loop, not nn.Module's train(mode): no switch is read from it."""
    ns = {}
    exec("class L:\n    def train(self, X, y): raise AssertionError('called')\n    def eval(self): pass\n"
         "    def forward(self, X): return X\n    def backward(self, dY): return dY\n", ns)
    assert _adapters.mode_keyword(ns["L"]().forward) is None


KWARGS = """
import numpy as np

class Dropout:
    def forward(self, X, **kw):
        if {test}:
            self.mask = (np.random.rand(*X.shape) > 0.5) / 0.5
            return X * self.mask
        self.mask = None
        return X

    def backward(self, dY):
        return dY if self.mask is None else dY * (self.mask > 0)  # BUG: the scale 1/(1-p) is missing
"""


@pytest.mark.parametrize(("test", "calls"), [
    ('kw.get("train_flg", False)', "train_flg=False, then train_flg=True"),
    ('kw.get("mode", "test") == "train"', "mode='test', then mode='train'"),
    ('kw["is_train"]', "is_train=False, then is_train=True")])
def test_switch_read_from_kwargs_is_passed_by_its_key(tmp_path, test, calls):
    """X5: forward(X, **kw) got training=True, which it ignored; the header said training mode, and passed."""
    p, out = checked(student(tmp_path, KWARGS.format(test=test)))
    assert f"mode: eval and training (forward(X, {calls}))" in out, out
    assert p.returncode == 1 and "FAIL: Dropout [training]" in out, out


@pytest.mark.parametrize(("arg", "test"), [("mode=0", "mode == 1"), ('training="no"', 'training == "yes"')])
def test_switch_of_another_type_is_warned_never_a_silent_pass(tmp_path, arg, test):
    """X7: mode=0/1 read as "no training argument"; training="no" given True/False, "checked once": a PASS
    with no warning. Now a WARNING says only the default ran."""
    name, value = arg.split("=")
    body = KWARGS.format(test=test).replace("**kw", arg)
    p, out = checked(student(tmp_path, body))
    shown = repr(eval(value))
    assert "forward has no training switch" not in out, out
    assert f"mode: forward's default alone (forward(X), {name}={shown} by default)" in out, out
    assert (f"WARNING: forward takes {name} that gradcheck does not read as a training switch, so only "
            f"{name}={shown} (its default) was checked") in out, out
    assert f"make {name} a boolean, or a mode/phase string" in out, out


MODE_KEPT = '''
import numpy as np


class Dropout:
    """CS231n style: self.dropout_param['mode'] read by forward and kept as self.mode for backward."""

    def __init__(self, p=0.6):
        self.dropout_param = {"mode": "train", "p": p, "seed": 3}

    def forward(self, X):
        p, mode = self.dropout_param["p"], self.dropout_param["mode"]
        self.mask = np.random.default_rng(self.dropout_param["seed"]).random(X.shape) < p
        self.mode = mode
        return X * self.mask / p if mode == "train" else X  # inverted dropout, p the keep probability

    def backward(self, dY):
        return dY * self.mask / self.dropout_param["p"] if self.mode == "train" else dY
'''


def test_an_attribute_forward_writes_is_no_switch(tmp_path):
    """Session 21: ``self.mode = self.dropout_param['mode']`` (kept for backward) was taken for the switch, so the
    checker set ``self.mode``, which forward overwrote: both "modes" ran the dict's 'train', the correct layer FAILed
    ('dX equals dY' in eval) and one whose backward ignores the mode PASSed. The switch is the dict item."""
    path = student(tmp_path, MODE_KEPT)
    spec = importlib.util.spec_from_file_location("mode_kept", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    layer = _adapters.adapt(mod.Dropout(), [np.ones((4, 6))])[0]
    assert _adapters.mode_keyword(layer.obj.forward) == ("self.dropout_param['mode']", "test", "train")
    X = np.random.default_rng(0).standard_normal((4, 6))
    assert np.array_equal(layer.forward(X, training=False), X)
    assert not np.array_equal(layer.forward(X, training=True), X)
    p, out = checked(path)
    assert p.returncode == 0 and "PASS" in out and "self.dropout_param['mode'] = 'test'" in out, out
    p, out = checked(student(tmp_path, MODE_KEPT.replace(' if self.mode == "train" else dY\n', "\n")))
    assert p.returncode == 1, out
    # (inverted dropout since session 38, whose classic-dropout finding FAILs the classic form this layer had)
    assert "backward multiplies by the mask a training forward left behind" in " ".join(out.split()), out
