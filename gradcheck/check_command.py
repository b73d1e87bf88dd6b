"""The body of ``gradcheck check`` (:mod:`gradcheck.cli` parses the arguments and builds the object in the
sandbox): :func:`run_check` (layers) and :func:`run_check_loss` (``--loss``) print the header, table,
diagnosis and verdict and write ``--json`` and ``--plots``. Colours only on a terminal (``isatty``
and ``NO_COLOR`` unset, https://no-color.org)."""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import json
import os
import re
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import _validation as V
from ._adapters import (
    EVAL_FLAGS,
    ORDER_UNREAD,
    TRAIN_FLAGS,
    _rebound_text,
    init_arrays,
    joined_and,
    missing_gradients,
    nielsen_methods,
    softmax,
    undecided_text,
)
from ._large_inputs import probed_large
from ._switch_reach import file_classes, self_attr
from .check import (
    FAST_SAMPLE,
    FAST_SAMPLE_ABOVE,
    NO_GRADIENT,
    check_loss,
    loss_arg_names,
    loss_gradient_name,
)
from .compare import VACUOUS, close, compare, default_atol, mismatched, relative_error, sums_to_one
from .config import eval_backward_refused, mode_word, training_modes
from .diagnose import (
    RANDOM_REFERENCE,
    RANDOM_TWIN,
    Finding,
    _again_at,
    _again_told,
    _find,
    _grown_shape,
    _precision,
    _probe_inputs,
    diagnose_layer,
    held_forward,
    loss_finding,
    loss_precision,
    mode_label,
    mode_worded,
    not_checkable,
    point_headers,
    random_mean_finding,
)
from .errors import (
    EXIT_MISMATCH,
    EXIT_PASS,
    EXIT_STUDENT,
    EXIT_USAGE,
    GradientShapeError,
    NotCheckedError,
    StudentCodeError,
    UsageError,
    error_kind,
)
from .numerical import DEFAULT_EPS, OFFSETS, default_eps, numerical_jacobian
from .result import layout_words
from .sources import (
    NO_SWITCH,
    SAME_Y_OTHER_BACKWARD,
    TapeUnavailable,
    TwinError,
    Wrapper,
    backward_twice,
    build_twin,
    constructor_kwargs,
    grad_slots,
    pair_mode_line,
    twice_difference,
)
from .student_tape import StudentTape

__all__ = ["run_check", "build_reference", "use_color", "colorize"]

_GREEN, _RED, _YELLOW, _RESET = "\033[32m", "\033[31;1m", "\033[33m", "\033[0m"


def use_color(stream=None) -> bool:
    """True when ``stream`` (default stdout) is a terminal and ``NO_COLOR`` is not set."""
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


def colorize(text: str, on: bool) -> str:
    """Colour ``ok`` (ending a line) and ``PASS`` (starting one) green, ``FAIL``/``ERROR`` red, when ``on``."""
    return re.sub(r"\b(FAIL|ERROR)\b|\bok$|^PASS\b", lambda m: f"{_RED if m[1] else _GREEN}{m[0]}{_RESET}",
                  text, flags=re.M) if on else text


def build_reference(spec: str, init: dict[str, Any], seed: int, layer: Any = None, owner: str = "",
                    own: str | None = None):
    """``manualprop.NAME`` for ``--reference``, built with the checked ``layer``'s settings
    (:func:`gradcheck.sources.constructor_kwargs`: ``init``, then its attributes such as ``eps``), or with ``own``
    (``--reference-init``, JSON: the reference's own kwargs, tester20s M7), and a seeded ``rng`` if it takes one;
    UsageError otherwise, naming the checked class ``owner``."""
    import inspect

    import manualprop

    mod, _, name = spec.rpartition(".")
    if mod != "manualprop" or not name:
        raise UsageError(f"--reference must be written manualprop.ClassName, e.g. manualprop.Linear; got {spec!r}.")
    cls = getattr(manualprop, name, None)
    if not isinstance(cls, type):
        raise UsageError(f"manualprop has no class {name!r} (for --reference).")
    try:
        kwargs = (dict(V.parse_init_json(own)) if own is not None
                  else constructor_kwargs(cls, layer, init, owner or name, what="reference"))
    except TwinError as exc:
        raise UsageError(f"--reference {spec}: {exc}") from None
    try:
        if "rng" in inspect.signature(cls).parameters:
            kwargs.setdefault("rng", np.random.default_rng(seed))
    except (TypeError, ValueError):
        pass
    try:
        return cls(**kwargs)
    except Exception as exc:  # noqa: BLE001 - our own class: its message is the usage error
        raise UsageError(f"--reference {spec}: {name}(**--init) raised {type(exc).__name__}: {exc}") from exc


def check_files(args, path: str):
    """``{name: path}`` of the files ``gradcheck check`` copies into its sandbox for the checked file ``path``
    (:func:`gradcheck.sandbox.sibling_files`, a :class:`gradcheck.sandbox.Siblings`), its copies with edits read from
    them too: with ``--isolation namespaces`` (a file one did not write) its own folder alone, links there not
    followed (redteam27 M1, M2), and the file's own packages left out in its ``left_out``. Chosen by ``auto``
    (:func:`gradcheck.cli._resolve_isolation`), the namespaces sandbox copies by the rule of one's own code (the
    packages around it, as in the process sandbox; still no link followed: the namespaces sandbox's copy never follows
    one), so that a check finds the same files whichever sandbox this machine gives."""
    from .sandbox import sibling_files

    return sibling_files(path, hostile=getattr(args, "isolation", "process") == "namespaces"
                         and not getattr(args, "isolation_auto", False))


def isolation_words(args) -> str:
    """The header's words on the sandbox a check ran in: ``isolation namespaces`` or ``isolation process``, with
    ``(auto)`` when ``gradcheck check`` chose it (:func:`gradcheck.cli._resolve_isolation`); "" for a caller without one."""
    if not (iso := getattr(args, "isolation", None)):
        return ""
    return f", isolation {iso}" + (" (auto)" if getattr(args, "isolation_auto", False) else "")


def run_check(args, layer, label: str, init: dict[str, Any], shape) -> int:
    """Diagnose ``layer`` (a :class:`gradcheck.sandbox.RemoteLayer`) with the options ``args``, print, return the exit
    code: 0 pass, 1 a mismatch or named bug, 3 the student's code failed. ``label`` is ``path::NAME``,
    ``init`` the constructor kwargs (also of the twin and reference), ``shape`` the input shape(s). Gradients are
    named as the student's code names them (:func:`gradcheck._validation.own_grad_names`) in the whole report."""
    long_check = getattr(args, "long_check", None)
    with V.own_grad_names(V.own_names_of(grad_slots(layer))), V.own_call_names(layer), \
            long_check.running(layer) if long_check is not None else contextlib.nullcontext():
        return _run_check(args, layer, label, init, shape)


#: ``gradcheck check``'s work, in forwards of its input times the input's elements, from which it says before the
#: layer is loaded how much it plans, suggests a smaller input or mode, and shows a progress bar on a terminal
#: (session 24: a buggy tanh at 2000x4000, under the 10**7 cap, ran for minutes with no word). 2.5e8: a 1000x250
#: input's failing fast check, 20-60 s on 2 shared cores.
LONG_CHECK = 250_000_000
#: Forwards and backwards a check runs besides its element plans (its probes, directional tests and diagnosis),
#: counted through the sandbox in fast mode: 48 on a passing tanh, 90-110 on a Linear, about 130 on a failing tanh.
CHECK_CALLS = 150
#: The most weights of a layer :class:`LongCheck` copies for one forward that measures its output (a copy of more
#: doubles a memory the check needs).
COPIED_WEIGHTS = 10_000_000


def planned_forwards(mode: str, method: str, sizes: Sequence[int], n_samples: int = 8) -> int:
    """About how many forwards of its input a check of tensors of ``sizes`` elements runs at most: :data:`CHECK_CALLS`
    plus the element plan's (``len(OFFSETS[method])`` per entry; central for the complex step's parameters): every
    entry in full mode, ``n_samples`` per tensor in sample mode, and in fast mode a failing tensor's
    (:data:`~gradcheck.check.FAST_SAMPLE` sampled entries above :data:`~gradcheck.check.FAST_SAMPLE_ABOVE`, else all).
    An estimate: a failing tensor whose sample passes is checked whole, and a forward whose modes differ twice."""
    k = len(OFFSETS["central" if method == "complex" else method])
    each = {"full": lambda n: n, "sample": lambda n: min(n, n_samples),
            "fast": lambda n: FAST_SAMPLE if n > FAST_SAMPLE_ABOVE else n}[mode]
    return CHECK_CALLS + k * sum(each(int(n)) for n in sizes)


def _on_terminal() -> bool:
    """Whether stderr is a terminal: the progress bar's rule (no bar in a log, a pipe or a notebook's capture)."""
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


class LongCheck:
    """What ``gradcheck check`` says of a long check, made before the layer is loaded: when :func:`planned_forwards`
    of the inputs times their elements exceeds :data:`LONG_CHECK`, a line on stderr naming the sizes, the plan, a
    smaller input and a quicker mode. :meth:`running` (around the check) adds the parameters to the plan and, on a
    terminal, shows a tqdm bar over the forwards, whose rate gives the time left: the elements the sandbox was sent
    (:attr:`gradcheck.sandbox.Sandbox.on_work`) over the input's elements. No time is foretold from one forward: a
    check's first forwards share the input's memory, its chunked ones copy it through a pipe, several times slower
    (1000x2000: 0.13 s, then 0.5 s per forward)."""

    def __init__(self, args, shape, name: str, sandbox) -> None:
        self.shapes = [tuple(shape)] if isinstance(shape[0], int) else [tuple(s) for s in shape]
        self.elements = sum(int(np.prod(s, dtype=np.int64)) for s in self.shapes)
        self.args, self.name, self.sandbox = args, name, sandbox
        self.planned = planned_forwards(args.mode, args.method, [self.elements])
        self.long, self.done, self.bar, self.probe = False, 0.0, None, None
        self._say()

    def _say(self, params: dict | None = None) -> None:
        """The line of a long check (once), when the plan makes it one, with the advice that shortens it: a smaller
        batch where the batch is over 8, a smaller layer where one parameter (``params``: ``{name: entries}``) takes
        most of the planned forwards, a quicker mode (review26g L1: "--input-shape 4,784" was advised for an input
        of (4, 784) whose plan was a 1.6M-entry W's)."""
        if self.long or self.planned * self.elements <= LONG_CHECK:
            return
        self.long = True
        what = " and ".join(V.fmt_shape(s) for s in self.shapes)
        advice = []
        if any(len(s) and s[0] > 8 for s in self.shapes):
            small = ";".join(",".join(str(d) for d in (min(s[0], 8), *s[1:])) for s in self.shapes)
            advice.append(f"a smaller batch finds the same bugs: --input-shape {small}")
        if params and 2 * (planned_forwards(self.args.mode, self.args.method, [n := max(params.values())])
                           - CHECK_CALLS) > self.planned:
            big = next(k for k, v in params.items() if v == n)
            advice.append(f"most of them perturb {big}'s {n:,} entries: a smaller layer (fewer units, e.g. through "
                          "--init) finds the same bugs")
        advice += {"fast": ["--mode sample differences 8 random entries per tensor"],
                   "full": ["--mode fast (the default) differences a tensor's entries only where its directional test "
                            "fails, --mode sample 8 random entries per tensor"]}.get(self.args.mode, [])
        text = "; ".join(advice)
        print(V.wrap(f"gradcheck: a long check: {self.name}'s input {what} has {self.elements:,} elements, and --mode "
                     f"{self.args.mode} runs up to about {self.planned:,} forwards of it."
                     + (f" {text[0].upper()}{text[1:]}." if text else "")), file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def running(self, layer):
        """Around the check of ``layer``: the plan with its parameters (and the line, if they make it long), the bar."""
        params = {str(k): int(np.size(v)) for k, v in (getattr(layer, "params", None) or {}).items()}
        self.planned = planned_forwards(self.args.mode, self.args.method, [self.elements, *params.values()])
        self._say(params)
        self._say_output(layer, sum(params.values()))
        if not (self.long and _on_terminal()):
            yield self
            return
        from manualprop.training import progress_bar
        self.bar = progress_bar()(total=self.planned, desc=f"checking {self.name}", unit="forward", file=sys.stderr,
                                  leave=False, dynamic_ncols=True)
        self.sandbox.on_work = self._worked
        try:
            yield self
        finally:
            self.sandbox.on_work = None
            self.bar.close()

    def _say_output(self, layer, weights: int) -> None:
        """The line of a check made long by its output (newuser38 F6: a 4x30 input whose forward gave 24e6 outputs
        ran 258 s unsaid): the elements of the eval output on the load's probe input (:attr:`probe`; one forward of
        a copy, none for a layer of over :data:`COPIED_WEIGHTS` weights), when the plan times them exceeds
        :data:`LONG_CHECK` where the input's elements did not; the advice a smaller output."""
        if self.long or self.probe is None or weights > COPIED_WEIGHTS:
            return
        try:
            cp = copy.deepcopy(layer)
        except Exception:  # noqa: BLE001 - a layer that cannot be copied: not estimated
            return
        try:
            out = int(np.size(cp.forward(*[np.array(x, copy=True) for x in self.probe], training=False)))
        except Exception:  # noqa: BLE001 - its error is the check's to report
            return
        finally:
            if callable(getattr(cp, "release", None)) and type(cp).__module__.startswith("gradcheck.sandbox"):
                cp.release()
        if self.planned * out <= LONG_CHECK:
            return
        self.long = True
        print(V.wrap(f"gradcheck: a long check: {self.name}'s output on its input of {self.elements:,} elements has "
                     f"{out:,} elements, and --mode {self.args.mode} runs up to about {self.planned:,} forwards, "
                     "each computing the whole output. A smaller output finds the same bugs: fewer units, repeats or "
                     "channels (e.g. through --init), or a smaller --input-shape where the output grows with it."),
              file=sys.stderr, flush=True)

    def _worked(self, op: str, elements: int, seconds: float) -> None:  # noqa: ARG002 - Sandbox.on_work's protocol
        """:attr:`Sandbox.on_work`: the bar moved by the forwards' worth of elements sent (a stacked forward of k
        copies counts k); past the plan its total grows rather than the bar passing its end."""
        before = int(self.done)
        self.done += elements / max(1, self.elements)
        if int(self.done) > before:
            self.bar.total = max(self.bar.total, int(self.done))
            self.bar.update(int(self.done) - before)


def _run_check(args, layer, label: str, init: dict[str, Any], shape) -> int:
    """:func:`run_check` under the student's names."""
    cname = label.rpartition("::")[2]
    jac = getattr(args, "jacobian", False)
    if jac:
        _jacobian_usage(args, shape)
    reference = build_reference(args.reference, init, args.seed, layer, cname,
                                getattr(args, "reference_init", None)) if args.reference else None
    twin, twin_note = _twin(args, layer, "layer", init)
    if getattr(args, "tape", False):
        twin = StudentTape(layer)
    switches = source_switches(label, nielsen_methods((getattr(layer, "protocol", None) or {}).get("text")))
    take_constants(layer, getattr(args, "constants", None))
    _settable_mode(layer, cname, getattr(args, "training", "auto"), switches)
    jac_lines, jac_ok, jac_figs = [], True, []
    if jac and twin is None:
        raise UsageError(_no_twin_jacobian(cname, twin_note))
    requested = getattr(args, "training", "auto")

    def diagnose(lay, twin=None, reference=None):  # the layer as loaded, or its copy without an eps (no twin)
        return diagnose_layer(lay, getattr(args, "inputs", shape), mode=args.mode, method=args.method, seed=args.seed,
                              rtol=args.rtol, atol=args.atol, eps=args.eps, twin=twin, reference=reference,
                              name=cname, training=requested, values=False)  # other values: cli._pair_values
    try:
        with warnings.catch_warnings(record=True) as caught:  # float32 parameters' warning: not of a float64 copy
            diag = diagnose(layer, twin, None if _stats_reference_only(layer, label, reference) else reference)
    except BaseException:
        _float32_warnings(caught, False)
        raise
    _indices_cast(diag, getattr(args, "indices", None), shape, cname)
    if diag.error is not None and (hint := targets_shape_hint(args, shape, str(diag.error))):
        diag.error.args = (f"{diag.error} {hint}",)
    f64: dict[str, str] = {}
    if getattr(args, "load_edited", None) is not None:  # float32 code: its formulas checked in float64 (tester25s)
        diag, f64 = _in_float64(args, label, layer, diag, lambda lay: diagnose(  # --tape: the copy's own tape (M1)
            lay, StudentTape(lay) if isinstance(twin, StudentTape) else twin, reference), shape)
    _float32_warnings(caught, bool(f64))
    if not diag.passed and diag.error is None and getattr(args, "load_edited", None) is not None:
        _removed_eps(args, label, diag, diagnose, plain=twin is None and reference is None, float64=f64, layer=layer,
                     shape=shape)
    if jac and diag.error is None:  # after the check, which holds a random forward (its note says how)
        jac_lines, jac_ok, jac_figs = _jacobian(args, layer, twin, shape, cname, diag)
    _running_stats(args, layer, reference, label, shape, diag)  # newuser35 H2: after training forwards
    _random_mean(args, layer, reference, label, init, shape, diag)  # newuser37 F7: a random forward's mean
    _mini_batch_step(args, layer, label, shape, diag)  # nielsen36: after the gradients passed
    if args.twin and twin is None:  # not "add --twin": it was given
        for d in [diag, *diag.other_modes]:  # every mode checked (BatchNorm: eval and training)
            if d.result is not None:
                d.result.twin_note = twin_note
    color = use_color()
    shown = V.fmt_shape(shape) if isinstance(shape[0], int) else "; ".join(V.fmt_shape(x) for x in shape)
    modes = " and ".join(sorted(diag.modes)) or "eval"
    idx = V.parse_indices(getattr(args, "indices", None), shape)
    shown += "".join(f" (input {i}: integer indices in [0, {h}))" for i, h in sorted(idx.items()))
    # the label's path may hold a submission folder's name: its control characters escaped (redteam27 M3)
    print(V.printable(f"{label}, input shape {shown}" + (f", init {json.dumps(init)}" if init else "")
                      + f", mode {args.mode}" + (f", reference {args.reference}" if args.reference else "")
                      + f", dtype {low_dtype(args) or 'float64'}" + isolation_words(args)))
    ran = tuple(t for t in (False, True) if ("training" if t else "eval") in diag.modes) or (False,)
    same = diag.result is not None and any(  # Z13: backward differs
        n in (SAME_Y_OTHER_BACKWARD, mode_worded(SAME_Y_OTHER_BACKWARD, layer)) for n in diag.result.notes)
    lines, unchecked = protocol_lines(layer, init, ran, requested, switches, same)
    if not lines:
        why = _mode_why(layer, requested, ran)
        lines = [f"mode: {modes} (forward checked in {modes} mode){why}"]
    lines = _random_mode_lines(lines, diag) + _inplace_lines(layer) + point_headers(diag, layer) + _no_gradient_lines(diag)
    lines += config_toggle_lines((getattr(layer, "protocol", None) or {}).get("config_toggles") or [])
    lines += _init_array_lines(init, low_dtype(args) or "float64", layer) + _nonfinite_init_lines(init) + _reference_lines(diag) + _random_lines(diag, twin, args.reference)
    lines += [f"WARNING: {f.message}" for d in [diag, *diag.other_modes] for f in d.findings if f.code == "all-dropped"]
    lines += [x for x in [cache_rewritten_line(layer, V.layer_inputs(  # backward wrote into an array forward made
        getattr(args, "inputs", shape), np.random.default_rng([args.seed, 3]), cname))] if x]
    for line in lines:
        print(V.wrap(line))
    print()
    return _report(args, layer, diag, cname, color, (jac_lines, jac_ok, jac_figs), unchecked,
                   _checked_advice(args, layer, cname, init, shape, diag))


def _checked_advice(args, layer, cname: str, init, shape, diag) -> str | None:
    """A passing check's ``--reference manualprop.NAME`` advice (returned; None: as before) and its ``add --twin``
    note (set on the results), each checked first to compute the layer's function (:mod:`gradcheck._same_function`;
    outside44 M2: a tanh GELU was told manualprop.GELU, the erf form, and FAILed with it)."""
    from ._same_function import reference_advice, twin_advice
    from .sources import ADD_TWIN

    if not diag.passed or getattr(args, "tape", False):
        return None
    results = [d.result for d in [diag, *diag.other_modes] if d.result is not None]
    if any(r.twin_note == ADD_TWIN for r in results) and (note := _safely(twin_advice, layer, init, shape, args.seed)):
        for r in results:
            r.twin_note = note if r.twin_note == ADD_TWIN else r.twin_note
    hint = _reference_hint(cname)
    if "manualprop.NAME" in hint or _forward_compared(diag) or args.reference:
        return None
    spec = hint.removeprefix("--reference ")
    return _safely(reference_advice, layer, cname, spec,
                   lambda own: build_reference(spec, init, args.seed, layer, cname, own), shape, args.seed)


def _safely(advice, *args):
    """``advice(*args)``, or None (the advice left as it was) where the advice code itself raises: an advice never
    changes a verdict or its exit code (verify45a F7: a drawn input of several shapes crashed a PASS)."""
    try:
        return advice(*args)
    except Exception:  # noqa: BLE001 - advice only; the verdict stands
        return None


#: The start of :func:`gradcheck._validation.layer_params`'s warning of float32 parameters ("Linear.W is float32; it is
#: perturbed in place ..."), not shown when the check is a float64 copy's (:func:`_float32_warnings`).
FLOAT32_PERTURBED = "; it is perturbed in place"


def _float32_warnings(caught: Sequence[warnings.WarningMessage], copied: bool) -> None:
    """Show the warnings ``caught`` during the first check, as they would have been; those saying a float32 parameter
    is perturbed in place (:data:`FLOAT32_PERTURBED`) left out when the verdict is a float64 copy's (``copied``:
    :func:`_in_float64`), whose parameters are float64 (newuser36 M1: the warning contradicted the copy's note)."""
    for w in caught:
        if not (copied and FLOAT32_PERTURBED in str(w.message)):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)


def _no_gradient_lines(diag) -> list[str]:
    """The notes of every mode's result on inputs whose gradient backward returned as None
    (:data:`gradcheck.check.NO_GRADIENT`: a mask, not checked), moved to the header (once each): what was not checked
    is said before the table (newuser36 M2)."""
    mark, out = NO_GRADIENT.split("{n}")[1], []
    for d in [diag, *diag.other_modes]:
        if d.result is not None:
            out += [n for n in d.result.notes if mark in n and n not in out]
            d.result.notes = [n for n in d.result.notes if mark not in n]
    return out


def _indices_cast(diag, spec: str | None, shape, cname: str) -> None:
    """An integer Y from a forward given integer inputs by ``--indices`` (``spec``; tester20s M8: a ReLU checked with
    --indices 5 was told to remove a cast it does not have): the error says --indices made them, for an input of
    integer ids (an embedding's), and to drop it for a layer of float inputs."""
    idx = V.parse_indices(spec, shape)
    err = diag.error
    if not idx or err is None or not re.search(r"returned Y of dtype (int|uint|bool)", str(err)):
        return
    which = ", ".join(f"input {i}" for i in sorted(idx))
    new = type(err)(V.paragraph(
        f"{cname}'s forward returned integers: --indices {spec} made {which} integer indices, and forward passed "
        "them through to Y (no cast in forward is needed for that).",
        f"--indices is for an input of integer ids (an embedding lookup's); {cname} computes on floats: check it "
        "without --indices."))
    for d in [diag, *diag.other_modes]:
        d.findings = [dataclasses.replace(f, message=f.message.replace(str(err), str(new))) for f in d.findings]
        d.error = new if d.error is err else d.error


def config_toggle_lines(toggles: Sequence[str]) -> list[str]:
    """The WARNING of each attribute forward branches on that gradcheck leaves as built (``toggles``: the adapters'
    ``config_toggles``, ``"self.has_bias|True|bias:1|[false]"``, ``"self.padding|'valid'|padding:1|[\"same\"]"``,
    ``"self.keep_dim|'first'|keep_dim:1|[-1]"``): only its value's branch ran (never a silent PASS of one branch), and
    how to have the other checked with ``--init``."""
    out = []
    for t in toggles:
        name, value, args, others = (str(t).split("|", 3) + ["", "", ""])[:4]
        pairs = [a.split(":") for a in args.split(",") if ":" in a]
        if value[:1] in "'\"":  # a string (self.padding = 'valid'): its other value as compared in forward
            with contextlib.suppress(ValueError):
                others = json.loads(others)
            other = next((o for o in others if isinstance(o, (str, int, float)) and not isinstance(o, bool)), None) \
                if isinstance(others, list) else None  # numpy-ml's keep_dim: "first", or -1
            text, shown = (json.dumps(other), repr(other)) if other is not None else ('"..."', "another value")
        else:
            text = "false" if value == "True" else "true"
            shown = text.title()
        if pairs and pairs[0][1] == "1":
            how = f"check the other with --init '{{\"{pairs[0][0]}\": {text}}}'"
        elif pairs:
            how = f"check the other with --init, giving {pairs[0][0]} a value that makes {name} {shown}"
        else:
            how = (f"{name} is a constant of __init__: make it an argument (e.g. {name} = "
                   f"{name.rpartition('.')[2].removeprefix('has_')}) to check the other with --init")
        out.append(f"WARNING: forward branches on {name}, the layer's configuration as built, which gradcheck does "
                   f"not switch: only the branch of {name} = {value} was checked, a bug in the other would pass "
                   f"unseen; {how}")
    return out


def _inplace_lines(layer) -> list[str]:
    """The NOTE of a forward that wrote into its input where its switch asked for it (``inplace=True``, PyTorch's
    ``nn.ReLU(inplace=True)``: :func:`gradcheck.sources.inplace_asked`, tester15b H6): what it overwrites, and that
    each call got a fresh copy of X, so the numbers are the branch's own."""
    sandbox = layer.__dict__.get("_sandbox") if hasattr(layer, "__dict__") else None
    asked = dict(getattr(sandbox, "__dict__", {}).get("inplace_asked") or {})
    return [f"NOTE: with {value} forward overwrites the caller's {x} in place, as {value} asks (PyTorch's "
            f"nn.ReLU(inplace=True)): that branch was checked with a fresh copy of {x} for every call, so no "
            f"perturbation was corrupted; a caller that still needs {x} must pass a copy"
            for value, x in asked.items()]


#: the words of a forward's error about an array's shape (an error of t's shape among them)
SHAPE_WORDS = ("shape", "broadcast", "aligned", "mismatch in its core dimension", "cannot reshape", "dimension",
               "index", "out of bounds")


