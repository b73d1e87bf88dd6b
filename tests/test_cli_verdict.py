"""Defects a new-user tester found in `gradcheck check` (session 5): a random forward held fixed
in the sandbox as in process, --tape --jacobian on a layer the tape loses track of, a mismatch
within the numerical estimate's own uncertainty named as noise (not as a bug), exit codes that
follow --help's rule, --twin --jacobian without a twin, a 0-d parameter through the sandbox, the
zoo's dilated ConvTranspose2D batch.

Run through the installed console script (``gradcheck``), as the tester did (the --help and 0-d parameter
tests), or through its ``gradcheck.cli.main`` in this process (``test_cli.run_here``: the same parser, checks and
report, the student's code in its sandbox process), which spares the start of a Python per check.
"""

import textwrap

import numpy as np
import pytest
from test_cli import both as flat
from test_cli import run, run_here, student


def write(tmp_path, text, name="layer.py"):
    return student(tmp_path, text, name)


# --------------------------------------------------------------------------- F: a 0-d parameter

PRELU = """
import numpy as np
import pytest

class PReLUf:
    def __init__(self):
        self.params = {"alpha": np.array(0.25)}
        self.grads = {"alpha": np.array(0.0)}

    def forward(self, X, training=False):
        self.X = X
        a = float(self.params["alpha"])  # only a 0-d (or size-1) array converts
        assert np.shape(self.params["alpha"]) == (), np.shape(self.params["alpha"])
        return np.where(X > 0, X, a * X)

    def backward(self, dY):
        self.grads["alpha"] = np.array(np.sum(dY * np.where(self.X > 0, 0.0, self.X)))
        return dY * np.where(self.X > 0, 1.0, float(self.params["alpha"]))
"""


def test_zero_d_parameter_keeps_its_shape_in_the_sandbox(tmp_path):
    p = run("check", f"{write(tmp_path, PRELU)}::PReLUf", "--input-shape", "4,3")
    assert p.returncode == 0, flat(p)
    assert "PASS: PReLUf: every gradient (dX, dalpha) match" in flat(p)


def test_float_of_a_parameter_under_tape_is_named_as_an_escape_not_a_tape_fail(tmp_path):
    """float(alpha) on the tape is a constant: the tape's dalpha would be 0. The check names the
    line and compares manual vs numerical only, as for np.asarray (it used to FAIL tape-vs-numerical)."""
    p = run_here("check", f"{write(tmp_path, PRELU)}::PReLUf", "--input-shape", "4,3", "--tape")
    assert p.returncode == 0, flat(p)
    assert "the tape lost track of alpha at " in flat(p) and "float(self.params[" in flat(p)
    assert "turning it into a Python number (float(), math.exp)" in flat(p)
    assert "PASS: PReLUf: every gradient (dX, dalpha) match" in flat(p)


def test_a_numpy_scalar_gradient_of_a_zero_d_parameter_is_read_as_that_0_d_array(tmp_path):
    """np.sum(...) gives a float64 scalar: for a 0-d parameter that is its gradient, as in process."""
    src = PRELU.replace('self.grads["alpha"] = np.array(np.sum(', 'self.grads["alpha"] = (np.sum(')
    assert src != PRELU
    p = run_here("check", f"{write(tmp_path, src)}::PReLUf", "--input-shape", "4,3")
    assert p.returncode == 0, flat(p)
    assert "PASS: PReLUf: every gradient (dX, dalpha) match" in flat(p)
    wrong = src.replace("0.0, self.X)", "0.0, 2 * self.X)")  # dalpha twice the right value: still caught
    assert wrong != src
    p = run_here("check", f"{write(tmp_path, wrong)}::PReLUf", "--input-shape", "4,3")
    assert p.returncode == 1 and "dalpha" in flat(p), flat(p)


def test_wire_codec_keeps_zero_d_arrays():
    from gradcheck._sandbox_child import Packer, decode

    packer = Packer(np)
    head = packer.encode({"a": np.array(0.25), "b": np.arange(6.0).reshape(2, 3)[:, ::2]})
    back = decode(np, head, packer.payload())
    assert back["a"].shape == () and back["a"] == 0.25
    assert back["b"].shape == (2, 2) and back["b"].tolist() == [[0.0, 2.0], [3.0, 5.0]]


# --------------------------------------------------------------------------- G: the zoo's batches

def test_zoo_has_no_batch_of_one():
    from gradcheck.zoo import ENTRIES

    ones = [e.label for e in ENTRIES if isinstance(e.input_shape, tuple) and len(e.input_shape) > 1
            and e.input_shape[0] == 1 and e.build is None and e.inputs is None]
    assert ones == []


