"""Session 42: a loss on 1-d predictions (a signal) whose windows ``as_strided`` takes with strides from the shape:
right on C-contiguous arrays, wrong on a strided y_pred (a column of a matrix, a slice with a step). ``LOSS``: the
shape of y_pred."""

from numpy.lib.stride_tricks import as_strided

LOSS = (9,)


class SmoothMSE:
    """The squared error plus the squared differences of neighbours: ``sum((p - y)^2) + sum((p[i+1] - p[i])^2)``."""

    def forward(self, y_true, y_pred):
        s = y_pred.strides[0]
        w = as_strided(y_pred, shape=(y_pred.shape[0] - 1, 2), strides=(s, s))
        self.r, self.dp = y_pred - y_true, w[:, 1] - w[:, 0]
        return float(self.r @ self.r + self.dp @ self.dp)

    def backward(self):
        g = 2.0 * self.r
        g[1:] += 2.0 * self.dp
        g[:-1] -= 2.0 * self.dp
        return g


class SmoothMSEShapeStrides(SmoothMSE):
    def forward(self, y_true, y_pred):
        s = y_pred.itemsize
        w = as_strided(y_pred, shape=(y_pred.shape[0] - 1, 2), strides=(s, s))  # BUG: strides from the shape
        self.r, self.dp = y_pred - y_true, w[:, 1] - w[:, 0]
        return float(self.r @ self.r + self.dp @ self.dp)
