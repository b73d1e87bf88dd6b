"""Session 35 (review35): tests that kill session 34's surviving mutants (each fails with its mutant applied:
``/work/wt/review35/mutate35.py`` and review34's ``mutate.py``, named in each test), and F2: a convolution whose dX
is 2 or 4 times too large was named an average pool's bug (``pool-side-only``, ``pool-area-missing``)."""

import warnings

import numpy as np
import pytest
from test_cli import both, run_here, student
from test_cli_tester33 import POOL, POOL_ARGS, _check, _Offset
from test_grading_policy import INIT
from test_grading_policy_s31 import NESTED

import gradcheck
from gradcheck.sandbox import Sandbox

# ---- F2: the average pool's area is read only where the layer can be a pool


@pytest.mark.parametrize("factor", [2.0, 4.0])
def test_a_convolution_s_constant_factor_is_not_named_a_pool_s(factor):
    """review35 F2: manualprop's Conv2D(4, 1, 3, padding=1), X (2, 4, 5, 5) and Y (2, 1, 5, 5), with dX * 2 was
    "pool-side-only" ("an average pool divides each window's sum by its area (4 = 2 x 2 inputs per output)") and
    with dX * 4 "pool-area-missing": X.size / Y.size counted the channels, in either layout (the channels-last
    reading, W = 5 on both sides, took the 4 input channels for a window). A convolution is no pool: a constant
    factor, as before session 34."""
    from manualprop.conv import Conv2D

    class Scaled(Conv2D):
        def backward(self, dY):
            return factor * super().backward(dY)

    d = gradcheck.diagnose_layer(Scaled(4, 1, 3, padding=1, rng=0), np.random.default_rng(1).standard_normal((2, 4, 5, 5)))
    assert not d.passed
    assert [(f.tensor, f.code) for f in d.findings] == [("dX", "factor")], [(f.code, f.message) for f in d.findings]
    assert f"dX is {factor:g} times the correct gradient: a constant factor" in d.findings[0].message, d.findings[0]


