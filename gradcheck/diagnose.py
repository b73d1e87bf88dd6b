r"""Find, locate and explain gradient bugs: structural probes, bug signatures, models, single VJPs.

:func:`diagnose_layer` runs, cheapest first:

1. **Determinism.** Two forwards on the same input must agree. A random
   forward (dropout) is made repeatable through the layer's documented switch
   (``fix_mask(True)``, as :class:`manualprop.Dropout`, also inside a
   ``Sequential``), else by rewinding every ``numpy.random.Generator`` /
   ``RandomState`` it holds (and numpy's global state) before each forward;
   if neither works the check stops with "non-deterministic forward" (case
   C29: a fresh mask per call can turn ``df/dw = 16`` into 300013).
2. **Structural checks, no finite differences** (:data:`STRUCTURAL`): the
   forward leaves its input alone; gradient shapes equal the inputs' and
   parameters'; the output and every gradient are float64 (an integer array is
   an error of the code, exit 3; float32 is a "precision lost" finding);
   everything finite (NaN stops the probes: it explains everything after it);
   ``grads`` are overwritten, not accumulated (``+=``: two backwards grow them,
   ``backward(0)`` leaves them unchanged; checked without resetting them, so it
   works for a sandboxed layer too); ``backward`` is linear in ``dY``
   (``backward(0) = 0``, ``backward(2G) = 2 backward(G)``); a second backward
   on the same forward gives the same result; ``grads`` are
   written by every backward; ``backward`` uses the cache of the *last*
   forward of *this* instance; the output keeps shape and dtype under a small
   perturbation.
3. **Numerical comparison** (:func:`gradcheck.check.check_layer`), fast mode by
   default: random directional derivatives decide, a failing tensor is then
   scanned element by element; elements at a kink are excluded and counted.
4. **Bug signatures** on each failing tensor (:data:`SIGNATURES`), named in
   plain words by :func:`name_signature` (the one implementation, also behind the
   grader's :func:`gradcheck.grading.diagnose`): transposed (with the right
   product for the weight layout the forward uses), not summed over the batch,
   flipped kernel, permuted (a reshape where a transpose is due), wrong sign, off
   by a constant factor (x2, x0.5, the batch size: which), the bias averaged
   instead of summed, all zeros. Then the signatures that need the layer, each
   probed with the layer itself: dX equals dY (the local derivative missing);
   the activation applied again to its cached output (the reference gradient at
   input Y); a Linear's dW from its output (dY.T @ Y); a norm's dX without the
   mean/variance paths (projecting dX off the mean and x_hat per group gives the
   correct one); only the first/last sample, or one sample missing (per-sample
   contributions by linearity in dY); a permuted dY (directional derivatives for
   each permuted dY, then the full gradient); else the worst element.
5. **Models.** For a container with a ``layers`` list whose end-to-end check
   fails, every layer is checked on the input it actually receives, in order,
   and the first one that fails is named.

:func:`check_vjp` checks one primitive's VJP alone (a student's, or an entry of
``autoprop.core.registry.PRIMITIVES``) with the dot-product test
:math:`\langle u, J^T v\rangle = \langle J u, v\rangle` and an element scan.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _validation as V
from .check import CheckResult, TensorRecord, check_layer
from .compare import close, compare, kink_mask, relative_error
from .config import CheckConfig, mode_word, training_modes
from .errors import GradcheckError, UsageError
from .numerical import (
    DEFAULT_EPS,
    directional_derivatives,
    kernel,
    layer_numerical_gradients,
    numerical_gradient,
)
from .sources import SAME_IN_BOTH_MODES, Call, training_differs

__all__ = ["Finding", "Probe", "Diagnosis", "diagnose_layer", "check_vjp", "name_signature", "close",
           "STRUCTURAL", "SIGNATURES"]

#: Names of the structural probes, in the order they run.
STRUCTURAL = ("deterministic forward", "input left unchanged", "gradient shapes and dtypes", "finite values",
              "backward linear in dY", "second backward identical", "grads written by backward",
              "cache of the last forward", "output shape stable under perturbation")

#: Codes of the bug signatures :func:`name_signature` recognises.
SIGNATURES = ("transposed", "flipped-kernel", "permuted", "wrong-sign", "bias-mean", "factor-batch",
              "factor-inverse-batch", "factor", "first-sample-only", "last-sample-only", "sample-missing", "zero",
              "not-summed", "wrong-shape", "alternative", "missing-local-derivative", "activation-applied-twice",
              "cached-output", "missing-mean-var-paths", "permuted-upstream", "wrong-values")


@dataclass
class Finding:
    """One thing the diagnosis found.

    Attributes
    ----------
    code : str
        Stable identifier, e.g. ``"bias-mean"``, ``"accumulated"``, ``"non-deterministic"``.
    message : str
        One sentence in plain words.
    tensor : str or None
        ``"dW"``, ``"dX"``, ... when the finding concerns one gradient.
    severity : {"error", "warning", "info"}
        ``error``: a bug; ``warning``: suspicious; ``info``: what the checker did.
    """

    code: str
    message: str
    tensor: str | None = None
    severity: str = "error"

    def sentence(self) -> str:
        """The message as a sentence: stripped, ending with a period."""
        return _sentence_case(self.message)


@dataclass
class Probe:
    """Outcome of one structural check: ``passed`` is None when it was skipped (``detail`` says why)."""

    name: str
    passed: bool | None
    detail: str = ""


@dataclass
class Diagnosis:
    """What :func:`diagnose_layer` found.

    Attributes
    ----------
    name : str
    findings : list of Finding
        Structural findings first, then signatures.
    probes : list of Probe
        The structural checks (:data:`STRUCTURAL`).
    result : CheckResult or None
        The numerical comparison (None when the probes stopped the check).
    error : GradcheckError or None
        What stopped the check (student code raised, wrong shape, ...).
    sublayer : tuple of (int, Diagnosis) or None
        For a model: index and diagnosis of the first layer whose own check fails.
    training : bool or None
        The mode of ``forward`` this diagnosis ran in.
    other_modes : list of Diagnosis
        The other training mode's diagnosis when both were checked (``passed`` needs it too).
    """

    name: str
    findings: list[Finding] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    result: CheckResult | None = None
    error: GradcheckError | None = None
    sublayer: tuple[int, Diagnosis] | None = None
    training: bool | None = None
    other_modes: list[Diagnosis] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """No error finding, no stopping error, every comparison within tolerance, in every mode checked."""
        return (self.error is None and not any(f.severity == "error" for f in self.findings)
                and (self.result is None or self.result.passed) and self.result is not None
                and all(d.passed for d in self.other_modes))

    @property
    def modes(self) -> list[str]:
        """The training modes diagnosed, this one first (``["training", "eval"]``)."""
        return [mode_word(d.training) for d in [self, *self.other_modes] if d.training is not None]

    @property
    def codes(self) -> list[str]:
        """The codes of the error findings, in order (what tests match on)."""
        return [f.code for f in self.findings if f.severity == "error"]

    def sentence(self) -> str:
        """The diagnosis in one or two sentences (PASS/FAIL first)."""
        errs = [f for f in self.findings if f.severity == "error"]
        if self.passed:
            kinks = sum(len(v) for v in self.result.kinks.values()) if self.result else 0
            extra = f" ({kinks} element(s) at a kink excluded)" if kinks else ""
            return f"PASS: {self.name}: every gradient matches{extra}."
        if errs:
            if errs[0].code == "first-failing-layer":
                errs = errs[:1]
            said = list(dict.fromkeys(f.sentence() for f in errs))  # a finding shared by tensors: once
            return f"FAIL: {self.name}: " + " ".join(said[:3])
        if self.error is not None:
            return f"FAIL: {self.name}: {self.error}"
        bad = ", ".join(self.result.failing_tensors) if self.result else "?"
        return f"FAIL: {self.name}: gradient mismatch in {bad} (no known bug pattern; see the worst elements above)."

    def report(self) -> str:
        """Table of the numerical check (if any), the probes that failed, the findings, and the sentence."""
        lines = []
        if self.result is not None:
            lines += [self.result.table(), ""]
        failed = [p for p in self.probes if p.passed is False]
        if failed:
            lines.append("structural checks failed: " + "; ".join(f"{p.name} ({p.detail})" for p in failed))
        infos = [f for f in self.findings if f.severity != "error"]
        for f in infos:
            lines.append(V.wrap(f"note: {f.message}"))
        if self.sublayer is not None:
            i, sub = self.sublayer
            lines += ["", f"first failing layer: layers[{i}] = {sub.name}", sub.report()]
        lines += ["", V.wrap(self.sentence())]
        return "\n".join(lines).strip("\n")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary."""
        return {
            "name": self.name,
            "passed": self.passed,
            "sentence": self.sentence(),
            "findings": [vars(f).copy() for f in self.findings],
            "probes": [vars(p).copy() for p in self.probes],
            "result": None if self.result is None else self.result.to_dict(),
            "error": None if self.error is None else {"type": type(self.error).__name__, "message": str(self.error),
                                                       "exit_code": self.error.exit_code},
            "first_failing_layer": None if self.sublayer is None else
            {"index": self.sublayer[0], **self.sublayer[1].to_dict()},
            "training": self.training,
            "other_modes": [d.to_dict() for d in self.other_modes],
        }


