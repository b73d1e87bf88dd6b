"""newuser30 F10 (session 31): ``gradcheck assignment autograder`` on a new assignment folder holding only ``tests/``
was refused ("has no setup.sh, run_autograder") and told to ``cp`` the two scripts by hand. They are the same for
every assignment: the zip now gets the source tree's (``gradcheck.assignment.entry_script``) when the folder has none, the
folder's own when it has them; the zip unpacks and its ``run_autograder`` grades a submission, run locally with the
``/autograder`` paths moved into a temporary folder."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gradcheck.assignment import autograder_zip, entry_script
from gradcheck.cli import main
from gradcheck.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"


@pytest.mark.parametrize("name", ["setup.sh", "run_autograder"])
def test_an_entry_script_is_linear_relu_ce_s_naming_the_new_folder(name):
    mine = entry_script(ROOT, name, "newhw")
    assert mine == (ASSIGN / name).read_text().replace("linear_relu_ce", "newhw") and "linear_relu_ce" not in mine
    with pytest.raises(UsageError, match="no such entry script"):
        entry_script(ROOT, "grade.sh", "newhw")


def _new_assignment(tmp_path):
    a = tmp_path / "newhw"
    shutil.copytree(ASSIGN / "tests", a / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    return a


def test_a_folder_with_tests_alone_gets_the_package_s_scripts_and_its_own_are_kept(tmp_path, capsys):
    a = _new_assignment(tmp_path)
    assert main(["assignment", "autograder", str(a), "--out", str(tmp_path / "dist")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "setup.sh and run_autograder: gradcheck's own (the folder has none" in out, out
    with zipfile.ZipFile(tmp_path / "dist" / "autograder-newhw.zip") as z:
        for n in ("setup.sh", "run_autograder"):
            assert z.read(n).decode() == entry_script(ROOT, n, "newhw")
            assert z.getinfo(n).external_attr >> 16 & 0o777 == 0o755
    (a / "run_autograder").write_text("#!/usr/bin/env bash\necho mine\n")  # the folder's own: packed as it is
    z = autograder_zip(a, tmp_path / "dist2", source=ROOT)
    with zipfile.ZipFile(z) as zf:
        assert zf.read("run_autograder") == b"#!/usr/bin/env bash\necho mine\n"
        assert zf.read("setup.sh").decode() == entry_script(ROOT, "setup.sh", "newhw")
    shutil.rmtree(a / "tests")
    with pytest.raises(UsageError, match="has no tests/"):
        autograder_zip(a, tmp_path / "dist3", source=ROOT)


def test_the_zip_s_run_autograder_grades_a_submission(tmp_path):
    """The /autograder layout of docs/gradescope.md ("Trying the /autograder layout locally") in a temporary folder:
    the unpacked zip as source, the solution as the submission, this checkout's gradcheck on PATH."""
    z = autograder_zip(_new_assignment(tmp_path), tmp_path / "dist", source=ROOT)
    ag = tmp_path / "ag"
    with zipfile.ZipFile(z) as zf:
        zf.extractall(ag / "source")
    (ag / "submission").mkdir()
    shutil.copy2(ASSIGN / "solution" / "layers.py", ag / "submission" / "layers.py")
    (ag / "results").mkdir()
    script = (ag / "source" / "run_autograder").read_text().replace("/autograder", str(ag))
    (ag / "run_autograder").write_text(script)
    bindir = tmp_path / "bin"  # `gradcheck` as this interpreter runs it, with this checkout first on its path
    bindir.mkdir()
    (bindir / "gradcheck").write_text(f"#!/bin/sh\nexec {sys.executable} -m gradcheck \"$@\"\n")
    (bindir / "gradcheck").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    p = subprocess.run(["bash", str(ag / "run_autograder")], capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads((ag / "results" / "results.json").read_text())
    assert res["tests"] and res["score"] == sum(t["max_score"] for t in res["tests"]) > 0, res.get("output")
