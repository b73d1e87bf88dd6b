"""Session 45: outside44's and verify44b's caught-but-unnamed bugs named by kind (one reading per kind, each
confirmed by recomputing the suspected wrong gradient): a constant factor that is a count of the input's shape, a
skip path added twice, an ELU/SELU/leaky ReLU branch slip, the product rule dropped, an embedding loop's buffered +=,
a size kept from the first call. Each layer's backward changes one thing from the right one (``# BUG``)."""
import numpy as np
import pytest

from gradcheck.diagnose import diagnose_layer


def _said(d):
    return " ".join(d.sentence().split())


class _Elementwise:
    """An activation ``Y = f(X)``; ``bug`` picks backward's local derivative."""

    params, grads = {}, {}
    LAM, ALP = 1.0507, 1.67326

    def __init__(self, kind):
        self.kind = kind

    def forward(self, X):
        self.X, k = X, self.kind
        if k == "elu":
            self.Y = np.where(X > 0, X, 0.7 * np.expm1(np.minimum(X, 0)))
        elif k == "selu":
            self.Y = self.LAM * np.where(X > 0, X, self.ALP * np.expm1(np.minimum(X, 0)))
        elif k == "leaky":
            self.Y = np.where(X > 0, X, 0.01 * X)
        else:  # swish
            self.s = 1 / (1 + np.exp(-X))
            self.Y = X * self.s
        return self.Y

    def backward(self, dY):
        X, Y, k = self.X, self.Y, self.kind
        if k == "elu":
            return dY * np.where(X > 0, 1.0, Y + 1)  # BUG: Y + alpha (alpha = 0.7)
        if k == "selu":
            return dY * np.where(X > 0, 1.0, self.LAM * self.ALP * np.exp(X))  # BUG: LAM where X > 0
        if k == "leaky":
            return dY * np.where(X > 0, 0.01, 1.0)  # BUG: the slopes swapped
        return dY * self.s  # BUG: s + X * s * (1 - s)


@pytest.mark.parametrize("kind,code", [("elu", "elu-alpha-one"), ("selu", "selu-scale-missing"),
                                       ("leaky", "leaky-slopes-swapped"), ("swish", "product-rule-dropped")])
def test_activation_branch_slips_are_named(kind, code):
    """outside44 ELUNoAlpha, SELUNoScale, LeakyReLUSwapped, SwishSigmoidOnly/MishNoInner: 'no known bug pattern'."""
    d = diagnose_layer(_Elementwise(kind), (6, 5), twin=None)
    assert not d.passed and d.codes[0] == code, _said(d)


class _SizeScaled:
    """A global average pool (N, C, H, W) -> (N, C), a nearest upsampling by 2, or X * sqrt(D) + a constant."""

    params, grads = {}, {}

    def __init__(self, kind, bug=True):
        self.kind, self.bug = kind, bug

    def forward(self, X):
        self.shape = X.shape
        if self.kind == "gap":
            return X.mean(axis=(2, 3))
        if self.kind == "up":
            return np.repeat(np.repeat(X, 2, axis=2), 2, axis=3)
        return X * np.sqrt(X.shape[-1]) + 0.5

    def backward(self, dY):
        N, C, *_ = self.shape
        if self.kind == "gap":
            dX = np.broadcast_to(dY[:, :, None, None], self.shape).copy()
            return dX if self.bug else dX / (self.shape[2] * self.shape[3])  # BUG: no / (H * W)
        if self.kind == "up":
            blocks = dY.reshape(N, C, self.shape[2], 2, self.shape[3], 2)
            return blocks.mean(axis=(3, 5)) if self.bug else blocks.sum(axis=(3, 5))  # BUG: mean for sum
        return dY if self.bug else dY * np.sqrt(self.shape[-1])  # BUG: sqrt(D) left out


