"""The step of Nielsen's ``update_mini_batch`` checked (nielsen36; nielsen34 F6: a PASS of ``backprop`` said nothing of
it, so a step not averaged over the mini-batch, averaged twice, of the wrong sign, or an L2 decay on the biases
passed). One ``update_mini_batch`` runs in the sandbox child on a copy of the network holding the checked weights
(:meth:`gradcheck.sandbox.RemoteLayer.mini_batch_step`), on a mini-batch of the check's columns with a known ``eta``
(and network2.py's ``lmbda``, ``n``); its new weights are compared with the step made of the network's own gradients
(``backprop``'s, summed over the mini-batch, which the gradient check compares with central differences):

* network.py (chapter 1): ``w - (eta/m) * sum(nabla_w)``, ``b - (eta/m) * sum(nabla_b)``, ``m = len(mini_batch)``;
* network2.py (chapter 3, L2): ``(1 - eta*lmbda/n) * w - (eta/m) * sum(nabla_w)``, the biases as above, ``n`` the
  training set's size.

A tensor that is not its step is named by the common bug whose step it is (:data:`BUGS`). ``gradcheck check`` reads
:func:`step_finding`, the grader :func:`gradcheck.grading.checks.mini_batch_step`; both through :func:`step_check`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._adapters import nielsen_lists
from .compare import close, relative_error
from .diagnose import Finding

__all__ = ["ETA", "LMBDA", "N", "StepCheck", "step_check", "step_finding"]

#: the step's learning rate, L2 strength and training set size (``1 - eta*lmbda/n`` = 0.95: a decay far from both
#: no decay and the decay with ``n = len(mini_batch)``)
ETA, LMBDA, N = 0.5, 5.0, 50
#: the tolerances of a step against the one made of the same gradients (only summation order differs)
RTOL, ATOL = 1e-7, 1e-10

@dataclass
class _Step:
    """One array's step: the array ``w`` before it, the sum ``s`` of its gradients over the mini-batch and the last
    sample's ``last``, ``m``, ``eta``, its due decay ``d`` (1 for a bias), the weights' ``dw`` and the decay ``dm``
    with n = m, and whether it is a ``weight``."""

    w: np.ndarray
    s: np.ndarray
    last: np.ndarray
    m: int
    eta: float
    d: float
    dw: float
    dm: float
    weight: bool


#: The common bugs of ``update_mini_batch``, each ``code: (its step of one array, what it is in words)``; the step a
#: function of :class:`_Step` ``c`` (the array ``c.w``, ...), None where the bug cannot make that array's step (a decay
#: in a network without one).
BUGS: dict[str, tuple[Callable[[_Step], Any], str]] = {
    "no-average": (lambda c: c.d * c.w - c.eta * c.s,
                   "the step is eta * sum(nabla) where (eta/m) * sum(nabla) is due: the sum over the mini-batch is "
                   "not divided by m = len(mini_batch)"),
    "averaged-twice": (lambda c: c.d * c.w - c.eta / c.m**2 * c.s,
                       "the step is (eta/m^2) * sum(nabla) where (eta/m) * sum(nabla) is due: the mean over the "
                       "mini-batch is divided by m = len(mini_batch) again"),
    "sign": (lambda c: c.d * c.w + c.eta / c.m * c.s,
             "the step is + (eta/m) * sum(nabla) where - (eta/m) * sum(nabla) is due: it climbs the cost (sign "
             "flipped)"),
    "not-updated": (lambda c: c.w if np.any(c.s) else None, "it is not updated at all"),
    "last-sample": (lambda c: c.d * c.w - c.eta / c.m * c.last if c.m > 1 else None,
                    "the step is (eta/m) * (the last sample's nabla) where (eta/m) * sum(nabla) over the mini-batch is "
                    "due: the loop assigns nabla = delta_nabla where it must add, nabla = [nb + dnb for nb, dnb in "
                    "zip(nabla, delta_nabla)]"),
    "last-sample-unscaled": (lambda c: c.d * c.w - c.eta * c.last if c.m > 1 else None,
                             "the step is eta * (the last sample's nabla) where (eta/m) * sum(nabla) over the "
                             "mini-batch is due: the loop assigns nabla = delta_nabla where it must add"),
    "decay-biases": (lambda c: None if c.weight or c.dw == 1 else c.dw * c.w - c.eta / c.m * c.s,
                     "the L2 decay (1 - eta*lmbda/n) is applied to the biases, which network2.py does not decay: "
                     "b - (eta/m) * sum(nabla_b) is due"),
    "decay-with-m": (lambda c: None if not c.weight or c.dw == 1 else c.dm * c.w - c.eta / c.m * c.s,
                     "the L2 decay is (1 - eta*lmbda/m) with m = len(mini_batch) where (1 - eta*lmbda/n) is due, n the "
                     "size of the whole training set (update_mini_batch's argument n)"),
    "decay-missing": (lambda c: None if not c.weight or c.dw == 1 else c.w - c.eta / c.m * c.s,
                      "no L2 decay: (1 - eta*lmbda/n) * w - (eta/m) * sum(nabla_w) is due"),
}


@dataclass
class StepCheck:
    """What :func:`step_check` found: ``method`` (``update_mini_batch``), ``taken`` (its keywords beyond eta),
    ``wrong`` (``{array: why}``, e.g. ``{"biases[0]": "it is not updated at all"}``), ``bugs`` (``{array: code of BUGS}`` of those named),
    ``compared`` (every array compared, in order), ``refused`` (why no step was run or compared, "" when one was),
    ``formula`` (the step compared with, in words), ``m`` the mini-batch's size, ``params`` the method's first two
    parameters' names."""

    method: str = ""
    taken: list[str] = field(default_factory=list)
    wrong: dict[str, str] = field(default_factory=dict)
    bugs: dict[str, str] = field(default_factory=dict)
    compared: list[str] = field(default_factory=list)
    refused: str = ""
    formula: str = ""
    m: int = 0
    params: list[str] = field(default_factory=list)

    def not_checked(self) -> str:
        """Why the step was not checked, one sentence without its full stop (``check`` prints it after the PASS, the
        grader in each array's part): ``update_mini_batch's step was not checked: ...`` (the step method's name)."""
        return f"{self.method or 'update_mini_batch'}'s step was not checked: {self.refused}"

    def said(self) -> str:
        """The call in the student's names: ``update_mini_batch(batch, learning_rate)`` (verify36 F7), else
        ``update_mini_batch(mini_batch, eta)``; the keywords beyond eta after them."""
        first = ", ".join(self.params) if len(self.params) == 2 else "mini_batch, eta"
        return f"{self.method}({first}{''.join(', ' + k for k in self.taken)})"


