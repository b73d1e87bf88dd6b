"""What a check returns: a :class:`CheckResult` of :class:`TensorRecord` s of :class:`~gradcheck.compare.Comparison` s.

Diagnosis, grading, the report and the plots only read these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .compare import Comparison

__all__ = ["PAIRS", "ALL_PAIRS", "NONDETERMINISTIC", "TensorRecord", "CheckResult", "json_shape"]

#: The three-way comparison pairs, in display order.
PAIRS = ("manual-vs-numerical", "tape-vs-numerical", "manual-vs-tape")

#: Every pair a result may hold: :data:`PAIRS`, ``manual-vs-reference`` (a layer of
#: ours given the same parameters, see ``check_layer(reference=...)``) and
#: ``call1-vs-call2`` (two forwards on the same input, see :data:`NONDETERMINISTIC`).
ALL_PAIRS = PAIRS + ("manual-vs-reference", "call1-vs-call2")

#: Start of the note of a result whose forward gave different outputs for the same input.
NONDETERMINISTIC = "non-deterministic forward"


@dataclass
class TensorRecord:
    """All comparisons of one tensor: ``tensor`` is ``"dX"``, ``"d<key>"`` (``"dW"``, ``"d0.W"``), ``"dy_pred"``,
    or ``"Y"``/``"L"`` for the forward values (``kind`` "forward", else "gradient")."""

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
    name, kind : str
        Layer or loss name; ``"layer"`` or ``"loss"``.
    records : list of TensorRecord
        The forward record first (with a twin or reference), then the inputs', then one per parameter.
    rtol, atol, eps, seed, mode, method, input_shape
        As checked (:class:`gradcheck.config.CheckConfig`); a tuple of shapes for several inputs.
    twin, twin_note, notes : str, str, list of str
        Qualified name of the twin used (or None), and why there is no tape column.
    gradients : dict
        ``{"manual"|"tape"|"reference"|"numerical": {tensor: ndarray}}`` (numerical: NaN where not
        estimated, absent for tensors that passed the fast mode's directional test).
    training, other_modes : bool or None, list of CheckResult
        The mode ``forward`` ran in (None for a loss); the other mode's result (``passed`` needs it too).
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

    @property
    def passed(self) -> bool:
        """True when every comparison of every tensor is within tolerance, in every mode checked."""
        return all(r.passed for r in self.records) and all(o.passed for o in self.other_modes)

    @property
    def modes(self) -> list[str]:
        """The training modes checked, this result's first: e.g. ``["training", "eval"]`` (empty for a loss)."""
        return [("training" if r.training else "eval") for r in [self, *self.other_modes] if r.training is not None]

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
        return [{"name": self.name, "tensor": r.tensor, "kind": r.kind, "shape": r.shape, **vars(c),
                 "kinks": len(c.kinks)} for r in self.records for c in r.comparisons]

    def table(self, details: bool = True) -> str:
        """Text table of this result and its other modes (:func:`gradcheck.report.format_table`).

        Imported when called: report imports result, never the reverse at import time.
        """
        from .report import format_table

        return format_table([self, *self.other_modes], details=details)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary (no raw gradient arrays)."""
        return {
            "name": self.name, "kind": self.kind, "passed": self.passed, "rtol": self.rtol, "atol": self.atol,
            "eps": self.eps, "seed": self.seed, "mode": self.mode, "method": self.method, "training": self.training,
            "other_modes": [o.to_dict() for o in self.other_modes], "input_shape": json_shape(self.input_shape),
            "twin": self.twin, "twin_note": self.twin_note, "notes": list(self.notes), "rows": [
                {**row, "shape": list(row["shape"]), "worst_index": list(row["worst_index"]),
                 **{k: None if np.isnan(row[k]) else row[k] for k in ("norm_rel_error", "worst_a", "worst_b")}}
                for row in self.rows]}

    def __str__(self) -> str:
        return self.table()


def json_shape(shape):
    """A shape (or tuple of shapes) as nested lists, for JSON."""
    return [json_shape(s) if isinstance(s, tuple) else int(s) for s in shape]
