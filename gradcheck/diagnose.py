r"""Find, locate and explain gradient bugs: structural probes, bug signatures, models, single VJPs.

:func:`diagnose_layer` runs, cheapest first: (1) **determinism** of the forward (a random one
is held fixed by ``fix_mask(True)``, else by rewinding the numpy generators it holds and
numpy's global state, else the check stops: case C29, a fresh mask per call turns ``df/dw = 16``
into 300013); (2) the **structural probes** of :data:`STRUCTURAL`, no finite differences (a
sandboxed layer is copied in its child); (3) the **numerical comparison**
(:func:`gradcheck.check.check_layer`, fast mode by default); (4) the **bug signatures** of each
failing tensor (:data:`SIGNATURES`): :func:`name_signature` from the numbers alone (also the
grader's), then the signatures probed with the layer itself, else the worst element; (5) for a
failing model with a ``layers`` list, the **first layer** that fails on the input it receives.

:func:`check_vjp` checks one VJP alone: the dot-product test
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

#: Codes of the bug signatures :func:`name_signature` and the layer-aware probes recognise.
SIGNATURES = ("transposed", "flipped-kernel", "permuted", "wrong-sign", "bias-mean", "factor-batch",
              "factor-inverse-batch", "factor", "first-sample-only", "last-sample-only", "sample-missing", "zero",
              "not-summed", "wrong-shape", "alternative", "missing-local-derivative", "activation-applied-twice",
              "cached-output", "missing-mean-var-paths", "transposed-weight", "tanh-missing-square",
              "softmax-diagonal", "permuted-upstream", "wrong-values")


@dataclass
class Finding:
    """One thing the diagnosis found.

    Attributes
    ----------
    code : str
        Stable identifier (``"bias-mean"``, ``"accumulated"``, ``"non-deterministic"``, ...).
    message : str
        One sentence in plain words.
    tensor : str or None
        ``"dW"``, ``"dX"``, ... when it concerns one gradient.
    severity : {"error", "warning", "info"}
        ``error``: a bug; ``warning``: suspicious; ``info``: what the checker did.
    """

    code: str
    message: str
    tensor: str | None = None
    severity: str = "error"

    def sentence(self) -> str:
        """The message, stripped, ending with a period."""
        s = self.message.strip()
        return s if s.endswith(".") else s + "."


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
        The mode of ``forward`` this diagnosis ran in; ``other_modes`` (list of Diagnosis)
        holds the other mode's when both were checked (``passed`` needs it too).
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
        return (self.error is None and not self.codes and self.result is not None and self.result.passed
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
            kinks = sum(len(v) for v in self.result.kinks.values())
            return f"PASS: {self.name}: every gradient matches{f' ({kinks} element(s) at a kink excluded)' * bool(kinks)}."
        if errs:
            errs = errs[:1] if errs[0].code == "first-failing-layer" else errs
            return f"FAIL: {self.name}: " + " ".join(list(dict.fromkeys(f.sentence() for f in errs))[:3])
        if self.error is not None:
            return f"FAIL: {self.name}: {self.error}"
        bad = ", ".join(self.result.failing_tensors) if self.result else "?"
        return f"FAIL: {self.name}: gradient mismatch in {bad} (no known bug pattern; see the worst elements above)."

    def report(self) -> str:
        """Table of the numerical check (if any), the probes that failed, the notes, and the sentence."""
        lines = [self.result.table(), ""] if self.result is not None else []
        failed = [p for p in self.probes if p.passed is False]
        if failed:
            lines.append("structural checks failed: " + "; ".join(f"{p.name} ({p.detail})" for p in failed))
        lines += [V.wrap(f"note: {f.message}") for f in self.findings if f.severity != "error"]
        if self.sublayer is not None:
            i, sub = self.sublayer
            lines += ["", f"first failing layer: layers[{i}] = {sub.name}", sub.report()]
        return "\n".join(lines + ["", V.wrap(self.sentence())]).strip("\n")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary."""
        err = self.error
        return {"name": self.name, "passed": self.passed, "sentence": self.sentence(),
                "findings": [vars(f).copy() for f in self.findings], "probes": [vars(p).copy() for p in self.probes],
                "result": None if self.result is None else self.result.to_dict(),
                "error": None if err is None else {"type": type(err).__name__, "message": str(err),
                                                   "exit_code": err.exit_code},
                "first_failing_layer": None if self.sublayer is None else
                {"index": self.sublayer[0], **self.sublayer[1].to_dict()},
                "training": self.training, "other_modes": [d.to_dict() for d in self.other_modes]}


# --------------------------------------------------------------------------- the layer as the checker calls it


def _find_rngs(obj: Any, depth: int = 3, seen: set | None = None) -> list[Any]:
    """numpy Generators / RandomStates reachable from ``obj``'s attributes (and lists of layers)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth < 0:
        return []
    seen.add(id(obj))
    if isinstance(obj, (np.random.Generator, np.random.RandomState)):
        return [obj]
    items = (list(obj) if isinstance(obj, (list, tuple)) else list(obj.values()) if isinstance(obj, dict) else
             list(vars(obj).values()) if hasattr(obj, "__dict__") and not isinstance(obj, (type, np.ndarray)) else [])
    return [r for v in items if not isinstance(v, (np.ndarray, str, bytes, int, float))
            for r in _find_rngs(v, depth - 1, seen)]


def _fix_masks(obj: Any, depth: int = 3) -> list[str]:
    """Call ``fix_mask(True)`` on ``obj`` and on layers inside it; return the names of those fixed."""
    out = []
    if callable(getattr(obj, "fix_mask", None)):
        obj.fix_mask(True)
        out.append(type(obj).__name__)
    for child in (getattr(obj, "layers", None) or []) if depth > 0 else []:
        out += _fix_masks(child, depth - 1)
    return out


def _rng_state(r, state=None):
    """A generator's state (``state`` None), or set it."""
    gen = isinstance(r, np.random.Generator)
    if state is None:
        return r.bit_generator.state if gen else r.get_state()
    if gen:
        r.bit_generator.state = state
    else:
        r.set_state(state)
    return state


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
        self.forward, self.backward = forward, layer.backward
        many = getattr(layer, "forward_many", None)
        if callable(many) and not rewind:  # a sandboxed layer: chunked scans (see gradcheck.numerical.many_scan)
            self.forward_many = many

    def rewind(self) -> None:
        for r, s in zip(self._rngs, self._states):
            _rng_state(r, s)
        if self._global is not None:
            np.random.set_state(self._global)

    params = property(lambda self: getattr(self._layer, "params", None))
    grads = property(lambda self: getattr(self._layer, "grads", None))


def _seed_advice(layer: Any) -> str:
    """How to hold a random forward fixed: a CS231n pair's seed in its ``*_param`` dict, else a mask switch."""
    kws = getattr(layer, "keyword_names", None)
    proto = getattr(layer, "protocol", None)
    if kws is None and isinstance(proto, Mapping) and proto.get("protocol") == "cs231n":
        kws = proto.get("init")
    ps = [str(k) for k in kws or () if str(k).endswith("_param")]
    if ps:
        p = "dropout_param" if "dropout_param" in ps else ps[0]
        return (f"fix the seed the CS231n way: give {p} a 'seed' (CS231n's dropout_forward calls "
                f"np.random.seed({p}['seed']) when it is there), e.g. --init '{{\"{p}\": {{..., \"seed\": 0}}}}', "
                "or pass the mask in from outside")
    return ("give the layer a way to hold the mask fixed, like manualprop.Dropout.fix_mask(True), or draw from a "
            "generator it stores (self.rng)")


# --------------------------------------------------------------------------- helpers


def _exact(a: Any, b: Any) -> bool:
    """Bit-for-bit equal (NaN equals NaN): :func:`gradcheck.compare.close` with zero tolerances."""
    return close(a, b, 0.0, 0.0, equal_nan=True)


def _grads_snapshot(layer: Any, keys: Sequence[str]) -> dict[str, Any]:
    g = getattr(layer, "grads", None)
    return {} if not isinstance(g, Mapping) else {
        k: np.array(g[k], dtype=np.float64, copy=True) for k in keys
        if k in g and isinstance(g[k], np.ndarray) and g[k].dtype.kind in "fiu"}


def _reset_grads(layer: Any, value: float = 0.0) -> None:
    g = getattr(layer, "grads", None)
    for v in g.values() if isinstance(g, Mapping) else ():
        if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.flags.writeable:
            v.fill(value)


