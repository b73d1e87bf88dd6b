"""autoprop's core: Tensor/Variable, the gradient tape, and the primitive/VJP registry.

Floor by floor, each importing only the floors below it (ARCHITECTURE.md): ``views``,
``tensor`` (Tensor, Variable), ``observe`` (explain's breadcrumbs), ``tape`` (GradientTape, the
reverse walk; it knows no primitive), ``registry`` (the record type and its tables), ``prims/``
(the records, one module per family, and numpy's dispatch), then ``forward``
(ForwardAccumulator), ``control`` (stop_gradient, custom_gradient, numpy_function),
``functional`` (hessian, hessian-vector products), ``diagnose`` (explain, summary) and
``source`` (backward_source). Nothing here knows about layers, losses or gradient checking.
"""

import numpy as np

from . import diagnose, observe, prims, registry, source, tape, tensor, views  # noqa: F401  (prims: importing it registers the records)
from .control import custom_gradient, numpy_function, stop_gradient
from .diagnose import explain_op
from .forward import ForwardAccumulator
from .functional import hessian, hessian_vector_product
from .observe import TapeEscapeError, TapeEscapeWarning, strict_mode
from .registry import PRIMITIVES, Primitive
from .tape import GradientTape, TapeArgumentError, TapeStateError, UnconnectedGradients
from .tensor import Tensor, Variable

__all__ = [
    "ForwardAccumulator", "GradientTape", "PRIMITIVES", "Primitive", "Tensor",
    "UnconnectedGradients", "Variable", "custom_gradient", "explain_op", "hessian",
    "hessian_vector_product", "numpy_function", "registry", "stop_gradient",
    "TapeEscapeError", "TapeEscapeWarning", "strict_mode", "TapeArgumentError", "TapeStateError",
]

# What the lower floors call up at run time, without importing it: Tensor's operators find their
# primitive in the registry by name (``_R.add``), a conversion that leaves a recording tape tells
# the observer, an escape's message reads the registry's numpy table, and the tape's explain,
# summary and backward_source are diagnose's and source's code.
tensor._R = observe._R = registry
tensor._observe = observe
tape._diagnose, tape._source = diagnose, source
# The reference count of a tensor one name holds, measured on this interpreter (an alias refuses `+=`).
views.calibrate(lambda: tensor.Tensor._wrap(np.zeros(2)))
