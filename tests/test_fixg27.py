"""review27g's findings on session 26's gradcheck diff, fixed (session 27, fixg27); each test fails without its fix.

H1 a float64 layer casting its output to float32 keeps its FAIL however the cast is written and wherever (a
sub-layer's method); M1 the float64 copy renames only numpy's dtypes; M2 the grader's bias advice only for a
parameter; M3 check_layer's penalty split keeps twin='auto'; M6 fast mode at large inputs; L1 one Richardson formula,
one convergence rule, one backward-twice measure; L2 the cache note's advice names no book's variable; and tests
that kill review27g's surviving mutants (repro/mutants.py; the others sit in the files its mutation run reads:
test_grading_fixn26.py, test_cmu_layers_s26.py, test_cache_rewrite_s26.py, test_dlfs2_s25.py)."""

import textwrap
from pathlib import Path

import numpy as np
import pytest

import manualprop as mp
from gradcheck import check_layer, diagnose_layer
from gradcheck._float64_copy import cast_lines, float64_text
from gradcheck._kernel import kernel, richardson_step
from gradcheck.compare import EXTRAPOLATION_ROUNDOFF, extrapolated, own_scale_atol, richardson
from gradcheck.diagnose import is_bias_gradient
from gradcheck.grading import checks
from gradcheck.sources import CACHE_REWRITTEN, backward_twice, twice_difference

ROOT = Path(__file__).resolve().parents[1]

LINEAR = '''import numpy as np


class Linear:
    def __init__(self, n_in=4, n_out=3):
        rng = np.random.default_rng(0)
        self.params = {{"W": rng.standard_normal((n_in, n_out)), "b": np.zeros(n_out)}}
        self.grads = {{}}

    def forward(self, X, training=False):
        self.X = X
        return {ret}

    def backward(self, dY):
        self.grads = {{"W": self.X.T @ dY, "b": dY.sum(axis=0)}}
        return dY @ self.params["W"].T


class Model:
    def __init__(self):
        self.layers = [Linear(4, 3), Linear(3, 2)]

    def forward(self, X, training=False):
        for layer in self.layers:
            X = layer.forward(X)
        return X

    def backward(self, dY):
        for layer in reversed(self.layers):
            dY = layer.backward(dY)
        return dY
'''
Y = 'X @ self.params["W"] + self.params["b"]'
CASTS = [f"({Y}).astype(np.float32)", f"({Y}).astype(dtype=np.float32)", f"np.asarray({Y}, dtype=np.float32)",
         f"np.array({Y}, dtype='f')", f"({Y}).astype('float32')", f"np.float32({Y})"]


def _check(path, target, shape="5,4"):
    """``gradcheck check path::target`` in ``path``'s folder, in this process (``test_cli.run_here``: the same
    parser, checks and report as a gradcheck process, whose start was most of each check's time)."""
    from test_cli import run_here

    p = run_here("check", f"{path.name}::{target}", "--input-shape", shape, cwd=path.parent)
    return p.returncode, p.stdout + p.stderr


@pytest.mark.parametrize("ret", CASTS)
def test_every_spelling_of_a_cast_is_one(tmp_path, ret):
    """H1: astype(dtype=...), np.asarray(Y, dtype=...) and np.array(..., dtype='f') were taken for declared float32."""
    f = tmp_path / "lin.py"
    f.write_text(LINEAR.format(ret=ret))
    assert cast_lines(str(f), "Linear") == [f"line 12: return {ret}"]
    assert cast_lines(str(f), "Model") == [f"line 12: return {ret}"]  # its sub-layers' methods


def test_storage_declared_float32_is_no_cast(tmp_path):
    """The float32 code the copy exists for: an array made float32 and filled, weights cast in __init__."""
    f = tmp_path / "lin.py"
    f.write_text(LINEAR.format(ret=f"np.empty((X.shape[0], 3), dtype='f') + {Y}").replace(
        'rng.standard_normal((n_in, n_out))', "rng.standard_normal((n_in, n_out)).astype(np.float32)"))
    assert cast_lines(str(f), "Linear") == [] and cast_lines(str(f), "Model") == []