def _as_list(ret: Any, n: int) -> list[Any]:
    return [ret] if n == 1 else list(ret) if isinstance(ret, (tuple, list)) else [ret] * n


def _grads_of(obj: Any, ret: Any, names: Sequence[str], inputs: Sequence[np.ndarray], keys) -> dict[str, Any]:
    """``{"dX": ..., "dW": ...}``: a backward's returned input gradients (float inputs) and ``obj.grads[keys]``."""
    out = {"d" + n: np.array(v, dtype=np.float64) for n, v, x in zip(names, _as_list(ret, len(inputs)), inputs)
           if x.dtype.kind == "f" and v is not None}
    return out | {"d" + k: v for k, v in _grads_snapshot(obj, keys).items()}


def _f64(proxy: Any, training: bool):
    """``forward(*xs)`` in float64, in one training mode."""
    return lambda *x: np.asarray(proxy.forward(*x, training=training), dtype=np.float64)


def _low_precision(dtype, inputs) -> bool:
    """A float dtype narrower than float64 while the float inputs are float64."""
    dt = np.dtype(dtype)
    return dt.kind == "f" and dt.itemsize < 8 and any(x.dtype == np.float64 for x in inputs)


_PRECISION_LOST = ("precision lost: {dtype} keeps about 7 significant digits, so the gradient check to 1e-6 "
                   "and training lose accuracy; compute in float64 and do not cast, e.g. no astype(np.float32)")


# --------------------------------------------------------------------------- signatures from the numbers alone

_SWAP = "swap the factors of the product (for a Linear: dW = dY.T @ X if W is (out, in), X.T @ dY if W is (in, out))"


def name_signature(tensor: str, manual: Any, numerical: Any, *, is_bias: bool = False, n_batch: int = 1,
                   y_size: int = 0, alternatives: Mapping[str, Any] | None = None, tol: float = 1e-5,
                   atol: float = 1e-9, fallback: bool = False, hint: str | None = None) -> Finding | None:
    """Name the bug that turns ``numerical`` (the correct gradient) into ``manual``, if it is a known one.

    The one implementation of the signatures from two arrays (``diagnose_layer`` and ``gradcheck
    check`` with finite differences as the truth, :func:`gradcheck.grading.diagnose` with a
    reference layer's). In order: a **shape** that differs (transposed, not summed over the batch,
    axes permuted, or just wrong); an **alternative**; all **zeros**; the **wrong sign**;
    **transposed** (square); **flipped kernel**; **permuted**; a **constant factor**
    ``c = <m, n> / <n, n>`` (the batch size: which, x2, x0.5); with ``fallback``, the worst element.

    Parameters
    ----------
    tensor : str
        Display name, e.g. ``"db"``.
    manual, numerical : array_like
        The gradient under suspicion and the correct one (NaN: unknown, e.g. a kink; left out).
    is_bias : bool, default False
        A ``1/batch`` factor is then "the mean over the batch, not the sum".
    n_batch, y_size : int, default 1, 0
        The batch size and the output's size (for "batch x positions").
    alternatives : mapping of str to array_like, optional
        Known wrong answers keyed by their sentences.
    tol, atol : float, default 1e-5, 1e-9
        Tolerances of "matches after the transformation".
    fallback : bool, default False
        Return the worst-element finding (``"wrong-values"``) instead of None.
    hint : str, optional
        How to fix a transposed gradient (from :func:`_layout_hint`); default: swap the factors.

    Returns
    -------
    Finding or None
        None when ``manual`` matches, ``numerical`` is all NaN, or nothing is recognised (no ``fallback``).

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

    def match(a, b):
        return close(np.where(ok, a, 0), np.where(ok, b, 0), tol, atol)

    if not ok.any() or match(m, n):
        return None
    for sentence, alt in (alternatives or {}).items():
        if np.shape(alt) == m.shape and match(m, np.asarray(alt, dtype=np.float64)):
            return Finding("alternative", sentence, tensor)
    f = None if np.all(np.abs(n[ok]) < 1e-12) else _value_signature(tensor, m, n, ok, match, is_bias, n_batch,
                                                                      y_size, hint)
    return _worst_element(tensor, m, n, tol, atol) if f is None and fallback else f


def _shape_signature(tensor, m, n, tol, atol, hint=None) -> Finding:
    """Name a gradient whose shape differs from the correct one's (NaN in ``n``: values unknown)."""
    gs, es = V.fmt_shape(m.shape), V.fmt_shape(n.shape)
    say = lambda code, msg: Finding(code, msg, tensor)  # noqa: E731
    if m.ndim == n.ndim == 2 and m.shape == n.shape[::-1] and close(m.T, n, tol, atol):
        return say("transposed", f"{tensor} is transposed: it has shape {gs}, the transpose of {es}; {hint or _SWAP}")
    if m.ndim == n.ndim + 1 and m.shape[1:] == n.shape:
        if close(m.sum(axis=0), n, tol, atol):
            return say("not-summed", f"{tensor} was not summed over the batch: it has shape {gs}, one row per "
                       f"example, but the correct gradient has shape {es}; a parameter is shared by all examples, "
                       "so its gradient is the sum of the rows (e.g. dY.sum(axis=0))")
        return say("not-summed", f"{tensor} has an extra batch axis: shape {gs}, expected {es}; sum over the batch "
                   "axis (axis 0)")
    f = _permutation(tensor, m, n, lambda a, b: close(a, b, tol, atol)) if m.size == n.size and np.isfinite(
        n).all() else None
    return f or say("wrong-shape", f"{tensor} has shape {gs}, expected {es}" + (
        ": same number of elements, a reshape or transpose went wrong" if m.size == n.size else ""))


def _worst_element(tensor: str, manual: np.ndarray, numerical: np.ndarray, rtol: float, atol: float) -> Finding:
    """The fallback finding: how many elements are wrong and the worst one (NaN in ``numerical``: skipped)."""
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    ok = np.isfinite(n)
    rel = relative_error(m, np.where(ok, n, 0.0), tiny=max(atol / rtol, 1e-300))
    rel = np.where(ok, np.nan_to_num(rel, nan=np.inf), 0.0)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(rel)), rel.shape)) if rel.size else ()
    return Finding("wrong-values", f"{tensor} differs from the correct gradient in {int(np.sum(rel > rtol))} of "
                   f"{m.size} elements (no known bug pattern); the largest error is at {tensor}{list(idx)}: got "
                   f"{m[idx]:.6g}, expected {n[idx]:.6g}", tensor)


def _value_signature(tensor, m, n, ok, match, is_bias, n_batch, y_size, hint=None) -> Finding | None:
    """The same-shape signatures of :func:`name_signature` (zeros, sign, transposed, flipped, permuted, factors)."""
    say = lambda code, msg: Finding(code, msg, tensor)  # noqa: E731
    if np.all(m == 0):  # all of it, not only where the correct gradient is known (a sample)
        return say("zero", f"{tensor} is all zeros: backward never computes it (or overwrites it with zeros)")
    if match(m, -n):
        return say("wrong-sign", f"{tensor} has the wrong sign: the opposite sign of the correct gradient "
                   "everywhere (a minus sign too many or too few)")
    if m.ndim == 2 and m.shape[0] == m.shape[1] and match(m.T, n):
        return say("transposed", f"{tensor} is transposed: its transpose is the correct gradient (the shape "
                   f"{V.fmt_shape(m.shape)} is square, so only the values show it); {hint or _SWAP}")
    if m.ndim >= 3 and match(m[..., ::-1, ::-1], n):
        return say("flipped-kernel", f"{tensor} is the true gradient with the kernel flipped in both spatial "
                   "axes (convolution vs cross-correlation)")
    if ok.all() and (f := _permutation(tensor, m, n, match)) is not None:
        return f
    c = float(np.sum(m[ok] * n[ok]) / np.sum(n[ok] * n[ok]))
    if not (abs(c - 1) > 1e-3 and abs(c) > 1e-12 and match(m, c * n)):
        return None
    counts = [(n_batch, f"batch size {n_batch}")]
    k = y_size // m.size if m.size and y_size % m.size == 0 else 0
    counts += [(k, f"{k} summed positions: batch x positions")] if k > 1 and k != n_batch else []
    for count, words in counts:  # the counts a wrong 1/count can come from
        if abs(c * count - 1) < 1e-6 and is_bias:
            return say("bias-mean", f"{tensor} is the mean over the batch, not the sum: it is {count} times too "
                       f"small ({words}); use dY.sum(...) instead of dY.mean(...)")
        if abs(c * count - 1) < 1e-6:
            return say("factor-inverse-batch", f"{tensor} is {count} times too small ({words}): an extra 1/batch "
                       "(if the loss already averages, its 1/N is inside dY: do not divide again)")
        if abs(c / count - 1) < 1e-6:
            return say("factor-batch", f"{tensor} is {count} times too large ({words}): a 1/batch is missing "
                       "(a sum where a mean is due)")
    named = {2.0: ", twice the true value (x2)", 0.5: ", half the true value (x0.5)"}
    named = next((w for v, w in named.items() if abs(c - v) < 1e-6), "")
    return say("factor", f"{tensor} is {c:.6g} times the correct gradient{named}: a constant factor is wrong somewhere")


