"""numpy.linalg's names over autoprop Tensors: ``from autoprop.numpy.linalg import solve``.

The functions below are ``autoprop.numpy``'s kind (numpy's own dispatch of the numpy.linalg
function, a Tensor returned; derivatives: ``autoprop.explain("solve")``); every other name is
numpy.linalg's own (``LinAlgError``, ``eig``), through which a Tensor is recorded or refused
as through ``np.linalg`` itself (:mod:`autoprop.numpy._names`). Source:
``lessons/10-gradient-tape.md``.
"""

import numpy as _np

from ..core import registry as _R
from ._names import numpy_attr as _numpy_attr
from ._names import numpy_dir as _numpy_dir

for _k in ("inv", "det", "slogdet", "solve", "cholesky", "eigh", "eigvalsh", "norm", "matrix_power",
           "multi_dot", "svd", "qr", "pinv", "lstsq", "tensorsolve", "tensorinv", "cond",
           "svdvals", "vector_norm", "matrix_norm"):  # (the last three: numpy >= 2)
    if hasattr(_np.linalg, _k):
        globals()[_k] = _R.numpy_name(getattr(_np.linalg, _k))
del _k

__all__ = [n for n in dir() if not n.startswith("_")]


def __getattr__(name):
    """numpy.linalg's own object for a name not defined here (``LinAlgError``)."""
    return _numpy_attr(_np.linalg, __name__, name)


def __dir__():
    return _numpy_dir(_np.linalg, globals())
