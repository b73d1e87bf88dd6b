"""Integrity (session 8, gap 4): autodiff engines in the grading sandbox, and copies of one.

* No installed autodiff package (autograd, torch, jax, tensorflow, autoprop; nor manualprop or gradcheck)
  can be imported or read inside the grading sandbox, whatever the submission tries: the import
  blocker removed from ``sys.meta_path``, the grader's site-packages and the repository put on
  ``sys.path``, ``__import__``, ``importlib.import_module``, ``find_spec``, ``spec_from_file_location``
  on the package's path, opening or listing it by path, and a walk of the whole visible filesystem for
  anything named like one. In the namespaces sandbox the folders do not exist there (OS level); in the
  process sandbox (``--unsafe-no-isolation``) the audit hook refuses them. A control in an unhardened
  sandbox proves the probe finds autograd when it is there.
* A submission that carries HIPS autograd under another name (``mygrad/``) gets a report line for
  staff (``extra_data.integrity``, the batch summary), not a 0: it is a suspicion for a person.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import gradcheck
from gradcheck.grading.runner import BatchResult, SubmissionResult
from gradcheck.grading.static import ENGINES, engine_names, vendored_engines
from gradcheck.isolation import SITE
from gradcheck.sandbox import Sandbox, support

ROOT = Path(gradcheck.__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
ENGINE_NAMES = ("autograd", "torch", "jax", "tensorflow", "autoprop", "manualprop", "gradcheck")
PLACES = list(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], str(ROOT), SITE]))

PROBE = '''
import importlib, importlib.util, json, os, sys

ENGINES, PLACES = %(engines)r, %(places)r


def _try(fn):
    try:
        fn()
        return True
    except BaseException:
        return False


def _by_spec(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def _attack():
    got = []
    sys.meta_path[:] = [f for f in sys.meta_path if "Blocker" not in type(f).__name__]
    sys.path[:0] = PLACES
    for n in ENGINES:
        for how, fn in (("__import__", lambda: __import__(n)), ("import_module", lambda: importlib.import_module(n)),
                        ("find_spec", lambda: importlib.util.find_spec(n) or 1 / 0)):
            if _try(fn):
                got.append(how + ":" + n)
        for place in PLACES:
            init = os.path.join(place, n, "__init__.py")
            for how, fn in (("open", lambda: open(init, "rb").read(1)), ("listdir", lambda: os.listdir(os.path.dirname(init))),
                            ("spec", lambda: _by_spec(n, init))):
                if _try(fn):
                    got.append(how + ":" + init)
    found = []
    for top in ("/usr", "/opt", "/lib", "/lib64", "/tmp", "/submission", "/root", "/home", "/work", "/etc"):
        for d, dirs, files in os.walk(top):
            found += [os.path.join(d, x) for x in dirs + files if x.split(".")[0] in ENGINES]
    return got, found


class Probe:
    def __init__(self):
        self.params, self.grads = {}, {}
        got, found = _attack()
        self.numpy_ok = _try(lambda: importlib.import_module("numpy"))
        self.got = ";".join(got)[:190]  # a string attribute comes back (truncated) in scalars
        self.found = ";".join(found)[:190]

    def forward(self, X, training=False):
        return X

    def backward(self, dY):
        return dY
''' % {"engines": ENGINE_NAMES, "places": PLACES}


def _probe(tmp_path, **kw):
    (tmp_path / "layers.py").write_text(PROBE)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=120, **kw) as sb:
        s = sb.load_layer("layers.py", "Probe").scalars
    return s["numpy_ok"], s["got"], s["found"]


@pytest.mark.skipif(support()[0] == "none", reason="no namespaces on this machine")
def test_no_autodiff_package_exists_in_the_namespaces_sandbox(tmp_path):
    assert _probe(tmp_path, isolation="namespaces") == (True, "", "")


def test_no_autodiff_package_is_importable_or_readable_in_the_process_sandbox_of_grading(tmp_path):
    assert _probe(tmp_path, isolation="process", hostile=True) == (True, "", "")


def test_the_probe_finds_autograd_where_it_is_not_hidden(tmp_path):
    """The control: the same probe in a sandbox that is not the grader's (site-packages on its path)."""
    ok, got, _ = _probe(tmp_path, isolation="process", hostile=False)
    assert ok and got.startswith("__import__:autograd;import_module:autograd;find_spec:autograd;"), got


