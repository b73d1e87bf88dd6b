"""assignments/cs231n_layers: CS231n-style function pairs graded by the pytest plugin and checked by ``gradcheck check``.

* The solution, the released stub and every planted-bug mutant are graded in one batch
  (module fixture, 2 workers): the solution gets full marks, the stub 0 without a crash,
  each mutant fails exactly the tests listed in ``mutants/MUTANTS.json``, with its diagnosis,
  and loses exactly the listed points (partial credit per tensor).
* The stub is what ``gradcheck assignment release`` makes of the solution (byte for byte).
* The installed console script ``gradcheck check file.py::NAME`` passes the solution's pairs and
  ``softmax_loss`` and fails every mutant with the exit code listed (1 a wrong gradient, 3 a
  backward that writes into dout); the one mutant central differences cannot see (relu's
  derivative at the kink) passes, as MUTANTS.json says.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcheck import check_layer, check_loss, function_pair, loss_function
from gradcheck.assignment import release, student_python
from gradcheck.errors import UsageError
from gradcheck.grading.runner import grade_batch
from tests.run_shared import once_per_run

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "cs231n_layers"
TESTS = ASSIGN / "tests"
MUTANTS = json.loads((ASSIGN / "mutants" / "MUTANTS.json").read_text())
TOTAL = 48.0  # 47 + batchnorm's backward-twice test (review27g H2)
SCRIPT = Path(sys.executable).parent / "gradcheck"
TIMEOUT = 600  # subprocesses: the machine may be loaded many times over


SOLUTION_BN = """    running_mean = np.asarray(bn_param.get("running_mean", np.zeros(D)), dtype=np.float64)
    running_var = np.asarray(bn_param.get("running_var", np.ones(D)), dtype=np.float64)
    if mode == "train":
        mean, var = x.mean(axis=0), x.var(axis=0)
        bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mean
        bn_param["running_var"] = momentum * running_var + (1 - momentum) * var
"""
# no np.asarray: right for the (D,) arrays CS231n hands in, wrong for lists (a new-user tester's U4: the
# grading tests passed bn_param's running statistics as lists, and this correct code lost 7 points)
CLASSIC_BN = """    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.ones(D, dtype=x.dtype))
    if mode == "train":
        mean, var = x.mean(axis=0), x.var(axis=0)
        running_mean = momentum * running_mean + (1 - momentum) * mean
        running_var = momentum * running_var + (1 - momentum) * var
        bn_param["running_mean"], bn_param["running_var"] = running_mean, running_var
"""


def _grade_all(folder: Path) -> None:
    subs = folder / "subs"
    for name, src in [("solution", ASSIGN / "solution"), ("stub", ASSIGN / "stub"),
                      *[(m, ASSIGN / "mutants" / m) for m in MUTANTS]]:
        (subs / name).mkdir(parents=True)
        (subs / name / "layers.py").write_text((src / "layers.py").read_text())
    (subs / "classic").mkdir()  # batchnorm_forward as CS231n's skeleton has students write it
    (subs / "classic" / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text().replace(
        SOLUTION_BN, CLASSIC_BN))
    grade_batch(subs, TESTS, folder / "graded", workers=2, seed=13, timeout=5.0, progress=False, plot=False)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """The output folder of the batch: graded once per test run, whichever xdist workers run this module's tests
    (:func:`tests.run_shared.once_per_run`); the tests only read it."""
    return once_per_run(tmp_path_factory, "cs231n-batch", _grade_all) / "graded"


def results(out: Path, name: str) -> dict:
    return json.loads((out / name / "results.json").read_text())


def failing(data: dict) -> dict:
    return {t["name"]: t for t in data["tests"] if t["status"] != "passed"}


def test_solution_gets_full_marks(batch):
    data = results(batch, "solution")
    assert data["score"] == data["extra_data"]["max_score"] == TOTAL and not failing(data)
    assert len(data["tests"]) == 22 and data["extra_data"]["seed"] == 13


def test_classic_cs231n_batchnorm_gets_full_marks(batch):
    """bn_param's running statistics reach the student as (D,) arrays, as in CS231n, not as lists."""
    assert SOLUTION_BN in (ASSIGN / "solution" / "layers.py").read_text()
    data = results(batch, "classic")
    assert data["score"] == TOTAL and not failing(data), failing(data)


