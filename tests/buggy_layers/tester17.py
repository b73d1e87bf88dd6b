"""Session 17's tester's common bugs (fixer fixt17): a convolution's padding cropped at one end, an RNN step's tanh
without its square, max pooling assigning overlapping windows or spreading its gradient evenly, two outputs'
upstream gradients swapped. CS231n pairs (inputs in :data:`INPUTS`, the rest in :data:`INIT`) and classes."""

import numpy as np

INPUT = (4, 5)
INPUTS = {"conv": [(2, 2, 5, 5), (3, 2, 3, 3), (3,)], "convcrop": [(2, 2, 5, 5), (3, 2, 3, 3), (3,)],
          "rnnstep": [(3, 2), (3, 4), (2, 4), (4, 4), (4,)], "rnnstepnosq": [(3, 2), (3, 4), (2, 4), (4, 4), (4,)],
          "pool": [(2, 2, 5, 5)], "poolassign": [(2, 2, 5, 5)]}
POOL = {"pool_param": {"pool_height": 3, "pool_width": 3, "stride": 2}}
INIT = {"conv": {"conv_param": {"stride": 1, "pad": 1}}, "convcrop": {"conv_param": {"stride": 1, "pad": 1}},
        "pool": POOL, "poolassign": POOL}


def conv_forward(x, w, b, conv_param):
    s, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    Ho, Wo = 1 + (H + 2 * pad - HH) // s, 1 + (W + 2 * pad - WW) // s
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((N, F, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            win = xp[:, :, i * s:i * s + HH, j * s:j * s + WW]
            out[:, :, i, j] = np.tensordot(win, w, axes=([1, 2, 3], [1, 2, 3])) + b
    return out, (x, w, b, conv_param)


def _conv_grads(dout, cache):
    x, w, b, conv_param = cache
    s, pad = conv_param["stride"], conv_param["pad"]
    _, _, HH, WW = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for i in range(dout.shape[2]):
        for j in range(dout.shape[3]):
            win = xp[:, :, i * s:i * s + HH, j * s:j * s + WW]
            dw += np.tensordot(dout[:, :, i, j], win, axes=([0], [0]))
            dxp[:, :, i * s:i * s + HH, j * s:j * s + WW] += np.tensordot(dout[:, :, i, j], w, axes=([1], [0]))
    return dxp, dw, dout.sum(axis=(0, 2, 3)), pad


def conv_backward(dout, cache):
    dxp, dw, db, pad = _conv_grads(dout, cache)
    return dxp[:, :, pad:-pad, pad:-pad], dw, db


def convcrop_forward(x, w, b, conv_param):
    return conv_forward(x, w, b, conv_param)


def convcrop_backward(dout, cache):
    dxp, dw, db, pad = _conv_grads(dout, cache)
    H, W = cache[0].shape[2:]
    return dxp[:, :, :H, :W], dw, db  # BUG: the padding cropped at the end only


def rnnstep_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x @ Wx + prev_h @ Wh + b)
    return next_h, (x, prev_h, Wx, Wh, next_h)


def _rnn_grads(dz, cache):
    x, prev_h, Wx, Wh, _ = cache
    return dz @ Wx.T, dz @ Wh.T, x.T @ dz, prev_h.T @ dz, dz.sum(axis=0)


def rnnstep_backward(dnext_h, cache):
    return _rnn_grads(dnext_h * (1 - cache[4] ** 2), cache)


def rnnstepnosq_forward(x, prev_h, Wx, Wh, b):
    return rnnstep_forward(x, prev_h, Wx, Wh, b)


def rnnstepnosq_backward(dnext_h, cache):
    return _rnn_grads(dnext_h * (1 - cache[4]), cache)  # BUG: 1 - tanh, not 1 - tanh**2


def pool_forward(x, pool_param):
    ph, pw, s = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H, W = x.shape
    out = np.zeros((N, C, 1 + (H - ph) // s, 1 + (W - pw) // s))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = x[:, :, i * s:i * s + ph, j * s:j * s + pw].max(axis=(2, 3))
    return out, (x, pool_param)


def _pool_backward(dout, cache, add):
    x, pp = cache
    ph, pw, s = pp["pool_height"], pp["pool_width"], pp["stride"]
    dx = np.zeros_like(x)
    for i in range(dout.shape[2]):
        for j in range(dout.shape[3]):
            win = x[:, :, i * s:i * s + ph, j * s:j * s + pw]
            g = (win == win.max(axis=(2, 3), keepdims=True)) * dout[:, :, i, j][:, :, None, None]
            if add:
                dx[:, :, i * s:i * s + ph, j * s:j * s + pw] += g
            else:
                dx[:, :, i * s:i * s + ph, j * s:j * s + pw] = g  # BUG (poolassign): = where += is due
    return dx


def pool_backward(dout, cache):
    return _pool_backward(dout, cache, True)


def poolassign_forward(x, pool_param):
    return pool_forward(x, pool_param)


def poolassign_backward(dout, cache):
    return _pool_backward(dout, cache, False)


class MaxPool2x2:
    """2x2 max pooling, stride 2."""

    INPUT = (2, 2, 4, 4)
    ADAPT = True

    def forward(self, X):
        N, C, H, W = X.shape
        self.X = X
        self.Y = X.reshape(N, C, H // 2, 2, W // 2, 2).max(axis=(3, 5))
        return self.Y

    def backward(self, dY):
        up = lambda a: np.repeat(np.repeat(a, 2, axis=2), 2, axis=3)  # noqa: E731
        return (self.X == up(self.Y)) * up(dY)


class MaxPool2x2Spread(MaxPool2x2):
    def backward(self, dY):
        return np.repeat(np.repeat(dY, 2, axis=2), 2, axis=3) / 4.0  # BUG: average pooling's backward


class SplitTanh:
    """forward(x) -> (tanh(x), x**2), backward(dh, dc) -> dx."""

    ADAPT = True

    def forward(self, x):
        self.x, self.t = x, np.tanh(x)
        return self.t, x ** 2

    def backward(self, dh, dc):
        return dh * (1 - self.t ** 2) + dc * 2 * self.x


class SplitTanhSwapped(SplitTanh):
    def backward(self, dh, dc):
        return dc * (1 - self.t ** 2) + dh * 2 * self.x  # BUG: the two upstream gradients swapped
