"""The running statistics of a normalisation layer compared with ``--reference`` after training forwards (newuser35
H2): the gradient check compares the eval forward with the reference's only while both hold their initial running
statistics (0 and 1), where a running-average update with the momentum swapped (``running = m*running +
(1-m)*batch``) gives the same eval output; and central differences never see an update forward writes (a buffer, not
a weight). Here the reference is given the layer's running statistics and parameters, both are fed the same training
batch, and the statistics they hold after it, then their eval outputs on another batch, are compared."""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _pyast
from . import _validation as V
from .compare import close
from .diagnose import Finding, adapter_call
from .sources import Call, mapped_names

__all__ = ["pair_running_stats_finding", "running_stats_finding", "unchecked_buffers_line"]

_RTOL, _ATOL = 1e-6, 1e-9

#: The words for running statistics a training forward left as they were, check's and the grader's (verify37 F9).
NOT_UPDATED = "not updated by the training forward"
#: The start of a note saying the running statistics were not checked: check prints it, the grade's first line reads
#: "Checked (not the running statistics, below)" for it, never "All checked" (verify47a F3, F4, F11).
UNCHECKED = "running statistics: NOT checked"


def unchecked(notes) -> bool:
    """Whether ``notes`` say the running statistics were not checked: not looked for by their update, or
    :data:`UNCHECKED`."""
    return any(str(n).startswith(("running statistics: not looked for", UNCHECKED)) for n in notes)


def at_initial_value(name: str, value: Any) -> bool:
    """Whether the running statistic ``name`` (by its role, :data:`_ROLES`: a mean or a variance) holds the value every
    library's constructor gives it in every entry, 0 for a mean and 1 for a variance: after training forwards on
    data, a statistic no training forward updated (one updated from a batch is never exactly that)."""
    role = _ROLES.get(_bare(name))
    a = np.asarray(value, dtype=np.float64) if isinstance(value, (np.ndarray, list, float, int)) else None
    return role is not None and a is not None and a.size > 0 and bool(
        np.all(a == (1.0 if role == "running_var" else 0.0)))


def _bare(buffer: str) -> str:
    """The last name of a buffer's path: ``running_mean`` of ``running_mean``, ``bn_param['running_mean']``."""
    return (re.findall(r"\w+", buffer) or [buffer])[-1]


def written_buffers(info: dict[str, Any]) -> list[str]:
    """The buffers a layer's forward writes (``info['buffer_why']``, :func:`gradcheck._adapters._buffers_by_behaviour`)
    named like running statistics (``running_*``, ``moving_*``, ``*_running``, ``mean``/``var`` ...), not a cache."""
    why = dict(w.split(": ", 1) for w in info.get("buffer_why", []) if ": " in w)
    return [b for b in info.get("buffers", []) if "writes it" in why.get(b, "")
            and re.search(r"running|moving|(^|_)(mean|var|variance|std)($|_)", _bare(b))]


def pair_buffers(source: str, info: dict[str, Any]) -> list[str]:
    """The running statistics a CS231n function pair's forward stores in a settings dict it is given (``--init``'s
    ``bn_param``): each assignment target ``NAME['running_...']`` (or ``moving_``; in a tuple too) in the file's
    ``source`` for a dict NAME of ``info['init']``, in order, once; [] for another protocol or a file that does not
    parse."""
    dicts = set(info.get("init") or [])
    if info.get("protocol") != "cs231n" or not dicts:
        return []
    try:
        tree = _pyast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for e in t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                if (isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and e.value.id in dicts
                        and isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, str)
                        and re.match(r"(running|moving)_", e.slice.value)):
                    found.append((e.lineno, e.col_offset, f"{e.value.id}[{e.slice.value!r}]"))
    return list(dict.fromkeys(name for *_, name in sorted(found)))


def unchecked_buffers_line(cname: str, info: dict[str, Any], reference: str | None, source: str = "",
                           found: list[str] | tuple = ()) -> str:
    """The line after a PASS saying that forward's update of its running statistics was not compared (no reference
    holds the same names, or a function pair's, :func:`pair_buffers` of the file's ``source``, could not be
    compared), with how to have it compared; "" when forward writes none. ``found``: the statistics whose names
    tell no role, found by their update (:func:`found_by_update`)."""
    pair = pair_buffers(source, info)
    bufs = written_buffers(info) or pair or list(found)
    if not bufs:
        return ""
    how = (f"the notes above say why {reference} did not compare them" if reference else
           "pass --reference manualprop.BatchNorm1D (--reference-init '{\"num_features\": D}') with the dict's "
           "mode 'train' in --init to compare them after a training forward" if pair else
           "the reference holds no running statistics of these names" if reference else
           "pass --reference manualprop.BatchNorm1D (--reference-init '{\"num_features\": D}'; BatchNorm2D for "
           "(N, C, H, W)) to compare them after training forwards")
    return (f"{cname}: the update of {', '.join(bufs)} (the running averages a training forward writes and the "
            f"eval forward reads) was NOT checked: gradients never see it, and the eval forward was compared "
            f"(if at all) only before any training forward; {how}, or compare them by hand after one training "
            f"forward: running = (1 - momentum) * running + momentum * batch statistic in PyTorch's convention "
            f"(momentum 0.1), running = momentum * running + (1 - momentum) * batch statistic in CS231n's and "
            f"Keras's (momentum 0.9 or 0.99).")


