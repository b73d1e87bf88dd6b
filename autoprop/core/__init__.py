"""autoprop's core: Tensor/Variable, the gradient tape, and the primitive/VJP registry.

``tensor`` (Tensor, Variable), ``tape`` (GradientTape, the reverse walk), ``observe``
(explain's breadcrumbs), ``registry`` (the record type and numpy dispatch; the records
themselves, one per primitive, in ``prims/`` by family), ``forward``
(ForwardAccumulator), ``control`` (stop_gradient, custom_gradient, numpy_function),
``functional`` (hessian, hessian-vector products), ``diagnose`` (explain, summary).
Nothing here knows about layers, losses or gradient checking.
"""

from . import registry
from .control import custom_gradient, numpy_function, stop_gradient
from .diagnose import explain_op
from .forward import ForwardAccumulator
from .functional import hessian, hessian_vector_product
from .observe import TapeEscapeError, TapeEscapeWarning, strict_mode
from .registry import PRIMITIVES, Primitive
from .tape import GradientTape, UnconnectedGradients
from .tensor import Tensor, Variable

__all__ = [
    "ForwardAccumulator", "GradientTape", "PRIMITIVES", "Primitive", "Tensor",
    "UnconnectedGradients", "Variable", "custom_gradient", "explain_op", "hessian",
    "hessian_vector_product", "numpy_function", "registry", "stop_gradient",
    "TapeEscapeError", "TapeEscapeWarning", "strict_mode",
]
