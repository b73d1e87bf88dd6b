"""A signal while the ``gradcheck`` command starts exits 130 or 143 with a message (issue 10, session 14's leftover).

Importing gradcheck (numpy, the pipeline, the grader) takes about a second. A Ctrl-C then printed Python's
KeyboardInterrupt traceback, and a SIGTERM (a Gradescope or CI time limit) ended the process with no word.
:func:`starting` guards that time: in the command only (the ``gradcheck`` console script or ``python -m
gradcheck``, never a library import), SIGTERM raises :class:`Terminated`, and a Ctrl-C or SIGTERM becomes one line
on stderr and the exit code a later stop gives (:data:`EXIT_INTERRUPTED`, :data:`EXIT_TERMINATED`). The grader's
own stops (:mod:`gradcheck.grading.stopping`) use the same exception, words and codes. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "Terminated", "running_as_command", "say_stopped", "sigterm_raises",
           "starting", "stopped_by"]

#: Exit code after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130
#: Exit code after SIGTERM (128 + SIGTERM), e.g. a Gradescope or CI time limit.
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while a handler of ours was active (:func:`starting`, or the grader's ``sigterm_stops``)."""


def stopped_by(exc: BaseException | None) -> str:
    """How the command was stopped, for messages: SIGTERM or Ctrl-C."""
    return ("SIGTERM (a time limit of the system running the grader, or a kill)"
            if isinstance(exc, Terminated) else "Ctrl-C (SIGINT)")


def say_stopped(exc: KeyboardInterrupt, during: str, then: str = "rerun the same command",
                command: bool | None = None) -> int:
    """Print ``gradcheck: stopped by <Ctrl-C or SIGTERM> <during>; <then>.`` on stderr; return the exit code.

    Parameters
    ----------
    exc : KeyboardInterrupt
        The stop (:class:`Terminated` for SIGTERM).
    during, then : str
        When it came (``while starting, ...``) and what to do now.
    command : bool, optional
        Whether this is the command (default :func:`running_as_command`): then, in the main thread, a second
        Ctrl-C or SIGTERM is ignored so that it does not cut the message short (a library caller's handlers
        are left alone).

    Returns
    -------
    int
        :data:`EXIT_TERMINATED` after SIGTERM, else :data:`EXIT_INTERRUPTED`.
    """
    if (running_as_command() if command is None else command) \
            and threading.current_thread() is threading.main_thread():
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
    print(f"gradcheck: stopped by {stopped_by(exc)} {during}; {then}.", file=sys.stderr)
    return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED


def running_as_command() -> bool:
    """Whether this process is the ``gradcheck`` command: its console script (``sys.argv[0]`` named ``gradcheck``)
    or ``python -m gradcheck`` (``sys.orig_argv``; ``sys.argv[0]`` is ``-m`` while the package imports)."""
    if os.path.basename(sys.argv[0] if sys.argv else "").removesuffix(".exe") == "gradcheck":
        return True
    args = iter(list(getattr(sys, "orig_argv", []))[1:])
    for a in args:
        if a == "-m":
            return next(args, None) == "gradcheck"
        if a.startswith("-m"):
            return a == "-mgradcheck"
        if a in ("-X", "-W"):  # the interpreter's options that take a value
            next(args, None)
        elif not a.startswith("-") or a.startswith("-c"):  # a script, or code: not the module
            return False
    return False


@contextlib.contextmanager
def sigterm_raises(command: bool | None = None, came: list | None = None) -> Iterator[None]:
    """While inside, the first SIGTERM raises :class:`Terminated` in the main thread and later ones are ignored
    (the stop the first started, a message or the grader's gradebook, is not cut short); the previous handler is
    restored after. Used by :func:`starting`, the command's run (``gradcheck.cli.main``) and the grader's stops
    (``gradcheck.grading.stopping.sigterm_stops``).

    Parameters
    ----------
    command : bool, optional
        Whether this is the command (default :func:`running_as_command`); otherwise, or outside the main thread,
        nothing changes (a library caller's handlers are left alone).
    came : list, optional
        :class:`Terminated` is appended to it when the first SIGTERM comes (:func:`starting`: the stop, whatever
        error a library made of the exception).
    """
    if not (running_as_command() if command is None else command) \
            or threading.current_thread() is not threading.main_thread():
        yield
        return
    first = [True]

    def handler(signum: int, frame: object) -> None:  # noqa: ARG001
        if first[0]:
            first[0] = False
            if came is not None:
                came.append(Terminated)
            raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def starting(command: bool | None = None) -> Iterator[None]:
    """Guard the command's start-up: inside, SIGTERM raises :class:`Terminated` (:func:`sigterm_raises`), and a
    Ctrl-C or SIGTERM prints ``gradcheck: stopped by ... while starting`` and exits with :data:`EXIT_INTERRUPTED`
    or :data:`EXIT_TERMINATED` (a ``SystemExit``, so no traceback). The previous handlers are restored after.

    The signal is remembered as it comes (a SIGINT handler of ours that raises KeyboardInterrupt as Python's does,
    only where Python's is installed: an ignored SIGINT stays ignored), so a stop that a library turned into an error
    of its own is still the stop: numpy's C extensions import ``datetime`` through ``PyCapsule_Import``, which turns
    the KeyboardInterrupt raised there into an ImportError, and numpy into "Importing the numpy C-extensions failed
    ... a bad install" (load35: a Ctrl-C 8 s into a start-up on a loaded machine, exit 1 and that advice).

    Parameters
    ----------
    command : bool, optional
        Whether this is the command (default :func:`running_as_command`); otherwise, or outside the main thread,
        nothing changes (a library import of gradcheck installs no handler).
    """
    if not (running_as_command() if command is None else command) \
            or threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[type[KeyboardInterrupt]] = []

    def on_sigint(signum: int, frame: object) -> None:  # noqa: ARG001
        came.append(KeyboardInterrupt)
        raise KeyboardInterrupt

    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if ours:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        with sigterm_raises(command=True, came=came):
            yield
    except KeyboardInterrupt as exc:
        raise SystemExit(say_stopped(exc, "while starting, before anything was done", command=True)) from None
    except Exception:
        if not came:
            raise
        raise SystemExit(say_stopped(came[0](), "while starting, before anything was done", command=True)) from None
    finally:
        if ours and signal.getsignal(signal.SIGINT) is on_sigint:  # (a stop said leaves it ignored)
            signal.signal(signal.SIGINT, signal.default_int_handler)
