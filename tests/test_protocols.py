"""Students' code as they write it (gradcheck/_adapters.py), through the real ``gradcheck check``:
array attributes without gradients, attribute style, CS231n function pairs, unseen weights, and
``--tape`` on a forward that writes a Tensor into a numpy array. The first test runs the console script, the others
its ``gradcheck.cli.main`` in this process (``test_cli.run_here``: the same parser, checks and report, the student's
code in its sandbox process), which spares the start of a Python per check."""

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from test_cli import run, run_here

from gradcheck import UsageError, check_layer
from gradcheck import _adapters as AD

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "examples" / "seed_style_linear.py"
CS231N = ROOT / "examples" / "cs231n_layers.py"
INIT = '{"in_features": 5, "out_features": 3}'


def text(p):
    """stdout and stderr with the terminal wrapping undone."""
    return " ".join((p.stdout + p.stderr).split())


def planted(tmp_path, src, old, new, name):
    code = src.read_text()
    assert code.count(old) == 1, old
    f = tmp_path / name
    f.write_text(code.replace(old, new))
    return f


def test_seed_style_layer_checks_dx_and_names_w_as_unchecked(tmp_path):
    p = run("check", f"{SEED}::Linear", "--input-shape", "8,5", "--init", INIT, "--json", tmp_path / "d.json")
    t = text(p)
    assert p.returncode == 0, t
    assert "protocol: array attributes without gradients (W, b): backward(dY) -> dX only" in t
    assert "mode: forward has no training switch: one mode" in t
    assert "note: W, b are parameters with no gradient to check: backward computes no dW, db" in t
    assert "every gradient (dX) matches" in t and "(W, b: no gradient checked, see above)" in t
    info = json.loads((tmp_path / "d.json").read_text())["protocol"]
    assert info["protocol"] == "seed" and info["unchecked"] == ["W", "b"] and info["forward_training"] is False


def test_seed_style_planted_bug_fails(tmp_path):
    f = planted(tmp_path, SEED, "np.matmul(dY, self.W.T", "np.matmul(dY[::-1], self.W.T", "seed_bug.py")
    p = run_here("check", f"{f}::Linear", "--input-shape", "8,5", "--init", INIT)
    assert p.returncode == 1, text(p)
    assert "FAIL: Linear: gradient mismatch in dX" in text(p)


def test_adapter_copies_the_buffer_forward_returns_in_process():
    """The same module in this process: the returned buffer is overwritten by the next call, the
    adapter's copy is not, and check_layer checks the adapted object."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("seed_style_linear", SEED)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    raw = mod.Linear(5, 3, rng=0)
    X1, X2 = np.ones((4, 5)), np.zeros((4, 5))
    first = raw.forward(X1)
    raw.forward(X2)
    assert np.array_equal(first, np.tile(raw.b, (4, 1)))  # the student's buffer now holds the 2nd output
    layer, info = AD.adapt(mod.Linear(5, 3, rng=0), [X1])
    assert info["protocol"] == "seed" and info["unchecked"] == ["W", "b"] and layer.params == {}
    Y1 = layer.forward(X1)
    layer.forward(X2)
    np.testing.assert_allclose(Y1, X1 @ layer.W + layer.b)
    res = check_layer(layer, (6, 5), twin=None, seed=0)
    assert res.passed and res.name == "Linear" and [r.tensor for r in res.records] == ["dX"]


ATTR = """
import numpy as np

class LinearIO:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.W = rng.standard_normal((in_features, out_features))
        self.b = rng.standard_normal(out_features)

    def forward(self, X, training=False):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW = self.X.T @ dY
        self.db = dY.sum(axis=0)
        self.dX = dY @ self.W.T      # a cached dX: X is no weight (forward overwrites self.X)
        return self.dX

class LinearOI:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.weight = rng.standard_normal((out_features, in_features))
        self.bias = rng.standard_normal(out_features)

    def forward(self, X):
        self.X = X
        return X @ self.weight.T + self.bias

    def backward(self, dY):
        self.grad_weight = dY.T @ self.X
        self.bias_grad = dY.sum(axis=0)
        return dY @ self.weight
