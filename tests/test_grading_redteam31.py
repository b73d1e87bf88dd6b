"""redteam31's findings on the grader and ``gradcheck check --isolation namespaces``.

H1a: under the staff policy ``gradcheck_no_forward_in_backward`` a backward returned a zero dX and wrote into a cached
ndarray subclass; the child's cache guard compared that array after backward (``a != c``), which ran the subclass's
``__array_ufunc__``, which filled dX with central differences of forward: 28/28. H1: ``grads`` a Mapping whose
``__getitem__`` took central differences of forward, read by the child after backward's count ended: 28/28. Now the
grader's own checks read a submission's arrays as base ``np.ndarray`` views (nothing of a subclass runs), and every
call of forward the backward request makes is counted: reading ``backward`` and the cache before it, the guard,
``grads`` and ``params`` after it.

D1, L1: see tests/test_sandbox_isolation.py (``/dev`` read-only, no devpts).
"""


import numpy as np
import pytest

from gradcheck import _adapters
from gradcheck.sandbox import SandboxError
from tests.test_grading_keys_s35 import shown
from tests.test_grading_policy import INIT, SOLUTION, _sandbox, graded

#: redteam31's cases/fd_guard_dx, shortened: dX filled by a cached subclass's __array_ufunc__ (run by the guard's
#: comparison), dW and db central differences of forward taken when ``grads`` (a Mapping) is read
FD_GUARD = '''from collections.abc import Mapping

import numpy as np

H = 1e-5


def _central(lay, arr, X):
    g, flat = np.zeros(arr.shape), arr.reshape(-1)
    for k in range(arr.size):
        old = flat[k]
        flat[k] = old + H
        up = lay.forward(X)
        flat[k] = old - H
        down = lay.forward(X)
        flat[k] = old
        g.reshape(-1)[k] = np.sum(lay._dY * (up - down)) / (2 * H)
    return g


class _LazyGrads(Mapping):
    def __init__(self, layer):
        self.layer = layer

    def __getitem__(self, name):
        lay = self.layer
        if lay._dY is None:
            return np.zeros_like(lay.params[name])
        return _central(lay, lay.params[name], lay._X)

    def __iter__(self):
        return iter(self.layer.params)

    def __len__(self):
        return len(self.layer.params)


class _Trigger(np.ndarray):
    owner = None

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        lay = _Trigger.owner
        if lay is not None and lay._pending:
            lay._pending = False
            X = lay._X.copy()
            lay._dX[...] = _central(lay, X, X)
        plain = [np.ndarray.view(x, np.ndarray) if isinstance(x, np.ndarray) else x for x in inputs]
        return getattr(ufunc, method)(*plain, **kw)


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self._X, self._dY, self._dX, self._pending = None, None, None, False
        self.cache = [np.zeros(1).view(_Trigger)]
        self.grads = _LazyGrads(self)

    def forward(self, X, training=False):
        self._X = np.array(X, dtype=float)
        self.cache = self.cache
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self._dY = np.array(dY, dtype=float)
        self._dX = np.zeros(self._X.shape)
        self._pending = True
        _Trigger.owner = self
        np.ndarray.view(self.cache[0], np.ndarray)[0] += 1.0
        return self._dX
'''
#: ``grads`` a property whose getter takes the differences
GRADS_PROPERTY = FD_GUARD.replace("        self.grads = _LazyGrads(self)\n", "") + '''
    @property
    def grads(self):
        return {k: _central(self, v, self._X) if self._dY is not None else np.zeros_like(v)
                for k, v in self.params.items()}
'''
#: ``backward`` a property whose getter (read before backward's own count) takes every difference, at the input forward
#: cached, and returns a function applying them to dY
BACKWARD_PROPERTY = FD_GUARD.replace("    def backward(self, dY):", "    def _unused(self, dY):") + '''
    @property
    def backward(self):
        if self._X is None:
            return self._unused
        X, W, b = self._X.copy(), self.params["W"], self.params["b"]
        jac = []
        for arr in (X, W, b):
            J, flat = np.zeros((X.shape[0] * W.shape[0], arr.size)), arr.reshape(-1)
            for k in range(arr.size):
                old = flat[k]
                flat[k] = old + H
                up = self.forward(X).reshape(-1)
                flat[k] = old - H
                J[:, k] = (up - self.forward(X).reshape(-1)) / (2 * H)
                flat[k] = old
            jac.append(J)
        self.grads = {}

        def apply(dY):
            g = [dY.reshape(-1) @ J for J in jac]
            self.grads = {"W": g[1].reshape(W.shape), "b": g[2].reshape(b.shape)}
            return g[0].reshape(X.shape)
        return apply
'''
#: 2 * (3*5 + 3) forwards for dW and db; 2 * 4*5 more for dX; the ``backward`` property's getter runs twice (the call
#: the grader makes, the entry the count reads)
WB, X_TOO = 2 * (15 + 3), 2 * (15 + 3 + 20)


