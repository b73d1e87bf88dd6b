"""The difference quotient of gradcheck: :func:`kernel` is the one place a finite difference is formed; and the
one closeness rule (:func:`mismatched`, :func:`close`, :func:`relative_error`), which :mod:`gradcheck.compare` exports.

Standalone (numpy only): :mod:`gradcheck.numerical` imports it (its evaluation plans) and
:mod:`gradcheck._adapters` too, whose text the sandbox child runs with this module's text before it (a probe of
the student's object: which of two gradients backward gives is further from a difference of forward). Methods
and steps: :mod:`gradcheck.numerical`'s docstring.

It also holds the checker's own random stream (:func:`probe_rng`, :func:`upstream_draw`), which the child's
adapters draw from too (and the rule, so that the adapters' probes decide by it as every verdict does): what the checker draws (the upstream gradient ``G``, inputs from a shape, directions)
must never be a draw the checked code made itself (newuser29 H2: ``G`` from ``default_rng(0)`` was lesson 02's
``X``, so a backward using ``X`` where ``dY`` is due passed).
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
    (Nocedal & Wright sec. 8.1). No first-order (``h`` law) form: within ``d < h`` of a point where ``f''`` jumps
    (Huber's switch) the differences are ``f' + d/2 - h/4 - d^2/(4h)``, which ``2 C(h/2) - C(h)`` takes to ``f' + d/2``,
    not ``f'`` (verify47c F0; switch48: a backward giving that value PASSed sample mode's probe). The one place the
    formula is written: :func:`kernel`'s ``"richardson"`` method and :func:`gradcheck.compare.richardson` use it."""
    return (4.0 * c_half - c_h) / 3.0


def difference_quotient(phi, h, method="central"):
    """Estimate ``phi'(0)`` of a scalar function with absolute step ``h`` (complex: ``phi(1j*h)``)."""
    _check_method(method)
    points = [o * h for o in OFFSETS[method]]
    f0 = phi(0.0) if method == "forward" else None
    return float(kernel(method, [phi(t) for t in points], points, f0)[0])


#: The smallest positive float64: :func:`relative_error`'s floor of the denominator.
TINY = float(np.finfo(np.float64).tiny)


def relative_error(a, b, tiny=TINY):
    """Element-wise ``|a - b| / max(|a| + |b|, tiny)`` in float64, in [0, 1] (``a == b == 0`` gives 0): the one
    relative error (:mod:`gradcheck.compare`'s docstring).

    >>> float(relative_error(1.0, 1.1))  # 0.1 / 2.1
    0.047619047619047...
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), tiny)


def mismatched(a, b, rtol, atol):
    """The elements where ``a`` and ``b`` (one shape) break the one rule: ``|a - b|`` above both ``atol`` and
    ``rtol (|a| + |b|)``, or not finite where they differ (an infinity agrees only with itself; NaN with nothing).

    Returns
    -------
    ndarray of bool, the shape of ``a``

    Examples
    --------
    >>> mismatched(np.array([1.0, np.inf, 2.0]), np.array([1.0, 1.0, 2.1]), 1e-6, 1e-9)
    array([False,  True,  True])
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        d = np.abs(a - b)
        ok = (np.isfinite(d) & ((d <= atol) | (d <= rtol * (np.abs(a) + np.abs(b))))) | (a == b)
    return ~ok


def close(a, b, rtol=1e-6, atol=1e-9, *, equal_nan=False):
    """True when ``a`` and ``b`` have one shape and pass the one rule (:func:`mismatched`) everywhere
    (``close(a, b, 0, 0)``: equality; an infinity agrees only with itself; ``equal_nan``: NaN with NaN)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    if np.array_equal(a, b):  # equal everywhere (no NaN): the rule holds, whatever rtol and atol
        return True
    return bool(np.all(~mismatched(a, b, rtol, atol) | (equal_nan & np.isnan(a) & np.isnan(b))))


def sums_to_one(a, axis=-1, atol=1e-9):
    """Whether ``a``'s sums along ``axis`` are 1 within ``atol`` by the one rule (:func:`close`, ``rtol`` 0): the
    rows of probabilities (a softmax's output, soft labels), each caller testing the signs it needs."""
    s = np.sum(np.asarray(a, dtype=np.float64), axis=axis)
    return close(s, np.ones_like(s), 0.0, atol)


#: The spawn key that sets the checker's streams apart from every conventional draw (``default_rng(seed)``,
#: ``default_rng([seed, k])``, ``default_rng(seed).spawn(n)``, whose keys are small counts): ``"grad"`` in ASCII.
PROBE_KEY = 0x67726164


def probe_rng(seed=0, *key):
    """The checker's own generator for ``seed``: a :class:`numpy.random.SeedSequence` of ``seed`` with the spawn key
    ``(PROBE_KEY, *key)`` (``key``: small ints, one per independent stream of the same seed).

    Reproducible per ``seed`` and ``key``, yet no draw of ``np.random.default_rng(s)``, ``default_rng([s, k])`` or a
    spawned child of theirs (keys ``(0,)``, ``(1,)``, ...) for any ``s``: the numbers a student's code or a lesson
    draws itself (``X = np.random.default_rng(0).standard_normal(...)``) are never the checker's ``G`` (numpy's
    SeedSequence mixes the spawn key into the state: NEP 19, numpy's "Parallel random number generation").

    Parameters
    ----------
    seed : int or sequence of int
        The check's seed (``CheckConfig.seed``, ``--seed``).
    *key : int
        Which of the checker's streams of that seed.

    Returns
    -------
    numpy.random.Generator
        PCG64, numpy's default bit generator.
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(PROBE_KEY, *key))))


#: How many times :func:`upstream_draw` draws again a ``G`` proportional to one of the arrays it avoids.
REDRAWS = 8


def upstream_draw(rng, shape, avoid=()):
    """A standard normal upstream gradient ``G`` of ``shape`` from ``rng``, drawn again while it is proportional to
    an array of ``avoid`` of the same shape (an input, a parameter): a ``G`` equal to ``X`` makes a backward that
    uses ``X`` where ``dY`` is due, or a transposed square ``dW`` (``G.T @ X`` for ``X.T @ G``), give the right
    numbers. Below two entries every pair is proportional: nothing to avoid; a ``G`` of one entry (a scalar output)
    is made negative, as a positive one is what ``abs(dY)`` or ``np.maximum(dY, 0)`` in backward leaves unchanged
    (review30: such a bug PASSed at the seeds whose one draw was positive).

    Parameters
    ----------
    rng : numpy.random.Generator
        Where ``G`` comes from (:func:`probe_rng`); advanced by each draw.
    shape : tuple of int
        The output's shape.
    avoid : iterable of array_like
        The arrays ``G`` must not be a multiple of; those of another shape are skipped.

    Returns
    -------
    ndarray of float64, of ``shape``
    """
    shape = tuple(shape)
    same = [a for a in (np.asarray(a) for a in avoid) if a.shape == shape and a.dtype.kind in "biuf"]
    G = rng.standard_normal(shape)
    for _ in range(REDRAWS if G.size > 1 else 0):
        if not any(_proportional(G, a) for a in same):
            break
        G = rng.standard_normal(shape)
    return -np.abs(G) if G.size == 1 else G


def _proportional(G, a):
    """Whether ``G`` is a multiple of ``a`` (``|cos| > 1 - 1e-9``; a zero ``a`` is no multiple of anything)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    na = float(np.linalg.norm(a))
    if not np.isfinite(na) or na == 0.0:
        return False
    return abs(float(np.dot(G.ravel(), a))) > (1 - 1e-9) * float(np.linalg.norm(G)) * na
