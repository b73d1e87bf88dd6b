"""The messages of `gradcheck check|zoo|train` (first found wrong by a new-user test): each usage mistake
is exit 2 with a message naming the option (never a traceback), the sandbox blames the student only for
the student's code, dtypes and losses are recognised, misleading diagnoses and wordings are fixed.

`gradcheck.cli.main` runs in this process (the student's code still runs in a sandbox process);
usage errors return before any sandbox starts, so most of these tests take milliseconds.
"""

import textwrap
from pathlib import Path

import numpy as np
import pytest

from gradcheck import diagnose_layer
from gradcheck.cli import main
from gradcheck.errors import GraderError, GradientShapeError, StudentCodeError
from gradcheck.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
CORRECT = str(ROOT / "examples" / "student_linear_correct.py")
INIT = '{"in_features": 5, "out_features": 3}'

LINEAR = """
import numpy as np

class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)),
                       "b": rng.standard_normal(out_features)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return Y_EXPR

    def backward(self, dY):
        GRADS
        return DX_EXPR
"""
Y = 'X @ self.params["W"].T + self.params["b"]'
GRADS = 'self.grads["W"] = dY.T @ self.X\n        self.grads["b"] = dY.sum(axis=0)'
DX = 'dY @ self.params["W"]'


def student(tmp_path, y=Y, grads=GRADS, dx=DX, header="", name="student.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(header) + LINEAR.replace("Y_EXPR", y).replace("GRADS", grads)
                 .replace("DX_EXPR", dx))
    return f


