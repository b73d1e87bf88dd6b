"""The memory-layout rerun: a layer checked on C-ordered arrays run once more on the same values in Fortran order.

Every array the check draws or is given reaches the layer C-contiguous (check_layer's copies; the sandbox's shared
memory and codec rebuild arrays in C order), so a layer that reads memory as if it were C-contiguous passed: a pooling
whose ``np.lib.stride_tricks.as_strided`` windows took their strides from the shape instead of ``x.strides``, a
backward reading dY's buffer in C order (verify40 H1). In a network its input is often laid out otherwise: a transpose,
or a column slice, of the previous layer's output. After the check passed, :func:`layout_rerun` runs forward once at
the float inputs of two axes or more in Fortran (column-major) order and backward once at a Fortran-ordered dY, and
compares Y and every gradient with the check's C-ordered run (the ``C-order-vs-Fortran-order`` pair). PyTorch's
operator tests state the same rule (``test_noncontiguous_samples`` in test/test_ops.py: forward and backward on
non-contiguous inputs and gradients must equal the contiguous results, an error fails the test), so a layer that
raises there is no PASS either: its error is raised, named so (verify40b F5). A sandboxed layer is handed the arrays so
laid out in its child (:func:`gradcheck.sandbox._fortran`). One forward and one backward, at the end of the check, on
the layer itself; a difference is confirmed by running the C-ordered pair again (a layer whose numbers move between
calls is not said to depend on the layout).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .compare import Comparison, close, compare
from .errors import StudentCodeError
from .result import LAYOUT_PAIR, TensorRecord
from .sources import Call, manual_source

__all__ = ["LAYOUT_PAIR", "fortran", "layout_rerun"]

#: What the rerun names as the layout's advice: the usual causes and the two fixes.
LAYOUT_CAUSES = ("numpy code must give the same numbers for any memory layout; forward or backward reads the memory "
                 "as if it were C-contiguous (strides for np.lib.stride_tricks.as_strided computed from the shape "
                 "instead of taken from x.strides; a buffer read with .data, np.frombuffer or tobytes; ravel, flatten "
                 "or reshape with order='K' or 'A'). Take the strides from the array, or call "
                 "np.ascontiguousarray(x) first")


def fortran(x: np.ndarray) -> np.ndarray:
    """A Fortran-ordered copy of the float array ``x`` of two axes or more whose C and Fortran orders differ (some two
    axes longer than 1); else ``x`` itself (a 1-d array, or a ``(1, n)`` one, has one layout only)."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.ndim >= 2 and sum(n > 1 for n in x.shape) >= 2:
        return np.array(x, order="F", copy=True)
    return x


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def layout_rerun(call: Call, G: np.ndarray, Y: np.ndarray, manual: Mapping[str, np.ndarray], rtol: float,
                 atols: Mapping[str, float], display: Mapping[str, str], records: list[TensorRecord],
                 notes: list[str]) -> None:
    """Forward at ``call``'s inputs and backward at ``G``, each float array of two axes or more in Fortran order; ``Y``
    and each gradient of ``manual`` (the check's C-ordered run, its keys in ``display``) compared with the results by
    the :data:`LAYOUT_PAIR` comparison, each that differs failing its record (``Y``'s made first when there is none),
    and a note naming what was laid out and what differs. Nothing when no array has two layouts. A difference counts
    only when the C-ordered forward and backward, run again, give the check's numbers (one forward and one backward
    more, on a failure only). Raises the layer's own error (:class:`~gradcheck.errors.StudentCodeError` and its kinds,
    their exit codes) with the layout named in front of it (verify40b F5).

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
    xs = [fortran(x) for x in call.inputs]
    dY = fortran(G)
    moved = [n for n, x, f in zip(call.names, call.inputs, xs) if f is not x] + (["dY"] if dY is not G else [])
    if not moved:
        return
    try:
        with np.errstate(all="ignore"):
            got = {"Y": call.forward(*[f if f is not x else x.copy() for x, f in zip(call.inputs, xs)]),
                   **manual_source(call, dY, [])}
    except StudentCodeError as exc:
        head = (f"{call.owner} raised when forward and backward ran again with {_listed(moved)} in Fortran "
                "(column-major) order, the same values in another memory layout (what a transpose or a column slice "
                "of the previous layer's output hands on; on C-ordered arrays its gradients had passed). numpy code "
                "must accept any memory layout, as numpy's own functions do: where C order is needed, call "
                "np.ascontiguousarray(x) first. The error: ")
        exc.args = (head + str(exc.args[0]) if exc.args else head, *exc.args[1:])
        raise
    ours = {"Y": Y, **{k: manual[k] for k in display if k in manual}}
    if _same(ours, got, rtol, atols) or not _repeatable(call, G, ours, rtol, atols):
        return
    comps = {k: _compared(ours[k], got.get(k), rtol, atols.get(k, atols["Y"])) for k in ours}
    bad = []
    for k, c in comps.items():
        name = "Y" if k == "Y" else display[k]
        rec = next((r for r in records if r.tensor == name), None)
        if c.passed or (rec is None and k != "Y"):
            continue
        if rec is None:
            records.insert(0, rec := TensorRecord("Y", tuple(Y.shape), "forward"))
        rec.comparisons.append(c)
        bad.append(name)
    worst = max(c.max_abs_error for c in comps.values() if not c.passed)
    notes.append(f"memory layout: forward and backward ran again with {_listed(moved)} in Fortran (column-major) "
                 "order, the same values in another memory layout (np.asfortranarray; what a transpose or a column "
                 f"slice of the previous layer's output hands on), and {_listed(bad)} differ"
                 f"{'s' if len(bad) == 1 else ''} from the run on C-ordered arrays (by up to {worst:.3g}; the "
                 f"C~Fortran column): {LAYOUT_CAUSES}.")


def _same(ours: Mapping[str, np.ndarray], got: Mapping[str, np.ndarray], rtol: float,
          atols: Mapping[str, float]) -> bool:
    """Whether each array of ``ours`` has its like in ``got`` (:func:`gradcheck.compare.close`: equal arrays at once)."""
    return all(k in got and close(v, got[k], rtol, atols.get(k, atols["Y"])) for k, v in ours.items())


def _compared(a: np.ndarray, b: np.ndarray | None, rtol: float, atol: float) -> Comparison:
    """``a`` (the C-ordered run's) against ``b`` (the Fortran-ordered run's) by :data:`LAYOUT_PAIR`; a missing ``b`` or
    one of another shape fails (an infinite error)."""
    if b is not None and np.shape(b) == np.shape(a):
        return compare(a, b, LAYOUT_PAIR, rtol=rtol, atol=atol)
    return Comparison(LAYOUT_PAIR, float("inf"), 1.0, (), float("nan"), float("nan"), False, atol=atol)


def _repeatable(call: Call, G: np.ndarray, ours: Mapping[str, np.ndarray], rtol: float,
                atols: Mapping[str, float]) -> bool:
    """Whether forward and backward on the C-ordered inputs and ``G`` again give ``ours`` (the check's run): only then
    is a difference of the Fortran-ordered run the layout's. An error there: False."""
    try:
        with np.errstate(all="ignore"):
            again = {"Y": call.forward(*[x.copy() for x in call.inputs]), **manual_source(call, G.copy(), [])}
    except StudentCodeError:
        return False
    return _same(ours, again, rtol, atols)
