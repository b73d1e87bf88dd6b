r"""Central finite differences, element by element, in float64.

For a layer :math:`Y = f(X; \theta)` the checker reduces the output to a
scalar with a fixed random upstream gradient :math:`G` (same shape as
:math:`Y`, drawn from a seeded generator):

.. math:: L(X, \theta) = \sum_{ij} Y_{ij} G_{ij},

so that :math:`\partial L / \partial X` is exactly the vector-Jacobian product
``backward(G)`` must return, and :math:`\partial L / \partial \theta_k` is what
``grads[k]`` must hold. Each element :math:`x_i` of the input and of every
parameter is perturbed in place and restored:

.. math:: \frac{\partial L}{\partial x_i} \approx
          \frac{L(x_i + h_i) - L(x_i - h_i)}{(x_i + h_i) - (x_i - h_i)},
          \qquad h_i = \varepsilon \max(1, |x_i|).

That is two forward calls per element (O(n) calls, never the full Jacobian).
The denominator is the difference of the two perturbed values as actually
stored, not :math:`2h_i`, so the rounding of :math:`x_i \pm h_i` does not
enter the quotient (Press et al., *Numerical Recipes*, 3rd ed., sec. 5.7).

Choice of step. The truncation error of the central difference is
:math:`O(h^2)` and the rounding error :math:`O(u/h)` with :math:`u` the unit
roundoff (2.2e-16 in float64); balancing the two gives the optimal order
:math:`h \sim u^{1/3} \approx 6\times10^{-6}` (Nocedal & Wright, *Numerical
Optimization*, 2nd ed., sec. 8.1, the discussion after eq. 8.7). The default
``eps`` is exactly that, :math:`u^{1/3} = 6.06\times10^{-6}`; scaling by
:math:`\max(1, |x_i|)` keeps the step relative for large entries. Measured on
manualprop's layers (batch 8-16, up to a 64-32-10 MLP) the absolute error is
1e-10 to 6e-10 with this step, against 2e-10 to 2e-9 with ``eps = 1e-6``, so
the checker's default ``atol = 1e-9`` holds with a margin.

Methods and steps (:data:`METHODS`, :func:`default_eps`). With ``u`` the
machine epsilon of the dtype the objective is evaluated in:

=============  ========================================  ==========  ===============
method         estimate of ``phi'(0)``                    error       default ``eps``
=============  ========================================  ==========  ===============
central        ``(phi(h) - phi(-h)) / 2h``                O(h^2)      ``u**(1/3)``
forward        ``(phi(h) - phi(0)) / h``                  O(h)        ``u**(1/2)``
richardson     ``(4 C(h/2) - C(h)) / 3``, C central       O(h^4)      ``u**(1/5)``
complex        ``Im phi(i h) / h``                        O(h^2)      ``1e-20``
=============  ========================================  ==========  ===============

The central and forward steps balance truncation against rounding (Nocedal &
Wright, sec. 8.1, eqs. 8.6-8.7 and the text after them); Richardson's step
follows from the same balance with an O(h^4) truncation term. The complex
step has no subtraction, hence no cancellation, so ``h`` can be tiny (Squire &
Trapp, SIAM Review 40(1), 1998); it needs a forward that is complex-analytic
in its input (``np.abs``, ``np.maximum`` or comparisons break it), which
:func:`complex_step_supported` detects by trying: the forward must accept a
complex input, return a complex output, and agree with a central difference
along a random direction to 1e-5. Otherwise the checker falls back to central
differences and says so.

Vectorised input scan. A layer whose samples do not interact (the output row
``n`` depends only on input row ``n``; probed by :func:`batch_independent`)
lets many perturbed copies of the input be stacked along the batch axis and
evaluated in one forward call: copy ``(s, p)`` is the whole batch with element
``p`` of *every* sample moved by ``s h``, and sample ``n``'s share of the
objective, ``sum(Y[n] * G[n])``, gives that sample's quotient. This is
exactly the element-by-element central difference (same steps, same
quotient); only rounding inside the layer can differ, by the matmul blocking
of a larger batch (about 1e-16 relative in ``Y``, so ~1e-11 in a gradient).
It is used only when the probe passes; batch statistics (BatchNorm in
training), masks tied to the input shape and layers that reject another batch
size use the element loop. Parameters are always perturbed one element at a
time (they are shared by all samples).

Chunked scans for remote layers. A layer that lives in another process
(:class:`gradcheck.sandbox.RemoteLayer`) pays one round trip per forward call.
When a ``forward_many(inputs_list, params_list)`` is given, the element scans
that would call the forward twice per element (every parameter, and inputs that
cannot be batched) send their perturbed copies in chunks of about
:data:`MANY_BUDGET` array elements instead (:func:`many_scan`): same steps, same
quotients, one round trip per chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["DEFAULT_EPS", "METHODS", "default_eps", "step_sizes", "difference_quotient",
           "step_error_curve", "numerical_gradient", "layer_numerical_gradients", "scalar_objective",
           "Scan", "batch_independent", "batched_input_scan", "directional_derivatives",
           "complex_step_supported", "norm_relative_error", "many_scan", "local_forward_many",
           "MANY_BUDGET"]

#: Default relative step: the cube root of float64 machine epsilon, 6.06e-6, the
#: optimal order for central differences (Nocedal & Wright, sec. 8.1).
DEFAULT_EPS = float(np.cbrt(np.finfo(np.float64).eps))

#: The finite-difference methods, see the module docstring.
METHODS = ("central", "forward", "richardson", "complex")

#: Complex-step size (no cancellation, so any tiny value works; 1e-20 is customary).
COMPLEX_STEP = 1e-20

#: Largest number of input elements stacked into one batched forward call.
BATCH_BUDGET = 1 << 17

#: Target number of array elements (inputs, perturbed parameter, output) per
#: ``forward_many`` chunk of :func:`many_scan`; at most :data:`MANY_MAX` forwards.
MANY_BUDGET = 1 << 18
MANY_MAX = 256


def default_eps(method: str = "central", dtype=np.float64) -> float:
    """The default relative step of ``method`` for objectives evaluated in ``dtype``.

    Parameters
    ----------
    method : {"central", "forward", "richardson", "complex"}
    dtype : numpy float dtype, default float64

    Returns
    -------
    float
        ``u**(1/3)`` (central), ``u**(1/2)`` (forward), ``u**(1/5)`` (richardson) with
        ``u = np.finfo(dtype).eps``; ``1e-20`` (complex).

    Raises
    ------
    ValueError
        For an unknown method.

    References
    ----------
    J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer 2006, sec. 8.1.
    """
    u = float(np.finfo(dtype).eps)
    if method == "central":
        return float(np.cbrt(u))
    if method == "forward":
        return float(np.sqrt(u))
    if method == "richardson":
        return float(u ** 0.2)
    if method == "complex":
        return COMPLEX_STEP
    raise ValueError(f"method must be one of {METHODS}; got {method!r}")


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    return method


def step_sizes(x: np.ndarray, eps: float = DEFAULT_EPS) -> np.ndarray:
    """Per-element step ``h = eps * max(1, |x|)``.

    Parameters
    ----------
    x : ndarray
        The values to be perturbed (any shape).
    eps : float, default 6.06e-6 (DEFAULT_EPS)
        Relative step; see the module docstring for the choice.

    Returns
    -------
    ndarray of float64, same shape as ``x``.
    """
    return float(eps) * np.maximum(1.0, np.abs(np.asarray(x, dtype=np.float64)))


def difference_quotient(phi: Callable[[float], float], h: float, method: str = "central") -> float:
    """Estimate ``phi'(0)`` of a scalar function of one variable with step ``h``.

    Parameters
    ----------
    phi : callable
        ``phi(t) -> float``; for ``method="complex"`` it is called with ``t = 1j*h``
        and must return a complex number.
    h : float
        Step (absolute).
    method : {"central", "forward", "richardson", "complex"}
        See the table in the module docstring. The textbook denominators ``2h``/``h``
        are used (the element-wise gradients use the stored difference instead).

    Returns
    -------
    float
    """
    _check_method(method)
    if method == "central":
        return (phi(h) - phi(-h)) / (2 * h)
    if method == "forward":
        return (phi(h) - phi(0.0)) / h
    if method == "richardson":
        c1 = (phi(h) - phi(-h)) / (2 * h)
        c2 = (phi(h / 2) - phi(-h / 2)) / h
        return (4 * c2 - c1) / 3
    return float(np.imag(phi(1j * h))) / h


def step_error_curve(f: Callable[[np.ndarray], np.ndarray], x0: float, hs: Sequence[float], *,
                     dtype=np.float64, method: str = "central") -> np.ndarray:
    """Finite-difference estimates of ``f'(x0)`` for each step in ``hs``, computed in ``dtype``.

    ``x0 + h`` and ``x0 - h`` are formed and ``f`` evaluated in ``dtype``, the
    quotient ``(f(x0+h) - f(x0-h)) / (2h)`` (for central) in ``dtype`` too, so
    the round-off of that precision shows (the right arm of the V curve).

    Parameters
    ----------
    f : callable
        A numpy ufunc-like function of one array argument (e.g. ``np.exp``).
    x0 : float
    hs : sequence of float
        Steps (absolute).
    dtype : numpy float dtype, default float64
    method : {"central", "forward"}

    Returns
    -------
    ndarray of float64, shape ``(len(hs),)``

    Examples
    --------
    >>> import numpy as np
    >>> est = step_error_curve(np.exp, 1.0, [0.1, 1e-16])
    >>> [round(float(abs(est[0] - np.e)), 6), float(est[1])]
    [0.004533, 0.0]
    """
    if method not in ("central", "forward"):
        raise ValueError("step_error_curve supports method 'central' or 'forward'")
    dt = np.dtype(dtype).type
    x = dt(x0)
    out = []
    for h in hs:
        hh = dt(h)
        if method == "central":
            est = (f(np.array(x + hh, dtype=dt)) - f(np.array(x - hh, dtype=dt))) / (dt(2) * hh)
        else:
            est = (f(np.array(x + hh, dtype=dt)) - f(np.array(x, dtype=dt))) / hh
        out.append(float(est))
    return np.array(out, dtype=np.float64)


def norm_relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """``||a - b|| / (||a|| + ||b||)`` (Frobenius norms), 0 when both are 0.

    The whole-tensor relative error of CS231n's gradient-checking notes; an
    element-wise maximum (:func:`gradcheck.check.relative_error`) is stricter.

    Parameters
    ----------
    a, b : array_like, same shape

    Returns
    -------
    float in [0, 1]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    den = np.linalg.norm(a) + np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / den) if den > 0 else 0.0


