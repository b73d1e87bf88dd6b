"""The rule the twins of scipy's Python functions share: a call without a Tensor is scipy's own."""

from __future__ import annotations

import functools
import importlib
from typing import Any, Callable

import numpy as np

from ..core.tensor import Tensor


def _holds_tensor(a: Any) -> bool:
    """Whether ``a`` is a Tensor, or a list or tuple holding one (``block_diag(*arrays)``, ``(c, lower)``)."""
    return isinstance(a, Tensor) or isinstance(a, (list, tuple)) and any(_holds_tensor(x) for x in a)


def _float(a: Any) -> Any:
    """``a`` as float64 when it is a numpy array of integers or booleans, else ``a`` itself."""
    return a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind in "biu" else a


def scipy_on_plain(twin: Callable, scipy_module: str, promote: bool = False) -> Callable:
    """``twin``, autoprop's twin of the scipy function of its name in the module ``scipy_module``, handing a call with
    no Tensor among its arguments to scipy's own function (the module imported at the first such call).

    The escape warning names these twins as the replacement of scipy's (``use autoprop.scipy.special.softmax``), so
    they replace its import in code that also computes on plain arrays, where scipy's result is an ndarray that
    code may write into (corpus38 F7: scikit-network's ``one_hot = np.zeros_like(softmax(x)); one_hot[i, y] = 1``
    raised "Tensors are immutable" with the twin). scipy.special's ufuncs need no such rule: scipy's own ufunc
    dispatches a Tensor to autoprop, so no import is replaced.

    Parameters
    ----------
    twin : callable
        The twin, named as scipy's function.
    scipy_module : str
        ``"scipy.special"``, ``"scipy.linalg"`` or ``"scipy.signal"``.
    promote : bool, default False
        Integer and boolean arrays among the arguments are handed to scipy as float64, as the twin computes them
        (``softmax``, ``log_softmax``, ``logsumexp``: scipy's softmax of a uint8 array is float16 with NaNs,
        ``tests/test_autoprop_logsumexp_int_s35.py``).

    Returns
    -------
    callable
        The twin's name, signature and docstring; a Tensor among the arguments: the twin's Tensor, recorded; none:
        scipy's own values (ndarrays, or what scipy returns).
    """
    @functools.wraps(twin)
    def call(*args, **kwargs):
        if any(_holds_tensor(a) for a in (*args, *kwargs.values())):
            return twin(*args, **kwargs)
        if promote:
            args, kwargs = [_float(a) for a in args], {k: _float(v) for k, v in kwargs.items()}
        return getattr(importlib.import_module(scipy_module), twin.__name__)(*args, **kwargs)

    return call
