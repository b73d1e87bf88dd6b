"""scipy's names over autoprop Tensors: ``from autoprop.scipy import special, linalg, stats, signal``."""

from . import linalg, signal, special, stats  # noqa: F401
