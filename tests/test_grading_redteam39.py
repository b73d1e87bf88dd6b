"""redteam39: a random layer's training gradient graded against a random reference (``grade.layer_gradients(...,
training=True)`` against ``manualprop.Dropout``) is judged by central differences of the student's own forward with
its draws held, and its output by the training mean over a probe batch of at least 400 samples. A hostile forward
told those calls from the test's own and kept the points of a wrong layer: F1, a dropout without its scale failing
on the probe batch (raising, a NaN, another shape: "not compared, no claim"); F2, a backward ``dX = dY`` beside a
forward answering the identity to the central differences' inputs. F3 (check and grade alike): a dropout reading p as
the probability of keeping an entry (CS231n's) keeps the mean, 30% of the entries scaled by 1/0.3. Now the test's own
call must show the reference's kind of mask (0 and its one scale) and a mask layer's gradient (dY * Y / X).
In-process, the hostile submissions as tests (redteam39-findings.md graded them in the sandbox, both levels)."""

import numpy as np
import pytest
from test_cli import check_source
from test_cli_random_mean_s37 import KEEP

import manualprop as mp
from gradcheck.grading.checks import layer_gradients


class Dropout:
    """Inverted dropout, p the probability of dropping an entry: right."""

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng, self.params, self.grads = p, np.random.default_rng(seed), {}, {}

    def draw(self, X):
        return (self.rng.random(X.shape) >= self.p) / (1 - self.p)

    def forward(self, X, training=False):
        if not training:
            return X
        self.mask = self.draw(X)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class NoScaleDodging(Dropout):
    """F1: the scale 1/(1 - p) left out, forward and backward agreeing; on the mean's probe batch (400 rows or more) it
    raises, returns a NaN or one row fewer."""

    how = "raise"

    def draw(self, X):
        return (self.rng.random(X.shape) >= self.p) * 1.0

    def forward(self, X, training=False):
        if training and len(X) >= 400 and self.how == "raise":
            raise MemoryError("batch too large")
        Y = super().forward(X, training)
        if training and len(X) >= 400:
            Y = Y[:-1] if self.how == "shape" else np.where(np.arange(Y.size).reshape(Y.shape) == 0, np.nan, Y)
        return Y


class IdentityToDifferences(Dropout):
    """F2: backward forgets the mask and the scale (dX = dY); forward answers the identity to an input within 1e-3 of
    the last one it drew a mask for (the held check's X + h v), so central differences agree with dX = dY."""

    def forward(self, X, training=False):
        last = getattr(self, "last", None)
        if training and last is not None and X.shape == last.shape and 0 < np.abs(X - last).max() < 1e-3:
            return X * 1.0
        self.last = np.array(X, dtype=float)
        return super().forward(X, training)

    def backward(self, dY):
        return dY


class KeepProb(Dropout):
    """F3: p read as the probability of KEEPING an entry, scaled by 1/p: at p = 0.3 it keeps 30% of the entries scaled
    by 3.33 where manualprop.Dropout(0.3) keeps 70% scaled by 1.43; the mean is X for both."""

    def draw(self, X):
        return (self.rng.random(X.shape) < self.p) / self.p


#: F3's layer as a file for ``gradcheck check``: test_cli_random_mean_s37's keep-probability dropout (numpy's global
#: generator, which check rewinds) with its argument named p, as manualprop.Dropout's, so the reference is built at it
KEEP_PROB = KEEP.replace("keep_prob", "p").replace("SCALE", "self.p")


def _graded(layer):
    X = np.random.default_rng(0).standard_normal((6, 5))
    v = layer_gradients(layer, X, mp.Dropout(0.3, rng=2), training=True, seed=7)
    return v, " ".join(p.message for p in v.parts)


def test_a_right_dropout_keeps_its_points():
    v, msg = _graded(Dropout(0.3))
    assert v.passed, msg
    assert any("the training output's mean compared with Dropout's" in n for n in v.notes), v.notes


@pytest.mark.parametrize("how", ["raise", "nan", "shape"])
def test_a_dropout_without_its_scale_failing_on_the_probe_batch_loses_the_points(how):
    layer = NoScaleDodging(0.3)
    layer.how = how
    v, msg = _graded(layer)
    assert not v.passed  # before: passed (the probe not compared, the gradient judged by its own forward)
    assert "in training mode, NoScaleDodging's output keeps 70% of the entries scaled by 1; Dropout's keeps" in msg, msg
    assert "of the entries scaled by 1.429: Y / X is 0 or one scale" in msg, msg


