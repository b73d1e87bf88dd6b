"""gradcheck: compare manual, tape and numerical gradients.

Public API
----------
check_layer, check_loss
    Three-way check of one layer / loss; return a :class:`CheckResult`.
CheckResult, TensorRecord, Comparison
    Results: ``.passed``, ``.rows``, ``.table()``, ``.to_dict()``.
diagnose_layer, check_vjp, Diagnosis, Finding
    Find and name gradient bugs (:mod:`gradcheck.diagnose`): structural probes,
    bug signatures, the first failing layer of a model; one primitive's VJP alone.
relative_error
    ``|a - b| / max(|a| + |b|, tiny)``, element-wise.
function_pair, loss_function
    A CS231n pair ``NAME_forward(x, w, ...) -> (out, cache)``, ``NAME_backward(dout, cache)``
    as a layer (every array argument an input), and a CS231n loss ``NAME(x, y) -> (loss, dx)``
    as a loss, for :func:`check_layer` / :func:`check_loss`.
numerical_gradient, layer_numerical_gradients, DEFAULT_EPS
    Central differences (:mod:`gradcheck.numerical`).
GradcheckError, UsageError, TwinError, StudentCodeError, ProtocolError,
GradientShapeError, NonFiniteError
    Exceptions (:mod:`gradcheck.errors`), each with an ``exit_code``.

Submodules: ``plots`` (matplotlib figures), ``train`` (manual vs tape training on
digits), ``zoo`` (every built-in layer), ``cli``.
"""

from .check import CheckResult, Comparison, TensorRecord, check_layer, check_loss, relative_error
from .diagnose import Diagnosis, Finding, check_vjp, diagnose_layer
from .errors import (
    GradcheckError,
    GradientShapeError,
    NonFiniteError,
    ProtocolError,
    StudentCodeError,
    TwinError,
    UsageError,
)
from .numerical import DEFAULT_EPS, layer_numerical_gradients, numerical_gradient


def function_pair(forward, backward, **params):
    """A CS231n function pair as a layer that :func:`check_layer` checks.

    Parameters
    ----------
    forward : callable
        ``forward(x, w, ..., **params) -> (out, cache)``; its array arguments are the layer's
        inputs, in order (pass them to :func:`check_layer` as a list).
    backward : callable
        ``backward(dout, cache)`` -> one gradient per array argument, in order (a tuple for
        several: ``(dx, dw, db)``).
    **params
        The non-array arguments (``conv_param={"stride": 1, "pad": 1}``, ``bn_param=...``),
        deep-copied for every call.

    Returns
    -------
    object
        The manualprop layer protocol (no parameters of its own); its class is named after the
        pair (``affine``) and its gradients after ``forward``'s arguments (``dx``, ``dw``, ``db``).

    Examples
    --------
    >>> import numpy as np
    >>> def scale_forward(x, a):
    ...     return x * a, (x, a)
    >>> def scale_backward(dout, cache):
    ...     x, a = cache
    ...     return dout * a, dout * x
    >>> layer = function_pair(scale_forward, scale_backward)
    >>> check_layer(layer, [(3, 2), (3, 2)], twin=None).passed
    True
    """
    from ._adapters import pair

    return pair(forward, backward, params)


def loss_function(fn, **params):
    """A CS231n loss ``fn(x, y, **params) -> (loss, dx)`` as a loss that :func:`check_loss` checks:
    ``forward(y_true, y_pred)`` returns the loss of ``fn(y_pred, y_true)``, ``backward()`` its ``dx``.

    A result that is not a ``(loss, dx)`` pair raises ``TypeError`` naming ``fn``.
    """
    from ._adapters import loss_function as make

    return make(fn, params)


__all__ = [
    "DEFAULT_EPS",
    "CheckResult",
    "Comparison",
    "GradcheckError",
    "GradientShapeError",
    "NonFiniteError",
    "ProtocolError",
    "StudentCodeError",
    "TensorRecord",
    "TwinError",
    "UsageError",
    "check_layer",
    "check_loss",
    "check_vjp",
    "diagnose_layer",
    "Diagnosis",
    "function_pair",
    "loss_function",
    "Finding",
    "layer_numerical_gradients",
    "numerical_gradient",
    "relative_error",
]
