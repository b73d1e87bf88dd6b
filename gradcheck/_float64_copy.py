"""Float32 code checked in float64 (tester25s; session 26). Deep Learning from Scratch 2 builds its layers in float32
(``hs = np.empty((N, T, H), dtype='f')``, ``W = (...).astype('f')``), so their forward returns float32 for a float64
input, and central differences of a float32 forward are noise far above a 1e-6 tolerance (float32 keeps about 7
digits; a difference quotient at h = 6e-6 keeps about 2). ``torch.autograd.gradcheck`` asks for double precision for
the same reason. :func:`float64_texts` writes a copy of the student's files with each float32 dtype they
*declare* written float64 (in float16 code, each float16 dtype too: ``half``): a ``dtype=`` argument, an ``astype`` in ``__init__`` or in a function outside the checked
class, ``np.float32`` named as a dtype. The copy is checked as the original would be (the student's files and objects
are untouched); ``gradcheck check`` says the layer computes in float32, that it was checked in float64 and why, and
what that does not cover (:mod:`gradcheck.diagnose`'s "float64-copy" note).

A float64 layer whose forward casts what it computed to float32 (``Y.astype(np.float32)`` in a method of the checked
class other than ``__init__``, of a class it uses or a function it calls, the dtype written or stored in a name:
:func:`cast_lines`) is not float32 code but a float64 layer losing precision: it keeps
its FAIL ("wrong dtype of Y"); a layer whose copy still returns float32 is NOT CHECKED ("float32-kept").
"""

from __future__ import annotations

import ast
import contextlib
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _pyast
from ._import_scan import imported_files
from ._kernel import probe_rng, upstream_draw
from ._switch_reach import file_classes, self_attr

#: The spellings of a float32 dtype: as a string and as an attribute (``np.float32``), each with its float64 spelling
#: in the copy (a string keeps its kind: ``'f'`` -> ``'d'``, ``'f4'`` -> ``'f8'``). Not float16 in float32 code: a
#: cast to float16 there is a rounding the student wrote, narrower than the file's working dtype, and the copy keeps it
#: (tester28s H: ``self.grads["w"] = (X.T @ grad).astype(np.float16)`` was written float64 and PASSed).
LOW_STRINGS = {"f": "d", "f4": "f8", "<f4": "<f8", "=f4": "=f8", "float32": "float64", "single": "double"}
LOW_ATTRS = {"float32": "float64", "single": "double"}
#: float16's spellings, with their float64 spelling: in float32 code a conversion to it is a cast (:func:`_casts`,
#: :func:`cast_lines`), never rewritten; in float16 code (its working dtype: ``half`` of :func:`float64_text`) they are
#: its declarations, rewritten as float32's are (session 30: a float16 buffer made in ``__init__`` was kept, and
#: ``--dtype float16`` on it could not be checked).
HALF_STRINGS = {"e": "d", "f2": "f8", "<f2": "<f8", "=f2": "=f8", "float16": "float64", "half": "double"}
HALF_ATTRS = {"float16": "float64", "half": "double"}
#: numpy's array makers whose dtype may come as a positional argument (``np.zeros((N, H), 'f')``).
MAKERS = ("zeros", "ones", "empty", "full", "array", "asarray", "zeros_like", "ones_like", "empty_like",
          "full_like", "arange", "frombuffer", "fromiter", "eye", "identity")

