"""The tape's backward pass as straight-line numpy code (``GradientTape.backward_source``).

How it is built: the reverse walk of :meth:`GradientTape.gradient` is run once more
under a second, recording tape that watches the seed and every forward tensor. The
VJPs then run on Tensors (the higher-order path of the tape), so the backward pass is
itself recorded: a graph of primitives. Each recorded primitive becomes one numpy
expression from the ``source`` template of its registry record
(:class:`~autoprop.core.registry.Primitive`); nothing here knows a layer or a VJP.

Templates are ``str.format`` strings over the primitive's arguments, by position
(``{0}``) and by the forward's parameter names (``{x}``, ``{axis}``; defaults filled
in), plus ``{kw}`` (the keyword arguments that differ from the defaults,
``axis=0, keepdims=True``), ``{_kw}`` (the same with a leading ``, ``), and ``{out}``
for a statement template (several lines that assign ``{out}``). A variadic parameter
(``*xs``) is its arguments joined by ``, ``; a parameter named ``key`` is written in
index syntax (``:, 1``). A template may also be a callable of the raw values (by name
and position) returning such a string.

The code is made readable without changing a value: a value that is used once and
has no name of its own is inlined into its consumer; identical expressions are
computed once (common subexpressions); a multiplication by the all-ones seed, a power 1, and a
reshape, broadcast or cast to what the value already is, are dropped; lines whose
results reach no requested gradient are dropped. A mask the forward made by comparing
recorded values is written as that comparison (``np.where(z > 0, ...)``) when it gives
exactly the mask on the code's inputs (else it is the input ``mask`` with a comment).
Other values the VJPs read that were not computed on the tape (index arrays, one-hots,
numpy constants) are named inputs beside the forward's saved values: ``mask``, ``idx``,
``onehot``, ``c`` (``_2``, ...), never a name of the forward or the caller, so a forward
variable's name in the code always means that variable's value.
"""

from __future__ import annotations

import ast
import inspect
import keyword
import re
import string
import sys

import numpy as np

from .tape import GradientTape, _flatten, _not_a_nest, _pair_seeds
from .tensor import Tensor, is_differentiable_dtype

__all__ = ["BackwardSource", "backward_source", "call_source", "template_of"]

#: names the emitted code uses for modules and kernels (never given to a value)
_RESERVED = {"np", "special", "im2col", "col2im"}
_MAX_INLINE = 72  # an inlined line stays shorter than this (else the operand gets a name)


class BackwardSource:
    """Straight-line numpy code of a tape's reverse walk, with the values it reads.

    Attributes
    ----------
    code : str
        The code: imports, then one assignment per line with the shape as a comment.
    inputs : dict of str to ndarray or scalar
        The values the code reads: the forward's saved values (named after the forward's
        variables), the upstream gradient when one was given, and constants.
    outputs : tuple of str
        The gradient variables, one per source (in the order of the flattened sources).

    Notes
    -----
    ``print(src)`` shows the code; :meth:`run` executes it.
    """

    def __init__(self, code, inputs, outputs, rebuild):
        self.code = code
        self.inputs = inputs
        self.outputs = tuple(outputs)
        self._rebuild = rebuild

    def run(self, **overrides):
        """Execute the code on :attr:`inputs` (updated by ``overrides``).

        Returns
        -------
        ndarray per source, in the structure of the ``sources`` given to
        ``backward_source``.
        """
        ns = dict(self.inputs)
        ns.update(overrides)
        exec(compile(self.code, "<backward_source>", "exec"), ns)  # noqa: S102 - our own code
        return self._rebuild([ns[o] for o in self.outputs])

    def __str__(self):
        return self.code.rstrip("\n")

    __repr__ = __str__


# --- rendering constants and keyword values ---------------------------------------
def _index_text(key, const):
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for k in parts:
        if isinstance(k, slice):
            s = ":".join("" if p is None else _literal(p, const) for p in (k.start, k.stop))
            out.append(s + ("" if k.step is None else ":" + _literal(k.step, const)))
        elif k is Ellipsis:
            out.append("...")
        else:
            out.append(_literal(k, const))
    text = ", ".join(out)
    return text + "," if isinstance(key, tuple) and len(key) == 1 else text


