"""Header and NOT CHECKED wording in the student's own names (session 16): Deep Learning from Scratch vol. 2's model
whose ``params`` list collects its layers' arrays no longer calls those layers "no parameters" (tester15 L4), and an
item of a ``params`` list with no gradient is offered ``self.grads[2]``, not ``self.dparams[2]`` / ``self._params[2]``.
Each test fails on the code before its fix."""

from test_cli import both, run_here, student

from gradcheck._adapters import undecided_text

TWO_LAYER = """
import numpy as np
class Affine:
    def __init__(self, W, b):
        self.params, self.grads = [W, b], [np.zeros_like(W), np.zeros_like(b)]
    def forward(self, x):
        self.x = x
        return x @ self.params[0] + self.params[1]
    def backward(self, dout):
        self.grads[0][...] = self.x.T @ dout
        self.grads[1][...] = dout.sum(axis=0)
        return dout @ self.params[0].T
class TwoLayerNet:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.layers = [Affine(rng.standard_normal((5, 4)), np.zeros(4)), Affine(rng.standard_normal((4, 3)), np.zeros(3))]
        self.params, self.grads = [], []
        for layer in self.layers:
            self.params += layer.params
            self.grads += layer.grads
    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x
    def backward(self, dout):
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout
"""


def test_layers_whose_arrays_the_model_collects_are_not_said_to_have_none(tmp_path):
    """tester15 L4: before, "layers.0 (Affine: no parameters)" and then "the model's params[0] collects
    layers.0.params[0]"."""
    f = student(tmp_path, TWO_LAYER, "net.py")
    p = run_here("check", f"{f}::TwoLayerNet", "--input-shape", "6,5")
    out = both(p)
    assert p.returncode == 0, out
    assert "layers.0 (Affine: params[0], params[1], checked as the model's params[0], params[1])" in out, out
    assert "layers.1 (Affine: params[0], params[1], checked as the model's params[2], params[3])" in out, out
    assert "no parameters" not in out, out


def test_a_list_item_without_gradient_is_named_as_the_student_wrote_it():
    """Before: "(then set self.dparams[2]) or a constant (then name it self._params[2], ...)"."""
    text = undecided_text(["params[2]"])
    assert "(then set self.grads[2])" in text and "make it an attribute of its own outside self.params" in text, text
    assert "dparams" not in text and "_params[2]" not in text and "--constants params[2]" in text, text
    assert "(then set self.dWs[1])" in undecided_text(["Ws[1]"])
    assert "(then set self.dbh) or a constant (then name it self._bh" in undecided_text(["bh"])  # as before
