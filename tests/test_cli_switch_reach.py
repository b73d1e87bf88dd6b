"""Session 12 (Y9, Y20, Y26, Z3, Z13, Y14, Y10): training switches forward reaches outside its arguments, found
by following forward into sub-layers and the functions it calls, set in both modes and put back.

Each class is checked through ``gradcheck check`` as a student runs it: the planted bug (a Dropout whose training
backward forgets the 1/(1-p) scale) passed before, its training branch never run; now it FAILs in training mode
and its correct twin PASSes in both modes, the header naming the switches set. Y10 runs the console script;
the others ``gradcheck.cli.main`` in this process (``test_cli.run_here``: the same parser, checks and report, the
layer in its sandbox process), which spares the start of a Python per check.
"""

import os
import sys

import pytest
from test_cli import both, run, run_here, student

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)

DROP = """
import os
from types import SimpleNamespace

import numpy as np
import cfgmod

CONFIG = {"train": False, "lr": 0.1}
_ACTIVE = False


def set_training(flag):
    global _ACTIVE
    _ACTIVE = flag


class Drop:
    def __init__(self, p=0.5, seed=0):
        self.p, self.rng, self.mask = p, np.random.default_rng(seed), None

    def forward(self, X, train=False):
        if not train:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * SCALE


class Net:
    def __init__(self):
        self.drop = Drop()
        INIT

    def forward(self, X):
        return self.drop.forward(X, TEST)

    def backward(self, dY):
        return self.drop.backward(dY)
"""
RIGHT, WRONG = "self.mask", "(self.mask > 0)"

#: (the switch as __init__ sets it, forward's test of it, how the header says it was set)
FORMS = {
    "Y9-sub-string": ("self.drop.mode = 'test'", "self.drop.mode == 'train'", "self.drop.mode = 'test', then 'train'"),
    "Y9-sub-dict": ("self.drop.bn_param = {'mode': 'test'}", "self.drop.bn_param['mode'] == 'train'",
                    "self.drop.bn_param['mode'] = 'test', then 'train'"),
    "Y20-module": ("pass", "cfgmod.TRAIN", "global cfgmod.TRAIN = False, then True"),
    "Y20-config": ("self.cfg = SimpleNamespace(training=False)", "self.cfg.training",
                   "self.cfg.training = False, then True"),
    "Z3-dict": ("pass", "CONFIG['train']", "global CONFIG['train'] = False, then True"),
    "Z3-env": ("pass", "os.environ.get('TRAINING') == '1'", "env TRAINING = '', then '1'"),
    "Z3-fitting": ("self.fitting = False", "self.fitting", "self.fitting = False, then True"),
    "Z3-state": ("self.state = 'inference'", "self.state == 'fitting'", "self.state = 'inference', then 'fitting'"),
    "Z3-set_training": ("set_training(False)", "_ACTIVE", "global _ACTIVE = False, then True"),
}


def net(tmp_path, form, right):
    init, test, _ = FORMS[form]
    student(tmp_path, "TRAIN = False\n", "cfgmod.py")  # a local module beside the student's file (Y20)
    return student(tmp_path, DROP.replace("INIT", init).replace("TEST", test)
                   .replace("SCALE", RIGHT if right else WRONG))


@pytest.mark.parametrize("form", FORMS)
def test_a_reached_switch_is_set_in_both_modes(tmp_path, form):
    f = net(tmp_path, form, right=False)
    p = run_here("check", f"{f}::Net", "--input-shape", "8,6")
    out = both(p)
    assert p.returncode == 1 and "FAIL: Net [training]" in out, out
    assert f"mode: eval and training ({FORMS[form][2]}): forward reads " in out, out
    f = net(tmp_path, form, right=True)
    p = run_here("check", f"{f}::Net", "--input-shape", "8,6")
    out = both(p)
    assert p.returncode == 0 and "mode: eval and training" in out, out
    p = run_here("check", f"{f}::Net", "--input-shape", "8,6", "--training")  # one mode asked: that one set
    assert p.returncode == 0 and "mode: training (" in both(p) and ": as --training asks" in both(p), both(p)