def _sentence_case(s: str) -> str:
    s = s.strip()
    return s if s.endswith(".") else s + "."


# --------------------------------------------------------------------------- determinism


def _find_rngs(obj: Any, depth: int = 3, seen: set | None = None) -> list[Any]:
    """numpy Generators / RandomStates reachable from ``obj``'s attributes (and lists of layers)."""
    seen = seen if seen is not None else set()
    if id(obj) in seen or depth < 0:
        return []
    seen.add(id(obj))
    if isinstance(obj, (np.random.Generator, np.random.RandomState)):
        return [obj]
    out = []
    items: list[Any] = []
    if isinstance(obj, (list, tuple)):
        items = list(obj)
    elif isinstance(obj, dict):
        items = list(obj.values())
    elif hasattr(obj, "__dict__") and not isinstance(obj, (type, np.ndarray)):
        items = list(vars(obj).values())
    for v in items:
        if isinstance(v, (np.ndarray, str, bytes, int, float)):
            continue
        out += _find_rngs(v, depth - 1, seen)
    return out


def _fix_masks(obj: Any, depth: int = 3) -> list[str]:
    """Call ``fix_mask(True)`` on ``obj`` and on layers inside it; return the names of those fixed."""
    out = []
    if callable(getattr(obj, "fix_mask", None)):
        obj.fix_mask(True)
        out.append(type(obj).__name__)
    if depth > 0:
        for child in getattr(obj, "layers", None) or []:
            out += _fix_masks(child, depth - 1)
    return out


def _rng_state(r):
    return r.bit_generator.state if isinstance(r, np.random.Generator) else r.get_state()


def _set_rng_state(r, state):
    if isinstance(r, np.random.Generator):
        r.bit_generator.state = state
    else:
        r.set_state(state)


class _Proxy:
    """The layer as the checker calls it: copies inputs, optionally rewinds random generators."""

    def __init__(self, layer: Any, rewind: bool = False):
        self._layer = layer
        self._rngs = _find_rngs(layer) if rewind else []
        self._states = [_rng_state(r) for r in self._rngs]
        self._global = np.random.get_state() if rewind else None
        fwd = layer.forward

        def forward(*xs, training=False):
            self.rewind()
            return fwd(*[np.array(x, copy=True) for x in xs], training=training)

        try:
            forward.__signature__ = inspect.signature(fwd)
        except (TypeError, ValueError):
            pass
        self.forward = forward
        self.backward = layer.backward
        many = getattr(layer, "forward_many", None)
        if callable(many) and not rewind:  # a sandboxed layer: chunked scans (see gradcheck.numerical.many_scan)
            self.forward_many = many

    def rewind(self) -> None:
        for r, s in zip(self._rngs, self._states):
            _set_rng_state(r, s)
        if self._global is not None:
            np.random.set_state(self._global)

    @property
    def params(self):
        return getattr(self._layer, "params", None)

    @property
    def grads(self):
        return getattr(self._layer, "grads", None)


# --------------------------------------------------------------------------- helpers


def _exact(a: Any, b: Any) -> bool:
    """Bit-for-bit equal (NaN equals NaN): :func:`gradcheck.compare.close` with zero tolerances."""
    return close(a, b, 0.0, 0.0, equal_nan=True)


def _grads_snapshot(layer: Any, keys: Sequence[str]) -> dict[str, Any]:
    g = getattr(layer, "grads", None)
    if not isinstance(g, Mapping):
        return {}
    return {k: np.array(g[k], dtype=np.float64, copy=True) for k in keys
            if k in g and isinstance(g[k], np.ndarray) and g[k].dtype.kind in "fiu"}


def _reset_grads(layer: Any, value: float = 0.0) -> None:
    g = getattr(layer, "grads", None)
    if isinstance(g, Mapping):
        for v in g.values():
            if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.flags.writeable:
                v.fill(value)


def _as_list(ret: Any, n: int) -> list[Any]:
    if n == 1:
        return [ret]
    return list(ret) if isinstance(ret, (tuple, list)) else [ret] * n


# --------------------------------------------------------------------------- signatures

_SWAP = "swap the factors of the product (for a Linear: dW = dY.T @ X if W is (out, in), X.T @ dY if W is (in, out))"


def _batch_counts(n_batch: int, p_size: int, y_size: int) -> list[tuple[int, str]]:
    """The counts a wrong ``1/count`` can come from, with their words: the batch size, batch x positions."""
    out = [(n_batch, f"batch size {n_batch}")]
    if p_size and y_size % p_size == 0 and y_size // p_size > 1 and y_size // p_size != n_batch:
        out.append((y_size // p_size, f"{y_size // p_size} summed positions: batch x positions"))
    return out


def _shape_signature(tensor: str, m: np.ndarray, n: np.ndarray, tol: float, atol: float,
                     hint: str | None = None) -> Finding:
    """Name a gradient whose shape differs from the correct one's (NaN in ``n``: values unknown)."""
    gs, es = V.fmt_shape(m.shape), V.fmt_shape(n.shape)
    if m.ndim == n.ndim == 2 and m.shape == n.shape[::-1] and close(m.T, n, tol, atol):
        return Finding("transposed", f"{tensor} is transposed: it has shape {gs}, the transpose of {es}; "
                       f"{hint or _SWAP}", tensor)
    if m.ndim == n.ndim + 1 and m.shape[1:] == n.shape:
        if close(m.sum(axis=0), n, tol, atol):
            return Finding("not-summed", f"{tensor} was not summed over the batch: it has shape {gs}, one row per "
                           f"example, but the correct gradient has shape {es}; a parameter is shared by all "
                           f"examples, so its gradient is the sum of the rows (e.g. dY.sum(axis=0))", tensor)
        return Finding("not-summed", f"{tensor} has an extra batch axis: shape {gs}, expected {es}; sum over the "
                       "batch axis (axis 0)", tensor)
    if m.size == n.size and np.isfinite(n).all():
        f = _permutation(tensor, m, n, lambda a, b: close(a, b, tol, atol))
        if f is not None:
            return f
    if m.size == n.size:
        return Finding("wrong-shape", f"{tensor} has shape {gs}, expected {es}: same number of elements, a reshape "
                       "or transpose went wrong", tensor)
    return Finding("wrong-shape", f"{tensor} has shape {gs}, expected {es}", tensor)


def _worst_element(tensor: str, manual: np.ndarray, numerical: np.ndarray, rtol: float, atol: float) -> Finding:
    """The fallback finding: how many elements are wrong and the worst one (NaN in ``numerical``: skipped)."""
    m = np.asarray(manual, dtype=np.float64)
    n = np.asarray(numerical, dtype=np.float64)
    ok = np.isfinite(n)
    rel = relative_error(m, np.where(ok, n, 0.0), tiny=max(atol / rtol, 1e-300))
    rel = np.where(ok, np.nan_to_num(rel, nan=np.inf), 0.0)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(rel)), rel.shape)) if rel.size else ()
    bad = int(np.sum(rel > rtol))
    return Finding("wrong-values", f"{tensor} differs from the correct gradient in {bad} of {m.size} elements "
                   f"(no known bug pattern); the largest error is at {tensor}{list(idx)}: got {m[idx]:.6g}, "
                   f"expected {n[idx]:.6g}", tensor)


