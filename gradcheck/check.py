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
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _validation as V
from .errors import StudentCodeError, TwinError, UsageError
from .numerical import DEFAULT_EPS, layer_numerical_gradients, numerical_gradient

__all__ = [
    "PAIRS",
    "relative_error",
    "compare",
    "Comparison",
    "TensorRecord",
    "CheckResult",
    "check_layer",
    "check_loss",
    "build_twin",
]

#: The comparison pairs, in display order.
PAIRS = ("manual-vs-numerical", "tape-vs-numerical", "manual-vs-tape")

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
    """

    pair: str
    max_abs_error: float
    max_rel_error: float
    worst_index: tuple[int, ...]
    worst_a: float
    worst_b: float
    passed: bool

    @property
    def names(self) -> tuple[str, str]:
        """The two compared sources, e.g. ``("manual", "numerical")``."""
        a, b = self.pair.split("-vs-")
        return a, b


def compare(a: np.ndarray, b: np.ndarray, pair: str, *, rtol: float, atol: float) -> Comparison:
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

    Returns
    -------
    Comparison
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    abs_err = np.abs(a - b)
    rel = relative_error(a, b, tiny=max(atol / rtol, _TINY))
    if a.size == 0:
        return Comparison(pair, 0.0, 0.0, (), float("nan"), float("nan"), True)
    flat = int(np.argmax(rel))
    idx = tuple(int(i) for i in np.unravel_index(flat, a.shape))
    max_rel = float(rel.flat[flat])
    return Comparison(
        pair=pair,
        max_abs_error=float(abs_err.max()),
        max_rel_error=max_rel,
        worst_index=idx,
        worst_a=float(a[idx]),
        worst_b=float(b[idx]),
        passed=bool(max_rel <= rtol),
    )


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
        ``{"manual"|"tape"|"numerical": {tensor: ndarray}}``, the raw gradients.
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

    @property
    def passed(self) -> bool:
        """True when every comparison of every tensor is within tolerance."""
        return all(r.passed for r in self.records)

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
            "input_shape": json_shape(self.input_shape),
            "twin": self.twin,
            "twin_note": self.twin_note,
            "notes": list(self.notes),
            "rows": [
                {**row, "shape": list(row["shape"]), "worst_index": list(row["worst_index"])}
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
        copy_params_to_twin(obj, twin, owner)
    return twin, ""


def copy_params_to_twin(obj: Any, twin: Any, owner: str) -> None:
    """``twin.variables[k].assign(obj.params[k])`` for every key, after checking keys and shapes.

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
    for k, p in params.items():
        if tuple(variables[k].shape) != tuple(np.shape(p)):
            raise TwinError(
                f"The twin of {owner}: variables[{k!r}] has shape {tuple(variables[k].shape)}, "
                f"params[{k!r}] has shape {tuple(np.shape(p))}."
            )
        variables[k].assign(np.array(p, dtype=np.float64))


