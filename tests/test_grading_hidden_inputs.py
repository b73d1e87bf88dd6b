"""Every hidden test's input exercises each branch it grades, for every grading seed (tester report, session 6, D9).

A hidden test draws its shapes and inputs from the session seed. Before, a ReLU input could be all
positive (the tester's identity ReLU got 1/2 with ``--seed 373486004``), cross-entropy labels could
all be the same class (a ``d[:, y] -= 1`` that indexes the wrong axis is then right), a conv trial
could have stride 1 and pad 1 only, and an affine input no axis to flatten. Here the assignments'
own test functions run in process over many seeds, on the student's functions loaded the way the
sandbox loads them (:func:`gradcheck._adapters.find` / ``build``) and scored by the plugin's own
:class:`~gradcheck.grading.plugin.Grade`: each planted branch bug earns 0 of the hidden points on
every seed, and the solution all of them.
"""

import importlib.util
import types
import zlib
from pathlib import Path

import numpy as np
import pytest

from gradcheck import _adapters
from gradcheck.errors import StudentCodeError
from gradcheck.grading import away_from_kinks
from gradcheck.grading.checks import GradingFailure
from gradcheck.grading.plugin import Grade

ROOT = Path(__file__).resolve().parents[1]
SEEDS = range(200)


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _submission(assignment: str, name: str, *edits: tuple[str, str]):
    """The assignment's solution with each ``(old, new)`` edit applied once, as a module."""
    text = (ROOT / "assignments" / assignment / "solution" / "layers.py").read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    mod = types.ModuleType(name)
    exec(compile(text, f"{name}.py", "exec"), mod.__dict__)  # noqa: S102 - our own solution with one edit
    return mod


class _Student:
    """The ``student`` fixture without the sandbox: classes and CS231n pairs built in process."""

    def __init__(self, mod):
        self.mod = mod

    def layer(self, file, name, **init):  # noqa: ARG002 - one module per submission
        kind, target = _adapters.find(self.mod, name)
        return _adapters.build(kind, target, init, seed=0)

    loss = layer


@pytest.fixture(autouse=True)
def _numbers_alone(monkeypatch):
    """Scores only, 200 seeds a bug: a wrong part is named from its numbers alone, without check's signatures that
    run the layer again (a message, never a score: ``checks.DIAGNOSIS_FORWARDS``, newuser24 M1)."""
    from gradcheck.grading import checks

    monkeypatch.setattr(checks, "DIAGNOSIS_FORWARDS", 0)


def score(test, mod, seed):
    """The share of ``test``'s points a submission ``mod`` earns with grading seed ``seed``."""
    grade = Grade(types.SimpleNamespace(stash={}))
    nodeid = f"{Path(test.__code__.co_filename).name}::{test.__name__}"  # as gradcheck grade runs it
    rng = np.random.default_rng([seed, zlib.crc32(nodeid.encode())])  # the plugin's rng fixture
    try:
        test(student=_Student(mod), grade=grade, rng=rng, grading_seed=seed)
    except GradingFailure as exc:
        return exc.fraction
    except StudentCodeError:  # e.g. an output of the wrong shape: the plugin scores the test 0
        return 0.0
    failure = grade.failure()  # every trial ran and counts (newuser25 H2): the plugin raises it at the test's end
    return 1.0 if failure is None else failure.fraction


LRC = _module(ROOT / "assignments" / "linear_relu_ce" / "tests" / "test_linear_relu_ce.py", "lrc_tests")
CS = _module(ROOT / "assignments" / "cs231n_layers" / "tests" / "test_cs231n_layers.py", "cs231n_tests")

POOL = '    ph, pw, stride = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]'


def _pool_params(new: str):
    """Edits that replace max_pool_forward's and max_pool_backward's line ``POOL`` by ``new``."""
    return [(f"{POOL}\n    N, C, H, W = x.shape", f"{new}\n    N, C, H, W = x.shape"),
            (f"    x, pool_param = cache\n{POOL}", f"    x, pool_param = cache\n{new}")]