def _summed_gradients(layer: Any, X: np.ndarray) -> dict[str, np.ndarray]:
    """The network's gradients summed over ``X``'s columns: its model's ``backward(1.0)`` after ``forward(X)``
    (:func:`gradcheck._adapters.backprop_as_model`: the sum of ``backprop(x, y)``'s over the columns)."""
    Y = layer.forward(X.copy(), training=False)
    layer.backward(np.ones_like(np.asarray(Y, dtype=np.float64)))
    return {k: np.asarray(v, dtype=np.float64) for k, v in (layer.grads or {}).items() if isinstance(v, np.ndarray)}


def step_check(layer: Any, X: np.ndarray, T: np.ndarray, *, eta: float = ETA, lmbda: float = LMBDA,
               n: int = N) -> StepCheck:
    """One ``update_mini_batch`` of Nielsen's network ``layer`` compared with the step of its own gradients.

    Parameters
    ----------
    layer : RemoteLayer
        The network as :func:`gradcheck._adapters.backprop_as_model` presents it, in a sandbox (it has
        ``mini_batch_step``); its :attr:`params` (``weights[0]``, ``biases[0]``, ...) are the weights stepped.
    X, T : ndarray of float64, shapes (n_in, m) and (n_out, m)
        The mini-batch, one sample a column (``T``: the model's targets).
    eta, lmbda, n : float, float, int
        The learning rate, and network2.py's L2 strength and training set size (passed when ``update_mini_batch``
        takes them, :data:`gradcheck._adapters.STEP_KEYWORDS`).

    Returns
    -------
    StepCheck
        ``refused`` set (nothing compared) for a network without a local ``mini_batch_step`` or a step method.

    Raises
    ------
    StudentCodeError
        forward, backward or the step raised, or the step left a list entry that is not an array.

    Notes
    -----
    The formulas are Nielsen's, *Neural Networks and Deep Learning*, chapter 1 (network.py's ``update_mini_batch``)
    and chapter 3 (network2.py's, L2 regularisation: eq. (93) for the weights, the biases not decayed).
    """
    if not callable(getattr(layer, "mini_batch_step", None)):
        return StepCheck(refused="the network runs in this process; its step is checked in the sandbox only")
    X, T = np.asarray(X, dtype=np.float64), np.asarray(T, dtype=np.float64)
    before = {k: np.array(v, dtype=np.float64) for k, v in layer.params.items()}
    sums = _summed_gradients(layer, X)
    layer.params.update({k: v.copy() for k, v in before.items()})  # (a probe may have moved them: put back)
    got = layer.mini_batch_step(X, T, eta, lmbda, n)
    if isinstance(got, str):
        return StepCheck(refused=got)
    stepped, method, taken, last, *rest = got
    if rest and rest[0]:  # verify36 F1: the sum of backprop's one-sample gradients, network.py's nabla (a matrix
        sums = rest[0]    # port's whole-batch nabla_b is (n, m): its bias step is made of the (n, 1) sum)
    names = (rest[1] if len(rest) > 1 else []) or []
    m = X.shape[1]
    wrong_shape = {k: np.shape(sums[k]) for k, v in before.items() if k in sums and np.shape(sums[k]) != v.shape}
    if wrong_shape:  # never compared by broadcasting: the step it would be made of is not the array's shape
        return StepCheck(method=method, taken=taken, refused=_sums_refused(wrong_shape, before, m))
    if len(set(taken) & {"lmbda", "n"}) == 1:
        return StepCheck(method=method, taken=taken, refused=f"{method} takes {taken[0]} without "
                         f"{({'lmbda', 'n'} - set(taken)).pop()}: the L2 decay it makes cannot be told")
    decayed = bool(taken)
    lists = {}
    for k, v in before.items():
        lists.setdefault(k.partition("[")[0], []).append(v)
    weight, _bias = nielsen_lists(lists)
    d, dm = (1 - eta * lmbda / n, 1 - eta * lmbda / m) if decayed else (1.0, 1.0)
    out = StepCheck(method=method, taken=taken, m=m, compared=list(before), params=list(names[:2]), formula=(
        f"(1 - eta*lmbda/n) * w - (eta/m) * sum(nabla_w) and b - (eta/m) * sum(nabla_b), eta = {eta:g}, lmbda = "
        f"{lmbda:g}, n = {n}, m = {m}" if decayed else f"w - (eta/m) * sum(nabla_w), b - (eta/m) * sum(nabla_b), eta = "
        f"{eta:g}, m = {m}"))
    for k, w in before.items():
        wt = k.partition("[")[0] == weight
        due = (d if wt else 1.0) * w - eta / m * sums.get(k, np.zeros_like(w))
        new = stepped.get(k)
        if isinstance(new, np.ndarray) and new.shape == w.shape and close(new, due, RTOL, ATOL):  # never broadcast
            continue
        if not isinstance(new, np.ndarray) or new.shape != w.shape:
            out.wrong[k] = _shape_wrong(method, new, w, m, new is None and k not in stepped)
            continue
        lk = last.get(k) if isinstance(last.get(k), np.ndarray) and np.shape(last.get(k)) == w.shape else 0 * w
        c = _Step(w, sums.get(k, np.zeros_like(w)), lk, m, eta, d if wt else 1.0, d, dm, wt)
        out.wrong[k], code = _named(k, new, due, c)
        if code:
            out.bugs[k] = code
    return out


