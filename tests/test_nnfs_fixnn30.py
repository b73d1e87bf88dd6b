"""Session 30's Neural Networks from Scratch tester's findings (tester30n, fixer fixnn30), on the book's classes
(tests/fixtures/nnfs_ch22_classes.py and nnfs_ch18_layers.py, copied verbatim with their provenance); each planted bug
one edit of them."""

import importlib.util
import pathlib

import numpy as np
import pytest
from nnfs_book import nnfs_file
from test_cli import both, run_here


def load(path):
    spec = importlib.util.spec_from_file_location(f"nnfs22_{path.stem}", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


CCE = ("--loss", "--input-shape", "8,3", "--pred", "probs", "--targets", "labels:3")
BCE = ("--loss", "--input-shape", "8,3", "--pred", "unit", "--targets", "labels:2")
REGR = ("--loss", "--input-shape", "8,3", "--pred", "real", "--targets", "real")


@pytest.mark.parametrize("cls, args", [("Loss_CategoricalCrossentropy", CCE), ("Loss_BinaryCrossentropy", BCE),
                                       ("Loss_MeanSquaredError", REGR)])
def test_ch22_losses_are_checked_after_new_pass(tmp_path, cls, args):
    """M1: Ch18-22's Loss.calculate adds to self.accumulated_sum, which only new_pass() creates: every loss was NOT
    CHECKED (exit 3, "no attribute 'accumulated_sum'", blaming forward or the targets). gradcheck now calls
    new_pass() before calculate, as the book's Model.train does each epoch (the reset hooks' table, beside numpy-ml's
    flush_gradients()): the book's losses PASS, their gradient compared in full."""
    f = nnfs_file(tmp_path)
    p = run_here("check", f"{f}::{cls}", *args)
    text = both(p)
    assert p.returncode == 0, text
    assert "accumulated_sum" not in text and "all 24 ok" in text and f"PASS: {cls}: dL/dy_pred matches" in text, text


def test_ch22_calculate_with_regularization_by_default_checks_the_data_loss(tmp_path):
    """M1: a calculate(..., include_regularization=True) by default returns (data_loss, regularization_loss), the
    latter read from self.trainable_layers, which only the book's Model sets: the check asks for the data loss
    (include_regularization=False) and PASSes."""
    f = nnfs_file(tmp_path, ("def calculate(self, output, y, *, include_regularization=False):",
                             "def calculate(self, output, y, *, include_regularization=True):"))
    p = run_here("check", f"{f}::Loss_MeanSquaredError", *REGR)
    text = both(p)
    assert p.returncode == 0 and "all 24 ok" in text, text


@pytest.mark.parametrize("cls, args, edit, named", [
    ("Loss_CategoricalCrossentropy", CCE, ("self.dinputs = -y_true / dvalues", "self.dinputs = y_true / dvalues"),
     "sign"),
    ("Loss_MeanSquaredError", REGR, ("-2 * (y_true - dvalues)", "-(y_true - dvalues)"), "2"),
    ("Loss_MeanAbsoluteError", REGR, None, "sign"),  # the book's own MAE backward, as printed: sign(y_true - y_pred)
])
def test_ch22_loss_bugs_fail(tmp_path, cls, args, edit, named):
    """M1: the planted Ch22 loss bugs (and the book's MAE, whose np.sign(y_true - dvalues) is -dL/dy_pred) were NOT
    CHECKED; they now FAIL (exit 1), with the diagnosis naming the bug as for the Ch17 classes."""
    f = nnfs_file(tmp_path, *([edit] if edit else []))
    p = run_here("check", f"{f}::{cls}", *args)
    text = both(p)
    assert p.returncode == 1, text
    assert f"FAIL {cls} dy_pred" in text and named in text.split(f"FAIL {cls} dy_pred")[1], text


def test_check_layer_takes_the_books_forward_with_training(tmp_path):
    """M2: the Python API's check_layer refused Ch15-22's Layer_Dense (forward(inputs, training) storing
    self.output): "returned None ... store it as self.output"; the CLI accepted it. check_layer now reads such a
    layer as the CLI does (gradcheck._adapters.adapt): the book's layer PASSes, a planted dbiases bug FAILs."""
    from gradcheck.check import check_layer

    m = load(nnfs_file(tmp_path))
    r = check_layer(m.Layer_Dense(5, 3), (8, 5))
    assert r.passed, str(r)
    rows = [row.split() for row in str(r).split("\n")]
    assert {"dX", "dweights", "dbiases"} <= {t for row in rows for t in row[:2]}, str(r)
    bad = load(nnfs_file(tmp_path, ("self.dbiases = np.sum(dvalues, axis=0, keepdims=True)",
                                    "self.dbiases = np.mean(dvalues, axis=0, keepdims=True)"), name="bad.py"))
    r = check_layer(bad.Layer_Dense(5, 3), (8, 5))
    assert not r.passed and r.failing_tensors == ["dbiases"], str(r)


def test_bias_l2_half_hint_quotes_the_bias_line(tmp_path):
    """L: a dbiases L2 term halved (l2*biases for 2*l2*biases) ended with the book's fix for dweights
    ("self.dweights += 2 * self.weight_regularizer_l2 * self.weights"); it now quotes the bias line."""
    import json

    f = nnfs_file(tmp_path, ("self.dbiases += 2 * self.bias_regularizer_l2 * \\\n",
                             "self.dbiases += self.bias_regularizer_l2 * \\\n"))
    p = run_here("check", f"{f}::Layer_Dense", "--input-shape", "8,5", "--init",
                 json.dumps({"n_inputs": 5, "n_neurons": 3, "bias_regularizer_l2": 0.4}))
    text = both(p)
    assert p.returncode == 1 and "L2 gradient halved" in text, text
    diag = text.split("diagnosis:")[1]
    assert "self.dbiases += 2 * self.bias_regularizer_l2 * self.biases" in diag and "self.dweights" not in diag, text


def test_cce_divided_by_classes_names_both_counts(tmp_path):
    """L: a cross-entropy backward divided by the number of classes (labels = len(dvalues[0])) instead of samples
    was "1.6 times the correct gradient: a constant factor is wrong somewhere"; with N = 16 samples and K = 10
    classes the factor is exactly N/K, now named with both counts; a square batch (N = K) makes no such claim."""
    edit = ("self.dinputs = -y_true / dvalues\n        # Normalize gradient\n        self.dinputs = self.dinputs / samples",
            "self.dinputs = -y_true / dvalues\n        self.dinputs = self.dinputs / labels")
    f = nnfs_file(tmp_path, edit)
    p = run_here("check", f"{f}::Loss_CategoricalCrossentropy", "--loss", "--input-shape", "16,10", "--pred",
                 "probs", "--targets", "labels:10")
    text = both(p)
    assert p.returncode == 1, text
    assert "dy_pred is 1.6 = N/K = 16/10 times the correct gradient" in text, text
    assert "number of classes K = 10" in text and "number of samples N = 16" in text, text


def test_dbiases_summed_over_axis_1_names_the_axis(tmp_path):
    """L: np.sum(dvalues, axis=1, keepdims=True) gives dbiases of shape (8, 1) for biases (1, 3): the shape error
    gave no hint; it now names the axis summed (1) and the one due (0)."""
    f = nnfs_file(tmp_path, ("np.sum(dvalues, axis=0, keepdims=True)", "np.sum(dvalues, axis=1, keepdims=True)"))
    p = run_here("check", f"{f}::Layer_Dense", "--input-shape", "8,5", "--init", '{"n_inputs": 5, "n_neurons": 3}')
    text = both(p)
    assert p.returncode == 1 and "gave dbiases with shape (8, 1); expected shape (1, 3)" in text, text
    assert "dbiases has size 1 on axis 1 where the expected shape has it on axis 0: a sum with keepdims=True over " \
           "axis=0, not axis=1" in text, text


def test_size1_axes_rule():
    """The rule behind that hint: each shape has size 1 where the other has not, by axis."""
    from gradcheck._validation import _size1_axes

    assert _size1_axes((8, 1), (1, 3)) == (1, 0)
    assert _size1_axes((1, 1, 5), (4, 6, 1)) == ((0, 1), 2)
    assert _size1_axes((1, 3), (3,)) is None and _size1_axes((8, 3), (1, 3)) is None


COMB = ("--loss", "--input-shape", "8,3", "--pred", "real", "--targets", "labels:3")
CHECKED = '''

class Checked(Activation_Softmax_Loss_CategoricalCrossentropy):
    def forward(self, inputs, y_true):
        softmax = Activation_Softmax(); softmax.forward(inputs, False); self.output = softmax.output; return np.mean(Loss_CategoricalCrossentropy().forward(self.output, y_true))
'''


def test_backward_only_combined_class_says_how_to_check_it(tmp_path):
    """L: Ch22's Activation_Softmax_Loss_CategoricalCrossentropy (backward only) got "Expected the manualprop loss
    protocol: forward(), backward()"; the usage error now names the book's Ch10-17 class with forward(inputs, y_true)
    and a subclass whose forward is the one the message quotes; that subclass, written as quoted, PASSes."""
    f = nnfs_file(tmp_path)
    p = run_here("check", f"{f}::Activation_Softmax_Loss_CategoricalCrossentropy", *COMB)
    text = both(p)
    assert p.returncode == 2 and "has backward() but no forward()" in text, text
    assert "Ch17_Final.py::Activation_Softmax_Loss_CategoricalCrossentropy" in text and "manualprop loss" not in text
    quoted = text.split("`def forward(self, inputs, y_true): ")[1].split("`")[0]
    assert quoted == CHECKED.split("def forward(self, inputs, y_true):\n        ")[1].strip(), (quoted, text)
    g = tmp_path / "checked.py"
    g.write_text(f.read_text() + CHECKED)
    p = run_here("check", f"{g}::Checked", *COMB)
    assert p.returncode == 0 and "PASS: Checked: dL/dy_pred matches" in both(p), both(p)


@pytest.mark.parametrize("targets", ["labels:3", "onehot:3"])
def test_combined_backward_adding_one_at_the_label_is_named(tmp_path, targets):
    """L: the combined softmax + cross-entropy backward with `self.dinputs[range(samples), y_true] += 1` (for -= 1)
    was "no known bug pattern"; manual - numerical is exactly +2/N at each label and 0 elsewhere: now named."""
    f = nnfs_file(tmp_path, ("self.dinputs[range(samples), y_true] -= 1", "self.dinputs[range(samples), y_true] += 1"))
    g = tmp_path / "checked.py"
    g.write_text(f.read_text() + CHECKED)
    p = run_here("check", f"{g}::Checked", *COMB[:-1], targets)
    text = both(p)
    assert p.returncode == 1, text
    assert "dy_pred is +2/N = 0.25 too large at each sample's true class (N = 8) and right elsewhere" in text, text
    assert "-= 1, not += 1" in text and "no known bug pattern" not in text, text


def test_build_seeds_numpys_global_generator(tmp_path):
    """L: the report says seed=0 while the book's Layer_Dense draws 0.01 * np.random.randn(...) from numpy's global
    generator, which the sandbox's child reseeds afresh: its figures changed from run to run. build() now sets the
    global generators from --seed before constructing: the same weights for one seed, whatever came before."""
    from gradcheck import _adapters

    m = load(nnfs_file(tmp_path))
    np.random.seed(None)
    a = _adapters.build("layer", m.Layer_Dense, {"n_inputs": 5, "n_neurons": 3}, 0).weights
    np.random.seed(None)
    b = _adapters.build("layer", m.Layer_Dense, {"n_inputs": 5, "n_neurons": 3}, 0).weights
    c = _adapters.build("layer", m.Layer_Dense, {"n_inputs": 5, "n_neurons": 3}, 1).weights
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, 0.01 * np.random.RandomState(0).randn(5, 3))
    assert not np.array_equal(a, c)