BUGS = {
    # the tester's subs11/idrelu: an identity ReLU
    "identity_relu": ("linear_relu_ce", [("        self.mask = X > 0\n        return np.where(self.mask, X, 0.0)",
                                          "        self.mask = np.ones_like(X, dtype=bool)\n        return X * 1.0")],
                      [LRC.test_hidden_relu_random_shapes], 0),
    # the label index on the wrong axis: right when every label is the same class
    "ce_labels_on_wrong_axis": ("linear_relu_ce", [("d[np.arange(n), self.y] -= 1.0", "d[:, self.y] -= 1.0")],
                                [LRC.test_hidden_ce_random], 0),
    # the loss value, its third check, is right: 1 of 3 checks (every check counts, newuser25 H2)
    "softmax_labels_on_wrong_axis": ("cs231n_layers", [("dx[np.arange(N), y] -= 1.0", "dx[:, y] -= 1.0")],
                                     [CS.test_hidden_softmax_loss], 1 / 3),
    # dx not reshaped back to x's shape: right when x has one feature axis
    "affine_dx_flat": ("cs231n_layers", [("dx = (dout @ w.T).reshape(x.shape)", "dx = dout @ w.T")],
                       [CS.test_hidden_affine_random_shapes], 2 / 3),
    # backward with stride 1 whatever conv_param says: right when the stride is 1
    "conv_backward_stride_1": ("cs231n_layers", [("    F, _, HH, WW = w.shape\n    _, _, Ho, Wo = dout.shape\n",
                                                  "    F, _, HH, WW = w.shape\n    _, _, Ho, Wo = dout.shape\n"
                                                  "    stride = 1\n")],
                               [CS.test_hidden_conv_random], 1 / 3),
    # the padding cropped as 1 whatever conv_param says: right when the pad is 1
    "conv_backward_pad_1": ("cs231n_layers", [("dx = dxpad[:, :, pad:pad + H, pad:pad + W]",
                                               "dx = dxpad[:, :, 1:1 + H, 1:1 + W]")],
                            [CS.test_hidden_conv_random], 2 / 3),
    # db of the first sample only: right for a batch of one
    "conv_db_first_sample": ("cs231n_layers", [("db = dout.sum(axis=(0, 2, 3))", "db = dout[0].sum(axis=(1, 2))")],
                             [CS.test_hidden_conv_random], 2 / 3),
    # the mutant max_pool_overwrites: right when no pixel is the maximum of two windows
    "max_pool_overwrites": ("cs231n_layers", [("dx[n, c, i * stride + p, j * stride + q] += dout[n, c, i, j]",
                                               "dx[n, c, i * stride + p, j * stride + q] = dout[n, c, i, j]")],
                            [CS.test_hidden_max_pool_overlapping], 0),
    # the tester's subsC/s_sq (session 6, N5): pool_height read for both sides of the window, in forward and
    # backward; right when every window is square, as in every visible test (47/47 with --seed 1 before)
    "max_pool_square_window": ("cs231n_layers", _pool_params(POOL.replace('"pool_width"', '"pool_height"')),
                               [CS.test_hidden_max_pool_overlapping], 0),
    # the window's height taken for the stride: right when they are equal (the visible tests' 2x2, stride 2)
    "max_pool_stride_is_height": ("cs231n_layers",
                                  _pool_params(POOL.replace('pool_param["stride"]', 'pool_param["pool_height"]')),
                                  [CS.test_hidden_max_pool_overlapping], 0),
}


def test_the_tester_s_identity_relu_gets_nothing_with_the_tester_s_seed():
    mod = _submission("linear_relu_ce", "idrelu", *BUGS["identity_relu"][1])  # 1/2 before
    assert score(LRC.test_hidden_relu_random_shapes, mod, 373486004) == 0.0