def _low_string(node: ast.AST, half: bool = False) -> bool:
    """Whether ``node`` is a string naming a float32 dtype (``'f'``, ``"float32"``), or with ``half`` a float16 one."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and (
        node.value in LOW_STRINGS or half and node.value in HALF_STRINGS)


#: The names under which numpy's dtypes are read in the files the copy reads besides those bound by ``import numpy``:
#: Deep Learning from Scratch 2's ``from common.np import *`` (numpy or cupy as ``np``), array-API code's ``xp``.
NUMPY_NAMES = ("np", "numpy", "xp", "cp")


def _numpy_names(tree: ast.AST) -> set[str]:
    """The names ``tree`` binds to numpy (``import numpy as onp``, ``import numpy``) and :data:`NUMPY_NAMES`."""
    return {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
            if a.name == "numpy"} | set(NUMPY_NAMES)


def _low_attr(node: ast.AST, numpy: set[str] | frozenset[str] = frozenset(NUMPY_NAMES), half: bool = False) -> bool:
    """Whether ``node`` is numpy's float32 dtype (``np.float32``; with ``half`` float16 too: ``numpy.half``), an
    attribute of a name ``numpy`` holds, of ``tree``'s :func:`_numpy_names`; never a student's ``self.half`` or
    ``cfg.float32`` (review27g M1: a class attribute ``half = 3`` was renamed ``self.double``, an AttributeError the
    student never wrote)."""
    return (isinstance(node, ast.Attribute) and (node.attr in LOW_ATTRS or half and node.attr in HALF_ATTRS)
            and isinstance(node.value, ast.Name) and node.value.id in numpy)


def _low(node: ast.AST, numpy: set[str] | frozenset[str] = frozenset(NUMPY_NAMES), half: bool = False) -> bool:
    """Whether ``node`` names a float32 dtype, or with ``half`` a float16 one (:func:`_low_string`,
    :func:`_low_attr`)."""
    return _low_string(node, half) or _low_attr(node, numpy, half)


#: numpy's functions that convert the array they are given (their first argument) to the dtype asked:
#: ``np.asarray(Y, dtype=np.float32)`` rounds Y as ``Y.astype(np.float32)`` does.
CONVERTERS = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "require")


def _readable(d: ast.AST, numpy: set[str] | frozenset[str] = frozenset(NUMPY_NAMES)) -> bool:
    """Whether the dtype ``d`` can be told by reading: a string, numpy's attribute, ``<array>.dtype``, a Python type."""
    return (isinstance(d, ast.Constant) or isinstance(d, ast.Name) and d.id in _HIGH_NAMES
            or isinstance(d, ast.Attribute) and (d.attr == "dtype" or isinstance(d.value, ast.Name)
                                                 and d.value.id in numpy))


#: Dtypes a conversion may name that are not float32 or float16: Python's types, spelled by name.
_HIGH_NAMES = ("float", "int", "bool", "complex", "object")


def _dtype_names(tree: ast.AST | None, c: ast.ClassDef | None,
                 numpy: set[str] | frozenset[str] = frozenset(NUMPY_NAMES)) -> dict[str, bool]:
    """``{name: whether low}``: the names that hold a dtype told by reading (:func:`_readable`) where class ``c`` of
    the module ``tree`` reads them: a module constant (``DT = np.float32``), a class attribute (``dt = 'f'``, read as
    ``self.dt``), an attribute its methods set (``self.dt = np.float32``, or ``self.dtype = dtype`` from a parameter
    whose default is one)."""
    out = {t.id: _low(n.value, numpy, half=True) for n in (tree.body if isinstance(tree, ast.Module) else ())
           if isinstance(n, ast.Assign) and _readable(n.value, numpy) for t in n.targets if isinstance(t, ast.Name)}
    for n in (c.body if c is not None else ()):
        if isinstance(n, ast.Assign) and _readable(n.value, numpy):
            out |= {f"{w}.{t.id}": _low(n.value, numpy, half=True) for t in n.targets if isinstance(t, ast.Name)
                    for w in ("self", "cls", c.name)}
    for f in (c.body if c is not None else ()):
        if not isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        a = f.args
        known = out | {p.arg: _low(d, numpy, half=True) for p, d in [*zip(a.args[len(a.args) - len(a.defaults):], a.defaults),
                                                          *zip(a.kwonlyargs, a.kw_defaults)]
                       if d is not None and _readable(d, numpy)}
        for n in ast.walk(f):
            if isinstance(n, ast.Assign) and (_readable(n.value, numpy) or ast.unparse(n.value) in known):
                low = _low(n.value, numpy, half=True) or known.get(ast.unparse(n.value), False)
                out |= {ast.unparse(t): low for t in n.targets if self_attr(t)}
    return out


