"""numpy.fft's names, as ``autograd.numpy.fft``: ``import autoprop.numpy.fft``, ``anp.fft.<name>``.

Every name is numpy.fft's own object (:mod:`autoprop.numpy._names`): a Tensor given to one is
recorded or refused exactly as through ``np.fft`` itself. Source: ``lessons/10-gradient-tape.md``.
"""

import numpy as _np

from ._names import numpy_attr as _numpy_attr
from ._names import numpy_dir as _numpy_dir

__all__ = []


def __getattr__(name):
    """numpy.fft's own object (``anp.fft.rfft``)."""
    return _numpy_attr(_np.fft, __name__, name)


def __dir__():
    return _numpy_dir(_np.fft, globals())
