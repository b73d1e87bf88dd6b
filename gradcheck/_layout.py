"""The memory-layout rerun: a layer or loss checked on C-ordered arrays run once more on the same values in another layout.

Every array the check draws or is given reaches the layer C-contiguous (check_layer's copies; the sandbox's shared
memory and codec rebuild arrays in C order), so a layer that reads memory as if it were C-contiguous passed: a pooling
whose ``np.lib.stride_tricks.as_strided`` windows took their strides from the shape instead of ``x.strides``, a
backward reading dY's buffer in C order (verify40 H1). In a network its input is often laid out otherwise: a transpose,
or a column slice, of the previous layer's output. After the check passed, :func:`layout_rerun` runs forward once at
the float inputs in another layout (:func:`relaid`: Fortran (column-major) order for an array with two axes longer than
1; for a 1-d array or a ``(1, n)`` row, whose C and Fortran orders are one buffer, a strided view holding every other
element of a buffer twice its size) and backward once at dY so laid out, and compares Y and every gradient with the
check's C-ordered run (the ``C-order-vs-Fortran-order`` pair); :func:`loss_layout_rerun` does the same for a loss's
``L`` and ``dL/dy_pred`` (session 42: a loss reading y_pred's buffer in C order passed). PyTorch's operator tests
state the same rule (``test_noncontiguous_samples`` in test/test_ops.py: forward and backward on non-contiguous inputs
and gradients must equal the contiguous results, an error fails the test), so a layer that raises there is no PASS
either: its error is raised, named so (verify40b F5). A sandboxed layer or loss is handed the arrays so laid out in its
child (:func:`gradcheck.sandbox._fortran`). One forward and one backward, at the end of the check, on the layer itself;
a difference is confirmed by running the C-ordered pair again (a layer whose numbers move between calls is not said to
depend on the layout).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from .compare import Comparison, close, compare
from .errors import StudentCodeError
from .result import LAYOUT_PAIR, TensorRecord
from .sources import Call, manual_source, strided_copy

__all__ = ["LAYOUT_PAIR", "layout_rerun", "loss_layout_rerun", "relaid"]

#: What the rerun names as the layout's advice: the usual causes and the two fixes.
LAYOUT_CAUSES = ("numpy code must give the same numbers for any memory layout; forward or backward reads the memory "
                 "as if it were C-contiguous (strides for np.lib.stride_tricks.as_strided computed from the shape "
                 "instead of taken from x.strides; a buffer read with .data, np.frombuffer or tobytes; ravel, flatten "
                 "or reshape with order='K' or 'A'). Take the strides from the array, or call "
                 "np.ascontiguousarray(x) first")
#: How each layout is named, and what hands it on in a network.
_FORTRAN = ("in Fortran (column-major) order", "np.asfortranarray; what a transpose or a column slice of the previous "
            "layer's output hands on")
_STRIDED = ("as a strided view (every other element of a buffer twice its size)", "x[::2] of a larger array; what a "
            "slice with a step, or a row or column of a matrix, hands on")


def relaid(x: np.ndarray) -> np.ndarray:
    """The values of the float array ``x`` in another memory layout, or ``x`` itself when it has one only (one
    element, or not float): a Fortran-ordered copy when some two axes are longer than 1; else (a 1-d array, a ``(1,
    n)`` row or an ``(n, 1)`` column, whose C and Fortran orders are one buffer) a strided copy, every other element of
    a buffer twice its size (:func:`gradcheck.sources.strided_copy`), which an ``as_strided`` with strides from the
    shape or a buffer read in C order gets wrong too."""
    if not (isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.size > 1):
        return x
    if x.ndim >= 2 and sum(n > 1 for n in x.shape) >= 2:
        return np.array(x, order="F", copy=True)
    return strided_copy(x)


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _described(pairs: list[tuple[str, np.ndarray]]) -> tuple[str, str]:
    """``(what, why)`` of the arrays ``pairs`` (name, relaid array) for the messages: ``"X and dY in Fortran
    (column-major) order"``, what makes such a layout."""
    kinds = [(k, [n for n, a in pairs if (a.flags.f_contiguous and a.ndim >= 2) == (k is _FORTRAN)])
             for k in (_FORTRAN, _STRIDED)]
    kinds = [(k, names) for k, names in kinds if names]
    return (" and ".join(f"{_listed(names)} {k[0]}" for k, names in kinds), "; ".join(k[1] for k, _ in kinds))


