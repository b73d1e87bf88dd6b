"""outside44 H1: drawn ids repeat within a line along each axis, so an embedding backward that loops over rows
(karpathy/nn-zero-to-hero#57: ``for k: dC[Xb[k]] += demb[k]``) or over time steps with numpy's buffered
fancy-index add inside cannot PASS on a large vocabulary, where the ids drawn repeated only across lines."""
import numpy as np

from gradcheck._validation import index_inputs


def _loop_add(ids, dY, axis):
    """The buffered add of each line along ``axis``: a repeat within a line keeps one of its rows."""
    dW = np.zeros((int(ids.max()) + 1, dY.shape[-1]))
    for k in range(ids.shape[axis]):
        i = ids[k] if axis == 0 else ids[:, k]
        dW[i] += dY[k] if axis == 0 else dY[:, k]
    return dW


def test_drawn_ids_repeat_within_rows_and_time_steps():
    """(4, 3) ids from 100 rows: the seeds 0-5 all drew repeats across rows alone (before the fix), so both loops
    agreed with np.add.at; now each loop loses a repeat on every seed."""
    for shape in ((4, 3), (8, 5), (2, 6)):
        for seed in range(6):
            ids = index_inputs(shape, {0: 100}, seed)
            dY = np.random.default_rng(seed).standard_normal(shape + (2,))
            right = np.zeros((int(ids.max()) + 1, 2))
            np.add.at(right, ids, dY)
            for axis in (0, 1):
                assert not np.allclose(_loop_add(ids, dY, axis), right), (shape, seed, axis)
    assert index_inputs((5,), {0: 1000}, 0).shape == (5,)



class _RMSNormAxis1:
    """RMS norm over the last axis of (N, T, D) whose backward reads D as X.shape[1] (the 2-D habit)."""

    def __init__(self):
        self.params = {"gamma": np.linspace(0.5, 1.5, 5)}
        self.grads = {"gamma": np.zeros(5)}

    def forward(self, X):
        self.X = X
        self.r = np.sqrt((X ** 2).mean(axis=-1, keepdims=True) + 1e-6)
        return self.params["gamma"] * X / self.r

    def backward(self, dY):
        self.grads["gamma"] = (dY * self.X / self.r).sum(axis=(0, 1))
        dXh = dY * self.params["gamma"]
        D = self.X.shape[1]
        return dXh / self.r - self.X * (dXh * self.X).sum(axis=-1, keepdims=True) / (D * self.r ** 3)


def test_two_equal_axes_of_a_sequence_are_checked_apart():
    """outside44 H2: at (3, 5, 5) (T == D) the layer above PASSed, axis 0 being no axis's twin; it is checked again
    at (3, 6, 5) and FAILs there."""
    from gradcheck import diagnose_layer

    d = diagnose_layer(_RMSNormAxis1(), (3, 5, 5))
    assert not d.passed and "also checked at shape (3, 6, 5)" in " ".join(f.message for f in d.findings), d


def test_grown_shapes():
    """The axes grown: those sharing a size, the last axis (a layer's features) kept; an image's H == W left to
    its note; two grown axes made unequal too."""
    from gradcheck.diagnose import _grown_shape

    assert [_grown_shape(s) for s in ((5, 5), (6, 5), (3, 5, 5), (4, 4, 3), (5, 5, 5), (2, 3, 4, 4), (4, 3, 5, 4))] == [
        (6, 5), None, (3, 6, 5), (5, 4, 3), (6, 7, 5), None, (5, 3, 5, 4)]


SEQ_CE = """
import numpy as np

class SeqCE:
    def forward(self, x, t):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        self.p, self.t = e / e.sum(axis=-1, keepdims=True), t
        n, T = t.shape
        return -np.log(self.p[np.arange(n)[:, None], np.arange(T), t]).sum() / n

    def backward(self, dout=1):
        n, T = self.t.shape
        d = self.p.copy()
        d[np.arange(n)[:, None], np.arange(T), self.t] -= 1
        return dout * d / self.t.shape[1]
"""


def test_a_sequence_loss_dividing_by_time_fails_when_batch_and_time_are_equal(tmp_path):
    """outside44 H3: a sequence cross-entropy (summed over time, mean over the batch) whose backward divides by T
    where N belongs PASSed at logits (4, 4, 5); checked again at (6, 4, 5) it FAILs."""
    from test_cli import check_source

    code, out = check_source(tmp_path, SEQ_CE, "SeqCE", "--loss", "--input-shape", "4,4,5", "--targets", "labels")
    assert code == 1 and "also checked at shape (6, 4, 5)" in " ".join(out.split()), out
