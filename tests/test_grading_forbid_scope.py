"""newuser44 F6: the ``forbid_imports`` guard reads the files importing the graded file may run, not a script beside
it that nothing imports. Before, a correct ``layers.py`` uploaded with the student's own ``check_my_grads.py`` (a
check against autograd, ``from layers import Linear``) scored 0 on every test that forbids autograd."""

import json
from pathlib import Path

from gradcheck.grading.runner import grade_submission
from gradcheck.grading.static import forbidden_imports, graded_files

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()
TESTS = '''
import pytest
from manualprop import ReLU as RefReLU

pytestmark = pytest.mark.forbid_imports("autograd", "torch")

@pytest.mark.points(2)
def test_relu(student, grade, rng):
    grade.layer_gradients(student.layer("layers.py", "ReLU"), rng.standard_normal((4, 5)) + 0.01, RefReLU(), seed=1)
'''
SCRIPT = "import autograd.numpy as anp\nfrom layers import Linear\nprint(anp.ones(3))\n"


def _files(root, texts):
    out = {}
    for name, text in texts.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        out[name] = str(root / name)
    return out


def test_graded_files_follows_imports_and_leaves_out_what_nothing_imports(tmp_path):
    files = _files(tmp_path, {"layers.py": "import numpy as np\nimport helpers\nfrom pkg import sub\n",
                              "helpers.py": "try:\n    from . import x\nexcept ImportError:\n    pass\n",
                              "pkg/__init__.py": "", "pkg/sub.py": "from .deep import f\n", "pkg/deep.py": "f = 1\n",
                              "check_my_grads.py": SCRIPT, "tests/test_mine.py": "import torch\n"})
    got = sorted(Path(p).relative_to(tmp_path).as_posix() for p in graded_files("layers.py", files))
    assert got == ["helpers.py", "layers.py", "pkg/__init__.py", "pkg/deep.py", "pkg/sub.py"]


def test_graded_files_is_every_file_when_an_import_cannot_be_followed(tmp_path):
    for i, line in enumerate(["import importlib\nm = importlib.import_module(NAME)\n", "exec(code)\n",
                              "def f(:\n"]):
        files = _files(tmp_path / str(i), {"layers.py": line, "other.py": "import torch\n"})
        assert sorted(graded_files("layers.py", files)) == sorted(files.values()), line
    files = _files(tmp_path / "big", {"layers.py": "x = 1\n", "data.py": "y = 0\n" * 20000})  # over AST_BYTES
    assert sorted(graded_files("layers.py", files)) == sorted(files.values())
    assert sorted(graded_files("missing.py", files)) == sorted(files.values())


def test_a_script_beside_the_graded_file_does_not_cost_the_points(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_scope.py").write_text(TESTS)
    _files(tmp_path / "sub", {"layers.py": SOLUTION, "check_my_grads.py": SCRIPT})
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", timeout=10.0)
    results = json.loads(Path(r.results_path).read_text())
    assert results["score"] == 2.0, results["tests"][0]["output"]  # was 0: "the submission imports autograd"


def test_a_helper_the_graded_file_imports_is_still_read(tmp_path):
    files = _files(tmp_path, {"layers.py": SOLUTION + "\nimport helpers\n", "helpers.py": "import torch\n",
                              "check_my_grads.py": SCRIPT})
    got = [(v.file, v.module) for v in forbidden_imports(graded_files("layers.py", files), ["autograd", "torch"],
                                                           root=str(tmp_path))]
    assert got == [("helpers.py", "torch")]


def test_an_imported_helper_too_deep_to_parse_makes_every_file_read(tmp_path):
    """The hostile batch's deep_helper (an expression nested 30,000 deep, RecursionError in ast.parse) is no longer read
    when nothing imports it; imported, it cannot be followed, so every file is (a refusal, never a file left unread)."""
    deep = "x = " + "1+" * 30_000 + "1\n"
    files = _files(tmp_path / "a", {"layers.py": "import helper\n", "helper.py": deep, "other.py": "import torch\n"})
    assert sorted(graded_files("layers.py", files)) == sorted(files.values())
    files = _files(tmp_path / "b", {"layers.py": "x = 1\n", "helper.py": deep})
    assert graded_files("layers.py", files) == [files["layers.py"]]


def test_graded_files_answers_again_for_a_file_that_changed(tmp_path):
    """graded_files keeps its answer for the files as they are (each test asks again): a file written since, the
    same size and modification time as before, is read again."""
    import os

    files = _files(tmp_path, {"layers.py": "import numpy as np\n#xxxxxxxxxxxxx\n", "helpers.py": "x = 1\n",
                              "check_my_grads.py": SCRIPT})
    assert graded_files("layers.py", files) == [files["layers.py"]]
    assert graded_files("layers.py", files) == [files["layers.py"]]  # (kept)
    st = os.stat(files["layers.py"])
    Path(files["layers.py"]).write_text("import numpy as np\nimport helpers\n")  # the same size
    os.utime(files["layers.py"], ns=(st.st_atime_ns, st.st_mtime_ns))  # and modification time
    assert sorted(graded_files("layers.py", files)) == sorted([files["layers.py"], files["helpers.py"]])
