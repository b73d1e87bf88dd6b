"""Batch robustness (issue 11, section 2): odd folder names, the grader's own failures, the import guard's limits.

The whole-batch versions of these cases (graded in the namespaces sandbox, gradebook
checked) are in tests/test_grading_hostile.py; here each rule is one fast call.
"""

import os
import unicodedata
from pathlib import Path

import pytest

from gradcheck.grading.runner import GRADER_ERROR, display_name, grade_submission, result_folder
from gradcheck.grading.static import MAX_BYTES, forbidden_imports, format_violations

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"


def test_a_folder_named_like_a_batch_file_gets_a_folder_of_its_own(tmp_path):
    assert result_folder(tmp_path, "alice") == tmp_path / "alice"
    assert result_folder(tmp_path, "results.json") == tmp_path / "results.json"  # not a batch file
    names = ["gradebook.csv", "Gradebook.CSV", "gradebook.csv~", "gradebook.csv~~", "scores.png", "grading.json",
             "x~"]
    folders = [result_folder(tmp_path, n).name for n in names]
    assert folders == ["gradebook.csv~", "Gradebook.CSV~", "gradebook.csv~~", "gradebook.csv~~~", "scores.png~",
                       "grading.json~", "x~"]
    assert len(set(folders)) == len(folders)


def test_display_names_are_printable_and_never_shared():
    nfc, nfd = unicodedata.normalize("NFC", "caf\u00e9"), unicodedata.normalize("NFD", "caf\u00e9")
    latin1 = os.fsdecode(b"caf\xe9")  # a folder name that is not UTF-8 (surrogate-escaped by Python)
    names = [nfc, nfd, latin1, "caf\\xe9", "a\\b", "plain"]
    shown = [display_name(n) for n in names]
    assert shown == [nfc, nfd, "caf\\xe9", "caf\\\\xe9", "a\\\\b", "plain"]
    assert len(set(shown)) == len(shown)
    for s in shown:
        s.encode("utf-8")  # writable to the UTF-8 gradebook (a surrogate would raise)


def test_a_failure_of_the_graders_own_is_a_result_not_an_exception(tmp_path):
    """Before: any OSError of the grader (here: results.json is a folder) ended the whole batch."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    out = tmp_path / "out"
    (out / "results.json").mkdir(parents=True)
    (out / "results.json" / "keep").write_text("x")
    r = grade_submission(sub, ASSIGN / "tests", out, unsafe_no_isolation=True)
    assert r.status == GRADER_ERROR and r.score == 0
    assert r.message.startswith("the grader failed: IsADirectoryError") or "Is a directory" in r.message
    assert "results.json could not be written" in r.message


def test_the_import_guard_reports_a_file_it_cannot_parse_and_never_follows_imports(tmp_path):
    deep = tmp_path / "deep.py"
    deep.write_text("x = " + "1+" * 400_000 + "1\n")  # RecursionError in ast.parse
    brackets = tmp_path / "brackets.py"
    brackets.write_text("x = " + "-" * 1_000_000 + "1\n")  # MemoryError in the parser
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * (MAX_BYTES + 1))
    selfish = tmp_path / "selfish.py"
    selfish.write_text("import selfish\nimport cycle\n")
    (tmp_path / "cycle.py").write_text("import selfish\n")
    got = forbidden_imports([str(p) for p in (deep, brackets, big, selfish, tmp_path / "cycle.py")], ["torch"],
                            root=str(tmp_path))
    assert [(v.file, v.module) for v in got] == [("big.py", None), ("brackets.py", None), ("deep.py", None)]
    assert "RecursionError" in got[2].statement and "MemoryError" in got[1].statement
    msg = format_violations(got, ["torch"])
    assert "could not check `big.py`: it is larger than 1 MiB" in msg and "no credit" in msg.lower()
    assert "`deep.py`: it is nested too deeply for Python's parser" in msg


def test_a_file_of_a_million_imports_keeps_ten_and_the_message_stays_short(tmp_path):
    f = tmp_path / "many.py"
    f.write_text("import torch\n" * 80_000)
    got = forbidden_imports([str(f)], ["torch"])
    assert len(got) == 10 and [v.line for v in got] == list(range(1, 11))
    assert len(format_violations(got * 3, ["torch"])) < 2_000 and "(and 20 more)" in format_violations(got * 3,
                                                                                                       ["torch"])


@pytest.mark.parametrize("name", ["gradebook.csv", os.fsdecode(b"non-utf8-\xff")])
def test_the_gradebook_holds_every_odd_name(tmp_path, name):
    import csv

    from gradcheck.grading.runner import SubmissionResult, write_gradebook

    rows = [SubmissionResult(name, 1.0, 2.0, "graded", 0.1, "x"), SubmissionResult("b", 2.0, 2.0, "graded", 0.1, "y")]
    path = write_gradebook(tmp_path / "gradebook.csv", rows, seed=3)
    got = list(csv.DictReader(open(path, encoding="utf-8")))
    assert [r["submission"] for r in got] == sorted([display_name(name), "b"])
