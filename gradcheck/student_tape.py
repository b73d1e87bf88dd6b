"""The student's own forward, recorded by autoprop's tape in the sandbox (``gradcheck check --tape``).

A numpy layer runs unchanged on autoprop Tensors: the child runs ``forward`` with ``params`` as
watched Tensors and returns ``Y`` and the tape's VJPs. A function without a VJP, or a forward that
leaves the tape, drops that column with a note. The child may import autoprop: never for grading.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._adapters import nielsen_methods
from ._sandbox_child import cut_at_word
from ._validation import paragraph
from .errors import GradientShapeError
from .sources import TapeUnavailable

__all__ = ["StudentTape", "gist", "unsupported_function"]

_UNSUPPORTED = re.compile(r"autoprop cannot record (numpy\.[\w.]+|[\w.]+)")


def unsupported_function(message: str) -> str | None:
    """The numpy function named in autoprop's "cannot record" TypeError (``"numpy.svd"``), or None."""
    m = _UNSUPPORTED.search(message or "")
    return m.group(1) if m else None


def gist(message: str, limit: int = 700) -> str:
    """autoprop's reason ``message`` within about ``limit`` characters, cut only at a word's end: its opening,
    then whole the sentence naming the fix where a value left the tape ("It happened inside numpy's
    np.lib.stride_tricks.as_strided, ...: call autoprop.numpy.lib.stride_tricks.as_strided ..."), which a cut
    at the limit dropped (corpus37 F4: "... a tensor of shape (2, 2, 7, 7) lef; manual vs numerical only").

    Parameters
    ----------
    message : str
        The error's message (the sandbox child sends up to 1900 characters of it).
    limit : int
        The opening's budget: ``limit`` less the fix's sentence, at least 200 characters.

    Returns
    -------
    str
        ``message`` itself when it fits; else the opening cut at a word's end with `` ...``, then the fix.
    """
    if len(message) <= limit:
        return message
    fix = re.search(r"It happened inside .*?\.(?=\s+[A-Z0-9(]|\s*$)", message)
    head = message[:fix.start()].rstrip() if fix else message
    room = max(200, limit - (len(fix.group()) if fix else 0))
    head = cut_at_word(head, room)
    return f"{head} {fix.group()}" if fix else head


