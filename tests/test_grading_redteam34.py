"""redteam34's findings on the grader's staff policy ``gradcheck_no_forward_in_backward``: code of the submission's
that the sandbox child ran after a counted window had sealed, where no profiler counted it.

M1: forward's result was an array subclass whose class name was a ``str`` subclass; the reply's meta held the name
(``describe``'s ``"type"``) and was freed after the reply's window: the name's ``__del__`` took central differences of
forward there. M2: a helper's code object held an extra constant (``code.replace``) whose ``__hash__`` ran when the
count looked the code's key up (``functools.lru_cache`` hashes the code, and so its constants) after its profiler was
removed; M2b: the same through a ``str`` subclass as the code's ``co_qualname``. M3: ``weakref.finalize`` on the
grader's own input array, whose last reference the request loop dropped after the next receive window. Every gradient
was a central difference of forward (27.33, 27.33, 27.33, 20 of 28). Now the child drops the request and the reply
inside their windows, puts its counters' profilers aside until the next counted step, and reads a code object's keys
as plain data, by id.

B1: a Linear keeping ``object.__new__(Linear)`` spares re-entered its forward on one per perturbation: each spare
counted as a nested container (``held_forwards``). Now an object of the layer's own class counts only when it holds a
layer of another forward (a ``Sequential`` in a ``Sequential``).
"""

import numpy as np
import pytest

from gradcheck import _sandbox_child as child
from tests.test_grading_policy import INIT, SOLUTION
from tests.test_grading_policy_s31 import NESTED, forward_refused
from tests.test_grading_redteam33 import _LINEAR, _PRELUDE, _forward_then_backward_after_a_wait

#: the differences run only where no profiler is installed (what every case below looks for)
_UNCOUNTED = '''

def _uncounted(*args):
    if sys.getprofile() is None:
        _run_jobs()
'''

#: M1 (redteam34's cases/fd_metadel, shortened): the name of the class of forward's result, renamed when the child
#: drops the result, so that the reply's meta holds the old name's last reference
META_NAME = _PRELUDE + _UNCOUNTED + '''

class _Name(str):
    __del__ = _uncounted


class _Out(np.ndarray):
    def __del__(self):
        type(self).__name__ = _Name("_Out")


_Out.__name__ = _Name("_Out")
''' + _LINEAR.replace("ARM", 'return (self.X @ self.params["W"].T + self.params["b"]).view(_Out)')

#: M2 (cases/fd_hash): forward calls a helper whose code holds one more constant, an object whose hash differentiates
_TICK = '''

def _tick():
    return None
'''
CONST_HASH = _PRELUDE + _UNCOUNTED + '''

class _Trap:
    def __hash__(self):
        _uncounted()
        return 12345

    def __eq__(self, other):
        return self is other

    def __repr__(self):
        _uncounted()
        return "_Trap()"
''' + _TICK + '''
_tick.__code__ = _tick.__code__.replace(co_consts=_tick.__code__.co_consts + (_Trap(),))
''' + _LINEAR.replace("ARM", "_tick()")

#: M2b (cases/fd_hash2): the helper's qualified name a str subclass whose hash differentiates
QUALNAME_HASH = _PRELUDE + _UNCOUNTED + '''

class _Q(str):
    def __hash__(self):
        _uncounted()
        return str.__hash__(self)

    __eq__ = str.__eq__
''' + _TICK + '''
_tick.__code__ = _tick.__code__.replace(co_qualname=_Q("_tick"))
''' + _LINEAR.replace("ARM", "_tick()")

#: M3 (cases/fd_weakref): a finalizer on the grader's own input array (a view of the memory it shares)
INPUT_WEAKREF = _PRELUDE + _UNCOUNTED + '''
import weakref
''' + _LINEAR.replace("ARM", "weakref.finalize(X, _uncounted)")


@pytest.mark.parametrize("source", [META_NAME, CONST_HASH, QUALNAME_HASH, INPUT_WEAKREF],
                         ids=["m1-meta-name-del", "m2-const-hash", "m2b-qualname-hash", "m3-input-weakref"])
