"""Grading tests of the cs231n_layers assignment (run by `gradcheck grade`, never by the course's own suite).

The student's functions run in a sandbox process, each pair presented as a layer whose array
arguments are its inputs (gradcheck/_adapters.py), ``softmax_loss`` as a loss. The references
are manualprop's layers behind the same signatures (the classes below), so the truth is
independent of the assignment's solution; the verdicts, numerical gradients included, stay in
the grader. Visible tests use fixed shapes; hidden tests draw shapes from the session seed
(recorded in results.json). Inputs are kept away from ReLU's kink, except in the one test
about the derivative at 0. Every input reaches each branch its test grades, whatever the seed:
a ReLU input has entries on both sides of 0 (``away_from_kinks``), a batch of labels two classes
at least (``class_labels``), and the first trial of a hidden test with several holds the case its
docstring names (an x with two feature axes to flatten, a conv with stride 2, pad 2 and a batch
of two or more, a pixel that is the maximum of overlapping windows), so a bug in that branch is caught before any trial
pays partial credit.
"""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.grading import away_from_kinks, class_labels

FILE = "layers.py"

# Hand-derived gradients only: no automatic differentiation in the submission.
pytestmark = [pytest.mark.forbid_imports("autoprop", "autograd", "torch", "jax", "tensorflow"),
              pytest.mark.gradcheck_no_forward_in_backward,  # a backward by differences of forward: no credit
              pytest.mark.timeout(5)]


# --------------------------------------------------------------------------- references (manualprop)


class RefAffine:
    """``affine_forward(x, w, b)`` as manualprop.Linear: w (D, M) is Linear's W (M, D) transposed."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, x, w, b, training=False):
        self.shape, self.lin = x.shape, mp.Linear(*w.shape)
        self.lin.params["W"][...], self.lin.params["b"][...] = w.T, b
        return self.lin.forward(x.reshape(x.shape[0], -1))

    def backward(self, dout):
        dx = self.lin.backward(dout)
        return dx.reshape(self.shape), self.lin.grads["W"].T.copy(), self.lin.grads["b"]


class RefBatchNorm:
    """``batchnorm_forward(x, gamma, beta, bn_param)`` as manualprop.BatchNorm1D (``mode`` is training)."""

    def __init__(self, mode="train", running_mean=None, running_var=None, eps=1e-5):
        self.params, self.grads = {}, {}
        self.mode, self.running, self.eps = mode, (running_mean, running_var), eps

    def forward(self, x, gamma, beta, training=False):
        self.bn = mp.BatchNorm1D(x.shape[1], eps=self.eps)
        self.bn.params["gamma"][...], self.bn.params["beta"][...] = gamma, beta
        if self.running[0] is not None:
            self.bn.running_mean, self.bn.running_var = (np.array(v, dtype=np.float64) for v in self.running)
        return self.bn.forward(x, training=self.mode == "train")

    def backward(self, dout):
        dx = self.bn.backward(dout)
        return dx, self.bn.grads["gamma"], self.bn.grads["beta"]


class RefConv:
    """``conv_forward_naive(x, w, b, conv_param)`` as manualprop.Conv2D."""

    def __init__(self, stride, pad):
        self.params, self.grads = {}, {}
        self.stride, self.pad = stride, pad

    def forward(self, x, w, b, training=False):
        F, C, HH, WW = w.shape
        self.conv = mp.Conv2D(C, F, (HH, WW), stride=self.stride, padding=self.pad)
        self.conv.params["W"][...], self.conv.params["b"][...] = w, b
        return self.conv.forward(x)

    def backward(self, dout):
        dx = self.conv.backward(dout)
        return dx, self.conv.grads["W"], self.conv.grads["b"]


def pool_param(size, stride):
    return {"pool_height": size[0], "pool_width": size[1], "stride": stride}


def affine(student):
    return student.layer(FILE, "affine")


def relu(student):
    return student.layer(FILE, "relu")


def batchnorm(student, **bn_param):
    return student.layer(FILE, "batchnorm", bn_param={"mode": "train", **bn_param})


def conv(student, stride, pad):
    return student.layer(FILE, "conv", conv_param={"stride": stride, "pad": pad})


def max_pool(student, size, stride):
    return student.layer(FILE, "max_pool", pool_param=pool_param(size, stride))


def softmax_loss(student):
    return student.loss(FILE, "softmax_loss")


def affine_inputs(rng, shape, m):
    d = int(np.prod(shape[1:]))
    return [rng.standard_normal(shape), rng.standard_normal((d, m)) / np.sqrt(d), rng.standard_normal(m)]


def bn_inputs(rng, n, d):
    return [rng.normal(1.0, 2.0, size=(n, d)), rng.normal(1.0, 0.5, size=d), rng.standard_normal(d)]


def running_statistics(x, running_mean, running_var, momentum):
    """CS231n's update of bn_param in training mode (the assignment's documented formula, as in CS231n's
    assignment 2): ``running = momentum * running + (1 - momentum) * batch``, the batch's biased variance."""
    return (momentum * np.asarray(running_mean) + (1 - momentum) * x.mean(axis=0),
            momentum * np.asarray(running_var) + (1 - momentum) * x.var(axis=0))


