"""numpy's views and aliases, on tensors that are never written.

numpy's ``row = b[0]`` (and ``b.T``, ``b.reshape(...)``, ``np.fliplr(b)``, ...) is a view: ``row *= 3``
writes through into ``b``, and ``b *= 2`` changes ``row``. An alias is the same hazard with the
same memory: after ``b = a`` (or ``hist.append(a)``, ``cache["a"] = a``, or a function given ``a``
as its argument ``z``), numpy's ``a *= 3`` changes what ``b`` (``hist[0]``, the caller's ``a``)
holds. An autoprop Tensor is never written (``t *= 3`` binds ``t`` to a new tensor, as
TensorFlow's), so the same code would give other values. Instead of a silently different number,
the augmented operators are refused on a view, on a tensor that has one, and on a tensor that
something else holds (:meth:`autoprop.Tensor._augmented`, one rule). This module marks views (the
tape marks a primitive's result that shares its input's memory; numpy's dispatch,
``prims/dispatch.py``, the result of a numpy function that gives a view) and counts the other
holders of a tensor (:func:`held_elsewhere`). Source: ``lessons/10-gradient-tape.md`` §7.
"""

from __future__ import annotations

import builtins
import gc
import re
import sys
import weakref

import numpy as np

__all__ = ["mark_view", "alone", "numpy_layout", "not_a_view", "held_elsewhere", "calibrate", "HOLDERS",
           "VIEW_FUNCTIONS"]

#: numpy functions whose result is a view of their input (or the input itself): their tensors are
#: marked as views whatever autoprop computed (a gather, or the input tensor itself).
VIEW_FUNCTIONS = frozenset(f for f in (getattr(np, n, None) for n in (
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims",
    "atleast_1d", "atleast_2d", "atleast_3d", "flip", "fliplr", "flipud", "rot90", "real", "imag",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "diagonal", "broadcast_to",
    "matrix_transpose", "permute_dims", "unstack")) if f is not None) | {
    np.lib.stride_tricks.sliding_window_view}  # (read-only in numpy; refused here as every view)


class _Family:
    """What a tensor and the views of its values hold in common (``_family``): its references count the live
    tensors that share the memory (:func:`alone`)."""

    __slots__ = ()


def mark_view(out, base, made_by):
    """Mark Tensor ``out`` as a view of Tensor ``base``'s values (``made_by``: what made it), of ``base``'s family."""
    out._view = (made_by, base._value.shape)  # the words are made only if an error needs them
    base._views = made_by
    family = getattr(base, "_family", None)
    if family is None:
        family = base._family = _Family()
    out._family = family


def alone(t):
    """Whether no other live tensor shares Tensor ``t``'s memory: the base ``t`` is a view of and every other view
    of that base are gone (a temporary: ``np.var(x, axis=1).reshape(-1, 1)``), so numpy's ``t += v``, which writes
    through into them, is seen by no one and rebinding ``t`` gives numpy's values (corpus39 H4). False for a tensor
    never marked (no family). The family's references are compared with a new object's, held by a name alone, in
    this frame: one more is ``t``'s."""
    family = getattr(t, "_family", None)
    if family is None:
        return False
    probe = _Family()
    return sys.getrefcount(family) <= sys.getrefcount(probe) + 1


def numpy_layout(out, view):
    """Give Tensor ``out`` numpy's own ``view`` (equal values: numpy's function on its input's value) as
    its value, read-only, and return ``out``.

    For the numpy functions whose result is a view with strides of its own (``np.fliplr``,
    ``np.rot90``, ``np.diagonal``, ``sliding_window_view``, ``as_strided``, ``atleast_*d``), autoprop
    records a gather, whose value is a C-order copy. One rule (review36 F1): a Tensor's value has the
    layout numpy's result has, so ``t.strides`` and ``np.lib.stride_tricks.as_strided``'s reads
    (:func:`autoprop.core.prims.extra.as_strided`) are numpy's; the gather stays what the tape records.

    Parameters
    ----------
    out : Tensor
        The recorded result (its value equal to ``view``'s).
    view : numpy.ndarray
        numpy's result of the same call on the input's value.
    """
    view = view.view()  # (its own flags: numpy's views of a writeable value stay writeable elsewhere)
    view.flags.writeable = False
    out._value = view
    return out


