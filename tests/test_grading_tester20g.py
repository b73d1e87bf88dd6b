"""tester20g's grader findings (session 20): H1 a MemoryError named by the sandbox's child made a permanent grader
error, H2 hidden tests' inputs reached a visible test's output, M2 staff mistakes charged to students, M3 two
tests sharing a gradebook column, M4/M5 archives and folders with very many members, M6 --out inside --tests,
M7 arrays beyond the probe's cap cost a correct layer its dX, and the LOW messages.
"""

import io
import json
import struct
import zipfile

import numpy as np
import pytest

from gradcheck.errors import GradcheckError, StudentCodeError, UsageError
from gradcheck.grading import archive, plugin, runner
from gradcheck.grading.checks import GradingTestError, layer_gradients
from gradcheck.grading.runner import grade_submission
from gradcheck.sandbox import Sandbox
from manualprop import Tanh
from tests.test_cli import run_here

#: Tanh twice: ``Hungry`` raises MemoryError only inside the grader's chunked forwards (a memory-hungry forward
#: whose copies do not fit: found, as tester20g did, by the child's frame names); ``Liar`` raises a class of its own
#: named "MemoryError" at every perturbed or stacked input (whatever the plan), after a correct forward and backward.
MEMORY_LAYERS = """import sys
import numpy as np

class _ME(Exception):
    pass
_ME.__name__ = _ME.__qualname__ = "MemoryError"
_FIRST = []

class Hungry:
    def __init__(self):
        self.params, self.grads = {}, {}
    def forward(self, X, training=False):
        f = sys._getframe(1)
        while f is not None:
            if "many" in f.f_code.co_name:
                raise MemoryError("the copies do not fit")
            f = f.f_back
        self.Y = np.tanh(X)
        return self.Y
    def backward(self, dY):
        return dY * (1 - self.Y ** 2)

class LongScale(Hungry):
    def __init__(self):
        self.params = {"s": np.ones(4, dtype=np.longdouble)}
        self.grads = {"s": np.zeros(4, dtype=np.longdouble)}

class Liar(Hungry):
    def forward(self, X, training=False):
        if not _FIRST:
            _FIRST.append(X.copy())
        if X.shape != _FIRST[0].shape or 0 < np.abs(X - _FIRST[0]).max() < 1e-3:
            raise _ME("fake")
        self.Y = np.tanh(X)
        return self.Y
"""


def test_a_memoryerror_the_child_names_is_retried_one_forward_at_a_time_then_the_submissions(tmp_path):
    """H1: the child's word "MemoryError" made a grader error (raise --memory-mb; every rerun the same). Now the
    check falls back to the element loop (one forward per call): a forward whose chunked copies did not fit passes
    there, and one that still raises is the submission's failure, as a RuntimeError would be."""
    (tmp_path / "hw.py").write_text(MEMORY_LAYERS)
    X = np.random.default_rng(0).standard_normal((3, 4))
    with Sandbox(files={"hw.py": str(tmp_path / "hw.py")}, timeout=60, memory_mb=1024) as sb:
        hungry = layer_gradients(sb.load_layer("hw.py", "Hungry"), X, Tanh(), seed=1)
        liar = layer_gradients(sb.load_layer("hw.py", "Liar"), X, Tanh(), seed=1)
        with pytest.raises(GradcheckError) as err:  # LOW: "must be a numpy float array ...; got float128"
            sb.load_layer("hw.py", "LongScale")
    assert "is float128 (numpy's longdouble), which gradcheck does not support" in str(err.value)
    assert "must be a numpy float array" not in str(err.value)
    assert hungry.passed and hungry.fraction == 1.0 and [p.name for p in hungry.parts] == ["dX"]
    (part,) = liar.parts
    assert not part.passed and liar.fraction == 0.0
    assert "the numerical check could not run" in part.message and "MemoryError" in part.message
    assert "--memory-mb" not in part.message


