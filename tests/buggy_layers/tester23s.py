"""Session 23 (tester23s): public numpy layer code. A PyTorch-style layer whose mode is ``self.training`` (set by
train()/eval()) and whose backward reads what only a training forward caches, and a layer whose backward refuses to
run when ``self.trainable`` is False: probed in eval under ``--training`` before, so backward raised, the weights were
"gradients unknown" and a planted dgamma/dW passed (H1)."""

import numpy as np

INPUT = np.random.default_rng(3).standard_normal((6, 4))


class BNTrainCache:
    """Batch norm caching xhat only in training mode; the mode is self.training (train()/eval())."""

    def __init__(self, D=4):
        self.gamma = np.random.default_rng(0).standard_normal(D) + 1.5
        self.beta = np.zeros(D)
        self.running_mean, self.running_var = np.zeros(D), np.ones(D)
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, X):
        if self.training:
            mu, var = X.mean(0), X.var(0)
            self.std = np.sqrt(var + 1e-5)
            self.xhat = (X - mu) / self.std
            self.running_mean = 0.9 * self.running_mean + 0.1 * mu
            self.running_var = 0.9 * self.running_var + 0.1 * var
            return self.gamma * self.xhat + self.beta
        return self.gamma * (X - self.running_mean) / np.sqrt(self.running_var + 1e-5) + self.beta

    def backward(self, dY):
        N = dY.shape[0]
        self.dbeta = dY.sum(0)
        self.dgamma = (dY * self.xhat).sum(0)
        dxhat = dY * self.gamma
        return (N * dxhat - dxhat.sum(0) - self.xhat * (dxhat * self.xhat).sum(0)) / (N * self.std)


class BNTrainCacheDouble(BNTrainCache):
    def backward(self, dY):
        dX = super().backward(dY)
        self.dgamma = 2.0 * self.dgamma  # BUG: twice too large
        return dX


class FrozenLinear:
    """forward reads self.trainable (numpy-ml/Keras: False = frozen); backward refuses to run when frozen."""

    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((4, 3))
        self.trainable = True

    def forward(self, X):
        self.X = X
        Y = X @ self.W
        return Y if self.trainable else Y.copy()

    def backward(self, dY):
        assert self.trainable, "Layer is frozen"
        self.dW = self.X.T @ dY
        return dY @ self.W.T


class FrozenLinearDouble(FrozenLinear):
    def backward(self, dY):
        dX = super().backward(dY)
        self.dW = 2.0 * self.dW  # BUG: twice too large
        return dX


class NmDense:
    """numpy-ml's FullyConnected conventions (ddbourgin/numpy-ml layers.py): parameters = {"W": None, "b": None}
    until the first forward builds them, each input appended to self.X (retain_derived), backward returning one dX per
    stored input and accumulating gradients[k] += ..., reset by flush_gradients() (which also empties self.X)."""

    def __init__(self, n_out=3):
        self.n_out, self.trainable, self.is_initialized = n_out, True, False
        self.X, self.gradients = [], {}
        self.parameters = {"W": None, "b": None}

    def _init_params(self):
        self.parameters = {"W": np.random.default_rng(1).standard_normal((self.n_in, self.n_out)),
                           "b": np.zeros((1, self.n_out))}
        self.gradients = {k: np.zeros_like(v) for k, v in self.parameters.items()}
        self.is_initialized = True

    def flush_gradients(self):
        assert self.trainable, "Layer is frozen"
        self.X = []
        for k, v in self.gradients.items():
            self.gradients[k] = np.zeros_like(v)

    def forward(self, X, retain_derived=True):
        if not self.is_initialized:
            self.n_in = X.shape[1]
            self._init_params()
        if retain_derived:
            self.X.append(X)
        return np.tanh(X @ self.parameters["W"] + self.parameters["b"])

    def _bwd(self, dy, x):
        W = self.parameters["W"]
        dZ = dy * (1 - np.tanh(x @ W + self.parameters["b"]) ** 2)
        return dZ @ W.T, x.T @ dZ, dZ.sum(axis=0, keepdims=True)

    def backward(self, dLdy, retain_grads=True):
        assert self.trainable, "Layer is frozen"
        dLdy = dLdy if isinstance(dLdy, list) else [dLdy]
        dX = []
        for dy, x in zip(dLdy, self.X):
            dx, dw, db = self._bwd(dy, x)
            dX.append(dx)
            if retain_grads:
                self.gradients["W"] += dw
                self.gradients["b"] += db
        return dX[0] if len(self.X) == 1 else dX


class NmDenseDoubleDW(NmDense):
    def _bwd(self, dy, x):
        dx, dw, db = super()._bwd(dy, x)
        return dx, 2.0 * dw, db  # BUG: twice too large


class NmBatchNorm(NmDense):
    """numpy-ml's BatchNorm1D: self.trainable is its mode (False: frozen, running statistics) and backward asserts it."""

    def __init__(self):
        super().__init__()
        self.parameters = {"scaler": None, "intercept": None, "running_mean": None, "running_var": None}

    def _init_params(self):
        self.parameters = {"scaler": np.random.default_rng(2).standard_normal(self.n_in) + 1.5,
                           "intercept": np.zeros(self.n_in), "running_mean": np.zeros(self.n_in),
                           "running_var": np.ones(self.n_in)}
        self.gradients = {"scaler": np.zeros(self.n_in), "intercept": np.zeros(self.n_in)}
        self.is_initialized = True

    def forward(self, X, retain_derived=True):
        if not self.is_initialized:
            self.n_in = X.shape[1]
            self._init_params()
        p = self.parameters
        mean, var = p["running_mean"], p["running_var"]
        if self.trainable and retain_derived:
            mean, var = X.mean(axis=0), X.var(axis=0)
            p["running_mean"] = 0.9 * p["running_mean"] + 0.1 * mean
            p["running_var"] = 0.9 * p["running_var"] + 0.1 * var
        if retain_derived:
            self.X.append(X)
        return p["scaler"] * (X - mean) / np.sqrt(var + 1e-5) + p["intercept"]

    def _bwd(self, dy, x):
        n, xhat = x.shape[0], (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
        dxhat = dy * self.parameters["scaler"]
        dx = (n * dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0)) / (n * np.sqrt(x.var(0) + 1e-5))
        return dx, (dy * xhat).sum(0), dy.sum(0)

    def backward(self, dLdy, retain_grads=True):
        assert self.trainable, "Layer is frozen"
        dx, ds, di = self._bwd(dLdy, self.X[0])
        self.gradients["scaler"] += ds
        self.gradients["intercept"] += di
        return dx


class XList:
    """numpy-ml's stored-input list without its flush_gradients(): refused with what to do."""

    def __init__(self):
        self.W, self.X = np.random.default_rng(0).standard_normal((4, 3)), []

    def forward(self, X):
        self.X.append(X)
        return X @ self.W

    def backward(self, dY):
        dX = [dY @ self.W.T for _ in self.X]
        self.dW = self.X[-1].T @ dY
        return dX[0] if len(dX) == 1 else dX
