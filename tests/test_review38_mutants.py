"""review38: tests that kill mutants of session 37's change which its own tests let live (cheap, in-process).

Each test names the mutant it kills (see /work/wt/review38/mutants.py and the session's report).
"""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.diagnose import SIGMAS, random_mean_finding


class _ScaledDropout:
    """An inverted dropout whose kept entries are scaled by ``k / (1 - p)`` (k = 1: right)."""

    def __init__(self, p=0.5, k=1.0, seed=1):
        self.p, self.k, self.rng = p, k, np.random.default_rng(seed)

    def forward(self, X, training=True):
        if not training:
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) * (self.k / (1 - self.p))
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class _Identity:
    """A training forward with no randomness: its mean ratio is exactly 1, its standard error 0."""

    def forward(self, X, training=True):
        return X.copy()

    def backward(self, dY):
        return dY


def _finding(layer, p=0.5, seed=0, ref_seed=3):
    return random_mean_finding([(layer, mp.Dropout(p, rng=ref_seed), "")], "Dropout", (6, 5), seed,
                               "manualprop.Dropout")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_mean_a_scale_25_percent_too_large_fails_at_six_standard_errors(seed):
    """Kills rm_sigmas_x10 (SIGMAS 6 -> 60): at p = 0.5 over 4000 entries the standard error of the difference of
    the means is about 0.025 (sqrt(2) / sqrt(4000) for two inverted dropouts; the 1.25 scale's own is larger), so a
    mean of 1.25 X against 1 X is about 10 of them apart: within 6, it is found; at 60 nothing short of a factor
    of two would be. The right layer, drawn from the same seeds, passes."""
    assert SIGMAS == 6.0
    wrong = _finding(_ScaledDropout(0.5, 1.25, seed=seed), seed=seed)
    assert wrong is not None and wrong.code == "random-mean", wrong
    apart = float(wrong.message.split(" standard errors apart")[0].rsplit("(", 1)[1])
    assert 7 <= apart <= 14, wrong.message
    right = _finding(_ScaledDropout(0.5, 1.0, seed=seed), seed=seed)
    assert right is not None and right.code == "random-mean-note", right


def test_random_mean_the_standard_error_is_of_the_difference_both_sides():
    """Kills rm_se_one_side (the threshold made of the layer's standard error alone): a training forward whose
    mean ratio is exactly 1 (standard error 0) against an inverted dropout whose mean is 1 within its own standard
    error agrees with it; the threshold is 6 standard errors of the difference, hypot of the two."""
    for ref_seed in (0, 1, 2, 4):  # (the reference's draw is about 1 standard error off 1; rng=3's is 1 exactly)
        f = _finding(_Identity(), ref_seed=ref_seed)
        assert f is not None and f.code == "random-mean-note", f.message


def test_random_mean_standard_error_of_a_spatial_dropout_counts_its_masks_not_its_entries():
    """Kills rm_se_entries (the standard error read from the entries as independent draws): a spatial dropout draws
    one mask per (sample, channel), so the standard error of its mean ratio is sqrt(p / (1 - p) / (N C)), the
    binomial's (here 0.0289 for N = 400, C = 3, p = 0.5), not the entries' sqrt(p / (1 - p) / (N C H W)) (0.0036)."""
    from gradcheck.diagnose import _mean_ratio

    N, C, H, W, p = 400, 3, 8, 8, 0.5
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 1.5, (N, C, H, W))
    ses = [_mean_ratio(X * (rng.random((N, C, 1, 1)) >= p) / (1 - p), X)[1] for _ in range(20)]
    want = np.sqrt(p / (1 - p) / (N * C))
    assert abs(np.mean(ses) / want - 1) < 0.05, (np.mean(ses), want)


def test_random_mean_batch_holds_at_least_400_samples():
    """Kills rm_no_samples_floor: the compared batch is grown to about 4000 entries and at least 400 samples (the
    per-sample means giving the standard error): a (2, 3, 8, 8) input (192 entries a sample) is compared over
    400 samples, 76,800 entries, not 21."""
    f = random_mean_finding([(_ScaledDropout(0.5), mp.Dropout(0.5, rng=0), "")], "Dropout", (2, 3, 8, 8), 0,
                            "manualprop.Dropout")
    assert f is not None and f"over {400 * 192} entries" in f.message, f.message


