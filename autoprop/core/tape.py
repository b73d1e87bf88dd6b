"""The gradient tape: record primitives during the forward pass, walk them in reverse.

How it works (derived in ``lessons/05-gradient-tape.md``):

* While a tape's ``with`` block is open, every primitive applied to a tensor that the
  tape *tracks* (watched, or computed from a watched tensor) appends a :class:`Node`
  (primitive, inputs, the input values, output) to the tape and tracks the output.
* ``gradient(target, sources)`` seeds ``dL/dtarget`` (ones, or ``output_gradients``),
  then walks the nodes in reverse order; each node hands its output's gradient to the
  primitive's vector-Jacobian product (VJP) for every tracked input and accumulates
  the result. The walk is a loop over a list, never recursion.
* If another tape is recording while ``gradient`` runs (nested tapes), the VJPs are
  computed on Tensors, so the outer tape records the backward pass and can
  differentiate it again. Otherwise they run on plain numpy arrays and record nothing.
"""

from __future__ import annotations

import warnings

import numpy as np

from .tensor import Tensor, Variable, is_differentiable_dtype

#: Tapes whose ``with`` block is open and that are recording, innermost last.
_RECORDING: list = []


class Node:
    """One recorded primitive application.

    Attributes
    ----------
    prim : Primitive
        The registry entry (forward, VJP per argument).
    args : tuple
        The arguments as given (Tensors and constants).
    vals : list
        The raw values the forward saw (ndarrays / Python scalars); VJPs read these.
    kwargs : dict
        Non-differentiable keyword arguments (axis, shape, ...).
    out : Tensor
        The result.
    parents : tuple of int
        Positions in ``args`` of the inputs the tape tracks (the ones that get a VJP).
    """

    __slots__ = ("prim", "args", "vals", "kwargs", "out", "parents")

    def __init__(self, prim, args, vals, kwargs, out, parents):
        self.prim = prim
        self.args = args
        self.vals = vals
        self.kwargs = kwargs
        self.out = out
        self.parents = parents


def apply(prim, args, kwargs):
    """Run primitive ``prim`` on ``args`` and record it on every tape that tracks an input.

    Parameters
    ----------
    prim : Primitive
    args : tuple
        Tensors, numpy arrays or Python scalars.
    kwargs : dict
        Passed to the forward function unchanged.

    Returns
    -------
    Tensor
    """
    vals = [a._value if isinstance(a, Tensor) else a for a in args]
    out = Tensor._wrap(prim.fwd(*vals, **kwargs))
    if _RECORDING and prim.vjps is not None:
        _record(prim, args, vals, kwargs, out)
    return out


def _record(prim, args, vals, kwargs, out):
    if not is_differentiable_dtype(out._value.dtype):
        return
    copied = False
    vjps = prim.vjps
    for tape in _RECORDING:
        tracked = tape._tracked
        parents = []
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and vjps[i] is not None:
                if id(a) in tracked:
                    parents.append(i)
                elif (
                    tape._watch_accessed
                    and type(a) is Variable
                    and a.trainable
                    and a._value.dtype.kind in "fc"
                ):
                    tracked[id(a)] = a
                    tape._accessed.append(a)
                    parents.append(i)
        if parents:
            if not copied:
                # A plain ndarray argument may be changed in place by the caller after
                # the forward pass; the VJP must see the value the forward saw.
                for i, v in enumerate(vals):
                    if type(v) is np.ndarray and not isinstance(args[i], Tensor):
                        vals[i] = v.copy()
                copied = True
            tape._nodes.append(Node(prim, args, vals, kwargs, out, tuple(parents)))
            tracked[id(out)] = out


