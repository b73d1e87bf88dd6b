"""Adversarial submissions graded in one batch: each ends with a correct result and the batch continues.

Every submission is the assignment's solution with one hostile change. The
batch runs with 2 workers and a 2 s limit per call into student code (1 s proved
too tight for 100 MB of output on a loaded 2-core machine), so the whole file
takes seconds, not minutes.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from gradcheck.grading.runner import grade_batch
from tests.test_grading_keys_s35 import shown

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
TESTS = ASSIGN / "tests"
SOLUTION = (ASSIGN / "solution" / "layers.py").read_text()
TOTAL = 28.0

LINEAR_TESTS = {"Linear: forward output", "Linear: gradients dX, dW, db (2 points each)",
                "All layers: outputs and gradients are float64",
                "Hidden: Linear gradients for random sizes and batch sizes"}
DB_MEAN_LOSS = 2 + 4 / 3 + 2  # the db-mean bug costs db in the visible and the hidden Linear test, and the
#                               float64 property test (whose points come only with right values)


def in_linear_forward(code: str) -> str:
    """The solution with ``code`` run at the top of Linear.forward."""
    old = "    def forward(self, X, training=False):\n        self.X = X\n"
    assert SOLUTION.count(old) == 1
    body = "".join(f"        {line}\n" for line in code.splitlines())
    return SOLUTION.replace(old, "    def forward(self, X, training=False):\n" + body + "        self.X = X\n")


DB_MEAN = SOLUTION.replace('self.grads["b"] = dY.sum(axis=0)', 'self.grads["b"] = dY.mean(axis=0)')

CASES = {
    "infinite_loop": in_linear_forward("while True:\n    pass"),
    "sys_exit": in_linear_forward("import sys\nsys.exit(0)"),
    "os_exit": in_linear_forward("import os\nos._exit(0)"),
    "exit_at_import": "import sys\nsys.exit(0)\n" + SOLUTION,
    "loop_at_import": "while True:\n    pass\n" + SOLUTION,
    "os_exit_at_import": "import os\nos._exit(3)\n" + SOLUTION,
    "memory_bomb": in_linear_forward("junk = np.ones((10**5, 10**5))  # 80 GB"),
    # Z8: 2 GiB that cost nothing until the sandbox copies them for its reply
    "oversized_reply": in_linear_forward("return np.broadcast_to(np.float64(1.0), (1 << 28,))"),
    "fork_bomb": in_linear_forward("import os\nwhile True:\n    os.fork()"),
    "print_100mb": "import sys\nsys.stdout.write('x' * (100 * 2**20))\n" + SOLUTION,
    "patch_numpy": ("import numpy\nnumpy.allclose = lambda *a, **k: True\nnumpy.array_equal = lambda *a, **k: True\n"
                    "numpy.testing.assert_allclose = lambda *a, **k: None\n" + DB_MEAN),
    "patch_checker": ("try:\n    import gradcheck.check\n    gradcheck.check.compare = None\n"
                      "except ImportError:\n    pass\n" + DB_MEAN),
    "read_reference": in_linear_forward(
        f"src = open({str(ROOT / 'manualprop' / 'layers.py')!r}).read()\n"
        "ns = {}\nexec(src, ns)\nreturn ns['Linear'](X.shape[1], 3).forward(X)"),
    "read_relative": in_linear_forward("src = open('../../manualprop/layers.py').read()"),
    "eq_always_true": in_linear_forward(
        "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
        "return Yes()"),
}


# submissions without layers.py at the top level: file name -> content ("" : an empty folder)
LAYOUTS = {
    "empty_folder": {},
    "capitalised": {"Layers.py": SOLUTION},
    "misplaced": {"Layers.py": SOLUTION, "hw1/layers.py": SOLUTION, "notes.txt": "x"},
    "nested_zip": {"hw1/layers.py": SOLUTION, "hw1/README.md": "x", ".DS_Store": "x", "__MACOSX/._hw1": "x"},
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    subs = tmp_path_factory.mktemp("adversarial")
    out = tmp_path_factory.mktemp("graded")
    for name, src in CASES.items():
        (subs / name).mkdir()
        (subs / name / "layers.py").write_text(src)
    for name, files in LAYOUTS.items():
        (subs / name).mkdir()
        for rel, text in files.items():
            (subs / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (subs / name / rel).write_text(text)
    # writes a perfect score into the output folder, then submits a db-mean bug
    target = out / "write_results" / "results.json"
    (subs / "write_results").mkdir()
    (subs / "write_results" / "layers.py").write_text(
        f"try:\n    open({str(target)!r}, 'w').write('{{\"score\": 1000}}')\nexcept OSError:\n    pass\n" + DB_MEAN)
    res = grade_batch(subs, TESTS, out, workers=2, seed=3, timeout=2.0, memory_mb=700, progress=False)
    return out, {s.name: s for s in res.submissions}


def data(out, name):
    return json.loads((out / name / "results.json").read_text())


def failed(out, name):
    return {t["name"]: t["output"] for t in data(out, name)["tests"] if t["status"] != "passed"}


def test_every_submission_was_graded(graded):
    _, subs = graded
    assert len(subs) == len(CASES) + len(LAYOUTS) + 1
    assert {s.status for s in subs.values()} == {"graded"}, {n: s.message for n, s in subs.items()}


def test_infinite_loop_loses_only_the_linear_tests(graded):
    out, subs = graded
    bad = failed(out, "infinite_loop")
    assert set(bad) == LINEAR_TESTS
    assert all("did not finish within 3 s" in m for m in bad.values())  # the tests' timeout(3), not timeout=2.0 (d9fdaff8)
    assert subs["infinite_loop"].score == TOTAL - 14


@pytest.mark.parametrize("name, needle", [
    ("sys_exit", "raised SystemExit: 0"),
    ("os_exit", "ended the sandbox process with exit code 0"),
    ("memory_bomb", "MemoryError"),
    ("oversized_reply", "produced an oversized reply of 2147483648 bytes (2.00 GiB)"),
    ("oversized_reply", "ran out of the sandbox's 700 MiB (--memory-mb). Its code did not raise."),
    ("fork_bomb", "does not allow starting processes (os.fork)"),
    ("read_reference", "PermissionError: the grading sandbox does not allow reading"),
    ("eq_always_true", "an object of type Yes"),
])
def test_hostile_linear_forward_loses_the_linear_tests_with_a_clear_message(graded, name, needle):
    out, subs = graded
    bad = failed(out, name)
    assert set(bad) == LINEAR_TESTS, bad
    assert all(needle in shown(m) for m in bad.values()), bad
    assert subs[name].score == TOTAL - 14


def test_relative_path_to_the_package_does_not_exist(graded):
    out, _ = graded
    bad = failed(out, "read_relative")
    assert set(bad) == LINEAR_TESTS
    assert all("FileNotFoundError" in m or "PermissionError" in m for m in bad.values())


def test_exit_at_import_gets_zero(graded):
    out, subs = graded
    assert subs["exit_at_import"].score == 0
    assert "does not import: SystemExit: 0" in data(out, "exit_at_import")["tests"][0]["output"]


@pytest.mark.parametrize("name, reason, needle", [
    ("loop_at_import", "timeout", "importing layers.py did not finish within 3 s"),  # the marker's 3 s (d9fdaff8)
    ("os_exit_at_import", "exit", "importing layers.py ended the sandbox process with exit code 3"),
])
def test_a_hang_or_crash_at_import_costs_one_sandbox_not_one_per_test(graded, name, reason, needle):
    """The first test that imports the file records the failure; every later one fails with the
    same reason without starting a sandbox again (before: one timeout per test, 13 x 3 s)."""
    out, subs = graded
    d = data(out, name)
    tests = d["tests"]
    assert subs[name].score == 0 and len(tests) >= 10
    assert all(t["status"] == "failed" and needle in shown(t["output"]) for t in tests), tests
    later = [t for t in tests if "was first imported, in an earlier test" in t["output"]]
    assert len(later) == len(tests) - 1
    assert d["extra_data"]["sandbox_starts"] == 1
    assert d["extra_data"]["import_failures"] == {"layers.py": reason}


def test_a_hang_in_forward_still_restarts_the_sandbox_per_test(graded):
    """Only the import is recorded: a timeout in a method costs its test, and the next test
    gets a fresh sandbox (the infinite_loop submission still passes the ReLU and loss tests)."""
    out, _ = graded
    extra = data(out, "infinite_loop")["extra_data"]
    assert extra["import_failures"] == {}
    assert extra["sandbox_starts"] in (len(LINEAR_TESTS), len(LINEAR_TESTS) + 1)  # +1 unless the last test timed out
    assert data(out, "sys_exit")["extra_data"]["sandbox_starts"] == 1  # an exception leaves the sandbox alive


def test_printing_100mb_is_graded_normally(graded):
    out, subs = graded
    assert subs["print_100mb"].score == TOTAL
    assert (out / "print_100mb" / "results.json").stat().st_size < 50_000


@pytest.mark.parametrize("name", ["patch_numpy", "patch_checker", "write_results"])
def test_patching_or_writing_results_does_not_change_the_verdict(graded, name):
    out, subs = graded
    assert subs[name].score == pytest.approx(TOTAL - DB_MEAN_LOSS, abs=1e-3)
    bad = failed(out, name)
    assert all("db is the mean over the batch, not the sum" in m for m in bad.values())
    assert not np.allclose(1.0, 2.0)  # the grader's numpy was never touched


def test_results_in_the_output_folder_are_the_graders(graded):
    out, _ = graded
    d = data(out, "write_results")
    assert d["score"] < TOTAL and d["extra_data"]["grader"] == "gradcheck"


@pytest.mark.parametrize("name, found", [
    ("empty_folder", "found: no files at all"),
    ("capitalised", "found: `Layers.py`."),
    ("misplaced", "found: `Layers.py`, `hw1/layers.py`, `notes.txt`."),
])
def test_missing_layers_py_is_explained_to_the_student(graded, name, found):
    out, subs = graded
    d = data(out, name)
    assert subs[name].score == 0 and len(d["tests"]) == 11
    for t in d["tests"]:
        assert t["output"].startswith(f"Your submission has no `layers.py` at its top level; {found}"), t["output"]
        assert "Sandbox" not in t["output"] and "files={" not in t["output"]


def test_a_single_nested_folder_is_graded_and_the_output_says_so(graded):
    out, subs = graded
    assert subs["nested_zip"].score == TOTAL
    assert "Your files were inside the folder `hw1/`" in data(out, "nested_zip")["output"]
