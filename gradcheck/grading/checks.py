"""Checks that grading tests run on a student's layer or loss (usually a sandbox proxy).

Each check returns a :class:`Verdict`: one :class:`Part` per graded tensor
(``dX``, ``dW``, ``db``, ...), each with its points, whether it passed and, when
it did not, one sentence naming the bug (:func:`gradcheck.grading.diagnosis.diagnose`).
The pytest plugin (:mod:`gradcheck.grading.plugin`) turns a verdict into partial
credit and, when a part failed, into a test failure whose message is that
diagnosis, never an assertion dump.

Truth comes from two independent places, both in the grader's process:

* a **reference** layer of ours (manualprop) given the student's parameter
  values, input and upstream gradient: exact, and the basis of the diagnosis;
* **numerical** gradients (:func:`gradcheck.check_layer` / :func:`gradcheck.check_loss`
  with ``twin=None`` on the proxy): a part passes only when both agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as V
from ..check import check_layer, check_loss
from ..compare import ATOL_FLOOR
from ..config import CheckConfig
from ..errors import GradcheckError, StudentCodeError
from .diagnosis import close, diagnose

__all__ = [
    "Part",
    "Verdict",
    "GradingFailure",
    "away_from_kinks",
    "layer_forward",
    "layer_gradients",
    "loss_value",
    "loss_gradient",
    "backward_repeatable",
    "dtypes",
]

#: The checker's relative tolerance; the absolute one is the checker's default too (None).
RTOL, ATOL = 1e-6, None


class GradingFailure(AssertionError):
    """A graded check failed; the message is Markdown meant for the student.

    Attributes
    ----------
    fraction : float
        Share of the test's points still earned (partial credit), in [0, 1].
    """

    def __init__(self, message: str, fraction: float = 0.0):
        super().__init__(message)
        self.fraction = float(fraction)


@dataclass
class Part:
    """One graded tensor or property of a test.

    Attributes
    ----------
    name : str
        ``"dX"``, ``"dW"``, ``"Y"``, ``"dtypes"``, ...
    points : float
        Weight of this part within the test.
    passed : bool
    message : str
        Why it failed (one sentence), or a short note when it passed.
    """

    name: str
    points: float
    passed: bool
    message: str = ""


@dataclass
class Verdict:
    """The parts of one graded check, plus remarks."""

    parts: list[Part] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when every part passed."""
        return all(p.passed for p in self.parts)

    @property
    def fraction(self) -> float:
        """Points of the passed parts over all points (1.0 for an empty verdict)."""
        total = sum(p.points for p in self.parts)
        return 1.0 if total <= 0 else sum(p.points for p in self.parts if p.passed) / total

    def markdown(self) -> str:
        """The verdict as Markdown: failing parts first with their diagnosis, then the others."""
        lines = []
        for p in sorted(self.parts, key=lambda p: p.passed):
            mark = "ok" if p.passed else "**wrong**"
            lines.append(f"- `{p.name}`: {mark}" + (f" - {p.message}" if p.message else ""))
        lines += [f"\n{n}" for n in self.notes]
        return "\n".join(lines)

    def raise_if_failed(self) -> None:
        """Raise :class:`GradingFailure` (with the earned fraction) when a part failed."""
        if not self.passed:
            raise GradingFailure(self.markdown(), self.fraction)


def away_from_kinks(x: np.ndarray, margin: float = 0.05, kinks: Sequence[float] = (0.0,)) -> np.ndarray:
    """Move every entry of ``x`` at least ``margin`` away from each kink (ReLU's 0).

    Finite differences straddling a kink are wrong by up to half the jump of the
    derivative, so graded inputs keep clear of them: an entry closer than
    ``margin`` to a kink ``k`` is moved to ``k +/- margin`` (keeping its side).

    Parameters
    ----------
    x : ndarray
    margin : float, default 0.05
    kinks : sequence of float, default (0.0,)

    Returns
    -------
    ndarray of float64 (a copy)
    """
    out = np.array(x, dtype=np.float64, copy=True)
    for k in kinks:
        d = out - k
        near = np.abs(d) < margin
        out[near] = k + np.where(d[near] >= 0, margin, -margin)
    return out


def _fail_all(names: Mapping[str, float], message: str) -> Verdict:
    return Verdict([Part(n, w, False, message) for n, w in names.items()])


def _weights(parts: Mapping[str, float] | None, names: Sequence[str]) -> dict[str, float]:
    if parts is None:
        return {n: 1.0 for n in names}
    unknown = set(parts) - set(names)
    if unknown:
        raise ValueError(f"parts {sorted(unknown)} are not tensors of this layer; it has {list(names)}")
    return {n: float(parts[n]) for n in names if n in parts}


