"""Layers whose weights the discovery once could not see (session 9's tester: W5, W6, W12, W20), read through
:func:`gradcheck._adapters.adapt` as ``gradcheck check`` reads them: ``__slots__``, name-mangled ``self.__W``,
a PyTorch-like module accumulating into ``.grad`` with ``zero_grad()``, sub-layers in a deque or in the student's
own Sequential (``self._layers``)."""

from collections import deque

import numpy as np

INPUT = (5, 4)


class SlotsLinear:
    """Y = X @ W + b with its attributes in ``__slots__``."""

    ADAPT = True  # read as `check` reads it (tests.buggy_layers.load)

    __slots__ = ("W", "b", "dW", "db", "X")

    def __init__(self, n_in=4, n_out=3):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((n_in, n_out)), rng.standard_normal(n_out)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        return dY @ self.W.T


class SlotsLinearMeanBias(SlotsLinear):
    __slots__ = ()

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.mean(0)  # BUG: mean instead of sum
        return dY @ self.W.T


class MangledLinear:
    """Y = X @ W + b with name-mangled ``self.__W``/``self.__dW``."""

    ADAPT = True  # read as `check` reads it (tests.buggy_layers.load)

    def __init__(self, n_in=4, n_out=3, bug=1.0):
        rng = np.random.default_rng(0)
        self.__W, self.__b, self.__bug = rng.standard_normal((n_in, n_out)), rng.standard_normal(n_out), bug

    def forward(self, X):
        self.__X = X
        return X @ self.__W + self.__b

    def backward(self, dY):
        self.__dW, self.__db = self.__X.T @ dY * self.__bug, dY.sum(0)
        return dY @ self.__W.T


class MangledLinearTwice(MangledLinear):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: dW twice the gradient


class Parameter:
    def __init__(self, data):
        self.data, self.grad = data, np.zeros_like(data)


class TorchLinear:
    """PyTorch's contract: backward accumulates into ``.grad``, the loop calls ``zero_grad()``."""

    ADAPT = True  # read as `check` reads it (tests.buggy_layers.load)

    def __init__(self, n_in=4, n_out=3, bug=1.0):
        rng = np.random.default_rng(0)
        self.weight, self.bias = Parameter(rng.standard_normal((n_out, n_in))), Parameter(rng.standard_normal(n_out))
        self.bug = bug

    def zero_grad(self):
        for p in (self.weight, self.bias):
            p.grad[...] = 0

    def forward(self, x):
        self.x = x
        return x @ self.weight.data.T + self.bias.data

    def backward(self, g):
        self.weight.grad += g.T @ self.x * self.bug
        self.bias.grad += g.sum(0)
        return g @ self.weight.data


class TorchLinearTwice(TorchLinear):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: weight.grad twice the gradient


class Lin:
    def __init__(self, i, o, bug=1.0):
        self.W, self.b, self.bug = np.random.default_rng(i * o).standard_normal((i, o)), np.zeros(o), bug

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY * self.bug, dY.sum(0)
        return dY @ self.W.T


class Sequential:
    """A student's own container: its layers in a private list."""

    def __init__(self, *layers):
        self._layers = list(layers)

    def __iter__(self):
        return iter(self._layers)

    def __reversed__(self):
        return reversed(self._layers)


class DequeMLP:
    """Two layers in a deque."""

    ADAPT = True  # read as `check` reads it (tests.buggy_layers.load)

    def __init__(self, bug=1.0):
        self.layers = deque([Lin(4, 6), Lin(6, 3, bug=bug)])

    def forward(self, X):
        for layer in self.layers:
            X = layer.forward(X)
        return X

    def backward(self, dY):
        for layer in reversed(self.layers):
            dY = layer.backward(dY)
        return dY


class DequeMLPTwice(DequeMLP):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: the second layer's dW twice the gradient


class SeqMLP(DequeMLP):
    def __init__(self, bug=1.0):
        self.layers = Sequential(Lin(4, 6), Lin(6, 3, bug=bug))


class SeqMLPTwice(SeqMLP):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: the second layer's dW twice the gradient


class _Two(DequeMLP):
    """Two layers held as ``_hold(a, b)`` makes them; forward and backward through ``_ls()`` in order."""

    def __init__(self, bug=1.0):
        self.order = (Lin(4, 6), Lin(6, 3, bug=bug))
        self.held = self._hold(*self.order)
        del self.order  # reachable only through what _hold made

    def _ls(self):
        return list(self.held)

    def forward(self, X):
        for layer in self._ls():
            X = layer.forward(X)
        return X

    def backward(self, dY):
        for layer in reversed(self._ls()):
            dY = layer.backward(dY)
        return dY