def test_stub_gets_zero_without_a_crash(batch):
    data = results(batch, "stub")
    assert data["score"] == 0 and len(failing(data)) == 22
    first = data["tests"][0]["output"]
    assert "raised NotImplementedError: Exercise 1: implement affine_forward" in first
    assert "Traceback" not in json.dumps(data)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_loses_exactly_its_points(batch, mutant):
    spec = MUTANTS[mutant]
    data = results(batch, mutant)
    bad = failing(data)
    assert sorted(bad) == sorted(spec["fails"]), {k: v["output"] for k, v in bad.items()}
    assert data["score"] == pytest.approx(TOTAL - spec["lost"], abs=1e-3), data["score"]
    for name in spec["fails"]:  # a test of a property (backward twice) says its own words ("diagnoses")
        assert spec.get("diagnoses", {}).get(name, spec["diagnosis"]) in bad[name]["output"], bad[name]["output"]
        assert "Traceback" not in bad[name]["output"]


def test_every_function_has_a_mutant():
    functions = ["affine", "relu", "softmax", "batchnorm", "conv", "max_pool"]
    assert all(any(m.startswith(f) for m in MUTANTS) for f in functions)
    solution = (ASSIGN / "solution" / "layers.py").read_text()
    for m in MUTANTS:  # each mutant is the solution with one edit
        text = (ASSIGN / "mutants" / m / "layers.py").read_text()
        assert text != solution
        a, b = solution.splitlines(), text.splitlines()
        assert abs(len(a) - len(b)) <= 2


def test_partial_credit_per_input_gradient(batch):
    t = failing(results(batch, "affine_db_not_summed"))["affine_backward: gradients dx, dw, db (2 points each)"]
    assert (t["score"], t["max_score"]) == (4.0, 6.0)
    assert "`dx`: ok" in t["output"] and "`dw`: ok" in t["output"] and "`db`: **wrong**" in t["output"]


# --------------------------------------------------------------------------- release


def test_stub_is_the_released_solution(tmp_path):
    rep = release(ASSIGN / "solution" / "layers.py", tmp_path)
    assert rep.path.read_text() == (ASSIGN / "stub" / "layers.py").read_text()
    assert rep.solutions == 11 and rep.exercises[0] == "Exercise 1: implement affine_forward"
    assert rep.exercises[-1] == "Exercise 11: implement max_pool_backward"
    assert "### BEGIN" not in rep.path.read_text()


def test_release_of_a_python_file_numbers_each_function():
    src = ('"""Doc."""\nimport numpy as np\n\n\n@staticmethod\ndef f(x):\n    ### BEGIN SOLUTION\n    y = x\n'
           '    ### END SOLUTION\n    return y\n\n\ndef helper():\n    return 1\n\n\nclass Relu:\n'
           '    def backward(self, dY):\n        ### BEGIN SOLUTION\n        return dY\n        ### END SOLUTION\n')
    new, msgs, n = student_python(src)
    assert n == 2 and msgs == ["Exercise 1: implement f", "Exercise 2: implement the backward of Relu"]
    assert new == src.replace("    ### BEGIN SOLUTION\n    y = x\n    ### END SOLUTION\n",
                              '    # YOUR CODE HERE\n    raise NotImplementedError("Exercise 1: implement f")\n').replace(
        "        ### BEGIN SOLUTION\n        return dY\n        ### END SOLUTION\n",
        '        # YOUR CODE HERE\n        raise NotImplementedError("Exercise 2: implement the backward of Relu")\n')
    with pytest.raises(UsageError, match="never closed"):
        student_python("def f():\n    ### BEGIN SOLUTION\n    return 1\n")


