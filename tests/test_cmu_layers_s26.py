"""CMU 11-785 MyTorch's conventions and what tester26s found checking its layers (session 26): gradients named
``dLdW``/``dLdBW``, a gradient of shape (C,) for a (1, C) weight, a sub-layer's gradient written in place, a
package imported from the working directory, a configuration attribute that is no mode switch, the handout's
zero initialisation. Each check runs ``gradcheck.cli.main`` in this process (``test_cli.run_here``), the layer in
its sandbox process."""

from test_cli import both, run_here, student

HEAD = """
import numpy as np
R = np.random.default_rng(0)
"""

#: Y = X * g + c with g, c of shape (1, C); backward stores dLdg, dLdc of shape (C,), as np.sum(axis=0) gives
#: (tester26s src/repro/scale_shape.py); MEAN makes dLdg 8x too small on 8 rows.
SCALE = HEAD + """
class Scale:
    def __init__(self, C=4):
        self.g = R.uniform(0.5, 1.5, (1, C)); self.c = R.uniform(-0.5, 0.5, (1, C))
    def forward(self, X): self.X = X; return X * self.g + self.c
    def backward(self, dY):
        self.dLdg = np.REDUCE(dY * self.X, axis=0KEEP); self.dLdc = np.sum(dY, axis=0KEEP)
        return dY * self.g
"""

def _scale(tmp_path, reduce, keep):
    f = student(tmp_path, SCALE.replace("REDUCE", reduce).replace("KEEP", keep), "scale.py")
    return run_here("check", f"{f}::Scale", "--input-shape", "8,4")

def test_cmu_dLd_names_are_gradient_names(tmp_path):
    # tester26s H1: dLdg was no gradient name, so g read as a parameter with no gradient and a wrong dLdg PASSed
    good = _scale(tmp_path, "sum", ", keepdims=True")
    assert good.returncode == 0 and "protocol: attribute style (g/dLdg, c/dLdc)" in both(good), both(good)
    bad = _scale(tmp_path, "mean", ", keepdims=True")
    assert bad.returncode == 1 and "FAIL: Scale: gradient mismatch in dg." in both(bad), both(bad)

def test_a_gradient_of_shape_C_for_a_1_C_weight_is_a_wrong_shape(tmp_path):
    # tester26s H1: dLdg of shape (4,) for g (1, 4) was not recognised: PASS with the gradient unchecked.
    # docs/checking.md: a gradient of the wrong shape is a wrong result (exit 1), as dg's is.
    for reduce in ("sum", "mean"):
        p = _scale(tmp_path, reduce, "")
        out = both(p)
        # verify26 (session 27): the values are compared too: "gradient mismatch in dg; wrong shape of dg, dc."
        assert p.returncode == 1 and "wrong shape of dg, dc." in out and "(g/dLdg, c/dLdc)" in out, out
        assert ("FAIL: Scale: gradient mismatch in dg;" in out) == (reduce == "mean"), out
        assert "dg has shape (4,), expected (1, 4)" in out and "no gradient" not in out, out
        assert ("dg has shape (4,), expected (1, 4), the shape of g: values right" in out) == (reduce == "sum")

STRUCT = HEAD + """
class Gain:
    def __init__(self): self.W = R.uniform(0.5, 1.5, (1, 4))
    def forward(self, X): self.X = X; return X * self.W
    def backward(self, dY): self.W_gradient = np.sum(dY * self.X, axis=0); return dY * self.W
"""

def test_a_gradient_found_by_structure_may_differ_by_size_1_axes(tmp_path):
    # the same found by structure (named as a gradient, not by a name rule): (4,) for W (1, 4) is W's, shape wrong
    p = run_here("check", f"{student(tmp_path, STRUCT, 'gain.py')}::Gain", "--input-shape", "8,4")
    out = both(p)
    assert p.returncode == 1 and "W_gradient (W)" in out and "dW has shape (4,), expected (1, 4)" in out, out