class _Item:
    """What ``plugin._test_failed`` reads of a pytest item: its path (the tests' folder)."""

    def __init__(self, path):
        self.path, self.nodeid = path, "test_x.py::test_a"


def _call(exc, when="call"):
    return type("C", (), {"excinfo": type("E", (), {"value": exc}), "when": when})


def _raised(code, filename, glob=None):
    try:
        exec(compile(code, filename, "exec"), dict(glob or {}))
    except BaseException as exc:  # noqa: BLE001 - the exception is the test's object
        return exc
    raise RuntimeError("not raised")


def test_plain_assert_of_a_sibling_folder_sharing_the_tests_folders_prefix_is_not_the_tests(tmp_path):
    """Kills pa_folder_prefix (``where.startswith(folder)`` without ``os.sep``): an assert raised in
    ``.../tests_helpers/h.py`` is not of the folder ``.../tests`` (it is no test's verdict: None), one raised in
    ``.../tests/h.py`` is."""
    from gradcheck.grading import plugin
    from gradcheck.grading.checks import GradingFailure

    for name in ("tests", "tests_helpers"):
        (tmp_path / name).mkdir()
    item = _Item(tmp_path / "tests" / "test_x.py")
    inside = plugin._test_failed(item, _call(_raised("assert 1 == 2, 'w'", str(tmp_path / "tests" / "h.py"))))
    beside = plugin._test_failed(item, _call(_raised("assert 1 == 2, 'w'", str(tmp_path / "tests_helpers" / "h.py"))))
    assert isinstance(inside, GradingFailure) and beside is None


def test_plain_assert_in_a_fixtures_setup_is_not_the_tests_verdict(tmp_path):
    """Kills pa_setup_phase: the rule reads the call phase alone; an assert of a fixture's setup or teardown is an
    error there in pytest, not the submission's failure of that test."""
    from gradcheck.grading import plugin

    (tmp_path / "tests").mkdir()
    item = _Item(tmp_path / "tests" / "test_x.py")
    exc = _raised("assert 1 == 2, 'w'", str(tmp_path / "tests" / "conftest.py"))
    assert plugin._test_failed(item, _call(exc, "call")) is not None
    assert plugin._test_failed(item, _call(exc, "setup")) is None
    assert plugin._test_failed(item, _call(exc, "teardown")) is None


def test_pytest_timeouts_failed_is_not_the_students_failure(tmp_path):
    """Kills pa_timeout_failed: pytest-timeout's handler raises ``pytest.fail("Timeout ...")`` in whatever frame runs;
    read as the test's own ``pytest.fail`` it would score the submission 0 for the grader's time limit. A
    ``pytest.fail`` of the test is its verdict."""
    from gradcheck.grading import plugin
    from gradcheck.grading.checks import GradingFailure

    (tmp_path / "tests").mkdir()
    item = _Item(tmp_path / "tests" / "test_x.py")
    timeout = _raised("pytest.fail('Timeout (>600.0s) from pytest-timeout.')", "pytest_timeout.py",
                      {"pytest": pytest, "__name__": "pytest_timeout"})
    own = _raised("pytest.fail('wrong shape')", str(tmp_path / "tests" / "test_x.py"), {"pytest": pytest})
    assert plugin._test_failed(item, _call(timeout)) is None
    got = plugin._test_failed(item, _call(own))
    assert isinstance(got, GradingFailure) and "wrong shape" in str(got)