def layout_as(out, like):
    """Give Tensor ``out`` the memory layout of the ndarray ``like`` (numpy's result of the same call,
    or an ``np.empty_like`` that has it), keeping ``out``'s own values, and return ``out``.

    The rule of :func:`numpy_layout` for results that are new arrays: numpy's ``np.sort``,
    ``np.roll``, ``np.copy(order='F')``, ``astype(order=...)`` of an F-ordered value are F-ordered, and
    ``ravel``/``flatten``/``reshape`` with ``order='K'`` or ``'A'`` read that layout, so a gather's C-order
    copy would give other values than numpy's (tape44 H1). Only the layout changes: the values are the
    recorded ones, element for element.

    Parameters
    ----------
    out : Tensor
        The recorded result.
    like : numpy.ndarray
        An array of ``out``'s shape in numpy's layout (its values are not read).
    """
    v = out._value
    if np.shape(like) != np.shape(v) or (like.flags.c_contiguous and v.flags.c_contiguous):
        return out
    new = np.empty_like(like, dtype=v.dtype)  # (order='K': like's order of axes in memory)
    new[...] = v
    return numpy_layout(out, new)


def layout_if_strided(out, value, numpy_result):
    """:func:`layout_as` ``numpy_result()`` (numpy's result of the same call on ``value``, computed only
    then) when the input ``value`` is not C-contiguous: numpy's gathers of a C-ordered value are C-ordered."""
    if isinstance(value, np.ndarray) and not value.flags.c_contiguous:
        layout_as(out, numpy_result())
    return out


def not_a_view(a, make):
    """``make()``, a recorded reshape of ``a`` that numpy gives as a new array (``copy``,
    ``flatten``): neither it nor ``a`` is marked, whatever memory they share."""
    before = getattr(a, "_views", None)
    t = make()
    t._view, t._family, a._views = None, None, before
    return t


#: autoprop's own holders of tensors, weakly: every GradientTape (its nodes, watched tensors and
#: breadcrumbs) and ForwardAccumulator (its tangents). Each has ``_holds(t, need)``, the number of
#: references to ``t`` it holds (it may stop counting at ``need``); :func:`held_elsewhere` does
#: not count them as holders, as the tape saving a tensor is no alias the student wrote.
HOLDERS = weakref.WeakSet()
#: ``sys.getrefcount(t)`` inside :func:`held_elsewhere` for a tensor one name holds, reached from
#: ``t *= 1`` through ``Tensor.__imul__`` and ``Tensor._augmented`` (the caller's slot, the
#: interpreter's stack, each frame's ``self``, getrefcount's argument: the number differs between
#: CPython versions, so it is measured at import by :func:`calibrate`); ``_SELF``: what ``t *= t``
#: adds to it (the right operand on the stack and as ``other``).
_BASE = _SELF = None


class _Count(Exception):
    """Raised by :func:`held_elsewhere` while :func:`calibrate` measures (``n``: the count)."""

    def __init__(self, n):
        super().__init__(n)
        self.n = n


def held_elsewhere(t, other):
    """How many references to Tensor ``t`` exist besides the one name an augmented operator
    (``t *= other``) rebinds, autoprop's own (:data:`HOLDERS`) and those no code of the student's
    holds (:func:`_unseen`: a frame's ``f_locals`` snapshot, the finished frames of an error's
    traceback, IPython's output history ``Out[n]`` and ``_``): another name, a list, a dict, an
    attribute, a caller's variable. Called only by ``Tensor._augmented``, at the depth
    :func:`calibrate` measured.

    Parameters
    ----------
    t : Tensor
        The left operand, of any shape (``Tensor._augmented`` skips 0-d ones).
    other : object
        The right operand (``t *= t`` holds ``t`` twice more).

    Returns
    -------
    int
        0 when nothing else holds ``t``; otherwise a positive count.
    """
    n = sys.getrefcount(t)
    if _BASE is None:
        raise _Count(n)
    base = _BASE + (_SELF if other is t else 0)
    n, held = n - base, 0
    if n > 0:
        for holder in list(HOLDERS):
            held += holder._holds(t, n - held)
            if n - held <= 0:
                return 0
    if n - held > 0:  # (each holder counted all it holds: it stopped short of the need)
        unseen = _unseen(t)
        if unseen:  # (counted again: reading a frame's f_locals may have made its snapshot)
            n = sys.getrefcount(t) - base - unseen
        if n - held > 0:
            n -= _loop_holds(t)
    return max(n - held, 0)