CMU_BN = HEAD + """
class Affine1d:
    def __init__(self, C=4): self.BW = R.uniform(0.5, 1.5, (1, C)); self.Bb = R.uniform(-0.5, 0.5, (1, C))
    def forward(self, Z): self.Z = Z; return Z * self.BW + self.Bb
    def backward(self, dLdBZ):
        self.dLdBW = HALF * np.sum(dLdBZ * self.Z, axis=0, keepdims=True)
        self.dLdBb = np.sum(dLdBZ, axis=0, keepdims=True)
        return dLdBZ * self.BW
"""

def test_two_weights_of_one_shape_with_cmu_gradient_names(tmp_path):
    # tester26s M3: BatchNorm1d's BW, Bb (1, C) with dLdBW, dLdBb: NOT CHECKED, advising a rename
    for half, code, says in [(1.0, 0, "PASS: Affine1d: every gradient (dX, dBW, dBb) matches"),
                             (0.5, 1, "FAIL: Affine1d: gradient mismatch in dBW.")]:
        f = student(tmp_path, CMU_BN.replace("HALF", repr(half)), "affine.py")
        p = run_here("check", f"{f}::Affine1d", "--input-shape", "8,4")
        assert p.returncode == code and says in both(p) and "NOT CHECKED" not in both(p), both(p)



def test_a_size_1_axis_off_and_wrong_values_says_both():
    # tester26s: dLdg = mean(...) of shape (4,) for (1, 4) was told "a reshape or transpose went wrong" alone
    import numpy as np

    from gradcheck.diagnose import name_signature

    n = np.arange(1.0, 5.0).reshape(1, 4)
    f = name_signature("dg", n.ravel() / 8, n, fallback=True)
    assert f.code == "wrong-shape" and "has shape (4,), expected (1, 4) (only a size-1 axis differs)" in f.message
    assert "0.125 times the correct gradient" in f.message, f.message
    assert name_signature("dg", n.ravel(), n).code == "values-right-shape-wrong"


#: CMU's Conv1d holds Conv1d_stride1, which writes its gradient in place (tester26s src/repro/nested_inplace.py),
#: here under a name no rule knows, found by structure (a weight's shape, named as a gradient).
NESTED = HEAD + """
class Inner:
    def __init__(self): self.W = R.standard_normal((3, 4)); self.W_gradient = np.zeros(self.W.shape)
    def forward(self, A): self.A = A; return A @ self.W.T
    def backward(self, dLdZ): self.W_gradient[...] = HALF * dLdZ.T @ self.A; return dLdZ @ self.W
class Outer:
    def __init__(self): self.inner = Inner()
    def forward(self, A): return self.inner.forward(A)
    def backward(self, dLdZ): return self.inner.backward(dLdZ)
"""


def test_a_sub_layers_gradient_written_in_place_is_found(tmp_path):
    # tester26s H2: a probe of the outer layer alone left inner.W_gradient written, so the next probe's backward,
    # writing the same values in place, wrote nothing seen: inner.W 'no gradient', a wrong gradient PASSed
    for half, code, says in [(0.5, 1, "FAIL: Outer: gradient mismatch in dinner.W."),
                             (1.0, 0, "PASS: Outer: every gradient (dX, dinner.W) matches")]:
        f = student(tmp_path, NESTED.replace("HALF", repr(half)), "nested.py")
        inner = run_here("check", f"{f}::Inner", "--input-shape", "8,4")
        outer = run_here("check", f"{f}::Outer", "--input-shape", "8,4")
        assert inner.returncode == outer.returncode == code and says in both(outer), both(outer)


CE = """
import numpy as np
from mytorch.nn import Softmax
class CrossEntropyLoss:
    def forward(self, A, Y):
        self.A, self.Y = A, Y; self.softmax = Softmax().forward(A)
        return -np.sum(Y * np.log(self.softmax)) / A.shape[0]
    def backward(self): return (self.softmax - self.Y) / HALF / self.A.shape[0]
"""
SOFTMAX = """
import numpy as np
class Softmax:
    def forward(self, Z): e = np.exp(Z - Z.max(1, keepdims=True)); return e / e.sum(1, keepdims=True)
"""


