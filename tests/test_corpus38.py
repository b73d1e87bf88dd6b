"""Public numpy code corpus38 ran through `gradcheck check` (session 38, issue 10; its harness, outside the tree, reproduces
each finding on the upstream code itself). Written here in those layouts, not copied:

- F2: a layer with an integer input beside float ones (a 0/1 mask, AkiRusProd/numpy-transformer's
  ``MultiHeadAttention.forward(query, key, value, mask)``) whose backward returns one gradient per float input,
  ``(dq, dk, dv)``: it was a GradientShapeError, exit 1 "dmask is missing", on a correct layer;
- F1: a package folder holding only sub-folders (numpy-transformer's ``transformer/layers/`` of ``base/`` and
  ``combined/``) was not copied into the sandbox: "No module named 'transformer.layers'";
- F3: CS231n-style pairs as wiseodd/hipsternet writes batch norm, ``bn_forward(X, gamma, beta, cache, ...)`` with a
  forward argument named ``cache`` beside ``bn_backward(dout, cache)``, and ``--init`` lists at the top level.
"""

import numpy as np
import pytest

import gradcheck
from gradcheck import sandbox


class MaskedAttention:
    """Scaled dot-product attention with a 0/1 key mask (the mask an integer input, no gradient)."""

    def __init__(self, scale_dq=1.0):
        self.params, self.grads, self.scale_dq = {}, {}, scale_dq

    def forward(self, q, k, v, mask):
        self.q, self.k, self.v = q, k, v
        s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
        s = np.where(mask == 0, -1e9, s)
        p = np.exp(s - s.max(-1, keepdims=True))
        self.p = p / p.sum(-1, keepdims=True)
        return self.p @ v

    def backward(self, dy):
        dv = self.p.transpose(0, 2, 1) @ dy
        dp = dy @ self.v.transpose(0, 2, 1)
        ds = self.p * (dp - (dp * self.p).sum(-1, keepdims=True)) / np.sqrt(self.q.shape[-1])
        return self.scale_dq * (ds @ self.k), ds.transpose(0, 2, 1) @ self.q, dv


def _attention_inputs():
    r = np.random.default_rng(0)
    return [r.normal(size=(2, 3, 4)), r.normal(size=(2, 5, 4)), r.normal(size=(2, 5, 4)),
            r.integers(0, 2, size=(2, 1, 5))]


def test_f2_one_gradient_per_float_input_beside_an_integer_mask_is_read_in_order():
    res = gradcheck.check_layer(MaskedAttention(), _attention_inputs())
    assert res.passed, str(res)
    assert [r.tensor for r in res.records] == ["dX0", "dX1", "dX2"], [r.tensor for r in res.records]


def test_f2_a_wrong_gradient_among_them_still_fails_naming_it():
    res = gradcheck.check_layer(MaskedAttention(scale_dq=0.5), _attention_inputs())
    assert not res.passed
    assert [r.tensor for r in res.records if not r.passed] == ["dX0"], str(res)


def _namespace_project(tmp_path):
    layers = tmp_path / "transformer" / "layers"
    (layers / "base").mkdir(parents=True)
    (layers / "combined").mkdir()
    (layers / "base" / "dense.py").write_text("def dense(x, w):\n    return x @ w\n")
    att = layers / "combined" / "self_attention.py"
    att.write_text("from transformer.layers.base.dense import dense\n")
    (tmp_path / "transformer" / "data" / "raw").mkdir(parents=True)  # a folder with files but no .py: not entered
    (tmp_path / "transformer" / "data" / "notes.txt").write_text("")
    (tmp_path / "transformer" / "data" / "raw" / "hidden.py").write_text("")
    return att


def test_f1_a_folder_of_sub_packages_alone_is_copied_with_them(tmp_path, monkeypatch):
    att = _namespace_project(tmp_path)
    monkeypatch.chdir(tmp_path)  # gradcheck check run from the repository's root, as its README runs it
    got = sorted(sandbox.sibling_files("transformer/layers/combined/self_attention.py"))
    assert "transformer/layers/base/dense.py" in got, got
    assert not any(k.startswith("transformer/data/") for k in got), got
    assert str(att).endswith(got[-1].split("/")[-1])
    beside = tmp_path / "train.py"  # a file beside the package importing it: the same walk
    beside.write_text("from transformer.layers.base.dense import dense\n")
    (tmp_path / "notes" / "old" / "older").mkdir(parents=True)  # not imported: below its top, a folder of folders
    (tmp_path / "notes" / "old" / "older" / "o.py").write_text("")  # is not entered (review24)
    got = sorted(sandbox.sibling_files(str(beside)))
    assert "transformer/layers/base/dense.py" in got and "notes/old/older/o.py" not in got, got


