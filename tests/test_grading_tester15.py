"""tester15's grader findings (session 15): M1 a float32 forward, M2/M7 how parameters are named, M3 a signal,
M8 folder sizes, L1 a folder named layers.py, L5 the examples' policy marker, L6 --json's folder.

Plain (unsandboxed) layers where a check is one call; the sandbox only where the finding lives there.
"""

from pathlib import Path

import numpy as np
from student_layers import StudentLinear

from gradcheck.grading.checks import _distinct, layer_forward, layer_gradients
from manualprop import Linear as RefLinear
from tests.test_grading_keys_s35 import shown

ROOT = Path(__file__).resolve().parents[1]
X = np.random.default_rng(1).standard_normal((8, 5))


class Float32Inside(StudentLinear):
    """The reference's backward, exact; forward computed in float32 and cast back (tester15 M1)."""

    def __init__(self):
        super().__init__(5, 3)

    def forward(self, X, training=False):
        self.X = X
        W, b = self.params["W"].astype(np.float32), self.params["b"].astype(np.float32)
        return (X.astype(np.float32) @ W.T + b).astype(np.float64)

    def backward(self, dY):
        self.grads["W"], self.grads["b"] = dY.T @ self.X, dY.sum(axis=0)
        return dY @ self.params["W"]


def test_a_float32_forward_gets_checks_diagnosis_not_a_question_about_determinism():
    """M1: dX, dW, db equal to the reference's failed as 'disagrees with central differences ... Is the layer
    deterministic?'; check says FAIL: wrong precision of Y, values rounded to float32. The grader says that."""
    v = layer_gradients(Float32Inside(), X, RefLinear(5, 3), parts={"dX": 2, "dW": 2, "db": 2}, seed=1)
    assert [p.passed for p in v.parts] == [False] * 3
    for p in v.parts:
        assert p.message.startswith(f"{p.name} matches the reference's, but it cannot be confirmed")
        assert "forward returns float64 values rounded to float32" in p.message and "deterministic" not in p.message
    fwd = layer_forward(Float32Inside(), X, RefLinear(5, 3))  # check's verdict too (tester23g M4)
    assert not fwd.passed and "as gradcheck check says (FAIL: wrong precision of Y)" in fwd.parts[0].message


def test_two_numbers_are_printed_with_the_digits_that_tell_them_apart():
    assert _distinct(-2.108829, -2.10883) == ("-2.108829", "-2.10883")
    assert _distinct(1.0, 1.0) == ("1", "1") and _distinct(0.5, 2.0) == ("0.5", "2")
    a, b = _distinct(1.0, 1.0 + 2.0 ** -52)
    assert a != b and float(b) == 1.0 + 2.0 ** -52


def test_an_exit_code_of_128_plus_a_signal_under_bubblewrap_is_that_signal():
    """M3: a segfault in the namespaces sandbox (bwrap exits 139 = 128 + SIGSEGV) was read as 'exit code 139 ...
    Does the code call sys.exit, exit() or os._exit?'; the signal is named as for a child run directly (-11)."""
    from types import SimpleNamespace

    from gradcheck.sandbox import Sandbox

    bwrapped, direct = SimpleNamespace(isolation_level="namespaces+uid"), SimpleNamespace(isolation_level="none")
    assert Sandbox._signal_of(bwrapped, 139) == 11 and Sandbox._signal_of(direct, -11) == 11
    assert Sandbox._signal_of(bwrapped, -9) == 9 and Sandbox._signal_of(bwrapped, 137) == 9
    assert Sandbox._signal_of(direct, 139) is None  # no wrapper: an exit code the code chose
    assert Sandbox._signal_of(bwrapped, 3) is None and Sandbox._signal_of(bwrapped, 255) is None


def test_json_in_a_missing_folder_is_a_usage_error_and_creates_nothing(tmp_path):
    """L6: ``--json /nonexistent/dir/x.json`` made /nonexistent/dir; a file's folder must exist (exit 2, named), before
    any work. A --plots folder is still made."""
    from test_cli import run_here

    target = f"{ROOT / 'examples' / 'student_linear_correct.py'}::Linear"
    p = run_here("check", target, "--init", '{"in_features": 5, "out_features": 3}', "--input-shape", "8,5",
                 "--json", tmp_path / "no" / "dir" / "x.json", "--plots", tmp_path / "p" / "q")
    assert p.returncode == 2 and f"the folder {tmp_path / 'no' / 'dir'} does not exist" in " ".join(p.stderr.split())
    assert not (tmp_path / "no").exists() and not (tmp_path / "p").exists()  # nothing made before the usage error


