"""newuser35's findings (session 35): ``check --json`` always describes the run that wrote it (H1), a BatchNorm's
running averages compared after training forwards (H2), an empty forward output (M1) and an output shape unlike the
reference's (M2) said without a traceback, stride and LSTM forget-gate bugs named (L1), the wording of L2 and L3."""

import json
import os
from pathlib import Path

import pytest

from test_cli import ROOT, run_here

LINEAR_INIT = '{"in_features": 5, "out_features": 3}'
CORRECT = ROOT / "examples" / "student_linear_correct.py"


def _json(path):
    return json.loads(Path(path).read_text())


# --------------------------------------------------------------------------- H1: --json of THIS run


def test_json_of_a_run_without_verdict_replaces_an_earlier_pass(tmp_path):
    """H1: a PASS's report, then the same --json for a file that no longer imports (exit 3): the file says this run,
    passed false, with its outcome and message (main kept the earlier ``"passed": true``)."""
    f, out = tmp_path / "layers.py", tmp_path / "r.json"
    f.write_text(CORRECT.read_text())
    p = run_here("check", f"{f}::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", out)
    assert p.returncode == 0 and _json(out)["passed"] is True
    assert _json(out)["exit_code"] == 0 and _json(out)["outcome"] == "pass"
    f.write_text(CORRECT.read_text().replace("class Linear:", "class Linear"))  # a syntax error
    p = run_here("check", f"{f}::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", out)
    assert p.returncode == 3
    d = _json(out)
    assert d["passed"] is False and d["exit_code"] == 3 and d["outcome"] == "not checked"
    assert "does not import: SyntaxError" in d["message"] and "name" not in d  # no diagnosis: none was made
    assert sorted(os.listdir(tmp_path)) == ["layers.py", "r.json"]  # written atomically: no temporary file left


def test_json_of_a_usage_error_and_of_gradchecks_own_failure(tmp_path, monkeypatch):
    """H1: a class that does not exist (exit 2) and a failure of gradcheck's own code (a traceback) each leave a report
    of their own in place of the earlier PASS."""
    import gradcheck.check_command as cc
    from gradcheck.cli import main

    out = tmp_path / "r.json"
    out.write_text(json.dumps({"passed": True}))  # an earlier run's
    p = run_here("check", f"{CORRECT}::Linaer", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", out)
    assert p.returncode == 2 and _json(out)["passed"] is False and _json(out)["outcome"] == "usage error"
    assert "Linaer" in _json(out)["message"]
    out.write_text(json.dumps({"passed": True}))

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug of gradcheck's")

    monkeypatch.setattr(cc, "run_check", broken)
    with pytest.raises(ZeroDivisionError):
        main(["check", f"{CORRECT}::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", str(out)])
    assert _json(out) == {"passed": False, "exit_code": None, "outcome": "internal error",
                          "message": "ZeroDivisionError: a bug of gradcheck's"}


def test_json_refused_by_a_usage_error_is_not_written(tmp_path):
    """--json in a folder that does not exist stays a usage error that makes nothing (tester15 L6)."""
    out = tmp_path / "no" / "r.json"
    p = run_here("check", f"{CORRECT}::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--json", out)
    assert p.returncode == 2 and not (tmp_path / "no").exists()