"""


@pytest.fixture
def attr_file(tmp_path):
    f = tmp_path / "attr_layers.py"
    f.write_text(textwrap.dedent(ATTR))
    return f


@pytest.mark.parametrize("cls, header, tensors", [
    ("LinearIO", "protocol: attribute style (W/dW, b/db), weights (in, out)", "dX, dW, db"),
    ("LinearOI", "protocol: attribute style (weight/grad_weight, bias/bias_grad), weights (out, in)",
     "dX, dweight, dbias"),
])
def test_attribute_style_linear(attr_file, cls, header, tensors):
    p = run_here("check", f"{attr_file}::{cls}", "--input-shape", "8,5", "--init", INIT)
    t = text(p)
    assert p.returncode == 0, t
    assert header in t and f"every gradient ({tensors}) matches" in t
    assert ("mode: forward has no training switch: one mode" in t) == (cls == "LinearOI")


@pytest.mark.parametrize("old, new, bad", [
    ("self.dW = self.X.T @ dY", "self.dW = self.X.T @ dY / len(dY)", "dW"),  # averaged over the batch
    ("self.grad_weight = dY.T @ self.X", "self.grad_weight = dY.T @ self.X[::-1]", "dweight"),
])
def test_attribute_style_planted_bug_fails(attr_file, tmp_path, old, new, bad):
    f = planted(tmp_path, attr_file, old, new, "attr_bug.py")
    cls = "LinearIO" if bad == "dW" else "LinearOI"
    p = run_here("check", f"{f}::{cls}", "--input-shape", "8,5", "--init", INIT)
    assert p.returncode == 1, text(p)
    assert f"gradient mismatch in {bad}" in text(p)


def test_attribute_style_weight_without_gradient_is_an_error_as_in_the_dict_protocol(attr_file, tmp_path):
    """A forgotten db beside a dW is never a PASS (the bias is never trained); b may as well be a constant, which the
    checker cannot tell from behaviour, so the layer is NOT CHECKED as a whole, exit 3 (tester13 H4; before, exit 1,
    and before that exit 0 with a warning)."""
    f = planted(tmp_path, attr_file, "self.db = dY.sum(axis=0)", "pass", "attr_nodb.py")
    p = run_here("check", f"{f}::LinearIO", "--input-shape", "8,5", "--init", INIT)
    t = text(p)
    assert p.returncode == 3, t
    assert "protocol: attribute style (W/dW), weights (in, out)" in t
    assert "WARNING: forward uses b but backward sets no gradient attribute for it (db" in t
    assert "NOT CHECKED as a whole (exit 3)" in t and "NOT CHECKED as a whole: LinearIO:" in t and "PASS" not in t
    assert "cannot tell whether b is a weight whose gradient backward forgot (then set self.db)" in t


def test_a_grads_dict_beside_array_attributes_is_read_and_checked(tmp_path):
    """self.W with self.grads = {"W": ...} and no params dict: dW was ignored ("backward computes no dW")."""
    f = tmp_path / "grads_attr.py"
    f.write_text(textwrap.dedent('''
        import numpy as np

        class Lin:
            def __init__(self, in_features, out_features, k=1.0):
                self.W = np.random.default_rng(0).standard_normal((in_features, out_features))
                self.grads, self.k = {}, k

            def forward(self, x):
                self.x = x
                return x @ self.W

            def backward(self, dout):
                self.grads["W"] = self.k * self.x.T @ dout
                return dout @ self.W.T
        '''))
    good = run_here("check", f"{f}::Lin", "--input-shape", "8,5", "--init", INIT)
    assert good.returncode == 0 and "attribute style (W/grads['W'])" in text(good), text(good)
    assert "every gradient (dX, dW) matches" in text(good)
    bad = run_here("check", f"{f}::Lin", "--input-shape", "8,5", "--init", '{"in_features": 5, "out_features": 3, "k": 2}')
    assert bad.returncode == 1 and "gradient mismatch in dW" in text(bad), text(bad)


def test_two_gradient_attributes_for_one_weight_is_a_protocol_error(attr_file, tmp_path):
    f = planted(tmp_path, attr_file, "self.db = dY.sum(axis=0)", "self.db = self.grad_b = dY.sum(axis=0)",
                "attr_two.py")
    p = run_here("check", f"{f}::LinearIO", "--input-shape", "8,5", "--init", INIT)
    t = text(p)
    assert p.returncode == 3 and "Traceback" not in t
    assert "LinearIO.b has several gradient attributes after backward (db, grad_b); keep one" in t
    assert "(1) manualprop protocol" in t and "(3) CS231n function pair" in t


UNSEEN = """
import numpy as np

