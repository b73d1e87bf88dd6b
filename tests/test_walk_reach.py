"""Issue 10 (verify9's X4, X16) and the attribute switch put back: what the one walk of a student's objects
(gradcheck._adapters.walk) reaches. Sub-layers held only in a numpy object array, a set, a ChainMap, a UserList or
UserDict, a mappingproxy, as dict keys, or reachable only through a bound method, functools.partial or a closure
were "no parameters" and a planted dW x2 PASSed; layers 60 lists deep stopped the check with an internal KeyError
(their names, cut at 120 characters between gradcheck's processes)."""

import collections
import functools
import types

import numpy as np
import oracles
import pytest
from test_cli import both, run, student

from gradcheck import _adapters as AD
from tests.buggy_layers.styles import Lin

R = np.random.default_rng(0)


class Net:
    """Two Lin, held by ``hold(a, b)``; ``order(held)`` gives them back in order."""

    def __init__(self, hold, order, bug=1.0):
        self.held, self._order = hold(Lin(4, 6), Lin(6, 3, bug=bug)), order

    def forward(self, X):
        for layer in self._order(self.held):
            X = layer.forward(X)
        return X

    def backward(self, dY):
        for layer in reversed(self._order(self.held)):
            dY = layer.backward(dY)
        return dY


def _objects(a, b):
    out = np.empty(2, dtype=object)
    out[0], out[1] = a, b
    return out


def _by_width(s):
    return sorted(s, key=lambda layer: layer.W.shape[0])


def _closures(a, b):
    return [a.forward, functools.partial(Lin.forward, b), lambda: (a, b)]


def _from_closures(fs):
    return [fs[0].__self__, fs[1].args[0]]


HOLDERS = {  # how the layers are held, how they are got back, the dotted name of the second one's W
    "object array": (_objects, list, "held.1.W"),
    "set": (lambda a, b: {a, b}, _by_width, "held.1.W"),
    "frozenset": (lambda a, b: frozenset({a, b}), _by_width, "held.1.W"),
    "ChainMap": (lambda a, b: collections.ChainMap({"a": a}, {"b": b}), lambda m: [m["a"], m["b"]], "held.b.W"),
    "UserList": (lambda a, b: collections.UserList([a, b]), list, "held.1.W"),
    "UserDict": (lambda a, b: collections.UserDict(a=a, b=b), lambda m: [m["a"], m["b"]], "held.b.W"),
    "mappingproxy": (lambda a, b: types.MappingProxyType({"a": a, "b": b}), lambda m: [m["a"], m["b"]], "held.b.W"),
    "dict keys": (lambda a, b: {a: 1, b: 2}, list, "held.keys.1.W"),
    "bound method, partial, closure": (_closures, _from_closures, "held.1.args.0.W"),
}


@pytest.mark.parametrize("how", sorted(HOLDERS))
def test_sublayers_in_any_container_or_closure_are_checked(how):
    hold, order, name = HOLDERS[how]
    X, G = R.standard_normal((5, 4)), R.standard_normal((5, 3))
    for bug in (1.0, 2.0):
        obj = Net(hold, order, bug)
        layer, info = AD.adapt(obj, [X])
        assert name in layer.pairs and "no parameters" not in info["text"], info["text"]
        layer.forward(X)
        layer.backward(G)
        second = order(obj.held)[1]
        num = oracles.central_in_place(lambda o=obj: np.sum(o.forward(X) * G), second.W, h=1e-6)
        close = np.allclose(layer.grads[name], num, rtol=1e-6, atol=1e-8)
        assert close is (bug == 1.0), (how, bug)  # the planted x2 is read, so it would FAIL


def test_an_object_held_directly_is_named_where_it_is_held_not_through_a_method():
    class Both(Net):
        def __init__(self):
            super().__init__(lambda a, b: [a, b], list)
            self.f = self.held[1].forward  # declared after: the walk still names it held.1
    assert [n for n, _ in AD.sublayers(Both())] == ["held.0", "held.1"]


def test_weights_in_an_object_array_or_chainmap_pair_with_their_gradients():
    class ObjW:
        def __init__(self):
            self.Ws = _objects(R.standard_normal((4, 5)), R.standard_normal((5, 3)))

        def forward(self, X):
            self.X, self.H = X, X @ self.Ws[0]
            return self.H @ self.Ws[1]

        def backward(self, dY):
            self.dWs = _objects(None, 2 * self.H.T @ dY)  # BUG x2
            dH = dY @ self.Ws[1].T
            self.dWs[0] = self.X.T @ dH
            return dH @ self.Ws[0].T
    X, G = R.standard_normal((6, 4)), R.standard_normal((6, 3))
    obj = ObjW()
    layer, _ = AD.adapt(obj, [X])
    assert layer.pairs == {"Ws[0]": "dWs[0]", "Ws[1]": "dWs[1]"}, layer.pairs
    layer.forward(X)
    layer.backward(G)
    num = oracles.central_in_place(lambda: np.sum(obj.forward(X) * G), obj.Ws[1], h=1e-6)
    np.testing.assert_allclose(layer.grads["Ws[1]"], 2 * num, rtol=1e-6)


