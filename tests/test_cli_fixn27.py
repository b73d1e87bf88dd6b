"""newuser27's findings on ``gradcheck check`` and autoprop's Keras API, fixed by fixn27 (in-process, small shapes).

* #3: the Richardson note is said only where the extrapolation changed a verdict, not on every FAIL;
* #4: ``--twin-init`` gives the twin its own constructor arguments, and the advice names it, not ``--init``;
* #5: CS231n's fast-layer names (``conv_forward_im2col``/``conv_backward_im2col``) are found by any spelling;
* #6: ``model.weights`` (Keras's list of every variable), and zipping the dict ``model.variables`` is told;
* the gradient of a local function pair's one input is named by its argument (``dx``, not ``dX``).
"""

import numpy as np
import pytest
from test_cli import both, run_here, student

import autoprop as ap
from autoprop import layers as L
from gradcheck import check_layer, check_loss, function_pair
from manualprop import SoftmaxCrossEntropy

MEAN_BIAS = """
import numpy as np

class LinearMeanBias:
    def __init__(self, in_features, out_features):
        rng = np.random.default_rng(0)
        self.params = {"W": 0.1 * rng.standard_normal((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {}
    def forward(self, X):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]
    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.mean(axis=0)  # the sum over the batch is right
        return dY @ self.params["W"]
"""


def test_a_real_bug_gets_no_richardson_note(tmp_path):
    """L is linear in b: every difference quotient of db is exact up to round-off, so no truncation error exceeded
    anything; the note said it did on every FAIL (the worst element's re-check, which changed no verdict)."""
    f = student(tmp_path, MEAN_BIAS)
    p = run_here("check", f"{f}::LinearMeanBias", "--input-shape", "8,5", "--init",
                 '{"in_features": 5, "out_features": 3}')
    text = both(p)
    assert p.returncode == 1 and "FAIL" in text and "db" in text, text
    assert "Richardson" not in text and "truncation error" not in text, text


def test_the_richardson_note_stays_where_it_changed_the_verdict():
    """newuser26's case: softmax cross-entropy at logits 800 + 40 N(0, 1), step 4.9e-3: the central difference is off
    by its truncation error, the extrapolation agrees with the (correct) gradient: the note counts those elements."""
    rng = np.random.default_rng(5)
    z, y = 800 + 40 * rng.standard_normal((6, 5)), rng.integers(0, 5, size=6)
    res = check_loss(SoftmaxCrossEntropy(), y, z, twin=None)
    c = res.records[-1].get("manual-vs-numerical")
    assert res.passed and c.extrapolated >= 1
    text = " ".join(res.table().split())
    assert f"{c.extrapolated} element(s) differ from the central difference C at the step h" in text
    assert "agree with Richardson's extrapolation" in text


def test_a_wrong_gradient_at_large_logits_is_no_extrapolated_element():
    class Doubled(SoftmaxCrossEntropy):
        def backward(self):
            return 2 * super().backward()

    rng = np.random.default_rng(5)
    z, y = 800 + 40 * rng.standard_normal((6, 5)), rng.integers(0, 5, size=6)
    res = check_loss(Doubled(), y, z, twin=None)
    assert not res.passed and res.records[-1].get("manual-vs-numerical").extrapolated == 0
    assert "Richardson" not in res.table()


LAYER_NORM = """
import numpy as np

class LayerNorm:
    def __init__(self, D, eps=1e-5):
        self.params = {"gamma": np.ones(D), "beta": np.zeros(D)}
        self.grads = {}
        self.eps = eps
    def forward(self, X):
        mu, var = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
        self.inv = 1 / np.sqrt(var + self.eps)
        self.xh = (X - mu) * self.inv
        return self.params["gamma"] * self.xh + self.params["beta"]
    def backward(self, dY):
        D = dY.shape[-1]
        self.grads["gamma"] = (dY * self.xh).sum(0)
        self.grads["beta"] = dY.sum(0)
        dxh = dY * self.params["gamma"]
        return self.inv / D * (D * dxh - dxh.sum(-1, keepdims=True) - self.xh * (dxh * self.xh).sum(-1, keepdims=True))
"""