def name_signature(tensor: str, manual: Any, numerical: Any, *, is_bias: bool = False, n_batch: int = 1,
                   y_size: int = 0, alternatives: Mapping[str, Any] | None = None, tol: float = 1e-5,
                   atol: float = 1e-9, fallback: bool = False, hint: str | None = None) -> Finding | None:
    """Name the bug that turns ``numerical`` (the correct gradient) into ``manual``, if it is a known one.

    The one implementation of the bug signatures: :func:`diagnose_layer` and
    ``gradcheck check`` call it with finite differences as the truth, the grader
    (:func:`gradcheck.grading.diagnose`) with a reference layer's gradient.
    Recognised, in this order: a **shape** that differs (transposed, not summed
    over the batch, an extra batch axis, axes permuted, or just wrong); a
    caller-supplied **alternative**; all **zeros**; the **wrong sign**;
    **transposed** (square 2-D); **flipped kernel**; **permuted** (axes permuted
    and reshaped: a reshape where a transpose is due; or the same values in
    other places); a **constant factor** ``c = <m, n> / <n, n>`` (``1/batch`` on
    a bias: the mean, not the sum; an extra or a missing ``1/batch``; x2, x0.5);
    with ``fallback``, the worst element. The signatures that need the layer
    (dX = dY, the activation applied to its cached output, the cached output,
    a norm's missing mean/variance paths, one sample, a permuted dY) follow in
    :func:`diagnose_layer`.

    Parameters
    ----------
    tensor : str
        Display name, e.g. ``"db"``.
    manual, numerical : array_like
        The gradient under suspicion (any shape) and the correct one; NaN in
        ``numerical`` marks elements without a trustworthy value (a kink), left
        out of every comparison.
    is_bias : bool, default False
        A ``1/batch`` factor is then "the mean over the batch, not the sum".
    n_batch, y_size : int, default 1, 0
        The batch size (input axis 0) and the output's size (for "batch x positions").
    alternatives : mapping of str to array_like, optional
        Known wrong answers keyed by their sentences (``{"dX ignores dY ...": d}``).
    tol, atol : float, default 1e-5, 1e-9
        Relative and absolute tolerance for "matches after the transformation".
    fallback : bool, default False
        Return the worst-element finding (``"wrong-values"``) instead of None.
    hint : str, optional
        How to fix a transposed gradient (the right product for the forward's
        weight layout, from ``_product_hint``); default: swap the factors.

    Returns
    -------
    Finding or None
        None when ``manual`` matches ``numerical``, when ``numerical`` is all NaN,
        or when nothing is recognised and ``fallback`` is False.

    Examples
    --------
    >>> import numpy as np
    >>> n = np.arange(1.0, 7.0).reshape(2, 3)
    >>> name_signature("dW", -n, n).code
    'wrong-sign'
    >>> name_signature("db", n / 8, n, is_bias=True, n_batch=8).message[:45]
    'db is the mean over the batch, not the sum: i'
    >>> name_signature("dW", n, n) is None
    True
    """
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    if m.shape != n.shape:
        return _shape_signature(tensor, m, n, tol, atol, hint)
    ok = np.isfinite(n)
    if not ok.any():
        return None

    def match(a, b):
        return close(np.where(ok, a, 0), np.where(ok, b, 0), tol, atol)

    if match(m, n):
        return None
    for sentence, alt in (alternatives or {}).items():
        alt = np.asarray(alt, dtype=np.float64)
        if alt.shape == m.shape and match(m, alt):
            return Finding("alternative", sentence, tensor)
    f = None if np.all(np.abs(n[ok]) < 1e-12) else _value_signature(tensor, m, n, ok, match, is_bias, n_batch,
                                                                      y_size, hint)
    if f is None and fallback:
        f = _worst_element(tensor, m, n, tol, atol)
    return f


def _value_signature(tensor, m, n, ok, match, is_bias, n_batch, y_size, hint=None) -> Finding | None:
    """The same-shape signatures of :func:`name_signature` (zeros, sign, transposed, flipped, permuted, factors)."""
    if np.all(m == 0):  # all of it, not only where the correct gradient is known (a sample)
        return Finding("zero", f"{tensor} is all zeros: backward never computes it (or overwrites it with zeros)",
                       tensor)
    if match(m, -n):
        return Finding("wrong-sign", f"{tensor} has the wrong sign: the opposite sign of the correct gradient "
                       "everywhere (a minus sign too many or too few)", tensor)
    if m.ndim == 2 and m.shape[0] == m.shape[1] and match(m.T, n):
        return Finding("transposed", f"{tensor} is transposed: its transpose is the correct gradient (the shape "
                       f"{V.fmt_shape(m.shape)} is square, so only the values show it); {hint or _SWAP}", tensor)
    if m.ndim >= 3 and match(m[..., ::-1, ::-1], n):
        return Finding("flipped-kernel", f"{tensor} is the true gradient with the kernel flipped in both spatial "
                       "axes (convolution vs cross-correlation)", tensor)
    if ok.all():
        f = _permutation(tensor, m, n, match)
        if f is not None:
            return f
    c = float(np.sum(m[ok] * n[ok]) / np.sum(n[ok] * n[ok]))
    if not (abs(c - 1) > 1e-3 and abs(c) > 1e-12 and match(m, c * n)):
        return None
    for count, words in _batch_counts(n_batch, m.size, y_size):
        if abs(c * count - 1) < 1e-6:
            if is_bias:
                return Finding("bias-mean", f"{tensor} is the mean over the batch, not the sum: it is {count} times "
                               f"too small ({words}); use dY.sum(...) instead of dY.mean(...)", tensor)
            return Finding("factor-inverse-batch", f"{tensor} is {count} times too small ({words}): an extra "
                           "1/batch (if the loss already averages, its 1/N is inside dY: do not divide again)",
                           tensor)
        if abs(c / count - 1) < 1e-6:
            return Finding("factor-batch", f"{tensor} is {count} times too large ({words}): a 1/batch is missing "
                           "(a sum where a mean is due)", tensor)
    word = {2.0: ", twice the true value (x2)", 0.5: ", half the true value (x0.5)"}
    named = next((w for v, w in word.items() if abs(c - v) < 1e-6), "")
    return Finding("factor", f"{tensor} is {c:.6g} times the correct gradient{named}: a constant factor is wrong "
                   "somewhere", tensor)


def _axis_orders(ndim: int):
    """The non-identity axis permutations of an array (none above 5-D: 719 would be too many)."""
    return [] if ndim > 5 else [p for p in itertools.permutations(range(ndim)) if p != tuple(range(ndim))]


def _permuted_copies(a: np.ndarray, shape: tuple, noun: str = "the correct gradient"):
    """``(words, copy)``: ``a`` with its axes permuted and reshaped to ``shape``, or reshaped then permuted."""
    for p in _axis_orders(a.ndim):
        t = a.transpose(p)
        if t.shape == shape:
            yield f"{noun} transposed with axes {p}", t
        elif t.size == int(np.prod(shape)):
            inv = tuple(int(i) for i in np.argsort(p))
            yield (f"{noun} laid out in the axis order {p} (shape {V.fmt_shape(t.shape)}), then reshaped to "
                   f"{V.fmt_shape(shape)}: a reshape where a transpose is due (.reshape{V.fmt_shape(t.shape)}"
                   f".transpose{inv}, not .reshape{V.fmt_shape(shape)})", t.reshape(shape))
        pre = tuple(shape[i] for i in np.argsort(p))
        if len(pre) == len(shape) and pre != a.shape:
            yield (f"{noun} reshaped to {V.fmt_shape(pre)}, then transposed with axes {p}: a reshape that "
                   "reorders the elements", a.reshape(pre).transpose(p))


def _permutation(tensor, m, n, match) -> Finding | None:
    """``m`` holds ``n``'s values in other places: which axis permutation, if one reproduces it."""
    for words, cand in _permuted_copies(n, m.shape):
        if match(m, cand):
            return Finding("permuted", f"{tensor} has the right values in the wrong places: it is {words}", tensor)
    a, b = np.sort(m.ravel()), np.sort(n.ravel())
    if m.shape == n.shape and np.ptp(b) > 0 and match(a.reshape(m.shape), b.reshape(m.shape)):
        return Finding("permuted", f"{tensor} has the right values in the wrong places (the same numbers, "
                       "permuted, but no transpose of its axes reproduces it): an index mix-up, e.g. rows and "
                       "columns swapped in an unravel_index/divmod, or a reshape where a transpose is due", tensor)
    return None


def _product_hint(key: str, X: np.ndarray, W: np.ndarray, Y: np.ndarray) -> str | None:
    """The right product for a transposed 2-D weight, from the layout the forward uses (None: not a Linear)."""
    if not (X.ndim == W.ndim == Y.ndim == 2 and X.shape[0] == Y.shape[0]):
        return None
    for A, layout, fwd, prod, wrong in ((W, "(in, out)", f"X @ {key}", "X.T @ dY", "dY.T @ X"),
                                        (W.T, "(out, in)", f"X @ {key}.T", "dY.T @ X", "X.T @ dY")):
        if A.shape == (X.shape[1], Y.shape[1]):
            r = Y - X @ A
            if close(r, np.broadcast_to(r[:1], r.shape), 1e-8, 1e-10):  # Y = X @ A + one bias row
                return f"for {key} of shape {layout} with Y = {fwd} + b, d{key} = {prod} (not {wrong})"
    return None


def _output_product(tensor, m, G, Y) -> Finding | None:
    """A Linear's dW computed with the output Y where the input X is due (any weight layout)."""
    if not (m.ndim == Y.ndim == 2 and G.shape == Y.shape):
        return None
    for expr, val in (("dY.T @ Y", G.T @ Y), ("Y.T @ dY", Y.T @ G)):
        if val.shape == m.shape and close(m, val, 1e-6, 1e-9):
            return Finding("cached-output", f"{tensor} equals {expr}: backward uses the layer's output Y where "
                           "its input X is due; cache the input in forward (self.X = X) and use it here", tensor)
    return None


