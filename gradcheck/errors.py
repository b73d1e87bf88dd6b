"""Exception types raised by gradcheck, and the exit codes the CLI maps them to.

Every exception carries a one-paragraph message meant to be read by a student
or a grader: it names the layer, the tensor or method involved, what was
expected and what came instead.

Exit codes (used by :mod:`gradcheck.cli`)
-----------------------------------------
One rule: 1 when the checked code ran and something it computed is wrong, 3 when it
could not be checked because it did not run to the end.

0  every compared gradient is within tolerance
1  a result is wrong: a gradient outside tolerance, or an output or gradient of the
   wrong shape or dtype (float32, int64), missing (None) or holding NaN/inf
   (:class:`GradientShapeError`, :class:`NonFiniteError`); for ``train``, a failed
   requirement
2  usage error: bad arguments, a file or class that is not there; also
   gradcheck itself could not run the check (:class:`GraderError`: its sandbox
   failed outside the checked code, e.g. out of memory receiving the inputs)
3  the checked code could not be checked: it did not import, raised, hung, exited,
   crashed, or broke the layer protocol (no forward/backward, params not a dict)
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
    """Base class of every error gradcheck raises on purpose.

    Attributes
    ----------
    exit_code : int
        The process exit code :func:`gradcheck.cli.main` returns for it.
    """

    exit_code = EXIT_USAGE


class UsageError(GradcheckError):
    """gradcheck was called wrongly: bad shape, tolerance, path or class name (exit 2)."""

    exit_code = EXIT_USAGE


class TwinError(GradcheckError):
    """The autoprop twin of a layer could not be built or does not match it (exit 2).

    Raised when ``twin="auto"`` finds a class of the same name in
    ``autoprop.layers`` / ``autoprop.losses`` but cannot construct it, or when a
    twin's ``variables`` keys or shapes differ from the manual layer's ``params``.
    """

    exit_code = EXIT_USAGE


class GraderError(GradcheckError):
    """gradcheck itself failed, outside the checked code (exit 2): e.g. its sandbox process ran
    out of memory unpacking the inputs. The student's code is not blamed."""

    exit_code = EXIT_USAGE


class StudentCodeError(GradcheckError):
    """The code under check failed: raised, did not import, or broke the protocol (exit 3)."""

    exit_code = EXIT_STUDENT


class ProtocolError(StudentCodeError):
    """The object does not follow the manualprop layer/loss protocol.

    For example: no ``forward``/``backward`` method, ``params`` not a dict of
    arrays, ``grads`` missing a key after ``backward``.
    """


class GradientShapeError(StudentCodeError):
    """``backward`` returned ``None`` or an array of the wrong shape or dtype, or a ``grads``
    entry has a shape different from its parameter: a wrong result (exit 1)."""

    exit_code = EXIT_MISMATCH


class NonFiniteError(StudentCodeError):
    """A forward output or gradient contains NaN or infinity: a wrong result (exit 1)."""

    exit_code = EXIT_MISMATCH