def _sums_refused(shapes: dict[str, tuple], before: dict[str, np.ndarray], m: int) -> str:
    """Why no array's step was compared when backprop's gradients summed over the ``m`` samples have, for the arrays of
    ``shapes`` (``{array: the sum's shape}``), another shape than the array (``before``): what was expected and what
    came, each array named (fix37a; it said "could not be run" and "the step due cannot be made of them")."""
    came = "; ".join(f"the sum for {k} is of shape {s}, where {before[k].shape}, the shape of {k}, is expected"
                     for k, s in shapes.items())
    return (f"the step due is made of backprop's gradients summed over the mini-batch's {m} samples (w - (eta/m) * "
            f"sum(nabla_w)), each of its array's shape; {came}. No step due could be made, so no array was compared: "
            f"make backprop return, for one sample (x, y), each gradient in its array's shape (nabla_b[l] in "
            f"biases[l]'s)")


def _shape_wrong(method: str, new: Any, w: np.ndarray, m: int, missing: bool) -> str:
    """Why the array ``w`` was left ``new``, not an array of its shape (``missing``: not left at all); a bias left
    (n, m), the m samples' deltas side by side, is told to sum them (verify36 F2)."""
    cols = w.ndim == 2 and w.shape[1] == 1 and np.shape(new) == (w.shape[0], m) and m > 1
    return (f"{method} left it " + ("missing" if missing else f"of shape {np.shape(new)}") + f", expected an array of "
            f"shape {w.shape}" + (f" (the {m} samples' bias deltas side by side, as backprop(X, Y) of the whole batch "
                                  "gives them: sum them over the columns, nabla_b.sum(axis=1, keepdims=True), in "
                                  f"backprop or in {method})" if cols else ""))