def layout_rerun(call: Call, G: np.ndarray, Y: np.ndarray, manual: Mapping[str, np.ndarray], rtol: float,
                 atols: Mapping[str, float], display: Mapping[str, str], records: list[TensorRecord],
                 notes: list[str]) -> None:
    """Forward at ``call``'s inputs and backward at ``G``, each float array in another memory layout (:func:`relaid`);
    ``Y`` and each gradient of ``manual`` (the check's C-ordered run, its keys in ``display``) compared with the
    results by the :data:`LAYOUT_PAIR` comparison, each that differs failing its record (``Y``'s made first when there
    is none), and a note naming what was laid out and what differs. Nothing when no array has two layouts. A
    difference counts only when the C-ordered forward and backward, run again, give the check's numbers (one forward
    and one backward more, on a failure only). Raises the layer's own error (:class:`~gradcheck.errors.StudentCodeError`
    and its kinds, their exit codes) with the layout named in front of it (verify40b F5).

    Parameters
    ----------
    call : Call
        The layer and its C-ordered inputs, in the mode checked.
    G : ndarray
        The check's upstream gradient dY, shape of ``Y``.
    Y : ndarray
        The check's output.
    manual : mapping of str to ndarray
        The check's gradients by key (``"@X"``, ``"W"``).
    rtol : float
        The check's rtol.
    atols : mapping of str to float
        The atol of each key, and of ``"Y"``.
    display : mapping of str to str
        Each key's tensor name (``"dX"``, ``"dW"``).
    records, notes : list
        The check's, appended to.
    """
    xs = [relaid(x) for x in call.inputs]
    dY = relaid(G)
    moved = [(n, f) for n, x, f in zip(call.names, call.inputs, xs) if f is not x] + ([("dY", dY)] if dY is not G else [])
    if not moved:
        return
    ours = {"Y": Y, **{k: manual[k] for k in display if k in manual}}

    def run(again: bool) -> dict[str, np.ndarray]:
        if again:  # the C-ordered pair again
            return {"Y": call.forward(*[x.copy() for x in call.inputs]), **manual_source(call, G.copy(), [])}
        return {"Y": call.forward(*[f if f is not x else x.copy() for x, f in zip(call.inputs, xs)]),
                **manual_source(call, dY, [])}
    _judged(call.owner, moved, run, ours, rtol, atols, {"Y": "Y", **display}, (tuple(Y.shape), "forward"), records,
            notes)


def loss_layout_rerun(owner: str, run: Callable[[np.ndarray, np.ndarray], dict[str, np.ndarray]], y_true: np.ndarray,
                      y_pred: np.ndarray, ours: Mapping[str, np.ndarray], rtol: float, atol: float, gname: str,
                      records: list[TensorRecord], notes: list[str]) -> None:
    """:func:`layout_rerun` of a loss (:func:`gradcheck.check.check_loss`): ``run(y_true, y_pred) -> {"L": value,
    "y_pred": dL/dy_pred}`` once more at ``y_pred`` and a float ``y_true`` in another memory layout (:func:`relaid`),
    compared with ``ours`` (the check's run), each that differs failing its record (``L``'s made first when there is
    none) with a note; a loss that reads its input's buffer in C order (``as_strided`` with strides from the shape,
    ``ravel(order='K')``) passed before. Raises as :func:`layout_rerun`.

    Parameters
    ----------
    owner : str
        The loss's name.
    run : callable
        Forward and backward of the loss at the two arrays as given (copies in their layout).
    y_true, y_pred : ndarray
        The check's (C-ordered) arrays.
    ours : mapping of str to ndarray
        ``"L"`` (0-d) and ``"y_pred"``: the check's run.
    rtol, atol : float
        The check's.
    gname : str
        The gradient's name (``"dy_pred"``).
    records, notes : list
        The check's, appended to.
    """
    t, p = relaid(y_true), relaid(y_pred)
    moved = [(n, f) for n, x, f in (("y_true", y_true, t), ("y_pred", y_pred, p)) if f is not x]
    if moved:
        _judged(owner, moved, lambda again: run(y_true, y_pred) if again else run(t, p), ours, rtol,
                {"L": atol, "y_pred": atol}, {"L": "L", "y_pred": gname}, ((), "forward"), records, notes)


