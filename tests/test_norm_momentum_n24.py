"""A batch norm's ``momentum`` above 0.5 warns that it is PyTorch's, not Keras's (newuser24 L10).

``ap.layers.BatchNorm1D(3, momentum=0.99)`` (Keras's default, written by a Keras user) was accepted silently with
PyTorch's meaning: each training step kept 1% of the running statistics. Both tracks' BatchNorm1D/2D now warn,
naming both conventions and the value that means Keras's; PyTorch's defaults and Keras's own layer do not.
"""

import warnings

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp
from manualprop.norm import MomentumConventionWarning


@pytest.mark.parametrize("make", [mp.BatchNorm1D, mp.BatchNorm2D, ap.layers.BatchNorm1D, ap.layers.BatchNorm2D],
                         ids=["mp1d", "mp2d", "ap1d", "ap2d"])
def test_keras_like_momentum_warns_naming_both_conventions(make):
    with pytest.warns(MomentumConventionWarning) as rec:
        bn = make(3, momentum=0.99)
    msg = str(rec[0].message)
    assert rec[0].filename == __file__  # the user's line, through autoprop's twin constructor too
    assert f"{type(bn).__name__}(momentum=0.99): here momentum weighs the NEW batch" in msg
    assert "Keras's momentum=0.99 is momentum=0.01 here" in msg
    assert "autoprop.layers.BatchNormalization(momentum=0.99)" in msg
    assert bn.momentum == 0.99  # the value is kept: PyTorch's 0.99 is legal, the warning can be silenced
    X = np.array([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]]) if "1D" in type(bn).__name__ else \
        np.arange(24.0).reshape(2, 3, 2, 2)
    bn.forward(X, training=True) if hasattr(bn, "backward") else bn(X, training=True)
    mean = X.mean(axis=0) if X.ndim == 2 else X.mean(axis=(0, 2, 3))
    np.testing.assert_allclose(np.asarray(bn.running_mean), 0.99 * mean, rtol=1e-12)  # PyTorch's rule, as said


def test_pytorch_momenta_and_keras_layer_are_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for m in (0.0, 0.1, 0.5):
            mp.BatchNorm1D(3, momentum=m)
            ap.layers.BatchNorm2D(3, momentum=m)
        ap.layers.BatchNormalization(momentum=0.99)  # Keras's own meaning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=MomentumConventionWarning)
        mp.BatchNorm1D(3, momentum=0.9)  # silenced as the message says
