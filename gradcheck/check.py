r"""Three-way gradient check of a layer or loss: manual vs tape vs numerical.

For a layer, three gradients of :math:`L = \sum Y \odot G` (``G`` a seeded
random upstream gradient) are computed for the input and every parameter:

* **manual**: ``layer.backward(G)`` and ``layer.grads`` (the hand derivation);
* **tape**: the autoprop twin (``autoprop.layers.<SameName>``) with the manual
  layer's parameter values copied in, differentiated by ``GradientTape``;
* **numerical**: central differences (:mod:`gradcheck.numerical`).

Every pair is compared element-wise with the relative error

.. math:: r_i = \frac{|a_i - b_i|}{\max(|a_i| + |b_i|,\ \tau)}, \qquad
          \tau = \mathrm{atol} / \mathrm{rtol},

and a pair passes when :math:`\max_i r_i \le \mathrm{rtol}`. The floor
:math:`\tau` makes that test exactly "``|a-b| <= atol`` or
``|a-b| <= rtol*(|a|+|b|)``" per element, so gradients that are zero up to
rounding do not report a relative error of 1. The symmetric denominator
:math:`|a|+|b|` is the one used in CS231n's gradient-check notes; it bounds
:math:`r` by 1.

Default ``atol`` (:func:`default_atol`). A central difference divides the
round-off of two evaluations of :math:`L` by the step: each of the terms
:math:`Y_i G_i` summed into :math:`L` carries a relative rounding error of about
:math:`u` (machine epsilon, 2.2e-16), so the estimate is off by up to about

.. math:: \mathrm{atol} = \max\Big(10^{-9},\ \frac{u \sum_i |Y_i G_i|}{h}\Big),
          \qquad h = \varepsilon \ (\varepsilon/2 \text{ for Richardson}),

i.e. :math:`u|L|/h` with :math:`|L|` measured before cancellation
(:math:`\sum|Y_i G_i| \ge |L|`; the smallest step :math:`h = \varepsilon` is used,
so it is an upper bound). That is what ``check_layer`` uses when ``atol`` is not
given: 1e-9 for small layers (a Linear 5->3 at batch 8 has
:math:`u\sum|YG|/h \approx 10^{-9}`), 2e-7 for a Conv2D 8->16 on 4x8x16x16
(measured round-off 5e-9, which the fixed 1e-9 failed). A planted bug changes
gradients by O(1) and still fails. For a loss, :math:`|L|` is the loss value.
The complex step has no cancellation and keeps 1e-9.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _validation as V
from .errors import StudentCodeError, TwinError, UsageError
from .numerical import (
    DEFAULT_EPS,
    METHODS,
    default_eps,
    directional_derivatives,
    layer_numerical_gradients,
    numerical_gradient,
)

__all__ = [
    "PAIRS",
    "ALL_PAIRS",
    "relative_error",
    "compare",
    "kink_mask",
    "MODES",
    "Comparison",
    "TensorRecord",
    "CheckResult",
    "check_layer",
    "check_loss",
    "build_twin",
    "default_atol",
    "atol_swamp_notes",
    "ATOL_FLOOR",
    "NONDETERMINISTIC",
    "TapeUnavailable",
]

#: The three-way comparison pairs, in display order.
PAIRS = ("manual-vs-numerical", "tape-vs-numerical", "manual-vs-tape")

#: Every pair a result may hold: :data:`PAIRS`, ``manual-vs-reference`` (a layer of
#: ours given the same parameters, see ``check_layer(reference=...)``) and
#: ``call1-vs-call2`` (two forwards on the same input, see :data:`NONDETERMINISTIC`).
ALL_PAIRS = PAIRS + ("manual-vs-reference", "call1-vs-call2")

#: Start of the note of a result whose forward gave different outputs for the same input.
NONDETERMINISTIC = "non-deterministic forward"

#: Smallest default absolute tolerance (see :func:`default_atol`).
ATOL_FLOOR = 1e-9

#: Numerical modes of :func:`check_layer`.
MODES = ("full", "fast", "sample")

_TINY = float(np.finfo(np.float64).tiny)


def relative_error(a: Any, b: Any, tiny: float = _TINY) -> np.ndarray:
    """Element-wise relative error ``|a - b| / max(|a| + |b|, tiny)``.

    Parameters
    ----------
    a, b : array_like
        Broadcastable arrays (converted to float64).
    tiny : float, default smallest normal float64
        Floor of the denominator. With the default, ``a == b == 0`` gives 0.
        :func:`compare` passes ``atol / rtol``.

    Returns
    -------
    ndarray of float64, values in [0, 1].

    Examples
    --------
    >>> float(relative_error(1.0, 1.1))  # 0.1 / 2.1
    0.047619047619047...
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), tiny)


def default_atol(Y: Any, G: Any, eps: float, method: str = "central") -> float:
    r"""The default absolute tolerance: the round-off of a finite difference of ``L = sum(Y * G)``.

    ``max(ATOL_FLOOR, u * sum|Y * G| / h)`` with ``u`` the float64 machine epsilon and
    ``h = eps`` (``eps / 2`` for Richardson, whose smaller step enters too); see the
    module docstring. The complex step has no cancellation: ``ATOL_FLOOR``.

    Parameters
    ----------
    Y : array_like
        The forward output (or, for a loss, the loss value).
    G : array_like
        The upstream gradient (1 for a loss).
    eps : float
        Relative step of the finite differences.
    method : str, default "central"

    Returns
    -------
    float

    Examples
    --------
    >>> default_atol(np.ones(10), np.ones(10), 6.06e-6)  # small: the floor
    1e-09
    >>> round(default_atol(np.ones(100_000), np.ones(100_000), 6.06e-6), 9)  # u * 1e5 / 6.06e-6
    3.664e-06
    """
    if method == "complex":
        return ATOL_FLOOR
    h = float(eps) / (2.0 if method == "richardson" else 1.0)
    mag = float(np.sum(np.abs(np.asarray(Y, dtype=np.float64) * np.asarray(G, dtype=np.float64))))
    if not np.isfinite(mag):
        return ATOL_FLOOR
    return max(ATOL_FLOOR, float(np.finfo(np.float64).eps) * mag / h)


