"""numpy.lib's names over autoprop Tensors: ``anp.lib.stride_tricks.as_strided`` is recorded on a Tensor
(:mod:`autoprop.numpy.lib.stride_tricks`); every other name is numpy.lib's own object
(:mod:`autoprop.numpy._names`). Source: ``lessons/10-gradient-tape.md``.
"""

import numpy as _np

from .._names import numpy_attr as _numpy_attr
from .._names import numpy_dir as _numpy_dir
from . import stride_tricks

__all__ = ["stride_tricks"]


def __getattr__(name):
    """numpy.lib's own object (``anp.lib.scimath``)."""
    return _numpy_attr(_np.lib, __name__, name)


def __dir__():
    return _numpy_dir(_np.lib, globals())
