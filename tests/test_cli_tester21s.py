"""Session 21's tester's findings (tester21s, fixer fixs21) through the CLI in this process and through
:func:`gradcheck.diagnose.diagnose_layer`: layers with a running mean wrongly failed as "eval forward reuses the
training mask" (H1); bugs in input ranges standard-normal inputs never reach, found at inputs around forward's
constants (H2, M5); a factor equal to the batch size by chance (M2)."""

import numpy as np
import pytest
from test_cli import both, run_here

from gradcheck import _validation as V
from gradcheck._switch_reach import compared_constants
from gradcheck.diagnose import diagnose_layer
from tests.buggy_layers import load

BUGGY = "tests/buggy_layers/tester21s.py"


def flat(p):
    return " ".join(both(p).split())


@pytest.mark.parametrize("cls", ["RunningMeanCenter", "MeanOnlyBN", "RunningVarScale"])
def test_running_statistics_are_no_training_mask(cls):
    """H1: eval forward = X on a fresh layer (running mean 0, running variance 1) and X - running_mean after a
    training forward: no mask, so PASS (was FAIL "eval forward reuses the training mask"), with and without --tape."""
    for extra in ([], ["--tape"], ["--eval"]):
        p = run_here("check", f"{BUGGY}::{cls}", "--input-shape", "6,5", *extra)
        text = flat(p)
        assert p.returncode == 0 and f"PASS: {cls}" in text, text
        assert "reuses the training mask" not in text, text


def test_dropout_reusing_its_mask_in_eval_is_still_named():
    """The finding H1 narrowed still names a Dropout whose eval forward multiplies by the training mask."""
    layer, X, kw = load("activations.py::DropoutEvalReusesMask")
    d = diagnose_layer(layer, X, **kw)
    assert not d.passed and "stale-mask-forward" in [c for e in [d, *d.other_modes] for c in e.codes], d.report()


def test_compared_constants_read_from_forward():
    """The constants forward compares its input with: np.clip, np.minimum/maximum, comparisons, np.where, an affine
    function of X solved for X, self attributes, |x| (both signs); a comparison with a non-input is not one."""
    assert compared_constants(load("tester21s.py::ReLU6")[0].obj) == [0.0, 6.0]
    assert compared_constants(load("tester21s.py::HardSigmoid")[0].obj) == [-3.0, 3.0]  # (X + 3) / 6 in [0, 1]
    assert compared_constants(load("tester21s.py::SoftplusThreshold")[0].obj) == [20.0]  # self.threshold
    assert compared_constants(load("tester21s.py::ClampedExp")[0].obj) == [-4.0, 4.0]

    class Huberish:
        delta = 1.5

        def forward(self, x, w):
            z = 2 * x - 1
            self.m = np.abs(z) <= self.delta  # z = +-1.5 at x = 1.25 and -0.25
            return np.where(w > 3, z, 0) + x.clip(-7, 7)  # w is no input of interest

    assert compared_constants(Huberish()) == [-7.0, -0.25, 1.25, 7.0]



