"""The body of ``gradcheck check``: diagnose a (sandboxed) student layer and report it.

:mod:`gradcheck.cli` parses the arguments, starts the sandbox and builds the
student's layer there; :func:`run_check` does the rest: the diagnosis
(:func:`gradcheck.diagnose.diagnose_layer`), the reference layer
(``--reference manualprop.NAME``), the table, the diagnosis sentence, the JSON
file and the plots. Output for a person: one table, colours only on a terminal
(``isatty`` and ``NO_COLOR`` unset, see https://no-color.org), then the verdict.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import numpy as np

from . import _validation as V
from .errors import EXIT_MISMATCH, EXIT_PASS, EXIT_STUDENT, GradcheckError, UsageError

__all__ = ["run_check", "build_reference", "use_color", "colorize"]

_GREEN, _RED, _YELLOW, _RESET = "\033[32m", "\033[31;1m", "\033[33m", "\033[0m"


def use_color(stream=None) -> bool:
    """True when ``stream`` (default stdout) is a terminal and ``NO_COLOR`` is not set."""
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


def colorize(text: str, on: bool) -> str:
    """Colour ``ok`` green and ``FAIL``/``ERROR`` red (whole words only) when ``on``."""
    if not on:
        return text
    text = re.sub(r"\bFAIL\b", f"{_RED}FAIL{_RESET}", text)
    text = re.sub(r"\bERROR\b", f"{_RED}ERROR{_RESET}", text)
    text = re.sub(r"(?m)\bok$", f"{_GREEN}ok{_RESET}", text)
    return re.sub(r"^PASS\b", f"{_GREEN}PASS{_RESET}", text, flags=re.M)


def build_reference(spec: str, init: dict[str, Any], seed: int):
    """Build ``manualprop.NAME(**init)`` for ``--reference manualprop.NAME``.

    Raises
    ------
    UsageError
        Not ``manualprop.<Class>``, no such class, or the constructor rejects ``init``.
    """
    import inspect

    import manualprop

    mod, _, name = spec.rpartition(".")
    if mod != "manualprop" or not name:
        raise UsageError(f"--reference must be written manualprop.ClassName, e.g. manualprop.Linear; got {spec!r}.")
    cls = getattr(manualprop, name, None)
    if not isinstance(cls, type):
        raise UsageError(f"manualprop has no class {name!r} (for --reference).")
    kwargs = dict(init)
    try:
        if "rng" in inspect.signature(cls).parameters:
            kwargs.setdefault("rng", np.random.default_rng(seed))
    except (TypeError, ValueError):
        pass
    try:
        return cls(**kwargs)
    except Exception as exc:  # noqa: BLE001 - our own class: its message is the usage error
        raise UsageError(f"--reference {spec}: {name}(**--init) raised {type(exc).__name__}: {exc}") from exc


def run_check(args, layer, label: str, init: dict[str, Any], shape) -> int:
    """Diagnose ``layer`` with the options of ``gradcheck check``; print; return the exit code.

    Parameters
    ----------
    args : argparse.Namespace
        ``mode``, ``method``, ``eps``, ``rtol``, ``atol``, ``seed``, ``reference``,
        ``twin``, ``json``, ``plots``.
    layer : object
        The student's layer (a :class:`gradcheck.sandbox.RemoteLayer` from the CLI).
    label : str
        ``path::ClassName`` for the header line.
    init : dict
        Constructor kwargs (also used for the twin and the reference).
    shape : tuple or list of tuples
        Input shape(s).

    Returns
    -------
    int
        0 pass, 1 gradient mismatch (or a named bug), 3 the student's code failed.
    """
    from .check import build_twin
    from .diagnose import diagnose_layer

    cname = label.rpartition("::")[2]
    reference = build_reference(args.reference, init, args.seed) if args.reference else None
    twin = None
    if args.twin:
        twin, note = build_twin(layer, "layer", init or None)
        if twin is None:
            print(V.wrap(f"gradcheck: no tape comparison: {note}"), file=sys.stderr)
    diag = diagnose_layer(layer, shape, mode=args.mode, method=args.method, seed=args.seed, rtol=args.rtol,
                          atol=args.atol, eps=args.eps, twin=twin, reference=reference, name=cname)
    color = use_color()
    shown = V.fmt_shape(shape) if isinstance(shape[0], int) else "; ".join(V.fmt_shape(x) for x in shape)
    print(f"{label}, input shape {shown}" + (f", init {json.dumps(init)}" if init else "")
          + f", mode {args.mode}" + (f", reference {args.reference}" if args.reference else ""))
    print()
    res = diag.result
    if res is not None:
        print(colorize(res.table(), color))
    failed = [p for p in diag.probes if p.passed is False]
    if failed:
        print()
        print(V.wrap("structural checks failed: " + "; ".join(f"{p.name} ({p.detail})" for p in failed)))
    for f in diag.findings:
        if f.severity != "error":
            print(V.wrap(f"note: {f.message}"))
    written = []
    if args.plots:
        written = _plots(diag, args.plots, cname)
    if args.json:
        d = os.path.dirname(os.path.abspath(args.json))
        os.makedirs(d, exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(diag.to_dict(), fh, indent=2, default=_json_default)
    if written:
        print(f"\nplots: {', '.join(os.path.abspath(w) for w in written)}")
    if args.json:
        print(f"json: {os.path.abspath(args.json)}")
    errs = [f for f in diag.findings if f.severity == "error"]
    if diag.error is not None and not any(f.code not in ("student-code", "wrong-shape", "non-finite")
                                          for f in errs):
        raise diag.error
    if diag.passed:
        tensors = ", ".join(r.tensor for r in res.records)
        print(colorize(f"\nPASS: {cname}: every gradient ({tensors}) matches within rtol={res.rtol:g}, "
                       f"atol={res.atol:g}.", color))
        return EXIT_PASS
    if res is not None and res.failing_tensors:
        print(colorize(f"\nFAIL: {cname}: gradient mismatch in {', '.join(res.failing_tensors)}.", color))
    sentence = diag.sentence()
    prefix = f"FAIL: {diag.name}: "
    print(colorize(V.wrap("diagnosis: " + (sentence[len(prefix):] if sentence.startswith(prefix) else sentence)),
                   color))
    if diag.error is not None:
        print(V.wrap(f"gradcheck: the checked code failed (exit {diag.error.exit_code}): {diag.error}"),
              file=sys.stderr)
        return diag.error.exit_code
    if any(f.code == "student-code" for f in errs):
        return EXIT_STUDENT
    return EXIT_MISMATCH


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if not np.isfinite(o) else float(o)
    if isinstance(o, (tuple, set)):
        return list(o)
    if isinstance(o, GradcheckError):
        return str(o)
    return str(o)


def _plots(diag, folder: str, cname: str) -> list[str]:
    from .plots import plot_gradient_heatmaps, plot_result, save_figure

    res = diag.result
    out = []
    if res is None:
        return out
    out.append(save_figure(plot_result(res), os.path.join(folder, f"{cname}.png")))
    num = res.gradients.get("numerical", {})
    for t in res.failing_tensors:
        if t in num:
            out.append(save_figure(plot_gradient_heatmaps(res, t), os.path.join(folder, f"{cname}-{t}-heatmap.png")))
    return out
