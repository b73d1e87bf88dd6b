"""The diagnosis of a stale cache and of common beginner bugs (first found wrong on a new user's own
files: items 2 and 8 of the new-user report).

2. A stale cache (``if not hasattr(self, "X"): self.X = X``) passed from the CLI: the probe
   "cache of the last forward" was skipped for every sandboxed layer. It now runs on copies
   made in the child (``clone``), in-process and through the real console script.
8. Common beginner bugs got "no known bug pattern": dX = dY @ W for a square W (and its 1x1
   convolution form), the kernel flipped in a conv's dx, tanh's derivative without the
   square, softmax's Jacobian diagonal only, a CS231n batchnorm pair without the mean and
   variance paths. Each is named; near misses stay "wrong-values" (tests/buggy_layers).
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from test_cli import run_here

from gradcheck import _adapters
from gradcheck.diagnose import (
    _activation_signature,
    _find,
    _inner_weight_signature,
    _transposed_weight_signature,
    diagnose_layer,
)
from gradcheck.errors import UsageError
from gradcheck.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "gradcheck"

# the new user's files (notes/newuser-student), as they wrote them
MISC = """
import numpy as np
class StaleCache:
    def __init__(self, n=4, rng=None):
        rng = np.random.default_rng(rng); self.W = rng.standard_normal((n, n)); self.b = np.zeros(n)
    def forward(self, X):
        if not hasattr(self, "X"): self.X = X.copy()
        return X @ self.W + self.b
    def backward(self, dY):
        self.dW = self.X.T @ dY; self.db = dY.sum(0); return dY @ self.W.T
class Fresh(StaleCache):
    def forward(self, X):
        self.X = X.copy()
        return X @ self.W + self.b
class StaleY(StaleCache):
    def forward(self, X):
        if not hasattr(self, "Y"): self.X = X; self.Y = X @ self.W + self.b
        return self.Y
class ClassStale(StaleCache):
    X = None
    def forward(self, X):
        if ClassStale.X is None: ClassStale.X = X.copy()
        self.X = ClassStale.X
        return X @ self.W + self.b
class SeedBuf:
    def __init__(self, n=4, rng=None):
        rng = np.random.default_rng(rng); self.W = rng.standard_normal((n, n)); self.b = np.zeros(n)
        self._Y = None; self._dX = None
    def forward(self, X):
        if self._Y is None or self._Y.shape[0] != X.shape[0]:
            self._Y = np.empty((X.shape[0], self.W.shape[1])); self._dX = np.empty_like(X)
        np.matmul(X, self.W, out=self._Y); self._Y += self.b; return self._Y
    def backward(self, dY):
        np.matmul(dY, self.W, out=self._dX); return self._dX   # BUG: W not W.T
class LinearBadDX:
    def __init__(self, n=4, rng=None):
        rng = np.random.default_rng(rng)
        self.W = rng.standard_normal((n, n)); self.b = np.zeros(n)
    def forward(self, X):
        return X @ self.W + self.b
    def backward(self, dY):
        return dY @ self.W   # BUG: should be W.T, same shape
class Conv1x1:
    def __init__(self, C=3, rng=None):
        rng = np.random.default_rng(rng); self.W = rng.standard_normal((C, C)); self.b = np.zeros(C)
    def forward(self, X):
        self.X = X; return np.einsum('fc,nchw->nfhw', self.W, X) + self.b[None, :, None, None]
    def backward(self, dY):
        self.dW = np.einsum('nfhw,nchw->fc', dY, self.X); self.db = dY.sum((0, 2, 3))
        return np.einsum('cf,nfhw->nchw', self.W, dY)   # BUG: missing transpose
class Tanh:
    def forward(self, X):
        self.out = np.tanh(X); return self.out
    def backward(self, dY):
        return dY * (1 - self.out)   # BUG: 1 - out**2
class Softmax:
    def forward(self, X):
        e = np.exp(X - X.max(axis=1, keepdims=True)); self.p = e / e.sum(axis=1, keepdims=True); return self.p
    def backward(self, dY):
        return dY * self.p * (1 - self.p)   # BUG: only the diagonal of the Jacobian
