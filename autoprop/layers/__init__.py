"""manualprop's layers written forward-only with tape operations (Keras style).

Each layer has the same constructor arguments as its manualprop twin and, for the
same ``rng``, the same initial parameters (both call :mod:`manualprop.init`).
``layer(x, training=False)`` returns a Tensor; ``layer.variables`` maps the same keys
as the manual layer's ``params`` to :class:`~autoprop.Variable` objects. There is no
backward here: the tape derives it (compare ``manualprop/``, where it is written by
hand, and ``lessons/`` for the derivations).

Each twin names its manualprop class in ``manual_class``; the constructor (argument
checks, initial parameters) is that class's, so only ``call`` is written here.
One module per family: ``dense`` (Linear, activations), and the families added by
the layer zoo. Each module lists its public names in ``__all__``.
"""

from .attention import MultiHeadAttention, ScaledDotProductAttention
from .base import Layer, Model, Residual, Sequential
from .conv import AvgPool2D, Conv2D, ConvTranspose2D, MaxPool2D
from .dense import (
    ELU,
    GELU,
    Flatten,
    LeakyReLU,
    Linear,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Softplus,
    Tanh,
)
from .dropout import Dropout
from .embedding import Embedding
from .norm import BatchNorm1D, BatchNorm2D, BatchNormalization, LayerNorm
from .recurrent import GRU, LSTM, RNN
from .transformer import TiedEmbedding, TransformerBlock

__all__ = [
    "ELU", "Flatten", "GELU", "Layer", "LeakyReLU", "Linear", "LogSoftmax", "Model", "ReLU",
    "Residual", "Sequential", "Sigmoid", "Softmax", "Softplus", "Tanh",
]
__all__ += ["Embedding", "GRU", "LSTM", "MultiHeadAttention", "RNN", "ScaledDotProductAttention"]
__all__ += ["TiedEmbedding", "TransformerBlock"]
__all__ += ["AvgPool2D", "BatchNorm1D", "BatchNorm2D", "BatchNormalization", "Conv2D", "ConvTranspose2D", "Dropout", "LayerNorm", "MaxPool2D"]
