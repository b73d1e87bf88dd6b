"""manualprop: layers with hand-derived gradients.

See ARCHITECTURE.md for the protocol. Public names are re-exported here;
``manualprop.init`` (shared initialisers) and ``manualprop.optim`` (shared
optimizers) are also used by autoprop.
"""

from . import init, optim
from .containers import Sequential
from .init import as_rng, linear_params
from .layers import (
    ELU,
    GELU,
    Flatten,
    Layer,
    LeakyReLU,
    Linear,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Softplus,
    Tanh,
)
from .losses import (
    BinaryCrossEntropyWithLogits,
    Huber,
    Loss,
    MeanSquaredError,
    SoftmaxCrossEntropy,
)
from .optim import SGD, Optimizer

__all__ = [
    "BinaryCrossEntropyWithLogits",
    "Huber",
    "ELU",
    "GELU",
    "SGD",
    "Flatten",
    "LeakyReLU",
    "LogSoftmax",
    "Softmax",
    "Softplus",
    "Layer",
    "Linear",
    "Loss",
    "MeanSquaredError",
    "Optimizer",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "SoftmaxCrossEntropy",
    "Tanh",
    "as_rng",
    "init",
    "linear_params",
    "optim",
]
