"""Session 28 (left28c): the bugs tester27s' rows caught but did not name, named with what to do; the correct layers of
those layouts (channels last, CS189's loops, a dense layer with an activation) still PASS."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import elementwise_grad
from buggy_layers import diagnose, first_code
from test_cli import run_here

from gradcheck import diagnose as D

NAMED = [
    ("ConvNHWCdWAssigned", "loop-overwrites",
     ["dW is the contribution of the output's last position (indices (4, 4) along axes (1, 2) of the output, of "
      "shape (2, 5, 5, 3)) alone", "backward assigns (=) dW in its loop over the output's positions where it must "
      "add (+=)", "dW[...] += ..."]),
    ("ConvNaiveDwAssigned", "loop-overwrites",
     ["the output's last sample and position (indices (2, 3, 3) along axes (0, 2, 3)"]),
    ("ConvNHWCFlippedDx", "flipped-kernel", ["dX is computed with the kernel flipped in its spatial axes "
                                             "(W[::-1, ::-1])", "no W[::-1, ::-1]"]),
    ("ConvNHWCFlippedDw", "flipped-kernel", ["dW is computed with the kernel flipped in its spatial axes "
                                             "([::-1, ::-1])"]),
    ("PoolNHWCArgmin", "maxpool-argmin", ["dX routes each window's gradient to the window's smallest element",
                                          "np.argmax of the window"]),
    ("MaxPoolArgmin", "maxpool-argmin", ["dX routes each window's gradient to the window's smallest element"]),
    ("FCSigmoidAtOutput", "derivative-at-output",
     ["dX, dparameters['W'], dparameters['b'] are what backward gives with sigmoid's derivative evaluated at "
      "forward's output out = sigmoid(z) instead of at z", "sigmoid(out) * (1 - sigmoid(out)) where sigmoid(z) * "
      "(1 - sigmoid(z)) (= out * (1 - out)) is due", "dz = dout * sigmoid(z) * (1 - sigmoid(z))"]),
    ("FCTanhAtOutput", "derivative-at-output", ["1 - tanh(out)**2 where 1 - tanh(z)**2 (= 1 - out**2) is due",
                                                "dz = dout * (1 - np.tanh(z)**2)"]),
    ("FCArctanAtOutput", "derivative-at-output", ["1 / (1 + out**2) where 1 / (1 + z**2) is due"]),
    ("FCSigmoidDerivIsS", "sigmoid-one-minus-inside",
     ["dX, dparameters['W'], dparameters['b'] are what backward gives with sigmoid's derivative taken as out where "
      "out * (1 - out) is due", "the factor (1 - out) is missing"]),
    ("FCTanhOneMinusY", "tanh-square-inside",
     ["dX, dparameters['W'], dparameters['b'] are what backward gives with tanh's derivative taken as 1 - out"]),
]


@pytest.mark.parametrize(("name", "code", "words"), NAMED)
def test_caught_bug_is_named(name, code, words):
    d = diagnose(f"session28.py::{name}")
    assert first_code(d) == code, d.sentence()
    for w in words:
        assert w in d.sentence(), d.sentence()


@pytest.mark.parametrize("name", ["ConvNHWC", "PoolNHWC", "FCAct", "FCTanh", "FCArctan"])
def test_correct_layers_of_those_layouts_pass(name):
    d = diagnose(f"session28.py::{name}")
    assert d.passed, d.report()


def test_one_tensor_names_its_gradient_not_its_input():
    """A lone tanh-square-inside finding said "X is what backward gives" (the key's name, not dX's)."""

    class ScaledTanh:  # no parameters: dX alone is wrong; not a bare tanh (the factor 2), so not the activation's
        params, grads = {}, {}

        def forward(self, X, training=False):
            self.Y = np.tanh(2 * X)
            return self.Y

        def backward(self, dY):
            return 2 * dY * (1 - self.Y)  # the square missing

    d = D.diagnose_layer(ScaledTanh(), (6, 4))
    assert first_code(d) == "tanh-square-inside"
    assert d.sentence().startswith("FAIL: ScaledTanh: dX is what backward gives"), d.sentence()


def test_earlier_unnamed_rows_are_named():
    assert first_code(diagnose("pool_embed_rnn.py::RNNTanhTwice")) == "derivative-at-output"
    assert first_code(diagnose("coursera.py::linactnoderiv")) == "sigmoid-one-minus-inside"


@pytest.mark.parametrize(("code", "f", "wrong"), [
    ("tanh-square-inside", anp.tanh, lambda z, y: 1 - y),
    ("sigmoid-one-minus-inside", lambda z: 1 / (1 + anp.exp(-z)), lambda z, y: y),
    ("tanh", anp.tanh, lambda z, y: 1 - np.tanh(y) ** 2),
    ("sigmoid", lambda z: 1 / (1 + anp.exp(-z)), lambda z, y: 1 / (1 + np.exp(-y)) * (1 - 1 / (1 + np.exp(-y)))),
    ("arctan", anp.arctan, lambda z, y: 1 / (1 + y ** 2)),
])
def test_inside_ratios_are_wrong_over_autograds_derivative(code, f, wrong):
    """Each :data:`gradcheck.diagnose._INSIDE` ratio, a function of out = f(z), is the wrong derivative over f'(z),
    f'(z) from HIPS autograd (the oracle) at z = -3..3."""
    z = np.linspace(-3, 3, 61)
    y = np.asarray(f(z))
    row = next(r for r in D._INSIDE if r[0] == code or r[3].get("name") == code)
    assert row[1](y)
    np.testing.assert_allclose(row[2](y), wrong(z, y) / elementwise_grad(f)(z), rtol=1e-12)