def _literal(v, const):
    """Source text of a non-Tensor value: a literal where exact, else a named input."""
    if v is None or isinstance(v, (bool, str)) or v is Ellipsis:
        return repr(v)
    if type(v) is float and not np.isfinite(v):
        return "np.nan" if np.isnan(v) else ("np.inf" if v > 0 else "(-np.inf)")
    if type(v) in (int, float):
        return f"({v!r})" if v < 0 else repr(v)  # (-1) ** x is not -(1 ** x)
    if isinstance(v, np.integer):
        return repr(int(v))
    if isinstance(v, tuple):
        inner = ", ".join(_literal(x, const) for x in v)
        return "(" + inner + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list) and all(type(x) in (int, bool) for x in v) and len(v) <= 8:
        return repr(v)
    if isinstance(v, slice):
        return "slice(%s, %s, %s)" % tuple(_literal(p, const) for p in (v.start, v.stop, v.step))
    if isinstance(v, range):  # an index as Karpathy's logprobs[range(n), Yb]
        return f"range({v.stop})" if v.start == 0 and v.step == 1 else repr(v)
    if isinstance(v, np.dtype):
        return f"np.{v.name}" if hasattr(np, v.name) else f"np.dtype({v.str!r})"
    if isinstance(v, type) and issubclass(v, np.generic):
        return f"np.{v.__name__}"
    return const(v)


def _is_atom(expr):
    """True when ``expr`` needs no parentheses as an operand (a name, call, attribute,
    subscript or non-negative constant)."""
    try:
        node = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.Constant):
        return not (isinstance(node.value, (int, float)) and node.value < 0)
    return isinstance(node, (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.List, ast.Tuple))


def _ident(name):
    name = re.sub(r"\W", "_", str(name))
    if not name or name[0].isdigit():
        name = "v_" + name
    return name + "_" if keyword.iskeyword(name) or name in _RESERVED else name


def _shape_comment(v):
    return f"# {tuple(np.shape(v))}" + ("" if np.result_type(v) == np.float64 else f" {np.result_type(v)}")


_SIGS: dict = {}


def _signature(prim):
    if prim.name not in _SIGS:
        try:
            _SIGS[prim.name] = inspect.signature(prim.fwd)
        except (TypeError, ValueError):  # ufuncs
            _SIGS[prim.name] = None
    return _SIGS[prim.name]


class _Namer:
    """Fresh names. ``claimed`` are the forward's names (the caller's variables, ``names=``,
    a sources dict's keys, Variable names): a generated name never takes one, so a name
    of the forward in the code always means that forward value (:meth:`own`)."""

    def __init__(self, claimed=(), forward_names=()):
        self.used = set(_RESERVED)
        self.claimed = {_ident(n) for n in claimed} - _RESERVED
        self.forward = {_ident(n) for n in forward_names}

    def own(self, name, forward=True):
        """A forward value's own name ``name`` (``forward``), or a gradient's (``dz``: it
        may take a name of the caller's, though never one of a forward value), if still
        free; else a fresh one."""
        name = _ident(name)
        if name not in self.used and (forward or name not in self.forward):
            self.used.add(name)
            return name
        return self(name)

    def __call__(self, base, inputs=True):
        """A fresh name from ``base``: never a forward value's; for an input (``inputs``)
        never any name of the caller's either (a temporary may reuse one the code never
        reads)."""
        base = _ident(base)
        avoid = self.claimed if inputs else self.forward
        name, k = base, 2
        while name in self.used or name in avoid:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name


def _fields(prim, args_text, args_raw, kwargs, const):
    """The format fields of one recorded call: positions, parameter names, kw, _kw."""
    fields = {str(i): t for i, t in enumerate(args_text)}
    raw = {str(i): v for i, v in enumerate(args_raw)}
    sig = _signature(prim)
    kw_parts = []
    if sig is not None:
        bound = sig.bind(*range(len(args_text)), **kwargs)
        for p in sig.parameters.values():
            if p.kind is p.VAR_POSITIONAL:
                pos = bound.arguments.get(p.name, ())
                fields[p.name] = ", ".join(args_text[i] for i in pos)
                raw[p.name] = tuple(args_raw[i] for i in pos)
            elif p.name in bound.arguments and p.name not in kwargs:
                i = bound.arguments[p.name]
                fields[p.name], raw[p.name] = args_text[i], args_raw[i]
            else:
                given = p.name in kwargs
                v = kwargs[p.name] if given else p.default
                if v is inspect.Parameter.empty:
                    continue
                raw[p.name] = v
                if p.name == "axis" and isinstance(v, tuple) and len(v) == 1:
                    v = v[0]  # .sum(axis=0), not axis=(0,): the same reduction
                fields[p.name] = _index_text(v, const) if p.name == "key" else _literal(v, const)
                if given and p.default is not p.empty and not _same(v, p.default):
                    kw_parts.append(f"{p.name}={fields[p.name]}")
    else:
        for k, v in kwargs.items():
            fields[k] = _literal(v, const)
            kw_parts.append(f"{k}={fields[k]}")
    fields["args"] = ", ".join(args_text)
    fields["kw"] = ", ".join(kw_parts)
    fields["_kw"] = "".join(", " + p for p in kw_parts)
    return fields, raw