def targets_shape_hint(args, shape, text: str) -> str:
    """The sentence added to a model's forward error about a shape (``text``) when ``--targets`` drew t with the
    default shape (tester25s M6: Deep Learning from Scratch 2's Rnnlm takes tokens xs (N, T) and ts (N, T); gradcheck
    drew t (N,) and the error, ``ts.reshape(N * T)``, read as the model's): the shape gradcheck drew and how to give
    another (``--targets labels:K@N,T``); "" when --targets gave a shape, there is none, or the error is no shape's."""
    spec = str(getattr(args, "targets", None) or "")
    if not spec or "@" in spec or getattr(args, "loss", False) or not any(w in text for w in SHAPE_WORDS):
        return ""
    kind, k = parse_kind(spec, TARGET_KINDS, "--targets")
    first = shape if isinstance(shape[0], int) else shape[0]
    drew = (first[0],) + ((k,) if kind == "onehot" else ())
    return (f"gradcheck drew the targets t (--targets {spec}) with shape {V.fmt_shape(drew)}, one per example of the "
            f"batch: if forward expects t of another shape (a language model's tokens (N, T): t of shape (N, T)), "
            f"give it after '@', e.g. --targets {spec}@{','.join(map(str, first))} (a one-hot's class axis is added "
            "to it); if that shape is right, the error is in forward.")


def _in_float64(args, label: str, layer, diag, check, shape=None):
    """The diagnosis of float32 code: ``check`` (the same diagnosis) of a copy of its files with the dtypes they
    declare written float64 (:func:`gradcheck._float64_copy.float64_texts`), with the "float64-copy" note first, when
    the code is float32 throughout as given: ``layer``'s parameters float32 or float16
    (:func:`~gradcheck._float64_copy.low_params`; Deep Learning from Scratch 2's models build them with
    ``.astype('f')``) or ``--dtype float32`` (:func:`low_dtype`: its inputs and ``--init`` weights made float32), and
    its forward returning float32 (:func:`~gradcheck._float64_copy.low_y`) or its check failing; with no float32
    dtype declared, the copy is its files as they are, given float64 ``--init`` weights, when it was given low
    ones. When that copy still returns float32, ``diag`` NOT CHECKED ("float32-kept"). Decided by what the code does with
    the dtypes it was given, not by how a conversion is spelled (review28g H2: ``.astype(np.dtype("float32"))``,
    ``np.add(..., dtype=np.float32)`` and a float32 buffer written with ``out[...] = Y`` PASSed on the copy): a layer
    given float64 (or no) parameters and a float64 (or integer) input that returns a lower precision (a float32 Y or
    gradient, or float32's grid inside forward) downcasts, which the copy would not show: ``diag`` as it is, its FAIL
    naming where the source makes that dtype (:func:`_downcast_where`). ``diag`` as it is too when the copy cannot be
    written or run (said: :func:`_copy_failed`). When the copy passes, the original's own float32 backward is compared
    with the copy's on the same inputs (of ``shape``) and parameters (:func:`_own_float32`): a gradient that differs
    beyond float32's round-off is a FAIL. Returns ``(diagnosis, {file name: float64 source})``, the second empty when
    the diagnosis is not the copy's."""
    from ._float64_copy import float64_texts, low_params, low_y, reached_places, where_words
    path, _, cls = label.rpartition("::")
    files = check_files(args, path)  # (--isolation namespaces: its own folder, no links; fixr27)
    given = low_dtype(args)  # --dtype float32: inputs and --init weights drawn float32, the code run as written
    if low_params(layer) is None and given is None:  # float64 (or no) parameters and input: a downcast
        _downcast_where(diag, path, cls, files, layer)
        return diag, {}
    low = low_y(diag) or ((low_params(layer) or given) if diag.error is None and (
        given or not diag.passed or getattr(args, "tape", False)) else None)  # --dtype: its own float32 run with
    # float32 X, even when float64 X passed; --tape: manual~tape of float32 code is float32's round-off (newuser36 M1)
    if low is None:
        return diag, {}
    texts, places = float64_texts(path, files, cls, half=low == "float16")  # float16 code: its float16 too
    if not texts and (given is None or low_params(layer) is None and not _init_lists(args) and not diag.passed):
        return diag, {}  # no dtype to rewrite, no low weights or --init arrays to give, and a FAIL: the copy would be
        # the layer itself (a float64 layer's bug under --dtype float32); one that passed (no weights: an activation)
        # still has its own float32 run compared, its X float32 (a branch on X.dtype, session 31)
    places = reached_places(path, cls, files, places) if texts else []  # its own, not another class's (review29)
    if texts and not places:  # nothing the class runs is written float64: its verdict as alone in its file,
        if given is None:
            return diag, {}
        texts = {}  # or, under --dtype, its files as they are given float64 (its own float32 run compared)
    places = places or [_as_given(given)]  # its files as they are
    try:
        with args.load_edited(texts) as edited:
            other = check(edited)
            own = _own_float32(args, layer, edited, other, cls, low, shape, seen := {})
    except Exception as exc:  # noqa: BLE001 - the copy is a probe: if it cannot run, the diagnosis stays, said so
        _copy_failed(diag, f"{cls}'s float32 code on a float64 copy of its files", texts, exc)
        return diag, {}
    fields = {"cls": cls, "where": where_words(places), **_precision(low), **_computes(cls, low, where_words(places), layer, seen)}
    if low_y(other) is not None:
        diag.findings = [f for f in diag.findings if f.code != "float32"] + [_find("float32-kept", "Y", **fields)]
        diag.error = NotCheckedError(f"{cls}'s forward returns {low} (see the diagnosis)")
        return diag, {}
    other.findings.insert(0, _find("float64-copy", None, severity="info", own=own[0], **fields))
    other.findings += own[1]
    return other, texts


#: The findings of a lower precision than float64 coming out of code given float64 (:func:`_downcast_where`).
_LOW_FINDINGS = ("float32", "float32-values", "float32-inside", "float16-inside")


def _downcast_where(diag, path: str, cls: str, files, layer) -> None:
    """Where the source of a layer given float64 (or no) parameters and a float64 input makes the lower precision
    its check found (a finding of :data:`_LOW_FINDINGS`), added to that finding's words (review28g H2: the FAIL
    stands, naming what came back in lower precision and the line): the conversions
    (:func:`gradcheck._float64_copy.cast_lines`), else the float32 dtypes it declares
    (:func:`~gradcheck._float64_copy.float64_texts`: a buffer ``np.empty(..., dtype='f')`` written with ``out[...] =
    Y``, a ``dtype=np.float32`` given to a ufunc; those in its methods other than ``__init__`` first) after the
    conversions whose dtype reading cannot tell
    (``Y.astype(self.cfg['dtype'])``); nothing when the source tells none (a float32 array made elsewhere). A layer
    with float parameters making arrays with ``dtype='f'`` is told that code float32 throughout, as Deep Learning from
    Scratch 2's models build it (``.astype('f')``), is checked on a float64 copy. When the dtype of the lines named is
    read as float32 (or float16), the finding ends: if ``cls`` is meant to run in it, check it with ``--dtype`` it
    (:func:`low_dtype`: its inputs and ``--init`` weights then made in it)."""
    from ._float64_copy import cast_lines, float64_texts, where_words
    from ._switch_reach import file_classes
    from .diagnose import _dlfs_f

    ds = [d for d in [diag, *getattr(diag, "other_modes", [])]
          if any(f.code in _LOW_FINDINGS and f.severity == "error" for f in d.findings)]
    if not ds:
        return
    low = "float16" if any(f.code == "float16-inside" or f.code == "float32" and "float16" in f.message
                           for d in ds for f in d.findings) else "float32"  # a float16 Y: tester17's float16 words
    unsure: list[str] = []
    lines = cast_lines(path, cls, files, unsure)
    declared = [] if lines else float64_texts(path, files, cls, half=low == "float16")[1]
    run = {f"{os.path.basename(path)} line {i}:" for c in file_classes(path, cls)[1] for f in c.body  # forward's first
           if isinstance(f, ast.FunctionDef) and f.name != "__init__" for i in range(f.lineno, (f.end_lineno or 0) + 1)}
    declared.sort(key=lambda w: w.partition(":")[0] + ":" not in run)
    where = where_words(lines or unsure + declared)
    params = getattr(layer, "params", None)
    floats = isinstance(params, Mapping) and any(np.asarray(v).dtype.kind == "f" for v in params.values())
    given = "float64 parameters" if floats else "a float64 input"
    said = f"; {cls} was given {given}, and its source makes the lower precision at {where}" if where else ""
    said += ("; code that is float32 throughout, built with float32 parameters (as Deep Learning from Scratch 2's "
             "models build their layers, .astype('f')), is checked on a float64 copy of its files"
             if floats and declared and _dlfs_f(np.float32, layer) else "")
    said += (f"; if {cls} is meant to run in {low}, check it with --dtype {low} (its inputs and --init weights then "
             f"made {low})" if (lines or declared) and not unsure else "")  # a dtype read, not a cfg['dtype']
    for d in ds:
        d.findings = [dataclasses.replace(f, message=f.message.rstrip(". ") + said)
                      if f.code in _LOW_FINDINGS and f.severity == "error" else f for f in d.findings]


def _as_given(low: str) -> str:
    """Where a float64 copy with no float32 dtype declared differs from the code: its files as they are, given float64
    where ``--dtype low`` gave its inputs and ``--init`` arrays (the "float64-copy" note's place)."""
    declared = "float16 or float32" if low == "float16" else "float32"
    return f"no {declared} dtype declared; the copy given float64 in place of --dtype {low}'s inputs and --init weights"


def _computes(cls: str, low: str, where: str, layer: Any = None, seen: Mapping[str, str] | None = None) -> dict[str, str]:
    """The "float64-copy" note's fields that say what ran in ``low``: ``computes`` (the layer computes in ``low``, or,
    where its own run on ``low`` inputs returned float64 (``seen["y_dtype"]``, :func:`_own_float32`), that its float64
    weights promote its arithmetic to float64, numpy's type promotion, so only its inputs were ``low``; newuser42 F2:
    "Dense computes in float16" was said of a float16 X @ a float64 W, which is float64), ``what`` (its forward, or
    its inputs, which cannot hold the step) and ``ints`` (the integers ``low`` cannot hold: above 2**24 in float32,
    2**11 in float16); ``where`` the note's place words (:func:`gradcheck._float64_copy.where_words`)."""
    ints = ("integers above 2048 that float16 cannot hold (float32 holds them to 2**24)" if low == "float16" else
            "integer ids above 2**24 that float32 cannot hold")
    if (seen or {}).get("y_dtype") != "float64":
        return {"computes": f"{cls} computes in {low} ({where})", "what": "forward", "ints": ints}
    params = getattr(layer, "params", None)
    why = ("its float64 weights promote the arithmetic (numpy's type promotion)" if isinstance(params, Mapping) and any(
        isinstance(v, np.ndarray) and v.dtype == np.float64 for v in params.values()) else "it computes in float64")
    return {"computes": f"{cls}'s output is float64 for {low} inputs: {why}, so only its inputs were {low} "
                        f"({where})", "what": "input", "ints": ints}


def _init_lists(args) -> bool:
    """Whether ``--init`` holds lists of numbers that ``--dtype`` makes arrays in its dtype: a class's weights
    (:func:`gradcheck._adapters.init_arrays`) or a CS231n pair's state in a ``*_param`` dict
    (:class:`gradcheck._adapters.FunctionPair`, ``bn_param['running_mean']``), which the float64 copy is given in
    float64 (session 30: a pair computing into a buffer of its state's dtype was float32 code, its FAIL unavoidable)."""
    from ._adapters import _numbers, init_arrays

    init = V.parse_init_json(getattr(args, "init", None)) or {}
    return bool(init_arrays(init)[1]) or any(isinstance(v, dict) and any(_numbers(e) for e in v.values())
                                             for v in init.values())


def low_dtype(args) -> str | None:
    """``gradcheck check --dtype``'s float32 or float16 (the dtype the checked code is given its inputs and
    ``--init`` weights in, :func:`gradcheck._adapters.init_arrays`), or None for float64 (the default)."""
    dtype = getattr(args, "dtype", None) or "float64"
    return None if dtype == "float64" else dtype


def _copy_failed(diag, what: str, where, exc: BaseException) -> None:
    """The note on ``diag`` that an edited copy of the checked files (``where``, its file names or places) could not be
    loaded or checked, with ``exc`` (review28g M1: a package's relative import raised in the float64 copy, which was
    swallowed, and the original's "wrong dtype of Y" stood with no word of the copy)."""
    names = ", ".join(sorted(where)) if isinstance(where, dict) else str(where)
    why = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}".rstrip(": ")
    diag.findings.append(_find("copy-failed", what=what, where=names, why=why, severity="info"))


def _own_float32(args, layer, edited, other, cls: str, low: str, shape, seen: dict | None = None) -> tuple[str, list]:
    """The float32 ``layer``'s own backward against its float64 copy's (``edited``, whose diagnosis is ``other``) on
    the same inputs and parameters (:func:`gradcheck._float64_copy.own_gradients`; redteam28 F5: a backward branch
    taken only in float32, ``if self.W.itemsize == 4``, never ran in the copy), in every mode the check runs backward
    in (:func:`gradcheck.config.training_modes`; session 29: the copy's first alone was, so a float32 branch in
    training mode alone passed): ``(the words the "float64-copy" note ends with, the "float32-own" error findings of
    the gradients that differ beyond float32's round-off, each naming its mode when there are several)``; ``("", [])``
    when the copy's check did not pass (its FAIL is the verdict). When the two cannot be compared the copy's PASS is
    not the verdict (review29 F32_FWD_DIFFERS): a forward that differs from the copy's, the same at each run, is a
    "float32-forward" FAIL (the copy does not stand for the code); a random forward that cannot be run from the copy's
    draws, other parameters, or a run that raised is NOT CHECKED ("float32-not-compared", exit 3, set on
    ``other``). ``seen`` (a dict) receives ``y_dtype``, the dtype of the original's output on its own inputs."""
    from ._float64_copy import low_tolerance, own_differences, own_gradients

    if not other.passed:
        return "", []
    tol, found = low_tolerance(low), []
    modes = training_modes(layer, getattr(args, "training", "auto"))  # both where the check ran backward in both
    for training in modes:
        why: dict[str, Any] = {}
        try:
            got = own_gradients(layer, edited, _probe_inputs(getattr(args, "inputs", shape), args.seed, cls,
                                                             low_dtype(args)),
                                training, cls, tol, args.seed, why)
        except Exception as exc:  # noqa: BLE001 - the original's own run is a probe: what stopped it is said
            got, why = None, {"kind": "raised", "exc": exc}
        if seen is not None and "y_dtype" in why:
            seen["y_dtype"] = why["y_dtype"]
        if got is None:
            return "", _not_compared(other, why, cls, low, tol)
        where = f"in {mode_label(layer, bool(training))} mode, " if len(modes) > 1 else ""
        found += [_find("float32-own", V.grad_name(k.lstrip("@")), cls=cls, dtype=low, rel=rel, tol=tol,
                        how=where + (f"{c:.3g} times" if c is not None else "other values than"))
                  for k, rel, c in own_differences(*got, low)]
    if found:
        return "", found
    return (f". Its own {low} backward, run on the same inputs and parameters, gives the copy's gradients within "
            f"{low}'s round-off (tolerance {tol:.1e})", [])


def _not_compared(other, why: dict[str, Any], cls: str, low: str, tol: float) -> list:
    """The findings of :func:`_own_float32` when the float32 code's own backward could not be compared with its
    float64 copy's (``why`` from :func:`gradcheck._float64_copy.own_gradients`): a forward that differs from the
    copy's, the same at each run, a "float32-forward" FAIL; else "float32-not-compared", NOT CHECKED (set on
    ``other``), saying why and what to do (review29 F32_FWD_DIFFERS)."""
    from ._float64_copy import own_differences

    if why.get("kind") == "forward" and other.held == "held-mask":  # fix_mask: each its own mask
        why["kind"] = "mask"
    if why.get("kind") == "forward":
        (_, rel, c), = own_differences({"Y": why["Y"][0]}, {"Y": why["Y"][1]}, low) or [("Y", 0.0, None)]
        return [_find("float32-forward", "Y", cls=cls, dtype=low, out="Y", rel=rel, tol=tol,
                      how=f"{c:.6g} times" if c is not None else "other values than")]
    words = {"params": f"its parameters are not the copy's (other names or shapes), so {cls}'s own {low} "
                       "backward cannot be run with the copy's values",
             "random": f"its forward gives another output each time it is run from the same random draws (a "
                       "generator made inside forward, or one gradcheck cannot set back, e.g. in a sandbox), so "
                       f"{cls}'s own {low} backward cannot be run at the copy's point",
             "mask": f"its forward reuses a mask it holds (fix_mask), drawn apart in {cls} and in the copy, so "
                     f"{cls}'s own {low} backward cannot be run at the copy's point",
             "raised": f"its own {low} forward or backward raised {type(why.get('exc')).__name__}: "
                       f"{str(why.get('exc')).strip()[:200]}"}[why.get("kind", "params")]
    fix = ("compute the same formula whatever the dtype, with randomness drawn from a generator the layer stores "
           "or from numpy's global one" if why.get("kind") in ("random", "mask") else
           f"check {cls} with its dtypes written float64 (dtype='d') yourself")
    other.error = NotCheckedError(f"{cls}'s own {low} code could not be compared with its float64 copy (see the "
                                  "diagnosis)")
    return [_find("float32-not-compared", None, cls=cls, dtype=low, why=words, fix=fix)]


def cache_rewritten_line(layer, inputs: Sequence[np.ndarray], loss: bool = False) -> str | None:
    """The note of a (sandboxed) layer or loss whose backward wrote into an array its forward made and cached
    (:attr:`gradcheck.sandbox._Remote.cache_rewritten`; Deep Learning from Scratch 2's TimeSoftmaxWithLoss,
    ``dx = ys; dx[np.arange(N * T), ts] -= 1``), which was refused (exit 3) until session 26: harmless where every
    backward follows its own forward, as the check calls them and a training loop does, so the verdict stands; whether
    a second backward after one forward gives another answer is measured here (one forward, two backwards on
    ``inputs``: y_true, y_pred for a ``loss``). None when backward wrote into no such array."""
    said = getattr(layer, "cache_rewritten", None)
    if not said:
        return None
    where = said.partition(" in place;")[0]
    try:
        d = twice_difference(*backward_twice(layer, inputs, loss=loss))
    except Exception:  # noqa: BLE001 - a second backward that raises: said so
        d = None
    twice = ("" if d is None else  # a second backward that raises (a CS231n pair's cache is used once): not said
             f"; a second backward after the same forward gives another answer (max difference {d:.3g})" if d else
             "; a second backward after the same forward gives the same answer here")
    return "note: " + _find("cache-rewritten", where=where, twice=twice, severity="info").sentence()


def _removed_eps(args, label: str, diag, check, plain: bool = False, float64: dict[str, str] | None = None,
                 layer=None, shape=None) -> None:
    """A failing check of a forward with ``log(... + eps)`` (tester12 M3): ``check`` (the same diagnosis) of its
    copy without the eps; when that passes, the diagnosis names the eps (:func:`gradcheck._log_eps.name_removed_eps`;
    ``plain``, a check without twin or reference: a float guard's copy's PASS is kept, with a note);
    when it fails too and names a bug the original does not, that names it (:func:`~gradcheck._log_eps.name_through_eps_free`).
    ``float64``: the float64 copy's sources when ``diag`` is its diagnosis (:func:`_in_float64`), the eps then taken
    out of that copy (a float32 copy would only say float32 again). ``layer`` (checked on inputs of ``shape``; for
    float32 code its float64 copy with the eps) and the copy without it are run at the same point (:func:`_eps_moved`):
    a backward that moves more than the eps can without the eps is not read as the eps's (redteam28 F7), nor is a
    copy that could not be run there (review29 EPS_FWD_DIFFERS: their gradients are compared even where the two
    forwards differ); a forward the eps moves, as a textbook model's log(y + 1e-7) does at a saturated prediction,
    with backward the same in both, keeps session 25's PASS with the note (tester25s M5). Float32
    code read so has its own float32 backward compared with its float64 copy's (:func:`_own_float32`), which the
    copy's FAIL, the eps's, had left unrun (review29: a float32-only factor 2 beside a log's eps PASSed)."""
    from ._float64_copy import float64_text, low_params
    from ._log_eps import eps_free_texts, name_removed_eps, name_through_eps_free
    path = label.rpartition("::")[0]
    texts, consts, _ = eps_free_texts(path, check_files(args, path))
    low = low_params(layer) or low_dtype(args) or "float32"  # the float32 (or float16) code's own dtype
    if texts and float64:
        texts = {**float64, **{k: (float64_text(t, low == "float16") or (t,))[0] for k, t in texts.items()}}
    where = ", ".join(sorted(texts))
    if not texts:
        return
    try:
        with args.load_edited(texts) as edited:
            other, own = check(edited), ("", [])
            if float64 and other.passed:  # float32 code: its float64 copy as written beside the one without the eps
                with args.load_edited(float64) as base:
                    moved, _ = _eps_moved(args, base, edited, other, shape)
                    own = _own_float32(args, layer, base, other, label.rpartition("::")[2], low,
                                       shape)  # the float32 code's own backward
            else:
                moved, _ = _eps_moved(args, layer, edited, other, shape)
    except Exception as exc:  # noqa: BLE001 - the copy is a probe: if it cannot run, the diagnosis stays, said so
        _copy_failed(diag, "the forward without its log's eps", texts, exc)
        return
    note = [dataclasses.replace(f, message=f.message + own[0]) for f in diag.findings if f.code == "float64-copy"]
    if name_removed_eps(diag, consts, other, plain, where, moved):  # a backward the eps explains (F7)
        # its own float32 backward, which the float64 copy's FAIL (the eps's) had left unrun, and the copy's note
        diag.findings[:] = [*note, *(f for f in diag.findings if f.code != "float64-copy"), *own[1]]
    else:
        name_through_eps_free(diag, consts, other)


def _eps_moved(args, layer, edited, other, shape) -> tuple[float | None, bool]:
    """``(moved, forward moved)``: how far backward moves between ``layer`` as written and its copy without the eps
    (``edited``, whose diagnosis is ``other``) run at the same point, from the same draws
    (:func:`gradcheck._float64_copy.own_gradients`, with the check's inputs of ``shape``;
    :func:`gradcheck._log_eps.backward_moved`; redteam28 F7), None when they cannot be run there (other parameters, a
    random forward, it raised); and whether forward itself moves by more than 1e-3 relative (review29
    EPS_FWD_DIFFERS: no float guard). Only a passing copy is run."""
    from ._float64_copy import own_gradients
    from ._log_eps import backward_moved

    if not other.passed:
        return None, False
    cname, why = getattr(other, "name", None) or "layer", {}
    try:
        got = own_gradients(layer, edited, _probe_inputs(getattr(args, "inputs", shape), args.seed, cname),
                            other.training, cname, 1e-3, args.seed, why)
    except Exception:  # noqa: BLE001 - a probe: the two could not be run at the same point
        return None, False
    got = got or why.get("gradients")
    return (None if got is None else backward_moved(*got)), why.get("kind") is not None


#: The :class:`gradcheck.diagnose.Probe` name of the running statistics' comparison (:func:`_running_stats`).
RUNNING_PROBE = "running statistics"