#: CPython before 3.13 keeps a function frame's ``f_locals`` as a dict snapshot on the frame once anything asked
#: for it (``locals()``, ``vars()``, a debugger: pdb, debugpy and PyCharm read ``frame.f_locals`` where they stop), a
#: reference to each local's value for the rest of the call (PEP 667, which ends this in 3.13, describes it).
_SNAPSHOTS = sys.version_info < (3, 13)
_OPTIMIZED = 0x1  # inspect.CO_OPTIMIZED: a function's frame, whose f_locals is a snapshot (a module's is its globals)


def _unseen(t):
    """The references to ``t`` that no code the student wrote holds (review23), which :func:`held_elsewhere` does not
    count: the ``f_locals`` snapshots of the function frames on the stack (CPython < 3.13: ``breakpoint()`` or
    ``locals()`` then ``t *= 2`` in the same function was refused), and the locals of the finished frames of an
    exception's traceback, kept for a post-mortem debugger (``sys.last_traceback``: in IPython and Jupyter a cell's
    error inside ``f(t)`` kept ``f``'s frame, ``X = t``, and every later ``t *= 2`` was refused; the exception being
    handled, ``except: t *= 2``), and an interactive interpreter's output history (:func:`_output_history_holds`:
IPython's ``Out[n]`` and ``_``). A traceback frame's plain local counts its slot and its snapshot; one in a cell
    (a closure's) only its snapshot, as the cell may be a closure's that reads it. Each snapshot is brought up to date
    first (``frame.f_locals`` does it), so that it holds exactly the locals' values now."""
    n, live, frame = 0, set(), sys._getframe(1)
    while frame is not None:  # (from held_elsewhere's frame, whose snapshot a debugger may have made too)
        live.add(frame)
        if _SNAPSHOTS and frame.f_code.co_flags & _OPTIMIZED:
            n += _snapshot_holds(frame, t)
        frame = frame.f_back
    return n + _finished_holds(t, _traceback_frames(live)) + _output_history_holds(t)


def _snapshot_base():
    return sys.getrefcount(sys._getframe().f_locals)


#: ``sys.getrefcount(frame.f_locals)`` of a snapshot that nothing but its frame holds (measured, as :data:`_ONE`)
_SNAPSHOT_BASE = _snapshot_base()


def _snapshot_holds(frame, t):
    """The references to ``t`` in the ``f_locals`` snapshot of ``frame``, a live function frame, when nothing but the
    frame and debuggers holds that dict, else 0 (review24a): on CPython < 3.13 ``saved = locals()`` is that very dict,
    which the program reads (``saved["h"]``: numpy's is the array ``h *= 3`` changed), so then its entries are
    holders. (The dict is never named here: a tracer, as the tests' and pdb's, would keep it in this frame's own
    snapshot.)"""
    extra = sys.getrefcount(frame.f_locals) - _SNAPSHOT_BASE
    if extra > 0 and _debugger_holds(frame) < extra:
        return 0
    return sum(v is t for v in frame.f_locals.values())


def _debugger_holds(frame):
    """How many ``bdb`` debuggers (pdb, ipdb) keep the ``f_locals`` snapshot of ``frame`` as their
    ``curframe_locals`` (the frame where they stopped; kept after ``c`` too): those references are no program's."""
    bdb = sys.modules.get("bdb")
    if bdb is None:
        return 0
    try:
        return sum(1 for r in gc.get_referrers(frame.f_locals)  # (the debugger, or its __dict__ once made)
                   if (isinstance(r, bdb.Bdb) and getattr(r, "curframe_locals", None) is frame.f_locals)
                   or (type(r) is dict and r.get("curframe_locals") is frame.f_locals
                       and any(isinstance(o, bdb.Bdb) and getattr(o, "__dict__", None) is r for o in gc.get_referrers(r))))
    except PermissionError:  # a sandbox that refuses gc's inspection (gradcheck's): a holder
        return 0


_ITERATORS = {type(iter([])): list, type(iter(())): tuple}
_CACHING = (enumerate, zip)  # each keeps its last result tuple, to refill in place once nothing else holds it