def _same(v, default):
    try:
        return v is default or bool(v == default) and type(v) is type(default)
    except (ValueError, TypeError):
        return False


def template_of(prim):
    """The ``source`` template of a primitive's record. A record without one whose forward
    *is* a function of numpy, ``numpy.linalg`` or ``scipy.special`` is that call
    (``np.exp({0})``, ``np.linalg.solve({args}{_kw})``, ``special.erf({0})``). None if neither."""
    if prim.source is not None:
        return prim.source
    fwd = prim.fwd
    mods = (("np", np), ("np.linalg", np.linalg), ("special", sys.modules.get("scipy.special")))
    for prefix, mod in mods:
        if getattr(mod, getattr(fwd, "__name__", ""), None) is fwd:
            args = ", ".join(f"{{{i}}}" for i in range(fwd.nin)) if isinstance(fwd, np.ufunc) else "{args}{_kw}"
            return f"{prefix}.{fwd.__name__}({args})"
    return None


def _template(prim, raw):
    src = template_of(prim)
    if src is None:
        raise NotImplementedError(
            f"GradientTape.backward_source: the backward pass uses the primitive "
            f"{prim.name!r}, whose registry record has no source template (source=...), so "
            "it cannot be written as numpy code. Add one to its record in autoprop/core/prims/."
        )
    return src(raw) if callable(src) else src


def _format(template, fields):
    names = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    missing = names - set(fields) - {"out"}
    if missing:
        raise KeyError(f"source template {template!r}: no field {sorted(missing)}")
    pos = [fields[str(i)] for i in range(len(fields)) if str(i) in fields]
    text = template.format(*pos, **{k: v for k, v in fields.items() if not k.isdigit()})
    return "\n".join(_tidy(line) for line in text.split("\n"))


