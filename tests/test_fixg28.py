"""fixg28: review28g's findings on session 27's checker (H1 tiny gradients, M1-M3, H2 float32 casts, L1-L3)."""
import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck.compare import EXTRAPOLATION_ROUNDOFF, VACUOUS, own_scale_atol


class _TinyLinear:
    """A Linear with W ~ scale N(0, 1), b ~ 0.1 N(0, 1) (review28g's repro/tiny); ``factor`` scales dX."""

    def __init__(self, scale=1e-10, factor=1.0):
        rng = np.random.default_rng(0)
        self.params = {"W": scale * rng.standard_normal((4, 3)), "b": 0.1 * rng.standard_normal(3)}
        self.grads, self.factor = {}, factor

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return self.factor * dY @ self.params["W"].T


X54 = np.random.default_rng(5).standard_normal((5, 4))


@pytest.mark.parametrize("mode", ["fast", "full"])
@pytest.mark.parametrize("factor", [2.0, 0.0, -1.0])
def test_a_wrong_dx_below_the_default_atol_fails(mode, factor):
    """H1: every |dX| <= 6.2e-10 < the default atol 1e-9; 36 x the round-off (2.1e-9) passed a doubled and a zero dX."""
    r = check_layer(_TinyLinear(factor=factor), X54, twin=None, mode=mode)
    assert not r.passed, r.notes
    dx = [c for rec in r.records if rec.tensor == "dX" for c in rec.comparisons if "numerical" in c.pair]
    assert dx and not all(c.passed for c in dx) and max(c.atol for c in dx) < 1e-10, dx


@pytest.mark.parametrize("mode", ["fast", "full"])
def test_a_right_dx_below_the_default_atol_passes_and_says_what_it_can_tell(mode):
    # G as check_layer drew it before newuser29 H2 (default_rng(0)): at some G (seeds 3 and 5 before and after) the
    # fast mode's directional test can tell at the default atol, and there is then nothing below it to say
    r = check_layer(_TinyLinear(), X54, twin=None, mode=mode, upstream=np.random.default_rng(0).standard_normal((5, 3)))
    assert r.passed, r.notes
    assert any("a factor of 2" in n and "is told" in n for n in r.notes), r.notes


def test_a_dx_below_its_own_round_off_is_compared_as_zero_with_a_warning():
    """W ~ 1e-13: |dX| ~ 3e-13 is far below the round-off 5.9e-11: no comparison can tell a factor of 2 there, and the
    output says so. It is compared as zero, not NOT CHECKED: a gradient that is exactly zero (a bias before a
    training-mode batchnorm, CS231n's first beta under a second one: test_cli_switch_reach's BNNet) is at that noise
    too, and is right; a manual value far above the noise still FAILs."""
    r = check_layer(_TinyLinear(scale=1e-13, factor=2.0), X54, twin=None, mode="full")
    dx = [c for rec in r.records if rec.tensor == "dX" for c in rec.comparisons if "numerical" in c.pair]
    assert dx and not any(c.unchecked for c in dx), dx
    assert any("WARNING: dX is zero within the round-off" in n and "a factor of 2 in a gradient this small cannot "
               "be told" in n for n in r.notes), r.notes
    assert not check_layer(_TinyLinear(scale=1e-13, factor=1e6), X54, twin=None, mode="full").passed


def test_the_extrapolation_allowance_never_makes_the_atol_vacuous():
    assert own_scale_atol(2.2e-10, 5.9e-11, extrapolating=True) == pytest.approx(5.9e-11)
    assert own_scale_atol(1e-3, 1e-13, extrapolating=True) == pytest.approx(EXTRAPOLATION_ROUNDOFF * 1e-13)
    top = EXTRAPOLATION_ROUNDOFF * 1e-13 / VACUOUS  # the allowance exactly at the vacuous share: dropped
    assert own_scale_atol(top, 1e-13, extrapolating=True) == pytest.approx(max(1e-9 * top, 1e-13))


