"""A layer or loss checked against ``--reference``, compared with it again at inputs of size 1000.

The check compares the reference at a drawn input of size about 1; inputs of size 1000 come with training (logits, the
scores of an attention), and ``exp`` overflows above 709.8. A softmax written without subtracting each row's max is
right at the drawn input and NaN there (newuser38 F9 for a loss, F10 for a layer: a Softmax layer without the shift
PASSed ``--reference manualprop.Softmax``); one shifting by the global max instead absorbs an input shifted alike
everywhere, so the rows are also shifted apart, +1000 and -1000 in turn (verify38 F10). Compared wherever the
reference's output and gradients are finite; a layer's forward may keep state (running statistics) or read the mask
it holds, so its probe runs on a copy (``copy.deepcopy``: a sandboxed layer's clone), and the reference's too.
One probe for ``gradcheck check`` (:func:`at_large_inputs`, :func:`at_large_predictions`) and the grader's
``layer_gradients`` and ``loss_gradient`` (session 40: the grader gave an unshifted softmax full marks).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from . import _validation as V
from .compare import close, compare
from .errors import NonFiniteError, StudentCodeError
from .result import TensorRecord
from .sources import Call, Wrapper, manual_source, reference_source

__all__ = ["LARGE_SHIFTS", "ROWS", "large_shifts", "shifted_roundoff", "at_large_inputs", "at_large_predictions",
           "overflow_note", "probed_large", "forward_at_large_inputs", "loss_at_large_predictions"]

#: The shifts of the input at which a layer or loss checked against a reference is compared with it again.
LARGE_SHIFTS = (1000.0, -1000.0)

#: The label of the shift by rows: +1000 on the even rows (the first axis), -1000 on the odd ones.
ROWS = "+/- 1000 by row"


def probed_large(tensor: str) -> bool:
    """Whether a record's ``tensor`` is one of :func:`at_large_inputs`'s rows (``dX (X + 1000)``), which a PASS line
    says apart from the tensors checked at the drawn input."""
    return tensor.endswith((" + 1000)", " - 1000)", f" {ROWS})"))


def large_shifts(x: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
    """``(label, x shifted)``: ``"+ 1000"``, ``"- 1000"``, then, for two rows or more along the first axis,
    :data:`ROWS` (rows at different offsets: a shift by the global max absorbs no such input)."""
    for c in LARGE_SHIFTS:
        yield f"{'+' if c > 0 else '-'} {abs(c):g}", x + c
    if x.ndim >= 1 and x.shape[0] >= 2:
        c = np.where(np.arange(x.shape[0]) % 2 == 0, LARGE_SHIFTS[0], LARGE_SHIFTS[1])
        yield ROWS, x + c.reshape(-1, *[1] * (x.ndim - 1))


def overflow_note(at: str, what: str, ref: str, bad: bool, of: str = "input") -> str:
    """The note of a forward or gradient that is not the reference's at ``at`` (``what``: the values it gave;
    ``bad``: some are NaN or inf, an overflow; ``of``: what was shifted, an input or a prediction)."""
    return (f"at {at} ({of}s of that size come with training), {what}, where the reference gives {ref}"
            + (f"; an overflow: exp of a large {of} is inf above 709.8, and a probability it rounds to 0 or 1 makes "
               "log give -inf (subtract each row's max first, the log-sum-exp shift, or use log1p/logaddexp)"
               if bad else "") + ".")


def shifted_roundoff(inputs: list[np.ndarray], grads: Mapping[str, np.ndarray]) -> dict[str, float]:
    """The absolute difference two right formulas' gradients may show at the shifted ``inputs``, per gradient key of
    ``grads`` (the reference's there; an input's key starts with ``@``): ``4 eps |x|^2 S_k``, ``eps`` the float
    inputs' machine epsilon (the coarsest), ``|x|`` their largest magnitude (about 1000), ``S_k`` the scale of the
    terms that form gradient ``k``: an input gradient's own largest |value|; a parameter gradient's, the largest
    |value| of the parameter gradients of its shape (its kind: an attention's four projections, its four biases).

    Why: a backward at inputs of size ``|x|`` forms products of two such quantities (an attention's scores
    ``Q K^T``, of size ``|x|^2``), each rounded to ``eps`` of its magnitude (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 2nd ed., 2002, sections 3.1 and 3.5: ``|fl(AB) - AB| <= gamma_n |A||B|``), and a
    right formula may cancel there: the textbook softmax VJP ``P (dP - sum(dP P))`` leaves ``eps |dP|`` on a
    saturated row where the stable one (manualprop's) gives 0, so a gradient whose exact value is 0 there
    (an attention's ``db_k``, which no output depends on; ``dW_q``, ``dW_k`` on saturated rows) carries the round-off
    of terms of its kind's size (``dW_k = dK^T X`` beside ``dW_v = dV^T X``, the textbook's ``dK`` off by
    ``eps |x|^2`` of ``dV``), not of its own (0). Each tensor keeps its own units: an input gradient is never
    scaled by a weight gradient's ``|x| N`` times larger one (smfix47's single ``S`` over all tensors let a
    backward of central differences pass, tests/test_grading_tester21g.py). Measured, float64, 216 draws ((2,4,6) to
    (2,16,32), causal or not; X + 1000, X - 1000, rows apart): a right textbook-VJP MultiHeadAttention differs from
    manualprop's by at most 0.11 of this bound (0.42 / 4) in its parameter gradients and 0.26 in the entries of dX
    outside rtol 1e-6; HIPS autograd's gradients of the same function (its own VJPs of exp, sum and divide) by at
    most 0.12 (dX) over 108. At ``|x| = 1000`` it is ``8.9e-10 S_k``: an error of 1e-8 of a kind's scale still
    FAILs, as NaN, inf and a row underflowed by a global max shift do; not used for ``Y``, nor for a loss
    (:func:`at_large_predictions`). A kind is read from shapes: two parameters of one shape and other units (a
    recurrent layer's ``W_ih`` and ``W_hh`` where D = H) share the larger scale."""
    floats = [x for x in inputs if x.dtype.kind == "f" and x.size]
    if not floats:
        return {}
    eps = max(float(np.finfo(x.dtype).eps) for x in floats)
    size = max(float(np.max(np.abs(x))) for x in floats)
    top = {k: float(np.max(np.abs(g))) if np.size(g) else 0.0 for k, g in grads.items()}
    kind = {k: max(top[j] for j, h in grads.items() if not j.startswith("@") and np.shape(h) == np.shape(g))
            for k, g in grads.items() if not k.startswith("@")}
    return {k: 4.0 * eps * size * size * kind.get(k, top[k]) for k in grads}


def at_large_inputs(call: Call, reference: Any, G: np.ndarray, rtol: float, atols: Mapping[str, float],
                    display: Mapping[str, str], records: list[TensorRecord], notes: list[str]) -> None:
    """Append to ``records`` the rows of ``Y`` and of each gradient the reference gives (``display``'s names),
    compared with ``reference``'s at the float inputs shifted by :func:`large_shifts` where the reference's are
    finite (the rows shift after the uniform shifts passed), and to ``notes`` a note for each shift where they differ.
    ``atols``: the check's atol by gradient key, ``"Y"`` the output's; a gradient's is raised there to the round-off
    of a right formula at such inputs (:func:`shifted_roundoff`). The layer and the reference run on copies."""
    diff = [x.dtype.kind == "f" for x in call.inputs]
    name = call.names[0] if len(call.inputs) == 1 else "inputs"
    shifts = [list(large_shifts(x)) if d else None for x, d in zip(call.inputs, diff)]
    for i, (at, _) in enumerate(next(s for s in shifts if s is not None) if any(diff) else ()):
        if at == ROWS and (not all(r.passed for r in records) or any(s is not None and len(s) <= i for s in shifts)):
            break
        inputs = [x if s is None else s[i][1] for x, s in zip(call.inputs, shifts)]
        with np.errstate(all="ignore"):
            if (got := _student_at(call, inputs, G)) is None:
                return
            want = _reference_at(reference, dataclasses.replace(call, inputs=inputs), G, got, rtol, atols)
        if want is None:
            continue
        lost = shifted_roundoff(inputs, {k: w for k, w in want.items() if k != "Y"})
        recs = [TensorRecord(f"{t} ({name} {at})", np.shape(w), "forward" if t == "Y" else "gradient", [compare(
            _nan_unless(got.get(k), np.shape(w)), w, "manual-vs-reference", rtol=rtol,
            atol=atols["Y"] if k == "Y" else max(atols.get(k, atols["Y"]), lost[k]))])
            for k, t, w in [("Y", "Y", want["Y"]), *((k, display[k], w) for k, w in want.items() if k in display)]]
        records += recs
        if not all(r.passed for r in recs):
            wrong = [r.tensor.partition(" (")[0] for r in recs if not r.passed]
            bad = not all(np.isfinite(v).all() for v in got.values())
            how = " (it raised there)" if "Y" not in got else " (NaN or inf)" if bad else ""
            notes.append(overflow_note(f"{name} {at}", f"{', '.join(wrong)} differ{'s' * (len(wrong) == 1)} from the "
                                       f"reference's{how}", "finite values", bad))


def forward_at_large_inputs(call: Call, reference: Any, y_shape: tuple, rtol: float, atol: float) -> str:
    """The note of the first of :func:`large_shifts` of the float inputs where the layer's output (forward alone, no
    backward: the grader's ``layer_forward``) has NaN or inf, or forward raised, where ``reference``'s is finite (an
    overflow: an unshifted softmax); "" when none does or the layer cannot be copied. Finite values are not compared
    there: the test's tolerance (rtol 1e-7) was chosen for its input, not for outputs of size 1000, whose round-off
    differs by summation order (``rtol``, ``atol``: the reference's parameters chosen as check chooses them). One copy of the layer for every shift (at most 3 forwards of it, each compared at once:
    the first difference ends the probe); the reference gets the layer's parameters (:func:`_reference_at`)."""
    if isinstance(call.layer, Wrapper) and "__deepcopy__" not in type(call.layer).__dict__:
        return ""
    try:
        lay = copy.deepcopy(call.layer)
    except Exception:  # noqa: BLE001 - a layer that cannot be copied: no probe
        return ""
    name = call.names[0] if len(call.inputs) == 1 else "inputs"
    shifts = [list(large_shifts(x)) if x.dtype.kind == "f" else None for x in call.inputs]
    first = next((s for s in shifts if s is not None), [])
    try:
        c = Call(lay, call.owner, call.inputs, call.names, V.layer_params(lay, call.owner), call.training)
        for i, (at, _) in enumerate(first):
            if any(s is not None and len(s) <= i for s in shifts):
                break
            inputs = [x if s is None else s[i][1] for x, s in zip(call.inputs, shifts)]
            with np.errstate(all="ignore"):
                try:
                    got = {"Y": np.asarray(c._run(*[x.copy() for x in inputs]), dtype=np.float64)}
                except (StudentCodeError, TypeError, ValueError):  # raised there: not the reference's
                    got = {}
                want = _reference_at(reference, dataclasses.replace(call, inputs=inputs), np.ones(y_shape), got, rtol,
                                     {"Y": atol})
            if want is None:
                continue
            if "Y" not in got or not np.isfinite(got["Y"]).all():  # an overflow (finite values: not judged here)
                how = " (it raised there)" if "Y" not in got else " (NaN or inf)"
                return overflow_note(f"{name} {at}", f"Y differs from the reference's{how}", "finite values",
                                     "Y" in got)
    finally:
        inner = getattr(lay, "_layer", lay)
        if type(inner).__module__.startswith("gradcheck.sandbox"):  # a sandboxed copy: freed in its child
            inner.release()
    return ""


def loss_at_large_predictions(reference: Any, yt: np.ndarray, yp: np.ndarray, value: Callable[..., float]) -> str:
    """The note of the first of :func:`large_shifts` of ``y_pred`` where the loss's value ``value(x)`` (its forward
    alone: the grader's ``loss_value``) is NaN or inf, or it raised, where ``reference``'s is finite (an overflow: a
    cross-entropy without its max shift); "" when none does. At most 3 forwards of the loss; its cache is its
    forward's at ``yp`` again after. A finite value is not compared there (:func:`forward_at_large_inputs`)."""
    note = ""
    for at, x in large_shifts(yp):
        with np.errstate(all="ignore"):
            try:
                L_ref = float(reference.forward(yt.copy(), x.copy()))
            except Exception:  # noqa: BLE001 - a reference that refuses such predictions (probabilities): no probe
                continue
            if not math.isfinite(L_ref):
                continue
            try:
                L = value(x)
            except (NonFiniteError, StudentCodeError):  # NaN or inf, or it raised there: not the reference's
                L = float("nan")
        if not math.isfinite(L):  # an overflow (a finite value: not judged here, as forward_at_large_inputs)
            note = overflow_note(f"y_pred {at}", f"L = {L:.6g}", f"L = {L_ref:.6g}", True, "prediction")
            break
    with contextlib.suppress(Exception):  # noqa: BLE001 - the loss's cache as its test left it
        value(yp)
    return note


def _nan_unless(a: Any, shape: tuple) -> np.ndarray:
    """``a`` as float64 if it has ``shape``, else NaN of that shape (what the layer did not give counts as NaN)."""
    a = None if a is None else np.asarray(a, dtype=np.float64)
    return a if a is not None and a.shape == tuple(shape) else np.full(shape, np.nan)


def _student_at(call: Call, inputs: list[np.ndarray], G: np.ndarray) -> dict[str, np.ndarray] | None:
    """``{"Y": output, key: gradient}`` of a copy of the checked layer at ``inputs`` with upstream ``G``; what it
    raises leaves the values out (NaN in the comparison). None (no probe) for a layer that cannot be copied, or
    a checker's wrapper whose copy would call the original (its methods held as attributes, not :class:`_Proxy`)."""
    if isinstance(call.layer, Wrapper) and "__deepcopy__" not in type(call.layer).__dict__:
        return None
    try:
        lay = copy.deepcopy(call.layer)
    except Exception:  # noqa: BLE001 - a layer that cannot be copied: no probe
        return None
    out: dict[str, np.ndarray] = {}
    try:
        c = Call(lay, call.owner, inputs, call.names, V.layer_params(lay, call.owner), call.training)
        out["Y"] = np.asarray(c._run(*[x.copy() for x in inputs]), dtype=np.float64)
        if out["Y"].shape == np.shape(G):
            out.update(manual_source(c, G.copy()))
    except (StudentCodeError, TypeError, ValueError):  # raised there, or a gradient of NaN refused: not the reference's
        pass
    finally:
        inner = getattr(lay, "_layer", lay)
        if type(inner).__module__.startswith("gradcheck.sandbox"):  # a sandboxed copy: freed in its child
            inner.release()
    return out


def _reference_at(reference: Any, call: Call, G: np.ndarray, got: Mapping[str, np.ndarray], rtol: float,
                  atols: Mapping[str, float]) -> dict[str, np.ndarray] | None:
    """``{"Y": output, key: gradient}`` of a copy of ``reference`` given the layer's parameters at ``call``'s inputs
    (a square weight the way that reproduces the layer's output there, :func:`reference_source`); None when it
    raises or any of them is not finite (no probe there)."""
    try:
        Y, grads = reference_source(copy.deepcopy(reference), call, G, [], matches=lambda Yr: "Y" in got and (
            Yr.shape == got["Y"].shape and close(got["Y"], Yr, rtol, atols["Y"])), agrees=lambda gs: all(
            k in got and close(got[k], g, rtol, atols.get(k, atols["Y"])) for k, g in gs.items()))
    except Exception:  # noqa: BLE001 - a reference that refuses such inputs: no probe
        return None
    out = {"Y": np.asarray(Y, dtype=np.float64), **grads}
    return out if all(np.isfinite(v).all() for v in out.values()) else None


def at_large_predictions(loss: Any, reference: Any, yt: np.ndarray, yp: np.ndarray, value: Callable[..., float],
                          owner: str, gname: str, rtol: float, atol: float, records: list[TensorRecord],
                          notes: list[str]) -> tuple[list[TensorRecord], list[str]]:
    """``records`` and ``notes`` with the records of ``L`` and ``dL/dy_pred`` against ``reference``'s at ``y_pred``
    shifted by each of :func:`large_shifts` where the reference's are finite, and a note for
    each shift where they differ (NaN or inf from the loss: an overflow). ``value(x)`` runs the loss's forward at ``x``; the loss's state is
    its forward's at ``y_pred`` again after."""
    records, notes = list(records), list(notes)
    for at, x in large_shifts(yp):  # the rows apart once the uniform shifts passed (verify38 F10: a global max)
        if at == ROWS and not all(r.passed for r in records):
            break
        with np.errstate(all="ignore"):
            try:
                L_ref = float(reference.forward(yt.copy(), x.copy()))
                g_ref = np.asarray(reference.backward(), dtype=np.float64)
            except Exception:  # noqa: BLE001 - a reference that refuses such predictions (probabilities): no probe
                continue
            if not (math.isfinite(L_ref) and g_ref.shape == yp.shape and np.isfinite(g_ref).all()):
                continue
            L_c, g_c, ran = float("nan"), np.full(yp.shape, np.nan), True  # what the loss raises there counts as NaN
            try:
                L_c = value(x)
            except NonFiniteError:  # its forward ran to the end, to an L of NaN or inf: its backward is read
                pass
            except StudentCodeError:  # it raised (or the sandbox failed): no backward of this forward
                ran = False
            if ran:
                with contextlib.suppress(StudentCodeError):
                    g_c = np.asarray(V.call_student(loss.backward, owner=owner, call="backward()"), dtype=np.float64)
        if g_c.shape != yp.shape:
            g_c = np.full(yp.shape, np.nan)
        at = f"y_pred {at}"
        recs = [TensorRecord(f"L ({at})", (), "forward",
                             [compare(np.array(L_c), np.array(L_ref), "manual-vs-reference", rtol=rtol, atol=atol)]),
                TensorRecord(f"{gname} ({at})", yp.shape, "gradient",
                             [compare(g_c, g_ref, "manual-vs-reference", rtol=rtol, atol=atol)])]
        records += recs
        if not all(r.passed for r in recs):
            bad = not (math.isfinite(L_c) and np.isfinite(g_c).all())
            notes.append(overflow_note(at, f"L = {L_c:.6g}" + (" and a gradient with NaN or inf" if not np.isfinite(
                g_c).all() else ""), f"L = {L_ref:.6g} and a finite gradient", bad, "prediction"))
    with contextlib.suppress(Exception):  # noqa: BLE001 - the loss's cache as its check left it
        value(yp)
    return records, notes
