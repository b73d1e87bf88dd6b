"""Findings of session 17's new-user tester (fixer fixt17), in-process and on small shapes: a zero bias with a
keepdims db (M1), --targets on a training switch or a non-scalar forward (M2), a CS231n loss's extra argument
(M3), float16's own precision (4), attribute-style names in diagnoses (5), five common bugs named (6, with
tests/buggy_layers/tester17.py), PyTorch's __call__ and micrograd (L7), header lines (L8), a pair's own gradient
names (9), --init's duplicated keys (10), the zoo's held dropout mask (L11)."""

from test_cli import both, run_here, student

BIAS = """
import numpy as np

class BiasKeepdims:
    def __init__(self):
        self.b = np.zeros(5)
    def forward(self, X):
        return X + self.b
    def backward(self, dY):
        self.db = dY.sum(0, keepdims=True)
        return dY
"""


def test_zero_bias_keepdims_is_diagnosed(tmp_path):
    """M1: a zero bias makes forward the identity, and the keepdims db's shape error was taken for a Dropout's
    eval backward raising: every mode set aside, then IndexError in ``_diagnose_modes``."""
    f = student(tmp_path, BIAS)
    p = run_here("check", f"{f}::BiasKeepdims", "--input-shape", "4,5")
    text = both(p)
    assert p.returncode == 1, text
    assert "Traceback" not in text
    assert "db has shape (1, 5), expected (5,)" in text and "keepdims" in text


NONSCALAR = """
import numpy as np

class Net:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((5, 3))
    def forward(self, x, t):
        self.x = x
        return x @ self.W
    def backward(self, dout=1):
        self.dW = self.x.T @ dout
        return dout @ self.W.T
"""


def test_targets_on_a_training_switch_is_a_usage_error():
    """M2: --targets without --loss read forward(X, training=False) as a model's forward(x, t) and blamed the
    student's backward for the float dout it was given."""
    p = run_here("check", "examples/student_linear_correct.py::Linear", "--input-shape", "4,5", "--init",
                 '{"in_features": 5, "out_features": 3}', "--targets", "labels:3")
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "--targets without --loss is for a model forward(x, t) -> loss" in text
    assert "Linear.forward takes X, training (training: a training switch, not targets)" in text
    assert "AttributeError" not in text


def test_targets_on_a_non_scalar_forward_is_a_usage_error(tmp_path):
    """M2: a forward(x, t) returning an array is no model-with-targets either (its loss is a scalar)."""
    f = student(tmp_path, NONSCALAR)
    p = run_here("check", f"{f}::Net", "--input-shape", "4,5", "--targets", "labels:3")
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "a scalar; Net.forward(x, t) returned shape (4, 3)" in text


def test_no_switch_mode_line(tmp_path):
    """L8: a forward with no training switch (an rnn_step, a layernorm, a max_pool) said "mode: eval (forward has no
    training argument)": it has one mode, neither eval nor training."""
    f = student(tmp_path, BIAS.replace("zeros(5)", "arange(5.0)").replace(", keepdims=True", ""))
    p = run_here("check", f"{f}::BiasKeepdims", "--input-shape", "4,5")
    text = both(p)
    assert p.returncode == 0, text
    assert "mode: forward has no training switch: one mode" in text
    assert "eval" not in text


TEMPORAL = """
import numpy as np

def temporal_softmax_loss(x, y, mask):
    N, T, V = x.shape
    xf = x.reshape(N * T, V); yf = y.reshape(N * T); mf = mask.reshape(N * T)
    p = np.exp(xf - xf.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
    loss = -np.sum(mf * np.log(p[np.arange(N * T), yf])) / N
    dx = p.copy(); dx[np.arange(N * T), yf] -= 1; dx /= N; dx *= mf[:, None]
    return loss, dx.reshape(N, T, V)
"""