def _tidy(code):
    """``code`` with the parentheses its operator precedence does not need removed."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    return ast.unparse(tree)


#: short names for forward values that have none (the primitive that made them)
_SHORT = {"add": "s", "subtract": "d", "multiply": "p", "divide": "q", "matmul": "mm",
          "getitem": "sel", "reshape": "r", "transpose": "tr", "broadcast_to": "b",
          "extract_patches": "cols", "sparse_softmax_cross_entropy_with_logits": "ce",
          "sparse_softmax_cross_entropy_mean": "ce"}


def _short(prim_name):
    return _SHORT.get(prim_name, prim_name)


def _reverses(node):
    """True for a transpose that reverses all axes (``x.T``)."""
    if node.prim.name != "transpose":
        return False
    axes = node.kwargs.get("axes", node.args[1] if len(node.args) > 1 else None)
    return axes is None or tuple(axes) == tuple(range(np.ndim(node.vals[0])))[::-1]


#: comparison primitives and their operators (a mask the forward made is written as one)
_COMPARE = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
            "equal": "==", "not_equal": "!="}


def _const_kind(v):
    """The base name of a value the VJPs read that has no name of its own: ``mask`` (bool),
    ``idx`` (integers), ``onehot`` (0/1 floats with one 1 per row), else ``c``."""
    dt = np.result_type(v)
    if dt == np.bool_:
        return "mask"
    if dt.kind in "iu":
        return "idx"
    a = np.asarray(v)
    if dt.kind == "f" and a.ndim >= 1 and a.size and np.all((a == 0) | (a == 1)) \
            and np.all(a.sum(axis=-1) == 1):
        return "onehot"
    return "c"


def _is_one(v):
    a = v._value if isinstance(v, Tensor) else v
    try:
        return np.result_type(a).kind == "f" and bool(np.all(np.asarray(a) == 1))
    except TypeError:
        return False


def call_source(prim, *args, out="out", **kwargs):
    """One call of a primitive as numpy source, from its record's ``source`` template.

    Parameters
    ----------
    prim : Primitive
    *args, **kwargs
        The call's arguments (numpy values). Arrays become named inputs ``a0``, ``a1``,
        ...; Python scalars, tuples and slices are written as literals.
    out : str
        The variable the code assigns.

    Returns
    -------
    (str, dict)
        The code (``out = ...``, or a statement template's lines) and its inputs.

    Raises
    ------
    NotImplementedError
        If the record has no source template.

    Examples
    --------
    >>> from autoprop.core import registry
    >>> import numpy as np
    >>> code, inputs = call_source(registry.PRIMITIVES["sum"], np.ones((2, 3)), axis=0)
    >>> code, sorted(inputs)
    ('out = a0.sum(axis=0)', ['a0'])
    """
    inputs = {}

    def const(v):
        name = f"a{len(inputs)}"
        inputs[name] = v
        return name

    texts = [const(a) if isinstance(a, np.ndarray) else _literal(a, const) for a in args]
    fields, raw = _fields(prim, texts, list(args), kwargs, const)
    template = _template(prim, raw)
    fields["out"] = out
    body = _format(template, fields)
    return (body if "{out}" in template else f"{out} = {body}"), inputs


# --- the generator -----------------------------------------------------------------
def backward_source(tape, target, sources, output_gradients=None, names=None,
                    unconnected_gradients="none", caller_locals=None):
    """Build :class:`BackwardSource` for ``d target / d sources`` (see
    :meth:`autoprop.GradientTape.backward_source`, which documents the parameters)."""
    if tape._used and not tape._persistent:
        raise RuntimeError(
            "GradientTape.backward_source: this non-persistent tape was already used (its "
            "records were released). Call backward_source before gradient, or use "
            "GradientTape(persistent=True)."
        )
    if tape._recording:
        raise RuntimeError(
            "GradientTape.backward_source: the tape is still recording; call it after the "
            "tape's `with` block."
        )
    flat_sources, rebuild = _flatten(sources)
    for s in flat_sources:
        if not isinstance(s, Tensor):
            raise TypeError(
                f"GradientTape.backward_source: sources must be Tensors or Variables; got "
                f"{type(s).__name__}{_not_a_nest(s)}"
            )
    targets, rebuild_target = _flatten(target)
    seeds = _pair_seeds(target, targets, output_gradients, "GradientTape.backward_source")

    forward = _forward_tensors(tape, flat_sources, targets)
    fname = _forward_names(tape, forward, names, sources, caller_locals)
    made_by = {k: node.prim.name for node in tape._nodes for k in node.out_keys()}

    # the seeds, and the recording run of the reverse walk
    seed_ts = []
    for t, s in zip(targets, seeds):
        if s is None:
            v = np.ones(np.shape(t), getattr(t, "dtype", np.float64))
        else:
            v = s._value if isinstance(s, Tensor) else np.asarray(s, dtype=t.dtype)
        seed_ts.append(Tensor._wrap(v))
    extra = [t for k, t in forward.items() if is_differentiable_dtype(t.dtype)]
    rec = GradientTape(persistent=True, watch_accessed_variables=False)
    rec._save_all = True  # every recorded op becomes a line of code: keep all of them
    with rec:
        rec.watch(seed_ts)
        rec.watch(extra)
        results = tape._gradient(target, list(flat_sources) + extra, rebuild_target(seed_ts), "none",
                                 public=tape._complex)  # (as tape.gradient: complex.public)
    src_results, extra_results = results[:len(flat_sources)], results[len(flat_sources):]
    unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
    for s, r in zip(flat_sources, src_results):  # code needs one connected source (tester10 L5)
        if r is None and unconnected != "zero" and all(x is None for x in src_results):
            raise ValueError(
                "GradientTape.backward_source: no gradient reaches a source, so there is no "
                "code to write for it. " + tape.explain(target, s)
            )
    # every name of the forward (the caller's variables too): no generated name takes one
    claimed = {k for k in (caller_locals or {}) if isinstance(k, str) and k.isidentifier()}
    claimed |= set(fname.values())
    return _emit(rec._nodes, forward, fname, made_by, targets, seed_ts, seeds, flat_sources,
                 src_results, extra, extra_results, rebuild, claimed, tape._cut_args or {},
                 zero=unconnected == "zero")


def _names_items(names):
    """The (name, Tensor) pairs of ``names=``: a dict of str to Tensor, or the reverse
    mapping (Tensor to str), which is read the same way."""
    if names is None:
        return []
    if not hasattr(names, "items"):
        raise TypeError(
            "GradientTape.backward_source: names= must be a dict of str to Tensor (the name "
            f"each forward tensor gets in the code, e.g. names={{'h': h}}); got {type(names).__name__}"
        )
    pairs = []
    for k, v in names.items():
        if isinstance(k, Tensor):
            if not isinstance(v, str):
                raise TypeError(
                    "GradientTape.backward_source: names= maps a name (str) to a Tensor; the "
                    f"Tensor key of shape {tuple(k.shape)} maps to {v!r} ({type(v).__name__}), not a str"
                )
            k, v = v, k  # {tensor: "name"}: the reverse mapping, read as {"name": tensor}
        elif not isinstance(k, str):
            raise TypeError(
                "GradientTape.backward_source: names= must be a dict of str to Tensor; got the "
                f"key {k!r} ({type(k).__name__})"
            )
        pairs.append((k, v))
    return pairs



def _forward_tensors(tape, flat_sources, targets) -> dict:
    """:func:`backward_source`'s forward tensors, ``{id: Tensor}``: every Tensor the tape recorded, in order,
    the inputs of its cuts, the sources and the targets."""
    forward: dict[int, Tensor] = {}
    for node in tape._nodes:  # (a value no VJP reads is not saved: no line of code reads it)
        for a in node.args:
            if isinstance(a, Tensor):
                forward.setdefault(id(a), a)
        for out in node.outs():  # (several: a MultiNode)
            if isinstance(out, Tensor):
                forward.setdefault(id(out), out)
    for _op, cut_inputs in (tape._cut_args or {}).values():  # `z > 0`: z, held by the breadcrumb
        for a in cut_inputs:
            if isinstance(a, Tensor):
                forward.setdefault(id(a), a)
    for t in list(flat_sources) + [t for t in targets if isinstance(t, Tensor)]:
        forward.setdefault(id(t), t)
    return forward


def _forward_names(tape, forward, names, sources, caller_locals) -> dict:
    """:func:`backward_source`'s names of forward tensors, ``{id: name}``: ``names=``, the keys of a sources
    dict, the caller's locals, a Variable's own name, in this order of preference."""
    fname: dict[int, str] = {}

    def offer(name, t):
        if isinstance(t, Tensor) and id(t) in forward and id(t) not in fname and isinstance(name, str) \
                and not name.startswith("_"):
            fname[id(t)] = name

    for k, t in _names_items(names):
        offer(k, t)
    if isinstance(sources, dict):
        for k, t in sources.items():
            offer(k, t)
    by_value = {id(t._value): t for t in forward.values()}
    outs = {k for node in tape._nodes for k in node.out_keys()}
    leaves = [t for t in forward.values() if t._key not in outs]
    # the caller's Tensors first: a Variable made from a local array is named as the Variable
    for k, t in sorted((caller_locals or {}).items(), key=lambda kv: type(kv[1]) is np.ndarray):
        if type(t) is np.ndarray:  # a numpy input the tape wrapped: the leaf holding its values
            t = by_value[id(t)] if id(t) in by_value else next(
                (f for f in leaves if f._value.shape == t.shape and f._value.dtype == t.dtype
                 and id(f) not in fname and np.array_equal(f._value, t)), None)
        offer(k, t)
    for t in forward.values():
        n = getattr(t, "name", None)
        if n and n != "Variable":
            offer(n, t)
    return fname


class _Emitter:
    """What :func:`_emit` writes into: fresh names (``namer``), the code's inputs (``inputs``, named by
    ``in_name``: id of a Tensor or constant -> name; ``keep_alive`` the constants whose ids it uses), the seed's
    lines and the mask notes, and the statements (``lines``; ``var``: a node's variable, ``expr_of``: a node's
    inlined expression)."""

    def __init__(self, nodes, forward, fname, made_by, targets, seed_ts, seeds, claimed, cut_args):
        self.namer = _Namer(claimed, fname.values())
        self.nodes, self.forward, self.fname, self.made_by, self.cut_args = nodes, forward, fname, made_by, cut_args
        self.inputs: dict[str, object] = {}
        self.in_name: dict[int, str] = {}  # id(Tensor or constant) -> input name
        self.keep_alive = []  # constants whose ids in_name uses
        self.seed_ids = {id(s): (t, given) for s, t, given in zip(seed_ts, targets, seeds)}
        self.ones_seed = {id(s) for s, given in zip(seed_ts, seeds) if given is None}
        self.seed_lines, self.mask_notes = [], []
        self.lines, self.var, self.expr_of = [], {}, {}

    def base_of(self, t):
        return self.fname.get(id(t))

    def input_for(self, t):
        """Name of a forward tensor or seed read by the backward pass (an input)."""
        if id(t) in self.in_name:
            return self.in_name[id(t)]
        cut_args = self.cut_args or {}
        if id(t) in self.seed_ids:
            tgt, given = self.seed_ids[id(t)]
            name = self.namer("d" + (self.base_of(tgt) or "out"))
        elif self.base_of(t):
            name = self.namer.own(self.base_of(t))
        elif id(t) in cut_args and cut_args[id(t)][0] in _COMPARE:
            expr, exact = self.compared(t)
            if exact:  # the mask as the comparison of forward values: `z > 0`
                self.in_name[id(t)] = expr
                return expr
            name = self.namer("mask")
            self.mask_notes.append(f"# {name}: {expr or cut_args[id(t)][0]} from the forward"
                                   + (" (on the values then)" if expr else ""))
        else:
            name = self.namer(_const_kind(t._value) if t.dtype.kind in "biu"
                              else _short(self.made_by.get(t._key, "x")))
        self.in_name[id(t)] = name
        if id(t) in self.ones_seed:  # the seed d target / d target = 1: written in the code
            self.seed_lines.append(f"{name} = np.ones({tuple(t.shape)!r}"
                                   + ("" if t.dtype == np.float64 else f", dtype=np.{t.dtype.name}")
                                   + f")  {_shape_comment(t._value)}")
        else:
            self.inputs[name] = t._value
        return name

    def compared(self, t):
        """``((z > 0), exact)`` for a mask the forward computed by comparing recorded
        values; ``exact``: that text, evaluated on the code's inputs, gives exactly the mask."""
        op, args = self.cut_args[id(t)]
        if len(args) != 2:
            return None, False
        texts = []
        for a in args:
            if isinstance(a, Tensor) and id(a) in self.forward and id(a) not in self.seed_ids:
                texts.append(self.input_for(a))
            elif isinstance(a, (int, float, np.number, np.ndarray)) and not isinstance(a, bool):
                texts.append(_literal(a, self.const))  # an array: a named input (c)
            else:
                return None, False
        expr = f"({texts[0]} {_COMPARE[op]} {texts[1]})"
        try:
            val = eval(compile(expr, "<mask>", "eval"), {"np": np}, dict(self.inputs))  # noqa: S307
        except Exception:  # noqa: BLE001 - not expressible: the mask stays a named input
            return expr, False
        return expr, (np.shape(val) == t.shape and np.result_type(val) == np.bool_
                      and bool(np.array_equal(val, t._value)))

    def const(self, v):
        if isinstance(v, Tensor):
            v = v._value
        key = id(v)
        if key in self.in_name:
            return self.in_name[key]
        name = self.namer(_const_kind(v))
        self.in_name[key] = name
        self.keep_alive.append(v)
        self.inputs[name] = v
        return name

    def operand(self, r):
        if r[0] == "node":
            k = r[1]
            if k in self.expr_of:
                e = self.expr_of[k]
                return e if _is_atom(e) else f"({e})"
            return self.var[k]
        if r[0] == "in":
            return self.input_for(r[2])
        v = r[2]
        return self.const(v) if isinstance(v, Tensor) else _literal(v, self.const)

    def materialise(self, k):
        """Give the inlined value ``k`` its own line (its consumer's line is too long)."""
        e = self.expr_of.pop(k)
        self.var[k] = name = self.namer("t", inputs=False)
        self.lines.append(f"{name} = {e}  {_shape_comment(self.nodes[k].out._value)}")


