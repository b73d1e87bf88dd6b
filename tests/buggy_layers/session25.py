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


# ---- the course's rnn_cell_forward/rnn_cell_backward and lstm_cell_forward/lstm_cell_backward ("Building a Recurrent
# Neural Network - Step by Step", Kulbear's solution; its lstm_cell_backward reads Wf, Wi, Wc, Wo from the notebook's
# globals, here from parameters): backward returns a dict of gradients, {"dxt": ..., "da_prev": ..., "dWax": ...},
# read by the d<name> convention (session 25); parameters (a dict in --init) holds the weights
def _ng_params(shapes, seed=1):
    rng = np.random.default_rng(seed)
    return {"parameters": {k: np.round(rng.standard_normal(s), 3).tolist() for k, s in shapes.items()}}


INPUTS |= {n: [(3, 4), (5, 4)] for n in ("rnncell", "rnncellnodWaa")}
INPUTS |= {n: [(3, 4), (5, 4), (5, 4)] for n in ("lstmcell", "lstmcellnodc")}
INIT |= {n: _ng_params({"Wax": (5, 3), "Waa": (5, 5), "Wya": (2, 5), "ba": (5, 1), "by": (2, 1)})
         for n in ("rnncell", "rnncellnodWaa")}
INIT |= {n: _ng_params({**{f"W{g}": (5, 8) for g in "fico"}, **{f"b{g}": (5, 1) for g in "fico"}, "Wy": (2, 5),
                        "by": (2, 1)}) for n in ("lstmcell", "lstmcellnodc")}


def softmax(x):
    e_x = np.exp(x - np.max(x))
    return e_x / e_x.sum(axis=0)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def rnncell_forward(xt, a_prev, parameters):
    Wax, Waa, Wya, ba, by = (parameters[k] for k in ("Wax", "Waa", "Wya", "ba", "by"))
    a_next = np.tanh(np.dot(Wax, xt) + np.dot(Waa, a_prev) + ba)
    yt_pred = softmax(np.dot(Wya, a_next) + by)
    return a_next, yt_pred, (a_next, a_prev, xt, parameters)


def rnncell_backward(da_next, cache):
    (a_next, a_prev, xt, parameters) = cache
    Wax, Waa = parameters["Wax"], parameters["Waa"]
    dtanh = (1 - a_next ** 2) * da_next
    gradients = {"dxt": np.dot(Wax.T, dtanh), "da_prev": np.dot(Waa.T, dtanh), "dWax": np.dot(dtanh, xt.T),
                 "dWaa": np.dot(dtanh, a_prev.T), "dba": np.sum(dtanh, axis=1, keepdims=1)}
    return gradients


rnncellnodWaa_forward = rnncell_forward


def rnncellnodWaa_backward(da_next, cache):
    (a_next, a_prev, xt, parameters) = cache
    Wax, Waa = parameters["Wax"], parameters["Waa"]
    dtanh = (1 - a_next ** 2) * da_next
    gradients = {"dxt": np.dot(Wax.T, dtanh), "da_prev": np.dot(Waa.T, dtanh), "dWax": np.dot(dtanh, xt.T),
                 "dba": np.sum(dtanh, axis=1, keepdims=1)}  # BUG: no "dWaa" (read as 0)
    return gradients


def lstmcell_forward(xt, a_prev, c_prev, parameters):
    concat = np.concatenate((a_prev, xt), axis=0)
    ft = sigmoid(np.dot(parameters["Wf"], concat) + parameters["bf"])
    it = sigmoid(np.dot(parameters["Wi"], concat) + parameters["bi"])
    cct = np.tanh(np.dot(parameters["Wc"], concat) + parameters["bc"])
    c_next = ft * c_prev + it * cct
    ot = sigmoid(np.dot(parameters["Wo"], concat) + parameters["bo"])
    a_next = ot * np.tanh(c_next)
    yt_pred = softmax(np.dot(parameters["Wy"], a_next) + parameters["by"])
    return a_next, c_next, yt_pred, (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)


def lstmcell_backward(da_next, dc_next, cache):
    (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters) = cache
    Wf, Wi, Wc, Wo = parameters["Wf"], parameters["Wi"], parameters["Wc"], parameters["Wo"]
    n_a = a_next.shape[0]
    dc = da_next * ot * (1 - np.tanh(c_next) ** 2) + dc_next
    dot, dcct = da_next * np.tanh(c_next) * ot * (1 - ot), dc * it * (1 - cct ** 2)
    dit, dft = dc * cct * (1 - it) * it, dc * c_prev * ft * (1 - ft)
    concat = np.hstack([a_prev.T, xt.T])
    da_prev = np.dot(Wf[:, :n_a].T, dft) + np.dot(Wc[:, :n_a].T, dcct) + np.dot(Wi[:, :n_a].T, dit) + np.dot(
        Wo[:, :n_a].T, dot)
    dxt = np.dot(Wf[:, n_a:].T, dft) + np.dot(Wc[:, n_a:].T, dcct) + np.dot(Wi[:, n_a:].T, dit) + np.dot(
        Wo[:, n_a:].T, dot)
    gradients = {"dxt": dxt, "da_prev": da_prev, "dc_prev": dc * ft, "dWf": np.dot(dft, concat),
                 "dbf": np.sum(dft, axis=1, keepdims=True), "dWi": np.dot(dit, concat),
                 "dbi": np.sum(dit, axis=1, keepdims=True), "dWc": np.dot(dcct, concat),
                 "dbc": np.sum(dcct, axis=1, keepdims=True), "dWo": np.dot(dot, concat),
                 "dbo": np.sum(dot, axis=1, keepdims=True)}
    return gradients


lstmcellnodc_forward = lstmcell_forward


def lstmcellnodc_backward(da_next, dc_next, cache):
    (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters) = cache
    Wf, Wi, Wc, Wo = parameters["Wf"], parameters["Wi"], parameters["Wc"], parameters["Wo"]
    n_a = a_next.shape[0]
    dc = da_next * ot * (1 - np.tanh(c_next) ** 2)  # BUG: + dc_next missing (the cell's own gradient not added)
    dot, dcct = da_next * np.tanh(c_next) * ot * (1 - ot), dc * it * (1 - cct ** 2)
    dit, dft = dc * cct * (1 - it) * it, dc * c_prev * ft * (1 - ft)
    concat = np.hstack([a_prev.T, xt.T])
    da_prev = np.dot(Wf[:, :n_a].T, dft) + np.dot(Wc[:, :n_a].T, dcct) + np.dot(Wi[:, :n_a].T, dit) + np.dot(
        Wo[:, :n_a].T, dot)
    dxt = np.dot(Wf[:, n_a:].T, dft) + np.dot(Wc[:, n_a:].T, dcct) + np.dot(Wi[:, n_a:].T, dit) + np.dot(
        Wo[:, n_a:].T, dot)
    gradients = {"dxt": dxt, "da_prev": da_prev, "dc_prev": dc * ft, "dWf": np.dot(dft, concat),
                 "dbf": np.sum(dft, axis=1, keepdims=True), "dWi": np.dot(dit, concat),
                 "dbi": np.sum(dit, axis=1, keepdims=True), "dWc": np.dot(dcct, concat),
                 "dbc": np.sum(dcct, axis=1, keepdims=True), "dWo": np.dot(dot, concat),
                 "dbo": np.sum(dot, axis=1, keepdims=True)}
    return gradients