@pytest.mark.parametrize("source, n", [(FD_GUARD, WB), (GRADS_PROPERTY, WB), (BACKWARD_PROPERTY, 2 * X_TOO)],
                         ids=["guard-and-mapping", "grads-property", "backward-property"])
def test_h1_forwards_anywhere_in_the_backward_request_fail_the_policy(tmp_path, source, n):
    """H1, H1a: the differences taken while the child reads ``grads`` (a Mapping, a property) or ``backward`` (a
    property) are counted as backward's: the policy fails, with the number of forwards."""
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.random.default_rng(1).standard_normal((4, 3))
    with _sandbox(tmp_path, source) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        layer.forward(X)
        with pytest.raises(SandboxError) as info:
            layer.backward(dY)
        text = " ".join(str(info.value).split())
        assert info.value.reason == "policy", text
        assert f"Linear.backward called Linear.forward {n} time(s)" in text, text
        assert layer.forward_calls_in_backward == n


def test_h1a_the_guard_runs_nothing_of_a_cached_array_subclass(tmp_path):
    """H1a: the child's cache guard compares base-class views: the subclass's ``__array_ufunc__`` never runs, so the dX
    backward returned stays the zeros it returned (it was filled with differences of forward), and the guard still
    names the element written."""
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    with _sandbox(tmp_path, FD_GUARD) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT)
        layer.forward(X)
        dX = layer.backward(dY)
        assert dX.shape == (4, 5) and not dX.any(), dX
        assert "self.cache[0], element [0]" in (layer.cache_rewritten or ""), layer.cache_rewritten


class _Hooked(np.ndarray):
    """An array subclass recording each of its hooks that runs."""
    ran: list = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        _Hooked.ran.append(f"ufunc {ufunc.__name__}")
        return getattr(ufunc, method)(*[np.ndarray.view(x, np.ndarray) if isinstance(x, np.ndarray) else x
                                        for x in inputs], **kw)

    def __array_function__(self, func, types, args, kwargs):
        _Hooked.ran.append(f"function {func.__name__}")
        return NotImplemented

    def __array_finalize__(self, obj):
        _Hooked.ran.append("finalize")


class _Cached:
    def __init__(self):
        self.params = {"W": np.ones(3).view(_Hooked)}
        self.grads = {"W": np.zeros(3)}
        self.cache = (np.arange(4.0).view(_Hooked), [np.ones((2, 2)).view(_Hooked)])

    def forward(self, X):
        return X

    def backward(self, dY):
        np.ndarray.view(self.cache[1][0], np.ndarray)[1, 0] = 7.0
        return dY


def test_h1a_the_cache_guard_copies_and_compares_base_views_in_process():
    """The adapters' ``cache_guard`` (the child's, and ``diagnose``'s in process) snapshots, compares and locates a
    write without running any hook of an array subclass, and still names the array and element written."""
    layer = _Cached()
    _Hooked.ran.clear()
    after = _adapters.cache_guard(layer)
    layer.backward(np.ones(2))
    said = after()
    assert _Hooked.ran == []
    assert said is not None and "modified its cache (self.cache[1][0], element [1, 0])" in said, said


@pytest.mark.parametrize("source, score", [(FD_GUARD, 2.0), (SOLUTION, 7.0)])
def test_h1_the_marker_fails_differences_taken_around_backward_in_the_graded_test(tmp_path, source, score):
    """Graded: redteam31's case had 7 of 7 points; now test_grading_policy's marked test fails on the policy (0 of 4)
    and the unmarked one finds dX all zeros (2 of 3: the guard no longer fills it); the solution keeps 7."""
    r, data = graded(tmp_path, source)
    assert r.score == pytest.approx(score), data
    if source is FD_GUARD:
        got = {t["name"]: (t["score"], t["output"]) for t in data["tests"]}
        assert got["test_linear_plain"][0] == 2.0 and "dX is all zeros" in got["test_linear_plain"][1], got
        assert got["test_linear_derived_by_hand"][0] == 0.0, got
        assert f"Linear.backward called Linear.forward {WB} time(s)" in shown(got["test_linear_derived_by_hand"][1]), got