def _source_of(label: str) -> str:
    """The text of the checked file of ``label`` (``path::NAME``), "" when it cannot be read."""
    try:
        with open(label.rpartition("::")[0], encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _stats_reference_only(layer, label: str, reference=None) -> bool:
    """Whether ``--reference`` serves a CS231n function pair's running statistics alone: the pair's forward writes
    them into a dict it is given (:func:`gradcheck._running_stats.pair_buffers`, ``bn_param['running_mean']``), or
    the ``reference`` holds running statistics that the pair never stores there (:func:`gradcheck._running_stats.
    never_stored`: compared, they FAIL as not updated; verify37 F8: a usage error about parameters before), and its
    gamma and beta are inputs where the reference holds parameters, so its gradients and forward values are not
    compared with the reference (newuser35 H2: a usage error before), its statistics are (:func:`_running_stats`)."""
    from ._running_stats import never_stored, pair_buffers

    info = getattr(layer, "protocol", None) or {}
    return info.get("protocol") == "cs231n" and bool(pair_buffers(_source_of(label), info) or (
        reference is not None and never_stored(layer, reference)))


def _running_stats(args, layer, reference, label: str, shape, diag) -> None:
    """A passing layer whose training forward writes running statistics (``info['buffers']``, e.g. BatchNorm's
    running_mean and running_var): with ``--reference``, those statistics after a training forward and the eval
    output after it compared with the reference's fed the same batch (:func:`gradcheck._running_stats.
    running_stats_finding`: an error finding FAILs the check); a probe ``running statistics`` says whether they were
    compared (passed True) or not (None, its detail the line the verdict prints: newuser35 H2, the eval forward was
    compared only at the initial statistics, where a swapped momentum gives the same output)."""
    from ._running_stats import (
        UNCHECKED,
        found_by_update,
        pair_running_stats_finding,
        running_stats_finding,
        unchecked_buffers_line,
    )
    from .diagnose import Probe

    cname, source = label.rpartition("::")[2], _source_of(label)
    info = getattr(layer, "protocol", None) or {}
    line = unchecked_buffers_line(cname, info, args.reference, source)
    if not line and reference is None and diag.passed and "training" in diag.modes:  # run_mu: by its update
        line = unchecked_buffers_line(cname, info, None, source, found_by_update(layer, cname, shape, args.seed))
    if not diag.passed or not line and reference is None:  # (with a reference: statistics never written, verify37 F2)
        return
    found, notes = (None, [])
    pair = _stats_reference_only(layer, label, reference)
    if reference is not None and (pair or "training" in diag.modes):
        try:
            found, notes = (pair_running_stats_finding(layer, reference, cname, shape, args.seed, args.reference,
                                                       source) if pair else
                            running_stats_finding(layer, reference, cname, shape, args.seed, args.reference))
        except Exception as exc:  # noqa: BLE001 - a probe (the layer's raise too): not compared, said so
            notes = [f"running statistics: not compared with the reference ({type(exc).__name__}: {exc})"]
    line = line or next((n for n in notes if n.startswith(UNCHECKED)), "")  # (verify47a F11: rm, rv never said)
    diag.findings += [Finding("running-stats-note", n, severity="info") for n in notes if n != line]
    if found is not None:
        diag.findings.append(found)
    compared = found is not None or any(n.endswith("match " + f"{args.reference}'s") for n in notes)
    if line or compared:
        diag.probes.append(Probe(RUNNING_PROBE, (found is None) if compared else None, "" if compared else line))


def _random_mean(args, layer, reference, label: str, init: dict[str, Any], shape, diag) -> None:
    """A passing layer whose training forward is random, so that ``--reference`` was not compared there
    (:data:`~gradcheck.diagnose.RANDOM_REFERENCE`): its training output's mean compared with the reference's
    (:func:`gradcheck.diagnose.random_mean_finding`, a ``random-mean`` error Finding FAILs the check), as built
    and again with both built at the other value of each constructor argument that can hide a wrong scale
    (:func:`gradcheck.diagnose.symmetric_args`: 1/p = 1/(1-p) at p = 0.5; newuser37 F7: a dropout scaling its kept
    entries by 1/p PASSed with --training --reference manualprop.Dropout)."""
    from .sources import built_with, pair_training, symmetric_args

    trains = pair_training(layer)  # a CS231n pair in dropout_param's 'train' (verify37 F4: compared element-wise)
    modes = [d for d in [diag, *diag.other_modes] if d.result is not None and (d.training is True or trains)]
    if reference is None or not diag.passed or not isinstance(shape[0], int) or not any(
            RANDOM_REFERENCE in d.result.notes for d in modes):
        return
    cname = label.rpartition("::")[2]
    own = json.loads(args.reference_init) if getattr(args, "reference_init", None) else None

    alike = own is not None or _built_alike(reference, layer, init, cname)

    def pairs():
        yield layer, reference, "", alike
        for key, _, other in symmetric_args(layer):
            try:
                lay = built_with(layer, key, other, _probe_inputs(shape, args.seed, cname))
            except Exception:  # noqa: BLE001 - a constructor refusing the value: not compared there
                continue
            try:  # the reference at that value too, else as built: an unbiased random forward's mean is 1 at any
                try:  # value (verify37 F1: keep_prob, which manualprop.Dropout does not take, was never compared)
                    ref = build_reference(args.reference, {**init, key: other}, args.seed, lay, cname,
                                          json.dumps({**own, key: other}) if own is not None else None)
                except Exception:  # noqa: BLE001 - the reference has no such argument
                    ref = None
                rebuilt = ref is not None and getattr(ref, key, other) == other
                yield lay, ref if rebuilt else reference, f" at {key}={other:g}", alike and rebuilt
            finally:
                if lay is not layer and callable(getattr(lay, "release", None)):
                    lay.release()
        yield from _pair_at_other_rate(args, layer, init, own, cname, shape)

    if (found := random_mean_finding(pairs(), cname, shape, args.seed, args.reference, own is not None)) is not None:
        diag.findings.append(found)


def _built_alike(reference: Any, layer: Any, init: dict[str, Any], cname: str) -> bool:
    """Whether ``--reference`` was built from the checked layer's own settings (:func:`build_reference` without
    ``--reference-init``): each argument of its constructor (``rng`` and ``name`` aside) found in ``--init`` or as the
    layer's attribute, by its name or a synonym, none left at its default (a ``keep_prob`` layer's reference is built
    at its default ``p``, another rate). Then its training output's kept scale must be the layer's
    (:func:`gradcheck.diagnose.scale_difference`, redteam39 F3)."""
    import inspect

    try:
        got = constructor_kwargs(type(reference), layer, init, cname, what="reference")
        ps = inspect.signature(type(reference)).parameters.values()
    except Exception:  # noqa: BLE001 - not known: the means alone are compared
        return False
    return all(p.name in got for p in ps if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               and p.name not in ("rng", "name"))


def _pair_at_other_rate(args, layer, init: dict[str, Any], own: dict | None, cname: str, shape):
    """:func:`_random_mean`'s comparisons of a CS231n function pair at a probability of its dict arguments at 0.5
    (:func:`gradcheck.sources.pair_probabilities`: ``dropout_param['p']``) set to 0.3 for one forward, with the
    reference built at the matching rate (verify37 F4): CS231n's p is the probability of KEEPING a unit (assignment 2:
    ``mask = (np.random.rand(*x.shape) < p) / p``), manualprop's and PyTorch's that of dropping one, so the reference's
    drop rate is the one of 0.3 and 0.7 nearer the share of entries the pair's training forward drops. The pair's dicts
    are put back after; nothing is yielded for a reference that takes no ``p``."""
    from .diagnose import adapter_call
    from .sources import Call, pair_probabilities

    for d, key, _, other in pair_probabilities(layer):
        try:
            adapter_call(layer, "set_pair_keywords", {d: {key: other}})
            ones = np.ones((max(400, int(shape[0])), *shape[1:]))
            dropped = float(np.mean(np.asarray(Call(layer, cname, [ones], V.input_names(layer, 1), {}, True).forward(
                ones.copy())) == 0))
            rate = min((other, 1 - other), key=lambda r: abs(r - dropped))
            ref = build_reference(args.reference, init, args.seed, layer, cname, json.dumps({**(own or {}), "p": rate}))
            yield layer, ref, f" at {d}['{key}']={other:g} ({args.reference} built with p={rate:g}, the rate it drops)"
        except Exception:  # noqa: BLE001 - a pair or reference that cannot run there: not compared, no claim
            continue
        finally:
            adapter_call(layer, "set_pair_keywords", None)


#: the probe of :func:`_mini_batch_step`: its detail the line a Nielsen network's PASS prints of update_mini_batch
STEP_PROBE = "update_mini_batch"


def _mini_batch_step(args, layer, label: str, shape, diag) -> None:
    """A Nielsen network whose gradients passed: one ``update_mini_batch`` (in the sandbox, on a copy) compared with
    the step of its own gradients (:func:`gradcheck._nielsen_step.step_finding`, nielsen34 F6: a missing average, a
    flipped sign or an L2 decay of the biases PASSed unsaid): a ``mini-batch-step`` error Finding FAILs the check; a
    probe :data:`STEP_PROBE` carries what the PASS says of the step (passed True: compared; None: not, and why)."""
    from ._nielsen_step import step_finding
    from .diagnose import Probe

    t = (getattr(layer, "__dict__", {}).get("_targets") or (None,))[0]
    if not diag.passed or nielsen_methods((getattr(layer, "protocol", None) or {}).get("text")) is None or \
            t is None or not isinstance(shape[0], int) or len(shape) != 2:
        return
    cname = label.rpartition("::")[2]
    X = np.random.default_rng([args.seed, 36]).standard_normal(shape)
    found, line = step_finding(layer, X, np.asarray(t, dtype=np.float64), cname)
    if found is not None:
        diag.findings.append(found)
    else:
        diag.probes.append(Probe(STEP_PROBE, None if "not checked" in line else True, line))


def _pass_lines(args, layer, diag, cname: str, color: bool, advice: str | None) -> None:
    """The lines under a layer's PASS: the forward values it did not check (``advice``: the ``--reference`` advice
    checked first, :func:`_checked_advice`), the running statistics it did not (newuser35 H2), a backward that calls
    forward (newuser44 F2)."""
    info, res = getattr(layer, "protocol", None) or {}, diag.result
    if not _forward_compared(diag):  # backward against the layer's own forward alone
        print(V.wrap(_forward_unchecked(cname, info, res, args.reference, diag, advice)))
    if (rs := _running_unchecked(diag)) is not None:
        print(colorize(V.wrap(rs.detail), color))
    if note := _forward_in_backward(args, layer, res, cname):
        print(V.wrap(note))


def _report(args, layer, diag, cname: str, color: bool, jacobian, unchecked, advice: str | None = None) -> int:
    """The table, notes, plots, JSON and verdict of :func:`run_check` (``advice``: :func:`_pass_lines`'); returns the
    exit code."""
    jac_lines, jac_ok, jac_figs = jacobian
    res = diag.result
    if res is not None:
        print(colorize(res.table(flagged=diag.flagged()), color))
    if any(p.passed is False for p in diag.probes):
        print()  # the failed probes' line stands apart from the table
    for line in diag.notes() + jac_lines:
        print(V.wrap(line))
    _save(args, lambda: ([] if res is None else _figures(res, cname, [
        t for t in res.failing_tensors if t in res.gradients.get("numerical", {})]))
        + [(lambda f=f: f, name) for f, name in jac_figs],
        lambda: {**diag.to_dict(), "protocol": getattr(layer, "protocol", None)})
    errs = [f for f in diag.findings if f.severity == "error"]
    if diag.error is not None and not any(f.code not in ("student-code", "wrong-shape", "non-finite") for f in errs):
        raise diag.error
    if diag.passed and not jac_ok:
        print(colorize(f"\nFAIL: {cname}: the tape's Jacobian differs from the numerical one (see above).", color))
        return EXIT_MISMATCH
    info = getattr(layer, "protocol", None) or {}
    if _passed_but_unpaired(diag) and (fails := _unpaired(info, cname)):
        print("\n" + "\n".join(colorize(V.wrap(line), color) for line in fails))
        return EXIT_STUDENT if all(line.startswith("NOT CHECKED") for line in fails) else EXIT_MISMATCH
    if _passed_but_unpaired(diag) and (undecided := _undecided(info, cname)):  # H4: neither PASS nor FAIL
        print(colorize("\n" + V.wrap(undecided), color))
        return EXIT_STUDENT
    if diag.passed and info.get("unset_switches"):  # F1: a branch no check ran; never a PASS
        print(colorize("\n" + V.wrap(unset_verdict(cname, info["unset_switches"], diag)), color))
        return EXIT_STUDENT
    if _passed_but_unpaired(diag) and info.get("not_plain_step"):  # an optimizer inside backward: dX alone
        print(colorize("\n" + V.wrap(_not_plain_line(res, cname, info["not_plain_step"])), color))
        return EXIT_STUDENT
    if (code := _pass_verdict(diag, cname, unchecked, color, _zero_on_path(info, res))) is not None:
        if code == EXIT_PASS:
            _pass_lines(args, layer, diag, cname, color, advice)
        return code
    if res is not None and res.failing_tensors:
        print(colorize(f"\nFAIL: {diag.name}: {res.mismatch()}{_read_from(layer, res)}{_also_wrong(diag)}.", color))
    said = _rebound_said(info, res, diag.sentence().removeprefix(f"FAIL: {diag.name}: "))  # self.grads[0] = dW
    failing = res is not None and res.failing_tensors
    if not failing and (diag.error is None or diag.error.exit_code == EXIT_MISMATCH):
        # a wrong result (shape, dtype, NaN) the diagnosis explains: one FAIL line, exit 1; a random forward
        # cannot be checked (exit 3): NOT CHECKED
        print(colorize(f"\n{_verdict_word(diag)}: {diag.name}: {_wrong_what(diag)}.", color))
    if diag.error is None or str(diag.error) not in said or diag.error.exit_code == EXIT_MISMATCH:
        print(colorize(V.wrap("diagnosis: " + said), color))
    _print_lessons(diag, color)
    for line in shared_memory_lines(getattr(layer, "protocol", None) or {}, res):
        print(colorize(V.wrap(line), color))
    for d in diag.other_modes:  # every mode checked has its verdict (a Dropout wrong in both modes)
        if not d.passed and d.error is None:
            what = d.result.mismatch() if d.result is not None and d.result.failing_tensors else _wrong_what(d)
            print(colorize(f"\n{_verdict_word(d)}: {d.name}: {what}.", color))
            print(colorize(V.wrap("diagnosis: " + d.sentence().removeprefix(f"FAIL: {d.name}: ")), color))
    if diag.error is not None:
        if diag.error.exit_code != EXIT_MISMATCH:  # the diagnosis above has said a wrong result already
            print(V.wrap(f"gradcheck: {error_kind(diag.error)} (exit {diag.error.exit_code}): {diag.error}"),
                  file=sys.stderr)
        return diag.error.exit_code
    if any(f.code == "student-code" for f in errs):
        return EXIT_STUDENT
    if all(d.passed or not_checkable(d) for d in [diag, *diag.other_modes]):  # nothing found wrong: unchecked
        modes = " and ".join(mode_word(d.training) for d in [diag, *diag.other_modes] if not_checkable(d))
        codes = {f.code for d in [diag, *diag.other_modes] for f in d.findings}
        dropped, one, zero = "all-dropped" in codes, "one-sample-norm" in codes, "zero-weights" in codes
        where = "" if dropped and not diag.other_modes and not diag.training else f" in {modes} mode"  # M4: a pair
        where = "" if not diag.other_modes and "training=" not in V.forward_call(layer, ["X"], False) else where
        carried = any(f.code == "forward-changes-state" for d in [diag, *diag.other_modes] for f in d.findings)
        where = "" if carried else where  # tester16 M5: state carried between calls, in the one mode it has
        why = ("has weights that are all zero (its output does not depend on its input)" if zero else
               "drops every entry" if dropped else "normalises one sample (its output is the same for any input)" if one
               else "changes state the next call reads" if carried else "is random") + f"{where}, so no gradient " \
            "can be compared "
        print(V.wrap(f"gradcheck: not checked (exit {EXIT_STUDENT}): {cname}'s forward {why}with finite "
                     "differences (see the diagnosis for how to make it checkable)."), file=sys.stderr)
        return EXIT_STUDENT
    return EXIT_MISMATCH


def _rebound_said(info, res, said: str) -> str:
    """The diagnosis of a failing check where backward rebinds items of a ``grads`` list (``info['rebound']``,
    :func:`gradcheck._adapters._rebound_grads`): those items named in place of ``said`` when every failing tensor is
    one of them (a model's ``dparams[0]`` all zeros because its sub-layer's ``self.grads[0] = dW`` left the model's
    list the old array, tester25s H2), else after it."""
    rebound = [str(r) for r in info.get("rebound") or []]
    if not rebound or res is None or not res.failing_tensors:
        return said
    slots = {m[1] if (m := re.search(r"the model's grads\[(\d+)\]", r)) else r.partition("[")[2].partition("]")[0]
             for r in rebound if "." not in r.split(" (")[0] or "the model's" in r}
    text = _rebound_text(rebound) + "."
    if set(res.failing_tensors) <= {f"dparams[{i}]" for i in slots}:
        return text
    return f"{said} Also: {text}"


def unset_verdict(cname: str, unset: Sequence[str], diag) -> str:
    """The NOT CHECKED line of a forward that passed where it reads switches gradcheck cannot set to each value
    (``unset``: the adapters' ``unset_switches``): what was checked, which switch, and how to have it checked."""
    ran = " and ".join(sorted({d.name for d in [diag, *diag.other_modes]}))
    return (f"NOT CHECKED: {cname}: forward reads {'; '.join(unset)}. The check of {ran} passed, but only for "
            "the branch that value selects: a bug in the branches of its other values would pass unseen. "
            + ("Make forward return one float array with each value (what it did is above), or check"
               if all(" not run: with " in u for u in unset) else  # a combination that returned a tuple
               "Check" if all(re.search(r"= (True|False) \(", u) for u in unset) else  # a boolean (tester15b H3)
               "Make it a boolean, or give the values it takes in a literal (kind in ('lin', 'sq')), or check")
            + " each value with --init" + ("" if all(u.startswith("self.") for u in unset) else
                        " (an argument of forward: make it an attribute that __init__ sets, self.kind = kind, which "
                        "--init sets)") + ".")


def _buffer_why(info: dict[str, Any], buffers: list[str]) -> str:
    """Why arrays without a gradient were read as buffers: a private name, or what the layer does
    (``info['buffer_why']``, ``["buf: why", ...]``, :func:`gradcheck._adapters._buffers_by_behaviour`: forward writes
    it), each reason with its arrays when they differ."""
    why = dict(x.split(": ", 1) for x in info.get("buffer_why") or [] if ": " in x)
    by: dict[str, list[str]] = {}
    for w in buffers:
        by.setdefault(why.get(w, "a private name"), []).append(w)
    def said(r, ws):  # "forward writes it" of one array, "... them" of several (tester17 L8)
        return r[:-3] + " them" if len(ws) > 1 and r.endswith(" it") else r
    if len(by) == 1:
        return said(*next(iter(by.items())))
    return "; ".join(f"{', '.join(ws)}: {said(r, ws)}" for r, ws in by.items())


def _read_from(layer, res) -> str:
    """Which gradient a failing one is when backward both stores and returns it (``protocol['read_from']``,
    :func:`gradcheck._adapters._returned_grads`): `` (dW is the stored self.dW, not the dW backward returns ...)``."""
    said = dict(x.split(": ", 1) for x in (getattr(layer, "protocol", None) or {}).get("read_from") or [] if ": " in x)
    hits = [f"{t} is {said[t]}" for t in res.failing_tensors if t in said]
    return f" ({'; '.join(hits)})" if hits else ""


def _passed_but_unpaired(diag) -> bool:
    """Whether every gradient compared matched in every mode, the only error a weight without its gradient
    (``weight-or-constant``: :func:`_undecided` says it, exit 3)."""
    ds = [diag, *diag.other_modes]
    return diag.passed or all(d.error is None and d.result is not None and d.result.passed
                              and {f.code for f in d.findings if f.severity == "error"} <= {"weight-or-constant"}
                              for d in ds)


def _vacuous_verdict(diag, cname: str) -> str | None:
    """The NOT CHECKED line of a check that found nothing wrong but gave some tensor no verdict
    (``CheckResult.unchecked``): a default atol above every |value| of it, which would pass any gradient of that
    size (newuser23 H1), or a mismatch within the truncation error of the user's large step (M4); with what to do.
    None otherwise (a real failure elsewhere stays a FAIL)."""
    ds = [diag, *diag.other_modes]
    if any(d.error is not None or d.codes or d.result is None for d in ds):
        return None
    return _vacuous_line([d.result for d in ds], cname)


def _vacuous_line(results, cname: str) -> str | None:
    """:func:`_vacuous_verdict`'s line from the ``results`` of every mode checked (a layer's) or the one of a loss;
    None when one has a failing tensor or none has a tensor given no verdict."""
    if any(r.failing_tensors for r in results):
        return None
    why: dict[str, dict[str, str]] = {"atol": {}, "given-atol": {}, "step": {}, "penalty": {}, "atol-part": {},
                                      "given-atol-part": {}, "mask": {}, "converge": {}}
    for res in results:
        for r in res.records:
            for c in r.comparisons:
                if c.unchecked in why:
                    why[c.unchecked].setdefault(r.tensor, f"{c.atol:.3g}")
    if not any(why.values()):
        return None
    parts = []
    if why["atol"]:
        ts = list(why["atol"])
        parts.append(f"the finite differences cannot tell {', '.join(ts)} from any gradient of its size ("
                     + ", ".join(f"atol={a} for {t}" for t, a in why["atol"].items())
                     + f", the round-off of the output, is larger than every |{ts[0]}|, or than {100 * VACUOUS:g}% of "
                     "the largest). Check the layer on inputs or parameters that keep the output near 1 (a large "
                     "constant offset swamps the step), or pass --atol to compare at a tolerance you choose")
    if why["given-atol"]:  # newuser30 F11: the user's --atol, as vacuous as a default one would be
        ts = list(why["given-atol"])
        parts.append(f"the atol you gave ({', '.join(f'atol={a} for {t}' for t, a in why['given-atol'].items())}) "
                     f"is larger than every |{ts[0]}|, or than {100 * VACUOUS:g}% of the largest, so the check would "
                     "pass any gradient of that size, its negation or zero too. Pass a smaller --atol (atol=), or "
                     "leave it out: the default is the round-off of the finite differences")
    for key, whose in (("atol-part", "the round-off of the output"), ("given-atol-part", "the atol you gave")):
        if why[key]:  # verify40 L1: most entries below an atol their largest entries set
            ts = list(why[key])
            parts.append(f"most entries of {', '.join(ts)} are below "
                         + ", ".join(f"atol={a} for {t}" for t, a in why[key].items())
                         + f" ({whose}, set by its largest entries), so the check would pass any value of theirs, "
                         "their negation or zero too (see the note above). Check the layer on inputs or parameters "
                         "whose outputs are of one size")
    if why["step"]:
        eps = results[0].eps
        parts.append(f"{', '.join(why['step'])} differ{'s' if len(why['step']) == 1 else ''} from central differences "
                     f"at eps={eps:g} only within their truncation error (estimated from the step, half and a quarter "
                     "of it, Richardson), so at this step a bug cannot be told from the step's own error. Drop --eps "
                     "(eps=None in Python) to check at the default step")
    if why["converge"]:  # verify43c F4: attention at X - 3000
        ts = list(why["converge"])
        parts.append(f"the finite differences of {', '.join(ts)} do not converge at this input scale (central "
                     "differences at the step, half, a quarter of it and down to 1/1024 of it: the step's error above "
                     "the tolerance, round-off below it), so a bug cannot be told from their error there. Check the "
                     f"{'loss' if results[0].kind == 'loss' else 'layer'} on a smaller input (entries near 1: the "
                     "step grows with |x|, and the function varies on a far smaller scale there)")
    if why["penalty"]:  # tester24s n03: a regulariser's gradient whose strength the layer does not state
        ts = ", ".join(why["penalty"])
        parts.append(f"{ts} {'has' if len(why['penalty']) == 1 else 'have'} a term that does not multiply dY, a "
                     "penalty's gradient whose strength the layer states but whose loss gradcheck does not know (see "
                     "the diagnosis): that term is not checked, the rest matched. Set the strength the diagnosis "
                     "names to 0 to check the whole gradient")
    if why["mask"]:  # check42: a fixed mask no bounded number of rounds tells from a right random layer
        parts.append("whether the training forward draws a new mask at each call could not be told on this input "
                     "(see the note above), so its gradients are not judged. Check the training mode on a larger input")
    return f"NOT CHECKED: {cname}: " + "; ".join(parts) + ". No verdict."


def _zero_on_path(info, res) -> list[str]:
    """The gradients in the table that are 0 in every entry, numerical and manual, when forward reads weights idle on
    this input (``info['idle_zero']``, :func:`_idle_zero_lines`): on their path, compared with 0 only (fix39corpus:
    dquery, dkey of an attention whose Q and K projections were idle)."""
    if res is None or not info.get("idle_zero"):
        return []
    def zero(r):  # manual 0 everywhere, and the numerical 0 (per entry, or along each direction: fast mode)
        m, n = (res.gradients.get(s, {}).get(r.tensor) for s in ("manual", "numerical"))
        cs = [c for c in r.comparisons if c.pair == "manual-vs-numerical"]
        return m is not None and not np.any(m) and (not np.any(n) if n is not None else
                                                    bool(cs) and all(c.max_abs_error == 0 for c in cs))
    return [r.tensor for r in res.records if r.kind == "gradient" and zero(r)]


def _pass_verdict(diag, cname: str, unchecked, color: bool, zero=()) -> int | None:
    """The PASS line of a check that passed (exit 0), or NOT CHECKED when no gradient was compared (exit 3,
    tester16 H1: never a PASS of nothing), or NOT CHECKED for a tensor given no verdict (:func:`_vacuous_verdict`);
    None when it did not pass. ``zero``: gradients compared with 0 alone on a path :func:`_idle_zero_lines` names,
    said apart, not among those that match."""
    if (line := _vacuous_verdict(diag, cname)) is not None:
        print(colorize("\n" + V.wrap(line), color))
        return EXIT_STUDENT
    if (none := _nothing_compared(diag)) is not None:
        print(colorize("\n" + V.wrap(f"NOT CHECKED: {cname}: no gradient was compared{none}, so there is no verdict "
                                      "to give (give the layer a real input or a parameter)."), color))
        return EXIT_STUDENT
    if not diag.passed:
        return None
    res = diag.result
    tensors = ", ".join(r.tensor for r in res.records if r.kind != "forward" and not probed_large(r.tensor)
                        and r.tensor not in zero)
    fwd = " and the forward output" if any(r.kind == "forward" for r in res.records) else ""
    left = f" ({', '.join(unchecked)}: no gradient checked, see above)" if unchecked else ""
    left += f" ({', '.join(zero)}: 0 on this input, compared with 0 alone, so not checked: see above)" if zero else ""
    large = " (and at the inputs shifted by 1000, as the reference's: see the table)" if any(  # newuser38 F10
        probed_large(r.tensor) for r in res.records) else ""
    if _running_unchecked(diag) is not None:  # newuser35 H2: never "the forward output match" of those unseen
        fwd = " and the forward output at the initial running statistics" if fwd else ""
        left += " (the running statistics' update by a training forward: NOT checked, see below)"
    what = (f"the sampled entries of ({tensors}) match" if res.mode == "sample"
            else f"every gradient ({tensors}){fwd} match{'' if fwd else 'es'}")
    sampled = "; sample mode checks a random subset: --mode full checks every entry" if res.mode == "sample" else ""
    sampled += _directional_words(res)
    within = f"within rtol={res.rtol:g}, {res.atol_words()}{large}"
    copy = next((f for f in diag.findings if f.code == "float64-copy"), None)  # its note names the low dtype
    low = "float16" if copy is not None and re.search(r"(computes in|is float64 for) float16 ", copy.message) \
        else "float32"
    f64 = f" (its {low} code checked on a float64 copy: see the note)" if copy is not None else ""
    print(colorize(f"\nPASS: {cname}{f64}: {what} {within}{left}{sampled}.", color))
    return EXIT_PASS


def _running_unchecked(diag):
    """The ``running statistics`` probe of :func:`_running_stats` when they were not compared, else None."""
    return next((p for p in diag.probes if p.name == RUNNING_PROBE and p.passed is None), None)


def _directional_words(res) -> str:
    """What fast mode's PASS proved (tester16 H2), after its tolerance: the tensors checked along random directions
    (their comparisons' ``how``), not entry by entry, with the error in one entry those directions could miss
    (``Comparison.missable``, a typical entry); "" when every tensor was checked entry by entry."""
    blind = {}
    for r in [*res.records, *(x for o in res.other_modes for x in o.records)]:
        cs = [c for c in r.comparisons if c.how == "directional" and c.pair.endswith("-vs-numerical")]
        if cs and r.kind != "forward":
            blind[r.tensor] = (max(c.n_compared for c in cs), max(c.missable for c in cs))
    if not blind:
        return ""
    rest = [r.tensor for r in res.records if r.kind != "forward" and r.tensor not in blind and not probed_large(r.tensor)]
    parts = []
    for t, (_n, m) in blind.items():
        g = res.gradients.get("manual", {}).get(t)
        top = float(np.max(np.abs(g))) if g is not None and np.size(g) else 0.0
        scale = f" ({m / top:.1g} of max|{t}|)" if top > 0 and np.isfinite(m) else ""
        parts.append(f"{m:.2g} in {t}{scale}" if np.isfinite(m) else f"an unknown size in {t}")
    dirs = sorted({n for n, _ in blind.values()})
    return (f", {', '.join(blind)} along {' or '.join(map(str, dirs))} random directions each, not entry by entry"
            + (f" ({', '.join(rest)} entry by entry)" if rest else "")
            + f": an error in one entry can pass unseen, up to about {', '.join(parts)} for a typical entry; "
            "--mode full checks every entry")


def _nothing_compared(diag) -> str | None:
    """Why no gradient was compared in a mode where nothing else was found wrong (every input integer indices and
    no parameter: `` (every input is integer indices and the layer has no parameter)``), or None when some
    gradient was compared in every mode, or something was found wrong."""
    ds = [diag, *diag.other_modes]
    if not all(d.error is None and not d.codes and d.result is not None and not d.result.compared
               and all(r.passed for r in d.result.records) for d in ds):
        return None
    ints = [n.split(" is an integer input")[0].split(": ")[-1] for n in diag.result.notes if "is an integer input" in n]
    return (f" ({', '.join(ints)}: integer indices, without a gradient, and no parameter with one)" if ints
            else " (no input or parameter with a gradient)")


def _verdict_word(d) -> str:
    """``"NOT CHECKED"`` for a mode's check that found nothing wrong: a random forward alone stopped it, or its
    gradients all matched and a weight without its gradient is all it says (``weight-or-constant``: tester18s L6,
    labelled FAIL beside the other mode's real FAIL); else ``"FAIL"``."""
    errs = {f.code for f in d.findings if f.severity == "error"}
    unpaired = d.result is not None and not d.result.failing_tensors and errs == {"weight-or-constant"}
    return "NOT CHECKED" if not_checkable(d) or unpaired else "FAIL"


def shared_memory_lines(info: dict[str, Any], res) -> list[str]:
    """Notes on failing parameters that share memory (:func:`gradcheck._adapters.adapt`'s ``tied`` and
    ``views``): a summed gradient that is k times the numerical one (each of the k arrays' gradients holds the
    total, which an optimizer stepping each would apply k times), and mismatches that all lie in the block
    of the parameter that forward reads through one view (``self.Wh = self.W[5:8]``)."""
    if res is None:
        return []
    out, failing = [], set(res.failing_tensors)
    man, num = res.gradients.get("manual", {}), res.gradients.get("numerical", {})

    def pair(t):
        m, n = man.get(t), num.get(t)
        ok = t in failing and m is not None and n is not None and np.shape(m) == np.shape(n)
        return (np.asarray(m, dtype=np.float64), np.asarray(n, dtype=np.float64)) if ok else (None, None)
    for entry in info.get("tied") or []:
        rep, _, rest = str(entry).partition(":")
        names = [rep, *(x.strip() for x in rest.split(",") if x.strip())]
        m, n = pair(V.grad_name(rep))
        k, known = len(names), None if n is None else np.isfinite(n)
        if m is None or not known.any() or not close(m[known], k * n[known], res.rtol, res.atol_of(V.grad_name(rep))):
            continue
        times = "twice" if k == 2 else f"{k} times"
        out.append(f"note: {V.grad_name(rep)} is the sum of the gradients backward stored for {', '.join(names[:-1])} and "
                   f"{names[-1]}, one array, and it is {k} times the numerical gradient: each of them holds "
                   f"the total, so an optimizer that steps {'both' if k == 2 else 'each'} applies it {times}. "
                   "Store in each only its own use's part (as the sub-layer's backward computes it alone); "
                   "their sum is the total.")
    for entry in info.get("views") or []:
        hit = re.fullmatch(r"(.+)=(.+)\[([0-9:, ]+)\]", str(entry))
        m, n = pair(V.grad_name(hit.group(2))) if hit else (None, None)
        if m is None:
            continue
        view, rep, box = hit.groups()
        block = np.zeros(m.shape, dtype=bool)
        block[tuple(slice(*(int(v) for v in p.split(":"))) if p.strip() != ":" else slice(None)
                    for p in box.split(","))] = True
        atol = res.atol_of(V.grad_name(rep))
        bad = np.isfinite(n) & mismatched(m, n, res.rtol, atol)
        if not bad.any() or (bad & ~block).any():
            continue
        c = float(np.median(m[block & bad] / n[block & bad])) if np.all(n[block & bad]) else 0.0
        factor = f"; there it is {c:.3g} times the correct one" if c and close(m[block], c * n[block], res.rtol,
                                                                            atol) else ""
        out.append(f"note: every mismatching element of d{rep} ({int(bad.sum())} of {int(block.sum())} in the "
                   f"block) lies in {rep}[{box}], the block forward reads as {view} (a view of {rep}): the part "
                   f"of backward that computes {view}'s gradient is wrong{factor}.")
    return out


def _twin(args, obj, kind: str, init):
    """``--twin``: ``(autoprop's class of the same name, built, or None, why None)``; ``(None, "")`` without it.
    ``--twin-init`` (JSON) gives it arguments of its own, over those read from ``init`` (``--init``) and the layer
    (verify41 M2); ``--reference-init`` is used as given (:func:`build_reference`: staff pin the reference)."""
    own = getattr(args, "twin_init", None)
    if own is not None and not args.twin:
        raise UsageError("--twin-init gives the arguments of the --twin (autoprop's class of the same name): add "
                         "--twin, or drop --twin-init.")
    own = dict(V.parse_init_json(own)) if own is not None else None
    return build_twin(obj, kind, init or None, own) if args.twin else (None, "")


def _reference_lines(diag) -> list[str]:
    """The ``reference: ...`` notes of every mode's result (names mapped, a weight's orientation and how it was
    decided: :func:`gradcheck.sources.reference_source`), moved to the header, each once."""
    lines = []
    for d in [diag, *diag.other_modes]:
        if d.result is not None:
            lines += [n for n in d.result.notes if n.startswith("reference: ")]
            d.result.notes = [n for n in d.result.notes if not n.startswith("reference: ")]
    return list(dict.fromkeys(lines))


#: The header's mode line of a forward with no training switch that is random (Z6: it said eval).
RANDOM_NO_SWITCH = ("mode: training (forward has no training switch, and it draws a random mask on every call: "
                    "its training behaviour ran, the draws held fixed for the check)")


def _random_mode_lines(lines: list[str], diag) -> list[str]:
    """``lines`` with the mode line of a forward without a training switch (:data:`NO_SWITCH`: gradcheck set no
    mode) replaced by :data:`RANDOM_NO_SWITCH` when that forward is random
    (its draws held, or not holdable): a dropout that always drops, a CS231n pair whose mode defaults to 'train'."""
    if not any(d.held or any(f.code in ("non-deterministic", "all-dropped") for f in d.findings)
               for d in [diag, *diag.other_modes]):
        return lines
    return [RANDOM_NO_SWITCH if line == NO_SWITCH else line for line in lines]


def _random_lines(diag, twin, reference: str | None) -> list[str]:
    """Header lines saying in which modes the twin and the ``--reference`` were compared, when a
    random forward (its draws held for the check) kept them out of some: they draw their own masks
    (:data:`gradcheck.diagnose.RANDOM_TWIN`, :data:`~gradcheck.diagnose.RANDOM_REFERENCE`)."""
    modes = [d for d in [diag, *diag.other_modes] if d.result is not None]
    lines = []
    def pairs(r):
        return {c.pair for rec in r.records for c in rec.comparisons}
    for what, on, out, used, who in (
            ("twin", twin is not None, lambda r: r.twin_note == RANDOM_TWIN, lambda r: r.twin is not None,
             "the autoprop twin"),
            ("reference", bool(reference), lambda r: RANDOM_REFERENCE in r.notes,
             lambda r: "manual-vs-reference" in pairs(r), reference)):
        random = [mode_word(d.training) for d in modes if on and out(d.result)]
        if not random:
            continue
        kept = [mode_word(d.training) for d in modes if used(d.result)]
        how = (f"checked with the draws held: manual vs numerical ({who} draws its own mask, and gradcheck "
               "cannot give it yours" + ("; the training output's mean is compared with it instead: see the note "
               "below" if what == "reference" and any(f.code == "random-mean-note" for f in diag.findings) else "")
               + ")")
        lines.append(f"{what}: compared in {' and '.join(kept)} mode only; in {' and '.join(random)} mode the "
                     f"forward is random, so it is {how}" if kept else
                     f"{what}: not compared: the forward is random in {' and '.join(random)} mode, so it is {how}")
    return lines


#: The findings of a gradient of the wrong shape (:func:`_also_wrong`).
_SHAPE_CODES = frozenset({"wrong-shape", "transposed", "values-right-shape-wrong", "not-summed", "wrong-order"})


def _also_wrong(diag) -> str:
    """``"; wrong shape of dBW, dBb"``: the FAIL line's words for the gradients of the wrong shape beside the failing
    rows of a result (their values compared reshaped, or not at all: verify26), else ""."""
    shape = list(dict.fromkeys(t.strip() for f in diag.errors if f.tensor and f.code in _SHAPE_CODES - {"wrong-order"}
                               for t in f.tensor.split(",")))
    order = "; returned in the wrong order" if any(f.code == "wrong-order" for f in diag.errors) else ""  # L1
    return (f"; wrong shape of {', '.join(shape)}" if shape else "") + order


def _wrong_what(diag) -> str:
    """``"wrong dW (shape, dtype or value)"``: what the FAIL line of a wrong-result error names."""
    errs = [f for f in diag.findings if f.severity == "error"]
    tensors = list(dict.fromkeys(f.tensor for f in errs if f.tensor))
    if errs and errs[0].code == "sublayer-not-checked":  # "layers[1] (TimeLSTM) cannot be checked inside the model"
        return errs[0].message.partition(", as it cannot alone")[0] + " (see the diagnosis)"
    if not tensors:  # what stopped the check before any gradient was compared (a random forward)
        return f"{errs[0].name} (see the diagnosis)" if errs else "a wrong result (see the diagnosis)"
    kinds = {f.code for f in errs}
    if kinds <= {"stale-cache", "shared-cache"}:  # a probe's gradient at other inputs (sample mode too)
        return f"gradient mismatch in {', '.join(tensors)} (at another input; see the diagnosis)"
    if kinds == {"sample-missed"}:
        return f"gradient mismatch in {', '.join(tensors)} (outside the sampled entries; see the diagnosis)"
    what = ("order" if kinds == {"wrong-order"} else "shape" if kinds & _SHAPE_CODES
            else "precision" if kinds & {"float32-values", "float32-inside", "float16-inside", "piecewise-constant"}
            else "dtype" if "float32" in kinds
            else "NaN or infinity" if "non-finite" in kinds else "result")
    return f"wrong {what} of {', '.join(tensors)}"


def _mode_why(layer, requested, ran: tuple[bool, ...], words=("training", "False", "True"), unread=False,
              same=False) -> str:
    """Why the check ran ``forward`` in the modes ``ran``: what was asked (``requested``: True,
    False or "auto"), and for "auto" whether both were planned (``unread``: a string switch whose
    values gradcheck guessed, forward's source comparing it with neither)
    (:func:`gradcheck.config.training_modes`) and one dropped because the training forward gave
    the eval output (:func:`gradcheck.sources.training_differs`); ``same``: both ran, the training forward giving
    the eval output (backward may still branch on the mode)."""
    name, off, on = words
    takes = "reads" if name.startswith(("self.", "global ", "env ")) else "takes"  # an attribute switch (self.training)
    if requested != "auto":
        return f": as --{'training' if requested else 'eval'} asks"
    if len(training_modes(layer, "auto")) < 2:
        return (f": forward {takes} {name}, and backward asserts it (a frozen layer has no backward, numpy-ml's "
                f"convention), so training mode alone is checked (--eval checks {name}={off})") \
            if eval_backward_refused(layer) else ""
    if ran == (True,):  # diagnose_layer's _eval_identity: the eval forward returns X (a Dropout)
        return (f": forward {takes} {name}; with {name}={off} it returns X itself, so eval mode was "
                "checked as the identity (see the note)")
    if unread and (len(ran) < 2 or same):  # mode='train'/'test' guessed: no branch of forward may test them
        return (f": forward {takes} {name}, but its source compares {name} with neither {on} nor {off} (the "
                f"values gradcheck passed), and both gave the same output: a branch of forward that another "
                f"{name} selects may never have run; "
                + ("only this one forward was checked" if len(ran) < 2 else "both checks ran this one forward"))
    if len(ran) < 2:
        return f": forward {takes} {name}, but checked once (the note under the table says why)"
    if same:
        return (f": forward {takes} {name}; {name}={on} gave the same output as {name}={off} on this input, but "
                "backward may still branch on the mode, so both modes are checked (--eval or --training checks one)")
    return f": forward {takes} {name}, so both modes are checked (--eval or --training checks one)"


#: Words of a training-mode test in a class's source (:func:`source_switches`): compared strings and names.
#: (Not "valid": a convolution's padding; not "trainable": a freeze flag.)
_MODE_WORDS = ("train", "training", "fit", "eval", "test", "testing", "evaluation", "inference", "predict", "val",
               "validation", "deploy")
_SWITCH_NAME = re.compile(r"(^|_)(train|training)($|_)|^(is_)?(eval|test|inference)(_mode)?$|^deterministic$",
                          re.IGNORECASE)


def source_switches(label: str, methods: Sequence[str] | None = None) -> list[str]:
    """The training switches the class ``path.py::NAME`` tests in its own source without gradcheck setting them,
    as ``"self.bn_param['mode'] == 'train' (line 9)"``: a comparison with a mode word (:data:`_MODE_WORDS`), or
    an ``if`` on a name like a switch (``TRAIN``, ``self.in_train``, a helper's ``train`` argument). Read from the
    file with :mod:`ast` (nothing runs); ``[]`` when it cannot be read or the class is not in it. ``methods``: the
    class's methods the check runs (Nielsen's feedforward and backprop, :func:`gradcheck._adapters.nielsen_methods`):
    only they and the methods they call as ``self.NAME(...)`` are read (nielsen34 F7: ``SGD``'s
    ``monitor_training_cost`` keywords were told as a switch of the checked forward); None: the whole class."""
    path, _, name = label.rpartition("::")
    found, classes = [], file_classes(path, name)[1]
    nodes = classes if methods is None else _reached_methods(classes, methods)
    for c in nodes:
        for node in ast.walk(c):
            what = None
            if isinstance(node, ast.Compare) and any(isinstance(v, ast.Constant) and isinstance(v.value, str)
                                                     and v.value.lower() in _MODE_WORDS
                                                     for v in [node.left, *node.comparators]):
                what = node
            elif isinstance(node, (ast.If, ast.IfExp)):
                t = node.test.operand if isinstance(node.test, ast.UnaryOp) else node.test
                last = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
                what = t if _SWITCH_NAME.search(last) else None
            if what is not None:
                found.append((what.lineno, f"`{ast.unparse(what)}` (line {what.lineno})"))
    return list(dict.fromkeys(text for _, text in sorted(found)))[:3]


def _reached_methods(classes, methods: Sequence[str]) -> list[ast.FunctionDef]:
    """The ``def`` nodes of ``classes`` (a class and its bases, :func:`gradcheck._switch_reach.file_classes`) named in
    ``methods`` and those they call as ``self.NAME(...)``, transitively, each once (the first class defining it)."""
    defs: dict[str, ast.FunctionDef] = {}
    for c in classes:
        for f in c.body:
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs.setdefault(f.name, f)
    todo, seen = list(methods), {}
    while todo:
        if (f := defs.get(todo.pop())) is not None and f.name not in seen:
            seen[f.name] = f
            todo += [n.func.attr for n in ast.walk(f) if isinstance(n, ast.Call) and self_attr(n.func)]
    return list(seen.values())


def _model_mode(cname: str, info) -> str:
    """The usage error for ``--eval`` given for a model of
    :func:`gradcheck._adapters.model_as_layer`: the gradients it returns are of its training loss (DLfS vol. 1's
    ``gradient(x, t)`` calls ``loss(x, t, train_flg=True)``; CS231n's ``loss(X, y)`` with labels sets every dropout's
    and batch normalization's mode to ``"train"``), which is the one mode checked; an eval loss has no gradient of
    the model's to compare."""
    dlfs = "Deep Learning from Scratch" in str(info.get("text"))
    how = ("gradient(x, t) computes the gradients of loss(x, t) in training mode (train_flg=True, when loss takes it)"
           if dlfs else "loss(X, y) with labels y runs in training mode (mode 'train' for dropout and batch "
           "normalization) and returns that loss's gradients")
    return (f"--eval: {cname} is a model whose {how}: that mode is the one checked (with or without --training), and "
            "there is no gradient of the eval loss to compare; drop --eval.")


def _settable_mode(layer, cname: str, requested, switches: Sequence[str] = ()) -> None:
    """Refuse ``--training``/``--eval`` (``requested`` True/False) for a forward whose mode gradcheck cannot set,
    before any check: a PASS would be for a mode that never ran. A forward argument that may be a switch
    gradcheck does not read (``mode=0``, ``evaluation=False``): not checked (exit 3), how to make it one; a
    function pair (its mode is in ``--init``) or a forward with no switch at all: a usage error (exit 2).

    Raises
    ------
    NotCheckedError, UsageError
    """
    info = getattr(layer, "protocol", None) or {}
    if requested == "auto" and (unsafe := info.get("unsafe_flag")):  # forward(X, return_cache=False)
        name, off, on, why = unsafe
        raise NotCheckedError(
            f"{cname}: forward takes {name} ({name}={off} by default), "
            f"{'a boolean' if off in ('True', 'False') else f'a string its source compares with {on}'} gradcheck "
            f"does not read as a training switch, so each of its values is checked; but with {name}={on} forward {why}, which no "
            f"check can read, so that branch was not checked, nor the layer as a whole. --eval checks {name}={off} "
            f"(the default) alone; to have {name}={on} checked too, make forward return one array there.")
    if requested == "auto" or info.get("forward_training") is not False:
        return
    opt, mode = ("--training", "training") if requested else ("--eval", "eval")
    if info.get("no_dx") is True and requested is False:  # a model's gradient(x, t), loss(X, y): training (model45)
        raise UsageError(_model_mode(cname, info))
    if info.get("no_dx") is True:
        return
    if flag := info.get("unread_flag"):
        name, value = flag
        raise NotCheckedError(
            f"{cname}: {opt} asks for the {mode} forward, but gradcheck cannot select it: forward takes {name} "
            f"({name}={value} by default), which is not a training switch gradcheck reads, so it cannot tell which "
            f"value of {name} is the {mode} mode, and no gradient of that mode was compared. "
            f"{_switches_read(name, value)}, or drop {opt} to check forward's default alone.")
    if switches and info.get("protocol") != "cs231n":
        raise NotCheckedError(
            f"{cname}: {opt} asks for the {mode} forward, but gradcheck cannot select it: the class tests "
            f"{', '.join(switches)}, a switch gradcheck does not set, so no gradient of that mode was compared. "
            f"Make it a forward argument (training=False, or mode='train'/'test'), or drop {opt} to check the "
            "forward as it is.")
    if info.get("protocol") == "cs231n":
        raise UsageError(f"{opt}: {cname} is a function pair, whose mode is a value in --init (e.g. --init "
                         f"'{{\"bn_param\": {{\"mode\": \"{'train' if requested else 'test'}\"}}}}'), not a "
                         f"forward argument; put the mode there and drop {opt}.")
    raise UsageError(f"{opt}: gradcheck finds no training switch of {cname} (no training argument, no attribute or "
                     f"comparison with a mode word in its source), so it cannot pick the {mode} mode; drop {opt} to "
                     "check the forward as it is.")


def _switches_read(name: str, value: str) -> str:
    """The switches gradcheck reads, and how to make forward's argument ``name`` (default ``value``) one."""
    how = (f"rename {name} to one of them" if value in ("True", "False")
           else f"make {name} a boolean, or a mode/phase string ('train'/'test')")
    return (f"Switches read: training, {', '.join(TRAIN_FLAGS)} (True: training), {', '.join(EVAL_FLAGS)} (True: "
            f"eval), mode/phase strings; {how}")


def _no_switch_lines(info, init, switches: Sequence[str] = ()) -> list[str]:
    """The header's mode lines for a forward without a training switch gradcheck reads: a function pair's
    mode in ``--init``, or a boolean argument of another name (``info['unread_flag']``), whose default
    alone ran, named in a WARNING; so are the ``switches`` the class's source tests (:func:`source_switches`)."""
    flag = info.get("unread_flag")
    if flag:
        name, value = flag
        other = (f"the branch {name}={value == 'False'} selects" if value in ("True", "False")
                 else f"a branch another value of {name} selects")
        return [f"mode: forward's default alone (forward(X), {name}={value} by default)",
                f"WARNING: forward takes {'a boolean ' * (value in ('True', 'False'))}{name} that gradcheck does "
                f"not read as a training switch, so only {name}={value} (its default) was checked; {other} "
                f"never ran. {_switches_read(name, value)} to have both modes checked."]
    if info.get("protocol") == "cs231n":
        return [pair_mode_line(init)]
    if info.get("no_dx") is True:  # a model of _adapters.model_as_layer (model45)
        text = str(info.get("text"))
        return ["mode: training (train_flg=True, as gradient(x, t) calls loss)" if "train_flg=True" in text else
                "mode: training (loss(X, y) with labels: mode 'train' for any dropout and batch normalization)"
                if "CS231n" in text else NO_SWITCH]
    if switches:
        return ["mode: forward as it is (no training argument; see the WARNING)",
                f"WARNING: the class tests {', '.join(switches)}, a training switch gradcheck does not set, so only "
                "the branch its current value selects ran: the other mode's forward and backward were not checked. "
                "Make it a forward argument (training=False, or mode='train'/'test') to have both modes checked."]
    return [NO_SWITCH]


def _switches_set(switches, training) -> str:
    """`` (eval: self.drop.mode = 'test', global TRAIN = False; training: ...)``: the switches gradcheck set before
    each mode's forward and backward (several, :func:`gradcheck._adapters._reached_keyword`), ``training`` as a
    forward argument, and put back after."""
    def one(t):
        return ", ".join(f"forward(X, {n}={on if t else off})" if not n.startswith(("self.", "global ", "env "))
                         else f"{n} = {on if t else off}" for n, off, on in switches)
    return " (" + "; ".join(f"{'training' if t else 'eval'}: {one(t)}" for t in training) + "; each put back after)"


def _plain_mode_line(info, words, training: tuple[bool, ...], shown: str, why: str) -> str:
    """The header's mode line: ``mode: eval and training ...``, or for a switch that selects no training mode
    (``info['plain_switch']``: ``self.kind``) ``mode: each value of self.kind ...`` (F1)."""
    name, off, on = words
    modes = " and ".join("training" if t else "eval" for t in training)
    if info.get("plain_switch"):  # F1: a switch that selects no training mode: each value of it
        modes = f"each value of {name}" if len(training) > 1 else f"{name}={on if training[0] else off}"
        each = f"each value is checked (--eval checks {name}={off} alone, --training {name}={on})"
        why = (why.replace("but backward may still branch on the mode, so both modes are checked (--eval or "
                           "--training checks one)", f"but backward may still branch on {name}, so {each}")  # L1
               .replace("so both modes are checked (--eval or --training checks one)",
                        f"which selects no training mode: {each}")
               .replace("(--training checks the training forward alone)", f"(--training checks {name}={on} alone)"))
    return "mode: " + modes + shown + why


def _variant_lines(info, requested: bool | str = "auto") -> list[str]:
    """The header line of the checks of forward's other switch combinations (``info['switch_variants']``,
    :func:`_checked_variants`): which (those ``requested``, ``--eval``/``--training``, runs), and why."""
    variants = [str(v).split("|") for v in info.get("switch_variants") or []]
    keep = (0, 1) if requested == "auto" else (1,) if requested else (0,)
    shown = [lab for v in variants for i, lab in enumerate(v) if lab and (i in keep or not v[0])]
    if not shown:
        return []
    strings = any("='" in lab or '="' in lab for lab in shown)
    what = ("each value forward's source compares its string argument with" if not all(v[0] for v in variants) else
            "every combination of the switches forward reads (its booleans and each value of its string argument)"
            if strings else "every combination of the booleans forward reads")
    mode = {True: "; --training: each in training mode", False: "; --eval: each in eval mode"}.get(requested, "")
    if built := [p for p in str((info.get("mode_labels") or [""])[0]).split(", ") if p.startswith("self.")]:
        what += f" ({', '.join(built)}: as the layer was built; its other value a variant of its own, not the mode's)"
    return [f"mode: also {'; '.join(f'[{lab}]' for lab in shown)}: {what} is checked{mode}, each row labelled "
            "with it"]


def _unset_lines(info) -> list[str]:
    """The WARNING of a forward that reads switches gradcheck cannot set to each value (``info['unset_switches']``,
    F1): the check cannot pass."""
    unset = info.get("unset_switches")
    return [f"WARNING: forward reads {'; '.join(unset)}, a switch gradcheck cannot set to each of its values: only "
            "the branch its value selects was checked, so the check cannot pass (see the verdict)"] if unset else []


def _handed_back_lines(info: dict[str, Any]) -> list[str]:
    """The WARNING of a ``backward(a, dY)`` read as taking forward's output by behaviour alone, its names leaving it
    open (:func:`gradcheck._adapters.class_input_backward`, review29 HANDED_BACK); [] otherwise."""
    return [f"WARNING: {info['handed_back']}."] if info.get("handed_back") else []


def _buffer_lines(info: dict) -> tuple[list[str], list[str]]:
    """:func:`protocol_lines`' lines on the arrays forward uses that backward gives no gradient and that are neither
    weights nor in params (``info["buffers"]``): entries of what forward stores for backward (a cache: no gradient
    due) and constant buffers (a mask, a positional encoding); ``(lines, buffers)``, the buffers not cache entries."""
    out = []
    buffers = list(info.get("buffers") or [])
    why = dict(str(x).split(": ", 1) for x in info.get("buffer_why") or [] if ": " in str(x))
    entries = [w for w in buffers if "[" in w and why.get(w) == "forward writes it"]  # newuser32 F6: cache[1]
    if entries:  # an entry of a container forward writes and backward reads (self.cache = (xh, var, ...)): what
        # forward stored for backward (in eval mode an alias of a running statistic), not a weight: no dcache[1]
        one = len(entries) == 1
        out.append(f"note: {', '.join(entries)} {'is an entry' if one else 'are entries'} of what forward stores "
                     "for backward (a cache, rewritten at each forward; in eval mode it may hold a running "
                     f"statistic), not {'a weight' if one else 'weights'}: no gradient is due, neither perturbed nor "
                     "checked.")
        buffers = [w for w in buffers if w not in entries]
    if buffers:  # named neither like a weight nor given a gradient: a constant (a mask, a positional encoding)
        one = len(buffers) == 1
        out.append(f"WARNING: forward uses {', '.join(buffers)} but backward sets no gradient for "
                     f"{'it' if one else 'them'} ({', '.join(_grad_name(w) for w in buffers)}): read as "
                     f"{'a constant buffer' if one else 'constant buffers'} ({_buffer_why(info, buffers)}), neither "
                     f"perturbed nor checked. If {'it is a weight' if one else 'they are weights'}, store "
                     f"{', '.join(_grad_name(w) for w in buffers)} in backward.")
    return out, buffers


def protocol_lines(layer, init: dict[str, Any], training: tuple[bool, ...] = (False,),
                   requested: bool | str = "auto", switches: Sequence[str] = (),
                   same: bool = False) -> tuple[list[str], list[str]]:
    """Header lines saying how the layer was read (:func:`gradcheck._adapters.adapt`), in which
    ``training`` modes it was checked and why (``requested``: the ``--training``/``--eval`` choice,
    "auto" without one; ``switches``: :func:`source_switches`; ``same``: the training forward gave the eval
    output), and the weights whose gradient is not checked: ``(lines, unchecked)``."""
    info = getattr(layer, "protocol", None) or {}
    if not info.get("text"):
        return [], []
    lines = [f"protocol: {info['text']}"]
    if info.get("forward_training") is False:
        lines += _no_switch_lines(info, init, switches)
    else:
        name, off, on = info.get("mode_keyword") or ("training", "False", "True")
        calls = ", then ".join(f"{name}={on if t else off}" for t in training)
        if name.startswith(("self.", "global ", "env ")):  # an attribute switch (self.training), set before each forward
            calls = f"{name} = " + ", then ".join(on if t else off for t in training)
        unread = "mode_words" in info and not {on, off} & set(info["mode_words"])
        sw = list(info.get("switches") or [])  # [name, eval value, training value, name, ...]
        shown = (_switches_set(list(zip(sw[::3], sw[1::3], sw[2::3])), training) if sw
                 else f" ({calls})" if name.startswith(("self.", "global ", "env ")) else f" (forward(X, {calls}))")
        why = _mode_why(layer, requested, training, (name, off, on), unread, same)
        lines.append(_plain_mode_line(info, (name, off, on), training, shown, why))
    lines += _variant_lines(info, requested) + _unset_lines(info) + _handed_back_lines(info)
    unchecked, unseen = list(info.get("unchecked") or []), list(info.get("unseen") or [])
    unsure = [str(a) for a in info.get("ambiguous") or []]  # "W (5, 3): gW, hW"
    for a in unsure:  # backward wrote arrays of a weight's shape, none of them its gradient by name or place
        w, _, arrays = a.partition(": ")
        name = w.split(" (")[0]
        lines.append(f"WARNING: backward writes {arrays}, shaped like {w}, but gradcheck cannot tell which, if any, "
                     f"is the gradient of {name}: none is named like it ({_grad_name(name)}) or alone in {name}'s "
                     f"place in a container parallel to the weights'. {name}'s gradient is not checked; name it "
                     f"{_grad_name(name)} to have it checked.")
    unsure = [a.split(" (")[0] for a in unsure]
    for h in info.get("hidden") or []:  # ClassLevel.W, a module's W_glob: read by forward, never perturbed
        w, _, arrays = str(h).partition(": ")
        lines.append(f"WARNING: forward reads {w}, an array {_hidden_where(w)}: gradcheck neither perturbs nor "
                     "checks it" + (f"; backward writes {arrays}, of its shape, which is not "
                     "checked either, so the check cannot pass" if arrays else ", read as a constant") +
                     ". Keep weights and their gradients on the instance (self.W, self.dW) to have them checked.")
    sub = [w for w in unchecked if "." in w and w not in unsure]  # a sub-layer's (l1.W): named in a warning
    if sub and info.get("protocol") == "seed":
        lines.append(f"WARNING: forward uses the sub-layer array{'s' * (len(sub) > 1)} {', '.join(sub)}, whose "
                     f"backward sets no gradient ({', '.join(_grad_name(w) for w in sub)}): the checker cannot check "
                     f"{'it' if len(sub) == 1 else 'them'}; only the gradient of the input is checked.")
        unchecked = [w for w in unchecked if w not in sub]
    seed = [w for w in unchecked if w not in unsure] if info.get("protocol") == "seed" else unchecked
    names, grads = ", ".join(seed), ", ".join(_grad_name(w) for w in seed)
    if seed and info.get("protocol") == "seed" and info.get("backward_ran") is False:  # no claim unobserved
        lines.append(f"WARNING: backward raised when gradcheck called it after a probe forward, so it could not see "
                     f"whether backward sets {grads}; only the gradient of the input is checked, so the check "
                     "cannot pass (see the verdict).")
    elif seed and info.get("protocol") == "seed":
        lines.append(f"note: {names} {'is a parameter' if len(seed) == 1 else 'are parameters'} with no "
                     f"gradient to check: backward computes no {grads}, so only the gradient of the input is "
                     f"checked. Store {grads} in backward (e.g. self.d{seed[0]}) to have "
                     f"{'it' if len(seed) == 1 else 'them'} checked too.")
    elif unchecked and info.get("protocol") != "seed":
        lines.append(f"WARNING: forward uses {names} but backward sets no gradient attribute for "
                     f"{'it' if len(unchecked) == 1 else 'them'} ({grads}, {_grad_name(unchecked[0], 'grad_')} or "
                     f"{_grad_name(unchecked[0], '', '_grad')}): a weight whose gradient backward forgot, or a constant; "
                     "gradcheck cannot tell which, so the layer is NOT CHECKED as a whole (exit 3) even where the "
                     "other gradients match (--constants names constants).")
    lines += _outside_params_lines(info) + (idle := _idle_zero_lines(info))[0]
    more, buffers = _buffer_lines(info)
    lines += more
    if unseen:
        lines.append(f"WARNING: forward uses the array attribute{'s' * (len(unseen) > 1)} {', '.join(unseen)}, "
                     "not in params: the checker neither perturbs nor checks "
                     f"{'it' if len(unseen) == 1 else 'them'}. Put every weight in params and its gradient in grads; "
                     "gradcheck cannot tell a forgotten weight from a constant, so the layer is NOT CHECKED as a "
                     "whole (exit 3) (--constants names constants).")
    return lines, list(dict.fromkeys(unchecked + unsure + unseen + sub + buffers + idle[1]))


def _idle_zero_lines(info) -> tuple[list[str], list[str]]:
    """The WARNING on the weights forward reads whose output does not move with them on this input and whose gradient
    backward writes as 0 (``info['idle_zero']``, :func:`gradcheck._adapters._idle_weights`), and their names for the
    verdict: no comparison with 0 checks their backward (fix39corpus: an attention checked at a batch of one whose
    mask left each query one key: its Q and K projections were "no parameters", its dquery and dkey compared as 0)."""
    idle = [str(z).partition(": ") for z in info.get("idle_zero") or []]
    if not idle:
        return [], []
    names, grads = [w for w, _, _ in idle], [f"{w.rpartition('.')[0]}.{g}".lstrip(".") for w, _, g in idle]
    one = len(names) == 1
    return [f"WARNING: forward reads {joined_and(names)}, but on this input its output does not move with "
            f"{'it' if one else 'them'}, and backward writes 0 for {joined_and(grads)}: 0 against 0 checks nothing, "
            f"so {'its gradient is' if one else 'their gradients are'} NOT checked, nor the backward path they "
            "share (an input whose gradient is 0 everywhere in the table is on that path too: e.g. the queries and "
            "keys of an attention where each query sees one key). Check at an input where they "
            "move the output (a batch of at least 2, another --seed)."], names


def _outside_params_lines(info) -> list[str]:
    """The header's WARNING for each weight a list-style layer (Deep Learning from Scratch 2's ``params``/``grads``
    lists) keeps outside its ``params`` but gives a gradient by name (``info['outside_params']``, ``["b: db"]``):
    checked by name, never trained by a model collecting ``layer.params`` (review26g M1)."""
    return [f"WARNING: forward uses {w}, which is not in self.params: a model that collects layer.params and "
            f"layer.grads (Deep Learning from Scratch 2's) never updates it. Its gradient self.{g} is checked by name "
            f"here; append self.{w} to self.params and self.{g} to self.grads."
            for w, _, g in (str(p).partition(": ") for p in info.get("outside_params") or [])]


def _nonfinite_init_lines(init: dict[str, Any]) -> list[str]:
    """The header line naming the non-finite numbers ``--init`` gave (NaN, Infinity in its JSON; tester13 M6), so a
    NaN output or gradient is not blamed on the layer's code alone; [] when every number is finite."""
    found: list[str] = []

    def walk(v: Any, path: str) -> None:
        if isinstance(v, float) and not np.isfinite(v) and len(found) < 4:
            found.append(f"{path} = {v}")
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{path}[{k!r}]" if path else str(k))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]")
    walk(init or {}, "")
    if not found:
        return []
    return [f"WARNING: --init gives non-finite numbers ({', '.join(found)}): a NaN or inf in the output or the "
            "gradients may come from them, not from the layer's code."]


