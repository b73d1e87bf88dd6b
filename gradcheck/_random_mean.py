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

The means alone miss a reference built at another rate: a CS231n pair keeping 80% unscaled (mean 0.8) against
``manualprop.Dropout(p=0.8)``, which drops 80% (mean 1 with a standard error of 0.03), PASSed for some seeds
(verify38 F1: CS231n's ``dropout_param['p']`` is the probability of keeping a unit, manualprop's ``p`` that of dropping
one). The shares of entries kept as built are compared first, within :data:`SIGMAS` standard errors: shares that
differ are a usage error naming the rates and the convention (:func:`_same_rate`), whatever the seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _validation as V
from ._adapters import forward_in_mode
from .diagnose import Finding, kept_scale
from .errors import UsageError
from .sources import Call

__all__ = ["random_mean_finding"]

#: About how many entries the compared batch holds: the standard error of a dropout's mean ratio at p = 0.5 is then
#: 1/sqrt(4000) = 0.016, so a 1/p against 1/(1-p) at p = 0.3 (a mean of 2.33 against 1) is 80 standard errors apart.
ENTRIES = 4000

#: The fewest samples the compared batch holds, so that per-sample means give the standard error.
SAMPLES = 400

#: How many standard errors of the difference make two means differ.
SIGMAS = 6.0


def _mean_ratio(Y: Any, X: np.ndarray) -> tuple[float, float, str, float | None, float] | None:
    """``(mean, standard error, how, share, its standard error)`` of ``Y / X`` over the entries (``how``: "keeps 70%
    of the entries, scaled by 1.43" when the ratio takes the values 0 and one scale alone; ``share`` the share of
    entries kept, ``Y != 0``, None unless the ratio so takes one scale); None when ``Y`` is not an array of ``X``'s
    shape."""
    Y = np.asarray(Y, dtype=np.float64) if isinstance(Y, np.ndarray) else None
    if Y is None or Y.shape != X.shape or not np.all(np.isfinite(Y)):
        return None
    r = Y / X
    share, scale = kept_scale(Y, X)
    how = f"keeps {share:.0%} of the entries, scaled by {scale:.4g}" if scale is not None else \
        f"has Y / X averaging {r.mean():.4g}"
    per = r.reshape(len(r), -1).mean(axis=1)  # the samples' means: independent, whatever a mask shares inside one
    kept = (r != 0).reshape(len(r), -1).mean(axis=1)
    return (float(r.mean()), float(per.std(ddof=1) / np.sqrt(per.size)), how, share if scale is not None else None,
            float(kept.std(ddof=1) / np.sqrt(kept.size)))


def _same_rate(got: tuple, want: tuple, cname: str, reference: Any, ref_name: str) -> None:
    """UsageError when the layer as built keeps another share of the entries than the reference (``got``, ``want``:
    :func:`_mean_ratio`'s), more than :data:`SIGMAS` standard errors apart: the reference is built at another rate,
    and a share of one kept where the other drops it is the keep/drop convention (verify38 F1). No claim unless both
    are dropouts (a mask times one scale) and the layer drops some entries, keeps others."""
    (share, se), (ref_share, ref_se) = got[3:], want[3:]
    apart = SIGMAS * np.hypot(se, ref_se) + 1e-12
    if share is None or ref_share is None or not 0 < share < 1 or abs(share - ref_share) <= apart:
        return
    flipped = abs(share - (1 - ref_share)) <= apart
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


def random_mean_finding(pairs, cname: str, shape: tuple[int, ...], seed: int, ref_name: str) -> Finding | None:
    """The ``random-mean`` error Finding of the first ``(layer, reference, at)`` of ``pairs`` whose training forwards
    on one batch of positive entries (``X`` of ``shape``'s trailing axes and about :data:`ENTRIES` entries, drawn
    from ``seed``) give means of ``Y / X`` more than :data:`SIGMAS` standard errors apart; else a
    ``random-mean-note`` info Finding saying where the means agreed, or None when no pair could be compared (a
    forward that raises or gives another shape: no claim).

    Parameters
    ----------
    pairs : iterable of (layer, reference, str)
        The checked layer (local or sandboxed) and a manualprop reference built alike, and the words naming the
        constructor arguments they were built at (``""`` as given, ``" at p=0.3"``).
    cname, ref_name : str
        The layer's and the reference's names, for the message.
    shape : tuple of int
        The checked input's shape; its batch axis is grown to about :data:`ENTRIES` entries, at least
        :data:`SAMPLES` samples.
    seed : int
        The batch's seed.

    Returns
    -------
    Finding or None
        ``random-mean`` (severity ``error``: FAIL) or ``random-mean-note`` (``info``), or None.

    Raises
    ------
    UsageError
        The first pair (as built) keeps another share of the entries than its reference (:func:`_same_rate`).
    """
    rest = tuple(shape[1:])
    n = max(int(shape[0]), -(-ENTRIES // max(1, int(np.prod(rest)))), SAMPLES)
    X = np.random.default_rng([seed, 37]).uniform(0.5, 1.5, (n, *rest))
    agreed = []
    for layer, reference, at in pairs:
        try:
            Y = Call(layer, cname, [X], V.input_names(layer, 1), V.layer_params(layer, cname), True).forward(X.copy())
            got, want = _mean_ratio(Y, X), _mean_ratio(forward_in_mode(reference, [X.copy()], True), X)
        except Exception:  # noqa: BLE001 - a forward that cannot take the larger batch: not compared, no claim
            continue
        if got is None or want is None:
            continue
        if not at:  # as built: the same rate first (verify38 F1), whatever the means
            _same_rate(got, want, cname, reference, ref_name)
        if abs(got[0] - want[0]) <= SIGMAS * np.hypot(got[1], want[1]) + 1e-12:
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
