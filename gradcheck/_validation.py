"""The one place gradcheck validates its arguments (UsageError) and what the code under check returns:
student code runs through :func:`call_student`, every returned value is validated (:func:`check_output`)."""

from __future__ import annotations

import contextlib
import inspect
import json
import math
import os
import re
import sys
import tempfile
import textwrap
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from manualprop._validation import format_shape as fmt_shape  # "(8, 5)", "(3,)"
from manualprop._validation import sum_of_squares

from .errors import (
    GraderError,
    GradientShapeError,
    MissingGradientError,
    NonFiniteError,
    NotCheckedError,
    ProtocolError,
    StudentCodeError,
    UnusableError,
    UsageError,
    code,
    stepped,
)

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))

#: Largest number of elements of one input array (80 MB of float64; every element is perturbed).
MAX_INPUT_ELEMENTS = 10**7
#: Seeds are 32-bit unsigned integers (numpy accepts more, scikit-learn's random_state does not).
MAX_SEED = 2**32 - 1
#: Allowed relative steps ``eps``: below, rounding (about u/eps) swamps a difference; above,
#: truncation does. The complex step has no cancellation: tiny steps are fine.
EPS_RANGE = {"difference": (1e-12, 1.0), "complex": (1e-100, 1e-2)}
PARAM_MEMORY_FIX = "Give each parameter its own memory, e.g. self.params[...] = np.array(W) (a copy)."


def paragraph(*sentences: str) -> str:
    """Join sentences into one paragraph (single spaces, no line breaks)."""
    return " ".join(s.strip() for s in sentences if s and s.strip())


def wrap(text: str, width: int = 88) -> str:
    """Wrap a paragraph for terminal output, its control characters shown as :func:`printable` shows them (a
    source line or a name of the checked code may hold ESC: redteam27 M3, a quoted line cleared the screen)."""
    return textwrap.fill(printable(text), width=width, break_long_words=False, break_on_hyphens=False)


def printable(text: str) -> str:
    """``text`` safe for a terminal: each whitespace control character (newline, tab, ...) a space, any other
    unprintable one (ESC, C1 controls, format characters such as U+202E) escaped as Python writes it (``\\x1b``),
    so that no text of the checked code moves the cursor, clears the screen, sets the title or the clipboard."""
    return text if text.isprintable() else "".join(map(shown_char, text))


def shown_char(ch: str) -> str:
    """One character as :func:`printable` shows it: itself when printable, a space for whitespace, else its escape."""
    return ch if ch.isprintable() else " " if ch.isspace() else ch.encode("unicode_escape").decode("ascii")


