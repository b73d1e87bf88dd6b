"""Session 18's tester's bugs (fixer fixt18, tester18s's mine/*.py): a CS231n word embedding pair assigning
``dW[x] += dout`` (numpy's buffered fancy index), ..."""

import numpy as np

INPUT = (4, 6)
IDS = np.array([[0, 3, 1, 4], [4, 0, 2, 2], [5, 5, 1, 0]])
INPUTS = {"wordemb": [IDS, (6, 5)], "wordembbuffered": [IDS, (6, 5)]}


def wordemb_forward(x, W):
    return W[x], (x, W)


def wordemb_backward(dout, cache):
    x, W = cache
    dW = np.zeros_like(W)
    np.add.at(dW, x, dout)
    return dW


def wordembbuffered_forward(x, W):
    return W[x], (x, W)


def wordembbuffered_backward(dout, cache):
    x, W = cache
    dW = np.zeros_like(W)
    dW[x] += dout  # BUG: buffered, the last occurrence of a repeated id wins
    return dW
