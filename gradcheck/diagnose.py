r"""Find, locate and explain gradient bugs: structural probes, bug signatures, models, single VJPs.

:func:`diagnose_layer` runs, cheapest first: determinism (a random forward is held by
``fix_mask(True)`` or by rewinding its generators), the probes of :data:`STRUCTURAL` (no finite
differences), the numerical check (:func:`gradcheck.check.check_layer`), the bug signatures of
each failing tensor (detectors returning ``(code, fields)``, worded once in :data:`DIAGNOSES`)
and, for a failing model with a ``layers`` list, its first failing layer. Most signatures build a
candidate gradient (from the numerical one, or from the layer run differently) and ask the one
rule :func:`gradcheck.compare.close` whether the student's gradient is that candidate.
:func:`check_vjp` checks one VJP alone.

A pass is checked again at another point, by one step (:func:`_again_at`), where the first could
hide a bug: at the grader's drawn parameters when one is constant at init, or a square weight equal to its
transpose (the identity: a missing ``.T`` passes there) (:func:`at_drawn_params`),
and at inputs straddling a constant forward compares its input with (``np.clip(X, 0, 6)``:
:func:`at_straddled_inputs`), and with a float constructor argument built at a value where a wrong backward
cancels (p = 0.5: ``1/p == 1/(1-p)``) at another value (:func:`at_other_args`); a failure there is the verdict,
and so is a backward that raises or returns another shape there while forward runs; a point where forward cannot
run gives no verdict, said in a note (:func:`_again_told`, the one reading of every such step).
Before the signatures,
:func:`_precision_inside` tells what makes a float64 forward's differences noise (float32 or
float16 inside, a rounding), and :func:`gradcheck.uncertainty.within_noise` names no bug for a
mismatch within the numerical gradient's own spread.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import functools
import importlib
import inspect
import itertools
import math
import os
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from . import _validation as V
from . import check as check_module
from ._adapters import (
    NIELSEN,
    _along,
    _ones_apart,
    cache_guard,
    forward_in_mode,
    forward_state,
    forward_takes,
    global_names,
    global_states,
    joined_and,
    next_new_layer,
    nielsen_lists,
    overwritten,
    softmax,
)
from ._adapters import _state as _rng_state
from ._adapters import generators as _find_rngs  # the one walk, also run in the sandbox child
from ._switch_reach import file_classes, self_attr
from .check import (
    FAST_SAMPLE_ABOVE,
    LARGE_STEP,
    CheckResult,
    TensorRecord,
    _as_cli_reads,
    _versus_scan,
    check_layer,
    same_backward,
)
from .compare import ATOL_FLOOR, close, compare, mismatched, relative_error, sums_to_one
from .config import CheckConfig, mode_word, training_modes
from .errors import (
    EXIT_STUDENT,
    AgainError,
    GradcheckError,
    GraderError,
    GradientShapeError,
    NotCheckedError,
    ProtocolError,
    StudentCodeError,
    UsageError,
)
from .numerical import (
    DEFAULT_EPS,
    default_eps,
    difference_quotient,
    kernel,
    numerical_gradient,
    numerical_jacobian,
    probe_rng,
    scalar_objective,
    upstream_draw,
)
from .numerical import directional_derivatives as _directional
from .numerical import directional_kinks as _directional_kinks
from .numerical import layer_numerical_gradients as _numerical
from .result import LAYOUT_PAIR
from .sources import (
    CACHE_REWRITTEN,
    SAME_BACKWARD_CHECKED,
    SAME_IN_BOTH_MODES,
    SAME_Y_EVAL_ONLY,
    SAME_Y_OTHER_BACKWARD,
    SYMMETRIC_ARGS,
    Call,
    Wrapper,
    args_line,
    backward_twice,
    built_with,
    cache_write_verdict,
    computes_no_dx,
    each_keyword_value,
    each_other_arg,
    grad_slots,
    inplace_asked,
    inputs_hold_weights,
    keyword_values,
    layer_branch,
    layout_copy,
    not_rechecked_line,
    other_point_stop,
    pair_training,
    stored_inputs_refusal,
    symmetric_args,
    training_differs,
    unknown_args,
    values_merged,
)
from .uncertainty import within_noise

__all__ = ["Finding", "Probe", "Diagnosis", "diagnose_layer", "check_vjp", "name_signature", "layer_signature",
           "name_graded", "name_log_eps", "is_bias_gradient",
           "name_loss_gradient", "layout_finding", "name_batch_reduction", "name_hinge_count", "name_huber_clip", "name_huber_branch", "name_focal_factor",
           "name_dice_quotient", "name_power_factor", "name_swaps", "close", "held_forward", "STRUCTURAL", "SIGNATURES", "DIAGNOSES", "HELD",
           "RANDOM_TWIN", "RANDOM_REFERENCE", "kept_scale", "rounding_rtol"]

#: Names of the structural probes, in the order they run.
STRUCTURAL = ("deterministic forward", "input left unchanged", "gradient shapes and dtypes",
              "finite values", "backward linear in dY", "second backward identical",
              "grads written by backward", "cache of the last forward",
              "output shape stable under perturbation")


def _zero_weights(layer: Any) -> str:
    """The names of a layer's parameters when it has a weight matrix (2 axes or more) and every parameter is all
    zero (``self.W = np.zeros(...)`` left uninitialised: Y = 0 for any input), e.g. ``"W, b"``; '' otherwise."""
    try:
        params = V.layer_params(layer, type(layer).__name__)
    except Exception:  # noqa: BLE001 - no params to read
        return ""
    params = params or seed_weights(layer)  # the seed protocol's self.W (no gradient), all zero: the same
    arrays = [v for v in params.values() if isinstance(v, np.ndarray)]
    if not arrays or not any(v.ndim >= 2 for v in arrays) or any(np.any(v) for v in arrays):
        return ""
    return ", ".join(params)


class Record(NamedTuple):
    """One row of :data:`DIAGNOSES`: ``message`` and ``hint`` are :meth:`str.format` templates."""

    name: str
    message: str
    hint: str = ""
    lesson: str = ""


_LIN, _ACT, _NUM, _NORM, _CONV, _DROP = (
    "01-linear-layer.md", "02-activations.md", "01b-numerical-gradients.md", "22-batchnorm.md",
    "20-conv2d.md", "24-dropout.md")
_CACHE = ("a cache set only on the first call (e.g. `if not hasattr(self, 'X'): self.X = X`), a "
          "class attribute or a global keeps an earlier input; overwrite the cache on every "
          "forward (self.X = X), stored on self")
#: the float32 of Deep Learning from Scratch 2, whose layers build their arrays with ``dtype='f'`` (tester25s M4)
_DLFS_F = ("; an array made with dtype='f' (Deep Learning from Scratch 2's np.empty(..., dtype='f'), "
           "np.zeros_like(x, dtype='f')) is float32: make it dtype='d' (or leave out the dtype) to check it")
def _dlfs_f(dtype, layer: Any = None) -> str:
    """:data:`_DLFS_F` for a float32 ``dtype`` when the checked code makes arrays with ``dtype='f'`` (``layer``'s
    protocol's ``dtype_f``, :func:`gradcheck._adapters.uses_dtype_f`), else "": a plain ``astype(np.float32)`` is not
    told of the book (review26g L2), nor a float16 of dtype='f', nor a layer not given."""
    if np.dtype(dtype) != np.float32 or layer is None:
        return ""
    if (proto := _protocol(layer)) is not None:
        return _DLFS_F if proto.get("dtype_f") else ""
    from ._adapters import uses_dtype_f

    return _DLFS_F if uses_dtype_f(getattr(layer, "obj", layer)) else ""


_LOST = ("(precision lost: {dtype} keeps about {digits} significant digits (eps {eps}), so the gradient check to "
         "1e-6 and training lose accuracy; compute in float64 and do not cast, e.g. no astype(np.{dtype}))")


def _precision(dtype) -> dict[str, Any]:
    """The fields of :data:`_LOST` for ``dtype``: its dtype, significant digits and eps (float32: 7, 1.2e-07;
    float16: 3, 9.8e-04), so a float16 is not told float32's figures."""
    dt = np.dtype(dtype)
    eps = float(np.finfo(dt).eps) if dt.kind in "fc" else float(np.finfo(np.float32).eps)
    return {"dtype": dt.name, "digits": round(-math.log10(eps)), "eps": f"{eps:.1e}"}

#: Every diagnosis gradcheck names, by code: its text is written here once (fields: the detectors).
#: Why dropout scaled at test time is wrong (``{c}`` its eval scale, ``{inv}`` = 1/c), and the fix: said by the
#: ``classic-dropout`` finding of ``gradcheck check`` and by the grader's eval forward (verify38 F5).
INVERTED_DROPOUT = ("dropout as the course, PyTorch, Keras and CS231n define it is inverted: scale the kept entries by "
                    "1 / (the keep probability) in training (here 1/{c:.4g} = {inv:.4g}) and leave the eval forward "
                    "the identity, Y = X, so that the network is used at test time without the layer's scale")
CLASSIC_DROPOUT_FIX = ("move the scale from the eval forward to the training forward (and its backward): mask / {c:.4g}, "
                       "the keep probability (mask / (1 - p) for a drop probability p, PyTorch's; mask / p for a keep "
                       "probability p, CS231n's)")

DIAGNOSES: dict[str, Record] = {
    # the structural probes and what stopped the check
    "non-deterministic": Record(
        "random forward", "the forward is non-deterministic: two calls with the same input differ "
        "by up to {diff:.3g}, so finite differences are meaningless (a dropout mask drawn afresh "
        "per call?)", "{advice}", _DROP),
    "forward-changes-state": Record(
        "forward changes the layer's state", "{call} changes the layer's state: "
        "{seen}, yet a copy of the layer taken "
        "before the first call gives that call's output again, so the forward is not random: each "
        "call updates state{attrs} that the next call reads{why}", "{fix}", _NORM),
    "state-held": Record(
        "state put back", "{call} updates {attrs} and then reads it in the same call (a running mean updated and "
        "used); a copy taken before the first call gives that call's output again, so the layer was checked on "
        "that state: {attrs} put back to {its} value before the first call before every forward, so each "
        "evaluation differentiates this call's output as a function of its input"),
    "running-stats": Record(  # gradcheck._running_stats: with --reference, after training forwards (newuser35 H2)
        "running statistics differ from the reference", "{message}", lesson=_NORM),
    "random-mean": Record(  # random_mean_finding: with --reference, a random training forward (newuser37 F7)
        "a random forward's mean differs from the reference", "{message}", lesson=_DROP),
    "random-scale": Record(  # scale_difference: the kept entries' scale (redteam39 F3)
        "a random forward's kept scale differs from the reference", "{message}", lesson=_DROP),
    "own-mean": Record(  # own_eval_mean_finding: without --reference (bugs43 H1, H2)
        "a random forward's mean differs from its own eval forward", "{message}", lesson=_DROP),
    "mini-batch-step": Record(  # gradcheck._nielsen_step: Nielsen's update_mini_batch after its gradients passed
        "update_mini_batch's step is wrong", "{message}"),
    "fixed-mask": Record(  # _random_reference: a training forward the same at every call beside a random reference
        "the same mask at every call", "{owner}'s training forward gives the same output at every call, while the "
        "reference's ({ref}) draws a new mask at each call, as dropout does: {owner}'s mask is not random (a generator "
        "seeded anew inside forward, np.random.default_rng(seed) or np.random.seed(seed) there?), so the network "
        "drops the same units at every step; the reference's own mask is not {owner}'s, so it is not compared",
        "make the generator once (self.rng = np.random.default_rng(seed) in __init__) and draw from it in forward "
        "(self.rng.random(X.shape))", _DROP),
    "held-mask": Record("mask held", "{random}the mask was held fixed with fix_mask(True) on "
                        "{fixed} for the check"),
    "rewound-rng": Record("generator rewound", "{random}its random generator ({what}) was rewound "
                          "before every forward, so each call drew the same mask"),
    "classic-dropout": Record(  # _classic_dropout: scaled at test time, not at training time (fix38a)
        "classic (non-inverted) dropout", "{owner} is classic dropout, scaled at test time: in training it keeps "
        "{kept:.0%} of the entries unscaled (Y = X * mask), in eval mode it scales every entry by {c:.4g} (Y = {c:.4g} "
        "X). Its gradients agree with its forward in both modes, but " + INVERTED_DROPOUT, CLASSIC_DROPOUT_FIX, _DROP),
    "dropout-scaled-twice": Record(  # _classic_dropout: inverted in training AND scaled at test time (bugs43 H1)
        "inverted dropout scaled again at test time", "{owner} scales twice: in training it keeps {kept:.0%} of the "
        "entries scaled by {s:.4g} (inverted dropout: E[Y] = X), in eval mode it scales every entry by {c:.4g} (Y = "
        "{c:.4g} X), so the network sees {c:.4g} times at test time what it saw in training. Its gradients agree "
        "with its forward in both modes, but inverted dropout's eval forward is the identity, Y = X",
        "return X unchanged in eval mode (and dY in its backward): the 1/(1 - p) of training already keeps E[Y] = X",
        _DROP),
    "all-dropped": Record(
        "every entry dropped", "{mode}the forward does not depend on its input{how}: a mask that "
        "drops every entry gives dX = 0 whatever backward does, so a comparison of zeros is no check (a "
        "backward that returns anything else still FAILs)",
        "check with a mask that keeps some entries (a drop rate below 1, or a keep probability above 0: "
        "CS231n's p is the probability of keeping a unit, others' p or rate that of dropping it), or check on "
        "a larger input", _DROP),
    "zero-weights": Record(
        "weights all zero", "{mode}the forward does not depend on its input: the weights {names} are all "
        "zero (as the constructor left them), so Y = 0 for any input and dX = 0 whatever backward does: a comparison "
        "of zeros is no check",
        "initialise the weights as the assignment says (small random values, e.g. "
        "np.random.default_rng(0).standard_normal(shape) * 0.01), then check again", _LIN),
    "one-sample-norm": Record(
        "one sample", "{mode}the forward does not depend on its input: with one sample in the batch, "
        "x - mean = 0, so a batch normalisation's (or centring's) training output is the same for any input (its "
        "shift beta, or 0 without one), dX = 0 whatever "
        "backward does, and a comparison of zeros is no check",
        "check with a batch of at least 2 samples (--input-shape N,... with N >= 2)", _NORM),
    "other-function": Record(
        "a different function", "{t} differs from the {other}'s forward (max abs err {err:.3g}) "
        "while every gradient agrees with central differences of the layer's own forward: the "
        "two compute different functions, so no gradient compared with the {other} can agree",
        "check the settings the {other} was built with (its constructor takes {params}; they are "
        "read from --init and the layer's attributes of the same names) or look for a forward "
        "bug"),
    "random-eval": Record(
        "random in eval mode", "forward is random in {off} mode: it draws a new mask at inference, where a "
        "dropout is the identity (Y = X){ref}", "in eval mode return the input unchanged (an inverted dropout "
        "scales only while training), e.g. `if not training: self.output = inputs.copy(); return`; the gradient "
        "check itself held the draws fixed, so it tests backward against this forward as written", _DROP),
    "inverted-switch": Record(
        "switch inverted", "forward is random in {off} mode and deterministic in {on} mode{identity}: a dropout "
        "draws its mask in training and is the identity in eval, so the switch looks inverted (e.g. `if not "
        "training:` where `if training:` is due){ref}", "draw the mask only when forward is told to train", _DROP),
    "forward-factor": Record(
        "a factor in forward", "{ts} {agree} with the reference's gradient{s} but not with central differences of "
        "this forward, which is {c:.6g} times the reference's: the factor is forward's, not backward's{drop}",
        "{fix}"),
    "numpy-patched": Record(
        "numpy replaced", "{returns}, and the checked code replaced numpy's own {names} (with {by}'s), which give "
        "float32 wherever forward or backward calls them (the float32 comes from the replaced functions, not "
        "necessarily from the layer), and a check to 1e-6 needs float64 (float32 keeps about {digits} significant "
        "digits), so the layer is not checked", "{fix}", _NUM),
    "float32": Record("precision lost", "{what} {dtype} for {given} " + _LOST + "{dlfs}", lesson=_NUM),
    # float32 code checked on its float64 copy (gradcheck._float64_copy; tester25s, session 26)
    "float64-copy": Record(
        "checked in float64", "{computes}: central differences of a {dtype} {what} are "
        "noise far above the 1e-6 tolerance ({dtype} keeps about {digits} significant digits), so, as "
        "torch.autograd.gradcheck asks for double precision, {cls} was checked on a copy of its files with those "
        "dtypes written float64 (your files and layer are untouched). This checks its formulas (forward and "
        "backward as written); it does not check what {dtype} itself does in training: its round-off (eps {eps}), "
        "overflow or underflow that float64 does not have, {ints}{own}"),
    "copy-failed": Record(
        "edited copy failed", "{what} could not be checked: its copy ({where}) raised {why}, so the verdict is the "
        "original code's"),
    # its own float32 backward against the copy's, same inputs and parameters (redteam28 F5: `if W.itemsize == 4`)
    "float32-own": Record(
        "the float32 code computes another gradient", "{cls}'s own {dtype} code gives {t} {how} its float64 copy's on "
        "the same inputs and parameters (largest relative difference {rel:.2g}, far above {dtype}'s round-off: "
        "tolerance {tol:.1e}), and the copy's {t} matches central differences: the {dtype} code computes something "
        "else, e.g. a branch on the dtype (x.itemsize == 4, x.dtype == np.float32, np.finfo(x.dtype))",
        "compute the same formula whatever the dtype", _NUM),
    # its own float32 forward against the copy's (review29 F32_FWD_DIFFERS: `if W.itemsize == 4: out *= 1.001`)
    "float32-forward": Record(
        "the float32 code computes another forward", "{cls}'s own {dtype} forward gives {out} {how} its float64 copy's "
        "on the same inputs and parameters, from the same random draws (largest relative difference {rel:.2g}, "
        "above {dtype}'s round-off: tolerance {tol:.1e}): the copy, whose gradients passed, does not stand for the "
        "{dtype} code, so its PASS is not {cls}'s, and the {dtype} backward was not compared with the copy's; the "
        "{dtype} code computes something else, e.g. a branch on the dtype (x.itemsize == 4, x.dtype == np.float32, "
        "np.finfo(x.dtype))", "compute the same formula whatever the dtype", _NUM),
    # a loss given float64 whose source casts to float32 (session 30): its L's differences are that noise
    "float32-loss": Record(
        "precision lost", "{cls} was given float64 {pred}, and its source makes {dtype} at {where}: the central "
        "differences of its L are {dtype} noise far above the 1e-6 tolerance ({dtype} keeps about {digits} "
        "significant digits), so no bug in the gradient is named or ruled out", "if {cls} is meant to run in "
        "{dtype}, check it with --dtype {dtype} (its {dtype} code is then checked on a float64 copy of its files, as "
        "a layer's); else compute in float64 and do not cast", _NUM),
    "float32-not-compared": Record(
        "float32 code not compared", "{cls} passed on a float64 copy of its files, but its own {dtype} code could "
        "not be compared with that copy: {why}; the copy's PASS is not {cls}'s, so it is not checked", "{fix}", _NUM),
    "float32-kept": Record(
        "precision lost", "{cls}'s forward returns {dtype} even on a copy of its files with its declared {dtype} "
        "dtypes written float64 ({where}): the {dtype} comes from somewhere gradcheck does not rewrite (a cast "
        "in another file, a library, data loaded as {dtype}), and central differences of a {dtype} forward are "
        "noise far above the 1e-6 tolerance, so it is not checked", "make forward compute in float64 (np.float64, "
        "the default; dtype='d') to check it", _NUM),
    "float32-weight": Record(
        "precision lost", "backward returns {t} as {dtype}, the dtype of its weight {w}, which was created as "
        "{dtype} (the input is float64) " + _LOST.replace("compute in float64 and do not cast, e.g. no "
                                                          "astype(np.{dtype})", "create {w} as float64 and do not cast its gradient"),
        lesson=_NUM),
    "float32-values": Record("values rounded to float32", "forward returns float64 values rounded to "
                             "float32 for a float64 input " + _LOST.format(**_precision(np.float32)),
                             lesson=_NUM),
    "float32-inside": Record(
        "float32 inside forward", "forward loses precision inside for a float64 input: moving the "
        "inputs{what} by a quarter of float32's spacing (no float32 number changes) moves {k} of "
        "{n} entries of {t} otherwise than a step 8192 times larger does ({t}{at} moved {ratio:.3g} "
        "times as far as that step predicts), so part of forward runs in float32 (a ufunc with "
        "dtype=np.float32 such as np.exp(x, dtype=np.float32), an astype(np.float32), a float32 "
        "array mixed in). Central differences of Y are then noise at float32's spacing (about 6e-8 "
        "relative, divided by 2h), so {verdict}", "compute every step of forward in float64 (no "
        "dtype=np.float32, no astype(np.float32), no astype('f')), then check again", _NUM),
    "float32-backward": Record(
        "float32 inside backward", "an array backward computes with is {dtype} ({where}): its round-off (about "
        "{unit:.0e} relative) reaches the gradients, whose largest relative error against the float64 check is "
        "{err:.2g} in {tensors}, at {dtype}'s precision where a float64 backward stays near 1e-10; whether that "
        "passes rtol=1e-6 depends on the draw (the seed), so the check fails it on every seed", "compute every "
        "array backward reads in float64 (no astype(np.{dtype}) of a cache), then check again", _NUM),
    "float16-inside": Record(
        "float16 inside forward", "forward casts its inputs{what} to float16 for a float64 input: "
        "rounded to float16 and moved by a quarter or an eighth of float16's spacing, they move no "
        "float16 number, and central differences of Y at 2048 float32 spacings and at twice that "
        "disagree in {coarse} of {n} entries. float16 keeps about 3 significant digits "
        "(spacing about 1e-3 relative), far coarser than the check's step (about 6e-6), so central "
        "differences of Y are 0 at most entries and spikes where a float16 number changes: {verdict}",
        "compute forward in float64 (no astype(np.float16), no dtype=np.float16, no np.half), then "
        "check again", _NUM),
    "piecewise-constant": Record(
        "piecewise-constant forward", "forward rounds its output to a grid, not float32's: moving the "
        "inputs{what} by 2048 float32 spacings (about 1e-4 of their size) and by twice that gives "
        "central differences of Y that disagree in {coarse} of {n} entries: Y jumps by whole steps of "
        "a grid at one step and not at the other (a float64 or float32 forward is smooth there), so "
        "forward is piecewise constant at the check's step (np.round, np.floor, np.ceil, "
        "np.rint, a cast to an integer type, or a float16 cast of a computed value): its derivative is "
        "0 between the grid's steps and undefined at them, and central differences are 0 or spikes: "
        "{verdict}", "check the function without the rounding (the one backward differentiates: a "
        "straight-through estimator's backward is that function's), or remove the rounding from "
        "forward, then check again", _NUM),
    "input-modified": Record("input modified", "forward modifies its input {names} in place (the "
                             "caller's array changes)", "compute into a new array instead"),
    "non-finite": Record("NaN or inf", "{ts} {verb} NaN or infinity (division by zero, log of 0 or "
                         "exp overflow?)", lesson=_NUM),
    "never-written": Record("grads never written", "{ts} never written: backward leaves {slot} "
                            "as it was", "assign {slot} = ... in backward"),
    "not-linear": Record("not linear in dY", "backward is not linear in dY: {how}",
                         lesson="00-chain-rule.md"),
    "penalty-checked": Record(
        "penalty's gradient", "{t} has a term that does not multiply dY, backward(0)'s {t}: it is the gradient of "
        "the penalty the layer states ({names} = {l1:g}, {l2:g}: l1*sum|{w}| + l2*sum({w}**2), gradient "
        "l1*sign({w}) + 2*l2*{w}), as it should be; the rest of {t}, backward(dY) - backward(0), was checked "
        "against central differences of forward"),
    "penalty-l2-half": Record(
        "L2 gradient halved", "{t}'s term that does not multiply dY, backward(0)'s {t}, is l2*{w}: half the gradient "
        "of the L2 penalty the layer states ({names} = {l1:g}, {l2:g}): the derivative of l2*sum({w}**2) is "
        "2*l2*{w}", "add 2 * l2 * {w} (Neural Networks from Scratch: self.{t} += 2 * self.{l2name} * self.{w})", _LIN),
    "penalty-l1-sign": Record(
        "L1 gradient sign", "{t}'s term that does not multiply dY, backward(0)'s {t}: its L1 part {how}, but the "
        "gradient of l1*sum|{w}| (the penalty the layer states, {names} = {l1:g}, {l2:g}) is +l1 where {w} > 0 "
        "and -l1 where {w} < 0, l1*sign({w})", "dL1 = np.ones_like(W); dL1[W < 0] = -1; "
        "add l1 * dL1", _LIN),
    "penalty-wrong": Record(
        "penalty gradient wrong", "{t}'s term that does not multiply dY, backward(0)'s {t}, differs (by up to "
        "{err:.3g}) from the gradient of the penalty the layer states ({names} = {l1:g}, {l2:g}: "
        "l1*sign({w}) + 2*l2*{w})", "add exactly l1*sign(W) + 2*l2*W, the gradient of l1*sum|W| + l2*sum(W**2)",
        _LIN),
    "penalty-unknown": Record(
        "penalty not checked", "{t} has a term that does not multiply dY, backward(0)'s {t} = {fit} with P = {w}: "
        "{match}, the gradient of a penalty (L2 weight decay, L1) under a usual convention ({conv}); which penalty "
        "the loss adds gradcheck cannot know, so that term of {t} is NOT CHECKED; the rest of {t}, backward(dY) - "
        "backward(0), was checked against central differences of forward", "to check the whole of {t}, set {attrs} "
        "to 0 (the attribute, or its --init argument), or state the penalty as Neural Networks from Scratch does "
        "(weight_regularizer_l1, weight_regularizer_l2 attributes)"),
    "loss-penalty-convention": Record(
        "penalty gradient of another convention", "{t}'s penalty term is not the gradient of the penalty the loss "
        "adds: with {n} = 0 backward's {t} plus {grad} is the gradient of the loss at {n} = {v:g} (central "
        "differences), so the loss adds {form}, whose gradient is {grad}, and backward adds {adds} ({n} = {v:g}{m}, "
        "--init)", "{fix}; the value and the gradient must use one convention ({example})", _LIN),
    "penalty-bug": Record(
        "dY-free term", "{t} has a term that does not multiply dY, backward(0)'s {t} = {fit}, and no number the "
        "layer states as a regulariser's strength explains it ({stated}; a strength is a number named like reg, "
        "l1, l2, lambda, weight_decay or alpha): a penalty's gradient would be s*{w} or 2*s*{w} (L2: 0.5*s*sum({w}**2) "
        "or s*sum({w}**2)) or s*sign({w}) (L1) for a strength s the layer holds. The gradient of forward has no "
        "such term", "remove {fit} from {t} (it is not part of the chain rule, dL/d{w} is built from dY alone); a "
        "regulariser's strength belongs on the layer (an attribute or constructor argument)", _LIN),
    "stale-gradient": Record(
        "gradient from an earlier call", "{t} does not change with dY: backward(dY), backward({k} dY) and "
        "backward(0) all give the same nonzero {t}, so it was not computed from this call's dY (a gradient "
        "kept from an earlier call, e.g. computed only `if self.dW is None`, or a constant)",
        "compute {t} from dY and the cached input in every backward call", "00-chain-rule.md"),
    "grads-left": Record(
        "gradient left at dY = 0", "{t} is left from the previous call when dY is 0: backward(0) gives the {t} of the "
        "backward before it, so backward does not write {t} for a dY of zeros (e.g. a loop over dY's entries that skips "
        "the zero ones)", "assign {t} in every backward call, zeros for a dY of zeros", "00-chain-rule.md"),
    "accumulated": Record(
        "accumulated", "gradients accumulated across calls instead of overwritten: {ts} {are} "
        "accumulated across backward calls ({keys} += ...: every backward adds to {it}, and a "
        "backward with dY = 0 left {it} unchanged instead of zero)",
        "assign {slot} = ... in backward"),
    "second-backward": Record("second backward differs", "a second backward on the same forward "
                              "gives another {t}: backward changes its own cache or the "
                              "parameters"),
    # session 26 (tester25s: Deep Learning from Scratch 2's TimeSoftmaxWithLoss, dx = ys; dx[...] -= 1): not refused
    "cache-rewritten": Record("backward writes into its cache", CACHE_REWRITTEN),  # also check_layer's note
    "dx-after-step": Record(
        "dX after the step", "backward computes {t} with the weights after its own gradient-descent step: "
        "given a learning rate of 0 it returns another (nonzero) {t} than given {rate}, and a correct {t} does "
        "not depend on the rate (so {t} is not linear in dY either: the step is made of dY)",
        "compute {t} from the weights before updating them (dX = dY @ W.T first, then W -= lr * dW)", _LIN),
    "random-backward": Record(
        "random backward", "backward draws new random numbers: it moves the random generator "
        "({what}), and a second backward on the same forward gives another {t}, so {t} is computed with "
        "fresh draws (a new dropout mask?), not with the ones forward used", "draw the mask once, in "
        "forward, keep it (self.mask = ...), and multiply by that same self.mask in backward", _DROP),
    "stale-output": Record(
        "stale output", "forward returns what an earlier call computed: after a forward on other "
        "data, forward(X) gives another Y than on a fresh copy of the layer (a value kept from the "
        "first call, e.g. `if not hasattr(self, ...)`), so the layer ignores new inputs",
        "compute the output from this call's input every time"),
    "shared-cache": Record(
        "shared cache", "backward uses a cache overwritten by a later forward of another instance "
        "({ts} change when a second layer of the same class runs forward in between): the cache is "
        "shared, e.g. a class attribute or a global", "store it on self in forward"),
    "stale-cache": Record("stale cache", "backward {how}", _CACHE),
    "memory-layout": Record(  # layout_finding (verify40 H1): check's rerun at Fortran-ordered or strided inputs and dY
        "numbers change with the memory layout", "{ts} change{s} when {who} hold the same values in "
        "Fortran order or as a strided view (what a transpose, a column slice or a slice with a step of the previous "
        "layer's output hands on): the code reads memory as if it were C-contiguous", "take the strides from the array (x.strides, not from its shape) for "
        "np.lib.stride_tricks.as_strided, read no buffer (.data, np.frombuffer, tobytes), or call "
        "np.ascontiguousarray(x) first"),
    "wrong-axis-size": Record(  # at_other_batch (verify43c F11: named Bessel's N-1 or constant statistics there)
        "a size read from the other axis", "{t} {verb} right where {x} has the shape {s0}, whose axis {a} has the size of "
        "another ({n}), and wrong with {n1} along axis {a} ({s1}): backward reads a size (or sums, averages) along one "
        "axis where the other is meant (N = dY.shape[1] for the number of rows, D = dY.shape[0] for the number of "
        "columns), and the two are equal at the drawn shape",
        "take each count from the axis it counts (the rows of an (N, D) array: X.shape[0]; its columns: X.shape[1])"),
    "size-kept": Record(  # at_other_batch (verify44b F7: a batch norm keeping its first call's N)
        "a size kept from an earlier call", "{t} {verb} right where {x} has the shape {s0}, the shape of the first "
        "call, and wrong at {s1} and at {s2}, where its axes are of one size again (so it is no size read from the "
        "other axis): backward uses a size, a count or a statistic kept from an earlier call (e.g. `if not "
        "hasattr(self, 'N'): self.N = X.shape[0]`)", "read each size from this call's arrays (N = X.shape[0] in every "
        "forward, or from dY in backward), never only on the first call"),
    "reused-sublayer": Record(  # _reused_sublayer (newuser38 F8)
        "one sub-layer used twice", "{what}: one layer object keeps one cache, so its second call overwrites what "
        "the first call's backward needs, and backward reads the last call's cache at every use",
        "give each use its own object (e.g. self.act1 = Tanh() and self.act2 = Tanh()), or keep a cache per call "
        "that backward takes back in reverse order", "07-sequential.md"),
    "weight-or-constant": Record(
        "weight or constant", "forward reads {ws} and the output moves with {it}, but backward sets no gradient for "
        "{it} beside the weights with theirs: gradcheck {say}", "decide which {ws} {verb}; the check cannot pass "
        "until then (exit 3, NOT CHECKED as a whole)"),
    "sample-missed": Record(
        "wrong outside the sampled entries", "the sampled entries of {t} match, but directional "
        "derivatives of the whole of {t} at the check's input disagree with backward's (one along "
        "all gradients, then one along {t} alone): entries the sample left out are wrong",
        "run --mode full (mode='full' in Python) to see which entries", _NUM),
    "unstable-output": Record("unstable output", "the output changes shape or dtype under a small "
                              "perturbation of the input ({was} -> {now})"),
    "student-code": Record("the code raised", "{error}"),
    "first-failing-layer": Record("first failing layer", "the first layer whose own check fails is "
                                  "layers[{i}] ({cls}): {why}", lesson="07-sequential.md"),
    "sublayers-repeated": Record(
        "first failing layer: later layers met before", "layers[{i}] and after are layers met before in the model's "
        "layers (the same objects, each checked where it was first met) or the model itself: not checked or run "
        "again, so no layer of the model fails its own check", lesson="07-sequential.md"),
    "sublayers-capped": Record(
        "first failing layer not searched further", "no layer among the first {n} layers of the model fails its own "
        "check; the search stopped there (layers[{i}] and after are not checked alone)",
        "check a later layer alone (gradcheck check FILE::ITS_CLASS)", lesson="07-sequential.md"),
    "sublayer-not-checked": Record(
        "a layer not checkable", "layers[{i}] ({cls}) cannot be checked inside the model, as it cannot alone: {why}; "
        "so the model is not checked either{how}", lesson="07-sequential.md"),
    "numerical-noise": Record(
        "numerical gradient unreliable", "{t} differs from the numerical gradient by at most "
        "{err:.3g}, within the numerical estimate's own uncertainty here (the same differences with "
        "the step doubled, halved or quartered move by {unc:.3g} there): at this input the numerical gradient "
        "cannot tell a bug from its own noise, so no bug is named", "for a reliable estimate use {remedy}"
        "an input where forward keeps its digits (no large offset cancelled inside); where the true "
        "gradient is 0, an --atol above the noise decides", _NUM),
    "large-step": Record(
        "eps too large for the numerical gradient", "{t} differs from the numerical gradient by at most {err:.3g}, "
        "its failing entries by no more than the truncation error of {method} differences at eps={eps:g} (the same "
        "differences with the step doubled, halved or quartered move by {unc:.3g} at the worst of them): eps={eps:g} is {ratio:.3g} times the step that suits float64 "
        "({default:.3g}), so at this step the numerical gradient cannot tell a bug from its own truncation error, "
        "and no bug is named", "drop --eps (eps=None in Python) to check at the default step", _NUM),
    "log-eps": Record(
        "small constant inside a log", "{t} differs from the numerical gradient by a relative {rel:.2g} "
        "at most, exactly as the gradient of log(y + c) with c = {c:.2g} differs from that of log(y), "
        "y = {y}: forward adds a small constant inside a log (e.g. np.log(y + 1e-7)) while backward is "
        "the gradient of log(y); the two differ by about c/y per entry. This is expected from such an "
        "eps, not a bug in backward", "{advice}", _NUM),
    "log-eps-removed": Record(
        "small constant inside a log", "{t} differ from the numerical gradient only by the constant {c} that forward "
        "adds inside np.log (relative error {rel:.2g} at most): with it removed, the numerical gradient of every "
        "tensor matches backward's, so backward is the exact derivative of the loss without the eps (the two differ "
        "by about eps/y per probability y). This is expected from such an eps, not a bug in backward",
        "{advice}", _NUM),
    "log-eps-read-as-0": Record(
        "small constant inside a log, read as 0", "backward is the derivative of the loss without the {c} that forward "
        "adds inside a log ({where}; Deep Learning from Scratch's cross_entropy_error, whose backward y - t is the "
        "gradient of log(y)): the table compares backward with the central differences of forward with the {c} "
        "removed; as written the difference is at most a relative {rel:.1e} here (about eps/y per probability y, "
        "computed at this check's y), which is no bug"),
    "large-eps": Record(
        "eps too large", "{t} differs from the derivative of the loss only by the eps {c} ({said}): the loss's copy "
        "with its eps removed passes (relative error {ef:.1e}), but {c} is larger than the check's tolerance (rtol {rtol:g}), so it is not "
        "read as a float guard's 0: it moves the gradient by up to a relative {e:.2g} here (about eps/y per value y, "
        "beyond the tolerance even at values of order 1){differ}", "use the same eps in forward and backward, or a "
        "guard of at most the tolerance (1e-7 is usual; np.clip(p, 1e-7, 1 - 1e-7) in forward and backward alike)",
        _NUM),
    "target-gradient": Record(
        "gradient for the target", "{t} is not dL/d{pred}: backward returns dL/d{target}, the gradient for the "
        "target (it matches the central differences of L with respect to {target}, relative error {rel:.1e}): "
        "backward differentiates the wrong argument", "differentiate L with respect to {pred}, the prediction"),
    # bug signatures
    "transposed": Record("transposed gradient", "{t} is transposed: {how}", "{fix}", _LIN),
    "transposed-square": Record(
        "transposed gradient (square)", "{t} is transposed: its transpose is the correct gradient (the shape {shape} "
        "is square, so only the values show it)", "{fix}", _LIN),
    "flipped-kernel": Record(
        "flipped kernel", "{t} is computed with the kernel flipped in its spatial axes{which}: the "
        "forward is a cross-correlation, not a convolution", "{fix}", _CONV),
    "permuted": Record("right values, wrong places", "{t} has the right values in the wrong "
                       "places{how}", lesson=_CONV),
    "wrong-sign": Record("wrong sign", "{t} has the wrong sign: the opposite sign of the correct "
                         "gradient everywhere (a minus sign too many or too few)"),
    "softmax-ce-sign": Record(
        "softmax cross-entropy sign flipped", "{t} has the wrong sign: it is {got} where the "
        "gradient of the softmax cross-entropy -log p[y] is {want} (the minus of -log makes the "
        "true class's entry p[y] - 1 negative: raising its score lowers the loss)",
        "compute {t} = p.copy(); {t}[np.arange(N), y] -= 1{fix}", "03-softmax-cross-entropy.md"),
    "bias-wrong-axis": Record(
        "summed over the wrong axis", "{t} is dY summed over {got} (keeping axis {keep}), where a bias's gradient "
        "sums dY over every axis but its own, axis {own}: {due}; the shapes agree only because those axes have the "
        "same size", "{t} = dY.sum({due})", _LIN),
    "bias-sum-all": Record(
        "summed over every axis", "{t} holds one number in every entry, dY summed over every axis ({v:.6g}), where "
        "a bias's gradient keeps its own axis, axis {own}, and sums over the others: {due}", "{t} = dY.sum({due}) "
        "(not dY.sum() or np.sum(dY) broadcast)", _LIN),
    "bias-mean": Record("mean, not sum", "{t} is the mean over {over}, not the sum: it is "
                        "{count} times too small ({words})",
                        "use dY.sum(...) instead of dY.mean(...)", _LIN),
    "factor-batch": Record("missing 1/batch", "{t} is {count} times too large ({words}): a 1/batch "
                           "is missing (a sum where a mean is due)", lesson=_LIN),
    "factor-inverse-batch": Record(
        "extra 1/batch", "{t} is {count} times too small ({words}): an extra 1/batch (if the loss "
        "already averages, its 1/N is inside dY: do not divide again)", lesson=_LIN),
    "flat-forward": Record(
        "forward piecewise constant", "{t} should be 0: forward's output does not move when {x} moves by a small "
        "step (the numerical {t} is 0 in every entry), though it does for a step of 0.5: forward is piecewise "
        "constant in {x} (np.round, np.floor, astype(int), a comparison), so the true gradient of {x} is 0",
        "return np.zeros_like({x}) for {t}; if {x} holds ids or counts, pass them as integers (--indices) and return "
        "None", _NUM),
    "factor-sqrt-d": Record(
        "1/sqrt(d) or 1/batch", "{t} is {count} times too {big}: {what}, e.g. attention's 1/sqrt(d_k) with d_k = "
        "{d} (the last axis of {x}); the batch size is {count} as well, so it may instead be {alt}: a check at "
        "another batch size tells which", "{fix}", _LIN),
    "factor-sqrt-dk": Record(
        "a factor sqrt(d_k)", "{t} is {c:.6g} times the correct gradient, and {c:.6g} = {what}, with {d} the last axis "
        "of {x}: {how}, e.g. attention's scores Q K^T / sqrt(d_k) (d_k = {d}) whose backward {which}", "{fix}",
        "33-attention.md"),
    "factor-inverse-batch-m": Record(
        "extra 1/batch (1/m)", "{t} {be} {count} times too small: an extra 1/batch (1/m = 1/{count}, m the batch "
        "size on axis 1 of {x} {shape}). Andrew Ng's course (Coursera) divides by m in every layer's backward "
        "(dW = dZ A_prev.T / m, db = sum(dZ) / m) because its cost's gradient dAL has no 1/m; gradcheck compares "
        "with the central differences of this layer's own output, which have no 1/m: a convention mismatch, "
        "not necessarily a bug", "to check the layer alone, check {undo}; or check the whole model "
        "against its cost J (with the 1/m), as the course's gradient_check_n does", _LIN),
    "transposed-m": Record(
        "transposed (and 1/m)", "{t} is transposed, and {count} times too small: its transpose times m (m = {count}, "
        "the batch size on axis 1 of {x} {shape}) is the correct gradient. The 1/m is Andrew Ng's convention (said "
        "below); the transpose is a bug: for W of shape (out, in) with Z = W A_prev + b, dW = dZ A_prev.T / m, not "
        "its transpose", "", _LIN),
    "mixed-batch-m": Record(
        "1/m in some gradients only", "{t} {be} {count} times too small (1/m = 1/{count}, m the batch size on axis 1 "
        "of {x} {shape}) while {others} {have} no 1/m: backward divides some gradients by m and not the others, "
        "which no convention does (Andrew Ng's course divides dW and db alike: dW = dZ A_prev.T / m, db = "
        "sum(dZ) / m)", "divide {others} by m as well ({eg}), or by m nowhere", _LIN),
    "input-batch-m": Record(
        "1/m in the input's gradient", "{t} is {count} times too small: an extra 1/m (m = {count}, the batch size on "
        "axis 1 of {x} {shape}) in the gradient of the layer's input {x}. Andrew Ng's 1/m convention divides only "
        "the parameters' gradients by m (dW = dZ A_prev.T / m, db = sum(dZ) / m); the input's gradient has none "
        "(dA_prev = W.T dZ): each sample's dA_prev is its own column, not an average over the batch, and a 1/m "
        "there shrinks every earlier layer's gradient once more per layer. This is a bug in any convention, not "
        "a convention mismatch", "remove the 1/m from {t} ({eg})", _LIN),
    "factor-normalisation": Record("wrong normalisation", "{t} is {count} times too {big}: {why}"),
    "factor": Record("constant factor", "{t} is {c:.6g} times the correct gradient: a constant factor is wrong "
                     "somewhere{more}"),
    "factor-attribute": Record(
        "constant factor of a setting", "{t} is {c:.6g} times the correct gradient, and {c:.6g} is {what} (self.{k} "
        "= {v:.6g}), a setting forward applies: backward misses its factor or applies it once too often (the "
        "derivative of x / T is dY / T, of x * s is dY * s)", "apply self.{k} in backward as forward does"),
    "factor-mean": Record(
        "mean's count missed", "{t} is {c:.6g} times the correct gradient, and {c:.6g} is self.{k} (self.{k} = {v:.6g}): "
        "forward averages over a whole array ({mean}), dividing by every entry it holds, so backward divides by "
        "{c:.6g} times fewer entries than that mean when it averages over those self.{k} too (a loss's np.mean over "
        "the batch and its {c:.6g} classes divides by N x {c:.6g}, where backward divided by N)", "divide by the "
        "number of entries the mean averages (the array's size) in backward, or average over the batch alone in "
        "forward (the sum over the other axes, divided by N), whichever loss you mean"),
    "label-added": Record(
        "1 added at the label", "{t} is +2/N = {v:.6g} too large at each sample's true class (N = {n}) and right "
        "elsewhere: backward adds 1 at the label where the gradient of softmax + cross-entropy, (softmax - "
        "one_hot(y)) / N, subtracts it", "subtract 1 (Neural Networks from Scratch: self.dinputs[range(samples), "
        "y_true] -= 1, not += 1)"),
    "factor-classes": Record(
        "divided by the classes, not the samples", "{t} is {c:.6g} = N/K = {n}/{k} times the correct gradient: "
        "backward divides by the number of classes K = {k} (y_pred's last axis, len(dvalues[0])) where the mean over "
        "the batch divides by the number of samples N = {n} (len(dvalues))", "divide by the number of samples "
        "(Neural Networks from Scratch: samples = len(dvalues); self.dinputs = self.dinputs / samples)"),
    "factor-power": Record(
        "missing factor of a power", "{t} is {c:.6g} times the correct gradient: L is a power {p} of y_pred - y_true "
        "(L(y_true + s d) = s**{p} L(y_true + d)), and the factor {p} of the derivative of the {what} (d/dx x**{p} = "
        "{p} x{less}) is missing{sign}", "multiply backward's result by {fix}"),
    "first-sample-only": Record("first sample only", "{t} {how} the first sample only{rest}",
                                lesson=_LIN),
    "last-sample-only": Record("last sample only", "{t} {how} the last sample only{rest}",
                               lesson=_LIN),
    "last-step-only": Record(
        "gradient from the last time step only", "{t} is the gradient from the last time step's dY alone: axis 0 "
        "is time (forward's output at a step moves with the inputs of earlier steps, not later ones), and the dY "
        "of the other {k} steps never enters backward", "add each step's upstream gradient as the loop goes "
        "back: dh = dY[t] + dh_next (dh_next = da @ Wh.T from step t + 1), not dh = dY[-1] once before the loop",
        _LIN),
    "sample-missing": Record("one sample missing", "{t} {how}: the loop misses one sample ({loop} "
                             "instead of range(N)?)", lesson=_LIN),
    "tanh-preactivation": Record(
        "tanh's derivative at the pre-activation", "{t} takes tanh's derivative as 1 - a**2 with a the "
        "pre-activation (the argument of tanh), where 1 - tanh(a)**2 = 1 - out**2 is due",
        "cache the output out = np.tanh(a) and use dY * (1 - out**2)", _ACT),
    "position-missing": Record(
        "one output position missing", "{t} lacks the contribution of the {which} output position along axis {ax} "
        "(index {idx} of 0..{last}): the loop over output positions misses one ({loop} where range({size}) is due?)",
        lesson=_CONV),
    "positions-cut": Record(
        "the loop over output positions stops early", "{t} is the gradient of dY{block} alone ({kept}); the rest of "
        "dY is left out: the loop over output positions stops early ({loop}, or a break or return inside it?)",
        "check the bounds of the loops over the output's positions: range of the whole output size along each "
        "axis (H_out = (H + 2 * pad - kernel) // stride + 1), and no break or return inside them", _CONV),
    "zero": Record("all zeros", "{t}{what} all zeros: {why}"),
    "not-summed": Record(
        "not summed over the batch", "{t} {how}", "a parameter is shared by all examples, so its "
        "gradient is the sum over the batch axis, axis 0 (e.g. {sum})", _LIN),
    "wrong-shape": Record("wrong shape", "{t} {how}"),
    "values-right-shape-wrong": Record(
        "values right, shape wrong", "{t} has shape {got}, expected {expected}{whose}: values "
        "right, shape wrong ({how})", "{fix}"),
    "wrong-order": Record(
        "gradients in the wrong order", "backward returns its gradients in the wrong order: "
        "expected ({expected}), the order of the forward's inputs, but it returned ({got})",
        "return them in the order of forward's arguments", _LIN),
    "swapped": Record("gradients swapped", "{slot} holds the gradient of {other} and vice "
                      "versa{how}", "{fix}", _LIN),
    "alternative": Record("known wrong answer", "{sentence}"),
    "missing-local-derivative": Record(
        "activation derivative missing", "{t} equals dY: the local derivative of the activation is "
        "missing", "multiply dY by f'(X) (ReLU: dY * (X > 0); sigmoid: dY * out * (1 - out); "
        "dropout: dY * mask)", _ACT),
    "missing-softmax-jacobian": Record(
        "softmax's Jacobian missing", "{t} equals dY: the {what}'s Jacobian is missing; its output row depends on "
        "every input of the row (the Jacobian is not diagonal), so no elementwise f'(X) gives it",
        "{fix}", _ACT),
    "weight-skips-derivative": Record(
        "derivative missing in a dense layer's gradient", "{eq}: {it} dY itself where the gradient at the "
        "pre-activation Z = {z} is due; forward applies a nonlinearity to Z, so {fixeq} with dZ = dY * f'(Z){same}",
        "compute dZ once (e.g. dZ = dY * (1 - Y**2) for tanh) and use it for {t}{too}: {fixeq}", _LIN),
    "weight-not-on-input": Record(
        "a parameter's gradient taken as if it met the input directly", "{eq}: forward is affine in {x} (no "
        "nonlinearity: Y(2{x}) - 2 Y({x}) + Y(0) = 0), so no activation derivative is missing; {p} meets "
        "something other than {x} itself in forward (e.g. Y = ({x} + b) @ W, where dW = ({x} + b).T @ dY)",
        "differentiate the expression {p} enters in forward: cache what {p} multiplies there and use it in {t}", _LIN),
    "scale-summed-as-bias": Record(
        "a scale's gradient summed as a bias's", "{eq}: the gradient of a parameter added to each sample's output (a "
        "shift, like beta's); the layer has no weight matrix for a pre-activation, and {p} does more than shift the "
        "output (its numerical gradient is not dY's sum), so its gradient sums dY times what {p} multiplies",
        "{t} = (dY * what {p} multiplies).sum(axis=0); in a LayerNorm or BatchNorm, {t} = (dY * xhat).sum(axis=0) "
        "with xhat the normalised input forward cached", _NORM),
    "mean-path-missing": Record(
        "the batch mean's path missing", "{t} equals dY, but forward's output also depends on the batch mean of "
        "{x}: the correct gradient is dY {sign} {k:.6g} * dY.mean(axis=0), whose second term, the same for every "
        "sample, is the path through that mean (a mean subtracted, or a running mean updated and used in a training forward: rm "
        "= (1 - m) * rm + m * X.mean(axis=0) then X - rm gives dY - m * dY.mean(axis=0))", "add the mean's path: "
        "{t} = dY {sign} {k:.6g} * dY.mean(axis=0)", _NORM),
    "upstream-returned": Record(
        "dY returned as dX", "{t} equals dY: backward returns the upstream gradient unchanged, "
        "without the chain rule's product with the weight {w}", "{t} = {prod}", _LIN),
    "activation-applied-twice": Record(
        "activation applied twice", "{t} is the local derivative evaluated at the output Y instead "
        "of the input X, f'(Y) * dY with Y = f(X): backward takes its cached output for the input (e.g. "
        "mish_grad(self.out) for a Mish, or sigmoid(self.out), where self.out already is sigmoid(X))",
        "evaluate the derivative at the input: cache X in forward (self.X = X) and use dY * f'(self.X) "
        "(Mish, GELU, Swish, ELU, softplus); a derivative written in the output takes the cached output as it "
        "is (sigmoid: dY * out * (1 - out); tanh: dY * (1 - out**2))", _ACT),
    "cached-output": Record(
        "output cached for input", "{t} {how}: backward uses the layer's output Y where its input "
        "X is due", "cache the input in forward (self.X = X) and use it here", _LIN),
    "missing-mean-var-paths": Record(
        "missing mean/variance path terms", "{t} lacks the gradient through the {scope} {which} "
        "(statistics over {ax} treated as constants)", "{fix}", _NORM),
    "stale-mask": Record(
        "mask of a training forward in eval mode", "{t} is dY times a mask (entries 0 and {scale}) "
        "while the forward is the identity: backward multiplies by the mask a training forward left "
        "behind", "set the mask in every forward (in eval mode: no mask, or ones) or remember the mode, "
        "and return dY in eval mode; a layer backpropagated only after a training forward (Neural Networks "
        "from Scratch's Layer_Dropout) is checked in that mode alone by --training", _DROP),
    "mask-scale": Record(
        "dropout mask scaled differently in backward", "{t} is dY times a mask with entries 0 and {a} "
        "while the forward multiplies {x} by a mask with entries 0 and {s}: {why}", "multiply dY by the "
        "very mask forward used, its scale included (the mask divided by the keep probability in "
        "forward: {eg})",
        _DROP),
    "stale-mask-forward": Record(
        "eval forward reuses the training mask", "forward(X, training=False) returns X itself on a "
        "fresh layer, but X times a mask (entries {scale}) after a training forward: the eval forward "
        "multiplies by the mask the training forward drew, so inference drops units", "in eval mode "
        "return X (or set self.mask to ones) and draw a mask only when training=True", _DROP),
    "bound-side": Record(
        "derivative wrong beyond a bound of forward", "{t} is wrong at exactly the {k} entr{s} where {side} (right "
        "at the others), and forward compares {x} with {c} (a clip, np.minimum/np.maximum, a threshold): {what}", "{fix}", _ACT),
    "wrong-stat-weights": Record(
        "mean/variance path terms with wrong weights", "{t} has the gradient's paths through the "
        "{scope} mean and variance (statistics over {ax}), but {how}", "{fix}", _NORM),
    "eps-placement": Record(  # _eps_placement (bugs43 M2: LayerNormEpsOutside, liorsinai's sigma + eps)
        "eps placed differently in forward and backward", "{t} is {got}, while forward normalises with eps {fwd} "
        "((x - mean) / {fwd_form}, eps = {eps:.3g}, {scope} statistics over {ax}): {how}; the two differ by about "
        "eps / std, so each gradient is only slightly off, most where a {group}'s spread is small", "{fix}; the "
        "usual form (PyTorch's, Keras's) is "
        "xhat = (x - mean) / np.sqrt(var + eps) in forward, whose backward is dX = (dxhat - dxhat.mean({ax}) - "
        "xhat * (dxhat * xhat).mean({ax})) / np.sqrt(var + eps), the means with keepdims=True (dxhat = dY * gamma)",
        _NORM),
    "eval-batch-statistics": Record(
        "batch statistics in test mode", "in {mode} the forward normalises with the batch's own "
        "mean and variance (the output of a sample changes with the rest of the batch: "
        "forward({x}[:{k}]) is not forward({x})[:{k}]), where {mode} must use the running "
        "statistics {stats}; backward treats the statistics as constants, which is right in "
        "{mode}, so the forward is the bug",
        "in {mode}, xhat = (x - running_mean) / sqrt(running_var + eps)", _NORM),
    "eval-training-formula": Record(
        "training formula in eval mode", "{t} is computed with the training formula in {mode}: the "
        "correct {t} is dY times a constant per feature (dY * gamma / sqrt(running_var + eps)), "
        "and {t} differs from it by terms linear in the input per feature (the paths through a "
        "batch mean and variance), but in {mode} forward normalises with the running statistics, "
        "constants, so {t} has no such paths",
        "in {mode}, {t} = dxhat / sqrt(running_var + eps) with dxhat = dY * gamma: {branch}",
        _NORM),
    "transposed-weight": Record("transposed weight in dX", "{t} multiplies {up} by the transposed "
                                "weight: {how}", "{fix}", _LIN),
    "tanh-missing-square": Record(
        "tanh square missing", "{t} = dY * (1 - out): the square is missing in tanh's derivative",
        "tanh'(x) = 1 - tanh(x)**2, so dX = dY * (1 - out**2) with out = tanh(X) cached in "
        "forward", _ACT),
    "sigmoid-missing-one-minus": Record(
        "sigmoid's (1 - out) missing", "{t} = dY * out: the factor (1 - out) is missing in sigmoid's derivative",
        "sigmoid'(x) = s * (1 - s), so dX = dY * out * (1 - out) with out = sigmoid(X) cached in forward", _ACT),
    "sigmoid-one-plus": Record(
        "sigmoid's (1 - out) written (1 + out)", "{t} = dY * out * (1 + out): sigmoid's derivative is out * (1 - out), "
        "with a minus", "dX = dY * out * (1 - out) with out = sigmoid(X) cached in forward", _ACT),
    "relu-output-as-mask": Record(
        "ReLU's output used as its derivative", "{t} = dY * out: backward multiplies dY by ReLU's output max(X, 0) "
        "where its derivative, the 0/1 mask (X > 0), is due, so {t} is X times the correct gradient at the {k} of {n} "
        "entries where X > 0", "dX = dY * (X > 0) (cache the mask, or out > 0, in forward)", _ACT),
    "relu-mask-inverted": Record(
        "ReLU's mask inverted", "{t} = dY * (X <= 0): backward passes dY where X <= 0 and stops it where X > 0, the "
        "opposite of ReLU's derivative, the 0/1 mask (X > 0) ({k} of {n} entries of X are > 0)",
        "dX = dY * (X > 0): the gradient flows where the unit was active", _ACT),
    "relu-mask-on-dy": Record(
        "ReLU's mask taken from dY", "{t} = dY * (dY > 0): backward masks dY by its own sign where ReLU's derivative, "
        "the 0/1 mask of forward's input (X > 0), is due ({k} of {n} entries differ)", "mask by the input forward "
        "stored (Neural Networks from Scratch: self.dinputs[self.inputs <= 0] = 0, not dvalues <= 0)", _ACT),
    "leaky-slope-missing": Record(
        "leaky ReLU slope missing", "{t} = dY * (X > 0), ReLU's derivative: forward is a leaky ReLU with the "
        "negative slope {alpha:.6g} (Y = {alpha:.6g} * X where X < 0), whose derivative there is {alpha:.6g}, not 0, "
        "so {t} is 0 at the {k} of {n} entries where X < 0", "dX = dY * np.where(X > 0, 1, alpha)", _ACT),
    "leaky-slope-differs": Record(
        "leaky ReLU slopes differ", "{t} uses the negative slope {beta:.6g} where forward's is {alpha:.6g} (Y = "
        "{alpha:.6g} * X where X < 0): {t} is {ratio:.6g} times the correct gradient at the {k} of {n} entries "
        "where X < 0 and right elsewhere", "use one alpha in forward and backward (self.alpha, set once in "
        "__init__): dX = dY * np.where(X > 0, 1, alpha)", _ACT),
    "derivative-at-input": Record(
        "derivative of the input", "{t} = dY * {got} with X the input: {name}'s derivative written in its output "
        "(out = {name}(X)) was given the input instead", "cache the output in forward (self.out = {name}(X)) and "
        "use dX = dY * {right}", _ACT),
    "skip-path-missing": Record(
        "skip path missing", "{t} lacks the skip connection's gradient: it equals the correct gradient minus dY "
        "(forward returns {x} + F({x}), a residual, and the identity path carries dY back to {x} unchanged)",
        "add it: d{x} = dY + (the gradient through F)", _LIN),
    "gate-factor-missing": Record(
        "a gate's factor missing", "{t} is the correct gradient divided by a factor between {lo:.3g} and {hi:.3g} "
        "that differs per entry and stays the same for another dY: a factor forward multiplies {x} by is missing "
        "on {x}'s path, such as a gate (an LSTM's c_t = f * c_prev + i * g gives dc_prev = dc_t * f, the forget "
        "gate f)", "multiply {t} by that factor as forward multiplies {x} by it (an LSTM: dC = dc * f, with "
        "forward's f)", "32-lstm.md"),
    "repeated-index-loop": Record(
        "a loop's buffered += loses repeated ids", "{t} is what a loop over axis {a} of {x} gives with a buffered add "
        "in each step ({eg}): the ids of one step are a fancy index, and where an id repeats within the step only one "
        "of its dY rows is added (numpy's += does not accumulate over repeated indices)", "np.add.at(dW, ids, dY) in "
        "one call, no loop (or np.add.at(dW, ids[k], dY[k]) inside the loop)", "30-embedding.md"),
    "attention-dv-untransposed": Record(
        "attention weights not transposed in dV", "{t} = P @ dY with P = softmax(Q K^T s) the attention weights: "
        "forward's output is P @ {v}, so the gradient of {v} is P^T @ dY (P's query and key axes swapped); the two "
        "have one shape only because the query and key lengths are equal", "d{v} = P.swapaxes(-1, -2) @ dY (in 2-D: "
        "P.T @ dY)", "33-attention.md"),
    "log-softmax-no-sum": Record(
        "log-softmax backward without the sum", "{t} = dY - p * dY with p = exp(out): a log-softmax's Jacobian "
        "mixes every entry of its axis, so the second term takes the sum of dY over that axis ({axis}), not dY entry "
        "by entry", "dX = dY - p * dY.sum(axis={axis}, keepdims=True)", "03-softmax-cross-entropy.md"),
    "label-smoothing-target": Record(
        "label smoothing: backward's target is not forward's", "{t} = (softmax({pred}) - t'){per} with t' {how}, but "
        "the loss forward computes is the cross-entropy with the smoothed target t = {on:.6g} at the label and "
        "{off:.6g} at each of the other {K} classes, whose gradient is (softmax({pred}) - t){per}",
        "build one smoothed target in forward, keep it (self.t = ...), and use it in backward: d{pred} = (p - self.t)"
        "{per}", "03-softmax-cross-entropy.md"),
    "hinge-zero-margins": Record(
        "hinge: margins of 0 counted", "{t} is {scale} at every entry off the label: backward counts every margin, "
        "the {zero} clamped to 0 (whose gradient is 0) as well{also}: a mask margins >= 0 after np.maximum(0, ...), "
        "which is true everywhere", "count the positive margins alone: mask = (margins > 0), with the label's margin "
        "set to 0 first; then mask[range(N), y] -= mask.sum(axis=1)", "03-softmax-cross-entropy.md"),
    "rms-path-missing": Record(
        "RMS norm: the path through rms missing", "{t} = dY * gamma / rms: forward divides by rms = sqrt(mean(X**2, "
        "axis=-1) + eps), which depends on X too, so dX also has the path through rms, - X * (dxhat * X).sum(axis=-1) "
        "/ (D * rms**3) (dxhat = dY * gamma)", "dX = dxhat / rms - X * (dxhat * X).sum(axis=-1, keepdims=True) / (D * "
        "rms**3), D = X.shape[-1]", _NORM),
    "rms-wrong-axis": Record(
        "RMS norm: the rms path summed over the batch", "{t} takes the path through rms with (dxhat * X).sum(axis=0) "
        "/ N, a batch norm's sum over the batch, but forward's rms is each sample's over its features (axis=-1)",
        "dX = dxhat / rms - X * (dxhat * X).sum(axis=-1, keepdims=True) / (D * rms**3), D = X.shape[-1]", _NORM),
    "gelu-cube-derivative": Record(
        "GELU: the cube's derivative without its 3", "{t} uses (1 + 0.044715 x**2) in the tanh-approximated GELU's "
        "derivative: the inner term sqrt(2/pi) (x + 0.044715 x**3) has the derivative sqrt(2/pi) (1 + 3 * 0.044715 "
        "x**2) (the 3 of x**3's derivative is missing)", "dX = dY * {right}", _ACT),
    "skip-path-twice": Record(
        "skip path added twice", "{t} has the skip connection's gradient twice: it equals the correct gradient plus "
        "dY (forward returns {x} + F({x}), whose identity path carries dY back once; backward adds dY on top of a "
        "gradient through F that already holds it, e.g. dX = 2 * dY + ...)", "add dY once: d{x} = dY + (the gradient "
        "through F alone)", _LIN),
    "gated-skip-missing": Record(
        "gated direct path missing", "{t} lacks the direct path from {x} to the output: it is the correct gradient "
        "minus dY times a factor between {lo:.3g} and {hi:.3g} that differs per entry and stays the same for "
        "another dY, the gradient of forward mixing {x} into its output through a gate (a GRU's h_new = (1 - z) * "
        "n + z * h carries dY * z straight back to h; a highway's y = t * h + (1 - t) * x carries dY * (1 - t) to x)", "add "
        "that path to {t}: in a GRU, dH = dY * z + (the gradient back through the gates and n); in a highway, dX = dY * "
        "(1 - t) + (the gradient back through h and t)", "32b-gru.md"),
    "attention-use-missing": Record(
        "a use of the input missing", "{t} is the gradient through {have} alone: forward uses {x} three times "
        "({uses}), and the chain rule adds the three uses' gradients, so {t} lacks {missing}{how}",
        "start {t} from zeros and add each projection's gradient: {fix}", "34-multi-head-attention.md"),
    "branch-upstream-dY": Record(
        "a branch given dY", "{t} is the gradient {t} would have if {p} were zero: backward passes the output's "
        "gradient dY to the part of forward that comes before {p}'s, where that part's own output gradient is due, "
        "dY plus what comes back through {p}'s part (two residual branches, H = X + F1(X) and Y = H + F2(H): dH = "
        "dY + (the gradient back through F2), and F1's backward takes dH, not dY){also}", "run the later part's "
        "backward first and give the earlier part its output's full gradient (d1 = dH * (1 - F1**2), with dH = "
        "dY + d2 @ B)", "35-transformer-block.md"),
    "transposed-conv-stride": Record(
        "the stride ignored in backward", "{t} is what backward gives reading dY at positions l + k: forward (a "
        "transposed convolution of stride {s}) adds tap k of input position l to output position l * {s} + k, so "
        "backward must read dY at those positions; it ignores the stride", "read tap k's positions with the stride: "
        "dY[:, :, k:k + (L - 1) * {s} + 1:{s}] (L = {L} input positions)", "20b-conv-transpose.md"),
    "factor-inverse-time": Record(
        "extra 1/T", "{t} is {T} times too small: an extra 1/T (T = {T}, the time steps on axis 1 of {x} {shape}, "
        "the (N, T, D) layout: {why}); a gradient summed over the time steps is not averaged over them", "sum over "
        "axes 0 and 1 and do not divide (e.g. db = dout.sum(axis=(0, 1)))", _LIN),
    "factor-inverse-axis1-batch": Record(
        "extra 1/m", "{t} is {T} times too small: an extra 1/{T}, the size of axis 1 of {x} {shape}, which holds the "
        "batch m here, not the time steps ({why}: Andrew Ng's layout (n_x, m, T_x), the time steps on axis 2); a "
        "gradient summed over the batch is not averaged over it (np.mean where np.sum is due)", "sum over the batch "
        "and do not divide by m (Andrew Ng's rnn_cell_backward: dba = np.sum(dtanh, axis=1, keepdims=True), added "
        "over the time steps)", "31-rnn-bptt.md"),
    "factor-inverse-time-ng": Record(
        "extra 1/T_x", "{t} is {T} times too small: an extra 1/T_x (T_x = {T}, the time steps on axis 2 of {x} "
        "{shape}, Andrew Ng's layout (n_x, m, T_x): {why}); a gradient summed over the time steps is not averaged "
        "over them", "add each step's gradient and do not divide (Andrew Ng's rnn_backward: dba += dbat in the loop "
        "over reversed(range(T_x)))", "31-rnn-bptt.md"),
    "factor-inverse-axis1": Record(
        "extra 1/(axis 1's size)", "{t} is {T} times too small: an extra 1/{T}, the size of axis 1 of {x} {shape}: "
        "the time steps T in the (N, T, D) layout (CS231n's), the batch m in Andrew Ng's (n_x, m, T_x), and the "
        "layer's other inputs and weights do not tell which; a gradient summed over that axis is not averaged over "
        "it", "sum over axis 1 of {x}'s layout and do not divide by its size", _LIN),
    "factor-axis-sizes": Record(
        "a factor of the input's sizes", "{t} is {c:.6g} times the correct gradient, and {c:.6g}{what} comes from {words} "
        "({x} of shape {s0}); at {x} of shape {s1} it is {c2:.6g}{what2}, so the factor follows those sizes: {how}",
        "take each count from the axes forward reduces or copies over, and apply it in backward as forward does (a "
        "mean's gradient is dY / count, spread over those axes; a copy's gradient is the sum of its copies' dY)", _LIN),
    "pool-area-missing": Record(
        "1/pool area missing", "{t} is {area} times the correct gradient: an average pool divides each window's "
        "sum by its area ({area} inputs per output), so its backward spreads dY / {area} over the window",
        "divide the spread dY by the window's area (e.g. np.repeat(np.repeat(dY, k, 2), k, 3) / (k * k))", _CONV),
    "pool-side-only": Record(
        "1/pool side where 1/area is due", "{t} is {side} times the correct gradient: an average pool divides each "
        "window's sum by its area ({area} = {side} x {side} inputs per output), and backward divides dY by one side "
        "({side}) alone", "divide the spread dY by the window's area, f * f (e.g. dA / (f * f)), not by f", _CONV),
    "next-h-for-prev-h": Record(
        "next_h where prev_h is due", "{t} = next_h.T @ da with next_h the step's output, where {x}.T @ da is due "
        "(da = dnext_h * (1 - next_h**2)): the weight multiplies the previous hidden state {x} in forward, so its "
        "gradient takes {x}", "cache the input hidden state in forward (self.prev_h = {x}) and use {t} = "
        "prev_h.T @ da", _LIN),
    "norm-wrong-axis": Record(
        "normalisation statistics over the wrong axis", "{t} takes the means of its paths through the mean and "
        "variance over {bwd} ({bwd_kind}), but forward normalises over {fwd} ({fwd_kind}): forward and backward "
        "reduce over different axes", "LayerNorm takes each sample's mean and variance over its features (axis=-1, "
        "keepdims=True: any batch size, even 1), BatchNorm each feature's over the batch (axis=0); backward's means "
        "are over the axis of forward's statistics: {fix}", _NORM),
    "norm-gamma-misplaced": Record(
        "gamma in the wrong place in LayerNorm's dX", "{t} {how}; LayerNorm's means run over the features "
        "(axis=-1), along which gamma varies, so gamma does not factor out of them as it does out of BatchNorm's "
        "means over the batch: right only while every gamma is equal (gamma = 1 at init)", "{fix}", "23-layernorm.md"),
    "variance-exponent": Record(
        "variance's power -1/2 for -3/2", "{t} has the path through the {scope} variance ({ax}), but its term is "
        "var + eps times its right size per feature: dL/dvar takes (var + eps)**(-1/2) where the "
        "derivative of (var + eps)**(-1/2) is -1/2 * (var + eps)**(-3/2)", "dL/dvar = -0.5 * sum(dxhat * (x - mean) "
        "* (var + eps)**(-3/2), axis=0)", _NORM),
    "eps-dropped-backward": Record(
        "eps dropped in backward", "{t} is the correct gradient times sqrt(var + eps) / sqrt(var) per feature, eps "
        "= {eps:.3g}: forward divides by sqrt(var + eps) and backward by sqrt(var) ({ax}), so each feature's "
        "gradient is slightly too large, most where its variance is small", "use the very std forward used "
        "(cache std = np.sqrt(var + eps) in forward)", _NORM),
    "scale-grad-of-input": Record(  # _scale_of_input_signature (bugs43 M1: bn_gammax)
        "the scale's gradient from the input, not x_hat", "{t} is (dY * {x}).sum({ax}) with {x} the layer's input, "
        "where forward scales the normalised input x_hat = ({x} - mean) / sqrt(var + eps) ({scope} statistics over "
        "{stat}): {p}'s gradient is (dY * x_hat).sum({ax})", "use the x_hat forward computed (cache it): "
        "{t} = (dY * x_hat).sum({ax})", _NORM),
    "hinge-count": Record(
        "hinge's count missing", "{t} at the correct class (column y[i] of each row) is wrong: the multiclass hinge "
        "(CS231n's SVM loss, max(0, s_j - s_y + 1) over the classes j != y) gives that entry minus the number of "
        "classes whose margin is positive, times the loss's {scale} (row {row}: {k} positive margins, so {exp:.6g}), "
        "but backward gives {got:.6g} there{how}; every other entry is right",
        "dx[np.arange(N), y] -= (margins > 0).sum(axis=1), with margins[np.arange(N), y] = 0 first (then the 1/N "
        "of the mean, as for the other entries)", "05b-hinge-loss.md"),
    "ignored-target-not-masked": Record(
        "ignored targets not masked", "{t} is not zero at the {k} of {n} {rows} whose target is {c:g}, where the "
        "loss's gradient is 0: forward leaves them out of the loss (an ignore index), but backward gives them "
        "{what}; the other {rows} are right", "multiply backward's result by the mask forward used (e.g. d * "
        "mask[:, None], mask = labels != ignore_index) and divide by the same count of kept {rows}",
        "03-softmax-cross-entropy.md"),
    "ignored-target-count": Record(
        "divided by every target, ignored ones too", "{t} is {kept}/{n} = {r:.6g} times the correct gradient: "
        "forward leaves the {k} {rows} whose target is {c:g} out of the loss (an ignore index) and averages over the "
        "{kept} kept, but backward divides by all {n}", "divide by the count of kept {rows} (mask.sum(), mask = "
        "labels != ignore_index), as forward does", "03-softmax-cross-entropy.md"),
    "ignored-output": Record(
        "upstream gradient of an output ignored", "{t} {be} the gradient with {g} set to zero: backward does "
        "not use the upstream gradient {g} of forward's output {name} (output {j} of {k}), so {t} {lack} the "
        "part of the loss that reaches {them} through {name}", "add {name}'s path to backward: the chain rule "
        "sums over every output, so {g} goes back through the operations forward used to compute {name}, added "
        "to what comes back through the other outputs"),
    "rnn-no-carry": Record(
        "hidden-state gradient not carried", "{t}[:, t] is the gradient of step t's own output alone {where}: backward "
        "does not add the gradient that comes back from the later steps (in an RNN: from step t+1 through the hidden "
        "state, dh_next or dprev) to the upstream gradient of step t, so {which} the later steps' gradients{also}", "in the loop over reversed(range(T)), give step t's backward dY[:, t] + dprev, where "
        "dprev is the gradient of h_prev that step t+1's backward returned (0 for the last step), and keep the last "
        "one as dh0", "31-rnn-bptt.md"),
    "rnn-carry-scaled": Record(
        "hidden-state gradient carried scaled", "{t}[:, t] is the gradient with what comes back from the later steps "
        "(in an RNN: from step t+1 through the hidden state, dh_next or dprev) multiplied by {c:g} at each step "
        "(checked at steps {steps} of 0..{last}, and right at the last): backward adds {c:g} * dprev to step t's "
        "upstream gradient, where the chain rule adds dprev itself, so step t+k's gradient reaches step t scaled by "
        "{c:g}**k{also}", "in the loop over reversed(range(T)), give step t's backward dY[:, t] + dprev, with no factor on "
        "dprev (the gradient of h_prev that step t+1's backward returned)", "31-rnn-bptt.md"),
    "first-step-missing": Record(
        "the first time step missing", "{t} {be} the gradients of the sequence without its first step: forward run "
        "on steps 1..{last} from the state after step 0 (its output there) as the initial state gives the same outputs, "
        "and backward gives that shorter sequence's gradients, so {x}[:, 0] is zero, the weights lack step 0's "
        "share and the initial state's gradient ({h0}) is that of the state after step 0: the loop back over the steps "
        "stops before step 0", "loop over reversed(range(T)), not reversed(range(1, T)): step 0's backward adds its "
        "share to the weights' gradients, gives {x}[:, 0], and turns the carried gradient into the initial state's",
        "31-rnn-bptt.md"),
    "state-carry-incomplete": Record(
        "a carried state's gradient missing", "{t} {be} right for a sequence of one time step, and {x}[:, {last}] is "
        "right, but not at {T} steps: each step's own derivatives are right and what is carried back from step to step "
        "is not. Forward's output is not its whole state (run on steps 1..{last} from its output at step 0 as the "
        "initial state, it gives other outputs): a second state is carried between the steps, such as an LSTM's cell "
        "state c, so two gradients come back from step t + 1 to step t, the output's (dprev_h) and the second "
        "state's (dprev_c), and one of them is missing or wrong (the numbers cannot tell which)", "in the loop over reversed(range(T)), give each "
        "step's backward the gradient of every state that step passes on (an LSTM: dnext_h = dY[:, t] + dprev_h and "
        "dnext_c = dprev_c, both from step t + 1's backward, 0 after the last step), not zeros",
        "31-rnn-bptt.md"),
    "steps-not-summed": Record(
        "time steps' gradients not summed", "{t}: right for a sequence of one time step but not for {T} steps, "
        "while {x} is right at every step: each step's contribution is right, and they are not added up. A gradient "
        "over time steps overwritten instead of accumulated (an = where += is due in the loop over the steps) keeps "
        "one step's contribution alone", "set the gradient to zeros before the loop over the steps and add each "
        "step's contribution to it (+=): a weight shared by every step gets the sum of their gradients",
        "31-rnn-bptt.md"),
    "fused-softmax-ce": Record(
        "softmax's gradient in a loss on probabilities", "{t} is {got}, the gradient of the softmax and the "
        "cross-entropy together with respect to the softmax's input (the logits), but this loss's input {pred} "
        "holds the probabilities themselves (each row sums to 1), and its gradient with respect to {pred} is {want}", "return {want} here, or move (p - y){n} into a loss that takes the logits "
        "and applies the softmax itself (the softmax layer's backward then must not be applied again)",
        "03-softmax-cross-entropy.md"),
    "fused-sigmoid-bce": Record(  # name_fused_sigmoid_bce (bugs43 M1)
        "sigmoid's gradient in a loss on probabilities", "{t} is {got}, the gradient of the sigmoid and the binary "
        "cross-entropy together with respect to the sigmoid's input (the logits), but this loss's input {pred} holds "
        "the probabilities themselves (entries in (0, 1)), and its gradient with respect to {pred} is {want}",
        "return {want} here, or move (p - y){n} into a loss that takes the logits and applies the sigmoid itself "
        "(PyTorch's BCEWithLogitsLoss; the sigmoid layer's backward then must not be applied again)",
        "03-softmax-cross-entropy.md"),
    "softmax-ce-label": Record(
        "softmax cross-entropy's backward", "{t} is {got}, where the cross-entropy of softmax({pred}) has the "
        "gradient {want}: {how}", "{fix}", "03-softmax-cross-entropy.md"),
    "huber-not-clipped": Record(
        "Huber's clip missing", "{t} is {k:.6g} times (y_pred - y_true) everywhere, the square's derivative: forward "
        "is a Huber loss with delta {delta:.6g} (quadratic where |y_pred - y_true| <= {delta:.6g}, linear beyond), "
        "whose derivative beyond delta is delta * sign(y_pred - y_true), so {t} is wrong at the {count} of {size} "
        "entries where |y_pred - y_true| > {delta:.6g}", "clip the residual: np.clip(r, -delta, delta) (times the "
        "loss's 1/N), not r", "04-regression-losses.md"),
    "focal-factor-derivative": Record(
        "focal loss factor not differentiated", "{t} lacks the derivative of the focal loss's modulating factor "
        "(1 - p_t)**{gamma:g}: it is the derivative of -log(p_t) times the factor, the factor held constant, while "
        "the product rule also gives {gamma:g} {less} log(p_t) (p_t = p where y = 1, 1 - p where y = 0)",
        "d/dp_t of -(1 - p_t)**gamma log(p_t) is gamma (1 - p_t)**(gamma - 1) log(p_t) - (1 - p_t)**gamma / p_t; "
        "then times +1 (y = 1) or -1 (y = 0) for d/dp, and the mean's 1/N", "05-binary-cross-entropy.md"),
    "huber-branch-factor": Record(
        "one branch's factor wrong (Huber / smooth L1)", "{t} is right where |y_pred - y_true| {right} {delta:.6g} but "
        "{c:.6g} times the correct gradient at the {count} of {size} entries where |y_pred - y_true| {wrong} "
        "{delta:.6g}: forward is {form}; {why}", "{fix}", "04-regression-losses.md"),
    "focal-alpha-weight": Record(
        "focal loss alpha_t wrong", "{t} weights the classes wrongly: forward is a focal loss weighted by alpha_t "
        "(alpha = {alpha:.6g} where y = 1, 1 - alpha = {beta:.6g} where y = 0; gamma {gamma:g}), and backward {how}",
        "multiply the derivative by the very alpha_t forward used: np.where(y == 1, alpha, 1 - alpha)",
        "05-binary-cross-entropy.md"),
    "dice-denominator-derivative": Record(
        "Dice's quotient rule incomplete", "{t} {how}: forward is a {form} Dice loss 1 - (2 sum(p t) + s) / (sum(p) + "
        "sum(t) + s) (smooth s = {s:.3g}), a quotient whose denominator depends on p too, so the quotient rule gives "
        "d/dp_i = -(2 t_i D - N) / D**2 (N, D the numerator and denominator{per})", "dp = -(2 * t * den - num) / "
        "den**2{fix}: the numerator's derivative 2 t times den, minus num times the denominator's derivative 1, over "
        "den squared", "04-regression-losses.md"),
    "softmax-wrong-axis": Record(
        "softmax backward sums over the wrong axis", "{t} = p * (dY - (dY * p).sum(axis={other})): the sum is over "
        "axis {other}, but the softmax normalises over axis {axis} (each slice along axis {axis} sums to 1), so "
        "the Jacobian's off-diagonal terms mix the wrong entries",
        "use dX = p * (dY - (dY * p).sum(axis={axis}, keepdims=True)), the axis of forward's sum",
        "03-softmax-cross-entropy.md"),
    "gelu-two-forms": Record(
        "GELU forward and backward of two forms", "{t} uses the derivative of the {bwd} GELU, but forward computes the "
        "{fwd} one (they differ by up to about 1e-3)", "differentiate the form forward computes: {right}", _ACT),
    "gelu-missing-pdf": Record(
        "GELU's derivative without its pdf term", "{t} = dY * {got}: the {fwd} GELU's derivative is missing the term "
        "{term} (the product rule on x * Phi(x) gives Phi(x) + x * phi(x))", "dX = dY * {right}", _ACT),
    "log-softmax-wrong-axis": Record(
        "log-softmax backward sums over the wrong axis", "{t} = dY - p * dY.sum(axis={other}) with p = exp(out): "
        "the sum is over axis {other}, but the log-softmax normalises over axis {axis} (exp(out) sums to 1 along "
        "axis {axis})", "use dX = dY - p * dY.sum(axis={axis}, keepdims=True), the axis of forward's sum",
        "03-softmax-cross-entropy.md"),
    "softmax-diagonal": Record(
        "softmax Jacobian diagonal only", "{t} = dY * p * (1 - p) uses only the diagonal of the "
        "softmax Jacobian: every output p_j depends on every input x_i (dp_j/dx_i = p_j * "
        "(delta_ij - p_i)), so the off-diagonal terms -p_i * p_j are missing",
        "use dX = p * (dY - (dY * p).sum(axis={axis}, keepdims=True))",
        "03-softmax-cross-entropy.md"),
    "softmax-jacobian-plus": Record(
        "softmax Jacobian's outer product added", "{t} = p * (dY + (dY * p).sum(axis={axis})): the Jacobian is built "
        "as diag(p) + p p^T, but dp_j/dx_i = p_j * (delta_ij - p_i): the outer product is subtracted",
        "jacobian = np.diagflat(p) - np.dot(p, p.T) for p of shape (K, 1), i.e. dX = p * (dY - (dY * p).sum(axis="
        "{axis}, keepdims=True))", "03-softmax-cross-entropy.md"),
    "dx-weight-left-out": Record(
        "weight left out of dX", "{t} times {w} is the correct gradient: backward leaves the factor {w} out of "
        "the input's gradient (dX must go back through the multiplication by {w}, e.g. a normalisation's gamma)",
        "multiply the upstream gradient by {w} where backward goes back through forward's product with it "
        "(dxhat = dY * {w})", "01b-numerical-gradients.md"),
    "softmax-jacobian-no-outer": Record(
        "softmax Jacobian without its outer product", "{t} = p * dY: the Jacobian is built as diag(p) alone, but "
        "dp_j/dx_i = p_j * (delta_ij - p_i): the outer product p p^T is subtracted from it",
        "jacobian = np.diagflat(p) - np.dot(p, p.T) for p of shape (K, 1), i.e. dX = p * (dY - (dY * p).sum(axis="
        "{axis}, keepdims=True))", "03-softmax-cross-entropy.md"),
    "softmax-jacobian-inner": Record(
        "softmax Jacobian with the inner product", "{t} = p * dY - (p * p).sum(axis={axis}) * dY.sum(axis={axis}): "
        "the Jacobian subtracts p^T p (one number, the inner product, for p a column (K, 1)) from every entry where "
        "the outer product p p^T (K, K) is due", "np.dot(p, p.T) for p of shape (K, 1), not np.dot(p.T, p): "
        "jacobian = np.diagflat(p) - np.dot(p, p.T)", "03-softmax-cross-entropy.md"),
    "softmax-jacobian-at-input": Record(
        "softmax Jacobian built from the input", "{t} = X * (dY - (dY * X).sum(axis={axis})): the Jacobian is built "
        "from forward's input X where the softmax's output p = softmax(X) is due (dp_j/dx_i = p_j * (delta_ij - "
        "p_i))", "build the Jacobian from the output forward stored (Neural Networks from Scratch: "
        "enumerate(zip(self.output, dvalues)), not self.inputs)", "03-softmax-cross-entropy.md"),
    "softmax-jacobian-input-inside": Record(  # bugs43 M1: SoftmaxInputForOutput (newbe.dev's value*(1-input))
        "softmax Jacobian's inner sum from the input", "{t} = p * (dY - (dY * X).sum(axis={axis})): the inner sum "
        "weights dY by forward's input X where the softmax's output p = softmax(X) is due (dp_j/dx_i = p_j * "
        "(delta_ij - p_i): every factor of the Jacobian is the output)", "use the output in both places: dX = p * "
        "(dY - (dY * p).sum(axis={axis}, keepdims=True)), p the output forward stored", "03-softmax-cross-entropy.md"),
    "scatter-overwrites": Record(
        "assigned, not added", "{t} keeps one output's contribution where several outputs reach "
        "the same element ({k} of {size} elements of {t} are shared by two or more outputs, e.g. "
        "a pixel two overlapping windows both read (in max pooling: the maximum of both)): backward assigns (=) where it "
        "must add (+=); it equals the {which} output's contribution alone there",
        "accumulate: {t}[...] += ..., so the gradients of every output that reads an element "
        "add up", "21-pooling.md"),
    "attention-mask-after": Record(  # _attention_mask_signature (bugs43 M1: CausalAttentionMaskAfter)
        "attention masked after the softmax", "{t} is wrong because forward masks after the softmax: its weights "
        "are softmax(Q K^T{scale}) * mask, the {which} mask applied to probabilities (each row's masked keys still "
        "take part in its normalisation, and its weights no longer sum to 1), so a softmax's Jacobian in backward "
        "is not the derivative of what forward computes; multiplying by the mask after the softmax is not causal "
        "attention", "mask the scores before the softmax: S = np.where(mask, Q K^T{scale}, -np.inf) (or -1e9), P = "
        "softmax(S); then dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True)){scale_fix} (P = 0 at the masked "
        "keys: no mask is needed in backward)", "33-attention.md"),
    "attention-backward-unmasked": Record(  # _attention_mask_signature (bugs43 M1: CausalAttentionBackNoMask)
        "attention's mask left out of backward", "{t} is what backward gives with the softmax's Jacobian built from "
        "softmax(Q K^T{scale}) over every key, the mask left out, while forward's weights P are the softmax over "
        "the unmasked keys alone (the {which} mask: P = 0 at the others): the masked keys get a gradient, and the "
        "unmasked ones a wrong one", "use the P forward computed (cache it): dS = P * (dP - (dP * P).sum(axis=-1, "
        "keepdims=True)){scale_fix}, then dQ = dS @ K and dK = dS^T @ Q; a softmax recomputed in backward needs "
        "forward's mask too", "33-attention.md"),
    "attention-softmax-diagonal": Record(
        "attention softmax Jacobian diagonal only", "{t} uses only the diagonal of the attention softmax's "
        "Jacobian: backward computes dS = P * (1 - P) * dP (P = softmax(Q K^T{scale}), forward's weights; dP = dY @ "
        "V^T), but each weight P[i, j] depends on every score of its row, so the off-diagonal terms, -P[i, j] * "
        "(P[i, :] * dP[i, :]).sum() + P[i, j]**2 * dP[i, j], are missing",
        "dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True)){scale_fix}, then dQ = dS @ K and dK = dS^T @ Q",
        "33-attention.md"),
    "col2im-overwrites": Record(
        "col2im assigned, not added", "{t} keeps one window's contribution where the convolution's windows "
        "overlap ({k} of {size} elements of {t} lie in two or more windows: the stride is smaller than the "
        "kernel): col2im assigns (=) each window's patch where it must add (+=), so {t} equals the {which} "
        "window's contribution alone there, and is right where one window covers an element",
        "accumulate in col2im: dx[:, :, i*s:i*s+kh, j*s:j*s+kw] += the window's patch of dcols (or np.add.at), so "
        "the gradients of every window that reads an element add up", _CONV),
    "tied-weight-term-missing": Record(
        "one use of a tied weight missing", "{t} lacks the gradient of one of {w}'s two uses: forward uses {w} "
        "twice, in the output's product {prod} (h of shape {h}, recovered from the output) and once before it (an "
        "embedding lookup {w}[ids], or an encoder), and the chain rule adds both uses' gradients into {t}; backward's "
        "{t} is the {have} alone, without {missing}",
        "add the two uses' gradients into one {t}: the term of the earlier use (e.g. np.add.at(dW, ids, dE) for a "
        "lookup, or X.T @ dh for an encoder) plus the output product's {term}", "30b-weight-tying.md"),
    "head-merge-no-transpose": Record(
        "heads merged by reshape alone", "{t} is what backward gives when it {where} by reshape alone: forward "
        "splits the {D} features into {H} heads of {d} (reshape (N, T, {H}, {d}), then transpose(0, 2, 1, 3) to (N, "
        "{H}, T, {d})), so the gradient must go back through the same two steps in reverse; a reshape alone puts "
        "each head's values at other time steps", "{fix}", "34-multi-head-attention.md"),
    "elu-alpha-missing": Record(
        "ELU's alpha missing", "{t} = dY * out where X < 0: ELU's derivative there is alpha * exp(X) = out + alpha "
        "(out = alpha * (exp(X) - 1), alpha = {alpha:.6g} here), so {t} lacks dY * alpha at the {k} of {size} "
        "entries where X < 0 and is right elsewhere", "dX = dY * np.where(X > 0, 1, out + alpha) (or alpha * "
        "np.exp(X) there), with the alpha forward used", _ACT),
    "elu-alpha-one": Record(
        "ELU's alpha taken as 1", "{t} = dY * (out + 1) where X < 0: ELU's derivative there is alpha * exp(X) = out + "
        "alpha (out = alpha * (exp(X) - 1), alpha = {alpha:.6g} here, not 1), so {t} is dY * (1 - alpha) too large "
        "at the {k} of {size} entries where X < 0 and right elsewhere", "dX = dY * np.where(X > 0, 1, out + "
        "self.alpha) (or self.alpha * np.exp(X) there)", _ACT),
    "selu-scale-missing": Record(
        "SELU's scale missing where X > 0", "{t} = dY where X > 0: forward multiplies both branches by the scale "
        "lambda = {lam:.6g} (out = lambda * X there), so the derivative there is lambda and {t} is {lam:.6g} times too "
        "small at the {k} of {size} entries where X > 0 (right where X < 0)", "dX = dY * lambda * np.where(X > 0, 1, "
        "alpha * np.exp(X)): the scale on both branches, as in forward", _ACT),
    "product-rule-dropped": Record(
        "product rule dropped", "{t} = dY * Y / X in all {size} entries: forward is X times a function of X (Y = X * "
        "g(X), e.g. Swish/SiLU X * sigmoid(X), Mish X * tanh(softplus(X))) and backward takes g(X) alone for the "
        "derivative; the product rule gives g(X) + X * g'(X)", "add the second term: dX = dY * (g + X * g'(X)) (Swish: "
        "s + X * s * (1 - s); Mish: t + X * (1 - t**2) * sigmoid(X) with t = tanh(softplus(X)))", _ACT),
    "leaky-slopes-swapped": Record(
        "leaky ReLU slopes swapped", "{t} = dY * np.where(X > 0, {alpha:.6g}, 1): the two branches' slopes are "
        "swapped (forward: Y = X where X > 0, {alpha:.6g} * X where X < 0), so {t} is wrong at all {n} entries "
        "({k} of them where X < 0)", "dX = dY * np.where(X > 0, 1, alpha)", _ACT),
    "backward-ignores-mode": Record(
        "backward ignores the mode", "{t} is the gradient of the {other} forward ({other_how}), but this forward ran "
        "in {mode} ({how}): backward uses the {other} formula whatever the mode, so here it differentiates a "
        "function this forward did not compute", "{fix}", _DROP),
    "maxpool-spread-evenly": Record(
        "max-pool gradient spread evenly", "{t} spreads each output's gradient evenly over its pooling window "
        "({k} elements), as average pooling's backward does, while forward takes the window's maximum",
        "route each window's dY to the element forward picked, its maximum alone (a mask of X == the window's "
        "max, or the argmax cached in forward): {t}[window] += (window == window.max()) * dY", "21-pooling.md"),
    "maxpool-spread-whole": Record(  # bugs43 M1: maxpool_spread (_window_signature)
        "max-pool gradient given to the whole window", "{t} gives each output's whole gradient to every element of "
        "its pooling window ({k} elements), as an average pool's routing without its division would, while forward "
        "takes the window's maximum: only the maximum moved the output",
        "route each window's dY to the element forward picked, its maximum alone (a mask of X == the window's "
        "max, or the argmax cached in forward): {t}[window] += (window == window.max()) * dY", "21-pooling.md"),
    "maxpool-unravel-swapped": Record(  # bugs43 M1: maxpool_unravel (_pool_unravel_signature)
        "the argmax unravelled with the window's axes swapped", "{t} routes each window's dY to "
        "np.unravel_index(argmax, {wrong}) of a {ph}x{pw} window (pool_height x pool_width): the window's shape with "
        "its axes swapped, so the maximum's row and column are read wrongly and dY lands on another element "
        "({k} of {o} windows; right only for a square window)", "unravel with the window's own shape: "
        "np.unravel_index(np.argmax(window), window.shape), i.e. (pool_height, pool_width)", "21-pooling.md"),
    "pool-stride-ignored": Record(
        "the stride ignored in backward", "{t} is {mode} pooling's gradient over windows whose corners are at (h, w), "
        "not at (h*stride, w*stride): forward (stride {s}, windows of {k}) takes output (h, w)'s window from row "
        "h*stride and column w*stride on, so backward must route dY[h, w] back there; it ignores the stride",
        "place each window where forward took it: vert_start = h * stride, horiz_start = w * stride (then "
        "vert_end = vert_start + f, horiz_end = horiz_start + f)", "21-pooling.md"),
    "conv-stride-ignored": Record(  # newuser35 L1: _conv_stride_signature
        "the stride ignored in backward", "{t} is what backward gives adding each output position's contribution at "
        "(i, j) of the padded input, not at (i*{s}, j*{s}): forward (stride {s}, padding {p}, a {k} kernel) takes "
        "output (i, j)'s window from row i*{s} and column j*{s} on, so backward must put dY[:, :, i, j]'s share back "
        "there; it ignores the stride", "use forward's slices in backward: {slot}[:, :, i*s:i*s + kh, j*s:j*s + kw] "
        "(s = {s}), the same window forward read its patch from", _CONV),
    "maxpool-argmin": Record(
        "max-pool gradient routed to the minimum", "{t} routes each window's gradient to the window's smallest "
        "element, while forward takes its maximum: backward picks the argmin (np.argmin, or == window.min()) where "
        "the derivative of a max is 1 at the element forward picked, the maximum, and 0 elsewhere",
        "route dY to each window's maximum: np.argmax of the window (or a mask of X == the window's max, cached in "
        "forward)", "21-pooling.md"),
    "window-overwrites": Record(
        "window assigned, not added", "{t} keeps one window's gradient where pooling windows overlap ({k} of "
        "{size} elements of {t} lie in two or more windows): backward assigns (=) the whole window, wiping the "
        "gradient an earlier window left there; it equals the {which} window's contribution alone",
        "accumulate: {t}[:, :, i*s:i*s+ph, j*s:j*s+pw] += mask * dout[:, :, i, j, None, None]", "21-pooling.md"),
    "pad-not-cropped": Record(
        "padding cropped at one end", "{t} is the correct gradient shifted by {p} along its last two axes: "
        "backward cropped the padded gradient as dxp[..., :H, :W], its first rows and columns, where the "
        "padding of {p} sits at both ends", "crop both ends: {t} = dxp[:, :, {p}:-{p}, {p}:-{p}] (pad = {p})",
        _CONV),
    "pad-crop-off": Record(
        "padding cropped too late", "{t} is the correct gradient shifted by {s} along its last two axes, the other "
        "way: backward cropped the padded gradient {s} row(s) and column(s) too late, dxp[..., p+{s}:p+{s}+H, "
        "p+{s}:p+{s}+W]", "crop from the pad: {t} = dxp[:, :, p:p+H, p:p+W] (dxp[:, :, p:-p, p:-p])", _CONV),
    "tanh-square-inside": Record(
        "tanh square missing", "{t} is what backward gives with tanh's derivative taken as 1 - out where "
        "1 - out**2 is due (out = the tanh forward returns): the square is missing",
        "tanh'(z) = 1 - tanh(z)**2, so dz = dout * (1 - out**2) with out = tanh(z) cached in forward, e.g. "
        "next_h in an RNN step", _ACT),
    "sigmoid-one-minus-inside": Record(
        "sigmoid's (1 - out) missing", "{t} is what backward gives with sigmoid's derivative taken as out where "
        "out * (1 - out) is due (out = the sigmoid forward returns): the factor (1 - out) is missing",
        "sigmoid'(z) = s * (1 - s), so dz = dout * out * (1 - out) with out = sigmoid(z) cached in forward", _ACT),
    "derivative-at-output": Record(
        "activation derivative at the output", "{t} is what backward gives with {name}'s derivative evaluated at "
        "forward's output out = {name}(z) instead of at z, the activation's input (the pre-activation, e.g. z = X @ W "
        "+ b): {got} where {right} is due (e.g. self.activation.backward(self.activation(Z), dY) where "
        "self.activation.backward(Z, dY) is due)", "evaluate the derivative at z, cached in forward: dz = dout * {fix}",
        _ACT),
    "sigmoid-one-plus-inside": Record(
        "sigmoid's (1 - out) written (1 + out)", "{t} is what backward gives with sigmoid's derivative taken as "
        "out * (1 + out) where out * (1 - out) is due (out = the sigmoid forward returns): a plus where the minus is "
        "due", "sigmoid'(z) = s * (1 - s), so dz = dout * out * (1 - out) with out = sigmoid(z)", _ACT),
    "derivative-at-input-inside": Record(
        "derivative of the input", "{t} is what backward gives with {act}'s derivative written in its output, {right} "
        "(out = {act}(z)), given z, the activation's input, instead: {got}", "evaluate it at the output: {fix}", _ACT),
    # Nielsen's backprop(x, y) (network.py, network2.py) with one line changed (:data:`_BACKPROP_LINES`)
    "backprop-line": Record(
        "a line of backprop", "{t} is what backprop gives with {got} where {right} is due{why}", "{fix}",
        "07-sequential.md"),
    # one LSTM step's backward with one line changed (:func:`_lstm_signature`; newuser35 L1)
    "lstm-line": Record(
        "a line of the LSTM step's backward", "{t} is what an LSTM step's backward gives with {got} where {right} is "
        "due{why}", "{fix}", "32-lstm.md"),
    "rnn-line": Record(  # _rnn_signature (bugs43 M1: RNNPreactDeriv, RNNWhCurrent)
        "a line of the RNN's backward through time", "{t} is what a tanh RNN's backward through time gives with "
        "{got} where {right} is due{why}", "{fix}", "31-rnn-bptt.md"),
    "cost-delta-factor": Record(
        "the cost and its delta disagree", "{t} is exactly the gradient of {form}, the cost whose output delta "
        "backprop starts from ({delta}), but the cost forward computes, {fn}, is {c:.6g} times that: the cost and "
        "its delta disagree by a factor {c:.6g}, so every gradient is {inv:.6g} times the gradient of the cost",
        "make them one cost: {fix}"),
    "loop-overwrites": Record(
        "assigned in a loop, not added", "{t} is the contribution of the output's {which} {where} alone (summed over "
        "the output's other axes): backward assigns (=) {t} in its loop over {loop} where it must add (+=), so each "
        "pass overwrites the one before and only the {which} survives",
        "start from zeros before the loop and accumulate: {t}[...] += ... (np.zeros_like before the loop, += "
        "inside it)", _CONV),
    "swapped-upstream": Record(
        "upstream gradients swapped", "{t} is the gradient for dY[{a}] and dY[{b}] swapped: backward uses the "
        "upstream gradient of output {a} where output {b}'s is due, and vice versa",
        "match each upstream gradient to its own output: backward's arguments (dY[0], dY[1], ...) come in the "
        "order forward returns its outputs", _NUM),
    "repeated-index": Record(
        "repeated ids", "{t} keeps one update per row where an index repeats ({k} of {rows} rows of "
        "{t} are looked up more than once by {x}): {t}[idx] += dY (or = dY) is numpy's buffered "
        "fancy-index assignment, in which the last occurrence of a row wins",
        "accumulate with np.add.at({t}, idx, dY), which adds every occurrence", "30-embedding.md"),
    "permuted-upstream": Record(
        "permuted dY", "{t} is the gradient for a permuted upstream gradient: backward used "
        "{words} in place of dY", "e.g. dY.reshape(F, -1) where dY.transpose(1, 0, 2, "
        "3).reshape(F, -1) is due", _CONV),
    "dy-one-entry": Record(
        "one entry of dY", "{t} is the gradient for one entry of dY{per} alone, its {pos} nonzero one ({where}), the "
        "other {left} entries of dY left out: backward uses one entry of dY{per} (a return inside the loop over dY's entries"
        "{skip}), which is right only when dY has one nonzero entry{per}, as a cross-entropy's gradient of a softmax's "
        "output has for a one-hot label, not for the gradient of another loss",
        "use every entry of dY: add up the contributions of all of them (the loop without its early return, += across "
        "its entries), or compute them at once, as a product with all of dY"),
    "wrong-values": Record(
        "no known bug pattern", "{t} differs from the correct gradient{count} (no known bug "
        "pattern){where}: got {got:.6g}, expected {exp:.6g}", lesson=_NUM),
}

#: Codes of the bug signatures :func:`name_signature` and the layer-aware detectors recognise.
SIGNATURES = tuple(list(DIAGNOSES)[list(DIAGNOSES).index("transposed"):])

#: The lesson of each kind of layer :func:`_layer_kind` recognises (by shapes and forward, never by the class's name).
LAYER_LESSONS = {"Conv": _CONV, "Pool": "21-pooling.md", "BatchNorm": _NORM, "LayerNorm": "23-layernorm.md",
                 "RNN": "31-rnn-bptt.md", "GRU": "32b-gru.md", "LSTM": "32-lstm.md",
                 "Dropout": "24-dropout.md"}  # a random forward held (:func:`_name_layer`), its mask missing
#: The lessons of a bug signature's family that the recognised layer's own lesson takes the place of (newuser31 F1,
#: F3: lesson 23's own LayerNorm bug pointed to the BatchNorm lesson, a Conv2D's db to the Linear one): each teaches
#: the bug in one other layer (a Linear's, a BatchNorm's, a Conv2D's, a plain RNN's) or in none (numerical gradients,
#: for "no known bug pattern"), or the signature has no lesson.
_FAMILY_LESSONS = frozenset({"", _LIN, _NUM, _NORM, _CONV, "31-rnn-bptt.md"})


def _find(code: str, tensor: str | None = None, severity: str = "error", **fields: Any) -> Finding:
    """The :class:`Finding` of ``code`` with its table text filled in (``t`` is the tensor)."""
    rec = DIAGNOSES[code]
    msg = rec.message.format(t=tensor, **fields)
    hint = "; " + rec.hint.format(t=tensor, **fields) if rec.hint else ""
    return Finding(code, msg + hint, tensor, severity)


def _said_once(errs: Sequence[Finding]) -> list[str]:
    """The sentences of ``errs``, one for the findings whose sentences differ only in the tensor they name
    (tester20s: "dX ..., dW ..., db ..." the same words three times), naming them all: "dX, dW, db ..."."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in errs:
        t = f.tensor
        key = (f.code, re.sub(rf"(?<![\w.]){re.escape(t)}(?![\w\[])", "\0", f.sentence()) if t else f.sentence())
        groups.setdefault(key, []).append(f)
    out = []
    for (_, text), fs in groups.items():
        names = list(dict.fromkeys(f.tensor for f in fs if f.tensor))
        if len(names) < 2:
            out.append(fs[0].sentence())
            continue
        text = re.sub(r"\0 (\w+)", lambda g: "\0 " + _PLURAL.get(g[1], g[1][:-1] if g[1].endswith("s") else g[1]),
                      text, count=1)
        # newuser22: two were said as the first alone ("dQ is 1.73205 times ...", dK's left out)
        both = " and ".join(names) if len(names) == 2 else ", ".join(names)
        out.append(re.sub(r"(\w+'?\w* )?\0( \w+)?", functools.partial(_again, both=both), text.replace("\0", both, 1)))
    return out


#: Words after which a tensor's name is part of a noun phrase ("the correct dX is"), not a pronoun's place.
_DETERMINERS = {"the", "a", "an", "correct", "numerical", "backward's", "one", "nonzero", "whole"}


def _again(g: re.Match, *, both: str) -> str:
    """A later mention of several tensors in one sentence (:func:`_said_once`): "they" before a verb ("so they
    lack"), the names after a determiner ("the correct dX and dW are"), else "them" ("backward never computes
    them"; session 22 kept the template's "it" for two tensors)."""
    before, word = g[1] or "", (g[2] or "")[1:]
    verb = _PLURAL.get(word) or (word[:-1] if len(word) > 2 and word.endswith("s") and word not in ("as", "its")
                                 else word if word in ("would", "will", "can", "must") else None)
    after = f" {verb}" if verb is not None else g[2] or ""
    if before.strip().lower() in _DETERMINERS:
        return f"{before}{both}{after}"
    return f"{before}{'they' if verb is not None else 'them'}{after}"


#: The verbs a finding's sentence starts with, for several tensors (:func:`_said_once`).
_PLURAL = {"is": "are", "has": "have", "does": "do", "was": "were"}


@dataclass
class Finding:
    """One thing found: ``code`` (a key of :data:`DIAGNOSES`), ``message`` (a plain sentence),
    ``tensor`` (``"dW"`` or None), ``severity`` (``error``: a bug, ``warning``: suspicious,
    ``info``: what the checker did)."""

    code: str
    message: str
    tensor: str | None = None
    severity: str = "error"
    #: the kind of the checked layer (a key of :data:`LAYER_LESSONS`, :func:`_layer_kind`), or "" when not recognised
    layer: str = ""

    def sentence(self) -> str:
        """The message as one sentence: stripped, with a final period."""
        s = self.message.strip()
        return s if s.endswith(".") else s + "."

    @property
    def name(self) -> str:
        """The diagnosis's short name."""
        return DIAGNOSES[self.code].name if self.code in DIAGNOSES else self.code

    @property
    def lesson(self) -> str:
        """``lessons/<file>.md`` that explains it, or "": a bug signature's in a recognised layer (``layer``) is that
        layer's lesson when the signature's own teaches it in another layer or in none (:data:`_FAMILY_LESSONS`),
        else the signature's (lesson 32b's gated path, lesson 02's activations)."""
        rec = DIAGNOSES.get(self.code)
        own = rec.lesson if rec else ""
        if self.layer in LAYER_LESSONS and self.code in SIGNATURES and (own in _FAMILY_LESSONS or self.layer == "Dropout"):
            own = LAYER_LESSONS[self.layer]
        return f"lessons/{own}" if own else ""


@dataclass
class Probe:
    """Outcome of one structural check: ``passed`` None when skipped (``detail`` says why)."""

    name: str
    passed: bool | None
    detail: str = ""


@dataclass
class Diagnosis:
    """What :func:`diagnose_layer` found: ``findings`` (structural first, then signatures),
    ``probes``, ``result`` (the comparison of the numbers alone, whose ``passed`` does not see the findings: read
    :attr:`passed`; None when the probes stopped the check), ``error`` (what stopped it),
    ``sublayer`` (index and diagnosis of a model's first failing layer), ``training`` and the
    ``other_modes``' diagnoses."""

    name: str
    findings: list[Finding] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    result: CheckResult | None = None
    error: GradcheckError | None = None
    sublayer: tuple[int, Diagnosis] | None = None
    training: bool | None = None
    other_modes: list[Diagnosis] = field(default_factory=list)
    #: the parameters constant at init (zeros, ones) for which the layer was checked again at drawn values
    #: (:func:`at_drawn_params`); ``drawn_failed``: that check failed, and this diagnosis is its
    drawn: list[str] = field(default_factory=list)
    drawn_failed: bool = False
    #: of ``drawn``, the weights without gradients (the seed protocol's), and the words of their values ("zeros")
    drawn_seed: list[str] = field(default_factory=list)
    drawn_words: str = ""
    #: the check at drawn values is the only one (weights without gradients all zero at init)
    drawn_only: bool = False
    #: forward's constants beyond the drawn input around which the layer was checked again (:func:`at_straddled_inputs`),
    #: the input's name and its largest magnitude; ``straddle_failed``: that check failed, and this diagnosis is its
    straddled: list[float] = field(default_factory=list)
    straddle_span: tuple[str, float] | None = None
    straddle_failed: bool = False
    #: the inputs of that check (``straddle_failed``)
    straddle_at: list | None = field(default=None, repr=False)
    #: why whether the training forward's mask is fixed could not be decided within :data:`MAX_ROUNDS` rounds at
    #: :data:`AGREEMENT_CHANCE` (:func:`_random_reference`): every gradient is then NOT CHECKED ("" when decided)
    mask_undecided: str = ""
    #: float constructor arguments at a value that can hide a wrong backward (p = 0.5), each ``(name, value, other)``,
    #: with which the layer was built again and checked (:func:`at_other_args`); ``args_failed``: that check failed
    #: (its argument the last one), and this diagnosis is its
    other_args: list[tuple[str, float, float]] = field(default_factory=list)
    args_failed: bool = False

    @property
    def passed(self) -> bool:
        """No error finding or stopping error, every comparison within tolerance, in every mode."""
        return (self.error is None and not self.codes and self.result is not None
                and self.result.passed and all(d.passed for d in self.other_modes))

    @property
    def modes(self) -> list[str]:
        """The training modes diagnosed, this one first (``["training", "eval"]``)."""
        return [mode_word(d.training) for d in [self, *self.other_modes] if d.training is not None]

    @property
    def held(self) -> str:
        """How a random forward was held for the check in this mode (a :data:`HELD` code), or ""."""
        return next((f.code for f in self.findings if f.code in HELD), "")

    @property
    def codes(self) -> list[str]:
        """The codes of the error findings, in order."""
        return [f.code for f in self.errors]

    @property
    def errors(self) -> list[Finding]:
        """The error findings, in order."""
        return [f for f in self.findings if f.severity == "error"]

    def sentence(self) -> str:
        """The diagnosis in one or two sentences (PASS/FAIL first)."""
        errs, head = self.errors, f"FAIL: {self.name}: "
        if self.passed:
            kinks = sum(len(v) for v in self.result.kinks.values())
            excluded = f" ({kinks} element(s) at a kink excluded)" if kinks else ""
            return f"PASS: {self.name}: every gradient matches{excluded}."
        if errs:
            errs = errs[:1] if errs[0].code in ("first-failing-layer", "sublayer-not-checked") else errs
            return head + " ".join(list(dict.fromkeys(_said_once(errs)))[:3])
        if self.error is not None:
            return head + str(self.error)
        if self.result is not None and self.result.unchecked and not self.result.failing_tensors:
            step = [r.tensor for r in self.result.records if any(c.unchecked == "step" for c in r.comparisons)]
            atol = [t for t in self.result.unchecked if t not in step]
            pen = [r.tensor for r in self.result.records if any(c.unchecked == "penalty" for c in r.comparisons)]
            conv = [r.tensor for r in self.result.records if any(c.unchecked == "converge" for c in r.comparisons)]
            atol = [t for t in atol if t not in pen and t not in conv]
            why = ([f"the penalty term of {', '.join(pen)} is not checked (see the notes)"] if pen else []) + (
                [f"the finite differences of {', '.join(conv)} do not converge at this input scale, so a bug cannot "
                 "be told from their error; check the layer on a smaller input (entries near 1)"] if conv else []) + (
                [f"the atol of {', '.join(atol)} passes any gradient of its size (see the notes)"] if atol else []) + (
                [f"{', '.join(step)} differ(s) from central differences at eps={self.result.eps:g} only within their "
                 "truncation error, so at this step a bug cannot be told from the step's; drop --eps (eps=None in "
                 "Python) to check at the default step"] if step else [])
            return f"NOT CHECKED: {self.name}: {'; '.join(why)}: no verdict."
        what = self.result.mismatch() if self.result else "gradient mismatch in ?"
        return head + f"{what} (no known bug pattern; see the worst elements above)."

    def flagged(self) -> dict[tuple[str, str], str]:
        """``(result name, tensor) -> finding name`` of the error findings naming a tensor, in every mode:
        the table marks a row whose compared elements agree as failed by that check (:func:`gradcheck.result.format_table`
        keeps those whose row passed; newuser24 L4)."""
        return {(d.result.name, t.strip()): f.name for d in [self, *self.other_modes]
                if d.result is not None for f in d.errors if f.tensor for t in f.tensor.split(",")}

    def notes(self) -> list[str]:
        """The failed probes and the notes (warnings, what the checker did), as printed."""
        failed = [f"{p.name} ({p.detail})" if p.detail else p.name for p in self.probes if p.passed is False]
        lines = ["structural checks failed: " + "; ".join(failed)] if failed else []
        others = [f for d in self.other_modes for f in d.findings]
        # the notes of every mode checked (e.g. a training mask held)
        return lines + [f"note: {f.message}" for f in self.findings + others
                        if f.severity != "error"]

    def report(self) -> str:
        """The check's table, the failed probes, the notes, the lessons, the sentence."""
        lines = [self.result.table(flagged=self.flagged()), ""] if self.result is not None else []
        lines += [V.wrap(line) for line in self.notes()]
        lessons = dict.fromkeys(f.lesson for f in self.errors if f.lesson)
        lines += [f"read: {', '.join(lessons)}"] if lessons else []
        if self.sublayer is not None:
            i, sub = self.sublayer
            lines += ["", f"first failing layer: layers[{i}] = {sub.name}", sub.report()]
        return "\n".join(lines + ["", V.wrap(self.sentence())]).strip("\n")

    def _result_dict(self) -> dict[str, Any]:
        """``result.to_dict()`` with the rows the table marks ``FAIL (<check>)`` (:meth:`flagged`: compared elements
        that agree, the tensor found wrong by another check) ``passed: false`` and ``failed_by`` that check, and the
        result's ``passed`` false with them (newuser42 F1: the JSON said ``passed: true`` for a row the table failed).
        ``self.result`` itself stays the comparison of the numbers alone."""
        out, flagged = self.result.to_dict(), self.flagged()
        for row in out["rows"]:
            if (check := flagged.get((self.result.name, row["tensor"]))) is not None:
                row.update(passed=False, failed_by=check)
                out["passed"] = False
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary."""
        err, sub = self.error, self.sublayer
        return {"name": self.name, "passed": self.passed, "sentence": self.sentence(),
                "findings": [vars(f) | {"name": f.name, "lesson": f.lesson} for f in self.findings],
                "probes": [vars(p).copy() for p in self.probes],
                "result": None if self.result is None else self._result_dict(),
                "error": None if err is None else {"type": type(err).__name__, "message": str(err),
                                                   "exit_code": err.exit_code},
                "first_failing_layer": sub and {"index": sub[0], **sub[1].to_dict()},  # or None
                "training": self.training,
                "other_modes": [d.to_dict() for d in self.other_modes]}


# ------------------------------------------------------------- the layer as the checker calls it


def adapter_call(layer: Any, name: str, *args: Any) -> Any:
    """The adapters' ``name(layer, *args)`` in the process where ``layer`` lives: a sandboxed layer's in its child
    (:meth:`gradcheck.sandbox.RemoteLayer.adapter`), any other here, on the student's object behind an adapter where
    :data:`gradcheck._sandbox_child.ADAPTER_CALLS` says the child's is. ``name``: ``hold_random`` (``how="fix_mask"``:
    ``fix_mask(True)`` on it and the layers inside it, the class names of those fixed, ``""`` none; ``"unfix_mask"``,
    ``"rewind"``, ``"release"``), ``random_draws`` (``{generator: fingerprint}``: two differ after a call that drew),
    ``state_values``, ``set_weights`` (``values``), ``set_variant`` (``index``), ``numpy_patched`` (``{"np.dot":
    module of its replacement}``: numpy's functions the checked code replaced) or ``penalty_numbers`` (``{name:
    value}``: the regulariser strengths it holds) or ``same_draws`` (``seed``: its generators set from it) or
    ``set_pair_keywords`` (``values``: a function pair's dict arguments set, None: put back) or ``reused_layers``
    (the indices of one object its ``layers`` list holds twice) or ``grads_values`` (its ``grads`` dict's arrays now)."""
    from . import _adapters
    from ._sandbox_child import ADAPTER_CALLS

    if _remote(layer):
        return layer.adapter(name, *args)
    return getattr(_adapters, name)(getattr(layer, "obj", layer) if ADAPTER_CALLS[name][1] else layer, *args)


#: How many more forwards look for a difference when three agreed but moved the layer's generators
#: (:meth:`_Probes.differing`): 0.735 ** 43 < 2e-6 for a Dropout(0.05) on 6 entries (all kept: 0.95 ** 6 = 0.735)
CHANCE_FORWARDS = 43

#: How many times a held mask that drops every entry is drawn again (:meth:`_Probes.redraw`): 5 draws of a
#: 4x3 mask at p = 0.5 all drop every entry with probability 2**-60
_REDRAWS = 4


def _remote(layer: Any) -> bool:
    """Whether ``layer`` lives in a sandbox's child (a :class:`gradcheck.sandbox.RemoteLayer`)."""
    from .sandbox import RemoteLayer

    return isinstance(layer, RemoteLayer)


class _Proxy(Wrapper):
    """The layer as the checker calls it: copies inputs, optionally rewinds random generators."""

    def __init__(self, layer: Any, rewind: bool = False):
        self._layer = layer
        self._rngs = _find_rngs(layer) if rewind else []
        self._states = [_rng_state(r) for r in self._rngs]
        self._global = global_states() if rewind else None
        # a sandboxed layer: its generators are rewound in its child
        self.remote = adapter_call(layer, "hold_random", "rewind") if rewind and _remote(layer) else ""
        fwd = layer.forward

        def forward(*xs, training=False):
            self.rewind()
            self.received = [layout_copy(x) if isinstance(x, np.ndarray) else np.array(x, copy=True) for x in xs]
            return fwd(*self.received, training=training)

        with contextlib.suppress(TypeError, ValueError):  # what training_modes reads
            forward.__signature__ = inspect.signature(fwd)
        self.forward, self.backward = forward, layer.backward
        #: the arrays the last forward was given (the copies above): a backward's write into one is the caller's
        #: array (:func:`gradcheck.sources.cache_write_verdict`)
        self.received: list = []
        many = getattr(layer, "forward_many", None)
        # a sandboxed layer: chunked scans (numerical.many_scan)
        if callable(many) and (not rewind or self.remote):
            self.forward_many = many

    def rewind(self) -> None:
        for r, s in zip(self._rngs, self._states):
            _rng_state(r, s)
        if self._global is not None:
            global_states(self._global)

    params = property(lambda self: getattr(self._layer, "params", None))
    grads = property(lambda self: getattr(self._layer, "grads", None))

    def __deepcopy__(self, memo: dict) -> _Proxy:
        """A proxy of a copy of the layer, whose forward and backward are the copy's (copied as attributes, they were
        this layer's: :func:`gradcheck._large_inputs.at_large_inputs` ran the original on its copy)."""
        return _Proxy(copy.deepcopy(self._layer, memo), rewind=bool(self._rngs) or self._global is not None)


#: The codes of the notes saying how a random forward was held fixed for the check.
HELD = ("held-mask", "rewound-rng")

#: ``twin_note`` of a mode whose forward is random: the twin is not compared there.
RANDOM_TWIN = ("the forward is random in this mode: its draws were held fixed for manual vs "
               "numerical, but the autoprop twin draws its own mask, which gradcheck cannot make "
               "the same as the checked layer's, so the twin is not compared in this mode")


#: A note of a mode whose forward is random: the reference (a layer of ours) is not compared there.
RANDOM_REFERENCE = ("the forward is random in this mode: its draws were held fixed for manual vs "
                    "numerical, but the reference draws its own mask, so the reference is not "
                    "compared in this mode")


def _hold(layer: Any, run) -> tuple[_Proxy, str, dict[str, str]] | None:
    """Hold a random forward fixed: the layer's own ``fix_mask(True)`` (also of layers inside it),
    else its numpy generators and numpy's global one rewound before every forward.

    ``run(obj)`` calls ``obj.forward`` on the probe inputs. Returns ``(proxy, code, fields)``: the
    layer as the check should call it, the :data:`HELD` code and its :data:`DIAGNOSES` fields; None
    when neither makes two calls agree (a generator made anew inside forward).
    """
    if fixed := adapter_call(layer, "hold_random"):
        run(layer)
        if _exact(run(layer), run(layer)):
            return _Proxy(layer), "held-mask", {"fixed": fixed}
    proxy = _Proxy(layer, rewind=True)
    if _exact(run(proxy), run(proxy)):
        rngs = sorted({type(r).__name__ for r in proxy._rngs})
        what = ", ".join(rngs) or proxy.remote or global_names(layer)
        return proxy, "rewound-rng", {"what": what}
    return None


def held_forward(layer: Any, inputs: Sequence[np.ndarray], owner: str,
                 training: bool = False) -> tuple[_Proxy | None, str]:
    """The layer as the check calls it, a random forward held fixed the way the check holds it.

    Three forwards on ``inputs``; when they differ, the draws are held by :func:`_hold` (the
    layer's ``fix_mask(True)``, else its generators rewound before every forward), as
    :func:`diagnose_layer` holds them. ``gradcheck check --jacobian`` calls it.

    Parameters
    ----------
    layer : object
        manualprop layer protocol (a :class:`gradcheck.sandbox.RemoteLayer` is held in its child).
    inputs : sequence of ndarray
        The probe inputs (copied for every call).
    owner : str
        The layer's name in error messages.
    training : bool, default False
        The mode of the probe forwards.

    Returns
    -------
    proxy : object or None
        ``proxy.forward(*xs, training=False)`` calls the layer with copies of ``xs`` and the draws
        held; a sandboxed layer's proxy has its ``forward_many``. None when the forward is random
        and cannot be held (a generator made anew inside forward).
    how : str
        ``""`` (deterministic: three calls agree), ``"held-mask"`` or ``"rewound-rng"`` (the
        :data:`HELD` codes), or ``"random"`` (not held).

    Raises
    ------
    StudentCodeError
        The layer's forward raised.
    """
    call = V.forward_call(layer, V.input_names(layer, len(inputs)), training)  # as made (M6)

    def run(obj):
        Y = V.call_student(obj.forward, *[x.copy() for x in inputs], training=training,
                           owner=owner, call=call)
        return np.asarray(Y, dtype=np.float64)

    Y1, Y2, Y3 = run(layer), run(layer), run(layer)
    if _exact(Y1, Y2) and _exact(Y1, Y3):
        return _Proxy(layer), ""
    held = _hold(layer, run)
    return (None, "random") if held is None else (held[0], held[1])


def _seed_advice(layer: Any) -> str:
    """How to hold a random forward fixed: a CS231n pair's ``*_param`` seed, else a mask switch."""
    kws = getattr(layer, "keyword_names", None)
    if kws is None and (proto := _protocol(layer, "cs231n")):
        kws = proto.get("init")
    ps = [str(k) for k in kws or () if str(k).endswith("_param")]
    if ps:
        p = "dropout_param" if "dropout_param" in ps else ps[0]
        return (f"fix the seed the CS231n way: give {p} a 'seed' (CS231n's dropout_forward calls "
                f"np.random.seed({p}['seed']) when it is there), e.g. --init "
                f"'{{\"{p}\": {{..., \"seed\": 0}}}}', or pass the mask in from outside")
    return ("draw the mask from a generator the layer makes once and stores (self.rng = "
            "np.random.default_rng(seed) in __init__, self.rng.random(X.shape) in forward; a constructor "
            "taking rng= gets a seeded one from gradcheck), or from numpy's global generator "
            "(np.random.rand, np.random.random): gradcheck rewinds a stored generator and the global one "
            "before every forward, but not one made anew inside forward; or give the layer a fix_mask(on) "
            "method after which forward reuses the mask it drew for each input shape, like "
            "manualprop.Dropout.fix_mask(True)")


#: The calls whose arguments seed a generator (np.random.default_rng(s), np.random.seed(s), random.seed(s), ...).
_SEEDERS = frozenset({"default_rng", "seed", "RandomState", "Random", "Generator", "SeedSequence", "PCG64",
                      "PCG64DXSM", "MT19937", "Philox", "SFC64"})


def _per_call_seeds(layer: Any) -> list[str]:
    """The attributes (``"self.calls"``) the layer's class passes to a generator's seed
    (``np.random.default_rng(self.calls)``, ``np.random.seed(self.step)``, :data:`_SEEDERS`) and changes outside
    ``__init__`` (``self.calls += 1``): a generator seeded anew on every call, whose draws gradcheck can neither
    rewind (no generator lives between calls) nor hold by restoring what it reads. Read with :mod:`ast` from
    the file of the class (a sandboxed layer's too) and of its bases defined there; [] when it cannot be read."""
    if (where := _layer_file(layer)) is None:
        return []
    path, name = where
    seeded, changed = set(), set()

    def attrs(node):
        return {a for n in ast.walk(node) if (a := self_attr(n))}

    for c in file_classes(path, name)[1]:
        for fn in (f for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for n in ast.walk(fn):
                f = n.func if isinstance(n, ast.Call) else None
                if f is not None and (f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")) in _SEEDERS:
                    seeded |= set().union(*(attrs(a) for a in [*n.args, *(k.value for k in n.keywords)]))
                if fn.name != "__init__" and isinstance(n, ast.AugAssign):
                    changed |= attrs(n.target) & {getattr(n.target, "attr", None)}
                elif fn.name != "__init__" and isinstance(n, ast.Assign):
                    changed |= {t.attr for t in n.targets if isinstance(t, ast.Attribute)} & attrs(n.value)
    return [f"self.{a}" for a in sorted(seeded & changed)]


def _layer_file(layer: Any) -> tuple[str, str] | None:
    """``(path, class name)`` of ``layer``'s class (a sandboxed layer's: its copy in the sandbox; an adapted one's:
    the student's class), or None."""
    obj = getattr(layer, "obj", layer) if not _remote(layer) else layer
    try:
        path = (os.path.join(layer._sandbox.workdir, layer.file) if _remote(layer)  # its copy in the sandbox
                else inspect.unwrap(type(obj).forward).__code__.co_filename)
        return path, layer.class_name if _remote(layer) else type(obj).__name__
    except (TypeError, AttributeError):
        return None


def layer_classes(layer: Any) -> tuple[list[str], list]:
    """``(lines of its file, [ast.ClassDef of its class and of its bases defined there])`` of ``layer``
    (:func:`_layer_file`, :func:`gradcheck._switch_reach.file_classes`); ``([], [])`` when the file cannot be read."""
    if (where := _layer_file(layer)) is None or not (classes := file_classes(*where)[1]):
        return [], []
    try:
        with open(where[0], encoding="utf-8") as fh:
            return fh.read().splitlines(), classes
    except (OSError, UnicodeDecodeError):
        return [], []


def _per_call_advice(seeds: list[str]) -> str:
    """The ``non-deterministic`` finding's advice for a generator seeded on every call (:func:`_per_call_seeds`)."""
    return (f"forward seeds a new generator from {', '.join(seeds)}, which it changes on every call, so each call "
            "draws another mask and gradcheck cannot hold it fixed: seed once in __init__ (self.rng = "
            "np.random.default_rng(seed)) and draw from self.rng in forward (self.rng.random(X.shape)), which "
            "gradcheck rewinds before every forward")


def _protocol(layer: Any, kind: str | None = None) -> Mapping | None:
    """The ``protocol`` description of a layer (a sandboxed one's; an adapted one's own) when it is of ``kind``
    (None: any), or None."""
    proto = getattr(layer, "protocol", None)
    return proto if isinstance(proto, Mapping) and kind in (None, proto.get("protocol")) else None


def _missing_gradients(layer: Any) -> list[str]:
    """The weights of an attribute-style layer whose gradient backward does not set, beside weights with theirs
    (:func:`gradcheck._adapters.missing_gradients`: a sandboxed layer's from its protocol, a local one's as
    :func:`gradcheck._adapters.adapt` marked it), else []."""
    from ._adapters import Adapted, missing_gradients

    if (proto := _protocol(layer)) is not None:
        return missing_gradients(proto)
    own = vars(layer).get("missing_gradients") if isinstance(layer, Adapted) else None
    return list(own) if isinstance(own, list) else []


def _dx_after_step(layer: Any) -> str:
    """The learning rate a layer whose backward steps its own weights was given (``"0.25"``) when the dX it returns
    depends on it (:func:`gradcheck._adapters.stored_results`: dX computed with the stepped weights), else ""."""
    from ._adapters import LR_PROBE

    if (proto := _protocol(layer)) is not None:
        flagged = proto.get("dx_after_step") is True

    else:
        flagged = getattr(type(getattr(layer, "obj", layer)), "_gradcheck_dx_after_step", False) is True
    return f"{LR_PROBE:g}" if flagged else ""


def _exact(a: Any, b: Any) -> bool:
    """Bit-for-bit equal (NaN equals NaN): :func:`gradcheck.compare.close` with zero tolerances."""
    return close(a, b, 0.0, 0.0, equal_nan=True)


def _same(a: Any, b: Any) -> bool:
    """Equal up to round-off: two runs of the same computation (rtol 1e-12, atol 1e-14)."""
    return close(a, b, 1e-12, 1e-14)


def _reset_grads(layer: Any, value: float = 0.0) -> None:
    g = getattr(layer, "grads", None)
    for v in g.values() if isinstance(g, Mapping) else ():
        if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.flags.writeable:
            v.fill(value)


def _as_list(ret: Any, n: int) -> list[Any]:
    return [ret] if n == 1 else list(ret) if isinstance(ret, (tuple, list)) else [ret] * n


def _f64(proxy: Any, training: bool):
    """``forward(*xs)`` in float64, in one training mode."""
    return lambda *x: np.asarray(proxy.forward(*x, training=training), dtype=np.float64)


def _low_precision(dtype, inputs) -> bool:
    """A float dtype narrower than float64 while the float inputs are float64."""
    dt = np.dtype(dtype)
    return dt.kind == "f" and dt.itemsize < 8 and any(x.dtype == np.float64 for x in inputs)


def _float32_values(Y: np.ndarray, inputs) -> bool:
    """Every value of a float64 ``Y`` is a float32 number while the inputs are float64: the forward
    computed in float32 and cast back (its round-off, about 6e-8 relative, swamps a difference
    quotient at h = 6e-6). Needs 4 or more non-integer values: by chance each is float32 with
    probability 2**-29."""
    frac = Y[np.isfinite(Y) & (Y != np.round(Y))]
    return (frac.size >= 4 and any(x.dtype == np.float64 for x in inputs)
            and bool(np.all(frac.astype(np.float32).astype(np.float64) == frac)))


#: :func:`_float32_inside`'s steps, in float32 spacings of each entry: below its resolution, and 8192
#: times that (about 2**-12 relative)
_BELOW32, _ABOVE32 = 0.25, 2048.0
#: three quarters of a float32 spacing: the inputs and parameters round to their float32 neighbours
_ACROSS32 = 0.75
#: the most round-off (:func:`_float32_grid`'s ``noise``) named float32 off its grid: float32 parts give up to
#: about 0.8; a float64 LayerNorm adding 1e7 (33 bits cancelled) 8 to 30
_NOISE32 = 3.0


def _probe_points(fwd, inputs, params, dtype, seed: int, ts):
    """``fwd`` at the float64 inputs and ``params`` rounded to ``dtype``, each moved along one random sign
    pattern by ``t`` spacings of ``dtype`` for each ``t`` in ``ts`` (entries near 0 get the spacing of 2**-10
    of the largest, of 1e-6 for all zeros): ``(outputs, keys)`` with the float64 parameters' ``keys``, or
    None when nothing is float64 or the forward cannot run so. Parameters are moved in place and restored."""
    base = {i: x.astype(dtype).astype(np.float64) for i, x in enumerate(inputs) if x.dtype == np.float64}
    keys = [k for k, p in params.items() if np.asarray(p).dtype == np.float64]
    if not base:
        return None
    base.update({k: params[k].astype(dtype).astype(np.float64) for k in keys})
    saved, rng = {k: params[k].copy() for k in keys}, np.random.default_rng([seed, 32])

    def spacing(v):
        floor = max(float(np.max(np.abs(v), initial=0.0)) * 2.0 ** -10, 1e-6)
        return np.spacing(np.maximum(np.abs(v), floor).astype(dtype)).astype(np.float64)

    dirs = {k: spacing(v) * rng.choice([-1.0, 1.0], size=np.shape(v)) for k, v in base.items()}

    def at(t):
        for k in keys:
            np.copyto(params[k], base[k] + t * dirs[k])
        return np.asarray(fwd(*[base[i] + t * dirs[i] if i in base else x for i, x in enumerate(inputs)]))

    try:
        return [at(t) for t in ts], keys
    except Exception:  # noqa: BLE001 - a forward that cannot run so names nothing
        return None
    finally:
        for k, v in saved.items():
            np.copyto(params[k], v)


def _float32_inside(fwd, inputs, params, seed: int = 0) -> dict[str, Any] | None:
    """The :data:`DIAGNOSES` fields of "float32-inside", or None: part of ``fwd`` computes in float32.

    From the float64 inputs and ``params`` rounded to float32, every entry moves along one random
    sign pattern by a quarter of the float32 spacing there (no float32 number changes: a part of
    forward computed from float32 copies does not move at all), then by 8192 times that (about
    2**-12 relative: that part moves with the rest). A float64 forward gives each entry of Y the
    same central difference, scaled, for both (its round-off at the small step is about 2**-27
    relative, doubled per bit cancelled inside; the truncation at the large one about 2**-24); a
    forward with float32 inside another one wherever its float32 part matters. Named when at least 2 entries, and 5% of them,
    differ by more than 5% of their change plus 1024 float64 spacings of the largest entry of Y (per
    small step): a kink crossed by the large step moves one entry. None also when the forward cannot
    be run so, or gives another Y on a second call at the same point. The outcome depends on no
    summation order: a float32 part sees the very same float32 numbers at both points of the small
    step, and a float64 part's order changes its differences by far less than 5%.

    The fields also hold ``coarse``: how many entries of Y have a central difference at the large
    step and at twice it that differ by over 5% plus 16 float32 spacings of the largest entry (per
    large step). A float32 part is resolved there (2048 spacings: 5e-4 relative noise); a forward
    that rounds to a coarser grid (np.round, float16) jumps by whole steps of its grid at one of the
    two and not at the other.
    """
    ts = (0.0, _BELOW32, -_BELOW32, _ABOVE32, -_ABOVE32, 2 * _ABOVE32, -2 * _ABOVE32, _ACROSS32, -_ACROSS32, 0.0)
    got = _probe_points(fwd, inputs, params, np.float32, seed, ts)
    if got is None:
        return None
    (y0, *ys, y1), keys = got
    if not _exact(y0, y1) or not all(y.shape == y0.shape for y in ys):
        return None  # random, or a state it updates: not a float32 matter
    small, large, twice, across = (kernel("central", [p, m], [t, -t])[0]
                                   for p, m, t in zip(ys[::2], ys[1::2], ts[1:-1:2]))
    if not all(np.all(np.isfinite(q)) for q in (small, large, twice, across)):
        return None
    # float64 round-off of the small step's differences, 10 bits cancelled inside forward allowed
    floor = 2.0 ** 10 * float(np.spacing(np.max(np.abs(y0), initial=0.0))) / (2 * _BELOW32)
    diff = np.abs(small - large)
    bad = diff > 0.05 * np.abs(large) + floor
    if bad.sum() < max(2, 0.05 * bad.size):
        return None
    worst = np.unravel_index(int(np.argmax(np.where(bad, diff, -1.0))), bad.shape)
    floor32 = 16.0 * float(np.spacing(np.float32(np.max(np.abs(y0), initial=0.0)))) / (2 * _ABOVE32)
    coarse = np.abs(large - twice) > 0.05 * np.abs(twice) + floor32
    return {"what": " and parameters" if keys else "", "k": int(bad.sum()), "n": bad.size,
            "at": f"[{', '.join(map(str, worst))}]" if worst else "",
            "ratio": float(small[worst]) / float(large[worst]) + 0.0 if large[worst] else float("inf"),
            "coarse": int(coarse.sum()), **_float32_grid(bad, small, large, across, [y0, *ys[2:6]])}


def _float32_grid(bad, small, large, across, grid) -> dict[str, Any]:
    """Whether the precision :func:`_float32_inside` finds lost is float32's (session 12): ``aligned``, its
    grid is the float32 grid of the inputs and parameters (a cast of them): at three quarters of a spacing
    they round to their neighbours, so the central difference there exceeds the quarter step's by 4/3 of
    the part that did not move (the large step's minus the small one's) in half of the ``bad`` entries; a
    rounding of something computed (float32 or cancellation in float64) lies elsewhere and mostly does not
    move at either. ``noise``: the round-off of Y at the points ``grid`` (0, +-1 and +-2 large steps), in
    float32 spacings of Y's largest entry: the median of the fourth difference (exact on cubics) over its
    median for independent unit round-off; about 1 or less when the part rounded is float32, several when
    forward adds a large number in float64 and cancels more than float32's 29 bits (X * 1e-3 + 1e7)."""
    moved = across[bad] - small[bad]
    rest = large[bad] - small[bad]
    aligned = int(np.sum(np.abs(moved - rest * 4.0 / 3.0) < 0.25 * np.abs(rest))) * 2 >= int(bad.sum())
    fourth = grid[4] - 4 * grid[2] + 6 * grid[0] - 4 * grid[1] + grid[3]  # points at +-2, +-1, 0 large steps
    unit = float(np.spacing(np.float32(np.max(np.abs(grid[0]), initial=0.0)))) or 1.0
    return {"aligned": aligned, "noise": float(np.median(np.abs(fourth))) / (unit * 0.674 * np.sqrt(70 / 12))}


#: :func:`_float16_cast`'s steps in float16 spacings: a quarter and an eighth (no float16 number changes)
_BELOW16 = (0.25, 0.125)


def _float16_cast(fwd, inputs, params, seed: int = 0) -> bool:
    """Whether ``fwd`` casts its inputs or parameters to float16: at the inputs and parameters rounded to
    float16, moving them by a quarter and by an eighth of float16's spacing (two random sign patterns)
    gives the same central difference in every entry of Y, up to float64 round-off: the float16 part
    does not move at all, the rest (a float64 bias added after it) moves in proportion. A rounding to an
    absolute grid (np.round(v, 3)) of anything computed from them jumps at one step and not at the other
    wherever it lies near a step of the grid."""
    for s in range(2):
        ts = (0.0, *(u * t for t in _BELOW16 for u in (1, -1)))
        got = _probe_points(fwd, inputs, params, np.float16, seed + s, ts)
        if got is None:
            return False
        y0, *ys = got[0]
        floor = 2.0 ** 10 * float(np.spacing(np.max(np.abs(y0), initial=0.0))) / (2 * _BELOW16[1])
        quarter, eighth = (kernel("central", [p, m], [t, -t])[0] for p, m, t in zip(ys[::2], ys[1::2], _BELOW16))
        if not close(quarter, eighth, 1e-6, floor):
            return False
    return True


def _precision_inside(fwd, inputs, params, seed: int = 0) -> tuple[str, dict[str, Any]] | None:
    """``(code, fields)`` of what makes the central differences of ``fwd`` noise although its output is
    float64, or None: "float32-inside" (:func:`_float32_inside`, on float32's grid or with its round-off
    :func:`_float32_grid`; None for more round-off, a float64 forward that cancels more bits); else, when 2 entries and a tenth of Y
    jump at float32's large step (its ``coarse``: a grid coarser than float32's), "float16-inside" for a
    forward that casts its inputs or parameters to float16 (:func:`_float16_cast`), else
    "piecewise-constant" (np.round, np.floor, a cast to an integer type or to float16 of something
    computed)."""
    f32 = _float32_inside(fwd, inputs, params, seed)
    if f32 is None:
        return None
    if f32["coarse"] < max(2, 0.1 * f32["n"]):
        # float32's grid, or round-off float32 would make: else a float64 forward cancels more bits than
        # float32 holds (the noise finding names it, with the advice for it)
        return ("float32-inside", f32) if f32["aligned"] or f32["noise"] <= _NOISE32 else None
    return ("float16-inside" if _float16_cast(fwd, inputs, params, seed) else "piecewise-constant"), f32


# ------------------------------------------------------------- signatures from the numbers alone

_SWAP = ("swap the factors of the product (for a Linear: dW = dY.T @ X if W is (out, in), "
         "X.T @ dY if W is (in, out))")


#: The fix of a transposed input gradient in a layer without weights (an activation's dX: no product to swap).
_INPUT_SWAP = "return {t} in its input's shape: a .T too many (e.g. dY.T * mask where dY * mask is due)"
#: The fix of a transposed input gradient of a layer with weights (review28g L3: a transposed dX was told dW's fix).
_WEIGHTED_INPUT_SWAP = ("return {t} in its input's shape, (N, in) for X of shape (N, in): a .T too many (for a "
                        "Linear: {t} = dY @ W.T if W is (in, out), dY @ W if W is (out, in))")


def is_bias_gradient(tensor: str, shape: Sequence[int] | None, parameter: bool | None = None) -> bool:
    """Whether gradient ``tensor`` is a bias's, as :func:`name_signature`'s ``is_bias`` takes it (a ``1/batch``
    factor then "the mean over the batch, not the sum"), decided by its role and shape, never by its display name:
    the gradient of a parameter (not of an input) of a row's shape, ``(d,)`` or ``(1, d)``: one value per feature
    broadcast over the batch, whose gradient sums over the batch (``b``, ``biases``, ``beta``, Deep Learning from
    Scratch 2's ``params[1]``, a per-feature scale). Andrew Ng's ``(d, 1)`` column ``b`` is not: his course's ``db =
    np.sum(dZ, axis=1, keepdims=True) / m`` (session 24's merge). The one rule of check's signatures and the grader's
    numbers (review25g L3: the grader read every ``db...`` as a bias; review26g L3: a list-style ``dparams[1]`` of
    shape (d,) got "an extra 1/batch" where a dict layer's ``db`` got "the mean over the batch").

    Parameters
    ----------
    tensor : str
        The gradient's name (``"db"``, ``"dparams[1]"``, ``"dX"``): read only when ``parameter`` is None.
    shape : sequence of int or None
        The parameter's (or its gradient's) shape; None: not a parameter (False).
    parameter : bool, optional
        Whether ``tensor`` is a parameter's gradient; None (a caller that does not know): unless it is named as an
        input's (:func:`gradcheck._validation.grad_key` ``X``, ``x``, ``input`` or ``inputs``).

    Returns
    -------
    bool
    """
    if shape is None:
        return False
    shape = tuple(shape)
    if parameter is None:
        parameter = V.grad_key(tensor).lstrip("@").lower() not in ("x", "input", "inputs")
    return bool(parameter) and (len(shape) == 1 or len(shape) == 2 and shape[0] == 1)


def name_signature(tensor: str, manual: Any, numerical: Any, *, is_bias: bool = False,
                   n_batch: int = 1, y_size: int = 0, alternatives: Mapping[str, Any] | None = None,
                   tol: float = 1e-5, atol: float = 1e-9, fallback: bool = False,
                   hint: str | None = None, dy: float = 1.0, loss: bool = False) -> Finding | None:
    """Name the bug behind a wrong gradient from the numbers alone (also the grader's diagnosis).

    Parameters
    ----------
    tensor : str
        Display name (``"dW"``).
    manual, numerical : array_like
        The gradient under suspicion and the correct one (NaN: unknown, e.g. a kink; left out).
    is_bias, n_batch, y_size, dy : bool, int, int, float; default False, 1, 0, 1.0
        A bias (a ``1/batch`` factor is "the mean over the batch, not the sum"), the batch
        size, the output's size (for "batch x positions"), the upstream gradient of a scalar
        output (a loss written as a layer).
    alternatives : mapping of str to array_like, optional
        Known wrong answers keyed by their sentences.
    tol, atol : float, default 1e-5, 1e-9
        Tolerances of "matches after the transformation".
    fallback : bool, default False
        Return the worst-element finding (``"wrong-values"``) instead of None.
    hint : str, optional
        How to fix a transposed gradient (from :func:`_layout_hint`); default: swap the factors.
    loss : bool, default False
        ``manual`` is a loss's gradient ``dL/dy_pred`` (N, D): a factor D or N*D is the loss's
        normalisation (a mean over all N*D elements divided by N, or not at all).

    Returns
    -------
    Finding or None
        None when ``manual`` matches, ``numerical`` is all NaN, or nothing is recognised (no
        ``fallback``).

    Examples
    --------
    >>> import numpy as np
    >>> n = np.arange(1.0, 7.0).reshape(2, 3)
    >>> name_signature("dW", -n, n).code, name_signature("dW", n, n)
    ('wrong-sign', None)
    >>> name_signature("db", n / 8, n, is_bias=True, n_batch=8).message[:45]
    'db is the mean over the batch, not the sum: i'
    """
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    ok = np.isfinite(n)

    def match(a, b):  # the one rule, where the correct gradient is known
        return close(np.where(ok, a, 0), np.where(ok, b, 0), tol, atol)

    if m.shape != n.shape:
        found = (_reshape_signature(tensor, m, n, ok, match)
                 or _shape_signature(m, n, lambda a, b: close(a, b, tol, atol), hint))
        if found[0] == "wrong-shape" and ok.any() and _ones_apart(m.shape, n.shape):
            # (C,) for (1, C), values wrong too: both said, the values as for the right shape (tester26s: a
            # dgamma 8x too small was told "a reshape or transpose went wrong" alone)
            inner = name_signature(tensor, m.reshape(n.shape), n, is_bias=is_bias, n_batch=n_batch, y_size=y_size,
                                   tol=tol, atol=atol, fallback=True, hint=hint, dy=dy, loss=loss)
            found = found if inner is None else ("wrong-shape", {"how": (
                f"has shape {V.fmt_shape(m.shape)}, expected {V.fmt_shape(n.shape)} (only a size-1 axis differs), "
                f"and its values are wrong too: {inner.message}")})
    elif not ok.any() or match(m, n):
        return None
    else:
        found = next((("alternative", {"sentence": s}) for s, alt in (alternatives or {}).items()
                      if np.shape(alt) == m.shape and match(m, np.asarray(alt, dtype=np.float64))),
                     None)
        if found is None and not np.all(np.abs(n[ok]) < 1e-12):
            found = _value_signature(m, n, ok, match, is_bias, n_batch, y_size, hint, dy)
            if found is not None and found[0] == "zero":  # the tensor named, not "it": said once for several
                found = "zero", {**found[1], "why": f"backward never computes {tensor} (or overwrites {tensor} "
                                                    "with zeros)"}
            if loss and found is not None and found[0] == "factor":
                found = _normalisation(tensor, found[1]["c"], m.shape, n_batch) or found
    if found is not None:
        return _find(found[0], tensor, **found[1])
    return _worst_element(tensor, m, n, tol, atol) if fallback else None


def name_log_eps(tensor: str, manual: Any, numerical: Any, y_true: Any, y_pred: Any,
                 rtol: float = 1e-6) -> Finding | None:
    """A loss whose forward takes ``log(y + c)`` (a small eps) while backward is the gradient of
    ``log(y)`` (Deep Learning from Scratch's ``cross_entropy_error``): named from the numbers alone.

    For each reading of the loss, ``-sum(w * log(y + c))`` with ``y`` = softmax(y_pred) (scores),
    y_pred itself (probabilities) or sigmoid(y_pred) with its ``1 - y`` term (binary), ``w`` the
    targets (labels one-hot encoded), ``manual`` must be ``k`` times its gradient at ``c = 0`` (to
    1e-8; ``k`` the normalisation, e.g. 1/N) and ``numerical`` ``k`` times its gradient at one
    ``c`` in (0, 0.01] (fitted by least squares, then one secant step), to a residual below 5% of
    the mismatch. A real bug changes ``manual`` itself, so it is never read as this.

    Parameters
    ----------
    tensor : str
        Display name (``"dy_pred"``).
    manual, numerical : array_like, shape (N, K)
        Backward's gradient and the central differences of forward.
    y_true : array_like, shape (N, K) or (N,) of int
        The targets (integer labels are one-hot encoded).
    y_pred : array_like, shape (N, K)
        The prediction the loss was evaluated at.
    rtol : float, default 1e-6
        The check's tolerance (the hint gives the next power of 10 above the mismatch).

    Returns
    -------
    Finding or None
        The ``"log-eps"`` finding, None when no reading explains both gradients.
    """
    m, n, yp = (np.asarray(a, dtype=np.float64) for a in (manual, numerical, y_pred))
    w = np.asarray(y_true)
    if w.dtype.kind in "iu" and w.shape == yp.shape[:-1] and yp.ndim == 2:
        w = np.eye(yp.shape[-1])[w]
    if not (m.shape == n.shape == yp.shape == w.shape and yp.ndim == 2 and np.isfinite(n).all()) \
            or close(m, n, rtol):
        return None
    w = w.astype(np.float64)
    sm, sg = softmax(yp), 1 / (1 + np.exp(-yp))
    readings = [("softmax(y_pred) (scores)", sm, lambda c, a=sm: -(w / (a + c) * a - a * np.sum(
                    w / (a + c) * a, axis=-1, keepdims=True))),
                ("sigmoid(y_pred) and 1 - y (binary)", sg,
                 lambda c, a=sg: -(w / (a + c) - (1 - w) / (1 - a + c)) * a * (1 - a))]
    if np.all(yp > 0):
        readings.append(("y_pred (probabilities)", yp, lambda c, a=yp: -w / (a + c)))
    gap = np.abs(m - n).max()
    for what, _, grad in readings:
        g0 = grad(0.0)
        k = float(np.sum(m * g0) / max(np.sum(g0 * g0), 1e-300))
        if k <= 0 or not close(m, k * g0, 1e-8, 1e-12):
            continue
        d = (k * grad(1e-6) - k * g0) / 1e-6  # d(gradient)/dc near 0
        c = float(np.sum((n - k * g0) * d) / max(np.sum(d * d), 1e-300))
        if 0 < c <= 1e-2:  # one secant step on the residual along d
            c2 = c * 1.01
            r1, r2 = (np.sum((n - k * grad(x)) * d) for x in (c, c2))
            c = c - r1 * (c2 - c) / (r2 - r1) if r2 != r1 else c
        if 0 < c <= 1e-2 and np.abs(n - k * grad(c)).max() <= 0.05 * gap:
            rel = float(relative_error(m, n, 1e-300).max())
            return _find("log-eps", tensor, rel=rel, c=c, y=what, advice=rtol_advice(rel, rtol))
    return None


#: The largest --rtol the log-eps advice suggests: above it a tolerance would hide real bugs (tester13 M2).
MAX_ADVISED_RTOL = 1e-2


def rtol_advice(rel: float, rtol: float) -> str:
    """The fix of a log-eps finding whose largest relative error is ``rel`` (the check's ``rtol``): the next power
    of 10 above it as ``--rtol`` when that is at most :data:`MAX_ADVISED_RTOL`, which the CLI accepts; else no
    rtol (the CLI takes none of 1 or more, and one near 1 passes a wrong sign), only removing the eps."""
    r = 10.0 ** math.ceil(math.log10(max(rel, rtol) * 1.0001))
    drop = "the eps from forward's log (np.log(np.maximum(y, tiny)) only changes values below tiny)"
    if r <= MAX_ADVISED_RTOL:
        return f"--rtol {r:.0e} accepts it, or drop {drop}"
    return (f"no sensible --rtol accepts a relative error of {rel:.2g} (one that large would hide real bugs): "
            f"remove {drop}, or compute the loss with a numerically stable log-softmax (z - logsumexp(z)), "
            "which needs no eps")


def _reshape_signature(tensor, m, n, ok, match) -> tuple[str, dict] | None:
    """The right values in the wrong shape: ``m`` reshaped to ``n``'s shape is ``n`` (NaN in ``n``:
    left out; all NaN: values unknown, nothing said). Only size-1 axes differing: keepdims."""
    if m.size != n.size or not ok.any() or not match(m.reshape(n.shape), n):
        return None
    var = V.grad_key(tensor) if tensor.startswith(("d", "_")) and len(tensor) > 1 else None
    fields = {"got": V.fmt_shape(m.shape), "expected": V.fmt_shape(n.shape),
              "whose": f", the shape of {var}" if var else ""}
    to = f"{tensor}.reshape({var}.shape)" if var else f"{tensor}.reshape{V.fmt_shape(n.shape)}"
    if tuple(k for k in m.shape if k != 1) != tuple(k for k in n.shape if k != 1):
        return "values-right-shape-wrong", fields | {
            "how": "the elements are in the right order, only the shape differs",
            "fix": f"reshape {tensor} to {var + chr(39) + 's' if var else 'the'} shape: {to}"}
    extra = m.shape.count(1) - n.shape.count(1)
    keep = f"keep the axis (a sum with keepdims=True) or reshape: {to}"
    how = ("the shape lacks a size-1 axis" if extra < 0 else "the shape has an extra size-1 axis"
           if extra > 0 else "a size-1 axis is in the wrong place")
    # an extra axis: db = dY.sum(axis=0, keepdims=True) for a bias of shape (out,)
    fix = keep if extra <= 0 else ("drop the extra axis: sum without keepdims (dY.sum(axis=0), not "
                                   f"dY.sum(axis=0, keepdims=True)) or reshape: {to}")
    return "values-right-shape-wrong", fields | {"how": how, "fix": fix}


def _shape_signature(m, n, match, hint=None) -> tuple[str, dict]:
    """A gradient whose shape differs from the correct one's (NaN in ``n``: values unknown)."""
    gs, es = V.fmt_shape(m.shape), V.fmt_shape(n.shape)
    if m.ndim == n.ndim == 2 and m.shape == n.shape[::-1] and match(m.T, n):
        return "transposed", {"how": f"it has shape {gs}, the transpose of {es}",
                              "fix": hint or _SWAP}
    kept = m.ndim == n.ndim and m.ndim and n.shape[0] == 1 < m.shape[0] and m.shape[1:] == n.shape[1:]
    if m.ndim == n.ndim + 1 and m.shape[1:] == n.shape or kept:  # (N, H) for (H,), or for (1, H) (tester30k M5)
        summed = m.sum(axis=0, keepdims=bool(kept))
        return "not-summed", {"how": (
            f"was not summed over the batch: it has shape {gs}, one row per example, but the "
            f"correct gradient has shape {es}" if match(summed, n)
            else f"has an extra batch axis: shape {gs}, expected {es}"),
            "sum": "dY.sum(axis=0, keepdims=True), which keeps the size-1 axis of shape " + es if kept
            else "dY.sum(axis=0)"}
    f = _permutation(m, n, match) if m.size == n.size and np.isfinite(n).all() else None
    same = ": same number of elements, a reshape or transpose went wrong" * (m.size == n.size)
    return f or ("wrong-shape", {"how": f"has shape {gs}, expected {es}" + same})


def _worst_element(tensor: str, manual, numerical, rtol: float, atol: float) -> Finding:
    """The fallback finding: how many elements are wrong and the worst one (NaN in ``numerical``:
    skipped); ``atol`` is the one the tensor was compared with, or each element's own (an array: check42's entries
    judged at their own round-off, :func:`gradcheck.check._judged_locally`)."""
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    ok = np.isfinite(n)
    rel = relative_error(m, np.where(ok, n, 0.0), tiny=np.maximum(np.asarray(atol, dtype=np.float64) / rtol, 1e-300))
    rel = np.where(ok, np.nan_to_num(rel, nan=np.inf), 0.0)
    idx = () if not rel.size else tuple(int(i) for i in np.unravel_index(int(np.argmax(rel)),
                                                                          rel.shape))
    # one element: no count, no position (a 0-d dalpha has no index to show)
    some = "" if ok.all() else " sampled"  # a sample's entries alone were differenced (newuser23 M1: 44 of 90000)
    count, where = ((f" in {int(np.sum(rel > rtol))} of {int(ok.sum())}{some} elements",
                     f"; the largest error is at {tensor}{list(idx)}") if m.size > 1 else ("", ""))
    return _find("wrong-values", tensor, count=count, where=where, got=m[idx], exp=n[idx])


def _value_signature(m, n, ok, match, is_bias, n_batch, y_size, hint=None,
                     dy=1.0) -> tuple[str, dict] | None:
    """Same shape: zeros, sign, transposed, flipped, permuted, then the constant factors."""
    if np.all(m == 0):  # all of it, not only where the correct gradient is known (a sample)
        return "zero", {"what": " is",
                        "why": "backward never computes it (or overwrites it with zeros)"}
    if match(m, -n):
        return _softmax_ce(n, n_batch, dy) or ("wrong-sign", {})
    if m.ndim == 2 and m.shape[0] == m.shape[1] and match(m.T, n):
        return "transposed-square", {"shape": V.fmt_shape(m.shape), "fix": hint or _SWAP}
    for flip, written in (_KERNEL_FLIPS[0][1:], _KERNEL_FLIPS[1][1:])[:(m.ndim >= 3) + (m.ndim == 4)]:
        if match(m[flip], n):  # a kernel (F, C, kh, kw), or (kh, kw, cin, cout) (tester27s: CS189's)
            return "flipped-kernel", {"which": f" ({written})", "fix": "compute it by "
                                      f"cross-correlation, as the forward does (no {written})"}
    if ok.all() and (f := _permutation(m, n, match)) is not None:
        return f
    c = _ls_factor(m[ok], n[ok])
    if not (abs(c - 1) > 1e-3 and abs(c) > 1e-12 and match(m, c * n)):
        return None
    k = y_size // m.size if m.size and y_size % m.size == 0 else 0
    counts = [(n_batch, f"batch size {n_batch}", "the batch")]  # newuser31 F3: a Conv2D's db averaged over both
    counts += [(k, f"{k} summed positions: batch x positions", "the batch and the positions")] \
        if k > 1 and k != n_batch else []
    for count, words, over in counts:  # the counts a wrong 1/count can come from
        if abs(c * count - 1) < 1e-6:
            code = "bias-mean" if is_bias else "factor-inverse-batch"
            return code, {"count": count, "words": words + _TWO * (count == 2), "over": over}
        if abs(c / count - 1) < 1e-6:
            return "factor-batch", {"count": count, "words": words}
    if ok.sum() == 1:  # one number is always some multiple of another: only a simple ratio is named
        simple = [p / q for p in range(1, 5) for q in range(1, 5) if p != q]
        if not any(abs(c / r - 1) < 1e-6 for r in simple):
            return None
    more = ""
    if inv := _times_too_small(c):  # tester20s: "0.111111 times": 9 times too small
        per = k // n_batch if k and n_batch and k % n_batch == 0 else 0
        more = f" ({inv} times too small" + (
            f"; {inv} = the {per} output positions per sample, e.g. H*W: a division by them too many" * (per == inv)) + ")"
    return "factor", {"c": c, "more": more}  # one phrase: "2 times the correct gradient" (not "twice ... (x2)")


def _ls_factor(m: np.ndarray, n: np.ndarray) -> float:
    """The least-squares factor ``c`` of ``m`` over ``n``, ``sum(m n) / sum(n n)`` (the ``c`` that makes ``c n``
    nearest to ``m``): the one estimate of the constant factor a gradient is off by."""
    return float(np.sum(m * n) / np.sum(n * n))


def _times_too_small(c: float) -> int:
    """``k`` when the constant factor ``c`` of a gradient over the correct one is ``1/k`` for an integer ``k >= 2``
    (to a relative 1e-6), else 0: the one rule behind "k times too small" (a factor 0.111111 reads as 9 times too
    small; tester20s), for :func:`name_signature` and the factor that does not follow the batch."""
    inv = round(1 / c) if c and np.isfinite(c) else 0
    return inv if abs(c) < 1 and inv >= 2 and abs(1 / c - inv) < 1e-6 * inv else 0


def loss_finding(loss: Any, result: CheckResult, y_true: Any, y_pred: Any,
                 init: Mapping[str, Any] | None = None, reference: Any = None) -> Finding | None:
    """The diagnosis of a loss's failing gradient, as ``gradcheck check --loss`` says it: the named bug
    (:func:`name_loss_gradient`: ``"dx is 6 times too large (batch size 6): ..."``), else the worst element's line
    when the gradient fails (tester21s M6), else None.

    Parameters
    ----------
    loss : object
        The loss checked (``forward(y_true, y_pred) -> float``, ``backward()``; a CS231n function through
        :func:`gradcheck.loss_function`).
    result : CheckResult
        :func:`gradcheck.check.check_loss`'s result, with manual and numerical gradients.
    y_true, y_pred : array_like
        The data it was checked at.
    init : mapping, optional
        The arguments ``loss`` was built with (``--init``), for a penalty's convention.
    reference : object, optional
        The ``--reference`` loss the result compared (a factor N named the batch's only where rows agree with it).

    Returns
    -------
    Finding or None
        Its ``message`` is the diagnosis (no final full stop).
    """
    g = check_module.loss_gradient_name(loss)
    if (found := layout_finding(result)) is not None:  # the memory-layout rerun alone failed (session 42)
        return found
    if g not in result.gradients.get("manual", {}) or g not in result.gradients.get("numerical", {}):
        return None
    m, n = result.gradients["manual"][g], result.gradients["numerical"][g]
    n_batch = np.shape(y_pred)[0] if np.ndim(y_pred) else 1
    if (found := name_batch_reduction(g, result, n_batch, loss.forward, y_true, y_pred, reference)) is not None:
        return found  # (its gradient agrees with its own L: no finding of m against n)
    finding = name_loss_gradient(g, m, n, loss.forward, y_true, y_pred, result.rtol, check_module.loss_arg_names(loss),
                                 loss=loss, init=init)
    if finding is None and g in result.failing_tensors:
        finding = _worst_element(g, m, n, result.rtol, result.atol_of(g))
    return finding


def batch_reduction(forward: Callable[[Any, Any], Any], y_true: Any, y_pred: Any, reference: Any = None) -> str | None:
    """``"sum"`` when ``forward(y_true, y_pred)`` is the sum of its values on each row alone (``y_true[i:i+1]``,
    ``y_pred[i:i+1]``), ``"mean"`` when it is their mean, else None (another reduction, a loss that cannot run on one
    row, a batch under 2, or, with a ``reference`` loss, a row whose value differs from the reference's there, where a
    sum and a mean over the batch agree): the test that a factor N between a loss and its reference is the batch's
    (verify40b F2: a 0.5 * mean MSE at batch 2, or a doubled cross-entropy, was told to change its reduction). Each
    forward runs again on the whole batch last, so that its cache is the checked call's."""
    yt, yp = np.asarray(y_true), np.asarray(y_pred)
    if yp.ndim == 0 or len(yp) < 2 or yt.ndim == 0 or len(yt) != len(yp):
        return None
    losses = [forward] if reference is None else [forward, reference.forward]
    try:
        with np.errstate(all="ignore"):
            rows = [[float(f(yt[i:i + 1].copy(), yp[i:i + 1].copy())) for i in range(len(yp))] for f in losses]
            whole = [float(f(yt.copy(), yp.copy())) for f in losses][0]
    except Exception:  # noqa: BLE001 - a loss that needs a batch: no reduction read
        return None
    if reference is not None and not close(np.array(rows[0]), np.array(rows[1])):
        return None
    if close(whole, math.fsum(rows[0])):
        return "sum"
    return "mean" if close(whole, math.fsum(rows[0]) / len(yp)) else None


def name_batch_reduction(tensor: str, result: CheckResult, n_batch: int, forward: Callable[[Any, Any], Any],
                         y_true: Any, y_pred: Any, reference: Any = None) -> Finding | None:
    """A loss whose ``L`` and ``tensor`` (dL/dy_pred) are both ``N`` times the reference's (``N`` the batch size), or
    both ``1/N`` times, while ``tensor`` agrees with central differences of its own ``L``: it reduces over the batch
    otherwise than the reference (a sum where the reference averages, or the reverse). verify39 F6: a summed
    cross-entropy beside ``manualprop.SoftmaxCrossEntropy`` was "dy_pred differs from the correct gradient in 0 of
    30 elements (no known bug pattern)".

    Parameters
    ----------
    tensor : str
        The gradient's display name (``"dy_pred"``), a tensor of ``result``.
    result : CheckResult
        :func:`gradcheck.check.check_loss`'s result with a reference (``L``'s manual-vs-reference comparison and the
        ``"reference"`` gradient).
    n_batch : int
        The batch size ``N`` (axis 0 of y_pred).
    forward, y_true, y_pred : callable, array_like
        The loss's ``forward(y_true, y_pred)`` and the data it was checked at: the factor is named the batch's only
        where the loss is the sum (or mean) of its rows' values (:func:`batch_reduction`).
    reference : object, optional
        The reference loss (``forward(y_true, y_pred)``): each row's value must be the reference's there.

    Returns
    -------
    Finding or None
        ``factor-normalisation`` of ``L``, naming ``N`` and the fix.
    """
    recs = {r.tensor: r for r in result.records}
    cl = recs["L"].get("manual-vs-reference") if "L" in recs else None
    own = recs[tensor].get("manual-vs-numerical") if tensor in recs else None
    m, r = (result.gradients.get(s, {}).get(tensor) for s in ("manual", "reference"))
    if n_batch < 2 or cl is None or cl.passed or own is None or not own.passed or m is None or r is None:
        return None
    both = f"L and {tensor} are the reference's"
    agree = f"{tensor} agrees with central differences of this L"
    big = close(cl.worst_a, n_batch * cl.worst_b) and close(m, n_batch * np.asarray(r))
    small = not big and close(n_batch * cl.worst_a, cl.worst_b) and close(n_batch * np.asarray(m), r)
    if not (big or small) or batch_reduction(forward, y_true, y_pred, reference) != ("sum" if big else "mean"):
        return _element_reduction(cl, m, r, tensor, forward, y_true, y_pred) or _constant_loss_factor(cl, m, r, tensor)
    if big:
        return _find("factor-normalisation", "L", count=n_batch, big="large", why=(
            f"{both} times N = {n_batch}, the batch size, and {agree}: the loss sums over the batch where the "
            f"reference averages; divide by N (a mean over the batch), L and {tensor} alike (if the sum is what "
            "you mean, build the reference with it: --reference-init '{\"reduction\": \"sum\"}')"))
    return _find("factor-normalisation", "L", count=n_batch, big="small", why=(
        f"{both} divided by N = {n_batch}, the batch size, and {agree}: the loss averages over the batch "
        f"where the reference sums; multiply by N (a sum over the batch), L and {tensor} alike (if the mean is "
        "what you mean, build the reference with it: --reference-init '{\"reduction\": \"mean\"}')"))


def _element_reduction(cl: Any, m: Any, r: Any, tensor: str, forward: Callable[[Any, Any], Any], y_true: Any,
                       y_pred: Any) -> Finding | None:
    """``L`` and ``tensor`` both ``S`` (or ``1/S``) times the reference's, ``S = y_pred.size`` above the batch size,
    while the loss is the sum (or mean) of its rows' values (:func:`batch_reduction`, no reference): it reduces over
    every element otherwise than the reference (verify40b F3: an MSE summed over all elements beside
    manualprop.MeanSquaredError, which averages over all, was a constant factor of 30 at 6 x 5); None otherwise."""
    size, n = int(np.size(y_pred)), len(np.asarray(y_pred)) if np.ndim(y_pred) else 1
    if size <= n or not cl.worst_b:
        return None
    c = cl.worst_a / cl.worst_b
    big = close(c, size) and close(m, size * np.asarray(r))
    if not (big or close(c * size, 1.0) and close(size * np.asarray(m), r)):
        return None
    if batch_reduction(forward, y_true, y_pred) != ("sum" if big else "mean"):
        return None
    dims = " x ".join(str(d) for d in np.shape(y_pred))
    if big:
        return _find("factor-normalisation", "L", count=size, big="large", why=(
            f"L and {tensor} are the reference's times {size}, the number of elements of y_pred ({dims}), and {tensor} "
            "agrees with central differences of this L: the loss sums over all elements where the reference averages "
            f"over all of them; divide by y_pred.size (np.mean over every element), L and {tensor} alike (if the sum "
            "is what you mean, build the reference with it: --reference-init '{\"reduction\": \"sum\"}')"))
    return _find("factor-normalisation", "L", count=size, big="small", why=(
        f"L and {tensor} are the reference's divided by {size}, the number of elements of y_pred ({dims}), and "
        f"{tensor} agrees with central differences of this L: the loss averages over all elements where the reference "
        f"sums over them; multiply by y_pred.size (a sum over every element), L and {tensor} alike (if the mean is "
        "what you mean, build the reference with it: --reference-init '{\"reduction\": \"mean\"}')"))


def _constant_loss_factor(cl: Any, m: Any, r: Any, tensor: str) -> Finding | None:
    """``L`` and ``tensor`` both ``c`` times the reference's (one constant, not 1) while ``tensor`` agrees with this
    ``L`` (:func:`name_batch_reduction`'s caller checked that): a constant factor in the loss's formula, named as one
    (verify40b F2: a 0.5 * mean MSE was "0 of 6 elements (no known bug pattern)"); None otherwise."""
    c = cl.worst_a / cl.worst_b if cl.worst_b else math.nan
    if not np.isfinite(c) or c == 0 or close(c, 1.0) or not close(m, c * np.asarray(r)):
        return None
    k, big = (c, "large") if abs(c) > 1 else (1 / c, "small")
    return _find("factor-normalisation", "L", count=f"{k:.6g}", big=big, why=(
        f"L and {tensor} are both {c:.6g} times the reference's, and {tensor} agrees with central differences of "
        "this L: the loss's formula has a constant factor the reference's has not (a 0.5 in front of a square, a "
        "term doubled, a sum over features where the reference averages?); not the batch's reduction alone (the "
        "factor is not N, or the rows alone differ by it too)"))


def loss_precision(loss: Any, result: CheckResult, y_true: Any, y_pred: Any) -> Finding | None:
    """The precision finding (:func:`_precision_inside`: "float32-inside", float16, a rounding) of a loss whose check
    failed or excused elements as kinks, as a layer's (tester29s H3: Ng's costFunction with ``h = sigmoid(X @
    theta).astype(np.float32)`` was "no known bug pattern ... expected -0.11418" with "2 elements at a kink", the
    expected number float32 noise). L is one number: read at 8 points near ``y_pred`` (y_pred and 7 moved by
    standard-normal steps of 1e-3 of its largest entry, seeded), each an entry of the Y that
    :func:`_precision_inside` moves by fractions of float32's spacing. When named, the elements excused as kinks
    are counted as failures again (:func:`_no_kinks`, a note says so), in ``result``; of a check that passed, float32
    alone is named (a coarser grid found by the kinks a hinge's step crosses is no rounding). None otherwise.

    Parameters
    ----------
    loss : object
        The loss checked (``forward(y_true, y_pred) -> float``).
    result : CheckResult
        :func:`gradcheck.check.check_loss`'s result; its kinks are compared again when named.
    y_true, y_pred : array_like
        The data it was checked at.

    Returns
    -------
    Finding or None
        Its ``message`` is the diagnosis.
    """
    failed = not result.passed and not (result.unchecked and not result.failing_tensors)
    if not failed and not result.kinks:
        return None
    yt, yp = np.asarray(y_true), np.asarray(y_pred, dtype=np.float64)
    rng = np.random.default_rng([result.seed, 29])
    scale = 1e-3 * max(float(np.max(np.abs(yp), initial=0.0)), 1e-3)
    offsets = [np.zeros(yp.shape)] + [rng.standard_normal(yp.shape) * scale for _ in range(7)]

    def fwd(p):
        return np.array([float(loss.forward(yt.copy(), p + o)) for o in offsets])
    prec = _precision_inside(fwd, [yp], {}, result.seed)
    if prec is None or not failed and prec[0] != "float32-inside":  # a hinge's kinks crossed: not a rounding
        return None
    _no_kinks(result, prec[0])
    pred = check_module.loss_arg_names(loss)[0]
    return _find(prec[0], f"L (read at {len(offsets)} points near {pred})", **dict(
        prec[1], verdict=f"no gradient of L can be checked to 1e-6, and the numerical {check_module.loss_gradient_name(loss)} "
        "is that noise, no expected value: no bug in the gradient is named or ruled out"))


def name_loss_gradient(tensor: str, manual: Any, numerical: Any, forward, y_true: Any, y_pred: Any,
                       rtol: float = 1e-6, names: tuple[str, str] = ("y_pred", "y_true"), *, loss: Any = None,
                       init: Mapping[str, Any] | None = None) -> Finding | None:
    """Name the bug behind a loss's wrong ``dL/dy_pred`` (``gradcheck check --loss``): a penalty's gradient of
    another convention than the loss's penalty (:func:`name_loss_penalty`, given ``loss`` and ``init``),
    :func:`name_signature` (a factor of the loss's normalisation), the missing factor of a power
    (:func:`name_power_factor`), else a small constant inside a log (:func:`name_log_eps`).

    Parameters
    ----------
    tensor : str
        Display name (``"dy_pred"``).
    manual, numerical : array_like
        Backward's result and the central differences of L.
    forward : callable
        ``forward(y_true, y_pred) -> L``, the loss as checked.
    y_true, y_pred : array_like
        The data the check used (``y_pred`` of shape (N, ...): N the batch size).
    rtol : float, default 1e-6
        The check's tolerance (for the eps's advice).
    names : tuple of str, default ("y_pred", "y_true")
        forward's names of the prediction and the target (the gradient for the target is named by them).
    loss : object, optional
        The loss checked (its ``loaded_with(init)`` builds it with other arguments), for :func:`name_loss_penalty`.
    init : mapping, optional
        The arguments ``loss`` was built with (``--init``).

    Returns
    -------
    Finding or None
    """
    shape = np.shape(y_pred)
    if loss is not None and init and (found := name_loss_penalty(tensor, manual, numerical, loss, init, y_true,
                                                                 y_pred, names[0])) is not None:
        return found
    if (found := name_target_gradient(tensor, manual, numerical, forward, y_true, y_pred, names)) is not None:
        return found
    if (found := name_ignored_target(tensor, manual, numerical, y_true)) is not None:
        return found
    # a 1-D y_pred is a batch of N scalar predictions (a sigmoid's, Deep Learning from Scratch's SigmoidWithLoss):
    # its missing 1/N is a missing 1/batch (tester25s L: "6 times ... a constant factor", 6 the batch size)
    found = name_signature(tensor, manual, numerical, n_batch=shape[0] if len(shape) else 1,
                           y_size=int(np.prod(shape)), loss=True)
    if found is not None and found.code == "factor":  # 1/2 where L is a square: the square's factor 2
        found = (name_power_factor(tensor, manual, numerical, forward, y_true, y_pred)
                 or name_classes_count(tensor, manual, numerical, shape) or found)
    return (found or name_fused_softmax_ce(tensor, manual, numerical, y_true, y_pred, names[0])
            or name_fused_sigmoid_bce(tensor, manual, numerical, y_true, y_pred, names[0])
            or name_softmax_ce_label(tensor, manual, numerical, y_true, y_pred, names[0])
            or name_label_smoothing(tensor, manual, numerical, y_true, y_pred, names[0])
            or name_hinge_count(tensor, manual, numerical, y_true)
            or name_label_added(tensor, manual, numerical, y_true)
            or name_huber_clip(tensor, manual, numerical, y_true, y_pred)
            or name_huber_branch(tensor, manual, numerical, y_true, y_pred)
            or name_focal_factor(tensor, manual, numerical, y_true, y_pred)
            or name_dice_quotient(tensor, manual, numerical, y_true, y_pred)
            or name_log_eps(tensor, manual, numerical, y_true, y_pred, rtol))


def name_softmax_ce_label(tensor: str, manual: Any, numerical: Any, y_true: Any, y_pred: Any,
                          pred: str = "y_pred") -> Finding | None:
    """The classic slips of the one-line backward of a softmax cross-entropy on logits (Karpathy's "backprop ninja"
    exercise 2, tester30k L3): ``numerical`` is ``(softmax(y_pred) - onehot(y)) * s`` (``s`` = 1/N, a mean, or 1; to
    1e-5), and ``manual`` (to 1e-9) is ``softmax(y_pred) * s`` (the -1 at the label forgotten: manual - numerical =
    onehot * s), ``(softmax(y_pred) - 1) * s`` (1 subtracted everywhere), ``(softmax over axis 0 - onehot) * s``
    (the softmax over the batch) or ``(softmax(y_pred) - onehot / N) / N`` (1/N subtracted at the label, then /N:
    the mean's 1/N twice there). ``y_true``: labels (N,) or one-hot (N, C); ``y_pred``: (N, C) logits. A 1/N
    applied twice to everything is the factor rule's (``factor-inverse-batch``).

    Returns
    -------
    Finding or None
        ``softmax-ce-label``.
    """
    read, z = _class_labels(manual, numerical, y_true), np.asarray(y_pred, dtype=np.float64)
    if read is None or z.shape != read[1].shape or not np.all(np.isfinite(z)):
        return None
    m, n, y, given = read
    onehot, lab = np.eye(z.shape[1])[y], "y" if given else "onehot(y)"
    N, p = z.shape[0], softmax(z, 1)
    scale = next((c for c in (1 / N, 1.0) if close(n, (p - onehot) * c, 1e-5, 1e-9)), None)
    if scale is None or close(m, n, 1e-6, 1e-9):
        return None
    per = f" / N (N = {N})" if scale != 1 else ""
    sm, want = f"softmax({pred})", f"({'softmax(' + pred + ') - ' + lab}){per}" if per else f"softmax({pred}) - {lab}"
    slips = [(p, f"{sm}{per}", f"the -1 at each row's label is missing ({tensor} minus the correct gradient is "
              f"{lab}{per} exactly)", f"subtract 1 at the labels: d{pred}[range(N), y] -= 1" + (", then divide by N"
                                                                                               * bool(per))),
             (p - 1, f"({sm} - 1){per}", "1 is subtracted from every entry, not at the label alone",
              f"subtract 1 at the labels alone: d{pred}[range(N), y] -= 1, not d{pred} -= 1"),
             (softmax(z, 0) - onehot, f"(softmax({pred}, axis=0) - {lab}){per}", "its softmax is taken over the batch "
              "(axis 0), not over the classes (axis 1) as forward's", "normalise over the classes: e = np.exp(z - "
              "z.max(axis=1, keepdims=True)); e / e.sum(axis=1, keepdims=True)")]
    if per:
        slips.append((p - onehot / N, f"({sm} - {lab} / N){per}", "at the label it subtracts 1/N, not 1: the mean's "
                      "1/N is applied there twice", f"d{pred}[range(N), y] -= 1, then divide everything by N once"))
    for value, got, how, fix in slips:
        if close(m, value * scale, 1e-9, 1e-12):
            return _find("softmax-ce-label", tensor, got=got, pred=pred, want=want, how=how, fix=fix)
    return None


def _smoothed_target(g: np.ndarray, p: np.ndarray, y: np.ndarray, scale: float) -> tuple[float, float] | None:
    """``(on, off)`` when ``p - g / scale`` is a smoothed one-hot of the labels ``y``: ``on`` at each row's label,
    ``off`` at every other entry (to 1e-7); else None."""
    t = p - g / scale
    lab = np.zeros(t.shape, dtype=bool)
    lab[np.arange(len(y)), y] = True
    on, off = t[lab], t[~lab]
    if np.ptp(on) > 1e-7 or np.ptp(off) > 1e-7 or abs(float(on[0]) + (t.shape[1] - 1) * float(off[0]) - 1) > 1e-6:
        return None
    return float(on[0]), float(off[0])


def name_label_smoothing(tensor: str, manual: Any, numerical: Any, y_true: Any, y_pred: Any,
                         pred: str = "y_pred") -> Finding | None:
    """A label-smoothed softmax cross-entropy on logits whose backward takes other targets than forward (outside44
    LabelSmoothCEHardGrad, LabelSmoothCEKm1): ``numerical`` is ``(softmax(y_pred) - t) * s`` and ``manual`` ``(softmax(
    y_pred) - t') * s`` (``s`` 1/N or 1) with ``t`` and ``t'`` each a one-hot smoothed by a constant off the label
    (:func:`_smoothed_target`), ``t`` smoothed, ``t'`` another; ``y_true``: labels (N,) or one-hot (N, C).

    Returns
    -------
    Finding or None
        ``label-smoothing-target``.
    """
    read, z = _class_labels(manual, numerical, y_true), np.asarray(y_pred, dtype=np.float64)
    if read is None or z.shape != read[1].shape or not np.all(np.isfinite(z)) or close(read[0], read[1], 1e-6, 1e-9):
        return None
    m, n, y, _ = read
    p = softmax(z, 1)
    for scale in (1 / z.shape[0], 1.0):
        if (want := _smoothed_target(n, p, y, scale)) is None or want[1] < 1e-9 or \
                (got := _smoothed_target(m, p, y, scale)) is None:
            continue
        how = ("the hard one-hot target (the smoothing left out of the gradient)" if got[1] < 1e-12 else
               f"{got[0]:.6g} at the label and {got[1]:.6g} elsewhere")
        return _find("label-smoothing-target", tensor, pred=pred, how=how, on=want[0], off=want[1], K=z.shape[1] - 1,
                     per=" / N" if scale != 1 else "")
    return None


def name_fused_softmax_ce(tensor: str, manual: Any, numerical: Any, y_true: Any, y_pred: Any,
                          pred: str = "y_pred") -> Finding | None:
    """A cross-entropy on probabilities whose backward returns the fused softmax + cross-entropy gradient
    ``(p - y) / N`` (or ``p - y``), the gradient with respect to the logits (tester27s L2: CS189's CrossEntropy,
    MIT 6.036's NLL): ``y_pred`` rows are probability vectors, ``y_true`` one-hot or probabilities of its shape,
    ``manual`` equals ``(y_pred - y_true) / c`` for c = N or 1 (to 1e-9) and the numerical gradient is not it.

    Returns
    -------
    Finding or None
        ``fused-softmax-ce``.
    """
    m, n, P = (np.asarray(a, dtype=np.float64) for a in (manual, numerical, y_pred))
    Y = np.asarray(y_true)
    if P.ndim != 2 or P.shape[1] < 2 or Y.shape != P.shape or m.shape != P.shape or not np.all(np.isfinite(m)) or not (
            np.all(P > 0) and sums_to_one(P, axis=1)):
        return None
    for c, words in ((P.shape[0], f"({pred} - y) / N, N = {P.shape[0]}"), (1, f"{pred} - y")):
        if close(m, (P - Y) / c, 1e-9, 1e-12) and not close(n, m, 1e-6, 1e-9):
            mean = close(n, -Y / P / P.shape[0], 1e-5, 1e-9)
            want = ("-y / (N * " + pred + ")" if mean else "-y / " + pred) if close(
                n, -Y / P / (P.shape[0] if mean else 1), 1e-5, 1e-9) else "the derivative of forward's formula"
            return _find("fused-softmax-ce", tensor, got=words, want=want, pred=pred,
                         n=" / N" if c != 1 else "")
    return None


def name_fused_sigmoid_bce(tensor: str, manual: Any, numerical: Any, y_true: Any, y_pred: Any,
                           pred: str = "y_pred") -> Finding | None:
    """A binary cross-entropy on probabilities whose backward returns the fused sigmoid + cross-entropy gradient
    ``(p - y) / c`` (c = the size, the batch or 1), the gradient with respect to the logits, where the derivative of
    ``-mean(y log p + (1 - y) log(1 - p))`` is ``(p - y) / (p (1 - p)) / c`` (bugs43 M1, ai.stackexchange.com
    question 35741): ``y_pred`` entries in (0, 1), ``y_true`` of its shape in [0, 1], ``manual`` equal to
    ``(y_pred - y_true) / c`` (to 1e-9) and the numerical gradient not.

    Returns
    -------
    Finding or None
        ``fused-sigmoid-bce``.
    """
    m, n, P = (np.asarray(a, dtype=np.float64) for a in (manual, numerical, y_pred))
    Y = np.asarray(y_true, dtype=np.float64)
    if P.ndim < 1 or Y.shape != P.shape or m.shape != P.shape or not np.all(np.isfinite(m)) or not (
            np.all((P > 0) & (P < 1)) and np.all((Y >= 0) & (Y <= 1))) or close(n, m, 1e-6, 1e-9):
        return None
    for c, words in ((P.size, f"({pred} - y) / size, size = {P.size}"), (P.shape[0], f"({pred} - y) / N, N = "
                                                                                       f"{P.shape[0]}"), (1, f"{pred} - y")):
        if close(m, (P - Y) / c, 1e-9, 1e-12):
            per = {P.size: " / size", P.shape[0]: " / N", 1: ""}[c]
            want = f"(p - y) / (p * (1 - p)){per}" if close(n, (P - Y) / (P * (1 - P)) / c, 1e-5, 1e-9) else \
                "the derivative of forward's formula"
            return _find("fused-sigmoid-bce", tensor, got=words, want=want, pred=pred, n=per)
    return None


def name_loss_penalty(tensor: str, manual: Any, numerical: Any, loss: Any, init: Mapping[str, Any], y_true: Any,
                      y_pred: Any, w: str = "W") -> Finding | None:
    """A ``(loss, grad)`` function of ``W`` (CS231n's ``svm_loss_naive(W, X, y, reg)``, Ng's ``costFunctionReg(theta,
    X, y, lambda_)``, the others from ``--init``) whose gradient's penalty term is of another convention than the
    penalty its loss adds (newuser24 L9: ``loss += reg * np.sum(W * W)`` with ``dW += reg * W``, the gradient of ``0.5
    * reg * ...``; tester29s M4: Ng's ``lambda_ / m * theta`` with ``theta[0]`` left out of the loss but not of the
    gradient, or the other way, or ``lambda_ / (2m)``). For each number of ``init`` named as a regulariser's strength s
    (:func:`gradcheck._adapters.strength_name`), backward's gradient at ``s = 0`` (``loss.loaded_with``: one more
    forward and backward) is its data part; backward's penalty term (``manual`` minus it; exact, to 1e-9) and the
    loss's (``numerical`` minus it; to 1e-5: central differences) are each read as ``c * s * W``, ``W`` whole or with
    its first entry (a bias) 0 (:func:`_penalty_form`), ``c`` one of 0.5, 1, 2 or that over m, a count of samples (the
    first axis of an array of ``init``); named when the loss's is not zero and the two differ. None otherwise (a data
    part wrong too).

    Returns
    -------
    Finding or None
        ``loss-penalty-convention``.
    """
    from ._adapters import strength_name

    m, n, P = (np.asarray(a, dtype=np.float64) for a in (manual, numerical, y_pred))
    if not getattr(loss, "objective", False) or m.shape != P.shape or n.shape != P.shape or not np.all(np.isfinite(n)):
        return None
    counts = sorted({int(np.shape(v)[0]) for v in init.values() if isinstance(v, list) and len(v) > 1})
    for name, s in ((k, v) for k, v in init.items() if strength_name(k) and type(v) in (int, float) and v
                    and math.isfinite(v)):
        m0 = _loss_gradient_with(loss, {**init, name: 0}, y_true, y_pred)
        if m0 is None or m0.shape != P.shape:
            continue
        kb, kl = (_penalty_form(d, s, P, r, counts) for d, r in ((m - m0, 1e-9), (n - m0, 1e-5)))
        if kb is None or kl is None or not kl[0] or kb == kl:
            continue
        grad = functools.partial(_penalty_text, name=name, w=w, half=1)
        form = functools.partial(_penalty_text, name=name, w=w, half=0.5)
        fix = (f"add {grad(kl)} to {tensor} where it adds {grad(kb)} ({tensor} += {grad(kl)}), or make the loss add "
               f"{form(kb)}, whose gradient is {grad(kb)}" if kb[0] else f"add {grad(kl)} to {tensor} ({tensor} += "
               f"{grad(kl)})")
        ng = kl[2] or kb[2] or kl[1] or kb[1]
        example = ("Andrew Ng's ML course: J += lambda_ / (2 * m) * np.sum(theta[1:] ** 2), grad[1:] += lambda_ / m * "
                   "theta[1:], theta[0] the bias left out of both" if ng else "CS231n's assignment 1: loss += reg * "
                   "np.sum(W * W), dW += 2 * reg * W")
        mm = f", m = {kl[2] or kb[2]}, the samples: the first axis of the arrays --init gives" if kl[2] or kb[2] else ""
        return _find("loss-penalty-convention", tensor, n=name, v=s, w=w, adds=grad(kb) if kb[0] else "nothing",
                     form=form(kl), grad=grad(kl), fix=fix, example=example, m=mm)
    return None


def _penalty_form(d: np.ndarray, s: float, P: np.ndarray, rtol: float, counts: Sequence[int]):
    """``(c, first left out, m)`` when ``d`` is ``c * s * P`` (``P``'s first entry 0 when left out) to ``rtol``, ``c``
    one of 0, 0.5, 1, 2 or those over a count ``m`` of ``counts`` (m 0: none); None otherwise."""
    if close(d, np.zeros_like(d), rtol, 1e-9):
        return (0.0, False, 0)
    for left in (False, True):
        Q = P.copy()
        if left:
            Q.flat[0] = 0.0
        for k in (0.5, 1.0, 2.0):
            for c, N in [(k, 0)] + [(k / N, N) for N in counts]:
                if close(d, c * s * Q, rtol, 1e-9):
                    return (k, left, N)
    return None


def _penalty_text(form, name: str, w: str, half: float) -> str:
    """A penalty's gradient (``half`` 1) or value (``half`` 0.5: the loss adding it) as code, for
    :func:`_penalty_form`'s ``(k, first left out, m)``: ``2*reg*W``, ``0.5*reg*np.sum(W*W)``, ``lambda_/m*theta[1:]
    (0 at theta[0])``, ``lambda_/(2*m)*np.sum(theta[1:]*theta[1:])``."""
    k, left, m = form
    k *= half
    coef = ({0.25: f"0.25*{name}", 0.5: f"0.5*{name}", 1.0: name, 2.0: f"2*{name}"} if not m else {
        0.25: f"{name}/(4*m)", 0.5: f"{name}/(2*m)", 1.0: f"{name}/m", 2.0: f"2*{name}/m"})[k]
    v = f"{w}[1:]" if left else w
    return (f"{coef}*{v}" + (f" (0 at {w}[0])" if left else "")) if half == 1 else f"{coef}*np.sum({v}*{v})"


def _loss_gradient_with(loss: Any, init: Mapping[str, Any], y_true: Any, y_pred: Any) -> np.ndarray | None:
    """``loss``'s backward at ``y_pred`` when built with the arguments ``init`` (``loss.loaded_with``), released
    after; None when it cannot be built or run so."""
    other = None
    try:
        other = loss.loaded_with(init)
        other.forward(np.array(y_true, copy=True), np.array(y_pred, copy=True))
        return np.asarray(other.backward(), dtype=np.float64)
    except Exception:  # noqa: BLE001 - no second reading: the other signatures are tried
        return None
    finally:
        if other is not None and callable(getattr(other, "release", None)):
            with contextlib.suppress(Exception):  # noqa: BLE001 - a copy the child may have dropped
                other.release()


def name_huber_clip(tensor: str, manual: Any, numerical: Any, y_true: Any, y_pred: Any) -> Finding | None:
    """A Huber loss whose backward returns ``k * r`` (the square's derivative) everywhere, ``r = y_pred - y_true``
    (tester15b HuberBug). Named only when ``numerical`` is ``k * clip(r, -delta, delta)`` (``k`` read where |r| is
    smallest, ``delta`` from the plateau) with some |r| beyond delta, and ``manual`` is ``k * r``; else None."""
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    if (got := _huber_reading(m, n, y_true, y_pred)) is None:
        return None
    r, k, delta, beyond = got
    if not close(m, k * r, 1e-5) or close(m, n, 1e-5):
        return None
    return _find("huber-not-clipped", tensor, k=k, delta=delta, count=int(beyond.sum()), size=r.size)


def _huber_reading(m, n, y_true, y_pred):
    """``(r, k, delta, beyond)`` when the correct gradient ``n`` is ``k * clip(r, -delta, delta)``, ``r = y_pred -
    y_true`` (a Huber loss with delta, or smooth L1 with beta = delta: ``k`` read where |r| is smallest, ``delta``
    from the plateau), some |r| beyond delta (``beyond``, a mask); else None."""
    t, p = np.asarray(y_true), np.asarray(y_pred, dtype=np.float64)
    if t.shape != p.shape or m.shape != p.shape or n.shape != p.shape or t.dtype.kind != "f" or p.size < 3:
        return None
    r = p - t
    i = int(np.argmin(np.abs(r)))
    if abs(r.flat[i]) < 1e-12 or not np.all(np.isfinite(n)) or not np.all(np.isfinite(m)):
        return None
    k = float(n.flat[i] / r.flat[i])
    if k <= 0:
        return None
    delta = float(np.max(np.abs(n))) / k
    beyond = np.abs(r) > delta * (1 + 1e-6)
    if not beyond.any() or not close(n, k * np.clip(r, -delta, delta), 1e-5):
        return None
    return r, k, delta, beyond


def name_huber_branch(tensor: str, manual: Any, numerical: Any, y_true: Any, y_pred: Any) -> Finding | None:
    """A Huber (delta) or smooth L1 (beta) loss whose backward is right on one side of the threshold and a constant
    factor off on the other (session 21's leftover): smooth L1's quadratic branch ``0.5 r**2 / beta`` differentiated
    as ``r`` (the 1/beta forgotten), Huber's linear branch ``delta (|r| - delta / 2)`` as ``sign(r)`` (delta
    forgotten). The correct gradient is ``k * clip(r, -delta, delta)`` (:func:`_huber_reading`); the form is
    Huber's when ``k`` is the mean's 1/size (or 1, or 1/N: slope 1 inside) and smooth L1's when ``k * delta`` is
    (slope 1 beyond). PyTorch's ``HuberLoss``/``SmoothL1Loss`` docs give both; HIPS autograd checks them in
    ``tests/test_buggy_layers.py``. None unless ``manual`` is ``c * numerical`` on one side alone (c != 1)."""
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    if (got := _huber_reading(m, n, y_true, y_pred)) is None:
        return None
    r, k, delta, beyond = got
    inside = np.abs(r) < delta * (1 - 1e-6)
    if not inside.any() or close(m, n, 1e-5):
        return None
    ratios = []
    for part in (inside, beyond):
        c = float(np.sum(m[part] * n[part]) / np.sum(n[part] ** 2))
        ratios.append(c if close(m[part], c * n[part], 1e-5) else None)
    if None in ratios or sum(abs(c - 1) > 1e-5 for c in ratios) != 1:
        return None
    wrong_inside = abs(ratios[0] - 1) > 1e-5
    c, part = ratios[0] if wrong_inside else ratios[1], inside if wrong_inside else beyond
    sizes = {1.0, float(r.size), float(r.shape[0])}
    form = ("huber" if any(abs(k * z - 1) < 1e-6 for z in sizes) else
            "smooth" if any(abs(k * delta * z - 1) < 1e-6 for z in sizes) else "")
    return _find("huber-branch-factor", tensor, **_huber_branch_words(form, wrong_inside, c, delta),
                 right=">" if wrong_inside else "<", wrong="<" if wrong_inside else ">", delta=delta, c=c,
                 count=int(part.sum()), size=r.size)


def _huber_branch_words(form: str, inside: bool, c: float, delta: float) -> dict[str, str]:
    """The ``form``, ``why`` and ``fix`` of ``huber-branch-factor``: which loss (``"huber"``, ``"smooth"`` or not
    told, ``""``), which branch is ``c`` times off, and when ``c`` is delta (or 1/delta) the term forgotten."""
    d, both = f"{delta:.6g}", abs(delta - 1) < 1e-6
    forms = {"huber": f"a Huber loss with delta {d} (0.5 r**2 where |r| <= delta, delta (|r| - delta / 2) beyond; "
                      "its derivative r inside, delta * sign(r) beyond)",
             "smooth": f"a smooth L1 loss with beta {d} (0.5 r**2 / beta where |r| < beta, |r| - beta / 2 beyond; its "
                       "derivative r / beta inside, sign(r) beyond)"}
    said = forms.get(form, f"a Huber-type loss whose derivative is proportional to clip(r, -{d}, {d})")
    fixes = {"huber": "np.clip(r, -delta, delta) (times the loss's 1/N)",
             "smooth": "np.where(np.abs(r) < beta, r / beta, np.sign(r)) (times the loss's 1/N)"}
    fix = "use " + fixes.get(form, "the derivative of each branch forward computes, with its own factor")
    why = f"backward's {'quadratic' if inside else 'linear'} branch has a factor {c:.6g} too many"
    if not both and form == "smooth" and inside and abs(c - delta) < 1e-6 * delta:
        why = "backward differentiates the quadratic branch 0.5 r**2 / beta as r: the 1/beta is missing"
    elif not both and form == "huber" and not inside and abs(c * delta - 1) < 1e-6:
        why = "backward gives sign(r) beyond delta: the linear branch delta (|r| - delta / 2) has derivative " \
              "delta * sign(r), the factor delta is missing"
    elif not both and form == "huber" and inside and abs(c * delta - 1) < 1e-6:
        why = "backward divides the quadratic branch's derivative by delta (smooth L1's r / beta), but Huber's is r"
    elif not both and form == "smooth" and not inside and abs(c - delta) < 1e-6 * delta:
        why = "backward multiplies sign(r) by beta beyond it (Huber's delta * sign(r)), but smooth L1's is sign(r)"
    return {"form": said, "why": why, "fix": fix}


def name_focal_factor(tensor: str, manual: Any, numerical: Any, y_true: Any, y_pred: Any) -> Finding | None:
    """A binary focal loss ``-alpha_t (1 - p_t)**gamma log(p_t)`` (RetinaNet's; ``alpha_t`` = alpha where y = 1, 1 -
    alpha where y = 0, or no alpha) whose backward leaves out the derivative of the factor ``(1 - p_t)**gamma``
    (tester15b FocalBug), or weights the classes wrongly (session 22: alpha for both classes, alpha_t left out,
    alpha and 1 - alpha swapped). Named only for 0/1 targets and probabilities when, for one gamma of 0.5 and 1 to
    5, ``numerical`` is the loss's derivative times one weight per class (``a1`` where y = 1, ``a0`` where y = 0:
    alpha = a1 / (a1 + a0)) and ``manual`` the bug's (to a relative 1e-4: an eps of 1e-7 in the log is in it);
    else None. The derivative is checked against HIPS autograd in ``tests/test_buggy_layers.py``."""
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    y, p = np.asarray(y_true), np.asarray(y_pred, dtype=np.float64)
    if (y.shape != p.shape or m.shape != p.shape or n.shape != p.shape or not np.all(np.isin(y, (0, 1)))
            or not np.all((p > 0) & (p < 1)) or not np.all(np.isfinite(n)) or not np.all(np.isfinite(m))):
        return None
    pos = y == 1
    pt, sgn = np.where(pos, p, 1 - p), np.where(pos, 1.0, -1.0)
    for gamma in (2.0, 1.0, 3.0, 4.0, 5.0, 0.5):
        part = -sgn * (1 - pt) ** gamma / pt
        full = part + sgn * gamma * (1 - pt) ** (gamma - 1) * np.log(pt)
        a = [_fit(n, full, pos), _fit(n, full, ~pos)]
        if None in a or any(w <= 0 for w in a if w) or not close(n, np.where(pos, a[0], a[1]) * full, 1e-4) \
                or close(m, n, 1e-4):
            continue
        if close(m, np.where(pos, a[0], a[1]) * part, 1e-4):
            less = "(1 - p_t)" if gamma == 2 else f"(1 - p_t)**{gamma - 1:g}"
            return _find("focal-factor-derivative", tensor, gamma=gamma, less=less)
        if not pos.any() or pos.all() or abs(a[0] / a[1] - 1) < 1e-6:
            return None  # one weight for both classes: no alpha to get wrong
        for how, w1, w0 in (
                ("weights both classes by alpha (the y = 0 entries need 1 - alpha)", a[0], a[0]),
                ("weights both classes by 1 - alpha (the y = 1 entries need alpha)", a[1], a[1]),
                ("leaves alpha_t out (its derivative is unweighted)", a[0] + a[1], a[0] + a[1]),
                ("swaps alpha and 1 - alpha (alpha where y = 0, 1 - alpha where y = 1)", a[1], a[0])):
            if close(m, np.where(pos, w1, w0) * full, 1e-4):
                alpha = a[0] / (a[0] + a[1])
                return _find("focal-alpha-weight", tensor, how=how, alpha=alpha, beta=1 - alpha, gamma=gamma)
        return None
    return None


def _fit(n, f, part) -> float | None:
    """The least-squares factor ``c`` of ``n ~ c * f`` over the entries ``part``; None when there are none."""
    ff = float(np.sum(f[part] ** 2))
    return float(np.sum(n[part] * f[part])) / ff if part.any() and ff > 0 else None


def name_dice_quotient(tensor: str, manual: Any, numerical: Any, y_true: Any, y_pred: Any) -> Finding | None:
    """A soft Dice loss ``1 - (2 sum(p t) + s) / (sum(p) + sum(t) + s)`` (over the whole batch, or per sample and
    averaged) whose backward differentiates the numerator alone, ``-2 t / D`` (session 21's leftover: the quotient
    rule's denominator term forgotten), or adds that term with the wrong sign. The correct gradient ``-(2 t_i D -
    N) / D**2`` (times 1/B for B samples averaged) is linear in the target, ``n = A t + B0`` per group: its
    smooth s and scale read from ``A`` and ``B0`` (``c = A**2 (2 I - P - T) / (4 B0 + 2 A)`` must be 1 or 1/B, s >=
    0). HIPS autograd checks the formula in ``tests/test_buggy_layers.py``. None unless ``manual`` is the bug's."""
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    t, p = np.asarray(y_true, dtype=np.float64), np.asarray(y_pred, dtype=np.float64)
    if t.shape != p.shape or m.shape != p.shape or n.shape != p.shape or p.ndim < 1 or not np.all(np.isfinite(n)) \
            or close(m, n, 1e-5):
        return None
    B = p.shape[0]
    for form, rows in (("batch-wide", [np.ones(p.shape, dtype=bool)]),
                       ("per-sample", [np.broadcast_to(np.arange(B).reshape((B,) + (1,) * (p.ndim - 1)) == i, p.shape)
                                      for i in range(B)])):
        if form == "per-sample" and (B < 2 or p.ndim < 2):
            continue
        terms, s_read = [], []
        for g in rows:
            got = _dice_group(n[g], t[g], p[g], (1.0,) if form == "batch-wide" else (1.0 / B,))
            if got is None:
                break
            terms.append(got[:2])
            s_read.append(got[2])
        else:
            A = np.zeros(p.shape)
            B0 = np.zeros(p.shape)
            for g, (a, b) in zip(rows, terms):
                A[g], B0[g] = a, b
            for how, cand in (("is the numerator's derivative alone, -2 t / D: the denominator's derivative (its -N / "
                               "D**2 term) is missing", A * t),
                              ("adds the denominator's term with the wrong sign, -(2 t D + N) / D**2", A * t - B0)):
                if close(m, cand, 1e-5):
                    per = ", per sample, and the mean's 1/B = 1/" + str(B) if form == "per-sample" else ""
                    fix = f" (per sample: keepdims sums over axis 1, then / {B})" if form == "per-sample" else ""
                    return _find("dice-denominator-derivative", tensor, how=how, form=form, s=float(np.mean(s_read)),
                                 per=per, fix=fix)
            return None
    return None


def _dice_group(n, t, p, scales):
    """``(A, B0, s)`` when ``n = A t + B0`` over one Dice group's entries and (A, B0) are a soft Dice loss's for a
    scale in ``scales`` and a smooth ``s >= 0`` (read from A, B0 and the group's sums); None otherwise."""
    if t.size < 2 or np.ptp(t) == 0:
        return None
    X = np.stack([t, np.ones_like(t)], axis=1)
    (a, b), *_ = np.linalg.lstsq(X, n, rcond=None)
    if not close(n, a * t + b, 1e-6) or a >= 0:
        return None
    I, P, T = float(np.sum(p * t)), float(np.sum(p)), float(np.sum(t))
    den = 4 * b + 2 * a
    if den == 0:
        return None
    c = a * a * (2 * I - P - T) / den
    if not any(abs(c / z - 1) < 1e-5 for z in scales):
        return None
    s = -2 * c / a - P - T
    return (a, b, s) if s >= -1e-6 * (P + T) else None


def name_ignored_target(tensor: str, manual: Any, numerical: Any, y_true: Any) -> Finding | None:
    """A loss that leaves out the entries whose target is one value ``c`` (an ``ignore_index``: ``labels != -100``)
    and whose backward does not (session 23: a masked cross-entropy without its mask in backward). Named only when
    some target value ``c`` holds where ``numerical`` is 0 in every entry (or row, for labels of shape (N,) against
    (N, C)), ``manual`` is not 0 there, and ``manual`` matches ``numerical`` everywhere else
    (``"ignored-target-not-masked"``); or ``manual`` is 0 there too and ``kept/n`` times ``numerical`` elsewhere, a
    mean over every entry where forward's is over the kept ones (``"ignored-target-count"``).

    Parameters
    ----------
    tensor : str
        Display name (``"dy_pred"``).
    manual, numerical : array_like, shape (N, ...)
        Backward's result and the central differences of L.
    y_true : array_like
        The targets the check used: of ``numerical``'s shape (an entry each) or of its shape without the last axis
        (a row each, class labels).

    Returns
    -------
    Finding or None
        ``"ignored-target-not-masked"``, or None.
    """
    m, n, y = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64), np.asarray(y_true)
    if (m.shape != n.shape or y.dtype.kind not in "iuf" or y.shape not in (n.shape, n.shape[:-1]) or y.size < 2
            or not np.all(np.isfinite(n)) or not np.all(np.isfinite(m))):
        return None
    rowwise = y.shape != n.shape
    scale = float(np.max(np.abs(n), initial=0.0))
    zero_n = np.abs(n) <= 1e-9 * scale
    for c in np.unique(y):
        hit = y == c
        at = np.broadcast_to(hit[..., None], n.shape) if rowwise else hit
        if hit.all() or not zero_n[at].all():
            continue
        k, rows = int(hit.sum()), "rows" if rowwise else "entries"
        r = (y.size - k) / y.size
        if close(m[at], n[at], 1e-6) and close(m[~at], r * n[~at], 1e-6) and not close(m[~at], n[~at], 1e-6):
            return _find("ignored-target-count", tensor, k=k, n=y.size, kept=y.size - k, r=r, rows=rows, c=float(c))
        if close(m[at], n[at], 1e-6) or not close(m[~at], n[~at], 1e-6):
            continue
        bad = (np.abs(m) > 1e-9 * scale) & at
        what = (f"nonzero values (row {int(np.argmax(bad.reshape(-1, n.shape[-1]).any(axis=1)))} among them)"
                if rowwise else f"nonzero values at {int(bad.sum())} of them")
        return _find("ignored-target-not-masked", tensor, k=k, n=y.size, rows=rows, c=float(c), what=what)
    return None


def _class_labels(manual: Any, numerical: Any, y_true: Any) -> tuple | None:
    """Backward's result, the central differences and the class labels of a classification loss's (N, C) gradient,
    read once for every namer of a label slip (``name_label_added``, ``name_hinge_count``,
    ``name_softmax_ce_label``).

    Parameters
    ----------
    manual, numerical : array_like, shape (N, C)
        Backward's result and the central differences of L; C >= 2, both finite.
    y_true : array_like, shape (N,) or (N, C)
        Class labels (integers, booleans or floats of integer value, each in [0, C)) or one-hot rows.

    Returns
    -------
    tuple or None
        ``(m, n, labels, onehot)``: ``m``, ``n`` float64 (N, C), ``labels`` int64 (N,), ``onehot`` whether
        ``y_true`` came as one-hot rows; None when the arrays are no such gradient or ``y_true`` no such labels.
    """
    m, n, y = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64), np.asarray(y_true)
    if n.ndim != 2 or m.shape != n.shape or n.shape[1] < 2 or not (np.all(np.isfinite(m)) and np.all(np.isfinite(n))):
        return None
    onehot = y.shape == n.shape and bool(np.all((y == 0) | (y == 1)) and np.all(y.sum(axis=1) == 1))
    if onehot:
        y = y.argmax(axis=1)
    if (y.shape != n.shape[:1] or y.dtype.kind not in "biuf" or not np.all(y == np.round(y))
            or not np.all((y >= 0) & (y < n.shape[1]))):  # labels that are no column (an ignore index -100)
        return None
    return m, n, y.astype(np.int64), onehot


def name_label_added(tensor: str, manual: Any, numerical: Any, y_true: Any) -> Finding | None:
    """A softmax + cross-entropy backward that adds 1 at each sample's label where it subtracts 1 (tester30n: Neural
    Networks from Scratch's ``self.dinputs[range(samples), y_true] += 1`` for ``-= 1``): ``manual - numerical`` is
    ``+2/N`` at the label of each of the N rows and 0 elsewhere, exactly (to the check's round-off).

    Parameters
    ----------
    tensor : str
        Display name (``"dy_pred"``).
    manual, numerical, y_true : array_like
        Backward's result, the central differences of L and the class labels, as :func:`_class_labels` reads them.

    Returns
    -------
    Finding or None
        ``"label-added"``, or None.
    """
    read = _class_labels(manual, numerical, y_true)
    if read is None:
        return None
    m, n, y, _ = read
    label = np.eye(n.shape[1])[y]
    if not close(m - n, 2.0 / n.shape[0] * label, 1e-5, 1e-9):
        return None
    return _find("label-added", tensor, n=n.shape[0], v=2.0 / n.shape[0])


def name_hinge_count(tensor: str, manual: Any, numerical: Any, y_true: Any) -> Finding | None:
    """A multiclass hinge (CS231n's ``svm_loss``) whose backward gets the correct class's entry wrong (tester15 L3:
    ``dx[np.arange(N), y] -= 1`` where the count of positive margins is due, or nothing subtracted). Named only when
    ``numerical`` is such a hinge's gradient, read from its numbers: every entry off the label column is 0 or one
    scale ``s`` (1/N for a mean), each label entry ``-s`` times the count of ``s`` in its row; and ``manual`` equals
    it off the label column and differs in it.

    Parameters
    ----------
    tensor : str
        Display name (``"dx"``).
    manual, numerical, y_true : array_like
        As :func:`name_label_added`'s.

    Returns
    -------
    Finding or None
        ``"hinge-count"``, or None.
    """
    read = _class_labels(manual, numerical, y_true)
    if read is None:
        return None
    m, n, y, _ = read
    rows = np.arange(n.shape[0])
    label = np.zeros(n.shape, dtype=bool)
    label[rows, y] = True
    off = np.where(label, 0.0, n)
    s = float(np.max(off))
    if s <= 0 or not np.all((np.abs(off) <= 1e-6 * s) | (np.abs(off - s) <= 1e-6 * s)):
        return None
    count = (np.abs(off - s) <= 1e-6 * s).sum(axis=1)
    if not close(n[rows, y], -s * count, 1e-6, 1e-6 * s):
        return None
    scale = f"1/N = 1/{n.shape[0]}" if abs(s * n.shape[0] - 1) < 1e-6 else f"scale {s:.6g}"
    if (count < n.shape[1] - 1).any() and close(np.where(label, s, m), np.full_like(m, s), 1e-6, 1e-6 * s):
        K, zero = n.shape[1], int((n.shape[1] - 1 - count).sum())  # outside44 svm_loss_ge: margins >= 0 counted
        label_too = close(m[rows, y], np.full_like(m[rows, y], s * (1 - K)), 1e-6, 1e-6 * s)
        return _find("hinge-zero-margins", tensor, scale=scale, zero=zero, also=(
            f", the label's own margin (set to 0) too, so the label's entry is (1 - {K}) times the scale"
            if label_too else ""))
    if not close(np.where(label, 0.0, m), off, 1e-6, 1e-6 * s):
        return None
    bad = np.abs(m[rows, y] - n[rows, y]) > 1e-6 * s
    if not bad.any():
        return None
    i = int(np.argmax(np.where(bad, count, -1)))
    got = m[rows, y]
    how = (": it subtracts 1 (times the scale) in every row, not the count" if close(got, np.full_like(got, -s), 1e-6, 1e-8)
           else ": nothing is subtracted there" if close(got, np.zeros_like(got), 0.0, 1e-6 * s) else "")
    scale = f"1/N = 1/{n.shape[0]}" if abs(s * n.shape[0] - 1) < 1e-6 else f"scale {s:.6g}"
    return _find("hinge-count", tensor, scale=scale, row=i, k=int(count[i]), exp=float(n[i, y[i]]),
                 got=float(got[i]), how=how)


def name_target_gradient(tensor: str, manual: Any, numerical: Any, forward, y_true: Any, y_pred: Any,
                         names: tuple[str, str] = ("y_pred", "y_true")) -> Finding | None:
    """A loss's backward that returns L's gradient with respect to the target, not the prediction (tester14: the
    cross-entropy's -log(p)/N, dL/dq, for -q/(p N)): ``manual`` matches the central differences of ``forward`` in
    ``y_true`` along three random directions (to a relative 1e-5) and is no multiple of ``numerical`` (a loss of
    ``y_pred - y_true``, whose two gradients differ by their sign, is left to the sign's diagnosis).

    Parameters
    ----------
    tensor : str
        Display name (``"dy_pred"``).
    manual, numerical : array_like
        Backward's result and the central differences of L with respect to ``y_pred``.
    forward : callable
        ``forward(y_true, y_pred) -> L``, the loss as checked.
    y_true, y_pred : array_like
        The data the check used (targets of ``y_pred``'s shape, float or 0/1 labels, perturbed as floats; else there
        is no such gradient).
    names : tuple of str, default ("y_pred", "y_true")
        forward's names of the prediction and the target.

    Returns
    -------
    Finding or None
        ``"target-gradient"``, or None.
    """
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    t = np.asarray(y_true)
    if t.dtype.kind in "iub" and t.shape == m.shape:  # 0/1 labels of the prediction's shape (a BCE's; tester15b)
        t = t.astype(np.float64)
    if t.dtype.kind != "f" or t.shape != m.shape or m.shape != n.shape or not np.all(np.isfinite(m)):
        return None
    if np.any(n) and close(m, _ls_factor(m, n) * n, 1e-5, 1e-9):
        return None
    try:
        num, man = _along(lambda v: float(forward(v, y_pred)), t, m, 3, 7)
    except Exception:  # noqa: BLE001 - a loss that refuses other targets: no such reading
        return None
    if not np.all(np.isfinite(num)):  # a loss undefined off these targets (log t at a 0 label): no reading
        return None
    worst = float(np.max(relative_error(num, man, 1e-12)))
    if not worst < 1e-5:
        return None
    return _find("target-gradient", tensor, pred=names[0], target=names[1], rel=worst)


def name_classes_count(tensor: str, manual: Any, numerical: Any, shape: tuple) -> Finding | None:
    """A loss's gradient ``N/K`` times the correct one, ``y_pred`` of shape (N, ..., K) with N != K: backward
    divides by the number of classes K where the batch mean divides by the number of samples N (tester30n:
    Neural Networks from Scratch's ``self.dinputs / labels`` for ``/ samples``). An exact factor, to a relative 1e-6.

    Parameters
    ----------
    tensor : str
        Display name (``"dy_pred"``).
    manual, numerical : array_like
        Backward's result and the central differences of L (the same shape).
    shape : tuple of int
        ``y_pred``'s shape.

    Returns
    -------
    Finding or None
        ``"factor-classes"``, or None when ``manual`` is not ``N/K`` times ``numerical``.
    """
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    if len(shape) < 2 or shape[0] == shape[-1] or m.shape != n.shape or not np.all(np.isfinite(n)) or not np.any(n):
        return None
    c, want = _ls_factor(m, n), shape[0] / shape[-1]
    if abs(c / want - 1) > 1e-6 or not close(m, c * n, 1e-5, 1e-9):
        return None
    return _find("factor-classes", tensor, c=c, n=shape[0], k=shape[-1])


def name_power_factor(tensor: str, manual: Any, numerical: Any, forward, y_true: Any, y_pred: Any) -> Finding | None:
    """A loss's gradient ``+-1/p`` times the correct one where L is a power ``p`` (2, 3 or 4) of ``y_pred - y_true``
    (``mean((y_pred - y_true)**2)``: the factor 2 of the square's derivative missing; a sign too when negative, as
    for a symmetric loss ``forward(a, b)`` taken in the other order). The power is measured:
    ``L(y_true + s d) = s**p L(y_true + d)`` for ``d = y_pred - y_true`` and s = 2, 3 (to a relative 1e-6).

    Parameters
    ----------
    tensor : str
        Display name (``"dy_pred"``).
    manual, numerical : array_like
        Backward's result and the central differences of L (the same shape).
    forward : callable
        ``forward(y_true, y_pred) -> L``, the loss as checked.
    y_true, y_pred : array_like
        The data the check used.

    Returns
    -------
    Finding or None
        ``"factor-power"``, or None when ``manual`` is no such multiple or L no such power.
    """
    m, n = np.asarray(manual, dtype=np.float64), np.asarray(numerical, dtype=np.float64)
    if m.shape != n.shape or not np.all(np.isfinite(n)) or not np.any(n):
        return None
    c = _ls_factor(m, n)
    p = round(1 / abs(c)) if c else 0
    if p not in (2, 3, 4) or abs(abs(c) * p - 1) > 1e-6 or not close(m, c * n, 1e-5, 1e-9):
        return None
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred, dtype=np.float64)
    if y_true.shape != y_pred.shape or not np.issubdtype(y_true.dtype, np.floating):
        return None
    try:
        at = [float(forward(y_true, y_true + s * (y_pred - y_true))) for s in (1.0, 2.0, 3.0)]
    except Exception:  # noqa: BLE001 - student code: no evidence, the plain factor stays
        return None
    if not (np.all(np.isfinite(at)) and at[0] > 0
            and all(abs(v - s ** p * at[0]) <= 1e-6 * abs(v) for v, s in zip(at[1:], (2, 3)))):
        return None
    return _find("factor-power", tensor, c=c, p=p, what="square" if p == 2 else f"power {p}",
                 less="" if p == 2 else f"**{p - 1}", sign=", and the sign is wrong" * (c < 0),
                 fix=f"{-p if c < 0 else p}")


def _normalisation(tensor: str, c: float, shape: tuple, n_batch: int) -> tuple[str, dict] | None:
    """A loss's gradient ``c`` times the correct one, ``c`` a count of its (N, D) elements other
    than the batch size (named by :func:`_value_signature`): the loss's normalisation."""
    size, var = int(np.prod(shape)), tensor[1:] or "y_pred"
    D = size // n_batch if n_batch and len(shape) > 1 else 0
    mean = f"a mean over all N*D = {size} elements of {var} divides by {size}"
    cases = [(D, "large", f"{mean}, not by N = {n_batch} (divide by {var}.size, not len({var}))"),
             (size, "large", f"the mean's 1/(N*D) is missing: {mean}"),
             (1 / D if D else 0, "small", f"it divides by N*D = {size} where the loss divides by "
              f"N = {n_batch} alone (a sum over the {D} values of a sample, a mean over the "
              "batch)"),
             (1 / size, "small", f"an extra 1/(N*D) = 1/{size}")]
    for count, big, why in cases:
        if count and D > 1 and D != n_batch and abs(c / count - 1) < 1e-6:
            shown = count if big == "large" else round(1 / count)
            return "factor-normalisation", {"count": shown, "big": big, "why": why}
    return None


#: A factor 1/2 at a batch of 2 is also a plain halving (tester27s: numpy-ml's Conv2D ``dB / 2`` read as "an extra
#: 1/batch"): both readings are said.
_TWO = ("; or a plain factor 1/2: at a batch of 2 the batch's 1/N and a halving give the same numbers, so check "
        "with another batch size (--input-shape) to know which")


def _softmax_ce(n, n_batch, dy=1.0) -> tuple[str, dict] | None:
    """``n`` is a softmax cross-entropy's gradient ``(p - y_onehot) * dy`` (mean or sum over the
    batch): with the label's entry raised by one, every row is a probability vector (all entries
    strictly between 0 and 1)."""
    if n.ndim < 2 or n.shape[-1] < 2 or not np.isfinite(n).all():
        return None
    for c, words in ((n_batch, "({}) / N"), (1, "{}")):
        q = (c / dy) * n.reshape(-1, n.shape[-1])
        p = q + (q == q.min(axis=1, keepdims=True))
        if np.all((p > 1e-12) & (p < 1 - 1e-12)) and sums_to_one(p, axis=1):
            return "softmax-ce-sign", {"got": words.format("y_onehot - p"),
                                       "want": words.format("p - y_onehot"),
                                       "fix": ", then divide by N (the mean's 1/N)" * (c != 1)}
    return None


def _permuted_copies(a: np.ndarray, shape: tuple, noun: str = "the correct gradient"):
    """``(words, copy)``: ``a`` with its axes permuted and reshaped to ``shape``, or reshaped then
    permuted (every non-identity axis order; none above 5-D: 719 would be too many; none for
    another size)."""
    size, target = int(np.prod(shape)), V.fmt_shape(shape)
    if a.ndim > 5 or a.size != size:
        return
    for p in itertools.permutations(range(a.ndim)):
        if p == tuple(range(a.ndim)):
            continue
        t = a.transpose(p)
        if t.shape == shape:
            yield f"{noun} transposed with axes {p}", t
        elif t.size == size:
            inv, ts = tuple(int(i) for i in np.argsort(p)), V.fmt_shape(t.shape)
            yield (f"{noun} laid out in the axis order {p} (shape {ts}), then reshaped to "
                   f"{target}: a reshape where a transpose is due (.reshape{ts}.transpose{inv}, "
                   f"not .reshape{target})", t.reshape(shape))
        # reshaped first, then permuted: same number of axes only
        pre = tuple(shape[i] for i in np.argsort(p)) if len(shape) == a.ndim else a.shape
        if pre != a.shape:
            yield (f"{noun} reshaped to {V.fmt_shape(pre)}, then transposed with axes {p}: a "
                   "reshape that reorders the elements", a.reshape(pre).transpose(p))


def _permutation(m, n, match) -> tuple[str, dict] | None:
    """``m`` holds ``n``'s values in other places: which axis permutation, if one reproduces it."""
    for words, cand in _permuted_copies(n, m.shape):
        if match(m, cand):
            return "permuted", {"how": f": it is {words}"}
    for ax, size in enumerate(m.shape if m.shape == n.shape and m.size <= 4096 else ()):
        for r in range(1, size):  # tester19s SplitHeadsSwap: [d2 * (1 - t**2), d1] where [d1, d2 * (1 - t**2)]
            if match(m, np.roll(n, r, axis=ax)):
                # the piece that wrapped round is zeros: a shift, no two pieces (tester21s L4: [:, 1::2] for [:, ::2])
                later = not np.any(np.take(n, range(size - r, size), axis=ax))
                earlier = not later and not np.any(np.take(n, range(size - r), axis=ax))
                if later or earlier:
                    k = r if later else size - r
                    return "permuted", {"how": f": its entries sit {k} place{'s' * (k > 1)} "
                                        f"{'later' if later else 'earlier'} along axis {ax} than they must (a shift, "
                                        f"zeros moved in): an index or slice start off by {k}, e.g. [{k}::2] where "
                                        "[::2] is due, or a loop starting one place off"}
                return "permuted", {"how": f": its last {r} of {size} entries along axis {ax} come first, the first "
                                    f"{size - r} last (two pieces joined in the wrong order, e.g. np.concatenate([b, a], "
                                    f"axis={ax}) where [a, b] is due: each piece goes where forward took its part of "
                                    "the input from)"}
    if m.shape == n.shape and (f := _block_order(m, n, match)) is not None:
        return f
    a, b = np.sort(m.ravel()), np.sort(n.ravel())
    if m.shape == n.shape and np.ptp(b) > 0 and match(a.reshape(m.shape), b.reshape(m.shape)):
        return "permuted", {"how": " (the same numbers, permuted, but no transpose of its axes "
                            "reproduces it): an index mix-up, e.g. rows and columns swapped in an "
                            "unravel_index/divmod, or a reshape where a transpose is due"}
    return None


def _block_order(m, n, match) -> tuple[str, dict] | None:
    """``m`` is ``n`` cut into k >= 3 equal blocks along one axis, in another order (tester20s M4: an LSTM's
    backward joining the gates' gradients i, f, g, o where forward slices i, f, o, g: dW's column blocks permuted)."""
    for ax, size in enumerate(m.shape if m.size <= 65536 else ()):
        for k in (k for k in range(3, min(size, 8) + 1) if size % k == 0):
            mb, nb = np.split(m, k, axis=ax), np.split(n, k, axis=ax)
            if any(np.ptp(np.nan_to_num(b)) == 0 for b in nb):  # a constant block matches any place
                continue
            fin = [np.isfinite(b) for b in nb]
            order = [next((j for j in range(k) if close(np.where(fin[j], x, 0), np.where(fin[j], nb[j], 0))), None)
                     for x in mb]
            if None in order or sorted(order) != list(range(k)) or order == list(range(k)) \
                    or not match(m, np.concatenate([nb[j] for j in order], axis=ax)):
                continue
            return "permuted", {"how": f": cut into {k} blocks of {size // k} along axis {ax}, its blocks hold the "
                                f"correct ones in the order {tuple(order)}, not (0, ..., {k - 1}): the blocks are "
                                f"permuted, as when backward joins the pieces (an LSTM's gates: i, f, g, o) in "
                                f"another order than forward slices them (i, f, o, g); join them in forward's order"}
    return None


def _layout_hint(name: str, X: np.ndarray, G: np.ndarray, n: np.ndarray) -> str | None:
    """The right product for a Linear's weight gradient, from the layout the numbers show (None:
    not a Linear). A square weight has both shapes: only values tell (in, out) from (out, in)."""
    if not (X.ndim >= 2 and G.ndim == n.ndim == 2 and len(X) == len(G) and np.isfinite(n).all()):
        return None
    Xf = X.reshape(len(X), -1)
    for val, layout, fwd, prod, wrong in (
            (Xf.T @ G, "(in, out)", f"X @ {name}", "X.T @ dY", "dY.T @ X"),
            (G.T @ Xf, "(out, in)", f"X @ {name}.T", "dY.T @ X", "X.T @ dY")):
        if val.shape == n.shape and close(val, n):
            return (f"for {name} of shape {layout} with Y = {fwd} + b, d{name} = {prod} "
                    f"(not {wrong})")
    return None


def _output_product(m, G, Y) -> tuple[str, dict] | None:
    """A Linear's dW computed with the output Y where the input X is due (any weight layout)."""
    if m.ndim == Y.ndim == 2 and G.shape == Y.shape:
        for expr, val in (("dY.T @ Y", G.T @ Y), ("Y.T @ dY", Y.T @ G)):
            if val.shape == m.shape and close(m, val):
                return "cached-output", {"how": f"equals {expr}"}
    return None


def _order_signature(got: Mapping[str, Any], right: Mapping[str, Any],
                     ts: Sequence[str]) -> Finding | None:
    """The returned gradients are the right ones in another order (``got[t]`` is ``right[u]``)."""
    def source(t):
        return next((u for u in (t, *ts) if np.shape(got.get(t)) == np.shape(right[u])
                     and np.isfinite(right[u]).all() and close(got[t], right[u])), None)

    perm = [source(t) if got.get(t) is not None else None for t in ts]
    if None in perm or len(set(perm)) < len(ts) or perm == list(ts):
        return None
    misplaced = next(t for t, u in zip(ts, perm) if t != u)  # the first slot holding another's
    return _find("wrong-order", misplaced, expected=", ".join(ts), got=", ".join(perm))


def name_swaps(got: Mapping[str, Any], right: Mapping[str, Any],
               keys: Sequence[str] = (), order: str = "of forward's arguments",
               slots: Mapping[str, str] | None = None) -> dict[str, Finding]:
    """Two same-shaped gradients that hold each other's values (dgamma and dbeta swapped), in any
    protocol.

    Parameters
    ----------
    got, right : mapping of str to array_like
        The gradients under suspicion and the correct ones by tensor name (``"dgamma"``); a tensor
        missing from either, of another shape, or with a NaN in ``right`` is left out.
    keys : sequence of str, optional
        Parameter keys: ``"d" + key`` is ``grads[key]``; any other tensor is one backward returns.
    order : str, optional
        The order backward must return them in (``"the class defines its weights in"`` when it
        returns ``(dX, dW, db)``).
    slots : mapping of str to str, optional
        Where an attribute-style layer stores each key's gradient (``{"W": "self.dW"}``,
        :func:`gradcheck.sources.grad_slots`): the sentence names the student's own attribute, not ``grads['W']``.

    Returns
    -------
    dict of str to Finding
        Per swapped pair ``{"dgamma": Finding, "dbeta": Finding}`` (code ``"swapped"``), each
        naming its own slot, e.g. "grads['gamma'] holds the gradient of beta and vice versa".
    """
    arr = {t: np.asarray(v, dtype=np.float64) for t, v in got.items() if isinstance(v, np.ndarray)
           and t in right and np.shape(v) == np.shape(right[t])}
    ts = [t for t in arr if np.isfinite(right[t]).all() and not close(arr[t], right[t])]
    out: dict[str, Finding] = {}
    for a, b in itertools.combinations(ts, 2):
        if (a in out or b in out or arr[a].shape != arr[b].shape
                or not (close(arr[a], right[b]) and close(arr[b], right[a]))):
            continue
        for t, u in ((a, b), (b, a)):
            in_grads = V.grad_key(t) in keys
            st, su = (V.slot_name(slots or {}, V.grad_key(v)) for v in (t, u))
            own = (f"under its own key: {st} = {t}, {su} = {u}" if st.startswith("grads[") else  # self.dW1: its own
                   f"in its own place: {st} = the gradient of {V.grad_key(t)}, {su} = that of {V.grad_key(u)}")
            fix = f"store each gradient {own}" if in_grads else f"return them in the order {order}"
            out[t] = _find("swapped", t, slot=st if in_grads else t, other=V.grad_key(u),
                           how="" if in_grads else ": backward returns them in the wrong order",
                           fix=fix)
    return out


# ----------------------------------------------------------------- signatures that need the layer
# Each detector returns ``(code, fields)`` for :func:`_find`, or None.


class _Layer:
    """The checked layer as the layer-aware signatures see it: its inputs (``names``, ``keys``
    ``"@X"``), parameters, the output ``Y`` and the check's upstream gradient ``G``; :meth:`numer`
    differentiates ``sum(forward(*xs) * G')`` for any inputs and ``G'`` (the candidates' source)."""

    def __init__(self, proxy, inputs, names, params, training, G=None, seed=0):
        self.inputs, self.names, self.params = inputs, list(names), params
        self.keys, self.fwd = ["@" + n for n in names], _f64(proxy, training)
        self.proxy, self.training = proxy, training  # backward at another batch size (:func:`_factor_at_more`)
        self.Y = self.fwd(*inputs)
        # the upstream gradient check_layer drew for these inputs (gradcheck.check._upstream), unless one was given
        self.G = upstream_draw(probe_rng(seed), self.Y.shape, [*inputs, *params.values()]) if G is None else G
        self.seed, self.n_batch = seed, inputs[0].shape[0] if inputs[0].ndim else 1
        #: "eval mode" / "test mode" when the layer runs in a declared inference mode, else ""
        self.eval_mode = ""
        #: the qualified class name of the check's reference layer (--reference), or None
        self.reference = None
        #: that reference's ``eps`` (a norm's), and the checked layer itself (its source read by :func:`_sqrt_eps`)
        self.reference_eps, self.layer = None, None
        #: backward returns the weights' gradients after the inputs' (``(dX, dW, db)``)
        self.returns_weights = False
        #: where an attribute-style layer stores each gradient (``{"W": "self.dW"}``, :func:`gradcheck.sources.grad_slots`)
        self.slots: dict[str, str] = {}
        #: the protocol text of the adapted layer (a function pair names its functions there), or ""
        self.protocol = ""
        #: a forward of k outputs read as one (:meth:`gradcheck._adapters.Outputs.data`), or None
        self.outputs: Mapping | None = None
        #: a dropout layer's rate (:func:`_dropout_rate`), or None
        self.rate: float | None = None
        #: the layer's number settings (:func:`_layer_numbers`)
        self.numbers: dict[str, float] = {}
        #: ``(make the other mode's forward, its fields)`` of a layer with two modes (:func:`_other_mode`), or None
        self.other_mode: tuple[Any, dict[str, str]] | None = None
        #: the seed protocol's weights without gradients, read when asked (:func:`seed_weights`; {} for the others)
        self.seed_weights: Any = dict
        #: forward has coarse values inside (:func:`_precision_inside`: float16, a rounding), so central differences
        #: are not its gradient
        self.coarse = False
        #: the numerical Jacobians :func:`_jacobian` differenced, by key
        self.jacobians: dict[str, np.ndarray] = {}

    def numer(self, which, xs=None, G=None, **kw) -> dict[str, np.ndarray]:
        """Central differences of the keys ``which`` at ``xs`` (default the inputs) for ``G``
        (``kw``: ``eps``, ``method`` of :func:`gradcheck.numerical.layer_numerical_gradients`)."""
        return _numerical(self.fwd, self.inputs if xs is None else xs, self.params,
                          self.G if G is None else G, input_names=self.keys, which=which, **kw)

    def forward_again(self) -> None:
        """The checked forward run again on the check's inputs (copies), after a probe ran it elsewhere: its cache is
        the check's again; what that raises is left unsaid (the probe's answer stands)."""
        with contextlib.suppress(Exception):  # noqa: BLE001 - student code
            self.proxy.forward(*[a.copy() for a in self.inputs], training=self.training)

    def fwd_with(self, i: int, xi: np.ndarray) -> np.ndarray:
        """The forward with input ``i`` replaced by ``xi`` (the others as checked)."""
        return self.fwd(*self.inputs[:i], xi, *self.inputs[i + 1:])

    def directional(self, key, G):

        """Two directional derivatives of ``sum(forward * G)`` along random directions of key."""
        return _directional(self.fwd, self.inputs, self.params, G, input_names=self.keys,
                            groups=[[key]], rng=probe_rng(self.seed))[(key,)]


def _path_terms(m, n, G, xh, mean, tol):
    """``((obs_mean, miss_mean), (obs_var, miss_var))`` per group for a BatchNorm's dX ``m``: what ``m`` has of
    the mean's and the variance's path terms (``mean(m)``, ``mean(m * xh)``) and what a backward without that
    path would have (``s * mean(G)``, ``s * mean(G * xh)``), with ``n = s * P(G)`` (:func:`_path_weights`);
    None where ``n`` is not of that form."""
    if G is None or G.shape != n.shape:
        return None
    P = G - mean(G) - xh * mean(G * xh)
    pp = mean(P * P)
    s = mean(n * P) / np.where(pp > 0, pp, 1.0)
    if not close(n, s * P, tol, tol * np.abs(n).max()):  # at n's scale: eps's share leaves small entries off
        return None
    return (mean(m), s * mean(G)), (mean(m * xh), s * mean(G * xh))


def _variance_exponent(m, n, G, X, xh, mean, tol):
    """``(eps, verdict)`` for a BatchNorm's dX whose variance term has ``var + eps`` times its right weight per
    group, one ``eps`` in [0, 0.1] for all groups (tester32c M2: ``dL/dvar`` with ``(var + eps)**(-1/2)`` where
    the derivative of ``(var + eps)**(-1/2)`` has ``**(-3/2)``), the mean term right: ``verdict`` True; False when
    the terms can be weighed and the variance term is neither missing (weight 0) nor of that form (then no
    missing-path sentence may be said); None when they cannot be weighed."""
    terms = _path_terms(m, n, G, xh, mean, tol)
    if terms is None:
        return None
    (om, mm), (ov, mv) = terms
    big = np.abs(mv) > 1e-6 * max(np.abs(mv).max(), 1e-300)
    if not np.any(big) or not close(om, 0 * om, 1e-2, max(1e-9 * np.abs(n).max(), tol * np.abs(mm).max())):
        return False  # the mean term is not right: not this bug alone
    c = 1.0 - ov[big] / mv[big]  # the variance term's weight per group (1 right, 0 missing)
    if np.all(np.abs(c) <= 2e-2):
        return None  # missing: the missing-path sentence holds
    eps = c - np.broadcast_to(mean((X - mean(X)) ** 2), ov.shape)[big]
    e = float(np.median(eps))
    if -1e-3 <= e <= 0.1 and close(eps, np.full_like(eps, e), 0.0, 2e-2 * max(1.0, float(np.abs(c).max()))) \
            and np.abs(c - 1).max() > 5e-2:
        return max(e, 0.0), True
    return None, False


def _path_weights(m, n, G, xh, mean, tol):
    """How much of each statistic's path ``m`` has, where ``m`` differs from ``n`` only along the
    per-group constant and x_hat (a BatchNorm's dX): ``(c_mean, c_var)``, 1 for the right term,
    0 for a missing one. With gamma constant per group (the batch scope), ``n = s * P(G)``, P the
    projection of the upstream gradient out of both, and ``m = n + (1 - c) * s * (mean(G) + xh *
    mean(G * xh))`` term by term (``lessons/22-batchnorm.md``). None where ``n`` is not of that
    form (a per-feature gamma inside the group: LayerNorm)."""
    terms = _path_terms(m, n, G, xh, mean, tol)
    if terms is None:
        return None
    coef = []
    for obs, miss in terms:
        den = float(np.sum(miss * miss))
        if den <= 1e-12 * max(float(np.sum(n * n)), 1e-300):
            return None
        c = 1.0 - float(np.sum(obs * miss)) / den
        # a right term leaves obs at the finite differences' noise (xhat here has no eps)
        if not close(obs, (1.0 - c) * miss, 1e-2, max(1e-9 * np.abs(n).max(), tol * np.abs(miss).max())):
            return None  # not one factor over the groups
        coef.append(c)
    return tuple(coef)


def _wrong_weights(c_mean, c_var, count, axes, X, bessel=lambda: None):
    """The sentence for statistics' paths with wrong weights, or None when one is just missing
    (``bessel``: :func:`_bessel_forward`'s answer, asked only for a variance count off by one)."""
    def near(c, v):
        return abs(c - v) <= 2e-2 * max(1.0, abs(v))

    if (near(c_mean, 0) or near(c_mean, 1)) and (near(c_var, 0) or near(c_var, 1)):
        return None  # missing (0) or right (1): the missing-paths sentence
    if near(c_mean, 1) and (near(c_var, (count - 1) / count) or near(c_var, count / (count - 1))):
        return _variance_count(count, axes, bessel())
    fix = (f"each mean over axis={axes} divides by the number of values it averages, {count} "
           "(N*H*W for an (N, C, H, W) input)")
    if near(c_mean, c_var):
        k = (c_mean + c_var) / 2
        return f"the mean and variance terms are {k:.4g} times their right size{_count_hint(k, count, X, 's')}", fix
    if near(c_var, 1):  # the mean term alone with another count
        return (f"the mean term (the one with dxhat's mean) is {c_mean:.4g} times its right size, the "
                f"variance term right{_count_hint(c_mean, count, X, ' term')}", fix)
    return (f"the mean term has {c_mean:.4g} and the variance term {c_var:.4g} times its right weight",
            "compare each term with the formula, with its count")


def _stat_count(count: int, axes) -> str:
    """The count a batch statistic's sum is divided by, in the student's words: ``N`` over axis 0,
    ``N*H*W`` over (0, 2, 3) (``count``, the number, when neither)."""
    return "N" if axes in (0, (0,)) else "N*H*W" if tuple(np.atleast_1d(axes)) == (0, 2, 3) else str(count)


def _xhat_formula(ax: str, bessel: bool | None, cnt: str = "N") -> str:
    """BatchNorm's training dX from xhat, for the variance forward computes: the biased var() (the
    means' formula), or var(ddof=1) (``bessel``), whose variance term divides by ``cnt`` - 1 where
    its mean term divides by ``cnt`` (with xhat and var as that forward computes them)."""
    if bessel:
        return (f"with dxhat = dY * gamma, and xhat and var as your forward computes them (var with ddof=1, "
                f"dividing by {cnt}-1): dX = (dxhat - dxhat.mean({ax}) - xhat * (dxhat * xhat).sum({ax}) / "
                f"({cnt} - 1)) / sqrt(var + eps), the mean and the sum with keepdims=True (the variance term "
                f"divides by {cnt}-1 as forward's variance does)")
    return (f"with dxhat = dY * gamma: dX = (dxhat - dxhat.mean({ax}) - xhat * (dxhat * xhat).mean({ax})) / "
            "sqrt(var + eps), both means with keepdims=True")


def _variance_count(count: int, axes, bessel: bool | None) -> tuple[str, str]:
    """``(how, fix)`` for a variance term of (N-1)/N or N/(N-1) its weight: forward's variance and
    backward's term count its values differently; which side divides by N-1 when :func:`_bessel_forward`
    could tell (``bessel`` True: forward's var(ddof=1); False: forward's var(), so the backward's)."""
    cnt = _stat_count(count, axes)
    ax = f"axis={axes}"
    if bessel is None:
        return ("the variance term has (N-1)/N of its weight or N/(N-1) of it: forward and backward "
                f"count the variance's {count} values differently (var(ddof=1) divides by N-1, "
                "var() and the backward formula by N)", "use the same count in both: var(ddof=0) "
                "in forward with the formula's means, or carry N-1 into the backward's variance term")
    if bessel:
        return (f"the variance term has ({cnt}-1)/{cnt} of its weight: forward's variance is "
                f"Bessel-corrected (var(ddof=1), or var() * {cnt}/({cnt}-1): divides by {cnt}-1 = {count - 1}) "
                f"while backward's variance term divides by {cnt} = {count}",
                "carry the same count into backward: " + _xhat_formula(ax, True, cnt)
                + "; or use var() (ddof=0) in forward, then " + _xhat_formula(ax, False))
    return (f"the variance term has {cnt}/({cnt}-1) times its weight: forward's variance is var() "
            f"(divides by {cnt} = {count}) while backward's variance term divides by {cnt}-1 = {count - 1}",
            "divide by the count forward's variance uses: " + _xhat_formula(ax, False))


def _bessel_forward(L: _Layer, X) -> bool | None:
    """Whether a batch normalisation's forward divides its variance by M-1 (``var(ddof=1)``,
    ``var() * N/(N-1)``) rather than by M, its count of values per statistic; None when it cannot be
    told. The batch stacked twice has the same mean and biased variance: a forward with var() gives
    each copy X's outputs; one with ddof=1 gives both copies the same outputs, centred ones
    sqrt(M/(M-1) * (2M-1)/(2M)) times X's (the variance's count goes from M to 2M)."""
    axes = _group_axes(X)
    if axes is None or L.Y.shape != X.shape:
        return None
    N, count = X.shape[0], int(np.prod([X.shape[a] for a in axes]))
    try:
        Y2 = np.asarray(L.fwd_with(0, np.concatenate([X, X])), dtype=float)
    except Exception:  # noqa: BLE001 - a forward that refuses another batch size: no claim
        return None
    if Y2.shape != (2 * N, *X.shape[1:]) or not close(Y2[:N], Y2[N:], 1e-9, 1e-12):
        return None  # the copies differ: not a function of the statistics and each sample
    if close(Y2[:N], L.Y, 1e-9, 1e-12):
        return False
    mean = functools.partial(np.mean, axis=axes, keepdims=True)
    yc, ac = L.Y - mean(L.Y), Y2[:N] - mean(Y2[:N])
    den = mean(yc * yc)
    if not np.all(den > 0):
        return None
    want = np.sqrt(count / (count - 1) * (2 * count - 1) / (2 * count))
    return bool(np.all(np.abs(mean(ac * yc) / den - want) <= 0.2 * (want - 1))) or None


def _count_hint(k: float, count: int, X, what: str) -> str:
    """``"; 32 / 16 = 2: the means divide by N ..."``: the count a statistics' term ``k`` times too
    large divides by (N, H*W or N-1 for ``count`` values), or "" when it is none of them."""
    sizes = (("N", X.shape[0]), ("H*W", int(np.prod(X.shape[2:])) if X.ndim == 4 else 0), ("N-1", count - 1))
    for name, size in sizes:
        if size > 1 and abs(count / k - size) <= 2e-2 * size:
            verb = "divide" if what == "s" else "divides"
            return (f"; {count} / {k:.4g} = {size}: the mean{what} {verb} by {name} where the statistics "
                    f"are over {count} values")
    return ""


def _eps_share(v, n, xh, sd, mean):
    """``var / (var + eps)`` per group, the weight of the variance path for the ``eps`` inside the layer's
    ``sqrt(var + eps)`` (Keras's epsilon=1e-3 is 0.1% of a unit variance), fitted as one ``eps`` for every
    group from ``n = v - k * xh * mean(v * xh)`` (``v`` the centred ``m``); 1.0 when no such eps fits."""
    p = xh * mean(v * xh)
    pp = mean(p * p)
    if not np.all(pp > 0):
        return 1.0
    k = mean((v - n) * p) / pp
    if not np.all((k > 0.5) & (k <= 1 + 1e-9)):
        return 1.0
    eps = max(float(np.median(sd**2 * (1 / k - 1))), 0.0)
    return sd**2 / (sd**2 + eps)


def _eps_dropped(m, n, X):
    """A normalisation whose backward divides by ``sqrt(var)`` where forward divided by ``sqrt(var + eps)``
    (tester18s L5): ``m`` is ``n`` times ``r`` per group, ``r > 1``, and ``var * (r**2 - 1)`` is one ``eps`` for
    every group, at most 0.1; else None."""
    if X.dtype.kind != "f" or m.shape != X.shape or not np.all(np.isfinite(n)):
        return None
    for axes in [a for a in (_group_axes(X), (X.ndim - 1,)) if a]:
        nn = np.sum(n * n, axis=axes, keepdims=True)
        if not np.all(nn > 0):
            continue
        r = np.sum(m * n, axis=axes, keepdims=True) / nn
        eps = X.var(axis=axes, keepdims=True) * (r**2 - 1)
        e = float(np.median(eps))
        if np.all(r > 1 + 1e-9) and close(m, n * r, 1e-8) and 0 < e <= 0.1 and close(eps, np.full_like(eps, e), 1e-2, 0.0):
            ax = f"axis={axes if len(axes) > 1 else axes[0] if X.ndim == 2 or axes[0] == 0 else -1}"
            return "eps-dropped-backward", {"eps": e, "ax": ax}
    return None


def _scale_of_input_signature(L: _Layer, key, m, n):
    """A normalisation's scale gradient taken with the raw input for x_hat (bugs43 M1, bn_gammax: CS231n's
    ``dgamma = np.sum(dout * x, axis=0)``): ``key`` a 1-D parameter (or input beside x) of the feature axis' size (the
    last, or axis 1 of a 4-D input), ``m`` equal to ``(G * X).sum`` over the other axes and ``n``, the correct
    gradient, to ``(G * x_hat).sum`` over them (x_hat: X standardised over the batch axes or the features, 1e-3) and
    not ``m``."""
    X, G = np.asarray(L.inputs[0], dtype=np.float64), L.G
    given = {**L.params, **{k: x for k, x in zip(L.keys[1:], L.inputs[1:], strict=True)}}
    if key == L.keys[0] or key not in given or np.ndim(m) != 1 or G.shape != X.shape or X.ndim < 2 or close(
            m, n, 1e-5):
        return None
    for feat in (X.ndim - 1, 1):
        axes = tuple(a for a in range(X.ndim) if a != feat)
        if X.shape[feat] != m.size or not close(m, (G * X).sum(axis=axes), 1e-6, 1e-9):
            continue
        for stat, scope in ((axes, "batch"), ((feat,), "per-sample")):  # BatchNorm's statistics, LayerNorm's
            xc = X - X.mean(axis=stat, keepdims=True)
            sd = np.sqrt((xc * xc).mean(axis=stat, keepdims=True))
            if np.all(sd > 0) and close(n, (G * xc / sd).sum(axis=axes), 1e-3, 1e-3 * np.abs(n).max()):
                ax = f"axis={axes[0] if len(axes) == 1 else axes}"
                return "scale-grad-of-input", {"x": L.names[0], "p": key.lstrip("@"), "ax": ax, "scope": scope,
                                               "stat": _axes_text(stat)}
    return None


_EPS_FORMS = {"inside": ("inside the square root", "np.sqrt(var + eps)"),
              "outside": ("outside the square root", "(np.sqrt(var) + eps)")}


def _eps_grads(form: str, u, sd, e, dxh, z_f, istd_f, mean):
    """Two backwards of a normalisation whose eps sits ``form`` ("inside": ``u / sqrt(var + e)``; "outside": ``u /
    (sd + e)``), ``u`` the centred input, ``dxh = dY * gamma``: the exact derivative of that form, and its formula
    evaluated with another forward's cached ``z_f`` (x_hat) and ``istd_f`` (1 / its denominator)."""
    if form == "inside":
        istd = 1 / np.sqrt(sd**2 + e)
        z = u * istd
        return (istd * (dxh - mean(dxh) - z * mean(dxh * z)),
                istd_f * (dxh - mean(dxh) - z_f * mean(dxh * z_f)))
    istd = 1 / (sd + e)
    return (istd * (dxh - mean(dxh)) - istd**2 * (u / sd) * mean(dxh * u),
            istd_f * (dxh - mean(dxh)) - istd_f * (u / sd) * mean(dxh * z_f))


def _eps_reading(other: str) -> dict[str, str]:
    """:func:`_eps_placement`'s words for a backward that is the exact derivative of the ``other`` placement of eps."""
    return {"got": f"the gradient of (x - mean) / {_EPS_FORMS[other][1]}, eps {_EPS_FORMS[other][0]}",
            "how": "backward differentiates the other placement of eps", "fix": "put eps in the same place in both"}


def _eps_cached_reading(form: str, ax: str) -> dict[str, str]:
    """:func:`_eps_placement`'s words for a backward that is the other placement's formula evaluated with forward's
    cached x_hat and denominator (``form``: forward's placement): not the gradient of either form (verify44c F3: a
    layer norm keeping eps in forward and in backward's 1/sqrt(var + eps), dropping it in d(den)/d(var) alone, was
    told it differentiated (x - mean) / (sqrt(var) + eps) and to put eps in the same place in both)."""
    if form == "inside":
        return {"got": "the chain rule through forward's x_hat and 1 / np.sqrt(var + eps) with d np.sqrt(var + eps) "
                       "/ d var taken as 0.5 / np.sqrt(var), without eps (eps dropped in the variance's path alone)",
                "how": "0.5 / np.sqrt(var) is the derivative of np.sqrt(var) + eps, not of forward's np.sqrt(var + "
                       "eps)",
                "fix": "keep eps in the variance's path too: d(den)/d(var) = 0.5 / np.sqrt(var + eps)"}
    return {"got": f"(dxhat - dxhat.mean({ax}) - xhat * (dxhat * xhat).mean({ax})) / den with forward's xhat and "
                   "den = np.sqrt(var) + eps",
            "how": "that formula is the derivative only when eps is inside the square root, where xhat has unit "
                   "variance",
            "fix": "put eps inside the square root in forward (den = np.sqrt(var + eps)), or differentiate "
                   "(x - mean) / (np.sqrt(var) + eps) itself"}


def _eps_placement(L: _Layer, m, n, X):
    """A normalisation (features on the last axis, statistics over it or over the others) whose forward puts its eps
    on one side of the square root, ``(x - mean) / (sqrt(var) + eps)`` or ``/ sqrt(var + eps)``, and whose backward
    differentiates the other (bugs43 M2: LayerNormEpsOutside, named "wrong weights"): Y fitted as ``gamma * x_hat +
    beta`` per feature to 1e-9 for one form and an eps (:data:`_NORM_EPS`, the layer's own numbers), ``n`` that
    form's derivative, ``m`` the other form's (exact, or its formula with forward's cached x_hat) and not ``n``."""
    Y, G = np.asarray(L.Y, dtype=np.float64), L.G
    if X.ndim < 2 or Y.shape != X.shape or G.shape != X.shape or close(m, n, 1e-9):
        return None
    D, x = X.shape[-1], X.reshape(-1, X.shape[-1]).astype(np.float64)
    epss = dict.fromkeys([e for e in (*_NORM_EPS, *L.numbers.values()) if 0 < e <= 0.1])
    for axis, scope, group in ((1, "per-sample", "sample"), (0, "batch", "feature")):
        mean = functools.partial(np.mean, axis=axis, keepdims=True)
        u = x - mean(x)
        sd = np.sqrt(mean(u * u))
        if not np.all(sd > 0) or x.shape[axis] < 2:
            continue
        for e, form in itertools.product(epss, _EPS_FORMS):
            istd = 1 / np.sqrt(sd**2 + e) if form == "inside" else 1 / (sd + e)
            z = u * istd
            y, zc = Y.reshape(-1, D), z - z.mean(axis=0)  # per feature j: Y[:, j] = g_j z[:, j] + b_j, least squares
            zz = (zc * zc).sum(axis=0)
            if not np.all(zz > 0):
                continue
            g = (zc * (y - y.mean(axis=0))).sum(axis=0) / zz
            if not close(z * g + (y - z * g).mean(axis=0), y, 1e-9, 1e-12):
                continue
            dxh = G.reshape(-1, D) * g
            other = "outside" if form == "inside" else "inside"
            if not close(_eps_grads(form, u, sd, e, dxh, z, istd, mean)[0].reshape(X.shape), n, 1e-6, 1e-12):
                return None  # forward's form, but n is not its derivative: not this
            fits = [close(c.reshape(X.shape), m, 1e-6, 1e-12) for c in _eps_grads(other, u, sd, e, dxh, z, istd, mean)]
            if any(fits):
                ax = "axis=-1" if axis == 1 else f"axis={tuple(range(X.ndim - 1)) if X.ndim > 2 else 0}"
                return "eps-placement", {"fwd": _EPS_FORMS[form][0], "fwd_form": _EPS_FORMS[form][1], "eps": e,
                                         "scope": scope, "ax": ax, "group": group} | (
                    _eps_reading(other) if fits[0] else _eps_cached_reading(form, ax))
            return None
    return None


def _norm_signature(m, n, X, tol=1e-3, G=None, bessel=lambda: None):
    """A normalisation's dX without the paths through its statistics: the correct ``n`` is ``m``
    with its per-group mean and x_hat component projected out (BatchNorm, LayerNorm), or ``m`` plus
    a constant per group while ``n`` sums to zero over it (a batch-mean layer whose backward omits
    the mean term). Paths that are there with wrong weights (a count of N for N*H*W values, a
    variance with ddof=1 in forward only) are named as such (:func:`_path_weights`). ``bessel`` tells
    whether forward's variance divides by M-1 (:func:`_bessel_forward`; asked only when a formula is given)."""
    if (f := _eps_dropped(m, n, X)) is not None:
        return f
    scale = np.abs(m).max()
    for axes in [a for a in (_group_axes(X), (X.ndim - 1,)) if a]:
        mean = functools.partial(np.mean, axis=axes, keepdims=True)
        ax = f"axis={axes if len(axes) > 1 else axes[0] if X.ndim == 2 or axes[0] == 0 else -1}"
        out = {"scope": "batch" if 0 in axes else "per-sample", "ax": ax}
        has_mean = np.abs(mean(m)).max() <= tol * scale  # the mean path makes dX centred
        xc = X - mean(X)
        sd = np.sqrt(mean(xc**2))
        xh = xc / np.where(sd > 0, sd, 1.0)
        v = m - mean(m)
        if np.all(sd > 0) and close(v - _eps_share(v, n, xh, sd, mean) * xh * mean(v * xh), n, tol,
                                    tol * np.abs(n).max()):  # at n's scale, as _path_weights
            has_var = np.abs(mean(m * xh)).max() <= tol * scale  # its path: dX orthogonal to xhat
            count = int(np.prod([X.shape[a] for a in axes]))
            weights = _path_weights(m, n, G, xh, mean, tol) if 0 in axes else None
            said = _wrong_weights(*weights, count, axes if len(axes) > 1 else axes[0], X, bessel) \
                if weights else None
            if said is None and has_mean and has_var:  # both paths there: not a missing one
                said = ("both terms are there, with other weights than the forward's statistics need",
                        "compare each term with the formula, with its count")
            if said is not None:
                return "wrong-stat-weights", out | {"how": said[0], "fix": said[1]}
            if has_mean and 0 in axes and (e := _variance_exponent(m, n, G, X, xh, mean, tol)) is not None:
                if e[1]:
                    return "variance-exponent", out | {"eps": e[0]}
                return None  # the variance's path is there with other weights: no missing-path name (M2)
            if (wide := _wider_axes(m, xh, sd, axes, tol)) is not None:  # outside44 M1: both paths, other axes
                return "wrong-stat-weights", out | {
                    "how": f"backward takes their means over axes {wide} of the input where forward's statistics are over "
                           f"axis {', '.join(map(str, axes))} alone "
                           f"(e.g. a batch norm's axes in an instance or layer norm)",
                    "fix": f"take backward's means over axis={axes if len(axes) > 1 else axes[0]}, forward's: "
                           + _xhat_formula(ax, None, _stat_count(count, axes if len(axes) > 1 else axes[0]))}
            return "missing-mean-var-paths", out | {
                "which": "variance" if has_mean else "mean" if has_var else "mean and variance",
                "fix": _xhat_formula(ax, bessel() if 0 in axes else None,
                                     _stat_count(count, axes if len(axes) > 1 else axes[0]))}
        d, nmax = n - m, np.abs(n).max()
        if (not has_mean and 0 < nmax and np.abs(mean(n)).max() <= tol * nmax
                and close(d, 0 * d + mean(d), tol)):
            return "missing-mean-var-paths", out | {
                "which": "mean", "fix": f"the gradient is off by a constant per group (true - "
                f"given is constant over {ax}); the mean's path subtracts the mean: dX = dxc - "
                f"dxc.mean({ax}, keepdims=True), dxc the gradient of the centred values"}
    return None


def _wider_axes(m, xh, sd, axes, tol):
    """The axes, more than forward's ``axes``, over which ``m * sd`` (a normalisation's dX times forward's
    ``sqrt(var + eps)``) is centred and orthogonal to forward's ``xh``: a backward with both paths through the
    statistics that takes their means over those axes (an instance norm's backward averaging over the batch too,
    outside44 M1: told its paths were missing); None when there are none."""
    w = m * sd
    scale = np.abs(w).max()
    others = [a for a in range(m.ndim) if a not in axes and m.shape[a] > 1]
    for k in range(1, len(others) + 1):
        for extra in itertools.combinations(others, k):
            wide = tuple(sorted((*axes, *extra)))
            mean = functools.partial(np.mean, axis=wide, keepdims=True)
            if scale > 0 and np.abs(mean(w)).max() <= tol * scale and np.abs(mean(w * xh)).max() <= tol * scale:
                return wide
    return None


def _group_norm_signature(m, n, X):
    """A group normalisation's dX without its paths through the statistics (tester18s L5: GroupNorm, 'no known
    bug pattern' before): :func:`_norm_signature` of ``(N, g, C/g*H*W)`` for a ``g`` dividing C (1: a layer norm
    over C, H, W; C: an instance norm), its missing paths named per group."""
    if X.ndim != 4:
        return None
    N, C = X.shape[:2]
    for g in (d for d in range(1, C + 1) if C % d == 0):
        f = _norm_signature(m.reshape(N, g, -1), n.reshape(N, g, -1), X.reshape(N, g, -1))
        if f is not None and f[0] == "missing-mean-var-paths":
            return f[0], f[1] | {"scope": "per-group", "ax": f"each sample's {g} group{'s' * (g > 1)} of {C // g} "
                                 f"channel{'s' * (C // g > 1)} x H x W, x.reshape(N, {g}, -1) over axis=-1"}
    return None


def _softmax_jacobian(n, G, Y):
    """``("missing-softmax-jacobian", fields)`` when ``Y`` is a softmax over the last axis (rows of positive entries
    summing to 1) or a log-softmax (``exp(Y)`` such rows) and the numerical ``n`` is its Jacobian-vector product
    (``s * (G - sum(G * s))``, or ``G - s * sum(G)``): a backward returning dY for a layer whose Jacobian is not
    diagonal, whose fix is not ``dY * f'(X)`` (newuser30 F6); else None."""
    Y = np.asarray(Y, dtype=np.float64)
    if Y.shape != G.shape or Y.ndim < 1 or Y.shape[-1] < 2 or not np.all(np.isfinite(n)):
        return None
    for what, s, want, fix in (
            ("softmax", Y, lambda s: s * (G - np.sum(G * s, axis=-1, keepdims=True)),
             "dX = s * (dY - np.sum(dY * s, axis=-1, keepdims=True)), s = the softmax output (its Jacobian "
             "diag(s) - s s^T applied to dY, row by row)"),
            ("log-softmax", np.exp(np.minimum(Y, 0.0)), lambda s: G - s * np.sum(G, axis=-1, keepdims=True),
             "dX = dY - np.exp(Y) * np.sum(dY, axis=-1, keepdims=True), Y the log-softmax output")):
        if what == "log-softmax" and np.any(Y > 1e-12):
            continue
        if np.all(s > 0) and sums_to_one(s) and close(n, want(s), 1e-5):
            return "missing-softmax-jacobian", {"what": what, "fix": fix}
    return None


def _factor_weight_left_out(L: _Layer, m, n):
    """``("dx-weight-left-out", fields)`` when the input's gradient ``m`` times one of the layer's weights of the
    input's last-axis size (a normalisation's gamma, numpy-ml's ``scaler``) is the numerical ``n`` while ``m`` is not
    (tester31m's bn_no_scaler: ``dN = dLdy`` for ``dLdy * scaler``); a right ``m`` equals ``n``, so is never named."""
    if close(m, n, 1e-5) or not np.all(np.isfinite(m)) or (np.shape(m) == np.shape(L.G) and close(m, L.G, 1e-5)):
        return None  # dX = dY itself: "upstream-returned" names it (the chain rule's product with the weight)
    for name, w in (L.params or {}).items():
        w = np.asarray(w)
        if w.dtype.kind == "f" and w.size == m.shape[-1] > 1 and not close(w, np.ones_like(w), 1e-5, 1e-8) \
                and close(m * w.reshape(-1), n, 1e-5):
            return "dx-weight-left-out", {"w": name}
    return None


def _context_signature(L: _Layer, t, key, m, n):
    """A normalisation's missing paths, dX = dY, an activation's derivative, a square weight
    transposed in dX or in a weight's gradient (:func:`_inner_weight_signature`: ``dW = d @ A`` where ``d @ A.T`` is
    due, A a square input), the output used as input."""
    X, G, Y, ok, is_input = L.inputs[0], L.G, L.Y, np.isfinite(n), key.startswith("@")
    # the input this gradient belongs to (a CS231n pair batchnorm(x, gamma, beta): x, the first)
    xi = L.inputs[L.names.index(key[1:])] if is_input and key[1:] in L.names else None
    if (xi is not None and m.shape == xi.shape and ok.all() and xi.ndim >= 2
            and xi.dtype.kind == "f"):
        if L.eval_mode and key == L.keys[0] and (f := _eval_formula_signature(L, m, n, xi)):
            return f
        bessel = functools.cache(lambda: None if L.eval_mode else _bessel_forward(L, xi))
        if (f := _factor_weight_left_out(L, m, n)) is not None:
            return f
        if (f := _eps_placement(L, m, n, xi)) is not None:
            return f  # bugs43 M2: before the paths' weights, which it was named as
        if (f := _norm_signature(m, n, xi, G=L.G, bessel=bessel)) is not None:
            return _test_mode_batch(L, f, xi) if L.eval_mode else f
        if (f := _group_norm_signature(m, n, xi)) is not None:
            return f
    if is_input and m.shape == G.shape and close(m, G) and not close(np.where(ok, n, G), G):
        return (_returned_upstream(n, G, L.params) or _scale_dropped(n, G, L) or _mean_path_dropped(n, G, L, key)
                or _softmax_jacobian(n, G, Y) or ("missing-local-derivative", {}))
    if (is_input and m.shape == G.shape == n.shape and Y.shape == X.shape and close(n, G)
            and np.array_equal(Y, X) and (s := _mask_values(_per_dy(m, G), 12)) is not None):
        return "stale-mask", {"scale": f"{s:.6g}"}  # the identity's dX times the mask a training forward left
    if is_input and ok.all() and m.shape == n.shape:
        weights = _weights(L.params, L.names, L.inputs, key, square=True)
        f = (_activation_signature(m, n, L.inputs, Y, G)
             or _transposed_weight_signature(m, n, G, weights, t))
        if f is not None:
            return f
    if not is_input and (f := _output_product(m, G, Y)) is not None:
        return f
    if not is_input and ok.all() and m.shape == n.shape and (f := _inner_weight_signature(m, n, {
            k: w for k, w in _weights(L.params, L.names, L.inputs, key).items() if k != key}, t)) is not None:
        return f  # a weight's gradient with a square input untransposed (Ng's dWax = dtanh @ xt: tester33 F13)
    if (len(L.inputs) == 1 and X.dtype.kind == "f" and Y.shape == X.shape
            and close(m, at_y := L.numer([key], [Y])[key], 1e-5)  # the gradient the layer has at Y,
            and not close(np.where(ok, n, at_y), at_y, 1e-5)):  # told from the one at X (tester20s M5: not linear)
        return ("activation-applied-twice", {}) if is_input else (
            "cached-output", {"how": "is the gradient the layer would have at its output Y"})
    return None


def _mask_values(r, decimals: int = 9) -> float | None:
    """The one nonzero value of ``r`` (to ``decimals``) when it holds zeros and that value (a mask), else None."""
    vals = np.unique(np.round(r[np.abs(r) > 1e-12], decimals))
    return float(vals[0]) if r.size and (np.abs(r) <= 1e-12).any() and len(vals) == 1 else None


def _per_dy(m, G):
    """``m / G`` where ``G`` is nonzero (the factor a backward multiplied dY by), flat."""
    nz = G != 0
    return np.divide(m, G, out=np.zeros_like(m), where=nz)[nz]


def _mask_scale(L: _Layer, m) -> dict[str, str] | None:
    """An inverted dropout whose backward multiplies dY by another mask scale than forward
    multiplies X by (its 1/(1-p) missing in backward): the fields of ``mask-scale``, or None."""
    X, Y, G = L.inputs[0], L.Y, L.G
    if not (len(L.inputs) == 1 and X.shape == Y.shape == m.shape == G.shape) or not np.all(X != 0):
        return None
    nz = G != 0
    s, a = _mask_values(Y / X), _mask_values(_per_dy(m, G))

    # a forward mask of 0 and 1 is also a ReLU's: named only when the forward scales (inverted dropout)
    if s is None or a is None or abs(s - 1) <= 1e-9 or abs(a - s) <= 1e-9 or not np.array_equal(
            Y[nz] == 0, m[nz] == 0):
        return None
    why = (f"the forward's scale {s:.6g} (1 / the keep probability) is missing in backward" if abs(a - 1) <= 1e-9
           else f"backward multiplies by the drop probability p = {a:.6g} where forward divides by the keep "
           f"probability 1 - p = {1 / s:.6g}" if abs(a - (1 - 1 / s)) <= 1e-9  # fixd26: dY * mask * p
           else f"backward multiplies by the keep probability {a:.6g} where forward divides by it"
           if abs(a - 1 / s) <= 1e-9 else "the two scales differ")
    return {"a": f"{a:.6g}", "s": f"{s:.6g}", "why": why}


def _group_axes(X):
    """The axes a batch normalisation averages over: (0,) for (N, D), (0, 2, 3) for (N, C, H, W)."""
    return (0,) if X.ndim == 2 else (0, 2, 3) if X.ndim == 4 else None


def _eval_formula_signature(L: _Layer, m, n, X):
    """A normalisation's eval-mode dX computed with the training formula: the correct ``n`` is dY
    times a constant per feature (the statistics are constants), and ``n - m`` is per feature an
    affine function of X with a slope (the mean and variance paths' terms)."""
    axes, G = _group_axes(X), L.G
    if axes is None or X.shape[0] < 3 or G.shape != n.shape:
        return None
    mean = functools.partial(np.mean, axis=axes, keepdims=True)
    xc, sn = X - mean(X), np.abs(n).max()
    var, gg = mean(xc**2), mean(G * G)
    if not (np.all(var > 0) and np.all(gg > 0) and sn > 0):
        return None
    d = n - m
    slope = xc * mean(d * xc) / var
    if (close(n, G * (mean(n * G) / gg), 1e-5) and close(d, mean(d) + slope, 1e-5)
            and np.abs(slope).max() > 1e-6 * sn):
        branch = ("keep bn_param['mode'] in the cache and branch on it in backward"
                  if L.eval_mode == "test mode" else "remember the mode in forward "
                  "(self.training = training) and branch on it in backward")
        return "eval-training-formula", {"mode": L.eval_mode, "branch": branch}
    return None


def _test_mode_batch(L: _Layer, found, X):
    """A CS231n pair in test mode whose dX lacks the batch-statistics paths: when its output couples
    the samples (forward on the first N - 1 samples differs from the first N - 1 outputs), the
    forward normalises with the batch's statistics where test mode must use the running ones. A
    class in eval mode: both readings are given (a layer without running statistics may mean it)."""
    if found[1].get("scope") != "batch" or X.shape[0] < 3:
        return found
    k = X.shape[0] - 1
    try:
        part = L.fwd_with(0, X[:k])
    except Exception:  # noqa: BLE001 - a forward that refuses another batch size: no claim
        return found
    if part.shape != L.Y[:k].shape or close(part, L.Y[:k], 1e-9, 1e-12):
        return found
    if L.eval_mode == "eval mode":  # a class: whether it keeps running statistics is not known
        code, fields = found
        return code, fields | {"fix": fields["fix"] + f"; or, if eval mode is meant to normalise "
                               "with running statistics (a BatchNorm), the forward is the bug: in "
                               f"eval mode it uses the batch's own (forward({L.names[0]}[:{k}]) is "
                               f"not forward({L.names[0]})[:{k}]), and backward's constant "
                               "statistics are then right"}
    stats = "(bn_param['running_mean'] and bn_param['running_var'])"
    return "eval-batch-statistics", {"mode": L.eval_mode, "k": k, "x": L.names[0], "stats": stats}


def _returned_upstream(n, G, params):
    """dX = dY in a layer whose correct dX is dY times a weight (a Linear): the product is missing,
    not an activation's derivative."""
    if G.ndim != 2 or not np.isfinite(n).all():
        return None
    for w, W in params.items():
        if W.ndim != 2 or W.dtype.kind != "f":
            continue
        for prod, A in ((f"dY @ {w}.T", W.T), (f"dY @ {w}", W)):
            if A.shape[0] == G.shape[1] and (A.shape[1],) == n.shape[1:] and close(G @ A, n, 1e-5):
                return "upstream-returned", {"w": w, "prod": prod}
    return None


def _mean_path_dropped(n, G, L: _Layer, key):
    """``dX = dY`` where ``dY + c * dY.mean(axis=0)`` is due (tester22s's EMANorm_bug_const, named an activation's
    missing derivative in session 22): forward subtracts ``-c`` times the batch mean of X, as a running mean updated
    and used in a training forward does (``rm = 0.9 rm + 0.1 X.mean(0)``, ``Y = X - rm``: c = -0.1). Only for a 2-D
    input whose correct gradient minus dY is the same in every row and ``c`` times dY's column means."""
    if n.ndim != 2 or n.shape[0] < 2 or not np.any(mean := G.mean(axis=0)):
        return None
    d = n - G
    c = float(np.sum(d[0] * mean) / np.sum(mean * mean))
    if not (close(d, np.broadcast_to(d[0], d.shape), 1e-6) and close(d, np.broadcast_to(c * mean, d.shape), 1e-6) and abs(c) > 1e-9):
        return None
    sign = "-" if c < 0 else "+"
    return "mean-path-missing", {"x": key.lstrip("@"), "sign": sign, "k": abs(c)}


def _scale_dropped(n, G, L: _Layer):
    """dX = dY in a layer whose correct dX is dY times a factor per feature, the same for every sample (``Y = X *
    gamma``, a scale layer): the factor is missing, not an activation's derivative (session 21's r10, named "the
    local derivative of the activation"). ``upstream-returned`` with the weight's name when a parameter (or a seed
    protocol's weight) is that factor, else with the factor described; None when ``n / G`` differs between samples
    or holds only 0s and 1s (a mask, a ReLU's derivative)."""
    nz = G != 0
    if G.ndim < 2 or G.shape[0] < 2 or not nz.all() or n.shape != G.shape:
        return None
    r = n / G
    if not close(r, np.broadcast_to(r[:1], r.shape), 1e-9) or np.all(np.isin(np.round(r, 12), (0.0, 1.0))):
        return None
    for w, W in {**L.params, **L.seed_weights()}.items():
        if (isinstance(W, np.ndarray) and W.dtype.kind == "f" and 0 < W.ndim < G.ndim + 1 and W.size > 1
                and np.broadcast_shapes(W.shape, G.shape) == G.shape and close(G * W, n, 1e-9)):
            return "upstream-returned", {"w": w, "prod": f"dY * {w}"}
    return "upstream-returned", {"w": "factor s of shape " + str(r[:1].shape) + " (the same for every sample) that "
                                 "forward multiplies X by", "prod": "dY * s"}


def _weights(params, names, inputs, key=None, square=True) -> dict[str, np.ndarray]:
    """The 2-D float weights (parameters and other inputs) dX can multiply dY by, square or not."""
    others = {k: x for k, x in zip(names, inputs) if "@" + k != key}
    return {k: x for k, x in {**(params or {}), **others}.items()
            if x.dtype.kind == "f" and x.ndim == 2 and (x.shape[0] == x.shape[1]) == square}


def _activation_signature(m, n, inputs, Y, G):
    """tanh's square missing, sigmoid's (1 - out) missing, ReLU's output for its mask, softmax's diagonal only: named only when the correct ``n`` is that
    activation's own VJP at the layer's output (so the layer is tanh / a softmax), never from
    ``m`` alone."""
    if len(inputs) != 1 or not Y.shape == inputs[0].shape == G.shape:
        return None
    if close(n, G * (1 - Y**2), 1e-5) and close(m, G * (1 - Y)):
        return "tanh-missing-square", {}
    if close(n, G * Y * (1 - Y), 1e-5) and close(m, G * Y) and not close(m, n):
        return "sigmoid-missing-one-minus", {}
    if close(n, G * Y * (1 - Y), 1e-5) and close(m, G * Y * (1 + Y), 1e-5) and not close(m, n, 1e-5):
        return "sigmoid-one-plus", {}  # fixd26: a * (1 + a)
    X = inputs[0]
    if (X.dtype.kind == "f" and np.array_equal(Y, np.maximum(X, 0)) and close(n, G * (X > 0), 1e-5)
            and close(m, G * Y) and not close(m, n, 1e-5)):  # newuser26: a ReLU's dY * out
        return "relu-output-as-mask", {"k": int((X > 0).sum()), "n": X.size}
    if (X.dtype.kind == "f" and np.array_equal(Y, np.maximum(X, 0)) and close(n, G * (X > 0), 1e-5)
            and close(m, G * (X <= 0)) and not close(m, n, 1e-5)):  # tester27s: (Z < 0) for (Z > 0), a student's slip
        return "relu-mask-inverted", {"k": int((X > 0).sum()), "n": X.size}
    if (X.dtype.kind == "f" and np.array_equal(Y, np.maximum(X, 0)) and close(n, G * (X > 0), 1e-5)
            and close(m, G * (G > 0)) and not close(m, n, 1e-5)):  # tester30n: dinputs[dvalues <= 0] = 0
        return "relu-mask-on-dy", {"k": int(((X > 0) != (G > 0)).sum()), "n": X.size}
    for name, right, got, d in (("tanh", "(1 - out**2)", "(1 - X**2)", lambda v: 1 - v**2),
                                ("sigmoid", "out * (1 - out)", "X * (1 - X)", lambda v: v * (1 - v))):
        if X.dtype.kind == "f" and close(n, G * d(Y), 1e-5) and close(m, G * d(X), 1e-5) and not close(m, n, 1e-5):
            return "derivative-at-input", {"name": name, "right": right, "got": got}  # tester18s L5
    if (f := _leaky_slope(m, n, inputs[0], Y, G)) is not None or (f := _elu_alpha(m, n, inputs[0], Y, G)):
        return f
    for axis in dict.fromkeys((-1, 1) if Y.ndim > 2 else (-1,)):
        softmax = np.all(Y >= 0) and sums_to_one(Y, axis=axis)
        vjp = Y * (G - np.sum(G * Y, axis=axis, keepdims=True))
        if softmax and close(n, vjp, 1e-5) and close(m, G * Y * (1 - Y)):
            return "softmax-diagonal", {"axis": axis}
        if softmax and close(n, vjp, 1e-5) and not close(m, n, 1e-5):  # tester30n: the book's Jacobian loop's slips
            dot = lambda a, axis=axis: np.sum(a, axis=axis, keepdims=True)  # noqa: E731 - the softmax's axis, kept
            for code, wrong in (("softmax-jacobian-plus", Y * (G + dot(G * Y))),
                                ("softmax-jacobian-no-outer", Y * G),  # tester31m: np.diagflat(p) alone
                                ("softmax-jacobian-inner", Y * G - dot(Y * Y) * dot(G)),
                                ("softmax-jacobian-at-input", X * (G - dot(G * X)) if X.dtype.kind == "f" else None),
                                ("softmax-jacobian-input-inside", Y * (G - dot(G * X)) if X.dtype.kind == "f" else None)):
                if wrong is not None and close(m, wrong, 1e-5):
                    return code, {"axis": axis % Y.ndim if Y.ndim > 2 else -1}
        for other in range(Y.ndim):  # the sum over another axis than the softmax's
            if (softmax and other != axis % Y.ndim and close(n, vjp, 1e-5) and not close(m, n, 1e-5)
                    and close(m, Y * (G - np.sum(G * Y, axis=other, keepdims=True)), 1e-5)):
                return "softmax-wrong-axis", {"axis": axis % Y.ndim, "other": other}
    return _log_softmax_axis(m, n, Y, G) or _gelu_forms(m, n, inputs[0], Y, G) or _selu_scale(m, n, X, Y, G)


#: GELU's two forms, ``name: (forward, derivative, the derivative's formula)``: exact (erf) and tanh-approximated.
_GELU_C = np.sqrt(2 / np.pi)
#: each form's Phi part alone (its derivative without the x * phi(x) term) and how it and that term are written
_GELU_CDF = {
    "exact (erf)": (lambda x: 0.5 * (1 + _erf(x / np.sqrt(2))), "0.5 (1 + erf(x / sqrt(2)))",
                    "x exp(-x**2 / 2) / sqrt(2 pi)"),
    "tanh-approximated": (lambda x: 0.5 * (1 + np.tanh(_GELU_C * (x + 0.044715 * x**3))), "0.5 (1 + t)",
                          "0.5 x (1 - t**2) sqrt(2/pi) (1 + 3 * 0.044715 x**2)"),
}
_GELUS = {
    "exact (erf)": (lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
                    lambda x: 0.5 * (1 + _erf(x / np.sqrt(2))) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi),
                    "0.5 (1 + erf(x / sqrt(2))) + x exp(-x**2 / 2) / sqrt(2 pi)"),
    "tanh-approximated": (
        lambda x: 0.5 * x * (1 + np.tanh(_GELU_C * (x + 0.044715 * x**3))),
        lambda x: (0.5 * (1 + (t := np.tanh(_GELU_C * (x + 0.044715 * x**3))))
                   + 0.5 * x * (1 - t * t) * _GELU_C * (1 + 3 * 0.044715 * x * x)),
        "0.5 (1 + t) + 0.5 x (1 - t**2) sqrt(2/pi) (1 + 3 * 0.044715 x**2), t = tanh(sqrt(2/pi) (x + 0.044715 x**3))"),
}


def _erf(x):
    from scipy.special import erf
    return erf(x)


def _gelu_forms(m, n, X, Y, G):
    """A GELU whose forward is one form and backward the other's derivative (tester19s GeluTanhFwdErfBwd), or its
    Phi part alone, the x * phi(x) term of the product rule missing (fixd26): ``Y`` is one form of ``X``, ``n``
    ``G`` times its derivative and ``m`` ``G`` times the other's derivative or the Phi part; else None."""
    if X.dtype.kind != "f" or X.shape != Y.shape or close(m, n, 1e-5):
        return None
    for fwd, (f, df, right) in _GELUS.items():
        if close(Y, f(X), 1e-9) and close(n, G * df(X), 1e-5):
            cdf, got, term = _GELU_CDF[fwd]
            if close(m, G * cdf(X), 1e-7):
                whole = f"({right})" if ", t = " not in right else "({}), t = {}".format(*right.split(", t = "))
                return "gelu-missing-pdf", {"fwd": fwd, "got": got, "term": term, "right": whole}
            for bwd, (_, dg, _) in _GELUS.items():
                if bwd != fwd and close(m, G * dg(X), 1e-7):
                    return "gelu-two-forms", {"fwd": fwd, "bwd": bwd, "right": right}
            t = np.tanh(_GELU_C * (X + 0.044715 * X**3))
            if fwd == "tanh-approximated" and close(m, G * (0.5 * (1 + t) + 0.5 * X * (1 - t * t) * _GELU_C * (
                    1 + 0.044715 * X * X)), 1e-7):  # outside44 GELUNoCube: d/dx of 0.044715 x**3 taken as 0.044715 x**2
                return "gelu-cube-derivative", {"right": right}
    return None


def _log_softmax_axis(m, n, Y, G):
    """A log-softmax's backward summing dY over another axis than forward's (tester19s LogSoftmaxAxis0Bwd): ``Y``
    is a log-softmax along ``axis`` (exp(Y) sums to 1 there), ``n`` its VJP ``G - exp(Y) G.sum(axis)`` and ``m``
    the same with the sum over ``other``; else None."""
    if Y.ndim < 2 or np.any(Y > 1e-12):
        return None
    P = np.exp(Y)
    for axis in dict.fromkeys((-1, 1) if Y.ndim > 2 else (-1,)):
        if not sums_to_one(P, axis=axis) or not close(
                n, G - P * G.sum(axis=axis, keepdims=True), 1e-5) or close(m, n, 1e-5):
            continue
        for other in range(Y.ndim):
            if other != axis % Y.ndim and close(m, G - P * G.sum(axis=other, keepdims=True), 1e-5):
                return "log-softmax-wrong-axis", {"axis": axis % Y.ndim, "other": other}
        if close(m, G - P * G, 1e-5):  # outside44 LogSoftmaxNoSum: p * dY where p * dY.sum(axis) is due
            return "log-softmax-no-sum", {"axis": axis % Y.ndim if Y.ndim > 2 else -1}
    return None


def _elu_alpha(m, n, X, Y, G):
    """ELU (``Y = X`` where ``X > 0``, ``alpha (exp(X) - 1)`` elsewhere, alpha fitted from forward's output) whose
    backward takes ``out`` for the derivative where ``X < 0``, not ``out + alpha`` (= alpha exp(X)): ``n`` is
    ``dY * where(X > 0, 1, Y + alpha)`` and ``m`` is ``dY * where(X > 0, 1, Y)`` (session 20's leftover)."""
    if X.dtype.kind != "f" or not X.shape == Y.shape == G.shape == m.shape == n.shape:
        return None
    neg, e = X <= 0, np.expm1(np.minimum(X, 0))
    if not neg.any() or neg.all() or not np.array_equal(Y[~neg], X[~neg]) or not np.any(e[neg]):
        return None
    alpha = float(Y[neg] @ e[neg] / (e[neg] @ e[neg]))
    if alpha <= 0 or not close(Y[neg], alpha * e[neg], 1e-9):
        return None
    right, got = G * np.where(neg, Y + alpha, 1.0), G * np.where(neg, Y, 1.0)
    if close(n, right, 1e-5) and close(m, got, 1e-5) and not close(m, n, 1e-5):
        return "elu-alpha-missing", {"alpha": alpha, "k": int(neg.sum()), "size": X.size}
    if abs(alpha - 1) > 1e-6 and close(n, right, 1e-5) and close(m, G * np.where(neg, Y + 1, 1.0), 1e-5) \
            and not close(m, n, 1e-5):  # outside44: ELU' = out + 1 where out + alpha is due (right at alpha 1)
        return "elu-alpha-one", {"alpha": alpha, "k": int(neg.sum()), "size": X.size}
    return None


def _selu_scale(m, n, X, Y, G):
    """A SELU (``Y = lam X`` where ``X > 0``, ``lam alpha (exp(X) - 1)`` elsewhere, ``lam`` not 1 and ``lam alpha``
    fitted from forward's output) whose backward leaves ``lam`` out where X > 0 (outside44 SELUNoScale): ``n`` is
    ``dY * where(X > 0, lam, lam alpha exp(X))`` and ``m`` ``dY * where(X > 0, 1, lam alpha exp(X))``; else None."""
    if X.dtype.kind != "f" or not X.shape == Y.shape == G.shape == m.shape == n.shape:
        return None
    pos, e = X > 0, np.expm1(np.minimum(X, 0))
    if not pos.any() or pos.all() or not np.any(X[pos]) or not np.any(e[~pos]):
        return None
    lam, la = float(Y[pos] @ X[pos] / (X[pos] @ X[pos])), float(Y[~pos] @ e[~pos] / (e[~pos] @ e[~pos]))
    if abs(lam - 1) < 1e-6 or la <= 0 or not close(Y, np.where(pos, lam * X, la * e), 1e-9):
        return None
    neg_side = la * np.exp(np.minimum(X, 0))
    if close(n, G * np.where(pos, lam, neg_side), 1e-5) and close(m, G * np.where(pos, 1.0, neg_side), 1e-5) \
            and not close(m, n, 1e-5):
        return "selu-scale-missing", {"lam": lam, "k": int(pos.sum()), "size": X.size}
    return None


def _product_rule(L: _Layer, key, m, n):
    """An elementwise activation ``Y = X * g(X)`` (Swish/SiLU ``X * sigmoid(X)``, Mish ``X * tanh(softplus(X))``)
    whose backward takes ``g(X)`` alone for the derivative, the product rule's ``X * g'(X)`` left out (outside44
    SwishSigmoidOnly, MishNoInner): ``m`` is ``dY * Y / X`` (every ``|X|`` above 1e-3), ``n`` is not, and the layer is
    elementwise (its numerical gradient at another dY is that dY times the same ``n / dY``: an RMS norm's ``gamma X /
    rms`` is no ``X * g(X)`` entry by entry); else None. ``Y / X`` is the derivative of any ``Y = s X`` (a ReLU's
    mask, a scale), where ``m`` is right: not named."""
    X, Y, G = L.inputs[0], L.Y, L.G
    if key != L.keys[0] or len(L.inputs) != 1 or X.dtype.kind != "f" or X.size < 2 \
            or not X.shape == Y.shape == G.shape == m.shape == n.shape or np.any(np.abs(G) < 1e-6):
        return None
    if np.any(np.abs(X) <= 1e-3) or close(m, n, 1e-5) or not close(m, G * (Y / X), 1e-7):
        return None
    G2 = np.random.default_rng([L.seed, 46]).standard_normal(G.shape)
    return ("product-rule-dropped", {"size": X.size}) if close(L.numer([key], G=G2)[key], G2 * (n / G), 1e-5) else None


def _leaky_slope(m, n, X, Y, G):
    """A leaky ReLU's backward without its negative slope (tester15 L3): forward is ``Y = X`` where X > 0 and
    ``alpha * X`` where X < 0 (one ``alpha``, not 0 or 1, read from Y), the correct ``n`` is ``G`` times that
    derivative and ``m`` is ``G * (X > 0)``, ReLU's; else None."""
    if X.dtype.kind != "f" or not np.all(np.isfinite(n)):
        return None
    neg, pos = X < 0, X > 0
    if neg.sum() < 2 or not pos.any() or not close(Y[pos], X[pos], 1e-12, 0.0):
        return None
    alpha = float(np.median(Y[neg] / X[neg]))
    if abs(alpha) < 1e-6 or abs(alpha - 1) < 1e-6 or not close(Y[neg], alpha * X[neg], 1e-9, 0.0):
        return None
    if not close(n, G * np.where(pos, 1.0, alpha), 1e-5):
        return None
    if close(m, G * pos):
        return "leaky-slope-missing", {"alpha": alpha, "k": int(neg.sum()), "n": X.size}
    if close(m, G * np.where(pos, alpha, 1.0), 1e-5) and not close(m, n, 1e-5):  # outside44 LeakyReLUSwapped
        return "leaky-slopes-swapped", {"alpha": alpha, "k": int(neg.sum()), "n": X.size}
    beta = float(np.median(m[neg & (G != 0)] / G[neg & (G != 0)])) if (neg & (G != 0)).any() else alpha
    if abs(beta - alpha) > 1e-6 * max(abs(alpha), 1e-12) and close(m, G * np.where(pos, 1.0, beta), 1e-5):
        return "leaky-slope-differs", {"alpha": alpha, "beta": beta, "ratio": beta / alpha, "k": int(neg.sum()),
                                       "n": X.size}  # tester18s L5: 0.1 in backward, 0.01 in forward
    return None


def _transposed_weight_signature(m, n, G, weights=None, t="dX"):
    """dX = dY @ W where dY @ W.T is due (or the reverse), for a square W: no shape shows it.

    Where the correct ``n`` is dY times one matrix ``B`` along an axis (the last: a Linear; axis 1:
    a 1x1 convolution, channels first), ``B`` is solved for by least squares and ``m`` must equal
    dY times ``B.T``; ``weights`` (name -> square array) only name the weight. A layer that flattens its
    input first (``X.reshape(N, -1) @ W``: dX of shape (N, 2, 3) from a dY of (N, 6)) is read on dX flattened
    so (corpus37 F3: "no known bug pattern" there, named for a 2-D input).
    """
    if n.ndim > 2 and G.ndim == 2 and m.shape == n.shape and n.shape[0] == G.shape[0]:
        flat = _transposed_weight_signature(m.reshape(len(m), -1), n.reshape(len(n), -1), G, weights, t)
        if flat is not None and flat[0] == "transposed-weight":
            return flat[0], {**flat[1], "fix": f"{flat[1]['fix']} (on X flattened to (N, {G.shape[1]}), "
                                              "then reshaped to X's shape)"}
    for axis in dict.fromkeys((-1, 1) if n.ndim > 2 else (-1,)):
        if G.ndim != n.ndim or G.shape[axis] != n.shape[axis]:
            continue
        k = n.shape[axis]
        Gf, nf, mf = (np.moveaxis(a, axis, -1).reshape(-1, k) for a in (G, n, m))
        if len(Gf) <= k or np.linalg.matrix_rank(Gf) < k:
            continue
        B = np.linalg.lstsq(Gf, nf, rcond=None)[0]  # dX = dY @ B along this axis
        if close(B, B.T) or not close(Gf @ B, nf, 1e-5) or not close(mf, Gf @ B.T, 1e-5):
            continue
        name, same = (next((w for w, A in (weights or {}).items()
                            if A.shape == B.shape and close(A, C, 1e-5)), None) for C in (B.T, B))
        if axis != -1:
            fix = (f"{t} = np.einsum('cf,nf...->nc...', {name}, dY), not 'fc'" if name else
                   f"for Y = np.einsum('fc,nc...->nf...', {same or 'W'}, X), {t} = "
                   f"np.einsum('fc,nf...->nc...', {same or 'W'}, dY) (sum over the output channel "
                   "f), not 'cf'")
        elif name or same:
            fix = f"{t} = dY @ {name}.T, not dY @ {name}" if name else \
                f"{t} = dY @ {same}, not dY @ {same}.T"
        else:
            fix = f"for Y = X @ W + b, {t} = dY @ W.T; for Y = X @ W.T + b, {t} = dY @ W"
        return "transposed-weight", {"how": "it is dY times the transpose of the matrix the chain "
                                     "rule gives (the weight is square, so the shapes agree and "
                                     "only the values show it)", "fix": fix, "up": "dY"}
    return _inner_weight_signature(m, n, weights or {}, t)


def _inner_weight_signature(m, n, weights, t):
    """dX = D @ W where D @ W.T is due, D an inner gradient (an RNN's dz = dY * tanh'): for each
    square, non-symmetric, well-conditioned weight W, D is solved from the correct ``n`` = D @ W.T
    and ``m`` must equal D @ W (an unrelated ``m`` matches with probability 0); with the batch in
    columns (Andrew Ng's ``W.T @ dZ``), from ``n`` = W.T @ D and ``m`` = W @ D."""
    if n.ndim != 2 or m.shape != n.shape:
        return None
    for name, W in weights.items():
        if close(W, W.T) or np.linalg.cond(W) > 1e4:
            continue
        k = W.shape[0]
        rows = np.linalg.solve(W, n.T).T @ W if n.shape[-1] == k else None  # n = d @ W.T: the batch in rows
        cols = W @ np.linalg.solve(W.T, n) if n.shape[0] == k else None  # n = W.T @ d: in columns (Ng)
        for got, due, wrong in ((f"d @ {name}", f"d @ {name}.T", rows), (f"{name} @ d", f"{name}.T @ d", cols)):
            if wrong is not None and close(m, wrong, 1e-5) and not close(m, n, 1e-5):
                return "transposed-weight", {
                    "up": "the gradient at the product", "fix": f"{t} = {due}, not {got}",
                    "how": f"it is {got} where {due} is due, d the gradient at the product "
                           f"(e.g. dz = dY * (1 - out**2) behind a tanh, dZ = dA * (Z > 0) behind a ReLU); "
                           f"{name} is square, so the shapes agree and only the values show it"}
    return None


def _raised_weight_signature(exc, X, G, weights, t="dX"):
    """backward raised a matmul shape error where ``dY @ W`` needs ``W.T`` (or the reverse): a
    non-square weight ``(in, out)`` or ``(out, in)`` whose dimensions are the input's and dY's
    last ones."""
    msg = str(exc)
    dims = (X.reshape(len(X), -1).shape[-1] if X.ndim >= 2 else None,
            G.shape[-1] if G.ndim else None)
    sizes = re.search(r"matmul: .*size (\d+) is different from (\d+)", msg)  # numpy's matmul
    shapes = re.search(r"shapes \(([\d, ]*)\) and \(([\d, ]*)\) not aligned", msg)  # np.dot's words
    sizes = {int(sizes[1]), int(sizes[2])} if sizes else set()
    shapes = [tuple(int(k) for k in g.replace(" ", "").split(",") if k) for g in shapes.groups()] \
        if shapes else []
    if "backward" not in msg or dims[0] == dims[1] or not (sizes == set(dims) or shapes):
        return None
    for name, A in weights.items():
        if A.shape in (dims, dims[::-1]) and (sizes == set(dims) or A.shape in shapes):
            prod = f"dY @ {name}.T" if A.shape == dims else f"dY @ {name}"
            return "transposed-weight", {
                "how": f"backward raised a matmul shape error, because {name} of shape "
                       f"{V.fmt_shape(A.shape)} is not square",
                "fix": f"{t} = {prod} (shape ({len(G)}, {dims[1]}) @ ({dims[1]}, {dims[0]}))", "up": "dY"}
    return None


#: A kernel's spatial axes in its layouts, ``(ndim, index flipping them, as written)``: channels first ((F, C, kh, kw),
#: (F, C, k)) and channels last ((kh, kw, cin, cout) of CS189 and Keras, numpy-ml's (k, cin, cout)).
_KERNEL_FLIPS = ((4, (..., slice(None, None, -1), slice(None, None, -1)), "[:, :, ::-1, ::-1]"),
                 (4, (slice(None, None, -1), slice(None, None, -1)), "[::-1, ::-1]"),
                 (3, (..., slice(None, None, -1)), "[..., ::-1]"),
                 (3, (slice(None, None, -1),), "[::-1]"))


def _kernel_flip_signature(L: _Layer, key, m):
    """dX computed with the kernel flipped (convolution where the forward correlates): for each
    kernel (a parameter or another input with 3 or 4 axes), the correct dX of the layer with it
    flipped in its spatial axes, in each layout of :data:`_KERNEL_FLIPS` (tester27s: CS189's (kh, kw, cin, cout))."""
    if not key.startswith("@"):
        return None
    kernels = [(k, p, None) for k, p in L.params.items() if p.ndim in (3, 4)]
    kernels += [(nm, x, i) for i, (nm, x) in enumerate(zip(L.names, L.inputs))
                if "@" + nm != key and x.dtype.kind == "f" and x.ndim in (3, 4)]
    for (name, w, idx), (_, flip, written) in ((k, f) for k in kernels for f in _KERNEL_FLIPS if f[0] == k[1].ndim):
        flipped = w[flip].copy()
        if np.array_equal(flipped, w):  # spatial axes of size 1 (or symmetric): no flip to tell
            continue
        if idx is not None:
            ref = L.numer([key], [flipped if i == idx else x for i, x in enumerate(L.inputs)])[key]
        else:
            with overwritten(w, flipped):
                ref = L.numer([key])[key]
        if close(m, ref, 1e-5):
            return "flipped-kernel", {
                "which": f" ({name}{written})",
                "fix": f"scatter dY through the kernel as it is, no {name}{written} (e.g. dx_window += {name}[f] * "
                       f"dout[n, f, i, j] channels first, dX_window += {name}[:, :, :, f] * dY[n, i, j, f] channels "
                       "last)"}
    return None


def _sample_signature(tensor, manual, G, numer_for, n_batch, is_input, tol=1e-5):
    """Only the first / last sample's gradient, or one sample missing? ``numer_for(G')``: the
    numerical gradient for the upstream gradient ``G'`` (linear in it, so a sum over samples)."""
    m, last = np.asarray(manual, dtype=np.float64), n_batch - 1
    if n_batch < 2:
        return None
    full = numer_for(G)
    if close(m, full, tol):  # the whole batch's gradient within tol: no sample's share can be told (tester12 M3:
        return None  # a scalar loss's "first sample" is all of it, and a 1e-7 eps in its log is under tol)
    if is_input:
        zero = [k for k in range(n_batch) if np.all(m[k] == 0) and np.any(full[k] != 0)]
        if not zero or not close(np.delete(m, zero, axis=0), np.delete(full, zero, axis=0), tol):
            return None
        which = "first" if 0 not in zero else "last" if last not in zero else None
        if len(zero) == last and which:
            return f"{which}-sample-only", {"how": "holds the gradient of", "rest": " (the other "
                                            "rows are zero): loop over the whole batch"}
        return ("sample-missing", {"how": f"is right except for {tensor}[{zero[0]}] (sample "
                                   f"{zero[0]} of 0..{last}), which is zero",
                                   "loop": "range(N - 1)"}) if len(zero) == 1 else None
    ones = {}
    for which, idx in (("first", 0), ("last", last)):
        Gs = np.zeros_like(G)
        Gs[idx] = G[idx]
        if close(m, ones.setdefault(which, numer_for(Gs)), tol):
            overwrites = " (a loop that overwrites instead of adding?)" if which == "last" else ""
            return f"{which}-sample-only", {"how": "is the gradient of", "rest": f": sum the "
                                            f"contributions of all {n_batch} samples{overwrites}"}
    for (which, one), idx in zip(ones.items(), (0, last)):  # by linearity: the sum less one sample
        if close(m, full - one, tol):
            return "sample-missing", {"how": f"lacks the contribution of the {which} sample "
                                      f"(sample {idx} of 0..{last})",
                                      "loop": "range(N - 1)" if which == "last" else "range(1, N)"}
    return None


def _causal_axis0(L: _Layer) -> bool:
    """Whether axis 0 of the first input is time, not the batch: forward's output at index t along axis 0 moves
    with the input at index 0 (a recurrence carries it) and not with the input at later indices (causal), for a
    time-major RNN's ``(T, N, D)``; a batch's samples do not reach each other, a batch statistic reaches back."""
    x = L.inputs[0] if L.inputs else None
    if x is None or x.dtype.kind != "f" or x.ndim < 3 or x.shape[0] < 2 or np.ndim(L.Y) < 1 or L.Y.shape[0] != x.shape[0]:
        return False
    try:
        first, last = x.copy(), x.copy()
        first[0] += 0.5
        last[-1] += 0.5
        Yf, Yl = L.fwd_with(0, first), L.fwd_with(0, last)
    except Exception:  # noqa: BLE001 - a forward that cannot run here: no time axis told
        return False
    if Yf.shape != L.Y.shape or Yl.shape != L.Y.shape:
        return False
    return bool(np.any(np.abs(Yf[-1] - L.Y[-1]) > 1e-9) and np.array_equal(Yl[:-1], L.Y[:-1]))


def _last_step_signature(L: _Layer, key, m, tol=1e-5):
    """The gradient from the last time step's upstream gradient alone (``dh = dY[-1]`` before the loop back, no
    ``dY[t]`` added at each step) of a layer whose axis 0 is time (:func:`_causal_axis0`; tester21s M4: a
    time-major RNN was named "col2im assigns where it must add" and "the last sample only"): ``m`` is the
    numerical gradient for dY with every step but the last zeroed."""
    G = L.G
    if G.ndim < 2 or G.shape[0] < 2 or G.size > 4096 or not _causal_axis0(L):
        return None
    Gs = np.zeros_like(G)
    Gs[-1] = G[-1]
    if close(m, L.numer([key], G=Gs)[key], tol):
        return "last-step-only", {"k": G.shape[0] - 1}
    return None


def _position_signature(L: _Layer, key, m, n, tol=1e-5):
    """One output position missing, the first or last along an axis after the batch's (tester20s M10: a 1-D
    convolution's backward looping ``range(L_out - 1)``): ``m`` is the numerical gradient for dY with that position
    zeroed (linear in dY), the sample-missing finding's kind along positions."""
    G = L.G
    if G.ndim < 2 or G.size > 4096 or close(m, n, tol):
        return None
    for ax in range(1, G.ndim):
        size = G.shape[ax]
        for which, idx in (("last", size - 1), ("first", 0)) if size >= 2 else ():
            Gs = G.copy()
            Gs[(slice(None),) * ax + (idx,)] = 0
            if close(m, L.numer([key], G=Gs)[key], tol):
                loop = f"range({size - 1})" if which == "last" else f"range(1, {size})"
                return "position-missing", {"which": which, "ax": ax, "idx": idx, "last": size - 1, "loop": loop,
                                            "size": size}
    return None


def _block_signature(L: _Layer, key, m, n, tol=1e-5):
    """The output's positions cut short (corpus37 F6: a conv's or a pool's backward looping ``range(1)`` over the
    output's rows, ``range(H_out - 1)`` and ``range(W_out - 1)``, or a ``break`` after a row): ``m`` is the
    contributions (:func:`_jacobian`, times dY) of a block of outputs at the start of each axis after the batch's
    alone, ``dY[:, :, :2, :]``; the samples may be cut too (a ``return`` inside the loops), not alone (those are
    :func:`_sample_signature`'s), nor in a sequence layer's steps (:func:`_causal`: an RNN's dh0 is the first step's
    dY alone when no gradient is carried back, :func:`_carry_signature`'s). Every block's sum at once, by cumulative
    sums along the output's axes."""
    G = L.G
    if G.ndim < 3 or close(m, n, tol) or not np.any(m) or _causal(L) or (J := _jacobian(L, key, m)) is None:
        return None
    S = (J * G.reshape(-1, 1)).reshape(*G.shape, -1)
    for ax in range(G.ndim):
        S = S.cumsum(axis=ax)
    err = np.abs(S - m.reshape(-1)).max(axis=-1)
    err[(slice(None),) + (-1,) * (G.ndim - 1)] = np.inf  # no position cut: the samples' or the whole gradient
    ends = np.unravel_index(int(np.argmin(err)), G.shape)
    if not close(m.reshape(-1), S[ends], tol):
        return None
    cut = [ax for ax in range(G.ndim) if ends[ax] < G.shape[ax] - 1]
    block = "[" + ", ".join(f":{e + 1}" if e < size - 1 else ":" for e, size in zip(ends, G.shape)) + "]"
    kept = " and ".join(f"the first {ends[ax] + 1} of {G.shape[ax]} " + ("samples" if ax == 0 else
                                                                         f"output positions along axis {ax}")
                        for ax in cut)
    loop = ", ".join(f"range({ends[ax] + 1}) where range({G.shape[ax]}) is due along axis {ax}" for ax in cut)
    return "positions-cut", {"block": block, "kept": kept, "loop": loop}


def _tanh_preactivation_signature(L: _Layer, key, m, n, tol=1e-5):
    """A tanh output ``Y = tanh(a)`` whose backward takes 1 - a**2 (the pre-activation squared) where 1 - Y**2 is due
    (tester20s M10: an RNN step): ``m`` is the numerical gradient for ``dY * (1 - a**2) / (1 - Y**2)``, ``a =
    arctanh(Y)`` (backward is linear in what reaches a)."""
    Y, G = L.Y, L.G
    if Y.shape != G.shape or Y.size > 4096 or not np.all(np.abs(Y) < 1 - 1e-6) or close(m, n, tol):
        return None
    a = np.arctanh(Y)
    if close(a, Y, 1e-3):  # a tanh near 0 is the identity: its derivative tells nothing
        return None
    if close(m, L.numer([key], G=G * (1 - a**2) / (1 - Y**2))[key], tol):
        return "tanh-preactivation", {}
    return None


#: The largest Jacobian (outputs x input elements) :func:`_overwrite_signature` differentiates.
_MAX_JACOBIAN = 250_000


def _overwrite_signature(L: _Layer, key, m):
    """``dX[i] = ...`` where ``dX[i] += ...`` is due: where several outputs reach one input element
    (overlapping windows), ``m`` holds the contribution of one output alone, the last (or first)
    in the order of the output's elements, as loops over its axes write it.

    The contributions are ``J[o, i] * dY[o]`` from the numerical Jacobian ``J`` (two forwards per
    input element, as many as the numerical gradient); named only where some element is shared.
    """
    if (got := _input_of(L, key, m)) is None:
        return None
    x, J = got[1], _jacobian(L, key, m)
    reach = np.abs(J) > 1e-6 * np.abs(J).max(initial=0.0)
    shared = int(np.sum(reach.sum(axis=0) > 1))
    if not shared:
        return None
    C = J * L.G.reshape(-1, 1)
    for which, hit, o in _one_writer(reach):
        if close(m, np.where(hit, C[o, np.arange(x.size)], 0.0).reshape(x.shape), 1e-5):
            return "scatter-overwrites", {"k": shared, "size": x.size, "which": which}
    return _window_group_overwrite(reach, C, m, x)


def _loop_overwrite_signature(L: _Layer, key, m):
    """A parameter's gradient assigned (``dW[..., f] = ...``) in a loop over the output's positions where ``+=`` is due
    (tester27s: CS189's Conv2D): ``m`` is the contribution of the outputs at the last (or first) index along some of
    the output's axes alone, summed over the others (each assignment overwrites the one before). The contributions
    ``J[o, :] * dY[o]`` come from the numerical Jacobian of the output in the parameter (two forwards per entry);
    axis 0 alone is :func:`_sample_signature`'s."""
    p, G = L.params.get(key), L.G
    if p is None or G.ndim < 2 or (J := _jacobian(L, key, m)) is None:
        return None
    C = J * G.reshape(-1, 1)
    idx = np.indices(G.shape).reshape(G.ndim, -1)
    axes = [a for a in range(G.ndim) if G.shape[a] > 1]
    for r in range(1, len(axes) + 1):
        for S in itertools.combinations(axes, r):
            for which in ("last", "first") if S != (0,) else ():
                at = [G.shape[a] - 1 if which == "last" else 0 for a in S]
                hit = np.all([idx[a] == i for a, i in zip(S, at)], axis=0)
                if close(m, C[hit].sum(axis=0).reshape(p.shape), 1e-5):
                    where = ("position" if 0 not in S else "sample and position" if len(S) > 1 else "sample") + (
                        f" (index {at[0]} along axis {S[0]}" if len(S) == 1 else
                        f" (indices {tuple(at)} along axes {S}") + f" of the output, of shape {V.fmt_shape(G.shape)})"
                    loop = "the samples and positions" if 0 in S else "the output's positions"
                    return "loop-overwrites", {"which": which, "where": where, "loop": loop}
    return None


def _window_group_overwrite(reach, C, m, x):
    """A convolution's col2im that assigns (``=``) each window's patch where overlapping windows must add: the
    outputs that read the same input elements (a window's output channels) are one writer, their contributions
    ``C`` (outputs x input elements) summed; ``m`` is the one group's (the last, or first, in the outputs' order)
    where several groups reach an element, the whole gradient where one does. Named only when some group has
    several outputs and some element lies in several groups' windows."""
    rows, group = np.unique(reach, axis=0, return_inverse=True)
    group = group.ravel()
    if len(rows) == reach.shape[0] or len(rows) < 2:
        return None
    first = np.array([np.flatnonzero(group == g)[0] for g in range(len(rows))])
    rank = np.empty(len(rows), dtype=int)
    rank[np.argsort(first)] = np.arange(len(rows))  # groups numbered in the outputs' order
    sums = np.zeros((len(rows), x.size))
    np.add.at(sums, rank[group], C)
    windows = rows[np.argsort(first)]
    if _nested(windows):  # a recurrence's reach (step t reads steps <= t), no sliding windows (tester21s M4)
        return None
    shared = int(np.sum(windows.sum(axis=0) > 1))
    for which, hit, o in _one_writer(windows) if shared else ():
        if close(m, np.where(hit, sums[o, np.arange(x.size)], 0.0).reshape(x.shape), 1e-5):
            return "col2im-overwrites", {"k": shared, "size": x.size, "which": which}
    return None


def _nested(windows: np.ndarray) -> bool:
    """Whether every two of ``windows`` (rows: which input elements each reads) that overlap are nested, one inside
    the other: the prefixes a recurrence reads, not a convolution's sliding windows (which overlap partly)."""
    w = windows.astype(np.int64)
    inter = w @ w.T
    sizes = w.sum(axis=1)
    overlap = inter > 0
    return bool(np.all(~overlap | (inter == np.minimum.outer(sizes, sizes))))


def _jacobian(L: _Layer, key: str, m) -> np.ndarray | None:
    """The numerical Jacobian (output elements x the tensor's elements; two forwards per element) of forward in the
    float input ``key`` names (``"@X"``, :func:`_input_of`) or in the float parameter ``key``, at most
    :data:`_MAX_JACOBIAN` entries, else None; differenced once per layer and key (``L.jacobians``)."""
    if key in L.jacobians:
        return L.jacobians[key]
    p = L.params.get(key)
    if (got := _input_of(L, key, m)) is not None:
        J = numerical_jacobian(lambda xi: L.fwd_with(got[0], xi), got[1])
    elif p is None or p.size * L.G.size > _MAX_JACOBIAN or p.dtype.kind != "f":
        return None
    else:
        def fwd(v):
            with overwritten(p, v):
                return L.fwd(*L.inputs)

        J = numerical_jacobian(fwd, p.copy())
    return L.jacobians.setdefault(key, J)


def _input_of(L: _Layer, key: str, m) -> tuple[int, np.ndarray] | None:
    """``(i, x)``: the float input ``key`` names (``"@X"``) when ``m`` has its shape and its Jacobian has at most
    :data:`_MAX_JACOBIAN` entries, else None."""
    if not key.startswith("@") or key[1:] not in L.names:
        return None
    i = L.names.index(key[1:])
    x = L.inputs[i]
    return (i, x) if x.dtype.kind == "f" and m.shape == x.shape and x.size * L.Y.size <= _MAX_JACOBIAN else None


def _one_writer(reach: np.ndarray):
    """Per input element (a column of ``reach``, which outputs reach it), the one output whose contribution an
    assignment (``=``, not ``+=``) leaves there: ``(which, hit, o)`` for the ``"last"`` in the output's order, as
    loops over its axes write it, then the ``"first"``; ``hit`` False where no output reaches it."""
    n_out = reach.shape[0]
    rows = np.arange(n_out)[:, None]
    for which, o in (("last", np.max(np.where(reach, rows, -1), axis=0)),
                     ("first", np.min(np.where(reach, rows, n_out), axis=0))):
        yield which, (o >= 0) & (o < n_out), np.clip(o, 0, n_out - 1)


def _pad_crop_signature(L: _Layer, key, m, n):
    """``dx = dxp[..., :H, :W]`` where ``dxp[..., p:-p, p:-p]`` is due (a convolution's padding cropped at one
    end): ``m`` is the correct gradient ``n`` shifted by ``p`` along the last two axes, from the numbers alone."""
    if not key.startswith("@") or m.ndim < 3 or m.shape != n.shape or min(m.shape[-2:]) < 3:
        return None
    for p in range(1, min(m.shape[-2:]) // 2 + 1):
        a, b = m[..., p:, p:], n[..., :-p, :-p]
        ok = np.isfinite(b)
        if ok.all() and np.any(b != 0) and close(a, b, 1e-5) and not close(m, n, 1e-5):
            return "pad-not-cropped", {"p": p}
    for sh in range(1, min(m.shape[-2:]) // 2 + 1):  # tester19s convpadcrop: dxp[..., p+1:p+1+H] (too late)
        a, b = m[..., :-sh, :-sh], n[..., sh:, sh:]
        if np.isfinite(b).all() and np.any(b != 0) and close(a, b, 1e-5) and not close(m, n, 1e-5):
            return "pad-crop-off", {"s": sh}
    return None


def _sig(v):
    """The logistic sigmoid of ``v``."""
    return 1 / (1 + np.exp(-v))


#: A wrong local derivative inside a layer whose output is an activation's, out = f(z): ``(code, out in f's range,
#: the wrong derivative over the right one as a function of out, the fields)`` (:func:`_inside_derivative_signature`).
_INSIDE = (
    ("tanh-square-inside", lambda Y: np.all(np.abs(Y) < 1), lambda Y: 1 / (1 + Y), {}),
    ("sigmoid-one-minus-inside", lambda Y: np.all((Y > 0) & (Y < 1)), lambda Y: 1 / (1 - Y), {}),
    ("derivative-at-output", lambda Y: np.all(np.abs(Y) < 1), lambda Y: (1 - np.tanh(Y)**2) / (1 - Y**2),
     {"name": "tanh", "got": "1 - tanh(out)**2", "right": "1 - tanh(z)**2 (= 1 - out**2)",
      "fix": "(1 - np.tanh(z)**2), or dout * (1 - out**2) written in the output"}),
    ("derivative-at-output", lambda Y: np.all((Y > 0) & (Y < 1)), lambda Y: _sig(Y) * (1 - _sig(Y)) / (Y * (1 - Y)),
     {"name": "sigmoid", "got": "sigmoid(out) * (1 - sigmoid(out))",
      "right": "sigmoid(z) * (1 - sigmoid(z)) (= out * (1 - out))",
      "fix": "sigmoid(z) * (1 - sigmoid(z)), or dout * out * (1 - out) written in the output"}),
    ("derivative-at-output", lambda Y: np.all(np.abs(Y) < np.pi / 2), lambda Y: 1 / ((1 + Y**2) * np.cos(Y)**2),
     {"name": "arctan", "got": "1 / (1 + out**2)", "right": "1 / (1 + z**2)", "fix": "1 / (1 + z**2)"}),
    ("sigmoid-one-plus-inside", lambda Y: np.all((Y > 0) & (Y < 1)), lambda Y: (1 + Y) / (1 - Y), {}),
    ("derivative-at-input-inside", lambda Y: np.all((Y > 0) & (Y < 1)),
     lambda Y: np.log(Y / (1 - Y)) * (1 - np.log(Y / (1 - Y))) / (Y * (1 - Y)),
     {"act": "sigmoid", "got": "z * (1 - z)", "right": "out * (1 - out)",
      "fix": "sigmoid(z) * (1 - sigmoid(z)), or out * (1 - out) with out = sigmoid(z) cached in forward"}))


def _sigmoid_inside(row) -> bool:
    """Whether an :data:`_INSIDE` row is a wrong derivative of the sigmoid."""
    return row[0].startswith("sigmoid") or "sigmoid" in (row[3].get("name"), row[3].get("act"))


def _inside_derivative_signature(L: _Layer, key, m):
    """A wrong local derivative inside a layer whose output is an activation's, out = f(z) (an RNN step's tanh, a
    dense layer's sigmoid; tester27s): tanh's ``1 - out`` or sigmoid's ``out`` (the square, the ``1 - out`` missing),
    or f's derivative evaluated at ``out`` where ``z`` is due (:data:`_INSIDE`). Backward is linear in what reaches
    z, so ``m`` is the correct gradient for the upstream ``G * wrong / right``: one numerical gradient per form whose
    range holds the output."""
    Y, G = L.Y, L.G
    if Y.shape != G.shape or not Y.size:
        return None
    for code, fits, ratio, fields in _INSIDE:
        with np.errstate(all="ignore"):
            r = ratio(Y) if fits(Y) else None
        if r is not None and np.all(np.isfinite(r)) and close(m, L.numer([key], G=G * r)[key], 1e-5):
            return code, fields
    return None


#: Nielsen's backprop with one line changed, beside the sigmoid derivatives of :data:`_INSIDE`: ``(knobs of
#: :func:`_nielsen_backprop`, fields of "backprop-line")``; ``{w}``, ``{b}`` the network's weight and bias lists.
_BACKPROP_LINES = (
    ({"transpose": False}, {
        "got": "np.dot({w}[-l+1], delta)", "right": "np.dot({w}[-l+1].transpose(), delta)",
        "why": ": z = W a + b sends dC/dz back as dC/da = W.T @ dC/dz (the weights are square here, so the product "
               "did not raise)", "fix": "delta = np.dot(self.{w}[-l+1].transpose(), delta) * sp"}),
    ({"z_above": True}, {
        "got": "sigmoid_prime(zs[-l+1]), the z of the layer above, in the hidden layers' delta",
        "right": "sigmoid_prime(zs[-l]), the layer's own z,", "why": "",
        "fix": "z = zs[-l]; sp = sigmoid_prime(z)"}),
    ({"out": "a - y", "cost": "quadratic"}, {
        "got": "the output delta a - y", "right": "(a - y) * sigmoid_prime(z) (the quadratic cost's)",
        "why": ": a - y is the cross-entropy cost's delta (its dC/da, (a - y) / (a (1 - a)), times sigmoid'(z) = "
               "a (1 - a)), but the cost checked is the quadratic {fn}, whose dC/da = a - y still needs sigmoid'(z)",
        "fix": "delta = (a - y) * sigmoid_prime(zs[-1])"}),
    ({"out": "(a - y) sp", "cost": "cross-entropy"}, {
        "got": "the output delta (a - y) * sigmoid_prime(z) (the quadratic cost's)", "right": "a - y",
        "why": ": for the cross-entropy {fn}, dC/da = (a - y) / (a (1 - a)), and times sigmoid'(z) = a (1 - a) "
               "that leaves a - y", "fix": "{delta} returns a - y"}),
    ({"out": "dC/da", "cost": "cross-entropy"}, {
        "got": "the output delta (a - y) / (a * (1 - a)), the cost's dC/da", "right": "its dC/dz = a - y",
        "why": ": backprop's delta is the gradient at z, dC/da times sigmoid'(z) = a (1 - a)",
        "fix": "{delta} returns a - y"}),
    ({"inplace": True}, {
        "got": "a sigmoid that writes into its own z (np.negative(z, out=z), np.exp(z, out=z): zs[-l] holds exp(-z) "
               "after the forward pass, and sigmoid_prime(zs[-l]) calls it twice more on that array)",
        "right": "a sigmoid that leaves z as it is",
        "why": ": backprop keeps each z in zs for sigmoid_prime, so an activation computed in place in z destroys it",
        "fix": "def sigmoid(z): return 1.0/(1.0+np.exp(-z)) (a new array: no out=z, no z *= -1)"}),
    ({"alias": True}, {
        "got": "one array for every nabla_b[i] ([np.zeros(...)] * n, then +=)",
        "right": "a new array per layer ([np.zeros(b.shape) for b in self.{b}])",
        "why": ": [x] * n repeats one object, so each layer's += adds into the same array and every nabla_b[i] "
               "is the sum of all the layers' deltas", "fix": "nabla_b = [np.zeros(b.shape) for b in self.{b}]"}),
)
#: Nielsen's two costs of a (the output, n_out x m) and y: ``(value, output delta dC/dz at the output, said)``
_NIELSEN_COSTS = {
    "quadratic": (lambda a, y: 0.5 * np.sum((a - y) ** 2), lambda a, y, sp: (a - y) * sp, "0.5*||a - y||^2",
                  "(a - y) * sigmoid_prime(z)", "fn = 0.5*np.linalg.norm(a-y)**2, whose delta is (a - y) * "
                  "sigmoid_prime(z) (network2.py's QuadraticCost)"),
    "cross-entropy": (lambda a, y: np.sum(np.nan_to_num(-y * np.log(a) - (1 - y) * np.log(1 - a))),
                      lambda a, y, sp: a - y, "sum(-y ln a - (1 - y) ln(1 - a))", "a - y",
                      "fn = np.sum(np.nan_to_num(-y*np.log(a)-(1-y)*np.log(1-a))), whose delta is a - y "
                      "(network2.py's CrossEntropyCost)"),
}


def _nielsen_backprop(Ws, bs, X, T, cost, *, inside=None, where="all", out=None, transpose=True, z_above=False,
                      alias=False, inplace=False):
    """Nielsen's backprop (network.py, chapter 2) for sigmoid layers ``a = sigmoid(W a + b)``, of the sum over the
    columns of ``X`` (n_in, m) with targets ``T`` (n_out, m) of ``cost`` (a key of :data:`_NIELSEN_COSTS`), with at
    most one line changed: ``inside`` an :data:`_INSIDE` ratio making sigmoid's derivative wrong (``where``: "all",
    "hidden", "output"), ``out`` another output delta ("a - y", "(a - y) sp", "dC/da"), ``transpose=False``
    (``W @ delta``), ``z_above`` (a hidden delta's sigmoid' from the layer above's z), ``alias`` (one array for
    every bias gradient), ``inplace`` (nielsen34's n16: a sigmoid ``np.negative(z, out=z); np.exp(z, out=z); return
    1/(1+z)`` leaves exp(-z) in zs, and sigmoid_prime's two calls of it, ``sigmoid(z)*(1-sigmoid(z))`` left to right,
    read exp(-z) and then exp(-exp(-z))). Returns ``(nabla_b, nabla_w, delta1)`` (``delta1``: the bias gradient of the first layer
    per column, (n1, m), as backprop returns it for one sample), or None where the change cannot run (shapes)."""
    acts, zs = [X], []
    for W, b in zip(Ws, bs, strict=True):
        zs.append(W @ acts[-1] + b)
        acts.append(_sig(zs[-1]))

    def sp(i, part):  # sigmoid'(zs[i]) as written
        if inplace:  # zs[i] holds e = exp(-z): sigmoid(e) * (1 - sigmoid(exp(-e))), each call rewriting it
            e = np.exp(-zs[i])
            return _sig(e) * (1 - _sig(np.exp(-e)))
        a = acts[i + 1 if i >= 0 else i]
        return a * (1 - a) * (inside(a) if inside is not None and where in ("all", part) else 1)
    a, n = acts[-1], len(Ws)
    delta = {None: lambda: _NIELSEN_COSTS[cost][1](a, T, sp(-1, "output")), "a - y": lambda: a - T,
             "(a - y) sp": lambda: (a - T) * sp(-1, "output"), "dC/da": lambda: (a - T) / (a * (1 - a))}[out]()
    nb, nw, per = [None] * n, [None] * n, [None] * n
    per[-1], nw[-1] = delta, delta @ acts[-2].T
    for i in range(n - 2, -1, -1):
        W, j = Ws[i + 1], i + 1 if z_above else i
        if (W.T if transpose else W).shape[1] != delta.shape[0] or zs[j].shape != zs[i].shape:
            return None
        delta = ((W.T if transpose else W) @ delta) * sp(j, "hidden")
        per[i], nw[i] = delta, delta @ acts[i].T
    if alias and len({p.shape for p in per}) == 1:
        per = [sum(per)] * n
    elif alias:
        return None
    nb = [p.sum(axis=1, keepdims=True) for p in per]
    return nb, nw, per[0]


def _agree(a: Mapping, of: Mapping, c: float = 1.0) -> bool:
    """Whether every tensor of ``of`` (the numerical or the manual gradients, ``{name: array}``) is ``a``'s (a
    recomputed backward's) times ``c`` to 1e-5 where known (fast mode's numerical gradients: the sampled entries,
    NaN elsewhere), at least one entry known and none of ``of``'s tensors missing from ``a`` (the evidence of
    :func:`_nielsen_signature` and :func:`_lstm_signature`: exact on every tensor, or nothing named)."""
    known = {k: np.isfinite(np.asarray(v, dtype=np.float64)) for k, v in of.items()}
    return any(m.any() for m in known.values()) and all(
        k in a and np.shape(a[k]) == np.shape(v) and close(c * a[k][known[k]], np.asarray(v, dtype=np.float64)[
            known[k]], 1e-5) for k, v in of.items())


def _line_changed(variants: Sequence[tuple[Mapping[str, Any], Any]], run: Callable[[Mapping[str, Any]], Mapping],
                  manual: Mapping, right: Mapping | None = None) -> Any:
    """The payload of the first ``(knobs, payload)`` of ``variants`` whose recomputed gradients ``run(knobs)`` (a
    backward with one known line changed; {} where it cannot run) are finite and ``manual``'s (:func:`_agree`), or
    None: the one evidence of :func:`_nielsen_signature`, :func:`_lstm_signature` and :func:`_rnn_signature`. With
    ``right`` (the correct backward's gradients), a variant giving the same gradients here is passed over."""
    for knobs, payload in variants:
        got = run(knobs)
        if not got or right is not None and all(close(a, right[k], 1e-5, 1e-8) for k, a in got.items()):
            continue  # cannot run here, or the same gradients as the correct backward
        if all(np.all(np.isfinite(a)) for a in got.values()) and _agree(got, manual):
            return payload
    return None


def _nielsen_signature(L: _Layer, manual: Mapping, numer: Mapping, failing: Sequence[str]) -> list[Finding]:
    """The findings of a Nielsen network's backprop (:func:`gradcheck._adapters.backprop_as_model`; nielsen35 F9,
    F10): its gradients, every one, are those of :func:`_nielsen_backprop` with one known line changed (a row of
    :data:`_BACKPROP_LINES`, or a sigmoid derivative of :data:`_INSIDE`), or its cost's value (forward) is a constant
    times the cost whose gradient backprop computes ("cost-delta-factor": network2.py's QuadraticCost.fn without
    the 0.5). Named only when the network is recognised: sigmoid layers whose quadratic or cross-entropy cost of
    the check's targets (the layer's ``_targets``) is forward's value, or a constant times it that central
    differences confirm, and whose correct backprop, computed here, is the numerical gradient of every tensor.
    One finding per failing tensor (said once by :func:`_said_once`), or [] when nothing matched."""
    t = getattr(L.layer, "__dict__", {}).get("_targets")
    X, g = L.inputs[0], float(L.G.ravel()[0]) if L.G.size == 1 else None
    if NIELSEN not in L.protocol or not isinstance(t, tuple) or g is None or np.ndim(X) != 2 or not failing:
        return []
    T, lists = np.asarray(t[0], dtype=np.float64), {}
    for k, v in L.params.items():
        if (m := re.fullmatch(r"(\w+)\[(\d+)\]", k)) is not None:
            lists.setdefault(m[1], {})[int(m[2])] = np.asarray(v, dtype=np.float64)
    lists = {k: [d[i] for i in range(len(d))] for k, d in lists.items() if sorted(d) == list(range(len(d)))}
    w, b = nielsen_lists(lists)
    if w is None or b is None or T.shape[1:] != X.shape[1:]:
        return []
    Ws, bs, dx = lists[w], lists[b], V.grad_name(L.names[0])

    def named(res):  # {tensor: gradient} of :func:`_nielsen_backprop`'s result, times the check's dY
        nb, nw, d1 = res
        return {dx: g * (Ws[0].T @ d1), **{V.grad_name(f"{b}[{i}]"): g * a for i, a in enumerate(nb)},
                **{V.grad_name(f"{w}[{i}]"): g * a for i, a in enumerate(nw)}}

    try:
        with np.errstate(all="ignore"):
            acts = X
            for W_, b_ in zip(Ws, bs, strict=True):
                acts = _sig(W_ @ acts + b_)
            Y = float(L.Y.ravel()[0])
            found = None
            for cost, (value, *_rest) in _NIELSEN_COSTS.items():
                right, v = named(_nielsen_backprop(Ws, bs, X, T, cost)), float(value(acts, T))
                if v and np.isfinite(v) and _agree(right, numer, Y / v):
                    found = cost, right, Y / v
                    break
            if found is None:
                return []
            cost, right, c = found
            form, fn = _NIELSEN_COSTS[cost][2], re.search(r"(\w+\.fn)\(a, y\)", L.protocol)
            fn = f"{fn[1]}(a, y)" if fn else form
            if not close(c, 1.0, 1e-6, 0.0):  # network2.py's QuadraticCost.fn without its 0.5 (F10)
                if not _agree(right, manual):
                    return []
                return [_find("cost-delta-factor", k, form=form, delta=_NIELSEN_COSTS[cost][3], fn=fn, c=c, inv=1 / c,
                              fix=_NIELSEN_COSTS[cost][4]) for k in failing]
            variants = [(dict(inside=r[2], where=where), (r[0], r[3]))
                        for r in _INSIDE if _sigmoid_inside(r)
                        for where in (("all", "hidden", "output") if r[0] == "derivative-at-output" else ("all",))]
            variants += [({k: v for k, v in knobs.items() if k != "cost"}, ("backprop-line", fields))
                         for knobs, fields in _BACKPROP_LINES if knobs.get("cost", cost) == cost]
            variants = [(knobs, (*found, knobs)) for knobs, found in variants]
            found = _line_changed(variants, lambda knobs: named(res) if (
                res := _nielsen_backprop(Ws, bs, X, T, cost, **knobs)) is not None else {}, manual, right)
            if found is not None:
                code, fields, knobs = found
                return [_find(code, k, **_line_fields(code, fields, knobs, w, b, fn)) for k in failing]
    except (ValueError, FloatingPointError, IndexError):  # shapes that are not a network's: nothing named
        return []
    return []


def _line_fields(code: str, fields: Mapping[str, str], knobs: Mapping[str, Any], w: str, b: str, fn: str):
    """The fields of a :func:`_nielsen_signature` finding: a "backprop-line" row's with the network's list names,
    a sigmoid derivative evaluated at the output told where backprop takes it."""
    if code == "derivative-at-output":
        where = {"all": "sigmoid_prime(activations[...])", "hidden": "sigmoid_prime(activations[-l]) in the "
                 "hidden layers' delta", "output": "sigmoid_prime(activations[-1]) in the output delta"}
        return {**fields, "got": f"{fields['got']} ({where[knobs['where']]})"}
    delta = f"{fn.split('.')[0]}.delta(z, a, y)" if ".fn(" in fn else "the output delta"
    return {k: v.format(w=w, b=b, fn=fn, delta=delta) for k, v in fields.items()} if code == "backprop-line" \
        else dict(fields)


#: An LSTM step's gates (:func:`_lstm_step`): ``{letter: (name, activation, its derivative in a value u)}``.
_GATES = {"i": ("input gate", "sigmoid", "{u} * (1 - {u})"), "f": ("forget gate", "sigmoid", "{u} * (1 - {u})"),
          "g": ("candidate", "tanh", "(1 - {u}**2)"), "o": ("output gate", "sigmoid", "{u} * (1 - {u})")}
#: One line of an LSTM step's backward changed (:func:`_lstm_step`'s knobs), beside :func:`_lstm_gate_lines`' gate
#: derivatives and orders: ``(knobs, fields of "lstm-line")``; ``{dh}``, ``{dc}`` backward's upstream gradients,
#: ``{dc_}`` the latter and a plus ("" for a step whose output is h_t alone).
_LSTM_LINES = (
    ({"f_cell": True}, {
        "got": "df = dc_t * c_t, the new cell state,", "right": "df = dc_t * c_prev",
        "why": ": c_t = f * c_prev + i * g multiplies f by the cell state the step was given",
        "fix": "df = dc_t * c_prev, with c_prev (CS231n's prev_c) kept in the cache"}),
    ({"carry": False}, {
        "got": "dc_prev = dc_t", "right": "dc_prev = dc_t * f",
        "why": ": c_t = f * c_prev + i * g carries the cell state's gradient back through the forget gate",
        "fix": "dc_prev = dc_t * f"}),
    ({"tanh_c": False}, {
        "got": "dc_t = {dc_}{dh} * o", "right": "dc_t = {dc_}{dh} * o * (1 - tanh(c_t)**2)",
        "why": ": h_t = o * tanh(c_t), so the path from h_t to c_t passes tanh's derivative",
        "fix": "dc_t = {dc_}{dh} * o * (1 - np.tanh(c_t)**2), then di, df, dg from dc_t"}),
    ({"tanh_c": "pre"}, {  # bugs43 M1: lstm_cderiv_step
        "got": "dc_t = {dc_}{dh} * o * (1 - c_t**2), tanh's derivative at the cell state c_t itself,",
        "right": "dc_t = {dc_}{dh} * o * (1 - tanh(c_t)**2)",
        "why": ": h_t = o * tanh(c_t), and tanh's derivative written in its output, 1 - out**2, needs the output "
               "tanh(c_t), not its input c_t", "fix": "dc_t = {dc_}{dh} * o * (1 - np.tanh(c_t)**2), with tanh(c_t) "
               "cached in forward"}),
    ({"o_from": "c"}, {  # bugs43 M1: lstm_ogate_step
        "got": "do = {dh} * c_t, the cell state,", "right": "do = {dh} * tanh(c_t)",
        "why": ": h_t = o * tanh(c_t) multiplies the output gate by tanh(c_t), not by c_t",
        "fix": "do = {dh} * np.tanh(c_t), with tanh(c_t) cached in forward"}),
    ({"o_from": "c_prev"}, {  # verify44c F4
        "got": "do = {dh} * tanh(c_prev), the previous cell state's,", "right": "do = {dh} * tanh(c_t)",
        "why": ": h_t = o * tanh(c_t) multiplies the output gate by the new cell state's tanh",
        "fix": "do = {dh} * np.tanh(c_t), with tanh(c_t) (or c_t) cached in forward"}),
    ({"carry": "i"}, {  # verify44c F4
        "got": "dc_prev = dc_t * i, through the input gate,", "right": "dc_prev = dc_t * f",
        "why": ": c_t = f * c_prev + i * g multiplies c_prev by the forget gate f (i multiplies g)",
        "fix": "dc_prev = dc_t * f"}),
    ({"f_from": "dh"}, {
        "got": "df = {dh} * c_prev", "right": "df = dc_t * c_prev",
        "why": ": f reaches the outputs through c_t alone, whose whole gradient is dc_t = {dc_}{dh} * o * "
               "(1 - tanh(c_t)**2)", "fix": "df = dc_t * c_prev, as di = dc_t * g and dg = dc_t * i"}),
    ({"f_from": "dc"}, {
        "got": "df = {dc} * c_prev, the upstream gradient of c_t alone,", "right": "df = dc_t * c_prev",
        "why": ": c_t reaches h_t too, so its whole gradient is dc_t = {dc_}{dh} * o * (1 - tanh(c_t)**2)",
        "fix": "df = dc_t * c_prev, as di = dc_t * g and dg = dc_t * i"}),
)


def _lstm_step(xs, order, dh, dc, *, f_cell=False, carry=True, local=None, tanh_c=True, stack=None, f_from="dc_t",
               o_from="tanh"):
    """One LSTM step (lessons/32-lstm.md): ``a = x Wx + h Wh + b`` for ``xs = (x, h, c, Wx, Wh, b)`` (x (N, D), h and c
    (N, H), Wx (D, 4H), Wh (H, 4H), b (4H,), float64), its four blocks of H columns the gates in ``order`` (a
    permutation of "ifgo": CS231n's i, f, o, g; PyTorch's i, f, g, o), i, f, o sigmoids and g a tanh, ``c_t = f c +
    i g``, ``h_t = o tanh(c_t)``; and its backward for the upstream gradients ``dh``, ``dc`` (N, H) with at most one
    line changed: ``f_cell`` (df = dc_t * c_t), ``carry=False`` (dc_prev = dc_t; ``"i"``: dc_t * i), ``tanh_c=False`` (dc_t = dc + dh *
    o; ``"pre"``: dc + dh * o * (1 - c_t**2)), ``f_from`` "dh" or "dc" (df from that upstream gradient alone),
    ``o_from="c"`` (do = dh * c_t; ``"c_prev"``: dh * tanh(c_prev)), ``local`` (``{gate: "pre" or "none"}``: its
    derivative taken at its pre-activation, or left out), ``stack`` (the gates' gradients joined in that order).
    Returns ``((h_t, c_t), {role: gradient})``, roles x, h, c, Wx, Wh, b in ``xs``'s shapes."""
    x, h, c, Wx, Wh, b = xs
    H, local = h.shape[1], local or {}
    a = x @ Wx + h @ Wh + b
    cut = {k: a[:, j * H:(j + 1) * H] for j, k in enumerate(order)}
    z = {k: np.tanh(v) if k == "g" else _sig(v) for k, v in cut.items()}
    c_t = z["f"] * c + z["i"] * z["g"]
    tc = np.tanh(c_t)
    dct = dc + dh * z["o"] * ((1 - c_t ** 2) if tanh_c == "pre" else (1 - tc ** 2) if tanh_c else 1)
    dz = {"i": dct * z["g"], "f": {"dc_t": dct, "dh": dh, "dc": dc}[f_from] * (c_t if f_cell else c),
          "g": dct * z["i"], "o": dh * (c_t if o_from == "c" else np.tanh(c) if o_from == "c_prev" else tc)}

    def slope(k):  # the gate's derivative as backward writes it
        u = cut[k] if local.get(k) == "pre" else z[k]
        return 1.0 if local.get(k) == "none" else 1 - u ** 2 if k == "g" else u * (1 - u)
    da = np.concatenate([dz[k] * slope(k) for k in (stack or order)], axis=1)
    carried = dct * z["f"] if carry is True else dct * z["i"] if carry == "i" else dct
    return (z["o"] * tc, c_t), {"x": da @ Wx.T, "h": da @ Wh.T, "c": carried,
                                "Wx": x.T @ da, "Wh": h.T @ da, "b": da.sum(axis=0)}


def _lstm_gate_lines(order: str):
    """The gate lines of :func:`_lstm_signature` for forward's gate ``order``: each gate's derivative (and the three
    sigmoids', and all four) taken at the pre-activation or left out, then backward joining the gates' gradients in
    another order than forward cuts ``a`` (:func:`_lstm_step`'s ``local`` and ``stack``), with their fields."""
    rows = []
    for gates in (*order, "ifo", "ifgo"):
        one = len(gates) == 1
        who = (f"the {_GATES[gates][0]} {gates}'s" if one else
               f"the gates {', '.join(gates)}'s" if len(gates) == 4 else "the sigmoid gates i, f, o's")
        rights = ", ".join(f"da_{k} = d{k} * {_GATES[k][2].format(u=k)}" for k in gates)
        fix = f"{rights}, with the gate values {', '.join(gates)} cached in forward"
        pre = ", ".join(f"{_GATES[k][2].format(u='a_' + k)}" for k in gates)
        rows += [({"local": dict.fromkeys(gates, "pre")}, {
            "got": f"{who} derivative taken at the pre-activation a ({pre})", "right": rights,
            "why": f" ({', '.join(gates)} = {_GATES[gates[0]][1] if one else 'sigmoid (tanh for g)'}(a): the "
                   "derivative written in the output is given the input)", "fix": fix}),
            ({"local": dict.fromkeys(gates, "none")}, {
                "got": f"{who} derivative left out ({', '.join(f'da_{k} = d{k}' for k in gates)})", "right": rights,
                "why": "", "fix": fix})]
    for stack in itertools.permutations(order):
        if "".join(stack) != order:
            rows.append(({"stack": "".join(stack)}, {
                "got": f"the gates' gradients joined in the order {', '.join(stack)}",
                "right": f"forward's order {', '.join(order)}",
                "why": f": forward cuts a = x Wx + h Wh + b into the gates {', '.join(order)}, and each gate's "
                       "gradient belongs in the columns of the weights that made it",
                "fix": f"join them as forward cuts a: np.concatenate([da_{', da_'.join(order)}], axis=1)"}))
    return rows


def _lstm_arrays(L: _Layer):
    """The checked layer's arrays as one LSTM step's (:func:`_lstm_layout`), read from their shapes, never their
    names: inputs x (N, D), h and c (N, H), then inputs or parameters that are two weights (D, 4H) and (H, 4H)
    (each as such or transposed) and biases of 4H entries ((4H,), (1, 4H), (4H, 1)), nothing else. Returns ``(D,
    H, [(name, weight)] * 2, [(name, bias)])`` or None."""
    xs = L.inputs
    if len(xs) < 3 or any(not isinstance(v, np.ndarray) or v.ndim != 2 or v.dtype.kind != "f" for v in xs[:3]):
        return None
    (N, D), (N2, H) = xs[0].shape, xs[1].shape
    if N2 != N or xs[2].shape != (N, H):
        return None
    rest = [*zip(L.names[3:], xs[3:], strict=False), *L.params.items()]
    bias = [(k, v) for k, v in rest if np.shape(v) in ((4 * H,), (1, 4 * H), (4 * H, 1))]
    mats = [(k, v) for k, v in rest if np.shape(v) in ((D, 4 * H), (4 * H, D), (H, 4 * H), (4 * H, H))
            and np.shape(v) not in ((4 * H,), (1, 4 * H), (4 * H, 1))]
    if len(mats) != 2 or len(mats) + len(bias) != len(rest):
        return None
    return D, H, mats, bias


def _renamed(roles: Mapping[str, str], turned: tuple[bool, bool], bias: Sequence[tuple[str, Any]],
             grads: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A recurrent step's recomputed gradients (``{role: array}``, roles x, h, c, h0, Wx, Wh, b) as the layer's
    ``{grad name: array}`` (:func:`_lstm_layout`, :func:`_rnn_layout`): ``roles`` maps a role to the layer's name,
    ``turned`` says whether Wx and Wh are stored transposed, and the bias gradient is reshaped to each of ``bias``."""
    shapes = {"Wx": turned[0], "Wh": turned[1]}
    out = {V.grad_name(k): grads[r].T if shapes.get(r) else grads[r] for r, k in roles.items()}
    return out | {V.grad_name(k): np.reshape(grads["b"], np.shape(v)) for k, v in bias}


def _lstm_layout(L: _Layer):
    """How the checked layer is one LSTM step of :func:`_lstm_step` (:func:`_lstm_arrays`): forward's two outputs,
    stacked (h_t and c_t in either order), or its one output h_t (lesson 32's cell), recomputed to 1e-9 for one gate
    order of 24 and one pairing of the weights (two when D == H). Returns ``(xs, order, (dh, dc), named, words)``:
    the arrays as :func:`_lstm_step` takes them, the check's upstream gradients of h_t and c_t (0 for h_t alone),
    ``named(grads)`` (its gradients as the layer's ``{grad name: array}``) and backward's names of ``{dh, dc, dc_}``
    (dc_: "dc + ", "" for h_t alone); or None."""
    got, Y, G, outs = _lstm_arrays(L), np.asarray(L.Y, dtype=np.float64), np.asarray(L.G, dtype=np.float64), L.outputs
    if got is None or outs is not None and not (outs["stacked"] and len(outs["names"]) == 2):
        return None
    (D, H, mats, bias), (x, h, c) = got, (np.asarray(v, dtype=np.float64) for v in L.inputs[:3])
    if Y.shape != ((2, *h.shape) if outs else h.shape) or G.shape != Y.shape:
        return None
    Ys, Gs = (Y, G) if outs else ((Y, None), (G, np.zeros_like(G)))
    ups = list(outs["grads"]) if outs else ["dY", ""]  # backward's names of the outputs' upstream gradients
    b = sum((np.reshape(np.asarray(v, dtype=np.float64), -1) for _, v in bias), np.zeros(4 * H))
    for (kx, vx), (kh, vh) in (mats, mats[::-1]):
        tx, th = np.shape(vx) != (D, 4 * H), np.shape(vh) != (H, 4 * H)
        Wx, Wh = (np.asarray(v, dtype=np.float64) for v in (vx.T if tx else vx, vh.T if th else vh))
        if Wx.shape != (D, 4 * H) or Wh.shape != (H, 4 * H):
            continue
        xs = (x, h, c, Wx, Wh, b)
        for order in map("".join, itertools.permutations("ifgo")):
            (ht, ct), _ = _lstm_step(xs, order, h, c)
            for j in (0, 1) if outs else (0,):
                if close(Ys[j], ht, 1e-9) and (Ys[1 - j] is None or close(Ys[1 - j], ct, 1e-9)):
                    named = functools.partial(_renamed, {"x": L.names[0], "h": L.names[1], "c": L.names[2], "Wx": kx,
                                                         "Wh": kh}, (tx, th), bias)
                    dh, dc = ups[j], ups[1 - j]
                    return xs, order, (Gs[j], Gs[1 - j]), named, {"dh": dh, "dc": dc, "dc_": dc and f"{dc} + "}
    return None


def _lstm_signature(L: _Layer, manual: Mapping, numer: Mapping, failing: Sequence[str]) -> list[Finding]:
    """The findings of one LSTM step's backward (newuser35 L1: an LSTMCell whose forget gate took dh for the total dc,
    "no known bug pattern"): a class ``forward(x, h_prev, c_prev) -> (h, c)`` (or h alone: lesson 32's) or CS231n's
    ``lstm_step_forward`` pair recognised by :func:`_lstm_layout`, whose correct backward, recomputed here, is the numerical gradient of
    every tensor, and whose gradients, every one, are those of :func:`_lstm_step` with one known line changed
    (:data:`_LSTM_LINES`, :func:`_lstm_gate_lines`), as :func:`_nielsen_signature` names Nielsen's backprop. One
    finding per failing tensor (said once by :func:`_said_once`), or [] when nothing matched exactly."""
    if not failing or (lay := _lstm_layout(L)) is None:
        return []
    xs, order, (dh, dc), named, words = lay
    try:
        with np.errstate(all="ignore"):
            right = named(_lstm_step(xs, order, dh, dc)[1])
            if not _agree(right, numer):
                return []
            lines = [(knobs, fields) for knobs, fields in [*_LSTM_LINES, *_lstm_gate_lines(order)]
                     if words["dc"] or knobs.get("f_from") != "dc"]  # h_t alone: no upstream gradient of c_t
            fields = _line_changed(lines, lambda knobs: named(_lstm_step(xs, order, dh, dc, **knobs)[1]), manual, right)
            if fields is not None:
                return [_find("lstm-line", k, **{n: v.format(**words) for n, v in fields.items()}) for k in failing]
    except (ValueError, FloatingPointError, IndexError, KeyError):  # not an LSTM step's numbers: nothing named
        return []
    return []


#: One line of a tanh RNN's backward through time changed (:func:`_rnn_bptt`'s knobs): ``(knobs, fields of
#: "rnn-line")``.
_RNN_LINES = (
    ({"pre": True}, {  # github.com/OT1devl/Deep-Learning: derv_tanh(x) = 1 - x**2 given the pre-activation
        "got": "da = dh * (1 - a**2), tanh's derivative at the pre-activation a = x_t Wx + h_prev Wh + b,",
        "right": "da = dh * (1 - h_t**2)", "why": ": h_t = tanh(a), and tanh's derivative written in its output, "
        "1 - out**2, needs the output h_t, not its input a", "fix": "da = dh * (1 - h_t**2), h_t the step's output "
        "(cached in forward)"}),
    ({"wh_from": "current"}, {  # github.com/leoniloris/Visualization-In-Data-Science: prev_s.T.dot(d_Ws)
        "got": "dWh += h_t.T @ da, the step's own output,", "right": "dWh += h_prev.T @ da",
        "why": ": a = x_t Wx + h_prev Wh + b multiplies Wh by the hidden state the step was given, h_(t-1)",
        "fix": "dWh += h_prev.T @ da, with h_prev = h_(t-1) (h0 at the first step) kept in the cache"}),
)


def _rnn_bptt(x, h0, Wx, Wh, b, G, *, pre=False, wh_from="prev"):
    """A tanh RNN over a sequence (lessons/31-rnn-bptt.md): ``h_t = tanh(x_t Wx + h_(t-1) Wh + b)`` for x (N, T, D),
    h0 (N, H), Wx (D, H), Wh (H, H), b (H,), and its backward through time for the upstream gradient G (N, T, H) with
    at most one line changed: ``pre`` (da = dh * (1 - a**2)), ``wh_from="current"`` (dWh from h_t, not h_(t-1)).
    Returns ``(H (N, T, H), {role: gradient})``, roles x, h0, Wx, Wh, b."""
    T = x.shape[1]
    hs, As = [h0], []
    for t in range(T):
        As.append(x[:, t] @ Wx + hs[-1] @ Wh + b)
        hs.append(np.tanh(As[-1]))
    g = {"x": np.zeros_like(x), "Wx": np.zeros_like(Wx), "Wh": np.zeros_like(Wh), "b": np.zeros_like(b)}
    dh = np.zeros_like(h0)
    for t in reversed(range(T)):
        da = (G[:, t] + dh) * (1 - (As[t] if pre else hs[t + 1]) ** 2)
        g["x"][:, t] = da @ Wx.T
        g["Wx"] += x[:, t].T @ da
        g["Wh"] += (hs[t + 1] if wh_from == "current" else hs[t]).T @ da
        g["b"] += da.sum(axis=0)
        dh = da @ Wh.T
    return np.stack(hs[1:], axis=1), g | {"h0": dh}


def _rnn_layout(L: _Layer):
    """How the checked layer is a tanh RNN over a sequence (:func:`_rnn_bptt`), read from the arrays' shapes, never
    their names: the first input x (N, T, D), optionally h0 (N, H) second (CS231n's ``rnn_forward(x, h0, Wx, Wh,
    b)``; else h0 = 0), then inputs or parameters that are a weight (D, H) or (H, D), one (H, H) (as such or
    transposed) and biases of H entries, nothing else; forward recomputed to 1e-9. Returns ``(xs, named)`` (the
    arrays as :func:`_rnn_bptt` takes them; ``named(grads)``: its gradients as the layer's ``{grad name: array}``) or
    None."""
    xs, Y = L.inputs, np.asarray(L.Y, dtype=np.float64)
    if not xs or np.ndim(xs[0]) != 3 or Y.ndim != 3 or Y.shape[:2] != xs[0].shape[:2] or L.G.shape != Y.shape:
        return None
    (N, _, D), H = xs[0].shape, Y.shape[2]
    h0_in = len(xs) > 1 and np.shape(xs[1]) == (N, H)
    rest = [*zip(L.names[1 + h0_in:], xs[1 + h0_in:], strict=False), *L.params.items()]
    bias = [(k, v) for k, v in rest if np.shape(v) in ((H,), (1, H), (H, 1))]
    mats = [(k, v) for k, v in rest if (k, v) not in bias and np.ndim(v) == 2 and set(np.shape(v)) <= {D, H}]
    if len(mats) != 2 or len(mats) + len(bias) != len(rest) or not all(
            isinstance(v, np.ndarray) and v.dtype.kind == "f" for _, v in rest):
        return None
    x = np.asarray(xs[0], dtype=np.float64)
    h0 = np.asarray(xs[1], dtype=np.float64) if h0_in else np.zeros((N, H))
    b = sum((np.reshape(np.asarray(v, dtype=np.float64), -1) for _, v in bias), np.zeros(H))
    for (kx, vx), (kh, vh) in (mats, mats[::-1]):
        for tx, th in itertools.product((False, True), repeat=2):
            Wx, Wh = (np.asarray(v, dtype=np.float64) for v in (vx.T if tx else vx, vh.T if th else vh))
            if Wx.shape != (D, H) or Wh.shape != (H, H) or not close(_rnn_bptt(x, h0, Wx, Wh, b, L.G)[0], Y, 1e-9):
                continue
            roles = {"x": L.names[0], "Wx": kx, "Wh": kh} | ({"h0": L.names[1]} if h0_in else {})
            return (x, h0, Wx, Wh, b), functools.partial(_renamed, roles, (tx, th), bias)
    return None


def _rnn_signature(L: _Layer, manual: Mapping, numer: Mapping, failing: Sequence[str]) -> list[Finding]:
    """The findings of a tanh RNN's backward through time (bugs43 M1: tanh's derivative at the pre-activation, dWh
    from h_t; "no known bug pattern"): a layer recognised by :func:`_rnn_layout`, whose correct backward, recomputed
    here, is the numerical gradient of every tensor, and whose gradients, every one, are those of :func:`_rnn_bptt`
    with one known line changed (:data:`_RNN_LINES`), as :func:`_lstm_signature` names an LSTM step's. One finding per
    failing tensor, or [] when nothing matched exactly."""
    if not failing or (lay := _rnn_layout(L)) is None:
        return []
    xs, named = lay
    try:
        with np.errstate(all="ignore"):
            if not _agree(named(_rnn_bptt(*xs, L.G)[1]), numer):
                return []
            fields = _line_changed(_RNN_LINES, lambda knobs: named(_rnn_bptt(*xs, L.G, **knobs)[1]), manual)
            if fields is not None:
                return [_find("rnn-line", k, **fields) for k in failing]
    except (ValueError, FloatingPointError, IndexError, KeyError):  # not an RNN's numbers: nothing named
        return []
    return []


def _swapped_upstream_signature(L: _Layer, key, m):
    """``backward(dh, dc)`` that uses ``dc`` where ``dh`` is due (two outputs, checked as one stacked ``Y``):
    ``m`` is the correct gradient for the upstream with two outputs' gradients exchanged."""
    k = L.Y.shape[0] if L.Y.ndim else 0
    if not (L.outputs and L.outputs["stacked"]) or not 2 <= k <= 4:
        return None
    for a, b in itertools.combinations(range(k), 2):
        order = list(range(k))
        order[a], order[b] = b, a
        if close(m, L.numer([key], G=L.G[order])[key], 1e-5):
            return "swapped-upstream", {"a": a, "b": b}
    return None


def _window_signature(L: _Layer, key, m):
    """Max pooling's backward that spreads each window's ``dY`` evenly (average pooling's), routes it to the window's
    minimum, or assigns whole windows where they overlap (``dx[window] = mask * dY``): the windows read from forward (an input element
    made the largest changes exactly the outputs whose window holds it: one forward per element), named only when
    the correct gradient is max pooling's over those windows."""
    if (got := _input_of(L, key, m)) is None or L.Y.size >= got[1].size:
        return None
    i, x = got
    windows = _forward_windows(L, i, x)
    sizes, flat, G = windows.sum(axis=1), x.ravel(), L.G.ravel()
    if not windows.any(axis=0).any() or np.any(sizes == 0):
        return None
    pick = np.argmax(np.where(windows, flat[None, :], -np.inf), axis=1)  # each window's maximum
    if not close(L.numer([key])[key].ravel(), _pooled(windows, flat, G, "max"), 1e-5):
        return None  # not a max pool over these windows
    if close(m.ravel(), (windows * (G / sizes)[:, None]).sum(axis=0), 1e-5):
        return "maxpool-spread-evenly", {"k": int(np.median(sizes))}
    if close(m.ravel(), (windows * G[:, None]).sum(axis=0), 1e-5):  # bugs43 M1: dx[window] += dY
        return "maxpool-spread-whole", {"k": int(np.median(sizes))}
    if close(m.ravel(), _pooled(windows, -flat, G, "max"), 1e-5):  # tester27s: np.argmin for np.argmax
        return "maxpool-argmin", {}
    shared = int(np.sum(windows.sum(axis=0) > 1))
    for which, hit, o in _one_writer(windows) if shared else ():
        if close(m.ravel(), np.where(hit & (pick[o] == np.arange(x.size)), G[o], 0.0), 1e-5):
            return "window-overwrites", {"k": shared, "size": x.size, "which": which}
    return None


def _forward_windows(L: _Layer, i: int, x: np.ndarray) -> np.ndarray:
    """``(outputs, input elements)`` booleans: which elements of input ``i`` (``x``) each output reads, read from
    forward (an element made far larger changes exactly the outputs whose window holds it: one forward per element);
    found once per layer and input (kept on ``L``)."""
    cache = L.__dict__.setdefault("_windows", {})
    if i not in cache:
        big, windows = 4 * float(np.abs(x).max(initial=0.0)) + 10.0, np.zeros((L.Y.size, x.size), dtype=bool)
        for j in range(x.size):
            xj = x.copy()
            xj.flat[j] = big
            windows[:, j] = (np.abs(L.fwd_with(i, xj) - L.Y) > 1e-9 * big).ravel()
        cache[i] = windows
    return cache[i]


def _pooled(windows: np.ndarray, flat: np.ndarray, G: np.ndarray, mode: str) -> np.ndarray:
    """Pooling's gradient of the input (flattened) over ``windows`` (outputs x input elements) for the flattened
    upstream gradient ``G``: ``"max"`` routes each output's ``G`` to its window's largest element of ``flat``,
    ``"average"`` spreads it evenly over its window."""
    if mode == "average":
        return (windows * (G / windows.sum(axis=1))[:, None]).sum(axis=0)
    out = np.zeros(flat.size)
    np.add.at(out, np.argmax(np.where(windows, flat[None, :], -np.inf), axis=1), G)
    return out


def _window_boxes(windows: np.ndarray, x_shape: tuple, y_shape: tuple) -> tuple[np.ndarray, np.ndarray] | None:
    """``(strides, extent)`` when every output's window is a box of one extent (per axis) in the input, whose corner
    along each axis is the output's index there times that axis's stride (a pooling's windows without padding:
    ``vert_start = h * stride``); None otherwise. An axis of one output has stride 1."""
    if len(x_shape) != len(y_shape):
        return None
    idx = np.array(np.unravel_index(np.arange(windows.shape[0]), y_shape)).T
    lo, hi = np.zeros_like(idx), np.zeros_like(idx)
    for o, row in enumerate(windows):
        at = np.array(np.unravel_index(np.flatnonzero(row), x_shape))
        if not at.size:
            return None
        lo[o], hi[o] = at.min(axis=1), at.max(axis=1)
        if at.shape[1] != np.prod(hi[o] - lo[o] + 1):
            return None  # not a box
    extent = hi[0] - lo[0] + 1
    last = np.argmax(idx, axis=0)  # per axis, an output of the largest index there: its corner over its index
    strides = np.array([lo[o, a] // idx[o, a] if idx[o, a] else 1 for a, o in enumerate(last)])
    if np.any(hi - lo + 1 != extent) or np.any(lo != idx * strides):
        return None
    return strides, extent


def _pool_stride_signature(L: _Layer, key, m, n):
    """A pooling backward that ignores the stride (Kulbear's published ``pool_backward``, tester24s g07/g11:
    ``vert_start = h`` where ``h * stride`` is due): forward's windows (:func:`_forward_windows`) are boxes with a
    stride above 1 (:func:`_window_boxes`), the correct gradient is max or average pooling's over them, and ``m`` the
    same pooling's over boxes of the same extent with their corners at the output's index (stride 1)."""
    if (got := _input_of(L, key, m)) is None or L.Y.size >= got[1].size or not np.all(np.isfinite(n)):
        return None
    i, x = got
    windows = _forward_windows(L, i, x)
    if (boxes := _window_boxes(windows, x.shape, L.Y.shape)) is None or np.all(boxes[0] == 1):
        return None
    strides, extent = boxes
    idx = np.array(np.unravel_index(np.arange(L.Y.size), L.Y.shape)).T
    if np.any(idx.max(axis=0) + extent > np.array(x.shape)):
        return None
    unstrided = np.zeros_like(windows)
    for o, corner in enumerate(idx):
        box = np.zeros(x.shape, dtype=bool)
        box[tuple(slice(c, c + e) for c, e in zip(corner, extent))] = True
        unstrided[o] = box.ravel()
    flat, G = x.ravel(), L.G.ravel()
    for mode in ("max", "average"):
        if close(n.ravel(), _pooled(windows, flat, G, mode), 1e-5):
            if close(m.ravel(), _pooled(unstrided, flat, G, mode), 1e-5) or mode == "max" and close(
                    m, _max_at_unstrided(windows, idx, strides, x, G), 1e-5):  # verify44c F4: argmax of the window
                moved = [int(s) for s in strides[strides > 1]]
                return "pool-stride-ignored", {"s": moved[0] if len(set(moved)) == 1 else tuple(moved), "mode": mode,
                                               "k": "x".join(str(int(e)) for e in extent[strides > 1])}
            return None
    return None


def _max_at_unstrided(windows: np.ndarray, idx: np.ndarray, strides: np.ndarray, x: np.ndarray,
                      G: np.ndarray) -> np.ndarray | None:
    """A max pool's dx when each output's dY goes to its (strided) window's maximum's offset within the window but
    from the corner at the output's index, stride 1 (``dx[n, c, i + r, j + q] += dout[n, c, i, j]`` with ``r, q``
    from ``x[..., i*s:i*s+ph, j*s:j*s+pw]``); None when such a place falls outside ``x``."""
    out, flat = np.zeros(x.shape), x.ravel()
    pick = np.argmax(np.where(windows, flat[None, :], -np.inf), axis=1)
    for o, j in enumerate(pick):
        at = np.array(np.unravel_index(j, x.shape)) - idx[o] * strides + idx[o]
        if np.any(at >= np.array(x.shape)):
            return None
        out[tuple(at)] += G[o]
    return out


def _pool_unravel_signature(L: _Layer, key, m, n):
    """A max pool's backward that unravels each window's flat argmax with the window's shape swapped
    (``np.unravel_index(np.argmax(win), (pw, ph))`` for a ph x pw window, bugs43 M1: maxpool_unravel): forward's
    windows (:func:`_forward_windows`) are boxes of one non-square 2-D extent (:func:`_window_boxes`), the correct
    gradient is max pooling's over them, and ``m`` routes output o's dY to row ``k // pw'`` and column ``k % pw'``
    of its box (``k`` the maximum's row-major index in the box, ``pw'`` = ph the swapped width), clipped into the
    window or not."""
    if (got := _input_of(L, key, m)) is None or L.Y.size >= got[1].size or not np.all(np.isfinite(n)):
        return None
    i, x = got
    windows = _forward_windows(L, i, x)
    if (boxes := _window_boxes(windows, x.shape, L.Y.shape)) is None:
        return None
    strides, extent = boxes
    axes = [a for a, e in enumerate(extent) if e > 1]
    flat, G = x.ravel(), L.G.ravel()
    if len(axes) != 2 or extent[axes[0]] == extent[axes[1]] or not close(
            n.ravel(), _pooled(windows, flat, G, "max"), 1e-5):
        return None
    ph, pw = (int(extent[a]) for a in axes)
    idx = np.array(np.unravel_index(np.arange(L.Y.size), L.Y.shape)).T
    for clip, order in ((True, "C"), (False, "C"), (True, "F")):  # F: r, q = k % ph, k // ph (verify44c F4)
        bug, moved = np.zeros(x.shape), 0
        for o, corner in enumerate(idx * strides):
            box = x[tuple(slice(c, c + e) for c, e in zip(corner, extent))].reshape(ph, pw)
            k = int(np.argmax(box))
            r, q = divmod(k, ph) if order == "C" else divmod(k, ph)[::-1]  # np.unravel_index(k, (pw, ph))
            r, q = (min(r, ph - 1), min(q, pw - 1)) if clip else (r, q)
            at = corner.copy()
            at[axes[0]] += r
            at[axes[1]] += q
            if np.any(at >= np.array(x.shape)):
                break
            moved += (r, q) != divmod(k, pw)
            bug[tuple(at)] += G[o]
        else:
            if moved and close(m, bug, 1e-5):
                return "maxpool-unravel-swapped", {"ph": ph, "pw": pw, "k": moved, "o": L.Y.size, "wrong": (
                    f"({pw}, {ph})" if order == "C" else f"({ph}, {pw}), order='F' (r, q = k % {ph}, k // {ph})")}
    return None


def _repeated_index_signature(L: _Layer, key, m, n=None):
    """``dW[idx] += dY`` where ``np.add.at(dW, idx, dY)`` is due (an embedding lookup ``W[idx]``):
    named when the numerical gradient is the unbuffered scatter-add of ``G`` at an integer input and
    ``m`` the buffered one (the last occurrence of each repeated row alone). The table is a parameter, or a float
    input (a function pair's ``word_embedding_forward(x, W)``: tester18s, named a max pool's overlapping windows).
    Where the lookup is inside a model (``forward(Xb, Yb) -> loss``: no ``G`` of the looked-up rows' shape,
    tester30k M4), by the rows alone: ``m`` differs from ``n`` in some rows of the table, every one of them a row
    the integer input looks up more than once (the rows looked up once or never are right)."""
    p = L.params.get(key)
    if p is None and key.startswith("@") and key[1:] in L.names and L.inputs[L.names.index(key[1:])].dtype.kind == "f":
        p = L.inputs[L.names.index(key[1:])]
    for name, x in zip(L.names, L.inputs):
        if p is None or x.dtype.kind not in "iu" or not x.size or x.min() < 0 or x.max() >= len(p):
            continue
        G, rows_of = L.G, x.shape + p.shape[1:]
        if G.shape != rows_of and G.ndim and G.shape[0] == x.shape[0] and G.size == np.prod(rows_of):
            G = G.reshape(rows_of)  # the lookups concatenated per sample (makemore's emb.view(n, -1))
        bag = x.ndim >= 2 and G.shape == x.shape[:-1] + p.shape[1:]  # W[ids].mean(1) / .sum(1): a bag of lookups
        if bag:  # each lookup of a bag gets the bag's dY, times the scale found below (1/L for a mean; tester21s M7)
            G = np.broadcast_to(G.reshape(x.shape[:-1] + (1,) + p.shape[1:]), rows_of)
        if G.shape != rows_of:
            if n is not None and (rep := _repeated_rows_wrong(x, p, m, n)) is not None:
                return "repeated-index", {"k": rep, "rows": len(p), "x": name}
            continue
        added, kept = np.zeros(p.shape), np.zeros(p.shape)
        np.add.at(added, x, G)
        kept[x] = G
        rows = np.bincount(x.ravel(), minlength=len(p))
        num = L.numer([key])[key]
        aa = float(np.sum(added * added))
        scale = float(np.sum(num * added)) / aa if bag and aa else 1.0
        if (rows > 1).any() and close(num, scale * added, 1e-5) and close(m, scale * kept, 1e-5):
            return "repeated-index", {"k": int((rows > 1).sum()), "rows": len(p), "x": name}
        if not bag and close(num, added, 1e-5) and (axes := _loop_axes(x, G, m)):
            egs = {0: "dW[ids[k]] += dY[k]", 1: "dW[ids[:, t]] += dY[:, t]"}
            return "repeated-index-loop", {"a": " or ".join(map(str, axes)), "x": name, "eg": " or ".join(
                egs.get(a, f"the buffered += along axis {a}") for a in axes)}
    return None


def _loop_axes(x, G, m) -> list[int]:
    """The axes of the integer ids ``x`` (two axes or more) a loop may run over when each step's buffered
    ``dW[ids[k]] += dY[k]`` (the ids of a step a fancy index: a repeat within the step keeps one) gives ``m`` (and
    ``np.add.at`` would not): outside44, karpathy/nn-zero-to-hero#57's loop over rows, DLfS2's over time."""
    axes = []
    for a in range(x.ndim if x.ndim >= 2 else 0):
        kept = np.zeros(m.shape)
        for k in range(x.shape[a]):
            kept[np.take(x, k, axis=a)] += np.take(G, k, axis=a)
        if close(m, kept, 1e-5):
            axes.append(a)
    return axes


def _repeated_rows_wrong(x, p, m, n):
    """The number of rows of the table ``p`` that ``x`` (integer ids in ``[0, len(p))``) looks up more than once,
    when the rows where the gradient ``m`` differs from the numerical ``n`` (rtol 1e-5, atol 1e-7 of max|n|) are some
    of those rows and no other: the buffered ``dW[idx] += dY`` seen from the rows alone; else None."""
    if m.shape != p.shape or n.shape != p.shape or not p.ndim or not np.all(np.isfinite(n)):
        return None
    rows = np.bincount(x.ravel(), minlength=len(p)) > 1
    wrong = mismatched(m, n, 1e-5, 1e-7 * float(np.max(np.abs(n), initial=0.0))).reshape(len(p), -1).any(axis=1)
    return int(rows.sum()) if wrong.any() and not (wrong & ~rows).any() else None


def _pool_area(X, Y, G, n) -> int:
    """The window area of an average pool from the 4-d input ``X`` to ``Y`` (upstream gradient ``G``, ``Y``'s
    shape), when the layer can be one; else 0.

    A pool keeps its channels and shrinks its two spatial axes: the channel axis is equal on both sides in one of
    the two layouts, ``(N, C, H, W)`` (axis 1) or Andrew Ng's ``(N, H, W, C)`` (axis 3), and the area is
    ``H * W / (H' * W')`` of that layout's spatial axes, an integer above 1, no spatial axis larger in ``Y``. And an
    average pool hands each output's gradient to its window in shares that sum to it: the correct dX ``n`` (finite,
    ``X``'s shape) sums over each sample's channel to what ``G`` sums to over that channel's outputs (rtol 1e-5).
    (newuser34 M1: X.size / Y.size of either layout, channels counted; review35 F2: a convolution from 4 channels
    to 1 at 'same' padding, X (2, 4, 5, 5) and Y (2, 1, 5, 5), was read as a 4-input pool in either reading.)
    If both layouts hold (the channel axes 1 and 3 both equal) their areas are one number, ``H / H'``."""
    if not (X.ndim == Y.ndim == 4 and Y.size and X.shape[0] == Y.shape[0] and G.shape == Y.shape
            and np.shape(n) == X.shape and np.all(np.isfinite(n))):
        return 0
    for ch, sp in ((1, (2, 3)), (3, (1, 2))):
        if X.shape[ch] != Y.shape[ch] or any(Y.shape[a] > X.shape[a] for a in sp):
            continue
        area = X.shape[sp[0]] * X.shape[sp[1]] / (Y.shape[sp[0]] * Y.shape[sp[1]])
        if area > 1 and area == int(area) and close(np.sum(n, axis=sp), np.sum(G, axis=sp), 1e-5):
            return int(area)
    return 0


def _time_or_area(L: _Layer, key, m, n, n0=None):
    """``(code, fields)`` of a constant factor that is a count of the layer's own shapes: ``1/T`` of a sequence
    input ``(N, T, D)`` (``factor-inverse-time``), or the window area of an average pool's 4-d input
    (:func:`_pool_area`; ``pool-area-missing`` or ``pool-side-only``, in dX); else None. Not 1/T when a 2-D input
    beside ``X`` has ``X``'s axis 1 as its own axis 1 and another axis 0: Andrew Ng's ``x (n_x, m, T_x)`` with ``a0
    (n_a, m)``, whose axis 1 is the batch m, time being axis 2 (students45 F4: a db averaged over m was "an extra 1/T",
    with CS231n's fix). ``n0``: the correct
    gradient at its own scale (``n`` rescaled for the signatures), for the pool's sums; ``n`` when not given."""
    X, ok = L.inputs[0], np.isfinite(n)
    c = _ls_factor(m[ok], n[ok]) if np.any(n[ok]) else 0.0
    if X.ndim == 3 and X.dtype.kind == "f" and any(k > 1 and abs(c * k - 1) < 1e-6 for k in X.shape[1:]):
        role, why = _axis1_role(L)  # students45 F4: Andrew Ng's x (n_x, m, T_x) holds the batch on axis 1
        fields = {"x": L.names[0], "shape": V.fmt_shape(X.shape), "why": why}
        if X.shape[1] > 1 and abs(c * X.shape[1] - 1) < 1e-6:
            code = {"time": "factor-inverse-time", "batch": "factor-inverse-axis1-batch"}.get(role, "factor-inverse-axis1")
            return code, {"T": X.shape[1], **fields}
        if role == "batch" and abs(c * X.shape[2] - 1) < 1e-6:  # Ng's 1/T_x
            return "factor-inverse-time-ng", {"T": X.shape[2], **fields}
    if key != L.keys[0] or not (area := _pool_area(X, L.Y, L.G, n if n0 is None else n0)):
        return None
    if abs(c / area - 1) < 1e-6:
        return "pool-area-missing", {"area": int(area)}
    side = round(area ** 0.5)
    if side > 1 and side * side == area and abs(c / side - 1) < 1e-6:
        return "pool-side-only", {"area": int(area), "side": side}
    return None


def _axis1_role(L: _Layer) -> tuple[str, str]:
    """``(role, why)`` of axis 1 of the layer's 3-D first input X, as its other 2-D inputs and weights say by their
    sizes: "time" (``(N, T, D)``, CS231n's: a state ``h0 (N, H)`` has X's axis-0 size on its axis 0, a weight ``(D,
    H)`` X's axis-2 size on its axis 0) or "batch" (Andrew Ng's ``(n_x, m, T_x)``: ``a0 (n_a, m)`` has X's axis-1
    size on its axis 1, ``Wax (n_a, n_x)`` X's axis-0 size on its axis 1); ``("", "")`` when none tells or they
    disagree (students45 F4: Ng's rnn with a db averaged over m was read as "an extra 1/T" with a fix for the
    other layout). A function pair's weights are inputs, so inputs and weights are read alike.

    Only unambiguous clues count (verify45a F5: CS231n's h0 (N, H), Wx (D, H) and Wh (H, H) with H == T also had
    x's axis-1 size on their axis 1): a square array (``Wh (H, H)``, ``Waa (n_a, n_a)``) tells no layout, only the
    hidden size; where it does, a clue counts only when the array's other axis is that hidden size (H on axis 1 in
    CS231n's layout, n_a on axis 0 in Ng's); an array that gives clues for both layouts gives none."""
    X, x, said = L.inputs[0], L.names[0], {"time": [], "batch": []}
    n, t, d = X.shape
    rules = ((0, 0, n, n != t, "time", "a state (N, H) holds the batch"),
             (1, 1, t, n != t, "batch", "a state (n_a, m) holds the batch"),
             (0, 2, d, n != d, "time", "a weight (D, H) takes the features"),
             (1, 0, n, n != d, "batch", "a weight (n_a, n_x) takes the features"))
    arrays = [(name, a) for name, a in [*zip(L.names[1:], L.inputs[1:]), *L.params.items()] if np.ndim(a) == 2]
    hidden = {np.shape(a)[0] for _, a in arrays if np.shape(a)[0] == np.shape(a)[1]}
    for name, a in arrays:
        if a.shape[0] == a.shape[1]:
            continue
        own = {"time": [], "batch": []}
        for ax, x_ax, size, telling, role, where in rules:
            if telling and a.shape[ax] == size and (not hidden or a.shape[1 - ax] in hidden):
                own[role].append(f"{name.lstrip('@')} {V.fmt_shape(np.shape(a))} has {x}'s axis-{x_ax} size {size} "
                                 f"on its axis {ax}, where {where}")
        if not (own["time"] and own["batch"]):
            said["time"] += own["time"]
            said["batch"] += own["batch"]
    if bool(said["time"]) == bool(said["batch"]):
        return "", ""
    role = "time" if said["time"] else "batch"
    return role, "; ".join(said[role][:2])


def _size_counts(x: np.ndarray, Y: np.ndarray, name: str) -> list[tuple[str, Callable, Callable]]:
    """The counts a backward may divide by or miss, each ``(words, count(x_shape, Y_shape), its formula's text(x_shape,
    Y_shape))``: the product of the
    sizes of each set of axes of ``x`` but its first (the batch's), and the outputs per input ``Y.size / x.size``
    (or its inverse) when that is a whole number above 1."""
    from itertools import combinations

    out = []
    for k in range(1, x.ndim):
        for axes in combinations(range(1, x.ndim), k):
            words = (f"the size of axis {axes[0]} of {name}" if k == 1 else
                     f"the sizes of axes {', '.join(map(str, axes[:-1]))} and {axes[-1]} of {name}")
            out.append((words, lambda xs, ys, axes=axes: float(np.prod([xs[a] for a in axes])),
                        lambda xs, ys, axes=axes: " x ".join(str(xs[a]) for a in axes)))
    for words, f in (("the outputs per input, Y.size / {x}.size", lambda xs, ys: np.prod(ys) / np.prod(xs)),
                     ("the inputs per output, {x}.size / Y.size", lambda xs, ys: np.prod(xs) / np.prod(ys))):
        r = f(x.shape, Y.shape)
        if r > 1 and r == int(r):
            out.append((words.format(x=name), f, lambda xs, ys, f=f: f"{f(xs, ys):.6g}"))
    return out


def _size_factor(L: _Layer, key, m, n):
    """``(code, fields)`` of ``factor-axis-sizes``: the constant factor of input ``key``'s gradient (the first, float,
    two axes or more) is a count of its shape (:func:`_size_counts`), its inverse or square root, and follows it: at
    an input with each axis but the batch's grown (by 1, 2, ...) the factor is that count there (outside44: a global
    average pool's backward without 1/(H*W), by H alone, a nearest upsampling's averaged for summed, a scaled
    positional encoding's sqrt(d_model) left out); else None."""
    x = L.inputs[0]
    ok = np.isfinite(n)
    if key != L.keys[0] or x.dtype.kind != "f" or x.ndim < 2 or not np.any(n[ok]):
        return None
    c = _ls_factor(m[ok], n[ok])
    forms = ((1.0, ""), (-1.0, "1/"), (0.5, "sqrt"), (-0.5, "1/sqrt"))
    hits = [(w, f, t, e, p) for w, f, t in _size_counts(x, L.Y, L.names[0]) for e, p in forms
            if (v := f(x.shape, L.Y.shape)) > 1 and abs(v ** e / c - 1) < 1e-6]
    if not hits:
        return None
    shape = (x.shape[0], *(s + a for a, s in enumerate(x.shape[1:], 1)))
    x2 = np.random.default_rng([L.seed, 45]).standard_normal(shape).astype(x.dtype)
    xs = [x2, *L.inputs[1:]]
    c2 = _factor_at_inputs(L, key, xs)
    if c2 is None:
        return None
    Y2 = np.shape(L.proxy.forward(*[v.copy() for v in xs], training=L.training))
    L.forward_again()
    left = [(w, t, e, p, f(x.shape, L.Y.shape), Y2) for w, f, t, e, p in hits
            if abs(f(shape, Y2) ** e / c2 - 1) < 1e-6]
    if not left:
        return None
    w, t, e, p, v, Y2 = left[0]  # the fewest axes first: one count named
    said = lambda xs, ys: (f"{p}({t(xs, ys)})" if "sqrt" in p or (p and " x " in t(xs, ys))  # noqa: E731
                           else f"{p}{t(xs, ys)}")
    eq = lambda k, w: "" if w == f"{k:.6g}" else f" = {w}"  # noqa: E731 - "5", not "5 = 5"
    return "factor-axis-sizes", {"c": c, "c2": c2, "what": eq(c, said(x.shape, L.Y.shape)),
                                 "what2": eq(c2, said(shape, Y2)), "words": w, "x": L.names[0], "s0": V.fmt_shape(x.shape), "s1": V.fmt_shape(shape),
                                 "how": _SIZE_HOW[(e > 0, abs(e) < 1)].format(v=f"{v:.6g}")}


#: what a factor ``(too large, a square root)`` of a count says backward did (:func:`_size_factor`)
_SIZE_HOW = {
    (True, False): "backward misses a division by {v} that forward makes (a mean over those axes), or divides by "
                   "fewer of them than forward does",
    (False, False): "backward divides by {v} where forward does not (e.g. it averages the gradients of copies, which "
                    "must be summed: an upsampling's np.repeat, a broadcast)",
    (True, True): "backward misses a division by sqrt({v}) that forward makes, or multiplies by it where forward "
                  "does not",
    (False, True): "backward misses the factor sqrt({v}) forward multiplies by (e.g. X * sqrt(d_model)), or divides "
                   "by it where forward does not",
}


def _next_h_signature(L: _Layer, key, m, n):
    """An RNN step whose hidden weight's gradient takes the step's output ``next_h`` where the input hidden state
    ``prev_h`` is due (tester18s L5: ``dWh = next_h.T @ da``): a tanh step (``da = G * (1 - Y**2)``), a float input
    of the output's shape with ``n = prev_h.T @ da``, and ``m = Y.T @ da``. The weight a parameter, or an input of a
    function pair (CS231n's ``rnn_step_backward``: verify44c F4)."""
    p, Y = L.params.get(key), L.Y
    if p is None and key.startswith("@") and key[1:] in L.names:
        p = L.inputs[L.names.index(key[1:])]
    if p is None or p.ndim != 2 or Y.ndim != 2 or p.shape != (Y.shape[1], Y.shape[1]) or L.G.shape != Y.shape:
        return None
    da = L.G * (1 - Y**2)
    for name, h in zip(L.names, L.inputs):
        if h.dtype.kind == "f" and h.shape == Y.shape and close(n, h.T @ da, 1e-5) and close(m, Y.T @ da, 1e-5):
            return "next-h-for-prev-h", {"x": name}
    return None


#: The eps a normalisation's forward may add to its variance (PyTorch's 1e-5, Keras's 1e-3, others'), tried in turn.
_NORM_EPS = (1e-5, 1e-3, 0.0, 1e-8, 1e-6, 1e-12)


def _axis_words(axes, ndim) -> tuple[str, str]:
    """``("axis=-1", "the features: LayerNorm's statistics")`` for the statistics' ``axes`` of an ``ndim``-D input."""
    if axes == (ndim - 1,):
        return "axis=-1", "the features: LayerNorm's statistics"
    return f"axis={axes[0] if len(axes) == 1 else axes}", "the batch: BatchNorm's statistics"


def _wrong_axis_backwards(dxhat, X, fwd, bwd, eps):
    """The dX of a normalisation whose forward takes its statistics over the axes ``fwd`` (with ``eps``) and whose
    backward takes its means over ``bwd``: the compact formula, and CS231n's dvar/dmu steps with the count of ``bwd``."""
    mean_f = functools.partial(np.mean, axis=fwd, keepdims=True)
    mean_b, sum_b = (functools.partial(f, axis=bwd, keepdims=True) for f in (np.mean, np.sum))
    xmu = X - mean_f(X)
    istd = 1 / np.sqrt(mean_f(xmu**2) + eps)
    xh, count = xmu * istd, int(np.prod([X.shape[a] for a in bwd]))
    yield istd * (dxhat - mean_b(dxhat) - xh * mean_b(dxhat * xh))
    dvar = sum_b(dxhat * xmu) * -0.5 * istd**3
    dmu = sum_b(-dxhat * istd) + dvar * mean_b(-2 * xmu)
    yield dxhat * istd + dvar * 2 * xmu / count + dmu / count


def _norm_vjp(G, X, axes, eps, gamma):
    """The correct dX of ``gamma * xhat + beta``, xhat normalised over ``axes`` with ``eps``, gamma per last-axis
    feature: :func:`_wrong_axis_backwards`' compact formula with forward's axes in backward too."""
    return next(_wrong_axis_backwards(G * gamma, X, axes, axes, eps))


def _norm_axis_signature(L: _Layer, key, m, n):
    """A normalisation whose forward and backward reduce over different axes (a LayerNorm with BatchNorm's axis 0 in
    its backward, or in its forward): the correct ``n`` is the normalisation's dX over one axis (gamma per feature
    fitted, forward's eps among :data:`_NORM_EPS`) and ``m`` is that layer's backward with its means over the other
    (:func:`_wrong_axis_backwards`); else None."""
    X, G = L.inputs[0], L.G
    if key != L.keys[0] or X.ndim not in (2, 3) or m.shape != X.shape or G.shape != X.shape or X.dtype.kind != "f" \
            or min(X.shape) < 2 or X.shape[-1] > 256 or not np.all(np.isfinite(n)) or close(m, n, 1e-5):
        return None
    last, batch = (X.ndim - 1,), tuple(range(X.ndim - 1))
    for fwd, bwd in ((last, (0,)), (batch, last)):
        for eps in _NORM_EPS:
            basis = np.stack([_norm_vjp(G, X, fwd, eps, np.eye(X.shape[-1])[j]).ravel() for j in range(X.shape[-1])], 1)
            gamma = np.linalg.lstsq(basis, n.ravel(), rcond=None)[0]
            if not close(basis @ gamma, n.ravel(), 1e-4, 1e-9 * np.abs(n).max()):
                continue
            if fwd == last and (found := _gamma_placement(G, X, eps, gamma, m)) is not None:
                return found
            if any(close(m, c, 1e-4, 1e-9 * np.abs(m).max()) for c in _wrong_axis_backwards(G * gamma, X, fwd, bwd, eps)):
                (fa, fk), (ba, bk) = _axis_words(fwd, X.ndim), _axis_words(bwd, X.ndim)
                fix = (f"in a LayerNorm, backward's means over axis=-1, as forward's ({_xhat_formula('axis=-1', None, '')})"
                       if fwd == last else "in a LayerNorm, forward's statistics are on the wrong axis: "
                       "X.mean(axis=-1, keepdims=True) and X.var(axis=-1, keepdims=True); in a BatchNorm, backward's "
                       f"means over {fa}, as forward's")
                return "norm-wrong-axis", {"fwd": fa, "fwd_kind": fk, "bwd": ba, "bwd_kind": bk, "fix": fix}
            break
    return None


def _rms_signature(L: _Layer, key, m, n):
    """An RMS norm ``Y = gamma * X / r``, ``r = sqrt(mean(X**2, axis=-1) + eps)`` (gamma per feature, fitted; eps
    among :data:`_NORM_EPS`), whose backward leaves out the path through ``r`` (``dX = dY * gamma / r``) or takes
    that path's sum over the batch (axis 0, a batch norm's) where the features' is due (outside44 RMSNormNoRmsPath,
    RMSNormBatchMean): ``n`` the correct dX, recomputed, and ``m`` that backward's; else None."""
    X, G, Y = L.inputs[0], L.G, L.Y
    if key != L.keys[0] or X.ndim != 2 or X.dtype.kind != "f" or not X.shape == Y.shape == G.shape == m.shape \
            or min(X.shape) < 2 or close(m, n, 1e-5) or not np.all(np.isfinite(n)):
        return None
    N, D = X.shape
    for eps in _NORM_EPS:
        r = np.sqrt((X ** 2).mean(axis=-1, keepdims=True) + eps)
        gamma = np.sum(Y * X / r, axis=0) / np.maximum(np.sum((X / r) ** 2, axis=0), 1e-300)
        if not close(Y, gamma * X / r, 1e-9):
            continue
        dxh = G * gamma
        if not close(n, dxh / r - X * (dxh * X).sum(axis=-1, keepdims=True) / (D * r ** 3), 1e-5):
            return None
        if close(m, dxh / r, 1e-5):
            return "rms-path-missing", {}
        if close(m, dxh / r - X * (dxh * X).sum(axis=0, keepdims=True) / (N * r ** 3), 1e-5):
            return "rms-wrong-axis", {}
        return None
    return None


def _gamma_placement(G, X, eps, gamma, m):
    """A LayerNorm's dX with gamma outside its means over the features, ``gamma * istd * (dY - mean(dY) - xhat *
    mean(dY * xhat))`` (corpus38 F5: numpy-transformer's LayerNormalization, BatchNorm's compact formula, where gamma
    does factor out of the means over the batch), or without gamma at all (session20b's LNGammaForgot): ``m`` is
    that, with the per-feature ``gamma`` fitted to the correct gradient, not all equal (where both are right); else
    None."""
    if np.ptp(gamma) <= 1e-6 * np.abs(gamma).max():
        return None
    plain = _norm_vjp(G, X, (X.ndim - 1,), eps, 1.0)
    for how, got in (("is gamma times the gradient it would be at gamma = 1: backward multiplies by gamma after its "
                      "means over the features, where dxhat = dY * gamma goes inside them", gamma * plain),
                     ("is the gradient it would be at gamma = 1: backward leaves gamma out (dxhat = dY where dY * "
                      "gamma is due)", plain)):
        if close(m, got, 1e-4, 1e-9 * np.abs(m).max()):
            return "norm-gamma-misplaced", {"how": how, "fix": _xhat_formula("axis=-1", None)}
    return None


def _skip_signature(L: _Layer, key, m, n):
    """A residual block's backward without its skip path (tester18s L5: ``return dh @ W1.T`` where ``dy + dh @ W1.T``
    is due): the input has the output's shape, the correct gradient is ``m + dY`` and ``m`` is not it."""
    if (got := _input_of(L, key, m)) is None or got[1].shape != L.Y.shape or L.G.shape != m.shape:
        return None
    if close(m + L.G, n, 1e-5) and not close(m, n, 1e-5) and not close(m, 0 * m):
        return "skip-path-missing", {"x": L.names[got[0]]}
    if close(m - L.G, n, 1e-5) and not close(m, n, 1e-5) and not close(n, 0 * n) and _identity_path(L, key):
        return "skip-path-twice", {"x": L.names[got[0]]}  # outside44 ResidualSkipTwice
    return None


def _identity_path(L: _Layer, key: str) -> bool:
    """Whether forward is ``X + F(X)`` with F made by the layer's weights: with every weight matrix (a float
    parameter of two axes or more) set to zero in place, and put back, the input's numerical gradient is dY (the
    identity path alone); False without such weights (a tanh's dY * (2 - tanh**2) is dY more than its gradient, no
    skip path: test_cache_rewrite_s26) or when the layer cannot run so."""
    ws = [w for w in L.params.values() if isinstance(w, np.ndarray) and w.dtype.kind == "f" and w.ndim >= 2]
    if not ws:
        return False
    kept = [w.copy() for w in ws]
    try:
        for w in ws:
            w[...] = 0
        return close(L.numer([key])[key], L.G, 1e-6)
    except Exception:  # noqa: BLE001 - a layer that cannot run with its weights zero: not told
        return False
    finally:
        for w, k in zip(ws, kept):
            w[...] = k


def _gate_signature(L: _Layer, key, m, n):
    """A recurrent cell's state input whose gradient misses a gate (newuser22's leftovers: lesson 32's
    ``lstm_bug.py`` returns ``dc`` where ``dc * f`` is due; lesson 32b's ``gru_bug.py`` returns ``dah @ W_hh``
    without the direct path's ``dY * z``). Only for an input after the first with the output's shape, every entry
    of ``m`` and dY nonzero: ``n = r m`` with ``r`` strictly between 0 and 1, not one number ("gate-factor-missing"),
    or ``n - m = s dY`` with ``s`` so ("gated-skip-missing", also for the first input of a layer with weights: a
    highway's carry ``(1 - t) * x``); each confirmed at a second upstream gradient, the
    factor the same there (a factor of forward's, a gate, not of dY). The layer's cache is set back after."""
    if (got := _input_of(L, key, m)) is None or got[1].shape != L.Y.shape or L.G.shape != m.shape:
        return None
    i, G = got[0], L.G
    for code, num, den in (("gate-factor-missing", n, m), ("gated-skip-missing", n - m, G)):
        if i == 0 and (code == "gate-factor-missing" or not L.params):
            continue  # the first input: a highway layer's carry path alone (outside44 HighwayNoCarry), weights in it
        if not (np.all(np.abs(den) > 1e-6 * np.abs(den).max(initial=0.0)) and np.all(np.isfinite(num))):
            continue
        r = num / den
        if not (np.all((r > 1e-9) & (r < 1 - 1e-9)) and np.ptp(r) > 1e-3):
            continue
        G2 = np.random.default_rng([L.seed, 23]).standard_normal(G.shape)
        try:
            m2 = np.asarray(_as_list(_backward_of(L, L.inputs, G2), len(L.inputs))[i], dtype=np.float64)
        except Exception:  # noqa: BLE001 - student code at another dY: not told
            return None
        finally:
            L.forward_again()
        n2 = L.numer([key], G=G2)[key]
        if m2.shape == m.shape and close(n2 if code == "gate-factor-missing" else n2 - m2,
                                         r * (m2 if code == "gate-factor-missing" else G2), 1e-5):
            return code, {"x": L.names[i], "lo": float(r.min()), "hi": float(r.max())}
    return None


def _branch_signature(L: _Layer, key, m, n):
    """A weight's gradient as it would be with another weight ``p`` zero (newuser22's leftover: lesson 35's
    ``two_branch_bug.py`` gives the first of two residual branches dY where dH = dY + (what comes back through the
    second) is due, so dA is A's gradient as if B were 0). ``key`` and ``p`` weight matrices (a mask read without the
    bias is another bug); ``p`` set to zero in place and put back; named only when the output changes with it and
    ``m`` matches the central differences there, not ``n``, and those are not 0."""
    if (key not in L.params or np.ndim(L.params[key]) < 2 or min(np.shape(L.params[key])) < 2
            or not np.isfinite(n).all()):  # a (K,) or (1, K) bias is no weight matrix (numpy-ml's (1, K) b: at b = 0
        return None  # "if W were zero" holds by chance; a (K,) one's probe left a sandboxed model's W zeroed: s24)
    for p, w in L.params.items():  # weight matrices only: a bias zero is no branch (LinearReLUMaskNoBias's mask)
        if p == key or not isinstance(w, np.ndarray) or w.dtype.kind != "f" or w.ndim < 2 or not np.any(w):
            continue
        kept = w.copy()
        try:
            w[...] = 0
            if close(L.fwd(*[a.copy() for a in L.inputs]), L.Y, 1e-9):
                continue
            n0 = L.numer([key])[key]
        except Exception:  # noqa: BLE001 - a layer that cannot run with p zero: not told
            continue
        finally:
            w[...] = kept
        if close(m, n0, 1e-5) and not close(n0, n, 1e-5) and not close(n0, 0 * n0):
            return "branch-upstream-dY", {"p": p, "also": ""}
    return None


def _one_branch(L: _Layer, diag: Diagnosis, manual: Mapping, numer: Mapping) -> None:
    """The input's gradient named in the ``branch-upstream-dY`` sentence (lesson 35's ``two_branch_bug.py``: dX =
    dH + d1 @ A with d1 from dY, "no known bug pattern" in session 23) when the numbers show it is wrong through the
    same dH: with ``p`` zero forward is the first part alone, ``Y0 = X + F1(X)``, whose gradient for an upstream
    ``v`` is ``g0(v) = v + J1^T v``; backward's ``m = dH + J1^T dY`` then gives ``dH = m - g0(dY) + dY``, and
    ``g0(dH)`` is the correct gradient ``n`` (to 1e-5). Only for the first input, of the output's shape."""
    branch = _of_code(diag, "branch-upstream-dY")[:1]
    x, X = L.keys[0], L.inputs[0]
    t = V.grad_name(L.names[0])
    other = [f for f in _of_code(diag, "wrong-values") if f.severity == "error" and f.tensor == t]
    if not branch or not other or X.shape != L.Y.shape or L.G.shape != X.shape:
        return
    m, n = manual.get(t), numer.get(t)
    if m is None or n is None:
        return
    m, n = np.asarray(m, dtype=np.float64), np.asarray(n, dtype=np.float64)
    for p, w in L.params.items():
        if not isinstance(w, np.ndarray) or w.dtype.kind != "f" or min(w.shape, default=0) < 2 or not np.any(w):
            continue
        if f"if {p} were zero" not in branch[0].message:
            continue
        kept = w.copy()
        try:
            w[...] = 0
            dH = m - L.numer([x])[x] + L.G
            right = L.numer([x], G=dH)[x]
        except Exception:  # noqa: BLE001 - a layer that cannot run with p zero: not told
            return
        finally:
            w[...] = kept
        if close(right, n, 1e-5):
            also = (f"; {t} is wrong through the same dH: it is dH plus F1's gradient for dY, where F1's gradient "
                    f"for dH is due (e.g. {t} = dH + d1 @ A, with d1 = dH * (1 - F1**2) for the first part "
                    "tanh(X @ A.T))")
            msg = branch[0].message.replace("F1's backward takes dH, not dY)",
                                            f"F1's backward takes dH, not dY){also}", 1)
            _as_one(diag, branch + other, Finding("branch-upstream-dY", msg, branch[0].tensor, "error"))
            return


def _weight_derivative_signature(L: _Layer, key, m, n, t="dW"):
    """A dense layer's gradient computed from dY where the pre-activation's dZ is due (tester22s's NablaW_bug,
    ``nabla_W = X.T @ dY``: unnamed in session 22; tester23s's numpy-ml ``FullyConnectedTanh_bug_noact``, ``dZ = dLdy``
    for all three, session 24): X (N, D), dY (N, K), ``m`` is ``X.T @ dY`` (a (D, K) weight), ``dY.T @ X`` (a (K, D)
    one), ``dY.sum(axis=0)`` (a bias, also kept (1, K)) or, for X, ``dY @ W.T`` (``dY @ W``) with a (D, K) ((K, D))
    weight W, and the correct gradient is neither that nor 0; not for a forward with coarse values inside
    (``L.coarse``: a float16 or rounded linear layer's X.T @ dY is right, its central differences are not)."""
    X, G, p = L.inputs[0], L.G, L.params.get(key)
    if ((p is None and key != L.keys[0]) or L.coarse or X.ndim != 2 or G.ndim != 2 or X.shape[0] != G.shape[0]
            or close(m, n, 1e-5) or close(n, 0 * n)):  # a parameter forward does not use (BiasLinearIgnoresB's b)
        return None
    z, x = "X @ W + b", L.names[0]
    if p is None:  # the input's gradient: dY through a (D, K) or (K, D) weight, the pre-activation's dZ skipped
        forms = [(f"dY @ {w}.T", G @ W.T, f"dZ @ {w}.T") if W.shape == (X.shape[1], G.shape[1]) else
                 (f"dY @ {w}", G @ W, f"dZ @ {w}") for w, W in L.params.items()
                 if isinstance(W, np.ndarray) and W.ndim == 2 and W.shape in ((X.shape[1], G.shape[1]),
                                                                             (G.shape[1], X.shape[1]))]
    else:
        keep = m.shape == (1, G.shape[1])  # numpy-ml's dZ.sum(axis=0, keepdims=True)
        total = "dY.sum(axis=0, keepdims=True)" if keep else "dY.sum(axis=0)"
        if p.ndim <= 1 or keep:  # newuser34 M2: a LayerNorm's dgamma = dY.sum(axis=0) got the dense layer's dZ story
            dense = any(isinstance(W, np.ndarray) and W.ndim == 2 and W.shape in ((X.shape[1], G.shape[1]),
                                                                                 (G.shape[1], X.shape[1]))
                        for W in L.params.values())
            if not dense and close(m, G.sum(axis=0, keepdims=keep), 1e-6):
                return "scale-summed-as-bias", {"eq": f"{t} = {total}", "p": key}
        forms = [(f"{x}.T @ dY", X.T @ G, f"{x}.T @ dZ"), ("dY.T @ X", G.T @ X, "dZ.T @ X"),
                 (total, G.sum(axis=0, keepdims=keep), total.replace("dY", "dZ"))]
    for prod, got, fix in forms:
        if got.shape == m.shape and close(m, got, 1e-6):
            if p is not None and _affine_in_first_input(L):  # newuser38 F1: no nonlinearity whose derivative is missing
                return "weight-not-on-input", {"eq": f"{t} = {prod}", "x": x, "p": key}
            return "weight-skips-derivative", {"eq": f"{t} = {prod}", "fixeq": f"{t} = {fix}", "z": z,
                                               "it": "it takes", "same": ", the same dZ the other gradients use",
                                               "too": " too"}
    return None


def _affine_in_first_input(L: _Layer) -> bool:
    """Whether forward is affine in its first input X, ``Y(2X) - 2 Y(X) + Y(0) = 0`` and ``Y(X) + Y(-X) = 2 Y(0)``:
    then it applies no nonlinearity after a pre-activation, and a gradient taken from dY is no skipped ``f'(Z)``
    (newuser38 F1: ``(X + b) @ W`` with ``dW = X.T @ dY`` was told "forward applies a nonlinearity to Z"). The second
    rule tells a positively homogeneous one (review39 F6: a dense ReLU with a zero bias passes the first, ``relu(2z)
    = 2 relu(z)``, not the second, ``relu(z) + relu(-z) = |z|``). The check's cache is restored after."""
    X = L.inputs[0]
    try:
        y0, y2, yn = L.fwd_with(0, np.zeros_like(X)), L.fwd_with(0, 2 * X), L.fwd_with(0, -X)
        tol = 1e-12 * (1 + float(np.abs(L.Y).max()))
        return y2.shape == yn.shape == L.Y.shape and close(y2 + y0, 2 * L.Y, 1e-9, tol) and close(
            L.Y + yn, 2 * y0, 1e-9, tol)
    except Exception:  # noqa: BLE001 - student code: not told affine
        return False
    finally:
        L.forward_again()


def _one_dense_dz(diag: Diagnosis) -> None:
    """One ``weight-skips-derivative`` sentence for every tensor that skips the activation's derivative (a dense
    tanh's dX, dW and db all from dY: tester23s's numpy-ml ``FullyConnectedTanh_bug_noact``), at the first one's
    place, instead of three sentences of the same words."""
    hits = _of_code(diag, "weight-skips-derivative")
    if len(hits) < 2:
        return
    eqs = [re.match(r"(.*?): it takes", f.message)[1] for f in hits]
    fixes = [re.search(r"so (.*?) with dZ", f.message)[1] for f in hits]
    z = re.search(r"pre-activation Z = (.*?) is due", hits[0].message)[1]
    _as_one(diag, hits, _find("weight-skips-derivative", ", ".join(f.tensor for f in hits), eq=joined_and(eqs),
                              fixeq=joined_and(fixes), z=z, it="each takes", same="", too=""))


def _conv_transpose_stride_signature(L: _Layer, key, m, n):
    """A 1-D transposed convolution (PyTorch's layout: X (N, C_in, L), W (C_in, C_out, K), an optional bias (C_out,),
    Y (N, C_out, (L - 1) s + K), stride ``s >= 2``; forward recomputed from them to 1e-9) whose backward reads dY at
    ``l + k`` where forward wrote tap k of position l at ``l s + k`` (newuser22's leftover: lesson 20b's
    ``conv_transpose_bug.py``, ``dY[:, :, k:k + L]``): ``m`` is dX or dW computed so."""
    X, Y, G = L.inputs[0], L.Y, L.G
    ws = [k for k, w in L.params.items() if w.ndim == 3]
    if len(L.inputs) != 1 or X.ndim != 3 or Y.ndim != 3 or len(ws) != 1 or key not in (L.keys[0], ws[0]):
        return None
    W = L.params[ws[0]]
    (N, C, Ln), (C2, O, K) = X.shape, W.shape
    s, rest = divmod(Y.shape[2] - K, Ln - 1) if Ln > 1 else (0, 1)
    if C2 != C or Y.shape[:2] != (N, O) or rest or s < 2:
        return None
    b = [w for k, w in L.params.items() if w.shape == (O,)]
    Y2 = np.zeros(Y.shape) + (b[0][:, None] if len(b) == 1 else 0.0)
    for k in range(K):
        Y2[:, :, k:k + (Ln - 1) * s + 1:s] += np.einsum("ncl,co->nol", X, W[:, :, k])
    if not close(Y2, Y, 1e-9, 1e-12):
        return None
    taps = [G[:, :, k:k + Ln] for k in range(K)]
    bug = (sum(np.einsum("nol,co->ncl", t, W[:, :, k]) for k, t in enumerate(taps)) if key == L.keys[0]
           else np.stack([np.einsum("ncl,nol->co", X, t) for t in taps], axis=2))
    return ("transposed-conv-stride", {"s": s, "L": Ln}) if close(m, bug, 1e-5) else None


def _conv_stride_signature(L: _Layer, key, m, n):
    """A 2-D convolution's backward that ignores the stride (newuser35 L1: ``dXp[:, :, i:i + k, j:j + k] += ...``
    where ``i*s:i*s + k`` is due): X (N, C, H, W), one weight (F, C, kh, kw), an optional bias (F,), Y (N, F, Ho, Wo)
    with stride ``s >= 2`` and padding ``p`` (the pair whose forward, recomputed from them, is Y to 1e-9); ``m`` is
    dX (the padded one's crop) or dW computed with each window at (i, j) in place of (i*s, j*s), and not ``n``."""
    X, Y, G = L.inputs[0], np.asarray(L.Y), L.G
    # the weight a parameter, or a CS231n pair's input beside x (conv_forward(x, w, b, conv_param): bugs43 M1)
    given = {**L.params, **{k: x for k, x in zip(L.keys[1:], L.inputs[1:], strict=True)}}
    ws = [k for k, w in given.items() if np.ndim(w) == 4]
    if (X.ndim != 4 or Y.ndim != 4 or len(ws) != 1 or key not in (L.keys[0], ws[0]) or any(
            np.ndim(x) not in (1, 4) for x in L.inputs[1:]) or G.shape != Y.shape or Y.size > 20000
            or close(m, n, 1e-5)):
        return None
    W = np.asarray(given[ws[0]], dtype=np.float64)
    (N, C, H, Wd), (F, C2, kh, kw), (_, _, Ho, Wo) = X.shape, W.shape, Y.shape
    if C2 != C or Y.shape[:2] != (N, F):
        return None
    b = [np.asarray(w) for k, w in given.items() if np.shape(w) == (F,)]
    for p in range(max(kh, kw)):
        Xp = np.pad(X, ((0, 0), (0, 0), (p, p), (p, p)))
        for s in range(2, max(kh, kw, 2) + 2):
            if ((H + 2 * p - kh) // s + 1, (Wd + 2 * p - kw) // s + 1) != (Ho, Wo) or min(Ho, Wo) < 2:
                continue
            Y2 = np.einsum("ncijhw,fchw->nfij", np.lib.stride_tricks.sliding_window_view(
                Xp, (kh, kw), axis=(2, 3))[:, :, ::s, ::s][:, :, :Ho, :Wo], W)
            if not close(Y2 + (b[0][:, None, None] if len(b) == 1 else 0.0), Y, 1e-9, 1e-12):
                continue
            bug = np.zeros_like(Xp) if key == L.keys[0] else np.zeros_like(W)
            for i in range(Ho):
                for j in range(Wo):
                    if key == L.keys[0]:
                        bug[:, :, i:i + kh, j:j + kw] += np.einsum("nf,fchw->nchw", G[:, :, i, j], W)
                    else:
                        bug += np.einsum("nf,nchw->fchw", G[:, :, i, j], Xp[:, :, i:i + kh, j:j + kw])
            bug = bug[:, :, p:p + H, p:p + Wd] if key == L.keys[0] else bug
            if close(m, bug, 1e-5):
                return "conv-stride-ignored", {"s": s, "p": p, "k": f"{kh}x{kw}",
                                               "slot": "dXp" if key == L.keys[0] else "patch = Xp"}
            return None
    return None


def _carry_signature(L: _Layer, key, m, n):
    """A recurrent layer's backward that does not carry the hidden state's gradient back a step (tester15 L3:
    CS231n's ``rnn_backward`` calling ``rnn_step_backward(dh[:, t, :], cache[t])`` without ``+ dprev``). Only for the
    sequence, the first input ``(N, T, D)`` of a forward whose output is ``(N, T, H)`` and causal (moving step T-1
    of the input leaves the earlier steps of the output as they were): ``m[:, t]`` must be the gradient of step t's
    output alone, the central differences for the upstream gradient cut to step t, at every step, and ``n`` not."""
    X, Y, G = L.inputs[0], L.Y, L.G
    if (key != L.keys[0] or X.ndim != 3 or Y.ndim != 3 or X.shape[:2] != Y.shape[:2] or not 2 <= X.shape[1] <= 32
            or m.shape != X.shape or X.dtype.kind != "f" or not np.all(np.isfinite(n))):
        return None
    T = X.shape[1]
    if not close(m[:, T - 1], n[:, T - 1], 1e-5):  # the last step has nothing to carry: right there
        return None
    if not _causal(L):
        return None  # no hidden state carried forward in time
    steps, c = sorted({0, T - 2}), 0.0
    for t in steps[::-1]:  # two steps, not all T: each costs a numerical gradient of the whole sequence
        Gt = np.zeros_like(G)
        Gt[:, t] = G[:, t]
        alone = L.numer([key], G=Gt)[key][:, t]
        if close(n[:, t], alone, 1e-5):
            return None
        if not c and close(m[:, t], alone, 1e-5):
            continue  # nothing carried
        if t == T - 2 and not c:  # the carry scaled by c: step T-1's gradient reaches step T-2 times c
            if (c := _carried_share(L, key, m[:, t] - alone, T - 1, t)) is None:
                return None
            continue
        scaled = G * c ** np.arange(T).reshape(1, T, *[1] * (G.ndim - 2))  # step tau's reaches step 0 times c**tau
        if not (c and close(m[:, 0], L.numer([key], G=scaled)[key][:, 0], 1e-5)):
            return None
    if c:
        return "rnn-carry-scaled", {"c": c, "T": T, "steps": " and ".join(map(str, steps)), "last": T - 1, "also": ""}
    return "rnn-no-carry", {"T": T, "last": T - 1, "also": "", **_alone_at(L, m, steps)}


def _alone_at(L: _Layer, m: np.ndarray, steps: Sequence[int]) -> dict[str, str]:
    """The ``where`` and ``which`` of an ``rnn-no-carry`` finding, ``m`` (N, T, D) the gradient of the sequence input
    that is the gradient of each step's own output alone at ``steps`` (and at the last, where that is right): the other
    steps before the last checked too, each by the central differences of its own input for its own output's upstream
    gradient (:func:`_step_alone`), so that "every step" is said only when every step was seen so (newuser31 F2: "at
    steps 0 and 4 of 0..5" read as if steps 1 to 3 were right)."""
    T = m.shape[1]
    alone = sorted({*steps, *(t for t in range(T - 1) if t not in steps and close(m[:, t], _step_alone(L, t), 1e-5))})
    if len(alone) == T - 1:
        return {"where": f"at every step (0..{T - 1}), which is right only at the last",
                "which": "every step but the last misses"}
    rest = [t for t in range(T - 1) if t not in alone]
    return {"where": f"at steps {joined_and([str(t) for t in alone])} of 0..{T - 1} and at the last (where it is right), "
                     f"not at step{'s' * (len(rest) > 1)} {joined_and([str(t) for t in rest])}",
            "which": f"step{'s' * (len(alone) > 1)} {joined_and([str(t) for t in alone])} miss{'es' * (len(alone) == 1)}"}


def _step_alone(L: _Layer, t: int) -> np.ndarray:
    """The gradient step ``t``'s own output sends back to its own input: central differences of ``sum(Y[:, t] *
    G[:, t])`` with respect to ``X[:, t]`` alone (N, D), float64 (2 N D forwards)."""
    X = np.array(L.inputs[0], dtype=np.float64)
    Gt = np.zeros_like(L.G)
    Gt[:, t] = L.G[:, t]
    idx = [(i, t, *rest) for i, *rest in np.ndindex(X[:, t].shape)]
    return numerical_gradient(lambda: scalar_objective(L.fwd_with(0, X.copy()), Gt), X, indices=idx)[:, t]


def _carried_share(L: _Layer, key: str, rest: np.ndarray, tau: int, t: int) -> float | None:
    """``c`` when ``rest`` (backward's gradient of input step ``t`` less that of step t's own output) is ``c`` times
    the gradient step ``tau``'s output sends back to input step ``t`` (central differences, the upstream gradient
    cut to step ``tau``), ``0 < |c - 1|`` and c not 0 (to 1e-5; a carry scaled by c); None otherwise."""
    Gt = np.zeros_like(L.G)
    Gt[:, tau] = L.G[:, tau]
    back = L.numer([key], G=Gt)[key][:, t]
    bb = float(np.sum(back * back))
    c = float(np.sum(rest * back)) / bb if bb else 0.0
    if not c or abs(c - 1) < 1e-4 or not close(rest, c * back, 1e-5, 1e-9):
        return None
    return round(c, 6) if abs(c - round(c, 6)) < 1e-7 else c


def _steps_not_summed(L: _Layer, key, m, n):
    """A recurrent layer's weight gradient that keeps one time step's contribution where the chain rule sums every
    step's (newuser22: lesson 31's ``rnn_bug.py``, ``self.grads["W_ih"] = dA.T @ X[:, t]`` in the loop over the steps,
    ``=`` where ``+=`` is due). Only for a weight and a sequence input ``(N, T, D)``, ``T >= 2``, of a forward whose
    output is ``(N, T, H)`` and causal (moving step T-1 of the input leaves the earlier steps of the output as they
    were): backward's gradient of the sequence input is right at T steps (so each step's contribution is) and the
    weight's is right for the one-step sequence ``X[:, :1]`` (nothing to sum), while ``m`` is not ``n``. The layer's
    cache is set back to the check's input after."""
    X, Y, G, proxy = L.inputs[0], L.Y, L.G, getattr(L, "proxy", None)
    i = L.keys.index(key) if key in L.keys else None  # a function pair's weight is an input (tester23s's rnn_wlast)
    if i == 0 or (i is not None and L.inputs[i].shape == Y[:, 0].shape):
        return None  # the sequence itself, or an initial state (N, H): no weight shared by the steps
    if ((key not in L.params and i is None) or proxy is None or X.ndim != 3 or Y.ndim != 3 or X.shape[:2] != Y.shape[:2]
            or not 2 <= X.shape[1] <= 32 or X.dtype.kind != "f" or close(m, n, 1e-5)):
        return None
    if not _causal(L):
        return None  # no time steps
    x = L.keys[0]
    one = [X[:, :1], *L.inputs[1:]]
    try:
        dx = np.asarray(_as_list(_backward_of(L, L.inputs, G), len(L.inputs))[0], dtype=np.float64)
        if dx.shape != X.shape or not close(dx, L.numer([x])[x], 1e-5):
            return None  # the input's gradient is wrong too: another bug
        r1 = _backward_of(L, one, G[:, :1])
        g = getattr(proxy, "grads", None)
        m1 = (np.array(_as_list(r1, len(one))[i], dtype=np.float64) if i is not None else
              np.array(g[key], dtype=np.float64) if isinstance(g, Mapping) and key in g else None)
    except Exception:  # noqa: BLE001 - a layer that cannot run a one-step sequence: not told
        return None
    finally:
        L.forward_again()
    if m1 is None or m1.shape != m.shape or not close(m1, L.numer([key], xs=one, G=G[:, :1])[key], 1e-5):
        return None
    return "steps-not-summed", {"T": X.shape[1], "x": V.grad_name(L.names[0])}


def _initial_state(L: _Layer) -> int | None:
    """The index ``j >= 1`` of a sequence layer's initial-state input: the first input is a sequence ``(N, T, D)``,
    ``2 <= T <= 32``, of a forward whose output ``(N, T, H)`` is causal (moving step T-1 of the input leaves the
    earlier steps of the output as they were), and input ``j`` has the shape of one step's output ``(N, H)`` and
    moves the first step's output (CS231n's ``rnn_forward(x, h0, Wx, Wh, b)``). None for any other layer. Found once
    per layer (kept on ``L``)."""
    if "_initial_state" not in L.__dict__:
        L.__dict__["_initial_state"] = _find_initial_state(L)
    return L.__dict__["_initial_state"]


def _causal(L: _Layer) -> bool:
    """Whether ``L`` is a sequence layer run step by step: its first input is a float sequence ``(N, T, D)``,
    ``2 <= T <= 32``, its output ``(N, T, H)``, and moving step T-1 of the input leaves the earlier steps of the
    output as they were (a hidden state carried forward in time, never backward). Found once per layer (kept on
    ``L``); False for a forward that cannot run at the moved input."""
    if "_causal" not in L.__dict__:
        X, Y, causal = L.inputs[0], L.Y, False
        if X.ndim == 3 and Y.ndim == 3 and X.shape[:2] == Y.shape[:2] and 2 <= X.shape[1] <= 32 and X.dtype.kind == "f":
            moved = X.copy()
            moved[:, -1] += 0.5 + np.abs(moved[:, -1])
            with contextlib.suppress(Exception):  # noqa: BLE001 - a forward that cannot run here: no sequence told
                causal = bool(np.array_equal(L.fwd_with(0, moved)[:, :-1], Y[:, :-1]))
        L.__dict__["_causal"] = causal
    return L.__dict__["_causal"]


def _find_initial_state(L: _Layer) -> int | None:
    """:func:`_initial_state`, found by running forward on moved inputs."""
    Y = L.Y
    if not _causal(L):
        return None  # no time steps
    try:
        for j, a in enumerate(L.inputs[1:], 1):
            if a.shape == Y[:, 0].shape and a.dtype.kind == "f" and \
                    not close(L.fwd_with(j, a + 0.5 + np.abs(a))[:, 0], Y[:, 0], 1e-9):
                return j
    except Exception:  # noqa: BLE001 - a forward that cannot run here: no sequence told
        return None
    return None


def _later_steps(L: _Layer, j: int) -> tuple[list[np.ndarray], bool]:
    """The inputs of the sequence without its first step, started from the first step's output as the initial
    state (input ``j``), and whether forward gives the outputs of steps 1..T-1 again from them (to 1e-9): True when
    the output is the layer's whole state (an RNN's h), False when more is carried (an LSTM's cell state c)."""
    xs = [a.copy() for a in L.inputs]
    xs[0], xs[j] = L.inputs[0][:, 1:].copy(), L.Y[:, 0].copy()
    try:
        return xs, close(L.fwd(*[a.copy() for a in xs]), L.Y[:, 1:], 1e-9, 1e-12)
    except Exception:  # noqa: BLE001 - a forward that cannot run a shorter sequence: not told
        return xs, False


def _first_step_signature(L: _Layer, key, m, n):
    """The gradients of the sequence without its first step (tester23s's ``rnn_offbyone``: CS231n's ``rnn_backward``
    looping over ``reversed(range(1, T))``, "no known bug pattern" in session 23): for a sequence layer with an initial
    state (:func:`_initial_state`) whose output is its whole state (:func:`_later_steps`: forward from the first
    step's output gives the later steps again), ``m`` is the central differences of that shorter sequence for dY's
    steps 1..T-1, for the sequence with its step 0 zero (nothing reached it), for the initial state the gradient of
    the state after step 0; and ``n`` is not."""
    if close(m, n, 1e-5) or (j := _initial_state(L)) is None:
        return None
    xs, whole = _later_steps(L, j)
    if not whole:
        return None
    got = L.numer([key], xs=xs, G=L.G[:, 1:])[key]
    if key == L.keys[0]:
        got = np.concatenate([np.zeros_like(got[:, :1]), got], axis=1)
    if got.shape == m.shape and close(m, got, 1e-5) and not close(n, got, 1e-5):
        return "first-step-missing", {"be": "is", "x": V.grad_name(L.names[0]), "h0": V.grad_name(L.names[j]),
                                      "last": L.Y.shape[1] - 1}
    return None


def _carry_probe(L: _Layer, j: int) -> bool:
    """Whether backward is right for the one-step sequence (every input's and parameter's gradient against central
    differences, to 1e-5) and, at T steps, right for the sequence's last step: each step's own derivatives are
    right, whatever comes back from a later step aside. Computed once per layer; the layer's cache is set back to
    the check's input after."""
    if "_carry_probe" in L.__dict__:
        return L.__dict__["_carry_probe"]
    X, G, ok = L.inputs[0], L.G, False
    one = [X[:, :1].copy(), *L.inputs[1:]]
    floats = [k for k, a in zip(L.keys, L.inputs) if a.dtype.kind == "f"]
    try:
        got = _as_list(_backward_of(L, one, G[:, :1]), len(one))
        g = getattr(L.proxy, "grads", None)
        mine = {k: got[i] for i, k in enumerate(L.keys) if k in floats}
        mine |= {k: g.get(k) if isinstance(g, Mapping) else None for k in L.params}
        right = L.numer(floats + list(L.params), xs=one, G=G[:, :1])
        ok = all(mine[k] is not None and close(np.asarray(mine[k], dtype=np.float64), right[k], 1e-5)
                 for k in right)
        if ok:
            dx = np.asarray(_as_list(_backward_of(L, L.inputs, G), len(L.inputs))[0], dtype=np.float64)
            x = L.keys[0]
            ok = dx.shape == X.shape and close(dx[:, -1], L.numer([x])[x][:, -1], 1e-5)
    except Exception:  # noqa: BLE001 - a layer that cannot run a one-step sequence: not told
        ok = False
    finally:
        L.forward_again()
    L.__dict__["_carry_probe"] = ok
    return ok


def _state_carry_signature(L: _Layer, key, m, n):
    """A state beyond the output whose gradient is not carried back in full (tester23s's ``lstm_nodc``: CS231n's
    ``lstm_backward`` giving each step ``dnext_c = 0``, "no known bug pattern" in session 23): a sequence layer with an
    initial state (:func:`_initial_state`) whose output is not its whole state (:func:`_later_steps`: forward from
    the first step's output does not give the later steps again), backward right for a one-step sequence and at the
    last step (:func:`_carry_probe`), and ``m`` not ``n``: what is wrong is carried from step to step."""
    if close(m, n, 1e-5) or (j := _initial_state(L)) is None or _later_steps(L, j)[1] or not _carry_probe(L, j):
        return None
    return "state-carry-incomplete", {"be": "is", "x": V.grad_name(L.names[0]), "last": L.Y.shape[1] - 1,
                                      "T": L.Y.shape[1]}


def _one_step_finding(L: _Layer, diag: Diagnosis, code: str) -> None:
    """One sentence of ``code`` (``first-step-missing``, ``state-carry-incomplete``) naming every tensor it was
    found for (a sequence's dx, dh0 and each weight's: one loop's bug), at the first one's place."""
    hits = _of_code(diag, code)
    if len(hits) < 2:
        return
    last = L.Y.shape[1] - 1
    fields = {"be": "are", "x": V.grad_name(L.names[0]), "last": last, "T": last + 1}
    if code == "first-step-missing":
        fields["h0"] = V.grad_name(L.names[_initial_state(L) or 1])
    _as_one(diag, hits, _find(code, joined_and([f.tensor for f in hits]), **fields))


def _backward_of(L: _Layer, xs, G):
    """The layer's forward on ``xs`` (copies), its grads zeroed, then ``backward(G)``: what backward returned."""
    L.proxy.forward(*[a.copy() for a in xs], training=L.training)
    _reset_grads(L.proxy)
    return L.proxy.backward(G.copy())


def _one_inside(diag: Diagnosis) -> None:
    """One sentence of each :data:`_INSIDE` code naming every tensor wrong through it (an RNN step's dx, dprev_h, dWx,
    dWh, db), at the first one's place, instead of one each."""
    for code in dict.fromkeys(c for c, *_ in _INSIDE):
        if len(hits := _of_code(diag, code)) > 1:
            rest = hits[0].message[len(f"{hits[0].tensor} is"):]
            _as_one(diag, hits, Finding(code, ", ".join(str(f.tensor) for f in hits) + " are" + rest, hits[0].tensor))


def _of_code(diag: Diagnosis, code: str) -> list[Finding]:
    """The findings of ``code``, in order."""
    return [f for f in diag.findings if f.code == code]


def _as_one(diag: Diagnosis, found: list[Finding], merged: Finding) -> None:
    """The findings ``found`` (of several tensors) replaced by the one ``merged``, at the first one's place."""
    later = {id(f) for f in found[1:]}
    diag.findings = [merged if f is found[0] else f for f in diag.findings if id(f) not in later]


def _one_carry(L: _Layer, diag: Diagnosis) -> None:
    """The ``rnn-no-carry`` (or ``rnn-carry-scaled``) finding with the other failing tensors (h0's, the weights')
    named in it as wrong through the same term, instead of one "no known bug pattern" each."""
    carry = (_of_code(diag, "rnn-no-carry") or _of_code(diag, "rnn-carry-scaled"))[:1]
    others = [f for f in _of_code(diag, "wrong-values") if f.severity == "error"]
    if not carry or not others:
        return
    scaled = re.search(r"multiplied by (\S+) at each step", carry[0].message)
    also = (f"; {', '.join(f.tensor for f in others)} {'are' if len(others) > 1 else 'is'} wrong through the same "
            f"{'scaled' if scaled else 'missing'} term (they sum the steps' gradients)")
    T = L.inputs[0].shape[1]
    said = re.search(r"own output alone (.+?): backward .*?, so (.+?) the later steps' gradients", carry[0].message)
    _as_one(diag, carry + others, _find(carry[0].code, carry[0].tensor, T=T, last=T - 1, also=also,
                                        c=float(scaled[1]) if scaled else 0.0,
                                        steps=" and ".join(map(str, sorted({0, T - 2}))),
                                        where=said[1] if said else "", which=said[2] if said else ""))


def _upstream_signature(L: _Layer, key, m):
    """Backward used dY in the wrong layout (e.g. a reshape without its transpose(1, 0, 2, 3)):
    backward is linear in dY, so ``m`` is ``J^T G'`` for the dY ``G'`` it used (:func:`_for_upstream`)."""
    for words, Gp in _permuted_copies(L.G, L.G.shape, "dY"):
        if _for_upstream(L, key, m, Gp):
            return "permuted-upstream", {"words": words}
    return None


def _for_upstream(L: _Layer, key, m, Gp) -> bool:
    """Whether ``m`` is the gradient of ``key`` for the upstream gradient ``Gp`` in place of the check's (backward is
    linear in dY, so it is ``J^T Gp``): screened with two directional derivatives, a survivor confirmed in full."""
    return all(_agrees(float(np.sum(u[key] * m)), d, u[key] * m, 1e-6) for u, d in L.directional(key, Gp)) \
        and close(m, L.numer([key], G=Gp)[key], 1e-5)


def _one_entry_signature(L: _Layer, key, m):
    """Backward that uses one entry of dY alone, the first (or last) nonzero one, of the whole dY or of each sample's
    row (corpus36 F5: Victor Zhou's softmax returns inside ``for i, gradient in enumerate(d_L_d_out)``, right for a
    one-hot dY only; it was told "assigns where it must add, as in max pooling" and "the first sample only"): ``m``
    is the gradient for dY with every other entry zeroed (:func:`_for_upstream`). Only where that leaves out a nonzero
    entry beside the kept one in its sample (a sample of one output is :func:`_sample_signature`'s)."""
    G = L.G
    rows = G.shape[0] if G.ndim >= 2 and G.shape[0] == L.n_batch >= 2 and not (L.outputs and L.outputs["stacked"]) \
        else 0  # each sample's row of dY, when its axis 0 is the batch
    for pos, pick in (("first", 0), ("last", -1)):
        for per in (False, True) if rows else (False,):
            flat = G.reshape(rows if per else 1, -1)
            Gp = np.zeros_like(flat)
            for r, row in enumerate(flat):
                if (nz := np.flatnonzero(row)).size >= 2:  # a nonzero entry left out beside the kept one
                    Gp[r, nz[pick]] = row[nz[pick]]
            if not np.any(Gp) or per and np.count_nonzero(Gp) < 2:  # per sample: two samples' entries at least
                continue
            cols = sorted(set(np.nonzero(Gp)[1].tolist()))
            at = np.unravel_index(cols[0], G.shape[1:] if per else G.shape)
            where = ("a different entry in each sample" if len(cols) > 1 else
                     f"dY[{', '.join(['i'] * per + [str(int(k)) for k in at])}]{' of each sample i' * per}")
            if _for_upstream(L, key, m, Gp.reshape(G.shape)):
                return "dy-one-entry", {"pos": pos, "per": " per sample" if per else "", "where": where,
                                        "left": int(np.count_nonzero(G)) - int(np.count_nonzero(Gp)),
                                        "skip": "" if pos == "first" else ", or a loop that assigns (=) where it "
                                        "must add (+=)"}
    return None


def _agrees(got: float, d: float, terms: np.ndarray, rtol: float) -> bool:
    """A directional derivative ``d`` against ``got = sum(terms)``, up to the terms' round-off."""
    return bool(abs(got - d) <= rtol * (abs(d) + np.sqrt(np.sum(terms**2))) + 1e-9)


def _kinks_only(fwd, xs, params, got, G, keys, u) -> bool:
    """True when a directional derivative along ``u`` disagrees with backward's ``got`` only through
    kinks its step crossed (:func:`gradcheck.numerical.directional_kinks`), not through a wrong entry."""
    analytic = {k: got[V.grad_name(k.lstrip("@"))] for k in u}
    return _directional_kinks(fwd, xs, params, G, u, analytic, input_names=keys,
                              agree=lambda a, n: _agrees(a, n, np.array([a]), 1e-5), finer=True) is not None


def _signatures(L: _Layer, res: CheckResult, diag: Diagnosis) -> None:
    """Name the bug of each failing tensor: wrong order, swapped, else :func:`_tensor_signature`."""
    manual, numer = res.gradients.get("manual", {}), res.gradients.get("numerical", {})
    ins = [t for t in (V.grad_name(k) for k in L.names) if t in numer and t in manual]
    if len(ins) > 1 and (f := _order_signature(manual, numer, ins)) is not None:
        return diag.findings.append(f)  # same-shape gradients returned in the wrong order
    swaps = name_swaps(manual, numer, [] if L.returns_weights else list(L.params),  # two grads
                       "the class defines its weights in" if L.returns_weights else "of forward's arguments",
                       L.slots)
    diag.findings += list(swaps.values())[::2]  # one sentence per pair (its findings come in a row)
    named = {f.tensor for f in diag.errors if f.code != "grads-left"} | set(swaps)  # left at dY = 0: not dY's
    failing = [r.tensor for r in res.records if r.kind == "gradient" and not r.passed and r.tensor not in named]
    diag.findings += (nielsen := _nielsen_signature(L, manual, numer, failing))  # Nielsen's backprop (F9, F10)
    named |= {f.tensor for f in nielsen}
    diag.findings += (lstm := _lstm_signature(L, manual, numer, [t for t in failing if t not in named]))
    named |= {f.tensor for f in lstm}
    diag.findings += (rnn := _rnn_signature(L, manual, numer, [t for t in failing if t not in named]))
    named |= {f.tensor for f in rnn}
    for rec in res.records:
        c, t = rec.get("manual-vs-numerical"), rec.tensor
        if (rec.kind == "gradient" and not rec.passed and t not in named and c is not None
                and not c.passed and manual.get(t) is not None and numer.get(t) is not None):
            diag.findings.append(_tensor_signature(L, t, manual[t], numer[t], c, res))
    _forward_factor(L, res, diag)
    if any(f.code == "permuted" and "the blocks are permuted" in f.message or f.code == "branch-upstream-dY"
           for f in diag.errors):  # M4: the cause first, the inputs' gradients it mixes after (a branch given dY:
        diag.findings.sort(key=lambda f: f.code == "wrong-values")  # dX is wrong through the same dH, session 23)
    _one_per_layer_m(L, diag)
    _one_carry(L, diag)
    _one_ignored(diag)
    _one_inside(diag)
    _one_dense_dz(diag)
    _one_step_finding(L, diag, "first-step-missing")
    _one_step_finding(L, diag, "state-carry-incomplete")
    _one_branch(L, diag, manual, numer)
    if not any(f.severity == "error" for f in diag.findings):
        _other_function(L, res, diag)
    diag.findings.sort(key=lambda f: f.code == "grads-left")  # the mismatch's cause first (verify37 F7)
    _name_layer(L, diag)


def _name_layer(L: _Layer, diag: Diagnosis) -> None:
    """The kind of the checked layer (:func:`_layer_kind`) set on the error findings whose lesson it chooses
    (:attr:`Finding.lesson`); the forwards it takes run only for them."""
    found = [f for f in diag.errors if f.code in SIGNATURES and DIAGNOSES[f.code].lesson in _FAMILY_LESSONS]
    if found and (kind := _layer_kind(L)):
        for f in found:
            f.layer = kind
    for f in diag.errors if diag.held else []:  # a random forward held for the check: a dropout's mask (newuser36 L4)
        if f.code == "missing-local-derivative":
            f.layer = "Dropout"


def _layer_kind(L: _Layer) -> str:
    """The kind of layer ``L`` is, a key of :data:`LAYER_LESSONS`, or "" (newuser31 F1, F3).

    ``Conv``: an input ``(N, C, ...)`` of 3 or 4 axes and a weight ``(F, C, ...)`` of as many, the output ``(N, F,
    ...)``. ``Pool``: no weights, an output ``(N, C, ...)`` smaller in space. ``RNN``, ``GRU``, ``LSTM``: a causal
    sequence layer (:func:`_causal`) whose 2-D weights are 1, 3 or 4 gate blocks (:func:`_gate_blocks`).
    ``LayerNorm``, ``BatchNorm``: forward unchanged by a shift and a scale of each sample's features, or of each
    feature over the batch (:func:`_norm_kind`)."""
    X, Y = L.inputs[0], np.asarray(L.Y)
    if (cell := _cell_kind(L)):  # one step: forward(x, h_prev[, c_prev]) (newuser35 L1: an LSTMCell's lesson)
        return cell
    if not isinstance(X, np.ndarray) or X.dtype.kind != "f" or Y.ndim != X.ndim or not X.ndim or Y.shape[0] != X.shape[0]:
        return ""
    arrays = [np.asarray(a) for a in [*L.params.values(), *L.inputs[1:]]]
    if X.ndim in (3, 4) and any(w.ndim == X.ndim and w.shape[1] == X.shape[1] and w.shape[0] == Y.shape[1]
                                for w in arrays):
        return "Conv"
    if X.ndim == 4 and not arrays and Y.shape[:2] == X.shape[:2] and Y.size < X.size:
        return "Pool"
    if _causal(L):
        j = _initial_state(L)
        ws = [w for w in [*L.params.values(), *(a for i, a in enumerate(L.inputs[1:], 1) if i != j)] if np.ndim(w) > 1]
        return {1: "RNN", 3: "GRU", 4: "LSTM"}.get(_gate_blocks(ws, X.shape[2], Y.shape[2]), "")
    return _norm_kind(L) if X.ndim in (2, 3) and Y.shape == X.shape else ""


def _cell_kind(L: _Layer) -> str:
    """``LSTM``, ``GRU`` or ``RNN`` for one step of a recurrent cell (newuser35 L1: an LSTMCell's forget-gate bug read
    lesson 01b): inputs x (N, D) and h_prev (N, H), and for an LSTM c_prev (N, H) too, float; 2-D weights of 4 gate
    blocks with three such inputs, 3 or 1 with two (:func:`_gate_blocks`): the parameters (a class's cell), or the
    inputs after them, CS231n's ``lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b)`` and ``rnn_step_forward(x, prev_h,
    Wx, Wh, b)`` pairs (verify37 F6: the pair's doubled dx was told attention's 1/sqrt(d_k)): exactly an input weight
    ``(D, gH)``, a hidden weight ``(H, gH)`` (either transposed) and one bias of ``gH`` entries; "" otherwise."""
    xs = L.inputs
    if len(xs) < 2 or any(not isinstance(x, np.ndarray) or x.ndim != 2 or x.dtype.kind != "f" for x in xs[:2]):
        return ""
    (N, D), (N2, H) = xs[0].shape, xs[1].shape
    cells = {(3, 4): "LSTM", (2, 3): "GRU", (2, 1): "RNN"}
    if N2 != N:
        return ""
    if len(xs) <= 3:  # a class's cell: its weights are its parameters
        if any(not isinstance(x, np.ndarray) or x.shape != (N, H) for x in xs[2:]):
            return ""
        ws = [w for w in L.params.values() if np.ndim(w) > 1]
        return cells.get((len(xs), _gate_blocks(ws, D, H) if ws else 0), "")
    for (k, g), kind in cells.items():  # a pair: the states, then Wx, Wh and b (CS231n's), or one weight per gate
        rest = [np.shape(w) for w in xs[k:]]
        bias = [s for s in rest if s in ((g * H,), (1, g * H), (H,), (1, H))]
        mats = [np.empty(s) for s in rest if s not in bias]  # (shapes only: _gate_blocks reads no value)
        if (not L.params and all(np.shape(x) == (N, H) for x in xs[2:k]) and mats and _gate_blocks(mats, D, H) == g
                and sum(math.prod(s) for s in bias) == g * H):
            return kind
    return ""


def _gate_blocks(ws: Sequence[np.ndarray], D: int, H: int) -> int:
    """``g`` when the weights ``ws`` are those of a recurrent layer of ``g`` gate blocks: input weights ``(D, kH)``
    or ``(kH, D)`` and hidden weights ``(H, kH)`` or ``(kH, H)`` (one fused matrix, or one per gate), or weights on
    ``[x, h]`` joined, ``(D + H, kH)`` or ``(kH, D + H)`` (one per gate, ``Wf`` ``Wi`` ``Wo`` ``Wg``: fix37h's
    leftover), their blocks ``k`` summing to ``g`` on each side (both sides together when ``D == H``); 0 otherwise
    (attention's four ``(D, D)`` projections: 2)."""
    side = {D: 0, H: 0}
    for w in ws:
        if np.ndim(w) != 2:
            return 0
        a, b = np.shape(w)
        if D + H in (a, b) and (b if a == D + H else a) % H == 0:  # on [x, h]: k blocks on each side
            side[D] += (b if a == D + H else a) // H
            side[H] += (b if a == D + H else a) // H
        elif a in side and b % H == 0:
            side[a] += b // H
        elif b in side and a % H == 0:
            side[b] += a // H
        else:
            return 0
    g = side[D] // 2 if D == H and side[D] % 2 == 0 else side[D] if side[D] == side[H] else 0
    return g


def _norm_kind(L: _Layer) -> str:
    """``LayerNorm`` when forward is unchanged (to 1e-7) by adding a constant to each sample's features (over the
    last axis) and (to 1e-2: eps's share) by multiplying them by one, ``BatchNorm`` when so for each feature over the
    batch (training mode: the batch's statistics), else ""."""
    X, Y = L.inputs[0], np.asarray(L.Y)
    rng = np.random.default_rng(L.seed)
    top = max(float(np.abs(Y).max()), 1e-300)
    for kind, shape in (("LayerNorm", X.shape[:-1] + (1,)), ("BatchNorm", (1,) * (X.ndim - 1) + X.shape[-1:])):
        c, a = rng.standard_normal(shape), rng.uniform(1.5, 2.0, shape)
        with contextlib.suppress(Exception):  # noqa: BLE001 - a forward that cannot run here: no kind told
            if close(L.fwd_with(0, X + c), Y, 1e-7, 1e-9 * top) and close(L.fwd_with(0, X * a), Y, 1e-2, 1e-2 * top):
                return kind
    return ""


def _forward_factor(L: _Layer, res: CheckResult, diag: Diagnosis) -> None:
    """"forward-factor" in place of the findings of the failing gradients (a constant factor, tester20s M2) when
    forward differs from the reference's, every gradient agrees with the reference's, and each failing one is
    one constant ``k`` times central differences of this forward: forward is ``1/k`` times the reference's. In eval
    mode, with ``1/k = 1 - p`` (``L.rate``), the finding names a dropout's eval scaling."""
    recs = [r for r in res.records if r.get("manual-vs-reference") is not None]
    if not any(r.kind == "forward" and not r.get("manual-vs-reference").passed for r in recs):
        return
    grads = [r for r in res.records if r.kind == "gradient"]
    if not grads or any((c := r.get("manual-vs-reference")) is None or not c.passed for r in grads):
        return
    manual, numer = res.gradients.get("manual", {}), res.gradients.get("numerical", {})
    failing = [r.tensor for r in grads if not r.passed and r.tensor in manual and r.tensor in numer]
    ks = []
    for t in failing:
        m, n = np.asarray(manual[t], dtype=np.float64).ravel(), np.asarray(numer[t], dtype=np.float64).ravel()
        k = float(m @ n / (n @ n)) if n @ n > 0 else 0.0
        if k == 0 or not close(m, k * n, rtol=1e-5, atol=1e-9):
            return
        ks.append(k)
    if not ks or not close(ks, np.full(len(ks), ks[0]), 1e-5, 1e-8):
        return
    c, p = 1 / ks[0], getattr(L, "rate", None)
    drop, fix = "", "remove the factor from forward (or build the reference with the layer's settings)"
    if L.eval_mode and p is not None and abs(c - (1 - p)) <= 1e-6:
        drop = (f": in {L.eval_mode} forward multiplies by 1 - p = {c:.6g}, but inverted dropout is the identity in "
                f"eval (its 1/(1 - p) is applied in training), as the reference's is")
        fix = "return X unchanged in eval mode"
    diag.findings = [f for f in diag.findings if f.tensor not in failing or f.severity != "error"]
    many = len(failing) > 1
    diag.findings.append(_find("forward-factor", failing[0], ts=", ".join(failing), s="s" * many,
                               agree="agree" if many else "agrees", c=c,
                               drop=drop, fix=fix))


def _other_function(L: _Layer, res: CheckResult, diag: Diagnosis) -> None:
    """A forward that differs from the twin's or reference's while the layer's own gradients agree
    with the numerical ones: not a gradient bug but two different functions (settings, or the
    forward); a "gradient mismatch (no known bug pattern)" would blame the backward."""
    own = [r.get("manual-vs-numerical") for r in res.records if r.kind == "gradient"]
    if not own or any(c is None or not c.passed for c in own):
        return
    for rec in res.records:
        for pair, other, obj in (("manual-vs-tape", "twin", res.twin),
                                 ("manual-vs-reference", "reference", L.reference)):
            c = rec.get(pair)
            if rec.kind == "forward" and c is not None and not c.passed:
                f = _find("other-function", rec.tensor, other=other, err=c.max_abs_error, params=_params_text(obj))
                ref = getattr(L, "reference_eps", None) if other == "reference" else None
                if isinstance(ref, float) and (mine := _sqrt_eps(getattr(L, "layer", None))) and mine[0] != ref:
                    f = dataclasses.replace(f, message=f.message.rstrip(".") + (
                        f". Forward adds {mine[1]}{f' (= {mine[0]:g})' * (mine[1] != f'{mine[0]:g}')} under its "
                        f"square root, its eps, where the reference's eps is {ref:g} (Deep Learning from Scratch's "
                        f"BatchNormalization adds 10e-7): give the reference the same, --reference-init "
                        f"'{{..., \"eps\": {mine[0]:g}}}'"))
                diag.findings.append(f)
                return


def _sqrt_eps(layer: Any) -> tuple[float, str] | None:
    """``(c, its text)`` of the small constant forward adds under a square root, ``np.sqrt(var + 10e-7)`` (a norm's
    eps written into forward, Deep Learning from Scratch's BatchNormalization), read from the class's file
    (:func:`layer_classes`); None when there is none or several differ."""
    found = set()
    lines, classes = layer_classes(layer) if layer is not None else ([], [])
    for c in classes:
        for fn in (f for f in c.body if isinstance(f, ast.FunctionDef) and f.name in ("forward", "__forward")):
            for n in ast.walk(fn):
                f = n.func if isinstance(n, ast.Call) else None
                if f is None or (f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")) != "sqrt" or not n.args:
                    continue
                a = n.args[0]
                if isinstance(a, ast.BinOp) and isinstance(a.op, ast.Add):
                    for k in (a.left, a.right):
                        if isinstance(k, ast.Constant) and isinstance(k.value, float) and 0 < k.value <= 1e-2:
                            line = lines[k.lineno - 1] if k.lineno <= len(lines) else ""
                            found.add((float(k.value), line[k.col_offset:k.end_col_offset] or ast.unparse(k)))
    return found.pop() if len({v for v, _ in found}) == 1 else None


def _params_text(qualname: Any) -> str:
    """``"negative_slope"``: the constructor arguments of the class named ``qualname``."""
    mod, _, cls = str(qualname or "").rpartition(".")
    try:
        sig = inspect.signature(getattr(importlib.import_module(mod), cls))
        names = [p for p in sig.parameters if p not in ("rng", "name", "dtype")]
    except Exception:  # noqa: BLE001 - a twin given as an object of the caller's
        return "its own settings"
    return ", ".join(names) or "no arguments"


def _flat_forward(L: _Layer, key, m, n) -> dict | None:
    """The fields of ``flat-forward`` when the numerical gradient of a float input is exactly 0 in every entry, ``m``
    is not, a move of the input by 0.5 (one random direction) changes the output and a weight's numerical gradient
    is not 0 (the output is not rounded as a whole: piecewise-constant): a forward piecewise constant in that
    input (``np.round(X) @ W``); else None."""
    if not key.startswith("@") or key[1:] not in L.names or not m.size or np.any(n != 0) or not np.any(m != 0):
        return None
    i = L.names.index(key[1:])
    x = L.inputs[i]
    if x.dtype.kind != "f" or x.shape != m.shape:
        return None
    moved = L.fwd_with(i, x + 0.5 * probe_rng(L.seed).standard_normal(x.shape))
    if _same(moved, L.Y) or not (ws := [k for k, w in L.params.items() if w.dtype.kind == "f" and w.size <= 4096]):
        return None
    # a weight moves the output: it is not rounded to a grid as a whole (piecewise-constant, the structural probe's)
    return {"x": key[1:]} if np.mean(L.numer(ws[:1])[ws[0]] != 0) > 0.5 else None  # most entries, not a flip


def _sqrt_d(L: _Layer, m, n) -> dict | None:
    """The fields of ``factor-sqrt-d`` when ``m`` is ``N`` or ``1/N`` times ``n`` for the batch size ``N`` and
    ``N * N`` is the last axis ``d`` of a float input of two axes or more: a missing or extra 1/sqrt(d) (attention's
    1/sqrt(d_k)) fits as well as a 1/batch, which one run cannot tell apart; else None, and None for a layer
    recognised as another kind than attention (:func:`_not_attention`)."""
    N, ok = L.n_batch, np.isfinite(n)
    x = next((nm for nm, x in zip(L.names, L.inputs) if x.ndim >= 2 and x.dtype.kind == "f"
              and x.shape[-1] == N * N), None)
    if N < 2 or x is None or not np.any(n[ok]):
        return None
    c = _ls_factor(m[ok], n[ok])
    big = abs(c / N - 1) < 1e-6
    if not big and abs(c * N - 1) >= 1e-6 or _not_attention(L):
        return None
    return {"count": N, "big": "large" if big else "small", "d": N * N, "x": x,
            "what": "a 1/sqrt(d) factor is missing" if big else "an extra 1/sqrt(d) factor",
            "alt": "a missing 1/batch (a sum where a mean is due)" if big else "an extra 1/batch",
            "fix": "scale it by 1/sqrt(d) as the forward does" if big else "divide by sqrt(d) once, as the forward does"}


def _sqrt_dk(L: _Layer, m, n) -> dict | None:
    """The fields of ``factor-sqrt-dk`` when ``m`` is ``sqrt(d)`` or ``1/sqrt(d)`` times ``n`` for the last axis ``d >
    1`` that two float inputs of two axes or more share (attention's Q and K, whose scores' 1/sqrt(d_k) backward
    misses or applies twice; newuser22, lesson 33); else None, and None for a layer recognised as another kind than
    attention (:func:`_not_attention`)."""
    ok = np.isfinite(n)
    nn = float(np.sum(n[ok] * n[ok]))
    if not nn:
        return None
    c = float(np.sum(m[ok] * n[ok])) / nn
    last = [x.shape[-1] if x.ndim >= 2 and x.dtype.kind == "f" else 0 for x in L.inputs]
    for name, d in zip(L.names, last):
        d = d if last.count(d) >= 2 else 0  # scores of two inputs over one axis d (Q K^T): a factor 2 is no sqrt(4)
        for k, what, how, which, fix in (
                (np.sqrt(d), f"sqrt({d})", f"a factor 1/sqrt({d}) is missing", "misses the 1/sqrt(d_k)",
                 "multiply the scores' gradient by 1/sqrt(d_k), as forward multiplies the scores, before Q's and K's "
                 "gradients are taken from it"),
                (1 / np.sqrt(d) if d else 0, f"1/sqrt({d})", f"a factor 1/sqrt({d}) too many",
                 "applies the 1/sqrt(d_k) twice", "apply 1/sqrt(d_k) once, as forward does")):
            if d > 1 and abs(c - k) <= 1e-6 * abs(k):
                return None if _not_attention(L) else {"c": c, "what": what, "d": d, "x": name, "how": how,
                                                       "which": which, "fix": fix}
    return None


def _not_attention(L: _Layer) -> bool:
    """Whether the checked layer is recognised as a kind that is not attention (:func:`_layer_kind`: a convolution, a
    pooling, a recurrent step or sequence, a norm), so that a factor its gradient is off by is not told as attention's
    1/sqrt(d_k) (verify36 F8: an LSTM step's doubled dx, at a batch of 2 beside h of 4 units, was)."""
    return bool(_layer_kind(L))


def _per_layer_m(L: _Layer, m, n) -> dict | None:
    """The fields of ``factor-inverse-batch-m`` when ``m`` is ``n / M`` for the batch size ``M`` on axis 1 of
    the layer's 2-D first input in Andrew Ng's layout (``A (in, M)``, ``Y (out, M)``, a weight ``(out, in)``),
    ``M`` not the axis-0 size the other signatures count; else None."""
    x, y = L.inputs[0], L.Y
    if np.ndim(x) != 2 or np.ndim(y) != 2 or x.shape[1] != y.shape[1] or x.shape[1] in (x.shape[0], 1):
        return None
    weights = [*L.inputs[1:], *L.params.values()]
    if not any(np.shape(w) == (y.shape[0], x.shape[0]) for w in weights):
        return None
    ok = np.isfinite(n)
    c = _ls_factor(m[ok], n[ok]) if np.any(n[ok] != 0) else 0.0
    if abs(c * x.shape[1] - 1) > 1e-6 or not close(m[ok], c * n[ok], 1e-5, 1e-9):
        return None
    return {"count": x.shape[1], "x": L.names[0], "shape": V.fmt_shape(x.shape), "be": "is",
            "undo": "a version whose backward multiplies by m"}


def _batch_input(L: _Layer, key: str) -> bool:
    """Whether ``key`` (``"@A"``) is an input that holds samples in Andrew Ng's layout: 2-D with the batch size
    ``M`` of the first input on axis 1 (``A_prev (in, M)``; a weight ``(out, in)`` or a bias ``(out, 1)`` is not,
    :func:`_per_layer_m` having ruled out ``M`` in ``(in, 1)``). Its gradient carries no 1/m in Ng's convention:
    only the parameters' gradients do (tester33 F1)."""
    if not key.startswith("@") or key[1:] not in L.names:
        return False
    x, a = L.inputs[0], L.inputs[L.names.index(key[1:])]
    return np.ndim(x) == 2 and np.ndim(a) == 2 and a.shape[1] == x.shape[1]


def _ng_per_layer_m(L: _Layer, t: str, key: str, g: dict) -> Finding:
    """Tensor ``t`` (key ``key``) ``m`` times too small, ``g`` :func:`_per_layer_m`'s fields: Andrew Ng's 1/m in
    a parameter's gradient (``factor-inverse-batch-m``, a convention), or in the gradient of an input that holds
    samples (:func:`_batch_input`; ``input-batch-m``, a bug in any convention: tester33 F1)."""
    if not _batch_input(L, key):
        return _find("factor-inverse-batch-m", t, **g)
    eg = f"{t} = np.dot(W.T, dZ), no / m" if "function pair (" in L.protocol else f"{t} = self.W.T @ dY, no / m"
    return _find("input-batch-m", t, eg=eg, **{k: v for k, v in g.items() if k not in ("be", "undo")})


_NG_OVER_M = {"dW": "dW = np.dot(dZ, A_prev.T) / m", "db": "db = np.sum(dZ, axis=1, keepdims=True) / m"}


def _outputs_data(layer) -> Mapping | None:
    """The outputs of a layer of k outputs (a sandboxed layer's from its protocol, a local one's from its
    :class:`gradcheck._adapters.Outputs`), as :meth:`~gradcheck._adapters.Outputs.data`; None for one output."""
    from ._adapters import outputs_of

    layer = layer._layer if isinstance(layer, Wrapper) else layer
    if (proto := _protocol(layer)) is not None:
        got = proto.get("outputs")
    else:
        got = None if (outs := outputs_of(layer)) is None else outs.data()
    if not isinstance(got, (list, tuple)) or len(got) < 3 or got[0] not in ("stacked", "flat"):
        return None
    try:  # "name|grad|4,3" per output, as Outputs.data writes them
        rows = [str(r).split("|") for r in got[1:]]
        return {"stacked": got[0] == "stacked", "names": [r[0] for r in rows], "grads": [r[1] for r in rows],
                "shapes": [tuple(int(n) for n in r[2].split(",") if n) for r in rows]}
    except (IndexError, ValueError):
        return None


def _ignored_output(L: _Layer, t, key, m, n):

    """A backward of k upstream gradients that ignores one: ``m`` is the numerical gradient of ``key`` with that
    output's part of the joined upstream gradient set to zero (and ``n`` is not)."""
    o = L.outputs
    if not o or L.G is None or L.G.shape != L.Y.shape or len(o.get("names", ())) < 2:
        return None
    k, ok = len(o["names"]), np.isfinite(n)
    sizes = [int(np.prod(s, dtype=np.int64)) for s in o["shapes"]]
    ends = np.cumsum(sizes)
    for j in range(k):
        G = np.array(L.G, dtype=np.float64, copy=True)
        if o["stacked"]:
            G[j] = 0.0
        else:
            G[ends[j] - sizes[j]:ends[j]] = 0.0
        nj = L.numer([key], G=G)[key]
        if nj.shape == m.shape and close(m[ok], nj[ok], 1e-5) and not close(n[ok], nj[ok], 1e-5):
            return "ignored-output", {"g": o["grads"][j], "name": o["names"][j], "j": j, "k": k, "be": "is",
                                      "lack": "lacks", "them": "it"}
    return None


def _one_ignored(diag: Diagnosis) -> None:
    """The ``ignored-output`` findings of one output's upstream gradient as one sentence naming every tensor
    it is missing from (``dX, dW are the gradients with dz set to zero``), not one each."""
    found = _of_code(diag, "ignored-output")
    if len(found) < 2 or len({f.message.split(" set to zero")[0].split(" with ")[-1] for f in found}) != 1:
        return
    first, tensors = found[0], ", ".join(f.tensor for f in found)
    _as_one(diag, found, Finding("ignored-output", first.message.replace(
        f"{first.tensor} is the gradient", f"{tensors} are the gradients", 1).replace(
        f"so {first.tensor} lacks", f"so {tensors} lack", 1).replace("reaches it through", "reaches them through", 1),
        first.tensor, first.severity))


def _protocol_text(layer) -> str:
    """The adapted layer's protocol text (a function pair's names its functions), or ""."""
    return str((_protocol(layer) or {}).get("text", ""))


def _undo_m(L: _Layer, diag: Diagnosis, tensors: list[str]) -> str:
    """How to check an Andrew Ng layer without its 1/m (tester16 M3), in the student's own names: for a function
    pair (``L.protocol`` names it), a pair of the same functions whose backward multiplies by m; for a class, a
    subclass whose backward does."""
    import re
    hit = re.search(r"function pair \((\w+)/(\w+)\)", L.protocol)
    if hit is None:
        name = diag.name.split("[")[0].strip() or "Layer"
        if "updates the weights itself" in L.protocol:  # its step carries the 1/m too (corpus35 F2)
            return (f"a subclass whose backward steps at a rate m times larger, e.g. class {name}M({name}): "
                    "def backward(self, dY, lr): return super().backward(dY, lr * dY.shape[1]) (a gradient backward "
                    f"also stores, as gradients['dW'], multiplied by m too; check {name}M)")
        return (f"a subclass whose backward undoes it, e.g. class {name}M({name}): def backward(self, dY, *args): "
                "dX = super().backward(dY, *args); m = dY.shape[1]; then multiply "
                f"{' and '.join(tensors)} by m; return dX (and check {name}M)")
    fwd, bwd = hit.groups()
    stem = fwd[:-len("_forward")] if fwd.endswith("_forward") else fwd
    kw = (m.group(1).split(", ") if (m := re.search(r"--init ([\w, ]+) passed to", L.protocol)) else [])
    args = ", ".join(["dout", "cache", *kw])  # backward's required arguments (activation), passed on
    grads = ", ".join(f"d{k}" for k in L.names)
    times = ", ".join(f"m * d{k}" if f"d{k}" in tensors else f"d{k}" for k in L.names)
    return (f"a pair whose backward undoes it, in the same file: {stem}_m_forward = {fwd}; "
            f"def {stem}_m_backward({args}): {grads} = {bwd}({args}); m = dout.shape[1]; "
            f"return {times}; and check ::{stem}_m")


def _one_per_layer_m(L: _Layer, diag: Diagnosis) -> None:
    """The ``factor-inverse-batch-m`` findings of all tensors (Ng's dW and db) as one, said once, with the
    layer's name in its example."""
    found = _of_code(diag, "factor-inverse-batch-m")
    if not found:
        return
    x, ts = L.inputs[0], [f.tensor for f in found]
    flipped = [f.tensor for f in _of_code(diag, "transposed-m")]  # divided by m too: the adapter multiplies it
    res = diag.result
    others = [] if res is None else [r.tensor for r in res.records if r.kind == "gradient" and r.passed
                                      and (V.grad_key(r.tensor) in L.params or V.grad_key(r.tensor) in L.names[1:]
                                           and not _batch_input(L, "@" + V.grad_key(r.tensor)))]
    fields = {"count": x.shape[1], "x": L.names[0], "shape": V.fmt_shape(x.shape), "be": "are" if len(ts) > 1 else "is"}
    if others:  # tester16 M4: dW with 1/m, db without: a bug in any convention
        eg = "; ".join(_NG_OVER_M.get(o, f"{o} = (its formula) / m") for o in others)  # tester33 F6: dW's own
        merged = _find("mixed-batch-m", " and ".join(ts), others=" and ".join(others), eg=eg,
                       have="have" if len(others) > 1 else "has", **fields)
    else:
        merged = _find("factor-inverse-batch-m", " and ".join(ts), undo=_undo_m(L, diag, ts + flipped), **fields)
    merged.tensor = found[0].tensor
    _as_one(diag, found, merged)



def _tensor_signature(L: _Layer, t, m, n, c, res: CheckResult) -> Finding:
    """The finding of one failing tensor ``t`` (``m`` the student's, ``n`` the numerical gradient,
    ``c`` its comparison): the first signature that matches, else the worst element."""
    key = "@" + V.grad_key(t) if V.grad_key(t) in L.names else V.grad_key(t)
    n = np.where(np.isfinite(n), n, np.nan)
    part = None  # a sampled check of a large tensor: its entries alone (newuser23 M1: three more whole scans)
    if np.isnan(n).sum() > len(c.kinks) and n.size > FAST_SAMPLE_ABOVE:
        part = {key: [tuple(int(i) for i in ix) for ix in np.argwhere(np.isfinite(n))]}
    elif np.isnan(n).sum() > len(c.kinks):  # a sampled check: the signatures need the whole tensor
        full, known = L.numer([key])[key], np.isfinite(n)
        n = np.where(known, n, full) if close(full[known], n[known]) else n  # the check's dY
    for k in c.kinks:  # no derivative at a kink: left out of every signature
        n[k] = np.nan
    noise = within_noise(m, n, lambda e: L.numer([key], eps=e, method=res.method,
                                                 **({"indices": part} if part else {}))[key],
                         res.eps, res.rtol, res.atol_of(t),
                         some=lambda e, idx: L.numer([key], eps=e, method=res.method, indices={key: idx})[key])
    if noise is not None and res.method != "complex" and res.eps > LARGE_STEP * default_eps(res.method):
        return _find("large-step", t, err=noise[0], unc=noise[1], method=res.method, eps=res.eps,  # fixn22 #3
                     ratio=res.eps / default_eps(res.method), default=default_eps(res.method))
    if noise is not None:  # a mismatch the numerical gradient cannot resolve: no bug is named
        return _find("numerical-noise", t, err=noise[0], unc=noise[1], remedy="" if res.method == "richardson" else
                     "--method richardson (method='richardson' in Python: a larger step, O(h^4) truncation), or ")
    found = layer_signature(L, t, m, n, res.rtol, res.atol_of(t), part=part)
    own = getattr(next((r for r in res.records if r.tensor == t), None), "entry_atol", None)
    return found if own is None or found.code != "wrong-values" else _worst_element(t, m, n, res.rtol, own)


def _zero_why(L: _Layer, t: str, key: str, n: Any) -> Finding | None:
    """An all-zero gradient ``t``'s finding told more closely than "backward never computes it", or None: stored
    under a near name (:func:`_misspelt_slot`), or a batch of one (a loop over ``range(N - 1)``)."""
    if (why := _misspelt_slot(L, key, n)) is not None:
        return _find("zero", t, what=" is", why=why)  # newuser42 F4: the gradient stored as self.dw, read as self.dW
    if L.n_batch == 1:
        what = "[0], the gradient of sample 0 (the batch's only sample), is" if key.startswith("@") else " is"
        return _find("zero", t, what=what, why="with a batch of one, a loop over the samples that "
                     "misses one (range(N - 1), which runs no iteration when N = 1) leaves it zero, "
                     f"and so does a backward that never computes {t}; loop over range(N), and check "
                     "with a batch of at least 2")
    return None


def _misspelt_slot(L: _Layer, key: str, n: Any) -> str | None:
    """Why an attribute-style layer's parameter gradient is all zeros when backward stored that gradient under
    another, near name (newuser42 F4: ``self.dw = X.T @ dY`` beside ``__init__``'s ``self.dW = zeros``, diagnosed
    "backward never computes dW"): a public attribute of the layer (:func:`gradcheck._adapters.state_values`, in the
    sandbox's child for a sandboxed layer) whose name is the slot's but for case and underscores (or within one letter
    of it, :func:`difflib.get_close_matches` at 0.8), a nonzero array of the gradient's shape, said equal to the
    numerical gradient ``n`` where it is by the one rule. None otherwise."""
    import difflib

    slot = L.slots.get(key, "")
    try:
        attrs = adapter_call(L.layer, "state_values") if slot.startswith("self.") and L.layer is not None else None
    except Exception:  # noqa: BLE001 - attributes that cannot be read: no claim
        attrs = None
    if not isinstance(attrs, dict):
        return None
    name, shape = slot[len("self."):], np.shape(n)

    def folded(a: str) -> str:
        return a.lower().replace("_", "")

    near = [a for a, v in attrs.items() if a != name and isinstance(v, np.ndarray) and v.shape == shape
            and np.any(v != 0)
            and (folded(a) == folded(name) or difflib.get_close_matches(folded(a), [folded(name)], 1, 0.8))]
    if not near:
        return None
    ok = np.isfinite(np.asarray(n, dtype=np.float64))
    same = [a for a in near if close(np.where(ok, attrs[a], 0), np.where(ok, n, 0), 1e-6, ATOL_FLOOR)]
    a = (same or near)[0]
    held = f"equal to {key}'s gradient by central differences" if same else f"an array of {slot}'s shape"
    return (f"backward stores self.{a} ({held}), while {slot}, which is read as {key}'s gradient, stays as it was "
            f"(zeros from __init__?): a misspelt name? Store the gradient in {slot}")


def layer_signature(L: _Layer, t: str, m: Any, n: Any, rtol: float, atol: float, *, part: Mapping | None = None,
                    alternatives: Mapping[str, Any] | None = None, spent: Callable[[], bool] | None = None) -> Finding:
    """One wrong gradient ``t``'s finding: :func:`name_signature`, refined, then :data:`_DETECTORS`, else the worst
    element; one path for ``gradcheck check`` (:func:`_tensor_signature`) and the grader (:func:`name_graded`).

    Parameters
    ----------
    L : _Layer
        The layer: inputs, parameters, output ``Y``, upstream gradient ``G``, forward.
    t : str
        The tensor's display name (``"dX"``).
    m, n : ndarray
        The gradient under suspicion and the correct one, of one shape (NaN in ``n``: a kink, left out).
    rtol, atol : float
        The comparison's tolerances (the worst element is told with them; ``atol`` below
        :data:`gradcheck.compare.ATOL_FLOOR` rescales both tensors to order 1 for the signatures).
    part : mapping, optional
        A large tensor's sampled entries (``{key: [index, ...]}``): no detector differences it whole again.
    alternatives : mapping of str -> ndarray, optional
        Known wrong answers and their sentences (:func:`name_signature`).
    spent : callable, optional
        Once ``spent()`` (the grader's budget of forwards, :func:`name_graded`), no further detector starts.

    Returns
    -------
    Finding
        Never None: ``"wrong-values"`` (the worst element) when no signature matches.
    """
    key = "@" + V.grad_key(t) if V.grad_key(t) in L.names else V.grad_key(t)
    m0, n0, own = m, n, atol
    # compared at its own scale (every entry below the floor): the signatures' tolerances are for
    if 0 < own < ATOL_FLOOR:  # gradients of order 1
        m, n = m / (own / ATOL_FLOOR), n / (own / ATOL_FLOOR)
    other_input = key[1:] in L.names and key != L.keys[0]
    p = L.params.get(key, L.inputs[L.names.index(key[1:])] if other_input else None)
    hint = (_INPUT_SWAP if not L.params else _WEIGHTED_INPUT_SWAP).format(t=t) if p is None and key.startswith(
        "@") else None if p is None else _layout_hint(key.lstrip("@"), L.inputs[0], L.G, n)  # no dW advice
    if L.outputs and (f := _first_found([_ignored_output], L, t, key, m0, n0)) is not None:
        return _find(f[0], t, **f[1])  # several outputs: one whose upstream gradient backward ignores
    if (g := _flat_forward(L, key, m0, n0)) is not None:
        return _find("flat-forward", t, **g)  # tester19s IntInput: np.round(X) @ W, backward dY @ W.T
    f = name_signature(t, m, n, is_bias=is_bias_gradient(t, None if p is None else p.shape, key in L.params or other_input),
                       n_batch=L.n_batch, y_size=L.Y.size, hint=hint, alternatives=alternatives,
                       dy=float(L.G.ravel()[0]) if L.G.size == 1 else 1.0)
    told = _batch_unproven(L, key, m, n) if f is not None and f.code in ("factor-batch", "factor-inverse-batch") \
        else None  # {}: the factor follows the batch (a 1/batch proven); None: not told
    if told:
        f = _find("factor", t, **told)  # tester21s M2: SquaredReLU's missing 2 at a batch of 2 was "an extra 1/batch"
    if f is not None and f.code == "zero":
        f = _zero_why(L, t, key, n0) or f
    if f is not None and f.code == "factor" and (g := _time_or_area(L, key, m, n, n0)) is not None:
        f = _find(g[0], t, **g[1])  # tester18s L5: temporal_affine's db / T, average pooling's 1/area missing
    if f is not None and f.code in ("factor-batch", "factor-inverse-batch") and (g := _sqrt_d(L, m, n)) \
            and not (key.startswith("@") and _factor_moves(L, key, m, n)):  # posaddmean: dP's 1/batch, told
        f = _find("factor-sqrt-d", t, **g)  # tester19s: attention's 1/sqrt(d_k) = 1/2 at a batch of 2
    if f is not None and f.code == "factor" and (g := _factor_attribute(L, m, n)) is not None:
        f = _find(g.pop("code"), t, **g)  # tester20s M10: softmax(x / T) whose backward misses 1/T
    if f is not None and f.code == "factor" and (g := _sqrt_dk(L, m, n)) is not None:
        f = _find("factor-sqrt-dk", t, **g)  # newuser22: lesson 33's attention_bug.py was "a constant factor"
    if f is not None and f.code in ("factor", "factor-inverse-batch") and (g := _per_layer_m(L, m, n)):
        f = _ng_per_layer_m(L, t, key, g)  # Andrew Ng's 1/m in each layer's backward (not in dA_prev: tester33 F1)
    if f is None and np.ndim(m) == 2 and m.shape[0] == m.shape[1] and key in L.params | {
            "@" + k: 0 for k in L.names[1:]} and (g := _per_layer_m(L, m.T, n)):
        f = _find("transposed-m", t, **g)  # tester24s gb02: Ng's dW / m, transposed as well
    if f is not None and f.code in ("factor", "factor-inverse-batch", "factor-batch") and key == L.keys[0] \
            and (g := _mask_scale(L, m)) is not None:  # the mask's scale before a coincidental N (tester18s M3)
        pair = "function pair (" in L.protocol  # no self: the mask comes back in the cache (tester17 9)
        eg = f"{t} = dout * mask, the mask from the cache" if pair else f"{t} = dY * self.mask"
        f = _find("mask-scale", t, x=L.names[0], eg=eg, **g)  # a constant factor that is a dropout's 1/(1-p)
    if f is not None and f.code == "permuted" and key.startswith("@") and (g := _window_signature(L, key, m0)):
        f = _find(g[0], t, **g[1])  # non-overlapping windows: an argmin's routing is a permutation of argmax's
    if f is not None and f.code == "factor" and (g := _size_factor(L, key, m, n)) is not None:
        f = _find(g[0], t, **g[1])  # outside44: a global average pool's 1/(H*W), an upsampling's sum, sqrt(d_model),
        # after every reading of a named factor (Andrew Ng's 1/m of tester33 was read as a count of axis 1)
    if f is not None:
        return f
    if part is None and (found := _first_found(_DETECTORS, L, t, key, m, n, spent=spent)) is not None:  # they
        return _find(found[0], t, **found[1])  # difference the whole tensor again, at other inputs: not a sampled one
    return _worst_element(t, m0, n0, rtol, own)


def name_graded(layer: Any, inputs: Sequence[np.ndarray], tensor: str, got: Any, expected: Any, *, G: np.ndarray,
                training: bool = False, rtol: float = 1e-6, atol: float = ATOL_FLOOR,
                alternatives: Mapping[str, Any] | None = None, forwards: int | None = None,
                names: Sequence[str] | None = None, before_forward: Callable[[], None] | None = None) -> Finding:
    """The grader's finding for a wrong gradient ``tensor`` of ``layer``: check's own (:func:`layer_signature`).

    Parameters
    ----------
    layer : object
        The graded layer (a :class:`~gradcheck.sandbox.RemoteLayer` or a local one) at the graded parameters.
    inputs : sequence of ndarray
        The graded inputs (copied: the signatures run forward on them again).
    tensor : str
        The part's name (``"dX"``, ``"dW"``).
    got, expected : array_like
        The student's gradient and the reference's, of one shape.
    G : ndarray
        The upstream gradient the grader gave backward (of the output's shape).
    training : bool, default False
        The graded mode.
    rtol, atol : float
        The grader's tolerances, for the worst element's sentence.
    alternatives : mapping of str -> ndarray, optional
        The grader's known wrong answers and their sentences.
    forwards : int, optional
        The budget, in forwards of the layer: no layer-aware signature (:data:`_DETECTORS`, which difference the
        layer again) is started once that many have run; the finding is then the numbers' (None: no budget, as
        ``gradcheck check``). A count, not seconds, so that the sentence a student gets does not depend on the
        grading machine's load.
    names : sequence of str, optional
        The inputs' names the parts are named after (the reference's: ``tensor`` ``"db"`` is input ``"b"``);
        default the layer's own forward arguments.
    before_forward : callable, optional
        Called before each forward the signatures run (the grader's clock,
        :class:`gradcheck.grading.diagnosis.DiagnosisClock`); a ``TimeoutError`` it raises stops them: no further
        signature starts and the finding is the numbers'.

    Returns
    -------
    Finding
        The named bug; where the numbers name none, ``"reused-sublayer"`` when forward uses one sub-layer object twice
        (:func:`reused_finding`, as check's diagnosis says), else ``"wrong-values"`` (the worst element).

    Raises
    ------
    GradcheckError
        The student's forward failed when run again.
    """
    m, n = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    xs = [np.array(x, copy=True) for x in inputs]
    L = _Layer(layer, xs, list(names or V.input_names(layer, len(xs))), V.layer_params(layer, type(layer).__name__),
               training, G=np.asarray(G, dtype=np.float64))
    _read_layer(L, layer, training, None)
    calls, fwd, stopped = [0], L.fwd, [False]

    def counted(*x):
        if before_forward is not None and not stopped[0]:
            try:
                before_forward()
            except TimeoutError:
                stopped[0] = True
        if stopped[0]:  # every further probe of the detector running now fails (named nothing), none starts
            raise TimeoutError("the diagnosis's time ran out")
        calls[0] += 1
        return fwd(*x)

    L.fwd = counted
    spent = None if forwards is None and before_forward is None else (
        lambda: stopped[0] or forwards is not None and calls[0] >= forwards)
    found = layer_signature(L, tensor, m, np.where(np.isfinite(n), n, np.nan), rtol, atol, alternatives=alternatives,
                            spent=spent)  # no bug pattern in the numbers: one sub-layer used twice, as check names it
    return found if found.code != "wrong-values" else reused_finding(layer, _class_name(layer)) or found


#: The layer-aware signatures :func:`_tensor_signature` tries in order after :func:`name_signature`, one row each:
#: ``detect(L, t, key, m, n)`` -> ``(code, fields)`` or None. The padding cropped at one end (from the numbers
#: alone) first; tester17's common bugs (max pooling's windows, two outputs' dY swapped, tanh's square inside an
#: RNN step) last.
_DETECTORS = (
    lambda L, t, key, m, n: _pad_crop_signature(L, key, m, n),
    lambda L, t, key, m, n: _bias_axis_signature(L, key, m, n),
    _context_signature,
    lambda L, t, key, m, n: _product_rule(L, key, m, n),
    lambda L, t, key, m, n: _carry_signature(L, key, m, n),
    lambda L, t, key, m, n: _steps_not_summed(L, key, m, n),
    lambda L, t, key, m, n: _first_step_signature(L, key, m, n),
    lambda L, t, key, m, n: _state_carry_signature(L, key, m, n),
    lambda L, t, key, m, n: _last_step_signature(L, key, m),
    # before the sample's and the position's: with 1-D ids (or (N, 1), (1, T)) the row an index repeats in keeps one
    # sample's or one position's update alone, which those name as a loop's bug (newuser29 M2)
    lambda L, t, key, m, n: _repeated_index_signature(L, key, m, n),
    lambda L, t, key, m, n: _one_entry_signature(L, key, m),  # before "the first sample only" (corpus36 F5)
    lambda L, t, key, m, n: _sample_signature(t, m, L.G, lambda Gx: L.numer([key], G=Gx)[key], L.n_batch,
                                              key.startswith("@")),
    lambda L, t, key, m, n: _kernel_flip_signature(L, key, m),
    lambda L, t, key, m, n: _position_signature(L, key, m, n),
    lambda L, t, key, m, n: _block_signature(L, key, m, n),  # before the loop's overwrite: the first row's dW alone
    lambda L, t, key, m, n: _upstream_signature(L, key, m),
    lambda L, t, key, m, n: _overwrite_signature(L, key, m),
    lambda L, t, key, m, n: _loop_overwrite_signature(L, key, m),
    lambda L, t, key, m, n: _window_signature(L, key, m),
    lambda L, t, key, m, n: _pool_stride_signature(L, key, m, n),
    lambda L, t, key, m, n: _pool_unravel_signature(L, key, m, n),  # bugs43 M1: unravel_index(k, (pw, ph))
    lambda L, t, key, m, n: _swapped_upstream_signature(L, key, m),
    lambda L, t, key, m, n: _inside_derivative_signature(L, key, m),
    lambda L, t, key, m, n: _tanh_preactivation_signature(L, key, m, n),
    lambda L, t, key, m, n: _norm_axis_signature(L, key, m, n),
    lambda L, t, key, m, n: _rms_signature(L, key, m, n),
    lambda L, t, key, m, n: _scale_of_input_signature(L, key, m, n),  # bugs43 M1: dgamma from x, not x_hat
    lambda L, t, key, m, n: _skip_signature(L, key, m, n),
    lambda L, t, key, m, n: _gate_signature(L, key, m, n),
    lambda L, t, key, m, n: _conv_transpose_stride_signature(L, key, m, n),
    lambda L, t, key, m, n: _conv_stride_signature(L, key, m, n),  # newuser35 L1
    lambda L, t, key, m, n: _next_h_signature(L, key, m, n),
    lambda L, t, key, m, n: _attention_softmax_signature(L, key, m, n),
    lambda L, t, key, m, n: _attention_mask_signature(L, key, m, n),  # bugs43 M1: a causal mask's two slips
    lambda L, t, key, m, n: _attention_value_signature(L, key, m, n),
    lambda L, t, key, m, n: _tied_signature(L, key, m, n),
    lambda L, t, key, m, n: _head_merge_signature(L, key, m, n),
    lambda L, t, key, m, n: _attention_use_signature(L, key, m, n),
    lambda L, t, key, m, n: _weight_derivative_signature(L, key, m, n, t),
    lambda L, t, key, m, n: _branch_signature(L, key, m, n),
    lambda L, t, key, m, n: _mode_ignored_signature(L, key, m, n))


def _axes_text(axes: Sequence[int]) -> str:
    """``"axis=0"`` or ``"axis=(0, 2, 3)"``."""
    return f"axis={axes[0]}" if len(axes) == 1 else f"axis={tuple(axes)}"


def _bias_axis_signature(L: _Layer, key, m, n):
    """A weight's 1-D gradient summed over the wrong axes of dY (tester20s M6: a Linear's ``db = dY.sum(axis=1)``
    with as many samples as outputs, named a permuted upstream gradient before): ``m`` is dY summed over every axis
    but one of its size, ``n`` over every axis but another (the bias's own). A bias of shape (out, 1) (CMU
    MyTorch's) is read as its one axis (tester26s: its db = dY.sum(axis=1, keepdims=True) got a conv's advice)."""
    G = L.G
    if m.ndim != 1 and m.shape == n.shape and sum(k != 1 for k in m.shape) == 1:
        m, n = m.reshape(-1), n.reshape(-1)
    if key.startswith("@") or m.ndim != 1 or G.ndim < 2 or not np.isfinite(n).all():
        return None
    sums = {k: G.sum(axis=tuple(a for a in range(G.ndim) if a != k)) for k in range(G.ndim) if G.shape[k] == m.size}
    right = next((k for k, v in sums.items() if close(n, v)), None)
    whole = np.full(m.shape, G.sum())
    if right is not None and m.size > 1 and close(m, whole) and not close(n, whole):  # db = np.full(.., dY.sum())
        return "bias-sum-all", {"v": float(G.sum()), "due": _axes_text([a for a in range(G.ndim) if a != right]),
                                "own": right}
    wrong = next((k for k, v in sums.items() if k != right and close(m, v) and not close(n, v)), None)
    if right is None or wrong is None:
        return None
    return "bias-wrong-axis", {"got": _axes_text([a for a in range(G.ndim) if a != wrong]),
                               "due": _axes_text([a for a in range(G.ndim) if a != right]), "keep": wrong,
                               "own": right}


def _attention_softmax_signature(L: _Layer, key, m, n):
    """Scaled dot-product attention ``softmax(Q K^T s) V`` (the inputs in that order, ``s`` 1/sqrt(d) or 1: forward's
    output is recomputed from them, so the softmax's weights P are the layer's own) whose backward keeps the softmax
    Jacobian's diagonal alone, ``dS = P * (1 - P) * dP``: ``m`` is dQ (or dK) through that dS and ``n`` through the
    full ``P * (dP - (dP * P).sum(-1))``."""
    if len(L.inputs) != 3 or not key.startswith("@") or key[1:] not in L.names[:2]:
        return None
    Q, K, V = L.inputs
    if not all(a.dtype.kind == "f" and a.ndim >= 2 for a in (Q, K, V)) or Q.shape[-1] != K.shape[-1] \
            or K.shape[-2] != V.shape[-2]:
        return None
    for s, scale, fix in ((1 / np.sqrt(Q.shape[-1]), f" / sqrt({Q.shape[-1]})", f" / np.sqrt({Q.shape[-1]})"),
                          (1.0, "", "")):
        P = softmax(Q @ K.swapaxes(-1, -2) * s)
        if (P @ V).shape != L.Y.shape or not close(P @ V, L.Y, 1e-8):
            continue
        dP = L.G @ V.swapaxes(-1, -2)
        right, diag = P * (dP - (dP * P).sum(axis=-1, keepdims=True)) * s, P * (1 - P) * dP * s
        back = (lambda d: d @ K) if key[1:] == L.names[0] else (lambda d: d.swapaxes(-1, -2) @ Q)
        if close(n, back(right), 1e-5) and close(m, back(diag), 1e-5) and not close(m, n, 1e-5):
            return "attention-softmax-diagonal", {"scale": scale, "scale_fix": fix and f" * (1{fix})"}
    return None


def _attention_mask_signature(L: _Layer, key, m, n):
    """Masked scaled dot-product attention (the inputs Q, K, V in that order, ``s`` 1/sqrt(d) or 1, a causal mask
    aligned at the first or the last key; bugs43 M1, lynx-cortex's masking page): forward's output recomputed as
    ``(softmax(Q K^T s) * mask) V``, the mask applied after the softmax (``attention-mask-after``, where the masked
    softmax's output differs); or as the masked softmax's, and ``m``, dQ or dK, through the softmax Jacobian of the
    unmasked softmax while ``n`` is through the masked one's (``attention-backward-unmasked``)."""
    if len(L.inputs) != 3 or not key.startswith("@") or key[1:] not in L.names[:2] or close(m, n, 1e-5):
        return None
    Q, K, V = L.inputs
    if not all(a.dtype.kind == "f" and a.ndim >= 2 for a in (Q, K, V)) or Q.shape[-1] != K.shape[-1] \
            or K.shape[-2] != V.shape[-2] or min(Q.shape[-2], K.shape[-2]) < 2:
        return None
    T, S = Q.shape[-2], K.shape[-2]
    back = (lambda d: d @ K) if key[1:] == L.names[0] else (lambda d: d.swapaxes(-1, -2) @ Q)
    dP = L.G @ V.swapaxes(-1, -2) if L.G.shape == L.Y.shape else None
    for s, scale, fix in ((1 / np.sqrt(Q.shape[-1]), f" / sqrt({Q.shape[-1]})", f" / np.sqrt({Q.shape[-1]})"),
                          (1.0, "", "")):
        Z = Q @ K.swapaxes(-1, -2) * s
        Pu = softmax(Z)
        if (Pu @ V).shape != L.Y.shape or dP is None:
            return None
        for k, which in dict.fromkeys(((0, "causal"), (S - T, "causal (aligned at the last key)"))):
            mask = np.tri(T, S, k, dtype=bool)
            if mask.all() or not mask.any(axis=-1).all():
                continue
            P = softmax(np.where(mask, Z, -np.inf))
            fields = {"scale": scale, "scale_fix": fix and f" * (1{fix})", "which": which}
            if close((Pu * mask) @ V, L.Y, 1e-8) and not close(P @ V, L.Y, 1e-8):
                return "attention-mask-after", fields
            if close(P @ V, L.Y, 1e-8) and close(n, back(P * (dP - (dP * P).sum(axis=-1, keepdims=True)) * s), 1e-5) \
                    and close(m, back(Pu * (dP - (dP * Pu).sum(axis=-1, keepdims=True)) * s), 1e-5):
                return "attention-backward-unmasked", fields
    return None


def _attention_value_signature(L: _Layer, key, m, n):
    """Scaled dot-product attention ``softmax(Q K^T s) V`` (the inputs in that order, ``s`` 1/sqrt(d) or 1, forward's
    output recomputed from them) whose backward gives V the gradient ``P @ dY``, ``P`` not transposed (shape-valid
    when the query and key lengths are equal; outside44 AttentionVTransposed): ``n`` is ``P^T @ dY`` and ``m`` that."""
    if len(L.inputs) != 3 or key != "@" + L.names[2] or close(m, n, 1e-5):
        return None
    Q, K, V = L.inputs
    if not all(a.dtype.kind == "f" and a.ndim >= 2 for a in (Q, K, V)) or Q.shape[-1] != K.shape[-1] \
            or K.shape[-2] != V.shape[-2] or Q.shape[-2] != K.shape[-2] or L.G.shape != L.Y.shape:
        return None
    for s in (1 / np.sqrt(Q.shape[-1]), 1.0):
        P = softmax(Q @ K.swapaxes(-1, -2) * s)
        if (P @ V).shape == L.Y.shape and close(P @ V, L.Y, 1e-8) and close(n, P.swapaxes(-1, -2) @ L.G, 1e-5) \
                and close(m, P @ L.G, 1e-5):
            return "attention-dv-untransposed", {"v": L.names[2]}
    return None


def _tied_signature(L: _Layer, key, m, n):
    """A weight used twice, tied (session 20's leftover): once in the output's product ``Y = h @ W.T`` (or ``h @
    W``) and once before it (``h`` depends on ``W``: an embedding lookup ``W[ids]`` whose rows ``W.T`` projects back
    to the vocabulary, an autoencoder's encoder ``tanh(X @ W)`` decoded by ``W.T``), whose backward keeps one use's
    gradient alone. ``h`` is recovered from the output by least squares (``W`` of full rank; the product reproduces
    ``Y`` to 1e-9), the product's term ``dY^T h`` (``h^T dY``) computed from it, and ``m`` is the correct ``n`` minus
    that term, or that term alone; both terms nonzero (a plain Linear's earlier term is 0: not named)."""
    W = L.params.get(key)
    if key.startswith("@") or W is None or W.ndim != 2 or W.dtype.kind != "f" or m.shape != W.shape \
            or not np.isfinite(n).all() or L.Y.ndim < 2:
        return None
    Y, G = L.Y.reshape(-1, L.Y.shape[-1]), L.G.reshape(-1, L.Y.shape[-1])
    for prod, A, term in (("h @ W.T", W, "dY.T @ h"), ("h @ W", W.T, "h.T @ dY")):
        if A.shape[0] != Y.shape[1] or A.shape[0] <= A.shape[1] or np.linalg.matrix_rank(A) < A.shape[1]:
            continue
        h = np.linalg.lstsq(A, Y.T, rcond=None)[0].T  # Y = h @ A.T
        if not close(h @ A.T, Y, 1e-9, 1e-12):
            continue
        dec = G.T @ h if prod == "h @ W.T" else h.T @ G
        enc, size = n - dec, np.sqrt(np.sum(n * n))
        if min(np.sqrt(np.sum(dec * dec)), np.sqrt(np.sum(enc * enc))) <= 1e-3 * size or close(m, n, 1e-5):
            continue
        w, dims = key, f"(N{', T' * (L.Y.ndim > 2)}, {h.shape[1]})"
        dy, hh = f"dY.reshape(-1, {Y.shape[1]})", f"h.reshape(-1, {h.shape[1]})"  # summed over every position
        shaped = term if L.Y.ndim == 2 else f"{dy}.T @ {hh}" if prod == "h @ W.T" else f"{hh}.T @ {dy}"
        fields = {"w": w, "prod": prod.replace("W", w), "h": dims, "term": shaped}
        if close(m, enc, 1e-5):
            return "tied-weight-term-missing", fields | {
                "have": "earlier use's gradient", "missing": f"the output product's term {shaped} (its {w}.T use)"
                if prod == "h @ W.T" else f"the output product's term {shaped}"}
        if close(m, dec, 1e-5):
            return "tied-weight-term-missing", fields | {
                "have": f"output product's term {shaped}", "missing": "the earlier use's (the lookup's or encoder's)"}
    return None


def _heads(x, H):
    """(N, T, D) -> (N, H, T, D/H): a multi-head split (reshape, then transpose(0, 2, 1, 3))."""
    N, T, D = x.shape
    return x.reshape(N, T, H, D // H).transpose(0, 2, 1, 3)


def _mha_grads(X, Ws, H, s, lay, G, bug="", bs=None):
    """Self-attention ``softmax(q k^T s) v`` over ``H`` heads of ``X`` (N, T, D), q = X @ Wq + bq (``lay`` 0) or X @
    Wq.T + bq (1), the heads merged then projected by Wo (+ bo) when ``Ws`` has four weights: ``(Y, grads)``, the
    gradients of ``X`` and of each weight (by position) and each bias (``("b", i)``; ``bs``: a bias or None per
    weight) for ``G``, backward's head reshapes as written or (``bug``) by reshape alone where the heads'
    gradients are merged (``"merge"``) or dY's is split (``"split"``)."""
    N, T, D = X.shape
    d, bs = D // H, list(bs) if bs is not None else [None] * len(Ws)
    proj = (lambda A, W: A @ W) if lay == 0 else (lambda A, W: A @ W.T)
    q, k, v = (_heads(proj(X, W) + (0 if b is None else b), H) for W, b in zip(Ws[:3], bs))
    P = softmax(q @ k.swapaxes(-1, -2) * s)
    M = (P @ v).transpose(0, 2, 1, 3).reshape(N, T, D)
    Y = proj(M, Ws[3]) + (0 if bs[3] is None else bs[3]) if len(Ws) == 4 else M
    Xf, grads = X.reshape(-1, D), {}
    dM = G if len(Ws) == 3 else G @ (Ws[3].T if lay == 0 else Ws[3])
    if len(Ws) == 4:
        Mf, Gf = M.reshape(-1, D), G.reshape(-1, D)
        grads[3], grads["b", 3] = (Mf.T @ Gf if lay == 0 else Gf.T @ Mf), Gf.sum(axis=0)
    dO = dM.reshape(N, H, T, d) if bug == "split" else _heads(dM, H)
    dP, dv = dO @ v.swapaxes(-1, -2), P.swapaxes(-1, -2) @ dO
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True)) * s
    dX = np.zeros_like(X)
    for i, g in enumerate((dS @ k, dS.swapaxes(-1, -2) @ q, dv)):
        gm = g.reshape(N, T, D) if bug == "merge" else g.transpose(0, 2, 1, 3).reshape(N, T, D)
        grads[i] = Xf.T @ gm.reshape(-1, D) if lay == 0 else gm.reshape(-1, D).T @ Xf
        grads["b", i] = gm.reshape(-1, D).sum(axis=0)
        grads["X", i] = gm @ (Ws[i].T if lay == 0 else Ws[i])  # X's use in the q, k or v projection
        dX += grads["X", i]
    return Y, {"X": dX, **grads}


def _bias_of(w: str, params: Mapping[str, np.ndarray], size: int) -> str | None:
    """The name of weight ``w``'s bias among ``params`` (``Wq`` -> ``bq``, ``W_qkv`` -> ``b_qkv``, ``q_weight`` ->
    ``q_bias``, ``weight`` -> ``bias``), a float vector of ``size``; None when there is none."""
    for name in (("b" + w[1:]) if w[:1] in "Ww" else "", w.replace("weight", "bias"), w.replace("Weight", "Bias")):
        if name and name != w and name in params and params[name].shape == (size,):
            return name
    return None


def _attention_forms(params: Mapping[str, np.ndarray], D: int):
    """The ways ``params`` can be a self-attention's projections over D features: ``(ws, lay, fused, biases)``,
    ``ws`` the weight names in the order q, k, v[, o] (each (D, D)), or, ``fused``, one (D, 3D) (``lay`` 0) or (3D,
    D) (1) weight for q, k, v side by side (PyTorch's in_proj_weight, a c_attn) then an optional (D, D) o; ``biases``
    a bias name or None per weight (:func:`_bias_of`); every parameter used. Nothing for other parameters."""
    square = [w for w, p in params.items() if p.shape == (D, D)]
    fused = [w for w, p in params.items() if p.ndim == 2 and p.shape in ((D, 3 * D), (3 * D, D))]
    if len(fused) == 1 and len(square) <= 1:
        f = fused[0]
        ws, lay = [f, *square], 0 if params[f].shape == (D, 3 * D) else 1
        bias = [_bias_of(f, params, 3 * D), *(_bias_of(w, params, D) for w in square)]
        if len(ws) + sum(b is not None for b in bias) == len(params):
            yield ws, lay, True, bias
        return
    if fused or len(square) not in (3, 4):
        return
    bias = {w: _bias_of(w, params, D) for w in square}
    if len(square) + sum(b is not None for b in bias.values()) != len(params):
        return
    for order, lay in itertools.product(itertools.permutations(square), (0, 1)):
        yield list(order), lay, False, [bias[w] for w in order]


def _attention_named(X, params, form, H, s, G, bug=""):
    """:func:`_mha_grads` of one form of :func:`_attention_forms`: ``(Y, grads)`` by the parameters' names (a fused
    weight's and bias's gradients the three side by side) and ``"X"``."""
    ws, lay, fused, bias = form
    D = X.shape[2]
    if fused:
        W, b = params[ws[0]], None if bias[0] is None else params[bias[0]]
        parts = [W[:, i * D:(i + 1) * D] if lay == 0 else W[i * D:(i + 1) * D] for i in range(3)]
        Ws, bs = parts + [params[w] for w in ws[1:]], [None if b is None else b[i * D:(i + 1) * D] for i in range(3)]
        bs += [None if n is None else params[n] for n in bias[1:]]
    else:
        Ws, bs = [params[w] for w in ws], [None if n is None else params[n] for n in bias]
    Y, g = _mha_grads(X, Ws, H, s, lay, G, bug, bs)
    out = {"X": g["X"], **{("X", i): g["X", i] for i in range(3)}}
    if fused:
        out[ws[0]] = np.concatenate([g[i] for i in range(3)], axis=1 - lay)
        if bias[0] is not None:
            out[bias[0]] = np.concatenate([g["b", i] for i in range(3)])
        rest = [(w, n, 3) for w, n in zip(ws[1:], bias[1:])]
    else:
        rest = [(w, n, i) for i, (w, n) in enumerate(zip(ws, bias))]
    for w, n, i in rest:
        out[w] = g[i]
        if n is not None:
            out[n] = g["b", i]
    return Y, out


def _head_merge_signature(L: _Layer, key, m, n):
    """Multi-head self-attention (one input X (N, T, D); weights Wq, Wk, Wv[, Wo], or one fused (D, 3D) q, k, v
    projection[ and Wo], each with or without its bias (:func:`_attention_forms`), and nothing else; forward
    recomputed from them, each order of the weights, both layouts, every head count, scale 1/sqrt(d) or 1, until it
    reproduces the output to 1e-9) whose backward turns (N, H, T, d) back into (N, T, H*d), or dY's gradient into
    heads, by reshape alone, without the transpose(0, 2, 1, 3) the head split needs (session 20's leftover; fused
    and biased forms session 21's): ``n`` is the recomputed correct gradient of ``key`` and ``m`` that of the
    reshape-alone backward."""
    if not np.isfinite(n).all() or (found := _head_form(L)) is None:
        return None
    (form, H, s), right = found
    slot = "X" if key == L.keys[0] else key
    if slot not in right or not close(n, right[slot], 1e-5) or close(m, n, 1e-5):
        return None
    D = L.inputs[0].shape[2]
    d = D // H
    for bug, where, fix in (
            ("merge", "merges the heads' gradients dq, dk, dv (N, H, T, d) back into (N, T, H*d)",
             f"dQ = dq.transpose(0, 2, 1, 3).reshape(N, T, {D}), the same for dk and dv"),
            ("split", "splits the merged output's gradient (N, T, H*d) into heads (N, H, T, d)",
             f"dO = dM.reshape(N, T, {H}, {d}).transpose(0, 2, 1, 3)")):
        if close(m, _head_form(L, bug)[1][slot], 1e-5):
            return "head-merge-no-transpose", {"where": where, "fix": fix, "H": H, "d": d, "D": D}
    return None


def _attention_use_signature(L: _Layer, key, m, n):
    """Self-attention's dX with one or two of X's three uses left out (newuser22's leftover: lesson 34's
    ``self_attention_bug.py`` writes ``dX = dZ @ W`` in its loop over the q, k and v projections, ``=`` where ``+=``
    is due, keeping v's alone): the layer is one :func:`_head_form` reproduces (any head count, one too), ``n`` its
    correct dX and ``m`` the sum of a strict subset of its three uses' gradients."""
    if key != L.keys[0] or not np.isfinite(n).all() or (found := _head_form(L)) is None:
        return None
    (form, H, s), right = found
    if not close(n, right["X"], 1e-5) or close(m, n, 1e-5):
        return None
    ws, lay, fused, _ = form
    w = [f"{ws[0]}[{'qkv'[i]}]" for i in range(3)] if fused else ws[:3]
    prod = [f"X @ {v}" if lay == 0 else f"X @ {v}.T" for v in w]
    x, role = L.names[0], ("query", "key", "value")
    for have in (*itertools.combinations(range(3), 1), *itertools.combinations(range(3), 2)):
        if close(m, sum(right["X", i] for i in have), 1e-5):
            names = [f"the {role[i]} projection {prod[i]}" for i in range(3)]
            how = (" (an assignment in a loop over the projections, = where += is due, keeps the last one's alone)"
                   if have == (2,) else "")
            back = [f"d{'QKV'[i]} @ {w[i]}{'.T' if lay == 0 else ''}" for i in range(3)]
            return "attention-use-missing", {
                "have": " and ".join(names[i] for i in have), "x": x, "uses": "; ".join(prod),
                "missing": " and ".join(f"the gradient through {names[i]}" for i in range(3) if i not in have),
                "how": how, "fix": f"d{x} = " + " + ".join(back)}
    return None


#: :func:`_head_form`'s searches by the layer's numbers (inputs, output, upstream gradient, parameters), newest last
_HEAD_FORMS: dict = {}


def _head_form(L: _Layer, bug: str = "") -> tuple[tuple[Any, int, float], dict[str, np.ndarray]] | None:
    """``((form, H, s), grads)``: the first multi-head self-attention (form of :func:`_attention_forms`, head count
    ``H``, scale ``s``) that reproduces ``L``'s output to 1e-9, and its gradients by name (:func:`_attention_named`,
    with ``bug`` "merge" or "split" as :func:`_mha_grads` plants it); None when no form does or ``L`` is no such
    layer. Searched once per layer and each bug's gradients computed once, kept on ``L`` (review22: every failing
    tensor of the layer ran the whole search again, up to ~288 :func:`_mha_grads`), and by the layer's numbers: a
    layer diagnosed again in its other mode with the same output (:func:`_diagnose_modes`, eval failing) is not
    searched twice (fixn32: 8 calls, 4 distinct)."""
    memo = L.__dict__.get("_head_form")
    if memo is None:
        arrays = (*L.inputs, L.Y, L.G, *L.params.values())
        key = (tuple(L.params), tuple((a.shape, a.dtype.str, a.tobytes()) for a in map(np.asarray, arrays)))
        memo = L.__dict__["_head_form"] = _HEAD_FORMS.setdefault(key, {})
        while len(_HEAD_FORMS) > 4:  # the last few layers' searches only
            _HEAD_FORMS.pop(next(iter(_HEAD_FORMS)))
    if "" not in memo:
        memo[""] = _head_search(L)
    if memo[""] is not None and bug not in memo:
        (form, H, s), X = memo[""][0], L.inputs[0]
        memo[bug] = ((form, H, s), _attention_named(X, L.params, form, H, s, L.G, bug)[1])
    return memo[bug]


def _head_search(L: _Layer) -> tuple[tuple[Any, int, float], dict[str, np.ndarray]] | None:
    """:func:`_head_form`'s search (no bug planted), run once per layer."""
    X = L.inputs[0]
    if len(L.inputs) != 1 or X.ndim != 3 or X.dtype.kind != "f" or L.Y.shape != X.shape:
        return None
    D = X.shape[2]
    for form, H in itertools.product(_attention_forms(L.params, D), range(1, D + 1)):  # one head too (session 23)
        for s in (1 / np.sqrt(D // H), 1.0) if D % H == 0 else ():
            Y, right = _attention_named(X, L.params, form, H, s, L.G)
            if close(Y, L.Y, 1e-9, 1e-12):
                return (form, H, s), right
    return None


def _first_found(detectors, *args, spent: Callable[[], bool] | None = None) -> tuple[str, dict] | None:
    """The first ``(code, fields)`` of ``detect(*args)`` over ``detectors``; one whose probe of the layer raises
    (student code, or a layer that cannot run there, e.g. at Y) names nothing; none is started once ``spent()``
    (the grader's budget of forwards, :func:`name_graded`)."""
    for detect in detectors:
        if spent is not None and spent():
            return None
        try:
            if found := detect(*args):
                return found
        except Exception:  # noqa: BLE001 - student code in a probe
            continue
    return None


def _shape_signatures(L: _Layer, rets, grads, bad_shape, diag: Diagnosis) -> None:
    """Name each wrong-shaped gradient: the wrong order, else :func:`name_signature`."""
    def numer(which):
        try:
            return L.numer(which)
        except Exception:  # noqa: BLE001 - the shape alone still names something
            return {}

    ins = [n for n, x in zip(L.names, L.inputs) if x.dtype.kind == "f"]
    if len(ins) > 1 and any(key in ins for *_, key in bad_shape):
        right = {V.grad_name(k[1:]): v for k, v in numer(["@" + n for n in ins]).items()}
        with contextlib.suppress(TypeError, ValueError):  # a returned value that is no array
            got = {V.grad_name(n): np.asarray(r, dtype=np.float64) for n, r in zip(L.names, rets)
                   if n in ins and r is not None}
            ts = [V.grad_name(n) for n in ins]
            if len(right) == len(ins) and (f := _order_signature(got, right, ts)) is not None:
                return diag.findings.append(f)
    for t, got, exp, key in bad_shape:
        if got is None:
            diag.findings.append(_find("wrong-shape", t, how="is missing: backward returned None "
                                       f"or grads has no entry for it (expected shape {exp})"))
            continue
        is_input = key in L.names
        arr = np.asarray(rets[L.names.index(key)] if is_input else grads[key], dtype=np.float64)
        if not is_input and (found := _output_product(arr, L.G, L.Y)) is not None:
            diag.findings.append(_find(found[0], t, **found[1]))
            continue
        which = "@" + key if is_input else key
        num = numer([which]).get(which, np.full(exp, np.nan))
        hint = (_INPUT_SWAP if not L.params else _WEIGHTED_INPUT_SWAP).format(t=t) if key == L.names[0] else \
            _layout_hint(key, L.inputs[0], L.G, num)  # tester20s: an activation's dX gets no dW advice
        diag.findings.append(name_signature(t, arr, num, fallback=True, hint=hint))


# --------------------------------------------------------------------------- diagnose_layer


def _probe_inputs(X: Any, seed: int, owner: str, dtype: Any = None) -> list[np.ndarray]:
    """The diagnosis's inputs for ``X``, from their own stream: check_layer draws G from ``probe_rng(seed)``, and
    G == X would make X.T @ G symmetric and hide a transposed gradient; drawn in ``dtype`` when given
    (:func:`gradcheck._validation.layer_inputs`)."""
    return V.layer_inputs(X, np.random.default_rng([seed, 3]), owner, dtype)


def _same_output(layer: Any, X: Any, owner: str, seed: int, t: bool) -> str:
    """``""`` when the training forward's output differs from eval's on the diagnosis's input; else
    ``"same backward"`` when backward's gradients are the same too (:func:`gradcheck.check.same_backward`),
    else ``"same output"`` (Z13: backward may branch on the mode, so the training mode is checked)."""
    inputs = _probe_inputs(X, seed, owner)
    names = V.input_names(layer, len(inputs))
    if training_differs(Call(layer, owner, inputs, names, {}, t)):
        return ""
    call = Call(layer, owner, inputs, names, V.layer_params(layer, owner), t)
    return "same backward" if same_backward(call, seed) else "same output"


def diagnose_layer(layer: Any, X: Any, *, mode: str = "fast", method: str = "central",
                   seed: int = 0, rtol: float = 1e-6, atol: float | None = None,
                   eps: float | None = None, training: bool | str = "auto", twin: Any = None,
                   reference: Any = None, name: str | None = None, localize: bool = True,
                   n_dirs: int = 2, n_samples: int = 8, upstream: Any = None, drawn: bool = True,
                   values: bool = True) -> Diagnosis:
    """Check a layer and explain what is wrong: probes, numerical check, signatures, bad layer.

    Parameters
    ----------
    layer : object
        manualprop layer protocol; a container with a ``layers`` list is localised on failure.
    X : ndarray, shape tuple, or list of those
        As in :func:`gradcheck.check.check_layer`, and so are ``mode`` (a failing tensor is
        always scanned element by element), ``method``, ``seed`` (also the probes'), ``rtol``,
        ``atol`` (the probes': 1e-9 when None), ``eps``, ``n_dirs``, ``n_samples``,
        ``upstream``, ``twin`` (None: no tape column) and ``reference`` (a layer of ours: the
        ``manual-vs-reference`` pair). In a mode whose forward is random (its draws held fixed:
        ``fix_mask(True)`` or its generators rewound) the twin is not compared, since it draws its
        own mask (``twin_note`` :data:`RANDOM_TWIN`), unless it runs this layer's own forward
        (``same_draws``: :class:`gradcheck.student_tape.StudentTape`); nor is the reference
        (the note :data:`RANDOM_REFERENCE`).
    training : bool, "both" or "auto", default "auto"
        With two modes each is diagnosed; the result is the first failing mode's, named
        ``"<name> [training]"``, the other in ``other_modes``.
    name : str, optional
    localize : bool, default True
        For a container that fails, find the first failing layer.
    drawn : bool, default True
        When the layer passes and a parameter starts constant (zeros, ones: :func:`constant_params`), check it
        again at drawn parameter values, its own put back after (:func:`at_drawn_params`), whose diagnosis is the
        result if it fails; so too with a float constructor argument at 0.5, 1.0, 0 or -1 built at another value
        (:func:`at_other_args`: ``Dropout(p=0.5)`` at p = 0.3).
    values : bool, default True
        A function pair's string keyword arguments left at their defaults (``pool_forward(A_prev, hparameters,
        mode="max")`` beside ``if mode == "average"``) are diagnosed at each other value too
        (:func:`gradcheck.sources.each_keyword_value`, as :func:`gradcheck.check_layer` and ``gradcheck check`` do:
        the first failing value's diagnosis, named ``pool [mode='average']``, the others in ``other_modes``, a note
        giving each value's verdict); False: the layer as given alone.

    Returns
    -------
    Diagnosis

    Raises
    ------
    UsageError
        Bad arguments. Errors of the checked code are in ``Diagnosis.error`` and the findings.
    """
    CheckConfig(rtol=rtol, atol=atol, eps=eps, method=method, mode=mode, seed=seed,
                training=training, n_dirs=n_dirs, n_samples=n_samples)  # validates every setting
    owner = name or type(layer).__name__
    V.require_methods(layer, owner, ("forward", "backward"), "manualprop layer")
    kw = dict(mode=mode, method=method, seed=seed, rtol=rtol, atol=atol, eps=eps, n_dirs=n_dirs,
              n_samples=n_samples)
    one = functools.partial(_diagnose_as_given, X=X, owner=owner, training=training, more=(twin, reference, localize,
                                                                                           upstream), kw=kw, drawn=drawn)
    first = one(layer)
    if not values or not (found := keyword_values(layer)):
        return first
    others, line = each_keyword_value(layer, owner, _probe_inputs(X, seed, owner), first, lambda lay, k, v: one(lay))
    return values_merged(owner, first, others, line, ", ".join(f"{k}={d!r}" for k, d, _ in found))


def _diagnose_as_given(layer, X, owner: str, training, more, kw, drawn: bool) -> Diagnosis:
    """:func:`diagnose_layer` of ``layer`` as given (``more``: twin, reference, localize, upstream; ``kw``: numerics)."""
    twin, reference, localize, upstream = more
    seed = kw["seed"]
    # forward(X) with no training keyword, self.W/self.dW: read as check_layer reads it (newuser34 M3: "forward must
    # accept a training keyword" of a correct Dense that check_layer and the CLI pass)
    layer = _as_cli_reads(layer, _probe_inputs(X, seed, owner))
    with V.own_grad_names(V.own_names_of(grad_slots(layer))):  # grads['dW1'], not dparameters['W1']
        diag = _diagnose_variants(layer, X, owner, training, (twin, reference, localize, upstream), kw)
        # zero weights (CMU's Linear as its handout builds it): checkable at drawn values alone, with gradients or
        # without (tester26s M6: exit 3 "weights all zero", though dW and db do not depend on W)
        zero = not diag.passed and set(diag.codes) == {"zero-weights"} and bool(
            seed_weights(layer) or constant_params(layer, owner))
        if drawn and (diag.passed or zero):  # zero weights without gradients: checkable at drawn values alone
            diag = at_drawn_params(layer, diag, lambda lay: _diagnose_variants(
                lay, X, owner, training, (None, None, False, upstream), kw), seed, only=zero)
        if drawn and diag.passed:  # p = 0.5 hides 1/p for 1/(1-p): built again at p = 0.3 (newuser36 H1)
            diag = at_other_args(layer, X, diag, lambda lay: _diagnose_variants(
                lay, X, owner, training, (None, None, False, upstream), kw), seed)
        _classic_named(diag, _probe_inputs(X, seed, owner), owner)  # both modes agree with their own forwards
        if drawn and diag.passed:  # a D x D input hides a size read from the wrong axis (bugs43 H4)
            diag = at_other_batch(layer, X, diag, lambda X2: _diagnose_variants(
                layer, X2, owner, training, (None, None, False, upstream), kw), seed)
        if drawn and (diag.passed or diag.codes[:1] == ["stale-cache"]):  # "wrong at another input": which?
            diag = at_straddled_inputs(layer, X, diag, lambda X2: _diagnose_variants(
                layer, X2, owner, training, (None, None, False, upstream), kw), seed)
        if reference is None and diag.passed:  # bugs43 H2 / bugs44: the CLI's and the API's one own-mean check
            _own_mean_named(layer, X, diag, owner, seed)
        if not diag.passed and diag.result is not None:
            _name_bound(layer, X, diag, seed)
        _reuse_named(layer, diag, owner)
        _layout_named(diag)
        return diag


def _own_mean_named(layer: Any, X: Any, diag: Diagnosis, owner: str, seed: int) -> None:
    """The ``own-mean`` error (:func:`own_eval_mean_finding`) added to ``diag``, a passing
    diagnosis without a reference of a layer of one input checked in both modes whose training forward is random (held
    fixed for the check: :data:`HELD`): its training output's mean compared with its own eval output, as built and
    again at the other value of each constructor argument that can hide a wrong scale (p = 0.3 for p = 0.5). bugs43 H1
    (inverted dropout scaled again at test time) and H2 (a drop probability p scaled by 1/p) PASSed; run here, so
    ``gradcheck check`` and :func:`diagnose_layer` give one verdict (bugs43 L6: the API PASSed H2)."""
    modes = [d for d in [diag, *diag.other_modes] if d.result is not None]
    if {d.training for d in modes} != {True, False} or not any(f.code in HELD for d in modes for f in d.findings):
        return
    inputs = _probe_inputs(X, seed, owner)
    if len(inputs) != 1 or inputs[0].ndim < 1:
        return
    shape = tuple(int(k) for k in inputs[0].shape)

    def pairs():
        yield layer, ""
        for key, _, other in symmetric_args(layer):
            try:
                lay = built_with(layer, key, other, _probe_inputs(shape, seed, owner))
            except Exception:  # noqa: BLE001 - a constructor refusing the value: not compared there
                continue
            try:
                yield lay, f" at {key}={other:g}"
            finally:
                if lay is not layer and callable(getattr(lay, "release", None)):
                    lay.release()

    if (found := own_eval_mean_finding(pairs(), owner, shape, seed)) is not None:
        diag.findings.append(found)


def _layout_named(diag: Diagnosis) -> None:
    """The ``memory-layout`` finding first in ``diag`` when what failed, unnamed, is the check's memory-layout rerun
    alone (:func:`layout_finding`)."""
    res = diag.result
    if diag.passed or diag.error is not None or res is None or not set(diag.codes) <= {"wrong-values"}:
        return
    if (found := layout_finding(res)) is not None:
        diag.findings.insert(0, found)


def layout_finding(res: CheckResult) -> Finding | None:
    """The ``memory-layout`` finding of a result whose failure is the check's memory-layout rerun alone
    (:mod:`gradcheck._layout`: each failing record fails its ``C-order-vs-Fortran-order`` comparison only), a layer's
    or a loss's (:func:`loss_finding`); else None."""
    bad = [r for r in res.records if not r.passed]
    if bad and all(c.passed or c.pair == LAYOUT_PAIR for r in bad for c in r.comparisons):
        return _find("memory-layout", ts=", ".join(r.tensor for r in bad), s="s" if len(bad) == 1 else "",
                     who="y_pred and y_true" if res.kind == "loss" else "the inputs and dY")
    return None


def _reuse_named(layer: Any, diag: Diagnosis, owner: str) -> None:
    """The ``reused-sublayer`` finding first in ``diag`` of a layer that failed unnamed ("no known bug pattern")
    and uses one sub-layer object twice in its forward (:func:`_reused_sublayer`); for a backward that raised
    (the second use's cache of another shape), the same words after its error."""
    if diag.passed or _unconverged(diag.result) or (found := reused_finding(layer, owner)) is None:
        return
    if diag.error is None and set(diag.codes) <= {"wrong-values"}:
        diag.findings.insert(0, found)
    elif isinstance(diag.error, StudentCodeError) and "backward" in str(diag.error):
        diag.error.args = (f"{diag.error} Likely why: " + found.message + ".",)


def _unconverged(res: CheckResult | None) -> bool:
    """Whether ``res`` failed nothing and gave some tensor no verdict as its differences did not converge
    (``unchecked="converge"``: attention at ``X - 3000``, verify43c F4): its kinks are that scale's, not a coarse
    forward's, and no bug is there to name (a reused sub-layer said of a right TransformerBlock)."""
    return res is not None and not res.failing_tensors and any(
        c.unchecked == "converge" for r in res.records for c in r.comparisons)


def reused_finding(layer: Any, owner: str) -> Finding | None:
    """The ``reused-sublayer`` finding of a ``layer`` whose forward uses one sub-layer object more than once
    (:func:`_reused_sublayer`), None otherwise: one diagnosis for ``gradcheck check`` (:func:`_reuse_named`) and the
    grader (:func:`name_graded`, where the numbers name no bug)."""
    what = _reused_sublayer(layer, owner)
    return None if what is None else _find("reused-sublayer", what=what)


def _reused_sublayer(layer: Any, owner: str) -> str | None:
    """What says that ``layer``'s forward uses one sub-layer object more than once (newuser38 F8: ``self.act`` after
    l1 and after l2, "no known bug pattern"): the same object twice in its list ``layers`` (read where the layer
    lives, :func:`adapter_call`: a sandboxed layer's in its child), or, read with :mod:`ast` from its class's file,
    ``self.NAME.forward(...)`` (or ``self.NAME(...)``) called twice in forward, or once inside a loop, where backward
    calls ``self.NAME.backward`` with dY alone (no cache given back); None otherwise."""
    try:  # read where the layer lives (a sandboxed one's objects are its child's)
        twice = adapter_call(layer, "reused_layers")
    except GradcheckError:  # a sandbox that failed: the source is read below
        twice = []
    if twice:
        return f"{owner}.layers holds one object at {' and '.join(f'layers[{i}]' for i in twice)}"
    fns = {f.name: f for c in reversed(layer_classes(layer)[1]) for f in c.body if isinstance(f, ast.FunctionDef)}
    fwd, bwd = fns.get("forward") or fns.get("__call__"), fns.get("backward")
    if fwd is None or bwd is None:
        return None
    loops = {id(n) for loop in ast.walk(fwd) if isinstance(loop, (ast.For, ast.While)) for n in ast.walk(loop)}
    calls: dict[str, list] = {}  # each call of self.NAME: (line, inside a loop)
    for n in ast.walk(fwd):
        f = n.func if isinstance(n, ast.Call) else None
        name = self_attr(f.value) if isinstance(f, ast.Attribute) and f.attr == "forward" else self_attr(f)
        if name:
            calls.setdefault(name, []).append((n.lineno, id(n) in loops))
    back = [(self_attr(n.func.value), len(n.args) + len(n.keywords)) for n in ast.walk(bwd) if isinstance(
        n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"]  # dY alone: no cache given
    back = {k for k, _ in back} - {k for k, given in back if given > 1}
    name = next((k for k, v in calls.items() if k in back and (len(v) > 1 or v[0][1])), None)
    if name is None:
        return None
    n = len(calls[name])
    how = "inside a loop, once per pass" if n == 1 else "twice" if n == 2 else f"{n} times"
    lines = ", ".join(map(str, sorted({line for line, _ in calls[name]})))
    return f"forward calls self.{name} {how} (line {lines}), one object for every use"


# The own-mean check's batch and rule (:func:`own_eval_mean_finding`), here as diagnose_layer runs it (bugs44: the
# CLI and the API one pipeline); :func:`random_mean_finding` compares a random training forward's mean with
# --reference's by the same ones (newuser37 F7: the comment above SCALE_RTOL).

#: About how many entries the compared batch holds: the standard error of a dropout's mean ratio at p = 0.5 is then
#: 1/sqrt(4000) = 0.016, so a 1/p against 1/(1-p) at p = 0.3 (a mean of 2.33 against 1) is 80 standard errors apart.
ENTRIES = 4000

#: The fewest samples the compared batch holds, so that per-sample means give the standard error.
SAMPLES = 400

#: How many standard errors of the difference make two means differ.
SIGMAS = 6.0


def _mean_ratio(Y: Any, X: np.ndarray) -> tuple[float, float, str, float | None, float] | None:
    """``(mean, standard error, how, share, its standard error)`` of ``Y / X`` over the entries (``how``: "keeps 70%
    of the entries, scaled by 1.43" when the ratio takes the values 0 and one scale alone; ``share`` the share of
    entries kept, ``Y != 0``, None unless the ratio so takes one scale); None when ``Y`` is not an array of ``X``'s
    shape."""
    Y = np.asarray(Y, dtype=np.float64) if isinstance(Y, np.ndarray) else None
    if Y is None or Y.shape != X.shape or not np.all(np.isfinite(Y)):
        return None
    r = Y / X
    share, scale = kept_scale(Y, X)
    how = f"keeps {share:.0%} of the entries, scaled by {scale:.4g}" if scale is not None else \
        f"has Y / X averaging {r.mean():.4g}"
    per = r.reshape(len(r), -1).mean(axis=1)  # the samples' means: independent, whatever a mask shares inside one
    kept = (r != 0).reshape(len(r), -1).mean(axis=1)
    return (float(r.mean()), float(per.std(ddof=1) / np.sqrt(per.size)), how, share if scale is not None else None,
            float(kept.std(ddof=1) / np.sqrt(kept.size)))


#: training forwards :func:`own_eval_mean_finding` averages over: a mask shared along the batch (AWD-LSTM's locked
#: dropout, one Bernoulli per batch as stochastic depth draws) varies from call to call alone (verify43c F1, F2)
OWN_CALLS = 8


def _calls_mean(Ys: list, X: np.ndarray) -> tuple[float, float]:
    """``(mean, standard error)`` of ``Y / X`` over the entries of training calls ``Ys``: the larger of the calls'
    spread (right whatever a mask shares inside one call, when the calls draw anew) and the samples' (right for a mask
    drawn anew per sample, also when the check holds one draw for every call); about 0 when neither varies."""
    rs = [np.asarray(Y, dtype=np.float64) / X for Y in Ys]
    if any(r.shape != X.shape or not np.all(np.isfinite(r)) for r in rs):
        return float("nan"), 0.0
    rs = [r for i, r in enumerate(rs) if not any(_same_call(r, q) for q in rs[:i])]  # a repeated draw counts once
    calls = np.array([r.mean() for r in rs])
    samples = np.concatenate([r.reshape(len(r), -1).mean(axis=1) for r in rs])
    spread = float(calls.std(ddof=1) / np.sqrt(calls.size)) if calls.size > 1 else 0.0
    return float(calls.mean()), max(spread, float(samples.std(ddof=1) / np.sqrt(samples.size)))


def _same_call(a: Any, b: Any) -> bool:
    """Whether two training outputs are one draw (the check held it): equal arrays of one shape."""
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b)


def own_eval_mean_finding(pairs, cname: str, shape: tuple[int, ...], seed: int) -> Finding | None:
    """The ``own-mean`` error Finding of the first ``(layer, at)`` of ``pairs`` whose training output is ``X`` times a
    mask of 0 and one scale (a dropout) and whose mean, on one batch of positive entries (as
    :func:`random_mean_finding`'s), is more than :data:`SIGMAS` standard errors from the layer's own eval output
    ``c X``; None when each agrees or cannot be compared (no claim). Without ``--reference`` the eval forward is the
    reference: a dropout's expected training output is its eval output whichever convention it follows (inverted:
    E[Y] = X and Y = X; classic: keep * X in both), so an inverted dropout scaled again at test time (Angel-ML/mlcore
    issue 5) or a drop probability p scaled by 1/p (at p = 0.3: 2.33 X against X) FAILs, which agreeing gradients
    never show (bugs43 H1, H2).

    Parameters
    ----------
    pairs : iterable of (layer, str)
        The checked layer (local or sandboxed) as built, then rebuilt at the other value of each argument that can
        hide a wrong scale (``" at p=0.3"``: :func:`gradcheck.sources.symmetric_args`), with the words naming it.
    cname : str
        The layer's name, for the message.
    shape : tuple of int
        The checked input's shape (its batch axis grown as :func:`random_mean_finding` grows it).
    seed : int
        The batch's seed.

    Returns
    -------
    Finding or None
        ``own-mean`` (severity ``error``: FAIL), or None.
    """
    rest = tuple(shape[1:])
    n = max(int(shape[0]), -(-ENTRIES // max(1, int(np.prod(rest)))), SAMPLES)
    X = np.random.default_rng([seed, 43]).uniform(0.5, 1.5, (n, *rest))
    for layer, at in pairs:
        try:
            names, params = V.input_names(layer, 1), V.layer_params(layer, cname)
            train = Call(layer, cname, [X], names, params, True)
            Ys = [train.forward(X.copy()) for _ in range(2)]
            if not _same_call(Ys[0], Ys[1]):  # calls that draw anew (the check holds most layers' draws): more
                Ys += [train.forward(X.copy()) for _ in range(OWN_CALLS - 2)]
            Y_eval = Call(layer, cname, [X], names, params, False).forward(X.copy())
        except Exception:  # noqa: BLE001 - a forward that cannot take the larger batch: not compared, no claim
            continue
        got = _mean_ratio(Ys[0], X)
        ok = isinstance(Y_eval, np.ndarray) and Y_eval.shape == X.shape and np.all(np.isfinite(Y_eval))
        all_kept, c = kept_scale(Y_eval, X) if ok else (0.0, None)
        if got is None or got[3] is None or not 0 < got[3] < 1 or c is None or all_kept != 1:
            # not a dropout's mask (a random gain X * s keeps every entry: verify43c F7), or eval not c X
            continue
        mean, se = _calls_mean(Ys, X)
        if not se > 1e-12 * max(1.0, abs(mean)) or abs(mean - c) <= SIGMAS * se + 1e-9 * abs(c):
            # nothing seen to vary (one mask shared by every sample, the check's draws held from call to call):
            # no standard error, no claim
            continue
        return Finding("own-mean", (
            f"in training mode, {cname}'s output{at} averages {mean:.4g} X over {OWN_CALLS} calls of {X.size} "
            f"entries, its own eval output is {c:.4g} X ({abs(mean - c) / se:.0f} standard errors apart; the masks "
            f"are random, their "
            f"mean is not): in training it {got[2]}. A dropout's expected training output is its eval output: "
            "inverted dropout drops an entry with probability p and scales the kept ones by 1/(1 - p), so that "
            "E[Y] = X in training, and leaves Y = X in eval (a scale of 1/p reads p as the probability of keeping an "
            "entry, CS231n's convention; an eval forward scaled by 1 - p is classic dropout's, whose training mask "
            "is not scaled); forward and backward agreeing with each other is not enough (the gradient check holds "
            "your mask fixed)"), layer="Dropout")
    return None


def _classic_named(diag: Diagnosis, inputs: Sequence[np.ndarray], owner: str) -> None:
    """The ``classic-dropout`` finding (:func:`_classic_dropout`) added to ``diag`` of a layer that passed, or whose
    only errors are a forward other than the reference's (``other-function``), in their place: with ``--reference
    manualprop.Dropout`` the eval output c X against X was a generic forward mismatch (verify38 F2)."""
    ds = [diag, *diag.other_modes]
    if not diag.passed and not all(d.error is None and set(d.codes) <= {"other-function"} for d in ds):
        return
    if (classic := _classic_dropout(diag, inputs, owner)) is None:
        return
    for d in ds:
        d.findings = [f for f in d.findings if f.code != "other-function"]
    diag.findings.append(classic)


def rounding_rtol(Y: Any) -> float:
    """How far apart (relative) the values of ``Y / X`` may be and still be one scale, following the precision ``Y``
    was computed in: 1e-9 for float64, eight units in the last place of float32 or float16 where ``Y`` is of that
    dtype or every entry of it is one (a float32 layer's output, as the checker's forwards hand it back in float64:
    its mask times a float32-rounded ``X`` differs from one scale by about 1e-7; verify43c F8: a float32 dropout
    scaling by 1/p was "not a dropout" and PASSed)."""
    Y = np.asarray(Y)
    if Y.dtype.kind != "f":
        return 1e-9
    with np.errstate(all="ignore"):
        for low in (np.float16, np.float32):
            if np.finfo(Y.dtype).bits <= np.finfo(low).bits or np.array_equal(Y.astype(low), Y):
                return float(8 * np.finfo(low).eps)
    return 1e-9


def kept_scale(Y: Any, X: np.ndarray) -> tuple[float, float | None]:
    """``(share, scale)`` of a forward's output ``Y`` against its input ``X`` (same shape, no zero entries): the share
    of entries ``Y`` keeps (``Y / X != 0``) and the one value ``Y / X`` takes on them (a dropout's mask times its
    scale), within :func:`rounding_rtol` of ``Y``'s precision, None when it takes several
    (:func:`random_mean_finding`'s words, and :func:`_classic_dropout`)."""
    r = np.asarray(Y, dtype=np.float64) / X
    kept = r != 0
    s = r[kept]
    rtol = rounding_rtol(Y)
    return float(kept.mean()), float(np.median(s)) if s.size and np.ptp(s) <= rtol * np.abs(s).max() else None


# A random training forward's mean compared with ``--reference``'s (newuser37 F7).
#
# The gradient check holds a dropout's mask fixed, so a forward and a backward that agree with each other pass however
# they scale the kept entries; the reference draws its own mask, so its output is not compared element by element
# (:data:`gradcheck.diagnose.RANDOM_REFERENCE`). A dropout scaling its kept entries by ``1/p`` where inverted dropout
# scales by ``1/(1-p)`` (Srivastava et al. 2014, with the scale moved to training time as in PyTorch's and Keras's
# ``Dropout``; lesson 24) then PASSed. What any draw of the masks must share is the output's mean: here both layers run
# one training forward on a batch of a few thousand positive entries (at least :data:`SAMPLES` samples), and the means
# of ``Y / X`` are compared within six standard errors of the difference (a correct layer FAILs with probability about
# 2e-9), each standard error read from the per-sample means, the samples being the independent draws (a spatial
# dropout's mask is one per sample and channel: verify37 F3). At ``p = 0.5``,
# ``1/p = 1/(1-p)``: the comparison is made again with the layer and the reference both built at the other value the
# checker uses for such an argument (:func:`gradcheck.diagnose.symmetric_args`: ``p = 0.3``).
#
# The mean is not all: a dropout reading ``p`` as the probability of keeping an entry (CS231n's convention) where the
# reference drops with probability ``p`` keeps 30% of the entries scaled by 1/0.3 at ``p = 0.3``, whose mean is X too
# (redteam39 F3). Where the reference's ``Y / X`` takes the values 0 and one scale (a dropout's 1/(1 - p), the same on
# every draw of the mask), the layer's must take 0 and that scale (:func:`scale_difference`): exact, no statistics, so
# the grader also reads it on the test's own call (redteam39 F1: a probe batch can be refused).
#
# The means alone miss a reference built at another rate: a CS231n pair keeping 80% unscaled (mean 0.8) against
# ``manualprop.Dropout(p=0.8)``, which drops 80% (mean 1 with a standard error of 0.03), PASSed for some seeds
# (verify38 F1: CS231n's ``dropout_param['p']`` is the probability of keeping a unit, manualprop's ``p`` that of dropping
# one). Unless the reference is built from the layer's own settings (then the scale decides, as above), the
# shares of entries kept as built are compared first, within :data:`SIGMAS` standard errors: shares that
# differ are a usage error naming the rates and the convention (:func:`_same_rate`), whatever the seed.

#: How far apart (relative) the values of ``Y / X`` on the kept entries may be and still be one scale (a float32
#: mask's rounding is about 1e-7), and two scales still the same (:func:`scale_difference`).
SCALE_RTOL = 1e-6


def _same_rate(got: tuple, want: tuple, cname: str, reference: Any, ref_name: str) -> None:
    """UsageError when the layer as built keeps another share of the entries than the reference (``got``, ``want``:
    :func:`_mean_ratio`'s), more than :data:`SIGMAS` standard errors apart: the reference is built at another rate,
    and a share of one kept where the other drops it is the keep/drop convention (verify38 F1). No claim unless both
    are dropouts (a mask times one scale) and the layer drops some entries, keeps others; nor when the layer is at
    odds with itself, neither the convention's flip nor unbiased at its own share (mean 1 X): a layer dropping 60%
    and scaling by 1/(1 - 0.3) is its own bug, FAILed by the means (verify39 F5: blamed on the command)."""
    (share, se), (ref_share, ref_se) = got[3:], want[3:]
    apart = SIGMAS * np.hypot(se, ref_se) + 1e-12
    if share is None or ref_share is None or not 0 < share < 1 or abs(share - ref_share) <= apart:
        return
    flipped = abs(share - (1 - ref_share)) <= apart
    if not flipped and abs(got[0] - 1) > SIGMAS * got[1] + 1e-12:
        return
    p = getattr(reference, "p", None)
    built = f" (built with p={p:g})" if isinstance(p, float) else ""
    rate = f"{1 - share:.2g}"
    raise UsageError(V.paragraph(
        f"--reference {ref_name}: the reference drops {1 - ref_share:.0%} of the entries in training{built}, "
        f"{cname} keeps {share:.0%}" + (f": {ref_name}'s p is the drop probability ({rate} here), where CS231n's "
                                        "dropout_param['p'] and TensorFlow 1's keep_prob are the keep probability."
                                        if flipped else f" (drops {1 - share:.0%}): they are not built at one rate."),
        f"Build the reference at the rate {cname} drops: --reference-init '{{\"p\": {rate}}}' (a random forward is "
        "compared with the reference's at the same rate only)" + (
            ". If your p too is the drop probability, your mask keeps an entry with probability p where it should "
            "drop it." if flipped else f"; {ref_name}'s p is the probability of dropping an entry.")))


def random_mean_finding(pairs, cname: str, shape: tuple[int, ...], seed: int, ref_name: str,
                        given_rate: bool = False) -> Finding | None:
    """The ``random-mean`` error Finding of the first ``(layer, reference, at)`` of ``pairs`` whose training forwards
    on one batch of positive entries (``X`` of ``shape``'s trailing axes and about :data:`ENTRIES` entries, drawn
    from ``seed``) give means of ``Y / X`` more than :data:`SIGMAS` standard errors apart (or, the means agreeing, the
    ``random-scale`` one of a pair built alike whose kept scales differ); else a ``random-mean-note`` info Finding saying where the means agreed, or None when no pair could be compared (a
    forward that raises or gives another shape: no claim).

    Parameters
    ----------
    pairs : iterable of (layer, reference, str) or (layer, reference, str, bool)
        The checked layer (local or sandboxed) and a manualprop reference built alike, and the words naming the
        constructor arguments they were built at (``""`` as given, ``" at p=0.3"``); the bool (default False): the
        reference was built at the layer's own rate (the staff's test, or ``--reference`` from the layer's settings),
        so that its kept entries' scale must be the layer's too (:func:`scale_difference`); otherwise only the means
        (an unbiased random forward's is 1 at any rate: a ``keep_prob`` the reference does not take).
    cname, ref_name : str
        The layer's and the reference's names, for the message.
    shape : tuple of int
        The checked input's shape; its batch axis is grown to about :data:`ENTRIES` entries, at least
        :data:`SAMPLES` samples.
    seed : int
        The batch's seed.
    given_rate : bool, default False
        The reference's rate was given by the user (``--reference-init``): a share kept as built other than the
        reference's is then a usage error (:func:`_same_rate`), as it is for a pair not built alike; for one built
        alike from the layer's own settings (the grader's), the kept scale decides (``random-scale``).

    Returns
    -------
    Finding or None
        ``random-mean`` or ``random-scale`` (severity ``error``: FAIL) or ``random-mean-note`` (``info``), or None.

    Raises
    ------
    UsageError
        The first pair (as built), its reference's rate given (``given_rate``) or not the layer's, keeps another
        share of the entries than its reference (:func:`_same_rate`).
    """
    rest = tuple(shape[1:])
    n = max(int(shape[0]), -(-ENTRIES // max(1, int(np.prod(rest)))), SAMPLES)
    X = np.random.default_rng([seed, 37]).uniform(0.5, 1.5, (n, *rest))
    agreed = []
    for layer, reference, at, *alike in pairs:
        try:
            Y = Call(layer, cname, [X], V.input_names(layer, 1), V.layer_params(layer, cname), True).forward(X.copy())
            Y_ref = forward_in_mode(reference, [X.copy()], True)
            got, want = _mean_ratio(Y, X), _mean_ratio(Y_ref, X)
        except Exception:  # noqa: BLE001 - a forward that cannot take the larger batch: not compared, no claim
            continue
        if got is None or want is None or got[3] is None is want[3]:  # neither X masked at one scale: Y / X
            if (moved := _moment_difference(Y, Y_ref, X, cname, ref_name, at, same_shape=True)) is not None:
                return Finding("random-mean", moved, layer="Dropout")
            continue
        if not at and (given_rate or not (alike and alike[0])):  # as built, at a rate of its own or the user's:
            _same_rate(got, want, cname, reference, ref_name)  # the same rate first (verify38 F1), whatever the means
        if abs(got[0] - want[0]) <= SIGMAS * np.hypot(got[1], want[1]) + 1e-12:
            if alike and alike[0] and (scaled := scale_difference(Y, X, Y_ref, cname, ref_name, at)):
                return Finding("random-scale", scaled, layer="Dropout")
            agreed.append(f"{at.strip() or 'as built'}: {got[0]:.4g} X and {want[0]:.4g} X")
            continue
        return Finding("random-mean", (
            f"in training mode, {cname}'s output{at} averages {got[0]:.4g} X over {X.size} entries, "
            f"{ref_name}'s {want[0]:.4g} X ({abs(got[0] - want[0]) / np.hypot(got[1], want[1]):.0f} standard errors "
            f"apart; the masks are random, their means are not): yours {got[2]}, {ref_name} {want[2]}. Inverted "
            "dropout scales the kept entries by 1/(1 - p), p the probability of dropping one, so that E[Y] = X in "
            "training as in eval mode; forward and backward agreeing with each other is not enough (the gradient "
            "check holds your mask fixed)"), layer="Dropout")
    return agreed and Finding("random-mean-note", (
        f"reference: the training output's mean compared with {ref_name}'s over {X.size} entries, within "
        f"{SIGMAS:g} standard errors ({'; '.join(agreed)}): the masks are random, their means are not"),
        severity="info") or None


def _moment_difference(Y: Any, Y_ref: Any, X: np.ndarray, cname: str, ref_name: str, at: str,
                       same_shape: bool = False) -> str | None:
    """How the training outputs of a random layer whose output is not of its input's shape (a model Linear -> ReLU ->
    Dropout) and of its reference, on the same batch ``X`` and weights, differ in their mean or mean square (each
    sample's over its entries, paired by sample: the difference's standard error is the masks' alone), more than
    :data:`SIGMAS` standard errors apart; None when they agree, or are not finite float arrays of one shape other
    than ``X``'s (no claim; ``same_shape``: of ``X``'s shape too, neither output ``X`` masked at one scale, redteam41
    L2). ``Y / X`` has no meaning there (:func:`_mean_ratio`), and the gradients' mean over a few
    draws cannot see a scale 30% off (verify39 F7: a model whose dropout left out 1/(1 - p) kept its points at every
    seed; one reading p as the keep probability, whose mean is right and whose mean square is 1/p against 1/(1 - p),
    at some seeds)."""
    arrays = [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) and a.dtype.kind in "fiu" else None
              for a in (Y, Y_ref)]
    if any(a is None for a in arrays) or arrays[0].shape != arrays[1].shape \
            or (arrays[0].shape == X.shape and not same_shape) or not arrays[0].shape or arrays[0].shape[0] != len(X) or len(X) < 2 \
            or not all(np.all(np.isfinite(a)) for a in arrays):
        return None
    for what, power in (("mean", 1), ("mean square", 2)):
        a, b = ((v ** power).reshape(len(X), -1).mean(axis=1) for v in arrays)
        d = a - b
        se = float(d.std(ddof=1) / np.sqrt(d.size))
        if abs(d.mean()) > SIGMAS * se + 1e-9 * (abs(a.mean()) + abs(b.mean())) + 1e-12:
            return (f"in training mode, {cname}'s output{at} has a {what} of {a.mean():.4g} over {X.shape[0]} samples, "
                    f"{ref_name}'s {b.mean():.4g} at the same inputs and weights ({abs(d.mean()) / se:.0f} standard "
                    "errors apart; the masks are random, these moments are not): a random layer inside (a dropout) "
                    "scales its kept entries otherwise, or drops another share. Inverted dropout drops an entry with "
                    "probability p and scales the kept ones by 1/(1 - p), so that E[Y] = X in training as in eval mode; "
                    "forward and backward agreeing with each other is not enough (the gradient check holds your mask "
                    "fixed)")
    return None


def scale_difference(Y: Any, X: np.ndarray, Y_ref: Any, cname: str, ref_name: str, at: str = "") -> str | None:
    """How a training output ``Y`` of ``X`` is not the reference's kind of mask, or None.

    The reference's ``Y_ref / X`` takes the values 0 and one scale ``s`` (inverted dropout's 1/(1 - p) on the kept
    entries: the same on every draw of the mask, so one call shows it); the layer's ``Y / X`` must take 0 and ``s``
    as well, within :data:`SCALE_RTOL`: other values on its nonzero entries (no mask: Y = X (1 + noise)) or another
    scale (p read as the probability of keeping an entry: 1/p) is a sentence saying so (redteam39 F3). Entries where
    ``X`` is 0 are left out.

    Parameters
    ----------
    Y, Y_ref : ndarray
        The layer's and the reference's training outputs of ``X`` (each of its own draw).
    X : ndarray
        The input both were given.
    cname, ref_name, at : str
        The layer's and the reference's names; the words naming the constructor arguments (``" at p=0.3"``).

    Returns
    -------
    str or None
        The sentence; None when they agree, or when the reference's output is not 0 and one scale, or either is not
        a finite float array of ``X``'s shape (no claim).
    """
    X = np.asarray(X)
    arrays = [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) and a.shape == X.shape and a.dtype.kind
              in "fiu" else None for a in (Y, Y_ref)]
    if any(a is None or not np.all(np.isfinite(a)) for a in arrays) or not np.any(on := X != 0):
        return None
    with np.errstate(all="ignore"):  # (an overflowing ratio is no scale: not finite, said as not one)
        (ref_share, s_ref), r = kept_scale(arrays[1][on], X[on]), arrays[0][on] / X[on]
    kept = r[r != 0]
    if s_ref is None or not kept.size:
        return None
    s = float(np.median(kept))
    ours = (f"{ref_name}'s keeps {ref_share:.0%} of the entries scaled by {s_ref:.4g}: Y / X is 0 or one scale, the "
            "same on every draw of the mask (inverted dropout's 1/(1 - p), p the probability of dropping an entry)")
    if not np.all(np.isfinite(kept)) or np.ptp(kept) > SCALE_RTOL * abs(s):
        return (f"in training mode, {cname}'s output{at} is not X times a mask of 0 and one scale: Y / X takes "
                f"{np.unique(kept).size} values on the entries it keeps, from {kept.min():.4g} to {kept.max():.4g}; "
                f"{ours}")
    if close(s, s_ref, SCALE_RTOL, 0.0):
        return None
    return (f"in training mode, {cname}'s output{at} keeps {kept.size / r.size:.0%} of the entries scaled by {s:.4g}; "
            f"{ours}. A scale of 1/p is p read as the probability of keeping an entry (CS231n's convention), "
            "1 the scale left out")


def _classic_dropout(diag: Diagnosis, inputs: Sequence[np.ndarray], owner: str) -> Finding | None:
    """The ``classic-dropout`` error of a layer that passed in both modes and is dropout scaled at test time (Hinton
    et al. 2012's original; Srivastava et al. 2014, section 10): its training output keeps some entries of the probe
    input unscaled and drops the others, its eval output is the input times one constant in (0, 1). Forward and
    backward agree with each other in each mode, so no gradient shows it; inverted dropout, which every framework and
    lesson 24 use, scales in training and is the identity in eval. Its sibling, ``dropout-scaled-twice``: inverted in
    training (kept entries scaled by 1/(1 - p)) and scaled by 1 - p again in eval (Angel-ML/mlcore issue 5; bugs43
    H1). None for anything else (one mode checked, inverted dropout, another layer)."""
    outs = {d.training: getattr(d.result, "_output", None) for d in [diag, *diag.other_modes] if d.result is not None}
    X = inputs[0] if len(inputs) == 1 else None
    Yt, Ye = outs.get(True), outs.get(False)
    if X is None or not isinstance(Yt, np.ndarray) or not isinstance(Ye, np.ndarray) or not (
            Yt.shape == Ye.shape == X.shape) or not np.all(X != 0):
        return None
    (share, s), (all_kept, c) = kept_scale(Yt, X), kept_scale(Ye, X)
    tol = 2 * max(rounding_rtol(Yt), rounding_rtol(Ye))  # a float32 layer's scales are float32-rounded (verify43c F8)
    if s is None or c is None or not 0 < share < 1 or all_kept != 1 or not 0 < c < 1 - tol:
        return None
    if s > 1 + tol and abs(s * c - 1) <= tol:  # 1/(1 - p) in training and (1 - p) again in eval (bugs43 H1)
        return _find("dropout-scaled-twice", owner=owner, kept=share, s=s, c=c)
    if abs(s - 1) > tol:
        return None
    return _find("classic-dropout", owner=owner, kept=share, c=c, inv=1 / c)


def constant_params(layer: Any, owner: str) -> list[str]:
    """The names of ``layer``'s parameters whose entries all hold one value (zeros, ones, any constant; a single
    entry: 0 or +-1), sorted: values that can hide a term of backward (``dX`` never multiplied by ``gamma`` = ones,
    a mask read before adding ``b`` = zeros, ``W`` for ``W.T`` when every entry is equal)."""
    try:
        params = V.layer_params(layer, owner)
    except GradcheckError:
        return []
    return sorted(k for k, v in params.items() if _constant(v))


def _constant(v: Any) -> bool:
    """Every entry of ``v`` holds one finite value (a single entry: 0 or +-1)."""
    a = np.asarray(v)
    return bool(a.size and np.all(np.isfinite(a)) and a.min() == a.max()
                and (a.size > 1 or abs(float(a.flat[0])) in (0, 1)))


def seed_weights(layer: Any) -> dict[str, np.ndarray]:
    """``{name: copy}`` of the seed protocol's weights without gradients (``self.W`` of a layer whose backward returns
    dX alone: :func:`gradcheck._adapters._seed_weights`; a sandboxed layer's read in its child), {} for any other
    layer or when they cannot be read."""
    from ._adapters import Adapted, seed_weight

    listed = (_protocol(layer, "seed") or {}).get("seed_weights") if _remote(layer) else \
        vars(layer).get("seed_weights") if isinstance(layer, Adapted) else None
    names = [w[0] for w in map(seed_weight, listed if isinstance(listed, list) else []) if w is not None]
    if not names:
        return {}
    try:
        values = adapter_call(layer, "state_values")
    except Exception:  # noqa: BLE001 - a child that cannot say: not drawn
        return {}
    return {k: values[k] for k in names if k in values}


def _transpose_blind(v: Any) -> bool:
    """``v`` is a square matrix (2 x 2 or more) equal to its transpose within the check's rtol 1e-6 (symmetric: the
    identity, a diagonal), not constant: ``dY @ W`` where ``dY @ W.T`` is due gives the right values there, so a
    missing ``.T`` passes (tester22s H1: a symmetric or identity init)."""
    a = np.asarray(v)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 2 or a.dtype.kind != "f" or _constant(a):
        return False
    return bool(np.all(np.isfinite(a)) and np.abs(a - a.T).max() <= 1e-6 * np.abs(a).max())


def _structure_word(v: Any) -> str:
    """How the values of ``v`` (constant, or square and symmetric: :func:`_transpose_blind`) read: "zeros", "ones",
    "constant", "identity", "diagonal" or "symmetric"."""
    a = np.asarray(v)
    if _transpose_blind(a):
        diag = np.diag(np.diag(a))
        return "identity" if np.array_equal(a, np.eye(len(a))) else "diagonal" if np.array_equal(a, diag) \
            else "symmetric"
    return {0.0: "zeros", 1.0: "ones"}.get(float(a.flat[0]), "constant")


def _constant_words(values: Mapping[str, Any]) -> str:
    """``"zeros/ones"``: the values of the constant (or symmetric: :func:`_structure_word`) arrays ``values``, as
    they read."""
    return "/".join(dict.fromkeys(_structure_word(v) for v in values.values()))


def drawn_header(diag: Diagnosis, layer: Any) -> str:  # noqa: ARG001 - the words were taken when drawn
    """The header line of a check whose parameters (or weights without gradients) start constant (``diag.drawn``),
    or ``""``."""
    if not diag.drawn:
        return ""
    names, seeds = diag.drawn, [n for n in diag.drawn if n in diag.drawn_seed]
    many = len(names) > 1
    what = "parameters" if many else "parameter"
    if seeds:
        what = (f"weight{'s' if len(seeds) > 1 else ''} {', '.join(seeds)} (no gradient: {'they' if len(seeds) > 1 else 'it'}"
                f" only {'enter' if len(seeds) > 1 else 'enters'} dX)" + (
                    f" and parameter{'s' if len(names) - len(seeds) > 1 else ''} "
                    f"{', '.join(n for n in names if n not in seeds)}" if len(seeds) < len(names) else ""))
    else:
        what = f"{what} {', '.join(names)}"
    line = (f"{what} {'are' if many else 'is'} {_drawn_state(diag.drawn_words)}, which can hide terms: also "
            f"checked at drawn values (normal, as the grader draws them)")
    if diag.drawn_only:
        line += ("; at its initial values the output is 0 for any input (no check), so the table and verdict below "
                 "are at the drawn values")
    elif diag.drawn_failed:
        line += ("; the layer passes at its initial values but FAILS at the drawn ones: the table and diagnosis "
                 "below are at the drawn values")
    return line


def _drawn_state(words: str) -> str:
    """``"constant at init (zeros)"``, ``"symmetric at init (identity: a square weight equal to its transpose hides
    a missing .T)"`` or both, for the words of :func:`_constant_words`."""
    sym = {"identity", "diagonal", "symmetric"}
    ws = set(words.split("/"))
    adj = " or ".join(a for a, there in (("constant", bool(ws - sym)), ("symmetric", bool(ws & sym))) if there)
    return f"{adj} at init ({words}" + (": a square weight equal to its transpose hides a missing .T)" if ws & sym
                                        else ")")


def at_drawn_params(layer: Any, diag: Diagnosis, check: Any, seed: int, only: bool = False) -> Diagnosis:
    """``diag`` (a passing diagnosis of ``layer`` at its own parameters) when no parameter, and no weight without a
    gradient (the seed protocol's ``self.W``: :func:`seed_weights`), is constant (:func:`constant_params`); else
    ``check`` (the same diagnosis, without twin or reference, which hold their own values) of ``layer`` with every
    parameter and every such weight drawn as the grader draws them (:func:`gradcheck._validation.drawn_values`),
    written in place (a weight without a gradient by :func:`gradcheck._adapters.set_weights`, in the sandbox's child
    for a sandboxed layer) and put back after (a copy could lose what closures hold): its diagnosis when it fails
    with the gradients compared (``drawn_failed``), else ``diag``; either with ``drawn`` set (the header says so:
    :func:`drawn_header`). ``only``: ``diag`` is no check (weights without gradients all zero: the output is 0 for any
    input), so the drawn check is the verdict, passed or not (``drawn_only``)."""

    params, seeds = V.layer_params(layer, diag.name), seed_weights(layer)
    const = {k: v for k, v in {**params, **seeds}.items() if _constant(v) or _transpose_blind(v)}  # (constant_params's rule, params read once)
    if not const:
        return diag
    words = _constant_words({k: const[k] for k in sorted(const)})
    kept = {k: np.array(v, copy=True) for k, v in params.items()}
    put = functools.partial(adapter_call, layer, "set_weights")

    def run():
        try:
            drawn = V.drawn_values({**{k: params[k].shape for k in params}, **{k: v.shape for k, v in seeds.items()}},
                                   seed)
            for k in params:
                params[k][...] = drawn[k]
            if seeds:
                put({k: drawn[k] for k in seeds})
            return check(layer)
        finally:
            for k, v in kept.items():
                params[k][...] = v
            if seeds:
                with contextlib.suppress(Exception):
                    put(seeds)
    ran, d, got, stop = _again_told(run, "at the drawn parameters", keep_pass=only)
    state = f"{', '.join(sorted(const))} {'are' if len(const) > 1 else 'is'} {_drawn_state(words)}"
    if stop is not None:  # raised, stopped or no verdict there: never silent, never "also checked"
        first = "at its initial parameters" + (" (where its output is 0 for any input: no check)" if only else "")
        if (broke := _broke_there(diag, got, stop, first)) is not None:
            broke.drawn, broke.drawn_seed, broke.drawn_words, broke.drawn_failed = sorted(const), sorted(seeds), \
                words, True
            return broke
        return _no_verdict_said(diag, f"{state}, which can hide terms: also tried at drawn values", stop,
                                "its initial parameters")
    diag.drawn, diag.drawn_seed, diag.drawn_words = sorted(const), sorted(seeds), words
    if d is None:
        return diag
    d.drawn, d.drawn_seed, d.drawn_words, d.drawn_failed, d.drawn_only = diag.drawn, diag.drawn_seed, words, \
        not d.passed, only
    return d


def _stopped(d: Any) -> bool:
    """Whether ``d``, a diagnosis, stopped before comparing the gradients (no result, a stopping error) or met a NaN
    or inf (:func:`_again_at`); a loss's :class:`CheckResult` never (check_loss raises there)."""
    return not isinstance(d, CheckResult) and (d.result is None or d.error is not None or "non-finite" in d.codes)


def _again_at(run: Any, keep_pass: bool = False) -> tuple[bool, Any]:
    """The one "check again at another point" step, of layers (:func:`at_drawn_params`: drawn parameters;
    :func:`at_straddled_inputs`: inputs around forward's constants; :func:`at_other_batch`: axes of one size grown)
    and losses (``gradcheck check``'s ``_loss_again``: predictions around forward's bounds, targets at its
    constants, another batch): ``(ran, d)``, ``d`` the outcome ``run()`` gave (a diagnosis, or a loss's
    :class:`CheckResult`) when it FAILS with the gradients compared (its verdict wins over the first point's PASS),
    else None (passed, or stopped there: :func:`_stopped`); ``keep_pass``: a passing ``d`` too (the first point was
    no check: weights without gradients all zero; or the caller reads the pass); ``ran`` False when ``run`` raised
    (the code cannot be checked there) or gave no verdict (:func:`_no_verdict`): the first point's verdict stands,
    and no header claims the second."""
    try:
        d = run()
    except Exception as e:  # noqa: BLE001 - code that cannot be checked there: at the first point only
        if _own_fault(e) or isinstance(e, GraderError):  # (an InternalError, the sandbox's own failure: verify48d F6)
            raise  # gradcheck's own fault must not leave the first point's PASS standing (newuser38 F1's template)
        return False, None
    if _no_verdict(d):  # no claim of the second point, as of one that cannot be checked (merge47)
        return False, None
    if (d.passed and not keep_pass) or _stopped(d):
        return True, None
    return True, d


def _again_told(run: Any, where: str, keep_pass: bool = False) -> tuple[bool, Any, Any, tuple[bool, str] | None]:
    """:func:`_again_at` of ``run`` with what the second point gave kept and read: ``(ran, d, got, stop)``, ``ran``
    and ``d`` :func:`_again_at`'s, ``got`` what ``run`` returned or raised (None when nothing), ``stop`` None when
    the second point gave a PASS or FAIL to take, else :func:`other_point_stop`'s ``(failed, why)`` at ``where``
    (``"at the drawn parameters"``): ``failed``, backward raised or returned a wrong shape there while forward ran,
    is the step's verdict (:func:`_broke_there`: a right backward runs wherever its forward runs); else no verdict
    there, which the caller says (:func:`_no_verdict_said`, a loss's ``_loss_stop``), never drops (again48: every
    check-again step of layers and losses, one rule)."""
    seen: list = []

    def kept():
        try:
            seen.append(run())
        except Exception as e:  # noqa: BLE001 - kept to tell why, raised on to _again_at
            seen.append(e)
            raise
        return seen[-1]

    ran, d = _again_at(kept, keep_pass)
    got = seen[-1] if seen else None
    if d is not None or (ran and got is not None and not isinstance(got, BaseException) and not _stopped(got)):
        return ran, d, got, None
    return ran, d, got, other_point_stop(got, where)


def _broke_there(diag: Diagnosis, got: Any, stop: tuple[bool, str], first: str) -> Diagnosis | None:
    """``got``, the diagnosis at another point where backward raised or returned a wrong shape while forward ran
    (``stop``'s ``failed``: :func:`_again_told`), as the verdict: its error a :class:`GradientShapeError` saying
    ``"<name> passes <first> but <where> its backward fails: ..."``; None when ``stop`` is no verdict, or the
    check there raised instead of giving a diagnosis (no claim)."""
    failed, why = stop
    if not failed or not isinstance(got, Diagnosis):
        return None
    got.error = AgainError(f"{diag.name} passes {first} but {why}")
    return got


def _no_verdict_said(diag: Diagnosis, tried: str, stop: tuple[bool, str], first: str) -> Diagnosis:
    """``diag``, its verdict kept, with the info finding (``again-note``) that the check again at another point
    (``tried``: what can hide a bug and where it was tried) gave no verdict, and why (``stop``, :func:`_again_told`)."""
    diag.findings.append(Finding("again-note", f"{tried}: no verdict there: {stop[1]}; the verdict is at {first} "
                                 "alone", severity="info"))
    return diag


def _no_verdict(d: Any) -> bool:
    """Whether outcome ``d`` (a diagnosis or a loss's :class:`CheckResult`) gives no verdict: a gradient NOT CHECKED
    (an atol passing any gradient of its size) or none compared, and none failing, no error finding, in any mode.
    Read as a FAIL at another point it turned a PASS into "passes at the drawn input but FAILS there" with nothing
    failing (merge47: ``--atol 5e-3`` of a right ``X / N`` at (5, 5), NOT CHECKED at a batch of 6; a loss's alike)."""
    every = [d, *d.other_modes]
    res = [x if isinstance(x, CheckResult) else x.result for x in every]
    return any(r is not None and (r.unchecked or not r.compared) for r in res) and not any(
        getattr(x, "codes", None) or (r is not None and r.failing_tensors) for x, r in zip(every, res))


def _own_fault(e: BaseException) -> bool:
    """Whether ``e`` is a programming error of this module's own (a TypeError, NameError, AttributeError, KeyError or
    IndexError raised in a frame of ``gradcheck/diagnose.py`` itself), not the checked layer's: a second point's
    check that raises so must not be read as "cannot be checked there" (its FAIL would be lost)."""
    if not isinstance(e, (TypeError, NameError, AttributeError, KeyError, IndexError)):
        return False
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename == __file__


def at_other_args(layer: Any, X: Any, diag: Diagnosis, check: Any, seed: int) -> Diagnosis:
    """``diag`` (a passing diagnosis of ``layer``) checked again with each float constructor argument at a value that
    can hide a wrong backward (p = 0.5, alpha = 1.0) built at its other value, the others as built: the loop
    :func:`gradcheck.sources.each_other_arg` (shared with :func:`gradcheck.check_layer` and so the grader).

    Parameters
    ----------
    layer : object
        The diagnosed layer.
    X : array_like or shapes
        Its input (the diagnosis's inputs are drawn from it for a sandboxed layer built again).
    diag : Diagnosis
        Its passing diagnosis.
    check : callable
        ``check(layer_built)``: the same diagnosis of the layer built at the other value.
    seed : int
        The diagnosis's seed.

    Returns
    -------
    Diagnosis
        ``check``'s diagnosis of the first that FAILS, named ``"Dropout [p=0.3]"`` (``args_failed``), else ``diag``;
        either with ``other_args`` set (the header says which values were checked: :func:`args_header`).
    """
    def results(d: Diagnosis) -> list[CheckResult]:  # a gradient compared, no error, finite (as _again_at)
        every = [d, *d.other_modes]
        if d.error is not None or "non-finite" in d.codes or any(x.result is None for x in every) or (
                not d.passed and not d.result.failing_tensors):
            return []
        return [x.result for x in every]

    unbuilt: list = []
    stops: list = []
    checked, failed = each_other_arg(layer, _probe_inputs(X, seed, diag.name), diag, check, results, None, unbuilt,
                                     stops)
    diag.other_args = checked
    if line := not_rechecked_line(diag.name.split(" [")[0], unbuilt, unknown_args(layer)):  # through its constructor
        diag.findings.append(Finding("other-args-note", line, severity="info"))  # (verify37 F5, as check_layer says)
    if failed is None:
        return _args_stops(diag, stops)
    k, _, o = checked[-1]
    return _named_at(failed, diag, k, o, checked, True)


def _named_at(d: Diagnosis, diag: Diagnosis, k: str, o: float, checked: list, failed: bool) -> Diagnosis:
    """``d``, the diagnosis of ``diag``'s layer built with ``k=o``, named so in every mode (``"Leaky [slope=0.7]"``,
    its other modes' rows too: verify48d F7, the training row lacked the value), with ``other_args`` ``checked`` and
    ``args_failed`` ``failed`` (the header's :func:`args_header` then says the table is at ``k=o``)."""
    d.name, d.other_args, d.args_failed = f"{diag.name} [{k}={o!r}]", checked, failed
    for m in d.other_modes:
        if f"[{k}=" not in m.name:
            m.name = f"{m.name} [{k}={o!r}]"
    return d


def _args_stops(diag: Diagnosis, stops: list) -> Diagnosis:
    """``diag`` (passing at every other constructor argument checked) read with ``stops``, the arguments whose check
    at the other value raised or stopped (:func:`gradcheck.sources.each_other_arg`), by the one rule of a check again
    at another point (:func:`_again_told`): the first where backward raised or returned a wrong shape while forward
    ran FAILs, its error naming the value (``"Leaky passes at slope=1.0 but at slope=0.7 its backward fails: ..."``),
    named ``"Leaky [slope=0.7]"``; the others keep the verdict, with a note each saying why there is none there.
    Unlike a wrong value there, which FAILs only where forward's output changes (a knob backward alone reads computes
    another function, the layer's own), a backward that breaks is no function at all: it FAILs either way."""
    for k, v, o, got in stops:
        failed, why = other_point_stop(got, f"at {k}={o!r}", (k, v, o))
        if failed and isinstance(got, Diagnosis) and got.error is None and (got.result is not None or got.errors):
            # a finding FAILs it there with the gradients compared (dX returned as float32: verify48d F2): its table
            # and diagnosis are the verdict, the header naming the value (args_header)
            return _named_at(got, diag, k, o, [*diag.other_args, (k, v, o)], True)
        if failed:
            there = got if isinstance(got, Diagnosis) else dataclasses.replace(  # raised while built (its probe)
                diag, result=None, other_modes=[], findings=[Finding("student-code", str(got), severity="error")])
            broke = _broke_there(diag, there, (failed, why), f"at {k}={v!r}")
            return _named_at(broke, diag, k, o, diag.other_args, False)
        diag.findings.append(Finding("again-note", f"constructor argument {k}={v!r} "
                                     f"({SYMMETRIC_ARGS[v][1].format(k=k)}) can hide a wrong backward: also tried at "
                                     f"{k}={o!r}: no verdict there: {why}; the verdict is at {k}={v!r} alone",
                                     severity="info"))
    return diag


def args_header(diag: Diagnosis) -> str:
    """The header line of a check made again at other constructor arguments (:func:`at_other_args`), or ``""``
    (:func:`gradcheck.sources.args_line`)."""
    return args_line(diag.other_args, None if not diag.args_failed else [] if diag.result is None  # (a float32 Y)
                     else diag.result.failing_tensors)


def _compared_constants(layer: Any) -> list[float]:
    """Forward's constants its first input is compared with (:func:`gradcheck._switch_reach.compared_constants`): a
    sandboxed layer's from its protocol (read in its child), a local one's read here."""
    from ._adapters import Adapted
    from ._switch_reach import compared_constants

    if (proto := _protocol(layer)) is not None and "compared_constants" in proto:
        vals = proto.get("compared_constants")
        return [float(v) for v in vals] if isinstance(vals, list) else []
    if _remote(layer):
        return []
    try:
        return compared_constants(layer.obj if isinstance(layer, Adapted) else layer)
    except Exception:  # noqa: BLE001 - an unreadable forward: no constants known
        return []


#: How near a constant forward compares its first input with the drawn entries must come on each side of it, else the
#: layer is checked around it too (:func:`_unchecked_constants`): a backward whose threshold is off by less (``dZ[Z <=
#: 0.5] = 0`` for ReLU's 0) is wrong only at entries between the two.
SIDE_REACH = 0.5


def _unchecked_constants(layer: Any, inputs: Sequence[np.ndarray]) -> tuple[list[float], list[float]]:
    """``(beyond, one_sided)``: the constants forward compares its first input with (:func:`_compared_constants`)
    within ``V.STRADDLE_MAX`` that the drawn ``inputs[0]`` does not check around. ``beyond``: those beyond its range,
    where a forward that gives zeros on the drawn inputs may not (a softshrink at 4: ``np.where(np.abs(X) > 4, ...)``),
    so that is no mask dropping every entry but a layer checked around them (:func:`at_straddled_inputs`; tester22s
    H4). ``one_sided``: those within its range with no drawn entry within :data:`SIDE_REACH` on one side (tester33
    F10: a ReLU backward thresholding at 0.5 PASSed at (3, 4), seed 0, where no entry lay in (0, 0.5]), checked
    around as the others are, entries at least ``V.STRADDLE_GAP`` away from each (no step crosses the kink)."""
    x0 = np.asarray(inputs[0]) if inputs else np.zeros(0)
    if x0.dtype.kind != "f" or x0.size == 0:
        return [], []
    lo, hi, x = float(x0.min()), float(x0.max()), x0.ravel()
    cs = [c for c in _compared_constants(layer) if abs(c) <= V.STRADDLE_MAX]
    return [c for c in cs if c < lo or c > hi], [c for c in cs if lo <= c <= hi and not (
        np.any((x > c) & (x <= c + SIDE_REACH)) and np.any((x < c) & (x >= c - SIDE_REACH)))]


def _grown_shape(shape: tuple) -> tuple | None:
    """``shape`` with each axis that shares its size (2 or more) with another grown until no two axes are equal, or
    None when no two are: axis 0 equal to the last (bugs43 H4, any number of axes); for three axes or fewer also any
    other pair, the last axis (a layer's features, sized by its weights) kept and the other grown (outside44 H2: an
    RMS norm reading ``D = X.shape[1]`` at (3, 5, 5), a mean over time dividing by ``X.shape[0]`` at (4, 4, 3))."""
    if len(shape) > 3:  # an image's H == W has its note (check_layer's square-image note), not this check
        return (shape[0] + 1, *shape[1:]) if shape[0] == shape[-1] >= 2 else None
    pairs = [(i, j) for i in range(len(shape)) for j in range(i + 1, len(shape)) if shape[i] == shape[j] >= 2]
    if not pairs:
        return None
    out = list(shape)
    for a in sorted({a for p in pairs for a in p} - {len(shape) - 1}):
        while out[a] in out[:a] + out[a + 1:]:
            out[a] += 1
    return tuple(out)


def at_other_batch(layer: Any, X: Any, diag: Diagnosis, check: Any, seed: int) -> Diagnosis:
    """``diag`` (a passing diagnosis of ``layer``, whose first input is float with two axes of one size: a batch size
    equal to its last axis, a 5 x 5 input of a layer over 5 features, a CS231n pair's x beside its gamma and beta; a
    (3, 5, 5) or (4, 4, 3) sequence, :func:`_grown_shape`) checked again, by :func:`_again_at`, with those axes
    grown, drawn anew: there a backward reading a size from the one axis for the other (a layer norm's
    ``D = dY.shape[0]``) gives the right values (bugs43 H4, outside44 H2: it PASSed). ``check(X2)`` is the diagnosis
    at inputs ``X2``. Returns the diagnosis there when it FAILS, else ``diag``; either with an info finding saying so
    (``other-batch-note``)."""
    inputs = _probe_inputs(X, seed, diag.name)
    x0 = inputs[0]
    if x0.dtype.kind != "f" or x0.ndim < 2 or (shape := _grown_shape(x0.shape)) is None:
        return diag
    n = x0.shape[0]
    # the first input grown, the others as they are (a CS231n pair's gamma and beta: verify43c F3); an input that
    # has the batch axis too makes the check raise there: no claim
    X2 = [np.random.default_rng([seed, 43]).standard_normal(shape).astype(x0.dtype), *inputs[1:]]
    x = V.input_names(layer, 1)[0]
    _, d, got, stop = _again_told(lambda: check(X2), f"at {x} of shape {shape}", keep_pass=True)
    a = next(i for i in range(x0.ndim) if shape[i] != x0.shape[i])  # the first axis grown
    if a == 0 and x0.shape[0] == x0.shape[-1]:
        line = (f"the first axis of {x} ({n}) equals its last, so a backward reading a size from the one for the "
                f"other passes there: also checked with {shape[0]} along the first axis")
    else:
        line = (f"{x} of shape {x0.shape} has two axes of one size, so a backward reading a size from the one for "
                f"the other passes there: also checked at shape {shape}")
    if stop is not None:  # raised, stopped or no verdict there: never silent (verify47b F6, F7; _again_told)
        if (broke := _broke_there(diag, got, stop, f"at the drawn {x} of shape {x0.shape}")) is not None:
            broke.findings.append(Finding("other-batch-note", line + ": the layer passes at the drawn input but "
                                          "FAILS there (see the error below)", severity="info"))
            return broke
        tried = line.replace("also checked", "also tried")
        diag.findings.append(Finding("other-batch-note", f"{tried}: no verdict there: {stop[1]}; the PASS is at the "
                                     f"drawn input alone (check at a non-square --input-shape too if {x} can take "
                                     "one)", severity="info"))
        return diag
    if d.passed:
        diag.findings.append(Finding("other-batch-note", line + " (passed)", severity="info"))
        return diag
    if d.error is None and (ts := [t for t in (d.result.failing_tensors if d.result else []) if t]):
        # right at the drawn shape, wrong with one axis grown: the sizes of two axes swapped, whatever the numbers
        # there resemble (the statistics' terms 6/5 too large read as Bessel's N-1, or as missing: verify43c F11)
        sq = tuple(k + 1 if x0.shape.count(k) > 1 else k for k in x0.shape)  # the equal axes grown alike
        _, d3 = _again_at(lambda: check([np.random.default_rng([seed, 45]).standard_normal(sq).astype(x0.dtype),
                                         *inputs[1:]]), keep_pass=True)
        kept = d3 is not None and not d3.passed and d3.error is None  # wrong where the axes are equal again
        d.findings = [f for f in d.findings if f.severity != "error"] + [_find(
            "size-kept" if kept else "wrong-axis-size", ", ".join(ts), verb="is" if len(ts) == 1 else "are", x=x,
            s0=x0.shape, s1=shape, s2=sq, a=a, n=x0.shape[a], n1=shape[a])]  # verify44b F7: a stale N at 6 x 6
    d.findings.append(Finding("other-batch-note", line + ": the layer passes at the drawn input but FAILS there; "
                              "the table and diagnosis are at that input", severity="info"))
    return d


def at_straddled_inputs(layer: Any, X: Any, diag: Diagnosis, check: Any, seed: int) -> Diagnosis:
    """``diag`` (a passing diagnosis of ``layer`` at the drawn inputs) checked again, by :func:`_again_at`, at
    inputs around each constant forward compares its first input with (``np.clip(X, 0, 6)``, ``X > 20``:
    :func:`_compared_constants`) that lies beyond the drawn input's range and within ``V.STRADDLE_MAX``
    (:func:`gradcheck._validation.straddled_values`; tester21s H2: a ReLU6 whose backward forgets the clip at 6
    passed, as standard-normal inputs never reach 6). ``check(X2)`` is the diagnosis at inputs ``X2``. ``diag`` may
    also be one failing as "wrong at another input" (``stale-cache``: a probe's other input reached the bound): the
    check there wins only when it names the bound (``bound-side``). Returns the diagnosis there when it fails
    (``straddle_failed``), else ``diag``; either with ``straddled`` set (the header
    says so: :func:`point_headers`)."""
    consts = _compared_constants(layer)
    if not consts:
        return diag
    inputs = _probe_inputs(X, seed, diag.name)
    x0 = inputs[0]
    if x0.dtype.kind != "f" or x0.size == 0:
        return diag
    outside = sum(_unchecked_constants(layer, inputs), [])
    if not outside:
        return diag
    X2 = [V.straddled_values(x0, outside), *inputs[1:]]
    cs = " and ".join(f"{c:g}" for c in outside)
    name = V.input_names(layer, len(inputs))[0]
    ran, d, got, stop = _again_told(lambda: check(X2), f"at inputs around {cs}")
    if stop is not None:  # raised, stopped or no verdict there: never silent, never "also checked"
        if diag.passed and (broke := _broke_there(diag, got, stop, f"at the drawn {name}")) is not None:
            broke.straddled, broke.straddle_span, broke.straddle_failed, broke.straddle_at = outside, (
                name, float(np.abs(x0).max())), True, X2
            broke.drawn, broke.drawn_seed, broke.drawn_words, broke.drawn_only = diag.drawn, diag.drawn_seed, \
                diag.drawn_words, diag.drawn_only
            return broke
        return _no_verdict_said(diag, f"forward compares {name} with {cs}: also tried at inputs around {cs}", stop,
                                f"the drawn {name}") if diag.passed else diag
    span = (name, float(np.abs(x0).max()))
    diag.straddled, diag.straddle_span = outside, span
    if d is None:
        return diag
    d.straddled, d.straddle_span, d.straddle_failed, d.straddle_at = outside, span, True, X2
    d.drawn, d.drawn_seed, d.drawn_words, d.drawn_only = diag.drawn, diag.drawn_seed, diag.drawn_words, diag.drawn_only
    if not diag.passed:  # wrong at another input (a probe's): taken only when a bound of forward's explains it
        _name_bound(layer, X, d, seed)
        if "bound-side" not in d.codes:
            diag.straddled, diag.straddle_span = [], None
            return diag
    return d


def _name_bound(layer: Any, X: Any, diag: Diagnosis, seed: int) -> None:
    """Put first in ``diag``'s findings the bound of forward's it forgets (``bound-side``): the first input's gradient
    wrong at exactly the entries on one side of a constant forward compares the input with
    (:func:`_compared_constants`), entries on both sides checked (tester21s H2, M5: a hard sigmoid whose mask forgets
    the clip at 3 was named "derivative evaluated at the output Y"). A constant 0 is named only at inputs drawn
    around it (``straddled``): a ReLU's mask has its own names (``missing-local-derivative``)."""
    consts = _compared_constants(layer)
    res = diag.result
    if not consts or res is None or "bound-side" in diag.codes:
        return
    inputs = diag.straddle_at if diag.straddle_failed and diag.straddle_at else _probe_inputs(X, seed, diag.name)
    x = inputs[0]
    name = V.input_names(layer, len(inputs))[0]
    man, num = (res.gradients.get(k, {}).get(f"d{name}") for k in ("manual", "numerical"))
    if man is None or num is None or np.shape(man) != x.shape or np.shape(num) != x.shape:
        return
    man, num = np.asarray(man, dtype=np.float64), np.asarray(num, dtype=np.float64)
    atol = res.atol_of(f"d{name}")  # the check's own rule, with the atol dX was compared with (its own scale too)
    wrong = np.isfinite(num) & ~(relative_error(man, num, tiny=max(atol / res.rtol, 1e-300)) <= res.rtol)
    if not wrong.any():
        return
    named = [c for c in consts if c != 0 or diag.straddled]
    sides = [(f"{name} > {c:g}", f"{c:g}", x > c) for c in named] + [(f"{name} < {c:g}", f"{c:g}", x < c)
                                                                     for c in named]
    sides += [(f"{name} < {lo:g} or {name} > {hi:g}", f"{lo:g} and {hi:g}", (x < lo) | (x > hi))  # a clamp's ends
              for lo, hi in itertools.combinations(named, 2)]
    for side, c, part in sides:
        if part.any() and (~part).any() and np.array_equal(wrong, part):
            flat = bool(np.all(np.abs(num[part]) <= atol))
            i = tuple(int(v) for v in np.argwhere(part)[0])
            got, exp = float(man[i]), float(num[i])
            if flat:
                what = (f"forward is flat there (its output does not move with {name}), so the gradient there is 0, "
                        f"but backward gives {got:.6g} at d{name}{list(i)}: its mask forgets the bound "
                        f"at {c}")
                fix = (f"apply the same bounds in backward as in forward, e.g. dY * (({name} > lo) & ({name} < hi)) "
                       "for np.clip(X, lo, hi)")
            else:
                what = (f"backward's derivative there is not forward's (d{name}{list(i)}: got {got:.6g}, expected "
                        f"{exp:.6g})")
                fix = f"differentiate the branch forward takes where {side}, with the same comparison in backward"
            k = int(part.sum())
            t = f"d{name}"
            diag.findings[:] = [f for f in diag.findings if not (f.tensor == t and f.code in (*SIGNATURES, "wrong-values"))]
            diag.findings.insert(0, _find("bound-side", t, k=k, s="y" if k == 1 else "ies", side=side, what=what,
                                          fix=fix, x=name, c=c))
            return


def point_headers(diag: Diagnosis, layer: Any) -> list[str]:
    """The header lines of a check also made at another point: drawn parameters (:func:`drawn_header`), inputs
    around forward's constants (``"forward compares X with 6, beyond the drawn inputs (|x| <= 2.9): also checked at
    inputs around 6"``)."""
    lines = [drawn_header(diag, layer)] if diag.drawn else []
    lines += [args_header(diag)] if diag.other_args else []
    if diag.straddled:
        name, top = diag.straddle_span
        cs = " and ".join(f"{c:g}" for c in diag.straddled)
        near = all(abs(c) <= top for c in diag.straddled)  # tester33 F10: within the range, one side unprobed
        where = (f"where the drawn inputs have no entry within {SIDE_REACH:g} on one side" if near else
                 f"beyond the drawn inputs (|{name.lower()}| <= {math.ceil(top * 10) / 10:g})")
        line = (f"forward compares {name} with {cs}, {where}: also checked at inputs around {cs} (entries on both "
                f"sides, at least {V.STRADDLE_GAP:g} away)")
        if diag.straddle_failed:
            line += (f"; the layer passes at the drawn inputs but FAILS around {cs}: the table and diagnosis below "
                     "are at those inputs")
        lines.append(line)
    return lines


def _diagnose_variants(layer, X, owner: str, training, more, kw) -> Diagnosis:
    """:func:`_diagnose_modes` of forward's own switch and of each other combination of its switches
    (:func:`switch_variants`); ``more``: ``(twin, reference, localize, upstream)``."""
    variants, set_switch, labels = switch_variants(layer)
    modes = functools.partial(_diagnose_modes, layer, X, owner, more=more, kw=kw)
    if variants:
        set_switch(None)  # the rows of forward's own switch named with the others' defaults
        return checked_variants(modes(training), owner, training, (variants, set_switch, labels), modes)
    return modes(training)


def _diagnose_modes(layer, X, owner: str, training, more, kw) -> Diagnosis:
    """:func:`diagnose_layer` of the modes ``training`` selects, with forward's switches as they are set."""
    seed = kw["seed"]
    diags, notes, identity, same = [], [], False, False
    for t in training_modes(layer, training):
        if t and diags and (same := _same_output(layer, X, owner, seed, t)):
            if same == "same backward" and diags[0].passed and not forward_state(_protocol(layer)):  # one verdict
                # shown, eval's; state forward writes (running statistics set from this batch) can make the two
                # forwards equal here and different functions: then training is checked (newuser31b F2's twin)
                notes.append(SAME_IN_BOTH_MODES + SAME_BACKWARD_CHECKED)
                break
        with warnings.catch_warnings():
            if diags:  # the batch-of-one warning is said once, in the first mode
                warnings.filterwarnings("ignore", message=re.escape(f"batch of one: {owner} "))
            d = _diagnose_mode(layer, X, owner, t, more, kw)
        if same and not diags[0].passed:  # eval failed: one verdict shown, eval's, unless training passes
            if not d.passed:  # (newuser31b F2: ML-From-Scratch's BatchNormalization, running statistics from the
                notes.append(SAME_IN_BOTH_MODES)  # first batch, FAILed in eval without a word of its training mode)
                break
            notes.append(SAME_Y_EVAL_ONLY)
            diags.append(d)
            break
        if same and d.passed:  # Z13: backward may branch on the mode whatever Y does: checked, shown once
            notes.append(SAME_IN_BOTH_MODES + SAME_BACKWARD_CHECKED)
            break
        notes += [SAME_Y_OTHER_BACKWARD] if same else []
        identity = identity or not t and _identity_in_eval(layer, X, owner, kw["seed"])
        note = "" if t or training != "auto" else _eval_identity(layer, X, owner, d, kw["seed"])
        if note:  # a Dropout's eval forward: the identity; checked again after the training mode
            notes.append(note)
            continue
        diags.append(d)
    if identity and training in ("auto", False):  # a validation pass after a training step
        diags = _eval_after_training(layer, X, owner, training, diags, notes, lambda: _diagnose_mode(
            layer, X, owner, False, more, kw), kw["seed"])
    for d in diags if len(diags) > 1 else ():
        d.name = f"{owner} [{mode_label(layer, d.training)}]"
        if d.result is not None:
            d.result.name = d.name
    diags = diags or [d]  # never empty: the last mode's diagnosis when each was set aside
    _inverted_switch(layer, X, diags, seed)
    first = next((d for d in diags if not d.passed), diags[0])
    first.other_modes = [d for d in diags if d is not first]
    if first.result is not None:
        first.result.other_modes = [d.result for d in first.other_modes if d.result is not None]
        first.result.notes += [mode_worded(n, layer) for n in notes]
    return first


def _read_layer(L: _Layer, layer: Any, training: bool, reference: Any) -> None:
    """What the signatures read of ``layer`` beside its numbers, set on ``L``: its mode, protocol, outputs, gradient
    slots, reference, dropout rate and number settings."""
    L.eval_mode = _eval_mode(layer, training)
    L.protocol, L.outputs = _protocol_text(layer), _outputs_data(layer)
    L.returns_weights = bool(_protocol(layer, "returned") if _remote(layer)
                             else getattr(layer, "_gradcheck_returns_weights", False))
    L.slots = grad_slots(layer)
    L.reference = None if reference is None else f"{type(reference).__module__}.{type(reference).__name__}"
    L.reference_eps = getattr(reference, "eps", None)  # a norm's, compared with forward's own (:func:`_sqrt_eps`)
    L.layer = layer
    used = _forward_reads(layer)
    L.rate, L.numbers = _dropout_rate(layer), {k: v for k, v in _layer_numbers(layer).items() if k in used}
    L.other_mode = _other_mode(layer, training, L.inputs)
    L.seed_weights = functools.cache(functools.partial(seed_weights, layer))


def _switch_said(layer: Any, training: bool) -> str:
    """How mode ``training`` is set, in the layer's own words: ``self.dropout_param['mode'] = 'test'``,
    ``train_flg=False``, ``training=False`` (its ``mode_keyword``, in the sandbox's protocol or on the adapted
    layer)."""
    info = _protocol(layer) or {}
    mk = info.get("mode_keyword") or getattr(layer, "__dict__", {}).get("mode_keyword")
    if not (isinstance(mk, (list, tuple)) and len(mk) == 3 and isinstance(mk[0], str)):
        return f"training={training}"
    name, value = mk[0], mk[2] if training else mk[1]
    quoted = isinstance(value, str) and len(value) > 1 and value[0] in "'\"" and value[-1] == value[0]
    said = value if quoted else repr(value)  # a sandboxed layer's protocol carries the value as written
    return f"{name} = {said}" if name.startswith("self.") else f"{name}={said}"


def _other_mode(layer: Any, training: bool, inputs: Sequence[np.ndarray] = ()) -> tuple[Any, dict[str, str]] | None:
    """``(make, fields)`` for a layer with a training and an eval mode: ``make()`` returns ``(forward in the other
    mode, float64; its params; the copy it runs)`` on a copy of the layer (a training forward may update running
    statistics, here or in a CS231n pair's ``bn_param``: the checked layer is left as it was; a sandboxed layer is
    copied in its child), ``fields`` those of backward-ignores-mode. A class whose forward's switch the adapters set
    (training=, a mode string, CS231n's ``self.dropout_param['mode']``), or a CS231n function pair, its
    ``*_param['mode']`` (train/test) flipped: on a copy of a pair run here, and for a sandboxed pair by building it
    again in its child from its ``--init`` with the mode flipped (``RemoteLayer.loaded_with``; ``inputs``: the
    probe, as it was loaded); None otherwise (one mode)."""
    from ._adapters import FunctionPair

    fix = ("branch on the mode in backward as forward does: keep it where backward reads it ({keep}) and, in {mode}, "
           "differentiate the forward of that mode")
    remote = _remote(layer) and (_protocol(layer) or {}).get("protocol") == "cs231n"
    if isinstance(layer, FunctionPair) or remote:
        kwargs = (layer.__dict__.get("_loaded") or (None,) * 3)[2] if remote else layer._kwargs
        key = next((k for k, v in (kwargs or {}).items() if isinstance(v, dict)
                    and v.get("mode") in ("train", "test", "eval")), None)
        if key is None:
            return None
        mode = kwargs[key]["mode"]
        other = "test" if mode == "train" else "train"

        def make():
            if remote:
                cp = layer.loaded_with({**kwargs, key: {**kwargs[key], "mode": other}}, inputs)
            else:
                cp = copy.deepcopy(layer)
                cp._kwargs[key]["mode"] = other
            return _f64(_Proxy(cp), False), V.layer_params(cp, "copy"), cp

        return make, {"mode": f"{mode} mode", "other": f"{other}-mode", "how": f"{key}['mode'] = {mode!r}",
                      "other_how": f"{key}['mode'] = {other!r}",
                      "fix": fix.format(keep=f"{key} is in the cache: branch on {key}['mode']", mode=f"{mode} mode")}
    if training_modes(layer, "auto") != [False, True]:
        return None
    mode, other = ("training mode", "eval-mode") if training else ("eval mode", "training-mode")

    def make():
        cp = copy.deepcopy(layer)
        return _f64(_Proxy(cp), not training), V.layer_params(cp, "copy"), cp

    return make, {"mode": mode, "other": other, "how": _switch_said(layer, training),
                  "other_how": _switch_said(layer, not training),
                  "fix": fix.format(keep="e.g. self.mode = mode in forward", mode=mode)}


def _mode_ignored_signature(L: _Layer, key, m, n):
    """A backward that ignores the mode (session 20's leftover): ``m`` is the numerical gradient of the layer's
    forward in its other mode (:func:`_other_mode`, on a copy; for the check's dY), and that differs from this mode's
    ``n``. Only for a layer with a mode: a forward that takes ``training`` and gives the same output in both modes
    has none (newuser25 M1: a GRU with r and z swapped in forward and backward alike was told to "branch on the
    mode", its backward the gradient of its own forward, which differs from the reference's)."""
    if L.other_mode is None or not np.isfinite(n).all():
        return None
    make, fields = L.other_mode
    cp = None
    try:
        fwd, params, cp = make()
        if {k: np.shape(v) for k, v in params.items()} != {k: np.shape(v) for k, v in L.params.items()}:
            return None
        if close(fwd(*[x.copy() for x in L.inputs]), L.Y, 1e-12, 0.0):  # one forward in both modes: no mode
            return None
        o = _numerical(fwd, L.inputs, params, L.G, input_names=L.keys, which=[key])[key]
    finally:
        _release(cp)
    if o.shape == m.shape and close(m, o, 1e-5) and not close(o, n, 1e-5):
        return "backward-ignores-mode", fields
    return None


def _forward_reads(layer: Any) -> set[str]:
    """The attributes ``self.<name>`` that forward's source (in the class or its bases: :func:`layer_classes`) names;
    empty when it cannot be read."""
    out: set[str] = set()
    for c in layer_classes(layer)[1]:
        for f in (f for f in c.body if isinstance(f, ast.FunctionDef) and f.name in ("forward", "call", "__call__")):
            out |= {a for n in ast.walk(f) if (a := self_attr(n))}
    return out


def _layer_numbers(layer: Any) -> dict[str, float]:
    """The layer's public number attributes (not bools): a sandboxed layer's ``scalars``, an adapted one's own."""
    from ._adapters import _fields

    try:  # a sandboxed layer's scalars; an adapted one's own attributes (__dict__ and slots)
        got = getattr(layer, "scalars", None) if _remote(layer) else _fields(getattr(layer, "obj", layer))
    except Exception:  # noqa: BLE001 - an object whose attributes cannot be read: no settings
        return {}
    return {str(k): float(v) for k, v in dict(got or {}).items() if isinstance(k, str) and not k.startswith("_")
            and isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) and np.isfinite(v)}


#: The names of a dropout's rate (:func:`_dropout_rate`), never read as a factor's setting (its 1/(1-p) is mask-scale).
_RATE_NAMES = ("p", "rate", "drop_prob", "dropout", "drop_rate")


def _factor_at_more(L: _Layer, key: str) -> float | None:
    """The constant factor of input or parameter ``key``'s gradient (backward's over central differences) at one
    sample more than the check's (each input with the batch on axis 0 grown by a sample, the others as checked, a new
    upstream gradient), or None when the layer cannot be run so (a first input or an output whose axis 0 is not the
    batch, backward raising, no constant factor there). Outputs checked as one stacked ``Y`` (an LSTM step's h and c)
    have the batch on axis 1 (verify36 F8: a step's doubled dx at a batch of 2 could not be told from a 1/batch; a
    parameter's, dW_ih, since session 38). The layer's cache is set back to the check's input after."""
    N, i = L.n_batch, L.names.index(key[1:]) if key[1:] in L.names else -1
    ax = 1 if L.outputs and L.outputs["stacked"] else 0  # k outputs stacked: Y[j] is output j, the batch on axis 1
    if (i < 0 and key not in L.params) or N < 1 or np.ndim(L.Y) <= ax or np.shape(L.Y)[ax] != N:
        return None
    # the inputs with the batch on axis 0 grow (the first one must); another input, such as a positional table P
    # (T, D) beside x (N, T, D), stays as checked, and so do a recurrent step pair's weights, Wx (D, 4H) at D == N
    # among them (verify37 F6: CS231n's lstm_step pair at a batch of 2 was told a missing 1/batch)
    k = {"LSTM": 3, "GRU": 2, "RNN": 2}.get(_cell_kind(L), len(L.inputs))
    grow = [j < k and np.ndim(x) > 0 and np.shape(x)[0] == N for j, x in enumerate(L.inputs)]
    if not grow[0]:
        return None
    xs = [np.concatenate([x, 0.5 * x[:1] - 0.3 * x[-1:] if x.dtype.kind == "f" else x[:1]]) if g else x
          for x, g in zip(L.inputs, grow)]
    shape = list(np.shape(L.Y))
    shape[ax] = N + 1
    return _factor_at_inputs(L, key, xs, tuple(shape))


def _factor_at_inputs(L: _Layer, key: str, xs: Sequence[np.ndarray], shape: tuple | None = None) -> float | None:
    """The constant factor of input or parameter ``key``'s gradient (backward's over central differences) at inputs
    ``xs`` and a new upstream gradient, or None when there is none, the layer raises there or its output's shape is
    not ``shape`` (when given). The layer's cache is set back to the check's input after."""
    i = L.names.index(key[1:]) if key[1:] in L.names else -1
    try:
        Y = L.proxy.forward(*[x.copy() for x in xs], training=L.training)
        if shape is not None and np.shape(Y) != shape:
            return None
        G = np.random.default_rng([L.seed, 21]).standard_normal(np.shape(Y))
        _reset_grads(L.proxy)  # (a parameter's gradient read from the layer's grads after this backward alone)
        back = L.proxy.backward(G.copy())
        m2 = np.asarray(L.proxy.grads[key] if i < 0 else _as_list(back, len(xs))[i], dtype=np.float64)
        n2 = L.numer([key], xs=xs, G=G)[key]
    except Exception:  # noqa: BLE001 - no second shape to be had: the caller keeps its name
        return None
    finally:
        L.forward_again()  # the check's own forward ran before: same input again
    nn = float(np.sum(n2 * n2))
    if m2.shape != n2.shape or not np.isfinite(nn) or nn == 0:
        return None
    c2 = float(np.sum(m2 * n2)) / nn
    return c2 if close(m2, c2 * n2, 1e-6, 1e-9) else None


def _factor_moves(L: _Layer, key: str, m, n) -> bool | None:
    """Whether the constant factor of input ``key``'s gradient (``m`` over ``n``) changes at one sample more
    (:func:`_factor_at_more`, run once per key): True (a 1/batch really there), False (the same factor), None when it
    cannot be told."""
    memo = L.__dict__.setdefault("_moves", {})
    if key not in memo:
        ok = np.isfinite(n)
        nn = float(np.sum(n[ok] * n[ok]))
        c2 = _factor_at_more(L, key) if nn else None
        memo[key] = None if c2 is None else abs(c2 / (float(np.sum(m[ok] * n[ok])) / nn) - 1) > 1e-6
    return memo[key]


def _batch_unproven(L: _Layer, key: str, m, n) -> dict[str, Any] | None:
    """The fields of a plain "factor" for an input's gradient a constant factor off that equals the batch size (or
    its inverse), when the factor does not follow the batch (:func:`_factor_at_more`: the same factor at one sample
    more): a SquaredReLU's missing 2 at a batch of 2 is no 1/batch (tester21s M2); a recurrent step's parameter's too
    (fix37a's leftover: an LSTM step's doubled dW_ih at a batch of 2); None when it follows the batch (a 1/N really
    there), or when it cannot be told."""
    if not (key.startswith("@") or _cell_kind(L)) or _factor_moves(L, key, m, n) is not False:
        return None  # the factor moved with the batch, or no second batch size
    ok = np.isfinite(n)
    c = float(np.sum(m[ok] * n[ok])) / float(np.sum(n[ok] * n[ok]))
    more = f" ({inv} times too small)" if (inv := _times_too_small(c)) else ""
    N = L.n_batch
    if any(abs(c * k - 1) < 1e-6 or abs(c / k - 1) < 1e-6 for k in (N,)):
        more += f"; it equals the batch size {N} here by chance: the same factor at a batch of {N + 1}, so it is no 1/batch"
    else:
        more += (f"; the same factor at a batch of {N + 1}, so it is no 1/batch nor a count of batch x positions "
                 f"(Y.size / {key[1:]}.size)")
    return {"c": c, "more": more}


def _factor_attribute(L: _Layer, m, n) -> dict[str, Any] | None:
    """The fields of "factor-attribute": the constant factor ``c`` of ``m`` over ``n`` is one number setting of the
    layer that forward reads (``L.numbers``: ``self.T = 2``) or its inverse, and no other setting is; None otherwise
    (a rate: mask-scale's)."""
    nn = float(np.nansum(n * n))
    if nn == 0:
        return None
    c = float(np.nansum(m * n)) / nn
    hits = [(k, v, w) for k, v in getattr(L, "numbers", {}).items() if k not in _RATE_NAMES and v not in (0, 1, -1)
            for w, x in (("self.{k}", v), ("1 / self.{k}", 1 / v)) if abs(x - c) <= 1e-6 * abs(c)]
    if len(hits) != 1:
        return None
    k, v, w = hits[0]
    if c >= 2 and w == "self.{k}" and (mean := _whole_mean(L.layer)):  # tester28s: np.mean over classes x batch
        return {"code": "factor-mean", "c": c, "k": k, "v": v, "mean": mean}
    return {"code": "factor-attribute", "c": c, "k": k, "v": v, "what": w.format(k=k)}


def _whole_mean(layer: Any) -> str | None:
    """``"line N: text"`` of a mean over a whole array in the forward of ``layer``'s class (``np.mean(E)``,
    ``E.mean()``: no axis, so it divides by every entry: a loss's batch times each example's entries), read from the
    class's file (:func:`layer_classes`); None when there is none or several."""
    lines, classes = layer_classes(layer) if layer is not None else ([], [])
    found = [n for c in classes for fn in c.body if isinstance(fn, ast.FunctionDef) and fn.name in ("forward", "call")
             for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "mean" and not any(k.arg == "axis" for k in n.keywords)
             and len(n.args) == (1 if isinstance(n.func.value, ast.Name) and n.func.value.id in ("np", "numpy") else 0)]
    if len(found) != 1 or not 0 < found[0].lineno <= len(lines):
        return None
    return f"line {found[0].lineno}: {lines[found[0].lineno - 1].strip()}"


def _dropout_rate(layer: Any) -> float | None:
    """The layer's dropout rate (its number ``p``, ``rate``, ``drop_prob`` or ``dropout`` in (0, 1)), or None."""
    for k in _RATE_NAMES:
        with contextlib.suppress(Exception):  # noqa: BLE001 - an attribute that raises: none
            v = getattr(getattr(layer, "obj", layer), k, None)
            if isinstance(v, (int, float, np.floating)) and not isinstance(v, bool) and 0 < v < 1:
                return float(v)
    return None


def _random_eval(layer: Any, ev: Diagnosis) -> None:
    """The "random-eval" finding of a forward random in eval mode (its draws held; tester24s nb23r: a dropout
    applied at inference): an error, first, when the reference's eval forward, deterministic, differs from it
    ("other-function": the reference was compared, :func:`_reference_fixed`), else a warning; none for a forward
    without a training switch (:func:`gradcheck.config.training_modes`: one mode, random by design)."""
    if training_modes(layer, "auto") == [False]:  # no training switch: random in every call, by design (a dropout)
        return
    other = any(f.code == "other-function" for f in ev.findings)
    ref = ("; the reference's eval forward is deterministic and this one differs from it, so the forward is "
           "wrong, whatever its gradients" if other else "")
    f = _find("random-eval", None, "error" if other else "warning", off=mode_label(layer, False), ref=ref)
    ev.findings.insert(0, f) if other else ev.findings.append(f)


def _inverted_switch(layer: Any, X: Any, diags: list[Diagnosis], seed: int) -> None:
    """The "inverted-switch" finding of a forward random in eval mode and deterministic in training mode (tester20s
    M1, M3: a dropout whose switch is inverted passed, "the forward is random"): a warning in the eval mode's
    diagnosis; an error in the training mode's when its forward differs from the reference's ("other-function"),
    saying whether the training forward is the identity (a copy of the layer run once)."""
    ev = next((d for d in diags if d.training is False and d.held), None)
    tr = next((d for d in diags if d.training is True and not d.held and d.result is not None), None)
    if ev is not None and tr is None:  # random in eval mode, and not shown deterministic in training mode
        _random_eval(layer, ev)
    if ev is None or tr is None:
        return
    identity = ""
    with contextlib.suppress(Exception):  # noqa: BLE001 - a copy that cannot run: the identity unsaid
        inputs = _probe_inputs(X, seed, ev.name)
        Y = copy.deepcopy(layer).forward(*[x.copy() for x in inputs], training=True)
        if len(inputs) == 1 and np.shape(Y) == inputs[0].shape and np.array_equal(np.asarray(Y), inputs[0]):
            identity = " (the identity there)"
    other = next((f for f in tr.findings if f.code == "other-function"), None)
    ref = "; the reference, in training mode, drops units where this forward does not" if other else ""
    f = _find("inverted-switch", None, "error" if other else "warning", off=mode_label(layer, False),
              on=mode_label(layer, True), identity=identity, ref=ref)
    (tr if other else ev).findings.insert(0, f) if other else ev.findings.append(f)


def switch_variants(layer: Any) -> tuple[list[list[str]], Any, list[str]]:
    """``([[eval label, training label], ...], set_switch, labels)``: the other combinations of forward's switches a check
    runs (:func:`gradcheck._adapters.switch_variants`: booleans beside the one switched, a string's third and later
    values), read from a sandboxed layer's ``protocol`` (set by its ``set_switch``) or from an adapted layer in
    this process; ``set_switch(i, labels)`` sets the ``i``-th (None: forward's own) and the rows' labels;
    ``labels``: those of forward's own switch's rows (the others at their defaults). ``([], None, [])`` when there
    are none."""
    from . import _adapters

    info = _protocol(layer)
    if info is not None and info.get("switch_variants") and callable(getattr(layer, "set_switch", None)):
        variants = [str(v).split("|") for v in info["switch_variants"]]
        return [v for v in variants if len(v) == 2], layer.set_switch, [str(x) for x in info.get("mode_labels") or []]
    if not isinstance(layer, _adapters.Adapted) or layer.__dict__.get("variants_unsafe"):
        return [], None, []
    base = layer.__dict__.get("_base_keyword", layer.mode_keyword)
    found = _adapters.switch_variants(layer.student_forward, base)

    def set_switch(i, labels=()):
        _adapters.set_variant(layer, i)
        layer.mode_labels = list(labels) if i is not None else _adapters.switch_labels(layer.student_forward, base)
    return [[off, on] for _, off, on in found], set_switch, _adapters.switch_labels(layer.student_forward, base)


def checked_variants(diag: Diagnosis, owner: str, requested, found, check) -> Diagnosis:
    """``diag`` with the checks of the other combinations of forward's switches (:func:`switch_variants`), each one
    more ``check(training)`` with that combination set (``requested``: as ``--training``/``--eval`` ask; a string's
    value is its training side, not run by ``--eval``), their rows labelled with it; the result is the first
    failing check's, the others in ``other_modes``. Unchanged when the first check stopped on an error.
    ``found``: :func:`switch_variants`' answer."""
    variants, set_switch, labels = found
    if diag.error is not None:
        return diag
    labels = [*labels, "", ""]
    every = _labelled([diag, *diag.other_modes], owner, *labels[:2])
    try:
        for i, (off, on) in enumerate(variants):
            training = requested if off else True if requested is not False else None
            if training is None:
                continue
            set_switch(i, [off, on])
            d = check(training)
            every += _labelled([d, *d.other_modes], owner, off, on)
            if d.error is not None:
                break
    finally:
        set_switch(None)
    for d in every:
        d.other_modes = []
    first = next((d for d in every if not d.passed), diag)
    first.other_modes = [d for d in every if d is not first]
    if first.result is not None:
        first.result.other_modes = [d.result for d in first.other_modes if d.result is not None]
    return first


def _labelled(diags: list, owner: str, off: str, on: str) -> list:
    """``diags`` of one combination of switches, each named ``owner [label]`` where :func:`_diagnose_modes` left it
    unnamed (a combination checked once: its two values gave one output), by the eval (``off``, its default's)
    or training label ``on``; ``off`` "" names it by ``on``."""
    for d in diags:
        lab = on if d.training or not off else off
        if d.name == owner and d.training is not None and lab:
            d.name = f"{owner} [{lab}]"
            if d.result is not None:
                d.result.name = d.name
    return diags


def mode_worded(note: str, layer: Any) -> str:
    """``note`` (a mode note: :data:`SAME_IN_BOTH_MODES`, :data:`EVAL_AFTER_TRAINING`...) in the words of ``layer``'s
    own switch (its ``protocol``'s ``mode_keyword``): ``forward(X, train_flg=False)``, not ``training=False``
    (tester15b L2); for a switch that selects no training mode (``verbose``, ``debug``: ``plain_switch``) its values,
    never training and eval (tester15b M4). Unchanged for ``training`` itself and switches set outside forward's
    arguments."""
    info = _protocol(layer) or {}
    if not info.get("mode_keyword"):
        return note
    name, off, on = (str(x) for x in info["mode_keyword"][:3])
    if name == "training" or "," in name or name.startswith(("self.", "global ", "env ")):
        return note
    if info.get("plain_switch"):
        a, b = mode_label(layer, True), mode_label(layer, False)
        for old, new in ((SAME_IN_BOTH_MODES, f"{a} and {b} give the same output on this input: checked once, with "
                                              f"{b} (--training checks {a} alone)"),
                         (SAME_BACKWARD_CHECKED, f"; backward was also checked after a forward with {a} (it may branch "
                                                 f"on {name}) and passed there"),
                         (SAME_Y_OTHER_BACKWARD, f"{a} and {b} give the same output on this input, but backward fails "
                                                 f"with {a} only: both are shown (backward branches on {name})")):
            note = note.replace(old, new)
    return note.replace("training=False", f"{name}={off}").replace("training=True", f"{name}={on}")


#: The note when eval mode, whose backward cannot run on a fresh layer, was checked after the
#: training mode on the same layer (what a validation pass after a training step does).
EVAL_AFTER_TRAINING = (
    "eval mode: backward after forward(X, training=False) on a fresh layer raised (it reads what only "
    "a training forward sets), so eval mode was checked after the training mode on the same layer, "
    "as a validation pass after a training step runs it: its backward must not use the training "
    "forward's mask")


#: The note when eval mode, whose backward cannot run on a fresh layer, was checked after the training mode and both
#: modes are one (the same output, backward the same bit for bit: a Dropout that drops nothing, p = 1.0 or rate 0.0),
#: so one row is shown, as for such a layer whose eval backward runs on a fresh layer (tester13 L3).
SAME_AFTER_TRAINING = (
    "training and eval forwards give the same output on this input: checked once, in eval mode, after the training "
    "mode on the same layer (backward after forward(X, training=False) on a fresh layer raised: it reads what only "
    "a training forward sets)" + SAME_BACKWARD_CHECKED)


#: The note when eval mode passed on a fresh layer and failed after the training mode.
EVAL_AFTER_TRAINING_TOO = (
    "eval mode: forward(X, training=False) returns X itself; checked on a fresh layer it passed, "
    "and checked again after the training mode on the same layer (as a validation pass after a "
    "training step runs it) it failed: backward must not use what the training forward left")


#: The note of --eval when eval mode, whose forward is the identity, was checked after a training
#: forward on the same layer ({why}: what the check on a fresh layer gave).
EVAL_AFTER_A_TRAINING_FORWARD = (
    "eval mode: forward(X, training=False) returns X itself; {why}, so eval mode was checked after one "
    "forward(X, training=True) on the same layer (not itself checked), as a validation pass after a "
    "training step runs it: the eval forward and backward must not use what the training forward left")


def mode_label(layer: Any, training: bool) -> str:
    """A checked mode's label: ``"eval"``/``"training"``, or for a switch that selects no training mode
    (``layer.protocol``'s ``plain_switch``: ``self.noisy``, ``self.kind``) its name and value, ``"self.kind='sq'"``
    (F1: the rows of such a forward were labelled eval and training)."""
    info = _protocol(layer)
    labels = info.get("mode_labels") if info is not None else getattr(layer, "mode_labels", None)
    if isinstance(labels, list) and len(labels) == 2 and labels[training]:
        return str(labels[training])  # every combination of several switches (square=True, double=False)
    if info is None and (branch := _plain_branch(layer, training)):
        return branch  # a layer adapted in this process: its plain switch's value
    if not (info is not None and info.get("plain_switch") and info.get("mode_keyword")):
        return mode_word(training)
    name, off, on = info["mode_keyword"]
    return f"{name}={on if training else off}"


def _plain_branch(layer: Any, training: bool) -> str:
    """``"flag=True"``: the value of the plain switch (:func:`gradcheck._adapters._plain`) of a layer adapted in this
    process in mode ``training``, else ""."""
    from . import _adapters

    mk = getattr(layer, "__dict__", {}).get("mode_keyword")
    if not (isinstance(mk, tuple) and len(mk) == 3 and isinstance(mk[0], str) and _adapters._plain(mk)):
        return ""
    return ", ".join(f"{n}={v}" for n, v in layer_branch(layer, training))


def _eval_after_training(layer, X, owner, training, diags, notes, check_eval, seed: int) -> list[Diagnosis]:
    """Eval mode again after a training forward on the same layer, the order of a training loop with
    validation, for a layer whose eval forward was the identity (a Dropout): a backward that reads the
    mask the training forward left (stale-mask), or an eval forward that reuses it
    (stale-mask-forward), fails there. ``training`` "auto": after the training mode's check, False
    (--eval): after one training forward, not checked. ``check_eval()`` diagnoses eval mode; returns
    the diagnoses to report (``notes`` gets what was done)."""
    noted = bool(notes) and notes[-1].startswith("eval mode: forward(X, training=False) returns X")
    if training is False:
        inputs = _probe_inputs(X, seed, owner)
        try:
            layer.forward(*[x.copy() for x in inputs], training=True)
        except Exception:  # noqa: BLE001 - no training forward to be had: the eval check stands
            return diags
    elif not (diags and diags[-1].training and diags[-1].error is None):
        return diags
    mask = _eval_mask(layer, X, owner, seed)
    d = check_eval()
    if d.error is not None or d.result is None:
        return diags
    if mask is not None:
        d.findings.append(_find("stale-mask-forward", scale=mask))
    fresh = next((e for e in diags if not e.training), None)
    raised = noted or fresh is not None and fresh.error is not None
    if mask is None and d.passed and not raised:
        return diags
    if noted and mask is None and d.passed and diags[-1].passed and _same_output(layer, X, owner, seed, True) \
            == "same backward":  # L3: a Dropout that drops nothing (p = 1.0) is one layer, whichever its fresh state
        notes[-1] = SAME_AFTER_TRAINING
        return [d]
    if training is False:
        why = "backward after it on a fresh layer raised" if raised else "checked on a fresh layer it passed"
        notes.append(EVAL_AFTER_A_TRAINING_FORWARD.format(why=why))
    elif noted:
        notes[-1] = EVAL_AFTER_TRAINING
    else:
        notes.append(EVAL_AFTER_TRAINING_TOO)
    return [d] + [e for e in diags if e.training]


def _eval_mask(layer, X, owner, seed: int) -> str | None:
    """The scale of the mask an eval forward multiplies X by (``"2"``: entries 0 and 2), for a layer
    whose eval forward was the identity before a training forward; None when it still is, or when the output is not X
    times a mask (0 where X is 0; its ratios to X 0 and one scale, or one value): an eval forward that subtracts a
    running mean the training forward updated is no mask (tester21s H1)."""
    inputs = _probe_inputs(X, seed, owner)
    try:
        Y = np.asarray(layer.forward(inputs[0].copy(), training=False), dtype=np.float64)
    except Exception:  # noqa: BLE001 - the eval check says what is wrong
        return None
    if Y.shape != inputs[0].shape or np.array_equal(Y, inputs[0]):
        return None
    nz = inputs[0] != 0
    if np.any(Y[~nz] != 0):  # X times a mask is 0 where X is: no mask (tester21s H1)
        return None
    r = np.unique(np.round(Y[nz] / inputs[0][nz], 12))
    # a mask's pattern: entries 0 and one scale (1/(1 - p)), or 0 alone; X - running_mean (a running mean updated by
    # the training forward) has a ratio per entry, no mask: not this finding (tester21s H1)
    if not (r.size <= 2 and r[0] == 0 or r.size == 1):
        return None
    return ", ".join(f"{v:.6g}" for v in r[:4])


def _eval_identity(layer, X, owner, d: Diagnosis, seed: int) -> str:
    """The note for an eval forward that is the identity whose backward raised (a Dropout whose
    eval forward returns X and sets no mask, and whose backward reads the mask): eval mode is
    checked as that identity (its gradient is dY), the training mode as usual; "" otherwise: also for a
    gradient our checks refused (a ``GradientShapeError``: backward ran) and for a layer with no training
    mode to check (a bias layer whose zero bias makes its one forward the identity)."""
    if d.error is None or d.result is not None or "backward(" not in str(d.error) \
            or isinstance(d.error, GradientShapeError) or True not in training_modes(layer, "auto"):
        return ""
    if not _identity_in_eval(layer, X, owner, seed):
        return ""
    why = str(d.error).split(" raised ", 1)[-1].split(" (at ")[0]
    return ("eval mode: forward(X, training=False) returns X itself, the identity (its gradient "
            f"is dY), and backward after it raised {why} (it reads what only a training forward "
            "sets): eval mode was checked as the identity, the training mode's backward in full")


def _identity_in_eval(layer, X, owner, seed: int) -> bool:
    """True when ``forward(X, training=False)`` returns X itself (a Dropout in eval mode)."""
    inputs = _probe_inputs(X, seed, owner)
    if len(inputs) != 1 or inputs[0].dtype.kind != "f":
        return False
    try:
        Y = layer.forward(inputs[0].copy(), training=False)
    except Exception:  # noqa: BLE001 - the caller's check stands
        return False
    return isinstance(Y, np.ndarray) and np.array_equal(Y, inputs[0])


#: The penalty attributes a layer states per parameter (Neural Networks from Scratch's Layer_Dense):
#: ``{parameter names: (l1 attribute, l2 attribute)}``.
_PENALTY_ATTRS = {("weights", "W", "weight"): ("weight_regularizer_l1", "weight_regularizer_l2"),
                  ("biases", "b", "bias"): ("bias_regularizer_l1", "bias_regularizer_l2")}


def _stated_penalty(layer: Any, key: str) -> tuple[float, float, str] | None:
    """``(l1, l2, "weight_regularizer_l1, weight_regularizer_l2")`` of parameter ``key`` when the layer states them
    (:data:`_PENALTY_ATTRS`: one of the pair at least, a number; a missing partner is 0): its loss adds
    l1*sum|P| + l2*sum(P**2) (the book's Loss.regularization_loss, Sentdex/nnfs_book Chapter_18/Ch18_Final.py; the
    nnfs package has no loss). Both 0 is stated too: that parameter's penalty term is 0 (review25g M1: a bias term
    copied from the weights' with bias_regularizer_l2 = 0 is wrong, not a penalty of unknown strength). None when
    neither is present, or one is not a number."""
    obj = getattr(layer, "_layer", layer)
    for keys, attrs in _PENALTY_ATTRS.items():
        if key not in keys:
            continue
        vals = []
        for a in attrs:
            try:
                v = getattr(getattr(obj, "obj", obj), a)
            except AttributeError:  # review25g L2: weight_regularizer_l2 alone states l1 = 0
                vals.append(None)
                continue
            except Exception:  # noqa: BLE001 - not readable: not stated
                return None
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                return None
            vals.append(float(v))
        if all(v is None for v in vals):
            return None
        return (vals[0] or 0.0, vals[1] or 0.0, ", ".join(attrs))
    return None


def _penalty_numbers(layer: Any) -> dict[str, float]:
    """The nonzero numbers ``layer`` holds under a regulariser's strength's name (``reg``, ``self._reg``, ``l2``,
    ``weight_decay``: :func:`gradcheck._adapters.strength_name`), read where it lives (the adapters'
    ``penalty_numbers``); the names are checked again here (a sandbox's reply is data). A number of another name
    (``stride = 1``) never explains a term ``1*W`` as a penalty (left24's leftover: it gave NOT CHECKED)."""
    from ._adapters import strength_name

    try:
        got = adapter_call(layer, "penalty_numbers")
    except Exception:  # noqa: BLE001 - an older child, or an object whose attributes cannot be read: none stated
        return {}
    return {k: float(v) for k, v in dict(got or {}).items() if isinstance(k, str) and k.isidentifier()
            and len(k) <= 64 and strength_name(k) and np.ndim(v) == 0 and np.isfinite(v) and float(v)}


def _penalty_close(free: np.ndarray, right: np.ndarray, P: np.ndarray, l1: float) -> bool:
    """Whether ``free`` is ``right`` (to 1e-9 relative), an entry where P is 0 anywhere in [-l1, l1]: |P|'s
    subgradient there (the book writes +l1: np.ones_like, then -1 where P < 0)."""
    if free.shape != right.shape:
        return False
    zero = P == 0
    ok = np.abs(free - right) <= 1e-9 * (np.abs(free) + np.abs(right)) + 1e-15
    return bool(np.all(ok | (zero & (np.abs(free) <= abs(l1) * (1 + 1e-9)))))


def _penalty_fit(P: np.ndarray, free: np.ndarray, numbers: Mapping[str, float] | None = None) -> list[tuple[float,
                                                                                                      float]]:
    """The ways ``(a, b)`` that ``free`` is a*P + b*sign(P) (exact to 1e-9 relative) with a or b nonzero (a
    coefficient below 1e-12 of max|free| is 0): a penalty's gradient, or a term added by mistake; [] none. One
    way (least squares) when P and sign(P) are independent; when |P| is one number c wherever P is not 0 (W =
    np.full(..., 0.1): the columns are collinear, review25g M2) any split fits, so the two single-column ones,
    (a, 0) and (0, a*c), P alone first, then for each strength s of ``numbers`` (:func:`_penalty_numbers`) the
    splits whose L2 part is s or 2*s (L1 and L2 together, :func:`_penalty_match` tells which fit a strength)."""
    if free.shape != P.shape or not np.any(P):
        return []
    p, f, mags = P.ravel(), free.ravel(), np.abs(P[P != 0])
    tiny = 1e-12 * (np.abs(free).max() + 1e-300)
    if mags.max() - mags.min() <= 1e-9 * mags.max():  # sign(P) = P / c
        a = float(p @ f / (p @ p))
        c = float(mags.mean())
        fits = [(a, 0.0), (0.0, a * c)] + [(m * v, (a - m * v) * c) for v in (numbers or {}).values()
                                              for m in (1.0, 2.0)]
    else:
        coef = np.linalg.lstsq(np.stack([p, np.sign(p)], axis=1), f, rcond=None)[0]
        fits = [(float(coef[0]), float(coef[1]))]
    fits = [(a, b) for a, b in fits if _penalty_close(f, a * p + b * np.sign(p), p, 0.0)]
    fits = [(a if abs(a) > tiny else 0.0, b if abs(b) > tiny else 0.0) for a, b in fits]
    return [(a, b) for a, b in fits if a or b]


def _fit_text(a: float, b: float, w: str) -> str:
    """``"0.02*W + 0.01*sign(W)"``: the term a*w + b*sign(w), its zero parts left out."""
    return " + ".join(x for x in (f"{a:.6g}*{w}" if a else "", f"{b:.6g}*sign({w})" if b else "") if x)


def _penalty_match(a: float, b: float, numbers: Mapping[str, float], w: str) -> tuple[str, str, list[str]] | None:
    """``(what matched, conventions, attribute names)`` when every nonzero coefficient of a*w + b*sign(w) is a
    stated number under a usual convention (to 1e-9 relative): a == s (CS231n's 0.5*reg*sum(W**2), gradient
    reg*W), a == 2*s (reg*sum(W**2), gradient 2*reg*W), b == s (L1 reg*sum|W|, gradient reg*sign(W)); None when a
    coefficient matches none (a term the layer's numbers do not explain: a bug)."""
    def near(x, y):
        return abs(x - y) <= 1e-9 * abs(y)
    said, conv, names = [], [], []
    for coef, forms in ((a, ((1.0, "0.5*{n}*sum({w}**2) -> {n}*{w}"), (2.0, "{n}*sum({w}**2) -> 2*{n}*{w}"))),
                        (b, ((1.0, "{n}*sum(|{w}|) -> {n}*sign({w})"),))):
        if not coef:
            continue
        hit = next(((n, m, form) for m, form in forms for n, s in numbers.items() if near(coef, m * s)), None)
        if hit is None:
            return None
        n, m, _ = hit
        said.append(f"{coef:.6g} is {'2*' if m == 2 else ''}{n} with {n} = {numbers[n]:g}")
        conv.append("; ".join(f.format(n=n, w=w) for _, f in forms))
        names.append(n)
    return ", ".join(said), "; ".join(conv), names


class _DataPart(Wrapper):
    """The layer as the check calls it when a parameter gradient has a penalty's dY-free term
    (:meth:`_Probes.penalty`): backward(dY) gives, for the keys ``keys``, backward(dY) - backward(0), the part that
    multiplies dY, which central differences of forward check; the other gradients as backward gives them."""

    def __init__(self, proxy: Any, keys: Mapping[str, str]):
        self._proxy, self._layer, self._keys = proxy, getattr(proxy, "_layer", proxy), list(keys)
        self.forward, self._grads = proxy.forward, None
        many = getattr(proxy, "forward_many", None)
        if callable(many):
            self.forward_many = many

    def backward(self, dY):
        self._proxy.backward(np.zeros_like(np.asarray(dY)))
        free = {k: np.array(self._proxy.grads[k], dtype=np.float64) for k in self._keys}
        ret = self._proxy.backward(dY)
        grads = dict(self._proxy.grads)
        self._grads = {**grads, **{k: np.asarray(grads[k], dtype=np.float64) - free[k] for k in self._keys}}
        return ret

    params = property(lambda self: self._proxy.params)
    grads = property(lambda self: self._proxy.grads if self._grads is None else self._grads)

    @staticmethod
    def unchecked(res: CheckResult, penalties: Mapping[str, str]) -> None:
        """Mark the comparisons of each gradient whose penalty is of unknown strength (``penalties[key] ==
        "unknown"``, :meth:`_Probes.penalty`) ``unchecked = "penalty"``: that term is not checked, NOT CHECKED."""
        for key in (k for k, how in penalties.items() if how == "unknown"):
            for c in (c for r in res.records if r.tensor == V.grad_name(key) for c in r.comparisons):
                c.unchecked = "penalty"


def _numpy_patched(layer: Any) -> dict[str, str]:
    """The fields of the "numpy-patched" finding when the checked code replaced numpy's functions
    (:func:`gradcheck._adapters.numpy_patched`, read where the layer lives): ``names`` ("np.dot, np.zeros"), ``by``
    (the replacements' modules) and ``fix`` (nnfs.init()'s own switches when nnfs.core replaced them); {} none."""
    try:
        patched = adapter_call(layer, "numpy_patched")
    except Exception:  # noqa: BLE001 - an older child, or none to ask: the float32 finding as before
        return {}
    if not isinstance(patched, dict) or not patched:
        return {}
    mods = list(dict.fromkeys(str(m) for m in patched.values()))
    nnfs = any(m.split(".")[0] == "nnfs" for m in mods)
    fix = ("nnfs.init() does this (nnfs 0.5.1: np.dot computes in float64 and returns float32, np.zeros, np.eye "
           "and np.random.randn give float32); for the check call nnfs.init(dot_precision_workaround=False, "
           "default_dtype=None), which leaves numpy as it is, or remove nnfs.init()" if nnfs else
           "do not replace numpy's functions in the file you check")
    return {"names": ", ".join(patched), "by": ", ".join(mods), "fix": fix}


def _random_reference(reference: Any, layer: Any, diag: Diagnosis, inputs: Sequence[np.ndarray], training: Any) -> bool:
    """Whether ``reference`` is not compared in this mode (:data:`RANDOM_REFERENCE`): the layer's forward is random,
    its draws held (``diag.held``), or it is a CS231n pair in dropout_param's mode 'train' (seeded by its own 'seed',
    its draws fixed: verify37 F4, compared with the reference's own mask), and the reference is random in that mode
    (a pair's reference runs in the pair's mode, :func:`gradcheck.sources.pair_training`); a reference deterministic
    in this mode (manualprop.Dropout's eval forward is X) is compared (tester24s nb23r). A training forward that is
    the same at every call beside a random reference is not compared either: its ``fixed-mask`` error is added to
    ``diag`` (verify38 F6: named "dX evaluated at the output Y" from the two masks' numbers)."""
    trains = pair_training(layer)
    if reference is None or not (diag.held or trains or training is True and diag.error is None and not diag.codes):
        return False  # (a forward that raised, or is random and could not be held, is no forward the same each call)
    if diag.held or trains:
        return not _reference_fixed(reference, inputs, training if trains is None else trains)
    rounds = rounds_needed(reference, inputs)
    same = same_mask(layer, reference, inputs, 3 * (rounds or MAX_ROUNDS))  # flags40: chance bounded
    if same is None:  # random after all (its earlier forwards agreed by chance): the reference's mask is not its own
        return True
    if not same:  # (an identity training forward: compared, inverted-switch)
        return False
    if rounds is None:  # check42: no number of rounds within MAX_ROUNDS bounds a right layer's chance here
        diag.mask_undecided = mask_undecided(reference)
        return True
    diag.findings.append(fixed_mask(diag.name, reference))
    return True


def _mask_unchecked(res: CheckResult, why: str) -> None:
    """Mark every gradient comparison of ``res`` ``unchecked = "mask"`` (NOT CHECKED) with a note, when ``why`` (a
    fixed mask no bounded number of rounds can tell from a right random layer: :func:`mask_undecided`)."""
    if why:
        for c in (c for r in res.records if r.kind != "forward" for c in r.comparisons):
            c.unchecked = "mask"
        res.notes.append(f"NOT CHECKED: {why}")


def mask_undecided(reference: Any) -> str:
    """Why a training forward the same at every call beside a random ``reference`` is not read as a fixed mask: the
    reference's own forwards agree so often on this input (:func:`rounds_needed` None) that a right random layer
    agrees :data:`MAX_ROUNDS` rounds running with a chance above :data:`AGREEMENT_CHANCE`."""
    return (f"whether the training forward draws a new mask at each call could not be told: {type(reference).__name__}"
            f"'s own training forwards on this input keep the same output so often (a low drop rate on few entries) "
            f"that a right random layer agrees {3 * MAX_ROUNDS} forwards running with a chance above "
            f"{AGREEMENT_CHANCE:g}, so a mask fixed at the first call cannot be told from it. Check the training mode "
            "on a larger input (more entries to drop)")


def same_mask(layer: Any, reference: Any, inputs: Sequence[np.ndarray], more: int = 0) -> bool | None:
    """Whether ``layer``'s training forward, the same at every call (the caller has seen it), drops entries of its one
    input (some 0 where the input's are not: a mask) while ``reference``'s draws a new mask at each call (two
    forwards of a copy differ: a copy, as a reference's training forwards may update its state): the ``fixed-mask``
    error (verify38 F6). False when either cannot run here, or the layer's training forward drops nothing; ``more``:
    that many further forwards must each give that output too, else None (random after all: its agreement was
    chance, flags40)."""
    if len(inputs) != 1:
        return False
    try:
        draws = reference_draws(copy.deepcopy(reference), inputs, True)
        Y = np.asarray(forward_in_mode(layer, inputs, True), dtype=np.float64) if draws else None
        X = inputs[0]
        if not (Y is not None and Y.shape == X.shape and bool(np.any((Y == 0) & (X != 0)))):
            return False
        for _ in range(more):
            if not np.array_equal(Y, np.asarray(forward_in_mode(layer, inputs, True), dtype=np.float64),
                                  equal_nan=True):
                return None
    except Exception:  # noqa: BLE001 - a reference or layer that cannot run or be copied here: compared as before
        return False
    return True


#: :func:`rounds_needed`'s trials of the reference (three forwards each, in process), the most rounds of three
#: forwards of the student's layer it asks (each a sandbox round trip), and the chance it leaves a right layer.
AGREEMENT_TRIALS, MAX_ROUNDS, AGREEMENT_CHANCE = 200, 40, 1e-6


def agreement_bound(agree: int, trials: int, delta: float) -> float:
    """The one-sided Clopper-Pearson upper bound on a probability seen ``agree`` times in ``trials``: the ``s`` at
    which ``P(Binomial(trials, s) <= agree) = delta``, so the true probability is above it with chance at most
    ``delta`` (exact: the binomial's CDF, bisected; 1.0 when every trial agreed).

    >>> round(agreement_bound(0, 200, 5e-7), 4)  # 1 - delta ** (1 / 200)
    0.07
    """
    if agree >= trials:
        return 1.0

    def cdf(s):
        return math.fsum(math.comb(trials, i) * s ** i * (1 - s) ** (trials - i) for i in range(agree + 1))

    lo, hi = agree / trials, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) > delta else (lo, mid)
    return hi


def rounds_needed(reference: Any, xs: Sequence[np.ndarray]) -> int | None:
    """How many rounds of three training forwards of a layer drawing as ``reference`` draws must all agree (each
    round's three forwards the same) before it is read as not random (a fixed mask): the ``R`` with ``s+ ** R <=
    AGREEMENT_CHANCE / 2``, ``s+`` the :func:`agreement_bound` (``delta = AGREEMENT_CHANCE / 2``) of the share of
    :data:`AGREEMENT_TRIALS` trials of the reference's own three forwards (on a copy) that agree; at least 3, at most
    :data:`MAX_ROUNDS`.

    The bound (flags40: a right Dropout(0.1) on (2, 3) read as a fixed mask in 4 of 2,880 grader runs; redteam40 F1
    took a point estimate of the share): a right layer's round agrees with probability ``s`` (the sum over masks of
    ``P(mask) ** 3``), its ``R`` rounds with ``s ** R``, independent of the reference's trials, so the chance of the
    fixed-mask reading is at most ``P(s > s+) + s+ ** R <= AGREEMENT_CHANCE`` (1e-6 per test). None where ``R`` would
    exceed :data:`MAX_ROUNDS` (``s+`` above 0.69: a reference keeping one output three calls running over 69% of the
    time, a low drop rate on few entries), where ``s+ ** MAX_ROUNDS`` would be the chance (until session 42 the
    rounds stopped at MAX_ROUNDS: 1.5e-3 at ``s = 0.85``): the callers then read no fixed mask and say NOT CHECKED
    (:func:`mask_undecided`). ``m >= 3`` forwards all equal have probability ``sum P(mask) ** m <= s **
    (m / 3)`` (the power means' order), so ``3 R`` forwards bound alike (``gradcheck check``'s
    :func:`_random_reference`). A reference that cannot be copied or run here: 3."""
    try:
        ref = copy.deepcopy(reference)
        agree = 0
        for _ in range(AGREEMENT_TRIALS):
            Y1, Y2, Y3 = (np.asarray(forward_in_mode(ref, [x.copy() for x in xs], True), dtype=np.float64)
                          for _ in range(3))
            agree += bool(np.array_equal(Y1, Y2) and np.array_equal(Y1, Y3))
    except Exception:  # noqa: BLE001 - a reference that cannot be copied or run here: the three rounds
        return 3
    share = agreement_bound(agree, AGREEMENT_TRIALS, AGREEMENT_CHANCE / 2)
    if share >= 1:
        return None
    rounds = max(3, math.ceil(math.log(AGREEMENT_CHANCE / 2) / math.log(share)))
    return rounds if rounds <= MAX_ROUNDS else None


def fixed_mask(owner: str, reference: Any) -> Finding:
    """The ``fixed-mask`` error of ``owner``, whose training forward is the same at every call where ``reference``'s
    is random (:func:`_random_reference`; the grader's :func:`gradcheck.grading.checks.layer_gradients` too)."""
    return _find("fixed-mask", owner=owner, ref=type(reference).__name__)


#: Forwards of a reference that must all agree for it to be deterministic (:func:`_reference_fixed`).
REFERENCE_FORWARDS = 8


def _reference_fixed(reference: Any, inputs: Sequence[np.ndarray], training: Any) -> bool:
    """Whether ``reference.forward`` on ``inputs`` in mode ``training`` gives the same output
    :data:`REFERENCE_FORWARDS` times (deterministic: manualprop.Dropout in eval mode returns X); False when one differs
    or it cannot run here."""
    return reference_draws(reference, inputs, training) is False


def reference_draws(reference: Any, inputs: Sequence[np.ndarray], training: Any) -> bool | None:
    """Whether the forwards of ``reference`` on ``inputs`` in mode ``training`` draw (True at the first of
    :data:`REFERENCE_FORWARDS` that differs, or when they agree but moved a numpy or Python generator the reference
    holds, or numpy's or Python's global one: it draws, as manualprop.Dropout's training forward; False: the same
    output every time, no generator moved); None when it cannot run here. Two were compared until redteam39 F5: a
    model whose dropout follows a ReLU that leaves 4 of 24 entries nonzero draws two masks agreeing on them one time
    in nine (0.58 ** 4), read as deterministic, and a right student's gradients were then compared with the
    reference's own mask (3 false FAILs in 20 seeds). Eight agree too at a low rate on a small input (redteam40 F1:
    Dropout(0.05) on 6 entries keeps them all 8 times one time in twelve), so the generators decide where the outputs
    agree; their states are read from the first forward's end (a generator drawn once at a first, lazy build is not
    a draw per call)."""
    try:
        Y1 = np.asarray(forward_in_mode(reference, inputs, training), dtype=np.float64)
        before = _draw_states(reference)
        for _ in range(REFERENCE_FORWARDS - 1):
            if not _exact(Y1, np.asarray(forward_in_mode(reference, inputs, training), dtype=np.float64)):
                return True
    except Exception:  # noqa: BLE001 - a reference that cannot run on these inputs yet: treated as random by some
        return None
    return _draw_states(reference) != before


def _draw_states(obj: Any) -> bytes:
    """The states of the generators ``obj`` holds (:func:`gradcheck._adapters.generators`) and of numpy's and Python's
    global ones, as bytes that are equal exactly when no generator has drawn in between (:func:`reference_draws`)."""
    import pickle

    return pickle.dumps(([_rng_state(g) for g in _find_rngs(obj)], global_states()))


#: Findings that stop the diagnosis before the numerical check (it would only repeat them, or be
#: meaningless).
_STOP = {"non-deterministic", "forward-changes-state", "stale-output", "not-summed", "wrong-shape", "non-finite",
         "wrong-order"}
#: Of :data:`_STOP`, the codes of a gradient's shape: the other gradients are still compared (:func:`_values_checked`).
_SHAPE_STOP = {"not-summed", "wrong-shape", "wrong-order"}


def _stops(diag: Diagnosis) -> tuple[bool, bool]:
    """``(shape_only, stopped)`` after the probes: whether they found only gradients of the wrong shape (the check
    goes on: every other gradient is compared, :func:`_values_checked`), and whether the check stops (a code of
    :data:`_STOP` other than a shape's; a float32 output: differences cannot reach 1e-6; a float32 gradient alone
    still gets the check)."""
    shape_only = isinstance(diag.error, GradientShapeError) and set(diag.codes) & _STOP <= _SHAPE_STOP
    return shape_only, bool(set(diag.codes) & _STOP and not shape_only) or any(
        f.code in _FLOAT32 and f.tensor == "Y" for f in diag.findings)


def _values_checked(run: Callable[[], CheckResult], shape_only: bool) -> CheckResult:
    """``run()`` (the mode's :func:`check_layer`), or, when the probes found only gradients of the wrong shape
    (``shape_only``, named by their own findings) and the check raised for them, the result it holds of every other
    gradient (:func:`gradcheck.check.wrong_shapes`): their bugs are named beside the shapes' (verify26: CMU's
    BatchNorm1d in eval mode was told of dgamma's shape alone, not of dX's eval-mode bug)."""
    try:
        return run()
    except GradientShapeError as exc:
        if not shape_only or getattr(exc, "result", None) is None:
            raise
        return exc.result  # its _shape_errors: each shape's paragraph, said by the caller
#: A float32 Y, or one whose values are all float32 numbers: central differences cannot reach 1e-6.
_FLOAT32 = ("float32", "float32-values")


def _batch_of_one(layer: Any, inputs: list[np.ndarray], owner: str) -> bool:
    """Whether the batch of ``inputs`` is one sample, warned as the diagnosis's (:func:`gradcheck._validation.
    warn_batch_of_one`); a weight (n_out, n_in) tells a batch-last X (n_in, m) (newuser30 F12)."""
    held = getattr(layer, "params", None)
    return V.warn_batch_of_one(inputs, V.input_names(layer, len(inputs)), owner,
                               [*inputs[1:], *(held.values() if isinstance(held, Mapping) else ())])


def _diagnose_mode(layer, X, owner, training, more, kw) -> Diagnosis:
    """:func:`diagnose_layer` in one training mode (``more``: twin, reference, localize, upstream; ``kw``: numerics)."""
    twin, reference, localize, upstream = more
    rtol, atol_probe = V.check_tolerances(kw["rtol"], 1e-9 if kw["atol"] is None else kw["atol"])
    inputs = _probe_inputs(X, kw["seed"], owner)
    one = _batch_of_one(layer, inputs, owner)  # check_layer's own warning is ignored below: this is the diagnosis's
    diag = Diagnosis(owner, training=training)
    try:
        pristine = copy.deepcopy(layer)  # the layer as it is now, for the cache probe (a sandboxed
    except Exception:  # noqa: BLE001 - one: in its child); one that cannot be copied skips it
        pristine = None
    try:
        probes = _Probes(layer, inputs, owner, training, atol_probe, kw["seed"], diag)
        proxy = probes.run(pristine)
    except GradcheckError as exc:
        diag.error, proxy = _while_mode(layer, inputs, training, exc), None
        if not diag.findings or diag.findings[-1].severity != "error":
            diag.findings.append(_find("student-code", error=str(exc)))
    finally:
        _release(pristine)
    shape_only, stopped = _stops(diag)
    # a random forward held fixed: the autoprop twin and the reference would draw their own masks
    # (--tape runs the student's own forward, held in the same way: same_draws)
    random_twin = twin is not None and bool(diag.held) and not getattr(twin, "same_draws", False)
    random_ref = _random_reference(reference, layer, diag, inputs, training)
    proxy = _DataPart(proxy, probes.penalties) if proxy is not None and probes.penalties else proxy
    if proxy is not None and not stopped:
        try:
            with warnings.catch_warnings():
                if one:
                    warnings.filterwarnings("ignore", message=re.escape(f"batch of one: {owner} "))
                # a held draw is of one shape: a stacked batch draws another mask (session 12)
                diag.result = res = _values_checked(lambda: check_layer(
                    proxy, inputs, twin=None if random_twin else twin, training=training, name=owner, values=False,
                    reference=None if random_ref else reference, upstream=upstream, **kw,
                    **({"batched": False} if diag.held else {})), shape_only)
            _DataPart.unchecked(res, probes.penalties) or _mask_unchecked(res, diag.mask_undecided)
            if random_twin:
                res.twin_note = RANDOM_TWIN
            if random_ref and "fixed-mask" not in diag.codes and not diag.mask_undecided:
                res.notes.append(RANDOM_REFERENCE)
            if res.passed and res.mode == "sample" and probes.wrong_here:  # the sample missed them
                diag.findings.append(_find("sample-missed", ", ".join(probes.wrong_here)))
            if res.failing_tensors:  # wrong at the check's input: the other-input probe's premise
                diag.findings = [f for f in diag.findings if not (  # ("right at the check's input") is false
                    f.code == "stale-cache" and "right at the first input the layer saw" in f.message)]
            prec = None
            failed = not res.passed and not (res.unchecked and not res.failing_tensors)  # NOT CHECKED: no bug
            if failed or res.kinks and not _unconverged(res):  # a failure, or kinks excused: precision first
                G = getattr(res, "_upstream", None) if upstream is None else np.array(upstream, dtype=np.float64)
                L = _Layer(proxy, inputs, probes.names, V.layer_params(proxy, res.name), training,
                           G, res.seed)
                if (prec := _precision_inside(L.fwd, inputs, L.params, res.seed)) is not None:
                    _no_kinks(res, prec[0])
            if failed:
                _read_layer(L, layer, training, reference)
                L.coarse = prec is not None  # central differences of a rounded forward: no weight-skips-derivative
                _signatures(L, res, diag)
                if prec is not None:
                    _precision_finding(diag, *prec)
            _float32_backward(layer, res, diag) if prec is None else None
            # each shape's own words, after the other bugs; not when the order of the returned gradients explains
            # every shape (a CS231n pair returning (dx, db, dw): "was the batch axis summed?" would mislead)
            if (said := getattr(res, "_shape_errors", None)) and "wrong-order" not in diag.codes:
                diag.findings.append(_find("student-code", error=" ".join(said)))
        except GradcheckError as exc:
            diag.error = _while_mode(layer, inputs, training, exc)
            diag.findings.append(_find("student-code", error=str(exc)))
    if diag.result is not None and (missing := _missing_gradients(layer)):  # H4: bh, or a constant scale
        from ._adapters import undecided_text

        one = len(missing) == 1
        unseen = [str(w) for w in (_protocol(layer) or {}).get("unseen") or []]
        diag.findings.append(_find("weight-or-constant", ws=", ".join(missing), it="it" if one else "them",
                                   verb="is" if one else "are", say=undecided_text(missing, unseen)))
    if localize and not diag.passed and upstream is None:  # a model's layers (a sandboxed one's too)
        _localize(layer, inputs, diag, training, kw)
    return diag


#: What the precision codes call the forward's coarse values, in :func:`_no_kinks`'s note.
_GRID = {"float32-inside": "float32 round-off inside forward", "float16-inside": "its float16 cast",
         "piecewise-constant": "its rounding to a grid"}


def _no_kinks(res: CheckResult, code: str) -> None:
    """Compare again, counted as failures, the elements of ``res`` excused as "at a kink": one-sided
    differences that disagree are the round-off of a forward with coarse values inside (``code``, a
    :func:`_precision_inside` code), not a kink; a note says so."""
    for rec in res.records:
        for i, c in enumerate(rec.comparisons):
            src, _, other = c.pair.partition("-vs-")
            a, b = res.gradients.get(src, {}).get(rec.tensor), res.gradients.get("numerical", {}).get(rec.tensor)
            if other != "numerical" or not c.kinks or a is None or b is None:
                continue
            atol = res.atol_of(rec.tensor) if np.isnan(c.atol) else c.atol
            rec.comparisons[i] = compare(a, b, c.pair, rtol=res.rtol, atol=atol, mask=np.isfinite(b), how=c.how)
            res.notes.append(f"{rec.tensor}: the {len(c.kinks)} element(s) whose one-sided differences disagree "
                             f"are no kink but {_GRID[code]} (see the diagnosis), so they are counted as failures")


#: The names of a low-precision float dtype in the source (``np.float32``, ``"f4"``) and the errors of a gradient
#: that float32's round-off in backward leaves (relative, against the float64 check; above it: a bug's size).
_LOW_DTYPES = {"float32": "float32", "single": "float32", "f4": "float32", "float16": "float16", "half": "float16",
               "f2": "float16"}
_FLOAT32_ERRORS = (1e-8, 1e-4)


def _low_dtype_lines(layer: Any) -> list[tuple[str, str]]:
    """``[(dtype, "line N: text"), ...]``: the lines of ``layer``'s class (and its bases) naming a float32 or float16
    dtype (``np.float32``, ``dtype="f4"``), read with :mod:`ast` (:func:`layer_classes`)."""
    lines, classes = layer_classes(layer)
    found = {}
    for c in classes:
        for n in ast.walk(c):
            name = n.attr if isinstance(n, ast.Attribute) else n.value if isinstance(n, ast.Constant) else None
            if isinstance(name, str) and name in _LOW_DTYPES and 0 < n.lineno <= len(lines):
                found.setdefault(n.lineno, _LOW_DTYPES[name])
    return [(d, f"line {i}: {lines[i - 1].strip()}") for i, d in sorted(found.items())]


def _float32_backward(layer: Any, res: CheckResult, diag: Diagnosis) -> None:
    """The "float32-backward" finding, in place of a PASS or of "no known bug pattern": the class names a float32
    (float16) dtype (:func:`_low_dtype_lines`) and the largest relative error of a manual-vs-numerical comparison is
    at that dtype's level (:data:`_FLOAT32_ERRORS`), which passes rtol=1e-6 on one seed and fails on another
    (tester20s H2: a tanh whose cached output is float32)."""
    if any(f.code not in ("wrong-values",) for f in diag.errors) or any(f.code.startswith("float") for f in diag.findings):
        return
    errs = {rec.tensor: c.max_rel_error for rec in res.records for c in rec.comparisons
            if c.pair == "manual-vs-numerical" and np.isfinite(c.max_rel_error)}
    worst = max(errs.values(), default=0.0)
    if not _FLOAT32_ERRORS[0] <= worst <= _FLOAT32_ERRORS[1] or not (found := _low_dtype_lines(layer)):
        return
    dtype = found[0][0]
    tensors = ", ".join(t for t, e in errs.items() if e >= _FLOAT32_ERRORS[0])
    diag.findings = [f for f in diag.findings if f.code != "wrong-values"]
    diag.findings.append(_find("float32-backward", None, dtype=dtype, where="; ".join(w for _, w in found[:2]),
                               unit=float(np.finfo(dtype).eps) / 2, err=worst, tensors=tensors))


def _precision_finding(diag: Diagnosis, code: str, fields: dict[str, Any]) -> None:
    """Replace the findings that read the numerical gradient's noise as a mismatch ("wrong-values",
    "numerical-noise") by the finding ``code`` of :func:`_precision_inside`; a bug named in another tensor
    (a factor of 2 is far above that noise) stays, and the finding says the rest is not ruled out."""
    noise = ("wrong-values", "numerical-noise")
    diag.findings = [f for f in diag.findings if f.code not in noise]
    named = [f.tensor for f in diag.errors if f.tensor]
    verdict = ("no gradient can be checked to 1e-6 and no bug in backward is named or ruled out" if not named else
               f"no other gradient can be checked to 1e-6 and no bug besides the one named in {', '.join(named)} "
               "(far above this noise) is named or ruled out")
    diag.findings.append(_find(code, "Y", **dict(fields, verdict=verdict)))


def _while_mode(layer, inputs, training: bool, exc: GradcheckError) -> GradcheckError:
    """``exc``, an error the checked code raised (exit 3) in one of two modes, with the mode and its
    calls in front (``while checking eval mode: forward(X, train_flg=False) then backward(dY): ``),
    and for a backward that raised in eval mode but runs after a training forward (on a copy of
    the layer), the hint that it reads state only a training forward sets (a Dropout's mask)."""
    if exc.exit_code != EXIT_STUDENT or len(training_modes(layer, "auto")) < 2 or not exc.args:
        return exc
    inside, after = V.switch_words(_protocol(layer), training)  # (self.is_mask = True): no keyword of forward
    args = ", ".join(V.input_names(layer, len(inputs)))
    msg = f"while checking {mode_word(training)} mode: forward({args}{inside}){after} then backward(dY): {exc.args[0]}"
    if not training and ".backward(" in str(exc.args[0]):
        with contextlib.suppress(Exception):  # noqa: BLE001 - no hint when the copy cannot run it
            twin = copy.deepcopy(layer)
            twin.forward(*[x.copy() for x in inputs], training=True)
            twin.backward(np.asarray(twin.forward(*[x.copy() for x in inputs], training=False)))
            on_in, on_after = V.switch_words(_protocol(layer), True)  # train_flg=True, or self.x = True
            msg = msg.rstrip(".") + (f". Backward in eval mode reads state only a training forward sets (after a forward "
                    f"with {on_in[2:] or on_after.strip(' ()')} the same eval forward and backward run): set it in every forward "
                    "(e.g. the mask, or the eval scale) or remember the mode, and use it in backward; a layer "
                    "backpropagated only after a training forward (Deep Learning from Scratch's Dropout and "
                    "BatchNormalization) is checked in that mode alone by --training")
    exc.args = (msg, *exc.args[1:])
    return exc


def _localize(model, inputs, diag: Diagnosis, training, kw) -> None:
    """Check each layer of a failing model on the input it receives; record the first that fails. A sandboxed
    model's layers are reached in the child (tester13 ConfidentNetBuggySigmoid: a sigmoid's bug in a model with
    ``log(y + eps)``, unnamed before); when that fails, the model's own check stands."""
    stopped: list[tuple[str, int]] = []
    try:
        found = first_failing_sublayer(model, inputs, training, kw, stopped)
    except GradcheckError:
        if not _remote(model):
            raise
        return
    if found is None and stopped:
        why, i = stopped[0]
        diag.findings.append(_find(why, severity="info", n=MAX_SUBLAYERS, i=i))
    if found is not None:
        i, sub, d = found
        diag.sublayer = (i, d)
        why = d.errors[0].message if d.errors else (d.error or "gradient mismatch")
        if not_checkable(d):  # a stateful sub-layer: NOT CHECKED in the model as alone (tester25s: Rnnlm's TimeLSTM)
            diag.findings.insert(0, _find("sublayer-not-checked", i=i, cls=_class_name(sub), why=why,
                                          how=_stateless_advice(sub, d)))
        else:
            diag.findings.insert(0, _find("first-failing-layer", i=i, cls=_class_name(sub), why=why))


def not_checkable(diag: Diagnosis) -> bool:
    """Whether nothing wrong was found and no gradient could be compared in this mode: a random forward gradcheck
    cannot hold, a mask dropping every entry, a one-sample batch normalisation, weights all zero, state carried from
    one call to the next (tester16 M5), or a sub-layer of a model that is one of these (session 26: a model holding a
    stateful TimeLSTM is NOT CHECKED as that layer alone is, not FAIL). The one rule of ``gradcheck check``'s NOT
    CHECKED for these (exit 3)."""
    errs = [f for f in diag.findings if f.severity == "error"]
    return diag.error is None and bool(errs) and all(
        f.code in ("non-deterministic", "all-dropped", "one-sample-norm", "zero-weights", "sublayer-not-checked")
        or (f.code == "forward-changes-state" and CARRIED in f.message) for f in errs)


def _stateless_advice(sub: Any, d: Diagnosis) -> str:
    """How to have a sub-layer that carries state (:data:`CARRIED`) checked: alone, built not stateful (its
    ``stateful`` argument, when gradcheck saw it as the adapters' config toggle ``self.stateful|True|stateful:1``),
    else with its state reset; "" for another reason (a random sub-layer: its own finding says how)."""
    if not any(f.code == "forward-changes-state" and CARRIED in f.message for f in d.findings):
        return ""
    cls = _class_name(sub)
    toggles = (_protocol(getattr(sub, "_layer", sub)) or {}).get("config_toggles") or []
    arg = next((str(t).split("|")[2].split(":")[0] for t in toggles if str(t).startswith("self.stateful|True|")
                and ":" in str(t).split("|")[2]), "stateful")
    return (f"; its formulas are checked by checking {cls} alone, built not stateful (gradcheck check FILE::{cls} "
            f"--init '{{\"{arg}\": false, ...its weights}}'), which runs the same forward and backward from a fresh "
            f"state, or by resetting its state before each forward of the model")


def _class_name(layer: Any) -> str:
    """The student's class name of ``layer`` (a sandboxed one's, as its child said)."""
    return layer.class_name if _remote(layer) else type(layer).__name__


#: Most sub-layers :func:`first_failing_sublayer` visits (each distinct one a full check of its own: redteam36 F4,
#: ``layers = [lin] * 300`` took 286 s); past them the search stops and the diagnosis says so (``sublayers-capped``).
MAX_SUBLAYERS = 32


def first_failing_sublayer(model, inputs, training, kw,
                           stopped: list[tuple[str, int]] | None = None) -> tuple[int, Any, Diagnosis] | None:
    """The first layer of ``model.layers`` whose own check fails on the input it receives (each adapted as the check
    calls it, :func:`_adapted_sub`): ``(index, sub-layer, its Diagnosis)``; None when none fails, ``model`` has no
    ``layers`` list, or a sub-layer is not in the manualprop protocol (DLfS-2's params lists: not checkable alone,
    not blamed). ``kw``: :func:`diagnose_layer`'s numerical settings.

    Each sub-layer's check searches no further (a sub-layer's own layers are not localised: redteam36 F4b, a model
    whose ``layers`` held itself nested checks until the grader's stack overflowed); a layer object met again (the
    same object at an earlier index) is run, not checked again, and the model itself in its own ``layers`` ends the
    search, as do layers that are all met before (:func:`gradcheck._adapters.next_new_layer`: ``[lin] * 40`` costs
    one sub-layer and its check); after :data:`MAX_SUBLAYERS` layers the search stops. Where it stopped without
    finding one is appended to ``stopped``: ``("sublayers-repeated", index)`` or ``("sublayers-capped", index)``."""
    remote = _remote(model)  # a sandboxed model: each sub-layer adapted in the child (RemoteLayer.sublayer)
    if not remote and not isinstance(getattr(model, "layers", None), (list, tuple)):
        return None
    # integer indices stay integers (tester25s M4: TimeEmbedding's first Embedding was given float ids and blamed
    # for the IndexError)
    xs = [np.array(x, dtype=None if np.asarray(x).dtype.kind in "iub" else np.float64, copy=True) for x in inputs]
    seen: set[int] = set()  # id() of the (local) layer objects checked; a sandboxed one's repeats: the child's same_as
    for i in itertools.count():
        if remote:
            if (sub := model.sublayer(i, xs, training)) is None:
                return None
            again = sub.same_as is not None
        elif i < len(model.layers):  # as the check calls it (a forward without training, a self-step)
            if model.layers[i] is model or not forward_takes(model.layers[i], len(xs)):
                return None  # itself (nothing new to check), RNN.forward(x, h_prev): not checkable alone (M3)
            again = id(model.layers[i]) in seen
            seen.add(id(model.layers[i]))
            sub = _adapted_sub(model.layers[i], xs, training)
        else:
            return None
        try:
            if i == MAX_SUBLAYERS:  # the search stops (redteam36 F4: [lin] * 300 took 286 s)
                if stopped is not None:
                    stopped.append(("sublayers-capped", i))
                return None
            try:
                d = None if again else diagnose_layer(sub, xs if len(xs) > 1 else xs[0], training=training,
                                                      name=f"layers[{i}] {_class_name(sub)}", drawn=False,
                                                      localize=False, **kw)
            except UsageError:
                d = None
            except ProtocolError:  # a sub-layer without backward (a model steps its weights itself): not checkable alone
                return None
            if d is not None and d.result is None and isinstance(d.error, ProtocolError):
                return None
            if d is not None and d.result is None and _forward_raised(d):  # the model's own forward did not: the
                return None  # input gradcheck gave it is not what the model does (Embedding's int idx made float)
            if i and d is not None and d.result is None and ".forward(" in str(d.error or ""):
                return None  # its forward fails on the previous layer's output, which the model ran without error:
                # the layers are no chain (Deep Learning from Scratch 2's TimeEmbedding: one Embedding per time step)
            if d is not None and not d.passed:
                return i, sub, d
            if (sub.next_new if remote else next_new_layer(model, model.layers, i)) == -1:
                if stopped is not None:  # the rest met before: nothing left to check (redteam36 F4)
                    stopped.append(("sublayers-repeated", i + 1))
                return None
            try:
                Y = sub.forward(*[x.copy() for x in xs], training=training)
                xs = [np.asarray(Y, dtype=np.float64)]
            except Exception:  # noqa: BLE001
                return None
        finally:
            _release(sub)  # a sandboxed sub-layer: the child's handle on it freed (a local one: nothing)
    return None  # (itertools.count: not reached)


def _forward_raised(d: Diagnosis) -> bool:
    """Whether a sub-layer's check stopped because its forward raised on the input :func:`first_failing_sublayer`
    gave it (a ``student-code`` finding naming ``.forward(``): the model's forward ran, so that input is not what the
    model passes it (tester25s: DLfS-2's TimeEmbedding, whose Embedding got the indices as floats, was blamed)."""
    return any(f.code == "student-code" and ".forward(" in f.message for f in d.findings if f.severity == "error")


def _adapted_sub(sub: Any, xs: list[np.ndarray], training) -> Any:
    """Sub-layer ``sub`` of a model as :func:`gradcheck._adapters.adapt` adapts it for the check on the inputs
    ``xs`` it receives (attribute style, a forward without ``training``, dX after its own weight step), so
    :func:`_localize` names the sub-layer whose own check fails, not one it called outside the protocol; ``sub``
    itself when it cannot be adapted (a sandboxed layer, or one the adapters refuse: its own check says why)."""
    from . import _adapters

    if _remote(sub):
        return sub
    try:
        return _adapters.adapt(sub, [x.copy() for x in xs], training is not False)[0]
    except (GradcheckError, TypeError, ValueError):
        return sub


def _eval_mode(layer: Any, training: bool) -> str:
    """``"test mode"`` for a CS231n pair whose ``*_param['mode']`` is test or eval, ``"eval mode"``
    for a layer whose forward takes ``training`` run with False, else ``""``."""
    from ._adapters import FunctionPair

    proto = _protocol(layer, "cs231n") if _remote(layer) else {}
    if isinstance(layer, FunctionPair) or proto:
        mode = proto.get("mode") if proto else next(
            (v["mode"] for v in layer._kwargs.values() if isinstance(v, dict) and "mode" in v), "")
        return "test mode" if mode in ("test", "eval") else ""
    eval_declared = training is False and training_modes(layer, "auto") == [False, True]
    return "eval mode" if eval_declared else ""


def _release(*objs) -> None:
    """Free the child's copies of a sandboxed layer (copies here: the garbage collector's)."""
    for o in filter(_remote, objs):
        with contextlib.suppress(GradcheckError):  # the sandbox stopped: nothing left to free
            o.release()


def _state_attrs(obj: Any) -> dict[str, np.ndarray]:
    """Copies of the public numbers (a call counter ``self.t``, an annealed ``self.s``; not a bool) and numeric arrays
    of a local object's own attributes (:func:`gradcheck._adapters.state_values`); {} for a sandboxed layer (whose
    attributes cannot be set from here: :func:`adapter_call` reads them in its child, to compare)."""
    from ._adapters import state_values

    return {} if _remote(obj) else state_values(obj)


class _StateProxy(_Proxy):
    """The layer as the checker calls it when its training forward updates state it then reads (a running mean
    updated and used in the same call: :func:`_hold_state`): before every forward the attributes ``values`` are put
    back (:func:`gradcheck._adapters.set_weights`, in the child for a sandboxed layer); no chunked scans in the
    child, which would not put them back."""

    def __init__(self, layer: Any, values: dict[str, np.ndarray]):

        super().__init__(layer)
        self.__dict__.pop("forward_many", None)
        self._put = functools.partial(adapter_call, layer, "set_weights", values)

    def rewind(self) -> None:
        super().rewind()
        self._put()


def _hold_state(layer: Any, pristine: Any, run) -> tuple[_StateProxy, list[str]] | None:
    """``(proxy, names)``: ``layer`` called through a :class:`_StateProxy` putting back the float array attributes
    its forwards changed since ``pristine`` (a copy taken before the first call) to their values there, when two
    calls through it (``run(obj)``: a forward on the probe inputs) agree; else None (the state is not a float
    array, or the forward is random too). Each evaluation of the check then starts from the same state, as a copy
    taken before the call does (tester22s M1: an EMA of the batch mean updated and used in the same forward, exact
    backward, FAILed "forward changes the layer's state")."""
    def state(o):
        return adapter_call(o, "state_values")

    try:
        before, now = state(pristine), state(layer)
        changed = {k: v for k, v in before.items() if k in now and not _exact(v, now[k])}
        if not changed:
            return None
        proxy = _StateProxy(layer, changed)
        if _exact(np.asarray(run(proxy), dtype=np.float64), np.asarray(run(proxy), dtype=np.float64)):
            return proxy, sorted(changed)
    except Exception:  # noqa: BLE001 - an attribute that cannot be put back: the finding stands
        return None
    return None


def _reads_itself(pristine: Any, run, name: str) -> bool:
    """Whether the value forward leaves in the attribute ``name`` depends on the one it found there
    (a running statistic: new = m * old + ...), not a cache every forward overwrites: two copies of
    ``pristine``, one with ``name`` moved by 1, run forward (``run``) and are compared."""
    a, b = copy.deepcopy(pristine), copy.deepcopy(pristine)
    setattr(b, name, getattr(b, name) + 1.0)
    run(a), run(b)
    return not _exact(getattr(a, name), getattr(b, name))


#: The words of a ``forward-changes-state`` finding of a forward without a training argument: state carried from
#: one call to the next, which leaves the layer NOT CHECKED (exit 3, tester16 M5), not FAIL.
CARRIED = "state carried from one call to the next"


def _built_not_stateful(layer: Any) -> bool:
    """Whether the layer was built with ``self.stateful = False`` (the adapters' ``config_toggles``, in the protocol of
    a sandboxed layer too): state its forward carries from one call to the next is then a bug, not a stateful RNN
    (tester25s: DLfS-2's TimeRNN with its ``if not self.stateful`` test inverted)."""
    toggles = (_protocol(getattr(layer, "_layer", layer)) or {}).get("config_toggles") or []
    return any(str(t).startswith("self.stateful|False|") for t in toggles)


def _state_fields(training: bool, diff: float, changed: list[str], call: str = "", seen: str = "",
                  fresh: bool = False) -> dict[str, Any]:
    """The fields of the ``forward-changes-state`` finding: the mode, the attributes changed, why, the fix; ``call``
    the forward call as made (``forward(X)`` when forward takes no training argument: then neither a mode nor
    running statistics are named, tester14 #4, but the attributes it changes); ``fresh``: the layer is built with
    ``self.stateful = False`` (:func:`_built_not_stateful`), so the carried state is a wrong result, not NOT CHECKED."""
    attrs = f" ({', '.join('self.' + k for k in changed)})" if changed else ""
    call = call or f"forward(X, training={training})"
    if "training=" not in call and fresh:
        why = (" (the layer is built with self.stateful = False: each forward must start from a fresh state, so "
               "carrying it from one call to the next is a bug)")
        fix = (f"when self.stateful is False, set {_attrs_or(changed[:1])} afresh at the start of every forward "
               "(as DLfS-2's TimeRNN: if not self.stateful or self.h is None: self.h = np.zeros(...))")
    elif "training=" not in call:
        why = (f" ({CARRIED}: finite differences of L need an output that depends on this call's input and the "
               "weights alone, so no gradient was compared; a stateful RNN that carries h may be right)")
        fix = (f"to have it checked, reset {_attrs_or(changed)} before each forward (a reset() method, or "
               f"{_attrs_or(changed[:1])} = None where a new sequence starts), or pass the state in as an "
               "input of forward (forward(x, h0)), which gradcheck holds fixed; a counter or schedule: "
               "change it outside forward (in a method the training loop calls between steps)")
    elif training:
        why = " (running statistics updated and then used in the training forward?)"
        fix = ("compute the training output from this call's input alone (the batch's own statistics); what "
               "forward updates for later (running statistics) must not feed this call's output")
    else:
        why = ": running statistics updated in eval mode (an eval forward must leave the layer as it is)"
        fix = ("update running_mean and running_var only when training=True; in eval mode normalise with them "
               "and leave them unchanged")
    seen = (seen or "two calls with the same input differ by up to {diff:.3g}").format(diff=diff)
    return {"diff": diff, "attrs": attrs, "call": call, "why": why, "fix": fix, "seen": seen}


def _state_said(layer: Any, inputs, changed: list[str], call: str) -> tuple[list[str], str]:
    """``(the attributes forward changes between calls, the forward call)`` for ``forward-changes-state``:
    ``changed`` (:meth:`_Probes.state_change`), else the sandboxed layer's protocol's ``state_changed``, else those
    of the student's object inside an adapter (:func:`gradcheck._adapters._state_between_calls`); ``call`` without
    ``training=`` when that object's forward takes no training argument."""
    from ._adapters import _state_between_calls, _takes_training
    inner = getattr(layer, "obj", None) if not _remote(layer) else None
    said = (getattr(getattr(layer, "_layer", layer), "protocol", None) or {}).get("state_changed")
    if not changed and not said and inner is not None and callable(getattr(inner, "forward", None)):
        with contextlib.suppress(Exception):  # student code: no names, the finding stands
            said = _state_between_calls(inner, list(inputs), {})
    if inner is not None and "training=" in call and getattr(layer, "mode_keyword", None) is None \
            and not _takes_training(inner.forward):
        call = call.partition(", training=")[0] + ")"
    return changed or list(said or []), call


def _attrs_or(changed: list[str]) -> str:
    """``self.t, self.s`` for the attributes forward changed, or "the state it changes" when none is known."""
    return ", ".join("self." + k for k in changed) if changed else "the state it changes"


#: An unwritten grads entry is filled with this before the first backward (found: never written).
_SENTINEL = 7.25


class _Probes:
    """The structural probes (:data:`STRUCTURAL`) of one layer on one input, in one mode."""

    def __init__(self, layer, inputs, owner, training, atol, seed, diag: Diagnosis):
        self.layer, self.inputs, self.owner, self.training = layer, inputs, owner, training
        self.atol, self.diag = atol, diag
        self.rng = np.random.default_rng([seed, 2])
        self.names = V.input_names(layer, len(inputs))
        self.params = V.layer_params(layer, owner)
        self.fcall = V.forward_call(layer, self.names, training)  # forward(X) when it takes no training (M6)
        self.proxy = _Proxy(layer)
        #: the gradients whose directional derivatives at the check's input disagree (second_input)
        self.wrong_here: list[str] = []
        #: ``{param key: "stated" | "unknown"}``: a dY-free term of its gradient, a penalty's (:meth:`penalty`):
        #: the check compares the data part, backward(dY) - backward(0) (:class:`_DataPart`)
        self.penalties: dict[str, str] = {}
        #: the arrays each object's last forward was given (``id(obj)``: :meth:`judged_backward`)
        self.given: dict[int, list] = {}
        #: the cache guard's messages of an in-process backward that wrote into an array its forward made
        #: (:meth:`judged_backward`; a sandboxed layer's: ``cache_rewritten``)
        self.rewritten: list[str] = []

    def fwd(self, obj, xs):
        self.given[id(obj)] = given = [x.copy() for x in xs]
        return V.call_student(obj.forward, *given, training=self.training, owner=self.owner, call=self.fcall)

    def bwd(self, G, obj=None):
        ret = self.judged_backward(G, obj or self.proxy)
        if isinstance(ret, list) and len(self.inputs) == 1 and \
                (refused := stored_inputs_refusal(obj or self.proxy, self.owner, "backward(dY)")):
            raise refused  # numpy-ml's stored inputs without a flush, as the check refuses them (sources)
        return ret

    def judged_backward(self, G, obj):
        """``obj.backward(G)``, an in-process layer's writes into its forward's cache judged by the one rule
        (:func:`gradcheck.sources.cache_write_verdict`, as ``gradcheck check`` and the grader's sandbox judge them):
        a write into an array forward made is kept in :attr:`rewritten` (read by :meth:`own_cache`); a write into
        an array forward was given is left to the cache probe (:meth:`cache`), which names it."""
        layer = self.layer if obj is self.proxy else obj
        if getattr(layer, "cache_guarded", False):  # sandboxed: judged in its child (_Remote.cache_rewritten)
            return V.call_student(obj.backward, G.copy(), owner=self.owner, call="backward(dY)")
        given = obj.received if obj is self.proxy else self.given.get(id(obj), [])
        guard = cache_guard(layer, self.names)
        kept = [(n, x, x.copy()) for n, x in zip(self.names, given) if isinstance(x, np.ndarray)]
        ret = V.call_student(obj.backward, G.copy(), owner=self.owner, call="backward(dY)")
        hit = next((n for n, x, c in kept if not np.array_equal(x, c, equal_nan=x.dtype.kind in "fc")), None)
        note = cache_write_verdict(self.owner, guard(), hit)[1]
        if note and note not in self.rewritten:
            self.rewritten.append(note)
        return ret

    def grads_of(self, obj, ret) -> dict[str, np.ndarray]:
        """``{"dX": ..., "dW": ...}``: the returned gradients of float inputs and ``obj.grads``."""
        g = getattr(obj, "grads", None)
        g = g if isinstance(g, Mapping) else {}
        out = {V.grad_name(n): np.array(v, dtype=np.float64)
               for n, v, x in zip(self.names, _as_list(ret, len(self.inputs)), self.inputs)
               if x.dtype.kind == "f" and v is not None}
        return out | {V.grad_name(k): np.array(g[k], dtype=np.float64, copy=True) for k in self.params
                      if isinstance(g.get(k), (np.ndarray, np.generic)) and g[k].dtype.kind in "fiu"}

    def step(self, obj, xss, G, reset=False):
        """The one run of the probes: ``obj``'s forward on each input list of ``xss`` (none: the
        last forward stands), grads zeroed if ``reset``, then backward(G): ``(Y, gradients)``."""
        Y = [self.fwd(obj, xs) for xs in xss][-1] if xss else None
        if reset:
            _reset_grads(obj)
        return Y, self.grads_of(obj, self.bwd(G, obj))

    def probe(self, i, passed, detail="", code=None, tensor=None, **fields):
        """Record probe ``i`` of :data:`STRUCTURAL`; a failed one with a ``code`` is also found."""
        self.diag.probes.append(Probe(STRUCTURAL[i], passed, detail))
        if passed is False and code:
            self.find(code, tensor, **fields)

    def find(self, code, tensor=None, severity="error", **fields):
        self.diag.findings.append(_find(code, tensor, severity, **fields))

    def others(self, step=1.0):
        """The inputs moved by ``step`` times a standard normal draw (the float ones)."""
        return [x + step * self.rng.standard_normal(x.shape) if x.dtype.kind == "f" else x
                for x in self.inputs]

    def run(self, pristine=None):
        """Every probe, in order; the proxy the numerical check should call."""
        if self.determinism(pristine):
            return self.proxy
        G = self.backward()
        if G is None:
            return self.proxy
        self.repeat(G)
        self.cache(pristine, G)
        self.second_input(G)
        Yp = np.asarray(self.fwd(self.proxy, self.others(1e-3)))
        Yr = np.asarray(self.fwd(self.proxy, self.inputs))
        was, now = f"{Yr.shape} {Yr.dtype}", f"{Yp.shape} {Yp.dtype}"
        self.probe(8, was == now, "" if was == now else f"{was} became {now}", "unstable-output",
                   was=was, now=now)
        return self.proxy

    def differing(self, Y1: np.ndarray, tries: int = CHANCE_FORWARDS) -> np.ndarray:
        """The first of up to ``tries`` more forwards whose output differs from ``Y1`` (``Y1`` when none does): three
        calls of a forward that moved its generators agreed, which a dropout does by chance where few entries can
        drop (redteam40 F1: Dropout(0.05) on 6 entries keeps every one three calls running 40% of the time; 43 more
        agree with probability 1e-6). A forward that draws without using the draws costs ``tries`` calls."""
        for _ in range(tries):
            if not _exact(Y1, Y := np.asarray(self.fwd(self.layer, self.inputs), dtype=np.float64)):
                return Y
        return Y1

    def determinism(self, pristine=None) -> bool:
        """Three forwards (a random mask repeats by chance with probability 2**-size per pair),
        then the float32 stop; True: stop. Calls that differ and cannot be held are a random
        forward, or one that changes the state it reads (:meth:`state_change` on ``pristine``,
        the layer as it was before the first call)."""
        layer, inputs = self.layer, self.inputs
        Y1 = self.fwd(layer, inputs)
        # None, an integer array, NaN: the canonical one-paragraph error (exit 3)
        V.check_output(Y1, owner=self.owner, tensor="Y", produced_by=self.fcall,
                       expected_shape=None)
        y_dtype, Y1 = np.asarray(Y1).dtype, np.asarray(Y1, dtype=np.float64)
        drew = adapter_call(layer, "random_draws")  # after the first call (a lazy build may draw once)
        Y2, Y3 = (np.asarray(self.fwd(layer, inputs), dtype=np.float64) for _ in range(2))
        Y2 = Y3 if _exact(Y1, Y2) and not _exact(Y1, Y3) else Y2
        if _exact(Y1, Y2) and adapter_call(layer, "random_draws") != drew:
            Y2 = self.differing(Y1)  # agreed by chance while its generators moved (redteam40 F1)
        ok, diff = _exact(Y1, Y2), 0.0
        if not ok:
            diff = float(np.nanmax(np.abs(Y1 - Y2))) if Y1.shape == Y2.shape else float("nan")
            random = f"the forward is random (two calls differed by {diff:.3g}); "
            if ok := (held := _hold(layer, lambda obj: self.fwd(obj, inputs))) is not None:
                self.proxy, code, fields = held
                self.find(code, severity="info", random=random, **fields)
                if dropped := self.redraw(code):  # every mask dropped every entry: the check compares zeros
                    self.find("all-dropped", how=f" for any of the {dropped} masks drawn (its draws held "
                              "fixed, then drawn again)", mode=self.in_mode(mode_word(self.training)))
        code, fields = "non-deterministic", {"diff": diff, "advice": _seed_advice(layer) if not ok else ""}
        if not ok and (seeds := _per_call_seeds(layer)):  # Z16: no generator lives between calls to rewind
            fields["advice"] = _per_call_advice(seeds)
        elif not ok and (changed := self.state_change(pristine)) is not None:
            code, fields = "forward-changes-state", _state_fields(self.training, diff, *_state_said(
                layer, inputs, changed, self.fcall), fresh=_built_not_stateful(layer))
            if self.training is True and "training=" in fields["call"] and (
                    kept := _hold_state(layer, pristine, lambda obj: self.fwd(obj, inputs))) is not None:
                self.proxy, names = kept  # tester22s M1: checked on the state before the first call
                ok, words = True, ", ".join("self." + k for k in names)
                self.find("state-held", severity="info", call=fields["call"], attrs=words,
                          its="their" if len(names) > 1 else "its")
        self.probe(0, ok, "" if ok else f"two calls differ by up to {diff:.3g}", code, **fields)
        if ok and not self.diag.held and self.one_sample_norm(Y1) and self.constant():  # tester18s M4
            self.find("one-sample-norm", mode=self.in_mode())
        elif ok and not self.diag.held and not np.any(Y1) and (zero := _zero_weights(layer)) and self.constant():
            self.find("zero-weights", names=zero, mode=self.in_mode())  # tester20g
        elif ok and not self.diag.held and not np.any(Y1) and self.constant() and not _unchecked_constants(layer, inputs)[0]:
            # M4: in any mode (a CS231n pair's
            # mode is its --init's): decided by what the mask does, whichever convention p follows
            self.find("all-dropped", how=" (it returns zeros for any input: a mask that keeps no entry, a drop "
                      "rate of 1 or a keep probability of 0?)", mode=self.in_mode())
        # float32 Y for float64 inputs, or for float64 weights beside integer inputs (tester25s M4: Deep Learning from
        # Scratch 2's TimeEmbedding, out = np.empty(..., dtype='f'), FAILed dW at 2e-3, float32's rounding)
        floats = [x for x in inputs if np.asarray(x).dtype.kind == "f"]
        weights = [] if floats else [w for w in self.params.values() if isinstance(w, np.ndarray)]
        low = _low_precision(y_dtype, floats or weights)  # cannot reach 1e-6
        given = "a float64 input" if floats else "float64 parameters (the input holds integers)"
        if ok and (patched := _numpy_patched(layer)):  # tester24s n01: nnfs.init() made numpy float32; one rule
            # whatever Y's dtype (tester30n: Softmax's float64 forward, its backward's np.dot float32)
            returns = f"forward returns {y_dtype} for {given}" + ("" if low else " (its backward may not)")
            self.probe(2, False, f"Y is {y_dtype}, expected float64" if low else f"{patched['names']} replaced",
                       "numpy-patched", "Y", returns=returns, **patched, **_precision(y_dtype if low else np.float32))
            raise NotCheckedError(f"{'forward returns ' + str(y_dtype) if low else 'numpy replaced'}: the checked "
                                  f"code replaced numpy's {patched['names']} (with {patched['by']}'s; see the "
                                  "diagnosis)")
        if ok and low:
            self.probe(2, False, f"Y is {y_dtype}, expected float64", "float32", "Y",
                       what="forward returns", given=given, dlfs=_dlfs_f(y_dtype, layer), **_precision(y_dtype))
        elif ok and (low := y_dtype == np.float64 and _float32_values(Y1, inputs)):  # astype(float32) inside
            self.probe(2, False, "Y's values are float32 numbers", "float32-values", "Y")
        return not ok or low

    def in_mode(self, word: str | None = None) -> str:
        """The words before "the forward" in a finding of a forward that ignores its input: ``"in training mode "``,
        ``"in this mode "`` (``word`` when given), or none for a forward that takes no training argument (tester26s
        M6: "in this mode" of a layer with one mode)."""
        if "training=" not in self.fcall:
            return ""
        return f"in {word or ('training' if self.training is True else 'this')} mode "

    def redraw(self, code: str) -> int:
        """A held random forward whose output does not depend on its float inputs (a Dropout mask that
        dropped every entry: dX = 0 whatever backward does, so a wrong backward would PASS): its mask drawn
        again, up to :data:`_REDRAWS` times, from the state its generators are in then (the same draws for
        the same seed; :meth:`_draw_again`), until one does. 0 when a draw does (``self.proxy`` holds it),
        else the number of masks drawn."""
        for n in range(_REDRAWS + 1):
            if n:
                self._draw_again(code)
            if not self.constant():
                return 0
        return _REDRAWS + 1

    def one_sample_norm(self, Y1) -> bool:
        """Whether the forward, given one sample (``Y1`` its output), normalises over the batch: given two
        samples ``x`` and ``2x + 1`` its two rows differ and add up to twice ``Y1`` (``beta - gamma`` and ``beta +
        gamma``, ``Y1`` being ``beta``), as a batch normalisation's do; a dropout's do not."""
        X = self.inputs[0]
        if X.dtype.kind != "f" or X.ndim < 2 or X.shape[0] != 1 or Y1.ndim < 2 or Y1.shape[0] != 1:
            return False
        try:
            Y2 = np.asarray(self.fwd(self.proxy, [np.concatenate([X, 2 * X + 1]), *self.inputs[1:]]), dtype=float)
        except Exception:  # noqa: BLE001 - student code at another batch size
            return False
        return Y2.shape[0] == 2 and Y2.shape[1:] == Y1.shape[1:] and close(Y2[0] + Y2[1], 2 * Y1[0], 1e-6) \
            and not close(Y2[0], Y2[1], 1e-3)

    def constant(self) -> bool:
        """Whether ``self.proxy``'s forward gives the very same Y when every float input moves by a standard
        normal draw (from a stream of its own: the probes' ``self.rng`` stays as it was)."""
        inputs = self.inputs
        if not any(x.dtype.kind == "f" for x in inputs):
            return False
        rng = probe_rng(12)
        moved = [x + rng.standard_normal(x.shape) if x.dtype.kind == "f" else x for x in inputs]
        return _exact(np.asarray(self.fwd(self.proxy, inputs), dtype=np.float64),
                      np.asarray(self.fwd(self.proxy, moved), dtype=np.float64))

    def _draw_again(self, code: str) -> None:
        """Hold a new draw: a mask switch released, one forward (it draws), set again; or the generators
        advanced by one unheld forward and rewound to their new states from then on."""
        layer = self.layer
        if code == "held-mask":
            adapter_call(layer, "hold_random", "unfix_mask")
            self.fwd(layer, self.inputs)
            adapter_call(layer, "hold_random")
            self.proxy = _Proxy(layer)
            return
        if _remote(layer):
            adapter_call(layer, "hold_random", "release")
        self.fwd(layer, self.inputs)
        self.proxy = _Proxy(layer, rewind=True)

    def state_change(self, pristine) -> list[str] | None:
        """A forward that is not random but changes state it reads (running statistics updated in
        eval mode): two copies of ``pristine`` give the same output, and a second call on one of
        them another. The array attributes that call changed (a local layer; [] for a sandboxed
        one, whose attributes stay in its child), or None (random, or no copy to be had)."""
        if pristine is None:
            return None
        a = b = None

        def run(o):
            return np.asarray(self.fwd(o, self.inputs), dtype=np.float64)

        try:
            a, b = copy.deepcopy(pristine), copy.deepcopy(pristine)
            before = _state_attrs(a)
            Ya, Yb = run(a), run(b)
            after = _state_attrs(a)
            Ya2 = run(a)
            if not _exact(Ya, Yb) or _exact(Ya, Ya2):
                return None
            changed = [k for k, v in before.items() if k in after and not _exact(v, after[k])]
            return [k for k in changed if _reads_itself(pristine, run, k)]
        except Exception:  # noqa: BLE001 - an uncopyable layer: the non-deterministic finding stands
            return None
        finally:
            _release(a, b)

    def backward(self):
        """Input unchanged, gradient shapes and dtypes, finite values, grads written: dY, or None
        to stop."""
        layer, inputs, names, params = self.layer, self.inputs, self.names, self.params
        xs = [x.copy() for x in inputs]
        self.proxy.rewind()
        V.call_student(layer.forward, *xs, training=self.training, owner=self.owner,
                       call=self.fcall)
        changed = [n for n, a, b in zip(names, xs, inputs) if not np.array_equal(a, b)
                   and not inplace_asked(layer_branch(layer, self.training))]  # inplace=True: as asked (H6)
        self.probe(1, not changed, f"{', '.join(changed)} changed" if changed else "",
                   "input-modified", V.grad_name((changed or [""])[0]), names=", ".join(changed))
        G = self.rng.standard_normal(np.shape(np.asarray(self.fwd(self.proxy, inputs))))
        g_before = getattr(layer, "grads", None)
        _reset_grads(layer, _SENTINEL)
        pre_ids = {k: id(v) for k, v in g_before.items()} if isinstance(g_before, Mapping) else {}
        try:
            ret = self.bwd(G)
        except GradcheckError as exc:  # a matmul with the weight the wrong way round raises for a
            t = V.grad_name(names[0])  # non-square one
            weights = _weights(params, names, inputs, "@" + names[0], False)
            if (found := _raised_weight_signature(exc, inputs[0], G, weights, t)) is not None:
                self.find(found[0], t, **found[1])
            raise
        rets, grads = _as_list(ret, len(inputs)), getattr(layer, "grads", None)
        if params and not isinstance(grads, Mapping):  # a list, None: the protocol error (exit 3)
            kind = getattr(grads, "type_name", None) or type(grads).__name__
            self.probe(2, False, f"grads is {V.article(kind)}, not a dict")
            raise V.grads_not_dict(self.owner, grads, params)
        bcall = f"backward(dY) with dY of shape {V.fmt_shape(G.shape)}"
        bad_shape, nonfinite, never = self.returned(rets, grads, pre_ids, bcall)
        if bad_shape or nonfinite:
            try:  # the canonical one-paragraph error (what check_layer would raise): exit code 3
                V.check_input_grads(ret, owner=self.owner, produced_by=bcall, names=names,
                                    inputs=inputs, keys=["@" + n for n in names], pair=inputs_hold_weights(self.layer),
                                    no_dx=computes_no_dx(self.layer))
                V.check_grads(layer, self.owner, params, grad_slots(self.layer))  # self.dW, not grads['W'] (M5)
            except GradcheckError as exc:
                self.diag.error = exc
        if bad_shape:
            L = _Layer(self.proxy, inputs, names, params, self.training, G)
            _shape_signatures(L, rets, grads, bad_shape, self.diag)
        if bad_shape or nonfinite:  # NaN explains everything after it (linearity, ...): alone
            return None
        slots = grad_slots(self.layer)  # attribute style: self.dW, not grads['W']
        slot = ", ".join(V.slot_name(slots, V.grad_key(t)) for t in never) if slots else "grads[...]"
        self.probe(6, not never, ", ".join(never), "never-written", (never or [None])[0],
                   ts=", ".join(never), slot=slot)
        return G

    def returned(self, rets, grads, pre_ids, bcall):
        """Probes 2 and 3 on what backward returned and wrote: ``(bad_shape, nonfinite, never)``."""
        none = V.without_gradient(rets, self.inputs, inputs_hold_weights(self.layer),  # a mask's None (M2)
                                  computes_no_dx(self.layer))
        found = [(V.grad_name(n), r, x.shape, n, bcall)
                 for i, (n, r, x) in enumerate(zip(self.names, rets, self.inputs)) if x.dtype.kind == "f" and i not in none]
        slots = grad_slots(self.layer)  # attribute style: self.dW, not grads['W'] (M5)
        found += [(V.grad_name(k), grads.get(k), p.shape, k, f"backward(dY) (in {slots[k]})" if k in slots
                   else f"{V.slot_name(slots, k)} after backward(dY)") for k, p in self.params.items()]
        bad_shape, low, nonfinite, never = [], [], [], []
        for t, r, shape, key, produced_by in found:
            arr = None if r is None else np.asarray(r)
            if arr is not None and arr.dtype.kind in "biu":  # an integer gradient: exit 3, alone
                self.probe(2, False, f"{t} is {arr.dtype}, expected float64")
                raise V.dtype_error(self.owner, produced_by, t, arr.dtype)
            if arr is None or arr.shape != shape:
                bad_shape.append((t, None if arr is None else arr.shape, shape, key))
                continue
            low += [(t, arr.dtype, key)] if _low_precision(arr.dtype, self.inputs) else []
            if not np.all(np.isfinite(arr.astype(np.float64))):
                nonfinite.append(t)
            elif key in self.params and id(r) == pre_ids.get(key) and np.all(arr == _SENTINEL):
                never.append(t)
        details = [f"{t} has shape {s}, expected {e}" for t, s, e, _ in bad_shape]
        self.probe(2, not bad_shape and not low,
                   "; ".join(details + [f"{t} is {d}, expected float64" for t, d, _ in low]))
        self.probe(3, not nonfinite, ", ".join(nonfinite), "non-finite", (nonfinite or [None])[0],
                   ts=", ".join(nonfinite), verb="contain" if nonfinite[1:] else "contains")
        for t, d, key in low:
            if key in self.params and self.params[key].dtype == d:  # the weight itself is float32
                self.find("float32-weight", t, w=key, **_precision(d))
            else:
                self.find("float32", t, what=f"backward returns {t} as", given="a float64 input", dlfs=_dlfs_f(d, self.layer),
                          **_precision(d))
        return bad_shape, nonfinite, never

    def repeat(self, G):
        """Linear in dY, no accumulation, a second backward identical."""
        def run(g, reset=True, forward=True):
            return self.step(self.proxy, [self.inputs] if forward else [], g, reset)[1]

        # linearity (named after: accumulating); for a one-element G, -2: np.maximum(dY, 0) is linear for one sign
        # of dY (review30), and no comparison at G sees that; a larger G's sign bugs fail there, named by signatures
        k = -2.0 if np.size(G) == 1 else 2.0
        g1, g2, g0 = run(G), run(k * G), run(0 * G)
        # accumulation and a second backward on the same forward, without a reset: a sandboxed
        # layer's grads live in another process, and the numerical check that follows should see
        # what the layer really leaves behind
        a, b = self.twice(G)
        z = run(0 * G, reset=False, forward=False)
        acc = [t for t in (V.grad_name(k) for k in self.params)
               if not _same(a[t], b[t]) and _same(z[t], b[t])
               and np.abs(b[t]).max(initial=0) > self.atol]
        differ = [t for t in a if not _same(a[t], b[t]) and t not in acc]
        affine = [t for t in g0 if np.abs(g0[t]).max(initial=0) > self.atol and t not in acc]
        nonlin = [t for t in g1
                  if not close(g2[t], k * g1[t], 1e-9, 1e-12) and t not in acc + affine]
        # an affine backward's data part, g(dY) - g(0), must be linear in dY for a penalty's term to be read off
        curved = [t for t in affine if not close(g2[t] - g0[t], k * (g1[t] - g0[t]), 1e-9, 1e-12)]
        const = [t for t in affine if _same(g0[t], g1[t]) and _same(g1[t], g2[t])]
        uses_dy = [t for t in g1 if not _same(g1[t], g2[t])]  # the layer does read dY elsewhere
        penalised = []  # a penalty's dY-free term, read off (tester24s n03, nb04): its data part checked apart
        # backward(0) wrote no weight gradient: the one of backward(k dY) before it is left (verify37 F7: Zhou's
        # softmax skips dY's zero entries; a sandboxed layer's grads are not zeroed between the calls)
        left = [t for t in affine if t not in const and V.grad_key(t) in self.params and _same(g0[t], g2[t])]
        for t in affine:
            if t in const and uses_dy and V.grad_key(t) in self.params:  # a weight's gradient kept from before
                self.find("stale-gradient", t, k=f"{k:g}")
                continue
            if t in left:
                self.find("grads-left", t)
                continue
            if t not in curved and self.penalty(t, g0[t]):
                penalised.append(t)
                continue
            self.find("not-linear", t, how=f"backward(0) gives a nonzero {t} (a term that does not "
                      "multiply dY)")
        self.probe(4, not nonlin and not set(affine) - set(penalised), "; ".join(
            [f"backward(0) leaves {t} from the call before" if t in left else f"backward(0) gives nonzero {t}"
             for t in affine if t not in penalised]
            + [f"backward({k:g} dY) != {k:g} backward(dY) for {t}" for t in nonlin]))
        after = _dx_after_step(self.layer)
        for t in nonlin:
            if after and V.grad_key(t) not in self.params:  # an input's gradient, with the stepped weights
                self.find("dx-after-step", t, rate=after)
            else:
                self.find("not-linear", t, how=f"backward({k:g} dY) is not {k:g} backward(dY) for {t}")
        moved = self.backward_draws(G) if differ else ""
        differ = differ if moved else self.own_cache(differ, a, lambda: run(G, reset=False))
        self.probe(5, not acc and not differ, "; ".join(
            [f"{t} grew (accumulated)" for t in acc] + [f"{t} changed" for t in differ]))
        if acc:  # first among the findings, one per tensor, one sentence: it explains the mismatch
            it, are = ("it", "is") if len(acc) == 1 else ("them", "are")
            slots = grad_slots(self.layer)  # attribute style: self.dW, not grads['W']
            keys = [V.slot_name(slots, V.grad_key(t)) for t in acc]
            fields = dict(ts=", ".join(acc), keys=", ".join(keys), it=it, are=are,
                          slot=keys[0] if slots else "grads[key]")
            self.diag.findings[:0] = [_find("accumulated", t, **fields) for t in acc]
        for t in differ:
            if moved:
                self.find("random-backward", t, what=moved)
            else:
                self.find("second-backward", t)

    def twice(self, G) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """The gradients (``{"dX": ..., "dW": ...}``, :meth:`grads_of`) of two backwards after one forward, the grads
        not reset between them: the one measure, :func:`gradcheck.sources.backward_twice`, run through the probes'
        own forward and backward (the mode, a judged cache write)."""
        probe, names = self, []

        class Run:  # the probed layer as backward_twice calls it: backward's outputs are every gradient, by name
            def forward(self, *xs):
                return probe.fwd(probe.proxy, xs)

            def backward(self, g):
                got = probe.grads_of(probe.proxy, probe.bwd(g))
                names[:] = got
                return list(got.values())

        first, second = backward_twice(Run(), self.inputs, G)
        return dict(zip(names, first)), dict(zip(names, second))

    def own_cache(self, differ: list[str], first: dict, again) -> list[str]:
        """``differ`` (the gradients a second backward on the same forward changed), or [] when the sandbox saw
        backward write into an array its forward made (:attr:`gradcheck.sandbox._Remote.cache_rewritten`) and a
        forward and backward ``again`` give ``first`` (those gradients) back: each backward after its own forward is
        right, so the check's verdict stands, and ``gradcheck check``'s "cache-rewritten" note says what a second
        backward gives (session 26; before, such a backward was refused, exit 3)."""
        if not differ or not (getattr(self.layer, "cache_rewritten", None) or self.rewritten):
            return differ
        fresh = again()
        return differ if not all(_same(first[t], fresh[t]) for t in differ) else []  # else state moved too

    def penalty(self, t: str, free: np.ndarray) -> bool:
        """Whether the dY-free term ``free`` (backward(0)) of parameter gradient ``t`` is a penalty's gradient, its
        finding made: the penalty the layer states (:func:`_stated_penalty`: Neural Networks from Scratch's
        ``weight_regularizer_l1``/``_l2``, whose loss adds l1*sum|W| + l2*sum(W**2), the book's
        Loss.regularization_loss) compared with its gradient l1*sign(W) + 2*l2*W, naming l2*W for 2*l2*W and a
        flipped sign; with none stated (or 0 stated), :meth:`unstated_penalty`. The data part, backward(dY) - backward(0), is checked as usual (``self.penalties``); False otherwise."""
        key = V.grad_key(t)
        if key not in self.params:
            return False
        P = np.asarray(self.params[key], dtype=np.float64)
        free = np.asarray(free, dtype=np.float64)
        stated = _stated_penalty(self.layer, key)
        if stated is None or not (stated[0] or stated[1]):
            if (done := self.unstated_penalty(t, key, P, free, stated is not None)) is not None:
                return done
        l1, l2, names = stated
        self.penalties[key] = "stated"
        fields = dict(w=key, names=names, l1=l1, l2=l2, l2name=names.split(", ")[-1])
        sign = np.sign(P)
        if _penalty_close(free, l1 * sign + 2 * l2 * P, P, l1):
            self.find("penalty-checked", t, "info", **fields)
        elif l2 and _penalty_close(free, l1 * sign + l2 * P, P, l1):
            self.find("penalty-l2-half", t, **fields)
        elif l1 and (how := next((h for wrong, h in (
                (-sign, f"is -l1*sign({key}), the opposite sign"),
                (np.ones_like(P), f"is +l1 everywhere, also where {key} < 0 (the -1 there is missing)"),
                (-np.ones_like(P), "is -l1 everywhere")) if _penalty_close(free, l1 * wrong + 2 * l2 * P, P, 0.0)),
                None)):
            self.find("penalty-l1-sign", t, how=how, **fields)
        else:
            err = float(np.max(np.abs(free - (l1 * sign + 2 * l2 * P)), initial=0))
            self.find("penalty-wrong", t, err=err, **fields)
        return True

    def unstated_penalty(self, t: str, key: str, P: np.ndarray, free: np.ndarray, zero: bool) -> bool | None:
        """:meth:`penalty` for a dY-free term ``free`` of ``t`` when the layer states no strength of ``key``'s
        penalty (``zero``: it states 0, :func:`_stated_penalty`): not a*P + b*sign(P), False (not linear); a
        number named as a strength (:func:`_penalty_numbers`) explains it, penalty-unknown (NOT CHECKED); none,
        penalty-bug. With 0 stated (review25g M1: a bias term copied from the weights', 2*weight_regularizer_l2*b
        where bias_regularizer_l2 = 0) a term no other strength explains is checked against the stated 0 (None:
        :meth:`penalty` goes on, penalty-wrong); True when its finding is made."""
        numbers = _penalty_numbers(self.layer)
        if not (fits := _penalty_fit(P, free, numbers)):
            return False
        fit, match = next(((f, m) for f in fits if (m := _penalty_match(*f, numbers, key)) is not None),
                          (fits[0], None))
        nnfs = {a for attrs in _PENALTY_ATTRS.values() for a in attrs}
        if zero and (match is None or set(match[2]) & nnfs):
            return None
        if match is None:  # fixp24: no stated strength explains it
            self.penalties[key] = "stated"
            stated = ", ".join(f"{n} = {v:g}" for n, v in numbers.items()) or "it states none"
            self.find("penalty-bug", t, w=key, fit=_fit_text(*fit, key), stated=stated)
            return True
        self.penalties[key] = "unknown"
        self.find("penalty-unknown", t, "info", w=key, fit=_fit_text(*fit, "P"), match=match[0], conv=match[1],
                  attrs=" and ".join(dict.fromkeys(match[2])))
        return True

    def backward_draws(self, G) -> str:
        """Which random generators a backward after a forward moves (:func:`adapter_call`'s ``random_draws``),
        ``""`` none."""
        self.fwd(self.proxy, self.inputs)
        before = adapter_call(self.layer, "random_draws")
        self.bwd(G)
        after = adapter_call(self.layer, "random_draws")
        return ", ".join(k for k in before if before[k] != after.get(k))

    def cache(self, pristine, G) -> None:
        """Copies of the layer as it was before the checker's first forward: another instance's
        forward between a forward and its backward, and an earlier forward on other data (a
        sandboxed layer is copied in its child process; a random one is skipped: copies would
        draw other masks)."""
        # a random layer (held in its child when sandboxed): copies would draw other masks
        random = _find_rngs(self.layer) or self.diag.held
        if any(f.code == "state-held" for f in self.diag.findings):  # its state put back: no call carries over
            return self.probe(7, None, "skipped (the state forward updates is put back before every forward)")
        if random or pristine is None:
            return self.probe(7, None, "skipped (random layer)" if random else
                              "skipped (the layer cannot be copied)")
        copies, inputs = [], self.inputs
        try:
            try:
                for _ in range(4):  # one at a time: those made are released if the next one fails
                    copies.append(copy.deepcopy(pristine))
            except Exception as exc:  # noqa: BLE001
                return self.probe(7, None, "skipped (the layer cannot be copied: "
                                  f"{type(exc).__name__})")
            a, b, c, d = copies
            others = self.others()
            try:
                Y_ref, ref = self.step(c, [inputs], G)
                self.fwd(a, inputs)
                self.fwd(b, others)  # another instance's forward between a's forward and backward
                shared = self.step(a, [], G)[1]
                Y_stale, stale = self.step(d, [others, inputs], G)  # earlier: other data
                carried = None if _same(Y_ref, Y_stale) else self.carried(b)
            except Exception as exc:  # noqa: BLE001
                raised = type(exc.__cause__ or exc).__name__  # the student's own, not its wrapper
                return self.probe(7, None, f"skipped (copies of the layer raised {raised})")
        finally:
            _release(*copies)
        bad_y = not _same(Y_ref, Y_stale)
        bad_shared, bad_stale = ([t for t in ref if t in g and not _same(ref[t], g[t])]
                                 for g in (shared, stale))
        self.probe(7, not bad_shared and not bad_stale and not bad_y,
                   ", ".join((["Y"] if bad_y else []) + sorted(set(bad_shared + bad_stale))))
        if bad_y and carried is not None:  # tester19s M: an EMA of the inputs, at its fixed point on equal inputs
            self.find("forward-changes-state", **_state_fields(self.training, float(np.nanmax(np.abs(
                np.asarray(Y_ref, dtype=np.float64) - np.asarray(Y_stale, dtype=np.float64)))), *_state_said(
                self.layer, inputs, carried, self.fcall), seen="after a call on other data, a call on the "
                "check's input differs from a fresh copy's by up to {diff:.3g}, and a second call on it differs "
                "again", fresh=_built_not_stateful(self.layer)))
        elif bad_y:
            self.find("stale-output", "Y")
        elif bad_shared or bad_stale:
            code, ts = ("shared-cache", bad_shared) if bad_shared else ("stale-cache", bad_stale)
            self.find(code, ts[0], ts=", ".join(ts), how="uses the cache of an earlier forward, "
                      f"not of the last one ({', '.join(ts)})")

    def carried(self, b) -> list[str] | None:
        """Whether forward updates state that the next call reads, seen across calls on other data: ``b``, a copy
        that ran one forward on other inputs, runs forward twice on the check's input, and the two outputs differ
        (an exponential moving average of the inputs, which two calls on equal inputs leave at its fixed point;
        a kept output (stale-output) gives the same twice). The attributes the second call changed (of a
        sandboxed layer too, read in its child: :func:`adapter_call`), or None."""
        Y1 = self.fwd(b, self.inputs)
        before = adapter_call(b, "state_values")  # an adapter's student object's
        Y2 = self.fwd(b, self.inputs)
        if _same(Y1, Y2):
            return None
        after = adapter_call(b, "state_values")
        return [k for k, v in before.items() if k in after and not _exact(v, after[k])]

    def along(self, fwd, xs, got, G, keys, groups) -> list[tuple[bool, dict]]:
        """Per group of tensors, ``(agrees, u)``: one directional derivative of ``sum(Y * G)`` at the inputs
        ``xs`` along a random ``u`` of the group's tensors, against ``got`` (backward's there)."""
        rng = np.random.default_rng(self.rng.integers(2**32))
        dd = _directional(fwd, xs, self.params, G, input_names=keys, groups=groups, n_dirs=1, rng=rng)
        out = []
        for group in groups:
            (u, d), = dd[tuple(group)]
            terms = np.array([np.sum(got[V.grad_name(k.lstrip("@"))] * u[k]) for k in group])
            out.append((_agrees(float(terms.sum()), d, terms, 1e-5), u))
        return out

    def wrong_at(self, fwd, xs, got, G, keys, group) -> list[str]:
        """The gradients (``["dX"]``) whose own directional derivative at the inputs ``xs`` disagrees
        with ``got`` (backward's there): one direction per tensor of ``group``."""
        return [V.grad_name(k.lstrip("@")) for k, (ok, _) in zip(group, self.along(
            fwd, xs, got, G, keys, [[k] for k in group])) if not ok]

    def second_input(self, G) -> None:
        """Backward right at the check's input but wrong at another: state kept from earlier.

        The numerical check differentiates at one input only, so a backward that keeps what it
        saw first passes it. One directional derivative of ``sum(Y * G)`` (all tensors jointly) at
        the input, then at two others; named only when the first agrees and both others fail (a
        kink crossed by chance fails one, not both).
        """
        keys = ["@" + n for n in self.names]
        group = [k for k, x in zip(keys, self.inputs) if x.dtype.kind == "f"] + list(self.params)
        stale = ("stale-cache", "shared-cache", "stale-output")
        if not group or any(f.code in stale for f in self.diag.findings):
            return
        fwd, agree, wrong = _f64(self.proxy, self.training), [], []
        # a penalty's dY-free term (:meth:`penalty`) is not forward's: the data part is compared (fixp25: dW +
        # 2*weight_decay*W FAILed "stale cache" for some weights, the term's share near the tolerance)
        proxy = _DataPart(self.proxy, self.penalties) if self.penalties else self.proxy
        shapes = {V.grad_name(k): p.shape for k, p in self.params.items()}
        shapes |= {V.grad_name(n): x.shape for n, x in zip(self.names, self.inputs)}
        try:  # the check's input, two others, then the check's input again (state, or the input?)
            for xs in [self.inputs, self.others(), self.others(), self.inputs]:
                if len(agree) > 1 and agree[-1] or len(agree) == 3 and agree != [True, False, False]:
                    break
                got = self.step(proxy, [xs], G)[1]
                if set(got) != {V.grad_name(k.lstrip("@")) for k in group} or any(
                        got[t].shape != shapes[t] for t in got):
                    return  # shapes are the other probes' business
                (ok, u), = self.along(fwd, xs, got, G, keys, [group])
                agree.append(ok)

                if not agree[-1] and _kinks_only(fwd, xs, self.params, got, G, keys, u):
                    agree[-1] = True  # the step crossed kinks of the forward, no wrong entry (case C28)
                if agree == [False]:  # confirmed tensor by tensor: a sampled check may miss them
                    self.wrong_here = self.wrong_at(fwd, xs, got, G, keys, group)
                if len(agree) == 2 and not agree[1]:  # which tensors are wrong there, for the FAIL line
                    wrong = self.wrong_at(fwd, xs, got, G, keys, group)
                if not agree[0]:
                    break  # wrong at the check's input already: the numerical check names it
        except GradcheckError:  # the layer refuses another input (a check of its own): nothing said
            if _remote(self.layer) and self.layer.sandbox._dead:
                raise  # a timeout or a crash: reported as what stopped the check
            return
        t = ", ".join(wrong) if agree[:3] == [True, False, False] and wrong else None
        which = f", {t} wrong there" if t else ""
        if agree == [True, False, False, False]:  # wrong at the first input too, once others ran
            self.find("stale-cache", t, how="is right at the first input the layer saw but wrong at "
                      f"another one{which}, and at the first input again after it: it uses state kept "
                      "from an earlier call")
        elif agree == [True, False, False, True]:  # right again at the first: kept, or the input
            self.find("stale-cache", t, how="is right at the first input the layer saw but wrong at "
                      f"another one{which} (and right again at the first): it keeps that first input (a class "
                      "attribute, a global, a cache set only on the first call), or the bug shows for "
                      "some input values only (a threshold, a saturation shortcut, a kink handled "
                      "otherwise than in forward)")


# --------------------------------------------------------------------------- check_vjp


def _resolve_op(op, vjp, n: int):
    """``(name, forward, VJPs, JVPs or None)`` of a function and its VJPs, or of a primitive: one
    VJP per input from a callable (returning a tuple when ``n > 1``), a list, or autoprop's
    variadic rule."""
    if isinstance(op, str):
        from autoprop.core.registry import PRIMITIVES

        if op not in PRIMITIVES:
            raise UsageError(f"autoprop has no primitive {op!r}; known: "
                             f"{', '.join(sorted(PRIMITIVES)[:20])}, ...")
        op = PRIMITIVES[op]
    name = getattr(op, "name", getattr(op, "__name__", "op"))
    prim = hasattr(op, "fwd") and hasattr(op, "vjps")
    vjp = op.vjps if prim and vjp is None else vjp
    if vjp is None:
        raise UsageError(f"primitive {name} is not differentiable (vjps=None)" if prim else
                         "check_vjp needs a vjp (or an autoprop primitive that has them)")
    if callable(vjp):  # one VJP returning a tuple: one lambda per input reads its entry
        vjps = [vjp] if n == 1 else [lambda g, a, *x, i=i, **kw: vjp(g, a, *x, **kw)[i]
                                     for i in range(n)]
    else:
        vjps = [vjp[i] for i in range(n)] if type(vjp).__name__ == "_Variadic" else list(vjp)
    return name, op.fwd if prim else op, vjps, getattr(op, "jvps", None) if prim else None


def check_vjp(op: Any, vjp: Any = None, *inputs: Any, kwargs: Mapping[str, Any] | None = None,
              seed: int = 0, rtol: float = 1e-6, atol: float = 1e-9, eps: float = DEFAULT_EPS,
              n_dirs: int = 3, name: str | None = None) -> CheckResult:
    r"""Check one operation's vector-Jacobian product alone: a dot-product test and an element scan.

    Per differentiable input ``x_i``, record ``d<i>`` (``dx`` for one input): ``J_i^T v`` from
    ``vjp`` against central differences of ``sum(op(*inputs) * v)``, kinks excluded; and record
    ``<u,J^T v> i``: :math:`\langle u, J_i^T v\rangle` against :math:`\langle J_i u, v\rangle`
    for ``n_dirs`` random ``u`` (zero at kinks), ``J_i u`` from the primitive's JVP rule, else
    central differences along ``u``.

    Parameters
    ----------
    op : callable, str or autoprop Primitive
        ``op(*inputs, **kwargs) -> ndarray``, or a name / entry of
        ``autoprop.core.registry.PRIMITIVES``.
    vjp : callable, sequence of callables, or None
        ``vjp_i(g, ans, *inputs, **kwargs) -> dx_i`` per input (None: not differentiable), one
        callable (returning a tuple for several inputs), or None: the primitive's own ``vjps``.
    *inputs : array_like
        The arguments; float arrays are differentiated (float64 copies).
    kwargs : dict, optional
        Keyword arguments of the op (``seed``, ``rtol`` ... ``name``: as in ``check_layer``).

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
    xs = [np.array(x, dtype=np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x)
          for x in inputs]
    opname, fwd, vjps, jvps = _resolve_op(op, vjp, len(xs))
    owner, kwargs = name or opname, dict(kwargs or {})
    if not any(x.dtype.kind == "f" for x in xs):
        raise UsageError(f"check_vjp({owner}): no floating-point input to differentiate.")
    rng = probe_rng(seed)  # the checker's own stream, v never a multiple of an input (newuser29 H2)
    ans = V.call_student(fwd, *[x.copy() for x in xs], owner=owner, call="forward", **kwargs)
    ans = np.asarray(ans, dtype=np.float64)
    v = upstream_draw(rng, ans.shape, xs)
    L = functools.partial(_objective, fwd, kwargs, v)
    records, notes, manual, numerical = [], [], {}, {}
    for i, x in enumerate(xs):
        if x.dtype.kind != "f" or i >= len(vjps) or vjps[i] is None:
            continue
        t = f"d{i}" if len(xs) > 1 else "dx"
        g = V.call_student(vjps[i], v.copy(), ans.copy(), *[y.copy() for y in xs], owner=owner,
                           call=f"vjp[{i}](g, ans, *inputs)", **kwargs)
        manual[t] = g = V.check_output(g, owner=owner, tensor=t, produced_by=f"vjp[{i}]",
                                       expected_shape=x.shape,
                                       expected_why=f"the shape of input {i}")
        numerical[t], elements, kinks = _vjp_elements(L, xs, i, g, eps, rtol, atol)
        if not elements.passed and (f := name_signature(t, g, numerical[t])) is not None:
            notes.append(f.message)
        dot, src = _dot_test(L, jvps, xs, i, g, ans, v, kinks, rng, n_dirs, eps, kwargs, rtol, atol)
        records += [TensorRecord(t, tuple(x.shape), "gradient", [elements]),
                    TensorRecord(f"<u,J^T v> {i}", (n_dirs,), "gradient", [dot])]
        notes.append(f"input {i}: J u from {src}")
    if not records:
        raise UsageError(f"check_vjp({owner}): no input has a VJP to check.")
    return CheckResult(name=owner, kind="op", records=records, rtol=rtol, atol=atol, eps=eps,
                       seed=seed, input_shape=tuple(tuple(x.shape) for x in xs), notes=notes,
                       gradients={"manual": manual, "numerical": numerical})


def _vjp_elements(L, xs, i, g, eps, rtol, atol):
    """``(numerical, Comparison, kinks)`` of :func:`check_vjp`'s element scan of input ``i``: central differences of
    ``L`` compared with the VJP's ``g`` by check_layer's rule, kinks and all (:func:`gradcheck.check._versus_scan`:
    a smooth function's large step is no kink; review23: at eps=0.1 a tanh VJP 0.3% too large had 23 of 24 entries
    excused as kinks); ``kinks`` a bool mask."""
    work = [y.copy() for y in xs]
    sc = numerical_gradient(lambda: L(*work), work[i], eps=eps, detail=True)

    def rescan(idx, fraction):
        return numerical_gradient(lambda: L(*work), work[i], eps=eps * fraction, indices=idx, detail=True)
    elements = _versus_scan({"manual": g}, sc, rtol, atol, rescan=rescan)["manual-vs-numerical"]
    kinks = np.zeros(np.shape(g), dtype=bool)
    kinks[tuple(np.array(elements.kinks, dtype=np.intp).reshape(-1, np.ndim(g)).T)] = True
    return sc.grad, elements, kinks


def _objective(fwd, kwargs, v, *ys) -> float:
    """``sum(op(*ys) * v)``."""
    return float(np.sum(np.asarray(fwd(*[y.copy() for y in ys], **kwargs), dtype=np.float64) * v))


def _dot_test(L, jvps, xs, i, g, ans, v, kinks, rng, n_dirs, eps, kwargs, rtol, atol):
    """``<u, J^T v>`` against ``<J u, v>`` for ``n_dirs`` random ``u`` (0 at kinks), compared with
    atol grown by sqrt(size) (a sum of that many products): the comparison and ``J u``'s source."""
    lhs, rhs, src, x = [], [], "central differences", xs[i]
    for _ in range(n_dirs):
        u = rng.standard_normal(x.shape)
        u[kinks] = 0.0  # a finite difference across a kink is no derivative
        lhs.append(float(np.sum(u * g)))
        try:
            Ju = np.asarray(jvps[i](u, ans, *[y.copy() for y in xs], **kwargs), dtype=np.float64)
            rhs.append(float(np.sum(np.broadcast_to(Ju, ans.shape) * v)))
            src = "the primitive's JVP rule (forward mode)"
        except Exception:  # noqa: BLE001 - no JVP rule (none at all, none for input i, or it fails)
            def along(s, u=u):
                return L(*[y + s * u if j == i else y for j, y in enumerate(xs)])

            rhs.append(difference_quotient(along, eps * max(1.0, float(np.abs(x).max()))))
            src = "central differences"
    dot = compare(np.array(lhs), np.array(rhs), "manual-vs-numerical", rtol=rtol,
                  atol=atol * np.sqrt(x.size), how="directional")
    return dot, src


def _penalty_split(layer: Any, inputs: list[np.ndarray], config: CheckConfig, more: dict) -> CheckResult | None:
    """:data:`gradcheck.check.penalty_split`: for a layer ``check_layer`` failed with a parameter gradient holding a
    term that does not multiply dY (a regulariser's), the result ``gradcheck check`` gives it (:func:`diagnose_layer`:
    that term checked apart against the penalty the layer states, the rest against central differences), with the
    diagnosis's words on that term as notes; None, keeping check_layer's own FAIL and its note, when the diagnosis
    names no penalty, stops on an error, or fails where its result passes (a wrong penalty: "penalty-wrong").
    review25g L1: check_layer FAILed a correct L2-regularised Dense that the CLI PASSes; one path, one verdict.

    Parameters
    ----------
    layer : object
        The layer as given to check_layer (the diagnosis adapts it as check_layer does).
    inputs : list of ndarray
        check_layer's inputs, float64 (integer indices as they are).
    config : CheckConfig
        check_layer's settings (mode, method, seed, tolerances, eps, training, directions, samples).
    more : dict
        check_layer's ``twin``, ``reference``, ``upstream`` and ``name``.

    Returns
    -------
    CheckResult or None
    """
    d = diagnose_layer(layer, inputs if len(inputs) > 1 else inputs[0], mode=config.mode, method=config.method,
                       seed=config.seed, rtol=config.rtol, atol=config.atol, eps=config.eps, training=config.training,
                       twin=more["twin"], reference=more["reference"], name=more["name"], localize=False,
                       n_dirs=config.n_dirs, n_samples=config.n_samples, upstream=more["upstream"], drawn=False,
                       values=False)  # check_layer checks a pair's other values itself
    said = [f for x in [d, *d.other_modes] for f in x.findings if f.code.startswith("penalty")]
    res = d.result
    if res is None or not said or any(x.error is not None for x in [d, *d.other_modes]) or (
            res.passed and not d.passed):
        return None
    res.notes += list(dict.fromkeys(f.sentence() for f in said))
    return res


check_module.penalty_split = _penalty_split
