"""Optimizers for autoprop Variables: the same implementation as manualprop's.

``optimizer.apply_gradients(zip(grads, model.trainable_variables))`` updates each
Variable with ``assign_sub`` (a new array, so values a tape saved stay valid). The
update rules live once, in :mod:`manualprop.optim` (PyTorch's formulas, Keras's
argument names, Keras's decoupled ``weight_decay``); this module re-exports them under TensorFlow's module name, and tells
them how to read a Variable and a gradient Tensor (:func:`_read_only`).
"""

import math

import numpy as np

from manualprop import optim as _optim
from manualprop._validation import _F32, _F64
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


def _sgd_on_variables(learning_rate, grads, variables):
    """Plain SGD's update of Variable pairs, checked first: the twin of manualprop's
    ``_sgd_on_arrays`` for ``apply_gradients(zip(grads, model.trainable_variables))``.

    Every pair a :class:`Variable` and a gradient :class:`Tensor` (or a gradient ndarray, as
    ``autoprop.function``'s replay holds it: the general path reads either the same way) of its
    float32/float64 dtype and shape without NaN/inf (float64: one dot), the checks of the general
    path; then each
    variable gets a new array ``value - learning_rate * grad`` (what its ``assign_sub`` gives,
    the same bits: a tape's saved value stays as it was), computed into the fresh product
    ``learning_rate * grad`` instead of a second array. Without the general path's read-only
    views of both (4 pairs of a 2-layer MLP: about 10% of a 64-32-10 B16 step, session 17 of
    docs/speed.md). Returns False, with nothing updated, at the first pair that is anything
    else, or while a tape records (its reads are noted there); the general path then checks
    every pair again and writes the message.
    """
    if _RECORDING:
        return False
    o = _optim  # (the optimizer's own dot and sum: the same looks as its general path)
    f64, f32, vdot, chunk = _F64, _F32, o._vdot, o.DOT_CHUNK
    ndarray = np.ndarray
    for grad, var in zip(grads, variables):
        # (a gradient Tensor's value, or the gradient array itself: autoprop.function's update event)
        g = grad._value if type(grad) is Tensor else grad
        if type(var) is not Variable or type(g) is not ndarray:
            return False
        v = var._value
        dt = g.dtype
        if dt is not v.dtype or g.shape != v.shape:
            return False
        if dt is f64:
            if not math.isfinite(vdot(g, g) if g.size <= chunk else o.sum_of_squares(g)):
                return False
        elif dt is not f32 or not o._sum_is_finite(g):
            return False
    subtract = np.subtract
    scalar_rate = type(learning_rate) is float  # its product with an array has the array's shape
    for grad, var in zip(grads, variables):
        d = learning_rate * (grad._value if type(grad) is Tensor else grad)
        v = var._value
        if type(d) is ndarray and d.dtype is v.dtype and (scalar_rate or d.shape == v.shape):
            var._value = subtract(v, d, out=d)  # v - d, the bits of assign_sub's v - delta
        else:  # (a 0-d gradient's product is a scalar; a learning_rate set to another dtype)
            var.assign_sub(d)
    return True


_optim._SGD_ON[Variable] = _sgd_on_variables