def conv_inputs(rng, x_shape, f, kernel):
    c = x_shape[1]
    return [rng.standard_normal(x_shape), rng.standard_normal((f, c, *kernel)) / np.sqrt(c * kernel[0] * kernel[1]),
            rng.standard_normal(f)]


# --------------------------------------------------------------------------- visible


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
def test_affine_forward(student, grade, rng):
    """affine_forward: output (x of shape (4, 2, 3) is flattened per example)"""
    grade.layer_forward(affine(student), affine_inputs(rng, (4, 2, 3), 5), RefAffine())


@pytest.mark.points(6)
@pytest.mark.visibility("visible")
def test_affine_gradients(student, grade, rng):
    """affine_backward: gradients dx, dw, db (2 points each)"""
    grade.layer_gradients(affine(student), affine_inputs(rng, (4, 2, 3), 5), RefAffine(),
                          parts={"dx": 2, "dw": 2, "db": 2}, seed=1)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
def test_relu_forward(student, grade, rng):
    """relu_forward: output"""
    grade.layer_forward(relu(student), away_from_kinks(rng.standard_normal((6, 4))), mp.ReLU())


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
def test_relu_gradient(student, grade, rng):
    """relu_backward: gradient dx (inputs away from 0)"""
    grade.layer_gradients(relu(student), away_from_kinks(rng.standard_normal((3, 4, 5))), mp.ReLU(), seed=2)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
def test_relu_gradient_at_zero(student, grade, rng):
    """relu_backward: the derivative at x == 0 is 0 (PyTorch's and TensorFlow's convention)"""
    x = away_from_kinks(rng.standard_normal((4, 6)))
    x[:, ::2] = 0.0  # exact zeros: central differences straddle the kink there, so the reference alone decides
    grade.layer_gradients(relu(student), x, mp.ReLU(), seed=3, numerical=False)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
def test_softmax_loss_value(student, grade, rng):
    """softmax_loss: loss value (mean over the batch)"""
    x, y = 3 * rng.standard_normal((8, 5)), class_labels(rng, 8, 5)
    grade.loss_value(softmax_loss(student), y, x, mp.SoftmaxCrossEntropy())


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
def test_softmax_loss_gradient(student, grade, rng):
    """softmax_loss: gradient dx"""
    x, y = 3 * rng.standard_normal((8, 5)), class_labels(rng, 8, 5)
    grade.loss_gradient(softmax_loss(student), y, x, mp.SoftmaxCrossEntropy(), points=2)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