def _init_array_lines(init: dict[str, Any], dtype: str = "float64", layer: Any = None) -> list[str]:
    """The header line naming the ``--init`` lists given to the constructor (a CS231n pair: to its forward, corpus38
    F3b) as arrays of ``dtype`` (``--dtype``: :func:`gradcheck._adapters.init_arrays`)."""
    shapes = init_arrays({k: v for k, v in init.items() if not isinstance(v, dict)})[1] if init else {}
    if not shapes:
        return []
    pair = (getattr(layer, "protocol", None) or {}).get("protocol") == "cs231n"
    return ["init: " + ", ".join(f"{k} {V.fmt_shape(s)}" for k, s in shapes.items())
            + f" given to {'the forward function' if pair else 'the constructor'} as {dtype} arrays (from --init's JSON lists)"]


def _unpaired(info, cname: str) -> list:
    """The lines of weights without a checked gradient although backward wrote one: NOT CHECKED (exit 3, nothing
    was found wrong: tester22s) for an array of the weight's shape the checker cannot pair with it
    (``info['ambiguous']``, "W (4, 3): g"); FAIL for a gradient that cannot be checked (a weight of the class or
    module, made anew in every forward, a list). Empty: neither."""
    lines, unsure = [], []
    unknown = [str(w) for w in info.get("unchecked") or []] if info.get("backward_ran") is False else []
    if unknown:  # tester23s H1: the probe's backward raised, so whether it sets their gradients is unknown
        lines.append(f"NOT CHECKED as a whole: {cname}: backward raised when gradcheck called it after its probe "
                     f"forward, so gradcheck could not see whether backward sets the gradient of "
                     f"{', '.join(unknown)} ({', '.join(map(_grad_name, unknown))}); only the gradient of the input "
                     "was compared, so the check can neither pass nor fail.")
    for a in info.get("ambiguous") or []:  # backward writes self.g shaped like W: W's gradient, maybe wrong
        w, _, arrays = str(a).partition(": ")
        name = w.split(" (")[0]
        unsure.append(name)
        lines.append(f"NOT CHECKED as a whole: {cname}: backward writes {arrays}, shaped like {w}, but gradcheck "
                     f"cannot tell that {'it is' if ', ' not in arrays else 'one of them is'} {name}'s gradient: name "
                     f"it {_grad_name(name)} (or {_grad_name(name, 'grad_')}, {_grad_name(name, '', '_grad')}); its "
                     "values are not checked, so the check can neither pass nor fail.")
    for h in info.get("hidden") or []:  # backward writes an array of a class's or the module's weight's shape
        w, _, arrays = str(h).partition(": ")
        if arrays:
            lines.append(f"FAIL: {cname}: forward reads {w}, {_hidden_where(w)}, and backward writes {arrays}, "
                         "of its shape: that gradient cannot be checked, so the check cannot pass.")
    made = [str(r).partition(": ") for r in info.get("recreated") or []]  # self.W made anew in every forward
    if made:
        ws, gs = ", ".join(w for w, _, _ in made), ", ".join(g for _, _, g in made)
        lines.append(f"FAIL: {cname}: forward creates {ws} anew on every call, and backward writes {gs}: perturbing "
                     f"{ws} changes nothing (the next forward replaces it), so {gs} cannot be checked and training "
                     "cannot change the weights; create them once (in __init__, or in forward only while they are "
                     "None), so the check cannot pass.")
    if info.get("rebound"):  # self.grads[0] = dW: a model's list keeps the old array (tester25s H2)
        lines.append(f"FAIL: {cname}: {_rebound_text(info['rebound'])}.")
    lists = [str(r).partition(": ") for r in info.get("lists") or []]  # self.W = [[0.1, ...]]: not an array
    if lists:
        ws, gs = ", ".join(w for w, _, _ in lists), ", ".join(g for _, _, g in lists if g)
        lines.append(f"FAIL: {cname}: forward reads {ws}, Python list{'s' * (len(lists) > 1)} of numbers: gradcheck "
                     f"perturbs and checks numpy arrays only, so {gs + ', written by backward,' if gs else 'their gradients'}"
                     f" cannot be checked; keep the weights as numpy arrays (np.array(...)) to have them checked, so "
                     "the check cannot pass.")
    return lines


