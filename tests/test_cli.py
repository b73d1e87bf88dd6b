"""The `gradcheck` command: exit codes and messages. The console script itself (its start, --help, exit status,
zoo, train, a closed pipe, the README's examples) runs as a subprocess (``run``); the other checks call
``gradcheck.cli.main`` in this process (``run_here``, the same parser, checks and report; the checked code in its
sandbox), which ``test_run_here_gives_what_the_console_script_gives`` holds to the console script's output."""

import contextlib
import io
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from gradcheck import sandbox

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "gradcheck"
LINEAR_INIT = '{"in_features": 5, "out_features": 3}'


def run(*args, cwd=ROOT, timeout=600):
    cmd = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gradcheck"]
    env = {**os.environ, "MPLBACKEND": "Agg", "NO_COLOR": "1"}
    return subprocess.run(cmd + [str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


#: the interpreter's warning filters (no -W, no PYTHONWARNINGS), which a `gradcheck` process starts with
_PROCESS_FILTERS = (("ignore", ResourceWarning), ("ignore", ImportWarning), ("ignore", PendingDeprecationWarning),
                    ("ignore", DeprecationWarning))


def run_here(*args, cwd=ROOT):
    """``run(*args)`` with ``gradcheck.cli.main`` called in this process: the same ``CompletedProcess`` (exit code,
    stdout, stderr) from the same parser, checks and report, the checked code still in its sandbox process. A
    process of its own spends 2-4 s of a 3-5 s check starting Python and importing numpy, scipy and the course
    packages; the tests about the console script itself (its start, its exit status) call ``run``. As in a
    fresh process writing into a pipe: the working directory ``cwd``, ``NO_COLOR`` and ``MPLBACKEND=Agg`` set,
    argparse's width that of a pipe, Python's default warning filters (not pytest's), and argparse's exit (a usage
    error) returned as its code."""
    from gradcheck.cli import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), warnings.catch_warnings(), pytest.MonkeyPatch.context() as mp, \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        mp.setenv("MPLBACKEND", "Agg")
        mp.setenv("NO_COLOR", "1")
        mp.setenv("COLUMNS", os.environ.get("COLUMNS", "80"))  # argparse's width: a pipe's, not this terminal's
        warnings.resetwarnings()
        for action, category in _PROCESS_FILTERS:
            warnings.simplefilter(action, category)
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: --help (0), a bad option (2)
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["gradcheck", *argv], code, out.getvalue(), err.getvalue())


def check(path, *extra, shape="8,5", init=LINEAR_INIT, cls="Linear", through=None):
    """``gradcheck check path::cls``, in this process (``run_here``) unless ``through`` says otherwise."""
    args = ["check", f"{path}::{cls}", "--input-shape", shape]
    if init is not None:
        args += ["--init", init]
    return (through or run_here)(*args, *extra)


def assert_no_traceback(p):
    assert "Traceback" not in p.stdout + p.stderr


def err(p):
    """stderr with the terminal wrapping undone."""
    return " ".join(p.stderr.split())


def both(p):
    """stdout and stderr with the terminal wrapping undone."""
    return " ".join((p.stdout + "\n" + p.stderr).split())


