"""The ``gradcheck`` console script: ``zoo``, ``check``, ``train`` here, ``grade``
(:mod:`gradcheck.grading.cli`) and ``assignment`` (:mod:`gradcheck.assignment`); ``gradcheck
--help`` lists them and the exit codes (:mod:`gradcheck.errors`). Every anticipated failure
prints one paragraph on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib.util
import itertools
import json
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import _adapters
from . import _validation as V
from ._adapters import init_arrays
from ._startup import say_stopped, sigterm_raises, starting
from .check import loss_arg_names
from .errors import (
    EXIT_MISMATCH,
    EXIT_PASS,
    EXIT_STUDENT,
    EXIT_USAGE,
    GradcheckError,
    NonFiniteError,
    StudentCodeError,
    UnusableError,
    UsageError,
    error_kind,
)
from .result import format_table

__all__ = ["main", "build_parser", "load_class"]

DEFAULT_PLOTS = "gradcheck-plots"

EPILOG = f"""\
exit codes:
  {EXIT_PASS}  pass: every gradient within tolerance (train: every requirement met)
  {EXIT_MISMATCH}  a result is wrong: a gradient outside tolerance, or an output or gradient of the
     wrong shape or dtype (int64; float32 from a float64 layer casting what it computed,
     Y.astype(np.float32)), missing (None) or holding NaN/inf, a weight's
     gradient not set (no grads key, no gradient attribute), or a forward that writes into
     its input X (the caller's array changes); the output names it (zoo: also a layer that
     could not be checked; train: a requirement failed)
  {EXIT_USAGE}  usage error: bad arguments (a negative --seed, an --input-shape over {V.MAX_INPUT_ELEMENTS:,}
     elements per input, an --eps out of range, an output path that cannot be written),
     a file or class that does not exist, a loss checked without --loss, a class or function
     not usable as written (no forward/backward, a function that is no forward/backward pair,
     a forward storing its inputs in a list nothing empties): the message says what to change;
     also gradcheck itself failing outside the checked code (e.g. its sandbox out of memory)
     code float32 throughout (float32 weights and dtype='f': Deep Learning from Scratch 2's) is
     checked in float64, on a copy of its files with each float32 dtype they declare written
     float64 (the student's files unchanged); a note says so, and exit 3 when that copy still
     returns float32; given float64 weights and input, a float32 result is a wrong dtype (exit 1):
     --dtype float32 gives code written for float32 float32 inputs and --init weights
  {EXIT_STUDENT}  the code could not be checked: the file does not import (syntax error,
     ImportError), its constructor, forward or backward
     raised, hung, exited or crashed, or backward wrote into dY or into the input forward cached
     (the caller's array: every later backward reads changed data, so no number it gives can
     be trusted; an array forward made itself and backward writes into is checked, each
     backward after its own forward, and a note says what a second backward gives),
     or forward is random with draws gradcheck cannot hold (a generator made anew in forward),
     or forward returned None and stored no self.output (return Y), or --training/--eval asked
     for a mode gradcheck cannot select (a switch it does not set)

examples:
  gradcheck zoo --plots demo-output/zoo
  gradcheck check examples/student_linear_buggy.py::Linear --input-shape 8,5 \\
      --init '{{"in_features": 5, "out_features": 3}}'
  gradcheck check my_loss.py::CrossEntropy --loss --input-shape 8,5 --targets labels
  gradcheck check my_layer.py::Tanh --input-shape 3,4 --tape --jacobian --plots out/
  gradcheck train --epochs 30 --plots demo-output/train
"""
#: ``check --help``'s exit codes and examples: EPILOG (``gradcheck --help``'s, for every command) without what zoo
#: and train do (newuser22: check's help named their exit codes and examples).
CHECK_EPILOG = "\n".join(line for line in EPILOG.replace(" (train: every requirement met)", "").replace(
    "; the output names it (zoo: also a layer that\n     could not be checked; train: a requirement failed)",
    "; the output names it").splitlines() if not line.startswith(("  gradcheck zoo", "  gradcheck train"))) + "\n"


def _say_error(exc: GradcheckError) -> int:
    print(V.wrap(f"gradcheck: {error_kind(exc)} (exit {exc.exit_code}): {exc}"), file=sys.stderr)
    return exc.exit_code


_SHOWN_WARNINGS: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None):  # noqa: ARG001
    text = str(message)
    if text in _SHOWN_WARNINGS:  # the same warning from several checks of one layer: once
        return
    _SHOWN_WARNINGS.add(text)
    print(V.wrap(f"gradcheck: warning: {text}"), file=sys.stderr)


def _warn_unavailable_imports(files, allow: tuple[str, ...] = (), graders: bool = False,
                              copied: Sequence[str] = ()) -> None:
    """Print a WARNING line per import of ``files`` (and of the own modules they import) that the
    grader's sandbox cannot satisfy, or whose module the scan cannot tell
    (:func:`gradcheck.grading.static.unavailable_imports`). It says whether the import works in this
    check: installed here and not a course package (``allow``: those ``--tape`` lets import), and not in the grader's
    sandbox (``graders``: ``--isolation namespaces``). ``copied``: the files the check's sandbox holds
    (:func:`gradcheck.sandbox.sibling_files`' keys, ``"neural_networks/activations.py"``): an import of one of their
    modules or packages is the student's own code, which works here, and gets no warning (tester27s M4: CS189's
    ``neural_networks/layers.py`` importing ``neural_networks.activations`` was told to remove it)."""
    own = {k.replace(os.sep, "/").split("/")[0].removesuffix(".py") for k in copied}
    from ._sandbox_child import BLOCKED_PACKAGES
    from .grading.static import unavailable_imports
    from .isolation import PROVIDED_TEXT

    mine = sorted({os.path.basename(f) for f in files})
    for v in unavailable_imports(files, nofollow=graders):  # namespaces: no link read, none quoted (review28g M3)
        at = f"{v.file}:{v.line}" + ("" if os.path.basename(v.file) in mine else  # tester31m L3: numpy-ml's
                                     f" (in a module {', '.join(mine)} imports, directly or through its package, "
                                     "not in the checked file; whether the checked code runs it is not known)")
        if v.module is None:
            print(V.wrap(f"WARNING: {at}: cannot tell statically what this imports "
                         f"(`{v.statement}`); the grader provides {PROVIDED_TEXT}: graded, importing "
                         f"anything else fails.") + "\n")
            continue
        top = v.module.split(".")[0]
        if top in own:
            continue
        try:
            installed = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):  # a module without a spec (__main__ run as a script)
            installed = False
        here = ("this check runs in the grader's sandbox (--isolation namespaces; --isolation process imports what is "
                "installed here, for a file you trust)" if graders else
                "the checked code cannot import the course packages" if top in BLOCKED_PACKAGES and top
                not in allow else None if installed else "it is not installed here")
        if v.condition is not None:  # `if GPU: import cupy`: runs only when the test is true
            print(V.wrap(f"WARNING: {at} imports {top} (`{v.statement}`) under `if {v.condition}:`, "
                         f"which the grader's sandbox does not provide ({PROVIDED_TEXT} are available there): "
                         f"graded, this import fails if `{v.condition}` is true there (the scan cannot tell "
                         f"whether it is). " + ("It would work here." if here is None else
                                                 f"It would not import here either: {here}.")) + "\n")
            continue
        print(V.wrap(f"WARNING: {at} imports {top} (`{v.statement}`), which the grader's "
                     f"sandbox does not provide ({PROVIDED_TEXT} are available there): graded, this "
                     f"import fails, and at the top of a file it scores 0 on every test. " +
                     ("It works here for your own use; in a submission, drop it or import it inside a "
                      "try/except ImportError." if here is None else
                      f"It does not import here either: {here}. {_import_fix(top, graders, installed)}; if it is "
                      "your own submission's, drop it or import it inside a try/except ImportError.")) + "\n")


def _import_fix(top: str, graders: bool, installed: bool) -> str:
    """What makes an import of ``top`` that fails in this check work, for a published package one checks: under the
    grader's sandbox (``graders``) no ``pip install`` can help, since the sandbox provides only numpy and the standard
    library (verify37 F13: a file importing scipy was told to ``pip install -r requirements.txt``); --isolation process
    imports what is installed here, after installing it when it is not (``installed``)."""
    from .isolation import PROVIDED_TEXT

    if not graders:
        return ("If it is a dependency of a published package you are checking, install the package's requirements "
                "where gradcheck runs (pip install -r requirements.txt)")
    return (f"No pip install can help inside the sandbox, which provides {PROVIDED_TEXT} whatever is installed: "
            f"{top} is installed here, so --isolation process imports it" if installed else
            f"No pip install can help inside the sandbox, which provides {PROVIDED_TEXT} whatever is installed: for a "
            "published package you trust, install its requirements where gradcheck runs (pip install -r "
            "requirements.txt) and check it with --isolation process (which imports what is installed here)")


# --------------------------------------------------------------------------- loading student code


def _import_file(path: str):
    if not os.path.isfile(path):
        raise UsageError(f"{path!r} is not a file." if os.path.exists(path) else
                         f"file {path!r} does not exist (looked in {os.getcwd()!r}).")
    stem = os.path.splitext(os.path.basename(path))[0]
    modname = "_gradcheck_student_" + re.sub(r"\W", "_", stem)
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path!r} cannot be imported as a Python module (is it a .py file?).")
    module = sys.modules[modname] = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - student code may raise anything at import
        if V.not_the_students(exc):  # Ctrl-C, pytest-timeout's failure: they stop the run
            raise
        sys.modules.pop(modname, None)
        why = f"{V.raised(exc)} while running the file"
        if isinstance(exc, SyntaxError):
            text = f": {exc.text.strip()!r}" if exc.text else ""
            why = (f"{type(exc).__name__} ({exc.msg}) at {os.path.basename(exc.filename or path)}, "
                   f"line {exc.lineno}{text}")
        hint = ("Expected only modules that are installed (numpy, the course packages) or files next to it."
                if isinstance(exc, ImportError) else "Expected a Python file that runs without errors when imported.")
        raise StudentCodeError(V.paragraph(f"{path} does not import: {why}.", hint)) from exc
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    return module


def load_class(spec: str) -> tuple[Any, str]:
    """Import ``path/to/file.py::NAME`` in this process: ``(factory, path)``, ``factory(**init)`` the object to check.

    NAME is a class, a CS231n ``NAME_forward``/``NAME_backward`` pair (:func:`gradcheck._adapters.pair`,
    ``init`` its non-array arguments) or a CS231n loss function ``NAME(x, y) -> (loss, dx)``
    (:func:`gradcheck._adapters.loss_function`); :func:`gradcheck._adapters.adapt` then presents a layer
    as a manualprop layer. UsageError: bad spec, no file, nothing named NAME (the message lists what was found);
    StudentCodeError: the file does not import.
    """
    path, name = V.parse_target(spec)
    module = _import_file(path)
    try:
        kind, target = _adapters.find(module, name)
    except _adapters.AdapterError as exc:
        raise UsageError(f"{path} {exc}" if str(exc).startswith("has no") else f"{path}::{exc}") from None
    if kind == "functions":
        return (lambda **init: _adapters.pair(*target, init)), path
    if kind == "loss_function":
        return (lambda **init: _adapters.loss_function(target, init)), path
    return target, path


# --------------------------------------------------------------------------- subcommands


def _cmd_zoo(args) -> int:
    from .plots import plot_result, plot_results, safe_file_name, save_figure
    from .zoo import run_zoo

    results, errors = run_zoo(seed=args.seed, rtol=args.rtol, atol=args.atol)
    if not results and not errors:
        print("gradcheck zoo: no layers or losses found in manualprop; nothing was checked.", file=sys.stderr)
        return EXIT_MISMATCH
    print(format_table(results, errors=errors))
    if args.plots:
        for r in results:  # GELU[tanh] -> GELU-tanh.png: no shell-special characters
            save_figure(plot_result(r), os.path.join(args.plots, safe_file_name(r.name)))
        if results:
            save_figure(plot_results(results), os.path.join(args.plots, "zoo.png"))
        print(f"\nplots: {len(results) + bool(results)} PNG files in {os.path.abspath(args.plots)}/ "
              f"(zoo.png: all layers and losses; <Name>.png: the tensors of one)")
    total = len(results) + len(errors)
    bad = [r.name + " (" + ", ".join(r.failing_tensors) + ")" for r in results if not r.passed]
    bad += [f"{name} (could not be checked)" for name, _ in errors]
    if bad:
        print(f"\nFAIL: {len(bad)} of {total} failed: {'; '.join(bad)}")
        return EXIT_MISMATCH
    three = sum(r.twin is not None for r in results)
    only = (f"; {total - three} manual vs numerical only (no usable autoprop twin, see above)"
            if three < total else "")
    print(f"\nPASS: all {total} checks passed: {three} compared manual, tape and numerical{only}.")
    return EXIT_PASS


def _refuse_method(method: str, loss: bool = False) -> None:
    """UsageError (exit 2) for ``--loss`` with another method than central (review24g: it ran central differences,
    said only in the footer): an option accepted and not honoured is a wrong number. ``--method complex`` of a
    layer runs: its forwards of the complex step cross the sandbox's pipe as complex128 (the request says its
    reply may hold nothing else: :mod:`gradcheck._sandbox_child`)."""
    if loss and method != "central":
        raise UsageError(f"--method {method} is for a layer's check; a loss (--loss) is checked by central "
                         "differences only (check_loss has no other method), so drop --method.")


def _check_mode(args) -> str:
    """The ``--mode`` of a check: as given, else fast for a layer and full for a loss (``--loss``); UsageError (exit
    2) for the options a loss has not: a fast or sample mode (review25g L4: ``--loss --mode sample`` was accepted and
    every element checked, ``all 160`` in the table: an option accepted and not honoured), --tape, --jacobian,
    --training and --eval."""
    loss, mode = args.loss, args.mode
    if loss and (args.tape or args.jacobian):
        raise UsageError("--tape and --jacobian are for layers, not with --loss.")
    if loss and args.training != "auto":  # a loss has no training mode: the option would be ignored
        raise UsageError(f"--{'training' if args.training else 'eval'} picks a layer's training or eval forward; a "
                         "loss (--loss) has no training mode, so drop it (or check the layer without --loss).")
    if loss and mode not in (None, "full"):
        raise UsageError(f"--mode {mode} is for a layer's check; a loss (--loss) is checked at every element of its "
                         "prediction's gradient (check_loss has no fast or sample mode), so drop --mode (or give "
                         "--mode full).")
    return mode or ("full" if loss else "fast")


def _cmd_check(args) -> int:
    from .check_command import run_check, run_check_loss

    shape = V.parse_input_shapes(args.input_shape)  # validated with the other options: V.validate_cli_args
    init = V.parse_init_json(args.init)
    args.inputs = V.index_inputs(shape, V.parse_indices(getattr(args, "indices", None), shape), args.seed)
    if getattr(args, "indices", None) and (args.loss or args.jacobian):
        raise UsageError("--indices names integer inputs of a layer; not with --loss or --jacobian.")
    if not args.loss and (args.pred or args.pred_arg or args.wrt):
        raise UsageError(f"{'--pred' if args.pred else '--pred-arg' if args.pred_arg else '--wrt'} is for a loss; add --loss.")
    args.wrt = V.parse_wrt(args.wrt)
    args.mode = _check_mode(args)
    _refuse_method(args.method, args.loss)
    if args.tape and args.twin:
        raise UsageError("--tape (the tape on your own forward) and --twin (autoprop's class of the same name) "
                         "both fill the tape column; choose one.")
    # The student's class runs in a sandbox process (gradcheck.sandbox), never in this one.
    from .check_command import check_files
    from .sandbox import Sandbox

    path, name = V.parse_target(args.target)
    allow = _tape_packages(args)
    _resolve_isolation(args)  # before the copy: namespaces copy by the grader's rule
    copied = check_files(args, path)
    with Sandbox(files=copied, timeout=args.timeout, allow_packages=allow, **_check_isolation(args)) as sb:
        for note in sb.notes:
            if not note.startswith(os.path.basename(path) + " "):  # the checked file itself: the error says it
                warnings.warn(note, UserWarning, stacklevel=1)
        _warn_unavailable_imports([os.path.abspath(path)], allow, sb.isolation == "namespaces",
                                  [*copied, *copied.left_out])  # the sandbox's warning says why and what to do
        if args.tape:
            warnings.warn("--tape: in this mode your code may import autoprop and manualprop (it runs on "
                          "autoprop tensors); use it to check your own work, it is never how grading runs.",
                          UserWarning, stacklevel=1)
        code, failed, obj = EXIT_STUDENT, None, None
        try:
            if args.loss:
                obj = _load_loss(sb, args, path, name, init, shape)
            else:
                obj = _load_layer(sb, args, path, name, init, shape)
            _check_kind(obj, "loss" if args.loss else "layer", shape)
            # diagnosis, table, sentence, --json, --plots: gradcheck/check_command.py
            run = run_check_loss if args.loss else run_check
            code = run(args, obj, f"{path}::{name}", init, shape)
            if not args.loss:
                code = _pair_values(sb, args, path, name, init, shape, obj, code)
        except StudentCodeError as exc:
            failed = _explained(exc, args, obj, init, shape, sb.isolation == "namespaces")
        if failed is not None or code in (EXIT_STUDENT, EXIT_MISMATCH) or args.verbose:  # a FAIL too: newuser29 L1
            if failed is not None:
                if sb.output.strip():  # shown below in full: not also as a one-line repr in the message
                    failed.args = (str(failed).split(" Last output: ")[0],)
                if getattr(args, "json_report", None) is not None:  # --json: the message that ended the check
                    args.json_report.error(failed)
                _say_error(failed)
            _show_output(sb.output, name, verbose=args.verbose)
        return failed.exit_code if failed is not None else code


def _explained(exc: StudentCodeError, args, obj, init: Mapping, shape, namespaces: bool) -> GradcheckError:
    """The error to report for ``exc``, the checked code's failure under ``gradcheck check``: its words
    (:func:`_check_words`) with what the options say of it (targets for a loss, ``--indices``, an empty slice at
    ``pad`` 0, a list input, another protocol, an input shape), or another error (a usage error, exit 2) where
    the options, not the code, are at fault."""
    failed = exc
    text = _check_words(exc, namespaces)
    if args.loss and isinstance(exc, NonFiniteError) and obj is not None and isinstance(shape[0], int):
        from .check_command import batch_last_loss, finite_loss_data, one_column_probs
        failed = (finite_loss_data(args, obj, shape, text) or batch_last_loss(args, obj, shape, text) or  # M8,
                  one_column_probs(args, obj, shape, text) or failed)  # tester27s L1, newuser29 L3
    elif args.loss and not args.targets and not getattr(obj, "objective", False) and (t := _names_target(obj, text)) and (
            "IndexError" in text or "integer" in text):
        failed.args = (f"{text.replace(_TARGETS_CLAUSE, '.')} {t} was real-valued (--targets real, the "
                       "default): for class indices add --targets labels (one-hot targets: --targets onehot).",)
    elif args.loss and "IndexError" in text and "integer" in text and (way := _labels_drawn(args, obj, init, shape)):
        failed.args = (f"{text} {way}",)  # students45 F2: CS231n's temporal_softmax_loss(x, y, mask)
    elif not args.loss and (m := re.search(r"\.forward\(.*? returned Y of dtype ((?:u?int|bool)\w*)", text)):
        failed.args = (f"{text} {_integer_y_hint(m[1], args)}",)  # newuser35 L2: not the --input-shape tail
    elif not args.loss and (why := _empty_slice(text, init)):
        failed.args = (f"{text} {why}",)  # tester33 F11: Ng's da_prev_pad[pad:-pad] at pad = 0
    elif not args.loss and not args.indices and "IndexError" in text and "integer" in text:
        failed.args = (f"{text} The inputs were standard-normal floats: if forward's input holds "
                       "integer indices (an embedding lookup), give --indices HIGH (indices drawn "
                       "from [0, HIGH), e.g. --indices 5; for input 1 of several: --indices 1:5).",)
    elif args.indices and "IndexError" in text and "out of bounds" in text:
        failed.args = (f"{text} --indices {args.indices} drew ids up to HIGH - 1: HIGH must not exceed "
                       "the number of rows forward indexes (an embedding's vocabulary size in --init).",)
    elif not args.loss and (listed := (getattr(obj, "protocol", None) or {}).get("list_input")):
        failed.args = (f"{text} {listed}",)  # Add.forward(X: list) given each input apart (tester31m M3)
    elif not args.loss and "gave Y as a tuple" in text and (other := _other_protocol(obj, text)):
        failed = other  # a training-loop model (Raschka's NeuralNetMLP): not the protocol, exit 2
    elif (not args.loss and ".forward(" in text and any(w in text for w in _SHAPE_WORDS)
          and not any(w in text for w in _NOT_SHAPE)):
        failed = _unfit_init_arrays(args, init, shape, text) or failed  # W from --init: exit 2
        if isinstance(failed, StudentCodeError):
            failed.args = (f"{text} X had the shape --input-shape gave, {args.input_shape}: if forward "
                           "expects another (the sizes --init gives its weights), change --input-shape; "
                           "if that is the shape you meant, the error is in forward.",)
    return failed


def _integer_y_hint(dtype: str, args) -> str:
    """The tail of a forward that returned an integer or boolean Y (newuser35 L2: it ended with the --input-shape
    hint, about shapes): the input's dtype, so the integer one comes from forward, and where it usually does."""
    given = getattr(args, "dtype", None) or "float64"
    return (f"The input X was {given} (gradcheck draws float inputs; --dtype chooses their float type), so the "
            f"{dtype} comes from forward itself: besides a cast, look for a comparison returned as the output "
            "(X > 0 is bool: (X > 0).astype(np.float64)) or an output array made with an integer dtype that forward "
            "fills (np.zeros(shape, dtype=int), np.zeros_like of an integer array: give it dtype=np.float64).")


def _empty_slice(text: str, init: Mapping) -> str:
    """Why the checked code's error ``text`` may come from ``x[pad:-pad]`` with ``pad`` 0 in ``--init`` (``init``, at
    any depth): ``-0`` is 0, so the slice ``x[0:-0]`` is empty (tester33 F11: Andrew Ng's conv_backward at pad=0,
    "could not broadcast input array from shape (0,0,3)"); "" when the quoted line slices to ``-NAME`` of no zero."""
    zero, todo = set(), [init]
    while todo:
        for k, v in todo.pop().items():
            if isinstance(v, Mapping):
                todo.append(v)
            elif type(v) in (int, float) and v == 0:
                zero.add(str(k))
    name = next((n for n in re.findall(r":\s*-\s*([A-Za-z_]\w*)\b", text) if n in zero), None)
    return "" if name is None else (
        f"{name} is 0 in --init, and x[{name}:-{name}] is then x[0:-0], an empty slice (-0 is 0, so it ends "
        f"before it starts): slice x[{name}:x.shape[k] - {name}] (or x[{name}:{name} + n]) instead, which is right "
        f"for every {name}.")


def _pair_values(sb, args, path, name, init, shape, obj, code):
    """The exit code of a function pair checked again at each other value of its string keyword arguments that
    ``--init`` does not give (:func:`gradcheck.sources.each_keyword_value`, the loop :func:`gradcheck.check_layer`
    and :func:`gradcheck.diagnose_layer` run too: ``mode="max"`` beside ``if mode == "average"``), each a check of its
    own with its whole report, loaded as ``--init`` with that value would load it (tester33 F2: a broken
    ``mode="average"`` path PASSed unseen); ``code`` (the default's check) when there are none. A FAIL (1) anywhere
    is the result, else the first other nonzero code; a last line says each value's."""
    from .check_command import run_check
    from .sources import each_keyword_value

    def check(more, key, w):  # ``more``: --init with this value, loaded here as --init would load it
        print(f"\n== {path}::{name} with {key}={w!r} (its default was checked above; --init '{json.dumps(more)}' "
              "checks this value alone)")
        try:
            return run_check(args, _load_layer(sb, args, path, name, more, shape), f"{path}::{name}", more, shape)
        except StudentCodeError as exc:
            _say_error(exc)
            return exc.exit_code

    others, line = each_keyword_value(obj, name, [], code, check, lambda key, w: {**init, key: w})
    if line:
        print(f"\n{name}: {line}")
    codes = [code, *(c for _, _, c in others)]
    return EXIT_MISMATCH if EXIT_MISMATCH in codes else next((c for c in codes if c), 0)


def _load_layer(sb, args, path, name, init, shape):
    """The layer ``name`` of ``path`` loaded in the sandbox ``sb`` (its protocol read on inputs of ``shape``); first, for
    a long check, the line saying so (:class:`gradcheck.check_command.LongCheck`, kept as ``args.long_check``)."""
    from .check_command import LongCheck

    args.long_check = LongCheck(args, shape, name, sb)
    sb.init_dtype = getattr(args, "dtype", None) or "float64"  # --init's weights (the float64 copy's own: float64)
    probe = V.layer_inputs(args.inputs, np.random.default_rng([args.seed, 3]), name, getattr(args, "dtype", None))  # the protocol
    args.long_check.probe = probe  # the output's size, measured after the load (newuser38 F6)
    obj = sb.load_layer(os.path.basename(path), name, init_kwargs=init, seed=args.seed,
                        probe_inputs=probe, targets=_model_targets(args, shape))
    args.load_edited = _edited_loader(args, path, name, init, shape, probe)
    return obj


def _load_loss(sb, args, path, name, init, shape):
    """The loss ``name`` of ``path`` loaded in the sandbox ``sb`` for ``--loss``, probed on ``(y_true, y_pred)`` drawn
    as the check draws them, its ``--init`` arrays and y_pred in ``--dtype``; ``args.load_edited`` then loads it
    from an edited copy of its files (its forward without a log's eps: the same verdict on every seed, tester14)."""
    from .check_command import loss_data

    sb.init_dtype = getattr(args, "dtype", None) or "float64"  # --init's arrays (the edited copy's own: float64)
    probe = loss_data(args.targets or "real", args.pred or "real", shape, args.seed, getattr(args, "dtype", None))[
        :2] if isinstance(shape[0], int) else None  # several shapes: run_check_loss refuses them
    args.load_edited = _edited_loader(args, path, name, init, shape, probe, loss=True)
    return sb.load_loss(os.path.basename(path), name, init_kwargs=init, probe=probe, pred_arg=args.pred_arg,
                        wrt=args.wrt)


def _edited_loader(args, path, name, init, shape, probe, loss=False):
    """A context manager ``load(texts)``: the layer ``name`` loaded as :func:`_cmd_check` loads it, from ``path``'s
    files with ``texts`` (``{file name: source}``) in place of some, in a sandbox of its own (used for the copy
    without a log's eps, :mod:`gradcheck._log_eps`); ``loss``: the loss ``name`` as ``--loss`` loads it."""
    from .check_command import check_files
    from .sandbox import Sandbox

    @contextlib.contextmanager
    def load(texts):
        with tempfile.TemporaryDirectory(prefix="gradcheck-edited-") as d:
            d = os.path.realpath(d)  # --isolation namespaces copies no file whose folder is reached through a link
            files = check_files(args, path)
            for k, t in texts.items():  # k may be a package's file, "common/functions.py" (tester25s M5)
                if files.get(k, "").startswith(d + os.sep):  # a second name of a file already edited
                    continue
                os.makedirs(os.path.dirname(os.path.join(d, k)), exist_ok=True)
                with open(os.path.join(d, k), "w", encoding="utf-8") as fh:
                    fh.write(t)
                was = files.get(k)  # every name of that one file (layers.py and mypkg/layers.py) gets the edit, so
                files.update({n: os.path.join(d, k) for n, src in files.items()  # sandbox._packaged still sees one
                              if was is not None and _same_file(src, was)})  # file (review28g M1)
                files[k] = os.path.join(d, k)
            with Sandbox(files=files, timeout=args.timeout, allow_packages=_tape_packages(args),
                         **_check_isolation(args)) as sb:  # --tape: the copy's forward on autoprop tensors (M1)
                if loss:
                    yield sb.load_loss(os.path.basename(path), name, init_kwargs=init, probe=probe,
                                       pred_arg=args.pred_arg, **getattr(args, "wrt_load", {"wrt": args.wrt}))
                    return
                yield sb.load_layer(os.path.basename(path), name, init_kwargs=init, seed=args.seed,
                                    probe_inputs=probe, targets=_model_targets(args, shape))
    return load


def _tape_packages(args) -> tuple[str, ...]:
    """The course packages the checked code may import: autoprop and manualprop with ``--tape`` (its forward runs on
    autoprop tensors), in the check's sandbox and in that of a copy of its files (:func:`_edited_loader`), else none."""
    return ("autoprop", "manualprop") if getattr(args, "tape", False) else ()


def _same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file as :func:`gradcheck.sandbox._packaged` groups them (one
    absolute path)."""
    return os.path.abspath(a) == os.path.abspath(b)


#: The environment variable giving ``gradcheck check``'s ``--isolation`` when the option is not given (as ``PIP_*`` give
#: pip's options): ``auto`` (unset), ``process`` or ``namespaces``.
ISOLATION_ENV = "GRADCHECK_ISOLATION"
ISOLATIONS = ("auto", "process", "namespaces")


def _resolve_isolation(args) -> None:
    """Set ``args.isolation`` to the sandbox ``gradcheck check`` uses: ``--isolation``, else :data:`ISOLATION_ENV`, else
    ``auto``: the strongest this machine gives, the grader's namespaces sandbox where :func:`gradcheck.sandbox.support`
    has one (not with ``--tape``, whose course packages it does not mount), else the process sandbox (redteam37 F2c:
    under the process sandbox, the default until then, a file that switched its audit hook off with numpy alone
    wrote on the host and ran ctypes as the user, root there). A fallback to the process sandbox as root is said in a
    warning: the checked file runs with root's rights past its audit hook. Not refused: root without namespaces is
    the usual container (Docker's default seccomp profile refuses them), whose own walls stand where pytest runs
    too. ``args.isolation_auto``: whether it was chosen here. UsageError for another value of the variable."""
    asked = getattr(args, "isolation", None) or os.environ.get(ISOLATION_ENV, "").strip() or "auto"
    if asked not in ISOLATIONS:
        raise UsageError(f"{ISOLATION_ENV}={asked!r}: expected one of {', '.join(ISOLATIONS)} (gradcheck check's "
                         "--isolation when the option is not given).")
    args.isolation_auto = asked == "auto"
    if asked == "auto":
        from .sandbox import support

        level = "none" if getattr(args, "tape", False) else support()[0]
        asked = "process" if level == "none" else "namespaces"
        if asked == "process" and not getattr(args, "tape", False) and os.geteuid() == 0:
            warnings.warn("gradcheck check runs as root and this machine has no operating-system sandbox "
                          f"(gradcheck.sandbox.support(): {support()[1]}), so the checked file runs in the process "
                          "sandbox: its audit hook is a seat belt, not a wall, and code written to get past it acts "
                          "as root. Check only files you trust here (--isolation process says so and silences "
                          "this warning); check a file you did not write where namespaces work.",
                          UserWarning, stacklevel=1)
    args.isolation = asked


def _check_isolation(args) -> dict:
    """The :class:`~gradcheck.sandbox.Sandbox` keywords of ``gradcheck check --isolation``: ``process`` (the default:
    a child process, its audit hook a seat belt), or ``namespaces``, the grader's operating-system sandbox (not
    hostile: check's own messages; but the grader's copy rule, links never followed, and the file's own folder
    alone: :func:`gradcheck.check_command.check_files`, redteam27 M1, M2). UsageError when
    namespaces were asked with ``--tape`` (the course packages are not mounted there) or this machine has none,
    in the grader's words (:func:`gradcheck.sandbox.support`)."""
    if getattr(args, "isolation", None) != "namespaces":  # _resolve_isolation chose it
        return {}
    if args.tape:
        raise UsageError("--tape runs your forward on autoprop tensors, which the namespaces sandbox does not mount "
                         "(only numpy and the standard library, as in grading); use --isolation process with --tape.")
    from .sandbox import support

    level, detail = support()
    if level == "none":
        raise UsageError(f"--isolation namespaces: the operating-system sandbox is not available on this machine: "
                         f"{detail}. Check a file you did not write on a machine that has it (or with "
                         "gradcheck grade there); --isolation process is a seat belt for your own code.")
    return {"isolation": "namespaces", "hostile": False}


def _model_targets(args, shape):
    """:func:`gradcheck.check_command.model_targets` of ``--targets`` and ``--seed``."""
    from .check_command import model_targets

    return model_targets(args.targets, args.seed, shape)


#: The general targets clause :func:`gradcheck._validation.loss_given` ends with; the CLI's specific --targets hint
#: replaces it (``_cmd_check``).
_TARGETS_CLAUSE = "; the error is in forward, or forward expects other targets (gradcheck check --targets labels, " \
    "onehot or real)."


def _labels_drawn(args, loss, init: Mapping, shape) -> str:
    """Where a loss function's target (its second argument) came from ``--init`` as a nested list of integers, a
    float64 array there (:func:`gradcheck._adapters.init_arrays`: only one named like labels is an int64 array), and
    the loss failed on indexing with it: the command that draws it as class indices instead (``--targets labels:C``, C
    the classes on x's last axis), the other arguments in ``--init`` (students45 F2: CS231n's
    ``temporal_softmax_loss(x, captions, mask)``); "" otherwise."""
    try:
        target = loss_arg_names(loss)[1] if loss is not None else ""
    except Exception:  # noqa: BLE001 - a loss that cannot say its names: no hint
        return ""
    if not (init and _adapters.nested_ints(init.get(target)) and not _adapters.LABEL_KEY.fullmatch(target)):
        return ""
    classes = shape[-1] if isinstance(shape[0], int) else "C"
    rest = {k: v for k, v in init.items() if k != target}
    more = f" --init '{json.dumps(rest)}'" if rest else ""
    return (f"{target} came from --init as a nested list of integers, a float64 array there (only a flat list of "
            f"integers, or a nested one named like labels, y or t, is an int64 array): if {target} holds class "
            f"indices, leave it out of --init and draw it: gradcheck check {args.target} --loss --input-shape "
            f"{args.input_shape} --targets labels:{classes}{more} (--targets labels:C draws integer labels in [0, C), "
            "C the number of classes).")


def _names_target(loss, text: str) -> str:
    """The name a loss's error ``text`` gives the drawn target: ``y_true``, or the loss's own name of it (CS231n's
    ``softmax_loss(x, y)``: newuser27, the ``--targets labels`` hint was left out); "" when it names none."""
    if "y_true" in text:
        return "y_true"
    try:
        target = loss_arg_names(loss)[1] if loss is not None else ""
    except Exception:  # noqa: BLE001 - a loss that cannot say its names: no hint
        return ""
    return target if target and f", {target})" in text else ""


def _unfit_init_arrays(args, init, shape, text):
    """A UsageError (exit 2) when forward failed on a shape and the weight arrays ``--init`` gave
    (:func:`gradcheck._adapters.init_arrays`) have no axis of the input's last size: the command line's
    weights do not fit its input; the message shows a command that fits. None otherwise."""
    shapes = init_arrays(init)[1] if init else {}
    mats = {k: s for k, s in shapes.items() if len(s) == 2}
    if not mats or not isinstance(shape[0], int) or any(shape[-1] in s for s in mats.values()):
        return None
    k, (rows, _) = next(iter(mats.items()))
    fit = ",".join(map(str, (*shape[:-1], rows)))
    return UsageError(f"{text} The weights --init gives ({', '.join(f'{n} {V.fmt_shape(s)}' for n, s in shapes.items())}) "
                      f"have no axis of X's last size, {shape[-1]} (--input-shape {args.input_shape}): give arrays "
                      f"that fit X, or an X that fits them, e.g. for X @ {k}: gradcheck check {args.target} "
                      f"--input-shape {fit} --init '{json.dumps(init)}'.")


#: Words of numpy's shape errors (a matmul, a broadcast, a reshape, a sum that do not fit).
_SHAPE_WORDS = ("shape", "broadcast", "aligned", "mismatch in its core dimension", "cannot reshape", "dimension")
#: errors of forward whose words name the shape but that no other --input-shape mends: forward returned None,
#: gave (Y, attn_weights) (the protocol), is an exercise's stub (NotImplementedError), or gave a real Y for the complex
#: step's complex input (``sandbox._complex_value``)
_NOT_SHAPE = ("returned None, so there is no output", "gave Y as a tuple", "takes its inputs as one list", "raised NotImplementedError",
              "for a complex input (the complex step)", "returned an empty Y of shape",
              "for the same input and settings, so forward's output size")  # newuser35 M1, M2: their own advice


#: The child's refusal of a file (``_sandbox_child``'s audit hook), worded for the grader: ``(writing|reading, path)``.
_REFUSED_FILE = re.compile(r"the grading sandbox does not allow (writing|reading) ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"): "
                           r"a submission may (?:write only into its own folder|read only its own files)")


