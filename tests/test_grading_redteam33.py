"""redteam33's findings on the grader's staff policy ``gradcheck_no_forward_in_backward`` and its adapters.

S2, S4: the submission's code ran while no profiler counted it: between two requests (the child waiting for the next
one) a timer's signal handler, or the finalizer of cyclic garbage collected once the submission's ``sys.stdout`` had
switched the collector back on, took central differences of forward; backward applied them (24-27/28). Now the
child counts between requests too (the time it waits is a window of its own, said by the next counted reply), and
from one profiler to the next no submitted code can run: every signal is blocked and the collector off (the handlers
due run under the next profiler).

C1: a constructor calling its own forward once (a Keras-style shape check) was counted as a forward of the probe
(16/28 for a correct submission); now one call per object is the constructor's to make, more are counted and said.

G1: an adapter's refusal after the submission's code ran (its forward turned ``W`` into a list, so the grader could
not set its weights) was a grader error, graded again forever; now the submission's failure.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gradcheck import _sandbox_child as child
from gradcheck import sandbox
from gradcheck.sandbox import SandboxError
from tests.test_grading_policy import INIT, SOLUTION, _sandbox, graded
from tests.test_grading_redteam32 import JACOBIAN, N

_PRELUDE = SOLUTION.split("class Linear", 1)[0] + JACOBIAN + '''
import signal
import sys

_JOBS = []


def _idle():
    """Whether the child is waiting for its next request (a frame of its request reader on the stack)."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "read_frame":
            return True
        f = f.f_back
    return False


def _run_jobs():
    while _JOBS and not _BUSY[0]:
        try:  # the timer's next signal may come between the test above and this pop: its handler took the last job
            job = _JOBS.pop()
        except IndexError:
            return
        job()
'''

_LINEAR = '''

class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = np.array(X, dtype=float)
        if not _BUSY[0]:
            X0 = self.X.copy()
            _JOBS.append(lambda: _differentiate(self, X0))
            ARM
        return self.X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        jac = _JAC.get(_key(self.X, self.params))
        if jac is None:
            raise RuntimeError("no Jacobian stored")
        g = np.asarray(dY, dtype=float).reshape(-1)
        self.grads = {n: (g @ jac[n]).reshape(self.params[n].shape) for n in ("W", "b")}
        return (g @ jac["X"]).reshape(self.X.shape)
'''

#: S2's kind: a timer's handler that differentiates whenever it interrupts the child waiting for a request
IDLE_SIGNAL = _PRELUDE + '''

def _tick(signum, frame):
    if _idle():
        _run_jobs()
''' + _LINEAR.replace("ARM", "signal.signal(signal.SIGALRM, _tick)\n"
                             "            signal.setitimer(signal.ITIMER_REAL, 0.005, 0.005)")

#: redteam33's cases/fd_signal, shortened: the handler differentiates only where no profiler is installed
UNPROFILED_SIGNAL = IDLE_SIGNAL.replace("    if _idle():\n", "    if sys.getprofile() is None:\n")

#: redteam33's cases/fd_gc, shortened: the submission's stdout switches the collector on while the reply is sent and
#: leaves a cycle whose finalizer differentiates where no profiler is installed (else it leaves another cycle)
UNPROFILED_GC = _PRELUDE + '''
import gc


class _Cycle:
    def __init__(self):
        self.me = self

    def __del__(self):
        if sys.getprofile() is None:
            _run_jobs()
        if _JOBS:
            _Cycle()


class _Out:
    def __init__(self, inner):
        self.inner = inner

    def write(self, s):
        return self.inner.write(s)

    def flush(self):
        if _JOBS:
            gc.enable()
            gc.set_threshold(1, 1, 1)
            _Cycle()
        return self.inner.flush()

    def __getattr__(self, name):
        return getattr(self.inner, name)


