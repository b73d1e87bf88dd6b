"""tester31e F1-F6: ML-From-Scratch's protocols checked as written (our own fixture in their protocols,
tests/fixtures/mlfs_style): layers' ``forward_pass``/``backward_pass`` with ``initialize(optimizer)``, activations'
``__call__``/``gradient``, losses' ``loss``/``gradient``."""

import pytest
from test_cli import both, run_here

LAYERS = "tests/fixtures/mlfs_style/layers.py"
DENSE = ("--input-shape", "4,3", "--init", '{"n_units": 2, "input_shape": [3]}')


def test_pass_protocol_dense_passes_with_gradients_compared():
    """F1: Dense (forward_pass/backward_pass, weights made by initialize(optimizer)) was refused (exit 2); its
    gradients, given to the optimizer, are now compared."""
    p = run_here("check", f"{LAYERS}::Dense", *DENSE)
    text = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS: Dense: every gradient (dX, dW, dw0) matches" in text, text
    assert "ML-From-Scratch's layer protocol" in text and "initialize(optimizer) called" in text, text


def test_pass_protocol_doubled_weight_gradient_fails_named():
    p = run_here("check", f"{LAYERS}::DenseDoubleW", *DENSE)
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "FAIL: DenseDoubleW: gradient mismatch in dW" in text, text
    assert "dW is 2 times the correct gradient" in text, text


@pytest.mark.parametrize("cls", ["DenseStepFirst", "DensePlainStepFirst"])
def test_dx_after_the_optimizer_step_fails_named(cls):
    """F1, F4: dX computed with the weights the optimizer stepped FAILs and is named (DensePlainStepFirst: the
    optimizer reached through backward_pass, was NOT CHECKED, exit 3)."""
    p = run_here("check", f"{LAYERS}::{cls}", *DENSE)
    text = " ".join(both(p).split())
    assert p.returncode == 1 and f"FAIL: {cls}: gradient mismatch in dX" in text, text
    assert "after its own gradient-descent step" in text, text


def test_pass_layer_that_never_steps_is_not_checked():
    """newuser31b F1: backward_pass that never calls the optimizer initialize(optimizer) gave it PASSed on dX alone
    (exit 0), though forgetting one of its two updates was already NOT CHECKED as a whole (exit 3)."""
    p = run_here("check", f"{LAYERS}::DenseNoStep", *DENSE)
    text = " ".join(both(p).split())
    assert p.returncode == 3 and "NOT CHECKED as a whole: DenseNoStep: dX matches" in text, text
    assert "backward_pass never stepped its weights (W, w0) with the optimizer initialize(optimizer) gave it" in text
    assert "never trains" in text and "PASS:" not in text, text


def test_frozen_pass_layer_that_never_steps_is_checked_on_dx():
    """The control of F1: a trainable = False layer steps nothing by design: checked on dX alone, said."""
    p = run_here("check", f"{LAYERS}::DenseFrozen", *DENSE)
    text = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS: DenseFrozen: every gradient (dX) matches" in text, text
    assert "trainable is False: backward_pass steps no weight, dX alone checked" in text, text


def test_plain_wrapping_with_their_optimizer_passes():
    """F4: forward = forward_pass, backward = backward_pass with their SGD was NOT CHECKED (exit 3): the rate
    in self.W_opt.learning_rate is reached through backward_pass."""
    p = run_here("check", f"{LAYERS}::DensePlain", *DENSE)
    text = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS: DensePlain: every gradient (dX, dW, dw0) matches" in text, text


@pytest.mark.parametrize(("cls", "code"), [("Flatten", 0), ("FlattenBug", 1)])
def test_weightless_pass_layer_is_checked(cls, code):
    """F2: Flatten (no weights, no initialize) was refused with text about stepping weights."""
    p = run_here("check", f"{LAYERS}::{cls}", "--input-shape", "4,3,2")
    text = " ".join(both(p).split())
    assert p.returncode == code and "W_opt" not in text, text
    assert (f"PASS: {cls}: every gradient (dX) matches" if code == 0 else "dX is 2 times the correct gradient") \
        in text, text


@pytest.mark.parametrize(("cls", "code"), [("TanH", 0), ("TanHBug", 1), ("Softmax", 1)])
def test_activation_call_gradient_protocol_is_checked(cls, code):
    """F5: an activation's __call__(x)/gradient(x) was refused (exit 2, "Public methods found: gradient()"); it is
    checked as forward = __call__, dX = dY * gradient(x); Softmax's diagonal-only gradient FAILs."""
    p = run_here("check", f"{LAYERS}::{cls}", "--input-shape", "4,3")
    text = " ".join(both(p).split())
    assert p.returncode == code and "ML-From-Scratch's activation protocol" in text, text
    assert (f"PASS: {cls}: every gradient (dX) matches" if code == 0 else f"FAIL: {cls}: gradient mismatch in dX") \
        in text, text