def _mytorch(root, init=True, half=1.0):
    """CMU's HW1P1 layout under ``root``: mytorch/nn/{__init__, activation, loss}.py (and mytorch/__init__.py)."""
    (root / "mytorch" / "nn").mkdir(parents=True)
    if init:
        (root / "mytorch" / "__init__.py").write_text("")
    (root / "mytorch" / "nn" / "__init__.py").write_text("from .activation import Softmax\n")
    (root / "mytorch" / "nn" / "activation.py").write_text(SOFTMAX)
    (root / "mytorch" / "nn" / "loss.py").write_text(CE.replace("HALF", repr(half)))


def test_a_package_two_levels_up_is_imported_from_the_working_directory(tmp_path):
    # tester26s M4: cd HW1P1 && gradcheck check mytorch/nn/loss.py::CrossEntropyLoss (loss.py: from mytorch.nn
    # import Softmax) was exit 3 "No module named 'mytorch' ... remove it"; Python run there imports it
    for init, half, code in [(True, 1.0, 0), (False, 1.0, 0), (True, 0.5, 1)]:  # without __init__: a namespace
        root = tmp_path / f"{init}{half}"
        _mytorch(root, init, half)
        p = run_here("check", "mytorch/nn/loss.py::CrossEntropyLoss", "--loss", "--targets", "onehot",
                     "--input-shape", "4,3", cwd=root)
        assert p.returncode == code and "No module named" not in both(p), both(p)


def test_the_working_directorys_packages_are_copied_only_when_imported_and_found_there(tmp_path):
    import contextlib

    from gradcheck.sandbox import sibling_files

    _mytorch(tmp_path / "hw")
    loss = str(tmp_path / "hw" / "mytorch" / "nn" / "loss.py")
    with contextlib.chdir(tmp_path / "hw"):
        assert sibling_files(loss)["mytorch/nn/activation.py"] == str(tmp_path / "hw/mytorch/nn/activation.py")
    (tmp_path / "elsewhere" / "mytorch").mkdir(parents=True)  # another folder's mytorch (no __init__): not it
    with contextlib.chdir(tmp_path / "elsewhere"):
        assert "mytorch/nn/activation.py" in sibling_files(loss)  # found above the packages holding the file
    (tmp_path / "hw" / "mytorch" / "__init__.py").unlink()  # a namespace package, the working directory elsewhere
    with contextlib.chdir(tmp_path / "elsewhere"):
        assert not any(k.startswith("mytorch/") for k in sibling_files(loss))


PADDING = HEAD + """
class Conv1dValid:
    def __init__(self, K=3, padding="valid"): self.W = R.standard_normal(K); self.padding = padding
    def forward(self, X):
        if self.padding == "same":
            raise NotImplementedError("only padding='valid' is supported")
        self.X = X; K = len(self.W)
        return np.stack([X[:, i:i + K] @ self.W for i in range(X.shape[1] - K + 1)], axis=1)
    def backward(self, dY):
        K = len(self.W); dX = np.zeros_like(self.X); self.dW = np.zeros_like(self.W)
        for i in range(dY.shape[1]):
            dX[:, i:i + K] += dY[:, i:i + 1] * self.W; self.dW += HALF * dY[:, i] @ self.X[:, i:i + K]
        return dX
"""
MODE = HEAD + """
class Drop:
    def __init__(self, mode="train"): self.mode = mode
    def forward(self, X):
        if self.mode == "train":
            self.m = (np.random.rand(*X.shape) > 0.5) * 2.0; return X * self.m
        return X
    def backward(self, dY): return dY * self.m if self.mode == "train" else dY
"""


def test_a_string_attribute_set_from_an_init_argument_is_the_configuration_as_built(tmp_path):
    # tester26s M5: self.padding = padding ('valid' or 'same') was checked as eval, then training with 'same',
    # which raised NotImplementedError: exit 3 for a correct layer. docs/checking.md: the configuration as built.
    for half, code in [(1.0, 0), (0.5, 1)]:
        f = student(tmp_path, PADDING.replace("HALF", repr(half)), "padding_mode.py")
        p = run_here("check", f"{f}::Conv1dValid", "--input-shape", "4,7")
        out = both(p)
        assert p.returncode == code and "mode: forward has no training switch: one mode" in out, out
        assert ("WARNING: forward branches on self.padding, the layer's configuration as built, which gradcheck "
                "does not switch: only the branch of self.padding = 'valid' was checked, a bug in the other would "
                "pass unseen; check the other with --init '{\"padding\": \"same\"}'") in out, out
    p = run_here("check", f"{student(tmp_path, MODE, 'drop.py')}::Drop", "--input-shape", "4,7")  # self.mode = mode
    assert p.returncode == 0 and "mode: eval and training (self.mode = " in both(p), both(p)