def running_stats_finding(layer: Any, reference: Any, cname: str, shape, seed: int, ref_name: str) -> tuple[
        Finding | None, list[str]]:
    """``(finding, notes)``: a ``running-stats`` error Finding when, given the layer's running statistics and
    parameters, the ``reference`` (a manualprop layer with running statistics and a ``momentum``, PyTorch's
    convention) holds other running statistics after one training forward on the same batch, or gives another eval
    output after it; None when they agree, or when nothing can be compared (no statistics found, another input count,
    a state that cannot be read: ``notes`` says which). Which of the layer's arrays are its statistics is
    :func:`find_roles`'s answer (by their update, whatever their names), check's and the grader's alike. A running variance of the biased batch variance (CS231n's,
    Keras's) where the reference keeps the unbiased (PyTorch's, ``count / (count - 1)``) is accepted, said in ``notes``.

    Parameters
    ----------
    layer : RemoteLayer or layer
        The checked layer (its forward takes a training switch).
    reference : manualprop layer
        ``--reference``'s layer, with ``momentum`` and the buffers as attributes.
    cname, ref_name : str
        The layer's and the reference's names, for the messages.
    shape : tuple of int
        The input shape (one input).
    seed : int
        The draws' seed.
    """
    m = getattr(reference, "momentum", None)
    if not isinstance(shape[0], int) or not isinstance(m, float) or not 0 < m <= 1:
        held = _held_unwritten(layer, reference)
        return None, [f"running statistics: {', '.join(held)} not compared with {ref_name}: " + (
            "the input shape is not fixed" if not isinstance(shape[0], int) else
            f"its momentum {m!r} is not a float in (0, 1]")] if held else []
    roles = find_roles(layer, reference, cname, shape, seed)
    read = _eval_reads(layer, cname, shape, seed, roles.moved) if roles.moved else []
    odd = [b for b in roles.moved if b not in read and re.search(r"running|moving|(^|_)(mean|var|variance|std)($|_)", b)]
    notes = roles.notes + [f"running statistics: {', '.join(odd)} moved in the training forwards but as no running average of the "
             f"batch's mean or variance at one rate (a cache of the batch's, a cumulative average?): not compared with "
             f"{ref_name}'s"] * bool(odd) + [  # verify47a F11: rm, rv of a cumulative average were never said
        f"{UNCHECKED}: {cname}'s {', '.join(read)} (of a statistic's shape) moved in the training forwards and are read "
        f"by the eval forward, but moved as no running average of the batch's mean or variance at one rate (a "
        f"cumulative average, an update skipping calls, statistics of another axis?), so they could not be told apart "
        f"as {ref_name}'s {', '.join(_stats_of(reference))} and were not compared with them"] * bool(read)
    if not roles.own:
        return None, notes
    stats = _stats_of(reference)
    state = stat_state(layer, stats)
    own = {s: s for s in roles.own}
    rname = dict(roles.own)
    notes += [f"running statistics: {s} compared as {ref_name}'s {r} (" + (
        "the same role" if roles.how[s] == "name" else "found by its update: an exponential moving average of the "
        f"batch's {'mean' if _ROLES.get(r) == 'running_mean' else 'variance'}") + ")"
        for s, r in rname.items() if s != r]
    params = V.layer_params(layer, cname)
    rparams = getattr(reference, "params", None) or {}
    names = mapped_names(rparams, params, cname, f"reference {ref_name}", ValueError) if params else {}
    for k, v in params.items():  # the layer's parameters, for the eval outputs
        rparams[names[k]][...] = np.asarray(v, dtype=np.float64).reshape(rparams[names[k]].shape)
    rng = np.random.default_rng([seed, 35])
    X, Xe = (rng.standard_normal(shape) * 1.5 + 0.5 for _ in range(2))  # batch means away from the statistics
    inputs = V.input_names(layer, 1)
    shaped = {s: getattr(reference, rname[s]).shape for s in own}  # (a (1, D) statistic as the reference's (D,))
    before = {rname[s]: np.array(state[s], dtype=np.float64).reshape(shaped[s]) for s in own.values()}
    Call(layer, cname, [X], inputs, params, True).forward(X.copy())
    after = stat_state(layer, stats)
    found, more = _compared({b: rname[s] for b, s in own.items()}, before,
                            {rname[s]: _reshaped(after.get(s), shaped[s]) for s in own.values()}, reference, X, ref_name, cname, lambda: (
        Call(layer, cname, [Xe], inputs, params, False).forward(Xe.copy()), [Xe]), roles.momentum(),
        claimed=roles.claimed, irregular=roles.irregular)
    if found is None:  # (the eval forward ran: it must leave them as they were, verify46a F4)
        found = _moved_in_eval(after, stat_state(layer, stats), list(own), cname)
    if found is None and roles.irregular:  # (one call agreed; the finder's two did not: verify46a F5)
        found = Finding("running-stats", (
            f"{cname}'s {', '.join(roles.irregular)} moved over two training forwards as no running average of the "
            f"batch's statistic at one rate (each call keeping the same share of the old value, as {ref_name}'s "
            f"momentum={m:g} does): an update that skips calls, or whose rate changes from call to call (a "
            f"cumulative average), agreed with {ref_name}'s on one call only"), layer="BatchNorm")
    return found, notes + more


def _moved_in_eval(before: dict, after: dict, own: list[str], cname: str) -> Finding | None:
    """The ``running-stats`` error of statistics ``own`` that the eval forward changed (the layer's state ``before``
    and ``after`` it, :func:`stat_state`): an update outside ``if training`` after the eval forward normalised (its
    output still the reference's, verify46a F4); None when it left them as they were."""
    from .diagnose import _state_fields

    moved = [s for s in own if s in before and s in after and not np.array_equal(before[s], after[s], equal_nan=True)]
    if not moved:
        return None
    f = _state_fields(False, 0.0, moved)
    return Finding("running-stats", f"{cname}'s eval forward changed {', '.join(moved)}{f['why']}. Fix: {f['fix']}",
                   layer="BatchNorm")


def _held_unwritten(layer: Any, reference: Any) -> dict[str, str]:
    """``{name: name}`` of the layer's ``running_*``/``moving_*`` arrays that are the counterparts of the reference's
    statistics (:func:`_counterparts_of`) when its forward writes none: a layer that never updates them PASSed, its
    statistics read in eval mode as constants (verify37 F2); compared, they keep all of their old value."""
    try:
        state = adapter_call(layer, "state_values")
    except Exception:  # noqa: BLE001 - a state that cannot be read: nothing compared, as before
        return {}
    named = [k for k in state if re.match(r"(running|moving)_", k)]
    return {s: s for r, v in vars(reference).items() if re.match(r"(running|moving)_", r) and isinstance(v, np.ndarray)
            for s in _counterparts_of(r, named) if _same_shape(state[s], v)}