def _emit(nodes, forward, fname, made_by, targets, seed_ts, seeds, flat_sources, src_results,
          extra, extra_results, rebuild, claimed=(), cut_args=None, zero=True):
    em = _Emitter(nodes, forward, fname, made_by, targets, seed_ts, seeds, claimed, cut_args)
    produced = {}  # id(output) -> k, or (k, j) for output j of a MultiNode (split, eigh, svd, qr)
    for k, n in enumerate(nodes):
        if type(n.out) is tuple:
            produced.update((id(o), (k, j)) for j, o in enumerate(n.out))
        else:
            produced[id(n.out)] = k
    canon, refs = _canonical(em, produced, seed_ts)

    def resolve(t):
        if isinstance(t, Tensor) and id(t) in produced:
            return canon[id(t)]
        if isinstance(t, Tensor) and (id(t) in em.seed_ids or id(t) in forward):
            return ("in", id(t), t)
        return ("const", id(t), t)

    # the requested outputs and the gradients of named forward tensors
    out_refs = [None if r is None else resolve(r) for r in src_results]
    grad_name: dict = {}  # ref_key -> preferred name
    for s, r in zip(flat_sources, out_refs):
        if r is not None and r[0] == "node" and r[:2] not in grad_name:
            grad_name[r[:2]] = "d" + (em.base_of(s) or "x")
    for t, r in zip(extra, extra_results):
        if r is not None and id(t) in fname:
            rr = resolve(r)
            if rr[0] == "node" and rr[:2] not in grad_name:
                grad_name[rr[:2]] = "d" + fname[id(t)]
    _statements(em, refs, grad_name, *_liveness(out_refs, refs))
    outputs = _outputs(em, flat_sources, out_refs, zero)
    return _assembled(em, outputs, rebuild)