def test_a_backward_forgetting_the_mask_loses_the_points_though_forward_answers_the_differences():
    v, msg = _graded(IdentityToDifferences(0.3))
    assert not v.passed  # before: passed (its central differences were the identity's)
    assert msg.startswith("dX is not dY * Y / X for the output Y your forward gave just before this backward"), msg
    assert "Does backward apply the mask and the scale forward drew?" in msg


def test_a_dropout_keeping_p_of_the_entries_fails_in_grade_and_in_check(tmp_path):
    v, msg = _graded(KeepProb(0.3))
    assert not v.passed  # before: passed (the means agree)
    assert "KeepProb's output keeps 30% of the entries scaled by 3.333; Dropout's keeps" in msg, msg
    assert "A scale of 1/p is p read as the probability of keeping an entry" in msg
    code, out = check_source(tmp_path, KEEP_PROB, "Dropout", "--input-shape", "6,5", "--init", '{"p": 0.3}', "--training",
                             "--reference", "manualprop.Dropout")
    text = " ".join(out.split())
    assert code == 1, text  # before: exit 0
    assert "FAIL: Dropout: a random forward's kept scale differs from the reference" in text, text
    assert "Dropout's output keeps 30% of the entries scaled by 3.333; manualprop.Dropout's keeps" in text, text


class LinearDropout:
    """A model Linear(5, 4) -> ReLU -> Dropout(p), right; ``cheat``: its backward's dX is twice the right one, and its
    forward answers an input within 1e-3 of the last with the linear map that dX is the adjoint of (F4)."""

    def __init__(self, p=0.3, seed=0, cheat=False):
        r = np.random.default_rng(seed)
        self.params = {"0.W": r.standard_normal((4, 5)), "0.b": np.zeros(4)}
        self.grads, self.rng, self.p, self.cheat, self.last = {}, np.random.default_rng(seed + 1), p, cheat, None

    def forward(self, X, training=False):
        W, b = self.params["0.W"], self.params["0.b"]
        if self.cheat and training and self.last is not None and 0 < np.abs(X - self.last).max() < 1e-3:
            return self.Y + 2 * (((X - self.last) @ W.T) * (self.Z > 0)) * self.mask
        self.X, self.last, self.Z = X, np.array(X, dtype=float), X @ W.T + b
        self.mask = (self.rng.random(self.Z.shape) >= self.p) / (1 - self.p) if training else 1.0
        self.Y = np.maximum(self.Z, 0) * self.mask
        return self.Y

    def backward(self, dY):
        dZ = dY * self.mask * (self.Z > 0)
        self.grads = {"0.W": dZ.T @ self.X, "0.b": dZ.sum(axis=0)}
        return (2 if self.cheat else 1) * dZ @ self.params["0.W"]


def _model_graded(layer, seed):
    X = np.random.default_rng(100 + seed).standard_normal((6, 5))
    ref = mp.Sequential([mp.Linear(5, 4, rng=1), mp.ReLU(), mp.Dropout(0.3, rng=seed)])
    return layer_gradients(layer, X, ref, training=True, seed=seed)


def test_a_models_wrong_backward_loses_its_points_though_forward_answers_the_differences():
    v = _model_graded(LinearDropout(cheat=True), 0)
    parts = {p.name: p for p in v.parts}
    assert not parts["dX"].passed  # before: passed (the held check's central differences were the cheat's)
    assert "dX averaged over 32 training calls of this test's input and dY (each a new draw) is" in parts["dX"].message
    assert parts["d0.W"].passed and parts["d0.b"].passed, [p.message for p in v.parts]


@pytest.mark.parametrize("seed", [10, 13, 15, 27])
def test_a_right_model_holding_a_dropout_keeps_its_points(seed):
    """F5: at these seeds the ReLU leaves few entries nonzero, and two forwards of the reference (10, 13, 15) or three
    of the student's model (27) agreed: read as deterministic, the right model's gradients were compared with the
    reference's own mask."""
    v = _model_graded(LinearDropout(seed=seed), seed)
    assert v.passed, [p.message for p in v.parts]  # before: failed
