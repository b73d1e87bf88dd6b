"""The first layer a student writes: weights as attributes, no params dict, no dW (correct dX).

Check it with::

    gradcheck check examples/seed_style_linear.py::Linear --input-shape 8,5 \
        --init '{"in_features": 5, "out_features": 3}'

Y = X @ W + b with X (N, in), W (in, out). The output goes into a buffer
preallocated for the batch size (``np.matmul(..., out=self._Y)``), and forward
returns that buffer: the next call overwrites it. backward returns
dX = dY @ W.T and computes no gradient for W or b, so the checker checks dX and
says that W and b are parameters with no gradient to check.
"""

import numpy as np


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.W = rng.standard_normal((in_features, out_features)) / np.sqrt(in_features)
        self.b = np.zeros(out_features)
        self._Y = np.empty((0, out_features))
        self._dX = np.empty((0, in_features))

    def forward(self, X):
        if self._Y.shape[0] != X.shape[0]:  # a new batch size: new buffers
            self._Y = np.empty((X.shape[0], self.W.shape[1]))
            self._dX = np.empty((X.shape[0], self.W.shape[0]))
        np.matmul(X, self.W, out=self._Y)
        self._Y += self.b
        return self._Y

    def backward(self, dY):
        np.matmul(dY, self.W.T, out=self._dX)
        return self._dX
