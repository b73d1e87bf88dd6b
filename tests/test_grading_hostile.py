"""The hostile suite: one batch of submissions that each try one attack on the grader (issue 11).

Every file in ``tests/hostile/`` (``*.attack``: Python that no test runner may import
by accident) is an attack pasted above the assignment's
solution with the db-mean bug (deserved score: :data:`BASE`, the same as the
``control_base`` submission). An attack that obtains the reference solution puts
its ``Linear`` in place of the student's (``_stolen``), so success shows as full
marks; an attack that obtains a secret quotes it in an exception message starting
with ``PWNED``; attacks that run inside ``Linear.forward`` define
``_attack(layer, X)``. The batch also holds links in submissions, victims a
hostile neighbour tries to harm, and controls. It runs once (2 workers) in the
namespaces sandbox: each test below checks one submission's score and message,
that the batch continued and that the gradebook is complete.
"""

import csv
import json
import os
import re
import shutil
import sysconfig
import time
import unicodedata
from pathlib import Path

import pytest
from test_grading_keys_s35 import shown

from gradcheck.errors import UsageError
from gradcheck.grading.runner import display_name, grade_batch, grade_submission, result_folders
from gradcheck.sandbox import support
from tests.run_shared import value_once_per_run

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
SOLUTION = (ASSIGN / "solution" / "layers.py").read_text()
HOSTILE = Path(__file__).resolve().parent / "hostile"
SITE = sysconfig.get_paths()["purelib"]
TOTAL = 28.0
BASE = TOTAL - (2 + 4 / 3 + 2)  # the db-mean bug costs db in the visible and the hidden Linear test, and the
#                                float64 property test (whose points come only with right values)


DB_MEAN = SOLUTION.replace('self.grads["b"] = dY.sum(axis=0)', 'self.grads["b"] = dY.mean(axis=0)')
_FWD = "    def forward(self, X, training=False):\n        self.X = X\n"
assert DB_MEAN.count(_FWD) == 1
HOOKED = DB_MEAN.replace(_FWD, "    def forward(self, X, training=False):\n"
                               "        if _attack is not None:\n            _r = _attack(self, X)\n"
                               "            if _r is not None:\n                return _r\n        self.X = X\n")
FOOTER = "\nif isinstance(_stolen, dict) and 'Linear' in _stolen:\n    Linear = _stolen['Linear']\n"

#: attacks whose deserved score is that of control_exit (they end the sandbox process on purpose)
CRASHING = {"exit70", "forged_frame", "reply_many_refs", "reply_deep_json", "close_pipes", "flood_pipe",
            "sigterm_hang", "thread_fresh_lock"}
#: attacks whose deserved score is that of control_raise (Linear.forward raises)
RAISING = {"huge_message", "markdown_injection", "evil_str", "keyboard_interrupt", "system_exit", "reduce_pickle",
           "outcome_skipped", "outcome_exit", "outcome_failed", "thread_fresh_module"}
#: attacks with a deserved score of their own: (score, needle in the failures)
OWN_SCORE = {
    "zero_weights": (BASE - 2 - 4 / 3, "dX"),  # the sign bug in dX costs dX, visible and hidden
    "inf_bias": (TOTAL - 2 - 6 - 4 - 2, "holds NaN or infinity"),  # every Linear test refused, dtypes too (it
    #                                                                 sets the evaluation point: right values only)
    "import_loop": (0.0, "was first imported, in an earlier test"),
}
NFC, NFD = unicodedata.normalize("NFC", "caf\u00e9"), unicodedata.normalize("NFD", "caf\u00e9")
# tester16g H1: numpy's comparisons patched in the sandbox cannot hide a write into X or dY (the grader reads them)
PATCH_NP = "import numpy\nfor _n in ('array_equal', 'allclose', 'array_equiv'):\n" \
           "    setattr(numpy, _n, lambda *a, **k: True)\n"