def _loop_holds(t):
    """The references to ``t`` that a ``for`` loop's temporaries hold and no code can read again (fixr23, review23
    LOW: ``for t in [a(), b()]: t *= 2`` was refused, the temporary list holding ``t``; numpy would change that
    slot too, but nothing can read it). Counted: the slots that the list's (tuple's) iterator has passed, in a list
    or tuple whose one reference is that iterator (an iterator reads forward only, so whoever holds it, the loop's
    value stack, ``enumerate`` or ``zip``, never reads a passed slot again); and the last result tuple that an
    ``enumerate`` or ``zip`` keeps, to refill before it hands it out again. A slot the iterator has yet to reach
    counts, as the loop will read it (``for t in [a()] * 2``: numpy's second pass sees the first's change); a list
    a name keeps (``ts = [a(), b()]; for t in ts``) has two references, and a name in the list (``for t in [u,
    v]``) is a holder itself, so both are still refused. Found by the garbage collector's referrers (two scans of
    every tracked object, tens of milliseconds in a large program), so only once every other count has failed."""
    try:
        found = gc.get_referrers(t)
    except PermissionError:  # a sandbox that refuses gc's inspection (gradcheck's): nothing exempted
        return 0
    n, maybe = 0, [c for c, k in zip(found, _refcounts(found)) if k == _ONE and type(c) in (list, tuple)]
    for h in gc.get_referrers(*maybe) if maybe else ():
        if type(h) in _CACHING:  # (one of maybe held only by an enumerate or zip: its result tuple)
            n += sum(v is t for c in maybe if type(c) is tuple and any(c is r for r in gc.get_referents(h))
                     for v in c)
        elif type(h) in _ITERATORS:
            state = h.__reduce__()  # (iter, (c,), index): index is the next slot the loop reads
            c = state[1][0] if len(state) == 3 else None
            if type(c) is _ITERATORS[type(h)] and any(c is m for m in maybe):
                n += sum(v is t for v in c[:state[2]])
            del state, c
    return n


def _refcounts(objs):
    """``sys.getrefcount`` of each of ``objs`` (a list), seen from here: :data:`_ONE` is its count for an object
    that one reference besides ``objs``'s holds."""
    return [sys.getrefcount(c) for c in objs]


#: measured, not assumed (CPython 3.14's borrowed references give lower counts): a list held by ``objs`` only, + 1
_ONE = _refcounts([[]])[0] + 1


#: the names under which IPython's displayhook keeps a cell's displayed value (``_``, ``__``, ``___``, ``_<n>``)
_OUT_NAME = re.compile(r"_{1,3}|_[0-9]+")


def _output_history_holds(t):
    """The references to ``t`` that an interactive interpreter's output history holds (fixr23): IPython and Jupyter
    keep a cell's displayed value (its last line) in ``Out[n]`` (``_oh``), in the names ``_n``, ``_``, ``__`` and
    ``___`` (in the user's namespace and its hidden twin, as ``InteractiveShell.push(..., interactive=False)`` puts
    them), on the displayhook (``_``, ``__``, ``___``) and on the last ``ExecutionResult`` (``.result``); the plain
    ``python`` REPL in ``builtins._``. That is history, not program state: displaying ``t`` and then ``t += 1`` in a
    later cell was refused. Only the entries that IPython itself put there count: ``b = t`` in a cell, and a name
    ``_`` the user assigned (which IPython's hidden namespace does not hold), are still aliases. Source:
    ``IPython/core/displayhook.py`` (``DisplayHook.update_user_ns``)."""
    n = builtins.__dict__.get("_") is t  # (the python REPL's sys.displayhook; IPython leaves builtins._ alone)
    getipython = sys.modules.get("IPython.core.getipython")
    shell = getipython.get_ipython() if getipython is not None else None
    if shell is None:
        return n
    hook, ns, hidden = getattr(shell, "displayhook", None), shell.user_ns, getattr(shell, "user_ns_hidden", {})
    n += sum(getattr(hook, u, None) is t for u in ("_", "__", "___"))
    for name, v in list(hidden.items()):  # (IPython's own entries: a name the user rebinds leaves this one)
        if v is t and type(name) is str and _OUT_NAME.fullmatch(name):
            n += 1 + (ns.get(name) is t)
    out = hidden.get("_oh")
    if type(out) is dict:
        n += sum(v is t for v in list(out.values()))
    results = {id(r): r for r in (getattr(shell, "last_execution_result", None), getattr(hook, "exec_result", None))}
    return n + sum(getattr(r, "result", None) is t for r in results.values() if r is not None)