def test_nnfs_init_is_one_rule_for_float32_forward_and_float32_backward(tmp_path):
    """L: with the book's nnfs.init() (nnfs 0.5.1, tests/fixtures/nnfs_pkg) Layer_Dense's forward returns float32
    and was NOT CHECKED naming nnfs.init(), while Activation_Softmax (float64 forward, its backward's np.dot returning
    float32) PASSed with no word. One rule now: numpy replaced -> NOT CHECKED, naming the functions and the fix, for
    both; with nnfs.init(dot_precision_workaround=False, default_dtype=None) Softmax PASSes."""
    import shutil

    shutil.copytree(pathlib.Path(__file__).parent / "fixtures" / "nnfs_pkg" / "nnfs", tmp_path / "nnfs")
    f = tmp_path / "init.py"
    f.write_text("import nnfs\n\nnnfs.init()\n" + nnfs_file(tmp_path).read_text())
    fix = "nnfs.init(dot_precision_workaround=False, default_dtype=None)"
    for cls, args in (("Activation_Softmax", ("--input-shape", "8,3")),
                      ("Layer_Dense", ("--input-shape", "8,5", "--init", '{"n_inputs": 5, "n_neurons": 3}'))):
        p = run_here("check", f"{f}::{cls}", *args)
        text = both(p)
        assert p.returncode == 3, text
        assert "the checked code replaced numpy's own np.dot, np.zeros, np.eye, np.random.randn (with nnfs.core's)" \
               in text and fix in text, text
    p = run_here("check", f"{f}::Activation_Softmax", "--input-shape", "8,3")
    assert "forward returns float64 for a float64 input (its backward may not)" in both(p), both(p)
    g = tmp_path / "off.py"
    g.write_text(f"import nnfs\n\n{fix}\n" + nnfs_file(tmp_path).read_text())
    p = run_here("check", f"{g}::Activation_Softmax", "--input-shape", "8,3")
    assert p.returncode == 0, both(p)


