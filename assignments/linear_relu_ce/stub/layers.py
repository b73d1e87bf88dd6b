"""Assignment linear_relu_ce: write Linear, ReLU and SoftmaxCrossEntropy with hand-derived gradients.

Rules
-----
* numpy only: autoprop, autograd, torch, jax and tensorflow may not be imported
  (a submission that does gets no credit for the parts that forbid it). The grader
  provides only numpy and the standard library: scipy (``scipy.special.logsumexp``)
  or any other package is not available there, and a file importing one scores 0.
  ``gradcheck check`` warns about such an import.
* Protocol: ``params`` and ``grads`` dicts of float64 arrays with the same keys;
  ``forward(X, training=False)`` returns Y and keeps what backward needs;
  ``backward(dY)`` returns dL/dX and fills ``grads``. The loss has
  ``forward(y_true, y_pred) -> float`` and ``backward() -> dL/dy_pred``.
* Work in float64 and do not modify arrays you receive (X, dY) or your caches
  in place.
* Derive backward by hand: backward must not call forward (keep what it needs
  in forward's cache instead). The grader counts forward's calls during backward:
  a layer whose backward calls forward fails its gradient tests, even when the
  numbers are right (a backward computing central differences of forward is).

Check your work before submitting::

    gradcheck check layers.py::Linear --input-shape 8,5 --init '{"in_features": 5, "out_features": 3}'
"""

import numpy as np


class Linear:
    """Fully connected layer: Y = X @ W.T + b with W of shape (out, in) and b of shape (out,)."""

    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        k = 1.0 / np.sqrt(in_features)
        self.in_features, self.out_features = in_features, out_features
        self.params = {"W": rng.uniform(-k, k, size=(out_features, in_features)),
                       "b": rng.uniform(-k, k, size=out_features)}
        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}

    def forward(self, X, training=False):
        raise NotImplementedError("Linear.forward is not written yet: return X @ W.T + b and keep X for backward.")

    def backward(self, dY):
        raise NotImplementedError("Linear.backward is not written yet: fill grads['W'], grads['b'] and return dX.")


class ReLU:
    """Y = max(X, 0) element-wise."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        raise NotImplementedError("ReLU.forward is not written yet.")

    def backward(self, dY):
        raise NotImplementedError("ReLU.backward is not written yet: return dX (chain rule with dY).")


class SoftmaxCrossEntropy:
    """Mean cross-entropy of softmax(y_pred) against integer labels y_true of shape (N,)."""

    def forward(self, y_true, y_pred):
        raise NotImplementedError("SoftmaxCrossEntropy.forward is not written yet: return the mean loss.")

    def backward(self):
        raise NotImplementedError("SoftmaxCrossEntropy.backward is not written yet: return dL/dy_pred.")