def _copy_params(layer: Any, reference: Any, owner: str) -> None:
    """Give the reference the student's parameter values (same keys and shapes required)."""
    theirs = V.layer_params(layer, owner)
    ours = getattr(reference, "params", None) or {}
    if set(theirs) != set(ours):
        raise StudentCodeError(f"{owner}.params has keys {sorted(theirs)}; the assignment expects "
                               f"{sorted(ours)}.")
    for k, v in ours.items():
        if theirs[k].shape != v.shape:
            raise StudentCodeError(f"{owner}.params[{k!r}] has shape {V.fmt_shape(theirs[k].shape)}; "
                                   f"the assignment expects {V.fmt_shape(v.shape)}.")
        v[...] = theirs[k]


def layer_forward(layer: Any, X: np.ndarray, reference: Any, *, rtol: float = 1e-7, atol: float = 1e-10,
                  training: bool = False, points: float = 1.0) -> Verdict:
    """Compare ``layer.forward(X)`` with the reference's output (same parameters).

    Parameters
    ----------
    layer : object
        Student layer (a :class:`~gradcheck.sandbox.RemoteLayer`).
    X : ndarray
        Input.
    reference : object
        Our layer of the same kind; its parameters are overwritten with the student's.
    rtol, atol : float
        Tolerances of the comparison.
    training : bool, default False
    points : float, default 1.0
        Weight of the single part ``"Y"``.

    Returns
    -------
    Verdict
        One part ``"Y"``.

    Raises
    ------
    StudentCodeError
        The student's forward raised, returned a non-array, or its parameters have
        the wrong keys or shapes.
    """
    owner = type(layer).__name__
    _copy_params(layer, reference, owner)
    Y_ref = np.asarray(reference.forward(np.array(X, copy=True), training=training))
    Y = V.check_output(layer.forward(np.array(X, copy=True), training=training), owner=owner, tensor="Y",
                       produced_by=f"forward(X) with X of shape {V.fmt_shape(np.shape(X))}", expected_shape=None)
    if Y.shape != Y_ref.shape:
        msg = f"the output has shape {V.fmt_shape(Y.shape)}; expected {V.fmt_shape(Y_ref.shape)} for X of shape " \
              f"{V.fmt_shape(np.shape(X))}."
        return Verdict([Part("Y", points, False, msg)])
    if close(Y, Y_ref, rtol, atol):
        return Verdict([Part("Y", points, True)])
    d = np.abs(Y - Y_ref)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(d)), d.shape))
    return Verdict([Part("Y", points, False,
                         f"the output differs from the expected one; largest difference at Y{list(idx)}: "
                         f"got {Y[idx]:.6g}, expected {Y_ref[idx]:.6g}.")])