def test_an_assert_of_the_tests_own_reference_called_by_gradcheck_is_not_the_students_failure(tmp_path):
    """Kills pa_reference_frame: an AssertionError raised in a reference the test file defines (a frame of the
    tests' folder) while gradcheck's checks called it is the test's error (``_reference_frame``: a grader error
    naming the reference), not a failed test scored 0 for the student."""
    import gradcheck.grading.checks as checks_module
    from gradcheck.grading import plugin

    (tmp_path / "tests").mkdir()
    ref = {}
    exec(compile("def forward(x):\n    assert x > 1, 'the reference refused'\n", str(tmp_path / "tests" / "refs.py"),
                 "exec"), ref)
    via = {}
    exec(compile("def graded(f, x):\n    return f(x)\n", checks_module.__file__, "exec"), via)  # gradcheck's frame
    exc = _raised("graded(forward, 0)", str(tmp_path / "tests" / "test_x.py"),
                  {"graded": via["graded"], "forward": ref["forward"]})
    assert plugin._reference_frame(exc).startswith("the reference: refs.py, line 2")
    assert plugin._test_failed(_Item(tmp_path / "tests" / "test_x.py"), _call(exc)) is None


def test_running_statistics_counterparts_by_role_only_when_unambiguous():
    """Kills rs_role_ambiguous and rs_counterparts_dup (_running_stats._counterparts' documented contract): a buffer
    is matched by its own name, else by its role when it alone has that role; a reference statistic matched by
    name is not matched again by role to another buffer (a batch mean cached as ``self.mean`` beside
    ``running_mean`` is no running statistic), and two buffers of one role match neither."""
    from gradcheck._running_stats import _counterparts_of

    # (session 46: _counterparts, matching the names forward writes, gave way to find_roles, which matches by the
    # update first and by name, through _counterparts_of, only the statistics no array tracks)
    assert _counterparts_of("running_mean", ["running_mean", "mean"]) == ["running_mean"]
    assert _counterparts_of("running_var", ["moving_mean", "moving_variance"]) == ["moving_variance"]
    assert _counterparts_of("running_mean", ["mean", "moving_mean"]) == []
    assert _counterparts_of("running_var", ["var"]) == ["var"]


def test_ordinal_of_the_teens_and_after():
    """Kills po_ordinal_teens: the positional-out refusal names the place by its ordinal; 11th to 13th are 'th'."""
    from autoprop.core.prims._common import _ordinal

    got = [_ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 14, 20, 21, 22, 23, 101, 111, 112, 113, 121)]
    assert got == ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "14th", "20th", "21st", "22nd", "23rd",
                   "101st", "111th", "112th", "113th", "121st"]


@pytest.mark.parametrize("name, extra", [("sum", (0, None, None, False, "novalue")), ("max", (0, None, False, "novalue")),
                                         ("min", (1, None, True, "novalue", "novalue"))])
def test_numpys_not_given_after_a_positional_out_of_none_is_numpys_default(name, extra):
    """Kills po_novalue_kept: a call passing numpy's own "not given" (``np._NoValue``, what a wrapper forwarding
    numpy's defaults passes) after ``out=None`` by position means numpy's default, as in numpy: dropped, not handed
    to the record as ``initial``."""
    import autoprop as ap
    import autoprop.numpy as anp

    v = np.arange(6.0).reshape(2, 3)
    args = tuple(np._NoValue if a == "novalue" else a for a in extra)
    want = getattr(np, name)(v, *args)
    for call in (getattr(anp, name), getattr(np, name)):
        got = call(ap.Variable(v), *args)
        np.testing.assert_array_equal(got.numpy(), want)


def test_the_grading_child_imports_this_checkouts_gradcheck():
    """The suite's grading tests grade with the code under test: tests/conftest.py puts this checkout first on
    PYTHONPATH, which ``runner._child_env`` hands to the grading child. Without it, a run from a git worktree (whose
    .venv is the main checkout's, an editable install of /work/main) graded with the main checkout's plugin and checks:
    review38's mutant pa_assert_off (the plain-assert rule of gradcheck/grading/plugin.py switched off) survived
    tests/test_grading_newuser37.py, and was killed with the checkout on PYTHONPATH."""
    from pathlib import Path

    import gradcheck
    from gradcheck.grading.runner import _child_env

    root = str(Path(gradcheck.__file__).resolve().parents[1])
    assert _child_env().get("PYTHONPATH") == root


class _NoScaleDropout(_ScaledDropout):
    """An inverted dropout whose backward leaves out forward's 1 / (1 - p): dX = dY * mask only."""

    def backward(self, dY):
        return dY * (self.mask != 0)


