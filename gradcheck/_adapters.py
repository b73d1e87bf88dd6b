"""Students' code as they write it, presented as the manualprop layer protocol.

Standalone (standard library and numpy only): gradcheck imports it, and the sandbox child runs its
text as a module; one implementation for both. Every adapter offers ``params``/``grads`` dicts,
``forward(*X, training=None) -> Y`` and ``backward(dY) -> dX`` (a tuple for several inputs).
Protocols, in the order :func:`find` and :func:`adapt` try them: (1) **manualprop** dicts;
(2) **attribute style**: float array attributes used by forward (``self.W``) with a gradient
attribute after backward (:data:`GRAD_NAMES`; without one, "seed style" weights with no gradient
to check; arrays in dict, list and tuple attributes too, ``weights['W']`` with ``gradients['W']``,
``Ws[1]`` with ``dWs[1]``, a ``params`` list with ``grads``: :func:`_arrays`, :class:`_Items`; ``_W`` with
``_dW``; arrays of plain objects, ``weight.data`` with ``weight.grad``, as a sub-layer's: :func:`sublayers`; a gradient under another name is
found by structure, :func:`_by_structure`, ``g['W']`` for ``p['W']``, or named ambiguous; an array without a
gradient is a buffer when it is private or forward writes it, :func:`_split_buffers`); (3) **CS231n pair** ``NAME_forward(x, w, ..., **init) -> (out, cache)``,
``NAME_backward(dout, cache) -> (dx, dw, ...)`` (also ``_naive``/``_fast``), every array argument
an input; for a loss, a **CS231n loss function** ``NAME(x, y) -> (loss, dx)``. "Used by forward"
is measured: each float array attribute is changed for one forward (:func:`_used_arrays`); buffers
forward overwrites (``out=self._Y``) and caches do not change ``Y``. Every returned array is a copy.
A layer with several outputs (``(next_h, next_c, cache)``; a class's ``(h, c)``), whose backward takes
one upstream gradient each, is presented as one output by :class:`Outputs`, for either protocol. A class
whose ``forward`` returns ``(out, cache)`` and whose ``backward`` takes ``(dout, cache)`` is read through the
pair's adapter (:func:`class_cache`); ``NAME_backward_alt`` pairs with ``NAME_forward`` (:func:`backward_variants`).
One whose ``backward`` takes forward's inputs before ``dY`` (Berkeley CS189's ``backward(Z, dY)``) is given them back
(:func:`class_input_backward`).
"""

import ast
import collections.abc
import contextlib
import copy
import difflib
import enum
import functools
import hashlib
import inspect
import itertools
import json
import os
import random
import re
import sys
import types
import weakref

import numpy as np

if __package__:  # in gradcheck; the sandbox child runs _kernel.py's text in this namespace before this module's
    from . import _pyast, _switch_reach  # the child: built from their texts (gradcheck/sandbox.py)
    from ._kernel import close, difference_quotient, kernel, probe_rng, relative_error, sums_to_one

PROTOCOLS = ("manualprop protocol: params/grads dicts, forward(X, training=False), backward(dY) -> dX",
             "attribute style: self.W used in forward, self.dW (or grad_W, W_grad) set by backward(dY) -> dX",
             "CS231n function pair: NAME_forward(x, w, ...) -> (out, cache), NAME_backward(dout, cache) "
             "-> (dx, dw, ...)")
GRAD_NAMES = ("d{}", "d_{}", "grad_{}", "grad{}", "{}_grad", "g{}",  # g{}: gA for self.A (tester19s GLU)
              "nabla_{}",  # Nielsen's nabla_W, nabla_b (tester22s)
              "dLd{}")  # CMU 11-785 MyTorch's dLdW, dLdBW (tester26s H1: dLdg of shape (C,) for g (1, C) passed)
SUFFIXES = ("", "_naive", "_fast")
#: How many arrays the probe perturbs one at a time (one forward each) to learn which of them forward
#: reads; arrays beyond it are tested in groups (:func:`_used_beyond`), those it cannot tell taken as read.
MAX_PROBED = 256
#: How many layers, containers and other objects one walk (:func:`sublayers`, :func:`generators`, the arrays in
#: containers) visits at most: walks go to any depth, each object once, so this bounds them, not a depth.
MAX_WALKED = MAX_PROBED * 16
#: Boolean names students give forward's training switch, True in training mode (``train_flg``: Deep
#: Learning from Scratch; ``training`` itself is the manualprop protocol's).
TRAIN_FLAGS = ("train", "is_training", "training_mode", "train_flg", "train_flag", "train_mode", "is_train")
#: Boolean switches that are True in eval mode (flax's ``deterministic`` and ``use_running_average``).
EVAL_FLAGS = ("deterministic", "eval", "eval_mode", "is_eval", "inference", "is_inference", "test", "is_test",
              "test_mode", "use_running_average")
#: String switches (CS231n's ``mode``, Caffe's ``phase``): their values are read from forward's source.
MODE_STRINGS = ("mode", "phase")
MODE_KEYWORDS = TRAIN_FLAGS + EVAL_FLAGS + MODE_STRINGS
#: String switch arguments that mean other things too (an RNN's ``state``, a ``split`` count): a switch only when
#: forward's source compares them with a mode word (Lightning's ``stage="fit"``/``"validate"``, ``split="val"``).
WORDED_MODE_STRINGS = ("stage", "split", "state")
#: Values of a string switch that mean eval mode; any other value compared with it means training.
EVAL_WORDS = ("eval", "test", "testing", "evaluation", "evaluate", "inference", "infer", "predict", "val",
              "valid", "validation", "deploy")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
#: The kinds of parameter a keyword argument can fill.
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)

#: How the name of a switch outside forward's arguments begins (an attribute or item of the object, a module global,
#: an environment variable): it is set for the call, not passed (:func:`_set_switches`).
SET_SWITCHES = ("self.", "global ", "env ")
#: The value of a training switch that is not there (:func:`_switch_value`).
_MISSING_SWITCH = object()

#: Called with "forward" / "backward" before each probe call of the student's code (the sandbox
#: child sets it, to name the step that hangs or exits); None: nothing is reported.
on_step = None


class AdapterError(TypeError):
    """The object follows none of :data:`PROTOCOLS`, or follows one ambiguously."""


class UnreadableError(AdapterError):
    """The student's forward returned something gradcheck cannot read as its protocol's result: a usage
    error (exit 2), not a failure of the code."""


class NotPlainStepError(AdapterError):
    """A backward that steps its weights itself with an optimizer (Adam, momentum): not plain gradient descent,
    so the weights' gradients cannot be read from the step (:func:`_sgd_probe`); dX can still be checked."""


class InitError(AdapterError):
    """A key of ``init`` (``--init``) that the constructor or forward does not take, or names an array input."""


class BackpropResultError(ValueError):
    """Nielsen's ``backprop(x, y)`` returned its gradient lists in the wrong order, or an array of the wrong shape
    (:func:`_nabla_checked`): a wrong result, which :meth:`gradcheck.sandbox.Sandbox._student_error` reads by this
    name (raised here, not in the submission: no frame of it) as a GradientShapeError (exit 1, nielsen35)."""


class BackpropInputWritten(BackpropResultError):
    """Nielsen's ``backprop(x, y)`` wrote into its ``x`` or ``y`` (its message: ``"Network.backprop(x, y) wrote into
    x"``), read as
    :func:`gradcheck.sources.in_place`'s InputModifiedError (exit 1, nielsen35 F11)."""


def expected():
    """The three accepted protocols, as one sentence."""
    return "Expected one of: " + "; ".join(f"({i}) {p}" for i, p in enumerate(PROTOCOLS, 1)) + "."


def _copy(v):
    return np.array(v, copy=True) if isinstance(v, np.ndarray) else v


def _step(name):
    if on_step is not None:
        on_step(name)


def _params(fn):
    """``inspect.signature(fn).parameters`` (of the function a pass-through decorator wraps: :func:`see_through`),
    or None when it cannot be read."""
    try:
        return inspect.signature(see_through(fn)).parameters
    except (TypeError, ValueError):
        return None


def see_through(fn):
    """The function a decorator's ``wrap(*args, **kwargs)`` passes its arguments to unchanged (``return func(*args,
    **kwargs)``, without functools.wraps: RECHE23/NumPy-Neural-Network's ``@trace()`` on ``Module.forward``), bound
    as ``fn`` is; ``fn`` itself otherwise. Its signature is what the call accepts (corpus39 H3: a ``**kwargs`` read as
    a training switch, then "forward must accept a training keyword"). A wrapper that reads its ``*args`` or
    ``**kwargs`` (other than passing both on, whole) or holds other functions is kept as it is."""
    func = getattr(fn, "__func__", fn)
    code, cells = getattr(func, "__code__", None), getattr(func, "__closure__", None) or ()
    if code is None or code.co_argcount or code.co_kwonlyargcount or code.co_flags & 12 != 12:  # *a, **k alone
        return fn
    inner = [c for c in cells if isinstance(getattr(c, "cell_contents", None), types.FunctionType)
             and c.cell_contents is not func]
    tree = _switch_reach.source_tree(func)
    if len(inner) != 1 or tree is None:
        return fn
    star, kw = code.co_varnames[0], code.co_varnames[1]
    passed = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and len(n.args) == 1 and isinstance(
        n.args[0], ast.Starred) and isinstance(n.args[0].value, ast.Name) and n.args[0].value.id == star and len(
        n.keywords) == 1 and n.keywords[0].arg is None and isinstance(n.keywords[0].value, ast.Name) and n.keywords[
        0].value.id == kw]
    if len(passed) != 1 or any(_changes_kwargs(n, star, kw) for n in ast.walk(tree)):
        return fn
    inner = inner[0].cell_contents
    return types.MethodType(inner, fn.__self__) if getattr(fn, "__self__", None) is not None else inner


def _changes_kwargs(node, star, kw):
    """Whether ``node`` of a wrapper's source may change or consume what it passes on (:func:`see_through`): its
    ``*args``/``**kwargs`` names rebound or deleted, ``kwargs[...]``, ``kwargs.pop``/``get``/``update``; reading them
    (``kwargs.items()``, ``zip(names, args)``, a trace's log) does not."""
    if isinstance(node, ast.Name) and node.id in (star, kw):
        return not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == kw:
        return True
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == kw and (
        node.attr not in ("items", "keys", "values"))


def _positional(fn, required=False):
    """``fn``'s positional parameters (:class:`inspect.Parameter`, in order; ``required``: those without a default),
    [] when its signature cannot be read."""
    return [p for p in (_params(fn) or {}).values() if p.kind in _POSITIONAL and (p.default is p.empty or not required)]


def _written_as(fn, name=None):
    """``fn``'s name (or ``name``) and its signature as written (``affine_forward(x, w, b)``); the name alone when
    the signature cannot be read."""
    name = fn.__name__ if name is None else name
    try:
        return f"{name}{inspect.signature(fn)}"
    except (TypeError, ValueError):
        return name


def _takes_training(fn):
    """forward takes ``training``: an argument of that name (not given a str/int default: an unread
    switch, :func:`unread_flag`), or ``**kwargs`` whose source reads no other switch (:func:`_kwargs_keys`)."""
    ps = _params(fn)
    return ps is None or any(p.name == "training" and (p.default is None or p.default is p.empty or isinstance(
        p.default, bool)) or p.kind == p.VAR_KEYWORD and not _kwargs_keys(fn) for p in ps.values())


_source = _switch_reach.source_tree  # the ast of a function's source, or None: the one cached parser


def _kwargs_keys(fn):
    """``{key: default}`` of the switches (:data:`MODE_KEYWORDS`, not ``training``) forward reads from its
    ``**kwargs``: ``kw.get("train_flg", False)`` (default False), ``kw["mode"]`` (no default), and any key read with
    a boolean default (``kw.get("use_relu", False)``: a flag checked at each value, never the training switch;
    tester15b H4). Read once per function (:func:`_takes_training` asks at each forward)."""
    func = getattr(fn, "__func__", fn)
    try:
        return dict(_kwargs_keys_of(func))
    except TypeError:  # an unhashable callable: read each time
        return dict(_kwargs_keys_of.__wrapped__(func))


@functools.lru_cache(maxsize=256)
def _kwargs_keys_of(fn):
    kw = next((p.name for p in (_params(fn) or {}).values() if p.kind == p.VAR_KEYWORD), None)
    tree = _source(fn) if kw else None
    keys = {}
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Call) and isinstance(f := node.func, ast.Attribute) and f.attr == "get" \
                and isinstance(f.value, ast.Name) and f.value.id == kw and node.args:
            key, default = node.args[0], (node.args[1:2] or [None])[0]
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == kw:
            key, default = node.slice, None
        else:
            continue
        flag = isinstance(default, ast.Constant) and isinstance(default.value, bool) and key.value != "training"
        if isinstance(key, ast.Constant) and (key.value in MODE_KEYWORDS or flag) and key.value not in keys:
            keys[key.value] = default.value if isinstance(default, ast.Constant) else inspect.Parameter.empty
    return tuple(keys.items())


#: forward's booleans that keep what backward needs (numpy-ml's ``retain_derived=True``; False: "the layer will not
#: be expected to backprop through this input", so backward has nothing to work on): no switch, only True is passed
RETAIN_FLAGS = ("retain_derived",)


def _switch_params(fn):
    """forward's parameters by name, with the switches read from ``**kwargs`` as keyword-only ones; a
    :data:`RETAIN_FLAGS` boolean whose default is True is left out (its default, the value backward needs, is run)."""
    ps = dict(_params(fn) or {})
    for k, d in _kwargs_keys(fn).items():
        ps.setdefault(k, inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=d))
    return {k: p for k, p in ps.items() if not (k in RETAIN_FLAGS and p.default is True)}


def _switch_attr(fn):
    """The training switch forward reads outside its arguments, as :func:`mode_keyword` names it: an attribute
    ``self.<name>`` (PyTorch's ``self.training``, ``self.is_train`` set by a training loop): ``training`` or a name of
    :data:`MODE_KEYWORDS` whose value on the object is a bool or str, then a bool named as a switch
    (:func:`_flag_kind`: ``self.in_train``); an item ``self.bn_param['mode']`` (CS231n's) of a dict attribute;
    ``self.training`` when the class has ``train()``/``eval()`` methods (nn.Module's); a module's bool named as a
    switch, ``global TRAIN``; else None."""
    obj, tree = getattr(fn, "__self__", None), _source(fn)
    if obj is None or tree is None:
        return "self.training" if obj is not None and _mode_methods(obj) else None
    me = next(iter(inspect.signature(fn.__func__).parameters), "self") if hasattr(fn, "__func__") else "self"
    mine = [n for n in ast.walk(tree) if _switch_reach.self_attr(n, me)]
    # an attribute forward assigns itself (self.mode = self.dropout_param['mode'], kept for backward) is no switch
    written = {n.attr for n in mine if isinstance(n.ctx, ast.Store)}
    # a read-only property gradcheck cannot set (numpy-ml Dropout's trainable, tester31m M1) is no switch
    read = [n.attr for n in mine if n.attr not in written and _switch_reach.writable(obj, n.attr)]
    for name in [n for n in ("training", *MODE_KEYWORDS) if n in read]:
        if isinstance(getattr(obj, name, None), (bool, str)):
            return "self." + name
    items = [f"{n.value.attr}[{n.slice.value!r}]" for n in ast.walk(tree) if isinstance(n, ast.Subscript)
             and isinstance(n.value, ast.Attribute) and isinstance(n.value.value, ast.Name) and n.value.value.id == me
             and isinstance(n.slice, ast.Constant) and n.slice.value in ("training", *MODE_KEYWORDS)]
    for name in items:  # self.bn_param['mode']
        if isinstance(_switch_value(fn, "self." + name), (bool, str)):
            return "self." + name
    for name in read:  # self.in_train
        if _flag_kind(name) and isinstance(getattr(obj, name, None), bool):
            return "self." + name
    if _mode_methods(obj):
        return "self.training"
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return next((f"global {n}" for n in names if _flag_kind(n) and isinstance(_globals(fn).get(n), bool)), None)


def _flag_kind(name):
    """``"train"`` for a bool named as a training switch (``in_train``, ``TRAINING``), ``"eval"`` for one True in
    eval mode (``is_test``, ``EVAL``, ``is_predicting``: :func:`gradcheck._switch_reach.is_eval_name`), None for any
    other name."""
    return "train" if "train" in name.lower() else "eval" if _switch_reach.is_eval_name(name) else None


#: How :mod:`gradcheck._switch_reach` tells a training switch's names and values (this module's lists and rule).
_NAMING = (TRAIN_FLAGS, EVAL_FLAGS, EVAL_WORDS, _flag_kind)


def _switch_value(fn, name, value=_MISSING_SWITCH):
    """The value of an attribute, item or module switch (``self.in_train``, ``self.bn_param['mode']``, a sub-layer's
    ``self.bn.training``, ``global TRAIN``) of forward ``fn``, or set it to ``value``; ``_MISSING_SWITCH`` when it has
    none. Several names joined by ``", "`` (the sub-layers' switches, :func:`_sublayer_switches`): a tuple of their
    values, set from a tuple or each to one value."""
    names = name.split(", ")
    if len(names) > 1:
        if value is _MISSING_SWITCH:
            got = tuple(_switch_value(fn, n) for n in names)
            return _MISSING_SWITCH if _MISSING_SWITCH in got else got
        for n, v in zip(names, value if isinstance(value, tuple) else [value] * len(names)):
            _switch_value(fn, n, v)
        return value
    if name.startswith("env ") or name.startswith("global ") and not name[7:].isidentifier():  # CONFIG['train']
        return _switch_reach.switch_value(_globals(fn), name, value, _MISSING_SWITCH)
    if name.startswith("global "):
        space, key = _globals(fn), name[7:]
        if value is _MISSING_SWITCH:
            return space.get(key, _MISSING_SWITCH)
        space[key] = value
        return value
    try:
        holder, key = _reached(fn.__self__, name[5:])
    except (AttributeError, KeyError, IndexError, TypeError, ValueError, SyntaxError):
        return _MISSING_SWITCH
    if value is _MISSING_SWITCH:
        return _switch_value_of(holder, key)
    if isinstance(key, str) and not isinstance(holder, (dict, list)):
        _switch_reach.set_attribute(holder, key, value)  # a read-only property: what its getter reads (Y10)
    else:
        holder[key] = value
    return value


def _switch_value_of(holder, key):
    try:
        return getattr(holder, key) if isinstance(key, str) and not isinstance(holder, (dict, list)) else holder[key]
    except (AttributeError, KeyError, IndexError, TypeError):
        return _MISSING_SWITCH


def _reached(obj, expr):
    """``(holder, key)`` of a path below ``obj`` written as Python (``bn.training``, ``layers[1].training``,
    ``bn_param['mode']``): the object or container holding the last step, and its attribute name or item key."""
    node, steps = _switch_reach.path_steps(expr)
    if not isinstance(node, ast.Name) or any(isinstance(k, tuple) for _, k in steps):  # a[1, 0]: not a switch's
        raise ValueError(expr)
    o = _switch_reach.follow(obj, [(".", node.id), *steps[:-1]])
    return (o, steps[-1][1]) if steps else (obj, node.id)


def _sublayer_switches(fn):
    """``self.bn.training`` (``", "``-joined when several) of the boolean training switches forward's sub-layers read
    as attributes (:func:`_switch_attr`), for a layer that has none of its own: set on each, as ``nn.Module.train()``
    sets its children's; None when no sub-layer has one."""
    obj = getattr(fn, "__self__", None)
    found = []
    for path, v in walk(obj) if obj is not None else ():
        sub = _switch_attr(v.forward) if _is_layer(v) else None
        if sub is None or not sub.startswith("self.") or len(found) >= 16:
            continue
        name = f"self.{_label(path)}.{sub[5:]}"
        kw = _attr_keyword(v.forward, sub)  # None: a string no value of which gradcheck can name (corpus40 H1)
        if kw is not None and kw[1:] == (False, True) and isinstance(_switch_value(fn, name), bool):
            found.append(name)
    return ", ".join(found) or None


def _mode_methods(obj):
    """True when ``obj`` has nn.Module-style ``train()`` and ``eval()`` methods taking no required argument."""
    ms = [getattr(obj, m, None) for m in ("train", "eval")]  # train(mode=True), eval(): no training loop
    return all(callable(m) and (ps := _params(m)) is not None and len(ps) <= n and not any(
        p.default is p.empty and p.kind in _POSITIONAL for p in ps.values()) for m, n in zip(ms, (1, 0)))


def mode_keyword(fn):
    """``(name, eval value, training value)`` of forward's training switch other than ``training``, or None.

    The booleans of :data:`TRAIN_FLAGS` take True for training, those of :data:`EVAL_FLAGS` True for eval
    (``deterministic=True``); a string switch (:data:`MODE_STRINGS`) takes the layer's own words: the
    strings forward's source compares it with and its default (:func:`mode_words`; one of
    :data:`WORDED_MODE_STRINGS` only when a mode word is among them), the first word of
    :data:`EVAL_WORDS` for eval (else ``"eval"`` if that is the default, else ``"test"``, CS231n's), the
    first other word for training (else ``"train"``).
    """
    if isinstance(getattr(fn, "__self__", None), FunctionPair):  # a CS231n pair: its mode lives in --init
        return None
    if _takes_training(fn):  # and the switches it reaches, set with it (Y14: a sub-layer's own self.training)
        return _reached_keyword(fn, ("training", False, True))
    ps = _switch_params(fn)
    for name in MODE_KEYWORDS + WORDED_MODE_STRINGS:
        p = ps.get(name)
        if p is None or p.kind not in _NAMED:
            continue
        if name in TRAIN_FLAGS + EVAL_FLAGS:
            return (name, False, True) if name in TRAIN_FLAGS else (name, True, False)
        if name in MODE_STRINGS and (members := _enum_modes(p.default)) is not None:  # mode=Mode.EVAL
            return (name, *members)
        if isinstance(p.default, str) or p.default is p.empty:
            words = mode_words(fn, name) + ([p.default] if isinstance(p.default, str) else [])
            if name in WORDED_MODE_STRINGS and not any(map(_switch_reach.is_mode_word, words)):
                continue
            evals = [w for w in words if _switch_reach.is_eval_word(w, EVAL_WORDS)]
            trains = sorted((w for w in words if w not in evals),
                            key=lambda w: not w.lower().startswith("train"))
            return (name, evals[0] if evals else "eval" if p.default == "eval" else "test",
                    trains[0] if trains else "train")
    if (flag := unread_flag(fn, ps)) is not None and isinstance(flag[1], bool):  # forward(X, noisy=False)
        return flag[0], flag[1], not flag[1]  # a plain switch (:func:`_plain`): each value checked, labelled with it
    if flag is None and (sw := string_argument(fn, ps)) is not None:  # kind='lin' or 'sq' (more: switch_variants)
        return sw[0], sw[1], sw[2][0]
    if flag is None and (attr := _switch_attr(fn)) is not None \
            and (got := _attr_keyword(fn, attr)) is not None:
        return got
    if unread_flag(fn, ps) is None and (subs := _sublayer_switches(fn)) is not None:  # self.bn.training (T12)
        return subs, False, True
    return _reached_keyword(fn) if unread_flag(fn, ps) is None else None


def _reached_keyword(fn, lead=None):
    """:func:`mode_keyword` of the switches forward reaches in its sub-layers, the functions it calls, its module,
    other modules and the environment (:func:`gradcheck._switch_reach.reached_switches`: ``self.drop.mode``,
    ``global CONFIG['train']``, ``env TRAINING``), after ``lead`` (forward's ``training`` argument): their names
    joined by ``", "``, a tuple of their eval values, one of their training values; ``lead`` alone (None) when
    forward reaches none."""
    try:
        found = _switch_reach.reached_switches(fn, _NAMING)
    except (RecursionError, ValueError, TypeError):
        found = []
    if lead:  # beside forward's own training argument only its sub-layers' training switches (Y14): the object's
        # own attributes, globals and the environment stay as the caller made them (a grader's reference built with
        # mode="train" whose forward(x, training=False) leaves its argument unread); a plain switch (self.double,
        # self.drop.noisy) is configuration, never the mode: its other values are variants (:func:`_plain_attributes`)
        found = [f for f in found if re.match(r"self\.\w+\.\w", f[0]) and not _plain(f)]
    found = [lead, *found] if found and lead else found
    if not found:
        return None
    return found[0] if len(found) == 1 else (", ".join(n for n, *_ in found), tuple(f[1] for f in found),
                                             tuple(f[2] for f in found))


def string_argument(fn, ps=None, beside=()):
    """``(name, default, [other values])`` of forward's first argument with a string default that names no mode
    (``forward(X, kind="relu")``, not :data:`MODE_KEYWORDS`' nor :data:`WORDED_MODE_STRINGS`') and that forward's
    source compares with other strings, which with the default select no mode (:func:`_mode_pair`: ``kind ==
    "tanh"``, ``padding == "same"``), or None.
    One other value: a plain switch, each value checked (:func:`mode_keyword`); more: each checked too
    (:func:`switch_variants`). ``beside``: the names of a boolean switch it is checked beside (``training``):
    then a name of :data:`MODE_KEYWORDS` is read too (``forward(X, training=True, mode='fast')``: its 'fast' and
    'slow' select no mode, and the boolean is the mode)."""
    skip = ("training", *beside) if beside else (*MODE_KEYWORDS, *WORDED_MODE_STRINGS, "training")
    for p in (ps or _switch_params(fn)).values():
        if p.kind not in _NAMED or not isinstance(p.default, str) \
                or p.name in skip:
            continue
        others = [w for w in dict.fromkeys(mode_words(fn, p.name)) if isinstance(w, str) and w != p.default]
        if others and not _mode_pair([p.default, *others]):
            return p.name, p.default, others[:8]
    return None


def _mode_pair(words) -> bool:
    """Whether the values of a string argument (not one of :data:`MODE_KEYWORDS`) select a training mode: an eval
    word among them (:data:`EVAL_WORDS`: ``"test"``, ``"valid"``) and a training word (``"train"``, ``"fit"``), as
    ``"train"``/``"test"``; ``padding="valid"``/``"same"`` selects none (tester15b H2: read as a mode, its "same"
    branch never ran)."""
    evals = [w for w in words if _switch_reach.is_eval_word(w, EVAL_WORDS)]
    return bool(evals) and any(_switch_reach.is_mode_word(w) for w in words if w not in evals)


def _plain(switch) -> bool:
    """Whether ``(name, eval value, training value)`` is a switch that selects no training mode (``self.noisy``,
    ``self.kind`` 'lin'/'sq': :func:`gradcheck._switch_reach.is_plain`): each of its values is checked, and labelled
    with it (F1). A boolean argument of forward that names no training switch (``forward(X, noisy=False)``,
    :func:`unread_flag`'s) is one too: its default and the other value are both checked."""
    name, off = switch[0], switch[1]
    if isinstance(off, (bool, str)) and "," not in name and not name.startswith(SET_SWITCHES):
        if isinstance(off, str):  # forward(X, kind='lin'), compared with 'sq' (:func:`string_argument`)
            return not _mode_pair(switch[1:])
        return name not in TRAIN_FLAGS + EVAL_FLAGS + ("training",)
    return _switch_reach.is_plain(*switch, _NAMING)


def _unset_switches(fn, mk) -> list[str]:
    """``["self.kind = 'relu' (other values 'tanh', 'sigmoid' not run)", ...]``: the switches forward reaches whose
    values gradcheck cannot each set (:func:`gradcheck._switch_reach.unset_switches`; ``mk``: :func:`mode_keyword`'s,
    those it sets): a check passes only the branch their value selects (F1: NOT CHECKED, never PASS)."""
    mk = _lead(fn, mk)
    try:
        found = _switch_reach.unset_switches(fn, _NAMING, skip=tuple(mk[0].split(", ")) if mk else ())
    except (RecursionError, ValueError, TypeError):
        return []
    sets = _beside(fn, mk)  # checked in every combination with mk (switch_variants), up to the cap
    over = bool(sets) and _n_checks(sets) > 2 ** MAX_COMBINED_FLAGS
    combined = set() if over or "," in (mk or ("",))[0] else {n for n, _, _ in sets}
    found = [f for f in found if f[0] not in combined]  # a plain self.double beside training: a variant (checked)
    if (sw := string_argument(fn)) is not None and not (mk and mk[0] == sw[0]) and sw[0] not in combined:
        found = [(sw[0], sw[1], sw[2]), *found]  # forward(X, kind='relu'), 'tanh', 'sigmoid': an argument
    if over or "," in (mk or ("",))[0]:  # past the cap, or beside several switches: not run
        found += [(n, d, ws) for n, d, ws in sets if n not in {f[0] for f in found}]
    found += [(n, d, []) for n, d in _dispatched_strings(fn, mk) if n not in {f[0] for f in found}]
    capped = {sets[0][0]} if over else set()  # the cap said once
    return [f"{n} = {_value_text(v)}" + (f" (other value{'s' * (len(ws) > 1)} {', '.join(map(_value_text, ws))} "
                                         "not run" + (f": {_cap_text(mk, sets)}" if n in capped else "") + ")"
                                         if ws else " (its other values: none found in the class's source)")
            for n, v, ws in found]


def config_toggle_texts(fn) -> list[str]:
    """``["self.has_bias|True|bias:1|[false]", ...]``: each attribute forward branches on that gradcheck leaves as the
    layer was built (:func:`gradcheck._switch_reach.config_toggles`: ``self.has_bias``, a ``self.use_dropout`` that
    ``__init__`` sets from its argument, a string ``self.padding`` so set), its value (:func:`_value_text`: ``'valid'``),
    the ``__init__`` arguments it is set from (``1``: the argument itself), and its other values (JSON); the header
    WARNS of each (:func:`gradcheck.check_command.config_toggle_lines`)."""
    try:
        found = _switch_reach.config_toggles(fn, _NAMING)
    except (RecursionError, ValueError, TypeError):
        return []
    return [f"{name}|{_value_text(value)}|" + ",".join(f"{a}:{int(d)}" for a, d in args) + "|"
            + json.dumps([v for v in others if isinstance(v, (bool, str, int, float))]) for name, value, args, others
                          in found]


def _cap_text(mk, sets) -> str:
    """Why the combinations of ``mk`` and the switches ``sets`` beside it are not run: past the cap."""
    if all(isinstance(d, bool) for _, d, _ in sets):
        return (f"gradcheck checks every combination of at most {MAX_COMBINED_FLAGS} booleans "
                f"({2 ** MAX_COMBINED_FLAGS} checks), and forward reads {len(sets) + 1}")
    return (f"gradcheck checks every combination of forward's switches up to {2 ** MAX_COMBINED_FLAGS} checks, and "
            f"{mk[0]} with {', '.join(n for n, _, _ in sets)} make {_n_checks(sets)}")


def _beside(fn, mk) -> list[tuple[str, object, list]]:
    """``[(name, default, [other values])]`` of forward's switch arguments checked in every combination with the
    boolean ``mk`` (:func:`mode_keyword`'s: ``training``, a plain ``noisy``): the booleans it reads
    (:func:`_more_flags`: ``use_dropout``), then a string argument it compares with other strings
    (:func:`string_argument`: ``mode='fast'`` or ``'slow'``). ``[]`` when ``mk`` is no boolean."""
    if not (mk and _bool_lead(mk)):
        return []
    out: list[tuple[str, object, list]] = [(n, d, [not d]) for n, d in _more_flags(fn, mk)]
    if (_plain(mk) or _arg_switch(mk)) and (sw := string_argument(fn, beside=tuple(mk[0].split(", ")))) is not None:
        out.append((sw[0], sw[1], list(sw[2])))
    return out + (_plain_attributes(fn) if mk[0] == "training" or mk[0].startswith("training, ") else [])


def _plain_attributes(fn) -> list[tuple[str, object, list]]:
    """``[(name, value as built, [other value])]`` of the plain switches (:func:`_plain`: ``self.double``,
    ``self.kind`` 'lin'/'sq') forward ``fn`` reads beside its ``training`` argument: configuration the layer was
    built with, checked as built in each mode and each other value as a variant of its own (:func:`switch_variants`,
    labelled ``self.double=True``), never set for the mode (redteam39: ``if self.double and training`` was checked
    only with ``self.double = True`` in training, and the grader changed the staff's layer so)."""
    try:
        found = _switch_reach.reached_switches(fn, _NAMING)
    except (RecursionError, ValueError, TypeError):
        return []
    out = []
    for name, off, on in found:
        value = _switch_value(fn, name) if _plain((name, off, on)) else _MISSING_SWITCH
        if isinstance(value, (bool, str)) and value in (off, on):
            out.append((name, value, [on if value == off else off]))
    return out


def _n_checks(sets) -> int:
    """How many checks every combination of a boolean switch and the switches ``sets`` beside it takes."""
    return 2 * int(np.prod([1 + len(ws) for _, _, ws in sets]))


def _lead(fn, mk):
    """``mk`` (:func:`mode_keyword`'s), or ``("training", False, True)`` for a forward taking ``training`` that
    reaches no other switch (:func:`mode_keyword` leaves that one to :func:`_training_kw`): the switch the others
    beside it are combined with."""
    return mk if mk or not _takes_training(fn) else ("training", False, True)


def _bool_lead(mk) -> bool:
    """Whether ``mk`` is a boolean switch, or forward's ``training`` with the switches it reaches (``"training,
    self.drop.mode"``: the booleans beside them are then named as not run, :func:`_unset_switches`)."""
    return isinstance(mk[1], bool) or (isinstance(mk[1], tuple) and mk[0].startswith("training, "))


def _arg_switch(mk) -> bool:
    """Whether ``mk`` is a boolean argument of forward (``training``, ``train_flg``), not an attribute's switch."""
    return bool(mk) and isinstance(mk[1], bool) and not mk[0].startswith(SET_SWITCHES)


#: How many boolean arguments of forward are checked in every combination of their values (3: 8 combinations,
#: :func:`switch_variants`); beyond it the others are named as not run (NOT CHECKED, naming the cap).
MAX_COMBINED_FLAGS = 3


def switch_variants(fn, mk) -> list[tuple[tuple, str, str]]:
    """The checks beyond the two values of forward's plain switch ``mk`` (:func:`mode_keyword`'s): ``[(keyword,
    eval label, training label)]``, each keyword set in place of ``mk`` for one more diagnosis (:func:`set_variant`).

    Booleans read beside it (``forward(X, square=False, double=False)``, :func:`_more_flags`, at most
    :data:`MAX_COMBINED_FLAGS` in all): a keyword ``("square, double", (False, True), (True, True))`` per other
    combination of the others' values, so that every combination is checked (tester15b H3: two correct booleans
    were NOT CHECKED). A string compared with several values (``kind in ("relu", "tanh", "sigmoid")``): a keyword
    ``(kind, 'relu', 'sigmoid')`` per value past the first other one, its eval label "" (only its value is run)."""
    mk = _lead(fn, mk)
    if not (mk and (_plain(mk) or _arg_switch(mk)) and "," not in mk[0] and not mk[0].startswith(SET_SWITCHES)):
        return []
    if isinstance(mk[1], bool):  # beside training too: forward(X, training, use_dropout), (X, training, mode='fast')
        sets = _beside(fn, mk)
        if not sets or _n_checks(sets) > 2 ** MAX_COMBINED_FLAGS:
            return []
        names, defaults = [mk[0], *(n for n, _, _ in sets)], tuple(d for _, d, _ in sets)
        out = []
        for vals in itertools.product(*[(d, *ws) for _, d, ws in sets]):
            if vals != defaults:
                off, on = (mk[1], *vals), (mk[2], *vals)
                out.append(((", ".join(names), off, on), *(", ".join(f"{n}={v!r}" for n, v in zip(names, t))
                                                           for t in (off, on))))
        return out
    sw = string_argument(fn)
    if isinstance(mk[1], str) and sw is not None and sw[0] == mk[0]:
        return [((mk[0], mk[1], w), "", f"{mk[0]}={w!r}") for w in sw[2][1:]]
    return []


def switch_labels(fn, mk) -> list[str]:
    """The labels of the two checks of ``mk`` itself when :func:`switch_variants` adds others: the booleans it
    does not set named at their defaults (``["square=False, double=False", "square=True, double=False"]``); ``[]``
    when it adds none or none is a boolean."""
    mk = _lead(fn, mk)
    if not (mk and isinstance(mk[1], bool) and switch_variants(fn, mk)):
        return []
    rest = "".join(f", {n}={d!r}" for n, d, _ in _beside(fn, mk))
    return [f"{mk[0]}={mk[1]!r}{rest}", f"{mk[0]}={mk[2]!r}{rest}"]


def set_variant(obj, index) -> list[str]:
    """Set the switch keyword of ``obj`` (an :class:`Adapted`) to its :func:`switch_variants` ``index`` (None: back
    to its own): returns the variant's ``[name, eval value, training value, ...]`` texts of each switch it sets
    (a layer's ``protocol['switch_combo']``); raises AdapterError when ``obj`` has no such variant."""
    if not isinstance(obj, Adapted):
        raise AdapterError(f"{type(obj).__name__}: no switch variants to set.")
    base = obj.__dict__.setdefault("_base_keyword", obj.mode_keyword)
    variants = switch_variants(obj.student_forward, base)
    if index is None:
        obj.mode_keyword = base
        return []
    if type(index) is not int or not 0 <= index < len(variants):
        raise AdapterError(f"{type(obj).__name__}: no switch variant {index!r}.")
    obj.mode_keyword = name, off, on = variants[index][0]
    if not isinstance(off, tuple):
        return [name, _value_text(off), _value_text(on)]
    return [t for n, f, o in zip(name.split(", "), off, on) for t in (n, _value_text(f), _value_text(o))]


def _more_flags(fn, mk) -> list[tuple[str, bool]]:
    """``[(name, default), ...]`` of forward's boolean arguments read in its source after the one :func:`mode_keyword`
    switches as a plain flag (``mk``: ``forward(X, square=False, double=False)`` checks ``square`` at both values)
    or as its training argument (``forward(X, training, use_dropout)``): each combination is checked
    (:func:`switch_variants`) or, past the cap, named as not run (tester15b H3); ``[]`` when ``mk`` is no such flag."""
    if not (mk and _bool_lead(mk) and (_plain(mk) or _arg_switch(mk))):
        return []
    tree = _source(fn)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} if tree else set()
    return [(p.name, p.default) for p in (_params(fn) or {}).values() if p.name not in mk[0].split(", ")
            and p.name in read and p.kind in _NAMED and isinstance(p.default, bool)
            and p.name not in (*TRAIN_FLAGS, *EVAL_FLAGS, "training")]


def _dispatched_strings(fn, mk) -> list[tuple[str, str]]:
    """``[(name, default), ...]`` of forward's string arguments that select code other than by ``==`` with literals
    (:func:`mode_words` finds no other value): a dict key (``self.FUN[norm]``) or a method's result
    (``norm.upper() == "L1"``); beside a switch (``training``), one compared with its default alone (``mode ==
    "fast"``, the else branch). Only the default's branch runs, so they are named as not run (tester15b H5: a bug
    in the other branch PASSed with no word)."""
    tree = _source(fn)
    if tree is None:
        return []
    keys = {n.slice.id for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Name)}
    keys |= {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    lost = {p.name for p in (_params(fn) or {}).values() if isinstance(p.default, str)  # passed on to such code (L2)
            and not _switch_reach.is_mode_word(p.default) and _passed_words(fn, p.name)[1]}
    lone = {p.name for p in (_params(fn) or {}).values() if _lead(fn, mk) and isinstance(p.default, str)
            and mode_words(fn, p.name) == [p.default] and not _switch_reach.is_mode_word(p.default)}
    return [(p.name, p.default) for p in (_params(fn) or {}).values()
            if isinstance(p.default, str) and p.name in keys | lone | lost and not (mk and p.name in mk[0].split(", "))
            and p.kind in _NAMED and (p.name in lone | lost or p.name not in (*MODE_KEYWORDS, *WORDED_MODE_STRINGS, "training"))
            and not [w for w in mode_words(fn, p.name) if w != p.default]]


def _enum_modes(default):
    """``(eval member, training member)`` of an Enum default of a mode switch (``mode=Mode.EVAL``): the member whose
    name or value is a word of :data:`EVAL_WORDS`, and another (``TRAIN...`` first); None otherwise."""
    if not isinstance(default, enum.Enum):
        return None
    members = list(type(default))
    evals = [m for m in members if str(m.name).lower() in EVAL_WORDS or str(m.value).lower() in EVAL_WORDS]
    trains = sorted((m for m in members if m not in evals), key=lambda m: not str(m.name).lower().startswith("train"))
    return (evals[0], trains[0]) if evals and trains else None


def _value_text(v):
    """How the header shows a switch's value: ``Mode.EVAL`` for an Enum member, else its repr."""
    return f"{type(v).__name__}.{v.name}" if isinstance(v, enum.Enum) else repr(v)


def _attr_keyword(fn, name):
    """:func:`mode_keyword` of a switch forward reads outside its arguments (:func:`_switch_attr`: ``self.training``,
    ``self.bn_param['mode']``, ``global TRAIN``): booleans as the argument's, a string's words read from forward's
    source (``self.mode == "train"``)."""
    attr = re.split(r"[.\[ ]", name)[-1].strip("'\"]") or name
    if attr in EVAL_FLAGS or attr not in TRAIN_FLAGS + ("training",) and _flag_kind(attr) == "eval":
        return name, True, False
    value = _switch_value(fn, name)
    if not isinstance(value, str):
        return name, False, True
    words = [*mode_words(fn, name), value]
    if not any(map(_switch_reach.is_mode_word, words)):  # self.mode 'plain'/'fancy': a plain switch (F1)
        others = [w for w in dict.fromkeys(words) if w != value]
        return (name, value, others[0]) if len(others) == 1 else None
    evals = [w for w in words if _switch_reach.is_eval_word(w, EVAL_WORDS)]
    trains = [w for w in words if w not in evals]
    return name, evals[0] if evals else "test", trains[0] if trains else "train"


def mode_words(fn, name, depth=0):
    """The strings ``fn``'s source compares its argument ``name`` with (``mode == "training"``, ``mode in
    ("train", "fit")``, ``mode == TRAIN`` with a module constant or ``self.TRAIN``, ``match mode: case "fit":``), and
    those of the functions and methods it passes ``name`` on to (``self._apply(X, mode)``, up to 3 calls deep), in
    order; ``[]`` when the source cannot be read."""
    tree = _source(fn)
    words = []
    for node in ast.walk(tree) if tree else ():
        found = []
        if isinstance(node, ast.Compare) and any(_refers(s, name) for s in [node.left, *node.comparators]):
            found = [c for s in [node.left, *node.comparators] if not _refers(s, name)
                     for c in (s.elts if isinstance(s, (ast.Tuple, ast.List, ast.Set)) else [s])]
        elif isinstance(node, ast.Match) and _refers(node.subject, name):
            found = [p.value for case in node.cases for p in ast.walk(case.pattern) if isinstance(p, ast.MatchValue)]
        elif (table := _dispatch_table(fn, tree, node, name)) is not None:  # {"max": np.max, ...}[mode], .get(mode)
            found = [k for k in table if k is not None]
        elif isinstance(node, ast.Call) and depth < 3 and (callee := _passed_to(fn, node, name)) is not None:
            found = [ast.Constant(w) for w in mode_words(*callee, depth + 1)]
        for w in map(lambda c: _string(fn, c), found):
            if w is not None and w not in words:
                words.append(w)
    return words + [w for w in _passed_words(fn, name, depth)[0] if w not in words]


def _dispatch_table(fn, tree, node, name):
    """The keys (ast nodes) of the dict ``node`` looks ``name`` up in: ``{"max": np.max, "average": np.mean}[mode]``,
    ``ops.get(mode)`` with ``ops`` a dict literal assigned in ``fn`` or a module dict (its str keys); else None
    (newuser34 H1: a pair dispatching on a dict PASSed with its other value unchecked)."""
    if isinstance(node, ast.Subscript) and _refers(node.slice, name) and not isinstance(node.slice, ast.Constant):
        table = node.value
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
          and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name):
        table = node.func.value
    else:
        return None
    if isinstance(table, ast.Dict):
        return table.keys
    if not isinstance(table, ast.Name):
        return None
    local = [a.value for a in ast.walk(tree) if isinstance(a, ast.Assign) and isinstance(a.value, ast.Dict)
             and any(isinstance(t, ast.Name) and t.id == table.id for t in a.targets)]
    if local:
        return local[-1].keys
    g = _globals(fn).get(table.id)
    return [ast.Constant(k) for k in g if isinstance(k, str)][:8] if isinstance(g, dict) else None


def else_branch_line(fn, name, words) -> int | None:
    """The line of an ``if name == w: ... else: ...`` (or ``a if name == w else b``) in ``fn`` whose else branch
    runs for any value but the ``words`` the source names, and does more than raise; None when there is none
    (newuser34 H1: ``if mode == "max": ... else:`` with the average path in the else branch PASSed unchecked)."""
    tree = _source(fn)
    for node in ast.walk(tree) if tree else ():
        if not isinstance(node, (ast.If, ast.IfExp)) or not node.orelse:
            continue
        t = node.test
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Eq, ast.In))
                and _refers(t.left, name)):
            continue
        rest = node.orelse if isinstance(node, ast.If) else [node.orelse]
        if isinstance(rest[0], ast.If) or all(isinstance(r, ast.Raise) for r in rest):
            continue  # elif: its own comparison names its value; else: raise runs no code of its own
        return getattr(rest[0], "lineno", node.lineno)
    return None


#: The value a function pair's string keyword is given to run the else branch of ``if mode == "max": ... else:``
#: when the source names no other value (:func:`pair_switches`): any value the source does not name runs it.
ELSE_VALUE = "other (the else branch)"


def _passed_words(fn, name, depth=0) -> tuple[list, bool]:
    """:func:`gradcheck._switch_reach.argument_words` of forward's argument ``name``: the strings the code it is
    passed on to compares it with (``super().forward(X, training, mode)``, ``self.sub.forward(X, mode)``: L2), and
    whether it also goes where they cannot be read; ``([], False)`` below forward (``depth``) or on a failure."""
    if depth or not name.isidentifier():
        return [], False
    try:
        return _switch_reach.argument_words(fn, name)
    except (RecursionError, ValueError, TypeError):
        return [], True


def _string(fn, node):
    """The str ``node`` stands for in ``fn``: a literal, a local of ``fn`` assigned one, a module constant
    (``TRAIN``), a class or instance attribute (``self.TRAIN``, ``Cls.TRAIN``); None for anything else
    (:func:`gradcheck._switch_reach.local_constant`)."""
    if isinstance(node, ast.Constant):
        v = node.value
    elif isinstance(node, ast.Name):
        local, v = _switch_reach.local_constant(fn, node.id)  # forward's own TEST = "test" hides the module's
        v = v if local else _globals(fn).get(node.id)
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner = getattr(fn, "__self__", None) if node.value.id == "self" else _globals(fn).get(node.value.id)
        v = getattr(owner, node.attr, None) if isinstance(owner, type) or node.value.id == "self" else None
    else:
        v = None
    return v if isinstance(v, str) else None


def _globals(fn):
    return getattr(inspect.unwrap(getattr(fn, "__func__", fn)), "__globals__", None) or {}


def _passed_to(fn, call, name):
    """``(callee, its parameter)`` when ``call`` in ``fn`` passes the switch ``name`` on (``self._apply(X, mode)``,
    ``helper(mode=mode)``) to a method of ``fn``'s object or a function of its module; else None."""
    func = call.func
    if (a := _switch_reach.self_attr(func)) is not None:
        callee = getattr(getattr(fn, "__self__", None), a, None)
    elif isinstance(func, ast.Name):
        callee = _globals(fn).get(func.id)
    else:
        return None
    if not isinstance(callee, (types.FunctionType, types.MethodType)):
        return None
    ps = list(_params(callee) or {})
    for i, a in enumerate(call.args):
        if not isinstance(a, (ast.Constant, ast.Starred)) and _refers(a, name) and i < len(ps):
            return callee, ps[i]
    return next(((callee, k.arg) for k in call.keywords if k.arg in ps and not isinstance(k.value, ast.Constant)
                 and _refers(k.value, name)), None)


def _refers(node, name):
    """``node`` is the switch ``name``: the argument ``mode``, ``kw.get("mode")`` / ``kw["mode"]`` (a switch
    read from ``**kwargs``), or the attribute ``self.mode`` when ``name`` is ``"self.mode"``."""
    if name.startswith("self.") and isinstance(node, (ast.Attribute, ast.Subscript)) and ast.unparse(node) == name:
        return True  # self.bn_param['mode']
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        node = node.args[0] if node.args else node
    elif isinstance(node, ast.Subscript):
        node = node.slice
    return (isinstance(node, ast.Name) and node.id == name or isinstance(node, ast.Constant) and node.value == name
            or isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and "self." + node.attr == name)


def unread_flag(fn, ps=None):
    """``(name, default)`` of forward's first argument that is no training switch gradcheck reads
    (:func:`mode_keyword`), or None: only its default is ever passed. Such an argument is a boolean, or a
    switch name of :data:`MODE_KEYWORDS` (or ``training``) whose default is a number or a string that is no
    mode word (``mode=0``, ``training="no"``)."""
    if ps is None and (_takes_training(fn) or mode_keyword(fn) is not None):
        return None
    return next(((p.name, p.default) for p in (ps or _switch_params(fn)).values()
                 if p.kind in _NAMED and (isinstance(p.default, bool) or (
                     p.name in (*MODE_KEYWORDS, "training") and isinstance(p.default, (int, float, str, enum.Enum))
                     and not (p.name in MODE_STRINGS and isinstance(p.default, str))))), None)


def _unread_varargs(fn, inputs):
    """``"*args"`` when forward reads a ``*args`` that the inputs do not fill (``forward(self, x, *args)`` with
    ``args[0]`` a switch: gradcheck never passes it, so only its empty default runs), else None."""
    ps = list((_params(fn) or {}).values())
    star = next((p.name for p in ps if p.kind == p.VAR_POSITIONAL), None)
    tree = _source(fn) if star else None
    if tree is None or inputs is None or len(inputs) > sum(p.kind in _POSITIONAL for p in ps):
        return None
    return f"*{star}" if any(isinstance(n, ast.Name) and n.id == star for n in ast.walk(tree)) else None


def _training_kw(fn, training, keyword=None):
    """The keyword arguments that put ``fn`` in training (True) or eval (False) mode; ``{}`` for None. Switches
    outside forward's arguments (``keyword``'s names ``self.``, ``global ``, ``env ``) are set here."""
    if _takes_training(fn) and not (keyword and keyword[0].startswith("training, ")):
        keyword = ("training", False, True)
    if training is None or keyword is None:
        return {}
    name, off, on = keyword
    parts = name.split(", ")
    if len(parts) > 1 and not all(n.startswith("self.") for n in parts):  # an argument and the switches reached
        kw = {}
        for n, f, o in zip(parts, *(v if isinstance(v, tuple) else (v,) * len(parts) for v in (off, on))):
            kw.update(_one_switch(fn, training, n, f, o))
        return kw
    return _one_switch(fn, training, name, off, on)


class ModeKw(dict):
    """Forward's keywords of one mode (:func:`_training_kw`) that also remember the mode, so that a switch set
    outside forward's arguments (``self.training`` by train()/eval(), ``self.bn_param['mode']``) is set again right
    before each probe forward (:func:`_forward`): rewinding an object between probes puts back the value it had,
    and probes of other modes set it in between (tester23s H1: a layer caching only in training mode was probed in
    eval under ``--training``)."""

    def __init__(self, fn, training, keyword=None):
        super().__init__(_training_kw(fn, training, keyword))
        self.training, self.keyword = training, keyword

    def apply(self, obj):
        """Set ``obj``'s switches outside forward's arguments to this mode (none: nothing)."""
        if self.training is not None and _set_switches(self.keyword) and callable(getattr(obj, "forward", None)):
            _training_kw(obj.forward, self.training, self.keyword)


def _forward(obj, xs, kw):
    """``obj.forward(*xs, **kw)``, in the mode of ``kw`` where it is a :class:`ModeKw` (its switches set first)."""
    if isinstance(kw, ModeKw):
        kw.apply(obj)
    _flush(obj)
    return obj.forward(*xs, **kw)


def forward_in_mode(obj, xs, training):
    """``obj.forward`` on copies of the arrays ``xs`` in mode ``training`` (a bool, or None: forward's defaults), called
    as the sandbox child's adapter calls a checked layer's (:class:`Adapted`): ``training`` passed under forward's own
    switch (:func:`mode_keyword`: ``training``, ``train_flg``, ``mode='train'``) or set on the switch it reads
    (``self.training``), and no keyword at all for a forward that takes none (``forward(self, X)``): the graders'
    call of a staff's reference class (keys35: its ``forward(self, X)`` raised TypeError on ``training=False``, a
    grader error).

    Parameters
    ----------
    obj : object
        A layer with a ``forward`` method (a staff's reference class; a sandboxed layer's proxy takes ``training``).
    xs : sequence of numpy.ndarray
        Forward's inputs, each copied before the call (forward may write into them).
    training : bool or None
        The mode; None passes no switch (forward's defaults).

    Returns
    -------
    object
        What forward returns (an array of the output's shape, for a layer).
    """
    fn = obj.forward
    return fn(*[x.copy() for x in xs], **mode_kwargs(obj, training))


def mode_kwargs(obj, training, like=None):
    """The keywords :func:`forward_in_mode` passes ``obj.forward`` for mode ``training``, its switches outside forward's
    arguments (``self.training``) set on ``obj`` now: for many forwards of one mode (reading :func:`mode_keyword`
    from the source costs milliseconds a call). ``like``: the object ``obj`` is a deep copy of, whose reading (kept
    while what it read is unchanged) is the copy's: the copy, a new object, would be read again."""
    return _training_kw(obj.forward, training, mode_keyword((obj if like is None else like).forward))


#: numpy-ml's reset (``LayerBase.flush_gradients``): it empties the inputs forward appends to ``self.X`` and zeroes the
#: accumulated ``gradients``; its ``update()`` calls it after each step, so every forward of its training loop follows one
FLUSH = "flush_gradients"

#: The reset hooks a library's training loop calls before a forward, by method name, each taking no argument:
#: numpy-ml's :data:`FLUSH`, and Neural Networks from Scratch's ``Loss.new_pass()`` (Ch18-22), which creates the
#: ``self.accumulated_sum`` / ``accumulated_count`` that its ``calculate()`` adds to (``Model.train`` calls it at
#: the start of each epoch; without it ``calculate`` raises AttributeError, fixnn30 M1).
RESETS = (FLUSH, "new_pass")
#: Why gradcheck calls each: its library's training loop does (the header's words, and a raising backward's).
RESET_WHY = {FLUSH: "numpy-ml's update() calls it after each step", "new_pass": "Neural Networks from Scratch's "
             "Model.train calls it each epoch"}


def reset_text(hooks, owner=""):
    """``"flush_gradients() (numpy-ml's update() calls it after each step)"``: the hooks of :data:`RESETS` gradcheck
    calls before each forward, each with why; ``owner`` (a class name) prefixed as ``Owner.flush_gradients()``.

    Parameters
    ----------
    hooks : list of str
        Names of :data:`RESETS` (:func:`_resets` of a layer).
    owner : str, optional
        The layer's class name.

    Returns
    -------
    str
        The hooks joined by " and "; "" for no hook.
    """
    return " and ".join(f"{owner + '.' if owner else ''}{h}() ({RESET_WHY.get(h, 'a reset its training loop calls')})"
                        for h in hooks)


def _resets(obj):
    """The hooks of :data:`RESETS` that ``obj``'s class has, each taking no required argument beside self."""
    return [name for name in RESETS if callable(fn := getattr(type(obj), name, None))
            and not [p for p in (_params(fn) or {}).values() if p.default is p.empty][1:]]


def _flushes(obj):
    """True when ``obj``'s class has numpy-ml's ``flush_gradients()`` taking no argument (:data:`FLUSH`)."""
    return FLUSH in _resets(obj)


def _flush(obj):
    """Call each reset hook of ``obj`` (:func:`_resets`), as its library's training loop does before a forward:
    numpy-ml's ``flush_gradients()`` before every forward but the first (forward then stores one input,
    ``self.X.append(X)``, so backward returns one dX, and backward's ``gradients[k] += ...`` starts from zero,
    tester23s M1); Neural Networks from Scratch's ``new_pass()`` before ``calculate()`` (fixnn30 M1)."""
    for name in _resets(obj):
        try:
            getattr(obj, name)()
        except Exception:  # noqa: BLE001 - numpy-ml's asserts trainable: a frozen layer's loop never flushes it
            pass


def stored_inputs(obj):
    """``"self.X (a list of 7 arrays of shape (6, 4))"``: the first list attribute of ``obj`` holding two or more
    arrays of one shape, the inputs a forward appends there (numpy-ml's ``self.X.append(X)``), when ``obj``'s class
    has no ``flush_gradients()`` (:func:`_flushes`) to empty it between calls; "" for any other layer. Read after a
    backward that returned a list (tester23s's ``D_xlist``: one dX per stored input), here or in the sandbox's
    child (an adapter call)."""
    if _flushes(obj):
        return ""
    for k, v in list(_fields(obj).items())[:MAX_PROBED * 4]:
        if isinstance(k, str) and type(v) is list and len(v) >= 2 and all(type(a) is np.ndarray for a in v) \
                and len({a.shape for a in v}) == 1:
            return f"self.{k} (a list of {len(v)} arrays of shape {tuple(v[0].shape)})"
    return ""


def _one_switch(fn, training, name, off, on):
    """:func:`_training_kw` of one switch (or of sub-layers' ``", "``-joined attributes)."""
    if name.startswith(SET_SWITCHES):  # set on the object (train()/eval() where it has them), or its module
        if name == "self.training" and _mode_methods(fn.__self__):
            fn.__self__.train() if training else fn.__self__.eval()
        else:
            _switch_value(fn, name, on if training else off)
        return {}
    return {name: on if training else off}


def _calls(f):
    """A function whose closure's ``f`` it calls with its own arguments (the template of :func:`named`)."""
    def named(*args, **kwargs):
        return f(*args, **kwargs)
    return named


def named(f, name, module_globals):
    """``f``, or, when it has no string ``__name__`` (``affine_forward = functools.partial(_affine_forward)``, a
    callable object: redteam25 M2, the adapters read ``fwd.__name__`` and blamed their AttributeError on the
    student), a function named ``name`` calling it, in the student's module's globals (``module_globals``: what the
    adapters read of a forward's ``__globals__``), its ``__wrapped__`` ``f`` (its signature; the forward the
    no-forward-in-backward policy counts)."""
    if isinstance(getattr(f, "__name__", None), str):
        return f
    template = _calls(f)
    out = types.FunctionType(template.__code__, module_globals, name, None, template.__closure__)
    out.__qualname__, out.__wrapped__ = name, f
    out.__doc__ = getattr(f, "__doc__", None) if isinstance(getattr(f, "__doc__", None), str) else None
    out.__module__ = module_globals.get("__name__")
    return out


def find(mod, name):
    """``("class", cls)``, ``("functions", (forward, backward))`` or ``("loss_function", fn)`` for ``path.py::NAME``.

    A class named NAME wins; else ``NAME_forward``/``NAME_backward`` (then with ``_naive``, ``_fast``;
    NAME may itself end in ``_forward``); else a backward variant ``STEM_backward_V`` named as NAME or
    ``STEM_V`` with ``STEM_forward`` (:func:`backward_variants`); else a function NAME beside a function
    ``NAME_backward`` is such a pair (Andrew Ng's course: ``relu(Z) -> (A, cache)``, ``relu_backward(dA, cache)``);
    else a function NAME is a CS231n loss
    ``NAME(x, y) -> (loss, dx)``. AdapterError when nothing fits: the message lists the classes, function pairs
    and other backward functions found.
    """
    obj = getattr(mod, name, None)
    if isinstance(obj, type):
        return "class", obj
    base = name[:-len("_forward")] if name.endswith("_forward") else name
    if (hit := _suffixed_pair(mod, name)) is not None:
        return "functions", hit
    for suffix in SUFFIXES:
        f, b = getattr(mod, f"{base}_forward{suffix}", None), getattr(mod, f"{base}_backward{suffix}", None)
        if callable(f) and not callable(b):
            raise AdapterError(f"{base}_forward{suffix} has no {base}_backward{suffix} next to it. {expected()}")
    variants = backward_variants(vars(mod))
    for b, f in variants.items():  # batchnorm_backward_alt (::batchnorm_backward_alt or ::batchnorm_alt)
        if f and name in (b, b.replace("_backward", "", 1)):
            return "functions", (getattr(mod, f), getattr(mod, b))
    back = getattr(mod, f"{name}_backward", None)
    if inspect.isfunction(obj) and inspect.isfunction(back):  # Andrew Ng's course: relu(Z) -> (A, cache) and
        return "functions", (obj, back)  # relu_backward(dA, cache), a CS231n pair without _forward (tester24s g04)
    if inspect.isfunction(obj):  # softmax_loss(x, y) -> (loss, dx): a loss, never a layer
        return "loss_function", obj
    if obj is not None:
        a = "an" if type(obj).__name__[:1].lower() in "aeiou" else "a"
        raise AdapterError(f"{name} is {a} {type(obj).__name__}, not a class or a {name}_forward/{name}_backward "
                           f"function pair. {expected()}")
    own = [n for n, v in vars(mod).items() if getattr(v, "__module__", None) == mod.__name__]
    classes = sorted(n for n in own if isinstance(vars(mod)[n], type))
    found = function_pairs(mod)
    stems = collections.Counter(stem for stem, _ in found)  # a stem of one pair is named by it alone (::conv works)
    pairs = sorted({stem if stems[stem] == 1 else stem + suffix for stem, suffix in found} | {
        n[:n.index("_forward")] for n in own if "_forward" in n and callable(vars(mod)[n])
        and not any(f == n for f, _ in found.values())})  # a forward alone, said as before
    other = "".join(f" Other backward functions: {', '.join(_variant_text(b, f) for b, f in variants.items())}."
                    if variants else "")
    near = [n for n in [*classes, *pairs] if n.lower() == name.lower() and n != name] or difflib.get_close_matches(
        name, [n for n in [*classes, *pairs] if n != name], n=1, cutoff=0.8) or [  # tester16 L14: ::softmaxrows
        n for n in [*classes, *pairs] if n != name and abbreviates(n, name)][:1]  # newuser35 L3: SoftmaxCE
    other += f" Did you mean {near[0]}?" if near else ""
    if _empty_source(mod):  # newuser30: an empty layers.py (not saved yet, or saved elsewhere)
        raise AdapterError(f"has no class {name!r}: the file is empty (no code at all: not saved yet, or saved under "
                           f"another name or folder?). Save your code in it and check again. {expected()}")
    raise AdapterError(f"has no class {name!r} and no function pair {base}_forward/{base}_backward. Classes "
                       f"defined in it: {', '.join(classes) or 'none'}. Function pairs: {', '.join(pairs) or 'none'}."
                       f"{other} {expected()}")


def abbreviates(a: str, b: str) -> bool:
    """Whether one of the names ``a``, ``b`` is the other with some of its CamelCase or snake_case words cut to their
    initials, case aside: ``SoftmaxCE`` of ``SoftmaxCrossEntropy``, ``BN`` of ``BatchNorm``, ``conv_t`` of
    ``conv_transpose`` (newuser35 L3: difflib's ratio, 0.64, found no "did you mean" for the grader's wrong name). A
    name of one word, or of more than 6, abbreviates nothing."""
    def words(n):
        return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", n)]
    for short, long in ((a, b), (b, a)):
        ws = words(long)
        if not 2 <= len(ws) <= 6 or len(short) >= len(long):
            continue
        forms = {""}
        for w in ws:
            forms = {f + sep + p for f in forms for p in {w, w[0]} for sep in ("", "_")}
        if short.lower() in {f.lstrip("_") for f in forms} and short.lower() != long.lower():
            return True
    return False


def _empty_source(mod) -> bool:
    """Whether the file of module ``mod`` holds no code: nothing, or only whitespace and comments."""
    try:
        with open(mod.__file__, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 16)
    except (OSError, TypeError, AttributeError):
        return False
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


_PAIR_NAME = re.compile(r"(?P<stem>\w+?)_forward(?P<suffix>_\w+)?")


def function_pairs(mod):
    """``{(stem, suffix): (forward name, backward name)}`` of the functions ``STEM_forward_SUFFIX`` of module ``mod``
    beside a ``STEM_backward_SUFFIX`` (``suffix`` "" or ``"_im2col"``; CS231n's fast_layers.py: ``conv_forward_im2col``,
    ``conv_forward_fast``, ``max_pool_forward_fast``, newuser27 #5)."""
    out = {}
    for n, v in vars(mod).items():
        m = _PAIR_NAME.fullmatch(n) if callable(v) else None
        if m is not None:
            stem, suffix = m["stem"], m["suffix"] or ""
            if callable(getattr(mod, f"{stem}_backward{suffix}", None)):
                out[(stem, suffix)] = (n, f"{stem}_backward{suffix}")
    for n, v in list(vars(mod).items())[:MAX_WALKED]:  # newuser30 F4: forward_linear/backward_linear, relu_fwd/relu_bak
        m = _OTHER_PAIR_NAME.fullmatch(n) if inspect.isfunction(v) else None
        stem = m and (m["pre"] or m["post"])
        if not stem or (stem, "") in out:
            continue
        backs = [f"backward_{stem}"] if m["pre"] else [f"{stem}_{w}" for w in _BACK_ABBREVIATIONS]
        b = next((b for b in backs if inspect.isfunction(getattr(mod, b, None))), None)
        if b is not None:
            out[(stem, "")] = (n, b)
    return out


#: A pair's forward named another way than ``STEM_forward``: ``forward_STEM`` (backward ``backward_STEM``), or
#: ``STEM_fwd`` / ``STEM_fprop`` (backward ``STEM_bwd``, ``_bak``, ``_back``, ``_bprop``: :data:`_BACK_ABBREVIATIONS`)
_OTHER_PAIR_NAME = re.compile(r"forward_(?P<pre>\w+)|(?P<post>\w+?)_(?:fwd|fprop)")
_BACK_ABBREVIATIONS = ("bwd", "bak", "back", "bprop")


def _suffixed_pair(mod, name):
    """The pair (forward, backward) of :func:`function_pairs` that ``::name`` names, else None: its forward's or its
    backward's name, ``STEM_SUFFIX`` (``conv_im2col``) or ``STEM`` (``conv``: without a suffix, else ``_naive``,
    ``_fast``, else the one suffix there is; AdapterError naming them when several others are)."""
    pairs = function_pairs(mod)
    hits = [k for k, (f, b) in pairs.items() if name in (f, b, k[0] + k[1])]
    base = name[:-len("_forward")] if name.endswith("_forward") else name
    if not hits:
        stems = [k for k in pairs if k[0] == base]
        hits = [k for s in SUFFIXES for k in stems if k[1] == s][:1] or stems
        if len(hits) > 1:
            raise AdapterError(f"has several function pairs {base}_forward_*/{base}_backward_*: "
                               f"{', '.join(pairs[k][0] + '/' + pairs[k][1] for k in sorted(hits))}; name one "
                               f"after '::' ({', '.join('::' + k[0] + k[1] for k in sorted(hits))}).")
    if not hits:
        return None
    f, b = pairs[hits[0]]
    return named(getattr(mod, f), f, vars(mod)), named(getattr(mod, b), b, vars(mod))


def backward_variants(names):
    """``{backward: forward or None}`` of the functions ``STEM_backward_V`` in the namespace ``names`` that are
    not half of a pair ``STEM_forward_V``/``STEM_backward_V`` (CS231n's ``batchnorm_backward_alt``), each with
    ``STEM_forward`` when there is one, and of the ``STEM_backward`` without any ``STEM_forward``."""
    out = {}
    for b, v in list(names.items())[:MAX_WALKED]:
        stem, cut, variant = b.partition("_backward")
        if not (cut and stem and inspect.isfunction(v)) or (variant and not variant.startswith("_")):
            continue
        f = f"{stem}_forward"
        if variant and callable(names.get(f + variant)) or not variant and callable(names.get(f)):
            continue  # a pair (conv_backward_naive with conv_forward_naive)
        out[b] = f if callable(names.get(f)) else None
    return out


def _variant_text(b, f):
    """How the usage message names a backward variant (:func:`backward_variants`) and the target that checks it."""
    return (f"{b} (paired with {f}: check it as ::{b})" if f else
            f"{b} (no {b.partition('_backward')[0]}_forward to pair it with)")


def _companion_backward(mod, name):
    """``(backward's name, its argument names, the file it is in or "")`` for a function that reads as ``NAME``'s
    backward under another naming than ``NAME_backward``: its name, case and underscores ignored, NAME +
    backward/back/grad/backprop; in ``mod``, else defined in a Python file beside it (read with :mod:`ast`, not run:
    Alescontrela/Numpy-CNN's forward.py ``convolution`` and backward.py ``convolutionBackward``); None if none."""
    want = {name.replace("_", "").lower() + w for w in ("backward", "back", "grad", "backprop")}
    for k, v in list(vars(mod).items())[:MAX_WALKED]:
        if inspect.isfunction(v) and k.replace("_", "").lower() in want:
            return k, list(_params(v) or {}), ""
    here = os.path.dirname(os.path.abspath(getattr(mod, "__file__", "") or "."))
    with contextlib.suppress(OSError):
        for f in sorted(os.listdir(here))[:64]:
            if not f.endswith(".py"):
                continue
            with contextlib.suppress(OSError, SyntaxError, ValueError, RecursionError):
                with open(os.path.join(here, f), encoding="utf-8", errors="replace") as fh:
                    tree = _pyast.parse(fh.read(1_000_000))
                for node in tree.body:
                    if isinstance(node, ast.FunctionDef) and node.name.replace("_", "").lower() in want:
                        return node.name, [a.arg for a in node.args.posonlyargs + node.args.args], f
    return None


def _companion_text(fwd, bwd_name, bps, where):
    """The few lines that make ``fwd(...) -> out`` and ``bwd_name(dout, *its inputs)`` (argument names ``bps``, in
    the file ``where`` or "" here) a CS231n pair gradcheck reads: ``NAME_forward`` returning ``(out, cache)`` with the
    inputs backward takes, ``NAME_backward(dout, cache)``; a backward argument not named as one of forward's is taken,
    in order, from forward's arguments backward does not name (said, to be checked); "" when they do not fit."""
    fps, bps = list(_params(fwd) or {}), bps[1:]
    if not bps and len(fps) == 1:  # a derivative helper of one argument, sigmoid_grad(s): no dout to pass
        return _derivative_text(fwd, bwd_name, fps[0], where)
    spare, cache, guessed = [p for p in fps if p not in bps], [], []
    for b in bps:
        if b not in fps and not spare:
            return ""
        cache.append(b if b in fps else spare.pop(0))
        guessed += [] if b in fps else [f"{b} as forward's {cache[-1]}"]
    name = fwd.__name__
    sig = ", ".join(str(p) for p in (_params(fwd) or {}).values())
    tup = ", ".join(cache) + ("," if len(cache) == 1 else "")
    text = (f"def {name}_forward({sig}): return {name}({', '.join(fps)}), ({tup});   "
            f"def {name}_backward(dout, cache): return {bwd_name}(dout, *cache)")
    return text + (f" ({', '.join(guessed)}, by position: check it)" if guessed else "")


def _derivative_text(fwd, bwd_name, x, where):
    """:func:`_companion_text` for a derivative helper of one argument beside an elementwise ``fwd(x)``: CS224n's
    ``sigmoid_grad(s)`` takes forward's output (s = sigmoid(x)), ``relu_grad(x)`` its input. Told by behaviour
    (tester29s H1: ``sigmoid_grad(dout, *cache)`` was suggested, and FAILed a correct sigmoid): the helper at a
    standard-normal input and at forward's output there, against central differences of forward (all entries moved
    at once: an elementwise forward's derivative, h = 1e-6, rtol 1e-5); the adapter multiplies dout by the one
    that matches (the input when both do, as for a ReLU); "" when neither does, the helper is in another file (not
    run here) or raises."""
    bwd = getattr(fwd, "__globals__", {}).get(bwd_name)
    if where or not callable(bwd):
        return ""
    z = np.random.default_rng(29).standard_normal((3, 4))
    state = global_states()
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(fwd(z.copy()), dtype=np.float64)
            num = kernel("central", [np.asarray(fwd(z + t), dtype=np.float64) for t in (1e-6, -1e-6)], (1e-6, -1e-6))[0]
            got = {w: np.asarray(bwd(a.copy()), dtype=np.float64) for w, a in (("input", z), ("output", out))}
    except Exception:  # noqa: BLE001 - student code that cannot run so: no adapter suggested
        return ""
    finally:
        global_states(state)
    fits = [w for w, g in got.items() if g.shape == num.shape and close(g, num, 1e-5, 1e-7)]
    if not fits:
        return ""
    name, at = fwd.__name__, fits[0]
    cache = x if at == "input" else "out"
    return (f"def {name}_forward({x}): out = {name}({x}); return out, ({cache},);   "
            f"def {name}_backward(dout, cache): return dout * {bwd_name}(*cache) ({bwd_name} takes forward's {at}: "
            f"{bwd_name}({x if at == 'input' else f'{name}({x})'}) matched central differences of {name} at "
            f"standard-normal {x}{'' if len(fits) > 1 else ', at its ' + ('output' if at == 'input' else 'input') + ' it did not'})")


def _companion_where(mod, name, bwd_name, where):
    """Where the adapter of :func:`_companion_text` goes: the checked file itself (its backward in it), or a new
    file beside the package folder both files are in (Alescontrela's CNN/forward.py and CNN/backward.py import
    ``CNN.utils``: only from the folder above does that import work), importing both."""
    if not where:
        return "Add these lines to the file and check ::{n} again".format(n=name)
    here = os.path.dirname(os.path.abspath(getattr(mod, "__file__", "") or "."))
    stem = os.path.basename(getattr(mod, "__file__", "") or "")[:-3]
    if os.path.isfile(os.path.join(here, "__init__.py")):  # the folder's own name is the sandbox copy's here
        return (f"Its folder is a package (it has __init__.py): write a new file beside that folder, where the "
                f"package's own imports work, e.g. pair.py: from PKG.{stem} import {name}; from PKG.{where[:-3]} "
                f"import {bwd_name} (PKG the folder's name); and these lines; then check pair.py::{name}")
    return f"Add these lines to the file, with from {where[:-3]} import {bwd_name}, and check ::{name} again"


def not_a_layer(name, mod=None, fn=None):
    """Why a function ``NAME`` (a CS231n loss function to :func:`find`) cannot be checked as a layer; when ``mod``
    has its backward under another name (:func:`_companion_backward`), that backward and the adapter to write."""
    if mod is not None and fn is not None and (bwd := _companion_backward(mod, name)) is not None and (
            code := _companion_text(fn, *bwd)):
        where = f" in {bwd[2]}" if bwd[2] else ""
        takes = "returns the local derivative (no dout), " if " return dout * " in code else "takes the forward's inputs, "
        return (f"{name} is a function, and its backward is {bwd[0]}({', '.join(bwd[1])}){where}, which {takes}"
                f"not a cache: gradcheck reads a function pair NAME_forward(...) -> (out, cache) with "
                f"NAME_backward(dout, cache) -> gradients of the array inputs. {_companion_where(mod, name, *bwd[::2])} "
                f"(the pair {name}_forward/{name}_backward is found first): {code}.")
    return (f"{name} is a function, not a class or a {name}_forward/{name}_backward function pair (a function "
            f"{name}(x, y) -> (loss, dx) is a loss: check it as one, with --loss; one returning (loss, grad) of its "
            f"first argument with data beside it, as CS231n's svm_loss_naive(W, X, y, reg) -> (loss, dW), is checked "
            f"with --loss, --input-shape giving W's shape and --init every other argument: --loss --input-shape 4,3 "
            f"--init '{{\"X\": [[...], ...], \"y\": [...], \"reg\": 0.1}}'). {expected()}")


#: The words of a forward-like and a backward-like method's name (:func:`no_layer_methods`): Caffe's
#: ``bottom``/``top`` (nicodjimenez/lstm's ``bottom_data_is``/``top_diff_is``), Theano's ``fprop``/``bprop``.
_FORWARD_WORDS, _BACKWARD_WORDS = ("forward", "fprop", "bottom", "data", "predict", "run"), (
    "backward", "bprop", "top", "diff", "grad")


def loss_without_flag(cls) -> str:
    """The usage error for a loss read by its methods' names checked as a layer, without ``--loss``.

    A class with a row of :data:`LOSS_NAMES` (:func:`_named_loss`: ML-From-Scratch's ``loss(y, y_pred)`` and
    ``gradient(y, y_pred)``, numpy-ml's ``loss`` and ``grad``) and no forward/backward of its own (newuser31b F4: the
    generic "has no forward() method" said nothing of --loss). The loss the message describes is
    ``L = sum(loss(y, y_pred))`` over every element, the per-element losses of ML-From-Scratch's
    ``deep_learning/loss_functions.py``, with ``y_pred`` of shape (N, D) (``--input-shape N,D``) and ``y`` of the same
    shape and dtype (float64; drawn, or ``--targets``).

    Parameters
    ----------
    cls : type
        The class asked for (anything else gives ``""``).

    Returns
    -------
    str
        The message: the methods' signatures, the package whose protocol they are, and the ``gradcheck check ...
        --loss --input-shape N,D`` command; ``""`` for another class or a non-class. Raises nothing (a class whose
        signatures cannot be read has no row).
    """
    row = _named_loss(cls) if isinstance(cls, type) else None
    if row is None or any(m in vars(k) for k in cls.__mro__[:-1] for m in ("forward", "backward")):
        return ""
    sig = " and ".join(f"{m}({', '.join(n for n in _params(getattr(cls, m)) or {} if n != 'self')})"
                       for m in row[1:3])
    return (f"{cls.__name__} has {sig}, {row[0]}'s loss protocol: a loss, not a layer. Check it with --loss "
            f"(gradcheck check FILE::{cls.__name__} --loss --input-shape N,D: D the number of outputs; y_true is "
            f"drawn, or give it with --targets): L = the sum of {row[1]}'s per-element losses, dL/dy_pred = "
            f"{row[2]}'s result.")


def no_layer_methods(cls, file=""):
    """The usage error for a class with neither ``forward`` nor ``backward`` (nor Keras's ``call``, PyTorch's
    ``__call__``, ML-From-Scratch's ``forward_pass``, micrograd's ``parameters``: refused by their own words), saying
    what it has (its public methods with their signatures) and the adapter class a student writes around it: a
    forward and a backward calling its own methods (read from their names, :data:`_FORWARD_WORDS`), the weights its
    own arrays (tester24s l01: nicodjimenez/lstm's ``LstmNode(lstm_param, lstm_state)`` got a refusal about its
    constructor's arguments); ``""`` for any other class."""
    if not isinstance(cls, type) or any(m in vars(k) for k in cls.__mro__[:-1] for m in (
            "forward", "backward", "call", "__call__", "forward_pass", "parameters")) or _backprop_pair(cls) or \
            _mlfs_loss(cls) or model_gradients(cls):
        return ""  # Nielsen's backprop(x, y): checked as a model (backprop_as_model); ML-From-Scratch's loss: --loss
    meths = {}  # its own and inherited public methods, the nearest class's first (tester31e F7: none said of 7 inherited)
    for c in cls.__mro__[:-1]:
        for k, v in list(vars(c).items())[:MAX_WALKED]:
            v = v.__func__ if isinstance(v, (staticmethod, classmethod)) else v  # network2.py's static fn, delta
            if inspect.isfunction(v) and not k.startswith("_"):
                meths.setdefault(k, v)
    if nielsen := _nielsen_cost(cls, meths, file):
        return nielsen
    meths = list(meths.items())
    name = cls.__name__

    def pick(words):
        return next((k for k, _ in meths if any(w in k.lower() for w in words)), None)
    fwd, bwd = pick(_FORWARD_WORDS), pick(_BACKWARD_WORDS)
    fcall = f"self.node.{fwd}(X, ...)" if fwd else "the method of its forward pass, on X"
    bcall = f"self.node.{bwd}(dY, ...)" if bwd else "the method of its backward pass, on dY"
    where = f" beside {os.path.basename(file)}" if file else ""
    return (f"{name} has no forward() and no backward() method: its public methods are "
            f"{', '.join(_unbound(_written_as(v, k)) for k, v in meths) or 'none'}, so gradcheck cannot call it as a layer "
            f"(forward(X) -> Y and backward(dY) -> dX on numpy arrays). To check it, write a class{where} that "
            f"presents that protocol and check that class: class {name}Layer: def __init__(self): self.node = "
            f"{_unbound(_written_as(cls.__init__, name))} (its arguments built "
            "here from numbers); self.params = {name: each weight array the node computes with, the same objects, "
            "not copies}; self.grads = {}.   def forward(self, X): " + fcall + "; return a copy of its output "
            "array.   def backward(self, dY): set the gradients it adds into (+=) to zeros; " + bcall + "; "
            "self.grads = {name: the gradient it left for that weight}; return the gradient of X it computed.   An "
            "input it returns no gradient for is held as a constant (self._x = ..., the leading underscore says so); "
            "several inputs and outputs are forward(h, s) and backward returning a tuple (dh, ds). "
            f"Then: gradcheck check FILE::{name}Layer --input-shape ...")


def _first_two(cls, name):
    """The names of the first two parameters (``self`` aside) of method ``name`` of class ``cls``, or []."""
    fn = getattr(cls, name, None)
    ps = _params(fn) if inspect.isfunction(fn) else None
    return [p for p in ps or {} if p != "self"][:2]


def model_gradients(cls):
    """Which model protocol class ``cls`` has whose method returns its weights' gradients for data and labels, with no
    forward/backward and no dX: Deep Learning from Scratch vol. 1's ``loss(x, t)`` and ``gradient(x, t)`` (a dict keyed
    as its ``params``: ``TwoLayerNet``, ``MultiLayerNet``, ``SimpleConvNet``), ``"dlfs"``; CS231n assignment 2's
    ``loss(X, y=None) -> (loss, grads)`` (``TwoLayerNet``, ``FullyConnectedNet``, ``ThreeLayerConvNet``), ``"cs231n"``;
    else None (students45 F1: DLfS's model was read as ML-From-Scratch's loss ``loss(y, y_pred)``, and the ``--loss``
    command printed for it failed; F3: CS231n's got a wrapper template of forward and backward methods it has not)."""
    if not isinstance(cls, type) or any(m in vars(k) for k in cls.__mro__[:-1] for m in ("forward", "backward")):
        return None
    if _first_two(cls, "loss") == ["x", "t"] and _first_two(cls, "gradient") == ["x", "t"]:
        return "dlfs"
    loss = _params(getattr(cls, "loss", None)) if inspect.isfunction(getattr(cls, "loss", None)) else None
    if _first_two(cls, "loss") == ["X", "y"] and loss["y"].default is None and not hasattr(cls, "gradient"):
        return "cs231n"
    return None


#: the key of a model's ``__dict__`` where :func:`model_as_layer`'s forward keeps ``(x, t, the generators' states
#: before it ran)`` for its backward
MODEL_STATE = "_gradcheck_model"
#: the header's words for each protocol of :func:`model_gradients`
MODEL_WORDS = {"dlfs": "Deep Learning from Scratch's loss(x, t)/gradient(x, t)",
               "cs231n": "CS231n's loss(X, y) -> (loss, grads)"}


def model_as_layer(obj):
    """A model of :func:`model_gradients` (Deep Learning from Scratch vol. 1's ``loss(x, t)``/``gradient(x, t)``,
    CS231n assignment 2's ``loss(X, y) -> (loss, grads)``) as Deep Learning from Scratch vol. 2's model
    ``forward(x, t) -> loss``, ``backward(dout=1)``, which :func:`with_targets` (``--targets``) checks: a same-named
    subclass whose forward is the model's loss at x and the labels t (DLfS's with ``train_flg=True``, as its
    ``gradient`` calls it; CS231n's ``loss(X, y)[0]``, training mode, as a loss with labels runs), and whose backward
    puts the gradients the model returns (``gradient(x, t)``, ``loss(X, y)[1]``), times ``dout``, into ``grads``,
    keyed as ``params``; no dX (returns None). Each array of ``params`` is then compared with the central
    differences of the loss, as the books' own checks do (DLfS's ``gradient_check.py``, CS231n's
    ``eval_numerical_gradient(lambda W: model.loss(X, y)[0], model.params[name])``). Backward first sets the
    generators back to their states before the forward's loss, so a dropout mask drawn inside is drawn again.

    Parameters
    ----------
    obj : object
        The model as built (its class switched to the subclass in place).

    Returns
    -------
    str
        The header's words (``TARGETS`` standing for how the labels were drawn), or "" for another class (or one
        without a ``params`` dict of float arrays).

    Raises
    ------
    UnreadableError
        Its ``params`` has a key that is not a string; the forward finds the loss differs between two calls at
        the same x and t (fresh random numbers on every call, as a dropout without a seed); the gradients returned
        are not a dict (a key of ``params`` they lack is left out of ``grads``, which the check reports).
    """
    kind = model_gradients(type(obj))
    params = getattr(obj, "params", None)
    if kind is None or not isinstance(params, dict) or not params or not all(
            isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in params.values()):
        return ""
    name = type(obj).__name__
    if bad := [k for k in params if not isinstance(k, str)]:
        raise UnreadableError(
            f"{name} is a model, {MODEL_WORDS[kind]}, but its params dict has keys that are not strings "
            f"({', '.join(map(repr, bad[:3]))}): gradcheck names each weight by its key (dW1 for 'W1'); key params "
            "(and the gradients) by strings, as the book and the assignment do (params['W1']).")
    flag = {"train_flg": True} if kind == "dlfs" and "train_flg" in (_params(type(obj).loss) or {}) else {}

    def loss(self, x, t):
        got = self.loss(x, t, **flag) if kind == "dlfs" else self.loss(x, t)
        return got if kind == "dlfs" else got[0] if isinstance(got, tuple) and len(got) == 2 else got

    def forward(self, x, t):
        states = ([_state(g) for g in generators(self)], global_states())
        self.__dict__[MODEL_STATE] = (np.array(x, copy=True), np.array(t, copy=True), states)
        got = loss(self, x, t)
        if "_gradcheck_model_same" not in self.__dict__:  # once: a loss drawing new random numbers on each call
            _same_loss(name, got, loss(self, np.array(x, copy=True), np.array(t, copy=True)))
            self.__dict__["_gradcheck_model_same"] = True
        return got

    def backward(self, dout=1.0):
        x, t, (gens, glob) = self.__dict__[MODEL_STATE]
        for g, st in zip(generators(self), gens, strict=False):
            _state(g, st)
        global_states(glob)
        got = self.gradient(x.copy(), t.copy()) if kind == "dlfs" else self.loss(x.copy(), t.copy())
        grads = got if kind == "dlfs" else got[1] if isinstance(got, tuple) and len(got) == 2 else None
        what = "gradient(x, t)" if kind == "dlfs" else "loss(X, y)[1]"
        if not isinstance(grads, dict):
            raise UnreadableError(f"{name}.{what} returned {type(grads).__name__}, not a dict: it should hold a "
                                  f"gradient for each key of params ({', '.join(self.params)}).")
        # a key it lacks is left out: the check names that gradient as never written (the student's bug)
        self.grads = {k: float(dout) * np.asarray(grads[k], dtype=np.float64) for k in self.params if k in grads}

    if not _subclass(obj, None, {MODEL_STATE: None}, forward=forward, backward=backward):
        return ""
    return (f"model: {MODEL_WORDS[kind]}: the gradients {'gradient(x, t)' if kind == 'dlfs' else 'loss(X, y)[1]'} "
            f"returns for each array of params ({', '.join(params)}) compared with central differences of "
            f"{'loss(x, t' + (', train_flg=True)' if flag else ')') if kind == 'dlfs' else 'loss(X, y)[0]'} at the "
            "input x (held fixed) and the labels t (TARGETS); the model computes no dX (none checked)")


def _nielsen_cost(cls, meths, file):
    """The usage error for network2.py's cost class (``fn(a, y)``, the cost of the output ``a``; ``delta(z, a, y)``,
    the output layer's error dC/dz for ``a = sigmoid(z)``): neither a layer nor a loss of a prediction alone
    (delta is a gradient with respect to z, through the network's sigmoid), so it is checked inside its network,
    whose check differentiates ``self.cost.fn`` and whose ``backprop`` starts from ``self.cost.delta``
    (:func:`backprop_as_model`); "" for any other class (nielsen34 F8: 'its public methods are none')."""
    def names(k):
        fn = meths.get(k)
        return [p for p in _params(fn) or {} if p != "self"] if fn else None
    if names("fn") != ["a", "y"] or names("delta") != ["z", "a", "y"]:
        return ""
    base = os.path.basename(file) if file else "network2.py"
    return (f"{cls.__name__} has fn(a, y) and delta(z, a, y), network2.py's cost (Nielsen): fn is the cost of the "
            f"output a, delta the output layer's error dC/dz for a = sigmoid(z), a gradient with respect to z, not "
            f"to a prediction alone, so it is neither a layer nor a loss gradcheck can check by itself. It is checked "
            f"inside the network that holds it (self.cost = {cls.__name__}): gradcheck check {base}::Network "
            f"--input-shape N_IN,M --targets unit@N_OUT,M --init '{{\"sizes\": [N_IN, ..., N_OUT]}}' compares "
            f"backprop's gradients (its output delta from {cls.__name__}.delta) with central differences of "
            f"{cls.__name__}.fn(a, y), so a wrong fn or delta FAILs there.")


def _unbound(written):
    """A method's :func:`_written_as` without its ``self``: ``f(self, x)`` as ``f(x)``."""
    return written.replace("(self, ", "(", 1).replace("(self)", "()", 1)


def check_init(kind, target, init, n_inputs=None):
    """InitError when a key of ``init`` cannot be one of ``target``'s keyword arguments, or a
    class's constructor has a required argument (other than ``rng``) that ``init`` does not give.

    ``target``: a class (its constructor), a CS231n pair (forward's arguments) or loss function.
    Refused: a key that is no parameter (unless ``**kwargs``), and for a pair or loss one that names
    an array argument: one of the first ``n_inputs`` (a loss's ``x, y``) or one before an argument
    not in ``init`` (arrays go by position). Nothing is refused when the signature cannot be read.
    """
    fn = target[0] if kind == "functions" else target
    if _params(fn) is None:
        return
    ps, P = list(_params(fn).values()), inspect.Parameter
    what = _written_as(fn)
    named = [p.name for p in ps if p.kind in _NAMED]
    given = list(init or {})
    if kind != "class":
        pos = [p.name for p in ps if p.kind in _POSITIONAL]
        n = (1 if objective(fn, init) else 2) if kind == "loss_function" else n_inputs or 0
        # the last array: an argument --init does not give and that has no default (pool_forward(A_prev,
        # hparameters, mode='max') with hparameters given: A_prev alone; tester24s g11)
        last = max([i for i, q in enumerate(pos) if q not in given and _params(fn)[q].default is P.empty] + [n - 1])
        named = pos[last + 1:] + [p.name for p in ps if p.kind == P.KEYWORD_ONLY]  # arrays come first
        arrays = [k for k in given if k in pos and (pos.index(k) < n or pos.index(k) < last)]
        if arrays:
            k = arrays[0]
            how = ("x and y are the data of the loss (--pred and --targets)" if kind == "loss_function" else
                   "give its shape in --input-shape (one shape per array argument, separated by ';')")
            raise InitError(f"--init key {k!r}: {k} is an array input of {what}; {how}. --init holds the "
                            f"other arguments ({', '.join(named) or 'none here'}).")
    bad = [] if any(p.kind == P.VAR_KEYWORD for p in ps) else [k for k in given if k not in named]
    if bad:
        raise InitError(f"--init key {bad[0]!r} is not an argument of {what}; it accepts: "
                        f"{', '.join(named) or 'no keyword arguments'}.")
    if kind == "functions":
        _backward_missing(*target, init, n_inputs)
    if kind == "class" and (why := no_layer_methods(target, getattr(sys.modules.get(target.__module__), "__file__",
                                                                    ""))):
        raise InitError(why)
    extra = (ps[1:] if objective(fn, init) else ps[2:]) if kind == "loss_function" else ps if kind == "class" else []
    missing = [p.name for p in extra if p.default is P.empty and p.name not in given and p.name != "rng"
               and p.kind in _NAMED]
    if missing:  # the command line's to fix: exit 2, not the student's code failing (exit 3)
        example = _init_example(init, missing)
        arrays = [k for k in missing if WEIGHT_KEY.fullmatch(k) or kind == "loss_function"]
        eg = "[[1, 1, 0], [1, 0, 0]]" if kind == "loss_function" else "[[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]"
        arrays = (f" An array is a JSON list, nested for a matrix ({arrays[0]}: {eg} is 2x3); gradcheck passes "
                  "it as a float64 array." if arrays else "")
        pos = [p.name for p in ps if p.kind in _POSITIONAL]
        data = (f" If {pos[1]} is data rather than the target of a loss of {pos[0]} (svm_loss_naive(W, X, y, reg) -> "
                f"(loss, dW)), give {pos[1]} in --init too: the gradient of {pos[0]} alone is then checked, every other "
                f"argument fixed." if kind == "loss_function" and len(pos) > 2 else "")
        factory = next((f"{target.__name__}.{k}({', '.join(list(inspect.signature(v.__func__).parameters)[1:])})"
                        for k, v in vars(target).items() if isinstance(v, classmethod) and not k.startswith("_")),
                       "") if kind == "class" and isinstance(target, type) else ""
        factory = (f" {factory} looks like a factory: gradcheck builds the class with __init__ (it does not call "
                   f"the factory); give --init the values the factory would pass to {target.__name__}("
                   f"{', '.join(missing)})." if factory else "")
        raise InitError(f"{what} needs {', '.join(missing)}, which only --init can give (JSON, "
                        f"with ... replaced by the values): --init '{example}'.{arrays}{data}{factory}")


def _init_example(init, missing):
    """The ``--init`` JSON to suggest: the keys given, then each of ``missing`` as ``...``
    (``{"p": 0.5, "W": ...}``)."""
    return "{" + ", ".join([f'"{k}": {json.dumps(v, default=str)}' for k, v in (init or {}).items()]
                           + [f'"{k}": ...' for k in missing]) + "}"


#: ``--init`` keys whose JSON list is a weight array even when it is 1-D integers (``"b": [0, 0, 0]``)
WEIGHT_KEY = re.compile(r"(w|b|weights?|bias(es)?|kernel|gamma|beta)(_?[a-z0-9]{0,3})", re.IGNORECASE)


def _nested_numbers(v):
    """Whether ``v`` is a list (of lists...) whose leaves are all real numbers (not bools)."""
    if isinstance(v, list):
        return bool(v) and all(_nested_numbers(e) for e in v)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


#: ``--init`` keys whose flat list of integers is a size, not a weight, though :data:`WEIGHT_KEY` matches them
#: (tinynn's ``Conv2D(kernel=[3, 3, 3, 4])``, PyTorch's ``kernel_size``; tester28s M4: a float64 array there was a
#: TypeError in the student's ``np.random.uniform(size=kernel)``), when every entry is at least 1: a size is positive,
#: so ``kernel=[1, 0, -1]`` is a weight (Keras's name for one; review29 KERNEL_LIST: a correct Conv1D FAILed).
SIZE_KEY = re.compile(r"kernel(_?(size|shape|sizes|dims?))?s?", re.IGNORECASE)
#: a function's ``--init`` keys whose flat list of integers is a size, not data (CS224n's ``dimensions=[3, 2, 2]``,
#: ``layer_sizes``, ``shape``): they stay Python ints, as :data:`SIZE_KEY`'s
SIZE_WORD = re.compile(r"(\w*_)?(kernel|sizes?|shapes?|dims?|dimensions?|layers?|strides?|pad(ding)?)(_\w*)?",
                       re.IGNORECASE)
#: a function's ``--init`` keys whose nested list of integers is class labels, an int64 array (students45 F2: CS231n's
#: ``temporal_softmax_loss(x, y, mask)`` given ``"y": [[0, 1, 3], [2, 2, 0]]`` got a float64 y, an IndexError)
LABEL_KEY = re.compile(r"(y|t|labels?|targets?|y_?true|classes)", re.IGNORECASE)


def nested_ints(v):
    """Whether ``v`` is a nested list (a list of lists...) whose leaves are all integers (not bools)."""
    return isinstance(v, list) and any(isinstance(e, list) for e in v) and _all_ints(v)


def _all_ints(v):
    return all(_all_ints(e) for e in v) if isinstance(v, list) else isinstance(v, int) and not isinstance(v, bool)


def init_arrays(init, keep=(), data=False, dtype="float64"):
    """``(init with its weight arrays, {key: shape})``: a constructor's ``--init`` value that is a JSON
    list of numbers becomes an array of ``dtype`` (float64, or ``gradcheck check --dtype``'s float32 or float16:
    code written for float32 run as written; ``__init__(self, W, b)`` gets arrays, as numpy code expects)
    when it is nested (a matrix), holds a non-integer, or its key is named like a weight
    (:data:`WEIGHT_KEY`: ``W``, ``b``, ``W1``, ``bias``, ``gamma``...); other lists (``sizes=[4, 3]``)
    stay lists of Python ints, as do a flat list of positive integers named like a size (:data:`SIZE_KEY`:
    ``kernel=[3, 3, 3, 4]``; ``kernel=[1, 0, -1]`` is a weight) and the flat lists of integers of the keys ``keep`` (parameters declared tuples,
    :func:`_tuple_params`); the lists of a dict value (Andrew Ng's ``parameters = {"W1": [[...]], "b1": [[0.0], ...]}``)
    by the same rules, one level down. ``data``: the arguments of a function (``--loss``'s ``costFunction(theta, X, y)``), where a
    flat list of integers is data, class labels ``y`` that the function reads as an array (``m = y.size``, tester29s
    M1), so an int64 array, unless named like a size (:data:`SIZE_WORD`: ``dimensions=[3, 2, 2]``), as is a nested list of
    integers named like labels (:data:`LABEL_KEY`: CS231n's ``temporal_softmax_loss``'s (N, T) ``y``). InitError for a
    nested list whose rows differ in length (no array), with an example."""
    out, shapes = dict(init or {}), {}
    for k, v in out.items():
        if isinstance(v, dict) and any(isinstance(e, list) for e in v.values()):  # Ng's parameters {"W1": [[...]]}:
            out[k] = init_arrays(v, data=data, dtype=dtype)[0]  # its lists by the same rules (newuser30 F3)
            continue
        if not (isinstance(v, list) and _nested_numbers(v)):
            continue
        nested = any(isinstance(e, list) for e in v)
        if not nested and all(isinstance(e, int) for e in v) and (SIZE_KEY.fullmatch(k) and min(v) >= 1 or k in keep):
            continue
        if data and not nested and all(isinstance(e, int) for e in v) and not SIZE_WORD.fullmatch(k):
            out[k] = np.array(v, dtype=np.int64)  # labels: an array of ints, as np.loadtxt's y would be cast
            continue
        if data and LABEL_KEY.fullmatch(k) and nested_ints(v):
            with contextlib.suppress(ValueError):  # ragged rows: the InitError below
                out[k] = np.array(v, dtype=np.int64)  # (N, T) labels of a sequence (students45 F2)
                continue
        if not (nested or any(isinstance(e, float) for e in v) or WEIGHT_KEY.fullmatch(k)):
            continue
        try:
            a = np.array(v, dtype=np.float64).astype(dtype)  # rounded once, from the float64 the JSON's numbers are
        except ValueError:
            lens = sorted({len(e) if isinstance(e, list) else 0 for e in v})
            raise InitError(f"--init key {k!r}: a nested list whose rows differ in length ({', '.join(map(str, lens))} "
                            "elements) is no array; give every row the same length, e.g. a 2x3 matrix: "
                            f"--init '{{\"{k}\": [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]}}'.") from None
        out[k], shapes[k] = a, a.shape
    return out, shapes


#: An annotation naming a tuple, as text (``Tuple[int, int]``, ``tuple``, ``Optional[Tuple[int, int]]``).
_TUPLE_TEXT = re.compile(r"(typing\.)?(Optional\[)?(typing\.)?(Tuple|tuple)\b")


def _tuple_params(cls):
    """The parameters of ``cls``'s constructor declared tuples: annotated ``Tuple[int, int]`` (``tuple``,
    ``Optional[Tuple[...]]``, as text too) or with a tuple default. JSON has no tuple, so ``--init``'s list for one is
    passed as a tuple (tester27s: CS189's ``Conv2D(kernel_shape: Tuple[int, int])`` computes ``self.kernel_shape +
    (self.n_in,)``, which a list makes a TypeError)."""
    out = set()
    for name, p in (_params(cls) or {}).items():
        ann = p.annotation
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", "") if ann is tuple else repr(ann)
        if isinstance(p.default, tuple) or ann is tuple or _TUPLE_TEXT.match(text or ""):
            out.add(name)
    return out


def build(kind, target, init, seed, n_inputs=None, probe=None, wrt=None, active=0, dtype="float64"):
    """The object to check: ``cls(**init)`` (with a seeded ``rng`` if it takes one) or a :class:`FunctionPair`; a loss
    function's :class:`LossFunction` gets ``probe``, ``wrt`` and ``active`` (``--wrt``: whose gradients it returns).

    InitError (:func:`check_init`) first when a key of ``init`` cannot be passed. A class's ``init``
    lists of numbers become arrays of ``dtype`` (float64 unless ``gradcheck check --dtype``) as :func:`init_arrays`
    says (``__init__(self, W, b)``); a list for a parameter declared a tuple (:func:`_tuple_params`), a tuple.
    """
    check_init(kind, target, init, n_inputs)
    if kind == "functions":
        return pair(*target, init, dtype)
    if kind == "loss_function":  # temporal_softmax_loss(x, y, mask): its --init lists as a class's (float64)
        return loss_function(target, init_arrays(init, data=objective(target, init), dtype=dtype)[0], probe, wrt,
                             active)
    tuples = _tuple_params(target)
    kwargs = init_arrays(init, tuples, dtype=dtype)[0]
    kwargs.update({k: tuple(v) for k, v in kwargs.items() if isinstance(v, list) and k in tuples})
    if "rng" in (_params(target) or {}) and "rng" not in kwargs and seed is not None:
        kwargs["rng"] = np.random.default_rng(seed)
    if seed is not None:  # tester30n: __init__'s np.random.randn (Neural Networks from Scratch) repeats with --seed
        seed_globals(seed)
    return target(**kwargs)


def seed_globals(seed):
    """Set numpy's global generator (``np.random.seed``) and Python's ``random`` to ``seed``: a layer whose
    ``__init__`` or forward draws from them (``0.01 * np.random.randn(n_inputs, n_neurons)``) draws the same numbers
    in every run with that seed, so the figures a report prints with ``seed=N`` repeat. Returns None."""
    np.random.seed(seed)
    random.seed(seed)


def call_as_forward(obj):
    """Keras's name (Z4): a class with ``call(self, x)`` and ``backward`` but no ``forward`` gets ``call`` as its
    forward, through a subclass of the same name that only adds ``forward = call``; so does one with PyTorch's
    ``__call__(self, x)`` (its own, not ``object``'s) and ``backward`` (tester17 L7). The name used (``"call"``,
    ``"__call__"``) when done, else ``""``."""
    cls = type(obj)
    if callable(getattr(obj, "forward", None)) or not callable(getattr(obj, "backward", None)):
        return ""
    name = next((n for n in ("call", "__call__") if inspect.isfunction(getattr(cls, n, None))), "")
    if not name:
        return ""
    return name if _subclass(obj, forward=getattr(cls, name)) else ""


#: The names a backward method has in blog and course code (Victor Zhou's cnn-from-scratch: ``backprop(d_L_d_out)``,
#: ``backprop(d_L_d_out, learn_rate)``: corpus36 F3), read as ``backward`` when the class has no method of that name.
BACKWARD_ALIASES = ("backprop", "backpropagate", "back_prop")


def backprop_as_backward(obj):
    """A class with ``forward`` and no ``backward`` whose ``backprop(self, dY)`` (:data:`BACKWARD_ALIASES`; or
    ``backprop(self, dY, learn_rate)`` stepping its own weights, :func:`_learning_rate`) takes the upstream gradient
    alone gets it as its backward, through a same-named subclass (:func:`_subclass`). Nielsen's ``backprop(x, y)``
    (two required inputs, no forward: :func:`backprop_as_model`) is not one. The name used when done, else ``""``."""
    cls = type(obj)
    if not callable(getattr(obj, "forward", None)) or callable(getattr(obj, "backward", None)):
        return ""
    for name in BACKWARD_ALIASES:
        fn = getattr(cls, name, None)
        if not inspect.isfunction(fn):
            continue
        ps = [p for p in _positional(fn, required=True) if p.name != "self"]
        if len(ps) == 1 or len(ps) == 2 and _learning_rate(fn) == ps[1].name:
            return name if _subclass(obj, backward=fn) else ""
    return ""


class PassOptimizer:
    """gradcheck's optimizer for ML-From-Scratch's ``initialize(optimizer)``: ``update(w, grad_wrt_w)`` returns a
    plain gradient-descent step ``w - learning_rate * grad_wrt_w`` (a new array, ``w`` unchanged), the step the
    self-stepping backward's reader (:func:`stored_results`) sets the rate of (:data:`LR_PROBE`, a power of 2),
    reads each gradient from (step / rate), puts the weight back after, and probes for a dX computed with the
    stepped weights (ML-From-Scratch's own SGD without momentum is the same step)."""

    def __init__(self, learning_rate=0.01):
        self.learning_rate = learning_rate
        self._steps = [0]  # steps taken with it or a copy (copy.copy(optimizer) per weight): :func:`never_stepped`

    @property
    def updates(self) -> int:
        """How many times ``update`` was called on this optimizer or on any copy of it."""
        return self._steps[0]

    def __deepcopy__(self, memo):
        """A copy sharing the count of steps (a layer may deep-copy the optimizer it is given for each weight)."""
        new = PassOptimizer(self.learning_rate)
        new._steps = self._steps
        return new

    def update(self, w, grad_wrt_w):
        """``w - learning_rate * grad_wrt_w``: an array of ``w``'s shape."""
        self._steps[0] += 1
        return w - self.learning_rate * np.asarray(grad_wrt_w)


def never_stepped(opt, trainable, info) -> str:
    """Why a layer given gradcheck's :class:`PassOptimizer` ``opt`` by ``initialize(optimizer)`` is NOT CHECKED as a
    whole (newuser31b F1): a backward that ran and never called ``opt.update`` while the layer has weights
    (``info['unchecked']``) and is ``trainable`` (true or absent) never trains, and its weights' gradients cannot be
    read; as one forgotten update of two is (:func:`missing_gradients`). ``""`` otherwise (a ``trainable = False``
    layer is checked on dX alone)."""
    if not isinstance(opt, PassOptimizer) or opt.updates or not trainable or not info.get("backward_ran", True):
        return ""
    ws = [str(w) for w in info.get("unchecked") or []]
    if not ws:
        return ""
    return (f"backward_pass never stepped its weights ({', '.join(ws)}) with the optimizer initialize(optimizer) "
            "gave it (no call of its update(w, grad)), so the layer never trains and its weights' gradients cannot "
            "be read; call self.W_opt.update(...) for each weight in backward_pass, or set self.trainable = False "
            "for a frozen layer")


def _has_optimizer(obj):
    """Whether ``obj`` holds an optimizer already: an attribute whose object has an ``update`` method."""
    return any(callable(getattr(v, "update", None)) and not isinstance(v, (dict, type)) for v in _fields(obj).values())


def pass_as_forward(obj, probe=None):
    """ML-From-Scratch's layer protocol (tester31e F1, F2): a class with ``forward_pass(X, training)`` and
    ``backward_pass(accum_grad) -> dX`` and no ``forward``/``backward`` gets them as its forward and backward (a
    same-named subclass, as :func:`call_as_forward`). When it has ``initialize(optimizer)`` and holds no optimizer
    yet, its input shape is set from ``probe`` (``set_input_shape``, as their NeuralNetwork.add does) when it has
    none, and ``initialize`` is called with a :class:`PassOptimizer`: the gradients backward_pass computes and gives
    its optimizer are then read as the self-stepping backward's (:func:`stored_results`). A layer without weights
    (Flatten) is the plain pair. Returns the header's words, or ``""`` for another class."""
    cls = type(obj)
    if callable(getattr(obj, "forward", None)) or callable(getattr(obj, "backward", None)) or not all(
            inspect.isfunction(getattr(cls, m, None)) for m in ("forward_pass", "backward_pass")):
        return ""
    if not _subclass(obj, forward=cls.forward_pass, backward=cls.backward_pass):
        return ""
    text = "ML-From-Scratch's layer protocol: forward_pass(X, training) checked as forward, backward_pass(accum_grad) as backward"
    if not _initialize_hook(obj) or _has_optimizer(obj):
        return text
    if getattr(obj, "input_shape", None) is None and probe and callable(getattr(obj, "set_input_shape", None)):
        obj.set_input_shape(tuple(np.shape(probe[0])[1:]))
    type(obj)._gradcheck_pass_optimizer = opt = PassOptimizer()  # never_stepped reads its count of steps
    obj.initialize(opt)
    return (f"{text}; initialize(optimizer) called with gradcheck's plain gradient-descent optimizer, from whose "
            "update(w, grad) steps each weight's gradient is read")


class PreviousLayer:
    """The previous layer :func:`connect_as_built` hands ``connect_to``: its ``out_shape`` is the input's shape."""

    def __init__(self, out_shape):
        self.out_shape = tuple(int(n) for n in out_shape)


def connect_as_built(obj, probe=None):
    """NumpyDL's layers (chaoming0625/NumpyDL: ``Linear``, ``Convolution``, ``BatchNormal``, ``SimpleRNN``) make
    their weights in ``connect_to(prev_layer)``, which its ``Model`` calls with the layer before (``None`` for the
    first, built from ``n_in``), reading ``prev_layer.out_shape``; until then they are None (corpus39 M1: "unsupported
    operand type(s) for *: 'float' and 'NoneType'", blamed on the input's shape or forward). A class with such a
    method and an attribute still None that the method assigns is connected, as that Model does, to a previous layer
    whose ``out_shape`` is the probe input's shape (:class:`PreviousLayer`). Returns the header's words, or ``""``."""
    fn = getattr(obj, "connect_to", None)
    if not probe or not inspect.ismethod(fn) or len(_positional(fn)) != 1 or not any(
            v is None and _assigns(fn, k) for k, v in _fields(obj).items()):  # an attribute it makes, not made yet
        return ""
    shape = tuple(np.shape(probe[0]))
    fn(PreviousLayer(shape))
    return f"connect_to(prev_layer) called as NumpyDL's Model calls it, prev_layer.out_shape {shape} (the input's)"


def _initialize_hook(obj) -> bool:
    """``obj`` has ML-From-Scratch's ``initialize(self, optimizer)`` hook: a method of the instance, not a
    classmethod or staticmethod of that name (SkalskiP's ``DenseLayer.initialize(cls, units_prev, units_curr)`` is a
    factory: corpus36 F2, where calling it with an optimizer was blamed on ``__init__``)."""
    if not callable(getattr(obj, "initialize", None)):
        return False
    return not isinstance(inspect.getattr_static(type(obj), "initialize", None), (classmethod, staticmethod))


def _positional_count(fn):
    """How many positional parameters method ``fn`` takes besides ``self`` (all without a default; ``**kwargs``
    aside: numpy-ml's ``grad(self, x, **kwargs)``), or -1."""
    ps = [p for p in (_params(fn) or {}).values() if p.name != "self" and p.kind != p.VAR_KEYWORD]
    return len(ps) if inspect.isfunction(fn) and all(p.kind in _POSITIONAL and p.default is p.empty for p in ps) \
        else -1


#: The elementwise activations and the losses read by their methods' names, one row a package: ``(package, forward's
#: name, derivative's name)`` for an activation (forward ``NAME(x)``, derivative ``NAME(x)`` at forward's input);
#: ``(package, loss's name, gradient's name, the gradient's argument count)`` for a loss (``loss(y, y_pred)``, per
#: element or summed, and its gradient: ``(y, y_pred)`` with respect to ``y_pred``, or numpy-ml's ``(y, y_pred, z,
#: act_fn)`` with respect to an output layer's ``z``, given ``y_pred = act_fn.fn(z)`` with a non-identity act_fn,
#: :class:`_Sinh`; numpy-ml's ``CrossEntropy.grad(y, y_pred)``, two arguments, with respect to the softmax's input z,
#: ``y_pred = softmax(z)``). ML-From-Scratch (tester31e F5, F6); numpy-ml (tester31m M4, M5:
#: ``numpy_ml/neural_nets/activations``, ``losses``; newuser32 F1, F2).
ACTIVATION_NAMES = (("ML-From-Scratch", "__call__", "gradient"), ("numpy-ml", "fn", "grad"))
LOSS_NAMES = (("ML-From-Scratch", "loss", "gradient", 2), ("numpy-ml", "loss", "grad", 4), ("numpy-ml", "loss", "grad", 2))


def _named_activation(cls):
    """The row of :data:`ACTIVATION_NAMES` whose forward and derivative ``cls`` has, each of one argument, or None."""
    return next((row for row in ACTIVATION_NAMES if _positional_count(inspect.getattr_static(cls, row[1], None)) ==
                 1 and _positional_count(getattr(cls, row[2], None)) == 1), None)


def _named_loss(cls):
    """The row of :data:`LOSS_NAMES` whose loss (two arguments) and gradient ``cls`` has, or None (a model's
    ``loss(x, t)``, :func:`model_gradients`, is none)."""
    if model_gradients(cls):
        return None
    return next((row for row in LOSS_NAMES if _positional_count(getattr(cls, row[1], None)) == 2 and
                 _positional_count(getattr(cls, row[2], None)) == row[3]), None)


def _mlfs_loss(cls):
    """Whether class ``cls`` has a loss protocol read by its names (:data:`LOSS_NAMES`: ML-From-Scratch's ``loss(y,
    y_pred)`` and ``gradient(y, y_pred)``, numpy-ml's ``loss``/``grad``)."""
    return _named_loss(cls) is not None


class _Sinh:
    """The output activation numpy-ml's ``grad(y, y_pred, z, act_fn)`` is given (fixn32, newuser32 F1: with the
    identity, a grad that drops ``act_fn.grad(z)`` passed): numpy-ml's activation object, ``fn(z) = sinh(z)`` and
    ``grad(x) = cosh(x)``, with ``z = arcsinh(y_pred)`` so that ``y_pred = fn(z)`` for any real ``y_pred``; numpy-ml's
    chain rule then gives dL/dz = dL/dy_pred * cosh(z), and ``grad(...) / cosh(z)`` is checked as dL/dy_pred."""

    @staticmethod
    def fn(z):
        return np.sinh(z)

    @staticmethod
    def grad(x, **kwargs):
        return np.cosh(x)


def softmax(z, axis=-1):
    """Softmax of the array ``z`` over ``axis`` (its maximum subtracted first): the one the checker computes (numpy-ml's
    CrossEntropy's ``y_pred``, the probabilities ``--pred probs`` draws, the diagnoses' readings of a softmax)."""
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def gradient_protocol(obj, kind="layer", probe=None):
    """Activations and losses read by their methods' names (:data:`ACTIVATION_NAMES`, :data:`LOSS_NAMES`:
    ML-From-Scratch's, tester31e F5, F6; numpy-ml's, tester31m M4, M5), given forward and backward through a
    same-named subclass: an activation's forward ``__call__(x)`` or ``fn(z)`` and derivative ``gradient(x)`` or
    ``grad(x)`` (elementwise, at ``x``) checked as a layer, ``backward(dY) = dY * gradient(x)``; with ``kind``
    ``"loss"``, a loss's ``loss(y, y_pred)`` (per-element losses or their sum) and its gradient, ``forward(y_pred,
    y_true) = sum(loss(y_true, y_pred))`` and a stateless ``backward(y_pred, y_true) = gradient(y_true, y_pred)``
    (numpy-ml's ``grad(y, y_pred, z, act_fn)`` through :class:`_Sinh`, divided by ``cosh(z)``; numpy-ml's
    two-argument ``grad(y, y_pred)`` as dL/dz with ``y_pred = softmax(z)``): ML-From-Scratch's
    NeuralNetwork reports ``np.mean(loss)`` but backpropagates ``gradient`` unscaled, the gradient of the sum.
    ``probe``: a loss's ``(y_true, y_pred)`` drawn as the check draws them (``--targets``), whose targets
    :func:`_two_arg_reading` probes with. Returns the header's words, or ``""`` for another class (one with forward
    or backward)."""
    cls = type(obj)
    if callable(getattr(obj, "forward", None)) or callable(getattr(obj, "backward", None)):
        return ""
    if kind == "layer" and (row := _named_activation(cls)):
        package, fwd, der = row

        def forward(self, x):
            self._gradcheck_x = x
            return getattr(self, fwd)(x)

        def backward(self, dY):
            return dY * getattr(self, der)(self._gradcheck_x)
        return (f"{package}'s activation protocol: forward is {fwd}(x), backward is dX = dY * {der}(x), "
                f"{der}(x) read as the elementwise derivative at forward's input") if \
            _subclass(obj, forward=forward, backward=backward) else ""
    if kind != "layer" and (row := _named_loss(cls)):
        package, lname, gname, n = row
        first = {m: loss_order(getattr(obj, m))[0] for m in (lname, gname)}  # newuser31b F3: loss(y_pred,
        # y_true) called (y, y_pred) positionally FAILed as "wrong sign": each method in the order its names say

        # numpy-ml's CrossEntropy.grad(y, y_pred) is dL/dz, y_pred = softmax(z); another two-argument grad (a
        # squared error) is dL/dy_pred: told by its name or by which reading matches the loss's central differences
        # (review33 NML_TWO_ARG_GRAD_READ_AS_SOFTMAX_CE: every such grad was read as CrossEntropy's and FAILed)
        soft, neither = _two_arg_reading(obj, lname, gname, first, probe) if package == "numpy-ml" and n == 2 else \
            (False, "")

        def forward(self, y_pred, y_true):
            y_pred = softmax(y_pred) if soft else y_pred
            return np.sum(getattr(self, lname)(*((y_pred, y_true) if first[lname] else (y_true, y_pred))))

        def backward(self, y_pred, y_true):
            z, y_pred = (y_pred, softmax(y_pred)) if soft else (np.arcsinh(y_pred), y_pred)
            if soft and not sums_to_one(y_true, atol=1e-5):  # (float32 labels)
                raise UnreadableError(
                    f"{type(self).__name__}.{gname}(y, y_pred) is numpy-ml's CrossEntropy convention: the gradient "
                    "with respect to the softmax's input z, y_pred = softmax(z), which is y_pred - y only for targets "
                    "whose rows sum to 1; these do not (the default --targets real): add --targets onehot (or probs, "
                    "labels).")
            pair = (y_pred, y_true) if first[gname] else (y_true, y_pred)
            if n == 4:  # numpy-ml's dL/dz through act_fn = sinh: divided by cosh(z), dL/dy_pred (newuser32 F1)
                return np.asarray(getattr(self, gname)(*pair, z, _Sinh())) / np.cosh(z)
            return getattr(self, gname)(*pair)
        said = [f"{m}({', '.join(loss_order(getattr(obj, m))[1])})" for m in first if first[m]]
        unread = "" if soft or n == 4 or any(loss_order(getattr(obj, m))[2] for m in first) else \
            _order_unread(obj, lname, gname)
        how = (f"dL/dy_pred = {gname}(y, y_pred, z, act_fn) / cosh(z) with act_fn a non-identity activation, fn = "
               "sinh and grad = cosh, and z = arcsinh(y_pred) (y_pred = act_fn.fn(z): numpy-ml's grad is dL/dz = "
               "dL/dy_pred * act_fn.grad(z); a grad that leaves act_fn.grad(z) out fails)" if n == 4 else
               f"dL/dz = {gname}(y, y_pred) with y_pred = softmax(z) over the last axis (numpy-ml's CrossEntropy: the "
               "gradient with respect to the softmax's input z, the checked input here, named y_pred)" if soft else
               f"dL/dy_pred = {gname}(y, y_pred)") + neither
        summed = (" (their NeuralNetwork reports their mean but backpropagates gradient(y, y_pred) unscaled, the "
                  "sum's gradient)" if package == "ML-From-Scratch" else "")
        of = "(y, softmax(z))" if soft else "(y, y_pred)"
        return (f"{package}'s loss protocol: L = the sum of {lname}{of}'s per-element losses{summed}, {how}" + (
            f"; {' and '.join(said)}: the prediction first, as the names say, so called in that order"
            if said else "") + unread) if _subclass(obj, forward=forward, backward=backward) else ""
    return ""


#: The qualified names of numpy-ml's two-argument softmax cross-entropy losses, read as dL/dz without a probe.
NUMPYML_SOFTMAX_CE = ("numpy_ml.neural_nets.losses.losses.CrossEntropy", "numpy_ml.neural_nets.losses.CrossEntropy")


def _two_arg_reading(obj, lname, gname, first, probe=None):
    """How a loss's two-argument ``grad(y, y_pred)`` in numpy-ml's names is read: ``(soft, words)``.

    ``soft`` is True for numpy-ml's CrossEntropy convention, dL/dz with ``y_pred = softmax(z)`` over the last axis
    (``numpy_ml/neural_nets/losses/losses.py``: ``CrossEntropy.grad(y, y_pred) = y_pred - y``), and False for the
    plain dL/dy_pred of any other loss (a squared error's ``y_pred - y``). numpy-ml's own class
    (:data:`NUMPYML_SOFTMAX_CE`) is read as CrossEntropy; another class by which reading matches the central
    differences of ``sum(loss)`` (:func:`_directional_error`, relative error under 1e-3) on a probe: ``z`` float64,
    standard normal, ``y_pred = softmax(z)``, and the targets of ``probe`` (drawn as ``--targets`` asks) when their
    rows sum to 1 (``onehot``, ``probs``: review34 NML_CE_COPY_PROBE_NOT_BINARY, a copy of numpy-ml's CrossEntropy
    with its own "y is binary" check raised on soft targets and FAILed with ``--targets onehot``), else targets of
    shape (4, 3) whose rows sum to 1 (only there is CrossEntropy's ``y_pred - y`` dL/dz; other targets get that
    reading refused later, with the options that fit). When neither matches, the closer is checked (it fails) and
    ``words`` names both readings and their errors, or what a reading raised on the probe, so no reading is guessed
    into a PASS; else ``words`` is ``""``.

    Parameters
    ----------
    obj : object
        The loss, with ``lname(a, b)`` and ``gname(a, b)``.
    lname, gname : str
        The names of its loss and of its gradient.
    first : dict
        ``{name: bool}``: whether each method takes the prediction first (:func:`loss_order`).
    probe : sequence of two arrays, optional
        ``(y_true, y_pred)`` as the check draws them; only ``y_true`` is read.

    Returns
    -------
    tuple of (bool, str)
        Whether grad is read as dL/dz through the softmax, and the header's words when neither reading matched.
    """
    cls = type(obj)
    if f"{cls.__module__}.{cls.__qualname__}" in NUMPYML_SOFTMAX_CE:
        return True, ""
    rng = probe_rng(0)
    y_true = None if probe is None or len(probe) != 2 else np.asarray(probe[0])
    with np.errstate(all="ignore"):
        rows = y_true is not None and y_true.dtype.kind == "f" and y_true.ndim >= 1 and y_true.size > 0 and \
            bool(np.all(y_true >= 0) and sums_to_one(y_true, atol=1e-5))
    z = rng.standard_normal(y_true.shape if rows else (4, 3))
    y_true = y_true.astype(np.float64) if rows else softmax(rng.standard_normal((4, 3)))

    def pair(m, p, t):
        return (p, t) if first[m] else (t, p)
    err = {}
    for soft in (False, True):
        shim = types.SimpleNamespace(forward=lambda t, v, soft=soft: np.sum(
            getattr(obj, lname)(*pair(lname, softmax(v) if soft else v, t))))
        at = z if soft else softmax(z)
        try:
            with np.errstate(all="ignore"):
                g = np.asarray(getattr(obj, gname)(*pair(gname, softmax(z), y_true)), dtype=np.float64)
                err[soft] = _directional_error(shim, y_true, at, g) if g.shape == z.shape else 1.0
        except Exception as exc:  # noqa: BLE001 - the student's loss: named in the words, the check calls it again
            err[soft] = _raised(exc)
        err[soft] = err[soft] if isinstance(err[soft], str) or np.isfinite(err[soft]) else 1.0
    size = {k: 2.0 if isinstance(e, str) else e for k, e in err.items()}  # a reading that raised: the farthest
    if size[False] < 1e-3 or size[True] < 1e-3:
        return size[False] >= 1e-3, ""

    def said(e):
        return e if isinstance(e, str) else f"relative error {e:.2g}"
    kind = "one-hot targets" if rows and np.all((y_true == 0) | (y_true == 1)) else "targets whose rows sum to 1"
    return size[True] < size[False], (
        f"; neither reading of {gname}(y, y_pred) matches {lname}'s central differences on a probe (softmax "
        f"predictions, {kind}): as dL/dy_pred, {said(err[False])}; as dL/dz with y_pred = softmax(z) (numpy-ml's "
        f"CrossEntropy), {said(err[True])}; checked as the closer")


#: The words of :func:`_order_unread`, which ``gradcheck check`` repeats under a loss's FAIL.
ORDER_UNREAD = "the names do not say which is the prediction"


def _order_unread(obj, lname, gname):
    """The header's words for a named loss whose arguments' names do not say which is the prediction (newuser32 F3:
    ``loss(self, a, b)``, ``gradient(self, a, b)`` FAILed with 1e15 errors and no word of the order): the order
    assumed, ``(y, y_pred)``, how to name them, and whether the other order's gradient matches the loss's central
    differences on a probe in (0.05, 0.95) (:func:`_directional_error`, :func:`_order_by_role`'s thresholds)."""
    names = ", ".join(loss_order(getattr(obj, lname))[1])
    rng = probe_rng(0)
    y_pred, y_true = rng.uniform(0.05, 0.95, (4, 3)), rng.uniform(0.05, 0.95, (4, 3))
    err = {}
    for pred_first in (False, True):
        def pair(p, t, pred_first=pred_first):
            return (p, t) if pred_first else (t, p)
        shim = types.SimpleNamespace(forward=lambda t, p, pair=pair: np.sum(getattr(obj, lname)(*pair(p, t))))
        try:
            g = np.asarray(getattr(obj, gname)(*pair(y_pred, y_true)), dtype=np.float64)
            err[pred_first] = _directional_error(shim, y_true, y_pred, g) if g.shape == y_pred.shape else 1.0
        except Exception:  # noqa: BLE001 - the student's loss: the check calls it again and says so
            err[pred_first] = 1.0
    swapped = (f"; in the other order, {lname}({names}) and {gname}({names}) with the prediction first, {gname} "
               f"matches {lname}'s central differences (on values in (0.05, 0.95)): if {names.split(', ')[0]} is "
               "your prediction, that is the order to name") if err[True] < 1e-3 and err[False] > 1e-2 else ""
    return (f"; {lname}({names}) and {gname}({names}): {ORDER_UNREAD}, so "
            f"ML-From-Scratch's order (y, y_pred), the target first, is assumed; name them (y, y_pred) or (y_pred, "
            f"y_true) to say which{swapped}")


def _backprop_pair(cls):
    """``(feedforward, backprop)``: the names of a class's forward ``NAME(a)`` and of its ``backprop(x, y)`` returning
    the gradients of its weights for a cost of its output and the labels ``y`` (Michael Nielsen's network.py and
    network2.py: ``backprop(x, y) -> (nabla_b, nabla_w)``, no dX), when it has them and no forward/backward; else None."""
    if not isinstance(cls, type) or any(m in vars(k) for k in cls.__mro__[:-1] for m in ("forward", "backward")):
        return None

    def takes(name, n):
        fn = getattr(cls, name, None)
        ps = [p for p in (_params(fn) or {}).values() if p.kind in _POSITIONAL and p.name != "self"] if \
            inspect.isfunction(fn) else []
        return len(ps) >= n and all(p.default is not p.empty for p in ps[n:])
    back = next((n for n in ("backprop", "backpropagate", "back_prop") if takes(n, 2)), None)
    feed = next((n for n in ("feedforward", "feed_forward", "predict_raw") if takes(n, 1)), None)
    return (feed, back) if back and feed else None


def _backprop_calls(cls, back):
    """How a class's own methods call ``self.BACK(x, y)`` (read with :mod:`ast`, nothing runs: Nielsen's
    ``update_mini_batch``): ``(order, batched)``. ``order`` is the unpacking of the call's result, ``"bw"`` for
    ``delta_nabla_b, delta_nabla_w = self.backprop(x, y)`` (a name ending in b or naming bias, one ending in w or
    naming weight), ``"wb"`` the other way, None when no call is unpacked so; ``batched`` is True when a call's x
    is not a name its loop takes one sample at a time (network.py's ``for x, y in mini_batch:``, a comprehension's
    ``for x, y in batch``): a matrix port's ``self.backprop(np.hstack(xs), ...)``, False when every call is in such a
    loop, None when no method calls it."""
    order, batched = None, None

    def kind(t):
        n = t.id.lower() if isinstance(t, ast.Name) else ""
        return "b" if n.endswith("b") or "bias" in n else "w" if n.endswith("w") or "weight" in n else ""

    def visit(node, looped):
        nonlocal order, batched
        targets = [node.target] if isinstance(node, ast.For) else [g.target for g in getattr(node, "generators", [])]
        looped = looped | {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _calls_self(node.value, back) and \
                len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) and len(node.targets[0].elts) == 2:
            got = "".join(kind(t) for t in node.targets[0].elts)
            order = got if got in ("bw", "wb") else order
        if isinstance(node, ast.Call) and _calls_self(node, back) and node.args:
            one = isinstance(node.args[0], ast.Name) and node.args[0].id in looped
            batched = (batched or False) or not one
        for child in ast.iter_child_nodes(node):
            visit(child, looped)
    for k in cls.__mro__[:-1]:
        for name, fn in vars(k).items():
            tree = _source(fn) if inspect.isfunction(fn) and name != back else None
            if tree is not None:
                visit(tree, frozenset())
    return order, batched


def _calls_self(call, name):
    """True when ``call`` is ``self.NAME(...)``."""
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr == name and isinstance(f.value, ast.Name) and f.value.id == "self"


#: Nielsen's quadratic cost (network.py: ``cost_derivative = a - y``; network2.py's ``QuadraticCost.fn``)
QUADRATIC = "0.5*||a - y||^2"
#: the words of :func:`backprop_as_model`'s header that say a Nielsen network is checked (read by the diagnosis)
NIELSEN = "(Nielsen's network.py)"


def nielsen_methods(text):
    """``(feedforward, backprop)``: the names of the methods a Nielsen network is checked through, read from its
    protocol's ``text`` (:func:`backprop_as_model`'s words, ending in :data:`NIELSEN`), or None for another text."""
    m = re.search(r"(\w+)\(a\) and (\w+)\(x, y\) -> the gradients of [^;]*" + re.escape(NIELSEN), str(text))
    return (m[1], m[2]) if m else None


def nielsen_lists(lists):
    """``(weight, bias)``: the names, among ``lists`` (``{name: [arrays]}``), of Nielsen's weight list (its first
    array ``(n1, n0)``, ``n0 > 1``) and of its bias list (its first array ``(n1, 1)``), each None when not found:
    the one reading of a network's layers for :func:`backprop_as_model` and the diagnosis of its backprop."""
    weight = next((k for k, v in lists.items() if np.ndim(v[0]) == 2 and np.shape(v[0])[1] > 1), None)
    bias = next((k for k, v in lists.items() if weight and np.shape(v[0]) == (np.shape(lists[weight][0])[0], 1)), None)
    return weight, bias


def backprop_as_model(obj, each=False):
    """Nielsen's network (:func:`_backprop_pair`: ``feedforward(a)``, ``backprop(x, y) -> (nabla_b, nabla_w)``) as
    Deep Learning from Scratch vol. 2's model ``forward(x, t) -> cost``, ``backward(dout=1)``, which
    :func:`with_targets` (``--targets real@N_OUT,M`` without ``--loss``) checks against central differences of the
    cost: a same-named subclass whose forward sums the cost of each column ``x[:, j]`` (one sample, as
    ``update_mini_batch`` feeds them) with its target ``t[:, j]`` (the network's own ``self.cost.fn(a, y)``,
    network2.py, else :data:`QUADRATIC`, network.py's), and whose backward sums ``backprop``'s gradients over the
    columns (a matrix port's of the whole x, :func:`_backprop_calls`), times ``dout``, into ``grads``, returned as
    (``biases``, ``weights``) (:func:`_nabla_checked`), ``params`` their arrays (the same objects); dX read from the first
    layer's delta (``z1 = W1 x + b1``: ``dC/dx = W1.T @ dC/db1``), which backprop returns as its first bias
    gradient (it computes no dX itself). Returns the header's words, or "" for another class (or one that cannot be extended).
    ``each``: the grader's reading of a result of a wrong shape, each array under its name (:func:`_by_list`).
    """
    pair = _backprop_pair(type(obj))
    if pair is None:
        return ""
    feed, back = pair
    lists = {k: v for k, v in vars(obj).items() if isinstance(v, list) and v and all(
        isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in v)}
    if not lists:
        return ""
    # z1 = W x + b (network.py's first layer): dC/dx = W.T @ delta1, delta1 = dC/db1, backprop's first bias gradient
    weight, bias = nielsen_lists(lists)
    if weight is None or bias is None:
        return ""
    cost = getattr(getattr(obj, "cost", None), "fn", None)
    named = f"{getattr(obj.cost, '__name__', type(obj.cost).__name__)}.fn(a, y)" if callable(cost) else QUADRATIC

    def forward(self, x, t):
        self._pair = (np.array(x, copy=True), np.array(t, copy=True))
        total = 0.0
        for xj, tj in zip(_columns(x), _columns(t), strict=True):
            a = getattr(self, feed)(xj)
            total += float(cost(a, tj)) if callable(cost) else 0.5 * float(np.sum((a - tj) ** 2))
        return total

    order, batched = _backprop_calls(type(obj), back)
    expect = [weight, bias] if order == "wb" else [bias, weight]  # update_mini_batch's unpacking, else the book's

    def returned(self, xj, tj, what):  # backprop's (nabla_b, nabla_w): each list in its place, each array its shape
        got = [[np.asarray(g, dtype=np.float64) for g in r] for r in _unwritten_call(self, back, xj, tj)]
        return _nabla_checked(got, [(k, lists[k]) for k in expect], [_nabla_owner(r, lists) for r in got],
                              f"{back}(x, y){what}", "as update_mini_batch unpacks them" if order else
                              "as network.py returns them", bias, each)

    def by_list(got):
        return _by_list(got, lists, expect, each)

    def backward(self, dout=1.0):
        x, t = self._pair
        sums, dxs = None, []
        for xj, tj in zip(_columns(x), _columns(t), strict=True):
            got = returned(self, xj, tj, f" with one sample x[:, j] of shape {xj.shape}")
            sums = got if sums is None else [[a + g for a, g in zip(s, r, strict=True)] for s, r in zip(sums, got, strict=True)]
            delta = (by_list(got).get(bias) or [None])[0]  # the first layer's delta, dC/dz1
            dxs.append(lists[weight][0].T @ delta if np.shape(delta) == lists[bias][0].shape else None)
        self.__dict__[STEP_SUMS] = {f"{k}[{i}]": g for k, r in by_list(sums or []).items() for i, g in enumerate(r)}
        if np.ndim(x) == 2 and np.shape(x)[1] > 1 and batched is not False:  # a matrix port: the whole batch at once
            try:  # Nielsen's convention: the gradient of the sum of the per-sample costs over what it is given
                sums = returned(self, x, t, f" with the whole batch x of shape {np.shape(x)} (one sample per column)")
            except Exception as exc:  # noqa: BLE001 - no method feeds it a batch: the one-sample backprop (network.py)
                if isinstance(exc, BackpropInputWritten) or batched and not (
                        isinstance(exc, BackpropResultError) and _columns_summed(self, back, x, t, sums)):
                    raise
        self.grads = {f"{k}[{i}]": float(dout) * g for k, r in by_list(sums or []).items() for i, g in enumerate(r)}
        self.__dict__[STEP_LAST] = {f"{k}[{i}]": g for k, r in by_list(got).items() for i, g in enumerate(r)}
        if any(d is None for d in dxs):
            return None
        return float(dout) * (np.concatenate(dxs, axis=1) if np.ndim(x) == 2 else dxs[0].reshape(np.shape(x)))

    if not _subclass(obj, None, {STEP_STATE: (back, list(lists))}, forward=forward, backward=backward):
        return ""
    obj.params = {f"{k}[{i}]": a for k, v in lists.items() for i, a in enumerate(v)}
    obj.grads = {}
    return (f"{feed}(a) and {back}(x, y) -> the gradients of {', '.join(lists)} {NIELSEN}: checked as a "
            f"model whose cost of a batch is the sum over its columns x[:, j] (one sample each) of {named}, a = "
            f"{feed}(x[:, j]), y = t[:, j]; {back}'s gradients "
            f"{'of the whole x, as update_mini_batch feeds it' if batched else 'summed over the columns'}; "
            f"{back} computes no dX: dX is read from its first layer's delta, {weight}[0].T @ (its gradient of "
            f"{bias}[0]), as z = {weight}[0] x + {bias}[0] gives it")


def _columns_summed(obj, back, x, t, sums):
    """Whether ``obj.BACK(x, t)`` of the whole batch returns network.py's per-column bias deltas, ``nabla_b[i]`` of
    shape (n, m) where the bias is (n, 1), whose columns' sum (and the other arrays as they are) equals ``sums``, the
    sum of its one-sample gradients (two lists, in the order it returns them), to rounding: a matrix port whose
    ``update_mini_batch`` sums the bias columns itself (verify36 F2: FAILed "nabla_b[0] has shape (3, 2), expected
    (3, 1)"). Its gradients are then read as ``sums``; any other result keeps its error."""
    if not sums or len(sums) != 2:
        return False
    got = _unwritten_call(obj, back, np.array(x, copy=True), np.array(t, copy=True))
    if not isinstance(got, (list, tuple)) or len(got) != 2:
        return False
    m, seen = np.shape(x)[1], False
    for r, s in zip(got, sums, strict=True):
        if not isinstance(r, (list, tuple)) or len(r) != len(s):
            return False
        for g, a in zip(r, s, strict=True):
            g = np.asarray(g, dtype=np.float64)
            if g.shape != a.shape:
                if not (a.ndim == 2 and a.shape[1] == 1 and g.shape == (a.shape[0], m)):
                    return False
                g, seen = g.sum(axis=1, keepdims=True), True
            if not close(g, a, 1e-9, 1e-12):
                return False
    return seen


def _columns(x):
    """The columns of ``x`` (one sample each, ``x[:, j:j+1]``) as float64, or ``[x]`` when it is not 2-D."""
    x = np.asarray(x, dtype=np.float64)
    return [x[:, j:j + 1] for j in range(x.shape[1])] if x.ndim == 2 else [x]


def _nabla_owner(r, lists):
    """The name of the list of ``lists`` (``{name: arrays}``) whose shapes a returned list of gradients ``r`` has."""
    return next((k for k, v in lists.items() if [a.shape for a in v] == [np.shape(g) for g in r]), None)


def _by_list(got, lists, expect, each):
    """``{list name: returned list}`` of backprop's result ``got``: each list under the name of the list whose shapes
    it has (:func:`_nabla_owner`); with ``each`` (the grader's, :attr:`gradcheck.sandbox.Sandbox.nabla_parts`) also by
    position (``expect``'s order: the biases' first as network.py returns them, or as update_mini_batch unpacks them),
    so an array of another shape, or a list of another length, is scored as it came, each tensor alone (nielsen36: one
    wrong ``nabla_b`` shape scored the whole gradient test 0; dX, read from the first bias gradient, is None when that
    has another shape). Without it (``gradcheck check``) :func:`_nabla_checked` has named such a result (exit 1)."""
    by = {_nabla_owner(r, lists): r for r in got if _nabla_owner(r, lists)}
    return {**dict(zip(expect, got)), **by} if each and len(got) == 2 else by


#: the key of a Nielsen network's ``__dict__`` where :func:`backprop_as_model` keeps ``(backprop's name, the names of
#: its array lists)`` for :func:`nielsen_step`
STEP_STATE = "_gradcheck_nielsen"
#: the key where the model's backward keeps backprop's gradients of the last sample (column) it was given, which
#: :func:`nielsen_step` returns beside the step (a step using the last sample's gradient alone is named by them)
STEP_LAST = "_gradcheck_nielsen_last"
#: the key where the model's backward keeps the sum over the columns of backprop's one-sample gradients (network.py's
#: ``nabla``), which :func:`nielsen_step` returns: a matrix port's whole-batch ``nabla_b`` is (n, m), not the step's
#: (n, 1) (verify36 F1)
STEP_SUMS = "_gradcheck_nielsen_sums"
#: the names of ``update_mini_batch``'s parameters after ``(mini_batch, eta)`` that take network2.py's L2 strength
#: ``lmbda`` and the training set's size ``n`` (``update_mini_batch(mini_batch, eta, lmbda, n)``)
STEP_KEYWORDS = {"lmbda": ("lmbda", "lmbd", "lam", "lamb", "lambd", "lambda_", "reg", "l2", "weight_decay"),
                 "n": ("n", "n_train", "n_data", "n_samples", "n_total", "training_size", "len_training_data",
                       "num_training", "big_n")}


def step_method(obj, back):
    """``(name, {keyword: parameter})``: Nielsen's ``update_mini_batch(mini_batch, eta, ...)`` among ``obj``'s methods
    (that name, else the one method of two or more positional arguments that calls ``self.BACK(x, y)`` itself), and
    which of :data:`STEP_KEYWORDS` its later parameters take (``{"lmbda": "lmbda", "n": "n"}`` for network2.py's).
    AdapterError when there is none, or a later parameter without a default is none of them (what gradcheck would
    pass it is unknown)."""
    cls = type(obj)

    def positional(fn):
        return [p for p in (_params(fn) or {}).values() if p.kind in _POSITIONAL and p.name != "self"]
    found = [n for k in cls.__mro__[:-1] for n, f in vars(k).items() if inspect.isfunction(f) and n != back
             and len(positional(f)) >= 2 and (t := _source(f)) is not None
             and any(isinstance(c, ast.Call) and _calls_self(c, back) for c in ast.walk(t))]
    name = "update_mini_batch" if callable(getattr(obj, "update_mini_batch", None)) else (
        found[0] if len(set(found)) == 1 else None)
    if name is None:
        raise AdapterError(f"{cls.__name__} has no update_mini_batch(mini_batch, eta) (no method of two arguments or "
                           f"more that calls self.{back}(x, y) itself" + (f": {', '.join(sorted(set(found)))} do"
                                                                            if found else "") + ")")
    taken = {}
    for p in positional(getattr(obj, name))[2:]:
        key = next((k for k, names in STEP_KEYWORDS.items() if p.name.lower() in names), None)
        if key is None and p.default is p.empty:
            raise AdapterError(f"{cls.__name__}.{name}'s argument {p.name} is neither the L2 strength lmbda nor the "
                               "training set's size n (network2.py's update_mini_batch(mini_batch, eta, lmbda, n)): "
                               "gradcheck does not know what to pass it")
        if key is not None:
            taken[key] = p.name
    return name, taken


def nielsen_step(obj, x, t, eta, lmbda, n):
    """One ``update_mini_batch`` (:func:`step_method`) of a copy of Nielsen's network ``obj`` (as
    :func:`backprop_as_model` presents it; ``copy.deepcopy``: the network itself is not stepped, nor any velocity it
    keeps) on the mini-batch of ``x``'s columns with ``t``'s (``[(x[:, j:j+1], t[:, j:j+1])]``, network.py's list of
    ``(x, y)`` tuples), learning rate ``eta``, and ``lmbda``, ``n`` to the parameters that take them. Returns
    ``({"weights[0]": array, ...}, name, [keywords given], {"weights[0]": the last sample's gradient, ...}, sums,
    names)``: the
    arrays of the copy's lists after the step (float64 copies; an entry that is not an array as it is), and backprop's
    gradients of the last column of the model's last backward (:data:`STEP_LAST`, {} before any), their sum over its columns
    (:data:`STEP_SUMS`, alike) and the method's first two parameters' names. TypeError naming the order when it takes
    ``eta`` first; BackpropResultError when it wrote into the mini-batch's ``x`` or ``y``. AdapterError for a network :func:`backprop_as_model` did not
    present, or whose step method cannot be called (:func:`step_method`)."""
    for _ in range(8):  # the student's object behind the adapters' (``.obj``)
        if STEP_STATE in getattr(obj, "__dict__", {}) or not hasattr(obj, "obj"):
            break
        obj = obj.obj
    back, names = getattr(obj, "__dict__", {}).get(STEP_STATE) or (None, None)
    if back is None:
        raise AdapterError(f"{type(obj).__name__} is not Nielsen's network (feedforward and backprop(x, y))")
    name, taken = step_method(obj, back)
    new = copy.deepcopy(obj)
    x, t = np.asarray(x, dtype=np.float64), np.asarray(t, dtype=np.float64)
    batch = [(x[:, j:j + 1].copy(), t[:, j:j + 1].copy()) for j in range(x.shape[1])]
    kept = [(a.copy(), b.copy()) for a, b in batch]
    given = {"lmbda": lmbda, "n": n}
    params = [p.name for p in (_params(getattr(type(obj), name, None)) or {}).values()
              if p.kind in _POSITIONAL and p.name != "self"]
    said = f"{name}({', '.join(params[:2]) or 'mini_batch, eta'})"
    try:
        getattr(new, name)(batch, eta, **{p: given[k] for k, p in taken.items()})
    except TypeError as exc:  # verify36 F7: update_mini_batch(self, eta, mini_batch) meets a float where it iterates
        if len(params) >= 2 and params[0].lower() in ("eta", "lr", "learning_rate", "alpha"):
            raise TypeError(f"{exc} (gradcheck calls {name} as Nielsen's network.py does, positionally as "
                            f"{name}(mini_batch, eta); {type(obj).__name__}.{name} takes ({', '.join(params)}): "
                            f"put the mini-batch first, ({', '.join([params[1], params[0], *params[2:]])}))") from exc
        raise
    for j, ((a, b), (a0, b0)) in enumerate(zip(batch, kept, strict=True)):  # verify36 F11: the training data itself
        for v, arr, was in (("x", a, a0), ("y", b, b0)):
            if not (isinstance(arr, np.ndarray) and np.array_equal(arr, was, equal_nan=True)):
                raise BackpropResultError(f"{name} modified its mini-batch's {v} in place (sample {j}, "
                                          f"{said} wrote into it): the caller's training data itself (network.py's SGD gives it "
                                          "training_data's arrays; every later epoch trains on the changed data)")
    out = {}
    for k in names:
        v = getattr(new, k, None)
        for i, a in enumerate(v if isinstance(v, (list, tuple)) else [v]):
            out[f"{k}[{i}]"] = np.array(a, dtype=np.float64) if isinstance(a, np.ndarray) else a
    return (out, name, sorted(taken), dict(obj.__dict__.get(STEP_LAST) or {}), dict(obj.__dict__.get(STEP_SUMS) or {}),
            params[:2])


def _unwritten_call(obj, back, x, y):
    """``obj.BACK(x, y)`` (Nielsen's ``backprop``), BackpropInputWritten when it wrote into ``x`` or ``y``: the caller's
    arrays (network.py's training data itself; nielsen35 F11: undetected, its gradients blamed on residual branches)."""
    given = x.copy(), y.copy()
    got = getattr(obj, back)(x, y)
    for name, a, was in zip("xy", (x, y), given, strict=True):
        if not np.array_equal(a, was, equal_nan=True):
            raise BackpropInputWritten(f"{type(obj).__name__}.{back}(x, y) wrote into {name}")
    return got


def _nabla_checked(got, expect, owners, call, said, bias, each=False):
    """``got``, the two lists ``call`` (Nielsen's ``backprop(x, y)``) returned, when they are ``expect``'s
    (``[(name, arrays)]``: the biases' and the weights', in the order ``said``) in that order and of those shapes;
    ``owners`` the name of the list each returned list has the shapes of. BackpropResultError (a wrong result, exit
    1) naming the list, the index, the shape and the one expected (``nabla_w[0] has shape (3, 3), expected (3,
    4)``), or the swapped order; ``each`` (:func:`backprop_as_model`'s): only the swapped order raises. Any other
    number of lists: ``got`` as it is (paired by shape)."""
    if len(got) != 2:
        return got

    def nabla(k):
        return f"nabla_{'b' if k == bias else 'w'}"
    (k0, _), (k1, _) = expect
    if owners == [k1, k0]:
        raise BackpropResultError(f"{call} returned in the wrong order ({nabla(k1)}, {nabla(k0)}): the gradients of {k1} "
                         f"first; expected ({nabla(k0)}, {nabla(k1)}), {said}")
    if each:
        return got
    for r, (k, arrays) in zip(got, expect, strict=True):
        for i, (g, a) in enumerate(zip(r, arrays)):
            if g.shape != a.shape:
                raise BackpropResultError(f"{call}: {nabla(k)}[{i}] has shape {g.shape}, expected {a.shape} (the shape of "
                                 f"{k}[{i}])")
        if len(r) != len(arrays):
            raise BackpropResultError(f"{call}: {nabla(k)} has {len(r)} arrays, expected {len(arrays)} (one per array of {k})")
    return got


def backprop_usage(obj, file=""):
    """The usage error for Nielsen's network (:func:`backprop_as_model`) checked without ``--targets``: the command
    that checks it (its sizes read from its weights)."""
    lists = [v for v in vars(obj).values() if isinstance(v, list) and v and all(isinstance(a, np.ndarray) for a in v)]
    w = next((v for v in lists if all(a.ndim == 2 and a.shape[1] > 1 for a in v)), None)
    n_in, n_out = (w[0].shape[1], w[-1].shape[0]) if w else (4, 2)
    name, base = type(obj).__name__, os.path.basename(file) or "FILE"
    back = (_backprop_pair(type(obj).__bases__[0]) or ("", "backprop"))[1]
    return (f"{name} has no forward() and no backward(): its {back}(x, y) returns the "
            f"gradients of its weights for a cost of its output and the labels y, and computes no dX. gradcheck checks "
            f"such a network as a model against central differences of its cost (Nielsen's quadratic cost {QUADRATIC}, "
            f"or self.cost.fn(a, y) when the network has a cost, as network2.py's), x held fixed, given the labels "
            f"with --targets real@N_OUT,M (y of shape (N_OUT, M), one column per sample of x (N_IN, M)): gradcheck "
            f"check {base}::{name} --input-shape {n_in},2 --targets real@{n_out},2 --init ... (the constructor's "
            f"arguments, e.g. '{{\"sizes\": [{n_in}, 3, {n_out}]}}').")


def _same_loss(name, got, again):
    """UnreadableError when a model's loss at the same x and t, ``got`` then ``again``, differs beyond rounding: it
    draws new random numbers on every call (DLfS's ``Dropout``, CS231n's ``dropout_forward`` without a seed)."""
    if not close(again, got, 1e-10, 0.0):  # the one rule, at rounding's tolerance
        raise UnreadableError(
            f"{name}'s loss differs between two calls at the same x and t ({float(np.sum(got)):.6g}, then "
            f"{float(np.sum(again)):.6g}): it draws new random numbers on every call (a dropout mask without a seed), "
            "so no gradient can be compared with central differences of it. Build it with a seed (CS231n's "
            "FullyConnectedNet: --init '{\"seed\": 0, ...}', which seeds each dropout call) or without dropout.")


def model_usage(obj, file="", loss=False):
    """The usage error for a model of :func:`model_as_layer` checked without ``--targets`` (or, ``loss``, with
    ``--loss``: it is no loss of a prediction): the command that checks it (its sizes read from its first and last
    arrays of ``params``)."""
    arrays = [v for v in getattr(obj, "params", {}).values() if np.ndim(v) >= 1]
    n_in = arrays[0].shape[0] if arrays and arrays[0].ndim == 2 else "D"
    k = arrays[-1].shape[-1] if arrays else "K"
    name, base = type(obj).__name__, os.path.basename(file) or "FILE"
    need = ("not of a prediction, so it is checked without --loss" if loss else "so the labels are needed")
    return (f"{name} is a model, {MODEL_WORDS[model_gradients(type(obj).__bases__[0])]}: its gradients are of a loss "
            f"of the data x and the labels t, {need}: gradcheck check {base}::{name} --input-shape "
            f"N,{n_in} --targets labels:{k} --init ... (N the batch size, K the number of classes; for a convolutional "
            "net, --input-shape N,C,H,W).")


def with_targets(obj, t):
    """Deep Learning from Scratch vol. 2's model ``forward(x, t) -> loss``, ``backward(dout=1)`` (Y13) as a layer
    ``forward(x) -> L`` (shape (1,)), ``backward(dY) -> backward(dout=dY)``: a same-named subclass holding the
    targets ``t`` (a copy per call). The model's ``params``/``grads`` lists are read as any layer's.
    AdapterError when forward does not take two arrays (x, t)."""
    cls = type(obj)
    fwd, bwd = getattr(cls, "forward", None), getattr(cls, "backward", None)
    ps = [p for p in (_params(fwd) or {}).values() if p.kind in _POSITIONAL and p.name != "self"]
    switch = mode_keyword(fwd) if inspect.isfunction(fwd) else None  # forward(X, training=False): not targets
    switches = [p.name for p in ps[1:] if isinstance(p.default, bool) or switch and p.name == switch[0]]
    if inspect.isfunction(fwd) and not callable(bwd) and len(ps) - len(switches) >= 2:  # corpus40 M1 (CS7643 HW1)
        raise AdapterError(
            f"--targets without --loss is for a model forward(x, t) -> loss with a backward(dout=1) returning dX "
            f"(Deep Learning from Scratch vol. 2); {cls.__name__}.forward takes {', '.join(p.name for p in ps)}, but "
            f"{cls.__name__} has no backward(): a forward that computes the loss and its weights' gradients itself "
            "(Georgia Tech CS7643's forward(X, y, mode='train') storing self.gradients) is not a protocol gradcheck "
            "reads. Check its layers one by one, or add a backward(dout=1) returning dX, its gradients in self.grads.")
    if not (inspect.isfunction(fwd) and callable(bwd)) or len(ps) - len(switches) < 2:
        what = f" ({', '.join(switches)}: a training switch, not targets)" if switches else ""
        raise AdapterError(f"--targets without --loss is for a model forward(x, t) -> loss (Deep Learning from "
                           f"Scratch vol. 2); {cls.__name__}.forward takes {', '.join(p.name for p in ps) or 'no array'}"
                           f"{what}.")
    if not [p for p in (_params(bwd) or {}).values() if p.name != "self"]:
        raise AdapterError(f"{cls.__name__}.backward() takes no dout, as a loss's: for a loss class, add --loss "
                           "(--targets without --loss is for a model forward(x, t) -> loss, backward(dout=1)).")
    t = np.array(t, copy=True)

    def forward(self, x):
        loss = fwd(self, x, t.copy())
        if np.size(loss) != 1:
            raise UnreadableError(f"--targets without --loss is for a model forward(x, t) -> loss, a scalar; "
                                  f"{cls.__name__}.forward(x, t) returned shape {np.shape(loss)}.")
        return _one_loss(loss)

    def backward(self, dY):
        return bwd(self, float(np.asarray(dY, dtype=np.float64).reshape(-1)[0]))

    forward.__doc__, backward.__doc__ = fwd.__doc__, getattr(bwd, "__doc__", None)
    _subclass(obj, "", forward=forward, backward=backward)


def _one_loss(y):
    """A forward's one number ``y`` as shape (1,): an autoprop Tensor (``--tape`` runs forward on them) reshaped
    on the tape, so the tape still sees the loss (fixk30 M2: ``np.array`` on it lost the tape's gradients and
    blamed the student's forward); anything else as a float64 array."""
    tensor = getattr(sys.modules.get("autoprop.core.tensor"), "Tensor", None)  # loaded when a Tensor can come
    if tensor is not None and isinstance(y, tensor):
        return y.reshape(1)
    return np.array(y, dtype=np.float64).reshape(1)


#: The header's words for a forward giving one number (:func:`scalar_output`).
SCALAR_OUTPUT = ("forward gives one number (Y a scalar, as a penalty or a loss of X alone): checked as Y of shape (1,), "
                 "backward given dY as one number (np.float64), as PyTorch's backward of a 0-d tensor")


def _one_number(y) -> bool:
    """Whether ``y`` is one real number: a Python or numpy int or float (not a bool), or a 0-d real array."""
    if isinstance(y, (bool, np.bool_)):
        return False
    if isinstance(y, (int, float, np.integer, np.floating)):
        return True
    return isinstance(y, np.ndarray) and y.ndim == 0 and y.dtype.kind in "iuf"


def scalar_output(obj, inputs) -> bool:
    """A layer whose ``forward(X)`` gives one number (an L2 penalty ``0.5 * lam * sum(X**2)``; newuser29 M1: "wrong
    result" before) presented as ``forward(X) -> Y`` of shape (1,), ``backward(dY) -> backward(dY as np.float64)``:
    a same-named subclass (:func:`_subclass`), as :func:`with_targets` presents a model's loss. Done only when a
    probe on ``inputs`` (state restored) sees forward give one number (:func:`_one_number`) and backward, given
    ``np.float64(1.0)``, return an array of the first input's shape (or a tuple beginning with one): a forward
    meant to return an array whose backward cannot take a number is left as it is, for the check to say what it
    gave. True when presented so."""
    cls = type(obj)
    fwd, bwd = getattr(cls, "forward", None), getattr(cls, "backward", None)
    if not (inspect.isfunction(fwd) and inspect.isfunction(bwd)) or not inputs or not all(
            isinstance(x, np.ndarray) for x in inputs):
        return False
    with _all_undone([obj]) as rewind:
        try:
            rewind()
            if not _one_number(_forward(obj, [x.copy() for x in inputs], {})):
                return False
            dx = obj.backward(np.float64(1.0))
        except Exception:  # noqa: BLE001 - student code: the check runs it again and reports what it does
            return False
    first = dx[0] if isinstance(dx, tuple) and dx else dx
    if not (isinstance(first, np.ndarray) and first.shape == inputs[0].shape):
        return False

    @functools.wraps(fwd)
    def forward(self, *xs, **kw):
        return _one_loss(fwd(self, *xs, **kw))

    @functools.wraps(bwd)
    def backward(self, dY, *more, **kw):
        return bwd(self, np.float64(np.asarray(dY, dtype=np.float64).reshape(-1)[0]), *more, **kw)

    return _subclass(obj, None, forward=forward, backward=backward)


def signature(obj):
    """``(forward's array parameter names, {forward_required, forward_varargs, forward_training,
    backward_params, backward_varargs})`` of the student's own methods (a wrapper's ``student_forward``,
    ``student_backward`` and ``keyword_names``: :func:`_wrapper_attr`)."""
    fwd = _wrapper_attr(obj, "student_forward") or getattr(obj, "forward", None)
    bwd = _wrapper_attr(obj, "student_backward") or getattr(obj, "backward", None)
    out, fparams, mk = {}, [], mode_keyword(fwd)
    skip = set(_wrapper_attr(obj, "keyword_names") or ()) | {"self", "training"} | ({mk[0]} if mk else set())
    if (ps := _params(fwd)) is not None:
        ps = ps.values()
        fparams = [p.name for p in ps if p.kind in _POSITIONAL and p.name not in skip]
        out["forward_required"] = sum(1 for p in ps if p.name in fparams and p.default is p.empty)
        out["forward_varargs"] = any(p.kind == p.VAR_POSITIONAL for p in ps)
        out["forward_training"] = (any(p.name == "training" or p.kind == p.VAR_KEYWORD for p in ps) or mk is not None
                                   ) and getattr(type(obj), "mode_in_keywords", False) is not True  # tester33 F4:
        # a function pair's adapter passes no training to the student's forward (pool_forward's mode="max" read as
        # a switch ran both "modes", and the footer said "pass training=True / --training", which exits 2)
        if frozen_backward(fwd, bwd):
            out["eval_backward"] = False  # config.training_modes: "auto" checks training mode alone
    if (ps := _params(bwd)) is not None:
        out["backward_params"] = [p.name for p in ps.values() if p.kind in _POSITIONAL]
        out["backward_varargs"] = any(p.kind == p.VAR_POSITIONAL for p in ps.values())
    return fparams, out


def _wrapper_attr(obj, name: str):
    """Attribute ``name`` of ``obj`` when ``obj`` is one of gradcheck's own wrappers (:class:`FunctionPair`,
    :class:`BoundLoss`, :class:`Adapted`), which set it; else None: a student's layer with an attribute of that name
    (``self.keyword_names = 5``, a helper method ``student_forward``) is read as any layer (redteam36 F2: the int
    raised TypeError in :func:`signature`, told as the student's ``__init__`` raising; F2d: the helper's parameters
    were read as forward's)."""
    return getattr(obj, name, None) if isinstance(obj, (FunctionPair, BoundLoss, Adapted)) else None


def frozen_backward(fwd, bwd):
    """``"self.trainable"`` when forward's switch (:func:`mode_keyword`) is the attribute ``self.NAME`` and backward
    asserts it (numpy-ml's ``assert self.trainable, "Layer is frozen"``): eval mode has no backward, so "auto" checks
    training mode alone (tester23s M1); else None."""
    mk = mode_keyword(fwd) if callable(fwd) else None
    if not mk or not mk[0].startswith("self.") or ", " in mk[0] or "[" in mk[0] or mk[2] is not True:
        return None
    attr = mk[0].removeprefix("self.")
    tree = _source(bwd) if callable(bwd) else None
    hit = tree is not None and any(isinstance(n, ast.Assert) and _switch_reach.self_attr(n.test) == attr
                                   for n in ast.walk(tree))
    return mk[0] if hit else None


def _numbers(e) -> bool:
    """A non-empty list of real numbers (not bools), as JSON writes an array."""
    return isinstance(e, list) and bool(e) and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in e)


class FunctionPair:
    """``NAME_forward``/``NAME_backward`` as a layer: every array argument is an input.

    ``init`` holds the other arguments (``conv_param``, ``bn_param``), deep-copied for every call
    (each forward starts from the same state); :attr:`call_keywords` are the last call's copies as
    the student's forward left them (graded: the running statistics written into ``bn_param``).
    """

    params = {}
    grads = {}
    #: its mode is a keyword argument (``bn_param['mode']``): :func:`gradcheck.config.training_modes` reads the
    #: student's forward, not this adapter's, whose ``training`` keyword is accepted and not used
    mode_in_keywords = True

    def __init__(self, fwd, bwd, init, dtype="float64"):
        self.student_forward, self.student_backward = fwd, bwd
        # JSON (--init) has no arrays: a list of numbers in a *_param dict (bn_param's running_mean)
        # is the (D,) array CS231n hands in; student code does arithmetic on it; in --dtype's dtype, as the
        # inputs are drawn (session 30: float64 beside float32 inputs, the pair was checked in neither)
        self.as_arrays = [f"{k}['{j}']" for k, v in (init or {}).items() if isinstance(v, dict)
                          for j, e in v.items() if _numbers(e)]
        self.dtype = np.dtype(dtype)
        # a list at the top (hipsternet's bn_forward(X, gamma, beta, cache) with cache = (running_mean, running_var))
        # by the constructor's rules (:func:`init_arrays`), as the header says (corpus38 F3b: it got the JSON list)
        top = init_arrays({k: v for k, v in (init or {}).items() if not isinstance(v, dict)}, dtype=dtype)[0]
        self._kwargs = {k: {j: self._array(e) if _numbers(e) else e for j, e in v.items()}
                        if isinstance(v, dict) else top[k] for k, v in (init or {}).items()}
        self.keyword_names = tuple(self._kwargs)
        self._dict_weights(bwd)
        self.backward_keywords = backward_keywords(bwd, self._kwargs)
        self._cache, self._n, self._xs = None, 0, ()
        self.class_name = fwd.__name__.split("_forward")[0]
        self.outputs = None  # an Outputs: forward returns (out_1, ..., out_k, cache), read as one output
        #: the names of what forward returns after (out, cache) for a backward of (dout, cache): its running
        #: statistics (wiseodd/hipsternet's bn_forward -> (out, cache, running_mean, running_var)), not differentiated
        self.state_outputs = []

    def _dict_weights(self, bwd):
        """Andrew Ng's pairs (deep-learning.ai's ``rnn_cell_forward(xt, a_prev, parameters)`` with
        ``rnn_cell_backward(da_next, cache) -> {"dxt": ..., "da_prev": ..., "dWax": ...}``): when backward returns a
        dict (:func:`dict_gradients`) with a key ``"d" + name`` for a float array of a dict argument of ``init``
        (``parameters["Wax"]``), every float array of those dicts is a weight (:attr:`params`, passed to forward
        itself, not a copy, so perturbing it moves forward), its gradient the key ``"d" + name`` (0 without one: a
        weight forward's checked outputs do not reach, ``Wya`` beside ``a_next``)."""
        self.grad_keys = dict_gradients(bwd) or []
        if self.grad_keys:  # JSON's nested lists in a dict argument (parameters["Wax"]: a matrix) as arrays of --dtype
            self._kwargs = {k: {j: self._array(e) if isinstance(e, list) and _nested_numbers(e)
                                and _numbers_kind(e) in "fiu" else e for j, e in v.items()} if isinstance(v, dict)
                            else v for k, v in self._kwargs.items()}
        where = {j: k for k, v in self._kwargs.items() if isinstance(v, dict) for j, e in v.items()
                 if isinstance(e, np.ndarray) and e.dtype.kind == "f"}
        self.weights_in = where if any("d" + j in self.grad_keys for j in where) else {}
        if self.weights_in:
            self.params = {j: self._kwargs[k][j] for j, k in self.weights_in.items()}
            self.grads = {}

    def _array(self, e):
        """A list of numbers of ``--init`` as an array of :attr:`dtype`, rounded once from the float64 the JSON's
        numbers are (as :func:`init_arrays` makes a class's weights)."""
        return np.asarray(e, dtype=np.float64).astype(self.dtype, copy=False)

    def forward(self, *xs, training=None):  # noqa: ARG002 - no training argument: a mode lives in --init
        """``NAME_forward(*xs, **init)`` on fresh deep copies of ``init``; keep its cache; return a copy
        of its output (several outputs joined as one, :class:`Outputs`).

        ``training`` is accepted and not used: a CS231n pair's mode lives in ``init``
        (``bn_param['mode']``), set by the caller.

        Raises
        ------
        UnreadableError
            When the result is no ``(out, cache)`` (nor ``(out_1, ..., out_k, cache)`` with a backward
            taking ``k`` upstream gradients).
        """
        self.call_keywords = copy.deepcopy(self._kwargs)
        for j, k in self.weights_in.items():  # the weights themselves (Ng's parameters["Wax"])
            self.call_keywords[k][j] = self.params[j]
        out, self._cache = self._read(self.student_forward(*xs, **self.call_keywords))
        self._n, self._xs = len(xs), xs
        return _copy(out)

    def _read(self, res):
        """``(out, cache)`` of forward's result ``res``; ``(out_1, ..., out_k, cache)`` with a backward taking
        ``(dout_1, ..., dout_k, cache)`` is read as one output (:class:`Outputs`). UnreadableError otherwise."""
        if self.outputs is None and not (isinstance(res, tuple) and len(res) == 2):
            self.outputs = several_outputs(res, self.student_backward, self.student_forward, cached=True)
        if self.outputs is None and self.grad_keys and isinstance(res, tuple) and len(res) > 2:
            self.outputs = _first_outputs(res[:-1], self.student_backward, self.student_forward)
        if self.outputs is not None:
            return self.outputs.join(res[:-1] if isinstance(res, tuple) else res), res[-1]
        if self.state_outputs or _state_after_cache(res, self.student_backward):
            names = _return_names(self.student_forward, len(res), len(res))
            self.state_outputs = self.state_outputs or (names or [f"out{j}" for j in range(len(res))])[2:]
            return res[0], res[1]
        if not (isinstance(res, tuple) and len(res) == 2):
            raise UnreadableError(unreadable(self.student_forward, self.student_backward, res))
        return res

    def _from_dict(self, g):
        """The input gradients of a backward's dict of gradients ``g`` (Andrew Ng's ``{"dxt": ..., "da_prev": ...,
        "dWax": ...}``), by the ``d<name>`` convention: one per array argument of forward, in order; the weights'
        (:meth:`_dict_weights`) into :attr:`grads` (copies; 0 for a weight without a key). AdapterError naming the
        keys when an input's is missing, or when backward returns a dict and no weight reads its keys."""
        f, b = self.student_forward.__name__, self.student_backward.__name__
        names = [p.name for p in _positional(self.student_forward)][:self._n]
        missing = [f"d{n}" for n in names if f"d{n}" not in g]
        if missing or len(names) < self._n:
            raise AdapterError(
                f"{b} returned a dict (keys {', '.join(map(str, list(g)[:20])) or 'none'}) without "
                f"{', '.join(missing) or 'a key per array input'}: gradcheck reads a dict of gradients by the name of "
                f"each array argument of {f} with d before it ({', '.join('d' + n for n in names)}), and of each "
                "array of a dict argument given in --init (dWax for parameters['Wax']); or return a tuple with one "
                f"gradient per array argument of {f}, in order (dx, dw, db for x, w, b).")
        unread = [str(k) for k in g if k not in {f"d{n}" for n in [*names, *self.weights_in]}]
        if unread:  # a gradient nothing here is read as: never left unchecked in silence
            raise AdapterError(
                f"{b} returned a dict whose keys {', '.join(unread[:20])} name no array argument of {f} and no "
                "weight: gradcheck reads a dict of gradients by d and the name of each array argument, and of each "
                "array of a dict argument given in --init (dWax for parameters['Wax']) when backward's source returns "
                "a dict written out ({\"dxt\": dxt, ...}, or a name bound to one)")
        self.grads = {j: _copy(g[f"d{j}"]) if f"d{j}" in g else np.zeros_like(w) for j, w in self.params.items()}
        return tuple(g[f"d{n}"] for n in names)

    def backward(self, dY):
        """``NAME_backward(dY, cache)``: one gradient per array argument of forward, copied.

        Trailing ``None`` for non-array arguments is dropped; a missing gradient for an integer input
        (``word_embedding_backward``: ``dW`` only) is None; 2 or more gradients but fewer than the
        inputs are returned as they came (the check then names the missing one).

        Raises
        ------
        AdapterError
            Before a forward, when forward's cache was None and backward raised on it, when backward returns a dict
            without a ``d<name>`` key per array input (:meth:`_from_dict`), or when the number of gradients fits no
            reading above.
        """
        f, b = self.student_forward.__name__, self.student_backward.__name__
        if self._cache is None and not self._n:
            raise AdapterError(f"{b} called before {f}.")
        if self._cache is None and _reads_module_state(self.student_backward):
            raise AdapterError(f"{f} returned cache None, so {b}(dout, cache) would get cache=None: return what "
                               f"{b} needs as the cache (e.g. cache = (x, w, b)); a backward reads its cache, not "
                               "module globals or other state left by the last forward")
        try:  # cache None: a backward that needs nothing (x + P: dout, dout.sum(0)) runs on it (tester21s M3)
            g = self.student_backward(*(self.outputs.split(dY) if self.outputs else (dY,)), self._cache,
                                      **{k: copy.deepcopy(self._kwargs[k]) for k in self.backward_keywords})
        except Exception as exc:
            if self._cache is not None:
                raise
            raise AdapterError(f"{f} returned cache None, and {b}(dout, cache) with cache=None raised "
                               f"{type(exc).__name__}: {exc}; return what {b} needs as the cache (e.g. cache = "
                               "(x, w, b)); a backward reads its cache, not module globals or other state left by "
                               "the last forward") from exc
        if isinstance(g, dict):
            g = self._from_dict(g)
        many = isinstance(g, (tuple, list)) or inspect.isgenerator(g) or (
            isinstance(g, np.ndarray) and g.dtype == object and g.ndim == 1)  # np.array([dx, dw, db])
        g = tuple(g) if many else (g,)
        while len(g) > self._n and g[-1] is None:  # None for conv_param & co., as torch.autograd.Function
            g = g[:-1]
        ints = [i for i, x in enumerate(self._xs) if getattr(getattr(x, "dtype", None), "kind", "f") in "biu"]
        if ints and len(g) == self._n - len(ints):  # CS231n's word_embedding_backward: dW only, none for x
            rest = iter(g)
            g = tuple(None if i in ints else next(rest) for i in range(self._n))
        if 1 < len(g) < self._n:  # dx, dw without db: a missing gradient, a wrong result the check names
            return tuple(_copy(v) for v in g)
        if len(g) != self._n:
            raise AdapterError(
                f"{self.student_backward.__name__} returned {len(g)} gradient(s) for {self._n} array "
                f"argument(s) of {self.student_forward.__name__}: return one gradient per array argument, in "
                "order (dx, dw, db for x, w, b); with gradcheck check, give one --input-shape per array "
                "argument, separated by ';' (e.g. '4,5;5,3;3' for x, w, b).")
        return _copy(g[0]) if len(g) == 1 else tuple(_copy(v) for v in g)


def _state_after_cache(res, bwd) -> bool:
    """Whether forward's result ``res`` is ``(out, cache, state...)`` for a backward of ``(dout, cache)``: a tuple of 3
    or more, ``out`` a float array, ``cache`` not one (a tuple, a dict), and backward requiring two positional
    arguments (wiseodd/hipsternet's ``bn_forward -> (out, cache, running_mean, running_var)``: corpus38 F3c)."""
    return (isinstance(res, tuple) and len(res) > 2 and isinstance(res[0], np.ndarray) and res[0].dtype.kind == "f"
            and not isinstance(res[1], np.ndarray) and len(_positional(bwd, required=True)) == 2)


def backward_keywords(bwd, init):
    """The keys of ``init`` (``--init``) that a pair's backward names as arguments (Andrew Ng's
    ``linear_activation_backward(dA, cache, activation)``): passed to backward too, by keyword."""
    ps = _params(bwd) or {}
    return tuple(k for k in (init or {}) if k in ps and ps[k].kind in _NAMED and k not in _result_slots(bwd))


def _result_slots(bwd) -> set[str]:
    """The names of a pair's backward parameters that take what forward returned, not an ``--init`` value: the
    first two positional (``dout, cache``) and any positional named like a cache. A forward argument of the same name
    (wiseodd/hipsternet's ``bn_forward(X, gamma, beta, cache)``: its running statistics) is forward's alone
    (corpus38 F3a: it was passed to ``bn_backward`` as ``cache=`` too, and required of --init)."""
    pos = [p.name for p in _positional(bwd)]
    return set(pos[:2]) | {n for n in pos if "cache" in n.lower()}


def _backward_missing(fwd, bwd, init, n_inputs):
    """InitError when a pair's backward requires an argument that forward takes after its array inputs (or
    backward takes as keyword-only) and ``init`` does not give: backward would be called without it."""
    P, fps, bps = inspect.Parameter, _params(fwd), _params(bwd)
    if fps is None or bps is None:
        return
    _backward_signature(fwd, bwd, bps, init, fps)
    pos = [p.name for p in fps.values() if p.kind in _POSITIONAL]
    others = set(pos[n_inputs or len([q for q in pos if q not in (init or {})]):]) | {
        p.name for p in fps.values() if p.kind == P.KEYWORD_ONLY}
    missing = [p.name for p in bps.values() if p.default is P.empty and p.name not in (init or {})
               and p.name not in _result_slots(bwd)
               and (p.kind == P.KEYWORD_ONLY or (p.kind == P.POSITIONAL_OR_KEYWORD and p.name in others))]
    if missing:
        raise InitError(f"{_written_as(bwd)} needs {', '.join(missing)}, which no --init "
                        f"gives (gradcheck passes an --init value to backward too when backward names it): "
                        f"--init '{_init_example(init, missing)}', with ... replaced by the value forward is to get "
                        "too.")


def _backward_signature(fwd, bwd, bps, init, fps):
    """InitError when a pair's backward requires more positional arguments than ``(dout, cache)`` and the ``--init``
    values it names (tester16 M7: Andrew Ng's ``L_model_backward(AL, Y, caches)`` is a model's, not a layer's)."""
    P = inspect.Parameter
    req = [p.name for p in bps.values() if p.kind in _POSITIONAL and p.default is P.empty and p.name not in (init or {})
           and p.name not in fps]  # one forward takes too (activation) is _backward_missing's
    if len(req) <= 2 or all(n.lower().startswith(("d", "g")) for n in req[:-1]):
        return  # (dout, cache), or a layer of k outputs: (dnext_h, dnext_c, cache), read by several_outputs
    raise InitError(
        f"{_written_as(bwd)} does not fit the function-pair protocol, which calls "
        f"{fwd.__name__}(arrays..., --init values) -> (out, cache) and then {bwd.__name__}(dout, cache) -> one "
        "gradient per array argument of forward (CS231n's affine_backward(dout, cache); an --init value backward "
        f"names is passed too): it requires {len(req)} arguments ({', '.join(req)}) where 2 are passed. A model's backward that takes the labels "
        "and computes dAL from its cost itself (L_model_backward(AL, Y, caches)) is not a layer's: check each "
        "layer's pair (linear_activation with --init '{\"activation\": \"relu\"}'), or check the cost of the "
        f"model with --loss, one weight at a time, through a function beside it: def cost_W1(X, Y, "
        f"parameters, W1): parameters = dict(parameters, W1=W1); AL, caches = {fwd.__name__}(X, parameters); "
        f"return compute_cost(AL, Y), {bwd.__name__}(AL, Y, caches)['dW1']  (your cost function and the key of "
        "W1's gradient); then gradcheck check FILE::cost_W1 --loss --input-shape N_X,M --init '{\"Y\": [[...]], "
        "\"parameters\": {\"W1\": [[...]], \"b1\": [[...]], ...}, \"W1\": [[...]]}' --wrt W1 (docs/checking.md, "
        "Losses).")


def pair(fwd, bwd, init, dtype="float64"):
    """A :class:`FunctionPair` of a class named after the layer (``affine``) whose ``forward``
    signature names the array arguments (so gradients are called ``dx``, ``dw``, ``db``); ``init``'s lists of
    numbers made arrays of ``dtype`` (``gradcheck check --dtype``)."""
    P = inspect.Parameter
    names = [p.name for p in (_params(fwd) or {}).values() if p.kind in _POSITIONAL and p.name not in (init or {})]

    def forward(self, *xs, training=None):
        return FunctionPair.forward(self, *xs, training=training)
    forward.__signature__ = inspect.Signature([P("self", P.POSITIONAL_ONLY)] + [P(n, P.POSITIONAL_ONLY)
                                              for n in names] + [P("training", P.KEYWORD_ONLY, default=None)])
    fwd, bwd = (named(f, n, getattr(inspect.unwrap(getattr(f, "func", f)), "__globals__", {}))
                for f, n in ((fwd, "layer_forward"), (bwd, "layer_backward")))
    name = fwd.__name__.split("_forward")[0]
    return type(name, (FunctionPair,), {"forward": forward, "__module__": __name__})(fwd, bwd, init, dtype)


# --------------------------------------------------------------------------- several outputs


def _first_outputs(outs, backward, forward):
    """:class:`Outputs` of the first j of forward's k outputs ``outs`` when ``backward`` takes j upstream gradients
    and the cache, ``1 <= j < k``, those j float arrays (Ng's ``rnn_cell_forward -> (a_next, yt_pred, cache)`` with
    ``rnn_cell_backward(da_next, cache)``: yt_pred has no gradient there, not checked, said); else None."""
    j = next((j for j in range(1, len(outs)) if _takes(backward, j + 1)), 0)
    if not j or not all(isinstance(o, np.ndarray) and o.dtype.kind == "f" for o in outs[:j]):
        return None
    grads = [p.name for p in _positional(backward)][:j]
    return Outputs(_return_names(forward, len(outs) + 1, len(outs)) or [f"out{i}" for i in range(len(outs))], outs,
                   grads if all(g.isidentifier() for g in grads) else None, keep=list(range(j)))


class Outputs:
    """A forward with k >= 2 outputs presented as one output ``Y``, for both protocols (the check pipeline
    checks one output; ``L = sum(Y * G)`` is the sum of each output's ``sum(out_j * G_j)``).

    Outputs of one shape are stacked, ``Y[j]`` is output j; else each is flattened and the k are
    concatenated. :meth:`split` cuts the upstream gradient ``dY`` back into the k gradients the
    student's backward takes, as views of ``dY`` (so a backward that writes into one is still seen
    writing into ``dY``). ``names``: from forward's return statement (:func:`_return_names`).
    """

    def __init__(self, names, outs, grads=None, keep=None):
        #: the positions of the float outputs checked; the others (integer: argmax indices) have no gradient
        self.total, self.keep = len(outs), list(range(len(outs)) if keep is None else keep)
        self.dropped = [f"{n} {tuple(np.shape(o))} ({np.asarray(o).dtype})"
                        for j, (n, o) in enumerate(zip(names, outs)) if j not in self.keep]
        #: float outputs backward takes no gradient for (Ng's yt_pred beside rnn_cell_backward(da_next, cache))
        self.untaken = [d for d in self.dropped if d.endswith("(float64)") or d.endswith("(float32)")]
        self.dropped = [d for d in self.dropped if d not in self.untaken]
        names, outs = [names[j] for j in self.keep], [outs[j] for j in self.keep]
        self.names, self.shapes = list(names), [np.shape(o) for o in outs]
        self.stacked = len(set(self.shapes)) == 1
        #: backward's names of the k upstream gradients (``dnext_h``, ``dnext_c``), or ``dY[j]`` in the joined dY
        self.grads = list(grads) if grads is not None and len(grads) == len(self.names) else [
            f"dY[{j}]" for j in range(len(self.names))]

    def data(self) -> list[str]:
        """The outputs as a list of strings (what a sandboxed layer's protocol may carry to the diagnosis):
        ``"stacked"`` or ``"flat"``, then ``"name|grad|4,3"`` per output, ``grad`` backward's name of its upstream
        gradient."""
        return ["stacked" if self.stacked else "flat", *(f"{n}|{g}|{','.join(str(int(d)) for d in s)}"
                                                         for n, g, s in zip(self.names, self.grads, self.shapes))]

    def join(self, outs):
        """``Y`` of the k outputs ``outs`` (their shapes kept for :meth:`split`); AdapterError when they are
        not k, or no longer share a shape when the first forward's did."""
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        if len(outs) == self.total:
            outs = tuple(outs[j] for j in self.keep)
        shapes = [np.shape(o) for o in outs]
        if len(outs) != len(self.names) or (self.stacked and len(set(shapes)) > 1):
            raise AdapterError(f"forward returned {len(outs)} outputs of shapes {', '.join(map(str, shapes))}; "
                               f"its first call returned {self.total} ({self._shown()}).")
        self.shapes = shapes
        if len(outs) == 1:  # one float output beside integer ones: Y itself
            return outs[0]
        return np.stack(outs) if self.stacked else np.concatenate([np.reshape(o, -1) for o in outs])

    def split(self, dY):
        """The k upstream gradients in ``dY`` (the gradient of :meth:`join`'s last ``Y``), views of it."""
        k, sizes = len(self.names), [int(np.prod(s, dtype=np.int64)) for s in self.shapes]
        if k == 1:
            return (dY,)
        want = f"({k}, ...)" if self.stacked else f"({sum(sizes)},)"
        if np.ndim(dY) < 1 or (np.shape(dY)[0] != k if self.stacked else np.shape(dY) != (sum(sizes),)):
            raise AdapterError(f"dY has shape {np.shape(dY)}; the {k} outputs joined as one are {want}.")
        if self.stacked:
            return tuple(dY[j] for j in range(k))
        ends = np.cumsum(sizes)
        return tuple(dY[e - n:e].reshape(s) for s, n, e in zip(self.shapes, sizes, ends))

    def _shown(self):
        return ", ".join(f"{n} {tuple(s)}" for n, s in zip(self.names, self.shapes))

    def text(self):
        """The header's account: ``2 outputs (h (3, 4), c (3, 4)) checked as one stacked Y (2, 3, 4) ...``."""
        k = len(self.names)
        ints = (f"; {' and '.join(self.dropped)}, an integer output, {'is' if len(self.dropped) == 1 else 'are'} "
                "not differentiated (indices have no gradient)") if self.dropped else ""
        ints += (f"; {' and '.join(self.untaken)}: backward takes no upstream gradient for "
                 f"{'it' if len(self.untaken) == 1 else 'them'}, so {'it is' if len(self.untaken) == 1 else 'they are'}"
                 " not checked") if self.untaken else ""
        if k == 1:
            return f"{self.total} outputs: {self._shown()} checked as Y, backward gets its dY{ints}"
        if self.stacked:
            ds = ", ".join(f"dY[{j}]" for j in range(k)) if k <= 4 else f"dY[0], ..., dY[{k - 1}]"
            how = f"one stacked Y {(k, *self.shapes[0])} (Y[j] is output j, in this order); backward gets {ds}"
        else:
            how = (f"one Y ({sum(int(np.prod(s, dtype=np.int64)) for s in self.shapes)},), each flattened and "
                   "concatenated in this order; backward gets dY cut back into their shapes")
        return f"{k} outputs ({self._shown()}) checked as {how}{ints}"

    def attach(self, obj):
        """Switch ``obj`` to a subclass of its class (same name) whose ``forward`` returns :meth:`join` of its
        outputs and whose ``backward(dY)`` calls the class's with :meth:`split` (dY). This object is kept in
        ``obj.__dict__`` (a deep copy of ``obj`` gets its own, with its own last shapes)."""
        cls = type(obj)

        def forward(self_, *xs, **kw):
            return self_.__dict__["_gradcheck_outputs"].join(cls.forward(self_, *xs, **kw))

        def backward(self_, dY, *rest, **kw):
            return cls.backward(self_, *self_.__dict__["_gradcheck_outputs"].split(dY), *rest, **kw)
        _switch_class(obj, forward, backward, "_gradcheck_outputs", self,
                      f"{cls.__name__}.forward returns {len(self.names)} outputs, but gradcheck cannot wrap this "
                      "class to check them as one")


def _subclass(obj, why=None, state=None, **members):
    """Switch ``obj`` to a subclass of its class with ``members`` (the same name, module and qualname: reports name
    the student's class), after keeping ``state`` (``{key: value}``) in ``obj.__dict__``: the one way gradcheck
    changes how a student's methods are called. True when done; when the class cannot be extended (``__slots__``
    layouts differ, no ``__dict__``): False, or, given ``why``, UnreadableError (``why`` and the reason; ``""``:
    the TypeError itself)."""
    cls = type(obj)
    try:
        if state:
            obj.__dict__.update(state)
        obj.__class__ = type(cls.__name__, (cls,), {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                                     **members})
    except (AttributeError, TypeError) as exc:
        if why == "":
            raise
        if why is None:
            return False
        raise UnreadableError(f"{why} ({exc}).") from None
    return True


def _switch_class(obj, forward, backward, key, state, why):
    """:func:`_subclass` with ``forward`` (the signature of the class's) and ``backward(self, dY)``; ``state`` kept as
    ``obj.__dict__[key]``. UnreadableError (``why``) when the class cannot be extended (``__slots__`` & co.)."""
    P = inspect.Parameter
    with contextlib.suppress(TypeError, ValueError):  # the student's forward signature: inputs, training
        forward.__signature__ = inspect.signature(type(obj).forward)
    backward.__signature__ = inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD), P("dY", P.POSITIONAL_OR_KEYWORD)])
    _subclass(obj, why, {key: state}, forward=forward, backward=backward)


class _PairState:
    """The :class:`FunctionPair` of a class whose forward returns ``(out, cache)`` (:func:`class_cache`), in a box
    that the walks for sub-layers, arrays and generators do not enter (no ``__dict__``, callable)."""

    __slots__ = ("pair",)

    def __init__(self, pair):
        self.pair = pair

    def __call__(self):
        return self.pair


def _cache_style(obj, res):
    """Whether forward's result ``res`` is ``(out, cache)`` (or ``(out_1, ..., out_k, cache)``) for a backward
    taking ``(dout, cache)`` (``(dout_1, ..., dout_k, cache)``): a tuple whose first item is a float array, and a
    backward with one positional argument per item, the last named like a cache or the last item not a float
    array (a class's ``(h, c)`` for ``backward(dh, dc)`` is two outputs, :func:`several_outputs`)."""
    ps = _positional(obj.backward)
    if not (isinstance(res, tuple) and len(res) >= 2 and isinstance(res[0], np.ndarray) and res[0].dtype.kind == "f"
            and len(ps) >= len(res) and sum(p.default is p.empty for p in ps) <= len(res)):
        return False
    last = res[-1]
    return "cache" in ps[len(res) - 1].name.lower() or not (isinstance(last, np.ndarray) and last.dtype.kind == "f")


#: The protocol text's words for a class read by :func:`class_cache` (``forward(x) -> (out, cache)``,
#: ``backward(dout, cache)``): the grader reads them to grade that reading, never the class as loaded.
CLASS_CACHE = "forward returns (Y, cache) and backward takes (dY, cache)"


def class_cache(obj, inputs, kw):
    """For a class whose forward returns ``(out, cache)`` and whose backward takes ``(dout, cache)`` on the probe
    ``inputs`` (:func:`_cache_style`): read as a CS231n pair of its methods (:class:`FunctionPair`: forward's last
    item is handed back to backward, several outputs joined), the object switched to a class doing so
    (:func:`_switch_class`); returns the pair, or None for another style. UnreadableError when the class cannot
    be extended."""
    if isinstance(obj, FunctionPair) or getattr(obj, "__dict__", {}).get("_gradcheck_pair") is not None:
        return None
    res = _probe_result(obj, inputs, kw)
    if not _cache_style(obj, res):
        return None
    cls = type(obj)
    pair = FunctionPair(types.MethodType(cls.forward, obj), types.MethodType(cls.backward, obj), None)
    pair._read(res)  # several outputs: found on the probe's result

    def forward(self_, *xs, **kw):
        p = self_.__dict__["_gradcheck_pair"]()
        out, p._cache = p._read(cls.forward(self_, *xs, **kw))
        p._n, p._xs = len(xs), xs
        return out

    def backward(self_, dY):
        return FunctionPair.backward(self_.__dict__["_gradcheck_pair"](), dY)
    forward.__wrapped__ = cls.forward  # one call of it enters the student's forward once: that call is forward's
    # own entry, not a second call (gradcheck._sandbox_child._entry_chain; newuser37 F2b: the staff policy charged it)
    _switch_class(obj, forward, backward, "_gradcheck_pair", _PairState(pair),
                  f"{cls.__name__}.forward returns (Y, cache) and {cls.__name__}.backward takes (dY, cache), which "
                  "gradcheck reads by wrapping the class, but this class cannot be wrapped; keep the cache on self "
                  "(self.cache = ... in forward, read in backward(dY)) or write the layer as functions "
                  "NAME_forward/NAME_backward")
    return pair


#: Names of an upstream gradient, as backward's last argument (:func:`_input_backward`): ``dY``, ``dLdY``, ``dout``,
#: ``grad_output``, ``delta``.
_UPSTREAM = re.compile(r"(d[A-Za-z_]*|grad\w*|\w*_grad|delta\w*|g[A-Z]\w*)")


#: Names that say backward's first argument is forward's input (``backward(Z, dY)``: CS189's pre-activation) or its
#: output (``backward(out, dout)``), read by name before behaviour (:func:`_input_backward`; review29 HANDED_BACK).
INPUT_NAMES = frozenset({"x", "X", "z", "Z", "inp", "input", "inputs", "x_in", "X_in", "z_in", "Z_in", "pre",
                         "preact", "pre_activation"})
OUTPUT_NAMES = frozenset({"out", "output", "outputs", "y", "Y", "y_out", "activation", "activations"})


def _input_backward(obj, k):
    """Whether ``obj.backward`` takes forward's ``k`` inputs and then the upstream gradient (Berkeley CS189's
    activations: ``forward(Z)``, ``backward(Z, dY)``; the layer calls ``self.activation.backward(Z, dLdY)``): exactly
    ``k + 1`` positional arguments without defaults, forward ``k``, and backward's first ``k`` named as forward's
    inputs or (one input) as an input is (:data:`INPUT_NAMES`: ``x``, ``Z``) (``"input"``); one input named as an
    output (:data:`OUTPUT_NAMES`: ``out``, ``y``) before an upstream gradient (:data:`_UPSTREAM`) (``"output"``);
    another name before an upstream gradient (``"ambiguous"``: ``backward(a, dout)`` may take forward's input or its
    output, decided by behaviour, :func:`_handed_back`, said in a WARNING); ``""`` otherwise."""
    fps = _positional(obj.forward, required=True)
    bps = _positional(obj.backward)
    if len(fps) != k or len(bps) != k + 1 or any(p.default is not p.empty for p in bps):
        return ""
    names = [p.name for p in bps]
    if names[:k] == [p.name for p in fps] or (k == 1 and names[0] in INPUT_NAMES):
        return "input"
    if not _UPSTREAM.fullmatch(names[-1]) or _UPSTREAM.fullmatch(names[0]):
        return ""
    return "output" if k == 1 and names[0] in OUTPUT_NAMES else "ambiguous"


#: The largest ``|<g, u> - d| / (|d| + 1e-6)`` along a random direction ``u`` at which a reading of
#: ``backward(A, dY)`` agrees with the central difference ``d`` of forward (:func:`_handed_back`): float64 central
#: differences at a step of 1e-6 keep about 1e-9 of ``d``, so 1e-4 is round-off, a wrong factor or derivative is not.
HANDED_BACK_RTOL = 1e-4


def reading_errors(obj, inputs) -> dict[str, float] | None:
    """``{"input": e, "output": e}``: for ``backward(A, dY)`` of one input handed forward's input ``X`` and its
    output ``Y = forward(X)`` (each after a forward), the largest ``|<g, u> - d| / (|d| + 1e-6)`` over two random
    directions ``u`` (the one :func:`gradcheck._kernel.relative_error`, floor 1e-6), ``d`` the central difference (:func:`gradcheck._kernel.difference_quotient`, the checker's one
    kernel; this runs in the sandbox child, where :mod:`gradcheck.numerical` is not loaded) of
    ``sum(forward(X + t u) * dY)``; ``inf`` for a gradient not of X's shape. None when there is not one float input
    or forward's output is not float."""
    X = inputs[0]
    if len(inputs) != 1 or not isinstance(X, np.ndarray) or X.dtype.kind != "f" or not X.size:
        return None
    rng = probe_rng(189)
    Y = np.asarray(obj.forward(X))
    if Y.dtype.kind != "f":
        return None
    dY = rng.standard_normal(Y.shape)
    h = 1e-6 * max(1.0, float(np.max(np.abs(X))))
    errs = {}
    for reading, a in (("input", X.copy()), ("output", Y.copy())):
        obj.forward(X)
        g, worst = np.asarray(obj.backward(a, dY), dtype=np.float64), 0.0
        for _ in range(2):
            u = rng.standard_normal(X.shape)
            d = difference_quotient(lambda t, u=u: float(np.sum(np.asarray(obj.forward(X + t * u)) * dY)), h)
            worst = max(worst, float(relative_error(np.sum(g * u), d, 1e-6)) if g.shape == X.shape else np.inf)
        errs[reading] = worst
    obj.forward(X)
    return errs


def _handed_back(obj, inputs, errs=None) -> str:
    """Which array ``backward(A, dY)`` of one input takes as ``A``, decided by behaviour where its names do not say
    (review28g M2: ``backward(out, dout)`` returning ``dout * out * (1 - out)``, correct for out = sigmoid(x), was
    handed the input and FAILed, the student told to cache the output): ``"output"`` when only the output's reading
    agrees with central differences (:func:`reading_errors` ``errs``, at most :data:`HANDED_BACK_RTOL`), else
    ``"input"`` (both agree, as for ReLU; or neither: a wrong backward, checked as CS189's ``backward(Z, dY)``)."""
    errs = reading_errors(obj, inputs) if errs is None else errs
    if errs is None:
        return "input"
    agree = {k: e <= HANDED_BACK_RTOL for k, e in errs.items()}
    return "output" if agree["output"] and not agree["input"] else "input"


def class_input_backward(obj, inputs, info=None):
    """For a class whose backward takes forward's inputs before the upstream gradient (:func:`_input_backward`,
    ``backward(Z, dY)``), or its output (``backward(out, dout)``, by its name, or where its names do not say and its
    behaviour does, :func:`_handed_back`): the object switched to a class (:func:`_switch_class`) whose forward keeps
    its inputs (or output; in a box the walks for arrays do not enter, :class:`_PairState`) and whose
    ``backward(dY)`` hands them back; returns the header's text, or None for another style (or when already
    switched). Where behaviour chose the output, the reading that makes the code right, ``info["handed_back"]`` (a
    dict given) receives the WARNING naming both readings and what each gives (review29 HANDED_BACK).
    UnreadableError when the class cannot be extended."""
    if isinstance(obj, FunctionPair) or not inputs or "_gradcheck_inputs" in getattr(obj, "__dict__", {}) or not (
            kind := _input_backward(obj, len(inputs))):
        return None
    errs = reading_errors(obj, inputs) if kind == "ambiguous" else None
    out = kind == "output" or kind == "ambiguous" and _handed_back(obj, inputs, errs) == "output"
    cls = type(obj)
    names = [p for p in _params(cls.backward) or {}][1:]  # without self
    x = next(iter(_params(obj.forward) or {}), "X")  # forward's input's name, before the class is switched

    def forward(self_, *xs, **kw):
        y = cls.forward(self_, *xs, **kw)
        self_.__dict__["_gradcheck_inputs"].pair = (y,) if out else xs  # as the caller's layer keeps them
        return y

    def backward(self_, dY):
        xs = self_.__dict__["_gradcheck_inputs"]()
        if xs is None:
            raise RuntimeError(f"{cls.__name__}.backward({', '.join(names)}) called before forward")
        return cls.backward(self_, *xs, dY)
    what = "output" if out else "input"
    _switch_class(obj, forward, backward, "_gradcheck_inputs", _PairState(None),
                  f"{cls.__name__}.backward takes forward's {what} ({', '.join(names)}), which gradcheck hands back by "
                  f"wrapping the class, but this class cannot be wrapped; keep the {what} on self in forward and "
                  "write backward(dY)")
    if out and kind == "output":
        return (f"backward({', '.join(names)}) takes forward's output and then dY ({names[0]} is named as an "
                "output): forward's output is handed back to backward")
    if out:
        if info is not None:
            info["handed_back"] = (
                f"{cls.__name__}.backward({', '.join(names)}): its names do not say whether {names[0]} is forward's "
                f"input or its output, and the two readings give different verdicts. Handed forward's input {x} (as "
                f"Berkeley CS189's networks call activation.backward(Z, dY)), backward differs from central "
                f"differences of forward (relative error {errs['input']:.2g} along a random direction, above "
                f"{HANDED_BACK_RTOL:g}): it would FAIL, as the derivative taken at the output. Handed forward's "
                f"output, it agrees ({errs['output']:.1g}): gradcheck checked it with the output, and PASSes it only "
                f"if your network passes forward's output. If it passes the input, this backward is wrong. Tell "
                f"gradcheck which it is by the argument's name: {' or '.join(dict.fromkeys([x, 'x', 'Z']))} for the "
                "input, out or y for the output")
        return (f"backward({', '.join(names)}) takes forward's output and then dY (its names do not say whether "
                f"{names[0]} is forward's input or output; read by behaviour, see the WARNING): forward's output is "
                "handed back to backward")
    return (f"backward({', '.join(names)}) takes forward's input{'s' if len(inputs) > 1 else ''} and then dY: "
            f"forward's input{'s are' if len(inputs) > 1 else ' is'} handed back to backward, as a layer calls "
            f"self.activation.backward({', '.join(names)})")


def list_input(fn):
    """The name of forward's first argument when it takes the inputs as one list (numpy-ml's ``Add.forward(X,
    retain_derived=True)``, documented ``X : list of length n_inputs``; or annotated ``list``/``List[...]``/
    ``Sequence``), read from its signature and docstring; None otherwise.

    Parameters
    ----------
    fn : callable
        A layer's bound ``forward``.

    Returns
    -------
    str or None
        The first positional argument's name, or None.
    """
    ps = _positional(fn)
    if not ps:
        return None
    p, note = ps[0], ps[0].annotation
    note = note if isinstance(note, str) else getattr(note, "__name__", None) or str(note)
    if re.match(r"(typing\.)?(list|List|Sequence|collections\.abc\.Sequence)\b", note or ""):
        return p.name
    doc = inspect.getdoc(fn) or ""
    return p.name if re.search(rf"^\s*{re.escape(p.name)}\s*:\s*(list|sequence)\b", doc, re.M | re.I) else None


def list_input_advice(obj) -> str:
    """The advice for a layer whose forward takes its inputs as one list (:func:`list_input`, tester31m M3):
    gradcheck passes each array of ``--input-shape`` as its own argument; ``""`` for any other layer.

    Parameters
    ----------
    obj : object
        The student's layer.

    Returns
    -------
    str
        The advice, starting with a space, or "".
    """
    fn = getattr(obj, "forward", None)
    if not callable(fn) or (name := list_input(fn)) is None:
        return ""
    cls = type(obj).__name__
    return (f" {cls}.forward takes its inputs as one list ({name}), but gradcheck passes each array of --input-shape "
            f"as its own argument (a second one goes to forward's second argument). Check it through a class whose "
            f"forward takes them one by one: `def forward(self, X1, X2): return self.layer.forward([X1, X2])` and "
            f"`def backward(self, dY): return tuple(self.layer.backward(dY))`, with self.layer = {cls}(...).")


def _takes(fn, n):
    """Whether ``fn`` takes exactly ``n`` positional arguments without defaults (or ``*args`` and at most ``n``)."""
    ps = _params(fn)
    if ps is None:
        return False
    required = sum(1 for p in ps.values() if p.kind in _POSITIONAL and p.default is p.empty)
    return required == n or (required <= n and any(p.kind == p.VAR_POSITIONAL for p in ps.values()))


def _return_names(fn, n, k, first_any=False):
    """The variable names of the first ``k`` of the ``n`` items in forward's ``return h, c`` (``return next_h,
    next_c, cache``), or None: every return statement of ``fn`` itself (not of a function inside it) with
    ``n`` items must name them alike, with plain names or attributes of self (``return self.out, self.attn``:
    ``out``, ``attn``, corpus39 M2); ``first_any``: the first may be any expression, named ``"output 1"``
    (``return a @ x, a``: the output checked, the attention weights beside it, newuser36 L6)."""
    if (tree := _source(fn)) is None or not tree.body:
        return None

    def name(e):
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
            return e.attr
        return e.id if isinstance(e, ast.Name) else None
    found = {tuple(name(e) or ("output 1" if first_any and not i else None)
                   for i, e in enumerate(node.value.elts[:k]))
             for node in _switch_reach.own_nodes(tree.body[0])
             if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == n}
    names = list(found.pop()) if len(found) == 1 else [None]
    return names if None not in names and len(set(names)) == k else None


def dict_gradients(fn):
    """The keys of the dict of gradients ``fn`` returns, read from its source (Andrew Ng's deep-learning.ai
    ``rnn_cell_backward(da_next, cache)``: ``gradients = {"dxt": dxt, "da_prev": da_prev, "dWax": dWax, ...}; return
    gradients``): every return statement of ``fn`` itself returns a dict literal with string keys, or a name bound to
    one; None otherwise."""
    if (tree := _source(fn)) is None or not tree.body:
        return None
    bound, returns = {}, []
    for node in _switch_reach.own_nodes(tree.body[0]):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = node.value
        returns += [node.value] if isinstance(node, ast.Return) else []
    dicts = [bound.get(r.id) if isinstance(r, ast.Name) else r for r in returns]
    keys = [[k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if isinstance(d, ast.Dict) and d.keys and all(k is not None for k in d.keys) else None for d in dicts]
    if not keys or any(k is None or len(k) != len(d.keys) for k, d in zip(keys, dicts)):
        return None
    return list(dict.fromkeys(k for ks in keys for k in ks))


def several_outputs(res, backward, forward, cached=False, inputs=()):
    """:class:`Outputs` when ``res`` (forward's result) is k >= 2 float arrays (then the cache, if ``cached``:
    a CS231n pair) and ``backward`` takes k upstream gradients (then the cache); else None.

    A class whose backward takes one gradient and whose forward returns k float arrays named in its return statement
    (numpy-ml's LSTMCell: ``return At, Ct`` with ``backward(dLdAt)``, tester31m M2): the first is checked, the others
    said not checked, as Ng's ``yt_pred`` (:func:`_first_outputs`). A class whose forward returns ``(out, cache)``
    or ``(out, X)`` by mistake (a name with "cache", or an array sharing memory with one of ``inputs``, the probe
    inputs) and whose backward takes ``dY`` alone is not read as two outputs (its check says Y is a tuple).
    """
    outs = (res[:-1] if cached else res) if isinstance(res, tuple) else ()
    if len(outs) >= 2 and not cached and all(isinstance(o, np.ndarray) and o.dtype.kind in "fbiu" for o in outs):
        keep = [j for j, o in enumerate(outs) if o.dtype.kind == "f"]  # (Y, argmax): torch's return_indices=True
        if 0 < len(keep) < len(outs) and _takes(backward, len(keep)):  # indices have no gradient (tester22s)
            grads = [p.name for p in _positional(backward)][:len(keep)]
            return Outputs(_return_names(forward, len(res), len(outs)) or
                           [f"output {j + 1}" for j in range(len(outs))], outs,
                           grads if all(g.isidentifier() for g in grads) else None, keep)
    if len(outs) < 2 or not all(isinstance(o, np.ndarray) and o.dtype.kind == "f" for o in outs):
        return None
    if not cached and _takes(backward, 1) and not any(p.kind == p.VAR_POSITIONAL for p in _params(backward).values()) \
            and (names := _return_names(forward, len(res), len(outs), first_any=True)) \
            and not any("cache" in n.lower() for n in names) \
            and not set(names[1:]) & {p.name for p in _positional(forward)} \
            and not any(np.shares_memory(o, x) for o in outs[1:] for x in inputs if isinstance(x, np.ndarray)):
        return Outputs(names, outs, None, keep=[0])  # numpy-ml's LSTMCell: (A, C), backward(dLdAt) (tester31m M2)
    if not _takes(backward, len(outs) + cached):
        return None
    grads = [p.name for p in _positional(backward)][:len(outs)]
    return Outputs(_return_names(forward, len(res), len(outs)) or [f"out{j}" for j in range(len(outs))], outs,
                   grads if all(g.isidentifier() for g in grads) else None)


def outputs_of(obj) -> Outputs | None:
    """The :class:`Outputs` a layer of k outputs is read through (a pair's, a class's attached one, a class read
    as a pair of its methods), through the :class:`Adapted` wrapper; None for a layer of one output."""
    for _ in range(3):
        if isinstance(obj, FunctionPair):
            return obj.outputs
        d = getattr(obj, "__dict__", None) or {}
        if isinstance(d.get("_gradcheck_outputs"), Outputs):
            return d["_gradcheck_outputs"]
        if d.get("_gradcheck_pair") is not None:
            return getattr(d["_gradcheck_pair"](), "outputs", None)
        if not isinstance(obj, Adapted):
            return None
        obj = obj.obj
    return None


def unreadable(forward, backward, res):
    """The usage error's message for a pair whose forward result ``res`` is neither ``(out, cache)`` nor
    k outputs and the cache that ``backward`` takes."""
    def kind(v):
        return f"{type(v).__name__} {np.shape(v)}" if isinstance(v, np.ndarray) else type(v).__name__
    got = (f"a tuple of {len(res)} ({', '.join(kind(v) for v in res[:8])})" if isinstance(res, tuple)
           else kind(res))
    return (f"gradcheck cannot read what {forward.__name__} returned: {got}, with {_written_as(backward)}. It "
            f"reads a CS231n forward's result as (out, cache) for {backward.__name__}(dout, cache), or, for k outputs, "
            "as (out_1, ..., out_k, cache) when the backward takes (dout_1, ..., dout_k, cache), each out a float "
            "array.")


def _pair_outputs(obj, inputs):
    """Read a pair's forward result once on the probe inputs (:meth:`FunctionPair._read`): it finds several
    outputs for the header, and an unreadable result is a usage error at load (UnreadableError). A forward
    that raises is left for the check to report; the global generators are restored after."""
    state = global_states()
    _step("forward")  # a forward that hangs or exits here is named as the probe's
    try:
        res = obj.student_forward(*[np.array(x, copy=True) for x in inputs], **copy.deepcopy(obj._kwargs))
    except Exception:  # noqa: BLE001 - student code; the check calls it again and reports
        return
    finally:
        global_states(state)
    obj._read(res)


def _probe_result(obj, inputs, kw):
    """What a class's forward returns on copies of the probe ``inputs`` (keywords ``kw``), all it changes undone (an
    object without a ``__dict__``: a copy of it probed, as it cannot be undone)."""
    xs = [np.array(x, copy=True) for x in inputs]
    if not isinstance(getattr(obj, "__dict__", None), dict):
        _step("forward")
        return _forward(copy.deepcopy(obj), xs, kw)
    with _all_undone([obj, *dict(sublayers(obj)).values()]):
        _step("forward")
        return _forward(obj, xs, kw)


def class_outputs(obj, inputs):
    """For a class-style layer whose forward returns k >= 2 outputs on the probe ``inputs`` (in eval mode) and whose
    backward takes k: its :class:`Outputs`, attached (:meth:`Outputs.attach`: one output from here on), or None.
    Once attached, the same :class:`Outputs` again. Used by :func:`adapt` (``gradcheck check`` and the sandbox's
    probe) and by the grader for its reference."""
    held = _fields(obj).get("_gradcheck_outputs")
    if held is not None or isinstance(obj, FunctionPair) or not callable(getattr(obj, "backward", None)):
        return held  # a pair reads its outputs at each forward
    res = _probe_result(obj, inputs, ModeKw(obj.forward, False, mode_keyword(obj.forward)))
    outs = several_outputs(res, obj.backward, type(obj).forward, inputs=inputs)
    if outs is not None:
        outs.attach(obj)
    return outs


#: The suffixes of a loss's derivative function beside it (the tutorial style: ``mse`` with ``mse_prime``).
DERIVATIVE_SUFFIXES = ("_prime", "_grad", "_derivative")


def loss_derivative(fn):
    """The function ``NAME_prime`` (or ``_grad``, ``_derivative``) defined beside a loss function ``NAME`` in its
    module (the tutorial style ``mse(y_true, y_pred) -> float`` with ``mse_prime(y_true, y_pred) -> dL/dy_pred``),
    or None."""
    names = getattr(fn, "__globals__", {})
    return next((g for s in DERIVATIVE_SUFFIXES if inspect.isfunction(g := names.get(fn.__name__ + s))), None)


def objective(fn, init):
    """True when ``--init`` names ``fn``'s second positional argument: ``svm_loss_naive(W, X, y, reg) -> (loss, dW)``
    with ``X``, ``y``, ``reg`` in ``--init`` is a function of its first argument alone (CS231n assignment 1's first
    gradient check, tester23s M4), checked for the gradient of that argument, every other one fixed; the targets
    ``--loss`` draws are not passed."""
    pos = [p.name for p in _positional(fn)]
    return len(pos) >= 2 and pos[1] in (init or {})


def _wrt_dict(fn, w, value, first):
    """The InitError text for ``--wrt NAME`` where NAME's ``--init`` value is a dict of arrays (Andrew Ng's
    ``parameters``): ``--wrt`` checks array arguments, one gradient each; the recipe checks one entry of the dict at a
    time through a function whose argument it is."""
    keys = [k for k, v in value.items() if isinstance(v, np.ndarray)] or list(value)
    k = next((k for k in keys if isinstance(value.get(k), np.ndarray) and value[k].ndim == 2), keys[0] if keys else "W1")
    args = [p for p in (_params(fn) or {}) if p != "self"]
    call = ", ".join(args)
    name = getattr(fn, "__name__", "f")
    return (f"--wrt {w}: {w} is a dict of {len(value)} entries ({', '.join(map(str, keys[:6]))}"
            f"{', ...' if len(keys) > 6 else ''}), not an array: --wrt checks an array argument, the gradient the "
            f"function returns for it. Check one entry of the dict at a time, as an argument of a function beside "
            f"{name} in your file that puts it into the dict and returns its gradient: def {name}_{k}({first}, "
            f"{', '.join(a for a in args if a != first)}, {k}): {w} = dict({w}, {k}={k}); J, grads = {name}({call}); "
            f"return J, grads['d{k}']  (the key your backward stores {k}'s gradient under); then gradcheck check "
            f"FILE::{name}_{k} --loss --input-shape ... --init '{{... the same, and \"{k}\": [[...]]}}' --wrt {k}.")


def gradient_args(fn, kwargs, probe=None, wrt=None):
    """``(names, how)``: the arguments of a ``(loss, grad, ...)`` function of several arguments (:func:`objective`)
    whose gradients it returns, in its order, as jax's ``argnums`` names them, and the header's words on how they were
    told. ``wrt``: the names given (``--wrt theta``); else read from one call on the probe's prediction (``probe[-1]``,
    fn's first argument) with ``kwargs``: each returned gradient's shape against the arrays passed; one gradient of
    the first argument's shape is the first's (CS231n's ``svm_loss_naive(W, X, y, reg)``), else the one argument of
    its shape (Ng's ``linearRegCostFunction(X, y, theta, lambda_)``: theta; word2vec's ``(loss, gradCenterVec,
    gradOutsideVecs)``: one each). When the call raises, the first argument (the check reports the error).

    Raises
    ------
    InitError
        A name of ``wrt`` fn has not, or whose value ``kwargs`` does not give; as many names as gradients returned
        not; gradients whose shapes fit no argument or several (naming ``--wrt``); an ``--init`` value where fn
        needs an object (``dataset.sampleTokenIdx()`` on ``None``: JSON gives no object).
    """
    ps = _params(fn) or {}
    first = next((p.name for p in ps.values() if p.kind in _POSITIONAL), "x")
    if wrt:
        for w in wrt:
            if w not in ps or ps[w].kind not in _NAMED:
                raise InitError(f"--wrt {w}: {_written_as(fn)} has no argument {w}; it has "
                                f"{', '.join(p for p in ps) or 'none'}.")
            if isinstance(kwargs.get(w), dict):  # Ng's parameters {"W1": ..., "b1": ...} (newuser30 F3)
                raise InitError(_wrt_dict(fn, w, kwargs[w], first))
            if w != first and not isinstance(kwargs.get(w), np.ndarray):
                if isinstance(kwargs.get(w), list) and _nested_numbers(kwargs[w]):
                    kwargs[w] = np.array(kwargs[w], dtype=np.float64)  # theta = [0, 0, 0]: the point, as floats
                    continue
                raise InitError(f"--wrt {w}: the value of {w}, the point where its gradient is checked, comes from "
                                f"--init as a JSON list of numbers (\"{w}\": [0.1, -0.2, 0.3]); --init gives "
                                f"{'none' if w not in kwargs else json.dumps(kwargs[w], default=str)[:60]}.")
    res = _probe_call(fn, kwargs, probe, first)
    grads = [np.shape(g) for g in res[1:]] if isinstance(res, tuple) and len(res) >= 2 else None
    if wrt:
        if grads is not None and len(grads) != len(wrt):
            raise InitError(f"--wrt {','.join(wrt)}: {fn.__name__} returned {len(grads)} gradient(s) (shapes "
                            f"{', '.join(map(str, grads))}) after the loss; name one argument per gradient, in the "
                            "order they are returned.")
        return list(wrt), "--wrt " + ",".join(wrt)
    if grads is None:
        return [first], ""
    shapes = {first: np.shape(probe[-1])}
    shapes.update({k: v.shape for k, v in kwargs.items() if isinstance(v, np.ndarray) and v.dtype.kind in "fiu"})
    fits = [[k for k, s in shapes.items() if s == g] for g in grads]
    if len(grads) == 1 and not fits[0] or fits == [[first]]:
        return [first], ""  # the first argument's gradient (or of a wrong shape: the check's FAIL says it)
    told = [(i, f, _agreeing(fn, kwargs, probe, first, res, i, f)) for i, f in enumerate(fits) if len(f) > 1]
    for i, f, agree in told:  # several arguments of its shape: the one whose central differences it is (review30)
        fits[i] = agree if len(agree) == 1 else f
    names = [f[0] for f in fits if len(f) == 1]
    others = ", ".join(f"{k} {s}" for k, s in shapes.items() if k not in names)
    if len(names) == len(grads) and len(set(names)) == len(names):
        what = "gradient's shape" if len(grads) == 1 else "gradients' shapes"
        by = "; ".join(f"gradient {i + 1} {grads[i]} fits {' and '.join(f)}, and agrees with central differences "
                       f"of {fits[i][0]} alone" for i, f, _ in told)
        if by:
            return names, by
        return names, (f"the returned {what} {', '.join(map(str, grads))} {'is' if len(grads) == 1 else 'are'} "
                       f"{' and '.join(n + chr(39) + 's' for n in names)} alone"
                       + (f" (the other arrays: {others})" if others else ""))
    agreed = {i: a for i, _, a in told}
    said = "; ".join(f"gradient {i + 1} {g} fits {' and '.join(f) if f else 'no argument'}"
                     + ("" if i not in agreed else " and agrees with central differences of "
                        + (' and '.join(agreed[i]) if agreed[i] else 'none of them'))
                     for i, (g, f) in enumerate(zip(grads, fits)))
    raise InitError(f"{fn.__name__} returned {len(grads)} gradient(s) after the loss, and their shapes do not tell "
                    f"whose each is ({said}; the arrays passed: "
                    f"{', '.join(f'{k} {s}' for k, s in shapes.items())}): name the argument of each gradient, in the "
                    f"order returned, with --wrt (e.g. --wrt "
                    f"{','.join(next((n for n in f if n != first), f[0]) if f else '...' for f in fits)}, "
                    f"choosing among {'; '.join('|'.join(f) for f in fits if len(f) > 1) or 'the arguments named'}; {first} is "
                    "the data of --input-shape).")


def _agreeing(fn, kwargs, probe, first, res, i, names):
    """Those of ``names`` (arguments of the shape of gradient ``i`` of ``res``, fn's probe call) of which that
    gradient is the derivative of the loss ``res[0]``: along 2 random directions ``u`` (:func:`probe_rng`), ``<g, u>``
    agrees with central differences of fn in that argument, the others as in the probe call
    (:func:`gradcheck._kernel.difference_quotient`, step ``6e-6 * max(1, |argument|)``), within ``rtol`` 1e-4 and
    ``atol`` 1e-7 ``(1 + |loss|)`` by the one rule (:func:`gradcheck._kernel.close`): far above
    the differences' error and round-off, far below the difference between the gradients of two arguments (``2 r x`` and ``2 r w`` of ``sum((x w - 1)**2)``). Two arguments of one shape
    could not be told by it (review30 WRT_FIRST_SILENT: the first was taken and correct code FAILed). An argument
    whose call raises or returns no number does not agree."""
    g = np.asarray(res[i + 1], dtype=np.float64)
    loss = float(np.asarray(res[0], dtype=np.float64).sum())
    rng, out = probe_rng(0, 11), []
    dirs = [rng.standard_normal(g.shape) for _ in range(2)]
    for name in names:
        point = np.array(probe[-1] if name == first else kwargs[name], dtype=np.float64)
        h = 6e-6 * max(1.0, float(np.max(np.abs(point), initial=0.0)))

        def phi(t, u, name=name, point=point):
            kw = copy.deepcopy(kwargs)
            x = np.array(probe[-1], dtype=np.float64, copy=True)
            if name == first:
                x = point + t * u
            else:
                kw[name] = point + t * u
            return float(np.asarray(fn(x, **kw)[0], dtype=np.float64).sum())
        state = global_states()
        try:
            ok = all(close(difference_quotient(lambda t, u=u: phi(t, u), h), float(np.sum(g * u)), 1e-4,
                              1e-7 * (1.0 + abs(loss))) for u in dirs)
        except Exception:  # noqa: BLE001 - student code: that argument is not told by its behaviour
            ok = False
        finally:
            global_states(state)
        if ok:
            out.append(name)
    return out


def _probe_call(fn, kwargs, probe, first):
    """``fn(probe[-1], **kwargs)`` on copies, the global generators restored after; None when there is no probe or
    the call raises (the check calls it again and reports), except that an ``--init`` value given where ``fn``
    needs an object (an AttributeError on a None, a number, a string, a list or a dict of ``kwargs`` whose
    attribute an array has not) is an InitError saying what to do."""
    if probe is None:
        return None
    state = global_states()
    _step("forward")
    try:
        return fn(np.array(probe[-1], dtype=np.float64, copy=True), **copy.deepcopy(kwargs))
    except AttributeError as exc:
        m = re.fullmatch(r"'(\w+)' object has no attribute '(\w+)'", str(exc))
        keys = [k for k, v in kwargs.items() if m and type(v).__name__ == m[1] and not isinstance(v, np.ndarray)]
        if not keys or hasattr(np.ndarray, m[2]):  # y.size on a list: an array expected, the check tells it
            return None
        k, ps = keys[0], _params(fn) or {}
        rest = [p for p in ps if p != k and (ps[p].default is ps[p].empty or p in kwargs)]  # K=10 left to its default
        raise InitError(
            f"{fn.__name__} calls {k}.{m[2]}, so {k} must be an object with a method {m[2]} (--init gave "
            f"{json.dumps(kwargs[k], default=str)[:40]}), and JSON (--init) gives no object. Check it through a "
            f"small function in your file that builds the object and passes the rest: def {fn.__name__}_checked("
            f"{', '.join(rest)}): return {fn.__name__}({', '.join(rest)}, {k}=YourObject()), with any random draws "
            f"it makes seeded inside (random.seed(0)), so that every call sees the same ones; then gradcheck check "
            f"FILE::{fn.__name__}_checked with the same options, {k} left out of --init.") from None
    except Exception:  # noqa: BLE001 - student code: the check calls it again and reports
        return None
    finally:
        global_states(state)


def _fixed_args(kwargs, checked):
    """``["name: words", ...]`` of the arguments held fixed (all of ``kwargs`` but ``checked``): their type and shape
    as the function gets them (``"y: int64 array of shape (5,)"``, ``"n: 3 (int)"``), for the messages of an error."""
    def words(v, k):
        if isinstance(v, np.ndarray):  # labels of two axes from --init's nested list: float64 (students45 F2)
            whole = k in LABEL_NAMES and v.ndim > 1 and v.dtype.kind == "f" and v.size and np.all(v == np.round(v))
            return f"{v.dtype} array of shape {tuple(v.shape)}" + (" of whole numbers" if whole else "")
        if isinstance(v, list):
            return f"a Python list of {len(v)}"
        return f"{json.dumps(v, default=str)[:30]} ({type(v).__name__})"
    return [f"{k}: {words(v, k)}" for k, v in kwargs.items() if k != checked]


#: Names of a loss function's labels argument (:func:`_fixed_args`: CS231n's ``temporal_softmax_loss(x, y, mask)``).
LABEL_NAMES = ("y", "t", "labels", "targets", "target", "y_true", "captions")


class LossFunction:
    """A CS231n loss ``fn(x, y, **init) -> (loss, dx)`` as the manualprop loss protocol; or, with a derivative
    function beside it (:func:`loss_derivative`: ``mse`` and ``mse_prime``), the pair ``fn(...) -> loss``,
    ``prime(...) -> dL/dy_pred``, both called in the order their names say (:func:`loss_order`; Keras's
    ``(y_true, y_pred)`` by default), as :class:`FunctionPair` reads CS231n's ``NAME_forward``/``NAME_backward``.

    ``forward(y_true, y_pred)`` calls ``fn(y_pred, y_true)`` (scores first) and keeps ``dx``;
    ``backward()`` returns a copy of it, named ``gradient_name`` (``d`` + fn's first argument).
    """

    def __init__(self, fn, init=None, probe=None, wrt=None, active=0):
        self.fn, self._kwargs, self._dx = fn, dict(init or {}), None
        self.class_name = fn.__name__
        self.objective = objective(fn, init)  # f(W, X, y, reg): W's gradient, the rest from --init
        #: the arguments whose gradients fn returns, in its order (``--wrt`` or :func:`gradient_args`), the one checked
        #: now (``active``) and forward's first argument's data when another one is checked (the probe's: fixed)
        self.wrt, self.active, self._held, wrt_how = None, int(active), None, ""
        if wrt and not self.objective:  # an option accepted and ignored would be a wrong number
            raise InitError(f"--wrt {','.join(wrt)}: {_written_as(fn)} is checked as a loss of its prediction and "
                            f"target; --wrt names the gradients of a function whose other arguments --init gives "
                            "(its second one too: f(X, y, theta, lambda_) with y, theta, lambda_ in --init).")
        if self.objective:
            self.wrt, wrt_how = gradient_args(fn, self._kwargs, probe, wrt)
            if not 0 <= self.active < len(self.wrt):
                raise InitError(f"{fn.__name__} returns {len(self.wrt)} gradient(s); there is no gradient {active + 1}.")
            if probe is not None:  # kept for every gradient's copy (loaded_with)
                self._held = np.array(probe[-1], dtype=np.float64, copy=True)
        self.prime = None if self.objective else loss_derivative(fn)
        names = [p.name for p in _positional(fn)][:2]
        names += ["x", "y"][len(names):]
        self.pred_first = self.prime_first = True
        if self.prime is not None:  # mse(y_true, y_pred): the order its names say, Keras's by default
            self.pred_first, _, by_name = loss_order(fn)
            # the derivative in the order its own names say (mse(y_pred, y_true) beside mse_prime(y_true, y_pred):
            # review23, it was called in the loss's order and an exact pair FAILed); else the loss's
            prime_first, pnames, prime_by_name = loss_order(self.prime)
            self.prime_first = prime_first if prime_by_name else self.pred_first
            pnames = pnames + names[len(pnames):]
            call = (f"{_bound(fn.__name__, names, _roles(self.pred_first))} -> loss and "
                    f"{_bound(self.prime.__name__, pnames, _roles(self.prime_first))} "
                    f"-> dL/dy_pred (a loss function with its derivative {self.prime.__name__} beside it)")
            names = names if self.pred_first else names[::-1]  # (prediction, target), as CS231n's (x, y)
        if self.wrt is not None:  # the argument checked now takes the prediction's place in the reports
            names = [self.checked] + [n for n in names if n != self.checked][:1]
        self.gradient_name = "d" + names[0]  # softmax_loss(x, y) -> dx
        #: the function's own names of the prediction and the target (reports say x, y: tester17 M3)
        self.info = {"protocol": "loss", "signature": _written_as(fn), "arg_names": names,
                     **({"float_args": f} if (f := _try(float_args, self)) else {})}  # huber_loss's delta=1.0
        if self.wrt is not None:
            fixed = [] if self.checked == self._first or self._held is None else [
                f"{self._first}: {self._held.dtype} array of shape {self._held.shape} (data of --input-shape)"]
            self.info.update(wrt=list(self.wrt), wrt_how=wrt_how, wrt_active=self.active, first_arg=self._first,
                             fixed=fixed + _fixed_args(self._kwargs, self.checked))
        if self.prime is not None:
            self.info.update(call=call, by_name=by_name, pred_arg=names[0])

    def _args(self, y_true, y_pred):
        return (y_pred, y_true) if self.pred_first else (y_true, y_pred)

    def built(self, key):
        """The value of ``fn``'s keyword argument ``key`` this loss calls it with (its ``--init``, else the default;
        None when it has neither), as a layer's attribute holds its constructor argument."""
        p = (_params(self.fn) or {}).get(key)
        return self._kwargs.get(key, None if p is None or p.default is p.empty else p.default)

    def loaded_with(self, init, wrt=None, wrt_active=None):
        """This loss function with the arguments ``init`` in place of its own (``reg = 0``), as
        :meth:`gradcheck.sandbox.RemoteLoss.loaded_with` builds a sandboxed one; the gradient ``wrt_active`` of
        ``wrt`` checked (by default the same as this one)."""
        return LossFunction(self.fn, init, None if self._held is None else (None, self._held), wrt or self.wrt,
                            self.active if wrt_active is None else wrt_active)

    def forward(self, y_true, y_pred):
        """``fn(y_pred, y_true, **init)`` (scores first, as CS231n); keep ``dx``; return the loss. With a derivative
        function, ``fn`` and it in their names' order (the loss, and ``dx`` kept).

        Raises
        ------
        AdapterError
            When ``fn`` does not return ``(loss, dx)`` (and has no derivative function beside it).
        """
        if self.prime is not None:
            loss = self.fn(*self._args(y_true, y_pred), **copy.deepcopy(self._kwargs))
            if isinstance(loss, tuple):
                raise AdapterError(f"{self.fn.__name__} returned a tuple of {len(loss)} beside its derivative "
                                   f"{self.prime.__name__}: a loss function with a derivative returns the loss alone.")
            yt, yp = np.array(y_true, copy=True), np.array(y_pred, copy=True)
            self._dx = self.prime(*((yp, yt) if self.prime_first else (yt, yp)), **copy.deepcopy(self._kwargs))
            return loss
        if self.wrt is not None and self.checked != self._first:  # f(X, y, theta): theta's gradient, X held
            if self._held is None:
                raise AdapterError(f"{self.fn.__name__}: the data of {self._first} is missing (built without a probe).")
            res = self.fn(self._held.copy(), **{**copy.deepcopy(self._kwargs), self.checked: y_pred})
        else:
            res = self.fn(y_pred, *(() if self.objective else (y_true,)), **copy.deepcopy(self._kwargs))
        n = 1 + (len(self.wrt) if self.wrt is not None else 1)
        if not (isinstance(res, tuple) and len(res) == n):
            raise AdapterError(f"{self.fn.__name__} must return (loss, {', '.join('d' + w for w in self.wrt or ['x'])});"
                               f" got {type(res).__name__}{'' if not isinstance(res, tuple) else f' of {len(res)}'} "
                               "(a loss returning the loss alone needs its derivative beside it: "
                               f"{self.fn.__name__}_prime, _grad or _derivative).")
        loss, self._dx = res[0], res[1 + self.active]
        return loss

    @property
    def _first(self):
        """fn's first positional argument's name (the data ``--input-shape`` draws)."""
        return next(iter([p.name for p in _positional(self.fn)] or ["x"]))

    @property
    def checked(self):
        """The name of the argument whose gradient is checked now."""
        return self._first if self.wrt is None else self.wrt[self.active]

    def backward(self):
        """A copy of the ``dx`` the last forward returned (dL/dy_pred).

        Raises
        ------
        AdapterError
            Before a forward.
        """
        if self._dx is None:
            raise AdapterError(f"{self.fn.__name__}: backward() called before forward().")
        return _copy(self._dx)


#: Names of a loss's prediction and target arguments (Keras, PyTorch, Deep Learning from Scratch, CS231n).
PRED_NAMES = ("y_pred", "ypred", "pred", "preds", "prediction", "predictions", "predicted", "input", "inputs",
              "logits", "x", "output", "outputs", "out", "scores", "score", "yhat", "y_hat", "probs", "y_prob")
TARGET_NAMES = ("y_true", "ytrue", "true", "target", "targets", "label", "labels", "t", "y", "truth", "gt",
                "ground_truth", "y_target", "expected", "actual", "teacher")


def loss_order(fn):
    """``(prediction first, forward's first two argument names, read from the names)`` for a loss's
    ``forward``: the names say which is the prediction (:data:`PRED_NAMES`, :data:`TARGET_NAMES`: ``x, t``,
    ``input, target``, ``y_true, y_pred``; ``y`` beside another target name, ``y, t``, is the prediction);
    otherwise Keras's order ``(y_true, y_pred)`` is assumed."""
    ps = (_params(fn) or {}).values()  # keyword-only ones too: forward(self, *, y_pred, y_true)
    names = ([p.name for p in ps if p.kind in _POSITIONAL] + [p.name for p in ps if p.kind == p.KEYWORD_ONLY])[:2]
    if len(names) < 2:
        return False, names, False
    kind = [("pred" if n.lower() in PRED_NAMES else "target" if n.lower() in TARGET_NAMES else None) for n in names]
    if kind == ["target", "target"] and "y" in names:  # (y, t): Deep Learning from Scratch's output and teacher
        kind[names.index("y")] = "pred"
    if kind[0] != "target" and kind[1] != "pred" and "pred" in kind or kind[1] == "target" and kind[0] is None:
        return True, names, True
    if kind[0] != "pred" and kind[1] != "target" and (kind[0] == "target" or kind[1] == "pred"):
        return False, names, True
    return False, names, False


class BoundLoss:
    """A loss class as ``forward(y_true, y_pred) -> L``, ``backward() -> dL/dy_pred``: the student's forward
    gets the prediction where its parameter names put it (:func:`loss_order`), its backward the upstream
    gradient 1.0 (dL/dL, as PyTorch's and DLfS's callers pass) when it requires one (``backward(self, dout)``).
    :attr:`info` says how it was called (the header's ``loss`` lines)."""

    def __init__(self, obj, probe=None, pred_arg=None):
        self.obj, self.class_name = obj, type(obj).__name__
        self.student_forward, self.student_backward = obj.forward, obj.backward
        self.pred_first, names, by_name = loss_order(obj.forward)
        ps = _params(obj.forward) or {}
        #: forward's two names when one is keyword-only (forward(self, *, y_pred, y_true)): both passed by name
        self.keywords = names if len(names) == 2 and any(ps[n].kind == ps[n].KEYWORD_ONLY for n in names) and not \
            any(ps[n].kind == ps[n].POSITIONAL_ONLY for n in names) else None
        self.upstream, self.upstream_keyword = _upstream_arg(obj.backward)
        roles = _roles(self.pred_first)
        star = next((p.name for p in ps.values() if p.kind == p.VAR_POSITIONAL), None) if len(names) < 2 else None
        call = (f"forward(*{star}) with ({', '.join(roles)})" if star else
                _bound("forward", names, roles, "*, " if self.keywords else ""))
        #: a stateless backward(self, y_pred, y_true) (tester10 T10): given forward's arrays, bound by its own names
        self.stateless, self._last = _stateless_backward(obj.backward), None
        #: CS7643's SoftmaxCrossEntropy: backward() returns nothing and stores dL/dy_pred in self.dx, as its layers
        #: store dX (:func:`stored_results`), and forward returns (probs, loss) (corpus37 F2); set before any probe
        bwd = getattr(type(obj), "backward", None)
        self.stored_dx = _stores(bwd, STORED_DINPUTS) if isinstance(bwd, types.FunctionType) and \
            self.stateless is None else None
        if self.stateless is not None:
            self.upstream, self.upstream_keyword = None, False
            call += " and " + _bound("backward", self.stateless[1], _roles(self.stateless[0]))
        #: Neural Networks from Scratch: forward's per-sample losses, their mean by the base class's calculate(output, y)
        self.calculate = _nnfs_calculate(obj)
        if len(names) == 1 and not star and self.calculate is None:  # newuser29 M1: forward(X) -> one number
            raise UnreadableError(
                f"--loss is for a loss forward(y_pred, y_true) -> L with backward() -> dL/dy_pred; "
                f"{self.class_name}.forward takes one array ({names[0]}). A forward({names[0]}) -> one number with "
                f"backward(dY) (a penalty, a loss of {names[0]} alone) is checked as a layer: drop --loss "
                f"(gradcheck check FILE::{self.class_name} --input-shape ...); its backward is given dY as one number.")
        if self.calculate is not None:
            self.pred_first, cnames, by_name = loss_order(self.calculate)
            names = cnames if by_name else names
            croles = _roles(self.pred_first)
            call = (f"{_bound('calculate', cnames, croles)}, Neural Networks from Scratch's mean of forward's "
                    f"per-sample losses, {call}")
            roles, self.keywords = croles, None
        #: NNFS's Activation_Softmax_Loss_CategoricalCrossentropy: backward(self.output, y_true) (tester13 H5)
        self.own_output = _own_output(self, probe)
        if self.own_output:
            call = call[:call.index(" and backward(")] + (
                f" and backward({self.stateless[1][0]}=self.output, {self.stateless[1][1]}=y_true): backward's "
                "first argument is the layer's own output (self.output, set by forward), as in Neural Networks "
                "from Scratch's combined softmax and cross-entropy; it stores dL/d(inputs), dL/dy_pred, in "
                "self.dinputs")
        elif self.stateless is not None and _assigns(obj.backward, "dinputs"):
            call += ", which stores dL/dy_pred in self.dinputs"
        if pred_arg is not None:  # tester13 H6: --pred-arg NAME says which argument is the prediction
            self.pred_first, by_name = _pred_arg_first(obj, names, pred_arg), "--pred-arg"
            roles = _roles(self.pred_first)
            call = _bound("forward", names, roles) + call[call.index(")") + 1:]
        role = None
        if not by_name and len(names) == 2 and not star and self.stateless is None and probe is not None:
            role = _order_by_role(self, names, *probe)  # Z17: forward(a, b), told by what backward returns
            if getattr(self, "sign_ambiguous", ""):  # tester13 H6: only the user can tell the order
                raise UnreadableError(_undecidable_order(obj, names, self.sign_ambiguous))
            if getattr(self, "backward_only", ""):  # tester14: nor when only backward's own result tells it
                raise UnreadableError(_backward_only_order(obj, names, self.backward_only, *probe))
            if role is not None:
                roles = _roles(self.pred_first)
                call = _bound("forward", names, roles) + call[call.index(")") + 1:]
        layout = [_tuple_loss(self, probe)] if probe is not None and self.calculate is None else []
        if self.stored_dx:
            layout.append(f"backward() returns nothing and stores dL/dy_pred in self.{self.stored_dx} (as CS7643's "
                          "layers do): it is read there")
        self.info = {"layout": "; ".join(t for t in layout if t), "protocol": "loss", "call": call, "by_name": by_name, "pred_arg": names[roles.index("y_pred")]
                     if len(names) == 2 else "", "upstream": self.upstream or "", "by_role": role or "",
                     "neither": getattr(self, "neither", ""), "signature": _forward_signature(obj),
                     **({"float_args": f} if (f := _try(float_args, obj)) else {})}  # a Huber's delta=1.0 (fix37a)
        if len(names) == 2 and self.calculate is None and (bounds := _try(_loss_bounds, obj, names, roles)):
            self.info.update(bounds)  # the prediction's bounds forward compares it with (tester22s H4)

    @property
    def params(self):
        """The student's loss's own ``params`` (a learnable temperature; a wrong type is refused as before)."""
        return getattr(self.obj, "params", None)

    @property
    def grads(self):
        """The student's loss's own ``grads`` (None when it has none)."""
        return getattr(self.obj, "grads", None)

    def forward(self, y_true, y_pred):
        """The student's forward (or NNFS's ``calculate``) with the prediction and the target where its
        parameter names put them (by keyword when one is keyword-only); returns its loss.
        """
        r = self.student_result(y_true, y_pred)
        return r[at] if (at := _loss_item(r)) is not None else r  # CS7643's (probs, loss): the loss (_tuple_loss)

    def student_result(self, y_true, y_pred):
        """What the student's forward (or NNFS's ``calculate``) returns, called as :meth:`forward` calls it."""
        self._last = (y_true, y_pred)
        args = (y_pred, y_true) if self.pred_first else (y_true, y_pred)
        if self.calculate is not None:  # after new_pass() (Ch18-22's accumulated_sum), regularization left out
            _flush(self.obj)
            return self.calculate(*args, **_data_loss_only(self.calculate))
        return self.obj.forward(**dict(zip(self.keywords, args))) if self.keywords else self.obj.forward(*args)

    def backward(self):
        """dL/dy_pred from the student's backward: given the upstream gradient 1.0 when it takes one (by
        keyword for a keyword-only one); a stateless ``backward(y_pred, y_true)`` given copies of the
        last forward's arrays (NNFS's combined softmax and cross-entropy: its own ``self.output``),
        ``self.dinputs`` read when it returns None.
        """
        if self.stateless is not None and self._last is not None:
            y_true, y_pred = (np.array(v, copy=True) for v in self._last)
            if self.own_output:  # backward(dvalues=self.output, y_true): the layer's own output
                y_pred = np.array(self.obj.output, dtype=np.float64, copy=True)
            stored = _fields(self.obj).pop("dinputs", None) if _assigns(self.obj.backward, "dinputs") else None
            res = self.obj.backward(*((y_pred, y_true) if self.stateless[0] else (y_true, y_pred)))
            if res is None and _assigns(self.obj.backward, "dinputs"):  # NNFS: backward(dvalues, y_true) -> None
                return _fields(self.obj).get("dinputs", stored)
            return res
        if self.upstream_keyword:  # backward(self, *, grad_output)
            r = self.obj.backward(**{self.upstream: 1.0})
        else:
            r = self.obj.backward(*([1.0] if self.upstream else []))
        return _stored_result(self.obj, r, self.stored_dx)  # CS7643's self.dx


def _tuple_loss(loss, probe):
    """The header's words (:attr:`BoundLoss.info`'s ``layout``) for a loss whose forward returns a tuple on the
    ``probe`` ``(y_true, y_pred)`` (called with the object's state put back after): L is its one number
    (:func:`_loss_item`, CS7643's ``return probs, loss``, corpus37 F2); "" for a forward returning anything else,
    or raising (the check reports it).

    Raises
    ------
    AdapterError
        A tuple in which not exactly one item is a number: which is the loss cannot be told (exit 3, naming the
        layout; before, "gave L as a tuple" was a wrong result, exit 1).
    """
    with _all_undone([loss.obj]):
        res = _try(loss.student_result, *probe)
    if type(res) is not tuple:
        return ""
    items = ", ".join(f"an array of shape {tuple(v.shape)}" if isinstance(v, np.ndarray) and v.ndim else
                      "a number" if _loss_item((v,)) == 0 else type(v).__name__ for v in res)
    if (at := _loss_item(res)) is None:
        n = sum(_loss_item((v,)) == 0 for v in res)
        raise AdapterError(
            f"{loss.class_name}.forward returns a tuple of {len(res)} items ({items}). --loss reads the loss L from a "
            f"tuple only when exactly one item is a number (CS7643's forward returning (probs, loss)); here "
            f"{'none is' if not n else f'{n} are'}, so which is L cannot be told. Return the loss alone from forward "
            "(keep the other items on self).")
    return f"forward returns {len(res)} items ({items}): L is item {at + 1}, the one number (CS7643's (probs, loss))"


def _loss_bounds(obj, names, roles):
    """``{"compared_constants": [...], "residual_constants": [...], "target_constants": [...], "target_ordered": [...]}``
    of a loss's forward
    (:func:`_switch_reach.compared_constants`): the values of the prediction it compares it with (``np.clip(p, eps,
    1 - eps)``), those of the residual prediction - target (``np.abs(y_pred - y_true) <= delta``: the target read as
    0), not already the first, and those it compares the target itself with (``labels != self.ignore_index``); {}
    when it compares with none. The check is made again at predictions around the first two (tester22s H4) and at
    targets holding the third (session 23: a masked cross-entropy's backward that forgets its mask passed, the drawn
    labels never being -100) or just beyond the fourth, those of ordering comparisons (``labels >= 0``: -1)."""
    pred, target = names[roles.index("y_pred")], names[roles.index("y_true")]
    direct = _switch_reach.compared_constants(obj, pred)
    residual = [c for c in _switch_reach.compared_constants(obj, pred, (target,)) if c not in direct]
    out = {"compared_constants": direct, "residual_constants": residual,
           "target_constants": _switch_reach.compared_constants(obj, target),
           "target_ordered": _switch_reach.compared_constants(obj, target, ordered=True)}
    return out if any(out.values()) else {}


def _roles(pred_first):
    """The roles of a loss's two arguments in their order: ``["y_pred", "y_true"]`` when the prediction is first."""
    return ["y_pred", "y_true"] if pred_first else ["y_true", "y_pred"]


def _bound(method, names, roles, lead=""):
    """How the header says a method is called: ``forward(scores=y_pred, labels=y_true)``."""
    return f"{method}({lead}{', '.join(f'{n}={r}' for n, r in zip(names, roles))})"


#: Names of a loss backward's upstream gradient: given 1.0 (dL/dL) also when they have a default (``dout=None``).
UPSTREAM_NAMES = ("dout", "d_out", "dy", "grad", "grad_output", "grad_out", "gradient", "upstream", "dl", "dloss",
                  "d_loss", "delta", "g", "dz", "top_diff")


def _stateless_backward(backward):
    """``(prediction first, names)`` when a loss's ``backward`` takes the prediction and the target itself
    (``backward(self, y_pred, y_true)``, Neural Networks from Scratch's ``backward(dvalues, y_true)``): two required
    arguments, the names of at least one saying which (:func:`loss_order`); else None."""
    ps = _positional(backward, required=True)
    if len(ps) != 2 or ps[0].name.lower() in UPSTREAM_NAMES:
        return None
    first, names, by_name = loss_order(backward)
    return (first, names) if by_name else None


def _directional_error(loss, y_true, y_pred, g, seed=0):
    """The largest relative error of ``<g, u>`` against the central difference of ``loss.forward`` along
    ``u`` in ``y_pred`` (two random directions): how well ``g`` is dL/dy_pred in the order ``loss`` uses;
    2.0 (not 1.0 or less) when the two have opposite signs in every direction."""
    num, man = _along(lambda v: float(loss.forward(y_true, v)), y_pred, g, 2, seed)
    worst = float(np.max(relative_error(num, man, 1e-12)))
    return 2.0 if np.all(num * man < 0) else worst if np.any(num != 0) else 1.0  # L flat in y_pred: no evidence


def _along(phi, x, g, n, seed):
    """``(central differences, <g, u>)`` of the scalar ``phi`` at ``x`` along ``n`` random directions ``u`` (from
    ``probe_rng(seed)``, drawn first; step ``1e-5 * max(1, max|x|)``), as arrays: a loss's one directional measure
    in ``y_pred`` (:func:`_directional_error`, :func:`_factor`) or in ``y_true``
    (:func:`gradcheck.diagnose.name_target_gradient`)."""
    rng, h = probe_rng(seed), 1e-5 * max(1.0, float(np.max(np.abs(x))))
    us = [rng.standard_normal(x.shape) for _ in range(n)]
    return (np.array([difference_quotient(lambda t, u=u: phi(x + t * u), h) for u in us]),
            np.array([float(np.sum(g * u)) for u in us]))


def _order_by_role(loss, names, y_true, y_pred):
    """Which of a loss's ``forward(a, b)`` arguments is the prediction when their names do not say
    (:func:`loss_order`), told by what backward returns on the probe ``(y_true, y_pred)``: the order in
    which it has the prediction's shape when only one does, else the one in which it matches the central
    differences (relative error under 1e-3, the other's over 1e-2). Sets ``loss.pred_first`` and returns
    the header's reason, or None (Keras's order kept)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred, dtype=np.float64)
    if (told := _order_by_data(loss, names, y_true, y_pred)) is not None:  # session 15: not by backward's result
        return told
    seen = _each_order(loss, y_true, y_pred, lambda g: (
        g.shape, _directional_error(loss, y_true, y_pred, g) if g.shape == y_pred.shape else 1.0))
    shaped = [f for f, v in seen.items() if v[0] == y_pred.shape]
    if len(shaped) == 1 and y_true.shape != y_pred.shape:
        loss.pred_first = shaped[0]
        pred, other = names if shaped[0] else names[::-1]
        return (f"backward returns an array of {pred}'s shape {tuple(y_pred.shape)}, not {other}'s "
                f"{tuple(y_true.shape)}: {pred} is the prediction")
    if len(shaped) != 2:
        return None
    (good, bad) = (True, False) if seen[True][1] < seen[False][1] else (False, True)
    pred, other = names if good else names[::-1]
    if seen[good][1] < 1e-3 < 1e-2 < seen[bad][1]:
        loss.pred_first = good
        if abs(seen[bad][1] - 2.0) < 1e-6 and _mirrored(loss, y_true, y_pred, bad):  # dL/da = -dL/db (L of
            loss.sign_ambiguous = f"{pred},{other}"  # a - b): a sign error reads as the other order exactly
        elif y_true.shape == y_pred.shape and y_true.dtype.kind in "iubfc":  # tester14, session 15 (two kinds the
            loss.backward_only = f"{pred},{other}"  # data do not order): backward alone would decide, so a
            # gradient for the target could never fail
        return (f"backward's result matches the central differences of L with respect to {pred} (relative error "
                f"{seen[good][1]:.1e}), not {other} ("
                f"{'the opposite sign' if seen[bad][1] == 2.0 else f'{seen[bad][1]:.1e}'}): {pred} is the prediction")
    if (prop := _proportional_order(loss, names, y_true, y_pred)) is not None:  # tester12 M6: c * dL/da, no
        return prop  # multiple of dL/db: a sign or factor bug, compared with the prediction's gradient
    if seen[good][1] < 2.0 == seen[bad][1]:  # matches neither: it points along one gradient, against the other
        loss.pred_first = good
        return (f"backward's result matches the central differences of L with respect to neither, but points "
                f"along the one with respect to {pred} and against {other}'s: {pred} is taken as the prediction")
    return None


def _each_order(loss, y_true, y_pred, read):
    """``{pred_first: read(g)}`` in both orders of a loss's two arguments, ``g`` backward's result (float64) after a
    forward in that order (``read`` called in it); an order in which the student's code raises is left out (the
    check reports it). ``loss.pred_first`` is left False (Keras's order), no forward kept."""
    out = {}
    for first in (False, True):
        loss.pred_first = first
        try:
            loss.forward(y_true, y_pred)
            out[first] = read(np.asarray(loss.backward(), dtype=np.float64))
        except Exception:  # noqa: BLE001 - the order the student's code does not take
            continue
    loss.pred_first, loss._last = False, None
    return out


def _affine_in(f, a) -> bool | None:
    """Whether ``f(a)`` (a scalar function) is affine in ``a`` along a random relative direction (each entry moved
    by about 1% of itself, so zeros stay zeros and signs are kept): its second difference no more than round-off
    of its values; None when ``f`` fails or is not finite there (no evidence)."""
    u = np.asarray(a, dtype=np.float64) * probe_rng(11).normal(0.0, 1e-2, np.shape(a))
    try:
        v = [float(f(np.asarray(a, dtype=np.float64) + s * u)) for s in (-1.0, 0.0, 1.0)]
    except Exception:  # noqa: BLE001 - data this argument does not take: no evidence
        return None
    if not all(np.isfinite(v)):
        return None
    return abs(v[0] - 2 * v[1] + v[2]) <= 1e-9 * (abs(v[0]) + 2 * abs(v[1]) + abs(v[2]))


def _order_by_data(loss, names, y_true, y_pred):
    """Which argument of an unnamed ``forward(a, b)`` is the prediction, told by the data when the two are of
    different kinds and one shape (logits or probabilities beside one-hot or probability targets; session 15),
    never by backward's result (a backward differentiating the target would otherwise choose the order that makes
    it right): the order in which forward is finite when it is only in one (a log of one-hot targets is -inf), else
    the one in which L is affine in the target and not in the prediction (a cross-entropy is a sum of target
    entries times a function of the prediction: ``-sum(t * log p)``), when that holds in exactly one order. Sets
    ``loss.pred_first`` and returns the header's reason; None when the data cannot tell."""
    if y_true.shape != y_pred.shape or y_true.dtype.kind not in "iubfc" or same_kind(y_true, y_pred):
        return None  # integer labels beside a float prediction are two kinds too (tester15b H1)
    finite, fits = {}, {}
    for first in (False, True):
        loss.pred_first = first
        try:
            finite[first] = bool(np.isfinite(float(loss.forward(y_true, y_pred))))
        except Exception:  # noqa: BLE001 - the order the student's code does not take
            finite[first] = False
        fits[first] = finite[first] and _affine_in(lambda t: loss.forward(t, y_pred), y_true) is True and \
            _affine_in(lambda p: loss.forward(y_true, p), y_pred) is False
    loss.pred_first, loss._last = False, None
    kinds = f"{data_kind(y_pred)} y_pred beside {data_kind(y_true)} y_true"
    for first in (False, True):
        pred, other = names if first else names[::-1]
        if finite[first] and not finite[not first]:
            loss.pred_first = first
            return (f"the data say it ({kinds}): forward is finite only with {pred} as the prediction (with {other} "
                    f"it is not): {pred} is the prediction")
        if fits[first] and not fits[not first]:
            loss.pred_first = first
            return (f"the data say it ({kinds}): L is affine in {other} when it holds y_true, as a cross-entropy "
                    f"is in its target, and not in {pred}: {pred} is the prediction")
    return None


def _mirrored(loss, y_true, y_pred, first: bool) -> bool:
    """Whether backward's result with ``loss.pred_first = first`` is exactly minus the central differences of L
    there (dL/da = -dL/db, a loss of a - b: a sign bug in one order is the other order; tester13 H6), not merely
    against them (``(a - b)**2 + a**3``); ``loss.pred_first`` is left as it was."""
    kept = loss.pred_first
    try:
        loss.pred_first = first
        loss.forward(y_true, y_pred)
        g = np.asarray(loss.backward(), dtype=np.float64)
        return g.shape == np.shape(y_pred) and _directional_error(loss, y_true, y_pred, -g) < 1e-3
    except Exception:  # noqa: BLE001 - the order _order_by_role already ran: no evidence otherwise
        return False
    finally:
        loss.pred_first, loss._last = kept, None


def _forward_signature(obj) -> str:
    """``forward(self, a, b)``: the student's own signature of ``obj``'s forward, as written."""
    return _written_as(getattr(type(obj), "forward", None), "forward")


def _pred_arg_first(obj, names, pred_arg: str) -> bool:
    """Whether ``--pred-arg pred_arg`` names forward's first argument (of its first two, ``names``); a usage
    error (UnreadableError) when it names neither."""
    if pred_arg not in names[:2] or len(names) < 2:
        raise UnreadableError(f"--pred-arg {pred_arg}: {type(obj).__name__}.{_forward_signature(obj)} has no "
                              f"such argument among its first two; expected one of {', '.join(names[:2]) or '(none)'}.")
    return names.index(pred_arg) == 0


def _undecidable_order(obj, names, ambiguous: str) -> str:
    """The usage error of a loss ``forward(a, b)`` of ``a - b`` whose names do not say which is the prediction
    (tester13 H6): backward matches the gradient with respect to one argument, which is right if that one is the
    prediction and the wrong sign if the other is, and the numbers cannot tell the two apart."""
    good, bad = ambiguous.split(",")
    a, b = names
    return _unordered(obj, names, f"L depends on {a} and {b} so that dL/d{a} = -dL/d{b} (a loss of {a} - {b}): "
                      f"backward returns dL/d{good}, which is correct if {good} is the prediction and has the wrong "
                      f"sign if {bad} is. The numbers cannot tell these two apart; only you can tell which argument "
                      "is the prediction.")


def _unordered(obj, names, why: str) -> str:
    """Each usage error of a loss ``forward(a, b)`` whose argument order gradcheck cannot read: the class and its
    forward, "the argument names do not say which is the prediction, and " ``why``, and the two ways to say it."""
    a, b = names
    return (f"{type(obj).__name__}.{_forward_signature(obj)}: the argument names do not say which is the "
            f"prediction, and {why} Name forward's arguments, as (y_pred, y_true) (Neural Networks from Scratch), "
            f"(input, target) (PyTorch), (y_true, y_pred) (Keras) or (x, t), to have them bound by name, or add "
            f"--pred-arg {a} or --pred-arg {b} to say which is the prediction.")


def data_kind(a) -> str:
    """What an array of loss data is, as ``--pred`` and ``--targets`` draw it: ``"labels"`` (integers), ``"onehot"``
    (0s and 1s), ``"probs"`` (in (0, 1), rows summing to 1), ``"unit"`` (in (0, 1)) or ``"real"``."""
    a = np.asarray(a)
    if a.dtype.kind in "iub":
        return "labels"
    a = a.astype(np.float64)
    if a.size and np.all((a == 0) | (a == 1)):
        return "onehot"
    if a.size and np.all((a > 0) & (a < 1)):
        return "probs" if a.ndim and sums_to_one(a) else "unit"
    return "real"


def same_kind(y_true, y_pred) -> bool:
    """Whether a loss's target and prediction are arrays of the same shape and kind (:func:`data_kind`), so that
    the data cannot say which argument of an unnamed ``forward(a, b)`` is the prediction (tester14)."""
    return np.shape(y_true) == np.shape(y_pred) and data_kind(y_true) == data_kind(y_pred)


def _backward_only_order(obj, names, matched: str, y_true, y_pred) -> str:
    """The usage error of a loss ``forward(a, b)`` whose argument names do not say which is the prediction, on data
    of one kind for both (:func:`same_kind`) or of one shape that :func:`_order_by_data` cannot order, whose backward matches L's gradient with respect to one argument
    (tester14): right if that one is the prediction, the target's gradient (the wrong argument differentiated) if the
    other is; the numbers cannot tell the two apart, only the user can."""
    good, bad = matched.split(",")
    data = (f"y_true and y_pred are of the same kind ({data_kind(y_pred)} of shape {tuple(np.shape(y_pred))}), so "
            f"the data cannot say it either" if same_kind(y_true, y_pred) else
            f"y_true and y_pred ({data_kind(y_true)} and {data_kind(y_pred)} of shape {tuple(np.shape(y_pred))}) do "
            f"not say it either (L is not affine in exactly one of them, as a cross-entropy is in its target)")
    return _unordered(obj, names, f"{data}. backward matches dL/d{good} (the central differences of L with respect "
                      f"to {good}), so a correct loss with {good} as the prediction and a loss whose backward "
                      f"differentiates the wrong argument ({bad} the prediction) look the same: which argument is the "
                      "prediction cannot be read from backward's own result.")


def _factor(loss, y_true, y_pred, g, seed=1):
    """``c`` when ``g`` is ``c`` times dL/dy_pred in the order ``loss`` uses, along three random directions (their
    central differences ``c <g, u>`` to a relative 1e-4); None when it is no multiple of it (or L is flat)."""
    num, man = _along(lambda v: float(loss.forward(y_true, v)), y_pred, g, 3, seed)
    if not np.any(num) or not np.any(man):
        return None
    c = float(np.sum(num * man) / np.sum(num * num))  # g = c dL/dy_pred: man = c num
    return c if np.max(np.abs(man - c * num)) <= 1e-4 * np.max(np.abs(man)) else None


def _proportional_order(loss, names, y_true, y_pred):
    """When backward matches neither argument's gradient of a ``forward(a, b)`` (:func:`_order_by_role`): the
    header's reason when it is a multiple (a sign, a factor) of exactly one of them, which is then the prediction
    (``loss.pred_first`` set); else None, and ``loss.neither`` says the order is unknown."""
    c = _each_order(loss, y_true, y_pred, lambda g: _factor(loss, y_true, y_pred, g))
    fits = [f for f, v in c.items() if v is not None]
    if len(fits) == 2:  # a multiple of both (a loss of a - b): the factor is wrong whichever is the prediction
        return _proportional_both(loss, names, c)
    if len(fits) != 1:
        loss.neither = ",".join(names) if not fits and len(c) == 2 else ""
        return None
    loss.pred_first = fits[0]
    pred, other = names if fits[0] else names[::-1]
    if _near_one(c[fits[0]]):  # tester15b M2: "1 times ... (a sign or a constant factor wrong)" named no bug
        return (f"{_close_text(pred, c[fits[0]])}, and no multiple of those with respect to {other}: {pred} is the "
                "prediction")
    return (f"backward's result is {c[fits[0]]:.3g} times the central differences of L with respect to {pred} (a "
            f"sign or a constant factor wrong), and no multiple of those with respect to {other}: {pred} is the "
            f"prediction")


def _near_one(c: float) -> bool:
    """Whether a factor ``c`` between backward's result and a gradient is 1 to the 3 digits the header shows
    (``|c - 1| < 5e-3``): no sign or factor bug (a small difference, an eps's), so never called one (tester15b M2:
    "backward's result is 1 times the central differences ... (a sign or a constant factor wrong)")."""
    return abs(c - 1) < 5e-3


def _close_text(pred, c):
    """The header's words for backward's result a factor ``c`` near 1 (:func:`_near_one`) times L's gradient with
    respect to ``pred``."""
    return (f"backward's result is close to the central differences of L with respect to {pred} (a factor of {c:.6g}: "
            "no sign or factor bug, a small difference such as an eps's; the table shows how close)")


def _proportional_both(loss, names, c):
    """The header's reason when backward's result is ``c[first]`` times L's gradient with respect to each argument of
    a ``forward(a, b)`` (neither factor 1: a sign or factor bug in either order; dL/da = -dL/db for a loss of
    ``a - b``, whose factor is then the same up to its sign; tester13 MSEFactor). The prediction is taken to be the
    argument backward points along (a positive factor), else Keras's order is kept; ``loss.pred_first`` set."""
    a, b = names
    pos = [f for f in (True, False) if c[f] > 0]
    loss.pred_first = pos[0] if len(pos) == 1 else False
    pred, other = names if loss.pred_first else names[::-1]
    mirrored = abs(c[True] + c[False]) <= 1e-4 * abs(c[True])
    if _near_one(c[loss.pred_first]):  # a factor 1 along the prediction's gradient is no factor bug (tester15b M2)
        return (f"{_close_text(pred, c[loss.pred_first])} and {c[not loss.pred_first]:.3g} times those with respect "
                f"to {other}"
                + (f" (dL/d{a} = -dL/d{b}, a loss of {a} - {b})" if mirrored else "")
                + f": {pred} is taken as the prediction")
    return (f"backward's result is {c[loss.pred_first]:.3g} times the central differences of L with respect to "
            f"{pred} and {c[not loss.pred_first]:.3g} times those with respect to {other}"
            + (f" (dL/d{a} = -dL/d{b}, a loss of {a} - {b})" if mirrored else "")
            + f": a constant factor is wrong whichever is the prediction; {pred} is taken as the prediction")


def _nnfs_calculate(obj):
    """``obj.calculate`` when it is Neural Networks from Scratch's ``Loss.calculate(output, y)`` (the mean of
    forward's per-sample losses): a method of two required array arguments beside forward; else None."""
    calc = getattr(obj, "calculate", None)
    ps = _positional(calc, required=True)
    return calc if callable(calc) and len(ps) == 2 else None


def _data_loss_only(calc) -> dict:
    """``{"include_regularization": False}`` when NNFS's ``calculate`` takes that keyword (Ch16-22: True returns
    ``(data_loss, regularization_loss)``, the latter read from ``self.trainable_layers``, which only its ``Model``
    sets); else {}. The loss checked is the data loss, the mean of forward's per-sample losses."""
    return {"include_regularization": False} if "include_regularization" in (_params(calc) or {}) else {}


def _own_output(loss, probe) -> bool:
    """Whether a loss's stateless ``backward(dvalues, y_true)`` that stores ``self.dinputs`` takes the layer's own
    output: its forward assigns ``self.output`` (read from the source), an array of the prediction's shape on the
    ``probe`` ``(y_true, y_pred)`` (Neural Networks from Scratch's combined softmax and loss, whose book calls
    ``backward(obj.output, y)``; tester13 H5). Its ``dinputs`` is then dL/d(forward's inputs)."""
    obj = loss.obj
    if loss.stateless is None or probe is None or not loss.stateless[0] or not _assigns(obj.backward, "dinputs"):
        return False
    if not _assigns(obj.forward, "output"):
        return False
    y_true, y_pred = (np.array(v, copy=True) for v in probe)
    try:
        loss.forward(y_true, np.asarray(y_pred, dtype=np.float64))
        out = getattr(obj, "output", None)
        return isinstance(out, np.ndarray) and out.shape == y_pred.shape
    except Exception:  # noqa: BLE001 - student code: the check calls it again and reports
        return False
    finally:
        loss._last = None


def _assigns(fn, attr):
    """Whether method ``fn`` assigns ``self.<attr>`` (a loss's ``self.dinputs``, ``self.output``: Neural Networks
    from Scratch), read from its source."""
    tree = _source(fn)
    return tree is not None and any(_switch_reach.self_attr(n) == attr and isinstance(n.ctx, ast.Store)
                                    for n in ast.walk(tree))


def _upstream_arg(backward):
    """``(name, keyword-only)`` of the upstream gradient a loss's ``backward`` takes: its first required argument
    (``backward(self, dout)``, ``backward(self, *, grad_output)``), else its first one named as an upstream gradient
    (:data:`UPSTREAM_NAMES`: ``backward(self, dout=None)``); ``(None, False)`` when it takes none."""
    ps = [p for p in (_params(backward) or {}).values() if p.kind in (*_POSITIONAL, p.KEYWORD_ONLY)]
    p = next((p for p in ps if p.default is p.empty), None) or next(
        (p for p in ps[:1] if p.name.lower() in UPSTREAM_NAMES), None)
    return (None, False) if p is None else (p.name, p.kind == p.KEYWORD_ONLY)


def loss_function(fn, init=None, probe=None, wrt=None, active=0):
    """A :class:`LossFunction` of a class named after the loss (reports say ``softmax_loss``); ``probe``, ``wrt``,
    ``active`` as :class:`LossFunction` takes them."""
    return type(fn.__name__, (LossFunction,), {"__module__": __name__})(fn, init, probe, wrt, active)


class _AttrParams(dict):
    """``params`` of an attribute-style layer: assigning a key sets the attribute (used by ``--tape``).

    A number parameter (``self.alpha = 0.25``, immutable) is its :class:`Adapted`'s 0-d buffer:
    the check perturbs the buffer in place and each forward and backward sets the attribute from it.
    A dotted key (``l1.W``, ``layers.0.W``) is a sub-layer's: its attribute or its ``params`` entry.
    """

    def __init__(self, adapted):
        super().__init__({k: adapted._scalars.get(k, adapted._param(k)) for k in adapted.pairs})
        self._adapted = adapted

    def __setitem__(self, k, v):
        a = self._adapted
        if k in a._scalars and isinstance(v, (np.ndarray, float, np.floating)):
            a._scalars[k][...] = v
            a._live.add(k)
            a._sync()
            v = a._scalars[k]
        else:  # an autoprop Tensor (--tape): the attribute itself, not synced over until a number comes back
            a._live.discard(k)
            a._set(k, v)
            if isinstance(v, np.ndarray):  # the array itself, set back: so are what share its memory
                a._tensors.pop(k, None)
                for m, _, orig in a._aliases.get(k, ()):
                    a._set(m, orig)
            else:  # they become its gathers in the next forward, which the tape records
                a._tensors[k] = v
        super().__setitem__(k, v)

    def update(self, other=(), **kw):
        for k, v in dict(other, **kw).items():
            self[k] = v


class Adapted:
    """A class instance behind the manualprop protocol: ``pairs`` maps a weight attribute to its
    gradient attribute; ``own``: the object has its own ``params``/``grads`` dicts."""

    #: the attribute backward also stores dX in (``self.dinputs``) when it differs from the dX backward returns and
    #: is the further from a finite difference (:func:`_stored_dx`): read in place of the returned one, so it FAILs
    dx_stored = None

    def __init__(self, obj, pairs, own=False, tied=None, views=None, real=None):
        self.obj, self.pairs, self.own = obj, dict(pairs), own
        #: ``{W: _Cls__W}``: a parameter named as the student wrote it (``self.__W``), not as Python stores it
        self._real = dict(real or {})
        #: the layer has ``zero_grad()`` (PyTorch's ``Module``): called before each backward, as PyTorch's training
        #: loop does, so that a backward accumulating into ``.grad`` (``p.grad += ...``) gives one step's gradient
        self._zeroes = _zeroing(obj)
        #: ``{enc.W: [(dec.W, its gradient attribute, positions)]}``: parameters sharing a checked one's
        #: memory, their gradients added into its own (:func:`_aliases`)
        self.tied = dict(tied or {})
        self._grad_attr = {**{m: g for ms in self.tied.values() for m, g, _ in ms}, **self.pairs}
        self.student_forward, self.student_backward = obj.forward, obj.backward
        self.mode_keyword = mode_keyword(obj.forward)  # forward(X, train=...): training= is passed as that
        #: False: backward asserts forward's switch (numpy-ml's frozen layer): "auto" checks training mode alone
        self.eval_backward = frozen_backward(obj.forward, obj.backward) is None
        self._mode = None  # the training= of the last forward: an attribute switch is set to it again for backward
        self.class_name = type(obj).__name__
        self.saved = None  # the attributes the last forward (re)bound: its cache (cache_guard)
        #: sub-layers by dotted name (``l1``, ``layers.0``): their parameters are ``l1.W`` (:func:`sublayers`)
        self.children = dict(sublayers(obj)) if not own else {}
        #: ``{W: [(Wx, positions, the array)]}``: what shares a parameter's memory (tied parameters, views
        #: forward reads), set with it when ``params[W]`` becomes a Tensor (``--tape``), and set back
        self._aliases = {k: [(m, pos, self._param(m)) for m, pos in ms] for k, ms in
                         {**(views or {}), **{k: [(m, pos) for m, _, pos in ms] for k, ms in self.tied.items()}}.items()}
        self._tensors = {}  # parameters set to a Tensor (--tape): {W: the Tensor}
        #: number parameters (``self.alpha = 0.25``): a 0-d buffer each, its type, which are set from it
        self._scalars = {k: np.array(self._param(k)) for k in self.pairs if _is_number(self._param(k))}
        self._types = {k: type(self._param(k)) for k in self._scalars}
        self._live = set(self._scalars)

    def _where(self, name):
        """``(owner, "attr" or "dict", key)`` of parameter ``name``: ``W`` is ``self.W``, ``l1.W`` the sub-layer
        ``l1``'s ``W`` (its attribute, or its ``params['W']`` when its gradient is ``grads['W']``)."""
        path, _, key = self._real.get(name, name).rpartition(".")
        owner = self.children[path] if path else self.obj
        kind = "dict" if self._grad_attr.get(name, "").startswith(tuple(d + "[" for d in GRAD_DICTS)) and \
            isinstance(getattr(owner, "params", None), dict) else "attr"
        return (_Items(owner) if "[" in key else owner), kind, key  # weights['W'], Ws[1]: an item

    def _grad_owner(self, name, grad):
        """The object gradient ``grad`` of parameter ``name`` is read on: the parameter's owner, or for a gradient
        in another object (``g.W`` for ``p.W``: :func:`_sibling_arrays`) the one holding both (``block`` of
        ``block.p.W``; the layer itself for ``p.W``)."""
        parent = self._real.get(name, name).rpartition(".")[0].rpartition(".")[0]
        return (self.children[parent] if parent else self.obj) if "." in grad else self._where(name)[0]

    def _param(self, name):
        owner, kind, key = self._where(name)
        return owner.params.get(key) if kind == "dict" else getattr(owner, key, None)

    def _sync(self):
        """Set each number parameter from its buffer, in its own type (a float stays a float), and what
        shares the memory of a parameter that is now a Tensor (``--tape``) from it: ``dec.W`` the Tensor,
        ``Wx`` its gather (``W.reshape(-1)[positions]``), recorded by the tape around this forward."""
        for k in self._live:
            self._set(k, self._types[k](self._scalars[k]))
        for k, t in self._tensors.items():
            for m, pos, _ in self._aliases.get(k, ()):
                self._set(m, t if pos is None else t.reshape(-1)[pos])

    def _set(self, name, v):
        owner, kind, key = self._where(name)
        if kind == "dict":
            owner.params[key] = v
        else:
            setattr(owner, key, v)

    @property
    def params(self):
        """dict: the object's own ``params`` dict, or its weights by name (``W``, ``l1.W``, ``weights['W']``)
        in a dict whose assignment sets the student's attribute (a number parameter: its 0-d buffer).
        """
        return self.obj.params if self.own else _AttrParams(self)

    @property
    def grads(self):
        """dict: the object's own ``grads``, or each weight's gradient read from where backward wrote it
        (``pairs``), copied, in the weight's shape for a one-element weight; tied weights' gradients
        summed into the checked one's.
        """
        if self.own:
            return getattr(self.obj, "grads", None)
        out = {}
        for k, g in self.pairs.items():
            v, p = _grad(self._grad_owner(k, g), g), self._scalars.get(k, self._param(k))
            if _is_number(v) and np.size(p) == 1:  # dalpha = np.sum(...) for a one-element alpha: read in its shape
                v = np.asarray(v).reshape(np.shape(p))
            out[k] = self._summed(k, p, v) if k in self.tied else _copy(v)
        return out

    def _summed(self, k, p, v):
        """The gradient of parameter ``k``'s memory: its own plus those of the parameters that share it
        (``enc.dW + dec.dW``), each added where it lies (a view's elements, in ``k``'s layout); a gradient
        of the wrong shape is returned as it is, for the check to report."""
        if not (isinstance(v, np.ndarray) and v.shape == np.shape(p)):
            return _copy(v)
        total = np.array(v, dtype=np.result_type(v, np.float64), copy=True)
        gms = [(_grad(self._grad_owner(m, g), g), m, pos) for m, g, pos in self.tied[k]]
        for gm, m, _ in gms:
            if not (isinstance(gm, np.ndarray) and gm.shape == np.shape(self._param(m))):
                return _copy(gm)
        if any(pos is not None and np.any(gm) and np.array_equal(v.reshape(-1)[pos], gm) for gm, _, pos in gms):
            return total  # k's gradient already holds a view's own (dtheta beside dW = its W part): k's alone is read
        for gm, _, pos in gms:
            if pos is None:
                total += gm
            else:
                np.add.at(total.reshape(-1), pos.ravel(), np.ravel(gm))
        return total.astype(v.dtype, copy=False) if v.dtype.kind == "f" else total

    def forward(self, *xs, training=None):
        """The student's forward on ``xs``, ``training`` passed under its own name (``train_flg``,
        ``mode='train'``) or set on its switch attributes for the call and put back; returns a copy.
        The attributes forward (re)bound are kept in :attr:`saved` (its cache).
        """
        self._sync()
        self._mode = training  # an attribute switch (self.training): set for this call and its backward's, then put back
        with _switch_kept(self.obj, self.mode_keyword, training is not None):
            before = dict(_fields(self.obj))  # the old values stay alive: no id is reused
            _flush(self.obj)  # numpy-ml: one stored input, gradients from zero
            out = self.obj.forward(*xs, **_training_kw(self.obj.forward, training, self.mode_keyword))
            self.saved = [k for k, v in _fields(self.obj).items() if before.get(k, before) is not v]
        return _copy(out)

    def backward(self, dY):
        """The student's backward on ``dY`` in the mode of the last forward, after its ``zero_grad()``
        (PyTorch's) where it has one; returns a copy of dX (or of the tuple), the stored
        ``self.dinputs`` instead when :attr:`dx_stored` names it.
        """
        self._sync()
        if self._zeroes == "module":
            self.obj.zero_grad()
        elif self._zeroes == "flush":  # numpy-ml: its gradients zeroed as flush_gradients() does, self.X kept
            for k, g in self.pairs.items():
                v = _grad(self._grad_owner(k, g), g)
                if isinstance(v, np.ndarray) and v.flags.writeable:
                    v[...] = 0
        elif self._zeroes:  # the loop's `for p in model.parameters(): p.zero_grad()` (or `p.grad[...] = 0`)
            for p in list(self.obj.parameters())[:MAX_PROBED * 4]:
                p.zero_grad() if self._zeroes == "parameters" else p.grad.fill(0)
        mode = self._mode
        with _switch_kept(self.obj, self.mode_keyword, mode is not None):
            if mode is not None and _set_switches(self.mode_keyword):
                _training_kw(self.obj.forward, mode, self.mode_keyword)  # the mode the last forward ran in
            r = self.obj.backward(dY)
        if self.dx_stored is not None and isinstance(r, np.ndarray):  # a wrong self.dinputs beside a right dX
            r = getattr(self.obj, self.dx_stored, r)
        return tuple(_copy(v) for v in r) if isinstance(r, tuple) else _copy(r)

    def __deepcopy__(self, memo):
        """A deep copy whose views are views again: ``copy.deepcopy`` gives a view of ``W`` (``self.Wx``) its
        own memory, which perturbing the copy's ``W`` would not move; each is made a view of the copy's ``W``
        again (the same elements), where its positions in ``W`` are a strided pattern (they are for slices
        and transposes)."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        for k, ms in new._aliases.items():
            rep = new._param(k)
            if not isinstance(rep, np.ndarray) or not any(pos is not None for _, pos, _ in ms):
                continue
            if not rep.flags.c_contiguous:
                rep = np.ascontiguousarray(rep)
                new._set(k, rep)
            for i, (m, pos, _) in enumerate(ms):
                view = _strided(rep, pos) if pos is not None else None
                if view is not None:
                    new._set(m, view)
                    ms[i] = (m, pos, view)
        return new

    def __getattr__(self, name):  # the student's own attributes (in_features, fix_mask, ...)
        if name == "obj":
            raise AttributeError(name)
        return getattr(self.obj, name)


#: :func:`_slot_names` per class: by id, a weak reference to the class (gone with it, so a new class at a reused
#: id is read anew) and where each slot's descriptor is (its index in the MRO: no reference that keeps the class
#: alive); session 12: the walks asked about 90 times per check of a Linear. A class's slots are made with it.
_SLOTS: dict[int, tuple[weakref.ref, tuple[tuple[str, int], ...]]] = {}


def _slot_names(cls):
    """``{attribute name: slot descriptor}`` of the ``__slots__`` of ``cls`` and its bases (a name-mangled
    ``__W`` under its real name ``_Cls__W``), not ``__dict__``/``__weakref__``; memoised per class."""
    key = id(cls)
    hit = _SLOTS.get(key)
    if hit is not None and hit[0]() is cls:
        return {n: vars(cls.__mro__[i])[n] for n, i in hit[1]}
    out = _slot_names_of(cls)
    mro = list(getattr(cls, "__mro__", ()))
    where = tuple((n, next(i for i, c in enumerate(mro) if vars(c).get(n) is d)) for n, d in out.items())
    with contextlib.suppress(TypeError):  # a class no weak reference can point to: computed each time
        _SLOTS[key] = (weakref.ref(cls, lambda _r, k=key: _SLOTS.pop(k, None)), where)
    return out


def _slot_names_of(cls):
    """:func:`_slot_names`, computed."""
    out = {}
    for c in getattr(cls, "__mro__", ()):
        s = vars(c).get("__slots__", ())
        for n in ([s] if isinstance(s, str) else s if isinstance(s, (tuple, list)) else ()):
            real = f"_{c.__name__.lstrip('_')}{n}" if n.startswith("__") and not n.endswith("__") else n
            if isinstance(vars(c).get(real), types.MemberDescriptorType):
                out.setdefault(real, vars(c)[real])
    return out


class _Fields(collections.abc.MutableMapping):
    """The instance attributes of ``obj`` as a mutable mapping: its ``__dict__`` and its ``__slots__`` that are
    set (:func:`_slot_names`), read and written past the student's ``__getattr__``/``__setattr__`` and properties,
    as ``obj.__dict__`` is: the probes, the walks and the undo treat a slot attribute as any other."""

    __slots__ = ("_d", "_o", "_s")

    def __init__(self, obj):
        d = getattr(obj, "__dict__", None)
        self._o, self._d, self._s = obj, d if isinstance(d, dict) else {}, _slot_names(type(obj))

    def __getitem__(self, k):
        if k in self._s:
            try:
                return self._s[k].__get__(self._o, type(self._o))
            except AttributeError:
                raise KeyError(k) from None
        return self._d[k]

    def __setitem__(self, k, v):
        self._s[k].__set__(self._o, v) if k in self._s else self._d.__setitem__(k, v)

    def __delitem__(self, k):
        if k not in self:
            raise KeyError(k)
        self._s[k].__delete__(self._o) if k in self._s else self._d.__delitem__(k)

    def __iter__(self):
        return iter([*self._d, *(k for k in self._s if k not in self._d and k in self)])

    def __len__(self):
        return len(list(iter(self)))


def _fields(obj):
    """:class:`_Fields` of ``obj``: ``obj.__dict__`` itself when it has no slots."""
    d = getattr(obj, "__dict__", None)
    if isinstance(obj, (type, types.ModuleType)):
        return d if isinstance(d, dict) else {}
    return d if isinstance(d, dict) and not _slot_names(type(obj)) else _Fields(obj)


def _has_fields(v):
    """Whether ``v`` has instance attributes to read: a ``__dict__`` or ``__slots__``."""
    return isinstance(getattr(v, "__dict__", None), dict) or bool(_slot_names(type(v)))


#: The types whose values hold nothing :func:`walk` lists (not their subclasses, which may have attributes).
_SCALARS = frozenset({int, float, complex, bool, str, bytes, type(None)})


def _scalar(v):
    """A value :func:`walk` lists and does not enter (session 12: told without its probes, which each check ran
    on every attribute): a :data:`_SCALARS` one, a numpy scalar or dtype, a numeric ndarray."""
    return type(v) in _SCALARS or isinstance(v, (np.generic, np.dtype)) or (
        type(v) is np.ndarray and v.dtype != object)


def _leaf(v):
    """A value in which :func:`walk` finds no array: :func:`_scalar`, a tuple of such scalars (``stride = (1, 1)``),
    a numeric array (walked, a float array gives its elements, numpy scalars; session 12: not walked, as each
    check walked every attribute of the layer for :func:`cache_guard`)."""
    return _scalar(v) or (type(v) is tuple and len(v) <= MAX_PROBED * 4 and all(
        _scalar(x) and type(x) is not np.ndarray for x in v))


def _reachable(root, label, out):
    """``out`` with ``(label, array)`` of each array in ``root`` and, at any depth, in its tuples, lists, dicts and
    plain objects (``cache[1]``, ``cache['x']``; not layers: :func:`walk`), each array once."""
    found = [((), root)] + ([] if _leaf(root) or _is_layer(root) else walk(root, lambda p, v: not _is_layer(v)))
    for p, a in found:  # labelled only when kept (issue 10: the labels of a cache's shape tuples cost half the walk)
        if isinstance(a, np.ndarray) and len(out) < MAX_PROBED * 4 and not any(a is x for _, x in out):
            out.append((_label(p, root=label), a))
    return out


def _gradient_name(k, names):
    """Whether attribute ``k`` is named as the gradient of one of ``names`` (``dW`` beside ``W``; ``dX``)."""
    return _gradient_namer(names)(k)


def _gradient_namer(names):
    """:func:`_gradient_name` for many attributes against the same ``names``: their gradient names made once."""
    grads = _gradient_names(tuple(names))
    return lambda k: k in grads or k.startswith(("grad", "d_", "nabla_")) or k.endswith("_grad") or (
        k[:1] == "d" and k[1:2].isupper())


@functools.lru_cache(maxsize=256)
def _gradient_names(names):
    """The set of gradient names of ``names`` (a tuple), memoised: the cache guard asks before each backward with
    the same attribute names (issue 10: 65 formats a call); the caller gets a frozenset it cannot change."""
    return frozenset(g.format(n) for n in names for g in GRAD_NAMES)


#: The end of the message of a backward that wrote into its cache (here, and in the one rule of check and grader:
#: ``gradcheck.sources.cache_write_verdict``).
CACHE_ADVICE = ("A backward must not write into what forward cached: that is the caller's array (the input x itself "
                "when the cache holds it) and what a second backward reads. Compute into a new array instead, e.g. "
                "dout * (x > 0) rather than x[x <= 0] = 0.")


def _base(a):
    """``a`` (an ndarray, any subclass) as a plain ``np.ndarray`` view of the same memory: what the grader's own
    copies, comparisons and arithmetic on a submission's array use, so that nothing of the subclass runs
    (``__array_ufunc__``, ``__array_function__``, ``__array_finalize__``: redteam31 H1a, differences of forward
    taken in the cache guard's comparison); the sandbox child's ``describe`` reads arrays the same way."""
    return np.ndarray.view(a, np.ndarray)


def cache_guard(layer, names=()):
    """Snapshot what ``layer.backward`` must not write into; returns ``after()``: its message, or None.

    Watched: the arrays reachable from a CS231n pair's ``cache`` and forward's inputs; for a class,
    from the attributes its last forward bound (:class:`Adapted` records them; else all), except
    ``params``, ``grads``, what shares memory with them, weights and gradient attributes (``dW``,
    ``_dX``). Such a write changes the caller's array (CS231n's ``cache = x``) and what a second
    backward reads. ``names``: forward's argument names, to name a cached input (``x``).
    """
    if isinstance(layer, FunctionPair):
        owner = layer.student_backward.__name__
        arrays = _reachable(layer._cache, "cache", [])
        pnames = [p for p in inspect.signature(layer.forward).parameters if p not in ("self", "training")]
        for n, x in zip(pnames or names, layer._xs):
            for i, (_lab, a) in enumerate(arrays):
                if a is x:
                    arrays[i] = (n, a)
            _reachable(x if isinstance(x, np.ndarray) else None, n, arrays)
    else:
        obj = layer.obj if isinstance(layer, (Adapted, BoundLoss)) else layer
        owner = f"{getattr(layer, 'class_name', None) or type(obj).__name__}.backward"
        d = _fields(obj)
        skip = [v for k in ("params", "grads") if isinstance(d.get(k), dict) for v in d[k].values()
                if isinstance(v, np.ndarray)]
        pairs = getattr(layer, "pairs", {}) if isinstance(layer, Adapted) else {}
        skip += [d[k] for k in list(pairs) + list(pairs.values()) if isinstance(d.get(k), np.ndarray)]
        saved = getattr(layer, "saved", None) if isinstance(layer, Adapted) else None  # None: every attribute
        arrays, items = [], list(d.items())[:MAX_PROBED * 4]
        is_gradient = _gradient_namer([*map(_bare, d), *names])
        for k, v in items:  # a number or a tuple of them (self.stride) holds no array: not asked (issue 10)
            if (type(v) is np.ndarray or not _leaf(v)) and isinstance(k, str) and k not in ("params", "grads") and \
                    (saved is None or k in saved) and not is_gradient(_bare(k).lstrip("_")):
                _reachable(v, f"self.{k}", arrays)
        skip = [_base(s) for s in skip]
        arrays = [(lab, a) for lab, a in arrays if not any(np.shares_memory(_base(a), s) for s in skip)]
    saved = [(lab, b, b.copy()) for lab, b in ((lab, _base(a)) for lab, a in arrays)]  # base views (redteam31 H1a)

    def after():
        for lab, a, c in saved:
            if a.shape == c.shape and (np.array_equal(a, c) or a.dtype.kind in "fc" and  # _validation.identical:
                                       np.array_equal(a, c, equal_nan=True)):  # the NaN-aware path is slow
                continue
            where = ""
            if a.shape == c.shape and a.ndim:
                diff = (a != c) & ~(np.isnan(a) & np.isnan(c)) if a.dtype.kind in "fc" else a != c
                where = f", element {[int(i) for i in np.argwhere(diff)[0]]}"
            return f"{owner} modified its cache ({lab}{where}) in place; copy before writing. {CACHE_ADVICE}"
        return None
    return after


def _float_array(v):
    """A non-empty float ndarray: what gradcheck reads as a weight, a gradient or a buffer."""
    return isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size > 0


def _is_number(v):
    """A real floating-point number: a Python float or a numpy float scalar (``np.float64``), not a bool or int."""
    return isinstance(v, (float, np.floating))


def _float_numbers(obj):
    """Number attributes (``self.alpha = 0.25``): parameters only when backward sets a gradient for them."""
    d = _fields(obj)
    return {k: v for k, v in list(d.items())[:MAX_PROBED * 4] if isinstance(k, str) and _is_number(v)
            and not k.startswith("_")}


def _is_layer(v):
    """An object with ``forward`` and ``backward`` methods (a layer; not a class, nor one that cannot be read)."""
    try:
        return (not isinstance(v, (type, np.ndarray)) and _has_fields(v)
                and callable(getattr(v, "forward", None)) and callable(getattr(v, "backward", None)))
    except Exception:  # noqa: BLE001 - a student's __getattr__ or property that raises: not a sub-layer
        return False


#: The sequences :func:`walk` enters by index (``layers[1]``): lists, tuples, deques, ``UserList``\ s; a numpy
#: object array too (:func:`_container`).
SEQUENCES = (list, tuple, collections.deque, collections.UserList)
#: The mappings it enters by key (str and int keys; a layer as a key: ``m.keys.0``): dicts, ``UserDict``,
#: ``ChainMap``, a ``mappingproxy``.
MAPPINGS = (dict, collections.UserDict, collections.ChainMap, types.MappingProxyType)


def _container(v):
    """Whether :func:`walk` enters ``v`` by its items: a sequence, a mapping, a numpy object array, a set."""
    return isinstance(v, SEQUENCES + MAPPINGS + (set, frozenset)) or (isinstance(v, np.ndarray) and v.dtype == object)


def _callable_parts(v):
    """``[(step, key, value)]`` of what a function or method holds, where only it may hold a layer: a bound method's
    ``__self__``, a ``functools.partial``'s ``func``, ``args`` and ``keywords``, a function's closure cells (by the
    names it reads them under) and default arguments (``lambda X, l=l: l.forward(X)``); ``[]`` for anything else
    (a module's or a class's method: its ``__self__`` is not the student's object; no function's globals)."""
    if isinstance(v, functools.partial):
        return [(".", "func", v.func), (".", "args", v.args), (".", "keywords", v.keywords)]
    if isinstance(v, (types.MethodType, types.BuiltinMethodType)):
        me = getattr(v, "__self__", None)  # not np.random.rand's or random.random's: the global generators
        return [] if me is None or isinstance(me, (type, types.ModuleType)) or me is np.random.mtrand._rand or \
            me is getattr(random, "_inst", None) else [(".", "__self__", me)]
    if isinstance(v, types.FunctionType):
        cells = zip(v.__code__.co_freevars, v.__closure__ or ())
        out = []
        for name, cell in cells:
            try:
                out.append((".", name, cell.cell_contents))
            except ValueError:  # an empty cell (a name assigned after the function was made)
                continue
        return out + [(".", k, d) for k, d in (("__defaults__", v.__defaults__), ("__kwdefaults__", v.__kwdefaults__))
                      if d]
    return []


def _set_order(v):
    """A key ordering a set's members the same way in every run and in a deep copy (their ids differ): the
    class, then the shapes and first bytes of the arrays each holds."""
    arrays = [(k, a.shape, a.dtype.str, a.tobytes()[:64]) for k, a in list(_fields(v).items())[:64]
              if isinstance(k, str) and isinstance(a, np.ndarray) and a.dtype != object] if _has_fields(v) else []
    return type(v).__module__ or "", type(v).__qualname__, arrays


def _items(v):
    """``[(step, key, value)]`` of what :func:`walk` enters ``v`` by (a container's items, a callable's parts,
    an object's attributes)."""
    if isinstance(v, MAPPINGS):
        keys = list(v.keys())[:MAX_PROBED * 4]
        held = [k for k in keys if type(k) not in _SCALARS and (_is_layer(k) or _is_helper(k))]  # {layer: "first"}:
        # the keys themselves (a str or int key holds nothing: not asked, issue 10)
        return ([("[", k, v[k]) for k in keys if isinstance(k, (str, int))]
                + [(".", "keys", tuple(held))] * bool(held))
    if isinstance(v, SEQUENCES):
        return [("[", k, x) for k, x in enumerate(v)]
    if isinstance(v, np.ndarray) and v.ndim > 1:  # a 2-D object array: by its index, W[1, 0] (Y16)
        return [("[", k, v[k]) for k in itertools.islice(np.ndindex(v.shape), MAX_PROBED * 4)]
    if isinstance(v, np.ndarray):  # an object array: by its flat index
        return [("[", k, x) for k, x in enumerate(v.ravel()[:MAX_PROBED * 4])]
    if isinstance(v, (set, frozenset)):
        return [("[", k, x) for k, x in enumerate(sorted(list(v)[:MAX_PROBED * 4], key=_set_order))]
    return _callable_parts(v) or [(".", k, x) for k, x in _fields(v).items() if isinstance(k, str)]


def walk(root, enter=None):
    """``[(path, value)]`` of what ``root`` holds: its attributes (or items) and, at any depth, those of the
    containers (:func:`_container`: lists, tuples, dicts (str and int keys, layers as keys), ``UserList``,
    ``ChainMap``, numpy object arrays, sets), layers and plain objects (:func:`_is_helper`) among them, depth first
    in a fixed order (a deep copy walks in the same order); then what only a function or method holds
    (:func:`_callable_parts`: ``self.f = layer.forward``, a ``functools.partial``, a closure), so an object also held
    directly is named where it is held. ``path``: a tuple of steps, ``(".", attribute)`` or ``("[", key)``
    (:func:`_label`). Each of those objects is listed and entered once (a cycle, an object held twice), at most
    :data:`MAX_WALKED` of them and ``MAX_PROBED * 4`` values of each: the walk is bounded by how many objects it
    visits, not by a depth. ``enter(path, value)``: whether to enter one (default: each). The one walk of the
    student's objects: sub-layers and the plain objects holding weights (:func:`sublayers`), weights in containers
    (:func:`_arrays`), the gradients beside them (:func:`_grad_attrs`), generators (:func:`generators`), masks
    (:func:`hold_random`) and caches (:func:`cache_guard`)."""
    seen, out, stack, later = {id(root)}, [], [((), root)], []
    while stack or later:
        if not stack:  # what only functions and methods hold, after everything held directly
            stack, later = later[::-1], []
            stack = [(p, v, True) for p, v, _ in stack]
        path, v, *late = stack.pop()
        if path and _scalar(v):  # nothing inside: listed, not entered
            out.append((path, v))
            continue
        parts = _callable_parts(v) if path else []
        inside = _container(v) or _is_layer(v) or _is_helper(v) or bool(parts)
        if path and inside and (id(v) in seen or len(seen) > MAX_WALKED):
            continue
        if parts and not late:
            later.append((path, v, False))
            continue
        if path:
            out.append((path, v))
            seen.add(id(v)) if inside else None
            if not inside or (enter is not None and not enter(path, v)):
                continue
        stack += [(path + ((s, k),), x) for s, k, x in _items(v)[:MAX_PROBED * 4]][::-1]
    return out


def _key_text(k):
    """An item key as written between brackets: ``'W'``, ``1``, an n-d object array's index ``1, 0``."""
    return ", ".join(map(repr, k)) if isinstance(k, tuple) else repr(k)


def _label(path, dotted=False, root=""):
    """A :func:`walk` path as a name: ``ws['a'][0]``, after ``root`` (``cache[1].x``); ``dotted``: ``stages.1.head``,
    as PyTorch names modules."""
    text = root + "".join((f".{'.'.join(map(str, k))}" if isinstance(k, tuple) else f".{k}") if s == "." or dotted
                          else f"[{_key_text(k)}]" for s, k in path)
    return text[1:] if text[:1] == "." else text


def sublayers(obj):
    """``[(dotted name, object)]`` of the layers and plain objects (:func:`_is_helper`) ``obj`` holds, at any depth
    (:func:`walk`), as PyTorch's ``named_modules`` names them (``l1``, ``layers.0``, ``block.l1``, ``box.layer``);
    a layer with its own ``params`` dict speaks for its sub-layers. A plain object's float arrays (PyTorch's
    Parameter: ``weight.data`` with ``weight.grad``; ``p.W`` with ``g.W``) are then parameters under dotted names,
    as a sub-layer's are; a plain object is listed when it or one below it holds a float array in a public
    attribute (``block`` of ``block.p.W``: where ``block.g.W`` is looked for, :func:`_grad_attrs`)."""
    walked = walk(obj, lambda p, v: not isinstance(getattr(v, "params", None), dict))
    found = [(_label(p, dotted=True), v) for p, v in walked if _is_layer(v) or _is_helper(v)]
    held = [n for n, v in found if not _is_layer(v) and any(
        _float_array(x) and not k.startswith("_") for k, x in _fields(v).items())]
    return [(n, v) for n, v in found if _is_layer(v) or any(h == n or h.startswith(n + ".") for h in held)]


def _is_helper(v):
    """A plain object of the student's that may hold layers (``self.box.layer``) or arrays (``self.weight.data``):
    a ``SimpleNamespace``, or an instance of a class defined outside numpy and the standard library, with a
    ``__dict__``; not a layer, class or function."""
    mod = getattr(type(v), "__module__", "") or ""
    return isinstance(v, types.SimpleNamespace) or (
        _has_fields(v) and not isinstance(v, (type, np.ndarray)) and not callable(v)
        and mod.split(".")[0] not in ("numpy", "builtins", "collections", "types", "random", "functools", "abc",
                                      "typing", "enum"))


@contextlib.contextmanager
def _undone(obj, keep_new=False):
    """Undo a probe: attribute bindings, array and dict contents, generator states (yielded).

    ``keep_new``: what the probe created is kept (new attributes, new dict keys, an attribute that was
    None or an empty dict: Berkeley CS189's ``self.parameters = {}`` that the first forward binds to a new dict
    of weights, as it sets ``self.n_in``): parameters a first forward builds (Keras-style); all else is restored,
    and everything when the probe raised.
    """
    d = _fields(obj)
    saved = {k: (v, v.copy() if isinstance(v, np.ndarray) else dict(v) if isinstance(v, dict) else None)
             for k, v in d.items()}
    gens = {k: v.bit_generator.state for k, v in d.items() if isinstance(v, np.random.Generator)}
    lists = {k: list(v) for k, v in d.items() if isinstance(v, list)}  # self.Ws = [W1, W2]: its items
    inner = [(a, a.copy()) for a in _arrays(obj, every=True).values()]  # and their contents (Ws[0] -= ...)
    try:
        yield gens
    except BaseException:  # a first forward that raised built nothing to keep: all undone (tester27s: CS189's
        keep_new = False  # Conv2D set n_in, then raised on a list kernel_shape; n_in kept hid that error)
        raise
    finally:
        for k in [k for k in d if k not in saved and not keep_new]:
            del d[k]
        for k, (v, c) in saved.items():
            if keep_new and (v is None or (isinstance(v, dict) and not c and k in d and d[k] is not v)):
                continue  # built by the probe (an empty dict bound anew: its new keys kept, as filled in place)
            d[k] = v
            if isinstance(v, np.ndarray) and v.flags.writeable:
                v[...] = c
            elif isinstance(v, dict):
                v.clear() if not keep_new else None
                v.update(c)
            elif k in lists and not keep_new:
                v[:] = lists[k]
        for a, c in inner:
            if a.flags.writeable:
                a[...] = c
        for k, st in gens.items():
            d[k].bit_generator.state = st


@contextlib.contextmanager
def _all_undone(objs, keep_new=False):
    """:func:`_undone` of each object (a layer and its sub-layers); yields ``rewind()``, which sets every generator
    reachable from them (:func:`generators`) and the global ones (:func:`global_states`) back to their states at
    entry, as the end of the probe does: a forward drawing a mask draws the same one after each rewind. The
    sub-layers of ``objs`` (:func:`sublayers`) are undone too: a probe of the layer alone left a sub-layer's gradient
    written in place (``self.dLdW[...] = ...``, CMU's Conv1d_stride1 in Conv1d), so the next probe's backward, writing
    the same values, wrote nothing it could see (tester26s H2: a wrong in-place dLdW passed unchecked)."""
    objs = list({id(o): o for o in [*objs, *(c for o in objs for _, c in sublayers(o))]}.values())
    gens, glob = generators(list(objs)), global_states()
    states = [_state(g) for g in gens]

    def rewind():
        for g, st in zip(gens, states):
            _state(g, st)
        global_states(glob)
    with contextlib.ExitStack() as stack:
        for o in objs:
            stack.enter_context(_undone(o, keep_new))
        try:
            yield rewind
        finally:
            rewind()


def _owner(obj, children, name):
    """``(object, attribute)`` of a dotted name: ``W`` on ``obj``, ``l1.W`` on the sub-layer ``l1``; an item
    name (``weights['W']``, ``Ws[1]``) is an attribute of the owner's :class:`_Items`."""
    path, _, key = name.rpartition(".")
    o = children[path] if path else obj
    return (_Items(o) if "[" in key else o), key


def _item_path(name):
    """``(attribute, [keys])`` of an item name: ``weights['W']`` -> ``("weights", ["W"])``, ``Ws[1][0]`` ->
    ``("Ws", [1, 0])``; None when ``name`` is not one (keys are str or int literals)."""
    try:
        node, steps = _switch_reach.path_steps(name)
    except SyntaxError:
        return None
    ok = steps and all(s == "[" and isinstance(k, (str, int, tuple)) for s, k in steps)  # W[1, 0]: (1, 0)
    return (node.id, [k for _, k in steps]) if ok and isinstance(node, ast.Name) else None


class _Items:
    """An object whose attributes are also the items of its containers: ``getattr(_Items(o), "Ws[1]")`` is
    ``o.Ws[1]``, and setting it sets that item (a tuple on the way is rebuilt and set back), so the probes
    and :class:`Adapted` treat an array in a dict, list or tuple attribute as they treat ``self.W``; a dict's keys
    are its attributes. ``glob``: the name of the module's global it stands for (``CONFIG``, ``cfg.optim``: a rate's
    holder, :func:`_rate_label`)."""

    __slots__ = ("_o", "_gradcheck_glob")

    def __init__(self, o, glob=None):
        object.__setattr__(self, "_o", o)
        object.__setattr__(self, "_gradcheck_glob", glob)

    def __getattr__(self, name):
        o = object.__getattribute__(self, "_o")
        path = _item_path(name)
        if path is None:
            return o[name] if isinstance(o, dict) else getattr(o, name)
        v = getattr(o, path[0])
        try:
            for k in path[1]:
                v = _item(v, k)
        except (KeyError, IndexError, TypeError):
            raise AttributeError(name) from None
        return v

    def __setattr__(self, name, value):
        o = object.__getattribute__(self, "_o")
        path = _item_path(name)
        if path is None:
            o.__setitem__(name, value) if isinstance(o, dict) else setattr(o, name, value)
            return

        def put(c, keys):
            if not keys:
                return value
            new = put(_item(c, keys[0]), keys[1:])
            if new is _item(c, keys[0]):  # the same object (a probe changed it in place): nothing to write, as
                return c  # into a mappingproxy
            if isinstance(c, tuple):
                return c[:keys[0]] + (new,) + c[keys[0] + 1:]
            if isinstance(c, collections.ChainMap):  # where the key is, not a new key in the first map
                c = next((m for m in c.maps if keys[0] in m), c)
            if isinstance(c, np.ndarray) and isinstance(keys[0], tuple):
                c[keys[0]] = new
            elif isinstance(c, np.ndarray):
                c.flat[keys[0]] = new
            else:
                c[keys[0]] = new
            return c
        c = getattr(o, path[0])
        new = put(c, path[1])
        if new is not c:
            setattr(o, path[0], new)


def _held(o):
    """The object an :class:`_Items` stands for; ``o`` itself when it is no :class:`_Items`."""
    return object.__getattribute__(o, "_o") if isinstance(o, _Items) else o


def _item(c, k):
    """Item ``k`` of container ``c`` as :func:`walk` names it: an object array's by its flat index (an n-d one's
    by its index tuple)."""
    return c.flat[k] if isinstance(c, np.ndarray) and not isinstance(k, tuple) else c[k]


#: A name-mangled attribute: ``self.__W`` in class ``Cls`` is ``_Cls__W`` (groups: ``_Cls__``, ``W``).
MANGLED = re.compile(r"(_[A-Za-z0-9]\w*?__)([A-Za-z]\w*)")


@functools.lru_cache(maxsize=4096)
def _bare(key):
    """Attribute ``key`` as the student wrote it in the class, without Python's name mangling: ``_Cls__W`` is
    ``W`` (its ``__`` only hides it from subclasses), any other name is itself; memoised (the cache guard asks
    for every attribute before each backward)."""
    m = MANGLED.fullmatch(key)
    return m[2] if m else key


#: Names of an attribute holding the gradients of a dict of weights, key for key (``self.grads['W']``).
GRAD_DICTS = ("grads", "gradients", "grad", "param_grads", "params_grads", "grad_params", "dparams")
#: A student's tensor object's value attribute and the names of its gradient beside it: PyTorch's ``weight.data``
#: with ``weight.grad``, a course's ``Tensor`` with ``.value`` and ``.gradient`` (Y25).
HELD_VALUES = {"data": ("grad", "gradient"), "value": ("gradient", "grad")}


def _arrays(obj, every=False):
    """``{name: array}`` of ``obj``'s float array attributes (``W``), then of the float arrays in its dict, list and
    tuple attributes, at any depth (:func:`walk`): ``weights['W']``, ``Ws[1]``, as PyTorch's
    ``ParameterDict``/``ParameterList`` hold them, and ``params`` when it is not a dict (``params[0]``, with
    ``grads[0]``). Not in a ``params`` dict (the manualprop protocol's) nor ``grads``, nor in containers named as
    gradients (``dWs``, ``gradients``) or private ones (``_cache``), unless ``every`` (what backward writes:
    :func:`_written`; what a probe restores: :func:`_undone`)."""
    def enter(path, v):
        k = path[0][1]
        return (isinstance(v, SEQUENCES + MAPPINGS) or isinstance(v, np.ndarray) and v.dtype == object) and \
            k.isidentifier() and all(s == "[" for s, _ in path[1:]) and (len(path) > 1 or every or (
            not k.startswith("_") and k not in GRAD_DICTS and not (k == "params" and isinstance(v, dict))
            and not _gradient_name(k, ())))  # params = [W, b] (a list): params[0] with grads[0]
    found = [(p, v) for p, v in walk(obj, enter) if _float_array(v)
             and all(isinstance(k, (int, tuple)) or k.isidentifier() for _, k in p) and all(s == "[" for s, _ in p[1:])]
    return {_label(p): v for p, v in sorted(found, key=lambda pv: len(pv[0]) > 1)[:MAX_PROBED * 4]}


class _ForwardFailed(Exception):
    """The student's forward raised, or returned what is not one array, in a probe (:func:`_run`): the probe
    itself did not fail. ``args[0]``: what happened, for the header (:data:`UNMEASURED`)."""


def _probe_backward(obj, y):
    """What ``obj.backward`` returns given the probes' upstream gradient for forward's output ``y`` (seed 7)."""
    _step("backward")
    return obj.backward(probe_rng(7).standard_normal(np.shape(y)))


def _raised(exc):
    """How a report says the student's code raised ``exc``: ``raised ValueError: ...``, its first 120 characters cut
    at a word with `` ...`` (newuser23 L1: cut mid-word, "(size 4 is ; arrays not checked" read as garbled)."""
    text = str(exc)
    if len(text) > 120:
        text = text[:120].rsplit(" ", 1)[0].rstrip(" ,;:(") + " ..."
    return f"raised {type(exc).__name__}: {text}"


def _run(obj, rewind, inputs, kw):
    rewind()
    _step("forward")
    try:
        y = _forward(obj, [x.copy() for x in inputs], kw)
    except Exception as exc:  # noqa: BLE001 - student code: named as forward's, not the probe's
        raise _ForwardFailed(_raised(exc)) from exc
    try:
        # a complex Y (refused by the check, which says so): its real part, without numpy's ComplexWarning shown
        return np.array(np.real(y) if np.iscomplexobj(y) else y, dtype=np.float64, copy=True)  # as the student's
    except (TypeError, ValueError):  # output (tester20s hostile_complex_warning)
        raise _ForwardFailed(f"returned a {type(y).__name__}, not an array") from None


def _used_arrays(obj, inputs, kw, names, children=None):
    """``(names among names whose value changes forward's output, Y)``; ``(None, None)``: forward is not
    deterministic (its draws from the generators reachable from the layers, and the global ones, held fixed).
    A dotted name (``l1.W``) is a sub-layer's attribute (``children``: :func:`sublayers`)."""
    children = children or {}
    with _all_undone([obj, *children.values()]) as rewind:
        y0 = _run(obj, rewind, inputs, kw)
        if not np.array_equal(y0, _run(obj, rewind, inputs, kw), equal_nan=True):
            return None, None
        used = []
        for n in names[:MAX_PROBED]:
            o, key = _owner(obj, children, n)
            old = getattr(o, key)
            if _hyperparameter(old):  # a rate, an eps: moving it may break forward (binomial(1, p > 1)), M4
                used.append(n)  # taken as read: a parameter only if backward sets its gradient
                continue
            if _number_like(old):  # np.array(0.25), np.float64(0.25): an array like any other (tester14 #1)
                if _scalar_used(obj, rewind, inputs, kw, (o, key, old), y0):
                    used.append(n)
                continue
            if isinstance(old, np.ndarray) and old.flags.writeable:  # in place: a view of it (or its
                keep = old.copy()  # base, self.Wx = self.W[:D]) read by forward moves with it
                old[...] = _moved(old)
            else:
                setattr(o, key, _moved(old))
            y = _run(obj, rewind, inputs, kw)  # raised: _undone rebinds every attribute, restores its contents
            if isinstance(old, np.ndarray) and old.flags.writeable:
                old[...] = keep
            setattr(o, key, old)
            if y.shape != y0.shape or not np.array_equal(y, y0, equal_nan=True) or not _all_finite(y0):
                used.append(n)  # a NaN or inf in Y hides a change there: taken as read (the check names Y)
        return used + _used_beyond(obj, rewind, inputs, kw, list(names[MAX_PROBED:]), children, y0), y0


def _used_beyond(obj, rewind, inputs, kw, names, children, y0):
    """Which of ``names`` (beyond :data:`MAX_PROBED`) forward reads, by group tests: the writable arrays among them
    moved together (each by its own factor, so that two alike cannot cancel), one forward per group, halved while a
    group changes the output, at most :data:`MAX_PROBED` forwards; a group left undecided, and any other value, is
    taken as read, never dropped. Before, every array beyond the bound was taken as read, so a correct layer with 600
    unused arrays was NOT CHECKED (tester20g M7)."""
    owned = [(n, *_owner(obj, children, n)) for n in names]
    used = [n for n, o, k in owned if not (isinstance(v := getattr(o, k), np.ndarray) and v.flags.writeable
                                          and not _hyperparameter(v) and not _number_like(v))]
    groups, budget = [[t for t in owned if t[0] not in used]], MAX_PROBED
    while groups:
        group = groups.pop()
        if not group or not _group_moves(obj, rewind, inputs, kw, group, y0):
            continue
        if len(group) == 1 or budget <= 0:
            used += [n for n, _, _ in group]
            continue
        budget -= 2
        groups += [group[:len(group) // 2], group[len(group) // 2:]]
    return [n for n in names if n in used]


def _group_moves(obj, rewind, inputs, kw, group, y0) -> bool:
    """Whether moving the arrays of ``group`` (``(name, owner, key)``) together changes forward's output (or it
    raised, or ``y0`` is not finite: taken as a change); every array's contents restored after."""
    kept = []
    try:
        for i, (_, o, key) in enumerate(group):
            a = getattr(o, key)
            kept.append((a, a.copy()))
            a[...] = a + (_moved(a) - a) * (1.0 + (0.6180339887 * (i + 1)) % 1.0)
        y = _run(obj, rewind, inputs, kw)
    except _ForwardFailed:
        return True
    finally:
        for a, keep in reversed(kept):
            a[...] = keep
    return y.shape != y0.shape or not np.array_equal(y, y0, equal_nan=True) or not _all_finite(y0)


def _all_finite(y) -> bool:
    """Whether every entry of the output ``y`` is finite (or ``y`` holds no numbers): :func:`_used_arrays` can tell
    a weight forward ignores only there; a NaN output compared equal to a NaN output once said "forward does not
    use W" of ``np.log(X) @ W`` (tester13 hostile NaNForward)."""
    try:
        return bool(np.all(np.isfinite(y)))
    except TypeError:  # an object or string output: nothing non-finite to hide a change
        return True


def _number_like(v) -> bool:
    """A number forward may read as a hyperparameter (``self.rate = 0.5``, ``np.array(0.5)``): a float
    (:func:`_is_number`) or a 0-d array, which :func:`_used_arrays` does not move (tester13 M4: a dropout's rate moved
    past 1 made forward raise, so no array's use was measured); it is a parameter only if backward sets its
    gradient."""
    return _is_number(v) or (isinstance(v, np.ndarray) and v.ndim == 0)


def _hyperparameter(v) -> bool:
    """A Python float (``self.lr = 0.01``, ``self.eps = 1e-5``): a hyperparameter, read as such unless backward sets
    its gradient; a 0-d array or a numpy scalar (``np.array(0.25)``, ``np.float64(0.25)``) is an array attribute like
    any other (tester14 #1: a PReLU's learnable ``alpha`` whose gradient backward forgot passed silently)."""
    return isinstance(v, float) and not isinstance(v, np.generic)


def _scalar_used(obj, rewind, inputs, kw, where, y0) -> bool:
    """Whether forward's output moves with the 0-d array or numpy scalar ``where`` (``(owner, attribute, value)``),
    moved a little (by ``2**-8 (|v| + 1)``: a rate of 0.5 stays a rate); a forward that raises on the moved value
    (``binomial(1, p > 1)``, M4) reads it. The value is set back after."""
    o, key, old = where
    writable = isinstance(old, np.ndarray) and old.flags.writeable
    moved = old + 2.0 ** -8 * (abs(old) + 1)
    if writable:  # in place: a view of it read by forward moves with it
        keep = old.copy()
        old[...] = moved
    else:
        setattr(o, key, moved.astype(old.dtype) if isinstance(old, np.ndarray) else type(old)(moved))
    try:
        y = _run(obj, rewind, inputs, kw)
    except _ForwardFailed:
        return True
    finally:
        if writable:
            old[...] = keep
        setattr(o, key, old)
    return y.shape != y0.shape or not np.array_equal(y, y0, equal_nan=True)


def _moved(a):
    """``a`` changed for :func:`_used_arrays`' probe: ``1.5 a + 0.5`` plus a ramp over its entries (0 to 0.5), so
    no two entries move alike: a bias that softmax or a normalisation sees only up to one shift of all its
    entries (DLfS-2's zero output bias, tester12 M3) still changes the output."""
    if not isinstance(a, np.ndarray) or a.size < 2:
        return a * 1.5 + 0.5
    return a * 1.5 + 0.5 + np.linspace(0.0, 0.5, a.size).reshape(a.shape)


def _grad_attrs(obj, inputs, kw, used, children=None):
    """``({weight: gradient attribute}, {weight: [arrays]}, [weights])`` found after one forward and backward
    (state restored after): by name (:func:`_grad_candidates`), else by structure (:func:`_by_structure`); the
    second holds the weights whose gradient is ambiguous, with the arrays backward wrote that could be it; the
    third the weights paired by structure."""
    children = children or {}
    owners = {"": obj, **children}
    with _all_undone([obj, *children.values()]) as rewind:
        y = _run(obj, rewind, inputs, kw)
        before = {p: _snapshot(_arrays(o, every=True)) for p, o in owners.items()}
        dx = _probe_backward(obj, y)
        found = {}
        for w in used:
            o, key = _owner(obj, children, w)
            names = [g for g in _grad_candidates(key) + _property_grad_candidates(o, key)
                     if isinstance(_grad(o, g), np.ndarray)
                     or ("[" not in g and _is_number(_grad(o, g)))  # dalpha = np.sum(...): a number
                     or ("[" not in g and isinstance(v := _grad(o, g), (list, tuple)) and _not_float(v))]  # .tolist():
            # a gradient of the wrong type, paired so that the check says so (newuser29: "sets no gradient" before)
            if len(names) > 1:
                raise AdapterError(f"{type(o).__name__}.{key} has several gradient attributes after backward "
                                   f"({', '.join(names)}); keep one. {expected()}")
            if names:
                found[w] = names[0]
        written = {p: _written(_arrays(o, every=True), before[p], dx) for p, o in owners.items()}
        for hp, h in children.items():  # self.p = SimpleNamespace(W=...) with self.g = SimpleNamespace(W=...),
            if not _is_layer(h) and hp.rpartition(".")[0] in owners:  # at any depth: block.p.W with block.g.W
                written[hp].update(_sibling_arrays(owners[hp.rpartition(".")[0]], h))
        more, unsure = _by_structure(obj, children, [w for w in used if w not in found], written, found)
        return {w: found.get(w) or more[w] for w in used if w in found or w in more}, unsure, list(more)


def _integer_params(obj, inputs, kw, taken):
    """``{attribute: gradient}`` of ``obj``'s own numeric attributes that are not float arrays (:func:`_not_float`:
    an int array ``self.W = np.array([[1, 2]])``, an int ``self.s = 1``, not a bool; a complex or object array, a list
    of lists of numbers) for which one backward writes a float gradient by name (``self.dW``, ``self.ds``:
    :func:`_grad_candidates`) of their size, not already ``taken`` by a weight: parameters written as no float array.
    Paired, they reach the one rule for a parameter's type (:func:`gradcheck._validation.checked_params`: a float
    array, exit 3), as a params dict's ``params['W']`` does (tester22s H3: they were skipped, so a wrong ``dW``
    PASSed as "a class with forward/backward and no parameters"; newuser29 H1: ``W + 0j``, ``W.tolist()``,
    ``W.astype(object)`` too). State restored after."""
    ints = {k: v for k, v in list(_fields(obj).items())[:MAX_PROBED * 4] if isinstance(k, str) and k.isidentifier()
            and _not_float(v)}
    if not ints:
        return {}
    out, gone = {}, set(taken.values())
    names = {g for k in ints for g in _grad_candidates(k) if "[" not in g and "." not in g and g not in gone}
    with _all_undone([obj]) as rewind:
        had = {g: (a, _copy(a)) for g in names if (a := getattr(obj, g, None)) is not None}
        y = _run(obj, rewind, inputs, kw)
        _probe_backward(obj, y)
        written = {g for g in names if (a := getattr(obj, g, None)) is not None and (
            g not in had or a is not had[g][0] or not np.array_equal(a, had[g][1]))}  # self.dt = 0.1 is no gradient
        for k, v in ints.items():
            gs = [g for g in _grad_candidates(k) if g in written
                  and (isinstance(a := getattr(obj, g, None), np.ndarray) and a.dtype.kind == "f"
                       and a.size == np.size(v) or _is_number(a))]
            if len(gs) == 1:
                out[k] = gs[0]
    return out


def _not_float(v) -> bool:
    """Whether ``v`` holds numbers but is no float array a check can perturb in place: a nonempty integer, complex or
    object ndarray, an int (not a bool), or a list or tuple of numbers (at any depth, nonempty: ``W.tolist()``)."""
    if isinstance(v, np.ndarray):
        return bool(v.size) and v.dtype.kind in "iucO"
    if isinstance(v, (list, tuple)):
        try:
            a = np.array(v, dtype=None)
        except Exception:  # noqa: BLE001 - ragged, no numbers, or an object numpy cannot read: not this case
            return False
        return bool(a.size) and a.dtype.kind in "iufc"
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _idle_weights(obj, inputs, kw, unused, children=None, read=None, zero=None):
    """``{weight: gradient}`` of the arrays ``unused`` (forward's output does not change with them: ``X @ W`` beside
    ``self.b``) for which one backward writes a nonzero gradient by name (``self.db``, :func:`_grad_candidates`)
    of their shape, and which forward does not write (a cache or a buffer it sets is no weight). Such a gradient
    is checked, against a numerical gradient of 0, so the layer FAILs (NoBias); state restored after. The list
    ``read``, when given, gets those of them forward reads all the same (:func:`_nan_reaches`: a bias before a
    batch norm, which subtracts it again with the batch mean; tester30k M3). The dict ``zero``, when given, gets
    ``{weight: gradient}`` of those forward reads whose one gradient by name is 0 in every entry: weights idle on
    this input (fix39corpus: an attention whose mask leaves each query one key has Q's and K's projections idle,
    their gradients 0), whose gradients no comparison with 0 checks."""
    children, out = children or {}, {}
    with _all_undone([obj, *children.values()]) as rewind:
        before = {w: (v, v.copy()) for w in unused[:MAX_PROBED]
                  if isinstance(v := getattr(*_owner(obj, children, w), None), np.ndarray) and v.size}
        y = _run(obj, rewind, inputs, kw)
        still = [w for w, kept in before.items() if _same(getattr(*_owner(obj, children, w), None), kept)]
        if not still:
            return {}
        _probe_backward(obj, y)
        for w in still:
            o, key = _owner(obj, children, w)
            gs = [g for g in _grad_candidates(key) if isinstance(a := _grad(o, g), np.ndarray)
                  and a.shape == before[w][0].shape and a.dtype.kind == "f" and np.any(a)]
            if len(gs) == 1:
                out[w] = gs[0]
            elif zero is not None and len(zs := [g for g in _grad_candidates(key) if isinstance(a := _grad(o, g), np.ndarray)
                                                 and a.shape == before[w][0].shape and a.dtype.kind == "f"]) == 1:
                zero[w] = zs[0]
        if read is not None:
            read += [w for w in out if _nan_reaches(obj, rewind, inputs, kw, _owner(obj, children, w), y)]
        if zero:
            kept = {w: g for w, g in zero.items() if _nan_reaches(obj, rewind, inputs, kw, _owner(obj, children, w), y)}
            zero.clear()
            zero.update(kept)
    return out


def _nan_reaches(obj, rewind, inputs, kw, owned, y0) -> bool:
    """Whether forward reads the float array ``getattr(*owned)`` although its output does not change with it: filled
    with NaN (in place, so a view of it is too), the array turns an output entry NaN that was not. NaN passes
    through what cancels a change (``b - b.mean()``: NaN - NaN), so a bias that a batch norm subtracts again is
    read, one forward never touches is not. False when that cannot be told (not a float array, forward raised);
    contents restored after."""
    o, key = owned
    old = getattr(o, key, None)
    if not (isinstance(old, np.ndarray) and old.dtype.kind in "fc" and old.flags.writeable and old.size):
        return False
    try:
        with overwritten(old, np.nan):
            y = _run(obj, rewind, inputs, kw)
    except Exception:  # noqa: BLE001 - student code on NaN: cannot tell
        return False
    return np.shape(y) == np.shape(y0) and bool(np.any(np.isnan(y) & ~np.isnan(y0)))


def _idle_pairs(obj, inputs, kw, unused, children, info, taken=None):
    """:func:`_idle_weights` of ``unused``, said in ``info`` (the header, and ``read_from`` for the FAIL line); not
    a gradient ``taken`` (``{weight: gradient}``) by a weight forward uses, of the same owner: ``grads[0]`` is
    ``params[0]``'s, not that of ``vel[0]`` beside it (DLfS-2's lists with an optimizer's state)."""
    mine, read, zero = {(w.rpartition(".")[0], g) for w, g in (taken or {}).items()}, [], {}
    idle = {w: g for w, g in (_try(_idle_weights, obj, inputs, kw, unused, children, read, zero) or {}).items()
            if (w.rpartition(".")[0], g) not in mine}
    if zero := [f"{w}: {g}" for w, g in zero.items() if (w.rpartition(".")[0], g) not in mine and w not in idle]:
        info["idle_zero"] = zero  # read by forward, idle on this input, gradient 0: not checked (fix39corpus)
    if idle:
        info["idle"] = list(idle)
        info.setdefault("read_from", []).extend(
            f"d{_bare(w.rpartition('.')[2])}: the gradient backward writes for {w}, but "
            + (f"the output does not depend on {w}: forward reads it, yet changing it leaves the output unchanged "
               "(e.g. a bias followed by a normalisation that subtracts the mean), so its gradient is 0" if w in read
               else f"forward does not use {w}: changing it leaves the output unchanged, so its gradient is 0")
            for w in idle)
        for ws, what in (([w for w in idle if w not in read], "forward does not use {}"),
                         ([w for w in idle if w in read], "the output does not depend on {} (forward reads it, but "
                          "changing it leaves the output unchanged, e.g. a bias followed by a normalisation that "
                          "subtracts the mean)")):
            if ws:
                info.setdefault("listed", []).append(
                    f"{what.format(joined_and(ws))}, yet backward writes {joined_and([idle[w] for w in ws])}: checked "
                    "against the numerical gradient, 0")
    return idle


def _sibling_arrays(obj, holder):
    """``{"g.W": array}``: the float arrays of the plain objects (:func:`_is_helper`) other than ``holder`` that
    ``obj``'s attributes hold (``obj`` holds ``holder``: the layer or a sub-layer or plain object of it),
    candidates for the gradients of ``holder``'s arrays (``g.W`` for ``p.W``; read on ``obj``:
    :meth:`Adapted._grad_owner`)."""
    return {f"{a}.{k}": x for a, v in list(_fields(obj).items())[:MAX_PROBED * 4]
            if isinstance(a, str) and v is not holder and _is_helper(v) and not _is_layer(v)
            for k, x in list(_fields(v).items())[:MAX_PROBED]
            if isinstance(k, str) and _float_array(x)}


def _snapshot(arrays):
    """``{name: (array, its copy)}`` of ``arrays`` (``{name: array}``): what :func:`_same` compares with later."""
    return {k: (a, a.copy()) for k, a in arrays.items()}


def _same(a, kept):
    """Whether ``a`` is still the array of ``kept`` (``(array, its copy)`` of :func:`_snapshot`, or None), unchanged."""
    old, c = kept or (None, None)
    return a is old and a.shape == c.shape and np.array_equal(a, c, equal_nan=True)


def _written(now, before, dx):
    """``{name: array}`` of the arrays ``now`` (``{name: array}``: :func:`_arrays` with ``every``, ...) that backward
    wrote: new, rebound or changed since ``before`` (:func:`_snapshot`); not those sharing memory with what backward
    returned (``dx``: dX, or a tuple)."""
    returned = [v for v in (dx if isinstance(dx, (tuple, list)) else (dx,)) if isinstance(v, np.ndarray)]
    return {k: a for k, a in now.items() if not _same(a, before.get(k))
            and not any(np.shares_memory(a, r) for r in returned)}


def _structure_kind(key, name):
    """How array ``name`` (written by backward) stands to weight ``key`` of the same owner: 2 when it holds the
    weight's place in a parallel container (``g['W']`` for ``p['W']``, ``g[1]`` for ``Ws[1]``, ``g['W']`` for
    ``W``), 1 when it is named as a gradient (``W_gradient``, ``gW``...: :func:`_gradient_name`, ``grad``,
    ``delta``), else 0."""
    if "." in name:  # g.W for p.W: the same attribute of another object (:func:`_sibling_arrays`)
        return 2 if name.rpartition(".")[2] == key else 0
    wp, gp = _item_path(key), _item_path(name)
    if gp is not None and gp[0] != (wp[0] if wp else key) and gp[1] == (wp[1] if wp else [key]):
        return 2
    root = gp[0] if gp else name
    return 1 if _gradient_name(root, ()) or any(t in root.lower() for t in ("grad", "delta")) else 0


def _ones_apart(a, b) -> bool:
    """Whether shapes ``a`` and ``b`` differ, only by size-1 axes: ``(C,)`` and ``(1, C)``, ``(1, C, 1)``."""
    return tuple(a) != tuple(b) and [k for k in a if k != 1] == [k for k in b if k != 1]


def _loose_name(key, name):
    """Whether ``name`` is, whatever the case, ``d``, ``g``, ``grad``, ``dL_d`` before weight ``key``'s name or
    ``_g``, ``_d``, ``_grad`` after it (``dw``, ``gW``, ``W_g`` for ``W``), or ``d`` before the first letter of a
    word (``dw`` for ``weight``, ``db`` for ``bias``: Georgia Tech CS7643's layers, tester28s M6): the gradient of
    ``key`` when it is the only array of its shape backward writes (:func:`_by_structure`)."""
    k = key.lower()
    initial = {f"d{k[0]}", f"d_{k[0]}"} if len(k) > 1 and k.isalpha() else set()
    return name.lower() in {f"{p}{k}" for p in ("d", "d_", "g", "grad", "grad_", "dl_d", "dld")} | \
        {f"{k}_g", f"{k}_d", f"{k}_grad"} | initial


def _by_structure(obj, children, missing, written, taken):
    """Gradients of the weights ``missing`` (none found by name) among the arrays backward ``written``
    (``{owner path: {name: array}}``), by structure: of the weight's shape (when none is, of its shape up to size-1
    axes and named as a gradient, for the check to report its shape) and holding its place in a parallel
    container (:func:`_structure_kind` 2), else named as a gradient (1). One such array pairs; several, an array
    that fits two weights, or arrays of the weight's shape with neither sign are ambiguous. Returns
    ``({weight: gradient}, {weight: [candidate arrays]})``; ``taken``: gradients already paired by name."""
    found, unsure = {}, {}
    for w in missing:
        path, _, key = w.rpartition(".")
        v = getattr(*_owner(obj, children, w))
        mine = {g.rpartition(".")[2] for x, g in taken.items() if x.rpartition(".")[0] == path}
        own = getattr(_owner(obj, children, w)[0], "params", None)  # grads['gamma']: params['gamma']'s, not w's
        mine |= {n for n in written.get(path, {}) if isinstance(own, dict) and (ip := _item_path(n)) is not None
                 and ip[0] in GRAD_DICTS and ip[1][:1] and ip[1][0] in own}
        others = {n: a for n, a in written.get(path, {}).items() if n not in mine and n != key}
        cands = [n for n, a in others.items() if isinstance(v, np.ndarray) and a.shape == v.shape]
        if not cands and isinstance(v, np.ndarray):  # (C,) for a (1, C) weight (np.sum(axis=0) without keepdims):
            cands = [n for n, a in others.items() if _ones_apart(a.shape, v.shape) and (  # a gradient of the wrong
                _structure_kind(key, n) or _loose_name(key, n))]  # shape, to be said so; named as one (tester26s H1)
        kinds = {n: _structure_kind(key, n) for n in cands}
        best = max(kinds.values(), default=0)
        top = [n for n in cands if kinds[n] == best]
        if not best and len(cands) == 1 and _loose_name(key, cands[0]):  # self.dw, self.gW, self.W_g: alone
            best, top = 1, cands
        if best < 2 and _buffer_name(w) and not (best and len(top) > 1):  # running_mean beside dmu: a buffer,
            continue  # paired by its place alone; but A beside grad_first, grad_second: unsure, never passed
        if best and len(top) == 1:
            found[w] = top[0]
        elif cands:
            unsure[w] = top if best else cands
    for w, g in list(found.items()):  # one array, the gradient of two weights: neither is sure
        twins = [x for x, h in found.items() if h == g and x.rpartition(".")[0] == w.rpartition(".")[0]]
        if len(twins) > 1:
            unsure[w] = [g]
    return {w: g for w, g in found.items() if w not in unsure}, unsure


def _grad_candidates(key):
    """The names the gradient of weight ``key`` may have: ``dW``, ``d_W``, ``grad_W``, ``gradW``, ``W_grad``,
    ``grads['W']``, ``grads.W`` (an object holding the gradients: ``self.grads = Grads()``) (``_dW``, ``_grad_W``, ``_W_grad`` for ``_W``); for an item, the same of its container with the same keys: ``dWs[1]`` for ``Ws[1]``,
    ``gradients['W']`` (or ``grads``, ``grad``, ``dweights``) for ``weights['W']``."""
    path = _item_path(key)
    if key in HELD_VALUES:  # PyTorch's Parameter: weight.data with weight.grad; a Tensor's .value with .gradient
        return [*HELD_VALUES[key]] + [g.format(key) for g in GRAD_NAMES]
    if path is None:  # self.grads = {"W": ...} beside self.W; self._dW (or _grad_W) beside self._W
        mangled = MANGLED.fullmatch(key)  # self.__W is _Cls__W: its gradient self.__dW is _Cls__dW
        private = [mangled[1] + g.format(mangled[2]) for g in GRAD_NAMES] if mangled else \
            ["_" + g.format(key[1:]) for g in GRAD_NAMES] if key.startswith("_") and key[1:2] != "_" else []
        return list(dict.fromkeys([g.format(key) for g in GRAD_NAMES] + private + [f"grads[{key!r}]"]
                                  + [f"{d}.{key}" for d in GRAD_DICTS]))  # self.grads.W: an object of gradients
    subs = "".join(f"[{_key_text(k)}]" for k in path[1])
    return list(dict.fromkeys([g.format(path[0]) + subs for g in GRAD_NAMES] + [d + subs for d in GRAD_DICTS]))


def _property_grad_candidates(o, key):
    """The gradient names (:func:`_grad_candidates`) of each public property of ``o``'s class whose getter returns the
    array attribute ``key`` itself: ``dW`` for ``self._w`` behind ``@property W`` (tester22s H2: ``_w`` was read as a
    weight without a gradient, so a wrong ``self.dW`` passed unchecked)."""
    v = getattr(o, key, None) if "[" not in key and "." not in key else None
    if not isinstance(v, np.ndarray):
        return []
    out = []
    for name in dir(type(o))[:MAX_PROBED * 4]:
        if name.startswith("_") or name == key or not isinstance(inspect.getattr_static(o, name, None), property):
            continue
        with contextlib.suppress(Exception):  # a getter that raises or needs state: no such name
            if getattr(o, name) is v:
                out += _grad_candidates(name)
    return out


def _lazy_build(obj, inputs, kw):
    """One forward whose new parameters are kept (Keras-style: weights created in the first forward, from
    the input's shape); every other change is undone. Returns the parameters it created (``W``, ``l1.W``)."""
    def params():
        out = {}
        for prefix, o in [("", obj), *((n + ".", c) for n, c in sublayers(obj))]:
            d = _fields(o)
            out.update({prefix + k: v for k, v in d.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"})
            if isinstance(d.get("params"), dict):
                out.update({prefix + k: v for k, v in d["params"].items() if isinstance(v, np.ndarray)})
            out.update({f"{prefix}{k}[{key!r}]": v for k, box in d.items() if isinstance(box, dict) and k != "params"
                        and k not in GRAD_DICTS for key, v in list(box.items())[:MAX_PROBED] if isinstance(key, str)
                        and isinstance(v, np.ndarray) and v.dtype.kind == "f"})  # CS189's parameters['W']
        return out
    if (slots := _none_slots(obj)) and inputs:  # numpy-ml: parameters = {"W": None} replaced by the first forward
        made = _fill_slots(obj, inputs, kw, slots)
        if made is not None:
            return made
    if (slots := _empty_slots(obj)) and inputs:  # CS189: parameters = {} bound anew by the first forward
        made = _fill_slots(obj, inputs, kw, slots, rebound=True)
        if made is not None:
            return made
    before = params()
    children = dict(sublayers(obj))
    owners = [("", obj), *((n + ".", c) for n, c in children.items())]
    was = {prefix: dict(_fields(o)) for prefix, o in owners}
    with _all_undone([obj, *children.values()], keep_new=True) as rewind:
        y = _run(obj, rewind, inputs, kw)
    after = params()
    # a cache set once (`if not hasattr(self, 'X'): self.X = X`, the output kept as self.Y) is not
    # a weight: what equals the input or the output is taken back, a stale cache for the probes
    seen = [*inputs, y]
    new = [k for k in after if k not in before]
    kept = [k for k in new if not any(after[k].shape == np.shape(x) and np.array_equal(after[k], x) for x in seen)]
    for prefix, o in owners:
        d = _fields(o)
        for k in [k for k in new if k not in kept and k.startswith(prefix) and "." not in k[len(prefix):]]:
            key = k[len(prefix):]
            if key in d and key not in was[prefix]:
                del d[key]
            elif key in d and was[prefix].get(key, 0) is None:
                d[key] = None
            elif isinstance(d.get("params"), dict) and key in d["params"]:
                del d["params"][key]
    return kept


def _none_slots(obj):
    """The dict attributes of ``obj`` whose values are all None (numpy-ml's ``self.parameters = {"W": None, "b":
    None}`` until its first forward calls ``_init_params()``)."""
    return [k for k, v in _fields(obj).items()
            if isinstance(v, dict) and v and len(v) <= MAX_PROBED and all(x is None for x in v.values())]


def _empty_slots(obj):
    """The attributes of ``obj`` that are empty dicts (Berkeley CS189's ``self.parameters = {}``, ``self.gradients =
    {}`` until the first forward binds new dicts, setting ``self.n_in``)."""
    return [k for k, v in _fields(obj).items() if isinstance(v, dict) and not v and isinstance(k, str)][:MAX_PROBED]


def _fill_slots(obj, inputs, kw, slots, rebound=False):
    """:func:`_lazy_build` of a layer whose first forward fills ``slots`` (:func:`_none_slots`) with arrays and sets
    its own flags (``is_initialized``, ``n_in``): that forward is kept whole, as a second one would build the weights
    again (CS189's Conv2D also turns ``self.pad = "same"`` into a tuple there), and numpy-ml's ``flush_gradients()``
    then empties what it stored (:func:`_flush`). ``rebound``: only slots bound to a new dict count (empty ones,
    :func:`_empty_slots`; a dict filled in place is the general rule's), and only beside a flag the forward set (an
    attribute that was None: ``n_in``), the mark of a build rather than a cache bound anew by every call. Returns the parameters it created
    (``parameters['W']``), or None (nothing filled: every change undone) for the general rule. A slot filled in place
    (tinynn's ``self.params[name] = initializer(shape)``) keeps what forward put in it."""
    kept, was, inplace = {}, dict(_fields(obj)), {}
    switches = {n.removeprefix("self.").split("[")[0].split(".")[0]
                for n in (_set_switches(getattr(kw, "keyword", None)) or "").split(", ") if n.startswith("self.")}
    with _all_undone([obj]) as rewind:
        _run(obj, rewind, inputs, kw)
        now = {k: getattr(obj, k, None) for k in slots}
        filled = [f"{k}[{key!r}]" for k in slots for key, v in (now[k] or {}).items()
                  if isinstance(v, np.ndarray) and v.dtype.kind == "f" and not (rebound and now[k] is was[k])] if all(
            isinstance(now[k], dict) for k in slots) else []
        if rebound and not any(v is None and _fields(obj).get(k) is not None for k, v in was.items()):
            filled = []  # no flag set (n_in None, then the input's width): a dict bound anew by every forward
        if filled:  # what forward bound anew (not the mode switch the probe set: put back as it was)
            kept = {k: v for k, v in _fields(obj).items() if k not in switches and was.get(k, kept) is not v}
            inplace = {k: dict(now[k]) for k in slots if now[k] is was[k]}  # tinynn: params[p] = init(shape)
    if not filled:
        return None
    _fields(obj).update(kept)  # the objects the forward bound (the new dicts, is_initialized = True)
    for k, items in inplace.items():  # a dict of Nones filled in place (tinynn's self.params = {p: None for p in
        getattr(obj, k).update(items)  # ...}): the undo emptied it again, its arrays put back (tester28s M2)
    _flush(obj)
    return filled


def _grad(obj, name):
    """The gradient called ``name``: an attribute (``dW``), an item of a container attribute (``grads['W']``,
    ``gradients['W']``, ``dWs[1]``) or an attribute of an object attribute (``g.W``); None when there is none."""
    if "." in name:  # g.W, an array of another object (:func:`_sibling_arrays`)
        head, _, rest = name.partition(".")
        return _grad(getattr(obj, head, None), rest)
    if "[" in name and not isinstance(obj, _Items):
        obj = _Items(obj)
    return getattr(obj, name, None)


def _addresses(a):
    """The byte address of each element of array ``a``, in its C order (its data pointer plus strides)."""
    addr = np.full(a.shape, a.__array_interface__["data"][0], dtype=np.int64)
    for ax, (n, st) in enumerate(zip(a.shape, a.strides)):
        addr = addr + (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (a.ndim - ax - 1))
    return addr.ravel()


def _inside(a, b):
    """Whether every element of array ``a`` lies in the memory of ``b`` (same dtype): a view of it, or ``b``."""
    return a.dtype == b.dtype and np.may_share_memory(a, b) and bool(np.isin(_addresses(a), _addresses(b)).all())


def _overlap(a, b):
    return np.may_share_memory(a, b) and bool(np.isin(_addresses(a), _addresses(b)).any())


def _positions(rep, a):
    """Flat indices (C order) in ``rep`` of the elements of ``a`` (inside it), shaped like ``a``; None: same layout."""
    if a is rep or (a.shape == rep.shape and a.strides == rep.strides and
                    a.__array_interface__["data"][0] == rep.__array_interface__["data"][0]):
        return None
    if rep.flags.c_contiguous:  # an element's flat index is its offset from the first, in items
        return ((_addresses(a) - rep.__array_interface__["data"][0]) // rep.itemsize).reshape(a.shape)
    ar = _addresses(rep)
    order = np.argsort(ar, kind="stable")
    return order[np.searchsorted(ar[order], _addresses(a))].reshape(a.shape)


def _box(shape, pos):
    """The block of an array of ``shape`` that a view at flat positions ``pos`` (:func:`_positions`) is, as
    slices (``"5:8"``, ``":, 0:2"``); "" when it is all of the array or no rectangular block of it."""
    if pos is None or not shape:
        return ""
    seen = np.zeros(int(np.prod(shape)), dtype=bool)
    seen[pos.ravel()] = True
    idx = np.unravel_index(pos.ravel(), shape)
    lo, hi = [int(i.min()) for i in idx], [int(i.max()) + 1 for i in idx]
    if int(np.prod(np.subtract(hi, lo))) != int(seen.sum()) or (lo, hi) == ([0] * len(shape), list(shape)):
        return ""
    parts = [":" if (lo_, hi_) == (0, n) else f"{lo_}:{hi_}" for lo_, hi_, n in zip(lo, hi, shape)]
    while parts[-1] == ":":
        parts.pop()
    return ", ".join(parts)


def _strided(rep, pos):
    """A view of C-contiguous ``rep`` whose elements are those at flat ``positions`` (shaped like the view),
    or None when they are no strided pattern."""
    if pos.size == 0:
        return None
    first = int(pos.flat[0])
    steps = [int(pos[tuple(1 if j == ax else 0 for j in range(pos.ndim))]) - first if n > 1 else 0
             for ax, n in enumerate(pos.shape)]
    if first + sum(s * (n - 1) for s, n in zip(steps, pos.shape) if s < 0) < 0 or \
            first + sum(s * (n - 1) for s, n in zip(steps, pos.shape) if s > 0) >= rep.size:
        return None  # not inside rep: no strided pattern
    view = np.lib.stride_tricks.as_strided(rep.reshape(-1)[first:], shape=pos.shape,
                                           strides=[s * rep.itemsize for s in steps])
    return view if np.array_equal(_positions(rep, view), pos) else None


def _aliases(named, checked):
    """Arrays that share memory, so that a shared parameter is checked once, as PyTorch's
    ``named_parameters()`` lists it once (under its first name).

    ``named``: ``{name: array}`` of the parameters with a gradient (``checked``, in ``named_parameters``
    order) and of the arrays forward uses without one. Returns ``(tied, views)``: ``tied``
    ``{representative: [(name, positions)]}``: parameters with gradients inside the memory of the first
    one that holds all of its group (the same array, ``enc.W is dec.W``, or a view of it;
    :func:`_positions`), whose gradients add into the representative's, as an optimizer that steps
    each applies them; ``views`` ``{name: [names]}``: arrays without a gradient inside the memory of
    checked parameters (``self.Wx = self.W[:D]`` beside ``self.dW``: perturbing ``W`` moves them) or,
    among arrays without a gradient, inside a larger one. AdapterError: parameters with gradients
    that overlap without one holding the others (the gradient of the memory cannot be formed).
    """
    arrays = {n: a for n, a in named.items() if isinstance(a, np.ndarray) and a.size}
    groups = []
    for n in [n for n in checked if n in arrays]:
        linked = [g for g in groups if any(_overlap(arrays[n], arrays[m]) for m in g)]
        groups = [g for g in groups if g not in linked] + [[m for g in linked for m in g] + [n]]
    tied, reps = {}, []
    for g in sorted(groups, key=lambda g: min(map(list(checked).index, g))):
        g.sort(key=list(checked).index)
        rep = next((r for r in g if all(_inside(arrays[m], arrays[r]) for m in g)), None)
        if rep is None:
            raise AdapterError(f"{joined_and(g)} share part of their memory, but none of them holds the others: "
                               "the gradient of the memory they share cannot be formed from theirs. Keep one "
                               "parameter array and take the others as views of it (W[:D], W.T), or give each "
                               f"its own array (np.array(...), a copy). {expected()}")
        reps.append(rep)
        if len(g) > 1:
            tied[rep] = [(m, _positions(arrays[rep], arrays[m])) for m in g if m != rep]
    views = {}
    for u in [n for n in arrays if n not in checked]:
        over = [r for r in reps if _overlap(arrays[u], arrays[r])]
        if over and np.isin(_addresses(arrays[u]), np.concatenate([_addresses(arrays[r]) for r in over])).all():
            views[u] = over
    rest = sorted([n for n in arrays if n not in checked and n not in views], key=lambda n: -arrays[n].size)
    for i, u in enumerate(rest):  # no gradients: a view is named through the array that holds it
        big = next((r for r in rest[:i] if r not in views and _inside(arrays[u], arrays[r])), None)
        if big is not None:
            views[u] = [big]
    return tied, views


@contextlib.contextmanager
def overwritten(a, value):
    """The array ``a`` holding ``value`` (written in place, so a view of it moves with it) for the block, its contents
    put back after, whatever the block raised: the one probe of what forward does with an array changed."""
    keep = a.copy()
    try:
        a[...] = value
        yield a
    finally:
        a[...] = keep


def entry_moved(w, step, run):
    """``run()`` with ``w[0, 1]`` moved by ``step``, the entry put back after: the probe :func:`_layout` tells a square
    weight's layout by (here and in the grader's forward test)."""
    with overwritten(w[:1, 1:2], w[:1, 1:2] + step):
        return run()


def _layout(w, inputs, y, moved=None):
    """``", weights (in, out)"`` or ``", weights (out, in)"``: how a 2-D weight ``w`` maps forward's one input (N, in) to
    its output (N, out), by shape; a square ``w``, which its shape cannot tell, by forward itself when ``moved(step)``
    gives forward's output with ``w[0, 1]`` moved by ``step``: for Y = X @ W (in, out) output column 1 alone moves
    (with X[:, 0]), for Y = X @ W.T (out, in) column 0 alone (with X[:, 1]). "" when neither tells."""
    if w.ndim != 2 or len(inputs) != 1 or inputs[0].ndim < 2 or np.ndim(y) < 2:
        return ""
    d, m = inputs[0].shape[-1], np.shape(y)[-1]
    if w.shape[0] != w.shape[1]:
        return ", weights (in, out)" if w.shape == (d, m) else ", weights (out, in)" if w.shape == (m, d) else ""
    if moved is None or w.shape != (d, m) or d < 2:
        return ""
    base, y1 = moved(0.0), moved(1.0)
    if np.shape(base) != np.shape(y1) or np.ndim(y1) < 2:
        return ""
    cols = list(np.flatnonzero(np.any(base != y1, axis=tuple(range(np.ndim(y1) - 1)))))
    return ", weights (in, out)" if cols == [1] else ", weights (out, in)" if cols == [0] else ""


def _seed_weights(obj, inputs, y, kw, names):
    """``["W 5,3 float64 in, out", ...]``: name, shape, dtype and layout of the weights without gradients ``names``
    (the seed protocol's own attributes; strings, as the sandbox's reply carries them: :func:`seed_weight`), the
    layout of a 2-D one told by :func:`_layout` (``"in, out"``, ``"out, in"``, ``""``; a square one by forward, every
    write undone): what the grader's forward test sets them from (:func:`set_weights`)."""
    out = []
    for n in names[:MAX_PROBED]:
        w = _fields(obj).get(n) if "." not in n and "[" not in n else None
        if not (isinstance(w, np.ndarray) and w.dtype.kind == "f"):
            continue

        def moved(step, w=w):
            with _all_undone([obj]) as rewind:
                return entry_moved(w, step, lambda: _run(obj, rewind, inputs, kw))
        lay = (_try(_layout, w, inputs, y, moved if w.flags.writeable else None) or "") if inputs and y is not None \
            else ""
        out.append(f"{n} {','.join(map(str, w.shape))} {w.dtype.name} {lay.partition('(')[2].rstrip(')')}")
    return out


def seed_weight(text):
    """``(name, shape, dtype, layout)`` of one :func:`_seed_weights` string; None when it is not one (the sandbox's
    reply is data)."""
    parts = str(text).split(" ", 3)
    try:
        return parts[0], tuple(int(d) for d in parts[1].split(",") if d), np.dtype(parts[2]), parts[3]
    except (IndexError, ValueError, TypeError):
        return None


def set_weights(layer, values):
    """Write ``values`` (``{name: array}``) into the weights without gradients of an :class:`Adapted` ``layer`` (the
    seed protocol's, :func:`_seed_weights`), in place when the shape allows, else rebound in the attribute's dtype:
    the grader's forward test evaluates such a layer at its own point, as it sets a ``params`` dict's.

    Raises
    ------
    AdapterError
        A name that is not one of the layer's own float array attributes.
    """
    obj = getattr(layer, "obj", layer)
    for k, v in values.items():
        cur = _fields(obj).get(k) if isinstance(k, str) else None
        if not (isinstance(cur, np.ndarray) and cur.dtype.kind == "f"):
            raise AdapterError(f"{k!r} is not a float array attribute of {type(obj).__name__}")
        if cur.shape == np.shape(v) and cur.flags.writeable:
            cur[...] = v
        else:
            setattr(obj, k, np.array(v, dtype=cur.dtype))


def set_pair_keywords(layer, values):
    """Set items of the dict arguments of a CS231n :class:`FunctionPair` ``layer`` (``values``: ``{"bn_param":
    {"running_mean": array, "mode": "test"}}``; arrays in the pair's dtype), which every later forward starts from (a
    deep copy, as ``--init``'s): the running statistics a training forward updates, compared with ``--reference``'s
    (:mod:`gradcheck._running_stats`, newuser35 H2). ``values`` None puts back the dicts ``--init`` gave.

    Raises
    ------
    AdapterError
        ``layer`` is no function pair, or a name is none of its dict arguments.
    """
    pair = layer if isinstance(layer, FunctionPair) else getattr(layer, "obj", None)
    if not isinstance(pair, FunctionPair):
        raise AdapterError(f"{type(layer).__name__} is no function pair: no dict argument to set")
    saved = pair.__dict__.setdefault("_kwargs_given", copy.deepcopy(pair._kwargs))
    if values is None:
        pair._kwargs = copy.deepcopy(saved)
        return
    for k, d in values.items():
        if not (isinstance(pair._kwargs.get(k), dict) and isinstance(d, dict)):
            raise AdapterError(f"{k!r} is not a dict argument of {pair.student_forward.__name__}")
        pair._kwargs[k].update({str(j): pair._array(v) if isinstance(v, np.ndarray) else v for j, v in d.items()})


def pair_switches(obj) -> list[list]:
    """``[[name, default, [other values]], ...]`` of a :class:`FunctionPair`'s string keyword arguments with a default
    that ``--init`` does not give (``pool_forward(A_prev, hparameters, mode="max")``), with the other strings the
    source of its forward or backward compares them with (:func:`mode_words`, as a class's string switch is read:
    ``if mode == "average"``; at most 8): ``gradcheck check`` checks the pair again at each (tester33 F2: a broken
    ``mode="average"`` path PASSed with no word). ``[]`` when there are none."""
    out = []
    for p in (_params(obj.student_forward) or {}).values():
        if p.kind not in _NAMED or not isinstance(p.default, str) or p.name in obj._kwargs:
            continue
        words = [*mode_words(obj.student_forward, p.name), *mode_words(obj.student_backward, p.name)]
        others = [w for w in dict.fromkeys(words) if isinstance(w, str) and w != p.default]
        if not others and any(else_branch_line(f, p.name, words) for f in (obj.student_forward,
                                                                           obj.student_backward)):
            others = [ELSE_VALUE]  # if mode == "max": ... else: (the average path) runs for any other value
        if others:
            out.append([p.name, p.default, others[:8]])
    return out


def _pair_info(obj, inputs):
    """:func:`adapt`'s ``info`` of a CS231n :class:`FunctionPair` (its outputs read on ``inputs``)."""
    f = obj.student_forward.__name__
    if inputs is not None:
        _pair_outputs(obj, inputs)
    text = f"CS231n function pair ({f}/{obj.student_backward.__name__}), every array argument is an input"
    text += f"; {obj.outputs.text()}" if obj.outputs else ""
    text += (f"; {f} returns {', '.join(obj.state_outputs)} after (out, cache): read as state (running statistics), "
             f"not outputs: {obj.student_backward.__name__} takes no gradient for them, so they are not checked"
             if obj.state_outputs else "")
    text += f"; {', '.join(obj.as_arrays)} (lists) passed as {obj.dtype.name} arrays" if obj.as_arrays else ""
    if obj.weights_in:  # Ng's parameters["Wax"]: weights, their gradients the dict's "dWax"
        ws, b = [f"{k}[{j!r}]" for j, k in obj.weights_in.items()], obj.student_backward.__name__
        none = [j for j in obj.weights_in if f"d{j}" not in obj.grad_keys]
        text += (f"; {', '.join(ws)} are weights, each gradient read from the dict {b} returns under d and its name "
                 f"(d{next(iter(obj.weights_in))})" + (f"; {', '.join(none)}: no key, read as 0 (forward's checked "
                                                       "outputs must not depend on them)" if none else ""))
    text += (f"; --init {', '.join(obj.backward_keywords)} passed to {obj.student_backward.__name__} too (its "
             "signature names it)" if obj.backward_keywords else "")
    others = [b for b, g in backward_variants(getattr(obj.student_forward, "__globals__", {})).items()
              if g == f and b != obj.student_backward.__name__]  # batchnorm_backward_alt beside batchnorm_backward
    text += "".join(f"; {b}, another backward of {f}, is not checked here: check it as ::{b}" for b in others)
    switches = pair_switches(obj)
    text += "".join(f"; {f}'s {n}={d!r} (its default) checked, then each other value its source compares {n} with "
                    f"({', '.join(map(repr, ws))}) in a check of its own below" if ws != [ELSE_VALUE] else
                    f"; {f}'s {n}={d!r} (its default) checked; the source names no other value of {n}, but an else "
                    f"branch runs for any other: checked with {n}={ELSE_VALUE!r} below (give a value with --init "
                    f"'{{\"{n}\": ...}}' to check it by name)" for n, d, ws in switches)
    mode = next((v["mode"] for v in obj._kwargs.values() if isinstance(v, dict) and isinstance(v.get("mode"), str)),
                "")  # bn_param['mode']: the diagnosis tells test mode from training
    return {"protocol": "cs231n", "text": text, "pair_switches": switches, "forward_training": False, "init": obj.keyword_names, "mode": mode,
            "calls": [f, obj.student_backward.__name__]}  # messages name these (gradcheck._validation.called)


def adapt(obj, inputs=None, training=True):
    """:func:`_adapt`, with an attribute training switch (``self.training``, :func:`_switch_attr`) that its
    probes set put back to the value it had, of a layer that stores its results (:func:`stored_results`):
    ``(layer, info)``."""
    mk = mode_keyword(obj.forward) if callable(getattr(obj, "forward", None)) else None
    stored = stored_results(obj, inputs, training)
    after = stored and getattr(type(obj), "_gradcheck_dx_after_step", False) is True
    read = list(getattr(type(obj), "_gradcheck_read_from", None) or []) if stored else []
    why = stored and getattr(type(obj), "_gradcheck_not_plain", None)
    opt, trainable = getattr(type(obj), "_gradcheck_pass_optimizer", None), bool(getattr(obj, "trainable", True))
    one = inputs is not None and not isinstance(obj, Adapted) and scalar_output(obj, inputs)
    hooks, listed = _try(_resets, obj), (_try(list_input_advice, obj) or "").strip()
    uninit = _try(_not_initialized, obj)
    with _switch_kept(obj, mk):
        obj, info = _adapt(obj, inputs, training)
    if listed:  # its advice on a failure (tester31m M3)
        info["list_input"] = listed
    if uninit:  # newuser31b F5: half ML-From-Scratch, half forward/backward
        info["text"] = f"{info.get('text', '')}; {uninit}"
    if hooks:  # every hook gradcheck calls, said (tester31m M6)
        info["resets"] = hooks
        if said := [h for h in hooks if f"{h}()" not in info.get("text", "")]:
            info["text"] = f"{info.get('text', '')}; {reset_text(said)} called before each forward, as its training " \
                           "loop does"
    if one:  # newuser29 M1: a scalar output, checked as shape (1,)
        info["text"] = f"{info.get('text', '')}; {SCALAR_OUTPUT}" if info.get("text") else SCALAR_OUTPUT
    if stored:
        info["text"] = info.get("text", "") + stored
    if after:  # dX computed with the weights after the step (_sgd_dx_after_step): named by the diagnosis
        info["dx_after_step"] = True
    if read:  # a stored gradient and a step that differ: which one the check reads, for the FAIL line
        info["read_from"] = [*info.get("read_from", []), *read]
    if why:  # an optimizer inside backward (:func:`_steps_undone`): dX alone checked
        info["not_plain_step"] = why
    if opt is not None and not why and (frozen := never_stepped(opt, trainable, info)):
        info["not_plain_step"] = frozen  # newuser31b F1: initialize's optimizer never stepped: dX alone checked
    elif isinstance(opt, PassOptimizer) and not opt.updates and not trainable and info.get("unchecked"):
        info["text"] = f"{info.get('text', '')}; trainable is False: backward_pass steps no weight, dX alone checked"
    if isinstance(obj, Adapted) and info.get("variants_unsafe"):  # no combination run in process either
        obj.variants_unsafe = True
    if isinstance(obj, Adapted) and (missing := missing_gradients(info)):
        obj.missing_gradients = missing  # named by the diagnosis (a sandboxed layer's: from its protocol)
    if isinstance(obj, Adapted) and info.get("protocol") == "seed" and info.get("seed_weights"):
        obj.seed_weights = list(info["seed_weights"])  # drawn again when constant (a sandboxed layer's: its protocol)
    if (outs := outputs_of(obj)) is not None:  # k outputs: the diagnosis names one whose dY backward ignores
        info["outputs"] = outs.data()
    return obj, info


def _not_initialized(obj) -> str:
    """The header's words for a class with its own ``forward``/``backward`` beside ML-From-Scratch's
    ``forward_pass`` and ``initialize(optimizer)`` (its Layer subclassed), holding no optimizer and attributes still
    None: gradcheck calls ``initialize`` only for the forward_pass/backward_pass protocol (:func:`pass_as_forward`),
    so weights it would build are None (newuser31b F5: forward's TypeError was blamed on --input-shape); else ""."""
    if not all(callable(getattr(obj, m, None)) for m in ("forward", "backward", "forward_pass")) or \
            not _initialize_hook(obj) or _has_optimizer(obj):
        return ""
    try:
        made = set(re.findall(r"self\.(\w+)\s*=", inspect.getsource(type(obj).initialize)))
    except (OSError, TypeError):
        made = set()
    nones = [k for k, v in _fields(obj).items() if v is None and not k.startswith("_") and (k in made or not made)]
    return (f"initialize(optimizer) was not called: gradcheck calls it only for ML-From-Scratch's protocol "
            f"(forward_pass/backward_pass alone), and this class has forward/backward of its own, so "
            f"{', '.join(nones)} {'is' if len(nones) == 1 else 'are'} still None; build them in __init__ (or call "
            "self.initialize(optimizer) there), or check the forward_pass/backward_pass class itself") if nones else ""


def missing_gradients(info) -> list:
    """The arrays forward reads (the output moving with them) that have no gradient, beside weights with theirs,
    not named as known buffers (:func:`_split_buffers`): ``info['unchecked']`` of an attribute-style layer less those
    with an array of their shape backward writes (``info['ambiguous']``), and ``info['unseen']`` (outside a params
    dict). Each is a weight whose gradient backward forgot or a constant: the checker cannot tell which (H4), so the
    check is undecided unless ``--constants`` names it; [] for another protocol."""
    if not isinstance(info, collections.abc.Mapping):
        return []
    unseen = [str(w) for w in info.get("unseen") or []]  # a params-dict layer's array outside params (H4)
    if info.get("protocol") != "attribute":
        return unseen if info.get("protocol") == "manualprop" else []
    unsure = {str(a).split(" (")[0] for a in info.get("ambiguous") or []}
    return [str(w) for w in info.get("unchecked") or [] if str(w) not in unsure] + unseen


#: The gradient container beside a weight container, as the books name them (``params`` / ``grads``); another
#: container ``Ws`` has ``dWs``.
_PARALLEL = {"params": "grads", "parameters": "grads", "weights": "gradients"}


def _as_python(path: str) -> str:
    """A dotted path as Python writes it: ``layers.0`` -> ``layers[0]`` (tester20s: "set self.layers.0.dW")."""
    return re.sub(r"\.(\d+)(?=\.|\[|$)", r"[\1]", path)


def undecided_text(names, unseen=(), grading=False) -> str:
    """Why a check is NOT CHECKED as a whole (H4): the arrays ``names`` (:func:`missing_gradients`; those of
    ``unseen`` lie outside a params dict) may be weights whose gradients backward forgot or constants, each said with
    what to do in either case, in the student's own names (``self.dbh``, ``grads['scale']``, ``self._bh``). The
    declaration offered is check's ``--constants``, or with ``grading`` (a grader's result, read by the student and
    the staff; a student cannot pass options to the grader) the grading test's ``constants=[...]``."""
    one = len(names) == 1

    def item(w):  # an item of a list or dict attribute: ("params", "[2]"), as the student wrote it
        got = re.fullmatch(r"([A-Za-z_]\w*)(\[.+\])", w.rpartition(".")[2])
        return got.groups() if got else None

    def grad(w):
        path, dot, key = w.rpartition(".")
        path = _as_python(path)
        if (it := item(w)) is not None:  # DLfS-2's params[2] beside grads: grads[2], not self.dparams[2] (session 16)
            return f"self.{path}{dot}{_PARALLEL.get(it[0], 'd' + it[0])}{it[1]}"
        return f"grads[{key!r}]" if w in unseen else f"self.{path}{dot}d{key}"

    def private(w):
        path, dot, key = w.rpartition(".")
        path = _as_python(path)
        if (it := item(w)) is not None:  # not self._params[2]: an item has no name of its own to make private
            return f"an attribute of its own outside self.{path}{dot}{it[0]} (self._c)"
        return f"self.{path}{dot}_{key}"
    kept = [private(w) for w in names]
    inside = [w for w in names if w in unseen]
    put = (f", with {'it' if len(inside) == 1 else 'them'} in params" if inside else "")
    return (f"cannot tell whether {_listed(names)} {'is a weight' if one else 'are weights'} whose "
            f"{'gradient' if one else 'gradients'} backward forgot (then set {_listed(list(map(grad, names)))}{put}) "
            f"or {'a constant' if one else 'constants'} (then "
            f"{('make it ' if one else 'make each ') if all(item(w) for w in names) else 'name ' + ('it ' if one else 'them ')}"
            f"{_listed(list(dict.fromkeys(kept)))}" + (
                f"; if the assignment gives {'it' if one else 'them'} as {'a constant' if one else 'constants'}, "
                f"course staff declare {'it' if one else 'them'} in the grading test: "
                f"grade.layer_gradients(..., constants={[str(n) for n in names]!r}))" if grading else
                f", or pass --constants {','.join(names)})"))


def _listed(items, cap: int = 8) -> str:
    """``items`` joined by commas, the first ``cap`` of them and how many more (tester20g M7: 88 names in full)."""
    return ", ".join(items[:cap]) + (f", ... and {len(items) - cap} more" if len(items) > cap else "")


#: Attributes a forward that returns nothing stores its output in, and a backward its input's gradient
#: (*Neural Networks from Scratch*: ``self.output``, ``self.dinputs``; Georgia Tech CS7643's ``backward(dout)``,
#: ":return: nothing but dx, dw, and db of self should be updated": ``self.dx``, tester28s H1).
STORED_OUTPUTS = ("output", "outputs")
STORED_DINPUTS = ("dinputs", "dinput", "dx", "dX")


def _stores(fn, names):
    """The first of ``names`` that method ``fn`` assigns (``self.output = ...``) when it returns no value
    (no ``return expr``), else None."""
    tree = _source(fn)
    if tree is None or not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    nodes = list(ast.walk(tree.body[0]))
    if any(isinstance(n, ast.Return) and n.value is not None for n in nodes):
        return None
    set_ = {_switch_reach.self_attr(t) for n in nodes if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])}
    return next((n for n in names if n in set_), None)


def _stored_result(obj, r, name):
    """What a method of ``obj`` that stores its result gave: ``r`` (its return value), or, when ``r`` is None
    and ``name`` names the attribute it stores in (:func:`_stores`), ``obj.<name>`` (None when unset). The
    layers' ``self.output``/``self.dx`` (:func:`stored_results`) and a loss's ``self.dx`` (:class:`BoundLoss`,
    CS7643's SoftmaxCrossEntropy, corpus37 F2) are read here."""
    return getattr(obj, name, None) if r is None and name else r


def _loss_item(res):
    """The index of the loss in a loss forward's tuple result: the one item that is a number (0-d: a Python or
    numpy number, a 0-d array), CS7643's ``return probs, loss`` (corpus37 F2); None when ``res`` is no tuple or
    when not exactly one item is (which is then the loss cannot be told)."""
    if type(res) is not tuple:
        return None
    at = [i for i, v in enumerate(res) if (isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)))
          or (isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iuf")]
    return at[0] if len(at) == 1 else None


#: Names of a learning rate that a backward which updates the weights itself requires (``backward(self,
#: output_gradient, learning_rate)``, The Independent Code's tutorial layers).
LR_NAMES = ("learning_rate", "lr", "eta", "step_size", "learningrate", "stepsize", "lr_rate", "learn_rate", "alpha")

#: Those a rate *parameter* may have: not ``alpha``, a LeakyReLU's or ELU's slope (``backward(dY, alpha=0.01)``);
#: a rate attribute named so is probed to move weights before it is taken as one (tester13 H2).
LR_PARAM_NAMES = tuple(n for n in LR_NAMES if n != "alpha")

#: The learning rate such a backward is given: not 1, so that a rate forgotten on one step, applied twice or
#: multiplied into dX changes what is read (verify10 Y1); a power of 2, so that dividing by it is exact.
LR_PROBE = 0.25


def _learning_rate(fn):
    """The name of ``fn``'s learning-rate parameter (:data:`LR_NAMES`) after the upstream gradient: required
    (``backward(dY, learning_rate)``), with a default (``lr=0.01``) or keyword-only (``backward(dY, *, lr)``),
    when no other parameter but dY is required (verify10 Y3); else None. A default that is no positive number
    (``lr=None``: backward steps only when given a rate) is not one: called without it, backward does not step."""
    ps = [p for p in (_params(fn) or {}).values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    ps = ps[1:] if ps[:1] and ps[0].name == "self" else ps
    rates = [p for p in ps[1:] if p.name.lower() in LR_PARAM_NAMES]
    if not ps or ps[0].kind not in _POSITIONAL or len(rates) != 1 or rates[0].default is not rates[0].empty and not (
            isinstance(rates[0].default, (int, float)) and not isinstance(rates[0].default, bool)
            and rates[0].default > 0):
        return None
    return None if any(p.default is p.empty and p is not rates[0] for p in ps[1:]) else rates[0].name


def _forwarded_rate(bwd, cls):
    """A ``backward(self, dY, *args)`` that hands its extra arguments on to a base class's backward taking a learning
    rate as its first after the gradient (``super().backward(dY, *args)`` over ``backward(self, dZ, lr)``: the
    subclass the 1/m diagnosis suggests, corpus35 F2), made a function of signature ``(self, dY, lr)`` (the base's
    rate name and default) that calls it with the rate as its first extra argument, so it is given the rate by name
    as :func:`_learning_rate` finds it; its source is ``bwd``'s (``__wrapped__``). None for another backward."""
    ps = list((_params(bwd) or {}).values())
    if len(ps) < 3 or any(p.kind not in _POSITIONAL for p in ps[:2]) or ps[2].kind is not ps[2].VAR_POSITIONAL or any(
            p.default is p.empty and p.kind is not p.VAR_KEYWORD for p in ps[3:]):
        return None
    try:
        src = inspect.getsource(bwd)
    except (OSError, TypeError):
        return None
    if not re.search(rf"\.backward\s*\([^)]*\*\s*{ps[2].name}\b", src):  # the extra arguments handed on
        return None
    owners = [b for b in cls.__mro__ if b.__dict__.get("backward") is bwd][:1]
    base = next((f for b in cls.__mro__[cls.__mro__.index(owners[0]) + 1:] if owners and isinstance(
        f := b.__dict__.get("backward"), types.FunctionType)), None) if owners else None
    lr = _learning_rate(base) if base is not None else None
    bps = list((_params(base) or {}).values()) if lr else []
    if not lr or len(bps) < 3 or bps[2].name != lr or bps[2].kind not in _POSITIONAL:
        return None

    def backward(self, dy, *args, **kw):
        return bwd(self, dy, *((kw.pop(lr),) if lr in kw else ()), *args, **kw)
    backward.__name__, backward.__qualname__, backward.__module__ = bwd.__name__, bwd.__qualname__, bwd.__module__
    backward.__wrapped__ = bwd
    backward.__signature__ = inspect.Signature([*ps[:2], bps[2].replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    return backward


def stored_results(obj, inputs=None, training=True):
    """A layer whose methods are called another way than ``forward(X) -> Y``, ``backward(dY) -> dX``, made to be
    called so: its class becomes a subclass whose methods call the student's. A ``forward`` that returns nothing
    and stores its output (``self.output``) and a ``backward`` that returns nothing and stores the input's
    gradient (``self.dinputs``), *Neural Networks from Scratch*'s protocol: they return what they stored. A
    ``backward`` that updates the weights itself, given a learning rate (:func:`_learning_rate`) or reading one
    held by the layer (``self.lr``, ``self.opt.lr``: :func:`_rate_attributes`): given a rate of
    :data:`LR_PROBE`, each weight's step over it is read as its gradient and the weight put back, so the weights
    stay where the check measures them; on ``inputs`` (forward called with ``training``), the step is first
    probed to be plain gradient descent (:func:`_sgd_probe`, which raises AdapterError when it is
    not). Returns the header's words for it, or "" (``obj`` unchanged)."""
    cls = type(obj)
    fwd, bwd = getattr(cls, "forward", None), getattr(cls, "backward", None)
    if not (isinstance(fwd, types.FunctionType) and isinstance(bwd, types.FunctionType)):
        return ""
    out, din, lr = _stores(fwd, STORED_OUTPUTS), _stores(bwd, STORED_DINPUTS), _learning_rate(bwd)
    if lr is None and (handed := _forwarded_rate(bwd, cls)) is not None:  # backward(dY, *args) -> super's (dZ, lr)
        bwd, lr = handed, _learning_rate(handed)
    # forward stores Y (self.output) and returns nothing: read there whatever backward returns (tester14 #3)
    heads = set() if lr else _rate_heads(bwd, cls)
    rated = bool(lr or _rate_attributes(obj, heads))
    given, built = "", []
    if rated and inputs and not _sgd_weights(obj):  # no weight yet: those the first forward creates (ramisa2108's
        # FullyConnected: params['W'] None until then), made before the probe, which would find none to step and
        # leave them moving at each backward (corpus35 F1); named by the header (_built)
        built = _try(_lazy_build, obj, inputs, ModeKw(obj.forward, False, mode_keyword(obj.forward))) or []
    if rated and inputs and _input_backward(obj, len(inputs)) == "input":  # Practical-DL's backward(input,
        # grad_output) stepping self.weights (newuser30 F1): forward's input handed back first, then probed as dY alone
        given = f"; {class_input_backward(obj, inputs)}"
        fwd, bwd = type(obj).forward, type(obj).backward
    try:
        weights, after, stored = _probe_steps(obj, bwd, lr, heads, inputs, training) if rated and inputs is not None \
            else (None, False, {})
    except NotPlainStepError as exc:  # an optimizer inside backward: dX alone checked, its steps undone
        if any(not n.isidentifier() for n in getattr(exc, "weights", ["?"])) or _learning_rate(bwd):  # params['W'],
            raise  # Ws[1], l1.W, or a rate backward takes as an argument (backward(dY, learning_rate)): as before
        return _steps_undone(obj, fwd, bwd, str(exc))
    notes, read = _sgd_stored_text(stored)
    rated = bool(lr or weights)  # a rate attribute that backward steps no weight with: not a self-stepping one
    if not rated and inputs is not None:
        _unrated_steps(obj, bwd, inputs, training)
    if out is None and din is None and not rated:
        return given

    @functools.wraps(fwd)
    def forward(self, *xs, **kw):
        return _stored_result(self, fwd(self, *xs, **kw), out)

    @functools.wraps(bwd)
    def backward(self, *dys, **kw):
        if not rated or len(dys) > 1 or lr in kw:
            r = bwd(self, *dys, **kw)
        elif weights is not None:  # probed: the weights it steps, wherever they are held
            before = _sgd_snapshot(self, weights)
            with _rate_set(self, lr, _rate_attributes(self, heads), LR_PROBE) as rate:
                r = bwd(self, *dys, **rate, **kw)
            _sgd_read(before, LR_PROBE, [n for n, (_, wrong) in stored.items() if "stored" in wrong])
        else:  # not probed: each float attribute backward moves
            before = _sgd_snapshot(self, [n for n in _sgd_weights(self) if n.isidentifier()])
            r = bwd(self, *dys, **{lr: LR_PROBE}, **kw)
            _sgd_read(_sgd_moved(before), LR_PROBE)
        return _stored_result(self, r, din)
    if not _subclass(obj, forward=forward, backward=backward, __slots__=(), _gradcheck_dx_after_step=after,
                     _gradcheck_read_from=read, _gradcheck_built=built):  # a class whose instances cannot change class: read as it is
        return given
    return given + _stored_text(out, din) + (_sgd_header(obj, bwd, lr, heads, weights) + notes if rated else "")


def _steps_undone(obj, fwd, bwd, why):
    """A layer whose backward steps its weights with an optimizer (``why``: :func:`_sgd_not_plain`'s message) made
    checkable for dX alone: its class becomes a subclass whose backward undoes everything the student's changes on
    the layer and its sub-layers (weights, moments, step counter), so every call sees the weights forward used.
    The reason is kept as the class's ``_gradcheck_not_plain`` (the check's verdict: the weights not checked).
    Returns the header's words, or "" when the class cannot be switched (then ``why`` is raised)."""
    cls = type(obj)
    why = why.replace(f"so {cls.__name__} is not checkable as written and no gradient was compared",
                      f"so {cls.__name__}'s weights are not checkable as written: no weight's gradient was compared "
                      "(dX, which backward returns, is)")

    @functools.wraps(bwd)
    def backward(self, *dys, **kw):
        with _all_undone([self, *dict(sublayers(self)).values()]):
            return bwd(self, *dys, **kw)
    if not _subclass(obj, forward=fwd, backward=backward, __slots__=(), _gradcheck_not_plain=why):
        raise NotPlainStepError(why)
    return ("; backward steps the weights with an optimizer, not a plain gradient-descent step: each backward's "
            "changes to the layer are undone, so only dX is checked and the weights' update could not be")



def _stored_text(out, din):
    """The header's words for a forward that stores Y in ``self.<out>`` (and returns nothing) and a backward that
    stores dX in ``self.<din>`` (and returns nothing; None: it returns dX), or ""."""
    if not out:
        return (f"; backward returns nothing and stores dX in self.{din} (as CS7643's layers do): dX is read there"
                if din else "")
    if din:
        return (f"; forward returns nothing and stores Y in self.{out}, backward returns nothing and stores dX in "
                f"self.{din} (Neural Networks from Scratch): Y and dX are read there")
    return (f"; forward returns nothing and stores Y in self.{out} (Neural Networks from Scratch): Y is read there, "
            "dX is what backward returns")


def _probe_steps(obj, bwd, lr, heads, inputs, training):
    """:func:`_sgd_probe` of ``obj`` on ``inputs``, its forward in mode ``training`` (its switch put
    back after), and :func:`_sgd_stored_grads` of the weights it moves: ``(weights, dx_after_step, stored)``."""
    with _in_mode(obj, training) as kw:
        attrs = _rate_attributes(obj, heads)
        weights, after = _sgd_probe(obj, bwd, lr, attrs, inputs, kw)
        return weights, after, _sgd_stored_grads(obj, bwd, lr, attrs, inputs, kw, weights) if weights else {}


#: The words of check's refusal of a backward that steps its weights at a rate it cannot find (:func:`_unrated_steps`),
#: which the grader reads from its probe (newuser32 F4: check exit 3, grade full marks).
STEPS_ITSELF = "updates the weights itself"


def _unrated_steps(obj, bwd, inputs, training):
    """Raise :class:`AdapterError` when backward moves weights forward reads (a before/after snapshot of one forward
    and backward, everything put back) and no rate it steps them with was found or could be set (a literal
    ``self.W -= 0.01 * dW``, a rate held where gradcheck does not look): its dX would be measured with weights
    that move at each call, a FAIL of a correct layer (tester13 H1, H2). Returns None when nothing moved, or
    when forward or backward (called with dY alone) raised: the check says so."""
    children = dict(_sgd_holders(obj))
    objs, names = [obj, *children.values()], list(_sgd_weights(obj))
    with _in_mode(obj, training) as kw:
        try:
            with _all_undone(objs) as rewind:
                y = _run(obj, rewind, inputs, kw)
                before = _sgd_snapshot(obj, names)
                try:
                    _step("backward")  # (which may refuse to run it: the student's backward's exception, as below)
                    bwd(obj, probe_rng(0).standard_normal(y.shape))
                except Exception:  # noqa: BLE001 - the student's backward: the check calls it again and says so
                    return
                moved = [n for n, (o, k, _, kept) in before.items() if isinstance(new := getattr(o, k, None), np.ndarray)
                         and new.shape == kept.shape and not np.array_equal(new, kept, equal_nan=True)]
            used = _used_arrays(obj, inputs, kw, moved, children)[0] if moved else None
        except _ForwardFailed:
            return
    if used:
        w = ", ".join(used)
        raise AdapterError(
            f"{type(obj).__name__}.backward {STEPS_ITSELF} ({w} moved), at a rate gradcheck could not "
            f"find or set, so its gradients cannot be read and no gradient was compared (its dX would be measured "
            f"with weights that move at each call). Make backward only store the gradients (self.dW = ...), without "
            f"stepping, and let an optimizer step; or keep the rate in self.lr or a backward argument (backward(dY, lr)).")


#: A dY scale a clipped, normalised (Adam) or decayed step does not follow, exact in floating point (a power of 2).
SGD_DY_SCALE = 1024.0


def _rate_heads(fn, cls=None, seen=None):
    """The attributes of ``self`` that method ``fn``'s source reads (``self.lr``, ``self.opt.step(...)``,
    ``for layer in self.layers``, ``type(self).lr``): where a rate it steps with may be _sgd_weights; and
    ``(class, name)`` of each rate it reads through a global name (``Opt.lr``: :func:`_global_rates`). Given the
    class ``cls``, the heads of each of its methods ``fn`` calls on ``self`` too, and theirs (``backward`` returning
    ``self.backward_pass(dY)``, which steps with ``self.W_opt.update``: tester31e F4)."""
    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError):
        return set()
    heads = set(re.findall(r"\bself\.([A-Za-z_]\w*)", src)) | set(_global_rates(fn)) | set(
        re.findall(r"(?:\btype\(\s*self\s*\)|\bself\.__class__)\.([A-Za-z_]\w*)", src))
    seen = {fn} if seen is None else seen
    for h in [h for h in heads if isinstance(h, str)] if cls is not None else ():
        m = inspect.getattr_static(cls, h, None)
        if isinstance(m, types.FunctionType) and m not in seen and len(seen) < MAX_PROBED:
            seen.add(m)
            heads |= _rate_heads(m, cls, seen)
    return heads


def _is_rate(v):
    return isinstance(v, (int, float, np.floating)) and not isinstance(v, bool)


def _rate_class(cls, name):
    """The class of ``cls``'s MRO (the student's, not numpy's or the standard library's) whose own attribute
    ``name`` is a number: where a rate held as a class attribute (``class Opt: lr = 0.1``) is set; else None."""
    for c in getattr(cls, "__mro__", ())[:-1]:
        if name in vars(c):
            ok = _is_rate(vars(c)[name]) and (c.__module__ or "").split(".")[0] not in ("numpy", "builtins")
            return c if ok else None
    return None


def _student_module(m):
    """Whether module ``m`` is the student's: not numpy's, the standard library's nor gradcheck's own."""
    top = (getattr(m, "__name__", "") or "").split(".")[0]
    return isinstance(m, types.ModuleType) and top not in ("numpy", "gradcheck", "autoprop", "manualprop") and \
        top not in getattr(sys, "stdlib_module_names", ())


def _global_rates(fn):
    """``[(class or module, name)]`` of the rates (:data:`LR_NAMES`) that ``fn``'s source reads as class attributes
    through a global name (``Opt.lr``, ``Linear.lr``, ``Linear.Opt.lr``), each where it is set (:func:`_rate_class`),
    or as a module's global: ``LEARNING_RATE`` of ``fn``'s own module, ``config.lr`` of a module it imported."""
    tree, out, g = _source(fn), [], getattr(fn, "__globals__", {})
    code = getattr(fn, "__code__", None)
    local = set(code.co_varnames + code.co_cellvars + code.co_freevars) if code else set()
    for n in ast.walk(tree) if tree is not None else ():
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id.lower() in LR_NAMES and \
                n.id not in local and _is_rate(g.get(n.id)):  # LEARNING_RATE = 0.1 at the module's top
            m = sys.modules.get(g.get("__name__", ""))
            out += [(m, n.id)] if m is not None and vars(m) is g and _student_module(m) else []
        out += _held_global_rates(n, g, local)
        if not (isinstance(n, ast.Attribute) and n.attr.lower() in LR_NAMES):
            continue
        v, steps = _switch_reach.path_steps(n)
        if not isinstance(v, ast.Name) or v.id == "self" or any(s != "." for s, _ in steps):
            continue
        held = g.get(v.id)
        for _, k in steps[:-1]:
            held = inspect.getattr_static(held, k, None)
        if isinstance(held, type) and (c := _rate_class(held, n.attr)) is not None:
            out.append((c, n.attr))
        elif _student_module(held) and _is_rate(vars(held).get(n.attr)):  # config.lr
            out.append((held, n.attr))
    once = {}  # opt.lr read in backward and opt named by it: one rate, named as read
    for o, k in out:
        once.setdefault((id(_held(o)), k), (o, k))
    return list(once.values())


def _held_global_rates(n, g, local):
    """``[(_Items, key)]`` of the rates (:data:`LR_NAMES`) that node ``n`` of a method's source reads from a dict or
    plain object (:func:`_rate_holder`) a global of its module holds: ``CONFIG["lr"]``, ``cfg.lr``,
    ``hp.learning_rate`` (tester13 H1), reached through attributes or string keys (``cfg.optim.lr``,
    ``CONFIG["optim"]["lr"]``); for a global's bare name, each it holds (``opt`` of ``opt.step(self, dW)``, whose
    own method reads ``self.lr``) (session 14, finding 2). ``g``: the method's globals, ``local``: its local names.
    A module or a class there is :func:`_global_rates`' own."""
    v, steps = _switch_reach.path_steps(n)
    if not (isinstance(v, ast.Name) and v.id not in local and v.id != "self" and len(steps) <= RATE_DEPTH + 1
            and all(isinstance(c, str) for _, c in steps) and (steps[-1][1].lower() in LR_NAMES if steps else
                                                                isinstance(n.ctx, ast.Load))):
        return []
    held, name = g.get(v.id), v.id
    for _, c in steps[:-1]:  # cfg.optim, CONFIG["optim"]: the dict or object the rate is in
        name += f"[{c!r}]" if isinstance(held, dict) else f".{c}"
        held = held.get(c) if isinstance(held, dict) else getattr(held, "__dict__", {}).get(c) if \
            _rate_holder(held) or _student_module(held) else None
    items = held if isinstance(held, dict) else vars(held) if _rate_holder(held) and hasattr(held, "__dict__") else {}
    keys = [steps[-1][1]] if steps else [k for k in list(items)[:MAX_PROBED] if isinstance(k, str)
                                         and k.lower() in LR_NAMES]
    return [(_Items(held, name), k) for k in keys if _is_rate(items.get(k))]


#: How many attributes or string keys :func:`_held_global_rates` follows from a global to the rate's holder.
RATE_DEPTH = 4


def _rate_holder(held):
    """Whether ``held`` is a plain object a rate may be set on: a SimpleNamespace, or an instance of the student's
    class (not a class, a module, a function)."""
    mine = isinstance(held, types.SimpleNamespace) or _student_module(sys.modules.get(type(held).__module__))
    return mine and not isinstance(held, (type, types.ModuleType, types.FunctionType, types.MethodType))


def _rate_attributes(obj, heads):
    """``[(owner, name)]`` of the numbers named as a learning rate (:data:`LR_NAMES`) ``obj`` holds under one of
    ``heads`` (:func:`_rate_heads`): attributes (``self.lr``, ``self.opt.lr``, ``self.layers[0].learning_rate``); then
    keys of a dict attribute, owner its holder's :class:`_Items` (``self.config['learning_rate']``, CS231n's optim
    config; ``self.configs['W']['lr']``, tester13 H1); then class attributes no instance's shadows, owner the class
    (``class Layer: lr = 0.1``, ``self.opt.lr`` of ``class Opt``, a nested ``self.Opt.lr``, a global ``Opt.lr`` of
    ``heads``: tester12 M2)."""
    values, attrs, items = {(): obj, **dict(walk(obj))}, [], []
    classes, mine = [h for h in heads if isinstance(h, tuple)], _fields(obj)
    for h in [h for h in heads if isinstance(h, str) and h not in mine]:
        if h.lower() in LR_NAMES and (c := _rate_class(type(obj), h)) is not None:
            classes.append((c, h))  # self.lr
        elif isinstance(v := inspect.getattr_static(type(obj), h, None), type):  # self.Opt.lr
            classes += [(c, k) for k in dir(v) if k.lower() in LR_NAMES and (c := _rate_class(v, k)) is not None]
    for p, v in values.items():
        if not p or p[0][1] not in heads:
            continue
        if _is_helper(v) or _is_layer(v):  # self.opt.lr, self.layers[0].lr: an object's class holds it
            f = _fields(v)
            classes += [(c, k) for k in dir(type(v)) if k.lower() in LR_NAMES and k not in f
                        and (c := _rate_class(type(v), k)) is not None]
        if not (isinstance(p[-1][1], str) and p[-1][1].lower() in LR_NAMES and _is_rate(v)):
            continue
        if p[-1][0] == ".":
            attrs += [(values[p[:-1]], p[-1][1])] if p[:-1] in values else []
        elif isinstance(values.get(p[:-1]), dict):
            j = max(i for i, (sep, _) in enumerate(p) if sep == ".")
            if p[:j] in values and all(sep == "[" and isinstance(k, str) for sep, k in p[j + 1:]):
                items.append((_Items(values[p[:j]]), p[j][1] + "".join(f"[{k!r}]" for _, k in p[j + 1:])))
    return attrs + items + list({(id(c), k): (c, k) for c, k in classes}.values())


@contextlib.contextmanager
def _rate_set(obj, param, attrs, rate):
    """The keyword arguments that give ``rate`` to a backward of rate parameter ``param``, with each rate attribute
    ``(owner, name)`` of ``attrs`` set to it for the block and put back after."""
    kept = [(o, k, getattr(o, k)) for o, k in attrs]
    for o, k, _ in kept:
        setattr(o, k, rate)
    try:
        yield {param: rate} if param else {}
    finally:
        for o, k, v in kept:
            setattr(o, k, v)


def _sgd_weights(obj):
    """``{dotted name: (owner, attribute)}`` of the float arrays in attributes of ``obj`` and of its sub-layers and
    plain objects (:func:`sublayers`): ``W``, ``l1.W``, ``W.data`` (a Parameter-like
    object)."""
    out = {}
    for prefix, o in [("", obj), *_sgd_holders(obj)]:
        for k, v in list(_fields(o).items())[:MAX_PROBED]:
            if _float_array(v) and isinstance(k, str):
                out[f"{prefix}.{k}" if prefix else k] = (o, k)
        out.update({f"{prefix}.{k}" if prefix else k: (_Items(o), k) for k in _sgd_items(o)})
    return out


def _sgd_holders(obj):
    """:func:`sublayers` of ``obj``, and the plain objects beneath it that hold float arrays only in their dict or
    list attributes (``layers.0`` of ``self.layers[0].params['W']``, a Dense without backward before its first
    forward: session 14, finding 2): ``[(dotted name, object)]``, where a self-stepping backward's weights are."""
    subs = sublayers(obj)
    seen = {id(obj), *(id(v) for _, v in subs)}
    walked = walk(obj, lambda p, v: not isinstance(getattr(v, "params", None), dict))
    return subs + [(_label(p, dotted=True), v) for p, v in walked
                   if id(v) not in seen and _is_helper(v) and _sgd_items(v)]


def _sgd_items(o):
    """The item names (``params['W']``, ``params[0]``, ``Ws[1]``, ``weights['W']``) of the float arrays held one level
    deep in the dict, list and tuple attributes of ``o`` (:func:`_arrays`, and the manualprop ``params`` dict it leaves
    out): weights a backward may step in place there (tester12 M1)."""
    names = [n for n in _arrays(o) if (ip := _item_path(n)) is not None and len(ip[1]) == 1]
    params = _fields(o).get("params")
    if isinstance(params, dict):
        names += [f"params[{k!r}]" for k, v in list(params.items())[:MAX_PROBED]
                  if _float_array(v) and (type(k) is int or isinstance(k, str) and k.isidentifier())]
    return list(dict.fromkeys(names))


def _sgd_grad_home(o, key):
    """Where the gradient read for item weight ``key`` (:func:`_sgd_items`) of ``o`` (an :class:`_Items`) is put: the
    item of the same key of a container gradcheck looks for (:func:`_grad_candidates`): ``grads['W']`` for
    ``params['W']`` (the manualprop protocol's), ``dparams[0]`` for ``params[0]``, ``dWs[1]`` for ``Ws[1]``;
    the first of those names that is free or holds a container of the same kind, made (empty) when free.
    Returns ``(that container, the key)``, or None when none fits."""
    attr, (k,) = _item_path(key)
    raw = _held(o)
    held, fields = getattr(o, attr), _fields(raw)
    # params[0] (a list): dparams[0], as grads[0] is also a candidate for vel[0] beside it
    mine = ["grads"] if attr == "params" and isinstance(held, MAPPINGS) else []
    for name in mine + [f"d{attr}", f"{attr}_grad"]:
        h = fields.get(name)
        if name not in fields:
            h = {} if isinstance(held, MAPPINGS) else [None] * len(held)
            setattr(raw, name, h)
        if isinstance(held, MAPPINGS) and isinstance(h, dict) or \
                isinstance(h, list) and not isinstance(held, MAPPINGS) and len(h) == len(held):
            return h, k
    return None


def _sgd_grad_name(key):
    return "grad" if key == "data" else f"{key}_grad"


def _sgd_snapshot(obj, names):
    """``{name: (owner, attribute, the array, its copy)}`` of ``names`` (:func:`_sgd_weights`) as they are now."""
    arrays = _sgd_weights(obj)
    return {n: (*arrays[n], getattr(*arrays[n]), getattr(*arrays[n]).copy()) for n in names if n in arrays}


def _sgd_read(before, rate, keep=()):
    """After a backward given ``rate`` that stepped the weights of ``before`` (:func:`_sgd_snapshot`): each gets its step
    over the rate, (before - after) / rate, as its gradient (``W_grad``; ``grad`` beside a Parameter's ``data``), and
    is put back (in place, or its old array bound again). A weight of ``keep`` keeps the gradient backward stores
    beside its step, found wrong (:func:`_sgd_stored_grads`): that one is checked."""
    for n, (o, k, a, kept) in before.items():
        new = getattr(o, k, None)
        if not (isinstance(new, np.ndarray) and new.shape == kept.shape):
            continue
        if not isinstance(o, _Items):
            if n not in keep and _sgd_stored(o, k, kept, new, rate) is None:
                setattr(o, _sgd_grad_name(k), (kept - new) / rate)
        elif (home := _sgd_grad_home(o, k)) is not None:  # grads['W'] for params['W']
            # gradients['dW'] stored beside the step is what the check reads there when the probe found it wrong
            # (keep) or it is the step over the rate; else that step, put in its place too (as _sgd_stored does)
            c, g = next(((c, g) for c, (g, _) in _sgd_student_grads(o, k).items()
                         if c in _sgd_dl_names(o, k) and g.shape == kept.shape), (None, None))
            if c is None and n in keep:  # grads['W'] stored (the home itself), found wrong: checked as it is
                pass
            elif c is None or n not in keep and not _sgd_close(kept - new, rate * g, kept, 1):
                home[0][home[1]] = (kept - new) / rate
                if c is not None:
                    setattr(o, c, home[0][home[1]].copy())
            else:
                home[0][home[1]] = g.copy()
        if new is a:
            a[...] = kept
        else:
            setattr(o, k, a)


def _sgd_moved(before):
    """Of ``before`` (:func:`_sgd_snapshot` of weights not probed: every float attribute), the ones a backward
    stepped: not a step read at the last call (``W_grad`` beside ``W``), nor an array it left as it was with no read
    step beside it (a cache; a weight's step of 0, backward(0), is read once it has one)."""
    homes = {_sgd_grad_name(k) for _, k, _, _ in before.values()}
    return {n: (o, k, a, kept) for n, (o, k, a, kept) in before.items() if k not in homes and not (
        getattr(o, k, None) is a and np.array_equal(a, kept) and not _float_array(getattr(o, _sgd_grad_name(k), None)))}


def _sgd_stored(o, k, kept, new, rate):
    """The gradient attribute of weight ``k`` of ``o`` that backward stores beside its step (``self.dW = ...; self.W
    -= lr * self.dW``, an NNFS optimizer's ``update_params(self)`` called in backward: ``dweights``), or None: that one
    is checked, as the step read would be a second gradient of W (tester13 M1). A step that is not the rate times it
    (``self.b -= lr * self.db * 2``) is a bug the stored gradient does not show: the step over the rate is put in its
    place, so the check FAILs naming it."""
    c = next((c for c, (g, _) in _sgd_student_grads(o, k).items() if c.isidentifier() and g.shape == kept.shape),
             None)
    if c is not None and not _sgd_close(kept - new, rate * getattr(o, c), kept, 1):
        setattr(o, c, (kept - new) / rate)
    return c


def _sgd_close(got, want, kept, scale):
    """Whether step ``got`` is ``want`` up to the round-off of forming ``kept - step`` and subtracting back."""
    eps = np.finfo(np.result_type(kept.dtype, np.float32)).eps
    return bool(np.all(np.abs(got - want) <= 8 * eps * ((scale + 1) * np.abs(kept) + np.abs(got) + np.abs(want))))


#: What each probe of :func:`_sgd_probe` saw when the step was not a plain one, and what may cause it.
SGD_SEEN = {
    "rate": "with the rate doubled ({r2}) {w} did not move twice as far as with {r} (nor as far, nor four times: a "
            "rate forgotten or applied twice would be checked): a step not proportional to the rate (weight decay "
            "outside the rate, a rate schedule?)",
    "dY": "with dY scaled by {s:g} {w} did not move {s:g} times as far: a step not proportional to dY (gradient "
          "clipping, Adam's or RMSprop's normalised step, weight decay?)",
    "memory": "called a second time with the same dY and {w} put back, {w} moved differently: backward keeps state "
              "across calls (momentum, Adam's moments, an EMA, a step counter or a rate schedule?)",
}


def _sgd_call(obj, bwd, param, attrs, dy, rate):
    _step("backward")
    with _rate_set(obj, param, attrs, rate) as kws:
        return bwd(obj, dy, **kws)


def _sgd_measure(obj, objs, bwd, param, attrs, dy, names, rate, scale=1.0, again=False):
    """The step of each of ``names`` (:func:`_sgd_snapshot`) in a backward given ``dy * scale`` and ``rate``, everything
    put back after; ``again``: the step of a second call after the first, with those arrays (and only they) put
    back in between, as :func:`_sgd_read` puts them back. Returns ``({name: step}, {name: the array before},
    what the first call returned)``."""
    with _all_undone(objs):
        before = _sgd_snapshot(obj, names)
        ret = _sgd_call(obj, bwd, param, attrs, dy * scale, rate)
        ret = np.array(ret, dtype=np.float64) if isinstance(ret, np.ndarray) else None
        if again:
            for o, k, a, kept in before.values():
                a[...] = kept
                setattr(o, k, a)
            _sgd_call(obj, bwd, param, attrs, dy * scale, rate)
        return {n: kept - getattr(o, k) for n, (o, k, _, kept) in before.items()}, \
            {n: kept for n, (_, _, _, kept) in before.items()}, ret


def _sgd_probe(obj, bwd, param, attrs, inputs, kw):
    """The weights a backward that steps them itself moves: ``([dotted name], dx_after_step)``, the names
    (:func:`_sgd_weights`) of the arrays forward reads that a backward given :data:`LR_PROBE` moves, everything put
    back after; ``(None, False)`` when it cannot be told (forward is not deterministic, or raised: the check says
    so). ``dx_after_step``: the dX it returns differs from the one given a rate of 0 (which is nonzero): dX computed
    with the weights after the step (:func:`_sgd_dx_after_step`). ``bwd``: the class's backward, its rate parameter
    ``param`` or rate attributes ``attrs`` (:func:`_rate_set`).

    Raises
    ------
    AdapterError
        The step is not plain gradient descent: not proportional to the rate or to dY, or different on a second
        call (an optimizer inside backward): its step over the rate is not the gradient.
    """
    children = dict(_sgd_holders(obj))
    objs = [obj, *children.values()]
    names = list(_sgd_weights(obj))
    try:
        used, _ = _used_arrays(obj, inputs, kw, names, children)
        if used is None:
            return None, False
        with _all_undone(objs) as rewind:
            y = _run(obj, rewind, inputs, kw)
            dy = probe_rng(0).standard_normal(y.shape)
            r = LR_PROBE
            base, kept, dx = _sgd_measure(obj, objs, bwd, param, attrs, dy, used, r)
            moved = [n for n in used if np.any(base[n] != 0)]
            rate = _sgd_measure(obj, objs, bwd, param, attrs, dy, moved, 2 * r)[0]
            scaled = _sgd_measure(obj, objs, bwd, param, attrs, dy, moved, r, SGD_DY_SCALE)[0]
            twice = _sgd_measure(obj, objs, bwd, param, attrs, dy, moved, r, again=True)[0]
            after = bool(moved) and _sgd_dx_after_step(obj, objs, bwd, param, attrs, dy, dx)
    except _ForwardFailed:
        return None, False
    for n in moved:
        b, k = base[n], kept[n]
        seen = ("rate" if not any(_sgd_close(rate[n], f * b, k, f) for f in (2, 1, 4)) else
                "dY" if not _sgd_close(scaled[n], SGD_DY_SCALE * b, k, SGD_DY_SCALE) else
                "memory" if not _sgd_close(twice[n], b, k, 1) else None)
        if seen:
            decay = _sgd_decay(seen, b, rate[n], scaled[n], k)
            exc = NotPlainStepError(_sgd_not_plain(obj, bwd, param, attrs, n, seen, decay))
            exc.weights = moved
            raise exc
    return moved, after


def _sgd_dx_after_step(obj, objs, bwd, param, attrs, dy, dx):
    """Whether ``dx`` (what backward returned given :data:`LR_PROBE`) differs from the nonzero dX it returns given a
    rate of 0: dX computed with the weights after the step (a dX computed before is the same at any rate, one
    multiplied by the rate is 0 at 0). False when backward returned no array, or raised at rate 0."""
    if dx is None:
        return False
    try:
        dx0 = _sgd_measure(obj, objs, bwd, param, attrs, dy, [], 0.0)[2]
    except Exception:  # noqa: BLE001 - the student's backward at rate 0: nothing to tell
        return False
    return dx0 is not None and dx0.shape == dx.shape and bool(np.any(dx0 != 0)) and \
        bool(np.all(np.isfinite(dx0))) and not close(dx, dx0, 1e-9, 0.0)


def _sgd_decay(seen, base, rate, scaled, kept):
    """The coefficient λ of a weight-decay term λ·W in a step that is otherwise plain (``seen`` "dY": the rate times
    dW + λ·W, an L2 penalty's gradient added; "rate": dW times the rate, plus λ·W), when what is not proportional
    is λ times the weight ``kept`` in every entry (to 1e-6); else None."""
    r, s = LR_PROBE, SGD_DY_SCALE
    extra = {"dY": lambda: (scaled - s * base) / (r * (1 - s)), "rate": lambda: 2 * base - rate}.get(seen)
    if extra is None or not np.all(kept != 0):
        return None
    lam = extra() / kept
    return float(np.median(lam)) if close(lam, np.full_like(lam, np.median(lam)), 1e-6, 0.0) and \
        np.median(lam) != 0 else None


def _sgd_not_plain(obj, bwd, param, attrs, name, seen, decay=None):
    cls = type(obj).__name__
    args = ", ".join(list(_params(bwd) or {})[1:])
    given = f"{param}={LR_PROBE}" if param else \
        f"{', '.join(sorted({k for _, k in attrs}))} set to {LR_PROBE}"
    what = SGD_SEEN[seen].format(r=LR_PROBE, r2=2 * LR_PROBE, s=SGD_DY_SCALE, w=name)
    if decay is not None:  # the rest is exactly λ·W in every entry: named
        where = "(an L2 penalty's gradient) in the gradient" if seen == "dY" else "outside the rate"
        what += (f"; the part that is not is {decay:.6g} * {name.rpartition('.')[2]} in every entry: a weight-decay "
                 f"term {where}, so the step is not the gradient of the loss gradcheck differentiates")
    return (f"{cls}.backward({args}) updates the weights itself, and its step is not a plain gradient-descent step "
            f"(W -= {param or 'lr'} * dW): {what}. gradcheck reads a weight's gradient as its step divided by the "
            f"rate ({given}), which holds only for that step, so {cls} is not checkable as written and no gradient "
            f"was compared. Keep the optimizer out of backward: have backward return or store the gradient "
            f"(self.{_sgd_home_name(name)} = dW, or self.dW) and step the weights in another method "
            f"(update()/step()), or check the layer with plain gradient descent in backward.")


def _rate_label(o, k, paths):
    """Rate ``k`` of owner ``o`` (:func:`_rate_attributes`) as the header names it: ``self.opt.lr``,
    ``self.config['lr']``, ``Opt.lr (a class attribute)``, ``config.lr (a module's global)``; ``paths``: ``{id: walk
    path}`` of the layer's objects."""
    if isinstance(o, type):
        return f"{o.__qualname__}.{k} (a class attribute)"
    if isinstance(o, types.ModuleType):
        return f"{o.__name__}.{k} (a module's global)"
    glob, o = object.__getattribute__(o, "_gradcheck_glob") if isinstance(o, _Items) else None, _held(o)
    if glob:
        return f"{glob}[{k!r}] (a module's global)" if isinstance(o, dict) else f"{glob}.{k} (a module's global)"
    return "self." + (_label(paths[id(o)], dotted=True) + "." if id(o) in paths else "") + k


def _sgd_header(obj, bwd, param, heads, weights):
    """The check header's words for a layer whose backward steps its weights (``weights``: :func:`_sgd_probe`'s, None
    when it was not probed)."""
    args = ", ".join(list(_params(bwd) or {})[1:])
    r = LR_PROBE
    if param:
        given = f"it is called with {param}={r}"
    else:
        paths = {id(v): p for p, v in walk(obj)}
        owners = sorted({_rate_label(o, k, paths) for o, k in _rate_attributes(obj, heads)},
                        key=lambda t: not t.startswith("self."))
        given = f"it steps with the rate in {', '.join(owners)}, set to {r} for each call and put back"
    if weights is not None and not weights:  # Tanh's backward(output_gradient, learning_rate): no weight moved
        return (f"; backward({args}) takes a learning rate ({given}), and the layer has no weights to step (the "
                "probe moved none): only the returned gradient is checked")
    probed = "" if weights is None else \
        f"; probed: proportional to the rate and to dY, the same on a second call, moving {', '.join(weights)}"
    return (f"; backward({args}) updates the weights itself: {given}, each weight's step (before - after, a plain "
            f"gradient-descent step{probed}) divided by {r} is read as its gradient ({_sgd_read_names(weights)}; a "
            "gradient backward also stores beside the step, self.dW, grads['W'] or gradients['dW'], is checked in its "
            "place and must agree with the step), and the weight is put back")


def _sgd_read_names(weights):
    """Where :func:`_sgd_read` puts each read step, for the header: ``W_grad, b_grad``, ``l1.W_grad``, ``W.grad``,
    ``grads['W']`` for ``params['W']`` (tester13 L1); ``<weight>_grad`` when the weights were not probed."""
    return ", ".join(map(_sgd_home_name, weights)) if weights else "<weight>_grad"


def _sgd_home_name(w):
    """Where :func:`_sgd_read` puts the step read for weight ``w`` (the home :func:`_sgd_grad_home` takes when free),
    as the header and the advice to the student name it: ``W_grad``, ``l1.W_grad``, ``W.grad``, ``grads['W']`` for
    ``params['W']``, ``dWs[1]`` for ``Ws[1]``."""
    head, _, key = w.rpartition(".")
    ip = _item_path(key)
    name = _sgd_grad_name(key) if ip is None else ("grads" if ip[0] == "params" and isinstance(
        ip[1][0], str) else f"d{ip[0]}") + "".join(f"[{k!r}]" for k in ip[1])
    return f"{head}.{name}" if head else name


#: The relative gap between a gradient along a direction and the central difference along it below which the
#: gradient is said right (when the stored gradient and the step differ: which one is wrong).
SGD_RIGHT = 1e-5


def _sgd_stored_grads(obj, bwd, param, attrs, inputs, kw, moved):
    """``{weight: (where, wrong)}`` of the weights of ``moved`` (:func:`_sgd_probe`) whose gradient backward also
    stores (``self.dW``, ``self.grads['W']``: where, as the student wrote it) and that it steps by other than the
    rate times it: one of the two is wrong, and a wrong stored gradient is a wrong number an optimizer or a reader
    takes (session 14, finding 1). ``wrong``: ``["stored"]``, ``["step"]`` or both, measured against a central
    difference of forward (:func:`_central_gaps`); the one further from it when neither is within
    :data:`SGD_RIGHT`. Everything put back; {} when forward or backward raised (the check says so)."""
    weights, objs, found = _sgd_weights(obj), [obj, *dict(_sgd_holders(obj)).values()], {}
    try:
        with _all_undone(objs) as rewind:
            y = _run(obj, rewind, inputs, kw)
            before = _sgd_snapshot(obj, moved)
            held = {n: _sgd_student_grads(o, k) for n, (o, k, _, _) in before.items()}
            _sgd_call(obj, bwd, param, attrs, probe_rng(7).standard_normal(y.shape), LR_PROBE)
            for n, (o, k, _, kept) in before.items():
                step = kept - getattr(o, k)
                got = next(((c, g) for c, (g, _) in _sgd_student_grads(o, k).items() if g.shape == kept.shape and not (
                    c in held[n] and held[n][c][0] is g and np.array_equal(held[n][c][1], g))), None)
                if got is not None and not _sgd_close(step, LR_PROBE * got[1], kept, 1):
                    found[n] = (got[0], got[1].copy(), step / LR_PROBE, o)
    except Exception:  # noqa: BLE001 - the student's forward or backward: the check calls them again and says so
        return {}
    out, paths = {}, {id(v): p for p, v in walk(obj)}
    for n, (c, g, s, o) in found.items():
        d, dots = _central_gaps(obj, inputs, kw, getattr(*weights[n]), {"stored": g, "step": s})
        gaps = {k: float(relative_error(v, d, 1e-300)) for k, v in dots.items()}
        out[n] = (_rate_label(o, c, paths), [k for k in gaps if gaps[k] > SGD_RIGHT] or [max(gaps, key=gaps.get)])
    return out


def _sgd_student_grads(o, k):
    """``{name: (array, its copy)}`` of the float arrays held now under the names weight ``k`` of ``o`` may have its
    gradient under (:func:`_grad_candidates`), but the one gradcheck puts a read step in (``W_grad``)."""
    raw = _held(o)
    own = _sgd_grad_name(k) if not isinstance(o, _Items) else None
    out = {}
    for c in dict.fromkeys(_grad_candidates(k) + _sgd_dl_names(o, k)):
        g = getattr(_Items(raw), c, None) if c != own else None
        if isinstance(g, np.ndarray) and g.dtype.kind == "f":
            out[c] = (g, g.copy())
    return out


def _sgd_dl_names(o, k):
    """The names deeplearning.ai gives the gradient of item weight ``k`` of ``o`` (an :class:`_Items`), each of
    :data:`GRAD_DICTS` with ``d`` + its key: ``gradients['dW']`` for ``params['W']`` (as :func:`_grads_dict` reads
    them), which :func:`_grad_candidates` leaves out; [] for another weight. Never where :func:`_sgd_read` puts a
    read step (its key is the weight's own)."""
    ip = _item_path(k) if isinstance(o, _Items) else None
    if not (ip and len(ip[1]) == 1 and isinstance(ip[1][0], str)):
        return []
    return [f"{d}[{'d' + ip[1][0]!r}]" for d in GRAD_DICTS]


def _sgd_stored_text(stored):
    """The header's words and the FAIL line's (``read_from``: ``["dW: ..."]``) for :func:`_sgd_stored_grads`'s
    ``stored``: which of a stored gradient and a step that differ the check reads (the one found wrong)."""
    notes, read = [], []
    for n, (where, wrong) in stored.items():
        ip = _item_path(n.rpartition(".")[2])
        w = str(ip[1][0]) if ip and ip[0] == "params" and isinstance(ip[1][0], str) and "." not in n else n
        if "stored" in wrong:
            read.append(f"d{w}: {where} as backward stores it, which is wrong; its step of {w} is " + (
                "wrong too" if "step" in wrong else "right (it matches a central difference of forward)"))
        else:
            read.append(f"d{w}: {w}'s step over the rate, which is wrong; {where} as backward stores it is right, "
                        "and the step is not the rate times it")
        notes.append(f"; backward stores {where} and steps {w} by other than the rate times it: the check reads "
                     + (f"the stored {where}" if "stored" in wrong else f"{w}'s step over the rate in its place")
                     + ", the one further from a central difference of forward (both must be right: an optimizer or a reader "
                     f"takes {where} as {w}'s gradient)")
    return "".join(notes), read


@contextlib.contextmanager
def _switch_kept(obj, keyword, when=True):
    """A training switch outside forward's arguments (``keyword``: :func:`mode_keyword`'s ``("self.training", False,
    True)``, ``self.bn_param['mode']``, ``global TRAIN``) put back
    after the block to the value it had (through ``train()``/``eval()`` where forward's class has them, as the
    checker set it): gradcheck leaves the student's object in the mode it found it. ``when`` False: nothing done."""
    name = _set_switches(keyword) if when else None
    kept = _switch_value(obj.forward, name) if name else _MISSING_SWITCH
    try:
        yield
    finally:
        if kept is not _MISSING_SWITCH:
            if name == "self.training" and isinstance(kept, bool) and _mode_methods(obj):
                obj.train() if kept else obj.eval()
            _switch_value(obj.forward, name, kept)


@contextlib.contextmanager
def _in_mode(obj, training):
    """Forward's keywords for mode ``training`` (:func:`_training_kw`), a switch outside its arguments
    (``self.training``, ``self.bn_param['mode']``) set for the block and put back after (:func:`_switch_kept`)."""
    mk = mode_keyword(obj.forward)
    with _switch_kept(obj, mk):
        yield _training_kw(obj.forward, training, mk)


def _set_switches(keyword):
    """The names (``", "``-joined) of :func:`mode_keyword`'s switches that are set rather than passed (``self.``,
    ``global ``, ``env ``), or None."""
    names = [n for n in (keyword[0].split(", ") if keyword else ()) if n.startswith(SET_SWITCHES)]
    return ", ".join(names) or None


def _mode_keyword_info(obj, mk, unsafe, info):
    """:func:`_adapt`'s ``info`` entries of a forward's mode keyword ``mk`` (:func:`mode_keyword`): its name with
    eval and training values, each switch's, the words forward compares a mode string with, whether it is a plain
    switch, and an unsafe flag's (``forward(X, return_cache=True)`` gives a tuple: that value cannot be checked)."""
    info["mode_keyword"] = [mk[0], _value_text(mk[1]), _value_text(mk[2])]
    if isinstance(mk[1], tuple):  # several switches (_reached_keyword): name, eval and training value of each
        info["switches"] = [t for n, f, o in zip(mk[0].split(", "), *mk[1:]) for t in (n, _value_text(f),
                                                                                         _value_text(o))]
    if mk[0] in MODE_STRINGS + WORDED_MODE_STRINGS:  # the words forward compares mode with: both branches reached?
        info["mode_words"] = [repr(w) for w in mode_words(obj.forward, mk[0])]
    info["plain_switch"] = _plain(mk)  # F1: labelled self.noisy=False / True, not eval / training
    if unsafe:
        info["unsafe_flag"] = [mk[0], _value_text(mk[1]), _value_text(mk[2]), unsafe]


def _adapt(obj, inputs=None, training=True):
    """Present ``obj`` (what :func:`build` returned) as a manualprop layer: ``(layer, info)``.

    ``inputs``: probe inputs (without them, the gradient attributes the object has now); ``training``
    for a probe forward that takes it. A first forward on them is kept where it creates parameters
    (:func:`_lazy_build`). Parameters of sub-layers (:func:`sublayers`) have dotted names (``l1.W``).
    ``info``: ``protocol`` (``manualprop``, ``attribute``, ``seed``, ``plain``, ``cs231n``), header
    ``text``, ``unchecked`` (weights without a gradient), ``buffers`` (arrays forward uses without a gradient
    that are private or forward writes, in a layer that sets other gradients: :func:`_split_buffers`), ``unseen`` (arrays forward uses, not in
    ``params``), ``forward_training``, ``backward_ran`` (False: the probe's backward raised, so which
    gradients it sets is unknown). A forward with several outputs is presented as one (:class:`Outputs`).
    AdapterError: two gradients for one weight; UnreadableError: a pair's result that cannot be read.
    """
    kinks = _source_facts(obj)
    if isinstance(obj, FunctionPair):
        return obj, {**_pair_info(obj, inputs), **kinks}
    if not all(callable(getattr(obj, m, None)) for m in ("forward", "backward")):
        return obj, {"protocol": "none", "text": "no forward/backward"}  # the caller says what is missing
    mk = mode_keyword(obj.forward)
    tr = _takes_training(obj.forward) and mk is None  # with switches to set: wrapped (Y14)
    unsafe = _unsafe_flag(obj, inputs, mk)
    kw = ModeKw(obj.forward, training and not unsafe, mk)  # an unsafe flag's probe: its default
    kws = [kw] + ([ModeKw(obj.forward, False, mk)] if (kw or _set_switches(mk)) and training else [])  # eval reads running stats
    info = {"forward_training": tr or mk is not None, "unchecked": [], "unseen": [], **kinks}
    if mk is not None:  # the header says forward(X, train=False), not training=False
        _mode_keyword_info(obj, mk, unsafe, info)
    elif (flag := unread_flag(obj.forward)) is not None:  # forward(X, use_noise=False): only its default runs
        info["unread_flag"] = [flag[0], _value_text(flag[1])]
    elif (star := _unread_varargs(obj.forward, inputs)) is not None:  # forward(x, *args): args[0] a switch
        info["unread_flag"] = [star, "()"]
    if unset := _unset_switches(obj.forward, mk):
        info["unset_switches"] = unset
    if toggles := config_toggle_texts(obj.forward):
        info["config_toggles"] = toggles
    variants = switch_variants(obj.forward, mk)  # every combination of the booleans, every string value
    if variants and (bad := _unsafe_variants(obj, inputs, mk, variants)):  # return_cache=True: a tuple
        info["unset_switches"], info["variants_unsafe"], variants = [*unset, *bad], True, []
    if variants:
        tr = False  # set_variant sets the switches of an Adapted: a manualprop layer is wrapped too (L1)
        info["switch_variants"] = [f"{off}|{on}" for _, off, on in variants]
        if labels := switch_labels(obj.forward, mk):
            info["mode_labels"] = labels
    # forward(x) -> (out, cache), backward(dout, cache): a CS231n pair of its methods
    given = _try(class_input_backward, obj, inputs, info)  # CS189's backward(Z, dY): forward's input handed back
    cached = _try(class_cache, obj, inputs, ModeKw(obj.forward, False, mk)) if inputs else None
    outs = _try(class_outputs, obj, inputs) if inputs else None  # forward(x, h, c) -> (h, c), backward(dh, dc)
    tail = (f"; {outs.text()}" if outs else "") + (f"; {given}" if given else "")
    if cached is not None:
        tail += (f"; {CLASS_CACHE}: the cache forward returned is passed to backward, as for a CS231n function "
                 "pair") + (f"; {cached.outputs.text()}"
                                                                         if cached.outputs else "")
    built = (_try(_lazy_build, obj, inputs, ModeKw(obj.forward, False, mk)) or []) if inputs is not None else []
    built = built or list(getattr(type(obj), "_gradcheck_built", None) or [])  # made by stored_results' probe
    arrays, children = _arrays(obj), dict(sublayers(obj))
    if isinstance(getattr(obj, "params", None), dict):
        # params = {"alpha": 0.25}: number parameters (a 0-d buffer each, set in params), as self.alpha is
        numbers = [k for k, v in list(obj.params.items())[:MAX_PROBED * 4] if isinstance(k, str) and _is_number(v)]
        shown = "".join(f"; params[{k!r}] a number, set in params" for k in numbers)
        info["unseen"], info["buffers"] = _split_buffers(_unseen(obj, inputs, kws, arrays, children))  # _pe
        unseen = _buffers_by_behaviour(obj, inputs, kws, info, {}, children, "unseen")  # running_mean: a buffer
        buffers = info["buffers"]
        weights = {k: v for k, v in obj.params.items() if isinstance(v, np.ndarray)}
        if _returned_grads(obj, inputs, kws[0], weights, info, keys=True) is not None:  # (dX, dW, db)
            info.update(text=info["text"] + tail, unseen=unseen, buffers=buffers)
            return (obj if tr else _wrap(obj, {}, own=True)), info
        gd, d = (_try(_grads_dict, obj, inputs, kws[0]) if inputs is not None else None) or ("grads", "")
        info.update(protocol="manualprop", text=f"manualprop (params/{gd} dicts{shown}" + (
            f"; {gd}['dW'] read for params['W'], as deeplearning.ai names them" if d else "") + ")"
                    + _built(built, obj.params) + tail, unseen=unseen, buffers=buffers)
        if numbers or gd != "grads" or d:  # self.gradients = {'W': ...} beside self.params: read as grads
            return _wrap(obj, {k: f"{gd}[{d + k!r}]" for k in obj.params}), info
        return (obj if tr else _wrap(obj, {}, own=True)), info  # a wrapper passes training= as train= etc.
    layer, info = _attribute_style(obj, inputs, kws, info, (arrays, children, built, tail))
    info["attributes"] = [*arrays, *_float_numbers(obj), *_sub_candidates(children)[0]]  # --constants' (corpus38 F6)
    return layer, info


def _grads_dict(obj, inputs, kw):
    """``(name, "d" or "")`` of the attribute holding the gradients of ``obj.params``, key for key (``grads``, else
    the first of :data:`GRAD_DICTS` that is a non-empty dict after one forward and backward), and ``"d"`` when that
    backward fills it with ``['dW']`` for each ``params['W']`` (deeplearning.ai's names, T14) and no key of
    ``params`` itself (state restored after)."""
    keys, own = [k for k in obj.params if isinstance(k, str)], isinstance(_fields(obj).get("grads"), dict)
    with _all_undone([obj]) as rewind:
        _probe_backward(obj, _run(obj, rewind, inputs, kw))
        d = _fields(obj)
        gd = "grads" if own else next((n for n in GRAD_DICTS if isinstance(d.get(n), dict) and d[n]), "grads")
        g = d.get(gd)
        return gd, "d" if isinstance(g, dict) and keys and all(
            isinstance(g.get("d" + k), np.ndarray) and k not in g for k in keys) else ""


#: Why the probe could not measure which arrays forward uses, by :func:`_probe_uses`' outcome.
UNMEASURED = {"forward": "on the probe input forward ",  # + what _ForwardFailed says
              "probe": "gradcheck's probe could not run on this object: ",  # + the exception
              "random": "forward gave two different outputs for the same input (it draws from a generator gradcheck "
                        "cannot rewind, e.g. np.random.default_rng() made anew in forward)"}


def _probe_uses(obj, inputs, kws, names, children):
    """``(arrays forward uses, Y, why)`` (:func:`_used_arrays`) in the modes of the forward keywords ``kws``
    (training, then eval: running statistics are read in eval mode alone; Y is the first mode's); ``why`` a
    key of :data:`UNMEASURED` when the first probe could not tell (the arrays are then None), followed by ``:``
    and what happened for ``forward`` and ``probe``; "" when it could or had no input."""
    if inputs is None:
        return None, None, ""
    try:
        res = _used_arrays(obj, inputs, kws[0], names, children)
    except AdapterError:
        raise
    except _ForwardFailed as exc:
        return None, None, f"forward:{exc}"
    except Exception as exc:  # noqa: BLE001 - the probe's own failure (an object it cannot undo), not forward's
        return None, None, f"probe:{type(exc).__name__}: {str(exc)[:120]}"
    if res is None or res[0] is None:
        return None, None, "random"
    used, y = res
    for kw in kws[1:]:
        more = (_try(_used_arrays, obj, inputs, kw, [n for n in names if n not in used], children) or [None])[0]
        used += [n for n in names if n in (more or [])]
    return [n for n in names if n in used], y, ""


def _attribute_style(obj, inputs, kw, info, found):
    """:func:`adapt` of a class without a ``params`` dict: its weights (attributes, container items, sub-layers'),
    paired with their gradients by name or by structure (:func:`_grad_attrs`). ``kw``: forward's keywords of
    each mode probed (:func:`_probe_uses`); ``found``: ``(arrays, children, parameters the first forward built,
    the header's tail)``."""
    arrays, children, built, tail = found
    kws, kw = kw, kw[0]
    numbers = _float_numbers(obj)  # self.alpha = 0.25: a parameter if backward sets self.dalpha
    cand, sub_pairs, sub_numbers = _sub_candidates(children)
    every = list(arrays) + list(numbers) + cand
    used, y, why = _probe_uses(obj, inputs, kws, every, children)
    if used is not None and (copies := _copied_params(obj, children, arrays, used)):  # params += [p.copy() ...]
        raise AdapterError(_copies_text(type(obj).__name__, copies))
    weights = {w: arrays[w] for w in used or () if w in arrays}  # backward(dY) -> (dX, dW, db): read so
    if used is not None and (pairs := _returned_grads(obj, inputs, kw, weights, info)) is not None:
        info["buffers"], info["text"] = [w for w in used if w not in pairs], info["text"] + tail
        return _wrap(obj, pairs), info
    unsure, placed = {}, []
    if used is None and why != "random":  # no probe: the gradient attributes present now
        pairs = {w: g.format(w) for w in arrays for g in GRAD_NAMES if g.format(w) in arrays}
    else:  # a random forward: what one backward sets, every array a candidate
        pairs = _try(_grad_attrs, obj, inputs, kw, every if used is None else used, children)
        info["backward_ran"], (pairs, unsure, placed) = pairs is not None, pairs or ({}, {}, [])  # raised: unknown
    if used is not None and inputs is not None:  # forward ignores b, backward writes db: checked (NoBias)
        pairs.update(_idle_pairs(obj, inputs, kw, [w for w in every if w not in used and w not in pairs and w not in
                                                   numbers and w not in sub_numbers], children, info, pairs))
    pairs = _outside_params(obj, inputs, kws, children, _in_order({**pairs, **sub_pairs}, children), info)
    pairs = {**pairs, **(_try(_integer_params, obj, inputs, kw, pairs) or {} if inputs is not None else {})}  # int W: refused
    info["unchecked"] = [w for w in (used or []) if w not in pairs and not _hyperparameter(
        numbers[w] if w in numbers else getattr(*_owner(obj, children, w), None))]  # a float: a hyperparameter
    if unsure:
        info["ambiguous"] = [f"{w} {tuple(np.shape(getattr(*_owner(obj, children, w))))}: {', '.join(gs)}"
                             for w, gs in unsure.items()]
    pairs, tied, views, named = _one_per_memory(obj, children, pairs, info)  # enc.W is dec.W; self.Wx = self.W[:D]
    if not pairs:  # no stored gradient: a 0-d rate or eps not named like a weight is no parameter (M4's dropout rate);
        info["unchecked"] = _buffers_by_behaviour(obj, inputs, kws, info, pairs, children, unchecked=[  # state forward
            w for w in info["unchecked"] if not (_number_like(getattr(*_owner(obj, children, w), None)) and  # writes,
                                                 _buffer_name(w))])  # self.mean of an EMA: a buffer, no parameter
    if pairs:  # the layer sets gradients: a missing one is a wrong result, unless the array is a buffer
        info["unchecked"], info["buffers"] = _split_buffers([w for w in info["unchecked"] if w not in unsure])
        info["unchecked"] = _buffers_by_behaviour(obj, inputs, kws, info, pairs, children)  # Z15: bg, wts: buffers
        info["unchecked"] += [w for w in unsure if w in (used or [])]  # no sure gradient: not a buffer
        dicts = [w for w in info["unchecked"] if isinstance(getattr(_owner(obj, children, w)[0], "params", None), dict)]
        info["unchecked"], info["unseen"] = [w for w in info["unchecked"] if w not in dicts], dicts  # not in params
    info.update(_attribute_text(obj, inputs, y, (arrays, numbers, children, pairs, tied, kw), info, why))
    lead = ": " if pairs and all("." in w for w in pairs) else "; sub-layers "
    info["text"] += (_children_text(children, pairs, lead, info["unchecked"], {m: rep for rep, ms in tied.items()
                                                                               for m, _, _ in ms},
                                    info.get("collected"), [str(z).split(": ")[0] for z in info.get("idle_zero") or []])
                     + _built(built, pairs) + _alias_text(tied, views, named, pairs)
                     + "".join(f"; {t}" for t in info.pop("listed", [])) + tail)
    if placed := [f"{pairs[w]} ({w})" for w in placed if w in pairs]:
        info["text"] += (f"; found by place and shape, not by name (written by backward, with its weight's key or "
                         f"name in a parallel container, or named as a gradient): {', '.join(placed)}")
    known = [getattr(*_owner(obj, children, w), None) for w in every]
    if pairs and (zeroes := _try(_zeroing, obj)):  # p.grad += ...: PyTorch's contract; numpy-ml's flush
        info["text"] += ZEROING_TEXT[zeroes]
    if inputs is not None and (hidden := _try(_hidden, obj, inputs, kw, [a for a in known if isinstance(a, np.ndarray)],
                                              not (pairs or info["unchecked"] or info.get("buffers")))):  # ClassLevel.W, W_glob
        info["hidden"] = hidden
        info["text"] += f"; forward reads arrays not read as weights: {', '.join(h.split(' (')[0] for h in hidden)}"
    if inputs is not None and pairs and (rebound := _try(_rebound_grads, obj, inputs, kw)):  # self.grads[0] = dW
        info["rebound"] = rebound
    if inputs is not None and not pairs and (made := _try(_recreated, obj, inputs, kw)):  # self.W = rng...() in forward
        info["recreated"] = made
    if inputs is not None and not pairs and (lists := _try(_list_weights, obj, inputs, kw)):  # self.W = [[0.1, ...]]
        info["lists"] = lists
    if why == "random" and (state := _try(_state_between_calls, obj, inputs, kw)):  # a call counter (tester14 #4)
        info["state_changed"] = state
    if why:
        names = [w for w in every if w not in pairs and w not in numbers]
        said = (f"forward changes {', '.join('self.' + k for k in info['state_changed'])} between calls, so two calls "
                "on the same input differ") if info.get("state_changed") else ""
        info["text"] += (f" (found without measuring which arrays forward uses: "
                         f"{said or UNMEASURED[why.partition(':')[0]]}{why.partition(':')[2]}"
                         + (f"; arrays not checked: {', '.join(names)}" if names else "") + ")")
    layer = _wrap(obj, pairs, tied=tied, views=_views_info(info, tied, views, named, pairs))
    if inputs is not None and len(inputs) == 1 and (dx := _try(_stored_dx, obj, inputs, kw)) is not None:
        _read_stored_dx(layer, info, *dx)  # backward returns dX and stores self.dinputs, and the two differ
    return layer, info


def grads_values(obj) -> dict:
    """``{key: float64 copy}`` of the arrays in ``obj.grads`` as it holds them now (``{}`` when it is no dict): what
    :func:`gradcheck.grading.checks.instances_apart` reads after every instance's backward, in the sandbox's child for
    a sandboxed layer, whose proxy keeps each backward's own copy (a ``grads`` dict on the class is every
    instance's: verify43c F5)."""
    g = getattr(obj, "grads", None)
    if type(g) is not dict:
        return {}
    return {str(k): np.array(v, dtype=np.float64) for k, v in list(g.items())[:MAX_PROBED * 4]
            if isinstance(v, np.ndarray) and v.dtype.kind in "fiu"}


def reused_layers(obj) -> list:
    """The indices (as text) of the first layer object ``obj``'s list ``layers`` holds more than once (lesson 07's
    one activation used twice in the chain), ``[]`` when it holds none twice or has no such list: what
    :func:`gradcheck.diagnose._reused_sublayer` reads, here for a local layer, in the sandbox's child for a sandboxed
    one (its ``reused_layers`` adapter call: object identity is the child's). The list is the instance's own
    attribute (no property of the layer's runs); its first 10000 entries are read."""
    layers = _fields(obj).get("layers") if _has_fields(obj) else None
    at: dict = {}
    for i, sub in enumerate(layers[:10000] if isinstance(layers, (list, tuple)) else ()):
        at.setdefault(id(sub), []).append(str(i))
    return next((ix for ix in at.values() if len(ix) > 1), [])


def next_new_layer(model, layers, index) -> int:
    """The index of the first layer after ``layers[index]`` that is no object met before it in ``layers``, where the
    search for a failing model's first failing layer goes on (:func:`gradcheck.diagnose.first_failing_sublayer`).

    A layer object listed again was checked where it was first met and is not checked again (redteam36 F4: ``layers =
    [lin] * 40`` cost a request and a forward for each reference), so when every later layer is one met before, or
    the model itself (where the search ends), nothing is left to check and the search ends here.

    Parameters
    ----------
    model : object
        The model whose ``layers`` these are.
    layers : list or tuple
        Its layers, in the order its forward runs them.
    index : int
        The layer the search is at.

    Returns
    -------
    int
        The index of that later layer (``len(layers)`` when ``layers[index]`` is the last), or -1 when layers follow
        and each is one met before, up to the list's end or to the model itself. Linear in ``len(layers)`` (objects
        by ``id``, no code of theirs run).
    """
    met = {id(x) for x in layers[:index + 1]}
    for k in range(index + 1, len(layers)):
        if layers[k] is model:
            break
        if id(layers[k]) not in met:
            return k
    return -1 if index + 1 < len(layers) else len(layers)


def forward_takes(obj, n) -> bool:
    """Whether ``obj.forward`` (a function pair adapter's: the student's) can be called with ``n`` positional inputs.

    A model's sub-layer whose forward needs more (DLfS-2's ``RNN.forward(x, h_prev)`` inside ``TimeRNN``, which
    calls it with a state the model keeps) is not checkable alone on the input it receives: not blamed (tester25s
    M3: the diagnosis said ``RNN.forward(x) ... missing 'h_prev'``, gradcheck's own call).

    Parameters
    ----------
    obj : object
        A layer (a student's class instance or an adapter of one).
    n : int
        How many inputs the caller would pass.

    Returns
    -------
    bool
        False only when forward's signature is read and refuses ``n`` positional arguments.
    """
    fn = getattr(obj, "student_forward", None) or getattr(obj, "forward", None)
    try:
        inspect.signature(fn).bind(*[None] * n)
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): taken as callable
        return True
    return True


def state_values(obj):
    """``{name: float64 copy}`` of the public numbers (not bools) and numeric arrays of ``obj``'s own attributes
    (``__dict__`` and slots): the state a forward may carry from one call to the next (a call counter ``self.t``, a
    running mean ``self.mean``), compared across calls by :func:`_state_between_calls` and the diagnosis (also in
    the sandbox's child, for a sandboxed layer: its ``fields`` request)."""
    return {k: np.array(v, dtype=np.float64) for k, v in list(_fields(obj).items())[:MAX_PROBED * 4]
            if isinstance(k, str) and not k.startswith("_") and (
                isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                or isinstance(v, np.ndarray) and v.dtype.kind in "fiu")}


def copied(obj, memo=None, depth=0):
    """A copy of the layer ``obj`` its forwards can run on, leaving ``obj`` as it was: ``copy.deepcopy(obj)``, else
    (an attribute deep copy refuses: a module ``self.xp = np``, a ``threading.Lock``; verify46a F8) a shallow copy
    whose attributes are copied so (a dict, list or tuple among them entry by entry), those no copy can be made of
    shared (a module, a lock: forward does not write them), one ``memo`` keeping arrays that are one array one. Raises when ``obj`` itself cannot be so copied: its
    class copies itself (``__deepcopy__``: a sandbox's RemoteLayer, a student's own) and refused, or it has no
    ``__dict__``. The sandbox's child copies a layer so (its ``clone``), as :mod:`gradcheck._running_stats` does a
    local one: both find the running statistics of one layer alike."""
    memo, trial = ({} if memo is None else memo), dict(memo or {})
    if id(obj) in memo:
        return memo[id(obj)]
    try:
        new = copy.deepcopy(obj, trial)
        memo.update({k: v for k, v in trial.items() if k != id(trial)})  # (not a failed try's half-made copies)
        return new
    except Exception:  # noqa: BLE001 - an attribute that cannot be deep-copied: shared below
        if depth > 3 or isinstance(obj, (type, types.ModuleType)) or getattr(type(obj), "__deepcopy__", None) or not (
                isinstance(obj, (dict, list, tuple)) or isinstance(getattr(obj, "__dict__", None), dict)):
            if depth:
                return obj
            raise
    if isinstance(obj, (dict, list, tuple)):  # a container holding a module or a lock beside the statistics: its
        return _copied_items(obj, memo, depth)  # entries copied, not the container shared (verify47a F1)
    new = memo[id(obj)] = copy.copy(obj)
    for k, v in vars(obj).items():
        vars(new)[k] = copied(v, memo, depth + 1)
    return new


def _copied_items(obj, memo, depth):
    """A copy of the dict, list or tuple ``obj`` (subclasses too: a shallow copy, entries replaced) whose entries are
    :func:`copied`: the arrays in it are the copy's own, a module or a lock deep copy refuses shared."""
    if isinstance(obj, tuple):
        items = [copied(v, memo, depth + 1) for v in obj]
        new = type(obj)._make(items) if hasattr(type(obj), "_make") else type(obj)(items)
        memo[id(obj)] = new
        return new
    new = memo[id(obj)] = copy.copy(obj)
    for k in (list(obj) if isinstance(obj, dict) else range(len(obj))):
        new[k] = copied(obj[k], memo, depth + 1)
    return new


def stat_values(obj):
    """:func:`state_values` of ``obj``, its private numeric arrays (``self._running_mean``, ``self._rm``) and the
    numeric arrays its dicts (an OrderedDict too), lists, tuples and SimpleNamespaces hold, nested as far as 3 levels,
    each named by its path: ``stats['running_mean']``, ``running[0]``, ``state['bn']['mean']``, ``ns.mean`` (the
    places a BatchNorm keeps its running statistics in besides attributes of their own: verify46a F3, verify47a F2),
    float64 copies; at most :data:`_STAT_CAP` arrays, each object entered once (cycles). The running statistics'
    finder (:func:`gradcheck._running_stats.find_roles`) reads a layer's state so, here or in the sandbox's child."""
    out = state_values(obj)
    out.update({k: np.array(v, dtype=np.float64) for k, v in list(_fields(obj).items())[:MAX_PROBED * 4]
                if isinstance(k, str) and k.startswith("_") and not k.startswith("__") and isinstance(v, np.ndarray)
                and v.dtype.kind in "fiu" and v.ndim >= 1 and v.size <= 1 << 16})
    seen = {id(obj)}

    def entries(c):
        if isinstance(c, types.SimpleNamespace):
            return [(f".{a}", v) for a, v in list(vars(c).items())[:_STAT_CAP] if isinstance(a, str)]
        if isinstance(c, dict):
            return [(f"[{i!r}]", v) for i, v in list(c.items())[:_STAT_CAP] if isinstance(i, (str, int))]
        return [(f"[{i}]", v) for i, v in enumerate(list(c)[:_STAT_CAP])] if isinstance(c, (list, tuple)) else []

    def enter(path, c, depth):
        if depth > 3 or id(c) in seen or len(out) >= _STAT_CAP * 2:
            return
        seen.add(id(c))
        for key, v in entries(c):
            if isinstance(v, np.ndarray) and v.dtype.kind in "fiu" and v.ndim >= 1 and v.size <= 1 << 16:
                out[path + key] = np.array(v, dtype=np.float64)
            elif isinstance(v, (dict, list, tuple, types.SimpleNamespace)):
                enter(path + key, v, depth + 1)
    for k, c in list(_fields(obj).items())[:MAX_PROBED * 4]:
        if isinstance(k, str) and not k.startswith("__") and isinstance(c, (dict, list, tuple, types.SimpleNamespace)):
            enter(k, c, 1)
    return out


#: The most entries :func:`stat_values` reads of one container (and about half the arrays it returns).
_STAT_CAP = 64


def _state_between_calls(obj, inputs, kw):
    """The public attributes (numbers, arrays) that a second forward on the same input (generators rewound) leaves
    different from the first: state forward updates and may read (``self.t += 1``); [] when a first call from the
    same state gives another output (a random forward, not state). Of those, the ones the next call reads (moved
    before it, its output changes: ``self.h``, not the caches ``self.hprev``, ``self.hn`` every call overwrites,
    tester19s) when any is. State restored after."""
    def read_next(k, y2):
        with _all_undone([obj]) as moved:
            try:
                setattr(obj, k, getattr(obj, k) + 1)
            except Exception:  # noqa: BLE001 - a property: kept as changed
                return True
            return not np.array_equal(_run(obj, moved, inputs, kw), y2, equal_nan=True)
    with _all_undone([obj]) as rewind:
        with _all_undone([obj]) as again:
            y = _run(obj, again, inputs, kw)
        if not np.array_equal(y, _run(obj, rewind, inputs, kw), equal_nan=True):
            return []
        first = state_values(obj)
        with _all_undone([obj]) as again:
            y2, second = _run(obj, again, inputs, kw), state_values(obj)
        changed = [k for k, v in first.items() if k in second and not np.array_equal(v, second[k], equal_nan=True)]
        return [k for k in changed if read_next(k, y2)] or changed


#: Attributes a backward that returns dX may store it in as well (*Neural Networks from Scratch*'s ``self.dinputs``).
STORED_DX = ("dinputs", "dinput", "dX", "dx", "d_X", "d_x", "dL_dX", "grad_input", "grad_inputs", "dA_prev")


def _stored_dx(obj, inputs, kw):
    """``(attribute, "stored" or "returned")`` when one backward (after a probe forward; state restored) returns dX
    and also stores an array of its shape that differs from it under a name of :data:`STORED_DX` (written by that
    backward): the one further from a central difference (:func:`_farther`) is named; None otherwise (Y6, as X18
    for weights)."""
    with _all_undone([obj]) as rewind:
        y = _run(obj, rewind, inputs, kw)
        before = {k: (v, v.copy()) for k, v in _fields(obj).items() if k in STORED_DX and isinstance(v, np.ndarray)}
        r = _probe_backward(obj, y)
        d = _fields(obj)
        if not isinstance(r, np.ndarray) or r.shape != inputs[0].shape:
            return None
        name = next((k for k in STORED_DX if isinstance(a := d.get(k), np.ndarray) and a.shape == r.shape
                     and not np.shares_memory(a, r) and not np.array_equal(a, r, equal_nan=True)
                     and (before.get(k, (None,))[0] is not a or not np.array_equal(a, before[k][1]))), None)
        if name is None:
            return None
        grads = {"stored": np.array(d[name], dtype=np.float64), "returned": np.array(r, dtype=np.float64)}
    x = np.array(inputs[0], dtype=np.float64)
    return name, _farther(obj, [x], kw, x, grads)


def _read_stored_dx(layer, info, name, wrong):
    """Read the stored ``self.<name>`` in place of the returned dX when it is the ``wrong`` one (:func:`_stored_dx`),
    saying so in the header and the FAIL line (``info['read_from']``)."""
    layer.dx_stored = name if wrong == "stored" else None
    note, line = _differ_texts(f"self.{name}", "dX", wrong)
    info["text"] += f"; {note}"
    info.setdefault("read_from", []).append(line)


def _differ_texts(where, g, wrong):
    """The header's note and the FAIL line's (``read_from``) for a gradient ``g`` (``dW``, ``dX``) that backward both
    returns and stores (``where``: ``self.dW``), the two differing: the check reads the ``wrong`` one (``"stored"`` or
    ``"returned"``, the further from a finite difference: :func:`_farther`)."""
    stored = wrong == "stored"
    return (f"backward stores {where} and returns {g}, and they differ: the check reads "
            + (f"the stored {where}" if stored else f"the returned {g}")
            + ", the one further from a finite difference of forward (both must be right)",
            f"{g}: " + (f"the stored {where}, not the {g} backward returns" if stored else
                        f"the {g} backward returns, not the stored {where}") + " (the two differ)")


#: The containers a model lists its parameters in for its optimizer (DLfS-2's ``self.params``).
PARAM_LISTS = ("params", "parameters")


def _copied_params(obj, children, arrays, used):
    """``["params[0] is a copy of layers.0.params[0] ...", ...]``: the items of the model's own parameter list
    (:data:`PARAM_LISTS`, ``self.params += [p.copy() for p in layer.params]``) that forward never reads (not in
    ``used``) and that equal, in their own memory, an array of a sub-layer forward does read: its optimizer steps
    the copies, so training changes nothing (Y23)."""
    subs = {w: getattr(*_owner(obj, children, w), None) for w in used if "." in w}
    out = []
    for k, a in arrays.items():
        path = _item_path(k)
        if k in used or path is None or path[0] not in PARAM_LISTS or not isinstance(a, np.ndarray):
            continue
        src = next((w for w, b in subs.items() if isinstance(b, np.ndarray) and b.shape == a.shape and
                    not np.shares_memory(a, b) and np.array_equal(a, b)), None)
        if src is not None:
            out.append((k, src))
    return out


def _list_grads(o):
    """``[(i, array)]`` of the float arrays in ``o``'s ``grads`` list held beside a ``params`` list (DLfS-2's
    ``self.grads = [np.zeros_like(W)]``); [] when ``o`` has no such pair of lists."""
    d = _fields(o)
    ps, gs = d.get("params"), d.get("grads")
    if not (isinstance(ps, list) and isinstance(gs, list)):
        return []
    return [(i, g) for i, g in enumerate(gs[:MAX_PROBED]) if _float_array(g)]


def _source_facts(obj) -> dict:
    """What :func:`adapt` reads of ``obj``'s source, nothing run: the constants forward compares its input with
    (``np.clip(X, 0, 6)``: checked again around 6, tester21s; a pair's ``NAME_forward`` too, its
    ``student_forward``), and whether the code passes ``dtype='f'`` (:func:`uses_dtype_f`: the float32 advice of
    Deep Learning from Scratch 2, review26g L2)."""
    out = {"compared_constants": k} if (k := _try(_switch_reach.compared_constants, obj)) else {}
    out |= {"float_args": f} if (f := _try(float_args, obj)) else {}
    return out | ({"dtype_f": True} if _try(uses_dtype_f, obj) else {})


def float_args(obj) -> list[list]:
    """``[[name, default], ...]``: the keyword arguments of the constructor of ``obj``'s class whose default is a
    float (``Dropout(p=0.5)``, ``ELU(alpha=1.0)``; not a bool or an int, which size arrays), read from its signature,
    nothing run; ``[]`` for a function pair (its keyword arguments: :func:`pair_switches`) or an unreadable one; a
    loss function's (:class:`LossFunction`, ``huber_loss(x, y, delta=1.0)``) from the function's signature. The
    checker checks a layer built at 0.5, 1.0, 0 or -1 again at another value (:func:`gradcheck.sources.each_other_arg`:
    ``1/p == 1/(1-p)`` at p = 0.5 hides a wrong backward, newuser36 H1)."""
    if isinstance(obj, FunctionPair):
        return []
    ps = _params(obj.fn if isinstance(obj, LossFunction) else type(obj)) or {}
    return [[p.name, p.default] for p in ps.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and type(p.default) is float and bool(np.isfinite(p.default))]


def uses_dtype_f(obj) -> bool:
    """Whether the code of the module of ``obj``'s class, of a sub-layer's, or of a function pair's functions, passes
    ``dtype='f'`` to a call (Deep Learning from Scratch 2's ``np.empty(..., dtype='f')``; read with :mod:`ast`, so a
    comment or a string saying it does not count): only then is a float32 result told of the book's dtype='f'."""
    fns = [getattr(obj, "student_forward", None), getattr(obj, "student_backward", None)]
    owners = [f for f in fns if f is not None] or [type(o) for o in [obj, *dict(sublayers(obj)).values()]]
    for mod in dict.fromkeys(inspect.getmodule(o) for o in owners):
        try:
            if mod is not None and _passes_dtype_f(inspect.getsource(mod)):
                return True
        except (OSError, TypeError, SyntaxError, ValueError):
            continue
    return False


@functools.lru_cache(maxsize=64)
def _passes_dtype_f(source: str) -> bool:
    """Whether the module source ``source`` passes ``dtype='f'`` to a call (:func:`uses_dtype_f`), read once per
    text (session 40: the planted-bug table's diagnoses parsed the same modules about 250 times)."""
    return any(isinstance(n, ast.keyword) and n.arg == "dtype" and isinstance(n.value, ast.Constant)
               and n.value.value == "f" for n in ast.walk(_pyast.parse(source)))


def _only_listed(obj, children, pairs):
    """``pairs`` without those of an object that lists its parameters in a ``params`` list beside a ``grads`` list
    (:func:`_list_grads`, DLfS-2's ``self.params = [Wx, Wh, b]``, ``self.grads[i]`` the gradient of ``params[i]``)
    whose weight is not an item of that ``params``: in that protocol only the listed arrays are parameters. tester25s
    M3: a TimeRNN's state ``self.h`` was paired with ``self.dh`` (the gradient of the initial state), and the
    ``cache`` tuples of the RNNs its forward creates with their ``grads`` by position."""
    def listed(w):
        path, _, key = w.rpartition(".")
        o = children.get(path) if path else obj
        return o is None or not _list_grads(o) or key.startswith("params[")
    return {w: g for w, g in pairs.items() if listed(w)}


def _outside_params(obj, inputs, kws, children, pairs, info):
    """``pairs`` as :func:`_only_listed` keeps them (DLfS-2: only ``params[i]`` are parameters), and of those it drops
    the pairs of a weight of the object's own kept outside its ``params`` list (``self.b`` beside ``self.params =
    [W]``) whose gradient backward stores under the weight's name (``self.db``, :data:`GRAD_NAMES`) and which forward
    does not write (state such as a TimeRNN's ``self.h`` with ``self.dh``, the initial state's gradient, stays
    dropped: tester25s M3), and which is no view of an item of ``params`` (book 1's ``self.W`` beside book 2's
    ``self.params = [self.W, self.b]``: the same array, checked as ``params[0]``). Those are checked as the attribute style checks them, listed in
    ``info['outside_params']`` (``["b: db"]``) for the header to say the weight is not in params (a model collecting
    ``layer.params`` never trains it). review26g M1: such a layer was NOT CHECKED, told to "set self.db", which it
    did, and its wrong db (``dout.mean``) no longer FAILed as it did before the list rule."""
    kept = _only_listed(obj, children, pairs)
    ps = _fields(obj).get("params")
    listed = [p for p in ps if isinstance(p, np.ndarray)] if isinstance(ps, list) else []
    named = {w: g for w, g in pairs.items() if w not in kept and "." not in w and "[" not in w
             and g in {f.format(w) for f in GRAD_NAMES} and isinstance(a := getattr(obj, w, None), np.ndarray)
             and not any(np.shares_memory(a, p) for p in listed)}  # self.W is params[0]: an alias, listed
    written = _try(_forward_writes, obj, inputs, kws, list(named), children) if named and inputs is not None else None
    outside = {} if written is None else {w: g for w, g in named.items() if w not in written}
    if outside:
        info["outside_params"] = [f"{w}: {g}" for w, g in outside.items()]
    return {**kept, **outside}


def _rebound_grads(obj, inputs, kw):
    """``["grads[0]", "layers.0.grads[1] (the model's grads[1])"]``: the items of a ``grads`` list (beside a ``params``
    list, :func:`_list_grads`, in ``obj`` or a sub-layer as they are after one forward) that the next backward binds
    to another array (``self.grads[0] = dW``, or a new list) instead of writing into them (``self.grads[0][...] =
    dW``): a model that collected ``layer.grads`` before (``self.grads += layer.grads``, DLfS-2's ``TwoLayerNet``)
    keeps the old arrays, so its optimizer steps with zeros and the weights never move (tester25s H2: such a layer
    PASSED, its gradient being read from the new array). Each sub-layer's item the model's own list holds is named
    with its place there. State restored after."""
    with _all_undone([obj, *dict(sublayers(obj)).values()]) as rewind:  # the sub-layers' lists put back too
        y = _run(obj, rewind, inputs, kw)
        owners = {"": obj, **dict(sublayers(obj))}
        lists = {n: _fields(o).get("grads") for n, o in owners.items()}
        before = {(n, i): g for n, o in owners.items() for i, g in _list_grads(o)}
        if not before:
            return []
        own = _fields(obj).get("params")  # the model's params[j] is the sub-layer's params[i]: its grads[j] the old
        own = own if isinstance(own, list) else []  # grads[i] (by the params: an earlier probe may have rebound it)
        _probe_backward(obj, y)
        out = []
        for (n, i), g in before.items():
            gs = _fields(owners[n]).get("grads")
            if isinstance(gs, list) and i < len(gs) and gs[i] is g:
                continue
            name = f"{n}.grads[{i}]" if n else f"grads[{i}]"
            new = " (a new list)" if gs is not lists[n] else ""
            ps = _fields(owners[n]).get("params")
            p = ps[i] if n and isinstance(ps, list) and i < len(ps) else None
            held = next((j for j, a in enumerate(own) if a is p), None) if p is not None else None
            out.append(name + new + (f" (the model's grads[{held}])" if held is not None else ""))
        return out


def _rebound_text(rebound):
    """The FAIL line of :func:`_rebound_grads`' items (``["grads[0]", ...]``), or of a sub-layer's ones the model's own
    list holds (``"layers.0.grads[0] (the model's grads[0])"``)."""
    names = [r.split(" (")[0] for r in rebound]
    one = len(names) == 1
    first = names[0].rpartition(".")[2]
    held = [r.rpartition("(the model's ")[2].rstrip(")") for r in rebound if "(the model's " in r]
    lead = (f"backward bound grads to a new list (self.grads = [...]) instead of writing into {joined_and(names)}"
            if any("(a new list)" in r for r in rebound) else
            f"backward replaced {joined_and(names)} with {'a new array' if one else 'new arrays'} instead of writing into "
            f"{'it' if one else 'them'}")
    return (f"{lead}; models that collected layer.grads keep the old "
            f"{'one' if one else 'ones'}" + (f" (this model's {joined_and(held)}, never written: its optimizer steps with "
                                             "zeros)" if held else "")
            + f": write `self.{first}[...] = dW`, not `self.{first} = dW`")


def _copies_text(cls, copies):
    """The protocol error of :func:`_copied_params`' ``[(params[0], layers.0.params[0]), ...]``."""
    ks, srcs = [k for k, _ in copies], [s for _, s in copies]
    one = len(copies) == 1
    return (f"{cls}.{joined_and(ks)} {'is a copy' if one else 'are copies'} of {joined_and(srcs)} (the same values in "
            f"{'its' if one else 'their'} own memory): forward reads {joined_and(srcs)}, never {joined_and(ks)}, so an "
            f"optimizer stepping {joined_and(ks)} with {'its' if one else 'their'} gradient{'' if one else 's'} changes "
            "nothing and the model does not learn. List the layers' arrays themselves (self.params += "
            f"layer.params, no .copy()), so that the model's {ks[0]} is {srcs[0]}. {expected()}")


def _recreated(obj, inputs, kw):
    """``["W: dW", ...]``: arrays named like weights (:data:`PARAM_NAME`) that forward binds anew on every call
    (``self.W = rng.standard_normal(...)`` with no ``if self.W is None``) and whose gradient backward writes by name:
    perturbing them changes nothing, so that gradient cannot be checked (and training cannot change them)."""
    with _all_undone([obj]) as rewind:
        _run(obj, rewind, inputs, kw)
        first = dict(_fields(obj))
        y = _run(obj, rewind, inputs, kw)
        second = dict(_fields(obj))
        _probe_backward(obj, y)
        after = dict(_fields(obj))
    out = []
    for k, v in second.items():
        if isinstance(k, str) and isinstance(v, np.ndarray) and v.dtype.kind == "f" and k in first and \
                first[k] is not v and PARAM_NAME.fullmatch(_bare(k).lstrip("_")):
            g = next((g.format(k) for g in GRAD_NAMES if isinstance(after.get(g.format(k)), np.ndarray)), None)
            out += [f"{k}: {g}"] if g else []
    return out


def _list_weights(obj, inputs, kw):
    """``["W: dW", ...]`` (``"W: "`` without a gradient): attributes named like weights that are Python lists of
    numbers (``self.W = [[0.1, 0.2], ...]``, made arrays in forward) whose change changes forward's output: gradcheck
    perturbs and checks numpy arrays, so their gradients (``dW``, written by backward) are not checked."""
    d = _fields(obj)
    cands = [k for k, v in list(d.items())[:MAX_PROBED] if isinstance(k, str) and isinstance(v, list) and v
             and PARAM_NAME.fullmatch(_bare(k).lstrip("_")) and _numbers_kind(v) in ("f", "i")]
    out = []
    with _all_undone([obj]) as rewind:
        y0 = _run(obj, rewind, inputs, kw)
        for k in cands:
            old = d[k]
            d[k] = (np.asarray(old, dtype=np.float64) * 1.5 + 0.5).tolist()
            try:
                y = _run(obj, rewind, inputs, kw)
            finally:
                d[k] = old
            if y.shape != y0.shape or not np.array_equal(y, y0, equal_nan=True):
                out.append(k)
        if out:
            _probe_backward(obj, y0)
        after = dict(_fields(obj))
    return [f"{k}: " + next((g.format(k) for g in GRAD_NAMES if g.format(k) in after), "") for k in out]


def _numbers_kind(v):
    """numpy's dtype kind of a (nested) list of numbers (``"f"``, ``"i"``), or ``""`` when it is none."""
    try:
        return np.asarray(v).dtype.kind
    except (ValueError, TypeError):  # ragged
        return ""


#: The header's words for each way :func:`_zeroing` finds of resetting accumulated gradients.
ZEROING_TEXT = {**{k: f"; {how} before each backward, as PyTorch's training loop does" for k, how in (
    ("module", "zero_grad() is called"), ("parameters", "each of parameters()'s zero_grad() is called"),
    ("grads", "each of parameters()'s .grad is set to 0"))},
    "flush": f"; {FLUSH}() is called before each forward and the gradients it resets are zeroed before each backward, "
             "as numpy-ml's training loop does (update() flushes after each step)"}


def _zeroing(obj):
    """How a layer's accumulated gradients (``p.grad += ...``) are zeroed before each backward, as PyTorch's loop does:
    ``"module"``, its class's ``zero_grad()``; ``"parameters"``, the ``zero_grad()`` of each object its
    ``parameters()`` lists (tester10 T11: a student's ``Parameter``); ``"grads"``, each of ``parameters()``'s
    ``.grad`` arrays set to 0 in place (``optimizer.zero_grad(set_to_none=False)``); None: none of these."""
    if callable(getattr(type(obj), "zero_grad", None)):
        return "module"
    if _flushes(obj):  # numpy-ml's flush_gradients(): also empties self.X, so only its gradients are zeroed
        return "flush"
    ps = getattr(type(obj), "parameters", None)
    if not callable(ps) or [p for p in (_params(ps) or {}).values() if p.default is p.empty][1:]:
        return None
    try:
        items = list(obj.parameters())[:MAX_PROBED * 4]
    except Exception:  # noqa: BLE001 - a student's parameters() that raises or returns no iterable: not zeroed
        return None
    if items and all(callable(getattr(p, "zero_grad", None)) for p in items):
        return "parameters"
    return "grads" if items and all(isinstance(getattr(p, "grad", None), np.ndarray) for p in items) else None


def _namespaces(obj):
    """``[(label prefix, class or module)]`` where a layer may keep weights gradcheck does not perturb: each of
    its classes defined outside numpy and the standard library (``ClassLevel.W``), and its module (``W_glob``)."""
    out = [(f"{c.__name__}.", c) for c in type(obj).__mro__
           if (getattr(c, "__module__", "") or "").split(".")[0] not in ("builtins", "numpy", "abc", "typing")]
    mod = sys.modules.get(getattr(type(obj), "__module__", "") or "")
    return out + ([("", mod)] if mod is not None and mod.__name__ not in (__name__, "builtins") else [])


def _outside(obj, spaces, deep):
    """``{label: array}`` of the float arrays of the namespaces ``spaces`` (:func:`_namespaces`: ``ClassLevel.W``,
    ``W_glob``) and, when ``deep``, of every array the layer holds at any depth (:func:`walk`: ``self.params._items[0]``
    in a container of the student's own, private attributes too)."""
    out = {f"{pre}{k}": a for pre, owner in spaces for k, a in list(vars(owner).items())[:MAX_PROBED * 4]
           if isinstance(k, str) and _float_array(a)}
    for p, v in walk(obj) if deep else ():  # an array two closures read: named once
        if _float_array(v) and not any(v is a for a in out.values()):
            out[f"self.{_label(p)}"] = v
    return out


def _hidden(obj, inputs, kw, known=(), deep=False):
    """Weights the discovery does not read, so gradcheck neither perturbs nor checks them: the arrays of
    :func:`_outside` whose change (in place) changes forward's output, each ``"ClassLevel.W (4, 3): ClassLevel.dW"``
    with the arrays of its shape one backward wrote there (new, rebound or changed; nothing after ``": "`` when
    none: a constant). ``known``: the arrays read as the layer's weights (``self.W = W_glob``), not named again;
    ``deep``: the layer's own arrays too (when no weight was found). Every write is undone."""
    spaces, found, out = _namespaces(obj), [], []
    objs = [obj] + ([v for _, v in walk(obj) if _is_layer(v) or _is_helper(v)] if deep else [])
    with _all_undone(objs) as rewind:
        y0 = _run(obj, rewind, inputs, kw)
        again = _run(obj, rewind, inputs, kw)  # a forward random beyond rewinding (a generator made in each call):
        if again.shape != y0.shape or not np.array_equal(again, y0, equal_nan=True):  # a change tells nothing, and
            return []  # an array it rewrites per call (self.mask) is no weight (tester20s M9)
        for k, a in [(k, a) for k, a in _outside(obj, spaces, deep).items()
                     if a.flags.writeable and not any(np.shares_memory(a, b) for b in known)][:MAX_PROBED]:
            with overwritten(a, a * 1.5 + 0.5):
                y = _run(obj, rewind, inputs, kw)
            if y.shape != y0.shape or not np.array_equal(y, y0, equal_nan=True):
                found.append((k, a))
        if not found:
            return []
        spaced = [(owner, dict(vars(owner))) for _, owner in spaces]
        before = _snapshot(_outside(obj, spaces, deep))
        try:
            dx = _probe_backward(obj, _run(obj, rewind, inputs, kw))
            written = _written(_outside(obj, spaces, deep), before, dx)
        finally:
            for owner, old in spaced:
                for k in [k for k in vars(owner) if k not in old]:
                    delattr(owner, k)
                for k, v in old.items():
                    if vars(owner).get(k, owner) is not v:
                        setattr(owner, k, v)
            for a, c in before.values():
                if a.flags.writeable and a.shape == c.shape:
                    a[...] = c
    for k, a in found:
        gs = [g for g, b in written.items() if b.shape == a.shape and g != k]
        out.append(f"{k} {tuple(a.shape)}: {', '.join(gs)}")
    return out


def _stepped_only(obj):
    """The attributes the backward of a layer that steps its weights itself (Independent Code's
    ``backward(output_gradient, learning_rate)``) assigns, ``set()`` for another layer: a weight it steps whose
    gradient attribute it never assigns has its gradient read from the step, under gradcheck's name
    (``weights_grad``), which the header does not put beside it as the student's."""
    cls = type(obj)
    if getattr(cls, "_gradcheck_read_from", None) is None or (tree := _source(cls.backward)) is None:
        return set()
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}


def _attribute_text(obj, inputs, y, found, info, why):
    """``protocol``, header ``text`` (and ``grad_attrs``) of :func:`_attribute_style`; ``found``: ``(arrays, number
    attributes, sub-layers, pairs, tied, forward's keywords)``; of the seed protocol, ``info['seed_weights']``."""
    arrays, numbers, children, pairs, tied, kw = found
    top = {w: g for w, g in pairs.items() if "." not in w}
    named = _shown(pairs)
    grads = [f"{named.get(w, w)}:{_as_written(g)}" for w, g in pairs.items()]  # the diagnosis names self.dW
    if top:
        stepped = _stepped_only(obj)  # backward(dY, lr) steps them: weights_grad is gradcheck's name, not the student's
        shown = ", ".join(f"{_as_written(w)}" + ("" if w in stepped and g not in stepped else f"/{_as_written(g)}")
                          + (" (a number, set as the attribute)" if w in numbers else "") for w, g in top.items())
        first = next((w for w in top if w in arrays), None)
        lay = _layout(arrays[first], inputs or [], y) if y is not None and first else ""
        return {"protocol": "attribute", "text": f"attribute style ({shown}){lay}", "grad_attrs": grads}
    if pairs:
        held = not any(_is_layer(children.get(w.rpartition(".")[0])) for w in pairs)  # self.weight.data
        return {"protocol": "attribute", "grad_attrs": grads,
                "text": "weights held by plain objects" if held else "a layer made of sub-layers"}
    if info["unchecked"]:
        info["seed_weights"] = _seed_weights(obj, inputs, y, kw, info["unchecked"])
        return {"protocol": "seed", "text": f"array attributes without gradients ({', '.join(info['unchecked'])}): "
                                            f"backward(dY) -> dX only{_layouts_text(info)}{_state_text(info)}"
                if info.get("backward_ran", True)
                else f"array attributes ({', '.join(info['unchecked'])}); their gradients are not known: backward "
                "raised when called after the probe forward"}
    if why:  # nothing measured (forward raised on the probe, ...): backward never ran, its gradients are unknown
        return {"protocol": "plain", "text": "a class with forward/backward, its gradients not known (backward was "
                                             "not run)"}
    return {"protocol": "plain", "text": f"a class with forward/backward and no parameters{_state_text(info)}"}


def _layouts_text(info):
    """``"; W (in, out)"``: the layouts :func:`_seed_weights` told (a square weight's by forward, said so); "" none."""
    seed = [w for w in map(seed_weight, info.get("seed_weights") or []) if w is not None]
    lays = [f"{n} ({lay}{', told by forward: square' if shape[0] == shape[-1] else ''})"
            for n, shape, _, lay in seed if lay]
    return f"; {', '.join(lays)}" if lays else ""


def forward_state(info) -> list:
    """The names of the arrays without gradients a layer's forward writes: its state, not its parameters.

    Read from a protocol dict of :func:`_attribute_style`: ``info['buffers']`` (the array attributes without a
    gradient) whose ``info['buffer_why']`` entry (``"name: why"`` strings) says forward writes it, as an EMA's
    ``self.mean`` or BatchNorm's running statistics (PyTorch's ``register_buffer``, Keras's non-trainable weights:
    no gradient is due). Any shape and dtype: only the names are read.

    Parameters
    ----------
    info : Mapping or object
        The layer's protocol dict; anything else (None, a string) has no state.

    Returns
    -------
    list of str
        The buffers' names in ``info['buffers']``'s order; ``[]`` when none or ``info`` is not a Mapping. Raises
        nothing.
    """
    if not isinstance(info, collections.abc.Mapping):
        return []
    why = dict(str(x).split(": ", 1) for x in info.get("buffer_why") or [] if ": " in str(x))
    return [w for w in info.get("buffers") or [] if "writes it" in why.get(w, "")]


def _state_text(info):
    """The header's words for the arrays a layer without gradients writes in forward (:func:`forward_state`): state,
    not parameters; "" when none."""
    state = forward_state(info)
    return (f"; state forward updates: {', '.join(state)} (a buffer, as PyTorch's register_buffer and Keras's "
            "non-trainable weights: not a parameter, so no gradient is due)") if state else ""


def _returned(obj, inputs, kw):
    """The items ``backward`` returns after one probe forward (state restored) when they outnumber the inputs
    (``(dX, dW, db)``: :class:`ReturnedGradients`), else None. The items' container also carries ``stored``:
    ``{gradient name: copy}`` of what that backward stored as well (``dW``, ``grads['W']``: :func:`_stored`)."""
    with _all_undone([obj]) as rewind:
        y = _run(obj, rewind, inputs, kw)
        before = _grad_snapshot(obj)
        r = _probe_backward(obj, y)
        if not isinstance(r, (tuple, list)) or len(r) <= len(inputs):
            return None
        return _ReturnedItems((_copy(v) for v in r), type(r), _stored(obj, before, r))


class _ReturnedItems(list):
    """What :func:`_returned` read: the items, ``kind`` (tuple or list) and ``stored``."""

    def __init__(self, items, kind=tuple, stored=None):
        super().__init__(items)
        self.kind, self.stored = kind, stored or {}


def _grad_snapshot(obj):
    """``{name: (array, copy)}`` of the arrays in ``obj.__dict__`` and in its gradient dicts (:data:`GRAD_DICTS`,
    named ``grads['W']``), for :func:`_stored`."""
    d, out = getattr(obj, "__dict__", {}), {}
    for k, v in d.items():
        items = v.items() if k in GRAD_DICTS and isinstance(v, dict) else ()
        out.update({f"{k}[{i!r}]": a for i, a in items})
        out[k] = v
    return {k: (a, a.copy()) for k, a in out.items() if isinstance(a, np.ndarray)}


def _stored(obj, before, returned):
    """``{name: copy}`` of the arrays ``backward`` stored beside those it returned: in ``obj.__dict__`` or its
    gradient dicts (:func:`_grad_snapshot`), new, rebound or changed since ``before``; a returned array itself is
    left out (the same gradient)."""
    return {k: a.copy() for k, (a, _) in _grad_snapshot(obj).items()
            if not _same(a, before.get(k)) and not any(a is r for r in returned)}


def _dx_names(obj, n):
    """The gradients of forward's ``n`` inputs by its argument names (``["dx", "dh"]``), else ``["dX"]`` or
    ``["dX0", "dX1"]``."""
    ps = [p.name for p in _positional(obj.forward)][:n]
    return ["d" + p for p in ps] if len(ps) == n else ["dX"] if n == 1 else [f"dX{i}" for i in range(n)]


def _described(items):
    """``"3 arrays ((4, 5), (5, 3), (3,))"``: the shape of each array, a non-array item by its type (then "items")."""
    what = "arrays" if all(isinstance(v, np.ndarray) for v in items) else "items"
    return f"{len(items)} {what} ({', '.join(str(v.shape) if isinstance(v, np.ndarray) else type(v).__name__ for v in items)})"


class ReturnedGradients:
    """A ``backward(dY)`` that returns the gradients of its weights after those of its inputs, ``(dX, dW, db)``, one
    per input then one per weight in the order the class defines them (as a CS231n ``NAME_backward`` returns
    ``(dx, dw, db)`` and PyTorch's ``autograd.Function.backward`` one gradient per input). :meth:`attach` makes
    ``backward`` return the inputs' gradients alone and keep the weights' in ``grads[key]`` (a params dict, ``keys``)
    or in ``_gradcheck_returned[i]``, where the checker reads them as it reads ``self.dW``. Items in another order are
    paired by shape when every shape differs (:meth:`by_shape`, ``order``); a weight whose gradient backward also
    stores and that is in ``keep`` is read where it is stored (:func:`_returned_grads`)."""

    def __init__(self, n_inputs, shapes, keys=None, keep=(), order=None):
        self.n, self.shapes, self.weights, self.keys = n_inputs, dict(shapes), list(shapes), keys
        self.order = order  # where each gradient is among the items backward returns (by_shape), None: in order
        self.keep = set(keep)  # weights whose stored gradient (grads['W']) is checked: not overwritten
        self.dict_keys = None  # backward returns (dX, {key: dW}): each weight's key (_dict_returned), else None

    @staticmethod
    def line_up(obj, inputs, rets, weights):
        """The weights (names, in ``weights``' order) the items of ``rets`` after the inputs' are the gradients of:
        every item the shape of its input or weight; ``weights`` that are buffers (``running_mean``) are left out when
        their number does not match. AdapterError saying what came back and what was expected otherwise."""
        n, ws = len(inputs), list(weights)
        if len(rets) - n != len(ws):
            ws = [w for w in ws if not _buffer_name(w)]
        want = [np.shape(x) for x in inputs] + [np.shape(weights[w]) for w in ws]
        gone = getattr(rets, "unreturned", ())  # a weight the dict backward returns has no key for: not returned
        if len(rets) == len(want) and all(isinstance(r, np.ndarray) and r.shape == s or r is None and
                                          (x.dtype.kind != "f" or i in gone)
                                          for i, (r, s, x) in enumerate(zip(rets, want, [*inputs, *(weights[w] for w in ws)]))):
            return ws
        names = _dx_names(obj, n) + ["d" + w for w in ws]
        if (order := ReturnedGradients.by_shape(n, rets, want)) is not None:  # (dX, db, dW): distinct shapes
            rets.order, rets.names = order, names
            return ws
        raise AdapterError(
            f"{type(obj).__name__}.backward(dY) returned a {getattr(rets, 'kind', type(rets)).__name__} of {_described(rets)}; gradcheck expected {names[0] if n == 1 else '(' + ', '.join(names[:n]) + ')'} alone "
            f"(shape {', '.join(str(s) for s in want[:n])}), the weights' gradients stored by backward (self.dW, or "
            f"grads['W'] for a params dict) and not returned; or every gradient returned: the tuple ({', '.join(names)}) of shapes "
            f"{', '.join(str(s) for s in want)}: one gradient per input, then one per weight in the order the class "
            f"defines them{' (' + ', '.join(ws) + ')' if ws else ' (it has no weight forward uses)'}."
            + (STORED_INPUTS_ADVICE if isinstance(rets, list) and n == 1 and all(np.shape(r) == want[0] for r in rets) else "")
            + list_input_advice(obj))

    @staticmethod
    def by_shape(n, rets, want):
        """Where each of the ``want`` shapes (inputs', then weights') is among the items ``rets``, when every shape
        differs and every item is an array of one of them, none twice, each input's there: ``[index or None (a
        weight's gradient not returned)]``; else None (then only the class's order pairs them)."""
        if len(set(want)) < len(want) or not all(isinstance(r, np.ndarray) and r.shape in want or r is None
                                                 for r in rets):
            return None
        order = [next((j for j, r in enumerate(rets) if r is not None and r.shape == s), None) for s in want]
        nones = {j for j, r in enumerate(rets) if r is None}  # (dX, None, db): None where dW's place is
        if len({j for j in order if j is not None}) + len(nones) < len(rets) or None in order[:n] or \
                nones and (len(rets) != len(want) or nones != {k for k, j in enumerate(order) if j is None}):
            return None
        return order

    def text(self, obj, inputs):
        """The header's protocol text."""
        same = [w for w in self.weights if [self.shapes[v] for v in self.weights].count(self.shapes[w]) > 1]
        return (f"backward(dY) -> ({', '.join(_dx_names(obj, len(inputs)) + ['d' + w for w in self.weights])}), "
                f"read as one gradient per input, then one per weight in the order the class defines them "
                f"({', '.join(f'{w} {self.shapes[w]}' for w in self.weights)}), as a CS231n backward "
                "and PyTorch's autograd.Function return them (gradcheck's own protocol: backward returns dX alone and "
                "stores self.dW)" + (f"; {' and '.join(same)} have the same shape: paired by that order, so a gradient "
                                     "returned out of order FAILs as swapped" if same and not self.dict_keys
                                     else ""))

    def attach(self, obj):
        """Switch ``obj`` to a subclass of its class (same name) whose ``backward`` keeps the weights' gradients."""
        cls, n, keep, order = type(obj), self.n, self.keep, self.order
        keys = None if self.keys is None else [k if k not in keep else None for k in self.keys]

        dict_keys = self.dict_keys

        def backward(self_, dY, *rest, **kw):
            r = cls.backward(self_, dY, *rest, **kw)
            if not isinstance(r, (tuple, list)):  # one array: what it is, for the check to report
                return r
            if dict_keys is not None and r and isinstance(r[-1], dict):  # (dX, {'gamma': dgamma}): in weight order
                r = [*r[:-1], *(None if k is None else r[-1].get(k) for k in dict_keys)]
            if order is not None and len(r) > max(j for j in order if j is not None):
                r = [None if j is None else r[j] for j in order]
            if keys is None:
                self_.__dict__["_gradcheck_returned"] = list(r[n:])
            else:
                if not isinstance(self_.__dict__.get("grads"), dict):
                    self_.__dict__["grads"] = {}
                self_.__dict__["grads"].update((k, g) for k, g in zip(keys, r[n:]) if k is not None)
            return r[0] if n == 1 else tuple(r[:n])
        backward.__signature__ = inspect.signature(cls.backward)
        _subclass(obj, f"{cls.__name__}.backward returns (dX, dW, ...), but gradcheck cannot wrap this class to read "
                  "the weights' gradients from it; store them in backward (self.dW) and return dX alone",
                  backward=backward, _gradcheck_returns_weights=True)


#: What to do about a backward returning one dX per input forward stored (tester23s M1, numpy-ml's convention).
STORED_INPUTS_ADVICE = (" If forward appends its input to a list (numpy-ml's self.X.append(X)) and backward returns one dX per "
            "stored input, the list grew because gradcheck runs forward many times: give the class numpy-ml's "
            "flush_gradients() (it empties that list and zeroes the gradients; gradcheck calls it before each "
            "forward, as numpy-ml's update() does after each step), or keep the last input alone (self.X = [X]).")


def _returned_grads(obj, inputs, kw, weights, info, keys=False):
    """``{weight: gradient name}`` of a ``backward`` that returns ``(dX, dW, db)`` (:class:`ReturnedGradients`,
    attached, its header text in ``info``): ``grads[k]`` for a params dict (``keys``), else ``_gradcheck_returned[i]``;
    None when backward returns its inputs' gradients alone (or raised: the check reports it). A gradient backward also
    stores (``self.dW``, ``grads['W']``) that differs from the returned one: the one further from a central difference
    (:func:`_farther`) is read, so a wrong one of the two FAILs, the header saying which (the issue-10 tester's X18);
    one not returned but stored is read where stored (``info['read_from']``: which one each is, for the FAIL line).
    AdapterError when the returned items do not line up with the
    inputs and ``weights`` (:meth:`ReturnedGradients.line_up`)."""
    rets = _try(_returned, obj, inputs, kw) if inputs is not None else None
    if rets is None:
        return None
    rets, dict_keys = _dict_returned(rets, weights)
    ws = ReturnedGradients.line_up(obj, inputs, rets, weights)
    order, stored, notes, read = getattr(rets, "order", None), {}, [], []
    if order is not None:
        items = ["None"] * len(rets)
        for k, j in ((k, j) for k, j in enumerate(order) if j is not None):
            items[j] = rets.names[k]
        missing = [rets.names[k] for k, j in enumerate(order) if j is None]
        notes.append(f"backward returns ({', '.join(items)}): paired by shape, every gradient's shape differing"
                     + (f"; {', '.join(missing)} not returned" if missing else ""))
        rets = _ReturnedItems([None if j is None else rets[j] for j in order], kind=rets.kind, stored=rets.stored)
    for i, w in enumerate(ws):  # backward also stores self.dW / grads['W']: what an optimizer steps with
        r = rets[len(inputs) + i]
        names = [f"{d}[{w!r}]" for d in GRAD_DICTS] if keys else [g.format(w) for g in GRAD_NAMES]
        s = next((n for n in names if isinstance(rets.stored.get(n), np.ndarray)
                  and rets.stored[n].shape == np.shape(weights[w])), None)
        where = f"self.{s}" if not keys else s
        if s is not None and r is None:  # returned (dX, dW), stored self.db: the stored one is checked
            stored[w] = s
            notes.append(f"the check reads the stored {where} in its place")
            read.append(f"d{w}: the stored {where} (backward does not return d{w})")
        if s is None or r is None or np.array_equal(rets.stored[s], r):
            continue
        wrong = _farther(obj, inputs, kw, weights[w], {"stored": rets.stored[s], "returned": r})
        note, line = _differ_texts(where, f"d{w}", wrong)
        notes.append(note)
        read.append(line)
        if wrong == "stored":
            stored[w] = s
    rg = ReturnedGradients(len(inputs), {w: tuple(np.shape(weights[w])) for w in ws},
                           [w for w in ws] if keys else None, keep=stored, order=order)
    rg.dict_keys = [dict_keys.get(w) for w in ws] if dict_keys else None
    rg.attach(obj)
    if dict_keys:
        notes.insert(0, f"the weights' gradients read from the dict backward returns last (keys "
                        f"{', '.join(repr(dict_keys[w]) for w in ws if dict_keys.get(w) is not None)})"
                        + "".join(f"; d{w} not returned (the dict has no key for {w})" for w in ws
                                  if dict_keys.get(w) is None and w not in stored))
    info.update(protocol="returned", text=rg.text(obj, inputs) + "".join(f"; {t}" for t in notes))
    if read:  # which of the two a gradient is, for its FAIL line: ["dW: the stored self.dW, not ..."]
        info["read_from"] = read
    return {w: stored.get(w) or (f"grads[{w!r}]" if keys else f"_gradcheck_returned[{i}]") for i, w in enumerate(ws)}


def _dict_returned(rets, weights):
    """``(items, {weight: key})``: a backward returning ``(dX, {'gamma': dgamma, 'beta': dbeta})`` (uesina15-max's
    transformer: corpus36 F1), its last item a dict whose every key names a weight (``gamma``) or its gradient
    (:data:`GRAD_NAMES`: ``dgamma``, ``grad_gamma``), read as ``(dX, dgamma, dbeta)`` in the class's weight order (None
    for a weight the dict lacks); ``(rets, {})`` for any other return."""
    last = rets[-1] if len(rets) else None
    if not isinstance(last, dict) or not last or not all(isinstance(k, str) for k in last):
        return rets, {}
    names = {g.format(w).lower(): w for w in weights for g in ("{}", *GRAD_NAMES)}
    if not all(k.lower() in names for k in last) or len({names[k.lower()] for k in last}) < len(last):
        if any(k.lower() in names for k in last):  # (dX, {'gamma': .., 'eps': 0.0}): the dict form, a key naming no weight
            stray = [k for k in last if k.lower() not in names]
            raise AdapterError(
                f"backward(dY) returned a {rets.kind.__name__} of {_described(rets)}: its last item, a dict, is read as "
                f"the weights' gradients by key (a weight's name or its gradient's: 'gamma', 'dgamma', 'grad_gamma'), "
                + (f"but {', '.join(map(repr, stray))} name{'s' if len(stray) == 1 else ''} no weight" if stray else
                   "but two keys name the same weight")
                + f" (the weights: {', '.join(weights)}). Return only the weights' gradients in the dict")
        return rets, {}
    keys = {names[k.lower()]: k for k in last}
    ws = [w for w in weights if not _buffer_name(w) or w in keys]
    items = _ReturnedItems([*rets[:-1], *(_copy(last.get(keys.get(w))) for w in ws)], rets.kind, rets.stored)
    items.unreturned = {len(rets) - 1 + i for i, w in enumerate(ws) if w not in keys}  # (dX, {'gamma': dgamma})
    return items, keys


def _farther(obj, inputs, kw, weight, grads):
    """The key of ``grads`` (``{"stored": dW, "returned": dW}``) further from the central difference
    (:func:`gradcheck._kernel.difference_quotient`, the checker's one kernel) of ``L = sum(forward(*inputs) * dY)``
    along one random direction of ``weight`` (the probe's dY; state restored)."""
    d, dots = _central_gaps(obj, inputs, kw, weight, grads)
    return max(grads, key=lambda k: abs(dots[k] - d))


def _central_gaps(obj, inputs, kw, weight, grads):
    """``(d, {key: <g, u>})``: the central difference ``d`` (:func:`gradcheck._kernel.difference_quotient`) of
    ``L = sum(forward(*inputs) * dY)`` along one random direction ``u`` of ``weight`` (the probe's dY, state
    restored), and each gradient of ``grads`` along it (:func:`_farther`'s measure)."""
    u = probe_rng(11).standard_normal(np.shape(weight))
    eps = 1e-6 * max(1.0, float(np.max(np.abs(weight)))) if np.size(weight) else 1e-6
    with _all_undone([obj]) as rewind:
        base = weight.copy()

        def loss(t):
            rewind()
            weight[...] = base + t * u
            y = _forward(obj, [x.copy() for x in inputs], kw)
            return float(np.sum(np.asarray(y, dtype=np.float64) * probe_rng(7).standard_normal(np.shape(y))))
        try:
            d = difference_quotient(loss, eps, "central")
        finally:
            weight[...] = base
    return d, {k: float(np.sum(g * u)) for k, g in grads.items()}


def _one_per_memory(obj, children, pairs, info):
    """Parameters that share memory as one (:func:`_aliases`): ``(pairs without the tied ones, tied {enc.W:
    [(dec.W, its gradient attribute, positions)]}, views {Wx: [W]}, {name: array})``; ``info['unchecked']``
    loses the arrays inside checked parameters' memory (views) and those inside a larger unchecked one."""
    named = {n: _value(obj, children, n, pairs) for n in [*pairs, *info["unchecked"]]}
    tied, views = _aliases(named, list(pairs))
    listed = {rep: [m for m, pos in ms if "." in m and (pos is None or _collector(named, m, ms))]
              for rep, ms in tied.items() if rep.startswith(("params[", "parameters[")) and "." not in rep}
    for rep, ms in [(r, ms) for r, ms in listed.items() if ms]:  # DLfS-2's model.params += layer.params
        tied[rep] = [(m, pos) for m, pos in tied[rep] if m not in ms]
        for top in dict.fromkeys(_collector(named, m, tied[rep]) or rep for m in ms):  # W_out = W_in.T listed too
            mine = [m for m in ms if (_collector(named, m, tied[rep]) or rep) == top]
            info.setdefault("collected", {}).update(dict.fromkeys(mine, top))
            info.setdefault("listed", []).append(
                f"{joined_and([top, *mine])} are one array listed twice (the model's {top} collects {mine[0]}): "
                f"checked once, with the model's gradient {pairs[top]}, which its optimizer steps with")
    shared = {m for ms in tied.values() for m, _ in ms} | {m for ms in listed.values() for m in ms}
    tied = {rep: ms for rep, ms in tied.items() if ms}
    tied = {rep: [(m, pairs[m], pos) for m, pos in ms] for rep, ms in tied.items()}
    info["unchecked"] = [w for w in info["unchecked"] if w not in views]
    return {w: g for w, g in pairs.items() if w not in shared}, tied, views, named


def _collector(named, m, ms):
    """The model's own ``params[i]`` among ``ms`` (``[(name, positions)]``, tied to one parameter) that is the very
    array ``m`` (a sub-layer's ``layers.1.params[0]``) is: DLfS-2's ``model.params += layer.params`` listing a
    view (``W_out = W_in.T``) once more; None when there is none."""
    return next((x for x, _ in ms if "." not in x and x != m and named[x] is named[m]), None)


def _views_info(info, tied, views, named, pairs):
    """``info['tied']`` (``["enc.W:dec.W"]``: the report names the gradients summed into each) and
    ``info['views']`` (``["Wh=W[5:8]"]``: it names the block where a checked gradient is wrong); returns
    :class:`Adapted`'s ``views``: ``{W: [(Wx, positions)]}`` for the views of one checked parameter."""
    if tied:
        info["tied"] = [f"{rep}:{', '.join(m for m, _, _ in ms)}" for rep, ms in tied.items()]
    out = {r: [(u, _positions(named[r], named[u])) for u, over in views.items() if over == [r]]
           for r in pairs if any(over == [r] for over in views.values())}
    blocks = [f"{u}={r}[{b}]" for r, us in out.items() for u, pos in us if (b := _box(named[r].shape, pos))]
    if blocks:
        info["views"] = blocks
    return out


def _value(obj, children, name, pairs):
    """The array (or number) of parameter or attribute ``name`` (``W``, ``l1.W``, a sub-layer's ``params['W']``)."""
    owner, key = _owner(obj, children, name)
    if pairs.get(name, "").startswith("grads[") and isinstance(getattr(owner, "params", None), dict):
        return owner.params.get(key)
    return getattr(owner, key, None)


def joined_and(ns):
    """``"a, b and c"``: the one way a list of names is said in a sentence (adapters' notes, diagnoses)."""
    return ns[0] if len(ns) == 1 else f"{', '.join(ns[:-1])} and {ns[-1]}"


def _alias_text(tied, views, named, pairs):
    """The header's account of arrays that share memory (:func:`_aliases`)."""
    out = []
    for rep, ms in tied.items():
        all_ = [rep, *(m for m, _, _ in ms)]
        each = "both" if len(all_) == 2 else "each"
        if all(named[m] is named[rep] for m in all_):
            out.append(f"{joined_and(all_)} are the same array: their gradients are summed, as an optimizer that "
                       f"steps {each} applies them")
        else:
            out.append(f"{joined_and(all_)} share memory ({rep} holds it all): their gradients are added into {rep}'s, "
                       f"element by element, as an optimizer that steps {each} applies them (unless {rep}'s gradient "
                       "already holds theirs, as a flat vector's does: then it is read alone)")
    by = {}
    for u, over in views.items():
        by.setdefault(tuple(over), []).append(u)
    for over, us in by.items():
        checked = [f"d{r}" for r in over if r in pairs]  # as the table names them
        view = "a view" if len(us) == 1 else "views"
        out.append(f"{joined_and(us)} {'is' if len(us) == 1 else 'are'} {view} of {joined_and(list(over))}" +
                   (f": {joined_and(list(over))} is perturbed (moving {'it' if len(us) == 1 else 'them'}) and "
                    f"{joined_and(checked)} checked" if checked else ""))
    return "".join(f"; {o}" for o in out)


#: What a parameter's name looks like (the last part of ``l1.W``, ``Ws[1]``): ``W``, ``w1``, ``Wq``, ``W_hh``, ``b``,
#: ``bq``, ``Wx_proj``, ``weight``, ``bias``, ``kernel``, ``filters``, ``gamma``, ``beta``, ``alpha``, ``scale``,
#: ``log_scale``, ``emb``, ``embed``, ``embedding``, ``proj``, ``q_proj``, ``theta``, ``coef``, ``in_weight``, a learned
#: initial state ``h0``, ``c0``. A constant buffer's name (``mask``, ``causal``, ``pe``, ``pos``, ``running_mean``) is none.
PARAM_NAME = re.compile(r"[wb](?:_?[a-z]{1,3})?_?\d*|(?-i:W)[a-z]{0,3}_[a-z]\w*|[uv]_?\d*|[hc]_?0|"
                        r"(?:weights?|bias(?:es)?|kernels?|filters?|gamma|beta|alpha|(?:log_)?scales?|shift|emb|embed|"
                        r"embeddings?|proj|projection|theta|coefs?|coefficients?)(?:_[a-z]{1,3})?_?\d*|"
                        r"[a-z]\w*_(?:proj|projection|weights?|bias|kernel|emb|embed|embedding)_?\d*", re.IGNORECASE)


def _split_buffers(unchecked):
    """``(weights, buffers)`` of the arrays forward uses without a gradient, in a layer that sets gradients for
    others: a private name (``_pe``, ``_T``, ``_c['W']``) is a buffer (a constant: a warning); any other, whatever it
    is called (``b``, ``c``, ``A``, ``T``, ``pe``, ``mask``), may be a weight whose gradient backward forgot, until
    what the layer does tells it from a buffer (:func:`_buffers_by_behaviour`: forward writes it) or ``--constants``
    declares it one (tester15 H3: a rule by name passed Goodfellow's forgotten ``dc``)."""
    return [w for w in unchecked if not _private(w)], [w for w in unchecked if _private(w)]


def _private(w):
    """Whether array ``w`` (``l1._pe``, ``_c['W']``) has a private name: its last part, or its container's."""
    key = _bare(w.rpartition(".")[2])
    path = _item_path(key)
    return (path[0] if path else key).startswith("_")


def _buffers_by_behaviour(obj, inputs, kws, info, pairs, children, key="unchecked", unchecked=None):
    """The weights among ``info[key]`` (forward uses them: the output moves with them; backward sets no gradient; not
    private: :func:`_split_buffers`), told from buffers by what the layer does (Z15): an array forward writes (in any
    mode of ``kws``: a running statistic, a dropout mask, a scratch buffer) is a buffer; one it only reads is a weight
    whose gradient backward forgot, whatever its name (a hidden bias ``bh``, Goodfellow's output bias ``c``, a
    temperature ``T``; a constant is marked private, ``self._T``, or declared by ``--constants``). The buffers join
    ``info['buffers']``, why in ``info['buffer_why']`` (``["buf: why"]``: strings, as ``read_from``, cross from the
    sandbox); ``pairs`` is kept for the callers; ``unchecked``: the arrays to tell apart, when not ``info[key]``."""
    unchecked = info[key] if unchecked is None else unchecked
    if not unchecked:
        return []
    written = (_try(_forward_writes, obj, inputs, kws, unchecked, children) or set()) if inputs is not None else set()
    buffers = {w: "forward writes it" for w in unchecked if w in written}
    buffers.update(_eval_only(obj, inputs, [w for w in unchecked if w not in written], children))
    if buffers:
        info["buffers"] = [*info.get("buffers", []), *buffers]
        info["buffer_why"] = [*info.get("buffer_why", []), *(f"{w}: {why}" for w, why in buffers.items())]
    return [w for w in unchecked if w not in buffers]


def _eval_only(obj, inputs, names, children):
    """``{name: why}`` of the arrays among ``names`` a layer with a training switch (:func:`mode_keyword`) writes
    in training mode, or does not read there: running statistics, read in eval mode alone, which no gradient step
    moves (a weight moves the training output: tester15 H3). The switch is put back after."""
    if not (names and inputs is not None and (_takes_training(obj.forward) or mode_keyword(obj.forward) is not None)):
        return {}
    with _in_mode(obj, True) as kw:  # a switch on the object (self.bn_param['mode']) set to training, then put back
        written = _try(_forward_writes, obj, inputs, [kw], names, children) or set()
        used = (_try(_used_arrays, obj, inputs, kw, [n for n in names if n not in written], children) or [None])[0]
    out = {n: "a training forward writes it" for n in names if n in written}
    return out | ({n: "forward reads it in eval mode alone, a running statistic" for n in names
                   if n not in out and n not in used} if used is not None else {})


def _forward_writes(obj, inputs, kws, names, children):
    """The arrays among ``names`` that forward writes, rebinding them or changing them in place, in any mode of the
    keywords ``kws`` (every write undone)."""
    out = set()
    with _all_undone([obj, *children.values()]) as rewind:
        for kw in kws:
            before = {n: (v, v.copy()) for n in names[:MAX_PROBED]
                      if isinstance(v := getattr(*_owner(obj, children, n), None), (np.ndarray, np.generic))}
            _run(obj, rewind, inputs, kw)
            out |= {n for n, kept in before.items() if not _same(getattr(*_owner(obj, children, n), None), kept)}
    return out


def _buffer_name(w):
    """Whether array ``w`` (``l1._pe``, ``stats['running_mean']``) is named like a buffer, not a weight: an item
    is a weight's when its container or one of its keys is named like one (``Ws[1]``, ``p['W']``)."""
    key = _bare(w.rpartition(".")[2])
    path = _item_path(key)
    names = [path[0], *(k for k in path[1] if isinstance(k, str))] if path else [key]
    return names[0].startswith("_") or not any(PARAM_NAME.fullmatch(n) for n in names)


def _sub_candidates(children):
    """``(attribute names of sub-layers without params dicts (``l1.W``) and the arrays outside ``params`` of those
    with one (``bn.running_mean``: a buffer, or a weight not in params), {``l2.W``: ``grads['W']``} of the
    latter, the number attributes among the first)``."""
    cand, pairs, numbers = [], {}, []
    for name, c in children.items():
        p = getattr(c, "params", None)
        if isinstance(p, dict):
            pairs.update({f"{name}.{k}": f"grads[{k!r}]" for k, v in list(p.items())[:MAX_PROBED]
                          if isinstance(k, str) and (_float_array(v) or _is_number(v))})
            held = [v for v in list(p.values())[:MAX_PROBED] if isinstance(v, np.ndarray)]
            cand += [f"{name}.{k}" for k, v in _arrays(c).items()
                     if not any(np.shares_memory(v, h) for h in held)]
        else:
            cand += [f"{name}.{k}" for k in _arrays(c)]
            numbers += [f"{name}.{k}" for k in _float_numbers(c)]
    return cand + numbers, pairs, numbers


def _child_of(name, children):
    """The sub-layer of ``children`` a dotted ``name`` of :func:`_sub_candidates` (``sub-layer.key``) is in: the longest
    one it starts with, since a params key may hold dots itself (``layers.0`` holding ``params["0.0.W"]``, a nested
    container's: dup31, the probe's KeyError 'layers.0.0.0'); ``name.rpartition('.')[0]`` when none."""
    return max((c for c in children if name.startswith(f"{c}.")), key=len, default=name.rpartition(".")[0])


def _in_order(pairs, children):
    """``pairs`` in PyTorch's ``named_parameters`` order: the layer's own, then each sub-layer's in turn."""
    rank = {n: i for i, n in enumerate(children, 1)}
    return dict(sorted(pairs.items(), key=lambda kv: rank.get(_child_of(kv[0], children), 0)))


def _children_text(children, pairs, lead, unchecked=(), shared=None, collected=None, idle=()):
    """The header's account of the sub-layers: each one's parameters, checked under dotted names
    (``shared``: ``{dec.W: enc.W}``, a parameter checked as another's, :func:`_aliases`; ``collected``:
    ``{layers.0.params[0]: params[0]}``, one the model's own list collects, Deep Learning from Scratch vol. 2's
    ``self.params += layer.params``, checked as the model's: never "no parameters", tester15 L4; ``idle``: weights
    idle on this input, their gradients 0, not checked: never "no parameters" either, fix39corpus)."""
    if not children:
        return ""
    parts, shared, collected = [], shared or {}, collected or {}
    for name, c in children.items():
        shown = _shown(pairs)
        mine = [shown.get(w, w) if w in pairs else f"{w} (shared with {shared[w]})" for w in [*pairs, *shared]
                if w.rpartition(".")[0] == name]
        bare = [w for w in unchecked if w.rpartition(".")[0] == name]
        held = {w.rpartition(".")[2]: top for w, top in collected.items() if w.rpartition(".")[0] == name}
        lazy = [w for w in idle if w.rpartition(".")[0] == name]
        if not (mine or bare or held or lazy or _is_layer(c)):  # an object holding arrays forward does not use
            continue
        style = "params/grads dicts" if isinstance(getattr(c, "params", None), dict) else "attributes"
        parts.append(f"{_shortened(name)} ({type(c).__name__}: " + (f"{', '.join(mine)}, {style}" if mine else "") +
                     ("; " if mine and bare else "") + (f"{', '.join(bare)} without gradients" if bare else "")
                     + ("; " if (mine or bare) and held else "")
                     + (f"{', '.join(held)}, checked as the model's {', '.join(held.values())}" if held else "")
                     + (_no_own(name, [*pairs, *unchecked]) if not mine + bare + lazy and not held else "")
                     + ("; " if (mine or bare or held) and lazy else "")
                     + (f"{', '.join(lazy)} idle on this input, not checked (see below)" if lazy else "") + ")")
    checked = any("." in w for w in pairs)
    return lead + ", ".join(parts) + ("; their parameters are checked under these dotted names" if checked else "")


def _no_own(name, params):
    """The header's words for a sub-layer ``name`` with no parameter of its own: ``no parameters``, or where its
    sub-objects' are (PyTorch's ``fc1`` whose ``fc1.weight`` holds the array: ``parameters in fc1.weight``)."""
    deeper = list(dict.fromkeys(w.rpartition(".")[0] for w in params if w.startswith(name + ".")))
    return f"parameters in {', '.join(map(_shortened, deeper))}" if deeper else "no parameters"


def _built(built, params):
    """The header's note on parameters the first forward created (:func:`_lazy_build`)."""
    made = [k for k in built if k in params or k in {f"params[{p!r}]" for p in params}]  # W; params['W'] of a
    # dict of Nones the first forward fills (_fill_slots)
    return f" (created by the first forward, then checked: {', '.join(made)})" if made else ""


def _unseen(obj, inputs, kws, arrays, children):
    """Arrays of a params-dict layer (and of its sub-layers) that forward uses (in the modes of ``kws``:
    :func:`_probe_uses`) but ``params`` does not hold."""
    params = [p for p in obj.params.values() if isinstance(p, np.ndarray)]
    def outside(v):
        return not any(np.shares_memory(v, p) for p in params)
    others = [k for k, v in arrays.items() if outside(v)]  # a 0-d array too, as a float (M4) is not (tester14 #1)
    others += [k for k, v in _float_numbers(obj).items() if not _hyperparameter(v)]  # np.float64(0.25)
    cand, sub_pairs, _ = _sub_candidates(children)
    sub_dicts = [n for n in sub_pairs if outside(children[(c := _child_of(n, children))].params[n[len(c) + 1:]])]
    cand = [n for n in cand if not _hyperparameter(_fields(_owner(obj, children, n)[0]).get(n.rpartition(".")[2]))
            and outside(getattr(*_owner(obj, children, n)))]
    return (_probe_uses(obj, inputs, kws, others + cand, children)[0] or []) + sub_dicts


#: Containers of a PyTorch-like ``Module`` that its parameters' names leave out (``_parameters.weight``: ``weight``).
MODULE_DICTS = ("_parameters", "_modules")


def _shown(pairs):
    """``{name: shown name}`` of the parameters of ``pairs`` (``{name: gradient}``) not named as the student's code
    or PyTorch names them: a name-mangled ``_Cls__W`` (``l1._Cls__W``) is shown ``W`` (``l1.W``, :func:`_bare`),
    its gradient ``dW``; a PyTorch-like ``Parameter``'s ``_parameters.weight.data`` (with ``.grad``) ``weight``, as
    ``named_parameters()`` names it. Only when no other parameter has that name."""
    def name(w):
        parts = w.split(".")  # a private list of layers, a Sequential's _layers: layers._layers.1.W is layers.1.W
        parts = [p for i, p in enumerate(parts) if p not in MODULE_DICTS and not (
            0 < i and p.startswith("_") and i + 1 < len(parts) - 1 and parts[i + 1].isdigit())]
        if len(parts) > 1 and pairs.get(w) in HELD_VALUES.get(parts[-1], ()):  # weight.data, W.value: weight, W
            parts.pop()
        return ".".join(parts[:-1] + [_bare(parts[-1])]) if parts else w
    shown = {w: name(w) for w in pairs}
    shown = {w: n for w, n in shown.items() if n != w and list(shown.values()).count(n) == 1 and n not in pairs}
    for w in [w for w in pairs if len(shown.get(w, w)) > NAME_LIMIT]:  # 60 lists deep: root.0*60.W
        n = short = _shortened(shown.get(w, w))
        for i in range(2, len(pairs) + 2):
            if n not in pairs and n not in [v for k, v in shown.items() if k != w]:
                break
            n = f"{short}#{i}"
        shown[w] = n
    return shown


#: The longest name of a parameter or sub-layer shown and sent between gradcheck's processes (their replies carry
#: names of at most 120 characters): a longer one, 60 containers deep or a long attribute name, is shortened
#: (:func:`_shortened`), the parameter read under its real name (:attr:`Adapted._real`).
NAME_LIMIT = 100


def _shortened(name):
    """``name`` in at most :data:`NAME_LIMIT` characters: a step repeated three times or more written once with its
    count (``root.0.0.0.0.W`` is ``root.0*4.W``), then, still too long, its middle left out (``...``)."""
    runs = []
    for part in name.split("."):
        if runs and runs[-1][0] == part:
            runs[-1][1] += 1
        else:
            runs.append([part, 1])
    text = ".".join(f"{p}*{n}" if n > 2 else ".".join([p] * n) for p, n in runs)
    half = (NAME_LIMIT - 3) // 2
    return text if len(text) <= NAME_LIMIT else text[:half] + "..." + text[-half:]


def _as_written(name):
    """Attribute ``name`` as the class's code spells it: ``_Cls__dW`` is ``__dW``."""
    m = MANGLED.fullmatch(name)
    return f"__{m[2]}" if m else name


def _wrap(obj, pairs, own=False, tied=None, views=None):
    """An :class:`Adapted` of a class named like the student's (reports say ``Linear``), its name-mangled
    parameters named as written (:func:`_shown`)."""
    shown = _shown({**pairs, **{m: g for ms in (tied or {}).values() for m, g, _ in ms}})
    pairs = {shown.get(w, w): g for w, g in pairs.items()}
    tied = {shown.get(r, r): [(shown.get(m, m), g, pos) for m, g, pos in ms] for r, ms in (tied or {}).items()}
    views = {shown.get(r, r): us for r, us in (views or {}).items()}
    return type(type(obj).__name__, (Adapted,), {"__module__": __name__})(
        obj, pairs, own, tied, views, {n: w for w, n in shown.items()})


def _unsafe_variants(obj, inputs, mk, variants) -> list[str]:
    """The :func:`_unset_switches` texts of the switches a variant of ``mk`` sets (:func:`switch_variants`) when one
    of its forwards raises or returns no float array, run on a copy of ``obj`` with the probe ``inputs``
    (``forward(X, square=True, return_cache=True)`` returning a tuple): those combinations are then not run, and
    named NOT CHECKED; ``[]`` when every one returns a float array (or no probe can be run)."""
    mk, twin = _lead(obj.forward, mk), _twin(obj) if inputs else None
    for keyword, *_ in variants if twin is not None else ():
        for training in (False, True):
            Y, why = _twin_forward(twin, inputs, ModeKw(twin.forward, training, keyword))
            if not why and not (isinstance(Y, np.ndarray) and Y.dtype.kind == "f"):
                why = f"returned a {type(Y).__name__}"
            if why and not isinstance(keyword[1], tuple):  # a string's value: kind='sigmoid'
                return [f"{mk[0]} = {_value_text(mk[1])} (other value {_value_text(keyword[2])} not run: with it "
                        f"forward {why})"]
            if why:
                names, vals = keyword[0].split(", "), keyword[2 if training else 1]
                return [f"{n} = {_value_text(d)} (other value {_value_text(v)} not run: with "
                        f"{', '.join(f'{a}={_value_text(b)}' for a, b in zip(names, vals))} forward {why})"
                        for (n, d, _), v in zip(_beside(obj.forward, mk), vals[1:]) if v != d][:1] or [why]
    return []


def _unsafe_flag(obj, inputs, mk) -> str:
    """For a boolean argument of forward that names no training switch (``forward(X, return_cache=False)``, checked
    at each value: :func:`_plain`), what its other value does that no check can read, run on a copy of ``obj``
    with the probe ``inputs``: ``"raised ValueError: ..."`` or ``"returned a tuple, not an array of the default's
    shape (4, 3)"``; "" when both values give arrays of one shape (or no probe can be run)."""
    if not (mk and isinstance(mk[1], (bool, str)) and _plain(mk) and "," not in mk[0]
            and not mk[0].startswith(SET_SWITCHES)) or not inputs or (twin := _twin(obj)) is None:
        return ""
    Y, failed = _twin_forward(twin, inputs, {mk[0]: mk[1]})
    other, why = _twin_forward(twin, inputs, {mk[0]: mk[2]}) if not failed else (None, "")
    if failed or why:  # the default fails: the check reports it
        return why
    if isinstance(Y, np.ndarray) and isinstance(other, np.ndarray) and other.dtype.kind == "f" \
            and other.shape != Y.shape:  # keepdims=True: checked with G of its shape (M3)
        return ""
    if isinstance(Y, np.ndarray) and not (isinstance(other, np.ndarray) and other.shape == Y.shape):
        what = f"an array of shape {other.shape}" if isinstance(other, np.ndarray) else f"a {type(other).__name__}"
        return f"returned {what}, not an array of the default's shape {Y.shape}"
    return ""


def _twin(obj):
    """A deep copy of ``obj`` to run forwards on that the check must not see, or None when it cannot be copied (the
    checks themselves then say what fails)."""
    try:
        return copy.deepcopy(obj)
    except Exception:  # noqa: BLE001 - student code
        return None


def _twin_forward(twin, inputs, kw):
    """``(Y, "")`` of one forward of ``twin`` (:func:`_twin`) on copies of ``inputs``, or ``(None, "raised ...")``."""
    xs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    try:
        return _forward(twin, [np.array(x, copy=True) for x in xs], kw), ""
    except Exception as exc:  # noqa: BLE001 - student code
        return None, _raised(exc)


def _reads_module_state(fn) -> bool:
    """Whether ``fn``'s source reads state of its module: a ``global`` statement, or a module-level name bound to
    something other than a module, a class, a function or a number/string constant (``_last["x"]``, a dict the last
    forward filled); True when the source cannot be read (the caller refuses then, as before)."""
    tree = _source(fn)
    if tree is None:
        return True
    space = getattr(getattr(fn, "__func__", fn), "__globals__", {})
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in space:
            v = space[node.id]
            if not (isinstance(v, (types.ModuleType, type, int, float, complex, str, bytes, bool, type(None)))
                    or callable(v)):
                return True
    return False


def _try(fn, *args):
    """A probe that fails (the student's forward raises) detects nothing: the check reports the error."""
    try:
        return fn(*args)
    except AdapterError:
        raise
    except Exception:  # noqa: BLE001 - student code; the real check calls it again and reports
        return None


def generators(obj):
    """numpy Generators / RandomStates and Python ``random.Random`` objects reachable from ``obj`` (:func:`walk`),
    each once, in a fixed order: a deep copy of ``obj`` gives its own generators in the same order. Modules,
    classes and functions are not entered (numpy's global generator is :func:`global_states`'), nor the states a
    held layer keeps (:func:`_rewind_record`: no generator among them; a rewinding forward walks its layer at every
    call, and Python's ``random`` state alone is a tuple of 625 ints)."""
    found = [v for _, v in walk(obj, enter=lambda path, v: not _rewind_record(path, v))
             if isinstance(v, (np.random.Generator, np.random.RandomState, random.Random))]
    return list({id(g): g for g in found}.values())


def _rewind_record(path, v) -> bool:
    """Whether ``v`` at ``path`` is what :func:`hold_random` keeps under ``_gradcheck_rewind``: ``(the states of the
    layer's generators, the global ones' states)``, values that hold no generator."""
    return path[-1:] == ((".", "_gradcheck_rewind"),) and type(v) is tuple and len(v) == 2 and type(v[0]) is list


def _state(g, state=None):
    """A generator's state (``state`` None), or set it."""
    if state is None:
        return (g.bit_generator.state if isinstance(g, np.random.Generator) else
                g.getstate() if isinstance(g, random.Random) else g.get_state())
    if isinstance(g, np.random.Generator):
        g.bit_generator.state = state
    elif isinstance(g, random.Random):
        g.setstate(state)
    else:
        g.set_state(state)


def global_states(states=None):
    """The states of numpy's global generator and of Python's ``random`` module's (``states`` None), or set them:
    a forward drawing from ``np.random.rand`` or ``random.random`` repeats its draws after they are set back."""
    if states is None:
        return np.random.get_state(), random.getstate()
    np.random.set_state(states[0])
    random.setstate(states[1])
    return states


def same_draws(obj, seed=0):
    """Set numpy's and Python's global generators and the generators ``obj`` holds (:func:`generators`, the i-th
    from ``[seed, i]``) to states made from ``seed`` alone, and a forward held by rewinding (:func:`hold_random`'s
    ``"rewind"``) to rewind to those from now on: ``obj`` and a copy of it built from edited files
    (:func:`gradcheck._float64_copy.own_gradients`), each in its own process, then draw the same masks. Returns
    None."""
    seed_globals(seed)
    gens = generators(obj)
    for i, g in enumerate(gens):
        if isinstance(g, np.random.Generator):
            g.bit_generator.state = type(g.bit_generator)(np.random.SeedSequence([seed, i])).state
        else:
            g.seed(seed * 1000003 + i)
    if "_gradcheck_rewind" in getattr(obj, "__dict__", {}):
        obj.__dict__["_gradcheck_rewind"] = ([_state(g) for g in gens], global_states())


#: numpy's functions as this module found them, before any checked code ran (the sandbox child loads it first; in
#: process, gradcheck imports it before the file it checks): :func:`numpy_patched` compares with them.
_NUMPY_AS_LOADED = {**{f"np.{n}": getattr(np, n) for n in ("dot", "matmul", "zeros", "ones", "empty", "eye", "full",
                                                          "array", "asarray")},
                    **{f"np.random.{n}": getattr(np.random, n) for n in ("randn", "rand", "random", "normal",
                                                                         "uniform", "standard_normal")}}


def numpy_patched(layer):
    """``{"np.dot": "nnfs.core", ...}``: numpy's functions (:data:`_NUMPY_AS_LOADED`) that the checked code replaced
    with one returning float32 for float64 input (the Neural Networks from Scratch book's header ``nnfs.init()``
    wraps np.dot, np.zeros, np.eye and np.random.randn to return float32: nnfs 0.5.1's core.py), each with the
    module of its replacement; {} when none was. Each replacement is called once on float64 input
    (:func:`_returns_float32`; review25g M3: a reproducible ``np.random.randn`` returning float64 was blamed for a
    forward's own ``astype(np.float32)``). ``layer`` is not read (every adapter call takes one)."""
    out = {}
    for name, orig in _NUMPY_AS_LOADED.items():
        mod, attr = (np.random, name[10:]) if name.startswith("np.random.") else (np, name[3:])
        now = getattr(mod, attr, orig)
        if now is not orig and _returns_float32(name, now):
            out[name] = str(getattr(now, "__module__", None) or type(now).__name__)[:80]
    return out


#: The words of a regulariser's strength in an attribute's name (:func:`strength_name`): CS231n's ``reg``, Neural
#: Networks from Scratch's ``weight_regularizer_l2``, Keras's ``l1``/``l2``, ``lam``/``lambd``/``lambda_``, PyTorch's
#: ``weight_decay``, ``wd``, scikit-learn's ``alpha``, ``penalty``.
_STRENGTH_WORDS = re.compile(r"regs?|regul[a-z]*|l[12][a-z0-9]*|lamb?d?a?|lamda|lmbda?|penalt[a-z]*|alpha[0-9]*|wd|w?decay")


def strength_name(name: str) -> bool:
    """Whether the attribute name ``name`` reads as a regulariser's strength, with or without leading underscores
    (``reg``, ``self._reg``, ``weight_regularizer_l2``, ``l2_lambda``, ``weight_decay``, ``alpha``): a word of it,
    split at underscores and case changes, is one of :data:`_STRENGTH_WORDS` (``decay`` only beside ``weight``).
    ``stride``, ``eps``, ``momentum``, ``lr`` are not."""
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
    return any(_STRENGTH_WORDS.fullmatch(w) and (not w.endswith("decay") or "weight" in words or w == "wdecay")
               for w in words)


def penalty_numbers(layer):
    """``{name: value}`` of the numbers among ``layer``'s own attributes (``__dict__`` and slots; not bools, finite,
    nonzero) whose names read as a regulariser's strength (:func:`strength_name`), private ones (``self._reg``) too:
    the strengths a penalty's gradient in backward may be made of (:meth:`gradcheck.diagnose._Probes.penalty`)."""
    return {k: float(v) for k, v in list(_fields(layer).items())[:MAX_PROBED * 4]
            if isinstance(k, str) and strength_name(k) and isinstance(v, (int, float, np.number))
            and not isinstance(v, (bool, np.bool_)) and np.isfinite(v) and v != 0}


#: How :func:`_returns_float32` calls each of :data:`_NUMPY_AS_LOADED` once: float64 arrays for the products and
#: conversions, a size for the constructors and draws (numpy's own give float64 for each).
_PROBE_ARGS = {"np.dot": "pair", "np.matmul": "pair", "np.array": "array", "np.asarray": "array",
               "np.full": ((2, 2), 0.5), "np.random.normal": (0.0, 1.0, (2, 2)), "np.random.uniform": (0.0, 1.0, (2, 2)),
               "np.random.randn": (2, 2), "np.random.rand": (2, 2), "np.eye": (2,)}


def _returns_float32(name, fn) -> bool:
    """Whether ``fn``, the checked code's replacement of numpy's ``name``, returns a float32 array when called
    once as numpy's would give float64 (:data:`_PROBE_ARGS`; a size ``(2, 2)`` for the others); False when it
    raises or returns anything else. numpy's global generator is put back as it was (a replaced draw drawing from
    it moves it); a generator of the replacement's own is not."""
    a = np.arange(4.0).reshape(2, 2) / 3
    how = _PROBE_ARGS.get(name, ((2, 2),))
    args = (a, a) if how == "pair" else (a,) if how == "array" else how
    state = np.random.get_state()
    try:
        got = fn(*args)
    except Exception:  # noqa: BLE001 - student code: a replacement that fails here is not shown to make float32
        return False
    finally:
        np.random.set_state(state)
    return getattr(getattr(got, "dtype", None), "type", None) is np.float32


def _state_digest(state, h) -> None:
    """Feed a generator's state (:func:`_state`: numpy's ``get_state()`` tuple with its key array, a
    ``bit_generator.state`` dict, ``random.getstate()``'s tuple of ints) into the hash ``h``: an array by its dtype,
    shape and bytes, a container holding an array or a container item by item, anything else (a tuple of ints
    too) by its ``repr``. Before, ``repr`` of the whole state:
    numpy's printing of the 624-word key took 7 ms of each :func:`random_draws` (5 % of a diagnosis), and it prints
    an array of more than 1000 values with "..." in place of its middle."""
    if isinstance(state, np.ndarray):
        h.update(f"array({state.dtype.str}, {state.shape})".encode())
        h.update(np.ascontiguousarray(state).tobytes())
    elif isinstance(state, (tuple, list, dict)) and any(
            isinstance(v, (np.ndarray, tuple, list, dict)) for v in (state.values() if isinstance(state, dict) else state)):
        h.update(type(state).__name__.encode() + b"(")
        for item in (state.items() if isinstance(state, dict) else state):
            _state_digest(item, h)
        h.update(b")")
    else:
        h.update(repr(state).encode() + b",")


def random_draws(layer):
    """``{name: fingerprint}`` of the states of the generators reachable from ``layer`` (:func:`generators`:
    ``self.rng`` as ``Generator 0``...) and of the global ones (numpy's, Python's ``random``): a call that draws
    random numbers changes a fingerprint (a short hash of the state, :func:`_state_digest`)."""
    def fingerprint(state):
        h = hashlib.sha1()
        _state_digest(state, h)
        return h.hexdigest()[:16]
    gens = generators(getattr(layer, "obj", layer)) if isinstance(layer, (Adapted, BoundLoss)) else generators(layer)
    out = {f"its {type(g).__name__}" + (f" #{i + 1}" if len(gens) > 1 else ""): fingerprint(_state(g))
           for i, g in enumerate(gens)}
    glob = global_states()
    return out | {"numpy's global generator": fingerprint(glob[0]), "Python's random module": fingerprint(glob[1])}


def global_names(layer):
    """How the report names the global generators a layer storing none draws from: numpy's, and Python's
    ``random`` module's when the layer's module imported it (``import random``, ``from random import random``)."""
    mod = sys.modules.get(getattr(type(layer), "__module__", ""), None)
    uses = any(v is random or getattr(v, "__self__", None) is getattr(random, "_inst", None)
               for v in list(getattr(mod, "__dict__", {}).values())[:MAX_WALKED])
    return "numpy's global generator" + (" and Python's random module's" if uses else "")


def _in_own_backward(layer, depth=64) -> bool:
    """True when a method of ``layer`` whose name holds ``backward`` (``backward``, ``backward_pass``) is on the
    caller's stack (``depth`` frames at most): a forward called from the layer's own backward."""
    f = sys._getframe(2)
    while f is not None and depth > 0:
        if "backward" in f.f_code.co_name and f.f_code.co_varnames[:1] == ("self",) and f.f_locals.get("self") is layer:
            return True
        f, depth = f.f_back, depth - 1
    return False


def _rewinding(cls):
    """``forward`` of a subclass of ``cls`` that first rewinds the generators (states kept by :func:`hold_random`).
    Its ``__wrapped__`` is ``cls.forward``, the one call of the student's forward that each call makes: the staff
    policy's count (the sandbox child's ``_entry_chain``) reads it as this call's own entry, not as forward called
    again (verify38 F4: a correct dropout held by rewinding was accused of calling its forward from forward).
    A call from the layer's own backward is not rewound: it draws on from where forward left the generators, as in
    use, so a backward that runs forward again to redraw its mask gets another mask (verify39 F4: rewound, it got
    forward's mask back and PASSed, its dX in use taken with a mask Y never used)."""
    def forward(self, *xs, **kw):
        if not _in_own_backward(self):
            own, glob = self.__dict__["_gradcheck_rewind"]
            for g, s in zip(generators(self), own):
                _state(g, s)
            global_states(glob)
        return cls.forward(self, *xs, **kw)
    forward.__wrapped__ = vars(cls).get("forward") or next(
        (vars(c)["forward"] for c in cls.__mro__ if "forward" in vars(c)), None)
    return forward


def hold_random(layer, how="fix_mask"):
    """Hold a random forward fixed for a gradient check, in the process where ``layer`` lives (the
    sandbox child's side of :meth:`gradcheck.sandbox.RemoteLayer.adapter`; in process,
    :func:`gradcheck.diagnose.adapter_call` calls it).

    ``how="fix_mask"``: ``fix_mask(True)`` (manualprop.Dropout's switch) of the layer and of every layer it holds
    at any depth (:func:`walk`); returns the class names of those fixed (``"Net, Dropout"``), ``""`` when none
    has one (``how="unfix_mask"``: ``fix_mask(False)`` on them). ``how="rewind"``: from now on every ``forward``
    first rewinds the generators reachable from the layer (``self.rng``, a ``random.Random``) and the
    global ones (numpy's, Python's ``random``: :func:`global_states`) to their present states, so each call
    draws the same mask (copies made later rewind their own generators); returns their kinds
    (``"Generator"``), the global ones' names (:func:`global_names`) when it stores none, ``""`` when its class cannot be extended. ``how="release"`` undoes the rewinding.
    """
    cls = type(layer)
    if how in ("fix_mask", "unfix_mask"):  # unfix_mask: fix_mask(False), a new mask drawn (session 12)
        fixed = {}
        for o in [layer] + [v for _, v in walk(layer) if _is_layer(v)]:
            fix = getattr(o, "fix_mask", None)  # an Adapted's is its student's: fixed once
            if callable(fix) and id(getattr(fix, "__self__", fix)) not in fixed:
                fix(how == "fix_mask")
                fixed[id(getattr(fix, "__self__", fix))] = type(getattr(fix, "__self__", o)).__name__
        return ", ".join(fixed.values())
    if how == "release":
        if "_gradcheck_base" in vars(cls):
            layer.__class__ = cls._gradcheck_base
            del layer.__dict__["_gradcheck_rewind"]
        return ""
    gens = generators(layer)
    if "_gradcheck_base" not in vars(cls) and not _subclass(layer, forward=_rewinding(cls), _gradcheck_base=cls):
        return ""  # e.g. a class with __slots__ of its own
    layer.__dict__["_gradcheck_rewind"] = ([_state(g) for g in gens], global_states())
    return ", ".join(sorted({type(g).__name__ for g in gens})) or global_names(getattr(layer, "obj", layer))