CMU_LINEAR = HEAD + """
class Linear:
    def __init__(self, in_features, out_features):
        self.W = np.zeros((out_features, in_features)); self.b = np.zeros((out_features, 1))
    def forward(self, A):
        self.A = A; self.N = A.shape[0]; self.Ones = np.ones((self.N, 1))
        return self.A @ self.W.T + self.Ones @ self.b.T
    def backward(self, dLdZ):
        self.dLdW = HALF * dLdZ.T @ self.A; self.dLdb = dLdZ.T @ self.Ones
        return dLdZ @ self.W
"""


def test_zero_weights_with_gradients_are_checked_at_drawn_values(tmp_path):
    # tester26s M6: CMU's Linear as its handout builds it (W, b zeros) was exit 3 "weights all zero", though dW and
    # db do not depend on W; the checker redraws constant weights elsewhere ("also checked at drawn values")
    for half, code, says in [(1.0, 0, "PASS: Linear: every gradient (dX, dW, db) matches"),
                             (0.5, 1, "FAIL: Linear: gradient mismatch in dW.")]:
        f = student(tmp_path, CMU_LINEAR.replace("HALF", repr(half)), "linear.py")
        p = run_here("check", f"{f}::Linear", "--input-shape", "8,5", "--init", '{"in_features": 5, "out_features": 3}')
        out = both(p)
        assert p.returncode == code and says in out and "this mode" not in out, out
        assert ("so the table and verdict below are at the drawn values" in out) == (half == 1.0), out


def test_a_forward_without_modes_is_not_said_to_be_in_a_mode(tmp_path):
    # tester26s M6: "in this mode the forward does not depend on its input" for a layer with one mode
    f = student(tmp_path, "class Zero:\n    def forward(self, X): return X * 0.0\n"
                          "    def backward(self, dY): return dY * 0.0\n", "zero.py")
    p = run_here("check", f"{f}::Zero", "--input-shape", "4,5")
    out = both(p)
    assert "WARNING: the forward does not depend on its input" in out and " mode the forward" not in out, out


def test_a_column_bias_summed_over_the_wrong_axis_is_named_so(tmp_path):
    # tester26s: CMU's db (out, 1) = dLdZ.sum(axis=1, keepdims=True) with N == out got a conv's "permuted dY" advice
    src = CMU_LINEAR.replace("np.zeros((out_features, in_features))", "R.standard_normal((out_features, in_features))")
    src = src.replace("HALF * ", "").replace("self.dLdb = dLdZ.T @ self.Ones", "self.dLdb = np.sum(dLdZ, axis=1, keepdims=True)")
    f = student(tmp_path, src, "linear.py")
    p = run_here("check", f"{f}::Linear", "--input-shape", "3,5", "--init", '{"in_features": 5, "out_features": 3}')
    out = both(p)
    assert p.returncode == 1 and "db is dY summed over axis=1 (keeping axis 0)" in out and "permuted" not in out, out

def test_a_gradient_of_another_size_is_no_weights_by_its_name_alone(tmp_path):
    """Kills ones_apart_any_name: (3,) for W (1, 4), named as a gradient, is not paired with W (only a shape that
    differs by size-1 axes is; _adapters._by_structure): W is said to have no gradient."""
    f = student(tmp_path, "import numpy as np\nR = np.random.default_rng(0)\nclass Gain:\n"
                 "    def __init__(self): self.W = R.uniform(0.5, 1.5, (1, 4))\n"
                 "    def forward(self, X): self.X = X; return X * self.W\n"
                 "    def backward(self, dY): self.W_gradient = np.sum(dY * self.X, axis=0)[:3]; return dY * self.W\n", "gain.py")
    out = both(run_here("check", f"{f}::Gain", "--input-shape", "8,4"))
    assert "W is a parameter with no gradient" in out and "W_gradient (W)" not in out, out
    assert "dW has shape (3,)" not in out, out