def _permuted_copies(a: np.ndarray, shape: tuple, noun: str = "the correct gradient"):
    """``(words, copy)``: ``a`` with its axes permuted and reshaped to ``shape``, or reshaped then permuted
    (every non-identity axis order; none above 5-D: 719 would be too many)."""
    orders = [] if a.ndim > 5 else [p for p in itertools.permutations(range(a.ndim)) if p != tuple(range(a.ndim))]
    for p in orders:
        t = a.transpose(p)
        if t.shape == shape:
            yield f"{noun} transposed with axes {p}", t
        elif t.size == int(np.prod(shape)):
            inv, ts = tuple(int(i) for i in np.argsort(p)), V.fmt_shape(t.shape)
            yield (f"{noun} laid out in the axis order {p} (shape {ts}), then reshaped to {V.fmt_shape(shape)}: a "
                   f"reshape where a transpose is due (.reshape{ts}.transpose{inv}, not .reshape"
                   f"{V.fmt_shape(shape)})", t.reshape(shape))
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


def _layout_hint(name: str, X: np.ndarray, G: np.ndarray, n: np.ndarray) -> str | None:
    """The right product for a Linear's weight gradient, from the layout the numbers show (None: not a Linear).

    The correct ``n`` is compared with ``X.T @ dY`` (weights stored (in, out)) and ``dY.T @ X``
    ((out, in)): a square weight has both shapes, so only the values tell the layout.
    """
    if not (X.ndim >= 2 and G.ndim == n.ndim == 2 and len(X) == len(G) and np.isfinite(n).all()):
        return None
    Xf = X.reshape(len(X), -1)
    for val, layout, fwd, prod, wrong in ((Xf.T @ G, "(in, out)", f"X @ {name}", "X.T @ dY", "dY.T @ X"),
                                          (G.T @ Xf, "(out, in)", f"X @ {name}.T", "dY.T @ X", "X.T @ dY")):
        if val.shape == n.shape and close(val, n, 1e-6, 1e-9):
            return f"for {name} of shape {layout} with Y = {fwd} + b, d{name} = {prod} (not {wrong})"
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


# --------------------------------------------------------------------------- signatures that need the layer


def _norm_projection(tensor, m, n, X, tol=1e-3) -> Finding | None:
    """A normalisation's dX without the paths through the mean and variance (BatchNorm, LayerNorm)."""
    for axes in ([(0,)] if X.ndim == 2 else [(0, 2, 3)] if X.ndim == 4 else []) + [(X.ndim - 1,)]:
        xc = X - X.mean(axis=axes, keepdims=True)
        sd = np.sqrt(np.mean(xc**2, axis=axes, keepdims=True))
        if np.any(sd == 0):
            continue
        xh = xc / sd
        v = m - m.mean(axis=axes, keepdims=True)  # m without its mean and x_hat component, per normalised group
        if not close(v - xh * np.mean(v * xh, axis=axes, keepdims=True), n, tol, 1e-9):
            continue
        scale = np.abs(m).max()
        has_mean = np.abs(m.mean(axis=axes)).max() <= tol * scale  # the mean path makes dX centred
        has_var = np.abs(np.mean(m * xh, axis=axes)).max() <= tol * scale  # the variance path: dX orthogonal to xhat
        which = "variance" if has_mean else "mean" if has_var else "mean and variance"
        ax = f"axis={axes[0] if X.ndim == 2 or axes[0] == 0 else -1}" if len(axes) == 1 else f"axis={axes}"
        return Finding("missing-mean-var-paths", f"{tensor} lacks the gradient through the "
                       f"{'batch' if 0 in axes else 'per-sample'} {which} (statistics over {ax} treated as "
                       f"constants); with dxhat = dY * gamma: dX = (dxhat - dxhat.mean({ax}) - xhat * (dxhat * "
                       f"xhat).mean({ax})) / sqrt(var + eps), both means with keepdims=True", tensor)
    return None


def _context_signature(t, m, n, key, inputs, Y, G, numer_at, names=("X",), params=None) -> Finding | None:
    """Signatures that need the layer: dX = dY, a normalisation's missing paths, an activation's local
    derivative (:func:`_activation_signature`), a square weight transposed in dX, the output used as input."""
    X, ok, is_input = inputs[0], np.isfinite(n), key.startswith("@")
    if is_input and m.shape == G.shape and close(m, G, 1e-6, 1e-9) and not close(np.where(ok, n, G), G, 1e-6, 1e-9):
        return Finding("missing-local-derivative", f"{t} equals dY: the local derivative of the activation is "
                       "missing; multiply dY by f'(X) (ReLU: dY * (X > 0); sigmoid: dY * out * (1 - out); dropout: "
                       "dY * mask)", t)
    # the input this gradient belongs to (a CS231n pair batchnorm(x, gamma, beta): x, the first of three)
    xi = inputs[list(names).index(key[1:])] if is_input and key[1:] in names else None
    if (xi is not None and m.shape == xi.shape and ok.all() and xi.ndim >= 2 and xi.dtype.kind == "f"
            and (f := _norm_projection(t, m, n, xi)) is not None):
        return f
    if is_input and ok.all() and m.shape == n.shape:
        weights = {k: x for k, x in {**(params or {}), **{k: x for k, x in zip(names, inputs) if "@" + k != key}}
                   .items() if x.dtype.kind == "f" and x.ndim == 2 and x.shape[0] == x.shape[1]}
        f = _activation_signature(t, m, n, inputs, Y, G) or _transposed_weight_signature(t, m, n, G, weights)
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


def _activation_signature(t, m, n, inputs, Y, G) -> Finding | None:
    """tanh's square missing, softmax's diagonal only: named only when the correct ``n`` is that
    activation's own VJP at the layer's output (so the layer is tanh / a softmax), never from ``m`` alone."""
    if len(inputs) != 1 or not Y.shape == inputs[0].shape == G.shape:
        return None
    if close(n, G * (1 - Y**2), 1e-5, 1e-9) and close(m, G * (1 - Y), 1e-6, 1e-9):
        return Finding("tanh-missing-square", f"{t} = dY * (1 - out): the square is missing in tanh's derivative; "
                       "tanh'(x) = 1 - tanh(x)**2, so dX = dY * (1 - out**2) with out = tanh(X) cached in forward", t)
    for axis in dict.fromkeys((-1, 1) if Y.ndim > 2 else (-1,)):
        if np.any(Y < 0) or not np.allclose(Y.sum(axis=axis), 1.0, rtol=0, atol=1e-9):  # softmax rows sum to one
            continue
        if close(n, Y * (G - np.sum(G * Y, axis=axis, keepdims=True)), 1e-5, 1e-9) and close(m, G * Y * (1 - Y),
                                                                                            1e-6, 1e-9):
            return Finding("softmax-diagonal", f"{t} = dY * p * (1 - p) uses only the diagonal of the softmax "
                           "Jacobian: every output p_j depends on every input x_i (dp_j/dx_i = p_j * (delta_ij - p_i)), "
                           "so the off-diagonal terms -p_i * p_j are missing; use dX = p * (dY - (dY * p).sum("
                           f"axis={axis}, keepdims=True))", t)
    return None


