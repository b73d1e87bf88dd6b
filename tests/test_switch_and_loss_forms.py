"""Issue 10 (verify9's X13, X11): forms of a training switch and of a loss's call that gradcheck did not read.

X13: a mode string compared in a helper method forward passes it to, with a module constant (``mode == TRAIN``), in
a ``match`` statement, or an Enum member (``mode=Mode.EVAL``): the training word was guessed ("train"), so the
training branch never ran and a Dropout missing its 1/(1-p) PASSed (tests/buggy_layers: DropoutMode*NoScale).
X11: a loss ``forward(self, *, y_pred, y_true)`` got its arrays by position (TypeError, exit 3), a
``backward(self, *, grad_output)`` got nothing (TypeError), ``backward(self, dout=None)`` got its None default.
"""

import enum
import importlib.util

import numpy as np
import pytest
from test_cli import both, run, run_here, student

from gradcheck import _adapters as AD

FORMS = '''
import enum
import numpy as np

FIT = "fit"


class Mode(enum.Enum):
    LEARN = "learn"
    INFERENCE = "inference"


class Base:
    def _drop(self, X, on):
        self.on = on
        return X * 2.0 if on else X

    def backward(self, dY):
        return dY * 2.0 if self.on else dY


class Helper(Base):
    def forward(self, X, mode="predict"):
        return self._apply(X, mode)

    def _apply(self, X, how):
        return self._drop(X, _is_fit(how))


def _is_fit(m):
    return m == "fit"


class Const(Base):
    def forward(self, X, mode="predict"):
        return self._drop(X, mode == FIT)


class Attr(Base):
    TRAINING = "fit"

    def forward(self, X, mode="predict"):
        return self._drop(X, mode == self.TRAINING)


class Match(Base):
    def forward(self, X, mode="test"):
        match mode:
            case "fit" | "learn":
                return self._drop(X, True)
            case _:
                return self._drop(X, False)


class Enum(Base):
    def forward(self, X, mode=Mode.INFERENCE):
        return self._drop(X, mode is Mode.LEARN)
'''