"""

CS = """
import numpy as np
def conv_forward_naive(x, w, b, conv_param):
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape; F, _, HH, WW = w.shape
    Ho = 1 + (H + 2*pad - HH)//stride; Wo = 1 + (W + 2*pad - WW)//stride
    xp = np.pad(x, ((0,0),(0,0),(pad,pad),(pad,pad)))
    out = np.zeros((N, F, Ho, Wo))
    for n in range(N):
        for f in range(F):
            for i in range(Ho):
                for j in range(Wo):
                    out[n,f,i,j] = np.sum(xp[n,:,i*stride:i*stride+HH,j*stride:j*stride+WW]*w[f]) + b[f]
    return out, (x, w, b, conv_param)
def conv_backward_naive(dout, cache):
    x, w, b, conv_param = cache
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape; F, _, HH, WW = w.shape
    _, _, Ho, Wo = dout.shape
    xp = np.pad(x, ((0,0),(0,0),(pad,pad),(pad,pad)))
    dxp = np.zeros_like(xp); dw = np.zeros_like(w)
    for n in range(N):
        for f in range(F):
            for i in range(Ho):
                for j in range(Wo):
                    dxp[n,:,i*stride:i*stride+HH,j*stride:j*stride+WW] += w[f][:, ::-1, ::-1]*dout[n,f,i,j]
                    dw[f] += xp[n,:,i*stride:i*stride+HH,j*stride:j*stride+WW]*dout[n,f,i,j]
    dx = dxp[:,:,pad:pad+H,pad:pad+W]
    db = dout.sum(axis=(0,2,3))
    return dx, dw, db
def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]; eps = bn_param.get("eps", 1e-5)
    if mode == "train":
        mu = x.mean(0); var = x.var(0)
    else:
        mu = bn_param.get("running_mean", np.zeros(x.shape[1]))
        var = bn_param.get("running_var", np.ones(x.shape[1]))
    xhat = (x - mu)/np.sqrt(var + eps)
    return gamma*xhat + beta, (xhat, gamma, var, eps)
def batchnorm_backward(dout, cache):
    xhat, gamma, var, eps = cache
    dgamma = (dout*xhat).sum(0); dbeta = dout.sum(0)
    dx = dout*gamma/np.sqrt(var+eps)   # BUG: missing mean/var paths
    return dx, dgamma, dbeta
"""


def run(*args, cwd):
    cmd = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gradcheck"]
    return subprocess.run(cmd + [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MPLBACKEND": "Agg"})


def flat(text):
    return " ".join(text.split())


@pytest.fixture
def files(tmp_path):
    (tmp_path / "misc.py").write_text(textwrap.dedent(MISC))
    (tmp_path / "cs.py").write_text(textwrap.dedent(CS))
    return tmp_path


# --------------------------------------------------------------------------- 2. stale cache


class StaleLinear:
    """manualprop protocol; the input cached on the first forward only."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((4, 3)), "b": rng.standard_normal(3)}
        self.grads = {}

    def forward(self, X, training=False):
        if not hasattr(self, "X"):
            self.X = X.copy()
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return dY @ self.params["W"].T


def probe(d, name="cache of the last forward"):
    return next(p for p in d.probes if p.name == name)


def test_stale_cache_is_named_in_process():
    d = diagnose_layer(StaleLinear(), (6, 4))
    assert not d.passed and d.codes == ["stale-cache"], d.report()
    assert probe(d).passed is False and "dW" in probe(d).detail
    assert "`if not hasattr(self, 'X'): self.X = X`" in d.sentence()


@pytest.mark.parametrize("cls, code", [("StaleCache", "stale-cache"), ("StaleY", "stale-output"), ("Fresh", None)])
def test_cache_probe_runs_for_a_sandboxed_layer(files, cls, code):
    """The probe copies the layer inside the child: not skipped, and the stale cache is found."""
    X = np.random.default_rng([0, 3]).standard_normal((8, 4))
    with Sandbox(files={"misc.py": str(files / "misc.py")}, timeout=10) as sb:
        layer = sb.load_layer("misc.py", cls, seed=0, probe_inputs=[X])
        d = diagnose_layer(layer, (8, 4), name=cls)
    assert probe(d).passed is (code is None), probe(d)
    if code is None:
        assert d.passed, d.report()
    else:
        assert not d.passed and d.codes[0] == code, d.report()


