"""SIGTERM stops ``gradcheck grade`` as Ctrl-C does (finding Z9).

A Gradescope or CI time limit sends SIGTERM, whose default action ends the process at once: the
gradebook was never written and the child graders (each in a session of its own) ran on. While
:func:`sigterm_stops` is active, SIGTERM raises :class:`Terminated` (a :class:`KeyboardInterrupt`)
in the main thread, so the one path that handles Ctrl-C handles it: children stopped, finished
results kept, the unfinished submissions written as not graded with :func:`stopped_by`'s reason.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

# the command's start-up and run stop with the same words and handler
from .._startup import Terminated, sigterm_raises, stopped_by

__all__ = ["Terminated", "sigterm_stops", "stopped_by", "NOT_GRADED"]

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