def student(tmp_path, body, name="student.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(body))
    return f


def check_source(tmp_path, source, name, *args, file="student.py"):
    """``gradcheck check FILE::NAME *args`` (:func:`run_here`) on ``source`` written to ``tmp_path / file`` (dedented:
    :func:`student`): ``(exit code, output)`` (:func:`both`)."""
    p = run_here("check", f"{student(tmp_path, source, file)}::{name}", *args)
    return p.returncode, both(p)


GOOD = """
import numpy as np

class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)),
                       "b": rng.standard_normal(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": dY.T @ self.X, "b": dY.sum(axis=0)}
        return {RETURN}
"""


def test_correct_example_passes_exit_0(tmp_path):
    p = check("examples/student_linear_correct.py", "--plots", tmp_path, through=run)  # the console script
    assert p.returncode == 0, p.stdout + p.stderr
    assert "PASS" in p.stdout and "dX, dW, db" in p.stdout
    assert (tmp_path / "Linear.png").stat().st_size > 10_000
    assert_no_traceback(p)


def test_buggy_example_exits_1_and_names_db():
    p = check("examples/student_linear_buggy.py", through=run)  # the README's example, through the console script
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL: Linear: gradient mismatch in db." in p.stdout
    assert "FAIL Linear db (gradient, manual-vs-numerical)" in p.stdout
    # dX and dW rows are fine
    rows = {line.split()[1] if line.startswith("Linear") else line.split()[0]: line
            for line in p.stdout.splitlines() if line.strip().startswith(("Linear", "dW", "db"))}
    assert rows["dX"].rstrip().endswith("ok") and rows["dW"].rstrip().endswith("ok")
    assert rows["db"].rstrip().endswith("FAIL")
    # the README's excerpt of this output (newuser34 L2: it showed a db row and no mode line the command
    # no longer printed): its db row and its mode line are the command's own; dX and dW's ~1e-11 errors
    # depend on the summation order, so only their status is held
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    excerpt = readme[readme.index("It prints (excerpt):"):readme.index("How to read it:")]
    assert " ".join(rows["db"].split()) in " ".join(excerpt.split()), (rows["db"], excerpt)
    mode = p.stdout[p.stdout.index("mode: eval"):p.stdout.index("\n\n", p.stdout.index("mode: eval"))]
    assert " ".join(mode.split()) in " ".join(excerpt.split()), (mode, excerpt)
    assert_no_traceback(p)


@pytest.mark.parametrize("args, code, where", [
    (("check", "examples/student_linear_buggy.py::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--tape"),
     1, "gradcheck: warning: --tape"),  # a table on stdout, a warning on stderr
    (("check", "examples/student_linear_buggy.py::Linear", "--input-shape", "8,5", "--eps", "2"), 2, "--eps"),
    (("check", "--input-shape", "8,5"), 2, "the following arguments are required"),  # argparse's exit
], ids=["wrong-result-and-warning", "usage-error", "argparse-error"])
def test_run_here_gives_what_the_console_script_gives(args, code, where):
    """``run_here``, by which most check tests run ``gradcheck.cli.main`` in this process, gives what the console
    script gives: the same exit code, stdout and stderr."""
    p, here = run(*args), run_here(*args)
    assert p.returncode == code and where in both(p), both(p)
    assert (here.returncode, here.stdout, here.stderr) == (p.returncode, p.stdout, p.stderr)


def test_twin_flag_adds_tape_column():
    p = check("examples/student_linear_correct.py", "--twin")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "tape~num" in p.stdout and "manual~tape" in p.stdout


def test_missing_file_exit_2(tmp_path):
    p = check(tmp_path / "nope.py")
    assert p.returncode == 2
    assert "does not exist" in err(p) and "nope.py" in err(p)
    assert_no_traceback(p)


def test_syntax_error_exit_3(tmp_path):
    f = student(tmp_path, "class Linear:\n    def forward(self, X)\n        return X\n")
    p = check(f)
    assert p.returncode == 3
    assert "does not import" in err(p) and "SyntaxError" in err(p) and "line 2" in err(p)
    assert_no_traceback(p)


def test_import_error_exit_3(tmp_path):
    f = student(tmp_path, "import torch_not_installed_here\n")
    p = check(f)
    assert p.returncode == 3
    assert "ModuleNotFoundError" in err(p) and "torch_not_installed_here" in err(p)
    assert_no_traceback(p)


def test_missing_class_exit_2_lists_classes(tmp_path):
    f = student(tmp_path, GOOD.replace("{RETURN}", "dY @ self.params['W']"))
    p = check(f, cls="Dense")
    assert p.returncode == 2
    assert "has no class 'Dense'" in err(p) and "Classes defined in it: Linear" in err(p)
    assert_no_traceback(p)


def test_class_without_backward_exit_2(tmp_path):
    """Not usable as written, nothing run failed: a usage error (exit 2), as a bare function's (session 24)."""
    f = student(tmp_path, """
        class Linear:
            def __init__(self, in_features, out_features):
                self.params = {}
            def forward(self, X, training=False):
                return X
    """)
    p = check(f)
    assert p.returncode == 2
    assert "no backward() method" in err(p) and "forward(), backward()" in err(p)
    assert_no_traceback(p)


def test_constructor_raises_exit_3(tmp_path):
    f = student(tmp_path, """
        class Linear:
            def __init__(self, in_features, out_features):
                raise ValueError("not finished yet")
            def forward(self, X, training=False): return X
            def backward(self, dY): return dY
    """)
    p = check(f)
    assert p.returncode == 3
    assert "Linear.__init__(in_features=5, out_features=3) raised ValueError: not finished yet" in err(p)
    assert "student.py:4" in err(p)
    assert_no_traceback(p)


def test_wrong_init_kwargs_exit_2_shows_signature(tmp_path):
    """An --init key the constructor does not take is the caller's mistake (tester3 item 11), not the code's."""
    f = student(tmp_path, GOOD.replace("{RETURN}", "dY @ self.params['W']"))
    p = check(f, init='{"n_in": 5, "n_out": 3}')
    assert p.returncode == 2
    assert "'n_in' is not an argument of" in err(p) and "(in_features, out_features, rng=None)" in err(p)


def test_backward_returns_none_exit_1(tmp_path):
    f = student(tmp_path, GOOD.replace("return {RETURN}", "pass"))
    p = check(f)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "backward(dY)" in both(p) and "returned None for dX" in both(p) and "(8, 5)" in both(p)
    assert_no_traceback(p)


def test_backward_wrong_shape_exit_1(tmp_path):
    f = student(tmp_path, GOOD.replace("{RETURN}", "(dY @ self.params['W']).T"))
    p = check(f)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "dX with shape (5, 8)" in both(p) and "expected shape (8, 5)" in both(p)
    assert_no_traceback(p)


def test_nan_gradient_exit_1(tmp_path):
    f = student(tmp_path, GOOD.replace("{RETURN}", "dY @ self.params['W']")
                .replace('"b": dY.sum(axis=0)', '"b": dY.sum(axis=0) / 0.0')
                .replace("import numpy as np", "import numpy as np\nnp.seterr(all='ignore')"))
    p = check(f)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "db" in both(p) and "non-finite" in both(p)
    assert_no_traceback(p)


@pytest.mark.parametrize("args, needle", [
    (["--input-shape", "8,x"], "--input-shape"),
    (["--input-shape", "8,,5"], "--input-shape"),
    (["--input-shape", "8,-5"], "--input-shape"),
    (["--input-shape", "8,5", "--init", "{in_features: 5}"], "not valid JSON"),
    (["--input-shape", "8,5", "--init", "[5, 3]"], "JSON object"),
    (["--input-shape", "8,5", "--rtol", "0"], "rtol"),
])
def test_usage_errors_exit_2(args, needle):
    p = run_here("check", "examples/student_linear_correct.py::Linear", *args)
    assert p.returncode == 2
    assert needle in err(p)
    assert_no_traceback(p)


def test_spec_without_class_exit_2():
    p = run_here("check", "examples/student_linear_correct.py", "--input-shape", "8,5")
    assert p.returncode == 2 and "::ClassName" in err(p)


def test_help_documents_exit_codes():
    p = run("check", "--help")
    assert p.returncode == 0
    for line in ("0  pass", "1  a result is wrong", "2  usage error", "3  the code could not be checked"):
        assert line in p.stdout
    text = " ".join(p.stdout.split())
    # one rule (newuser item 12): a wrong shape or dtype is a wrong result (1), a crash is 3
    assert ("wrong shape or dtype (int64; float32 from a float64 layer casting what it computed, "
            "Y.astype(np.float32)), missing (None) or holding NaN/inf") in text  # float32 code: a float64 copy (fixg27)
    assert "raised, hung, exited or crashed" in text


def test_python_dash_m_entry_point():
    p = subprocess.run([sys.executable, "-m", "gradcheck", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0 and "zoo" in p.stdout and "check" in p.stdout and "train" in p.stdout


def test_zoo_passes_and_writes_plots(tmp_path):
    p = run("zoo", "--plots", tmp_path / "zoo")
    assert p.returncode == 0, p.stdout + p.stderr
    for name in ("Linear", "Sequential", "SoftmaxCrossEntropy", "dW", "d0.W", "dy_pred"):
        assert name in p.stdout
    assert "PASS" in p.stdout and str(tmp_path / "zoo") in p.stdout
    pngs = {f.name for f in (tmp_path / "zoo").iterdir()}
    assert {"zoo.png", "Linear.png", "Sequential.png"} <= pngs


def test_train_command_passes(tmp_path):
    p = run("train", "--no-progress", "--plots", tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "epoch  30/30" in p.stdout and "max per-step relative loss difference" in p.stdout
    assert "PASS" in p.stdout and (tmp_path / "training.png").exists()
    # newuser21 L8: each epoch's losses once (the progress lines printed them, then the table again), and the
    # gradient error's floor said as the denominator it is, not as a second tolerance beside 1e-09
    last = [line for line in p.stdout.splitlines() if line.split()[:1] == ["30"]]
    assert len(last) == 1 and sum(last[0].split()[1] in line for line in p.stdout.splitlines()) == 1, last
    assert "(floor" not in p.stdout and "|gm-gt|/max(|gm|+|gt|, 1e-06):" in p.stdout


@pytest.mark.parametrize("command", ["zoo", "train"])
def test_zoo_and_train_help_give_their_own_exit_codes(command):
    # newuser21 L9: their --help repeated check's exit codes (exit 3 "the file does not import ...") and examples
    p = run_here(command, "--help")
    assert p.returncode == 0
    assert "exit codes:" in p.stdout and "does not import" not in p.stdout and "\n  3  " not in p.stdout
    assert "gradcheck check" not in p.stdout and f"gradcheck {command} " in p.stdout


def test_train_command_fails_when_requirement_fails(tmp_path):
    p = run("train", "--epochs", "1", "--no-progress", "--no-plots")
    assert p.returncode == 1
    assert "FAIL: test accuracy" in p.stdout


PRODUCT = """
class Product:
    def forward(self, A, B, training=False):
        self.A, self.B = A, B
        return A * B

    def backward(self, dY):
        return {RETURN}
"""


def test_two_input_layer_names_each_gradient(tmp_path):
    f = student(tmp_path, PRODUCT.replace("{RETURN}", "dY * self.B, dY * self.B"))  # dB is wrong
    p = check(f, shape="3,4;3,4", init=None, cls="Product")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "gradient mismatch in dB." in p.stdout and "dA " in p.stdout


def test_two_input_layer_returning_one_gradient_exit_1(tmp_path):
    f = student(tmp_path, PRODUCT.replace("{RETURN}", "dY * self.B"))
    p = check(f, shape="3,4;3,4", init=None, cls="Product")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "expected a tuple of 2 gradients (dA, dB)" in both(p)


# ----------------------------------------------------------------- diagnosis options (issue 5)


def test_buggy_example_diagnosis_json_and_heatmap(tmp_path):
    import json

    p = check("examples/student_linear_buggy.py", "--mode", "full", "--json", tmp_path / "d.json",
              "--plots", tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    out = " ".join(p.stdout.split())
    assert "diagnosis: db is the mean over the batch, not the sum" in out
    assert "\x1b[" not in p.stdout  # no colours when not on a terminal
    d = json.loads((tmp_path / "d.json").read_text())
    assert d["passed"] is False and [f["code"] for f in d["findings"]] == ["bias-mean"]
    assert d["result"]["mode"] == "full"
    assert (tmp_path / "Linear-db-heatmap.png").stat().st_size > 10_000


def test_reference_flag_compares_with_manualprop(tmp_path):
    p = check("examples/student_linear_correct.py", "--reference", "manualprop.Linear", "--mode", "sample")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "manual~ref" in p.stdout and "PASS" in p.stdout
    p = check("examples/student_linear_correct.py", "--reference", "manualprop.Nope")
    assert p.returncode == 2 and "no class 'Nope'" in err(p)


def test_random_forward_is_named(tmp_path):
    f = student(tmp_path, """
        import numpy as np

        class Drop:
            def __init__(self):
                self.params, self.grads = {}, {}

            def forward(self, X, training=False):
                self.m = (np.random.default_rng().random(X.shape) >= 0.5) * 2.0
                return X * self.m

            def backward(self, dY):
                return dY * self.m
    """)
    p = check(f, shape="4,6", init=None, cls="Drop")
    assert p.returncode == 3, p.stdout + p.stderr  # not a wrong result: it cannot be checked
    assert "non-deterministic" in " ".join(p.stdout.split())


def test_input_shape_with_blanks_between_sizes_is_a_usage_error():
    # newuser item 3: "8 5" used to be read as the shape (85,)
    p = check("examples/student_linear_correct.py", shape="8 5")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "--input-shape" in err(p) and "8,5" in err(p) and "'8 5'" in err(p)
    assert_no_traceback(p)
    # blanks around commas stay accepted
    p = check("examples/student_linear_correct.py", shape="8, 5")
    assert p.returncode == 0, p.stdout + p.stderr


STEPS = """
import numpy as np

class Lin:
    def __init__(self, hang=False):
        self.W = np.eye(3); self.calls = 0
        while hang:
            pass

    def forward(self, X):
        self.calls += 1
        if self.calls > 2:  # the probe's 3rd forward
            while True:
                pass
        self.X = X
        return X @ self.W

    def backward(self, dY):
        self.dW = self.X.T @ dY
        return dY @ self.W.T

class Exit:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        import sys
        sys.exit(0)

    def backward(self, dY):
        return dY

class ExitBack:
    def __init__(self):
        self.W = np.eye(3)

    def forward(self, X):
        return X @ self.W

    def backward(self, dY):
        import os
        os._exit(0)
"""


def test_hang_and_exit_name_the_step_that_ran(tmp_path, monkeypatch):
    # 60 limits of allowance, not 10: a busy loop is stopped once it has had its limit in CPU time, which a loaded
    # or stalled machine may not give it within 10 limits (then SandboxStarved, not the timeout asserted)
    monkeypatch.setattr(sandbox, "STARVED_FACTOR", 60)
    # newuser item 6: a forward that loops or exits was blamed on the import and the constructor
    # a 1 s limit: each hang busy-loops through it (any limit names the step; 3 s cost 4 CPU-s more)
    f = student(tmp_path, STEPS)
    p = check(f, "--timeout", "1", shape="8,3", init=None, cls="Lin")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "Lin.forward (called on the probe input" in err(p) and "did not finish within 1 s" in err(p)
    assert "importing" not in err(p)
    p = check(f, "--timeout", "1", shape="8,3", init='{"hang": true}', cls="Lin")
    assert p.returncode == 3 and "building student.py::Lin(hang=True) did not finish" in err(p), err(p)
    p = check(f, shape="8,3", init=None, cls="Exit")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "Exit.forward, called on the probe input while student.py::Exit was loaded, raised SystemExit" in err(p)
    assert "__init__" not in err(p)
    p = check(f, shape="8,3", init=None, cls="ExitBack")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "ExitBack.backward (called after a probe forward" in err(p) and "ended the sandbox process" in err(p), err(p)
    assert_no_traceback(p)


def test_rtol_of_one_or_more_is_refused_with_the_reason():
    # newuser item 10: the relative error is at most 1, so rtol >= 1 passes every gradient
    for rtol in ("1", "10"):
        p = check("examples/student_linear_buggy.py", "--rtol", rtol)
        assert p.returncode == 2, p.stdout + p.stderr
        assert "--rtol must be a finite number in (0, 1)" in err(p) and "at most 1" in err(p)
    with pytest.raises(Exception, match=r"rtol must be a finite number in \(0, 1\)"):
        from gradcheck._validation import check_tolerances
        check_tolerances(1.0, 0.0)


BIG = """
import numpy as np

class BigLinear:
    def __init__(self, scale=1e10, rng=None):
        rng = np.random.default_rng(rng)
        self.W = rng.standard_normal((5, 3)) * scale
        self.b = np.zeros(3)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW = self.X.T @ dY
        self.db = dY.mean(0)  # BUG: sum(0)
        return dY @ self.W.T
"""


def test_default_atol_larger_than_the_gradients_grows_the_step_and_catches_the_bug(tmp_path):
    # newuser item 10: the default atol grows with |Y| (12 here, |db| <= 2.5) and passed db = dY.mean(0)
    # with a warning; issue 10 sec. 3: the step of a swamped tensor grows instead, and the bug fails
    f = student(tmp_path, BIG)
    p = check(f, shape="8,5", init=None, cls="BigLinear")
    out = " ".join(p.stdout.split())
    assert p.returncode == 1 and "FAIL: BigLinear: gradient mismatch in db." in out, p.stdout
    assert "db was differenced with a step 10000 times larger" in out and "is larger than every" not in out
    assert "dX was differenced" not in out  # |dX| ~ 1e10 is far above the atol: its step is not grown
    # a small scale: the floor atol, no warning, the bug is caught
    p = check(f, shape="8,5", init='{"scale": 1.0}', cls="BigLinear")
    assert p.returncode == 1 and "is larger than every" not in p.stdout, p.stdout


def test_file_named_like_a_module_is_checked_or_told_to_rename(tmp_path):
    # newuser item 11: attr.py was refused (an installed module numpy never imports); code.py, typing.py
    # are refused with the advice to rename the file
    body = GOOD.replace("{RETURN}", "dY @ self.params['W']")
    f = student(tmp_path, body, name="attr.py")
    p = check(f)
    assert p.returncode == 0, p.stdout + p.stderr
    for name in ("code.py", "typing.py"):
        f = student(tmp_path, body, name=name)
        p = check(f)
        assert p.returncode == 2, p.stdout + p.stderr
        stem = name[:-3]
        assert f"rename the file (e.g. {name} -> my_{name})" in err(p) and f"module '{stem}'" in err(p)
        assert err(p).count("standard-library module") == 1  # said once, not in a warning and again in the error
    assert_no_traceback(p)


def test_cs231n_settings_argument_is_pointed_to_init():
    # newuser item 9: conv_forward_naive(x, w, b, conv_param) without conv_param
    p = run_here("check", "examples/cs231n_layers.py::conv", "--input-shape", "2,3,5,5;4,3,3,3;4")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "conv_param is a dict of settings, not an array: pass it in --init" in err(p)
    assert """--init '{"conv_param": {"stride": 1, "pad": 1}}'""" in err(p)
    assert_no_traceback(p)


def test_readme_cs231n_row_commands_run_as_pasted():
    # newuser21 M1: the row gave affine's --input-shape and conv's --init side by side; pasted together
    # on ::affine they exited 2 ("--init key 'conv_param' is not an argument of affine_forward"). Every
    # `layers.py::NAME ...` command of docs/checking.md (moved from the README) runs on examples/cs231n_layers.py and passes.
    import re
    import shlex

    readme = (ROOT / "docs" / "checking.md").read_text(encoding="utf-8")
    commands = re.findall(r"`(layers\.py::\w+ --[^`]+)`", readme)
    assert {c.split()[0] for c in commands} == {"layers.py::affine", "layers.py::conv"}, commands
    for command in commands:
        target, *options = shlex.split(command)
        p = run_here("check", "examples/cs231n_" + target, *options)
        assert p.returncode == 0 and "PASS" in p.stdout, (command, p.stdout[-1500:], p.stderr[-1500:])


def test_exit_codes_one_rule_wrong_results_1_crashes_3(tmp_path):
    # newuser item 12: float32 output gave 1 but int64 output 3; a transposed non-square dW gave 3
    # "the checked code failed" though the diagnosis names it, and said the same sentence twice
    f = student(tmp_path, """
        import numpy as np
        class IntOut:
            def __init__(self): self.params = {}; self.grads = {}
            def forward(self, X, training=False): return (X > 0).astype(np.int64)
            def backward(self, dY): return np.zeros_like(dY)
        class F32:
            def __init__(self): self.params = {}; self.grads = {}
            def forward(self, X, training=False): return np.tanh(X).astype(np.float32)
            def backward(self, dY): return dY * (1 - np.tanh(X) ** 2)
    """)
    for cls in ("IntOut", "F32"):
        p = check(f, init=None, cls=cls)
        assert p.returncode == 1, p.stdout + p.stderr
    f = student(tmp_path, GOOD.replace('"W": dY.T @ self.X', '"W": self.X.T @ dY')
                .replace("{RETURN}", "dY @ self.params['W']"), name="transposed.py")
    p = check(f)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL: Linear: wrong shape of dW." in p.stdout and "dW is transposed" in both(p)
    assert "the checked code failed" not in both(p)
    assert both(p).count("That is the transpose of the expected shape.") == 1


IN_OUT = """
import numpy as np

class Linear:  # weights (in, out), attribute style
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.W = rng.standard_normal((in_features, out_features))
        self.b = rng.standard_normal(out_features)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW = self.X.T @ dY
        self.db = dY.sum(0)
        return dY @ self.W.T
"""


@pytest.mark.parametrize("extra", [["--twin"], ["--reference", "manualprop.Linear"]])
def test_twin_and_reference_of_an_in_out_linear(tmp_path, extra):
    # newuser item 4: a correct (in, out) Linear got a usage error "variables['W'] has shape (3, 5)"
    f = student(tmp_path, IN_OUT)
    p = check(f, *extra)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "transpose of" in both(p) and "transposed back" in both(p)
    col = "manual~tape" if extra == ["--twin"] else "manual~ref"
    assert col in p.stdout
    # a wrong dW in the (in, out) layout is caught by the twin/reference as well
    bad = student(tmp_path, IN_OUT.replace("self.dW = self.X.T @ dY", "self.dW = 2 * self.X.T @ dY"), "bad.py")
    p = check(bad, *extra)
    assert p.returncode == 1, p.stdout + p.stderr
    row = next(line for line in p.stdout.splitlines() if line.split()[:1] == ["dW"])
    assert "FAIL" in row and row.count("e-") < 4, row  # the manual~tape/ref column is large too


def test_twin_given_but_no_autoprop_class_says_so(tmp_path):
    # newuser item 5: with --twin given, the report said "add --twin"
    f = student(tmp_path, """
        import numpy as np
        class ReLUdXdY:
            def __init__(self): self.params = {}; self.grads = {}
            def forward(self, X, training=False): self.X = X; return np.maximum(X, 0)
            def backward(self, dY): return dY * (self.X > 0)
    """)
    p = check(f, "--twin", init=None, cls="ReLUdXdY")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "add --twin" not in both(p)
    assert "autoprop.layers / autoprop.losses has no class of that name): ReLUdXdY" in both(p)
    assert both(p).count("no tape comparison") == 1


def test_smaller_messages_of_the_newuser_report(tmp_path):
    # newuser item 13: a tuple from backward was told "wrap the value in np.asarray"; a missing absolute path
    # said where it looked; the PASS line called the forward output Y a gradient. Session 9 (V11c, X9): a
    # tuple of distinct shapes is read by shape, a gradient it leaves out is read where backward stores it
    f = student(tmp_path, GOOD.replace("{RETURN}", "dY @ self.params['W'], self.grads['W']"))
    p = check(f)
    assert p.returncode == 0, p.stdout + p.stderr
    t = " ".join(both(p).split())
    assert "np.asarray" not in t and "backward returns (dX, dW): paired by shape" in t, t
    assert "db not returned; the check reads the stored grads['b'] in its place" in t, t
    p = check(tmp_path / "nope" / "gone.py")
    assert p.returncode == 2 and "does not exist." in err(p) and "looked in" not in err(p), err(p)
    f = student(tmp_path, IN_OUT, name="inout.py")
    p = check(f, "--twin")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "every gradient (dX, dW, db) and the forward output match within" in both(p)


def test_loss_indexing_by_real_targets_points_to_targets_labels(tmp_path):
    # newuser item 13: --loss without --targets failed with a bare IndexError message
    f = student(tmp_path, """
        import numpy as np
        class CrossEntropy:
            def forward(self, y_true, y_pred):
                z = y_pred - y_pred.max(1, keepdims=True); p = np.exp(z); p /= p.sum(1, keepdims=True)
                self.p, self.y = p, y_true
                return -np.log(p[np.arange(len(p)), y_true]).mean()
            def backward(self):
                d = self.p.copy(); d[np.arange(len(d)), self.y] -= 1
                return d / len(d)
    """)
    p = run_here("check", f"{f}::CrossEntropy", "--loss", "--input-shape", "8,5")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "IndexError" in err(p) and "add --targets labels" in err(p)
    p = run_here("check", f"{f}::CrossEntropy", "--loss", "--input-shape", "8,5", "--targets", "labels")
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_closed_pipe_ends_quietly_with_no_traceback(tmp_path):
    """`gradcheck assignment release ... | head -1` printed a BrokenPipeError traceback."""
    cmd = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gradcheck"]
    p = subprocess.Popen(cmd + ["assignment", "release", str(ROOT / "lessons" / "05b-hinge-loss.md"), "--out",
                                str(tmp_path / "out")], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader leaves before the first line
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141 and "Traceback" not in err and "BrokenPipe" not in err, err