def _canonical(em, produced, seed_ts):
    """The canonical value of each node's output after dropping identities and repeats: ``canon``
    (id(out) -> ("node", k, out) | ("in", id, Tensor) | ("const", id, value)) and ``refs`` (k -> operand refs)."""
    canon: dict[int, object] = {}
    sig_seen: dict = {}
    refs: dict[int, list] = {}
    nodes = em.nodes

    def ref_of(a, v):
        if isinstance(a, Tensor) and id(a) in produced:
            return canon[id(a)]
        if isinstance(a, Tensor) and (id(a) in em.seed_ids or id(a) in em.forward):
            return ("in", id(a), a)
        return ("const", id(v) if not isinstance(a, Tensor) else id(a), a if isinstance(a, Tensor) else v)

    ones = {("in", id(s)) for s in seed_ts if id(s) in em.ones_seed}  # values known to be all ones
    for k, node in enumerate(nodes):
        ops = [ref_of(a, v) for a, v in zip(node.args, node.vals)]
        refs[k] = ops
        out = node.out
        name = node.prim.name
        if type(out) is tuple:  # several outputs: one statement, each output its own ref
            canon.update((id(o), ("node", (k, j), o)) for j, o in enumerate(out))
            continue
        alias = _identity_of(node, ops, ones, refs, nodes)
        if alias is not None:
            canon[id(out)] = alias
            continue
        if name in ("reshape", "broadcast_to", "transpose", "squeeze", "cast") and ops \
                and ops[0][:2] in ones:
            ones.add(("node", k))
        try:
            sig = (name, tuple(r[:2] for r in ops), repr(sorted(node.kwargs.items(), key=str)))
            hash(sig)
        except TypeError:
            sig = None
        if sig is not None and sig in sig_seen and "array(" not in sig[2]:
            canon[id(out)] = sig_seen[sig]
            continue
        canon[id(out)] = ("node", k, out)
        if sig is not None:
            sig_seen[sig] = canon[id(out)]
    return canon, refs


