"""Float32 code checked in float64 (tester25s; session 26). Deep Learning from Scratch 2 builds its layers in float32
(``hs = np.empty((N, T, H), dtype='f')``, ``W = (...).astype('f')``), so their forward returns float32 for a float64
input, and central differences of a float32 forward are noise far above a 1e-6 tolerance (float32 keeps about 7
digits; a difference quotient at h = 6e-6 keeps about 2). ``torch.autograd.gradcheck`` asks for double precision for
the same reason. :func:`float64_texts` writes a copy of the student's files with each float32 (float16) dtype they
*declare* written float64: a ``dtype=`` argument, an ``astype`` in ``__init__`` or in a function outside the checked
class, ``np.float32`` named as a dtype. The copy is checked as the original would be (the student's files and objects
are untouched); ``gradcheck check`` says the layer computes in float32, that it was checked in float64 and why, and
what that does not cover (:mod:`gradcheck.diagnose`'s "float64-copy" note).

A float64 layer whose forward casts what it computed to float32 (``Y.astype(np.float32)`` in a method of the checked
class other than ``__init__``: :func:`cast_lines`) is not float32 code but a float64 layer losing precision: it keeps
its FAIL ("wrong dtype of Y"); a layer whose copy still returns float32 is NOT CHECKED ("float32-kept").
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._import_scan import imported_files
from ._switch_reach import file_classes

#: The spellings of a float32 or float16 dtype: as a string and as an attribute (``np.float32``), each with its float64
#: spelling in the copy (a string keeps its kind: ``'f'`` -> ``'d'``, ``'f4'`` -> ``'f8'``).
LOW_STRINGS = {"f": "d", "f4": "f8", "<f4": "<f8", "=f4": "=f8", "float32": "float64", "single": "double",
               "e": "d", "f2": "f8", "<f2": "<f8", "float16": "float64", "half": "double"}
LOW_ATTRS = {"float32": "float64", "single": "double", "float16": "float64", "half": "double"}
#: numpy's array makers whose dtype may come as a positional argument (``np.zeros((N, H), 'f')``).
MAKERS = ("zeros", "ones", "empty", "full", "array", "asarray", "zeros_like", "ones_like", "empty_like",
          "full_like", "arange", "frombuffer", "fromiter", "eye", "identity")

def _low_string(node: ast.AST) -> bool:
    """Whether ``node`` is a string naming a float32/float16 dtype (``'f'``, ``"float32"``)."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in LOW_STRINGS


def _low_attr(node: ast.AST) -> bool:
    """Whether ``node`` is an attribute naming a float32/float16 dtype (``np.float32``, ``numpy.half``)."""
    return isinstance(node, ast.Attribute) and node.attr in LOW_ATTRS


def _casts(tree: ast.AST) -> list[ast.Call]:
    """The calls of ``tree`` that cast a value to a low dtype: ``x.astype(<low>)`` and ``np.float32(x)``."""
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if isinstance(f, ast.Attribute) and f.attr == "astype" and n.args and (_low_string(n.args[0])
                                                                                or _low_attr(n.args[0])):
            out.append(n)
        elif _low_attr(f) and n.args:
            out.append(n)
    return out


def cast_lines(path: str, cls: str) -> list[str]:
    """``["line N: text", ...]``: the casts to a float32/float16 dtype (:func:`_casts`) in the methods other than
    ``__init__`` of class ``cls`` of the file ``path`` and its bases there: a float64 layer rounding what it computed,
    which keeps its FAIL; [] when there is none or the file cannot be read."""
    tree, classes = file_classes(path, cls)
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    found = sorted({c.lineno for k in classes for f in k.body if isinstance(f, ast.FunctionDef)
                    and f.name != "__init__" for c in _casts(f)})
    return [f"line {i}: {lines[i - 1].strip()}" for i in found if 0 < i <= len(lines)]


def _edits(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    """``[(node, its float64 text)]``: each declared low dtype of ``tree``: a string given as ``dtype=``, to
    ``astype``/``np.dtype`` or positionally to one of numpy's array makers (:data:`MAKERS`), and every
    ``<module>.float32`` attribute (only ever a dtype)."""
    out: list[tuple[ast.AST, str]] = []
    for n in ast.walk(tree):
        if _low_attr(n):
            out.append((n, ast.unparse(n.value) + "." + LOW_ATTRS[n.attr]))
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        strings = [k.value for k in n.keywords if k.arg == "dtype"] + (
            n.args[:1] if fname in ("astype", "dtype") else n.args[1:] if fname in MAKERS else [])
        out += [(s, repr(LOW_STRINGS[s.value])) for s in strings if _low_string(s)]
    return out


def float64_text(text: str) -> tuple[str, list[int]] | None:
    """``(source, line numbers)``: ``text`` with each declared float32/float16 dtype (:func:`_edits`) written
    float64, every other character (and so every line number) as it was; None when there is none or ``text`` does
    not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    edits = [(n, new) for n, new in _edits(tree) if n.lineno == n.end_lineno]
    if not edits:
        return None
    lines = [ln.encode("utf-8") for ln in text.splitlines(keepends=True)]
    for n, new in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        b = lines[n.lineno - 1]
        lines[n.lineno - 1] = b[:n.col_offset] + new.encode("utf-8") + b[n.end_col_offset:]
    return b"".join(lines).decode("utf-8"), sorted({n.lineno for n, _ in edits})


def float64_texts(path: str, files: dict[str, str], cls: str = "") -> tuple[dict[str, str], list[str]]:
    """``({file name: float64 source}, ["file line N: text", ...])`` over the checked file ``path`` and the files of
    ``files`` (``{name: path}``, :func:`gradcheck.sandbox.sibling_files`) it imports
    (:func:`gradcheck._import_scan.imported_files`), as :func:`float64_text` writes each, the places in class ``cls``
    (and its bases) of ``path`` first, then the rest of that file's, then the other files'; empty when none declares
    a float32 or float16 dtype."""
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
        if (got := float64_text(text)) is not None:
            out[name] = got[0]
            src, first = text.splitlines(), name == os.path.basename(path)
            lines = sorted(got[1], key=lambda i: not (first and i in own))
            places += [f"{name} line {i}: {src[i - 1].strip()}" for i in lines]
    return out, places


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
