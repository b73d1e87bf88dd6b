"""autoprop's core: Tensor/Variable, the gradient tape, and the primitive/VJP registry.

Nothing here knows about layers, losses or gradient checking.
"""

from . import registry
from .registry import PRIMITIVES, Primitive
from .tape import GradientTape
from .tensor import Tensor, Variable

__all__ = ["GradientTape", "PRIMITIVES", "Primitive", "Tensor", "Variable", "registry"]