class Scaled:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((in_features, out_features))}
        self.grads = {}
        self.scale = rng.standard_normal(out_features)   # a weight the checker is not told about
        self._buffer = np.zeros(out_features)            # overwritten by forward: not a weight

    def forward(self, X, training=False):
        self.X = X
        self._buffer = X.sum(axis=0)
        return (X @ self.params["W"]) * self.scale

    def backward(self, dY):
        self.grads["W"] = self.X.T @ (dY * self.scale)
        return (dY * self.scale) @ self.params["W"].T
"""


def test_manualprop_layer_with_unseen_weights_warns(tmp_path):
    f = tmp_path / "scaled.py"
    f.write_text(textwrap.dedent(UNSEEN))
    p = run_here("check", f"{f}::Scaled", "--input-shape", "8,5", "--init", INIT)
    t = text(p)
    assert p.returncode == 3, t  # tester13 H4: a forgotten weight or a constant, undecided (was a PASS)
    assert "protocol: manualprop (params/grads dicts)" in t and "mode: eval (forward(X, training=False))" in t
    assert "WARNING: forward uses the array attribute scale, not in params" in t and "_buffer" not in t
    assert "NOT CHECKED as a whole: Scaled:" in t and "or pass --constants scale" in t and "PASS" not in t, t
    p = run_here("check", f"{f}::Scaled", "--input-shape", "8,5", "--init", INIT, "--constants", "scale")
    t = text(p)
    assert p.returncode == 0 and "(scale: no gradient checked, see above)" in t, t


def test_manualprop_layer_whose_forward_takes_no_training(tmp_path):
    f = tmp_path / "notrain.py"
    f.write_text(textwrap.dedent(UNSEEN).replace("def forward(self, X, training=False):", "def forward(self, X):")
                 .replace("* self.scale", "").replace("(dY * self.scale)", "dY"))
    p = run_here("check", f"{f}::Scaled", "--input-shape", "8,5", "--init", INIT)
    t = text(p)
    assert p.returncode == 0, t
    assert "protocol: manualprop (params/grads dicts) mode: forward has no training switch: one mode" in t
    assert "WARNING" not in t and "every gradient (dX, dW) matches" in t


CS231N_CASES = {
    "affine": ("4,5;5,3;3", None, "dx, dw, db"),
    "relu": ("4,5", None, "dx"),
    "conv": ("2,3,5,5;4,3,3,3;4", '{"conv_param": {"stride": 1, "pad": 1}}', "dx, dw, db"),
    "batchnorm": ("6,4;4;4", '{"bn_param": {"mode": "train"}}', "dx, dgamma, dbeta"),
}


def cs231n(name, path=CS231N, shape=None):
    shp, init, _ = CS231N_CASES[name]
    return run_here("check", f"{path}::{name}", "--input-shape", shape or shp, *(["--init", init] if init else []))


@pytest.mark.parametrize("name", list(CS231N_CASES))
def test_cs231n_pairs_pass(name):
    p = cs231n(name)
    t = text(p)
    assert p.returncode == 0, t
    fwd = {"conv": "conv_forward_naive/conv_backward_naive"}.get(name, f"{name}_forward/{name}_backward")
    assert f"protocol: CS231n function pair ({fwd})" in t
    assert f"every gradient ({CS231N_CASES[name][2]}) matches" in t
    if name == "batchnorm":
        assert "mode: as given in --init (bn_param mode 'train')" in t


@pytest.mark.parametrize("name", ["batchnorm", "affine"])
def test_cs231n_pair_mode_line_is_the_same_in_check_layer_and_the_cli(name):
    # newuser21 M3: check_layer(function_pair(batchnorm_forward, ..., bn_param={"mode": "train"})) ran the pair
    # twice (the adapter's ignored training keyword read as a switch) and said "checked once, in eval mode (pass
    # training=True ...)", while gradcheck check said "mode: as given in --init (bn_param mode 'train')"
    import importlib.util
    import json

    from gradcheck import check_layer, function_pair

    spec = importlib.util.spec_from_file_location("cs231n_examples_mode", CS231N)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    shp, init, _ = CS231N_CASES[name]
    shapes = [tuple(int(n) for n in s.split(",")) for s in shp.split(";")]
    pair = function_pair(getattr(mod, f"{name}_forward"), getattr(mod, f"{name}_backward"),
                         **(json.loads(init) if init else {}))
    r = check_layer(pair, shapes, twin=None)
    cli = [line for line in cs231n(name).stdout.splitlines() if line.startswith("mode: ")]
    api = [n for n in r.notes if n.startswith("mode: ")]
    want = {"batchnorm": "mode: as given in --init (bn_param mode 'train'); the forward has no training switch",
            "affine": "mode: forward has no training switch: one mode"}[name]
    assert cli == [want] and api == [want.replace("--init", "function_pair's keywords")], (cli, api)
    assert r.passed and r.other_modes == [] and r.training is False
    assert not any("eval mode" in n or "training=True" in n for n in r.notes), r.notes


@pytest.mark.parametrize("name, old, new, bad", [
    ("affine", "return dx, dw, dout.sum(axis=0)", "return dx, dw, dout.sum(axis=0) / len(dout)", "db"),
    ("relu", "return dout * (cache > 0)", "return dout", "dx"),  # the local derivative is missing
    ("conv", "dxp[sl] += np.tensordot(g, w, axes=([1], [0]))",
     "dxp[sl] += np.tensordot(g, w[:, :, ::-1, ::-1], axes=([1], [0]))", "dx"),
    ("batchnorm", 'if mode != "train":', "if True:", "dx"),  # forgets the mean and variance paths
])
def test_cs231n_planted_bug_fails(tmp_path, name, old, new, bad):
    f = planted(tmp_path, CS231N, old, new, "layers_bug.py")
    p = cs231n(name, path=f)
    assert p.returncode == 1, text(p)
    assert f"gradient mismatch in {bad}" in text(p)


def test_load_class_in_process_gives_the_same_adapters():
    from gradcheck.cli import load_class

    factory, _ = load_class(f"{CS231N}::conv")
    layer, info = AD.adapt(factory(conv_param={"stride": 2, "pad": 1}))
    assert info["protocol"] == "cs231n"
    res = check_layer(layer, [(2, 3, 5, 5), (4, 3, 3, 3), (4,)], twin=None, seed=0)
    assert res.passed and [r.tensor for r in res.records] == ["dx", "dw", "db"]
    with pytest.raises(UsageError, match="has no class 'dense'.*Function pairs: affine"):
        load_class(f"{CS231N}::dense")


def test_cs231n_one_shape_per_array_argument():
    p = cs231n("affine", shape="4,5")
    t = text(p)
    assert p.returncode == 2 and "Traceback" not in t, t
    assert "1 input shape given, but affine_forward takes 3 inputs (x, w, b)" in t


def test_unknown_name_lists_classes_pairs_and_protocols():
    p = run_here("check", f"{CS231N}::dense", "--input-shape", "4,5")
    t = text(p)
    assert p.returncode == 2, t
    assert "has no class 'dense' and no function pair dense_forward/dense_backward" in t
    assert "Function pairs: affine, batchnorm, conv, relu" in t and "(2) attribute style" in t


ESCAPE = """
import numpy as np