# ------------------------------------------------------------- A: a random forward in the sandbox

DROPOUT = """
import numpy as np
import pytest

class Dropout:
    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)
        self.params = {"w": np.array([1.0])}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        if not training:
            self.mask = None
            return self.params["w"] * X
        self.mask = MASK
        return self.params["w"] * X * self.mask

    def backward(self, dY):
        m = 1.0 if self.mask is None else self.mask
        self.grads["w"] = np.array([np.sum(dY * self.X * m)])
        return dY * self.params["w"] * (1.0 if self.mask is None else BACK)
"""
STORED = "(self.rng.random(X.shape) >= self.p) / (1 - self.p)"
FRESH = "(np.random.default_rng().random(X.shape) >= self.p) / (1 - self.p)"
SWITCH = """
    fixed = False

    def fix_mask(self, on=True):
        self.fixed = bool(on)

    def draw(self, X):  # while fixed, one mask per input shape (as manualprop.Dropout keeps them)
        self.kept = getattr(self, "kept", {}) if self.fixed else {}
        if X.shape not in self.kept:
            self.kept[X.shape] = (np.random.default_rng().random(X.shape) >= self.p) / (1 - self.p)
        return self.kept[X.shape]
"""


def dropout(tmp_path, mask=STORED, back="self.mask", switch=False):
    text = textwrap.dedent(DROPOUT).replace("MASK", mask).replace("BACK", back)
    if switch:
        methods = textwrap.indent(textwrap.dedent(SWITCH), "    ").lstrip("\n")
        text = text.replace("    def backward", methods + "\n    def backward")
    f = tmp_path / "d.py"
    f.write_text(text)
    return f


def check_dropout(f, *extra):
    return run_here("check", f"{f}::Dropout", "--input-shape", "6,5", "--init", '{"p": 0.5}',
               "--mode", "full", *extra)


def test_dropout_with_a_stored_generator_is_checked_with_it_rewound(tmp_path):
    p = check_dropout(dropout(tmp_path))
    out = flat(p)
    assert p.returncode == 0, out
    assert "its random generator (Generator) was rewound before every forward" in out
    assert "PASS: Dropout: every gradient (dX, dw) match" in out


def test_rewound_dropout_still_fails_a_wrong_backward(tmp_path):
    p = check_dropout(dropout(tmp_path, back="1.0"))  # the mask missing from dX
    out = flat(p)
    assert p.returncode == 1, out
    assert "FAIL: Dropout [training]: gradient mismatch in dX." in out


def test_dropout_with_its_own_fix_mask_is_held_by_it(tmp_path):
    p = check_dropout(dropout(tmp_path, mask="self.draw(X)", switch=True))
    out = flat(p)
    assert p.returncode == 0, out
    assert "the mask was held fixed with fix_mask(True) on Dropout" in out


def test_a_generator_made_in_forward_cannot_be_held_and_the_advice_says_so(tmp_path):
    p = check_dropout(dropout(tmp_path, mask=FRESH))
    out = flat(p)
    assert p.returncode == 3, out  # it cannot be checked: not a wrong result (tester9 W15)
    assert "structural checks failed: deterministic forward" in out
    assert ("gradcheck rewinds a stored generator and the global one before every forward, but not one made "
            "anew inside forward") in out


def test_c29_rewound_generator_gives_df_dw_16():
    """gradient-cases C29: x = [1, 2, 3, 4], w = 1, keep 0.5, mask [1, 0, 1, 1]: df/dw = 16 (held
    the sandbox child's way)."""
    from gradcheck import _adapters as AD
    from gradcheck.numerical import numerical_gradient

    class Drop:
        def __init__(self):
            self.rng, self.w = np.random.default_rng(0), np.array([1.0])
            while not np.array_equal(self._peek(), [1, 0, 1, 1]):  # next mask: C29's
                self.rng.random(4)

        def _peek(self):
            state = self.rng.bit_generator.state
            m = (self.rng.random(4) >= 0.5).astype(int)
            self.rng.bit_generator.state = state
            return m

        def forward(self, X, training=True):
            return X * self.w * (self.rng.random(X.shape) >= 0.5) / 0.5

    d, x = Drop(), np.array([1.0, 2.0, 3.0, 4.0])
    assert AD.hold_random(d, "fix_mask") == ""  # no switch of its own
    assert AD.hold_random(d, "rewind") == "Generator"
    g = numerical_gradient(lambda: float(d.forward(x).sum()), d.w)
    assert g[0] == pytest.approx(16.0, rel=1e-9)
    AD.hold_random(d, "release")
    assert type(d) is Drop and not np.array_equal(d.forward(x), d.forward(x))