def take_constants(layer, spec: str | None) -> list[str]:
    """Read the arrays ``--constants`` names (``"scale,inner.bh"``) as constant buffers (H4): they leave
    ``layer.protocol``'s ``unchecked``/``unseen`` for its ``buffers``, said in the header ("declared a constant by
    --constants"), so neither the check nor the diagnosis asks whether they are weights. A name that is not an array
    forward reads without a gradient is a UsageError (exit 2), unless it is an array or number attribute of the layer
    (``info['attributes']``) that does not move forward's output on this input (corpus38 F6: a mask leaving one key
    per row makes attention's softmax constant, and its scale with it). Returns the names."""
    names = [n.strip().removeprefix("self.") for n in (spec or "").split(",") if n.strip()]
    if spec is not None and not names:
        raise UsageError("--constants needs one or more array attribute names, e.g. --constants scale,mask.")
    info = getattr(layer, "protocol", None)
    if not names or not isinstance(info, dict):
        return names
    lists = {k: [str(w) for w in info.get(k) or []] for k in ("unchecked", "unseen", "buffers")}
    known = [w for ws in lists.values() for w in ws]
    bad = [n for n in names if n not in known]
    weights = set(getattr(layer, "params", None) or ())  # (a weight, its gradient checked, is never a constant)
    idle = [n for n in bad if n in (info.get("attributes") or []) and n not in weights]  # corpus38 F6: Y does not
    # move with it here (an attribute forward reads that moves Y is in unchecked, unseen or buffers)
    bad = [n for n in bad if n not in idle]
    if args_named := [n for n in bad if n in (getattr(layer, "forward_params", None) or [])]:  # newuser36 M2
        a = args_named[0]
        raise UsageError(f"--constants {a}: {a} is an argument of forward, not an array attribute (--constants names "
                         f"attributes such as self.scale). An input without a gradient needs no option: let backward "
                         f"return None in d{a}'s place in its tuple (as PyTorch's autograd.Function does for an input "
                         f"without a gradient), or give {a} as integer indices with --indices POS:HIGH (a 0/1 mask: "
                         f"--indices {list(layer.forward_params).index(a)}:2).")
    if bad:
        raise UsageError(f"--constants {','.join(bad)}: not an array attribute forward reads without a gradient "
                         f"(those are: {', '.join(known) or 'none'}); a constant is an array attribute the layer "
                         "only reads, e.g. --constants scale for self.scale.")
    info["unchecked"], info["unseen"] = ([w for w in lists[k] if w not in names] for k in ("unchecked", "unseen"))
    info["buffers"] = [*lists["buffers"], *(n for n in names if n not in lists["buffers"])]
    info["buffer_why"] = [*info.get("buffer_why", []), *(f"{n}: declared a constant by --constants" + (
        "; forward's output does not move with it on this input" if n in idle else "") for n in names)]
    if isinstance(vars(layer).get("missing_gradients"), list):  # a local (Adapted) layer: what the diagnosis reads
        layer.missing_gradients = [w for w in layer.missing_gradients if w not in names]
    return names


def _not_plain_line(res, cname: str, why: str, checked: str = "") -> str:
    """The NOT CHECKED line of a layer whose backward steps its weights with an optimizer, or never steps them with
    the one ``initialize(optimizer)`` gave it (``why``: the adapter's account, ``info['not_plain_step']``): the input
    gradients matched (``res``'s, or the words ``checked``: the grader's), the weights' could not be read."""
    if not checked:
        tensors = ", ".join(r.tensor for r in res.records if r.kind == "gradient") if res is not None else "dX"
        checked = f"{tensors} matches within rtol={res.rtol:g}, {res.atol_words()}, but"
    return f"NOT CHECKED as a whole: {cname}: {checked} the weights' update could not be checked: {why}"


def _undecided(info, cname: str, grading: bool = False, matched: bool = True) -> str:
    """The NOT CHECKED line of arrays forward reads with no gradient beside weights with theirs
    (:func:`gradcheck._adapters.missing_gradients`: a forgotten gradient or a constant, H4); "" when none. With
    ``grading``, the grader's line: the declaration it offers is the grading test's ``constants=[...]``, not check's
    ``--constants`` (:func:`gradcheck._adapters.undecided_text`), and a backward whose weights' update cannot be
    checked (``info['not_plain_step']``: :func:`_not_plain_line`) is NOT CHECKED as check says it; ``matched``
    False: some checked gradients are wrong (the grader's line beside failed parts)."""
    names = missing_gradients(info)
    checked = "the gradients that were checked match (see above), but" if matched else \
        "besides the gradients that are wrong (see above),"
    if not names:  # the grader reads check's other NOT CHECKED as a whole too (newuser31b F1's leftover)
        why = grading and isinstance(info, dict) and info.get("not_plain_step")
        return _not_plain_line(None, cname, why, checked) if why else ""
    return (f"NOT CHECKED as a whole: {cname}: {checked} gradcheck "
            f"{undecided_text(names, [str(w) for w in info.get('unseen') or []], grading)}.")


def _hidden_where(w: str) -> str:
    """Where a weight the discovery does not read (``info['hidden']``) lies: ``self.params._items[0]`` inside an
    object of the student's, ``ClassLevel.W`` or ``W_glob`` in the layer's class or module."""
    return ("inside an object gradcheck does not read weights from" if w.startswith("self.") else
            "of the layer's class or module, not of the layer")


def _grad_name(w: str, before: str = "d", after: str = "") -> str:
    """The gradient attribute of weight ``w``: ``dW``; a sub-layer's ``l1.W``: ``l1.dW``; a private ``_W``: ``_dW``."""
    path, dot, key = w.rpartition(".")
    head = key[:len(key) - len(key.lstrip("_"))] if key.strip("_") else ""  # a private _W: _dW, as students write
    return f"{path}{dot}{head}{before}{key[len(head):]}{after}"


#: Largest number of input or output elements for ``--jacobian``.
JACOBIAN_MAX = 400


def _jacobian_usage(args, shape) -> None:
    if not isinstance(shape[0], int):
        raise UsageError("--jacobian takes a layer with one input (one --input-shape).")
    n = int(np.prod(shape))
    if n > JACOBIAN_MAX:
        raise UsageError(f"--jacobian is for small layers: X has {n} elements (--input-shape "
                         f"{','.join(map(str, shape))}), at most {JACOBIAN_MAX} are allowed; use a smaller batch "
                         "or fewer features (the Jacobian has X.size * Y.size entries).")
    if not (getattr(args, "tape", False) or args.twin):
        raise UsageError("--jacobian needs a tape: add --tape (your forward on the tape) or --twin.")
    if (low := low_dtype(args)) is not None:  # accepted and ignored, X was drawn float64: a wrong number (session 30)
        raise UsageError(f"--jacobian with --dtype {low}: the Jacobian is drawn in float64 (its central differences "
                         f"compared at rtol 1e-6, which {low}'s round-off, eps {np.finfo(low).eps:.1e}, is far "
                         f"above), so its X cannot be {low}; check in {low} without --jacobian (code {low} "
                         "throughout is then checked on a float64 copy), or drop --dtype for the Jacobian.")


def _no_twin_jacobian(cname: str, twin_note: str) -> str:
    """The usage error of ``--twin --jacobian`` for a class autoprop has no twin of."""
    why = twin_note.strip().rstrip(".") if twin_note else f"autoprop.layers has no {cname}"
    return (f"--jacobian --twin: there is no twin of {cname} to take the Jacobian with ({why}). "
            "Use --tape instead (your own forward run on the tape gives the Jacobian), without "
            "--twin.")


def _jacobian(args, layer, twin, shape, cname, diag):
    """Tape vs numerical Jacobian of a small layer in every mode the check ran: (report lines, passed,
    figures ``[(figure, file name)]``).

    One Jacobian per mode checked (eval, training, or both, as the table's rows), each line and
    figure named by its mode; see :func:`_jacobian_in_mode`.
    """
    X = V.layer_inputs(tuple(shape), np.random.default_rng([args.seed, 3]), cname)[0]
    lines, ok, figs = [], True, []
    # a forward with no training switch has one mode: its line names none (tester18s L6: it said eval), also when
    # it is random (an always-random Dropout: its draws held, which the line says; session 18 said "eval mode")
    one = not diag.other_modes and (getattr(layer, "protocol", None) or {}).get("forward_training") is False
    for d in [diag, *diag.other_modes]:
        if d.error is not None:  # this mode's check stopped: the table and notes say why
            continue
        m_lines, m_ok, fig = _jacobian_in_mode(args, layer, twin, X, cname, d, one)
        lines, ok = lines + m_lines, ok and m_ok
        if fig is not None:
            # one mode: no mode in the file's name either (tester21s L6: SiLU-jacobian-eval.png)
            figs.append((fig, f"{cname}-jacobian.png" if one else f"{cname}-jacobian-{mode_word(bool(d.training))}.png"))
    return lines, ok, figs


def _jacobian_in_mode(args, layer, twin, X, cname, d, one=False):
    """Tape vs numerical Jacobian of a small layer in the mode of the check ``d``: (report lines,
    passed, figure or None); ``one``: the forward has one mode, which the lines do not name.

    Taken after the check: a random forward is held fixed the same way
    (:func:`gradcheck.diagnose.held_forward`); the autoprop twin, which draws its own mask, is then
    not compared (``--tape``'s tape runs the layer's own forward, with the draws held: compared).
    """
    training = bool(d.training)
    mode = mode_word(training)
    where = "" if one else f" in {mode} mode"
    proxy, held = held_forward(layer, [X], cname, training=training)
    if proxy is None:
        return [f"jacobian dY/dX{where}: not compared: the forward is random and its draws could not "
                "be held (see the structural checks)"], True, None
    Y = np.asarray(proxy.forward(X, training=training), dtype=np.float64)
    if Y.size > JACOBIAN_MAX:
        raise UsageError(f"--jacobian is for small layers: Y has {Y.size} elements, at most {JACOBIAN_MAX} "
                         "are allowed; use a smaller --input-shape.")
    if one and (held or d.held):  # what ran: the one forward there is, its draws held
        where = " (your forward with its random draws held: the same draws in every call)"
    if (held or d.held) and not getattr(twin, "same_draws", False):
        return [f"jacobian dY/dX{where}: not compared: the forward is random{'' if one else f' in {mode} mode'} and the "
                "autoprop twin draws its own mask, which gradcheck cannot make the same as yours (--tape takes "
                "the Jacobian of your own forward, with the draws held)"], True, None
    if hasattr(twin, "jacobian"):
        try:
            Jt, how = twin.jacobian(X, training=training, y_shape=Y.shape)
        except TapeUnavailable as exc:  # as without --jacobian: the other checks still run
            return [f"jacobian dY/dX{where}: not compared: {exc}"], True, None
        except GradientShapeError as exc:  # the tape's Y disagrees with the forward's (redteam36 F3): a failure
            return [f"jacobian dY/dX{where}: FAIL: {exc}"], False, None
    else:
        from .plots import tape_jacobian

        Jt, how = tape_jacobian(lambda x: twin(x, training=training), X)
    eps = DEFAULT_EPS if args.eps is None else args.eps
    many = getattr(proxy, "forward_many", None)  # a sandboxed layer: one round trip per 256 forwards
    Jn = numerical_jacobian(lambda x: proxy.forward(x, training=training), X, eps,
                            forward_many=(lambda xs: many(xs, training=training)) if callable(many) else None)
    atol = args.atol if args.atol is not None else default_atol(np.abs(Y).max(initial=0.0), 1.0, eps)
    c = compare(Jt, Jn, "tape-vs-numerical", rtol=args.rtol, atol=atol)
    r, q = np.unravel_index(int(np.argmax(np.abs(Jt - Jn))), Jt.shape) if Jt.size else (0, 0)
    lines = [f"jacobian dY/dX{where} ({Jt.shape[0]} x {Jt.shape[1]}): tape ({how}) vs central "
             f"differences: max relative error {c.max_rel_error:.1e}, max |difference| {c.max_abs_error:.1e} "
             f"(at Y[{int(r)}] / X[{int(q)}] flattened): {'ok' if c.passed else 'FAIL'}"]
    Jm, why = manual_jacobian(proxy, X, Y.shape, training)
    if Jm is None:
        lines.append(f"jacobian dY/dX{where} of your backward: not drawn: {why}")
    else:  # the check's table judges backward; this is what it is at the Jacobian's X (drawn, not a verdict)
        cm = compare(Jm, Jn, "manual-vs-numerical", rtol=args.rtol, atol=atol)
        r, q = np.unravel_index(int(np.argmax(np.abs(Jm - Jn))), Jm.shape) if Jm.size else (0, 0)
        lines.append(f"jacobian dY/dX{where} of your backward (row i: backward of the unit dY e_i) vs central "
                     f"differences: max relative error {cm.max_rel_error:.1e}, max |difference| "
                     f"{cm.max_abs_error:.1e} (at Y[{int(r)}] / X[{int(q)}] flattened): "
                     f"{'agree' if cm.passed else 'differ'}")
    fig = None
    if args.plots:
        from .plots import plot_jacobian

        fig = plot_jacobian(None, None, X, title=cname if one else f"{cname} ({mode} mode)", tape=(Jt, how),
                            numerical=Jn, manual=Jm)
    return lines, c.passed, fig


def manual_jacobian(layer, X: np.ndarray, y_shape: tuple[int, ...], training: bool = False):
    """The Jacobian dY/dX of a layer's own backward: row ``i`` is ``backward(e_i)`` after a fresh ``forward(X)``,
    ``e_i`` the ``i``-th unit upstream gradient of ``Y``'s shape (``Y`` and ``X`` flattened).

    Parameters
    ----------
    layer : object
        The layer as the check calls it (:func:`gradcheck.diagnose.held_forward`'s proxy: its draws held).
    X : ndarray
        The input, shape ``x_shape``.
    y_shape : tuple of int
        Forward's output shape at ``X``.
    training : bool, default False
        The mode of each forward.

    Returns
    -------
    J : ndarray of float64, shape (prod(y_shape), X.size), or None
    why : str
        "" with ``J``; with None, why none: backward raised or returned no array of ``X``'s shape.
    """
    rows = []
    for i in range(int(np.prod(y_shape, dtype=np.int64))):
        e = np.zeros(y_shape)
        e.flat[i] = 1.0
        try:
            layer.forward(X.copy(), training=training)
            g = layer.backward(e)
        except Exception as exc:  # noqa: BLE001 - the check reports the student's error itself
            return None, f"backward raised {type(exc).__name__} (see the check above)"
        if not isinstance(g, np.ndarray) or g.shape != X.shape:
            return None, f"backward returned no array of X's shape {V.fmt_shape(X.shape)} (see the check above)"
        rows.append(np.asarray(g, dtype=np.float64).ravel())
    return np.array(rows).reshape(len(rows), X.size), ""