def test_no_submitted_code_runs_after_a_window_is_sealed(tmp_path, source):
    """M1-M3: each took the 2N forwards of the Jacobian where ``sys.getprofile()`` was None, after a counted window
    had sealed (backward then applied it and answered). Now nothing of the submission's is freed or hashed there: the
    Jacobian is never made (or, made, counted)."""
    assert source.count("_uncounted") >= 2
    exc = _forward_then_backward_after_a_wait(tmp_path, source)
    assert exc is not None, "backward applied differences taken where nothing counted"
    text = " ".join(str(exc).split())
    assert exc.reason == "policy" or "no Jacobian stored" in text, text


def test_without_the_policy_the_same_submissions_answer():
    """The cases are honest about their numbers: without the policy (no profiler installed at all) the differences
    run where they are meant to, so what the policy stops is where they run, not a broken submission (M3's kind,
    the weakref, checked in process: the finalizer runs when the input is dropped)."""
    ns = {}
    exec(INPUT_WEAKREF, ns)  # noqa: S102 - the test's own source
    rng = np.random.default_rng(0)
    X, dY = rng.standard_normal((4, 5)), rng.standard_normal((4, 3))
    lay = ns["Linear"](**INIT, rng=0)
    W = lay.params["W"].copy()
    lay.forward(X.copy())  # (the copy is dropped here: its finalizer differentiates)
    np.testing.assert_allclose(lay.backward(dY), dY @ W, rtol=1e-6, atol=1e-6)


def _hostile_code():
    """A code object with a constant and a qualified name whose ``__hash__``, ``__eq__`` and ``__repr__`` record
    their calls, and the list they record in."""
    calls = []

    class Trap:
        def __hash__(self):
            calls.append("hash")
            return 1

        def __eq__(self, other):
            calls.append("eq")
            return self is other

        def __repr__(self):
            calls.append("repr")
            return "Trap()"

    class Q(str):
        def __hash__(self):
            calls.append("qualname hash")
            return str.__hash__(self)

        def __eq__(self, other):
            calls.append("qualname eq")
            return str.__eq__(self, other)

    def helper(x):
        return x * 3

    code = helper.__code__.replace(co_consts=helper.__code__.co_consts + (Trap(), (Trap(),)), co_qualname=Q(helper.__code__.co_qualname))
    return code, helper.__code__, calls


def test_a_codes_keys_are_read_without_running_its_constants():
    """M2, M2b at the keys themselves: :func:`code_key` (an ``lru_cache``: ``hash(code)`` hashes the constants) and
    the lookups of :func:`forward_keys` ran the constant's ``__hash__``/``__repr__`` and the name's ``__hash__``. Now
    none runs, and the keys still tell a copy of forward's code from forward (its extra constant) and find it by
    its place (the same qualified name and line) and its text."""
    code, plain, calls = _hostile_code()
    key = child.forward_keys([plain])
    assert child.code_key(code) != child.code_key(plain)
    assert key(code) == child.code_key(plain)  # a copy of forward's code is forward's
    assert child._where(code) == child._where(plain) and type(child._where(code)[1]) is str
    assert child._text_key(code) == child._text_key(plain)
    assert {child.code_key(code): 1}.get(child.code_key(code)) == 1
    assert calls == []


def test_a_codes_key_is_kept_per_object_not_per_hash():
    """Two equal code objects (the same text compiled twice) are two entries: the cache is looked up by identity."""
    a, b = (compile("x = (1, 2.5, 'a', b'b', None, ...)", "<k>", "exec") for _ in range(2))
    assert a is not b and a == b
    assert child.code_key(a) == child.code_key(b) and child.code_key(a) is not child.code_key(b)
    assert child.code_key(a) is child.code_key(a)


