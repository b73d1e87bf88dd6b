"""scipy's names over autoprop Tensors: ``from autoprop.scipy import special``."""

from . import special  # noqa: F401