def _conv_forward_vectorized(x, w, b, conv_param):
    """The cs231n solution's ``conv_forward_naive`` without its four Python loops: the same ``out`` (float64, up to
    the order of the sums) and the same ``cache``, for the conv bugs of :data:`BUGS`, which all live in the backward
    (:func:`test_the_vectorized_conv_forward_is_the_solution_s`)."""
    stride, pad = conv_param["stride"], conv_param["pad"]
    _, _, HH, WW = w.shape
    xpad = np.zeros((*x.shape[:2], x.shape[2] + 2 * pad, x.shape[3] + 2 * pad), dtype=x.dtype)  # np.pad's zeros,
    xpad[:, :, pad:pad + x.shape[2], pad:pad + x.shape[3]] = x  # without its Python-level cost
    windows = np.lib.stride_tricks.sliding_window_view(xpad, (HH, WW), axis=(2, 3))[:, :, ::stride, ::stride]
    out = np.zeros((x.shape[0], w.shape[0], *windows.shape[2:4]))
    out[...] = np.einsum("nchwij,fcij->nfhw", windows, w) + b[None, :, None, None]
    return out, (x, w, conv_param)


_conv_forward_vectorized.__name__ = _conv_forward_vectorized.__qualname__ = "conv_forward_naive"


def test_the_vectorized_conv_forward_is_the_solution_s():
    solution = _submission("cs231n_layers", "solution")
    rng = np.random.default_rng(0)
    for stride, pad, x_shape, w_shape in (((1, 0, (2, 3, 5, 6), (4, 3, 2, 3))), (2, 2, (3, 1, 3, 6), (2, 1, 3, 1)),
                                          (3, 2, (2, 2, 6, 4), (3, 2, 1, 2)), (2, 1, (1, 2, 7, 7), (1, 2, 3, 3))):
        x, w, b = rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(w_shape[0])
        param = {"stride": stride, "pad": pad}
        (want, want_cache), (got, got_cache) = (f(x, w, b, param) for f in (solution.conv_forward_naive,
                                                                              _conv_forward_vectorized))
        assert got.shape == want.shape and got.dtype == want.dtype and np.allclose(got, want, rtol=1e-13, atol=1e-13)
        assert got_cache[0] is x and got_cache[1] is w and got_cache[2] is param and len(got_cache) == len(want_cache)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_a_branch_bug_is_caught_by_every_trial_on_every_seed(bug):
    """Every trial exercises the branch and every trial counts (newuser25 H2), so the bug earns on every seed only
    the share of the tensors it leaves right (0 for a test of one tensor), never the points of a lucky draw."""
    assignment, edits, tests, fraction = BUGS[bug]
    mod = _submission(assignment, bug, *edits)
    # the conv trials (central differences through the naive loops, ~0.2 s a seed) take the first 100 seeds: each
    # trial draws stride 2-3, pad 2 and a batch of 2-3 whatever the seed, and 100 draws (two trials each) cover
    # each of those values many times over (the branches these bugs hide in); the others, cheap, all 200
    seeds = SEEDS[:100] if CS.test_hidden_conv_random in tests else SEEDS
    if CS.test_hidden_conv_random in tests:  # each conv bug is in the backward: the central differences of its
        # forward take the same numbers from the loops vectorized (68 % of this test's CPU was the loops, session 42)
        mod.conv_forward_naive = _conv_forward_vectorized
    for test in tests:
        more = {seed: f for seed in seeds if not np.isclose(f := score(test, mod, seed), fraction)}
        assert not more, f"{bug} earns other than {fraction:.3g} of {test.__name__} with seeds {dict(list(more.items())[:8])}"


@pytest.mark.parametrize("test", [LRC.test_hidden_relu_random_shapes, LRC.test_hidden_ce_random,
                                  CS.test_hidden_softmax_loss, CS.test_hidden_affine_random_shapes,
                                  CS.test_hidden_conv_random, CS.test_hidden_max_pool_overlapping],
                         ids=lambda t: t.__name__)
def test_the_solution_earns_every_hidden_point_on_every_seed(test):
    assignment = "linear_relu_ce" if test.__module__ == "lrc_tests" else "cs231n_layers"
    mod = _submission(assignment, "solution")
    lost = {seed: f for seed in SEEDS[:40] if (f := score(test, mod, seed)) < 1.0}
    assert not lost, f"the solution loses points of {test.__name__} with seeds {lost}"