# --------------------------------------------------------------------------- B, E: --jacobian

BUFFER = """
import numpy as np

class Pad:
    def __init__(self, d=3, k=2):
        self.params = {"W": np.random.default_rng(0).standard_normal((k, d))}
        self.grads = {}
        self.d = d

    def forward(self, X, training=False):
        self.X = X
        cols = np.zeros((X.shape[0], self.d + 1))
        cols[:, :self.d] = X  # a Tensor written into a numpy buffer: the tape loses track of X
        return cols[:, :self.d] @ self.params["W"].T

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        return dY @ self.params["W"]
"""


def test_tape_jacobian_falls_back_when_the_tape_loses_track(tmp_path):
    f = write(tmp_path, BUFFER)
    p = run_here("check", f"{f}::Pad", "--input-shape", "4,3", "--tape", "--jacobian")
    out = flat(p)
    assert p.returncode == 0, out
    assert "Traceback" not in out and "TapeUnavailable" not in out
    assert "jacobian dY/dX in eval mode: not compared: the tape lost track of X at layer.py:13 in forward" in out
    assert "PASS: Pad: every gradient (dX, dW) match" in out
    wrong = write(tmp_path, BUFFER.replace('dY.T @ self.X', '2 * dY.T @ self.X'), "wrong.py")
    p = run_here("check", f"{wrong}::Pad", "--input-shape", "4,3", "--tape", "--jacobian")
    assert p.returncode == 1 and "gradient mismatch in dW" in flat(p), flat(p)


def test_twin_jacobian_without_a_twin_says_there_is_none(tmp_path):
    f = write(tmp_path, BUFFER.replace("class Pad", "class PadWithoutTwin"))
    p = run_here("check", f"{f}::PadWithoutTwin", "--input-shape", "4,3", "--twin", "--jacobian")
    out = flat(p)
    assert p.returncode == 2, out
    assert "add --tape (your forward on the tape) or --twin" not in out
    assert ("--jacobian --twin: there is no twin of PadWithoutTwin to take the Jacobian with (no "
            "class autoprop.layers.PadWithoutTwin). Use --tape instead") in out


# ------------------------------------------------------------- D: exit codes follow --help's rule

EXITS = """
import numpy as np

class NoDb:
    def __init__(self):
        r = np.random.default_rng(0)
        self.W, self.b = r.standard_normal((3, 4)), r.standard_normal(3)

    def forward(self, X):
        self.X = X
        return X @ self.W.T + self.b

    def backward(self, dY):
        self.dW = dY.T @ self.X
        return dY @ self.W


class LowerKey:
    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((3, 4))}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T

    def backward(self, dY):
        self.grads["w"] = dY.T @ self.X
        return dY @ self.params["W"]


class InPlace:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        X[X < 0] = 0
        self.X = X
        return X

    def backward(self, dY):
        return dY * (self.X > 0)
"""


def check_exits(tmp_path, cls):
    return run_here("check", f"{write(tmp_path, EXITS)}::{cls}", "--input-shape", "4,4")


def test_attribute_weight_without_gradient_is_not_checked_exit_3(tmp_path):
    """H4: b without db beside W/dW is a forgotten gradient or a constant: the checker cannot tell, exit 3."""
    p = check_exits(tmp_path, "NoDb")
    out = flat(p)
    assert p.returncode == 3, out
    assert ("WARNING: forward uses b but backward sets no gradient attribute for it (db, grad_b "
            "or b_grad): a weight whose gradient backward forgot, or a constant; gradcheck cannot tell "
            "which, so the layer is NOT CHECKED as a whole (exit 3)") in out
    assert "cannot tell whether b is a weight whose gradient backward forgot (then set self.db)" in out
    assert "PASS" not in out and "FAIL" not in out


def test_grads_key_spelled_otherwise_is_a_missing_gradient_exit_1(tmp_path):
    p = check_exits(tmp_path, "LowerKey")
    out = flat(p)
    assert p.returncode == 1, out
    assert "LowerKey.grads has no key 'W' after backward(dY) (so dW is missing)" in out
    assert "grads['w'] is written where params has 'W'" in out and "case-sensitive" in out


def test_forward_writing_into_its_input_is_a_wrong_result_exit_1(tmp_path):
    p = check_exits(tmp_path, "InPlace")
    out = flat(p)
    assert p.returncode == 1, out
    assert "wrong result (exit 1): InPlace.forward modified its input X in place" in out
    assert "np.maximum(X, 0) rather than X[X < 0] = 0" in out


