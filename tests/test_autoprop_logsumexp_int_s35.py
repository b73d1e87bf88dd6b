"""review35 F1: session 34's empty-slice fix gave ``np.maximum.reduce`` the initial -inf, which an integer array
cannot hold: ``logsumexp``, ``softmax`` and ``log_softmax`` of integer input raised OverflowError ("cannot
convert float infinity to integer"), where scipy's logsumexp (and autoprop before) promote to float64."""

import numpy as np
import pytest
import scipy.special as sp

from autoprop.scipy import special as asp


@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax"])
@pytest.mark.parametrize("a, axis", [(np.array([1, 2, 3]), None), (np.array([[1, 2], [3, 4]], dtype=np.int32), 1),
                                     (np.array([[5, 1, 0]], dtype=np.uint8), -1)])
def test_integer_input_is_promoted_as_scipy(name, a, axis):
    got = np.asarray(getattr(asp, name)(a, axis=axis))
    want = getattr(sp, name)(a.astype(np.float64), axis=axis)  # (scipy's softmax of uint8 is float16 with NaNs)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-14)