# a running statistic's names in the libraries' conventions, by role: PyTorch's (running_*), Keras's (moving_*),
# a plain class's (self.mean, self.var)
_ROLES = {"running_mean": "running_mean", "moving_mean": "running_mean", "mean": "running_mean",
          "running_var": "running_var", "moving_variance": "running_var", "moving_var": "running_var",
          "var": "running_var", "variance": "running_var"}


def _counterparts_of(r: str, names: list[str]) -> list[str]:
    """The names of ``names`` that are the reference's statistic ``r``: ``r`` itself, else the one of its role
    (:data:`_ROLES`); [] when none or several have it (ambiguous)."""
    if r in names:
        return [r]
    same = [n for n in names if _ROLES.get(n) == _ROLES.get(r, r)]
    return same if len(same) == 1 else []


def never_stored(layer: Any, reference: Any) -> list[str]:
    """``bn_param['running_mean']``, ... : the running statistics the ``reference`` holds (``running_*``,
    ``moving_*``), in the dict argument of a CS231n function pair that holds its ``mode``, when the pair's source stores
    none there (:func:`pair_buffers` found none): compared all the same, a pair that never stores them keeps the values
    it was given (verify37 F8: a usage error about parameters, not a FAIL). [] for another layer, or a pair with no
    such dict or several."""
    from .sources import pair_keywords

    dicts = [d for d, v in pair_keywords(layer).items() if isinstance(v, dict) and "mode" in v]
    return [f"{dicts[0]}[{r!r}]" for r, v in vars(reference).items() if re.match(r"(running|moving)_", r)
            and isinstance(v, np.ndarray)] if len(dicts) == 1 else []


def pair_running_stats_finding(layer: Any, reference: Any, cname: str, shapes, seed: int, ref_name: str,
                               source: str) -> tuple[Finding | None, list[str]]:
    """:func:`running_stats_finding` for a CS231n function pair (``batchnorm_forward(x, gamma, beta, bn_param)``),
    whose running statistics live in a dict it is given (:func:`pair_buffers` of its file's ``source``:
    ``bn_param['running_mean']``) and whose gamma and beta are inputs: the pair's dict is given the statistics to
    start from (:func:`gradcheck._adapters.set_pair_keywords`), its forward and the reference's (its parameters the
    pair's other inputs, mapped by name) run on one batch in the mode ``--init`` gave (it must train), the dict as
    forward left it compared with the reference's statistics, then the eval outputs (the dict's ``mode`` set to
    CS231n's ``'test'``; not compared, said, when forward raises there). The dict is put back after. ``shapes``: the inputs' shapes."""
    info, m = getattr(layer, "protocol", None) or {}, getattr(reference, "momentum", None)
    stored = pair_buffers(source, info)
    keys = {b: k for b in stored or never_stored(layer, reference) if (k := re.fullmatch(r"(\w+)\['(\w+)'\]", b))
            and isinstance(getattr(reference, k[2], None), np.ndarray)}
    if not keys or len({k[1] for k in keys.values()}) != 1 or not isinstance(m, float) or not 0 < m <= 1:
        return None, []
    if info.get("mode") != "train":
        return None, [f"running statistics: not compared with {ref_name}: the forward runs in mode "
                      f"{info.get('mode')!r} (--init), not CS231n's 'train', in which it updates them"]
    d = next(iter(keys.values()))[1]
    rng = np.random.default_rng([seed, 35])
    X, Xe, *rest = (rng.standard_normal(s) * 1.5 + 0.5 for s in [shapes[0], *shapes])
    names = V.input_names(layer, len(shapes))
    rparams = getattr(reference, "params", None) or {}
    mapped = mapped_names(rparams, dict(zip(names[1:], rest, strict=True)), cname, f"reference {ref_name}", ValueError)
    for k, v in zip(names[1:], rest, strict=True):  # gamma, beta: the reference's parameters
        rparams[mapped[k]][...] = v.reshape(rparams[mapped[k]].shape)
    own = {b: k[2] for b, k in keys.items()}
    before = {r: 0.5 + rng.random(getattr(reference, r).shape) if "var" in r else
              rng.standard_normal(getattr(reference, r).shape) * 0.5 for r in own.values()}
    try:
        adapter_call(layer, "set_pair_keywords", {d: before})
        Call(layer, cname, [X, *rest], names, {}, True).forward(X.copy(), *rest)
        left = (getattr(layer, "call_keywords", None) or {}).get(d, {})

        def eval_out():  # the pair in CS231n's test mode from the statistics its training forward left
            adapter_call(layer, "set_pair_keywords", {d: {"mode": "test", **{r: left[r] for r in own.values()}}})
            try:
                return Call(layer, cname, [Xe, *rest], names, {}, False).forward(Xe.copy(), *rest), [Xe]
            except Exception as exc:  # noqa: BLE001 - the student's forward in CS231n's mode 'test'
                return None, f"its forward in mode 'test' raised {type(exc).__name__}: {exc}"
        found, notes = _compared(own, before, {r: left.get(r) for r in own.values()}, reference, X, ref_name, cname,
                                 eval_out, left.get("momentum"), pair=True)
        if found is not None and not stored:  # (verify37 F8: its source never stores them)
            found.message = found.message.rstrip(". ") + (f". {cname}'s forward never stores {', '.join(own)} (no assignment {next(iter(own))} = "
                              f"... in its file): the caller reads the running statistics back from the dict it "
                              f"passed, so store the updated values there, as CS231n's batchnorm_forward does")
        return found, notes
    finally:
        adapter_call(layer, "set_pair_keywords", None)