@pytest.mark.parametrize(("cls", "code"), [("SquareLoss", 0), ("SquareLossBug", 1)])
def test_loss_gradient_protocol_is_checked(cls, code):
    """F6: a loss's loss(y, y_pred)/gradient(y, y_pred) with --loss was refused (exit 2) with a layer's recipe; it
    is checked as L = sum(loss(y, y_pred)), dL/dy_pred = gradient(y, y_pred), the header saying the sum."""
    p = run_here("check", f"{LAYERS}::{cls}", "--loss", "--input-shape", "4,3")
    text = " ".join(both(p).split())
    assert p.returncode == code and "ML-From-Scratch's loss protocol: L = the sum of loss(y, y_pred)" in text, text
    assert (f"PASS: {cls}: dL/dy_pred matches" if code == 0 else f"FAIL: {cls}") in text, text


def test_unavailable_import_is_not_told_to_be_removed(tmp_path):
    """F8: an import the published package needs (ML-From-Scratch's terminaltables, progressbar) was told "remove
    it"; it now says how to proceed for a package's dependency and for a submission's own import."""
    from test_cli import student

    src = """
    import numpy as np
    import terminaltables_not_here_f8

    class Flatten:
        def forward_pass(self, X, training=True):
            self.shape = X.shape
            return X.reshape(X.shape[0], -1)

        def backward_pass(self, accum_grad):
            return accum_grad.reshape(self.shape)
    """
    p = run_here("check", f"{student(tmp_path, src, 'mlfs_f8.py')}::Flatten", "--input-shape", "4,3")
    text = " ".join(both(p).split())
    assert "imports terminaltables_not_here_f8" in text and "remove it" not in text, text
    assert "install the package's requirements where gradcheck runs" in text, text


def test_inherited_methods_are_listed(tmp_path):
    """F7: a subclass of their NeuralNetwork (train_on_batch, fit, predict inherited) was said to have public
    methods "none"; the inherited ones are listed."""
    from test_cli import student

    src = """
    class Net:
        def add(self, layer):
            pass

        def train_on_batch(self, X, y):
            return 0.0

    class MLP(Net):
        def __init__(self):
            self.layers = []
    """
    p = run_here("check", f"{student(tmp_path, src, 'mlp_f7.py')}::MLP", "--input-shape", "5,4")
    text = " ".join(both(p).split())
    assert p.returncode == 2 and "its public methods are none" not in text, text
    assert "add(layer), train_on_batch(X, y)" in text, text


def test_batchnorm_eval_failure_says_training_passes():
    """newuser31b F2: ML-From-Scratch's BatchNormalization (running statistics from the first batch, backward the
    training formula) was checked once, in eval mode, and FAILed without a word of the training mode their
    NeuralNetwork backpropagates in; the training mode is now checked too and the note says it passes there."""
    p = run_here("check", f"{LAYERS}::BatchNormalization", "--input-shape", "6,3")
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "FAIL: BatchNormalization [eval]: gradient mismatch in dX" in text, text
    assert "backward fails in eval mode only: in training mode (forward(X, training=True)" in text, text
    assert "--training checks the training forward alone" in text and "checked once" not in text, text
    p = run_here("check", f"{LAYERS}::BatchNormalization", "--input-shape", "6,3", "--training")
    assert p.returncode == 0 and "PASS: BatchNormalization" in both(p), both(p)


def test_batchnorm_eval_backward_in_training_fails():
    """The twin of F2, a wrong PASS: a backward of the eval formula (no batch-statistics paths) PASSed by default,
    the training mode skipped because both forwards gave the same output (and backward the same gradients) on the
    first batch, which set the running statistics: equal there, different functions."""
    p = run_here("check", f"{LAYERS}::BatchNormEvalBackward", "--input-shape", "6,3")
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "FAIL: BatchNormEvalBackward [training]: gradient mismatch in dX" in text, text


@pytest.mark.parametrize(("cls", "code"), [("SquareLossPredFirst", 0), ("SquareLossPredFirstBug", 1)])
def test_loss_with_the_prediction_first_is_called_as_its_names_say(cls, code):
    """newuser31b F3: loss(y_pred, y_true)/gradient(y_pred, y_true) was called (y, y_pred) positionally: a right loss
    FAILed as "dy_pred has the wrong sign" while the header said the names were read."""
    p = run_here("check", f"{LAYERS}::{cls}", "--loss", "--input-shape", "4,3")
    text = " ".join(both(p).split())
    assert p.returncode == code, text
    assert "loss(y_pred, y_true) and gradient(y_pred, y_true): the prediction first, as the names say" in text, text
    assert (f"PASS: {cls}: dL/dy_pred matches" if code == 0 else "dy_pred has the wrong sign") in text, text


def test_loss_class_without_loss_flag_is_told_to_add_it():
    """newuser31b F4: a loss()/gradient() class checked without --loss got the generic "has no forward() method"."""
    p = run_here("check", f"{LAYERS}::SquareLoss", "--input-shape", "4,3")
    text = " ".join(both(p).split())
    assert p.returncode == 2 and "SquareLoss has loss(y, y_pred) and gradient(y, y_pred)" in text, text
    assert "Check it with --loss" in text and "has no forward() method" not in text, text


def test_half_mlfs_class_says_initialize_was_not_called():
    """newuser31b F5: forward/backward beside their initialize(optimizer): W is None, and the forward's TypeError was
    blamed on --input-shape alone; the header now says initialize was not called and which attributes are None."""
    p = run_here("check", f"{LAYERS}::DenseHybrid", *DENSE)
    text = " ".join(both(p).split())
    assert p.returncode == 3 and "initialize(optimizer) was not called" in text, text
    assert "so W, w0 are still None" in text, text
