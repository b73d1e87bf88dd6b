"""Fully connected layers as students write them, in both weight layouts."""

import numpy as np

INPUT = (5, 4)


class LinearOutIn:
    """Y = X @ W.T + b, W of shape (out, in) (PyTorch's layout)."""

    def __init__(self, n_in=4, n_out=4, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W": 0.5 * rng.standard_normal((n_out, n_in)), "b": rng.standard_normal(n_out)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"]


class LinearInOut(LinearOutIn):
    """Y = X @ W + b, W of shape (in, out) (CS231n's layout)."""

    def __init__(self, n_in=4, n_out=4, seed=0):
        super().__init__(n_out, n_in, seed)  # W drawn as (in, out)
        self.params["b"] = np.random.default_rng(seed + 1).standard_normal(n_out)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"].T


class LinearInOutSwapped(LinearInOut):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = dY.T @ self.X  # BUG: the (out, in) formula for (in, out) weights
        return dX


class LinearInOutSwappedWide(LinearInOutSwapped):
    INPUT = (5, 3)

    def __init__(self, n_in=3, n_out=4, seed=0):
        super().__init__(n_in, n_out, seed)


class LinearOutInSwapped(LinearOutIn):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = self.X.T @ dY  # BUG: the (in, out) formula for (out, in) weights
        return dX


class LinearCachedY(LinearOutIn):
    def forward(self, X, training=False):
        self.X = X @ self.params["W"].T + self.params["b"]  # BUG: caches the output
        return self.X


class LinearInOutCachedYWide(LinearInOut):
    INPUT = (5, 3)

    def __init__(self, n_in=3, n_out=4, seed=0):
        super().__init__(n_in, n_out, seed)

    def forward(self, X, training=False):
        self.out = X @ self.params["W"] + self.params["b"]
        return self.out

    def backward(self, dY):
        self.grads["W"] = self.out.T @ dY  # BUG: the output where the input is due
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"].T


class LinearMeanBias(LinearOutIn):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["b"] = dY.mean(axis=0)  # BUG
        return dX


class LinearOverN(LinearInOut):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = self.X.T @ dY / len(dY)  # BUG: the loss already averaged
        return dX


class LinearSignX(LinearInOut):
    def backward(self, dY):
        super().backward(dY)
        return -dY @ self.params["W"].T  # BUG


class LinearBiasNotSummed(LinearOutIn):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["b"] = dY  # BUG
        return dX


class LinearLoopMissesLast(LinearOutIn):
    def backward(self, dY):
        dX = super().backward(dY)
        dW = np.zeros_like(self.params["W"])
        for n in range(len(dY) - 1):  # BUG: range(N - 1)
            dW += np.outer(dY[n], self.X[n])
        self.grads["W"] = dW
        return dX


class LinearLoopOverwrites(LinearOutIn):
    def backward(self, dY):
        dX = super().backward(dY)
        for n in range(len(dY)):
            self.grads["W"] = np.outer(dY[n], self.X[n])  # BUG: = instead of +=
        return dX


class LinearReshapeNotTranspose(LinearOutIn):
    INPUT = (5, 3)

    def __init__(self, n_in=3, n_out=4, seed=0):
        super().__init__(n_in, n_out, seed)

    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = (self.X.T @ dY).reshape(self.params["W"].shape)  # BUG: reshape, not .T
        return dX


class LinearDxWithWT(LinearOutIn):
    def backward(self, dY):
        super().backward(dY)
        return dY @ self.params["W"].T  # BUG: W.T where W is due (square W: the shapes agree)


class LinearInOutDxWithW(LinearInOut):
    def backward(self, dY):
        super().backward(dY)
        return dY @ self.params["W"]  # BUG: W where W.T is due (square W: the shapes agree)


class LinearStaleCache(LinearInOut):
    def forward(self, X, training=False):
        if not hasattr(self, "X"):  # BUG: the input is cached on the first call only
            self.X = X.copy()
        return X @ self.params["W"] + self.params["b"]


class LinearStaleGrad(LinearInOut):
    def backward(self, dY):
        if not hasattr(self, "dW"):  # BUG: dW computed on the first call only (a "speed-up")
            self.dW = self.X.T @ dY
        self.grads["W"] = self.dW.copy()
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"].T


class LinearStaleOutput(LinearInOut):
    def forward(self, X, training=False):
        if not hasattr(self, "Y"):  # BUG: the output of the first call is returned for every input
            self.X = X
            self.Y = X @ self.params["W"] + self.params["b"]
        return self.Y


class LinearInOutDxWithWWide(LinearInOut):
    INPUT = (5, 3)

    def __init__(self, n_in=3, n_out=4, seed=0):
        super().__init__(n_in, n_out, seed)

    def backward(self, dY):
        super().backward(dY)
        return dY @ self.params["W"]  # BUG: W where W.T is due (W is (3, 4): the matmul raises)


class LinearOutInDxWithWTWide(LinearOutIn):
    INPUT = (5, 3)

    def __init__(self, n_in=3, n_out=4, seed=0):
        super().__init__(n_in, n_out, seed)

    def backward(self, dY):
        super().backward(dY)
        return dY @ self.params["W"].T  # BUG: W.T where W is due (W is (4, 3): the matmul raises)


