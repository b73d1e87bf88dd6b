"""tester23g's grader findings (session 23).

M1: 62 files of 1 MiB of ``import os`` lines beside a correct solution scored 0/22 "too slow ... make forward and
backward faster" at load 12 with every test Not run: the plugin's scan of the files (about 2.4 s of CPU per MiB)
was charged only once it had ended, and it never ended within the limit. Now the sandbox receives (and the scan
reads) at most ``MAX_READ_BYTES`` of ``.py`` files, the tests' own files first; the scan is charged file by file;
a time limit passed before any sandbox started is the grader's failure, not the student's slowness.

M2: the whole-submission limit was wall clock alone (0.8 s of CPU per forward took 213-244 s of the 300 s limit at
load 10): now a process tree still runnable and short of its CPU time at the limit gets the rest, up to
``STARVED_FACTOR`` times the limit (a sleeping one still ends at the limit).
"""

import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gradcheck import sandbox
from gradcheck.grading import plugin, runner
from gradcheck.grading.plugin import MAX_READ_BYTES, _SandboxHolder
from tests.test_sandbox_starved_s16 import waiting_all_along

IMPORT_OS = "import os\n" * (100 << 10)  # 1,000 KiB of import lines (about 2.4 s of scan each, measured)


def test_the_sandbox_receives_and_the_scan_reads_at_most_max_read_bytes(tmp_path):
    for i in range(6):
        (tmp_path / f"data{i:02d}.py").write_text(f"# file {i}\n" + IMPORT_OS)
    (tmp_path / "layers.py").write_text("import numpy as np\n")
    (tmp_path / "zz_helpers.py").write_text("x = 1\n")
    holder = _SandboxHolder(None, tmp_path)
    files = holder.files()
    sizes = sum(Path(p).stat().st_size for p in files.values())
    assert sizes <= MAX_READ_BYTES and {"layers.py", "zz_helpers.py"} <= set(files)  # the small files first
    assert sorted(files) == ["data00.py", "data01.py", "data02.py", "data03.py", "layers.py", "zz_helpers.py"]
    (note,) = holder.notes
    assert ("has 8 .py files; the autograder reads at most 200 files and 4 MiB in all (the files the tests load by "
            "name, then the smallest others), so 2 were not read and cannot be imported: `data04.py`, `data05.py`."
            ) in note
    holder.require("data05.py")  # a file a test loads by name is read, whatever its size
    assert "data05.py" in holder.files() and len(holder.notes) == 1  # the note replaced, not added to


def test_the_scan_is_charged_file_by_file(tmp_path, monkeypatch):
    """The charge was written once the whole scan had ended: a scan the runner's limit stopped was never charged."""
    sub, results = tmp_path / "sub", tmp_path / "out" / "results.json"
    sub.mkdir(), results.parent.mkdir()
    for i in range(3):
        (sub / f"f{i}.py").write_text("x = 1\n")
    charged = []

    def slow_scan(path):
        seconds = results.with_name(runner.GRADER_SECONDS)
        charged.append(float(seconds.read_text()) if seconds.exists() else 0.0)
        time.sleep(0.2)

    class Config:
        stash = {plugin._PARTIAL: {}}

        @staticmethod
        def getoption(name, default=None):
            return {"--grading-submission": str(sub), "--grading-results": str(results)}.get(name, default)

    monkeypatch.setattr(plugin, "scan", slow_scan)
    plugin._scan_submission(Config)
    assert charged[0] == 0.0 and charged[1] >= 0.19 and charged[2] >= 0.39  # each file's seconds as it ends
    assert float(results.with_name(runner.GRADER_SECONDS).read_text()) >= 0.59


def _child(tmp_path, seconds):
    """Arguments of a child pytest whose one test sleeps ``seconds``."""
    (tmp_path / "cwd").mkdir()
    (tmp_path / "test_sleep.py").write_text(f"import time\n\ndef test_sleep():\n    time.sleep({seconds})\n")
    return ["-q", "-p", "no:cacheprovider", str(tmp_path / "test_sleep.py")], tmp_path / "cwd"