def gc(capsys, *args):
    """Run `gradcheck ARGS` in this process: (exit code, stdout, stderr with the wrapping undone)."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, " ".join(err.split())


def check(capsys, path, *extra, shape="8,5", cls="Linear", init=INIT):
    args = ["check", f"{path}::{cls}", "--input-shape", shape] + (["--init", init] if init else [])
    return gc(capsys, *args, *extra)


# --------------------------------------------------------------------------- 1, 2: usage errors, exit 2


@pytest.fixture
def blocked(tmp_path):
    """A path that cannot be a folder (its parent is a regular file): unwritable even for root."""
    (tmp_path / "afile").write_text("")
    return tmp_path / "afile" / "out"


@pytest.mark.parametrize("argv, needle", [
    (["check", f"{CORRECT}::Linear", "--init", INIT, "--input-shape", "8,5", "--seed", "-1"], "--seed"),
    (["check", f"{CORRECT}::Linear", "--init", INIT, "--input-shape", "8,5", "--eps", "1e-300"], "--eps"),
    (["check", f"{CORRECT}::Linear", "--init", INIT, "--input-shape", "8,5", "--json", "BLOCKED.json"], "--json"),
    (["check", f"{CORRECT}::Linear", "--init", INIT, "--input-shape", "8,5", "--plots", "BLOCKED"], "--plots"),
    (["check", f"{CORRECT}::Linear", "--init", INIT, "--input-shape", "99999999999,5"], "--input-shape"),
    (["check", f"{CORRECT}::Linear", "--init", INIT, "--input-shape", "20000000,5"], "at most 10,000,000"),
    (["zoo", "--seed", "-1", "--no-plots"], "--seed"),
    (["zoo", "--plots", "BLOCKED"], "--plots"),
    (["train", "--seed", "-1", "--no-plots"], "--seed"),
    (["train", "--plots", "BLOCKED"], "--plots"),
])
def test_bad_options_are_usage_errors_naming_the_option(capsys, blocked, argv, needle):
    argv = [a.replace("BLOCKED", str(blocked)) for a in argv]
    code, out, err = gc(capsys, *argv)
    assert code == 2, (out, err)
    assert err.startswith("gradcheck: usage error (exit 2):") and needle in err
    assert "Traceback" not in out + err


def test_nothing_is_created_when_an_option_is_bad(capsys, tmp_path):
    code, _, err = gc(capsys, "train", "--seed", "-1", "--plots", tmp_path / "plots")
    assert code == 2 and "--seed" in err
    assert not (tmp_path / "plots").exists()


def test_sandbox_running_out_of_memory_on_its_own_side_does_not_blame_the_student():
    # 200 MB of input (shared memory the child maps: 80 MB now fits beside numpy) into a sandbox of 256 MiB: the child fails receiving it, before any student code
    with Sandbox(files={"s.py": CORRECT}, memory_mb=256) as sb:
        layer = sb.load_layer("s.py", "Linear", {"in_features": 5, "out_features": 3})
        with pytest.raises(GraderError) as info:
            layer.forward(np.zeros((5_000_000, 5)))
    assert not isinstance(info.value, StudentCodeError) and info.value.exit_code == 2
    msg = str(info.value)
    assert "not a fault of the checked code" in msg and "sys.exit" not in msg


# --------------------------------------------------------------------------- 3, 4: dtypes


def test_integer_backward_is_a_dtype_error_exit_1(capsys, tmp_path):
    code, out, err = check(capsys, student(tmp_path, dx=f"({DX}).astype(int)"))
    assert code == 1, (out, err)  # a wrong result: exit 1 like float32 (newuser item 12)
    assert "backward(dY) with dY of shape (8, 3) returned dX of dtype int64; gradients must be float64 " \
           "(the input's dtype)" in " ".join((out + err).split())
    assert "not linear" not in out + err


def test_integer_forward_is_a_dtype_error_exit_1(capsys, tmp_path):
    code, out, err = check(capsys, student(tmp_path, y=f"({Y}).astype(int)"))
    assert code == 1, (out, err)  # a wrong result: exit 1 like float32 (newuser item 12)
    assert "returned Y of dtype int64; the output must be float64" in " ".join((out + err).split())
    assert "no known bug pattern" not in out


def test_integer_gradient_of_a_local_layer_is_named_too():
    class IntGrad:
        params, grads = {}, {}

        def forward(self, X, training=False):
            return 2 * X

        def backward(self, dY):
            return (2 * dY).astype(np.int32)

    d = diagnose_layer(IntGrad(), (4, 3))
    assert isinstance(d.error, GradientShapeError) and "dX of dtype int32" in str(d.error)
    assert "not-linear" not in d.codes


def test_float32_forward_is_a_precision_finding_exit_1(capsys, tmp_path):
    code, out, err = check(capsys, student(tmp_path, y=f"({Y}).astype(np.float32)"))
    assert code == 1, (out, err)
    assert "forward returns float32 for a float64 input (precision lost:" in " ".join(out.split())
    assert "no known bug pattern" not in out


def test_float32_mutant_fails_like_the_grader_says(capsys):
    code, out, err = check(capsys, ROOT / "assignments/linear_relu_ce/mutants/float32/layers.py")
    assert code == 1, (out, err)
    assert "backward returns dX as float32 for a float64 input (precision lost:" in " ".join(out.split())
    assert "PASS" not in out


def test_float32_parameters_warn_once_and_pass(capsys, tmp_path):
    f = student(tmp_path, header="", y=Y)
    f.write_text(f.read_text().replace(
        "self.grads = {k:", "self.params = {k: v.astype(np.float32) for k, v in self.params.items()}\n"
                           "        self.grads = {k:"))
    code, out, err = check(capsys, f)
    assert code == 0, (out, err)
    assert err.count("params['W'] is float32") == 1
    assert "structural checks failed" not in out and "note:" not in out


# --------------------------------------------------------------------------- 5: the student's own output


def test_student_prints_are_shown_when_forward_fails(capsys, tmp_path):
    f = student(tmp_path, y='print("debug: shape", X.shape) or undefined_name')
    code, out, err = check(capsys, f)
    assert code == 3
    assert "NameError" in err and "output of Linear" in err and "debug: shape (8, 5)" in err


def test_verbose_shows_the_output_of_a_passing_layer(capsys, tmp_path):
    f = student(tmp_path, y=f'print("hello from forward") or {Y}')
    code, out, err = check(capsys, f)
    assert code == 0 and "hello from forward" not in err
    code, out, err = check(capsys, f, "--verbose")
    assert code == 0 and "hello from forward" in err and "times]" in err


# --------------------------------------------------------------------------- 6, 7: what was checked


def test_a_loss_without_loss_flag_is_a_usage_error(capsys):
    code, out, err = check(capsys, ROOT / "assignments/linear_relu_ce/solution/layers.py", shape="6,4",
                           cls="SoftmaxCrossEntropy", init=None)
    assert code == 2, (out, err)
    assert "this looks like a loss: use --loss" in err and "training keyword" in err
    code, out, err = check(capsys, CORRECT, "--loss")
    assert code == 2 and "looks like a layer, not a loss: forward(X, training=False)" in err


def test_more_shapes_than_inputs_is_a_usage_error(capsys):
    code, out, err = check(capsys, CORRECT, shape="8;5")
    assert code == 2, (out, err)
    assert "2 input shapes given, but Linear.forward takes 1 input (X)" in err


# --------------------------------------------------------------------------- 8: misleading diagnoses


def test_grads_replaced_by_a_list(capsys, tmp_path):
    code, out, err = check(capsys, student(tmp_path, grads="self.grads = [dY.T @ self.X, dY.sum(axis=0)]"))
    assert code == 3
    assert "grads must be a dict; got list" in err and "_NotADict" not in out + err


def test_accumulating_grads_are_named_in_the_sandbox(capsys, tmp_path):
    code, out, err = check(capsys, student(tmp_path, grads=GRADS.replace("] =", "] +=")))
    assert code == 1
    text = " ".join(out.split())
    assert "diagnosis: gradients accumulated across calls instead of overwritten" in text
    assert "backward(0)" not in text and "second backward on the same forward" not in text


def test_nan_backward_reports_nan_only(capsys, tmp_path):
    code, out, err = check(capsys, student(tmp_path, dx=f"{DX} * np.nan"))
    assert code == 1  # a wrong result (newuser item 12)
    assert "non-finite" in out + err and "nan" in out + err and "np.float64" not in out + err
    assert "linear in dY" not in out and "second backward" not in out


def test_nan_sentence_is_singular():
    class NaNGrad:
        params, grads = {}, {}

        def forward(self, X, training=False):
            return X

        def backward(self, dY):
            return dY * np.nan

    assert "dX contains NaN" in diagnose_layer(NaNGrad(), (3, 2)).sentence()


# --------------------------------------------------------------------------- 9: wording


def test_tape_hint_and_article(capsys, tmp_path):
    code, out, _ = check(capsys, CORRECT, "--mode", "sample")
    assert code == 0 and "add --twin to compare with the tape" in " ".join(out.split())
    f = tmp_path / "consts.py"
    f.write_text("N = 5\n")
    code, _, err = check(capsys, f, cls="N", init=None)
    assert code == 2 and "is an int, not a class" in err


def test_the_add_twin_hint_only_where_twin_would_work(capsys, tmp_path):
    """Before: printed for a CS231n pair and for a class autoprop has no counterpart of. A random
    Dropout is held by a proxy object for the check: its hint stays (the class name is the reported one)."""
    pair = ["check", f"{ROOT / 'examples' / 'cs231n_layers.py'}::affine", "--input-shape", "4,5;5,3;3"]
    code, out, err = gc(capsys, *pair)
    assert code == 0 and "PASS" in out and "--twin" not in out + err
    code, out, err = gc(capsys, "check", f"{student(tmp_path)}::Linear", "--input-shape", "8,5", "--init", INIT)
    assert code == 0 and "add --twin to compare with the tape" in " ".join(out.split())
    dense = student(tmp_path, name="dense.py")
    dense.write_text(dense.read_text().replace("class Linear", "class Dense"))
    code, out, err = gc(capsys, "check", f"{dense}::Dense", "--input-shape", "8,5", "--init", INIT)
    assert code == 0 and "PASS" in out and "--twin" not in out + err
    drop = tmp_path / "drop.py"
    drop.write_text(textwrap.dedent("""\
        import numpy as np

        class Dropout:
            def __init__(self, p=0.5):
                self.p, self.rng = p, np.random.default_rng(0)
            def forward(self, X, training=False):
                self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p) if training else 1.0
                return X * self.mask
            def backward(self, dY):
                return dY * self.mask
        """))
    code, out, err = gc(capsys, "check", f"{drop}::Dropout", "--input-shape", "4,3")
    flat = " ".join(out.split())
    assert code == 0, flat
    assert "its random generator (Generator) was rewound before every forward" in flat  # held: checked via a proxy
    for mode in ("eval", "training"):
        assert f"no tape comparison for Dropout [{mode}]: add --twin to compare with the tape" in flat


def test_no_progress_bar_when_stderr_is_not_a_terminal(capsys):
    from gradcheck.train import TrainConfig, run_training

    lines = []
    run_training(TrainConfig(epochs=1), progress=True, log=lines.append)
    _, err = capsys.readouterr()
    assert "manual+tape" not in err  # tqdm's bar (its description) is not drawn into a log
    assert lines and lines[0].startswith("epoch   1/1")