def article(word: str) -> str:
    """``"an int"``, ``"a list"``: the word with its indefinite article."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def _parse_shape(text: str) -> tuple[int, ...]:
    cleaned = text.strip().strip("()[]").strip()
    if any(len(p.split()) > 1 for p in cleaned.split(",")):
        raise UsageError(paragraph(
            f"--input-shape takes the sizes separated by commas, such as 8,5 (batch 8, "
            f"5 features), and several inputs separated by semicolons, such as "
            f"'2,4,3;2,5,3'; got {text!r} (sizes separated by blanks)."))
    parts = [p.strip() for p in cleaned.removesuffix(",").split(",")]  # "8," as in a 1-tuple
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        shape = ()
    if not shape or any(s <= 0 for s in shape):
        bad = next((s for s in shape if s <= 0), None)
        why = "" if bad is None else f" ({bad} is {'negative' if bad < 0 else 'an empty size'}: every size counts " \
                                      "rows, features or positions, at least 1)"
        raise UsageError(paragraph(
            f"--input-shape must be comma-separated positive integers such as 8,5 "
            f"(batch 8, 5 features); got {text!r}{why}."))
    return check_shape(shape, "--input-shape")


def parse_input_shapes(text: str) -> tuple[int, ...] | list[tuple[int, ...]]:
    """``--input-shape``: ``"8,5"`` or ``"(8, 5)"`` -> ``(8, 5)``; ``"2,4,3;2,5,3"`` -> a list; else UsageError."""
    parts = [p for p in text.split(";") if p.strip()]
    if ";" in text and len(parts) != len(text.split(";")):  # tester20s: '6,4;;4' read as two shapes, silently
        empty = [i for i, p in enumerate(text.split(";")) if not p.strip()]
        raise UsageError(paragraph(
            f"--input-shape {text!r}: shape {empty[0]} (counting from 0) between the ';' is empty; give one shape per",
            "input of forward, separated by ';' (e.g. '6,4;4;4')."))
    return [_parse_shape(p) for p in parts] if len(parts) > 1 else _parse_shape(text)


def parse_indices(text: str | None, shape) -> dict[int, int]:
    """``--indices``: ``"5"`` (input 0) or ``"0:5,2:7"`` -> ``{input position: HIGH}``; UsageError otherwise.

    An input named here holds integer indices drawn from ``[0, HIGH)`` (an embedding lookup's ids),
    not standard-normal floats; ``shape`` is the parsed ``--input-shape``, for the positions."""
    if text is None:
        return {}
    n = 1 if isinstance(shape[0], int) else len(shape)
    out: dict[int, int] = {}
    for part in text.split(","):
        pos, _, high = part.strip().rpartition(":")
        try:
            i, h = int(pos or 0), int(high)
        except ValueError:
            i, h = -1, 0
        if not 0 <= i < n or h < 1 or i in out:
            raise UsageError(paragraph(
                "--indices takes HIGH (input 0 holds integer indices in [0, HIGH)) or POS:HIGH pairs separated",
                f"by commas, one per integer input, POS from 0 to {n - 1} (the order of --input-shape), e.g.",
                f"--indices 5 or --indices 0:5; got {text!r}."))
        out[i] = h
    return out


def index_inputs(shape, indices: dict[int, int], seed: int):
    """``shape`` with the inputs named by ``indices`` replaced by integer arrays of their shapes, drawn
    from ``[0, HIGH)`` with seed ``[seed, 6]`` (:func:`layer_inputs` draws the floats from the shapes).

    An array of two or more ids always repeats one, and one within a line along each axis (:func:`with_repeat`): a
    scatter-add written ``dW[idx] += dY`` (numpy's buffered fancy-index add) is right on distinct ids and wrong on
    repeated ones, so a draw without a repeat would pass it (tester19s), and a loop over rows or time steps of
    such adds one without a repeat within a line (outside44 H1)."""
    if not indices:
        return shape
    rng = np.random.default_rng([seed, 6])
    shapes = [shape] if isinstance(shape[0], int) else list(shape)
    spec = [with_repeat(rng.integers(0, indices[i], size=s)) if i in indices else s for i, s in enumerate(shapes)]
    return spec[0] if isinstance(shape[0], int) else spec


def with_repeat(ids: np.ndarray) -> np.ndarray:
    """``ids`` (drawn integer indices) with its last entry set to its first when no id repeats and it has two or
    more entries, so that at least one index repeats; and, for two or more axes, along each axis of two or more
    entries where no line repeats an id, its second entry on the first line set to the first: a loop over rows
    ``for k: dW[ids[k]] += dY[k]`` (karpathy/nn-zero-to-hero#57) or over time ``for t: dW[ids[:, t]] += dY[:, t]``
    loses only a repeat within one line, which a repeat across lines does not show (outside44 H1)."""
    flat = ids.reshape(-1)
    if flat.size >= 2 and np.unique(flat).size == flat.size:
        flat[-1] = flat[0]
    for axis in range(ids.ndim if ids.ndim >= 2 else 0):
        if ids.shape[axis] >= 2 and not np.any(np.diff(np.sort(ids, axis=axis), axis=axis) == 0):
            ids[tuple(1 if a == axis else 0 for a in range(ids.ndim))] = ids[(0,) * ids.ndim]
    return ids


def repeats_no_index(x: np.ndarray) -> bool:
    """Whether an integer input holds no repeated index (one entry, or all distinct): a scatter-add bug
    (``dW[idx] += dY``) cannot show on it."""
    return x.dtype.kind in "iu" and np.unique(x).size == x.size


def parse_target(spec: str) -> tuple[str, str]:
    """Split ``path/to/file.py::ClassName`` into ``(path, name)``; UsageError otherwise."""
    path, _, cls = spec.rpartition("::")
    if "::" not in spec or not path or not cls.isidentifier():
        two = " (two colons)" if "::" not in spec else ""
        raise UsageError(f"the target must be written path/to/file.py::ClassName{two}; got {spec!r}.")
    if not path.endswith(".py"):  # Python imports nothing else from a path: not the student's fault
        how = (f" A notebook exports its code with {code(f'jupyter nbconvert --to script {path}')} (writes "
               f"{path[:-len('.ipynb')]}.py)." if path.endswith(".ipynb") else "")
        raise UsageError(f"expected a .py file before '::'; got {path!r}.{how}")
    return path, cls


def parse_init_json(text: str | None) -> dict[str, Any]:
    """``--init`` (keyword arguments as a JSON object) as a dict, None -> ``{}``; else UsageError, also for a
    key given twice in one object (JSON would silently keep the last value)."""
    def unique(pairs):
        keys = [k for k, _ in pairs]
        twice = next((k for k in keys if keys.count(k) > 1), None)
        if twice is not None:
            raise UsageError(f"--init: key {twice!r} given twice in one JSON object; give each argument once.")
        return dict(pairs)

    try:
        value = {} if text is None else json.loads(text, object_pairs_hook=unique)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--init must be a JSON object such as '{{\"in_features\": 5, \"out_features\": 3}}'; "
            f"{text!r} is not valid JSON ({exc.msg} at character {exc.pos}).") from None
    if not isinstance(value, dict):
        raise UsageError(f"--init must be a JSON object (keyword arguments); got {type(value).__name__}.")
    return value


def check_shape(shape: Any, what: str = "input_shape") -> tuple[int, ...]:
    """A non-empty tuple of positive ints of at most :data:`MAX_INPUT_ELEMENTS` elements, else UsageError."""
    try:
        out = tuple(int(s) for s in shape)
        ok = len(out) > 0 and all(s > 0 and s == t for s, t in zip(out, shape))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise UsageError(f"{what} must be a non-empty tuple of positive integers; got {shape!r}.")
    n = math.prod(out)
    if n > MAX_INPUT_ELEMENTS:
        raise UsageError(paragraph(
            f"{what} {fmt_shape(out)} has {n:,} elements; at most {MAX_INPUT_ELEMENTS:,} (10**7, 80 MB of",
            "float64) are allowed per input. A gradient check perturbs every element: a few samples and",
            "features are enough, e.g. 8,5."))
    return out


def check_eps(eps: Any, method: str = "central", what: str = "eps") -> float | None:
    """A finite-difference step within :data:`EPS_RANGE` for ``method`` (None: the default), else UsageError."""
    if eps is None:
        return None
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise UsageError(f"{what} must be a number; got {eps!r}.") from None
    lo, hi = EPS_RANGE["complex" if method == "complex" else "difference"]
    if not (np.isfinite(e) and lo <= e <= hi):
        why = ("the complex step needs 0 < h small" if method == "complex" else
               "smaller steps drown in rounding error, about 2.2e-16/eps; larger ones in truncation error")
        raise UsageError(f"{what} must be between {lo:g} and {hi:g} for {method} differences ({why}); "
                         f"got {eps!r}. The default is usually best.")
    return e


def check_tolerances(rtol: float, atol: float,
                     names: tuple[str, str] = ("rtol", "atol")) -> tuple[float, float]:
    """Validate ``0 < rtol < 1`` and ``atol >= 0``, both finite; UsageError naming ``names``.

    ``rtol >= 1`` is refused: the relative error ``|a - b| / (|a| + |b|)`` is at most 1, so it
    would pass every gradient, even one of the wrong sign.
    """
    rname, aname = names
    try:
        rtol_f, atol_f = float(rtol), float(atol)
    except (TypeError, ValueError):
        raise UsageError(f"{rname} and {aname} must be numbers; got {rname}={rtol!r}, "
                         f"{aname}={atol!r}.") from None
    if not (np.isfinite(rtol_f) and 0 < rtol_f < 1):
        why = (" (the relative error |a - b| / (|a| + |b|) is at most 1, so rtol >= 1 would "
               "pass every gradient, even one of the wrong sign; 1e-6 is the default)"
               if np.isfinite(rtol_f) and rtol_f >= 1 else "")
        raise UsageError(f"{rname} must be a finite number in (0, 1); got {rtol!r}{why}.")
    if not (np.isfinite(atol_f) and atol_f >= 0):
        raise UsageError(f"{aname} must be a finite number >= 0; got {atol!r}.")
    return rtol_f, atol_f


def _check_writable(path: str, what: str, folder: bool = False) -> None:
    """Prove a file (``folder``: a folder, made if needed) can be written, leaving no file behind. A file's folder
    must exist, as most command-line tools require (tester15 L6: ``--json /nonexistent/dir/x.json`` made the
    folders); an output folder (``--plots``) is made with its parents."""
    if not folder and os.path.isdir(path):
        raise UsageError(f"{what} {path} is a folder; expected a file name, e.g. {os.path.join(path, 'out.json')}.")
    if not folder and not os.path.isdir(parent := os.path.dirname(os.path.abspath(path))):
        raise UsageError(f"{what} {path}: the folder {parent} does not exist; create it first, or give a file "
                         f"in an existing folder.")
    existed = os.path.exists(path)
    try:
        if folder:
            os.makedirs(path, exist_ok=True)
            tempfile.TemporaryFile(prefix=".gradcheck-write-test-", dir=path).close()  # deleted on close
        else:
            open(path, "a", encoding="utf-8").close()
            if not existed:
                os.remove(path)
    except OSError as exc:
        raise UsageError(f"{what} {path}: cannot write {'into this folder' if folder else 'this file'} "
                         f"({exc.strerror or exc}); choose a {'folder' if folder else 'path'} you can write to.") from None


def validate_cli_args(args: Any) -> None:
    """Check the options of ``gradcheck zoo|check|train`` before any work; UsageError naming the option.
    The output paths are tried last, so a bad option leaves nothing behind."""
    get = lambda name: getattr(args, name, None)  # noqa: E731
    seed = get("seed")
    if hasattr(args, "seed") and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                                  or not 0 <= int(seed) <= MAX_SEED):
        raise UsageError(f"--seed must be an integer from 0 to {MAX_SEED}; got {seed!r}.")
    if get("rtol") is not None or get("atol") is not None:
        check_tolerances(1e-6 if get("rtol") is None else args.rtol,
                         1e-9 if get("atol") is None else args.atol, ("--rtol", "--atol"))
    if hasattr(args, "eps"):
        check_eps(args.eps, get("method") or "central", "--eps")
    if hasattr(args, "timeout") and not (args.timeout > 0 and np.isfinite(args.timeout)):
        raise UsageError(f"--timeout must be a positive number of seconds; got {args.timeout}.")
    if hasattr(args, "epochs") and args.epochs <= 0:
        raise UsageError(f"--epochs must be a positive integer; got {args.epochs}.")
    if get("input_shape") is not None:
        parse_input_shapes(args.input_shape)
    if hasattr(args, "init"):
        parse_init_json(args.init)
    if get("json"):
        _check_writable(args.json, "--json")
    if get("plots"):
        _check_writable(args.plots, "--plots", folder=True)


#: ``--init`` examples for CS231n's settings dicts (``conv_param``, ...), which are not arrays.
_SETTINGS = {"conv_param": '{"stride": 1, "pad": 1}', "bn_param": '{"mode": "train"}',
             "pool_param": '{"pool_height": 2, "pool_width": 2, "stride": 2}',
             "dropout_param": '{"p": 0.5, "mode": "train", "seed": 0}'}


def check_input_count(n_given: int, owner: str, params: list[str], required: int | None = None,
                      varargs: bool = False) -> None:
    """UsageError unless ``n_given`` shapes fit forward's positional ``params`` (``required``: no default);
    CS231n's ``*_param`` settings dicts are pointed to ``--init``."""
    need = len(params) if required is None else int(required)
    if varargs or not params or need <= n_given <= len(params):
        return
    shown = f"{len(params)} input{'s' if len(params) != 1 else ''} ({', '.join(params)})"
    if need != len(params):
        shown = f"{need} to {len(params)} inputs ({', '.join(params)})"
    given = f"{n_given} input shape{'s' if n_given != 1 else ''} given, but {called(owner, 'forward')} takes {shown}."
    settings = [p for p in params[n_given:] if p.endswith("_param")]
    if settings and n_given >= len(params) - len(settings):
        one = len(settings) == 1
        init = ", ".join(f'"{p}": {_SETTINGS.get(p, "{...}")}' for p in settings)
        raise UsageError(paragraph(
            given, f"{' and '.join(settings)} {'is a dict' if one else 'are dicts'} of settings, not "
            f"{'an array' if one else 'arrays'}: pass {'it' if one else 'them'} in "
            f"--init, e.g. --init '{{{init}}}', and give --input-shape for the arrays only."))
    raise UsageError(paragraph(
        given, "--input-shape takes one shape per input of forward, separated by ';' (e.g. '2,4,3;2,5,3'); "
        "a single input is written 8,5." if n_given > 1 or len(params) > 1 else ""))


def shared_entries(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> str:
    """How an array layout (numpy's ``shape``, ``strides``, ``itemsize``) maps two indices to the same
    memory, or ``""``. Sorted by stride, axis ``k`` cannot overlap those below it when ``|stride_k| >=
    itemsize + sum_j |stride_j| (n_j - 1)`` (C, F, slices); other layouts are decided from their offsets.
    """
    axes = [(abs(int(st)), int(n), ax) for ax, (n, st) in enumerate(zip(shape, strides)) if int(n) > 1]
    for st, _, ax in axes:
        if st == 0:
            return f"stride 0 along axis {ax}"
    span = int(itemsize)
    for st, n, _ in sorted(axes):
        if st < span:
            break
        span += st * (n - 1)
    else:
        return ""
    if int(np.prod(shape, dtype=np.int64)) > MAX_INPUT_ELEMENTS:  # too many to list: refuse
        return f"strides {tuple(int(s) for s in strides)} that may overlap"
    offsets = np.zeros(1, dtype=np.int64)
    for n, st in zip(shape, strides):
        offsets = np.add.outer(offsets, np.arange(int(n), dtype=np.int64) * int(st)).ravel()
    if np.unique(offsets).size == offsets.size:
        return ""
    return f"overlapping strides {tuple(int(s) for s in strides)}"


def own_memory(arr: Any, what: str, *, error: type = UsageError, fix: str = "",
               layout: tuple[tuple[int, ...], tuple[int, ...], int] | None = None) -> None:
    """Refuse (``error``) a float array whose entries share memory (:func:`shared_entries`), or whose
    ``layout`` = ``(shape, strides, itemsize)`` (an array in the sandbox child) lets them share it."""
    if layout is None:
        if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "fc":
            return
        layout = (arr.shape, arr.strides, arr.itemsize)
    how = shared_entries(*layout)
    if how:
        raise error(paragraph(
            f"{what} has entries that share memory ({how}, as np.broadcast_to or",
            "np.lib.stride_tricks.as_strided make): changing one entry changes others, so finite differences,",
            "which perturb one entry at a time, would give wrong numbers.",
            fix or "Pass a copy whose entries have their own memory (np.array(a) or a.copy()) if the entries are "
                   "meant to be independent."))


def as_float64(x: Any, what: str, integer_ok: bool = False) -> np.ndarray:
    """A float64 copy of an input array (``integer_ok``: integers/bools as an int64 copy, indices); float32/16
    warn (central differences reach only ``u**(2/3)``). UsageError: not numeric, empty, NaN/inf, shared entries."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise UsageError(f"{what} must be a real numeric array; got dtype {arr.dtype}.")
    if arr.size == 0:
        raise UsageError(f"{what} is empty (shape {fmt_shape(arr.shape)}).")
    if integer_ok and arr.dtype.kind in "biu":
        return np.array(arr, dtype=np.int64, copy=True)
    own_memory(arr, what)  # on the array as given: the copy below would hide it
    if arr.dtype.kind == "f" and arr.dtype.itemsize < 8:
        warnings.warn(
            f"{what} is {arr.dtype}; upcasting to float64 because central differences in "
            f"{arr.dtype} are accurate to about {np.finfo(arr.dtype).eps ** (2 / 3):.0e} at best "
            f"(machine epsilon to the 2/3), far above a 1e-6 tolerance.", UserWarning, stacklevel=3)
    out = np.array(arr, dtype=np.float64, copy=True)
    if not np.all(np.isfinite(out)):
        raise UsageError(f"{what} contains NaN or infinity.")
    return out


def _is_shape(x: Any) -> bool:
    return isinstance(x, tuple) and len(x) > 0 and all(isinstance(s, (int, np.integer)) for s in x)


def drawn_values(shapes: Mapping[str, tuple[int, ...]], seed: int) -> dict[str, np.ndarray]:
    """The parameter values the grader evaluates at (:func:`gradcheck.grading.checks.evaluation_point`), also those ``gradcheck check`` checks
    a layer at again when its parameters start constant (zeros, ones: values that hide terms,
    :func:`gradcheck.diagnose.diagnose_layer`).

    Parameters
    ----------
    shapes : mapping of str to tuple of int
        Each parameter's shape, in the order drawn.
    seed : int
        The only source of the draws.

    Returns
    -------
    dict of str to ndarray
        Normal draws, with standard deviation ``1/sqrt(fan_in)`` for two axes or more (LeCun's; ``fan_in`` the
        product of all axes but the first) and 1 for a vector (a bias is then nonzero).
    """
    rng = np.random.default_rng([seed, 0x9A7A])  # apart from the upstream gradient's stream (seed)
    return {k: rng.standard_normal(s) / (np.sqrt(np.prod(s[1:])) if len(s) > 1 else 1.0)
            for k, s in ((k, tuple(s)) for k, s in shapes.items())}


#: Forward's constants farther from 0 than this are not checked around (:func:`straddled_values`): a constant
#: guarding an overflow (``np.clip(x, -500, 500)`` before ``np.exp``) would put exp(500) ~ 1e217 into the check, its
#: squares beyond float64; 50 covers ReLU6's 6, hard sigmoid's and hardtanh's, clamps and softplus's threshold 20
#: (exp(51) ~ 1e22 still leaves squares and products finite).
STRADDLE_MAX = 50.0
#: How far from a constant the entries drawn around it stay at least: a kink of forward is there, and the checker's
#: steps (about 1e-5) must not cross it.
STRADDLE_GAP = 0.1


def straddled_values(x: np.ndarray, constants: Sequence[float]) -> np.ndarray:
    """Inputs around forward's constants (:func:`gradcheck.diagnose.at_straddled_inputs`), as ``drawn_values`` is
    the parameters' other point: entry ``i`` of ``x`` (flat order) moved to ``c + s (STRADDLE_GAP + |x_i| / 2)`` with
    ``c = constants[i % k]`` and the sign ``s`` alternating + and - over the entries of each constant, so that every
    constant has entries on both sides of it once it has two entries.

    Parameters
    ----------
    x : ndarray of float
        The drawn input (standard normal), any shape.
    constants : sequence of float
        The values to straddle, ``k >= 1`` of them.

    Returns
    -------
    ndarray of float64
        The same shape as ``x``, a new array.
    """
    flat = np.abs(np.asarray(x, dtype=np.float64)).ravel()
    i = np.arange(flat.size)
    k = len(constants)
    c = np.asarray(constants, dtype=np.float64)[i % k]
    s = np.where((i // k) % 2 == 0, 1.0, -1.0)
    return (c + s * (STRADDLE_GAP + flat / 2)).reshape(np.shape(x))


def layer_inputs(X: Any, rng: np.random.Generator, owner: str, dtype: Any = None) -> list[np.ndarray]:
    """The ``X`` of :func:`gradcheck.check_layer` as a list of input arrays (UsageError if invalid): a tuple
    of ints is a shape, a list/tuple of arrays or shapes several inputs, anything else one input's data. ``dtype``
    (``gradcheck check --dtype float32``): the float inputs drawn from a shape rounded to it (float64 otherwise)."""
    several = isinstance(X, (list, tuple)) and len(X) > 0 and not _is_shape(X) and all(
        isinstance(e, np.ndarray) or _is_shape(e) for e in X)
    if isinstance(X, tuple) and len(X) == 0:
        raise UsageError(f"input shape of {owner} is empty; expected e.g. (8, 5).")
    return [rng.standard_normal(check_shape(e)).astype(dtype or np.float64) if _is_shape(e) else
            as_float64(e, f"input {i} of {owner}" if several else f"input X of {owner}", integer_ok=True)
            for i, e in enumerate(X if several else [X])]


def batch_axis(inputs: list[np.ndarray], weights: Sequence[Any] = ()) -> int:
    """The batch axis of the first input: 1 for a batch-last layout (Andrew Ng's ``A (n_in, m)`` of Coursera's
    ``linear_forward(A, W, b)``, Nielsen's column vectors ``x (n_in, 1)``), told by a 2-D ``X`` whose axis 0 is
    the size a 2-D weight ``(n_out, n_in)`` multiplies (``W @ X``): a weight among ``weights`` (the other inputs
    and the parameters) with ``shape[1] == X.shape[0] > 1``; 0 otherwise (the batch-first layout of every other
    signature)."""
    X = inputs[0] if inputs else None
    if X is None or np.ndim(X) != 2 or X.shape[0] < 2 or X.shape[1] >= X.shape[0]:
        return 0
    mul = any(np.ndim(w) == 2 and np.shape(w)[1] == X.shape[0] and np.shape(w) != X.shape for w in weights)
    return 1 if mul else 0


def _square(shape: tuple[int, ...]) -> bool:
    """Whether ``shape`` is a batch of square images, (N, C, H, W) with ``H == W > 1`` (the layout of CS231n's, hipsternet's
    and manualprop's convolutions and pools)."""
    return len(shape) == 4 and shape[2] == shape[3] > 1


def suggested_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The input shape the notes on a shape suggest in place of ``shape``: a batch of at least 2 (batch-first), and a
    width one more than the height for square images (:func:`_square`), so a swap of either pair of axes shows."""
    out = (max(2, shape[0]), *shape[1:])
    return (*out[:3], out[3] + 1) if _square(shape) else out


def square_input_note(inputs: list[np.ndarray], names: list[str], owner: str) -> str:
    """A note when the first input is a batch of square images (:func:`_square`): a height/width mix-up gives the right
    numbers there (corpus38 F4: hipsternet's pool reads ``n, d, w, h = X.shape``, right at 4 x 4, rel err 0.45 at
    4 x 6); the text or ``""``. A note beside the result, not a warning (the batch of one's): a square image is the
    usual choice, and nothing is wrong with the check itself."""
    X = inputs[0]
    if not _square(np.shape(X)):
        return ""
    return paragraph(f"square input: {owner} is checked with {names[0]} of shape {fmt_shape(X.shape)}, whose height "
                     f"and width are both {X.shape[2]}, and a square input hides height/width mix-ups (n, c, w, h = "
                     f"{names[0]}.shape, or a transpose of the last two axes, gives the right numbers when H == W); "
                     f"check with a non-square input too, e.g. {fmt_shape(suggested_shape(X.shape))}.")


def warn_batch_of_one(inputs: list[np.ndarray], names: list[str], owner: str, weights: Sequence[Any] = ()) -> str:
    """Warn when the batch axis of the first input has size 1 (it hides batch-axis bugs); the text or ``""``.

    The batch axis is axis 0, or axis 1 for a batch-last layout (:func:`batch_axis`: ``A (5, 1)`` with a weight
    ``W (3, 5)``, the layout whose ``db = dZ`` without a sum over the batch is right for one column only). A weight
    ``(1, n)`` beside ``X (n, 1)`` multiplies it either way (``W @ X``, ``X @ W``): the text says both readings
    (review31 BATCH_AXIS_FEATURE_OF_ONE: it said "batch of one" of 4 samples of one feature)."""
    X = inputs[0]
    axis = batch_axis(inputs, weights)
    if X.ndim < 2 or X.shape[axis] != 1:
        return ""
    two = (X.shape[0], 2, *X.shape[2:]) if axis else suggested_shape(X.shape)
    where = " (its batch axis is axis 1: each column a sample)" if axis else ""
    hides = ("batch-axis bugs (a mean over the batch instead of a sum, a sum over the batch left out, or a reshape or "
             "transpose that mixes the batch axis with another, gives the right numbers for one sample)")
    both = [np.shape(w) for w in weights if axis and np.ndim(w) == 2 and np.shape(w) == X.shape[::-1]]
    if both:  # W (1, n), X (n, 1): W @ X (one sample of n) and X @ W (n samples of one) alike (review31)
        text = paragraph(
            f"batch of one? {owner} is checked with {names[0]} of shape {fmt_shape(X.shape)} beside a weight of "
            f"shape {fmt_shape(both[0])}, which multiplies it either way: if each row is a sample ({names[0]} @ W), "
            f"the batch is {X.shape[0]} and this does not apply; if each column is one (W @ {names[0]}, "
            f"batch-last), the batch is 1, which hides {hides}: then check with a batch of at least 2, e.g. "
            f"{fmt_shape(two)}.")
    else:
        text = paragraph(f"batch of one: {owner} is checked with {names[0]} of shape {fmt_shape(X.shape)}{where}, "
                         f"and a batch of 1 hides {hides}; check with a batch of at least 2, e.g. {fmt_shape(two)}.")
    warnings.warn(text, UserWarning, stacklevel=3)
    return text


def input_names(layer: Any, n: int) -> list[str]:
    """``["X"]`` for one input (a CS231n pair's, sandboxed or local: its own first argument, ``x`` of
    ``relu_forward(x)``, as its several inputs are named); for several, forward's positional names (``Q, K, V``), else ``X0, X1, ...``."""
    if n == 1:
        inner = layer.__dict__.get("_layer", layer) if hasattr(layer, "__dict__") else layer  # a held layer's
        proto, own = getattr(inner, "protocol", None), getattr(inner, "forward_params", None)
        pair = isinstance(proto, dict) and proto.get("protocol") == "cs231n"
        if not pair and getattr(inner, "mode_in_keywords", False) and callable(getattr(inner, "student_forward", None)):
            try:  # a local FunctionPair (gradcheck.function_pair in a notebook): relu_forward(x) -> dx, as in the sandbox
                own, pair = [p.name for p in inspect.signature(inner.student_forward).parameters.values()
                             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)], True
            except (TypeError, ValueError):
                pass
        return [own[0]] if pair and own and isinstance(own[0], str) and own[0].isidentifier() else ["X"]
    try:
        ps = [p.name for p in inspect.signature(layer.forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in ("self", "training")]
    except (TypeError, ValueError):
        ps = []
    return ps[:n] if len(ps) >= n else [f"X{i}" for i in range(n)]


def raised(exc: BaseException) -> str:
    """``"ValueError: first line (at file.py:LINE in func)"``, the innermost frame outside gradcheck."""
    detail = str(exc).strip().split("\n", 1)[0].rstrip("\r") if str(exc).strip() else "(no message)"  # not
    # splitlines: it ends a line at \x0b, \x0c, \x1c-\x1e and U+0085 too, and lost what followed (tester23g L6)
    detail = detail[:-1] if detail.endswith(".") else detail  # the caller ends the sentence
    frames = [fr for fr in reversed(traceback.extract_tb(exc.__traceback__))
              if not os.path.abspath(fr.filename).startswith(_PKG_DIR + os.sep)]
    # the caller's own line before numpy's: a Cython frame (relative co_filename, "_common.pyx") or numpy's Python
    # code is where numpy refused what the caller gave it (newuser38 F4: rng.binomial(1, 1.5) was "at _common.pyx")
    own = [fr for fr in frames if os.path.isabs(fr.filename) and not fr.filename.startswith(_NUMPY_DIR + os.sep)]
    where = next((f" (at {os.path.basename(fr.filename)}:{fr.lineno} in {fr.name})" for fr in own or frames), "")
    return f"{type(exc).__name__}: {detail}{where}"


_MISSING_ARGS = re.compile(r"backward\(\) missing \d+ required positional arguments?: (.*)")


def extra_args_hint(exc_type: str, message: str) -> str:
    """The hint for a ``backward`` that wants more than ``dY`` (tester32c M1: CMU 11-785 HW3P1's
    ``RNNCell.backward(delta, h_t, h_prev_l, h_prev_t)`` was refused with a bare TypeError): the convention named
    and a wrapper that passes forward's own values; "" for any other error.

    Parameters
    ----------
    exc_type, message : str
        The exception's type name and its message (``"backward() missing 3 required positional arguments:
        'h_t', 'h_prev_l', and 'h_prev_t'"``).
    """
    m = _MISSING_ARGS.search(message) if exc_type == "TypeError" else None
    if m is None:
        return ""
    names = re.findall(r"'(\w+)'", m.group(1))
    return paragraph(
        f"backward takes more than dY ({', '.join(names)}): the values forward received and returned, passed back by "
        "the caller, as CMU 11-785 HW3P1's RNNCell.backward(delta, h_t, h_prev_l, h_prev_t) does; gradcheck calls "
        "backward(dY) alone. Check it through a small class that keeps them, e.g. for the RNNCell: class RNNStep "
        "whose __init__(self, input_size, hidden_size) sets self.cell = RNNCell(input_size, hidden_size); whose "
        "forward(self, x, h) does self.x, self.h = x, h; self.h_t = self.cell.forward(x, h); return self.h_t; "
        "and whose backward(self, dh_t) does self.cell.zero_grad() (the cell's gradients accumulate); return "
        "self.cell.backward(dh_t, self.h_t, self.x, self.h);",
        "and check FILE.py::RNNStep with the same --input-shape and --init (its parameters are cell.W_ih, ...). "
        "CMU's template asks backward to divide the parameters' gradients by the batch size (the gradient of the batch "
        "mean); gradcheck checks the gradient of sum(Y * dY), so check it with a batch of 1 (--input-shape "
        "'1,IN;1,HIDDEN') or expect those gradients N times too small.")


def not_the_students(exc: BaseException) -> bool:
    """Whether ``exc``, raised while code under check ran in this process, stops the run rather than being that
    code's error.

    Those are Ctrl-C (KeyboardInterrupt), a generator closed (GeneratorExit) and pytest-timeout's failure: its
    SIGALRM handler raises ``pytest.fail("Timeout (>600.0s) from pytest-timeout.")`` in whatever frame runs when a
    test's time is up. Worded as the code's error, that timeout failed two parts of a graded check as "the numerical
    check could not run: ... raised Failed" and the test went on to score the rest (flaky33: a branch bug scored 1/3
    instead of 2/3 on the one seed the timer fired in, reported as a wrong score, not as a timeout). It is told by
    where it was raised: a pytest ``Failed`` whose traceback runs through a frame of the ``pytest_timeout`` module
    (its handler), never by its message. Any other pytest outcome (``pytest.skip``, ``pytest.fail``, ``pytest.exit``,
    ``pytest.xfail``) raised by the checked code is its own error, also inside a staff's pytest test (review34
    API_STUDENT_SKIP_PASSES_THROUGH: a student's backward calling ``pytest.skip()`` skipped the staff's test that
    checked it with :func:`gradcheck.check_layer`, and ``pytest.exit`` would have ended the staff's session). pytest
    is not imported here: when it is not loaded, none of its outcomes can be raised. (``gradcheck grade`` runs the
    submission in a sandbox process: what it raises arrives worded already.) A KeyboardInterrupt the checked code
    raises itself cannot be told from Ctrl-C's (the default SIGINT handler adds no frame): it stops the run too.

    Parameters
    ----------
    exc : BaseException
        What the code under check raised (or what a signal handler raised in its frame).

    Returns
    -------
    bool
        True: re-raise ``exc`` as it is; False: it is the checked code's error.
    """
    if isinstance(exc, (KeyboardInterrupt, GeneratorExit)):
        return True
    outcomes = sys.modules.get("_pytest.outcomes")
    if outcomes is None or not isinstance(exc, outcomes.Failed):
        return False
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == "pytest_timeout":
            return True
        tb = tb.tb_next
    return False


def call_student(fn: Callable[..., Any], *args: Any, owner: str, call: str, expected: str = "",
                 **kwargs: Any) -> Any:
    """Call code under check; any exception (also SystemExit) becomes a :class:`StudentCodeError`
    ``{owner}.{call} raised ... (at file.py:LINE in func). {expected}``, chained; those that stop the run
    (:func:`not_the_students`: Ctrl-C, pytest-timeout's failure raised by its handler) pass through, as gradcheck's own (already worded
    by the sandbox) do."""
    try:
        return fn(*args, **kwargs)
    except StudentCodeError as exc:  # worded already (sandbox); its step as data
        stepped(exc, call)
        raise
    except GraderError:
        raise
    except BaseException as exc:  # noqa: BLE001 - student code may raise anything
        if not_the_students(exc):
            raise
        hint = ""
        if isinstance(exc, TypeError) and "training" in str(exc):
            hint = "The protocol is forward(X, training=False): forward must accept a training keyword."
        hint = extra_args_hint(type(exc).__name__, str(exc)) or hint
        raise stepped(StudentCodeError(paragraph(f"{called(owner, call)} raised {raised(exc)}.", expected, hint)),
                      call) from exc


def require_methods(obj: Any, owner: str, methods: tuple[str, ...], protocol: str) -> None:
    """UnusableError (a ProtocolError, exit 2: the object not usable as written, nothing run) naming the first of
    ``methods`` that ``obj`` lacks, and the ``protocol``."""
    for m in methods:
        if not callable(getattr(obj, m, None)):
            have = sorted(a for a in dir(obj) if not a.startswith("_") and callable(getattr(obj, a, None)))
            raise UnusableError(paragraph(
                f"{owner} has no {m}() method.",
                f"Expected the {protocol} protocol: {', '.join(f'{x}()' for x in methods)}.",
                f"Public methods found: {', '.join(have) if have else 'none'}."))


def _written_as(layer: Any, owner: str, k: str) -> str:
    """Parameter ``k`` as the student's code names it: ``Linear.W`` for an attribute-style layer (in process or in
    the sandbox), ``Linear.params['W']`` for one with a params dict. A wrapper the checker calls the layer through
    (a :class:`gradcheck.sources.Wrapper`, diagnose's ``_Proxy``, holding it as ``_layer``) answers for the layer: one name in every check of a run, so the
    float32 warning is printed once (tester16 finding 9: ``Linear.W`` then ``Linear.params['W']``)."""
    return f"{owner}.{k}" if _attribute_layer(layer) else f"{owner}.params[{k!r}]"


def _attribute_layer(layer: Any) -> bool:
    """``layer`` (or the layer a checker's wrapper holds) is an attribute-style one: its parameters are attributes
    (``self.W``), in process (an :class:`gradcheck._adapters.Adapted`) or in the sandbox."""
    while any(c.__name__ == "Wrapper" and c.__module__ == "gradcheck.sources" for c in type(layer).__mro__):
        layer = layer._layer  # sources.Wrapper (not imported: sources imports this module)
    d = getattr(layer, "__dict__", {})
    proto = d.get("protocol")
    return (isinstance(proto, Mapping) and proto.get("protocol") == "attribute") or \
        ("pairs" in d and d.get("own") is False)  # an in-process _adapters.Adapted


def layer_params(layer: Any, owner: str) -> dict[str, np.ndarray]:
    """``layer.params`` validated (``{}`` when absent), not copied (they are perturbed in place); float32
    warns. ProtocolError: not a dict of str -> float arrays, or shared entries (:func:`checked_params`)."""
    params = getattr(layer, "params", None)
    if params is None or type(params) in (list, tuple) and not params:  # params = []: none (DLFS vol. 2)
        return {}
    entries = [(k, "str" if isinstance(k, str) else type(k).__name__, v, type(v).__name__ + (
        f" of dtype {v.dtype}" if isinstance(v, np.ndarray) else ""), None) for k, v in (
        params.items() if isinstance(params, Mapping) else ())]
    out = checked_params(owner, entries, None if isinstance(params, Mapping) else type(params).__name__,
                         attribute=_attribute_layer(layer))
    for k, v in out.items():
        if v.dtype != np.float64:
            warnings.warn(
                f"{_written_as(layer, owner, k)} is {v.dtype}; it is perturbed in place (the layer may hold "
                f"its own reference to the array), so its numerical gradient is only "
                f"{v.dtype}-accurate. Create parameters as float64 for a tight check.", UserWarning, stacklevel=3)
    return out


def checked_params(owner: str, entries: Any, not_a_dict: str | None = None,
                   attribute: bool = False) -> dict[str, np.ndarray]:
    """The one check of a layer's ``params``, in process (:func:`layer_params`) or as the sandbox's child
    describes them (:func:`gradcheck.sandbox._params_from`): ``{key: array}`` of ``entries``, each ``(key, its
    type's name, the array or another value, what came (for the message), the child's array's ``(shape, strides,
    itemsize)`` or None)``; ``attribute``: an attribute-style layer's (named ``Linear.W``, not ``params['W']``; an
    integer attribute backward writes a gradient for is one: tester22s H3). ProtocolError: params not a dict
    (``not_a_dict``: its type's name), a key not a string, a value not a float array, or one whose entries share
    memory."""
    if not_a_dict is not None:
        raise ProtocolError(paragraph(
            f"{owner}.params must be a dict mapping names to numpy arrays;", f"got {not_a_dict}."))
    out = {}
    for k, key_type, v, got, layout in entries:
        if key_type != "str":
            raise ProtocolError(f"{owner}.params keys must be strings; got a key of type {key_type} ({k}).")
        if not isinstance(v, np.ndarray) and str(got).startswith(("ndarray of dtype float", "ndarray of dtype long")):
            raise ProtocolError(paragraph(  # float128 from the sandbox: a float array, but not one it supports
                f"{owner}.params[{k!r}] is {str(got).rpartition(' ')[2]} (numpy's longdouble), which gradcheck does "
                "not support (the grader computes in float64); create the parameters as float64 (np.float64, the "
                "default)."))  # tester20g: "must be a numpy float array ...; got ndarray of dtype float128"
        if not isinstance(v, np.ndarray) or v.dtype.kind != "f":
            where = f"{owner}.{k}" if attribute else f"{owner}.params[{k!r}]"
            raise ProtocolError(paragraph(
                f"{where} must be a numpy float array (it is perturbed in place",
                f"to compute the numerical gradient); got {got}" + _not_float_advice(str(got), attribute)))
        own_memory(v, f"{owner}.params[{k!r}]", error=ProtocolError, fix=PARAM_MEMORY_FIX, layout=layout)
        out[k] = v
    return out


def _not_float_advice(got: str, attribute: bool) -> str:
    """What :func:`checked_params` adds after "got ``got``" for a parameter that is no float array: why it is one
    (``attribute``: backward writes a gradient for it) and how to write it as one, or "." for another value."""
    why = " (backward writes a gradient for it, so it is a parameter)" if attribute else ""
    if re.fullmatch(r"int|ndarray of dtype u?int\d*", got):  # typed as integers: [[1, 2]], 1
        return (f"{why}. Write it as float: np.array([[1.0, 2.0], ...]) or .astype(float) for an array, 1.0 for a "
                "number.")
    if re.fullmatch(r"ndarray of dtype complex\d*", got):  # newuser29 H1: W + 0j
        return (f"{why}. gradcheck checks real parameters (a complex weight's numerical gradient is taken along "
                "real steps only): create it as float64 (without the + 0j, or .real) and keep complex numbers "
                "inside forward.")
    if got == "ndarray of dtype object":
        return f"{why}. Write it as float: .astype(float) (an object array holds Python numbers, not float64)."
    if got in ("list", "tuple"):
        return (f"{why}. Store it as a numpy float array, np.array(..., dtype=float): a {got} cannot be perturbed "
                "in place.")
    return "."


def stored_inputs_error(owner: str, bcall: str, where: str) -> UnusableError:
    """The usage error (exit 2) of a backward that gave dX as a list because forward appends its input to a list
    attribute ``where`` (``"self.X (a list of 7 arrays of shape (6, 4))"``, :func:`gradcheck._adapters.stored_inputs`)
    that nothing empties between gradcheck's calls: numpy-ml's storage without its ``flush_gradients()``
    (tester23s's ``nmlike.py::D_xlist``, exit 1 "gave dX as a list" before, its advice an "if"). Refused rather than
    checked with the list emptied by gradcheck: the class as written keeps every input, and a backward that reads an
    earlier one is a bug such a check would hide."""
    name = where.split(" ", 1)[0]
    return UnusableError(paragraph(
        f"{called(owner, bcall)} gave dX as a list: forward appends its input to {where} after gradcheck's forward calls, "
        "and backward returns one dX per stored input (numpy-ml's convention), while gradcheck gives it one dY, "
        "for the last forward.",
        f"{owner} has no flush_gradients() to empty that list between calls (numpy-ml's layers have one, which "
        "gradcheck calls before each forward, as numpy-ml's update() does after each step), so it cannot be "
        "checked as written.",
        f"Add one to the class, {code(f'def flush_gradients(self): {name} = []')} (zeroing the gradients there too), or "
        f"store the last input alone ({name} = [X]); in your own training loop, empty the list after each step "
        "too, or backward reads the inputs of earlier steps."))


def dtype_error(owner: str, produced_by: str, tensor: str, dtype: Any) -> GradientShapeError:
    """The GradientShapeError (exit 1) for an integer or boolean array where float64 is due."""
    of_param = produced_by.startswith("grads")
    must = ("the output must be float64 (the input's dtype)" if tensor in ("Y", "L") else
            f"gradients must be float64 (the {'parameter' if of_param else 'input'}'s dtype)")
    return GradientShapeError(paragraph(
        f"{called(owner, produced_by)} {'gave' if of_param else 'returned'} {tensor} of dtype {np.dtype(dtype)}; {must}.",
        "An integer or boolean array drops the fractional part: remove the cast (.astype(int),",
        "np.round, // integer division) or build the array with a float dtype."))


def forward_returned_none(owner: str, produced_by: str) -> ProtocolError:
    """The error of a forward that returned None (exit 3: a protocol gradcheck cannot read, not a wrong value):
    Y is what forward returns, or, when it returns nothing, what it stores in ``self.output`` (*Neural Networks from
    Scratch*: :func:`gradcheck._adapters.stored_results`); this forward did neither."""
    return ProtocolError(paragraph(
        f"{called(owner, produced_by)} returned None, so there is no output to check: gradcheck reads the Y that forward "
        "returns (return Y), or, when forward returns nothing, the Y it stores in self.output (as Neural Networks "
        "from Scratch writes it).",
        f"If forward stores it in another attribute, end forward with {code('return')} of it (e.g. "
        f"{code('return self.out')}), or store it as self.output."))


def empty_output(owner: str, produced_by: str, shape: tuple[int, ...]) -> NotCheckedError:
    """The error of a forward whose output has no element (newuser35 M1: a Conv2D's 3x3 kernel on a 2x2 input
    without padding gave Y of shape (2, 2, 0, 0), and a traceback followed): nothing to compare, so not checked (exit
    3), with the axes of size 0 and the usual cause, an input smaller than the layer takes from it."""
    axes = [i for i, n in enumerate(shape) if n == 0]
    where = f" (size 0 along axis {', '.join(map(str, axes))})" if axes else ""
    return NotCheckedError(paragraph(
        f"{called(owner, produced_by)} returned an empty Y of shape {fmt_shape(shape)}{where}: it has no element, so "
        "there is no output or gradient to compare and the layer cannot be checked on this input.",
        "An axis of size 0 usually comes from an input smaller than what the layer takes from it, e.g. a 3x3 "
        "kernel on a 2x2 input without padding (output size (H + 2*padding - kernel) // stride + 1 = 0): give a "
        "larger --input-shape (or a smaller kernel, more padding in --init). If the input is large enough for "
        "the layer, the output size forward computes is wrong."))


def identical(a: Any, b: Any) -> bool:
    """``np.array_equal(a, b, equal_nan=True)``, tried first without ``equal_nan``: numpy's NaN-aware path
    boolean-indexes copies of both arrays (2 ms on 70k elements, 40 times the plain comparison), and the
    arrays the checker compares (a cache before and after backward, dY, Y in both modes) are mostly equal
    without a NaN."""
    return bool(np.array_equal(a, b) or np.array_equal(a, b, equal_nan=True))


def _size1_axes(got: tuple[int, ...], expected: tuple[int, ...]) -> tuple[Any, Any] | None:
    """``(axes, due)`` when shapes ``got`` and ``expected`` have one length and each has size 1 on axes where the
    other has not: ``got`` summed with keepdims over ``axes`` where ``due`` was meant (``(8, 1)`` for ``(1, 3)``:
    ``(1, 0)``); an axis alone as an int, several as a tuple. None otherwise."""
    if len(got) != len(expected):
        return None
    axes = [a for a, (g, e) in enumerate(zip(got, expected)) if g == 1 != e]
    due = [a for a, (g, e) in enumerate(zip(got, expected)) if e == 1 != g]
    if not axes or not due:
        return None
    return tuple(x[0] if len(x) == 1 else tuple(x) for x in (axes, due))


def check_output(value: Any, *, owner: str, tensor: str, produced_by: str,
                 expected_shape: tuple[int, ...] | None, expected_why: str = "",
                 integer_ok: bool = False) -> np.ndarray:
    """Validate an array returned by code under check, named ``tensor`` (``"dX"``) and ``produced_by``
    (``"backward(dY)"``); return a float64 copy. ``expected_shape``: None for any; ``integer_ok``: an
    integer loss. Raises GradientShapeError (None, not numeric, integer, wrong shape with a hint) or
    NonFiniteError."""
    why = f" ({expected_why})" if expected_why else ""
    if value is None and produced_by.startswith("forward("):
        raise forward_returned_none(owner, produced_by)
    if value is None:
        hint = " Did you forget the return statement?" if "backward" in produced_by and tensor == "dX" else ""
        raise GradientShapeError(paragraph(
            f"{called(owner, produced_by)} returned None for {tensor};",
            f"expected an array of shape {fmt_shape(expected_shape) if expected_shape else '(any)'}{why}.{hint}"))
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001
        arr = np.asarray(object())
    if arr.dtype.kind not in "biuf":
        raise GradientShapeError(paragraph(
            f"{called(owner, produced_by)} gave {tensor} as {type(value).__name__}"
            f"{' of dtype ' + str(arr.dtype) if isinstance(value, np.ndarray) else ''};",
            "expected a numeric numpy array."))
    if arr.dtype.kind in "biu" and not integer_ok:
        raise dtype_error(owner, produced_by, tensor, arr.dtype)
    if expected_shape is not None and tuple(arr.shape) != tuple(expected_shape):
        hint = ""
        if arr.ndim == len(expected_shape) == 2 and arr.shape == tuple(expected_shape)[::-1]:
            hint = "That is the transpose of the expected shape."
        elif [k for k in arr.shape if k != 1] == [k for k in expected_shape if k != 1]:
            hint = "The same sizes in the same order, only a size-1 axis differs (a keepdims=True too many or " \
                   "too few?)."  # db = dY.sum(0, keepdims=True): (1, out) for (out,); its values are not read here
        elif (ones := _size1_axes(arr.shape, expected_shape)) and "backward" in produced_by:
            hint = (f"Summed over the wrong axis? {tensor} has size 1 on axis {ones[0]} where the expected shape has "
                    f"it on axis {ones[1]}: a sum with keepdims=True over axis={ones[1]}, not axis={ones[0]} (a bias's "
                    f"gradient sums dY over the batch: np.sum(dY, axis={ones[1]}, keepdims=True)).")  # tester30n L;
            # tester33 F12: the example's axis is the one to sum over (axis=1 for a batch-last (n, m) layout)
        elif arr.size == math.prod(expected_shape):
            hint = "Same number of elements: a reshape or transpose went wrong."
        elif arr.ndim < len(expected_shape):
            hint = "Was the batch axis summed or averaged away?"
        elif arr.ndim == len(expected_shape) == 1 and "backward" in produced_by:  # tester20s: db = dY.sum(axis=1)
            hint = ("Summed over the wrong axis? A bias's gradient sums dY over every axis but its own: over the "
                    "batch, axis=0, for a Linear (dY.sum(axis=0)); axis=(0, 2, 3) for a Conv2D's.")
        raise GradientShapeError(paragraph(
            f"{called(owner, produced_by)} gave {tensor} with shape {fmt_shape(arr.shape)};",
            f"expected shape {fmt_shape(expected_shape)}{why}.", hint))
    if arr.size == 0 and tensor == "Y" and produced_by.startswith("forward("):  # newuser35 M1: not a traceback
        raise empty_output(owner, produced_by, arr.shape)
    out = np.array(arr, dtype=np.float64, copy=True)
    if math.isfinite(sum_of_squares(out)):  # proves every entry finite (the squares may overflow)
        return out
    bad = ~np.isfinite(out)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise NonFiniteError(paragraph(
            f"{called(owner, produced_by)} gave {tensor} containing {int(bad.sum())} non-finite value(s)",
            f"(first at index {first}: {float(out[first])});",
            "expected finite numbers. Check for division by zero, log of 0, or exp overflow."))
    return out


def parse_wrt(text: str | None) -> list[str] | None:
    """``--wrt a,b`` as ``["a", "b"]`` (None when not given).

    Raises
    ------
    UsageError
        A name that is no Python identifier, or one given twice.
    """
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    bad = next((n for n in names if not n.isidentifier()), None)
    if bad is not None or len(set(names)) != len(names):
        raise UsageError(f"--wrt {text}: expected the names of the function's arguments, separated by commas, each "
                         f"once (--wrt theta, --wrt centerWordVec,outsideVectors); {bad!r} is no argument name."
                         if bad is not None else f"--wrt {text}: each argument once.")
    return names


def objective_given(protocol: dict, y_pred: Any, pred: str) -> str:
    """:func:`loss_given` of a ``(loss, grad)`` function of several arguments (``--loss`` with its second argument in
    ``--init``: ``nnCostFunction(nn_params, ..., X, y, lambda_)``): what it was really given, ``pred`` (the argument
    checked) and each other argument as the function got it (``protocol["fixed"]``, written by the child's
    :class:`gradcheck._adapters.LossFunction`); no target was drawn, so no ``--targets`` advice (tester29s M2: "It was
    given input_layer_size: real values, of shape (38,)" where --init gave 3, and --targets advised)."""
    yp = np.asarray(y_pred)
    given = [str(w) for w in protocol.get("fixed") or []]
    fixed = "; ".join(given)
    second = next((w.split(":")[0] for w in given if w.endswith(" of whole numbers")), None)  # verify45a F2: any key
    labels = (f" Integer labels of more than one axis ({second}, as CS231n's temporal_softmax_loss(x, y, mask) takes "
              f"y (N, T)) cannot come from --init, whose nested lists are float64: leave {second} out of --init and "
              f"draw it with --targets labels:K (K classes, of {pred}'s shape without its last axis).") if second else ""
    return (f"It was given {pred} of shape {fmt_shape(yp.shape)} ({yp.dtype}) and {fixed or 'nothing else'}; the error is "
            "in the function, or it expects another kind of value for an --init argument (there, a JSON list of "
            "integers is an int64 array unless named like a size, a list holding a float or nested a float64 array "
            "unless nested integers named like labels (y, t: int64), "
            "a number a Python number, null None)." + labels)


def loss_given(y_true: Any, y_pred: Any, pred: str = "y_pred", hint: str = "", target: str = "y_true") -> str:
    """The sentence after a loss's forward raised: what it was given, ``y_true``'s kind (integer labels and their
    range, one-hot rows, real values), shape and dtype and ``y_pred``'s (``pred``, ``target``: the loss's own names of
    them, CS231n's ``softmax_loss(x, y)``: x and y), then ``hint``, in
    place of "Expected forward to return the loss as a float", which named the return value where forward never
    returned (newuser27)."""
    yt, yp = np.asarray(y_true), np.asarray(y_pred)
    if yt.dtype.kind in "iu" and yt.size:
        kind = f"integer labels {int(yt.min())}..{int(yt.max())}"
    elif yt.dtype.kind == "f" and yt.ndim and yt.size and np.isin(yt, (0, 1)).all() and np.all(yt.sum(axis=-1) == 1):
        kind = f"one-hot rows of {yt.shape[-1]} classes"
    else:
        kind = "real values" if yt.dtype.kind == "f" else f"{yt.dtype} values"
    return (f"It was given {target}: {kind}, of shape {fmt_shape(yt.shape)} ({yt.dtype}), and {pred} of shape "
            f"{fmt_shape(yp.shape)} ({yp.dtype}); the error is in forward, or forward expects other targets{hint}.")


def loss_scalar(value: Any, owner: str, signature: str) -> np.float64:
    """The loss value ``L`` a loss's forward returned (``owner``'s ``signature``, for the messages), as the check,
    the sandbox's ``RemoteLoss`` and the grader read it (``grade.loss_value``, tester23g M4: a shape (1,) scored
    there and was refused by check):
    a scalar (shape ``()``) of a real number type, as float64.

    Raises
    ------
    GradcheckError
        As :func:`check_output` with ``expected_shape=()``: None, another shape (a size-1
        axis named), a non-numeric dtype, NaN or infinity (:class:`~gradcheck.errors.NonFiniteError`).
    """
    return np.float64(check_output(value, owner=owner, tensor="L", produced_by=signature,
                                     expected_shape=(), expected_why="a scalar loss", integer_ok=True))


def check_input_grads(ret: Any, *, owner: str, produced_by: str, names: list[str], inputs: list[np.ndarray],
                      keys: list[str], wrong: list | None = None, pair: bool = False,
                      no_dx: bool = False) -> dict[str, np.ndarray]:
    """What ``backward`` returned (one gradient, or a tuple for several inputs) as ``{key: float64}``,
    integer inputs' entries ignored; raises as :func:`check_output`, or for the wrong length. With exactly one float
    input beside integer ones, a lone array is that input's gradient (an integer input gets none: ``--indices``;
    tester21s M1), as is the tuple with None in the integer inputs' places. ``wrong``: a list that takes each
    numeric gradient of the wrong shape instead of raising (:func:`shaped_or_wrong`)."""
    floats = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"]
    if len(inputs) > 1 and len(floats) == 1 and isinstance(ret, np.ndarray):
        ret = tuple(ret if i == floats[0] else None for i in range(len(inputs)))
    elif 1 < len(floats) < len(inputs) and isinstance(ret, (tuple, list)) and len(ret) == len(floats):
        rest = iter(ret)  # one gradient per float input, none for the integer ones (a mask, ids: corpus38 F3)
        ret = tuple(next(rest) if i in floats else None for i in range(len(inputs)))
    if len(inputs) > 1 and (not isinstance(ret, (tuple, list)) or len(ret) != len(inputs)):
        got = (f"a {type(ret).__name__} of length {len(ret)}" if isinstance(ret, (tuple, list))
               else "None" if ret is None else type(ret).__name__)
        raise GradientShapeError(paragraph(
            f"{called(owner, produced_by)} returned {got};",
            f"expected a tuple of {len(inputs)} gradients ({', '.join('d' + n for n in names)}),",
            "one per input of forward, in the same order"
            + (f" (None in the place of an integer input: {', '.join(n for n, x in zip(names, inputs) if x.dtype.kind != 'f')})"
               if len(floats) < len(inputs) else "")
            + (f": {', '.join('d' + n for n in names[len(ret):])} "
               f"{'is' if len(names) - len(ret) == 1 else 'are'} missing." if isinstance(ret, (tuple, list))
               and 0 < len(ret) < len(names) else ".")))
    rets = [ret] if len(inputs) == 1 else list(ret)
    for r, n, x in zip(rets, names, inputs):  # tester16 H1: a gradient for "indices" is a differentiated input
        if x.dtype.kind != "f" and isinstance(r, np.ndarray) and r.dtype.kind == "f" and r.shape == x.shape \
                and np.any(r != 0):
            raise UsageError(paragraph(
                f"{called(owner, produced_by)} returned a nonzero float gradient d{n} {fmt_shape(r.shape)} for the input "
                f"{n}, which was given as integer indices (an integer array; --indices on the command line): this "
                f"layer differentiates {n}, so {n} takes real values and its gradient is to be checked.",
                f"Give {n} as a float array ({n}.astype(np.float64)) in Python, or leave --indices out for {n} on "
                "the command line (integer inputs are only for ids, such as an embedding's)."))  # newuser23 L8
    none = without_gradient(rets, inputs, pair, no_dx)
    out = {k: shaped_or_wrong(r, k, wrong, owner=owner, tensor=grad_name(n), produced_by=produced_by,
                              expected_shape=x.shape, expected_why=f"the shape of the input {n}")
           for i, (r, n, x, k) in enumerate(zip(rets, names, inputs, keys)) if x.dtype.kind == "f" and i not in none}
    return {k: v for k, v in out.items() if v is not None}


def without_gradient(rets: Sequence[Any], inputs: Sequence[np.ndarray], pair: bool = False,
                     no_dx: bool = False) -> set[int]:
    """The positions of the float inputs of a forward of several whose gradient backward returned (``rets``, one per
    input) as None beside another float input's array: inputs without a gradient (PyTorch's ``autograd.Function``
    returns None for one, a mask; newuser36 M2), not checked. A lone input's None, None for every float input, or any
    None of a ``pair`` (a CS231n function pair, whose inputs are its weights too: ``db`` of ``affine_backward``;
    :func:`gradcheck.sources.inputs_hold_weights`) is none of them: a missing gradient. ``no_dx``: a model whose
    loss is differentiated in its weights alone (:func:`gradcheck.sources.computes_no_dx`): every None is one."""
    floats = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"]
    none = {i for i in floats if i < len(rets) and rets[i] is None}
    if no_dx:
        return none
    return none if len(inputs) > 1 and none and len(none) < len(floats) and not pair else set()


def no_gradient_inputs(names: Sequence[str], inputs: Sequence[np.ndarray], keys: Sequence[str],
                       grads: Mapping[str, Any]) -> list[str]:
    """The names of the float inputs of a forward of several whose gradient backward returned as None beside another
    input's (:func:`check_input_grads` leaves them out of ``grads``: PyTorch's ``autograd.Function`` returns None for
    an input without a gradient, a mask; newuser36 M2): not differentiated, not checked, said so."""
    return [n for n, x, k in zip(names, inputs, keys) if len(inputs) > 1 and x.dtype.kind == "f" and k not in grads]


def shaped_or_wrong(value: Any, key: str, wrong: list | None, **kw: Any) -> np.ndarray | None:
    """:func:`check_output` of a gradient ``value`` (``kw`` its arguments), or, when ``wrong`` is a list and
    ``value`` is a numeric array of another shape than ``kw["expected_shape"]``, None after appending ``(key,
    error, float64 copy)`` to ``wrong``: the check goes on with the other gradients, so every failing tensor is
    reported together (verify26: a (4,) for a (1, 4) dgamma hid dX's bug). Any other error raises as before."""
    try:
        return check_output(value, **kw)
    except GradientShapeError as exc:
        arr = np.asarray(value) if isinstance(value, np.ndarray) else None
        if wrong is None or arr is None or arr.dtype.kind != "f" or arr.shape == tuple(kw["expected_shape"]):
            raise
        wrong.append((key, exc, np.array(arr, dtype=np.float64, copy=True)))
        return None


#: The gradients of the check under way named as the student's code names them where ``d`` + key is not that name
#: (:func:`own_grad_names`: deeplearning.ai's ``grads['dW1']`` for ``parameters['W1']``, not ``dparameters['W1']``).
_OWN_NAMES: dict[str, str] = {}
#: ``{"affine.backward": "affine_backward"}`` within :func:`own_call_names`: a function pair's own functions.
_OWN_CALLS: dict[str, str] = {}


@contextlib.contextmanager
def own_call_names(*layers: Any):
    """Within the block, :func:`called` names a call of a layer's forward or backward by the student's own function
    when the layer is a CS231n function pair (:func:`pair_functions`): ``affine_backward(dY)``, not the
    ``affine.backward(dY)`` of the layer the checker makes of the pair (newuser30); nothing changes for a class.
    ``layers``: those known when the block starts; :func:`remember_calls` adds one loaded in it (a graded test's)."""
    old = dict(_OWN_CALLS)
    for layer in layers:
        remember_calls(layer)
    try:
        yield
    finally:
        _OWN_CALLS.clear()
        _OWN_CALLS.update(old)


def remember_calls(layer: Any) -> None:
    """:func:`own_call_names` of ``layer`` until the block it runs in ends; the owner messages name is the layer's
    class name (a sandboxed layer's ``class_name``)."""
    owners = {type(layer).__name__, str(getattr(layer, "class_name", None) or type(layer).__name__)}
    _OWN_CALLS.update({f"{o}.{m}": f for m, f in pair_functions(layer).items() for o in owners})


def pair_functions(layer: Any) -> dict[str, str]:
    """``{"forward": "affine_forward", "backward": "affine_backward"}`` of a CS231n function pair, in process (a
    :class:`gradcheck._adapters.FunctionPair`: its ``student_forward``/``student_backward``) or in the sandbox (its
    :attr:`~gradcheck.sandbox.RemoteLayer.protocol`'s ``calls``); {} for any other layer."""
    protocol = getattr(layer, "protocol", None)
    calls = protocol.get("calls") if isinstance(protocol, Mapping) else None
    if not calls:
        fns = [getattr(layer, a, None) for a in ("student_forward", "student_backward")]
        calls = [getattr(f, "__name__", None) for f in fns]
    if len(calls) != 2 or not all(isinstance(c, str) and c.isidentifier() for c in calls):
        return {}
    return dict(zip(("forward", "backward"), calls))


def called(owner: str, call: str) -> str:
    """How a message names ``call`` (``"backward(dY) with dY of shape (4, 3)"``, ``"forward"``) of the checked code
    ``owner``: ``Linear.backward(dY) with ...``; a function pair's forward or backward by its own function within
    :func:`own_call_names` (``affine_backward(dY) with ...``): the one rule of every such message."""
    m = re.match(r"(forward|backward)\b", call)
    own = _OWN_CALLS.get(f"{owner}.{m[1]}") if m else None
    return f"{own}{call[m.end():]}" if own else f"{owner}.{call}"


@contextlib.contextmanager
def own_grad_names(names: Mapping[str, str]):
    """Within the block, :func:`grad_name` of each key of ``names`` is its value and :func:`grad_key` its inverse:
    the table, the header and the diagnosis of one check use the student's own names (tester16 finding 8)."""
    old = dict(_OWN_NAMES)
    _OWN_NAMES.update(names)
    try:
        yield
    finally:
        _OWN_NAMES.clear()
        _OWN_NAMES.update(old)


def own_names_of(slots: Mapping[str, str]) -> dict[str, str]:
    """``{"parameters['W1']": "grads['dW1']"}`` of an attribute-style layer's gradient slots (``{weight: "self.<where
    backward stores its gradient>"}``) whose gradient's item key is ``d`` + the weight's item key in another
    container, deeplearning.ai's naming, or a private attribute's whose gradient has a public name (``self._w`` behind
    a property ``W``, with ``self.dW``), or ``self.d`` + the weight's name in another case (``self.dw`` for ``self.W``,
    newuser27); the other slots' generic names (``dWs[1]``, ``dW``) are kept."""
    out = {}
    for w, g in slots.items():
        wm = re.fullmatch(r"\w+\[(['\"])(\w+)\1\]", w)
        gm = re.fullmatch(r"(?:self\.)?(\w+\[(['\"])d(\w+)\2\])", str(g))
        if wm and gm and gm.group(3) == wm.group(2):
            out[w] = gm.group(1)
        elif (pm := re.fullmatch(r"self\.(d[A-Za-z]\w*)", str(g))) and re.fullmatch(r"_[A-Za-z]\w*", w):
            out[w] = pm.group(1)  # self._w behind @property W, its gradient self.dW: named dW (tester22s H2)
        elif ((pm := re.fullmatch(r"self\.d(\w+)", str(g))) and pm.group(1) != w and pm.group(1).lower() == w.lower()
              and f"d{pm.group(1)}" not in {f"d{k}" for k in slots}):
            out[w] = f"d{pm.group(1)}"  # self.W with its gradient in self.dw: named dw, as the student wrote it
    return out


def grad_name(key: str) -> str:
    """The name of the gradient of parameter or input ``key`` in tables and messages: ``dW`` for ``W``; for a
    private ``_W`` the student's own ``_dW`` (not ``d_W``, which reads as another attribute); ``dlayers.0.W``;
    the student's own within :func:`own_grad_names`."""
    if key in _OWN_NAMES:
        return _OWN_NAMES[key]
    head = len(key) - len(key.lstrip("_"))
    return f"{key[:head]}d{key[head:]}" if 0 < head < len(key) and "." not in key else f"d{key}"


def grad_key(tensor: str) -> str:
    """The parameter or input a gradient ``tensor`` is named after: the inverse of :func:`grad_name`."""
    if (own := next((k for k, v in _OWN_NAMES.items() if v == tensor), None)) is not None:
        return own
    head = len(tensor) - len(tensor.lstrip("_"))
    if 0 < head and tensor[head:head + 1] == "d" and "." not in tensor:
        return tensor[:head] + tensor[head + 1:]
    return tensor[1:]


def slot_name(slots: Mapping[str, str], key: str) -> str:
    """Where the student's code keeps the gradient of parameter ``key``, as diagnoses say it: ``self.dW`` for
    an attribute-style layer (``slots``: :func:`gradcheck.sources.grad_slots`), else ``grads['W']``."""
    return slots.get(key) or f"grads[{key!r}]"


def param_name(slots: Mapping[str, str], key: str) -> str:
    """Parameter ``key`` as the student's code names it: ``self.W`` for an attribute-style layer (``slots`` as in
    :func:`slot_name`), else ``params['W']``."""
    return f"self.{key}" if key in slots else f"params[{key!r}]"


def grads_not_dict(owner: str, grads: Any, params: Mapping[str, Any]) -> ProtocolError:
    """The ProtocolError for ``grads`` that is not a dict (``type_name``: a sandbox's stand-in)."""
    got = "nothing (no grads attribute)" if grads is None else (
        getattr(grads, "type_name", None) or type(grads).__name__)
    return ProtocolError(paragraph(
        f"{owner}.grads must be a dict; got {got} after backward(dY).",
        f"Expected a dict with the same keys as params ({', '.join(map(repr, params))}),",
        "each holding dL/d(param) with the parameter's shape, e.g. self.grads['W'] = dY.T @ X."))


def _near_key(k: str, grads: Mapping[Any, Any]) -> str:
    """``": grads['w'] is written where params has 'W' ..."``, or ""."""
    alike = [g for g in grads if isinstance(g, str) and g != k
             and g.lower() in (k.lower(), "d" + k.lower())]
    return (f": grads[{alike[0]!r}] is written where params has {k!r}; the keys of grads must be "
            f"those of params, spelled alike (case-sensitive): self.grads[{k!r}]" if alike else "")


def forward_call(layer: Any, names: Sequence[str], training: bool) -> str:
    """The forward call as gradcheck makes it, for messages (tester13 M6): ``forward(X, training=False)``, or
    ``forward(X)`` when the layer's forward takes no training argument (its protocol or its sandbox signature says
    ``forward_training`` False; a wrapper's ``_layer`` answers for it); the switch as :func:`switch_words` says it."""
    layer = getattr(layer, "_layer", layer)
    said = [getattr(layer, a, None) for a in ("protocol", "signature")]
    if any(isinstance(d, Mapping) and d.get("forward_training") is False for d in said):
        return f"forward({', '.join(names)})"
    inside, after = switch_words(said[0] if isinstance(said[0], Mapping) else None, training)
    return f"forward({', '.join(names)}{inside}){after}"


def switch_words(info: Mapping[str, Any] | None, training: bool) -> tuple[str, str]:
    """The mode switch of a forward call as gradcheck makes it, for messages: ``(", training=False", "")``, in the
    layer's own words when its protocol ``info`` names them (``mode_keyword``: ``(", train=False", "")`` for
    ``forward(x, train=True)``, corpus39 L1; ``(", mode='test'", "")``), or ``("", " (self.is_mask = False)")`` for
    a switch set on the layer before the call (corpus39 M2: it was ``forward(x_q, x_k, x_v, training=False)``)."""
    name, off, on = (info or {}).get("mode_keyword") or ("training", "False", "True")
    value = on if training else off
    if name.startswith(("self.", "global ", "env ")):
        return "", f" ({name} = {value})"
    return f", {name}={value}", ""


def check_grads(layer: Any, owner: str, params: Mapping[str, np.ndarray],
                slots: Mapping[str, str] | None = None, wrong: list | None = None) -> dict[str, np.ndarray]:
    """``layer.grads`` after backward, per key of ``params`` (:func:`check_output`); float64 copies. ``slots``: where
    an attribute-style layer keeps each gradient (``{"W": "self.dW"}``): a message names ``self.dW`` and the shape of
    ``self.W``, the student's own storage, not ``grads['W']`` (tester13 M5). ``wrong``: a list that takes each
    gradient of the wrong shape instead of raising (:func:`shaped_or_wrong`), left out of the dict returned."""
    slots = slots or {}
    grads = getattr(layer, "grads", None)
    if params and not isinstance(grads, Mapping):
        raise grads_not_dict(owner, grads, params)
    out: dict[str, np.ndarray] = {}
    for k, p in params.items():
        if k not in grads:  # a missing gradient: a wrong result (exit 1)
            raise MissingGradientError(paragraph(
                f"{owner}.grads has no key {k!r} after backward(dY) (so {grad_name(k)} is missing);",
                f"expected keys {sorted(params)}, found {sorted(map(str, grads))}"
                + _near_key(k, grads) + "."))
        got = shaped_or_wrong(grads[k], k, wrong, owner=owner, tensor=grad_name(k),
                              produced_by=f"backward(dY) (in {slots[k]})" if k in slots
                              else f"{slot_name(slots, k)} after backward(dY)",
                              expected_shape=p.shape, expected_why=f"the shape of {param_name(slots, k)}")
        if got is not None:
            out[k] = got
    return out