def _transposed_weight_signature(t, m, n, G, weights=None) -> Finding | None:
    """dX = dY @ W where dY @ W.T is due (or the reverse), for a square W: no shape shows it.

    Where the correct ``n`` is dY times one matrix ``B`` along an axis (the last: a Linear;
    axis 1: a 1x1 convolution, channels first), ``B`` is solved for by least squares and ``m``
    must equal dY times ``B.T``; ``weights`` (name -> square array) only name the weight.
    """
    for axis in dict.fromkeys((-1, 1) if n.ndim > 2 else (-1,)):
        if G.ndim != n.ndim or G.shape[axis] != n.shape[axis]:
            continue
        k = n.shape[axis]
        Gf, nf, mf = (np.moveaxis(a, axis, -1).reshape(-1, k) for a in (G, n, m))
        if len(Gf) <= k or np.linalg.matrix_rank(Gf) < k:
            continue
        B = np.linalg.lstsq(Gf, nf, rcond=None)[0]  # dX = dY @ B along this axis
        if close(B, B.T, 1e-6, 1e-9) or not close(Gf @ B, nf, 1e-5, 1e-9) or not close(mf, Gf @ B.T, 1e-5, 1e-9):
            continue
        name, same = (next((w for w, A in (weights or {}).items() if A.shape == B.shape and close(A, C, 1e-5, 1e-9)),
                           None) for C in (B.T, B))
        if axis == -1:
            fix = (f"{t} = dY @ {name}.T, not dY @ {name}" if name else f"{t} = dY @ {same}, not dY @ {same}.T"
                   if same else f"for Y = X @ W + b, {t} = dY @ W.T; for Y = X @ W.T + b, {t} = dY @ W")
        else:
            fix = (f"{t} = np.einsum('cf,nf...->nc...', {name}, dY), not 'fc'" if name else
                   f"for Y = np.einsum('fc,nc...->nf...', {same or 'W'}, X), {t} = np.einsum('fc,nf...->nc...', "
                   f"{same or 'W'}, dY) (sum over the output channel f), not 'cf'")
        return Finding("transposed-weight", f"{t} multiplies dY by the transposed weight: it is dY times the "
                       "transpose of the matrix the chain rule gives (the weight is square, so the shapes agree "
                       f"and only the values show it); {fix}", t)
    return None


def _kernel_flip_signature(t, m, key, inputs, names, params, G, numer_at) -> Finding | None:
    """dX computed with the kernel flipped (convolution where the forward correlates): for each kernel
    (a parameter or another input with 3 or 4 axes), the correct dX of the layer with it flipped."""
    if not key.startswith("@"):
        return None
    cands = [(k, p, None) for k, p in params.items() if p.ndim in (3, 4)]
    cands += [(nm, x, i) for i, (nm, x) in enumerate(zip(names, inputs))
              if "@" + nm != key and x.dtype.kind == "f" and x.ndim in (3, 4)]
    for name, w, idx in cands:
        flipped = (w[..., ::-1] if w.ndim == 3 else w[..., ::-1, ::-1]).copy()
        if idx is not None:
            ref = numer_at([flipped if i == idx else x for i, x in enumerate(inputs)], G)
        else:
            saved = w.copy()
            try:
                w[...] = flipped
                ref = numer_at(inputs, G)
            finally:
                w[...] = saved
        if close(m, ref, 1e-5, 1e-9):
            return Finding("flipped-kernel", f"{t} is computed with the kernel flipped in its spatial axes ({name}"
                           f"{'[..., ::-1]' if w.ndim == 3 else '[:, :, ::-1, ::-1]'}): the forward is a "
                           "cross-correlation, so its backward scatters dY through the kernel as it is (dx_window += "
                           f"{name}[f] * dout[n, f, i, j], no flip)", t)
    return None


def _sample_signature(tensor, manual, G, numer_for, n_batch, is_input, tol=1e-5) -> Finding | None:
    """Only the first / last sample's gradient, or one sample missing? ``numer_for(G')``: numerical for ``G'``."""
    m = np.asarray(manual, dtype=np.float64)
    if n_batch < 2:
        return None
    full = numer_for(G)
    last = n_batch - 1
    if is_input:
        zero = [k for k in range(n_batch) if np.all(m[k] == 0) and np.any(full[k] != 0)]
        if not zero or not close(np.delete(m, zero, axis=0), np.delete(full, zero, axis=0), tol, 1e-9):
            return None
        if len(zero) == last:
            which = "first" if 0 not in zero else "last" if last not in zero else None
            if which:
                return Finding(f"{which}-sample-only", f"{tensor} holds only the {which} sample's gradient "
                               f"(the other rows are zero): loop over the whole batch", tensor)
        if len(zero) == 1:
            return Finding("sample-missing", f"{tensor} is right except for {tensor}[{zero[0]}] (sample {zero[0]} "
                           f"of 0..{last}), which is zero: the loop misses one sample (range(N - 1) instead "
                           "of range(N)?)", tensor)
        return None
    ones = {}
    for which, idx in (("first", 0), ("last", last)):
        Gs = np.zeros_like(G)
        Gs[idx] = G[idx]
        ones[which] = numer_for(Gs)
        if close(m, ones[which], tol, 1e-9):
            return Finding(f"{which}-sample-only", f"{tensor} is the gradient of the {which} sample only: sum the "
                           f"contributions of all {n_batch} samples"
                           + (" (a loop that overwrites instead of adding?)" if which == "last" else ""), tensor)
    for (which, one), idx in zip(ones.items(), (0, last)):  # by linearity in dY: the sum less one sample
        if close(m, full - one, tol, 1e-9):
            return Finding("sample-missing", f"{tensor} lacks the contribution of the {which} sample (sample "
                           f"{idx} of 0..{last}): the loop misses one sample "
                           f"({'range(N - 1)' if which == 'last' else 'range(1, N)'} instead of range(N)?)", tensor)
    return None


def _one_sample_zero(t: str, is_input: bool) -> Finding:
    """An all-zero gradient with a batch of one: the only sample's gradient is missing, said as such."""
    what = f"{t}[0], the gradient of sample 0 (the batch's only sample), is" if is_input else f"{t} is"
    return Finding("zero", f"{what} all zeros: with a batch of one, a loop over the samples that misses one "
                   f"(range(N - 1), which runs no iteration when N = 1) leaves it zero, and so does a backward that "
                   f"never computes {t}; loop over range(N), and check with a batch of at least 2", t)


def _upstream_signature(t, m, G, key, numer_for, directional) -> Finding | None:
    """Backward used dY in the wrong layout (e.g. a reshape without its transpose(1, 0, 2, 3)).

    Backward is linear in dY, so ``m`` is ``J^T G'`` for the dY ``G'`` it used: every permuted
    ``G'`` is screened with two directional derivatives, a survivor confirmed in full.
    """
    for words, Gp in _permuted_copies(G, G.shape, "dY"):
        if all(_agrees(float(np.sum(u[key] * m)), d, u[key] * m, 1e-6) for u, d in directional(Gp)) and close(
                m, numer_for(Gp), 1e-5, 1e-9):
            return Finding("permuted-upstream", f"{t} is the gradient for a permuted upstream gradient: backward "
                           f"used {words} in place of dY (e.g. dY.reshape(F, -1) where "
                           "dY.transpose(1, 0, 2, 3).reshape(F, -1) is due)", t)
    return None


def _agrees(got: float, d: float, terms: np.ndarray, rtol: float) -> bool:
    """A directional derivative ``d`` against ``got = sum(terms)``, up to the round-off of the terms."""
    return bool(abs(got - d) <= rtol * (abs(d) + np.sqrt(np.sum(terms**2))) + 1e-9)


def _signatures(proxy, inputs, res: CheckResult, diag: Diagnosis, training, upstream=None):
    """Name the bug of each failing gradient tensor: :func:`name_signature`, then the layer-aware signatures."""
    if res.passed:
        return
    names = V.input_names(proxy._layer, len(inputs))
    keys = ["@" + n for n in names]
    params = V.layer_params(proxy, res.name)
    n_batch = inputs[0].shape[0] if inputs[0].ndim else 1
    fwd = _f64(proxy, training)
    Y = fwd(*inputs)
    G = np.array(upstream, dtype=np.float64) if upstream is not None else (
        np.random.default_rng(res.seed).standard_normal(Y.shape))  # the upstream gradient check_layer drew
    named = {f.tensor for f in diag.findings if f.severity == "error"}
    for rec in res.records:
        c, t = rec.get("manual-vs-numerical"), rec.tensor
        m, n = res.gradients.get("manual", {}).get(t), res.gradients.get("numerical", {}).get(t)
        if rec.kind != "gradient" or rec.passed or t in named or c is None or c.passed or m is None or n is None:
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
        p = params.get(key, inputs[names.index(key[1:])] if key[1:] in names and key != keys[0] else None)
        f = name_signature(t, m, n, is_bias=(key in params and p.ndim == 1 and "b" in key.lower()), n_batch=n_batch,
                           y_size=Y.size, hint=None if p is None else _layout_hint(key.lstrip("@"), inputs[0], G, n))
        if f is not None and f.code == "zero" and n_batch == 1:
            f = _one_sample_zero(t, key.startswith("@"))
        for probe, *args in ((_context_signature, n, key, inputs, Y, G, numer_at, names, params),
                             (_sample_signature, G, numer_for, n_batch, key.startswith("@")),
                             (_kernel_flip_signature, key, inputs, names, params, G, numer_at),
                             (_upstream_signature, G, key, numer_for, directional)):
            try:
                f = f or probe(t, m, *args)
            except Exception:  # noqa: BLE001 - a probe the layer cannot run (e.g. forward at Y) names nothing
                pass
        diag.findings.append(f or _worst_element(t, m, n, res.rtol, res.atol))


