"""`gradcheck check` on three layer styles corpus36 met in public numpy code, each refused before (exit 2 or 3)
though the code works; written here in those styles (not copied):

- F1: ``backward`` returns ``(dX, {'gamma': dgamma, 'beta': dbeta})`` (uesina15-max's numpy transformer): the dict's
  keys name the weights (or their gradients: ``dgamma``, ``grad_gamma``), read in the class's weight order;
- F2: a ``@classmethod initialize(cls, units_prev, units_curr)`` factory beside ML-From-Scratch-style
  ``forward_pass``/``backward_pass`` (SkalskiP's ILearnDeepLearning): called as ML-From-Scratch's
  ``initialize(optimizer)`` hook, its TypeError blamed on ``__init__``;
- F3: ``backprop(d_L_d_out)`` as the backward and ``backprop(d_L_d_out, learn_rate)`` stepping its own weights
  (Victor Zhou's cnn-from-scratch): "has no backward() method", "missing ... 'learn_rate'".

Each correct layer PASSes; a planted bug FAILs naming its tensor (never a PASS).
"""

import pytest
from test_cli import check_source

LAYERNORM = """
import numpy as np

class LayerNorm:
    def __init__(self, dim, eps=1e-5):
        self.eps = eps
        rng = np.random.default_rng(1)
        self.gamma = 1.0 + 0.1 * rng.normal(size=dim)
        self.beta = 0.1 * rng.normal(size=dim)

    def forward(self, x):
        self.mu = x.mean(axis=-1, keepdims=True)
        self.std = np.sqrt(x.var(axis=-1, keepdims=True) + self.eps)
        self.xhat = (x - self.mu) / self.std
        return self.gamma * self.xhat + self.beta

    def backward(self, dout):
        axes = tuple(range(dout.ndim - 1))
        dgamma = DGAMMA
        dbeta = dout.sum(axis=axes)
        dxhat = dout * self.gamma
        n = dout.shape[-1]
        dx = (dxhat - dxhat.mean(-1, keepdims=True) - self.xhat * (dxhat * self.xhat).mean(-1, keepdims=True)) / self.std
        return dx, {KEYS}
"""


def layernorm(dgamma="(dout * self.xhat).sum(axis=axes)", keys="'gamma': dgamma, 'beta': dbeta"):
    return LAYERNORM.replace("DGAMMA", dgamma).replace("KEYS", keys)


LN_ARGS = ("--input-shape", "2,3,6", "--init", '{"dim": 6}')


@pytest.mark.parametrize("keys", ["'gamma': dgamma, 'beta': dbeta", "'dbeta': dbeta, 'dgamma': dgamma",
                                  "'grad_gamma': dgamma, 'grad_beta': dbeta"])
def test_f1_a_dict_of_weight_gradients_returned_last_is_read_by_its_keys(tmp_path, keys):
    code, out = check_source(tmp_path, layernorm(keys=keys), "LayerNorm", *LN_ARGS)
    assert code == 0, out
    assert "PASS: LayerNorm: every gradient (dX, dgamma, dbeta) matches" in out, out
    assert "the weights' gradients read from the dict backward returns last" in out, out
    assert "paired by that order" not in out, out


@pytest.mark.parametrize("bug, wrong", [
    ({"dgamma": "dout.sum(axis=axes)"}, "dgamma"),                       # gamma's gradient summed as the bias's
    ({"keys": "'gamma': dbeta, 'beta': dgamma"}, "dgamma, dbeta"),        # the keys swapped
])
def test_f1_a_wrong_gradient_in_the_dict_fails_naming_it(tmp_path, bug, wrong):
    code, out = check_source(tmp_path, layernorm(**bug), "LayerNorm", *LN_ARGS)
    assert code == 1, out
    assert f"FAIL: LayerNorm: gradient mismatch in {wrong}" in out, out


def test_f1_a_dict_with_a_key_naming_no_weight_is_still_refused_clearly(tmp_path):
    code, out = check_source(tmp_path, layernorm(keys="'scale': dgamma, 'beta': dbeta"), "LayerNorm", *LN_ARGS)
    assert code == 3, out
    assert "returned a tuple of 2 items ((2, 3, 6), dict)" in out, out


