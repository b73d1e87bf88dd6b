"""fixd26: beginners' activation bugs (session 26 brief): sigmoid's derivative with a flipped sign inside,
GELU's derivative without its pdf term, a dropout backward scaled by p."""

import numpy as np

INPUT = (5, 4)


class Sigmoid:
    params, grads = {}, {}

    def forward(self, X, training=False):
        self.out = 1 / (1 + np.exp(-X))
        return self.out

    def backward(self, dY):
        return dY * self.out * (1 - self.out)


class SigmoidOnePlus(Sigmoid):
    def backward(self, dY):
        return dY * self.out * (1 + self.out)  # BUG: (1 + out) for (1 - out)


class GeluErf:
    """Y = GELU(X) = X Phi(X), exact (erf)."""

    params, grads = {}, {}

    def forward(self, X, training=False):
        from scipy.special import erf

        self.X = X
        self.cdf = 0.5 * (1 + erf(X / np.sqrt(2)))
        return X * self.cdf

    def backward(self, dY):
        X = self.X
        return dY * (self.cdf + X * np.exp(-X * X / 2) / np.sqrt(2 * np.pi))


class GeluErfNoPdf(GeluErf):
    def backward(self, dY):
        return dY * self.cdf  # BUG: the X * phi(X) term of d(X Phi(X))/dX is missing


class GeluTanh:
    """Y = GELU(X), tanh-approximated."""

    params, grads = {}, {}

    def forward(self, X, training=False):
        self.X = X
        self.t = np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X**3))
        return 0.5 * X * (1 + self.t)

    def backward(self, dY):
        X, t = self.X, self.t
        return dY * (0.5 * (1 + t) + 0.5 * X * (1 - t**2) * np.sqrt(2 / np.pi) * (1 + 3 * 0.044715 * X**2))


class GeluTanhNoPdf(GeluTanh):
    def backward(self, dY):
        return dY * 0.5 * (1 + self.t)  # BUG: the term through t's argument is missing


class Dropout:
    """Inverted dropout with its own generator (the checker rewinds it)."""

    params, grads = {}, {}
    KWARGS = {"training": True}

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)

    def forward(self, X, training=False):
        if not training:
            self.mask = np.ones_like(X)
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class DropoutScaledByP(Dropout):
    def forward(self, X, training=False):
        out = super().forward(X, training)
        self.keep = self.mask > 0
        return out

    def backward(self, dY):
        return dY * self.keep * self.p  # BUG: scaled by p, forward's scale is 1 / (1 - p)


class DropoutP03ScaledByP(DropoutScaledByP):
    """p = 0.3: p and 1 - p differ, so p for 1 - p is named apart from 1 / (1 - p)."""

    def __init__(self, p=0.3, seed=0):
        super().__init__(p, seed)
