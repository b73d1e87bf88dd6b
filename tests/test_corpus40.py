"""Public numpy code corpus40 ran through `gradcheck check` (session 40; its harness, outside the tree, reproduces
each finding on the upstream code itself). Written here in those layouts, not copied:

- H1: a layer holding a sub-layer whose forward branches on a string kept in a settings dict, built at a value that
  is the only one its source compares with (ElefHead/numpy-cnn's ``Pooling``: ``self.params['mode'] ==
  'average'``, else max, wrapped as gradcheck's usage message says): gradcheck's own TypeError while reading that
  switch was reported as "Wrapped.forward ... raised TypeError: 'NoneType' object is not subscriptable" (exit 3);
  then the constructor's default ('max') is the switch's other value, and both branches are checked;
- H2: a string setting in a settings dict set from a constructor argument (``self.params['padding'] = padding``,
  'same' or else valid) is the layer's configuration as built, as the attribute ``self.padding`` is: it was NOT
  CHECKED (exit 3) at 'same' and checked as "eval and training" at 'valid'.
"""

import os

from test_cli import check_source

from gradcheck import _adapters as AD
from gradcheck import _sandbox_child, _switch_reach

# windows of width 2 reduced by max, or by their mean: its mode (a name gradcheck reads as a switch's) in a dict of
# settings, set from the constructor's argument
POOL = """
import numpy as np

class Pair:
    def __init__(self, mode="max"):
        self.opts = {"size": 2, "mode": mode}

    def forward(self, X):
        n, d = X.shape
        self.win = X.reshape(n, d // 2, 2)
        if self.opts["mode"] == "mean":
            return self.win.mean(-1)
        return self.win.max(-1)

    def backward(self, dY):
        n, m = dY.shape
        if self.opts["mode"] == "mean":
            return np.repeat(dY / 2, 2, axis=1)
        hit = self.win == self.win.max(-1, keepdims=True)
        return (hit * dY[..., None]).reshape(n, 2 * m) * MAX_SCALE


class Block:
    def __init__(self, mode="max"):
        self.inner = Pair(mode)
        self.params, self.grads = {}, {}

    def forward(self, X):
        return self.inner.forward(X)

    def backward(self, dY):
        return self.inner.backward(dY)
"""


def test_sub_layer_dict_kind_built_at_its_only_compared_value_checks_both_branches(tmp_path):
    code, out = check_source(tmp_path, POOL.replace("MAX_SCALE", "1"), "Block", "--input-shape", "3,6",
                             "--init", '{"mode": "mean"}')
    assert code == 0, out
    assert "NoneType" not in out and "raised" not in out
    assert "self.inner.opts['mode'] = 'mean', then 'max'" in " ".join(out.split())
    # the max branch, which the built value does not select, is checked: a wrong one FAILs
    code, out = check_source(tmp_path, POOL.replace("MAX_SCALE", "2"), "Block", "--input-shape", "3,6",
                             "--init", '{"mode": "mean"}', file="bad.py")
    assert code == 1, out
    assert "FAIL" in out and "[self.inner.opts['mode']='max']" in out


def test_an_error_of_gradcheck_code_is_not_blamed_on_the_submission(tmp_path):
    try:
        _switch_reach._last(None)  # innermost frame in gradcheck's switch reader, not in the adapters' module
    except AttributeError as exc:
        assert _sandbox_child._adapters_own(AD, exc, str(tmp_path))
    student = tmp_path / "mine.py"
    student.write_text("def f():\n    return None.strip()\n")
    space = {}
    exec(compile(student.read_text(), os.path.realpath(student), "exec"), space)
    try:
        space["f"]()
    except AttributeError as exc:
        assert not _sandbox_child._adapters_own(AD, exc, str(tmp_path))


# a sum over windows of width 3, the input padded by one on each side when 'same'; the setting in a dict of settings
PAD = """
import numpy as np

class Window3:
    def __init__(self, padding="same"):
        self.settings = {"padding": padding, "width": 3}

    def forward(self, X):
        if self.settings["padding"] == "same":
            X = np.pad(X, ((0, 0), (1, 1)))
        self.Xp = X
        m = X.shape[1] - 2
        return X[:, :m] + 2.0 * X[:, 1:m + 1] - X[:, 2:m + 2]

    def backward(self, dY):
        m = dY.shape[1]
        dXp = np.zeros_like(self.Xp)
        dXp[:, :m] += dY
        dXp[:, 1:m + 1] += 2.0 * dY
        dXp[:, 2:m + 2] -= dY
        return dXp[:, 1:-1] * SAME_SCALE if self.settings["padding"] == "same" else dXp
"""


def test_dict_string_setting_set_from_the_constructor_is_configuration_as_built(tmp_path):
    code, out = check_source(tmp_path, PAD.replace("SAME_SCALE", "1"), "Window3", "--input-shape", "3,6",
                             "--init", '{"padding": "same"}')
    flat = " ".join(out.split())
    assert code == 0, out
    assert "NOT CHECKED" not in out
    assert "forward branches on self.settings['padding'], the layer's configuration as built" in flat
    code, out = check_source(tmp_path, PAD.replace("SAME_SCALE", "1"), "Window3", "--input-shape", "3,6",
                             "--init", '{"padding": "valid"}', file="valid.py")
    flat = " ".join(out.split())
    assert code == 0, out
    assert "eval and training" not in flat and "[training]" not in out
    assert "check the other with --init '{\"padding\": \"same\"}'" in flat
    code, out = check_source(tmp_path, PAD.replace("SAME_SCALE", "0.5"), "Window3", "--input-shape", "3,6",
                             "--init", '{"padding": "same"}', file="bad.py")
    assert code == 1 and "FAIL" in out, out


# a softmax regression whose forward returns (loss, accuracy) and stores its weight's gradient itself (the model
# protocol of Georgia Tech CS7643's first assignment), without a backward
MODEL = """
import numpy as np

class Softmax1:
    def __init__(self, n_in=6, n_cls=3):
        self.weights = {"W1": np.random.default_rng(0).standard_normal((n_in, n_cls))}
        self.gradients = {"W1": np.zeros((n_in, n_cls))}

    def forward(self, X, y, mode="train"):
        z = X @ self.weights["W1"]
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        n = len(y)
        loss = -np.log(p[np.arange(n), y]).mean()
        if mode == "train":
            p[np.arange(n), y] -= 1
            self.gradients["W1"] = X.T @ p / n
        return loss, float((z.argmax(1) == y).mean())
"""


def test_a_model_storing_its_gradients_in_forward_is_refused_for_what_it_lacks(tmp_path):
    code, out = check_source(tmp_path, MODEL, "Softmax1", "--input-shape", "4,6", "--targets", "labels:3")
    flat = " ".join(out.split())
    assert code == 2, out
    assert "Softmax1 has no backward()" in flat and "storing self.gradients" in flat
    assert "a training switch, not targets" not in flat