def _shape_signatures(proxy, inputs, names, params, G, rets, grads, bad_shape, diag, training=False):
    """Name each wrong-shaped gradient (:func:`name_signature`, against the numerical gradient when it runs)."""
    keys = ["@" + n for n in names]
    fwd = _f64(proxy, training)
    Y = fwd(*inputs)
    for t, got, exp, key in bad_shape:
        if got is None:
            diag.findings.append(Finding("wrong-shape", f"{t} is missing: backward returned None or grads has "
                                         f"no entry for it (expected shape {exp})", t))
            continue
        arr = np.asarray(rets[names.index(key)] if key in names else grads[key], dtype=np.float64)
        f = None if key in names else _output_product(t, arr, G, Y)
        if f is None:
            try:
                which = "@" + key if key in names else key
                num = layer_numerical_gradients(fwd, inputs, params, G, input_names=keys, which=[which])[which]
            except Exception:  # noqa: BLE001 - the shape alone still names something
                num = np.full(exp, np.nan)
            hint = None if key == names[0] else _layout_hint(key, inputs[0], G, num)
            f = name_signature(t, arr, num, fallback=True, hint=hint)
        diag.findings.append(f)


# --------------------------------------------------------------------------- diagnose_layer


def diagnose_layer(layer: Any, X: Any, *, mode: str = "fast", method: str = "central", seed: int = 0,
                   rtol: float = 1e-6, atol: float | None = None, eps: float | None = None,
                   training: bool | str = "auto", twin: Any = None, reference: Any = None, name: str | None = None,
                   localize: bool = True, n_dirs: int = 2, n_samples: int = 8, upstream: Any = None) -> Diagnosis:
    """Check a layer and explain what is wrong: probes, numerical check, bug signatures, first bad layer.

    Parameters
    ----------
    layer : object
        manualprop layer protocol (see :func:`gradcheck.check.check_layer`); a container with a
        ``layers`` list (``Sequential``) is localised on failure.
    X : ndarray, shape tuple, or list of those
        As in :func:`gradcheck.check.check_layer`.
    mode : {"fast", "full", "sample"}, default "fast"
        Numerical mode; a failing tensor is always scanned element by element.
    method, seed, rtol, atol, eps, n_dirs, n_samples, upstream
        As in ``check_layer`` (the structural probes use atol 1e-9 when it is None); ``seed``
        also seeds the probes.
    training : bool, "both" or "auto", default "auto"
        As in ``check_layer``: with two modes each is diagnosed; the result is the first
        failing mode's, named ``"<name> [training]"``, the other in ``other_modes``.
    twin : object or None
        An autoprop twin for a tape column (None: none; "auto" is not used: the checker calls
        the layer through a proxy).
    reference : object, optional
        A layer of ours with the same parameter keys (``manual-vs-reference`` pair).
    name : str, optional
    localize : bool, default True
        For a container that fails, find the first failing layer.

    Returns
    -------
    Diagnosis

    Raises
    ------
    UsageError
        Bad arguments (shapes, tolerances, mode). Errors of the checked code are not raised:
        they are in ``Diagnosis.error`` and the findings.
    """
    CheckConfig(rtol=rtol, atol=atol, eps=eps, method=method, mode=mode, seed=seed, training=training,
                n_dirs=n_dirs, n_samples=n_samples)  # validates every setting once
    owner = name or type(layer).__name__
    V.require_methods(layer, owner, ("forward", "backward"), "manualprop layer")
    kw = dict(mode=mode, method=method, seed=seed, rtol=rtol, atol=atol, eps=eps, n_dirs=n_dirs, n_samples=n_samples)
    diags, notes = [], []
    for t in training_modes(layer, training):
        if t and diags:
            inputs = V.layer_inputs(X, np.random.default_rng([seed, 3]), owner)
            if not training_differs(Call(layer, owner, inputs, V.input_names(layer, len(inputs)), {}, t)):
                notes.append(SAME_IN_BOTH_MODES)
                break
        diags.append(_diagnose_mode(layer, X, owner, t, twin, reference, localize, upstream, kw))
    for d in diags if len(diags) > 1 else ():
        d.name = f"{owner} [{mode_word(d.training)}]"
        if d.result is not None:
            d.result.name = d.name
    first = next((d for d in diags if not d.passed), diags[0])
    first.other_modes = [d for d in diags if d is not first]
    if first.result is not None:
        first.result.other_modes = [d.result for d in first.other_modes if d.result is not None]
        first.result.notes += notes
    return first


def _diagnose_mode(layer, X, owner, training, twin, reference, localize, upstream, kw) -> Diagnosis:
    """:func:`diagnose_layer` in one training mode (``kw``: the numerical settings)."""
    rtol, atol_probe = V.check_tolerances(kw["rtol"], 1e-9 if kw["atol"] is None else kw["atol"])
    # inputs from their own stream: check_layer draws G from default_rng(seed), and G == X
    # would make X.T @ G symmetric and hide a transposed gradient
    inputs = V.layer_inputs(X, np.random.default_rng([kw["seed"], 3]), owner)
    one = V.warn_batch_of_one(inputs, V.input_names(layer, len(inputs)), owner)  # check_layer's own: ignored below
    diag = Diagnosis(owner, training=training)
    try:
        pristine = copy.deepcopy(layer)  # the layer as it is now, for the cache probe (a sandboxed one: in its child)
    except Exception:  # noqa: BLE001 - a layer that cannot be copied skips the cache probe
        pristine = None
    try:
        proxy = _Probes(layer, inputs, owner, training, atol_probe, kw["seed"], diag).run(pristine)
    except GradcheckError as exc:
        diag.error, proxy = exc, None
        if not diag.findings or diag.findings[-1].severity != "error":
            diag.findings.append(Finding("student-code", str(exc)))
    finally:
        _release(pristine)
    stop = {"non-deterministic", "stale-output", "not-summed", "wrong-shape", "non-finite"}
    # float32 output: finite differences cannot reach 1e-6; a float32 gradient alone still gets the check
    stopped = set(diag.codes) & stop or any(f.code == "float32" and f.tensor == "Y" for f in diag.findings)
    if proxy is not None and not stopped:
        try:
            with warnings.catch_warnings():
                if one:
                    warnings.filterwarnings("ignore", message=re.escape(f"batch of one: {owner} "))
                diag.result = check_layer(proxy, inputs, twin=twin, training=training, name=owner,
                                          reference=reference, upstream=upstream, **kw)
            _signatures(proxy, inputs, diag.result, diag, training, upstream)
        except GradcheckError as exc:
            diag.error = exc
            diag.findings.append(Finding("student-code", str(exc)))
    if localize and not diag.passed and upstream is None and isinstance(getattr(layer, "layers", None),
                                                                        (list, tuple)):
        _localize(layer, inputs, diag, training, kw)
    return diag


def _localize(model, inputs, diag: Diagnosis, training, kw) -> None:
    """Check each layer of a failing model on the input it receives; record the first that fails."""
    xs = [x.copy() for x in inputs]
    for i, sub in enumerate(model.layers):
        try:
            d = diagnose_layer(sub, xs if len(xs) > 1 else xs[0], name=f"layers[{i}] {type(sub).__name__}",
                               training=training, **kw)
        except UsageError:
            d = None
        if d is not None and not d.passed:
            diag.sublayer = (i, d)
            first = next((f for f in d.findings if f.severity == "error"), None)
            why = first.message if first else (d.error or "gradient mismatch")
            diag.findings.insert(0, Finding("first-failing-layer", f"the first layer whose own check fails is "
                                            f"layers[{i}] ({type(sub).__name__}): {why}"))
            return
        try:
            xs = [np.asarray(sub.forward(*[x.copy() for x in xs], training=training), dtype=np.float64)]
        except Exception:  # noqa: BLE001
            return


