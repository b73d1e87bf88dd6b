"""``extra_data.tests_imports`` names no path of the grading machine (newuser24 L7).

Each results.json carried ~110 absolute paths of the staff machine with their SHA-256 (13.9 KB), one per source file
of gradcheck, manualprop and autoprop and of each staff module the tests load. A resume needs only to know whether
any of them changed: a staff file is now named by its path relative to the tests' folder, each of our packages by one
digest of all its files (``"package:gradcheck"``); a resume resolves both again (tests_imports' resume behaviour
itself: tests/test_grading_tester17g.py).
"""

import json
import os
import sys
import types

from gradcheck.grading import runner
from gradcheck.grading.runner import grade_batch

SOLUTION = os.path.join(os.path.dirname(__file__), "..", "assignments", "linear_relu_ce", "solution")


def _staff(tmp_path):
    (tmp_path / "ref").mkdir()
    ref = tmp_path / "ref" / "ref_linear.py"
    ref.write_text("from manualprop import Linear\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ext.py").write_text(
        "import os, sys\nimport pytest\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'ref'))\n"
        "from ref_linear import Linear as RefLinear\n\n@pytest.mark.points(2)\n"
        "def test_lin(student, grade, rng):\n    'Linear'\n"
        "    grade.layer_forward(student.layer('layers.py', 'Linear', in_features=5, out_features=3),\n"
        "                        rng.standard_normal((8, 5)), RefLinear(5, 3), points=2)\n")
    return ref


def test_names_are_relative_or_packages_and_a_change_is_found_again(tmp_path):
    ref = _staff(tmp_path)
    mod = types.ModuleType("ref_linear")
    mod.__file__ = str(ref)
    mods = {"ref_linear": mod, **{k: v for k, v in sys.modules.items() if k.startswith(("gradcheck", "manualprop"))}}
    got = runner.tests_imports(tmp_path / "tests", mods)
    assert set(got) == {"../ref/ref_linear.py", "package:gradcheck", "package:manualprop"}, got
    assert all(len(v) == 64 for v in got.values())
    assert runner.changed_imports(got, tmp_path / "tests") == []
    ref.write_text("from manualprop import Linear  # fixed\n")
    assert runner.changed_imports(got, tmp_path / "tests") == [str(ref.resolve())]
    here = os.path.dirname(runner.__file__).rsplit(os.sep, 1)[0]  # the gradcheck package imported here
    assert runner.changed_imports({"package:gradcheck": "0" * 64}, tmp_path / "tests") == [
        f"the gradcheck package ({here})"]
    # a results.json of the earlier version (absolute paths) is still read
    assert runner.changed_imports({str(ref): "0" * 64}, tmp_path / "tests") == [str(ref)]


def test_results_json_carries_no_host_path(tmp_path):
    _staff(tmp_path)
    subs = tmp_path / "subs"
    (subs / "sol").mkdir(parents=True)
    (subs / "sol" / "layers.py").write_text(open(os.path.join(SOLUTION, "layers.py")).read())
    batch = grade_batch(subs, tmp_path / "tests", tmp_path / "out", workers=1, seed=1, progress=False, plot=False,
                        unsafe_no_isolation=True)
    assert [(s.status, s.score) for s in batch.submissions] == [("graded", 2.0)]
    text = (tmp_path / "out" / "sol" / "results.json").read_text()
    recorded = json.loads(text)["extra_data"]["tests_imports"]
    assert "../ref/ref_linear.py" in recorded and "package:gradcheck" in recorded, recorded
    assert len(json.dumps(recorded)) < 600, recorded  # was 13.9 KB
    for host in (str(tmp_path), os.path.realpath(str(tmp_path)), os.path.dirname(runner.__file__), sys.prefix):
        assert host not in text, host