X_WRITTEN = SOLUTION.replace("        return np.where(self.mask, X, 0.0)\n", "        X[~self.mask] = 0.0\n        return X\n")
DY_WRITTEN = SOLUTION.replace("        return dY * self.mask\n", "        dY[~self.mask] = 0.0\n        return dY\n")
# tester16g H2: the same cache bug (backward edits the cached probabilities) wherever the cache lives
CACHE_BUG = SOLUTION.replace("d = self.p.copy()", "d = self.p")
GUARD_OFF = ("        f = __import__('sys')._getframe(1)\n        while f is not None:\n"
             "            if hasattr(f.f_locals.get('self'), 'AD'):\n"
             "                f.f_locals['self'].AD.cache_guard = lambda *a, **k: None\n"
             "            f = f.f_back\n")
assert X_WRITTEN != SOLUTION and DY_WRITTEN != SOLUTION and CACHE_BUG != SOLUTION
CACHE_SCORE = TOTAL - 1  # the backward-twice test alone (session 26: its gradients are right), as the cache_mutated mutant
CACHE_SAID = "a second backward() after the same forward returned a different gradient"  # that test's sentence
DEEP = b"x = " + b"1+" * 30_000 + b"1\n"  # RecursionError in ast.parse (under 64 KiB, parsed whole): the import guard cannot read it
#: submissions with odd files or names: folder -> ({relative path: bytes}, deserved score, needle in the results)
LAYOUTS = {
    "empty_file": ({"layers.py": b""}, 0.0, "has no class"),
    "binary_file": ({"layers.py": bytes(range(256)) * 64}, 0.0, "does not import"),
    "non_utf8_file": ({"layers.py": b"NAME = 'caf\xe9'\n" + SOLUTION.encode()}, 0.0, "does not import"),
    "huge_file": ({"layers.py": SOLUTION.encode() + b"#" * (2 << 20)}, 0.0, "the 1,048,576 bytes (1 MiB) the autograder reads of one file"),
    "stdlib_helper": ({"layers.py": b"import json\n" + SOLUTION.encode(), "json.py": b"raise SystemExit(1)\n"},
                      TOTAL, "standard-library module"),
    "unicode-\u00fcn\u00efc\u00f8d\u00e9-\u03a9": ({"layers.py": SOLUTION.encode()}, TOTAL, None),
    # folders named like the batch's own files, or like each other: each graded, none overwrites another (a batch file
    # and a results file here; every batch file's name, grading.json and scores.png too, gets its folder from
    # runner.result_folder: tests/test_grading_batch_names.py::test_a_folder_named_like_a_batch_file_gets_a_folder_of_its_own)
    "gradebook.csv": ({"layers.py": SOLUTION.encode()}, TOTAL, None),
    "results.json": ({"layers.py": DB_MEAN.encode()}, BASE, None),
    os.fsdecode(b"non-utf8-\xff\xfe"): ({"layers.py": DB_MEAN.encode()}, BASE, None),
    "non-utf8-\\xff\\xfe": ({"layers.py": SOLUTION.encode()}, TOTAL, None),  # its escaped name, literally
    NFC: ({"layers.py": SOLUTION.encode()}, TOTAL, None),
    NFD: ({"layers.py": DB_MEAN.encode()}, BASE, None),
    "Alice": ({"layers.py": SOLUTION.encode()}, TOTAL, None),
    "alice": ({"layers.py": DB_MEAN.encode()}, BASE, None),
    # helper files that make the static import guard recurse or parse a lot, or import in a cycle
    # (a helper nothing imports never runs: the import guard reads only what the graded file imports, newuser44 F6;
    # one that is imported and too deep for ast.parse makes the guard read every file: tests/test_grading_forbid_scope.py)
    "deep_helper": ({"layers.py": SOLUTION.encode(), "helper.py": DEEP}, TOTAL, None),
    "import_cycle": ({"layers.py": b"import cyc_a\n" + DB_MEAN.encode(), "cyc_a.py": b"import cyc_b\n",
                      "cyc_b.py": b"import cyc_a\nimport layers\n"}, BASE, None),
    "many_imports_helper": ({"layers.py": SOLUTION.encode(), "helper.py": b"import os\n" * 100_000}, TOTAL, None),
    "huge_helper": ({"layers.py": SOLUTION.encode(), "helper.py": b"#" * (8 << 20)}, TOTAL, None),
}
ATTACKS = sorted(p.stem for p in HOSTILE.glob("*.attack"))
#: tester16g H1/H2: the same bug, with numpy's comparisons patched in the sandbox or its cache kept elsewhere, costs
#: what it costs plain (name -> (layers.py, deserved score, needle in the failures)). The plain cache bug is the
#: cache_mutated mutant (tests/test_grading.py::test_each_mutant_fails_exactly_the_intended_tests); a second backward
#: is compared in the grader's process, so numpy patched in the sandbox (patched_numpy_*) cannot reach it either
SAME_BUG = {
    "patched_numpy_x_written": (PATCH_NP + X_WRITTEN, TOTAL - 1 - 3 - 2 - 2,  # ReLU tests and dtypes, as unpatched
                                "ReLU.forward modified its input X in place"),
    "patched_numpy_dy_written": (PATCH_NP + DY_WRITTEN, TOTAL - 3 - 2,  # ReLU gradient, hidden ReLU
                                 "modified its upstream gradient dY in place"),
    "cache_named_grad": (CACHE_BUG.replace("self.p =", "self.grad =").replace("d = self.p", "d = self.grad"),
                         CACHE_SCORE, CACHE_SAID),
    "cache_in_module_dict": ("_C = {}\n" + CACHE_BUG.replace("self.p =", "_C[id(self)] =").replace(
        "d = self.p", "d = _C[id(self)]"), CACHE_SCORE, CACHE_SAID),
    "cache_guard_switched_off": (CACHE_BUG.replace("    def forward(self, y_true, y_pred):\n",
                                                   "    def forward(self, y_true, y_pred):\n" + GUARD_OFF),
                                 CACHE_SCORE, CACHE_SAID),
}


