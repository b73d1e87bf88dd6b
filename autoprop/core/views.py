"""numpy's views, on tensors that are never written.

numpy's ``row = b[0]`` (and ``b.T``, ``b.reshape(...)``, ``np.fliplr(b)``, ...) is a view: ``row *= 3``
writes through into ``b``, and ``b *= 2`` changes ``row``. An autoprop Tensor is never written
(``t *= 3`` binds ``t`` to a new tensor, as TensorFlow's), so the same code would give other
values. Instead of a silently different number, the augmented operators are refused on a view and
on a tensor that has one (:meth:`autoprop.Tensor._augmented`); this module marks both (the tape
marks a primitive's result that shares its input's memory; numpy's dispatch, ``prims/dispatch.py``,
the result of a numpy function that gives a view). Source: ``lessons/10-gradient-tape.md``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["mark_view", "not_a_view", "VIEW_FUNCTIONS"]

#: numpy functions whose result is a view of their input (or the input itself): their tensors are
#: marked as views whatever autoprop computed (a gather, or the input tensor itself).
VIEW_FUNCTIONS = frozenset(f for f in (getattr(np, n, None) for n in (
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims",
    "atleast_1d", "atleast_2d", "atleast_3d", "flip", "fliplr", "flipud", "rot90", "real", "imag",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "diagonal", "broadcast_to",
    "matrix_transpose", "permute_dims", "unstack")) if f is not None) | {
    np.lib.stride_tricks.sliding_window_view}  # (read-only in numpy; refused here as every view)


def mark_view(out, base, made_by):
    """Mark Tensor ``out`` as a view of Tensor ``base``'s values (``made_by``: what made it)."""
    out._view = (made_by, base._value.shape)  # the words are made only if an error needs them
    base._views = made_by


def not_a_view(a, make):
    """``make()``, a recorded reshape of ``a`` that numpy gives as a new array (``copy``,
    ``flatten``): neither it nor ``a`` is marked, whatever memory they share."""
    before = getattr(a, "_views", None)
    t = make()
    t._view, a._views = None, before
    return t
