"""The one validated configuration of a check: tolerances, step, method, mode, training mode, seed.

:class:`CheckConfig` is built once (by ``check_layer``, ``diagnose_layer`` or the
CLI) and passed down the pipeline instead of long keyword lists; it validates
itself in one place (the checks of :mod:`gradcheck._validation`).
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any

from . import _validation as V
from .compare import ATOL_FLOOR, default_atol
from .errors import UsageError
from .numerical import METHODS, default_eps

__all__ = ["CheckConfig", "MODES", "TRAINING", "training_modes", "mode_word"]

#: Numerical modes: every element, random directional derivatives, sampled elements.
MODES = ("full", "fast", "sample")

#: Values of ``training``: one mode, both, or both when ``forward`` takes ``training``.
TRAINING = (False, True, "both", "auto")


@dataclass(frozen=True)
class CheckConfig:
    """Settings of one check, validated on construction (UsageError naming the allowed values).

    ``rtol``, ``atol``: ``0 < rtol < 1``, ``atol >= 0`` (None: :func:`gradcheck.compare.default_atol`);
    ``eps``: relative step (None: :func:`gradcheck.numerical.default_eps` of ``method``, one of
    :data:`gradcheck.numerical.METHODS`); ``mode``: one of :data:`MODES`; ``seed`` seeds inputs given as
    shapes, the upstream gradient and the plans' draws; ``training``: True, False, "both" or "auto"
    (both when ``forward`` takes ``training``, :func:`training_modes`); ``n_dirs``/``n_samples``:
    directions (fast) or elements (sample) per tensor; ``batched``: the stacked-batch plan (True, False
    or "auto", :func:`gradcheck.numerical.batch_independent`).
    """

    rtol: float = 1e-6
    atol: float | None = None
    eps: float | None = None
    method: str = "central"
    mode: str = "full"
    seed: int = 0
    training: bool | str = "auto"
    n_dirs: int = 2
    n_samples: int = 8
    batched: bool | str = "auto"

    def __post_init__(self):
        rtol, atol = V.check_tolerances(self.rtol, ATOL_FLOOR if self.atol is None else self.atol)
        object.__setattr__(self, "rtol", rtol)
        if self.atol is not None:
            object.__setattr__(self, "atol", atol)
        if self.mode not in MODES:
            raise UsageError(f"mode must be one of {MODES}; got {self.mode!r}.")
        if self.method not in METHODS:
            raise UsageError(f"method must be one of {METHODS}; got {self.method!r}.")
        object.__setattr__(self, "eps", V.check_eps(self.eps, self.method))
        if not any(self.training is t or (isinstance(t, str) and self.training == t) for t in TRAINING):
            raise UsageError(f"training must be True, False, 'both' or 'auto'; got {self.training!r}.")
        for what in ("n_dirs", "n_samples"):
            v = getattr(self, what)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UsageError(f"{what} must be an integer >= 1; got {v!r}.")
        if self.batched not in (True, False, "auto"):
            raise UsageError(f"batched must be True, False or 'auto'; got {self.batched!r}.")

    @property
    def step(self) -> float:
        """The relative step used: ``eps``, or the default of the method (central for the complex step's parameters)."""
        return default_eps("central" if self.method == "complex" else self.method) if self.eps is None else self.eps

    def atol_for(self, Y: Any, G: Any) -> float:
        """``atol``, or the default: the round-off of the finite differences of ``sum(Y * G)``."""
        return self.atol if self.atol is not None else default_atol(Y, G, self.step, self.method)

    def replace(self, **changes: Any) -> CheckConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


def _takes_training(layer: Any) -> bool:
    declared = getattr(layer, "signature", None)  # a sandboxed layer: how the student declared forward
    if isinstance(declared, dict) and "forward_training" in declared:
        return bool(declared["forward_training"])
    try:
        ps = inspect.signature(getattr(layer, "forward", None)).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "training" or p.kind == p.VAR_KEYWORD for p in ps)


def training_modes(layer: Any, training: bool | str) -> list[bool]:
    """The modes a check runs ``forward`` in: ``[training]``, or ``[False, True]`` for "both".

    "auto" is "both" when ``layer.forward`` takes a ``training`` argument (or ``**kwargs``),
    else ``[False]``.
    """
    if training == "auto":
        training = "both" if _takes_training(layer) else False
    return [False, True] if training == "both" else [bool(training)]


def mode_word(training: bool) -> str:
    """``"training"`` or ``"eval"``."""
    return "training" if training else "eval"