class _ReLU6Rebound:
    """ReLU6 through a local name rebound after the clip reads it; backward forgets the clip at 6 (review22)."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.X = X
        h = X * 1.0
        h = np.clip(h, 0, 6)  # reads h = X, then rebinds h
        return h

    def backward(self, dY):
        return dY * (self.X > 0)  # BUG: gradient 1 above 6


def test_compared_constants_follow_the_order_written():
    """A name is read with the value it holds where the comparison stands, not the value a later statement gives it
    (review22: ``ast.walk`` is breadth-first, so ``h = np.clip(h, 0, 6)`` was read after h's rebinding: no constant,
    and ``z = X - 1; np.minimum(z, 5); z = X * 10`` gave 0.5 for 6)."""

    class Shifted:
        def forward(self, X):
            z = X - 1
            out = np.minimum(z, 5)  # X = 6
            z = X * 10
            return out + z

    assert compared_constants(_ReLU6Rebound()) == [0.0, 6.0]
    assert compared_constants(Shifted()) == [6.0]



def test_compared_constants_follow_augmented_assignments():
    """``h += 3`` moves h as ``h = h + 3`` does (review22: it was read as h = X, so clip((X + 3) / 6, 0, 1) written
    with += gave 0 and 6 for -3 and 3); ``h *= x`` (no longer affine) forgets h."""

    class HardSigmoidAug:
        def forward(self, X):
            h = X * 1.0
            h += 3
            h /= 6
            return np.clip(h, 0, 1)

    class Squared:
        def forward(self, X):
            h = X + 0.0
            h *= X
            return np.minimum(h, 4)

    assert compared_constants(HardSigmoidAug()) == [-3.0, 3.0]
    assert compared_constants(Squared()) == []

def test_bound_forgotten_behind_a_rebound_name_fails():
    """The ReLU6 above passed (its constants unread, no check around 6); now FAIL, the bound at 6 named."""
    from gradcheck._adapters import adapt

    X = np.random.default_rng(0).standard_normal((6, 5))
    d = diagnose_layer(adapt(_ReLU6Rebound(), [X])[0], X)
    assert not d.passed and d.codes[0] == "bound-side", d.report()
    assert "forward compares X with 6" in d.report(), d.report()


def test_compared_constants_follow_a_rebinding_of_forwards_own_input():
    """review22: ``X = X - 3`` was read as X (bounds 0 and 6 for 3 and 9); a call holding X's values
    (``np.asarray(X)``) keeps X; a name is read as it was where it is used (``m = X > 1`` before ``X = X * 2``: 1,
    not 0.5); X rebound to something else bounds nothing (it was read as X)."""

    class Shifted:
        def forward(self, X):
            X = np.asarray(X, dtype=float)
            X = X - 3
            return np.clip(X, 0, 6)

    class Ordered:
        def forward(self, X):
            self.m = X > 1
            X = X * 2
            return np.minimum(X, 6) * self.m

    class Replaced:
        def forward(self, X):
            X = np.exp(X)
            return np.maximum(X, 1)

    assert compared_constants(Shifted()) == [3.0, 9.0]
    assert compared_constants(Ordered()) == [1.0, 3.0]
    assert compared_constants(Replaced()) == []


@pytest.mark.parametrize("seed", range(5))
def test_a_bound_read_through_a_rebound_input_is_named_and_its_twin_passes(seed):
    """review22: relu6(X + 3) written ``X = X + 3; np.clip(X, 0, 6)`` (bounds -3 and 3, read as 0 and 6): the backward
    forgetting the clip at 3 was named missing-local-derivative (stale-cache at seed 0); now bound-side at seeds
    0-4, its correct twin PASS."""
    bad, X, _ = load("rebound22.py::ReLU6ShiftedNoUpper")
    d = diagnose_layer(bad, X, seed=seed)
    assert not d.passed and d.codes[0] == "bound-side", d.report()
    good, X, _ = load("rebound22.py::ReLU6Shifted")
    assert diagnose_layer(good, X, seed=seed).passed

def test_straddled_values_sit_on_both_sides_of_each_constant():
    z = np.random.default_rng(0).standard_normal((6, 5))
    x = V.straddled_values(z, [-4.0, 4.0])
    for i, c in enumerate([-4.0, 4.0]):
        part = x.ravel()[i::2]
        assert (part > c).sum() >= 7 and (part < c).sum() >= 7
        assert np.all(np.abs(part - c) >= V.STRADDLE_GAP)


@pytest.mark.parametrize("cls", ["ReLU6NoUpper", "HardSigmoidNoUpper", "SoftplusThresholdZero", "ClampedExpNoMask"])
def test_bounds_beyond_the_drawn_inputs_fail_at_every_seed(cls):
    """H2: a bound forgotten in backward where standard-normal inputs never go passed (HardSigmoidNoUpper failed at
    seed 2 alone); now FAIL at seeds 0-4, named "bound-side" (M5: not "derivative evaluated at the output Y")."""
    for seed in range(5):
        layer, X, _ = load(f"tester21s.py::{cls}")
        d = diagnose_layer(layer, X, seed=seed)
        assert not d.passed and d.codes[0] == "bound-side", (seed, d.report())


@pytest.mark.parametrize("cls", ["ReLU6", "HardSigmoid", "SoftplusThreshold", "ClampedExp", "SoftplusThreshold40",
                                 "Hardtanh"])
def test_correct_bounded_layers_pass_at_every_seed(cls):
    for seed in range(5):
        layer, X, _ = load(f"tester21s.py::{cls}")
        d = diagnose_layer(layer, X, seed=seed)
        assert d.passed, (seed, d.report())


def test_header_says_where_the_layer_was_checked_again():
    """The header names the constant, the drawn range and the verdict at the second point (CLI, sandboxed)."""
    p = run_here("check", f"{BUGGY}::ReLU6NoUpper", "--input-shape", "6,5")
    text = flat(p)
    assert p.returncode == 1, text
    assert ("forward compares X with 6, beyond the drawn inputs (|x| <= 2.7): also checked at inputs around 6 "
            "(entries on both sides, at least 0.1 away); the layer passes at the drawn inputs but FAILS around 6") \
        in text, text
    assert "dX is wrong at exactly the 15 entries where X > 6" in text and "its mask forgets the bound at 6" in text
    p = run_here("check", f"{BUGGY}::ReLU6", "--input-shape", "6,5", "--tape")
    text = flat(p)
    assert p.returncode == 0 and "also checked at inputs around 6" in text and "FAILS around" not in text, text
    p = run_here("check", f"{BUGGY}::Hardtanh", "--input-shape", "6,5")  # -1 and 1 inside the drawn range
    assert p.returncode == 0 and "also checked at inputs around" not in flat(p), flat(p)


@pytest.mark.parametrize("cls, words", [
    ("SquaredReLUNo2", "dX is 0.5 times the correct gradient: a constant factor is wrong somewhere (2 times too "
                       "small); it equals the batch size 2 here by chance: the same factor at a batch of 3"),
    ("SoftplusBetaExtraBeta", "dX is 2 times the correct gradient, and 2 is self.beta"),
    ("Upsample2xMean", "dX is 0.25 times the correct gradient, and 0.25 = 1/4 comes from the outputs per input, Y.size / "
                       "X.size (X of shape (2, 3, 3, 4)); at X of shape (2, 4, 5, 7) it is 0.25")])  # session 45
def test_factor_equal_to_the_batch_size_by_chance(cls, words):
    """M2: named "an extra 1/batch" / "a 1/batch is missing" though the factor is the same at another batch size."""
    layer, X, _ = load(f"tester21s.py::{cls}")
    d = diagnose_layer(layer, X)
    assert not d.passed and words in d.sentence() and "1/batch is missing" not in d.sentence(), d.sentence()


def test_one_gradient_for_the_one_float_input_beside_an_integer_one():
    """M1: forward(logits, y) with y integer (--indices 1:4) and backward returning dlogits alone was "expected a
    tuple of 2 gradients"; --help says an integer input gets no gradient: checked, PASS, and the bug FAILs."""
    p = run_here("check", f"{BUGGY}::SelectLogProb", "--input-shape", "5,4;5", "--indices", "1:4")
    assert p.returncode == 0 and "PASS: SelectLogProb" in flat(p), flat(p)
    p = run_here("check", f"{BUGGY}::SelectLogProbNoSoftmaxTerm", "--input-shape", "5,4;5", "--indices", "1:4")
    assert p.returncode == 1 and "FAIL: SelectLogProbNoSoftmaxTerm" in flat(p), flat(p)
    x, y = np.zeros((5, 4)), np.zeros(5, dtype=np.int64)
    got = V.check_input_grads(np.ones((5, 4)), owner="L", produced_by="backward(dY)", names=["logits", "y"],
                              inputs=[x, y], keys=["logits", "y"])
    assert list(got) == ["logits"] and np.all(got["logits"] == 1)
    with pytest.raises(Exception, match=r"None in the place of an integer input: y"):
        V.check_input_grads((np.ones((5, 4)),), owner="L", produced_by="backward(dY)", names=["logits", "y"],
                            inputs=[x, y], keys=["logits", "y"])