def test_a_starved_submission_gets_the_cpu_time_it_did_not_have(tmp_path, monkeypatch):
    """The load stands in deterministically: the tree sleeps while ``/proc`` says it is runnable with no CPU had;
    before, it was stopped at its 1.5 s limit."""
    args, cwd = _child(tmp_path, 3)
    monkeypatch.setattr(sandbox, "_tree_procs", lambda pid: ({(pid, 0): 0.0}, {b"R"}))
    waiting_all_along(monkeypatch)  # and waiting on a run queue for a CPU all along (redteam30 S1)
    code, log, stopped = runner._run_child(args, cwd, 1.5, None)
    assert (code, stopped) == (0, ""), log


def test_a_starved_submission_is_stopped_at_its_backstop_as_the_grader_s_failure(tmp_path, monkeypatch):
    args, cwd = _child(tmp_path, 60)
    monkeypatch.setattr(sandbox, "_tree_procs", lambda pid: ({(pid, 0): 0.0}, {b"R"}))
    waiting_all_along(monkeypatch)  # and waiting on a run queue for a CPU all along (redteam30 S1)
    t0 = time.monotonic()
    code, _, stopped = runner._run_child(args, cwd, 0.4, None)
    assert stopped == "starved" and code < 0 and time.monotonic() - t0 >= sandbox.STARVED_FACTOR * 0.4


@pytest.mark.parametrize("used", [None, 5.0])
def test_a_sleeping_submission_or_one_that_had_its_cpu_time_ends_at_the_limit(tmp_path, monkeypatch, used):
    """Asleep (the real ``/proc`` reading), or runnable having had its CPU time: the submission's own time.

    The allowance is 60 limits here, not the module's 10: with the real reading the child pytest is runnable while it
    starts, and is given the CPU time it has not had until it sleeps; on a loaded machine 10 s of wall clock may not
    hold its start-up's first second of CPU, and it was then stopped as "starved". The rule is the factor's, whichever
    it is: a tree asleep or with its CPU had ends at the limit, never at the backstop."""
    monkeypatch.setattr(sandbox, "STARVED_FACTOR", 60)
    args, cwd = _child(tmp_path, 60)
    if used is not None:
        monkeypatch.setattr(sandbox, "_tree_procs", lambda pid: ({(pid, 0): used}, {b"R"}))
    t0 = time.monotonic()
    code, _, stopped = runner._run_child(args, cwd, 1.0, None)
    assert stopped == "slow" and code < 0 and time.monotonic() - t0 < sandbox.STARVED_FACTOR * 1.0


def test_the_meter_counts_the_cpu_time_of_a_process_that_ended():
    """A sandbox's processes end killed, and the kernel then adds their time to no one's: the meter keeps each
    process's last reading (a grandchild that used CPU and ended still counts; the live tree alone no longer has it)."""
    import subprocess

    child = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time\n"
                              "subprocess.run([sys.executable, '-c', 'x = 0\\nfor i in range(2 * 10**7): x += i'])\n"
                              "time.sleep(60)"])
    meter = runner._TreeMeter(child.pid)
    try:
        for _ in range(2400):  # until the grandchild has run and ended (no wall-clock bound asserted)
            total = meter.sample()
            if len(meter.seen) >= 2 and len(sandbox._tree_procs(child.pid)[0]) == 1:
                break
            time.sleep(0.05)
        live = sum(sandbox._tree_procs(child.pid)[0].values())
        assert len(meter.seen) == 2 and total - live >= 0.2, (meter.seen, live)
    finally:
        child.kill(), child.wait()


def test_the_suggested_command_carries_a_manualprop_reference_and_its_own_settings():
    """M3: a LayerNorm without eps failed the grade, and the suggested command (without --reference) PASSed; with the
    reference it says "the two compute different functions ... look for a forward bug"."""
    import manualprop
    from gradcheck.grading.diagnosis import reproduce

    class Graded:
        file, class_name, init_kwargs = "layers.py", "LayerNorm", {"normalized_shape": 5}

    said = reproduce(Graded(), (4, 5), reference=manualprop.LayerNorm(5))
    assert said == ("To see the full diagnosis on your computer, run: `gradcheck check layers.py::LayerNorm --init "
                    "'{\"normalized_shape\": 5}' --input-shape 4,5 --reference manualprop.LayerNorm --reference-init "
                    "'{\"normalized_shape\": [5]}'`.")
    Graded.class_name, Graded.init_kwargs = "MSE", None
    assert reproduce(Graded(), (7, 3), loss=True, reference=manualprop.MeanSquaredError()).endswith(
        "`gradcheck check layers.py::MSE --input-shape 7,3 --loss --reference manualprop.MeanSquaredError`.")