class ClassLevelStale(StaleLinear):
    """The first input kept in a class attribute: every copy of the layer shares it."""

    first = None

    def forward(self, X, training=False):
        if ClassLevelStale.first is None:
            ClassLevelStale.first = X.copy()
        self.X = ClassLevelStale.first
        return X @ self.params["W"] + self.params["b"]


def test_first_input_kept_in_a_class_attribute_is_found_at_a_second_input():
    """Copies share a class attribute, so only a gradient check at another input shows it."""
    ClassLevelStale.first = None
    d = diagnose_layer(ClassLevelStale(), (6, 4))
    assert not d.passed and d.codes == ["stale-cache"], d.report()
    assert "right at the first input the layer saw but wrong at another one" in d.sentence()
    assert diagnose_layer(Correct(), (6, 4)).passed


class Correct(StaleLinear):
    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]


def test_cli_class_attribute_cache_fails(files):
    p = run_here("check", "misc.py::ClassStale", "--input-shape", "8,4", cwd=files)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "right at the first input the layer saw but wrong at another one" in flat(p.stdout)


def test_clone_of_a_remote_layer_has_its_own_cache(files):
    rng = np.random.default_rng(1)
    X1, X2, G = rng.standard_normal((5, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    with Sandbox(files={"misc.py": str(files / "misc.py")}, timeout=10) as sb:
        a = sb.load_layer("misc.py", "Fresh", seed=0, probe_inputs=[X1])
        a.forward(X1)
        b = a.clone()
        assert type(b) is type(a) and b._id != a._id
        assert set(b.params) == {"W", "b"} and np.array_equal(b.params["W"], a.params["W"])
        b.forward(X2)  # overwrites b's cache only
        a.backward(G)
        np.testing.assert_allclose(a.grads["W"], X1.T @ G, rtol=1e-12)
        b.backward(G)
        np.testing.assert_allclose(b.grads["W"], X2.T @ G, rtol=1e-12)
        b.params["W"] += 1.0  # the copy's parameters are its own
        assert not np.array_equal(a.forward(X1), b.forward(X1))
        b.release()  # the child drops the copy; the original lives on
        with pytest.raises(UsageError, match="this copy of the layer was released"):
            b.forward(X1)
        # the child's matmul may sum in another order than ours (BLAS kernel): equal up to rounding
        np.testing.assert_allclose(a.forward(X1), X1 @ a.params["W"] + a.params["b"], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", ["fast", "full"])
def test_cli_stale_cache_fails_with_the_finding(files, mode, tmp_path):
    out = tmp_path / "d.json"
    p = run_here("check", "misc.py::StaleCache", "--input-shape", "8,4", "--mode", mode, "--json", out, cwd=files)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "backward uses the cache of an earlier forward, not of the last one (dW)" in flat(p.stdout)
    assert "PASS" not in p.stdout
    probes = {q["name"]: q for q in json.loads(out.read_text())["probes"]}
    assert probes["cache of the last forward"]["passed"] is False


def test_cli_forward_that_ignores_new_inputs_fails(files):
    p = run_here("check", "misc.py::StaleY", "--input-shape", "8,4", cwd=files)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "forward returns what an earlier call computed" in flat(p.stdout)
    assert "the layer ignores new inputs" in flat(p.stdout)


def test_cli_fresh_cache_passes(files):
    p = run("check", "misc.py::Fresh", "--input-shape", "8,4", cwd=files)  # the console script
    assert p.returncode == 0, p.stdout + p.stderr


# --------------------------------------------------------------------------- 8. beginner bugs named


@pytest.mark.parametrize("target, shape, init, words", [
    ("misc.py::LinearBadDX", "8,4", None, ["dX multiplies dY by the transposed weight",
                                           "for Y = X @ W + b, dX = dY @ W.T"]),
    ("misc.py::SeedBuf", "8,4", None, ["dX multiplies dY by the transposed weight"]),
    ("misc.py::Conv1x1", "2,3,4,4", None, ["dX multiplies dY by the transposed weight",
                                           "dX = np.einsum('fc,nf...->nc...', W, dY)", "not 'cf'"]),
    ("misc.py::Tanh", "5,4", None, ["the square is missing in tanh's derivative", "dY * (1 - out**2)"]),
    ("misc.py::Softmax", "5,4", None, ["only the diagonal of the softmax Jacobian",
                                       "p * (dY - (dY * p).sum(axis=-1, keepdims=True))"]),
    ("cs.py::conv", "2,3,5,5;4,3,3,3;4", '{"conv_param": {"stride": 1, "pad": 1}}',
     ["dx is computed with the kernel flipped in its spatial axes (w[:, :, ::-1, ::-1])"]),
    ("cs.py::batchnorm", "8,4;4;4", '{"bn_param": {"mode": "train"}}',
     ["dx lacks the gradient through the batch mean and variance"]),
])
def test_cli_names_the_beginner_bug(files, target, shape, init, words):
    p = run_here("check", target, "--input-shape", shape, *(["--init", init] if init else []), cwd=files)
    assert p.returncode == 1, p.stdout + p.stderr
    text = flat(p.stdout)
    assert "no known bug pattern" not in text
    for w in words:
        assert w in text, text


def test_batchnorm_pair_in_process_as_the_class_style():
    """The function pair gets the same name as the class-style BatchNorm (gamma is an input here)."""
    ns = {}
    exec(textwrap.dedent(CS), ns)  # noqa: S102 - the test's own source
    layer = _adapters.pair(ns["batchnorm_forward"], ns["batchnorm_backward"], {"bn_param": {"mode": "train"}})
    d = diagnose_layer(layer, [(8, 4), (4,), (4,)])
    assert d.codes == ["missing-mean-var-paths"] and d.findings[0].tensor == "dx"


def test_transposed_weight_needs_the_transpose():
    rng = np.random.default_rng(0)
    W, G = rng.standard_normal((4, 4)), rng.standard_normal((6, 4))
    right = G @ W.T  # Y = X @ W
    code, fields = _transposed_weight_signature(G @ W, right, G, {"W": W})
    f = _find(code, "dX", **fields)
    assert f.code == "transposed-weight" and "dX = dY @ W.T, not dY @ W" in f.message
    assert _transposed_weight_signature(2 * right, right, G, {"W": W}) is None  # another bug
    S = W + W.T  # symmetric: the transpose changes nothing, so it cannot be the bug
    assert _transposed_weight_signature(G @ S + 1, G @ S, G) is None
    # too few rows to solve for the matrix: nothing is claimed
    assert _transposed_weight_signature(G[:3] @ W, G[:3] @ W.T, G[:3]) is None


def test_activation_signatures_need_the_activation():
    """(1 - out) is named only for tanh, the diagonal only for a softmax output."""
    rng = np.random.default_rng(0)
    X, G = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    Y = np.tanh(X)
    assert _activation_signature(G * (1 - Y), G * (1 - Y**2), [X], Y, G)[0] == "tanh-missing-square"
    S = 1 / (1 + np.exp(-X))  # a sigmoid with the same wrong formula is not called tanh
    assert _activation_signature(G * (1 - S), G * S * (1 - S), [X], S, G) is None
    assert _activation_signature(G * S, G * S * (1 - S), [X], S, G)[0] == "sigmoid-missing-one-minus"
    assert _activation_signature(G * Y, G * (1 - Y**2), [X], Y, G) is None  # tanh: dY * out is not named sigmoid's
    P = np.exp(X) / np.exp(X).sum(axis=1, keepdims=True)
    right = P * (G - (G * P).sum(axis=1, keepdims=True))
    assert _activation_signature(G * P * (1 - P), right, [X], P, G) == ("softmax-diagonal", {"axis": -1})
    wrong_axis = P * (G - (G * P).sum(axis=0, keepdims=True))
    assert _activation_signature(wrong_axis, right, [X], P, G) == ("softmax-wrong-axis", {"axis": 1, "other": 0})
    assert _activation_signature(right, right, [X], P, G) is None
    # a sigmoid's correct gradient is the "diagonal" formula: outputs not summing to one are no softmax
    assert _activation_signature(G * S * (1 - S) * 2, G * S * (1 - S), [X], S, G) is None


# --------------------------------------------------------------------------- 13. the new user's leftovers

CSDROP = """
import numpy as np
def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param: np.random.seed(dropout_param["seed"])
    mask = (np.random.rand(*x.shape) < p) / p
    return x * mask, (dropout_param, mask)
def dropout_backward(dout, cache):
    dropout_param, mask = cache
    return dout * (mask > 0)   # the planted bug: the 1/p is missing
"""


def test_cli_cs231n_dropout_is_told_to_seed_dropout_param(tmp_path):
    """A fresh generator per call cannot be rewound (numpy's global one can: the check runs as in process, see
    below): the CS231n advice."""
    fresh = CSDROP.replace("np.random.seed(dropout_param[\"seed\"])", "rng = np.random.default_rng(dropout_param[\"seed\"])")
    fresh = fresh.replace("    mask = (np.random.rand(*x.shape)",
                          "    else: rng = np.random.default_rng()\n    mask = (rng.random(x.shape)")
    assert fresh.count("default_rng") == 2 and "rng.random(" in fresh
    (tmp_path / "csdrop.py").write_text(textwrap.dedent(fresh))
    init = {"dropout_param": {"p": 0.5, "mode": "train"}}
    p = run_here("check", "csdrop.py::dropout", "--input-shape", "8,5", "--init", json.dumps(init), cwd=tmp_path)
    text = flat(p.stdout)
    # not checkable as it stands: exit 3 (tester9 W15), with the advice that makes it checkable
    assert p.returncode == 3 and "non-deterministic" in text, p.stdout + p.stderr
    assert "give dropout_param a 'seed'" in text and "np.random.seed(dropout_param['seed'])" in text
    assert "fix_mask" not in text
    init["dropout_param"]["seed"] = 0  # as advised: the check runs and names the bug
    p = run_here("check", "csdrop.py::dropout", "--input-shape", "8,5", "--init", json.dumps(init), cwd=tmp_path)
    assert p.returncode == 1 and "the forward's scale 2 (1 / the keep probability) is missing in backward" in flat(p.stdout), p.stdout + p.stderr


def test_cli_cs231n_dropout_on_the_global_generator_is_rewound(tmp_path):
    """np.random.rand without a seed: the sandbox's child rewinds numpy's global generator before every forward
    (as gradcheck.diagnose_layer does in process), so the check runs and names the planted bug."""
    (tmp_path / "csdrop.py").write_text(textwrap.dedent(CSDROP))
    init = {"dropout_param": {"p": 0.5, "mode": "train"}}
    p = run_here("check", "csdrop.py::dropout", "--input-shape", "8,5", "--init", json.dumps(init), cwd=tmp_path)
    text = flat(p.stdout)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "the forward's scale 2 (1 / the keep probability) is missing in backward" in text, text
    assert "its random generator (numpy's global generator) was rewound before every forward" in text


class TwoInputs:
    """Inputs of different batch sizes: the numerical gradient cannot stack copies along axis 0."""

    params, grads = {}, {}

    def forward(self, A, B, training=False):
        return A.sum(axis=1, keepdims=True) + B.sum()

    def backward(self, dY):
        return np.repeat(dY, 3, axis=1), np.full((2, 2), dY.sum())


def test_element_by_element_note_says_what_was_done():
    from gradcheck import check_layer

    text = flat(check_layer(TwoInputs(), [(4, 3), (2, 2)], mode="full").table())
    assert ("numerical gradient of the inputs: central differences, one input entry at a time (16 entries), "
            "not stacked as one batch: the inputs have different sizes along axis 0") in text
    assert "element loop" not in text


class LoopMissesOne(StaleLinear):
    """Per-sample loop over range(N - 1): with a batch of one it never runs."""

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        dX, dW = np.zeros_like(self.X), np.zeros_like(self.params["W"])
        for n in range(len(dY) - 1):
            dX[n] = self.params["W"] @ dY[n]
            dW += np.outer(self.X[n], dY[n])
        self.grads = {"W": dW, "b": dY.sum(axis=0)}
        return dX


def test_batch_of_one_missing_sample_names_the_sample():
    with pytest.warns(UserWarning, match="batch of one"):
        d = diagnose_layer(LoopMissesOne(), (1, 4))
    dx = next(f for f in d.findings if f.tensor == "dX")
    assert "dX[0], the gradient of sample 0 (the batch's only sample), is all zeros" in dx.message
    assert "range(N - 1)" in dx.message and "loop over range(N)" in dx.message
    assert "range(N)" in next(f for f in d.findings if f.tensor == "dW").message
    d = diagnose_layer(LoopMissesOne(), (4, 4))  # a real batch: the missing sample by its index
    assert "dX[3] (sample 3 of 0..3), which is zero" in next(f for f in d.findings if f.tensor == "dX").message


AFFINE = """
import numpy as np
def affine_forward(x, w, b):
    return x.reshape(len(x), -1) @ w + b, (x, w, b)
def affine_backward(dout, cache):
    x, w, b = cache
    return (dout @ w.T).reshape(x.shape), dout.T @ x.reshape(len(x), -1), dout.sum(axis=0)
"""


@pytest.mark.parametrize("shapes", [[(6, 4), (4, 4), (4,)], [(6, 2, 2), (4, 4), (4,)], [(6, 4), (4, 3), (3,)]])
def test_transposed_dw_of_an_in_out_weight_names_the_layout(shapes):
    """CS231n's w is (in, out) and an input of the pair: square or not, the hint gives the product."""
    ns = {}
    exec(textwrap.dedent(AFFINE), ns)  # noqa: S102 - the test's own source
    d = diagnose_layer(_adapters.pair(ns["affine_forward"], ns["affine_backward"], {}), shapes)
    f = next(f for f in d.findings if f.tensor == "dw")
    assert f.code == ("transposed-square" if shapes[1][0] == shapes[1][1] else "transposed"), d.report()
    assert "for w of shape (in, out) with Y = X @ w + b, dw = X.T @ dY (not dY.T @ X)" in f.message


def test_inner_weight_transposed_in_either_layout():
    """W @ dZ where W.T @ dZ is due (batch in columns, Andrew Ng's layout) is named like dz @ W for dz @ W.T
    (batch in rows); a dX unrelated to W, or the right one, is not."""
    rng = np.random.default_rng(0)
    W, D = rng.standard_normal((4, 4)), rng.standard_normal((4, 6))
    code, f = _inner_weight_signature(W @ D, W.T @ D, {"W": W}, "dX")
    assert code == "transposed-weight" and f["fix"] == "dX = W.T @ d, not W @ d"
    code, f = _inner_weight_signature(D.T @ W, D.T @ W.T, {"W": W}, "dX")
    assert code == "transposed-weight" and f["fix"] == "dX = d @ W.T, not d @ W"
    assert _inner_weight_signature(W.T @ D, W.T @ D, {"W": W}, "dX") is None
    assert _inner_weight_signature(rng.standard_normal((4, 6)), W.T @ D, {"W": W}, "dX") is None


@pytest.mark.parametrize("cls, words", [
    ("SigmoidOnePlus", ["dX = dY * out * (1 + out): sigmoid's derivative is out * (1 - out), with a minus",
                        "dX = dY * out * (1 - out)"]),
    ("GeluErfNoPdf", ["dX = dY * 0.5 (1 + erf(x / sqrt(2))): the exact (erf) GELU's derivative is missing the term "
                      "x exp(-x**2 / 2) / sqrt(2 pi)",
                      "dX = dY * (0.5 (1 + erf(x / sqrt(2))) + x exp(-x**2 / 2) / sqrt(2 pi))"]),
    ("GeluTanhNoPdf", ["dX = dY * 0.5 (1 + t): the tanh-approximated GELU's derivative is missing the term "
                       "0.5 x (1 - t**2) sqrt(2/pi) (1 + 3 * 0.044715 x**2)"]),
    ("DropoutP03ScaledByP", ["backward multiplies by the drop probability p = 0.3 where forward divides by the keep "
                             "probability 1 - p = 0.7"]),
])
def test_fixd26_beginner_activation_bugs_are_named_with_the_fix(cls, words):
    """fixd26: sigmoid's a * (1 + a), GELU's derivative without x * phi(x) (both forms) and a dropout backward
    scaled by p were "no known bug pattern" (or "the two scales differ"); each is named with its fix. The right
    counterparts (tests/buggy_layers/beginner26.py) PASS in the planted-bug table."""
    from tests.buggy_layers import beginner26 as m

    c = getattr(m, cls)
    X = np.random.default_rng(0).standard_normal((5, 4))
    d = diagnose_layer(c(), X, twin=None, **getattr(c, "KWARGS", {}))
    errors = [f for f in d.findings if f.severity == "error"]
    assert not d.passed and errors, d.report()
    text = errors[0].sentence()
    assert all(w in text for w in words), text
    right = getattr(m, c.__mro__[1].__name__ if "P03" not in cls else "Dropout")
    assert diagnose_layer(right(), X, twin=None, **getattr(right, "KWARGS", {})).passed
