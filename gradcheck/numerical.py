r"""Finite differences of ``L = sum(Y * G)``: one difference kernel, several evaluation plans.

``backward(G)`` must return :math:`\partial L/\partial X`, ``grads[k]`` hold :math:`\partial
L/\partial\theta_k`. Element ``i`` moves by :math:`h_i = \varepsilon\max(1, |x_i|)`; the denominator is the
difference of the perturbed values *as stored* (Press et al., *Numerical Recipes*, 3rd ed., 5.7).
Methods (``u`` the dtype's machine epsilon; Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
8.1, eqs. 8.6-8.7: the default steps balance truncation against rounding): central
``(phi(h) - phi(-h)) / 2h``, O(h^2), ``u**(1/3)`` = 6.06e-6 (absolute errors 1e-10 to 6e-10 on
manualprop's layers); forward, O(h), ``u**(1/2)``; richardson ``(4 C(h/2) - C(h)) / 3``, O(h^4),
``u**(1/5)``; complex ``Im phi(ih) / h``, O(h^2) with no subtraction (Squire & Trapp, SIAM
Review 40(1), 1998; Martins, Sturdza & Alonso, ACM TOMS 29(3), 2003), ``1e-20``, for a complex-analytic
forward (:func:`complex_step_supported`), its outputs read by :func:`complex_objective` (a real one refused),
in process or chunked to a sandboxed layer (:func:`many_scan`).

:func:`kernel` (in ``_kernel.py``, standalone: the sandbox child's probes use it too) is the only place a
quotient is formed; the plans choose which perturbed copies
to run: element loop (:func:`numerical_gradient`), stacked batch (:func:`batched_input_scan`),
chunked remote (:func:`many_scan`), directional (:func:`directional_derivatives`), sample (an
element plan on ``indices``), the Jacobian (:func:`numerical_jacobian`). A tensor whose default atol
(the round-off of a large output) swamps its gradients (above :data:`~gradcheck.compare.NOISY` of its
largest |gradient|) is differenced again with a step grown to where truncation and round-off balance
(:func:`grown_step`), and compared with its own atol, which its :class:`~gradcheck.compare.Comparison`
keeps: the one atol the verdict line and the diagnosis read.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._kernel import (
    METHODS,
    OFFSETS,
    _check_method,
    difference_quotient,
    kernel,
    probe_rng,
    richardson_step,
    upstream_draw,
)
from .compare import FINER, norm_relative_error, sides_agree_at, smooth_mask

__all__ = ["DEFAULT_EPS", "METHODS", "OFFSETS", "kernel", "default_eps", "step_sizes", "difference_quotient",
           "step_error_curve", "numerical_gradient", "layer_numerical_gradients", "scalar_objective",
           "Scan", "batch_independent", "noise_level", "batched_input_scan", "directional_derivatives", "numerical_jacobian",
           "complex_step_supported", "complex_objective", "norm_relative_error", "many_scan", "local_forward_many",
           "MANY_BUDGET", "grown_step", "directional_kinks", "probe_rng", "upstream_draw", "local_differences", "Local"]

#: Default relative step: the cube root of float64 machine epsilon, 6.06e-6 (Nocedal & Wright, sec. 8.1).
DEFAULT_EPS = float(np.cbrt(np.finfo(np.float64).eps))
COMPLEX_STEP = 1e-20
#: Input elements per stacked forward call; array elements (at most MANY_MAX forwards) per forward_many chunk.
BATCH_BUDGET = 1 << 17
MANY_BUDGET = 1 << 18
#: Input elements of one stacked forward above which a layer's inputs are not stacked (tester15 M6: the two
#: copies of a 2000x2000 input, 61 MiB each way, ran a 2048 MiB sandbox out of memory).
STACK_MAX = 1 << 21
MANY_MAX = 256


#: Forward calls of one scan from which a progress bar may show (newuser23 M1: a 1000x1000 check printed nothing
#: for over 10 minutes).
PROGRESS_MIN = 32


def _progress(total: int, what: str):
    """A tqdm bar on stderr over ``total`` forward calls differencing ``what``: on a terminal only (the project's
    convention, as ``gradcheck train``), from :data:`PROGRESS_MIN` calls, shown after 2 s; else a silent one."""
    import sys

    from manualprop.training import progress_bar

    tqdm = progress_bar()
    on = total >= PROGRESS_MIN and sys.stderr is not None and sys.stderr.isatty()
    return tqdm(total=total, desc=f"differencing {what}", unit="forward", file=sys.stderr, leave=False,
                delay=2.0, disable=not on)


def default_eps(method: str = "central", dtype=np.float64) -> float:
    """The default relative step of ``method`` in ``dtype`` (the table above). Raises ValueError for an unknown method."""
    _check_method(method)
    if method == "complex":
        return COMPLEX_STEP
    u = float(np.finfo(dtype).eps)
    return float({"central": np.cbrt(u), "forward": np.sqrt(u), "richardson": u ** 0.2}[method])


def step_sizes(x: np.ndarray, eps: float = DEFAULT_EPS) -> np.ndarray:
    """Per-element step ``h = eps * max(1, |x|)``, float64 of ``x``'s shape."""
    return float(eps) * np.maximum(1.0, np.abs(np.asarray(x, dtype=np.float64)))