def test_the_suggested_command_of_a_staff_reference_says_what_it_cannot_compare(tmp_path):
    """A reference in the staff's tests folder: the student has no such file, so the command cannot name it; the
    sentence says the command compares backward with the student's own forward, and names no path or source."""
    import manualprop
    from gradcheck.grading.diagnosis import reproduce

    class Scale(manualprop.Linear):  # a staff class (not manualprop's own, even when built on one)
        pass

    class Graded:
        file, class_name, init_kwargs = "layers.py", "Scale", {"dim": 4}

    said = reproduce(Graded(), (5, 4), reference=Scale(4, 4))
    assert "--reference" not in said and "course's own reference, which this command does not have" in said
    assert "test_grading_tester23g" not in said and __file__ not in said and "class Scale" not in said


class _Float32Sigmoid:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.Y = (1 / (1 + np.exp(-X))).astype(np.float32)
        return self.Y

    def backward(self, dY):
        return dY * self.Y * (1 - self.Y)


def test_a_float32_forward_fails_the_forward_test_as_check_fails_it():
    """M4 (a): grade.layer_forward gave 1/1 to a float32 forward (within its rtol), check says FAIL: wrong dtype of
    Y, and the gradient tests failed it; now the forward test says check's verdict."""
    import manualprop
    from gradcheck.grading.checks import layer_forward

    X = np.random.default_rng(0).standard_normal((6, 4))
    v = layer_forward(_Float32Sigmoid(), X, manualprop.Sigmoid())
    assert not v.passed and v.parts[0].message.startswith(
        "Y has float32 precision, as gradcheck check says (FAIL: wrong dtype of Y): forward returns float32")
    assert layer_forward(manualprop.Sigmoid(), X, manualprop.Sigmoid()).passed


class _OneElementMSE:
    def forward(self, y_true, y_pred):
        self.d = y_pred - y_true
        return np.mean(self.d ** 2, keepdims=True).reshape(1)

    def backward(self):
        return 2 * self.d / self.d.size


def test_a_loss_of_shape_1_fails_the_value_test_as_check_refuses_it():
    """M4 (b): loss_value 1/1, loss_gradient 0/2, check refuses: one rule (``_validation.loss_scalar``) now."""
    import manualprop
    from gradcheck import check_loss
    from gradcheck.errors import GradientShapeError
    from gradcheck.grading.checks import loss_value

    rng = np.random.default_rng(1)
    y, p = rng.standard_normal((7, 3)), rng.standard_normal((7, 3))
    v = loss_value(_OneElementMSE(), y, p, manualprop.MeanSquaredError())
    assert not v.passed and "gave L with shape (1,); expected shape () (a scalar loss)" in v.parts[0].message
    with pytest.raises(GradientShapeError, match=r"gave L with shape \(1,\); expected shape \(\) \(a scalar loss\)"):
        check_loss(_OneElementMSE(), y, p, twin=None)
    assert loss_value(manualprop.MeanSquaredError(), y, p, manualprop.MeanSquaredError()).passed


def test_a_sandboxed_loss_of_shape_1_is_refused_as_in_process(tmp_path):
    """review24g: the line of RemoteLoss that refuses a shape (1,) (the grader's and gradcheck check's submissions run
    in the sandbox) was untested: removed, the sandboxed loss scored the value test and check passed it."""
    import manualprop
    from gradcheck import check_loss
    from gradcheck.errors import GradientShapeError
    from gradcheck.grading.checks import loss_value

    f = tmp_path / "s.py"
    f.write_text("import numpy as np\n\nclass OneMSE:\n    def forward(self, y_true, y_pred):\n"
                 "        self.d = y_pred - y_true\n        return np.mean(self.d ** 2, keepdims=True).reshape(1)\n\n"
                 "    def backward(self):\n        return 2 * self.d / self.d.size\n")
    rng = np.random.default_rng(1)
    y, p = rng.standard_normal((7, 3)), rng.standard_normal((7, 3))
    with sandbox.Sandbox(files={"s.py": str(f)}, timeout=30) as sb:  # refused where it is first called: the load
        with pytest.raises(GradientShapeError, match=r"gave L with shape \(1,\); expected shape \(\) \(a scalar"):
            loss = sb.load_loss("s.py", "OneMSE")
            assert not loss_value(loss, y, p, manualprop.MeanSquaredError()).passed
            check_loss(loss, y, p, twin=None)


