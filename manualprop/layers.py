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

import functools
import math

import numpy as np

from . import _validation
from ._extremes import sech2 as _sech2
from ._extremes import softmax_vjp
from ._validation import (
    DOT_CHUNK,
    SS_LIMIT,
    UnlookedInputError,
    Where,
    check_array,
    check_axis,
    check_float_dtype,
    check_forward_done,
    check_grad_output,
    check_int,
    check_option,
    check_positive_int,
    check_scalar,
    float_ss,
    gradients_finite,
    output_ss,
)
from .init import linear_params


def _erfc(x):
    """``scipy.special.erfc(x)``, scipy imported at the first call: its import is most of the
    start-up of a process that never builds a GELU (each ``gradcheck check`` in a test)."""
    return _erfc_function()(x)


@functools.cache
def _erfc_function():
    try:  # scipy comes with scikit-learn; the fallback is exact but slow
        from scipy.special import erfc
    except ImportError:  # pragma: no cover - exercised only without scipy
        scalar = np.vectorize(math.erfc, otypes=[np.float64])
        return lambda x: scalar(x).astype(x.dtype, copy=False)
    return erfc


__all__ = [
    "ELU",
    "GELU",
    "Flatten",
    "Layer",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "ReLU",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Tanh",
]

_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """Stable logistic function: only ``exp(-|x|)`` (at most 1) is ever computed."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _sigmoid_and_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s = sigmoid(x)`` and ``s'(x) = s(x) s(-x)`` from one ``exp(-|x|)``, both stable.

    ``s'`` is ``e / (1 + e)**2`` with ``e = exp(-|x|)``, the product :class:`Sigmoid`
    takes as ``Y * sigmoid(-X)``: full relative precision where ``s * (1 - s)``
    cancels to 0 (at ``x = 40`` the derivative is 4.25e-18). Used by the recurrent layers.
    """
    e = np.exp(-np.abs(x))
    q = 1.0 / (1.0 + e)
    s = np.where(x >= 0, q, e * q)
    e *= q
    e *= q
    return s, e


#: Where ``1 - tanh(x)**2`` is at least this (``|x| < 1.73``), it is within 8 ulp of
#: ``1 / cosh(x)**2`` (measured 1.6e-15 at most; 1/cosh**2 itself is within 2 ulp): ``tanh(x)``
#: is off by at most an ulp of 1, which is at most 1e-15 of 1/8. Below it, ``1 - y**2`` loses
#: digits as ``y`` nears +-1 (0 at ``x = 20``), so those entries take ``1 / cosh(x)**2``.
_TANH_CHEAP = 0.125


#: A bound on ``X . X`` below which no ``|x|`` reaches 700 (float64) or 85 (float32), so that
#: ``cosh(x)`` is finite (up to 710 and 89) and :func:`_tanh_grad` needs no ``np.errstate``
#: (a Python context manager that costs more than the few saturated entries' arithmetic)
_COSH_SS = {np.dtype(np.float64): 700.0 ** 2, np.dtype(np.float32): 85.0 ** 2}