def _check_words(exc: Exception, namespaces: bool = False) -> str:
    """The text of ``exc`` (an error of the checked code), its ``args`` set to it, in ``gradcheck check``'s words, not the grader's (newuser29 L2: a write
    into the file's own folder, by its absolute path, was refused as "the grading sandbox ... a submission may write
    only into its own folder"): the sandbox is gradcheck's, and a refused file is said with why (the file runs on a
    copy in a temporary folder, so that checking cannot change or read the user's other files) and what works
    (``namespaces``: under ``--isolation namespaces`` the copy is read-only, a private /tmp the one writable place)."""
    def said(m):
        path = m.group(2)
        if m.group(1) == "writing" and namespaces:
            return (f"gradcheck's sandbox does not allow writing {path}: in the namespaces sandbox (--isolation "
                    "namespaces, or auto where this machine has it) gradcheck check runs a read-only copy of the file, as the grader does, and lets it write only into a private "
                    "/tmp (open('/tmp/debug.txt', 'w')), emptied after the check; print() what you want to see "
                    "instead, it is shown when the check fails")
        if m.group(1) == "writing":
            return (f"gradcheck's sandbox does not allow writing {path}: gradcheck check runs the file on a copy in a "
                    "temporary folder and lets it write only there, so that a check cannot change your files (a "
                    "relative path, open('debug.txt', 'w'), writes into that copy, deleted after the check; print() "
                    "what you want to see instead, it is shown when the check fails)")
        return (f"gradcheck's sandbox does not allow reading {path}: gradcheck check runs the file on a copy in a "
                "temporary folder and lets it read only the files copied there with it (those beside it, and the "
                "packages it imports from around it), Python's and numpy's; a file the code needs must lie beside it, "
                "read by a relative path")
    text = _REFUSED_FILE.sub(said, str(exc)).replace("the grading sandbox does not allow", "gradcheck's sandbox does "
                                                                                            "not allow")
    exc.args = (text,) if text != str(exc) else exc.args
    return text