def submission(attack: str, subs: Path, out: Path) -> str:
    code = (HOSTILE / f"{attack}.attack").read_text()
    for k, v in {"@ROOT@": str(ROOT), "@SUBS@": str(subs), "@OUT@": str(out), "@SITE@": SITE}.items():
        code = code.replace(k, v)
    return "_stolen = None\n_attack = None\n" + code + "\n" + HOOKED + FOOTER


LINK_NAME = "x` **Grader notice:** [click here to appeal](http:e.vil) ![t](http:e.vil) `y.py"
FOLDER_NAME = "x` [click here to appeal](http:e.vil) `y"


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """The batch, graded once per test run whichever xdist workers run this module's tests
    (:func:`tests.run_shared.value_once_per_run`: the second worker waits for the first's files and results; session
    38's CI graded it on both, 96.6 s each on a quiet machine). The tests read its files; the one that resumes it
    resumes a copy (:func:`test_resumed_batch_keeps_its_own_results_and_regrades_a_planted_one`)."""
    if support()[0] == "none":
        # CI runs as root with namespaces: there the hostile suite must run, never be skipped
        if os.environ.get("CI"):
            pytest.fail(f"CI must prove the isolation, but there are no namespaces: {support()[1]}")
        pytest.skip(f"no namespaces here: {support()[1]}")
    return value_once_per_run(tmp_path_factory, "hostile-batch", _grade_hostile)