def layer_gradients(layer: Any, X: np.ndarray, reference: Any, *, parts: Mapping[str, float] | None = None,
                    seed: int = 0, rtol: float = RTOL, atol: float | None = ATOL, training: bool = False,
                    numerical: bool = True) -> Verdict:
    """Grade ``backward``: every tensor against the reference and against central differences.

    One forward and one backward with a seeded upstream gradient ``G``; the
    reference layer (given the student's parameters) does the same. Each tensor
    (``dX``, then ``d<key>`` per parameter) is its own part, so a wrong ``db``
    costs only ``db``'s points. A wrong shape, None or a missing key fails that
    part alone. When every shape is right, :func:`gradcheck.check_layer`
    (manual vs numerical, on the proxy) must agree as well.

    Parameters
    ----------
    layer : object
        Student layer (a :class:`~gradcheck.sandbox.RemoteLayer`).
    X : ndarray
        Input (float64). Keep it away from kinks (:func:`away_from_kinks`).
    reference : object
        Our layer of the same kind; its parameters are overwritten.
    parts : mapping of str -> float, optional
        Points per tensor, e.g. ``{"dX": 2, "dW": 2, "db": 2}``; default 1 each.
    seed : int, default 0
        Seeds the upstream gradient (and the numerical check's own draws).
    rtol, atol : float
        gradcheck's tolerances (atol None: :func:`gradcheck.compare.default_atol` for the numerical
        comparison, :data:`gradcheck.compare.ATOL_FLOOR` for the reference).
    training : bool, default False
    numerical : bool, default True
        Also require agreement with central differences.

    Returns
    -------
    Verdict
    """
    owner = type(layer).__name__
    cfg = CheckConfig(rtol=rtol, atol=atol, seed=seed, training=training)
    X = np.array(X, dtype=np.float64, copy=True)
    _copy_params(layer, reference, owner)
    keys = list(getattr(reference, "params", {}) or {})
    weights = _weights(parts, ["dX"] + [f"d{k}" for k in keys])
    G = np.random.default_rng(seed).standard_normal(np.shape(reference.forward(X.copy(), training=training)))
    expected = _reference_gradients(reference, X, G, keys, training)
    ones = _reference_gradients(reference, X, np.ones_like(G), keys, training)
    V.check_output(layer.forward(X.copy(), training=training), owner=owner, tensor="Y",
                   produced_by=f"forward(X) with X of shape {V.fmt_shape(X.shape)}", expected_shape=G.shape,
                   expected_why="the reference output's shape")
    ret = layer.backward(G.copy())
    grads = getattr(layer, "grads", None)
    got: dict[str, Any] = {"dX": ret}
    got.update({f"d{k}": grads.get(k, KeyError) if isinstance(grads, Mapping) else KeyError for k in keys})
    verdict = Verdict([_part(n, w, got[n], expected[n], ones[n] if np.any(G != 1) else None, keys, X.shape[0], cfg)
                       for n, w in weights.items()])
    shapes_ok = all(isinstance(got[n], np.ndarray) and got[n].shape == expected[n].shape for n in weights)
    if numerical and shapes_ok and verdict.passed:
        try:
            res = check_layer(layer, X, twin=None, config=cfg)
        except GradcheckError as exc:
            return _fail_all(weights, f"the numerical check could not run: {exc}")
        by_tensor = {r.tensor: r for r in res.records if r.kind == "gradient"}
        for p in verdict.parts:
            rec = by_tensor.get(p.name)
            if rec is not None and not rec.passed:
                c = rec.comparisons[0]
                p.passed = False
                p.message = (f"{p.name} disagrees with central differences: max relative error "
                             f"{c.max_rel_error:.2e} > {rtol:g} (worst element {p.name}{list(c.worst_index)}: "
                             f"{c.worst_a:.6g} vs {c.worst_b:.6g}). Is the layer deterministic?")
    return verdict


def _reference_gradients(reference, X, G, keys, training) -> dict[str, np.ndarray]:
    """The reference layer's ``dX`` and ``d<key>`` for upstream gradient ``G``."""
    reference.forward(X.copy(), training=training)
    out = {"dX": np.asarray(reference.backward(G.copy()), dtype=np.float64)}
    out.update({f"d{k}": np.array(reference.grads[k], dtype=np.float64) for k in keys})
    return out


def _part(name, w, g, expected, ones, keys, n_batch, cfg) -> Part:
    """One graded tensor: missing, None, non-finite, or compared with the reference (the one rule) and named."""
    if g is KeyError:
        return Part(name, w, False, f"grads has no key {name[1:]!r} after backward(dY); expected keys {keys}.")
    if g is None:
        what = "backward(dY) returned None" if name == "dX" else f"grads[{name[1:]!r}] is None"
        return Part(name, w, False, f"{what}; expected an array of shape {V.fmt_shape(expected.shape)}.")
    g = np.asarray(g)
    if g.shape == expected.shape and not np.all(np.isfinite(g.astype(np.float64))):
        return Part(name, w, False, f"{name} contains NaN or infinity.")
    alternatives = {} if ones is None else {
        f"{name} does not use the upstream gradient dY: it equals the gradient for dY = 1 (the local derivative "
        f"alone). Multiply by dY (chain rule).": ones}
    msg = diagnose(name, g, expected, batch_size=n_batch, alternatives=alternatives, rtol=cfg.rtol,
                   atol=ATOL_FLOOR if cfg.atol is None else cfg.atol)
    return Part(name, w, not msg, msg)


def loss_value(loss: Any, y_true: np.ndarray, logits: np.ndarray, reference: Any, *, rtol: float = 1e-7,
               atol: float = 1e-10, points: float = 1.0) -> Verdict:
    """Compare the loss value with the reference's.

    Returns
    -------
    Verdict
        One part ``"L"``.
    """
    L_ref = float(reference.forward(np.array(y_true, copy=True), np.array(logits, copy=True)))
    L = float(loss.forward(np.array(y_true, copy=True), np.array(logits, copy=True)))
    if not np.isfinite(L):
        return Verdict([Part("L", points, False, f"the loss is {L}; expected the finite value {L_ref:.6g}. "
                                                 f"Subtract the row maximum before exp.")])
    if close(np.array(L), np.array(L_ref), rtol, atol):
        return Verdict([Part("L", points, True)])
    N = np.shape(logits)[0]
    hint = ""
    if close(np.array(L * N), np.array(L_ref), rtol, atol):
        hint = f" It is the expected value divided by the batch size {N}: the mean was taken twice."
    elif close(np.array(L), np.array(L_ref * N), rtol, atol):
        hint = f" It is {N} times the expected value: a sum where the mean over the batch is due."
    return Verdict([Part("L", points, False, f"the loss is {L:.8g}; expected {L_ref:.8g}.{hint}")])


