"""Seeing the tape: why a source got no gradient, and what the tape holds.

:func:`explain` answers "why is my gradient None?" from what the tape recorded plus
a few cheap breadcrumbs that are kept only while a tape is involved:

* *cuts*: a tracked value went through an operation that passes no gradient
  (comparison, argmax, round, integer cast, ``stop_gradient``, ``numpy_function``), or
  was used inside ``stop_recording`` or after the ``with`` block. The output of such
  an operation is remembered, and so is everything computed from it alone.
* *escapes*: a tracked value left the tape as a plain number or array
  (``np.asarray(t)``, ``float(t)``, ``t.numpy()``, ``t.item()``).

What is heuristic (said honestly in the messages): once a value is a plain ndarray,
nothing ties later arrays to it. ``explain`` therefore reports an escape when a value
computed from the source left the tape and the target is not connected to the source;
and it recognises "a Variable replaced by a plain array" by finding an array with the
Variable's exact values among the recorded operations' inputs.

Source: ``lessons/10-gradient-tape.md``.
"""

from __future__ import annotations

import numpy as np

from . import registry
from .observe import (
    IMPLICIT,
    TapeEscapeError,
    carries_value,
    kwargs_carry_value,
    partial_escape_text,
)
from .tape import NotSaved, PartlySaved
from .tensor import Tensor, Variable, is_differentiable_dtype


def _name(t):
    if isinstance(t, Variable):
        return f"Variable {t.name!r} {t.shape}"
    if isinstance(t, Tensor):
        return f"tensor of shape {t.shape}"
    return type(t).__name__


def _same_values(a, b):
    if isinstance(a, NotSaved):  # the record kept only its shape
        return False
    a = np.asarray(a)
    return a.shape == b.shape and a.dtype.kind in "fc" and a.size > 0 and np.array_equal(a, b)


def explain(tape, target, source):
    """Return a paragraph saying why ``source`` gets no gradient from ``target``.

    Parameters
    ----------
    tape : GradientTape
    target : Tensor or any value
    source : Tensor or Variable

    Returns
    -------
    str
    """
    head = f"gradient of the target with respect to the {_name(source)}: "
    if not isinstance(source, Tensor):
        return head + (
            f"None: the source is a {type(source).__name__}, not a Tensor; only autoprop "
            "Tensors and Variables can be sources (wrap arrays with ap.constant and watch them)."
        )
    if not is_differentiable_dtype(source.dtype):
        return head + (
            f"None: the source has the integer/bool dtype {source.dtype}, which is not "
            "differentiable (a tape never tracks it; watching it only warns). Cast it to "
            "float, e.g. ap.constant(x, dtype='float64') or ap.Variable(x, dtype='float64')."
        )
    if tape._used and not tape._persistent:
        kept = (tape._post_mortem or {}).get(id(source))
        if kept is not None and kept[0] is source:
            return kept[1]
        return head + (
            "unknown now: this non-persistent tape was already used: its records were "
            "released by the first gradient call (a second call raises RuntimeError). Use "
            "GradientTape(persistent=True) to ask several questions of one forward pass."
        )
    if not isinstance(target, Tensor):
        return head + (
            f"None: the target is a {type(target).__name__}, not a Tensor: it left the tape "
            "(float(), .numpy(), .item() or numpy code on plain arrays). Keep the computation "
            "in Tensor operations up to the target."
        )
    tracked = tape._tracked
    nodes = tape._nodes
    if source._key not in tracked:
        return head + _why_not_tracked(tape, source, nodes)

    # forward reachability from the source through the records (by Tensor._key)
    reach, custom = {source._key}, []
    for node in nodes:
        if any(k in reach for k in node.keys):
            reach.update(node.out_keys())
            if node.prim.name.startswith("custom_gradient(") and node.prim.name not in custom:
                custom.append(node.prim.name)
    if target._key in reach:
        text = head + (
            "connected: the target depends on the source through recorded operations, so "
            "the gradient is not None (it may be zero, e.g. at a kink or where a mask is 0)."
        )
        if custom:
            text = text[:-1] + (
                " unless a custom_gradient's grad_fn returned None ('no gradient') for it: "
                f"the paths pass {', '.join(custom)}."
            )
        return text + _escaped_paths(tape, reach, target)
    return head + "None: " + " Also: ".join(_causes(tape, target, reach))