def _release(*objs) -> None:
    """Free the child's copies of a sandboxed layer (copies in this process are left to the garbage collector)."""
    from .sandbox import RemoteLayer

    for o in objs:
        if isinstance(o, RemoteLayer):
            try:
                o.release()
            except GradcheckError:  # the sandbox stopped: nothing left to free
                pass


#: What an unwritten grads entry is filled with before the first backward (found again: never written).
_SENTINEL = 7.25


class _Probes:
    """The structural probes (:data:`STRUCTURAL`) of one layer on one input, in one training mode."""

    def __init__(self, layer, inputs, owner, training, atol, seed, diag: Diagnosis):
        self.layer, self.inputs, self.owner, self.training, self.atol, self.diag = (layer, inputs, owner, training,
                                                                                     atol, diag)
        self.rng = np.random.default_rng([seed, 2])
        self.names = V.input_names(layer, len(inputs))
        self.params = V.layer_params(layer, owner)
        self.fcall = f"forward({', '.join(self.names)}, training={training})"
        self.proxy = _Proxy(layer)

    def fwd(self, obj, xs):
        return V.call_student(obj.forward, *[x.copy() for x in xs], training=self.training, owner=self.owner,
                              call=self.fcall)

    def bwd(self, G, obj=None):
        return V.call_student((obj or self.proxy).backward, G.copy(), owner=self.owner, call="backward(dY)")

    def grads_of(self, obj, ret):
        return _grads_of(obj, ret, self.names, self.inputs, list(self.params))

    def probe(self, i, passed, detail=""):
        self.diag.probes.append(Probe(STRUCTURAL[i], passed, detail))

    def find(self, code, message, tensor=None, severity="error"):
        self.diag.findings.append(Finding(code, message, tensor, severity))

    def others(self):
        """The inputs moved by a standard normal step (the float ones)."""
        return [x + self.rng.standard_normal(x.shape) if x.dtype.kind == "f" else x for x in self.inputs]

    def run(self, pristine=None):
        """Every probe, in order; the proxy the numerical check should call."""
        if self.determinism():
            return self.proxy
        G = self.backward()
        if G is None:
            return self.proxy
        self.repeat(G)
        self.cache(pristine, G)
        self.second_input(G)
        xs = [x + 1e-3 * self.rng.standard_normal(x.shape) if x.dtype.kind == "f" else x for x in self.inputs]
        Yp, Yr = np.asarray(self.fwd(self.proxy, xs)), np.asarray(self.fwd(self.proxy, self.inputs))
        ok = Yp.shape == Yr.shape and Yp.dtype == Yr.dtype
        self.probe(8, ok, "" if ok else f"{Yr.shape} {Yr.dtype} became {Yp.shape} {Yp.dtype}")
        if not ok:
            self.find("unstable-output", f"the output changes shape or dtype under a small perturbation of the "
                      f"input ({Yr.shape} {Yr.dtype} -> {Yp.shape} {Yp.dtype})")
        return self.proxy

    def determinism(self) -> bool:
        """Three forwards (a random mask repeats by chance with probability 2**-size per pair), then the
        float32 stop; True: stop."""
        layer, inputs = self.layer, self.inputs
        Y1 = self.fwd(layer, inputs)
        # None, an integer array, NaN: the canonical one-paragraph error (exit 3)
        V.check_output(Y1, owner=self.owner, tensor="Y", produced_by=self.fcall, expected_shape=None)
        y_dtype, Y1 = np.asarray(Y1).dtype, np.asarray(Y1, dtype=np.float64)
        Y2, Y3 = (np.asarray(self.fwd(layer, inputs), dtype=np.float64) for _ in range(2))
        Y2 = Y3 if _exact(Y1, Y2) and not _exact(Y1, Y3) else Y2
        ok = _exact(Y1, Y2)
        if not ok:
            diff = float(np.nanmax(np.abs(Y1 - Y2))) if Y1.shape == Y2.shape else float("nan")
            random = f"the forward is random (two calls differed by {diff:.3g}); "
            fixed = _fix_masks(layer)
            if fixed:
                self.fwd(layer, inputs)
                if ok := _exact(self.fwd(layer, inputs), self.fwd(layer, inputs)):
                    self.find("held-mask", random + f"the mask was held fixed with fix_mask(True) on "
                              f"{', '.join(fixed)} for the check", severity="info")
            if not ok:
                self.proxy = _Proxy(layer, rewind=True)
                if ok := _exact(self.fwd(self.proxy, inputs), self.fwd(self.proxy, inputs)):
                    what = ", ".join(sorted({type(r).__name__ for r in self.proxy._rngs})) or "numpy's global generator"
                    self.find("rewound-rng", random + f"its random generator ({what}) was rewound before every "
                              "forward, so each call drew the same mask", severity="info")
            self.probe(0, ok, "" if ok else f"two calls differ by up to {diff:.3g}")
            if not ok:
                self.find("non-deterministic", f"the forward is non-deterministic: two calls with the same input "
                          f"differ by up to {diff:.3g}, so finite differences are meaningless (a dropout mask drawn "
                          f"afresh per call?); {_seed_advice(layer)}")
                return True
        else:
            self.probe(0, True)
        if _low_precision(y_dtype, inputs):  # float32 output for float64 inputs: finite differences cannot reach 1e-6
            self.probe(2, False, f"Y is {y_dtype}, expected float64")
            self.find("float32", f"forward returns {y_dtype} for a float64 input "
                      f"({_PRECISION_LOST.format(dtype=y_dtype)})", "Y")
            return True
        return False

    def backward(self):
        """Input unchanged, gradient shapes and dtypes, finite values, grads written: dY, or None to stop."""
        layer, inputs, names, params = self.layer, self.inputs, self.names, self.params
        xs = [x.copy() for x in inputs]
        self.proxy.rewind()
        V.call_student(layer.forward, *xs, training=self.training, owner=self.owner, call=self.fcall)
        changed = [n for n, a, b in zip(names, xs, inputs) if not np.array_equal(a, b)]
        self.probe(1, not changed, f"{', '.join(changed)} changed" if changed else "")
        if changed:
            self.find("input-modified", f"forward modifies its input {', '.join(changed)} in place (the caller's "
                      "array changes); compute into a new array instead", "d" + changed[0])
        G = self.rng.standard_normal(np.shape(np.asarray(self.fwd(self.proxy, inputs))))
        g_before = getattr(layer, "grads", None)
        _reset_grads(layer, _SENTINEL)
        pre_ids = {k: id(v) for k, v in g_before.items()} if isinstance(g_before, Mapping) else {}
        ret = self.bwd(G)
        rets, grads = _as_list(ret, len(inputs)), getattr(layer, "grads", None)
        if params and not isinstance(grads, Mapping):  # a list, None, ...: the protocol error (exit 3)
            self.probe(2, False, f"grads is {V.article(getattr(grads, 'type_name', None) or type(grads).__name__)}, "
                       "not a dict")
            raise V.grads_not_dict(self.owner, grads, params)
        bcall = f"backward(dY) with dY of shape {V.fmt_shape(G.shape)}"
        found = [("d" + n, r, x.shape, n, bcall) for n, r, x in zip(names, rets, inputs) if x.dtype.kind == "f"]
        found += [("d" + k, grads.get(k), p.shape, k, f"grads[{k!r}] after backward(dY)") for k, p in params.items()]
        bad_shape, low, nonfinite, never = [], [], [], []
        for t, r, shape, key, produced_by in found:
            arr = None if r is None else np.asarray(r)
            if arr is not None and arr.dtype.kind in "biu":  # an integer gradient: exit 3, nothing else to say
                self.probe(2, False, f"{t} is {arr.dtype}, expected float64")
                raise V.dtype_error(self.owner, produced_by, t, arr.dtype)
            if arr is None or arr.shape != shape:
                bad_shape.append((t, None if arr is None else arr.shape, shape, key))
                continue
            low += [(t, arr.dtype)] if _low_precision(arr.dtype, inputs) else []
            if not np.all(np.isfinite(arr.astype(np.float64))):
                nonfinite.append(t)
            elif key in params and id(r) == pre_ids.get(key) and np.all(arr == _SENTINEL):
                never.append(t)
        self.probe(2, not bad_shape and not low, "; ".join([f"{t} has shape {s}, expected {e}" for t, s, e, _ in
                                                            bad_shape] + [f"{t} is {d}, expected float64" for t, d in low]))
        self.probe(3, not nonfinite, ", ".join(nonfinite))
        if nonfinite:
            self.find("non-finite", f"{', '.join(nonfinite)} {'contains' if len(nonfinite) == 1 else 'contain'} NaN "
                      "or infinity (division by zero, log of 0 or exp overflow?)", nonfinite[0])
        for t, d in low:
            self.find("float32", f"backward returns {t} as {d} for a float64 input "
                      f"({_PRECISION_LOST.format(dtype=d)})", t)
        if bad_shape or nonfinite:
            try:  # the canonical one-paragraph error (what check_layer would raise), for exit code 3
                V.check_input_grads(ret, owner=self.owner, produced_by=bcall, names=names, inputs=inputs,
                                    keys=["@" + n for n in names])
                V.check_grads(layer, self.owner, params)
            except GradcheckError as exc:
                self.diag.error = exc
        if bad_shape:
            _shape_signatures(self.proxy, inputs, names, params, G, rets, grads, bad_shape, self.diag, self.training)
        if bad_shape or nonfinite:  # NaN explains everything after it (linearity, a second backward): alone
            return None
        if never:
            self.find("never-written", f"{', '.join(never)} never written: backward leaves grads[...] as it was "
                      "(assign grads[key] = ... in backward)", never[0])
        self.probe(6, not never, ", ".join(never))
        return G

    def repeat(self, G):
        """Linear in dY, no accumulation, a second backward identical."""
        def run(g, reset=True, forward=True):
            if forward:
                self.fwd(self.proxy, self.inputs)
            if reset:
                _reset_grads(self.layer)
            return self.grads_of(self.layer, self.bwd(g))

        same = lambda a, b: close(a, b, 1e-12, 1e-14)  # noqa: E731
        g1, g2, g0 = run(G), run(2 * G), run(0 * G)  # linearity (its findings after: accumulating also looks affine)
        # accumulation and a second backward on the same forward, without a reset: a sandboxed layer's grads live
        # in another process, and the numerical check that follows should see what the layer really leaves behind
        a, b, z = run(G, reset=False), run(G, reset=False, forward=False), run(0 * G, reset=False, forward=False)
        acc = [t for t in ("d" + k for k in self.params)
               if not same(a[t], b[t]) and same(z[t], b[t]) and np.abs(b[t]).max(initial=0) > self.atol]
        differ = [t for t in a if not same(a[t], b[t]) and t not in acc]
        affine = [t for t in g0 if np.abs(g0[t]).max(initial=0) > self.atol and t not in acc]
        nonlin = [t for t in g1 if not close(g2[t], 2 * g1[t], 1e-9, 1e-12) and t not in acc and t not in affine]
        self.probe(4, not nonlin and not affine, "; ".join([f"backward(0) gives nonzero {t}" for t in affine]
                                                          + [f"backward(2 dY) != 2 backward(dY) for {t}" for t in nonlin]))
        for t in affine:
            self.find("not-linear", f"backward is not linear in dY: backward(0) gives a nonzero {t} (a term that "
                      "does not multiply dY)", t)
        for t in nonlin:
            self.find("not-linear", f"backward is not linear in dY: backward(2 dY) is not 2 backward(dY) for {t}", t)
        self.probe(5, not acc and not differ, "; ".join([f"{t} grew (accumulated)" for t in acc]
                                                        + [f"{t} changed" for t in differ]))
        if acc:  # first among the findings: it explains the numerical mismatch too
            one = len(acc) == 1
            it, are = ("it", "is") if one else ("them", "are")
            msg = (f"gradients accumulated across calls instead of overwritten: {', '.join(acc)} {are} accumulated "
                   f"across backward calls ({', '.join(f'grads[{t[1:]!r}]' for t in acc)} += ...: every backward "
                   f"adds to {it}, and a backward with dY = 0 left {it} unchanged instead of zero); assign "
                   "grads[key] = ... in backward")
            self.diag.findings[:0] = [Finding("accumulated", msg, t) for t in acc]  # one per tensor, one sentence
        for t in differ:
            self.find("second-backward", f"a second backward on the same forward gives another {t}: backward "
                      "changes its own cache or the parameters", t)

    def cache(self, pristine, G) -> None:
        """Copies of the layer as it was before the checker's first forward: another instance's forward
        between a forward and its backward, and an earlier forward on other data (a sandboxed layer is
        copied in its child process; a random one is skipped: copies would draw other masks)."""
        if _find_rngs(self.layer) or pristine is None:
            return self.probe(7, None, "skipped (random layer)" if _find_rngs(self.layer) else
                              "skipped (the layer cannot be copied)")
        copies, inputs = [], self.inputs

        def run(obj, *xss):  # forwards on each input list, then one backward
            Y = [obj.forward(*[x.copy() for x in xs], training=self.training) for xs in xss][-1]
            return Y, self.grads_of(obj, obj.backward(G.copy()))

        try:
            try:
                for _ in range(3):  # one at a time: those made are released if the next one fails
                    copies.append(copy.deepcopy(pristine))
            except Exception as exc:  # noqa: BLE001
                return self.probe(7, None, f"skipped (the layer cannot be copied: {type(exc).__name__})")
            a, b, c = copies
            others = self.others()
            try:
                Y_ref, ref = run(c, inputs)
                a.forward(*[x.copy() for x in inputs], training=self.training)
                b.forward(*[x.copy() for x in others], training=self.training)  # another instance's forward between
                shared = self.grads_of(a, a.backward(G.copy()))
                copies.append(copy.deepcopy(pristine))
                Y_stale, stale = run(copies[-1], others, inputs)  # this instance: an earlier forward on other data
            except Exception as exc:  # noqa: BLE001
                return self.probe(7, None, f"skipped (copies of the layer raised {type(exc).__name__})")
        finally:
            _release(*copies)
        bad_y = not close(Y_ref, Y_stale, 1e-12, 1e-14)
        bad_shared, bad_stale = ([t for t in ref if t in d and not close(ref[t], d[t], 1e-12, 1e-14)]
                                 for d in (shared, stale))
        self.probe(7, not bad_shared and not bad_stale and not bad_y,
                   ", ".join((["Y"] if bad_y else []) + sorted(set(bad_shared + bad_stale))))
        if bad_y:
            self.find("stale-output", "forward returns what an earlier call computed: after a forward on other "
                      "data, forward(X) gives another Y than on a fresh copy of the layer (a value kept from the first "
                      "call, e.g. `if not hasattr(self, ...)`), so the layer ignores new inputs; compute the output "
                      "from this call's input every time", "Y")
        elif bad_shared:
            self.find("shared-cache", f"backward uses a cache overwritten by a later forward of another instance "
                      f"({', '.join(bad_shared)} change when a second layer of the same class runs forward in "
                      "between): the cache is shared, e.g. a class attribute or a global; store it on self in "
                      "forward", bad_shared[0])
        elif bad_stale:
            self.find("stale-cache", f"backward uses the cache of an earlier forward, not of the last one "
                      f"({', '.join(bad_stale)}): a cache set only on the first call (e.g. `if not hasattr(self, "
                      "'X'): self.X = X`) keeps the first input; overwrite the cache on every forward (self.X = X)",
                      bad_stale[0])

    def second_input(self, G) -> None:
        """Backward right at the check's input but wrong at another: state kept from an earlier call.

        The numerical check differentiates at one input only, so a backward that keeps what it saw
        first (a cache set once, a class attribute, a global) passes it. One directional derivative
        of ``sum(Y * G)`` (all tensors jointly) at the input, then at two others; named only when
        the first agrees and both others fail (a kink crossed by chance fails one, not both).
        """
        from .sandbox import RemoteLayer

        keys = ["@" + n for n in self.names]
        group = [k for k, x in zip(keys, self.inputs) if x.dtype.kind == "f"] + list(self.params)
        if not group or any(f.code in ("stale-cache", "shared-cache", "stale-output") for f in self.diag.findings):
            return
        fwd, agree = _f64(self.proxy, self.training), []
        points = [self.inputs, self.others(), self.others()]
        try:
            for xs in points:
                if len(agree) > 1 and agree[-1]:
                    break
                fwd(*xs)
                got = _grads_of(self.layer, self.bwd(G), self.names, xs, list(self.params))
                shapes = {"d" + k.lstrip("@"): np.shape(x) for k, x in zip(keys, xs)} | {
                    "d" + k: p.shape for k, p in self.params.items()}
                if set(got) != {"d" + k.lstrip("@") for k in group} or any(got[t].shape != shapes[t] for t in got):
                    return  # shapes are the other probes' business
                (u, d), = directional_derivatives(fwd, xs, self.params, G, input_names=keys, groups=[group],
                                                  n_dirs=1, rng=np.random.default_rng(self.rng.integers(2**32))
                                                  )[tuple(group)]
                terms = np.array([np.sum(got["d" + k.lstrip("@")] * u[k]) for k in group])
                agree.append(_agrees(float(terms.sum()), d, terms, 1e-5))
                if not agree[0]:
                    break  # wrong at the check's input already: the numerical check names it
        except GradcheckError:  # the layer refuses another input (a check of its own): nothing to say here
            if isinstance(self.layer, RemoteLayer) and self.layer.sandbox._dead:
                raise  # a timeout or a crash: reported as what stopped the check
            return
        if agree == [True, False, False]:
            self.find("stale-cache", "backward is right at the first input the layer saw but wrong at another one: "
                      "it uses state kept from an earlier call (a cache set only once, a class attribute or a "
                      "global); compute everything backward needs from the last forward's input and store it on "
                      "self in forward")