def test_batchnorm_forward(student, grade, rng):
    """batchnorm_forward: output in training mode (the batch's mean and biased variance)"""
    grade.layer_forward(batchnorm(student), bn_inputs(rng, 6, 4), RefBatchNorm())


@pytest.mark.points(4)
@pytest.mark.visibility("visible")
def test_batchnorm_gradients(student, grade, rng):
    """batchnorm_backward: gradients dx (2 points), dgamma, dbeta, training mode"""
    grade.layer_gradients(batchnorm(student), bn_inputs(rng, 6, 4), RefBatchNorm(),
                          parts={"dx": 2, "dgamma": 1, "dbeta": 1}, seed=4)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
def test_batchnorm_backward_repeatable(student, grade, rng):
    """batchnorm_backward: twice after one forward, the same right gradients (its cache not modified in place)"""
    xs, dout = bn_inputs(rng, 6, 4), rng.standard_normal((6, 4))
    ref = RefBatchNorm()
    ref.forward(*[x.copy() for x in xs])
    grade.backward_repeatable(batchnorm(student), xs, dY=dout, expected=ref.backward(dout.copy()))


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
def test_batchnorm_running_statistics(student, grade, rng):
    """batchnorm_forward: bn_param's running_mean and running_var after 3 training-mode calls (momentum 0.9, then 0.7)"""
    d = 4
    mean, var = np.zeros(d), np.ones(d)  # the defaults when bn_param has none yet
    for call, momentum in enumerate((0.9, 0.9, 0.7)):
        x, gamma, beta = bn_inputs(rng, 6, d)
        given = {} if call == 0 else {"running_mean": mean.copy(), "running_var": var.copy()}
        if call == 2:
            given["momentum"] = momentum
        grade.note(f"call {call + 1}: momentum {momentum}{' (the default)' if call < 2 else ''}, bn_param "
                   f"{'without running statistics' if call == 0 else 'with the expected ones of call ' + str(call)}")
        mean, var = running_statistics(x, mean, var, momentum)
        grade.forward_keywords(batchnorm(student, **given), [x, gamma, beta], "bn_param",
                               {"running_mean": mean, "running_var": var})


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
def test_batchnorm_forward_test_mode(student, grade, rng):
    """batchnorm_forward: output in test mode (normalised by bn_param's running_mean and running_var, not the batch's; left as given)"""
    mean, var = rng.standard_normal(4), rng.uniform(0.5, 2.0, size=4)
    xs = bn_inputs(rng, 6, 4)
    grade.note("the output (1 point)")
    grade.layer_forward(batchnorm(student, mode="test", running_mean=mean, running_var=var), xs,
                        RefBatchNorm("test", mean, var))
    # test mode only reads the running statistics: a batchnorm updating them there too (the update written after the
    # if/elif, CS231n's starter layout) moves them toward every evaluated batch, and scored 48 / 48 (redteam43 F1)
    grade.note("bn_param after the call (1 point): test mode leaves running_mean and running_var as given, "
               "only training mode updates them")
    grade.forward_keywords(batchnorm(student, mode="test", running_mean=mean, running_var=var), xs, "bn_param",
                           {"running_mean": mean, "running_var": var}, points=1)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
def test_conv_forward(student, grade, rng):
    """conv_forward_naive: output (stride 2, pad 1)"""
    grade.layer_forward(conv(student, 2, 1), conv_inputs(rng, (2, 3, 5, 5), 4, (3, 3)), RefConv(2, 1))


