"""Exception types raised by gradcheck, and the exit codes the CLI maps them to.

Every message is one paragraph for a student or grader: the layer, the tensor or method, what was
expected and what came. One rule for the codes (listed in ``gradcheck --help``): 1 when the checked
code ran and something it computed is wrong, 3 when it could not be checked because it did not run
to the end, 2 for usage errors and for gradcheck itself failing outside the checked code.
"""

from __future__ import annotations

EXIT_PASS = 0
EXIT_MISMATCH = 1
EXIT_USAGE = 2
EXIT_STUDENT = 3

__all__ = [
    "EXIT_PASS", "EXIT_MISMATCH", "EXIT_USAGE", "EXIT_STUDENT", "GradcheckError", "UsageError", "TwinError",
    "GraderError", "StudentCodeError", "ProtocolError", "GradientShapeError", "NonFiniteError"]


class GradcheckError(Exception):
    """Base class of every error gradcheck raises on purpose; ``exit_code`` is what :func:`gradcheck.cli.main` returns."""

    exit_code = EXIT_USAGE


class UsageError(GradcheckError):
    """gradcheck was called wrongly: bad shape, tolerance, path or class name (exit 2)."""

    exit_code = EXIT_USAGE


class TwinError(GradcheckError):
    """The autoprop twin could not be built, or its ``variables`` differ from the layer's ``params`` (exit 2)."""

    exit_code = EXIT_USAGE


class GraderError(GradcheckError):
    """gradcheck itself failed, outside the checked code (exit 2): e.g. its sandbox process ran
    out of memory unpacking the inputs. The student's code is not blamed."""

    exit_code = EXIT_USAGE


class StudentCodeError(GradcheckError):
    """The code under check failed: raised, did not import, or broke the protocol (exit 3)."""

    exit_code = EXIT_STUDENT


class ProtocolError(StudentCodeError):
    """The object breaks the manualprop protocol: no ``forward``/``backward``, ``params`` not a dict of arrays,
    a ``grads`` key missing (exit 3)."""


class GradientShapeError(StudentCodeError):
    """``backward`` returned ``None`` or an array of the wrong shape or dtype, or a ``grads``
    entry has a shape different from its parameter: a wrong result (exit 1)."""

    exit_code = EXIT_MISMATCH


class NonFiniteError(StudentCodeError):
    """A forward output or gradient contains NaN or infinity: a wrong result (exit 1)."""

    exit_code = EXIT_MISMATCH
