"""Session 29 (tester28s's Raschka NeuralNetMLP with the book's reported loss): forward's ``np.mean`` over the batch
and each example's C entries divides by N x C, a backward dividing by the batch's N alone is C times too large; the
diagnosis said "3 is self.C, a setting forward applies" (``factor-attribute``), now the mean's count
(``factor-mean``). The bug is ONE edit of the correct layer above it."""

import numpy as np

INPUT = (4, 3)


class MeanSquare:
    """A loss written as a layer: the mean squared error of X against a one-hot of class 0 over its C classes, over
    the batch and the classes (Raschka's np.mean((onehot - a_out) ** 2)); correct."""

    ADAPT = True

    def __init__(self, C=3):
        self.C = C
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.E = X - np.eye(self.C)[0]
        return np.mean(self.E ** 2, keepdims=True)

    def backward(self, dY):
        return dY * 2 * self.E / (self.E.shape[0] * self.C)


class MeanSquareBatchOnly(MeanSquare):
    def backward(self, dY):
        return dY * 2 * self.E / self.E.shape[0]  # BUG: the batch's N alone, where forward's mean divides by N x C