@pytest.mark.points(5)
@pytest.mark.visibility("visible")
def test_conv_gradients(student, grade, rng):
    """conv_backward_naive: gradients dx, dw (2 points each), db (stride 1, pad 1, a 3x2 kernel)"""
    grade.layer_gradients(conv(student, 1, 1), conv_inputs(rng, (2, 2, 4, 5), 3, (3, 2)), RefConv(1, 1),
                          parts={"dx": 2, "dw": 2, "db": 1}, seed=5)


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
def test_max_pool_forward(student, grade, rng):
    """max_pool_forward: output (2x2 windows, stride 2)"""
    grade.layer_forward(max_pool(student, (2, 2), 2), rng.standard_normal((2, 3, 4, 6)), mp.MaxPool2D(2, 2))


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
def test_max_pool_gradient(student, grade, rng):
    """max_pool_backward: gradient dx (2x2 windows, stride 2)"""
    grade.layer_gradients(max_pool(student, (2, 2), 2), rng.standard_normal((2, 3, 4, 6)), mp.MaxPool2D(2, 2),
                          seed=6)


# --------------------------------------------------------------------------- hidden properties


@pytest.mark.points(3)
@pytest.mark.visibility("after_due_date")
def test_hidden_affine_random_shapes(student, grade, rng, grading_seed):
    """Hidden: affine gradients for random input shapes and sizes"""
    for trial in range(3):  # every trial counts, so each x has axes to flatten (a dx left flat fails each alike)
        n_axes = int(rng.integers(2, 4))
        shape = (int(rng.integers(2, 9)), *(int(v) for v in rng.integers(2, 5, size=n_axes)))
        m = int(rng.integers(2, 7))
        grade.note(f"trial {trial}: x of shape {shape}, {m} outputs (seed {grading_seed})")
        grade.layer_gradients(affine(student), affine_inputs(rng, shape, m), RefAffine(),
                              parts={"dx": 1, "dw": 1, "db": 1}, seed=int(rng.integers(2**31)))


@pytest.mark.points(3)
@pytest.mark.visibility("after_due_date")
def test_hidden_batchnorm(student, grade, rng, grading_seed):
    """Hidden: batchnorm gradients for random batch sizes and features, and in test mode"""
    for trial in range(2):
        n, d = int(rng.integers(2, 11)), int(rng.integers(1, 7))
        grade.note(f"trial {trial}: x of shape ({n}, {d}), training mode (seed {grading_seed})")
        grade.layer_gradients(batchnorm(student), bn_inputs(rng, n, d), RefBatchNorm(),
                              parts={"dx": 1, "dgamma": 1, "dbeta": 1}, seed=int(rng.integers(2**31)))
    mean, var = rng.standard_normal(3), rng.uniform(0.5, 2.0, size=3)
    # bn_param's eps given (1e-3): no other test passes one, and a batchnorm ignoring it scored 48 / 48 (redteam42 F2)
    grade.note(f"test mode: running_mean {np.round(mean, 3).tolist()}, running_var {np.round(var, 3).tolist()}, "
               "eps 1e-3")
    grade.layer_gradients(batchnorm(student, mode="test", running_mean=mean, running_var=var, eps=1e-3),
                          bn_inputs(rng, 5, 3), RefBatchNorm("test", mean, var, eps=1e-3),
                          parts={"dx": 1, "dgamma": 1, "dbeta": 1},
                          seed=int(rng.integers(2**31)))