def _named(k: str, new: np.ndarray, due: np.ndarray, c: _Step) -> tuple[str, str]:
    """``(why, code)``: the sentence of array ``k``'s wrong step ``new`` (``due`` the right one), naming the first bug
    of :data:`BUGS` whose step it is (code "" when none is)."""
    for code, (make, words) in BUGS.items():
        if (cand := make(c)) is not None and close(new, cand, RTOL, ATOL) and not close(cand, due, RTOL, ATOL):
            if code == "averaged-twice" and c.m == 2:  # verify36 F6: eta/m^2 = eta/(2m) at m = 2, eta halved alike
                return ("the step is (eta/4) * sum(nabla) where (eta/2) * sum(nabla) is due (m = 2): eta halved, or "
                        "(eta/m)/m, the mean over the mini-batch averaged twice; with m = 2 samples both give this "
                        "same step, so which one it is cannot be told here (a mini-batch of 3 samples or more, "
                        "--targets real@N_OUT,3, tells them apart)"), ""
            return words, code
    if c.weight and c.dw != 1 and np.any(c.w):  # another decay: the factor new = d' w - (eta/m) s fits, d' constant
        d = float(np.sum((new + c.eta / c.m * c.s) * c.w) / np.sum(c.w * c.w))
        if close(new, d * c.w - c.eta / c.m * c.s, RTOL, ATOL):
            return (f"the weights are decayed by the factor {d:.6g} where (1 - eta*lmbda/n) = {c.dw:.6g} is due: the "
                    f"decay term is {(1 - d) / (1 - c.dw):.4g} times eta*lmbda/n"), "decay-factor"
    err = float(np.max(relative_error(new, due)))
    return f"not the step of its gradients (max relative error {err:.2g})", ""


def step_finding(layer: Any, X: np.ndarray, T: np.ndarray, cname: str) -> tuple[Finding | None, str]:
    """``(finding, line)`` for ``gradcheck check`` of a Nielsen network whose gradients passed: a ``mini-batch-step``
    error Finding naming each wrong array and its bug (None when every array is its step), and the line the PASS
    prints: what was compared, or why the step was not checked."""
    res = step_check(layer, X, T)
    if res.refused:
        return None, f"{cname}: {res.not_checked()}."
    said = res.said()
    if not res.wrong:
        return None, (f"{said}: checked: one step on a mini-batch of {res.m} samples (x[:, j], y[:, j]) from the "
                      f"checked weights gives {', '.join(res.compared)} = {res.formula}, the step of backprop's "
                      "gradients.")
    return Finding("mini-batch-step", f"{said} is not the step of backprop's gradients, {res.formula}: "
                   f"{grouped(res.wrong)}. backprop's gradients themselves match central differences; fix the step"), ""


def grouped(wrong: dict[str, str]) -> str:
    """``{array: why}`` as one sentence, the arrays of one reason together: ``biases[0], biases[1]: it is not updated
    at all; weights[0]: ...``."""
    by: dict[str, list[str]] = {}
    for k, why in wrong.items():
        by.setdefault(why, []).append(k)
    return "; ".join(f"{', '.join(ks)}: {why}" for why, ks in by.items())