def _causes(tape, target, reach):
    """Why a target that ``reach`` (the keys the source reaches through the records) misses gets no gradient from
    the source (:func:`explain`): cuts on the way back from the target, an escape of a value computed from the
    source, or what the target was computed from; one sentence each."""
    tracked, nodes = tape._tracked, tape._nodes
    causes = []
    cuts = tape._cuts or {}
    cut = cuts.get(id(target))
    if cut is not None:
        causes.append(_cut_text(cut, "the target itself"))
    # walk back from the target through the records: untracked inputs are where paths end
    by_out = {k: n for n in nodes for k in n.out_keys()}
    stack, seen = [target._key], set()
    while stack:
        k = stack.pop()
        if k in seen:
            continue
        seen.add(k)
        node = by_out.get(k)
        if node is None:
            continue
        stack.extend(node.keys)
        for i, a in enumerate(node.args):
            if i in node.parents:
                continue
            if isinstance(a, Tensor) and id(a) in cuts:
                text = _cut_text(cuts[id(a)], f"an input of op {node.prim.name!r}")
                if text not in causes:
                    causes.append(text)
    escaped = [e for e in (tape._escapes or []) if e[1]._key in reach]
    if escaped and not causes:
        how, t, _value, pos, _site = escaped[0]
        causes.append(
            f"the value of a tensor computed from the source left the tape through {how} "
            f"(after {pos} recorded ops); operations on the plain "
            f"{'number' if isinstance(_value, float) else 'constant' if how == 'pickling' else 'array'} are "
            "not recorded, so the "
            "path ends there (heuristic: plain arrays cannot be traced, but this is the only "
            "place where a value computed from the source left the tape). Stay in tape "
            "operations: use ap./anp. functions or np. functions on the Tensor itself."
        )
    if not causes:
        if target._key not in tracked and target._key not in by_out:
            if not tape._recording and tape._nodes:
                causes.append(
                    "the target was not recorded by this tape: it was computed from "
                    "tensors the tape does not track (or outside its `with` block). Compute "
                    "it inside the block from the watched tensors."
                )
            else:
                causes.append(
                    "the target was not computed by recorded operations from anything this "
                    "tape tracks."
                )
        else:
            causes.append(
                "the target does not depend on the source: no recorded operation connects them."
            )
    return causes


def _escaped_paths(tape, reach, target):
    """For a connected target: the values computed from the source that left the tape
    while it recorded, before the target was computed. A path through one of them is not
    in the gradient (``math.exp(x[0]) * x[1]``: connected through ``x[1]``, the ``x[0]``
    path escaped through float()). Empty when there are none."""
    last_const = _last_reentry(tape, [target], _positions(tape))
    seen, parts = set(), []
    for how, t, _value, pos, _site in tape._escapes or []:
        if t._key not in reach or pos > last_const or (how, t._key) in seen:
            continue
        seen.add((how, t._key))
        where = next((f"the output of {n.prim.name!r} (recorded op #{i})"
                      for i, n in enumerate(tape._nodes) if t._key in n.out_keys()),
                     _name(t))
        parts.append(f"{where}, shape {t.shape}, through {how} after {pos} recorded ops")
    if not parts:
        return ""
    shown = "; ".join(parts[:5]) + (f"; and {len(parts) - 5} more" if len(parts) > 5 else "")
    return (
        " But a path was cut: a value computed from the source left the tape (" + shown +
        "). If the target was computed from that plain number or array (math.exp(t), "
        "np.float64(t), np.array([...]) of Tensors), that path is missing from the gradient, "
        "which is then wrong, not None; explicit logging with .numpy()/.item() is harmless. "
        "Keep the computation on the tensor (np.exp(t), ap.numpy.stack) to have it counted."
    )


_CUT_ADVICE = {
    "after": "operations after the `with` block are not recorded; move the computation "
             "inside the block.",
    "stop_recording": "operations inside stop_recording() are not recorded by design; move "
                      "the computation out of it if it needs a gradient.",
    "stop_gradient": "stop_gradient makes its result a constant for every tape by design.",
    "numpy_function": "ap.numpy_function runs arbitrary numpy code, which the tape cannot "
                      "look into, so its outputs are constants (no VJP). Write the function "
                      "with tape operations, or give it a gradient with ap.custom_gradient.",
    "nondiff": "the one rule for non-differentiable operations (comparisons, argmax/argmin, "
               "round/floor/ceil, sign, integer casts): they pass no gradient, the path is "
               "cut and the source gets None, never an identity pass-through.",
}


