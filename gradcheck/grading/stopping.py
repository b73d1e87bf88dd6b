"""SIGTERM stops ``gradcheck grade`` as Ctrl-C does (finding Z9).

A Gradescope or CI time limit sends SIGTERM, whose default action ends the process at once: the
gradebook was never written and the child graders (each in a session of its own) ran on. While
:func:`sigterm_stops` is active, SIGTERM raises :class:`Terminated` (a :class:`KeyboardInterrupt`)
in the main thread, so the one path that handles Ctrl-C handles it: children stopped, finished
results kept, the unfinished submissions written as not graded with :func:`stopped_by`'s reason.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from .._startup import Terminated, stopped_by  # the command's start-up stops with the same words

__all__ = ["Terminated", "sigterm_stops", "stopped_by", "NOT_GRADED"]

#: The status of a submission whose grading a signal stopped (results.json and the gradebook).
NOT_GRADED = "not graded"


@contextlib.contextmanager
def sigterm_stops() -> Iterator[None]:
    """While inside, the first SIGTERM raises :class:`Terminated` in the main thread and later ones
    are ignored (the stop that the first started, writing the gradebook, is not cut short); the
    previous handler is restored after. Outside the main thread nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    first = [True]

    def handler(signum: int, frame: object) -> None:  # noqa: ARG001
        if first[0]:
            first[0] = False
            raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