def _norm_projection(tensor, m, n, X, tol=1e-3) -> Finding | None:
    """A normalisation's dX without the paths through the mean and variance (BatchNorm, LayerNorm)."""
    axes_list = [(0,)] if X.ndim == 2 else [(0, 2, 3)] if X.ndim == 4 else []
    for axes in axes_list + [(X.ndim - 1,)]:
        xc = X - X.mean(axis=axes, keepdims=True)
        sd = np.sqrt(np.mean(xc**2, axis=axes, keepdims=True))
        if np.any(sd == 0):
            continue
        xh = xc / sd

        def proj(v, xh=xh, axes=axes):  # remove the mean and the x_hat component, per normalised group
            v = v - v.mean(axis=axes, keepdims=True)
            return v - xh * np.mean(v * xh, axis=axes, keepdims=True)

        if not close(proj(m), n, tol, 1e-9):
            continue
        scale = np.abs(m).max()
        has_mean = np.abs(m.mean(axis=axes)).max() <= tol * scale  # the mean path makes dX centred
        has_var = np.abs(np.mean(m * xh, axis=axes)).max() <= tol * scale  # the variance path: dX orthogonal to xhat
        which = "variance" if has_mean else "mean" if has_var else "mean and variance"
        ax = f"axis={axes[0] if X.ndim == 2 or axes[0] == 0 else -1}" if len(axes) == 1 else f"axis={axes}"
        what = "batch" if 0 in axes else "per-sample"
        return Finding("missing-mean-var-paths", f"{tensor} lacks the gradient through the {what} {which} "
                       f"(statistics over {ax} treated as constants); with dxhat = dY * gamma: dX = (dxhat - "
                       f"dxhat.mean({ax}) - xhat * (dxhat * xhat).mean({ax})) / sqrt(var + eps), both means "
                       "with keepdims=True", tensor)
    return None


_LOCAL = ("{t} equals dY: the local derivative of the activation is missing; multiply dY by f'(X) "
          "(ReLU: dY * (X > 0); sigmoid: dY * out * (1 - out); dropout: dY * mask)")


def _context_signature(t, m, n, key, inputs, Y, G, numer_at) -> Finding | None:
    """Signatures that need the layer: dX = dY, a normalisation's missing paths, the output used as input."""
    X = inputs[0]
    ok = np.isfinite(n)
    is_input = key.startswith("@")
    if is_input and m.shape == G.shape and close(m, G, 1e-6, 1e-9) and not close(np.where(ok, n, G), G, 1e-6, 1e-9):
        return Finding("missing-local-derivative", _LOCAL.format(t=t), t)
    if is_input and len(inputs) == 1 and m.shape == X.shape and ok.all() and X.ndim >= 2:
        f = _norm_projection(t, m, n, X)
        if f is not None:
            return f
    if not is_input and (f := _output_product(t, m, G, Y)) is not None:
        return f
    if len(inputs) == 1 and X.dtype.kind == "f" and Y.shape == X.shape and close(m, numer_at([Y], G), 1e-5, 1e-9):
        if is_input:
            return Finding("activation-applied-twice", f"{t} is the local derivative evaluated at the output Y "
                           "instead of the input X: backward applies the activation again to its cached output "
                           "(e.g. sigmoid(self.out), where self.out already is sigmoid(X)); use the cached output "
                           "as it is (sigmoid: dY * out * (1 - out); tanh: dY * (1 - out**2))", t)
        return Finding("cached-output", f"{t} is the gradient the layer would have at its output Y: backward uses "
                       "the output where its input X is due; cache the input in forward (self.X = X)", t)
    return None


def _sample_signature(tensor, manual, G, numer_for, n_batch, is_input, tol=1e-5) -> Finding | None:
    """Only the first / last sample's gradient, or one sample missing? ``numer_for(G')``: numerical for ``G'``."""
    m = np.asarray(manual, dtype=np.float64)
    if n_batch < 2:
        return None
    full = numer_for(G)
    if is_input:
        zero = [k for k in range(n_batch) if np.all(m[k] == 0) and np.any(full[k] != 0)]
        if not zero or not close(np.delete(m, zero, axis=0), np.delete(full, zero, axis=0), tol, 1e-9):
            return None
        for which, idx in (("first", 0), ("last", n_batch - 1)):
            if len(zero) == n_batch - 1 and idx not in zero:
                return Finding(f"{which}-sample-only", f"{tensor} holds only the {which} sample's gradient "
                               f"(the other rows are zero): loop over the whole batch", tensor)
        if len(zero) == 1:
            return Finding("sample-missing", f"{tensor} is right except for {tensor}[{zero[0]}] (sample {zero[0]} "
                           f"of 0..{n_batch - 1}), which is zero: the loop misses one sample (range(N - 1) instead "
                           "of range(N)?)", tensor)
        return None
    ones = {}
    for which, idx in (("first", 0), ("last", n_batch - 1)):
        Gs = np.zeros_like(G)
        Gs[idx] = G[idx]
        ones[which] = one = numer_for(Gs)
        if close(m, one, tol, 1e-9):
            return Finding(f"{which}-sample-only", f"{tensor} is the gradient of the {which} sample only: "
                           f"sum the contributions of all {n_batch} samples"
                           + (" (a loop that overwrites instead of adding?)" if which == "last" else ""), tensor)
    for (which, one), idx in zip(ones.items(), (0, n_batch - 1)):  # by linearity in dY: the sum less one sample
        if close(m, full - one, tol, 1e-9):
            return Finding("sample-missing", f"{tensor} lacks the contribution of the {which} sample (sample "
                           f"{idx} of 0..{n_batch - 1}): the loop misses one sample "
                           f"({'range(N - 1)' if which == 'last' else 'range(1, N)'} instead of range(N)?)", tensor)
    return None


def _upstream_signature(t, m, G, key, numer_for, directional) -> Finding | None:
    """Backward used dY in the wrong layout (e.g. a reshape without its transpose(1, 0, 2, 3)).

    Backward is linear in dY, so the student's gradient is ``J^T G'`` for the dY
    ``G'`` it really used. Every permuted ``G'`` is screened with two directional
    derivatives (``<m, u> = d/du sum(f * G')``, two forwards per direction), and a
    survivor is confirmed with the full numerical gradient.
    """
    for words, Gp in _permuted_copies(G, G.shape, "dY"):
        pairs = directional(Gp)
        if all(abs(float(np.sum(u[key] * m)) - d) <= 1e-6 * (abs(d) + np.sqrt(np.sum((u[key] * m) ** 2))) + 1e-9
               for u, d in pairs) and close(m, numer_for(Gp), 1e-5, 1e-9):
            return Finding("permuted-upstream", f"{t} is the gradient for a permuted upstream gradient: backward "
                           f"used {words} in place of dY (e.g. dY.reshape(F, -1) where "
                           "dY.transpose(1, 0, 2, 3).reshape(F, -1) is due)", t)
    return None


# --------------------------------------------------------------------------- diagnose_layer


def diagnose_layer(layer: Any, X: Any, *, mode: str = "fast", method: str = "central", seed: int = 0,
                   rtol: float = 1e-6, atol: float | None = None, eps: float | None = None,
                   training: bool | str = "auto", twin: Any = None, reference: Any = None, name: str | None = None,
                   localize: bool = True, n_dirs: int = 2, n_samples: int = 8, upstream: Any = None) -> Diagnosis:
    """Check a layer and explain what is wrong: probes, numerical check, bug signatures, first bad layer.

    Parameters
    ----------
    layer : object
        manualprop layer protocol (see :func:`gradcheck.check.check_layer`); a
        container with a ``layers`` list (``Sequential``) is localised on failure.
    X : ndarray, shape tuple, or list of those
        As in :func:`gradcheck.check.check_layer`.
    mode : {"fast", "full", "sample"}, default "fast"
        Numerical mode; a failing tensor is always scanned element by element.
    method : str, default "central"
        Finite-difference method (:data:`gradcheck.numerical.METHODS`).
    seed : int
        Seeds ``X`` (when given as a shape), the upstream gradient and the probes.
    rtol : float
    atol : float, optional
        Tolerances (as in ``check_layer``; default atol: :func:`gradcheck.check.default_atol`,
        1e-9 in the structural probes).
    eps : float, optional
        Relative step (default per method and dtype).
    training : bool, "both" or "auto", default "auto"
        The mode of ``forward``, as in :func:`gradcheck.check.check_layer`: with two
        modes each is diagnosed (probes, check, signatures); the result is the first
        failing mode's, named ``"<name> [training]"``, the other in ``other_modes``.
    twin : object or None
        An autoprop twin for a tape column (None: none; "auto" is not used here
        because the checker calls the layer through a proxy).
    reference : object, optional
        A layer of ours with the same parameter keys (``manual-vs-reference`` pair).
    name : str, optional
    localize : bool, default True
        For a container that fails, find the first failing layer.
    n_dirs, n_samples, upstream
        As in ``check_layer``.

    Returns
    -------
    Diagnosis

    Raises
    ------
    UsageError
        Bad arguments (shapes, tolerances, mode). Errors of the checked code are
        not raised: they are in ``Diagnosis.error`` and the findings.
    """
    CheckConfig(rtol=rtol, atol=atol, eps=eps, method=method, mode=mode, seed=seed, training=training,
                n_dirs=n_dirs, n_samples=n_samples)  # validates every setting once
    owner = name or type(layer).__name__
    V.require_methods(layer, owner, ("forward", "backward"), "manualprop layer")
    diags, notes = [], []
    for t in training_modes(layer, training):
        if t and diags:
            inputs = V.layer_inputs(X, np.random.default_rng([seed, 3]), owner)
            if not training_differs(Call(layer, owner, inputs, V.input_names(layer, len(inputs)), {}, t)):
                notes.append(SAME_IN_BOTH_MODES)
                break
        diags.append(_diagnose_mode(layer, X, mode=mode, method=method, seed=seed, rtol=rtol, atol=atol, eps=eps,
                                    training=t, twin=twin, reference=reference, localize=localize, n_dirs=n_dirs,
                                    n_samples=n_samples, upstream=upstream, name=owner))
    for d in diags if len(diags) > 1 else ():
        d.name = f"{owner} [{mode_word(d.training)}]"
        if d.result is not None:
            d.result.name = d.name
    first = next((d for d in diags if not d.passed), diags[0])
    first.other_modes = [d for d in diags if d is not first]
    if first.result is not None:
        first.result.other_modes = [d.result for d in first.other_modes if d.result is not None]
    if first.result is not None:
        first.result.notes += notes
    return first