class Scatter:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((in_features + 1, out_features))}
        self.grads = {}

    def forward(self, X, training=False):
        cols = np.ones((X.shape[0], X.shape[1] + 1))
        cols[:, np.arange(X.shape[1])] = X
        self.cols = cols
        return cols @ self.params["W"]

    def backward(self, dY):
        self.grads["W"] = self.cols.T @ dY
        return (dY @ self.params["W"].T)[:, :-1]
"""


def test_tape_names_the_line_where_a_tensor_is_written_into_numpy(tmp_path):
    f = tmp_path / "scatter.py"
    f.write_text(textwrap.dedent(ESCAPE))
    line = textwrap.dedent(ESCAPE).splitlines().index("        cols[:, np.arange(X.shape[1])] = X") + 1
    p = run_here("check", f"{f}::Scatter", "--input-shape", "8,5", "--init", INIT, "--tape")
    t = text(p)
    assert p.returncode == 0, t  # a correct backward never FAILs because the tape lost X
    assert (f"the tape lost track of X at scatter.py:{line} in forward ('cols[:, np.arange(X.shape[1])] = X')"
            in t)
    assert "every gradient (dX, dW) matches" in t


class _TrainKeyword:
    """forward(X, train=True): the training switch under another name (newuser item 7)."""

    def __init__(self):
        self.gamma, self.seen = np.ones(4), []

    def forward(self, X, train=True):
        self.seen.append(train)
        self.X = X
        return self.gamma * (X - X.mean(0)) if train else self.gamma * X

    def backward(self, dY):
        self.dgamma = (dY * self.X).sum(0)
        return dY * self.gamma


class _ModeKeyword(_TrainKeyword):
    def forward(self, X, mode="train"):
        self.seen.append(mode)
        self.X = X
        return self.gamma * X


def test_train_and_mode_keywords_are_the_training_switch():
    from gradcheck import _adapters as AD

    X = np.random.default_rng(0).standard_normal((5, 4))
    layer, info = AD.adapt(_TrainKeyword(), [X], training=False)
    assert info["forward_training"] is True and info["mode_keyword"] == ["train", "False", "True"]
    assert layer.obj.seen and set(layer.obj.seen) == {False}  # the probe ran in the mode asked for
    layer.obj.seen.clear()
    layer.forward(X, training=True)
    layer.forward(X, training=False)
    assert layer.obj.seen == [True, False]
    assert AD.signature(layer)[0] == ["X"]  # train is not an input
    layer, info = AD.adapt(_ModeKeyword(), [X], training=False)
    assert info["mode_keyword"] == ["mode", "'test'", "'train'"]
    layer.obj.seen.clear()
    layer.forward(X, training=True)
    layer.forward(X, training=False)
    assert layer.obj.seen == ["train", "test"]


def test_header_names_the_train_keyword(tmp_path):
    src = tmp_path / "bn2.py"
    src.write_text(textwrap.dedent('''
        import numpy as np
        class BatchNorm:
            def __init__(self, D=4):
                self.gamma = np.ones(D) * 1.5; self.beta = np.zeros(D)
            def forward(self, X, train=True):
                mu, var = (X.mean(0), X.var(0)) if train else (0.0, 1.0)
                self.inv = 1 / np.sqrt(var + 1e-5); self.xhat = (X - mu) * self.inv
                return self.gamma * self.xhat + self.beta
            def backward(self, dY):
                self.dgamma = (dY * self.xhat).sum(0); self.dbeta = dY.sum(0)
                return dY * self.gamma * self.inv
    '''))
    p = run_here("check", f"{src}::BatchNorm", "--input-shape", "8,4")
    assert "forward has no training switch" not in p.stdout, p.stdout
    assert "mode: eval and training (forward(X, train=False, then train=True))" in p.stdout, p.stdout
    assert p.returncode == 1 and "FAIL: BatchNorm [training]: gradient mismatch in dX." in p.stdout, p.stdout


def test_cs231n_backward_may_return_none_for_its_non_array_arguments(tmp_path):
    # as torch.autograd.Function.backward does for a non-tensor input: conv_param gets None
    f = planted(tmp_path, CS231N, "return dx, dw, dout.sum(axis=(0, 2, 3))",
                "return dx, dw, dout.sum(axis=(0, 2, 3)), None", "layers_none.py")
    p = cs231n("conv", path=f)
    assert p.returncode == 0 and "every gradient (dx, dw, db) matches" in text(p), text(p)


def test_cs231n_backward_returning_a_dict_is_read_by_its_keys(tmp_path):
    """A dict of gradients was refused ("return a tuple"); since session 25 it is read by the d<name> convention
    (Andrew Ng's pairs): {'dx', 'dw', 'db'} for conv_forward(x, w, b, conv_param) is checked, PASS; a key naming no
    argument ('dW' for w) is refused, naming the keys gradcheck reads, and the tuple still an option."""
    f = planted(tmp_path, CS231N, "return dx, dw, dout.sum(axis=(0, 2, 3))",
                "return {'dx': dx, 'dw': dw, 'db': dout.sum(axis=(0, 2, 3))}", "layers_dict.py")
    p = cs231n("conv", path=f)
    assert p.returncode == 0 and "PASS: conv" in text(p), text(p)
    f = planted(tmp_path, CS231N, "return dx, dw, dout.sum(axis=(0, 2, 3))",
                "return {'dx': dx, 'dW': dw, 'db': dout.sum(axis=(0, 2, 3))}", "layers_dict2.py")
    p = cs231n("conv", path=f)
    t = " ".join(text(p).split())
    assert p.returncode == 3 and "returned a dict (keys dx, dW, db) without dw" in t and "return a tuple" in t, t


@pytest.mark.parametrize("flag", ["--training", "--eval"])
def test_a_mode_flag_for_a_forward_without_training_is_a_usage_error(flag):
    """verify9 X7: was exit 0 with "WARNING: --training has no effect here" and a PASS (the header said eval):
    an option accepted and not honoured. A forward with no switch has no mode to pick: usage error, exit 2."""
    mode = flag.removeprefix("--")
    p = run_here("check", f"{SEED}::Linear", "--input-shape", "8,5", "--init", INIT, flag)
    t = " ".join(text(p).split())
    assert p.returncode == 2 and f"usage error (exit 2): {flag}: gradcheck finds no training switch of Linear" in t, t
    assert f"so it cannot pick the {mode} mode; drop {flag}" in t and "PASS" not in t, t
    p = run_here("check", f"{CS231N}::affine", "--input-shape", "4,5;5,3;3", flag)
    t = " ".join(text(p).split())
    assert p.returncode == 2 and f"{flag}: affine is a function pair, whose mode is a value in --init" in t, t
    p = run_here("check", f"{CS231N}::affine", "--input-shape", "4,5;5,3;3")
    assert p.returncode == 0 and "usage error" not in text(p)


@pytest.mark.parametrize("ret", ["(g for g in (dx, dw, dout.sum(axis=(0, 2, 3))))",
                                 "np.array([dx, dw, dout.sum(axis=(0, 2, 3))], dtype=object)"])
def test_cs231n_backward_may_return_a_generator_or_an_object_array_of_gradients(tmp_path, ret):
    f = planted(tmp_path, CS231N, "return dx, dw, dout.sum(axis=(0, 2, 3))", f"return {ret}", "layers_gen.py")
    p = cs231n("conv", path=f)
    assert p.returncode == 0 and "every gradient (dx, dw, db) matches" in text(p), text(p)