def test_help_states_the_exit_codes_of_these_cases():
    out = flat(run("--help"))
    assert "a weight's gradient not set (no grads key, no gradient attribute)" in out
    assert "a forward that writes into its input X (the caller's array changes)" in out


# ------------------------------------------------------------- C: a mismatch at noise level

LAYERNORM = """
import numpy as np

class LayerNorm:
    def __init__(self, D=2, eps=1e-5, offset=False, seed=None):
        rng = np.random.default_rng(seed)
        self.params = ({"gamma": np.ones(D), "beta": np.zeros(D)} if seed is None else
                       {"gamma": 1 + 0.3 * rng.standard_normal(D),
                        "beta": 0.3 * rng.standard_normal(D)})
        self.grads = {}
        self.eps, self.scale, self.shift = eps, 1e-3 if offset else 1.0, 100.0 if offset else 0.0

    def forward(self, X, training=False):
        X = X * self.scale + self.shift  # offset: forward cancels digits (1e-14 / step 6e-9)
        mu, var = X.mean(-1, keepdims=True), X.var(-1, keepdims=True)
        self.istd = 1 / np.sqrt(var + self.eps)
        self.xhat = (X - mu) * self.istd
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dY):
        D = dY.shape[-1]
        self.grads["gamma"] = (dY * self.xhat).reshape(-1, D).sum(0)
        self.grads["beta"] = dY.reshape(-1, D).sum(0)
        return self.scale * self.dx(dY * self.params["gamma"])

    def dx(self, dxhat):
        return self.istd * (dxhat - dxhat.mean(-1, keepdims=True)
                            - self.xhat * (dxhat * self.xhat).mean(-1, keepdims=True))


class NoVariance(LayerNorm):
    def dx(self, dxhat):
        return self.istd * (dxhat - dxhat.mean(-1, keepdims=True))  # BUG: no variance path
"""
NOISE = "within the numerical estimate's own uncertainty here"


def check_ln(tmp_path, cls, init, *extra, shape="4,2"):
    return run_here("check", f"{write(tmp_path, LAYERNORM)}::{cls}", "--input-shape", shape,
               "--init", init, "--mode", "full", *extra)


def test_zero_gradient_at_noise_level_is_not_named_as_a_bug(tmp_path):
    """D = 2, eps = 0: Y = +-1 whatever X, the true dX is 0; the numerical one is rounding (1.16e-09 at the old
    default_rng(0) G, 4.07e-09 at fixn29's probe_rng(0) G: the figure is the draw's, so the test reads it from the
    FAIL line's max absolute error, manual=0 there, and bounds it at rounding's size)."""
    import re

    p = check_ln(tmp_path, "LayerNorm", '{"D": 2, "eps": 0}')
    out = flat(p)
    assert p.returncode == 1, out
    assert "FAIL: LayerNorm: gradient mismatch in dX." in out
    worst = re.search(r"max absolute error ([0-9.e+-]+); worst element dX\[\d+, \d+\]: manual=0, numerical=", out)
    assert worst, out
    err = float(worst.group(1))
    assert 0 < err < 1e-7, out  # rounding of Y = +-1 over a step of 6e-6, not a gradient of order 1
    assert f"dX differs from the numerical gradient by at most {err:.3g}, {NOISE}" in out
    assert "so no bug is named; for a reliable estimate use --method richardson" in out
    assert "evaluated at the output Y" not in out
    p = check_ln(tmp_path, "LayerNorm", '{"D": 2, "eps": 0}', "--method", "richardson")
    assert p.returncode == 0 and "PASS: LayerNorm" in flat(p), flat(p)


def test_offset_forward_noise_is_not_named_but_a_missing_variance_path_is(tmp_path):
    p = check_ln(tmp_path, "LayerNorm", '{"D": 3, "offset": true}', shape="4,3")
    out = flat(p)
    assert p.returncode == 1 and NOISE in out, out
    assert "lacks the gradient" not in out
    p = check_ln(tmp_path, "NoVariance", '{"D": 3, "seed": 0, "eps": 1e-8}', shape="4,3")
    out = flat(p)
    assert p.returncode == 1, out
    assert "dX lacks the gradient through the per-sample variance" in out and NOISE not in out
    # noisy and 100% off: a bug, not noise
    p = check_ln(tmp_path, "NoVariance", '{"D": 3, "seed": 0, "offset": true}', shape="4,3")
    out = flat(p)
    assert p.returncode == 1 and "gradient mismatch in dX" in out and NOISE not in out, out


