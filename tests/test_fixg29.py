"""Session 29 (review29's findings against session 28's fixes).

F32_FWD_DIFFERS: redteam28 F5's "float32-own" comparison (the float32 layer's own backward against its float64
copy's) was skipped, with a note and the copy's PASS kept, whenever it could not be made; a float32-only branch in
forward (``out *= 1.001``) beside one in backward (db doubled) then PASSed. A forward that differs from the copy's
beyond float32's round-off is now a FAIL (the copy does not stand for the code), and a comparison that cannot be made
is NOT CHECKED (exit 3); a dropout drawing from numpy's global generator draws the same mask in the layer and in its
copy (each in its own sandbox process), so it is still compared and passes.
"""

import re

import numpy as np
import pytest
from test_cli import both, run_here, student
from test_float32_own_s28 import AFFINE, INIT


def _fwd_differs(tmp_path, scale="1.001", w_seed=None):
    src = AFFINE.replace("FLOAT32_DB", "2 * np.sum(dout, axis=0)").replace(
        "        return out\n", f"        if self.W.itemsize == 4:\n            out *= {scale}\n        return out\n")
    if w_seed is not None:  # W drawn from a generator of its own: the same W at every run
        src = src.replace("np.random.randn(", f"np.random.RandomState({w_seed}).randn(")
    return student(tmp_path, src, "layers.py")


def _assert_forward_fail(p):
    """The float32-forward FAIL of a forward scaled by 1.001 in float32. Its "largest relative difference" is the
    largest over Y's 24 entries of ``|a - b| / (|a| + |b|)``, ``a`` the float32 code's Y (its W the copy's rounded to
    float32), ``b`` the copy's: 1e-3 / 2.001 = 0.0004998 on an entry far from 0, more on one where the sum
    ``X @ W`` cancels, as W's float32 rounding moves it by far more than 1e-3 of its size (0.0005 to 0.005 over
    random W). The layer draws W from numpy's global generator in ``__init__``, which its sandbox child (a fresh
    fork) seeds anew, so W, and that figure's second digit, change from run to run: asserted as at least 1e-3 /
    2.001 less float32's round-off and above the tolerance, not as printed (session 29: one CI run printed another
    figure; about 1 run in 75 does)."""
    text = both(p)
    flat = " ".join(text.split())
    assert p.returncode == 1, text
    assert "PASS:" not in text, text
    assert "FAIL: Affine: wrong result of Y." in text, text
    m = re.search(r"Affine's own float32 forward gives Y 1\.001 times its float64 copy's on the same inputs and "
                  r"parameters, from the same random draws \(largest relative difference ([0-9.e+-]+), above "
                  r"float32's round-off: tolerance 3\.5e-04\): the copy, whose gradients passed, does not stand for "
                  r"the float32 code", flat)
    assert m, text
    assert 0.00049 <= float(m.group(1)) <= 1.0, text  # relative_error lies in [0, 1]
    return float(m.group(1))


def test_a_float32_forward_differing_from_its_copy_fails(tmp_path):
    """Was: exit 0, PASS, "Its own float32 backward was not compared with the copy's: its forward differs" (the real
    db is twice the gradient). Y differs by a factor 1.001: a relative 5.0e-4 (1e-3 / 2.001) above 3.45e-4."""
    p = run_here("check", f"{_fwd_differs(tmp_path)}::Affine", "--input-shape", "8,5", "--init", INIT, "--seed", "0")
    _assert_forward_fail(p)


def test_the_forward_fail_s_largest_relative_difference_can_exceed_the_factor_s(tmp_path):
    """flaky30: the figure above was asserted as "0.0005"; with W = 0.1 RandomState(315).randn(5, 3) (one W in 75
    that numpy's global generator draws is like it) and the check's inputs of seed 0, one entry of ``X @ W``
    cancels and the figure is 0.00053: the same FAIL, with its figure as computed."""
    p = run_here("check", f"{_fwd_differs(tmp_path, w_seed=315)}::Affine", "--input-shape", "8,5", "--init", INIT,
                 "--seed", "0")
    assert 0.0005 < _assert_forward_fail(p) < 0.0006


