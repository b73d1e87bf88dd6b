"""scipy's names over autoprop Tensors: ``from autoprop.scipy import special, linalg, stats``."""

from . import linalg, special, stats  # noqa: F401