def _diagnose_mode(layer, X, *, mode, method, seed, rtol, atol, eps, training, twin, reference, name, localize,
                   n_dirs, n_samples, upstream) -> Diagnosis:
    """:func:`diagnose_layer` in one training mode."""
    owner = name or type(layer).__name__
    rtol, atol_probe = V.check_tolerances(rtol, 1e-9 if atol is None else atol)
    V.require_methods(layer, owner, ("forward", "backward"), "manualprop layer")
    # inputs from their own stream: check_layer draws G from default_rng(seed), and G == X
    # would make X.T @ G symmetric and hide a transposed gradient
    inputs = V.layer_inputs(X, np.random.default_rng([seed, 3]), owner)
    one = V.warn_batch_of_one(inputs, V.input_names(layer, len(inputs)), owner)  # check_layer's own: ignored below
    diag = Diagnosis(owner, training=training)
    try:
        pristine = copy.deepcopy(layer)
    except Exception:  # noqa: BLE001 - a layer that cannot be copied skips the cache probe
        pristine = None
    try:
        proxy = _probes(layer, inputs, owner, training, rtol, atol_probe, seed, diag, pristine)
    except GradcheckError as exc:
        diag.error = exc
        if not diag.findings or diag.findings[-1].severity != "error":
            diag.findings.append(Finding("student-code", str(exc)))
        proxy = None
    stop = {"non-deterministic", "not-summed", "wrong-shape", "non-finite"}
    # float32 output: finite differences cannot reach 1e-6; a float32 gradient alone still gets the check
    stopped = set(diag.codes) & stop or any(f.code == "float32" and f.tensor == "Y" for f in diag.findings)
    if proxy is not None and not stopped:
        try:
            with warnings.catch_warnings():
                if one:
                    warnings.filterwarnings("ignore", message=re.escape(f"batch of one: {owner} "))
                res = check_layer(proxy, inputs, twin=twin, seed=seed, rtol=rtol, atol=atol, training=training,
                                  eps=eps, name=owner, mode=mode, method=method, n_dirs=n_dirs,
                                  n_samples=n_samples, reference=reference, upstream=upstream)
            diag.result = res
            _signatures(proxy, inputs, res, diag, training, upstream)
        except GradcheckError as exc:
            diag.error = exc
            diag.findings.append(Finding("student-code", str(exc)))
    if localize and not diag.passed and upstream is None and isinstance(getattr(layer, "layers", None),
                                                                        (list, tuple)):
        _localize(layer, inputs, diag, training=training, mode=mode, method=method, seed=seed, rtol=rtol,
                  atol=atol, eps=eps)
    return diag


def _call(fn, *args, owner, call, **kw):
    return V.call_student(fn, *args, owner=owner, call=call, **kw)


@dataclass
class _ProbeContext:
    """What every structural probe needs: the layer, its inputs, how to call it."""

    layer: Any
    inputs: list
    owner: str
    training: bool
    atol: float
    rng: np.random.Generator
    diag: Diagnosis

    def __post_init__(self):
        self.names = V.input_names(self.layer, len(self.inputs))
        self.params = V.layer_params(self.layer, self.owner)
        self.fcall = f"forward({', '.join(self.names)}, training={self.training})"

    def fwd(self, obj, xs):
        return _call(obj.forward, *[x.copy() for x in xs], training=self.training, owner=self.owner, call=self.fcall)


def _probes(layer, inputs, owner, training, rtol, atol, seed, diag: Diagnosis, pristine=None):
    """Run the structural probes; return the proxy the numerical check should call."""
    ctx = _ProbeContext(layer, inputs, owner, training, atol, np.random.default_rng([seed, 2]), diag)
    proxy, stop = _determinism_probe(ctx)
    if stop:
        return proxy
    G, stop = _backward_probes(ctx, proxy)
    if stop:
        return proxy
    _repeat_probes(ctx, proxy, G)
    layer, inputs, names, keys, rng, probes, fwd = ctx.layer, ctx.inputs, ctx.names, list(ctx.params), ctx.rng, \
        diag.probes, ctx.fwd
    # 6. cache of the last forward of this instance
    _cache_probe(layer, pristine, inputs, names, keys, G, training, rng, diag)

    # 7. output stable under perturbation
    xs = [x + 1e-3 * rng.standard_normal(x.shape) if x.dtype.kind == "f" else x for x in inputs]
    Yp = np.asarray(fwd(proxy, xs))
    Yr = np.asarray(fwd(proxy, inputs))
    ok = Yp.shape == Yr.shape and Yp.dtype == Yr.dtype
    probes.append(Probe(STRUCTURAL[8], ok, "" if ok else f"{Yr.shape} {Yr.dtype} became {Yp.shape} {Yp.dtype}"))
    if not ok:
        diag.findings.append(Finding("unstable-output", f"the output changes shape or dtype under a small "
                                     f"perturbation of the input ({Yr.shape} {Yr.dtype} -> {Yp.shape} {Yp.dtype})"))
    return proxy


def _determinism_probe(ctx: _ProbeContext):
    """Probe 1 (and the float32 stop): (proxy, stop)."""
    layer, inputs, owner, diag, fcall, fwd = ctx.layer, ctx.inputs, ctx.owner, ctx.diag, ctx.fcall, ctx.fwd
    probes = diag.probes
    # 1. determinism (three calls: a random mask repeats by chance with probability 2**-size per pair)
    Y1 = fwd(layer, inputs)
    # None, an integer array, NaN: the canonical one-paragraph error (exit 3)
    V.check_output(Y1, owner=owner, tensor="Y", produced_by=fcall, expected_shape=None)
    y_dtype = np.asarray(Y1).dtype
    Y1 = np.asarray(Y1, dtype=np.float64)
    Y2 = np.asarray(fwd(layer, inputs), dtype=np.float64)
    Y3 = np.asarray(fwd(layer, inputs), dtype=np.float64)
    if _exact(Y1, Y2) and not _exact(Y1, Y3):
        Y2 = Y3
    proxy = _Proxy(layer)
    if _exact(Y1, Y2):
        probes.append(Probe(STRUCTURAL[0], True))
    else:
        diff = float(np.nanmax(np.abs(Y1 - Y2))) if Y1.shape == Y2.shape else float("nan")
        fixed = _fix_masks(layer)
        ok = False
        if fixed:
            fwd(layer, inputs)
            ok = _exact(fwd(layer, inputs), fwd(layer, inputs))
            if ok:
                diag.findings.append(Finding("held-mask", f"the forward is random (two calls differed by "
                                             f"{diff:.3g}); the mask was held fixed with fix_mask(True) on "
                                             f"{', '.join(fixed)} for the check", severity="info"))
        if not ok:
            proxy = _Proxy(layer, rewind=True)
            ok = _exact(fwd(proxy, inputs), fwd(proxy, inputs))
            if ok:
                what = ", ".join(sorted({type(r).__name__ for r in proxy._rngs})) or "numpy's global generator"
                diag.findings.append(Finding("rewound-rng", f"the forward is random (two calls differed by "
                                             f"{diff:.3g}); its random generator ({what}) was rewound before "
                                             f"every forward, so each call drew the same mask", severity="info"))
        probes.append(Probe(STRUCTURAL[0], ok, "" if ok else f"two calls differ by up to {diff:.3g}"))
        if not ok:
            diag.findings.append(Finding(
                "non-deterministic", f"the forward is non-deterministic: two calls with the same input differ by "
                f"up to {diff:.3g}, so finite differences are meaningless (a dropout mask drawn afresh per "
                f"call?); give the layer a way to hold the mask fixed, like manualprop.Dropout.fix_mask(True), "
                f"or draw from a generator it stores (self.rng)"))
            return proxy, True

    # float32 output for float64 inputs: precision is lost, finite differences cannot reach 1e-6 (stop here)
    if _low_precision(y_dtype, inputs):
        probes.append(Probe(STRUCTURAL[2], False, f"Y is {y_dtype}, expected float64"))
        diag.findings.append(Finding("float32", f"forward returns {y_dtype} for a float64 input "
                                     f"({_PRECISION_LOST.format(dtype=y_dtype)})", "Y"))
        return proxy, True

    return proxy, False


