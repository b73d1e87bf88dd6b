"""Exception types raised by gradcheck (one paragraph each: layer, tensor, expected, came) and exit codes:
1 the checked code computed something wrong, 3 it could not be checked (it failed when run, or NOT CHECKED), 2 usage:
the command, or the file's class or function as written, cannot be used (the message says what to change), or
gradcheck's own failure.
"""

from __future__ import annotations

import re

EXIT_PASS, EXIT_MISMATCH, EXIT_USAGE, EXIT_STUDENT = 0, 1, 2, 3

__all__ = [
    "EXIT_PASS", "EXIT_MISMATCH", "EXIT_USAGE", "EXIT_STUDENT", "GradcheckError", "UsageError", "TwinError",
    "GraderError", "InternalError", "StudentCodeError", "NotCheckedError", "ProtocolError", "GradientShapeError", "AgainError", "NonFiniteError",
    "InputModifiedError", "MissingGradientError", "UnusableError", "STEPS", "stepped", "error_kind", "CODE_MARK", "code", "marked"]

#: The mark gradcheck puts before each backtick of its own code spans in an error's message (U+2060 WORD JOINER: no
#: printable character, so no string of the checked code's holds one: the sandbox cleans each with
#: :func:`gradcheck._validation.printable`, which writes it as the text ``\u2060``). ``str()`` of a
#: :class:`GradcheckError` drops the marks (a terminal, a log, ``check --json`` read plain backticks); results.json's
#: Markdown (:func:`gradcheck.grading.static.markdown_text`) renders a marked span as code and every other backtick,
#: a submission's quoted in the same message, as text (session 35 escaped them all: the grader's own code showed its
#: backticks).
CODE_MARK = "\u2060"


def code(text: str) -> str:
    """``text`` as gradcheck's own code span in an error's message (:data:`CODE_MARK`): `` `text` `` where the message
    is read as text (``str(error)``), a code span in results.json.

    Parameters
    ----------
    text : str
        The code (a command, a statement, a class or file name), written by gradcheck or the staff's test.

    Returns
    -------
    str
        ``text`` between two marked backticks.

    Examples
    --------
    >>> err = UsageError("name the class " + code("Linear") + " exactly so")
    >>> str(err)
    'name the class `Linear` exactly so'
    >>> marked(err) == "name the class \\u2060`Linear\\u2060` exactly so"
    True
    """
    return f"{CODE_MARK}`{text}{CODE_MARK}`"


def marked(exc: BaseException) -> str:
    """The message of ``exc`` with gradcheck's code marks kept (:data:`CODE_MARK`), for results.json's Markdown;
    ``str(exc)`` for any other exception (or one not made from one message)."""
    args = getattr(exc, "args", ())
    return args[0] if isinstance(exc, GradcheckError) and len(args) == 1 and isinstance(args[0], str) else str(exc)


class GradcheckError(Exception):
    """Base of every error gradcheck raises on purpose; ``exit_code`` is what :func:`gradcheck.cli.main` returns.
    Its text drops the marks of gradcheck's own code spans (:data:`CODE_MARK`; :func:`marked` keeps them)."""
    exit_code = EXIT_USAGE

    def __str__(self) -> str:
        return super().__str__().replace(CODE_MARK, "")


class UsageError(GradcheckError):
    """gradcheck was called wrongly: bad shape, tolerance, path or class name (exit 2)."""


class TwinError(GradcheckError):
    """The autoprop twin could not be built, or its ``variables`` differ from the layer's ``params`` (exit 2)."""


class GraderError(GradcheckError):
    """gradcheck itself failed outside the checked code, e.g. its sandbox ran out of memory (exit 2)."""


class InternalError(GraderError):
    """gradcheck's own code failed (a bug of gradcheck's, e.g. an adapter reading a submission), never reported as
    the checked code's failure (exit 2)."""


class StudentCodeError(GradcheckError):
    """The code under check failed: raised, did not import, or broke the protocol (exit 3). ``step``: the checked
    code's call that failed, ``"forward"``, ``"backward"`` or ``"__init__"``, where gradcheck knows it (set by
    :func:`gradcheck._validation.call_student`, a sandboxed layer's request, :func:`gradcheck.sources.in_place`),
    else None: the check again at another point reads who failed from it, not from the message's words
    (:func:`gradcheck.sources.other_point_stop`)."""
    exit_code = EXIT_STUDENT
    step: str | None = None


class NotCheckedError(StudentCodeError):
    """The code cannot be checked as asked, nothing was found wrong: e.g. ``--training`` for a forward whose
    training switch gradcheck cannot set (exit 3, "not checked")."""


class ProtocolError(StudentCodeError):
    """``params`` not a dict of arrays, ``grads`` not a dict, forward returning None, backward's gradients not lining up
    with the inputs and weights (exit 3); a class without ``forward``/``backward`` is an :class:`UnusableError`."""


class UnusableError(ProtocolError):
    """The class or function named cannot be used as written, nothing run failed: no ``forward()`` or ``backward()``,
    or a forward storing its inputs in a list nothing empties between calls (exit 2, as a usage error: the message
    says what to change). A ProtocolError all the same: in a graded submission it is the student's to fix."""
    exit_code = EXIT_USAGE


class MissingGradientError(ProtocolError):
    """A ``grads`` key of ``params`` missing after ``backward``: a wrong result (exit 1)."""
    exit_code = EXIT_MISMATCH


class GradientShapeError(StudentCodeError):
    """``backward`` gave None, a wrong shape or dtype, or a ``grads`` entry unlike its parameter (exit 1)."""
    exit_code = EXIT_MISMATCH


class AgainError(GradientShapeError):
    """The layer passes at one point, but at another where its forward runs (another constructor argument, drawn
    parameters) its backward breaks: raises, writes into dY, gives a wrong shape (exit 1). The check at the second
    point ran: no "numerical check could not run" (verify48d F3)."""


class NonFiniteError(StudentCodeError):
    """A forward output or gradient contains NaN or infinity: a wrong result (exit 1)."""
    exit_code = EXIT_MISMATCH


class InputModifiedError(StudentCodeError):
    """``forward`` wrote into its input: the caller's array changed, a wrong result (exit 1)."""
    exit_code = EXIT_MISMATCH


#: The steps of the checked code a :class:`StudentCodeError` names in its ``step``.
STEPS = ("forward", "backward", "__init__")


def stepped(exc: BaseException, call: str) -> BaseException:
    """``exc`` with ``step`` set from ``call`` (``"backward(dY)"``, ``"forward_many"``: the name it starts with, one of
    :data:`STEPS`) when it is a :class:`StudentCodeError` whose step is not known yet; ``exc`` itself."""
    m = re.match(r"(__init__|forward|backward)(?![A-Za-z])", call or "")
    step = m.group(1) if m else None
    if isinstance(exc, StudentCodeError) and exc.step is None and step is not None:
        exc.step = step
    return exc


def error_kind(exc: GradcheckError) -> str:
    """The words the CLI says before an error's exit code (``gradcheck: usage error (exit 2): ...``), by its exit
    code and type, the same wherever the error is printed (the check's diagnosis or the command)."""
    if isinstance(exc, GraderError):
        return "gradcheck could not run the check"
    if isinstance(exc, NotCheckedError):
        return "not checked"
    return {EXIT_USAGE: "usage error", EXIT_STUDENT: "the checked code failed",
            EXIT_MISMATCH: "wrong result"}.get(exc.exit_code, "error")