def test_pair_whose_cache_is_none_and_backward_needs_nothing_is_checked():
    """M3: posadd_forward returns (x + P, None), posadd_backward(dout, cache) -> (dout, dout.sum(0)): was NOT
    CHECKED (exit 3, "returned cache None"); now PASS, and the mean-over-batch bug FAILs. A backward reading module
    globals is still refused (tests/test_cli_cache_and_init.py)."""
    p = run_here("check", f"{BUGGY}::posadd", "--input-shape", "2,3,4;3,4")
    assert p.returncode == 0 and "PASS: posadd" in flat(p), flat(p)
    p = run_here("check", f"{BUGGY}::posaddmean", "--input-shape", "2,3,4;3,4")
    assert p.returncode == 1 and "FAIL: posaddmean" in flat(p), flat(p)
    # session 22: the factor 1/2 follows the batch (1/3 at a batch of 3, P kept as checked): an extra 1/batch, no
    # longer "an extra 1/sqrt(d) factor ... or 1/batch" for d = 4 = 2**2
    # (at a batch of 2 the sentence names both readings, 1/batch and a plain 1/2: fixs27)
    assert "dP is 2 times too small (batch size 2; or a plain factor 1/2" in flat(p) and "an extra 1/batch" in flat(p)
    assert "sqrt" not in flat(p), flat(p)