def test_fully_connected_net_bn_params_in_a_loop(tmp_path):
    """Y26: CS231n's FullyConnectedNet: each self.bn_params[i]['mode'], compared in batchnorm_forward."""
    body = open(os.path.join(HERE, "buggy_layers", "switches.py")).read()
    body = body[body.index("def batchnorm_forward"):body.index("# Z13")]
    f = student(tmp_path, "import numpy as np\n\n" + body)
    for cls, code in (("BNNet", 0), ("BNNetBug", 1)):
        p = run_here("check", f"{f}::{cls}", "--input-shape", "8,6")
        out = both(p)
        assert p.returncode == code, out
        assert ("eval: self.bn_params[0]['mode'] = 'test', self.bn_params[1]['mode'] = 'test'; training: "
                "self.bn_params[0]['mode'] = 'train', self.bn_params[1]['mode'] = 'train'") in out, out
    assert "FAIL: BNNetBug [training]" in out, out


SCALE = """
import numpy as np

class Scale:
    def __init__(self):
        self.w = np.linspace(0.5, 1.5, 6)

    def forward(self, X, training=False):
        self.X, self.training = X, training
        return X * self.w

    def backward(self, dY):
        self.dw = np.sum(dY * self.X, axis=0)
        return dY * self.w * (FACTOR if self.training else 1.0)
"""


def test_same_output_both_modes_backward_checked_in_both(tmp_path):
    """Z13: Y is the same in both modes; a bug in backward's training branch FAILs (it was checked in eval alone)."""
    p = run_here("check", f"{student(tmp_path, SCALE.replace('FACTOR', '2.0'))}::Scale", "--input-shape", "8,6")
    out = both(p)
    assert p.returncode == 1 and "FAIL: Scale [training]" in out, out
    assert "training=True gave the same output as training=False on this input, but backward may still branch " \
           "on the mode, so both modes are checked" in out, out
    p = run_here("check", f"{student(tmp_path, SCALE.replace('FACTOR', '1.0'))}::Scale", "--input-shape", "8,6")
    assert p.returncode == 0 and "backward was also checked with the training forward (it may branch on the " \
                                 "mode) and passed there" in both(p), both(p)


SUB = DROP.replace("class Net:", """class AttrDrop(Drop):
    def __init__(self):
        super().__init__()
        self.training = False

    def forward(self, X):
        return super().forward(X, self.training)


class Net:""").replace("self.drop = Drop()", "self.drop = AttrDrop()").replace(
    "def forward(self, X):\n        return self.drop.forward(X, TEST)",
    "def forward(self, X, training=False):\n        return self.drop.forward(X)").replace("INIT", "pass")


@pytest.mark.parametrize("extra", [(), ("--training",)])
def test_training_argument_and_sublayer_attribute_both_set(tmp_path, extra):
    """Y14: forward(X, training) does not pass it on; the sub-layer's own self.training is set with it."""
    student(tmp_path, "TRAIN = False\n", "cfgmod.py")
    p = run_here("check", f"{student(tmp_path, SUB.replace('SCALE', WRONG))}::Net", "--input-shape", "8,6", *extra)
    out = both(p)
    assert p.returncode == 1 and "FAIL: Net" in out, out
    assert "training: forward(X, training=True), self.drop.training = True" in out, out
    p = run_here("check", f"{student(tmp_path, SUB.replace('SCALE', RIGHT))}::Net", "--input-shape", "8,6", *extra)
    assert p.returncode == 0, both(p)


PROP = """
import numpy as np

class Dropout:
    def __init__(self, p=0.5):
        self.p, self.rng, self._training = p, np.random.default_rng(0), False

    @property
    def training(self):
        return self._training

    def forward(self, X):
        if not self.training:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * SCALE
"""