def _compared(own: dict, before: dict, after: dict, reference: Any, X: np.ndarray, ref_name: str, cname: str,
              eval_out, momentum=None, pair: bool = False, claimed=(), irregular=()) -> tuple[Finding | None, list[str]]:
    """:func:`running_stats_finding`'s comparison of the statistics ``after`` the layer's training forward on ``X``
    from ``before`` (``{reference name: array}``; ``own``: ``{the layer's buffer: reference name}``) with the
    ``reference``'s after the same forward from the same values, then, when they agree, of the eval outputs:
    ``eval_out()`` gives the layer's (and the inputs it was given, the reference's too: its parameters already the
    layer's), or ``(None, why)`` when no eval forward can be run (said in the notes). ``momentum``: the layer's own
    (its attribute or its dict's), by which statistics at another rate are accepted (:func:`_another_rate`; ``pair``:
    the layer is a CS231n function pair, whose ``bn_param`` momentum is CS231n's share kept by its API; ``claimed``:
    a class's :attr:`Roles.claimed`, None when no attribute of it holds a rate and ``momentum`` is the share its
    update kept; ``irregular``: :attr:`Roles.irregular`, no rate advised for them)."""
    m = reference.momentum
    for r, v in before.items():
        setattr(reference, r, v.copy())
    reference.forward(X.copy(), training=True)
    notes, wrong = [], []
    for b, r in own.items():
        got, want = np.asarray(after[r], dtype=np.float64), np.asarray(getattr(reference, r), dtype=np.float64)
        if close(got, want, _RTOL, _ATOL):  # (the eval output compared given the layer's own values: float32's,
            setattr(reference, r, got.copy())  # verify46a F6, FAILed by its rounding)
            continue
        count = X.size / max(want.size, 1)
        biased = (1 - m) * before[r] + (want - (1 - m) * before[r]) * (count - 1) / count
        if "var" in r and count > 1 and close(got, biased, _RTOL, _ATOL):
            notes.append(f"running statistics: {b} keeps the biased batch variance (CS231n's, Keras's convention), "
                         f"{ref_name} the unbiased one (PyTorch's: times count / (count - 1) = {count:g}/{count - 1:g})"
                         ": accepted; the eval outputs are compared with the reference given the layer's value")
            setattr(reference, r, got.copy())
            continue
        wrong.append((b, r, got, want, biased if "var" in r and count > 1 else want))
    if wrong and (rate := _another_rate(wrong, before, m, momentum, ref_name, pair, claimed)) and len(wrong) < len(own):
        return _two_rates(wrong, [b for b in own if b not in {w[0] for w in wrong}], before, m, ref_name), notes
    if wrong and rate:
        notes.append(rate)  # (a running average at the layer's own momentum, another convention: review36 F2)
        for _, r, got, *_ in wrong:
            setattr(reference, r, got.copy())
        wrong = []
    if wrong:
        return _differing_stats(wrong, before, m, ref_name, irregular), notes
    Ys, xs = eval_out()
    if Ys is None:
        return None, notes + [f"running statistics: {', '.join(own)} after a training forward match {ref_name}'s; "
                              f"the eval output after it was not compared ({xs})"]
    Yr = np.asarray(reference.forward(xs[0].copy(), training=False), dtype=np.float64)
    if Ys.shape == Yr.shape and close(Ys, Yr, *_eval_tolerance(after, Yr)):
        return None, notes + [f"running statistics: {', '.join(own)} after a training forward and the eval "
                              f"output after it match {ref_name}'s"]
    err = float(np.max(np.abs(Ys - Yr))) if Ys.shape == Yr.shape else float("nan")
    return Finding("running-stats", (
        f"after one training forward, {cname}'s running statistics ({', '.join(own)}) equal {ref_name}'s, but "
        f"the eval forward on another batch differs from {ref_name}'s by up to {err:.3g}: " + (
            f"it normalises with the batch's own mean and variance (it equals {ref_name}'s training output on that "
            f"batch): in eval mode use the running statistics, xhat = (X - running_mean) / sqrt(running_var + eps)"
            if _batch_normalised(Ys, reference, xs[0]) else "the eval forward does not normalise with them as "
            "(X - running_mean) / sqrt(running_var + eps)")), layer="BatchNorm"), notes


def _eval_tolerance(stats: dict, Yr: np.ndarray) -> tuple[float, float]:
    """``(rtol, atol)`` of the eval outputs: 1e-6, 1e-9; for float32 statistics (every entry a float32 after a
    training forward, :func:`gradcheck.diagnose.rounding_rtol`) eight units in float32's last place, relative and of
    the output's largest entry: an eval forward computing ``sqrt(running_var + eps)`` in their float32 differs from
    the reference's by about 1e-7 (verify46a F6: a right layer FAILed on some seeds)."""
    from .diagnose import rounding_rtol

    r = max([rounding_rtol(v) for v in stats.values() if v is not None and np.size(v)] + [0.0])
    return (_RTOL, _ATOL) if r <= 1e-9 else (max(_RTOL, r), r * float(np.max(np.abs(Yr), initial=1.0)))


def _two_rates(wrong, same: list[str], before: dict, m: float, ref_name: str) -> Finding:
    """The error of running statistics at two rates: ``wrong`` (:func:`_compared`'s) a running average at the layer's
    own momentum, ``same`` at the reference's (verify46a F10: a mean keeping 0.99 and a variance a hard-coded 0.9,
    accepted as "another rate" for the mean alone). No library updates its mean and variance at two rates."""
    k = _one_share(wrong, before, m)
    return Finding("running-stats", (
        f"{', '.join(b for b, *_ in wrong)} {'keeps' if len(wrong) == 1 else 'keep'} {k:.3g} of the old value in a "
        f"training forward, {', '.join(same)} {1 - m:g} (as {ref_name}'s momentum={m:g}): running averages at two "
        f"rates. Fix: update the running mean and the running variance with one momentum"), layer="BatchNorm")


def _batch_normalised(Ys: np.ndarray, reference: Any, Xe: np.ndarray) -> bool:
    """Whether the eval output ``Ys`` is the ``reference``'s training output on ``Xe`` (a copy of it: normalised
    by the batch's own statistics), the eval forward's bug of using them in place of the running ones."""
    import copy

    try:
        Yb = np.asarray(copy.deepcopy(reference).forward(Xe.copy(), training=True), dtype=np.float64)
    except Exception:  # noqa: BLE001 - no claim
        return False
    return Ys.shape == Yb.shape and close(Ys, Yb, _RTOL, _ATOL)


