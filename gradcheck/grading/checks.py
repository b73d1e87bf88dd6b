"""The graded checks: each returns a :class:`Verdict`, one :class:`Part` per graded tensor.

The grader chooses the evaluation point (:func:`evaluation_point`), so nothing the student's
constructor chose (``b = inf``, a zero bias that hides a forward without ``+ b``) enters the
verdict. Grading reads the one pipeline: the reference layer's gradients come from
:func:`gradcheck.sources.reference_source` (exact; the basis of the diagnosis,
:func:`gradcheck.grading.diagnosis.diagnose`), central differences from
:func:`gradcheck.check_layer` / :func:`gradcheck.check_loss` on the student's object, and every
comparison is :func:`gradcheck.compare.close`; a part passes only when both sources agree. A NaN
or infinity is wrong on the student's side (unless ``expect_nonfinite``: then the same one in the
same place) and a :class:`GradingTestError` on the reference's, never an element to skip.
"""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from .. import _validation as V
from .._adapters import (
    CLASS_CACHE,
    ELSE_VALUE,
    STEPS_ITSELF,
    FunctionPair,
    _copy,
    _ones_apart,
    _params,
    class_outputs,
    forward_in_mode,
    mode_kwargs,
)
from .._large_inputs import (
    at_large_inputs,
    at_large_predictions,
    forward_at_large_inputs,
    loss_at_large_predictions,
)
from .._running_stats import NOT_UPDATED, _fmt, at_initial_value
from ..check import check_layer, check_loss
from ..compare import ATOL_FLOOR, close, mismatched, relative_error
from ..config import CheckConfig
from ..diagnose import (
    CLASSIC_DROPOUT_FIX,
    DIAGNOSES,
    INVERTED_DROPOUT,
    RANDOM_REFERENCE,
    SCALE_RTOL,
    SIGMAS,
    _dlfs_f,
    _find,
    _float32_values,
    _low_precision,
    _precision,
    _state_fields,
    adapter_call,
    fixed_mask,
    kept_scale,
    name_swaps,
    random_mean_finding,
    rounding_rtol,
    same_mask,
    scale_difference,
)
from ..errors import AgainError, GradcheckError, GraderError, NonFiniteError, StudentCodeError
from ..numerical import difference_quotient, probe_rng, upstream_draw
from ..sources import (
    SYMMETRIC_ARGS,
    Call,
    at_keyword,
    backward_twice,
    cache_rewritten_notes,
    computes_no_dx,
    dY_written,
    each_keyword_value,
    grad_slots,
    keyword_values,
    one_sign_only,
    reference_source,
    twice_difference,
)
from .diagnosis import diagnose, reproduce
from .static import markdown_text, name_span

__all__ = ["Part", "Verdict", "GradingFailure", "GradingTestError", "evaluation_point",
           "away_from_kinks", "class_labels", "layer_forward", "forward_keywords", "layer_gradients", "loss_value",
           "loss_gradient", "backward_repeatable", "dtypes", "instances_apart"]

#: The checker's relative tolerance; the absolute one is the checker's default too (None).
RTOL, ATOL = 1e-6, None


#: Memory (MiB) the submission's code may hold beyond :data:`gradcheck.sandbox.CHECK_MEMORY`'s model before a check
#: that does not fit for it is the submission's fault rather than the model's error (:func:`_within_budget`)
HELD_SLACK_MIB = 16.0


class GradingFailure(AssertionError):
    """A graded check failed: the message is Markdown for the student, ``fraction`` (in [0, 1])
    the share of the test's points still earned."""

    def __init__(self, message: str, fraction: float = 0.0):
        super().__init__(message)
        self.fraction = float(fraction)


class MemoryBudgetError(GraderError):
    """The check needs more memory than the sandbox allows (``--memory-mb``): refused before it runs, a
    grader error (the grading setup's, not the submission's; a resumed batch grades it again)."""


class GradingTestError(GraderError):
    """The grading test is wrong, not the submission (its reference is NaN or infinite): a grader
    error, so the submission is not scored and a resumed batch grades it again."""


@dataclass
class Part:
    """One graded tensor or property (``"dX"``, ``"Y"``, ``"dtypes"``): its ``points``, whether it
    ``passed``, and ``message``, why it failed (one sentence) or a short note; ``failed_as`` what a
    failure is called (``"wrong"``; ``"too slow"`` when the numerical check ran out of time)."""

    name: str
    points: float
    passed: bool
    message: str = ""
    failed_as: str = "wrong"


@dataclass
class Verdict:
    """The parts of one graded check, plus remarks; ``not_checked``, when set, is ``gradcheck check``'s NOT CHECKED
    as a whole line (an array forward reads with no gradient: a forgotten weight or a constant, exit 3 there): the
    parts that matched are shown, and the check earns nothing until the student or the test decides."""

    parts: list[Part] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    not_checked: str = ""

    @property
    def passed(self) -> bool:
        """bool: every part passed and nothing is left NOT CHECKED (an empty verdict passes)."""
        return all(p.passed for p in self.parts) and not self.not_checked

    @property
    def fraction(self) -> float:
        """Points of the passed parts over all points (1.0 for an empty verdict; 0.0 when not checked)."""
        total = sum(p.points for p in self.parts)
        if self.not_checked:
            return 0.0
        return 1.0 if total <= 0 else sum(p.points for p in self.parts if p.passed) / total

    def markdown(self) -> str:
        """Failing parts first, each with its diagnosis, then the others, the NOT CHECKED line and the notes. A failing
        part worth 0 points (``parts={"dgamma": 0}``) says so, unbolded, after those that cost points (newuser26: a
        0-point part printed **wrong** like one that costs them). Names, messages and notes are plain text (they
        quote the submission's names and errors as data): written here as Markdown by the one rule,
        :func:`~gradcheck.grading.static.name_span` and :func:`~gradcheck.grading.static.markdown_text`."""
        def mark(p: Part) -> str:
            return "ok" if p.passed else f"**{p.failed_as}**" if p.points else f"{p.failed_as} (0 points in this test)"
        lines = [f"- {name_span(p.name)}: {mark(p)}" + (f" - {markdown_text(p.message)}" if p.message else "")
                 for p in sorted(self.parts, key=lambda p: (p.passed, not p.points))]
        said = [self.not_checked] * bool(self.not_checked) + self.notes
        return "\n".join(lines + [f"\n{markdown_text(t)}" for t in said])


def away_from_kinks(x: np.ndarray, margin: float = 0.05, kinks: Sequence[float] = (0.0,), *,
                    both_sides: bool = True) -> np.ndarray:
    """Move every entry of ``x`` at least ``margin`` away from each kink (ReLU's 0), keeping its side;
    with ``both_sides`` (and two entries or more) make sure each kink has an entry on each side.

    Finite differences straddling a kink are wrong by up to half the jump of the derivative, so
    graded inputs keep clear of them. A graded input must also reach every branch it grades: an
    all-positive input passes an identity "ReLU". When every entry lies on one side of a kink, the
    entry nearest it is mirrored to the other side (``k - d`` for ``k + d``, still at least
    ``margin`` away); nothing else changes, so an input that already has both sides is only moved
    off the kinks. Returns a float64 copy of ``x``.
    """
    out = np.array(x, dtype=np.float64, copy=True)
    for k in kinks:
        d = out - k
        near = np.abs(d) < margin
        out[near] = k + np.where(d[near] >= 0, margin, -margin)
    for k in kinks if both_sides and out.size >= 2 else ():
        flat = out.reshape(-1)  # a view: out changes with it
        for side in (1.0, -1.0):
            if not np.any(side * (flat - k) > 0):  # no entry on this side of k: mirror the nearest one
                i = int(np.argmin(np.abs(flat - k)))
                flat[i] = k - (flat[i] - k)
    return out


def class_labels(rng: np.random.Generator, n: int, n_classes: int) -> np.ndarray:
    """``n`` integer labels in ``[0, n_classes)``, uniform from ``rng``, with two classes at least
    (when ``n >= 2`` and ``n_classes >= 2``).

    Labels that are all one class hide a gradient that indexes the wrong axis (``d[:, y] -= 1`` is
    right then), so a graded batch holds two classes or more: when the draw is all one class the
    last label becomes the next class. Otherwise the draw is returned as it is (``rng.integers(0,
    n_classes, size=n)``, int64, shape ``(n,)``).
    """
    y = rng.integers(0, n_classes, size=n)
    if n >= 2 and n_classes >= 2 and np.all(y == y[0]):
        y[-1] = (y[0] + 1) % n_classes
    return y


def _inputs(X: Any) -> list[np.ndarray]:
    """Float64 copies of the input(s): one array, or a list or tuple for a layer of several
    inputs (a CS231n pair's ``x, w, b``; attention's ``Q, K, V``)."""
    return [np.array(x, dtype=np.float64, copy=True) for x in (X if isinstance(X, (list, tuple)) else [X])]


def _given(xs: list[np.ndarray]) -> tuple[str, str]:
    """How the input(s) read in messages, and the forward call that made ``Y``."""
    if len(xs) == 1:
        return f"X of shape {V.fmt_shape(xs[0].shape)}", f"forward(X) with X of shape {V.fmt_shape(xs[0].shape)}"
    given = "inputs of shapes " + ", ".join(V.fmt_shape(x.shape) for x in xs)
    return given, f"forward(...) with {given}"


def _weights(parts: Mapping[str, float] | None, names: Sequence[str], points: float | None = None) -> dict[str, float]:
    """Points per part: ``parts`` (a subset of ``names``), or ``points`` shared equally by all of ``names``, or 1
    each; both given is the test's mistake (GradingTestError)."""
    if parts is not None and points is not None:
        raise GradingTestError(f"both parts= and points= were given; give parts= (points per tensor: {list(names)}) "
                               f"or points= (the check's total, shared equally), not both")
    if parts is None:
        return {n: 1.0 if points is None else float(points) / max(len(names), 1) for n in names}
    unknown = set(parts) - set(names)
    if unknown:
        raise GradingTestError(f"parts {sorted(unknown)} are not tensors of the reference; it has {list(names)}")
    return {n: float(parts[n]) for n in names if n in parts}


def _finite_reference(what: str, value: Any, *, expected: bool = False) -> np.ndarray:
    """The reference's ``value`` as float64; NaN or infinity is a GradingTestError unless ``expected``."""
    arr = np.asarray(value, dtype=np.float64)
    if not expected and not np.all(np.isfinite(arr)):
        raise GradingTestError(f"the reference {what} contains NaN or infinity at the evaluation point the test "
                               f"chose: the test is wrong (its inputs or parameters), not the submission.")
    return arr


def _worst(got: np.ndarray, want: np.ndarray, label: str = "") -> str:
    """Where the largest difference is (NaN or infinity against a number counts as largest), and the two
    values: ``"largest difference at Y[0, 2]: got 1.5, expected 2"`` (``label`` "Y")."""
    with np.errstate(invalid="ignore"):
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        d = np.where(same, 0.0, np.nan_to_num(np.abs(got - want), nan=np.inf))
    i = tuple(int(i) for i in np.unravel_index(int(np.argmax(d)), d.shape))
    a, b = _distinct(float(got[i]), float(want[i]))
    return f"largest difference at {label}{list(i)}: got {a}, expected {b}"


