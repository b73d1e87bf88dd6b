"""Session 22's tester's findings (tester22s, fixer fixs22) through the CLI in this process and through
:func:`gradcheck.diagnose.diagnose_layer`: a square weight symmetric at init hides a missing ``.T`` (H1)."""

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck._switch_reach import compared_constants
from gradcheck.diagnose import _transpose_blind, diagnose_layer
from tests.buggy_layers import load

BUGGY = "tests/buggy_layers/tester22s.py"


@pytest.mark.parametrize("cls", ["SymTanhNoT", "SeedSymLinearNoT", "EyeDenseNoT"])
def test_symmetric_weight_at_init_is_checked_at_drawn_values(cls):
    """H1: dX = d @ W where d @ W.T is due passed while W was symmetric (the identity, (A + A.T) / 2); checked again
    at drawn values it FAILs, named the transposed weight, and the header says why."""
    p = run_here("check", f"{BUGGY}::{cls}", "--input-shape", "5,4")
    text = both(p)
    assert p.returncode == 1 and f"FAIL: {cls}" in text, text
    assert "symmetric at init" in text and "hides a missing .T" in text and "FAILS at the drawn ones" in text, text
    assert "transposed weight" in text, text


@pytest.mark.parametrize("cls", ["SymTanh", "SeedSymLinear", "EyeDense"])
def test_symmetric_weight_correct_twin_passes_at_both_points(cls):
    layer, X, kw = load(f"tester22s.py::{cls}")
    d = diagnose_layer(layer, X, **kw)
    assert d.passed and d.drawn == ["W"] and not d.drawn_failed, d.report()
    assert d.drawn_words in ("symmetric", "identity"), d.drawn_words


def test_transpose_blind_weights():
    """Square, 2 x 2 or more, equal to its transpose within 1e-6 relative, not constant (that rule is its own)."""
    A = np.random.default_rng(0).standard_normal((3, 3))
    assert _transpose_blind(A + A.T) and _transpose_blind(np.eye(3)) and _transpose_blind(np.diag([1.0, 2, 3]))
    assert not _transpose_blind(A) and not _transpose_blind(np.ones((3, 3)))  # constant: constant_params' rule
    assert not _transpose_blind(np.eye(1)) and not _transpose_blind(np.eye(3)[:2]) and not _transpose_blind(A[0])
    assert not _transpose_blind(np.eye(3, dtype=int))


def test_weight_behind_a_property_is_paired_with_its_public_gradient():
    """H2: W a property over self._w and backward's self.dW twice the right value: "_w is a parameter with no gradient
    to check" then PASS before; now dW is checked (named dW, the student's name) and FAILs as a factor 2."""
    p = run_here("check", f"{BUGGY}::PropWDouble", "--input-shape", "5,3")
    text = both(p)
    assert p.returncode == 1 and "FAIL: PropWDouble: gradient mismatch in dW." in text, text
    assert "dW is 2 times the correct gradient" in text and "no gradient to check" not in text, text
    p = run_here("check", f"{BUGGY}::PropW", "--input-shape", "5,3")
    assert p.returncode == 0 and "PASS: PropW: every gradient (dX, dW) matches" in both(p), both(p)


@pytest.mark.parametrize(("cls", "what", "got"), [("IntWeights", "W", "ndarray of dtype int64"),
                                                  ("IntScale", "s", "int")])
def test_integer_attribute_with_a_gradient_is_refused_as_a_params_dict_entry_is(cls, what, got):
    """H3: an integer attribute backward writes a gradient for is a parameter: exit 3 with the params dict's message
    (it was skipped: "a class with forward/backward and no parameters", then PASS with a wrong dW or ds)."""
    p = run_here("check", f"{BUGGY}::{cls}", "--input-shape", "5,4" if cls == "IntScale" else "5,3")
    text = both(p)
    assert p.returncode == 3, text
    assert (f"{cls}.{what} must be a numpy float array (it is perturbed in place to compute the numerical "
            f"gradient); got {got} (backward writes a gradient for it, so it is a parameter). Write it as float") \
        in text, text


def test_integer_counter_beside_a_time_step_is_no_parameter():
    """self.t = 0 (an int) beside self.dt = 0.1 that backward never writes: not a parameter, the layer checked."""
    p = run_here("check", f"{BUGGY}::IntCounter", "--input-shape", "5,4")
    assert p.returncode == 0 and "PASS: IntCounter: every gradient (dX, ds) matches" in both(p), both(p)