class _RowScale:
    """A per-feature scale with gamma and beta stored as (1, d): the same elements as the reference's (d,)."""

    def __init__(self, dim):
        self.params = {"gamma": np.ones((1, dim)), "beta": np.zeros((1, dim))}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X * self.params["gamma"] + self.params["beta"]

    def backward(self, dY):
        self.grads = {"gamma": (dY * self.X).sum(0, keepdims=True), "beta": dY.sum(0, keepdims=True)}
        return dY * self.params["gamma"]


class _RefScale:
    def __init__(self, dim):
        self.params = {"gamma": np.ones(dim), "beta": np.zeros(dim)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X * self.params["gamma"] + self.params["beta"]

    def backward(self, dY):
        self.grads = {"gamma": (dY * self.X).sum(0), "beta": dY.sum(0)}
        return dY * self.params["gamma"]


def test_a_parameter_kept_with_a_size_1_axis_is_graded_as_check_passes_it():
    """M4 (c): Scale's gamma as (1, d), mathematically right, scored 0/3 "the assignment expects (4,)" while check
    PASSed; a wrong gradient in that layout still fails, and another arrangement of the elements is still refused,
    saying the reference pins it."""
    from gradcheck import check_layer
    from gradcheck.errors import StudentCodeError
    from gradcheck.grading.checks import layer_gradients

    X = np.random.default_rng(2).standard_normal((5, 4))
    assert check_layer(_RowScale(4), X, twin=None).passed
    v = layer_gradients(_RowScale(4), X, _RefScale(4), parts={"dX": 1, "dgamma": 1, "dbeta": 1}, seed=3)
    assert [p.passed for p in v.parts] == [True, True, True], [p.message for p in v.parts]

    class MeanBeta(_RowScale):
        def backward(self, dY):
            dX = super().backward(dY)
            self.grads["beta"] = dY.mean(0, keepdims=True)
            return dX

    v = layer_gradients(MeanBeta(4), X, _RefScale(4), parts={"dX": 1, "dgamma": 1, "dbeta": 1}, seed=3)
    assert {p.name: p.passed for p in v.parts} == {"dX": True, "dgamma": True, "dbeta": False}
    assert "mean over the batch, not the sum" in v.parts[[p.name for p in v.parts].index("dbeta")].message

    class Square(_RowScale):
        def __init__(self, dim):
            super().__init__(dim)
            self.params = {"gamma": np.ones((2, dim // 2)), "beta": np.zeros((2, dim // 2))}

    with pytest.raises(StudentCodeError, match=r"has shape \(2, 2\); the assignment expects \(4,\) \(its reference "
                                               r"layer's: .* only axes of size 1 may be added or left out\)"):
        layer_gradients(Square(4), X, _RefScale(4), parts={"dX": 1, "dgamma": 1, "dbeta": 1}, seed=3)


def test_an_exception_message_with_control_characters_is_escaped_not_cut(tmp_path):
    """L6: ``ValueError('ctl \\x0b\\x1b[31mred ... end')`` showed as ``ValueError: ctl    ``: the child took the message's
    first line by ``str.splitlines``, which ends a line at \\x0b, \\x0c, \\x1c-\\x1e and U+0085 too."""
    from gradcheck.errors import StudentCodeError
    from gradcheck.sandbox import Sandbox

    (tmp_path / "ctl.py").write_text(
        "class Sigmoid:\n    def __init__(self):\n        self.params, self.grads = {}, {}\n\n"
        "    def forward(self, X, training=False):\n"
        "        raise ValueError('ctl \\x01\\x0b\\x0c\\x1b[31mred\\x7f\\x85\\x9b31m \\ufffe end\\nsecond line')\n\n"
        "    def backward(self, dY):\n        return dY\n")
    with Sandbox(files=[str(tmp_path / "ctl.py")], timeout=5.0) as sb:
        layer = sb.load_layer("ctl.py", "Sigmoid", {})
        with pytest.raises(StudentCodeError) as err:
            layer.forward(np.ones((2, 3)))
    said = str(err.value)
    assert "ValueError: ctl \\x01  \\x1b[31mred\\x7f \\x9b31m \\ufffe end (at ctl.py:6" in said, said  # first line


def test_a_loss_gradient_missing_its_mean_is_named_as_check_names_it():
    """A missing /size in MSE's gradient was "21 times the correct gradient: a constant factor is wrong somewhere";
    check --loss says the mean's 1/(N*D) is missing; the grader now says it too."""
    from gradcheck.grading.checks import loss_gradient

    class NoDiv(_OneElementMSE):
        def forward(self, y_true, y_pred):
            self.d = y_pred - y_true
            return float(np.mean(self.d ** 2))

        def backward(self):
            return 2 * self.d

    import manualprop

    rng = np.random.default_rng(3)
    v = loss_gradient(NoDiv(), rng.standard_normal((7, 3)), rng.standard_normal((7, 3)), manualprop.MeanSquaredError())
    assert v.parts[0].message == ("dy_pred is 21 times too large: the mean's 1/(N*D) is missing: a mean over all "
                                  "N*D = 21 elements of y_pred divides by 21."), v.parts[0].message


def test_a_test_of_several_trials_names_each_tensor_once(tmp_path):
    """"All checked: `dX`, `dX` ok." for a test of two trials; each name once now."""
    import json

    root = Path(__file__).resolve().parents[1] / "assignments" / "linear_relu_ce"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text((root / "solution" / "layers.py").read_text())
    res = runner.grade_submission(tmp_path / "sub", root / "tests", tmp_path / "out", seed=1)
    assert res.status == "graded" and res.score == res.max_score
    rows = {t["name"]: t["output"] for t in json.loads((tmp_path / "out" / "results.json").read_text())["tests"]}
    named = [out.split("\n")[0].split("`")[1::2] for out in rows.values() if out.startswith("All checked")]
    assert named and all(len(set(n)) == len(n) for n in named), rows
    assert any(out == "All checked: `dX`, `dW`, `db` ok." for out in rows.values()), rows


class _Float32Grads:
    """A float64 Linear whose backward hands back float32 gradients (redteam25 M1)."""

    def __init__(self, W, b):
        self.params = {"W": W.copy(), "b": b.copy()}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]  # W (out, in), as manualprop's

    def backward(self, dY):
        self.grads = {"W": (dY.T @ self.X).astype(np.float32), "b": dY.sum(axis=0)}
        return (dY @ self.params["W"]).astype(np.float32)


def test_float32_gradients_fail_their_parts_as_check_fails_them():
    """redteam25 M1: grade gave full marks to float32 dx, dw, db (within its rtol) where check says FAIL: wrong dtype
    of dx, dw, db; now each float32 part fails with check's words, and a float64 part beside it keeps its points."""
    import manualprop
    from gradcheck.grading.checks import layer_gradients

    rng = np.random.default_rng(0)
    W, b, X = rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal((5, 4))
    ref = manualprop.Linear(4, 3)
    ref.params["W"][...], ref.params["b"][...] = W, b
    v = layer_gradients(_Float32Grads(W, b), X, ref)
    parts = {p.name: p for p in v.parts}
    assert not parts["dX"].passed and not parts["dW"].passed and parts["db"].passed, v.parts
    assert parts["dX"].message.startswith("dX has float32 precision, as gradcheck check says (FAIL: wrong dtype of "
                                          "dX): backward returns dX as float32 for a float64 input")
    # the documented way to accept float32 code (docs/gradescope.md): no central differences, a float32 tolerance
    v = layer_gradients(_Float32Grads(W, b), X, ref, numerical=False, rtol=1e-4)
    assert v.passed, v.parts
