"""Optimizers for autoprop Variables: the same implementation as manualprop's.

``optimizer.apply_gradients(zip(grads, model.trainable_variables))`` updates each
Variable with ``assign_sub`` (a new array, so tapes' saved values stay valid). The
update rules live once, in :mod:`manualprop.optim`.
"""

from manualprop.optim import SGD, Optimizer

__all__ = ["SGD", "Optimizer"]
