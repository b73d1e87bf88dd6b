"""Name the bug behind a wrong gradient in one sentence a student can act on.

:func:`diagnose` is the grader's face of :func:`gradcheck.diagnose.name_signature`, the one set
of bug signatures (shared with ``gradcheck check``): a submitted tensor against the reference's.
:func:`reproduce` tells the student how to see the whole diagnosis on their own computer.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..diagnose import is_bias_gradient, name_graded, name_signature
from ..errors import GradcheckError
from .static import Markdown, code_span

__all__ = ["diagnose", "reproduce", "DiagnosisClock", "CLOCK"]

#: The sentence added to a diagnosis its clock stopped (:class:`DiagnosisClock`).
OUT_OF_TIME = ("(The grader's time for naming the bug ran out, so it is named from the numbers alone; the score does "
               "not depend on it.)")


class DiagnosisClock:
    """The grader's time for the bug diagnoses of one submission: not the submission's (redteam25 H2).

    The diagnosis runs the student's forward again (up to ``checks.DIAGNOSIS_FORWARDS`` per wrong part), a
    message only: its wall-clock seconds are handed to ``charge`` (the plugin's: the runner adds them to
    ``--submission-timeout``, as the grader's scan of the files), and the sandbox's session limit is extended
    for its requests (:meth:`gradcheck.sandbox.Sandbox.uncharged`). They are bounded here: once ``seconds`` in all
    are spent, no diagnosis runs a further forward, and its sentence says so (:data:`OUT_OF_TIME`).

    Parameters
    ----------
    seconds : float
        The submission's diagnoses' seconds in all.
    charge : callable
        ``charge(seconds)``, called with the seconds spent since its last call (at most every ``every`` seconds,
        and when a diagnosis ends).
    clock : callable, default time.monotonic
        The clock (a test's fake).
    every : float, default 0.25
        The longest time between two charges while a diagnosis runs.
    """

    def __init__(self, seconds: float, charge: Callable[[float], None], clock: Callable[[], float] = time.monotonic,
                 every: float = 0.25):
        self.left, self.charge, self.clock, self.every = float(seconds), charge, clock, float(every)
        self._since = None

    def tick(self) -> None:
        """Before each forward of a diagnosis: charge the time spent; ``TimeoutError`` once none is left."""
        now = self.clock()
        if now - self._since >= self.every or now - self._since >= self.left:
            self._pay(now)
        if self.left <= 0:
            raise TimeoutError("the grader's time for the diagnosis ran out")

    def _pay(self, now: float) -> None:
        spent, self._since = max(now - self._since, 0.0), now
        self.left -= spent
        self.charge(spent)

    @contextlib.contextmanager
    def running(self):
        """One diagnosis: yields :meth:`tick`; its time is charged when it ends."""
        self._since = self.clock()
        try:
            yield self.tick
        finally:
            self._pay(self.clock())


#: The submission's :class:`DiagnosisClock` (``[None]``: none, the diagnosis's forwards bounded by their count alone;
#: set by the grading plugin when the runner gives ``--grading-submission-timeout``).
CLOCK: list[DiagnosisClock | None] = [None]


def diagnose(tensor: str, got: np.ndarray, expected: np.ndarray, *, batch_size: int | None = None,
             alternatives: Mapping[str, np.ndarray] | None = None, rtol: float = 1e-6,
             atol: float = 1e-9, loss: bool = False, layer: Any = None, inputs: Sequence[np.ndarray] = (),
             upstream: np.ndarray | None = None, training: bool = False, forwards: int | None = None,
             names: Sequence[str] | None = None, parameter: bool | None = None) -> str:
    """One sentence naming what is wrong with ``got`` (a submitted tensor) against ``expected``.

    With the ``layer`` it came from, a wrong tensor is named by ``gradcheck check``'s own path
    (:func:`gradcheck.diagnose.name_graded`: the bug signatures that read the layer's input, output and forward, as
    "dX = dY * out: the factor (1 - out) is missing"), so grade and check name one bug alike; without it (a loss's
    gradient, a dtype test), or when the layer's forward fails when run again, from the numbers alone.

    Parameters
    ----------
    tensor : str
        Display name, e.g. ``"db"``; a bias's (:func:`gradcheck.diagnose.is_bias_gradient`: ``db`` of a ``(d,)``
        or ``(1, d)`` b) ``1/N`` factor is named "the mean over the batch, not the sum".
    got, expected : ndarray
        The submitted value (any shape) and the correct one.
    batch_size : int, optional
        The batch size N, to recognise a mean where a sum is due (and the reverse).
    alternatives : mapping of str -> ndarray, optional
        Known wrong answers and their sentences, e.g. ``{"dX does not use dY ...": d_ones}``.
    rtol, atol : float
        Tolerances of the comparisons.
    loss : bool, default False
        ``got`` is a loss's gradient dL/dy_pred: a constant factor that is a count of its elements is named as the
        loss's normalisation ("the mean's 1/(N*D) is missing"), as ``gradcheck check --loss`` names it.
    layer : object, optional
        The graded layer at the graded parameters (its forward is run again on ``inputs``).
    inputs : sequence of ndarray
        The graded inputs (with ``layer``).
    upstream : ndarray, optional
        The upstream gradient backward was given (required with ``layer``, as ``inputs`` are).
    training : bool, default False
        The graded mode (with ``layer``).
    forwards : int, optional
        The budget, in forwards of the layer, of the signatures that run it again (with ``layer``; None: none; 0: the
        numbers alone).
    names : sequence of str, optional
        The inputs' names the parts are named after (with ``layer``; default its forward's arguments).
    parameter : bool, optional
        A parameter's gradient, which alone may be a bias's (review27g M2: a loss's dy_pred was told to sum); None:
        read from the name (:func:`gradcheck.diagnose.is_bias_gradient`); a ``loss``'s never.

    Returns
    -------
    str
        A sentence ending with a period; "" when ``got`` is in fact correct.

    Raises
    ------
    ValueError
        ``layer`` given without ``upstream`` or without ``inputs``: its signatures need both (review25g L6: without
        the upstream gradient they ran on NaN and said "no known bug pattern").

    Examples
    --------
    >>> import numpy as np
    >>> E = np.arange(1.0, 7.0).reshape(2, 3)
    >>> diagnose("dX", -E, E)
    'dX has the wrong sign: the opposite sign of the correct gradient everywhere (a minus sign too many or too few).'
    >>> diagnose("dX", E, E)
    ''
    """
    if layer is not None and (upstream is None or not len(inputs)):
        missing = " and ".join(["inputs (the graded inputs)"] * (not len(inputs))
                               + ["upstream (the upstream gradient backward was given)"] * (upstream is None))
        raise ValueError(f"diagnose({tensor!r}, layer={type(layer).__name__}): a layer's signatures run it again on "
                         f"the graded inputs and upstream gradient; {missing} not given. Pass them, or no layer "
                         "(the numbers alone).")
    finding = name_signature(tensor, got, expected, is_bias=is_bias_gradient(tensor, np.shape(expected), not loss and parameter),
                             n_batch=batch_size or 1, alternatives=alternatives, tol=rtol, atol=atol, fallback=True,
                             loss=loss)
    late = ""
    if finding is not None and layer is not None and np.shape(got) == np.shape(expected) and (forwards is None
                                                                                            or forwards > 0):
        finding, late = _named_graded(finding, layer, inputs, tensor, got, expected, G=upstream, training=training,
                                      rtol=rtol, atol=atol, alternatives=alternatives, forwards=forwards, names=names)
    return "" if finding is None else finding.sentence() + late


def _named_graded(finding, layer, *args, **kw):
    """``(finding, note)``: :func:`gradcheck.diagnose.name_graded`'s finding (``finding``, the numbers', when the
    forward run again failed or its time ran out) and the note of :data:`OUT_OF_TIME` ("" when it did not): its
    time is the grader's (:data:`CLOCK`), not charged to the sandbox's session (:meth:`Sandbox.uncharged`)."""
    from ..sandbox import Sandbox

    clock, sb = CLOCK[0], getattr(layer, "sandbox", None)
    if clock is not None and clock.left <= 0:
        return finding, " " + OUT_OF_TIME
    stopped = []

    def tick():
        try:
            clock.tick()
        except TimeoutError:
            stopped.append(True)
            raise
    with (clock.running() if clock is not None else contextlib.nullcontext()), \
            (sb.uncharged() if isinstance(sb, Sandbox) else contextlib.nullcontext()):
        try:
            finding = name_graded(layer, *args, **kw, before_forward=tick if clock is not None else None)
        except (GradcheckError, TimeoutError):  # the forward failed when run again: the numbers' finding stands
            pass
    return finding, " " + OUT_OF_TIME if stopped else ""


def reproduce(obj: Any, shape: Sequence[int] | Sequence[Sequence[int]] | None = None, *,
              training: bool | None = None, loss: bool = False, reference: Any = None) -> str:
    """The sentence telling a student how to run this check on their own computer (:class:`~gradcheck.grading.static.
    Markdown`), or "".

    ``obj`` is the graded :class:`~gradcheck.sandbox.RemoteLayer` / ``RemoteLoss``: its ``file``
    and ``loaded_name`` (the NAME the test loaded, set by the plugin; else its ``class_name``, the class's own
    ``__name__``, which the submission chooses: redteam32 L1) make ``gradcheck check file.py::NAME``, in a Markdown
    code span that a backtick in it does not end (:func:`gradcheck.grading.static.code_span`); its ``init_kwargs`` (set by the plugin) the ``--init`` (no
    ``file``: ""). ``shape`` is the input's (a loss: ``y_pred``'s), or one per input
    (``'6,4;4,3;3'``); ``training`` gives ``--training`` / ``--eval`` (None: the CLI's default,
    both); ``loss`` adds ``--loss`` and the ``--targets`` and ``--pred`` options of the data the loss was last
    graded on (its ``last_data``, :func:`gradcheck.check_command.data_options`), so the command runs as printed
    (newuser26 M4: a cross-entropy graded on labels was told a command without ``--targets labels``, which exits 3).
    ``reference`` is the grader's reference object: one of manualprop's classes
    adds ``--reference manualprop.NAME`` with ``--reference-init`` of its own settings (read from it by
    :func:`gradcheck.sources.constructor_kwargs`), so the command compares the forward output too (tester23g M3:
    without it, a LayerNorm without eps PASSed there while the grader failed it); any other (the course's own, which
    the student does not have) adds a sentence saying the command cannot compare the forward with it, naming no
    file.

    Examples
    --------
    >>> class Graded:
    ...     file, class_name = "layers.py", "Linear"
    >>> reproduce(Graded(), (8, 5), training=False)
    'To see the full diagnosis on your computer, run: `gradcheck check layers.py::Linear --input-shape 8,5 --eval`.'
    >>> Graded.class_name = "affine"
    >>> reproduce(Graded(), [(6, 4), (4, 3), (3,)]).split(': ')[1]
    "`gradcheck check layers.py::affine --input-shape '6,4;4,3;3'`."
    >>> import manualprop
    >>> print(reproduce(Graded(), (4, 5), reference=manualprop.LayerNorm(5)).split(': ', 1)[1])
    `gradcheck check layers.py::affine --input-shape 4,5 --reference manualprop.LayerNorm --reference-init '{"normalized_shape": [5]}'`.
    """
    file = getattr(obj, "file", None)
    if not isinstance(file, str) or not file:
        return ""
    name = getattr(obj, "loaded_name", None) or getattr(obj, "class_name", None) or type(obj).__name__
    cmd = ["gradcheck", "check", shlex.quote(f"{file}::{name}")]
    init = getattr(obj, "init_kwargs", None)
    listed = json.dumps(init, default=lambda o: o.tolist()) if isinstance(init, Mapping) and init else ""
    cmd += ["--init", shlex.quote(listed)] if listed else []  # arrays as lists: the check makes them arrays
    shapes = [shape] if shape is not None and all(isinstance(n, (int, np.integer)) for n in shape) else shape or []
    spec = ";".join(",".join(str(int(n)) for n in s) for s in shapes)
    cmd += ["--input-shape", shlex.quote(spec)] if shapes else []
    given = getattr(obj, "__dict__", {}).get("targets_option")  # student.layer(..., targets="real@3,4")
    cmd += ["--targets", shlex.quote(given)] if isinstance(given, str) else []
    cmd += [] if training is None else ["--training" if training else "--eval"]
    ref, unseen = _reference_args(reference)
    if loss and isinstance(data := getattr(obj, "__dict__", {}).get("last_data"), tuple) and len(data) == 2:
        from ..check_command import data_options

        ref = data_options(*data) + ref
    return Markdown(f"To see the full diagnosis on your computer, run: "  # Markdown: each name of theirs in the span
                    f"{code_span(' '.join(cmd + ['--loss'] * loss + ref))}."
                    + (" The autograder compares your results with the course's own reference, which this command "
                       "does not have: it checks your backward against your own forward, so it cannot see a wrong "
                       "forward output. If it finds nothing wrong, compare your forward's output with the "
                       "assignment's formula." if unseen else ""))


def _same(value: Any, default: Any) -> bool:
    """Whether a constructor argument's ``value`` is its ``default`` (an array never is)."""
    try:
        return default is not inspect.Parameter.empty and bool(value == default or np.dtype(value) == np.dtype(default))
    except (TypeError, ValueError):
        return False


