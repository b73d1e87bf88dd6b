"""Session 40 (flags40): a layer's own boolean beside ``training`` is configuration, never the mode.

redteam39's side finding: ``if self.double and training:`` read beside forward's ``training`` argument was set to
its other value in training mode (session 14's F1, "a plain switch beside a training argument is set too"), by
``gradcheck check`` and in the grader's sandbox alike: check labelled its training rows ``self.double = True`` and
never checked the layer as built in training, and the grader changed the configuration the staff built (a student's
layer in the sandbox, the staff's reference in process). Now the layer as built is checked in each mode, the
switch's other value is a variant of its own (labelled with it, checked in each mode), and the grader grades the
layer as built.
"""

import importlib.util

import numpy as np
from test_cli import check_source

from gradcheck.grading.checks import layer_gradients
from gradcheck.sandbox import Sandbox

#: Right when ``self.double`` (2 X in training), wrong as built (``double=False``): X ** 2 in training, whose
#: backward forgets the 2 of 2 X. The old check ran training only with ``self.double = True``: a PASS.
AS_BUILT_BUG = """
import numpy as np

class Layer:
    def __init__(self, double=False):
        self.double, self.params, self.grads = double, {}, {}

    def forward(self, X, training=False):
        self.X, self.train = X, training
        if self.double and training:
            return 2.0 * X
        return X ** 2 if training else X

    def backward(self, dY):
        if self.double and self.train:
            return 2.0 * dY
        return dY * self.X if self.train else dY
"""

#: redteam39's flip_layers.A: the identity as built (``double=False``), 2 X in training when ``self.double``; its
#: backward is the identity's (right as built, wrong for the variant ``self.double=True`` in training).
DOUBLE = """
import numpy as np

class A:
    def __init__(self, double=False):
        self.double = double
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        if self.double and training:
            return 2 * X
        return X

    def backward(self, dY):
        return dY
"""


def test_the_layer_as_built_is_checked_in_training_mode(tmp_path):
    code, out = check_source(tmp_path, AS_BUILT_BUG, "Layer", "--input-shape", "4,3")
    assert code == 1, out
    assert "FAIL: Layer [training=True, self.double=False]: gradient mismatch in dX" in out, out
    assert "Layer [training=True, self.double=True] dX" in out, out  # the other value: a variant of its own
    assert "PASS" not in out, out


def test_the_other_value_is_a_variant_labelled_as_such_not_the_training_mode(tmp_path):
    code, out = check_source(tmp_path, DOUBLE, "A", "--input-shape", "3,2", "--training")
    assert "mode: training (forward(X, training=True)): as --training asks" in out, out
    assert "self.double = True" not in out, out  # the old header: "training: forward(X, training=True), self.double = True"
    assert "(self.double=False: as the layer was built; its other value a variant of its own, not the mode's)" in out
    assert "A [training=True, self.double=False] dX (3, 2)" in out and " ok " in out.split("[training=True, self.double=False] dX")[1][:60], out
    assert code == 1 and "FAIL: A [training=True, self.double=True]: gradient mismatch in dX" in out, out


class Identity:
    """The staff's reference: the identity, in either mode."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        return X

    def backward(self, dY):
        return dY


def _double_class(tmp_path):
    """DOUBLE's class imported from a file (the switches are read from its source)."""
    (tmp_path / "staff_double.py").write_text(DOUBLE)
    spec = importlib.util.spec_from_file_location("staff_double", tmp_path / "staff_double.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.A


def test_the_grader_grades_a_sandboxed_layer_as_built(tmp_path):
    (tmp_path / "layers.py").write_text(DOUBLE)
    X = np.random.default_rng(0).standard_normal((3, 2))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20, hostile=True) as sb:
        layer = sb.load_layer("layers.py", "A", {})
        np.testing.assert_array_equal(layer.forward(X, training=True), X)  # was 2 X: self.double set True
        v = layer_gradients(layer, X, Identity(), training=True, seed=0)
    assert v.passed, [p.message for p in v.parts if not p.passed]


def test_the_grader_leaves_the_staffs_reference_as_built(tmp_path):
    ref = _double_class(tmp_path)()
    X = np.random.default_rng(0).standard_normal((3, 2))
    v = layer_gradients(Identity(), X, ref, training=True, seed=0)
    assert ref.double is False  # was left True after grading
    assert v.passed, [p.message for p in v.parts if not p.passed]