def test_read_only_training_property_is_set_through_what_it_reads(tmp_path):
    """Y10: a training property without a setter: gradcheck sets self._training (it failed with exit 3)."""
    p = run("check", f"{student(tmp_path, PROP.replace('SCALE', WRONG))}::Dropout", "--input-shape", "8,6")
    out = both(p)
    assert p.returncode == 1 and "FAIL: Dropout [training]" in out, out
    p = run("check", f"{student(tmp_path, PROP.replace('SCALE', RIGHT))}::Dropout", "--input-shape", "8,6")
    assert p.returncode == 0 and "mode: eval and training" in both(p), both(p)


@pytest.mark.parametrize("opt", ["--training", "--eval"])
def test_loss_with_a_mode_option_is_a_usage_error(tmp_path, opt):
    f = student(tmp_path, """
    import numpy as np

    class MSE:
        def forward(self, input, target):
            self.diff = input - target
            return np.mean(self.diff ** 2)

        def backward(self):
            return 2 * self.diff / self.diff.size
    """)
    p = run_here("check", f"{f}::MSE", "--loss", "--input-shape", "4,3", opt)
    assert p.returncode == 2 and f"{opt} picks a layer's training or eval forward; a loss (--loss) has no " \
                                  "training mode" in both(p), both(p)


def test_switches_are_put_back_after_the_check():
    """Every switch set for a mode is put back, the environment variable unset again."""
    from buggy_layers import diagnose, load
    from buggy_layers import switches as S

    from gradcheck.diagnose import diagnose_layer

    os.environ.pop("TRAINING", None)
    for key in ("CfgModuleNetBug", "ConfigDictNetBug", "EnvNetBug", "SetTrainingNetBug"):
        assert not diagnose(f"switches.py::{key}").passed
    assert (S.cfgmod.TRAIN, S.CONFIG["train"], S._ACTIVE) == (False, False, False)
    assert "TRAINING" not in os.environ
    for key, where in (("BNNet", lambda o: [b["mode"] for b in o.bn_params]),
                       ("SubParamNet", lambda o: o.drop.drop_param["mode"]), ("StateNet", lambda o: o.state),
                       ("PropDrop", lambda o: o._training)):
        layer, X, _ = load(f"switches.py::{key}")
        obj = getattr(layer, "obj", layer)
        before = where(obj)
        d = diagnose_layer(layer, X)
        assert d.passed and sorted(d.modes) == ["eval", "training"], d.report()
        assert where(obj) == before


ENV_DEFAULT_TRAINING = """
import os
import numpy as np


class Layer:
    def __init__(self, D=5):
        self.W, self.dW = np.linspace(0.5, 1.5, D), np.zeros(D)

    def forward(self, X):
        self.X = X
        return X * self.W * (2.0 if GET_SWITCH == TRAIN_WORD else 1.0)

    def backward(self, dY):
        f = 2.0 if GET_SWITCH == TRAIN_WORD else 1.0
        self.dW = (dY * self.X * f).sum(axis=0)
        return dY * self.W * (2.0 if GET_SWITCH == TRAIN_WORD else EVAL_SCALE)
"""


@pytest.mark.parametrize("get, train", [('os.environ.get("TRAINING", "1")', '"1"'),
                                        ('os.getenv("MODE", "train")', '"train"')])
def test_an_environment_switch_whose_unset_default_means_training_is_checked_in_eval(tmp_path, get, train):
    """tester12 H2: an unset variable was taken for eval, but get(NAME, "1") reads it as training: both 'modes'
    ran the training branch and a bug in the eval branch PASSed. Eval is now the variable set to ''."""
    src = ENV_DEFAULT_TRAINING.replace("GET_SWITCH", get).replace("TRAIN_WORD", train)
    f = student(tmp_path, src.replace("EVAL_SCALE", "0.5"))  # eval's dX should be dY * W
    p = run_here("check", f"{f}::Layer", "--input-shape", "4,5")
    assert p.returncode == 1 and "FAIL: Layer [eval]" in both(p), both(p)
    f = student(tmp_path, src.replace("EVAL_SCALE", "1.0"))
    p = run_here("check", f"{f}::Layer", "--input-shape", "4,5")
    assert p.returncode == 0 and "mode: eval and training" in both(p), both(p)