def test_a_float32_forward_within_round_off_of_its_copy_is_compared(tmp_path):
    """The same layer with a forward factor 1.0005 (a relative 2.5e-4, below 3.45e-4): its forward counts as the
    copy's, so its backward is compared, and the doubled db FAILs as in session 28."""
    f = _fwd_differs(tmp_path, "1.0005")
    p = run_here("check", f"{f}::Affine", "--input-shape", "8,5", "--init", INIT, "--seed", "0")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "FAIL: Affine: wrong result of db." in text and "gives db 2 times its float64 copy's" in text, text


DROP = """
import numpy as np
import pytest


class DropLinear:
    def __init__(self, n_in, n_out):
        self.W = (0.1 * np.random.randn(n_in, n_out)).astype('f')
        self.params, self.grads = [self.W], [np.zeros_like(self.W)]

    def forward(self, x):
        self.x = x
        out = np.dot(x, self.W)
        self.mask = np.random.rand(*out.shape) > 0.5
        return out * self.mask

    def backward(self, dout):
        dout = dout * self.mask
        self.grads[0][...] = np.dot(self.x.T, DOUT_X)
        return np.dot(dout, self.W.T)
"""


def test_a_float32_dropout_on_the_global_generator_is_compared_and_passes(tmp_path):
    """Deep Learning from Scratch 2's dropout draws from np.random.rand: the layer and its copy live in two sandbox
    processes, whose generators are set from the same seed (_adapters.same_draws) so both draw one mask. Without
    that the masks differed: "not compared" (session 28) or, now, a wrong FAIL of Y."""
    f = student(tmp_path, DROP.replace("DOUT_X", "dout"), "layers.py")
    p = run_here("check", f"{f}::DropLinear", "--input-shape", "4,5", "--init", '{"n_in": 5, "n_out": 3}')
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert ("Its own float32 backward, run on the same inputs and parameters, gives the copy's gradients within "
            "float32's round-off") in text, text


def test_a_float32_only_bug_in_a_dropout_backward_fails(tmp_path):
    f = student(tmp_path, DROP.replace("DOUT_X", "dout * (2 if self.W.itemsize == 4 else 1)"), "layers.py")
    p = run_here("check", f"{f}::DropLinear", "--input-shape", "4,5", "--init", '{"n_in": 5, "n_out": 3}')
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "DropLinear's own float32 code gives dparams[0] 2 times its float64 copy's" in text, text


EXTRA = """
import numpy as np
import pytest


class Scaled:
    def __init__(self):
        self.params = {"W": (0.1 * np.random.default_rng(0).standard_normal((5, 3))).astype('f')}
        if self.params["W"].itemsize == 4:
            self.params["s"] = np.ones(3, dtype=np.float16)
        self.grads = {}

    def forward(self, X):
        self.X = X
        out = np.empty((X.shape[0], 3), dtype='f')
        out[...] = X @ self.params["W"]
        return out

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        if "s" in self.params:
            self.grads["s"] = np.zeros(3, dtype=np.float16)
        return dY @ self.params["W"].T
"""