def _identity_of(node, ops, ones, refs, nodes):
    """The operand ref ``node`` (with operand refs ``ops``) gives back unchanged, or None: x * ones, x / ones,
    x ** 1, a reshape/broadcast/cast to the same shape and dtype, x.T.T."""
    out, name = node.out, node.prim.name
    if name in ("multiply", "divide") and len(ops) == 2:
        for i in ((0, 1) if name == "multiply" else (1,)):
            one, other = ops[i], ops[1 - i]
            onev = node.vals[i]
            if (one[:2] in ones or one[0] == "const" and _is_one(onev)) \
                    and np.shape(node.vals[1 - i]) == out.shape \
                    and np.result_type(node.vals[1 - i]) == out.dtype:
                return other
    elif name == "power" and len(ops) == 2 and ops[1][0] == "const" \
            and np.ndim(node.vals[1]) == 0 and node.vals[1] == 1 \
            and np.shape(node.vals[0]) == out.shape and np.result_type(node.vals[0]) == out.dtype:
        return ops[0]  # x ** 1 is x
    elif name in ("reshape", "broadcast_to", "cast", "squeeze") and ops:
        if np.shape(node.vals[0]) == out.shape and np.result_type(node.vals[0]) == out.dtype:
            return ops[0]
    elif name == "transpose" and ops[0][0] == "node" and type(ops[0][1]) is int and _reverses(node) \
            and _reverses(nodes[ops[0][1]]):
        return refs[ops[0][1]][0]  # x.T.T is x
    return None


def _liveness(out_refs, refs):
    """The nodes the outputs need (``live``) and how often each value is used (``uses``, by ref key; an output
    counts twice, so it is never inlined)."""
    live, uses = set(), {}
    stack = [r for r in out_refs if r is not None]
    for r in stack:
        uses[r[:2]] = uses.get(r[:2], 0) + 2  # an output is never inlined
    while stack:
        r = stack.pop()
        k = r[1][0] if r[0] == "node" and type(r[1]) is tuple else r[1]  # (k, j): a MultiNode's output
        if r[0] != "node" or k in live:
            continue
        live.add(k)
        for o in refs[k]:
            uses[o[:2]] = uses.get(o[:2], 0) + 1
            stack.append(o)
    return live, uses


def _statements(em, refs, grad_name, live, uses):
    """One line per live node into ``em.lines``, a value used once inlined into its consumer while the line
    stays short (a long one gets its inlined operands back as lines, longest first)."""
    for k in sorted(live):
        node = em.nodes[k]
        if type(node.out) is tuple:
            _multi_statement(em, k, refs[k], grad_name, uses)
            continue
        texts = [em.operand(r) for r in refs[k]]
        fields, raw = _fields(node.prim, texts, list(node.vals), node.kwargs, em.const)
        template = _template(node.prim, raw)
        if "{out}" not in template and len(_format(template, fields)) > _MAX_INLINE + 8:
            inl = [r[1] for r in refs[k] if r[0] == "node" and r[1] in em.expr_of and not _is_atom(em.expr_of[r[1]])]
            inl += [r[1] for r in refs[k] if r[0] == "node" and r[1] in em.expr_of and r[1] not in inl]
            for j in sorted(set(inl), key=lambda j: -len(em.expr_of[j])):
                em.materialise(j)
                texts = [em.operand(r) for r in refs[k]]
                fields, _ = _fields(node.prim, texts, list(node.vals), node.kwargs, em.const)
                if len(_format(template, fields)) <= _MAX_INLINE + 8:
                    break
        statement = "{out}" in template
        key = ("node", k)
        want = grad_name.get(key)
        inline = (want is None and not statement and uses.get(key, 0) == 1)
        if inline:
            e = _format(template, fields)
            if len(e) <= _MAX_INLINE:
                em.expr_of[k] = e
                continue
        name = em.namer.own(want, forward=False) if want else em.namer("t", inputs=False)
        em.var[k] = name
        fields["out"] = name
        body = _format(template, fields)
        comment = "  " + _shape_comment(node.out._value)
        if statement:
            em.lines.extend(body.split("\n"))
            em.lines[-1] += comment
        else:
            em.lines.append(f"{name} = {body}{comment}")