#: ``params`` a dict subclass whose ``get`` (which the child's set_params calls before each forward) runs forward
#: twice, and a W of an ndarray subclass whose ``__setitem__`` would store 1 more than it is given
PARAMS_HOOKS = SOLUTION.replace("class Linear:", '''class _P(dict):
    owner = None

    def get(self, k, default=None):
        lay = _P.owner
        if lay is not None and getattr(lay, "X", None) is not None and k == "W":
            lay.forward(lay.X)
            lay.forward(lay.X)
        return dict.get(self, k, default)


class _OffByOne(np.ndarray):
    def __setitem__(self, key, value):
        np.ndarray.__setitem__(np.ndarray.view(self, np.ndarray), key, np.asarray(value) + 1.0)


class Linear:''', 1)


def _params_hooked(source):
    """PARAMS_HOOKS with its Linear's params made a _P holding W as an _OffByOne, after the solution's __init__."""
    return source + '''

_init = Linear.__init__


def __init__(self, *args, **kw):
    _init(self, *args, **kw)
    self.params = _P({k: np.array(v).view(_OffByOne) if k == "W" else v for k, v in self.params.items()})
    _P.owner = self


Linear.__init__ = __init__
'''


def test_h1_forwards_run_while_the_child_sets_the_parameters_are_counted(tmp_path):
    """A forward request sets the parent's parameters first (set_params, forward_many's edits): the forwards a params
    dict subclass runs there are counted (2 here) under the policy, and the parameters are written through the base
    view (the subclass's ``__setitem__``, which stores 1 more, never runs: forward's output is X @ W.T + b)."""
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, _params_hooked(PARAMS_HOOKS)) as sb:
        free = sb.load_layer("layers.py", "Linear", INIT)
        W, b = free.params["W"], free.params["b"]
        np.testing.assert_array_equal(free.forward(X), X @ W.T + b)
        strict = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        strict.forward(X)  # no X cached yet: get runs no forward
        with pytest.raises(SandboxError) as info:
            strict.forward(X)
        text = " ".join(str(info.value).split())
        assert info.value.reason == "policy" and "Linear.forward called Linear.forward again 2 time(s)" in text, text
        with pytest.raises(SandboxError, match=r"Linear.forward called Linear.forward again 2 time"):
            strict.forward_many([X, X + 1.0])


#: a ``__deepcopy__`` running forward twice (differences for the copy's backward to apply) before copying as usual
DEEPCOPY_HOOK = SOLUTION.replace("class Linear:", "import copy as _copy\n\n\nclass Linear:", 1) + '''

def __deepcopy__(self, memo):
    if getattr(self, "X", None) is not None:
        self.forward(self.X)
        self.forward(self.X)
    new = object.__new__(type(self))
    memo[id(self)] = new
    new.__dict__.update(_copy.deepcopy(self.__dict__, memo))
    return new


Linear.__deepcopy__ = __deepcopy__
'''


def test_h1_forwards_run_while_the_layer_is_copied_fail_the_policy(tmp_path):
    """The child's copy of a layer (``clone``: ``copy.deepcopy`` there, which the diagnoses use) runs the submission's
    ``__deepcopy__``: its forwards are counted under the policy; without the policy the copy is made."""
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, DEEPCOPY_HOOK) as sb:
        free = sb.load_layer("layers.py", "Linear", INIT)
        free.forward(X)
        np.testing.assert_array_equal(free.clone().forward(X), free.forward(X))
        strict = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        strict.clone()  # no X cached yet: no forward
        strict.forward(X)
        with pytest.raises(SandboxError) as info:
            strict.clone()
        text = " ".join(str(info.value).split())
        assert info.value.reason == "policy", text
        assert "Copying Linear (copy.deepcopy: its __deepcopy__, __reduce_ex__ or __setstate__) called Linear.forward " \
               "2 time(s)." in text, text