def _show_output(text: str, name: str, *, verbose: bool) -> None:
    """Print the tail of what the checked code printed (stdout and stderr of the sandbox): its last
    20 distinct lines (``--verbose``: 200), each cut at 200 characters, its control characters escaped
    (:func:`gradcheck._validation.printable`)."""
    marks = [re.fullmatch(r"\[\.\.\. (\d+) earlier bytes of output dropped \.\.\.\]", ln)
             for ln in text.rstrip("\n").splitlines()]  # the sandbox keeps the output's tail only (Sandbox.output),
    dropped = sum(int(m[1]) for m in marks if m)  # and its child the tail of one long write (_Tail): one count
    lines = [ln for ln, m in zip(text.rstrip("\n").splitlines(), marks) if not m]  # of both (newuser36)
    if not lines:
        if verbose:
            print(f"gradcheck: {name} printed nothing.", file=sys.stderr)
        return
    # the checker calls forward many times: repeated lines are shown once, counted
    runs = [(ln, sum(1 for _ in group)) for ln, group in itertools.groupby(lines)]
    n = 200 if verbose else 20
    shown = runs[-n:]
    more = (f" (the last {len(shown)} of {len(runs)} distinct lines"
            + ("" if verbose else "; --verbose shows more") + ")") if len(runs) > n else ""
    if dropped:  # newuser23 L2: "the last 200 of 261 distinct lines" of a forward that printed 5000 per call
        more = (f" (the last {len(shown)} distinct lines of its last {sum(len(ln) + 1 for ln in lines):,} bytes; "
                f"{dropped:,} earlier bytes were not kept" + ("" if verbose or len(runs) <= n else
                                                              "; --verbose shows more") + ")")
    print(f"gradcheck: output of {name} (its print calls, stdout and stderr){more}:", file=sys.stderr)
    for ln, count in shown:  # control characters escaped (redteam27 M3: ESC[40A ESC[0J and a fake PASS)
        ln = V.printable(ln if len(ln) <= 200 else ln[:200] + " [...]")
        print("  | " + ln + (f"   [{count} times]" if count > 1 else ""), file=sys.stderr)