@dataclass
class Scan:
    """Element-wise finite differences of one tensor.

    Attributes
    ----------
    grad : ndarray of float64
        The estimate (NaN where not evaluated, in sample mode).
    d_plus, d_minus : ndarray of float64 or None
        One-sided quotients ``(L(x+h) - L(x)) / h`` and ``(L(x) - L(x-h)) / h``
        (central method only): where they disagree the element sits at a kink.
    evaluated : ndarray of bool
        Which elements were estimated.
    how : str
        ``"batched"`` (stacked along the batch axis), ``"loop"`` or ``"complex"``.
    """

    grad: np.ndarray
    d_plus: np.ndarray | None
    d_minus: np.ndarray | None
    evaluated: np.ndarray
    how: str = "loop"


def numerical_gradient(f: Callable[[], float], x: np.ndarray, *, eps: float | None = DEFAULT_EPS,
                       method: str = "central", indices: Sequence[tuple[int, ...]] | None = None,
                       detail: bool = False) -> np.ndarray | Scan:
    """Finite-difference gradient of a scalar function with respect to the array ``x``.

    ``x`` is perturbed **in place**, one element at a time, and every element
    is restored (also if ``f`` raises), so ``f`` may read ``x`` through any
    reference it holds (e.g. a layer's own attribute aliasing ``params['W']``).

    Parameters
    ----------
    f : callable
        ``f() -> float``; evaluates the scalar objective at the current ``x``.
    x : ndarray of float
        Writable array, any shape. Must be float64 for a 1e-6-accurate
        gradient (float32 is perturbed in its own precision).
    eps : float or None, default 6.06e-6 (DEFAULT_EPS)
        Relative step, ``h_i = eps * max(1, |x_i|)``; None: :func:`default_eps` of ``method``.
    method : {"central", "forward", "richardson"}, default "central"
        The complex step needs a complex copy of ``x`` and is not done in place.
    indices : sequence of index tuples, optional
        Estimate only these elements (sample mode); the others are NaN.
    detail : bool, default False
        Return a :class:`Scan` (with one-sided quotients for ``central``) instead of the array.

    Returns
    -------
    ndarray of float64, shape ``x.shape`` (or a :class:`Scan` when ``detail``)
        ``dL/dx`` estimated per element; for central differences
        ``(f(x+h) - f(x-h)) / ((x+h) - (x-h))`` with the stored values in the denominator.

    Raises
    ------
    TypeError
        If ``x`` is not a writable floating-point ndarray.
    ValueError
        For an unknown method or ``"complex"``.

    References
    ----------
    J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer 2006, sec. 8.1.
    """
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or not x.flags.writeable:
        raise TypeError("numerical_gradient needs a writable floating-point ndarray to perturb in place")
    _check_method(method)
    if method == "complex":
        raise ValueError("numerical_gradient perturbs x in place (real); the complex step is done by "
                         "layer_numerical_gradients on a complex copy of the input")
    if eps is None:
        eps = default_eps(method)
    evaluated = np.zeros(x.shape, dtype=bool)
    grad = np.full(x.shape, np.nan if indices is not None else 0.0, dtype=np.float64)
    want_sides = detail and method == "central"
    d_plus = np.full(x.shape, np.nan) if want_sides else None
    d_minus = np.full(x.shape, np.nan) if want_sides else None
    h_all = step_sizes(x, eps)
    if x.dtype != np.float64:
        # A float64 step below the array's resolution would be rounded away.
        h_all = np.maximum(h_all, np.cbrt(np.finfo(x.dtype).eps) * np.maximum(1.0, np.abs(x)))
    f0 = float(f()) if (want_sides or method == "forward") and x.size else 0.0
    idx_iter = np.ndindex(x.shape) if indices is None else (tuple(int(i) for i in ix) for ix in indices)
    for idx in idx_iter:
        orig = x[idx].copy()
        x0 = float(orig)
        h = h_all[idx]
        try:
            if method == "forward":
                x[idx] = orig + h
                xp = float(x[idx])
                g = (float(f()) - f0) / (xp - x0)
            elif method == "central":
                x[idx] = orig + h
                xp = float(x[idx])
                fp = float(f())
                x[idx] = orig - h
                xm = float(x[idx])
                fm = float(f())
                g = (fp - fm) / (xp - xm)
                if want_sides:
                    d_plus[idx] = (fp - f0) / (xp - x0)
                    d_minus[idx] = (f0 - fm) / (x0 - xm)
            else:  # richardson
                vals = []
                for step in (h, h / 2):
                    x[idx] = orig + step
                    xp = float(x[idx])
                    fp = float(f())
                    x[idx] = orig - step
                    xm = float(x[idx])
                    fm = float(f())
                    vals.append((fp - fm) / (xp - xm))
                g = (4 * vals[1] - vals[0]) / 3
        finally:
            x[idx] = orig
        grad[idx] = g
        evaluated[idx] = True
    if detail:
        return Scan(grad, d_plus, d_minus, evaluated, "loop")
    return grad