def _json_default(o):
    if isinstance(o, (np.integer, np.floating)):
        return None if not np.isfinite(o) else o.item()
    return list(o) if isinstance(o, (tuple, set)) else str(o)


#: ``outcome`` of ``check --json`` for each exit code (:mod:`gradcheck.errors`; 130/143: Ctrl-C/SIGTERM).
JSON_OUTCOMES = {0: "pass", 1: "fail", 2: "usage error", 3: "not checked", 130: "stopped", 141: "stopped",
                 143: "stopped", None: "internal error"}


class JsonReport:
    """What ``gradcheck check --json FILE`` leaves in FILE: one report of THIS run, written whatever its end (newuser35
    H1: a run that ended without a verdict, exit 3, or in a traceback left the previous run's ``"passed": true`` in
    place, which a script then read). As pytest's ``--junitxml`` and Gradescope's ``results.json`` do, every run
    writes its report, an error too, and writes it atomically (a temporary file beside FILE moved onto it:
    :func:`gradcheck._jsonfile.write_json`), so no earlier report and no half-written one can be read.

    Parameters
    ----------
    path : str
        FILE, the ``--json`` option.

    Notes
    -----
    The JSON: the check's diagnosis (``Diagnosis.to_dict`` or a loss's result, as before) when it got that far, the
    first check's at the top level and those of a function pair's other keyword values (``--init`` ...) in
    ``other_checks``; and always ``exit_code`` (int, None for an internal error), ``outcome`` (:data:`JSON_OUTCOMES`),
    ``passed`` (``exit_code == 0``: the verdict, not only the gradients', e.g. False for NOT CHECKED) and
    ``message`` (the error's paragraph, or None).
    """

    def __init__(self, path: str):
        self.path, self.payloads, self.message = path, [], None

    def add(self, payload: Mapping) -> JsonReport:
        """Keep one check's ``payload`` (its diagnosis); returns self."""
        self.payloads.append(dict(payload))
        return self

    def error(self, exc: BaseException) -> None:
        """Keep the run's error ``exc`` as ``message`` (the first one: the one that ended the check)."""
        if self.message is None:
            from .errors import GradcheckError

            self.message = str(exc) if isinstance(exc, GradcheckError) else f"{type(exc).__name__}: {exc}"

    def write(self, code: int | None = EXIT_PASS) -> None:
        """Write the report for exit ``code`` (None: gradcheck itself failed) atomically; OSError if it cannot."""
        from pathlib import Path

        from ._jsonfile import write_json

        first, *rest = self.payloads or [{}]
        data = {**first, **({"other_checks": rest} if rest else {}), "passed": code == EXIT_PASS, "exit_code": code,
                "outcome": JSON_OUTCOMES.get(code, "error"), "message": self.message}
        if first.get("passed") is True and code != EXIT_PASS:
            data["gradients_passed"] = True  # the gradients matched; the verdict (above) is not a PASS
        write_json(Path(self.path), json.loads(json.dumps(data, default=_json_default)))

    def finish(self, code: int | None) -> None:
        """:meth:`write` at the end of the run, saying ``json: FILE`` when no check printed it; a report that cannot
        be written (its folder gone) is said on stderr, the exit code stands."""
        try:
            self.write(code)
        except OSError as exc:
            print(V.wrap(f"gradcheck: warning: --json {self.path} could not be written ({exc.strerror or exc})"),
                  file=sys.stderr)
            return
        if not self.payloads and code != EXIT_USAGE:  # a usage error says all on stderr
            print(f"json: {os.path.abspath(self.path)}")


def _figures(res, cname: str, heatmaps: list[str]) -> list:
    """``[(make figure, file name)]``: the result's errors, and a heatmap per tensor in ``heatmaps``."""
    from .plots import plot_gradient_heatmaps, plot_result

    return [(lambda: plot_result(res), f"{cname}.png")] + [
        (lambda t=t: plot_gradient_heatmaps(res, t), f"{cname}-{t}-heatmap.png") for t in heatmaps]


def _save(args, figures, payload) -> None:
    """Write ``figures()`` into ``--plots`` and ``payload()`` as ``--json``; print where they went. Each figure's name
    holds names checked code chose: one plain file name inside ``--plots`` (:func:`gradcheck.plots.safe_file_name`;
    redteam28 F1); a figure that cannot be drawn is a warning, never the verdict's exit code (F2)."""
    written = []
    if args.plots:
        from .plots import safe_file_name, save_figure

        taken: set[str] = set()
        for make, name in figures():
            file = safe_file_name(name, taken)
            try:
                written.append(save_figure(make(), os.path.join(args.plots, file)))
            except OSError:
                raise  # --plots cannot be written: as before
            except Exception as exc:  # noqa: BLE001 - a figure matplotlib cannot draw: said, the verdict stands
                print(V.wrap(V.printable(f"gradcheck: warning: the plot {file} could not be drawn "
                                         f"({type(exc).__name__}: {exc}); the verdict is not changed by it")),
                      file=sys.stderr)
    if args.json:
        report = getattr(args, "json_report", None)
        if report is not None:  # written once the run's exit code is known (gradcheck.cli.main): JsonReport.finish
            report.add(payload())
        else:  # a caller without gradcheck.cli.main: this check's payload, atomically
            JsonReport(args.json).add(payload()).write()
    if written:
        print(f"\nplots: {', '.join(os.path.abspath(w) for w in written)}")
    if args.json:
        print(f"json: {os.path.abspath(args.json)}")


# --------------------------------------------------------------------------- losses (--loss)

#: Kinds of ``--targets`` (``y_true``) and ``--pred`` (``y_pred``) for ``gradcheck check --loss``.
TARGET_KINDS, PRED_KINDS = ("labels", "onehot", "probs", "real", "unit"), ("real", "probs", "unit")


def parse_kind(spec: str, kinds: tuple[str, ...], flag: str) -> tuple[str, int | None]:
    """``"labels:5"`` -> ``("labels", 5)``, ``"real"`` -> ``("real", None)``; UsageError for an unknown kind or K < 2."""
    kind, _, count = str(spec).strip().partition(":")
    if "@" in count:
        raise UsageError(f"{flag} {spec!r}: '@SHAPE' gives the shape of a model's targets t (without --loss); "
                         "with --loss, y_true's shape follows --input-shape.")
    if kind not in kinds:
        raise UsageError(f"{flag} must be one of {', '.join(kinds)} (labels and onehot may add ':K' classes); "
                         f"got {spec!r}.")
    if not count:
        return kind, None
    if kind not in ("labels", "onehot"):
        raise UsageError(f"{flag} {kind} takes no ':K'; only labels:K and onehot:K do (got {spec!r}).")
    k = int(count) if count.strip().isdigit() else 0
    if k < 2:
        raise UsageError(f"{flag} {spec!r}: the number of classes K must be an integer >= 2.")
    return kind, k


def model_targets(targets, seed, shape):
    """``(t, its description)`` for ``--targets`` without ``--loss``: a model ``forward(x, t) -> loss`` (Deep Learning
    from Scratch vol. 2), ``t`` drawn as ``--loss`` draws y_true (:func:`gradcheck.check_command.loss_data`) for
    the batch of the first input (``shape``, one per input or the one), ``seed`` ``--seed``; None without ``--targets``.
    UsageError unless labels:K or onehot:K, or a real (probs, unit) kind with ``@`` and t's shape. The one reader of
    ``--targets`` for a model: ``gradcheck check`` and the grading API's ``student.layer(..., targets=...)``."""
    if not targets:
        return None
    spec, at, given = str(targets).partition("@")
    kind, k = parse_kind(spec, ("labels", "onehot", "real", "probs", "unit"), "--targets")
    if kind in ("real", "probs", "unit") and at:  # Nielsen's y (n_out, m): real@2,4 (newuser30 F2)
        try:
            tshape = V._parse_shape(given)
        except (UsageError, ValueError):
            raise UsageError(f"--targets {targets}: after '@' comes the shape of t, sizes separated by commas, "
                             f"e.g. --targets {spec}@2,4; got {given!r}.") from None
        t, _, what = loss_data(spec, "real", tuple(tshape), seed)
        return t, f"--targets {targets}: {what.removeprefix('y_true: ')}"
    if kind not in ("labels", "onehot") or k is None:
        raise UsageError(f"--targets {targets} without --loss: a model forward(x, t) -> loss takes its targets "
                         "as labels:K or onehot:K (K classes), e.g. gradcheck check model.py::TwoLayerNet "
                         "--input-shape 8,4 --targets labels:3, or as real@SHAPE (probs@SHAPE, unit@SHAPE) with t's "
                         "shape, e.g. --targets real@2,4 for Nielsen's network, y of shape (2, 4); for a loss class, "
                         "add --loss.")
    if at:  # tester25s M6: Rnnlm's token input (N, T) takes t of shape (N, T)
        try:
            batch = V._parse_shape(given)
        except (UsageError, ValueError):
            raise UsageError(f"--targets {targets}: after '@' comes the shape of t (without a one-hot's class "
                             f"axis), sizes separated by commas, e.g. --targets {spec}@8,5; got {given!r}.") from None
    else:
        batch = (shape[0] if isinstance(shape[0], int) else shape[0][0],)
    t, _, what = loss_data(spec, "real", (*batch, k), seed)
    return t, f"--targets {targets}: {what.removeprefix('y_true: ')}"


def loss_data(targets: str, pred: str, shape: tuple[int, ...], seed: int,
              dtype: str | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """``(y_true, y_pred, description)`` for ``--loss``: the kinds of ``--targets`` and ``--pred`` (help in
    :mod:`gradcheck.cli`), ``y_pred`` of ``shape`` (rounded to ``dtype`` when given: ``--dtype float32``, the input
    drawn as :func:`gradcheck._validation.layer_inputs` draws a layer's), seeds ``[seed, 4]`` and ``[seed, 5]``;
    UsageError for kinds that do not fit the shape."""
    tkind, k = parse_kind(targets, TARGET_KINDS, "--targets")
    pkind, _ = parse_kind(pred, PRED_KINDS, "--pred")
    rp, rt = np.random.default_rng([seed, 4]), np.random.default_rng([seed, 5])
    last = shape[-1]

    y_pred = {"real": lambda: rp.standard_normal(shape), "probs": lambda: softmax(rp.standard_normal(shape)),
              "unit": lambda: rp.uniform(0.05, 0.95, shape)}[pkind]().astype(dtype or np.float64)
    if tkind in ("labels", "onehot"):
        K = last if k is None else k
        if tkind == "onehot" and K != last:
            raise UsageError(f"--targets onehot:{K}: y_pred's last axis has {last} entries (--input-shape "
                             f"{','.join(map(str, shape))}); the one-hot rows must have as many.")
        if K > max(last, 2):  # labels past the class axis (tester15 L2): the loss would index out of range
            raise UsageError(f"--targets labels:{K}: y_pred's last axis, the classes, has {last} entries "
                             f"(--input-shape {','.join(map(str, shape))}), so labels up to {K - 1} would index "
                             f"past it; give labels:{last} (or labels: K is then read from the shape), or an "
                             f"--input-shape whose last axis is {K} (labels:2 alone fills y_pred's shape with "
                             "0/1 labels).")
        labels = rt.integers(0, K, size=shape[:-1] if K == last else shape)
        if tkind == "labels":
            return labels, y_pred, f"y_true: {K}-class labels of shape {tuple(labels.shape)}"
        return np.eye(K)[labels], y_pred, f"y_true: one-hot rows of {K} classes"
    y_true = {"probs": lambda: softmax(rt.standard_normal(shape)), "real": lambda: rt.standard_normal(shape),
              "unit": lambda: rt.uniform(0.05, 0.95, shape)}[tkind]()
    return y_true, y_pred, f"y_true: {tkind} of shape {tuple(shape)}"


def data_options(y_true: Any, y_pred: Any) -> list[str]:
    """The ``--targets`` and ``--pred`` options under which :func:`loss_data` draws data of the kinds of ``y_true`` and
    ``y_pred`` (the grader's), for a command a student can run as printed (newuser26 M4: the grader's "run: gradcheck
    check ... --loss" for a cross-entropy graded on class labels omitted ``--targets labels``, and the command
    exited 3 on its default real targets). The default kind (real) is left out.

    Kinds: integer ``y_true`` of ``y_pred``'s shape less its last axis, in ``[0, K)``, K that axis: ``labels``; of
    ``y_pred``'s shape: ``labels:K``, K its largest value + 1 (at least 2); floats of ``y_pred``'s shape: ``onehot``
    (0/1 rows summing to 1), ``probs`` (rows of non-negative entries summing to 1, to 1e-9), ``unit`` (all in (0,
    1)), else real; ``y_pred`` the same kinds but the first two.

    >>> data_options(np.array([0, 2, 1]), np.zeros((3, 4)))
    ['--targets', 'labels']
    >>> data_options(np.eye(3)[[0, 2]], np.full((2, 3), 1 / 3))
    ['--targets', 'onehot', '--pred', 'probs']
    >>> data_options(np.array([[0, 1], [1, 1]]), np.full((2, 2), 0.3))
    ['--targets', 'labels:2', '--pred', 'unit']
    """
    t, p = np.asarray(y_true), np.asarray(y_pred, dtype=np.float64)

    def kind(a: np.ndarray) -> str:
        with np.errstate(invalid="ignore"):
            rows = a.ndim >= 1 and a.size > 0 and np.all(a >= 0) and sums_to_one(a)
            if rows and np.all((a == 0) | (a == 1)):
                return "onehot"
            if rows:
                return "probs"
            return "unit" if a.size and np.all((a > 0) & (a < 1)) else "real"

    out = []
    if t.dtype.kind in "iub" and p.ndim >= 1 and t.size:
        last = p.shape[-1]
        if t.shape == p.shape[:-1] and t.min() >= 0 and t.max() < last:
            out = ["--targets", "labels"]
        elif t.shape == p.shape and t.min() >= 0:
            out = ["--targets", f"labels:{max(int(t.max()) + 1, 2)}"]
    elif t.shape == p.shape and (tk := kind(t.astype(np.float64))) != "real":
        out = ["--targets", tk]
    pk = kind(p) if p.size else "real"
    return out + (["--pred", pk] if pk in ("probs", "unit") else [])


def finite_loss_data(args, loss, shape, text: str) -> UsageError | None:
    """When a loss's forward gave NaN or inf on the data ``--pred``/``--targets`` left at their default (real
    numbers) but is finite on probabilities and class labels (Neural Networks from Scratch's
    ``Loss_CategoricalCrossentropy``: the log of a negative number, tester12 M8): the usage error naming the
    options that give it data it is defined on, the first of ``--pred`` probs, unit by ``--targets`` labels:K,
    onehot:K, probs, unit that gives a finite L; None when none does (a NaN whatever the data is a wrong result)."""
    k = shape[-1] if len(shape) > 1 else 2
    preds = [args.pred] if args.pred else ["probs", "unit"]
    targets = [args.targets] if args.targets else [f"labels:{k}", f"onehot:{k}", "probs", "unit"]
    if args.pred and args.targets:
        return None
    for pred in preds:
        for tk in targets:
            try:
                y_true, y_pred, _ = loss_data(tk, pred, shape, args.seed)
                if np.all(np.isfinite(np.asarray(loss.forward(y_true, y_pred), dtype=np.float64))):
                    break
            except Exception:  # noqa: BLE001 - data this loss does not take: the next kind
                continue
        else:
            continue
        given = [f"--pred {args.pred or 'real'}"] * (not args.pred) + [f"--targets {args.targets or 'real'}"] * (
            not args.targets)
        cmd = f"gradcheck check {args.target} --loss --input-shape {args.input_shape} --pred {pred} --targets {tk}"
        return UsageError(f"{text.rstrip('.')}. That was on the default data ({', '.join(given)}: standard-normal "
                          f"numbers, negative ones too), on which a loss of probabilities is undefined; forward is "
                          f"finite on y_pred {pred} and y_true {tk}: {cmd}")
    return None


def batch_last_loss(args, loss, shape, text: str) -> UsageError | None:
    """When a loss's forward gave NaN or inf on 2-D probabilities (``--pred probs``) with one-hot or probability
    targets, the classes on the last axis as gradcheck draws them, but is finite on the same data with the classes on
    axis 0 (MIT 6.036's ``NLL.forward(Ypred, Y)``, Ypred of shape (classes, batch): ``np.max(Y * Ypred, axis=0)`` is
    0 in a column without the label, tester27s L1): the usage error saying the loss is written batch-last and how to
    check it, not "log of 0" in forward. None otherwise."""
    if len(shape) != 2 or args.pred != "probs" or not (args.targets or "").startswith(("onehot", "probs")):
        return None
    try:
        y_true, y_pred, _ = loss_data(args.targets, "probs", shape[::-1], args.seed)
        if not np.all(np.isfinite(np.asarray(loss.forward(y_true.T.copy(), y_pred.T.copy()), dtype=np.float64))):
            return None
    except Exception:  # noqa: BLE001 - the transposed data is no better: the error stands
        return None
    cls = args.target.rpartition("::")[2]
    a, b = (m[1].split(", ") + ["a", "b"])[:2] if (m := re.search(r"\.forward\(self, (\w+, \w+)\)", text)) else ("a", "b")
    text = text.replace(" Check for division by zero, log of 0, or exp overflow.", "")  # not forward's fault here
    return UsageError(
        f"{text.rstrip('.')}. That was on y_pred {shape[0]}x{shape[1]} with the classes on its last axis (each row a "
        f"probability vector and each target row one-hot), as gradcheck draws them; forward is finite with the classes "
        f"on axis 0 (each column a probability vector, y_pred of shape (classes, batch), MIT 6.036's layout), so the "
        f"loss is written batch-last and its infinity comes from the layout, not from forward. gradcheck puts the "
        f"classes on the last axis: check it through a subclass that transposes, class {cls}T({cls}): def forward(self, "
        f"{a}, {b}): return super().forward({a}.T, {b}.T); def backward(self): return super().backward().T (--input-shape "
        f"BATCH,CLASSES)")


def one_column_probs(args, loss, shape, text: str) -> UsageError | None:
    """When a loss's forward gave NaN or inf on ``--pred probs`` of one column (``--input-shape N,1``): softmax rows of
    one entry are all 1.0, so a binary cross-entropy's ``log(1 - p)`` is ``-inf`` (newuser29 L3: "wrong result ... log
    of 0" about a correct loss). The usage error saying so and naming ``--pred unit`` (uniform in [0.05, 0.95], one
    probability per entry), with whether forward is finite there; None for another shape or ``--pred``."""
    if args.pred != "probs" or not shape or shape[-1] != 1:
        return None
    cmd = (f"gradcheck check {args.target} --loss --input-shape {args.input_shape} --pred unit"
           + (f" --targets {args.targets}" if args.targets else ""))
    try:
        y_true, y_pred, _ = loss_data(args.targets or "real", "unit", shape, args.seed)
        finite = bool(np.all(np.isfinite(np.asarray(loss.forward(y_true, y_pred), dtype=np.float64))))
    except Exception:  # noqa: BLE001 - the loss fails on that data too: said without the promise
        finite = False
    text = text.replace(" Check for division by zero, log of 0, or exp overflow.", "")  # not forward's fault here
    return UsageError(
        f"{text.rstrip('.')}. --pred probs draws y_pred as softmax rows over its last axis, and a row of one column is "
        f"1.0 everywhere (1 - p = 0, whose log is -inf): for one probability per entry (a sigmoid's output, a binary "
        f"cross-entropy's p) use --pred unit (uniform in [0.05, 0.95])"
        + (f"; forward is finite there: {cmd}" if finite else f": {cmd}"))


def run_check_loss(args, loss, label: str, init: dict[str, Any], shape) -> int:
    """``gradcheck check --loss``: a (sandboxed) loss's ``backward()`` against central differences; a function
    returning several gradients (``--wrt a,b``, :func:`gradcheck._adapters.gradient_args`) has each checked in turn,
    its own table and verdict each.

    Arguments as :func:`run_check`, ``shape`` that of ``y_pred``; returns the exit code (0 pass, 1 mismatch), the
    worst of the gradients'."""
    if not isinstance(shape[0], int):
        raise UsageError("--loss takes one --input-shape (the shape of y_pred), not several.")
    info = getattr(loss, "protocol", None) or getattr(loss, "info", None) or {}
    wrt = list(info.get("wrt") or [])
    if wrt:
        args.wrt_load = {"wrt": wrt}  # the copy without a log's eps (_log_eps) is loaded the same
    codes = []
    for k in range(max(1, len(wrt))):
        if k:
            print(f"\n{'=' * 20} gradient {k + 1} of {len(wrt)}: d{wrt[k]}\n")
            args.wrt_load = {"wrt": wrt, "wrt_active": k}
        codes.append(_run_check_loss(args, loss if not k else loss.loaded_with(init, wrt_active=k), label, init,
                                     shape, info.get("wrt_how") or ""))
    return max(codes)


def _wrt_point(loss, init: dict[str, Any], y_pred: np.ndarray) -> tuple[np.ndarray, str, str]:
    """``(the point checked, the header's words, where it came from)`` of a ``(loss, grad, ...)`` function of several arguments
    (:func:`gradcheck._adapters.objective`): its first argument's data (``y_pred``, of ``--input-shape``) when the
    gradient checked is the first's, else the value ``--init`` gives the argument checked (``--wrt theta``); words
    empty for a loss of a prediction and a target."""
    info = getattr(loss, "protocol", None) or getattr(loss, "info", None) or {}
    if not getattr(loss, "objective", False) or not info.get("wrt"):
        return y_pred, "", ""
    wrt, k, first = info["wrt"], int(info.get("wrt_active") or 0), info.get("first_arg")
    checked = wrt[k]
    nth = f" (returned {_ORDINALS[k + 1] if k < 9 else k + 1}, of {len(wrt)} gradients)" if len(wrt) > 1 else ""
    fixed = ", ".join(n for n in init if n != checked)
    if checked == first:
        return y_pred, (f"a function of {checked} alone: the gradient of {checked}{nth} is checked, {fixed} fixed as "
                        "--init gives them"), ""
    return np.array(init[checked], dtype=np.float64), (
        f"the gradient of {checked}{nth} is checked there, {first} fixed at data of shape "
        f"{V.fmt_shape(y_pred.shape)} (--input-shape, real), {', '.join(n for n in init if n != checked) or 'nothing'} "
        "fixed as --init gives them"), "the value --init gives"


_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth",
             9: "ninth"}


def _run_check_loss(args, loss, label: str, init: dict[str, Any], shape, how: str = "") -> int:
    """One gradient of :func:`run_check_loss`, its table and verdict; ``how``: how a (loss, grad, ...) function's
    gradients' arguments were told (``--wrt``, or their shapes). A loss given ``--dtype float32`` (or float16) whose
    files declare that dtype where it runs is checked as such a layer is (:func:`_in_float64`): on a float64 copy of
    its files (:func:`gradcheck._float64_copy.float64_texts`) given float64 ``--init`` arrays and the same y_pred in
    float64, every later step (the eps's copy, the re-checks) on that copy, its own low-precision backward compared
    with the copy's (:func:`_loss_own_low`; session 30: a float32 loss was judged on its own float32 noise). A copy
    that cannot be loaded leaves the loss's own check, with a note saying why."""
    from ._float64_copy import float64_texts, reached_places, where_words

    low, path, cls = low_dtype(args), *label.rpartition("::")[::2]
    load = getattr(args, "load_edited", None)
    texts, places = float64_texts(path, check_files(args, path), cls, half=low == "float16") if low and load \
        else ({}, [])
    places = reached_places(path, cls, check_files(args, path), places) if texts else []
    if not places and low and load and _init_lists(args):  # float32 from --init's arrays alone (self.d.astype(
        texts, places = {}, [_as_given(low)]  # self.w.dtype)): its files as they are, given float64 (session 31)
    if not places:  # float64 code (y_pred is upcast): its own verdict
        return _check_loss_at(args, loss, label, init, shape, how)
    with contextlib.ExitStack() as stack:
        try:
            edited = stack.enter_context(load(texts))
        except Exception as exc:  # noqa: BLE001 - the copy is a probe: if it cannot load, the loss's own check, said
            failed = exc
        else:
            stack.enter_context(_float64_edits(args, texts, low == "float16"))
            return _check_loss_at(args, edited, label, init, shape, how, (loss, where_words(places), low))
    print(V.wrap("note: " + _find("copy-failed", what=f"{cls}'s {low} code on a float64 copy of its files",
                                  where=", ".join(sorted(texts)), severity="info",
                                  why=f"{type(failed).__name__}: {failed}".strip().splitlines()[0]).sentence()))
    return _check_loss_at(args, loss, label, init, shape, how)


@contextlib.contextmanager
def _float64_edits(args, f64: dict[str, str], half: bool):
    """While inside, ``args.load_edited(texts)`` (the eps's copy of :mod:`gradcheck._log_eps`) loads ``texts`` written
    float64 over the float64 copy ``f64`` (as :func:`_removed_eps` writes a float32 layer's), so the steps a loss's
    check takes on edited copies see the float64 copy's code, not the float32 original's."""
    from ._float64_copy import float64_text

    load = args.load_edited
    args.load_edited = lambda texts: load({**f64, **{k: (float64_text(t, half) or (t,))[0] for k, t in texts.items()}})
    try:
        yield
    finally:
        args.load_edited = load


def _loss_own_low(own, copy, data, passed: bool, cname: str) -> tuple[str, Finding | None]:
    """A float32 (or float16) loss checked on its float64 copy ``copy`` (:func:`_run_check_loss`; ``own``: ``(the loss
    as written, where it declares its dtype, that dtype)``): the note (the "float64-copy" finding) and, when the copy's
    check ``passed``, the loss's own forward and backward at ``data`` (y_true, and y_pred in its dtype) against the
    copy's there (y_pred in float64), compared within that dtype's round-off
    (:func:`gradcheck._float64_copy.own_differences`, as a layer's :func:`_own_float32`): a gradient that differs is a
    "float32-own" FAIL, a value L that differs "float32-forward", a run that raised "float32-not-compared" (NOT
    CHECKED)."""
    from ._float64_copy import low_tolerance, own_differences

    loss, where, low = own
    tol, g = low_tolerance(low), loss_gradient_name(loss)
    if not passed:
        return _loss_note(cname, where, low, ""), None
    y_true, y_pred = (np.asarray(a) for a in data)
    try:
        (L, mine), (L64, theirs) = ((float(x.forward(y_true.copy(), y_pred.astype(dt))),
                                     np.asarray(x.backward(), dtype=np.float64)) for x, dt in ((loss, low), (copy, np.float64)))
    except Exception as exc:  # noqa: BLE001 - its own run is a probe: what stopped it is said
        return _loss_note(cname, where, low, ""), _find(
            "float32-not-compared", None, cls=cname, dtype=low, fix=f"check {cname} with its dtypes written float64 "
            "(dtype='d') yourself", why=f"its own {low} forward or backward raised {type(exc).__name__}: "
            f"{str(exc).strip()[:200]}")
    if not close(np.array(L), np.array(L64), tol, tol * abs(L64)):
        return _loss_note(cname, where, low, ""), _find(
            "float32-forward", "L", cls=cname, dtype=low, out="L", rel=float(relative_error(L, L64)), tol=tol,
            how=f"{L / L64:.6g} times" if L64 else "other values than")
    found = [_find("float32-own", g, cls=cname, dtype=low, rel=rel, tol=tol,
                   how=f"{c:.3g} times" if c is not None else "other values than")
             for _, rel, c in own_differences({g: mine}, {g: theirs}, low)]
    if found:
        return _loss_note(cname, where, low, ""), found[0]
    return _loss_note(cname, where, low, f". Its own {low} backward, run at the same {loss_arg_names(loss)[0]}, gives the copy's "
                                         f"gradient within {low}'s round-off (tolerance {tol:.1e})"), None