def atol_swamp_notes(atol: float, grads: dict[str, list[np.ndarray]], how: str = "default") -> list[str]:
    """Warnings for tensors whose every gradient value is smaller than ``atol``.

    An element passes when ``|a - b| <= max(rtol * (|a| + |b|), atol)`` (see
    :func:`relative_error` and :func:`compare`); if ``atol`` exceeds the largest
    ``|gradient|`` of a tensor, a wrong gradient of that size passes too (e.g.
    ``db = dY.mean(0)`` instead of ``dY.sum(0)``), so the check says nothing.

    Parameters
    ----------
    atol : float
    grads : dict of str to list of ndarray
        Display name (``"db"``) -> the gradients of that tensor being compared
        (manual, tape, reference, numerical).
    how : str, default "default"
        Where ``atol`` came from, for the message (``"default"`` or ``"given"``).

    Returns
    -------
    list of str
        One ``WARNING: ...`` line per such tensor (empty if none).
    """
    out = []
    for name, arrays in grads.items():
        finite = [np.abs(np.asarray(a, dtype=np.float64)) for a in arrays if np.size(a)]
        if not finite:
            continue
        biggest = max(float(np.max(a)) for a in finite)
        if np.isfinite(biggest) and atol > biggest:
            out.append(f"WARNING: the {how} atol={atol:.3g} is larger than every |{name}| (at most {biggest:.3g}): "
                       f"the check of {name} would pass any gradient of that size. Pass a smaller --atol / atol= "
                       "(or scale the layer down) for a meaningful check")
    return out


@dataclass
class Comparison:
    """One pair of gradients of one tensor, compared element-wise.

    Attributes
    ----------
    pair : str
        One of :data:`PAIRS`, e.g. ``"manual-vs-numerical"``; ``a`` is the first name.
    max_abs_error : float
        ``max |a - b|`` over elements.
    max_rel_error : float
        ``max r_i`` (see the module docstring; floor ``atol/rtol``).
    worst_index : tuple of int
        Index of the element with the largest ``r_i`` (the one deciding pass/fail).
    worst_a, worst_b : float
        The two values at ``worst_index``.
    passed : bool
        ``max_rel_error <= rtol``.
    how : {"elements", "directional", "sample"}
        What was compared: every element, random directional derivatives
        ``<g, u>`` (fast mode; ``worst_index`` is then ``(direction,)``), or
        sampled elements.
    n_compared : int
        Number of elements (or directions) compared.
    kinks : list of tuple of int
        Elements excluded as "at a kink": the one-sided differences disagree and
        the analytic value lies between them (see :func:`kink_mask`).
    norm_rel_error : float
        ``||a-b|| / (||a||+||b||)`` over the compared elements (NaN for directional).
    """

    pair: str
    max_abs_error: float
    max_rel_error: float
    worst_index: tuple[int, ...]
    worst_a: float
    worst_b: float
    passed: bool
    how: str = "elements"
    n_compared: int = -1
    kinks: list[tuple[int, ...]] = field(default_factory=list)
    norm_rel_error: float = float("nan")

    @property
    def names(self) -> tuple[str, str]:
        """The two compared sources, e.g. ``("manual", "numerical")``."""
        a, b = self.pair.split("-vs-")
        return a, b