@pytest.fixture(scope="module")
def vendored(tmp_path_factory):
    """The solution beside HIPS autograd copied as ``mygrad`` (every ``autograd`` renamed)."""
    sub = tmp_path_factory.mktemp("vendored")
    shutil.copy(ASSIGN / "solution" / "layers.py", sub / "layers.py")
    src = Path(sysconfig.get_paths()["purelib"]) / "autograd"
    if not src.is_dir():
        pytest.skip("HIPS autograd is not installed here")
    shutil.copytree(src, sub / "mygrad", ignore=shutil.ignore_patterns("__pycache__"))
    for f in (sub / "mygrad").rglob("*.py"):
        f.write_text(f.read_text().replace("autograd", "mygrad"))
    return sub


def _py(folder):
    return {p.relative_to(folder).as_posix(): str(p) for p in sorted(Path(folder).rglob("*.py"))}


def test_a_vendored_copy_of_autograd_is_reported_and_honest_code_is_not(vendored):
    lines = vendored_engines(_py(vendored))
    n = len(engine_names("autograd"))
    assert n > 200 and len(lines) == 1, lines
    assert lines[0].startswith(f"the submission defines {n - 1} of the {n} function and class names of HIPS "
                               f"autograd") or lines[0].startswith(f"the submission defines {n} of the {n}")
    assert "`mygrad/core.py`" in lines[0] and "no points were taken" in lines[0]
    # half of it is still a copy; the assignments (solutions, stubs, mutants), the examples and manualprop are not
    half = dict(list(_py(vendored).items())[::2])
    assert len(vendored_engines(half)) == 1
    for folder in ("assignments", "examples", "manualprop", "lessons"):
        assert vendored_engines(_py(ROOT / folder)) == [], folder
    assert set(ENGINES) == {"autograd", "autoprop.core"}
    assert vendored_engines(_py(ROOT / "autoprop" / "core"))[0].startswith("the submission defines")


def test_the_report_reaches_results_json_and_the_batch_summary_and_takes_no_points(vendored, tmp_path):
    """The grading child (our plugin) writes the line; the solution keeps its 28 points."""
    (tmp_path / "p.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = tmp_path / "results.json"
    subprocess.run([sys.executable, "-m", "pytest", str(ASSIGN / "tests"), "-c", str(tmp_path / "p.ini"),
                    "--rootdir", str(ASSIGN / "tests"), "-p", "gradcheck.grading.plugin", "-p", "no:cacheprovider",
                    "-q", "--grading-submission", str(vendored), "--grading-results", str(out),
                    "--grading-isolation", "namespaces" if support()[0] != "none" else "none"],
                   cwd=tmp_path, env=env, capture_output=True, timeout=900, check=False)
    data = json.loads(out.read_text())
    assert data["score"] == 28 and len(data["extra_data"]["integrity"]) == 1
    assert "HIPS autograd" in data["extra_data"]["integrity"][0]
    assert "integrity" not in data["output"]  # for staff, not the student's feedback
    r = SubmissionResult("dora", 28.0, 28.0, "graded", 1.0, str(out), integrity=data["extra_data"]["integrity"])
    summary = BatchResult([r], 0, 1, 1.0, "gradebook.csv", None, total=1).summary()
    assert "  integrity: dora: the submission defines " in summary


HOSTILE = "h\x1b]0;PWNED\x07\x1b[2J\x1b[32mall 60 graded` **notice** [appeal](http:e.vil) `x.py"


def test_a_file_name_in_the_integrity_line_reaches_no_terminal_and_no_markdown_raw(vendored):
    """redteam28 F3: the batch summary printed the integrity line's file names raw (a file named with a title
    escape, a screen clear and a fake green summary line changed the staff's terminal); its single backticks also
    let a backtick in the name end the code span (bold text, a live link in results.json's markdown)."""
    os.rename(vendored / "mygrad" / "core.py", vendored / "mygrad" / HOSTILE)
    lines = vendored_engines(_py(vendored))
    # one backtick more than the name holds, its control characters escaped (review29 NEWLINE_NAME: a blank line
    # ended the span's paragraph)
    assert len(lines) == 1 and "``mygrad/" + HOSTILE.encode("unicode_escape").decode() + "``" in lines[0], lines
    summary = BatchResult([SubmissionResult("eve", 28.0, 28.0, "graded", 1.0, "r.json", integrity=lines)],
                          0, 1, 1.0, "gradebook.csv", None, total=1).summary()
    assert "\x1b" not in summary and "\x07" not in summary
    assert "\\x1b]0;PWNED\\x07\\x1b[2J\\x1b[32mall 60 graded" in summary