def _other_protocol(obj, text: str):
    """An :class:`~gradcheck.errors.UnusableError` (exit 2: nothing was found wrong) for a class whose forward gave Y
    as a tuple (``text``, the error said so) and whose backward takes no upstream gradient of it, as a training loop's
    model does (Raschka's ``NeuralNetMLP``: ``forward(x) -> (a_h, a_out)``, ``backward(x, a_h, a_out, y)`` returning
    the weights' gradients; tester28s M5: was "wrong result (exit 1)", the FAIL code, for code that does not fit
    the protocol); None when backward takes one argument, the dY of a forward that returned (Y, cache) by mistake
    (exit 1 as before)."""
    sig = getattr(obj, "signature", None) or {}
    bparams = [p for p in sig.get("backward_params", []) if p != "self"]
    if "backward_params" not in sig or len(bparams) < 2 or sig.get("backward_varargs"):
        return None
    name = getattr(obj, "class_name", "the class")
    fparams = ", ".join(getattr(obj, "forward_params", []) or []) or "x"
    return UnusableError(V.paragraph(
        f"{text.split(';')[0]}, and {name}.backward({', '.join(bparams)}) takes {len(bparams)} arguments, not the",
        "upstream gradient dY of that output: this is a training loop's model, not the layer protocol gradcheck",
        "check reads (forward(X) -> Y, backward(dY) -> dX, the weights' gradients in grads or attributes), so",
        "nothing was checked and nothing was found wrong. To check it: for a model whose forward(x, t) returns",
        "the loss and backward(dout=1) its gradients, pass --targets (and --indices HIGH for integer x); else",
        f"write a few-line class beside it that presents the protocol, e.g. forward({fparams}) returning the",
        "output alone (the other results kept in attributes) and backward(dY) returning dX with the weights'",
        "gradients stored as self.dW..., and check that class."))


