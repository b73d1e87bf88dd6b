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
from .optim import SGD, Adam, Optimizer, RMSProp

__all__ = [
    "Adam",
    "BinaryCrossEntropyWithLogits",
    "ELU",
    "Flatten",
    "GELU",
    "Huber",
    "Layer",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "Loss",
    "MeanSquaredError",
    "Optimizer",
    "RMSProp",
    "ReLU",
    "SGD",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "SoftmaxCrossEntropy",
    "Softplus",
    "Tanh",
    "as_rng",
    "init",
    "linear_params",
    "optim",
]