@pytest.mark.parametrize("kind,shape,words", [
    ("gap", (2, 3, 4, 5), "20 = 4 x 5, from the sizes of axes 2 and 3 of X"),
    ("up", (2, 2, 3, 4), "0.25 = 1/4, from the outputs per input"),
    ("scale", (3, 4, 6), "= 1/sqrt(6), from the size of axis 2 of X")])
def test_a_factor_that_is_a_count_of_the_input_shape_is_named(kind, shape, words):
    """outside44 gap_nodiv, gap_divH, up_avg, ScaledSinusoidNoScale: 'a constant factor is wrong somewhere'; the
    count is named and confirmed at a grown input (the right layers PASS)."""
    d = diagnose_layer(_SizeScaled(kind), shape, twin=None)
    said = _said(d)
    assert not d.passed and d.codes[0] == "factor-axis-sizes" and words in said, said
    assert diagnose_layer(_SizeScaled(kind, bug=False), shape, twin=None).passed


class _ResidualTwice:
    """Y = X + tanh(X W); backward adds dY twice."""

    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((5, 5)) / 3}
        self.grads = {"W": np.zeros((5, 5))}

    def forward(self, X):
        self.X, self.h = X, np.tanh(X @ self.params["W"])
        return X + self.h

    def backward(self, dY):
        dz = dY * (1 - self.h ** 2)
        self.grads["W"] = self.X.T @ dz
        return 2 * dY + dz @ self.params["W"].T  # BUG: dY + ...


def test_a_skip_path_added_twice_is_named():
    """outside44 ResidualSkipTwice (its sibling, the skip missing, was named)."""
    d = diagnose_layer(_ResidualTwice(), (6, 5), twin=None)
    assert not d.passed and d.codes[0] == "skip-path-twice", _said(d)


class _EmbeddingRowLoop:
    """ids (N, T) -> W[ids]; backward loops over rows with a buffered += (karpathy/nn-zero-to-hero#57)."""

    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((5, 3))}
        self.grads = {"W": np.zeros((5, 3))}

    def forward(self, ids):
        self.ids = ids
        return self.params["W"][ids]

    def backward(self, dY):
        self.grads["W"] = np.zeros((5, 3))
        for k in range(self.ids.shape[0]):
            self.grads["W"][self.ids[k]] += dY[k]  # BUG: np.add.at
        return None


def test_an_embedding_loop_with_a_buffered_add_is_named():
    """outside44 EmbeddingRowLoop/EmbeddingTimeLoop: 'no known bug pattern'."""
    ids = np.array([[0, 1, 1, 2, 3, 0], [4, 4, 2, 1, 0, 3], [2, 2, 2, 0, 1, 4], [3, 1, 0, 3, 2, 2]])
    d = diagnose_layer(_EmbeddingRowLoop(), ids, twin=None)
    said = _said(d)
    assert not d.passed and d.codes[0] == "repeated-index-loop" and "axis 0" in said, said


class _StaleN:
    """A batch norm without affine whose backward keeps the first forward's batch size (verify44b F7)."""

    params, grads = {}, {}

    def forward(self, X):
        if not hasattr(self, "N"):
            self.N = X.shape[0]  # BUG: the first batch's size, kept
        self.s = np.sqrt(X.var(0, keepdims=True) + 1e-5)
        self.xh = (X - X.mean(0, keepdims=True)) / self.s
        return self.xh

    def backward(self, dY):
        n = self.N
        return (dY - dY.sum(0, keepdims=True) / n - self.xh * (dY * self.xh).sum(0, keepdims=True) / n) / self.s


def test_a_size_kept_from_the_first_call_is_not_called_the_other_axis():
    """verify44b F7: right at 5 x 5, wrong at 6 x 5 and at 6 x 6 (a size from the other axis passes there)."""
    d = diagnose_layer(_StaleN(), (5, 5), twin=None)
    said = _said(d)
    assert not d.passed and d.codes[0] == "size-kept" and "(6, 6)" in said, said