def _check_kind(obj, kind: str, shape) -> None:
    """Usage errors from how the class is declared: a loss without --loss (or the reverse), a wrong
    number of --input-shape shapes for forward's inputs."""
    sig = getattr(obj, "signature", None) or {}
    name = obj.class_name
    bparams = [p for p in sig.get("backward_params", ["?"]) if p != "self"]
    fparams = list(getattr(obj, "forward_params", []) or [])
    no_dy = "backward_params" in sig and not bparams and not sig.get("backward_varargs")
    if kind == "layer" and no_dy and len(fparams) == 2 and not sig.get("forward_training", True):
        raise UsageError(V.paragraph(
            f"{name}: this looks like a loss: use --loss. Its forward({', '.join(fparams)}) takes two arrays",
            "and no training keyword, and its backward() takes no dY, as a loss does (a layer has",
            "forward(X, training=False) and backward(dY)). With --loss, --input-shape is the shape of",
            "y_pred; add --targets labels for integer classes."))
    if kind == "loss" and bparams and sig.get("forward_training") and len(fparams) == 1:
        raise UsageError(V.paragraph(
            f"{name} looks like a layer, not a loss: forward({fparams[0]}, training=False) takes one input and",
            f"backward({', '.join(bparams)}) takes the upstream gradient. Drop --loss to check it as a layer."))
    if kind == "layer" and "forward_required" in sig:
        n = 1 if isinstance(shape[0], int) else len(shape)
        with V.own_call_names(obj):  # a function pair's forward by its own name (affine_forward takes ...)
            V.check_input_count(n, name, fparams, sig.get("forward_required"), bool(sig.get("forward_varargs")))