def _distinct(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` to 6 significant digits, or to as many more (up to 17, round-trip) as they need to print
    differently when they differ: ``("-2.10883", "-2.10883")`` for -2.108830 and -2.108829 becomes
    ``("-2.1088302", "-2.1088295")``."""
    for digits in range(6, 18):
        sa, sb = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if sa != sb or a == b:
            break
    return sa, sb


def evaluation_point(layer: Any, reference: Any, *, seed: int = 0, params: Mapping[str, np.ndarray] | None = None,
                     xs: list[np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Set the parameters the grader evaluates at, in place, in the student's layer and the reference.

    The student's ``params`` must have the reference's keys and shapes and be finite; each is then
    overwritten with ``params`` (the test's own values) or drawn ones: normal from ``seed`` alone,
    with standard deviation ``1/sqrt(fan_in)`` for two or more axes (``fan_in`` the product of all
    axes but the first, LeCun's initialisation) and 1 for a vector (a bias is then nonzero). The
    reference gets the values as the student's arrays hold them (float32: rounded); a
    :class:`~gradcheck.sandbox.RemoteLayer` sends them with every forward. A 2-D weight stored the other way round
    from the reference's is set transposed (its gradient compared transposed back, :func:`_as_stored`): told by its
    shape, or for a square one, given the test's inputs ``xs``, by forward on each side (:func:`_square_flips`). One
    kept with axes of size 1 more or fewer (``(1, d)`` for ``(d,)``, :func:`gradcheck._adapters._ones_apart`, as
    ``gradcheck check`` takes it: tester23g M4) is set reshaped, its gradient compared reshaped. Returns the values
    set (float64 copies).

    Raises
    ------
    StudentCodeError
        The student's ``params`` have other keys or shapes, are not finite, or are read-only.
    GradingTestError
        The test's ``params`` have other keys or shapes than the reference's, or are not finite.
    """
    owner = type(layer).__name__
    theirs = V.layer_params(layer, owner)
    ours = getattr(reference, "params", None) or {}
    if set(theirs) != set(ours):
        raise StudentCodeError(_other_params(layer, owner, theirs, ours))
    flips = {k for k, v in ours.items() if v.ndim == 2 and theirs[k].shape == v.shape[::-1] != v.shape}
    axes = {k: theirs[k].shape for k, v in ours.items() if k not in flips and _ones_apart(theirs[k].shape, v.shape)}
    for k, v in ours.items():
        if theirs[k].shape != (v.shape[::-1] if k in flips else axes.get(k, v.shape)):
            _reference_contradiction(layer, reference, {n: a.shape for n, a in theirs.items()})
            raise StudentCodeError(f"{V._written_as(layer, owner, k)} has shape {V.fmt_shape(theirs[k].shape)}; "
                                   f"the assignment expects {V.fmt_shape(v.shape)}" + (
                                       " (or its transpose)" if v.ndim == 2 else "") + " (its reference layer's: "
                                   "the same number of elements in another arrangement is another function's "
                                   "parameter; only axes of size 1 may be added or left out).")
        if not np.all(np.isfinite(theirs[k])):
            raise StudentCodeError(f"{V._written_as(layer, owner, k)} holds NaN or infinity after the constructor; "
                                   f"parameters must start finite (the grader then sets its own values).")
    flips |= _square_flips(layer, reference, theirs, ours, xs) if xs is not None else set()  # told by forward
    point = _drawn_point(ours, seed, params)
    for k, v in point.items():
        try:
            theirs[k][...] = v.T if k in flips else v.reshape(theirs[k].shape)  # in the student's layout
        except ValueError as exc:  # a read-only array
            raise StudentCodeError(f"{owner}.params[{k!r}] cannot be written ({exc}); the grader sets the "
                                   f"parameters it evaluates at, so they must be writable arrays.") from None
        ours[k][...] = theirs[k].T if k in flips else theirs[k].reshape(ours[k].shape)  # float32: rounded as theirs
    with contextlib.suppress(AttributeError, TypeError):  # which weights the gradients' comparison transposes back
        layer.__dict__["_grader_transposed"] = frozenset(flips)
        layer.__dict__["_grader_axes"] = {k: (axes[k], ours[k].shape) for k in axes}  # (1, d) for (d,): reshaped
    return {k: np.array(ours[k], dtype=np.float64) for k in ours}


def _square_flips(layer: Any, reference: Any, theirs: Mapping[str, np.ndarray], ours: Mapping[str, np.ndarray],
                  xs: list[np.ndarray]) -> set[str]:
    """The square 2-D weights of an attribute-style (or ``params``) layer stored transposed from the reference's
    (``self.W`` (in, out) where the reference's is (out, in)): the shape cannot tell, so each layout is told by
    forward (:func:`_forward_layout`: moving ``W[0, 1]`` moves output column 1 for ``X @ W``, column 0 for ``X @
    W.T``), the student's in its sandbox (the weights travel with each forward), as the seed protocol's weights are
    (:func:`_seed_point`); a side that cannot tell (another layer kind, a forward that raises) flips nothing."""
    out = set()
    for k, v in ours.items():
        if v.ndim != 2 or v.shape[0] != v.shape[1] or np.shape(theirs[k]) != v.shape:
            continue
        ref = _reference_layout(reference, k, xs)
        try:
            mine = _forward_layout(layer.forward, theirs[k], xs) if ref else ""
        except Exception:  # noqa: BLE001 - the student's forward raised: the forward test says so, not this
            mine = ""
        if ref and mine and mine != ref:
            out.add(k)
    return out


def _reference_contradiction(layer: Any, reference: Any, shapes: Mapping[str, tuple[int, ...]]) -> None:
    """Raise a GradingTestError when the student's parameters have other ``shapes`` than the reference's because
    the test contradicts itself: the reference's own class, built with the constructor arguments the test gave the
    student (``layer.init_kwargs``, the grading plugin's), has the student's shapes, so the reference solution run
    through this test would fail it too (tester21g M1: ``student.layer(..., out_features=3)`` beside
    ``RefLinear(5, 4)`` cost a correct submission its 6 points). As the plugin's ``_init_refused`` reads the
    reference's class with the test's keywords; nothing is decided when that class cannot be built so."""
    init = getattr(layer, "__dict__", {}).get("init_kwargs")
    if not isinstance(init, dict) or not init:
        return
    try:
        twin = type(reference)(**init)
        twin_shapes = {k: np.shape(v) for k, v in (getattr(twin, "params", None) or {}).items()}
    except Exception:  # noqa: BLE001 - the reference's class does not take the student's arguments: not decided here
        return
    ours = {k: np.shape(v) for k, v in (getattr(reference, "params", None) or {}).items()}
    if twin_shapes and twin_shapes == dict(shapes) and twin_shapes != ours:
        shown = ", ".join(f"{k}={v!r}" for k, v in init.items())
        raise GradingTestError(
            f"the test builds the student's layer with ({shown}) and grades it against a reference whose parameters "
            f"have shapes { {k: V.fmt_shape(s) for k, s in ours.items()} }, but the reference's own class "
            f"{type(reference).__name__}({shown}) has { {k: V.fmt_shape(s) for k, s in twin_shapes.items()} }, the "
            f"submission's: the reference solution would fail this test too. Give the student's layer and the "
            f"reference the same sizes.")


def _transposed_notes(layer: Any, reference: Any, xs: list[np.ndarray]) -> list[str]:
    """The notes on the weights :func:`evaluation_point` set transposed (a 2-D weight stored the other way round from
    the reference's, as ``gradcheck check`` reads both: tester20g M1, ``self.W`` (in, out) against the reference's
    (out, in)), each layout told by :func:`gradcheck._adapters._layout` on the reference."""
    notes, owner = [], type(layer).__name__
    for k in sorted(getattr(layer, "__dict__", {}).get("_grader_transposed", ())):
        ref = _reference_layout(reference, k, xs)
        theirs = {"out, in": "(in, out)", "in, out": "(out, in)"}.get(ref, "transposed")
        w = getattr(reference, "params", {}).get(k)
        square = " (told by forward: square, moving W[0, 1] moved one output column)" if w is not None and \
            w.ndim == 2 and w.shape[0] == w.shape[1] else ""
        notes.append(f"{owner}.{k} is stored {theirs}{square}, the reference's{f' ({ref})' if ref else ''} transposed: the "
                     f"grader set it to the reference's point transposed and compared d{k} transposed back, as "
                     f"gradcheck check reads either layout.")
    return notes


def _as_stored(layer: Any, key: str, grads: Any) -> Any:
    """The student's gradient of ``key`` (``grads[key]``; KeyError when absent) in the reference's layout (transposed
    back when :func:`evaluation_point` set the weight transposed)."""
    grad = grads.get(key, KeyError) if isinstance(grads, Mapping) else KeyError
    flipped = key in getattr(layer, "__dict__", {}).get("_grader_transposed", ())
    stored, ref = getattr(layer, "__dict__", {}).get("_grader_axes", {}).get(key, (None, None))
    if isinstance(grad, np.ndarray) and stored is not None and grad.shape == stored:
        return grad.reshape(ref)  # a parameter kept with axes of size 1 more or fewer: its gradient alike
    return grad.T if flipped and isinstance(grad, np.ndarray) and grad.ndim == 2 else grad


def _drawn_point(ours: Mapping[str, np.ndarray], seed: int, params: Mapping[str, np.ndarray] | None
                 ) -> dict[str, np.ndarray]:
    """The values :func:`evaluation_point` sets, in the reference's keys and shapes (``ours``): the test's ``params``,
    or normal draws from ``seed`` alone (LeCun's ``1/sqrt(fan_in)`` for two axes or more). GradingTestError when the
    test's params do not match the reference's."""
    point = V.drawn_values({k: v.shape for k, v in ours.items()}, seed)
    if params is not None:
        if set(params) != set(ours) or any(np.shape(params[k]) != ours[k].shape for k in ours):
            raise GradingTestError(f"the test's params {sorted(params)} do not match the reference's keys and "
                                   f"shapes { {k: V.fmt_shape(v.shape) for k, v in ours.items()} }.")
        point = {k: _finite_reference(f"params[{k!r}] given by the test", params[k]).copy() for k in ours}
    return point


def _seed_point(layer: Any, reference: Any, xs: list[np.ndarray], seed: int,
                params: Mapping[str, np.ndarray] | None) -> list[str] | None:
    """For the forward test of a sandboxed layer read as the seed protocol (``self.W`` used in forward, a backward
    returning dX only, no ``params``: :func:`gradcheck._adapters._seed_weights`) that holds the reference's names:
    the point of :func:`evaluation_point` set in the child (:meth:`~gradcheck.sandbox.RemoteLayer.adapter`'s ``set_weights``) and
    in the reference, a 2-D weight in the student's layout (told by shape, a square one by each forward:
    :func:`gradcheck._adapters._layout`, run on the reference here); the notes saying which layout was used. None:
    not such a layer (:func:`evaluation_point` then sets, or refuses, its parameters)."""
    from .._adapters import seed_weight

    info, owner = getattr(layer, "protocol", None), type(layer).__name__
    listed = info.get("seed_weights") if isinstance(info, dict) and info.get("protocol") == "seed" else None
    seeds = {w[0]: w[1:] for w in map(seed_weight, listed if isinstance(listed, list) else []) if w is not None}
    ours = getattr(reference, "params", None) or {}
    if not (seeds and callable(getattr(layer, "adapter", None)) and ours and set(ours) <= set(seeds)
            and not V.layer_params(layer, owner)):
        return None
    point, values, notes = _drawn_point(ours, seed, params), {}, []
    for k, v in ours.items():
        shape, dtype, lay = seeds[k]
        ref = _reference_layout(reference, k, xs) if v.ndim == 2 else ""
        flip = v.ndim == 2 and (shape == v.shape[::-1] != v.shape or shape == v.shape and lay and ref and lay != ref)
        if shape != (v.shape[::-1] if flip else v.shape):
            raise StudentCodeError(f"{owner}.{k} has shape {V.fmt_shape(shape)}; the assignment expects "
                                   f"{V.fmt_shape(v.shape)}" + (" (or its transpose)" if v.ndim == 2 else "") + ".")
        values[k] = (point[k].T if flip else point[k]).astype(dtype)
        ours[k][...] = values[k].T if flip else values[k]  # a float32 weight: the reference at the rounded point
        if v.ndim == 2:
            told = "told by forward (square: moving W[0, 1] moved one output column)" if shape[0] == shape[1] \
                else "told by its shape"
            notes.append(f"{owner}.{k} has no gradient (backward returns dX only): the grader set it to its point "
                         f"in the layout ({lay or 'not told: as the reference'}) {told}" + (
                             ", transposed from the reference's" if flip else "") + ".")
    layer.adapter("set_weights", values)
    return notes


def _reference_layout(reference: Any, key: str, xs: list[np.ndarray]) -> str:
    """``"in, out"`` or ``"out, in"`` of the reference's 2-D ``params[key]`` by :func:`gradcheck._adapters._layout`
    (a square one by its forward, the entry put back), "" when it cannot tell."""
    return _forward_layout(reference.forward, reference.params[key], xs)


def _forward_layout(forward: Any, w: np.ndarray, xs: list[np.ndarray]) -> str:
    """``"in, out"``, ``"out, in"`` or "" of the 2-D weight ``w`` that ``forward`` reads, by
    :func:`gradcheck._adapters._layout` (a square one: ``w[0, 1]`` moved by 1, which output column moves; the entry
    put back)."""
    from .._adapters import _layout, entry_moved

    def moved(step: float) -> np.ndarray:
        return entry_moved(w, step, lambda: np.asarray(forward(*[x.copy() for x in xs]), dtype=np.float64))
    y = moved(0.0)
    return _layout(w, xs, y, lambda step: y if step == 0 else moved(step)).partition("(")[2].rstrip(")")  # (y: base)


def _other_params(layer: Any, owner: str, theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> str:
    """Why the student's parameters (``theirs``, as the layer is read) are not the assignment's (``ours``), naming them
    as written (``params['W']``, not a repr of that string) and, for a layer read as ``gradcheck check`` reads it
    (:func:`as_checked`), how check read it; a sandboxed layer as loaded (no probe: forward did not run) makes no
    claim about check (tester15 M2: 'check reads Linear as a class ... with no parameters' was false)."""
    names = ", ".join(sorted(theirs)) or "none"
    as_loaded = not layer.__dict__.get("_loaded", (True,) * 5)[4] if hasattr(layer, "__dict__") else False
    info = getattr(layer, "protocol", None)
    read = info.get("text") if isinstance(info, dict) and not as_loaded else None
    items = {m.group(2) for k in theirs if (m := re.fullmatch(r"params\[(['\"])(.+)\1\]", k))}
    if theirs and items == set(ours) and len(items) == len(theirs):  # tester15 M7: a MappingProxyType
        return (f"{owner}.params holds {', '.join(sorted(ours))}, as the assignment expects, but it is not a dict, "
                f"so gradcheck check reads it as a container of weights ({names}) and not as the params dict of the "
                f"params/grads protocol: make {owner}.params a plain dict (no read-only mapping).")
    expects = (f"the assignment expects {', '.join(sorted(ours))} (a params dict with keys {sorted(ours)}, or attributes "
               f"self.{' and self.'.join(sorted(ours))})") if ours else \
        "the assignment's reference has no parameters (its test grades the inputs' gradients alone)"
    bare = [str(w) for w in (info.get("unchecked") or [])] if isinstance(info, dict) else []
    why = info.get("not_plain_step") if isinstance(info, dict) and not as_loaded else None
    if why and not theirs:  # check's NOT CHECKED as a whole, in its words (newuser31b F1's leftover)
        return (f"{owner}'s weights have no gradient the grader can read; {expects}, each with its gradient. "
                f"gradcheck check says NOT CHECKED as a whole: {why}.")
    if not theirs and ours and set(ours) <= set(bare):  # tester18g M5: the names are there, their gradients are not
        held = ", ".join(f"self.{k}" for k in sorted(ours))
        return (f"{owner} holds {held} but its backward stores no gradient for them (no "
                f"{', '.join(f'self.d{k}' for k in sorted(ours))}, nor a grads dict): it returns dX only, so the grader "
                f"cannot use them as parameters (it sets the values it evaluates at, and grades their gradients); "
                f"{expects}, each with its gradient" + (f"; gradcheck check reads {owner} as {read}." if read else "."))
    return (f"{owner}'s parameters are {names}; {expects}"
            + (f"; gradcheck check reads {owner} as {read}." if read else "."))


def as_checked(layer: Any, reference: Any, X: Any) -> Any:
    """``layer`` read as ``gradcheck check`` reads it, on the input(s) ``X``: for a sandboxed layer its probed copy (an
    attribute-style ``self.W``/``self.dW`` layer's weights as ``params``/``grads``), which :func:`evaluation_point` and
    the test's own ``layer.grads`` then read; an in-process layer as it is. As :func:`layer_gradients` reads it."""
    return _one_output(layer, reference, _inputs(X))[0]


def _params_as_loaded(layer: Any, reference: Any) -> bool:
    """Whether a sandboxed ``layer`` as loaded already has the reference's parameter names (a ``params`` dict), so it
    can be graded without its probed copy."""
    try:
        return set(V.layer_params(layer, type(layer).__name__)) == set(getattr(reference, "params", None) or {})
    except Exception:  # noqa: BLE001 - no params to read: the probed copy reads them
        return False


def _steps_read(probed: Any) -> bool:
    """Whether the probed copy of a sandboxed layer reads its weights' gradients from steps its backward takes, or
    undoes them (``grad_attrs``, ``not_plain_step`` in its protocol): the layer as loaded moves its weights at each
    backward, so the central differences after it would see other weights (a correct ML-From-Scratch Dense FAILed a
    dX-only test, "Is the layer deterministic?")."""
    info = getattr(probed, "protocol", None) or {}
    return bool(info.get("not_plain_step") or any(":" in str(a) for a in info.get("grad_attrs") or []))


def _one_output(layer: Any, reference: Any, xs: list[np.ndarray], gradients: bool = False) -> tuple[Any, list[np.ndarray]]:
    """``(layer, xs)``, the layer to grade, read as ``gradcheck check`` reads it: a sandboxed layer through the
    sandbox's own probe on ``xs`` (:meth:`~gradcheck.sandbox.RemoteLayer.probed`: an attribute-style layer's
    ``self.W``/``self.dW`` as its params and grads, and the arrays forward reads without a gradient, which
    :func:`gradcheck.check_command._undecided` reads). When the reference has several outputs (a forward
    returning k float arrays, a backward taking k upstream gradients) both are presented as one
    (:func:`gradcheck._adapters.class_outputs`, ``Outputs``: stacked when they share a shape, else flattened and
    concatenated); a student's k outputs against a one-output reference stay as loaded (forward's tuple is named)."""
    several = class_outputs(reference, [x.copy() for x in xs]) is not None
    if callable(getattr(layer, "probed", None)):  # a sandboxed layer: always as check reads it (attribute style too)
        try:
            probed = layer.probed([x.copy() for x in xs])
        except StudentCodeError as exc:  # the probe's copy of a 2 GiB broadcast: the graded call below names it
            if getattr(exc, "reason", None) == "timeout" and getattr(exc, "step", None) != "backward" or \
                    getattr(exc, "reason", None) == "policy":  # the staff policy on the probe's calls (redteam30 H1)
                raise  # as it always has; a forward too slow: one timeout
            if gradients and STEPS_ITSELF in str(exc):  # check's exit 3, no gradient compared: none graded either
                raise  # (newuser32 F4: a backward stepping its own weights scored full marks; forward still graded)
            if gradients and getattr(exc, "step", None) == "backward":  # a backward that hung or crashed the probe:
                raise  # the gradients' test says so (newuser37 F4: not "backward stores no gradient")
            return layer, xs  # its forward graded alone: the layer loaded again, its backward not run (plugin._probe)
        if not several and "checked as one" in str((getattr(probed, "protocol", None) or {}).get("text", "")):
            return layer, xs  # k outputs where the reference has one: "gave Y as a tuple" says it, not a stacked shape
        if not several and _params_as_loaded(layer, reference) and not _steps_read(probed) and \
                CLASS_CACHE not in str((probed.protocol or {}).get("text", "")):  # a params dict: graded (newuser37
            # F2: one whose forward returns (Y, cache) is graded as check reads it, its cache handed to backward)
            # as loaded, with the probe's
            layer.protocol = dict(probed.protocol or {})  # reading (check's rules: constants, undecided arrays) and
            probed.release()  # one copy in the child (two ran a 1024-wide Linear out of a 256 MiB sandbox, blamed
            layer.__dict__.pop("_probed", None)  # on the student, where the memory budget names the grader's limit)
            return layer, xs
        if "init_kwargs" in getattr(layer, "__dict__", {}):  # the test's arguments (_reference_contradiction)
            probed.init_kwargs = layer.init_kwargs
        return probed, xs
    if several:
        class_outputs(layer, [x.copy() for x in xs])  # an in-process layer
    return layer, xs


def _within_budget(layer: Any, xs: list[np.ndarray], shape: tuple[int, ...], config: CheckConfig):
    """:func:`gradcheck.check_layer` of ``layer`` on ``xs``, after making sure it fits the sandbox's memory
    (:meth:`~gradcheck.sandbox.RemoteLayer.check_memory_mib`: what the test needs, from the child as it started,
    and what the submission's code holds now beyond it). When the test's own need does not fit, a
    MemoryBudgetError (the grader's setup) before any difference runs; when it fits but the memory the
    submission holds takes the rest, the submission's own fault (:func:`_held_by_submission`: a 0 for these
    parts, saying so), never a grader error (tester17g F2: a submission that reserved its whole limit and freed
    it, or held it, made every check a grader error). An out-of-memory midway (the estimate is a model) after
    every gradient matched the reference's is the submission's when it held the memory then, else the check runs
    again one forward per call (:func:`_one_at_a_time`)."""
    budget = getattr(getattr(layer, "sandbox", None), "memory_mb", None)
    measure = layer.check_memory_mib if callable(getattr(layer, "check_memory_mib", None)) else None
    estimate, held = measure(xs, shape) if measure is not None else (0.0, 0.0)
    if isinstance(budget, int) and estimate > budget:
        raise MemoryBudgetError(
            f"checking {type(layer).__name__}'s gradients by central differences on inputs of shapes "
            f"{', '.join(V.fmt_shape(x.shape) for x in xs)} needs about {estimate:.0f} MiB in the sandbox (the "
            f"sandbox process with numpy, the layer's parameters, inputs and output, and the copies of them the "
            f"numerical differences send in chunks); the sandbox allows {budget} MiB (--memory-mb). Not run: raise "
            f"--memory-mb to at least {int(np.ceil(estimate / 64) * 64)} or give the test smaller shapes, and grade "
            f"again.")
    if isinstance(budget, int) and estimate + held > budget and held > HELD_SLACK_MIB:
        raise _held_by_submission(layer, held, estimate, budget, "before it could run")
    try:
        return check_layer(layer, xs if len(xs) > 1 else xs[0], twin=None, config=config)
    except GradcheckError as exc:  # an out-of-memory midway is retried below; any other error goes to _numerical
        if not isinstance(budget, int) or not any(w in str(exc) for w in ("MemoryError", "Errno 12")):  # (ENOMEM)
            raise
        held = measure(xs, shape)[1] if measure is not None else 0.0
        if estimate + held > budget and held > HELD_SLACK_MIB:  # what the submission's code still holds took it
            raise _held_by_submission(layer, held, estimate, budget, "midway") from None
    return _one_at_a_time(layer, xs, config)


def _one_at_a_time(layer: Any, xs: list[np.ndarray], config: CheckConfig):
    """:func:`gradcheck.check_layer` of a sandboxed ``layer`` again by the element loop, one forward per call (no
    chunk of perturbed copies in the child), after the chunked plan met a MemoryError (tester20g H1). The name
    ``MemoryError`` in the child's report is the submission's word, not the grader's observation: a forward that
    raises it (a real one or a class so named) where the grader's plan holds the least memory is the submission's
    failure, reported as any exception of its forward (the numerical check could not run), never a grader error
    that no ``--memory-mb`` mends and every rerun repeats. The memory the test needs was checked before
    (:func:`_within_budget`)."""
    layer.forward_many = None  # the instance's attribute hides the method: sources read no chunked protocol
    try:
        return check_layer(layer, xs if len(xs) > 1 else xs[0], twin=None, config=config)
    finally:
        del layer.forward_many


def _held_by_submission(layer: Any, held: float, estimate: float, budget: int, when: str) -> StudentCodeError:
    """The student's error when memory the submission's own code holds (``held`` MiB beyond the layer's parameters
    and arrays: a module-level buffer, a cache that grows) leaves less than the check's ``estimate`` of the
    sandbox's ``budget``."""
    return StudentCodeError(
        f"your code holds about {held:.0f} MiB of memory in the grading sandbox beyond the layer's parameters and "
        f"arrays (a module-level buffer, a cache that keeps growing), so the check of {type(layer).__name__}'s "
        f"gradients by central differences, which needs about {estimate:.0f} MiB of the {budget} MiB the sandbox "
        f"allows, ran out of memory {when}. Free the large arrays your code keeps (or do not create them) and "
        f"submit again.")


def _agree(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float, expect_nonfinite: bool) -> bool:
    """The one rule; a NaN or infinity in ``got`` is wrong unless ``expect_nonfinite`` (then it must
    be the same one as in ``expected``)."""
    if expect_nonfinite:
        return close(got, expected, rtol, atol, equal_nan=True)
    return bool(np.all(np.isfinite(got))) and close(got, expected, rtol, atol)


def layer_forward(layer: Any, X: np.ndarray, reference: Any, *, rtol: float = 1e-7, atol: float = 1e-10,
                  training: bool = False, points: float = 1.0, seed: int = 0,
                  params: Mapping[str, np.ndarray] | None = None, expect_nonfinite: bool = False) -> Verdict:
    """Grade ``layer.forward(X)`` (one part ``"Y"`` worth ``points``) against the reference's output.

    ``layer``, ``X``, ``reference``, ``training``, ``seed``, ``params``: as in
    :func:`layer_gradients`; ``rtol``, ``atol``: those of :func:`gradcheck.compare.close`. With
    ``expect_nonfinite`` the test means the reference's NaN or infinity, and the student's output
    must hold the same ones.

    Raises
    ------
    StudentCodeError
        Forward raised or returned a non-array (or NaN or infinity, a NonFiniteError, unless
        ``expect_nonfinite``), or :func:`evaluation_point` refused the student's parameters.
    GradingTestError
        The reference output is not finite (and ``expect_nonfinite`` is False), or, in training mode, the output
        differs from a reference whose training forward is random (:func:`_reference_random`: a mask of its own,
        which no correct layer reproduces; newuser37 F1's care: never a silent 0 for a correct dropout).
    """
    loaded = layer
    layer, xs = _one_output(layer, reference, _inputs(X))
    verdict = _forward_graded(layer, reference, xs, X, rtol, atol, training, points, seed, params, expect_nonfinite)
    if verdict.passed and not expect_nonfinite:  # as layer_gradients probes (grade40: an unshifted softmax)
        _large_forward_graded(verdict, layer, reference, xs, rtol, atol, training)
    if training and not verdict.passed and _reference_random(reference, xs):
        raise GradingTestError(
            f"grade.layer_forward(..., training=True) against {type(reference).__name__}, whose training forward is "
            "random (it draws its own mask on every call), so no correct layer gives its output: grade the training "
            "output by a property the test asserts (its mean, the share of zeros), the forward in eval mode, and "
            "the training gradients with grade.layer_gradients (judged by central differences with the draws held).")
    if not verdict.passed or not isinstance(reference, FunctionPair):
        return verdict
    return _forward_at_each_value(loaded, reference, xs, verdict, partial(
        _forward_graded, X=X, rtol=rtol, atol=atol, training=training, points=points, seed=seed, params=params,
        expect_nonfinite=expect_nonfinite))


def _large_forward_graded(verdict: Verdict, layer: Any, reference: Any, xs: list[np.ndarray], rtol: float,
                          atol: float, training: bool) -> None:
    """Fail, in place, :func:`layer_forward`'s passing part ``Y`` when the layer's output differs from the reference's
    at inputs of size 1000 (:func:`gradcheck._large_inputs.forward_at_large_inputs`: X + 1000, X - 1000, the rows
    apart, forward alone, the first difference ending it), its message check's note: a softmax without its max shift
    matches at the test's input and is NaN there (grade40: layer_gradients probed, layer_forward gave it full marks)."""
    owner = type(layer).__name__
    names = ["X"] if len(xs) == 1 else [f"X{i}" for i in range(len(xs))]
    call = Call(layer, owner, xs, names, V.layer_params(layer, owner), training)
    part = verdict.parts[0]
    try:  # on a copy: the reference's running statistics are the test's
        y_shape = np.shape(forward_in_mode(copy.deepcopy(reference), xs, training))
    except Exception:  # noqa: BLE001 - a reference that cannot be copied or run here: no probe
        return
    if note := forward_at_large_inputs(call, reference, y_shape, rtol, atol):
        part.passed, part.message = False, f"Y matches the reference's at the test's input; {note}"


def _forward_at_each_value(layer: Any, reference: Any, xs: list[np.ndarray], first: Verdict, graded: Any) -> Verdict:
    """``first``, the forward graded with a function pair's string keyword arguments left at their defaults, graded
    again at each other value its source names (:func:`gradcheck.sources.each_keyword_value`, the loop that grades
    the gradients) against the reference pair at that value, where the reference takes that keyword: the first
    failing value's verdict, its part's message naming the value (the points are the part's, once), else ``first``
    (newuser34 M4: a wrong average forward scored full marks with the test leaving mode at its default)."""
    ref_params = _params(reference.student_forward) or {}
    failed: list[tuple[str, Verdict]] = []
    found = keyword_values(layer)
    seen, keys = {(k, w) for k, _, ws in found for w in ws}, {k for k, _, _ in found}
    # an else branch's stand-in value (ELSE_VALUE) is graded where both sources have one, the value no other names
    elses = {k for k, _, ws in keyword_values(reference) if ELSE_VALUE in ws}

    def check(lay: Any, key: str, value: str, ref: Any = None) -> int:
        if key not in ref_params or key in reference._kwargs or failed or value == ELSE_VALUE and key not in elses:
            return 0
        try:
            ref = ref or at_keyword(reference, key, value, xs)
            ref.forward(*[x.copy() for x in xs])
        except Exception:  # the reference refuses the value (else: raise ValueError): not graded there
            return 0
        v = graded(_one_output(lay, ref, xs)[0], ref, xs)
        if not v.passed:
            failed.append((f"{key}={value!r}", v))
        return 0 if v.passed else 1

    def student_at(ref: Any, key: str, value: str) -> int:  # a value the reference names and the student's does not
        if (key, value) in seen or key not in keys or value == ELSE_VALUE:  # no such switch: its own error
            return 0
        lay = at_keyword(layer, key, value, xs)
        try:
            return check(lay, key, value, ref)
        finally:
            if callable(getattr(lay, "release", None)):
                lay.release()

    each_keyword_value(layer, type(layer).__name__, xs, 0, check)
    if not failed:  # the reference's own values too (its source names "average", the student's an else branch)
        each_keyword_value(reference, "the reference", xs, 0, student_at)
    if not failed:
        return first
    at, v = failed[0]
    key = at.split("=")[0]
    for p in v.parts:
        if not p.passed:
            p.message = (f"at {at}: {p.message} This test leaves {key} at its default, where Y matched the reference; "
                         f"the grader also compares your forward with the reference's at each other value your code "
                         f"compares {key} with: fix the {at} branch of forward. The points are this part's: a bug at "
                         f"any value of {key} costs them.")
    return v


def _forward_graded(layer: Any, reference: Any, xs: list[np.ndarray], X: Any, rtol: float, atol: float,
                    training: bool, points: float, seed: int, params: Mapping[str, np.ndarray] | None,
                    expect_nonfinite: bool) -> Verdict:
    """:func:`layer_forward`'s verdict of ``layer`` (read by :func:`_one_output`) against ``reference``."""
    notes = _seed_point(layer, reference, xs, seed, params)  # self.W without a gradient: set in the child
    if notes is None:
        evaluation_point(layer, reference, seed=seed, params=params, xs=xs)
        notes = _transposed_notes(layer, reference, _inputs(X))
    Y_ref = _finite_reference("output Y", forward_in_mode(reference, xs, training),
                              expected=expect_nonfinite)
    stats = _running_stats(layer, reference) if not training else {}
    out = layer.forward(*[x.copy() for x in xs], training=training)
    given, produced_by = _given(xs)
    try:
        Y = V.check_output(out, owner=type(layer).__name__, tensor="Y", expected_shape=None,
                           produced_by=produced_by)
    except NonFiniteError:  # wrong, unless the test expects NaN or infinity (then compared below)
        if not expect_nonfinite:
            raise
        Y = np.array(out, dtype=np.float64)
    notes = notes or []
    if Y.shape != Y_ref.shape:
        msg = f"the output has shape {V.fmt_shape(Y.shape)}; expected {V.fmt_shape(Y_ref.shape)} for {given}."
        return Verdict([Part("Y", points, False, msg)], notes)
    if why := _float32_forward(out, xs):  # as check fails it, and the gradient tests after it (tester23g M4)
        return Verdict([Part("Y", points, False, f"Y has float32 precision, {why}")], notes)
    if _agree(Y, Y_ref, rtol, atol, expect_nonfinite):
        return Verdict([Part("Y", points, True)], notes)
    return Verdict([Part("Y", points, False, f"the output differs from the expected one; {_worst(Y, Y_ref, 'Y')}."
                         + _running_stats_said(layer, reference, stats, xs) + _classic_eval(Y, Y_ref, xs, training))],
                   notes)


def _classic_eval(Y: np.ndarray, Y_ref: np.ndarray, xs: list[np.ndarray], training: bool) -> str:
    """The classic-dropout sentence of an eval forward ``Y = c X`` (one ``c`` in (0, 1), every entry kept) where the
    reference's is the identity, ``Y_ref = X`` (verify38 F5: "the output differs" of a dropout scaled at test time,
    which ``gradcheck check`` names); "" otherwise."""
    X = xs[0] if len(xs) == 1 else None
    if training or X is None or not (Y.shape == Y_ref.shape == X.shape) or not np.all(X != 0) or not close(Y_ref, X):
        return ""
    kept, c = kept_scale(Y, X)
    if c is None or kept != 1 or not 0 < c < 1 - 2 * rounding_rtol(Y):  # a float32 identity: c = 1 rounded
        return ""
    return (f" Your eval forward is Y = {c:.4g} X where the reference's is the identity, Y = X: "
            f"{DIAGNOSES['classic-dropout'].name}, scaled at test time; " + INVERTED_DROPOUT.format(c=c, inv=1 / c)
            + f": {CLASSIC_DROPOUT_FIX.format(c=c)}.")


def _running_stats(layer: Any, reference: Any) -> dict[str, np.ndarray]:
    """``{name: the student's value}`` of the student's arrays of the shapes of the running statistics the reference
    holds (its ``running_*``, ``moving_*`` arrays), whatever their names (which of them are its statistics is found
    after, by :func:`gradcheck._running_stats.find_roles`), read before an eval forward (in the sandbox's child for
    a sandboxed layer); ``{}`` when the reference has none or they cannot be read."""
    shapes = [np.shape(v) for k, v in vars(reference).items()
              if re.match(r"(running|moving)_", k) and isinstance(v, np.ndarray)]
    if not shapes:
        return {}
    try:
        state = adapter_call(layer, "state_values")
    except Exception:  # noqa: BLE001 - the words are a diagnosis: the verdict stands without them
        return {}
    return {k: v for k, v in state.items() if np.ndim(v) >= 1 and np.shape(v) in shapes}


def _stats_roles(layer: Any, reference: Any, before: Mapping[str, np.ndarray], xs: list[np.ndarray]) -> dict[str, str]:
    """``{the student's attribute: the reference's statistic}`` of ``before``'s arrays, by the one role finder check
    uses (:func:`gradcheck._running_stats.find_roles`: by what training forwards do to them, on a copy), else by
    the same names; {} when none."""
    from .._running_stats import find_roles

    try:
        own = find_roles(layer, reference, type(layer).__name__, xs[0].shape, 0).own if len(xs) == 1 else {}
    except Exception:  # noqa: BLE001 - the words are a diagnosis: by name, as before
        own = {}
    return {k: r for k, r in own.items() if k in before} or {k: k for k in before if isinstance(
        getattr(reference, k, None), np.ndarray) and re.match(r"(running|moving)_", k)}


def _running_stats_said(layer: Any, reference: Any, before: Mapping[str, np.ndarray], xs: list[np.ndarray]) -> str:
    """The words of an eval output that differs, on the running statistics ``before`` it (:func:`_running_stats`,
    their roles by :func:`_stats_roles`): its eval forward changed them (updated in eval mode, in check's words,
    :func:`gradcheck.diagnose._state_fields`), or they differ from the reference's after the same training forwards
    of this test (the update, not the eval forward, is wrong); "" when neither (newuser37 F8, F6b: the grader said
    "no known bug pattern" where check named the bug)."""
    if not before:
        return ""
    try:
        after = adapter_call(layer, "state_values")
    except Exception:  # noqa: BLE001 - as _running_stats
        return ""
    roles = _stats_roles(layer, reference, before, xs)
    before = {k: before[k] for k in roles}
    moved = [k for k, v in before.items() if k in after and not np.array_equal(after[k], v, equal_nan=True)]
    if moved:
        f = _state_fields(False, 0.0, moved)
        return f" Your eval forward changed {', '.join(moved)}{f['why']}. Fix: {f['fix']}."
    differ = [k for k, v in before.items() if np.shape(v) == np.shape(getattr(reference, roles[k])) and not close(
        v, getattr(reference, roles[k]), 1e-7, 1e-10)]
    if not differ:
        return ""
    kept = [k for k in differ if at_initial_value(roles[k], before[k])]  # verify37 F9: never updated, as check says
    said = "; ".join(f"{k} is {_fmt(before[k])}, the expected {_fmt(getattr(reference, roles[k]))}"
                     + (f" ({NOT_UPDATED}: it still holds its initial value)" if k in kept else "") for k in differ)
    m = getattr(reference, "momentum", None)
    rule = (f" (running = (1 - momentum) * running + momentum * batch statistic with momentum={m:g}, the variance "
            "the unbiased batch variance, as PyTorch)" if type(reference).__module__.startswith("manualprop")
            and isinstance(m, float) else "")
    return (f" Before this eval forward your running statistics already differ from the expected ones after the same "
            f"training forwards: {said}. " + (
                f"Your training forward never updates {', '.join(kept)}: update {'them' if len(kept) > 1 else 'it'} "
                f"in the training forward as the reference does{rule}." if kept == differ else
                f"The update in your training forward differs from the reference's{rule}: check the momentum's "
                "convention and the batch variance (biased or unbiased)."))


def forward_keywords(layer: Any, X: np.ndarray, keyword: str, expected: Mapping[str, np.ndarray], *,
                     parts: Mapping[str, float] | None = None, rtol: float = 1e-7, atol: float = 1e-10,
                     points: float | None = None) -> Verdict:
    """Grade what a CS231n function pair's forward writes into a dict argument (``bn_param``).

    After one ``forward(X)`` each ``keyword[key]`` as forward left it
    (:attr:`~gradcheck.sandbox.RemoteLayer.call_keywords`) must equal ``expected[key]``
    (:func:`gradcheck.compare.close`); ``parts`` gives the points per key (default 1 each; ``points``, as in
    :func:`layer_gradients`, their total shared equally). Graded: CS231n's running
    statistics ``running = momentum * running + (1 - momentum) * batch`` (assignment 2,
    ``batchnorm_forward``). Returns one part per key, named ``bn_param['running_mean']``;
    StudentCodeError when forward raised or returned a non-array.
    """
    xs = _inputs(X)
    layer.forward(*[x.copy() for x in xs])
    left = (getattr(layer, "call_keywords", None) or {}).get(keyword, {})
    verdict = Verdict()
    for k, w in _weights(parts, list(expected), points).items():
        name, want, got = f"{keyword}[{k!r}]", np.asarray(expected[k], dtype=np.float64), left.get(k, KeyError)
        if got is KeyError:
            msg = (f"forward left no {name}; it must store the updated value in {keyword} (the caller's dict), "
                   f"shape {V.fmt_shape(want.shape)}.")
        elif got is None:
            msg = f"{name} is not a numeric array after forward."
        elif np.shape(got) != want.shape:
            msg = (f"{name} has shape {V.fmt_shape(np.shape(got))} after forward; expected "
                   f"{V.fmt_shape(want.shape)}.")
        elif close(got, want, rtol, atol):
            msg = ""
        else:
            msg = f"{name} after forward differs from the expected value; {_worst(np.asarray(got, float), want)}."
        verdict.parts.append(Part(name, w, not msg, msg))
    return verdict


#: Forwards of the layer per wrong part the grader may spend on ``gradcheck check``'s signatures that run the layer
#: again (:func:`gradcheck.diagnose.name_graded`: each wrong tensor is named as check names it, newuser24 M1); once
#: spent, no further signature starts and the part is named from its numbers alone, its message ending with check's
#: command. 0: numbers alone. A count, not seconds, so that a student's sentence does not depend on the grading
#: machine's load (the planted max-pool overwrite needs 442, an unnamed one ends by 640).
DIAGNOSIS_FORWARDS = 1000


def layer_gradients(layer: Any, X: np.ndarray, reference: Any, *, parts: Mapping[str, float] | None = None,
                    seed: int = 0, rtol: float = RTOL, atol: float | None = ATOL, training: bool = False,
                    numerical: bool = True, params: Mapping[str, np.ndarray] | None = None,
                    constants: Sequence[str] = (), points: float | None = None) -> Verdict:
    """Grade ``backward``: each tensor against the reference and against central differences.

    One forward and one backward at the evaluation point with a seeded upstream gradient ``G``, against
    :func:`gradcheck.sources.reference_source`. Each tensor (``dX``, ``d<key>``) is a part: a wrong ``db`` (value,
    shape, None, missing key) costs ``db``'s points alone. When all match, :func:`gradcheck.check_layer` must pass.

    Parameters
    ----------
    layer, reference : object
        The student's layer (usually a :class:`~gradcheck.sandbox.RemoteLayer`) and ours.
    X : ndarray, or list or tuple of ndarray
        The input(s), away from kinks (:func:`away_from_kinks`). For several inputs (a CS231n pair
        whose ``backward`` returns ``(dx, dw, db)``) the parts are named after the **reference's**
        ``forward`` arguments, whatever the student called theirs.
    parts, points : mapping of str -> float, or float, optional
        Points per tensor (``{"dX": 2, "dW": 2, "db": 2}``; default 1 each), or their total shared equally.
    seed : int, default 0
        Seeds ``G``, the parameters (:func:`evaluation_point`) and the numerical check's draws.
    params : mapping of str -> ndarray, optional
        The test's own parameter values.
    rtol, atol : float
        The checker's tolerances (atol None: :func:`gradcheck.compare.default_atol` against central
        differences, :data:`gradcheck.compare.ATOL_FLOOR` against the reference).
    training, numerical : bool, default False, True
        The mode; whether to require agreement with central differences too (and to name a wrong part by check's
        signatures that run the layer again, :data:`DIAGNOSIS_FORWARDS`; False: by its numbers alone).
    constants : sequence of str, optional
        Arrays the student's forward only reads (``["class_weights"]``, ``"inner.scale"``), constants as ``gradcheck
        check --constants`` declares them; undeclared, one beside weights with gradients is NOT CHECKED as a whole
        (``Verdict.not_checked``, no points), as check says (exit 3). A name the layer does not read is left out.

    Raises
    ------
    StudentCodeError
        :func:`evaluation_point` refused the student's parameters, or forward raised.
    GradingTestError
        A reference output or gradient is not finite, or ``constants`` is not a list of names of arrays outside the
        reference's parameters, or both ``parts`` and ``points`` were given: the test is wrong.
    """
    declared = _declared(constants, reference)
    d_x, d_in = _input_parts(layer, reference, X)
    weights = _weights(parts, d_in + [f"d{k}" for k in getattr(reference, "params", None) or {}], points)  # the test's
    layer, xs = _one_output(layer, reference, _inputs(X), gradients=True)
    _take_constants(layer, declared)
    owner = type(layer).__name__
    keys = list(point := evaluation_point(layer, reference, seed=seed, params=params, xs=xs))  # the parameters' names
    names = d_x + [f"d{k}" for k in keys]
    Y_ref = _finite_reference("output Y", forward_in_mode(reference, xs, training))
    G = upstream_draw(probe_rng(seed), Y_ref.shape, [*xs, *point.values()])  # never the test's own draw (newuser29 H2)
    ref_call = Call(None, owner, xs, [n[1:] for n in d_x], point, training)

    def expected_for(dY):  # the pipeline's reference source, by part name; each finite
        grads = reference_source(reference, ref_call, dY)[1]
        return {n: _finite_reference(f"gradient {n}", grads[k]).copy() for n, k in zip(names, ref_call.keys + keys)}

    expected = expected_for(G)
    ones = expected_for(np.ones_like(G)) if np.any(G != 1) else {}
    Y = layer.forward(*[x.copy() for x in xs], training=training)
    V.check_output(Y, owner=owner, tensor="Y", produced_by=_given(xs)[1], expected_shape=G.shape,
                   expected_why="the reference output's shape")
    dY = G.copy()
    with _integers_read(layer):  # an int64 dX fails its own part, not the whole test (redteam25: 16/28 for 24)
        ret = layer.backward(dY)
    written, cached = dY_written(owner, dY, G), _cache_note(layer)  # check's rule (_as_check), its note: read now
    short = _wrong_count(ret, xs, d_in)  # the inputs' parts alone fail: the parameters' are read (newuser25 H3)
    got: dict[str, Any] = dict.fromkeys(d_in, short) if short else dict(zip(d_in, ret if len(xs) > 1 else [ret]))
    got.update({f"d{k}": _as_stored(layer, k, getattr(layer, "grads", None)) for k in keys})
    got, Y = {n: _copy(g) for n, g in got.items()}, _copy(Y)  # scored as is: a diagnosis may zero them (newuser25 H1)
    cfg = CheckConfig(rtol=rtol, atol=atol, seed=seed, training=training)
    if training and (held := _random_both(layer, reference, xs, owner)) is not None:  # newuser37 F1: as check does
        return _held_graded(held[0], layer, xs, d_in, weights, got, expected_for, keys, short, cfg, numerical, G, Y,
                            reference, written) if held else _fixed_mask_graded(owner, reference, weights)
    parts = _graded_parts(layer, xs, d_in, weights, got, expected, ones, keys, short, cfg, numerical, G, Y, Y_ref,
                          ref_call.names)
    verdict = Verdict(parts, _transposed_notes(layer, reference, xs) + [cached] * bool(cached))
    return _as_check(verdict, layer, xs, d_in, G.shape, cfg, numerical, Y, reference, written, G)


def _input_parts(layer: Any, reference: Any, X: Any) -> tuple[list[str], list[str]]:
    """``(the reference's input gradients' names, those graded)``: ``dX`` (``dx``, ``dw``, ... of a pair), graded
    unless ``layer`` is a model differentiated in its weights alone (:func:`gradcheck.sources.computes_no_dx`: DLfS
    vol. 1's ``gradient(x, t)``, CS231n's ``loss(X, y)``), which computes no dX."""
    d_x = [f"d{n}" for n in V.input_names(reference, len(_inputs(X)))]
    return d_x, [] if computes_no_dx(layer) else d_x


def _fixed_mask_graded(owner: str, reference: Any, weights: Mapping[str, float], undecided: bool = False) -> Verdict:
    """:func:`layer_gradients` of a layer whose training forward is the same at every call beside a reference that
    draws a new mask at each (:func:`_random_both`'s ``()``): every part fails, named as ``gradcheck check`` names it
    (:func:`gradcheck.diagnose.fixed_mask`; verify38 F6: "dX is the local derivative evaluated at the output Y", read
    from the numbers of two different masks). ``undecided`` (``(UNDECIDED,)``): no bounded number of rounds tells it
    from a right random layer, NOT CHECKED as check says (:func:`gradcheck.diagnose.mask_undecided`, check42)."""
    if undecided:
        from ..diagnose import mask_undecided
        return Verdict([Part(n, w, True) for n, w in weights.items()],
                       not_checked=f"gradcheck check says NOT CHECKED: {mask_undecided(reference)}.")
    return Verdict([Part(n, w, False, fixed_mask(owner, reference).message + ".") for n, w in weights.items()])


def _at_zero_parts(parts: list[Part], xs: list[np.ndarray], d_in: list[str], got: Mapping[str, Any],
                   expected: Mapping[str, np.ndarray], G: np.ndarray, rtol: float) -> None:
    """The message of a failing input gradient that differs from the reference's only where its input is exactly 0
    (a test that puts entries at a kink on purpose): the derivative there is a convention (ReLU's, LeakyReLU's,
    abs's at 0), said with both values of dX / dY there (newuser37 F5: "no known bug pattern" for a LeakyReLU
    taking x >= 0 as the positive side, and check's command PASSed, its random inputs never 0)."""
    for x, name in zip(xs, d_in):
        p = next((p for p in parts if p.name == name and not p.passed), None)
        g, want = got.get(name), expected.get(name)
        if p is None or not isinstance(g, np.ndarray) or g.shape != x.shape or want.shape != x.shape \
                or x.dtype.kind != "f" or G.shape != x.shape:
            continue
        g = np.asarray(g, dtype=np.float64)
        off = mismatched(g, want, rtol, ATOL_FLOOR)  # the rule that failed the part
        if not off.any() or np.any(off & (x != 0)):
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            mine, theirs = (np.unique(np.round(v[off] / G[off], 12)) for v in (g, want))
        said = (f"; your {name} / dY there is {mine[0]:g}, the expected {theirs[0]:g}" if mine.size == 1 == theirs.size
                else "")
        p.message = (f"{name} differs from the expected value only where the input is exactly 0 ({int(off.sum())} "
                     f"of {x.size} entries, each at x = 0), and matches everywhere else{said}. At a kink the derivative "
                     "is a convention: this test puts inputs at 0 to grade the assignment's, which random inputs "
                     "(gradcheck check's) never reach: check how your forward and backward split x < 0, x == 0 and "
                     "x > 0 (x > 0 or x >= 0).")


def _random_both(layer: Any, reference: Any, xs: list[np.ndarray], owner: str) -> tuple[Any] | None:
    """``(proxy,)`` when the student's training forward is random (three forwards differ: a mask drawn per call) and
    so is the reference's (:func:`gradcheck.diagnose._reference_fixed`, on a copy): ``gradcheck check``'s rule for
    not comparing a ``--reference`` (:func:`gradcheck.diagnose._diagnose_mode`), since each draws its own mask. The
    proxy is the student's layer with its draws held (:func:`gradcheck.diagnose.held_forward`), None when they cannot
    be held (a generator made anew in forward); ``()`` when the student's is the same at every call and drops entries
    while the reference's draws (:func:`gradcheck.diagnose.same_mask`). None (no tuple) otherwise: compared as any.
    Three forwards of a sparse output (a dropout after a ReLU leaving few entries nonzero) can agree by chance
    (redteam39 F5: a right model compared with the reference's own mask), so against a random reference they are
    tried again, :data:`~gradcheck.diagnose.REFERENCE_FORWARDS` forwards or more in all; ``(UNDECIDED,)`` where every
    round agrees but no bounded number of rounds bounds a right layer's chance (check42)."""
    from ..diagnose import MAX_ROUNDS, REFERENCE_FORWARDS, held_forward, rounds_needed

    if not _reference_random(reference, xs):
        return None
    rounds, done, bounded = -(-REFERENCE_FORWARDS // 3), 0, True
    while done < rounds:
        proxy, how = held_forward(layer, xs, owner, training=True)
        if how:
            return (proxy,)
        done += 1
        if done == -(-REFERENCE_FORWARDS // 3):  # (three rounds agreed: as many as a right layer needs, from the ref)
            rounds = rounds_needed(reference, xs)  # (the chance a right layer gets here: its docstring's bound)
            rounds, bounded = (MAX_ROUNDS, False) if rounds is None else (rounds, True)
    if not same_mask(layer, reference, xs):
        return None
    return () if bounded else (UNDECIDED,)


#: :func:`_random_both`'s proxy where a mask fixed at the first call cannot be told from a right random layer within
#: :data:`~gradcheck.diagnose.MAX_ROUNDS` rounds (:func:`gradcheck.diagnose.mask_undecided`): NOT CHECKED.
UNDECIDED = object()


def _copy_or_itself(reference: Any) -> Any:
    """A deep copy of ``reference``, whose forwards then leave the staff's object as it was; the reference itself
    when it cannot be copied (its own forwards are run)."""
    try:
        return copy.deepcopy(reference)
    except Exception:  # noqa: BLE001 - a reference that cannot be copied: its own forwards are run
        return reference


def _reference_random(reference: Any, xs: list[np.ndarray]) -> bool:
    """Whether the reference's training forward on ``xs`` is random: two forwards of a copy differ
    (:func:`gradcheck.diagnose._reference_fixed`, check's test; the reference itself when it cannot be copied)."""
    from ..diagnose import _reference_fixed

    return not _reference_fixed(_copy_or_itself(reference), xs, True)


def _held_graded(proxy: Any, layer: Any, xs: list[np.ndarray], d_in: list[str], weights: Mapping[str, float],
                 got: Mapping[str, Any], expected_for: Callable[[np.ndarray], dict[str, np.ndarray]], keys: list[str],
                 short: str, cfg: CheckConfig, numerical: bool, G: np.ndarray, Y: Any, reference: Any,
                 written: GradcheckError | None) -> Verdict:
    """:func:`layer_gradients` of a layer whose training forward is random, as is the reference's
    (:func:`_random_both`): the reference draws its own mask, so its gradients are not the student's and are not
    compared element-wise (newuser37 F1: every correct inverted Dropout scored 0/3, "dX differs ... expected 0",
    where ``gradcheck check --training --reference`` said "reference: not compared: the forward is random" and
    exited 0). Each part is read as :func:`_part` reads it (missing, None, integer, NaN, float32, the reference's
    shape) and judged by central differences of the student's own forward with its draws held (``proxy``, the
    check's holding; the layer itself when they cannot be held, which check fails as not repeatable), by
    :func:`_numerical`; a part they pass still has the call the test made (``Y`` of forward, then backward of ``G``)
    meet what the reference shows of it (:func:`_mask_graded`), else its gradients' mean over fresh draws meet the
    reference's (:func:`_expected_graded`; ``expected_for(G)``: the reference's gradients of one draw); then
    :func:`_as_check`'s verdicts on the layer as a whole. With ``numerical=False`` nothing can judge the parts: the
    test's mistake (GradingTestError), not the student's 0. ``proxy`` :data:`UNDECIDED`: NOT CHECKED
    (:func:`_fixed_mask_graded`)."""
    if proxy is UNDECIDED:
        return _fixed_mask_graded("", reference, weights, undecided=True)
    expected = expected_for(G)  # (a draw of the reference's: its shapes are what the parts are read against)
    if not numerical:
        raise GradingTestError(
            "grade.layer_gradients(..., training=True, numerical=False) on a layer whose training forward is random, "
            f"as the reference's is ({type(reference).__name__} draws its own mask, so its gradients are not the "
            "student's): nothing can grade the gradients; give numerical=True (central differences of the student's "
            "forward with its draws held, as gradcheck check does) or training=False.")
    parts = [Part(n, w, False, short) if short and n in d_in else
             _part(n, w, got[n], np.asarray(got[n], dtype=np.float64) if isinstance(got[n], np.ndarray) and
                   got[n].shape == expected[n].shape and got[n].dtype.kind == "f" else expected[n], None, keys,
                   xs[0].shape[0], cfg.rtol, cfg.atol, parameter=n not in d_in)
             for n, w in weights.items()]
    verdict = Verdict(parts, [f"reference: not compared: {RANDOM_REFERENCE}."])
    _random_mean_graded(verdict, layer, reference, xs)
    if any(p.passed for p in parts):
        rename = dict(zip([f"d{n}" for n in V.input_names(layer, len(xs))], d_in))
        held_cfg = CheckConfig(rtol=cfg.rtol, atol=cfg.atol, seed=cfg.seed, training=True, batched=False)
        run = partial(_within_budget, layer if proxy is None else proxy, xs, G.shape, held_cfg)
        if failed := _numerical(verdict, {p.name for p in parts if p.passed}, run, lambda t: rename.get(t, t), "",
                                "Does backward apply the mask and the scale forward drew?"):
            failed.notes = verdict.notes + failed.notes
            verdict = failed
    if not _mask_graded(verdict, type(layer).__name__, reference, xs, G, Y, got.get(d_in[0]), d_in[0], cfg.rtol):
        _expected_graded(verdict, layer, proxy, xs, G, d_in, keys, expected_for, cfg.rtol, reference)
    else:
        _share_graded(verdict, layer, proxy, xs[0], reference, Y)
    return _as_check(verdict, layer, xs, d_in, G.shape, cfg, False, Y, reference, written)


def _mask_graded(verdict: Verdict, cname: str, reference: Any, xs: list[np.ndarray], G: np.ndarray, Y: Any,
                 dX: Any, name: str, rtol: float) -> bool:
    """The test's own call of a random layer judged by what the reference shows of it, where the held check cannot
    judge it: the submission's forward can tell the held check's calls (an input a step ``h`` from the last, its
    generator rewound) and the mean's probe batch (its size) from the test's, and answer them otherwise (redteam39 F1,
    F2: a backward ``dX = dY`` beside a forward giving the identity to the central differences kept its points; a
    dropout without its scale, raising on the probe, too). A reference whose training output ``Y / X`` is 0 or one
    scale needs the same of ``Y``, the output of the test's forward (:func:`gradcheck.diagnose.scale_difference`:
    every passing part fails, as the mean's finding fails them); a reference that is a mask layer (no parameters, its
    own backward ``G * Y / X``) needs ``dX`` (part ``name``), the backward of ``G`` after that forward, to be
    ``G * Y / X`` too, as central differences of that forward with its mask held would give. Entries where ``X`` is 0
    are left out; the test's input alone (one input), else nothing is claimed. Read after the held check, so an honest
    bug keeps that check's words. Returns whether the parts were judged here (a part failed, or the mask layer's dX
    held); False: nothing claimed (:func:`_expected_graded` judges them)."""
    if len(xs) != 1 or not isinstance(Y, np.ndarray) or Y.shape != xs[0].shape or Y.dtype.kind not in "fiu" \
            or not np.any(on := xs[0] != 0):
        return False
    ref = _copy_or_itself(reference)
    X, Y, ref_name = xs[0], np.asarray(Y, dtype=np.float64), type(reference).__name__
    try:  # the reference's own call, then its backward of G: a mask layer's is G * Y_ref / X
        Y_ref = np.asarray(forward_in_mode(ref, [X.copy()], True), dtype=np.float64)
        dX_ref = np.asarray(ref.backward(G.copy()), dtype=np.float64)
    except Exception:  # noqa: BLE001 - a reference of another protocol: no claim
        return False
    if scaled := scale_difference(Y, X, Y_ref, cname, ref_name):
        for p in verdict.parts:
            p.passed, p.message = (False, scaled + ".") if p.passed else (p.passed, p.message)
        return True
    part = next((p for p in verdict.parts if p.name == name and p.passed), None)
    if part is None or getattr(ref, "params", None) or not isinstance(dX, np.ndarray) or dX.shape != X.shape \
            or dX_ref.shape != X.shape or not close(dX_ref[on], G[on] * Y_ref[on] / X[on], SCALE_RTOL, 0.0):
        return False
    with np.errstate(all="ignore"):
        mine, want = np.asarray(dX, dtype=np.float64)[on], G[on] * Y[on] / X[on]
    if not close(mine, want, rtol=rtol, atol=ATOL_FLOOR):
        part.passed, part.message = False, (
            f"{name} is not dY * Y / X for the output Y your forward gave just before this backward (max |{name} - "
            f"dY * Y / X| = {np.abs(mine - want).max():.3g}), as {ref_name}'s is and as central differences of that "
            "forward with its mask held give: backward must apply the mask and the scale drawn by the forward it "
            "follows. Does backward apply the mask and the scale forward drew?")
    return True


#: Training calls of the student's layer (forward, then backward of the test's dY, each a new draw) whose gradients'
#: mean :func:`_expected_graded` compares with the reference's, and the reference's draws (in process: cheap) that give
#: its mean and the standard deviation of one draw. 32: each call is a round trip of the sandbox under its per-call
#: limit, charged to the submission's time; a wrong dX twice the right one is tens of standard errors off.
EXPECTED_CALLS, REFERENCE_DRAWS = 32, 400


def _expected_graded(verdict: Verdict, layer: Any, proxy: Any, xs: list[np.ndarray], G: np.ndarray, d_in: list[str],
                     keys: list[str], expected_for: Callable[[np.ndarray], dict[str, np.ndarray]], rtol: float,
                     reference: Any) -> None:
    """Each passing part's mean over :data:`EXPECTED_CALLS` training calls of the layer (forward of the test's input,
    then backward of its ``G``, the draws free: each call a new mask) against the reference's mean over
    :data:`REFERENCE_DRAWS` of its own (``expected_for(G)``), within :data:`~gradcheck.diagnose.SIGMAS` standard
    errors of the difference (each draw's spread read from the reference's draws: the same as a right layer's) plus
    the tolerances, entry by entry and projected on the reference's mean (:func:`_projected_off`). A random layer that
    is not a mask layer (a model holding a dropout) has no exact anchor (:func:`_mask_graded`), and its forward can
    answer the held check's inputs (``X + h v``) with the linear map its wrong backward is the adjoint of (redteam39
    F4: a model Linear -> Dropout whose dX is twice the right one kept its points); those calls are the test's own
    kind of call, so that backward is wrong here on average. A part whose projection lies more than
    :data:`SUSPECT_SIGMAS` standard errors off after those calls is judged again on :data:`EXPECTED_MORE` calls more
    (redteam40 F4: a dW 0.7 times the right one, one entry's spread over the draws near its mean, passed every entry's
    bound at 32 calls). The outputs of those calls' forwards must have the reference's mean square
    (:func:`_output_moment_graded`). A call that raises is the submission's failure (its own input again), and so is a
    gradient that is not an array of the reference's shape and a numeric dtype there (:func:`_unlike_own_call`; the
    test's own call gave one: redteam40 F3, such calls were "no claim" and a model's wrong backward answering them so
    kept its points)."""
    todo, ref_name = [p for p in verdict.parts if p.passed], type(reference).__name__
    if not todo:
        return
    theirs = [expected_for(G) for _ in range(REFERENCE_DRAWS)]
    with _draws_free(layer, proxy):
        calls = [_one_training_call(layer, xs, G, d_in, keys) for _ in range(EXPECTED_CALLS)]
    mine, ys, drawn = [c[1] for c in calls], [c[0] for c in calls], _reference_squares(reference, xs, REFERENCE_DRAWS)
    for more in (0, EXPECTED_MORE):  # the forward's outputs first: a wrong forward's gradients are its forward's
        if more and not _more_needed(todo, mine, ys, theirs, drawn, rtol):
            return
        if more:
            with _draws_free(layer, proxy):
                added = [_one_training_call(layer, xs, G, d_in, keys) for _ in range(more)]
            mine, ys = mine + [c[1] for c in added], ys + [c[0] for c in added]
        if drawn is not None:
            _output_moment_graded(todo, ys, drawn, xs, rtol, type(layer).__name__, ref_name)
        _expected_parts([p for p in todo if p.passed], mine, theirs, expected_for, G, rtol, ref_name)


def _more_needed(todo: list[Part], mine: list[dict[str, Any]], ys: list[Any], theirs: list[dict[str, np.ndarray]],
                 drawn: tuple[Any, np.ndarray, list[np.ndarray]] | None, rtol: float) -> bool:
    """Whether :func:`_expected_graded` makes :data:`EXPECTED_MORE` calls more: a part still passes, and the outputs'
    mean square (:func:`_squares_suspect`), the pairs of entries they keep or drop together (:func:`_together_suspect`)
    or a passing part's projection (:func:`_projected_off`) lies over :data:`SUSPECT_SIGMAS` standard errors from the
    reference's."""
    if not any(p.passed for p in todo):
        return False
    return drawn is not None and (_squares_suspect(ys, drawn[1], rtol) or _together_suspect(ys, drawn[2])) or any(
        p.passed and _projected_off(p.name, mine, theirs, rtol, SUSPECT_SIGMAS) > 0 for p in todo)


def _squares_suspect(ys: list[Any], b: np.ndarray, rtol: float) -> bool:
    """Whether the mean square of the outputs ``ys`` lies over :data:`SUSPECT_SIGMAS` standard errors from the
    reference's draws ``b`` (or an output is not a finite numeric array): :func:`_expected_graded` then makes more
    calls before :func:`_output_moment_graded` judges them."""
    if any(not (isinstance(y, np.ndarray) and y.dtype.kind in "fiu" and np.all(np.isfinite(y))) for y in ys):
        return False  # (judged as it is: no more calls needed)
    a = np.mean([np.mean(np.square(np.asarray(y, dtype=np.float64))) for y in ys])
    se = b.std(ddof=1) * np.sqrt(1 / len(ys) + 1 / len(b))
    return bool(abs(a - b.mean()) > SUSPECT_SIGMAS * se + ATOL_FLOOR + rtol * (abs(a) + abs(b.mean())))


#: :func:`_expected_graded`'s first draws of the reference, which give the projection's direction (the later ones its
#: mean: :func:`_projections`), the projection's distance in standard errors that calls for more calls of the
#: student's layer, and how many more (each a sandbox round trip: about 10 ms, so about 2.5 s).
AIM_DRAWS, SUSPECT_SIGMAS, EXPECTED_MORE = 200, 2.5, 224


def _expected_parts(todo: list[Part], mine: list[dict[str, Any]], theirs: list[dict[str, np.ndarray]],
                    expected_for: Callable[[np.ndarray], dict[str, np.ndarray]], G: np.ndarray, rtol: float,
                    ref_name: str) -> None:
    """:func:`_expected_graded`'s judgement of the parts ``todo`` on the student's calls ``mine`` (gradients by part
    name) against the reference's draws ``theirs`` (grown by :data:`REFERENCE_MORE` for a second look before a FAIL),
    entry by entry, then projected on the reference's mean (:func:`_projected_off`)."""
    n = len(mine)
    for p in todo:
        ref = np.stack([t[p.name] for t in theirs])
        got = [m.get(p.name) for m in mine]
        if odd := [g for g in got if not (isinstance(g, np.ndarray) and g.shape == ref.shape[1:]
                                          and g.dtype.kind in "fiu")]:
            p.passed, p.message = False, _unlike_own_call(p.name, len(odd), odd[0], ref.shape[1:], n)
            continue
        mean = np.mean(np.asarray(got, dtype=np.float64), axis=0)
        if np.any(_mean_off(mean, ref, rtol, 0, n) > 0) or _projected_off(p.name, mine, theirs, rtol) > 0:
            if len(theirs) == REFERENCE_DRAWS:  # a second, closer look before a FAIL (redteam40 F1)
                theirs += [expected_for(G) for _ in range(REFERENCE_MORE)]
            ref = np.stack([t[p.name] for t in theirs])
        off = _mean_off(mean, ref, rtol, RARE_CALLS if len(ref) > REFERENCE_DRAWS else 0, n)
        if np.any(off > 0):
            i = np.unravel_index(int(np.argmax(off)), off.shape)
            se = ref.std(axis=0, ddof=1)[i] * np.sqrt(1 / n + 1 / len(ref))
            p.passed, p.message = False, (
                f"{p.name} averaged over {n} training calls of this test's input and dY (each a new draw) "
                f"is {mean[i]:.6g} at {p.name}[{', '.join(str(int(k)) for k in i)}], where {ref_name}'s averages "
                f"{ref.mean(axis=0)[i]:.6g} over {len(ref)} draws (its spread gives a standard error of {se:.3g}): "
                f"{_NOT_ON_AVERAGE}")
        elif _projected_off(p.name, mine, theirs, rtol, rare=len(theirs) > REFERENCE_DRAWS) > 0:
            scale = _projected_scale(p.name, mine, theirs)
            p.passed, p.message = False, (
                f"{p.name} averaged over {n} training calls of this test's input and dY (each a new draw) is "
                f"{scale:.3g} times {ref_name}'s average over {len(theirs) - AIM_DRAWS} draws, read along that "
                f"average's direction (all of {p.name}'s entries at once, more than {SIGMAS:g} standard errors apart): "
                f"{_NOT_ON_AVERAGE}")


_NOT_ON_AVERAGE = ("backward does not give the gradient of the forward it follows, on average over the draws, though "
                   "central differences of your forward with its draws held agreed with it: your forward answers those "
                   "calls otherwise than this test's own.")


def _projections(name: str, calls: list[Mapping[str, Any]], theirs: list[Mapping[str, np.ndarray]]) -> np.ndarray:
    """Each call's gradient ``name`` projected on the unit direction of the mean of the reference's first
    :data:`AIM_DRAWS` draws ``theirs`` (kept apart from the draws whose mean is compared, ``theirs[AIM_DRAWS:]``, so the
    direction is independent of both means compared): one number each."""
    u = np.mean([np.asarray(a[name], dtype=np.float64) for a in theirs[:AIM_DRAWS]], axis=0).ravel()
    norm = float(np.linalg.norm(u))
    u = u / norm if norm > 0 else u
    return np.array([float(np.asarray(c[name], dtype=np.float64).ravel() @ u) for c in calls])


def _projected_off(name: str, mine: list[Mapping[str, Any]], theirs: list[Mapping[str, np.ndarray]], rtol: float,
                   sigmas: float | None = None, rare: bool = False) -> float:
    """How far (positive: too far) the mean of the student's calls ``mine`` lies from the reference's draws
    ``theirs[AIM_DRAWS:]``, both projected on the reference's mean direction (:func:`_projections`): ``sigmas``
    standard errors of the difference (None: :data:`~gradcheck.diagnose.SIGMAS`) plus the tolerances, plus with
    ``rare`` :data:`RARE_CALLS` calls' worth of the reference's range (as an entry's second look allows). Summed over
    the entries, the draws' spread is a fraction of one entry's (redteam40 F4: 0.21-0.33 of the mean for a dW
    whose entries spread 0.6-0.8 of theirs)."""
    a, b = _projections(name, mine, theirs), _projections(name, theirs[AIM_DRAWS:], theirs)
    se = b.std(ddof=1) * np.sqrt(1 / len(a) + 1 / len(b))
    slack = RARE_CALLS * (b.max() - b.min()) / len(a) if rare else 0.0
    k = SIGMAS if sigmas is None else sigmas
    return float(abs(a.mean() - b.mean()) - (k * se + slack + ATOL_FLOOR + rtol * (abs(a.mean()) + abs(b.mean()))))


def _projected_scale(name: str, mine: list[Mapping[str, Any]], theirs: list[Mapping[str, np.ndarray]]) -> float:
    """The student's projected mean over the reference's (:func:`_projections`): 0.7 for a dW without 1/(1 - p)."""
    b = _projections(name, theirs[AIM_DRAWS:], theirs).mean()
    return float(_projections(name, mine, theirs).mean() / b) if b else float("nan")


#: :func:`_expected_graded`'s second look at a part whose mean is off: more draws of the reference (in process) and
#: the calls of the student's 32 allowed to fall on draws the reference meets rarely (each moves the mean by at most
#: the reference's range over 32). redteam40 F1: a right model Dropout(0.01) -> Linear has entries of dX that one mask
#: bit decides; 400 draws kept that bit every time one time in fifty (a standard error of 1e-16), and one drop among
#: the 32 calls FAILed it.
REFERENCE_MORE, RARE_CALLS = 1600, 1


def _mean_off(mean: np.ndarray, ref: np.ndarray, rtol: float, rare: int, n: int = EXPECTED_CALLS,
              sigmas: float | None = None) -> np.ndarray:
    """How far (positive: too far) the student's ``mean`` over ``n`` calls lies from the mean of the
    reference's draws ``ref`` (stacked on axis 0), each entry: ``sigmas`` (None:
    :data:`~gradcheck.diagnose.SIGMAS`) standard errors of the difference (each draw's spread read from ``ref``)
    plus the tolerances, plus ``rare`` calls' worth of the reference's range."""
    b = ref.mean(axis=0)
    se = ref.std(axis=0, ddof=1) * np.sqrt(1 / n + 1 / len(ref))
    slack = rare * (ref.max(axis=0) - ref.min(axis=0)) / n
    k = SIGMAS if sigmas is None else sigmas
    return np.abs(mean - b) - (k * se + slack + ATOL_FLOOR + rtol * (np.abs(mean) + np.abs(b)))


def _unlike_own_call(name: str, n: int, first: Any, shape: tuple[int, ...], calls: int = EXPECTED_CALLS) -> str:
    """The message of a part whose gradient, an array of ``shape`` in the test's own call, came otherwise (``first``:
    another shape or dtype, None, not an array) in ``n`` of :func:`_expected_graded`'s training calls of the same
    input and dY (redteam40 F3: a model's wrong backward answering those calls with a gradient cut to one row was
    "no claim", and kept its points)."""
    what = (f"an array of shape {V.fmt_shape(first.shape)} and dtype {first.dtype}" if isinstance(first, np.ndarray)
            else "None" if first is None else f"a {type(first).__name__}")
    return (f"{name} is an array of shape {V.fmt_shape(shape)} in this test's own call, but in {n} of "
            f"{calls} more training calls of the same input and dY (each a new draw) backward gave it as "
            f"{what}: the gradient of one call must be of the same kind at every call, and these calls judge it "
            "on average over the draws. Does backward depend on something other than the forward it follows?")


@contextlib.contextmanager
def _draws_free(layer: Any, proxy: Any):
    """The layer's draws free for the ``with`` block (each forward a new mask), held again after as
    :func:`gradcheck.diagnose._hold` held them: a sandboxed layer's rewinding released and set again (at the states
    reached), a mask switch (``fix_mask``) turned off and on; a local layer rewound by its proxy needs neither."""
    remote = bool(getattr(proxy, "remote", ""))
    fixed = "" if remote or proxy is None else adapter_call(layer, "hold_random", "unfix_mask")
    if remote:
        adapter_call(layer, "hold_random", "release")
    try:
        yield
    finally:
        if remote:
            proxy.remote = adapter_call(layer, "hold_random", "rewind")
        elif fixed:
            adapter_call(layer, "hold_random")


def _one_training_call(layer: Any, xs: list[np.ndarray], G: np.ndarray, d_in: list[str],
                       keys: list[str]) -> tuple[Any, dict[str, Any]]:
    """One training forward of ``xs`` and backward of ``G``: the forward's output and the gradients by part name, as
    :func:`layer_gradients` reads them (copies)."""
    Y = _copy(layer.forward(*[x.copy() for x in xs], training=True))
    with _integers_read(layer):
        ret = layer.backward(G.copy())
    out = dict(zip(d_in, ret if len(xs) > 1 and isinstance(ret, (tuple, list)) else [ret]))
    out.update({f"d{k}": _as_stored(layer, k, getattr(layer, "grads", None)) for k in keys})
    return Y, {n: _copy(g) for n, g in out.items()}


def _reference_squares(reference: Any, xs: list[np.ndarray], n: int) -> tuple[Any, np.ndarray, list[np.ndarray]] | None:
    """``(copy, mean squares, kept)``: the mean square of each of ``n`` training forwards of ``xs`` by a copy of the
    reference (at the test's weights) and which entries each kept (``!= 0``, for :func:`_together_off`), for
    :func:`_output_moment_graded`; None when it cannot be copied or run so."""
    try:
        ref = copy.deepcopy(reference)
        return (ref, *_more_squares(ref, xs, n, kept=True))
    except Exception:  # noqa: BLE001 - a reference that cannot be copied or run so: no claim
        return None


def _more_squares(ref: Any, xs: list[np.ndarray], n: int, kept: bool = False) -> Any:
    """The mean squares of ``n`` more training forwards of ``xs`` by ``ref`` (:func:`_reference_squares`' copy; its
    mode's keywords read once: :func:`~gradcheck._adapters.mode_kwargs`); with ``kept``, also each forward's entries
    kept (``!= 0``)."""
    kw, squares, masks = mode_kwargs(ref, True), [], []
    for _ in range(n):  # one output at a time (a second look draws 1,600)
        y = np.asarray(ref.forward(*[x.copy() for x in xs], **kw), dtype=np.float64)
        squares.append(np.mean(np.square(y)))
        masks += [y != 0] if kept else []
    return (np.array(squares), masks) if kept else np.array(squares)


def _output_moment_graded(todo: list[Part], ys: list[Any], drawn: tuple[Any, np.ndarray, list[np.ndarray]],
                          xs: list[np.ndarray], rtol: float, cname: str, ref_name: str) -> None:
    """The mean square of the outputs ``ys`` of :func:`_expected_graded`'s training forwards of the test's own input
    against the reference's over its training forwards at the same weights (``drawn``, grown by :data:`REFERENCE_MORE`
    draws before a FAIL), within :data:`~gradcheck.diagnose.SIGMAS` standard errors: otherwise each part in
    ``todo`` still passing fails, as it does when an output is not a finite array of the reference's shape there. The
    moments' probe batch (:func:`_random_mean_graded`, verify39 F7) can be told by its size and refused: a model that
    left its dropout out, its forward made to look random by a factor 1 + 1e-3 z, raising on 400 rows, kept its
    points (redteam41), its gradients' mean being the reference's (the mask enters linearly). Then the pairs of
    entries kept or dropped together (:func:`_together_off`, redteam42 F3: a dropout drawing one keep per example)."""
    ref, b, kept = drawn
    shape = np.shape(forward_in_mode(ref, [x.copy() for x in xs], True))
    bad = [y for y in ys if not (isinstance(y, np.ndarray) and y.shape == shape and y.dtype.kind in "fiu"
                                 and np.all(np.isfinite(y)))]
    together = None
    if not bad:
        a = np.array(np.mean([np.mean(np.square(np.asarray(y, dtype=np.float64))) for y in ys]))
        if _mean_off(a, b, rtol, 0, len(ys)) > 0:
            b = np.concatenate([b, _more_squares(ref, xs, REFERENCE_MORE)])  # a second, closer look before a FAIL
        if not _mean_off(a, b, rtol, RARE_CALLS if len(b) > REFERENCE_DRAWS else 0, len(ys)) > 0:
            def draw() -> np.ndarray:
                return np.asarray(forward_in_mode(ref, [x.copy() for x in xs], True), dtype=np.float64)

            together = _together_off(ys, draw, kept, cname, ref_name)
            if together is None:
                return
    said = together or (f"in training mode, {cname}'s forward of this test's input gave {_unlike(bad[0])} in {len(bad)} of "
            f"{len(ys)} more training calls (each a new draw), where {ref_name}'s output is a finite array of shape "
            f"{V.fmt_shape(shape)}" if bad else
            f"in training mode, {cname}'s output on this test's input has a mean square of {float(a):.4g} over "
            f"{len(ys)} training calls (each a new draw), {ref_name}'s {b.mean():.4g} over {len(b)} draws at the same "
            f"weights (more than {SIGMAS:g} standard errors apart; the masks are random, this moment is not): a random "
            "layer inside (a dropout) scales its kept entries otherwise, drops another share or none. Inverted dropout "
            "drops an entry with probability p and scales the kept ones by 1/(1 - p), so that E[Y] = X in training as "
            "in eval mode")
    for p in todo:
        if p.passed:
            p.passed, p.message = False, said + "."


def _unlike(y: Any) -> str:
    """What :func:`_output_moment_graded` says of an output that is not a finite numeric array of the reference's
    shape."""
    if isinstance(y, np.ndarray):
        return (f"an array of shape {V.fmt_shape(y.shape)} and dtype {y.dtype}" + (
            " holding NaN or infinity" if y.dtype.kind in "fiu" and not np.all(np.isfinite(y)) else ""))
    return "None" if y is None else f"a {type(y).__name__}"


def _share_graded(verdict: Verdict, layer: Any, proxy: Any, X: np.ndarray, reference: Any, Y: Any) -> None:
    """The share of entries a mask layer keeps, read from training forwards of the test's own input (redteam39's
    residual: a dropout keeping p of the entries where the reference keeps 1 - p, at the right scale 1/(1 - p),
    refused the mean's probe batch and kept its points: its call shows 0 and the scale, :func:`_mask_graded`, and its
    backward that call's mask). Where the reference's ``Y / X`` is 0 or one scale at each of :data:`SHARE_DRAWS`
    draws (in process) and the test's call passed :func:`_mask_graded`, the layer makes :data:`SHARE_CALLS` more
    training forwards of the test's input (the draws free); each must show the reference's kind of mask
    (:func:`gradcheck.diagnose.scale_difference`: a forward raising or answering otherwise is the submission's
    failure, on its own input), and the share kept over them and the test's call must be the reference's within
    :data:`~gradcheck.diagnose.SIGMAS` standard errors of the difference, one call's spread read from the
    reference's draws and never taken below a binomial one of independent entries (a right dropout FAILs with
    probability about 2e-9). Answering these forwards otherwise than the test's own needs the right share known:
    it earns nothing. Every part still passing fails with the sentence."""
    if not any(p.passed for p in verdict.parts) or not isinstance(Y, np.ndarray) or Y.shape != X.shape:
        return
    cname, ref_name, on, ref = type(layer).__name__, type(reference).__name__, X != 0, _copied(reference, copy)
    try:
        kw = mode_kwargs(ref, True)
        refs = [np.asarray(ref.forward(X.copy(), **kw), dtype=np.float64) for _ in range(SHARE_DRAWS)]
    except Exception:  # noqa: BLE001 - a reference that cannot be run again: no claim
        return
    if not _one_mask_scale(refs, X):
        return  # (not 0 and one scale at each draw: not a mask layer's kind of output)
    outs, why = _share_outs(layer, proxy, X, [Y], SHARE_CALLS, next(r for r in refs if np.any(r[on])), ref_name)
    if why is None:
        mine, theirs = (np.array([np.count_nonzero(np.asarray(o)[on]) / on.sum() for o in a]) for a in (outs, refs))
        q = float(theirs.mean())
        sd = max(float(theirs.std(ddof=1)), float(np.sqrt(q * (1 - q) / on.sum())))
        se = sd * np.sqrt(1 / len(mine) + 1 / len(theirs))
        if abs(mine.mean() - q) > SIGMAS * se + 1e-12:
            why = (f"in training mode, {cname} keeps {mine.mean():.1%} of the entries over {len(mine)} training "
                   f"forwards of this test's input, where {ref_name} keeps {q:.1%} over {len(theirs)} draws "
                   f"({abs(mine.mean() - q) / se:.0f} standard errors apart): the share of entries kept is not the "
                   "reference's (p read as the probability of keeping an entry?)")
    if why is None and _together_suspect(outs, refs):  # a closer look (verify42b F7)
        outs, why = _share_outs(layer, proxy, X, outs, SHARE_MORE, next(r for r in refs if np.any(r[on])), ref_name)
    if why is None:  # each entry's law is the reference's: are they kept or dropped independently (redteam42 F3)?
        why = _together_off(outs, lambda: np.asarray(ref.forward(X.copy(), **kw), dtype=np.float64), refs, cname,
                            ref_name)
    for p in verdict.parts if why else ():
        p.passed, p.message = (False, why + ".") if p.passed else (p.passed, p.message)


def _share_outs(layer: Any, proxy: Any, X: np.ndarray, outs: list[Any], n: int, drawn: np.ndarray,
                ref_name: str) -> tuple[list[Any], str | None]:
    """``(outs + n more, why)``: :func:`_share_graded`'s ``n`` more training forwards of ``X`` (the draws free) after
    ``outs``, and the sentence failing the layer when one raised or is not ``X`` times the reference's kind of mask
    (its draw ``drawn``: :func:`gradcheck.diagnose.scale_difference`), else None."""
    cname, new = type(layer).__name__, []
    try:
        with _draws_free(layer, proxy):
            new = [_copy(layer.forward(X.copy(), training=True)) for _ in range(n)]
        why = next((w for o in [*outs, *new] if (w := (
            None if isinstance(o, np.ndarray) and o.shape == X.shape and np.all(np.isfinite(o)) else
            f"{cname}'s training output is not a finite array of the input's shape {X.shape}") or scale_difference(
                o, X, drawn, cname, ref_name))), None)
    except Exception as e:  # noqa: BLE001 - the student's failure on its own input, the test's kind of call
        why = f"{cname} raised {type(e).__name__} on another training forward of this test's input: {str(e)[:200]}"
    return [*outs, *new], why


def _pairs_together(y: np.ndarray, live: np.ndarray | None = None) -> np.ndarray:
    """``[in rows, in columns]``: how many pairs of entries of ``y`` are both kept or both dropped (both nonzero or
    both zero), among the pairs of one row (one example: axis 0's slice, its other axes flattened) and among the pairs
    of one column (one entry of the examples, across the batch); only entries where ``live`` (of ``y``'s shape) is
    True are counted (None: all)."""
    kept = np.asarray(y).reshape(len(y), -1) != 0
    on = np.ones_like(kept) if live is None else np.asarray(live).reshape(kept.shape)
    kept = kept & on

    def together(k: np.ndarray, m: np.ndarray) -> float:  # k: the kept count of each slice of m live entries
        return float(np.sum(k * (k - 1) + (m - k) * (m - k - 1))) / 2

    return np.array([together(kept.sum(axis=1), on.sum(axis=1)), together(kept.sum(axis=0), on.sum(axis=0))])


def _together_stats(outs: Sequence[Any], draws: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mine, theirs, live)`` for :func:`_together_off`: :func:`_pairs_together` of each of the layer's outputs
    ``outs`` and of the reference's ``draws``, counted over the entries some draw keeps (``live``). An entry no draw
    keeps is zero at every draw (a ReLU's zero before the dropout, a zero of the input): its pairs say nothing of the
    mask and only add spread (verify42b F14: a model Linear -> ReLU -> dropout with one keep per example, about half
    of its (6, 4) outputs zero at every draw, kept its points at half the seeds)."""
    live = np.any([np.asarray(r) != 0 for r in draws], axis=0)
    return np.array([_kept_stats(o, live) for o in outs]), np.array([_kept_stats(r, live) for r in draws]), live


def _kept_stats(y: np.ndarray, live: np.ndarray) -> np.ndarray:
    """``[pairs in rows, pairs in columns, entries kept]`` of ``y`` over the ``live`` entries: :func:`_pairs_together`
    and how many live entries ``y`` keeps (a model whose dropout is left out keeps them all: its pairs are all
    together, and the share says so first)."""
    return np.append(_pairs_together(y, live), np.count_nonzero((np.asarray(y) != 0) & np.asarray(live)))


def _together_suspect(outs: Sequence[Any], draws: Sequence[np.ndarray]) -> bool:
    """Whether the layer's outputs ``outs`` keep or drop pairs together more than :data:`SUSPECT_SIGMAS` standard
    errors away from the reference's ``draws`` (:func:`_together_stats`): the caller then makes more training calls
    before :func:`_together_off` judges (verify42b F7: a mask per example at p = 0.05 on an (8, 6) input, 17 calls,
    was 7 standard errors off, inside the second look's allowance)."""
    if not outs or any(not isinstance(o, np.ndarray) or o.ndim < 1 or o.shape != np.shape(draws[0]) for o in outs):
        return False
    mine, theirs, _ = _together_stats(outs, draws)
    return bool(np.any(_mean_off(mine.mean(axis=0), theirs, 0.0, 0, len(mine), SUSPECT_SIGMAS) > 0))


def _together_off(outs: Sequence[Any], draw: Callable[[], np.ndarray], draws: Sequence[np.ndarray], cname: str,
                  ref_name: str) -> str | None:
    """The sentence that fails a random layer whose training outputs ``outs`` (of the test's input, each a new draw:
    finite arrays of the reference's shape) keep or drop entries together otherwise than the reference's ``draws`` do
    (:func:`_pairs_together`, in rows and in columns, over the entries some draw keeps: :func:`_together_stats`;
    within :data:`~gradcheck.diagnose.SIGMAS` standard errors, a second look on :data:`REFERENCE_MORE` more
    ``draw()`` before a FAIL, as :func:`_expected_parts`'); None when they agree. redteam42 F3: a dropout drawing its
    mask once per example (``(N, 1)``) or once per feature for the whole batch (``rng.random(D)`` broadcast) has each
    entry's law right (mean, mean square, gradients' mean, held differences) and lost no point; each pair of one row
    (or column) is then kept or dropped together, where an inverted dropout's entries are independent (Srivastava et
    al. 2014; PyTorch's Dropout: each element)."""
    if not outs or any(np.ndim(o) < 1 or len(o) == 0 for o in [*outs, *draws[:1]]):
        return None
    mine, theirs, live = _together_stats(outs, draws)
    if np.any(_mean_off(mine.mean(axis=0), theirs, 0.0, 0, len(mine)) > 0):
        theirs = np.concatenate([theirs, [_kept_stats(draw(), live) for _ in range(REFERENCE_MORE)]])
    off = _mean_off(mine.mean(axis=0), theirs, 0.0, RARE_CALLS if len(theirs) > len(draws) else 0, len(mine))
    if not np.any(off > 0):
        return None
    if off[2] > 0:  # the share of the live entries kept first
        a, b = mine.mean(axis=0)[2] / live.sum(), theirs.mean(axis=0)[2] / live.sum()
        return (f"in training mode, {cname}'s outputs of this test's input keep {a:.1%} of the entries {ref_name} "
                f"keeps at some draw, over {len(mine)} training forwards (each a new draw), where {ref_name} keeps "
                f"{b:.1%} over {len(theirs)} draws (more than {SIGMAS:g} standard errors apart): " + (
                    "no entry is dropped (is the dropout applied in training mode?)" if a == 1 else
                    "the share of entries kept is not the reference's (p read as the probability of keeping an "
                    "entry?)") + ". Inverted dropout drops each entry with probability p")
    axis = int(np.argmax(off[:2]))
    on = live.reshape(len(live), -1)
    m = on.sum(axis=1 - axis)  # the live entries of each row (axis 0) or column (axis 1)
    pairs = float(np.sum(m * (m - 1))) / 2
    a, b = mine.mean(axis=0)[axis] / pairs, theirs.mean(axis=0)[axis] / pairs
    where = ("one row (one example)", "one column (one entry across the batch's examples)")[axis]
    why = (("a mask drawn one per example (shape (N, 1)) keeps or drops whole rows",
            "a mask drawn one per feature for the whole batch (shape (D,) or (1, D), broadcast over the examples) "
            "keeps or drops a feature for every example at once")[axis] if a > b else
           "its entries are not kept or dropped independently")
    return (f"in training mode, {cname}'s outputs of this test's input keep or drop the entries of {where} together: "
            f"over {len(mine)} training forwards (each a new draw), {a:.1%} of the pairs of entries of {where} are both "
            f"kept or both dropped, where {ref_name}'s are {b:.1%} over {len(theirs)} draws (more than {SIGMAS:g} "
            f"standard errors apart; entries that every draw of {ref_name} gives as zero left out): {why}. Inverted "
            "dropout draws each entry's keep independently, a mask of the input's shape")


#: The reference's draws (in process) whose shares of kept entries give :func:`_share_graded` its share and spread,
#: and the layer's training forwards of the test's input it reads beside the test's call (each a round trip of the
#: sandbox): at a (6, 5) input and p = 0.3 a share of 30% against 70% is 19 standard errors off, 60% against 70% 4.6.
#: Then the calls more when the pairs kept together look off (:func:`_together_suspect`): at an (8, 6) input and
#: p = 0.05 a mask per example is about 7 standard errors off at 17 calls, 13 at 81.
SHARE_DRAWS, SHARE_CALLS, SHARE_MORE = 400, 16, 64


def _one_mask_scale(refs: list[np.ndarray], X: np.ndarray) -> bool:
    """Whether the reference's training outputs ``refs`` of ``X`` are each ``X`` times a mask of 0 and one scale, the
    same at every draw (:func:`gradcheck.diagnose.kept_scale`; a draw keeping nothing has none), finite, of ``X``'s
    shape, and some draw keeps an entry."""
    on = X != 0
    if not np.any(on) or any(r.shape != X.shape or not np.all(np.isfinite(r)) for r in refs):
        return False
    with np.errstate(all="ignore"):
        got = [kept_scale(r[on], X[on]) for r in refs]
    scales = [s for share, s in got if share]
    return len(scales) == sum(1 for share, _ in got if share) > 0 and bool(
        np.ptp(scales) <= SCALE_RTOL * abs(scales[0]))


def _copied(obj: Any, copy: Any) -> Any:
    """A deep copy of ``obj``, ``obj`` itself when it cannot be copied."""
    try:
        return copy.deepcopy(obj)
    except Exception:  # noqa: BLE001 - a reference that cannot be copied: its own forward is run
        return obj


def _random_mean_graded(verdict: Verdict, layer: Any, reference: Any, xs: list[np.ndarray]) -> None:
    """The training output's mean compared with the reference's, as ``gradcheck check --training --reference`` does
    (:func:`gradcheck.diagnose.random_mean_finding`; redteam38: a dropout whose forward and backward both left
    out 1/(1 - p) kept its points here, the gradients judged against its own forward, while check FAILed it): a
    ``random-mean`` finding fails every part still passing, with its sentence; the comparison's note otherwise."""
    if len(xs) != 1 or not any(p.passed for p in verdict.parts):
        return
    found = random_mean_finding([(layer, _copy_or_itself(reference), "", True)], type(layer).__name__, xs[0].shape, 0,
                                type(reference).__name__)
    if found is None:
        return
    if found.code not in ("random-mean", "random-scale"):
        verdict.notes.append(found.message + ".")
        return
    for p in verdict.parts:
        if p.passed:
            p.passed, p.message = False, found.message + "."


def _running_stats_graded(verdict: Verdict, layer: Any, reference: Any, xs: list[np.ndarray], training: bool) -> Verdict:
    """The running statistics a training forward writes, and the eval output after it, compared with the reference's
    fed the same batch, as ``gradcheck check --training --reference`` does (:func:`gradcheck._running_stats.
    running_stats_finding`, newuser35 H2; redteam43 F5: a class BatchNorm that never updated them, or swapped the
    momentum, kept every point against manualprop.BatchNorm1D while check FAILed it: an eval forward of a fresh layer
    holds the initial statistics, 0 and 1, on both sides, and central differences never see a buffer). A
    ``running-stats`` finding fails every part still passing, with its sentence (agreement adds nothing). A
    reference without running statistics and a momentum (a CS231n pair's, whose ``bn_param`` the test reads with
    :func:`forward_keywords`) is not compared, nor an eval-mode test (``training`` False). Both are copies: the
    comparison adds no training forward to the test's layer. Returns ``verdict``."""
    from .._running_stats import UNCHECKED, running_stats_finding, unchecked_buffers_line

    if not training or len(xs) != 1 or not any(p.passed for p in verdict.parts) or not isinstance(
            getattr(reference, "momentum", None), float):
        return verdict
    try:
        ref = copy.deepcopy(reference)
    except Exception:  # noqa: BLE001 - a reference that cannot be copied is not compared (its state would move)
        return verdict
    cname, rname, why = type(layer).__name__, type(reference).__name__, ""
    try:  # a copy (in the sandbox, RemoteLayer.clone), as the reference's
        own = copy.deepcopy(layer)
    except Exception as exc:  # noqa: BLE001 - a layer that cannot be copied is compared itself
        own, why = layer, f"copying {cname} failed ({type(exc).__name__}: {exc}); "
    try:
        found, notes = running_stats_finding(own, ref, cname, xs[0].shape, 0, rname)
    except Exception as exc:  # noqa: BLE001 - as check: not compared, said (verify47a F4: a copy that timed out was
        verdict.notes.append(f"{UNCHECKED} against {rname}'s: {why}comparing them raised "  # "All checked")
                             f"{type(exc).__name__}: {exc}")
        return verdict
    compared = found is not None or any(n.endswith(f"match {rname}'s") for n in notes)
    line = "" if compared else unchecked_buffers_line(cname, getattr(layer, "protocol", None) or {}, rname)
    notes += [f"{UNCHECKED}: {line}"] * bool(line)  # (check's line: verify47a F3)
    verdict.notes += [n for n in notes if re.match(r"running statistics: (not looked for|NOT checked|.* are each a "
                                                   r"running av)", n) and n not in verdict.notes]  # (verify46a F1, F8)
    for p in verdict.parts if found is not None and found.code == "running-stats" else []:
        if p.passed:
            p.passed, p.message = False, found.message + "."
    return verdict


def _nielsen_dx(parts: list[Part], layer: Any, got: Mapping[str, Any], expected: Mapping[str, np.ndarray]) -> None:
    """The dX part of Nielsen's network (:func:`gradcheck._adapters.backprop_as_model`: dX read from backprop's first
    bias gradient) when that gradient has another shape, so dX could not be read (None): said so, where "backward(dY)
    returned None" would blame a backward the student never wrote (nielsen36)."""
    m = re.search(r"dX is read from its first layer's delta, (\w+)\[0\]\.T @ \(its gradient of (\w+)\[0\]\)",
                  str((getattr(layer, "protocol", None) or {}).get("text")))
    b0 = f"d{m[2]}[0]" if m else ""
    if not m or got.get("dX") is not None or np.shape(got.get(b0)) == np.shape(expected.get(b0)):
        return
    for p in (p for p in parts if p.name == "dX"):
        p.message = (f"dX is read from backprop's first bias gradient ({m[1]}[0].T @ nabla_b[0], as z = {m[1]}[0] x + "
                     f"{m[2]}[0] gives it), which has the wrong shape (see {b0}), so it could not be read; expected an "
                     f"array of shape {V.fmt_shape(expected['dX'].shape)}.")


def _one_sign_parts(parts: list[Part], layer: Any, xs: list[np.ndarray], d_in: list[str], keys: list[str],
                    G: np.ndarray, got: Mapping[str, Any], cfg: CheckConfig) -> None:
    """Fail each part still passing whose gradient a one-element output's backward gives for one sign of dY only
    (:func:`gradcheck.sources.one_sign_only`, as check runs it, at the test's tolerances: review30,
    ``np.minimum(dY, 0)`` matched at a negative ``G``), its message saying so; another forward and backward at ``-G``
    (and at 0 when one differs)."""
    if np.size(G) != 1 or not any(p.passed for p in parts):
        return
    training = bool(cfg.training)

    def at(g):
        layer.forward(*[x.copy() for x in xs], training=training)
        with _integers_read(layer):
            ret = layer.backward(g.copy())
        out = dict(zip(d_in, ret if len(xs) > 1 else [ret])) if isinstance(ret, (np.ndarray, tuple, list)) else {}
        out.update({f"d{k}": _as_stored(layer, k, getattr(layer, "grads", None)) for k in keys})
        return {n: v for n, v in out.items() if isinstance(v, np.ndarray)}

    first = {p.name: got[p.name] for p in parts if p.passed and isinstance(got.get(p.name), np.ndarray)}
    bad = one_sign_only(at, G, first, cfg.rtol, ATOL_FLOOR if cfg.atol is None else cfg.atol)
    for p in (p for p in parts if p.name in bad):
        p.passed, p.message = False, bad[p.name][0]


def _sandboxed(layer: Any) -> Any:
    """The :class:`gradcheck.sandbox.RemoteLayer` behind ``layer`` (the graded object or the one an adapter holds as
    ``_layer``), or None for a layer run in this process."""
    from ..sandbox import RemoteLayer

    inner = layer
    for _ in range(8):
        if isinstance(inner, RemoteLayer) or not hasattr(inner, "_layer"):
            break
        inner = inner._layer
    return inner if isinstance(inner, RemoteLayer) else None


def _cache_note(layer: Any) -> str:
    """``gradcheck check``'s note (:func:`gradcheck.sources.cache_rewritten_notes`) on a graded backward that wrote
    into an array its forward made (:attr:`gradcheck.sandbox._Remote.cache_rewritten`; a CS231n
    ``batchnorm_backward`` scaling its cached ``xhat`` in place): the gradient parts are scored as check judges them,
    each backward after its own forward, so no points change here; what a second backward would give is the
    assignment's backward-twice test's (:func:`backward_repeatable`). review27g H2: the grader said nothing where
    check printed the note. "" when backward wrote into no such array."""
    said = getattr(_sandboxed(layer), "cache_rewritten", None)
    return "note: " + cache_rewritten_notes([said])[0] if said else ""


@contextlib.contextmanager
def _integers_read(layer: Any):
    """Around the graded backward: a sandboxed layer (:class:`gradcheck.sandbox.RemoteLayer`, the graded object or the
    one an adapter holds as ``_layer``) returns integer gradients as they came (:attr:`~gradcheck.sandbox.RemoteLayer.
    integers_read`), so that :func:`_part` fails each such part alone with check's words and the others are scored
    (redteam25: an int64 dX beside a correct dW and db scored 16/28, the whole gradient test lost)."""
    inner = _sandboxed(layer)
    if inner is None:
        yield
        return
    inner.integers_read = True
    try:
        yield
    finally:
        inner.integers_read = False


@contextlib.contextmanager
def _params_kept(layer: Any):
    """Run the diagnosis of the wrong parts with ``layer``'s parameters (the evaluation point) put back after, value
    for value, whatever a signature that steps or zeroes one in place left (each puts its own back; this holds
    when one did not): the numerical check that scores the other parts runs at the graded point."""
    params = getattr(layer, "params", None)
    kept = {k: v.copy() for k, v in params.items() if isinstance(v, np.ndarray)} if isinstance(params, Mapping) else {}
    try:
        yield
    finally:
        for k, v in kept.items():
            now = params.get(k)
            if isinstance(now, np.ndarray) and now.shape == v.shape and now.flags.writeable and \
                    not np.array_equal(now, v, equal_nan=True):
                np.copyto(now, v, casting="unsafe")


def _graded_parts(layer: Any, xs: list[np.ndarray], d_in: list[str], weights: Mapping[str, float],
                  got: Mapping[str, Any], expected: Mapping[str, np.ndarray], ones: Mapping[str, np.ndarray],
                  keys: list[str], short: str, cfg: CheckConfig, numerical: bool, G: np.ndarray, Y: Any,
                  Y_ref: np.ndarray, names: list[str]) -> list[Part]:
    """The parts of :func:`layer_gradients`, each from the frozen ``got`` against ``expected``, named: by check's
    signatures that run the layer again (``numerical``; its parameters put back after, :func:`_params_kept`), as the
    gradient of the student's own forward when that forward is not the reference's (:func:`_own_function`), by the
    float32 precision of the output ``Y`` when it has it (:func:`_float32_part`, no signature then), an input's
    part by the count's sentence ``short`` (:func:`_wrong_count`), and two swapped gradients as such
    (:func:`gradcheck.diagnose.name_swaps`: dgamma for dbeta, which no part alone sees)."""
    why32 = _float32_forward(Y, xs)
    graded = dict(layer=layer, inputs=xs, upstream=G, training=bool(cfg.training), forwards=DIAGNOSIS_FORWARDS,
                  names=names) if numerical and not why32 else {}
    with _params_kept(layer):
        parts = [Part(n, w, False, short) if short and n in d_in else
                 _part(n, w, got[n], expected[n], ones.get(n), keys, xs[0].shape[0], cfg.rtol, cfg.atol,
                       dtype=numerical, parameter=n not in d_in, **graded)
                 for n, w in weights.items()]
        if numerical and not why32:
            _own_function(parts, layer, xs, d_in, cfg, got, expected, Y, Y_ref, short)
    for p in parts if why32 else []:
        if not p.passed and not (short and p.name in d_in):
            p.message = _float32_part(p, got[p.name], expected[p.name], why32)
    _nielsen_dx(parts, layer, got, expected)
    _one_sign_parts(parts, layer, xs, d_in, keys, G, got, cfg)
    swaps = name_swaps({n: got[n] for n in weights}, expected, keys)  # dgamma, dbeta: no part alone sees it
    for p in (p for p in parts if p.name in swaps):
        p.message = swaps[p.name].sentence()
    _at_zero_parts(parts, xs, d_in, got, expected, G, cfg.rtol)  # (a convention at a kink)
    return parts


def _own_function(parts: list[Part], layer: Any, xs: list[np.ndarray], d_in: list[str], cfg: CheckConfig,
                  got: Mapping[str, Any], expected: Mapping[str, np.ndarray], Y: Any, Y_ref: np.ndarray,
                  short: str) -> None:
    """Say so when a wrong part is the gradient of the student's own forward and that forward's output differs from
    the reference's: backward is right for the function forward computes, which is not the assignment's (newuser25
    M1: a GRU with r and z swapped in forward and backward alike was told to "branch on the mode"). Each such part
    (of the reference's shape, finite, not failed by the count of ``short``) that one central difference of the
    student's forward along a random direction confirms (:func:`_confirm_directionally`) gets this sentence; a
    message only, the score is the comparison's."""
    if not (isinstance(Y, np.ndarray) and Y.shape == Y_ref.shape) or _agree(Y, Y_ref, 1e-7, 1e-10, False):
        return
    wrong = [p for p in parts if not p.passed and not (short and p.name in d_in)
             and np.shape(got[p.name]) == expected[p.name].shape
             and np.all(np.isfinite(np.asarray(got[p.name], dtype=np.float64)))]
    if not wrong:
        return
    misses = _confirm_directionally(layer, xs, d_in, Y_ref.shape, cfg, [p.name for p in wrong])
    y_err = float(np.max(relative_error(np.asarray(Y, np.float64), Y_ref)))
    for p in wrong if misses is not None else []:
        if p.name not in misses:
            err = float(np.max(relative_error(np.asarray(got[p.name], np.float64), expected[p.name])))
            p.message = (f"{p.name} is not the reference's gradient, but it is the gradient of your own forward (it "
                         f"agrees with a central difference of your forward along a random direction), whose output "
                         f"differs from the reference's ({_worst(np.asarray(Y, np.float64), Y_ref, 'Y')}; max "
                         f"relative error {y_err:.2g}): backward is consistent with forward, and forward computes "
                         f"another function than the assignment's, or the same one with another constant (an eps?). "
                         f"{p.name}'s own max relative error against the reference's is {err:.2g}, above this test's "
                         f"rtol={cfg.rtol:g}. Fix forward (compare it with the assignment's formula); backward must "
                         f"then follow it.")


def _wrong_count(ret: Any, xs: list[np.ndarray], d_in: list[str]) -> str:
    """The sentence for the inputs' parts when a backward of several inputs did not return one gradient per input
    (``return dx`` where ``return dx, dh`` is due), else "". Which input a lone array is the gradient of cannot be
    told, so every input's part fails with it; the parameters' gradients (``grads``) are graded as any (newuser25
    H3: a GRU's ``return dx`` scored 0 on its correct dW and db too)."""
    if len(xs) > 1 and not (isinstance(ret, (tuple, list)) and len(ret) == len(xs)):
        what = (f"a {type(ret).__name__} of length {len(ret)}" if isinstance(ret, (tuple, list)) else
                f"one {type(ret).__name__}" if ret is not None else "None")
        return (f"backward(dY) returned {what}; expected a tuple of {len(d_in)} gradients ({', '.join(d_in)}), one "
                f"per input of forward, in order.")
    return ""


def _reference_confirmed(reference: Any, xs: list[np.ndarray], failed: list[str], d_in: list[str],
                         config: CheckConfig) -> None:
    """When the student's tensors ``failed`` against the reference's, check the reference's own gradient of each by
    one central difference along a random direction (two forwards of a copy of the reference, in the grader's
    process, at the same evaluation point): one that disagrees is a GradingTestError naming the tensor, since a
    correct submission would be blamed (tester17g F6: a reference with ``db = dY.mean`` told a correct student
    "db is 8 times too large"), as a NaN in the reference is. Only for a reference of the params/grads protocol
    with one output array and a deterministic forward, in eval mode; others are left as they are. Forward's eval
    keywords are found once for its calls here, by the reading of the reference itself (:func:`~gradcheck._adapters.
    mode_kwargs`: the copy is a new object, whose every :func:`~gradcheck._adapters.forward_in_mode` read its source
    again)."""
    try:
        ref, xs = copy.deepcopy(reference), [np.array(x, dtype=np.float64) for x in xs]
        params, kw = ref.params, mode_kwargs(ref, False, like=reference)
        Y = ref.forward(*[x.copy() for x in xs], **kw)
        if config.training or not isinstance(Y, np.ndarray) or not np.array_equal(
                Y, ref.forward(*[x.copy() for x in xs], **kw)):
            return
        rng = np.random.default_rng([config.seed, 17])
        G = rng.standard_normal(Y.shape)
        ret = ref.backward(G.copy())
        grads = dict(zip(d_in, ret if len(xs) > 1 else [ret])) | {f"d{k}": v for k, v in ref.grads.items()}
        wrong = [n for n in failed if _directional_miss(ref, xs, params, n, d_in, grads.get(n), G, rng, kinks=True,
                                                        kw=kw)]
    except Exception:  # noqa: BLE001 - a reference this cannot read: the comparison's verdict stands
        return
    if wrong:
        raise GradingTestError(
            f"the reference's own gradient {', '.join(wrong)} disagrees with central differences of the reference's "
            f"forward at the evaluation point the test chose (the submission's {', '.join(wrong)} disagreed with the "
            f"reference's): the reference (or its inputs) is wrong, not the submission; check it with gradcheck "
            f"check.")


def _directional_miss(ref: Any, xs: list[np.ndarray], params: Any, name: str, d_in: list[str], grad: Any,
                      G: np.ndarray, rng: np.random.Generator, training: bool = False, kinks: bool = False,
                      kw: Mapping[str, Any] | None = None) -> bool:
    """Whether the reference's gradient ``grad`` of tensor ``name`` (an input's, or ``d`` + a parameter key) misses
    the central difference of ``sum(forward * G)`` along a random direction by more than round-off. ``kinks``: the
    direction leaves an input's entries that are exactly 0 where they are, a kink of ReLU's or LeakyReLU's that a test
    puts inputs at on purpose: a difference across it averages the two sides' slopes, which no gradient has, so a
    correct reference read there was "faulty" and the student's row never named the kink (fix38a; the row now says
    it, :func:`_at_zero_parts`). ``kw``: forward's keywords of mode ``training`` (:func:`~gradcheck._adapters.mode_kwargs`)
    when the caller found them for its own forwards, else found here once for the two."""
    target = xs[d_in.index(name)] if name in d_in else params[name[1:]]
    if not isinstance(grad, np.ndarray) or grad.shape != np.shape(target):
        return False
    v, h, base = rng.standard_normal(grad.shape), 1e-6, np.array(target, copy=True)
    if kinks and name in d_in:
        v[base == 0] = 0.0
    kw = mode_kwargs(ref, training) if kw is None else kw

    def loss(step: float) -> float:
        target[...] = base + step * v
        return float(np.sum(ref.forward(*[x.copy() for x in xs], **kw) * G))

    try:
        num = difference_quotient(loss, h)  # the one central-difference kernel
    finally:
        target[...] = base
    return not close(num, float(np.sum(grad * v)), 1e-4, 1e-7)


def _confirm_directionally(layer: Any, xs: list[np.ndarray], d_in: list[str], shape: tuple[int, ...],
                           config: CheckConfig, names: list[str]) -> list[str] | None:
    """The parts among ``names`` (tensors that matched the reference) whose student's gradient misses one central
    difference of the student's own forward along a random direction (:func:`_directional_miss`, in the test's
    mode, with the test's upstream gradient ``G``: ``standard_normal(shape)`` of ``config.seed``, as
    :func:`layer_gradients` drew it); for when :func:`gradcheck.check_layer` stopped on another part's error (its
    shape, a NaN) and so confirmed none. Another forward and backward run; the student's gradients are read as
    backward gives them (the layer's own layout). None when forward is not repeatable (two forwards differ: a random
    or stateful layer, which check's seeding handles and one direction cannot), or a part's tensor is not found."""
    training, xs = bool(config.training), [x.copy() for x in xs]  # _directional_miss steps an input in place
    try:
        return _directional_misses(layer, xs, d_in, shape, config.seed, training, names)
    except GraderError:
        raise
    except GradcheckError:  # forward or backward raised this time: no confirmation either way
        return None


def _directional_misses(layer: Any, xs: list[np.ndarray], d_in: list[str], shape: tuple[int, ...], seed: int,
                        training: bool, names: list[str]) -> list[str] | None:
    """:func:`_confirm_directionally`'s work, its errors raised."""
    Y = layer.forward(*[x.copy() for x in xs], training=training)
    if not isinstance(Y, np.ndarray) or not np.array_equal(Y, layer.forward(*[x.copy() for x in xs],
                                                                            training=training)):
        return None
    params = getattr(layer, "params", None) or {}
    G = upstream_draw(probe_rng(seed), shape, [*xs, *params.values()])  # the graded check's G (layer_gradients)
    ret = layer.backward(G.copy())
    grads = dict(zip(d_in, ret if len(xs) > 1 else [ret]))
    grads |= {f"d{k}": v for k, v in (getattr(layer, "grads", None) or {}).items()}
    if any(n not in d_in and n[1:] not in params for n in names):
        return None
    rng = np.random.default_rng([seed, 23])
    return [n for n in names if _directional_miss(layer, xs, params, n, d_in, grads.get(n), G, rng, training)]


def _as_check(verdict: Verdict, layer: Any, xs: list[np.ndarray], d_in: list[str], shape: tuple[int, ...],
              cfg: CheckConfig, numerical: bool, Y: Any = None, reference: Any = None,
              written: GradcheckError | None = None, G: np.ndarray | None = None) -> Verdict:
    """The end of :func:`layer_gradients` once the reference's comparison gave ``verdict``: the one place grading
    reads ``gradcheck check``'s verdict. First check's verdicts on the layer as a whole, each decided whatever the
    parts say (:func:`_whole_layer`: a backward that wrote into dY, ``written``; a forward output ``Y`` in float32
    precision, which fails as check fails it, before central differences, whose float32 round-off would read as a
    wrong gradient; memory the submission holds that leaves the check none): each fails every part still passing,
    so a second bug can never earn back what the first cost (tester21g H: a write into dY was judged only when
    every part matched, and ``db = dY.mean`` beside it scored 4 more points). Then central differences
    (``numerical``, run whenever a part matched: :func:`_numerical` confirms the parts that matched, beside wrong
    ones too), then check's NOT CHECKED as a whole
    (:func:`gradcheck.check_command._undecided`, exit 3 there: no points, whatever else failed), and how to
    reproduce a failure. A failed part against the ``reference`` first has the reference checked
    (:func:`_reference_confirmed`); with the upstream gradient ``G``, the parts are compared with the
    reference again at large inputs, as check compares them, when all passed (:func:`_large_graded`)."""
    if numerical and not verdict.passed and reference is not None:
        _reference_confirmed(reference, xs, [p.name for p in verdict.parts if not p.passed], d_in, cfg)
    if whole := _whole_layer(verdict, layer, xs, shape, numerical, Y, written):
        for p in verdict.parts:
            if p.passed:
                p.passed, p.message = False, whole(p.name)
    elif numerical and any(p.passed for p in verdict.parts):
        # the check names an input's gradient after the student's forward argument: renamed by position
        rename = dict(zip([f"d{n}" for n in V.input_names(layer, len(xs))], d_in))
        run = _eps_read(layer, partial(_within_budget, layer, xs, shape, cfg), _at_point(layer, xs, cfg), xs,
                        verdict.notes, lambda t: rename.get(t, t))
        confirm = partial(_confirm_directionally, layer, xs, d_in, shape, cfg)
        ref_run = None if reference is None else partial(check_layer, reference, xs if len(xs) > 1 else xs[0],
                                                         twin=None, config=cfg)
        if failed := _numerical(verdict, {p.name for p in verdict.parts if p.passed}, run,
                                lambda t: rename.get(t, t), "", "Is the layer deterministic?", confirm, ref_run):
            return failed  # every part had matched: the check's error fails them all
    if G is not None and reference is not None and not whole:
        _large_graded(verdict, layer, xs, d_in, G, reference, cfg)
    _running_stats_graded(verdict, layer, reference, xs, cfg.training)
    from ..check_command import _undecided

    verdict.not_checked = _undecided(getattr(layer, "protocol", None) or {}, type(layer).__name__, grading=True,
                                     matched=all(p.passed for p in verdict.parts))
    if not verdict.passed and (how := reproduce(layer, [x.shape for x in xs], training=True if cfg.training else None,
                                                reference=reference)):
        verdict.notes.append(how)
    return verdict


def _eps_read(obj: Any, run: Callable[[], Any], again: Callable[[Any], Any], probe: list[np.ndarray],
              notes: list[str], part_of: Callable[[str], str]) -> Callable[[], Any]:
    """``run`` (the check of the layer or loss ``obj`` that :func:`_numerical` reads) reading a log's small eps as
    ``gradcheck check`` does (:mod:`gradcheck._log_eps`; grade45: Deep Learning from Scratch's verbatim TwoLayerNet,
    whose ``cross_entropy_error`` is ``-log(y + 1e-7)`` and whose backward is the gradient of ``-log(y)``, scored 0/4
    at the grader's point, where tiny probabilities make the eps move the loss's derivative by 3.6e-3 relative; its
    SoftmaxWithLoss and a CS231n ``softmax_loss`` with ``log(p + 1e-7)`` 0/2). When the check fails a gradient and
    the files ``obj`` imports have such an eps (:func:`~gradcheck._log_eps.eps_free_texts`, each at most the check's
    rtol: :func:`~gradcheck._log_eps.large_eps`' rule), the copy without it is loaded (``obj.load_edited``, the
    plugin's, probed on ``probe``) and checked as ``again(copy)`` checks it (at the same point); each failing gradient
    the copy passes is read from the copy, with a note in ``notes`` naming the eps and the parts (``part_of`` its
    tensor's name), when the eps changed forward
    (:func:`~gradcheck._log_eps.changed_by_eps`) and backward moves between the two no more than the eps explains
    (:func:`~gradcheck._log_eps.eps_explains` of :func:`~gradcheck._log_eps.backward_moved`, redteam28 F7: a backward
    right only without the eps keeps its FAIL). A copy that cannot be run leaves the check as it was."""
    import dataclasses

    from .._log_eps import _fmt as said
    from .._log_eps import backward_moved, changed_by_eps, eps_explains, eps_free_texts

    def read() -> Any:
        res = run()
        failing = {r.tensor for r in res.records if r.kind != "forward" and not r.passed}
        load, files = getattr(obj, "load_edited", None), getattr(obj, "edit_files", None)
        texts, consts, _ = eps_free_texts(obj.file, files) if failing and load and files else ({}, [], [])
        if not texts or max(consts) > res.rtol:
            return res
        try:
            with load(texts, probe) as copy:
                free = again(copy)
        except Exception:  # noqa: BLE001 - the copy is a probe: if it cannot run, the check stands as it was
            return res
        mine, its = (r.gradients.get("manual", {}) for r in (res, free))
        kept = {r.tensor: r for r in free.records if r.tensor in failing and r.passed and r.tensor in mine
                and r.tensor in its and eps_explains(backward_moved({r.tensor: mine[r.tensor]},
                                                                    {r.tensor: its[r.tensor]}), consts, res.rtol)}
        if not kept or not changed_by_eps(res, free)[0]:
            return res
        rel = max(c.max_rel_error for r in res.records if r.tensor in kept for c in r.comparisons)
        c = said(consts)
        notes.append(f"{', '.join(map(part_of, kept))}: confirmed by central differences of your forward with the {c} removed from "
                     f"its log(y + {c}) (in {', '.join(sorted(texts))}), read as log(y), as Deep Learning from "
                     f"Scratch's backward, the gradient of log(y), reads it: with the eps the central differences "
                     f"differ from backward by at most a relative {rel:.1e} here (about eps/y per probability y, "
                     f"large where y is small), which is no bug.")
        return dataclasses.replace(res, records=[kept.get(r.tensor, r) for r in res.records])

    return read


def _at_point(layer: Any, xs: list[np.ndarray], cfg: CheckConfig) -> Callable[[Any], Any]:
    """:func:`_eps_read`'s ``again`` for a layer: :func:`gradcheck.check_layer` of its copy on ``xs`` with ``cfg``,
    at the parameters ``layer`` holds (the grader's point)."""
    def again(copy: Any) -> Any:
        owner = type(layer).__name__
        theirs = V.layer_params(copy, owner)
        for k, v in V.layer_params(layer, owner).items():
            theirs[k][...] = v
        return check_layer(copy, xs if len(xs) > 1 else xs[0], twin=None, config=cfg)
    return again


def _large_graded(verdict: Verdict, layer: Any, xs: list[np.ndarray], d_in: list[str], G: np.ndarray, reference: Any,
                  cfg: CheckConfig) -> None:
    """Fail, in place, each part still passing whose gradient differs from the reference's at inputs of size 1000
    (:func:`gradcheck._large_inputs.at_large_inputs`, check's comparison: X + 1000, X - 1000, the rows apart, where
    the reference's values are finite), its message check's note (an overflow: subtract each row's max). The test's
    input cannot show a softmax without its max shift: it matches the reference there and is NaN at X + 1000. The
    layer runs on a copy (a sandboxed layer's clone, in its child), the reference here. As in check, only when every
    part passed: a wrong gradient of another shape (db not summed) reads as NaN there, and would fail the others. Not
    in training mode against a reference that draws (:func:`_reference_random`): each side draws its own mask at the
    large inputs (redteam41 F3: a right model Linear -> ReLU -> Dropout whose ReLU left every entry at 0 at the test's
    batch of one agreed with the reference there, then failed every part at X + 1000, 3 seeds in 15). Nor for a model
    graded without dX (``d_in`` empty: :func:`gradcheck.sources.computes_no_dx`)."""
    if not verdict.passed or not d_in or cfg.training and _reference_random(reference, xs):  # not d_in: a model
        return
    passing = {p.name: p for p in verdict.parts}
    owner = type(layer).__name__
    call = Call(layer, owner, xs, [n[1:] for n in d_in], V.layer_params(layer, owner), cfg.training)
    display = {**dict(zip(call.keys, d_in)), **{k: f"d{k}" for k in call.params}}
    records: list = []
    notes: list[str] = []
    at_large_inputs(call, reference, G, cfg.rtol, {"Y": ATOL_FLOOR if cfg.atol is None else cfg.atol}, display,
                    records, notes)
    for r in records:
        at, p = r.tensor.partition(" (")[2].rstrip(")"), passing.get(r.tensor.partition(" (")[0])
        if p is not None and p.passed and not r.passed:
            note = next((n for n in notes if n.startswith(f"at {at} ")), "")
            p.passed, p.message = False, f"{p.name} matches the reference's at the test's input; {note}"


def _whole_layer(verdict: Verdict, layer: Any, xs: list[np.ndarray], shape: tuple[int, ...], numerical: bool, Y: Any,
                 written: GradcheckError | None) -> Callable[[str], str] | None:
    """The message (of a part's name) of ``gradcheck check``'s first failure of the layer as a whole, or None:
    a backward that wrote into dY (``written``: :func:`gradcheck.sources.dY_written`, check's exit 1); with
    ``numerical``, a float32 forward (:func:`_float32_forward`) and memory the submission's code holds that leaves
    the numerical check too little (:func:`_held`; when every part matched :func:`_within_budget` measures it
    before the check runs). Decided whatever the parts say: a part that fails does not hide them."""
    if written is not None:
        return lambda name: str(written)
    if numerical and (why := _float32_forward(Y, xs)):
        return lambda name: f"{name} matches the reference's, but it cannot be confirmed by central differences, {why}"
    if numerical and not verdict.passed and (held := _held(layer, xs, shape)) is not None:
        return lambda name: str(held)
    return None


def _held(layer: Any, xs: list[np.ndarray], shape: tuple[int, ...]) -> StudentCodeError | None:
    """The student's error when the memory the submission's code holds (:func:`_held_by_submission`) leaves the
    numerical check of ``layer`` on ``xs`` less than it needs of the sandbox's budget, else None (also for a layer
    in this process, or a check that would not fit in any case: :func:`_within_budget` names that one)."""
    budget = getattr(getattr(layer, "sandbox", None), "memory_mb", None)
    measure = getattr(layer, "check_memory_mib", None)
    if not (isinstance(budget, int) and callable(measure)):
        return None
    estimate, held = measure(xs, shape)
    if estimate <= budget < estimate + held and held > HELD_SLACK_MIB:
        return _held_by_submission(layer, held, estimate, budget, "before it could run")
    return None


def _float32_forward(Y: Any, xs: Sequence[np.ndarray]) -> str:
    """``gradcheck check``'s diagnosis of a forward whose output ``Y`` has float32 precision for float64 inputs ``xs``
    (a float32 dtype, or float64 values that are all float32 numbers: its structural probe,
    :mod:`gradcheck.diagnose`'s "float32" and "float32-values"; check's "wrong dtype" and "wrong precision" of Y),
    or "". Read by :func:`layer_forward` and :func:`layer_gradients` alike (tester23g M4: the forward test scored
    a float32 forward 1/1)."""
    if not isinstance(Y, np.ndarray) or Y.dtype.kind != "f":
        return ""
    if _low_precision(Y.dtype, xs):
        return "as gradcheck check says (FAIL: wrong dtype of Y): " + _find(
            "float32", "Y", what="forward returns", given="a float64 input", dlfs=_dlfs_f(Y.dtype),
            **_precision(Y.dtype)).sentence()
    return "as gradcheck check says (FAIL: wrong precision of Y): " + _find("float32-values", "Y").sentence() \
        if Y.dtype == np.float64 and _float32_values(Y, xs) else ""


def _float32_part(p: Part, got: Any, expected: np.ndarray, why: str) -> str:
    """The message of a wrong part ``p`` of a layer whose forward has float32 precision (``why``,
    :func:`_float32_forward`): its difference from the reference's gradient ``expected`` is float32 round-off alone
    when they agree to 1e-4 (float32 keeps about 7 digits; a gradient of several float32 steps, about 6), else its
    own message and the float32 cause beside it (newuser25 M4: "dX differs ... in 1 of 54 elements (no known bug
    pattern)" said nothing of float32)."""
    g = np.asarray(got, dtype=np.float64) if isinstance(got, np.ndarray) else None
    if g is not None and g.shape == expected.shape and close(g, expected, 1e-4, 1e-7 * float(np.abs(expected).max(
            initial=0.0))):
        return (f"{p.name} differs from the reference's by float32 round-off alone (max relative error "
                f"{float(relative_error(g, expected).max()):.1e}), "
                f"{why}")
    return f"{p.message.rstrip()} Forward has float32 precision too, {why}"


def _declared(constants: Any, reference: Any) -> list[str]:
    """The test's ``constants`` as a list of names; a :class:`GradingTestError` (the test's mistake, a grader error,
    before any student code runs: no submission is scored by it) for a string, an empty or non-string name, or a
    parameter of the reference (graded, so not a constant)."""
    params = getattr(reference, "params", None) or {}
    names = list(constants) if isinstance(constants, (list, tuple)) else None
    if names is None or not all(isinstance(n, str) and n.strip() for n in names) or set(names) & set(params):
        raise GradingTestError(f"constants {constants!r}: the names of array attributes the student's forward only "
                               f"reads, as a list (e.g. ['class_weights']); not the reference's parameters "
                               f"{sorted(params)}.")
    return [n.strip().removeprefix("self.") for n in names]


def _take_constants(layer: Any, names: list[str]) -> None:
    """Read the declared ``names`` that ``layer`` (read as check reads it) has among its arrays without a gradient
    as constants, as ``--constants`` does (:func:`gradcheck.check_command.take_constants`); others are left out (a
    student's ``self._class_weights`` is a constant already)."""
    from .._adapters import missing_gradients
    from ..check_command import take_constants

    info = getattr(layer, "protocol", None)
    if names and isinstance(info, dict) and (present := [n for n in names if n in missing_gradients(info)]):
        take_constants(layer, ",".join(present))


def _numerical(verdict: Verdict, names: set[str], run: Callable[[], Any], part_of: Callable[[str], str], of: str,
               question: str, confirm: Callable[[list[str]], list[str] | None] | None = None,
               reference_run: Callable[[], Any] | None = None, forward_differs: str = "") -> Verdict | None:
    """Confirm the parts ``names`` of ``verdict`` (those that matched the reference) by central differences: the
    pipeline's result ``run()`` (:func:`gradcheck.check_layer` or :func:`gradcheck.check_loss`: the student's
    gradient vs central differences; ``part_of`` maps its tensor names to parts) failing a part's gradient fails
    that part (:func:`_disagrees`, with ``question`` when no hint applies).

    A gradient of the wrong shape does not stop the check (:func:`gradcheck.check.wrong_shapes`: its error holds the
    result of every other gradient, read as a result is, so grade and check agree: verify26). When the check stops
    on an error a part outside ``names`` explains (a NaN or infinity, a missing gradient: the check's validation of
    what backward gave), the parts ``names`` are confirmed
    one by one by ``confirm`` (:func:`_confirm_directionally`: the names it finds wrong; None when it cannot tell, a
    forward that is not repeatable: then they stay as the reference judged them),
    so a second bug never earns back what central differences would have cost (review22: a forward adding b twice
    lost db's points beside a wrong dX's value, and kept them beside a dX of the wrong shape or with a NaN). Any
    other error, or a check too slow, fails the parts ``names``: a new verdict of them all when ``names`` is every
    part (returned), else in place (None returned). A part the check fails keeps its points when ``reference_run()``,
    the same check of the reference at the same point, fails it alike (:func:`_reference_fails_too`). A failed part
    whose forward gives another value than the reference's at the point (``forward_differs``, the words saying so:
    :func:`_other_loss`) is told that its gradient matched the reference's and that forward computes another
    function (newuser30 F8: the message only asked whether forward computes what backward differentiates)."""
    from ..errors import GradientShapeError, ProtocolError

    left = [p for p in verdict.parts if p.name in names]
    try:
        res = run()
    except GraderError:  # the grader's (MemoryBudgetError), never the submission's
        raise
    except AgainError as exc:  # backward broke at a second point (slope=0.7): every part, never confirmed here
        return _not_confirmed(verdict, left, exc)
    except (GradientShapeError, NonFiniteError, ProtocolError) as exc:
        if (res := getattr(exc, "result", None)) is None:  # else: a wrong shape, every other gradient compared
            if confirm is None or len(left) == len(verdict.parts):
                return _not_confirmed(verdict, left, exc)
            wrong = confirm([p.name for p in left]) or []
            for p in left:
                if p.name in wrong:
                    p.passed, p.message = False, (
                        f"{p.name} matches the reference's, but disagrees with the central difference of your "
                        f"forward along a random direction (the numerical check stopped on another part: "
                        f"{str(exc).rstrip('.')}). Does forward compute what backward differentiates?")
            return None
    except GradcheckError as exc:
        return _not_confirmed(verdict, left, exc)
    records = {part_of(r.tensor): r for r in res.records if r.kind == "gradient"}
    failing = [p for p in left if p.name in records and not records[p.name].passed]
    shared = _reference_fails_too(res, records, [p.name for p in failing], reference_run) if failing else {}
    for p in failing:
        if p.name in shared:
            p.message = shared[p.name]
        else:  # judged against the student's own forward, whatever the reference says (the second source of truth)
            _disagrees(p, res, records[p.name], of, question if not forward_differs else (
                f"{p.name} matches the reference's, but your forward {forward_differs}: backward differentiates the "
                "assignment's function and forward another, and a gradient is judged against its own forward "
                "(fix forward; its own test says how)."))
    return None


def _other_loss(L: Any, L_ref: Any, rtol: float, atol: float | None) -> str:
    """The words of :func:`_numerical`'s ``forward_differs`` for a loss whose value ``L`` at the graded point is not
    the reference's ``L_ref`` (by the rule, at the test's tolerances): ``"gives L = 12 where the reference gives 1
    (12 times it)"``; "" when they agree or either is not one finite number (then its gradient is judged against its
    own forward, as before)."""
    try:
        a, b = float(np.asarray(L, dtype=np.float64).reshape(())), float(np.asarray(L_ref, dtype=np.float64).reshape(()))
    except (TypeError, ValueError):
        return ""
    if not (np.isfinite(a) and np.isfinite(b)) or close(a, b, rtol, ATOL_FLOOR if atol is None else atol):
        return ""
    ratio = f" ({a / b:.6g} times it)" if b != 0 else ""
    return f"gives L = {a:.6g} where the reference gives {b:.6g}{ratio}"


def _reference_fails_too(res: Any, records: Mapping[str, Any], names: list[str],
                         reference_run: Callable[[], Any] | None) -> dict[str, str]:
    """The parts among ``names`` (matched the reference, failed by the check's result ``res``, whose records by part
    name are ``records``) that the same check of the reference at the same point (``reference_run()``) fails alike:
    its gradient and its central differences agree with the student's (the rule, at the check's tolerances), so the
    student's code is the reference's as far as the check sees, and the check cannot confirm the reference either
    (newuser26: manualprop's softmax cross-entropy at logits near 800 failed 23 of 40 draws before the truncation
    error of the step was bounded). ``{name: message}``; each such part keeps its points, the message saying why
    and giving both errors for staff. Empty without ``reference_run`` or when it raises."""
    if reference_run is None or not names:
        return {}
    try:
        ref = reference_run()
    except Exception:  # noqa: BLE001 - a reference the check cannot run: the student's verdict stands
        return {}
    theirs = {r.tensor: r for r in ref.records if r.kind == "gradient"}
    out = {}
    for n in names:
        mine, other = records[n], theirs.get(n)
        if other is None or other.passed:
            continue
        atol = res.atol_of(mine.tensor)
        got = [(res.gradients.get(src, {}).get(mine.tensor), ref.gradients.get(src, {}).get(other.tensor), k * atol)
               for src, k in (("manual", 1), ("numerical", 2))]  # two round-offs between two numerical gradients
        if all(a is not None and b is not None and close(a, b, res.rtol, tol) for a, b, tol in got):
            c, r = mine.comparisons[0], other.comparisons[0]
            out[n] = (f"{n} matches the reference's; central differences at this point disagree with both alike (max "
                      f"relative error {c.max_rel_error:.2e} for yours, {r.max_rel_error:.2e} for the reference's, "
                      f"rtol {res.rtol:g}), so they cannot confirm it here and it keeps its points (for staff: the "
                      f"test's point is beyond what the numerical check resolves; run gradcheck check on the "
                      f"reference there).")
    return out


def _not_confirmed(verdict: Verdict, left: list[Part], exc: GradcheckError) -> Verdict | None:
    """Fail the parts ``left`` that central differences could not confirm (the check's error ``exc``; a timeout:
    each call had the limit, so a forward too slow, failed as "too slow", not a wrong gradient): a new verdict
    when ``left`` is every part of ``verdict``, else in place (None)."""
    slow = getattr(exc, "reason", None) == "timeout"
    message = ("the numerical check (central differences: many calls of forward, each with the time limit of one "
               f"call) could not finish, so this gradient was not confirmed: {exc}" if slow
               else str(exc) if isinstance(exc, AgainError)  # it ran, and passed at the first point (verify48d F3)
               else f"the numerical check could not run: {exc}")
    if len(left) == len(verdict.parts):
        verdict = Verdict([Part(p.name, p.points, p.passed, p.message) for p in verdict.parts])
        left = verdict.parts
    for p in left:
        p.passed, p.message, p.failed_as = False, message, "too slow" if slow else "wrong"
    return verdict if left is verdict.parts else None


def _disagrees(p: Part, res: Any, record: Any, of: str, question: str) -> None:
    """Fail part ``p``, whose gradient the check's ``record`` (of the result ``res``) finds unlike central
    differences, with the check's figures and the likeliest cause (accumulated gradients, a parameter forward
    ignores, else ``question``)."""
    c = next((c for c in record.comparisons if not c.passed), record.comparisons[0])
    a, b = _distinct(float(c.worst_a), float(c.worst_b))
    arg = res.other_args[-1] if getattr(res, "args_failed", False) else None  # built again at another value
    at = getattr(res, "at_value", "") or (f"{arg[0]}={arg[2]!r}" if arg else "")
    p.passed, p.message = False, (
        f"{p.name} disagrees with central differences{of}{' at ' + at if at else ''}: max relative error "
        f"{c.max_rel_error:.2e} > {res.rtol:g} (worst element {p.name}{list(c.worst_index)}: {a} vs {b}). " + (
            _other_arg(p.name, arg, res.kind) if arg else _other_value(p.name, at, res.defaults) if at else
            _accumulated(res, record.tensor, p.name) or _ignored(res, record.tensor) or question))


def _other_arg(part: str, arg: tuple[str, float, float], kind: str = "layer") -> str:
    """Why a part that matched the reference fails with a float constructor argument ``arg`` ``(name, value, other)``
    built at its other value: at the test's value a wrong backward can give the right numbers (``Dropout(p=0.5)``
    whose backward divides by p), so the ``kind`` (layer or loss) is built again there, as ``gradcheck check`` builds
    it (:func:`gradcheck.sources.each_other_arg`; fix37a)."""
    k, v, o = arg
    return (f"This test builds your {kind} with {k}={v!r}, where {part} matched the reference; at that value a wrong "
            f"backward can give the right numbers ({SYMMETRIC_ARGS[v][1].format(k=k)}), so, as gradcheck check does, "
            f"the grader also builds your {kind} with {k}={o!r}, and there your backward disagrees with your own "
            f"forward: at {k}={v!r} the bug cancels. Fix how backward uses {k} (check it at {k}={o!r}). The points "
            f"are this part's.")


def _other_value(part: str, at: str, defaults: str) -> str:
    """Why a part that matched the reference fails at another value ``at`` (``"mode='average'"``) of a keyword argument
    the test left at its default (``defaults``): the pair is checked at each value its source compares it with
    (:func:`gradcheck.sources.each_keyword_value`, as ``gradcheck check`` checks it; tester33 F2)."""
    key = at.split("=")[0]
    return (f"This test leaves {key} at its default ({defaults}), where {part} matched the reference; as gradcheck check "
            f"does, the grader also checks each other value your code compares {key} with, and at {at} your backward "
            f"disagrees with your own forward: fix the {at} branch of backward (or of forward). The points are this "
            f"part's: a bug at any value of {key} costs them.")


def _ignored(res: Any, tensor: str) -> str:
    """The hint for a parameter gradient whose central differences are 0 everywhere while the student's is not:
    forward does not depend on that parameter (tester20g: a forward that forgets ``+ b`` was asked "Is the layer
    deterministic?"); '' otherwise."""
    numerical = (getattr(res, "gradients", None) or {}).get("numerical", {}).get(tensor)
    name = tensor[1:] if tensor.startswith("d") else tensor
    if numerical is None or tensor in ("dX", "dx") or np.any(np.isnan(numerical)) or np.any(numerical):
        return ""
    return (f"The central differences of every entry of {name} are 0: your forward does not depend on {name} "
            f"(does it use {name}, e.g. add it?), while backward gives it a gradient.")


def _accumulated(res: Any, tensor: str, part: str) -> str:
    """The hint for a gradient that matched the reference on the first backward call and is k >= 2 times the central
    differences in the check's later calls (``res.gradients``' manual vs numerical, element by element): each
    backward adds its gradient to what the last one left (``grads['W'] += ...``), so the k-th call gives k times the
    gradient; "" for any other mismatch (then a random or stateful layer is asked about)."""
    got = getattr(res, "gradients", {})
    m, n = (np.asarray(got.get(s, {}).get(tensor, np.nan), dtype=np.float64) for s in ("manual", "numerical"))
    ok = np.isfinite(m) & np.isfinite(n) & (np.abs(n) > 1e-6 * max(float(np.nanmax(np.abs(n), initial=0)), 1e-300))
    if m.shape != n.shape or ok.sum() == 0:
        return ""
    k = float(np.median(m[ok] / n[ok]))
    if round(k) < 2 or abs(k - round(k)) > 1e-3 or not close(m[ok], round(k) * n[ok], 1e-4, 1e-9):
        return ""
    return (f"{part} matched the reference on the first backward call, and is {round(k)} times the correct gradient "
            "in the check's later calls: the gradients accumulate across backward calls (grads[...] += ...). "
            "Assign them (grads['W'] = ...), do not add to them: each backward must give this call's gradient alone.")


def _part(name, w, g, expected, ones, keys, n_batch, rtol, atol, loss=False, dtype=True, parameter=None,
          **graded) -> Part:
    """One graded tensor: missing, None, non-finite, of a lower float precision than the reference's (``dtype``: as
    check fails it; off in a test that gives up the central differences, ``numerical=False``, the documented way to
    accept float32 code), or compared with the reference and named (``loss``: a loss's gradient, its normalisation
    named as check names it, tester23g: "21 times ... a constant factor"; ``parameter``: whether it is a parameter's
    gradient, not an input's, which only then may be a bias's; ``graded``: the layer, inputs, upstream gradient and
    mode, for check's own signatures, :func:`diagnose`)."""
    if g is KeyError:
        return Part(name, w, False, f"grads has no key {name[1:]!r} after backward(dY); expected keys {keys}.")
    if g is None:
        what = (f"grads[{name[1:]!r}] is None" if name[1:] in keys else
                "backward(dY) returned None" if name == "dX" else "backward() returned None")
        return Part(name, w, False, f"{what}; expected an array of shape {V.fmt_shape(expected.shape)}.")
    g = np.asarray(g)
    if g.dtype.kind in "biu":  # check's words (exit 1 there: "returned dX of dtype int64"), this part alone
        owner = type(graded["layer"]).__name__ if "layer" in graded else "the layer"
        owner = getattr(graded.get("layer"), "class_name", owner)
        return Part(name, w, False, str(V.dtype_error(owner, "backward(dY)" if name in ("dX", "dx") else
                                                      f"grads[{name[1:]!r}] after backward(dY)", name, g.dtype)))
    if g.shape == expected.shape and not np.all(np.isfinite(g.astype(np.float64))):
        return Part(name, w, False, f"{name} contains NaN or infinity.")
    if dtype and g.dtype.kind == "f" and g.dtype.itemsize < 8 and expected.dtype == np.float64:
        # as check fails it (redteam25 M1: a float32 dx, dw, db scored 47/47 where check said FAIL: wrong dtype)
        return Part(name, w, False, f"{name} has {g.dtype} precision, as gradcheck check says (FAIL: wrong dtype of "
                    f"{name}): " + _find("float32", name, what=f"backward returns {name} as", given="a float64 input",
                                         dlfs=_dlfs_f(g.dtype), **_precision(g.dtype)).sentence())
    alternatives = {} if ones is None else {
        f"{name} does not use the upstream gradient dY: it equals the gradient for dY = 1 (the local derivative "
        f"alone). Multiply by dY (chain rule).": ones}
    msg = diagnose(name, g, expected, batch_size=n_batch, alternatives=alternatives, rtol=rtol,
                   atol=ATOL_FLOOR if atol is None else atol, loss=loss, parameter=parameter, **graded)
    return Part(name, w, not msg, msg)


def _overflowed(L: float, L_ref: float, logits: np.ndarray, loss: Any = None, y_true: Any = None) -> str:
    """The sentence of a loss ``L`` that is NaN or infinite where the reference's ``L_ref`` is finite, at ``logits``
    (any shape, float64): the largest logit, and float64's ``exp`` overflowing above ``log(finfo.max)`` = 709.78
    (a softmax or cross-entropy without the max shift, CS231n's "numeric stability" note). Where ``loss`` (given with
    ``y_true``) is not finite either at the logits with each row's maximum subtracted, the shift does not cure it: the
    log of a probability that rounded to 0, which log-sum-exp avoids (redteam43 F3: a softmax that subtracts the
    row maximum, then takes ``np.log(probs)``, was told to subtract the row maximum)."""
    top = float(np.max(logits)) if np.size(logits) else 0.0
    z = np.asarray(logits, dtype=np.float64)
    spread = float(np.max(z.max(axis=-1) - z.min(axis=-1))) if z.ndim and z.size else 0.0
    still = _underflowed(loss, y_true, logits)
    if still and spread < UNDERFLOW_SPREAD:  # verify44b F6: no underflow at logits 2.6 apart, and no overflow
        return (f"the loss is {L}; expected the finite value {L_ref:.6g}. It is {L} with each row's maximum "
                f"subtracted from the logits too, whose rows are at most {spread:.3g} apart (no exp overflows or "
                "rounds to 0 there): look for a 0/0 or a log of 0 elsewhere in the loss (a log of the targets, a "
                "division by a count of 0).")
    if still:
        return (f"the loss is {L}; expected the finite value {L_ref:.6g}. It is {L} with each row's maximum "
                "subtracted from the logits too, so it is no overflow of exp: a probability exp(z - max) / sum "
                "rounds to 0 in float64 (a logit about 745 or more below its row's maximum) and its log is -inf. "
                "Take the log of the softmax as log-sum-exp does, log p = (z - max) - log(sum(exp(z - max))) "
                "(log_softmax), not np.log of the probabilities.")
    why = (f" at logits up to {top:.6g}, where exp overflows in float64 (above {np.log(np.finfo(np.float64).max):.2f})"
           if top > np.log(np.finfo(np.float64).max) else "")
    return (f"the loss is {L}{why}; expected the finite value {L_ref:.6g}. Subtract the row maximum before exp "
            "(softmax(z) = softmax(z - z.max(axis=1, keepdims=True))).")


#: A row's spread of logits from which ``exp(z - max)`` may round to 0 in float64, so ``np.log`` of a probability is
#: -inf: ``exp(-745.2)`` is the last subnormal's half; 700 leaves room for the sum's division.
UNDERFLOW_SPREAD = 700.0


def _underflowed(loss: Any, y_true: Any, logits: np.ndarray) -> bool:
    """Whether ``loss``'s forward is NaN or infinite at 2-D ``logits`` with each row's maximum subtracted (a value
    the shift leaves as it is, softmax's): False when not given, not 2-D, or its forward raises there."""
    z = np.asarray(logits, dtype=np.float64)
    if loss is None or z.ndim != 2 or not z.size:
        return False
    try:
        out = loss.forward(np.array(y_true, copy=True), z - z.max(axis=1, keepdims=True))
        return not np.all(np.isfinite(np.asarray(out, dtype=np.float64)))
    except Exception:  # noqa: BLE001 - the student's forward: no claim
        return False


def loss_value(loss: Any, y_true: np.ndarray, logits: np.ndarray, reference: Any, *, rtol: float = 1e-7,
               atol: float = 1e-10, points: float = 1.0, expect_nonfinite: bool = False) -> Verdict:
    """Grade the loss value (one part ``"L"``) against the reference loss's.

    ``y_true``, ``logits``: the targets and predictions the grader chose. With
    ``expect_nonfinite`` the test means a NaN or infinite reference, and the student's must be
    the same; otherwise a non-finite reference is a :class:`GradingTestError`. A wrong value names
    a mean taken twice, a sum where the mean is due, or an overflow of ``exp``.
    """
    L_ref = float(_finite_reference("loss value", float(reference.forward(np.array(y_true, copy=True),
                                                                          np.array(logits, copy=True))),
                                    expected=expect_nonfinite))
    out = loss.forward(np.array(y_true, copy=True), np.array(logits, copy=True))
    try:  # check's reading of L (a scalar): grade and check say the same of a shape (1,) (tester23g M4)
        L = float(V.loss_scalar(out, type(loss).__name__,
                              (getattr(loss, "protocol", None) or {}).get("signature") or "forward(y_true, y_pred)"))
    except NonFiniteError:
        L = float(np.asarray(out, dtype=np.float64))  # compared below: a NaN the test may expect
    except GradcheckError as exc:
        return Verdict([Part("L", points, False, str(exc))])
    if _agree(np.array(L), np.array(L_ref), rtol, atol, expect_nonfinite):  # then at logits of size 1000 (grade40)
        note = "" if expect_nonfinite else _large_loss_value(loss, y_true, logits, reference)
        return Verdict([Part("L", points, not note, note and f"the loss matches the reference's at the test's "
                             f"logits; {note}")])
    if not np.isfinite(L):
        return Verdict([Part("L", points, False, _overflowed(L, L_ref, logits, loss, y_true))])
    N = np.shape(logits)[0]
    hint = ""
    if close(np.array(L * N), np.array(L_ref), rtol, atol):
        hint = f" It is the expected value divided by the batch size {N}: the mean was taken twice."
    elif close(np.array(L), np.array(L_ref * N), rtol, atol):
        hint = f" It is {N} times the expected value: a sum where the mean over the batch is due."
    return Verdict([Part("L", points, False, f"the loss is {L:.8g}; expected {L_ref:.8g}.{hint}")])


def _large_loss_value(loss: Any, y_true: np.ndarray, logits: np.ndarray, reference: Any) -> str:
    """:func:`gradcheck._large_inputs.loss_at_large_predictions`'s note for :func:`loss_value`: the loss's value
    differs from the reference's at logits of size 1000 (a cross-entropy without its max shift is NaN there), or ""."""
    owner = type(loss).__name__
    signature = (getattr(loss, "protocol", None) or {}).get("signature") or "forward(y_true, y_pred)"
    yt, z = np.array(y_true, copy=True), np.array(logits, dtype=np.float64, copy=True)

    def value(x: np.ndarray) -> float:
        out = V.call_student(loss.forward, yt.copy(), x.copy(), owner=owner, call=signature)
        return float(V.loss_scalar(out, owner, signature))
    try:
        return loss_at_large_predictions(reference, yt, z, value)
    except GradcheckError:  # the loss's value there is no scalar: its other tests say so
        return ""


def loss_gradient(loss: Any, y_true: np.ndarray, logits: np.ndarray, reference: Any, *, points: float = 1.0,
                  rtol: float = RTOL, atol: float | None = ATOL, numerical: bool = True) -> Verdict:
    """Grade a loss's ``backward()`` (one part ``"dy_pred"``, dL/dlogits) against the reference
    and, when it matches, against :func:`gradcheck.check_loss`'s central differences.
    GradingTestError when the reference gradient is not finite."""
    yt, z = np.array(y_true, copy=True), np.array(logits, dtype=np.float64, copy=True)
    L_ref = reference.forward(yt.copy(), z.copy())
    expected = _finite_reference("gradient dL/dlogits", reference.backward())
    L = loss.forward(yt.copy(), z.copy())
    part = _part("dy_pred", points, loss.backward(), expected, None, [], z.shape[0], rtol, atol, loss=True,
                 dtype=numerical)
    if not part.passed and np.size(L) == 1 and np.isfinite(L_ref) and not np.isfinite(np.asarray(L, dtype=float)):
        part.message = f"{_overflowed(float(np.asarray(L, dtype=float)), float(L_ref), z, loss, yt)} {part.message}"
    verdict = Verdict([part])
    if part.passed and numerical:
        run = _eps_read(loss, partial(check_loss, loss, yt, z, twin=None, rtol=rtol, atol=atol),
                        lambda copy: check_loss(copy, yt, z, twin=None, rtol=rtol, atol=atol), [yt, z], verdict.notes,
                        lambda t: "dy_pred")
        ref_run = partial(check_loss, reference, yt, z, twin=None, rtol=rtol, atol=atol)
        if failed := _numerical(verdict, {"dy_pred"}, run, lambda t: "dy_pred", " of the loss",
                                "Does forward compute the same loss backward differentiates?", reference_run=ref_run,
                                forward_differs=_other_loss(L, L_ref, rtol, atol)):
            return failed
    if part.passed:
        _large_predictions_graded(part, loss, yt, z, reference, rtol, atol)
    verdict.notes += [n for n in [reproduce(loss, z.shape, loss=True, reference=reference)] if n and not part.passed]
    return verdict


def _large_predictions_graded(part: Part, loss: Any, yt: np.ndarray, z: np.ndarray, reference: Any, rtol: float,
                              atol: float | None) -> None:
    """Fail ``part``, a loss's gradient that matched the reference's at the test's logits ``z``, when it differs from
    the reference's at logits of size 1000 (:func:`gradcheck._large_inputs.at_large_predictions`, check's comparison:
    z + 1000, z - 1000, the rows apart, where the reference's are finite), its message check's note (an overflow:
    subtract each row's max). A cross-entropy without the max shift matches at the test's logits and is NaN there."""
    owner = type(loss).__name__
    signature = (getattr(loss, "protocol", None) or {}).get("signature") or "forward(y_true, y_pred)"

    def value(x: np.ndarray) -> float:
        out = V.call_student(loss.forward, yt.copy(), x.copy(), owner=owner, call=signature)
        return float(V.loss_scalar(out, owner, signature))
    try:
        records, notes = at_large_predictions(loss, reference, yt, z, value, owner, part.name, rtol,
                                              ATOL_FLOOR if atol is None else atol, [], [])
    except GradcheckError:  # the loss's value there is no scalar: its other tests say so
        return
    for r in records:
        at = r.tensor.partition(" (")[2].rstrip(")")
        if r.kind == "gradient" and not r.passed and part.passed:
            note = next((n for n in notes if n.startswith(f"at {at} ")), "")
            part.passed, part.message = False, f"{part.name} matches the reference's at the test's logits; {note}"


def backward_repeatable(obj: Any, inputs: Sequence[np.ndarray], *, dY: np.ndarray | None = None,
                        points: float = 1.0, expected: np.ndarray | None = None) -> Verdict:
    """Call ``backward`` twice after one forward (one part ``"backward twice"``): both must agree.

    ``obj`` is a layer (``backward(dY)``, which may return a tuple: a CS231n pair's ``(dx, dgamma, dbeta)``,
    each compared) or a loss (``backward()``, ``dY`` None); ``inputs`` the arguments of ``forward``; the two calls
    are :func:`gradcheck.sources.backward_twice`'s (check's cache note measures the same). A backward that edits its forward cache in place
    (``self.p[range(N), y] -= 1``) is wrong the second time a training loop or a check calls it.
    With ``expected`` (the reference's gradient at the same point, a tuple for a tuple) the first backward must also
    be right: a property earns its points only with correct values (returning zeros twice is
    repeatable, and worth nothing).
    """
    first, second = backward_twice(obj, inputs, dY, loss=dY is None)
    if not all(np.all(np.isfinite(g)) for g in [*first, *second]):
        return Verdict([Part("backward twice", points, False, "backward() returned NaN or infinity.")])
    want = [np.asarray(e, dtype=np.float64) for e in (expected if isinstance(expected, (tuple, list)) else
                                                      [expected])] if expected is not None else []
    names = ["dy_pred"] if dY is None else ["dX"] + [f"backward's output {i}" for i in range(1, len(first))]
    if want and (len(want) != len(first) or (wrong := _wrong_values(
            {n: (g, e) for n, g, e in zip(names, first, want)}, np.shape(inputs[-1 if dY is None else 0])[0]))):
        wrong = wrong if len(want) == len(first) else [(
            "backward", f"backward returned {len(first)} arrays; expected {len(want)}")]
        shapes = np.shape(inputs[-1]) if dY is None else [np.shape(x) for x in inputs]
        how = reproduce(obj, shapes, loss=dY is None)
        return Verdict([Part("backward twice", points, False, _wrong_message(wrong))], [how] if how else [])
    if len(first) == len(second) and all(a.shape == b.shape and close(a, b, 1e-12, 1e-15)
                                         for a, b in zip(first, second)):  # zip alone passed a shorter second
        return Verdict([Part("backward twice", points, True)])        # answer (review28g L2)
    if len(first) != len(second):
        return Verdict([Part("backward twice", points, False,
                             f"a second backward() after the same forward returned {len(second)} array(s), the "
                             f"first {len(first)}: backward changes what it keeps between calls. Return the same "
                             "gradients every call, and work on a copy of any cached array it edits.")])
    diff = twice_difference(first, second)
    return Verdict([Part("backward twice", points, False,
                         f"a second backward() after the same forward returned a different gradient "
                         f"(max difference {diff:.3g}): backward changes the forward cache in place. "
                         "Work on a copy (x = x.copy(), x the array it writes into) instead of editing the cached "
                         "array.")])


def mini_batch_step(layer: Any, X: np.ndarray, *, eta: float = 0.5, lmbda: float = 5.0, n: int = 50,
                    parts: Mapping[str, float] | None = None, points: float | None = None) -> Verdict:
    """Grade Nielsen's ``update_mini_batch``: one step, each array of the network after it a part.

    One ``update_mini_batch`` runs in the sandbox child on a copy of the network (``student.layer(...,
    targets=...)``: the mini-batch is ``X``'s columns with the targets' columns) and each array after it is compared
    with the step made of the network's own gradients (:func:`gradcheck._nielsen_step.step_check`, as ``gradcheck
    check`` compares it): network.py's ``w - (eta/m) * sum(nabla_w)``, or network2.py's ``(1 - eta*lmbda/n) * w -
    (eta/m) * sum(nabla_w)`` (biases not decayed) when ``update_mini_batch`` takes ``lmbda`` and ``n``. A wrong array
    is named by its bug (not averaged over the mini-batch, averaged twice, sign flipped, not updated, the last sample's
    gradient alone, the L2 decay on the biases, with n = m, or missing). The step is graded on the student's own
    gradients, so a wrong backprop costs the gradient test's points, not these.

    Parameters
    ----------
    layer : RemoteLayer
        The network loaded with targets (``student.layer("network.py", "Network", targets="real@3,4", ...)``).
    X : ndarray, shape (n_in, m)
        The mini-batch's inputs, one sample a column (m = the targets' columns).
    eta, lmbda, n : float, float, int
        The learning rate, and the L2 strength and training set size given to an ``update_mini_batch`` that takes them
        (Nielsen's ``update_mini_batch(mini_batch, eta, lmbda, n)``).
    parts, points : mapping of str -> float, or float, optional
        Points per array (``{"weights[0]": 2, ...}``; default 1 each), or their total shared equally.

    Raises
    ------
    GradingTestError
        The layer has no targets or is not in a sandbox, ``X`` is not (n_in, m) for the targets' m, or ``eta``,
        ``lmbda``, ``n`` are not positive: the test is wrong.
    StudentCodeError
        forward, backward or the step raised, or the staff policy's count of forward calls is not 0.
    """
    from .._nielsen_step import step_check

    T, X = getattr(layer, "targets", None), np.asarray(X, dtype=np.float64)
    if not isinstance(T, np.ndarray) or X.ndim != 2 or T.ndim != 2 or X.shape[1] != T.shape[1]:
        raise GradingTestError(f"grade.mini_batch_step needs a network loaded with targets (student.layer(..., "
                               f"targets='real@N_OUT,M')) and X of shape (n_in, M); got targets "
                               f"{None if T is None else np.shape(T)} and X {X.shape}.")
    if not (eta > 0 and lmbda >= 0 and n > 0):
        raise GradingTestError(f"grade.mini_batch_step: eta={eta}, lmbda={lmbda}, n={n}; expected eta > 0, lmbda >= "
                               "0, n > 0.")
    if _sandboxed(layer) is None:
        raise GradingTestError("grade.mini_batch_step runs the step in the sandbox: give it the layer student.layer "
                               "loaded.")
    names = list(layer.params)
    weights = _weights(parts, names, points)
    res = step_check(layer, X, T, eta=eta, lmbda=lmbda, n=n)
    if res.refused:
        return Verdict([Part(k, w, False, f"{res.not_checked()}.") for k, w in weights.items()])
    said = res.said()
    return Verdict([Part(k, w, k not in res.wrong, f"after one {said}: {res.wrong[k]}; due: {res.formula}."
                         if k in res.wrong else "") for k, w in weights.items()])


def dtypes(results: Mapping[str, Any], expected: Any = np.float64, points: float = 1.0, *,
           correct: Mapping[str, np.ndarray] | None = None, batch_size: int | None = None,
           reproduce_with: Mapping[str, tuple[Any, Sequence[int], bool]] | None = None,
           layers: Mapping[str, Any] | None = None) -> Verdict:
    """Check that every value of ``results`` (``{"Linear dX": dX, ...}``) is an array of dtype
    ``expected``: one part ``"dtypes"``.

    With ``correct`` (name -> the reference's value at the same point) those values must also be
    right (a name's last word, ``dX``/``dW``/``db``/``dy_pred``, names the tensor in the
    diagnosis; ``batch_size`` the batch's): a property earns its points only with correct values
    (zeros of the right shapes are float64, and worth nothing). ``reproduce_with`` maps a name's
    first word (``"Linear"``) to ``(object, input shape, is_loss)``: a wrong value's note tells
    how to run its check (:func:`~gradcheck.grading.diagnosis.reproduce`). ``layers`` maps a name's first word to
    the student's layer whose gradients the values are (default: the objects of ``reproduce_with``): a gradient
    ``d<key>`` is compared in the reference's layout, as :func:`layer_gradients` compares it (a weight stored
    (in, out), a bias with a size-1 axis: redteam28 F6, such honest layouts lost this part with a wrong "transposed"
    diagnosis).
    """
    exp = np.dtype(expected)
    owners = dict(layers) if layers is not None else {k: v[0] for k, v in (reproduce_with or {}).items()}
    bad = [f"{name} is {v.dtype}" if isinstance(v, np.ndarray) else f"{name} is {type(v).__name__}, not an array"
           for name, v in results.items() if not isinstance(v, np.ndarray) or v.dtype != exp]
    if not bad and correct and (wrong := _wrong_values(
            {n: (_in_reference_layout(owners.get(n.split()[0]), n.split()[-1], results[n]), c)
             for n, c in correct.items()}, batch_size)):
        owners = dict.fromkeys(name.split()[0] for name, _ in wrong)
        how = [reproduce(o, shape, loss=loss) for k in owners
               for o, shape, loss in [(reproduce_with or {}).get(k, (None, None, False))] if o is not None]
        return Verdict([Part("dtypes", points, False, _wrong_message(wrong))], [h for h in how if h])
    if not bad:
        return Verdict([Part("dtypes", points, True)])
    why = (" float32 keeps about 7 significant digits, so gradients checked to 1e-6 and a "
           "training run lose accuracy; compute in float64 (do not cast with astype(np.float32))."
           if any("float32" in b or "float16" in b for b in bad) else "")
    return Verdict([Part("dtypes", points, False, f"{'; '.join(bad)}; expected {exp}.{why}")])


def _in_reference_layout(layer: Any, name: str, value: Any) -> Any:
    """``value``, the student's gradient ``name`` (``"dW"``) of ``layer``, in the reference's layout
    (:func:`_as_stored`); unchanged for any other name or value, or without a layer."""
    if layer is None or not name.startswith("d") or not isinstance(value, np.ndarray):
        return value
    got = _as_stored(layer, name[1:], {name[1:]: value})
    return value if got is KeyError else got


def instances_apart(layers: Sequence[Any], X: np.ndarray, references: Sequence[Any], *, points: float = 1.0,
                    seed: int = 0) -> Verdict:
    """Two instances of one class used in turn keep their own state (one part ``"instances apart"``).

    Each instance and its reference get their own parameters (:func:`evaluation_point`, seeds ``seed`` and ``seed +
    1``); then, in a network's order, the first instance's forward on ``X``, the second's on another input of the
    same shape (a normal draw: another ReLU mask), the second's backward, the first's, and only then each one's
    ``grads`` are read (a module-level stack of caches, right in any network, is right here too). Every output, dX and gradient must equal its reference's. State kept on the class rather
    than the instance (``params = {}`` as a class attribute filled in ``__init__``, ``Linear.X = X``, ``ReLU.mask
    = ...``: Python's shared mutable class attribute) passes every test of one instance and breaks the second layer
    of any network (redteam43 F2: three such layers scored full marks).

    Parameters
    ----------
    layers : sequence of two layers
        Two instances of the student's class, built with the same arguments (``student.layer(...)`` twice).
    X : ndarray, shape (N, ...)
        The first instance's input; the second gets a normal draw of its shape.
    references : sequence of two layers
        Two instances of the reference class built with the same arguments.
    points : float, default 1.0
        The part's weight when the instances share state. Where they do not (a right layer, or one wrong used alone,
        which the test's other checks charge), the part weighs 0: adding the check to a test changes the score of no
        other submission.
    seed : int, default 0
        Seed of the first instance's parameters and of the upstream gradients.

    Returns
    -------
    Verdict
        One part; failing with the first wrong array named ("the first instance's dX: ...").

    Raises
    ------
    GradingTestError
        Not two layers and two references. (A forward or backward of the student's that raises, or returns a wrong
        shape, makes a part of weight 0, "not judged": the test's other checks charge it.)
    """
    if len(layers) != 2 or len(references) != 2:
        raise GradingTestError(f"grade.instances_apart takes two layers and two references; got {len(layers)} and "
                               f"{len(references)}.")
    xs = [np.array(X, dtype=np.float64), upstream_draw(probe_rng(seed + 3), np.shape(X), [X])]
    owner = type(layers[0]).__name__
    try:  # read as the other checks read them (an attribute-style layer's self.W as its params)
        layers = [_one_output(lay, ref, [x.copy()])[0] for lay, ref, x in zip(layers, references, xs)]
        for i, (lay, ref) in enumerate(zip(layers, references)):
            evaluation_point(lay, ref, seed=seed + i, xs=[xs[i].copy()])
        theirs = _in_turn(layers, xs, seed, owner)
    except StudentCodeError as exc:  # (a db of the wrong shape): the test's other checks charge it, with its words
        return Verdict([Part("instances apart", 0.0, False, f"not judged: {exc}")])
    ours = _in_turn(references, xs, seed, "the reference", False)
    which = ("first", "second")
    wrong = _wrong_values({f"the {which[i]} instance's {k}": (theirs[i][k], v) for i in range(2)
                           for k, v in ours[i].items()}, len(xs[0]))
    if not wrong:
        return Verdict([Part("instances apart", 0.0, True)])
    evaluation_point(layers[0], references[0], seed=seed, xs=[xs[0].copy()])  # the first alone: is it sharing?
    alone = _in_turn(layers[:1], xs[:1], seed, owner)[0]
    if _wrong_values({f"the first instance's {k}": (alone[k], v) for k, v in ours[0].items()}, len(xs[0])):
        return Verdict([Part("instances apart", 0.0, False, "not judged: the first instance is wrong used alone too "
                             f"(the test's other checks say how); {_wrong_message(wrong)}")])
    return Verdict([Part("instances apart", points, False, (
        f"two {owner} instances used in turn, as in a network (forward of the first, forward of the second, "
        f"backward of the second, backward of the first, then each one's grads read), do not each give their own results: {wrong[0][1]}. The "
        f"first matches when used alone, so the instances share state: keep every array on self (self.params = {{}} in "
        f"__init__, not params = {{}} in the class body; self.X = X, not {owner}.X = X)."))])


def _in_turn(layers: Sequence[Any], xs: list[np.ndarray], seed: int, owner: str,
             student: bool = True) -> list[dict[str, np.ndarray]]:
    """:func:`instances_apart`'s calls on two layers in a network's order, the forwards first to last, the backwards
    last to first: ``[{"Y", "dX", "d<param>"...}]``, each instance's ``grads`` read after both backwards (a sandboxed
    layer's in its child: :func:`gradcheck._adapters.grads_values`)."""
    outs = [V.check_output(lay.forward(x.copy(), training=False) if student else forward_in_mode(lay, [x.copy()], False),
                           owner=owner, tensor="Y", expected_shape=None, produced_by="forward(X)")
            for lay, x in zip(layers, xs)]
    dys = [upstream_draw(probe_rng(seed + 7 + i), y.shape) for i, y in enumerate(outs)]
    dxs = {i: V.check_output(layers[i].backward(dys[i].copy()), owner=owner, tensor="dX", expected_shape=xs[i].shape,
                             produced_by="backward(dY)") for i in reversed(range(len(layers)))}
    res = []
    for i, (lay, y) in enumerate(zip(layers, outs)):
        params = V.layer_params(lay, owner)
        grads = V.check_grads(lay, owner, params, grad_slots(lay)) if params else {}
        now = _grads_now(lay) if student else {}
        grads = {k: now[k] if np.shape(now.get(k)) == np.shape(g) else g for k, g in grads.items()}
        res.append({"Y": y, "dX": dxs[i], **{V.grad_name(k): g for k, g in grads.items()}})
    return res


def _grads_now(layer: Any) -> dict[str, np.ndarray]:
    """The student's ``grads`` dict's arrays as it holds them now (:func:`gradcheck._adapters.grads_values`, in the
    sandbox's child for a sandboxed layer); ``{}`` when they cannot be read (the snapshot of its backward stands)."""
    try:
        return {k: np.asarray(v, dtype=np.float64) for k, v in (adapter_call(layer, "grads_values") or {}).items()}
    except Exception:  # noqa: BLE001 - a grads dict the adapter cannot read: its backward's copy is compared
        return {}


def _wrong_values(pairs: Mapping[str, tuple[Any, np.ndarray]], batch_size: int | None) -> list[tuple[str, str]]:
    """Why a property's points are not earned: ``(name, why)`` for each ``name -> (got, expected)``
    that is wrong, ``why`` its diagnosis (:func:`~gradcheck.grading.diagnosis.diagnose`, the tensor
    named by the name's last word); empty when all are right (:data:`RTOL`,
    :data:`~gradcheck.compare.ATOL_FLOOR`)."""
    wrong = []
    for name, (got, want) in pairs.items():
        try:
            g = np.asarray(got, dtype=np.float64)
        except (TypeError, ValueError):
            wrong.append((name, f"{name} is not a numeric array"))
            continue
        want = np.asarray(want, dtype=np.float64)
        if g.shape == want.shape and not np.all(np.isfinite(g)):
            wrong.append((name, f"{name} contains NaN or infinity"))
        elif why := diagnose(name.split()[-1], g, want, batch_size=batch_size, rtol=RTOL, atol=ATOL_FLOOR):
            wrong.append((name, f"{name}: {why.rstrip('.')}"))
    return wrong


def _wrong_message(wrong: list[tuple[str, str]]) -> str:
    return (f"the values are wrong, and this property earns points only with correct values: "
            f"{'; '.join(why for _, why in wrong)}.")
