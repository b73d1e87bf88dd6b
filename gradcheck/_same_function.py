"""Whether the ``--reference manualprop.NAME`` or the ``--twin`` a PASS suggests computes the checked layer's function.

A PASS that compared no forward values suggests manualprop's (or autoprop's) class of the layer's name. That class may
compute another function with the settings it would be built with: manualprop.GELU's default is the erf form, a
student's GELU is often the tanh approximation (outside44 M2: the advice turned a right layer into a FAIL). Before the
advice is given, the suggested class is built as ``--reference`` / ``--twin`` would build it and its forward compared
with the layer's at a drawn input; when it differs, each other value of an option its docstring lists
(``approximate : {"none", "tanh"}``) is tried, and the advice names the one that matches, or says that none does.

Only a layer without parameters whose forward is a function of its input (two calls agree) is compared; for the rest
the advice is left as it was (None).
"""
from __future__ import annotations

import ast
import json
import re
from typing import Any, Callable

import numpy as np

from .compare import close

_OPTION = re.compile(r"^\s*(\w+)\s*:\s*\{([^}]*)\}", re.M)


def doc_options(cls: type | None) -> dict[str, list[Any]]:
    """``{parameter: [values]}`` of the options a numpydoc docstring lists as a set (``approximate : {"none",
    "tanh"}``); unreadable items are left out."""
    found: dict[str, list[Any]] = {}
    for name, body in _OPTION.findall(getattr(cls, "__doc__", None) or ""):
        try:
            values = [ast.literal_eval(v.strip()) for v in body.split(",") if v.strip()]
        except (ValueError, SyntaxError):
            continue
        found[name] = values
    return found


def _output(y) -> np.ndarray:
    return np.asarray(y.numpy() if callable(getattr(y, "numpy", None)) else y, dtype=np.float64)