class ObjArrayMLP(_Two):
    """Issue 10 (X4): sub-layers in a numpy object array (their weights once "no parameters": a x2 bug passed)."""

    @staticmethod
    def _hold(a, b):
        out = np.empty(2, dtype=object)
        out[0], out[1] = a, b
        return out


class ObjArrayMLPTwice(ObjArrayMLP):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: the second layer's dW twice the gradient


class SetMLP(_Two):
    """X4: sub-layers in a set, put in order by their input width."""

    @staticmethod
    def _hold(a, b):
        return {a, b}

    def _ls(self):
        return sorted(self.held, key=lambda layer: layer.W.shape[0])


class SetMLPTwice(SetMLP):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: the second layer's dW twice the gradient


class ChainMapMLP(_Two):
    """X4: sub-layers in a collections.ChainMap (also UserDict, UserList: one walk of every mapping)."""

    @staticmethod
    def _hold(a, b):
        from collections import ChainMap
        return ChainMap({"a": a}, {"b": b})

    def _ls(self):
        return [self.held["a"], self.held["b"]]


class ChainMapMLPTwice(ChainMapMLP):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: the second layer's dW twice the gradient


class ClosureMLP(_Two):
    """X4: sub-layers reachable only through closures (a bound method, functools.partial and a lambda)."""

    def __init__(self, bug=1.0):
        import functools
        a, b = Lin(4, 6), Lin(6, 3, bug=bug)
        self.first = a.forward  # a bound method: a is its __self__
        self.second = functools.partial(Lin.forward, b)
        self.back = lambda dY: a.backward(b.backward(dY))  # a closure over both

    def forward(self, X):
        return self.second(self.first(X))

    def backward(self, dY):
        return self.back(dY)


class ClosureMLPTwice(ClosureMLP):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: the second layer's dW twice the gradient


class NestedDeep(_Two):
    """X16: the layers 60 lists deep (an internal KeyError before: their names were cut at 120 characters)."""

    @staticmethod
    def _hold(a, b):
        out = [a, b]
        for _ in range(60):
            out = [out]
        return out

    def _ls(self):
        o = self.held
        while len(o) == 1:
            o = o[0]
        return o


class NestedDeepTwice(NestedDeep):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: the second layer's dW twice the gradient


# tester10 (issue 10): where students keep parameters and gradients


class Affine2:
    """Deep Learning from Scratch 2's Affine: params and grads lists, gradients written in place."""

    def __init__(self, W, b, rebind=False):
        self.params, self.grads, self.rebind = [W, b], [np.zeros_like(W), np.zeros_like(b)], rebind

    def forward(self, x):
        W, b = self.params
        self.x = x
        return x @ W + b

    def backward(self, dout):
        W, _ = self.params
        if self.rebind:
            self.grads = [self.x.T @ dout, dout.sum(0)]  # BUG: a new list; the model's grads keep the zeros
        else:
            self.grads[0][...] = self.x.T @ dout
            self.grads[1][...] = dout.sum(0)
        return dout @ W.T


class DLfS2Net:
    """The book's model: its params/grads lists collect its layers' (one array listed twice, T1/T2); the book
    names them self.layers (tests/test_tester10_storage.py), here blocks: the in-process diagnosis would check
    each of self.layers alone as a manualprop layer."""

    ADAPT = True

    def __init__(self, rebind=False):
        rng = np.random.default_rng(0)
        self.blocks = [Affine2(rng.standard_normal((4, 6)), np.zeros(6), rebind),
                       Affine2(rng.standard_normal((6, 3)), np.zeros(3), rebind)]
        self.params, self.grads = [], []
        for layer in self.blocks:
            self.params += layer.params
            self.grads += layer.grads

    def forward(self, x):
        for layer in self.blocks:
            x = layer.forward(x)
        return x

    def backward(self, dout):
        for layer in reversed(self.blocks):
            dout = layer.backward(dout)
        return dout


class DLfS2NetRebind(DLfS2Net):
    def __init__(self):
        super().__init__(rebind=True)  # BUG: model.grads never receive a gradient (training never moves)


class GradsObjLinear(SlotsLinear):
    """Gradients stored on a plain object: self.grads.W (T4)."""

    __slots__ = ("grads", "bug")

    def __init__(self, bug=1.0):
        super().__init__()
        from types import SimpleNamespace
        self.grads, self.bug = SimpleNamespace(), bug

    def backward(self, dY):
        self.grads.W, self.grads.b = self.bug * self.X.T @ dY, dY.sum(0)
        return dY @ self.W.T


