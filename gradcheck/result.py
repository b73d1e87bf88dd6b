"""A check's :class:`CheckResult` of :class:`TensorRecord` s of :class:`~gradcheck.compare.Comparison` s, and
the text tables the CLI prints (:func:`format_table`); diagnosis, grading and the plots only read them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import wrap
from .compare import Comparison

__all__ = ["PAIRS", "ALL_PAIRS", "NONDETERMINISTIC", "TensorRecord", "CheckResult", "json_shape",
           "format_table", "format_failures"]

#: The three-way comparison pairs, in display order; all pairs add the reference and two forwards.
PAIRS = ("manual-vs-numerical", "tape-vs-numerical", "manual-vs-tape")
#: The other side of a failing forward comparison, as :meth:`CheckResult.mismatch` names it.
_OTHER = {"manual-vs-reference": "reference", "manual-vs-tape": "twin", "call1-vs-call2": "call"}
#: The check's own run (C-ordered arrays) against the run at the same values in Fortran order, or as a strided view
#: for a 1-d array or a (1, n) row (:mod:`gradcheck._layout`).
LAYOUT_PAIR = "C-order-vs-Fortran-order"
ALL_PAIRS = PAIRS + ("manual-vs-reference", "call1-vs-call2", LAYOUT_PAIR)


def layout_words(moved: list[str]) -> str:
    """The FAIL line's words on the tensors ``moved`` that change with the memory layout (:mod:`gradcheck._layout`)."""
    return (f"{', '.join(moved)} change{'s' if len(moved) == 1 else ''} with the memory layout (the same values in "
            "Fortran order or as a strided view give other numbers)")


#: Start of the note of a result whose forward gave different outputs for the same input.
NONDETERMINISTIC = "non-deterministic forward"


