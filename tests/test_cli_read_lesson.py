"""newuser22: the text output of ``gradcheck check`` names the lesson of a named bug (``read: lessons/...``),
which only ``--json`` (``"lesson"``) gave before."""

import contextlib
import io
import json
import os
from pathlib import Path

from gradcheck.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_a_named_bug_s_lesson_is_printed_as_in_the_json(tmp_path):
    out, old = io.StringIO(), os.getcwd()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["check", "examples/student_linear_buggy.py::Linear", "--input-shape", "8,5",
                         "--init", '{"in_features": 5, "out_features": 3}', "--json", str(tmp_path / "r.json")])
    finally:
        os.chdir(old)
    lessons = [f["lesson"] for f in json.loads((tmp_path / "r.json").read_text())["findings"] if f["lesson"]]
    assert code == 1 and lessons == ["lessons/01-linear-layer.md"], (code, lessons)
    lines = out.getvalue().splitlines()
    assert lines[-1] == "read: lessons/01-linear-layer.md", lines[-4:]
    assert lines[-3].startswith("diagnosis: db is the mean over the batch, not the sum"), lines[-4:]
