"""Gradient sources: every gradient of ``L = sum(Y * G)`` of one :class:`Call`, as ``{key: gradient}``
(``"@<input name>"`` for inputs, parameter keys): the student's ``backward`` (:func:`manual_source`),
the tape (:func:`tape_source`), a layer of ours (:func:`reference_source`); finite differences are
:func:`gradcheck.numerical.layer_numerical_gradients`.

The autoprop twin (:func:`twin_source`) and a reference layer are given the checked layer's
parameters one way: names mapped by :func:`param_names` (PyTorch's ``weight`` as ``W``), a reversed
weight transposed, a square one as stored or transposed by which reproduces the layer's forward
(:func:`_oriented`, one probe for both). A random forward is held fixed for the check by one
function, :func:`gradcheck.diagnose._hold`; the twin and a reference draw their own masks, so in a
mode where the forward is random they are not compared (``diagnose.RANDOM_TWIN``,
``RANDOM_REFERENCE``), while the student's forward on the tape runs with the same draws
(``StudentTape.same_draws``).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import importlib
import inspect
import math
import re
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from . import _validation as V
from ._adapters import (
    CACHE_ADVICE,
    Adapted,
    FunctionPair,
    _is_layer,
    _ones_apart,
    _scalar,
    backward_keywords,
    cache_guard,
    forward_in_mode,
    pair_switches,
    probe_rng,
    stored_inputs,
    walk,
)
from .compare import close, relative_error
from .errors import (
    GraderError,
    GradientShapeError,
    InputModifiedError,
    StudentCodeError,
    TwinError,
    UsageError,
    stepped,
)

__all__ = ["Call", "strided_copy", "layout_copy", "in_place", "inplace_asked", "input_written", "dY_written", "one_sign_only", "ONE_SIGN", "switch_branch", "manual_source", "grad_slots", "Wrapper", "guarded_backward", "tape_source", "twin_source",
           "reference_source",
           "build_twin", "constructor_kwargs", "copy_params_to_twin", "resolve_twin", "share_masks",
           "hold_masks", "masks_fixed", "training_differs", "NO_SWITCH", "init_modes", "pair_mode_line", "keyword_values", "at_keyword", "each_keyword_value",
           "SYMMETRIC_ARGS", "PROBABILITY_WORDS", "symmetric_args", "built_with", "each_other_arg", "other_point_stop", "constructor_args", "NotRebuilt", "unknown_args", "not_rechecked_line", "args_line", "values_merged", "SAME_IN_BOTH_MODES", "SAME_BACKWARD_CHECKED", "SAME_Y_OTHER_BACKWARD", "SAME_Y_EVAL_ONLY", "TapeUnavailable"]

#: The header's mode line of a forward with no training switch (a plain forward(X), an rnn_step or a max_pool; it
#: said "eval (forward has no training argument)", also of a forward(X, training=False) read as a model's).
NO_SWITCH = "mode: forward has no training switch: one mode"


#: The values of a CS231n ``mode`` key that name a training mode (True) or an evaluation mode (False).
_TRAINING_WORDS = {"train": True, "training": True, "test": False, "eval": False, "evaluation": False,
                   "inference": False, "predict": False}


def init_modes(init: Any, path: str = "") -> list[str]:
    """``bn_param mode 'train'`` for every ``mode`` key in a CS231n pair's keyword arguments (``--init``'s JSON, or
    :func:`gradcheck.function_pair`'s ``**params``: CS231n's bn_param, dropout_param), nested dicts included; a
    mode that names no training mode (Andrew Ng's pool_forward(..., mode='max'), the pooling) is left out: the
    header said "mode: as given in --init (mode 'max'); the forward has no training switch" (tester24s)."""
    if not isinstance(init, dict):
        return []
    return [f"{path} mode {v!r}".strip() for k, v in init.items() if k == "mode" and _TRAINING_WORDS.get(
        str(v).lower()) is not None] + [
        m for k, v in init.items() for m in init_modes(v, k)]


def pair_keywords(layer: Any) -> dict[str, Any]:
    """A CS231n function pair's keyword arguments as given (``{"dropout_param": {"p": 0.5, "mode": "train"}}``): a
    :class:`gradcheck._adapters.FunctionPair` run here, or a sandboxed one's ``--init``; ``{}`` for any other layer."""
    if isinstance(layer, FunctionPair):
        return layer.__dict__.get("_kwargs_given", layer._kwargs)
    info = getattr(layer, "protocol", None)
    if _remote_layer(layer) and isinstance(info, Mapping) and info.get("protocol") == "cs231n":
        return layer.__dict__["_loaded"][2] or {}
    return {}


def pair_training(layer: Any) -> bool | None:
    """The mode a CS231n function pair runs in by its keyword arguments (:func:`pair_keywords`): True for
    ``dropout_param['mode'] == 'train'`` (CS231n's training mode), False for ``'test'``; None for another layer, or a
    pair given no such mode. Its forward has no training switch: a reference (a layer of ours) is run in this mode."""
    modes = [m.rsplit(" ", 1)[-1].strip("'\"") for m in init_modes(pair_keywords(layer))]
    return _TRAINING_WORDS.get(modes[0].lower()) if modes else None


def pair_probabilities(layer: Any) -> list[tuple[str, str, float, float]]:
    """``(dict, key, value, other)`` of each probability in a CS231n pair's dict arguments (``dropout_param['p']``:
    :data:`PROBABILITY_WORDS`) at 0.5, where ``1/p = 1/(1-p)`` hides a wrong scale, with the other value
    :data:`SYMMETRIC_ARGS` gives (0.3): the pair's counterpart of :func:`symmetric_args`, whose float constructor
    arguments a pair has none of."""
    return [(d, k, float(v), SYMMETRIC_ARGS[0.5][0]) for d, kw in pair_keywords(layer).items() if isinstance(kw, dict)
            for k, v in kw.items() if isinstance(v, float) and v == 0.5 and any(
                w in k.lower().split("_") or k.lower().startswith(w) for w in PROBABILITY_WORDS)]


def pair_mode_line(init: Any, given: str = "--init") -> str:
    """The mode line of a CS231n function pair, whose forward has no training switch: its mode is a value among its
    keyword arguments (``bn_param['mode']``), ``given`` in ``--init`` (``gradcheck check``'s header) or to
    :func:`gradcheck.function_pair` (:func:`gradcheck.check_layer`'s note): one sentence for both (newuser21 M3: the
    API said "checked once, in eval mode" of a pair that ran in bn_param's 'train')."""
    modes = init_modes(init)
    return f"mode: as given in {given} ({', '.join(modes)}); the forward has no training switch" if modes else NO_SWITCH


def keyword_values(layer: Any) -> list[tuple[str, str, list[str]]]:
    """``[(name, default, [other values]), ...]`` of a function pair's string keyword arguments with a default the
    pair was not given (``pool_forward(A_prev, hparameters, mode="max")`` whose source compares ``mode ==
    "average"``; :func:`gradcheck._adapters.pair_switches`): of a :class:`gradcheck._adapters.FunctionPair` run here,
    or of a sandboxed pair, read from its ``protocol['pair_switches']`` (the untrusted child's data: the
    well-formed ones kept, at most 4 arguments and 8 values each). ``[]`` for anything else, a wrapper around a pair included
    (the diagnosis's proxy: its check is of one value). Each other value is checked by :func:`each_keyword_value`
    (tester33 F2: a broken ``mode="average"`` path PASSed unseen)."""
    if isinstance(layer, FunctionPair):
        return [(k, d, list(ws)) for k, d, ws in pair_switches(layer)]
    own = getattr(layer, "__dict__", {})
    info = own.get("protocol") if "_loaded" in own else None  # a sandboxed layer's own, never a wrapper's
    out = []
    for switch in ((info if isinstance(info, dict) else {}).get("pair_switches") or [])[:4]:
        if not (isinstance(switch, list) and len(switch) == 3):
            continue
        key, default, others = switch
        if isinstance(key, str) and key.isidentifier() and isinstance(default, str) and isinstance(others, list) \
                and all(isinstance(w, str) for w in others):
            out.append((key, default, others[:8]))
    return out


def at_keyword(layer: Any, key: str, value: str, inputs: Sequence[np.ndarray]) -> Any:
    """The function pair ``layer`` with its keyword argument ``key`` set to ``value`` (:func:`keyword_values`): a
    copy of a pair run here, or a sandboxed pair built again in its child with ``key`` added to its arguments
    (``RemoteLayer.loaded_with``, adapted on ``inputs`` as it was loaded). Raises as loading the layer does."""
    if isinstance(layer, FunctionPair):
        cp = copy.deepcopy(layer)
        cp._kwargs[key] = value
        cp.keyword_names, cp.backward_keywords = tuple(cp._kwargs), backward_keywords(cp.student_backward, cp._kwargs)
        return cp
    return layer.loaded_with({**(layer.__dict__["_loaded"][2] or {}), key: value}, inputs)


#: The values of a float constructor argument at which a wrong backward can give the right numbers, each with the
#: other value the layer is built again at (:func:`each_other_arg`) and why: at p = 0.5 a dropout backward's ``1/p``
#: equals ``1/(1-p)``; at 1.0 a left-out ``alpha`` or a multiplication for a division changes nothing; at 0 a term it
#: scales vanishes; at -1 it only flips a sign (newuser36 H1: lesson 24's dropout, an ELU without alpha, PASSed).
#: 0.3 and 0.7: within a probability's range, no two of them (or their complements, reciprocals) equal.
SYMMETRIC_ARGS = {0.5: (0.3, "1/{k} = 1/(1-{k}) and {k} = 1-{k}"), 1.0: (0.7, "times {k} = divided by {k} = unchanged"),
                  0.0: (0.3, "a term times {k} vanishes"), -1.0: (-0.7, "times {k} = divided by {k}")}
#: The advice on a NotImplementedError of the checked code (:meth:`gradcheck.sandbox.Sandbox._student_error`): not
#: given where the method ran at the first point and refused the second (:func:`other_point_stop`).
NOT_WRITTEN = ("The exercise is not written yet: write the method's body (the line that raises NotImplementedError) "
               "and check again.")
#: Names of probabilities (a drop or keep rate): checked again only at 0.5, since at 0 or 1 the layer is another one
#: (no dropout, or every unit dropped).
PROBABILITY_WORDS = ("p", "rate", "drop", "keep", "prob")


def _remote_layer(layer: Any) -> bool:
    """Whether ``layer`` lives in a sandbox's child (a :class:`gradcheck.sandbox.RemoteLayer` or
    :class:`~gradcheck.sandbox.RemoteLoss`: its own ``_loaded``, as :func:`keyword_values` reads it; sandbox.py imports
    this module, which imports it nowhere)."""
    return "_loaded" in getattr(layer, "__dict__", {}) and callable(getattr(layer, "loaded_with", None))


def symmetric_args(layer: Any, init: Mapping[str, Any] | None = None) -> list[tuple[str, float, float]]:
    """The float constructor arguments of ``layer`` built at a value where a wrong backward can cancel.

    Their defaults are read from its class's signature (:func:`gradcheck._adapters.float_args`; a sandboxed layer's
    from its protocol); the value as built is a sandboxed layer's ``--init`` (or test's keyword) or default, a local
    one's attribute of that name, or its value in ``init`` (the constructor's arguments, :func:`gradcheck.check_layer`'s
    ``init``: its default when ``init`` has no such key). A probability (:data:`PROBABILITY_WORDS`) counts at 0.5 alone.

    Parameters
    ----------
    layer : object
        The checked layer or loss: a local one (adapted or not) or a sandboxed one.
    init : mapping, optional
        A local layer's constructor arguments, when known.

    Returns
    -------
    list of (str, float, float)
        ``(name, value, other)``: each such argument, its value (a key of :data:`SYMMETRIC_ARGS`) and the other value
        to check it at; ``[]`` for none.
    """
    if _remote_layer(layer):
        proto = getattr(layer, "protocol", None)
        found = proto.get("float_args") if isinstance(proto, Mapping) else None
        init = layer.__dict__["_loaded"][2] or {}
        pairs = [(f[0], init.get(f[0], f[1])) for f in (found if isinstance(found, list) else [])
                 if isinstance(f, list) and len(f) == 2 and isinstance(f[0], str) and f[0].isidentifier()]
    else:
        from ._adapters import BoundLoss, LossFunction, float_args

        obj = layer.obj if isinstance(layer, (Adapted, BoundLoss)) else layer
        pairs = [(k, obj.built(k) if isinstance(obj, LossFunction) else getattr(obj, k, None) if init is None
                  else init.get(k, d)) for k, d in float_args(obj)]
    out = []
    for k, v in pairs:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or float(v) not in SYMMETRIC_ARGS:
            continue
        if float(v) == 0.5 or not any(w in k.lower().split("_") or k.lower().startswith(w) for w in PROBABILITY_WORDS):
            out.append((k, float(v), SYMMETRIC_ARGS[float(v)][0]))
    return out


def unknown_args(layer: Any, init: Mapping[str, Any] | None = None) -> list[tuple[str, float, float]]:
    """``(name, default, other)`` of each float constructor argument of a local layer (not adapted, not sandboxed)
    whose default is a value where a wrong backward can cancel (:func:`symmetric_args`' rule) and whose value as built
    is not known: no ``init`` and no attribute of its name (``Dropout(p=0.5)`` storing ``self.drop``; verify37 F5: it
    was never checked again, unsaid); [] for any other layer."""
    from ._adapters import BoundLoss, float_args

    if init is not None or _remote_layer(layer) or isinstance(layer, (Adapted, BoundLoss, FunctionPair)):
        return []
    return [(k, float(d), SYMMETRIC_ARGS[float(d)][0]) for k, d in float_args(layer) if float(d) in SYMMETRIC_ARGS
            and not hasattr(layer, k) and (float(d) == 0.5 or not any(
                w in k.lower().split("_") or k.lower().startswith(w) for w in PROBABILITY_WORDS))]


def not_rechecked_line(owner: str, unbuilt: Sequence[tuple[str, float, float, str]],
                       unknown: Sequence[tuple[str, float, float]]) -> str:
    """The note saying which float constructor arguments :func:`each_other_arg` could not check again at their other
    value (``unbuilt``: the layer's constructor arguments unknown, why; ``unknown``: :func:`unknown_args`), and how to
    have them checked (:func:`gradcheck.check_layer`'s ``init``, its constructor's arguments); "" for none."""
    said = [f"{k}={v!r} ({SYMMETRIC_ARGS[v][1].format(k=k)}) was not checked again at {k}={o!r}: {owner} cannot be "
            f"built again through its constructor ({why})" for k, v, o, why in unbuilt]
    said += [f"{k} (default {d!r}: {SYMMETRIC_ARGS[d][1].format(k=k)}) was not checked again at {k}={o!r}: "
             f"{owner} holds no attribute {k}, so the value it was built with is not known" for k, d, o in unknown]
    return (f"constructor argument{'s' if len(said) > 1 else ''} {'; '.join(said)}; pass the constructor's arguments "
            f"as init={{...}} to check it built again there, as gradcheck check does with --init") if said else ""


class NotRebuilt(Exception):
    """A local layer that cannot be built again through its constructor (:func:`constructor_args`): why."""


def constructor_args(obj: Any, init: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The keyword arguments ``obj``'s class was built with: ``init`` when given (the others at their defaults), else
    each constructor argument read from ``obj``'s attribute of its name, an argument with a default and no such
    attribute at its default (each a deep copy: a generator is not shared with ``obj``).

    Raises
    ------
    NotRebuilt
        The constructor's signature cannot be read, or an argument without a default is neither in ``init`` nor an
        attribute of ``obj`` (``Linear(n_in, n_out)`` storing only ``self.W``): its value is not known.
    """
    from ._adapters import _params

    ps = _params(type(obj))
    if ps is None:
        raise NotRebuilt(f"the signature of {type(obj).__name__}'s constructor cannot be read")
    own, out = vars(obj) if hasattr(obj, "__dict__") else {}, {}
    for p in ps.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if init is not None and p.name in init or init is None and p.name in own:
            out[p.name] = copy.deepcopy(init[p.name] if init is not None else own[p.name])
        elif p.default is p.empty:
            raise NotRebuilt(f"its constructor's argument {p.name} is " + (
                "not in init" if init is not None else f"no attribute of the layer (self.{p.name})"))
    return out


def built_with(layer: Any, key: str, value: float, inputs: Sequence[np.ndarray],
               init: Mapping[str, Any] | None = None) -> Any:
    """``layer`` with its constructor argument ``key`` at ``value``, the others as built.

    A sandboxed layer is built again in its child (``RemoteLayer.loaded_with``, its ``--init`` with ``key`` added;
    what ``--constants`` declared kept); a local one through its constructor, with :func:`constructor_args` (of
    ``init`` when given), as the CLI and the grader build it (verify37 F5: a copy with the attribute set kept what
    ``__init__`` derived from it, ``self.inv = 1/beta``, and FAILed a correct layer); a local one behind an adapter
    (or a bound loss) is copied with its attribute ``key`` set.

    Parameters
    ----------
    layer : object
        A local layer or loss (adapted or not) or a :class:`~gradcheck.sandbox.RemoteLayer` or
        :class:`~gradcheck.sandbox.RemoteLoss`.
    key : str
        The constructor argument's name.
    value : float
        Its new value.
    inputs : sequence of ndarray
        The inputs a sandboxed layer loaded with a probe is adapted on again.

    Returns
    -------
    object
        The layer so built (a new object; a sandboxed one to be released by the caller).

    Raises
    ------
    NotRebuilt
        A local layer's constructor arguments are not known (:func:`constructor_args`).
    Exception
        What the constructor (or the copy) raises.
    """
    if _remote_layer(layer):
        init = {**(layer.__dict__["_loaded"][2] or {}), key: value}
        opts = layer.__dict__.get("_loss_opts")  # a loss: its probe and --pred-arg as loaded (the order it was read in)
        new = layer.loaded_with(init, inputs) if opts is None else layer.loaded_with(
            init, probe=opts.get("probe"), pred_arg=opts.get("pred_arg"))
        proto, told = getattr(layer, "protocol", None), getattr(new, "protocol", None)
        if isinstance(proto, dict) and isinstance(told, dict):  # what --constants declared (take_constants)
            told.update({k: proto[k] for k in ("unchecked", "unseen", "buffers", "buffer_why") if k in proto})
        return new
    from ._adapters import BoundLoss, LossFunction

    if isinstance(layer, LossFunction):  # huber_loss(x, y, delta=1.0): the function called with delta=0.7
        return layer.loaded_with({**layer._kwargs, key: value})
    if not isinstance(layer, (Adapted, BoundLoss)):  # its refusal worded as the sandbox's, its step as data (F4)
        new = V.call_student(type(layer), **{**constructor_args(layer, init), key: value}, owner=type(layer).__name__,
                             call=f"__init__({key}={value!r})")
        share_masks(layer, new)  # a dropout mask the layer holds (fix_mask) held by the new one too, as a copy held it
        if masks_held(layer) and not masks_held(new):
            hold_masks(new)
        return new
    cp = copy.deepcopy(layer)
    setattr(cp.obj, key, value)
    return cp


def other_arg_refused(key: str, value: float, other: float, said: str) -> str:
    """The words of a backward that raised NotImplementedError (``said``, its error) at ``key=other`` after it ran at
    ``key=value``: a FAIL, since a backward refusing the second value cannot be told from one with a constant written
    for the first, which that value is there to catch (verify48d F3, the lead's decision), said as that, with the
    values gradcheck and the grader check again at (:data:`SYMMETRIC_ARGS`), not as an exercise not written yet."""
    by: dict[float, list[float]] = {}
    for v, (o, _) in SYMMETRIC_ARGS.items():
        by.setdefault(o, []).append(v)
    pairs = ", ".join(f"{o!r} for {' and '.join(map(repr, vs))}" for o, vs in by.items())
    said = said.replace(NOT_WRITTEN, "").strip().rstrip(".")
    return (f"at {key}={other!r} its backward raised NotImplementedError ({said}), where its forward runs. gradcheck "
            f"check and the grader check backward again at a second value of each float constructor argument "
            f"({pairs}; a probability at 0.5 only) to catch a constant written for the first value (at {key}={value!r}, "
            f"{SYMMETRIC_ARGS[value][1].format(k=key)}); a backward that refuses the second value cannot be told from "
            f"one with such a constant, so it fails: write backward for any {key} (forward already runs at "
            f"{key}={other!r}).")


def _raised_there(err: BaseException, where: str, arg: tuple[str, float, float] | None) -> tuple[bool, str]:
    """:func:`other_point_stop`'s ``(failed, why)`` of ``err``, what the check at another point raised or stopped on:
    by who raised (its ``step``, else the first call its words name)."""
    text = str(err).replace(NOT_WRITTEN, "").strip()  # (a method that ran at the first point is written)
    said = re.sub(r"^while checking [^:]*: forward\([^)]*\)( \([^)]*\))? then backward\([^)]*\): ", "", text)
    # who raised: the first call the message names (gradcheck's words lead, "Name.backward(dY) raised ...";
    # the student's own text follows: a constructor refusing with "backward(" in its message, verify48d F4);
    # the prefix of a layer whose mode is an attribute, "forward(X) (self.training = False)", is gradcheck's
    # (F1); a sandboxed call that timed out is "Name.backward (called after a probe forward ..." (F5)
    m = re.search(r"\.(__init__)\(|(forward|backward)\w*(?:\(| \(called|, called on the probe input|"
                  r"(?: \[[^\]]*\])? modified its )", said)  # (sources.in_place's words: dY written, F2)
    who = getattr(err, "step", None) or (None if m is None else m.group(1) or m.group(2))  # data first
    if who == "forward":  # a shape error of forward's output too (--tape's Y a Tensor)
        return False, f"{where} its forward {'failed' if isinstance(err, GradientShapeError) else 'raised'} ({said})"
    if who == "__init__":  # a constructor refusing the value: no layer to check there
        return False, f"{where} its constructor raised ({said})"
    if arg is not None and who == "backward" and (isinstance(err.__cause__, NotImplementedError) or re.search(
            r"\.backward\w*\([^)]*\)[^:]*? raised NotImplementedError", said)):
        return True, other_arg_refused(*arg, said)
    if isinstance(err, GradientShapeError) or who == "backward":
        return True, f"{where} its backward fails: {said}"
    return False, f"{where} the check stopped ({said})"


def other_point_stop(got: Any, where: str, arg: tuple[str, float, float] | None = None) -> tuple[bool, str]:
    """``(failed, why)`` of a check again at another point (:func:`gradcheck.diagnose._again_told`: drawn parameters,
    inputs around forward's constants, a batch of one size grown, another constructor argument, ``gradcheck check``'s
    of a loss) that gave no PASS or FAIL to take: ``got`` the diagnosis or result there, or what the check raised.
    ``failed`` when backward raised or returned a wrong shape there while forward ran (a right backward runs wherever
    its forward runs: a size read from the one axis for the other, verify47b F6); else no verdict (forward raised there: a layer of one batch size, ``Y = X @ X``; a NaN; no gradient judged: F7). ``why``:
    the words "<where> backward raised ...", or why there is no verdict; ``arg``, ``(key, value, other)`` of another
    constructor argument: a NotImplementedError of backward there is said by :func:`other_arg_refused`. Raises ``got``'s :class:`GraderError`
    (gradcheck's own failure there: verify48d F6), which is no verdict of the layer's."""
    err = got if isinstance(got, BaseException) else getattr(got, "error", None)
    if isinstance(err, GraderError):  # gradcheck's own failure there (an InternalError): never the layer's
        raise err
    stop = None if err is None else _raised_there(err, where, arg)
    if stop is not None and stop[0]:
        return stop
    if err is None and "non-finite" in (getattr(got, "codes", None) or ()):  # a diagnosis's (a CheckResult: none)
        return False, f"{where} a value is NaN or infinite"
    every = (got, *getattr(got, "other_modes", ()))
    if not isinstance(got, BaseException) and (judged := [
            (d, f) for d in every for f in getattr(d, "errors", ()) if getattr(d, "result", None) is not None
            or getattr(f, "code", None) in ("float32", "float32-values")]):
        # a mode that ran there and FAILs, by its gradients compared or by a float32 Y (a FAIL at any point: "Float32
        # code", docs/checking.md): the verdict, though another mode's forward raised there (verify49a F13: eval's
        # FAIL dropped as "no gradient could be judged") or no gradient was compared (F6: a float32 Y there PASSed)
        d, said = judged[0][0], judged[0][1].sentence()
        mode = re.findall(r" \[(training|eval)\]", getattr(d, "name", "") or "")
        return True, f"{where}{' in ' + mode[0] + ' mode' if mode and len(every) > 1 else ''} " \
                     f"{'its backward fails' if 'backward' in said else 'it fails'}: {said}"
    if stop is not None:
        return stop
    return False, f"{where} no gradient could be judged (NOT CHECKED there)"


def each_other_arg(layer: Any, inputs: Sequence[np.ndarray], first: Any, check: Any,
                   results: Any, init: Mapping[str, Any] | None = None,
                   unbuilt: list | None = None, stops: list | None = None) -> tuple[list[tuple[str, float, float]], Any]:
    """``layer``, whose check passed, checked again with each float constructor argument at a value where a wrong
    backward can cancel built at its other value: the one loop of ``gradcheck check`` and
    :func:`gradcheck.diagnose_layer` (:func:`gradcheck.diagnose.at_other_args`), :func:`gradcheck.check_layer` and so
    ``gradcheck grade``'s central differences (newuser36 H1: ``Dropout(p=0.5)`` whose backward divides by p; fix37a:
    the grader and check_layer did not check it again).

    Each argument of :func:`symmetric_args` is set to its other value, the others as built (:func:`built_with`), and
    the layer so built checked. It counts as checked there when the check failed a gradient, or passed with each
    tensor given a verdict, and forward's output differs from the first check's (forward reads the argument: a knob
    backward alone reads is the layer's own); not when the layer cannot be built or checked there (it raised: the first
    verdict stands, and no claim is made of the second value).

    Parameters
    ----------
    layer : object
        The checked layer (local or sandboxed).
    inputs : sequence of ndarray
        The check's inputs (a sandboxed layer loaded with a probe is adapted on them again).
    first : object
        The passing outcome of the check as built (a :class:`~gradcheck.result.CheckResult` or a diagnosis).
    check : callable
        ``check(layer_built)``: the same check of the layer built at the other value; its outcome.
    results : callable
        ``results(outcome)``: the outcome's :class:`~gradcheck.result.CheckResult` of each mode checked, the first
        failing one first; ``[]`` when the check stopped before comparing the gradients (an error, a non-finite
        value).
    init : mapping, optional
        A local layer's constructor arguments (:func:`symmetric_args`, :func:`built_with`).
    unbuilt : list, optional
        Given, ``(name, value, other, why)`` is appended for each argument a local layer could not be built again at
        (:class:`NotRebuilt`), for the caller to say.
    stops : list, optional
        Given, ``(name, value, other, got)`` is appended for each argument whose check there raised (``got`` the
        exception: building a sandboxed layer runs forward and backward on a probe) or stopped before comparing the
        gradients (``got`` the outcome), for the caller to read by the rule of every check again at another point
        (:func:`gradcheck.diagnose._again_told`: a backward that breaks where forward ran FAILs; else no verdict,
        said). Without it such an argument is passed over unsaid.

    Returns
    -------
    checked : list of (str, float, float)
        The ``(name, value, other)`` checked, in order, up to the first whose check failed.
    failed : object or None
        That failing check's outcome; None when none failed.
    """
    checked, ys = [], results(first)
    for key, value, other in symmetric_args(layer, init):
        lay = None
        try:
            lay = built_with(layer, key, other, inputs, init)
            out = check(lay)
        except NotRebuilt as exc:  # its constructor's arguments unknown: said by the caller
            (unbuilt if unbuilt is not None else []).append((key, value, other, str(exc)))
            continue
        except GraderError:  # gradcheck's own failure (an InternalError): never read as the layer's (verify48d F6)
            raise
        except Exception as exc:  # noqa: BLE001 - a layer that cannot be built or checked there: the caller reads why
            (stops if stops is not None else []).append((key, value, other, exc))
            continue
        finally:  # a sandboxed copy built here: freed in its child
            if lay is not None and lay is not layer and callable(getattr(lay, "release", None)):
                lay.release()
        rs = results(out)
        if not rs:  # stopped before comparing the gradients (an error, a NaN): the caller reads why
            (stops if stops is not None else []).append((key, value, other, out))
            continue
        failed = bool(rs) and bool(rs[0].failing_tensors)
        if not rs or not (failed or all(r.passed and not r.unchecked for r in rs)) or _output_unchanged(ys, rs):
            continue  # not checked there (a penalty's term), or forward does not read it: no claim, no verdict
        checked.append((key, value, other))
        if failed:
            return checked, out
    return checked, None


def _output_unchanged(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two checks' results (of one layer built at two values of a constructor argument, one per mode) saw
    forward give the same output on the same input (the result's ``_output``) in every mode both checked (a dropout's
    eval forward is X at any p: its training forward tells): forward does not read that argument, so no term of
    forward can cancel with backward there (a ``bug=1.0`` factor backward alone reads is the layer's own)."""
    ya, yb = ({x.training: getattr(x, "_output", None) for x in r} for r in (a, b))
    pairs = [(ya[t], yb[t]) for t in ya.keys() & yb.keys()]
    return bool(pairs) and all(u is not None and w is not None and np.shape(u) == np.shape(w) and V.identical(u, w)
                               for u, w in pairs)


def args_line(checked: Sequence[tuple[str, float, float]], failing: Sequence[str] | None) -> str:
    """The line saying a layer was checked again at other constructor arguments (:func:`each_other_arg`).

    Parameters
    ----------
    checked : sequence of (str, float, float)
        ``(name, value, other)`` of each argument checked again.
    failing : sequence of str or None
        The tensors wrong at the last one's other value; None when every check there passed; empty when it failed
        there by a finding alone (a gradient returned as float32).

    Returns
    -------
    str
        ``"constructor argument p=0.5 (1/p = 1/(1-p) and p = 1-p) can hide a wrong backward: also checked at p=0.3
        (passed)"``; when it failed there, ``"...: with p=0.3 dX is wrong; at p=0.5 the bug cancels. The table and
        diagnosis below are at p=0.3"``; ``""`` when nothing was checked again.
    """
    if not checked:
        return ""
    said = [f"{k}={v!r} ({SYMMETRIC_ARGS[v][1].format(k=k)})" for k, v, _ in checked]
    line = (f"constructor argument{'s' if len(said) > 1 else ''} {', '.join(said)} can hide a wrong backward: also "
            f"checked at {', '.join(f'{k}={o!r}' for k, _, o in checked)}")
    if failing is None:
        return line + " (passed)"
    k, v, o = checked[-1]
    if not failing:  # it fails there by a finding, no gradient's values wrong (dX returned as float32: verify48d F2)
        return line + (f": with {k}={o!r} it FAILS (the diagnosis below); at {k}={v!r} it passed. The table and "
                       f"diagnosis below are at {k}={o!r}")
    wrong = ", ".join(failing)
    return line + (f": with {k}={o!r} {wrong} {'are' if ', ' in wrong else 'is'} wrong; at {k}={v!r} the bug "
                   f"cancels. The table and diagnosis below are at {k}={o!r}")


_VERDICTS = {0: "PASS", 1: "FAIL", 3: "NOT CHECKED"}


def _verdict_word(outcome: Any) -> str:
    """PASS, FAIL or NOT CHECKED of an exit code or a result (a :class:`~gradcheck.result.CheckResult` or a
    diagnosis, its ``result`` read): NOT CHECKED when it failed with no failing tensor and some unchecked."""
    if isinstance(outcome, int):
        return _VERDICTS.get(outcome, f"exit {outcome}")
    res = getattr(outcome, "result", outcome)
    return "PASS" if outcome.passed else "NOT CHECKED" if res is not None and getattr(res, "unchecked", None) and \
        not getattr(res, "failing_tensors", True) else "FAIL"


def each_keyword_value(layer: Any, owner: str, inputs: Sequence[np.ndarray], first: Any, check: Any,
                       load: Any = None) -> tuple[list[tuple[str, str, Any]], str]:
    """``layer``, a function pair already checked at its keyword arguments' defaults (outcome ``first``), checked
    again at each other value of each (:func:`keyword_values`), the others at their defaults: ``check(layer_at_value,
    key, value)`` on ``load(key, value)`` (default :func:`at_keyword`); the one loop of ``gradcheck check``,
    :func:`gradcheck.check_layer` (and so ``gradcheck grade``'s central differences) and
    :func:`gradcheck.diagnose_layer` (tester33 F2: a broken ``pool_backward(..., mode="average")`` PASSed unseen).

    An outcome is an exit code (0, 1, 3) or a result with ``passed``. Returns ``([(key, value, outcome) of each other
    value, in order], line)``, the line ``"each value of mode checked: mode='max' PASS, mode='average' FAIL"`` ("" and
    ``[]`` when there is no such argument). An error of the checked code at another value is raised with the value
    named in its message (its default's was checked: the error is of that value)."""
    outcomes, said = [], []
    for key, default, others in keyword_values(layer):
        said.append(f"{key}={default!r} {_verdict_word(first)}")
        for w in others:
            lay = None
            try:
                lay = (load or (lambda k, v: at_keyword(layer, k, v, inputs)))(key, w)
                out = check(lay, key, w)
            except StudentCodeError as exc:
                exc.args = (f"{owner} with {key}={w!r} (its default {key}={default!r} checked first): {exc}",
                            *exc.args[1:])
                raise
            finally:  # a sandboxed copy built here: freed in its child
                if load is None and lay is not None and callable(getattr(lay, "release", None)):
                    lay.release()
            outcomes.append((key, w, out))
            said.append(f"{key}={w!r} {_verdict_word(out)}")
    keys = ", ".join(dict.fromkeys(s.split("=")[0] for s in said))
    return outcomes, f"each value of {keys} checked: {', '.join(said)}" if said else ""


def values_merged(owner: str, first: Any, others: list[tuple[str, str, Any]], line: str, defaults: str) -> Any:
    """One outcome of the checks of a function pair at each value of its keyword arguments
    (:func:`each_keyword_value`'s ``others`` and ``line``; ``first``, the check at the defaults ``defaults``,
    ``"mode='max'"``): each a :class:`~gradcheck.result.CheckResult` or a diagnosis (its ``result`` kept alike), named
    ``pool [mode='average']``; the first failing one, the others in its ``other_modes`` (so its ``passed`` is every
    value's), the line among its notes; each result's ``at_value`` is its value (``"mode='average'"``, "" at the
    defaults), ``defaults`` the defaults'. ``first`` unchanged without other values."""
    if not line:
        return first
    every = []
    for r, label in [(first, defaults)] + [(r, f"{k}={w!r}") for k, w, r in others]:
        for x in [r, *r.other_modes]:
            x.name = f"{owner} [{label}]"
            for res in [x.result] if hasattr(x, "result") else [x]:
                if res is not None:
                    res.name, res.at_value, res.defaults = x.name, "" if r is first else label, defaults
            every.append(x)
        r.other_modes = []
    top = next((r for r in every if not r.passed), every[0])
    top.other_modes = [r for r in every if r is not top]
    res = getattr(top, "result", top)
    if res is not top and res is not None:
        res.other_modes = [d.result for d in top.other_modes if d.result is not None]
    if res is not None:
        res.notes.append(line)
    return top


#: The note of a check that ran once because both modes give the same output.
SAME_IN_BOTH_MODES = ("training and eval forwards give the same output on this input: checked once, in eval mode "
                      "(pass training=True / --training to check the training forward alone)")
#: Z13: appended when backward, which may branch on the mode whatever Y does, was checked in training mode too.
SAME_BACKWARD_CHECKED = "; backward was also checked with the training forward (it may branch on the mode) and passed there"

#: Z13: the same output in both modes, but backward fails in training mode only (it branches on the mode).
SAME_Y_OTHER_BACKWARD = ("training and eval forwards give the same output on this input, but backward fails in "
                         "training mode only: both modes are shown (backward branches on the mode)")

#: newuser31b F2: the same output in both modes on this input (running statistics set from this batch), eval failing,
#: training passing: a layer whose eval backward is the training formula, right for the mode a training loop runs.
SAME_Y_EVAL_ONLY = ("training and eval forwards give the same output on this input, but backward fails in eval mode "
                    "only: in training mode (forward(X, training=True), the mode a training loop calls backward "
                    "after, as ML-From-Scratch's train_on_batch does) it passes; both are shown, and --training "
                    "checks the training forward alone")


class TapeUnavailable(Exception):
    """Raised by a twin's ``tape_gradients`` when the tape cannot run the forward: no tape column, a note."""


@dataclasses.dataclass
class Call:
    """One layer called the way the check calls it (``owner`` its display name)."""

    layer: Any
    owner: str
    inputs: list
    names: list
    params: dict
    training: bool
    #: the check's notes of backward writes into arrays forward made (:func:`guarded_backward`), shared by copies
    rewritten: list = dataclasses.field(default_factory=list, repr=False, compare=False)
    #: the arrays the last forward was given (:meth:`_run`): a backward write into one is refused
    received: tuple | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    @property
    def keys(self) -> list[str]:
        """Result keys of the inputs: ``"@" + name``."""
        return ["@" + n for n in self.names]

    @cached_property
    def signature(self) -> str:
        """str: the call for messages, ``forward(X, training=False) with X of shape (8, 5)`` (the
        inputs' names and shapes; ``forward(X)`` when the layer's forward takes no training argument).
        """
        xs = ", ".join(f"{n} of shape {V.fmt_shape(x.shape)}" for n, x in zip(self.names, self.inputs))
        return f"{V.forward_call(self.layer, self.names, self.training)} with {xs}"  # as made (M6)

    def forward(self, *xin: np.ndarray) -> np.ndarray:
        """The student's forward on ``xin``, validated (the numerical plans call this); for a complex input (the
        complex step, ``method='complex'``) a complex output is returned as complex128, unvalidated: its real
        part is forward's value, checked on real inputs (fixn22 #2: check_output refused it, so the complex step
        was never used)."""
        Y = self._run(*xin)
        if isinstance(Y, np.ndarray) and Y.dtype.kind == "c" and any(np.iscomplexobj(x) for x in xin):
            return np.array(Y, dtype=np.complex128)
        return self._validated(Y)

    @cached_property
    def branch(self) -> list[tuple[str, str]]:
        """The switch values this call runs forward with (:func:`layer_branch`)."""
        return layer_branch(self.layer, self.training)

    def _run(self, *xin: np.ndarray) -> Any:
        """What the student's forward returns for ``xin``, not validated (errors as StudentCodeError); a copy of
        each input where forward is asked to write into it (``inplace=True``: :func:`inplace_asked`), so that no
        perturbation the numerical plans make is overwritten (tester15b H6)."""
        if inplace_asked(self.branch):
            xin = tuple(layout_copy(x) if isinstance(x, np.ndarray) else np.array(x, copy=True) for x in xin)
        self.received = xin
        return V.call_student(self.layer.forward, *xin, training=self.training, owner=self.owner,
                              call=self.signature, expected="Expected forward to return the output array.")

    def _validated(self, Y: Any) -> np.ndarray:
        """Forward's output ``Y`` validated (:func:`V.check_output`): a float64 copy, or its error."""
        return V.check_output(Y, owner=self.owner, tensor="Y", produced_by=self.signature, expected_shape=None)

    def output(self, *xin: np.ndarray) -> np.ndarray:
        """:meth:`forward` for a caller that only reads ``Y`` before the next call (the directional plan's
        objective): the same checks and errors, but an output that is already a finite C-contiguous float64 array
        is returned itself, not copied (issue 10: the copy held the same values in the same layout, so the same
        sums; the finiteness test is check_output's own)."""
        Y = self._run(*xin)
        if type(Y) is np.ndarray and Y.dtype == np.float64 and Y.flags.c_contiguous and \
                math.isfinite(V.sum_of_squares(Y)):
            return Y
        return self._validated(Y)

    def forward_many(self, shape):
        """The chunked-forward protocol of a layer that has one (a sandboxed layer), else None."""
        if not callable(getattr(self.layer, "forward_many", None)):
            return None

        def many(inputs_list, params_list, edits_list):
            Ys = self.layer.forward_many(inputs_list, params_list, training=self.training, edits_list=edits_list)
            return [self._complex_output(y, shape) if y.dtype.kind == "c" else
                    V.check_output(y, owner=self.owner, tensor="Y", produced_by=self.signature, expected_shape=shape,
                                   expected_why="the shape of the unperturbed output") for y in Ys]
        return many

    def _complex_output(self, Y: np.ndarray, shape) -> np.ndarray:
        """A complex-step output of ``forward_many`` (complex128: the sandbox gives no other for complex inputs,
        nor a complex one for real inputs), its shape checked as a real output's; its real part is forward's
        value, checked on real inputs (:meth:`forward`)."""
        if tuple(Y.shape) != tuple(shape):
            raise GradientShapeError(V.paragraph(
                f"{V.called(self.owner, self.signature)} gave Y with shape {V.fmt_shape(Y.shape)} for a complex input (the "
                f"complex step); expected shape {V.fmt_shape(tuple(shape))} (the shape of the unperturbed output)."))
        return Y


def in_place(owner: str, method: str, tensor: str, example: str, why: str = "", what: str = "a layer",
             branch: str = "") -> StudentCodeError:
    """The error of a ``forward`` or Nielsen's ``backprop(x, y)`` (InputModifiedError) or of a ``backward``
    (StudentCodeError) that wrote into ``tensor``; ``branch``: the switch values of that call (``flag=True``), named
    as the check's rows are (``[flag=True]``)."""
    return stepped((StudentCodeError if method == "backward" else InputModifiedError)(V.paragraph(
        f"{V.called(owner, method)}{f' [{branch}]' if branch else ''} modified its {tensor} in place;",
        f"{what} must not write into {tensor.split()[-1]}{why}.", f"Compute into a new array instead, e.g. {example}.")),
        method)


def strided_copy(x: np.ndarray) -> np.ndarray:
    """A copy of ``x`` laid out as every other element of a buffer twice its size (``np.empty(2 * x.size)[::2]``,
    reshaped; neither C- nor Fortran-contiguous): the other memory layout of a 1-d array or a ``(1, n)`` row, whose C
    and Fortran orders are one buffer (:mod:`gradcheck._layout`)."""
    buf = np.empty(2 * x.size, x.dtype)
    buf[1::2] = -0.5 - x.ravel()  # the gaps: finite values other than x's, so that a read of them shows
    out = buf[::2].reshape(x.shape)
    out[...] = x
    return out


def layout_copy(x: np.ndarray) -> np.ndarray:
    """A copy of ``x`` in ``x``'s memory layout: C or Fortran order kept (``order="K"``), a strided ``x`` of more than
    one element strided again (:func:`strided_copy`), as the memory-layout rerun hands it on (:mod:`gradcheck._layout`)."""
    if x.size > 1 and not (x.flags.c_contiguous or x.flags.f_contiguous):
        return strided_copy(x)
    return x.copy(order="K")


def dY_written(owner: str, dY: np.ndarray, G: np.ndarray) -> StudentCodeError | None:
    """The one rule on a backward's upstream gradient: the error of a ``backward(dY)`` that left ``dY`` other than
    ``G``, the value it was given (NaN compared equal to NaN), or None. ``dY`` is the array the student's backward
    received (a sandboxed layer's caller array, into which :meth:`gradcheck.sandbox.RemoteLayer.backward` copies
    what the child's backward wrote). Used by :func:`manual_source` (``gradcheck check``: exit 1) and by the grader
    (:func:`gradcheck.grading.checks.layer_gradients`, whatever the other parts say), so the two cannot disagree."""
    if V.identical(dY, G):
        return None
    err = in_place(owner, "backward", "upstream gradient dY", "dY * (X > 0) rather than dY[X <= 0] = 0",
                   " (in a network the same dY can also reach another branch: a residual connection, or an "
                   "output used twice)")
    with np.errstate(invalid="ignore"):
        changed = (np.asarray(dY) != G) & ~(np.isnan(dY) & np.isnan(G)) if np.shape(dY) == np.shape(G) else None
    if changed is not None and 0 < changed.sum() < changed.size and not np.asarray(dY)[changed].any():  # a mask
        err.args = (f"{err.args[0]} Here it set {int(changed.sum())} of {changed.size} entries of dY to 0, as Deep "
                    "Learning from Scratch's Relu.backward does as printed (dout[self.mask] = 0; dx = dout): harmless "
                    "in the book's networks, where no other layer reads that dout again, but not in general; copy "
                    "first (dout = dout.copy()).",)  # students45 F5: the book's code, said so
    return err


#: The note of a gradient a one-element output's backward gives for one sign of dY only (:func:`one_sign_only`).
ONE_SIGN = ("{t} is not linear in dY: the output is one number, so backward ran for dY = {g:.6g} and again for dY = "
            "{h:.6g}, and {t} was not -1 times the first ({t}{idx}: {a:.6g}, then {b:.6g}): backward keeps one sign "
            "of dY (np.maximum(dY, 0), np.minimum(dY, 0), abs(dY)); multiply by dY itself")


def one_sign_only(backward_at: Any, G: np.ndarray, first: Mapping[str, np.ndarray], rtol: float,
                  atol: float, name: Any = str) -> dict[str, tuple[str, np.ndarray]]:
    """The gradients of a one-element output that backward does not give linearly in its one number ``dY``.

    The upstream gradient ``G`` of a one-element output is one number of one sign
    (:func:`gradcheck._kernel.upstream_draw`), so a backward that keeps one sign of dY (``np.minimum(dY, 0)``) gives
    the right numbers there; backward is linear in dY, so it is run again at ``-G``, the other sign: each gradient
    must be -1 times the first, up to the check's tolerance. A term without dY (a penalty's, judged apart) is no
    such bug: there ``backward(G) + backward(-G) = 2 backward(0)`` (asked only of a gradient that failed).

    Parameters
    ----------
    backward_at : callable
        ``backward_at(dY) -> {key: ndarray}``: a forward on the checked inputs, then backward(dY), the gradients as
        the route names them (``"@X"`` or ``"dX"``).
    G : ndarray of float64
        The route's upstream gradient (the one ``upstream_draw`` gave).
    first : mapping of str to ndarray
        backward's gradients at ``G``, by the same keys; a key missing at ``-G`` or of another shape is left out.
    rtol, atol : float
        The check's tolerances.
    name : callable, default str
        The tensor's name in the note for a key (``"@X"`` -> ``"dX"``).

    Returns
    -------
    dict of str to (str, ndarray)
        ``{key: (note, -backward(-G)'s gradient)}`` (:data:`ONE_SIGN`); {} for a ``G`` of more than
        one entry (a sign-keeping backward fails the comparison at ``G`` itself) or a linear backward.
    """
    if np.size(G) != 1:
        return {}
    first = {k: np.asarray(v, dtype=np.float64) for k, v in first.items()}
    second = {k: np.asarray(v, dtype=np.float64) for k, v in backward_at(-G).items()
              if k in first and np.shape(v) == first[k].shape}
    bad = [k for k, b in second.items() if not close(first[k], -b, rtol, atol)]
    if bad:
        zero = backward_at(np.zeros_like(G))
        bad = [k for k in bad if not (k in zero and np.shape(zero[k]) == first[k].shape
                                      and close(first[k] + second[k], 2 * np.asarray(zero[k], np.float64), rtol, atol))]
    out = {}
    for k in bad:
        d = relative_error(first[k], -second[k], 1e-300)
        i = np.unravel_index(int(np.nanargmax(np.nan_to_num(d, nan=np.inf))), d.shape) if d.ndim else ()
        out[k] = (ONE_SIGN.format(t=name(k), g=float(np.ravel(G)[0]), h=-float(np.ravel(G)[0]),
                                  idx=list(map(int, i)) if i else "", a=float(first[k][i]) + 0.0, b=float(second[k][i]) + 0.0),
                  -second[k])
    return out


def input_written(owner: str, name: str, what: str = "a layer", branch: str = "") -> InputModifiedError:
    """The error of a forward that wrote into its input ``name`` (in process, or in the sandbox's child);
    ``branch``: the switch values it ran with (``flag=True``, :func:`in_place`). The example is a loss's shift
    for a loss (verify41 L1: it was a ReLU's)."""
    if what == "a loss":
        return in_place(owner, "forward", f"input {name}", f"z = {name} - {name}.max(axis=1, keepdims=True) rather "
                        f"than {name} -= ...", " (the caller still uses it)", what, branch)
    return in_place(owner, "forward", f"input {name}", "np.maximum(X, 0) rather than X[X < 0] = 0",
                    " (the previous layer or the caller still uses it)", what, branch)


def param_written(owner: str, name: str, branch: str = "", call: str = "") -> InputModifiedError:
    """The error of a forward that wrote into its own parameter ``name`` (verify40 M1: ``self.W *= 0.9`` at the top of
    forward, a weight decay in the wrong place, got a PASS, a FAIL at 17152 and a 'non-deterministic forward' by the
    path taken): each call changes the parameter the gradient is taken at; in process (:func:`manual_forward`) or in
    the sandbox's child (its forward reply's ``params_written``). ``call``: the call that wrote, in its mode
    (``"forward(X, training=True)"``, :func:`gradcheck._validation.forward_call`), named in the message (verify41b
    F7: a clip in training mode only was said to write "in training or eval")."""
    each = f"each call {call}" if call else "each forward"
    return in_place(owner, "forward", f"parameter {name}", f"w = {name} * 0.9 (a new array) in forward, or the decay in "
                    "the optimizer's step", f" (forward modified {name} in place: every call changes the parameter the "
                    f"gradient is taken at, so no gradient of it can be checked, and {each} changes it again; a weight "
                    "decay or a max-norm clip belongs in the update step)", branch=branch)


def backprop_written(said: str) -> InputModifiedError | None:
    """The error of Nielsen's ``backprop(x, y)`` that wrote into its ``x`` or ``y`` (nielsen35 F11: read by the adapter,
    :class:`gradcheck._adapters.BackpropInputWritten`, whose message ``said`` is ``"Network.backprop(x, y) wrote into
    x"``), or None for another message."""
    m = re.fullmatch(r"(\w+)\.(\w+)\(x, y\) wrote into ([xy])", said)
    if m is None:
        return None
    owner, back, v = m[1], m[2], m[3]
    return in_place(owner, f"{back}(x, y)", f"input {v}", f"{v} = {v} - {v}.mean(axis=1, keepdims=True) rather than "
                    f"{v} -= {v}.mean(axis=1, keepdims=True)", " (update_mini_batch gives it the training data itself, "
                    "network.py's for x, y in mini_batch: every later epoch trains on the changed data, and its "
                    "gradients are those of the changed input)", back)


def argument_written(owner: str, name: str) -> InputModifiedError:
    """The error of a ``(loss, grad)`` function of several arguments (``--loss`` with ``--init``) that wrote into the
    argument ``name`` it is checked for (tester29s LOW: Ng's Hint 2 ``temp = theta; temp[0] = 0`` zeroes the caller's
    theta[0]; the message said y_pred and gave a layer's advice)."""
    return in_place(owner, "forward", f"argument {name}", f"t = {name}.copy(); t[0] = 0 rather than t = {name}; t[0] "
                    f"= 0 (one array under two names: the write reaches {name})", " (the caller still uses it: "
                    "scipy.optimize.minimize steps that very array)", "a cost function")


#: The names of a switch that asks forward to write its output into its input, PyTorch's ``nn.ReLU(inplace=True)``:
#: with that value an in-place forward does what was asked (tester15b H6), checked with a fresh copy of X per call.
INPLACE_NAMES = ("inplace", "in_place")


def switch_branch(info: Any, training: bool | None) -> list[tuple[str, str]]:
    """``[(name, value text)]`` of the switches a forward in mode ``training`` runs with, read from a layer's
    ``protocol`` (``info``: the adapters' ``switch_combo`` triples, else its ``mode_keyword``); ``[]`` when it has
    none (forward's own ``training``: the message stays as it was) or ``training`` is None."""
    if training is None or not isinstance(info, dict):
        return []
    sw = [str(x) for x in info.get("switch_combo") or []]
    triples = list(zip(sw[::3], sw[1::3], sw[2::3])) or ([tuple(map(str, info["mode_keyword"]))[:3]]
                                                         if info.get("mode_keyword") else [])
    return [(n, on if training else off) for n, off, on in triples if len(n) < 80]


def layer_branch(layer: Any, training: bool | None) -> list[tuple[str, str]]:
    """:func:`switch_branch` of ``layer``: from its ``protocol`` (a sandboxed layer's), else from the switch keyword
    of a layer adapted in this process (``mode_keyword``, one switch or several joined by ", ")."""
    info = getattr(layer, "protocol", None)
    if isinstance(info, dict):
        return switch_branch(info, training)
    mk = getattr(layer, "__dict__", {}).get("mode_keyword")
    if training is None or not (isinstance(mk, tuple) and len(mk) == 3 and isinstance(mk[0], str)):
        return []
    names = mk[0].split(", ")
    offs, ons = ((v if isinstance(v, tuple) else (v,) * len(names)) for v in mk[1:])
    return [(n, repr(on if training else off)) for n, off, on in zip(names, offs, ons)]


def inplace_asked(branch: list[tuple[str, str]]) -> str:
    """``"inplace=True"`` when ``branch`` (:func:`switch_branch`) sets a switch named :data:`INPLACE_NAMES` to True:
    forward was asked to write into its input; else ""."""
    return next((f"{n}={v}" for n, v in branch if n.lower() in INPLACE_NAMES and v == "True"), "")


def manual_forward(call: Call) -> tuple[np.ndarray, np.ndarray]:
    """Two forwards on the same input: (Y1, Y2); the input must be left unchanged."""
    x_in = [x.copy() for x in call.inputs]
    before = {k: np.array(v, copy=True) for k, v in call.params.items() if isinstance(v, np.ndarray)}
    Y = call.forward(*x_in)
    for k, v in before.items():  # verify40 M1 (a sandboxed layer's child tells it: RemoteLayer.forward)
        if not V.identical(v, call.params[k]):
            raise param_written(call.owner, k, ", ".join(f"{a}={b}" for a, b in call.branch),
                                V.forward_call(call.layer, call.names, call.training))
    for n, a, b in zip(call.names, x_in, call.inputs):
        if not np.array_equal(a, b) and not inplace_asked(call.branch):  # inplace=True: as asked, on a copy
            raise input_written(call.owner, n, branch=", ".join(f"{k}={v}" for k, v in call.branch))
    return Y, call.forward(*[x.copy() for x in call.inputs])


class Wrapper:
    """Base of the checker's own wrappers around a student's layer (``self._layer``, the layer wrapped):
    :func:`grad_slots` answers for the layer inside."""

    _layer: Any


def unwrapped(layer: Any) -> Any:
    """The layer inside the checker's proxies (:class:`Wrapper`) around ``layer``."""
    while isinstance(layer, Wrapper):
        layer = layer._layer
    return layer


def grad_slots(layer: Any) -> dict[str, str]:
    """Where an attribute-style layer keeps each gradient (``{"W": "self.dW"}``); {} for a ``grads`` dict.

    A local layer answers as :func:`gradcheck._adapters.adapt` read it, a sandboxed one from its child's
    ``protocol`` description, a :class:`Wrapper` for the layer it wraps."""
    layer = layer._layer if isinstance(layer, Wrapper) else layer
    if isinstance(layer, Adapted):
        return {} if layer.own else {w: f"self.{g}" for w, g in layer.pairs.items()}
    # only a sandbox's RemoteLayer describes its layer in ``protocol`` (sandbox.py imports this module)
    proto = getattr(layer, "protocol", None) if type(layer).__module__ in ("gradcheck.sandbox", "gradcheck.sandbox.remote") else None
    attrs = proto.get("grad_attrs") or () if isinstance(proto, Mapping) and proto.get("protocol") == "attribute" else ()
    return {w: f"self.{g}" for w, _, g in (str(p).partition(":") for p in attrs)}


def manual_source(call: Call, G: np.ndarray, wrong: list | None = None) -> dict[str, np.ndarray]:
    """The student's ``backward(G)`` after the last forward: ``{key: gradient}``, shapes and values validated;
    ``wrong``: a list that takes each gradient of the wrong shape instead of raising, left out of the dict
    (:func:`gradcheck._validation.shaped_or_wrong`)."""
    # an attribute-style layer's self.dW, named as the student stores it (M5)
    names, inputs, owner = call.names, call.inputs, call.owner
    bcall = f"backward(dY) with dY of shape {V.fmt_shape(G.shape)}"
    expect = (f"Expected backward to return d{names[0]} of shape {V.fmt_shape(inputs[0].shape)}."
              if len(inputs) == 1 else f"Expected backward to return the tuple ({', '.join('d' + n for n in names)}).")
    dY = layout_copy(G)  # a Fortran-ordered or strided G stays so (gradcheck._layout)
    ret = guarded_backward(call.layer, dY, names=names, owner=owner, call=bcall, expected=expect,
                           received=call.received, rewritten=call.rewritten)
    if isinstance(ret, list) and len(inputs) == 1 and (refused := stored_inputs_refusal(call.layer, owner, bcall)):
        raise refused
    if written := dY_written(owner, dY, G):
        raise written
    manual = V.check_input_grads(ret, owner=owner, produced_by=bcall, names=names, inputs=inputs, keys=call.keys,
                                 wrong=wrong, pair=inputs_hold_weights(call.layer), no_dx=computes_no_dx(call.layer))
    manual.update(V.check_grads(call.layer, owner, call.params, grad_slots(call.layer), wrong=wrong))
    return manual


def inputs_hold_weights(layer: Any) -> bool:
    """Whether ``layer``'s forward takes its weights among its inputs: a CS231n function pair (``affine_forward(x, w,
    b)``), run here or sandboxed (its ``protocol``), through the checker's wrappers. Its backward's None for one is
    a missing gradient (``db``), not an input without one (:func:`gradcheck._validation.without_gradient`)."""
    inner = unwrapped(layer)
    inner = inner.obj if isinstance(inner, Adapted) else inner
    proto = getattr(inner, "protocol", None)
    return isinstance(inner, FunctionPair) or (isinstance(proto, Mapping) and proto.get("protocol") == "cs231n")


def computes_no_dx(layer: Any) -> bool:
    """Whether ``layer`` is a model differentiated in its weights alone (:func:`gradcheck._adapters.model_as_layer`:
    Deep Learning from Scratch vol. 1's ``gradient(x, t)``, CS231n's ``loss(X, y) -> (loss, grads)``), run here or
    sandboxed (its ``protocol``'s ``no_dx``): its backward's None is no dX, not a missing gradient
    (:func:`gradcheck._validation.without_gradient`)."""
    inner = unwrapped(layer)
    inner = inner.obj if isinstance(inner, Adapted) else inner
    proto = getattr(inner, "protocol", None)
    return isinstance(proto, Mapping) and proto.get("no_dx") is True or "_gradcheck_model" in getattr(
        inner, "__dict__", {})


def stored_inputs_refusal(layer: Any, owner: str, bcall: str) -> StudentCodeError | None:
    """:func:`gradcheck._validation.stored_inputs_error` for a local layer whose backward returned a list because
    forward appends its input to a list attribute nothing empties (:func:`gradcheck._adapters.stored_inputs`; a
    sandboxed layer's backward asks its child, :meth:`gradcheck.sandbox.RemoteLayer.backward`); None otherwise."""
    inner = unwrapped(layer)
    where = stored_inputs(getattr(inner, "obj", inner))
    return V.stored_inputs_error(owner, bcall, where) if where else None


#: The note of a backward that wrote into an array its forward made (:func:`cache_write_verdict`): diagnose's
#: "cache-rewritten" finding (``gradcheck check``, which measures a second backward into ``{twice}``) and the
#: in-process check's note (:func:`cache_rewritten_notes`); ``{where}``: the cache guard's message up to "in place".
CACHE_REWRITTEN = ("{where} in place, an array its forward made (not an input): the verdict does not rest on it, "
                   "since gradcheck called each backward after its own forward, as a training loop does{twice}; "
                   "if backward may be called twice, copy before writing (x = x.copy(), x the array it writes "
                   "into)")


def backward_twice(obj: Any, inputs: Sequence[np.ndarray], dY: np.ndarray | None = None,
                   loss: bool = False) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """One forward of ``obj`` on ``inputs`` (copies), then two backwards with copies of the same upstream gradient:
    the one measure of "a second backward after one forward gives another answer" (a backward that edits what its
    forward cached, Deep Learning from Scratch 2's ``dx = ys; dx[...] -= 1``, a CS231n ``xhat *= ...``), used by
    ``gradcheck check``'s cache note (:func:`gradcheck.check_command.cache_rewritten_line`), the grader's
    backward-twice test (:func:`gradcheck.grading.checks.backward_repeatable`) and the diagnosis's probe "second
    backward identical" (:meth:`gradcheck.diagnose._Probes.twice`, which reads every gradient, the parameters' too).

    Parameters
    ----------
    obj : object
        A layer (``backward(dY)``) or, with ``loss``, a loss (``backward()``).
    inputs : sequence of ndarray
        ``forward``'s arguments (a loss's ``y_true, y_pred``).
    dY : ndarray, optional
        The upstream gradient; None: standard normal draws (seed 0) of forward's output shape, not ones, for which
        batch norm's dx is zero whatever its cache holds (a loss: none).
    loss : bool, default False
        ``obj`` is a loss.

    Returns
    -------
    (list of ndarray, list of ndarray)
        Each backward's outputs as float64 arrays: one, or one per piece of a tuple (``(dx, dgamma, dbeta)``).

    Raises
    ------
    Exception
        Whatever the student's forward or backward raised, or ValueError for an output that is not numeric.
    """
    Y = obj.forward(*[np.array(x, copy=True) for x in inputs])
    # standard normal draws: ones would hide batch norm's dx, zero for a constant dY
    G = None if loss else probe_rng(0).standard_normal(np.shape(Y)) if dY is None else np.asarray(dY)

    def once() -> list[np.ndarray]:
        out = obj.backward() if loss else obj.backward(np.array(G, copy=True))
        return [np.asarray(g, dtype=np.float64) for g in (out if isinstance(out, (tuple, list)) else [out])]
    return once(), once()


def twice_difference(first: Sequence[np.ndarray], second: Sequence[np.ndarray]) -> float:
    """The largest ``|first - second|`` of :func:`backward_twice`'s two answers (0.0: the same answer; inf: their
    shapes differ; NaN where a value is not finite)."""
    if len(first) != len(second) or any(a.shape != b.shape for a, b in zip(first, second)):
        return float("inf")
    with np.errstate(invalid="ignore"):
        return max((float(np.max(np.abs(a - b), initial=0.0)) for a, b in zip(first, second)), default=0.0)


def cache_rewritten_notes(said: Sequence[str]) -> list[str]:
    """The in-process check's note (:func:`gradcheck.check_layer`, :func:`gradcheck.check_loss`) of a backward that
    wrote into an array its forward made: :data:`CACHE_REWRITTEN` of the first of ``said`` (the cache guard's
    messages, :func:`guarded_backward`), as ``gradcheck check`` words it without its second-backward measure
    (:func:`gradcheck.check_command.cache_rewritten_line`); [] when ``said`` is empty."""
    return [CACHE_REWRITTEN.format(where=s.partition(" in place;")[0], twice="") + "." for s in list(said)[:1]]


def cache_write_verdict(owner: str, guard: str | None, received: str | None) -> tuple[str | None, str | None]:
    """The one rule of a backward that wrote into what its forward cached, for ``gradcheck check``, the grader (its
    sandbox, hostile or not: :meth:`gradcheck.sandbox._Remote._cache_written`) and the in-process API
    (:func:`guarded_backward`): ``(refusal, note)``.

    Parameters
    ----------
    owner : str
        The class (or pair) named in a message: ``CacheCE`` gives ``CacheCE.backward modified its cache ...``.
    guard : str or None
        The cache guard's message (:func:`gradcheck._adapters.cache_guard`: which cached array, which element), or
        None when it saw no write (or, in a hostile sandbox, was switched off: it only names the place).
    received : str or None
        The name of an array the last forward was given that backward changed (the caller's array: CS231n's
        ``cache = x``, ``self.X = X``), or None.

    Returns
    -------
    refusal : str or None
        A write into the caller's array: the guard's message, else one naming the input; every later backward and
        the caller read changed data, so it is refused (StudentCodeError, exit 3 in ``gradcheck check``).
    note : str or None
        A write into an array forward made itself (Deep Learning from Scratch 2's TimeSoftmaxWithLoss,
        ``dx = ys; dx[...] -= 1``; the ``cache_mutated`` mutant's ``d = self.p``): the guard's message, not refused
        (session 26): each backward after its own forward is right or wrong on its own, as the checker, the grading
        tests and a training loop call it; a second backward after the same forward is the check's note
        ("cache-rewritten") and the assignment's own backward-twice test
        (:func:`gradcheck.grading.checks.backward_repeatable`).
    """
    if received is not None:
        return guard or (f"{V.called(owner, 'backward')} modified its cache ({received}, the array forward received) in place; "
                         f"copy before writing. {CACHE_ADVICE}"), None
    return None, guard


def guarded_backward(obj: Any, *args: Any, names: Sequence[str] = (), received: Sequence[Any] | None = None,
                     rewritten: list[str] | None = None, **kwargs: Any) -> Any:
    """``obj.backward(*args)`` by :func:`V.call_student`, its writes into its forward's cache judged by
    :func:`cache_write_verdict` (the rule of ``gradcheck check`` and the grader; a sandboxed object's cache is
    watched in its child and judged by :meth:`gradcheck.sandbox._Remote._cache_written`).

    ``received``: the arrays the last forward was given (``names`` names them); a write into one is refused
    (StudentCodeError), as is any write into the cache when ``received`` is None (the caller's arrays unknown). A
    write into an array forward made is not: its message is appended to ``rewritten`` (the check's note)."""
    guard = None if getattr(obj, "cache_guarded", False) else cache_guard(obj, names)
    kept = None if received is None or guard is None else [(n, x, np.array(x, copy=True)) for n, x in
                                          zip([*names, *(f"input {i}" for i in range(len(names), len(received)))],
                                              received) if isinstance(x, np.ndarray)]
    ret = V.call_student(obj.backward, *args, **kwargs)
    said = guard() if guard is not None else None
    hit = None if kept is None else next((n for n, x, c in kept if not (
        x.shape == c.shape and np.array_equal(x, c, equal_nan=x.dtype.kind in "fc"))), None)
    owner = str(kwargs.get("owner") or type(obj).__name__)
    refusal, note = (said, None) if kept is None else cache_write_verdict(owner, said, hit)
    if refusal:
        raise StudentCodeError(refusal)
    if note and rewritten is not None and note not in rewritten:
        rewritten.append(note)
    return ret


def _mask_settings(layer: Any):
    """``(layer, its mask setting)`` of ``layer`` and of the layers inside it at any depth (:func:`walk`; a sandboxed
    object's are in its child) that have ``fix_mask``, one at a time (a setting is read after the ones before it
    were acted on); the setting is ``mask_fixed`` (or ``_masks.fixed``), None when it cannot be read back."""
    inside = [] if getattr(layer, "cache_guarded", False) else [v for _, v in walk(layer) if not _scalar(v) and
                                                                _is_layer(v)]  # a number or array is no layer
    for o in [layer, *inside]:
        if callable(getattr(o, "fix_mask", None)):
            yield o, getattr(o, "mask_fixed", getattr(getattr(o, "_masks", None), "fixed", None))


def hold_masks(layer: Any) -> list[tuple[Any, Any]]:
    """``fix_mask(True)`` on ``layer`` and the layers inside it at any depth (:func:`_mask_settings`) whose mask is
    not fixed (only a layer whose setting can be read back): the ``(layer, previous)`` pairs to undo."""
    out = []
    for o, prev in _mask_settings(layer):
        if prev is False:
            o.fix_mask(True)
            out.append((o, prev))
    return out


@contextlib.contextmanager
def masks_fixed(layer: Any, hold: bool = True):
    """:func:`hold_masks` for the block (nothing when not ``hold``), each mask set back as it was after it."""
    held = hold_masks(layer) if hold else []
    try:
        yield
    finally:
        for obj, prev in held:
            obj.fix_mask(prev)


def masks_held(layer: Any) -> bool:
    """Whether ``layer`` or a layer inside it holds its dropout mask fixed (``fix_mask(True)`` or a 0/1 array, as
    :func:`hold_masks` sets it or the caller did): a mask of this batch's shape, so forward on a batch of another
    size raises by design and the inputs' finite differences are not stacked into one batch (tester17 L11)."""
    return any(fixed is not None and fixed is not False for _, fixed in _mask_settings(layer))


def share_masks(layer: Any, twin: Any, depth: int = 3) -> None:
    """Give the twin the manual layer's dropout mask when that mask is fixed (children of a container paired in order)."""
    fixed = getattr(layer, "mask_fixed", getattr(getattr(layer, "_masks", None), "fixed", False))
    mask = getattr(layer, "mask", None)
    if callable(getattr(twin, "fix_mask", None)) and fixed is True and isinstance(mask, np.ndarray):
        twin.fix_mask(np.array(mask, copy=True))
    mine, theirs = getattr(layer, "layers", None), getattr(twin, "layers", None)
    if depth > 0 and isinstance(mine, Sequence) and isinstance(theirs, Sequence) and len(mine) == len(theirs):
        for a, b in zip(mine, theirs):
            share_masks(a, b, depth - 1)


def training_differs(call: Call) -> bool:
    """Whether the training forward's output differs from the eval one's (an error counts as yes); masks held."""
    def run(training):
        return dataclasses.replace(call, training=training).forward(*[x.copy() for x in call.inputs])
    try:
        Y_eval = run(False)
        with masks_fixed(call.layer):
            Y_train = run(True)
    except Exception:  # noqa: BLE001
        return True
    return not (Y_eval.shape == Y_train.shape and V.identical(Y_eval, Y_train))


#: Other names a constructor setting goes by (Keras, PyTorch, tutorials): ``self.alpha`` -> ``negative_slope``.
SYNONYMS = {"negative_slope": ("alpha", "slope", "leak", "leakiness"),
            "p": ("rate", "drop_prob", "p_drop", "drop_rate", "dropout"),
            "eps": ("epsilon",), "momentum": ("decay",), "axis": ("dim",),
            "approximate": ("approx",)}


def constructor_kwargs(cls: type, obj: Any, init: Mapping[str, Any] | None, owner: str,
                       what: str = "autoprop twin", own: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Constructor kwargs for ``cls`` (the twin or the reference) matching the checked layer ``obj``: each
    parameter (not ``rng``/``name``) from ``init`` by its name or a :data:`SYNONYMS` name, else ``obj``'s
    attribute of such a name, else its default. TwinError for a required one found nowhere, or an unknown one.

    ``own`` (``--twin-init``): ``cls``'s own arguments, given over those found so for the rest (verify41 M2: a twin
    given only ``normalized_shape`` took its default ``eps``, not the layer's ``self.eps``); then nothing is required
    and ``init``'s other names are the checked class's, not errors.
    """
    if own is not None:
        return {**_settings_found(cls, obj, dict(init or {}), skip=own), **own}
    init, kwargs, used = dict(init or {}), {}, set()
    try:
        ps = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return init
    for p in ps:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in ("rng", "name"):
            used.add(p.name)
            continue
        if (hit := _setting(p.name, init, obj)) is not None:
            key, kwargs[p.name] = hit
            used.add(key)
        elif p.default is p.empty:
            raise TwinError(V.paragraph(
                f"Cannot build the {what} {cls.__module__}.{cls.__name__} of {owner}:",
                f"its constructor needs {p.name!r} and {owner} has no attribute of that name.",
                _own_kwargs_advice(cls, ps, what)))
    extra = sorted(set(init) - used)
    if extra and not any(p.kind == p.VAR_KEYWORD for p in ps):  # a setting the twin cannot take
        raise TwinError(V.paragraph(
            f"Cannot build the {what} {cls.__module__}.{cls.__name__} of {owner}:",
            f"its constructor takes no {', '.join(map(repr, extra))} (it takes "
            f"{', '.join(p.name for p in ps) or 'nothing'}).",
            _own_kwargs_advice(cls, ps, what)))
    return kwargs


def _setting(name: str, init: Mapping[str, Any], obj: Any) -> tuple[str | None, Any] | None:
    """``(the init key or None, value)`` of constructor argument ``name``: from ``init`` by its name or a
    :data:`SYNONYMS` name, else ``obj``'s attribute of such a name (key None); None where neither holds it."""
    names = (name, *SYNONYMS.get(name, ()))
    if (found := next((n for n in names if n in init), None)) is not None:
        return found, init[found]
    if (found := next((n for n in names if _has(obj, n)), None)) is not None:
        return None, getattr(obj, found)
    return None


def _settings_found(cls: type, obj: Any, init: dict[str, Any], skip: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of ``cls`` not in ``skip`` found in ``init`` or as ``obj``'s attributes (:func:`_setting`, as
    :func:`constructor_kwargs` reads them); those found nowhere are left out (defaults)."""
    try:
        ps = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return {}
    out = {}
    for p in ps:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in ("rng", "name") or p.name in skip:
            continue
        if (hit := _setting(p.name, init, obj)) is not None:
            out[p.name] = hit[1]
    return out


def _own_kwargs_advice(cls: type, ps: list, what: str) -> str:
    """How to build the reference or the twin from its own arguments (``--reference-init``, tester20s M7;
    ``--twin-init``, newuser27 #4: the student's constructor names its sizes otherwise, ``D`` for
    ``normalized_shape``, so neither --init, which goes to the checked class, nor its attributes reach them). A
    dropout's ``p`` is said to be the drop probability (verify38 F1: CS231n's is the keep probability)."""
    names = [p.name for p in ps if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in ("rng", "name")
             and p.default is p.empty] or [p.name for p in ps][:1]
    eg = ", ".join(f'"{n}": ...' for n in names)
    drop = (f" {cls.__name__}'s p is the probability of DROPPING an entry (PyTorch's convention); CS231n's "
            "dropout_param['p'] and keep_prob are the probability of keeping one: give it 1 - that."
            if "dropout" in cls.__name__.lower() and any(p.name == "p" for p in ps) else "")
    if what == "reference":
        return (f"Give the reference its own arguments with --reference-init '{{{eg}}}' (for {cls.__name__}; --init "
                f"stays the checked class's), or check without --reference.{drop}")
    return (f"Give the twin its own arguments with --twin-init '{{{eg}}}' (for {cls.__name__}; --init stays the "
            f"checked class's; in Python, twin=<the autoprop layer, built>), or check without --twin.{drop}")


def _has(obj: Any, name: str) -> bool:
    try:
        v = getattr(obj, name)
    except Exception:  # noqa: BLE001 - a student's property may raise
        return False
    return not callable(v) and not (isinstance(v, np.ndarray) and v.ndim > 0)


def build_twin(obj: Any, kind: str = "layer", init: Mapping[str, Any] | None = None,
               own: Mapping[str, Any] | None = None):
    """The autoprop twin (same class name) of a manual layer or loss with the same parameter values:
    ``(twin or None, why not)``; a container gets its children's twins. TwinError when it cannot be built.

    ``init``: the checked class's constructor arguments, read for the twin by :func:`constructor_kwargs`; ``own``
    (``--twin-init``): the twin's own constructor arguments, given over those read so for the rest.
    """
    owner = type(obj).__name__
    try:
        mod = importlib.import_module("autoprop.layers" if kind == "layer" else "autoprop.losses")
    except ImportError:
        return None, f"autoprop.{'layers' if kind == 'layer' else 'losses'} is not importable"
    cls = getattr(mod, owner, None)
    if not isinstance(cls, type):
        return None, f"no class {mod.__name__}.{owner}"
    try:
        varpos = any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        varpos = False
    children = getattr(obj, "layers", None)
    try:
        if own is not None:
            twin = cls(**constructor_kwargs(cls, obj, init, owner, own=own))
        elif varpos and init is None and isinstance(children, Sequence):
            sub = []
            for child in children:
                t, note = build_twin(child, "layer")
                if t is None:
                    raise TwinError(f"Cannot build the twin of {owner}: child {type(child).__name__}: {note}.")
                sub.append(t)
            twin = cls(*sub)
        else:
            twin = cls(**constructor_kwargs(cls, obj, init, owner))
    except TwinError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise TwinError(V.paragraph(
            f"Building the autoprop twin {mod.__name__}.{owner} of {owner} raised", f"{type(exc).__name__}: {exc}.",
            "Give the twin its own constructor arguments (--twin-init; in Python, twin=<the autoprop layer, built>), "
            "or check without it (twin=None).")) from exc
    return (_with_params(obj, twin) if kind == "layer" else twin), ""


class _MappedTwin:
    """An autoprop twin given a layer's parameters under the twin's names (:func:`param_names`: ``weight`` as
    ``W``), a weight of reversed shape transposed (a layer storing ``W`` as (in, out)) and a square one the way
    that reproduces the layer's forward (:meth:`source`, through :func:`_oriented`, as a ``--reference``); its
    gradients come back under the layer's names, transposed back."""

    def __init__(self, twin: Any, names: dict[str, str], transposed: list[str], owner: str):
        self.twin, self.names, self.transposed, self.owner = twin, dict(names), list(transposed), owner
        mapped = [f"{k} as {r}" for k, r in names.items() if k != r]
        self.notes = [f"twin: {owner}'s {', '.join(mapped)} (the twin's names)"] if mapped else []
        self.notes += [_transposed_note(owner, "twin", "autoprop", [self.names[k] for k in transposed], transposed)
                       ] if transposed else []

    def give(self, params, square=False) -> list[str]:
        """The twin's variables set from the layer's ``params`` (:func:`_give_params`): the keys transposed."""
        variables = self.twin.variables
        return _give_params(params, {k: tuple(variables[self.names[k]].shape) for k in params},
                            lambda k, v: variables[self.names[k]].assign(v),
                            lambda k, p: TwinError(f"The twin of {self.owner}: variables[{self.names[k]!r}] has shape "
                                                   f"{tuple(variables[self.names[k]].shape)}, {k} has shape "
                                                   f"{tuple(np.shape(p))}."), square)

    def source(self, call: Call, G, notes: list[str], matches=None, agrees=None):
        """The twin's ``(Y, {key: gradient})`` for ``call``, keyed as the layer's; a square weight given as
        stored or transposed, whichever reproduces the layer's forward (``matches``, ``agrees``: as in
        :func:`reference_source`); ``notes`` gets the square weight's ``twin:`` line unless it was as stored (the
        others are in :attr:`notes`)."""
        def run(square):
            transposed = self.give(call.params, square)
            Y, grads = tape_source(self.twin, call, G)
            out = {k: g for k, g in grads.items() if k in call.keys}
            out.update({k: grads[self.names[k]].T if k in transposed else grads[self.names[k]] for k in call.params})
            return Y, out, transposed

        Y, out, _, note, fits = _oriented(lambda sq: self.give(call.params, sq), run, call, matches, agrees,
                                          "twin", "autoprop")
        notes += [note] if note and fits != [True, False] else []  # as stored, as expected: quiet
        return Y, out

    def __call__(self, *args, **kwargs):
        return self.twin(*args, **kwargs)

    def __getattr__(self, name):  # fix_mask, variables, ... of the autoprop layer
        if name == "twin":
            raise AttributeError(name)
        return getattr(self.twin, name)


def _params_and_variables(obj: Any, twin: Any, owner: str) -> tuple[Mapping, Mapping]:
    """``(obj.params or {}, twin.variables)``; TwinError when the twin has no ``variables`` dict."""
    params, variables = getattr(obj, "params", None) or {}, getattr(twin, "variables", None)
    if not isinstance(variables, Mapping):
        raise TwinError(f"The twin of {owner} has no 'variables' dict; got {type(variables).__name__}.")
    return params, variables


def _with_params(obj: Any, twin: Any) -> Any:
    """``twin`` given ``obj``'s parameters; a :class:`_MappedTwin` named like it when some are named otherwise
    (PyTorch's ``weight``), of reversed shape, or square (then oriented by the forward in the check)."""
    owner = type(obj).__name__
    params, variables = _params_and_variables(obj, twin, owner)
    names = mapped_names(variables, params, owner, f"twin {type(twin).__name__} of {owner}", TwinError)
    transposed = _MappedTwin(twin, names, [], owner).give(params)
    square = [k for k, p in params.items() if np.ndim(p) == 2 and np.shape(p)[0] == np.shape(p)[1]]
    if not transposed and not square and all(k == r for k, r in names.items()):
        return twin
    cls = type(type(twin).__name__, (_MappedTwin,), {"__module__": type(twin).__module__})
    return cls(twin, names, transposed, owner)


def copy_params_to_twin(obj: Any, twin: Any, owner: str) -> list[str]:
    """``twin.variables[k].assign(obj.params[k])`` for every key (an (in, out) weight transposed); returns
    the keys assigned transposed. TwinError when keys or shapes differ, or there is no ``variables`` dict."""
    params, variables = _params_and_variables(obj, twin, owner)
    if set(variables) != set(params):
        raise TwinError(V.paragraph(
            f"The twin {type(twin).__name__} of {owner} has variables {sorted(variables)}",
            f"but {owner}.params has keys {sorted(params)}; they must match."))
    return _give_params(params, {k: v.shape for k, v in variables.items()}, lambda k, v: variables[k].assign(v),
                        lambda k, p: TwinError(f"The twin of {owner}: variables[{k!r}] has shape "
                                               f"{tuple(variables[k].shape)}, params[{k!r}] has shape {tuple(np.shape(p))}."))


def _give_params(params, shapes, assign, mismatch, square=False, ones=False) -> list[str]:
    """``assign(key, float64 value)`` for every parameter, a 2-D one of reversed shape transposed (returns
    those keys), and with ``square`` a square 2-D one too; with ``ones`` one whose shape differs only in size-1 axes
    reshaped (makemore's ``bngain`` (1, H) for a reference's ``gamma`` (H,); tester30k L4); ``mismatch(key, value)``
    is raised for another shape."""
    def reversed_2d(a, b):
        return len(a) == len(b) == 2 and (a[0] != a[1] or square) and a == b[::-1]
    transposed = [k for k, p in params.items() if reversed_2d(tuple(shapes[k]), np.shape(p))]
    for k, p in params.items():
        if k not in transposed and tuple(shapes[k]) != tuple(np.shape(p)) and not (ones and _ones_apart(shapes[k], np.shape(p))):
            raise mismatch(k, p)
        assign(k, np.array(p, dtype=np.float64).T.copy() if k in transposed
               else np.array(p, dtype=np.float64).reshape(tuple(shapes[k])))
    return transposed


#: The hint of a check run without a twin, given only where :func:`has_twin` finds one.
ADD_TWIN = "add --twin to compare with the tape (twin='auto' in Python)"


def has_twin(obj: Any, kind: str = "layer", names: Sequence[str] = ()) -> bool:
    """Whether ``twin="auto"`` has an autoprop class for ``obj``, named as one of ``names`` or ``type(obj)``
    (never for a CS231n function pair)."""
    proto = getattr(obj, "protocol", None)
    if isinstance(proto, Mapping) and proto.get("protocol") == "cs231n":
        return False
    try:
        mod = importlib.import_module("autoprop.layers" if kind == "layer" else "autoprop.losses")
    except ImportError:
        return False
    base = getattr(mod, "Layer" if kind == "layer" else "Loss", None)
    bases = (base, getattr(mod, "Model", None))  # the base classes are no layer's twin
    return isinstance(base, type) and any(
        isinstance(cls := getattr(mod, str(name), None), type) and issubclass(cls, base) and cls not in bases
        for name in (*names, type(obj).__name__))


def resolve_twin(obj, twin, init, kind, name: str | None = None):
    """The twin to use: (object or None, note why none: :data:`ADD_TWIN` where :func:`has_twin`). ``twin=False`` is
    None and ``True`` is "auto" (session 22: False was taken for a twin object, "The twin of Tanh has no 'variables'
    dict; got NoneType")."""
    if isinstance(twin, (bool, np.bool_)):
        twin = "auto" if twin else None
    if twin is None:
        return None, ADD_TWIN if has_twin(obj, kind, [name] if name else []) else ""
    if isinstance(twin, str):
        if twin != "auto":
            raise UsageError(f"twin must be 'auto' (or True), None (or False) or an autoprop object; got {twin!r}.")
        try:
            return build_twin(obj, kind, init)
        except TwinError as exc:  # e.g. a student class that shares a name with an autoprop class
            if init is not None:  # explicit arguments: a failure is an error
                raise
            return None, f"the autoprop class of that name could not be used as twin: {exc}"
    if kind == "layer" and not isinstance(twin, _MappedTwin) and not callable(getattr(twin, "tape_gradients", None)):
        twin = _with_params(obj, twin)
    return twin, ""


def _twin_call(fn, *, owner, what):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        raise TwinError(f"The autoprop twin of {owner} raised {type(exc).__name__} in {what}: {exc}") from exc


def _to_numpy(t) -> np.ndarray:
    return np.array(t.numpy() if hasattr(t, "numpy") else t, dtype=np.float64)


def tape_source(twin, call: Call, G):
    """Tape gradients of ``sum(twin(*inputs) * G)``: (Y, {key: grad})."""
    inputs, keys, training, owner = call.inputs, call.keys, call.training, call.owner
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
            if getattr(Y, "shape", None) is not None and tuple(Y.shape) != np.shape(G):  # not the checked
                return Y, None  # layer's Y: G cannot weigh it
            L = ap.sum(Y * ap.constant(G))
        sources = {k: x for k, x in zip(keys, xs) if x.dtype.kind == "f"}
        sources.update(dict(twin.variables))
        return Y, tape.gradient(L, sources)

    Y, grads = _twin_call(run, owner=owner, what="forward/tape.gradient")
    if grads is None:  # newuser38 F2: this was gradcheck's own L = sum(Y * G) "could not be broadcast together"
        raise TwinError(
            f"The autoprop twin of {owner} gives an output of shape {tuple(Y.shape)}, where "
            f"{owner}'s is {tuple(np.shape(G))}: the twin was built with other arguments than the checked layer (its "
            "padding, stride or sizes). Give it the checked layer's with --twin-init (in Python, twin=<the autoprop "
            "layer, built with them>), or check without --twin.")
    shapes = {k: x.shape for k, x in zip(keys, inputs)}
    return _to_numpy(Y), {k: np.zeros(shapes[k] if k in shapes else tuple(twin.variables[k].shape))
                          if g is None else _to_numpy(g) for k, g in grads.items()}


def twin_source(twin, call: Call, G, notes: list[str], matches=None, agrees=None):
    """:func:`tape_source` of ``twin``; for a :class:`_MappedTwin` (parameters named or stored otherwise), its
    :meth:`_MappedTwin.source`: a square weight oriented by ``matches`` and ``agrees`` (:func:`_oriented`)."""
    if isinstance(twin, _MappedTwin):
        return twin.source(call, G, notes, matches, agrees)
    return tape_source(twin, call, G)


def tape_loss(twin, y_true, y_pred, owner):
    """The twin loss ``L(y_true, y_pred)`` and its tape gradient with respect to ``y_pred``: (L, dL/dy_pred)."""
    import autoprop as ap
    def run():
        yp = ap.constant(y_pred)
        with ap.GradientTape() as tape:
            tape.watch(yp)
            L = twin(y_true, yp)
        return L, tape.gradient(L, yp)

    L, g = _twin_call(run, owner=owner, what="loss/tape.gradient")
    return float(_to_numpy(L)), (np.zeros(y_pred.shape) if g is None else _to_numpy(g))


#: Other names a parameter goes by (PyTorch, Keras, tutorials), by manualprop's name: a ``--reference`` takes
#: a layer's ``weight``/``bias`` as ``W``/``b`` (a norm's as ``gamma``/``beta``) when that maps them one to one.
PARAM_SYNONYMS = {"W": ("weight", "weights", "kernel", "w"), "b": ("bias", "biases"),
                  "gamma": ("weight", "scale", "g", "gain", "bngain"), "beta": ("bias", "shift", "offset", "bnbias")}


def mapped_names(ours, theirs, owner: str, who: str, error: type[Exception]) -> dict[str, str]:
    """:func:`param_names` of the keys of ``ours`` (the ``who``'s: "reference Linear") and ``theirs`` (``owner``'s),
    else ``error`` saying they must match, by name or as PyTorch's names."""
    names = param_names(list(ours), list(theirs))
    if names is None:
        raise error(V.paragraph(
            f"The {who} has parameters {sorted(ours)}",
            f"but {owner} has {sorted(theirs)}; they must match to compare gradients (by name, or as PyTorch's "
            f"names: {', '.join(f'{a} for {r}' for r, al in PARAM_SYNONYMS.items() for a in al[:1])})."))
    return names


def param_names(ours: Sequence[str], theirs: Sequence[str]) -> dict[str, str] | None:
    """``{their key: our key}``: equal keys, else each of ``theirs`` (the checked layer's ``weight``) that is
    exactly one of ``ours`` or one of its :data:`PARAM_SYNONYMS`, one to one; None when they do not map so."""
    if set(ours) == set(theirs):
        return {k: k for k in theirs}
    for rule in (lambda r, k: r == k or k in PARAM_SYNONYMS.get(r, ()),
                 lambda r, k: _role(r) is not None and _role(r) == _role(k)):
        out = {}
        for k in theirs:
            hit = [r for r in ours if rule(r, k.rsplit(".", 1)[-1])]  # a sub-layer's conv2d_stride1.W is its W
            if len(hit) != 1:
                break
            out[k] = hit[0]
        else:
            if len(set(out.values())) == len(out) == len(set(ours)):
                return out
    return None


def _role(name: str) -> str | None:
    """``"weight"`` or ``"bias"``: the role of a parameter by its name (manualprop's ``W``/``b``, a norm's
    ``gamma``/``beta``, their :data:`PARAM_SYNONYMS`, and a name ending in one: CMU MyTorch's ``BW``/``Bb``,
    tester32c M3), None for any other name."""
    for role, keys in (("weight", ("W", "gamma")), ("bias", ("b", "beta"))):
        if name in keys or any(name in PARAM_SYNONYMS[k] for k in keys) or (len(name) == 2 and name[1] == keys[0]):
            return role
    return None


def reference_source(ref, call: Call, G, notes=None, matches=None, agrees=None):
    """Forward and backward of a reference layer given the checked layer's parameter values: (Y, {key: grad}).

    Parameters are paired by name (:func:`param_names`: ``weight`` is ``W``). A weight of reversed shape is given
    transposed; a square one as stored, unless ``matches`` (``matches(Y_ref)``: whether the reference's output is
    the checked layer's) says the reference reproduces the layer's forward only with it transposed (a layer
    computing ``X @ W`` with W (in, out)); when both reproduce it (a symmetric W), transposed only if ``agrees``
    (``agrees({key: reference gradient})``: whether the layer's gradients are those) says so of that way alone.
    ``notes`` gets ``reference: ...`` lines: the names mapped, the orientation and how it was decided.
    """
    inputs, keys, params, training, owner = call.inputs, call.keys, call.params, call.training, call.owner
    takes_inputs(ref, call)
    rparams = getattr(ref, "params", None) or {}
    names = mapped_names(rparams, params, owner, f"reference {type(ref).__name__}", UsageError)
    notes = [] if notes is None else notes
    mapped = [f"{k} as {r}" for k, r in names.items() if k != r]
    if mapped:
        notes.append(f"reference: {owner}'s {', '.join(mapped)} (the reference's names)")

    def give(square):  # the reference's parameters set from the layer's; the keys given transposed
        return _give_params(params, {k: rparams[names[k]].shape for k in params},
                            lambda k, v: rparams[names[k]].__setitem__(Ellipsis, v),
                            lambda k, p: UsageError(f"The reference {type(ref).__name__}: params[{names[k]!r}] has "
                                                    f"shape {V.fmt_shape(rparams[names[k]].shape)}, {owner}'s {k} has "
                                                    f"{V.fmt_shape(p.shape)}."), square, ones=True)
    def run(square):  # the reference's Y and gradients, keyed as the checked layer's; the keys transposed
        transposed = give(square)
        Y = np.asarray(forward_in_mode(ref, inputs, training), dtype=np.float64)
        if Y.shape != np.shape(G):  # newuser35 M2: the reference's backward refused dY (a traceback)
            raise reference_shape_error(owner, type(ref).__name__, call.signature, np.shape(G), Y.shape)
        ret = ref.backward(G.copy())
        rets = [ret] if len(inputs) == 1 else list(ret)
        out = {k: np.asarray(r, dtype=np.float64) for k, r, x in zip(keys, rets, inputs) if x.dtype.kind == "f"}
        out.update({k: np.asarray(ref.grads[names[k]], dtype=np.float64).T if k in transposed  # a (H,) as (1, H):
                    else np.asarray(ref.grads[names[k]], dtype=np.float64).reshape(np.shape(params[k]))  # given so
                    for k in params})
        return Y, out, transposed
    Y, out, transposed, note, _ = _oriented(give, run, call, matches, agrees, "reference", "manualprop")
    if note:
        notes.append(note)
    elif transposed:
        notes.append(_transposed_note(owner, "reference", "manualprop", [names[k] for k in transposed], transposed))
    return Y, out


def takes_inputs(ref: Any, call: Call) -> None:
    """UsageError when the reference's forward cannot take the checked layer's inputs (verify38 F3: a masked attention's
    Q, K, V and integer mask given to manualprop.ScaledDotProductAttention's ``forward(Q, K, V, training=False)``, the
    mask landing in ``training``, raised a TypeError from gradcheck's internals): its inputs by name and the layer's.
    Only for manualprop's layers, whose forward's arguments are its inputs: a function pair's (``function_pair``, a
    grader's reference) also lists its keyword switches (a pool's ``mode``), which the pair's adapter sets."""
    if not type(ref).__module__.startswith("manualprop"):
        return
    try:
        ps = [p for p in inspect.signature(ref.forward).parameters.values() if p.name != "training"]
    except (TypeError, ValueError, AttributeError):
        return
    pos = [p for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    n, least = len(call.inputs), sum(p.default is p.empty for p in pos)
    if least <= n <= len(pos) or any(p.kind == p.VAR_POSITIONAL for p in ps) and n >= least:
        return
    ref_name, theirs = type(ref).__name__, ", ".join(p.name for p in pos)
    raise UsageError(V.paragraph(
        f"--reference manualprop.{ref_name}: its forward takes {len(pos)} input{'s' * (len(pos) != 1)} ({theirs}), "
        f"{call.owner}'s {n} ({', '.join(call.names)}): the reference cannot compute {call.owner}'s output"
        + (f", having no {', '.join(call.names[len(pos):])} argument." if n > len(pos) else "."),
        "Check without --reference (the gradients are checked against central differences all the same), or give "
        "a reference whose forward takes the same inputs."))


def reference_shape_error(owner: str, ref: str, signature: str, got, want) -> GradientShapeError:
    """The wrong result (exit 1) of a forward whose output shape ``got`` is not the reference's ``want`` for the same
    input and settings (newuser35 M2: a Conv2D's output size without its ``+ 1``, (H - k) // s, gave (2, 2, 3, 3)
    where manualprop.Conv2D gives (2, 2, 4, 4), and the reference's backward raised on it): both shapes, the axes
    that differ, and for a 4-d output the output-size formula of a convolution or pooling."""
    axes = [i for i, (a, b) in enumerate(zip(got, want)) if a != b] if len(got) == len(want) else []
    where = f" (axis {', '.join(map(str, axes))})" if axes else ""
    conv = (" For a convolution or pooling each spatial output size is (H + 2*padding - kernel) // stride + 1: "
            "a missing + 1, or a padding or stride left out of the formula, gives another size."
            if len(got) == len(want) == 4 and set(axes) <= {2, 3} else "")
    return GradientShapeError(V.paragraph(
        f"{V.called(owner, signature)} gave Y with shape {V.fmt_shape(got)}; the reference manualprop.{ref} gives "
        f"{V.fmt_shape(want)}{where} for the same input and settings, so forward's output size is wrong (or the "
        f"reference was built with other settings: --reference-init).{conv}"))


def _transposed_note(owner, who, lib, theirs, ours) -> str:
    """The ``reference:`` (``who``:) line of weights of reversed shape given transposed."""
    return (f"{who}: the {who}'s {', '.join(theirs)} {'is' if len(theirs) == 1 else 'are'} the transpose of "
            f"{owner}'s {', '.join(ours)} ((in, out) there, (out, in) in {lib}); its gradients are transposed back")


def _oriented(give, run, call: Call, matches, agrees, who: str, lib: str):
    """``(Y, gradients, transposed keys, note or None, fits)`` of a source given the layer's parameters by
    ``give(square)`` and run by ``run(square)`` (both: square weights transposed too): a square weight as
    stored, unless ``matches(Y)`` says only its transpose reproduces the layer's forward; when both do (a
    symmetric weight), transposed only if ``agrees(gradients)`` says so of that way alone. The note (``who``:
    "reference" or "twin", whose layout is ``lib``'s) says which way and how it was decided; ``fits``: whether the forward matched as stored, transposed."""
    Y, out, transposed = run(False)
    square = [k for k in give(True) if k not in transposed] if matches is not None else []
    if not square:
        give(False)  # as run(False) left them
        return Y, out, transposed, None, None
    other = run(True)
    fits = [matches(Y), matches(other[0])]
    # the forward cannot tell (a symmetric W): the way whose gradients agree with the layer's, if one does
    sure = fits != [True, True] or agrees is None or [agrees({k: r[1][k] for k in square})
                                                      for r in ((Y, out), other)] != [False, True]
    Y, out, transposed = other if fits == [False, True] or not sure else run(False)
    return Y, out, transposed, _orientation_note(call.owner, square, fits, sure, who, lib), fits


def _orientation_note(owner, square, fits, sure=True, who="reference", lib="manualprop"):
    """The ``reference:`` (``who``:) line saying how the square weights ``square`` were given, by ``fits``: whether
    the reference (twin) reproduced ``owner``'s forward with them as stored, and transposed; ``sure`` False: both did, and
    only the transposed one's gradients agree with the layer's."""
    w = ", ".join(square)
    one = len(square) == 1
    if not sure:
        return (f"{who}: {w} given transposed: the {who} built either way matches {owner}'s forward ({w} "
                f"{'is' if one else 'are'} symmetric?), and only with {w}.T do its gradients of {w} agree with "
                f"{owner}'s; the forward cannot tell the orientation, so d{w} is checked by central differences")
    if fits == [False, True]:
        return (f"{who}: {w} given transposed: {owner}'s forward matches the {who}'s built with {w}.T, "
                f"not with {w} as stored ({owner} computes X @ {w}: (in, out), {lib} (out, in)); "
                "its gradients are transposed back")
    if fits == [True, False]:
        return (f"{who}: {w} given as stored: {owner}'s forward matches the {who}'s built with {w} as "
                f"stored ((out, in), as {lib}), not transposed")
    if fits == [True, True]:
        return (f"{who}: {w} given as stored: the {who} built either way matches {owner}'s forward "
                f"({w} {'is' if one else 'are'} symmetric, or the forward does not depend on the orientation), "
                "so the orientation is not known from the forward")
    return (f"{who}: {w} given as stored: the {who} built with {w} as stored and with {w}.T both "
            f"differ from {owner}'s forward, so the forwards differ whichever way {w} {'is' if one else 'are'} "
            "stored (see the forward row)")
