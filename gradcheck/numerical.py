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

One kernel, several plans. :func:`kernel` is the only place a difference
quotient is formed (central, forward, Richardson, complex; :data:`OFFSETS` lists
the multiples of ``h`` each evaluates). The denominator is the difference of the
perturbed values as stored, so the rounding of ``x + h`` does not enter. The
*plans* only choose which perturbed copies to run and how to call the forward:

* **element loop** (:func:`numerical_gradient`): one element at a time, in place;
* **stacked batch** (:func:`batched_input_scan`): for a layer whose samples do not
  interact (:func:`batch_independent`), copy ``(s, p)`` is the whole batch with
  element ``p`` of every sample moved by ``s h``, many copies stacked along axis 0
  in one forward call; sample ``n``'s share ``sum(Y[n] * G[n])`` gives its quotient
  (the same steps and quotients as the loop; only rounding inside the layer differs);
* **chunked remote** (:func:`many_scan`): the loop's copies sent in chunks of about
  :data:`MANY_BUDGET` array elements through ``forward_many`` (one round trip per
  chunk for a layer in another process, :class:`gradcheck.sandbox.RemoteLayer`);
* **directional** (:func:`directional_derivatives`): two forwards per random direction;
* **sample**: any of the element plans restricted to chosen ``indices``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .compare import norm_relative_error

__all__ = ["DEFAULT_EPS", "METHODS", "OFFSETS", "kernel", "default_eps", "step_sizes", "difference_quotient",
           "step_error_curve", "numerical_gradient", "layer_numerical_gradients", "scalar_objective",
           "Scan", "batch_independent", "batched_input_scan", "directional_derivatives", "numerical_jacobian",
           "complex_step_supported", "norm_relative_error", "many_scan", "local_forward_many", "MANY_BUDGET"]

#: Default relative step: the cube root of float64 machine epsilon, 6.06e-6, the
#: optimal order for central differences (Nocedal & Wright, sec. 8.1).
DEFAULT_EPS = float(np.cbrt(np.finfo(np.float64).eps))

#: The finite-difference methods, see the module docstring.
METHODS = ("central", "forward", "richardson", "complex")

#: Where each method evaluates the function, in multiples of the step ``h`` (the
#: forward method also uses the unperturbed value; complex means ``x + i h``).
OFFSETS = {"central": (1.0, -1.0), "forward": (1.0,), "richardson": (1.0, -1.0, 0.5, -0.5), "complex": (1j,)}

#: Complex-step size (no cancellation, so any tiny value works; 1e-20 is customary).
COMPLEX_STEP = 1e-20

#: Largest number of input elements stacked into one batched forward call.
BATCH_BUDGET = 1 << 17

#: Target number of array elements (inputs, perturbed parameter, output) per
#: ``forward_many`` chunk of :func:`many_scan`; at most :data:`MANY_MAX` forwards.
MANY_BUDGET = 1 << 18
MANY_MAX = 256


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    return method


