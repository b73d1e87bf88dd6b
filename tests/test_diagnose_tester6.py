"""The session-6 new-user tester's report: diagnosis sentences that named the wrong bug (or a right
one in the wrong words), and the check command's misleading messages. Each repro fails before its fix."""

import json
from pathlib import Path

import numpy as np
import pytest

from gradcheck.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("target, hint", [
    ("notebooks/01-manual-vs-tape.ipynb::Linear", "jupyter nbconvert --to script"),
    ("README.md::Linear", "a .py file"),
])
def test_a_target_that_is_not_a_py_file_is_a_usage_error(capsys, target, hint):
    code = main(["check", str(ROOT / target.split("::")[0]) + "::Linear", "--input-shape", "4,3"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "expected a .py file" in err and hint in err and "loader" not in err and "does not import" not in err