sys.stdout = _Out(sys.stdout)
''' + _LINEAR.replace("ARM", "pass")


def _forward_then_backward_after_a_wait(tmp_path, source):
    """Load ``source``'s Linear under the policy, forward, leave the child idle a while (its timer's time to fire),
    then backward: the SandboxError raised, or None when backward answered."""
    rng = np.random.default_rng(0)
    X, dY, probe = rng.standard_normal((4, 5)), rng.standard_normal((4, 3)), rng.standard_normal((4, 5)) + 3
    with _sandbox(tmp_path, source) as sb:  # (probed, as the grader loads: the policy is on from the load)
        layer = sb.load_layer("layers.py", "Linear", INIT, probe_inputs=[probe], no_forward_in_backward=True)
        try:
            layer.forward(X)
            time.sleep(0.5)  # the child waits for the next request: where the handler differentiates
            layer.backward(dY)
        except SandboxError as exc:
            return exc
        return None


def test_s2_differences_taken_while_the_child_waits_for_a_request_are_counted(tmp_path):
    """S2: the timer's handler took the 2N forwards while the child waited for backward's request, where nothing
    counted (backward then applied them and passed); now that wait is counted and backward's reply says so."""
    exc = _forward_then_backward_after_a_wait(tmp_path, IDLE_SIGNAL)
    assert exc is not None, "backward answered: the differences taken between requests were not counted"
    text = " ".join(str(exc).split())
    assert exc.reason == "policy", text
    said = re.search(r"Linear\.forward was called (\d+) time\(s\) between the grader's requests", text)
    assert said and int(said[1]) >= N and int(said[1]) % N == 0, text
    assert "Linear.backward called" not in text, text  # backward itself called nothing


@pytest.mark.parametrize("source", [UNPROFILED_SIGNAL, UNPROFILED_GC], ids=["signal", "stdout-gc"])
def test_s2_s4_no_submitted_code_runs_where_no_profiler_counts(tmp_path, source):
    """S2, S4 as redteam33 wrote them: the differences are taken only where ``sys.getprofile()`` is None (a timer's
    handler; a cycle's finalizer collected once the submission's stdout switched the collector on while the reply
    was sent). Under the policy there is no such place any more: the Jacobian is never made (or, made, counted)."""
    exc = _forward_then_backward_after_a_wait(tmp_path, source)
    assert exc is not None, "backward applied differences taken where nothing counted"
    text = " ".join(str(exc).split())
    assert exc.reason == "policy" or "no Jacobian stored" in text, text


def test_s2_s4_without_the_policy_nothing_changes(tmp_path):
    """Without the policy the child installs no profiler: the same handler differentiates while the child waits,
    and backward answers the right numbers (nothing refused: the count is the policy's alone)."""
    rng = np.random.default_rng(0)
    X, dY = rng.standard_normal((4, 5)), rng.standard_normal((4, 3))
    with _sandbox(tmp_path, UNPROFILED_SIGNAL) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT)
        W = layer.params["W"]
        layer.forward(X)
        time.sleep(0.5)
        np.testing.assert_allclose(layer.backward(dY), dY @ W, rtol=1e-6, atol=1e-6)


#: the seam, in a process of its own with one thread, as the sandbox child (its seccomp filter refuses threads, its
#: BLAS runs one): a signal's mask is a thread's, a BLAS thread would take the signal, and pytest's workers may run
#: a test outside the main thread
SEAM = '''
import gc, os, signal, sys
from gradcheck import _sandbox_child as child
from gradcheck import sandbox
seen = []
signal.signal(signal.SIGUSR1, lambda *a: seen.append(sys.getprofile() is not None))
ch = child.Child.__new__(child.Child)
ch.known_codes = set()
n = ch.window(gc.enable)
print("count", n, "collector on after the window", gc.isenabled())
os.kill(os.getpid(), signal.SIGUSR1)
for _ in range(100):  # (a handler due runs at the next bytecodes: give it many)
    sum(range(100))
print("handler runs before the next window", seen)
ch.window(sum, range(10))
print("handler runs in the next window", seen)
'''


def test_between_two_windows_no_handler_runs_and_the_collector_stays_off():
    """The seam itself (``Child.window``): code run in a window switches the collector on; after the window it is
    off; a signal that comes after it waits, and its handler runs only under the next window's profiler (before: it
    ran at once, with no profiler, and the collector stayed on)."""
    env = {**os.environ, "PYTHONPATH": str(Path(child.__file__).resolve().parents[1]),  # one thread, as the child:
           **dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1")}  # (its BLAS's)
    out = subprocess.run([sys.executable, "-c", SEAM], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["count 0 collector on after the window False",
                                       "handler runs before the next window []",
                                       "handler runs in the next window [True]"], out.stdout


#: redteam33's cases/ctor_forward: the solution whose constructor checks its shapes with one forward (Keras-style)
CTOR_FORWARD = SOLUTION.replace('''        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}
''', '''        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}
        assert self.forward(np.zeros((1, in_features))).shape == (1, out_features)