def test_time_major_rnn_with_the_last_steps_gradient_alone():
    """M4: no convolution windows in an RNN (was "col2im assigns (=) ... where it must add"), and the last time
    step named, not the last sample."""
    p = run_here("check", f"{BUGGY}::TimeMajorRNNLastStepOnly", "--input-shape", "4,3,2")
    text = flat(p)
    assert p.returncode == 1, text
    assert "dX, dWx, dWh, db are the gradient from the last time step's dY alone" in text, text
    assert "col2im" not in text and "window" not in text and "last sample" not in text, text


def test_loss_without_a_named_pattern_gets_the_worst_element_line():
    """M6: a loss FAIL printed no diagnosis line; now the line layers get (how many elements, the worst one). Session
    22 names M6's own example (smooth L1's missing 1/beta, huber-branch-factor), so a log-cosh with tanh(2 d) for
    tanh(d) shows the line."""
    p = run_here("check", f"{BUGGY}::LogCoshTanh2", "--loss", "--input-shape", "6,3")
    text = flat(p)
    assert p.returncode == 1, text
    assert ("diagnosis: dy_pred differs from the correct gradient in 18 of 18 elements (no known bug pattern); the "
            "largest error is at dy_pred[0, 2]: got 0.00635652, expected 0.00318873.") in text, text
    p = run_here("check", f"{BUGGY}::SmoothL1Beta2NoBeta", "--loss", "--input-shape", "6,3")
    text = flat(p)
    assert p.returncode == 1 and "no known bug pattern" not in text, text
    assert ("diagnosis: dy_pred is right where |y_pred - y_true| > 2 but 2 times the correct gradient at the 14 of 18 "
            "entries where |y_pred - y_true| < 2: forward is a smooth L1 loss with beta 2") in text, text
    assert "the 1/beta is missing; use np.where(np.abs(r) < beta, r / beta, np.sign(r))" in text, text


def test_float32_parameter_warning_once_with_the_layer_name():
    """L1: each float32 parameter's warning came twice, the second as ".W is float32" (no layer name). newuser36 M1:
    when the verdict is the float64 copy's, as here, the warning (its numerical gradient "only float32-accurate")
    contradicted the copy's note and is not shown; the first check's warnings are kept as they came otherwise."""
    import warnings

    from gradcheck.check_command import _float32_warnings

    p = run_here("check", f"{BUGGY}::LinearF32", "--input-shape", "6,5")
    assert p.returncode == 0 and "its float32 code checked on a float64 copy" in p.stdout, p.stdout
    assert "is float32; it is perturbed" not in p.stderr, p.stderr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("LinearF32.W is float32; it is perturbed in place", UserWarning, stacklevel=2)
        warnings.warn("another warning", UserWarning, stacklevel=2)
    for copied, said in [(True, ["another warning"]), (False, [str(w.message) for w in caught])]:
        with warnings.catch_warnings(record=True) as shown:
            _float32_warnings(caught, copied=copied)
        assert [str(w.message) for w in shown] == said


def test_slice_start_off_by_one_is_a_shift():
    """L4: dX[:, 1::2] where dX[:, ::2] is due was "two pieces joined in the wrong order"."""
    layer, X, _ = load("tester21s.py::EveryOtherOffByOne")
    d = diagnose_layer(layer, X)
    assert d.codes[:1] == ["permuted"] and "its entries sit 1 place later along axis 1 than they must (a shift, zeros " \
        "moved in): an index or slice start off by 1" in d.sentence() and "two pieces" not in d.sentence(), d.sentence()


def test_jacobian_png_of_a_layer_with_no_mode_names_none(tmp_path):
    """L6: a forward with no training switch wrote NAME-jacobian-eval.png."""
    p = run_here("check", f"{BUGGY}::SoftplusThreshold", "--input-shape", "3,4", "--tape", "--jacobian", "--plots",
                 str(tmp_path))
    assert p.returncode == 0, flat(p)
    assert (tmp_path / "SoftplusThreshold-jacobian.png").stat().st_size > 10_000
    assert not list(tmp_path.glob("*-jacobian-*.png"))