def test_bound_read_through_a_local_absolute_value():
    """H4: a = np.abs(X); a <= self.delta gives the bounds -delta and delta (as np.abs(X) <= delta does)."""
    assert compared_constants(load("tester22s.py::HuberAbs")[0].obj) == [-5.0, 5.0]

    class Shifted:
        c = 2.0

        def forward(self, x):
            m = np.abs(2 * x - 1)  # |2x - 1| <= 2 at x = 1.5 and -0.5
            m = m + 0  # no longer an absolute value of x alone: not read
            return np.where(np.abs(2 * x - 1) <= self.c, x, 0) + np.where(m > 7, x, 0)

    assert compared_constants(Shifted()) == [-0.5, 1.5]


def test_huber_layer_bound_beyond_the_drawn_inputs_is_checked():
    p = run_here("check", f"{BUGGY}::HuberAbsNoDelta", "--input-shape", "8,3")
    text = both(p)
    assert p.returncode == 1 and "also checked at inputs around -5 and 5" in text, text
    assert "dX is wrong at exactly the 12 entries where X < -5 or X > 5" in text, text


@pytest.mark.parametrize(("cls", "code"), [("Softshrink", 0), ("SoftshrinkZero", 1)])
def test_zeros_on_the_drawn_inputs_below_a_bound_is_no_dropped_mask(cls, code):
    """H4: a softshrink at 4 gives zeros on every drawn input; it was NOT CHECKED as a mask dropping every entry
    under the header "draws a random mask on every call". Now it is checked around -4 and 4: PASS, or FAIL named."""
    p = run_here("check", f"{BUGGY}::{cls}", "--input-shape", "8,3")
    text = both(p)
    assert p.returncode == code and "also checked at inputs around -4 and 4" in text, text
    assert "random mask" not in text and "every entry dropped" not in text and "drop rate" not in text, text
    if code:
        assert "dX is wrong at exactly the 12 entries where X < -4 or X > 4" in text, text


HUBER = """
import numpy as np

class Huber:
    def __init__(self, delta=1.0):
        self.delta = delta

    def forward(self, y_pred, y_true):
        self.r = r = y_pred - y_true
        a = np.abs(r)
        return np.where(a <= self.delta, 0.5 * r ** 2, self.delta * (a - 0.5 * self.delta)).mean()

    def backward(self):
        return np.where(np.abs(self.r) <= self.delta, self.r, DUE) / self.r.size
"""

CLIPPED = """
import numpy as np

class ClippedBCE:
    def __init__(self, eps=0.1):
        self.eps = eps

    def forward(self, y_pred, y_true):
        self.p = np.clip(y_pred, self.eps, 1 - self.eps)
        self.y, self.raw = y_true, y_pred
        return -np.mean(y_true * np.log(self.p) + (1 - y_true) * np.log(1 - self.p))

    def backward(self):
        g = (self.p - self.y) / (self.p * (1 - self.p)) / self.p.size
        return MASKED
"""


@pytest.mark.parametrize(("due", "code"), [("self.delta * np.sign(self.r)", 0), ("np.sign(self.r)", 1)])
def test_loss_residual_bound_beyond_the_drawn_data_is_checked(tmp_path, due, code):
    """H4 (--loss): |y_pred - y_true| <= delta at delta 5, beyond the drawn residuals: Huber whose backward forgets
    delta passed; now it is checked again with y_pred - y_true around -5 and 5."""
    f = student(tmp_path, HUBER.replace("DUE", due))
    p = run_here("check", f"{f}::Huber", "--loss", "--input-shape", "8,3", "--init", '{"delta": 5.0}')
    text = both(p)
    assert p.returncode == code, text
    assert "forward compares y_pred - y_true with -5 and 5, beyond the drawn data" in text, text
    # the failure there is named (left22's huber-branch-factor): delta missing at the 12 entries beyond it
    assert ("FAILS there" in text and "0.2 times the correct gradient at the 12 of 24 entries where "
            "|y_pred - y_true| > 5" in text and "the factor delta is missing" in text) == bool(code)


@pytest.mark.parametrize(("masked", "code"), [("g * (self.raw == self.p)", 0), ("g", 1)])
def test_loss_prediction_clip_inside_the_unit_range_is_checked(tmp_path, masked, code):
    """H4 (--loss --pred unit): np.clip(y_pred, 0.01, 0.99) with predictions drawn in (0.05, 0.95): a backward
    that forgets the clip's flat ends passed; now y_pred is also checked around 0.01 and 0.99, inside (0, 1)."""
    f = student(tmp_path, CLIPPED.replace("MASKED", masked))
    p = run_here("check", f"{f}::ClippedBCE", "--loss", "--input-shape", "8,3", "--pred", "unit", "--targets",
                 "labels:2", "--init", '{"eps": 0.01}')
    text = both(p)
    assert p.returncode == code and "also checked at y_pred around 0.01 and 0.99" in text, text