def _loss_downcast(args, label: str, pred: str, finding: Finding | None) -> Finding | None:
    """The diagnosis of a loss given float64 (no ``--dtype``) whose check failed while its source converts to float32
    or float16 (:func:`gradcheck._float64_copy.cast_lines`): a downcast, as a layer's (:func:`_downcast_where`), whose
    FAIL stands; a diagnosis read from the noise ("no known bug pattern ... expected" the noisy estimate, or none) is
    replaced by "float32-loss", naming the line and ``--dtype``; a bug named stays, ``finding`` as it is."""
    from ._float64_copy import cast_lines, where_words

    if low_dtype(args) is not None or finding is not None and finding.code not in ("wrong-values", "numerical-noise"):
        return finding
    path, _, cls = label.rpartition("::")
    lines = cast_lines(path, cls, check_files(args, path))
    if not lines:
        return finding
    low = "float16" if any(w in ln for ln in lines for w in ("float16", "half")) else "float32"
    return _find("float32-loss", None, cls=cls, pred=pred, where=where_words(lines), **_precision(low))


def _low_verdict(cname: str, found: Finding, color: bool) -> int:
    """The verdict of a float32 loss whose copy passed and whose own code differs from it (:func:`_loss_own_low`):
    FAIL naming the tensor, or NOT CHECKED (exit 3) when it could not be compared; the finding is the diagnosis."""
    if found.code == "float32-not-compared":
        print(colorize("\n" + V.wrap(f"NOT CHECKED: {cname}: {found.message}."), color))
        return EXIT_STUDENT
    print(colorize(f"\nFAIL: {cname}: its own code gives another {found.tensor} than its float64 copy, which "
                   "passed.", color))
    print(V.wrap(f"diagnosis: {found.message}."))
    return EXIT_MISMATCH


def _loss_note(cname: str, where: str, low: str, own: str) -> str:
    """The "float64-copy" note of a loss checked on its float64 copy, ending with ``own``."""
    return "note: " + _find("float64-copy", None, severity="info", cls=cname, where=where, own=own,
                            **_precision(low), **_computes(cname, low, where)).sentence()


def _check_loss_at(args, loss, label: str, init: dict[str, Any], shape, how: str = "", own=None) -> int:
    """:func:`_run_check_loss` on ``loss`` as given, or (``own``) on the float64 copy of a float32 loss, its y_pred
    then float64 (the values drawn in ``--dtype``) and its own backward compared (:func:`_loss_own_low`)."""
    from ._log_eps import better_finding
    cname, (twin, twin_note) = label.rpartition("::")[2], _twin(args, loss, "loss", init)
    y_true, y_pred, what = loss_data(args.targets or "real", args.pred or "real", shape, args.seed, low_dtype(args))
    y_pred = y_pred.astype(np.float64) if own else y_pred  # the copy at the point the loss is given, in float64
    y_pred, wrt_what, drawn = _wrt_point(loss, init, y_pred)
    shape = y_pred.shape
    reference = build_reference(args.reference, init, args.seed, loss, label.rpartition("::")[2],
                                getattr(args, "reference_init", None)) if args.reference else None
    try:
        res = check_loss(loss, y_true, y_pred, twin=twin, seed=args.seed, rtol=args.rtol, atol=args.atol,
                         eps=args.eps, name=cname, reference=reference)
    except StudentCodeError:  # the shape FAIL stands (exit 1); the gradient of the one element is told too (fixd26)
        if (line := _squeezed_loss_line(args, loss, (y_true, y_pred), init, (twin, reference, cname))) is not None:
            print(V.wrap(line), flush=True)
        raise
    if args.twin and twin is None:  # not "add --twin": it was given
        res.twin_note = twin_note
    res, eps_note, eps_info, eps_finding = _loss_eps_reading(  # tester14: the same verdict on every seed
        args, label, res, (y_true, y_pred), twin, reference)
    # checked again where forward treats the data apart: predictions around its bounds (tester22s H4), inside a
    # clip close to 0 or 1 (at a step that stays there), targets equal to the constants it compares them with
    for again in (_loss_straddled, _loss_clipped_edge, _loss_at_target_constants, _loss_other_batch):
        if res.passed and (st := again(args, loss, (y_true, y_pred), (twin, reference, cname))) is not None:
            line, res2, (y_true, y_pred) = st
            res = res2 or res
            eps_note = f"{eps_note}\n{line}" if eps_note else line
    color, prec = use_color(), loss_precision(loss, res, y_true, y_pred)  # float32 inside (tester29s H3)
    low_note, low_found = _loss_own_low(own, loss, (y_true, y_pred), res.passed, cname) if own else ("", None)
    pred, target = loss_arg_names(loss)  # a CS231n loss(x, y): its own names (tester17 M3)
    what = f"{target}{what[len('y_true'):]}" if what.startswith("y_true") else what
    if getattr(loss, "objective", False):  # svm_loss_naive(W, X, y, reg): X, y, reg from --init (tester23s M4)
        what = wrt_what or (f"a function of {pred} alone: the gradient of {pred} is checked, {', '.join(init)} fixed "
                            "as --init gives them")
    print(V.printable(f"{label} (loss), {pred} shape {V.fmt_shape(shape)} ({drawn or args.pred or 'real'}), {what}"
                      + (f", init {json.dumps(init)}" if init else "") + f", dtype {low_dtype(args) or 'float64'}"
                      + isolation_words(args)))
    if how:
        print(V.wrap(f"whose gradient: {', '.join((getattr(loss, 'protocol', None) or {}).get('wrt') or [])}, "
                     + ("as " + how + " says" if how.startswith("--wrt") else how + " (--wrt names them otherwise)")))
    for line in _loss_lines(loss, res) + [x for x in (low_note, eps_note, res.passed and _branch_note(label, target, args),
                                                      cache_rewritten_line(loss, (y_true, y_pred), True),
                                                      _zero_strengths(loss, init)) if x]:
        print(V.wrap(line))
    print()
    print(colorize(res.table(), color))
    finding, g = None, loss_gradient_name(loss)
    value_only = _value_only(res, g, shape[0] if len(shape) > 1 else 1)
    if value_only is not None or prec is not None:
        finding = prec or value_only[1]
    elif not res.passed and "numerical" in res.gradients and "manual" in res.gradients:
        finding = better_finding(loss_finding(loss, res, y_true, y_pred, init=init, reference=reference),
                                 eps_finding)  # the eps's copy
    finding = _loss_downcast(args, label, pred, finding) if not res.passed and not own else finding
    if not res.passed and (finding is None or finding.code == "wrong-values"):  # newuser44 F7
        finding = _targets_kind(args, loss, (y_true, y_pred), (twin, reference, cname), g) or finding
    _save(args, lambda: _figures(res, cname, [] if res.passed else [loss_gradient_name(loss)]),
          lambda: {**res.to_dict(), "log_eps": eps_info, "diagnosis": None if finding is None else vars(finding)})
    if (line := _vacuous_line([res], cname)) is not None:  # review24g: a loss's atol too (it printed FAIL of nothing)
        print(colorize("\n" + V.wrap(line), color))
        return EXIT_STUDENT
    if low_found is not None:  # its own float32 code against the copy that passed
        return _low_verdict(cname, low_found, color)
    if res.passed:
        valued = any(r.tensor == "L" for r in res.records)
        what = f"dL/{loss_gradient_name(loss)}{' and L match' if valued else ' matches'} within rtol={res.rtol:g}"
        copied = f" (its {own[2]} code checked on a float64 copy: see the note)" if own else ""
        print(colorize(f"\nPASS: {cname}{copied}: {what}, {res.atol_words()}.", color))
        if not valued:  # a loss off by a constant has the same gradient
            print(V.wrap(_value_unchecked(cname, loss, y_true, y_pred)))
        return EXIT_PASS
    return _loss_fail(args, loss, res, cname, (finding, value_only, g), color)


def _targets_kind(args, loss, data, more, g: str) -> Finding | None:
    """A loss that FAILs at the default targets (real Gaussians) with no bug pattern named and PASSes at one-hot and
    probability targets drawn for the same ``y_pred`` (checked again, :func:`_loss_again`): the ``targets-kind`` Finding saying
    its gradient is the one for one-hot targets (a cross-entropy's ``(p - y) / N``, right when each row of y sums to
    1) and to pass ``--targets onehot`` (newuser44 F7: "no known bug pattern"); None otherwise."""
    y_true, y_pred = data
    if args.targets is not None or getattr(loss, "objective", False) or np.ndim(y_pred) < 1 or \
            np.shape(y_true) != np.shape(y_pred) or np.shape(y_pred)[-1] < 2:
        return None
    for kind in ("onehot", "probs"):  # rows summing to 1: one-hot, and probabilities (a loss meant for real targets
        again = _loss_again(args, loss, (loss_data(kind, "real", np.shape(y_pred), args.seed)[0], y_pred), more)[1]
        if again is None or not again.passed:  # whose bug hides at 0/1 targets alone is not sent to them)
            return None
    return Finding("targets-kind", (
        f"{g} is right for one-hot targets: checked again at the same {g.removeprefix('d')} with y_true one-hot rows "
        "(--targets onehot) and rows of probabilities (--targets probs), every gradient matches central differences; "
        "the default targets are real numbers "
        "(Gaussian, rows not summing to 1), for which this loss's gradient is another (a cross-entropy's (p - y) / N "
        "holds only when each row of y sums to 1). Check it with the targets it is meant for: --targets onehot "
        "(or --targets labels for integer class labels)"), g, "error")


def _loss_fail(args, loss, res, cname: str, found: tuple, color: bool) -> int:
    """:func:`_check_loss_at`'s FAIL: the verdict line naming the loss value and the gradients that differ, the
    diagnosis (``found``: the finding, the value-only reading, the gradient's name), and the argument order assumed
    where the loss's names did not say it (newuser32 F3). Returns EXIT_MISMATCH."""
    finding, value_only, g = found
    moved = res.layout_moved()  # the memory-layout rerun's alone (gradcheck._layout)
    values = [t for t in res.failing_tensors if (t == "L" or t.startswith("L (")) and t not in moved]  # (L (y_pred + 1000))
    grads = [t for t in res.failing_tensors if t not in values and t not in moved]
    value = (f"the loss value{'s' * (len(values) > 1)} {', '.join(values)} differ{'s' * (len(values) == 1)} from the "
             + ("reference's" if args.reference else "tape's")) if values else ""
    print(colorize(f"\nFAIL: {cname}: " + "; ".join([value] * bool(value) + [f"gradient mismatch in {', '.join(grads)}"]
                                                   * bool(grads) + [layout_words(moved)] * bool(moved)) + ".", color))
    if finding is not None:
        print(V.wrap(f"diagnosis: {finding.message}."))
    elif value_only is not None:
        print(V.wrap(f"diagnosis: {g} matches the {value_only[0]}, L does not: fix the value L; the "
                     "mismatch with central differences follows from it (they differentiate L as it is)."))
    call = str((getattr(loss, "protocol", None) or {}).get("call") or "")
    if ORDER_UNREAD in call:  # newuser32 F3: the order assumed, repeated where the FAIL is read
        start = call.rfind("; ", 0, call.index(ORDER_UNREAD)) + 2
        end = call.find("; forward(", start)
        print(V.wrap(f"argument order: {call[start:end if end >= 0 else None]}."))
    return EXIT_MISMATCH


class _SqueezedLoss(Wrapper):
    """A loss read as the one element its forward returns when that is a size-1 array, not a scalar (CMU 11-785's
    CrossEntropyLoss: ``Ones_N.T @ crossentropy / N``, shape (1, 1)), for :func:`_squeezed_loss_line` alone: the
    shape stays a FAIL for ``gradcheck check`` and the grader (:func:`gradcheck._validation.loss_scalar`, one
    rule); ``squeezed``: the shape it read, None until it read one."""

    def __init__(self, loss):
        self._layer, self.squeezed = loss, None
        fwd = loss.forward

        def forward(*args, **kwargs):  # a sandbox's RemoteLoss refuses the shape in forward: its raw value
            out = loss._forward(list(args), None)[0] if hasattr(type(loss), "_forward") and not kwargs else \
                fwd(*args, **kwargs)
            if isinstance(out, np.ndarray) and out.size == 1 and out.shape != ():
                self.squeezed, out = out.shape, out.reshape(())
            return out

        self.forward = forward

    def __getattr__(self, name):
        if name == "forward_many":  # the batched scan reads the value as the loss's own forward does: one at a time
            raise AttributeError(name)
        return getattr(self._layer, name)


def _squeezed_loss_line(args, loss, data, init, more) -> str | None:
    """When ``loss``'s forward returned a size-1 array of another shape than () (a FAIL, exit 1: "gave L with shape
    (1, 1)"), its gradient checked against that one element, so a wrong backward (CMU 11-785's CrossEntropyLoss
    without its 1/N) is told beside the shape: the line, or None when forward gave no such array or the check of the
    one element raises. ``data``: ``(y_true, y_pred)``; ``more``: ``(twin, reference, class name)``."""
    cname, one = more[2], _SqueezedLoss(loss)
    if (res := _loss_again(args, one, data, more)[1]) is None or one.squeezed is None:
        return None  # another wrong result after the shape: the shape's FAIL says enough
    g, was = loss_gradient_name(loss), f"with L read as its one element (L.reshape(()) of the {one.squeezed} array)"
    if res.passed:
        return (f"{cname}: {was}, dL/{g} matches central differences within rtol={res.rtol:g}, {res.atol_words()}: "
                "only the shape of L is wrong (return a float, e.g. float(L) or L.item()).")
    finding = loss_finding(one, res, *data, init=init) if "manual" in res.gradients else None
    what = f"; diagnosis: {finding.message}" if finding is not None else ""
    return (f"{cname}: {was}, the gradient is wrong as well: gradient mismatch in "
            f"{', '.join(t for t in res.failing_tensors if t != 'L') or g}{what}.")


def _loss_again(args, loss, data, more, eps=None, keep_pass=True):
    """``(ran, result)``: :func:`gradcheck.check.check_loss` of ``loss`` at ``data = (y_true, y_pred)`` with the
    check's options and its ``more = (twin, reference, name)`` (``eps``: another step than --eps), through the one
    "check again at another point" step a layer's diagnosis takes too (:func:`gradcheck.diagnose._again_at`):
    ``ran`` False when the loss cannot be checked there or gives no verdict (the first point's verdict stands);
    ``result`` None when it passed there (``keep_pass`` False). A check again where forward treats the data apart
    tells why it gave no verdict, and FAILs a backward that breaks there: :func:`_loss_told`."""
    return _again_at(_loss_run(args, loss, data, more, eps), keep_pass)


def _loss_run(args, loss, data, more, eps=None):
    """The check of :func:`_loss_again` and :func:`_loss_told`, not yet run."""
    return lambda: check_loss(loss, *data, twin=more[0], seed=args.seed, rtol=args.rtol, atol=args.atol,
                              eps=args.eps if eps is None else eps, name=more[2], reference=more[1])


def _loss_told(args, loss, data, more, where: str, first: str, eps=None):
    """``(result, why)``: :func:`gradcheck.check.check_loss` of ``loss`` at ``data`` (as :func:`_loss_again`, the
    result None when it passed there) through the one told step of every check again at another point
    (:func:`gradcheck.diagnose._again_told`, a layer's too): where backward raised or returned a wrong shape while
    forward ran (``where``: ``"at y_pred around 5"``), a :class:`GradientShapeError` is raised, ``"<name> passes
    <first> but <where> its backward fails: ..."`` (a right backward runs wherever its forward runs: the FAIL, exit
    1); ``why`` says why the point gave no verdict (forward raised there, NOT CHECKED), for the caller's line (the
    first point's verdict stands, said), else None. ``more``: ``(twin, reference, name)``."""
    _, res, _, stop = _again_told(_loss_run(args, loss, data, more, eps), where)
    if stop is not None and stop[0]:
        raise GradientShapeError(f"{more[2]} passes {first} but {stop[1]}")
    return res, None if stop is None else stop[1]


def _no_verdict_line(line: str, why: str, first: str) -> str:
    """The header line of a loss's check again at another point that gave no verdict (:func:`_loss_told`'s ``why``):
    ``line``'s "also checked" read "also tried", why, and that the PASS is at ``first`` alone."""
    return f"{line.replace('also checked', 'also tried')}: no verdict there: {why}; the PASS is at {first} alone"


def _fails_again(line, res2, data, data2, what):
    """``(line, result, data)`` of a loss checked again at ``data2`` (:func:`_loss_again`'s result, None when it did
    not fail there): ``res2`` and ``data2`` when it fails there, its line saying the table and diagnosis are at those
    ``what``; else None and the drawn ``data``."""
    if res2 is None:
        return line, None, data
    return line + ("; the loss passes at the drawn data but FAILS there: the table and diagnosis below are at "
                   f"those {what}"), res2, data2


def _loss_other_batch(args, loss, data, more):
    """``(header line, result, data)`` of a passing loss check made again with one more sample when the batch size
    equals the last axis of the prediction (a 5 x 5 input for 5 classes), where a backward dividing by the one for
    the other, ``dx / x.shape[1]`` for ``dx / x.shape[0]``, gives the right values (bugs43 H3: it PASSed); the result
    there and its data when it fails, else the first; None for any other shape, a loss of data from ``--init`` (an
    objective, ``--wrt``) or a loss that cannot be checked there. ``data``: ``(y_true, y_pred)``; ``more``:
    ``(twin, reference, name)``."""
    y_pred = data[1]
    shape = _grown_shape(y_pred.shape) if y_pred.ndim >= 2 else None  # also (N, T, K) with N == T (outside44 H3)
    if shape is None or getattr(loss, "objective", False) or (getattr(loss, "protocol", None) or {}).get("wrt"):
        return None
    n = y_pred.shape[0]
    try:
        y_true2, y_pred2, _ = loss_data(args.targets or "real", args.pred or "real", shape, args.seed, low_dtype(args))
    except Exception:  # noqa: BLE001 - kinds that do not fit the other shape: no claim
        return None
    data2 = (y_true2, y_pred2.astype(y_pred.dtype))
    name = loss_arg_names(loss)[0]
    line = (f"the batch size {n} equals the last axis of {name}, so a backward dividing by the one for the other "
            f"passes there: also checked at a batch of {n + 1}" if n == y_pred.shape[-1] else
            f"{name} of shape {y_pred.shape} has two axes of one size, so a backward dividing by the one for the "
            f"other passes there: also checked at shape {shape}")
    where = f"at a batch of {n + 1}" if n == y_pred.shape[-1] else f"at {name} of shape {shape}"
    res2, why = _loss_told(args, loss, data2, more, where, f"at the drawn {name} of shape {y_pred.shape}")
    if why is not None:  # no verdict there: never silent (verify47b F6, F7)
        return _no_verdict_line(line, why, "the drawn data") + " (check at a non-square --input-shape too)", None, data
    return _fails_again(line, res2, data, data2, "data")


def _loss_straddled(args, loss, data, more):
    """``(header line, result, data)`` of a passing loss check made again at predictions around the bounds its
    forward compares the prediction with beyond the drawn data (:func:`gradcheck._adapters._loss_bounds`: a clip at
    eps and 1 - eps, ``|y_pred - y_true| <= delta``), as a layer's is (:func:`gradcheck.diagnose.
    at_straddled_inputs`; tester22s H4: a Huber at delta 5 whose backward forgets delta passed); the result there
    and its data when it fails, else the first; None when there is no such bound (or --pred probs, whose
    rows must stay on the simplex). ``data``: ``(y_true, y_pred)``; ``more``: ``(twin, reference, name)``."""
    info = getattr(loss, "protocol", None) or getattr(loss, "info", None) or {}
    y_true, y_pred = data
    kind = args.pred or "real"
    consts, base, x = _straddle_plan(info, y_true, y_pred, kind)
    if not consts:
        return None
    y2 = _bounded_straddle(base, x, consts, (0.0, 1.0) if kind == "unit" else (-np.inf, np.inf))
    pred, target = loss_arg_names(loss)
    what = f"{pred} - {target}" if base is y_true else pred
    cs = " and ".join(f"{c:g}" for c in consts)
    around = f"{pred}" + (f" with {what}" if base is y_true else "") + f" around {cs}"
    line = (f"forward compares {what} with {cs}, beyond the drawn data ({float(np.min(x)):.2g} to "
            f"{float(np.max(x)):.2g}): also checked at {around} (entries on both sides)")
    res2, why = _loss_told(args, loss, (y_true, y2), more, f"at {around}", f"at the drawn {pred}")
    if why is not None:
        return _no_verdict_line(line, why, f"the drawn {pred}"), None, data
    return _fails_again(line, res2, data, (y_true, y2), "predictions")


def _loss_at_target_constants(args, loss, data, more):
    """``(header line, result, data)`` of a passing loss check made again with targets that hold the constants
    forward compares the target with and the drawn targets never take, and go past those it orders the target
    against (:func:`_target_plan`: labels equal to an ``ignore_index`` of -100, -1 for ``labels >= 0``), as
    :func:`_loss_straddled` does for the prediction's bounds (session 23: a masked cross-entropy whose backward
    forgets the mask passed); the result there and its data when it fails, else the first; None when forward
    compares the target with no such constant or the loss cannot run there. ``data``: ``(y_true, y_pred)``;
    ``more``: ``(twin, reference, name)``."""
    info = getattr(loss, "protocol", None) or getattr(loss, "info", None) or {}
    y_true, y_pred = data
    target = loss_arg_names(loss)[1]
    plan = _target_plan(info if isinstance(info, dict) else {}, y_true, target)
    if plan is None:
        return None
    line, consts, y2 = plan
    res2, why = _loss_told(args, loss, (y2, y_pred), more, f"with {target} holding {' and '.join(f'{c:g}' for c in consts)}",
                           f"at the drawn {target}")
    if why is not None:  # it cannot take those targets: said (again48)
        return _no_verdict_line(line, why, f"the drawn {target}"), None, data
    return _fails_again(line, res2, data, (y2, y_pred), "targets")


def _target_plan(info, y_true, target):
    """``(header line, values, targets)``: the re-check of a loss at targets forward treats apart, or None when
    there is none. ``info``'s ``target_constants`` (:func:`gradcheck._adapters._loss_bounds`) that the drawn
    ``y_true`` does not hold are taken as they are (``labels != -100``: -100); its ``target_ordered``, the constants
    of ordering comparisons (``labels >= 0``), are not (0 is a kept label, review25g H1: the rule then set labels
    to 0 when none was drawn and a backward forgetting the mask passed, at 8 rows of 10 classes, and failed at 16):
    the value just past each that no drawn target passes (:func:`_past_ordered`: -1) is. ``targets``: a copy of
    ``y_true`` with every third entry set to the values in turn (:func:`_target_values`); ``target``: its name in
    the line."""
    yt = np.asarray(y_true)
    ordered = [float(c) for c in _numbers(info.get("target_ordered"))]
    equal = [c for c in _numbers(info.get("target_constants")) if float(c) not in ordered]
    pairs = _past_ordered(ordered, yt)
    eq = _target_values(equal, yt)
    eq_consts = [] if eq is None else eq[0]
    plan = _target_values(eq_consts + [b for b in dict.fromkeys(b for _, b in pairs) if b not in eq_consts], yt)
    if plan is None:
        return None
    consts, y2 = plan
    said = []
    if eq_consts:
        said.append(f"forward compares {target} with {' and '.join(f'{c:g}' for c in eq_consts)}, which the drawn "
                    f"{target} never hold")
    if pairs:
        said.append(f"forward orders {target} against {' and '.join(f'{c:g}' for c in dict.fromkeys(c for c, _ in pairs))}"
                    f", which the drawn {target} never pass")
    line = "; ".join(said) + f": also checked with every third entry of {target} set to " + " and ".join(
        f"{c:g}" for c in consts) + (", beyond it" if pairs and not eq_consts else "")
    return line, consts, y2


def _numbers(vals) -> list:
    """The finite numbers of ``vals`` (a list of constants as :func:`gradcheck._adapters._loss_bounds` gives them,
    numbers or their text) within 1e6 of 0, each once; [] for anything else."""
    out = []
    for v in vals if isinstance(vals, (list, tuple)) else ():
        with contextlib.suppress(TypeError, ValueError):
            c = float(v)
            if np.isfinite(c) and abs(c) <= 1e6 and c not in out:
                out.append(c)
    return out


def _past_ordered(vals, yt) -> list:
    """``[(c, b)]``: for each constant ``c`` of ``vals`` that forward orders the target against and that no drawn
    target ``yt`` passes (``c <= yt.min()`` or ``c >= yt.max()``, whether or not ``c`` itself was drawn), the value
    ``b`` just past it on the side no target was drawn (``c - 1``, ``c + 1``): for ``labels >= 0`` and ``labels >
    0`` alike, -1 is on the side forward leaves out. Integer targets take an integer ``c`` only; unsigned ones no
    negative ``b``; a ``b`` already drawn is left out (that side was checked). [] for fewer than two targets."""
    if yt.size < 2 or yt.dtype.kind not in "iuf":
        return []
    lo, hi = float(yt.min()), float(yt.max())
    pairs = []
    for c in vals:
        if yt.dtype.kind in "iu" and c != int(c):
            continue
        for b in [c - 1] * (c <= lo) + [c + 1] * (c >= hi):
            if not (b in yt or yt.dtype.kind == "u" and b < 0 or b in (p[1] for p in pairs)):
                pairs.append((c, b))
    return pairs


