"""Parameters that share memory, through the real ``gradcheck check`` (gradcheck/_adapters.py ``_aliases``):
a weight forward reads through views made in ``__init__`` (``self.Wx = self.W[:D]``, ``self.WT = self.W.T``)
is checked through the gradient backward sets for it, and weights tied across sub-layers
(``self.enc.W is self.dec.W``) are checked once, with the sum of their gradients, as PyTorch's
``named_parameters()`` lists a shared parameter once and an optimizer stepping each applies each."""

import copy
import json
import textwrap

import numpy as np
import oracles
import pytest
from test_cli import run, run_here

from gradcheck import _adapters as AD

LAYERS = '''
import numpy as np


class RNNSplitViews:
    """one stacked weight W (D+H, H); forward reads the views Wx = W[:D], Wh = W[D:] made in __init__;
    backward sets self.dW for the stacked W (BUG: the Wh block is halved)"""
    def __init__(self, D=5, H=3):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((D + H, H)) * 0.5
        self.Wx, self.Wh = self.W[:D], self.W[D:]
        self.h0 = rng.standard_normal((1, H))

    def forward(self, X):
        self.X = X
        self.h = np.tanh(X @ self.Wx + self.h0 @ self.Wh)
        return self.h

    def backward(self, dY):
        dz = dY * (1 - self.h ** 2)
        self.dW = np.concatenate([self.X.T @ dz, 0.5 * np.repeat(self.h0, len(dz), 0).T @ dz])
        return dz @ self.Wx.T


class RNNCell(RNNSplitViews):
    """the same cell, right, with the initial state's gradient"""
    def backward(self, dY):
        dz = dY * (1 - self.h ** 2)
        self.dW = np.concatenate([self.X.T @ dz, np.repeat(self.h0, len(dz), 0).T @ dz])
        self.dh0 = dz.sum(0, keepdims=True) @ self.Wh.T
        return dz @ self.Wx.T


class RNNSeed(RNNSplitViews):
    """the same cell, no weight gradient at all (seed style)"""
    def backward(self, dY):
        return (dY * (1 - self.h ** 2)) @ self.Wx.T


class ViewCache:
    """keeps a transposed view of W made once in __init__"""
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((3, 5))
        self.WT = self.W.T

    def forward(self, X):
        self.X = X
        return X @ self.WT

    def backward(self, dY):
        self.dW = dY.T @ self.X
        return dY @ self.W


class ViewCacheBug(ViewCache):
    def backward(self, dY):
        self.dW = 0.5 * dY.T @ self.X
        return dY @ self.W


class Lin:
    def __init__(self, W):
        self.W = W

    def forward(self, X):
        self.X = X
        return X @ self.W

    def backward(self, dY):
        self.dW = self.X.T @ dY
        return dY @ self.W.T


class Tied:
    """an autoencoder whose encoder and decoder share one W (the same array); each sub-layer stores its
    own use's gradient"""
    def __init__(self):
        W = np.random.default_rng(0).standard_normal((4, 4))
        self.enc, self.dec = Lin(W), Lin(W)

    def forward(self, X):
        self.H = np.tanh(self.enc.forward(X))
        return self.dec.forward(self.H)

    def backward(self, dY):
        dH = self.dec.backward(dY)
        return self.enc.backward(dH * (1 - self.H ** 2))


class TiedTotal(Tied):
    """both sub-layers store the total gradient of the shared W"""
    def backward(self, dY):
        dX = Tied.backward(self, dY)
        tot = self.enc.dW + self.dec.dW
        self.enc.dW, self.dec.dW = tot, tot.copy()
        return dX


class TiedDecBug(Tied):
    """the decoder's part is halved"""
    def backward(self, dY):
        dX = Tied.backward(self, dY)
        self.dec.dW = 0.5 * self.dec.dW
        return dX


LinT = Lin  # a decoder given the encoder's weight transposed (a view); stores the gradient of its own W


class TiedTransposed(Tied):
    """encoder (4, 3) and decoder (3, 4) = the encoder's W.T, a view: the decoder's dW is added transposed"""
    def __init__(self):
        W = np.random.default_rng(1).standard_normal((4, 3))
        self.enc, self.dec = Lin(W), LinT(W.T)


class Untied(Tied):
    """two sub-layers with their own arrays: unchanged, each checked alone"""
    def __init__(self):
        rng = np.random.default_rng(0)
        self.enc, self.dec = Lin(rng.standard_normal((4, 4))), Lin(rng.standard_normal((4, 4)))


class Overlap:
    """two parameters that share part of their memory, neither holding the other"""
    def __init__(self):
        self.M = np.random.default_rng(0).standard_normal((6, 4))
        self.A, self.B = self.M[:4], self.M[2:]

    def forward(self, X):
        self.X = X
        return X @ self.A + X @ self.B

    def backward(self, dY):
        self.dA, self.dB = self.X.T @ dY, self.X.T @ dY
        return dY @ (self.A + self.B).T
'''