def compare(a: np.ndarray, b: np.ndarray, pair: str, *, rtol: float, atol: float,
            mask: np.ndarray | None = None, kinks: np.ndarray | None = None,
            how: str = "elements") -> Comparison:
    """Compare two arrays of the same shape; see :class:`Comparison`.

    Parameters
    ----------
    a, b : ndarray of float64, same shape
    pair : str
        Label, e.g. ``"manual-vs-numerical"``.
    rtol : float
        Relative tolerance (> 0).
    atol : float
        Absolute tolerance (>= 0); enters as the denominator floor ``atol/rtol``.
    mask : ndarray of bool, optional
        Compare only these elements (sample mode); default all.
    kinks : ndarray of bool, optional
        Elements at a kink: excluded from the verdict and listed in ``Comparison.kinks``.
    how : str, default "elements"
        Stored in ``Comparison.how``.

    Returns
    -------
    Comparison
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    use = np.ones(a.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool).copy()
    kink_list: list[tuple[int, ...]] = []
    if kinks is not None:
        k = np.asarray(kinks, dtype=bool) & use
        kink_list = [tuple(int(i) for i in ix) for ix in np.argwhere(k)]
        use &= ~k
    if a.size == 0 or not use.any():
        return Comparison(pair, 0.0, 0.0, (), float("nan"), float("nan"), True, how, 0, kink_list, 0.0)
    aa = np.where(use, a, 0.0)
    bb = np.where(use, b, 0.0)
    abs_err = np.abs(aa - bb)
    rel = relative_error(aa, bb, tiny=max(atol / rtol, _TINY))
    flat = int(np.argmax(rel))
    idx = tuple(int(i) for i in np.unravel_index(flat, a.shape))
    max_rel = float(rel.flat[flat])
    den = np.linalg.norm(aa) + np.linalg.norm(bb)
    return Comparison(
        pair=pair,
        max_abs_error=float(abs_err.max()),
        max_rel_error=max_rel,
        worst_index=idx,
        worst_a=float(a[idx]),
        worst_b=float(b[idx]),
        passed=bool(max_rel <= rtol),
        how=how,
        n_compared=int(use.sum()),
        kinks=kink_list,
        norm_rel_error=float(np.linalg.norm(aa - bb) / den) if den > 0 else 0.0,
    )


def kink_mask(analytic: np.ndarray, numerical: np.ndarray, d_plus: np.ndarray | None,
              d_minus: np.ndarray | None, *, rtol: float, atol: float) -> np.ndarray:
    """Elements "at a kink": failing elements whose one-sided differences disagree.

    An element is at a kink when (1) it fails the comparison of ``analytic`` and
    ``numerical``, (2) its forward and backward quotients ``d_plus`` and
    ``d_minus`` differ by more than 1% of their magnitudes (a smooth function
    gives a difference of about ``h |f''|``, tiny at the default step), and
    (3) the analytic value lies between them (widened by the tolerance): any
    value there is a valid one-sided derivative (e.g. ``relu'(0)`` in ``[0, 1]``).
    Such an element is reported and excluded from the verdict. Example (case
    C28): relu at ``x = 1e-4`` with ``h = 5e-3``: ``d_plus = 1``, ``d_minus = 0.02``,
    central 0.51, analytic 1.0: at a kink.

    Parameters
    ----------
    analytic, numerical : ndarray, same shape
    d_plus, d_minus : ndarray or None
        One-sided quotients (NaN where not evaluated); None gives no kinks.
    rtol, atol : float

    Returns
    -------
    ndarray of bool, shape of ``analytic``
    """
    a = np.asarray(analytic, dtype=np.float64)
    if d_plus is None or d_minus is None:
        return np.zeros(a.shape, dtype=bool)
    n = np.asarray(numerical, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        fails = relative_error(a, n, tiny=max(atol / rtol, _TINY)) > rtol
        lo = np.minimum(d_plus, d_minus)
        hi = np.maximum(d_plus, d_minus)
        asym = (hi - lo) > 0.01 * (np.abs(d_plus) + np.abs(d_minus)) + 10 * atol
        slack = rtol * (np.abs(lo) + np.abs(hi)) + atol
        between = (a >= lo - slack) & (a <= hi + slack)
    return np.nan_to_num(fails & asym & between, nan=0).astype(bool)


@dataclass
class TensorRecord:
    """All comparisons for one tensor.

    Attributes
    ----------
    tensor : str
        ``"dX"`` (input gradient), ``"d<key>"`` for ``params[key]`` (``"dW"``,
        ``"db"``, ``"d0.W"``), ``"dy_pred"`` for a loss, or ``"Y"`` / ``"L"``
        for the forward values of manual vs tape.
    shape : tuple of int
    kind : {"gradient", "forward"}
    comparisons : list of Comparison
    """

    tensor: str
    shape: tuple[int, ...]
    kind: str
    comparisons: list[Comparison] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when every comparison of this tensor passed."""
        return all(c.passed for c in self.comparisons)

    def get(self, pair: str) -> Comparison | None:
        """The comparison for ``pair``, or None when that pair was not computed."""
        for c in self.comparisons:
            if c.pair == pair:
                return c
        return None


@dataclass
class CheckResult:
    """Outcome of :func:`check_layer` or :func:`check_loss`.

    Attributes
    ----------
    name : str
        Layer or loss name (class name unless given).
    kind : {"layer", "loss"}
    records : list of TensorRecord
        Forward record first (when a twin was compared), then ``dX`` / ``dy_pred``,
        then one per parameter in ``params`` order.
    rtol, atol, eps : float
        Tolerances and finite-difference step used.
    seed : int
    input_shape : tuple of int, or tuple of tuples for several inputs
    twin : str or None
        Qualified name of the autoprop twin used, or None.
    twin_note : str
        Why there is no tape column (empty when a twin was used).
    notes : list of str
        Other remarks, e.g. an integer input that has no gradient.
    gradients : dict
        ``{"manual"|"tape"|"numerical": {tensor: ndarray}}``, the raw gradients
        (numerical: NaN where not estimated; absent for tensors that passed the
        fast mode's directional test).
    mode : {"full", "fast", "sample"}
    method : str
        Finite-difference method (:data:`gradcheck.numerical.METHODS`).
    """

    name: str
    kind: str
    records: list[TensorRecord]
    rtol: float
    atol: float
    eps: float
    seed: int
    input_shape: tuple[int, ...]
    twin: str | None = None
    twin_note: str = ""
    notes: list[str] = field(default_factory=list)
    gradients: dict[str, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)
    mode: str = "full"
    method: str = "central"

    @property
    def passed(self) -> bool:
        """True when every comparison of every tensor is within tolerance."""
        return all(r.passed for r in self.records)

    @property
    def kinks(self) -> dict[str, list[tuple[int, ...]]]:
        """``{tensor: [index, ...]}`` of elements excluded as "at a kink" (manual vs numerical)."""
        out = {}
        for r in self.records:
            c = r.get("manual-vs-numerical")
            if c is not None and c.kinks:
                out[r.tensor] = list(c.kinks)
        return out

    @property
    def failures(self) -> list[tuple[TensorRecord, Comparison]]:
        """The failing (record, comparison) pairs, in record order."""
        return [(r, c) for r in self.records for c in r.comparisons if not c.passed]

    @property
    def failing_tensors(self) -> list[str]:
        """Names of tensors with at least one failing comparison, e.g. ``["db"]``."""
        return [r.tensor for r in self.records if not r.passed]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per (tensor, pair): name, tensor, shape, pair, errors, worst element, passed."""
        out = []
        for r in self.records:
            for c in r.comparisons:
                out.append(
                    {
                        "name": self.name,
                        "tensor": r.tensor,
                        "kind": r.kind,
                        "shape": r.shape,
                        "pair": c.pair,
                        "max_abs_error": c.max_abs_error,
                        "max_rel_error": c.max_rel_error,
                        "worst_index": c.worst_index,
                        "worst_a": c.worst_a,
                        "worst_b": c.worst_b,
                        "passed": c.passed,
                        "how": c.how,
                        "n_compared": c.n_compared,
                        "kinks": len(c.kinks),
                        "norm_rel_error": c.norm_rel_error,
                    }
                )
        return out

    def table(self, details: bool = True) -> str:
        """Text table (see :func:`gradcheck.report.format_table`)."""
        from .report import format_table

        return format_table([self], details=details)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary (no raw gradient arrays)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "passed": self.passed,
            "rtol": self.rtol,
            "atol": self.atol,
            "eps": self.eps,
            "seed": self.seed,
            "mode": self.mode,
            "method": self.method,
            "input_shape": json_shape(self.input_shape),
            "twin": self.twin,
            "twin_note": self.twin_note,
            "notes": list(self.notes),
            "rows": [
                {**row, "shape": list(row["shape"]), "worst_index": list(row["worst_index"]),
                 "norm_rel_error": None if np.isnan(row["norm_rel_error"]) else row["norm_rel_error"],
                 "worst_a": None if np.isnan(row["worst_a"]) else row["worst_a"],
                 "worst_b": None if np.isnan(row["worst_b"]) else row["worst_b"]}
                for row in self.rows
            ],
        }

    def __str__(self) -> str:
        return self.table()


def json_shape(shape):
    """A shape (or tuple of shapes) as nested lists, for JSON."""
    return [json_shape(s) if isinstance(s, tuple) else int(s) for s in shape]


# --------------------------------------------------------------------------- twins


def _autoprop_module(kind: str):
    """``autoprop.layers`` or ``autoprop.losses``, or None when not importable."""
    import importlib

    try:
        return importlib.import_module("autoprop.layers" if kind == "layer" else "autoprop.losses")
    except ImportError:
        return None


def _infer_kwargs(cls: type, obj: Any, owner: str) -> dict[str, Any]:
    """Constructor kwargs for ``cls`` read from same-named attributes of ``obj``."""
    kwargs: dict[str, Any] = {}
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return kwargs
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in ("rng", "name"):
            continue
        if hasattr(obj, p.name):
            kwargs[p.name] = getattr(obj, p.name)
        elif p.default is p.empty:
            raise TwinError(
                V.paragraph(
                    f"Cannot build the autoprop twin {cls.__module__}.{cls.__name__} of {owner}:",
                    f"its constructor needs {p.name!r} and {owner} has no attribute of that name.",
                    "Pass init={...} with the constructor arguments, or twin=<a built twin>.",
                )
            )
    return kwargs


def build_twin(obj: Any, kind: str = "layer", init: Mapping[str, Any] | None = None):
    """Build the autoprop twin of a manual layer or loss, with the same parameter values.

    The twin's class is the class of the same name in ``autoprop.layers``
    (``kind="layer"``) or ``autoprop.losses`` (``kind="loss"``). Constructor
    arguments come from ``init`` when given, otherwise from same-named attributes
    of ``obj`` (``in_features``, ``alpha``, ...). A container with a ``layers``
    attribute and a ``*layers`` constructor (``Sequential``) gets the twins of its
    children. Parameter values are then copied with
    ``twin.variables[k].assign(obj.params[k])``.

    Parameters
    ----------
    obj : object
        The manual layer or loss.
    kind : {"layer", "loss"}
    init : dict, optional
        Constructor keyword arguments for the twin.

    Returns
    -------
    twin : object or None
        None when autoprop has no class of that name.
    note : str
        Why there is no twin, or "" when there is one.

    Raises
    ------
    TwinError
        If the class exists but cannot be built, or its ``variables`` differ from
        ``obj.params`` in keys or shapes.
    """
    mod = _autoprop_module(kind)
    cname = type(obj).__name__
    owner = cname
    if mod is None:
        return None, f"autoprop.{'layers' if kind == 'layer' else 'losses'} is not importable"
    cls = getattr(mod, cname, None)
    if not isinstance(cls, type):
        return None, f"no class {mod.__name__}.{cname}"
    try:
        sig = inspect.signature(cls)
        varpos = any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())
    except (TypeError, ValueError):
        varpos = False
    children = getattr(obj, "layers", None)
    try:
        if init is not None:
            twin = cls(**dict(init))
        elif varpos and isinstance(children, Sequence):
            sub = []
            for child in children:
                t, note = build_twin(child, "layer")
                if t is None:
                    raise TwinError(f"Cannot build the twin of {owner}: child {type(child).__name__}: {note}.")
                sub.append(t)
            twin = cls(*sub)
        else:
            twin = cls(**_infer_kwargs(cls, obj, owner))
    except TwinError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise TwinError(
            V.paragraph(
                f"Building the autoprop twin {mod.__name__}.{cname} of {owner} raised",
                f"{type(exc).__name__}: {exc}.",
                "Pass init={...} with its constructor arguments, or twin=None to skip the tape.",
            )
        ) from exc
    if kind == "layer":
        twin = _in_layout(twin, copy_params_to_twin(obj, twin, owner), owner)
    return twin, ""


def _reversed_2d(a_shape, b_shape) -> bool:
    """A 2-D non-square shape and its reverse: the same weights stored (in, out) and (out, in)."""
    a, b = tuple(a_shape), tuple(b_shape)
    return len(a) == len(b) == 2 and a[0] != a[1] and a == b[::-1]


class _TransposedTwin:
    """An autoprop twin whose 2-D weights are the transpose of the checked layer's.

    A layer storing ``W`` as (in, out) with ``Y = X @ W`` computes the same function
    as autoprop's (out, in) layer with ``W.T``; the twin gets ``W.T`` and its tape
    gradient ``dW`` is transposed back, so it is compared in the layer's own layout.
    """

    def __init__(self, twin: Any, transposed: list[str], owner: str):
        self.twin, self.transposed, self.owner = twin, list(transposed), owner
        shown = ", ".join(f"params[{k!r}]" for k in transposed)
        self.notes = [f"the twin's {'weight is' if len(transposed) == 1 else 'weights are'} the transpose of "
                      f"{shown} ({owner} stores (in, out), autoprop (out, in)); its gradients are transposed back"]

    def tape_gradients(self, inputs, keys, G, training):
        Y, grads = _tape_layer(self.twin, inputs, keys, G, training, self.owner)
        return Y, {k: g.T if k in self.transposed else g for k, g in grads.items()}

    def __call__(self, *args, **kwargs):
        return self.twin(*args, **kwargs)

    def __getattr__(self, name):  # fix_mask, variables, ... of the autoprop layer
        if name == "twin":
            raise AttributeError(name)
        return getattr(self.twin, name)


def _in_layout(twin: Any, transposed: list[str], owner: str) -> Any:
    """``twin``, or a :class:`_TransposedTwin` named like it when some weights were transposed."""
    if not transposed:
        return twin
    cls = type(type(twin).__name__, (_TransposedTwin,), {"__module__": type(twin).__module__})
    return cls(twin, transposed, owner)


def copy_params_to_twin(obj: Any, twin: Any, owner: str) -> list[str]:
    """``twin.variables[k].assign(obj.params[k])`` for every key, after checking keys and shapes.

    A 2-D non-square parameter whose shape is the reverse of the variable's (a Linear
    storing ``W`` as (in, out), autoprop as (out, in)) is assigned transposed.

    Returns
    -------
    list of str
        The keys assigned transposed.

    Raises
    ------
    TwinError
        If the key sets or shapes differ, or ``twin`` has no ``variables`` dict.
    """
    params = getattr(obj, "params", None) or {}
    variables = getattr(twin, "variables", None)
    if not isinstance(variables, Mapping):
        raise TwinError(f"The twin of {owner} has no 'variables' dict; got {type(variables).__name__}.")
    if set(variables) != set(params):
        raise TwinError(
            V.paragraph(
                f"The twin {type(twin).__name__} of {owner} has variables {sorted(variables)}",
                f"but {owner}.params has keys {sorted(params)}; they must match.",
            )
        )
    transposed = [k for k, p in params.items() if _reversed_2d(variables[k].shape, np.shape(p))]
    for k, p in params.items():
        if k in transposed:
            variables[k].assign(np.array(p, dtype=np.float64).T.copy())
            continue
        if tuple(variables[k].shape) != tuple(np.shape(p)):
            raise TwinError(
                f"The twin of {owner}: variables[{k!r}] has shape {tuple(variables[k].shape)}, "
                f"params[{k!r}] has shape {tuple(np.shape(p))}."
            )
        variables[k].assign(np.array(p, dtype=np.float64))
    return transposed


def _resolve_twin(obj, twin, init, kind):
    if twin is None:
        return None, "add --twin to compare with the tape (twin='auto' in Python)"
    if isinstance(twin, str):
        if twin != "auto":
            raise UsageError(f"twin must be 'auto', None or an autoprop object; got {twin!r}.")
        if init is not None:
            return build_twin(obj, kind, init)  # explicit arguments: a failure is an error
        try:
            return build_twin(obj, kind, init)
        except TwinError as exc:  # e.g. a student class that shares a name with an autoprop class
            return None, f"the autoprop class of that name could not be used as twin: {exc}"
    if kind == "layer" and not callable(getattr(twin, "tape_gradients", None)):
        twin = _in_layout(twin, copy_params_to_twin(obj, twin, type(obj).__name__), type(obj).__name__)
    return twin, ""


def _twin_call(fn, *args, owner, what, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        raise TwinError(
            f"The autoprop twin of {owner} raised {type(exc).__name__} in {what}: {exc}"
        ) from exc


def _to_numpy(t) -> np.ndarray:
    return np.array(t.numpy() if hasattr(t, "numpy") else t, dtype=np.float64)


def _tape_layer(twin, inputs, keys, G, training, owner):
    """Tape gradients of ``sum(twin(*inputs) * G)``; returns (Y, {key: grad})."""
    if callable(getattr(twin, "tape_gradients", None)):  # the tape runs elsewhere (a sandbox)
        Y, grads = twin.tape_gradients(inputs, keys, G, training)
        return np.asarray(Y, dtype=np.float64), {k: np.asarray(g, dtype=np.float64) for k, g in grads.items()}
    import autoprop as ap

    def run():
        xs = [ap.constant(x) for x in inputs]
        with ap.GradientTape() as tape:
            for x in xs:
                if x.dtype.kind == "f":
                    tape.watch(x)
            Y = twin(*xs, training=training)
            L = ap.sum(Y * ap.constant(G))
        sources = {k: x for k, x in zip(keys, xs) if x.dtype.kind == "f"}
        sources.update(dict(twin.variables))
        return Y, tape.gradient(L, sources)

    Y, grads = _twin_call(run, owner=owner, what="forward/tape.gradient")
    shapes = {k: x.shape for k, x in zip(keys, inputs)}
    out = {}
    for k, g in grads.items():
        shape = shapes[k] if k in shapes else tuple(twin.variables[k].shape)
        out[k] = np.zeros(shape) if g is None else _to_numpy(g)
    return _to_numpy(Y), out


def _tape_loss(twin, y_true, y_pred, owner):
    import autoprop as ap

    def run():
        yp = ap.constant(y_pred)
        with ap.GradientTape() as tape:
            tape.watch(yp)
            L = twin(y_true, yp)
        return L, tape.gradient(L, yp)

    L, g = _twin_call(run, owner=owner, what="loss/tape.gradient")
    return float(_to_numpy(L)), (np.zeros(y_pred.shape) if g is None else _to_numpy(g))


def _records(names_shapes, sources: dict[str, dict[str, np.ndarray]], rtol, atol) -> list[TensorRecord]:
    recs = []
    for key, tname, shape in names_shapes:
        rec = TensorRecord(tensor=tname, shape=tuple(shape), kind="gradient")
        for pair in PAIRS:
            a, b = pair.split("-vs-")
            if a in sources and b in sources:
                rec.comparisons.append(compare(sources[a][key], sources[b][key], pair, rtol=rtol, atol=atol))
        recs.append(rec)
    return recs


# --------------------------------------------------------------------------- public checks


def check_layer(
    layer: Any,
    X: Any,
    *,
    twin: Any = "auto",
    init: Mapping[str, Any] | None = None,
    seed: int = 0,
    rtol: float = 1e-6,
    atol: float | None = None,
    training: bool = False,
    eps: float | None = None,
    name: str | None = None,
    mode: str = "full",
    method: str = "central",
    n_dirs: int = 2,
    n_samples: int = 8,
    batched: bool | str = "auto",
    reference: Any = None,
    upstream: Any = None,
) -> CheckResult:
    """Check a layer's gradients: manual (``backward``) vs tape vs numerical.

    Parameters
    ----------
    layer : object
        Follows the manualprop protocol: ``params`` (dict of float ndarrays; may be
        absent for parameter-free layers), ``grads``, ``forward(X, training=False)``,
        ``backward(dY) -> dX``. No base class needed. Its parameters are perturbed in
        place during the numerical pass and restored afterwards. A layer with
        several inputs (``forward(Q, K, V, training=False)``) returns a tuple
        ``(dQ, dK, dV)`` from ``backward``; a layer whose input is integer
        (indices, e.g. ``Embedding``) has no input gradient and may return None.
    X : ndarray, tuple of int, or list of those
        The input array, or its shape as a tuple of ints (then ``X ~ N(0, 1)``
        drawn from ``seed``). For several inputs, a list (or tuple) whose items are
        arrays or shapes, e.g. ``[(2, 4, 3), (2, 5, 3), (2, 5, 6)]``. Float inputs are
        converted to float64 copies (float32 warns, see
        :func:`gradcheck._validation.as_float64`); integer inputs are indices and
        are not differentiated. See :func:`gradcheck._validation.layer_inputs`.
    twin : "auto", None or object, default "auto"
        "auto": the class of the same name in ``autoprop.layers``, when there is
        one and it can be built from ``layer``'s attributes (see :func:`build_twin`;
        otherwise there is no tape column and ``twin_note`` says why); None: no
        tape comparison; an object: a built autoprop layer (its variables are
        overwritten with ``layer.params``).
    init : dict, optional
        Constructor kwargs for an "auto" twin (default: read from ``layer``'s
        attributes). When given, a twin that cannot be built raises TwinError.
    seed : int, default 0
        Seeds the inputs given as shapes and the upstream gradient ``G ~ N(0, 1)``.
    rtol : float, default 1e-6
    atol : float, optional
        Pass when every element has ``|a-b| <= atol`` or ``|a-b| <= rtol*(|a|+|b|)``.
        Default :func:`default_atol`: ``max(1e-9, u * sum|Y*G| / eps)``, the round-off
        of the finite differences, which grows with the size of the layer.
    training : bool, default False
        Passed to ``forward``. Stochastic layers must be deterministic for a check:
        the forward is called twice on the same input first, and when the outputs
        differ the result fails with one record ``Y`` (pair ``call1-vs-call2``) and a
        note starting with :data:`NONDETERMINISTIC`; no finite differences are taken
        (they would be meaningless, and their one-sided quotients would pass as
        kinks). A layer with ``fix_mask`` (``manualprop.Dropout``) whose mask is
        fixed gives its mask to the twin (``twin.fix_mask(mask)``).
    eps : float, optional
        Relative finite-difference step; default :func:`gradcheck.numerical.default_eps`
        of ``method`` (6.06e-6 for central differences).
    name : str, optional
        Display name; default the class name.
    mode : {"full", "fast", "sample"}, default "full"
        ``"full"``: every element of every tensor (the input scan vectorised over
        the batch when the layer allows it). ``"fast"``: ``n_dirs`` random
        directional derivatives per tensor (two forwards each); a tensor that fails
        is then scanned element by element, so the report still points at the
        wrong entries. ``"sample"``: ``n_samples`` random elements per tensor.
    method : {"central", "forward", "richardson", "complex"}, default "central"
        Finite differences (:mod:`gradcheck.numerical`); kinks are detected with
        the central method only.
    n_dirs, n_samples : int, default 2, 8
        Directions per tensor (fast), elements per tensor (sample).
    batched : bool or "auto", default "auto"
        Vectorise the input scan (see :func:`gradcheck.numerical.batch_independent`).
    reference : object, optional
        A layer of ours (e.g. a ``manualprop`` layer) given the same parameter
        values: its forward output and gradients are compared with the checked
        layer's (pair ``manual-vs-reference``; its parameters are overwritten).
    upstream : ndarray, optional
        The upstream gradient ``G`` (shape of the output); default ``N(0, 1)`` from
        ``seed``. ``np.ones`` checks the gradient of ``sum(Y)``.

    A layer with a ``forward_many(inputs_list, params_list, training=...)`` method
    (:class:`gradcheck.sandbox.RemoteLayer`) gets its element scans (parameters,
    and inputs that cannot be batched) in chunks of forwards, one call per chunk.
    A twin with a ``tape_gradients(inputs, keys, G, training)`` method
    (:class:`gradcheck.student_tape.StudentTape`) supplies the tape column itself;
    when it raises :class:`TapeUnavailable` there is no tape column and
    ``twin_note`` says why.

    Returns
    -------
    CheckResult
        Records ``Y`` (forward, manual vs tape, when a twin exists), ``dX`` (or one
        ``d<name>`` per float input, named after ``forward``'s parameters), then
        ``d<key>`` for each parameter.

    Raises
    ------
    UsageError
        Bad ``X``, tolerances or ``twin``.
    ProtocolError
        No ``forward``/``backward``, ``params`` not a dict of float arrays, ``grads``
        missing a key.
    StudentCodeError
        ``forward`` or ``backward`` raised (message names the line).
    GradientShapeError
        ``backward`` returned None or a wrong shape; a ``grads`` entry has a wrong shape.
    NonFiniteError
        NaN/inf in the output or a gradient.
    TwinError
        The autoprop twin exists but cannot be built or raised.
    """
    owner = name or type(layer).__name__
    auto_atol = atol is None
    rtol, atol = V.check_tolerances(rtol, ATOL_FLOOR if atol is None else atol)
    if mode not in MODES:
        raise UsageError(f"mode must be one of {MODES}; got {mode!r}.")
    if method not in METHODS:
        raise UsageError(f"method must be one of {METHODS}; got {method!r}.")
    V.check_eps(eps, method)
    eps_used = default_eps("central" if method == "complex" else method) if eps is None else float(eps)
    V.require_methods(layer, owner, ("forward", "backward"), "manualprop layer")
    rng = np.random.default_rng(seed)
    inputs = V.layer_inputs(X, rng, owner)
    names = V.input_names(layer, len(inputs))
    one = V.warn_batch_of_one(inputs, names, owner)
    keys = ["@" + n for n in names]  # input keys cannot clash with parameter keys
    diff = [x.dtype.kind == "f" for x in inputs]
    params = V.layer_params(layer, owner)
    xs = ", ".join(f"{n} of shape {V.fmt_shape(x.shape)}" for n, x in zip(names, inputs))
    sig = f"forward({', '.join(names)}, training={training}) with {xs}"

    def forward(*xin: np.ndarray) -> np.ndarray:
        Y = V.call_student(layer.forward, *xin, training=training, owner=owner, call=sig,
                           expected="Expected forward to return the output array.")
        return V.check_output(Y, owner=owner, tensor="Y", produced_by=sig, expected_shape=None)

    # manual: one forward, one backward with G
    x_in = [x.copy() for x in inputs]
    Y = forward(*x_in)
    for n, a, b in zip(names, x_in, inputs):
        if not np.array_equal(a, b):
            raise StudentCodeError(
                V.paragraph(f"{owner}.forward modified its input {n} in place;",
                            f"a layer must not write into {n} (the previous layer or the caller still uses it).",
                            "Compute into a new array instead, e.g. np.maximum(X, 0) rather than X[X < 0] = 0.")
            )
    # determinism: a second forward on the same input must give the same output
    Y2 = forward(*[x.copy() for x in inputs])
    if Y2.shape != Y.shape or not np.allclose(Y, Y2, rtol=1e-12, atol=0.0, equal_nan=True):
        return _nondeterministic(owner, Y, Y2, rtol, atol, eps_used, seed, inputs, mode, method)
    Y = Y2  # the cache now belongs to this forward; backward follows it
    if upstream is None:
        G = rng.standard_normal(Y.shape)
    else:
        G = np.array(upstream, dtype=np.float64)
        if G.shape != Y.shape:
            raise UsageError(f"upstream has shape {V.fmt_shape(G.shape)}; the output of {owner} has shape "
                             f"{V.fmt_shape(Y.shape)}.")
    notes: list[str] = [one] if one else []
    if auto_atol:
        atol = default_atol(Y, G, eps_used, method)
        if atol > ATOL_FLOOR:
            notes.append(f"atol={atol:.2g} (default: the round-off of the finite differences, "
                         f"u*sum|Y*G|/h = 2.2e-16*{float(np.sum(np.abs(Y * G))):.3g}/{eps_used:.3g}; "
                         "pass --atol / atol= to set it)")
    ys = V.fmt_shape(Y.shape)
    call = f"backward(dY) with dY of shape {ys}"
    expect = (f"Expected backward to return d{names[0]} of shape {V.fmt_shape(inputs[0].shape)}." if len(inputs) == 1
              else f"Expected backward to return the tuple ({', '.join('d' + n for n in names)}).")
    ret = V.call_student(layer.backward, G.copy(), owner=owner, call=call, expected=expect)
    manual = V.check_input_grads(ret, owner=owner, produced_by=call, names=names, inputs=inputs, keys=keys)
    manual.update(V.check_grads(layer, owner, params))
    sources: dict[str, dict[str, np.ndarray]] = {"manual": manual}

    # tape
    twin_obj, note = _resolve_twin(layer, twin, init, "layer")
    records: list[TensorRecord] = []
    if twin_obj is not None:
        _share_masks(layer, twin_obj)
        try:
            Y_tape, sources["tape"] = _tape_layer(twin_obj, inputs, keys, G, training, owner)
            notes += list(getattr(twin_obj, "notes", None) or [])
        except TapeUnavailable as exc:
            twin_obj, note = None, str(exc)
    if twin_obj is not None:
        fwd = TensorRecord("Y", tuple(Y.shape), "forward")
        if Y_tape.shape != Y.shape:
            raise TwinError(f"{owner}: manual forward gives shape {ys}, the twin {V.fmt_shape(Y_tape.shape)}.")
        fwd.comparisons.append(compare(Y, Y_tape, "manual-vs-tape", rtol=rtol, atol=atol))
        records.append(fwd)

    # reference layer (ours, same parameters)
    if reference is not None:
        Y_ref, sources["reference"] = _reference_layer(reference, inputs, keys, names, params, G, training, owner,
                                                       notes)
        rec = TensorRecord("Y", tuple(Y.shape), "forward")
        if records and records[0].tensor == "Y":
            rec = records[0]
        else:
            records.append(rec)
        rec.comparisons.append(compare(Y, Y_ref, "manual-vs-reference", rtol=rtol, atol=atol))

    # numerical
    notes += [f"{n} is an integer input (indices): it has no gradient" for n, d in zip(names, diff) if not d]
    dkeys = [k for k, d in zip(keys, diff) if d] + list(params)
    display = {k: f"d{n}" for k, n, d in zip(keys, names, diff) if d}
    display.update({k: f"d{k}" for k in params})
    shapes = {k: x.shape for k, x in zip(keys, inputs)}
    shapes.update({k: p.shape for k, p in params.items()})
    num_rng = np.random.default_rng([seed, 1])
    analytic = [src for src in ("manual", "tape", "reference") if src in sources]
    comps: dict[str, dict[str, Comparison]] = {k: {} for k in dkeys}
    numerical: dict[str, np.ndarray] = {}

    many = None
    if callable(getattr(layer, "forward_many", None)):
        def many(inputs_list, params_list, edits_list):
            Ys = layer.forward_many(inputs_list, params_list, training=training, edits_list=edits_list)
            return [V.check_output(y, owner=owner, tensor="Y", produced_by=sig, expected_shape=Y.shape,
                                   expected_why="the shape of the unperturbed output") for y in Ys]

    def scan(which, indices=None):
        return layer_numerical_gradients(forward, inputs, params, G, eps=eps, input_names=keys, method=method,
                                         batched=batched, which=which, indices=indices, detail=True,
                                         notes=notes, forward_many=many)

    def element_comparisons(k, sc, mask=None, how="elements"):
        numerical[k] = sc.grad
        for src in analytic:
            if src == "reference":
                continue
            kinks = kink_mask(sources[src][k], sc.grad, sc.d_plus, sc.d_minus, rtol=rtol, atol=atol)
            comps[k][f"{src}-vs-numerical"] = compare(sources[src][k], sc.grad, f"{src}-vs-numerical", rtol=rtol,
                                                      atol=atol, mask=mask, kinks=kinks, how=how)

    if mode == "full":
        for k, sc in scan(dkeys).items():
            element_comparisons(k, sc)
    elif mode == "sample":
        idx = {}
        for k in dkeys:
            size = int(np.prod(shapes[k], dtype=np.int64))
            flat = num_rng.choice(size, size=min(n_samples, size), replace=False)
            idx[k] = [tuple(int(i) for i in np.unravel_index(f, shapes[k])) for f in flat]
        for k, sc in scan(dkeys, idx).items():
            element_comparisons(k, sc, mask=sc.evaluated, how="sample")
    else:  # fast
        dd = directional_derivatives(forward, inputs, params, G, input_names=keys, groups=[[k] for k in dkeys],
                                     n_dirs=n_dirs, eps=eps_used, rng=num_rng)
        failing = []
        for k in dkeys:
            pairs = dd[(k,)]
            num_vals = np.array([v for _, v in pairs])
            n_el = int(np.prod(shapes[k], dtype=np.int64))
            for src in analytic:
                if src == "reference":
                    continue
                an_vals = np.array([float(np.sum(sources[src][k] * u[k])) for u, _ in pairs])
                c = compare(an_vals, num_vals, f"{src}-vs-numerical", rtol=rtol, atol=atol * np.sqrt(n_el),
                            how="directional")
                comps[k][c.pair] = c
                if not c.passed and k not in failing:
                    failing.append(k)
        if failing:
            notes.append("fast mode: the directional test failed for " + ", ".join(display[k] for k in failing)
                         + "; those tensors were then checked element by element")
            for k, sc in scan(failing).items():
                element_comparisons(k, sc)

    records += _assemble(dkeys, display, shapes, sources, comps, rtol, atol)
    if auto_atol and atol > ATOL_FLOOR:
        notes += atol_swamp_notes(atol, {display[k]: [g[k] for g in (*sources.values(), numerical) if k in g]
                                         for k in dkeys})
    return CheckResult(
        name=owner, kind="layer", records=records, rtol=rtol, atol=atol, eps=eps_used, seed=seed,
        input_shape=tuple(inputs[0].shape) if len(inputs) == 1 else tuple(tuple(x.shape) for x in inputs),
        twin=None if twin_obj is None else f"{type(twin_obj).__module__}.{type(twin_obj).__name__}",
        twin_note=note, notes=notes, mode=mode, method=method,
        gradients={
            **{src: {display[k]: v for k, v in g.items() if k in display} for src, g in sources.items()},
            "numerical": {display[k]: v for k, v in numerical.items()},
        },
    )


def _nondeterministic(owner, Y1, Y2, rtol, atol, eps, seed, inputs, mode, method) -> CheckResult:
    """The failing result of a forward that gave two different outputs for the same input."""
    rec = TensorRecord("Y", tuple(Y1.shape), "forward")
    if Y1.shape == Y2.shape:
        rec.comparisons.append(compare(Y1, Y2, "call1-vs-call2", rtol=rtol, atol=atol))
        c = rec.comparisons[0]
        if c.passed:  # differs below the tolerance but above 1e-12: still not repeatable
            c.passed = False
        how = f"differ by up to {float(np.nanmax(np.abs(Y1 - Y2))):.3g}"
    else:
        rec.comparisons.append(Comparison("call1-vs-call2", float("inf"), 1.0, (), float("nan"), float("nan"),
                                          False))
        how = f"have shapes {V.fmt_shape(Y1.shape)} and {V.fmt_shape(Y2.shape)}"
    note = (f"{NONDETERMINISTIC}: two calls of {owner}.forward with the same input {how}, so finite "
            "differences are meaningless (a dropout mask drawn afresh per call?). Hold the randomness fixed "
            "(manualprop.Dropout.fix_mask(True), or a generator the layer stores and the check can rewind: "
            "gradcheck.diagnose_layer does that); no gradient was compared")
    return CheckResult(name=owner, kind="layer", records=[rec], rtol=rtol, atol=atol, eps=eps, seed=seed,
                       input_shape=tuple(inputs[0].shape) if len(inputs) == 1 else
                       tuple(tuple(x.shape) for x in inputs), notes=[note], mode=mode, method=method,
                       gradients={"manual": {}, "numerical": {}})


class TapeUnavailable(Exception):
    """Raised by a twin's ``tape_gradients`` when the tape cannot run the forward.

    :func:`check_layer` then drops the tape column and puts the message in
    ``CheckResult.twin_note`` (e.g. the numpy function autoprop does not support).
    """


def _share_masks(layer: Any, twin: Any, depth: int = 3) -> None:
    """Give the twin the manual layer's dropout mask when that mask is fixed.

    A layer with ``fix_mask`` and a fixed, drawn mask (``manualprop.Dropout`` after
    ``fix_mask(True)`` and one training forward, or ``fix_mask(array)``) passes
    ``twin.fix_mask(mask)`` so both draw nothing and use the same mask; children of a
    container (``layers``) are paired in order.
    """
    fix = getattr(twin, "fix_mask", None)
    masks = getattr(layer, "_masks", None)
    fixed = getattr(layer, "mask_fixed", getattr(masks, "fixed", False))
    mask = getattr(layer, "mask", None)
    if callable(fix) and fixed is True and isinstance(mask, np.ndarray):
        fix(np.array(mask, copy=True))
    if depth > 0:
        mine, theirs = getattr(layer, "layers", None), getattr(twin, "layers", None)
        if isinstance(mine, Sequence) and isinstance(theirs, Sequence) and len(mine) == len(theirs):
            for a, b in zip(mine, theirs):
                _share_masks(a, b, depth - 1)


def _assemble(dkeys, display, shapes, sources, comps, rtol, atol) -> list[TensorRecord]:
    """One record per key: the pairs in :data:`PAIRS` order (element pairs between analytic sources)."""
    recs = []
    for k in dkeys:
        rec = TensorRecord(tensor=display[k], shape=tuple(shapes[k]), kind="gradient")
        for pair in ALL_PAIRS:
            a, b = pair.split("-vs-")
            if pair in comps[k]:
                rec.comparisons.append(comps[k][pair])
            elif b != "numerical" and a in sources and b in sources:
                rec.comparisons.append(compare(sources[a][k], sources[b][k], pair, rtol=rtol, atol=atol))
        recs.append(rec)
    return recs


def _reference_layer(ref, inputs, keys, names, params, G, training, owner, notes=None):
    """Forward and backward of a reference layer given the checked layer's parameter values."""
    rparams = getattr(ref, "params", None) or {}
    if set(rparams) != set(params):
        raise UsageError(V.paragraph(
            f"The reference {type(ref).__name__} has parameters {sorted(rparams)}",
            f"but {owner} has {sorted(params)}; they must match to compare gradients."))
    # a weight stored (in, out) by the checked layer and (out, in) by ours: given and compared transposed
    transposed = [k for k, p in params.items() if _reversed_2d(rparams[k].shape, p.shape)]
    for k, p in params.items():
        if k in transposed:
            rparams[k][...] = p.T
            continue
        if tuple(rparams[k].shape) != tuple(p.shape):
            raise UsageError(f"The reference {type(ref).__name__}: params[{k!r}] has shape "
                             f"{V.fmt_shape(rparams[k].shape)}, {owner} has {V.fmt_shape(p.shape)}.")
        rparams[k][...] = p
    if transposed and notes is not None:
        notes.append(f"the reference's {', '.join(transposed)} {'is' if len(transposed) == 1 else 'are'} the "
                     f"transpose of {owner}'s ((in, out) there, (out, in) in manualprop); its gradients are "
                     "transposed back")
    Y = np.asarray(ref.forward(*[x.copy() for x in inputs], training=training), dtype=np.float64)
    ret = ref.backward(G.copy())
    rets = [ret] if len(inputs) == 1 else list(ret)
    out = {k: np.asarray(r, dtype=np.float64) for k, r, x in zip(keys, rets, inputs) if x.dtype.kind == "f"}
    out.update({k: np.asarray(ref.grads[k], dtype=np.float64).T if k in transposed
                else np.asarray(ref.grads[k], dtype=np.float64) for k in params})
    return Y, out


def check_loss(
    loss: Any,
    y_true: Any,
    y_pred: Any,
    *,
    twin: Any = "auto",
    init: Mapping[str, Any] | None = None,
    seed: int = 0,
    rtol: float = 1e-6,
    atol: float | None = None,
    eps: float | None = None,
    name: str | None = None,
) -> CheckResult:
    """Check a loss's gradient dL/dy_pred: manual (``backward()``) vs tape vs numerical.

    Parameters
    ----------
    loss : object
        ``forward(y_true, y_pred) -> float`` and ``backward() -> dL/dy_pred``.
    y_true : array_like
        Targets, passed unchanged (class indices or one-hot / real targets).
    y_pred : array_like
        Predictions (logits for cross-entropy), float64 copy; float32 warns.
    twin : "auto", None or object, default "auto"
        "auto": ``autoprop.losses.<SameName>`` when it exists; called ``twin(y_true, y_pred)``.
    init : dict, optional
        Constructor kwargs for the "auto" twin.
    seed : int, default 0
        Recorded in the result (the loss itself needs no random draws).
    rtol : float, default 1e-6
    atol : float, optional
        As in :func:`check_layer`; default ``max(1e-9, u * |L| / eps)``
        (:func:`default_atol` with the loss value).
    eps : float, optional
        Relative step; default :data:`gradcheck.numerical.DEFAULT_EPS`.
    name : str, optional

    Returns
    -------
    CheckResult
        Records ``L`` (forward value, manual vs tape, when a twin exists) and ``dy_pred``.

    Raises
    ------
    Same as :func:`check_layer`.
    """
    owner = name or type(loss).__name__
    auto_atol = atol is None
    rtol, atol = V.check_tolerances(rtol, ATOL_FLOOR if atol is None else atol)
    V.require_methods(loss, owner, ("forward", "backward"), "manualprop loss")
    V.check_eps(eps)
    yp = V.as_float64(y_pred, f"y_pred of {owner}")
    yt = np.array(y_true, copy=True)
    ps = V.fmt_shape(yp.shape)

    def value() -> float:
        out = V.call_student(loss.forward, yt.copy(), yp.copy(), owner=owner,
                             call=f"forward(y_true, y_pred) with y_pred of shape {ps}",
                             expected="Expected forward to return the loss as a float.")
        return float(V.check_output(out, owner=owner, tensor="L", produced_by="forward(y_true, y_pred)",
                                    expected_shape=(), expected_why="a scalar loss", integer_ok=True))

    L = value()
    if auto_atol:
        atol = default_atol(L, 1.0, DEFAULT_EPS if eps is None else float(eps))
    g = V.call_student(loss.backward, owner=owner, call="backward()",
                       expected=f"Expected backward to return dL/dy_pred of shape {ps}.")
    sources = {"manual": {"y_pred": V.check_output(g, owner=owner, tensor="dy_pred", produced_by="backward()",
                                                   expected_shape=yp.shape,
                                                   expected_why="the shape of y_pred")}}
    twin_obj, note = _resolve_twin(loss, twin, init, "loss")
    records: list[TensorRecord] = []
    if twin_obj is not None:
        L_tape, g_tape = _tape_loss(twin_obj, yt, yp, owner)
        sources["tape"] = {"y_pred": g_tape}
        rec = TensorRecord("L", (), "forward")
        rec.comparisons.append(compare(np.array(L), np.array(L_tape), "manual-vs-tape", rtol=rtol, atol=atol))
        records.append(rec)
    eps = DEFAULT_EPS if eps is None else float(eps)
    sc = numerical_gradient(value, yp, eps=eps, detail=True)
    sources["numerical"] = {"y_pred": sc.grad}
    comps: dict[str, dict[str, Comparison]] = {"y_pred": {}}
    for src in ("manual", "tape"):
        if src in sources:
            kinks = kink_mask(sources[src]["y_pred"], sc.grad, sc.d_plus, sc.d_minus, rtol=rtol, atol=atol)
            comps["y_pred"][f"{src}-vs-numerical"] = compare(sources[src]["y_pred"], sc.grad, f"{src}-vs-numerical",
                                                             rtol=rtol, atol=atol, kinks=kinks)
    records += _assemble(["y_pred"], {"y_pred": "dy_pred"}, {"y_pred": yp.shape}, sources, comps, rtol, atol)
    return CheckResult(
        name=owner, kind="loss", records=records, rtol=rtol, atol=atol, eps=eps, seed=seed,
        input_shape=tuple(yp.shape),
        twin=None if twin_obj is None else f"{type(twin_obj).__module__}.{type(twin_obj).__name__}",
        twin_note=note,
        gradients={src: {"dy_pred": v["y_pred"]} for src, v in sources.items()},
    )
