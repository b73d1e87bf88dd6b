"""Session 30's leftovers of the staff policy ``gradcheck_no_forward_in_backward`` (fixr30's notes), fixed by dup31.

Losses: a loss's backward made of central differences of its own forward got credit under the policy (losses were
loaded without it): now a loss is counted as a layer is, in backward and around forward.

Nested containers: a ``Sequential`` holding a ``Sequential`` calls forward's own code again (the inner container's) and
was refused as a re-entry. A container's forward may now call the forward of each object of its own class it held when
it was loaded (any nesting depth); a class re-entering its own forward, or a copy of itself made later, is refused.
"""


import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck.sandbox import SandboxError
from tests.test_grading_keys_s35 import shown
from tests.test_grading_policy import INIT, SOLUTION, _sandbox, graded

#: an MSE whose backward is central differences of its own forward (right numbers, no derivation)
FD_LOSS = '''import numpy as np


class MSE:
    def forward(self, y_true, y_pred):
        self.y_true, self.y_pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
        return float(np.mean((self.y_pred - self.y_true) ** 2))

    def backward(self):
        t, p, h = self.y_true, self.y_pred.copy(), 1e-6
        g = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            old = p[i]
            p[i] = old + h
            up = self.forward(t, p)
            p[i] = old - h
            g[i] = (up - self.forward(t, p)) / (2 * h)
            p[i] = old
        self.forward(t, p)
        return g


class MSEInForward:
    inner = False

    def forward(self, y_true, y_pred):
        t, p = np.asarray(y_true, dtype=float), np.array(y_pred, dtype=float)
        L = float(np.mean((p - t) ** 2))
        if not self.inner:
            self.inner, g = True, np.zeros_like(p)
            try:
                for i in np.ndindex(p.shape):
                    old = p[i]
                    p[i] = old + 1e-6
                    up = self.forward(t, p)
                    p[i] = old - 1e-6
                    g[i] = (up - self.forward(t, p)) / 2e-6
                    p[i] = old
            finally:
                self.inner = False
            self.g = g
        return L

    def backward(self):
        return self.g


class MSEHonest:
    def forward(self, y_true, y_pred):
        self.d = np.asarray(y_pred, dtype=float) - np.asarray(y_true, dtype=float)
        return float(np.mean(self.d ** 2))

    def backward(self):
        return 2 * self.d / self.d.size
'''


def _data():
    rng = np.random.default_rng(3)
    return rng.standard_normal((4, 3)), rng.standard_normal((4, 3))


def test_a_loss_backward_of_central_differences_fails_the_policy(tmp_path):
    """Was: no SandboxError (losses were not counted): the cheat's gradient, right to 1e-9, got the credit."""
    y_true, y_pred = _data()
    with _sandbox(tmp_path, FD_LOSS) as sb:
        free = sb.load_loss("layers.py", "MSE")
        free.forward(y_true, y_pred)
        np.testing.assert_allclose(free.backward(), 2 * (y_pred - y_true) / 12, rtol=1e-6)  # right numbers
        strict = sb.load_loss("layers.py", "MSE", no_forward_in_backward=True)
        strict.forward(y_true, y_pred)
        with pytest.raises(SandboxError) as info:
            strict.backward()
        text = " ".join(str(info.value).split())
        assert info.value.reason == "policy", text
        assert "MSE.backward called MSE.forward 25 time(s)" in text, text  # 2 per entry and one more at the end


def test_a_loss_taking_differences_inside_forward_fails_the_policy(tmp_path):
    y_true, y_pred = _data()
    with _sandbox(tmp_path, FD_LOSS) as sb:
        loss = sb.load_loss("layers.py", "MSEInForward", no_forward_in_backward=True)
        with pytest.raises(SandboxError) as info:
            loss.forward(y_true, y_pred)
        text = " ".join(str(info.value).split())
        assert info.value.reason == "policy" and "MSEInForward.forward called MSEInForward.forward again 24 " \
            "time(s)" in text, text


def test_an_honest_loss_passes_the_policy(tmp_path):
    y_true, y_pred = _data()
    with _sandbox(tmp_path, FD_LOSS) as sb:
        loss = sb.load_loss("layers.py", "MSEHonest", no_forward_in_backward=True)
        assert loss.no_forward_in_backward
        loss.forward(y_true, y_pred)
        np.testing.assert_allclose(loss.backward(), 2 * (y_pred - y_true) / 12, rtol=1e-12)
        assert loss.forward_calls_in_backward == 0


