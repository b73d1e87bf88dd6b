"""verify40 H1: layers right on C-contiguous arrays and wrong on the same values in another memory layout (a transpose
or a column slice of the previous layer's output). Every array the check drew reached the layer C-contiguous, so both
PASSed; the check's memory-layout rerun (:mod:`gradcheck._layout`) runs forward and backward once more with the inputs
and dY in Fortran order."""

import numpy as np
from numpy.lib.stride_tricks import as_strided

INPUT = (4, 6)


class SumPool1D:
    """Sum pooling of width 2 over the last axis, its windows by ``as_strided`` with strides taken from the array."""

    def forward(self, X):
        N, L = X.shape
        a, b = X.strides
        return as_strided(X, shape=(N, L // 2, 2), strides=(a, 2 * b, b)).sum(axis=2)

    def backward(self, dY):
        return np.repeat(dY, 2, axis=1)


class SumPool1DShapeStrides(SumPool1D):
    def forward(self, X):
        N, L = X.shape
        s = X.itemsize
        return as_strided(X, shape=(N, L // 2, 2), strides=(L * s, 2 * s, s)).sum(axis=2)  # BUG: strides from the shape


class Scale3:
    """``Y = 3 X``."""

    def forward(self, X):
        return 3.0 * X

    def backward(self, dY):
        return 3.0 * dY


class Scale3BufferRead(Scale3):
    def backward(self, dY):
        flat = np.frombuffer(dY.tobytes(order="A"), dtype=dY.dtype)  # BUG: the buffer read as if it were C order
        return 3.0 * flat.reshape(dY.shape)
