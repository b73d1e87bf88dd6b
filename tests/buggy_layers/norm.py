"""BatchNorm1D in the CS231n style (training and eval modes) and LayerNorm."""

import numpy as np

INPUT = (6, 4)
KWARGS = {"training": True}


class BatchNorm1D:
    def __init__(self, D=4, eps=1e-5, momentum=0.9, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"gamma": 1 + 0.3 * rng.standard_normal(D), "beta": 0.3 * rng.standard_normal(D)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.eps, self.momentum = eps, momentum
        self.running_mean, self.running_var = np.zeros(D), np.ones(D)

    def forward(self, X, training=False):
        if training:
            mu, var = X.mean(axis=0), X.var(axis=0)
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mu
            self.running_var = self.momentum * self.running_var + (1 - self.momentum) * var
        else:
            mu, var = self.running_mean, self.running_var
        self.training = training
        self.xmu, self.istd = X - mu, 1 / np.sqrt(var + self.eps)
        self.xhat = self.xmu * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dY):
        self.grads["gamma"] = np.sum(dY * self.xhat, axis=0)
        self.grads["beta"] = np.sum(dY, axis=0)
        dxhat = dY * self.params["gamma"]
        if not self.training:
            return dxhat * self.istd
        return self.dx_train(dxhat)

    def dx_train(self, dxhat):
        n = len(dxhat)
        dvar = np.sum(dxhat * self.xmu, axis=0) * -0.5 * self.istd**3
        dmu = np.sum(-dxhat * self.istd, axis=0) + dvar * np.mean(-2 * self.xmu, axis=0)
        return dxhat * self.istd + dvar * 2 * self.xmu / n + dmu / n


class BatchNormNaive(BatchNorm1D):
    def dx_train(self, dxhat):
        return dxhat * self.istd  # BUG: mean and variance treated as constants


class BatchNormNoMeanPath(BatchNorm1D):
    def dx_train(self, dxhat):
        n = len(dxhat)
        dvar = np.sum(dxhat * self.xmu, axis=0) * -0.5 * self.istd**3
        return dxhat * self.istd + dvar * 2 * self.xmu / n  # BUG: the dmu term is missing


class BatchNormMeanBeta(BatchNorm1D):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["beta"] = dY.mean(axis=0)  # BUG
        return dX


class BatchNormGammaNotSummed(BatchNorm1D):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["gamma"] = dY * self.xhat  # BUG: no sum over the batch
        return dX


class LayerNorm:
    KWARGS = {}

    def __init__(self, D=4, eps=1e-5, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"gamma": 1 + 0.3 * rng.standard_normal(D), "beta": 0.3 * rng.standard_normal(D)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.eps = eps

    def forward(self, X, training=False):
        mu, var = X.mean(axis=-1, keepdims=True), X.var(axis=-1, keepdims=True)
        self.istd = 1 / np.sqrt(var + self.eps)
        self.xhat = (X - mu) * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dY):
        self.grads["gamma"] = np.sum(dY * self.xhat, axis=0)
        self.grads["beta"] = np.sum(dY, axis=0)
        return self.dx(dY * self.params["gamma"])

    def dx(self, dxhat):
        return self.istd * (dxhat - dxhat.mean(axis=-1, keepdims=True)
                            - self.xhat * np.mean(dxhat * self.xhat, axis=-1, keepdims=True))


class LayerNormNaive(LayerNorm):
    def dx(self, dxhat):
        return dxhat * self.istd  # BUG: the statistics' paths are missing


class LayerNormMeanBeta(LayerNorm):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["beta"] = dY.mean(axis=0)  # BUG
        return dX


class BatchNormGammaFromX(BatchNorm1D):
    def forward(self, X, training=False):
        self.X = X
        return super().forward(X, training)

    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["gamma"] = np.sum(dY * self.X, axis=0)  # BUG: x where x_hat is due
        return dX


class SpatialBatchNorm(BatchNorm1D):
    """BatchNorm2D for (N, C, H, W): BatchNorm1D on the (N*H*W, C) matrix, as in CS231n."""

    INPUT = (3, 2, 3, 3)

    def __init__(self, C=2, seed=0):
        super().__init__(C, seed=seed)

    def forward(self, X, training=False):
        N, C, H, W = X.shape
        out = super().forward(X.transpose(0, 2, 3, 1).reshape(-1, C), training)
        return out.reshape(N, H, W, C).transpose(0, 3, 1, 2)

    def backward(self, dY):
        N, C, H, W = dY.shape
        dX = super().backward(dY.transpose(0, 2, 3, 1).reshape(-1, C))
        return dX.reshape(N, H, W, C).transpose(0, 3, 1, 2)


class SpatialBatchNormNaive(SpatialBatchNorm):
    def dx_train(self, dxhat):
        return dxhat * self.istd  # BUG