def _differing_stats(wrong, before: dict, m: float, ref_name: str, irregular=()) -> Finding:
    """:func:`running_stats_finding`'s error for the buffers ``wrong`` (``(name, reference name, got, want)`` each,
    after a training forward from ``before``): each said with the share of the old value it keeps, and the fix (a
    swapped momentum named as one; no rate advised for a buffer of ``irregular``, whose rate changed between the
    finder's two calls: verify46a F7, PyTorch's cumulative average)."""
    said = []
    for b, r, got, want, _ in wrong:
        kept = _kept(before[r], got, want, m)
        said.append(f"{b} is {_fmt(got)} after a training forward from {_fmt(before[r])}, {ref_name}'s {_fmt(want)}"
                    + (f" ({NOT_UPDATED}: it keeps all of its old value)"
                       if kept is not None and abs(kept - 1) < 1e-6 else
                       f": yours keeps {kept:.3g} of the old value, {ref_name} (momentum={m:g}) keeps {1 - m:g}"
                       if kept is not None else ""))
    k = _one_share(wrong, before, m)
    swapped = any(s is not None and abs(s - m) < 1e-6 for s in (_kept(before[r], g, w, m) for _, r, g, w, _ in wrong)
                  ) or k is not None and k < 0.5
    if moving := [b for b, *_ in wrong if b in irregular]:
        return Finding("running-stats", f"{'; '.join(said)}. {', '.join(moving)} moved over two training forwards as "
                       f"no running average at one rate (each call kept another share of the old value: a cumulative "
                       f"average, PyTorch's momentum=None, or an update that skips calls); {ref_name} keeps "
                       f"{1 - m:g} on every call. Fix: running = (1 - momentum) * running + momentum * batch statistic"
                       f" at one momentum", layer="BatchNorm")
    if not swapped and k is not None and abs(k - 1) > 1e-6:
        fix = (f"yours is a running average at another rate: every entry keeps {k:.3g} of the old value (momentum="
               f"{k:.3g} in CS231n's and Keras's convention, where momentum is the share kept; {1 - k:.3g} in "
               f"PyTorch's), {ref_name} keeps {1 - m:g}. If that is your momentum, compare at your rate: add "
               f"\"momentum\": {1 - k:.3g} to --reference-init (or give your layer the momentum the reference has)")
        return Finding("running-stats", f"{'; '.join(said)}. {fix[0].upper()}{fix[1:]}", layer="BatchNorm")
    fix = (f"the momentum looks swapped: running = (1 - momentum) * running + momentum * batch statistic in "
           f"PyTorch's convention (momentum={m:g} keeps {1 - m:g}); momentum * running + (1 - momentum) * batch in "
           "CS231n's and Keras's, where momentum is the share kept (0.9, 0.99): use one convention for both the "
           "value and the formula" if swapped else
           "running = (1 - momentum) * running + momentum * batch mean (PyTorch's; the variance: the unbiased "
           "batch variance, or CS231n's biased one)")
    return Finding("running-stats", f"{'; '.join(said)}. Fix: {fix}", layer="BatchNorm")


def _one_share(wrong, before: dict, m: float) -> float | None:
    """The one share of the old value every buffer of ``wrong`` keeps (a variance against the unbiased or the biased
    batch variance, :func:`running_stats_finding`'s ``biased``), None when there is none: a running average at
    another rate than the reference's."""
    ks = [next((k for k in (_kept(before[r], g, w, m), _kept(before[r], g, wb, m)) if k is not None), None)
          for _, r, g, w, wb in wrong]
    return ks[0] if None not in ks and np.ptp(ks) <= 1e-6 else None


def _another_rate(wrong, before: dict, m: float, momentum, ref_name: str, pair: bool = False, claimed=()) -> str:
    """The note accepting ``wrong`` (:func:`running_stats_finding`'s differing buffers) as a running average at the
    layer's own ``momentum`` (its attribute) in one convention or the other, at a rate the reference does not have
    (Keras's momentum=0.99 keeps 0.99; PyTorch's momentum=m keeps 1 - m: review36 F2); "" otherwise (a FAIL).

    A running average keeps at least half of its old value in every library's convention at its usual rates (PyTorch
    0.1 keeps 0.9, CS231n 0.9, Keras 0.99), so a share kept under one half is accepted only from a CS231n function
    pair (``pair``), whose ``bn_param`` momentum is the share kept by its API (CS231n's momentum=0.1 keeping 0.1:
    verify36 F5). A class keeping its own momentum=0.1 of the old value has PyTorch's momentum in CS231n's formula:
    the swapped momentum the reference's grader would take points for (newuser37 F6), a FAIL. A share of at least a
    half is accepted at the layer's own momentum in either convention, also when it equals the reference's momentum
    (a PyTorch class with momentum=0.1, keeping 0.9, against ``--reference-init '{"momentum": 0.9}'``): its update is
    the same as a CS231n class's with momentum=0.9, accepted alike (review37's ar_ref_m_ok: before, one FAILed as
    swapped and the other PASSed). ``claimed`` (:attr:`Roles.claimed`): the attribute holding the class's rate, or
    None when none does (verify45b F2: Keras's ``self.decay``, ``self.rho`` are read as ``momentum`` is; with none, the
    share its update keeps is its rate, in the kept-share convention, accepted from a half up)."""
    k = _one_share(wrong, before, m)
    if k is None or not 1e-6 < k < 1 - 1e-6 or momentum is None or np.ndim(momentum) != 0:  # (0-d: state_values)
        return ""  # (None: the layer's momentum unknown, a bn_param without it)
    momentum = float(momentum)
    if k < 0.5 and not (pair and abs(momentum - k) < 1e-6):
        return ""  # (keeping less than half: 0.99 in PyTorch's formula keeping 0.01, 0.1 in CS231n's keeping 0.1)
    conv = ("CS231n's and Keras's convention (momentum is the share kept)" if abs(momentum - k) < 1e-6 else
            "PyTorch's convention (momentum is the batch's share)" if abs(1 - momentum - k) < 1e-6 else "")
    name = "momentum" if not claimed else claimed[0]
    yours = (f"your {name}={momentum:g} in {conv}" if claimed is not None else
             f"a rate read from the update itself (no attribute of the layer holds it), {conv}")
    return conv and (
        f"running statistics: {', '.join(b for b, *_ in wrong)} are running averages keeping {k:.3g} of the old value, "
        f"{yours}; {ref_name} (momentum={m:g}) keeps {1 - m:g}: accepted as another "
        f"rate, the eval output compared given your statistics. To compare the rate too: add \"momentum\": "
        f"{1 - k:.3g} to --reference-init" + (
            f". It keeps less than half: if your {momentum:g} is PyTorch's momentum (the batch's share), your formula "
            f"is the other convention's (PyTorch's: running = (1 - momentum) * running + momentum * batch)"
            if k < 0.5 else ""))