def test_bounded_straddle_stays_inside_the_range():
    from gradcheck.check_command import _bounded_straddle

    x = np.random.default_rng(0).uniform(0.05, 0.95, (8, 3))
    y = _bounded_straddle(None, x, [0.01, 0.99], (0.0, 1.0))
    assert y.min() > 0 and y.max() < 1
    for j, c in enumerate((0.01, 0.99)):  # entry i straddles constant i % 2, alternately above and below it
        mine = y.ravel()[j::2]
        assert (mine < c).any() and (mine > c).any() and np.all(np.abs(mine - c) >= 0.004), y


@pytest.mark.parametrize("extra", [[], ["--training"]])
def test_running_mean_updated_and_used_is_checked_with_its_state_put_back(extra):
    """M1: rm = 0.9 rm + 0.1 mean(X), then y = X - rm, exact backward dY - 0.1 dY.sum(0) / N: FAILed "forward changes
    the layer's state" though a copy taken before the call gives its output again (central differences on a copy:
    3.6e-10 off). Checked with rm put back before every forward: PASS, the note saying so."""
    p = run_here("check", f"{BUGGY}::EMACenter", "--input-shape", "5,4", *extra)
    text = both(p)
    assert p.returncode == 0 and "PASS: EMACenter" in text, text
    assert "self.rm put back to its value before the first call before every forward" in text, text
    assert "changes the layer's state" not in text, text


def test_running_mean_without_its_path_fails_on_the_gradient():
    """M1: the same layer whose backward returns dY (the path through rm missing) FAILs on dX, not on the state."""
    p = run_here("check", f"{BUGGY}::EMACenterNoMeanPath", "--input-shape", "5,4", "--training")
    text = both(p)
    assert p.returncode == 1 and "FAIL: EMACenterNoMeanPath: gradient mismatch in dX." in text, text
    assert "changes the layer's state" not in text, text
    layer, X, kw = load("tester22s.py::EMACenterNoMeanPath")
    d = diagnose_layer(layer, X, **kw)
    man, num = (d.result.gradients[k]["dX"] for k in ("manual", "numerical"))
    G = np.asarray(man)  # backward returned dY itself: the upstream gradient
    assert np.allclose(num, G - 0.1 * G.sum(0) / 5, rtol=1e-6, atol=1e-9)  # dX = dY - 0.1 dY.sum(0) / N


GUARDED_BCE = """
import numpy as np

class BCE:
    def forward(self, y_true, y_pred):
        self.y, self.p = y_true, np.clip(y_pred, 1e-7, 1 - 1e-7)
        return float(-np.mean(self.y * np.log(self.p) + (1 - self.y) * np.log(1 - self.p)))

    def backward(self):
        return (self.p - self.y) / (self.p * (1 - self.p)) / self.y.size
"""


def test_loss_clip_at_the_unit_range_edge_is_not_straddled(tmp_path):
    """review23: a BCE guarding its log with np.clip(p, 1e-7, 1 - 1e-7), exact backward, FAILed under --pred unit:
    no entry fits below 1e-7 at a distance the differences resolve, so the 'straddled' predictions were all clipped
    to 1e-3 and 0.999, where central differences of log at eps=6e-6 err by (h/p)**2/3 = 1.2e-5 > rtol (a relative
    6.1e-06 in the table). A bound within 0.01 of the range's edge is not straddled."""
    f = student(tmp_path, GUARDED_BCE)
    p = run_here("check", f"{f}::BCE", "--loss", "--input-shape", "8,3", "--pred", "unit", "--targets", "labels:2")
    text = both(p)
    assert p.returncode == 0 and "PASS: BCE" in text, text
    assert "also checked at" not in text, text


def test_bounded_straddle_plan_drops_bounds_at_the_edge():
    from gradcheck.check_command import _straddle_plan

    yp = np.random.default_rng(0).uniform(0.05, 0.95, (8, 3))
    info = {"compared_constants": [1e-7, 0.01, 0.99, 1 - 1e-7]}
    consts, base, _ = _straddle_plan(info, np.zeros((8, 3)), yp, "unit")
    assert consts == [0.01, 0.99] and base is None