#: Linear records every input it is given; Tanh raises them back as its error (tester20g H2's leaker).
LEAKER = """import numpy as np
_SEEN = []

class Linear:
    def __init__(self, in_features, out_features):
        self.params = {"W": np.zeros((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {}
    def forward(self, X, training=False):
        _SEEN.append(X.ravel()[:3].tolist())
        self.X = X
        return X @ self.params["W"].T + self.params["b"]
    def backward(self, dY):
        self.grads["W"], self.grads["b"] = dY.T @ self.X, dY.sum(0)
        return dY @ self.params["W"]

class Tanh:
    def __init__(self):
        self.params, self.grads = {}, {}
    def forward(self, X, training=False):
        if _SEEN:
            raise RuntimeError("hidden test inputs: " + repr(_SEEN[:3]))
        self.Y = np.tanh(X)
        return self.Y
    def backward(self, dY):
        return dY * (1 - self.Y ** 2)
"""

_LEAK_TESTS = """import pytest
from manualprop import Linear, Tanh

@pytest.mark.visibility("hidden")
def test_linear(student, grade, rng):
    '''Hidden: Linear'''
    grade.layer_gradients(student.layer("hw.py", "Linear", in_features=3, out_features=2),
                          rng.standard_normal((4, 3)), Linear(3, 2), seed=3)

@pytest.mark.visibility("visible")
def test_tanh_forward(student, grade, rng):
    '''Tanh: forward'''
    grade.layer_forward(student.layer("hw.py", "Tanh"), rng.standard_normal((5, 4)), Tanh())

@pytest.mark.visibility("after_due_date")
def test_tanh_later(student, grade, rng):
    '''Later: Tanh'''
    grade.layer_forward(student.layer("hw.py", "Tanh"), rng.standard_normal((5, 4)), Tanh())

@pytest.mark.visibility("visible")
def test_tanh_grad(student, grade, rng):
    '''Tanh: dX'''
    grade.layer_gradients(student.layer("hw.py", "Tanh"), rng.standard_normal((5, 4)), Tanh(), seed=1)
"""


def test_hidden_tests_run_after_the_visible_ones_each_in_a_sandbox_process_of_its_own(tmp_path):
    """H2: one sandbox process served every test, so a hidden test placed first let the submission keep its
    inputs in a module global and print them in a visible test's error. Now the hidden tests run last, each in a
    fresh process (a hidden test's inputs do not reach an after_due_date test either); the results keep the file's
    order."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "hw.py").write_text(LEAKER)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_hw.py").write_text(_LEAK_TESTS)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out")
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    tests = data["tests"]
    assert [t["name"] for t in tests] == ["Hidden: Linear", "Tanh: forward", "Later: Tanh", "Tanh: dX"]
    assert r.status == "graded" and [t["score"] for t in tests] == [1.0] * 4, tests
    assert not any("hidden test inputs" in t["output"] for t in tests)
    assert data["extra_data"]["sandbox_starts"] == 1 and data["extra_data"]["hidden_sandbox_starts"] == 2
    # LOW: execution_time in whole seconds, as Gradescope's specification shows it; the exact time beside it
    assert type(data["execution_time"]) is int and data["execution_time"] >= data["extra_data"]["seconds"] > 0


class _BroadcastRef(Tanh):
    """A reference of the wrong width: its forward raises numpy's broadcast error."""

    def forward(self, X, training=False):
        return np.tanh(X) + np.zeros(X.shape[1] + 1)


