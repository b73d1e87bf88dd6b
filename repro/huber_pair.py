"""fix37a's leftover: a function-pair loss (huber_loss(x, y, delta=1.0) -> (loss, dx)) is not checked again at
another delta, where a class loss is (gradcheck.sources.each_other_arg): its dx clipping at 1, not delta, PASSes."""
import numpy as np


def huber_loss(x, y, delta=1.0):
    r = x - y
    small = np.abs(r) <= delta
    loss = np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta)).mean()
    dx = np.where(np.abs(r) <= 1.0, r, np.sign(r)) / r.size  # BUG: clips at 1, not at delta
    return loss, dx


def huber_ok(x, y, delta=1.0):
    r = x - y
    small = np.abs(r) <= delta
    loss = np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta)).mean()
    dx = np.where(small, r, delta * np.sign(r)) / r.size
    return loss, dx