def test_the_twins_advice_names_twin_init_and_twin_init_builds_it(tmp_path):
    f = student(tmp_path, LAYER_NORM)
    p = run_here("check", f"{f}::LayerNorm", "--input-shape", "6,4", "--init", '{"D": 4}', "--twin")
    text = both(p)
    assert p.returncode == 2, text
    assert "its constructor needs 'normalized_shape'" in text
    assert "Give the twin its own arguments with --twin-init '{\"normalized_shape\": ...}'" in text
    assert "Pass them with --init" not in text

    p = run_here("check", f"{f}::LayerNorm", "--input-shape", "6,4", "--init", '{"D": 4}', "--twin",
                 "--twin-init", '{"normalized_shape": 4, "eps": 1e-5}')
    text = both(p)
    assert p.returncode == 0, text
    assert "manual~tape" in text and "PASS" in text

    p = run_here("check", f"{f}::LayerNorm", "--input-shape", "6,4", "--init", '{"D": 4}',
                 "--twin-init", '{"normalized_shape": 4}')
    assert p.returncode == 2 and "--twin-init gives the arguments of the --twin" in both(p), both(p)


def test_twin_init_is_used_as_given():
    """Its arguments are the twin's, not read again from the layer: a wrong size is the twin's error."""
    from gradcheck.sources import build_twin

    class LayerNorm:
        def __init__(self, D):
            self.params = {"gamma": np.ones(D), "beta": np.zeros(D)}
            self.grads = {}

        def forward(self, X):
            return X

        def backward(self, dY):
            return dY

    twin, note = build_twin(LayerNorm(4), "layer", {"D": 4}, {"normalized_shape": 4, "eps": 1e-3})
    assert note == "" and getattr(twin, "twin", twin).eps == 1e-3


def test_twin_init_is_in_the_help():
    p = run_here("check", "--help")
    assert "--twin-init JSON" in p.stdout and "normalized_shape" in p.stdout


FAST = """
import numpy as np

def conv_forward_im2col(x, w, b, conv_param):
    F, C, HH, WW = w.shape
    N, _, H, W = x.shape
    Ho, Wo = H - HH + 1, W - WW + 1
    cols = np.stack([x[:, :, i:i + HH, j:j + WW].reshape(N, -1) for i in range(Ho) for j in range(Wo)], 1)
    out = (cols @ w.reshape(F, -1).T + b).reshape(N, Ho, Wo, F).transpose(0, 3, 1, 2)
    return out, (x, w, cols, Ho, Wo)

def conv_backward_im2col(dout, cache):
    x, w, cols, Ho, Wo = cache
    F, C, HH, WW = w.shape
    N = x.shape[0]
    d = dout.transpose(0, 2, 3, 1).reshape(N, Ho * Wo, F)
    dw = np.einsum("npf,npk->fk", d, cols).reshape(w.shape)
    dcols = (d @ w.reshape(F, -1)).reshape(N, Ho, Wo, C, HH, WW)
    dx = np.zeros_like(x)
    for i in range(Ho):
        for j in range(Wo):
            dx[:, :, i:i + HH, j:j + WW] += dcols[:, i, j]
    return dx, dw, d.sum((0, 1))

def max_pool_forward_fast(x, pool_param):
    return x[:, :, ::2, ::2] * 0 + x.reshape(*x.shape[:2], x.shape[2] // 2, 2, x.shape[3] // 2, 2).max((3, 5)), x

def max_pool_backward_fast(dout, cache):
    x = cache
    r = x.reshape(*x.shape[:2], x.shape[2] // 2, 2, x.shape[3] // 2, 2)
    m = r == r.max((3, 5), keepdims=True)
    return (m * dout[:, :, :, None, :, None]).reshape(x.shape)
"""

CONV = ("--input-shape", "2,2,4,4;3,2,2,2;3", "--init", '{"conv_param": {"stride": 1, "pad": 0}}')


@pytest.mark.parametrize("name", ["conv", "conv_im2col", "conv_forward_im2col", "conv_backward_im2col"])
def test_a_fast_layer_pair_is_found_by_any_spelling(tmp_path, name):
    f = student(tmp_path, FAST)
    p = run_here("check", f"{f}::{name}", *CONV)
    text = both(p)
    assert p.returncode == 0, text
    assert "protocol: CS231n function pair (conv_forward_im2col/conv_backward_im2col)" in text


def test_max_pool_fast_is_found(tmp_path):
    f = student(tmp_path, FAST)
    p = run_here("check", f"{f}::max_pool", "--input-shape", "2,2,4,4", "--init",
                 '{"pool_param": {"pool_height": 2, "pool_width": 2, "stride": 2}}')
    assert p.returncode == 0 and "(max_pool_forward_fast/max_pool_backward_fast)" in both(p), both(p)


