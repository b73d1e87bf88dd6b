"""Session 28 (left28c): the bugs tester27s' rows caught but did not name, named with what to do; the correct layers of
those layouts (channels last, CS189's loops, a dense layer with an activation) still PASS."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import elementwise_grad
from buggy_layers import diagnose, first_code

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

