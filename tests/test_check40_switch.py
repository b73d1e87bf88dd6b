"""Messages of ``gradcheck check`` name the layer's own mode switch (session 40, corpus39 L1 and M2): a forward's
``train=`` keyword as ``train=False`` (it said ``forward(x, training=False)``, naye971012's
Batch_Normalization_1D_np), and a switch read from an attribute, ``self.is_mask``, as set on the layer before the call
(it said ``forward(x_q, x_k, x_v, training=False)`` and ``forward(X, self.is_mask=True)``)."""

import pytest
from test_cli import check_source

SOURCE = '''
import numpy as np


class RunningScale:
    """Scales by the batch's max in training (train=True), by the running max in eval: none before a training call."""

    def __init__(self):
        self.running = None

    def forward(self, x, train=True):
        if train:
            self.s = np.abs(x).max()
            self.running = self.s
        else:
            self.s = self.running * 1.0
        return x / self.s

    def backward(self, dY):
        return dY / self.s


class MaskedTwice:
    def __init__(self):
        self.is_mask = False

    def forward(self, x):
        if self.is_mask:
            self.m = np.tril(np.ones(x.shape[-2:]))
            return x * self.m[None] * self.undefined
        self.m = 1.0
        return x * 2

    def backward(self, dY):
        return 2 * dY * self.m
'''


@pytest.mark.parametrize("name,said", [
    ("RunningScale", "while checking eval mode: forward(X, train=False) then backward(dY): RunningScale.forward(x, "
                     "train=False) with x of shape (2, 3, 3) raised TypeError"),  # a train= keyword
    ("MaskedTwice", "forward(X) (self.is_mask = True) then backward(dY): MaskedTwice.forward(x) (self.is_mask = True) "
                    "with x of shape (2, 3, 3) raised AttributeError"),  # a switch read from self
])
def test_the_switch_is_named_as_the_layer_has_it(tmp_path, name, said):
    code, out = check_source(tmp_path, SOURCE, name, "--input-shape", "2,3,3")
    text = " ".join(out.split())
    assert code == 3 and said in text, text
    assert "training=" not in text and "forward(X, self.is_mask=True)" not in text, text