def text(p):
    """stdout and stderr with the terminal wrapping undone."""
    return " ".join((p.stdout + p.stderr).split())


@pytest.fixture(scope="module")
def layers(tmp_path_factory):
    f = tmp_path_factory.mktemp("shared") / "shared_layers.py"
    f.write_text(textwrap.dedent(LAYERS))
    return f


def check(f, cls, shape, *extra, through=run_here):
    return through("check", f"{f}::{cls}", "--input-shape", shape, *extra)


def module(f):
    import importlib.util

    spec = importlib.util.spec_from_file_location("shared_layers", f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def central(f, W, h=1e-6):
    """Central differences of the scalar ``f()`` in each element of ``W``, changed in place."""
    return oracles.central_in_place(f, W, h=h)


# ------------------------------------------------------------------ views of one weight (tester7 T10)

def test_split_views_with_a_wrong_block_fail_and_the_block_is_named(layers):
    p = check(layers, "RNNSplitViews", "4,5", through=run)  # the console script
    t = text(p)
    assert p.returncode == 1, t
    assert "protocol: attribute style (W/dW); Wx and Wh are views of W: W is perturbed (moving them) and dW checked" in t
    assert "WARNING: forward uses h0 but backward sets no gradient attribute for it (dh0, grad_h0 or h0_grad)" in t
    assert "FAIL: RNNSplitViews: gradient mismatch in dW." in t
    assert ("note: every mismatching element of dW (9 of 9 in the block) lies in W[5:8], the block forward reads "
            "as Wh (a view of W): the part of backward that computes Wh's gradient is wrong; there it is 0.5 times "
            "the correct one.") in t
    assert "PASS" not in t and "no gradient to check" not in t


def test_split_views_right_pass_and_the_gradient_matches_central_differences(layers):
    p = check(layers, "RNNCell", "4,5", "--mode", "full")
    t = text(p)
    assert p.returncode == 0, t
    assert "Wx and Wh are views of W: W is perturbed (moving them) and dW checked" in t
    assert "PASS: RNNCell: every gradient (dX, dW, dh0) matches" in t
    # the adapter's gradient of the stacked W, against central differences of the stacked W itself
    mod = module(layers)
    X = np.random.default_rng(3).standard_normal((4, 5))
    G = np.random.default_rng(4).standard_normal((4, 3))
    lay, info = AD.adapt(mod.RNNCell(), [X])
    assert list(lay.params) == ["W", "h0"] and info["unchecked"] == []
    lay.forward(X)
    lay.backward(G)
    num = central(lambda: float(np.sum(lay.forward(X) * G)), lay.params["W"])
    np.testing.assert_allclose(lay.grads["W"], num, rtol=1e-6, atol=1e-9)
    assert np.abs(num[5:]).max() > 0.1  # the Wh block is reached only through the view


def test_seed_style_views_are_named_through_their_base(layers):
    p = check(layers, "RNNSeed", "4,5")
    t = text(p)
    assert p.returncode == 0, t
    assert "protocol: array attributes without gradients (W, h0): backward(dY) -> dX only; Wx and Wh are views of W" in t
    assert "note: W, h0 are parameters with no gradient to check: backward computes no dW, dh0" in t


def test_a_transposed_view_made_in_init_checks_dw(layers):
    p = check(layers, "ViewCacheBug", "4,5")
    t = text(p)
    assert p.returncode == 1, t
    assert "WT is a view of W: W is perturbed (moving it) and dW checked" in t
    assert "FAIL: ViewCacheBug: gradient mismatch in dW." in t
    assert "dW is 0.5 times the correct gradient" in t
    p = check(layers, "ViewCache", "4,5", "--tape")
    t = text(p)
    assert p.returncode == 0, t  # the tape follows the view: W's Tensor is gathered into WT
    assert "PASS: ViewCache: every gradient (dX, dW) and the forward output match" in t
    assert "the tape saw no use" not in t


def test_a_deep_copy_keeps_the_views_views(layers):
    mod = module(layers)
    X = np.random.default_rng(3).standard_normal((4, 5))
    lay, _ = AD.adapt(mod.RNNCell(), [X])
    c = copy.deepcopy(lay)
    assert c.obj.W is not lay.obj.W
    assert np.shares_memory(c.obj.Wx, c.obj.W) and np.shares_memory(c.obj.Wh, c.obj.W)
    y0 = c.forward(X)
    c.params["W"][6, 1] += 0.5  # the copy's W: its Wh moves, the original's does not
    assert not np.array_equal(c.forward(X), y0)
    assert np.array_equal(lay.forward(X), y0)


# ------------------------------------------------------------------ weights tied across sub-layers (T9)

TIED = ("enc.W and dec.W are the same array: their gradients are summed, as an optimizer that steps both "
        "applies them")
NOISE = "within the numerical estimate's own uncertainty here"


def test_tied_weights_pass_with_the_sum_of_their_gradients(layers, tmp_path):
    p = check(layers, "Tied", "3,4", "--json", tmp_path / "d.json")
    t = text(p)
    assert p.returncode == 0, t
    assert ("protocol: a layer made of sub-layers: enc (Lin: enc.W, attributes), dec (Lin: dec.W (shared with "
            "enc.W), attributes); their parameters are checked under these dotted names; " + TIED) in t
    assert "PASS: Tied: every gradient (dX, denc.W) matches" in t
    assert json.loads((tmp_path / "d.json").read_text())["protocol"]["tied"] == ["enc.W:dec.W"]
    # the sum is the total: central differences of the shared array, moved in place
    mod = module(layers)
    X = np.random.default_rng(5).standard_normal((3, 4))
    G = np.random.default_rng(6).standard_normal((3, 4))
    lay, _ = AD.adapt(mod.Tied(), [X])
    lay.forward(X)
    lay.backward(G)
    enc, dec = lay.obj.enc.dW.copy(), lay.obj.dec.dW.copy()
    num = central(lambda: float(np.sum(lay.forward(X) * G)), lay.obj.enc.W)
    np.testing.assert_allclose(lay.grads["enc.W"], num, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(enc + dec, num, rtol=1e-6, atol=1e-9)
    assert not np.allclose(enc, num, rtol=1e-3)  # each alone is not the total


def test_tied_weights_each_holding_the_total_fail_with_the_double_count_named(layers):
    p = check(layers, "TiedTotal", "3,4")
    t = text(p)
    assert p.returncode == 1, t
    assert TIED in t and "FAIL: TiedTotal: gradient mismatch in denc.W." in t
    assert ("note: denc.W is the sum of the gradients backward stored for enc.W and dec.W, one array, and it is 2 "
            "times the numerical gradient: each of them holds the total, so an optimizer that steps both applies "
            "it twice.") in t
    assert NOISE not in t


@pytest.mark.parametrize("method", ["central", "richardson"])
def test_a_wrong_part_of_a_tied_weight_is_a_mismatch_not_noise(layers, method):
    p = check(layers, "TiedDecBug", "3,4", "--method", method)
    t = text(p)
    assert p.returncode == 1, t
    assert "FAIL: TiedDecBug: gradient mismatch in denc.W." in t
    assert NOISE not in t and "double" not in t and "holds the total" not in t


def test_a_tied_transposed_view_adds_its_gradient_where_it_lies(layers):
    p = check(layers, "TiedTransposed", "3,4", "--mode", "full")
    t = text(p)
    assert p.returncode == 0, t
    assert ("enc.W and dec.W share memory (enc.W holds it all): their gradients are added into enc.W's, element by "
            "element, as an optimizer that steps both applies them") in t
    assert "PASS: TiedTransposed: every gradient (dX, denc.W) matches" in t
    mod = module(layers)
    X = np.random.default_rng(5).standard_normal((3, 4))
    G = np.random.default_rng(6).standard_normal((3, 4))
    lay, _ = AD.adapt(mod.TiedTransposed(), [X])
    lay.forward(X)
    lay.backward(G)
    num = central(lambda: float(np.sum(lay.forward(X) * G)), lay.obj.enc.W)
    np.testing.assert_allclose(lay.grads["enc.W"], num, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(lay.obj.enc.dW + lay.obj.dec.dW.T, num, rtol=1e-6, atol=1e-9)


def test_tied_weights_with_the_tape(layers):
    p = check(layers, "Tied", "3,4", "--tape")
    t = text(p)
    assert p.returncode == 0, t
    assert "PASS: Tied: every gradient (dX, denc.W) and the forward output match" in t


def test_untied_sub_layers_are_unchanged(layers):
    p = check(layers, "Untied", "3,4")
    t = text(p)
    assert p.returncode == 0, t
    assert ("protocol: a layer made of sub-layers: enc (Lin: enc.W, attributes), dec (Lin: dec.W, attributes); "
            "their parameters are checked under these dotted names mode:") in t
    assert "PASS: Untied: every gradient (dX, denc.W, ddec.W) matches" in t
    assert "same array" not in t
    assert "(shared with" not in t


def test_parameters_that_partly_overlap_are_refused(layers):
    p = check(layers, "Overlap", "3,4")
    t = text(p)
    assert p.returncode == 3 and "Traceback" not in t, t  # a protocol error, as two gradients for one weight
    assert "Overlap: A and B share part of their memory, but none of them holds the others" in t


# ------------------------------------------------------------------ the noise diagnosis's advice (T9)

OFFSET_LAYERNORM = '''
import numpy as np

class LayerNorm:
    """forward adds 1e7 before normalising: the differences lose digits at any step"""
    def __init__(self, D=3):
        self.params, self.grads = {"gamma": np.ones(D), "beta": np.zeros(D)}, {}

    def forward(self, X, training=False):
        X = X * 1e-3 + 1e7
        mu, var = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
        self.istd = 1 / np.sqrt(var + 1e-5)
        self.xhat = (X - mu) * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dY):
        self.grads["gamma"] = (dY * self.xhat).sum(0)
        self.grads["beta"] = dY.sum(0)
        d = dY * self.params["gamma"]
        return 1e-3 * self.istd * (d - d.mean(-1, keepdims=True) - self.xhat * (d * self.xhat).mean(-1, keepdims=True))
'''


def test_the_noise_advice_does_not_suggest_richardson_when_it_is_in_use(tmp_path):
    f = tmp_path / "offset_ln.py"
    f.write_text(OFFSET_LAYERNORM)
    for method, advised in (("central", True), ("richardson", False)):
        p = check(f, "LayerNorm", "4,3", "--mode", "full", "--method", method)
        t = text(p)
        assert p.returncode == 1 and NOISE in t, t
        assert ("for a reliable estimate use --method richardson (method='richardson' in Python" in t) is advised, t
        assert "for a reliable estimate use " + ("--method richardson" if advised else
                                                  "an input where forward keeps its digits") in t