@pytest.mark.parametrize("ret", CASTS[1:3])
def test_a_cast_in_the_class_or_its_sub_layers_keeps_its_fail(tmp_path, ret):
    """H1 end to end: were exit 0 (PASS on the float64 copy) for the Linear and for a Model of two of them."""
    f = tmp_path / "lin.py"
    f.write_text(LINEAR.format(ret=ret))
    for target in ("Linear", "Model"):
        code, out = _check(f, target)
        assert code == 1 and f"FAIL: {target}: wrong dtype of Y." in out, out


def test_a_class_attribute_named_half_is_not_renamed(tmp_path):
    """M1: ``half = 3`` read as self.half was run as self.double (AttributeError, exit 3). (A cast to np.half itself is
    the student's rounding since fixs28, kept by the copy: a float32 cast makes the copy here; since session 29 the
    copy judges float32 code throughout, so the GLU holds a float32 gate g, as Deep Learning from Scratch 2's layers
    hold float32 weights.)"""
    text = "import numpy as np\nclass G:\n    half = 3\n    def f(self, x):\n        return x[:self.half].astype(np.single)\n"
    out, lines = float64_text(text)
    assert "self.half" in out and "np.double" in out and lines == [5]
    assert float64_text(text.replace("np.single", "np.half")) is None  # float16: kept as written
    assert float64_text("class G:\n    half = 3\n    def f(self, x):\n        return x[:self.half]\n") is None
    f = tmp_path / "glu.py"
    f.write_text(textwrap.dedent('''\
        import numpy as np


        class GLU:
            half = 3

            def __init__(self):
                self.params = [np.linspace(0.5, 1.5, self.half).astype('f')]
                self.grads = [np.zeros_like(self.params[0])]

            def forward(self, x):
                a, b = x[..., :self.half], x[..., self.half:]
                g, s = self.params[0], 1 / (1 + np.exp(-b))
                self.cache = (a, s)
                out = np.empty(a.shape, dtype='f')
                out[...] = a * s * g
                return out

            def backward(self, dout):
                a, s = self.cache
                g = self.params[0]
                self.grads[0][...] = np.sum(dout * a * s, axis=0)
                return np.concatenate([dout * s * g, dout * a * g * s * (1 - s)], axis=-1)
        '''))
    code, out = _check(f, "GLU", "4,6")
    assert code == 0 and "computes in float32" in out and "attribute 'double'" not in out, out


class TwiceMeanMSE(mp.MeanSquaredError):
    def forward(self, y_true, y_pred):
        self._n = len(y_true)
        return super().forward(y_true, y_pred)

    def backward(self):
        return super().backward() / self._n


def test_a_losss_extra_one_over_n_is_no_bias_mean():
    """M2: a loss's dy_pred over 1-D predictions was told "use dY.sum(...) instead of dY.mean(...)"."""
    rng = np.random.default_rng(0)
    v = checks.loss_gradient(TwiceMeanMSE(), rng.standard_normal(8), rng.standard_normal(8), mp.MeanSquaredError(),
                             points=1)
    msg = v.parts[0].message
    assert not v.passed and "extra 1/batch" in msg and "dY.sum" not in msg and "mean over the batch" not in msg, msg
    assert is_bias_gradient("dy_pred", (8,)) and not is_bias_gradient("dy_pred", (8,), parameter=False)


def test_an_inputs_row_gets_no_bias_advice():
    """M2: an initial state's dh0 of shape (1, H) (an input, not a parameter) told to sum instead of mean."""
    from gradcheck.grading.diagnosis import diagnose
    E = np.arange(1.0, 5.0).reshape(1, 4)
    assert "dY.sum" in diagnose("dh0", E / 8, E, batch_size=8)  # a caller that does not know: by the name
    msg = diagnose("dh0", E / 8, E, batch_size=8, parameter=False)
    assert "dY.sum" not in msg and "8 times too small" in msg, msg
    assert "dY.sum" not in diagnose("db", E / 8, E, batch_size=8, loss=True)


class L2Linear:
    def __init__(self, in_features=4, out_features=3, l2=0.0):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((in_features, out_features)), "b": rng.standard_normal(out_features)}
        self.grads, self.l2 = {}, l2

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY + 2 * self.l2 * self.params["W"], "b": dY.sum(axis=0)}
        return dY @ self.params["W"].T


L2Linear.__name__ = "Linear"  # twin="auto" finds autoprop.layers.Linear by the class's name


