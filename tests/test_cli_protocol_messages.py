"""`gradcheck check` on protocols and `--reference` comparisons a new-user test (tester9: W7, W10, W11, W15,
W18) found misread: a class whose forward returns (out, cache) and whose backward takes (dout, cache); the
probe's header blaming forward for the probe's own failure; a square (in, out) weight given to an (out, in)
reference untransposed; PyTorch's weight/bias names refused by the reference; a random forward called a
wrong result; CS231n's batchnorm_backward_alt that no target could reach.

Each runs the CLI (the student's code in its sandbox) and fails on the code before these fixes.
"""

import textwrap

import numpy as np
import pytest
from test_cli import both, run, run_here
from test_protocols import ATTR  # LinearOI: PyTorch's names and layout, weight (out, in)

# --------------------------------------------------------------------------- W7: forward -> (out, cache)

CACHE = """
import numpy as np

class Cache:
    def __init__(self, n):
        rng = np.random.default_rng(3)
        self.W = rng.standard_normal((n, n))
        self.b = rng.standard_normal(n)

    def forward(self, x):
        z = x @ self.W + self.b
        return np.maximum(z, 0), (x, z)

    def backward(self, dy, cache):
        x, z = cache
        dz = dy * (z > 0)
        self.dW = x.T @ dz
        self.db = dz.sum(0)
        return DX
"""