def _judged(owner: str, moved: list[tuple[str, np.ndarray]], run: Callable[[bool], dict[str, np.ndarray]],
            ours: Mapping[str, np.ndarray], rtol: float, atols: Mapping[str, float], display: Mapping[str, str],
            first: tuple[tuple, str], records: list[TensorRecord], notes: list[str]) -> None:
    """The rerun's verdict: ``run(False)`` (forward and backward with the arrays ``moved`` laid out otherwise) against
    ``ours``, the check's C-ordered run, by key; a difference confirmed by ``run(True)`` (the C-ordered pair again)
    fails the record of each that differs (the first key's made, of ``first`` = ``(shape, kind)``, when there is
    none) with a note. The layer's or loss's error raised with the layout named in front of it."""
    what, why = _described(moved)
    try:
        with np.errstate(all="ignore"):
            got = run(False)
    except StudentCodeError as exc:
        head = (f"{owner} raised when forward and backward ran again with {what}, the same values in another memory "
                f"layout ({why}; on C-ordered arrays its gradients had passed). numpy code must accept any memory "
                "layout, as numpy's own functions do: where C order is needed, call np.ascontiguousarray(x) first. "
                "The error: ")
        exc.args = (head + str(exc.args[0]) if exc.args else head, *exc.args[1:])
        raise
    if _same(ours, got, rtol, atols) or not _repeatable(run, ours, rtol, atols):
        return
    top = next(iter(ours))
    comps = {k: _compared(ours[k], got.get(k), rtol, atols.get(k, atols[top])) for k in ours}
    bad = []
    for k, c in comps.items():
        name = display[k]
        rec = next((r for r in records if r.tensor == name), None)
        if c.passed or (rec is None and k != top):
            continue
        if rec is None:
            records.insert(0, rec := TensorRecord(name, *first))
        rec.comparisons.append(c)
        bad.append(name)
    worst = max(c.max_abs_error for c in comps.values() if not c.passed)
    notes.append(f"memory layout: forward and backward ran again with {what}, the same values in another memory "
                 f"layout ({why}), and {_listed(bad)} differ{'s' if len(bad) == 1 else ''} from the run on C-ordered "
                 f"arrays (by up to {worst:.3g}; the C~Fortran column): {LAYOUT_CAUSES}.")


def _same(ours: Mapping[str, np.ndarray], got: Mapping[str, np.ndarray], rtol: float,
          atols: Mapping[str, float]) -> bool:
    """Whether each array of ``ours`` has its like in ``got`` (:func:`gradcheck.compare.close`: equal arrays at once);
    an atol not given is the first key's."""
    top = next(iter(ours))
    return all(k in got and close(v, got[k], rtol, atols.get(k, atols[top])) for k, v in ours.items())


def _compared(a: np.ndarray, b: np.ndarray | None, rtol: float, atol: float) -> Comparison:
    """``a`` (the C-ordered run's) against ``b`` (the Fortran-ordered run's) by :data:`LAYOUT_PAIR`; a missing ``b`` or
    one of another shape fails (an infinite error)."""
    if b is not None and np.shape(b) == np.shape(a):
        return compare(a, b, LAYOUT_PAIR, rtol=rtol, atol=atol)
    return Comparison(LAYOUT_PAIR, float("inf"), 1.0, (), float("nan"), float("nan"), False, atol=atol)


def _repeatable(run: Callable[[bool], dict[str, np.ndarray]], ours: Mapping[str, np.ndarray], rtol: float,
                atols: Mapping[str, float]) -> bool:
    """Whether forward and backward on the C-ordered arrays again (``run(True)``) give ``ours`` (the check's run): only
    then is a difference of the other layout's run the layout's. An error there: False."""
    try:
        with np.errstate(all="ignore"):
            again = run(True)
    except StudentCodeError:
        return False
    return _same(ours, again, rtol, atols)
