"""Optimizers for autoprop Variables: the same implementation as manualprop's.

``optimizer.apply_gradients(zip(grads, model.trainable_variables))`` updates each
Variable with ``assign_sub`` (a new array, so values a tape saved stay valid). The
update rules live once, in :mod:`manualprop.optim` (PyTorch's formulas, Keras's
argument names); this module re-exports them under TensorFlow's module name, and tells
them how to read a Variable and a gradient Tensor (:func:`_read_only`).
"""

from manualprop import optim as _optim
from manualprop.optim import SGD, Adam, Optimizer, RMSProp, RMSprop

from .core.tensor import _RECORDING, Tensor, Variable

__all__ = ["SGD", "Adam", "Optimizer", "RMSProp", "RMSprop"]


def _read_only(t):
    """The value of the Tensor or Variable ``t`` as the optimizer reads it: a read-only view,
    what ``np.asarray(t)`` gives (``Tensor.__array__``), in one frame instead of the two of
    the optimizer's generic reader. While a tape records, ``__array__`` itself (it notes the
    value leaving the tape)."""
    if _RECORDING:
        return t.__array__()
    v = t._value.view()
    v.setflags(write=False)  # (the flag as `v.flags.writeable = False` sets it, without the flags object)
    return v


# the optimizer's per-type readers (manualprop.optim learns them on first use; these are the
# same views, read in one frame)
_optim._VARIABLE_READERS[Variable] = _optim._GRADIENT_READERS[Tensor] = _read_only