def _tanh_grad(X: np.ndarray, Y: np.ndarray, ss: float = math.inf) -> np.ndarray:
    """``tanh'(x)`` from the input ``X`` and the output ``Y = tanh(X)``, to full relative precision.

    ``1 - Y**2`` (two cheap passes, as the output-based formula of the lessons) where it is
    at least ``_TANH_CHEAP`` and accurate; ``1 / cosh(X)**2`` (:func:`_sech2`) only on the
    saturated entries, where ``1 - Y**2`` cancels (``x = 20``: 0 instead of 1.70e-17). One
    more pass (the minimum) finds whether there are any. ``ss``, a bound on ``X . X`` (the
    layer's ``_ss["X"]``), proves ``cosh`` finite when it is below ``_COSH_SS``: the same
    ufuncs as :func:`_sech2` then run without its ``np.errstate`` (:func:`_sech2_below_overflow`,
    the same bits). A NaN ``ss`` says that nobody looked at ``X`` (a Sequential's ``Linear``
    before this ``Tanh`` left its output unlooked): the saturated entries, the only place where
    an infinity can be (``tanh(+-inf) = +-1``), are looked at (their sum of squares, which is
    also their bound), and None is returned when one is NaN/inf. Returns a
    new array of Y's dtype.
    """
    if not Y.ndim:
        return _sech2(X)
    d = Y * Y
    np.subtract(1.0, d, out=d)
    if d.size and d.item(d.argmin()) < _TANH_CHEAP:  # smallest(d), inline
        saturated = d < _TANH_CHEAP
        Xs = X[saturated]
        if ss != ss:  # X not looked at (a NaN ss, in a Sequential): a +-inf hides here
            # its saturated entries' look, and their bound (sum_of_squares, its one dot inline)
            ss = float(_validation._vdot(Xs, Xs)) if Xs.size <= DOT_CHUNK else _validation.sum_of_squares(Xs)
            if not ss < math.inf and not np.isfinite(Xs).all():
                return None  # (tanh(+-inf) = +-1, tanh' = 0: the caller names it)
        sech2 = _sech2_below_overflow if ss < _COSH_SS.get(X.dtype, 0.0) else _sech2
        d[saturated] = sech2(Xs)
    return d


def _sech2_below_overflow(x: np.ndarray) -> np.ndarray:
    """:func:`_sech2` of an array whose ``cosh`` is known to be finite (every ``|x| < 700``):
    the same ufuncs, the same bits, without the ``np.errstate`` that only keeps an overflow quiet."""
    c = np.cosh(x)
    np.divide(1.0, c, out=c)
    return np.multiply(c, c, out=c)