ATTR_LINEAR = '''class Linear:
    def __init__(self, in_features, out_features):
        self.W = np.random.randn(out_features, in_features) * 0.1
        self.b = np.zeros(out_features)
    def forward(self, X, training=False):
        self.X = X
        return X @ self.W.T + self.b
    def backward(self, dY):
        self.dW = dY.T @ self.X
        self.db = dY.sum(0)
        return dY @ self.W


class ReLU:'''


def test_attribute_style_and_a_read_only_params_mapping_graded_as_check_reads_them(tmp_path):
    """M2: a correct self.W/self.dW Linear lost test_dtypes ('params has keys []', 'check reads Linear as a class ...
    with no parameters', false: the test read lin.grads of the layer as loaded); now full marks, through as_checked.
    M7: params = MappingProxyType({...}) was told 'has keys ["params['W']", ...]'; now what its keys are and why."""
    import json

    from gradcheck.grading.runner import grade_batch

    solution = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()
    head, _, tail = solution.partition("class Linear:")
    subs = tmp_path / "subs"
    texts = {"attr": head + ATTR_LINEAR + tail.partition("class ReLU:")[2],
             "readonly": solution.replace('        self.grads = {name: np.zeros_like(p)',
                                          '        import types\n        self.params = types.MappingProxyType('
                                          'self.params)\n        self.grads = {name: np.zeros_like(p)', 1)}
    for name, text in texts.items():
        (subs / name).mkdir(parents=True)
        (subs / name / "layers.py").write_text(text)
    assert "MappingProxyType" in texts["readonly"] and "self.dW" in texts["attr"]
    grade_batch(subs, ROOT / "assignments" / "linear_relu_ce" / "tests", tmp_path / "out", workers=2, seed=3,
                progress=False)
    got = {n: json.loads((tmp_path / "out" / n / "results.json").read_text()) for n in texts}
    assert got["attr"]["score"] == 28.0, [t["output"] for t in got["attr"]["tests"] if t["status"] != "passed"]
    said = " ".join(shown(got["readonly"]["tests"][0]["output"]).split())
    assert "Linear.params holds W, b, as the assignment expects, but it is not a dict" in said, said


def test_the_example_assignments_turn_the_no_forward_in_backward_policy_on():
    """L5: neither example used gradcheck_no_forward_in_backward (docs/gradescope.md); both solutions keep full marks
    with it (test_grading.py::test_solution_gets_full_marks, test_grading_cs231n.py)."""
    for folder in ("linear_relu_ce", "cs231n_layers"):
        text = next((ROOT / "assignments" / folder / "tests").glob("test_*.py")).read_text()
        mark = text.partition("pytestmark = [")[2].partition("]\n")[0]
        assert "pytest.mark.gradcheck_no_forward_in_backward" in mark, folder


def test_a_folder_named_layers_py_and_a_folder_over_the_cap(tmp_path):
    """L1: a folder named layers.py/ holding x.py got 'graded as if at the top level' and then 'no layers.py at its top
    level': it is not descended into, and the message says it is a folder. M8: a folder whose files hold more than a
    zip's 64 MiB (a sparse 1 GiB data.bin: read in full, 39 s) is not graded, counted by apparent sizes."""
    import json
    import os

    from gradcheck.grading.runner import grade_batch

    subs = tmp_path / "subs"
    (subs / "dirpy" / "layers.py").mkdir(parents=True)
    (subs / "dirpy" / "layers.py" / "x.py").write_text("x = 1\n")
    (subs / "big").mkdir()
    (subs / "big" / "layers.py").write_text("import numpy as np\n")
    with open(subs / "big" / "data.bin", "wb") as fh:
        fh.truncate(1 << 30)  # sparse: no disk used
    grade_batch(subs, ROOT / "assignments" / "linear_relu_ce" / "tests", tmp_path / "out", workers=1, seed=3,
                progress=False)
    got = {n: json.loads((tmp_path / "out" / n / "results.json").read_text()) for n in ("dirpy", "big")}
    said = " ".join(json.dumps(got["dirpy"]).split())
    assert "as if they were at the top level" not in said and "`layers.py` is a folder, not a file" in said, said
    assert got["big"]["score"] == 0 and "its files hold more than 64 MiB" in got["big"]["output"], got["big"]
    assert "data.bin (1024 MiB)" in shown(got["big"]["output"]) and os.path.getsize(subs / "big" / "data.bin") == 1 << 30