def test_two_suffixed_pairs_of_one_stem_are_named_and_nothing_suggests_the_name_refused(tmp_path):
    f = student(tmp_path, FAST + "\ndef conv_forward_strides(x, w, b, conv_param):\n"
                "    return conv_forward_im2col(x, w, b, conv_param)\n\n"
                "def conv_backward_strides(dout, cache):\n    return conv_backward_im2col(dout, cache)\n")
    p = run_here("check", f"{f}::conv", *CONV)
    text = both(p)
    assert p.returncode == 2, text
    assert ("has several function pairs conv_forward_*/conv_backward_*: conv_forward_im2col/conv_backward_im2col, "
            "conv_forward_strides/conv_backward_strides; name one after '::' (::conv_im2col, ::conv_strides)") in text
    p = run_here("check", f"{f}::conv_strides", *CONV)
    assert p.returncode == 0 and "(conv_forward_strides/conv_backward_strides)" in both(p), both(p)
    p = run_here("check", f"{f}::conv_im2cl", *CONV)
    text = both(p)
    assert p.returncode == 2 and "Function pairs: conv_im2col, conv_strides, max_pool." in text, text
    assert "Did you mean conv_im2col?" in text and "Did you mean conv_im2cl" not in text


def test_a_local_pairs_one_gradient_is_named_by_its_argument():
    def relu_forward(x):
        return np.maximum(x, 0), x

    def relu_backward(dout, cache):
        return dout * (cache > 0)

    x = np.random.default_rng(0).standard_normal((3, 4)) + 0.5
    res = check_layer(function_pair(relu_forward, relu_backward), [x], twin=None)
    assert [r.tensor for r in res.records if r.kind == "gradient"] == ["dx"]


def _model():
    class M(L.Model):
        def __init__(self):
            super().__init__()
            self.d1 = L.Linear(4, 3)
            self.d2 = L.Linear(3, 2)

        def call(self, x, training=False):
            return self.d2(self.d1(x))

    m = M()
    m(np.zeros((1, 4)))
    return m


def test_model_weights_is_kerass_list_of_every_variable():
    m = _model()
    assert [v.name for v in m.weights] == ["d1.W", "d1.b", "d2.W", "d2.b"] == list(m.variables)
    assert all(a is b for a, b in zip(m.weights, m.variables.values()))
    m.d2.trainable = False
    assert [v.name for v in m.trainable_weights] == ["d1.W", "d1.b"]
    assert [v.name for v in m.non_trainable_weights] == ["d2.W", "d2.b"]
    assert [v.name for v in m.weights] == ["d1.W", "d1.b", "d2.W", "d2.b"]  # trainable or not
    assert m.non_trainable_variables == m.non_trainable_weights and m.trainable_variables == m.trainable_weights


def test_zipping_the_dict_of_variables_is_told_with_the_two_right_forms():
    m, x = _model(), np.random.default_rng(0).standard_normal((5, 4))
    opt = ap.optimizers.SGD(0.1)
    with ap.GradientTape(persistent=True) as tape:
        loss = (m(x) ** 2).sum()
    with pytest.raises(TypeError) as exc:
        opt.apply_gradients(zip(tape.gradient(loss, m.variables), m.variables))
    msg = str(exc.value)
    assert "variable #0 ('d1.W')" not in msg  # the key is no variable's name here: it is the str itself
    assert "got the str 'd1.W', a key: zip over a dict (model.variables is a dict of names) gives its keys" in msg
    assert "zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables)" in msg
    assert "zip(tape.gradient(loss, model.variables).values(), model.variables.values())" in msg
    before = m.variables["d1.W"].numpy().copy()
    opt.apply_gradients(zip(tape.gradient(loss, m.variables).values(), m.variables.values()))  # the second form works
    assert not np.allclose(before, m.variables["d1.W"].numpy())


# --------------------------------------------------------------------------- the LOW findings

LOWER_D = """
import numpy as np

class LowerD:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((4, 3))
    def forward(self, x):
        self.x = x
        return x @ self.W
    def backward(self, dout):
        self.dw = 2 * self.x.T @ dout
        return dout @ self.W.T
"""