def _cmd_train(args) -> int:
    from .train import TrainConfig, run_training

    cfg = TrainConfig(epochs=args.epochs, seed=args.seed, model=args.model)
    report = run_training(cfg, progress=not args.no_progress, plots_dir=args.plots or None)
    print(report.summary())
    if report.plot_path:
        print(f"\nplot: {os.path.abspath(report.plot_path)}")
    if report.passed:
        print("\nPASS: manual and tape training agree and both reach the accuracy requirement.")
        return EXIT_PASS
    print("\nFAIL: " + "; ".join(name for name, *_, ok in report.requirements if not ok) + ".")
    if note := report.epochs_note():
        print(V.wrap(note))
    return EXIT_MISMATCH


# --------------------------------------------------------------------------- parser


def _add_common(p, seed: str, atol: float | None, atol_help: str, plots: str | None = None) -> None:
    """``--seed``, ``--rtol``, ``--atol``; ``--plots``/``--no-plots`` (``plots``: what is written)."""
    p.add_argument("--seed", type=int, default=0, help=f"seed for {seed} (default 0)")
    if atol_help:
        p.add_argument("--rtol", type=float, default=1e-6, help="relative tolerance (default 1e-6)")
        p.add_argument("--atol", type=float, default=atol, help=atol_help)
    if plots:
        p.add_argument("--plots", metavar="DIR", default=DEFAULT_PLOTS,
                       help=f"write {plots} (default: {DEFAULT_PLOTS}/)")
        p.add_argument("--no-plots", dest="plots", action="store_const", const=None,
                       help="write no plots")


def _add_constants(c) -> None:
    """``check``'s ``--constants`` (tester13 H4: :func:`gradcheck.check_command.take_constants`)."""
    c.add_argument("--constants", metavar="NAME[,NAME]",
                   help="array attributes forward only reads that are constants, not weights (e.g. scale or "
                        "inner.bh): without a gradient beside weights with theirs, gradcheck cannot tell a constant "
                        "from a weight whose gradient backward forgot, and the layer is NOT CHECKED (exit 3); "
                        "a constant can also be named privately (self._scale)")


