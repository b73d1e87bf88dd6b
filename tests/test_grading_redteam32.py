"""redteam32's findings on the grader's staff policy ``gradcheck_no_forward_in_backward``.

A3: forward returned an ndarray subclass whose ``__del__`` took central differences of forward at that call's input and
parameters; the child dropped forward's result after the forward request's count had ended, so the 2N calls of forward
were counted nowhere, and backward applied the stored Jacobian: 27.33/28. A1: after the load's counted probe the
child's reply ran the submission's code uncounted: ``state()`` called ``item()`` of an ``np.float64`` subclass
attribute, the method listing read a public property; either took the differences: 20/28. Now every request under the
policy is counted from its receipt to its reply sent (``Child.counted_request``): the calls of forward between its
counted steps are added to the reply's ``forward_calls`` (or, where no reply can say them, the next one's).

L1: the "run: `gradcheck check 'layers.py::NAME' ...`" recipe named the class's ``__name__`` (the submission's to
choose) in a one-backtick code span, which a backtick in it ended: now the NAME the test loaded, in a span no backtick
ends.
"""

import re

import numpy as np
import pytest

from gradcheck.grading.diagnosis import reproduce
from gradcheck.sandbox import SandboxError
from tests.test_grading_policy import INIT, SOLUTION, _sandbox, graded

#: the central differences of a Linear's forward at (X, W, b) for dX, dW, db, stored for backward to apply
JACOBIAN = '''
_JAC = {}
_BUSY = [False]


def _key(X, P):
    return X.tobytes() + P["W"].tobytes() + P["b"].tobytes()


def _differentiate(lay, X):
    X = np.array(X, dtype=float)
    k, jac, _BUSY[0] = _key(X, lay.params), {}, True
    try:
        for name, arr in (("X", X), ("W", lay.params["W"]), ("b", lay.params["b"])):
            flat, cols = arr.reshape(-1), []
            for i in range(flat.size):
                old = flat[i]
                flat[i] = old + 1e-6
                up = np.array(lay.forward(X))
                flat[i] = old - 1e-6
                down = np.array(lay.forward(X))
                flat[i] = old
                cols.append(((up - down) / 2e-6).reshape(-1))
            jac[name] = np.stack(cols, axis=1)
    finally:
        _BUSY[0] = False
    _JAC[k] = jac
'''

#: forward's result an ndarray subclass whose finalizer differentiates forward at that call's input (redteam32's
#: cases/fd_finalizer, shortened to a Linear); backward only applies the stored Jacobian
FINALIZER = SOLUTION.split("class Linear", 1)[0] + JACOBIAN + '''

class _Fin(np.ndarray):
    def __del__(self):
        job = self.__dict__.get("job")
        if job is not None and not _BUSY[0]:
            job()


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = np.array(X, dtype=float)
        out = self.X @ self.params["W"].T + self.params["b"]
        if _BUSY[0]:
            return out
        out = out.view(_Fin)
        X0 = self.X.copy()
        out.job = lambda: _differentiate(self, X0)
        return out

    def backward(self, dY):
        jac = _JAC[_key(self.X, self.params)]
        g = np.asarray(dY, dtype=float).reshape(-1)
        self.grads = {n: (g @ jac[n]).reshape(self.params[n].shape) for n in ("W", "b")}
        return (g @ jac["X"]).reshape(self.X.shape)
'''

#: the same differences taken in ``item()`` of an np.float64 subclass attribute (which the child's ``state()``
#: reads after the load's probe: redteam32's cases/fd_state_hook) or in a public property (which the method
#: listing reads: cases/fd_prop_hook), at the input the last forward had
_HOOKED = SOLUTION.split("class Linear", 1)[0] + JACOBIAN + '''

class _Hook(np.float64):
    owner = None

    def item(self, *a):
        if _Hook.owner is not None and not _BUSY[0]:
            _differentiate(*_Hook.owner)
        return float(self)


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self.grads = {}
        self.lr = _Hook(0.1)

    @property
    def ready(self):
        return _Hook.item(self.lr)

    def forward(self, X, training=False):
        self.X = np.array(X, dtype=float)
        _Hook.owner = (self, self.X.copy())  # (the probe restores the object's attributes after it)
        return self.X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        jac = _JAC[_key(self.X, self.params)]
        g = np.asarray(dY, dtype=float).reshape(-1)
        self.grads = {n: (g @ jac[n]).reshape(self.params[n].shape) for n in ("W", "b")}
        return (g @ jac["X"]).reshape(self.X.shape)
'''
STATE_HOOK = _HOOKED.replace('''    @property
    def ready(self):
        return _Hook.item(self.lr)

''', "")
PROPERTY_HOOK = _HOOKED.replace("self.lr = _Hook(0.1)", "self._lr = _Hook(0.1)").replace("_Hook.item(self.lr)",
                                                                                       "_Hook.item(self._lr)")
