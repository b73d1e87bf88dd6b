"""Plain-text tables of check results (what the CLI prints)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._validation import wrap
from .result import ALL_PAIRS, CheckResult

__all__ = ["format_table", "format_failures", "format_error_row"]

_SHORT = {"manual-vs-numerical": "manual~num", "tape-vs-numerical": "tape~num", "manual-vs-tape": "manual~tape",
          "manual-vs-reference": "manual~ref", "call1-vs-call2": "repeat"}

_METHOD_WORDS = {"central": "central differences", "forward": "forward differences",
                 "richardson": "Richardson-extrapolated central differences", "complex": "complex step"}

#: The directional quotient per method, as the footnote states it (the complex step's screen is central).
_DIRECTIONAL = {"central": "(L(x+hu)-L(x-hu))/2h", "forward": "(L(x+hu)-L(x))/h",
                "richardson": "the Richardson extrapolation of (L(x+hu)-L(x-hu))/2h",
                "complex": "(L(x+hu)-L(x-hu))/2h (the screen; failing tensors get the complex step)"}


def format_table(results: Sequence[CheckResult], details: bool = True,
                 errors: Sequence[tuple[str, str]] = ()) -> str:
    """One text table of ``results``, one row per tensor, with the footnotes under it.

    Columns: name, tensor (``Y``/``L`` = forward value, ``dX``, ``dW``, ...), shape, the maximum
    relative error of each pair (``manual~num``, ``tape~num``, ...; ``-`` when not computed, ``FAIL``
    above tolerance), the maximum absolute error over the pairs, what was checked, kinks (when any)
    and a status. ``details``: a paragraph per failing comparison (worst element, both values);
    ``errors``: ``(name, message)`` of entries that could not be checked (ERROR rows, messages below).
    """
    shown = [p for p in ALL_PAIRS if any(rec.get(p) is not None for res in results for rec in res.records)]
    shown = shown or ["manual-vs-numerical"]
    kinks = any(c.kinks for res in results for rec in res.records for c in rec.comparisons)
    header = ["name", "tensor", "shape", *(_SHORT[p] for p in shown), "max abs err", "checked",
              *(["kinks"] if kinks else []), "status"]
    rows = [[res.name if i == 0 else "", rec.tensor + (" (fwd)" if rec.kind == "forward" else ""), str(tuple(rec.shape)),
             *("-" if (c := rec.get(p)) is None else f"{c.max_rel_error:.1e}" + ("" if c.passed else " FAIL")
               for p in shown),
             f"{max((c.max_abs_error for c in rec.comparisons), default=0.0):.1e}", _checked(rec),
             *([str(max((len(c.kinks) for c in rec.comparisons), default=0) or "")] if kinks else []),
             "ok" if rec.passed else "FAIL"]
            for res in results for i, rec in enumerate(res.records)]
    rows += [[name, "-", "-", *("-" for _ in shown), "-", "-", *(["-"] if kinks else []), "ERROR"] for name, _ in errors]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    right = set(range(3, 4 + len(shown))) | ({5 + len(shown)} if kinks else set())

    def fmt(r: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    lines = [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows] + _footnotes(results)
    fail = format_failures(results) if details else ""
    return "\n".join(lines + (["", fail] if fail else []) + [s for n, m in errors for s in ("", format_error_row(n, m))])


def _footnotes(results: Sequence[CheckResult]) -> list[str]:
    """The lines under the table: the rule, kinks, missing twins, notes."""
    if not results:
        return []
    r0 = results[0]
    dirs = any(c.how == "directional" for r in results for rec in r.records for c in rec.comparisons)
    lines = ["", wrap(
        f"relative error = |a-b| / max(|a|+|b|, atol/rtol); pass if <= rtol={r0.rtol:g}, i.e. |a-b| <= "
        f"atol={r0.atol:g} or |a-b| <= rtol*(|a|+|b|). numerical = {_METHOD_WORDS.get(r0.method, r0.method)}, "
        f"eps={r0.eps:.3g}, seed={r0.seed}, mode {r0.mode}. (fwd) rows compare forward values."
        + (f" 'dirs': random directional derivatives <g, u> against "
           f"{_DIRECTIONAL.get(r0.method, _DIRECTIONAL['central'])}." if dirs else ""))]
    for r in results:
        for rec in r.records:
            c = rec.get("manual-vs-numerical")
            if c is not None and c.kinks:
                shown = ", ".join(str(list(ix)) for ix in c.kinks[:4]) + (" ..." if len(c.kinks) > 4 else "")
                lines.append(wrap(f"{r.name} {rec.tensor}: {len(c.kinks)} element(s) at a kink (one-sided differences "
                                  f"disagree and the manual value lies between them; not counted as failures): {shown}."))
    missing = [r.name for r in results if r.twin_note.startswith("no class ")]
    if missing:
        lines.append(wrap("no tape comparison (--twin compares with autoprop's class of the same name, and "
                          "autoprop.layers / autoprop.losses has no class of that name): " + ", ".join(missing)))
    lines += [wrap(f"{r.name}: {note}") for r in results for note in r.notes]
    return lines + [wrap(f"no tape comparison for {r.name}: {r.twin_note}") for r in results
                    if r.twin_note and not r.twin_note.startswith("no class ")]


def _checked(rec) -> str:
    """What the numerical comparison covered: every element, a sample of them, or random directions."""
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
        for rec, c in res.failures:
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


def format_error_row(name: str, message: str) -> str:
    """Paragraph for an entry that raised instead of producing a result."""
    return wrap(f"ERROR {name}: {message}")