def _add_check_parser(sub, fmt) -> None:
    """The options of ``gradcheck check``."""
    c = sub.add_parser(
        "check", help="check a layer class from a .py file (manual vs numerical)", epilog=CHECK_EPILOG, formatter_class=fmt,
        description="Import path/to/file.py in a separate sandbox process (gradcheck.sandbox: "
                    "memory and time limits, see --timeout; an audit hook refusing files outside its folder, "
                    "processes, sockets and the course packages, a seat belt for your own code, not a wall: "
                    "--isolation namespaces for a file you did not write), "
                    "build ClassName(**INIT) there and compare its backward() "
                    "and grads against central differences of L = sum(forward(X) * G), X and G "
                    "standard normal from --seed. The class needs no base class: params/grads "
                    "dicts, forward(X, training=False) -> Y, backward(dY) -> dX.")
    c.add_argument("target", metavar="path/to/file.py::ClassName")
    c.add_argument("--input-shape", required=True, metavar="N,D", help="shape of X, e.g. 8,5; for forward(Q, K, V) "
                   "one shape per input separated by ';', e.g. '2,4,3;2,5,3;2,5,6'. At most 10**7 elements per "
                        "input; a check whose planned forwards make a large input long says so before it starts "
                        "(a progress bar on a terminal): a small batch finds the same bugs")
    c.add_argument("--indices", metavar="[POS:]HIGH",
                   help="input POS (default 0, in --input-shape's order) holds integer indices drawn from "
                        "[0, HIGH), as an embedding lookup's ids, instead of standard-normal floats; "
                        "several as 0:5,2:7. No gradient is checked for an integer input: backward returns None in "
                        "its place, or, when one input alone is float, that input's gradient alone")
    c.add_argument("--init", metavar="JSON", help='constructor kwargs as a JSON object, e.g. \'{"in_features": 5}\'; '
                   "an rng argument, if the constructor has one, is seeded from --seed")
    c.add_argument("--dtype", choices=("float64", "float32", "float16"), default="float64",
                   help="the dtype of --init's arrays (a class's weights, a CS231n pair's *_param lists) and of "
                        "the inputs the code's own run is given (with --loss, y_pred) (default float64). Code "
                        "written for float32 (Deep Learning from Scratch 2's .astype('f') weights and dtype='f' "
                        "buffers), a layer's or a loss's, is run as written with --dtype float32: the protocol probe "
                        "and its own forward and backward on float32 X and weights, compared within float32's "
                        "round-off with a float64 copy of its files given the same values in float64, whose "
                        "gradients are checked by central differences, which take X in float64 (in float32 they "
                        "are noise); not with --jacobian")
    _add_common(c, "X, G and rng", None, "absolute tolerance (default: max(1e-9, u*sum|Y*G|/eps), the "
                "round-off of the finite differences, u = 2.2e-16; it grows with the size of the layer, "
                "see gradcheck.check.default_atol)")
    c.add_argument("--plots", metavar="DIR", help="write DIR/ClassName.png and, per failing gradient, "
                   "DIR/ClassName-dW-heatmap.png")
    c.add_argument("--mode", choices=("full", "fast", "sample"), default=None,
                   help="fast: random directional derivatives, then every element of a failing tensor; "
                        "full: every element; sample: 8 random elements per tensor (default fast; a loss, "
                        "--loss, is checked at every element: full only)")
    c.add_argument("--method", choices=("central", "forward", "richardson", "complex"), default="central",
                   help="finite differences (default central). complex: the complex step Im L(X+ih)/h "
                        "(h=1e-20, no cancellation) for the inputs of a complex-analytic forward; a forward that "
                        "is not (abs, .astype(float), np.real) gets central differences and a note "
                        "saying why; parameters always central. In fast mode only a tensor whose directional "
                        "test fails is differenced by it (--mode full for every entry)")
    c.add_argument("--eps", type=float, default=None, help="relative step h = eps*max(1,|x|) (default: cube root "
                   "of float64 epsilon, 6.1e-6, for central differences)")
    c.add_argument("--reference", metavar="manualprop.NAME",
                   help="also compare forward output and gradients with our layer built from --init and "
                        "given the student's parameter values; with --loss, the loss value L and dL/dy_pred "
                        "with our loss (e.g. manualprop.MulticlassHinge)")
    c.add_argument("--reference-init", metavar="JSON", help="the --reference's own constructor kwargs as a JSON "
                   "object, e.g. '{\"in_features\": 4, \"out_features\": 3}' (default: from --init and the layer)")
    _add_mode_options(c)
    _add_sandbox_options(c)
    _add_engine_options(c)
    c.add_argument("--loss", action="store_true",
                   help="the class is a loss: forward(y_pred, y_true) -> float, its order read from the "
                        "parameter names (x/t, input/target, logits/labels, y_true/y_pred...; when they do not "
                        "tell, Keras's y_true, y_pred), backward() -> dL/dy_pred (backward(dout) is given 1.0); "
                        "--input-shape is the shape of y_pred; dL/dy_pred is compared with central differences")
    c.add_argument("--targets", metavar="KIND",
                   help="with --loss, y_true: labels[:K] (integer classes in [0,K), K = last axis of y_pred "
                        "by default; shape y_pred.shape[:-1], or y_pred.shape when K differs, e.g. labels:2 "
                        "for 0/1 labels), onehot[:K], probs (softmax rows), real (standard normal), "
                        "unit (uniform in [0.05, 0.95]) (default real); without --loss, the targets t of a "
                        "model forward(x, t) -> loss, backward(dout=1) (Deep Learning from Scratch vol. 2): "
                        "labels:K or onehot:K for the batch of x (t of shape (N,); labels:K@N,T gives t another "
                        "shape, e.g. (N, T) for a language model's tokens, a one-hot's class axis added to it), held "
                        "fixed while x and the params are checked")
    _add_loss_options(c)
    c.set_defaults(func=_cmd_check)


def _add_mode_options(c) -> None:
    """``check``'s --training/--eval, --json and --verbose."""
    modes = c.add_mutually_exclusive_group()
    modes.add_argument("--training", dest="training", action="store_const", const=True, default="auto",
                       help="check forward(X, training=True) only (default: a forward that takes training is "
                            "checked in eval and in training mode)")
    modes.add_argument("--eval", dest="training", action="store_const", const=False,
                       help="check forward(X, training=False) only")
    c.add_argument("--json", metavar="FILE", help="write the diagnosis as JSON to FILE")
    c.add_argument("--verbose", "-v", action="store_true",
                   help="always show what the checked code printed (its last 200 lines); without it the last "
                        "20 lines are shown when the check fails (a FAIL) or the code raises")


def _add_sandbox_options(c) -> None:
    """The options of ``gradcheck check`` on its sandbox: --isolation, --timeout."""
    c.add_argument("--isolation", choices=ISOLATIONS, default=None,
                   help="auto (default; the environment variable GRADCHECK_ISOLATION sets another): namespaces "
                        "where this machine has them (not with --tape), else process; the header's first line says "
                        "which ran. process: the file runs in a child process with memory and time limits and a "
                        "Python audit hook that refuses files outside its folder, other processes, sockets and "
                        "the course packages: a seat belt for your own code, not a wall (code written to get past "
                        "the hook reads and writes what you can); namespaces: the grader's operating-system "
                        "sandbox (bubblewrap, Linux; gradcheck grade's): a filesystem of the Python runtime and "
                        "numpy read-only, the file's folder copied read-only (that folder alone, links in it not "
                        "followed, as grading copies a submission), a private /tmp, no network; only numpy and the "
                        "standard library import, as in grading; not with --tape. Check a file you did not write "
                        "with namespaces (or gradcheck grade)")
    c.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="wall-clock limit per call into the student's code, in its sandbox process (each forward of "
                        "a batch or of the load's probes; default 30; a call other load starved gets the CPU time it did "
                        "not have, up to 10 x); exceeding it exits 3; the session may take max(60, 10 x SECONDS) plus "
                        "SECONDS per further call of a batch or of the probes")


def _add_engine_options(c) -> None:
    """The options of ``gradcheck check`` that bring in autoprop: --twin, --tape, --jacobian."""
    c.add_argument("--twin", action="store_true",
                   help="also compare with autoprop.layers.<ClassName> built with the same --init (not in a "
                        "mode where your forward is random: the twin draws its own mask; --tape uses yours)")
    c.add_argument("--twin-init", metavar="JSON", help="the --twin's own constructor kwargs as a JSON object, when "
                   "its arguments are not your class's, e.g. '{\"normalized_shape\": 4}' for a LayerNorm(D) "
                   "(the others: from --init and the layer's attributes, as without it)")
    c.add_argument("--tape", action="store_true",
                   help="also run YOUR forward on autoprop tensors (numpy calls are recorded by the tape) and "
                        "compare the tape's gradients with your backward and with numerical ones (tape~num, "
                        "manual~tape); a numpy function autoprop cannot differentiate is named and the check "
                        "falls back to manual vs numerical. In this mode your code can import autoprop and "
                        "manualprop: for checking your own work, never for grading")
    c.add_argument("--jacobian", action="store_true",
                   help="small layers (one input, at most 400 input and 400 output elements): compare the full "
                        "Jacobian dY/dX of the tape (--tape or --twin) with central differences, in each mode "
                        "checked (eval, training or both, as the table); a random forward's draws are held as "
                        "for the check; with --plots also write DIR/ClassName-jacobian-MODE.png per mode "
                        "(DIR/ClassName-jacobian.png for a forward with no training switch)")


def _add_loss_options(c) -> None:
    """``gradcheck check``'s ``--pred`` (y_pred's data) and ``--pred-arg`` (which argument is y_pred) of a loss."""
    c.add_argument("--pred", metavar="KIND",
                   help="with --loss, y_pred: real (standard normal: logits, regression), probs (softmax "
                        "rows), unit (uniform in [0.05, 0.95]) (default real)")
    c.add_argument("--pred-arg", metavar="NAME",
                   help="with --loss, the name of the argument of forward that receives the prediction, when "
                        "forward's names do not say (forward(self, a, b) of a - b: --pred-arg a)")
    c.add_argument("--wrt", metavar="NAME[,NAME...]",
                   help="with --loss, for a function returning (loss, grad, ...) of arguments --init gives: the "
                        "argument(s) the returned gradient(s) belong to, in the order returned, as jax's argnums "
                        "(linearRegCostFunction(X, y, theta, lambda_) -> (J, grad): --wrt theta; word2vec's "
                        "(loss, gradCenterVec, gradOutsideVecs): --wrt centerWordVec,outsideVectors). Each is "
                        "checked at its --init value (the first argument at data of --input-shape). Without it, "
                        "the first argument when the gradient has its shape, else the one argument of each "
                        "gradient's shape")