def _backward_probes(ctx: _ProbeContext, proxy):
    """Probes 2-4: input unchanged, shapes and dtypes, finite values, grads written: (G, stop)."""
    layer, inputs, owner, training, rng, diag = ctx.layer, ctx.inputs, ctx.owner, ctx.training, ctx.rng, ctx.diag
    probes, names, params, fcall, fwd = diag.probes, ctx.names, ctx.params, ctx.fcall, ctx.fwd
    # 2. input left unchanged
    xs = [x.copy() for x in inputs]
    proxy.rewind()
    _call(layer.forward, *xs, training=training, owner=owner, call=fcall)
    changed = [n for n, a, b in zip(names, xs, inputs) if not np.array_equal(a, b)]
    probes.append(Probe(STRUCTURAL[1], not changed, f"{', '.join(changed)} changed" if changed else ""))
    if changed:
        diag.findings.append(Finding("input-modified", f"forward modifies its input {', '.join(changed)} in place "
                                     "(the caller's array changes); compute into a new array instead", "d" + changed[0]))

    # 3. shapes, dtypes, finiteness, never written
    Y = np.asarray(fwd(proxy, inputs))
    G = rng.standard_normal(Y.shape)
    g_before = getattr(layer, "grads", None)
    sentinel = 7.25
    _reset_grads(layer, sentinel)
    pre_ids = {k: id(v) for k, v in (g_before or {}).items()} if isinstance(g_before, Mapping) else {}
    ret = _call(proxy.backward, G.copy(), owner=owner, call="backward(dY)")
    rets = _as_list(ret, len(inputs))
    grads = getattr(layer, "grads", None)
    bcall = f"backward(dY) with dY of shape {V.fmt_shape(G.shape)}"
    if params and not isinstance(grads, Mapping):  # a list, None, ...: the protocol error (exit 3)
        got = getattr(grads, "type_name", None) or type(grads).__name__
        probes.append(Probe(STRUCTURAL[2], False, f"grads is {V.article(got)}, not a dict"))
        raise V.grads_not_dict(owner, grads, params)
    bad_shape, low, nonfinite, never = [], [], [], []
    dims = {}
    found = [("d" + n, r, x.shape, n, bcall) for n, r, x in zip(names, rets, inputs) if x.dtype.kind == "f"]
    found += [("d" + k, grads.get(k), p.shape, k, f"grads[{k!r}] after backward(dY)") for k, p in params.items()]
    for t, r, shape, key, produced_by in found:
        arr = None if r is None else np.asarray(r)
        if arr is not None and arr.dtype.kind in "biu":  # an integer gradient: exit 3, nothing else to say
            probes.append(Probe(STRUCTURAL[2], False, f"{t} is {arr.dtype}, expected float64"))
            raise V.dtype_error(owner, produced_by, t, arr.dtype)
        if key in names:
            dims[t] = (arr, inputs[names.index(key)])
        if arr is None or arr.shape != shape:
            bad_shape.append((t, None if arr is None else arr.shape, shape, key))
            continue
        if _low_precision(arr.dtype, inputs):
            low.append((t, arr.dtype))
        if not np.all(np.isfinite(arr.astype(np.float64))):
            nonfinite.append(t)
        elif key in params and id(r) == pre_ids.get(key) and np.all(arr == sentinel):
            never.append(t)
    probes.append(Probe(STRUCTURAL[2], not bad_shape and not low,
                        "; ".join([f"{t} has shape {s}, expected {e}" for t, s, e, _ in bad_shape]
                                  + [f"{t} is {d}, expected float64" for t, d in low])))
    probes.append(Probe(STRUCTURAL[3], not nonfinite, ", ".join(nonfinite)))
    if nonfinite:
        verb = "contains" if len(nonfinite) == 1 else "contain"
        diag.findings.append(Finding("non-finite", f"{', '.join(nonfinite)} {verb} NaN or infinity "
                                     "(division by zero, log of 0 or exp overflow?)", nonfinite[0]))
    for t, d in low:
        diag.findings.append(Finding("float32", f"backward returns {t} as {d} for a float64 input "
                                     f"({_PRECISION_LOST.format(dtype=d)})", t))
    if bad_shape or nonfinite:
        # the canonical one-paragraph error (what check_layer would raise), for exit code 3
        call = f"backward(dY) with dY of shape {V.fmt_shape(G.shape)}"
        try:
            V.check_input_grads(ret, owner=owner, produced_by=call, names=names, inputs=inputs,
                                keys=["@" + n for n in names])
            V.check_grads(layer, owner, params)
        except GradcheckError as exc:
            diag.error = exc
    if bad_shape:
        _shape_signatures(proxy, inputs, names, params, G, rets, grads, bad_shape, diag, training)
        return G, True
    if nonfinite:  # NaN explains everything after it (linearity, a second backward): report it alone
        return G, True
    if never:
        diag.findings.append(Finding("never-written", f"{', '.join(never)} never written: backward leaves "
                                     f"grads[...] as it was (assign grads[key] = ... in backward)", never[0]))
    probes.append(Probe(STRUCTURAL[6], not never, ", ".join(never)))

    return G, False


def _repeat_probes(ctx: _ProbeContext, proxy, G):
    """Probes 5-6: linear in dY, no accumulation, a second backward identical."""
    layer, inputs, owner, atol, diag = ctx.layer, ctx.inputs, ctx.owner, ctx.atol, ctx.diag
    probes, names, params, fwd = diag.probes, ctx.names, ctx.params, ctx.fwd
    keys = list(params)

    def run(g, reset=True, forward=True):
        if forward:
            fwd(proxy, inputs)
        if reset:
            _reset_grads(layer)
        r = _as_list(_call(proxy.backward, g.copy(), owner=owner, call="backward(dY)"), len(inputs))
        out = {"d" + n: np.array(v, dtype=np.float64) for n, v, x in zip(names, r, inputs)
               if x.dtype.kind == "f" and v is not None}
        out.update({"d" + k: v for k, v in _grads_snapshot(layer, keys).items()})
        return out

    # 4. linearity (its findings after 5: an accumulating backward also looks affine)
    g1, g2, g0 = run(G), run(2 * G), run(0 * G)

    # 5. accumulation and a second backward on the same forward. No reset between these calls: a
    # sandboxed layer's grads live in another process, out of reach, and the numerical check that
    # follows should see what the layer really leaves behind
    a = run(G, reset=False)
    b = run(G, reset=False, forward=False)
    z = run(0 * G, reset=False, forward=False)
    acc = [f"d{k}" for k in keys if not close(a[f"d{k}"], b[f"d{k}"], 1e-12, 1e-14)
           and close(z[f"d{k}"], b[f"d{k}"], 1e-12, 1e-14) and np.abs(b[f"d{k}"]).max(initial=0) > atol]
    differ = [t for t in a if not close(a[t], b[t], 1e-12, 1e-14) and t not in acc]

    nonlin = [t for t in g1 if not close(g2[t], 2 * g1[t], 1e-9, 1e-12) and t not in acc]
    affine = [t for t in g0 if np.abs(g0[t]).max(initial=0) > atol and t not in acc]
    probes.append(Probe(STRUCTURAL[4], not nonlin and not affine,
                        "; ".join([f"backward(0) gives nonzero {t}" for t in affine]
                                  + [f"backward(2 dY) != 2 backward(dY) for {t}" for t in nonlin if t not in affine])))
    for t in affine:
        diag.findings.append(Finding("not-linear", f"backward is not linear in dY: backward(0) gives a nonzero {t} "
                                     "(a term that does not multiply dY)", t))
    for t in nonlin:
        if t not in affine:
            diag.findings.append(Finding("not-linear", f"backward is not linear in dY: backward(2 dY) is not "
                                         f"2 backward(dY) for {t}", t))

    probes.append(Probe(STRUCTURAL[5], not acc and not differ,
                        "; ".join([f"{t} grew (accumulated)" for t in acc] + [f"{t} changed" for t in differ])))
    if acc:  # first among the findings: it explains the numerical mismatch too
        ks = ", ".join(f"grads[{t[1:]!r}]" for t in acc)
        one = len(acc) == 1
        msg = (f"gradients accumulated across calls instead of overwritten: {', '.join(acc)} "
               f"{'is' if one else 'are'} accumulated across backward calls ({ks} += ...: every backward "
               f"adds to {'it' if one else 'them'}, and a backward with dY = 0 left {'it' if one else 'them'} "
               f"unchanged instead of zero); assign grads[key] = ... in backward")
        diag.findings[:0] = [Finding("accumulated", msg, t) for t in acc]  # one per tensor, one sentence
    for t in differ:
        diag.findings.append(Finding("second-backward", f"a second backward on the same forward gives another "
                                     f"{t}: backward changes its own cache or the parameters", t))