#: 2 forwards for each of X's 4*5, W's 3*5 and b's 3 elements
N = 2 * (20 + 15 + 3)


#: the finalizer's array in a reference cycle (itself in its ``__dict__``): freed by the cyclic collector, whenever
#: that runs
CYCLIC = FINALIZER.replace("        out.job = lambda: _differentiate(self, X0)\n",
                           "        out.job = lambda: _differentiate(self, X0)\n        out.me = out\n")


@pytest.mark.parametrize("source", [FINALIZER, CYCLIC], ids=["dropped", "cyclic-garbage"])
def test_a3_forwards_run_when_forwards_result_is_dropped_fail_the_policy(tmp_path, source):
    """A3: the finalizer's differences run when the child drops forward's result (or collects it as cyclic garbage:
    in the request's window, the automatic collector off), inside the request's count now: the forward request
    fails the policy, with the number of forwards (before: 0 counted, backward then passed)."""
    assert source.count("out.me = out") == (source is CYCLIC)
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, source) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        with pytest.raises(SandboxError) as info:
            layer.forward(X)
        text = " ".join(str(info.value).split())
        assert info.value.reason == "policy", text
        assert f"Linear.forward called Linear.forward again {N} time(s)" in text, text


def test_a3_without_the_policy_the_finalizer_runs_uncounted_and_forward_answers(tmp_path):
    """The count is the policy's alone: without it the same forward answers its plain output (nothing refused)."""
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, FINALIZER) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT)
        W, b = layer.params["W"], layer.params["b"]
        np.testing.assert_allclose(layer.forward(X), X @ W.T + b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("source", [STATE_HOOK, PROPERTY_HOOK], ids=["state-item", "method-listing-property"])
def test_a1_forwards_run_while_the_load_replies_fail_the_policy(tmp_path, source):
    """A1: the differences taken while the child reads the loaded object's state (an np.float64 subclass's ``item``)
    or lists its methods (a property), after the probe, are counted as the load's: the load fails the policy."""
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, source) as sb:
        with pytest.raises(SandboxError) as info:
            sb.load_layer("layers.py", "Linear", INIT, probe_inputs=[X], no_forward_in_backward=True)
        text = " ".join(str(info.value).split())
        assert info.value.reason == "policy", text
        said = re.search(r"called Linear\.forward (\d+) time\(s\) more than the grader did", text)
        assert said and int(said[1]) % N == 0 and int(said[1]) >= N, text  # (each read of the hook differentiates)


@pytest.mark.parametrize("source, score", [(FINALIZER, 3.0), (STATE_HOOK, 0.0), (PROPERTY_HOOK, 0.0),
                                           (SOLUTION, 7.0)], ids=["finalizer", "state-item", "property", "solution"])
def test_a1_a3_the_marked_test_fails_the_differences_and_keeps_the_solution(tmp_path, source, score):
    """Graded by test_grading_policy's tests: the marked test (4 points, whose load probes the test's input) gave
    these cases its points; now it fails them with the policy's message. The unmarked one (3 points) cannot tell the
    finalizer's differences from a derivation (they run uncounted without the policy); the hooks' table is the
    probe's, and that load has none. The assignment's solution keeps 7."""
    r, data = graded(tmp_path, source)
    assert r.score == pytest.approx(score), data
    if source is not SOLUTION:
        got = {t["name"]: (t["score"], " ".join(t["output"].split())) for t in data["tests"]}
        assert got["test_linear_derived_by_hand"][0] == 0.0, got
        assert "requires a backward derived by hand" in got["test_linear_derived_by_hand"][1], got


class _Graded:
    file, class_name = "layers.py", "Re`LU"


def test_l1_the_recipe_names_the_loaded_name_in_a_span_no_backtick_ends():
    """L1: the loaded NAME (not the class's ``__name__``); a backtick in the name fences the span with two."""
    graded = _Graded()
    graded.loaded_name = "ReLU"
    assert reproduce(graded, (4, 5)).split(": ", 1)[1] == "`gradcheck check layers.py::ReLU --input-shape 4,5`."
    said = reproduce(_Graded(), (4, 5)).split(": ", 1)[1]
    assert said == "``gradcheck check 'layers.py::Re`LU' --input-shape 4,5``.", said


def test_l1_graded_recipe_names_the_name_the_test_loaded(tmp_path):
    """Graded: a class whose ``__name__`` says otherwise (with a backtick) is recommended as the test loaded it."""
    buggy = SOLUTION.replace("return dY @ self.params[\"W\"]", "return -(dY @ self.params[\"W\"])") \
        + '\nLinear.__name__ = "Lin`ear"\n'
    assert buggy != SOLUTION + '\nLinear.__name__ = "Lin`ear"\n'
    _r, data = graded(tmp_path, buggy)
    outs = " ".join(t["output"] for t in data["tests"])
    assert "run: `gradcheck check layers.py::Linear --init" in outs, outs
    assert "Lin`ear' --init" not in outs, outs