#: zoo's and train's own exit codes and examples (newuser21 L9: their --help repeated check's, exit 3 "the file
#: does not import" among them, which neither can give: they check our own layers).
ZOO_EPILOG = """\
exit codes:
  0  pass: every built-in layer's and loss's gradients within tolerance
  1  a gradient outside tolerance, or a layer that could not be checked (the table names it)
  2  usage error: bad arguments (a negative --seed, an --atol out of range, a plots folder
     that cannot be written); also gradcheck itself failing

examples:
  gradcheck zoo --plots demo-output/zoo
  gradcheck zoo --no-plots --seed 3
"""
TRAIN_EPILOG = """\
exit codes:
  0  pass: manual and tape training agree and both reach the accuracy requirement
  1  a requirement failed (its [FAIL] line: an accuracy, or a loss or gradient difference
     above 1e-09)
  2  usage error: bad arguments (--epochs below 1, a negative --seed, a plots folder that
     cannot be written); also gradcheck itself failing

examples:
  gradcheck train --plots demo-output/train
  gradcheck train --model cnn --epochs 15 --plots demo-output/train-cnn
"""


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``gradcheck`` script (exposed for docs and tests)."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(
        prog="gradcheck", description="Compare manual (hand-derived), tape (autoprop) and numerical "
                    "(central-difference) gradients.", epilog=EPILOG, formatter_class=fmt)
    sub = p.add_subparsers(dest="command", metavar="{zoo,check,train,grade,assignment}", required=True)

    z = sub.add_parser("zoo", help="check every built-in layer and loss (manual vs tape vs numerical)",
                       epilog=ZOO_EPILOG, formatter_class=fmt)
    _add_common(z, "weights, inputs and upstream gradients", 1e-9,
                "absolute tolerance (default 1e-9)", "PNG plots into DIR")
    z.set_defaults(func=_cmd_zoo)

    _add_check_parser(sub, fmt)
    _add_constants(sub.choices["check"])

    t = sub.add_parser("train", help="train an MLP or a CNN on digits with manual and tape gradients and compare",
                       epilog=TRAIN_EPILOG, formatter_class=fmt)
    t.add_argument("--epochs", type=int, default=30, help="epochs (default 30)")
    t.add_argument("--model", choices=("mlp", "cnn"), default="mlp",
                   help="mlp: 64-32-10 tanh (accuracy >= 0.95); cnn: Conv2D-ReLU-MaxPool2D-Flatten-Linear "
                        "on 1x8x8 images (accuracy >= 0.97) (default mlp)")
    _add_common(t, "split, weights and batch order", None, "", "DIR/training.png")
    t.add_argument("--no-progress", action="store_true", help="no progress bar; a line per epoch instead")
    t.set_defaults(func=_cmd_train)

    from .grading.cli import add_grade_parser  # grade: gradcheck/grading/cli.py

    add_grade_parser(sub, EPILOG)
    from .assignment import add_assignment_parser  # assignment release: gradcheck/assignment.py

    add_assignment_parser(sub)
    return p


#: Options whose value may start with "-" (a negative size or number), which argparse would read as an option.
SIGNED_VALUES = ("--input-shape", "--eps", "--rtol", "--atol", "--seed", "--timeout")


def _glued(argv: list[str]) -> list[str]:
    """``--input-shape -8,5`` as ``--input-shape=-8,5``: argparse reads ``-8,5`` as an unknown option and says
    "expected one argument"; glued, the value reaches the option's own check and its usage error."""
    out: list[str] = []
    for a in argv:
        if out and out[-1] in SIGNED_VALUES and re.match(r"-[\d.(\[]", a):
            out[-1] = f"{out[-1]}={a}"
        else:
            out.append(a)
    return out


def _parser_parts(parser: Any) -> tuple[list[str], dict[str, argparse.ArgumentParser]] | None:
    """``(--long options, {subcommand: its parser})`` of ``parser``, or None when this argparse does not expose
    them as :func:`_misspelt` reads them. argparse has no public listing of a parser's arguments: this reads its
    ``_actions`` list (the one private name), and of each action only what the documented ``Action`` interface
    holds (``option_strings``; ``choices``, a dict of parsers for ``add_subparsers``' action)."""
    actions = getattr(parser, "_actions", None)
    if not isinstance(actions, (list, tuple)):
        return None
    options: list[str] = []
    subs: dict[str, argparse.ArgumentParser] = {}
    for a in actions:
        strings, choices = getattr(a, "option_strings", None), getattr(a, "choices", None)
        if not isinstance(strings, (list, tuple)):
            return None
        options += [o for o in strings if isinstance(o, str) and o.startswith("--")]
        if isinstance(choices, Mapping) and choices and all(
                isinstance(v, argparse.ArgumentParser) for v in choices.values()):
            subs.update(choices)
    return options, subs


def _misspelt(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """A usage error under the subcommand's usage for an option it does not know, naming it and the close match
    (tester16 L13: ``--input-shpe`` was reported as a missing ``--input-shape``, ``--rtoll`` under the top-level
    usage); nothing when every option is known or a prefix argparse accepts, and nothing when the parsers do not
    expose their options (:func:`_parser_parts`: another Python's argparse), so that argparse's own message is
    given."""
    top = _parser_parts(parser)
    cmd = next((a for a in argv if not a.startswith("-")), None)
    if top is None or cmd not in top[1]:
        return
    sub, rest = top[1][cmd], argv[argv.index(cmd) + 1:]
    parts = _parser_parts(sub)
    if parts is None:
        return
    known, nested = parts
    if nested:  # `assignment release ...`: its own subcommand's options
        return _misspelt(sub, rest)
    for tok in rest:
        opt = tok.split("=", 1)[0]
        if opt == "--":
            return
        if not opt.startswith("--") or opt in known or any(k.startswith(opt) for k in known):
            continue
        near = difflib.get_close_matches(opt, known, n=1, cutoff=0.7)
        sub.error(f"unrecognized option {opt}" + (f"; did you mean {near[0]}?" if near else ""))


def main(argv: list[str] | None = None) -> int:
    """Run the ``gradcheck`` command line; return the exit code (see ``--help``)."""
    with starting():  # the command's start-up: the parser imports grade's and assignment's modules
        parser, argv = build_parser(), _glued(sys.argv[1:] if argv is None else list(argv))
        _misspelt(parser, argv)
        args = parser.parse_args(argv)
    old = warnings.showwarning
    warnings.showwarning = _show_warning
    _SHOWN_WARNINGS.clear()
    report, code = _json_report(args), None  # check --json: this run's report, whatever its end (newuser35 H1)
    try:
        if args.command in ("zoo", "check", "train"):
            V.validate_cli_args(args)  # every option, before any work (and before output folders are made)
        if args.command in ("check", "grade"):  # the folders a killed gradcheck left in /tmp (tester22g: kill -9)
            from . import _tmpdirs
            _tmpdirs.sweep()
        with sigterm_raises():  # the command's run: a SIGTERM is worded as a Ctrl-C is (143), not a silent rc -15
            code = int(args.func(args))
            return code
    except GradcheckError as exc:
        if report is not None:
            report.error(exc)
        code = _say_error(exc)
        return code
    except KeyboardInterrupt as exc:  # a Ctrl-C mid-run: one line, as at start-up (grade words its own stops)
        if report is not None:
            report.error(exc)
        code = say_stopped(exc, f"during `gradcheck {args.command}`, before it finished",
                           "nothing it printed or wrote is a complete result; rerun the same command")
        return code
    except BrokenPipeError:  # `gradcheck ... | head`: the reader left; say nothing more (as cat and grep do)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that Python's flush at exit does not raise again
        code = 141  # 128 + SIGPIPE, what a shell reports for a process killed by the broken pipe
        return code
    except BaseException as exc:  # gradcheck's own failure (a traceback follows): the report says so (code None)
        if report is not None:
            report.error(exc)
        raise
    finally:
        warnings.showwarning = old
        if report is not None and not (code == EXIT_USAGE and _json_refused(args)):
            report.finish(code)


def _json_report(args) -> Any:
    """``check --json FILE``'s :class:`gradcheck.check_command.JsonReport`, kept as ``args.json_report`` for the
    checks to fill; None without --json (or for another command)."""
    if args.command != "check" or not getattr(args, "json", None):
        return None
    from .check_command import JsonReport

    args.json_report = JsonReport(args.json)
    return args.json_report


def _json_refused(args) -> bool:
    """Whether --json FILE itself is what the usage error refused (a folder, a missing folder, unwritable): then
    nothing is written there (tester15 L6: nothing made before a usage error)."""
    try:
        V._check_writable(args.json, "--json")
    except UsageError:
        return True
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
