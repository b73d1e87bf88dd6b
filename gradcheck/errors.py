"""Exception types raised by gradcheck (one paragraph each: layer, tensor, expected, came) and exit codes:
1 the checked code computed something wrong, 3 it could not be checked (it failed when run, or NOT CHECKED), 2 usage:
the command, or the file's class or function as written, cannot be used (the message says what to change), or
gradcheck's own failure.
"""

from __future__ import annotations

EXIT_PASS, EXIT_MISMATCH, EXIT_USAGE, EXIT_STUDENT = 0, 1, 2, 3

__all__ = [
    "EXIT_PASS", "EXIT_MISMATCH", "EXIT_USAGE", "EXIT_STUDENT", "GradcheckError", "UsageError", "TwinError",
    "GraderError", "InternalError", "StudentCodeError", "NotCheckedError", "ProtocolError", "GradientShapeError", "NonFiniteError",
    "InputModifiedError", "MissingGradientError", "UnusableError", "error_kind"]


class GradcheckError(Exception):
    """Base of every error gradcheck raises on purpose; ``exit_code`` is what :func:`gradcheck.cli.main` returns."""
    exit_code = EXIT_USAGE


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
    """The code under check failed: raised, did not import, or broke the protocol (exit 3)."""
    exit_code = EXIT_STUDENT


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


class NonFiniteError(StudentCodeError):
    """A forward output or gradient contains NaN or infinity: a wrong result (exit 1)."""
    exit_code = EXIT_MISMATCH


class InputModifiedError(StudentCodeError):
    """``forward`` wrote into its input: the caller's array changed, a wrong result (exit 1)."""
    exit_code = EXIT_MISMATCH


def error_kind(exc: GradcheckError) -> str:
    """The words the CLI says before an error's exit code (``gradcheck: usage error (exit 2): ...``), by its exit
    code and type, the same wherever the error is printed (the check's diagnosis or the command)."""
    if isinstance(exc, GraderError):
        return "gradcheck could not run the check"
    if isinstance(exc, NotCheckedError):
        return "not checked"
    return {EXIT_USAGE: "usage error", EXIT_STUDENT: "the checked code failed",
            EXIT_MISMATCH: "wrong result"}.get(exc.exit_code, "error")