def _casts(tree: ast.AST, numpy: set[str] | frozenset[str] = frozenset(NUMPY_NAMES),
           names: Mapping[str, bool] | None = None, unsure: list[ast.Call] | None = None) -> list[ast.Call]:
    """The calls of ``tree`` that convert a value they are given to a low dtype, however the dtype is passed:
    ``x.astype(<low>)``, ``x.astype(dtype=<low>)``, ``np.float32(x)``, ``np.asarray(x, <low>)``, float32 or float16,
    ``np.array(x, dtype=<low>)`` (:data:`CONVERTERS`), the dtype written or held by a name of ``names``
    (:func:`_dtype_names`: ``x.astype(self.dt)``); not the makers of a new array (``np.empty(n, dtype='f')``:
    float32 storage declared). ``unsure``: a list given receives the conversions whose dtype cannot be told by
    reading (``x.astype(config['dtype'])``, :func:`_readable`)."""
    out, names = [], names or {}
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        converts = fname == "astype" or (fname in CONVERTERS and bool(n.args))  # astype's value is its receiver
        dtypes = [k.value for k in n.keywords if k.arg == "dtype"] + (
            n.args[:1] if fname == "astype" else n.args[1:2] if fname in CONVERTERS else [])
        if ((converts and any(_low(d, numpy, half=True) or names.get(ast.unparse(d), False) for d in dtypes))
                or (_low_attr(f, numpy, half=True) and n.args)):
            out.append(n)
        elif converts and unsure is not None and any(not _readable(d, numpy) and ast.unparse(d) not in names
                                                     for d in dtypes):
            unsure.append(n)
    return out


def _reached(path: str, cls: str, files: Mapping[str, str]) -> list[tuple[str, ast.ClassDef | ast.FunctionDef]]:
    """``[(file name, ClassDef or FunctionDef)]``: class ``cls`` of ``path`` and its bases there (:func:`file_classes`),
    then every class and module-level function of ``path`` or of the files of ``files`` it imports whose name those
    call (``Linear(4, 3)`` in a Model's ``__init__``: its sub-layers; ``make_layer(4, 3)`` in another file, which
    builds one) or name as a base, also under an import's other name (``from layers import TimeRNN as _Book``) or as
    a base of the class's own name in another file, and so on; read, nothing runs."""
    start = os.path.basename(path)
    names = [n for n in imported_files(start, dict(files)) if n in files] if start in files else []
    trees = {start: file_classes(path, cls)[0], **{n: file_classes(files[n], "")[0] for n in names if n != start}}
    defined: dict[str, list[tuple[str, ast.ClassDef | ast.FunctionDef]]] = {}  # every file's, ``path``'s first
    for name, tree in sorted(trees.items(), key=lambda kv: kv[0] != start):
        for c in (ast.walk(tree) if tree is not None else ()):
            if isinstance(c, ast.ClassDef):
                defined.setdefault(c.name, []).append((name, c))
        for f in (tree.body if tree is not None else ()):  # module-level functions (a factory of sub-layers)
            if isinstance(f, ast.FunctionDef):
                defined.setdefault(f.name, []).append((name, f))
    alias = {a.asname: a.name for tree in trees.values() if tree is not None for n in ast.walk(tree)
             if isinstance(n, ast.ImportFrom) for a in n.names if a.asname}  # from layers import TimeRNN as _Book
    out, todo = [], [(start, c) for c in file_classes(path, cls)[1]]
    seen = {id(c) for _, c in todo}
    while todo:
        here = todo.pop(0)
        out.append(here)
        called = [n.func for n in ast.walk(here[1]) if isinstance(n, ast.Call)] + list(getattr(here[1], "bases", []))
        for f in called:
            word = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            word = alias.get(word, word)
            # a base of the class's own name in another file (class TimeRNN(layers.TimeRNN)) is reached too
            for d in defined.get(word, [])[:None if word == here[1].name else 1]:
                if id(d[1]) not in seen:
                    seen.add(id(d[1]))
                    todo.append(d)
    return out