class Layer:
    """Small base class for manualprop's own layers.

    Provides empty ``params``/``grads``, ``cache = None``, ``__call__`` and a
    ``repr`` used as the prefix of every error message. Subclasses implement
    ``forward`` and ``backward``.
    """

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        # sums of squares of the last checked tensors ("X", "Y", "dY", "dX"): bounds that prove
        # products finite without a look (Linear.backward, Sequential); not part of the cache.
        # Made here, not in __init__, so that a subclass whose __init__ skips Layer.__init__ has
        # its own too. Not a class attribute that makes it at the first read (session 16's
        # descriptor) nor a __getattr__: either keeps CPython from specialising every read of
        # ``layer._ss`` (about 11 a step of an MLP; issue 15, session 24).
        self._ss: dict[str, float] = {}
        self._declared: dict[str, tuple[int, ...]] = {}  # _declare's parameter shapes (none: nothing checked)
        return self

    def __init__(self):
        self.params: dict[str, np.ndarray] = {}
        self.grads: dict[str, np.ndarray] = {}
        self.cache = None

    def __call__(self, X, training=False):
        return self.forward(X, training=training)

    def forward(self, X, training=False):  # pragma: no cover - abstract
        """Return Y for input X and store what backward needs in ``self.cache``."""
        raise NotImplementedError

    def backward(self, dY):  # pragma: no cover - abstract
        """Given dY = dL/dY, overwrite ``self.grads`` and return dL/dX."""
        raise NotImplementedError

    def _declare(self) -> None:
        """Declare the parameters' shapes: those of ``self.params`` as the constructor built them (from the
        layer's own arguments), which :meth:`_check_params` holds every later ``params`` to."""
        self._declared = {k: v.shape for k, v in self.params.items()}

    def _check_params(self, method: str) -> None:
        """Raise ValueError naming the layer, the parameter, its shape and the declared one (:meth:`_declare`) when
        a ``params`` entry was replaced by one of another shape, or by a non-array, after construction (numpy's
        broadcast or matmul message otherwise, or none: a bias of shape (1, out) broadcasts; verify40b F6). A few
        shape comparisons a call."""
        params = self.params
        for k, want in self._declared.items():
            v = params.get(k)
            if not isinstance(v, np.ndarray) or v.shape != want:
                raise self._parameter_error(method, k, v, want)

    def _parameter_error(self, method: str, k: str, v, want: tuple[int, ...]) -> ValueError:
        if v is None:
            got = f"is missing, expected an array of shape {want}"
        elif not isinstance(v, np.ndarray):
            got = f"is a {type(v).__name__}, expected an array of shape {want}"
        else:
            got = f"has shape {v.shape}, expected {want}"
            if v.shape == want[::-1] and len(want) == 2 and want[0] != want[1]:
                name = type(self).__name__
                got += f" ({'an' if name[0] in 'AEIOU' else 'a'} {name} keeps {k} as {want}; this is its transpose)"
        return ValueError(f"{self._where(method)}: params[{k!r}] {got}")

    def _repr_args(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _where(self, method: str) -> Where:
        """The prefix of this object's error messages, built only if one is written."""
        return Where(self, method)

    def _check_dY(self, dY, ss: bool = False):
        """The checked ``dY`` (and, with ``ss``, a bound on ``dY . dY``; see check_grad_output)."""
        cache = self.cache
        if cache is not None:  # check_grad_output, its common case inline
            value = float_ss(dY)
            if value is not None and dY.dtype is cache["dtype"] and dY.shape == cache["out_shape"]:
                return (dY, value) if ss else dY
        where = self._where("backward")
        check_forward_done(self.cache, where)
        return check_grad_output(
            dY, where, shape=self.cache["out_shape"], dtype=self.cache["dtype"], ss=ss
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

    ``Y`` is checked for NaN/inf (one reduction); ``dW`` and ``db`` are proven finite from
    the sums of squares of ``X`` and ``dY`` (Cauchy-Schwarz:
    ``|dW[i, j]| <= sqrt(dY . dY) sqrt(X . X)``), and looked at only when that bound is huge;
    ``dX`` the same way from ``dY . dY`` and ``W . W`` when ``W`` is the smaller array (fewer
    output features than the batch has rows), else by one reduction of ``dX``.

    Raises
    ------
    TypeError
        ``X``/``dY`` not float, or ``X`` dtype differs from the parameters'.
    ValueError
        ``X`` not (batch, in_features), ``dY`` not the shape of ``Y``, NaN/inf in them.
    NonFiniteError (a ValueError)
        ``Y``, ``dX``, ``dW`` or ``db`` has NaN/inf although ``X`` and ``dY`` are finite: the
        message names the non-finite parameter, or says that the values overflowed.
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

    #: the declared shapes of W and b (:meth:`Layer._declare`), for forward's inline check; a subclass whose
    #: ``__init__`` skips this one declares none, so nothing is checked
    _wb: tuple = ((), ())

    def __init__(self, in_features, out_features, rng=None, dtype=np.float64):
        super().__init__()
        name = type(self).__name__
        self.in_features = check_positive_int(in_features, "in_features", name)
        self.out_features = check_positive_int(out_features, "out_features", name)
        self.dtype = check_float_dtype(dtype, name)
        self.params = linear_params(self.in_features, self.out_features, rng, self.dtype)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._declare()
        self._wb = (self._declared["W"], self._declared["b"])

    def _repr_args(self) -> str:
        s = f"in_features={self.in_features}, out_features={self.out_features}"
        if self.dtype != np.float64:
            s += f", dtype={self.dtype}"
        return s

    def forward(self, X, training=False):
        """``Y = X @ W.T + b``; X (batch, in_features) -> Y (batch, out_features)."""
        # the structural checks of check_array inline (a float64/float32 array of the layer's
        # dtype and shape (batch, in_features)), then its finiteness check; any doubt, and
        # check_array runs in full and writes the message
        ssx = float_ss(X)
        if ssx is None or X.dtype is not self.dtype or X.ndim != 2 or X.shape[1] != self.in_features:
            X, ssx = check_array(
                X, self._where("forward"), shape=("batch", self.in_features), dtype=self.dtype, ss=True
            )
        params = self.params
        W, b = params.get("W"), params.get("b")
        if type(W) is not np.ndarray or type(b) is not np.ndarray or (W.shape, b.shape) != self._wb:
            self._check_params("forward")  # (the base class's check, its common case inline: issue 15)
        Y = X @ W.T
        if type(b) is np.ndarray and b.dtype is Y.dtype:
            Y += b  # in place: the sums of X @ W.T + b without a second (batch, out) array
        else:  # a bias of another dtype or kind: numpy's promotion, as X @ W.T + b
            Y = Y + b
        known = _validation.KNOWN_FINITE
        if known.defer:  # in a Sequential that looks at Y where it ends up (Sequential.forward)
            known.defer = False
            ssy = math.nan  # not looked at (a NaN bound proves nothing)
        else:  # output_ss's look, inline: Y . Y (by chunks above DOT_CHUNK elements)
            ssy = float(_validation._vdot(Y, Y)) if Y.size <= DOT_CHUNK else _validation.sum_of_squares(Y)
            if not ssy < math.inf:  # NaN/inf in Y (a parameter), or an overflow: output_ss writes the message
                ssy = output_ss(Y, self, "forward", "Y", "X")
        self.cache = {"X": X, "out_shape": Y.shape, "dtype": Y.dtype}
        self._ss = {"X": ssx, "Y": ssy}
        return Y

    @property
    def input_grad_optional(self) -> bool:
        """True: ``backward(dY, input_grad=False)`` skips dL/dX (see ``Sequential.backward``).

        False for a subclass that replaces ``backward`` (a student's ``backward(self, dY)``
        need not take the keyword).
        """
        return type(self).backward is Linear.backward

    def backward(self, dY, input_grad=True):
        """Fill ``grads["W"] = dY.T @ X``, ``grads["b"] = dY.sum(0)``; return ``dY @ W``.

        With ``input_grad=False`` (X is data, nothing upstream needs dL/dX) the
        product ``dY @ W``, as costly as the forward pass, is skipped and None is
        returned; ``grads`` are the same.
        """
        params = self.params
        W, b = params.get("W"), params.get("b")
        if type(W) is not np.ndarray or type(b) is not np.ndarray or (W.shape, b.shape) != self._wb:
            self._check_params("backward")  # (before grads are set: an optimizer would meet b's other shape)
        cache = self.cache
        ssd = float_ss(dY)  # _check_dY's common case inline (a finite dY of Y's dtype and shape)
        if ssd is None or cache is None or dY.dtype is not cache["dtype"] or dY.shape != cache["out_shape"]:
            dY, ssd = self._check_dY(dY, ss=True)
            cache = self.cache
        X = cache["X"]
        dW = dY.T @ X
        db = np.add.reduce(dY, axis=0)  # dY.sum(axis=0) without its Python wrapper (the same bits)
        limit = SS_LIMIT.get(dW.dtype, 0.0)
        if not (ssd * self._ss.get("X", math.inf) < limit and ssd * len(dY) < limit):
            gradients_finite(self, (("dW", dW), ("db", db)), "dY and X")  # huge values: look
        self.grads["W"] = dW
        self.grads["b"] = db
        if not input_grad:
            return None
        dX = dY @ W
        if W.size < dX.size:
            # |dX[i, j]| <= sqrt(dY[i] . dY[i]) sqrt(W[:, j] . W[:, j]) bounds every partial sum,
            # whatever the BLAS's order, and ||dY @ W||^2 <= (dY . dY)(W . W): finite dY and W with
            # a small enough product make a finite dX, proven by a look at W (the smaller array)
            # W . W (sum_of_squares, its one dot inline): NaN/inf when W has a NaN/inf (or its squares overflowed)
            bound = ssd * (float(_validation._vdot(W, W)) if W.size <= DOT_CHUNK else _validation.sum_of_squares(W))
            if bound < limit:
                self._ss["dX"] = bound
                return dX
        self._ss["dX"] = output_ss(dX, self, "backward", "dX", "dY")  # names a NaN W, or the overflow
        return dX


class _Elementwise(Layer):
    """Parameter-free layer applied element by element to X of any shape.

    Subclasses define ``_forward(X) -> (Y, saved)`` and
    ``_local_grad(saved) -> dY/dX`` (same shape as X); backward is
    ``dX = dY * dY/dX``.
    """

    def forward(self, X, training=False):
        """Apply the function element-wise; Y has the shape and dtype of X."""
        self._ss["X"] = ssx = float_ss(X)  # check_array's checks, their common case inline
        if ssx is None:
            X, self._ss["X"] = check_array(X, self._where("forward"), ss=True)
        Y, saved = self._forward(X)
        self.cache = {"saved": saved, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """Return ``dX = dY * f'(X)`` (element-wise chain rule); no parameters."""
        dY, self._ss["dY"] = self._check_dY(dY, ss=True)
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
    Derivative ``Y * (1 - Y)``, computed as ``sigmoid(X) * sigmoid(-X)`` (from the
    cached input): ``1 - Y`` cancels to 0 once ``Y`` rounds to 1 (at ``X = 40`` the
    derivative is 4.25e-18, not 0). Source: ``lessons/02-activations.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Non-float or non-finite input, ``dY`` of the wrong shape, backward
        before forward.
    """

    def _forward(self, X):
        Y = _sigmoid(X)
        return Y, (X, Y)

    def _local_grad(self, saved):
        X, Y = saved
        return Y * _sigmoid(-X)


class Tanh(_Elementwise):
    """Hyperbolic tangent ``Y = tanh(X)``, any shape.

    Derivative ``1 - Y**2 = 1 / cosh(X)**2``. ``1 - Y**2`` cancels to 0 once ``Y`` rounds to
    +-1 (at ``X = 20`` the derivative is 1.70e-17, not 0; in float32 near ``X = -9`` it is 2x
    too large), so it is used only where it is accurate (``1 - Y**2 >= 1/8``, within 8 ulp)
    and the saturated entries take ``1 / cosh(X)**2`` from the cached input (full relative
    precision everywhere). Source: ``lessons/02-activations.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Non-float or non-finite input, ``dY`` of the wrong shape, backward
        before forward.
    """

    def forward(self, X, training=False):
        """``Y = tanh(X)``, any shape; caches X and Y (in a network Y is the next layer's input
        and cached there too: the same array)."""
        self._ss["X"] = ssx = float_ss(X)  # check_array's checks, their common case inline
        if ssx is None:
            X, self._ss["X"] = check_array(X, self._where("forward"), ss=True)
        Y = np.tanh(X)
        self.cache = {"X": X, "Y": Y, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """Return ``dX = dY * tanh'(X)``, tanh' as :func:`_tanh_grad` (written into its own array)."""
        cache = self.cache
        ssd = float_ss(dY)  # _check_dY's common case inline (a finite dY of Y's dtype and shape)
        if ssd is None or cache is None or dY.dtype is not cache["dtype"] or dY.shape != cache["out_shape"]:
            dY, ssd = self._check_dY(dY, ss=True)
            cache = self.cache
        ss = self._ss
        ss["dY"] = ssd
        d = _tanh_grad(cache["X"], cache["Y"], ss.get("X") or math.inf)
        if d is None:  # X came unlooked from a Linear in a Sequential, and has a +-inf
            raise UnlookedInputError(self, "backward", cache["X"])
        return np.multiply(d, dY, out=d) if d.ndim else d * dY


class LeakyReLU(_Elementwise):
    """Leaky ReLU ``Y = X if X > 0 else negative_slope * X``, any shape.

    Derivative ``1`` where ``X > 0``, ``negative_slope`` elsewhere (also at
    ``X = 0``, as in PyTorch). Source: ``lessons/02-activations.md``.

    Parameters
    ----------
    negative_slope : float >= 0

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Bad ``negative_slope``; non-float or non-finite input, ``dY`` of the
        wrong shape, backward before forward.
    """

    def __init__(self, negative_slope=0.01):
        super().__init__()
        self.negative_slope = check_scalar(negative_slope, "negative_slope", "LeakyReLU", low=0.0)

    def _repr_args(self) -> str:
        return f"negative_slope={self.negative_slope}"

    def _forward(self, X):
        mask = X > 0
        return np.where(mask, X, self.negative_slope * X), mask

    def _local_grad(self, mask):
        return np.where(mask, 1.0, self.negative_slope).astype(self.cache["dtype"], copy=False)


class ELU(_Elementwise):
    """Exponential linear unit, any shape.

    ``Y = X`` for ``X > 0``, ``alpha * (exp(X) - 1)`` otherwise (``expm1``
    of ``min(X, 0)``, so no overflow for large positive X). Derivative ``1``
    for ``X > 0``, ``alpha * exp(X)`` otherwise (at ``X = 0``: ``alpha``, as in
    PyTorch), from the cached input: ``Y + alpha`` cancels to 0 for ``X << 0`` (at
    ``X = -40`` the derivative is 4.25e-18). Source: ``lessons/02-activations.md``.

    Parameters
    ----------
    alpha : float >= 0

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Bad ``alpha``; non-float or non-finite input, ``dY`` of the wrong
        shape, backward before forward.
    """

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = check_scalar(alpha, "alpha", "ELU", low=0.0)

    def _repr_args(self) -> str:
        return f"alpha={self.alpha}"

    def _forward(self, X):
        neg = np.minimum(X, 0)
        Y = np.where(X > 0, X, self.alpha * np.expm1(neg))
        return Y, (X > 0, neg)

    def _local_grad(self, saved):
        mask, neg = saved
        return np.where(mask, 1.0, self.alpha * np.exp(neg)).astype(self.cache["dtype"], copy=False)


class GELU(_Elementwise):
    """Gaussian error linear unit ``Y = X * Phi(X)``, any shape.

    ``approximate="none"`` (exact, erf form)::

        Phi(x) = (1 + erf(x / sqrt(2))) / 2 = erfc(-x / sqrt(2)) / 2
        phi(x) = exp(-x**2 / 2) / sqrt(2 pi)
        Y = x Phi(x),                          dY/dX = Phi(x) + x phi(x)

    ``approximate="tanh"`` (as in PyTorch)::

        u = sqrt(2/pi) (x + 0.044715 x**3),    t = tanh(u)
        Y = x (1 + t) / 2
        dY/dX = (1 + t) / 2 + x (1 - t**2) sqrt(2/pi) (1 + 3 * 0.044715 x**2) / 2

    Terms that are exactly 0 in floating point for large ``|x|`` (``phi`` for
    ``|x| >= 40``, ``1 - t**2`` for ``|x| >= 20``) are computed from ``x``
    clipped to that range, so ``x**2``/``x**3`` cannot overflow; the results
    are unchanged. ``Phi`` is computed with ``erfc``, which keeps its
    relative accuracy in the left tail where ``1 + erf`` cancels to 0
    (``scipy.special.erfc``; ``math.erfc`` if scipy is missing). Source: ``lessons/02-activations.md``.

    Parameters
    ----------
    approximate : {"none", "tanh"}

    Raises
    ------
    ValueError, TypeError, RuntimeError
        Bad ``approximate``; non-float or non-finite input, ``dY`` of the
        wrong shape, backward before forward.
    """

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = check_option(approximate, "approximate", "GELU", ("none", "tanh"))

    def _repr_args(self) -> str:
        return f"approximate={self.approximate!r}"

    def _forward(self, X):
        if self.approximate == "none":
            Phi = 0.5 * _erfc(-X / _SQRT_2)
            return X * Phi, (X, Phi)
        xc = np.clip(X, -20.0, 20.0)
        t = np.tanh(_SQRT_2_OVER_PI * (xc + 0.044715 * xc * xc * xc))
        return 0.5 * X * (1.0 + t), (xc, t)

    def _local_grad(self, saved):
        if self.approximate == "none":
            X, Phi = saved
            xc = np.clip(X, -40.0, 40.0)
            return Phi + xc * _INV_SQRT_2PI * np.exp(-0.5 * xc * xc)
        xc, t = saved
        du = _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * xc * xc)
        return 0.5 * (1.0 + t) + 0.5 * xc * (1.0 - t * t) * du


class Softplus(_Elementwise):
    """Softplus ``Y = log(1 + exp(X))``, any shape, computed stably.

    ``Y = max(X, 0) + log1p(exp(-|X|))`` never overflows; derivative
    ``sigmoid(X)`` (stable form). Source: ``lessons/02-activations.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Non-float or non-finite input, ``dY`` of the wrong shape, backward
        before forward.
    """

    def _forward(self, X):
        return np.maximum(X, 0) + np.log1p(np.exp(-np.abs(X))), X

    def _local_grad(self, X):
        return _sigmoid(X)


class Softmax(Layer):
    """Softmax along ``axis``: ``Y = exp(X - max) / sum(exp(X - max))``.

    Shifting by the maximum along ``axis`` keeps ``exp`` arguments <= 0.
    Backward (Jacobian-vector product, from the cached ``Y``)::

        dX = Y * (dY - sum(dY * Y, axis, keepdims=True))

    computed with ``dY`` shifted by its value at each row's largest ``Y`` (the
    same in exact arithmetic, as ``sum(Y) = 1``; no cancellation on a saturated
    row): :func:`manualprop._extremes.softmax_vjp`.

    Source: ``lessons/03-softmax-cross-entropy.md``.

    Parameters
    ----------
    axis : int
        Axis to normalise over; X needs at least 1 dimension.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Non-int ``axis``; ``axis`` out of range for X, non-float or
        non-finite input, ``dY`` of the wrong shape, backward before forward.
    """

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = check_int(axis, "axis", type(self).__name__)

    def _repr_args(self) -> str:
        return f"axis={self.axis}"

    def _shifted(self, X):
        where = self._where("forward")
        X = check_array(X, where, min_ndim=1)
        axis = check_axis(self.axis, X.ndim, where)
        return X - X.max(axis=axis, keepdims=True), axis

    def forward(self, X, training=False):
        """Softmax of X (any shape with >= 1 dims) along ``axis``; same shape."""
        shifted, axis = self._shifted(X)
        e = np.exp(shifted)
        Y = e / e.sum(axis=axis, keepdims=True)
        self.cache = {"Y": Y, "axis": axis, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """``dX = Y * (dY - sum(dY * Y, axis))``."""
        dY = self._check_dY(dY)
        return softmax_vjp(self.cache["Y"], dY, self.cache["axis"])


class LogSoftmax(Softmax):
    """Log-softmax along ``axis``: ``Y = X - max - log(sum(exp(X - max)))``.

    Backward, with ``p = exp(Y)`` the softmax::

        dX = dY - p * sum(dY, axis, keepdims=True)

    Source: ``lessons/03-softmax-cross-entropy.md``.

    Parameters
    ----------
    axis : int

    Raises
    ------
    TypeError, ValueError, RuntimeError
        As :class:`Softmax`.
    """

    def forward(self, X, training=False):
        """Log-softmax of X (any shape with >= 1 dims) along ``axis``; same shape."""
        shifted, axis = self._shifted(X)
        e = np.exp(shifted)
        s = e.sum(axis=axis, keepdims=True)
        Y = shifted - np.log(s)
        self.cache = {"p": e / s, "axis": axis, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """``dX = dY - softmax(X) * sum(dY, axis)``."""
        dY = self._check_dY(dY)
        p, axis = self.cache["p"], self.cache["axis"]
        return dY - p * dY.sum(axis=axis, keepdims=True)


class Flatten(Layer):
    """Flatten all but the first (batch) axis: (N, d1, d2, ...) -> (N, d1*d2*...).

    Like ``torch.nn.Flatten()``; a 1-D X of shape (N,) becomes (N, 1) as in
    Keras. Backward reshapes ``dY`` back to the input shape (a reshape has
    the identity as its Jacobian up to reordering). Source:
    ``lessons/07-sequential.md``.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        Non-float, 0-d or non-finite input, ``dY`` of the wrong shape,
        backward before forward.
    """

    def forward(self, X, training=False):
        """Return X reshaped to (N, prod(X.shape[1:]))."""
        X, self._ss["X"] = check_array(X, self._where("forward"), min_ndim=1, ss=True)
        Y = X.reshape(X.shape[0], -1) if X.shape[0] else X.reshape(0, math.prod(X.shape[1:]))
        self.cache = {"in_shape": X.shape, "out_shape": Y.shape, "dtype": Y.dtype}
        return Y

    def backward(self, dY):
        """Return dY reshaped to the input shape."""
        dY, self._ss["dY"] = self._check_dY(dY, ss=True)
        return dY.reshape(self.cache["in_shape"])