def step_error_curve(f: Callable[[np.ndarray], np.ndarray], x0: float, hs: Sequence[float], *,
                     dtype=np.float64, method: str = "central") -> np.ndarray:
    """Estimates of ``f'(x0)`` for each step in ``hs`` (method "central" or "forward"), all in ``dtype``.

    Returns float64 of shape ``(len(hs),)``: the V curve, round-off included.

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


def grown_step(estimate: Callable[[float], Any], first: Any, eps: float, atol: float, target: float, *,
               values: Callable[[Any], Any] = np.asarray, grow: float = 10.0,
               max_eps: float = 0.1) -> tuple[Any, float, float]:
    r"""Grow the step of a swamped central difference to where truncation and round-off balance.

    :math:`E(h) \approx |f'''| h^2/6 + u|f|/h` is least at :math:`h^* = (3u|f|/|f'''|)^{1/3}`, growing
    with the output (Nocedal & Wright, sec. 8.1; lesson 01b). The step is multiplied by ``grow`` while
    the change ``d`` of the estimate is within the two round-offs and the bound ``atol/grow + d
    grow^2/(grow^2 - 1)`` falls, until ``atol <= target`` or ``eps * grow > max_eps``. ``first`` is
    ``estimate(eps)``, ``values(result)`` its array. Returns ``(result, eps, atol)``.
    """
    best, best_values = first, np.asarray(values(first), dtype=np.float64)
    while atol > target and eps * grow <= max_eps:
        nxt = estimate(eps * grow)
        nxt_values = np.asarray(values(nxt), dtype=np.float64)
        with np.errstate(invalid="ignore"):
            change = float(np.nanmax(np.abs(nxt_values - best_values), initial=0.0))
        error = atol / grow + change * grow**2 / (grow**2 - 1)
        if not (change <= atol * (1 + 1 / grow) and error < atol):
            break
        best, best_values, eps, atol = nxt, nxt_values, eps * grow, error
    return best, eps, atol


@dataclass
class Scan:
    """Finite differences of one tensor: ``grad`` (NaN where not evaluated), the one-sided quotients
    (central only), ``evaluated``, ``how`` ("batched", "loop", "many" or "complex")."""

    grad: np.ndarray
    d_plus: np.ndarray | None
    d_minus: np.ndarray | None
    evaluated: np.ndarray
    how: str = "loop"


def scalar_objective(Y: np.ndarray, G: np.ndarray) -> float:
    """``L = sum(Y * G)`` in float64 (``np.add.reduce``: ``np.sum`` bit for bit, without its wrapper)."""
    return float(np.add.reduce(np.asarray(Y, dtype=np.float64) * G, axis=None))


def complex_objective(Y: np.ndarray, G: np.ndarray) -> complex:
    """``L = sum(Y * G)`` of a complex-step output ``Y`` (complex128 for an input ``X + ih``), whose imaginary part
    :func:`kernel` reads. TypeError for a real ``Y``: forward dropped the imaginary part, and reading its ``L`` as
    complex would give a derivative of 0, not an error."""
    if not (isinstance(Y, np.ndarray) and Y.dtype.kind == "c"):
        raise TypeError(f"forward returned {getattr(Y, 'dtype', type(Y).__name__)} for a complex input: it drops "
                        "the imaginary part, so the complex step cannot differentiate it")
    return complex(np.add.reduce(Y * G, axis=None))


def _element_scan(evaluate: Callable[[list], list], base: np.ndarray, method: str, eps: float, indices,
                  how: str, f0: Callable[[], float] | None = None) -> Scan:
    """The element plans: ``evaluate([(index, stored value), ...]) -> [L, ...]``; ``f0()`` the objective."""
    H = step_sizes(base, eps)
    if base.dtype != np.float64 and method != "complex":
        H = np.maximum(H, np.cbrt(np.finfo(base.dtype).eps) * np.maximum(1.0, np.abs(base)))
    idx_list = list(np.ndindex(base.shape)) if indices is None else [tuple(int(i) for i in ix) for ix in indices]
    grad = np.full(base.shape, np.nan if indices is not None else 0.0)
    sides = method == "central" and f0 is not None
    d_plus, d_minus = (np.full(base.shape, np.nan), np.full(base.shape, np.nan)) if sides else (None, None)
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


def noise_level(values: np.ndarray) -> np.ndarray:
    """The noise (standard deviation of round-off) of a function from its values at equally spaced points, one column
    per function: Moré & Wild's ECnoise ("Estimating computational noise", SIAM J. Sci. Comput. 33(3), 2011, Algorithm
    3.1 and their ECnoise.m). The ``k``-th differences of a smooth function at a spacing well below its scale vanish,
    those of noise of deviation ``s`` have mean square ``s^2 (2k)! / (k!)^2``; the noise is the first level
    ``sqrt(gamma_k mean(diff^2))`` that agrees within a factor 4 with the next two and whose differences change sign.

    ``values``: ``(m + 1, n)`` float64 (``m >= 4``; 7 points, ``m = 6``, as the authors advise). Returns ``(n,)``: the
    noise, 0 where half the first differences are 0 (values that round alike), NaN where none is detected (the
    spacing is not below the function's scale)."""
    T = np.asarray(values, dtype=np.float64)
    m, n = T.shape[0] - 1, T.shape[1]
    gamma, levels, signs = 1.0, [], []
    zero = np.zeros(n, dtype=bool)
    for j in range(1, m + 1):
        T = np.diff(T, axis=0)
        if j == 1:
            zero = np.sum(T == 0, axis=0) >= (m + 1) / 2
        gamma *= 0.5 * j / (2 * j - 1)
        levels.append(np.sqrt(gamma * np.mean(T ** 2, axis=0)))
        signs.append((T.min(axis=0) < 0) & (T.max(axis=0) > 0))
    out = np.where(zero, 0.0, np.nan)
    for k in range(m - 2):
        lv = np.stack(levels[k:k + 3])
        found = np.isnan(out) & (lv.max(axis=0) <= 4 * lv.min(axis=0)) & signs[k]
        out = np.where(found, levels[k], out)
    return out


def numerical_gradient(f: Callable[[], float], x: np.ndarray, *, eps: float | None = DEFAULT_EPS,
                       method: str = "central", indices: Sequence[tuple[int, ...]] | None = None,
                       detail: bool = False) -> np.ndarray | Scan:
    """Finite-difference gradient of ``f() -> float`` w.r.t. ``x`` (the element loop), float64 of ``x.shape``.

    ``x`` (a writable float ndarray) is perturbed **in place** and restored, also if ``f`` raises.
    ``eps``: relative step (None: :func:`default_eps`); ``indices``: only these elements, the others
    NaN; ``detail``: return the :class:`Scan`. TypeError for a read-only or non-float ``x``,
    ValueError for an unknown method or "complex".
    """
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or not x.flags.writeable:
        raise TypeError("numerical_gradient needs a writable floating-point ndarray to perturb in place")
    if _check_method(method) == "complex":
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


def many_scan(forward_many: Callable[[list, list], list], inputs: Sequence[np.ndarray],
              params: Mapping[str, np.ndarray], key: str | int, G: np.ndarray, *, eps: float = DEFAULT_EPS,
              indices: Sequence[tuple[int, ...]] | None = None, budget: int = MANY_BUDGET,
              max_per_call: int = MANY_MAX, method: str = "central",
              unperturbed: Callable[[], np.ndarray] | None = None) -> Scan:
    """The element loop's copies of one tensor (input position ``key`` or parameter key), sent in chunks.

    ``forward_many(inputs_list, params_list, edits_list) -> list of Y`` (as
    :meth:`gradcheck.sandbox.RemoteLayer.forward_many`): per forward the arrays or None (the previous),
    parameters to set and ``(key, flat_index, value)`` edits for it alone. Chunks of about ``budget``
    elements, at most ``max_per_call`` forwards. ``unperturbed()``: the output at the unperturbed point, when
    the caller has it (:func:`layer_numerical_gradients`: one forward for every tensor), else one more
    ``forward_many`` call computes it. ``method="complex"``: an input's copies are complex128 with one entry
    moved by ``ih``, each output read by :func:`complex_objective`. Returns a :class:`Scan`; TypeError for a
    non-float tensor, ValueError for the complex step of a parameter (set by real edits).
    """
    is_input = isinstance(key, int)
    base = np.asarray(inputs[key] if is_input else params[key])
    if base.dtype.kind != "f":
        raise TypeError("many_scan differentiates floating-point arrays only")
    if method == "complex" and not is_input:
        raise ValueError(f"many_scan: the complex step moves inputs only; parameter {key!r} takes a real method")
    objective, cell = ((complex_objective, base.astype(np.complex128)) if method == "complex" else
                       (scalar_objective, None))
    base = np.array(base, dtype=np.float64 if is_input else base.dtype, copy=True)
    full = {k: np.array(v, copy=True) for k, v in params.items()}
    xs = [np.array(x, copy=True) for x in inputs]
    size = int(np.size(G)) + (sum(x.size for x in xs) if is_input else 0)
    per_call = max(2, min(max_per_call, budget // max(1, size))) // 2 * 2

    def evaluate(jobs):
        out = []
        with _progress(-(-len(jobs) // per_call), f"{'input ' + str(key) if is_input else key}") as bar:
            for start in range(0, len(jobs), per_call):
                out += _many_chunk(jobs[start:start + per_call])
                bar.update()
        return out

    def _many_chunk(chunk):  # one forward_many call: evaluate's chunks hold per_call jobs at most
        ins, pars, edits = [], [], []
        for j, (idx, value) in enumerate(chunk):
            if is_input:
                row = list(xs)
                row[key] = base.copy() if cell is None else cell.copy()
                row[key][idx] = value
                ins.append(row)
                edits.append([])
            else:
                ins.append(xs if j == 0 else None)
                edits.append([(key, int(np.ravel_multi_index(idx, base.shape)), float(value))])
            pars.append(full if j == 0 else {})
        return [objective(Y, G) for Y in forward_many(ins, pars, edits)]

    def f0():
        return scalar_objective(forward_many([xs], [full], [[]])[0] if unperturbed is None else unperturbed(), G)

    return _element_scan(evaluate, base, method, eps, indices, "complex" if method == "complex" else "many", f0)


def local_forward_many(forward: Callable[..., np.ndarray], params: Mapping[str, np.ndarray]
                       ) -> Callable[[list, list, list], list]:
    """The :func:`many_scan` protocol for a local ``forward(*inputs)`` reading ``params`` (set in place, restored)."""
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


def _concat_inputs(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.concatenate([x, y], axis=0) for x, y in zip(a, b)]


def batch_independent(forward: Callable[..., np.ndarray], inputs: Sequence[np.ndarray],
                      rng: np.random.Generator | None = None,
                      unperturbed: Callable[[], np.ndarray] | None = None,
                      eps: float = DEFAULT_EPS) -> tuple[bool, str]:
    """Whether samples along axis 0 are computed independently: ``(ok, reason why not)``; the rows of
    ``X`` in ``forward([X; Z])`` and ``forward([Z; X])`` must equal ``forward(X)`` to 1e-12 relative
    (``unperturbed()``: ``forward(X)`` when the caller has it). ``Z``: rows drawn around 0 at the size of
    ``max |X|``, and as many drawn around ``X``'s own rows with their spread along axis 0: at ``X + 1e6``
    the rows around 0 never win a self-attention's softmax of ``X X^T``, and it looked per-sample (verify44c
    F2: the stacked scan then moved element ``p`` of every row at once and a right attention FAILed). Then
    :func:`_alone_agree`: each sample computed alone, and the others' rows unmoved when one sample moves by the
    scan's step ``eps * max(1, |x|)``."""
    rng = rng or probe_rng(12345)
    if not inputs or any(x.ndim == 0 for x in inputs):
        return False, "an input has no batch axis"
    n = inputs[0].shape[0]
    if any(x.shape[0] != n for x in inputs):
        return False, "the inputs have different sizes along axis 0"
    m = max(1, n // 2 + 1)

    def other(x):  # m rows around 0 at the inputs' size, then m rows among the input's own
        if x.dtype.kind == "f":
            scale = max(1.0, float(np.abs(x).max()))
            around0 = rng.standard_normal((m,) + x.shape[1:]) * scale
            spread = np.std(x, axis=0)
            spread = np.where(spread > 0, spread, 1e-3 * scale)  # a constant column: still moved
            near = x[rng.integers(0, n, size=m)] + rng.standard_normal((m,) + x.shape[1:]) * spread
            return np.concatenate([around0, near], axis=0)
        return x[rng.integers(0, n, size=2 * m)]

    Z = [other(x) for x in inputs]
    try:
        Y = np.asarray(forward(*[x.copy() for x in inputs]) if unperturbed is None else unperturbed(),
                       dtype=np.float64)
        Y1 = np.asarray(forward(*_concat_inputs(inputs, Z)), dtype=np.float64)
        Y2 = np.asarray(forward(*_concat_inputs(Z, inputs)), dtype=np.float64)
    except Exception as exc:  # noqa: BLE001 - any failure means "use the element loop"
        why = exc.__cause__ or exc  # the layer's own exception, not the checker's wrapper: a built-in is no student's
        return False, f"forward on a batch of another size raised {type(why).__name__}"
    if Y.ndim == 0 or Y.shape[0] != n or Y1.shape != (n + 2 * m,) + Y.shape[1:] or Y2.shape != Y1.shape:
        return False, "the output's axis 0 is not the batch axis"
    tol = 1e-12 * max(1.0, float(np.abs(Y).max()))
    if np.abs(Y1[:n] - Y).max() > tol or np.abs(Y2[2 * m:] - Y).max() > tol:
        return False, "samples interact (the output of one sample depends on the others)"
    return _alone_agree(forward, inputs, Y, tol, rng, eps)


#: At most this many samples :func:`batch_independent` computes alone (a batch of one) against their rows of the batch.
ALONE_ROWS = 8


def _alone_agree(forward: Callable[..., np.ndarray], inputs: Sequence[np.ndarray], Y: np.ndarray, tol: float,
                 rng: np.random.Generator, eps: float) -> tuple[bool, str]:
    """:func:`batch_independent`'s further probes, on each of at most :data:`ALONE_ROWS` samples (drawn): computed
    alone, a batch of one, it must give its row of ``Y = forward(inputs)``; moved by ``+h`` and by ``-h`` (every
    element by the scan's step ``h = eps * max(1, |x|)``), the other rows of the batch must stay ``Y``'s, to
    ``tol``. Rows added to the batch never win a saturated self-attention's softmax at ``X + c`` or ``X - c``
    (verify45a F1: 4-22 of 40 draws missed), but without the others each row attends to itself alone; and at
    ``X - 1e6`` the scan's step (6 there) lets one moved row take the others' softmax."""
    n = Y.shape[0]
    rows = range(n) if n <= ALONE_ROWS else np.sort(rng.choice(n, ALONE_ROWS, replace=False))
    floats = [x.dtype.kind == "f" for x in inputs]
    for i in rows:
        others = np.arange(n) != i
        moved = []
        for sign in (1.0, -1.0):
            xs = [x.copy() for x in inputs]
            for x, f in zip(xs, floats):
                if f:
                    x[i] += sign * step_sizes(x[i], eps).astype(x.dtype)
            moved.append(xs)
        try:
            Yi = np.asarray(forward(*[x[i:i + 1].copy() for x in inputs]), dtype=np.float64)
            Ym = [np.asarray(forward(*xs), dtype=np.float64) for xs in moved]
        except Exception as exc:  # noqa: BLE001 - any failure means "use the element loop"
            why = exc.__cause__ or exc
            return False, f"forward on a batch of one sample or a moved sample raised {type(why).__name__}"
        if Yi.shape != (1,) + Y.shape[1:] or any(y.shape != Y.shape for y in Ym):
            return False, "the output's axis 0 is not the batch axis"
        if np.abs(Yi[0] - Y[i]).max() > tol or any(np.abs(y[others] - Y[others]).max(initial=0.0) > tol for y in Ym):
            return False, ("samples interact (the output of one sample depends on the others: computed alone, or "
                           f"with sample {i} moved by the step, the outputs differ)")
    return True, ""


def batched_input_scan(forward: Callable[..., np.ndarray], inputs: Sequence[np.ndarray], which: int,
                       G: np.ndarray, *, eps: float = DEFAULT_EPS, budget: int = BATCH_BUDGET,
                       indices: Sequence[tuple[int, ...]] | None = None, method: str = "central",
                       unperturbed: Callable[[], np.ndarray] | None = None) -> Scan:
    """Finite differences w.r.t. ``inputs[which]`` (float64) of a :func:`batch_independent` layer: the
    copies with element ``p`` of every sample moved, stacked along axis 0, one ``forward`` per chunk of
    about ``budget`` input elements; sample ``n`` uses ``sum(Y[n] * G[n])``. ``unperturbed()``: the
    output at ``inputs`` when the caller has it. Returns a :class:`Scan`."""
    X = inputs[which]
    N, shape = X.shape[0], X.shape
    P = int(np.prod(X.shape[1:], dtype=np.int64))
    Xf = X.reshape(N, P)
    H = step_sizes(Xf, eps)
    offs = OFFSETS[method]
    points = [Xf + o * H for o in offs]
    Gf = np.asarray(G, dtype=np.float64).reshape(N, -1)
    Y0 = forward(*[x.copy() for x in inputs]) if unperturbed is None else unperturbed()
    L0 = np.einsum("nk,nk->n", np.asarray(Y0, dtype=np.float64).reshape(N, -1), Gf)[:, None]
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
    bar = _progress(-(-len(positions) // per_chunk), f"input {which}")
    for start in range(0, len(positions), per_chunk):
        bar.update()
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
    bar.close()
    est, dp, dm = kernel(method, values, points, L0, Xf)
    if mask is not None:
        evaluated &= mask
    grad = np.where(evaluated, est, np.nan if mask is not None else 0.0)
    if dp is not None:
        dp, dm = dp.reshape(shape), dm.reshape(shape)
    return Scan(grad.reshape(shape), dp, dm, evaluated.reshape(shape), "batched")


#: How closely the complex step must agree with central differences along a random direction
#: (:func:`complex_step_supported`) beyond the latter's round-off: a tenth of the default rtol. At 1e-5, a forward
#: tanh(X) + 1e-6 |X| (complex |x| drops the imaginary part, so the complex step misses 1e-6 sign(x)) passed the
#: screen, and a backward missing that term FAILed under central differences but PASSed under the complex step
#: (review23). Refusing costs only the fallback to central differences.
COMPLEX_SCREEN = 1e-7
#: How many random directions :func:`complex_step_supported` tries: along one, the part of the gradient the complex
#: step misses (1e-6 sign(x) of tanh(x) + 1e-6 |x|) can project to almost nothing by chance (newuser29's fixer: one
#: direction of the checker's own stream passed review23's case, and its wrong backward PASSed), along three seldom.
COMPLEX_DIRECTIONS = 3


def complex_step_supported(forward: Callable[..., np.ndarray], inputs: Sequence[np.ndarray], which: int,
                           G: np.ndarray, rng: np.random.Generator | None = None) -> tuple[bool, str]:
    """Whether ``forward`` is complex-analytic in ``inputs[which]``: ``(ok, reason)``; ``Im L(X + ihu)/h``
    must agree with Richardson differences along each of :data:`COMPLEX_DIRECTIONS` random ``u`` to
    :data:`COMPLEX_SCREEN` relative, beyond the difference's round-off ``8 u sum|Y G| / h``."""
    rng = rng or probe_rng(7)
    X = inputs[which]
    for _ in range(COMPLEX_DIRECTIONS):
        ok, why = _complex_step_agrees(forward, inputs, which, G, rng.standard_normal(X.shape))
        if not ok:
            return ok, why
    return True, ""


def _complex_step_agrees(forward, inputs, which, G, u) -> tuple[bool, str]:
    """:func:`complex_step_supported` along one direction ``u`` of ``inputs[which]``: ``(ok, reason)``."""
    X = inputs[which]

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
        said = " ".join(str(exc).split())
        if "for a complex input" in said:  # the sandbox's refusal of a real output (sandbox._complex_value)
            return False, "forward returned a real array for a complex input (it drops the imaginary part)"
        return False, f"forward does not accept a complex input ({type(exc).__name__}: {said[:160]})"
    if Yc.dtype.kind != "c":
        return False, "forward returned a real array for a complex input (it drops the imaginary part)"
    cs = float(kernel("complex", [complex_objective(Yc, G)], [1j * COMPLEX_STEP])[0])
    hc = DEFAULT_EPS * max(1.0, float(np.abs(X).max()))
    cd = difference_quotient(L, hc, "richardson")  # O(h^4): central's h^2 L'''/6 exceeds 1e-7 (tanh(X @ W))
    noise = 8 * np.finfo(np.float64).eps * float(np.sum(np.abs(np.real(Yc) * G))) / hc  # cd's round-off
    # a screen, not a verdict: the rule's relative term plus cd's own round-off (added: either may dominate)
    if abs(cs - cd) > COMPLEX_SCREEN * (abs(cs) + abs(cd)) + noise + 1e-12:
        return False, (f"the complex step along a random direction ({cs:.10g}) disagrees with Richardson "
                       f"differences ({cd:.10g}): the forward is not complex-analytic (abs, max, comparisons?)")
    return True, ""


def directional_derivatives(forward: Callable[..., np.ndarray], X: Sequence[np.ndarray],
                            params: Mapping[str, np.ndarray], G: np.ndarray, *, input_names: Sequence[str],
                            groups: Sequence[Sequence[str]], n_dirs: int = 2, eps: float = DEFAULT_EPS,
                            rng: np.random.Generator | None = None, method: str = "central"
                            ) -> dict[tuple[str, ...], list[tuple[dict[str, np.ndarray], float]]]:
    r"""Random directional derivatives of ``L = sum(forward(*inputs) * G)``, to compare with
    :math:`\sum_t \langle g_t, u_t\rangle`: per group of keys (``[["X"], ["W"]]``), ``n_dirs``
    directions ``u = z max(1, |x|)``, ``z ~ N(0, 1)``. ``X`` is not modified; ``params`` are perturbed
    in place and restored. Returns ``{tuple(group): [({key: u}, numerical), ...]}``; ValueError for "complex".
    """
    if _check_method(method) == "complex":
        raise ValueError("directional_derivatives: the complex step needs complex parameters; "
                         "use central, forward or richardson")
    rng = rng or probe_rng(0)
    base, pos, along = _mover(forward, X, params, G, input_names)

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


def _mover(forward, X, params, G, input_names):
    """``(base inputs, {name: position}, along)``: ``along(dirs, t)`` is ``L`` with every tensor ``k`` of
    ``dirs`` moved by ``t * dirs[k]`` (inputs copied, parameters moved in place and restored); ``along(dirs, t,
    output=True)``: forward's ``Y`` there (a float64 copy)."""
    base = [np.array(x, dtype=np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in X]
    pos = {n: i for i, n in enumerate(input_names)}

    def along(dirs, t, output=False):
        moved = {pos[k]: base[pos[k]] + t * d for k, d in dirs.items() if k in pos}  # new arrays: not copied again
        args = [moved[i] if i in moved else b.copy() for i, b in enumerate(base)]
        saved = {}
        for k, d in dirs.items():
            if k not in pos:
                saved[k] = params[k].copy()
                params[k] += (t * d).astype(params[k].dtype)
        try:
            Y = forward(*args)
            return np.array(Y, dtype=np.float64) if output else scalar_objective(Y, G)
        finally:
            for k, v in saved.items():
                np.copyto(params[k], v)
    return base, pos, along


#: Blocks of entries :func:`directional_kinks` may difference before it gives up (two forwards each).
KINK_BUDGET = 1000


def directional_kinks(forward: Callable[..., np.ndarray], X: Sequence[np.ndarray], params: Mapping[str, np.ndarray],
                      G: np.ndarray, dirs: Mapping[str, np.ndarray], analytic: Mapping[str, np.ndarray], *,
                      input_names: Sequence[str], agree: Callable[[float, float], bool], eps: float = DEFAULT_EPS,
                      budget: int = KINK_BUDGET, finer: bool = False) -> dict[str, list[tuple[int, ...]]] | None:
    """Why a directional derivative along ``dirs`` disagrees with ``<analytic, dirs>``: kinks, or a wrong gradient.

    A step along a whole tensor crosses the kinks of a piecewise forward (ReLU's, at ``x_i = -t u_i`` for
    ``|t| < h``) more often the larger the tensor; the central quotient is then off by about half a slope's
    jump, a wrong verdict (case C28). The entries are bisected (the direction restricted to a block, one
    central quotient per block, :func:`kernel` with ``L`` unmoved for its one-sided quotients): a block that
    agrees (``agree(analytic, numerical)``, or within the round-off ``2 u sum|Y*G| / h`` of a quotient) is
    done; one whose one-sided quotients agree to that round-off (no kink: a piecewise-linear ``L`` is linear
    there) is a wrong gradient there; else it is halved (kinks whose jumps differ in sign can cancel in the
    difference of the one-sided quotients, not in the central one, so only one entry is judged by them),
    down to single entries, at a kink when the analytic value lies between their one-sided quotients
    (:func:`gradcheck.compare.kink_mask`'s rule) and their disagreement does not halve with the step as a
    smooth function's does (:func:`gradcheck.compare.smooth_mask`, two more steps) nor agree at any smaller step
    above their round-off (:func:`gradcheck.compare.sides_agree_at`: the step along ``z max(1, |x|)`` is ``|x|`` times
    an input of size 1's, and ``exp(x - 1e7)`` at ``x = 1e7 + N(0, 1)`` looked like a kink at it, steps46); a smooth
    ``L`` with a wrong gradient is halved until ``budget``. About
    ``4 log2(n)`` forwards per kink. Returns ``{key: [index of each entry at a kink]}``, or None: a block
    disagrees without a kink, or more than ``budget`` blocks were needed. ``params`` are restored.
    ``finer=True``: an entry right at a smaller step is not listed and not wrong (:func:`_finer_verdict`).
    """
    base, pos, along = _mover(forward, X, params, G, input_names)
    keys = [k for k in dirs]
    flat = [np.asarray(dirs[k], dtype=np.float64).ravel() for k in keys]
    ends = np.cumsum([0] + [f.size for f in flat])
    Y0 = np.asarray(forward(*[b.copy() for b in base]), dtype=np.float64)
    L0 = scalar_objective(Y0, G)
    noise = 2 * np.finfo(np.float64).eps * float(np.sum(np.abs(Y0 * G))) / eps  # a quotient's round-off
    del Y0
    found: dict[str, list[tuple[int, ...]]] = {}
    fine: dict[str, list[tuple[int, ...]]] = {}  # entries right at a smaller step (``finer``)
    stack = [(0, int(ends[-1]))]
    while stack:
        lo, hi = stack.pop()
        budget -= 1
        if budget < 0:
            return None
        part, a = {}, 0.0
        for k, f, s, e in zip(keys, flat, ends[:-1], ends[1:]):
            if lo < e and hi > s:
                d = np.zeros(f.size)
                d[max(lo, s) - s:min(hi, e) - s] = f[max(lo, s) - s:min(hi, e) - s]
                part[k] = d.reshape(np.shape(dirs[k]))
                a += float(np.sum(np.asarray(analytic[k], dtype=np.float64) * part[k]))
        c, dp, dm = kernel("central", [along(part, eps), along(part, -eps)], [eps, -eps], L0)
        if agree(a, float(c)) or abs(c - a) <= noise:  # a small block: within the sums' round-off
            continue
        if abs(dp - dm) <= 4 * noise:
            return None  # no kink in this block (one-sided quotients equal), and still off: a wrong gradient
        if hi - lo > 1:
            mid = (lo + hi) // 2
            stack += [(mid, hi), (lo, mid)]
            continue
        slack = 1e-6 * (abs(dp) + abs(dm)) + noise
        if abs(dp - dm) <= 4 * noise or not min(dp, dm) - slack <= a <= max(dp, dm) + slack:
            return None  # one entry, not between its one-sided quotients: wrong there
        smaller = [kernel("central", [along(part, e), along(part, -e)], [e, -e], L0)[1:] for e in (eps / 2, eps / 4)]
        k = next(k for k in part)
        x = float((base[pos[k]] if k in pos else params[k]).ravel()[j := lo - int(ends[keys.index(k)])])
        if smooth_mask(np.array(dp), np.array(dm), smaller):  # its one-sided quotients part as a smooth function's
            v = _right_at(part, along, L0, a, eps, 1.0, x, noise, agree) if finer else None  # (a large step), no kink
        else:  # (fixn22 #1); with ``finer``, right when a smaller step or extrapolation agrees (Huber's switch, large47)
            v = _finer_verdict(part, along, L0, a, eps, x, noise, agree if finer else None)
        if v is None:
            return None  # they agree at a smaller step: no kink there, the element check decides (steps46)
        (found if v == "kink" else fine).setdefault(k, []).append(tuple(map(int, np.unravel_index(j, np.shape(dirs[k])))))
    if not found and not fine:  # every block agrees alone, the whole does not: an error spread thin (a block's
        return None  # share under the tolerance), not a kink
    rest, a = {}, 0.0  # the direction without the entries at kinks (or right at a smaller step) must agree as a whole
    for k in keys:
        d = np.array(dirs[k], dtype=np.float64)
        for idx in [*found.get(k, ()), *fine.get(k, ())]:
            d[idx] = 0.0
        rest[k] = d
        a += float(np.sum(np.asarray(analytic[k], dtype=np.float64) * d))
    c = kernel("central", [along(rest, eps), along(rest, -eps)], [eps, -eps], L0)[0]
    return found if agree(a, float(c)) or abs(c - a) <= noise else None


def _finer_verdict(part, along, L0, a, eps, x, noise, agree) -> str | None:
    """One entry of :func:`directional_kinks` (``part``, at ``x``) whose one-sided quotients disagree at ``eps``:
    ``"kink"`` when they disagree at every smaller step above their round-off
    (:func:`gradcheck.compare.sides_agree_at`, down to the step of an input of size 1); else (no kink there) None, or
    with ``agree`` given (``finer=True``: a caller whose own directional derivative was taken at ``eps``) ``"fine"``
    when the central quotient agrees with ``a`` at the step where they agree or a smaller one (each
    :data:`gradcheck.compare.FINER` times smaller, down to that floor; its round-off ``noise / f``), or its
    extrapolation from that step and half of it (:func:`richardson_step`), None if it never does: wrong there (stepfix46: a right exp
    with a parameter at 1e7 FAILed sample mode's probe)."""
    floor = 1.0 / max(1.0, abs(x))
    f = float(sides_agree_at(lambda f, _: kernel("central", [along(part, f * eps), along(part, -f * eps)],
                                                 [f * eps, -f * eps], L0)[1:], floor, noise, np.ones((), dtype=bool)))
    if not np.isfinite(f):
        return "kink"
    return None if agree is None else _right_at(part, along, L0, a, eps, f, x, noise, agree)


def _right_at(part, along, L0, a, eps, f, x, noise, agree) -> str | None:
    """``"fine"`` when the central quotient along ``part`` at ``f`` times the step ``eps``, or at half of it, or their
    extrapolation (:func:`richardson_step`; no first-order law, which near Huber's switch converges to ``f' + d/2``, not
    ``f'``: switch48) agrees with ``a`` (``agree``, or within their
    round-off), at ``f`` or a step :data:`gradcheck.compare.FINER`, ``FINER^2``, ... times smaller down to the step
    of an input of size 1 (``1 / max(1, |x|)``); None if none does (:func:`_finer_verdict`)."""
    floor = 1.0 / max(1.0, abs(x))
    while f >= floor * (1 - 1e-12):
        c, c2 = (kernel("central", [along(part, g * eps), along(part, -g * eps)], [g * eps, -g * eps], L0)[0]
                 for g in (f, f / 2))
        if any(agree(a, float(v)) or abs(v - a) <= 3 * noise / f
               for v in (c, c2, richardson_step(c, c2))):
            return "fine"
        f /= FINER
    return None


def numerical_jacobian(forward: Callable[[np.ndarray], np.ndarray], X: np.ndarray, eps: float | None = None,
                       forward_many: Callable[[list], list] | None = None) -> np.ndarray:
    """Jacobian ``dY/dX`` by central differences, float64 ``(Y.size, X.size)``; ``eps`` relative (default
    :data:`DEFAULT_EPS`); ``forward_many(list of X) -> list of Y`` runs the copies 256 at a time."""
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


def layer_numerical_gradients(forward: Callable[..., np.ndarray], X: np.ndarray | Sequence[np.ndarray],
                              params: Mapping[str, np.ndarray], G: np.ndarray, *, eps: float | None = DEFAULT_EPS,
                              input_names: Sequence[str] | None = None, method: str = "central",
                              batched: bool | str = "auto", which: Sequence[str] | None = None,
                              indices: Mapping[str, Sequence[tuple[int, ...]]] | None = None, detail: bool = False,
                              notes: list[str] | None = None, forward_many: Callable[[list, list], list] | None = None
                              ) -> dict[str, np.ndarray] | dict[str, Scan]:
    """Numerical gradients of ``L = sum(forward(*inputs) * G)`` w.r.t. the float inputs and every parameter.

    A plan per tensor: the complex step where :func:`complex_step_supported`; the stacked batch for a
    batch-independent layer (``batched``: "auto" probes); :func:`many_scan` with ``forward_many``;
    else the element loop. ``forward`` gets fresh float64 copies of ``X`` (integer inputs are not
    differentiated); ``params`` are perturbed in place and restored; ``eps`` relative (None:
    :func:`default_eps`); ``input_names`` default ``"X"`` or ``"X0", ...``; ``which``/``indices``:
    only these keys / elements (others NaN); ``notes`` gets the fallbacks. Returns ``{key: float64
    gradient}`` (:class:`Scan` objects if ``detail``). The output at the unperturbed point, which the
    stacked batch's probe and objective and every chunked tensor's objective read, is computed once, by
    the first plan that reads it (a sandboxed layer: one round trip, not one per plan and tensor).
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

    once: list[np.ndarray] = []

    def unperturbed() -> np.ndarray:  # forward at the unperturbed point: one call for every plan
        if not once:
            once.append(forward(*[w.copy() for w in work]))
        return once[0]

    def element(key, arr, position=None):
        if forward_many is not None:
            return many_scan(forward_many, work, params, key if position is None else position, G, eps=eps,
                             indices=sel(key), method=real, unperturbed=unperturbed)
        return numerical_gradient(objective, arr, eps=eps, method=real, indices=sel(key), detail=True)

    n = sum(work[i].size if sel(input_names[i]) is None else len(sel(input_names[i])) for i in wanted)
    how = f"{'Richardson' if real == 'richardson' else real} differences, one input entry at a time ({n} entries)"
    stacked, why = bool(wanted) and method != "complex" and bool(batched), ""
    big = [input_names[i] for i in wanted if len(OFFSETS[real]) * work[i].size > STACK_MAX]
    if stacked and big:  # one position's copies alone: k times the input per forward, no fewer calls
        stacked = False
        names = ", ".join(n.lstrip("@") for n in big)
        notes.append(f"numerical gradient of the inputs: {how}, not stacked as one batch: the copies of one "
                     f"entry of {names} would be {len(OFFSETS[real])} times its size in one forward "
                     f"(over {STACK_MAX:,} elements), as many forwards as one entry at a time and more memory")
    if stacked and batched is not True:
        stacked, why = batch_independent(forward, work, unperturbed=unperturbed, eps=eps)
        if not stacked and not any(n.startswith("numerical gradient of the inputs: ") and n.endswith(
                f"not stacked as one batch: {why}") for n in notes):  # tester33 F7: said once, not per scan
            notes.append(f"numerical gradient of the inputs: {how}, not stacked as one batch: {why}")
    out: dict[str, Scan] = {}
    for i in wanted:
        name = input_names[i]
        sc = _complex_input(forward, work, i, G, sel(name), notes, name, (forward_many, params)) \
            if method == "complex" else None
        if sc is None:
            sc = (batched_input_scan(forward, work, i, G, eps=eps, indices=sel(name), method=real,
                                     unperturbed=unperturbed)
                  if stacked else element(name, work[i], i))
        out[name] = sc
    if method == "complex" and params:
        notes.append("parameters are checked by central differences (the complex step would need "
                     "complex parameter arrays inside the layer)")
    for k, p in params.items():
        if which is None or k in which:
            out[k] = element(k, p)
    return out if detail else {k: s.grad for k, s in out.items()}


def _complex_input(forward, work, i, G, indices, notes, name, many=(None, None)) -> Scan | None:
    """The complex-step scan of input ``i``, or None (with a note) when the forward is not complex-analytic; with
    ``many = (forward_many, params)`` (a sandboxed layer) its copies go in chunks (:func:`many_scan`), else one
    forward each."""
    ok, why = complex_step_supported(forward, work, i, G)

    def evaluate(jobs):  # a complex copy of input i with one element moved per job
        out = []
        for idx, value in jobs:
            args = [x.copy() for x in work]
            args[i] = args[i].astype(np.complex128)
            args[i][idx] = value
            out.append(complex_objective(forward(*args), G))
        return out

    if ok and many[0] is not None:
        return many_scan(many[0], work, many[1], i, G, eps=COMPLEX_STEP, indices=indices, method="complex")
    if ok:
        return _element_scan(evaluate, work[i], "complex", COMPLEX_STEP, indices, "complex")
    notes.append(f"complex step not used for {name}: {why}; central differences instead")
    return None


@dataclass
class Local:
    """:func:`local_differences` of some entries of one tensor (float64 arrays of its shape, NaN elsewhere): ``grad``,
    the central difference ``sum((Y(x+h) - Y(x-h)) G) / 2h``; ``d_plus``, ``d_minus`` the one-sided ones from ``Y(x)``;
    ``roundoff`` its round-off, ``u sum |Y_j G_j| / h`` over the output entries ``j`` the entry moves (at ``h``, or by
    half its size ``H``) and ``2 u sum |Y_j G_j| / H`` over the others."""

    grad: np.ndarray
    d_plus: np.ndarray
    d_minus: np.ndarray
    roundoff: np.ndarray


def local_differences(forward: Callable[..., np.ndarray], inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray],
                      key: str, G: np.ndarray, indices: Sequence[tuple[int, ...]], *, input_names: Sequence[str],
                      eps: float = DEFAULT_EPS, forward_many: Callable[[list, list], list] | None = None) -> Local:
    r"""Central differences of ``L = sum(Y * G)`` at ``indices`` of tensor ``key`` formed output entry by output entry,
    ``sum((Y(x+h) - Y(x-h)) * G) / 2h``, with each one's own round-off (check42, verify40 L1).

    The differences of ``L`` itself carry the round-off of every output entry, ``u sum|Y G|``, whichever entry
    moves: beside an output column of 1e6 an entry whose gradient is 1e-6 is differenced to 1.4e-5. Differenced entry
    by entry, as PyTorch's gradcheck forms each column of the Jacobian ``(f(x + h e_i) - f(x - h e_i)) / 2h`` before
    any sum, an output entry that does not move is exactly 0 in ``Y(x+h) - Y(x-h)``; the round-off left is that of the
    entries that move, ``u sum_j |Y_j G_j| / h`` (:func:`gradcheck.compare.default_atol`'s formula over them alone;
    ``u`` float32's when ``Y`` holds float32 values). An entry moves when ``Y_j`` changes at ``x +- h`` or at ``x`` plus
    half its size ``H`` (at least 0.5: an output too large for the step to move, ``1e6 + 1e-6 x``, keeps its
    round-off); one that does not may still depend on ``x`` by up to ``2 u |Y_j| / H`` (less than its last bit over
    ``H``), which is added, ``2 u sum|Y_j G_j| / H`` over them (review36's pool adding 1e20: no output moves even by
    ``H``, and its differences, 0, are not the gradient).
    Three forwards per entry (with ``forward_many``, the sandbox's chunked protocol; else :func:`local_forward_many`),
    one more at ``x``. Returns a :class:`Local`.
    """
    pos = list(input_names).index(key) if key in input_names else None
    xs = [np.array(x, copy=True) for x in inputs]
    full = {k: np.array(v, copy=True) for k, v in params.items()}
    base = np.array(xs[pos] if pos is not None else full[key], copy=True)
    many = forward_many if forward_many is not None else local_forward_many(forward, params)
    idx = [tuple(int(i) for i in ix) for ix in indices]
    x0 = np.array([base[i] for i in idx], dtype=np.float64)
    h = np.array([step_sizes(base[i], eps) for i in idx], dtype=np.float64)
    if base.dtype != np.float64:  # as the element plans step a float32 tensor (_element_scan)
        h = np.maximum(h, np.cbrt(np.finfo(base.dtype).eps) * np.maximum(1.0, np.abs(x0)))
    big = 0.5 * np.maximum(1.0, np.abs(x0))
    pts = [np.asarray((x0 + d).astype(base.dtype), dtype=np.float64) for d in (h, -h, big)]
    ins, pars, edits = [xs], [full], [[]]
    for n, i in enumerate(idx):
        for p in pts:
            if pos is not None:
                row = list(xs)
                row[pos] = base.copy()
                row[pos][i] = p[n]
                ins.append(row)
                edits.append([])
            else:
                ins.append(None)
                edits.append([(key, int(np.ravel_multi_index(i, base.shape)), float(p[n]))])
            pars.append({})
    per = max(3, min(MANY_MAX, MANY_BUDGET // max(1, int(np.size(G)))) // 3 * 3)
    Y0, G = np.asarray(many(ins[:1], pars[:1], edits[:1])[0], dtype=np.float64), np.asarray(G, dtype=np.float64)
    u = float(np.finfo(np.float32 if np.array_equal(Y0.astype(np.float32), Y0) else np.float64).eps)
    YG = np.abs(Y0 * G)
    out = Local(*(np.full(base.shape, np.nan) for _ in range(4)))
    for start in range(1, len(ins), per):  # each chunk's first forward carries the inputs and parameters again
        stop = min(start + per, len(ins))  # (whole triples: read, then let go)
        Ys = many([xs if pos is None else ins[start], *ins[start + 1:stop]], [full, *pars[start + 1:stop]],
                  edits[start:stop])
        for m in range(0, len(Ys), 3):
            n = (start - 1 + m) // 3
            i = idx[n]
            Yp, Ym, Yb = (np.asarray(y, dtype=np.float64) for y in Ys[m:m + 3])
            moved = (Yp != Y0) | (Ym != Y0) | (Yb != Y0)
            quotients = kernel("central", [Yp, Ym], [pts[0][n], pts[1][n]], Y0, x0[n])  # entry by entry, then G
            out.grad[i], out.d_plus[i], out.d_minus[i] = (np.sum(q * G) for q in quotients)
            out.roundoff[i] = (u * float(np.sum(YG[moved])) / min(pts[0][n] - x0[n], x0[n] - pts[1][n])
                               + 2 * u * float(np.sum(YG[~moved])) / (pts[2][n] - x0[n]))
    return out
