"""A correct CS231n assignment-2 dropout pair: p is the KEEP probability (mask = (rand < p) / p)."""
import numpy as np


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    else:
        out = x
    cache = (dropout_param, mask)
    return out.astype(x.dtype, copy=False), cache


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    if dropout_param["mode"] == "train":
        return dout * mask
    return dout