def test_the_tests_own_mistakes_are_grading_test_errors_naming_them():
    """M2: parts naming a tensor the reference lacks and a reference that raises were "The check stopped with
    ValueError": 0 for the student, status graded. Now a GradingTestError (the part's names), or a reference frame
    that the plugin turns into one (where the reference raised); an error in the test function itself is not."""
    X = np.random.default_rng(0).standard_normal((3, 4))
    with pytest.raises(GradingTestError, match=r"parts \['dW'\] are not tensors of the reference; it has \['dX'\]"):
        layer_gradients(Tanh(), X, Tanh(), parts={"dW": 1})
    with pytest.raises(ValueError) as err:
        layer_gradients(Tanh(), X, _BroadcastRef())
    where = plugin._reference_frame(err.value)
    assert where.startswith("the reference: test_grading_tester20g.py, line ") and where.endswith(", in forward")
    with pytest.raises(IndexError) as err:
        np.zeros(2)[np.array([5])]  # the test's own code reading an array: not the reference
    assert plugin._reference_frame(err.value) == ""


class _Item:
    """What the plugin reads of a pytest item: a node id, a test function (its docstring), markers, the module."""

    def __init__(self, nodeid, doc="", module=None):
        self.nodeid, self.name, self.path = nodeid, nodeid.split("::")[-1], "/t/test_x.py"
        self.function, self.module = type("F", (), {"__doc__": doc}), module

    def get_closest_marker(self, name):
        return None


def test_a_fixture_typo_a_constructor_keyword_typo_and_two_tests_of_one_name_are_the_tests():
    """M2: a misspelt fixture (FixtureLookupError), a keyword the reference's class does not take either ("--init
    key 'dim'", a flag the student never used) were charged to the student; M3: two tests of one name shared a
    gradebook column. The fixture's and the keyword's are GradingTestErrors naming the test; a keyword only the
    student's constructor refuses is the student's, without "--init"; two names are refused at collection."""
    missing = pytest.FixtureLookupError.__new__(pytest.FixtureLookupError)
    missing.argname = "studnet"
    call = type("C", (), {"excinfo": type("E", (), {"value": missing})})
    assert plugin._tests_own_error(_Item("test_x.py::test_a"), call) == \
        "test_x.py: test_a asks for a fixture that does not exist"
    assert "no fixture named 'studnet'" in plugin._exc_text(call.excinfo.value)

    class Scale:  # the test module's reference, imported under any name
        def __init__(self, d):
            self.d = d
    item = _Item("test_x.py::test_a", module=type("M", (), {"RefScale": Scale}))
    text = "hw.py::Scale: --init key 'dim' is not an argument of Scale(d); it accepts: d."
    err = plugin._init_refused(item, "hw.py", "Scale", {"dim": 4}, text)
    assert isinstance(err, GradingTestError) and "the test builds Scale(dim=4) from hw.py" in str(err)
    text = "hw.py::Scale: --init key 'd' is not an argument of Scale(dim); it accepts: dim."
    err = plugin._init_refused(item, "hw.py", "Scale", {"d": 4}, text)
    assert isinstance(err, StudentCodeError) and "--init" not in str(err)
    assert str(err) == ("The grading test builds `Scale(d=4)` from `hw.py`, and your constructor cannot take that: "
                        "the keyword 'd' is not an argument of Scale(dim); it accepts: dim. Use the constructor "
                        "arguments the assignment gives.")
    with pytest.raises(pytest.UsageError, match=r"test_x.py::test_a and test_x.py::test_b: two grading tests "
                                                r"named 'Tanh'"):
        plugin._one_name_each([_Item("test_x.py::test_a", "Tanh"), _Item("test_x.py::test_b", "Tanh\n\nmore")])


def test_single_mode_refuses_a_bad_marker_with_exit_2_as_a_batch_does(tmp_path):
    """M2: ``--single`` graded with ``visibility("hiden")`` and said "grader error ... pytest exit code 4", exit 1;
    a batch refused it up front, exit 2. Now both exit 2 quoting pytest's line."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "hw.py").write_text(MEMORY_LAYERS)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_hw.py").write_text(_LEAK_TESTS.replace('visibility("visible")', 'visibility("hiden")'))
    r = run_here("grade", tmp_path / "sub", "--single", "--tests", tmp_path / "tests", "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert "visibility must be one of" in r.stderr and "got ('hiden',)" in r.stderr


def _zip64(members: int) -> bytes:
    """A zip of one member whose end records (zip64's, and the classic one saying 0xFFFF) declare ``members``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("hw.py", "x = 1\n")
    data = buf.getvalue()
    cd_size, cd_offset = struct.unpack_from("<LL", data, len(data) - 22 + 12)
    body = data[:len(data) - 22]
    eocd64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, members, members, cd_size, cd_offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, len(body), 1)
    return body + eocd64 + locator + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, cd_size,
                                                 cd_offset, 0)