def test_a_gradient_in_self_dw_is_reported_as_dw(tmp_path):
    f = student(tmp_path, LOWER_D)
    p = run_here("check", f"{f}::LowerD", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 1, text
    assert "FAIL: LowerD: gradient mismatch in dw." in text and "diagnosis: dw is 2 times the correct gradient" in text
    assert " dW " not in text and "dW[" not in text, text


SOFTMAX_LOSS = """
import numpy as np

def softmax_loss(x, y):
    s = x - x.max(1, keepdims=True)
    logp = s - np.log(np.exp(s).sum(1, keepdims=True))
    N = x.shape[0]
    dx = np.exp(logp)
    dx[np.arange(N), y] -= 1
    return -logp[np.arange(N), y].mean(), dx / N
"""


def test_a_cs231n_loss_is_said_as_called_with_the_targets_hint(tmp_path):
    f = student(tmp_path, SOFTMAX_LOSS)
    p = run_here("check", f"{f}::softmax_loss", "--loss", "--input-shape", "6,4")
    text = both(p)
    assert p.returncode == 3, text
    assert "softmax_loss(x, y) with x of shape (6, 4) raised IndexError" in text
    assert "softmax_loss.forward" not in text
    assert "y was real-valued (--targets real, the default): for class indices add --targets labels" in text
    p = run_here("check", f"{f}::softmax_loss", "--loss", "--input-shape", "6,4", "--targets", "labels")
    assert p.returncode == 0, both(p)


def test_a_short_training_run_says_the_accuracy_thresholds_assume_the_default_epochs():
    from gradcheck.train import TrainConfig, TrainReport

    def report(epochs, acc, diff=0.0):
        z = np.zeros(3)
        return TrainReport(TrainConfig(epochs=epochs), z, z, z + diff, z, z, z, acc, acc, 0.0, 43, 1.0)

    note = report(2, 0.9178).epochs_note()
    assert note.startswith("The accuracy threshold (0.95 for the MLP) assumes the default 30 epochs; this run had 2")
    assert report(30, 0.9178).epochs_note() == ""  # the default length: a real failure
    assert report(2, 0.97).epochs_note() == ""  # passed
    assert report(2, 0.9178, diff=1.0).epochs_note() == ""  # the tracks disagree: not the length's fault


SOFTMAX_DIAG = """
import numpy as np

class SoftmaxDiag:
    def __init__(self):
        self.params, self.grads = {}, {}
    def forward(self, X):
        e = np.exp(X - X.max(1, keepdims=True)); self.s = e / e.sum(1, keepdims=True)
        return self.s
    def backward(self, dY):
        return dY * self.s * (1 - self.s)  # the diagonal of the softmax Jacobian only
"""


def test_the_jacobian_plot_shows_the_students_backward(tmp_path, monkeypatch):
    import gradcheck.plots as plots

    drawn = {}
    real = plots.plot_jacobian

    def spy(*args, **kwargs):
        drawn.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(plots, "plot_jacobian", spy)
    f = student(tmp_path, SOFTMAX_DIAG)
    p = run_here("check", f"{f}::SoftmaxDiag", "--input-shape", "2,3", "--tape", "--jacobian", "--plots",
                 tmp_path / "plots")
    text = both(p)
    assert p.returncode == 1, text
    assert "jacobian dY/dX (6 x 6): tape (your forward, stacked VJPs) vs central differences" in text
    assert "jacobian dY/dX of your backward (row i: backward of the unit dY e_i) vs central differences" in text
    assert "flattened): differ" in text
    Jm, Jn = drawn["manual"], drawn["numerical"]
    assert np.allclose(Jm, np.diag(np.diag(Jn)), atol=1e-9)  # the student's: the diagonal alone
    assert np.abs(Jn - np.diag(np.diag(Jn))).max() > 0.05  # the true one is not diagonal
    assert (tmp_path / "plots" / "SoftmaxDiag-jacobian.png").exists()


def test_manual_jacobian_rows_are_backward_of_unit_upstream_gradients():
    """A Jacobian that is not symmetric: Y = X @ W.T, dY_i/dX_j read the right way round, against autograd."""
    import autograd
    import autograd.numpy as anp

    from gradcheck.check_command import manual_jacobian
    from manualprop import Linear

    layer = Linear(3, 2, rng=1)
    X = np.random.default_rng(2).standard_normal((2, 3))
    Jm, why = manual_jacobian(layer, X, (2, 2))
    W, b = layer.params["W"], layer.params["b"]
    exact = autograd.jacobian(lambda x: anp.dot(x, W.T) + b)(X).reshape(4, 6)
    assert why == "" and np.allclose(Jm, exact, rtol=1e-12, atol=1e-14)