def loss_gradient(loss: Any, y_true: np.ndarray, logits: np.ndarray, reference: Any, *, points: float = 1.0,
                  rtol: float = RTOL, atol: float | None = ATOL, numerical: bool = True) -> Verdict:
    """Grade a loss's ``backward()`` (dL/dlogits) against the reference and central differences.

    Returns
    -------
    Verdict
        One part ``"dy_pred"``.
    """
    yt, z = np.array(y_true, copy=True), np.array(logits, dtype=np.float64, copy=True)
    reference.forward(yt.copy(), z.copy())
    expected = np.asarray(reference.backward(), dtype=np.float64)
    loss.forward(yt.copy(), z.copy())
    g = np.asarray(loss.backward())
    msg = diagnose("dy_pred", g, expected, batch_size=z.shape[0], rtol=rtol,
                   atol=ATOL_FLOOR if atol is None else atol)
    part = Part("dy_pred", points, not msg, msg)
    if part.passed and numerical:
        try:
            res = check_loss(loss, yt, z, twin=None, rtol=rtol, atol=atol)
        except GradcheckError as exc:
            return Verdict([Part("dy_pred", points, False, f"the numerical check could not run: {exc}")])
        rec = [r for r in res.records if r.kind == "gradient"][0]
        if not rec.passed:
            c = rec.comparisons[0]
            part.passed = False
            part.message = (f"dy_pred disagrees with central differences of the loss: max relative error "
                            f"{c.max_rel_error:.2e}; does forward compute the same loss backward differentiates?")
    return Verdict([part])


def backward_repeatable(obj: Any, inputs: Sequence[np.ndarray], *, dY: np.ndarray | None = None,
                        points: float = 1.0) -> Verdict:
    """Call ``backward`` twice after one forward; both calls must give the same gradient.

    A backward that edits its forward cache in place (``self.p[range(N), y] -= 1``)
    returns a wrong gradient the second time, e.g. when a training loop or a
    gradient check calls it again.

    Parameters
    ----------
    obj : object
        A layer (``backward(dY)``) or a loss (``backward()``; then ``dY`` is None).
    inputs : sequence of ndarray
        Arguments of ``forward``.
    dY : ndarray, optional
        Upstream gradient for a layer.
    points : float, default 1.0

    Returns
    -------
    Verdict
        One part ``"backward twice"``.
    """
    obj.forward(*[np.array(x, copy=True) for x in inputs])
    args = [] if dY is None else [np.array(dY, copy=True)]
    first = np.asarray(obj.backward(*[a.copy() for a in args]), dtype=np.float64)
    second = np.asarray(obj.backward(*[a.copy() for a in args]), dtype=np.float64)
    if first.shape == second.shape and close(first, second, 1e-12, 1e-15):
        return Verdict([Part("backward twice", points, True)])
    diff = float(np.max(np.abs(first - second))) if first.shape == second.shape else float("nan")
    return Verdict([Part("backward twice", points, False,
                         f"a second backward() after the same forward returned a different gradient "
                         f"(max difference {diff:.3g}): backward changes the forward cache in place. "
                         f"Work on a copy (e.g. `d = self.p.copy()`) instead of editing the cached array.")])


def dtypes(results: Mapping[str, Any], expected: Any = np.float64, points: float = 1.0) -> Verdict:
    """Check that every array in ``results`` has the expected dtype.

    Parameters
    ----------
    results : mapping of str -> ndarray
        E.g. ``{"Linear Y": Y, "Linear dX": dX, "Linear dW": layer.grads["W"]}``.
    expected : dtype, default float64
    points : float, default 1.0

    Returns
    -------
    Verdict
        One part ``"dtypes"``.
    """
    exp = np.dtype(expected)
    bad = [f"{name} is {np.asarray(v).dtype}" for name, v in results.items()
           if isinstance(v, np.ndarray) and v.dtype != exp]
    bad += [f"{name} is {type(v).__name__}, not an array" for name, v in results.items()
            if not isinstance(v, np.ndarray)]
    if not bad:
        return Verdict([Part("dtypes", points, True)])
    why = (" float32 keeps about 7 significant digits, so gradients checked to 1e-6 and a "
           "training run lose accuracy; compute in float64 (do not cast with astype(np.float32))."
           if any("float32" in b or "float16" in b for b in bad) else "")
    return Verdict([Part("dtypes", points, False, f"{'; '.join(bad)}; expected {exp}.{why}")])