class GradientTape:
    """Record operations for reverse-mode automatic differentiation, as ``tf.GradientTape``.

    Parameters
    ----------
    persistent : bool, default False
        A non-persistent tape allows one call to :meth:`gradient`; a persistent one
        allows many and keeps its records until it is deleted or :meth:`reset`.
    watch_accessed_variables : bool, default True
        Watch every trainable float :class:`Variable` that an operation reads while
        the tape is recording.

    Examples
    --------
    >>> import autoprop as ap
    >>> x = ap.Variable(3.0)
    >>> with ap.GradientTape() as tape:
    ...     y = x**3 + x**2 + x + 5
    >>> float(tape.gradient(y, x))
    34.0
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._nodes: list[Node] = []
        self._tracked: dict[int, Tensor] = {}
        self._accessed: list[Variable] = []
        self._watched: list[Tensor] = []
        self._recording = False
        self._used = False

    # --- context manager -----------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise RuntimeError("GradientTape: this tape is already recording (nested `with` on the same tape)")
        self._recording = True
        _RECORDING.append(self)
        return self

    def __exit__(self, *exc):
        self._stop()
        return False

    def _stop(self):
        if self._recording:
            self._recording = False
            _RECORDING.remove(self)

    # --- watching ------------------------------------------------------------
    def watch(self, tensor):
        """Track ``tensor`` (or every tensor in a nested list/tuple/dict of them).

        Integer and boolean tensors are not differentiable: watching one warns and has
        no effect, as in TensorFlow.

        Raises
        ------
        TypeError
            If an element is not a Tensor (wrap numpy arrays with ``ap.constant``).
        """
        for t in _flatten(tensor)[0]:
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"GradientTape.watch: expected an autoprop Tensor or Variable, got "
                    f"{type(t).__name__}. Wrap arrays first: x = ap.constant(array)."
                )
            if not is_differentiable_dtype(t.dtype):
                warnings.warn(
                    f"GradientTape.watch: a tensor of dtype {t.dtype} is not differentiable "
                    "and will get no gradient (None); cast it to float first, e.g. "
                    "ap.constant(x, dtype='float64').",
                    stacklevel=2,
                )
                continue
            if id(t) not in self._tracked:
                self._tracked[id(t)] = t
                self._watched.append(t)

    def watched_variables(self):
        """Return the Variables this tape watched, in the order they were watched."""
        seen, out = set(), []
        for v in self._watched + self._accessed:
            if isinstance(v, Variable) and id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        return tuple(out)

    def stop_recording(self):
        """Context manager: operations inside it are not recorded by this tape."""
        return _StopRecording(self)

    def reset(self):
        """Forget everything recorded so far (the tape can be used again)."""
        self._nodes = []
        self._tracked = {}
        self._accessed = []
        self._watched = []
        self._used = False

    # --- the reverse walk ----------------------------------------------------
    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """Compute d(target)/d(sources) by walking the recorded operations in reverse.

        Parameters
        ----------
        target : Tensor or nested list of Tensors
            A non-scalar target is differentiated as the sum of its elements (several
            targets: the sum of all of them), unless ``output_gradients`` gives the
            upstream gradient dL/dtarget.
        sources : Tensor, Variable, or nested list/tuple/dict of them
            The result has the same structure.
        output_gradients : array_like or Tensor (nested like ``target``), optional
        unconnected_gradients : {"none", "zero"}
            What a source the target does not depend on gets: None or zeros.

        Returns
        -------
        Tensor or None, in the structure of ``sources``; each gradient has its source's
        shape and dtype.

        Raises
        ------
        RuntimeError
            On a second call to a non-persistent tape.
        ValueError
            If ``unconnected_gradients`` is not "none" or "zero".
        """
        if self._used and not self._persistent:
            raise RuntimeError(
                "GradientTape.gradient can only be called once on a non-persistent tape: "
                "its records were released after the first call. Create the tape with "
                "GradientTape(persistent=True) to compute several gradients from one "
                "forward pass."
            )
        if unconnected_gradients not in ("none", "zero"):
            raise ValueError(
                f"unconnected_gradients must be 'none' or 'zero'; got {unconnected_gradients!r}"
            )
        if self._recording:
            warnings.warn(
                "GradientTape.gradient was called inside the tape's `with` block: the tape "
                "records the backward pass too, which costs memory and time. Call it after "
                "the block unless you want higher-order derivatives of this tape.",
                stacklevel=2,
            )
        flat_sources, rebuild = _flatten(sources)
        for s in flat_sources:
            if not isinstance(s, Tensor):
                raise TypeError(
                    f"GradientTape.gradient: sources must be Tensors or Variables; got "
                    f"{type(s).__name__}"
                )
        targets = _flatten(target)[0]
        seeds = (
            [None] * len(targets) if output_gradients is None else _flatten(output_gradients)[0]
        )
        if len(seeds) != len(targets):
            raise ValueError(
                f"output_gradients must match target: {len(targets)} target tensors, "
                f"{len(seeds)} output gradients"
            )
        grads = _backward(self, targets, seeds, flat_sources)
        results = []
        for s in flat_sources:
            g = grads.get(id(s))
            if g is None or not is_differentiable_dtype(s.dtype):
                if unconnected_gradients == "zero" and is_differentiable_dtype(s.dtype):
                    g = np.zeros(s.shape, s.dtype)
                else:
                    if not is_differentiable_dtype(s.dtype):
                        warnings.warn(
                            f"GradientTape.gradient: a source of dtype {s.dtype} is not "
                            "differentiable; its gradient is None. Cast it to float.",
                            stacklevel=2,
                        )
                    results.append(None)
                    continue
            if isinstance(g, Tensor):
                if g.dtype != s.dtype:
                    g = g.astype(s.dtype)
                results.append(g)
            else:
                g = np.asarray(g)
                if g.dtype != s.dtype:
                    g = g.astype(s.dtype)
                results.append(Tensor._wrap(g))
        if not self._persistent:
            self._used = True
            self._release()
        return rebuild(results)

    def _release(self):
        self._nodes = []
        self._tracked = {}

    def __del__(self):
        try:
            self._stop()
        except Exception:  # interpreter shutdown
            pass


class _StopRecording:
    def __init__(self, tape):
        self._tape = tape
        self._was = False

    def __enter__(self):
        self._was = self._tape._recording
        self._tape._stop()
        return self

    def __exit__(self, *exc):
        if self._was:
            self._tape._recording = True
            _RECORDING.append(self._tape)
        return False


def _backward(tape, targets, seeds, sources):
    """The reverse walk. Returns {id(tensor): gradient} (ndarrays, or Tensors when
    an outer tape records the backward pass)."""
    tracked = tape._tracked
    higher = bool(_RECORDING)  # some tape records: compute VJPs on Tensors
    keep = {id(s) for s in sources}
    grads: dict = {}

    def seed_value(t, seed):
        if seed is None:
            v = np.ones(t.shape, t.dtype)
        else:
            v = seed._value if isinstance(seed, Tensor) else np.asarray(seed, dtype=t.dtype)
            if v.shape != t.shape:
                raise ValueError(
                    f"output_gradients: expected shape {t.shape} (the target's); got {v.shape}"
                )
        if higher:
            return seed if isinstance(seed, Tensor) else Tensor._wrap(v)
        return v

    for t, seed in zip(targets, seeds):
        if not isinstance(t, Tensor) or id(t) not in tracked:
            continue
        v = seed_value(t, seed)
        k = id(t)
        grads[k] = v if k not in grads else grads[k] + v

    nodes = list(tape._nodes)  # a snapshot: a recording tape may append while we walk
    for node in reversed(nodes):
        k = id(node.out)
        g = grads.get(k) if k in keep else grads.pop(k, None)
        if g is None:
            continue
        prim = node.prim
        if higher:
            ins = [a if isinstance(a, Tensor) else v for a, v in zip(node.args, node.vals)]
            ans = node.out
        else:
            ins = node.vals
            ans = node.out._value
        for i in node.parents:
            gi = prim.vjps[i](g, ans, *ins, **node.kwargs)
            a = node.args[i]
            ka = id(a)
            prev = grads.get(ka)
            grads[ka] = gi if prev is None else prev + gi
    return grads


def _flatten(structure):
    """Flatten nested lists/tuples/dicts of leaves; return (leaves, rebuild)."""
    if isinstance(structure, dict):
        keys = list(structure.keys())
        parts = [_flatten(structure[k]) for k in keys]
        leaves = [x for p in parts for x in p[0]]
        sizes = [len(p[0]) for p in parts]

        def rebuild(vals):
            out, pos = {}, 0
            for k, (_, rb), n in zip(keys, parts, sizes):
                out[k] = rb(vals[pos : pos + n])
                pos += n
            return type(structure)(out) if type(structure) is not dict else out

        return leaves, rebuild
    if isinstance(structure, (list, tuple)) and not isinstance(structure, Tensor):
        parts = [_flatten(x) for x in structure]
        leaves = [x for p in parts for x in p[0]]
        sizes = [len(p[0]) for p in parts]

        def rebuild(vals):
            out, pos = [], 0
            for (_, rb), n in zip(parts, sizes):
                out.append(rb(vals[pos : pos + n]))
                pos += n
            return tuple(out) if isinstance(structure, tuple) else out

        return leaves, rebuild
    return [structure], lambda vals: vals[0]