@pytest.mark.parametrize("kind", ["classic", "zip64"])
def test_a_zip_of_too_many_members_is_refused_from_its_end_record_before_it_is_opened(tmp_path, monkeypatch, kind):
    """M4: 600,001 members took 21 s and 370 MB to be refused (zipfile read every entry first). The count is
    now read from the end-of-central-directory record (zip64's too) before zipfile opens the archive."""
    path = tmp_path / "many.zip"
    if kind == "classic":
        with zipfile.ZipFile(path, "w") as zf:
            for i in range(archive.MAX_MEMBERS + 1):
                zf.writestr(f"f{i}", "")
    else:
        path.write_bytes(_zip64(600_001))

    def never(*a, **k):
        raise AssertionError("zipfile opened the archive")
    monkeypatch.setattr(archive.zipfile, "ZipFile", never)
    with pytest.raises(archive.ArchiveRefused, match=f"it holds {archive.MAX_MEMBERS + 1 if kind == 'classic' else 600001}"
                                                     f" members, more than {archive.MAX_MEMBERS}"):
        archive.unpack(path, tmp_path / "out")


def test_a_folder_of_too_many_files_is_refused_after_reading_the_cap_of_entries(tmp_path, monkeypatch):
    """M5: 200,000 empty files beside hw.py took 49.5 s to grade and 31 s per rerun to be skipped (every file
    walked, hashed). A folder of more entries than a zip may hold is refused, its digest that of the reason, read
    lazily up to the cap: a rerun's skip does not walk the folder again."""
    monkeypatch.setattr(runner, "MAX_MEMBERS", 20)  # the zip's cap, 2000: a smaller one, as many files as it
    sub = tmp_path / "manyfiles"
    (sub / "d").mkdir(parents=True)
    (sub / "hw.py").write_text("x = 1\n")
    for i in range(18):
        (sub / "d" / f"f{i}.txt").touch()
    assert runner.not_a_submission(sub) is None  # 20 entries: the folder d, its 18 files and hw.py
    (sub / "d" / "f18.txt").touch()
    why = runner.not_a_submission(sub)
    assert why is not None and "it holds more than 20 files and folders" in why

    def never(*a, **k):
        raise AssertionError("walked")
    monkeypatch.setattr(runner.os, "walk", never)
    assert runner.submission_digest(sub) == runner.submission_digest(sub)


def test_out_inside_the_tests_folder_is_refused_as_inside_the_submission_is(tmp_path):
    """M6: ``--out course/tests/graded`` was accepted; the results changed the tests' digest, so every rerun said
    "the grading tests changed" and graded everyone again. Refused up front now (exit 2), a link into it too."""
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    (tmp_path / "subs" / "alice" / "hw.py").write_text(MEMORY_LAYERS)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_hw.py").write_text(_LEAK_TESTS)
    (tmp_path / "link").symlink_to(tmp_path / "tests")
    for out in (tmp_path / "tests" / "graded", tmp_path / "link" / "graded"):
        with pytest.raises(UsageError, match="--out must not be inside --tests"):
            runner.check_grading_inputs(tmp_path / "subs", tmp_path / "tests", out, batch=True, isolation_here=False)
    assert sorted(p.name for p in (tmp_path / "tests").iterdir()) == ["test_hw.py"]


