"""Correct layers written in students' own protocols, each with a one-bug twin (issue 10, tester10 T5, T9, T11,
T14), read through :func:`gradcheck._adapters.adapt` as ``gradcheck check`` reads them: *Neural Networks from
Scratch*'s stored ``self.output``/``self.dinputs``, deeplearning.ai's ``grads['dW']`` for ``params['W']``, a
``params`` dict with its gradients in ``param_grads``, PyTorch-like parameters zeroed through ``parameters()``."""

import numpy as np

try:
    from .styles import Parameter, TorchLinear
except ImportError:  # checked as a file by `gradcheck check` (tests/test_cli_student_protocols.py): its folder's
    from styles import Parameter, TorchLinear

INPUT = (5, 4)



class NnfsDense:
    """Neural Networks from Scratch's Layer_Dense: forward and backward return None, store their results."""

    ADAPT = True  # read as `check` reads it (tests.buggy_layers.load)

    def __init__(self, n_inputs=4, n_neurons=3):
        rng = np.random.default_rng(0)
        self.weights, self.biases = rng.standard_normal((n_inputs, n_neurons)), rng.standard_normal((1, n_neurons))

    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.dot(inputs, self.weights) + self.biases

    def backward(self, dvalues):
        self.dweights = np.dot(self.inputs.T, dvalues)
        self.dbiases = np.sum(dvalues, axis=0, keepdims=True)
        self.dinputs = np.dot(dvalues, self.weights.T)


class NnfsDenseMeanBias(NnfsDense):
    def backward(self, dvalues):
        self.dweights = np.dot(self.inputs.T, dvalues)
        self.dbiases = np.mean(dvalues, axis=0, keepdims=True)  # BUG: mean instead of sum
        self.dinputs = np.dot(dvalues, self.weights.T)


class DkeysLinear:
    """deeplearning.ai's names: ``params['W']`` with its gradient in ``grads['dW']``."""

    ADAPT = True

    def __init__(self, bug=1.0):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((4, 3)), "b": rng.standard_normal(3)}
        self.grads, self.bug = {}, bug

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads["dW"] = self.X.T @ dY * self.bug
        self.grads["db"] = dY.sum(0)
        return dY @ self.params["W"].T


class DkeysLinearTwice(DkeysLinear):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: dW twice too large


class ParamGradsLinear:
    """A ``params`` dict whose gradients live in another dict, ``param_grads`` (no ``grads`` attribute)."""

    ADAPT = True

    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((4, 3)), "b": rng.standard_normal(3)}
        self.param_grads = {}

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.param_grads["W"], self.param_grads["b"] = self.X.T @ dY, dY.sum(0)
        return dY @ self.params["W"].T


class ParamGradsLinearMeanBias(ParamGradsLinear):
    def backward(self, dY):
        self.param_grads["W"], self.param_grads["b"] = self.X.T @ dY, dY.mean(0)  # BUG: mean instead of sum
        return dY @ self.params["W"].T


class ZeroingParameter(Parameter):
    """A parameter the training loop zeroes itself: ``for p in model.parameters(): p.zero_grad()``."""

    def zero_grad(self):
        self.grad = np.zeros_like(self.data)


class TorchGradsLinear(TorchLinear):
    """PyTorch-like module without its own ``zero_grad()``: its loop zeroes each of ``parameters()`` (their
    ``grad`` arrays set to 0, as ``optimizer.zero_grad()``)."""

    zero_grad = None

    def parameters(self):
        return [self.weight, self.bias]


class TorchGradsLinearTwice(TorchGradsLinear):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: weight.grad twice the gradient


class TorchParamsLinear(TorchGradsLinear):
    """The same, with parameters that have ``zero_grad()``, which the loop calls."""

    def __init__(self, bug=1.0):
        super().__init__(bug=bug)
        self.weight, self.bias = ZeroingParameter(self.weight.data), ZeroingParameter(self.bias.data)


class TorchParamsLinearTwice(TorchParamsLinear):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: weight.grad twice the gradient


class IndepDense:
    """The Independent Code tutorial's Dense (column vectors): backward(output_gradient, learning_rate) updates
    the weights itself and keeps their gradients in local variables."""

    ADAPT = True
    INPUT = (4, 1)

    def __init__(self, bug=1.0):
        rng = np.random.default_rng(0)
        self.weights, self.bias, self.bug = rng.standard_normal((3, 4)), rng.standard_normal((3, 1)), bug

    def forward(self, input):  # noqa: A002 - the tutorial's name
        self.input = input
        return np.dot(self.weights, self.input) + self.bias

    def backward(self, output_gradient, learning_rate):
        weights_gradient = np.dot(output_gradient, self.input.T) * self.bug
        input_gradient = np.dot(self.weights.T, output_gradient)
        self.weights -= learning_rate * weights_gradient
        self.bias -= learning_rate * output_gradient
        return input_gradient


class IndepDenseTwice(IndepDense):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: the weights' step twice too large


class DropoutOwnRng:
    """Inverted dropout with its own generator, written as a student does (the checker rewinds the generator)."""

    params, grads = {}, {}
    KWARGS = {"training": True}
    INPUT = (8, 6)

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)

    def forward(self, X, training=False):
        if not training:
            self.mask = np.ones_like(X)
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class DropoutBackwardRedraws(DropoutOwnRng):
    def backward(self, dY):
        mask = (self.rng.random(dY.shape) >= self.p) / (1 - self.p)  # BUG: a new mask, not forward's
        return dY * mask
