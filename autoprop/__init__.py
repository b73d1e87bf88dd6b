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

from .core import PRIMITIVES, GradientTape, Tensor, Variable
from .core.registry import (
    absolute,
    cos,
    exp,
    expm1,
    log,
    log1p,
    log_softmax,
    logsumexp,
    matmul,
    maximum,
    minimum,
    relu,
    sigmoid,
    sin,
    softmax,
    sqrt,
    square,
    tanh,
    where,
)
from .core.registry import max as reduce_max
from .core.registry import mean as reduce_mean
from .core.registry import min as reduce_min
from .core.registry import sum as reduce_sum
from .core.tensor import Tensor as _T


def constant(value, dtype=None):
    """Make a Tensor (a copy of ``value``; Python floats become float64).

    Parameters
    ----------
    value : array_like
    dtype : numpy dtype, optional

    Returns
    -------
    Tensor
    """
    return _T(value, dtype)


def convert_to_tensor(value, dtype=None):
    """Return ``value`` if it is already a Tensor, else ``constant(value, dtype)``."""
    if isinstance(value, _T) and (dtype is None or value.dtype == dtype):
        return value
    return _T(value, dtype)


def stop_gradient(x):
    """Return ``x``'s value as a new Tensor that no tape connects to ``x``.

    The result is a constant for every tape, so gradients do not flow through it
    (``tf.stop_gradient``).
    """
    x = convert_to_tensor(x)
    return _T._wrap(x._value)


from . import (  # noqa: E402,F401
    layers,
    losses,
    numpy,  # noqa: E402
    optimizers,
)
from .layers import Model, Sequential  # noqa: E402

sum = reduce_sum  # noqa: A001
mean = reduce_mean
max = reduce_max  # noqa: A001
min = reduce_min  # noqa: A001
reshape = numpy.reshape
transpose = numpy.transpose

__all__ = [
    "GradientTape", "Model", "PRIMITIVES", "Sequential", "Tensor", "Variable", "absolute", "constant",
    "convert_to_tensor", "cos", "exp", "expm1", "log", "log1p", "log_softmax", "logsumexp",
    "matmul", "max", "maximum", "mean", "min", "minimum", "numpy", "reduce_max",
    "reduce_mean", "reduce_min", "reduce_sum", "relu", "reshape", "sigmoid", "sin",
    "softmax", "sqrt", "square", "stop_gradient", "sum", "tanh", "transpose", "where",
]
