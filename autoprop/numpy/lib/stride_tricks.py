"""numpy.lib.stride_tricks over autoprop Tensors: ``import autoprop.numpy as np`` makes a student's
``np.lib.stride_tricks.as_strided(x, shape, strides)`` recorded when ``x`` is a Tensor (numpy's own
``as_strided`` reads an array's memory and never dispatches, so plain numpy's name cannot record it;
autoprop does not replace numpy's function). ``sliding_window_view`` and every other name are numpy's
own objects (numpy's ``sliding_window_view`` dispatches: recorded either way).
"""

import numpy as _np

from ...core.prims.extra import numpy_as_strided as as_strided
from .._names import numpy_attr as _numpy_attr
from .._names import numpy_dir as _numpy_dir

__all__ = ["as_strided"]


def __getattr__(name):
    """numpy.lib.stride_tricks' own object (``sliding_window_view``, ``broadcast_to``)."""
    return _numpy_attr(_np.lib.stride_tricks, __name__, name)


def __dir__():
    return _numpy_dir(_np.lib.stride_tricks, globals())
