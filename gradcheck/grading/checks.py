"""Checks that grading tests run on a student's layer or loss (usually a sandbox proxy).

Each check returns a :class:`Verdict`: one :class:`Part` per graded tensor
(``dX``, ``dW``, ``db``, ...), each with its points, whether it passed and, when
it did not, one sentence naming the bug (:func:`gradcheck.grading.diagnosis.diagnose`).
The pytest plugin (:mod:`gradcheck.grading.plugin`) turns a verdict into partial
credit and, when a part failed, into a test failure whose message is that
diagnosis, never an assertion dump.

The grader chooses the evaluation point: it draws the parameters itself
(seeded, :func:`evaluation_point`) and writes them into both the student's layer
and the reference, so nothing the student's constructor chose (``b = inf``, a
zero bias that hides a forward without ``+ b``) enters the verdict. Truth comes
from two independent places, both in the grader's process:

* a **reference** layer of ours (manualprop) at that point, with the same input
  and upstream gradient: exact, and the basis of the diagnosis;
* **numerical** gradients (:func:`gradcheck.check_layer` / :func:`gradcheck.check_loss`
  with ``twin=None`` on the proxy): a part passes only when both agree.

Non-finite values: a NaN or infinity on the student's side is wrong (unless a
value check is told ``expect_nonfinite``, and then it must be the same NaN or
infinity in the same place); on the reference's side it is an error of the test
(:class:`GradingTestError`, a grader error), never an element to skip. Every
comparison is gradcheck's one rule, :func:`gradcheck.compare.close`.
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
from ..errors import GradcheckError, GraderError, NonFiniteError, StudentCodeError
from .diagnosis import close, diagnose, reproduce

__all__ = [
    "Part",
    "Verdict",
    "GradingFailure",
    "GradingTestError",
    "evaluation_point",
    "away_from_kinks",
    "layer_forward",
    "forward_keywords",
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


class GradingTestError(GraderError):
    """The grading test is wrong, not the submission: e.g. its reference value is NaN or infinite.

    A :class:`~gradcheck.errors.GraderError`: the plugin reports a grader error
    (the submission is not scored and a resumed batch grades it again).
    """


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


def _inputs(X: Any) -> list[np.ndarray]:
    """The input(s) of a graded call as float64 copies: one array, or a list or tuple of arrays for a
    layer of several inputs (a CS231n pair's ``x, w, b``; attention's ``Q, K, V``)."""
    return [np.array(x, dtype=np.float64, copy=True) for x in (X if isinstance(X, (list, tuple)) else [X])]


def _shapes(xs: Sequence[np.ndarray]) -> str:
    return ", ".join(V.fmt_shape(x.shape) for x in xs)


def _fail_all(names: Mapping[str, float], message: str) -> Verdict:
    return Verdict([Part(n, w, False, message) for n, w in names.items()])


def _weights(parts: Mapping[str, float] | None, names: Sequence[str]) -> dict[str, float]:
    if parts is None:
        return {n: 1.0 for n in names}
    unknown = set(parts) - set(names)
    if unknown:
        raise ValueError(f"parts {sorted(unknown)} are not tensors of this layer; it has {list(names)}")
    return {n: float(parts[n]) for n in names if n in parts}


def _finite_reference(what: str, value: Any, *, expected: bool = False) -> np.ndarray:
    """``value`` (the reference's) as float64; NaN or infinity raises :class:`GradingTestError` unless ``expected``."""
    arr = np.asarray(value, dtype=np.float64)
    if not expected and not np.all(np.isfinite(arr)):
        raise GradingTestError(f"the reference {what} contains NaN or infinity at the evaluation point the test "
                               f"chose: the test is wrong (its inputs or parameters), not the submission.")
    return arr


def evaluation_point(layer: Any, reference: Any, *, seed: int = 0,
                     params: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Set the parameters the grader evaluates at, in the student's layer and in the reference.

    The student's ``params`` must have the reference's keys and shapes and hold
    finite values (what their constructor left); then every parameter is
    overwritten, in place, with values the grader draws or takes from ``params``.
    Drawn: normal from ``seed`` alone (so the recorded seed reproduces the point),
    with standard deviation ``1/sqrt(fan_in)`` for a tensor of two or more axes
    (``fan_in`` the product of all axes but the first, LeCun's initialisation: it
    keeps deep and recurrent layers out of saturation) and 1 for a vector (a bias
    is then nonzero, so a forward without ``+ b`` fails). The reference gets the
    values as the student's arrays hold them (a float32 parameter: rounded). For a
    :class:`~gradcheck.sandbox.RemoteLayer` the proxy's ``params`` are sent with
    every forward and written into the child's layer (no request of its own is needed).

    Parameters
    ----------
    layer : object
        The student's layer (usually a sandbox proxy).
    reference : object
        Our layer of the same kind.
    seed : int, default 0
        Seeds the drawn parameters (a stream of its own, apart from the upstream gradient's).
    params : mapping of str -> ndarray, optional
        The test's own parameter values (same keys and shapes; finite) instead of drawn ones.

    Returns
    -------
    dict of str -> ndarray
        The parameter values set (float64 copies).

    Raises
    ------
    StudentCodeError
        The student's ``params`` have other keys or shapes, hold NaN or infinity, or cannot be written.
    GradingTestError
        ``params`` given by the test has other keys or shapes than the reference, or is not finite.
    """
    owner = type(layer).__name__
    theirs = V.layer_params(layer, owner)
    ours = getattr(reference, "params", None) or {}
    if set(theirs) != set(ours):
        raise StudentCodeError(f"{owner}.params has keys {sorted(theirs)}; the assignment expects "
                               f"{sorted(ours)}.")
    for k, v in ours.items():
        if theirs[k].shape != v.shape:
            raise StudentCodeError(f"{owner}.params[{k!r}] has shape {V.fmt_shape(theirs[k].shape)}; "
                                   f"the assignment expects {V.fmt_shape(v.shape)}.")
        if not np.all(np.isfinite(theirs[k])):
            raise StudentCodeError(f"{owner}.params[{k!r}] holds NaN or infinity after the constructor; "
                                   f"parameters must start finite (the grader then sets its own values).")
    rng = np.random.default_rng([seed, 0x9A7A])  # apart from the upstream gradient's stream (seed)
    point = {k: rng.standard_normal(v.shape) / (np.sqrt(np.prod(v.shape[1:])) if v.ndim > 1 else 1.0)
             for k, v in ours.items()}
    if params is not None:
        if set(params) != set(ours) or any(np.shape(params[k]) != ours[k].shape for k in ours):
            raise GradingTestError(f"the test's params {sorted(params)} do not match the reference's keys and "
                                   f"shapes { {k: V.fmt_shape(v.shape) for k, v in ours.items()} }.")
        point = {k: _finite_reference(f"params[{k!r}] given by the test", params[k]).copy() for k in ours}
    for k, v in point.items():
        try:
            theirs[k][...] = v
        except ValueError as exc:  # a read-only array
            raise StudentCodeError(f"{owner}.params[{k!r}] cannot be written ({exc}); the grader sets the "
                                   f"parameters it evaluates at, so they must be writable arrays.") from None
        ours[k][...] = theirs[k]  # a float32 parameter: the reference at the same (rounded) point
    return {k: np.array(ours[k], dtype=np.float64) for k in ours}


def _agree(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float, expect_nonfinite: bool) -> bool:
    """The one rule (:func:`close`); a NaN or infinity in ``got`` is wrong unless ``expect_nonfinite``
    (then it must be the same NaN or infinity as in ``expected``)."""
    if expect_nonfinite:
        return close(got, expected, rtol, atol, equal_nan=True)
    return bool(np.all(np.isfinite(got))) and close(got, expected, rtol, atol)


def layer_forward(layer: Any, X: np.ndarray, reference: Any, *, rtol: float = 1e-7, atol: float = 1e-10,
                  training: bool = False, points: float = 1.0, seed: int = 0,
                  params: Mapping[str, np.ndarray] | None = None, expect_nonfinite: bool = False) -> Verdict:
    """Compare ``layer.forward(X)`` with the reference's output at the grader's parameters.

    Parameters
    ----------
    layer : object
        Student layer (a :class:`~gradcheck.sandbox.RemoteLayer`).
    X : ndarray, or list or tuple of ndarray
        Input; a list or tuple for a layer of several inputs (``forward(x, w, b)``).
    reference : object
        Our layer of the same kind.
    rtol, atol : float
        Tolerances of the comparison.
    training : bool, default False
    points : float, default 1.0
        Weight of the single part ``"Y"``.
    seed : int, default 0
        Seeds the parameters drawn by :func:`evaluation_point`.
    params : mapping of str -> ndarray, optional
        The test's own parameter values (see :func:`evaluation_point`).
    expect_nonfinite : bool, default False
        The reference output may hold NaN or infinity (the test means it); the
        student's must then hold the same ones. Otherwise a non-finite reference is
        a :class:`GradingTestError` and a non-finite student output is wrong.

    Returns
    -------
    Verdict
        One part ``"Y"``.

    Raises
    ------
    StudentCodeError
        The student's forward raised or returned a non-array (or NaN or infinity,
        :class:`~gradcheck.errors.NonFiniteError`, unless ``expect_nonfinite``), or its
        parameters have the wrong keys or shapes or are not finite.
    GradingTestError
        The reference output is not finite (and ``expect_nonfinite`` is False).
    """
    owner = type(layer).__name__
    xs = _inputs(X)
    evaluation_point(layer, reference, seed=seed, params=params)
    Y_ref = _finite_reference("output Y", reference.forward(*[x.copy() for x in xs], training=training),
                              expected=expect_nonfinite)
    out = layer.forward(*[x.copy() for x in xs], training=training)
    given = f"X of shape {V.fmt_shape(xs[0].shape)}" if len(xs) == 1 else f"inputs of shapes {_shapes(xs)}"
    try:
        Y = V.check_output(out, owner=owner, tensor="Y", expected_shape=None,
                           produced_by=f"forward({'X' if len(xs) == 1 else '...'}) with {given}")
    except NonFiniteError:  # wrong, unless the test expects NaN or infinity (then compared below)
        if not expect_nonfinite:
            raise
        Y = np.array(out, dtype=np.float64)
    if Y.shape != Y_ref.shape:
        msg = f"the output has shape {V.fmt_shape(Y.shape)}; expected {V.fmt_shape(Y_ref.shape)} for {given}."
        return Verdict([Part("Y", points, False, msg)])
    if _agree(Y, Y_ref, rtol, atol, expect_nonfinite):
        return Verdict([Part("Y", points, True)])
    with np.errstate(invalid="ignore"):  # the worst element; NaN or infinity against a number counts as worst
        same = (Y == Y_ref) | (np.isnan(Y) & np.isnan(Y_ref))
        d = np.where(same, 0.0, np.nan_to_num(np.abs(Y - Y_ref), nan=np.inf))
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(d)), d.shape))
    return Verdict([Part("Y", points, False,
                         f"the output differs from the expected one; largest difference at Y{list(idx)}: "
                         f"got {Y[idx]:.6g}, expected {Y_ref[idx]:.6g}.")])


def forward_keywords(layer: Any, X: np.ndarray, keyword: str, expected: Mapping[str, np.ndarray], *,
                     parts: Mapping[str, float] | None = None, rtol: float = 1e-7, atol: float = 1e-10) -> Verdict:
    """Compare what a CS231n function pair's forward writes into a dict argument (``bn_param``) with ``expected``.

    One ``forward(X)`` of ``layer`` (its ``init`` gave the dict, e.g. ``bn_param`` with the running
    statistics so far); then each ``keyword[key]`` as forward left it
    (:attr:`~gradcheck.sandbox.RemoteLayer.call_keywords`) must equal ``expected[key]``
    (``np.allclose`` with ``rtol``, ``atol``). Graded: CS231n's running statistics,
    ``running = momentum * running + (1 - momentum) * batch`` in ``bn_param`` (CS231n assignment 2,
    ``batchnorm_forward``).

    Parameters
    ----------
    layer : object
        Student function pair (a :class:`~gradcheck.sandbox.RemoteLayer`).
    X : ndarray, or list or tuple of ndarray
        Input(s) of forward.
    keyword : str
        The dict argument, e.g. ``"bn_param"``.
    expected : mapping of str -> ndarray
        Expected value per key, e.g. ``{"running_mean": ..., "running_var": ...}``.
    parts : mapping of str -> float, optional
        Points per key; default 1 each.
    rtol, atol : float

    Returns
    -------
    Verdict
        One part per key, named ``bn_param['running_mean']``.

    Raises
    ------
    StudentCodeError
        The student's forward raised or returned a non-array.
    """
    xs = _inputs(X)
    layer.forward(*[x.copy() for x in xs])
    left = (getattr(layer, "call_keywords", None) or {}).get(keyword, {})
    verdict = Verdict()
    for k, w in _weights(parts, list(expected)).items():
        name, want = f"{keyword}[{k!r}]", np.asarray(expected[k], dtype=np.float64)
        got = left.get(k, KeyError)
        if got is KeyError:
            verdict.parts.append(Part(name, w, False, f"forward left no {name}; it must store the updated value "
                                                      f"in {keyword} (the caller's dict), shape "
                                                      f"{V.fmt_shape(want.shape)}."))
        elif got is None:
            verdict.parts.append(Part(name, w, False, f"{name} is not a numeric array after forward."))
        elif np.shape(got) != want.shape:
            verdict.parts.append(Part(name, w, False, f"{name} has shape {V.fmt_shape(np.shape(got))} after "
                                                      f"forward; expected {V.fmt_shape(want.shape)}."))
        elif np.allclose(got, want, rtol=rtol, atol=atol):
            verdict.parts.append(Part(name, w, True))
        else:
            d = np.nan_to_num(np.abs(np.asarray(got, dtype=np.float64) - want), nan=np.inf)
            i = tuple(int(j) for j in np.unravel_index(int(np.argmax(d)), d.shape))
            verdict.parts.append(Part(name, w, False, f"{name} after forward differs from the expected value; "
                                                      f"largest difference at [{', '.join(map(str, i))}]: got "
                                                      f"{float(np.asarray(got)[i]):.6g}, expected {want[i]:.6g}."))
    return verdict


def layer_gradients(layer: Any, X: np.ndarray, reference: Any, *, parts: Mapping[str, float] | None = None,
                    seed: int = 0, rtol: float = RTOL, atol: float | None = ATOL, training: bool = False,
                    numerical: bool = True, params: Mapping[str, np.ndarray] | None = None) -> Verdict:
    """Grade ``backward``: every tensor against the reference and against central differences.

    At the grader's parameters (:func:`evaluation_point`), one forward and one
    backward with a seeded upstream gradient ``G``; the reference layer does the same. Each tensor
    (``dX``, then ``d<key>`` per parameter) is its own part, so a wrong ``db``
    costs only ``db``'s points. A wrong shape, None or a missing key fails that
    part alone. When every shape is right, :func:`gradcheck.check_layer`
    (manual vs numerical, on the proxy) must agree as well.

    Parameters
    ----------
    layer : object
        Student layer (a :class:`~gradcheck.sandbox.RemoteLayer`).
    X : ndarray, or list or tuple of ndarray
        Input (float64). Keep it away from kinks (:func:`away_from_kinks`). A list or tuple for a
        layer of several inputs (a CS231n pair ``forward(x, w, b)``, whose ``backward`` returns
        ``(dx, dw, db)``): each input's gradient is a part named after the **reference's**
        ``forward`` arguments (``dx``, ``dw``, ``db``), so the student's own names do not matter.
    reference : object
        Our layer of the same kind.
    parts : mapping of str -> float, optional
        Points per tensor, e.g. ``{"dX": 2, "dW": 2, "db": 2}``; default 1 each.
    seed : int, default 0
        Seeds the upstream gradient, the parameters (:func:`evaluation_point`) and the
        numerical check's own draws.
    rtol, atol : float
        gradcheck's tolerances (atol None: :func:`gradcheck.compare.default_atol` for the numerical
        comparison, :data:`gradcheck.compare.ATOL_FLOOR` for the reference).
    training : bool, default False
    numerical : bool, default True
        Also require agreement with central differences.
    params : mapping of str -> ndarray, optional
        The test's own parameter values (see :func:`evaluation_point`).

    Returns
    -------
    Verdict

    Raises
    ------
    StudentCodeError
        The student's parameters have the wrong keys or shapes or are not finite, or forward raised.
    GradingTestError
        A reference output or gradient is not finite: the test is wrong.
    """
    owner = type(layer).__name__
    cfg = CheckConfig(rtol=rtol, atol=atol, seed=seed, training=training)
    xs = _inputs(X)
    d_in = [f"d{n}" for n in V.input_names(reference, len(xs))] if len(xs) > 1 else ["dX"]
    keys = list(evaluation_point(layer, reference, seed=seed, params=params))
    weights = _weights(parts, d_in + [f"d{k}" for k in keys])
    Y_ref = _finite_reference("output Y", reference.forward(*[x.copy() for x in xs], training=training))
    G = np.random.default_rng(seed).standard_normal(Y_ref.shape)
    expected = _reference_gradients(reference, xs, G, keys, training, d_in)
    ones = _reference_gradients(reference, xs, np.ones_like(G), keys, training, d_in)
    given = f"X of shape {V.fmt_shape(xs[0].shape)}" if len(xs) == 1 else f"inputs of shapes {_shapes(xs)}"
    V.check_output(layer.forward(*[x.copy() for x in xs], training=training), owner=owner, tensor="Y",
                   produced_by=f"forward({'X' if len(xs) == 1 else '...'}) with {given}", expected_shape=G.shape,
                   expected_why="the reference output's shape")
    ret = layer.backward(G.copy())
    if len(xs) > 1 and not (isinstance(ret, (tuple, list)) and len(ret) == len(xs)):
        return _fail_all(weights, _not_one_per_input(ret, d_in))
    grads = getattr(layer, "grads", None)
    got: dict[str, Any] = dict(zip(d_in, ret if len(xs) > 1 else [ret]))
    got.update({f"d{k}": grads.get(k, KeyError) if isinstance(grads, Mapping) else KeyError for k in keys})
    verdict = Verdict([_part(n, w, got[n], expected[n], ones[n] if np.any(G != 1) else None, keys,
                             xs[0].shape[0], rtol, atol) for n, w in weights.items()])
    shapes_ok = all(isinstance(got[n], np.ndarray) and got[n].shape == expected[n].shape for n in weights)
    if numerical and shapes_ok and verdict.passed:
        try:
            _against_numerical(verdict, layer, xs, d_in, cfg, rtol)
        except GradcheckError as exc:
            return _fail_all(weights, f"the numerical check could not run: {exc}")
    if not verdict.passed and (how := reproduce(layer, [x.shape for x in xs], training=True if training else None)):
        verdict.notes.append(how)
    return verdict


def _not_one_per_input(ret: Any, d_in: list[str]) -> str:
    """Why a backward's return value is not one gradient per input (``d_in`` their names)."""
    what = (f"a {type(ret).__name__} of length {len(ret)}" if isinstance(ret, (tuple, list)) else
            "None" if ret is None else f"one {type(ret).__name__}")
    return (f"backward(dY) returned {what}; expected a tuple of {len(d_in)} gradients ({', '.join(d_in)}), one "
            f"per input of forward, in order.")


def _against_numerical(verdict: Verdict, layer: Any, xs: list[np.ndarray], d_in: list[str], cfg: CheckConfig,
                       rtol: float) -> None:
    """Fail each part of ``verdict`` whose tensor :func:`gradcheck.check_layer` (manual vs central
    differences, on the proxy) finds wrong; GradcheckError when the check cannot run."""
    res = check_layer(layer, xs if len(xs) > 1 else xs[0], twin=None, config=cfg)
    # the check names an input's gradient after the student's forward (d + its argument): by position
    theirs = [f"d{n}" for n in V.input_names(layer, len(xs))] if len(xs) > 1 else ["dX"]
    rename = dict(zip(theirs, d_in))
    by_tensor = {rename.get(r.tensor, r.tensor): r for r in res.records if r.kind == "gradient"}
    for p in verdict.parts:
        rec = by_tensor.get(p.name)
        if rec is not None and not rec.passed:
            c = rec.comparisons[0]
            p.passed = False
            p.message = (f"{p.name} disagrees with central differences: max relative error "
                         f"{c.max_rel_error:.2e} > {rtol:g} (worst element {p.name}{list(c.worst_index)}: "
                         f"{c.worst_a:.6g} vs {c.worst_b:.6g}). Is the layer deterministic?")


def _reference_gradients(reference, xs, G, keys, training, d_in) -> dict[str, np.ndarray]:
    """The reference layer's input gradients (``d_in``: ``dX``, or ``dx, dw, db``) and ``d<key>`` for upstream
    gradient ``G``, each finite (else a test error)."""
    reference.forward(*[x.copy() for x in xs], training=training)
    ret = reference.backward(G.copy())
    out = {n: _finite_reference(f"gradient {n}", g) for n, g in zip(d_in, ret if len(xs) > 1 else [ret])}
    out.update({f"d{k}": _finite_reference(f"gradient d{k}", reference.grads[k]).copy() for k in keys})
    return out


def _part(name, w, g, expected, ones, keys, n_batch, rtol, atol) -> Part:
    """One graded tensor: missing, None, non-finite, or compared with the reference (the one rule) and named."""
    if g is KeyError:
        return Part(name, w, False, f"grads has no key {name[1:]!r} after backward(dY); expected keys {keys}.")
    if g is None:
        what = (f"grads[{name[1:]!r}] is None" if name[1:] in keys else
                "backward(dY) returned None" if name == "dX" else "backward() returned None")
        return Part(name, w, False, f"{what}; expected an array of shape {V.fmt_shape(expected.shape)}.")
    g = np.asarray(g)
    if g.shape == expected.shape and not np.all(np.isfinite(g.astype(np.float64))):
        return Part(name, w, False, f"{name} contains NaN or infinity.")
    alternatives = {} if ones is None else {
        f"{name} does not use the upstream gradient dY: it equals the gradient for dY = 1 (the local derivative "
        f"alone). Multiply by dY (chain rule).": ones}
    msg = diagnose(name, g, expected, batch_size=n_batch, alternatives=alternatives, rtol=rtol,
                   atol=ATOL_FLOOR if atol is None else atol)
    return Part(name, w, not msg, msg)


def loss_value(loss: Any, y_true: np.ndarray, logits: np.ndarray, reference: Any, *, rtol: float = 1e-7,
               atol: float = 1e-10, points: float = 1.0, expect_nonfinite: bool = False) -> Verdict:
    """Compare the loss value with the reference's.

    Parameters
    ----------
    loss : object
        Student loss (a :class:`~gradcheck.sandbox.RemoteLoss`).
    y_true, logits : ndarray
        The targets and the predictions the grader chose.
    reference : object
        Our loss of the same kind.
    rtol, atol : float
    points : float, default 1.0
    expect_nonfinite : bool, default False
        The reference loss may be NaN or infinite (the test means it); the student's
        must then be the same. Otherwise a non-finite reference is a :class:`GradingTestError`.

    Returns
    -------
    Verdict
        One part ``"L"``.
    """
    L_ref = float(_finite_reference("loss value", float(reference.forward(np.array(y_true, copy=True),
                                                                          np.array(logits, copy=True))),
                                    expected=expect_nonfinite))
    L = float(loss.forward(np.array(y_true, copy=True), np.array(logits, copy=True)))
    if _agree(np.array(L), np.array(L_ref), rtol, atol, expect_nonfinite):
        return Verdict([Part("L", points, True)])
    if not np.isfinite(L):
        return Verdict([Part("L", points, False, f"the loss is {L}; expected the finite value {L_ref:.6g}. "
                                                 f"Subtract the row maximum before exp.")])
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

    Raises
    ------
    GradingTestError
        The reference gradient is not finite: the test is wrong.
    """
    yt, z = np.array(y_true, copy=True), np.array(logits, dtype=np.float64, copy=True)
    reference.forward(yt.copy(), z.copy())
    expected = _finite_reference("gradient dL/dlogits", reference.backward())
    loss.forward(yt.copy(), z.copy())
    part = _part("dy_pred", points, loss.backward(), expected, None, [], z.shape[0], rtol, atol)
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
    return Verdict([part], [n for n in [reproduce(loss, z.shape, loss=True)] if n and not part.passed])


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
    if not (np.all(np.isfinite(first)) and np.all(np.isfinite(second))):
        return Verdict([Part("backward twice", points, False, "backward() returned NaN or infinity.")])
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
