"""Parameter initialisers shared by manualprop and autoprop.

autoprop's layers call these functions too, so a manual layer and its tape
twin built with the same ``rng`` (same seed) start from identical weights.
Source: ``lessons/01-linear-layer.md``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._validation import check_float_dtype, check_positive_int

__all__ = ["as_rng", "linear_params"]


def as_rng(rng=None) -> np.random.Generator:
    """Turn ``rng`` into a ``numpy.random.Generator``.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
        ``None``: a fresh generator seeded from OS entropy (not reproducible).
        int: ``np.random.default_rng(rng)`` (reproducible).
        Generator: returned as is (the same object, so draws advance it).

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    TypeError
        For any other type (including ``bool``, ``float`` and the legacy
        ``np.random.RandomState``).
    ValueError
        For a negative int seed.
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"as_rng: rng seed must be a non-negative int; got {rng!r}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        "as_rng: rng must be None, a non-negative int seed or a numpy.random.Generator "
        f"(np.random.default_rng(...)); got {type(rng).__name__}"
    )


def linear_params(in_features, out_features, rng=None, dtype=np.float64) -> dict:
    """Initial parameters of a fully connected layer, drawn as PyTorch's ``nn.Linear`` does.

    Rule (PyTorch's ``kaiming_uniform_(a=sqrt(5))`` for W and its bias rule,
    which both reduce to the same bound)::

        k = 1 / sqrt(in_features)
        W ~ U(-k, k), shape (out_features, in_features)   # drawn first
        b ~ U(-k, k), shape (out_features,)                # then, same generator

    Both are drawn with ``rng.uniform`` in float64 and then cast to ``dtype``,
    so float32 weights are the rounding of the float64 ones. The values are
    not PyTorch's (different generator); only the distribution is.
    Source: ``lessons/01-linear-layer.md``.

    Parameters
    ----------
    in_features, out_features : int
        Positive sizes.
    rng : None, int or numpy.random.Generator
        See :func:`as_rng`.
    dtype : {np.float64, np.float32}

    Returns
    -------
    dict
        ``{"W": ndarray (out_features, in_features), "b": ndarray (out_features,)}``.

    Raises
    ------
    TypeError, ValueError
        Non-positive or non-int sizes, non-float ``dtype``, bad ``rng``.
    """
    in_features = check_positive_int(in_features, "in_features", "linear_params")
    out_features = check_positive_int(out_features, "out_features", "linear_params")
    dt = check_float_dtype(dtype, "linear_params")
    gen = as_rng(rng)
    k = 1.0 / math.sqrt(in_features)
    W = gen.uniform(-k, k, size=(out_features, in_features)).astype(dt, copy=False)
    b = gen.uniform(-k, k, size=(out_features,)).astype(dt, copy=False)
    return {"W": W, "b": b}
