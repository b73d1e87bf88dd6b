"""String and boolean arguments forward passes on (session 18, L1 and L2): a params/grads-dict layer with
``forward(X, training=True, mode='fast')`` (once exit 3, "its switches raised an exception: (no message)"), and
subclasses passing ``mode`` (or ``double``) on to the base's forward, positionally or by keyword, to a helper method,
a module function or a sub-layer, where it is compared with 'slow' (once PASS 'fast' alone). Each buggy layer
doubles dX in the branch only the other value reaches."""

import numpy as np

INPUT = (3, 4)


def _is_slow(mode):
    return mode == "slow"


class Base3:
    """forward(X, training=True, mode='fast'): params/grads dicts, a flag set from the mode."""

    ADAPT = True

    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((4, 3))}
        self.grads = {}

    def forward(self, X, training=True, mode="fast"):
        self.X, self.slow = X, mode == "slow"
        return X @ self.params["W"]

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T * self.k()

    def k(self):
        return 1.0


class Base3Bug(Base3):
    def k(self):
        return 2.0 if self.slow else 1.0  # BUG: dX doubled at mode='slow'


class Sub3Bug(Base3Bug):
    def forward(self, X, training=True, mode="fast"):
        return super().forward(X, training, mode)


class Sub3KwBug(Base3Bug):
    def forward(self, X, training=True, mode="fast"):
        return super().forward(X, training=training, mode=mode)


class Sub3ImplBug(Base3Bug):
    def forward(self, X, training=True, mode="fast"):
        return self._impl(X, mode)

    def _impl(self, X, m):
        return Base3Bug.forward(self, X, True, m)


class Sub3FuncBug(Base3Bug):
    def forward(self, X, training=True, mode="fast"):
        self.X, self.slow = X, _is_slow(mode)
        return X @ self.params["W"]


class Inner:
    def forward(self, X, mode):
        self.slow = mode == "slow"
        return X


class Sub3Inner(Base3):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, X, training=True, mode="fast"):
        self.X = self.inner.forward(X, mode)
        self.slow = self.inner.slow
        return X @ self.params["W"]


class Sub3InnerBug(Sub3Inner):
    def k(self):
        return 2.0 if self.slow else 1.0  # BUG: dX doubled at mode='slow'


class Sub3DictBug(Base3Bug):
    SLOW = {"fast": False, "slow": True}

    def forward(self, X, training=True, mode="fast"):
        self.X, self.slow = X, self.SLOW[mode]
        return X @ self.params["W"]


class BaseB(Base3):
    """forward(X, training=True, double=False): a boolean beside training, passed on by the subclasses."""

    def forward(self, X, training=True, double=False):
        self.X, self.slow = X, double
        return X @ self.params["W"]


class SubBBug(BaseB):
    def forward(self, X, training=True, double=False):
        return super().forward(X, training, double)

    def k(self):
        return 2.0 if self.slow else 1.0  # BUG: dX doubled at double=True


class Sub3(Base3):
    """The correct subclass: every combination checked, each passes."""

    def forward(self, X, training=True, mode="fast"):
        return super().forward(X, training=training, mode=mode)
