"""The one validated configuration of a check (:class:`CheckConfig`), built once and passed down."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from . import _validation as V
from .compare import ATOL_FLOOR, default_atol
from .errors import UsageError
from .numerical import METHODS, default_eps

__all__ = ["CheckConfig", "MODES", "training_modes", "eval_backward_refused", "mode_word"]

#: Numerical modes: every element, random directional derivatives, sampled elements.
MODES = ("full", "fast", "sample")


@dataclasses.dataclass(frozen=True)
class CheckConfig:
    """Settings of one check, validated on construction (UsageError naming the allowed values).

    ``0 < rtol < 1``; ``atol >= 0`` (None: :func:`gradcheck.compare.default_atol`); ``eps`` relative
    (None: :func:`gradcheck.numerical.default_eps` of ``method``); ``mode`` in :data:`MODES`; ``seed``
    of inputs, upstream gradient and draws; ``training`` True, False, "both" or "auto"
    (:func:`training_modes`); ``n_dirs``/``n_samples`` per tensor; ``batched`` True, False or "auto".
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
        object.__setattr__(self, "atol", None if self.atol is None else atol)
        for what, allowed in (("mode", MODES), ("method", METHODS)):
            if getattr(self, what) not in allowed:
                raise UsageError(f"{what} must be one of {allowed}; got {getattr(self, what)!r}.")
        object.__setattr__(self, "eps", V.check_eps(self.eps, self.method))
        if not any(self.training is t for t in (True, False)) and self.training not in ("both", "auto"):
            raise UsageError(f"training must be True, False, 'both' or 'auto'; got {self.training!r}.")
        for what in ("n_dirs", "n_samples"):
            v = getattr(self, what)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UsageError(f"{what} must be an integer >= 1; got {v!r}.")
        if self.batched not in (True, False, "auto"):
            raise UsageError(f"batched must be True, False or 'auto'; got {self.batched!r}.")

    @property
    def step(self) -> float:
        """The relative step: ``eps``, or the method's default (central for the complex step's parameters)."""
        return default_eps("central" if self.method == "complex" else self.method) if self.eps is None else self.eps

    def atol_for(self, Y: Any, G: Any) -> float:
        """``atol``, or the default: the round-off of the finite differences of ``sum(Y * G)``."""
        return self.atol if self.atol is not None else default_atol(Y, G, self.step, self.method)

    def replace(self, **changes: Any) -> CheckConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


def training_modes(layer: Any, training: bool | str) -> list[bool]:
    """The modes a check runs ``forward`` in: ``[training]``, or ``[False, True]`` for "both"; "auto" is
    "both" when ``layer.forward`` takes ``training`` or ``**kwargs`` (a sandboxed layer's ``signature``). A CS231n
    function pair (``mode_in_keywords``) is read by its student's forward (``student_forward``), as the sandbox's signature reads it
    (:func:`gradcheck._adapters.signature`): its mode is a keyword argument (``bn_param['mode']``), one mode, in
    ``check_layer`` as in ``gradcheck check`` (the adapter's ``training`` keyword is accepted and not used). A layer
    whose backward asserts its switch (``eval_backward`` False: numpy-ml's frozen layer has no backward) is checked
    in training mode alone."""
    if training == "auto":
        declared = getattr(layer, "signature", None)
        if isinstance(declared, dict) and "forward_training" in declared:
            takes = bool(declared["forward_training"])
        else:
            try:
                # a class flag, not an attribute: an adapted layer hands attributes on to the student object,
                # whose own forward(x, train_flg) would hide the adapter's training switch
                from ._adapters import see_through  # a decorator: what it wraps (corpus39 H3)
                pair = getattr(type(layer), "mode_in_keywords", False) is True
                fwd = layer.student_forward if pair else getattr(layer, "forward", None)
                ps = inspect.signature(see_through(fwd)).parameters.values()
            except (TypeError, ValueError):
                ps = ()
            takes = any(p.name == "training" or p.kind == p.VAR_KEYWORD for p in ps)
        training = True if takes and eval_backward_refused(layer) else "both" if takes else False
    return [False, True] if training == "both" else [bool(training)]


def eval_backward_refused(layer: Any) -> bool:
    """Whether ``layer``'s backward asserts its mode switch (numpy-ml's ``assert self.trainable``: a frozen layer has
    no backward), read from a sandboxed layer's ``signature`` (``eval_backward`` False) or the adapter's attribute:
    :func:`training_modes` then checks training mode alone, and ``gradcheck check``'s header says why."""
    declared = getattr(layer, "signature", None)
    return (declared.get("eval_backward") if isinstance(declared, dict) else getattr(layer, "eval_backward", True)) \
        is False


def mode_word(training: bool) -> str:
    """``"training"`` or ``"eval"``."""
    return "training" if training else "eval"