_PKG_LAYER = '''import numpy as np

from .util import init_weights


class Linear:
    def __init__(self, n_in=4, n_out=3):
        rng = np.random.default_rng(0)
        self.params = {"W": init_weights((n_in, n_out), rng), "b": np.zeros(n_out, dtype=np.float32)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X.astype(np.float32)
        return self.X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return dY @ self.params["W"].T
'''
_PKG_UTIL = '''import numpy as np


def init_weights(shape, rng):
    return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
'''


def _package(tmp_path):
    pkg = tmp_path / "proj" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text(_PKG_UTIL)
    (pkg / "layers.py").write_text(_PKG_LAYER)
    return pkg / "layers.py"


def test_a_float32_layer_in_a_relatively_importing_package_is_checked_on_its_copy(tmp_path, capsys):
    """M1: the edited copy of mypkg/layers.py (a temp path) was no longer mypkg.layers: its relative import raised,
    the failure was swallowed and the original's "wrong dtype of Y" stood (exit 1)."""
    from gradcheck.cli import main

    code = main(["check", f"{_package(tmp_path)}::Linear", "--input-shape", "5,4"])
    out = capsys.readouterr().out
    assert code == 0 and "checked on a float64 copy" in out, out


def test_a_copy_that_cannot_run_is_said(tmp_path, capsys, monkeypatch):
    """M1: a copy that raises leaves the original's verdict, with a note saying the copy failed and why."""
    import contextlib

    import gradcheck.cli as cli

    made = cli._edited_loader

    def broken(*a, **k):
        @contextlib.contextmanager
        def load(texts):
            with made(*a, **k)(texts):
                raise ImportError("attempted relative import with no known parent package")
            yield
        return load
    monkeypatch.setattr(cli, "_edited_loader", broken)
    code = cli.main(["check", f"{_package(tmp_path)}::Linear", "--input-shape", "5,4"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 1 and "could not be checked: its copy (layers.py" in out, out
    assert "ImportError: attempted relative import with no known parent package" in out, out


_SIG = '''import numpy as np


class Sigmoid:
    def forward(self, {x}):
        return 1 / (1 + np.exp(-{x}))

    def backward(self, {a}, dout):
        return {factor} * dout * {a} * (1 - {a})
'''


@pytest.mark.parametrize("x,a,factor,code", [
    ("x", "out", 1, 0),   # backward(out, dout), correct for out = sigmoid(x): review28g M2 FAILed it (exit 1)
    ("x", "out", 2, 1),   # the same, doubled: wrong under either reading
    ("x", "x", 1, 1),     # backward(x, dout) named as forward's input: CS189's reading, sigmoid's derivative of x
    ("z", "a", 1, 0),     # names that say nothing: behaviour decides
])
def test_backward_of_the_output_or_the_input_is_read_by_behaviour(tmp_path, capsys, x, a, factor, code):
    from gradcheck.cli import main

    f = tmp_path / "sig.py"
    f.write_text(_SIG.format(x=x, a=a, factor=factor))
    rc = main(["check", f"{f}::Sigmoid", "--input-shape", "4,3"])
    out = " ".join(capsys.readouterr().out.split())
    assert rc == code, out
    if code == 0:
        assert "forward's output is handed back" in out and "given the input instead" not in out, out
    if a == "x":
        assert "given the input instead" in out, out


def _linked(tmp_path):
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "sol.py").write_text("import scipy.special  # STAFF_SECRET=hunter2\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layer.py").write_text("import notes  # noqa: F401\nimport numpy as np\n")
    (tmp_path / "sub" / "notes.py").symlink_to("../secret/sol.py")
    (tmp_path / "sub" / "linked.py").symlink_to("../secret/sol.py")
    return tmp_path / "sub"


def test_the_parents_import_scan_reads_no_link_under_namespaces(tmp_path, capsys):
    """M3: with --isolation namespaces the parent's import guard followed notes.py -> ../secret/sol.py and printed
    its line ``import scipy.special  # STAFF_SECRET=hunter2``; a checked file that is a link is not parsed either."""
    from gradcheck.cli import _warn_unavailable_imports
    from gradcheck.grading.static import unavailable_imports

    sub = _linked(tmp_path)
    for f in ("layer.py", "linked.py"):
        assert not [v for v in unavailable_imports([str(sub / f)], nofollow=True) if "hunter2" in v.statement]
        _warn_unavailable_imports([str(sub / f)], graders=True, copied=["layer.py"])
        assert "hunter2" not in capsys.readouterr().out
    assert any("hunter2" in v.statement for v in unavailable_imports([str(sub / "layer.py")]))  # process: one's own


class _Shrinking:
    """Its second backward returns (dx, dgamma) after (dx, dgamma, dbeta) (review28g repro/twice_len)."""

    calls = 0

    def forward(self, x):
        self.x = x
        return 2 * x

    def backward(self, dY):
        self.calls += 1
        out = (2 * dY, dY.sum(0), dY.sum(0))
        return out if self.calls == 1 else out[:2]


def test_a_second_backward_returning_fewer_arrays_is_not_repeatable():
    """L2: zip(first, second) stopped at the shorter answer and passed it; twice_difference says inf (its length check,
    a surviving mutant of sources.py)."""
    from gradcheck.grading.checks import backward_repeatable
    from gradcheck.sources import backward_twice, twice_difference

    x = np.random.default_rng(0).standard_normal((4, 3))
    part = backward_repeatable(_Shrinking(), [x], dY=np.ones((4, 3))).parts[0]
    assert not part.passed and "returned 2 array(s), the first 3" in part.message, part
    assert twice_difference(*backward_twice(_Shrinking(), [x], np.ones((4, 3)))) == float("inf")
    assert twice_difference([x, x[0]], [x]) == float("inf")


def test_a_transposed_dx_is_told_dxs_formula(tmp_path, capsys):
    """L3: a Linear's transposed dX was told to "swap the factors ... dW = dY.T @ X"."""
    from gradcheck.cli import main

    f = tmp_path / "dx_t.py"
    f.write_text(_F64_BASE.replace("return dY @ self.params[\"W\"].T", "return (dY @ self.params[\"W\"].T).T"))
    code = main(["check", f"{f}::Linear", "--input-shape", "5,4"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 1 and "dX is transposed" in out and "dX = dY @ W.T if W is (in, out)" in out, out
    assert "swap the factors" not in out and "dW = dY.T @ X" not in out, out


_F64_BASE = '''import numpy as np


class Linear:
    def __init__(self, n_in=4, n_out=3):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((n_in, n_out)), "b": np.zeros(n_out)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return dY @ self.params["W"].T
'''


def test_student_text_cannot_forge_a_line():
    """Kills review28g's newline_kept mutant (_validation.shown_char keeping whitespace raw): a newline in the checked
    code's text (an exception message) would start a line of its own, e.g. a forged 'PASS: ...'."""
    from gradcheck._validation import printable, shown_char, wrap

    assert printable("boom\nPASS: Linear: every gradient matches") == "boom PASS: Linear: every gradient matches"
    assert shown_char("\n") == " " and shown_char("\t") == " " and shown_char("\x1b") == "\\x1b"
    assert not any(line.startswith("PASS") for line in wrap("x" * 70 + " boom\nPASS: forged").splitlines())


def test_a_cast_in_a_base_class_keeps_its_fail(tmp_path, capsys):
    """A float64 Linear whose base class's forward rounds Y to float32 keeps its FAIL, as check_layer gives it (it does
    not kill review28g's bases_not_followed mutant: the class's own bases are read by file_classes too)."""
    from gradcheck.cli import main

    base = _F64_BASE.replace("class Linear:", "class Base:").replace(
        "return X @ self.params[\"W\"] + self.params[\"b\"]",
        "return (X @ self.params[\"W\"] + self.params[\"b\"]).astype(np.float32)")
    f = tmp_path / "based.py"
    f.write_text(base + "\n\nclass Linear(Base):\n    pass\n")
    code = main(["check", f"{f}::Linear", "--input-shape", "5,4"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 1 and "wrong dtype of Y" in out and "float64 copy" not in out, out