class _ManyArrays:
    """A correct Tanh with 600 array attributes (more than the probe examined one at a time); with ``read``, forward
    also adds ``self.a{read}`` (no gradient)."""

    def __init__(self, read=None):
        self.params, self.grads, self.read = {}, {}, read
        for i in range(600):
            setattr(self, f"a{i}", np.ones(1))

    def forward(self, X, training=False):
        self.Y = np.tanh(X) + (0.0 if self.read is None else getattr(self, f"a{self.read}"))
        return self.Y

    def backward(self, dY):
        return dY * (1 - (self.Y - (0.0 if self.read is None else getattr(self, f"a{self.read}"))) ** 2)


def test_arrays_beyond_the_probe_bound_are_tested_in_groups_and_named_briefly():
    """M7: a correct Tanh with more than 512 unused arrays lost its dX points (the arrays beyond the probe's bound
    were taken as read: NOT CHECKED), and the message listed 88 names with ",," doubled. Now they are tested in
    groups: none is read (nothing undecided), and one that forward reads is still found; the list is capped."""
    from gradcheck._adapters import adapt, missing_gradients, undecided_text

    X = [np.random.default_rng(0).standard_normal((3, 4))]
    assert missing_gradients(adapt(_ManyArrays(), X)[1]) == []
    assert missing_gradients(adapt(_ManyArrays(read=590), X)[1]) == ["a590"]
    text = undecided_text([f"a{i}" for i in range(20)], [f"a{i}" for i in range(20)], grading=True)
    assert ",," not in text and "whether a0, a1, a2, a3, a4, a5, a6, a7, ... and 12 more are weights" in text
    assert "then set grads['a0'], grads['a1']," in text and ", ... and 12 more, with them in params)" in text


class _ZeroLinear:
    """A Linear (attribute style, W stored (in, out)) whose constructor leaves W and b at zero."""

    def __init__(self):
        self.W, self.b = np.zeros((3, 2)), np.zeros(2)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        return dY @ self.W.T


class _NoBias(_ZeroLinear):
    """A forward that forgets ``+ b``."""

    def forward(self, X):
        self.X = X
        return X @ self.W


def test_zero_weights_are_named_as_such_and_a_forward_without_b_as_one_that_ignores_b():
    """LOW: W initialised to zeros was diagnosed as "a mask that drops every entry"; now the weights are named as
    all zero (initialise them). A forward that forgets ``+ b`` was asked "Is the layer deterministic?"; now the
    grader says forward does not depend on b."""
    from gradcheck._adapters import adapt
    from gradcheck.diagnose import diagnose_layer
    from gradcheck.grading.checks import _ignored

    X = np.random.default_rng(0).standard_normal((4, 3))
    diag = diagnose_layer(adapt(_ZeroLinear(), [X])[0], X, drawn=False)  # as check reads the layer, at its zeros
    codes = [f.code for f in diag.findings]
    assert "zero-weights" in codes and "all-dropped" not in codes, codes
    text = next(f.message for f in diag.findings if f.code == "zero-weights")
    assert "the weights W, b are all zero" in text and "initialise the weights" in text
    drawn = diagnose_layer(adapt(_ZeroLinear(), [X])[0], X)  # tester26s M6: then checked at drawn values alone
    assert drawn.passed and drawn.drawn == ["W", "b"] and drawn.drawn_only, drawn.codes
    res = type("R", (), {"gradients": {"numerical": {"db": np.zeros(2), "dW": np.ones((3, 2))}}})
    assert _ignored(res, "db").startswith("The central differences of every entry of b are 0: your forward does "
                                          "not depend on b")
    assert _ignored(res, "dW") == ""


