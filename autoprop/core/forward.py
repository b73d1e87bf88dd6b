"""Forward mode: Jacobian-vector products, as ``tf.autodiff.ForwardAccumulator``.

While a :class:`ForwardAccumulator` is open, every primitive applied to a tensor that
has a tangent computes its output's tangent right away: ``t_out = sum_i J_i t_i``,
with ``J_i t_i`` given by the primitive's JVP rule ``jvp_i(t_i, ans, *args)`` stored in
the registry next to its VJPs (``lessons/00-chain-rule.md``).

Which rules: every primitive of the core registry has an explicit JVP, written
independently of its VJP, so that the dot-product identity
``<u, J^T v> = <v, J u>`` is a real check of both (``gradcheck`` uses it). A primitive
registered without a JVP (for example by a layer module) falls back to the
*transpose trick*: the VJP ``g -> J^T g`` is linear in ``g``, so differentiating
``<VJP(g), t>`` with respect to ``g`` gives ``J t``. That fallback is correct but no
independent check.

Nesting: the order of the ``with`` blocks decides, as in TensorFlow (``pywrap_tfe_src.cc``,
``TapeSetRecordForwardprop``: a tape or accumulator entered later does not see an
accumulator's tangent computations). An accumulator's tangent computations are recorded by
the tapes entered *before* it and seen by the accumulators entered before it; a tape or an
accumulator entered after it (inside its block) sees its primal operations only, and its
tangents are constants there. So reverse-over-forward (``with tape: with acc:``, then
``tape.gradient(acc.jvp(y), x)``) and forward-over-reverse (``with acc: with tape:``, then
``acc.jvp(tape.gradient(y, x))``) both give Hessian-vector products, while a tape inside an
accumulator keeps no tangent operation (``forwardprop_test.py``,
``testForwardOverBackwardMemoryEfficiency``).
"""

from __future__ import annotations

import warnings

import numpy as np

from . import complex as _complex
from . import tape as _tape
from . import views as _views
from .observe import TapeEscapeError, carries_value, kwargs_carry_value, partial_escape_text
from .tape import (
    _FORWARD,
    _RECORDING,
    TapeStateError,
    UnconnectedGradients,
    _flatten,
    _flatten_like,
    _next_nesting,
    _not_a_nest,
    _sync_extra,
    _unconnected,
)
from .tensor import Tensor, is_differentiable_dtype