def write(tmp_path, text, name="student.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text))
    return f


def check(path, cls, shape, *extra, init=None, through=run_here):
    return through("check", f"{path}::{cls}", "--input-shape", shape, *(["--init", init] if init else []), *extra)


def test_a_class_returning_out_and_cache_is_read_as_the_pair_protocol(tmp_path):
    p = check(write(tmp_path, CACHE.replace("DX", "dz @ self.W.T")), "Cache", "6,4", init='{"n": 4}',
              through=run)  # the console script
    out = both(p)
    assert p.returncode == 0, out
    assert ("protocol: attribute style (W/dW, b/db); forward returns (Y, cache) and backward takes (dY, cache): "
            "the cache forward returned is passed to backward, as for a CS231n function pair") in out
    assert "forward raised" not in out and "PASS: Cache: every gradient (dX, dW, db)" in out


def test_a_wrong_dx_of_a_cache_class_fails_in_dx_alone(tmp_path):
    # dz @ W instead of dz @ W.T (W square): before, "wrong result: forward gave Y as a tuple" (exit 1) and a
    # header saying forward raised
    p = check(write(tmp_path, CACHE.replace("DX", "dz @ self.W")), "Cache", "6,4", init='{"n": 4}')
    out = both(p)
    assert p.returncode == 1, out
    assert "FAIL: Cache: gradient mismatch in dX." in out
    assert "gave Y as a tuple" not in out and "forward raised" not in out


def test_a_cache_class_that_cannot_be_wrapped_is_a_protocol_message(tmp_path):
    f = write(tmp_path, """
        import numpy as np

        class SlotCache:
            __slots__ = ("W",)

            def __init__(self):
                self.W = np.random.default_rng(3).standard_normal((4, 4))

            def forward(self, x):
                return x @ self.W, (x,)

            def backward(self, dy, cache):
                return dy @ self.W.T
    """)
    p = check(f, "SlotCache", "6,4")
    out = both(p)
    assert p.returncode == 2, out
    assert ("SlotCache.forward returns (Y, cache) and SlotCache.backward takes (dY, cache), which gradcheck reads "
            "by wrapping the class, but this class cannot be wrapped") in out
    assert "wrong result" not in out and "forward raised" not in out


def test_the_probe_header_says_what_forward_did(tmp_path):
    # a forward that returns (Y, extra) with a backward(dY) alone: the probe could not read an array; before,
    # the header said "on the probe input forward raised"
    f = write(tmp_path, """
        import numpy as np

        class Pair:
            def __init__(self):
                self.W = np.ones((5, 3))

            def forward(self, X):
                return X @ self.W, "extra"

            def backward(self, dY):
                return dY @ self.W.T

        class Boom:
            def __init__(self):
                self.W = np.ones((5, 3))

            def forward(self, X):
                raise ValueError("no forward today")

            def backward(self, dY):
                return dY
    """)
    out = both(check(f, "Pair", "8,5"))
    assert "on the probe input forward returned a tuple, not an array" in out and "forward raised" not in out
    out = both(check(f, "Boom", "8,5"))
    assert "on the probe input forward raised ValueError: no forward today" in out


# --------------------------------------------------------------------------- W10, W11: --reference

LINEAR = """
import numpy as np

class Linear:
    '''weights (in, out): Y = X @ W + b'''
    def __init__(self, in_features, out_features):
        rng = np.random.default_rng(0)
        self.W = WEIGHT
        self.b = rng.standard_normal(out_features)

    def forward(self, X):
        self.X = X
        return FORWARD

    def backward(self, dY):
        self.dW = DW
        self.db = dY.sum(0)
        return DX

"""


def linear(tmp_path, weight="rng.standard_normal((in_features, out_features))", forward="X @ self.W + self.b",
           dw="self.X.T @ dY", dx="dY @ self.W.T", name="student.py"):
    return write(tmp_path, LINEAR.replace("WEIGHT", weight).replace("FORWARD", forward).replace("DW", dw)
                 .replace("DX", dx), name)


def reference(path, cls="Linear", n_out=4):
    return check(path, cls, "6,4", "--reference", "manualprop.Linear",
                 init=f'{{"in_features": 4, "out_features": {n_out}}}')


def test_a_square_in_out_weight_is_given_to_the_reference_transposed(tmp_path):
    # before: "FAIL: Linear: forward mismatch in Y ... look for a forward bug" for a correct layer
    p = reference(linear(tmp_path))
    out = both(p)
    assert p.returncode == 0, out
    assert ("reference: W given transposed: Linear's forward matches the reference's built with W.T, not with W "
            "as stored (Linear computes X @ W: (in, out), manualprop (out, in))") in out
    header = out.split("name ")[0]  # the header, above the table
    assert "reference: W given transposed" in header


def test_a_transposed_dw_of_a_square_in_out_weight_still_fails_against_the_reference(tmp_path):
    p = reference(linear(tmp_path, dw="dY.T @ self.X"))
    out = both(p)
    assert p.returncode == 1, out
    assert "reference: W given transposed" in out
    assert "FAIL: Linear: gradient mismatch in dW." in out


def test_a_square_out_in_weight_is_given_as_stored(tmp_path):
    p = reference(linear(tmp_path, forward="X @ self.W.T + self.b", dw="dY.T @ self.X", dx="dY @ self.W"))
    out = both(p)
    assert p.returncode == 0, out
    assert ("reference: W given as stored: Linear's forward matches the reference's built with W as stored "
            "((out, in), as manualprop), not transposed") in out


def test_a_symmetric_or_unmatched_square_weight_is_said_so(tmp_path):
    sym = linear(tmp_path, weight="(lambda A: A + A.T)(rng.standard_normal((4, 4)))")
    p = reference(sym)
    out = both(p)
    assert p.returncode == 0, out  # before this fix's second probe: dW FAILed against the reference
    assert ("reference: W given transposed: the reference built either way matches Linear's forward (W is "
            "symmetric?), and only with W.T do its gradients of W agree with Linear's; the forward cannot tell the "
            "orientation, so dW is checked by central differences") in out
    assert "dW (4, 4)" in out and "FAIL" not in out
    # a transposed dW is then wrong against central differences (numerical perturbs one entry, not a symmetric pair)
    p = reference(linear(tmp_path, weight="(lambda A: A + A.T)(rng.standard_normal((4, 4)))", dw="dY.T @ self.X",
                         name="symbug.py"))
    out = both(p)
    assert p.returncode == 1 and "FAIL: Linear: gradient mismatch in dW." in out, out
    bug = linear(tmp_path, forward="X @ self.W + 2 * self.b", name="bug.py")  # a forward bug: neither way fits
    p = reference(bug)
    out = both(p)
    assert p.returncode == 1, out
    assert ("reference: W given as stored: the reference built with W as stored and with W.T both differ from "
            "Linear's forward") in out
    assert "forward mismatch in Y" in out


@pytest.mark.parametrize("n_out", [3, 4])
def test_pytorch_names_are_mapped_to_the_references(tmp_path, n_out):
    # before: usage error (exit 2) "The reference Linear has parameters ['W', 'b'] but LinearOI has ['bias', 'weight']"
    p = reference(write(tmp_path, ATTR), "LinearOI", n_out)
    out = both(p)
    assert p.returncode == 0, out
    assert "reference: LinearOI's weight as W, bias as b (the reference's names)" in out
    assert "PASS: LinearOI: every gradient (dX, dweight, dbias) and the forward output match" in out


def twin(path, cls="Linear", n_out=4):
    return check(path, cls, "6,4", "--twin", init=f'{{"in_features": 4, "out_features": {n_out}}}')


def test_the_twin_orients_a_square_weight_as_the_reference_does(tmp_path):
    """Session 10: --twin gave a square (in, out) W to autoprop's (out, in) Linear as stored: a correct layer
    FAILed with "Y differs from the twin's forward ... look for a forward bug" (exit 1). It now goes through the
    reference's one orientation probe (sources._oriented)."""
    p = twin(linear(tmp_path))
    out = both(p)
    assert p.returncode == 0, out
    assert ("twin: W given transposed: Linear's forward matches the twin's built with W.T, not with W as stored "
            "(Linear computes X @ W: (in, out), autoprop (out, in))") in out, out
    assert "PASS: Linear: every gradient (dX, dW, db) and the forward output match" in out, out
    p = twin(linear(tmp_path, dw="dY.T @ self.X", name="bug.py"))  # a transposed dW still fails, tape and numbers
    out = both(p)
    assert p.returncode == 1 and "FAIL: Linear: gradient mismatch in dW." in out, out
    p = twin(linear(tmp_path, forward="X @ self.W.T + self.b", dw="dY.T @ self.X", dx="dY @ self.W", name="oi.py"))
    out = both(p)
    assert p.returncode == 0 and "twin: W given" not in out, out  # as stored, as autoprop: nothing to say


@pytest.mark.parametrize("n_out", [3, 4])
def test_pytorch_names_are_mapped_to_the_twins(tmp_path, n_out):
    """Session 10: --twin on a layer with weight/bias was a usage error (exit 2) "The twin Linear of Linear has
    variables ['W', 'b'] but Linear.params has keys ['bias', 'weight']; they must match"."""
    p = twin(write(tmp_path, ATTR.replace("class LinearOI", "class Linear")), "Linear", n_out)
    out = both(p)
    assert p.returncode == 0, out
    assert "twin: Linear's weight as W, bias as b (the twin's names)" in out, out
    assert "PASS: Linear: every gradient (dX, dweight, dbias) and the forward output match" in out, out


#: makemore part 4's batch norm (Karpathy's names, gain and bias of shape (1, H)), with the biased variance of
#: manualprop.BatchNorm1D's training mode
MAKEMORE_BN = """
import numpy as np

class BatchNorm:
    def __init__(self, n_hidden=4, seed=0):
        r = np.random.default_rng(seed)
        self.bngain = r.standard_normal((1, n_hidden)) * 0.1 + 1.0
        self.bnbias = r.standard_normal((1, n_hidden)) * 0.1

    def forward(self, X, training=False):
        self.istd = (X.var(0, keepdims=True) + 1e-5) ** -0.5
        self.raw = (X - X.mean(0, keepdims=True)) * self.istd
        return self.bngain * self.raw + self.bnbias

    def backward(self, dY):
        n = dY.shape[0]
        self.dbngain = (self.raw * dY).sum(0, keepdims=True)
        self.dbnbias = dY.sum(0, keepdims=True)
        d = self.bngain * dY
        return self.istd / n * (n * d - d.sum(0) - self.raw * (d * self.raw).sum(0))
"""


def test_makemores_batch_norm_names_and_shapes_are_mapped_to_the_references(tmp_path):
    """tester30k L4: bngain/bnbias of shape (1, H) were a usage error (exit 2) "The reference BatchNorm1D has
    parameters ['beta', 'gamma'] but BatchNorm has ['bnbias', 'bngain']; they must match"."""
    p = check(write(tmp_path, MAKEMORE_BN), "BatchNorm", "6,4", "--reference", "manualprop.BatchNorm1D",
              "--reference-init", '{"num_features": 4}', "--training", init=None)
    out = both(p)
    assert p.returncode == 0, out
    assert "reference: BatchNorm's bngain as gamma, bnbias as beta (the reference's names)" in out, out
    assert "PASS: BatchNorm: every gradient (dX, dbngain, dbnbias) and the forward output match" in out, out


def test_parameter_names_map_one_to_one_or_not_at_all():
    from gradcheck.sources import param_names

    assert param_names(["W", "b"], ["weight", "bias"]) == {"weight": "W", "bias": "b"}
    assert param_names(["gamma", "beta"], ["weight", "bias"]) == {"weight": "gamma", "bias": "beta"}
    assert param_names(["W", "b"], ["W", "b"]) == {"W": "W", "b": "b"}
    assert param_names(["W", "b"], ["weight"]) is None  # one missing
    assert param_names(["W", "b"], ["weight", "kernel"]) is None  # two for W
    assert param_names(["W", "b"], ["proj", "bias"]) is None


# --------------------------------------------------------------------------- W15: a random forward

RANDOM = """
import numpy as np

class Drop:
    def __init__(self, p=0.5):
        self.p = p

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        self.mask = (DRAW(X.shape) > self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask
"""


def test_a_forward_drawing_from_a_fresh_generator_is_not_checked_exit_3(tmp_path):
    # before: "FAIL: Drop [training]: random forward", exit 1 (a result is wrong) for a correct layer
    p = check(write(tmp_path, RANDOM.replace("DRAW", "np.random.default_rng().random")), "Drop", "6,4")
    out = both(p)
    assert p.returncode == 3, out
    assert "NOT CHECKED: Drop [training]: random forward (see the diagnosis)." in out
    assert "FAIL" not in out
    assert "the forward is non-deterministic" in out  # the diagnosis, kept
    assert "or from numpy's global generator (np.random.rand, np.random.random)" in out
    assert "not checked (exit 3): Drop's forward is random in training mode" in out


def test_the_global_generator_the_advice_names_is_rewound(tmp_path):
    p = check(write(tmp_path, RANDOM.replace("DRAW", "np.random.random_sample")), "Drop", "6,4")
    assert p.returncode == 0, both(p)
    bug = RANDOM.replace("DRAW", "np.random.random_sample").replace("dY * self.mask", "dY * (self.mask > 0)")
    p = check(write(tmp_path, bug, "bug.py"), "Drop", "6,4")
    assert p.returncode == 1 and "FAIL: Drop [training]: gradient mismatch in dX." in both(p), both(p)


# --------------------------------------------------------------------------- W18: NAME_backward_alt

CS = """
import numpy as np

def batchnorm_forward(x, gamma, beta, bn_param):
    eps = bn_param.get("eps", 1e-5)
    mu, var = x.mean(0), x.var(0)
    xhat = (x - mu) / np.sqrt(var + eps)
    return gamma * xhat + beta, (xhat, gamma, var, eps)

def batchnorm_backward(dout, cache):
    xhat, gamma, var, eps = cache
    dxhat = dout * gamma
    dx = (dxhat - dxhat.mean(0) - xhat * (dxhat * xhat).mean(0)) / np.sqrt(var + eps)
    return dx, (dout * xhat).sum(0), dout.sum(0)

def batchnorm_backward_alt(dout, cache):
    xhat, gamma, var, eps = cache
    dxhat = dout * gamma
    dx = ALT_DX
    return dx, (dout * xhat).sum(0), dout.sum(0)
"""
RIGHT = "(dxhat - dxhat.mean(0) - xhat * (dxhat * xhat).mean(0)) / np.sqrt(var + eps)"
WRONG = "(dxhat - dxhat.mean(0)) / np.sqrt(var + eps)"  # the xhat term forgotten


def bn(path, target):
    return check(path, target, "8,5;5;5", init='{"bn_param": {"mode": "train"}}')


@pytest.mark.parametrize("target", ["batchnorm_backward_alt", "batchnorm_alt"])
def test_a_backward_variant_is_checked_with_its_forward(tmp_path, target):
    # before: usage error (exit 2) "has no class 'batchnorm_alt' and no function pair"
    p = bn(write(tmp_path, CS.replace("ALT_DX", WRONG)), target)
    out = both(p)
    assert p.returncode == 1, out
    assert "protocol: CS231n function pair (batchnorm_forward/batchnorm_backward_alt)" in out
    assert f"FAIL: {target}: gradient mismatch in dx." in out
    p = bn(write(tmp_path, CS.replace("ALT_DX", RIGHT), "right.py"), target)
    assert p.returncode == 0, both(p)


def test_the_plain_target_names_the_variant_it_does_not_check(tmp_path):
    f = write(tmp_path, CS.replace("ALT_DX", WRONG))
    p = bn(f, "batchnorm")
    out = both(p)
    assert p.returncode == 0, out  # batchnorm_backward is right
    assert ("batchnorm_backward_alt, another backward of batchnorm_forward, is not checked here: check it as "
            "::batchnorm_backward_alt") in out
    p = bn(f, "layernorm")
    out = both(p)
    assert p.returncode == 2, out
    assert ("Other backward functions: batchnorm_backward_alt (paired with batchnorm_forward: check it as "
            "::batchnorm_backward_alt).") in out


def test_the_fixed_batchnorm_backward_matches_autograd():
    """The RIGHT formula the tests above PASS is the gradient of the forward (HIPS autograd, the oracle)."""
    import autograd
    import autograd.numpy as anp

    rng = np.random.default_rng(0)
    x, gamma, beta, G = rng.standard_normal((8, 5)), rng.standard_normal(5), rng.standard_normal(5), \
        rng.standard_normal((8, 5))
    ns = {}
    exec(textwrap.dedent(CS.replace("ALT_DX", RIGHT)), ns)

    def loss(x):
        xhat = (x - anp.mean(x, 0)) / anp.sqrt(anp.var(x, 0) + 1e-5)
        return anp.sum((gamma * xhat + beta) * G)
    _, cache = ns["batchnorm_forward"](x, gamma, beta, {})
    dx = ns["batchnorm_backward_alt"](G, cache)[0]
    np.testing.assert_allclose(dx, autograd.grad(loss)(x), rtol=1e-9, atol=1e-12)