LOSS_TESTS = '''
import pytest
from gradcheck.grading.checks import class_labels
from manualprop import SoftmaxCrossEntropy as RefCE

@pytest.mark.points(3)
@pytest.mark.gradcheck_no_forward_in_backward
def test_ce_derived_by_hand(student, grade, rng):
    z = 3 * rng.standard_normal((8, 4))
    grade.loss_gradient(student.loss("layers.py", "SoftmaxCrossEntropy"), class_labels(rng, 8, 4), z, RefCE(),
                        points=3)
'''
HONEST_CE = '''    def backward(self):
        n = len(self.y)
        d = self.p.copy()
        d[np.arange(n), self.y] -= 1.0
        return d / n
'''
NUMERIC_CE = '''    def backward(self):
        y, z = self.y, self.z.copy()
        g = np.zeros_like(z)
        for i in np.ndindex(z.shape):
            old = z[i]
            z[i] = old + 1e-6
            up = self.forward(y, z)
            z[i] = old - 1e-6
            g[i] = (up - self.forward(y, z)) / 2e-6
            z[i] = old
        self.forward(y, z)
        return g
'''


@pytest.mark.parametrize("cheat, score", [(True, 0.0), (False, 3.0)])
def test_the_marker_fails_a_numerical_loss_backward_when_graded(tmp_path, cheat, score):
    """Was: 3 of 3 points for the cheat."""
    assert SOLUTION.count(HONEST_CE) == 1
    src = SOLUTION.replace("        self.p = np.exp(log_p)\n", "        self.p, self.z = np.exp(log_p), y_pred\n")
    r, data = graded(tmp_path, src.replace(HONEST_CE, NUMERIC_CE) if cheat else src, LOSS_TESTS)
    assert r.score == pytest.approx(score), data
    if cheat:
        out = shown(data["tests"][0]["output"])
        assert "SoftmaxCrossEntropy.backward called SoftmaxCrossEntropy.forward 65 time(s)" in " ".join(out.split())


#: containers of containers: forward's own code called again on other objects of its class, held since the load
NESTED = SOLUTION + '''

class Sequential:
    def __init__(self, layers):
        self.layers = list(layers)
        self.params = {f"{i}_{k}": v for i, layer in enumerate(self.layers)
                       for k, v in getattr(layer, "params", {}).items()}
        self.grads = {f"{i}_{k}": v for i, layer in enumerate(self.layers)
                      for k, v in getattr(layer, "grads", {}).items()}

    def forward(self, X, training=False):
        for layer in self.layers:
            X = layer.forward(X)
        return X

    def backward(self, dY):
        for i, layer in reversed(list(enumerate(self.layers))):
            dY = layer.backward(dY)
            for k, v in getattr(layer, "grads", {}).items():
                self.grads[f"{i}_{k}"] = v
        return dY


class Deep(Sequential):
    def __init__(self, in_features, out_features):
        inner = Sequential([Sequential([Linear(in_features, 4, rng=0), ReLU()]), Linear(4, 4, rng=1)])
        super().__init__([inner, ReLU(), Sequential([Linear(4, out_features, rng=2)])])


class Twin(Sequential):
    """Central differences of dX taken in forward on a copy of itself made in forward (not held at the load)."""
    def __init__(self, in_features, out_features):
        super().__init__([Linear(in_features, out_features, rng=0)])

    def forward(self, X, training=False):
        Y = super().forward(X)
        if not getattr(self, "copying", False):
            import copy
            twin = copy.copy(self)
            twin.copying = True
            Xc = np.array(X, dtype=float)
            for i in range(Xc.size):
                Xc.flat[i] += 1e-6
                twin.forward(Xc)
                Xc.flat[i] -= 1e-6
        return Y
'''


def test_a_sequential_holding_sequentials_passes_the_policy(tmp_path):
    """Was: "Deep.forward called Deep.forward again 3 time(s)" (the inner containers' forward is the same code)."""
    X = np.random.default_rng(1).standard_normal((4, 5))
    with _sandbox(tmp_path, NESTED) as sb:
        layer = sb.load_layer("layers.py", "Deep", INIT, no_forward_in_backward=True)
        assert check_layer(layer, X, twin=None).passed and layer.forward_calls_in_backward == 0
        probed = sb.load_layer("layers.py", "Deep", INIT, probe_inputs=[X], no_forward_in_backward=True)
        assert check_layer(probed, X, twin=None).passed and probed.forward_calls_in_backward == 0
        assert check_layer(probed.clone(), X, twin=None).passed


def forward_refused(tmp_path, source, name):
    """``(error, its text on one line)``: the SandboxError of one forward of ``source``'s ``name`` loaded under the
    policy (unprobed) on a (4, 5) input; the test fails when forward answers."""
    X = np.random.default_rng(1).standard_normal((4, 5))
    with _sandbox(tmp_path, source) as sb:
        layer = sb.load_layer("layers.py", name, INIT, no_forward_in_backward=True)
        with pytest.raises(SandboxError) as info:
            layer.forward(X)
    return info.value, " ".join(str(info.value).split())


def test_a_container_calling_a_copy_of_itself_made_in_forward_fails_the_policy(tmp_path):
    exc, text = forward_refused(tmp_path, NESTED, "Twin")
    assert exc.reason == "policy" and "Twin.forward called Twin.forward again 20 time(s)" in text, text