def _kept(before: np.ndarray, got: np.ndarray, want: np.ndarray, m: float) -> float | None:
    """The share of the old value the layer's update kept, read from its statistic ``got`` and the reference's
    ``want`` (``(1 - m) * before + m * batch``), where the batch's statistic differs from ``before``; None when one
    share does not fit every entry (not a running average of this batch)."""
    batch = (want - (1 - m) * before) / m
    far = np.abs(before - batch) > 1e-3 * (1 + np.abs(batch))
    if not far.any():
        return None
    k = (got[far] - batch[far]) / (before[far] - batch[far])
    return float(np.median(k)) if np.ptp(k) <= 1e-6 * (1 + np.abs(k).max()) else None


def _fmt(a: np.ndarray) -> str:
    """A short print of a statistic: its first entries."""
    flat = np.asarray(a).ravel()
    return "[" + ", ".join(f"{v:.4g}" for v in flat[:3]) + (", ...]" if flat.size > 3 else "]")


# ------------------------------------------------------------- the one role finder (check's and the grader's)

#: A scalar attribute named like a running average's rate (PyTorch's and Keras's ``momentum``, TF 1's ``decay``,
#: ``rho``, an ``ema``/``avg`` factor): the rate the layer's own constructor claims (verify45b F2).
_RATE_NAME = re.compile(r"mom|decay|rho|ema|avg|average|smooth", re.I)


@dataclass
class Roles:
    """The running statistics :func:`find_roles` found in a layer: ``own`` ``{the layer's attribute: the reference's
    statistic}`` (``run_mu`` -> ``running_mean``), ``how`` ``{attribute: how it was found}`` (``"update"``: by what
    two training forwards did to it; ``"name"``: by its name alone, an array no training forward moved as a running
    average), ``rate`` the share of the old value every statistic found by its update kept (None when none was, or
    they kept different shares), ``claimed`` ``(attribute, value)`` the rate the layer's own scalar attribute claims
    (None: no such attribute; the rate is then read from the update itself), ``moved``: arrays of a statistic's
    shape that the training forwards moved and that are no running average (a cache, a counter: not compared);
    ``notes``: what the finder could not settle (several arrays fit one statistic; the layer could not be copied, so
    its statistics were not looked for by their update), said in check's output and the grade's feedback;
    ``irregular``: statistics of ``own`` found by name that the training forwards moved as no running average at one
    rate (every other call, a cumulative average: verify46a F5), never passed on one call's agreement."""

    own: dict[str, str] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)
    rate: float | None = None
    claimed: tuple[str, float] | None = None
    moved: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    irregular: list[str] = field(default_factory=list)

    def momentum(self) -> float | None:
        """The rate :func:`_another_rate` reads as the layer's momentum: the claimed attribute's value, else the
        share kept measured from the update (the kept-share convention), else None."""
        return self.claimed[1] if self.claimed else self.rate


def find_roles(layer: Any, reference: Any, cname: str, shape, seed: int) -> Roles:
    """The layer's running statistics, found as the reference's (``running_mean``, ``running_var``) by what the
    layer does, not by their names (staff45 F2: ``run_mu``/``run_sigma2`` never compared; verify45b F1: an extra
    array that moves is no statistic): on a copy of the layer, two training forwards on batches X1, X2; an array of a
    statistic's shape, not a parameter, whose values ``s0 -> s1 -> s2`` are ``s_k = r s_(k-1) + (1 - r) b_k`` for
    one ``r`` in (0, 1) over every feature and both calls, ``b_k`` batch k's statistic (the mean, or the variance,
    biased or unbiased) read from the reference's own update of it, is an exponential moving average of that
    statistic, kept at rate ``r``. A statistic no array so tracks is matched by name (the reference's name, or one of
    its role, :data:`_ROLES`): one no training forward moved (a running mean never updated) is compared so. One
    finder, called by ``gradcheck check`` and by the grader alike (:func:`running_stats_finding`), so their
    verdicts cannot disagree.

    Parameters
    ----------
    layer : layer or RemoteLayer
        The checked layer, with a training switch (copied: its state is left as it was).
    reference : manualprop layer
        A layer with running statistics as arrays (``running_*``, ``moving_*``) and ``momentum`` (PyTorch's).
    cname : str
        The layer's name, for the messages.
    shape : tuple of int
        The input's shape.
    seed : int
        The batches' seed.

    Returns
    -------
    Roles
    """
    stats = _stats_of(reference)
    state = stat_state(layer, stats)
    with warnings.catch_warnings():  # (float32 parameters: check warns of them once, where it checks them)
        warnings.simplefilter("ignore")
        params = set(V.layer_params(layer, cname))
        roles = Roles()
        fits = _ema_fits(layer, reference, stats, [k for k, v in state.items() if k not in params and np.ndim(v) >= 1
                                                   and any(_same_shape(v, a) for a in stats.values())],
                         cname, shape, seed, roles)
    rates = [(k, float(v)) for k, v in state.items() if np.ndim(v) == 0 and _RATE_NAME.search(k) and 0 < v < 1]
    for r in stats:
        fit = fits.get(r, [])
        pick = [k for k in fit if k not in roles.own and k in _counterparts_of(r, fit)] or [
            k for k in fit if k not in roles.own]
        if len(pick) > 1:
            pick = _one_of(layer, cname, shape, seed, pick, fits["rate"], rates, r, roles)
        if pick:
            roles.own[pick[0]], roles.how[pick[0]] = r, "update"
    shares = [fits["rate"][k] for k in roles.own]  # (all found by their update here)
    roles.rate = shares[0] if shares and np.ptp(shares) <= 1e-6 else None
    named = [k for k in state if k not in roles.own and k not in params and (re.match(r"(running|moving)_", k)
                                                                          or k in _ROLES)]
    for r, v in stats.items():  # a statistic no array tracks: by name (never updated, swapped at rate 0 ...)
        if r not in roles.own.values() and (s := _counterparts_of(r, named)) and _same_shape(state[s[0]], v):
            roles.own[s[0]], roles.how[s[0]] = r, "name"
            roles.irregular += [s[0]] if s[0] in roles.moved else []
            named.remove(s[0])
    roles.moved = [k for k in roles.moved if k not in roles.own]
    kept = [] if roles.rate is None else [(k, v) for k, v in rates if min(abs(v - roles.rate), abs(1 - v - roles.rate))
                                          < 1e-6]
    roles.claimed = (kept or rates or [None])[0]
    return roles