#: the names of the outputs of the records with several outputs (numpy's result fields, short)
_OUT_NAMES = {"eigh": ("w", "v"), "eig": ("w", "v"), "svd": ("u", "s", "vh"), "qr": ("q", "r"),
              "slogdet": ("sign", "logabsdet")}


def _multi_statement(em, k, refs, grad_name, uses):
    """The line of a node with several outputs: its template assigns them all (``{out}``: their
    names, ``w, v``; ``_`` for an output nothing reads)."""
    node = em.nodes[k]
    fields, raw = _fields(node.prim, [em.operand(r) for r in refs], list(node.vals), node.kwargs, em.const)
    names = []
    for j in range(len(node.out)):
        key = ("node", (k, j))
        want = grad_name.get(key)
        if want is None and not uses.get(key, 0):
            names.append("_")
            continue
        bases = _OUT_NAMES.get(node.prim.name, ())
        base = bases[j] if j < len(bases) else "t"
        names.append(em.namer.own(want, forward=False) if want else em.namer(base, inputs=False))
        em.var[(k, j)] = names[-1]
    fields["out"] = ", ".join(names) + ("," if len(names) == 1 else "")
    lines = _format(_template(node.prim, raw), fields).split("\n")
    lines[-1] += "  # " + ", ".join(_shape_comment(o._value)[2:] for o in node.out)
    em.lines.extend(lines)


def _value_of(em, r):
    """The value of an operand ref (a node's output, a MultiNode's output j, an input or constant)."""
    if r[0] == "node":
        out = em.nodes[r[1][0]].out[r[1][1]] if type(r[1]) is tuple else em.nodes[r[1]].out
        return out._value
    return r[2]._value if isinstance(r[2], Tensor) else r[2]


def _outputs(em, flat_sources, out_refs, zero):
    """The name of each source's gradient in the code, with the lines that give it one (zeros or None when
    unconnected, ``zero``: zeros)."""
    outputs = []
    for s, r in zip(flat_sources, out_refs):
        want = "d" + (em.base_of(s) or "x")
        if r is None:
            name = em.namer.own(want, forward=False)
            em.lines.append(f"{name} = np.zeros({tuple(s.shape)!r}, dtype=np.{np.dtype(s.dtype).name})"
                            f"  # {tuple(s.shape)} unconnected" if zero else
                            f"{name} = None  # {tuple(s.shape)} unconnected: no gradient reaches it "
                            "(tape.gradient gives None)")
        else:
            text = em.operand(r)
            if text.isidentifier() and (r[0] == "node" or id(r[2]) in em.ones_seed):
                name = text  # a variable of the code (or the seed's line)
            else:
                name = em.namer.own(want, forward=False)
                em.lines.append(f"{name} = {text}  {_shape_comment(_value_of(em, r))}")
        outputs.append(name)
    return outputs


def _assembled(em, outputs, rebuild):
    """The :class:`BackwardSource`: the imports the code needs, a comment listing its inputs, then its lines."""
    code_body = "\n".join(em.mask_notes + em.seed_lines + em.lines)
    header = ["import numpy as np"]
    if "special." in code_body:
        header.append("from scipy import special")
    if "scipy.linalg." in code_body:
        header.append("import scipy.linalg")
    kernels = [k for k in ("im2col", "col2im") if k + "(" in code_body]
    if kernels:
        header.append("from manualprop._im2col import " + ", ".join(kernels))
    used_inputs = {n: em.inputs[n] for n in em.inputs if re.search(r"\b%s\b" % re.escape(n), code_body)}
    ins = ", ".join(f"{n} {tuple(np.shape(v))}" for n, v in used_inputs.items())
    header.append(f"# inputs: {ins}" if ins else "# inputs: none")
    code = "\n".join(header) + "\n" + code_body + "\n"
    return BackwardSource(code, used_inputs, outputs, rebuild)
