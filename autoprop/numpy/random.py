"""numpy.random's names, as ``autograd.numpy.random``: ``import autoprop.numpy.random``, ``anp.random.<name>``.

Every name is numpy.random's own object (:mod:`autoprop.numpy._names`): a Tensor given to one is
recorded or refused exactly as through ``np.random`` itself. Source: ``lessons/10-gradient-tape.md``.
"""

import numpy as _np

from ._names import numpy_attr as _numpy_attr
from ._names import numpy_dir as _numpy_dir

__all__ = []


def __getattr__(name):
    """numpy.random's own object (``anp.random.randn``)."""
    return _numpy_attr(_np.random, __name__, name)


def __dir__():
    return _numpy_dir(_np.random, globals())
