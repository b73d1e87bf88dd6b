"""Layers with hand-derived gradients.

Protocol (students need no base class; ours share :class:`Layer`):

* ``params`` / ``grads``: dicts of ndarrays with the same keys, shapes and
  dtypes. ``backward`` OVERWRITES ``grads`` (never accumulates). Optimizers
  update ``params`` arrays in place, so never rebind them.
* ``forward(X, training=False) -> Y`` stores what backward needs in
  ``self.cache``; ``backward(dY) -> dX`` fills ``grads`` and returns dL/dX,
  where ``dY`` is dL/dY. ``layer(X)`` is ``layer.forward(X)``.
* float64 by default; float32 is kept (output dtype = input dtype).
* All input checks come from :mod:`manualprop._validation`.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    check_array,
    check_float_dtype,
    check_forward_done,
    check_grad_output,
    check_positive_int,
)
from .init import linear_params

__all__ = ["Layer", "Linear", "ReLU", "Sigmoid", "Tanh"]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """Stable logistic function: only ``exp(-|x|)`` (at most 1) is ever computed."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class Layer:
    """Small base class for manualprop's own layers.

    Provides empty ``params``/``grads``, ``cache = None``, ``__call__`` and a
    ``repr`` used as the prefix of every error message. Subclasses implement
    ``forward`` and ``backward``.
    """

    def __init__(self):
        self.params: dict[str, np.ndarray] = {}
        self.grads: dict[str, np.ndarray] = {}
        self.cache = None

    def __call__(self, X, training=False):
        return self.forward(X, training=training)

    def forward(self, X, training=False):  # pragma: no cover - abstract
        raise NotImplementedError

    def backward(self, dY):  # pragma: no cover - abstract
        raise NotImplementedError

    def _repr_args(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _where(self, method: str) -> str:
        return f"{self!r}.{method}"

    def _check_dY(self, dY) -> np.ndarray:
        where = self._where("backward")
        check_forward_done(self.cache, where)
        return check_grad_output(
            dY, where, shape=self.cache["out_shape"], dtype=self.cache["dtype"]
        )


class Linear(Layer):
    """Fully connected layer ``Y = X @ W.T + b``.

    Parameters
    ----------
    in_features, out_features : int
        Positive sizes.
    rng : None, int or numpy.random.Generator
        Initialisation randomness, see :func:`manualprop.init.linear_params`
        (``k = 1/sqrt(in_features)``, ``W, b ~ U(-k, k)``, W drawn first).
    dtype : {np.float64, np.float32}
        dtype of the parameters; ``X`` must have the same dtype.

    Attributes
    ----------
    params : dict
        ``"W"``: (out_features, in_features); ``"b"``: (out_features,).
    grads : dict
        Same keys and shapes, overwritten by each ``backward``.

    Notes
    -----
    With ``X`` of shape (N, in) and ``dY = dL/dY`` of shape (N, out)::

        dW = dY.T @ X        (out, in)
        db = dY.sum(axis=0)  (out,)
        dX = dY @ W          (N, in)

    Source: ``lessons/01-linear-layer.md``.

    Raises
    ------
    TypeError
        ``X``/``dY`` not float, or ``X`` dtype differs from the parameters'.
    ValueError
        ``X`` not (batch, in_features), ``dY`` not the shape of ``Y``, NaN/inf.
    RuntimeError
        ``backward`` before ``forward``.

    Examples
    --------
    >>> import numpy as np
    >>> layer = Linear(2, 1, rng=0)
    >>> layer.params["W"][...] = [[1.0, -2.0]]
    >>> layer.params["b"][...] = [0.5]
    >>> layer.forward(np.array([[3.0, 1.0]]))
    array([[1.5]])
    >>> layer.backward(np.array([[2.0]]))
    array([[ 2., -4.]])
    >>> layer.grads["W"], layer.grads["b"]
    (array([[6., 2.]]), array([2.]))
    """

    def __init__(self, in_features, out_features, rng=None, dtype=np.float64):
        super().__init__()
        name = type(self).__name__
        self.in_features = check_positive_int(in_features, "in_features", name)
        self.out_features = check_positive_int(out_features, "out_features", name)
        self.dtype = check_float_dtype(dtype, name)
        self.params = linear_params(self.in_features, self.out_features, rng, self.dtype)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def _repr_args(self) -> str:
        s = f"in_features={self.in_features}, out_features={self.out_features}"
        if self.dtype != np.float64:
            s += f", dtype={self.dtype}"
        return s

    def forward(self, X, training=False):
        """``Y = X @ W.T + b``; X (batch, in_features) -> Y (batch, out_features)."""
        X = check_array(
            X, self._where("forward"), shape=("batch", self.in_features), dtype=self.dtype
        )
        Y = X @ self.params["W"].T + self.params["b"]
        self.cache = {"X": X, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """Fill ``grads["W"] = dY.T @ X``, ``grads["b"] = dY.sum(0)``; return ``dY @ W``."""
        dY = self._check_dY(dY)
        X = self.cache["X"]
        self.grads["W"] = dY.T @ X
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params["W"]


class _Elementwise(Layer):
    """Parameter-free layer applied element by element to X of any shape.

    Subclasses define ``_forward(X) -> (Y, saved)`` and
    ``_local_grad(saved) -> dY/dX`` (same shape as X); backward is
    ``dX = dY * dY/dX``.
    """

    def forward(self, X, training=False):
        X = check_array(X, self._where("forward"))
        Y, saved = self._forward(X)
        self.cache = {"saved": saved, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        dY = self._check_dY(dY)
        return dY * self._local_grad(self.cache["saved"])


class ReLU(_Elementwise):
    """Rectified linear unit ``Y = max(X, 0)``, any shape.

    Derivative ``1`` where ``X > 0`` and ``0`` elsewhere, including at
    ``X = 0`` (relu'(0) = 0, as in PyTorch). Caches the mask ``X > 0``.
    Source: ``lessons/02-activations.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Non-float or non-finite input, ``dY`` of the wrong shape, backward
        before forward.
    """

    def _forward(self, X):
        mask = X > 0
        return np.where(mask, X, 0).astype(X.dtype, copy=False), mask

    def _local_grad(self, mask):
        return mask


class Sigmoid(_Elementwise):
    """Logistic function ``Y = 1 / (1 + exp(-X))``, any shape.

    Computed stably as ``1/(1+e)`` for ``X >= 0`` and ``e/(1+e)`` for
    ``X < 0`` with ``e = exp(-|X|) <= 1``, so no overflow for large ``|X|``.
    Derivative ``Y * (1 - Y)`` (from the cached ``Y``).
    Source: ``lessons/02-activations.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Non-float or non-finite input, ``dY`` of the wrong shape, backward
        before forward.
    """

    def _forward(self, X):
        Y = _sigmoid(X)
        return Y, Y

    def _local_grad(self, Y):
        return Y * (1 - Y)


class Tanh(_Elementwise):
    """Hyperbolic tangent ``Y = tanh(X)``, any shape.

    Derivative ``1 - Y**2`` (from the cached ``Y``).
    Source: ``lessons/02-activations.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Non-float or non-finite input, ``dY`` of the wrong shape, backward
        before forward.
    """

    def _forward(self, X):
        Y = np.tanh(X)
        return Y, Y

    def _local_grad(self, Y):
        return 1 - Y * Y