def test_within_noise_compares_the_mismatch_with_the_spread_of_the_estimates():
    from gradcheck.uncertainty import within_noise

    n = np.array([1.0, 2.0, 3.0])
    spread = {2e-5: n + [0.0, 0.0, 4e-6], 5e-6: n - [0.0, 0.0, 1e-6], 2.5e-6: n - [0.0, 0.0, 2e-6]}  # element 2: 4e-6
    tol = (1e-5, 1e-6, 1e-9)  # eps, rtol, atol
    assert within_noise(n + [0, 0, 7e-6], n, spread.get, *tol) == pytest.approx((7e-6, 4e-6))
    assert within_noise(n + [0, 0, 9e-6], n, spread.get, *tol) is None  # above twice the spread
    assert within_noise(n + [1e-4, 0, 7e-6], n, spread.get, *tol) is None  # element 0: no spread
    assert within_noise(n, n, spread.get, *tol) is None  # nothing mismatches

    def raises(eps):
        raise FloatingPointError("log of a negative number at the larger step")

    assert within_noise(n + [0, 0, 7e-6], n, raises, *tol) is None


# --------------------------------------------------------------------------- session 8: T11's small items

LEAKY = """
import numpy as np

class Leaky:  # a forward that is not the reference's ReLU; its backward is right for its own forward
    def forward(self, X): self.X = X; return np.where(X > 0, X, 0.1 * X)
    def backward(self, dY): return dY * np.where(self.X > 0, 1.0, SLOPE)
"""


def test_a_negative_input_size_is_a_usage_error_naming_it(tmp_path):
    f = write(tmp_path, LEAKY.replace("SLOPE", "0.1"))
    for shape, bad in [("-8,5", "-8 is negative"), ("4,-5;3", "-5 is negative"), ("4,0", "0 is an empty size")]:
        p = run_here("check", f"{f}::Leaky", "--input-shape", shape)
        out = flat(p)
        assert p.returncode == 2 and "expected one argument" not in out, out
        assert f"--input-shape must be comma-separated positive integers such as 8,5 (batch 8, 5 features); got " \
               f"'{shape.split(';')[0]}' ({bad}: every size counts rows, features or positions, at least 1)." in out


def test_a_forward_that_differs_from_the_reference_is_no_gradient_mismatch(tmp_path):
    f = write(tmp_path, LEAKY.replace("SLOPE", "0.1"))
    p = run_here("check", f"{f}::Leaky", "--input-shape", "4,5", "--reference", "manualprop.ReLU")
    out = flat(p)
    assert p.returncode == 1 and "gradient mismatch" not in out, out
    assert ("FAIL: Leaky: forward mismatch in Y; dX agrees with central differences of this forward, not with the "
            "reference's.") in out
    f = write(tmp_path, LEAKY.replace("SLOPE", "0.2"), "wrong.py")  # and a backward wrong for its own forward
    p = run_here("check", f"{f}::Leaky", "--input-shape", "4,5", "--reference", "manualprop.ReLU")
    assert p.returncode == 1 and "FAIL: Leaky: forward mismatch in Y; gradient mismatch in dX." in flat(p), flat(p)


def test_an_infinite_manual_entry_is_a_mismatch_never_noise():
    """One element-wise rule (compare.mismatched) for close, the noise test and the view notes:
    an infinite manual entry against a finite estimate mismatches (inf > rtol * inf was False)."""
    from gradcheck.compare import close, mismatched
    from gradcheck.uncertainty import within_noise

    m, n = np.array([np.inf, 1.0 + 1e-3]), np.array([1.0, 1.0])
    assert mismatched(m, n, 1e-6, 1e-9).tolist() == [True, True]
    assert not close(m, n, 1e-6, 1e-9)
    # the estimates at 2h and h/2 spread enough to excuse the finite entry, never the infinite one
    assert within_noise(m, n, lambda e: n + np.array([0.0, 1e-3]) * (e / 1e-5), 1e-5, 1e-6, 1e-9) is None
    finite = np.array([1.0, 1.0 + 1e-3])
    got = within_noise(finite, n, lambda e: n + np.array([0.0, 1e-3]) * (e / 1e-5), 1e-5, 1e-6, 1e-9)
    assert got is not None and abs(got[0] - 1e-3) < 1e-12
    assert mismatched(np.array([np.inf, np.nan]), np.array([np.inf, np.nan]), 0, 0).tolist() == [False, True]