def scalar_objective(Y: np.ndarray, G: np.ndarray) -> float:
    """``L = sum(Y * G)``, the scalar whose gradient ``backward(G)`` computes.

    Parameters
    ----------
    Y, G : ndarray of the same shape

    Returns
    -------
    float
    """
    return float(np.sum(np.asarray(Y, dtype=np.float64) * G))


# --------------------------------------------------------------------------- batched scans


def _concat_inputs(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.concatenate([x, y], axis=0) for x, y in zip(a, b)]


def batch_independent(forward: Callable[..., np.ndarray], inputs: Sequence[np.ndarray],
                      rng: np.random.Generator | None = None) -> tuple[bool, str]:
    """Probe whether samples along axis 0 are computed independently.

    ``forward`` is called on ``[X; Z]`` and ``[Z; X]`` for a random batch ``Z`` of
    another size; the rows belonging to ``X`` must equal ``forward(X)`` (to 1e-12
    relative) and the output's axis 0 must be the batch axis.

    Parameters
    ----------
    forward : callable
        ``forward(*inputs) -> Y`` (gets fresh copies).
    inputs : sequence of ndarray
        All share the batch size ``N = inputs[0].shape[0]``.
    rng : numpy.random.Generator, optional

    Returns
    -------
    ok : bool
    reason : str
        Why not, when ``ok`` is False ("" otherwise).
    """
    rng = rng or np.random.default_rng(12345)
    if not inputs or any(x.ndim == 0 for x in inputs):
        return False, "an input has no batch axis"
    n = inputs[0].shape[0]
    if any(x.shape[0] != n for x in inputs):
        return False, "the inputs have different sizes along axis 0"
    m = max(1, n // 2 + 1)

    def other(x):
        if x.dtype.kind == "f":
            scale = max(1.0, float(np.abs(x).max()))
            return rng.standard_normal((m,) + x.shape[1:]) * scale
        return x[rng.integers(0, n, size=m)]

    Z = [other(x) for x in inputs]
    try:
        Y = np.asarray(forward(*[x.copy() for x in inputs]), dtype=np.float64)
        Y1 = np.asarray(forward(*_concat_inputs(inputs, Z)), dtype=np.float64)
        Y2 = np.asarray(forward(*_concat_inputs(Z, inputs)), dtype=np.float64)
    except Exception as exc:  # noqa: BLE001 - any failure means "use the element loop"
        return False, f"forward on a batch of another size raised {type(exc).__name__}"
    if Y.ndim == 0 or Y.shape[0] != n or Y1.shape != (n + m,) + Y.shape[1:] or Y2.shape != Y1.shape:
        return False, "the output's axis 0 is not the batch axis"
    tol = 1e-12 * max(1.0, float(np.abs(Y).max()))
    if np.abs(Y1[:n] - Y).max() > tol or np.abs(Y2[m:] - Y).max() > tol:
        return False, "samples interact (the output of one sample depends on the others)"
    return True, ""


def batched_input_scan(forward: Callable[..., np.ndarray], inputs: Sequence[np.ndarray], which: int,
                       G: np.ndarray, *, eps: float = DEFAULT_EPS, budget: int = BATCH_BUDGET,
                       indices: Sequence[tuple[int, ...]] | None = None) -> Scan:
    """Central differences of ``L = sum(forward(*inputs) * G)`` w.r.t. ``inputs[which]``, vectorised.

    Exact element-by-element central differences (same steps, stored-difference
    denominators) for a layer whose samples are independent (check with
    :func:`batch_independent` first): perturbed copies of the whole batch are
    stacked along axis 0 and evaluated in one call per chunk of about ``budget``
    input elements. For each sample ``n`` only ``sum(Y[n] * G[n])`` is used.

    Parameters
    ----------
    forward : callable
        ``forward(*inputs) -> Y``, ``Y.shape[0] == inputs[0].shape[0]``.
    inputs : sequence of ndarray
        Not modified. ``inputs[which]`` must be float64.
    which : int
    G : ndarray of float64, shape of ``forward(*inputs)``
    eps : float
        Relative step, ``h = eps * max(1, |x|)``.
    budget : int
        Target number of input elements per forward call.
    indices : sequence of index tuples, optional
        Only these elements (sample mode).

    Returns
    -------
    Scan
        With one-sided quotients (``how="batched"``).
    """
    X = inputs[which]
    N = X.shape[0]
    P = int(np.prod(X.shape[1:], dtype=np.int64))
    Xf = X.reshape(N, P)
    H = step_sizes(Xf, eps)
    Xp = Xf + H
    Xm = Xf - H
    den = Xp - Xm
    Gf = np.asarray(G, dtype=np.float64).reshape(N, -1)
    L0 = np.einsum("nk,nk->n", np.asarray(forward(*[x.copy() for x in inputs]), dtype=np.float64)
                   .reshape(N, -1), Gf)
    grad = np.full((N, P), np.nan if indices is not None else 0.0)
    d_plus = np.full((N, P), np.nan)
    d_minus = np.full((N, P), np.nan)
    evaluated = np.zeros((N, P), dtype=bool)
    if indices is None:
        positions = np.arange(P)
        mask_np = None
    else:
        flat = np.array([np.ravel_multi_index(ix, X.shape) for ix in indices], dtype=np.int64)
        mask_np = np.zeros((N, P), dtype=bool)
        mask_np[flat // P, flat % P] = True
        positions = np.unique(flat % P)
    # a chunk of m positions is 2*m copies of the batch, 2*m*N*P input elements
    per_chunk = max(1, min(len(positions), budget // max(1, 2 * N * P)))
    others = [(i, x) for i, x in enumerate(inputs) if i != which]
    for start in range(0, len(positions), per_chunk):
        pos = positions[start:start + per_chunk]
        m = len(pos)
        big = np.broadcast_to(Xf, (2, m, N, P)).copy()
        j = np.arange(m)
        big[0, j, :, pos] = Xp[:, pos].T
        big[1, j, :, pos] = Xm[:, pos].T
        args = [None] * len(inputs)
        args[which] = big.reshape((2 * m * N,) + X.shape[1:])
        for i, x in others:
            args[i] = np.broadcast_to(x, (2 * m,) + x.shape).reshape((2 * m * N,) + x.shape[1:]).copy()
        Yb = np.asarray(forward(*args), dtype=np.float64).reshape(2, m, N, -1)
        Lb = np.einsum("smnk,nk->smn", Yb, Gf)  # (2, m, N)
        fp, fm = Lb[0].T, Lb[1].T  # (N, m)
        grad[:, pos] = (fp - fm) / den[:, pos]
        d_plus[:, pos] = (fp - L0[:, None]) / H[:, pos]
        d_minus[:, pos] = (L0[:, None] - fm) / H[:, pos]
        evaluated[:, pos] = True
    if mask_np is not None:
        grad[~mask_np] = np.nan
        evaluated &= mask_np
    shape = X.shape
    return Scan(grad.reshape(shape), d_plus.reshape(shape), d_minus.reshape(shape), evaluated.reshape(shape),
                "batched")


def complex_step_supported(forward: Callable[..., np.ndarray], inputs: Sequence[np.ndarray], which: int,
                           G: np.ndarray, rng: np.random.Generator | None = None) -> tuple[bool, str]:
    """Whether ``forward`` is complex-analytic in ``inputs[which]`` (detected by trying).

    The forward is called with a complex input ``X + i h u`` (random ``u``). It must
    not raise, must return a complex array, and ``Im(L)/h`` must agree with a
    central difference along ``u`` to 1e-5 relative. Functions such as ``abs``,
    ``maximum`` or comparisons fail the last test.

    Returns
    -------
    ok : bool
    reason : str
    """
    import warnings

    rng = rng or np.random.default_rng(7)
    X = inputs[which]
    u = rng.standard_normal(X.shape)
    h = COMPLEX_STEP

    def call(xw):
        args = [x.copy() for x in inputs]
        args[which] = xw
        return forward(*args)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            Yc = np.asarray(call(X + 1j * h * u))
    except Exception as exc:  # noqa: BLE001
        return False, f"forward does not accept a complex input ({type(exc).__name__})"
    if Yc.dtype.kind != "c":
        return False, "forward returned a real array for a complex input (it drops the imaginary part)"
    cs = float(np.sum(Yc * G).imag) / h
    hc = DEFAULT_EPS * max(1.0, float(np.abs(X).max()))
    cd = (float(np.sum(np.asarray(call(X + hc * u), dtype=np.float64) * G))
          - float(np.sum(np.asarray(call(X - hc * u), dtype=np.float64) * G))) / (2 * hc)
    if abs(cs - cd) > 1e-5 * (abs(cs) + abs(cd)) + 1e-9:
        return False, (f"the complex step along a random direction ({cs:.6g}) disagrees with central "
                       f"differences ({cd:.6g}): the forward is not complex-analytic (abs, max, comparisons?)")
    return True, ""


def _complex_scan(forward, inputs, which, G, indices=None) -> Scan:
    X = inputs[which]
    grad = np.full(X.shape, np.nan if indices is not None else 0.0)
    evaluated = np.zeros(X.shape, dtype=bool)
    idx_iter = np.ndindex(X.shape) if indices is None else (tuple(ix) for ix in indices)
    h = COMPLEX_STEP
    for idx in idx_iter:
        xc = X.astype(np.complex128)
        xc[idx] += 1j * h
        args = [x.copy() for x in inputs]
        args[which] = xc
        grad[idx] = float(np.sum(np.asarray(forward(*args)) * G).imag) / h
        evaluated[idx] = True
    return Scan(grad, None, None, evaluated, "complex")


def many_scan(forward_many: Callable[[list, list], list], inputs: Sequence[np.ndarray],
              params: Mapping[str, np.ndarray], key: str | int, G: np.ndarray, *, eps: float = DEFAULT_EPS,
              indices: Sequence[tuple[int, ...]] | None = None, budget: int = MANY_BUDGET,
              max_per_call: int = MANY_MAX) -> Scan:
    """Central differences of ``L = sum(Y * G)`` w.r.t. one tensor, the forwards sent in chunks.

    Element by element exactly as :func:`numerical_gradient` (same steps, stored
    differences as denominators, one-sided quotients), but the ``2 n`` perturbed
    forwards go through ``forward_many`` in chunks, so a layer in another process
    costs one round trip per chunk instead of one per forward.

    Parameters
    ----------
    forward_many : callable
        ``forward_many(inputs_list, params_list, edits_list) -> list of Y``, the
        protocol of :meth:`gradcheck.sandbox.RemoteLayer.forward_many`:
        ``inputs_list[j]`` is a list of arrays or None (the previous forward's inputs),
        ``params_list[j]`` a dict of parameter values to set before forward ``j`` (empty:
        keep the previous values; the first entry of every chunk holds every
        parameter), ``edits_list[j]`` a list of ``(key, flat_index, value)`` set for
        forward ``j`` only. A parameter scan thus sends one number per forward.
        :func:`local_forward_many` gives this protocol for a plain ``forward``.
    inputs : sequence of ndarray
        The inputs; not modified.
    params : dict of str -> ndarray
        The current parameter values; not modified.
    key : int or str
        Position of the input to differentiate, or a parameter key.
    G : ndarray
        Upstream gradient.
    eps : float
    indices : sequence of index tuples, optional
        Only these elements (sample mode; others NaN).
    budget, max_per_call : int
        Chunk size: about ``budget`` array elements, at most ``max_per_call`` forwards.

    Returns
    -------
    Scan
        ``how="many"``.
    """
    is_input = isinstance(key, int)
    base = np.asarray(inputs[key] if is_input else params[key])
    if base.dtype.kind != "f":
        raise TypeError("many_scan differentiates floating-point arrays only")
    base = np.array(base, dtype=np.float64 if is_input else base.dtype, copy=True)
    full = {k: np.array(v, copy=True) for k, v in params.items()}
    xs = [np.array(x, copy=True) for x in inputs]
    H = step_sizes(base, eps)
    grad = np.full(base.shape, np.nan if indices is not None else 0.0)
    d_plus = np.full(base.shape, np.nan)
    d_minus = np.full(base.shape, np.nan)
    evaluated = np.zeros(base.shape, dtype=bool)
    idx_list = list(np.ndindex(base.shape)) if indices is None else [tuple(int(i) for i in ix) for ix in indices]
    if not idx_list:
        return Scan(grad, d_plus, d_minus, evaluated, "many")
    L0 = scalar_objective(forward_many([xs], [full], [[]])[0], G)
    size = int(np.size(G)) + (sum(x.size for x in xs) if is_input else 0)
    per_call = max(2, min(max_per_call, budget // max(1, size))) // 2 * 2
    jobs = [(idx, s) for idx in idx_list for s in (1.0, -1.0)]
    values: list[tuple[float, float]] = []  # (stored perturbed value, L)
    for start in range(0, len(jobs), per_call):
        chunk = jobs[start:start + per_call]
        ins, pars, edits, stored = [], [], [], []
        for j, (idx, s) in enumerate(chunk):
            one = np.array(base[idx] + s * H[idx], dtype=base.dtype)  # rounded as it will be stored
            stored.append(float(one))
            if is_input:
                row = list(xs)
                row[key] = base.copy()
                row[key][idx] = one
                ins.append(row)
                edits.append([])
            else:
                ins.append(xs if j == 0 else None)
                edits.append([(key, int(np.ravel_multi_index(idx, base.shape)), float(one))])
            pars.append(full if j == 0 else {})
        Ys = forward_many(ins, pars, edits)
        values += [(v, scalar_objective(Yj, G)) for v, Yj in zip(stored, Ys)]
    for n, idx in enumerate(idx_list):
        (xp, fp), (xm, fm) = values[2 * n], values[2 * n + 1]
        x0 = float(base[idx])
        grad[idx] = (fp - fm) / (xp - xm)
        d_plus[idx] = (fp - L0) / (xp - x0)
        d_minus[idx] = (L0 - fm) / (x0 - xm)
        evaluated[idx] = True
    return Scan(grad, d_plus, d_minus, evaluated, "many")


def local_forward_many(forward: Callable[..., np.ndarray], params: Mapping[str, np.ndarray]
                       ) -> Callable[[list, list, list], list]:
    """The ``forward_many`` protocol of :func:`many_scan` for a local ``forward(*inputs)``.

    Parameters
    ----------
    forward : callable
        ``forward(*inputs) -> Y``, reading ``params``.
    params : dict of str -> ndarray
        The arrays the forward reads; set in place per forward, restored at the end.

    Returns
    -------
    callable
        ``forward_many(inputs_list, params_list, edits_list) -> list of Y``.
    """
    def many(inputs_list, params_list, edits_list):
        saved = {k: v.copy() for k, v in params.items()}
        out, prev = [], None
        try:
            for xs, ps, es in zip(inputs_list, params_list, edits_list):
                prev = prev if xs is None else xs
                for k, v in ps.items():
                    np.copyto(params[k], v)
                undo = []
                for k, i, v in es:
                    undo.append((k, i, params[k].flat[i].copy()))
                    params[k].flat[i] = v
                out.append(np.array(forward(*[x.copy() for x in prev]), dtype=np.float64))
                for k, i, old in reversed(undo):
                    params[k].flat[i] = old
        finally:
            for k, v in saved.items():
                np.copyto(params[k], v)
        return out
    return many


def layer_numerical_gradients(
    forward: Callable[..., np.ndarray],
    X: np.ndarray | Sequence[np.ndarray],
    params: Mapping[str, np.ndarray],
    G: np.ndarray,
    *,
    eps: float | None = DEFAULT_EPS,
    input_names: Sequence[str] | None = None,
    method: str = "central",
    batched: bool | str = "auto",
    which: Sequence[str] | None = None,
    indices: Mapping[str, Sequence[tuple[int, ...]]] | None = None,
    detail: bool = False,
    notes: list[str] | None = None,
    forward_many: Callable[[list, list], list] | None = None,
) -> dict[str, np.ndarray] | dict[str, Scan]:
    """Numerical gradients of ``L = sum(forward(*inputs) * G)`` w.r.t. the inputs and every parameter.

    Parameters
    ----------
    forward : callable
        ``forward(*inputs) -> Y`` evaluating the layer with its current parameters.
        It receives fresh copies of the inputs on every call, so a layer that
        writes into its input cannot corrupt the check.
    X : ndarray or sequence of ndarray
        The input (``forward(X)``) or several inputs (``forward(Q, K, V)``). Not
        modified. Floating-point inputs are differentiated (perturbed in float64
        copies); integer inputs (indices) are passed unchanged and get no gradient.
    params : dict of str -> ndarray
        The layer's own parameter arrays; perturbed in place and restored.
    G : ndarray of float64
        Upstream gradient, same shape as ``forward(*inputs)``.
    eps : float or None, default 6.06e-6 (DEFAULT_EPS)
        Relative step, see :func:`numerical_gradient`; None: :func:`default_eps` of ``method``.
    input_names : sequence of str, optional
        Keys for the inputs in the result; default ``"X"`` for one input,
        ``"X0", "X1", ...`` for several.
    method : {"central", "forward", "richardson", "complex"}, default "central"
        ``"complex"`` applies to the inputs when :func:`complex_step_supported`
        says so (central differences otherwise, and always for parameters; a
        note is appended to ``notes``).
    batched : bool or "auto", default "auto"
        Vectorise the input scans (central method) when :func:`batch_independent`
        holds; True forces it (no probe), False uses the element loop.
    which : sequence of str, optional
        Only these keys (input names or parameter keys); default all.
    indices : dict of key -> index tuples, optional
        Sample mode: estimate only these elements of these keys (others NaN).
    detail : bool, default False
        Return :class:`Scan` objects (one-sided quotients for kink detection).
    notes : list of str, optional
        Receives remarks (method fallbacks, loop vs batched).
    forward_many : callable, optional
        ``forward_many(inputs_list, params_list, edits_list) -> list of Y`` (see :func:`many_scan`):
        with the central method, the element scans (parameters, and inputs not
        batched) send their forwards in chunks through it.

    Returns
    -------
    dict
        ``{input_name: dL/dinput for each float input, **{k: dL/dparams[k]}}``,
        float64 arrays with the shapes of the inputs and parameters (or Scans).
    """
    _check_method(method)
    single = isinstance(X, np.ndarray)
    inputs = [np.asarray(X)] if single else [np.asarray(x) for x in X]
    if input_names is None:
        input_names = ["X"] if len(inputs) == 1 else [f"X{i}" for i in range(len(inputs))]
    work = [np.array(x, dtype=np.float64, copy=True) if x.dtype.kind == "f" else x.copy() for x in inputs]
    notes = notes if notes is not None else []
    wanted = set(which) if which is not None else None
    real_eps = default_eps("central" if method == "complex" else method) if eps is None else eps

    def objective() -> float:
        return scalar_objective(forward(*[w.copy() for w in work]), G)

    def loop(arr, key, position=None):
        m = "central" if method == "complex" else method
        sel = None if indices is None else indices.get(key)
        if forward_many is not None and m == "central":
            return many_scan(forward_many, work, params, key if position is None else position, G, eps=real_eps,
                             indices=sel)
        return numerical_gradient(objective, arr, eps=real_eps, method=m, indices=sel, detail=True)

    out: dict[str, Scan] = {}
    float_inputs = [i for i, w in enumerate(work) if w.dtype.kind == "f"
                    and (wanted is None or input_names[i] in wanted)]
    use_batched = False
    if float_inputs and method == "central" and batched:
        if batched == "auto":
            use_batched, why = batch_independent(forward, work)
            if not use_batched:
                notes.append(f"input gradients by the element loop: {why}")
        else:
            use_batched = True
    for i in float_inputs:
        name = input_names[i]
        sel = None if indices is None else indices.get(name)
        if method == "complex":
            ok, why = complex_step_supported(forward, work, i, G)
            if ok:
                out[name] = _complex_scan(forward, work, i, G, sel)
                continue
            notes.append(f"complex step not used for {name}: {why}; central differences instead")
        if use_batched:
            out[name] = batched_input_scan(forward, work, i, G, eps=real_eps, indices=sel)
        else:
            out[name] = loop(work[i], name, i)
    if method == "complex" and params:
        notes.append("parameters are checked by central differences (the complex step would need "
                     "complex parameter arrays inside the layer)")
    for k, p in params.items():
        if wanted is None or k in wanted:
            out[k] = loop(p, k)
    if detail:
        return out
    return {k: s.grad for k, s in out.items()}


def directional_derivatives(
    forward: Callable[..., np.ndarray],
    X: Sequence[np.ndarray],
    params: Mapping[str, np.ndarray],
    G: np.ndarray,
    *,
    input_names: Sequence[str],
    groups: Sequence[Sequence[str]],
    n_dirs: int = 2,
    eps: float = DEFAULT_EPS,
    rng: np.random.Generator | None = None,
) -> dict[tuple[str, ...], list[tuple[dict[str, np.ndarray], float]]]:
    r"""Random directional derivatives of ``L = sum(forward(*inputs) * G)`` by central differences.

    For each group of tensors (one tensor, or several jointly) and each of
    ``n_dirs`` random directions ``u`` (entries ``z * max(1, |x|)``,
    ``z ~ N(0, 1)``), the central difference ``(L(x + eps u) - L(x - eps u)) / 2 eps``
    is returned with ``u``; the caller compares it with
    :math:`G^T J u = \sum_t \langle g_t, u_t\rangle` from the gradients under test.
    Two forward calls per direction, whatever the size of the tensors.

    Parameters
    ----------
    forward : callable
        ``forward(*inputs) -> Y`` (receives copies).
    X : sequence of ndarray
        The inputs; not modified.
    params : dict of str -> ndarray
        Perturbed in place and restored exactly.
    G : ndarray
        Upstream gradient.
    input_names : sequence of str
        Keys of the inputs, in order.
    groups : sequence of sequence of str
        E.g. ``[["X"], ["W"], ["b"]]`` (per tensor) or ``[["X", "W", "b"]]`` (joint).
    n_dirs : int, default 2
    eps : float, default DEFAULT_EPS
    rng : numpy.random.Generator, optional

    Returns
    -------
    dict
        ``{tuple(group): [(u, numerical), ...]}`` with ``u`` a dict key -> direction array.
    """
    rng = rng or np.random.default_rng(0)
    inputs = [np.asarray(x) for x in X]
    base = [np.array(x, dtype=np.float64) if x.dtype.kind == "f" else x for x in inputs]
    pos = {n: i for i, n in enumerate(input_names)}
    out: dict[tuple[str, ...], list[tuple[dict[str, np.ndarray], float]]] = {}
    for group in groups:
        pairs = []
        for _ in range(n_dirs):
            dirs = {}
            for k in group:
                ref = base[pos[k]] if k in pos else params[k]
                dirs[k] = rng.standard_normal(ref.shape) * np.maximum(1.0, np.abs(ref))
            vals = []
            for s in (1.0, -1.0):
                args = [b.copy() for b in base]
                saved = {}
                for k in group:
                    if k in pos:
                        args[pos[k]] = base[pos[k]] + s * eps * dirs[k]
                    else:
                        saved[k] = params[k].copy()
                        params[k] += (s * eps * dirs[k]).astype(params[k].dtype)
                try:
                    vals.append(scalar_objective(forward(*args), G))
                finally:
                    for k, v in saved.items():
                        np.copyto(params[k], v)
            pairs.append((dirs, (vals[0] - vals[1]) / (2 * eps)))
        out[tuple(group)] = pairs
    return out