class StudentTape:
    """Tape gradients of a sandboxed :class:`~gradcheck.sandbox.RemoteLayer`'s own forward (a ``twin``);
    ``notes``: the last call's remarks. ``same_draws``: a random forward's draws are those held for the check."""

    same_draws = True

    def __init__(self, layer: Any):
        self.layer = layer
        self.notes: list[str] = []

    def _request(self, inputs: Sequence[np.ndarray], gs: Sequence[np.ndarray], training: bool | None):
        lay = self.layer
        what = f"{lay.class_name}.forward on autoprop tensors (--tape)"
        if (nielsen := nielsen_methods((getattr(lay, "protocol", None) or {}).get("text"))) is not None:
            raise TapeUnavailable(paragraph(  # nielsen34 F5: 'the tape lost track of X at <gradcheck adapters>'
                f"--tape records a forward whose weights are params' arrays, but {lay.class_name} is Nielsen's "
                f"network: its forward is gradcheck's own (the cost of {nielsen[0]}'s output, one column at a time, "
                "summed as a Python number), and its weights live in lists (Nielsen's self.weights[i], self.biases[i]) that "
                "the tape does not replace with Tensors, so no tape can follow them; manual vs numerical only "
                f"({nielsen[1]} is still checked)"))
        ok, meta, err = lay.sandbox.request(
            "tape", {"id": lay._id, "inputs": [np.asarray(x) for x in inputs], "params": lay.params,
                     "training": training, "gs": [np.asarray(g, dtype=np.float64) for g in gs],
                     "count_forward": getattr(lay, "no_forward_in_backward", False)}, what=what)
        if ok:
            lay._policy("tape", meta)  # the staff policy, as on a forward (its calls beyond the grader's two)
            return meta
        stage = meta.get("stage")
        if stage == "tape-escape":
            raise TapeUnavailable(self._escape_text(meta.get("escapes")))
        if stage == "tape-left":
            raise TapeUnavailable(paragraph(
                f"the tape lost {lay.class_name}.forward: run on autoprop tensors it returned a "
                f"{meta.get('type', '?')}, not a Tensor", "(np.asarray/np.array, .astype, or writing into a "
                "preallocated numpy array leave the tape); manual vs numerical only"))
        e = err or {}
        fn = unsupported_function(e.get("message", ""))
        at = f" at {e['where']}" if e.get("where") else ""
        if fn and "out=" in e.get("message", ""):
            raise TapeUnavailable(paragraph(
                f"the tape lost track of {lay.class_name}.forward{at}: it calls {fn}(..., out=...), and writing",
                "into a preallocated numpy array leaves the tape; manual vs numerical only (your backward is",
                "still checked)"))
        if fn:
            raise TapeUnavailable(paragraph(
                f"{lay.class_name}.forward uses {fn}{at}, which autoprop cannot differentiate",
                "(no registered VJP); manual vs numerical only"))
        if stage == "tape":
            raise TapeUnavailable(paragraph(
                f"{lay.class_name}.forward raised {e.get('type', 'an exception')} on autoprop tensors{at}: "
                f"{gist(str(e.get('message', ''))).rstrip(' .;')}; manual vs numerical only"))  # newuser23 L4: "). ;"
        raise lay.sandbox._student_error(what, err)

    def _escape_text(self, escapes) -> str:
        """``the tape lost track of X at file.py:12 in forward ('cols[:, idx] = X')`` from the child's reply."""
        from .sandbox import _clean
        lay, said = self.layer, []
        for e in (escapes if isinstance(escapes, list) else [])[:3]:
            e = e if isinstance(e, dict) else {}
            t = _clean(e.get("tensor", ""), 60)
            if re.fullmatch(r"in\d+", t):
                i, names = int(t[2:]), lay.forward_params
                t = names[i] if i < len(names) and len(names) > 1 else "X" if i == 0 else f"X{i}"
            said.append(f"{t or 'a tensor computed from the inputs'} at {_clean(e.get('where'), 200)} "
                        f"({_clean(e.get('line'), 200)!r})")
        return paragraph(
            f"the tape lost track of {'; '.join(said) or 'a tensor'}: writing a Tensor into a numpy array",
            "(or np.asarray/np.array on it), or turning it into a Python number (float(), math.exp),",
            "copies its values out of the tape, so the tape's gradients would miss that path; manual vs",
            "numerical only (your backward is still checked)")

    def tape_gradients(self, inputs: Sequence[np.ndarray], keys: Sequence[str], G: np.ndarray,
                       training: bool) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``Y`` and the tape's VJPs with ``G``, ``{key: gradient}`` (zeros where unconnected, noted).
        Raises TapeUnavailable (the tape cannot run the forward) or SandboxError."""
        meta = self._request(inputs, [G], training)
        return self._array(meta.get("value"), "Y", np.shape(G)), self._grads(meta, 0, inputs, keys)

    def _array(self, desc, tensor, shape, expected: str = "expected") -> np.ndarray:
        """A validated float64 array of ``shape`` from the child's reply (the child is untrusted); ``expected``: the
        words before the shape in the error."""
        from .sandbox import _value_to_array
        a = _value_to_array(desc, owner=self.layer.class_name, tensor=tensor,
                            produced_by="forward on autoprop tensors (--tape)")
        if a.shape != tuple(shape):
            raise GradientShapeError(f"{self.layer.class_name}: the tape's {tensor} has shape {a.shape}; "
                                     f"{expected} {tuple(shape)}.")
        return np.asarray(a, dtype=np.float64)

    def _grads(self, meta, i, inputs, keys):
        items = meta.get("grads")
        got = items[i] if isinstance(items, list) and i < len(items) and isinstance(items[i], dict) else {}
        out = {}
        for j, (k, x) in enumerate(zip(keys, inputs)):
            if np.asarray(x).dtype.kind == "f":
                d = got.get(f"in{j}")
                out[k] = np.zeros(np.shape(x)) if d is None else self._array(d, f"d{k.lstrip('@')}", np.shape(x))
        out.update({k: np.zeros(p.shape) if got.get(k) is None else self._array(got[k], f"d{k}", p.shape)
                    for k, p in self.layer.params.items()})
        unc = [k for k in meta.get("unconnected") or [] if k in self.layer.params]
        read = set(meta.get("unconnected_read") or [])
        self.notes = [self._unconnected_note(k, k in read) for k in unc]
        return out

    def _unconnected_note(self, key: str, read: bool) -> str:
        """The note on ``params[key]``, which the checked output does not depend on on the tape: ``read``, forward
        used it for something else (Andrew Ng's ``rnn_cell_forward`` reads ``Wya`` for ``yt_pred``, an output
        ``rnn_cell_backward`` takes no gradient of: tester33 F8, where the note said the tape saw no use of it); else
        forward never used it on the tape."""
        if read:
            return (f"forward reads params[{key!r}], but only for what the checked output does not depend on (an "
                    f"output backward takes no upstream gradient for, such as yt_pred beside a_next, or a value "
                    f"forward discards): the tape's d{key} is 0, as central differences of the checked output give")
        return (f"the tape saw no use of params[{key!r}] in forward (does forward read it through another "
                "attribute, or convert it with np.asarray?)")

    def jacobian(self, X: np.ndarray, training: bool = False, *, y_shape: Sequence[int]) -> tuple[np.ndarray, str]:
        """The tape's Jacobian ``dY/dX`` of the student's forward, shape ``(Y.size, X.size)``: ``(J, how)``.

        ``y_shape``: the shape of ``Y`` the forward gave on numpy arrays (the caller bounds its size): the tape's
        ``Y`` must have it before ``np.eye(Y.size)`` is built from it (redteam36 F3: a reply claiming ``Y`` of
        shape ``(6000,)`` cost the checking process 1.2 GB; the child is untrusted).

        Raises
        ------
        GradientShapeError
            The tape's ``Y`` has another shape than ``y_shape``.
        TapeUnavailable, SandboxError
            As :meth:`tape_gradients`.
        """
        meta = self._request([X], [], training)
        y_shape = tuple(y_shape)
        self._array(meta.get("value"), "Y", y_shape, expected="the forward's Y on numpy arrays has shape")
        n = int(np.prod(y_shape, dtype=np.int64))
        meta = self._request([X], [row.reshape(y_shape) for row in np.eye(n)], training)
        rows = [self._grads(meta, k, [X], ["@X"])["@X"].ravel() for k in range(n)]
        return np.stack(rows), "your forward, stacked VJPs"