class _TinyReLU6NoUpper:
    """1e-12 ReLU6 whose backward forgets the clip at 6: every |dX| is below the default atol, so the check compares
    dX at its own scale (review22)."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        self.X = X
        return 1e-12 * np.clip(X, 0, 6)

    def backward(self, dY):
        return 1e-12 * dY * (self.X > 0)  # BUG: gradient above 6


def test_the_bound_is_named_with_the_atol_the_check_compared_with():
    """The entries the bound-side finding counts wrong are those the check failed (its rule and the tensor's own
    atol, 4e-21 here): with max(res.atol, ATOL_FLOOR) = 1e-9 none was, and the diagnosis was "no known bug
    pattern" (review22)."""
    from gradcheck._adapters import adapt

    X = np.random.default_rng(0).standard_normal((6, 5))
    d = diagnose_layer(adapt(_TinyReLU6NoUpper(), [X])[0], X)
    assert not d.passed and d.codes[0] == "bound-side", d.report()
    assert d.result.atol_of("dX") < 1e-15, d.result.atol_of("dX")


class _MeanScale:
    """Y = X / N, N the batch size; backward forgets the 1/N (a true 1/batch, at N = 2 with d = 4 = N * N)."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X):
        return X / X.shape[0]

    def backward(self, dY):
        return dY  # BUG: 1/N missing


class _ScaledProduct:
    """Y = (X @ W) / sqrt(4); backward's dW forgets the 1/sqrt(d) (d = 4 = N * N at a batch of 2)."""

    def __init__(self):
        self.params = {"W": np.random.default_rng(1).standard_normal((4, 4))}
        self.grads = {}

    def forward(self, X):
        self.X = X
        return X @ self.params["W"] / 2.0

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY  # BUG: / 2 missing
        return dY @ self.params["W"].T / 2.0


def test_a_factor_that_follows_the_batch_is_a_1_over_batch_not_sqrt_d():
    """M2's check at one sample more also tells 1/sqrt(d) from 1/batch (review22): a factor 2 = N that is 3 at a
    batch of 3 is the missing 1/batch, which the diagnosis said second, after "a 1/sqrt(d) factor is missing ... a
    check at another batch size tells which" (that check had run); a parameter's gradient, which the second batch
    size does not tell, keeps both readings."""
    from gradcheck._adapters import adapt

    X = np.random.default_rng(0).standard_normal((2, 4))
    d = diagnose_layer(adapt(_MeanScale(), [X])[0], X)
    assert not d.passed and d.codes == ["factor-batch"], d.report()
    d = diagnose_layer(adapt(_ScaledProduct(), [X])[0], X)
    assert not d.passed and d.codes == ["factor-sqrt-d"], d.report()


_PAIR = '''
import numpy as np


def relu6_forward(x):
    return np.clip(x, 0, 6), x


def relu6_backward(dout, cache):
    return dout * ((cache > 0) & (cache < 6))


def relu6bug_forward(x):
    return np.clip(x, 0, 6), x


def relu6bug_backward(dout, cache):
    return dout * (cache > 0)  # BUG: the clip at 6 forgotten
'''


def test_a_function_pairs_bounds_are_read_from_the_students_forward(tmp_path):
    """A CS231n pair's constants are read from the student's NAME_forward, not the adapter's forward(*xs) (review22:
    none was read, so relu6 whose backward forgets the clip at 6 PASSED in the sandbox, and in this process too);
    the correct pair still passes."""
    import importlib.util

    from gradcheck._adapters import FunctionPair

    (tmp_path / "pair.py").write_text(_PAIR)
    spec = importlib.util.spec_from_file_location("review22_pair", tmp_path / "pair.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert compared_constants(FunctionPair(mod.relu6bug_forward, mod.relu6bug_backward, {})) == [0.0, 6.0]
    p = run_here("check", f"{tmp_path / 'pair.py'}::relu6bug", "--input-shape", "6,5")
    assert p.returncode == 1 and "wrong at exactly the 15 entries where x > 6" in flat(p), flat(p)
    p = run_here("check", f"{tmp_path / 'pair.py'}::relu6", "--input-shape", "6,5")
    assert p.returncode == 0 and "PASS: relu6" in flat(p), flat(p)