# wiseodd/hipsternet hipsternet/layer.py bn_forward/bn_backward (The Unlicense), its layout: forward takes the running
# statistics as a tuple named cache, returns (out, cache, running_mean, running_var); backward(dout, cache)
def bn_forward(X, gamma, beta, cache, momentum=.9, train=True):
    running_mean, running_var = cache
    mu, var = np.mean(X, axis=0), np.var(X, axis=0)
    X_norm = (X - mu) / np.sqrt(var + 1e-8)
    out = gamma * X_norm + beta
    cache = (X, X_norm, mu, var, gamma, beta)
    running_mean = momentum * running_mean + (1. - momentum) * mu
    running_var = momentum * running_var + (1. - momentum) * var
    return out, cache, running_mean, running_var


def bn_backward(dout, cache, mean_path=True):
    X, X_norm, mu, var, gamma, beta = cache
    N, D = X.shape
    X_mu = X - mu
    std_inv = 1. / np.sqrt(var + 1e-8)
    dX_norm = dout * gamma
    dvar = np.sum(dX_norm * X_mu, axis=0) * -.5 * std_inv**3
    dmu = np.sum(dX_norm * -std_inv, axis=0) + dvar * np.mean(-2. * X_mu, axis=0)
    dX = (dX_norm * std_inv) + (dvar * 2 * X_mu / N) + mean_path * (dmu / N)
    return dX, np.sum(dout * X_norm, axis=0), np.sum(dout, axis=0)


def test_f3_hipsternet_batchnorm_pair_is_read_and_passes():
    layer = gradcheck.function_pair(bn_forward, bn_backward, cache=[[0.0] * 4, [1.0] * 4])
    res = gradcheck.check_layer(layer, [(5, 4), (4,), (4,)], twin=None)
    assert res.passed, str(res)
    assert [r.tensor for r in res.records] == ["dX", "dgamma", "dbeta"], [r.tensor for r in res.records]
    assert layer.state_outputs == ["running_mean", "running_var"]


def test_f3_its_backward_without_the_mean_path_fails_in_dx():
    def bn_backward_no_mean(dout, cache):
        return bn_backward(dout, cache, mean_path=False)
    layer = gradcheck.function_pair(bn_forward, bn_backward_no_mean, cache=[[0.0] * 4, [1.0] * 4])
    res = gradcheck.check_layer(layer, [(5, 4), (4,), (4,)], twin=None)
    assert [r.tensor for r in res.records if not r.passed] == ["dX"], str(res)


def test_f8_a_tensor_times_a_scipy_sparse_matrix_says_sparse_and_its_fix_runs():
    """scikit-network's graph convolution multiplies a scipy.sparse adjacency: ``t @ A`` said only "Input operand 1
    does not have enough dimensions (has 0 ...)"; the message now names the sparse matrix and its fix, which runs."""
    from scipy import sparse

    import autoprop as ap
    A = sparse.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    x = ap.Variable(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match=r"scipy\.sparse csr_matrix.*A\.toarray\(\) @ t"):
        x.T @ A
    with ap.GradientTape() as tape:
        y = np.sum((A.toarray() @ x) * np.arange(6.0).reshape(2, 3))
    assert np.array_equal(tape.gradient(y, x).numpy(), A.toarray().T @ np.arange(6.0).reshape(2, 3))


def test_f3_the_cli_header_says_what_the_pair_got(tmp_path):
    """`gradcheck check layer.py::bn --init '{"cache": [...]}'` (exit 3 "can't multiply sequence by non-int of type
    'float'" before, under a header saying the list was given "to the constructor as float64 arrays")."""
    import inspect

    from test_cli import check_source
    source = "import numpy as np\n\n\n" + inspect.getsource(bn_forward) + "\n\n" + inspect.getsource(bn_backward)
    code, out = check_source(tmp_path, source, "bn", "--input-shape", "5,4;4;4", "--init",
                             '{"cache": [[0, 0, 0, 0], [1, 1, 1, 1]]}', "--isolation", "process", file="layer.py")
    assert code == 0 and "PASS: bn: every gradient (dX, dgamma, dbeta) matches" in out, out
    flat = " ".join(out.split())
    assert "init: cache (2, 4) given to the forward function as float64 arrays" in flat, out
    assert "bn_forward returns running_mean, running_var after (out, cache): read as state" in flat, out