#: B1 (cases/fd_spares, its Linear): every gradient a central difference of forward, taken inside forward by
#: re-entering forward's code on bare instances of Linear the constructor kept
SPARES = SOLUTION.split("class Linear", 1)[0] + '''

class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self.grads = {}
        self._spares = [object.__new__(Linear) for _ in range(2 * (in_features + 1) * out_features + 2)]

    def forward(self, X, training=False):
        X = np.asarray(X, dtype=float)
        out = X @ self.params["W"].T + self.params["b"]
        if "_spares" not in self.__dict__:
            return out
        self.X, sp, (n, d), h = X.copy(), iter(self._spares), X.shape, 1e-6
        E = np.eye(n * d).reshape(n * d, n, d) * h
        s = next(sp)
        s.params = self.params
        up = Linear.forward(s, (X + E).reshape(-1, d)).reshape(n * d, -1)
        down = Linear.forward(s, (X - E).reshape(-1, d)).reshape(n * d, -1)
        del s.params
        self.jac = {"X": ((up - down) / (2 * h)).T}
        for name, p in self.params.items():
            cols = []
            for i in range(p.size):
                for sign in (1, -1):
                    q = {m: v.copy() for m, v in self.params.items()}
                    q[name].reshape(-1)[i] += sign * h
                    s = next(sp)
                    s.params = q
                    cols.append(Linear.forward(s, X).reshape(-1))
                    del s.params
            self.jac[name] = np.stack([(cols[2 * i] - cols[2 * i + 1]) / (2 * h) for i in range(p.size)], axis=1)
        return out

    def backward(self, dY):
        g = np.asarray(dY, dtype=float).reshape(-1)
        for n, p in self.params.items():
            self.grads[n] = (self.jac[n].T @ g).reshape(p.shape)
        return (self.jac["X"].T @ g).reshape(self.X.shape)
'''


def test_b1_spares_of_its_own_class_are_no_container():
    """B1 at the allowance: each bare spare counted as a nested container of Linear's (41 objects for 5 -> 3); now
    the layer alone. A ``Sequential`` of ``Sequential``s keeps its four, a template ``Module.forward`` shared by a
    model and its (other) layer classes its four."""
    ns, nested = {}, {}
    exec(SPARES, ns)  # noqa: S102 - the test's own sources
    exec(NESTED, nested)  # noqa: S102
    assert list(child.held_forwards(ns["Linear"](**INIT)).values()) == [1]
    deep = child.held_forwards(nested["Deep"](**INIT))
    assert deep[child.code_key(nested["Sequential"].forward.__code__)] == 4

    class Module:
        def forward(self, x):
            return self.step(x)

    class Dense(Module):
        def step(self, x):
            return x

    class Model(Module):
        def __init__(self):
            self.layers = [Dense(), Dense(), Dense()]

        def step(self, x):
            for layer in self.layers:
                x = layer.forward(x)
            return x

    assert child.held_forwards(Model()) == {child.code_key(Module.forward.__code__): 4}


def test_b1_forward_re_entered_on_spares_fails_the_policy(tmp_path):
    """B1: forward's re-entries on its spares were allowed, and backward applied their Jacobian (27.33/28); now they
    are counted re-entries of forward, as any other object made by the submission."""
    exc, text = forward_refused(tmp_path, SPARES, "Linear")
    assert exc.reason == "policy" and "Linear.forward called Linear.forward again" in text, text


def test_a_huge_int_constant_does_not_stop_the_count():
    """A constant ``code.replace`` adds may be an int of 6000 digits, whose decimal ``repr`` raises (Python's limit of
    4300 digits): the keys (``repr`` of each constant before, ``dis``'s ``repr`` of the loaded ones) raised there, in
    the count. Now ints are keyed in hex, and two such codes still differ by their constant."""
    def f():
        return 7

    big, bigger = (f.__code__.replace(co_consts=(None, n)) for n in (10 ** 6000, 10 ** 6000 + 1))
    assert child.code_key(big) != child.code_key(bigger)
    assert child._text_key(big) != child._text_key(bigger)
