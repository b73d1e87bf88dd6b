"""Session 25 (newuser24 L9, FAILed "no known bug pattern" before): CS231n assignment 1's ``(loss, grad)`` functions
of the weights, ``svm_loss_naive(W, X, y, reg)`` and ``softmax_loss_naive(W, X, y, reg)``, checked as ``gradcheck
check --loss`` checks them (``--input-shape`` W's shape, ``--init`` X, y and reg), whose gradient's penalty term is of
another convention than the penalty the loss adds. ``LOSS``: W's shape; :data:`INIT` each function's other arguments.

* ``svmreghalf``: ``loss += reg * np.sum(W * W)`` with ``dW += reg * W`` (newuser24's file; 2 * reg * W is due).
* ``softmaxhalftwice``: ``loss += 0.5 * reg * np.sum(W * W)`` with ``dW += 2 * reg * W``.
* ``softmaxnoreg``: ``loss += reg * np.sum(W * W)`` and no penalty term in dW.
"""

import numpy as np

LOSS = (4, 3)
LOSS_DATA = ("labels", "real")
_DATA = {"X": [[1.0, 0.5, -0.3, 0.2], [0.1, -1.2, 0.7, 0.4], [-0.5, 0.3, 0.9, -1.1], [0.6, -0.4, 0.2, 0.8]],
         "y": [0, 2, 1, 2], "reg": 0.1}
INIT = {n: _DATA for n in ("svm", "svmreghalf", "softmax", "softmaxhalf", "softmaxhalftwice", "softmaxnoreg")}


def _svm_data(W, X, y):
    X, y = np.asarray(X), np.asarray(y)
    loss, dW = 0.0, np.zeros_like(W)
    for i in range(X.shape[0]):
        s = X[i] @ W
        for j in range(W.shape[1]):
            if j == y[i]:
                continue
            margin = s[j] - s[y[i]] + 1
            if margin > 0:
                loss += margin
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    return loss / X.shape[0], dW / X.shape[0]


def svm(W, X, y, reg):
    loss, dW = _svm_data(W, X, y)
    return loss + reg * np.sum(W * W), dW + 2 * reg * W


def svmreghalf(W, X, y, reg):
    loss, dW = _svm_data(W, X, y)
    return loss + reg * np.sum(W * W), dW + reg * W  # BUG: 2 * reg * W is due


def _softmax_data(W, X, y):
    X, y = np.asarray(X), np.asarray(y)
    s = X @ W
    s -= s.max(axis=1, keepdims=True)
    p = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)
    loss = -np.log(p[np.arange(len(y)), y]).mean()
    p[np.arange(len(y)), y] -= 1
    return loss, X.T @ p / len(y)


def softmax(W, X, y, reg):
    loss, dW = _softmax_data(W, X, y)
    return loss + reg * np.sum(W * W), dW + 2 * reg * W


def softmaxhalf(W, X, y, reg):  # the older convention, consistent: 0.5 * reg * sum(W**2), gradient reg * W
    loss, dW = _softmax_data(W, X, y)
    return loss + 0.5 * reg * np.sum(W * W), dW + reg * W


def softmaxhalftwice(W, X, y, reg):
    loss, dW = _softmax_data(W, X, y)
    return loss + 0.5 * reg * np.sum(W * W), dW + 2 * reg * W  # BUG: reg * W is due


def softmaxnoreg(W, X, y, reg):
    loss, dW = _softmax_data(W, X, y)
    return loss + reg * np.sum(W * W), dW  # BUG: 2 * reg * W missing
