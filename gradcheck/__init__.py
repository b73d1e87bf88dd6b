"""gradcheck: compare manual, tape and numerical gradients.

:func:`check_layer`/:func:`check_loss` check one layer or loss three ways (a :class:`CheckResult`);
:func:`diagnose_layer`, :func:`check_vjp` name gradient bugs; :func:`function_pair` and
:func:`loss_function` present CS231n functions as a layer and a loss; :func:`model` a model returning its weights'
gradients (DLfS vol. 1's, CS231n's) as a layer. Submodules: ``numerical``,
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


def model(net, t):
    """A model that returns its weights' gradients, as a layer that :func:`check_layer` checks at data ``X``.

    Deep Learning from Scratch vol. 1's ``loss(x, t)``/``gradient(x, t)`` (``TwoLayerNet``, ``MultiLayerNet``,
    ``SimpleConvNet``: ``gradient`` returns a dict keyed as ``params``) or CS231n assignment 2's ``loss(X, y=None)
    -> (loss, grads)`` (``TwoLayerNet``, ``FullyConnectedNet``, ``ThreeLayerConvNet``): forward is the loss at the
    labels ``t`` (training mode, as the gradients are), backward puts the gradients the model returns into
    ``grads``; no dX. Each array of ``params`` is compared with central differences of the loss, as the books'
    own checks do (DLfS's ``gradient_check.py``; CS231n's ``eval_numerical_gradient(lambda W: model.loss(X, y)[0],
    model.params[name])``), the data held fixed.

    Parameters
    ----------
    net : object
        The model as built; its class is switched to a same-named subclass in place (its arrays unchanged).
    t : array_like
        The labels, integers of shape (N,) for a batch of N (or what its loss takes).

    Returns
    -------
    object
        ``net``, presented as ``forward(X) -> L`` of shape (1,), ``backward(dY)``.

    Raises
    ------
    UsageError
        ``net`` has neither protocol (or no ``params`` dict of float arrays).

    Examples
    --------
    >>> import numpy as np
    >>> class Net:
    ...     def __init__(self):
    ...         self.params = {"W": np.arange(6.0).reshape(3, 2) / 10}
    ...     def loss(self, x, t):
    ...         return 0.5 * np.sum((x @ self.params["W"] - t) ** 2)
    ...     def gradient(self, x, t):
    ...         return {"W": x.T @ (x @ self.params["W"] - t)}
    >>> check_layer(model(Net(), np.ones((4, 2))), (4, 3), twin=None).passed
    True
    """
    import numpy as np

    from ._adapters import AdapterError, model_as_layer, with_targets
    if not model_as_layer(net):
        raise UsageError(f"model() takes a model with loss(x, t) and gradient(x, t) (Deep Learning from Scratch "
                         f"vol. 1) or loss(X, y=None) -> (loss, grads) (CS231n), and a params dict of float arrays; "
                         f"{type(net).__name__} is neither.")
    try:
        with_targets(net, np.asarray(t))
    except AdapterError as exc:
        raise UsageError(str(exc)) from None
    return net


__all__ = ["DEFAULT_EPS", "CheckResult", "Comparison", "GradcheckError", "GradientShapeError",
           "NonFiniteError", "ProtocolError", "StudentCodeError", "TensorRecord", "TwinError",
           "UsageError", "check_layer", "check_loss", "check_vjp", "diagnose_layer", "Diagnosis",
           "function_pair", "loss_function", "model", "Finding", "layer_numerical_gradients",
           "numerical_gradient", "relative_error"]