@pytest.mark.points(2)
@pytest.mark.visibility("after_due_date")
def test_hidden_conv_random(student, grade, rng, grading_seed):
    """Hidden: conv gradients for random kernels, strides and paddings"""
    for trial in range(2):
        n, c, f = int(rng.integers(2, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
        kernel = tuple(int(v) for v in rng.integers(1, 4, size=2))
        # the visible test has stride 1 and pad 1: every hidden trial (each counts) has neither, and a batch of two
        # or more (one hides batch-axis bugs), so a backward that ignores either fails each trial alike
        stride, pad = int(rng.integers(2, 4)), 2
        x_shape = (n, c, int(rng.integers(3, 7)), int(rng.integers(3, 7)))
        grade.note(f"trial {trial}: x {x_shape}, {f} filters of {kernel}, stride {stride}, pad {pad} "
                   f"(seed {grading_seed})")
        grade.layer_gradients(conv(student, stride, pad), conv_inputs(rng, x_shape, f, kernel), RefConv(stride, pad),
                              parts={"dx": 1, "dw": 1, "db": 1}, seed=int(rng.integers(2**31)))


@pytest.mark.points(1)
@pytest.mark.visibility("after_due_date")
def test_hidden_conv_no_padding(student, grade, rng, grading_seed):
    """Hidden: conv gradients without padding (pad 0: a 1x1 kernel, then a larger one)"""
    # every other conv test pads (1 or 2): the classic crop dxpad[:, :, pad:-pad, pad:-pad] is empty at pad 0 and
    # scored 48 / 48 (redteam42 F1); each trial has a batch of two or more and a stride of 1 or 2
    for trial, kernel in enumerate([(1, 1), tuple(int(v) for v in rng.integers(2, 4, size=2))]):
        n, c, f, stride = int(rng.integers(2, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4)), trial + 1
        x_shape = (n, c, int(rng.integers(kernel[0] + 1, 7)), int(rng.integers(kernel[1] + 1, 7)))
        grade.note(f"trial {trial}: x {x_shape}, {f} filters of {kernel}, stride {stride}, pad 0 (seed {grading_seed})")
        grade.layer_gradients(conv(student, stride, 0), conv_inputs(rng, x_shape, f, kernel), RefConv(stride, 0),
                              parts={"dx": 1, "dw": 1, "db": 1}, seed=int(rng.integers(2**31)))


@pytest.mark.points(2)
@pytest.mark.visibility("after_due_date")
def test_hidden_max_pool_overlapping(student, grade, rng, grading_seed):
    """Hidden: max-pool gradient with overlapping windows (stride smaller than the window) and random shapes"""
    # windows overlap: a pixel that is the max of two windows gets both. Every window is not square and its
    # stride differs from both sides: every visible test has 2x2 windows, so a max_pool that reads pool_height
    # for both sides, or takes the stride for the window, would otherwise score on some seeds; every trial counts,
    # so each has all three, and a bug fails each trial alike
    trials = [((2, 3), 1, (2, 2, 5, 6))]
    for _ in range(2):
        size = tuple(int(v) for v in rng.permutation([2, 3, 4])[:2])
        stride = int(rng.integers(1, min(size)))
        trials.append((size, stride, (int(rng.integers(1, 4)), int(rng.integers(1, 4)),
                                      int(rng.integers(size[0] + stride, 8)), int(rng.integers(size[1] + stride, 8)))))
    for trial, (size, stride, shape) in enumerate(trials):
        grade.note(f"trial {trial}: x {shape}, window {size}, stride {stride} (seed {grading_seed})")
        x = rng.standard_normal(shape)
        # pixel (size[0] - 1, size[1] - 1) is the maximum of the four windows (or more) over it, in every channel
        x[:, :, size[0] - 1, size[1] - 1] = x.max(axis=(2, 3)) + 0.5
        grade.layer_gradients(max_pool(student, size, stride), x, mp.MaxPool2D(size, stride),
                              seed=int(rng.integers(2**31)))


@pytest.mark.points(2)
@pytest.mark.visibility("after_due_date")
def test_hidden_softmax_loss(student, grade, rng, grading_seed):
    """Hidden: softmax_loss for random batch sizes and classes, and for large scores (1000 and more)"""
    for trial in range(2):
        n, c = int(rng.integers(2, 17)), int(rng.integers(2, 11))
        grade.note(f"trial {trial}: batch {n}, classes {c} (seed {grading_seed})")
        x, y = rng.standard_normal((n, c)) * rng.uniform(0.5, 10), class_labels(rng, n, c)
        grade.loss_gradient(softmax_loss(student), y, x, mp.SoftmaxCrossEntropy())
    big, y = np.array([[1000.0, 1001.0, 1002.0], [0.0, -1000.0, 5.0]]), np.array([2, 1])
    grade.loss_value(softmax_loss(student), y, big, mp.SoftmaxCrossEntropy())
