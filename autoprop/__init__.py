"""autoprop: a reverse-mode gradient tape with TensorFlow's ``tf.GradientTape`` API.

>>> import autoprop as ap
>>> x = ap.Variable(3.0)
>>> with ap.GradientTape() as tape:
...     y = x**3 + x**2 + x + 5
>>> print(tape.gradient(y, x).numpy())
34.0

The core (``autoprop.core``) holds Tensor, Variable, GradientTape and the primitive
registry; ``autoprop.numpy`` offers the operations under numpy's names;
``autoprop.layers``, ``autoprop.losses`` and ``autoprop.optimizers`` build models.
"""

from .core import (
    PRIMITIVES,
    ForwardAccumulator,
    GradientTape,
    TapeArgumentError,
    TapeEscapeError,
    TapeEscapeWarning,
    TapeStateError,
    Tensor,
    UnconnectedGradients,
    Variable,
    custom_gradient,
    hessian,
    hessian_vector_product,
    numpy_function,
    stop_gradient,
    strict_mode,
)
from .core.diagnose import explain_op as explain
from .core.registry import (
    absolute,
    cos,
    exp,
    expm1,
    log,
    log1p,
    log_softmax,
    logaddexp,
    logsumexp,
    matmul,
    maximum,
    minimum,
    norm,
    relu,
    sigmoid,
    sin,
    softmax,
    sqrt,
    square,
    tanh,
    tensor_scatter_nd_add,
    tensor_scatter_nd_update,
    where,
)
from .core.registry import max as reduce_max
from .core.registry import mean as reduce_mean
from .core.registry import min as reduce_min
from .core.registry import sum as reduce_sum
from .core.tensor import Tensor as _T


def constant(value, dtype=None):
    """Make a Tensor (a copy of ``value``; Python floats become float64), as ``tf.constant``.

    Parameters
    ----------
    value : array_like or Tensor
    dtype : numpy dtype, optional

    Returns
    -------
    Tensor
        A Tensor ``value`` of that dtype is returned as it is (``tf.constant`` "has no
        effect if an eager Tensor is passed as the value, it even transmits gradients").
        Anything else is a new constant. A Variable's value, or a Tensor cast to another
        dtype, leaves the tape on purpose, as ``tf.constant(v)``: the explicit exit that
        ``t.numpy()`` is (quiet, never refused; :meth:`GradientTape.explain` reports it), so
        ``ap.constant(v) * 2 + v * 3`` has the gradient 3.0 with respect to ``v``, as in
        TensorFlow. A list of Tensors (as ``tf.constant``) also leaves the tape, but with a
        ``TapeEscapeWarning`` while a tape records or a ForwardAccumulator is open, as it is
        more often a slip for ``ap.convert_to_tensor`` or ``ap.numpy.stack``, which pack a list
        of Tensors on the tape.
    """
    if isinstance(value, _T):
        if type(value) is _T and (dtype is None or value.dtype == dtype):
            return value
        value = value.numpy()  # (the explicit exit, as tf.constant(v): no warning, no refusal)
    return _T(value, dtype)


def convert_to_tensor(value, dtype=None):
    """A Tensor for ``value``, as ``tf.convert_to_tensor``.

    Parameters
    ----------
    value : Tensor, array_like, or nested lists/tuples mixing Tensors and numbers
    dtype : numpy dtype, optional

    Returns
    -------
    Tensor
        ``value`` itself if it is a Tensor of that dtype (a recorded cast for another
        dtype); a list of Tensors is packed by a recorded stack (``ap.numpy.array``), so
        gradients reach its elements; anything else a new constant.
    """
    if isinstance(value, _T):
        return value if dtype is None or value.dtype == dtype else value.astype(dtype)
    if isinstance(value, (list, tuple)):
        packed = numpy.array(value, dtype=dtype)  # (Tensors inside: a recorded stack; plain data: an ndarray)
        return packed if isinstance(packed, _T) else _T(packed)
    return _T(value, dtype)


from . import (  # noqa: E402,F401
    layers,
    losses,
    numpy,  # noqa: E402
    optimizers,
)
from .layers import Model, Sequential  # noqa: E402
from .tracing import Function, TraceError, function  # noqa: E402  (tf.function's counterpart)

sum = reduce_sum  # noqa: A001
mean = reduce_mean
max = reduce_max  # noqa: A001
min = reduce_min  # noqa: A001
reshape = numpy.reshape
transpose = numpy.transpose

abs = absolute  # noqa: A001


def __getattr__(name):  # autoprop.viz imports matplotlib: load it on first use
    if name == "viz":
        import importlib

        return importlib.import_module(".viz", __name__)
    raise AttributeError(f"module 'autoprop' has no attribute {name!r}")


__all__ = [
    "GradientTape", "Model", "PRIMITIVES", "Sequential", "Tensor", "Variable", "absolute", "constant",
    "convert_to_tensor", "cos", "exp", "expm1", "log", "log1p", "log_softmax", "logsumexp",
    "matmul", "max", "maximum", "mean", "min", "minimum", "numpy", "reduce_max",
    "reduce_mean", "reduce_min", "reduce_sum", "relu", "reshape", "sigmoid", "sin",
    "softmax", "sqrt", "square", "stop_gradient", "sum", "tanh", "transpose", "where",
]
__all__ += [
    "ForwardAccumulator", "UnconnectedGradients", "abs", "custom_gradient", "explain",
    "hessian", "hessian_vector_product", "logaddexp", "norm", "numpy_function",
    "TapeEscapeError", "TapeEscapeWarning", "strict_mode", "TapeArgumentError", "TapeStateError",
    "tensor_scatter_nd_add", "tensor_scatter_nd_update", "function", "Function", "TraceError",
]