_PRECISION_LOST = ("precision lost: {dtype} keeps about 7 significant digits, so the gradient check to 1e-6 "
                   "and training lose accuracy; compute in float64 and do not cast, e.g. no astype(np.float32)")


def _low_precision(dtype, inputs) -> bool:
    """A float dtype narrower than float64 while the float inputs are float64."""
    dt = np.dtype(dtype)
    return dt.kind == "f" and dt.itemsize < 8 and any(x.dtype == np.float64 for x in inputs)


def _cache_probe(layer, pristine, inputs, names, keys, G, training, rng, diag):
    """Copies of the layer as it was before the checker's first forward (``pristine``)."""
    name = STRUCTURAL[7]
    if _find_rngs(layer) or type(layer).__name__ == "RemoteLayer" or "sandbox" in type(layer).__module__:
        diag.probes.append(Probe(name, None, "skipped (random or remote layer)"))
        return
    if pristine is None:
        diag.probes.append(Probe(name, None, "skipped (the layer cannot be copied)"))
        return
    try:
        base = pristine
        a, b, c = copy.deepcopy(base), copy.deepcopy(base), copy.deepcopy(base)
    except Exception as exc:  # noqa: BLE001
        diag.probes.append(Probe(name, None, f"skipped (the layer cannot be copied: {type(exc).__name__})"))
        return
    others = [x + rng.standard_normal(x.shape) if x.dtype.kind == "f" else x for x in inputs]

    def grads_of(obj, r):
        r = _as_list(r, len(inputs))
        out = {"d" + n: np.array(v, dtype=np.float64) for n, v, x in zip(names, r, inputs)
               if x.dtype.kind == "f" and v is not None}
        out.update({"d" + k: v for k, v in _grads_snapshot(obj, keys).items()})
        return out

    try:
        c.forward(*[x.copy() for x in inputs], training=training)
        ref = grads_of(c, c.backward(G.copy()))
        # another instance's forward between this forward and its backward
        a.forward(*[x.copy() for x in inputs], training=training)
        b.forward(*[x.copy() for x in others], training=training)
        shared = grads_of(a, a.backward(G.copy()))
        # this instance: an earlier forward on other data, then the real one
        b2 = copy.deepcopy(base)
        b2.forward(*[x.copy() for x in others], training=training)
        b2.forward(*[x.copy() for x in inputs], training=training)
        stale = grads_of(b2, b2.backward(G.copy()))
    except Exception as exc:  # noqa: BLE001
        diag.probes.append(Probe(name, None, f"skipped (copies of the layer raised {type(exc).__name__})"))
        return
    bad_shared = [t for t in ref if t in shared and not close(ref[t], shared[t], 1e-12, 1e-14)]
    bad_stale = [t for t in ref if t in stale and not close(ref[t], stale[t], 1e-12, 1e-14)]
    diag.probes.append(Probe(name, not bad_shared and not bad_stale,
                             ", ".join(sorted(set(bad_shared + bad_stale)))))
    if bad_shared:
        diag.findings.append(Finding(
            "shared-cache", f"backward uses a cache overwritten by a later forward of another instance "
            f"({', '.join(bad_shared)} change when a second layer of the same class runs forward in between): "
            "the cache is shared, e.g. a class attribute or a global; store it on self in forward", bad_shared[0]))
    elif bad_stale:
        diag.findings.append(Finding(
            "stale-cache", f"backward uses the cache of an earlier forward, not of the last one "
            f"({', '.join(bad_stale)}): overwrite the cache on every forward", bad_stale[0]))


def _shape_signatures(proxy, inputs, names, params, G, rets, grads, bad_shape, diag, training=False):
    """Name each wrong-shaped gradient (:func:`name_signature`, against the numerical gradient when it runs)."""
    keys = ["@" + n for n in names]
    fwd = lambda *x: np.asarray(proxy.forward(*x, training=training), dtype=np.float64)  # noqa: E731
    Y = fwd(*inputs)
    for t, got, exp, key in bad_shape:
        if got is None:
            diag.findings.append(Finding("wrong-shape", f"{t} is missing: backward returned None or grads has "
                                         f"no entry for it (expected shape {exp})", t))
            continue
        which = "@" + key if key in names else key
        arr = np.asarray(rets[names.index(key)] if key in names else grads[key], dtype=np.float64)
        f = None if key in names else _output_product(t, arr, G, Y)
        if f is None:
            try:
                num = layer_numerical_gradients(fwd, inputs, params, G, input_names=keys, which=[which])[which]
            except Exception:  # noqa: BLE001 - the shape alone still names something
                num = np.full(exp, np.nan)
            hint = None if key in names else _product_hint(key, inputs[0], params[key], Y)
            f = name_signature(t, arr, num, fallback=True, hint=hint)
        diag.findings.append(f)


def _signatures(proxy, inputs, res: CheckResult, diag: Diagnosis, training, upstream=None):
    """Name the bug of each failing gradient tensor: :func:`name_signature`, then the layer-aware signatures."""
    if res.passed:
        return
    names = V.input_names(proxy._layer, len(inputs))
    keys = ["@" + n for n in names]
    params = V.layer_params(proxy, res.name)
    n_batch = inputs[0].shape[0] if inputs[0].ndim else 1
    fwd = lambda *x: np.asarray(proxy.forward(*x, training=training), dtype=np.float64)  # noqa: E731
    Y = fwd(*inputs)
    G = _replay_G(res, inputs, Y.shape, upstream)
    manual_all = res.gradients.get("manual", {})
    numerical_all = res.gradients.get("numerical", {})
    for rec in res.records:
        if rec.kind != "gradient" or rec.passed or rec.tensor in {f.tensor for f in diag.findings if f.severity == "error"}:
            continue
        c = rec.get("manual-vs-numerical")
        t = rec.tensor
        m, n = manual_all.get(t), numerical_all.get(t)
        if c is None or c.passed or m is None or n is None:
            continue
        key = "@" + t[1:] if t[1:] in names else t[1:]

        def numer_at(xs, Gx, which=key):
            return layer_numerical_gradients(fwd, xs, params, Gx, input_names=keys, which=[which])[which]

        def directional(Gx, which=key):
            return directional_derivatives(fwd, inputs, params, Gx, input_names=keys, groups=[[which]],
                                           rng=np.random.default_rng(res.seed))[(which,)]

        def numer_for(Gx):
            return numer_at(inputs, Gx)

        n = np.where(np.isfinite(n), n, np.nan)
        if np.isnan(n).sum() > len(c.kinks):  # a sampled check: the signatures need the whole tensor
            full, known = numer_for(G), np.isfinite(n)
            if close(full[known], n[known], 1e-6, 1e-9):  # the same dY as the check's
                n = np.where(known, n, full)
        for k in c.kinks:  # no derivative at a kink: left out of every signature
            n[k] = np.nan
        p = params.get(key)
        hint = None if p is None else _product_hint(key, inputs[0], p, Y)
        f = name_signature(t, m, n, is_bias=(p is not None and p.ndim == 1 and "b" in key.lower()),
                           n_batch=n_batch, y_size=Y.size, hint=hint)
        for probe, *args in ((_context_signature, n, key, inputs, Y, G, numer_at),
                             (_sample_signature, G, numer_for, n_batch, key.startswith("@")),
                             (_upstream_signature, G, key, numer_for, directional)):
            try:
                f = f or probe(t, m, *args)
            except Exception:  # noqa: BLE001 - a probe the layer cannot run (e.g. forward at Y) names nothing
                pass
        diag.findings.append(f or _worst_element(t, m, n, res.rtol, res.atol))


def _replay_G(res: CheckResult, inputs, y_shape, upstream=None) -> np.ndarray:
    """The upstream gradient check_layer drew: ``default_rng(seed)``, inputs given as arrays, then G."""
    if upstream is not None:
        return np.array(upstream, dtype=np.float64)
    rng = np.random.default_rng(res.seed)
    return rng.standard_normal(y_shape)


def _localize(model, inputs, diag: Diagnosis, **kw) -> None:
    """Check each layer of a failing model on the input it receives; record the first that fails."""
    layers = list(model.layers)
    xs = [x.copy() for x in inputs]
    training = kw.get("training", False)
    for i, sub in enumerate(layers):
        try:
            d = diagnose_layer(sub, xs if len(xs) > 1 else xs[0], name=f"layers[{i}] {type(sub).__name__}", **kw)
        except UsageError:
            d = None
        if d is not None and not d.passed:
            diag.sublayer = (i, d)
            first = next((f for f in d.findings if f.severity == "error"), None)
            why = first.message if first else (d.error or "gradient mismatch")
            diag.findings.insert(0, Finding("first-failing-layer",
                                            f"the first layer whose own check fails is layers[{i}] "
                                            f"({type(sub).__name__}): {why}"))
            return
        try:
            out = sub.forward(*[x.copy() for x in xs], training=training)
        except Exception:  # noqa: BLE001
            return
        xs = [np.asarray(out, dtype=np.float64)]


