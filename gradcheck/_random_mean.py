"""A random training forward's mean compared with ``--reference``'s (newuser37 F7).

The gradient check holds a dropout's mask fixed, so a forward and a backward that agree with each other pass however
they scale the kept entries; the reference draws its own mask, so its output is not compared element by element
(:data:`gradcheck.diagnose.RANDOM_REFERENCE`). A dropout scaling its kept entries by ``1/p`` where inverted dropout
scales by ``1/(1-p)`` (Srivastava et al. 2014, with the scale moved to training time as in PyTorch's and Keras's
``Dropout``; lesson 24) then PASSed. What any draw of the masks must share is the output's mean: here both layers run
one training forward on a batch of a few thousand positive entries (at least :data:`SAMPLES` samples), and the means
of ``Y / X`` are compared within six standard errors of the difference (a correct layer FAILs with probability about
2e-9), each standard error read from the per-sample means, the samples being the independent draws (a spatial
dropout's mask is one per sample and channel: verify37 F3). At ``p = 0.5``,
``1/p = 1/(1-p)``: the comparison is made again with the layer and the reference both built at the other value the
checker uses for such an argument (:func:`gradcheck.diagnose.symmetric_args`: ``p = 0.3``).

The mean is not all: a dropout reading ``p`` as the probability of keeping an entry (CS231n's convention) where the
reference drops with probability ``p`` keeps 30% of the entries scaled by 1/0.3 at ``p = 0.3``, whose mean is X too
(redteam39 F3). Where the reference's ``Y / X`` takes the values 0 and one scale (a dropout's 1/(1 - p), the same on
every draw of the mask), the layer's must take 0 and that scale (:func:`scale_difference`): exact, no statistics, so
the grader also reads it on the test's own call (redteam39 F1: a probe batch can be refused).

The means alone miss a reference built at another rate: a CS231n pair keeping 80% unscaled (mean 0.8) against
``manualprop.Dropout(p=0.8)``, which drops 80% (mean 1 with a standard error of 0.03), PASSed for some seeds
(verify38 F1: CS231n's ``dropout_param['p']`` is the probability of keeping a unit, manualprop's ``p`` that of dropping
one). Unless the reference is built from the layer's own settings (then the scale decides, as above), the
shares of entries kept as built are compared first, within :data:`SIGMAS` standard errors: shares that
differ are a usage error naming the rates and the convention (:func:`_same_rate`), whatever the seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _validation as V
from ._adapters import forward_in_mode
from .diagnose import (  # the own-mean check's pieces live in diagnose, which runs it (bugs44: one pipeline)
    ENTRIES,
    SAMPLES,
    SIGMAS,
    Finding,
    _mean_ratio,
    kept_scale,
    own_eval_mean_finding,
)
from .errors import UsageError
from .sources import Call

__all__ = ["random_mean_finding", "own_eval_mean_finding", "scale_difference", "SCALE_RTOL"]

#: How far apart (relative) the values of ``Y / X`` on the kept entries may be and still be one scale (a float32
#: mask's rounding is about 1e-7), and two scales still the same (:func:`scale_difference`).
SCALE_RTOL = 1e-6


def _same_rate(got: tuple, want: tuple, cname: str, reference: Any, ref_name: str) -> None:
    """UsageError when the layer as built keeps another share of the entries than the reference (``got``, ``want``:
    :func:`_mean_ratio`'s), more than :data:`SIGMAS` standard errors apart: the reference is built at another rate,
    and a share of one kept where the other drops it is the keep/drop convention (verify38 F1). No claim unless both
    are dropouts (a mask times one scale) and the layer drops some entries, keeps others; nor when the layer is at
    odds with itself, neither the convention's flip nor unbiased at its own share (mean 1 X): a layer dropping 60%
    and scaling by 1/(1 - 0.3) is its own bug, FAILed by the means (verify39 F5: blamed on the command)."""
    (share, se), (ref_share, ref_se) = got[3:], want[3:]
    apart = SIGMAS * np.hypot(se, ref_se) + 1e-12
    if share is None or ref_share is None or not 0 < share < 1 or abs(share - ref_share) <= apart:
        return
    flipped = abs(share - (1 - ref_share)) <= apart
    if not flipped and abs(got[0] - 1) > SIGMAS * got[1] + 1e-12:
        return
    p = getattr(reference, "p", None)
    built = f" (built with p={p:g})" if isinstance(p, float) else ""
    rate = f"{1 - share:.2g}"
    raise UsageError(V.paragraph(
        f"--reference {ref_name}: the reference drops {1 - ref_share:.0%} of the entries in training{built}, "
        f"{cname} keeps {share:.0%}" + (f": {ref_name}'s p is the drop probability ({rate} here), where CS231n's "
                                        "dropout_param['p'] and TensorFlow 1's keep_prob are the keep probability."
                                        if flipped else f" (drops {1 - share:.0%}): they are not built at one rate."),
        f"Build the reference at the rate {cname} drops: --reference-init '{{\"p\": {rate}}}' (a random forward is "
        "compared with the reference's at the same rate only)" + (
            ". If your p too is the drop probability, your mask keeps an entry with probability p where it should "
            "drop it." if flipped else f"; {ref_name}'s p is the probability of dropping an entry.")))


def random_mean_finding(pairs, cname: str, shape: tuple[int, ...], seed: int, ref_name: str,
                        given_rate: bool = False) -> Finding | None:
    """The ``random-mean`` error Finding of the first ``(layer, reference, at)`` of ``pairs`` whose training forwards
    on one batch of positive entries (``X`` of ``shape``'s trailing axes and about :data:`ENTRIES` entries, drawn
    from ``seed``) give means of ``Y / X`` more than :data:`SIGMAS` standard errors apart (or, the means agreeing, the
    ``random-scale`` one of a pair built alike whose kept scales differ); else a ``random-mean-note`` info Finding saying where the means agreed, or None when no pair could be compared (a
    forward that raises or gives another shape: no claim).

    Parameters
    ----------
    pairs : iterable of (layer, reference, str) or (layer, reference, str, bool)
        The checked layer (local or sandboxed) and a manualprop reference built alike, and the words naming the
        constructor arguments they were built at (``""`` as given, ``" at p=0.3"``); the bool (default False): the
        reference was built at the layer's own rate (the staff's test, or ``--reference`` from the layer's settings),
        so that its kept entries' scale must be the layer's too (:func:`scale_difference`); otherwise only the means
        (an unbiased random forward's is 1 at any rate: a ``keep_prob`` the reference does not take).
    cname, ref_name : str
        The layer's and the reference's names, for the message.
    shape : tuple of int
        The checked input's shape; its batch axis is grown to about :data:`ENTRIES` entries, at least
        :data:`SAMPLES` samples.
    seed : int
        The batch's seed.
    given_rate : bool, default False
        The reference's rate was given by the user (``--reference-init``): a share kept as built other than the
        reference's is then a usage error (:func:`_same_rate`), as it is for a pair not built alike; for one built
        alike from the layer's own settings (the grader's), the kept scale decides (``random-scale``).

    Returns
    -------
    Finding or None
        ``random-mean`` or ``random-scale`` (severity ``error``: FAIL) or ``random-mean-note`` (``info``), or None.

    Raises
    ------
    UsageError
        The first pair (as built), its reference's rate given (``given_rate``) or not the layer's, keeps another
        share of the entries than its reference (:func:`_same_rate`).
    """
    rest = tuple(shape[1:])
    n = max(int(shape[0]), -(-ENTRIES // max(1, int(np.prod(rest)))), SAMPLES)
    X = np.random.default_rng([seed, 37]).uniform(0.5, 1.5, (n, *rest))
    agreed = []
    for layer, reference, at, *alike in pairs:
        try:
            Y = Call(layer, cname, [X], V.input_names(layer, 1), V.layer_params(layer, cname), True).forward(X.copy())
            Y_ref = forward_in_mode(reference, [X.copy()], True)
            got, want = _mean_ratio(Y, X), _mean_ratio(Y_ref, X)
        except Exception:  # noqa: BLE001 - a forward that cannot take the larger batch: not compared, no claim
            continue
        if got is None or want is None or got[3] is None is want[3]:  # neither X masked at one scale: Y / X
            if (moved := _moment_difference(Y, Y_ref, X, cname, ref_name, at, same_shape=True)) is not None:
                return Finding("random-mean", moved, layer="Dropout")
            continue
        if not at and (given_rate or not (alike and alike[0])):  # as built, at a rate of its own or the user's:
            _same_rate(got, want, cname, reference, ref_name)  # the same rate first (verify38 F1), whatever the means
        if abs(got[0] - want[0]) <= SIGMAS * np.hypot(got[1], want[1]) + 1e-12:
            if alike and alike[0] and (scaled := scale_difference(Y, X, Y_ref, cname, ref_name, at)):
                return Finding("random-scale", scaled, layer="Dropout")
            agreed.append(f"{at.strip() or 'as built'}: {got[0]:.4g} X and {want[0]:.4g} X")
            continue
        return Finding("random-mean", (
            f"in training mode, {cname}'s output{at} averages {got[0]:.4g} X over {X.size} entries, "
            f"{ref_name}'s {want[0]:.4g} X ({abs(got[0] - want[0]) / np.hypot(got[1], want[1]):.0f} standard errors "
            f"apart; the masks are random, their means are not): yours {got[2]}, {ref_name} {want[2]}. Inverted "
            "dropout scales the kept entries by 1/(1 - p), p the probability of dropping one, so that E[Y] = X in "
            "training as in eval mode; forward and backward agreeing with each other is not enough (the gradient "
            "check holds your mask fixed)"), layer="Dropout")
    return agreed and Finding("random-mean-note", (
        f"reference: the training output's mean compared with {ref_name}'s over {X.size} entries, within "
        f"{SIGMAS:g} standard errors ({'; '.join(agreed)}): the masks are random, their means are not"),
        severity="info") or None


def _moment_difference(Y: Any, Y_ref: Any, X: np.ndarray, cname: str, ref_name: str, at: str,
                       same_shape: bool = False) -> str | None:
    """How the training outputs of a random layer whose output is not of its input's shape (a model Linear -> ReLU ->
    Dropout) and of its reference, on the same batch ``X`` and weights, differ in their mean or mean square (each
    sample's over its entries, paired by sample: the difference's standard error is the masks' alone), more than
    :data:`SIGMAS` standard errors apart; None when they agree, or are not finite float arrays of one shape other
    than ``X``'s (no claim; ``same_shape``: of ``X``'s shape too, neither output ``X`` masked at one scale, redteam41
    L2). ``Y / X`` has no meaning there (:func:`_mean_ratio`), and the gradients' mean over a few
    draws cannot see a scale 30% off (verify39 F7: a model whose dropout left out 1/(1 - p) kept its points at every
    seed; one reading p as the keep probability, whose mean is right and whose mean square is 1/p against 1/(1 - p),
    at some seeds)."""
    arrays = [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) and a.dtype.kind in "fiu" else None
              for a in (Y, Y_ref)]
    if any(a is None for a in arrays) or arrays[0].shape != arrays[1].shape \
            or (arrays[0].shape == X.shape and not same_shape) or not arrays[0].shape or arrays[0].shape[0] != len(X) or len(X) < 2 \
            or not all(np.all(np.isfinite(a)) for a in arrays):
        return None
    for what, power in (("mean", 1), ("mean square", 2)):
        a, b = ((v ** power).reshape(len(X), -1).mean(axis=1) for v in arrays)
        d = a - b
        se = float(d.std(ddof=1) / np.sqrt(d.size))
        if abs(d.mean()) > SIGMAS * se + 1e-9 * (abs(a.mean()) + abs(b.mean())) + 1e-12:
            return (f"in training mode, {cname}'s output{at} has a {what} of {a.mean():.4g} over {X.shape[0]} samples, "
                    f"{ref_name}'s {b.mean():.4g} at the same inputs and weights ({abs(d.mean()) / se:.0f} standard "
                    "errors apart; the masks are random, these moments are not): a random layer inside (a dropout) "
                    "scales its kept entries otherwise, or drops another share. Inverted dropout drops an entry with "
                    "probability p and scales the kept ones by 1/(1 - p), so that E[Y] = X in training as in eval mode; "
                    "forward and backward agreeing with each other is not enough (the gradient check holds your mask "
                    "fixed)")
    return None


def scale_difference(Y: Any, X: np.ndarray, Y_ref: Any, cname: str, ref_name: str, at: str = "") -> str | None:
    """How a training output ``Y`` of ``X`` is not the reference's kind of mask, or None.

    The reference's ``Y_ref / X`` takes the values 0 and one scale ``s`` (inverted dropout's 1/(1 - p) on the kept
    entries: the same on every draw of the mask, so one call shows it); the layer's ``Y / X`` must take 0 and ``s``
    as well, within :data:`SCALE_RTOL`: other values on its nonzero entries (no mask: Y = X (1 + noise)) or another
    scale (p read as the probability of keeping an entry: 1/p) is a sentence saying so (redteam39 F3). Entries where
    ``X`` is 0 are left out.

    Parameters
    ----------
    Y, Y_ref : ndarray
        The layer's and the reference's training outputs of ``X`` (each of its own draw).
    X : ndarray
        The input both were given.
    cname, ref_name, at : str
        The layer's and the reference's names; the words naming the constructor arguments (``" at p=0.3"``).

    Returns
    -------
    str or None
        The sentence; None when they agree, or when the reference's output is not 0 and one scale, or either is not
        a finite float array of ``X``'s shape (no claim).
    """
    X = np.asarray(X)
    arrays = [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) and a.shape == X.shape and a.dtype.kind
              in "fiu" else None for a in (Y, Y_ref)]
    if any(a is None or not np.all(np.isfinite(a)) for a in arrays) or not np.any(on := X != 0):
        return None
    with np.errstate(all="ignore"):  # (an overflowing ratio is no scale: not finite, said as not one)
        (ref_share, s_ref), r = kept_scale(arrays[1][on], X[on]), arrays[0][on] / X[on]
    kept = r[r != 0]
    if s_ref is None or not kept.size:
        return None
    s = float(np.median(kept))
    ours = (f"{ref_name}'s keeps {ref_share:.0%} of the entries scaled by {s_ref:.4g}: Y / X is 0 or one scale, the "
            "same on every draw of the mask (inverted dropout's 1/(1 - p), p the probability of dropping an entry)")
    if not np.all(np.isfinite(kept)) or np.ptp(kept) > SCALE_RTOL * abs(s):
        return (f"in training mode, {cname}'s output{at} is not X times a mask of 0 and one scale: Y / X takes "
                f"{np.unique(kept).size} values on the entries it keeps, from {kept.min():.4g} to {kept.max():.4g}; "
                f"{ours}")
    if abs(s - s_ref) <= SCALE_RTOL * abs(s_ref):
        return None
    return (f"in training mode, {cname}'s output{at} keeps {kept.size / r.size:.0%} of the entries scaled by {s:.4g}; "
            f"{ours}. A scale of 1/p is p read as the probability of keeping an entry (CS231n's convention), "
            "1 the scale left out")
