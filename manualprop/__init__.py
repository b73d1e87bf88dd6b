"""manualprop: layers with hand-derived gradients.

See ARCHITECTURE.md for the protocol. Public names are re-exported here;
``manualprop.init`` (shared initialisers) and ``manualprop.optim`` (shared
optimizers) are also used by autoprop.
"""

from . import init, optim
from .attention import MultiHeadAttention, ScaledDotProductAttention
from .containers import Residual, Sequential
from .conv import AvgPool2D, Conv2D, ConvTranspose2D, MaxPool2D
from .dropout import Dropout
from .embedding import Embedding
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
    MulticlassHinge,
    SoftmaxCrossEntropy,
)
from .norm import BatchNorm1D, BatchNorm2D, LayerNorm
from .optim import SGD, Adam, Optimizer, RMSProp, RMSprop
from .recurrent import GRU, LSTM, RNN
from .transformer import TiedEmbedding, TransformerBlock

# Order matters: gradcheck's zoo lists layers and losses in this order.
__all__ = [
    "Linear",
    "ReLU",
    "LeakyReLU",
    "ELU",
    "GELU",
    "Sigmoid",
    "Tanh",
    "Softplus",
    "Softmax",
    "LogSoftmax",
    "Flatten",
    "Sequential",
    "Residual",
    "Conv2D",
    "ConvTranspose2D",
    "MaxPool2D",
    "AvgPool2D",
    "BatchNorm1D",
    "BatchNorm2D",
    "LayerNorm",
    "Dropout",
    "Embedding",
    "TiedEmbedding",
    "RNN",
    "LSTM",
    "GRU",
    "ScaledDotProductAttention",
    "MultiHeadAttention",
    "TransformerBlock",
    "SoftmaxCrossEntropy",
    "BinaryCrossEntropyWithLogits",
    "MeanSquaredError",
    "Huber",
    "MulticlassHinge",
    "SGD",
    "Adam",
    "RMSProp",
    "RMSprop",
    "Optimizer",
    "Layer",
    "Loss",
    "as_rng",
    "linear_params",
    "init",
    "optim",
]