def test_the_penalty_split_keeps_the_tape_twin():
    """M3: with l2 = 0.1 no tape comparison was made, the note "no class autoprop.layers._DataPart"."""
    X = np.random.default_rng(1).standard_normal((5, 4))
    r = check_layer(L2Linear(l2=0.1), X, twin="auto", init={"in_features": 4, "out_features": 3})
    pairs = {c.pair for rec in r.records for c in rec.comparisons}
    assert "manual-vs-tape" in pairs and "_DataPart" not in str(r.twin_note), (pairs, r.twin_note)
    tape = [c for rec in r.records for c in rec.comparisons if c.pair == "manual-vs-tape"]
    assert tape and all(c.passed for c in tape)  # the data part agrees with the tape's gradient of forward


@pytest.mark.parametrize("seed", [2, 12])
def test_a_correct_softmax_at_large_inputs_passes_in_fast_mode(seed):
    """M6: seed 2 FAILed check_layer(mode="fast") (own-scale atol 1.5e-13 below Richardson's round-off)."""
    X = 800.0 + 40 * np.random.default_rng(seed).standard_normal((6, 5))
    r = check_layer(mp.Softmax(), X, twin=None, mode="fast")
    assert r.passed, r.notes
    assert any("times the round-off" in n and "Richardson" in n for n in r.notes) or seed != 2, r.notes


def test_a_wrong_softmax_at_large_inputs_still_fails_in_fast_mode():
    class Off(mp.Softmax):
        def backward(self, dY):
            return super().backward(dY) * (1 + 1e-4)
    X = 800.0 + 40 * np.random.default_rng(2).standard_normal((6, 5))
    assert not check_layer(Off(), X, twin=None, mode="fast").passed
    assert not diagnose_layer(Off(), X).passed


def test_own_scale_atol_covers_the_extrapolations_round_off():
    assert own_scale_atol(1e-3, 1e-13) == pytest.approx(1e-12)
    assert own_scale_atol(1e-3, 1e-13, extrapolating=True) == pytest.approx(EXTRAPOLATION_ROUNDOFF * 1e-13)
    assert EXTRAPOLATION_ROUNDOFF == 36  # R - R' up to 9 C(h)'s round-off, a quarter of atol


def test_one_richardson_formula():
    """L1: the kernel's richardson method and compare.richardson are the same formula (one place)."""
    c1, c2, c4 = np.array([1.04, 2.0]), np.array([1.01, 2.5]), np.array([1.0025, 2.6])
    R, R2 = richardson(c1, c2, c4)
    assert np.array_equal(R, richardson_step(c1, c2)) and np.array_equal(R2, richardson_step(c2, c4))
    v, p = [c1, 0 * c1, c2, 0 * c2], [1.0, 0.0, 1.0, 0.0]  # central quotients (v0 - v1)/(p0 - p1) = c1, c2
    assert np.array_equal(kernel("richardson", v, p)[0], R)


def test_the_convergence_test_is_a_quarter_of_the_tolerance():
    """Kills extrap_no_convergence and extrap_loose_quarter: R - R' within a quarter of atol converges, beyond not."""
    # R = (4 c2 - c1) / 3, R' = (4 c4 - c2) / 3; c1 = c2 = 1, c4 = 1 + 3d/4: R = 1, R' = 1 + d
    for d, ok in ((0.2e-9, True), (0.3e-9, False), (3e-9, False)):
        R, conv = extrapolated(1.0, 1.0, 1.0 + 0.75 * d, 0.0, 1e-9)
        assert bool(conv) is ok, d
    assert not extrapolated(np.nan, 1.0, 1.0, 1e-6, 1e-9)[1]


def test_a_wrong_gradient_is_not_rescued_where_the_extrapolation_has_not_converged():
    """Kills extrap_no_convergence in check: a Softmax 1e-4 too large at logits near 800 with a kink-free but
    non-converging extrapolation fails; the correct one passes."""
    X = 800.0 + 40 * np.random.default_rng(0).standard_normal((6, 5))

    class Off(mp.Softmax):
        def backward(self, dY):
            return super().backward(dY) * (1 + 3e-5)
    assert check_layer(mp.Softmax(), X, twin=None, mode="full").passed
    assert not check_layer(Off(), X, twin=None, mode="full").passed