class Flatten:
    INPUT = (2, 3, 2, 2)

    def forward(self, X, training=False):
        self.shape = X.shape
        return X.reshape(len(X), -1)

    def backward(self, dY):
        return dY.reshape(self.shape)


class FlattenNoReshape(Flatten):
    def backward(self, dY):
        return dY  # BUG: not reshaped back to X's shape


class RowScale:
    """Y = X * W with a weight of shape (1, D) broadcast over the batch."""

    def __init__(self, D=4):
        self.params = {"W": np.linspace(-1.0, 1.5, D).reshape(1, D)}
        self.grads = {"W": np.zeros((1, D))}

    def forward(self, X, training=False):
        self.X = X
        return X * self.params["W"]

    def backward(self, dY):
        self.grads["W"] = np.sum(dY * self.X, axis=0, keepdims=True)
        return dY * self.params["W"]


class RowScaleNoKeepdims(RowScale):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = np.sum(dY * self.X, axis=0)  # BUG: shape (D,), W is (1, D)
        return dX


class LinearDbKeepdims(LinearOutIn):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["b"] = dY.sum(axis=0, keepdims=True)  # BUG: shape (1, out), not (out,)
        return dX


class LinearReturnsDY(LinearOutIn):
    def backward(self, dY):
        super().backward(dY)
        return dY  # BUG: dX = dY @ W is due


class LinearReturnsGrads:
    """backward(dY) -> (dX, dW, db), the weights' gradients returned, not stored (CS231n's and PyTorch's order):
    ``gradcheck check`` reads them as the gradients of W and b (:class:`gradcheck._adapters.ReturnedGradients`)."""

    ADAPT = True  # built as gradcheck check builds it

    def __init__(self, n_in=4, n_out=3, seed=0):
        rng = np.random.default_rng(seed)
        self.W, self.b = 0.5 * rng.standard_normal((n_in, n_out)), rng.standard_normal(n_out)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        return dY @ self.W.T, self.X.T @ dY, dY.sum(axis=0)


class LinearReturnsGradsMeanBias(LinearReturnsGrads):
    def backward(self, dY):
        dX, dW, _ = super().backward(dY)
        return dX, dW, dY.mean(axis=0)  # BUG: the mean over the batch, not the sum


class LinearReturnsGradsDict(LinearOutIn):
    """A params/grads layer whose backward returns (dX, dW, db) and stores nothing."""

    ADAPT = True

    def backward(self, dY):
        return dY @ self.params["W"], dY.T @ self.X, dY.sum(axis=0)


class LinearReturnsGradsDictSign(LinearReturnsGradsDict):
    def backward(self, dY):
        dX, dW, db = super().backward(dY)
        return dX, -dW, db  # BUG: dW with the wrong sign


class LinearStoresAndReturnsGrads(LinearReturnsGrads):
    """backward both stores self.dW, self.db (what an optimizer steps with) and returns (dX, dW, db): both are
    checked (the issue-10 tester's X18: only the returned ones were, so a wrong stored dW passed)."""

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(axis=0)
        return dY @ self.W.T, self.X.T @ dY, dY.sum(axis=0)


class LinearStoresMeanBiasReturnsRight(LinearStoresAndReturnsGrads):
    def backward(self, dY):
        r = super().backward(dY)
        self.db = dY.mean(axis=0)  # BUG: the stored db (the optimizer's) is the mean; the returned one is right
        return r


class LinearStoresRightReturnsSignW(LinearStoresAndReturnsGrads):
    def backward(self, dY):
        dX, dW, db = super().backward(dY)
        return dX, -dW, db  # BUG: the returned dW has the wrong sign; the stored self.dW is right


class LinearReturnsGradsByShape(LinearReturnsGrads):
    """backward returns (dX, db, dW): every gradient's shape differs, so gradcheck pairs them by shape (X9)."""

    def backward(self, dY):
        dX, dW, db = super().backward(dY)
        return dX, db, dW


class LinearReturnsGradsByShapeMeanBias(LinearReturnsGrads):
    def backward(self, dY):
        dX, dW, _ = super().backward(dY)
        return dX, dY.mean(axis=0), dW  # BUG: the mean over the batch, not the sum


# issue 10 (verify9 X8): precision lost or values rounded inside a float64 forward; each must be named for what it is


class LinearAstypeF(LinearInOut):
    def forward(self, X, training=False):
        self.X = X
        return (X.astype("f") @ self.params["W"]).astype(float) + self.params["b"]  # BUG: 'f' is float32


class LinearHalf(LinearInOut):
    def forward(self, X, training=False):
        self.X = X
        W = self.params["W"].astype(np.float16)
        return (X.astype(np.float16) @ W).astype(np.float64) + self.params["b"]  # BUG: float16 inputs and weights


class LinearRound(LinearInOut):
    def forward(self, X, training=False):
        self.X = X
        return np.round(X @ self.params["W"], 3) + self.params["b"]  # BUG: output rounded to 3 decimals


class LinearF32Weight(LinearInOut):
    def __init__(self):
        super().__init__()
        self.params["W"] = self.params["W"].astype(np.float32)  # BUG: a float32 weight, its gradient float32 too

    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["W"] = self.grads["W"].astype(self.params["W"].dtype)  # the gradient in its weight's dtype
        return dX