def test_away_from_kinks_puts_an_entry_on_each_side_and_moves_nothing_else():
    x = np.array([0.3, 0.01, 2.0, 0.7])
    out = away_from_kinks(x)
    assert out.tolist() == [0.3, -0.05, 2.0, 0.7]  # the entry nearest the kink crosses it, clear of it
    assert away_from_kinks(-x).tolist() == [-0.3, 0.05, -2.0, -0.7]
    y = np.array([[-1.0, 0.5], [0.02, -0.01]])
    assert away_from_kinks(y).tolist() == [[-1.0, 0.5], [0.05, -0.05]]  # both sides already: only moved
    assert away_from_kinks(x, both_sides=False).tolist() == [0.3, 0.05, 2.0, 0.7]
    assert away_from_kinks(np.array([0.2])).tolist() == [0.2]  # one entry cannot be on both sides
    hard = away_from_kinks(np.array([2.0, 3.0, 4.0]), kinks=(-1.0, 1.0))
    assert (hard < -1).any() and (hard > 1).any() and np.all(np.abs(np.abs(hard) - 1) >= 0.05)


def test_class_labels_hold_two_classes_at_least():
    from gradcheck.grading import class_labels

    for seed in range(300):
        rng = np.random.default_rng(seed)
        n, c = int(rng.integers(2, 5)), int(rng.integers(2, 4))
        y = class_labels(rng, n, c)
        assert y.shape == (n,) and y.dtype.kind == "i" and 0 <= y.min() and y.max() < c
        assert len(set(y.tolist())) >= 2
    assert class_labels(np.random.default_rng(0), 1, 5).shape == (1,)
    same = np.random.default_rng(0).integers(0, 7, size=9)
    assert class_labels(np.random.default_rng(0), 9, 7).tolist() == same.tolist()  # a varied draw is kept


def test_a_test_timeout_inside_a_graded_forward_stops_the_test_and_costs_no_part(request):
    """flaky33: pytest-timeout's SIGALRM handler raises ``pytest.fail("Timeout >600.0s")`` in whatever frame runs
    when a test's time is up. Under load (session 32, 6 busy loops, ``-n 2``) it fired in ``conv_backward_pad_1``'s
    200 seeds while central differences ran the submission's forward: ``call_student`` worded it as the
    submission's error, the check failed dw and db as "the numerical check could not run", and the test went on to
    report seed 173 at 1/3 instead of 2/3, a wrong score, not a timeout. Here the timer fires (pytest-timeout's own
    handler, installed by its own hook; the same signal) in the last forward of the last trial: the timeout reaches
    pytest, no score is given. (review34: only pytest-timeout's handler passes through, a submission's own
    ``pytest.fail``/``skip`` is its error: the real handler, not a look-alike.)"""
    import signal

    import pytest_timeout

    mod = _submission("cs231n_layers", "conv_backward_pad_1", *BUGS["conv_backward_pad_1"][1])
    forward, calls = mod.conv_forward_naive, []
    mod.conv_forward_naive = lambda *a, **k: (calls.append(1), forward(*a, **k))[1]
    assert score(CS.test_hidden_conv_random, mod, 173) == pytest.approx(2 / 3)  # the right score, untimed
    last, calls[:] = len(calls), []

    def timed(*a, **k):  # the submission's forward, the timer firing in its last call
        calls.append(1)
        if len(calls) == last:
            signal.raise_signal(signal.SIGALRM)
        return forward(*a, **k)

    before, timer = signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL)
    mod.conv_forward_naive = timed  # pytest-timeout's handler (its method "signal"), its timer far away
    pytest_timeout.pytest_timeout_set_timer(request.node, pytest_timeout.Settings(3600.0, "signal", False, True))
    try:
        with pytest.raises(pytest.fail.Exception, match="Timeout"):  # 1/3 before: the timeout was a score
            score(CS.test_hidden_conv_random, mod, 173)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
        if timer[0] > 0:
            signal.setitimer(signal.ITIMER_REAL, *timer)
    assert len(calls) == last  # it stopped there