def found_by_update(layer: Any, cname: str, shape, seed: int) -> list[str]:
    """The layer's arrays :func:`find_roles` finds by their update (running statistics whatever their names: ``run_mu``)
    measured against a manualprop BatchNorm of the input's features (``BatchNorm1D`` for (N, D), ``BatchNorm2D`` for
    (N, C, H, W)), whose own update gives the batch's statistics: what a PASS without ``--reference`` says it did not
    check (before, a renamed statistic was not said at all); [] for another input, or when none is found."""
    import manualprop

    if len(shape) not in (2, 4) or not all(isinstance(n, int) for n in shape):
        return []
    ref = (manualprop.BatchNorm1D if len(shape) == 2 else manualprop.BatchNorm2D)(shape[1])
    try:
        roles = find_roles(layer, ref, cname, tuple(shape), seed)
    except Exception:  # noqa: BLE001 - a probe: nothing said, as before
        return []
    return [k for k, how in roles.how.items() if how == "update"]


def _ema_fits(layer: Any, reference: Any, stats: dict, cands: list[str], cname: str, shape, seed: int,
              roles: Roles) -> dict:
    """:func:`find_roles`'s measurement: ``{reference statistic: [the layer's arrays that are an exponential moving
    average of it]}`` and ``"rate"``: ``{array: the share kept}``; the arrays that moved otherwise join
    ``roles.moved``. {} when the layer cannot be copied or run so (then statistics are found by name alone)."""
    import copy

    if not cands:
        return {}
    try:
        probe, ref = _copied(layer), copy.deepcopy(reference)
        params = V.layer_params(probe, cname)
        inputs = V.input_names(probe, 1)
        rng = np.random.default_rng([seed, 46])
        xs = [rng.standard_normal(shape) * 1.5 + 0.5 for _ in range(3)]  # (3: an update every 3rd call moves)
        seen = [stat_state(probe, stats)]
        for X in xs:
            Call(probe, cname, [X], inputs, params, True).forward(X.copy())
            seen.append(stat_state(probe, stats))
        batch = [_batch_stats(ref, stats, X) for X in xs]
    except Exception as exc:  # noqa: BLE001 - a layer that cannot be copied or run twice: by name alone, said
        roles.notes.append(f"running statistics: not looked for by their update (two training forwards on a copy of "
                           f"{cname}): {type(exc).__name__}: {exc}; only arrays named as statistics were compared")
        return {}
    fits, rate = {}, {}
    for k in cands:
        s = [np.asarray(d.get(k), dtype=np.float64) for d in seen]
        if any(a.shape != s[0].shape for a in s) or all(np.array_equal(s[0], a) for a in s[1:]):
            continue
        for r, variants in batch[0].items():
            for i in range(len(variants)):
                share = _one_rate(s, [b[r][i] for b in batch]) if _same_shape(s[0], stats[r]) else None
                if share is not None:
                    fits.setdefault(r, []).append(k)
                    rate[k] = share
                    break
            if k in rate:
                break
        if k not in rate:
            roles.moved.append(k)
    return {**fits, "rate": rate}


def _copied(layer: Any) -> Any:
    """A copy of ``layer`` its forwards can run on (:func:`gradcheck._adapters.copied`; a sandbox's RemoteLayer: its
    clone, made so in the child), leaving ``layer`` as it was."""
    from ._adapters import copied

    return copied(layer)


def _one_of(layer: Any, cname: str, shape, seed: int, pick: list[str], share: dict, rates: list, r: str,
            roles: Roles) -> list[str]:
    """Of the arrays ``pick`` that all fit statistic ``r`` (two averages of the batch mean, verify46a F1), the one
    the eval forward reads (each changed on a copy of the layer: the one that moves its eval output), else those
    whose kept share ``share`` is the rate a rate attribute of the layer claims (``rates``), else all in order, the
    first compared and the others said in ``roles.notes``."""
    read = _eval_reads(layer, cname, shape, seed, pick)
    left = read or [k for k in pick if any(min(abs(v - share[k]), abs(1 - v - share[k])) < 1e-6 for _, v in rates)]
    left = left or pick
    if len(left) > 1:
        roles.notes.append(f"running statistics: {', '.join(left)} are each a running average of the batch's "
                           f"{'mean' if _ROLES.get(r) == 'running_mean' else 'variance'}"
                           f"{' read by the eval forward' if read else ''}: {left[0]} compared as {r}, "
                           f"{', '.join(left[1:])} not")
    return left