@pytest.mark.parametrize("layout", ["channels-first", "channels-last"])
def test_an_average_pool_without_its_area_is_still_named_in_either_layout(layout):
    """F2's fix keeps newuser34 M1's: a 2 x 2 average pool over 3 channels whose backward spreads dY undivided is
    "pool-area-missing" at 4 (channels first and Andrew Ng's channels last), and one dividing by one side "pool-side-only"."""
    ax = (2, 3) if layout == "channels-first" else (1, 2)

    class Pool:
        def __init__(self, share):
            self.share = share

        def forward(self, X, training=False):
            self.shape = X.shape
            return X.reshape(self._split(X.shape)).mean(axis=(ax[0] + 1, ax[1] + 2))

        def _split(self, s):
            s = list(s)
            s[ax[1]:ax[1] + 1] = [s[ax[1]] // 2, 2]
            s[ax[0]:ax[0] + 1] = [s[ax[0]] // 2, 2]
            return s

        def backward(self, dY):
            return np.repeat(np.repeat(dY, 2, ax[0]), 2, ax[1]) * self.share

    shape = (3, 3, 4, 6) if layout == "channels-first" else (3, 4, 6, 3)  # a batch of 3: no factor 2 is the batch
    X = np.random.default_rng(2).standard_normal(shape)
    assert gradcheck.diagnose_layer(Pool(0.25), X).passed  # the correct pool: dY / 4 over each window
    for share, code in ((1.0, "pool-area-missing"), (0.5, "pool-side-only")):
        d = gradcheck.diagnose_layer(Pool(share), X)
        assert [f.code for f in d.findings] == [code], [(f.code, f.message) for f in d.findings]
        assert "(4 " in d.findings[0].message, d.findings[0].message


# ---- the exit code of a function pair checked at each value of its string keyword (review34's mutants)


def test_a_pair_wrong_at_its_default_and_right_in_its_other_branch_exits_1(tmp_path):
    """review34 mutant cli_pair_first_code (the last value's code, not the first failing one): a pool pair whose max
    path doubles dA and whose average path is right exited 0 under the mutant, with "mode='max' FAIL" in its output."""
    f = student(tmp_path, POOL.replace("return (mask * dA", "return (2 * mask * dA").replace("SHARE", "1.0 / (f * f)"))
    p = run_here("check", f"{f}::pool", *POOL_ARGS)
    text = both(p)
    assert "each value of mode checked: mode='max' FAIL, mode='average' PASS" in text, text
    assert p.returncode == 1, text


def test_a_pair_right_at_its_default_and_not_checked_in_its_other_branch_exits_3(tmp_path):
    """review34 mutant cli_pair_nonzero_lost (a NOT CHECKED value's exit 3 dropped): the average path adds 1e20 to
    its output, so its differences are swamped (NOT CHECKED); the max path is right. The mutant exited 0."""
    f = student(tmp_path, POOL.replace("else win.mean(axis=(2, 4))", "else win.mean(axis=(2, 4)) + 1e20")
                .replace("SHARE", "1.0 / (f * f)"))
    p = run_here("check", f"{f}::pool", *POOL_ARGS)
    text = both(p)
    assert "each value of mode checked: mode='max' PASS, mode='average' NOT CHECKED" in text, text
    assert p.returncode == 3, text


# ---- the "exactly 0" rule of a gradient the checked output does not read (check._unreached's guard)


def test_the_exactly_zero_guard_holds_at_a_moderate_offset():
    """Y = 1e6 X + 1e-13 X @ W with dW = 0 (true: 1e-13 X.T @ dY): half an entry's move of W is below the rounding
    of |Y|, and the round-off of the step-0.5 differences (~3e-9) is above ATOL_FLOOR: NOT CHECKED. A guard
    threshold anywhere in (3e-9, 3e5) PASSed it as "dW is exactly 0" (review35 mutant unr_guard_1e3; the 1e20 test
    of test_cli_tester33 kills only thresholds above 3e5)."""
    X = np.random.default_rng(1).standard_normal((4, 3))
    r = _check(_Offset(1e6, 1e-13), X)
    assert not any("dW is exactly 0" in n for n in r.notes), r.notes
    dW = next(rec for rec in r.records if rec.tensor == "dW").comparisons
    assert [c.unchecked for c in dW] == ["atol"], dW
    assert not r.passed


class _UnreadBig:
    """Y = 1e6 X; W (entries 1e4 to 2e4) is never read, dW = 0 is right."""

    def __init__(self, n=3):
        self.params = {"W": 1e4 * (1 + np.random.default_rng(0).uniform(0, 1, (n, n)))}
        self.grads = {}

    def forward(self, X, training=False):
        return 1e6 * X

    def backward(self, dY):
        self.grads["W"] = np.zeros_like(self.params["W"])
        return 1e6 * dY


def test_an_unread_large_weight_is_exactly_zero_at_its_own_steps():
    """The guard's round-off is taken at W's own steps (half of each |w|): W ~ 1e4 unread with Y = 1e6 X is
    compared as exact zeros and PASSes; at a step of 0.5 the round-off (~4e-9) is above ATOL_FLOOR and dW was NOT
    CHECKED (review35 mutant unr_guard_no_steps)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gradcheck.check_layer(_UnreadBig(), np.random.default_rng(0).standard_normal((4, 3)), twin=None)
    assert r.passed and not r.unchecked, r.table()
    assert any(n.startswith("dW is exactly 0") for n in r.notes), r.notes


# ---- autoprop's cov with a dtype and weights (fixo34)


def test_cov_with_a_dtype_and_weights_centres_in_that_dtype_as_numpy():
    """numpy's cov centres the data in the given dtype (``X -= avg`` keeps X float32) before the float64 product
    with the float64 weights (review35 mutant cov_xc_no_cast: centred in float64, 3.6e-8 off numpy; the s34 test
    compares at rtol 1e-6). Float32 centring moves the entries by ~1e-8 of their size, any summation order of a
    4-term float64 product by ~1e-16: rtol 1e-12 tells the two apart in any BLAS order."""
    import autoprop as ap

    x = np.array([[1.0, 2.5, 4.0, 0.5], [2.0, 0.0, 1.0, 3.0]]) / 3
    w = np.array([0.5, 1.0, 2.0, 0.7])
    want = np.cov(x, dtype=np.float32, aweights=w)
    assert np.max(np.abs(np.cov(x, aweights=w) / want - 1)) > 1e-9  # the case: float64 centring is another number
    got = np.asarray(np.cov(ap.constant(x), dtype=np.float32, aweights=w))
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ---- the grader's count: B1's spares (fixr34)


def test_b1_spares_of_a_subclass_are_no_container():
    """redteam34 B1 with spares made by ``object.__new__`` of a subclass of the layer's class: held once, as spares
    of its own class are (review35 mutant chld_b1_related_is, ``t is not rt``: held 6, five re-entries allowed)."""
    from test_grading_redteam34 import SPARES

    from gradcheck import _sandbox_child as child

    ns = {}
    exec(SPARES, ns)  # noqa: S102 (the test's own source)
    Linear = ns["Linear"]

    class Sub(Linear):
        pass

    lay = Linear(**INIT)
    lay._spares = [object.__new__(Sub) for _ in range(5)]
    assert list(child.held_forwards(lay).values()) == [1]


# ---- the grader's policy: a request of no count (sublayer) runs with the signals as before


#: a model whose ``layers`` property waits (up to 1 s) for a SIGALRM of its own timer, and raises when none comes
RINGING = NESTED + '''
import signal
import time

_RANG = []


def _on_alarm(*args):
    _RANG.append(1)


signal.signal(signal.SIGALRM, _on_alarm)


def _rings():
    n = len(_RANG)
    signal.setitimer(signal.ITIMER_REAL, 0.005)
    end = time.monotonic() + 1.0
    while len(_RANG) == n and time.monotonic() < end:
        pass
    if len(_RANG) == n:
        raise RuntimeError("no SIGALRM: the signals are blocked")


class Net(Sequential):
    def __init__(self, in_features, out_features):
        super().__init__([Linear(in_features, out_features, rng=0)])

    @property
    def layers(self):
        _rings()
        return self._layers

    @layers.setter
    def layers(self, value):
        self._layers = value
'''


def test_a_sublayer_request_under_the_policy_runs_with_the_submission_s_signals(tmp_path):
    """A ``sublayer`` request is no request of the policy's (not counted): the child unblocks the signals that the
    last counted window's seal blocked before it runs the request, so the submission's own handlers (and SIGXCPU)
    run as in any process. Here the model's ``layers`` property, read by the request, waits for its timer's
    SIGALRM (review34 mutant child_uncounted_req_no_unseal: the request ran with every signal blocked, and
    ``Net.layers[0] raised RuntimeError: no SIGALRM``)."""
    (tmp_path / "layers.py").write_text(RINGING)
    X = np.random.default_rng(0).standard_normal((4, 5))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20) as sb:
        net = sb.load_layer("layers.py", "Net", INIT, probe_inputs=[X], no_forward_in_backward=True)
        Y = net.forward(X)
        net.backward(np.ones(Y.shape))  # counted requests: their windows end sealed
        sub = net.sublayer(0, [X], None)
    assert sub is not None and sub.class_name == "Linear", sub