class GradsObjLinearTwice(GradsObjLinear):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: dW twice the gradient


class FlatLinear:
    """W and b views of one flat vector theta, stepped with dtheta; dW, db kept too (T6)."""

    ADAPT = True

    def __init__(self, forget_b=False):
        self.theta = np.random.default_rng(0).standard_normal(4 * 3 + 3) * 0.3
        self.W, self.b = self.theta[:12].reshape(4, 3), self.theta[12:]
        self.dtheta, self.forget_b = np.zeros_like(self.theta), forget_b

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        self.dtheta[:12] = self.dW.ravel()
        if not self.forget_b:
            self.dtheta[12:] = self.db
        return dY @ self.W.T


class FlatLinearForgetsB(FlatLinear):
    def __init__(self):
        super().__init__(forget_b=True)  # BUG: the b segment of dtheta (what the optimizer steps) stays 0


# session 12 (store12): more places students keep weights and gradients


class ValueTensor:
    """A student's tensor class: its array in ``.value``, its gradient in ``.gradient`` (Y25)."""

    def __init__(self, value):
        self.value, self.gradient = value, np.zeros_like(value)


class ValueLinear:
    """Y = X @ W.value + b.value, backward writing W.gradient and b.gradient (Y25: once "without gradients", PASS)."""

    ADAPT = True

    def __init__(self, bug=1.0):
        rng = np.random.default_rng(0)
        self.W, self.b = ValueTensor(rng.standard_normal((4, 3))), ValueTensor(rng.standard_normal(3))
        self.bug = bug

    def forward(self, X):
        self.X = X
        return X @ self.W.value + self.b.value

    def backward(self, dY):
        self.W.gradient = self.bug * self.X.T @ dY
        self.b.gradient = dY.sum(0)
        return dY @ self.W.value.T


class ValueLinearTwice(ValueLinear):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: W.gradient twice the gradient


class BiasLinear:
    """Y = X @ W + b, attribute style."""

    ADAPT = True

    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)), rng.standard_normal(3)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        return dY @ self.W.T


class BiasLinearIgnoresB(BiasLinear):
    """NoBias (wrong PASS before): b was not read as a weight, so the db backward writes was never checked."""

    def forward(self, X):
        self.X = X
        return X @ self.W  # BUG: the bias is never added


class MatMul2:
    """DLfS-2's MatMul: params and grads lists, the gradient written in place."""

    def __init__(self, W, bug=1.0):
        self.params, self.grads, self.bug = [W], [np.zeros_like(W)], bug

    def forward(self, x):
        self.x = x
        return x @ self.params[0]

    def backward(self, dout):
        self.grads[0][...] = self.bug * self.x.T @ dout
        return dout @ self.params[0].T


class DLfS2Tied:
    """DLfS-2's weight tying through a transpose (W_out = W_in.T), both listed in the model's params: the book's
    remove_duplicate sums the gradients, g_in + g_out.T (Y12: once FAILed, the transposed one added twice)."""

    ADAPT = True

    def __init__(self, bug=1.0):
        W_in = np.random.default_rng(0).standard_normal((4, 3))
        self.blocks = [MatMul2(W_in, bug), MatMul2(W_in.T, bug)]
        self.params, self.grads = [], []
        for layer in self.blocks:
            self.params += layer.params
            self.grads += layer.grads

    def forward(self, x):
        for layer in self.blocks:
            x = layer.forward(x)
        return x

    def backward(self, dout):
        for layer in reversed(self.blocks):
            dout = layer.backward(dout)
        return dout


class DLfS2TiedSign(DLfS2Tied):
    def __init__(self):
        super().__init__(bug=-1.0)  # BUG: each layer's gradient of the wrong sign


class DLfS2NetCopies(DLfS2Net):
    """Y23 (wrong PASS before): the model's params list holds copies of its layers' arrays, so its optimizer steps
    arrays forward never reads. Not in the table: gradcheck refuses it (a protocol error, exit 3) naming each
    params[i] and the layer array it copies (tests/test_store12_storage.py)."""

    def __init__(self):
        super().__init__()
        self.params = [p.copy() for layer in self.blocks for p in layer.params]  # BUG: copies, not the arrays


