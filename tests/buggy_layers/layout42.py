"""Session 42: layers on a 1-d input or a ``(1, n)`` row, right on C-contiguous arrays and wrong in another memory
layout. Their C and Fortran orders are one buffer, so the memory-layout rerun of session 40 ran nothing for them; it
now hands them on as strided views (every other element of a buffer twice the size: a slice with a step, or a column
of a matrix, in a network) and an ``as_strided`` with strides from the shape reads the wrong memory."""

import numpy as np
from numpy.lib.stride_tricks import as_strided

INPUT = (9,)


class MovingSum:
    """``Y[i] = x[i] + x[i + 1]`` over a 1-d signal, its windows by ``as_strided`` with strides from the array."""

    def forward(self, x):
        s = x.strides[0]
        return as_strided(x, shape=(x.shape[0] - 1, 2), strides=(s, s)).sum(axis=1)

    def backward(self, dY):
        return np.concatenate([dY, [0.0]]) + np.concatenate([[0.0], dY])


class MovingSumShapeStrides(MovingSum):
    def forward(self, x):
        s = x.itemsize
        return as_strided(x, shape=(x.shape[0] - 1, 2), strides=(s, s)).sum(axis=1)  # BUG: strides from the shape


class RowPairs:
    """A batch of one row ``(1, n)``: sums of pairs ``Y[0, j] = X[0, 2j] + X[0, 2j + 1]``, by ``as_strided``."""

    INPUT = (1, 8)

    def forward(self, X):
        a, b = X.strides
        return as_strided(X, shape=(1, X.shape[1] // 2, 2), strides=(a, 2 * b, b)).sum(axis=2)

    def backward(self, dY):
        return np.repeat(dY, 2, axis=1)


class RowPairsShapeStrides(RowPairs):
    def forward(self, X):
        s = X.itemsize
        L = X.shape[1]
        return as_strided(X, shape=(1, L // 2, 2), strides=(L * s, 2 * s, s)).sum(axis=2)  # BUG: strides from the shape