def _cut_text(cut, where):
    op, why, pos = cut
    if why.startswith("after"):
        key = "after"
    elif "stop_recording" in why:
        key = "stop_recording"
    elif op == "stop_gradient":
        key = "stop_gradient"
    elif op == "numpy_function":
        key = "numpy_function"
    else:
        key = "nondiff"
    return (
        f"{where} comes from {op!r}, {why} (after {pos} recorded ops): {_CUT_ADVICE[key]}"
    )


def _why_not_tracked(tape, source, nodes):
    if isinstance(source, Variable):
        if not source.trainable:
            return (
                "None: the source is a non-trainable Variable (trainable=False), which a "
                "tape does not watch automatically. Call tape.watch(v) inside the block."
            )
        if not tape._watch_accessed:
            return (
                "None: the tape was created with watch_accessed_variables=False and this "
                "Variable was never passed to tape.watch(). Watch it inside the block."
            )
        for pos, node in enumerate(nodes):
            for a, v in zip(node.args, node.vals):
                if a is source:
                    continue
                if (type(a) is not Variable) and _same_values(v, source._value):
                    return (
                        f"None: the Variable was never read while the tape recorded, but op "
                        f"#{pos} ({node.prim.name!r}) used a plain array/constant with exactly "
                        "its values: it looks like the Variable was rebound to or replaced by "
                        "a plain array (v.numpy(), np.array(v), ap.constant(v)), which the tape "
                        "cannot connect to the Variable (heuristic: equal values). Use the "
                        "Variable itself in the computation."
                    )
        return (
            "None: this Variable was never read by an operation while the tape was recording "
            "(used before or after the `with` block, inside stop_recording, or not at all)."
        )
    for pos, node in enumerate(nodes):
        for a, v in zip(node.args, node.vals):
            if a is not source and not isinstance(a, Variable) and _same_values(v, source._value):
                return (
                    "None: the source tensor was never watched, and op "
                    f"#{pos} ({node.prim.name!r}) used a different object with the same values "
                    "(a copy?). Watch the tensor that the computation uses: tape.watch(x) "
                    "inside the block, or make it an ap.Variable."
                )
    return (
        "None: the source was never watched: a constant tensor is only a source after "
        "tape.watch(x) (inside the `with` block); Variables are watched automatically."
    )


def _nbytes(v):
    return v.nbytes if isinstance(v, np.ndarray) else 0


