"""Name the bug behind a wrong gradient: one sentence a student can act on.

The grader's face of :func:`gradcheck.diagnose.name_signature`, the one
implementation of the bug signatures (shared with ``gradcheck check``): a
submitted tensor is compared with the correct one (from the reference layer
given the same parameters, input and upstream gradient), and the
:class:`~gradcheck.diagnose.Finding` it returns becomes the sentence. For ``db``
with batch 8, e.g. "db is the mean over the batch, not the sum: it is 8 times
too small (batch size 8); ...".
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..diagnose import close, name_signature

__all__ = ["diagnose", "close"]


def diagnose(tensor: str, got: np.ndarray, expected: np.ndarray, *, batch_size: int | None = None,
             alternatives: Mapping[str, np.ndarray] | None = None, rtol: float = 1e-6,
             atol: float = 1e-9) -> str:
    """One sentence naming what is wrong with ``got`` (a submitted tensor) against ``expected``.

    Parameters
    ----------
    tensor : str
        Display name, e.g. ``"db"``. A name starting with ``db`` is a bias: a
        ``1/N`` factor is named "the mean over the batch, not the sum".
    got : ndarray
        The submitted value (any shape).
    expected : ndarray
        The correct value.
    batch_size : int, optional
        The batch size N, to recognise a mean where a sum is due (and the reverse).
    alternatives : mapping of str -> ndarray, optional
        Known wrong answers and their sentences, e.g.
        ``{"dX does not use the upstream gradient dY ...": d_ones}``.
    rtol, atol : float
        Tolerances of the comparisons.

    Returns
    -------
    str
        A sentence ending with a period; "" when ``got`` is in fact correct.

    Examples
    --------
    >>> import numpy as np
    >>> E = np.arange(1.0, 7.0).reshape(2, 3)
    >>> diagnose("dX", -E, E)
    'dX has the wrong sign: the opposite sign of the correct gradient everywhere (a minus sign too many or too few).'
    >>> diagnose("dX", E, E)
    ''
    """
    finding = name_signature(tensor, got, expected, is_bias=tensor.lower().startswith("db"),
                             n_batch=batch_size or 1, alternatives=alternatives, tol=rtol, atol=atol, fallback=True)
    return "" if finding is None else finding.sentence()