# --------------------------------------------------------------------------- check_vjp


def _resolve_op(op, vjp):
    """``(name, forward, vjps, jvps)`` of a function and its VJP(s), or of an autoprop primitive (by name)."""
    if isinstance(op, str):
        try:
            from autoprop.core.registry import PRIMITIVES
        except ImportError as exc:  # pragma: no cover
            raise UsageError("autoprop is not importable; pass op and vjp as functions") from exc
        if op not in PRIMITIVES:
            raise UsageError(f"autoprop has no primitive {op!r}; known: {', '.join(sorted(PRIMITIVES)[:20])}, ...")
        op = PRIMITIVES[op]
    name = getattr(op, "name", getattr(op, "__name__", "op"))
    prim = hasattr(op, "fwd") and hasattr(op, "vjps")
    vjp = op.vjps if prim and vjp is None else vjp
    if vjp is None:
        raise UsageError(f"primitive {name} is not differentiable (vjps=None)" if prim else
                         "check_vjp needs a vjp (or an autoprop primitive that has them)")
    return name, op.fwd if prim else op, vjp, getattr(op, "jvps", None) if prim else None


def _vjp_list(vjps, n: int) -> list:
    """One VJP per input from a callable (returning a tuple when ``n > 1``), a list, or autoprop's variadic rule."""
    if callable(vjps):
        return [vjps] if n == 1 else [lambda g, a, *args, i=i, **kw: vjps(g, a, *args, **kw)[i] for i in range(n)]
    return [vjps[i] for i in range(n)] if type(vjps).__name__ == "_Variadic" else list(vjps)


