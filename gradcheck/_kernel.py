"""The difference quotient of gradcheck: :func:`kernel` is the one place a finite difference is formed.

Standalone (numpy only): :mod:`gradcheck.numerical` imports it (its evaluation plans) and
:mod:`gradcheck._adapters` too, whose text the sandbox child runs with this module's text before it (a probe of
the student's object: which of two gradients backward gives is further from a difference of forward). Methods
and steps: :mod:`gradcheck.numerical`'s docstring.
"""

import numpy as np

METHODS = ("central", "forward", "richardson", "complex")
#: Where each method evaluates, in multiples of ``h`` (forward also uses f(x0); complex means ``x + i h``).
OFFSETS = {"central": (1.0, -1.0), "forward": (1.0,), "richardson": (1.0, -1.0, 0.5, -0.5), "complex": (1j,)}


def _check_method(method):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    return method


def kernel(method, values, points, f0=None, x0=0.0):
    """The difference quotient: the one place every finite difference of the checker is formed.

    ``values`` at the ``points`` of ``OFFSETS[method]`` as stored (arrays broadcast); ``f0`` the value
    at ``x0`` (forward; central: the one-sided quotients). Returns ``(estimate, d_plus, d_minus)``.
    """
    v, p = values, points
    if method == "complex":
        return np.imag(v[0]) / np.imag(p[0]), None, None
    if method == "forward":
        return (v[0] - f0) / (p[0] - x0), None, None
    c = (v[0] - v[1]) / (p[0] - p[1])
    if method == "richardson":
        return richardson_step(c, (v[2] - v[3]) / (p[2] - p[3])), None, None
    _check_method(method)
    if f0 is None:
        return c, None, None
    return c, (v[0] - f0) / (p[0] - x0), (f0 - v[1]) / (x0 - p[1])


def richardson_step(c_h, c_half):
    """Richardson's extrapolation ``(4 C(h/2) - C(h)) / 3`` of central differences ``c_h`` at a step ``h`` and
    ``c_half`` at ``h/2`` (arrays broadcast): the ``h^2`` term of their truncation error cancels, ``O(h^4)`` is left
    (Nocedal & Wright sec. 8.1). The one place the formula is written: :func:`kernel`'s ``"richardson"`` method and
    :func:`gradcheck.compare.richardson` use it."""
    return (4 * c_half - c_h) / 3


def difference_quotient(phi, h, method="central"):
    """Estimate ``phi'(0)`` of a scalar function with absolute step ``h`` (complex: ``phi(1j*h)``)."""
    _check_method(method)
    points = [o * h for o in OFFSETS[method]]
    f0 = phi(0.0) if method == "forward" else None
    return float(kernel(method, [phi(t) for t in points], points, f0)[0])
