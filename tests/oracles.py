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