DENSE_PASS = """
import numpy as np

class DenseLayer:
    def __init__(self, w, b):
        self._w, self._b = np.asarray(w, float), np.asarray(b, float)
        self._dw = self._db = None

    @classmethod
    def initialize(cls, units_prev, units_curr):
        rng = np.random.default_rng(0)
        return cls(w=rng.normal(size=(units_curr, units_prev)) * 0.1, b=rng.normal(size=(1, units_curr)) * 0.1)

    @property
    def weights(self):
        return self._w, self._b

    @property
    def gradients(self):
        return None if self._dw is None else (self._dw, self._db)

    def set_wights(self, w, b):
        self._w, self._b = w, b

    def forward_pass(self, a_prev, training):
        self._a_prev = np.array(a_prev, copy=True)
        return a_prev @ self._w.T + self._b

    def backward_pass(self, da_curr):
        self._dw = DW
        self._db = np.sum(da_curr, axis=0, keepdims=True)
        return da_curr @ self._w
"""
DENSE_INIT = '{"w": [[0.1, 0.2, -0.3, 0.4], [0.5, -0.6, 0.7, 0.8], [0.9, 1.0, -1.1, 0.2]], "b": [[0.1, 0.2, 0.3]]}'


def test_f2_a_classmethod_initialize_is_a_factory_not_the_optimizer_hook(tmp_path):
    code, out = check_source(tmp_path, DENSE_PASS.replace("DW", "da_curr.T @ self._a_prev"), "DenseLayer",
                             "--input-shape", "5,4", "--init", DENSE_INIT)
    assert code == 0, out
    assert "PASS: DenseLayer: every gradient (dX, _dw, _db) matches" in out, out
    assert "initialize(optimizer) called" not in out and "raised TypeError" not in out, out


def test_f2_its_1_over_m_bug_is_named(tmp_path):
    code, out = check_source(tmp_path, DENSE_PASS.replace("DW", "da_curr.T @ self._a_prev / self._a_prev.shape[0]"),
                             "DenseLayer", "--input-shape", "5,4", "--init", DENSE_INIT)
    assert code == 1, out
    assert "FAIL: DenseLayer: gradient mismatch in _dw." in out, out
    assert "_dw is 5 times too small (batch size 5): an extra 1/batch" in out, out


POOL = """
import numpy as np

class MaxPool2:
    def iterate_regions(self, image):
        h, w, _ = image.shape
        for i in range(h // 2):
            for j in range(w // 2):
                yield image[i * 2:i * 2 + 2, j * 2:j * 2 + 2], i, j

    def forward(self, input):
        self.last_input = input
        h, w, f = input.shape
        out = np.zeros((h // 2, w // 2, f))
        for region, i, j in self.iterate_regions(input):
            out[i, j] = np.amax(region, axis=(0, 1))
        return out

    def backprop(self, d_L_d_out):
        d = np.zeros(self.last_input.shape)
        for region, i, j in self.iterate_regions(self.last_input):
            amax = np.amax(region, axis=(0, 1))
            for i2 in range(2):
                for j2 in range(2):
                    for f2 in range(region.shape[2]):
                        if region[i2, j2, f2] == amax[f2]:
                            d[i * 2 + I2, j * 2 + j2, f2] = d_L_d_out[i, j, f2]
        return d
"""

DENSE_RATE = """
import numpy as np

class Dense:
    def __init__(self, n_in=4, n_out=3):
        rng = np.random.default_rng(2)
        self.weights, self.biases = rng.normal(size=(n_in, n_out)) / n_in, np.zeros(n_out) + 0.1

    def forward(self, input):
        self.last_input = input
        return input @ self.weights + self.biases

    def backprop(self, d_L_d_t, learn_rate):
        d_L_d_w = self.last_input.T @ d_L_d_t
        d_L_d_inputs = d_L_d_t @ self.weights.T
        self.weights -= learn_rate * d_L_d_w
        self.biases -= learn_rate * BIAS
        return d_L_d_inputs
"""


@pytest.mark.parametrize("i2, code", [("i2", 0), ("j2", 1)])
def test_f3_backprop_is_read_as_backward(tmp_path, i2, code):
    got, out = check_source(tmp_path, POOL.replace("I2", i2), "MaxPool2", "--input-shape", "4,4,2")
    assert got == code, out
    assert "backward is backprop() (the class has no backward)" in out, out
    assert ("PASS: MaxPool2: every gradient (dX) matches" in out) == (code == 0), out
    assert ("FAIL: MaxPool2: gradient mismatch in dX" in out) == (code == 1), out


@pytest.mark.parametrize("bias, code", [("d_L_d_t.sum(axis=0)", 0), ("d_L_d_t.mean(axis=0)", 1)])
def test_f3_a_self_stepping_backprop_with_learn_rate_is_read(tmp_path, bias, code):
    got, out = check_source(tmp_path, DENSE_RATE.replace("BIAS", bias), "Dense", "--input-shape", "5,4")
    assert got == code, out
    assert "missing 1 required positional argument" not in out, out
    assert ("PASS: Dense: every gradient (dX, dweights, dbiases) matches" in out) == (code == 0), out
    assert ("FAIL: Dense: gradient mismatch in dbiases." in out) == (code == 1), out