def test_grade_reads_a_weight_stored_in_out_as_check_does_and_says_so():
    """M1: an attribute-style Linear with W stored (in, out) got 0/4 ("Linear.W has shape (3, 2); the assignment
    expects (2, 3)") while gradcheck check passed it. The reference's point is set transposed, dW compared transposed
    back, and the verdict says which layout it used; a forward that forgets + b still fails db."""
    from gradcheck._adapters import adapt
    from gradcheck.grading.checks import layer_forward
    from manualprop import Linear

    X = np.random.default_rng(0).standard_normal((4, 3))
    verdict = layer_gradients(adapt(_ZeroLinear(), [X])[0], X, Linear(3, 2), seed=1)
    assert verdict.passed and [p.name for p in verdict.parts] == ["dX", "dW", "db"], verdict.markdown()
    assert verdict.notes == ["_ZeroLinear.W is stored (in, out), the reference's (out, in) transposed: the grader set "
                             "it to the reference's point transposed and compared dW transposed back, as gradcheck "
                             "check reads either layout."]
    assert layer_forward(adapt(_ZeroLinear(), [X])[0], X, Linear(3, 2), seed=1).passed
    wrong = layer_gradients(adapt(_NoBias(), [X])[0], X, Linear(3, 2), seed=1)
    assert [p.name for p in wrong.parts if not p.passed] == ["db"]  # by central differences (the reference's db
    assert "your forward does not depend on b" in wrong.parts[2].message  # is dY summed, as this backward's)


SQUARE = """
import numpy as np


class SquareInOut:
    \"\"\"An attribute-style Linear with a square W stored (in, out): Y = X @ W + b (session 21).\"\"\"

    def __init__(self, n=3):
        rng = np.random.default_rng(4)
        self.W, self.b = rng.standard_normal((n, n)), np.zeros(n)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        return dY @ self.W.T


class SquareOutIn(SquareInOut):
    \"\"\"The same, W stored (out, in) as the reference's: Y = X @ W.T + b.\"\"\"

    def forward(self, X):
        self.X = X
        return X @ self.W.T + self.b

    def backward(self, dY):
        self.dW, self.db = dY.T @ self.X, dY.sum(0)
        return dY @ self.W


class SquareInOutDxNoT(SquareInOut):
    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        return dY @ self.W  # BUG: W.T due
"""


@pytest.mark.parametrize("where", ["in process", "sandbox"])
def test_a_square_weight_stored_transposed_is_told_by_forward(tmp_path, where):
    """Session 21 (session 20's leftover): a square W stored (in, out) in attribute style was set as stored, so the
    grader evaluated the reference (out, in) at the transpose of the student's point: the correct layer got 0 for the
    forward and dW (and dX). Its layout is now told by forward on each side (gradcheck._adapters._layout, as the seed
    protocol's; a sandboxed layer's forward in its child): a correct square Linear gets full credit in each layout, a
    wrong dX does not."""
    from gradcheck._adapters import adapt
    from gradcheck.grading.checks import layer_forward
    from gradcheck.sandbox import Sandbox
    from manualprop import Linear

    X = np.random.default_rng(0).standard_normal((4, 3))
    (tmp_path / "square.py").write_text(SQUARE)
    ns: dict = {}
    exec(compile(SQUARE, "square.py", "exec"), ns)  # noqa: S102 - the test's own classes
    with Sandbox(files={"square.py": str(tmp_path / "square.py")}, timeout=20) as sb:
        def build(name):
            return sb.load_layer("square.py", name) if where == "sandbox" else \
                adapt(ns[name](), [X])[0]

        for name in ("SquareInOut", "SquareOutIn"):
            verdict = layer_gradients(build(name), X, Linear(3, 3), seed=1)
            assert verdict.passed and [p.name for p in verdict.parts] == ["dX", "dW", "db"], verdict.markdown()
            assert layer_forward(build(name), X, Linear(3, 3), seed=1).passed
            said = [n for n in verdict.notes if "stored (in, out) (told by forward: square" in n]
            assert len(said) == (name == "SquareInOut"), verdict.notes
        wrong = layer_gradients(build("SquareInOutDxNoT"), X, Linear(3, 3), seed=1)
        assert [p.name for p in wrong.parts if not p.passed] == ["dX"], wrong.markdown()
