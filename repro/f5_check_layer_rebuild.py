"""Run from the worktree root: PYTHONPATH=. .venv/bin/python repro/f5_check_layer_rebuild.py

verify37 F5: check_layer rebuilds the layer for its constructor-argument re-check by copying it and setting the
attribute: a correct Softplus deriving self.inv = 1/beta in __init__ wrongly FAILs at beta=0.7; a 1/p dropout storing
p as self.drop is not re-checked (a wrong PASS, nothing said)."""
import numpy as np

import gradcheck


class Softplus:
    """PyTorch's Softplus(beta): Y = log(1 + exp(beta X)) / beta, correct; beta=1.0 is re-checked at 0.7."""

    def __init__(self, beta=1.0):
        self.beta = beta
        self.inv = 1.0 / beta

    def forward(self, X, training=False):
        self.X = X
        return np.logaddexp(0, self.beta * X) * self.inv

    def backward(self, dY):
        return dY / (1 + np.exp(-self.beta * self.X))


class DropP:
    """Inverted dropout whose backward divides by p (wrong; right only at p=0.5), p stored as self.drop."""

    def __init__(self, p=0.5, seed=0):
        self.drop = p
        self.rng = np.random.default_rng(seed)
        self.mask, self.mask_fixed = None, False

    def fix_mask(self, on=True):
        self.mask_fixed = on

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        if not (self.mask_fixed and self.mask is not None):
            self.mask = self.rng.random(X.shape) >= self.drop
        return X * self.mask / (1 - self.drop)

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask / self.drop


if __name__ == "__main__":
    r = gradcheck.check_layer(Softplus(1.0), (4, 3), twin=None)
    print("Softplus(beta=1.0), correct:", "PASS" if r.passed else "FAIL", r.name, [n for n in r.notes if "constructor" in n])
    r = gradcheck.check_layer(DropP(0.5), (4, 3), twin=None)
    print("DropP(p=0.5) dividing by p, wrong:", "PASS" if r.passed else "FAIL", r.name,
          [n for n in r.notes if "constructor" in n])
    r = gradcheck.check_layer(DropP(0.5), (4, 3), twin=None, init={"p": 0.5})
    print("DropP(p=0.5), init={'p': 0.5}:", "PASS" if r.passed else "FAIL", r.name,
          [n for n in r.notes if "constructor" in n])