def _resolve_twin(obj, twin, init, kind):
    if twin is None:
        return None, "tape not requested (twin=None)"
    if isinstance(twin, str):
        if twin != "auto":
            raise UsageError(f"twin must be 'auto', None or an autoprop object; got {twin!r}.")
        if init is not None:
            return build_twin(obj, kind, init)  # explicit arguments: a failure is an error
        try:
            return build_twin(obj, kind, init)
        except TwinError as exc:  # e.g. a student class that shares a name with an autoprop class
            return None, f"the autoprop class of that name could not be used as twin: {exc}"
    if kind == "layer":
        copy_params_to_twin(obj, twin, type(obj).__name__)
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
    atol: float = 1e-9,
    training: bool = False,
    eps: float = DEFAULT_EPS,
    name: str | None = None,
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
    rtol, atol : float, default 1e-6, 1e-9
        Pass when every element has ``|a-b| <= atol`` or ``|a-b| <= rtol*(|a|+|b|)``.
    training : bool, default False
        Passed to ``forward``. Stochastic layers must be deterministic for a check.
    eps : float, default 6.06e-6 (DEFAULT_EPS)
        Relative finite-difference step (:mod:`gradcheck.numerical`).
    name : str, optional
        Display name; default the class name.

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
    rtol, atol = V.check_tolerances(rtol, atol)
    V.require_methods(layer, owner, ("forward", "backward"), "manualprop layer")
    rng = np.random.default_rng(seed)
    inputs = V.layer_inputs(X, rng, owner)
    names = V.input_names(layer, len(inputs))
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
    G = rng.standard_normal(Y.shape)
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
        Y_tape, sources["tape"] = _tape_layer(twin_obj, inputs, keys, G, training, owner)
        fwd = TensorRecord("Y", tuple(Y.shape), "forward")
        if Y_tape.shape != Y.shape:
            raise TwinError(f"{owner}: manual forward gives shape {ys}, the twin {V.fmt_shape(Y_tape.shape)}.")
        fwd.comparisons.append(compare(Y, Y_tape, "manual-vs-tape", rtol=rtol, atol=atol))
        records.append(fwd)

    # numerical
    sources["numerical"] = layer_numerical_gradients(forward, inputs, params, G, eps=eps, input_names=keys)

    rows = [(k, f"d{n}", x.shape) for k, n, x, d in zip(keys, names, inputs, diff) if d]
    rows += [(k, f"d{k}", p.shape) for k, p in params.items()]
    records += _records(rows, sources, rtol, atol)
    notes = [f"{n} is an integer input (indices): it has no gradient" for n, d in zip(names, diff) if not d]
    display = {k: t for k, t, _ in rows}
    return CheckResult(
        name=owner, kind="layer", records=records, rtol=rtol, atol=atol, eps=eps, seed=seed,
        input_shape=tuple(inputs[0].shape) if len(inputs) == 1 else tuple(tuple(x.shape) for x in inputs),
        twin=None if twin_obj is None else f"{type(twin_obj).__module__}.{type(twin_obj).__name__}",
        twin_note=note, notes=notes,
        gradients={src: {display[k]: v for k, v in g.items() if k in display} for src, g in sources.items()},
    )


def check_loss(
    loss: Any,
    y_true: Any,
    y_pred: Any,
    *,
    twin: Any = "auto",
    init: Mapping[str, Any] | None = None,
    seed: int = 0,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    eps: float = DEFAULT_EPS,
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
    rtol, atol, eps : float
        As in :func:`check_layer`.
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
    rtol, atol = V.check_tolerances(rtol, atol)
    V.require_methods(loss, owner, ("forward", "backward"), "manualprop loss")
    yp = V.as_float64(y_pred, f"y_pred of {owner}")
    yt = np.array(y_true, copy=True)
    ps = V.fmt_shape(yp.shape)

    def value() -> float:
        out = V.call_student(loss.forward, yt.copy(), yp.copy(), owner=owner,
                             call=f"forward(y_true, y_pred) with y_pred of shape {ps}",
                             expected="Expected forward to return the loss as a float.")
        return float(V.check_output(out, owner=owner, tensor="L", produced_by="forward(y_true, y_pred)",
                                    expected_shape=(), expected_why="a scalar loss"))

    L = value()
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
    sources["numerical"] = {"y_pred": numerical_gradient(value, yp, eps=eps)}
    records += _records([("y_pred", "dy_pred", yp.shape)], sources, rtol, atol)
    return CheckResult(
        name=owner, kind="loss", records=records, rtol=rtol, atol=atol, eps=eps, seed=seed,
        input_shape=tuple(yp.shape),
        twin=None if twin_obj is None else f"{type(twin_obj).__module__}.{type(twin_obj).__name__}",
        twin_note=note,
        gradients={src: {"dy_pred": v["y_pred"]} for src, v in sources.items()},
    )