def check_vjp(op: Any, vjp: Any = None, *inputs: Any, kwargs: Mapping[str, Any] | None = None, seed: int = 0,
              rtol: float = 1e-6, atol: float = 1e-9, eps: float = DEFAULT_EPS, n_dirs: int = 3,
              name: str | None = None) -> CheckResult:
    r"""Check one operation's vector-Jacobian product alone: a dot-product test and an element scan.

    Per differentiable input ``x_i``: :math:`\langle u, J_i^T v\rangle` (from ``vjp``) against
    :math:`\langle J_i u, v\rangle` for ``n_dirs`` random ``u``, ``v`` (``J_i u`` from the primitive's
    JVP rule, else central differences along ``u``, zero at kinks): record ``<u,J^T v> i``; and
    ``J_i^T v`` against central differences of ``sum(op(*inputs) * v)``, kinks excluded: ``d<i>`` (``dx``).

    Parameters
    ----------
    op : callable, str or autoprop Primitive
        ``op(*inputs, **kwargs) -> ndarray``, or a name / entry of ``autoprop.core.registry.PRIMITIVES``.
    vjp : callable, sequence of callables, or None
        ``vjp_i(g, ans, *inputs, **kwargs) -> dx_i`` per input (None: not differentiable), one
        callable for a one-input op, or None: the primitive's own ``vjps``.
    *inputs : array_like
        The arguments; float arrays are differentiated (float64 copies).
    kwargs : dict, optional
        Keyword arguments of the op; ``seed``, ``rtol``, ``atol``, ``eps``, ``n_dirs``, ``name`` as in ``check_layer``.

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
    >>> check_vjp(np.tanh, lambda g, ans, x: g * (1 - ans**2), np.linspace(-2, 2, 5)).passed
    True
    """
    rtol, atol = V.check_tolerances(rtol, atol)
    opname, fwd, vjps, jvps = _resolve_op(op, vjp)
    owner, kwargs = name or opname, dict(kwargs or {})
    xs = [np.array(x, dtype=np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in inputs]
    if not any(x.dtype.kind == "f" for x in xs):
        raise UsageError(f"check_vjp({owner}): no floating-point input to differentiate.")
    rng = np.random.default_rng(seed)
    ans = np.asarray(V.call_student(fwd, *[x.copy() for x in xs], owner=owner, call="forward", **kwargs),
                     dtype=np.float64)
    v = rng.standard_normal(ans.shape)
    vjp_list = _vjp_list(vjps, len(xs))
    records, notes, manual, numerical = [], [], {}, {}
    for i, x in enumerate(xs):
        if x.dtype.kind != "f" or i >= len(vjp_list) or vjp_list[i] is None:
            continue
        t = f"d{i}" if len(xs) > 1 else "dx"
        g = V.call_student(vjp_list[i], v.copy(), ans.copy(), *[y.copy() for y in xs], owner=owner,
                           call=f"vjp[{i}](g, ans, *inputs)", **kwargs)
        manual[t] = g = V.check_output(g, owner=owner, tensor=t, produced_by=f"vjp[{i}]", expected_shape=x.shape,
                                       expected_why=f"the shape of input {i}")
        work = [y.copy() for y in xs]
        sc = numerical_gradient(lambda work=work: float(np.sum(np.asarray(fwd(*[w.copy() for w in work], **kwargs),
                                                                          dtype=np.float64) * v)),
                                work[i], eps=eps, detail=True)
        numerical[t], kinks = sc.grad, kink_mask(g, sc.grad, sc.d_plus, sc.d_minus, rtol=rtol, atol=atol)
        records.append(TensorRecord(t, tuple(x.shape), "gradient", [compare(g, sc.grad, "manual-vs-numerical",
                                                                            rtol=rtol, atol=atol, kinks=kinks)]))
        if not records[-1].passed and (f := name_signature(t, g, sc.grad)) is not None:
            notes.append(f.message)
        lhs, rhs, src = _dot_products(fwd, jvps, xs, i, g, ans, v, kinks, rng, n_dirs, eps, kwargs)
        dot = compare(np.array(lhs), np.array(rhs), "manual-vs-numerical", rtol=rtol, atol=atol * np.sqrt(x.size),
                      how="directional")
        records.append(TensorRecord(f"<u,J^T v> {i}", (n_dirs,), "gradient", [dot]))
        notes.append(f"input {i}: J u from {src}")
    if not records:
        raise UsageError(f"check_vjp({owner}): no input has a VJP to check.")
    return CheckResult(name=owner, kind="op", records=records, rtol=rtol, atol=atol, eps=eps, seed=seed,
                       input_shape=tuple(tuple(x.shape) for x in xs), notes=notes,
                       gradients={"manual": manual, "numerical": numerical})


def _dot_products(fwd, jvps, xs, i, g, ans, v, kinks, rng, n_dirs, eps, kwargs):
    """The dot-product test's two sides, ``<u, J^T v>`` and ``<J u, v>``, and where ``J u`` came from."""
    try:
        jvp_i = None if jvps is None else jvps[i]
    except (IndexError, TypeError, KeyError):
        jvp_i = None
    lhs, rhs, src, x = [], [], "central differences", xs[i]
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
            at = [np.asarray(fwd(*[x + s * u if j == i else y.copy() for j, y in enumerate(xs)], **kwargs),
                             dtype=np.float64) for s in (h, -h)]
            Ju, src = kernel("central", at, [h, -h])[0], "central differences"
        rhs.append(float(np.sum(Ju * v)))
    return lhs, rhs, src