@pytest.mark.parametrize("edit, named", [
    (("np.diagflat(single_output) - \\", "np.diagflat(single_output) + \\"), "the Jacobian is built as diag(p) + p p^T"),
    (("np.dot(single_output, single_output.T)", "np.dot(single_output.T, single_output)"),
     "the Jacobian subtracts p^T p"),
    (("enumerate(zip(self.output, dvalues))", "enumerate(zip(self.inputs, dvalues))"),
     "the Jacobian is built from forward's input X"),
])
def test_softmax_jacobian_slips_are_named(tmp_path, edit, named):
    """L: the book's softmax Jacobian loop with + for -, p^T p for p p^T, or built from self.inputs was "no known
    bug pattern"; each gives an exact formula of p (or X) and dY, now named."""
    f = nnfs_file(tmp_path, edit)
    p = run_here("check", f"{f}::Activation_Softmax", "--input-shape", "8,5")
    text = both(p)
    assert p.returncode == 1 and named in text.split("diagnosis:")[1], text
    assert "no known bug pattern" not in text, text


def test_relu_mask_on_dvalues_is_named(tmp_path):
    """L: the book's ReLU backward with `self.dinputs[dvalues <= 0] = 0` (for self.inputs <= 0) was "no known bug
    pattern"; dX = dY * (dY > 0) where dY * (X > 0) is due: now named, quoting the book's line."""
    f = nnfs_file(tmp_path, ("self.dinputs[self.inputs <= 0] = 0", "self.dinputs[dvalues <= 0] = 0"))
    p = run_here("check", f"{f}::Activation_ReLU", "--input-shape", "8,5")
    text = both(p)
    assert p.returncode == 1, text
    assert "dX = dY * (dY > 0): backward masks dY by its own sign" in text.split("diagnosis:")[1], text
    assert "self.dinputs[self.inputs <= 0] = 0, not dvalues <= 0" in text, text
