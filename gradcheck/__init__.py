"""gradcheck: compare manual, tape and numerical gradients.

:func:`check_layer`/:func:`check_loss` check one layer or loss three ways (a :class:`CheckResult`);
:func:`diagnose_layer`, :func:`check_vjp` name gradient bugs; :func:`function_pair` and
:func:`loss_function` present CS231n functions as a layer and a loss. Submodules: ``numerical``,
``errors``, ``plots``, ``train``, ``zoo``, ``cli``.
"""

from ._startup import running_as_command as _command
from ._startup import starting as _starting

with _starting():  # the gradcheck command: a Ctrl-C or SIGTERM while it imports exits 130/143 with a message
    from .check import (
        CheckResult,
        Comparison,
        TensorRecord,
        check_layer,
        check_loss,
        relative_error,
    )
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
    if _command():  # the command's own module next, still guarded (its main guards the parser's imports)
        from . import cli  # noqa: F401


def function_pair(forward, backward, **params):
    """A CS231n function pair as a layer that :func:`check_layer` checks.

    Parameters
    ----------
    forward, backward : callable
        ``forward(x, w, ..., **params) -> (out, cache)``, its array arguments the layer's inputs in
        order; ``backward(dout, cache)`` -> one gradient per array argument (``(dx, dw, db)``).
    **params
        The non-array arguments (``conv_param={"stride": 1, "pad": 1}``), deep-copied per call.

    Returns
    -------
    object
        A manualprop-protocol layer named after the pair (``affine``), gradients ``dx``, ``dw``, ...

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


__all__ = ["DEFAULT_EPS", "CheckResult", "Comparison", "GradcheckError", "GradientShapeError",
           "NonFiniteError", "ProtocolError", "StudentCodeError", "TensorRecord", "TwinError",
           "UsageError", "check_layer", "check_loss", "check_vjp", "diagnose_layer", "Diagnosis",
           "function_pair", "loss_function", "Finding", "layer_numerical_gradients",
           "numerical_gradient", "relative_error"]