def test_loss_function_extra_argument_from_init(tmp_path):
    """M3: CS231n's temporal_softmax_loss(x, y, mask): the missing mask was a TypeError blamed on the student, and
    --init's mask came as a list; now a usage error naming it, and --init's nested list a float64 array."""
    f = student(tmp_path, TEMPORAL)
    args = ("check", f"{f}::temporal_softmax_loss", "--input-shape", "2,3,4", "--loss", "--targets", "labels:4")
    p = run_here(*args)
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "temporal_softmax_loss(x, y, mask) needs mask, which only --init can give" in text
    assert """--init '{"mask": ...}'""" in text
    p = run_here(*args, "--init", '{"mask": [[1, 1, 0], [1, 0, 0]]}')
    text = both(p)
    assert p.returncode == 0, text
    assert "PASS: temporal_softmax_loss" in text
    assert "(loss), x shape (2, 3, 4) (real), y: 4-class labels of shape (2, 3)" in text


F16 = """
import numpy as np

class F16:
    def forward(self, X):
        return (2 * X).astype(np.float16)
    def backward(self, dY):
        return 2 * dY
"""


def test_float16_is_told_its_own_precision(tmp_path):
    """4: float16's diagnosis said float32's "about 7 significant digits" and "no astype(np.float32)"."""
    f = student(tmp_path, F16)
    p = run_here("check", f"{f}::F16", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "float16 keeps about 3 significant digits (eps 9.8e-04)" in text
    assert "e.g. no astype(np.float16)" in text
    assert "float32" not in text


ATTRS = """
import numpy as np

class DenseAccum:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3)); self.b = np.zeros(3)
        self.dW = np.zeros_like(self.W); self.db = np.zeros_like(self.b)
    def forward(self, X):
        self.X = X
        return X @ self.W + self.b
    def backward(self, dY):
        self.dW += self.X.T @ dY
        self.db += dY.sum(0)
        return dY @ self.W.T

class TwoW:
    def __init__(self):
        r = np.random.default_rng(0)
        self.W1 = r.standard_normal((5, 3)); self.W2 = r.standard_normal((5, 3))
    def forward(self, X):
        self.X = X; self.a = X @ self.W1; self.s = 1 / (1 + np.exp(-(X @ self.W2)))
        return self.a * self.s
    def backward(self, dY):
        da = dY * self.s; dz = dY * self.a * self.s * (1 - self.s)
        self.dW2 = self.X.T @ da; self.dW1 = self.X.T @ dz
        return da @ self.W1.T + dz @ self.W2.T

class LinKeepdims:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((5, 3)); self.b = np.zeros(3)
    def forward(self, X):
        self.X = X; return X @ self.W + self.b
    def backward(self, dY):
        self.dW = self.X.T @ dY; self.db = dY.sum(0, keepdims=True)
        return dY @ self.W.T
"""


def test_attribute_layers_are_told_in_their_own_names(tmp_path):
    """5: a sandboxed attribute-style layer's diagnoses said grads['W'] and params['b'] (grad_slots read no
    RemoteLayer: its class lives in gradcheck.sandbox.remote)."""
    f = student(tmp_path, ATTRS)
    texts = {}
    for cls in ("DenseAccum", "TwoW", "LinKeepdims"):
        p = run_here("check", f"{f}::{cls}", "--input-shape", "6,5")
        texts[cls] = " ".join(both(p).split())
        assert p.returncode == 1, texts[cls]
        assert "grads[" not in texts[cls] and "params[" not in texts[cls], texts[cls]
    assert "(self.dW, self.db += ...: every backward adds to them" in texts["DenseAccum"]
    assert "assign self.dW = ... in backward" in texts["DenseAccum"]
    assert ("self.dW1 holds the gradient of W2 and vice versa; store each gradient in its own place: self.dW1 = the "
            "gradient of W1, self.dW2 = that of W2") in texts["TwoW"]
    assert "LinKeepdims.backward(dY) (in self.db) gave db with shape (1, 3)" in texts["LinKeepdims"]
    assert "(the shape of self.b)" in texts["LinKeepdims"]


def test_init_key_given_twice_is_refused():
    """10: --init '{"a": 1, "a": 2}' silently took the last value."""
    p = run_here("check", "examples/student_linear_correct.py::Linear", "--input-shape", "4,5", "--init",
                 '{"in_features": 5, "out_features": 3, "in_features": 4}')
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "--init: key 'in_features' given twice in one JSON object" in text


DROPOUT_PAIR = """
import numpy as np

def dropbug_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    np.random.seed(dropout_param["seed"])
    mask = (np.random.rand(*x.shape) < p) / p if mode == "train" else None
    return (x * mask if mode == "train" else x), (dropout_param, mask)

def dropbug_backward(dout, cache):
    dp, mask = cache
    return dout * (mask > 0) if dp["mode"] == "train" else dout
"""


def test_single_input_pair_is_told_in_its_own_names(tmp_path):
    """9: a one-input CS231n pair's gradient was dX (several inputs' are dx, dw), and the dropout advice said
    dX = dY * self.mask to a pair that has no self."""
    f = student(tmp_path, DROPOUT_PAIR)
    p = run_here("check", f"{f}::dropbug", "--input-shape", "4,5", "--init",
                 '{"dropout_param": {"p": 0.5, "mode": "train", "seed": 1}}')
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "dropbug dx (4, 5)" in text and " dX " not in text
    assert "forward multiplies x by a mask with entries 0 and 2" in text
    assert "dx = dout * mask, the mask from the cache" in text and "self.mask" not in text


HEADERS = """
import numpy as np

class Parameter:
    def __init__(self, data):
        self.data = np.asarray(data, dtype=float); self.grad = np.zeros_like(self.data)

class Module:
    def parameters(self):
        for v in vars(self).values():
            if isinstance(v, Parameter):
                yield v
            elif isinstance(v, Module):
                yield from v.parameters()
    def zero_grad(self):
        for p in self.parameters():
            p.grad[...] = 0
    def __call__(self, *a):
        return self.forward(*a)

class TorchLinear(Module):
    def __init__(self, in_features=5, out_features=3):
        rng = np.random.default_rng(1)
        self.weight = Parameter(rng.standard_normal((out_features, in_features)))
        self.bias = Parameter(rng.standard_normal(out_features))
    def forward(self, x):
        self.x = x
        return x @ self.weight.data.T + self.bias.data
    def backward(self, grad_out):
        self.weight.grad += grad_out.T @ self.x
        self.bias.grad += grad_out.sum(0)
        return grad_out @ self.weight.data

class TorchLinearBug(TorchLinear):
    def backward(self, grad_out):
        self.weight.grad += self.x.T @ grad_out if False else grad_out.T @ self.x * 0.5
        self.bias.grad += grad_out.sum(0)
        return grad_out @ self.weight.data

class TorchMLP(Module):
    def __init__(self):
        self.fc1 = TorchLinear(5, 4); self.fc2 = TorchLinear(4, 3)
    def forward(self, x):
        self.h = self.fc1(x); self.a = np.tanh(self.h)
        return self.fc2(self.a)
    def backward(self, g):
        g = self.fc2.backward(g)
        g = g * (1 - self.a ** 2)
        return self.fc1.backward(g)


class Dense:
    '''The Independent Code style: column vectors, backward(output_gradient, learning_rate) steps itself.'''
    def __init__(self, input_size=5, output_size=3):
        rng = np.random.default_rng(0)
        self.weights = rng.standard_normal((output_size, input_size))
        self.bias = rng.standard_normal((output_size, 1))
    def forward(self, input):
        self.input = input
        return np.dot(self.weights, self.input) + self.bias
    def backward(self, output_gradient, learning_rate):
        weights_gradient = np.dot(output_gradient, self.input.T)
        input_gradient = np.dot(self.weights.T, output_gradient)
        self.weights -= learning_rate * weights_gradient
        self.bias -= learning_rate * output_gradient
        return input_gradient

class BatchNorm:
    '''Eval mode backward wrongly uses the train-mode formula.'''
    def __init__(self, D=5, momentum=0.9, eps=1e-5):
        self.gamma = np.ones(D) * 1.5; self.beta = np.zeros(D)
        self.running_mean = np.zeros(D) + 0.3; self.running_var = np.ones(D) * 2.0
        self.momentum, self.eps = momentum, eps
    def forward(self, X, train=True):
        if train:
            mu, var = X.mean(0), X.var(0)
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mu
            self.running_var = self.momentum * self.running_var + (1 - self.momentum) * var
        else:
            mu, var = self.running_mean, self.running_var
        self.std = np.sqrt(var + self.eps); self.xh = (X - mu) / self.std
        return self.gamma * self.xh + self.beta
    def backward(self, dY):
        N = dY.shape[0]
        self.dgamma = (dY * self.xh).sum(0); self.dbeta = dY.sum(0)
        dxh = dY * self.gamma
        return (N * dxh - dxh.sum(0) - self.xh * (dxh * self.xh).sum(0)) / (N * self.std)
"""


def test_header_lines_say_what_the_student_wrote(tmp_path):
    """L8: fc1 said "no parameters" though fc1.weight holds its array; Independent Code's Dense was named
    weights/weights_grad (gradcheck's name for the read step); "constant buffers (forward writes it)"."""
    f = student(tmp_path, HEADERS)
    p = run_here("check", f"{f}::TorchMLP", "--input-shape", "6,5")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "fc1 (TorchLinear: parameters in fc1.weight, fc1.bias)" in text and "no parameters" not in text
    p = run_here("check", f"{f}::Dense", "--input-shape", "5,1")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "protocol: attribute style (weights, bias); backward(output_gradient, learning_rate)" in text
    p = run_here("check", f"{f}::BatchNorm", "--input-shape", "4,5", "--eval")
    text = " ".join(both(p).split())
    assert "read as constant buffers (forward writes them)" in text, text


def test_common_bugs_are_named():
    """6: a conv backward cropping its padding as dxp[:, :, :H, :W] was "no known bug pattern" (it and the others,
    max pooling's, an RNN step's tanh, swapped upstream gradients, are planted in tests/buggy_layers/tester17.py)."""
    p = run_here("check", "tests/buggy_layers/tester17.py::convcrop", "--input-shape", "2,2,5,5;3,2,3,3;3",
                 "--init", '{"conv_param": {"stride": 1, "pad": 1}}')
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "dx is the correct gradient shifted by 1 along its last two axes" in text
    assert "crop both ends: dx = dxp[:, :, 1:-1, 1:-1] (pad = 1)" in text


HABITS = """
import random
import numpy as np

class CallOnly:
    def __call__(self, X):
        self.X = X
        return np.tanh(X)
    def backward(self, dY):
        return dY * (1 - np.tanh(self.X) ** 2)

class Value:
    def __init__(self, data):
        self.data, self.grad = data, 0.0
    def tanh(self):
        return self
    def backward(self):
        self.grad = 1.0

class Neuron:
    def __init__(self, nin=5):
        random.seed(0)
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
    def __call__(self, x):
        return sum(wi.data * xi for wi, xi in zip(self.w, x))
    def parameters(self):
        return self.w
"""


def test_pytorch_and_micrograd_habits(tmp_path):
    """L7: a class with __call__ and backward got a bare "has no forward() method"; so did micrograd's Neuron."""
    f = student(tmp_path, HABITS)
    p = run_here("check", f"{f}::CallOnly", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "forward is __call__() (the layer called as layer(X), PyTorch's habit: the class has no forward)" in text
    p = run_here("check", f"{f}::Neuron", "--input-shape", "5")
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "Neuron looks like a module of scalar autograd values (micrograd's Neuron/Layer/MLP" in text
    assert "scalar autograd graphs are outside what it can check" in text


def test_held_dropout_mask_is_not_probed_on_another_batch():
    """L11: `gradcheck zoo` said "Dropout[train]: ... forward on a batch of another size raised ValueError": its
    mask is held at the batch's shape, so the inputs' differences are not stacked into a bigger batch."""
    import numpy as np

    from gradcheck import check_layer
    from manualprop import Dropout

    rng = np.random.default_rng(0)
    layer = Dropout(0.5, rng=rng)
    layer.fix_mask(rng.random((4, 6)) >= 0.5)
    res = check_layer(layer, (4, 6), training=True, mode="full")
    assert res.passed
    assert not any("another size" in n or "not stacked" in n for n in res.notes), res.notes