def _layer_output(layer, shape, seed: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(X, Y)`` of the layer's forward at a drawn input (scaled by 2, so that approximations differ), or None when
    it holds parameters, is random (two calls differ) or cannot be called so."""
    if not isinstance(shape, (tuple, list)) or not shape or not all(isinstance(s, int) for s in shape):
        return None
    if getattr(layer, "params", None) or getattr(layer, "trainable_variables", None):
        return None
    X = 2.0 * np.random.default_rng([seed, 44]).standard_normal(tuple(shape))
    try:
        Y, Y2 = (_output(layer.forward(X.copy())) for _ in range(2))
    except Exception:  # noqa: BLE001 - a probe: no comparison, the advice stays
        return None
    if Y.shape != Y2.shape or not np.array_equal(Y, Y2) or not np.all(np.isfinite(Y)):
        return None
    return X, Y


def matching_build(build: Callable[[dict | None], Any], run: Callable[[Any, np.ndarray], Any], cls: type,
                   layer, shape, seed: int) -> tuple[bool, dict | None] | None:
    """``(True, None)`` when ``build(None)`` (the class built as the check would build it) computes the layer's
    forward; ``(True, {option: value})`` when that build differs and the class built with that one option changed
    matches; ``(False, None)`` when none matches; None when nothing could be compared."""
    got = _layer_output(layer, shape, seed)
    if got is None:
        return None
    X, Y = got

    def fits(extra):
        try:
            R = _output(run(build(extra), X.copy()))
        except Exception:  # noqa: BLE001 - a setting the class refuses: not this one
            return None
        return close(R, Y, 1e-7, 1e-10)  # the one rule, at a same-function test's tolerance (a forward's rounding)

    first = fits(None)
    if first is None:
        return None
    if first:
        return True, None
    import manualprop  # autoprop's docstrings may not list the options manualprop's class of the name lists

    for name, values in (doc_options(cls) or doc_options(getattr(manualprop, cls.__name__, None))).items():
        for value in values:
            if fits({name: value}):
                return True, {name: value}
    return False, None


def reference_advice(layer, cname: str, spec: str, make: Callable[[str | None], Any], shape,
                     seed: int) -> str | None:
    """The words of ``pass --reference manualprop.NAME`` checked first (see the module): None to keep the advice
    as it was, else the advice (with ``--reference-init`` when an option must change) or why none is given.
    ``make(own)``: the reference as ``--reference`` builds it, ``own`` its ``--reference-init`` JSON or None."""
    import manualprop

    cls = getattr(manualprop, spec.rpartition(".")[2], None)
    if not isinstance(cls, type):
        return None

    def build(extra):
        return make(None if extra is None else json.dumps(extra))

    try:
        build(None)
    except Exception as exc:  # noqa: BLE001 - a UsageError of --reference: the advice would end in it
        said = str(exc).removeprefix(f"--reference {spec}: ")
        return (f"pass --reference {spec} to compare them, with the arguments it needs: with this check's it cannot be "
                f"built ({said.rstrip('.')})")
    found = matching_build(build, lambda ref, X: ref.forward(X), cls, layer, shape, seed)
    if found is None:
        return None
    ok, extra = found
    if ok and (far := _differs_far(layer, build(extra), shape, seed)):
        return (f"compare them with the assignment's formula (e.g. a value worked by hand): {spec}, as --reference "
                f"would build it{'' if extra is None else ' with ' + _words(extra)}, computes {cname}'s function at a "
                f"drawn input but another at {far}, where --reference compares them too, so it is not suggested")
    if ok and extra is None:
        return f"pass --reference {spec} to compare them"
    if ok:
        # --reference-init replaces the read settings: the matching build's own kwargs given whole
        kwargs = {**_settings(build(None)), **extra}
        return (f"pass --reference {spec} --reference-init '{json.dumps(kwargs)}' to compare them ({spec} as "
                f"--reference would build it computes another function at a drawn input; with {_words(extra)} it "
                f"computes {cname}'s)")
    return (f"compare them with the assignment's formula (e.g. a value worked by hand): {spec}, as --reference would "
            f"build it, computes another function at a drawn input, so it is not suggested")


def twin_advice(layer, init, shape, seed: int) -> str | None:
    """The ``add --twin`` note checked first: None to keep it, else the note (with ``--twin-init``) or why no twin
    is suggested."""
    from .sources import TwinError, build_twin

    try:
        twin, _ = build_twin(layer, "layer", init or None)
    except TwinError:  # verify44c F5: "add --twin" then exits 2
        return _twin_sizes_advice(layer, init, shape, seed)
    if twin is None:
        return None
    cls = type(twin)

    def build(extra):
        return twin if extra is None else build_twin(layer, "layer", init or None, extra)[0]

    found = matching_build(build, lambda t, X: t(X), cls, layer, shape, seed)
    if found is None:
        return None
    ok, extra = found
    if ok and extra is None:
        return None
    if ok:
        return (f"add --twin --twin-init '{json.dumps(extra)}' to compare with the tape (autoprop's {cls.__name__} "
                f"built as --twin reads it computes another function at a drawn input; with {_words(extra)} it "
                "computes this layer's)")
    return (f"autoprop's {cls.__name__}, as --twin would build it, computes another function at a drawn input, so "
            "--twin is not suggested")


#: At most this many builds of the twin :func:`_twin_sizes_advice` tries (sizes to the power of the missing names).
SIZE_TRIES = 64


def _sizes(layer, shape) -> list[int]:
    """The sizes a missing constructor argument of a twin may take: the input's and output's axes after the batch
    axis, the parameters' axes (first seen first)."""
    X = np.random.default_rng(44).standard_normal(tuple(shape))
    try:
        Y = _output(layer.forward(X.copy()))
    except Exception:  # noqa: BLE001 - a probe: only the input's and parameters' sizes
        Y = np.zeros(0)
    dims = [*X.shape[1:], *Y.shape[1:]]
    for p in (getattr(layer, "params", None) or {}).values():
        dims += list(np.shape(p))
    return list(dict.fromkeys(int(d) for d in dims if d > 0))


def _twin_sizes_advice(layer, init, shape, seed: int) -> str | None:
    """The ``add --twin`` note of a layer whose twin ``--twin`` cannot build with this check's arguments (its constructor
    needs sizes the layer does not hold under their names): ``add --twin --twin-init`` with the sizes, read from the
    input, output and parameters, with which the twin builds, holds the layer's parameters and computes its forward
    at a drawn input; else why no twin is suggested (verify44c F5: a Linear of ``n_in``/``n_out`` and a LayerNorm
    without gamma/beta were told "add --twin", which exits 2)."""
    import inspect
    import itertools

    import autoprop.layers

    from .sources import _setting, build_twin

    cname = type(layer).__name__
    cls = getattr(autoprop.layers, cname, None)
    if not isinstance(cls, type):
        return None
    if not isinstance(shape, (tuple, list)) or not shape or not all(isinstance(s, int) for s in shape):
        # several inputs (verify45a F7: a forward(Q, K, V) named MultiHeadAttention): no sizes are tried
        return (f"autoprop's {cls.__name__} cannot be built from {cname} with this check's arguments, so --twin is "
                "not suggested")
    try:
        ps = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return None
    missing = [p.name for p in ps if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               and _setting(p.name, dict(init or {}), layer) is None]
    sizes = _sizes(layer, shape)
    X = 2.0 * np.random.default_rng([seed, 44]).standard_normal(tuple(shape))
    try:
        Y = _output(layer.forward(X.copy()))
    except Exception:  # noqa: BLE001 - nothing to compare: no advice
        return None
    tries = itertools.islice(itertools.product(sizes, repeat=len(missing)), SIZE_TRIES) if missing else []
    for values in tries:
        own = dict(zip(missing, values))
        try:
            twin, _ = build_twin(layer, "layer", init or None, own)
            fits = [_output(twin(X.copy()))]
            if hasattr(twin, "give"):  # a square weight: the other orientation too
                twin.give(layer.params, square=True)
                fits.append(_output(twin(X.copy())))
        except Exception:  # noqa: BLE001 - sizes the twin refuses (its parameters' shapes differ): not these
            continue
        if any(R.shape == Y.shape and close(R, Y, 1e-7, 1e-10) for R in fits):  # the same-function tolerance
            return (f"add --twin --twin-init '{json.dumps(own)}' to compare with the tape (autoprop's {cls.__name__} "
                    f"needs {', '.join(missing)}, which --twin cannot read from {cname}; with these sizes it holds "
                    f"{cname}'s parameters and computes its forward at a drawn input)")
    return (f"autoprop's {cls.__name__} cannot be built from {cname} with this check's arguments"
            f"{', nor with sizes read from its input, output and parameters,' if missing else ''} to hold {cname}'s "
            "parameters and compute its forward, so --twin is not suggested")


def _differs_far(layer, ref, shape, seed: int) -> str | None:
    """Where the layer's forward and the reference's differ at the shifted inputs ``--reference`` compares them at
    too (:func:`gradcheck._large_inputs.large_shifts`: ``X + 1000``, ...), the drawn input of :func:`_layer_output`
    shifted: its label, or None where the reference's output is not finite or both agree (verify44c F6: a ReLU6 named
    ReLU was told ``--reference manualprop.ReLU``, which FAILs at ``X + 1000``)."""
    from ._large_inputs import large_shifts

    got = _layer_output(layer, shape, seed)
    if got is None:
        return None
    for at, Xs in large_shifts(got[0]):
        with np.errstate(all="ignore"):
            try:
                R = _output(ref.forward(Xs.copy()))
            except Exception:  # noqa: BLE001 - a reference refusing such inputs: not compared there
                continue
            if not np.all(np.isfinite(R)):
                continue
            try:
                Y = _output(layer.forward(Xs.copy()))
            except Exception:  # noqa: BLE001 - the layer raising where the reference gives values: they differ
                return f"X {at}"
        if Y.shape != R.shape or not close(Y, R, 1e-7, 1e-10 * max(1.0, float(np.abs(R).max()))):
            return f"X {at}"
    return None


def _settings(ref) -> dict[str, Any]:
    """The JSON-able settings a built manualprop class shows as attributes of its constructor's parameter names."""
    import inspect

    try:
        names = [n for n in inspect.signature(type(ref)).parameters if n not in ("rng", "name")]
    except (TypeError, ValueError):
        return {}
    out = {}
    for n in names:
        v = getattr(ref, n, None)
        if isinstance(v, (str, int, float, bool)):
            out[n] = v
    return out


def _words(extra: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in extra.items())