class ForwardAccumulator:
    """Compute Jacobian-vector products with forward-mode autodiff.

    Parameters
    ----------
    primals : Tensor or nested structure of Tensors/Variables
        The tensors whose tangents are given.
    tangents : array_like or Tensor, nested like ``primals``
        One tangent per primal, of its shape (the direction ``u`` of ``J u``).

    Raises
    ------
    ValueError
        If the structures or a tangent's shape do not match the primals (dicts are
        paired by key, as ``tf.nest``), or if a primal is given twice (sum its tangents).
    TypeError
        If a primal is not a Tensor.

    Warns
    -----
    UserWarning
        For an integer or boolean primal: it is not differentiable and gets no tangent
        (``jvp`` gives None), as :meth:`GradientTape.watch` warns.

    Notes
    -----
    Operations inside the ``with`` block propagate tangents; :meth:`jvp` reads them.
    The tangent computations are recorded by the tapes entered before this accumulator,
    not by those entered inside its block (TensorFlow's rule, the module's docstring).
    Source: ``lessons/00-chain-rule.md`` (JVP and VJP).

    Examples
    --------
    >>> import autoprop as ap
    >>> x = ap.constant([1.0, 2.0])
    >>> with ap.ForwardAccumulator(x, [1.0, 0.0]) as acc:
    ...     y = x * x * x
    >>> acc.jvp(y).numpy()
    array([3., 0.])
    """

    _forward = True

    def __init__(self, primals, tangents):
        ps, _ = _flatten(primals)
        ts = _flatten_like(primals, tangents, "ForwardAccumulator")  # (dicts: by key)
        self._tangents: dict[int, tuple] = {}
        for p, t in zip(ps, ts):
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"ForwardAccumulator: primals must be Tensors or Variables; got "
                    f"{type(p).__name__}{_not_a_nest(p)}"
                )
            if id(p) in self._tangents:
                raise ValueError(
                    f"ForwardAccumulator: {_name(p)} is given as a primal more than once; "
                    "give it once, with the sum of its tangents (as "
                    "tf.autodiff.ForwardAccumulator, which refuses it too)"
                )
            if not is_differentiable_dtype(p.dtype):
                warnings.warn(  # as GradientTape.watch does
                    f"ForwardAccumulator: a primal of dtype {p.dtype} is not differentiable "
                    "and carries no tangent: jvp() of everything computed from it is None; "
                    "cast it to float first, e.g. ap.constant(x, dtype='float64').",
                    stacklevel=2,
                )
                continue
            if np.iscomplexobj(t._value if isinstance(t, Tensor) else t) and p.dtype.kind != "c":
                raise ValueError(
                    f"ForwardAccumulator: a complex tangent for a real primal of dtype {p.dtype}; "
                    "a real primal moves along real directions only (its imaginary part would "
                    "be dropped)"
                )
            tv = t if isinstance(t, Tensor) else Tensor(np.asarray(t, dtype=p.dtype))
            if tv.shape != p.shape:
                raise ValueError(
                    f"ForwardAccumulator: a tangent must have its primal's shape {p.shape}; "
                    f"got {tv.shape}"
                )
            self._tangents[id(p)] = (p, tv)
        self._recording = False
        # partial escapes (as GradientTape.gradient refuses them): the ops pushed so far, the
        # implicit escapes of tensors with a tangent (how, tensor, ops then, file:line), and per
        # output the last op on its tangent's way that read a constant able to hold such a value
        self._ops, self._escapes, self._reentry, self._escape_hints = 0, [], {}, {}
        _views.HOLDERS.add(self)  # (what it holds is no alias: views.held_elsewhere)

    def _holds(self, t, need):
        """The number of references to Tensor ``t`` this accumulator holds, as a primal or
        output (its entry) or as a tangent (``jvp`` hands it out): what
        :func:`autoprop.core.views.held_elsewhere` does not count as an alias."""
        entry = self._tangents.get(id(t))
        n = 0 if entry is None else (entry[0] is t) + (entry[1] is t)
        if n < need:
            n += sum(e[1] is t for e in self._tangents.values() if e is not entry)
        return n

    def __enter__(self):
        if _tape._TRACERS:  # (autoprop.function: not traced)
            _tape._TRACERS[-1].refuse("ForwardAccumulator")
        if self._recording:
            raise TapeStateError("ForwardAccumulator: already open (already recording: a nested "
                                 "`with` on the same accumulator)")
        self._recording = True
        self._nesting = _next_nesting()  # (entered after the tapes with a smaller one)
        self._warned_sites = None  # (observe: one TapeEscapeWarning per line per recording)
        _FORWARD.append(self)
        _sync_extra()
        return self

    def __exit__(self, *exc):
        self._recording = False
        if self in _FORWARD:
            _FORWARD.remove(self)
        _sync_extra()
        return False

    def _push(self, position, prim, args, vals, kwargs, out):
        """Called by ``tape.call`` for every primitive run while this accumulator is open
        (``out``: a tuple of Tensors for a primitive with several outputs, ``tape.call_multi``)."""
        if type(out) is tuple:
            return self._push_multi(position, prim, args, vals, kwargs, out)
        if prim.vjps is None or not is_differentiable_dtype(out._value.dtype):
            if prim.vjps is None and out._value.dtype.kind == "c":  # sign(z): no constant
                _complex.check_cut(prim, args, lambda a: id(a) in self._tangents)
            return
        tans = self._tangents
        which = [i for i, a in enumerate(args) if isinstance(a, Tensor) and id(a) in tans
                 and prim.vjps[i] is not None]
        if not which:
            return
        self._note_reentry(args, kwargs, which, (out,))
        _complex.check(prim, vals, out._value, "a forward-mode tangent through a complex value")
        saved = self._hide_inner(position)
        raw = not _RECORDING and position == 0  # nobody sees its work: plain numpy
        try:
            if raw:
                ins, ans = vals, out._value
            else:
                ins = [a if isinstance(a, Tensor) else v for a, v in zip(args, vals)]
                ans = out
            total = None
            for i in which:
                t = tans[id(args[i])][1]
                t = t._value if raw else t
                c = _jvp(prim, i, t, ans, ins, kwargs, raw)
                if raw and isinstance(c, Tensor):
                    c = c._value
                total = c if total is None else total + c
            shape = out._value.shape
            if np.shape(total) != shape:
                total = np.broadcast_to(total, shape)
            if raw:
                total = np.asarray(total)
                if total.dtype != out._value.dtype:
                    total = total.astype(out._value.dtype)
                total = Tensor._wrap(total)
        finally:
            _restore(saved)
        tans[id(out)] = (out, total)

    def _push_multi(self, position, prim, args, vals, kwargs, outs):
        """:meth:`_push` for a primitive with several outputs: its JVP returns a tangent per
        output (a tuple); the tangents of several tracked inputs add up output by output."""
        tans = self._tangents
        if not is_differentiable_dtype(outs[0]._value.dtype):
            return
        which = [i for i, a in enumerate(args) if isinstance(a, Tensor) and id(a) in tans
                 and prim.vjps[i] is not None]
        if not which:
            return
        self._note_reentry(args, kwargs, which, outs)
        for out in outs:  # (a complex output, or input, of a primitive without complex rules)
            _complex.check(prim, vals, out._value, "a forward-mode tangent through a complex value")
        saved = self._hide_inner(position)
        raw = not _RECORDING and position == 0
        try:
            ins = vals if raw else [a if isinstance(a, Tensor) else v for a, v in zip(args, vals)]
            ans = tuple(o._value for o in outs) if raw else outs
            total = None
            for i in which:
                t = tans[id(args[i])][1]
                c = prim.jvps[i](t._value if raw else t, ans, *ins, **kwargs)
                total = list(c) if total is None else [a + b for a, b in zip(total, c)]
        finally:
            _restore(saved)
        for out, tangent in zip(outs, total):
            if raw:
                tangent = Tensor._wrap(np.asarray(tangent, dtype=out._value.dtype))
            tans[id(out)] = (out, tangent)

    def _hide_inner(self, position):
        """Hide from the tangent computation about to run what was entered after this
        accumulator: itself and the accumulators from ``position`` on in ``_FORWARD``, and
        every tape entered later (a larger ``_nesting``), as TensorFlow's
        ``TapeSetRecordForwardprop`` records an accumulator's JVPs only on the tapes with a
        smaller nesting id. Returns what :func:`_restore` puts back."""
        saved = (_FORWARD[:], None)
        del _FORWARD[position:]
        if _RECORDING and any(t._nesting > self._nesting for t in _RECORDING):
            saved = (saved[0], _RECORDING[:])
            _RECORDING[:] = [t for t in _RECORDING if t._nesting < self._nesting]
        _sync_extra()
        return saved

    def _note_reentry(self, args, kwargs, which, outs):
        """Count the op and carry to its outputs the last op on their tangents' way that read a
        constant able to hold a value that left (``observe.carries_value``, a keyword argument
        too: ``observe.kwargs_carry_value``): what :meth:`jvp` compares the escapes' times with,
        as ``diagnose.refuse_partial_escape`` does for a tape."""
        i, self._ops = self._ops, self._ops + 1
        last = max(self._reentry.get(id(args[j]), -1) for j in which)
        if any(carries_value(a) for j, a in enumerate(args) if j not in which) or kwargs_carry_value(kwargs):
            last = i
        if last >= 0:
            for out in outs:
                self._reentry[id(out)] = last

    def _refuse_partial_escape(self, p):
        """Raise TapeEscapeError when a value with a tangent left implicitly before an op on
        ``p``'s tangent's way read a constant that could hold it: the JVP would miss that path."""
        last = self._reentry.get(id(p), -1)
        fed = [e for e in self._escapes if e[2] <= last]
        if fed:
            raise TapeEscapeError(partial_escape_text("ForwardAccumulator.jvp", fed, ["the primals"],
                                                      self._escape_hints))

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangent (Jacobian-vector product) of each computed tensor.

        Parameters
        ----------
        primals : Tensor or nested structure of Tensors
            Tensors computed inside the block (or the primals themselves).
        unconnected_gradients : {"none", "zero"} or UnconnectedGradients
            What a tensor with no tangent gets: None or zeros of its shape.

        Returns
        -------
        Tensor or None per primal, in the same structure; each of its primal's shape.
        """
        mode = _unconnected(unconnected_gradients)
        flat, rebuild = _flatten(primals)
        out = []
        for p in flat:
            entry = self._tangents.get(id(p)) if isinstance(p, Tensor) else None
            if entry is None or entry[0] is not p:
                if self._escapes:  # a value with a tangent left implicitly: this constant may be made of it (fn41:
                    # H = np.zeros(...); H[t] = np.tanh(...); the JVP of np.sum(H) was None, zeros with 'zero')
                    raise TapeEscapeError(partial_escape_text("ForwardAccumulator.jvp", self._escapes, ["the primals"],
                                                              self._escape_hints))
                out.append(Tensor._wrap(np.zeros(np.shape(p), getattr(p, "dtype", float)))
                           if mode == "zero" else None)
            else:
                if self._escapes:
                    self._refuse_partial_escape(p)
                out.append(entry[1])
        return rebuild(out)


def _restore(saved):
    """Undo :meth:`ForwardAccumulator._hide_inner`."""
    _FORWARD[:] = saved[0]
    if saved[1] is not None:
        _RECORDING[:] = saved[1]
    _sync_extra()


def _name(p):
    """How an error names a primal: a Variable by its name, else by shape and dtype."""
    name = getattr(p, "name", None)
    kind = f"Variable {name!r}" if isinstance(name, str) else "a Tensor"
    return f"{kind} (shape {p.shape}, dtype {p.dtype})"


def _jvp(prim, i, t, ans, ins, kwargs, raw):
    rule = None
    if prim.jvps is not None:
        try:
            rule = prim.jvps[i]
        except IndexError:
            rule = None
    if rule is not None:
        return rule(t, ans, *ins, **kwargs)
    return jvp_by_transpose(prim, i, t, ans, ins, kwargs, raw)


def jvp_by_transpose(prim, i, t, ans, ins, kwargs, raw=True):
    """``J_i t`` from the VJP alone: ``d/dg <VJP_i(g), t>`` (the VJP is linear in ``g``).

    Parameters
    ----------
    prim : Primitive
    i : int
        The argument whose tangent ``t`` is given.
    t : ndarray or Tensor
        Of argument ``i``'s shape.
    ans, ins, kwargs
        The primitive's output and inputs (values or Tensors) and keyword arguments.
    raw : bool
        Return an ndarray (True) or a Tensor.

    Returns
    -------
    ndarray or Tensor of the output's shape.
    """
    ans_t = ans if isinstance(ans, Tensor) else Tensor._wrap(np.asarray(ans))
    ins_t = [a if isinstance(a, Tensor) or not isinstance(a, np.ndarray) else Tensor._wrap(a)
             for a in ins]
    g0 = Tensor._wrap(np.zeros(ans_t.shape, ans_t.dtype))
    with _tape.GradientTape() as tp:
        tp.watch(g0)
        h = prim.vjps[i](g0, ans_t, *ins_t, **kwargs)
    h = h if isinstance(h, Tensor) else Tensor._wrap(np.asarray(h))
    # (in the records' own convention: no conjugate at the public boundary, complex.public)
    r = tp._gradient(h, [g0], t, "zero")[0]
    return r._value if raw else r
