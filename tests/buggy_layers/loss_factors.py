"""Loss classes checked as ``gradcheck check --loss`` checks them (session 14, tester13 MSEFactor): a symmetric
loss ``forward(a, b)`` of ``a - b`` whose parameter names do not say which is the prediction, with a constant factor
wrong in its backward (the same factor whichever argument is the prediction, only its sign changes), read with the
probe ``gradcheck check`` draws. ``LOSS``: the shape of y_pred (real targets of that shape)."""

import numpy as np

LOSS = (8, 3)


class MSE:
    def forward(self, a, b):
        self.a, self.b = a, b
        return np.mean((a - b) ** 2)

    def backward(self):
        return 2 * (self.a - self.b) / self.a.size


class MSEFactor(MSE):
    def backward(self):
        return (self.a - self.b) / self.a.size  # BUG: the factor 2 of the square missing


class MSESignFactor(MSE):
    def backward(self):
        return -4 * (self.a - self.b) / self.a.size  # BUG: x2 (and the sign, if a is the prediction)


class MSEOverN(MSE):
    def backward(self):
        return 2 * (self.a - self.b) / len(self.a)  # BUG: divides by N, the mean is over N*D


class MSENamed:
    def forward(self, y_pred, y_true):
        self.d = y_pred - y_true
        return np.mean(self.d ** 2)

    def backward(self):
        return 2 * self.d / self.d.size


class MSENamedFactor(MSENamed):
    def backward(self):
        return self.d / self.d.size  # BUG: the factor 2 of the square missing


class MSEPredArg(MSE):
    PRED_ARG = "a"  # the correct twin of the unnamed ones: --pred-arg a (unnamed and correct, the order is the user's)
