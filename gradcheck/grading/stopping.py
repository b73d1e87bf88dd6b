"""SIGTERM stops ``gradcheck grade`` as Ctrl-C does (finding Z9); a batch's signal is held until its pool runs.

A Gradescope or CI time limit sends SIGTERM, whose default action ends the process at once: the
gradebook was never written and the child graders (each in a session of its own) ran on. While
:func:`sigterm_stops` is active, SIGTERM raises :class:`Terminated` (a :class:`KeyboardInterrupt`)
in the main thread, so the one path that handles Ctrl-C handles it: children stopped, finished
results kept, the unfinished submissions written as not graded with :func:`stopped_by`'s reason.

That path is the batch's grading loop. A signal that came in the batch's steps before it (its checks, the pool's
start, the output folder's key and grading.json) left without a gradebook (session 40: the CI's flake of
``test_a_signal_at_any_moment_of_a_batch_stops_it_within_seconds``); :func:`held_stops` holds it until the loop
starts, which then stops at once, every submission not graded, and the gradebook written.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

# the command's start-up and run stop with the same words and handler
from .._startup import Terminated, sigterm_raises, stopped_by

__all__ = ["Terminated", "sigterm_stops", "stopped_by", "NOT_GRADED", "HeldStops", "held_stops"]

#: The status of a submission whose grading a signal stopped (results.json and the gradebook).
NOT_GRADED = "not graded"


@contextlib.contextmanager
def sigterm_stops() -> Iterator[None]:
    """While inside, the first SIGTERM raises :class:`Terminated` in the main thread and later ones
    are ignored (the stop that the first started, writing the gradebook, is not cut short); the
    previous handler is restored after. Outside the main thread nothing changes
    (:func:`gradcheck._startup.sigterm_raises`, also the command's)."""
    with sigterm_raises(command=True):
        yield


class HeldStops:
    """SIGINT and SIGTERM held while a batch is not in its grading loop (:func:`held_stops`).

    A signal whose handler is a Python function (Python's Ctrl-C, :func:`sigterm_stops`' SIGTERM) is recorded, not
    handled, except inside :meth:`open`, which first delivers the one recorded to that handler (the loop then stops
    before it grades anyone) or raises the stop :meth:`keep` kept. One at the default or ignored is left alone (a
    library caller's SIGTERM at its default ends the process, as before). After a stop was handled, later signals
    are dropped: the stop, writing the gradebook, is not cut short. Only in the main thread (signals are handled
    there); elsewhere nothing is held.
    """

    def __init__(self) -> None:
        self._came: int | None = None
        self._kept: KeyboardInterrupt | None = None
        self._previous: dict[int, object] = {}
        self.stopped = False

    def _on_signal(self, signum: int, frame: object) -> None:  # noqa: ARG002
        if self._came is None and self._kept is None and not self.stopped:
            self._came = signum

    def _hold(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for s in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(s)
            if callable(handler) and handler != self._on_signal:
                self._previous[s] = handler
                signal.signal(s, self._on_signal)

    def _release(self) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous = {}

    def _deliver(self) -> None:
        came, kept, self._came, self._kept = self._came, self._kept, None, None
        if kept is not None:
            raise kept
        if came is not None:
            signal.raise_signal(came)  # its own handler raises (KeyboardInterrupt, Terminated) or does what it does

    def keep(self, stop: KeyboardInterrupt) -> None:
        """Keep ``stop``, a stop raised inside :meth:`open` and caught, for the next :meth:`open` to raise."""
        self._kept = stop

    @contextlib.contextmanager
    def open(self) -> Iterator[None]:
        """While inside, signals reach their own handlers; on entering, the signal held (or the stop kept) is
        delivered. A KeyboardInterrupt leaving marks the batch :attr:`stopped`."""
        self._release()
        try:
            self._deliver()
            yield
        except KeyboardInterrupt:
            self.stopped = True
            raise
        finally:
            self._hold()


@contextlib.contextmanager
def held_stops() -> Iterator[HeldStops]:
    """A :class:`HeldStops`, holding while inside; on leaving, the handlers are restored, and a signal that came
    after the grading loop of a batch that was not stopped is delivered (the command stops as interrupted, its
    gradebook written); one that came with an error leaving, or after a stop, is dropped."""
    held = HeldStops()
    held._hold()
    try:
        yield held
    except BaseException:
        held._release()
        held._came = held._kept = None
        raise
    held._release()
    if not held.stopped:
        held._deliver()