@dataclass
class TensorRecord:
    """All comparisons of one ``tensor`` (``"dX"``, ``"dW"``, or ``"Y"``/``"L"`` of ``kind`` "forward")."""

    tensor: str
    shape: tuple[int, ...]
    kind: str
    comparisons: list[Comparison] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when every comparison of this tensor passed (one that gives no verdict too: see :attr:`vacuous`)."""
        return all(c.passed for c in self.comparisons)

    @property
    def vacuous(self) -> bool:
        """Whether a comparison of this tensor gives no verdict (``Comparison.unchecked``: an atol that passes any
        gradient of its size, or the step's truncation error covering its mismatch): NOT CHECKED."""
        return any(c.unchecked for c in self.comparisons)

    def get(self, pair: str) -> Comparison | None:
        """The comparison for ``pair``, or None when that pair was not computed."""
        return next((c for c in self.comparisons if c.pair == pair), None)


@dataclass
class CheckResult:
    """Outcome of :func:`check_layer` or :func:`check_loss`.

    ``records``: the forward's first (with a twin or reference), the inputs', the parameters';
    ``rtol`` ... ``input_shape`` as checked; ``twin``: its qualified name or None (``twin_note``:
    why); ``gradients``: ``{source: {tensor: ndarray}}`` (numerical: NaN where not estimated);
    ``training``: the mode (None for a loss); ``other_modes``: the other mode's result.
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
    training: bool | None = None
    other_modes: list[CheckResult] = field(default_factory=list, repr=False)
    #: method "complex": the tensors whose numerical gradient is the complex step (the others: central differences)
    complex_step: list[str] = field(default_factory=list)
    #: a function pair checked at another value of a keyword argument than its default (``"mode='average'"``, with
    #: ``defaults`` ``"mode='max'"``: :func:`gradcheck.sources.values_merged`); "" at the values given
    at_value: str = ""
    defaults: str = ""
    #: a layer checked again with float constructor arguments at other values (``Dropout(p=0.5)`` at p = 0.3:
    #: :func:`gradcheck.sources.each_other_arg`): ``(name, value, other)`` of each; ``args_failed``: this result is the
    #: check at the last one's other value, which failed
    other_args: list[tuple[str, float, float]] = field(default_factory=list)
    args_failed: bool = False

    @property
    def passed(self) -> bool:
        """True when at least one gradient was compared and every comparison of every tensor is within tolerance,
        in every mode checked: nothing compared is never a pass (tester16 H1; :attr:`compared`), nor a tensor whose
        atol passes any gradient of its size (newuser23 H1; :attr:`unchecked`)."""
        return (self.compared and all(r.passed for r in self.records) and not self.unchecked
                and all(o.passed for o in self.other_modes))

    @property
    def unchecked(self) -> list[str]:
        """The tensors whose comparison gives no verdict (``TensorRecord.vacuous``: an atol that passes any gradient
        of their size, or the step's truncation error), in every mode, e.g. ``["dX"]``: NOT CHECKED (exit 3)."""
        return list(dict.fromkeys(r.tensor for x in [self, *self.other_modes] for r in x.records if r.vacuous))

    @property
    def compared(self) -> bool:
        """Whether some gradient was compared in this mode (a record not of the forward, with a comparison)."""
        return any(r.kind != "forward" and r.comparisons for r in self.records)

    @property
    def modes(self) -> list[str]:
        """The training modes checked, this result's first: e.g. ``["training", "eval"]`` (empty for a loss)."""
        return [("training" if r.training else "eval") for r in [self, *self.other_modes] if r.training is not None]

    @property
    def kinks(self) -> dict[str, list[tuple[int, ...]]]:
        """``{tensor: [index, ...]}`` of elements excluded as "at a kink" (manual vs numerical)."""
        return {r.tensor: list(c.kinks) for r in self.records
                if (c := r.get("manual-vs-numerical")) is not None and c.kinks}

    @property
    def failing_tensors(self) -> list[str]:
        """Names of tensors with at least one failing comparison, e.g. ``["db"]``."""
        return [r.tensor for r in self.records if not r.passed]

    def layout_moved(self) -> list[str]:
        """The failing tensors whose every failing comparison is the memory-layout rerun's (:data:`LAYOUT_PAIR`)."""
        return [r.tensor for r in self.records if not r.passed
                and all(c.passed or c.pair == LAYOUT_PAIR for c in r.comparisons)]

    def mismatch(self) -> str:
        """What failed, in words for the FAIL line: ``forward mismatch in Y`` (a forward value that differs from the
        reference's or the twin's, or between two calls), ``gradient mismatch in dW``; a gradient that agrees with
        central differences of the layer's own forward and differs only from the other's, beside a forward that
        differs, follows from the forward (named so, not as a gradient bug)."""
        bad = [r for r in self.records if not r.passed]
        moved = self.layout_moved()
        if moved:  # the memory-layout rerun's (gradcheck._layout): every other comparison of these passed
            bad = [r for r in bad if r.tensor not in moved]
        fwd = [r for r in bad if r.kind == "forward"]
        other = next((_OTHER[c.pair] for r in fwd for c in r.comparisons if not c.passed and c.pair in _OTHER), "")
        follows = [r.tensor for r in bad if r.kind != "forward" and fwd and other and
                   (c := r.get("manual-vs-numerical")) is not None and c.passed]
        grads = [r.tensor for r in bad if r.kind != "forward" and r.tensor not in follows]
        parts = [f"forward mismatch in {', '.join(r.tensor for r in fwd)}" + (
            " (two calls with the same input differ)" if other == "call" else "")] if fwd else []
        parts += [f"gradient mismatch in {', '.join(grads)}"] if grads else []
        if follows:
            one = len(follows) == 1
            parts.append(f"{', '.join(follows)} agree{'s' if one else ''} with central differences of this forward, "
                         f"not with the {other}'s")
        if moved:
            parts.append(layout_words(moved))
        return "; ".join(parts)

    def atol_of(self, tensor: str) -> float:
        """The atol ``tensor`` was compared with against the numerical gradient (its own after a grown step); a record
        with no numerical comparison (the large-input probe's ``dW (X - 1000)`` rows, compared with the reference at
        an atol of their own: :func:`gradcheck._large_inputs.shifted_roundoff`) gives its first comparison's atol."""
        rec = next((r for r in self.records if r.tensor == tensor), None)
        c = None if rec is None else rec.get("manual-vs-numerical")
        if c is None and rec is not None:  # verify48a F1: the check's own atol was printed where a raised one ruled
            c = next((o for o in rec.comparisons if not np.isnan(o.atol)), None)
        return self.atol if c is None or np.isnan(c.atol) else c.atol

    def atol_words(self) -> str:
        """``atol=...`` as the verdict states it: one value, or each tensor's own where they differ."""
        own = {r.tensor: self.atol_of(r.tensor) for r in self.records if r.kind == "gradient"}
        if all(a == self.atol for a in own.values()):
            return f"atol={self.atol:g}"
        return "atol=" + ", ".join(f"{a:.3g} ({t})" for t, a in own.items())

    @property
    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per (tensor, pair): name, tensor, shape, pair, errors, worst element, passed."""
        return [{"name": self.name, "tensor": r.tensor, "kind": r.kind, "shape": r.shape, **vars(c),
                 "kinks": len(c.kinks)} for r in self.records for c in r.comparisons]

    def table(self, details: bool = True, flagged: Mapping[tuple[str, str], str] | None = None) -> str:
        """Text table of this result and its other modes (:func:`format_table`; ``flagged``: the tensors another
        check found wrong)."""
        return format_table([self, *self.other_modes], details=details, flagged=flagged)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary (no raw gradient arrays)."""
        return {
            "name": self.name, "kind": self.kind, "passed": self.passed, "rtol": self.rtol, "atol": self.atol,
            "eps": self.eps, "seed": self.seed, "mode": self.mode, "method": self.method, "training": self.training,
            "other_modes": [o.to_dict() for o in self.other_modes], "input_shape": json_shape(self.input_shape),
            "twin": self.twin, "twin_note": self.twin_note, "notes": list(self.notes), "at_value": self.at_value, "rows": [
                {**row, "shape": list(row["shape"]), "worst_index": list(row["worst_index"]),
                 **{k: None if np.isnan(row[k]) else row[k] for k in ("norm_rel_error", "worst_a", "worst_b")}}
                for row in self.rows]}

    __str__ = table


def json_shape(shape):
    """A shape (or tuple of shapes) as nested lists, for JSON."""
    return [json_shape(s) if isinstance(s, tuple) else int(s) for s in shape]

_SHORT = {"manual-vs-numerical": "manual~num", "tape-vs-numerical": "tape~num", "manual-vs-tape": "manual~tape",
          "manual-vs-reference": "manual~ref", "call1-vs-call2": "repeat", LAYOUT_PAIR: "C~Fortran"}

_METHOD_WORDS = {"central": "central differences", "forward": "forward differences",
                 "richardson": "Richardson-extrapolated central differences", "complex": "complex step"}

#: The directional quotient per method, as the footnote states it (the complex step's screen is central).
_DIRECTIONAL = {"central": "(L(x+hu)-L(x-hu))/2h", "forward": "(L(x+hu)-L(x))/h",
                "richardson": "the Richardson extrapolation of (L(x+hu)-L(x-hu))/2h",
                "complex": "(L(x+hu)-L(x-hu))/2h (the screen; failing tensors get the complex step)"}


def format_table(results: Sequence[CheckResult], details: bool = True,
                 errors: Sequence[tuple[str, str]] = (),
                 flagged: Mapping[tuple[str, str], str] | None = None) -> str:
    """One text table of ``results``, a row per tensor: each pair's largest relative error (``-`` not
    computed), the largest absolute error, what was checked, kinks, status; footnotes under it.
    ``details``: a paragraph per failure; ``errors``: ``(name, message)`` of entries not checked; ``flagged``:
    ``(result name, tensor) -> check`` of a tensor whose compared elements agree but which another
    check found wrong (a structural probe of :func:`gradcheck.diagnose.diagnose_layer`, newuser24 L4: ``--mode sample``
    showed ``dX 8/40 ok`` above "FAIL: wrong result of dX"): its status is ``FAIL (<check>)`` and its paragraph says
    that check found it wrong.
    """
    flagged = {k: v for k, v in (flagged or {}).items()
               if any(r.name == k[0] and rec.tensor == k[1] and rec.passed for r in results for rec in r.records)}
    shown = [p for p in ALL_PAIRS if any(rec.get(p) is not None for res in results for rec in res.records)]
    shown = shown or ["manual-vs-numerical"]
    kinks = any(c.kinks for res in results for rec in res.records for c in rec.comparisons)
    header = ["name", "tensor", "shape", *(_SHORT[p] for p in shown), "max abs err", "checked",
              *(["kinks"] if kinks else []), "status"]
    rows = [[res.name if i == 0 else "", rec.tensor + (" (fwd)" if rec.kind == "forward" else ""), str(tuple(rec.shape)),
             *("-" if (c := rec.get(p)) is None else f"{_shown(c, 'rel'):.1e}" + ("" if c.passed else " FAIL")
               for p in shown),
             f"{max((_shown(c, 'abs') for c in rec.comparisons), default=0.0):.1e}", _checked(rec),
             *([str(max((len(c.kinks) for c in rec.comparisons), default=0) or "")] if kinks else []),
             f"FAIL ({flagged[res.name, rec.tensor]})" if (res.name, rec.tensor) in flagged else
             "NOT CHECKED" if rec.vacuous and rec.passed else "ok" if rec.passed else "FAIL"]
            for res in results for i, rec in enumerate(res.records)]
    rows += [[name, "-", "-", *("-" for _ in shown), "-", "-", *(["-"] if kinks else []), "ERROR"] for name, _ in errors]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    right = set(range(3, 4 + len(shown))) | ({5 + len(shown)} if kinks else set())

    def fmt(r: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    lines = [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows] + _footnotes(results)
    fail = "\n".join([p for p in [format_failures(results)] if p] + [
        wrap(f"FAIL {name} {tensor} ({check}): the compared elements agree with the numerical gradient, but the check "
             f"'{check}' found {tensor} wrong (the diagnosis below).") for (name, tensor), check in flagged.items()]) \
        if details else ""
    return "\n".join(lines + (["", fail] if fail else []) + [s for n, m in errors for s in ("", wrap(f"ERROR {n}: {m}"))])


def _method_words(r) -> str:
    """The footnote's method: for the complex step, which tensors it differenced (h=1e-20) and that the rest, whose
    step ``eps`` is shown, were central differences (fixn22 #2: 'complex step, eps=6.06e-06' when none was)."""
    if r.method != "complex":
        return _METHOD_WORDS.get(r.method, r.method)
    if not r.complex_step and any("complex step not used" in n for n in r.notes):
        return "central differences (the complex step was asked for but not used: see the notes)"
    if not r.complex_step:
        return ("central differences (the complex step, asked for, differences only a tensor whose directional "
                "test fails, and none did)")
    rest = [rec.tensor for rec in r.records if rec.kind == "gradient" and rec.tensor not in r.complex_step]
    return (f"complex step Im L(x+ih)/h with h=1e-20 for {', '.join(r.complex_step)}"
            + (f"; central differences for {', '.join(rest)}" if rest else "")
            + ("; the directional screen central" if r.mode == "fast" else ""))


def _shown(c, which: str) -> float:
    """A comparison's largest error for the table: of the compared elements, or of the excused kinks when no
    element was left (never 0 by omission: 24 kinks of a tanh showed 0.0e+00, fixn22 #1)."""
    none_left = c.n_compared == 0 and c.kinks
    if which == "rel":
        return c.kink_rel_error if none_left else c.max_rel_error
    return c.kink_abs_error if none_left else c.max_abs_error


def _footnotes(results: Sequence[CheckResult]) -> list[str]:
    if not results:
        return []
    r0 = results[0]
    dirs = any(c.how == "directional" for r in results for rec in r.records for c in rec.comparisons)
    lines = ["", wrap(
        f"relative error = |a-b| / max(|a|+|b|, atol/rtol); pass if <= rtol={r0.rtol:g}, i.e. |a-b| <= "
        f"{r0.atol_words()} or |a-b| <= rtol*(|a|+|b|). numerical = "
        f"{_method_words(r0)}, "
        f"eps={r0.eps:.3g}, seed={r0.seed}, mode {r0.mode}. (fwd) rows compare forward values."
        + (f" 'dirs': random directional derivatives <g, u> against "
           f"{_DIRECTIONAL.get(r0.method, _DIRECTIONAL['central'])}." if dirs else ""))]
    for r in results:
        for rec in r.records:
            c = rec.get("manual-vs-numerical")
            if c is not None and c.kinks:
                shown = ", ".join(str(list(ix)) for ix in c.kinks[:4]) + (" ..." if len(c.kinks) > 4 else "")
                lines.append(wrap(f"{r.name} {rec.tensor}: {len(c.kinks)} element(s) at a kink (one-sided differences "
                                  "disagree, not as a smooth function's at half and a quarter of the step, and the "
                                  "manual value lies between them; not counted as failures, |manual - numerical| "
                                  f"up to {c.kink_abs_error:.2g} there): {shown}."))
            if c is not None and c.extrapolated:
                lines.append(wrap(f"{r.name} {rec.tensor}: {c.extrapolated} element(s) differ from the central "
                                  "difference C at the step h = eps*max(1, |x|) by more than the tolerance but agree "
                                  "with Richardson's extrapolation (4 C(h/2) - C(h)) / 3 from the steps h, h/2 and h/4 (or "
                                  "from a quarter of h, a sixteenth, ..., where the differences still shrank as h^2 "
                                  "does), which converged: there the difference was the step's truncation error, "
                                  "h^2 |f'''|/6, not the gradient's, and the extrapolation is compared instead."))
    missing = {r.name: r.twin_note.removeprefix("no class ") for r in results if r.twin_note.startswith("no class ")}
    if missing:
        near = sorted({n for q in missing.values() for n in twin_names_near(q)})
        lines.append(wrap("no tape comparison (--twin compares with autoprop's class of the same name, and "
                          "autoprop.layers / autoprop.losses has no class of that name): " + ", ".join(missing)
                          + (f"; autoprop's close names: {', '.join(near)} (name your class as autoprop's to "
                             "compare with it)" if near else "")))
    lines += [wrap(f"{r.name}: {note}") for r in results for note in r.notes]
    return lines + [wrap(f"no tape comparison for {r.name}: {r.twin_note}") for r in results
                    if r.twin_note and not r.twin_note.startswith("no class ")]


def _checked(rec) -> str:
    c = rec.get("manual-vs-numerical") or (rec.comparisons[0] if rec.comparisons else None)
    if c is None or rec.kind == "forward":
        return "-"
    size = int(np.prod(rec.shape, dtype=np.int64))
    return (f"{c.n_compared} dirs" if c.how == "directional" else
            f"{c.n_compared + len(c.kinks)}/{size}" if c.how == "sample" else f"all {size}")


def format_failures(results: Sequence[CheckResult]) -> str:
    """One paragraph per failing comparison, naming the tensor, worst element and values ("" when all passed)."""
    out = []
    for res in results:
        for rec, c in [(r, c) for r in res.records for c in r.comparisons if not c.passed]:
            (a, b), what = c.names, "forward value" if rec.kind == "forward" else "gradient"
            head = f"FAIL {res.name} {rec.tensor} ({what}, {c.pair}): "
            if c.how == "directional":
                out.append(wrap(f"{head}directional derivative <g, u> along random direction "
                                f"{c.worst_index[0] if c.worst_index else 0}: {a}={c.worst_a:.10g}, {b}={c.worst_b:.10g} "
                                f"(relative error {c.max_rel_error:.3e} > rtol {res.rtol:g})."))
            else:
                out.append(wrap(f"{head}max relative error {c.max_rel_error:.3e} > rtol {res.rtol:g}, max absolute error "
                                f"{c.max_abs_error:.3e}; worst element {rec.tensor}{list(c.worst_index)}: "
                                f"{a}={c.worst_a:.10g}, {b}={c.worst_b:.10g}."))
    return "\n".join(out)



#: Other libraries' names of autoprop's layers (lower case), for :func:`twin_names_near`.
_TWIN_ALIASES = {"dense": "Linear", "affine": "Linear", "fullyconnected": "Linear", "batchnorm": "BatchNorm1D",
                 "batchnormalization": "BatchNorm1D", "conv": "Conv2D", "convnaive": "Conv2D", "maxpool": "MaxPool2D",
                 "maxpoolnaive": "MaxPool2D"}


def twin_names_near(qualified: str) -> list[str]:
    """The classes of autoprop's module in ``qualified`` (``"autoprop.layers.Dense"``) whose names are close to its
    last part, or are that name in Keras's or CS231n's words (``Dense``: ``Linear``), for a ``--twin`` that found no
    class of that name (newuser42 F3)."""
    import difflib
    import importlib

    module, _, name = qualified.rpartition(".")
    try:
        have = [n for n, v in vars(importlib.import_module(module)).items() if isinstance(v, type) and n[:1].isupper()]
    except ImportError:
        return []
    alias = _TWIN_ALIASES.get(name.lower().replace("_", ""))
    lower = {n.lower(): n for n in have}  # case aside: Relu is ReLU (verify42b F9)
    close = [lower[n] for n in difflib.get_close_matches(name.lower(), list(lower), n=3, cutoff=0.6)]
    return list(dict.fromkeys(([alias] if alias in have else []) + close))