class SpatialBatchNormDirect(BatchNorm1D):
    """BatchNorm2D written directly on (N, C, H, W): statistics over axes (0, 2, 3)."""

    INPUT = (2, 3, 4, 4)

    def __init__(self, C=3, seed=0):
        super().__init__(C, seed=seed)

    def forward(self, X, training=False):
        ax, g, b = (0, 2, 3), self.params["gamma"][:, None, None], self.params["beta"][:, None, None]
        mu, var = X.mean(axis=ax, keepdims=True), X.var(axis=ax, keepdims=True)
        self.istd = 1 / np.sqrt(var + self.eps)
        self.xhat = (X - mu) * self.istd
        return g * self.xhat + b

    def count(self, dY):
        return dY.shape[0] * dY.shape[2] * dY.shape[3]

    def backward(self, dY):
        ax = (0, 2, 3)
        self.grads["gamma"] = np.sum(dY * self.xhat, axis=ax)
        self.grads["beta"] = np.sum(dY, axis=ax)
        dxhat = dY * self.params["gamma"][:, None, None]
        m = self.count(dY)
        return self.istd / m * (m * dxhat - dxhat.sum(axis=ax, keepdims=True)
                                - self.xhat * (dxhat * self.xhat).sum(axis=ax, keepdims=True))


class SpatialBatchNormCountN(SpatialBatchNormDirect):
    def count(self, dY):
        return dY.shape[0]  # BUG: the statistics are over N*H*W values, not N


class BatchNormUnbiasedVar(BatchNorm1D):
    def forward(self, X, training=False):
        if not training:
            return super().forward(X, training)
        self.training = True
        self.xmu = X - X.mean(axis=0)
        self.istd = 1 / np.sqrt(X.var(axis=0, ddof=1) + self.eps)  # BUG: ddof=1; backward's N
        self.xhat = self.xmu * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]



class BatchNormBessel(BatchNorm1D):
    """Training forward with the Bessel-corrected batch variance (var(ddof=1)), backward derived for it."""

    def forward(self, X, training=False):
        if not training:
            return super().forward(X, training)
        self.training = True
        self.xmu = X - X.mean(axis=0)
        self.istd = 1 / np.sqrt(np.var(X, axis=0, ddof=1) + self.eps)
        self.xhat = self.xmu * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def dx_train(self, dxhat):
        n = len(dxhat)
        dvar = np.sum(dxhat * self.xmu, axis=0) * -0.5 * self.istd**3
        dmu = -np.sum(dxhat * self.istd, axis=0)
        return dxhat * self.istd + dvar * 2 * self.xmu / (n - 1) + dmu / n


class BatchNormBesselNaive(BatchNormBessel):
    def dx_train(self, dxhat):
        return dxhat * self.istd  # BUG: mean and variance treated as constants (forward's var has ddof=1)


class BatchNormBesselBackward(BatchNorm1D):
    def dx_train(self, dxhat):  # forward's var() divides by N
        n = len(dxhat)
        dvar = np.sum(dxhat * self.xmu, axis=0) * -0.5 * self.istd**3
        dmu = -np.sum(dxhat * self.istd, axis=0)
        return dxhat * self.istd + dvar * 2 * self.xmu / (n - 1) + dmu / n  # BUG: N-1 for var()'s N


class SpatialBatchNormNoReorder(SpatialBatchNorm):
    def backward(self, dY):
        N, C, H, W = dY.shape
        dX = BatchNorm1D.backward(self, dY.transpose(0, 2, 3, 1).reshape(-1, C))
        return dX.reshape(N, C, H, W)  # BUG: reshape where transpose(0, 3, 1, 2) is due


class BatchCenter:
    """Y = gamma * (X - X.mean(axis=0)): a batch-mean layer (BatchNorm without the variance)."""

    def __init__(self, D=4, seed=0):
        self.params = {"gamma": 1 + 0.3 * np.random.default_rng(seed).standard_normal(D)}
        self.grads = {"gamma": np.zeros(D)}

    def forward(self, X, training=False):
        self.xc = X - X.mean(axis=0)
        return self.params["gamma"] * self.xc

    def backward(self, dY):
        self.grads["gamma"] = np.sum(dY * self.xc, axis=0)
        dxc = dY * self.params["gamma"]
        return dxc - dxc.mean(axis=0)


class BatchCenterNoMean(BatchCenter):
    def backward(self, dY):
        super().backward(dY)
        return dY * self.params["gamma"]  # BUG: the path through the batch mean is missing


class MeanCenter:
    """Y = X - X.mean(axis=0), no parameters: its dX without the mean term equals dY."""

    params: dict = {}
    grads: dict = {}

    def forward(self, X, training=False):
        return X - X.mean(axis=0)

    def backward(self, dY):
        return dY - dY.mean(axis=0)


class MeanCenterNoMean(MeanCenter):
    def backward(self, dY):
        return dY  # BUG: the mean is treated as a constant (this is not a missing activation derivative)


class BatchNormGradsSwapped(BatchNorm1D):
    def backward(self, dY):
        dX = super().backward(dY)
        self.grads["gamma"], self.grads["beta"] = self.grads["beta"], self.grads["gamma"]  # BUG: keys swapped
        return dX


