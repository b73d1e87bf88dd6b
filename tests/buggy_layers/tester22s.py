"""Session 22 (tester22s): bugs a layer's initial values or form hide. A square weight that starts symmetric (the
identity of an IRNN, (A + A.T) / 2) makes ``dY @ W`` equal ``dY @ W.T``, so a missing ``.T`` passes at init; it is
found at drawn values (:func:`gradcheck.diagnose.at_drawn_params`, H1)."""

import numpy as np

INPUT = (5, 4)


class SymTanh:
    """tanh(X @ W), W symmetric at init (a Hopfield-style coupling), attribute style (W/dW), correct."""

    ADAPT = True

    def __init__(self, D=4):
        A = np.random.default_rng(17).standard_normal((D, D))
        self.W = (A + A.T) / 2

    def forward(self, X):
        self.X = X
        self.Y = np.tanh(X @ self.W)
        return self.Y

    def backward(self, dY):
        dZ = dY * (1 - self.Y ** 2)
        self.dW = self.X.T @ dZ
        return dZ @ self.W.T


class SymTanhNoT(SymTanh):
    def backward(self, dY):
        dZ = dY * (1 - self.Y ** 2)
        self.dW = self.X.T @ dZ
        return dZ @ self.W  # BUG: W.T due; W symmetric at init, so the two agree there


class SeedSymLinear:
    """X @ W, the seed's style (no dW: backward(dY) -> dX alone), W symmetric at init, correct."""

    ADAPT = True

    def __init__(self, D=4):
        A = np.random.default_rng(15).standard_normal((D, D))
        self.W = (A + A.T) / 2

    def forward(self, X):
        return X @ self.W

    def backward(self, dY):
        return dY @ self.W.T


class SeedSymLinearNoT(SeedSymLinear):
    def backward(self, dY):
        return dY @ self.W  # BUG: W.T due


class EyeDense:
    """tanh(X @ W + b), params/grads dicts, W the identity at init (residual-friendly), b nonzero, correct."""

    def __init__(self, D=4):
        self.params = {"W": np.eye(D), "b": np.linspace(0.1, 0.4, D)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        self.Y = np.tanh(X @ self.params["W"] + self.params["b"])
        return self.Y

    def backward(self, dY):
        dZ = dY * (1 - self.Y ** 2)
        self.grads["W"] = self.X.T @ dZ
        self.grads["b"] = dZ.sum(0)
        return dZ @ self.params["W"].T


class EyeDenseNoT(EyeDense):
    def backward(self, dY):
        dZ = dY * (1 - self.Y ** 2)
        self.grads["W"] = self.X.T @ dZ
        self.grads["b"] = dZ.sum(0)
        return dZ @ self.params["W"]  # BUG: W.T due; W = I at init


class PropW:
    """X @ W with W a property over self._w (H2: the gradient self.dW is paired with the property's name), correct."""

    ADAPT = True
    INPUT = (5, 3)

    def __init__(self):
        self._w = np.array([[1.0, -2.0], [0.5, 0.3], [-0.7, 1.1]])

    @property
    def W(self):
        return self._w

    @W.setter
    def W(self, v):
        self._w = v

    def forward(self, X):
        self.X = X
        return X @ self.W

    def backward(self, dY):
        self.dW = self.X.T @ dY
        return dY @ self.W.T


class PropWDouble(PropW):
    def backward(self, dY):
        self.dW = 2 * self.X.T @ dY  # BUG: factor 2 (passed: _w read as a weight without a gradient)
        return dY @ self.W.T


class IntWeights:
    """X @ W + b with W and b typed as integers (H3: refused with exit 3, as a params dict's integer entry is)."""

    INPUT = (5, 3)

    def __init__(self):
        self.W = np.array([[1, 2], [3, -1], [0, 2]])
        self.b = np.array([0, 1])

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW = self.X.T @ dY * 3  # wrong, and never compared: W is refused first
        self.db = dY.sum(0)
        return dY @ self.W.T


class IntScale:
    """s * tanh(X) with s = 1, an int (H3), and a float time step dt = 0.1 that backward never writes (no gradient)."""

    INPUT = (5, 4)

    def __init__(self):
        self.s, self.t, self.dt = 1, 0, 0.1

    def forward(self, X):
        self.tX = np.tanh(X)
        return self.s * self.tX

    def backward(self, dY):
        self.ds = np.mean(dY * self.tX)  # wrong (a mean), never compared: s is refused first
        return dY * self.s * (1 - self.tX ** 2)


class IntCounter(IntScale):
    """The same with s = 1.0, a float: the int counter t beside dt (not written by backward) is no parameter."""

    def __init__(self):
        super().__init__()
        self.s = 1.0

    def backward(self, dY):
        self.ds = np.sum(dY * self.tX)
        return dY * self.s * (1 - self.tX ** 2)


class HuberAbs:
    """Elementwise Huber with its |x| in a local name (``a = np.abs(X)``; H4: the bound +-delta was not read), correct."""

    ADAPT = True
    INPUT = (8, 3)

    def __init__(self, delta=5.0):
        self.delta = delta

    def forward(self, X):
        self.X = X
        a = np.abs(X)
        return np.where(a <= self.delta, 0.5 * X ** 2, self.delta * (a - 0.5 * self.delta))

    def backward(self, dY):
        return dY * np.where(np.abs(self.X) <= self.delta, self.X, self.delta * np.sign(self.X))


class HuberAbsNoDelta(HuberAbs):
    def backward(self, dY):
        return dY * np.where(np.abs(self.X) <= self.delta, self.X, np.sign(self.X))  # BUG: delta * sign(X) due


class Softshrink:
    """x - lambd * sign(x) where |x| > lambd, else 0, lambd = 4: zeros on every drawn input (H4: was NOT CHECKED as
    "every entry dropped" by a "random mask"), correct."""

    ADAPT = True
    INPUT = (8, 3)

    def __init__(self, lambd=4.0):
        self.lambd = lambd

    def forward(self, X):
        self.X = X
        return np.where(np.abs(X) > self.lambd, X - self.lambd * np.sign(X), 0.0)

    def backward(self, dY):
        return dY * (np.abs(self.X) > self.lambd)


class SoftshrinkZero(Softshrink):
    def backward(self, dY):
        return dY * 0.0  # BUG: the active region |x| > lambd forgotten


class EMACenter:
    """Training: rm = 0.9 rm + 0.1 mean(X), updated and then used, y = X - rm; eval: X - rm (M1: FAILed "forward
    changes the layer's state"; checked with rm put back before every forward), correct."""

    ADAPT = True
    INPUT = (5, 4)
    KWARGS = {"training": True}

    def __init__(self, D=4):
        self.rm = np.zeros(D)
        self.momentum = 0.1

    def forward(self, X, training=False):
        if training:
            self.rm = (1 - self.momentum) * self.rm + self.momentum * X.mean(0)
            self.N = X.shape[0]
        self.training = training
        return X - self.rm

    def backward(self, dY):
        if self.training:
            return dY - self.momentum * dY.sum(0) / self.N
        return dY


class EMACenterNoMeanPath(EMACenter):
    def backward(self, dY):
        return dY  # BUG in training: the running mean rm depends on X (the -0.1 * dY.sum(0) / N term)