def test_release_command_on_the_solution(tmp_path):
    cmd = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "gradcheck"]
    p = subprocess.run(cmd + ["assignment", "release", str(ASSIGN / "solution" / "layers.py"), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert "11 solution block(s) replaced" in p.stdout and "Exercise 9: implement conv_backward_naive" in p.stdout


# ------------------------------------ gradcheck check (in this process; one test through the console script)

PAIRS = {
    "affine": ["--input-shape", "4,2,3;6,5;5"],
    "relu": ["--input-shape", "4,5"],
    "batchnorm": ["--input-shape", "6,4;4;4", "--init", '{"bn_param": {"mode": "train"}}'],
    "conv": ["--input-shape", "2,2,5,5;3,2,3,3;3", "--init", '{"conv_param": {"stride": 2, "pad": 1}}'],
    "max_pool": ["--input-shape", "2,2,4,4", "--init", '{"pool_param": {"pool_height": 2, "pool_width": 2, '
                 '"stride": 2}}'],
    "softmax_loss": ["--loss", "--input-shape", "5,4", "--targets", "labels"],
}


def gradcheck_check(file: Path, name: str, args: list[str], console=False) -> subprocess.CompletedProcess:
    """``gradcheck check file::name args``: ``gradcheck.cli.main`` in this process (``test_cli.run_here``, the
    checked code in its sandbox), or the console script (``console``)."""
    if not console:
        from test_cli import run_here

        return run_here("check", f"{file}::{name}", *args)
    assert SCRIPT.exists(), f"the console script {SCRIPT} is not installed (make venv)"
    return subprocess.run([str(SCRIPT), "check", f"{file}::{name}", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, env={**os.environ, "MPLBACKEND": "Agg"})


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_check_passes_the_solution(name):
    p = gradcheck_check(ASSIGN / "solution" / "layers.py", name, PAIRS[name])
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"PASS: {name}" in p.stdout
    if name != "softmax_loss":
        assert "protocol: CS231n function pair" in p.stdout


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_check_fails_each_mutant(mutant):
    spec = MUTANTS[mutant]
    name, *args = spec["check"]
    p = gradcheck_check(ASSIGN / "mutants" / mutant / "layers.py", name, args)
    assert p.returncode == spec["check_exit"], p.stdout + p.stderr
    if spec["check_exit"] == 1:
        assert f"FAIL: {name}" in p.stdout
    elif spec["check_exit"] == 3:
        assert "in place" in " ".join(p.stderr.split())
    else:  # the kink: invisible to central differences, caught by the graded test at x == 0
        assert "PASS" in p.stdout and "check_note" in spec


def test_a_loss_function_is_not_a_layer():
    p = gradcheck_check(ASSIGN / "solution" / "layers.py", "softmax_loss", ["--input-shape", "5,4"], console=True)
    assert p.returncode == 2
    assert "softmax_loss is a function, not a class" in " ".join(p.stderr.split()) and "--loss" in p.stderr


# --------------------------------------------------------------------------- the public wrappers, in process


def test_function_pair_and_loss_function_in_process():
    import importlib.util

    spec = importlib.util.spec_from_file_location("cs231n_solution", ASSIGN / "solution" / "layers.py")
    L = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(L)
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((3, 2, 2)), rng.standard_normal((4, 5)), rng.standard_normal(5)
    res = check_layer(function_pair(L.affine_forward, L.affine_backward), [x, w, b], twin=None)
    assert res.passed and sorted(r.tensor for r in res.records if r.kind == "gradient") == ["db", "dw", "dx"]
    conv = function_pair(L.conv_forward_naive, L.conv_backward_naive, conv_param={"stride": 1, "pad": 1})
    assert check_layer(conv, [(2, 2, 4, 4), (2, 2, 3, 3), (2,)], twin=None).passed
    y = rng.integers(0, 4, size=6)
    assert check_loss(loss_function(L.softmax_loss), y, rng.standard_normal((6, 4)), twin=None).passed
    bad = function_pair(L.affine_forward, lambda dout, cache: L.affine_backward(2 * dout, cache))
    assert not check_layer(bad, [x, w, b], twin=None).passed
    with pytest.raises(TypeError, match="must return \\(loss, dx\\)"):
        loss_function(lambda x, y: 1.0).forward(y, rng.standard_normal((6, 4)))


# --------------------------------------------------------------------------- notebook 09


NB09 = ROOT / "notebooks" / "09-cs231n-exercises.ipynb"


def _functions(source: str) -> dict[str, str]:
    import ast

    lines = source.splitlines()
    return {n.name: "\n".join(lines[n.lineno - 1:n.end_lineno]) for n in ast.parse(source).body
            if isinstance(n, ast.FunctionDef)}


def test_notebook_09_holds_the_assignments_solution_verbatim():
    import nbformat

    nb = nbformat.read(NB09, as_version=4)
    solution = _functions((ASSIGN / "solution" / "layers.py").read_text())
    in_notebook: dict[str, str] = {}
    for c in nb.cells:
        if c.cell_type == "code" and c.get("id", "").endswith("-solution"):
            assert c.metadata["nbgrader"]["solution"] is True
            in_notebook.update(_functions(c.source))
    assert in_notebook == solution  # one solution: the notebook's cells are the file's functions
    tests = [c for c in nb.cells if c.get("id", "").endswith("-tests")]
    assert len(tests) == 6 and all("check_pair(" in c.source or "check_loss_function(" in c.source for c in tests)
    assert sum(c.metadata["nbgrader"]["points"] for c in tests) == 20


def test_notebook_09_student_version_stops_at_the_first_exercise(tmp_path):
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    rep = release(NB09, tmp_path)
    pairs = [("affine_forward", "affine_backward"), ("relu_forward", "relu_backward"), ("softmax_loss",),
             ("batchnorm_forward", "batchnorm_backward"), ("conv_forward_naive", "conv_backward_naive"),
             ("max_pool_forward", "max_pool_backward")]
    assert rep.exercises == [f"Exercise {k}: implement {f}" for k, fs in enumerate(pairs, 1) for f in fs]
    assert rep.solutions == 11
    nb = nbformat.read(rep.path, as_version=4)
    client = NotebookClient(nb, kernel_name="backprop-lab", timeout=300,
                            resources={"metadata": {"path": str(NB09.parent)}})
    with pytest.raises(CellExecutionError) as exc:
        client.execute()
    assert exc.value.ename == "NotImplementedError"
    assert exc.value.evalue == "Exercise 1: implement affine_forward"


# --------------------------------------------------------------------------- the graded checks with several inputs


def _solution():
    import importlib.util

    spec = importlib.util.spec_from_file_location("cs231n_solution_units", ASSIGN / "solution" / "layers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_layer_gradients_grades_each_input_of_a_pair_by_the_references_names():
    from gradcheck.grading import layer_forward, layer_gradients

    L, rng = _solution(), np.random.default_rng(5)
    inputs = [rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)]
    ref = function_pair(L.affine_forward, L.affine_backward)

    def renamed_forward(a, weights, bias):  # the student's own argument names do not matter
        return L.affine_forward(a, weights, bias)

    mean_db = function_pair(renamed_forward, lambda d, c: (*L.affine_backward(d, c)[:2], d.mean(axis=0)))
    v = layer_gradients(mean_db, inputs, ref, parts={"dx": 2, "dw": 2, "db": 2})
    assert [(p.name, p.passed) for p in v.parts] == [("dx", True), ("dw", True), ("db", False)]
    assert v.fraction == pytest.approx(2 / 3) and "mean over the batch, not the sum" in v.parts[2].message
    assert layer_gradients(function_pair(renamed_forward, L.affine_backward), inputs, ref).passed
    assert layer_forward(function_pair(renamed_forward, L.affine_backward), inputs, ref).passed

    class OnlyDx:  # a class of several inputs whose backward returns one array
        params, grads = {}, {}

        def forward(self, x, w, b, training=False):
            self.cache = L.affine_forward(x, w, b)[1]
            return L.affine_forward(x, w, b)[0]

        def backward(self, dout):
            return L.affine_backward(dout, self.cache)[0]

    v = layer_gradients(OnlyDx(), inputs, ref)
    assert not any(p.passed for p in v.parts)
    assert "expected a tuple of 3 gradients (dx, dw, db), one per input of forward" in v.parts[0].message
    with pytest.raises(TypeError, match="returned 1 gradient\\(s\\) for 3 array argument\\(s\\) of affine_forward: "
                                        "return one gradient per array argument"):
        layer_gradients(function_pair(L.affine_forward, lambda d, c: L.affine_backward(d, c)[0]), inputs, ref)

    wrong_y = function_pair(lambda x, w, b: (L.affine_forward(x, w, b)[0] + 1, None), L.affine_backward)
    v = layer_forward(wrong_y, inputs, ref)
    assert not v.passed and "the output differs" in v.parts[0].message


def test_load_class_reads_a_loss_function():
    from gradcheck.cli import load_class

    factory, _ = load_class(f"{ASSIGN / 'solution' / 'layers.py'}::softmax_loss")
    loss, rng = factory(), np.random.default_rng(2)
    y, x = rng.integers(0, 3, size=4), rng.standard_normal((4, 3))
    assert type(loss).__name__ == "softmax_loss" and check_loss(loss, y, x, twin=None).passed


def test_release_of_a_python_file_without_solution_is_a_usage_error(tmp_path):
    f = tmp_path / "layers.py"
    f.write_text("def f(x):\n    return x\n")
    with pytest.raises(UsageError, match="no '### BEGIN SOLUTION' block in any function or class"):
        release(f, tmp_path / "out")
    with pytest.raises(UsageError, match="looks like a Python file"):
        release(ASSIGN / "solution" / "layers.py", tmp_path / "layers.py")


def test_a_pairs_gradients_are_named_after_forwards_arguments_in_messages(tmp_path):
    """A bad gradient of a CS231n pair is called dx/dw/db (forward's arguments), never d0/d1/d2."""
    from gradcheck.errors import GradientShapeError
    from gradcheck.sandbox import Sandbox

    src = (ASSIGN / "solution" / "layers.py").read_text() + (
        "\n\ndef complex_forward(x, w, b):\n    return affine_forward(x, w, b)\n\n\n"
        "def complex_backward(dout, cache):\n    dx, dw, db = affine_backward(dout, cache)\n"
        "    return dx, dw.astype(complex), db\n")
    (tmp_path / "layers.py").write_text(src)
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=60) as sb:
        layer = sb.load_layer("layers.py", "complex")
        layer.forward(x, w, b)
        with pytest.raises(GradientShapeError) as exc:
            layer.backward(np.ones((4, 2)))
    msg = " ".join(str(exc.value).split())
    assert "gave dw as a numpy array of dtype complex128 (shape (3, 2))" in msg and "d1" not in msg, msg


def test_check_gives_bn_param_lists_as_arrays(tmp_path):
    """--init is JSON, which has no arrays: bn_param's running_mean as a list reaches the classic
    batchnorm_forward (no np.asarray) as the (D,) float64 array CS231n hands in, and the header says so."""
    f = tmp_path / "layers.py"
    f.write_text((ASSIGN / "solution" / "layers.py").read_text().replace(SOLUTION_BN, CLASSIC_BN))
    init = '{"bn_param": {"mode": "test", "running_mean": [0.5, -0.5, 0.2, 0.1], "running_var": [1.2, 0.8, 1.5, 2.0]}}'
    p = gradcheck_check(f, "batchnorm", ["--input-shape", "6,4;4;4", "--init", init])
    out = " ".join(p.stdout.split())
    assert p.returncode == 0, p.stdout + p.stderr
    assert "bn_param['running_mean'], bn_param['running_var'] (lists) passed as float64 arrays" in out
    assert "PASS: batchnorm" in out