@pytest.fixture(scope="module")
def forms(tmp_path_factory):
    path = tmp_path_factory.mktemp("forms") / "forms.py"  # a file: forward's source is read
    path.write_text(FORMS)
    spec = importlib.util.spec_from_file_location("switch_forms", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("cls, words, train", [
    ("Helper", ["fit"], "fit"),  # two calls deep: self._apply(X, mode), then _is_fit(how)
    ("Const", ["fit"], "fit"),
    ("Attr", ["fit"], "fit"),
    ("Match", ["fit", "learn"], "fit"),
])
def test_mode_words_read_past_helpers_constants_and_match(forms, cls, words, train):
    obj = getattr(forms, cls)()
    assert AD.mode_words(obj.forward, "mode") == words
    mk = AD.mode_keyword(obj.forward)
    assert mk[0] == "mode" and mk[2] == train
    obj.forward(np.ones((2, 3)), **AD._training_kw(obj.forward, True, mk))
    assert obj.on is True  # the training branch ran
    obj.forward(np.ones((2, 3)), **AD._training_kw(obj.forward, False, mk))
    assert obj.on is False


def test_an_enum_mode_takes_its_own_members(forms):
    obj = forms.Enum()
    assert AD.mode_keyword(obj.forward) == ("mode", forms.Mode.INFERENCE, forms.Mode.LEARN)
    _, info = AD.adapt(obj, [np.ones((2, 3))])
    assert info["mode_keyword"] == ["mode", "Mode.INFERENCE", "Mode.LEARN"]
    obj.forward(np.ones((2, 3)), **AD._training_kw(obj.forward, True, AD.mode_keyword(obj.forward)))
    assert obj.on is True


def test_an_enum_of_no_mode_words_is_an_unread_switch():
    class Color(enum.Enum):
        RED = 1
        BLUE = 2

    class L:
        def forward(self, X, mode=Color.RED):
            return X

        def backward(self, dY):
            return dY
    assert AD.mode_keyword(L().forward) is None and AD.unread_flag(L().forward) == ("mode", Color.RED)


LOSSES = """
import numpy as np

class KwOnly:
    def forward(self, *, y_pred, y_true):
        self.diff = y_pred - y_true
        return np.mean(self.diff ** 2)

    def backward(self, *, grad_output):
        return SIGN * grad_output * 2 * self.diff / self.diff.size

class DoutNone:
    def forward(self, y_pred, y_true):
        self.diff = y_pred - y_true
        return np.mean(self.diff ** 2)

    def backward(self, dout=None):
        return SIGN * dout * 2 * self.diff / self.diff.size
"""


@pytest.mark.parametrize("cls, header", [
    ("KwOnly", ["loss: forward(*, y_pred=y_pred, y_true=y_true)", "backward: backward(grad_output=1.0)"]),
    ("DoutNone", ["loss: forward(y_pred=y_pred, y_true=y_true)", "backward: backward(dout=1.0)"]),
])
@pytest.mark.parametrize("sign", [1, -1])
def test_keyword_only_loss_and_upstream_forms_are_called(tmp_path, cls, header, sign):
    """X11: exit 3 "forward() takes 1 positional argument but 3 were given", "missing 1 required keyword-only
    argument", "unsupported operand type(s) for *: 'NoneType'"; now bound and checked, a sign bug FAILs."""
    f = student(tmp_path, LOSSES.replace("SIGN", str(sign)), f"loss{sign + 1}.py")
    through = run if (cls, sign) == ("KwOnly", 1) else run_here  # one case through the console script
    p = through("check", f"{f}::{cls}", "--loss", "--input-shape", "4,3")
    out = both(p)
    assert all(h in out for h in header), out
    if sign == 1:
        assert p.returncode == 0 and f"PASS: {cls}" in out, out
    else:
        assert p.returncode == 1 and "dy_pred has the wrong sign" in out, out


def test_star_args_loss_header_shows_star_args():
    class Star:
        def forward(self, *args):
            return 0.0

        def backward(self, dout=1.0):
            return 0.0
    bound = AD.BoundLoss(Star())
    assert bound.info["call"] == "forward(*args) with (y_true, y_pred)" and bound.upstream == "dout"


@pytest.mark.parametrize("cls, name, start", [
    ("DropoutParamMode", "self.dropout_param['mode']", "test"),  # CS231n's dict (tester10 T3)
    ("DropoutModuleFlag", "global IN_TRAINING", False),  # a module's flag
    ("DropoutInTrain", "self.in_train", False),  # a bool named as a switch
])
def test_switches_outside_the_arguments_are_set_and_put_back(cls, name, start):
    """tester10 T3: "forward has no training argument" and a training-mode bug PASSed with no warning."""
    from tests.buggy_layers import activations

    obj = getattr(activations, cls)()
    mk = AD.mode_keyword(obj.forward)
    assert mk[0] == name, mk
    layer, info = AD.adapt(obj, [np.ones((4, 3))])
    assert info["mode_keyword"][0] == name and AD._switch_value(obj.forward, name) == start
    layer.forward(np.ones((4, 3)), training=True)
    assert obj.mask is not None  # the training branch ran
    assert AD._switch_value(obj.forward, name) == start  # and the switch is as the student left it


def test_a_forward_reading_star_args_is_warned_as_an_unread_switch():
    class BN:
        def forward(self, x, *args):
            return x * 2 if args and args[0] else x

        def backward(self, dY):
            return dY
    _, info = AD.adapt(BN(), [np.ones((4, 3))])
    assert info["unread_flag"] == ["*args", "()"]

    class Stack:  # the inputs themselves come through *xs: no switch
        def forward(self, *xs):
            return xs[0] + xs[1]

        def backward(self, dY):
            return dY, dY
    _, info = AD.adapt(Stack(), [np.ones((4, 3)), np.ones((4, 3))])
    assert "unread_flag" not in info


def test_a_sublayers_training_attribute_is_set_and_put_back():
    """tester10 T12: a model without train()/eval() whose Dropout reads self.training (set by the student's loop):
    "forward has no training argument", the training branch never ran, its bug PASSed."""
    from tests.buggy_layers import activations

    obj = activations.NetSubTraining()
    assert AD.mode_keyword(obj.forward) == ("self.drop.training", False, True)
    layer, info = AD.adapt(obj, [np.ones((4, 3))])
    assert info["mode_keyword"] == ["self.drop.training", "False", "True"] and obj.drop.training is False
    layer.forward(np.ones((4, 3)), training=True)
    assert obj.drop.mask is not None and obj.drop.training is False  # ran in training mode, then put back
    two = activations.NetSubTraining()
    two.more = [activations.DropoutAttr()]
    assert AD.mode_keyword(two.forward)[0] == "self.drop.training, self.more[0].training"
    AD._training_kw(two.forward, True, AD.mode_keyword(two.forward))
    assert two.drop.training is True and two.more[0].training is True