def cast_lines(path: str, cls: str, files: Mapping[str, str] | None = None,
               unsure: list[str] | None = None) -> list[str]:
    """``["line N: text", ...]`` (``"name.py line N: text"`` in another file): the conversions to a float32/float16
    dtype (:func:`_casts`, however written, the dtype written or stored: :func:`_dtype_names`) in the methods other
    than ``__init__`` of class ``cls`` of the file ``path``, its bases, the classes it uses and the module functions it
    calls (:func:`_reached`: a sub-layer's forward rounding its output rounds the model's; review27g H1; a sub-layer a
    function of another file builds) in ``path`` and the files of ``files`` (``{name: path}``) it imports: a float64
    layer rounding what it computed, which keeps its FAIL; [] when there is none or the file cannot be read.
    ``unsure``: a list given receives the places of the conversions there whose dtype cannot be told by reading."""
    files = dict(files or {})
    start = os.path.basename(path)
    files.setdefault(start, path)
    out, doubt = [], []
    for name, c in _reached(path, cls, files):
        tree = file_classes(files[name], "")[0]
        try:
            with open(files[name], encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        numpy = _numpy_names(tree) if tree is not None else set(NUMPY_NAMES)
        cl = c if isinstance(c, ast.ClassDef) else None
        names, maybe = _dtype_names(tree, cl, numpy), []
        methods = [f for f in c.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                   and f.name != "__init__"] if cl is not None else [c]
        found = sorted({k.lineno for f in methods for k in _casts(f, numpy, names, maybe)})
        where = "line" if name == start else f"{name} line"
        out += [f"{where} {i}: {lines[i - 1].strip()}" for i in found if 0 < i <= len(lines)]
        doubt += [f"{where} {k.lineno}: {lines[k.lineno - 1].strip()}" for k in maybe if 0 < k.lineno <= len(lines)]
    if unsure is not None:
        unsure += list(dict.fromkeys(doubt))
    return list(dict.fromkeys(out))


def _edits(tree: ast.AST, half: bool = False) -> list[tuple[ast.AST, str]]:
    """``[(node, its float64 text)]``: each declared low dtype of ``tree``: a string given as ``dtype=``, to
    ``astype``/``np.dtype`` or positionally to one of numpy's array makers (:data:`MAKERS`), and every
    ``np.float32`` (an attribute of a name bound to numpy, :func:`_low_attr`; a student's ``self.half`` is kept);
    float32's, and with ``half`` (float16 code) float16's too (:data:`HALF_STRINGS`)."""
    out: list[tuple[ast.AST, str]] = []
    numpy = _numpy_names(tree)
    for n in ast.walk(tree):
        if _low_attr(n, numpy, half):
            out.append((n, ast.unparse(n.value) + "." + {**LOW_ATTRS, **HALF_ATTRS}[n.attr]))
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        strings = [k.value for k in n.keywords if k.arg == "dtype"] + (
            n.args[:1] if fname in ("astype", "dtype") else n.args[1:] if fname in MAKERS else [])
        out += [(s, repr({**LOW_STRINGS, **HALF_STRINGS}[s.value])) for s in strings if _low_string(s, half)]
    return out


def float64_text(text: str, half: bool = False) -> tuple[str, list[int]] | None:
    """``(source, line numbers)``: ``text`` with each declared float32 dtype (:func:`_edits`; float16 kept, but with
    ``half``, float16 code's, written float64 too) written float64, every other character (and so every line number)
    as it was; None when there is none or ``text`` does not parse."""
    try:
        tree = _pyast.parse(text)
    except (SyntaxError, ValueError):
        return None
    edits = [(n, new) for n, new in _edits(tree, half) if n.lineno == n.end_lineno]
    if not edits:
        return None
    lines = [ln.encode("utf-8") for ln in text.splitlines(keepends=True)]
    for n, new in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        b = lines[n.lineno - 1]
        lines[n.lineno - 1] = b[:n.col_offset] + new.encode("utf-8") + b[n.end_col_offset:]
    return b"".join(lines).decode("utf-8"), sorted({n.lineno for n, _ in edits})


def float64_texts(path: str, files: dict[str, str], cls: str = "", half: bool = False
                  ) -> tuple[dict[str, str], list[str]]:
    """``({file name: float64 source}, ["file line N: text", ...])`` over the checked file ``path`` and the files of
    ``files`` (``{name: path}``, :func:`gradcheck.sandbox.sibling_files`) it imports
    (:func:`gradcheck._import_scan.imported_files`), as :func:`float64_text` writes each (``half``: float16 code, its
    float16 dtypes written float64 too), the places in class ``cls`` (and its bases) of ``path`` first, then the rest
    of that file's, then the other files'; empty when none declares a float32 (or with ``half`` float16) dtype."""
    own = {i for c in file_classes(path, cls)[1] for i in range(c.lineno, (c.end_lineno or c.lineno) + 1)} \
        if cls else set()
    out, places = {}, []
    used = set(imported_files(os.path.basename(path), files))
    for name in sorted(used, key=lambda k: (k != os.path.basename(path), k)):  # the checked file's places first
        try:
            with open(files[name], encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError, KeyError):
            continue
        if (got := float64_text(text, half)) is not None:
            out[name] = got[0]
            src, first = text.splitlines(), name == os.path.basename(path)
            lines = sorted(got[1], key=lambda i: not (first and i in own))
            places += [f"{name} line {i}: {src[i - 1].strip()}" for i in lines]
    return out, places


def reached_places(path: str, cls: str, files: Mapping[str, str], places: list[str]) -> list[str]:
    """The ``places`` (``"file line N: text"``, :func:`float64_texts`) that class ``cls`` of ``path`` runs: inside it,
    its bases, the classes and functions it uses (:func:`_reached`, read, nothing runs) or at a module's top level
    (``DT = np.float32``), in ``path`` or the files of ``files``; not another class's of the same file (review29
    F16_MSG: a float16 Linear16 was told of Linear32's float32 lines beside it)."""
    files = dict(files)
    start = os.path.basename(path)
    files.setdefault(start, path)
    lines: dict[str, set[int]] = {}
    for name, node in _reached(path, cls, files):
        lines.setdefault(name, set()).update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    for name in {p.partition(" line ")[0] for p in places}:
        tree = file_classes(files[name], "")[0] if name in files else None
        for n in (tree.body if tree is not None else ()):
            if not isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                lines.setdefault(name, set()).update(range(n.lineno, (n.end_lineno or n.lineno) + 1))
    out = []
    for p in places:
        name, _, rest = p.partition(" line ")
        with contextlib.suppress(ValueError):
            if int(rest.partition(":")[0]) in lines.get(name, ()):
                out.append(p)
    return out


def where_words(places: list[str], most: int = 2) -> str:
    """The first ``most`` of ``places`` and how many more, for the "float64-copy" and "float32-kept" findings."""
    more = f" and {len(places) - most} more" if len(places) > most else ""
    return "; ".join(places[:most]) + more


def low_y(diag: Any) -> str | None:
    """The low dtype (``"float32"``) of a check stopped by a forward returning a float32 or float16 Y for float64
    inputs or weights (the diagnosis's "float32" finding on Y, in any mode: what else it says, a sub-layer's check
    among them, was found on that forward), without an error of the checked code; None otherwise."""
    ds = [diag, *getattr(diag, "other_modes", [])]
    low = [f for d in ds for f in d.findings if f.severity == "error" and f.code == "float32" and f.tensor == "Y"]
    if not low or any(d.error is not None for d in ds):
        return None
    return "float16" if "float16" in low[0].message else "float32"


def low_params(layer: Any) -> str | None:
    """The low dtype (``"float32"``) of a layer whose parameters are float32 or float16 (Deep Learning from Scratch 2's
    Rnnlm builds them with ``.astype('f')``: its loss, of integer ids, is float32 beside them, so no float64 Y is
    lost, and the check perturbs float32 weights, whose differences are noise), else None."""
    params = getattr(layer, "params", None)
    low = [v.dtype for v in (params.values() if isinstance(params, Mapping) else ())
           if isinstance(v, np.ndarray) and v.dtype in (np.float32, np.float16)]
    return np.dtype(low[0]).name if low else None


def low_tolerance(dtype: Any) -> float:
    """The tolerance of a low dtype's own numbers beside float64's: ``sqrt(eps)`` of ``dtype`` (float32: 3.5e-4,
    float16: 3.1e-2), half its digits, as the round-off of a sum of a few thousand terms stays below it (a sum of n
    terms rounds to about ``n eps`` of its terms' magnitudes, Higham, *Accuracy and Stability of Numerical
    Algorithms*, sec. 4.2) while a wrong factor (2: a relative 0.33) is far above it."""
    return float(np.sqrt(np.finfo(np.dtype(dtype)).eps))


def own_gradients(layer: Any, copy: Any, inputs: list[np.ndarray], training: bool | None, owner: str,
                  tol: float = 3.5e-4, seed: int = 0, why: dict[str, Any] | None = None
                  ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    """``(the original's, the copy's)`` ``{tensor key: gradient}`` of ``backward(G)`` after ``forward(*inputs)``, the
    checked ``layer`` and a copy of it loaded from edited files (``copy``: :func:`float64_texts`' float64 copy of float32
    code; :func:`gradcheck._log_eps.eps_free_texts`' copy without an eps) run on the same inputs and the same parameter
    values: the original given ``inputs`` in their own dtype (``--dtype float32``'s float32 X), the copy the same
    values in float64 (float inputs; review30 DTYPE_X_FLOAT64: both given float32, a backward branch on
    ``X.dtype == np.float32`` ran in both and was never seen); the parameters the copy's, written into the original's
    own arrays in their own dtype (so float32 code runs as float32, a branch on ``W.itemsize == 4`` too; redteam28 F5)
    and put back after; ``G`` drawn from ``probe_rng(seed)`` as
    :func:`gradcheck.check.check_layer` draws it. None when the two forwards differ beyond ``tol`` (relative, and
    ``tol`` times the copy's largest ``|Y|``: float32's round-off, :func:`low_tolerance`; another random draw in each,
    state the copy does not share) or the parameters differ in names or shapes: no comparison then. Both forwards
    start from the same draws: numpy's and Python's global generators and the generators each holds set from
    ``seed`` before each, in its own process (:func:`gradcheck._adapters.same_draws`), so a dropout drawing from them
    draws the same mask in both.

    ``why``: a dict given receives why None was returned: ``{"kind": "params"}`` (names or shapes differ),
    ``{"kind": "forward", "Y": (original's Y, copy's Y), "gradients": (the two as returned)}`` (forward as written,
    run twice from the same draws, gives the same Y both times: the original computes another function than its copy;
    ``"gradients"`` left out when a backward raised) or ``{"kind": "random", "Y": ...}``
    (the original's forward gives another Y when run again from the same draws: randomness gradcheck cannot set
    back, so the two cannot be run at one point).

    Raises what :func:`gradcheck.sources.manual_source` raises (the caller's probe catches it)."""
    from . import _validation as V
    from .compare import close
    from .diagnose import adapter_call
    from .sources import Call, manual_source

    why = {} if why is None else why
    mine, theirs = getattr(layer, "params", None), getattr(copy, "params", None)
    if not isinstance(mine, Mapping) or not isinstance(theirs, Mapping) or set(mine) != set(theirs) or any(
            np.shape(mine[k]) != np.shape(theirs[k]) for k in mine):
        why["kind"] = "params"
        return None
    kept = {k: np.array(v, copy=True) for k, v in mine.items()}

    def draws(x: Any) -> None:  # the same draws in each process, a held forward rewound to them (review29)
        adapter_call(x, "same_draws", int(seed))
    try:
        for k, v in mine.items():
            v[...] = theirs[k]  # in the original's own dtype (float32 stays float32)
        names = V.input_names(layer, len(inputs))
        calls = [Call(x, owner, [np.array(a, dtype=np.float64 if x is copy and np.asarray(a).dtype.kind == "f"
                                          else None, copy=True) for a in inputs], names, x.params, bool(training))
                 for x in (layer, copy)]  # the copy given their values in float64 (review30 DTYPE_X_FLOAT64)
        draws(layer)
        raw = calls[0]._run(*calls[0].inputs)  # forward as Call.forward runs it, its dtype read before validation
        why["y_dtype"] = np.asarray(raw).dtype.name  # (float64 from a float32 X beside float64 weights)
        ys = [calls[0]._validated(raw), (draws(copy), calls[1].forward(*calls[1].inputs))[1]]
        if ys[0].shape != ys[1].shape or not close(ys[0], ys[1], tol, tol * float(np.max(np.abs(ys[1]), initial=0.0))):
            draws(layer)
            again = calls[0].forward(*[np.array(a, copy=True) for a in inputs])
            why.update(kind="forward" if np.array_equal(again, ys[0], equal_nan=True) else "random", Y=tuple(ys))
            if why["kind"] == "forward" and ys[0].shape == ys[1].shape:  # each backward after its own forward
                G = upstream_draw(probe_rng(seed), ys[1].shape, [*calls[0].inputs, *kept.values()])
                with contextlib.suppress(Exception):
                    why["gradients"] = manual_source(calls[0], G), manual_source(calls[1], G)
            return None
        G = upstream_draw(probe_rng(seed), ys[1].shape, [*calls[0].inputs, *kept.values()])
        return manual_source(calls[0], G), manual_source(calls[1], G)
    finally:
        for k, v in kept.items():
            mine[k][...] = v


def own_differences(mine: Mapping[str, np.ndarray], theirs: Mapping[str, np.ndarray],
                    low: str = "float32") -> list[tuple[str, float, float | None]]:
    """``[(key, largest relative difference, factor or None), ...]`` of the gradients of :func:`own_gradients` that
    differ beyond the round-off of ``low``: compared by the one tolerance rule (:func:`gradcheck.compare.close`) at
    ``rtol`` = :func:`low_tolerance` and ``atol`` = the same times the copy's largest ``|gradient|`` (a sum's round-off
    is relative to its terms, not to an entry that cancels to near 0); ``factor``, ``c`` when the original's gradient
    is ``c`` times the copy's within that tolerance (``2.0``), else None. A gradient only one side has is left out."""
    from .compare import close, relative_error

    tol, out = low_tolerance(low), []
    for k in [k for k in theirs if k in mine]:
        a, b = (np.asarray(x, dtype=np.float64) for x in (mine[k], theirs[k]))
        if a.shape != b.shape:
            continue
        atol = tol * float(np.max(np.abs(b), initial=0.0))
        if close(a, b, tol, atol, equal_nan=True):
            continue
        bb = float(np.sum(b * b))
        c = float(np.sum(a * b)) / bb if bb > 0 else None
        factor = c if c is not None and np.isfinite(c) and close(a, c * b, tol, abs(c) * atol) else None
        out.append((k, float(np.nanmax(relative_error(a, b), initial=0.0)), factor))
    return out