class BatchNormEvalTrainFormula(BatchNorm1D):
    KWARGS = {"training": False}

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.running_mean, self.running_var = np.array([0.1, -0.2, 0.3, 0.0]), np.array([1.5, 0.7, 1.0, 2.0])

    def backward(self, dY):
        self.grads["gamma"] = np.sum(dY * self.xhat, axis=0)
        self.grads["beta"] = np.sum(dY, axis=0)
        return self.dx_train(dY * self.params["gamma"])  # BUG: the training formula in eval mode too


class BatchNormEvalUsesBatch(BatchNorm1D):
    """Eval mode normalises with the batch's statistics; backward treats them as constants there."""

    KWARGS = {"training": False}

    def forward(self, X, training=False):
        Y = super().forward(X, training=True)  # BUG: batch statistics in eval mode too
        self.training = training
        return Y


class BatchNormEvalUpdatesRunning(BatchNorm1D):
    """Eval mode normalises with the running statistics, but updates them first (tester 7's T13)."""

    KWARGS = {"training": False}

    def forward(self, X, training=False):
        mu, var = X.mean(axis=0), X.var(axis=0)
        self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mu  # BUG: in eval too
        self.running_var = self.momentum * self.running_var + (1 - self.momentum) * var
        if not training:
            mu, var = self.running_mean, self.running_var
        self.training = training
        self.xmu, self.istd = X - mu, 1 / np.sqrt(var + self.eps)
        self.xhat = self.xmu * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]


class BatchNormMeanTermCount(BatchNorm1D):
    def dx_train(self, dxhat):
        n = len(dxhat)
        dvar = np.sum(dxhat * self.xmu, axis=0) * -0.5 * self.istd**3
        dmu = np.sum(-dxhat * self.istd, axis=0) + dvar * np.mean(-2 * self.xmu, axis=0)
        return dxhat * self.istd + dvar * 2 * self.xmu / n + dmu / (n - 1)  # BUG: the mean term's count


class SpatialBatchNormMeanTermN(SpatialBatchNormDirect):
    def backward(self, dY):
        ax = (0, 2, 3)
        self.grads["gamma"] = np.sum(dY * self.xhat, axis=ax)
        self.grads["beta"] = np.sum(dY, axis=ax)
        dxhat = dY * self.params["gamma"][:, None, None]
        m, n = self.count(dY), dY.shape[0]
        return self.istd * (dxhat - dxhat.sum(axis=ax, keepdims=True) / n  # BUG: the mean term over N, not N*H*W
                            - self.xhat * (dxhat * self.xhat).sum(axis=ax, keepdims=True) / m)


class LayerNormWrongAxis(LayerNorm):
    def dx(self, dxhat):  # BUG: the means over axis 0, the batch (BatchNorm's), where forward's are over the features
        return self.istd * (dxhat - dxhat.mean(axis=0) - self.xhat * np.mean(dxhat * self.xhat, axis=0))


class LayerNormWrongAxisForward(LayerNorm):
    def forward(self, X, training=False):
        mu, var = X.mean(axis=0, keepdims=True), X.var(axis=0, keepdims=True)  # BUG: over the batch, BatchNorm's
        self.istd = 1 / np.sqrt(var + self.eps)
        self.xhat = (X - mu) * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]


class LayerNormWrongAxisCS231n(LayerNorm):
    """A LayerNorm whose backward is CS231n's batchnorm_backward, over axis 0 (BUG), on forward's per-sample cache."""

    def forward(self, X, training=False):
        self.xmu = X - X.mean(axis=-1, keepdims=True)
        return super().forward(X, training)

    def dx(self, dxhat):
        n = len(dxhat)  # BUG: BatchNorm's sums over the batch
        dvar = np.sum(dxhat * self.xmu, axis=0) * -0.5 * self.istd**3
        dmu = np.sum(-dxhat * self.istd, axis=0) + dvar * np.mean(-2 * self.xmu, axis=0)
        return dxhat * self.istd + dvar * 2 * self.xmu / n + dmu / n



class LayerNormGammaOutside(LayerNorm):
    """corpus38 F5: numpy-transformer's LayerNormalization.backward, BatchNorm's compact formula on the features."""

    def backward(self, dY):
        self.grads["gamma"] = np.sum(dY * self.xhat, axis=0)
        self.grads["beta"] = np.sum(dY, axis=0)
        D = dY.shape[-1]  # BUG: gamma outside the sums over the features (dY * gamma belongs inside them)
        return self.params["gamma"] * self.istd / D * (D * dY - dY.sum(axis=-1, keepdims=True)
                                                       - self.xhat * (dY * self.xhat).sum(axis=-1, keepdims=True))


class BatchNormGammaOutside(BatchNorm1D):
    """CS231n's compact batchnorm_backward, gamma outside the sums over the batch: right (gamma is constant along
    axis 0), the control of LayerNormGammaOutside."""

    def backward(self, dY):
        self.grads["gamma"] = np.sum(dY * self.xhat, axis=0)
        self.grads["beta"] = np.sum(dY, axis=0)
        if not self.training:
            return dY * self.params["gamma"] * self.istd
        N = len(dY)
        return self.params["gamma"] * self.istd / N * (N * dY - dY.sum(axis=0) - self.xhat * (dY * self.xhat).sum(axis=0))
