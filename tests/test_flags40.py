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
import pytest
from test_cli import check_source

import manualprop as mp
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


# --- redteam39's residual: a dropout keeping the wrong share at the right scale, refusing the mean's probe batch ---


class _Dropout:
    """Inverted dropout, p the probability of dropping an entry; ``keep`` draws the mask (right: rand >= p)."""

    def __init__(self, p=0.3, seed=0):
        self.p, self.rng, self.params, self.grads = p, np.random.default_rng(seed), {}, {}

    def keep(self, shape):
        return self.rng.random(shape) >= self.p

    def forward(self, X, training=False):
        if not training:
            return X
        self.mask = self.keep(X.shape) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class WrongShareDodging(_Dropout):
    """Keeps p of the entries (rand < p: 30% at p = 0.3) scaled by the right 1/(1 - p), and raises on the mean's probe
    batch (400 rows or more): its call shows 0 and the right scale, its backward that call's mask."""

    def keep(self, shape):
        return self.rng.random(shape) < self.p

    def forward(self, X, training=False):
        if training and len(X) >= 400:
            raise MemoryError("batch too large")
        return super().forward(X, training)


class ExactCount(_Dropout):
    """Right, written otherwise: keeps exactly round((1 - p) n) entries at each call (a permutation), a share with no
    spread at all."""

    def keep(self, shape):
        n = int(np.prod(shape))
        flat = np.zeros(n, dtype=bool)
        flat[self.rng.permutation(n)[:round((1 - self.p) * n)]] = True
        return flat.reshape(shape)


def _graded(layer, p=0.3, seed=3):
    X = np.random.default_rng(seed).standard_normal((6, 5))
    return layer_gradients(layer, X, mp.Dropout(p, rng=seed + 1), training=True, seed=seed)


def test_a_wrong_share_at_the_right_scale_fails_though_it_refuses_the_probe_batch():
    v = _graded(WrongShareDodging(0.3))
    assert not v.passed  # main: passed (the mean's probe refused, "not compared, no claim")
    msg = v.parts[0].message
    assert "keeps" in msg and "of the entries over 17 training forwards of this test's input" in msg, msg
    assert "where Dropout keeps" in msg and "the share of entries kept is not the reference's" in msg, msg


@pytest.mark.parametrize("make", [_Dropout, ExactCount, lambda p, seed: mp.Dropout(p, rng=seed)],
                         ids=["rand>=p", "exact-count", "manualprop"])
@pytest.mark.parametrize("p", [0.3, 0.8])
def test_right_dropouts_keep_their_points(make, p):
    """(A guard, passing on main too; false FAILs over 40 seeds: /work/wt/notes/flags40/share_full40.py.)"""
    v = _graded(make(p, seed=10), p=p, seed=1)
    assert v.passed, [q.message for q in v.parts if not q.passed]