def test_a_square_transposed_gradient_has_its_own_code():
    """Session 27's ``_also_wrong`` told a square transposed gradient (right shape) from a shape error by the words
    "is square" in its message: it has its own code, read by code."""
    from types import SimpleNamespace

    from gradcheck.check_command import _also_wrong
    from gradcheck.diagnose import name_signature

    rng = np.random.default_rng(0)
    sq, wide = rng.standard_normal((3, 3)), rng.standard_normal((3, 4))
    f = name_signature("dW", sq.T, sq)
    assert f.code == "transposed-square" and "the shape (3, 3) is square, so only the values show it" in f.message
    g = name_signature("dW", wide.T, wide)
    assert g.code == "transposed" and "it has shape (4, 3), the transpose of (3, 4)" in g.message
    assert _also_wrong(SimpleNamespace(errors=[f])) == ""
    assert _also_wrong(SimpleNamespace(errors=[g])) == "; wrong shape of dW"


def test_the_packages_left_out_come_from_the_one_reading_of_the_imports(tmp_path, monkeypatch):
    """Session 27 left ``cli._own_packages_left_out`` parsing the checked file a second time for the names
    ``sibling_files``' warning had just found: ``sibling_files`` hands them back (``left_out``), read once."""
    import warnings

    from gradcheck import sandbox

    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "helpers.py").write_text("def helper(x):\n    return x\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layer.py").write_text("import numpy as np\nfrom mypkg.helpers import helper\n")
    monkeypatch.chdir(tmp_path)
    reads = []
    real = sandbox._imported_tops
    monkeypatch.setattr(sandbox, "_imported_tops", lambda p: reads.append(p) or real(p))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        got = sandbox.sibling_files(str(tmp_path / "sub" / "layer.py"), hostile=True)
    assert got.left_out == ("mypkg",) and sorted(got) == ["layer.py"]
    assert len(reads) == 1 and any("was not copied into the sandbox" in str(w.message) for w in said)
    assert sandbox.sibling_files(str(tmp_path / "sub" / "layer.py")).left_out == ()  # own code: copied, none left
    from gradcheck import cli

    assert not hasattr(cli, "_own_packages_left_out")


STORED = '''import numpy as np
{top}

class Linear:
    {cls_attr}
    def __init__(self, n_in=4, n_out=3{param}):
        rng = np.random.default_rng(0)
        self.params = {{"W": rng.standard_normal((n_in, n_out)), "b": np.zeros(n_out)}}
        self.grads = {{}}
        {init}

    def forward(self, X, training=False):
        self.X = X
        return (X @ self.params["W"] + self.params["b"]).astype({dt})

    def backward(self, dY):
        self.grads = {{"W": self.X.T @ dY, "b": dY.sum(axis=0)}}
        return dY @ self.params["W"].T
'''
STORES = {  # the dtype held in a name (review27g, by reading): each was no cast, so the float64 copy PASSed
    "attribute": dict(top="", cls_attr="", param="", init="self.dt = np.float32", dt="self.dt"),
    "class attribute": dict(top="", cls_attr="dt = 'f'", param="", init="", dt="self.dt"),
    "constant": dict(top="DT = np.float32", cls_attr="", param="", init="", dt="DT"),
    "parameter": dict(top="", cls_attr="", param=", dtype=np.float32", init="self.dtype = dtype", dt="self.dtype"),
}


