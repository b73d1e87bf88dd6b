"""The time limit of one call in the numerical check of a grade (session 8, V7).

Before: a correct CS231n conv lost its points at load 8.5 on 2 CPUs: "`dx`: **wrong** - ...
conv.forward_many (256 forwards) did not finish within 3 s (wall clock) ... Is there an infinite
loop": the checker's own batch of 256 forwards had one call's limit. Now each forward of the batch
has it: a slow correct layer gets its points, a forward that loops is still stopped, and its parts
read "too slow", never "wrong".
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from gradcheck import sandbox
from gradcheck.grading.checks import layer_gradients
from gradcheck.sandbox import Sandbox, support
from manualprop import Linear

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py").read_text()
SLOW = SOLUTION + """

class SlowLinear(Linear):
    calls = 0

    def forward(self, X, training=False):
        import time
        SlowLinear.calls += 1
        time.sleep(0.02)  # 0.02 s per call: a loaded machine
        while SlowLinear.calls > LOOP_AFTER:
            pass
        return super().forward(X, training=training)
"""


def _grade(tmp_path, loop_after):
    (tmp_path / "layers.py").write_text(SLOW.replace("LOOP_AFTER", str(loop_after)))
    X = np.random.default_rng(1).standard_normal((4, 8))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=1.0, session_timeout=120) as sb:
        layer = sb.load_layer("layers.py", "SlowLinear", {"in_features": 8, "out_features": 8})
        return layer_gradients(layer, X, Linear(8, 8), seed=1)


def test_a_correct_layer_slower_than_the_limit_over_all_its_forwards_gets_its_points(tmp_path):
    verdict = _grade(tmp_path, 10**9)  # 64 weights: over 128 forwards, 2.5 s at least, each 0.02 s
    assert verdict.passed and verdict.fraction == 1.0, verdict.markdown()


def test_a_forward_that_loops_in_the_numerical_check_is_too_slow_not_wrong(tmp_path, monkeypatch):
    # 60 limits of allowance, not 10: a busy loop is stopped once it has had its limit in CPU time, which a loaded
    # or stalled machine may not give it within 10 limits (then SandboxStarved, not the timeout asserted)
    monkeypatch.setattr(sandbox, "STARVED_FACTOR", 60)
    # the first forward and backward pass and the batch-independence probe (12 forwards at a batch of 4: each sample
    # alone and moved by +-h, fixes45b); the loop begins midway through the numerical check
    verdict = _grade(tmp_path, 52)
    assert not verdict.passed and verdict.fraction == 0.0
    text = verdict.markdown()
    assert "**wrong**" not in text and text.count("**too slow**") == len(verdict.parts) == 3, text
    assert "a forward after the first" in text and "did not finish within 1 s (wall clock), the limit" in text


#: a hostile forward: inside the numerical check it writes the child's "forwards done" progress frames
#: itself, each claiming one more done, one every 0.45 s (within the limit of one call), and never returns
FORGER = SOLUTION + """

import json as _json, os as _os, struct as _struct, sys as _sys, time as _time


class Forger(Linear):
    def forward(self, X, training=False):
        f = _sys._getframe(1)
        while f is not None and f.f_code.co_name != "op_forward_many":
            f = f.f_back
        fd = _json.loads(_sys.argv[1])["fd_out"]
        rid = getattr(_sys.modules.get("__main__"), "REQUEST", [None])[0]  # the running request's id, echoed
        for done in range(1, 10**9 if f is not None else 1):
            head = _json.dumps({"rid": rid, "progress": "forwards", "done": done}).encode()
            _os.write(fd, b"GCSB" + _struct.pack(">IQ", len(head), 0) + head)
            _time.sleep(0.45)
        return super().forward(X, training=training)
"""
GRADING = """
import pytest
from manualprop import Linear


@pytest.mark.points(3)
def test_gradients(student, grade, rng):
    "Linear: gradients"
    layer = student.layer("layers.py", "Forger", in_features=2, out_features=2)
    grade.layer_gradients(layer, rng.standard_normal((2, 2)), Linear(2, 2))
"""


def test_forged_progress_frames_cannot_keep_the_numerical_check_alive(tmp_path):
    """Before: a forward that writes the child's progress frames itself reset the parent's deadline for
    ever and ran to the session limit (120 s here). The forged frames carry the running request's id, read
    from the child's memory (frames without it are refused at once since session 22: the id is no secret). Now the parent gives a batch of N forwards N times
    the limit of one call, counted from its request: the forger is stopped within that budget and its
    row says so (the plugin of ``gradcheck grade``'s child, with --timeout 0.5)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "layers.py").write_text(FORGER)
    (tmp_path / "test_forger.py").write_text(GRADING)
    (tmp_path / "p.ini").write_text("[pytest]\n")
    out, isolation = tmp_path / "results.json", "namespaces" if support()[0] != "none" else "none"
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "pytest", str(tmp_path / "test_forger.py"), "-c", str(tmp_path / "p.ini"),
                    "--rootdir", str(tmp_path), "-p", "gradcheck.grading.plugin", "-p", "no:cacheprovider", "-q",
                    "--grading-submission", str(tmp_path / "sub"), "--grading-results", str(out),
                    "--grading-timeout", "0.5", "--grading-isolation", isolation], cwd=tmp_path, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, timeout=900)
    seconds = time.monotonic() - t0
    (row,) = json.loads(out.read_text())["tests"]
    assert row["score"] == 0 and row["max_score"] == 3 and row["status"] == "failed"
    assert "**too slow**" in row["output"] and "**wrong**" not in row["output"], row["output"]
    n = int(re.search(r"Forger\\?\.forward_many \((\d+) forwards\)", row["output"])[1])  # (a dot escaped: fix37b)
    assert "did not finish within" in row["output"], row["output"]
    # stopped by the batch's budget (n calls' limits), not by the session limit (120 s before): read from which limit
    # the row names, not from the wall clock, which a loaded machine stretches (42 s against 40 once, session 15)
    assert f"({n} forwards)" in row["output"] and "the limit of one call" in row["output"], row["output"]
    assert "session limit" not in row["output"], (seconds, row["output"])
