"""verify41 M2: ``--twin-init`` replaced every argument the twin would have read from ``--init`` and the
layer's attributes, so a right LayerNorm with ``self.eps = 1e-3`` given only ``normalized_shape`` was compared
with a twin at its default eps 1e-5 and FAILed (exit 1). ``--twin-init`` now gives the twin's own arguments *over*
those read as without it (the twin is built as the student's layer); ``--reference-init`` stays as given.
"""
import numpy as np
from test_cli import both, run_here, student

from gradcheck.check_command import build_reference
from gradcheck.sources import build_twin

LAYER_NORM = '''
import numpy as np

class LayerNorm:
    """Right LayerNorm over the last axis; its size argument is named dim, not normalized_shape."""
    def __init__(self, dim, eps=1e-5):
        self.eps = eps
        self.params = {"gamma": np.ones(dim) * 1.3, "beta": np.zeros(dim) + 0.2}
        self.grads = {}

    def forward(self, X, training=False):
        mu = X.mean(-1, keepdims=True)
        var = X.var(-1, keepdims=True)
        self.inv = 1 / np.sqrt(var + self.eps)
        self.xh = (X - mu) * self.inv
        return self.xh * self.params["gamma"] + self.params["beta"]

    def backward(self, dY):
        D = dY.shape[-1]
        self.grads["gamma"] = (dY * self.xh).reshape(-1, D).sum(0)
        self.grads["beta"] = dY.reshape(-1, D).sum(0)
        dxh = dY * self.params["gamma"]
        return self.inv * (dxh - dxh.mean(-1, keepdims=True) - self.xh * (dxh * self.xh).mean(-1, keepdims=True))
'''


class LayerNorm:  # (the twin is found by the class name)
    def __init__(self, dim, eps):
        self.eps = eps
        self.params = {"gamma": np.ones(dim), "beta": np.zeros(dim)}
        self.grads = {}


def test_the_twin_takes_the_layers_eps_beside_its_own_size():
    twin, note = build_twin(LayerNorm(4, 1e-3), "layer", {"dim": 4, "eps": 1e-3}, {"normalized_shape": 4})
    assert note == "" and getattr(twin, "twin", twin).eps == 1e-3
    twin, _ = build_twin(LayerNorm(4, 1e-3), "layer", {"dim": 4}, {"normalized_shape": 4, "eps": 0.25})
    assert getattr(twin, "twin", twin).eps == 0.25  # its own argument wins


def test_the_reference_init_is_still_used_as_given():
    """The reference is the right layer at settings staff pin (a swapped momentum must differ from it:
    tests/test_cli_newuser35.py): its --reference-init is not merged with the layer's attributes."""
    ref = build_reference("manualprop.LayerNorm", {"dim": 4}, 0, LayerNorm(4, 1e-3), "LayerNorm", '{"normalized_shape": 4}')
    assert ref.eps == 1e-5


def test_a_right_layer_norm_with_its_own_eps_passes_against_the_twin(tmp_path):
    f = student(tmp_path, LAYER_NORM)
    p = run_here("check", f"{f}::LayerNorm", "--input-shape", "4,6", "--init", '{"dim": 6, "eps": 1e-3}',
                 "--twin", "--twin-init", '{"normalized_shape": 6}')
    text = both(p)
    assert p.returncode == 0, text
    assert "manual~tape" in text and "PASS: LayerNorm" in text