@pytest.mark.parametrize("how", STORES)
def test_a_cast_to_a_stored_dtype_is_a_cast(tmp_path, how):
    from gradcheck._float64_copy import cast_lines

    f = tmp_path / "lin.py"
    f.write_text(STORED.format(**STORES[how]))
    dt = STORES[how]["dt"]
    assert cast_lines(str(f), "Linear") == [f'line 14: return (X @ self.params["W"] + self.params["b"]).astype({dt})']


def test_a_stored_float64_or_an_unknown_dtype_is_no_cast(tmp_path):
    from gradcheck._float64_copy import cast_lines

    f = tmp_path / "lin.py"
    f.write_text(STORED.format(top="", cls_attr="", param="", init="self.dt = np.float64", dt="self.dt"))
    unsure = []
    assert cast_lines(str(f), "Linear", unsure=unsure) == [] and unsure == []
    f.write_text(STORED.format(top="import json", cls_attr="", param="", init="self.dt = json.loads('{}').get('dt')",
                               dt="self.dt"))
    assert cast_lines(str(f), "Linear", unsure=unsure) == []
    assert unsure == ['line 14: return (X @ self.params["W"] + self.params["b"]).astype(self.dt)']


FACTORY = '''import numpy as np


class Cast32:
    def __init__(self, n_in, n_out):
        self.params = {"W": np.random.default_rng(0).standard_normal((n_in, n_out))}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return np.asarray(X @ self.params["W"], dtype=np.float32)

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY}
        return dY @ self.params["W"].T


def make_layer(n_in, n_out):
    return Cast32(n_in, n_out)
'''
MODEL = '''from blocks import make_layer


class Model:
    def __init__(self):
        self.layer = make_layer(4, 3)

    def forward(self, X, training=False):
        return self.layer.forward(X)

    def backward(self, dY):
        out = self.layer.backward(dY)
        self.grads = self.layer.grads
        return out
'''


def test_a_sub_layer_built_by_another_files_function_keeps_its_fail(tmp_path):
    """review27g's by-reading gap: a Model whose sub-layer another file's function builds, the sub-layer casting its
    output to float32: the rule followed class names alone, so the float64 copy was checked (and PASSed)."""

    from gradcheck._float64_copy import cast_lines

    (tmp_path / "blocks.py").write_text(FACTORY)
    (tmp_path / "model.py").write_text(MODEL)
    files = {"blocks.py": str(tmp_path / "blocks.py"), "model.py": str(tmp_path / "model.py")}
    want = 'blocks.py line 11: return np.asarray(X @ self.params["W"], dtype=np.float32)'
    assert cast_lines(str(tmp_path / "model.py"), "Model", files) == [want]
    p = run_here("check", "model.py::Model", "--input-shape", "5,4", cwd=tmp_path)
    out = p.stdout + p.stderr
    assert p.returncode == 1 and "FAIL: Model: wrong dtype of Y." in out, out


def _cli_check(tmp_path, target):
    """``gradcheck check target`` in ``tmp_path``, in this process (``test_cli.run_here``: the same parser, checks and
    report as a gradcheck process, whose start was most of each check's time)."""
    p = run_here("check", target, "--input-shape", "5,4", cwd=tmp_path)
    return p.returncode, p.stdout + p.stderr


def test_a_stored_dtype_cast_keeps_its_fail_and_an_unknown_one_is_said(tmp_path):
    """``self.dt = np.float32`` then ``astype(self.dt)``: FAIL (was PASS on the float64 copy); a dtype read from a
    dict the copy rewrites was checked on the copy with a note that reading could not tell the cast (PASS); since
    session 29 (review28g H2) decided by behaviour: float64 weights and input, float32 Y: FAIL, naming that
    conversion and the dtype's declaration."""
    (tmp_path / "lin.py").write_text(STORED.format(**STORES["attribute"]))
    code, out = _cli_check(tmp_path, "lin.py::Linear")
    assert code == 1 and "FAIL: Linear: wrong dtype of Y." in out, out
    (tmp_path / "cfg.py").write_text(STORED.format(top="", cls_attr="", param="",
                                                   init="self.cfg = {'dtype': np.float32}", dt="self.cfg['dtype']"))
    code, out = _cli_check(tmp_path, "cfg.py::Linear")
    flat = " ".join(out.split())
    assert code == 1 and "FAIL: Linear: wrong dtype of Y." in flat and "computes in float32" not in flat, out
    assert ("Linear was given float64 parameters, and its source makes the lower precision at line 14: return (X @ "
            "self.params[\"W\"] + self.params[\"b\"]).astype(self.cfg['dtype']); cfg.py line 10: self.cfg = "
            "{'dtype': np.float32}.") in flat, out