''', 1)

#: a constructor that takes central differences of forward at a made-up input (2 forwards for each of X's 5 entries)
CTOR_DIFFERENCES = CTOR_FORWARD.replace(
    "        assert self.forward(np.zeros((1, in_features))).shape == (1, out_features)\n",
    "        for i in range(in_features):\n"
    "            e = np.zeros((1, in_features))\n"
    "            e[0, i] = 1e-6\n"
    "            self.J = (self.forward(e) - self.forward(-e)) / 2e-6\n", 1)


def test_c1_a_constructor_calling_forward_once_keeps_the_solutions_points(tmp_path):
    """C1: the marked test's load counted the constructor's one forward as the probe's (0 of 4, "called on the probe
    input"); one call per object is the constructor's. The solution's 7 points stay."""
    assert CTOR_FORWARD != SOLUTION
    r, data = graded(tmp_path, CTOR_FORWARD)
    assert r.score == pytest.approx(7.0), data


def test_c1_a_constructor_differentiating_forward_is_counted_and_named(tmp_path):
    """A constructor that calls forward more than once per object (differences at an input of its own) is counted,
    and the message says it was the constructor, not the probe."""
    assert CTOR_DIFFERENCES.count("self.forward(") == 2
    with _sandbox(tmp_path, CTOR_DIFFERENCES) as sb:
        with pytest.raises(SandboxError) as info:
            sb.load_layer("layers.py", "Linear", INIT, probe_inputs=[np.ones((4, 5))], no_forward_in_backward=True)
    text = " ".join(str(info.value).split())
    assert info.value.reason == "policy", text
    assert "Linear's constructor called Linear.forward 9 time(s) more than once" in text, text  # 10 calls
    assert "on the probe input" not in text, text


#: the seed protocol (W, b attributes; backward returns dX only: the grader sets the weights itself), whose
#: ``sys.stdout`` turns W into a list when it is flushed as the child sends the load's reply: after that reply read W
#: as an array (redteam33's cases/ge_weights did it from a timer's handler once the child was idle)
LISTIFIED = SOLUTION.split("class Linear", 1)[0] + '''
import sys

_LIVE = []


class _Out:
    def __init__(self, inner):
        self.inner = inner

    def write(self, s):
        return self.inner.write(s)

    def flush(self):
        f = sys._getframe(1)
        while f is not None and f.f_code.co_name != "reply_loaded":  # the load's reply (not a progress note)
            f = f.f_back
        for o in _LIVE if f is not None else ():
            o.W = np.asarray(o.W).tolist()
        return self.inner.flush()

    def __getattr__(self, name):
        return getattr(self.inner, name)


sys.stdout = _Out(sys.stdout)


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.W, self.b = rng.standard_normal((out_features, in_features)), np.zeros(out_features)
        _LIVE.append(self)

    def forward(self, X, training=False):
        self.X = X
        return X @ np.asarray(self.W, dtype=float).T + self.b

    def backward(self, dY):
        return dY @ np.asarray(self.W, dtype=float)


''' + "class ReLU" + SOLUTION.split("class ReLU", 1)[1]


#: a Linear forward test (the assignment's ``test_linear_forward``: the grader sets a dX-only layer's weights itself)
#: beside a ReLU one the submission answers right
FORWARD_TESTS = '''
import pytest
from manualprop import Linear as RefLinear, ReLU as RefReLU

@pytest.mark.points(2)
def test_linear_forward(student, grade, rng):
    grade.layer_forward(student.layer("layers.py", "Linear", in_features=5, out_features=3),
                        rng.standard_normal((8, 5)), RefLinear(5, 3), points=2)

@pytest.mark.points(1)
def test_relu_forward(student, grade, rng):
    grade.layer_forward(student.layer("layers.py", "ReLU"), rng.standard_normal((6, 4)) + 0.5, RefReLU())
