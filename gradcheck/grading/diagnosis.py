"""Name the bug behind a wrong gradient: one sentence a student can act on.

:func:`diagnose` compares a submitted tensor with the correct one (from the
reference layer given the same parameters, input and upstream gradient) and
recognises the classic signatures:

=================================  ==============================================
signature                          sentence (for ``db``, batch 8)
=================================  ==============================================
``got.T == expected``              "dW is transposed: ..."
``got.sum(0) == expected``         "db was not summed over the batch: ..."
``got == -expected``               "dX has the opposite sign ..."
``got * N == expected``            "db is the mean over the batch, not the sum ..."
``got == N * expected``            "... N times too large (a sum where a mean ...)"
``got == c * expected``            "dW is 2 times the correct gradient ..."
``got == alternative``             the alternative's own sentence, e.g. the gradient
                                   computed as if ``dY`` were all ones ("the
                                   upstream gradient dY is ignored")
``got == 0``                       "dX is all zeros ..."
=================================  ==============================================

When nothing matches, the sentence gives the worst element, as the checker does.
If :mod:`gradcheck.diagnose` (named bug signatures, maintained with the checker)
is importable and recognises the case, its wording is used first.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import fmt_shape

__all__ = ["diagnose", "close"]


def close(a: np.ndarray, b: np.ndarray, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """True when ``a`` and ``b`` have the same shape and agree element-wise like gradcheck's comparison.

    Per element ``|a-b| <= atol`` or ``|a-b| <= rtol * (|a| + |b|)``.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    d = np.abs(a - b)
    return bool(np.all((d <= atol) | (d <= rtol * (np.abs(a) + np.abs(b)))))


def _external(tensor: str, got: np.ndarray, expected: np.ndarray) -> str | None:
    try:
        from .. import diagnose as ext  # added alongside the checker; optional here
    except ImportError:
        return None
    fn = getattr(ext, "diagnose_tensor", None)
    if not callable(fn):
        return None
    try:
        out = fn(tensor, got, expected)
    except Exception:  # noqa: BLE001 - a diagnosis must never break grading
        return None
    text = getattr(out, "message", out)
    return text if isinstance(text, str) and text else None


def diagnose(tensor: str, got: np.ndarray, expected: np.ndarray, *, batch_size: int | None = None,
             alternatives: Mapping[str, np.ndarray] | None = None, rtol: float = 1e-6,
             atol: float = 1e-9) -> str:
    """One sentence naming what is wrong with ``got`` (a submitted tensor) against ``expected``.

    Parameters
    ----------
    tensor : str
        Display name, e.g. ``"db"``.
    got : ndarray
        The submitted value (any shape).
    expected : ndarray
        The correct value.
    batch_size : int, optional
        The batch size N, to recognise a mean where a sum is due (and the reverse)
        and a gradient not summed over the batch.
    alternatives : mapping of str -> ndarray, optional
        Known wrong answers and their sentences, e.g.
        ``{"the upstream gradient dY is ignored (dX equals the local derivative alone)": d_ones}``.
    rtol, atol : float
        Tolerances of the comparisons.

    Returns
    -------
    str
        A sentence ending with a period; "" when ``got`` is in fact correct.
    """
    got = np.asarray(got, dtype=np.float64)
    exp = np.asarray(expected, dtype=np.float64)
    ext = _external(tensor, got, exp) if got.shape == exp.shape else None
    if ext:
        return ext
    es, gs = fmt_shape(exp.shape), fmt_shape(got.shape)
    if got.shape != exp.shape:
        if got.ndim == exp.ndim == 2 and got.shape == exp.shape[::-1] and close(got.T, exp, rtol, atol):
            return (f"{tensor} is transposed: it has shape {gs}, the parameter has shape {es}; "
                    f"swap the factors of the product (e.g. dY.T @ X, not X.T @ dY).")
        if got.ndim == exp.ndim + 1 and got.shape[1:] == exp.shape and close(got.sum(axis=0), exp, rtol, atol):
            return (f"{tensor} was not summed over the batch: it has shape {gs}, one row per example, "
                    f"but the parameter has shape {es}; the bias is shared by all examples, so its gradient "
                    f"is the sum of the rows (dY.sum(axis=0)).")
        if got.ndim == exp.ndim + 1 and got.shape[1:] == exp.shape:
            return (f"{tensor} has an extra batch axis: shape {gs}, expected {es}; "
                    f"sum over the batch axis (axis 0).")
        if got.size == exp.size:
            return f"{tensor} has shape {gs}, expected {es}: same number of elements, a reshape or transpose went wrong."
        return f"{tensor} has shape {gs}, expected {es}."
    if close(got, exp, rtol, atol):
        return ""
    if got.ndim == 2 and got.shape[0] == got.shape[1] and close(got.T, exp, rtol, atol):
        return (f"{tensor} is transposed (its shape {gs} is square, so only the values show it); "
                f"swap the factors of the product (e.g. dY.T @ X, not X.T @ dY).")
    for sentence, alt in (alternatives or {}).items():
        alt = np.asarray(alt, dtype=np.float64)
        if alt.shape == got.shape and close(got, alt, rtol, atol):
            return sentence
    if not np.any(got) and np.any(exp):
        return f"{tensor} is all zeros; was it computed at all (or overwritten after backward)?"
    if close(got, -exp, rtol, atol):
        return f"{tensor} has the opposite sign of the correct gradient (a minus sign too many or too few)."
    N = batch_size
    if N and N > 1:
        if close(got * N, exp, rtol, atol):
            return (f"{tensor} is the mean over the batch, not the sum: it is {N} times too small (batch size {N}). "
                    f"If the loss already averages, that 1/N is inside dY; do not divide again.")
        if close(got, exp * N, rtol, atol):
            return (f"{tensor} is {N} times too large (batch size {N}): a sum where a mean is due, "
                    f"or the 1/N of the mean is missing.")
    denom = float(np.dot(exp.ravel(), exp.ravel()))
    if denom > 0:
        c = float(np.dot(got.ravel(), exp.ravel()) / denom)
        if abs(c) > 1e-12 and close(got, c * exp, rtol=max(rtol, 1e-6), atol=atol):
            shown = f"{c:.6g}"
            return f"{tensor} is {shown} times the correct gradient (a constant factor is wrong somewhere)."
    diff = np.abs(got - exp)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape)) if diff.size else ()
    n_bad = int(np.sum(diff > atol + rtol * (np.abs(got) + np.abs(exp))))
    return (f"{tensor} differs from the correct gradient in {n_bad} of {got.size} elements; "
            f"the largest difference is at {tensor}{list(idx)}: got {got[idx]:.6g}, expected {exp[idx]:.6g}.")