def test_the_diagnosis_measures_a_second_backward_with_backward_twice(monkeypatch):
    """Session 27 left the diagnosis's own second-backward probe beside ``sources.backward_twice`` (the check's cache
    note and the grader's test): one measure, the probe reading every gradient through it, parameters too."""
    from gradcheck import sources

    calls = []
    monkeypatch.setattr(D, "backward_twice", lambda *a, **k: calls.append(a) or sources.backward_twice(*a, **k))

    class CountsBackwards:  # each backward after a forward scales dW by how many came before: the second differs
        def __init__(self):
            self.params = {"W": np.random.default_rng(0).standard_normal((4, 3))}
            self.grads = {}

        def forward(self, X, training=False):
            self.X, self.n = X, 0
            return X @ self.params["W"]

        def backward(self, dY):
            self.n += 1
            self.grads["W"] = self.n * self.X.T @ dY
            return dY @ self.params["W"].T

    d = D.diagnose_layer(CountsBackwards(), (5, 4), training=False)  # one mode (session 32: eval failing where the
    assert len(calls) == 1 and "second-backward" in d.codes, d.report()  # modes agree, training is diagnosed too)
    assert any(f.code == "second-backward" and f.tensor == "dW" for f in d.findings), d.report()


def test_an_import_error_says_what_fits_its_command(tmp_path):
    """verify27 LOW: a RecursionError at import said "the grader provides only numpy and the standard library" during a
    plain ``gradcheck check``: the grader's words are for a module that is missing; a recursion names the limit."""
    (tmp_path / "deep.py").write_text("class Linear:\n    pass\n\n\ndef _never():\n    return " + "+".join(["1"] * 60000)
                                      + "\n")
    code, out = _cli_check(tmp_path, "deep.py::Linear")
    flat = " ".join(out.split())
    assert code == 3 and "deep.py does not import: RecursionError" in flat, out
    assert "grader provides" not in flat, out
    assert "Python's recursion limit was reached while the file was compiled or its top-level code ran" in flat, out


LOSS = '''import numpy as np


class CrossEntropy:
    def forward(self, y_true, y_pred):
        self.p, self.y = y_pred, y_true
        return -np.mean(np.log(y_pred[np.arange(len(y_pred)), y_true]))

    def backward(self):
        g = np.zeros_like(self.p)
        g[np.arange(len(self.p)), self.y] = -1 / self.p[np.arange(len(self.p)), self.y]
        return g / len(self.p)
'''


def test_a_loss_whose_forward_raises_is_told_what_it_was_given(tmp_path):
    """newuser27: a loss's forward that raised ended "Expected forward to return the loss as a float", though it
    returned nothing: the sentence names what came (here one-hot targets where labels index y_pred)."""

    from gradcheck import check_loss
    from gradcheck.errors import GradcheckError

    (tmp_path / "ce.py").write_text(LOSS)
    p = run_here("check", "ce.py::CrossEntropy", "--loss", "--input-shape", "6,4", "--pred", "probs", "--targets",
                 "onehot", cwd=tmp_path)
    flat = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 3 and "Expected forward to return the loss as a float" not in flat, flat
    assert ("It was given y_true: one-hot rows of 4 classes, of shape (6, 4) (float64), and y_pred of shape "
            "(6, 4) (float64); the error is in forward, or forward expects other targets (gradcheck check --targets "
            "labels, onehot or real).") in flat, flat
    ns = {}
    exec(LOSS, ns)  # noqa: S102 - the test's own source
    y_pred = np.full((6, 4), 0.25)
    with pytest.raises(GradcheckError) as e:
        check_loss(ns["CrossEntropy"](), np.eye(4)[[0, 1, 2, 3, 0, 1]], y_pred)
    assert "It was given y_true: one-hot rows of 4 classes, of shape (6, 4) (float64)" in str(e.value)
    assert "Expected forward to return the loss as a float" not in str(e.value)