class NnfsDenseKeepsBoth(BiasLinear):
    """Returns dX and stores it as self.dinputs too (NNFS's name): both read by the next layer or the optimizer."""

    def backward(self, dY, bug=1.0):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        self.dinputs = bug * dY @ self.W.T
        return dY @ self.W.T


class NnfsDenseStoredDinputsTwice(NnfsDenseKeepsBoth):
    """Y6 (wrong PASS before): the returned dX right, the stored self.dinputs (what NNFS's next layer reads) x2."""

    def backward(self, dY):
        return super().backward(dY, bug=2.0)  # BUG: self.dinputs twice the gradient


class GridSum:
    """Y = sum over a 2 x 2 grid of X @ W[i, j], the weights in a 2-D numpy object array (Y16: once named by a flat
    index, W[2] for W[1, 0])."""

    ADAPT = True

    def __init__(self, bug=1.0):
        rng = np.random.default_rng(0)
        self.W, self.bug = np.empty((2, 2), dtype=object), bug
        for i, j in np.ndindex(2, 2):
            self.W[i, j] = rng.standard_normal((4, 3))

    def forward(self, X):
        self.X = X
        return sum(X @ self.W[i, j] for i, j in np.ndindex(2, 2))

    def backward(self, dY):
        self.dW = np.empty((2, 2), dtype=object)
        for i, j in np.ndindex(2, 2):
            self.dW[i, j] = self.X.T @ dY * (self.bug if (i, j) == (1, 0) else 1.0)
        return sum(dY @ self.W[i, j].T for i, j in np.ndindex(2, 2))


class GridSumTwice(GridSum):
    def __init__(self):
        super().__init__(bug=2.0)  # BUG: dW[1, 0] twice the gradient


class BufferedLinear:
    """Y = (X @ W + b) * _win + _bg + _wts * _bins, with a scratch buf forward writes: buffers beside W and b, the
    constants marked private (Z15; session 13: a constant read by forward under a weight's name is a weight whose
    gradient backward forgot)."""

    ADAPT = True

    def __init__(self, bias_mean=False):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((4, 3)), rng.standard_normal(3)
        self.buf, self._win, self._bins = np.zeros((5, 3)), np.hanning(5)[1:4], np.linspace(0.0, 1.0, 3)
        self._bg, self._wts, self.bias_mean = rng.standard_normal(3), rng.standard_normal(3), bias_mean

    def forward(self, X):
        self.X = X
        self.buf = X @ self.W + self.b
        return self.buf * self._win + self._bg + self._wts * self._bins

    def backward(self, dY):
        g = dY * self._win
        self.dW, self.db = self.X.T @ g, g.mean(0) if self.bias_mean else g.sum(0)
        return g @ self.W.T


class BufferedLinearMeanBias(BufferedLinear):
    def __init__(self):
        super().__init__(bias_mean=True)  # BUG: db the mean over the batch


class HiddenBias:
    """h = tanh(X @ W + b + bh), through a scratch buffer forward writes (``buf``): a hidden bias with its gradient
    beside W and b (session 13, Z15)."""

    ADAPT = True
    INPUT = (5, 4)

    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b, self.bh = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal(3)
        self.buf = np.zeros((5, 3))

    def forward(self, X):
        self.X = X
        self.buf = X @ self.W + self.b
        self.h = np.tanh(self.buf + self.bh)
        return self.h

    def backward(self, dY):
        g = dY * (1 - self.h ** 2)
        self.dW, self.db, self.dbh = self.X.T @ g, g.sum(0), g.sum(0)
        return g @ self.W.T


class HiddenBiasNoGrad(HiddenBias):
    def backward(self, dY):
        g = dY * (1 - self.h ** 2)
        self.dW, self.db = self.X.T @ g, g.sum(0)  # BUG: dbh forgotten (bh, a short name, was read as a buffer)
        return g @ self.W.T


class OutputLayer:
    """o = h @ V + c, Goodfellow's names for an RNN's output layer (tester15 H3): a short bias name ``c``."""

    ADAPT = True
    INPUT = (6, 5)

    def __init__(self):
        rng = np.random.default_rng(0)
        self.V, self.c = rng.standard_normal((5, 3)), rng.standard_normal(3)

    def forward(self, h):
        self.h = h
        return h @ self.V + self.c

    def backward(self, do):
        self.dV, self.dc = self.h.T @ do, do.sum(0)
        return do @ self.V.T


class OutputLayerNoDc(OutputLayer):
    def backward(self, do):
        self.dV = self.h.T @ do  # BUG: dc forgotten (c, not on a list of weight-like names, once PASSed)
        return do @ self.V.T