def _grade_hostile(folder: Path) -> dict:
    """Grade the hostile batch into ``folder`` (its submissions in ``hostile``, results in ``hostile-graded``); what
    the tests read: the folders, the results by name, the site-packages listing from before the batch, the batch."""
    subs, out = folder / "hostile", folder / "hostile-graded"
    subs.mkdir()
    out.mkdir()
    tests = _tests_one_second(folder / "tests")
    for name in ATTACKS:
        (subs / name).mkdir()
        (subs / name / "layers.py").write_text(submission(name, subs, out))
    for name in ("victim", "zz_victim", "control_base"):  # victims: the solution, graded beside the attacks
        (subs / name).mkdir()
        (subs / name / "layers.py").write_text(SOLUTION)
    for name, (files, _, _) in LAYOUTS.items():
        for rel, data in files.items():
            (subs / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (subs / name / rel).write_bytes(data)
    for name, (source, _, _) in SAME_BUG.items():
        (subs / name).mkdir()
        (subs / name / "layers.py").write_text(source)
    (subs / "control_raise").mkdir()
    (subs / "control_raise" / "layers.py").write_text(
        "_stolen = None\ndef _attack(layer, X):\n    raise ValueError('x')\n" + HOOKED + FOOTER)
    (subs / "control_exit").mkdir()
    (subs / "control_exit" / "layers.py").write_text(
        "import os\n_stolen = None\ndef _attack(layer, X):\n    os._exit(1)\n" + HOOKED + FOOTER)
    (subs / "control_base" / "layers.py").write_text("_stolen = None\n_attack = None\n" + HOOKED + FOOTER)
    # links in the submission: never followed
    (subs / "symlink_layers").mkdir()
    (subs / "symlink_layers" / "layers.py").symlink_to(ASSIGN / "solution" / "layers.py")
    (subs / "symlink_helper").mkdir()
    (subs / "symlink_helper" / "helper.py").symlink_to("/etc/passwd")
    (subs / "symlink_helper" / "layers.py").write_text(
        "try:\n    import helper\n    raise RuntimeError('PWNED ' + open(helper.__file__).read()[:200])\n"
        "except ImportError:\n    pass\n" + SOLUTION)
    (subs / "symlink_folder").mkdir()
    (subs / "symlink_folder" / "ref").symlink_to(ASSIGN / "solution")
    (subs / "symlink_folder" / "layers.py").write_text(
        "_stolen = None\n_attack = None\ntry:\n    from ref.layers import Linear as _L\n    _stolen = {'Linear': _L}\n"
        "except BaseException:\n    pass\n" + HOOKED + FOOTER)
    (subs / "symlink_backtick").mkdir()  # redteam28 F4: a backtick in the name ended the note's code span
    (subs / "symlink_backtick" / LINK_NAME).symlink_to("/etc/passwd")
    (subs / "symlink_backtick" / "layers.py").write_text(SOLUTION)
    (subs / "zipped_backtick" / FOLDER_NAME).mkdir(parents=True)  # F4b: the same in "your files were inside"
    (subs / "zipped_backtick" / FOLDER_NAME / "layers.py").write_text(SOLUTION)
    (subs / "fifo_helper").mkdir()
    os.mkfifo(subs / "fifo_helper" / "helper.py")
    (subs / "fifo_helper" / "layers.py").write_text("_stolen = None\n_attack = None\n" + HOOKED + FOOTER)
    before = {p.name for p in Path(SITE).iterdir()}
    os.environ["GRADCHECK_HOSTILE_CANARY"] = "canary-7f3a"
    t0 = time.monotonic()
    try:  # the attacks that hang (sigterm_hang in each of its 4 sandboxes, import_loop once) busy-loop through each
        #   per-call limit (1 s: _tests_one_second); every honest call is far under
        res = grade_batch(subs, tests, out, workers=2, seed=5, timeout=2.0, memory_mb=700, progress=False)
    finally:
        del os.environ["GRADCHECK_HOSTILE_CANARY"]
    seconds = time.monotonic() - t0
    by = {s.name: s for s in res.submissions}
    # anything that outlived its sandbox would write now: the late writers write 3 s (daemon_outlives) or 2 s
    # (threads_outlive) after their call, so 3.5 s after their results, not after the whole batch's
    written = max(Path(by[n].results_path).stat().st_mtime for n in ("daemon_outlives", "threads_outlive"))
    time.sleep(max(0.0, written + 3.5 - time.time()))
    return {"subs": subs, "out": out, "res": by, "seconds": seconds,
            "site_before": before, "batch": res, "tests": tests}


def _tests_one_second(tests: Path) -> Path:
    """The assignment's tests copied to ``tests`` with a per-call limit of 1 s (its ``pytest.mark.timeout(3)``): the
    batch grades every submission with them. The hanging attacks (sigterm_hang's 4 sandboxes, import_loop) busy-loop
    until their limit's CPU time (the starved allowance gives back what the load took), 15 CPU-s of the batch at 3 s;
    the suite asserts only that the limit ends them (the limit's own seconds are test_grading_adversarial's)."""
    shutil.copytree(ASSIGN / "tests", tests, ignore=shutil.ignore_patterns("__pycache__"))
    path = tests / "test_linear_relu_ce.py"
    text = path.read_text()
    assert text.count("pytest.mark.timeout(3)") == 1
    path.write_text(text.replace("pytest.mark.timeout(3)", "pytest.mark.timeout(1)"))
    return tests


def results(b, name):
    return json.loads(Path(b["res"][name].results_path).read_text())


def failures(b, name):
    return " ".join(t["output"] for t in results(b, name)["tests"] if t["status"] != "passed")


def test_the_batch_graded_everything_and_the_gradebook_is_complete(batch):
    res = batch["res"]
    assert len(res) == len(ATTACKS) + len(LAYOUTS) + len(SAME_BUG) + 11
    assert {s.status for s in res.values()} == {"graded"}, {n: s.message for n, s in res.items() if s.status != "graded"}
    rows = list(csv.DictReader(open(batch["out"] / "gradebook.csv", encoding="utf-8")))
    assert sorted(r["submission"] for r in rows) == sorted(display_name(n) for n in res)  # one row each
    assert len({r["submission"] for r in rows}) == len(rows) and all(r["status"] == "graded" for r in rows)
    assert {r["submission"]: float(r["score"]) for r in rows}["non-utf8-\\xff\\xfe"] == pytest.approx(BASE, abs=1e-3)
    assert res["control_base"].score == pytest.approx(BASE, abs=1e-3)
    assert res["victim"].score == res["zz_victim"].score == TOTAL
    assert res["control_exit"].score < BASE


@pytest.mark.parametrize("name", ATTACKS)
def test_attack_gets_the_deserved_score_and_leaks_nothing(batch, name):
    r = batch["res"][name]
    control = "control_exit" if name in CRASHING else "control_raise" if name in RAISING else "control_base"
    deserved, needle = OWN_SCORE.get(name, (batch["res"][control].score, ""))
    assert r.status == "graded" and r.score == pytest.approx(deserved, abs=1e-3), (r.score, failures(batch, name))
    assert needle in failures(batch, name)
    text = Path(batch["res"][name].results_path).read_text()
    assert "PWNED" not in text and "canary-7f3a" not in text and "root:x:0" not in text
    data = json.loads(text)
    assert data["extra_data"]["isolation"] == support()[0] and data["extra_data"]["complete"] is True
    assert "score" in data and data["score"] < 1000  # not a planted file


def test_crashes_are_the_students_not_the_graders(batch):
    for name in CRASHING:
        text = failures(batch, name)
        assert "grader's side" not in text and "not a fault of the checked code" not in text, (name, text)
    assert "exit code 70" in failures(batch, "exit70")
    assert "killed by SIGSEGV" in failures(batch, "thread_fresh_lock")  # CPython's own crash, test by test (L2)
    # redteam26 L2: the thread past Python's refusal is refused by the kernel (seccomp), in the sandbox's words
    assert "can't start new thread: the grading sandbox does not allow starting threads" in failures(
        batch, "thread_fresh_module")
    assert "share payload bytes" in failures(batch, "reply_many_refs")
    assert not re.search(r"(?<!\\)<b>", failures(batch, "forged_frame"))  # a '<' of theirs is escaped: no tag


def test_strings_from_the_child_are_short_and_escaped(batch):
    assert len(failures(batch, "huge_message")) < 20_000
    text = failures(batch, "markdown_injection")
    # inert: every '<' and every ']' before '(' backslash-escaped (grading.static.markdown_text)
    assert not re.search(r"(?<!\\)<script|(?<!\\)\]\(http", text) and "\\<script>" in text, text
    assert "[full marks\\](http" in text, text
    assert "could not be printed" in failures(batch, "evil_str") and "E" * 400 not in failures(batch, "evil_str")
    assert "KeyboardInterrupt" in failures(batch, "keyboard_interrupt")


def test_lying_objects_and_outcome_names_are_graded_as_what_they_are(batch):
    for name, cls in (("outcome_skipped", "Skipped"), ("outcome_exit", "Exit"), ("outcome_failed", "Failed"),
                      ("system_exit", "SystemExit")):
        data = results(batch, name)
        text = failures(batch, name)
        assert f"raised {cls}" in text and "Not graded" not in text, (name, text)
        assert all(t["status"] in ("passed", "failed") for t in data["tests"]) and not re.search(r"(?<!\\)<b>", text)
    assert "an object of type \\_Evil" in failures(batch, "reduce_pickle")  # (Markdown: _ first in a word escaped)
    assert not Path("/tmp/gradcheck-pwned-by-reduce").exists()
    for name in ("lying_ndarray", "lying_float"):  # the db-mean bug shows; the loss value is its plain float
        assert batch["res"][name].score == pytest.approx(BASE, abs=1e-3), failures(batch, name)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_odd_files_and_names_are_graded_or_refused_with_a_message(batch, name):
    _, deserved, needle = LAYOUTS[name]
    r = batch["res"][name]
    assert r.status == "graded" and r.score == pytest.approx(deserved, abs=1e-3), (r.score, failures(batch, name))
    if needle:
        assert needle in json.dumps(results(batch, name), ensure_ascii=False)


@pytest.mark.parametrize("name", sorted(SAME_BUG))
def test_a_bug_costs_the_same_whatever_numpy_the_child_patched_and_wherever_the_cache_lives(batch, name):
    _, deserved, needle = SAME_BUG[name]
    r = batch["res"][name]
    assert r.status == "graded" and r.score == pytest.approx(deserved, abs=1e-3), (r.score, failures(batch, name))
    assert needle in shown(failures(batch, name))  # (the text shown: fix37b escapes a dot between words)


def test_an_import_time_loop_costs_one_timeout_for_the_whole_submission(batch):
    extra = results(batch, "import_loop")["extra_data"]
    assert extra["sandbox_starts"] == 1 and extra["import_failures"] == {"layers.py": "timeout"}


def test_folders_named_like_batch_files_keep_them_apart(batch):
    out = batch["out"]
    assert (out / "gradebook.csv").is_file() and (out / "grading.json").is_file() and (out / "scores.png").is_file()
    assert results(batch, "gradebook.csv")["extra_data"]["submission"] == "gradebook.csv"
    assert (out / "gradebook.csv~" / "results.json").is_file() and (out / "results.json" / "results.json").is_file()


def test_names_that_differ_only_in_case_or_accents_get_folders_that_never_fold_together(batch):
    """On a case-insensitive or normalising disk (macOS, Windows) Alice/alice and the two cafés would share a
    folder: each keeps a folder of its own there too, and the summary says where."""
    folders = {n: Path(s.results_path).parent for n, s in batch["res"].items()}
    assert folders == result_folders(batch["out"], list(folders))
    folded = [unicodedata.normalize("NFC", p.name).casefold() for p in folders.values()]
    assert len(set(folded)) == len(folded)
    assert folders["Alice"].name == "Alice" and folders["alice"].name.startswith("alice~")
    assert results(batch, "alice")["extra_data"]["submission"] == "alice" and batch["res"]["alice"].score < TOTAL
    assert f"note: alice's results are in {folders['alice'].name}/" in batch["batch"].summary()


def test_links_in_a_submission_are_refused_with_a_message(batch):
    assert batch["res"]["symlink_layers"].score == 0
    msg = failures(batch, "symlink_layers")
    assert "`layers.py` was not read: it is a symbolic link" in msg and "Upload the file itself" in msg
    # links inside a submission; a top-level link to a folder is a submission, graded (N9)
    assert "never follows links inside a submission" in " ".join(msg.split())
    assert batch["res"]["symlink_helper"].score == TOTAL and "PWNED" not in failures(batch, "symlink_helper")
    assert "`helper.py` was not read: it is a symbolic link" in results(batch, "symlink_helper")["output"]
    assert batch["res"]["symlink_folder"].score == pytest.approx(BASE, abs=1e-3)
    assert batch["res"]["fifo_helper"].score == pytest.approx(BASE, abs=1e-3)


def test_nothing_outside_the_sandbox_changed(batch):
    subs, out = batch["subs"], batch["out"]
    assert (subs / "victim" / "layers.py").read_text() == SOLUTION
    assert {p.name for p in Path(SITE).iterdir()} == batch["site_before"]  # no .pth planted
    assert not list(subs.glob("fill_*")) and not list(out.glob("fill_*"))
    assert not list(subs.glob("*/fill_*")) and not (ASSIGN / "fill_0.bin").exists()
    for name in ("os_fork", "threads_outlive", "daemon_outlives", "write_outputs"):
        assert results(batch, name)["score"] < 1000
    assert "1000" not in (out / "gradebook.csv").read_text()
    assert not Path("/dev/shm/pwn").exists()


def test_resumed_batch_keeps_its_own_results_and_regrades_a_planted_one(batch, tmp_path):
    """On a copy of the batch's output folder: the other tests (on another xdist worker too) read the batch's."""
    subs = batch["subs"]
    out = tmp_path / "hostile-graded"
    shutil.copytree(batch["out"], out, symlinks=True)
    planted = json.loads((out / "control_base" / "results.json").read_text())
    assert planted == results(batch, "control_base")
    planted["score"] = 28.0
    (out / "control_base" / "results.json").write_text(json.dumps(planted))
    res = grade_batch(subs, batch["tests"], out, workers=2, seed=5, timeout=2.0, memory_mb=700, progress=False,
                      plot=False)
    by = {s.name: s for s in res.submissions}
    assert by["control_base"].status == "graded" and by["control_base"].score == pytest.approx(BASE, abs=1e-3)
    assert by["victim"].status == "skipped"


def test_without_namespaces_the_grader_refuses_unless_told_and_records_none(tmp_path, monkeypatch):
    import gradcheck.sandbox as iso

    monkeypatch.setattr(iso, "support", lambda: ("none", "bubblewrap (bwrap) is not installed"))
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text(SOLUTION)
    with pytest.raises(UsageError) as info:
        grade_submission(sub, ASSIGN / "tests", tmp_path / "out")
    assert "refuses to run untrusted code" in str(info.value) and "--unsafe-no-isolation" in str(info.value)
    refused = json.loads((tmp_path / "out" / "results.json").read_text())  # one submission: Gradescope shows why
    assert refused["score"] == 0 and refused["tests"] == [] and refused["extra_data"]["status"] == "not graded"
    r = grade_submission(sub, ASSIGN / "tests", tmp_path / "out2", unsafe_no_isolation=True)
    data = json.loads(Path(r.results_path).read_text())
    assert r.score == TOTAL and data["extra_data"]["isolation"] == "none"


def test_names_in_the_notes_stay_inside_their_code_span(batch):
    """redteam28 F4/F4b: a link's or a wrapping folder's name holding a backtick ended the note's single-backtick
    span in results.json's markdown (bold text, a live link and an image for Gradescope): each name is one code
    span fenced by more backticks than it holds (``static.code_span``), and the honest files keep full marks."""
    link = json.dumps(results(batch, "symlink_backtick"))
    assert batch["res"]["symlink_backtick"].score == TOTAL
    assert json.dumps(f"``{LINK_NAME}`` was not read: it is a symbolic link")[1:-1] in link
    folder = json.dumps(results(batch, "zipped_backtick"))
    assert batch["res"]["zipped_backtick"].score == TOTAL
    assert json.dumps(f"Your files were inside the folder ``{FOLDER_NAME}/``")[1:-1] in folder