def test_long_names_are_shortened_and_still_read():
    assert AD._shortened("root" + ".0" * 60 + ".W") == "root.0*60.W"
    assert AD._shortened("a.0.0.b") == "a.0.0.b"
    long = AD._shortened("x" * 300)
    assert len(long) <= AD.NAME_LIMIT and "..." in long
    obj = Net(lambda a, b: functools.reduce(lambda o, _: [o], range(60), [a, b]),
              lambda o: functools.reduce(lambda o, _: o[0], range(60), o))
    X = R.standard_normal((5, 4))
    layer, _ = AD.adapt(obj, [X])
    assert set(layer.params) == {"held.0*61.W", "held.0*61.b", "held.0*60.1.W", "held.0*60.1.b"}, layer.params
    assert all(len(k) <= AD.NAME_LIMIT for k in layer.params)
    layer.forward(X)
    layer.backward(R.standard_normal((5, 3)))
    assert layer.grads["held.0*60.1.W"].shape == (6, 3)


NEST = """
import numpy as np

class Lin:
    def __init__(self):
        r = np.random.default_rng(0); self.W = r.standard_normal((4, 3)); self.b = r.standard_normal(3)
    def forward(self, X): self.X = X; return X @ self.W + self.b
    def backward(self, dY): self.dW = BUG * self.X.T @ dY; self.db = dY.sum(0); return dY @ self.W.T

class Nest:
    def __init__(self, depth=60):
        o = Lin()
        for _ in range(depth): o = [o]
        self.root = o
        self.LONG_NAME = Lin()  # an attribute name longer than 120 characters
    def _leaf(self):
        o = self.root
        while isinstance(o, list): o = o[0]
        return o
    def forward(self, X): return self._leaf().forward(X) + self.LONG_NAME.forward(X)
    def backward(self, dY): return self.LONG_NAME.backward(dY) + self._leaf().backward(dY)
"""


@pytest.mark.parametrize("bug", [1.0, 2.0])
def test_layers_sixty_lists_deep_are_checked_from_the_command_line(tmp_path, bug):
    """X16: exit 2, "gradcheck's sandbox process failed outside the checked code ... (KeyError: 'root.0.0...')"."""
    src = NEST.replace("BUG", repr(bug)).replace("LONG_NAME", "layer_" + "x" * 130)
    p = run("check", f"{student(tmp_path, src, f'nest{int(bug)}.py')}::Nest", "--input-shape", "6,4")
    out = both(p)
    assert "sandbox process failed" not in out and "KeyError" not in out, out
    assert "root.0*60 (Lin: root.0*60.W, root.0*60.b, attributes)" in out, out
    if bug == 1.0:
        assert p.returncode == 0 and "PASS: Nest" in out, out
    else:
        assert p.returncode == 1 and "FAIL: Nest: gradient mismatch in droot.0*60.W, dlayer_xxx" in out, out


SWITCH = """
import numpy as np

class Dropout:
    def __init__(self):
        self.training = START
    def train(self, mode=True):
        self.training = mode
        return self
    def eval(self):
        return self.train(False)
    def forward(self, X):
        self.mask = np.ones_like(X) * (2.0 if self.training else 1.0)
        return X * self.mask
    def backward(self, dY):
        assert self.training == self.was, "backward runs in another mode than its forward"
        return dY * self.mask
"""


@pytest.mark.parametrize("start", [False, True])
def test_a_check_leaves_the_attribute_switch_as_it_found_it(tmp_path, start):
    """After each forward and backward the checker ran (training, then eval), self.training was left in the last
    mode it used; each call now puts it back, and backward runs in the mode of its forward."""
    import importlib.util
    path = student(tmp_path, SWITCH.replace("START", repr(start)).replace(
        "        self.mask =", "        self.was = self.training\n        self.mask ="), f"sw{int(start)}.py")
    spec = importlib.util.spec_from_file_location(f"sw{int(start)}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    obj = mod.Dropout()
    layer, _ = AD.adapt(obj, [np.ones((4, 3))])
    for mode in (not start, start, not start):
        y = layer.forward(np.ones((4, 3)), training=mode)
        assert obj.training is start and y[0, 0] == (2.0 if mode else 1.0)
        layer.backward(np.ones((4, 3)))
        assert obj.training is start