# --------------------------------------------------------------------------- check_vjp


def _resolve_op(op, vjp):
    if isinstance(op, str):
        try:
            from autoprop.core.registry import PRIMITIVES
        except ImportError as exc:  # pragma: no cover
            raise UsageError("autoprop is not importable; pass op and vjp as functions") from exc
        if op not in PRIMITIVES:
            raise UsageError(f"autoprop has no primitive {op!r}; known: {', '.join(sorted(PRIMITIVES)[:20])}, ...")
        op = PRIMITIVES[op]
    name = getattr(op, "name", getattr(op, "__name__", "op"))
    jvps = None
    if hasattr(op, "fwd") and hasattr(op, "vjps"):
        fwd = op.fwd
        if vjp is None:
            vjp = op.vjps
        jvps = getattr(op, "jvps", None)
        if vjp is None:
            raise UsageError(f"primitive {name} is not differentiable (vjps=None)")
    else:
        fwd = op
    if vjp is None:
        raise UsageError("check_vjp needs a vjp (or an autoprop primitive that has them)")
    return name, fwd, vjp, jvps


def check_vjp(op: Any, vjp: Any = None, *inputs: Any, kwargs: Mapping[str, Any] | None = None, seed: int = 0,
              rtol: float = 1e-6, atol: float = 1e-9, eps: float = DEFAULT_EPS, n_dirs: int = 3,
              name: str | None = None) -> CheckResult:
    r"""Check one operation's vector-Jacobian product alone: a dot-product test and an element scan.

    Per differentiable input ``x_i``: :math:`\langle u, J_i^T v\rangle` (from ``vjp``) must equal
    :math:`\langle J_i u, v\rangle` for ``n_dirs`` random ``u``, ``v``, with ``J_i u`` from the
    primitive's JVP rule when it has one, else central differences along ``u`` (zero at kinks):
    record ``<u,J^T v> i`` (``how="directional"``); and ``J_i^T v`` against central differences
    of ``sum(op(*inputs) * v)`` element by element, kinks excluded: record ``d<i>`` (``dx``).

    Parameters
    ----------
    op : callable, str or autoprop Primitive
        ``op(*inputs, **kwargs) -> ndarray``; or a name / entry of ``autoprop.core.registry.PRIMITIVES``
        (its ``.fwd``, ``.vjps``, ``.jvps``).
    vjp : callable, sequence of callables, or None
        ``vjp_i(g, ans, *inputs, **kwargs) -> dx_i`` per input (None: not differentiable), one
        callable for a one-input op, or None: the primitive's own ``vjps``.
    *inputs : array_like
        The arguments; float arrays are differentiated (float64 copies).
    kwargs : dict, optional
        Keyword arguments of the op. ``seed``, ``rtol``, ``atol``, ``eps``, ``n_dirs`` (3), ``name``: as in ``check_layer``.

    Returns
    -------
    CheckResult
        ``kind="op"``; ``notes`` say where ``J u`` came from.

    Raises
    ------
    UsageError
        Unknown primitive, no VJP, no float input.
    StudentCodeError
        ``op`` or ``vjp`` raised, or a VJP has the wrong shape.

    Examples
    --------
    >>> import numpy as np
    >>> res = check_vjp(np.tanh, lambda g, ans, x: g * (1 - ans**2), np.linspace(-2, 2, 5))
    >>> res.passed
    True
    """
    rtol, atol = V.check_tolerances(rtol, atol)
    opname, fwd, vjps, jvps = _resolve_op(op, vjp)
    owner = name or opname
    kwargs = dict(kwargs or {})
    xs = [np.array(x, dtype=np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in inputs]
    if not any(x.dtype.kind == "f" for x in xs):
        raise UsageError(f"check_vjp({owner}): no floating-point input to differentiate.")
    rng = np.random.default_rng(seed)
    ans = np.asarray(V.call_student(fwd, *[x.copy() for x in xs], owner=owner, call="forward", **kwargs),
                     dtype=np.float64)
    v = rng.standard_normal(ans.shape)
    vjp_list = _vjp_list(vjps, len(xs))
    records: list[TensorRecord] = []
    notes: list[str] = []
    manual: dict[str, np.ndarray] = {}
    numerical: dict[str, np.ndarray] = {}
    for i, x in enumerate(xs):
        if x.dtype.kind != "f" or i >= len(vjp_list) or vjp_list[i] is None:
            continue
        t = f"d{i}" if len(xs) > 1 else "dx"
        g = V.call_student(vjp_list[i], v.copy(), ans.copy(), *[y.copy() for y in xs], owner=owner,
                           call=f"vjp[{i}](g, ans, *inputs)", **kwargs)
        g = V.check_output(g, owner=owner, tensor=t, produced_by=f"vjp[{i}]", expected_shape=x.shape,
                           expected_why=f"the shape of input {i}")
        manual[t] = g

        rec, kinks, sc = _vjp_scan(fwd, xs, i, t, g, v, eps, rtol, atol, kwargs)
        numerical[t] = sc.grad
        if not rec.passed:
            f = name_signature(t, g, sc.grad)
            if f is not None:
                notes.append(f.message)
        lhs, rhs, src = _dot_products(fwd, jvps, xs, i, g, ans, v, kinks, rng, n_dirs, eps, kwargs)
        dot = compare(np.array(lhs), np.array(rhs), "manual-vs-numerical", rtol=rtol,
                      atol=atol * np.sqrt(x.size), how="directional")
        rec_dot = TensorRecord(f"<u,J^T v> {i}", (n_dirs,), "gradient", [dot])
        notes.append(f"input {i}: J u from {src}")

        records += [rec, rec_dot]
    if not records:
        raise UsageError(f"check_vjp({owner}): no input has a VJP to check.")
    return CheckResult(name=owner, kind="op", records=records, rtol=rtol, atol=atol, eps=eps, seed=seed,
                       input_shape=tuple(tuple(x.shape) for x in xs), notes=notes,
                       gradients={"manual": manual, "numerical": numerical})


def _vjp_scan(fwd, xs, i, t, g, v, eps, rtol, atol, kwargs):
    """``J_i^T v`` against central differences of ``sum(op(*inputs) * v)``, kinks excluded: (record, kinks, scan)."""
    work = [y.copy() for y in xs]

    def objective():
        return float(np.sum(np.asarray(fwd(*[w.copy() for w in work], **kwargs), dtype=np.float64) * v))

    sc = numerical_gradient(objective, work[i], eps=eps, detail=True)
    kinks = kink_mask(g, sc.grad, sc.d_plus, sc.d_minus, rtol=rtol, atol=atol)
    rec = TensorRecord(t, tuple(xs[i].shape), "gradient",
                       [compare(g, sc.grad, "manual-vs-numerical", rtol=rtol, atol=atol, kinks=kinks)])
    return rec, kinks, sc


def _vjp_list(vjps, n: int) -> list:
    """One VJP per input from a callable (returning a tuple when ``n > 1``), a list, or autoprop's variadic rule."""
    if callable(vjps):
        if n == 1:
            return [vjps]
        return [lambda g, a, *args, i=i, **kw: vjps(g, a, *args, **kw)[i] for i in range(n)]
    if type(vjps).__name__ == "_Variadic":
        return [vjps[i] for i in range(n)]
    return list(vjps)


def _dot_products(fwd, jvps, xs, i, g, ans, v, kinks, rng, n_dirs, eps, kwargs):
    """The dot-product test's two sides, ``<u, J^T v>`` and ``<J u, v>``, and where ``J u`` came from."""
    jvp_i = None
    if jvps is not None:
        try:
            jvp_i = jvps[i]
        except (IndexError, TypeError, KeyError):
            jvp_i = None
    lhs, rhs, src = [], [], "central differences"
    x = xs[i]
    for _ in range(n_dirs):
        u = rng.standard_normal(x.shape)
        u[kinks] = 0.0  # a finite difference across a kink is no derivative
        lhs.append(float(np.sum(u * g)))
        Ju = None
        if jvp_i is not None:
            try:
                Ju = np.broadcast_to(np.asarray(jvp_i(u, ans, *[y.copy() for y in xs], **kwargs), dtype=np.float64),
                                     ans.shape)
                src = "the primitive's JVP rule (forward mode)"
            except Exception:  # noqa: BLE001
                Ju = None
        if Ju is None:
            h = eps * max(1.0, float(np.abs(x).max()))

            def at(t, u=u):
                ys = [y.copy() for y in xs]
                ys[i] = x + t * u
                return np.asarray(fwd(*ys, **kwargs), dtype=np.float64)
            Ju = kernel("central", [at(h), at(-h)], [h, -h])[0]
            src = "central differences"
        rhs.append(float(np.sum(Ju * v)))
    return lhs, rhs, src