def _reference_args(reference: Any) -> tuple[list[str], bool]:
    """``--reference manualprop.NAME --reference-init JSON`` for a reference of manualprop's classes (its own
    settings), and whether there is a reference the student cannot run (not manualprop's: ``[]``, True)."""
    if reference is None:
        return [], False
    import manualprop

    from ..sources import constructor_kwargs

    cls = type(reference)
    if getattr(manualprop, cls.__name__, None) is not cls:
        return [], True
    try:
        defaults = {p.name: p.default for p in inspect.signature(cls).parameters.values()}
        kwargs = {k: v for k, v in constructor_kwargs(cls, reference, {}, cls.__name__, what="reference").items()
                  if not _same(v, defaults.get(k, inspect.Parameter.empty))}  # the settings that are not defaults
        own = json.dumps(kwargs, default=lambda o: o.tolist() if isinstance(o, np.ndarray) else str(o)) if kwargs \
            else ""
    except Exception:  # noqa: BLE001 - settings it does not show: the command builds it from --init
        own, kwargs = "", {}
    if not _rebuilds(cls, kwargs, reference):  # a Sequential of given layers: `--reference-init` cannot say them
        return [], True
    return ["--reference", f"manualprop.{cls.__name__}", *(["--reference-init", shlex.quote(own)] if own else [])], False


def _rebuilds(cls: type, kwargs: Mapping[str, Any], reference: Any) -> bool:
    """Whether ``cls(**kwargs)`` (what ``--reference manualprop.NAME --reference-init`` builds) has the
    ``reference``'s parameters, by name and shape (redteam41 L1: a ``Sequential`` built from no layers has none, and
    the printed command stopped with a usage error)."""
    def shapes(layer: Any) -> dict[str, tuple[int, ...]]:
        params = getattr(layer, "params", None)
        return {k: np.shape(v) for k, v in params.items()} if isinstance(params, Mapping) else {}
    try:
        return shapes(cls(**kwargs)) == shapes(reference)
    except Exception:  # noqa: BLE001 - a reference its settings cannot build: the command cannot either
        return False