def _target_values(vals, y_true):
    """``(constants, targets)``: the constants ``vals`` forward compares the target with that the drawn ``y_true``
    does not hold (integer labels: an integer not among them; float targets: one beyond their range), and a copy of
    ``y_true`` with every third entry, from the first, set to them in turn; None when there is none, or fewer than
    two entries (one must keep a drawn value)."""
    yt = np.asarray(y_true)
    if yt.size < 2 or yt.dtype.kind not in "iuf":
        return None
    consts = [c for c in _numbers(vals) if (c == int(c) and c not in yt and (yt.dtype.kind == "i" or c >= 0)
                                            if yt.dtype.kind in "iu" else c < yt.min() or c > yt.max())]
    if not consts:
        return None
    y2 = yt.copy()
    flat = y2.reshape(-1)
    at = np.arange(0, flat.size, 3)
    flat[at] = np.asarray(consts, dtype=np.float64)[np.arange(at.size) % len(consts)].astype(yt.dtype)
    return consts, y2


def _bounded_straddle(base, x, consts, bounds):
    """The predictions ``base + x2`` with ``x2`` the straddled values of ``x`` around ``consts``
    (:func:`gradcheck._validation.straddled_values`; ``base`` None: 0), each entry's distance to its constant at
    most half the room to ``bounds`` (``(0, 1)`` for --pred unit), so the predictions stay inside."""
    x2 = V.straddled_values(x, consts)
    i = np.arange(x2.size)
    c = np.asarray(consts, dtype=np.float64)[i % len(consts)].reshape(x2.shape)
    b = 0.0 if base is None else np.asarray(base, dtype=np.float64)
    d = x2 - c
    lo, hi = bounds
    room = np.where(d > 0, hi - (b + c), (b + c) - lo)
    y = b + c + np.sign(d) * np.minimum(np.abs(d), np.maximum(room, 0.0) / 2)
    edge = EDGE_ROOM / 2
    return np.clip(y, lo + edge, hi - edge) if np.isfinite(lo) else y


#: A bound of the prediction closer than this to an end of its range (0 or 1 for --pred unit) is not straddled: no
#: entry fits beyond it at a distance central differences resolve. np.clip(p, 1e-7, 1 - 1e-7), a log's guard, put
#: every entry below 1e-7 at the edge (then 1e-3), where the differences of log(p) at h = 6e-6 err by (h/p)**2/3 =
#: 1.2e-5 > rtol 1e-6, and an exact BCE FAILed (review23); entries stay EDGE_ROOM / 2 = 0.005 inside, 4.8e-7 there.
EDGE_ROOM = 0.01


def _loss_clipped_edge(args, loss, data, more):
    """``(header line, result, data)`` of a passing --pred unit loss check made again with every third entry of the
    prediction inside a clip closer than :data:`EDGE_ROOM` to 0 or 1 that the drawn predictions never reach
    (``np.clip(p, 1e-3, 1 - 1e-3)``: at 5e-4 and 0.9995), which :func:`_loss_straddled` leaves alone, at a step of a
    quarter of the clip's distance to the edge, so that the differences of those entries stay inside the clip (0:
    forward is flat there) and the others are far from it (review24: a BCE whose backward forgot the clip at 1e-3
    passed). A backward giving those entries the gradient it gives at the clip value itself (the clip written in
    forward and backward alike, as a float guard usually is) is read as passing, with the line saying so: the exact
    derivative there is 0; one giving them anything else fails. The result there and its data when it fails,
    else the first; None when there is no such clip or the loss cannot run there."""
    info = getattr(loss, "protocol", None) or getattr(loss, "info", None) or {}
    vals = info.get("compared_constants") if isinstance(info, dict) else None
    y_true, y_pred = data
    yp = np.asarray(y_pred)
    if (args.pred or "real") != "unit" or yp.dtype.kind != "f" or yp.size < 2 or not isinstance(vals, (list, tuple)):
        return None
    consts = [c for c in _numbers(vals) if 0.0 < c < min(EDGE_ROOM, yp.min()) or max(1.0 - EDGE_ROOM, yp.max()) < c < 1.0]
    if not consts:
        return None
    inner = np.array([c / 2 if c < 0.5 else (1.0 + c) / 2 for c in consts])
    room = min(min(c, 1.0 - c) for c in consts)
    eps = min(args.eps or default_eps("central"), room / 4)
    at = np.arange(0, yp.size, 3)
    y2, y3 = yp.astype(np.float64), yp.astype(np.float64)
    y2.reshape(-1)[at] = inner[np.arange(at.size) % len(consts)]
    y3.reshape(-1)[at] = np.asarray(consts)[np.arange(at.size) % len(consts)]
    pred = loss_arg_names(loss)[0]
    cs, ins = " and ".join(f"{c:.10g}" for c in consts), " and ".join(f"{v:.10g}" for v in inner)
    line = (f"forward clips {pred} at {cs}, which the drawn {pred} never reach: also checked with every third entry "
            f"of {pred} at {ins}, inside the clip, at a step of {eps:.2g} that stays there")
    res2, why = _loss_told(args, loss, (y_true, y2), more, f"with {pred} at {ins}", f"at the drawn {pred}", eps)
    gname = loss_gradient_name(loss)
    g2 = None if res2 is None else res2.gradients.get("manual", {}).get(gname)
    if why is None:  # backward at the clip values themselves, by the same rule (a right one runs where forward runs)
        g3, why = _clip_gradient(loss, (y_true, y3), np.shape(yp) if g2 is None else np.shape(g2), f"{pred} at {cs}",
                                 (more[2], pred))
    if why is not None:
        return _no_verdict_line(line, why, f"the drawn {pred}"), None, data
    if res2 is None or gname not in res2.gradients.get("numerical", {}) or g2 is None:
        return line, None, data
    g2, num = np.asarray(g2), np.asarray(res2.gradients["numerical"][gname])
    inside = np.zeros(yp.size, dtype=bool)
    inside[at] = True
    inside = inside.reshape(yp.shape)
    off = mismatched(g2, num, res2.rtol, res2.atol_of(gname))  # the one rule (review25g L5: was np.isclose)
    if g3.shape == g2.shape and not (off & ~inside).any() and np.all(num[inside] == 0) and close(
            g2[inside], g3[inside], 1e-12, 0.0):
        return line + (f": backward gives them the gradient it gives at {cs} itself, where forward's derivative "
                       "is 0 (the clip written in forward and backward alike, as a float guard usually is): read "
                       "as passing"), None, data
    return _fails_again(line, res2, data, (y_true, y2), "predictions")


def _clip_gradient(loss, data, shape, where: str, names):
    """``(gradient, why)``: ``loss``'s backward after its forward at ``data = (y_true, y_pred)`` (copies), for
    :func:`_loss_clipped_edge` at the clip values themselves, read by the rule of every check again at another point
    (:func:`_loss_told`): forward raising there is no verdict (``why`` says so, the gradient None); backward raising,
    or giving another shape than ``shape`` (the one it gave the check), raises :class:`GradientShapeError` naming
    ``where`` (``"y_pred at 0.001"``). ``names``: the loss's and the prediction's."""
    try:
        loss.forward(np.array(data[0], copy=True), np.array(data[1], copy=True))
    except Exception as e:  # noqa: BLE001 - a loss that cannot run there: no verdict, said
        return None, f"with {where} its forward raised ({e})"
    try:
        out = loss.backward()
    except Exception as e:  # noqa: BLE001 - forward ran there, so a right backward does
        raise GradientShapeError(f"{names[0]} passes at the drawn {names[1]} but with {where} its backward fails: "
                                 f"{e}") from e
    try:
        g = np.asarray(out, dtype=np.float64)
    except Exception as e:  # noqa: BLE001 - a value the check reads otherwise (adapted): no verdict, said
        return None, f"with {where} its gradient could not be read as an array ({e})"
    if g.shape != tuple(shape):
        raise GradientShapeError(f"{names[0]} passes at the drawn {names[1]} but with {where} its backward returned "
                                 f"shape {g.shape}, expected {tuple(shape)}")
    return g, None


def _straddle_plan(info, y_true, y_pred, kind):
    """``(constants, base, x)`` of :func:`_loss_straddled`: the residual ``x = y_pred - y_true`` about ``base =
    y_true`` for bounds of the residual (a float target of y_pred's shape), else ``x = y_pred`` about 0 for bounds of
    the prediction itself; only constants beyond ``x``'s drawn range (and for --pred unit at least :data:`EDGE_ROOM`
    inside (0, 1), so that entries fit on both sides)."""
    def floats(key):
        vals = info.get(key) if isinstance(info, dict) else None
        out = []
        for v in vals if isinstance(vals, (list, tuple)) else []:
            with contextlib.suppress(TypeError, ValueError):
                out.append(float(v))
        return [c for c in out if np.isfinite(c) and abs(c) <= V.STRADDLE_MAX]
    if kind == "probs" or np.asarray(y_pred).dtype.kind != "f":
        return [], None, None
    yt = np.asarray(y_true)
    for key, base in (("residual_constants", y_true), ("compared_constants", None)):
        if base is not None and (yt.shape != np.shape(y_pred) or yt.dtype.kind != "f"):
            continue
        x = np.asarray(y_pred, dtype=np.float64) - (0.0 if base is None else yt)
        consts = [c for c in floats(key) if (c < x.min() or c > x.max())
                  and (kind != "unit" or base is not None or EDGE_ROOM <= c <= 1.0 - EDGE_ROOM)]
        if consts:
            return consts, base, x
    return [], None, None


def _branch_note(label: str, target: str, args) -> str:
    """The NOTE of a passing loss whose backward branches on its targets (tester25s: Deep Learning from Scratch 1's
    SoftmaxWithLoss, ``if self.t.size == self.y.size:`` one-hot, else labels): only the branch the drawn targets
    take was checked, and the other kind of targets (``args.targets``) is named. Read with :mod:`ast` from the
    class's file: an ``if`` of backward that reads an attribute forward set from its ``target`` argument; "" when
    there is none."""
    targets = args.targets
    path, _, cls = label.rpartition("::")
    _, classes = file_classes(path, cls)
    methods = {f.name: f for c in reversed(classes) for f in c.body if isinstance(f, ast.FunctionDef)}
    fwd, bwd = methods.get("forward"), methods.get("backward")
    if fwd is None or bwd is None:
        return ""
    params = [a.arg for a in fwd.args.args[1:]]
    names = {target} | ({params[1]} if len(params) > 1 else set())  # forward(x, t): t when not named as a target
    held = {t.attr for n in ast.walk(fwd) if isinstance(n, ast.Assign) for t in n.targets
            if isinstance(t, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in names}
    for n in ast.walk(bwd):
        if isinstance(n, ast.If) and any(self_attr(a) in held for a in ast.walk(n.test)):
            kind = str(targets or "real").partition(":")[0]
            other = {"labels": "onehot", "onehot": "labels"}.get(kind)
            return (f"NOTE: backward branches on the targets (`if {ast.unparse(n.test)}:`, line {n.lineno}): only "
                    f"the branch these targets ({kind}) take was checked" +
                    (f"; check with --targets {other}{':' + targets.partition(':')[2] if ':' in str(targets) else ''}"
                     " too" if other else ""))
    return ""


def _loss_eps_reading(args, label: str, res, data, twin, reference):
    """``(result, note, info, finding)`` of a loss check whose loss has a small constant in a log or a denominator
    (tester14; session 15): the loss's copy without it (:func:`gradcheck._log_eps.eps_free_texts`) is checked on the
    same ``data`` ``(y_true, y_pred)`` with the same ``twin`` and ``reference`` (theirs are losses without an eps),
    and the result of the one backward matches is kept, with the NOTE saying which and the same as ``info`` for
    --json (:func:`gradcheck._log_eps.pick_eps_reading`). When neither matches, ``finding`` is the copy's diagnosis
    when it names a bug (:func:`gradcheck._log_eps.copy_finding`), else None; ``(res, "", None, None)`` when there is
    no such constant or the copy cannot run."""
    from ._log_eps import (
        LOSS_MAX_EPS,
        copy_finding,
        eps_free_texts,
        large_eps,
        own_eps,
        pick_eps_reading,
    )

    load = getattr(args, "load_edited", None)
    path = label.rpartition("::")[0]
    texts, consts, places = eps_free_texts(path, check_files(args, path), True, LOSS_MAX_EPS) if load else ({}, [], [])
    if not texts:
        return res, "", None, None
    # the loss's own eps, forward's and backward's (tester15b M1)
    consts, places, by_method = own_eps(path, label.rpartition("::")[2], consts, places)
    try:
        with load(texts) as edited:
            if (free := _loss_again(args, edited, data, (twin, reference, label.rpartition("::")[2]))[1]) is None:
                return res, "", None, None
            finding = copy_finding(res, free, edited, data, consts)
    except Exception:  # noqa: BLE001 - the copy is a probe: if it cannot run, the check stays as it is
        return res, "", None, None
    if (big := large_eps(res, free, consts, by_method)) is not None:  # no float guard: a FAIL, named
        return res, "", big[1], big[0]
    got = pick_eps_reading(res, free, consts, places, by_method, data[1])
    return (*got, None) if got else (res, "", None, finding)


def _loss_lines(loss, res) -> list[str]:
    """Header lines saying how a loss class was called (:class:`gradcheck._adapters.BoundLoss`): which
    argument got the prediction, by its name or in Keras's assumed order (then a WARNING when the
    numerical gradient with respect to it is identically 0: the order is probably the other), and the
    upstream gradient its backward was given."""
    info = getattr(loss, "protocol", None) or {}
    if not info.get("call"):  # a CS231n loss function: NAME(x, y), scores first
        return []
    call, pred = info["call"], info.get("pred_arg") or "y_pred"
    lines = [f"loss: {call}: the prediction goes to {pred}, as --pred-arg says" if info.get("by_name") == "--pred-arg"
             else f"loss: {call}: the prediction goes to {pred}, as forward's parameter names say" if info.get("by_name")
             else f"loss: {call}: forward's parameter names do not say which is the prediction; "
                  f"{info['by_role']} (order (prediction, target))" if info.get("by_role") and info["pred_arg"] ==
                  call.partition("(")[2].partition("=")[0]
             else f"loss: {call}: forward's parameter names do not say which is the prediction; "
                  f"{info['by_role']} (Keras's order (y_true, y_pred))" if info.get("by_role")
             else f"loss: {call}: Keras's order (y_true, y_pred) assumed: forward's parameter names do not say "
                  "which is the prediction (y_pred/y_true, x/t, input/target, logits/labels... would)"]
    if info.get("layout"):  # CS7643's (probs, loss) and self.dx (corpus37 F2)
        lines.append(f"loss: {info['layout']}")
    if info.get("neither"):  # tester12 M6: no order can be told, and none is needed for the verdict
        a, b = info["neither"].split(",")
        lines.append(f"backward's result is no multiple of L's gradient with respect to {a} or {b}, so it is wrong "
                     f"whichever is the prediction; the table compares it with dL/d{pred}")
    if info.get("upstream"):
        lines.append(f"backward: backward({info['upstream']}=1.0): the upstream gradient dL/dL = 1.0 of the "
                     "scalar loss, as PyTorch's loss.backward() and DLfS's backward(dout=1) give it")
    num = next(iter((res.gradients or {}).get("numerical", {}).values()), None)
    if not info.get("by_name") and not info.get("by_role") and num is not None and np.size(num) and not np.any(num):
        lines.append(f"WARNING: the numerical gradient with respect to {pred}, the assumed prediction, is "
                     "identically 0: L does not depend on it, so forward's order is probably (prediction, "
                     "target): name its arguments (y_pred, y_true) or (x, t) to have them bound by name.")
    return lines


def _print_lessons(diag, color) -> None:
    """``read: lessons/...``: the lessons that explain the bugs found (newuser22: only --json's ``lesson`` named them)."""
    if lessons := list(dict.fromkeys(f.lesson for f in diag.errors if f.lesson)):
        print(colorize(V.wrap(f"read: {', '.join(lessons)}"), color))


def _forward_unchecked(cname: str, info: Any, res, reference: str | None = None, diag=None,
                       advice: str | None = None) -> str:
    """The line of a PASS that compared no forward values: ``--reference manualprop.<Class>`` to compare them, except
    for a CS231n function pair of several array inputs (``::conv``: its weights are inputs, which --reference cannot
    give to a manualprop layer's parameters; newuser22). With ``reference`` given (and not compared), why not: a
    forward random in every mode checked (:data:`~gradcheck.diagnose.RANDOM_REFERENCE` in its notes), else the
    notes say (fixp24: it said 'pass --reference ...' to a user who had); a pair whose running statistics it served
    (:func:`_stats_reference_only`), that it served them alone. A Nielsen network's PASS says what it checked
    and what not: its update_mini_batch's step (nielsen34 F6: an L2 decay missing or an average taken twice PASSed,
    unsaid). ``advice``: the ``--reference`` advice checked against the layer's forward (:func:`_checked_advice`)."""
    if (nielsen := nielsen_methods(info.get("text"))) is not None:  # nielsen34 F6: what a PASS of backprop is not
        feed, back = nielsen
        step = next((p for p in (diag.probes if diag is not None else []) if p.name == STEP_PROBE), None)
        return (f"{cname}: checked: {back}'s gradients (and dX read from them) against central differences of the "
                f"cost of {feed}'s output, both as written; not checked: {feed}'s values (no reference computes "
                "them), nor SGD's loop over epochs and mini-batches. " + (step.detail if step is not None else
                f"{cname}: update_mini_batch's step not checked (no mini-batch of one sample a column was given)."))
    lead = f"{cname}: forward values not checked (central differences test backward against your own forward): "
    shapes = getattr(res, "input_shape", None) or ()
    pair = info.get("protocol") == "cs231n" and bool(shapes) and isinstance(shapes[0], (list, tuple))
    if reference and pair and (run := [p for p in getattr(diag, "probes", ()) if p.name == RUNNING_PROBE]):
        did = "served the running statistics alone" if run[0].passed is not None else "compared nothing here"
        return lead + (f"--reference {reference} {did} (see the notes above): a function pair's weights are among "
                       "its inputs, where a manualprop layer holds them as parameters, so its training output and its "
                       "gradients are not compared with it.")
    if reference:
        modes = [d for d in ([diag, *diag.other_modes] if diag is not None else []) if d.result is not None]
        given = info.get("mode") if info.get("protocol") == "cs231n" else None  # a pair's: 'train' (verify37 F4)
        random = [repr(given) if given else mode_word(d.training) for d in modes if RANDOM_REFERENCE in d.result.notes]
        if random and any(f.code == "random-mean-note" for f in diag.findings):  # (newuser37 F7: random_mean_finding)
            return lead + (f"--reference {reference} was compared in {' and '.join(random)} mode by the output's mean "
                           "alone (see the note above): the forward is random, its draws held fixed for the check, "
                           f"and {reference} draws its own mask.")
        return lead + (f"--reference {reference} was not compared: the forward is random in "
                       f"{' and '.join(random)} mode, its draws held fixed for the check, and {reference} draws its "
                       "own mask, which gradcheck cannot make yours" if random else
                       f"--reference {reference} gave no forward comparison (see the notes above)") + "."
    how = ("--reference cannot compare them here: a function pair's weights are among its inputs, where a manualprop "
           "layer holds them as parameters" if pair else advice if advice else
           f"pass {_reference_hint(cname, 'manualprop.Linear')} to compare them{_no_twin(cname, 'its output')}")
    return lead + how + "."


def _forward_in_backward(args, layer, res, cname: str) -> str:
    """The NOTE of a passing layer whose backward calls its forward, counted in one more forward and backward in
    the sandbox child with the graders' staff policy on (:meth:`gradcheck.sandbox.Sandbox.load_layer`'s
    ``no_forward_in_backward``; the check itself cannot tell such a backward from a derived one: its numbers are
    right), so that a student learns it before a grade that requires a backward derived by hand (newuser44 F2: both
    example assignments take the points); "" when it does not, or the layer is not the sandbox's."""
    if res is None or not hasattr(layer, "no_forward_in_backward") or layer.no_forward_in_backward:
        return ""
    layer.forward_calls_in_backward = None
    try:
        xs = V.layer_inputs(getattr(args, "inputs", None) or res.input_shape, np.random.default_rng([args.seed, 44]),
                            cname)
        Y = layer.forward(*xs)
        layer.no_forward_in_backward = True
        layer.backward(np.ones_like(np.asarray(Y, dtype=np.float64)))
    except Exception:  # noqa: BLE001 - the policy's refusal is the count read below; anything else: no note
        pass
    finally:
        layer.no_forward_in_backward = False
    n = layer.forward_calls_in_backward
    if type(n) is not int or n <= 0:
        return ""
    return (f"NOTE: {cname}.backward calls {cname}.forward ({n} time(s) in one backward, counted after the check): "
            "its gradients are right, but an assignment that requires a backward derived by hand (as this "
            "repository's linear_relu_ce and cs231n_layers do: their gradcheck_no_forward_in_backward policy) fails "
            "its gradient tests; keep what backward needs in forward's cache (e.g. self.X) instead of calling "
            "forward again.")


def _no_twin(cname: str, what: str) -> str:
    """"" when manualprop has a class named ``cname`` (:func:`_reference_hint` names it), else the words that it has
    none, so that ``--reference manualprop.NAME`` is not read as the promise of a twin (newuser25 LOW: a Conv1D and
    a GRUCell were told to pass manualprop.NAME, e.g. manualprop.Linear, for a comparison manualprop cannot make)."""
    if "manualprop.NAME" not in _reference_hint(cname):
        return ""
    return (f", when one of manualprop's classes computes what {cname} does under another name (manualprop has none "
            f"named {cname}; when none does, compare {what} with the assignment's formula, e.g. a value worked by hand)")


def _zero_strengths(loss, init: dict[str, Any]) -> str:
    """The NOTE of a (loss, grad) function of several arguments checked with a regulariser's strength of 0 in
    ``--init`` (``"lambda_": 0``, :func:`gradcheck._adapters.strength_name`): its penalty and the penalty's gradient
    were not exercised, so a bug there passes (tester29s LOW); "" otherwise."""
    from ._adapters import strength_name

    zero = [k for k, v in (init or {}).items() if strength_name(k) and type(v) in (int, float) and v == 0]
    if not zero or not getattr(loss, "objective", False):
        return ""
    eg = ", ".join(f'"{k}": 1.0' for k in zero)
    return (f"NOTE: {' and '.join(f'{k} = 0' for k in zero)} in --init: the regulariser's penalty and its gradient "
            f"were not exercised, so a bug there passes this check; check again with a non-zero value ({eg} in "
            "--init) to check them too.")


def _same_loss(loss, y_true, y_pred) -> str | None:
    """The name of manualprop's loss class (built with its defaults) whose ``forward(y_true, y_pred)`` is the checked
    ``loss``'s value at this point (within 1e-9 relative; a loss off by a constant differs), the one such class, or
    None: the ``--reference`` a PASS may suggest for a loss of another name
    (tester32c L1: MSELoss was told manualprop.MulticlassHinge, MeanSquaredError computes it)."""
    import manualprop
    from manualprop.losses import Loss

    try:
        L = float(loss.forward(y_true, y_pred))
    except Exception:  # noqa: BLE001 - no value to compare: no suggestion
        return None
    if not np.isfinite(L):
        return None
    hits = []
    for name in sorted(n for n in dir(manualprop) if not n.startswith("_")):
        cls = getattr(manualprop, name)
        if not (isinstance(cls, type) and issubclass(cls, Loss) and cls is not Loss):
            continue
        try:
            R = float(cls().forward(np.array(y_true, copy=True), np.array(y_pred, dtype=np.float64, copy=True)))
        except Exception:  # noqa: BLE001 - targets it does not take: not this one
            continue
        if np.isfinite(R) and abs(R - L) <= 1e-9 * max(abs(L), abs(R), 1e-12):
            hits.append(name)
    return hits[0] if len(hits) == 1 else None


def _value_unchecked(cname: str, loss, y_true=None, y_pred=None) -> str:
    """The line under a loss's PASS that compared no value L: ``--reference`` for a loss of a prediction and a target;
    for a (loss, grad) function of several arguments, which no manualprop class is (tester29s LOW: a logistic cost was
    told ``--reference manualprop.MulticlassHinge``), the assignment's printed value."""
    if getattr(loss, "objective", False):
        return (f"{cname}: the value L itself was not checked (central differences see only its gradient): compare "
                "it at one point with the value your assignment gives (its notebook prints the expected cost at a "
                "starting point, such as theta = zeros) or with one worked by hand.")
    same = None if "manualprop.NAME" not in _reference_hint(cname) or y_pred is None else \
        _same_loss(loss, y_true, y_pred)
    if same is not None:
        return (f"{cname}: the value L itself was not checked (central differences see only its gradient); "
                f"--reference manualprop.{same} compares it (manualprop's {same} gives the same L at this point).")
    return (f"{cname}: the value L itself was not checked (central differences see only its gradient); "
            f"{_reference_hint(cname)} compares it{_no_twin(cname, 'L')}.")


def _reference_hint(cname, example="manualprop.MulticlassHinge"):
    """``--reference manualprop.<Class>`` when manualprop has a class of the name ``cname`` (case aside:
    ``BatchNorm1d`` is ``manualprop.BatchNorm1D``), else the generic hint with ``example``."""
    import manualprop

    names = {n.lower(): n for n in dir(manualprop) if not n.startswith("_") and isinstance(getattr(manualprop, n), type)}
    if (own := names.get(cname.lower())) is not None:
        return f"--reference manualprop.{own}"
    return f"--reference manualprop.NAME (e.g. {example})"


def _forward_compared(diag) -> bool:
    """Whether a check of ``diag`` (any mode) compared forward values (``--reference``, ``--twin``: its ``(fwd)``
    rows), not only gradients against the layer's own forward."""
    return any(r.kind == "forward" for d in [diag, *diag.other_modes] if d.result is not None for r in d.result.records)


def _value_only(res, g: str, n: int):
    """When ``g`` (dy_pred) matches the reference's (or the tape's) and L does not, the gradient is
    right: its diagnosis from central differences (of the wrong L) would break it. Then ``(whose,
    finding)``: the :class:`~gradcheck.diagnose.Finding` of L ``n`` times the other's (the batch
    size: a sum where the mean is due; central differences of it are ``n`` times dy_pred), None when
    no known bug explains L. None when the gradient does not match or L does."""
    recs = {r.tensor: r for r in res.records}
    for pair, whose in (("manual-vs-reference", "reference's"), ("manual-vs-tape", "tape's")):
        cl, cg = (recs[t].get(pair) if t in recs else None for t in ("L", g))
        if cl is None or cg is None or cl.passed or not cg.passed:
            continue
        if n > 1 and close(cl.worst_a, n * cl.worst_b):
            return whose, _find("factor-normalisation", "L", count=n, big="large", why=(
                f"it is the {whose} times N = {n}, the batch size: a sum over the batch where the mean "
                f"is due (divide by N); {g} matches the {whose}, keep it: central differences of the summed "
                f"L are {n} times larger, hence the {g} mismatch"))
        return whose, None
    return None