def _fmt_bytes(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0


def _fmt_bytes_exact(n):
    """``n`` bytes for the summary's total: "774 bytes" below 1 KB, else "1.2 KB (1184 bytes)"."""
    return f"{n} bytes" if n < 1024 else f"{_fmt_bytes(n)} ({n} bytes)"


def _owner(v):
    """The array that owns the memory of ``v``: ``v`` itself, or the base of a view."""
    while isinstance(v.base, np.ndarray):
        v = v.base
    return v


def summary(tape):
    """The table that ``print(tape)`` shows (see :meth:`GradientTape.summary`).

    Bytes are counted per block of memory the records keep alive, each once: a view
    (``W.T``, a reshape, a slice) counts as the array it views, which it keeps alive
    whole. The total also says how much of it is the current value of a Variable
    (parameters, held by the model anyway; they become extra memory only when an
    optimizer replaces them while the tape lives).
    """
    state = "recording" if tape._recording else ("used, released" if tape._used else "stopped")
    lines = [
        f"GradientTape(persistent={tape._persistent}, "
        f"watch_accessed_variables={tape._watch_accessed}) - {state}, "
        f"{len(tape._nodes)} ops, {len(tape.watched_variables())} watched variables"
    ]
    w = max([14] + [len(node.prim.name) for node in tape._nodes]) + 2  # the op column fits every name
    lines.append(f"{'#':>4}  {'op':<{w}}{'inputs':<34}{'output':<16}{'saved':>10}")
    seen = set()
    total = 0
    variables = {id(_owner(a._value)) for node in tape._nodes for a in node.args
                 if isinstance(a, Variable)}
    in_variables = 0
    for pos, node in enumerate(tape._nodes):
        ins = []
        saved = 0
        arrays = []
        for i, (a, v) in enumerate(zip(node.args, node.vals)):
            mark = "*" if i in node.parents else ""
            if isinstance(v, PartlySaved):  # some entries: their index and values count
                ins.append(f"[{tuple(v.shape)}: {v.values.size} kept]{mark}")
                arrays += (v.values,) if v.mask is None else (v.mask, v.values)
            elif isinstance(v, NotSaved):
                ins.append(f"[{tuple(v.shape)}]{mark}")
            elif isinstance(a, Tensor) or isinstance(v, np.ndarray):
                ins.append(str(tuple(np.shape(v))) + mark)
            else:
                ins.append(repr(v) if np.isscalar(v) else type(v).__name__)
            if isinstance(v, np.ndarray):
                arrays.append(v)
        kept = node.kwargs.get("saved") if node.kwargs else None  # (tape.WithSaved: rnn_cell's a)
        if isinstance(kept, PartlySaved):
            ins.append(f"saved=[{tuple(kept.shape)}: {kept.values.size} kept]")
            arrays += (kept.values,) if kept.mask is None else (kept.mask, kept.values)
        elif isinstance(kept, np.ndarray):
            ins.append(f"saved={tuple(kept.shape)}")
            arrays.append(kept)
        texts = []
        for out in node.outs():  # (several for a MultiNode: np.split's pieces)
            if isinstance(out, NotSaved):
                texts.append(f"[{tuple(out.shape)}]")
            else:
                arrays.append(out._value)
                texts.append(str(out.shape))
        out_text = " ".join(texts)
        for v in arrays:
            o = _owner(v)
            if id(o) not in seen:
                seen.add(id(o))
                saved += o.nbytes
                if id(o) in variables:
                    in_variables += o.nbytes
        total += saved
        lines.append(
            f"{pos:>4}  {node.prim.name:<{w}}{' '.join(ins):<34}{out_text:<16}"
            f"{_fmt_bytes(saved):>10}"
        )
    lines.append(f"total saved for backward: {_fmt_bytes_exact(total)}, of which "
                 f"{_fmt_bytes_exact(in_variables)} current values of Variables; "
                 "a view counts as the array it views; * = input the tape tracks (gets a VJP); "
                 "[shape] = not saved (no VJP reads it)"
                 + (", [shape: n kept] = n entries saved" if any("kept]" in ln for ln in lines) else ""))
    return "\n".join(lines)


def _np_name(f):
    """``numpy.linalg.norm``, ``numpy.sum``: the public spelling of a numpy callable."""
    mod = getattr(f, "__module__", None) or "numpy"
    return ("numpy.linalg." if "linalg" in mod else "numpy.") + f.__name__


def explain_op(name, file=None):
    """Print (and return) the derivative stored with a registered primitive.

    Parameters
    ----------
    name : str
        A primitive's name (``autoprop.PRIMITIVES``), or a numpy function that autoprop
        builds from primitives (``"var"``, ``"stack"``, ...).
    file : file-like, optional
        Where to print; ``sys.stdout`` by default. ``False`` prints nothing.

    Returns
    -------
    str
        The Jacobian form, the VJP form, the shape rule, the kinks/conventions and the
        numpy functions and Tensor methods that call the primitive.

    Raises
    ------
    KeyError
        For an unknown name (the message lists the known ones).

    Examples
    --------
    >>> import autoprop as ap
    >>> text = ap.explain("multiply", file=False)
    >>> print(text.splitlines()[1])
    jacobian: d(a*b)/da = diag(b), d(a*b)/db = diag(a)
    """
    import sys

    prim = registry.PRIMITIVES.get(name)
    if prim is not None:
        d = prim.doc
        if prim.vjps is None:
            kind = "not differentiable (passes no gradient: the path is cut, the source gets None)"
        else:
            kind = "differentiable primitive"
            if prim.jvps is None:
                kind += " (JVP derived from the VJP by the transpose trick)"
        text = (
            f"{name}: {kind}\n"
            f"jacobian: {d.get('jacobian', '')}\n"
            f"vjp:      {d.get('vjp', '')}\n"
            f"shapes:   {d.get('shapes', '')}\n"
            f"kinks:    {d.get('kinks', '')}"
        )
        called = [_np_name(f) for f in prim.numpy] + [f"Tensor.{m}" for m in prim.methods]
        if called:
            text += f"\ncalled by: {', '.join(called)}"
    elif name in registry.COMPOSITES:
        text = (
            f"{name}: composite (built from registered primitives; the tape records those)\n"
            f"derivative: {registry.COMPOSITES[name]}"
        )
    else:
        known = sorted(set(registry.PRIMITIVES) | set(registry.COMPOSITES))
        raise KeyError(f"autoprop.explain: no primitive named {name!r}; known: {', '.join(known)}")
    if file is not False:
        print(text, file=file or sys.stdout)
    return text

def _positions(tape):
    """``Tensor._key`` of each recorded output -> the position of the op that made it."""
    return {k: i for i, n in enumerate(tape._nodes) for k in n.out_keys()}


def _last_reentry(tape, targets, pos_of):
    """The last recorded op on the way back from ``targets`` that read a constant which could
    hold a value that left the tape (a plain float number or array, or a tensor the tape does
    not track: :func:`autoprop.core.observe.carries_value`; positional or keyword,
    :func:`~autoprop.core.observe.kwargs_carry_value`), or -1. Only an escape before that op (its position at
    most this one) can have fed a target: a value that left the tape comes back only as such a
    constant. Heuristic in one direction only: plain arrays cannot be traced, so every such
    constant is suspected."""
    nodes = tape._nodes
    stack, seen_keys, last_const = [t._key for t in targets if isinstance(t, Tensor)], set(), -1
    while stack:
        k = stack.pop()
        if k in seen_keys or k not in pos_of:
            continue
        seen_keys.add(k)
        i = pos_of[k]
        node = nodes[i]
        stack.extend(node.keys)
        if i > last_const and (len(node.parents) < len(node.args) or node.kwargs):
            parents = node.parents
            if any(carries_value(a) for j, a in enumerate(node.args) if j not in parents) or (
                    kwargs_carry_value(node.kwargs)):  # (np.pad's constant_values=: review25a H1)
                last_const = i
    return last_const


def _integral(value):
    """An escaped value converted to integers or booleans (``np.int64(t)``, ``t.astype`` through
    numpy): piecewise constant, its derivative really is 0, so nothing is lost."""
    dtype = getattr(value, "dtype", None)
    return dtype is not None and dtype.kind in "biu"


def refuse_partial_escape(tape, targets, sources):
    """Raise :class:`~autoprop.TapeEscapeError` when a value computed from one of ``sources``
    left the tape implicitly (:data:`autoprop.core.observe.IMPLICIT`: float(), ``np.asarray``,
    an assignment into an ndarray, ``.tolist()``) before an op on the way back from ``targets``
    read a constant that could hold it (:func:`_last_reentry`): the gradient would miss that
    path and be wrong (tester24a's loop conv into ``np.zeros`` plus an L2 term: ``dw`` only
    the L2 term, ``db`` None), where a target that left the tape entirely is refused by
    ``observe.plain_target_text``. Escapes after the target was made, of values that
    depend on no requested source, and the explicit exits (``.numpy()``, ``.item()``) pass.

    Parameters
    ----------
    tape : GradientTape
    targets : list of Tensor
    sources : list of Tensor

    Raises
    ------
    TapeEscapeError
        Naming the first escape's ``file:line``, how it left, how many values left and at
        which lines, and what to write instead.
    """
    implicit = [e for e in tape._escapes if e[0] in IMPLICIT and not _integral(e[2])]
    more = tape._escape_overflow  # (those beyond the breadcrumbs' cap, one per tensor: observe._overflow)
    if more:
        implicit += [(how, t, None, pos, site, n) for how, t, pos, site, n in more.values()]
    if not implicit:
        return
    key = (tuple(t._key for t in targets if isinstance(t, Tensor)), tuple(s._key for s in sources),
           len(tape._nodes), len(tape._escapes), sum(e[4] for e in more.values()) if more else 0)
    if getattr(tape, "_escape_checked", None) == key:
        return  # (jacobian: one reverse walk per row, one check)
    reach = {s._key for s in sources}
    for node in tape._nodes:
        for k in node.keys:
            if k in reach:
                reach.update(node.out_keys())
                break
    implicit = [e for e in implicit if e[1]._key in reach]
    if implicit:
        last = _last_reentry(tape, targets, _positions(tape))
        implicit = [e for e in implicit if e[3] <= last]
    if not implicit:
        tape._escape_checked = key
        return
    raise TapeEscapeError(_partial_escape_message(tape, implicit, sources))


def _partial_escape_message(tape, escapes, sources):
    """The text of :func:`refuse_partial_escape`'s error: which requested sources lost a path."""
    escaped, lost = {e[1]._key for e in escapes}, []
    for s in sources:  # (the error path only: one forward pass per source)
        mine = {s._key}
        for node in tape._nodes:
            if any(k in mine for k in node.keys):
                mine.update(node.out_keys())
        if mine & escaped:
            lost.append(_name(s))
    return partial_escape_text("GradientTape.gradient", [(e[0], e[1], *e[3:]) for e in escapes], lost,
                               tape._escape_hints)