_CONTAINERS = (tuple, list, dict)


def _finished_holds(t, frames):
    """The references to ``t`` the finished ``frames`` hold: each plain local bound to it (its slot, and its snapshot
    on CPython < 3.13), each local in a cell (a closure's, which may read it: its snapshot alone), and each entry of
    a tuple, list or dict (at any depth) that nothing but those frames and such containers holds, as its reference
    count tells (``*args``, shared by the frames of numpy's dispatch, ``[t, u]`` given to ``np.concatenate``)."""
    n, held = 0, {}  # id -> [container, references from the frames and the containers found free]

    def note(v, k):
        if v is t:
            return k
        if type(v) in _CONTAINERS and len(v) <= 1000:
            held.setdefault(id(v), [v, 0])[1] += k
        return 0

    for frame in frames:
        code, local = frame.f_code, frame.f_locals
        cells = set(code.co_cellvars) | set(code.co_freevars)
        for name in list(local):
            plain = name in code.co_varnames and name not in cells
            n += note(local[name], _SNAPSHOTS + plain if plain else _SNAPSHOTS)
    free, more = set(), True
    while more:  # a container whose every reference is one counted is free; then its entries are counted
        more = False
        for key, entry in list(held.items()):
            if key not in free and sys.getrefcount(entry[0]) - 2 == entry[1]:  # (entry's slot, the argument)
                free.add(key)
                more = True
                n += sum(note(v, 1) for v in list(entry[0].values() if type(entry[0]) is dict else entry[0]))
    return n


def _traceback_frames(live, limit=200):
    """The finished function frames (not in ``live``, the stack's) of the tracebacks of the last uncaught exception
    (``sys.last_exc``, ``sys.last_value``, ``sys.last_traceback``) and of the one being handled, with their causes and
    contexts, each frame once (at most ``limit``)."""
    excs = [getattr(sys, "last_exc", None), getattr(sys, "last_value", None), sys.exc_info()[1]]
    tbs, seen_exc = [getattr(sys, "last_traceback", None)], set()
    while excs and len(seen_exc) < limit:
        e = excs.pop()
        if isinstance(e, BaseException) and id(e) not in seen_exc:
            seen_exc.add(id(e))
            tbs.append(e.__traceback__)
            excs += [e.__cause__, e.__context__]
    out, seen = [], set()
    for tb in tbs:
        while tb is not None and len(out) < limit:
            f = tb.tb_frame
            if f not in live and id(f) not in seen and f.f_code.co_flags & _OPTIMIZED:
                seen.add(id(f))
                out.append(f)
            tb = tb.tb_next
    return out


def calibrate(make):
    """Measure :data:`_BASE` and :data:`_SELF` once, at import, with probes in which exactly one
    name holds a fresh tensor ``make()`` and does ``t *= 1`` (``t *= t``), so that the count holds
    on any CPython version (tensor.py calls it once ``Tensor`` exists).

    A local name (``LOAD_FAST``) and a module-level one (``LOAD_NAME``, a script, a notebook cell)
    are measured both; should a CPython load one without a reference (a borrowed stack slot), the
    larger count is kept: no unaliased ``t *= 1`` is ever refused, at the cost of missing a local
    alias on that version (tests/test_autoprop_aliases.py checks they agree here).

    Returns
    -------
    tuple of int
        The counts (local, module-level, local ``t *= t``).
    """
    global _BASE, _SELF

    def count(code, ns):
        try:
            exec(code, ns)  # noqa: S102 - our own probe text
        except _Count as c:
            return c.n
        raise RuntimeError("autoprop: the alias probe did not reach views.held_elsewhere")

    before, _BASE = (_BASE, _SELF), None  # None: held_elsewhere raises the count it sees
    try:
        local = count("def f(make):\n    t = make()\n    t *= 1\nf(make)", {"make": make})
        module = count("t *= 1", {"t": make()})
        both = count("def f(make):\n    t = make()\n    t *= t\nf(make)", {"make": make})
    except BaseException:
        _BASE, _SELF = before
        raise
    _BASE, _SELF = max(local, module), both - local
    return local, module, both