'''


def test_g1_an_adapter_refusal_after_the_submissions_code_ran_is_the_submissions(tmp_path):
    """G1: setting the grader's weights failed on a W the submission had made a list; that was a grader error (score
    0, "not final", graded again at every resume); now the Linear test fails as the submission's, the rest graded."""
    r, data = graded(tmp_path, LISTIFIED, tests=FORWARD_TESTS)
    assert r.status == "graded", (r.status, r.message)
    got = {t["name"]: (t["score"], " ".join(t["output"].split())) for t in data["tests"]}
    assert got["test_relu_forward"][0] == 1.0, got
    score, text = got["test_linear_forward"]
    assert score == 0.0, got
    assert "gradcheck could not do this on the submission's object" in text, got
    assert "gradcheck's failure" not in text, got
    assert r.score == pytest.approx(1.0), got


#: redteam33's cases/idle_burn, shortened: a timer's handler that burns CPU while the child waits for a request
IDLE_BURN = SOLUTION + '''
import signal
import sys


_BURNING = [False]


def _burn(signum, frame):
    f = frame
    while f is not None and f.f_code.co_name != "read_frame":
        f = f.f_back
    if f is not None and not _BURNING[0]:
        _BURNING[0] = True
        sum(i * i for i in range(200000))
        _BURNING[0] = False


_forward = Linear.forward


def _armed(self, X, training=False):
    signal.signal(signal.SIGALRM, _burn)
    signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
    return _forward(self, X, training)


Linear.forward = _armed
'''


def test_t1_cpu_burnt_between_requests_is_charged_to_the_session(tmp_path):
    """T1: CPU time the child used while it waited for a request was charged to no call, session or
    ``--submission-timeout``; now the next request charges it (beyond IDLE_CPU_SLACK) to the session's clock and
    to the submission's seconds. Waits for the child to burn 0.5 s of CPU (however loaded the machine), then
    compares the charge with what the child burnt, not with a clock."""
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, IDLE_BURN) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT)
        layer.forward(X)
        cpu0, charged0 = sandbox._tree_cpu(sb._proc.pid)[0], sandbox.requests_seconds()
        for _ in range(600):
            if sandbox._tree_cpu(sb._proc.pid)[0] - cpu0 >= 0.5:
                break
            time.sleep(0.05)
        burnt = sandbox._tree_cpu(sb._proc.pid)[0] - cpu0
        assert burnt >= 0.5, burnt
        layer.forward(X)
        charged = sandbox.requests_seconds() - charged0
        assert charged >= burnt - 0.1 - 0.02, (charged, burnt)  # (the literal: IDLE_CPU_SLACK 0.1, pinned: review36)


#: forward a callable object whose class's ``__dict__`` is a property: the count's own reading of forward's codes
#: (``object.__getattribute__(f, "__dict__")``) ran it after the profiler was removed, with the last X known; there it
#: took the differences (only there: when ``_count_calls`` reads it), and backward applied them
DICT_PROPERTY = _PRELUDE + '''

class _Forward:
    def __init__(self, lay):
        self.lay = lay

    @property
    def __dict__(self):
        f = sys._getframe(1)
        while f is not None and f.f_code.co_name != "_count_calls":
            f = f.f_back
        if f is not None:
            _run_jobs()
        return {}

    def __call__(self, X, training=False):
        lay = object.__getattribute__(self, "lay")
        lay.X = np.array(X, dtype=float)
        if not _BUSY[0]:
            X0 = lay.X.copy()
            _JOBS.append(lambda: _differentiate(lay, X0))
        return lay.X @ lay.params["W"].T + lay.params["b"]
''' + _LINEAR.replace("    def forward(self, X, training=False):", "    def _unused(self, X, training=False):").replace(
    "        self.grads = {}\n", "        self.grads = {}\n        self.forward = _Forward(self)\n", 1).replace("ARM", "pass")


def test_no_submitted_code_runs_while_the_count_reads_forwards_codes(tmp_path):
    """The count read forward's codes (its ``__dict__``) after its profiler was removed: a ``__dict__`` property ran
    there uncounted, with the input of the forward just made. Now those codes are read under the request's profiler
    before the count starts, and whatever runs there is counted: the forward fails the policy."""
    rng = np.random.default_rng(0)
    X, dY = rng.standard_normal((4, 5)), rng.standard_normal((4, 3))
    with _sandbox(tmp_path, DICT_PROPERTY) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT, no_forward_in_backward=True)
        with pytest.raises(SandboxError) as info:
            layer.forward(X)
            layer.backward(dY)
    text = " ".join(str(info.value).split())
    assert info.value.reason == "policy", text