class CacheWriter:
    """A layer whose backward scales its cached xhat in place (the CS231n batchnorm bug in small)."""

    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.xhat = X * 2.0
        return self.xhat.copy()

    def backward(self, dY):
        self.xhat *= 2.0
        return dY * self.xhat / self.xhat * 2.0 + 0 * self.xhat.sum()


class TupleCacheWriter(CacheWriter):
    def backward(self, dY):
        self.xhat *= 2.0
        return dY * 2.0, self.xhat.sum(axis=0)


def test_one_backward_twice_measure():
    """L1: check's note and the grader's test read one measure (sources.backward_twice)."""
    X = np.ones((2, 3))
    a, b = backward_twice(TupleCacheWriter(), [X])
    assert len(a) == 2 and twice_difference(a, b) == pytest.approx(8.0)  # column sums 2 * 4 vs 2 * 8
    a, b = backward_twice(mp.Linear(3, 2, rng=0), [X])
    assert twice_difference(a, b) == 0.0


def test_backward_repeatable_reads_a_pairs_tuple():
    """H2: a CS231n pair's backward returns (dx, dgamma, dbeta): each compared, the cache write found."""
    X = np.ones((2, 3))
    v = checks.backward_repeatable(TupleCacheWriter(), [X], dY=np.ones((2, 3)))
    assert not v.passed and "max difference 8" in v.parts[0].message, v.parts[0].message
    assert "self.p" not in v.parts[0].message and "x = x.copy()" in v.parts[0].message


def test_the_cache_note_names_no_books_variable():
    """L2: "e.g. dx = ys.copy()" (Deep Learning from Scratch 2's name) was advised for any code."""
    text = CACHE_REWRITTEN.format(where="f modified its cache (cache[0])", twice="")
    assert "ys" not in text and "x = x.copy()" in text and "copy before writing" in text


def test_the_cs231n_assignment_has_a_backward_twice_test():
    """H2: without one, a batchnorm_backward editing its cached xhat scored 47 / 47 and nothing was said."""
    text = (ROOT / "assignments" / "cs231n_layers" / "tests" / "test_cs231n_layers.py").read_text()
    assert "grade.backward_repeatable(batchnorm(student)" in text


def test_an_unconverged_extrapolation_replaces_nothing():
    """Kills extrap_no_convergence: R = 2 agrees with a wrong analytic 2 but R' = 0.75 (no h^2 law), and the
    differences at every smaller step go on alternating 1.75, 1 (never settling, however deep the walk): the central
    difference 1 is kept and the element still fails."""
    from types import SimpleNamespace

    from gradcheck.check import _extrapolate
    sc = SimpleNamespace(grad=np.array([1.0]))

    def alternating(idx, frac):
        return SimpleNamespace(grad=np.array([1.75 if round(np.log2(1 / frac)) % 2 else 1.0]))

    done, unsettled = _extrapolate({"manual": np.array([2.0])}, sc, 1e-6, 1e-9, np.array([True]),
                                   {"manual": np.array([False])}, alternating)
    assert not done.any() and not unsettled.any() and sc.grad[0] == 1.0
    steps = {0.5: np.array([1.75]), 0.25: np.array([1.9375]),  # R' = (4 * 1.9375 - 1.75) / 3 = 2: converged,
             0.125: np.array([1.984375])}  # and confirmed one step down (the h^2 law's: loss49, verify48c H4)
    done, _ = _extrapolate({"manual": np.array([2.0])}, sc, 1e-6, 1e-9, np.array([True]), {"manual": np.array([False])},
                           lambda idx, frac: SimpleNamespace(grad=steps[frac]))
    assert done.all() and sc.grad[0] == 2.0


class CenteredWriter(CacheWriter):
    """dx = (dY - mean dY) * xhat, xhat scaled in place: zero for a constant dY, as batch norm's dx is."""

    def backward(self, dY):
        self.xhat *= 2.0
        return (dY - dY.mean(axis=0)) * self.xhat


def test_the_second_backward_is_measured_with_a_random_upstream_gradient():
    """With dY = ones (as before) batch norm's dx is zero both times: the cs231n note said "max difference 4.63e-16"
    for a backward that doubles its cached xhat."""
    a, b = backward_twice(CenteredWriter(), [np.random.default_rng(1).standard_normal((4, 3))])
    assert twice_difference(a, b) > 0.1
