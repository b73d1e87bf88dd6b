"""Optimizers for autoprop Variables: the same implementation as manualprop's.

``optimizer.apply_gradients(zip(grads, model.trainable_variables))`` updates each
Variable with ``assign_sub`` (a new array, so values a tape saved stay valid). The
update rules live once, in :mod:`manualprop.optim` (PyTorch's formulas, Keras's
argument names); this module only re-exports them under TensorFlow's module name.
"""

from manualprop.optim import SGD, Adam, Optimizer, RMSProp

__all__ = ["SGD", "Adam", "Optimizer", "RMSProp"]
