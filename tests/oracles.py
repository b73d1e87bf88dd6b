"""The central-difference oracle the autoprop tests compare tape gradients with (not a test module).

One definition for every test file that needs it (test_autoprop_gaps, test_autoprop_student_code,
test_autoprop_linalg); each caller states its own step ``h``.
"""

from __future__ import annotations

import numpy as np


def central(f, x, *, h):
    """Central differences ``(f(x + h e_i) - f(x - h e_i)) / 2h`` of a scalar ``f`` at every entry of ``x``.

    Parameters
    ----------
    f : callable
        ``f(array of x's shape) -> float``; called twice per entry, on new arrays (``x`` is never written).
    x : array_like
        The point, taken as a float64 array.
    h : float
        The step (truncation error O(h^2), round-off about u*|f|/h).

    Returns
    -------
    ndarray of float64, shape of ``x``
        The gradient estimate.
    """
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def central_each(f, xs, *, h=1e-6):
    """:func:`central` of a scalar ``f(*xs)`` with respect to each argument in turn, the others held (each in its
    own dtype: a real step on every entry).

    Parameters
    ----------
    f : callable
        ``f(*xs) -> float``; called on new arrays (``xs`` are never written).
    xs : sequence of ndarray
        The point.
    h : float
        The step.

    Returns
    -------
    list of ndarray
        One gradient estimate per argument, each of its argument's shape and dtype.
    """
    out = []
    for i, x in enumerate(xs):
        d = np.zeros_like(x)
        for j in np.ndindex(np.shape(x)):
            e = np.zeros_like(x)
            e[j] = h
            plus = [v + e if k == i else v for k, v in enumerate(xs)]
            minus = [v - e if k == i else v for k, v in enumerate(xs)]
            d[j] = (float(f(*plus)) - float(f(*minus))) / (2 * h)
        out.append(d)
    return out


def central_in_place(f, W, *, h):
    """:func:`central` of a scalar ``f()`` that reads the array ``W`` itself (a layer holds it, and
    views of it move with it): each entry of ``W`` is changed in place, and ``W`` is restored."""
    W0 = np.array(W, dtype=float)

    def at(w):
        np.copyto(W, w)
        return f()

    try:
        return central(at, W0, h=h)
    finally:
        np.copyto(W, W0)