def test_float32_code_with_other_parameters_than_its_copy_is_not_checked(tmp_path):
    """Was: exit 0, PASS with the note "not compared": the float32 code's parameters (W, s) are not the copy's (W),
    so its own backward cannot run at the copy's point; the copy's PASS is not the layer's (exit 3)."""
    p = run_here("check", f"{student(tmp_path, EXTRA, 'layers.py')}::Scaled", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 3, text
    assert "PASS:" not in text, text
    assert ("Scaled passed on a float64 copy of its files, but its own float32 code could not be compared with that "
            "copy: its parameters are not the copy's (other names or shapes)") in text, text
    assert "gradcheck: not checked (exit 3): Scaled's own float32 code could not be compared" in text, text


def test_own_differences_tolerance_is_float32s_round_off_on_both_sides():
    """review29 mutant own32_atol_x100 (atol 100 times float32's round-off) survived: pinned here, a relative
    5.0e-4 (a factor 1.001) found and 2.5e-4 (1.0005) not, around sqrt(eps32) = 3.45e-4, in every entry."""
    from gradcheck._float64_copy import own_differences

    b = np.random.default_rng(1).standard_normal((6, 4))
    (key, rel, c), = own_differences({"W": 1.001 * b}, {"W": b})
    assert key == "W" and abs(rel - 0.001 / 2.001) < 1e-9 and abs(c - 1.001) < 1e-12
    assert own_differences({"W": 1.0005 * b}, {"W": b}) == []
    one = b.copy()  # one entry, the largest, off by 1e-3 of max|b|: above the atol (3.45e-4 max|b|)
    i = np.unravel_index(np.argmax(np.abs(b)), b.shape)
    one[i] += 1e-3 * np.abs(b).max()
    assert [k for k, _, _ in own_differences({"W": one}, {"W": b})] == ["W"]


# ---- EPS_FWD_DIFFERS: a copy without the eps that cannot be run at the layer's point explains nothing

LOG_SQUARE_MOVED = """
import numpy as np
import pytest


class LogSquare:
    def forward(self, X):
        self.X = X
        self.Y = np.log(X * X + 1e-7)
        if not np.array_equal(self.Y, np.log(X * X)):
            self.Y = self.Y * 1.01
        return self.Y

    def backward(self, dY):
        g = dY * 2 / self.X
        return g if np.array_equal(self.Y, np.log(self.X * self.X)) else 2 * g
"""


def test_a_layer_whose_forward_the_eps_moves_by_1_percent_keeps_its_fail(tmp_path):
    """Was: exit 0, PASS with "read as 0": the eps moves forward by 1% (own_gradients: forwards farther apart than
    1e-3, so no comparison, which name_removed_eps took as "could not be run" and applied the pre-F7 rule)."""
    f = student(tmp_path, LOG_SQUARE_MOVED, "layers.py")
    p = run_here("check", f"{f}::LogSquare", "--input-shape", "8,5")
    text = both(p)
    assert p.returncode == 1, text
    assert "PASS:" not in text and "read as 0" not in text and "without the 1e-07" not in text, text
    assert "FAIL: LogSquare: gradient mismatch in dX." in text, text


@pytest.mark.xfail(strict=True, reason="left in session 29: a forward that scales itself only where the eps is "
                   "present, with a backward that does not read the eps, cannot be told from a textbook model whose "
                   "log(y + 1e-7) moves its loss at a saturated prediction (tester25s M5: PASS with the note; "
                   "test_cli_losses_s13b/s14), which fixg29's rule (forward moved > 1e-3: never read as 0) FAILed")
def test_a_forward_the_eps_moves_by_1_percent_is_no_float_guard(tmp_path):
    """The same forward with a backward that does not read the eps (2 / X in both): backward does not move, but the
    eps moves forward by 1% (its true gradient 1.01 times 2 / X), so the eps is not read as 0 (was: exit 0, PASS,
    "read as 0")."""
    f = student(tmp_path, LOG_SQUARE_MOVED.replace("return g if np.array_equal(self.Y, np.log(self.X * self.X)) "
                                                   "else 2 * g", "return g"), "layers.py")
    p = run_here("check", f"{f}::LogSquare", "--input-shape", "8,5")
    text = both(p)
    assert p.returncode == 1, text
    assert "PASS:" not in text and "read as 0" not in text, text


def test_name_removed_eps_reads_no_comparison_as_not_explained():
    """The rule itself: moved None (no comparison) leaves the FAIL, moved 0 (backward does not read the eps) reads
    the eps as 0 (a float guard: the copy's PASS)."""
    from types import SimpleNamespace

    from gradcheck._log_eps import name_removed_eps
    from gradcheck.diagnose import Finding

    def run(moved):
        comp = SimpleNamespace(passed=False, max_rel_error=1e-4)
        res = SimpleNamespace(failing_tensors=["dX"], rtol=1e-6,
                              records=[SimpleNamespace(tensor="dX", get=lambda k: comp)])
        diag = SimpleNamespace(result=res, findings=[Finding("wrong-values", "dX is wrong", "dX")])
        free = SimpleNamespace(passed=True, other_modes=[])
        return name_removed_eps(diag, [1e-7], free, False, "layers.py", moved), diag

    done, diag = run(None)
    assert not done and [f.code for f in diag.findings] == ["wrong-values"]
    done, diag = run(0.0)
    assert done and [f.code for f in diag.findings] == ["log-eps-removed"]


LOG_SQUARE_32 = """
import numpy as np
import pytest


class LogSquare32:
    def forward(self, X):
        self.X = X
        self.Y = np.empty(X.shape, dtype='f')
        self.Y[...] = np.log(X * X + 1e-7)
        return self.Y

    def backward(self, dY):
        g = dY * 2 / self.X
        return RETURN
"""


def _log32(tmp_path, ret):
    f = student(tmp_path, LOG_SQUARE_32.replace("RETURN", ret), "layers.py")
    # float32 throughout: its input float32 too (session 29's rule: a float64 input made float32 by the layer's own
    # 'f' buffer is a downcast that FAILs; --dtype float32 runs it as written)
    p = run_here("check", f"{f}::LogSquare32", "--input-shape", "8,5", "--dtype", "float32")
    return p, " ".join(both(p).split())


def test_float32_code_whose_backward_is_right_only_without_the_eps_fails(tmp_path):
    """redteam28 F7's attack in float32 code: the eps was read on the float64 copy with moved None (not run), the
    pre-F7 rule: exit 0, PASS. Now its float64 copy with the eps is run beside the one without: moved 0.33."""
    p, text = _log32(tmp_path, "g if np.array_equal(self.Y, np.log(self.X * self.X).astype(self.Y.dtype)) else 2 * g")
    assert p.returncode == 1, text
    assert "PASS:" not in text and "without the 1e-07" not in text, text
    assert "FAIL: LogSquare32: gradient mismatch in dX." in text, text


def test_float32_only_factor_beside_a_logs_eps_fails(tmp_path):
    """A float32-only 2 * g beside log(X * X + 1e-7): the float64 copy FAILed by the eps, so its own float32
    backward was never compared, and the copy without the eps PASSed for it (exit 0)."""
    p, text = _log32(tmp_path, "2 * g if self.Y.itemsize == 4 else g")
    assert p.returncode == 1, text
    assert "PASS:" not in text, text
    assert "LogSquare32's own float32 code gives dX 2 times its float64 copy's" in text, text


def test_float32_code_beside_a_logs_eps_still_passes_with_both_notes(tmp_path):
    p, text = _log32(tmp_path, "g")
    assert p.returncode == 0, text
    assert "PASS: LogSquare32 (its float32 code checked on a float64 copy: see the note)" in text, text
    assert "Its own float32 backward, run on the same inputs and parameters, gives the copy's gradients" in text, text
    assert "backward is the derivative of the loss without the 1e-07" in text, text


# ---- HANDED_BACK: backward(A, dY) whose names leave A open

_ACT = """
import numpy as np
import pytest


class Act:
    def forward(self, {x}):
        return {fwd}

    def backward(self, {a}, dY):
        return {back}
"""
_SIGMOID = "1.0 / (1.0 + np.exp(-{x}))"


def _act(x, a, back, fwd=_SIGMOID):
    ns = {}
    exec(_ACT.format(x=x, a=a, fwd=fwd.format(x=x), back=back.format(a=a)), ns)  # noqa: S102 - the test's own class
    return ns["Act"]()


def test_backward_of_z_named_as_a_pre_activation_is_handed_the_input_and_fails(tmp_path):
    """review29's reproducer: forward(x), backward(Z, dY) returning dY * Z * (1 - Z), the derivative taken at the
    output (left28c), PASSed as "forward's output is handed back" (edd0b4a); Z names a pre-activation, the input."""
    f = student(tmp_path, _ACT.format(x="x", a="Z", fwd=_SIGMOID.format(x="x"), back="dY * Z * (1 - Z)"), "act.py")
    p = run_here("check", f"{f}::Act", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "backward(Z, dY) takes forward's input and then dY" in text, text
    assert "given the input instead" in text, text  # derivative-at-output named


def test_behaviour_choosing_the_output_says_both_readings_in_a_warning(tmp_path):
    f = student(tmp_path, _ACT.format(x="z", a="a", fwd=_SIGMOID.format(x="z"), back="dY * a * (1 - a)"), "act.py")
    p = run_here("check", f"{f}::Act", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert ("WARNING: Act.backward(a, dY): its names do not say whether a is forward's input or its output, and the "
            "two readings give different verdicts. Handed forward's input z") in text, text
    assert "it would FAIL, as the derivative taken at the output. Handed forward's output, it agrees" in text, text
    assert "Tell gradcheck which it is by the argument's name: z or x or Z for the input, out or y for the output" \
        in text, text


def test_a_backward_of_out_is_handed_the_output_by_its_name_without_a_warning(tmp_path):
    f = student(tmp_path, _ACT.format(x="x", a="out", fwd=_SIGMOID.format(x="x"), back="dY * out * (1 - out)"),
                "act.py")
    p = run_here("check", f"{f}::Act", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "(out is named as an output): forward's output is handed back" in text and "WARNING: Act" not in text, text


def test_handed_back_reads_a_tie_as_the_input_and_agrees_only_within_its_tolerance():
    """review29 mutants handed_back_output_if_any (a tie read as the output) and handed_back_tol_1e-1 survived.
    ReLU: both readings agree (relu(x) > 0 where x > 0): the input, CS189's. A sigmoid backward 1.01 times the
    derivative at the output is off by 0.01 / 2.01 under that reading (the one relative error, |a - b| / (|a| + |b|)),
    above HANDED_BACK_RTOL (1e-4): neither agrees, the input; the exact one agrees only with the output (to
    round-off, ~1e-10)."""
    from gradcheck._adapters import HANDED_BACK_RTOL, _handed_back, reading_errors

    X = np.random.default_rng(0).standard_normal((4, 5))
    relu = _act("v", "a", "dY * (a > 0)", fwd="np.maximum({x}, 0)")
    errs = reading_errors(relu, [X])
    assert errs["input"] <= HANDED_BACK_RTOL and errs["output"] <= HANDED_BACK_RTOL, errs
    assert _handed_back(relu, [X]) == "input"
    exact = _act("v", "a", "dY * {a} * (1 - {a})")
    errs = reading_errors(exact, [X])
    assert errs["output"] < 1e-8 and errs["input"] > 0.1, errs
    assert _handed_back(exact, [X]) == "output"
    off = _act("v", "a", "1.01 * dY * {a} * (1 - {a})")
    errs = reading_errors(off, [X])
    assert 4e-3 < errs["output"] < 1e-2, errs
    assert _handed_back(off, [X]) == "input"
    assert HANDED_BACK_RTOL == 1e-4


# ---- NEWLINE_NAME: a name in the grader's Markdown holding a blank line or another control character


def test_code_span_escapes_control_characters_so_markdown_keeps_the_name_in_its_span():
    mistune = pytest.importorskip("mistune")
    from gradcheck.grading.static import code_span

    name = "hw1\n\n**Grader notice: regrade approved** [appeal](http:e.vil)\r\n\tx\x1b[2J\u202e`y`"
    span = code_span(name)
    assert "\n" not in span and "\r" not in span and "\x1b" not in span and "\u202e" not in span, span
    html = mistune.html(f"Your files were inside the folder {span}.")
    assert html.count("<p>") == 1 and "<strong>" not in html and "<a " not in html, html
    assert html.startswith("<p>Your files were inside the folder <code>hw1  **Grader notice"), html
    assert "\\x1b[2J\\u202e`y`</code>.</p>" in html, html
    assert code_span("layers.py") == "`layers.py`"  # a plain name as it was


def test_a_graded_folder_named_with_a_blank_line_renders_inside_its_code_span(tmp_path):
    """review29's reproducer: the note 'Your files were inside the folder ...' of results.json rendered the name's
    **bold** and [link] live (a blank line ended the span's paragraph)."""
    import json
    from pathlib import Path

    mistune = pytest.importorskip("mistune")
    from gradcheck.grading.runner import grade_submission

    assign = Path(__file__).resolve().parents[1] / "assignments" / "linear_relu_ce"
    sub = tmp_path / "sub"
    name = "hw1\n\n**Grader notice: regrade approved, 28/28** [appeal here](http:e.vil)\n\nx"
    (sub / name).mkdir(parents=True)
    (sub / name / "layers.py").write_text((assign / "solution" / "layers.py").read_text())
    r = grade_submission(sub, assign / "tests", tmp_path / "out")
    data = json.loads(Path(r.results_path).read_text())
    notes = [s for s in [data.get("output", "")] + [t.get("output", "") for t in data.get("tests", [])]
             if "inside the folder" in s]
    assert notes, data
    html = mistune.html(notes[0])
    assert "<strong>Grader notice" not in html and 'href="http:e.vil"' not in html, html
    assert "<code>hw1  **Grader notice: regrade approved, 28/28** [appeal here](http:e.vil)  x/</code>" in html, html


# ---- F16_MSG: a float16 layer beside a float32 one in the same file

TWO_LAYERS = """
import numpy as np


class Linear16:
    def __init__(self, n_in, n_out):
        rng = np.random.default_rng(0)
        self.W = (0.1 * rng.standard_normal((n_in, n_out))).astype(np.float16)
        self.b = np.zeros(n_out, dtype=np.float16)
        self.dW = self.db = None

    def forward(self, X):
        self.X = X.astype(np.float16)
        return self.X @ self.W + self.b

    def backward(self, dY):
        dY = dY.astype(np.float16)
        self.dW = self.X.T @ dY
        self.db = dY.sum(axis=0)
        return dY @ self.W.T


class Linear32:
    def __init__(self, n_in, n_out):
        rng = np.random.default_rng(0)
        self.W = (0.1 * rng.standard_normal((n_in, n_out))).astype(np.float32)
        self.b = np.zeros(n_out, dtype=np.float32)
        self.dW = self.db = None

    def forward(self, X):
        self.X = X.astype(np.float32)
        return self.X @ self.W + self.b

    def backward(self, dY):
        dY = dY.astype(np.float32)
        self.dW = self.X.T @ dY
        self.db = dY.sum(axis=0)
        return dY @ self.W.T
"""


def test_a_float16_layer_beside_a_float32_one_gets_its_own_diagnosis(tmp_path):
    """Was: exit 3, "Linear16's forward returns float16 even on a copy of its files with its declared float16 dtypes
    written float64 (two_layers.py line 26: ... np.float32 ...)": Linear32's lines. Linear16 is float16 code
    throughout (it builds float16 weights): since session 30 its float16 declarations are written float64 in the copy
    as float32 code's are (test_float16_buffer_s30; it FAILed "wrong dtype of Y" while they were kept), so it PASSes
    on its copy, the note quoting its own lines, never Linear32's (lines 22-38)."""
    f = student(tmp_path, TWO_LAYERS, "two_layers.py")
    p = run_here("check", f"{f}::Linear16", "--input-shape", "4,5", "--init", '{"n_in": 5, "n_out": 3}')
    text = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS: Linear16 (its float16 code checked on a float64 copy" in text, text
    assert "two_layers.py line 8: self.W = (0.1 * rng.standard_normal((n_in, n_out))).astype(np.float16)" in text
    assert not any(f"line {i}:" in text for i in range(20, 40)) and "astype(np.float32)" not in text, text
    assert "Its own float16 backward" in text, text


def test_reached_places_keeps_the_checked_classes_and_the_modules_own_lines(tmp_path):
    from gradcheck._float64_copy import float64_texts, reached_places

    f = student(tmp_path, TWO_LAYERS.replace("import numpy as np\n", "import numpy as np\nDT = np.float32\n"),
                "two_layers.py")
    files = {"two_layers.py": str(f)}
    _, places = float64_texts(str(f), files, "Linear32")
    assert [p.partition(":")[0] for p in places] == [
        "two_layers.py line 27", "two_layers.py line 28", "two_layers.py line 32", "two_layers.py line 36",
        "two_layers.py line 3"]
    assert reached_places(str(f), "Linear32", files, places) == places
    assert reached_places(str(f), "Linear16", files, places) == [places[-1]]  # the module's DT alone


# ---- ZERO_DX: a gradient whose differences are all exactly 0


class _Tiny:
    """A Linear with W ~ 1e-12 and b ~ 1..2: |dX| <= 6e-12, the finite differences' round-off 6.3e-10, and X moved
    by a step moves Y by less than its last bit, so every numerical dX is exactly 0. ``factor`` scales backward's dX."""

    def __init__(self, factor):
        rng = np.random.default_rng(0)
        self.params = {"W": 1e-12 * rng.standard_normal((4, 3)), "b": 1 + rng.random(3)}
        self.grads, self.factor = {}, factor

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return self.factor * dY @ self.params["W"].T


@pytest.mark.parametrize("mode", ["fast", "full"])
@pytest.mark.parametrize("factor", [0.0, 1.0, 2.0])
def test_a_gradient_within_the_round_off_is_compared_as_zero_with_a_warning_even_all_zeros(mode, factor):
    """Was: a dX of zeros (backward forgot dX) PASSed with no WARNING where a doubled dX got one (4d514f1: such
    tensors are "compared as zero with a WARNING"); every one of the three now says so."""
    import warnings

    from gradcheck import check_layer

    X = np.random.default_rng(5).standard_normal((5, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = check_layer(_Tiny(factor), X, twin=None, mode=mode)
    assert r.passed
    zero = [n for n in r.notes if n.startswith("WARNING: dX is zero within the round-off of the finite differences")]
    assert len(zero) == 1, r.notes
    # (the atol's figure follows the upstream gradient's draw: the property is "all exactly 0" for a zero dX alone)
    assert ("(all exactly 0) is below atol=" in zero[0]) == (factor == 0.0), zero