def kernel(method: str, values: Sequence, points: Sequence, f0=None, x0=0.0):
    r"""The difference quotient: the one place every finite difference of the checker is formed.

    Parameters
    ----------
    method : {"central", "forward", "richardson", "complex"}
    values : sequence of array_like
        The function at each point of :data:`OFFSETS` ``[method]`` (same order);
        arrays broadcast (one quotient per element, or a vector-valued function).
    points : sequence of array_like
        Where it was evaluated: the perturbed values as stored (``x0 + h``,
        ``x0 - h``, ...; ``x0 + 1j*h`` for the complex step).
    f0 : array_like, optional
        The function at ``x0`` (needed by ``forward``; with ``central`` it gives
        the one-sided quotients).
    x0 : array_like, default 0.0
        The unperturbed point (pass 0 with points given as offsets).

    Returns
    -------
    estimate, d_plus, d_minus
        ``(v+ - v-) / (p+ - p-)`` (central), ``(v+ - f0) / (p+ - x0)`` (forward),
        ``(4 C(h/2) - C(h)) / 3`` (Richardson, ``C`` central), ``Im v / Im p``
        (complex); ``d_plus = (v+ - f0) / (p+ - x0)`` and ``d_minus = (f0 - v-) / (x0 - p-)``
        for central with ``f0``, else None.

    References
    ----------
    Nocedal & Wright, *Numerical Optimization*, 2nd ed., sec. 8.1; Squire & Trapp, SIAM Review 40(1), 1998;
    Press et al., *Numerical Recipes*, 3rd ed., sec. 5.7 (stored-difference denominators).
    """
    v, p = values, points
    if method == "complex":
        return np.imag(v[0]) / np.imag(p[0]), None, None
    if method == "forward":
        return (v[0] - f0) / (p[0] - x0), None, None
    c = (v[0] - v[1]) / (p[0] - p[1])
    if method == "richardson":
        return (4 * ((v[2] - v[3]) / (p[2] - p[3])) - c) / 3, None, None
    if method != "central":
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    if f0 is None:
        return c, None, None
    return c, (v[0] - f0) / (p[0] - x0), (f0 - v[1]) / (x0 - p[1])


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
    _check_method(method)
    if method == "complex":
        return COMPLEX_STEP
    u = float(np.finfo(dtype).eps)
    return float({"central": np.cbrt(u), "forward": np.sqrt(u), "richardson": u ** 0.2}[method])


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
    """Estimate ``phi'(0)`` of a scalar function of one variable with step ``h`` (:func:`kernel`).

    Parameters
    ----------
    phi : callable
        ``phi(t) -> float``; for ``method="complex"`` it is called with ``t = 1j*h``
        and must return a complex number.
    h : float
        Step (absolute); the textbook denominators ``2h``/``h`` result (the points are ``t``).
    method : {"central", "forward", "richardson", "complex"}

    Returns
    -------
    float
    """
    _check_method(method)
    points = [o * h for o in OFFSETS[method]]
    f0 = phi(0.0) if method == "forward" else None
    return float(kernel(method, [phi(t) for t in points], points, f0)[0])


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
        points = [dt(o * dt(h)) for o in OFFSETS[method]]
        values = [f(np.array(x + p, dtype=dt)) for p in points]
        f0 = f(np.array(x, dtype=dt)) if method == "forward" else None
        out.append(float(kernel(method, values, points, f0, dt(0))[0]))
    return np.array(out, dtype=np.float64)


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
        ``"batched"`` (stacked along the batch axis), ``"loop"``, ``"many"`` or ``"complex"``.
    """

    grad: np.ndarray
    d_plus: np.ndarray | None
    d_minus: np.ndarray | None
    evaluated: np.ndarray
    how: str = "loop"


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


# --------------------------------------------------------------------------- element plans


def _index_list(shape, indices) -> list[tuple[int, ...]]:
    return list(np.ndindex(shape)) if indices is None else [tuple(int(i) for i in ix) for ix in indices]


def _element_scan(evaluate: Callable[[list], list], base: np.ndarray, method: str, eps: float, indices,
                  how: str, f0: Callable[[], float] | None = None) -> Scan:
    """The element plans: which copies to run (one element moved per job); ``evaluate`` runs them.

    ``evaluate([(index, stored value), ...]) -> [L, ...]``; ``f0()`` gives the
    unperturbed objective (forward method, and the one-sided quotients of central).
    """
    H = step_sizes(base, eps)
    if base.dtype != np.float64 and method != "complex":
        # A float64 step below the array's resolution would be rounded away.
        H = np.maximum(H, np.cbrt(np.finfo(base.dtype).eps) * np.maximum(1.0, np.abs(base)))
    idx_list = _index_list(base.shape, indices)
    grad = np.full(base.shape, np.nan if indices is not None else 0.0)
    sides = method == "central" and f0 is not None
    d_plus = np.full(base.shape, np.nan) if sides else None
    d_minus = np.full(base.shape, np.nan) if sides else None
    evaluated = np.zeros(base.shape, dtype=bool)
    if not idx_list:
        return Scan(grad, d_plus, d_minus, evaluated, how)
    offs = OFFSETS[method]
    x0 = np.array([base[i] for i in idx_list], dtype=np.float64)
    h = np.array([H[i] for i in idx_list])
    if method == "complex":
        points = [x0 + 1j * h]
    else:  # the perturbed values rounded as they will be stored
        points = [np.asarray((x0 + o * h).astype(base.dtype), dtype=np.float64) for o in offs]
    jobs = [(idx, points[j][n]) for n, idx in enumerate(idx_list) for j in range(len(offs))]
    L = np.asarray(evaluate(jobs)).reshape(len(idx_list), len(offs)).T
    L0 = float(f0()) if f0 is not None and method in ("central", "forward") else None
    est, dp, dm = kernel(method, list(L), points, L0, x0)
    flat = [int(np.ravel_multi_index(i, base.shape)) for i in idx_list] if base.ndim else [0]
    np.put(grad, flat, np.real(est))
    np.put(evaluated, flat, True)
    if sides:
        np.put(d_plus, flat, dp)
        np.put(d_minus, flat, dm)
    return Scan(grad, d_plus, d_minus, evaluated, how)


def numerical_gradient(f: Callable[[], float], x: np.ndarray, *, eps: float | None = DEFAULT_EPS,
                       method: str = "central", indices: Sequence[tuple[int, ...]] | None = None,
                       detail: bool = False) -> np.ndarray | Scan:
    """Finite-difference gradient of a scalar function with respect to the array ``x`` (the element loop).

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
        ``dL/dx`` estimated per element (:func:`kernel`).

    Raises
    ------
    TypeError
        If ``x`` is not a writable floating-point ndarray.
    ValueError
        For an unknown method or ``"complex"``.
    """
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or not x.flags.writeable:
        raise TypeError("numerical_gradient needs a writable floating-point ndarray to perturb in place")
    _check_method(method)
    if method == "complex":
        raise ValueError("numerical_gradient perturbs x in place (real); the complex step is done by "
                         "layer_numerical_gradients on a complex copy of the input")
    eps = default_eps(method) if eps is None else eps

    def evaluate(jobs):
        out = []
        for idx, value in jobs:
            orig = x[idx].copy()
            try:
                x[idx] = value
                out.append(float(f()))
            finally:
                x[idx] = orig
        return out

    want_f0 = (detail and method == "central") or method == "forward"
    sc = _element_scan(evaluate, x, method, eps, indices, "loop", f if want_f0 and x.size else None)
    return sc if detail else sc.grad


def _copies_evaluator(forward, inputs, which, G):
    """Evaluate ``sum(forward(*inputs) * G)`` with one element of ``inputs[which]`` set (a complex copy if needed)."""
    def evaluate(jobs):
        out = []
        for idx, value in jobs:
            args = [x.copy() for x in inputs]
            if np.iscomplexobj(value):
                args[which] = args[which].astype(np.complex128)
            args[which][idx] = value
            Y = np.asarray(forward(*args))
            out.append(np.sum(Y * G) if np.iscomplexobj(Y) else scalar_objective(Y, G))
        return out
    return evaluate


def many_scan(forward_many: Callable[[list, list], list], inputs: Sequence[np.ndarray],
              params: Mapping[str, np.ndarray], key: str | int, G: np.ndarray, *, eps: float = DEFAULT_EPS,
              indices: Sequence[tuple[int, ...]] | None = None, budget: int = MANY_BUDGET,
              max_per_call: int = MANY_MAX, method: str = "central") -> Scan:
    """Finite differences of ``L = sum(Y * G)`` w.r.t. one tensor, the forwards sent in chunks.

    The element loop's copies (same steps, same :func:`kernel`), sent through
    ``forward_many`` in chunks, so a layer in another process costs one round
    trip per chunk instead of one per forward.

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
    method : {"central", "forward", "richardson"}, default "central"

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
    size = int(np.size(G)) + (sum(x.size for x in xs) if is_input else 0)
    per_call = max(2, min(max_per_call, budget // max(1, size))) // 2 * 2

    def evaluate(jobs):
        out = []
        for start in range(0, len(jobs), per_call):
            ins, pars, edits = [], [], []
            for j, (idx, value) in enumerate(jobs[start:start + per_call]):
                if is_input:
                    row = list(xs)
                    row[key] = base.copy()
                    row[key][idx] = value
                    ins.append(row)
                    edits.append([])
                else:
                    ins.append(xs if j == 0 else None)
                    edits.append([(key, int(np.ravel_multi_index(idx, base.shape)), float(value))])
                pars.append(full if j == 0 else {})
            out += [scalar_objective(Y, G) for Y in forward_many(ins, pars, edits)]
        return out

    def f0():
        return scalar_objective(forward_many([xs], [full], [[]])[0], G)

    return _element_scan(evaluate, base, method, eps, indices, "many", f0)


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


# --------------------------------------------------------------------------- the stacked-batch plan


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
                       indices: Sequence[tuple[int, ...]] | None = None, method: str = "central") -> Scan:
    """Finite differences of ``L = sum(forward(*inputs) * G)`` w.r.t. ``inputs[which]``, stacked along the batch.

    For a layer whose samples are independent (check with :func:`batch_independent`
    first): the copies with element ``p`` of every sample moved are stacked along
    axis 0 and evaluated in one call per chunk of about ``budget`` input elements;
    sample ``n``'s quotient uses only ``sum(Y[n] * G[n])`` (:func:`kernel`).

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
    method : {"central", "forward", "richardson"}, default "central"

    Returns
    -------
    Scan
        With one-sided quotients for central (``how="batched"``).
    """
    X = inputs[which]
    N, shape = X.shape[0], X.shape
    P = int(np.prod(X.shape[1:], dtype=np.int64))
    Xf = X.reshape(N, P)
    H = step_sizes(Xf, eps)
    offs = OFFSETS[method]
    points = [Xf + o * H for o in offs]
    Gf = np.asarray(G, dtype=np.float64).reshape(N, -1)
    L0 = np.einsum("nk,nk->n", np.asarray(forward(*[x.copy() for x in inputs]), dtype=np.float64)
                   .reshape(N, -1), Gf)[:, None]
    values = [np.full((N, P), np.nan) for _ in offs]
    evaluated = np.zeros((N, P), dtype=bool)
    if indices is None:
        positions, mask = np.arange(P), None
    else:
        flat = np.array([np.ravel_multi_index(ix, X.shape) for ix in indices], dtype=np.int64)
        mask = np.zeros((N, P), dtype=bool)
        mask[flat // P, flat % P] = True
        positions = np.unique(flat % P)
    k = len(offs)  # a chunk of m positions is k*m copies of the batch, k*m*N*P input elements
    per_chunk = max(1, min(len(positions), budget // max(1, k * N * P)))
    for start in range(0, len(positions), per_chunk):
        pos = positions[start:start + per_chunk]
        m = len(pos)
        big = np.broadcast_to(Xf, (k, m, N, P)).copy()
        for s in range(k):
            big[s, np.arange(m), :, pos] = points[s][:, pos].T
        args = [big.reshape((k * m * N,) + X.shape[1:]) if i == which else
                np.broadcast_to(x, (k * m,) + x.shape).reshape((k * m * N,) + x.shape[1:]).copy()
                for i, x in enumerate(inputs)]
        Lb = np.einsum("smnk,nk->smn", np.asarray(forward(*args), dtype=np.float64).reshape(k, m, N, -1), Gf)
        for s in range(k):
            values[s][:, pos] = Lb[s].T
        evaluated[:, pos] = True
    est, dp, dm = kernel(method, values, points, L0, Xf)
    if mask is not None:
        evaluated &= mask
    grad = np.where(evaluated, est, np.nan if mask is not None else 0.0)
    if dp is not None:
        dp, dm = dp.reshape(shape), dm.reshape(shape)
    return Scan(grad.reshape(shape), dp, dm, evaluated.reshape(shape), "batched")


# --------------------------------------------------------------------------- complex step, directions, Jacobian


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
    rng = rng or np.random.default_rng(7)
    X = inputs[which]
    u = rng.standard_normal(X.shape)

    def L(t):
        args = [x.copy() for x in inputs]
        args[which] = X + t * u
        return scalar_objective(forward(*args), G)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            args = [x.copy() for x in inputs]
            args[which] = X + 1j * COMPLEX_STEP * u
            Yc = np.asarray(forward(*args))
    except Exception as exc:  # noqa: BLE001
        return False, f"forward does not accept a complex input ({type(exc).__name__})"
    if Yc.dtype.kind != "c":
        return False, "forward returned a real array for a complex input (it drops the imaginary part)"
    cs = float(kernel("complex", [np.sum(Yc * G)], [1j * COMPLEX_STEP])[0])
    hc = DEFAULT_EPS * max(1.0, float(np.abs(X).max()))
    cd = difference_quotient(L, hc)
    if abs(cs - cd) > 1e-5 * (abs(cs) + abs(cd)) + 1e-9:
        return False, (f"the complex step along a random direction ({cs:.6g}) disagrees with central "
                       f"differences ({cd:.6g}): the forward is not complex-analytic (abs, max, comparisons?)")
    return True, ""


def directional_derivatives(forward: Callable[..., np.ndarray], X: Sequence[np.ndarray],
                            params: Mapping[str, np.ndarray], G: np.ndarray, *, input_names: Sequence[str],
                            groups: Sequence[Sequence[str]], n_dirs: int = 2, eps: float = DEFAULT_EPS,
                            rng: np.random.Generator | None = None, method: str = "central"
                            ) -> dict[tuple[str, ...], list[tuple[dict[str, np.ndarray], float]]]:
    r"""Random directional derivatives of ``L = sum(forward(*inputs) * G)`` by finite differences.

    For each group of tensors (one tensor, or several jointly) and each of
    ``n_dirs`` random directions ``u`` (entries ``z * max(1, |x|)``,
    ``z ~ N(0, 1)``), the central difference ``(L(x + eps u) - L(x - eps u)) / 2 eps``
    (:func:`kernel`) is returned with ``u``; the caller compares it with
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
    method : {"central", "forward", "richardson"}, default "central"
        The quotient along each direction (:func:`kernel`). The complex step is not
        offered here: parameters are perturbed in place in their own real dtype.

    Returns
    -------
    dict
        ``{tuple(group): [(u, numerical), ...]}`` with ``u`` a dict key -> direction array.

    Raises
    ------
    ValueError
        For ``method="complex"`` or an unknown method.
    """
    if _check_method(method) == "complex":
        raise ValueError("directional_derivatives: the complex step needs complex parameters; "
                         "use central, forward or richardson")
    rng = rng or np.random.default_rng(0)
    base = [np.array(x, dtype=np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in X]
    pos = {n: i for i, n in enumerate(input_names)}

    def along(dirs, t):
        args = [b.copy() for b in base]
        saved = {}
        for k, d in dirs.items():
            if k in pos:
                args[pos[k]] = base[pos[k]] + t * d
            else:
                saved[k] = params[k].copy()
                params[k] += (t * d).astype(params[k].dtype)
        try:
            return scalar_objective(forward(*args), G)
        finally:
            for k, v in saved.items():
                np.copyto(params[k], v)

    out: dict[tuple[str, ...], list[tuple[dict[str, np.ndarray], float]]] = {}
    for group in groups:
        pairs = []
        for _ in range(n_dirs):
            dirs = {}
            for k in group:
                ref = base[pos[k]] if k in pos else params[k]
                dirs[k] = rng.standard_normal(ref.shape) * np.maximum(1.0, np.abs(ref))
            pairs.append((dirs, difference_quotient(lambda t, d=dirs: along(d, t), eps, method)))
        out[tuple(group)] = pairs
    return out


def numerical_jacobian(forward: Callable[[np.ndarray], np.ndarray], X: np.ndarray, eps: float | None = None,
                       forward_many: Callable[[list], list] | None = None) -> np.ndarray:
    """Jacobian ``dY/dX`` by central differences (:func:`kernel`), one column per input element.

    Parameters
    ----------
    forward : callable
        ``forward(X) -> Y``.
    X : ndarray of float
    eps : float, optional
        Relative step (default :data:`DEFAULT_EPS`).
    forward_many : callable, optional
        ``forward_many(list of X) -> list of Y``: the perturbed copies sent 256 at a time.

    Returns
    -------
    ndarray of float64, shape ``(Y.size, X.size)``
    """
    X = np.array(X, dtype=np.float64)
    H = step_sizes(X, DEFAULT_EPS if eps is None else eps).ravel()
    points = [X.ravel() + H, X.ravel() - H]
    copies = []
    for i in range(X.size):
        for p in points:
            x = X.copy().ravel()
            x[i] = p[i]
            copies.append(x.reshape(X.shape))
    if forward_many is not None:
        Ys = [y for k in range(0, len(copies), 256) for y in forward_many(copies[k:k + 256])]
    else:
        Ys = [forward(x) for x in copies]
    Ys = np.stack([np.asarray(y, dtype=np.float64).ravel() for y in Ys]).reshape(X.size, 2, -1)
    J, _, _ = kernel("central", [Ys[:, 0], Ys[:, 1]], [points[0][:, None], points[1][:, None]])
    return J.T


# --------------------------------------------------------------------------- a layer's tensors


def layer_numerical_gradients(forward: Callable[..., np.ndarray], X: np.ndarray | Sequence[np.ndarray],
                              params: Mapping[str, np.ndarray], G: np.ndarray, *, eps: float | None = DEFAULT_EPS,
                              input_names: Sequence[str] | None = None, method: str = "central",
                              batched: bool | str = "auto", which: Sequence[str] | None = None,
                              indices: Mapping[str, Sequence[tuple[int, ...]]] | None = None, detail: bool = False,
                              notes: list[str] | None = None, forward_many: Callable[[list, list], list] | None = None
                              ) -> dict[str, np.ndarray] | dict[str, Scan]:
    """Numerical gradients of ``L = sum(forward(*inputs) * G)`` w.r.t. the inputs and every parameter.

    Chooses a plan per tensor: the complex step for an input when ``method`` asks for it and
    :func:`complex_step_supported` allows it; the stacked batch for the inputs of a
    batch-independent layer; chunks through ``forward_many`` when given; else the element
    loop. Parameters never use the stacked batch (they are shared by all samples) nor the
    complex step (central differences instead, with a note).

    Parameters
    ----------
    forward : callable
        ``forward(*inputs) -> Y`` with the current parameters; it gets fresh copies of the inputs.
    X : ndarray or sequence of ndarray
        The input(s); not modified. Float inputs are differentiated (float64 copies), integer ones not.
    params : dict of str -> ndarray
        The layer's own parameter arrays; perturbed in place and restored.
    G : ndarray of float64
        Upstream gradient (shape of ``Y``).
    eps : float or None, default DEFAULT_EPS
        Relative step (None: :func:`default_eps` of ``method``).
    input_names : sequence of str, optional
        Result keys of the inputs; default ``"X"``, or ``"X0", "X1", ...``.
    method : {"central", "forward", "richardson", "complex"}, default "central"
    batched : bool or "auto", default "auto"
        The stacked batch when :func:`batch_independent` holds (True: without the probe).
    which, indices : optional
        Only these keys; only these elements per key (sample mode, the others NaN).
    detail : bool, default False
        Return :class:`Scan` objects (with the one-sided quotients of central differences).
    notes : list of str, optional
        Receives remarks (method fallbacks, loop vs batched).
    forward_many : callable, optional
        The chunked protocol of :func:`many_scan`.

    Returns
    -------
    dict
        ``{input name: dL/dinput, **{key: dL/dparams[key]}}`` (float64 arrays, or Scans).
    """
    _check_method(method)
    inputs = [np.asarray(X)] if isinstance(X, np.ndarray) else [np.asarray(x) for x in X]
    if input_names is None:
        input_names = ["X"] if len(inputs) == 1 else [f"X{i}" for i in range(len(inputs))]
    work = [np.array(x, dtype=np.float64, copy=True) if x.dtype.kind == "f" else x.copy() for x in inputs]
    notes = notes if notes is not None else []
    real = "central" if method == "complex" else method
    eps = default_eps(real) if eps is None else eps
    sel = (lambda key: None) if indices is None else indices.get
    wanted = [i for i, w in enumerate(work) if w.dtype.kind == "f" and (which is None or input_names[i] in which)]

    def objective() -> float:
        return scalar_objective(forward(*[w.copy() for w in work]), G)

    def element(key, arr, position=None):
        if forward_many is not None:
            return many_scan(forward_many, work, params, key if position is None else position, G, eps=eps,
                             indices=sel(key), method=real)
        return numerical_gradient(objective, arr, eps=eps, method=real, indices=sel(key), detail=True)

    stacked = False
    if wanted and method != "complex" and batched:
        stacked, why = (True, "") if batched is True else batch_independent(forward, work)
        if not stacked:
            n = sum(work[i].size if sel(input_names[i]) is None else len(sel(input_names[i])) for i in wanted)
            notes.append(f"numerical gradient of the inputs: {'Richardson' if real == 'richardson' else real} "
                         f"differences, one input entry at a time ({n} entries), not stacked as one batch: {why}")
    out: dict[str, Scan] = {}
    for i in wanted:
        name = input_names[i]
        ok, why = complex_step_supported(forward, work, i, G) if method == "complex" else (False, "")
        if ok:
            out[name] = _element_scan(_copies_evaluator(forward, work, i, G), work[i], "complex", COMPLEX_STEP,
                                      sel(name), "complex")
            continue
        if method == "complex":
            notes.append(f"complex step not used for {name}: {why}; central differences instead")
        out[name] = (batched_input_scan(forward, work, i, G, eps=eps, indices=sel(name), method=real)
                     if stacked else element(name, work[i], i))
    if method == "complex" and params:
        notes.append("parameters are checked by central differences (the complex step would need "
                     "complex parameter arrays inside the layer)")
    for k, p in params.items():
        if which is None or k in which:
            out[k] = element(k, p)
    return out if detail else {k: s.grad for k, s in out.items()}
