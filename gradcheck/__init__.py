"""gradcheck: compare manual, tape and numerical gradients.

Public API
----------
check_layer, check_loss
    Three-way check of one layer / loss; return a :class:`CheckResult`.
CheckResult, TensorRecord, Comparison
    Results: ``.passed``, ``.rows``, ``.table()``, ``.to_dict()``.
diagnose_layer, check_vjp, Diagnosis, Finding
    Find and name gradient bugs (:mod:`gradcheck.diagnose`): structural probes,
    bug signatures, the first failing layer of a model; one primitive's VJP alone.
relative_error
    ``|a - b| / max(|a| + |b|, tiny)``, element-wise.
numerical_gradient, layer_numerical_gradients, DEFAULT_EPS
    Central differences (:mod:`gradcheck.numerical`).
GradcheckError, UsageError, TwinError, StudentCodeError, ProtocolError,
GradientShapeError, NonFiniteError
    Exceptions (:mod:`gradcheck.errors`), each with an ``exit_code``.

Submodules: ``plots`` (matplotlib figures), ``train`` (manual vs tape training on
digits), ``zoo`` (every built-in layer), ``report`` (text tables), ``cli``.
"""

from .check import CheckResult, Comparison, TensorRecord, check_layer, check_loss, relative_error
from .diagnose import Diagnosis, Finding, check_vjp, diagnose_layer
from .errors import (
    GradcheckError,
    GradientShapeError,
    NonFiniteError,
    ProtocolError,
    StudentCodeError,
    TwinError,
    UsageError,
)
from .numerical import DEFAULT_EPS, layer_numerical_gradients, numerical_gradient

__all__ = ["DEFAULT_EPS", "CheckResult", "Comparison", "GradcheckError", "GradientShapeError",
           "NonFiniteError", "ProtocolError", "StudentCodeError", "TensorRecord", "TwinError", "UsageError",
           "check_layer", "check_loss", "check_vjp", "diagnose_layer", "Diagnosis", "Finding",
           "layer_numerical_gradients", "numerical_gradient", "relative_error"]