def _eval_reads(layer: Any, cname: str, shape, seed: int, cands: list[str]) -> list[str]:
    """The arrays of ``cands`` (the layer's attributes) the eval forward reads: on a copy of the layer each changed
    in turn, the eval output moves. [] when none can be told (no such attributes, a layer that cannot be copied or
    run in eval mode)."""
    try:
        X = np.random.default_rng([seed, 47]).standard_normal(shape) * 1.5 + 0.5
        params, inputs = V.layer_params(layer, cname), V.input_names(layer, 1)

        def out(k=None):
            probe = _copied(layer)
            if k is not None:
                _changed(probe, k)
            return np.asarray(Call(probe, cname, [X], inputs, params, False).forward(X.copy()), dtype=np.float64)
        base = out()
    except Exception:  # noqa: BLE001 - a probe: none told
        return []

    def reads(k):
        try:
            return not close(out(k), base, _RTOL, _ATOL)
        except Exception:  # noqa: BLE001 - one that cannot be changed: not told
            return False
    return [k for k in cands if reads(k)]


def _changed(probe: Any, k: str) -> None:
    """The array at ``k`` of the layer ``probe`` (an attribute ``a``, or a path of :func:`stat_state`:
    ``stats['running_mean']``, ``running[0]``) moved by a step away from its value, in place of it."""
    m = re.fullmatch(r"(\w+)\[(.+)\]", k)

    def step(v):
        return np.asarray(v) + 0.5 + 0.5 * np.abs(np.asarray(v))

    if m is None:  # (set in the sandbox's child for a sandboxed layer: verify47a F11)
        return adapter_call(probe, "set_weights", {k: step(adapter_call(probe, "stat_values")[k])})
    c, i = getattr(probe, m[1]), ast.literal_eval(m[2])
    new = list(c) if isinstance(c, tuple) else np.array(c, dtype=np.float64) if isinstance(c, np.ndarray) else c
    new[i] = step(new[i])
    setattr(probe, m[1], tuple(new) if isinstance(c, tuple) else new)


def _stats_of(reference: Any) -> dict[str, np.ndarray]:
    """The reference's running statistics: ``{name: array}`` of its ``running_*``, ``moving_*`` arrays."""
    return {r: v for r, v in vars(reference).items() if re.match(r"(running|moving)_", r) and isinstance(v, np.ndarray)}


def stat_state(layer: Any, stats: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The layer's state where its running statistics may be: its attributes and the arrays its dicts, lists and
    tuples hold (:func:`gradcheck._adapters.stat_values`, in the sandbox's child for a sandboxed layer), and the rows
    ``running[0]``, ``running[1]`` of an array stacking statistics of the reference's ``stats``' shapes (a (2, D)
    ``np.stack([mean, var])``): verify46a F3, a swapped momentum in ``self.stats = {'running_mean': ...}`` was never
    compared."""
    state = adapter_call(layer, "stat_values")
    for k, v in list(state.items()):
        if (np.ndim(v) >= 2 and 2 <= np.shape(v)[0] <= 4 and not any(_same_shape(v, a) for a in stats.values())
                and any(_same_shape(v[0], a) for a in stats.values())):
            state.update({f"{k}[{i}]": v[i] for i in range(np.shape(v)[0])})
        elif (np.ndim(v) == 2 and 2 <= np.shape(v)[1] <= 4 and not any(_same_shape(v, a) for a in stats.values())
              and any(_same_shape(v[:, 0], a) for a in stats.values())):  # (a (D, 2) column stack: verify47a F2)
            state.update({f"{k}[:, {i}]": v[:, i] for i in range(np.shape(v)[1])})
    return state


def _reshaped(v: Any, shape: tuple) -> Any:
    """``v`` in the reference's statistic's ``shape`` when it holds as many values, else as it is."""
    return np.reshape(v, shape) if np.size(v) == int(np.prod(shape)) else v


def _same_shape(v: Any, a: np.ndarray) -> bool:
    """Whether the layer's array ``v`` holds a statistic of the reference's shape ``a.shape`` up to singleton axes
    (CS231n's ``(1, D)``, PyTorch broadcasting's ``(1, C, 1, 1)``: verify46a F2)."""
    return [n for n in np.shape(v) if n != 1] == [n for n in a.shape if n != 1]


def _batch_stats(ref: Any, stats: dict, X: np.ndarray) -> dict[str, list[np.ndarray]]:
    """``{statistic: [the batch's value, ...]}`` of batch ``X``, read from the reference's own update (its
    statistics set to 0, one training forward: ``momentum * batch``): the mean; the variance unbiased (PyTorch's,
    the reference's) and biased (CS231n's, Keras's)."""
    m = ref.momentum
    for r, v in stats.items():
        setattr(ref, r, np.zeros_like(v))
    ref.forward(X.copy(), training=True)
    out = {}
    for r, v in stats.items():
        b = np.asarray(getattr(ref, r), dtype=np.float64) / m
        count = X.size / max(v.size, 1)
        out[r] = [b, b * (count - 1) / count] if _ROLES.get(r) == "running_var" and count > 1 else [b]
    return out


def _one_rate(s: list[np.ndarray], b: list[np.ndarray]) -> float | None:
    """The one share ``r`` in (0, 1) with ``s[k] = r s[k-1] + (1 - r) b[k-1]`` in every entry of both calls (an
    exponential moving average of ``b``), fitted by least squares over the entries and checked on each (to 1e-5 of
    its size: float32 statistics fit too); None when there is none (a cache: r = 0; a counter, an accumulator: no
    one r; never moved: r = 1)."""
    old, new, batch = (np.concatenate([a.ravel() for a in x]) for x in (s[:-1], s[1:], b))
    gap = old - batch
    if not np.all(np.isfinite(new)) or float(gap @ gap) <= 1e-12 * (1 + float(batch @ batch)):
        return None
    r = float((new - batch) @ gap / (gap @ gap))
    fits = np.abs(new - (r * old + (1 - r) * batch)) <= 1e-5 * (np.abs(new) + np.abs(old) + np.abs(batch) + 1e-12)
    return r if fits.all() and 1e-6 < r < 1 - 1e-6 else None
