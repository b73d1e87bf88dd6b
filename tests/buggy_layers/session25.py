"""Session 25 (session 24's leftovers, "no known bug pattern" before): Andrew Ng's pooling pair (deep-learning.ai's
"Convolution model - Step by Step", as Kulbear/deep-learning-coursera's solved notebook writes it, tester24s's
``ng_cnn_fixed.py``) with the stride ignored in backward, Kulbear's own published bug (tester24s g07, g11).

* ``poolstride``: max pooling, ``vert_start = h`` and ``horiz_start = w`` in ``pool_backward`` where ``h * stride``
  and ``w * stride`` are due (stride 2, windows of 2: the windows do not overlap).
* ``poolstrideavg``: the same in average mode.
"""

import numpy as np

INPUT = (2, 4, 4, 3)
INPUTS = {n: [(2, 4, 4, 3)] for n in ("pool", "poolstride", "poolavg", "poolstrideavg")}
INIT = {n: {"hparameters": {"stride": 2, "f": 2}, "mode": mode}
        for n, mode in (("pool", "max"), ("poolstride", "max"), ("poolavg", "average"), ("poolstrideavg", "average"))}


# ---- the course's pool_forward/pool_backward (Kulbear's solution with the window's corner at h * stride)
def pool_forward(A_prev, hparameters, mode="max"):
    (m, n_H_prev, n_W_prev, n_C_prev) = A_prev.shape
    f, stride = hparameters["f"], hparameters["stride"]
    n_H, n_W = int(1 + (n_H_prev - f) / stride), int(1 + (n_W_prev - f) / stride)
    A = np.zeros((m, n_H, n_W, n_C_prev))
    for i in range(m):
        for h in range(n_H):
            for w in range(n_W):
                for c in range(n_C_prev):
                    vert_start, horiz_start = h * stride, w * stride
                    a_prev_slice = A_prev[i, vert_start:vert_start + f, horiz_start:horiz_start + f, c]
                    A[i, h, w, c] = np.max(a_prev_slice) if mode == "max" else np.mean(a_prev_slice)
    return A, (A_prev, hparameters)


def create_mask_from_window(x):
    return x == np.max(x)


def distribute_value(dz, shape):
    (n_H, n_W) = shape
    return np.ones(shape) * dz / (n_H * n_W)


def _pool_backward(dA, cache, mode, strided):
    (A_prev, hparameters) = cache
    stride, f = hparameters["stride"] if strided else 1, hparameters["f"]
    m, n_H, n_W, n_C = dA.shape
    dA_prev = np.zeros(A_prev.shape)
    for i in range(m):
        a_prev = A_prev[i]
        for h in range(n_H):
            for w in range(n_W):
                for c in range(n_C):
                    vert_start, horiz_start = h * stride, w * stride
                    vert_end, horiz_end = vert_start + f, horiz_start + f
                    if mode == "max":
                        mask = create_mask_from_window(a_prev[vert_start:vert_end, horiz_start:horiz_end, c])
                        dA_prev[i, vert_start:vert_end, horiz_start:horiz_end, c] += np.multiply(mask, dA[i, h, w, c])
                    elif mode == "average":
                        dA_prev[i, vert_start:vert_end, horiz_start:horiz_end, c] += distribute_value(
                            dA[i, h, w, c], (f, f))
    return dA_prev


def pool_backward(dA, cache, mode="max"):
    return _pool_backward(dA, cache, mode, True)


def poolstride_backward(dA, cache, mode="max"):
    return _pool_backward(dA, cache, mode, False)  # BUG: vert_start = h, horiz_start = w (the stride ignored)


poolstride_forward = poolavg_forward = poolstrideavg_forward = pool_forward
poolavg_backward, poolstrideavg_backward = pool_backward, poolstride_backward


# ---- a strided layer (a 1-D pooling of stride 1 and window 1: a Linear) whose dW adds W by mistake: stride = 1 is
# no regulariser's strength (session 24's leftover: "1 is stride", NOT CHECKED), so the term is a bug
class StridedLinear:
    INPUT = (5, 4)

    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((4, 3)), "b": np.zeros(3)}
        self.grads = {}
        self.stride = 1

    def forward(self, X, training=False):
        self.X = X
        return X[:, ::self.stride] @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = self.X[:, ::self.stride].T @ dY
        self.grads["b"] = dY.sum(0)
        dX = np.zeros_like(self.X)
        dX[:, ::self.stride] = dY @ self.params["W"].T
        return dX


class StridedLinearPlusW(StridedLinear):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = self.grads["W"] + self.stride * self.params["W"]  # BUG: + W (read as "1 is stride")
        return dX