def test_held_draw_grading_judges_a_random_layers_gradients_by_central_differences():
    """Kills hd_no_numerical (the held-draw grading's parts never judged by central differences: each part is read
    against the student's own array, so it always matches) and hd_how_dropped (a deterministic training forward
    graded with draws held, by its own central differences, not against the reference): the grader's
    ``layer_gradients(training=True)`` against manualprop's random Dropout passes a right inverted dropout, fails
    one whose backward leaves out the scale, and fails a "dropout" whose training forward drops nothing (its dX = dY
    against the reference's)."""
    from gradcheck.grading.checks import layer_gradients

    X = np.random.default_rng(0).standard_normal((6, 5))
    assert layer_gradients(_ScaledDropout(0.5), X, mp.Dropout(0.5, rng=2), training=True, seed=7).passed
    wrong = layer_gradients(_NoScaleDropout(0.5), X, mp.Dropout(0.5, rng=2), training=True, seed=7)
    assert not wrong.passed
    assert not layer_gradients(_Identity(), X, mp.Dropout(0.5, rng=2), training=True, seed=7).passed


class _WrongDropout:
    """Dropout dividing its backward by p where forward divides by 1 - p: right at p = 0.5 only. Eval: identity."""

    def __init__(self, p=0.5, seed=0):
        self.p, self.seed, self.params, self.grads, self.mask = p, seed, {}, {}, None

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        self.mask = np.random.default_rng(self.seed).random(X.shape) >= self.p
        return X * self.mask / (1 - self.p)

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask / self.p


class _BackwardKnob:
    """tanh whose backward (only) multiplies by ``scale``: right as built (scale=1.0); forward never reads it."""

    def __init__(self, scale=1.0):
        self.scale, self.params, self.grads = scale, {}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.tanh(X)

    def backward(self, dY):
        return dY * self.scale / np.cosh(self.X) ** 2


def test_other_args_recheck_in_both_modes_is_not_skipped_by_the_unchanged_eval_output():
    """Kills oa_unchanged_any: checked in both modes, a dropout's eval output is X at any p (unchanged) while its
    training output changes with p, so forward does read p: the layer is checked again at p = 0.3 and fails there."""
    from gradcheck import check_layer

    res = check_layer(_WrongDropout(), (6, 5), twin=None, training="both")
    assert not res.passed and res.args_failed and res.other_args == [("p", 0.5, 0.3)], res.notes


def test_a_knob_backward_alone_reads_is_not_checked_again():
    """Kills oa_unchanged_dropped: forward gives the same output at scale=1.0 and 0.7, so no term of forward can
    cancel with backward there; the layer is checked as built (right), with no verdict at 0.7."""
    from gradcheck import check_layer

    res = check_layer(_BackwardKnob(), (3, 4), twin=None)
    assert res.passed and res.other_args == [] and not res.args_failed, res.notes


def test_auto_chosen_namespaces_copy_ones_own_package_as_the_process_sandbox_does(tmp_path):
    """Kills cmd_copy_rule: ``gradcheck check`` with ``--isolation`` chosen by ``auto`` (the namespaces sandbox where
    this machine has one) copies the checked file's own package as the process sandbox does, so a check finds the
    same files whichever sandbox it got; ``--isolation namespaces`` given (a file one did not write) copies its own
    folder alone, the package left out."""
    from argparse import Namespace

    from gradcheck.check_command import check_files

    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text("import numpy as np\n")
    (pkg / "layers.py").write_text("from pkg.util import np\n\n\nclass L:\n    def forward(self, x):\n        return x\n")
    path = str(pkg / "layers.py")
    own = check_files(Namespace(isolation="process"), path)
    assert "pkg/util.py" in own
    assert sorted(check_files(Namespace(isolation="namespaces", isolation_auto=True), path)) == sorted(own)
    with pytest.warns(UserWarning, match="was not copied into the sandbox"):
        given = check_files(Namespace(isolation="namespaces", isolation_auto=False), path)
    assert "pkg/util.py" not in given and given.left_out == ("pkg",)
