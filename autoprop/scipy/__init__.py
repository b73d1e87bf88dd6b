"""scipy's names over autoprop Tensors: ``from autoprop.scipy import special, linalg``."""

from . import linalg, special  # noqa: F401
