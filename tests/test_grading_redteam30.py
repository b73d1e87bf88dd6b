"""redteam30's findings on the grader and ``gradcheck check --isolation namespaces``.

H1: the staff policy ``gradcheck_no_forward_in_backward`` counted the calls of forward made during backward only, so
central differences taken inside forward (forward re-enters itself with a flag, stores the Jacobian; backward applies
it) scored 28/28. Now one forward request enters forward once: each further call of forward's code made while it runs
fails the policy, in the backward case's words; a container calling its children's forward, a helper function and a
subclass calling its base's forward once stay legitimate. The load's probe, on the input then graded, is counted too
(forward re-entered while it runs), so differences taken there cannot be found again by the graded forward.

S1: a submission that slept and spun only when the grader read ``/proc`` was "runnable and short of its CPU time" at
each reading, so it was given the limit again and again and then reported "too busy" (a grader error on demand). Now a
call is owed only the time its process waited on a run queue for a CPU (``schedstat``); time asleep is its own.

S2: one valid line of 1,500 ``not``s in any submitted file crashed the import scan with RecursionError (pytest
INTERNALERROR in ``grade``, a traceback in ``check``). ``not`` chains are read in a loop now, and every walk of the
submission's trees that still recurses treats a file too deep for it as unchecked, as a file it cannot parse.

L1: a loss's ``gradient_name`` attribute reached results.json's Markdown unescaped; its errors now name the gradient
as the check does (``d`` + an identifier, else ``dy_pred``).
"""

import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from gradcheck import _float64_copy, _import_scan, _log_eps, check_layer, sandbox
from gradcheck.errors import GradientShapeError
from gradcheck.grading import runner, static
from gradcheck.grading.runner import grade_submission
from gradcheck.sandbox import Sandbox, SandboxError, SandboxStarved
from tests.test_check_redteam27 import _check, _namespaces
from tests.test_grading_keys_s35 import shown
from tests.test_grading_policy import INIT, SOLUTION, _sandbox, graded

ROOT = Path(__file__).resolve().parents[1]

#: redteam30's cases/fd_in_forward, shortened: every gradient a central difference of forward, taken in forward
FD_IN_FORWARD = '''import numpy as np

H = 1e-5


def _jacobian(fn, arrays, out_size):
    jac = []
    for a in arrays:
        J = np.zeros((out_size, a.size))
        flat = a.reshape(-1)
        for i in range(a.size):
            old = flat[i]
            flat[i] = old + H
            up = np.array(fn(), dtype=float).reshape(-1)
            flat[i] = old - H
            down = np.array(fn(), dtype=float).reshape(-1)
            flat[i] = old
            J[:, i] = (up - down) / (2 * H)
        jac.append(J)
    return jac


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._inner = False

    def forward(self, X, training=False):
        Y = X @ self.params["W"].T + self.params["b"]
        if not self._inner:
            Xc = np.array(X, dtype=float, order="C")  # C: a Fortran X's reshape(-1) is a copy (test_verify40)
            self._inner = True
            try:
                self._J = _jacobian(lambda: self.forward(Xc), [Xc, self.params["W"], self.params["b"]], Y.size)
            finally:
                self._inner = False
            self.shape_X = X.shape
        return Y

    def backward(self, dY):
        g = dY.reshape(-1)
        JX, JW, Jb = self._J
        self.grads["W"] = (JW.T @ g).reshape(self.params["W"].shape)
        self.grads["b"] = (Jb.T @ g).reshape(self.params["b"].shape)
        return (JX.T @ g).reshape(self.shape_X)


class ReLU:
    def __init__(self):
        self.params, self.grads, self._inner = {}, {}, False

    def forward(self, X, training=False):
        Y = np.where(X > 0, X, 0.0)
        if not self._inner:
            self._inner = True
            try:
                up, down = self.forward(X + H), self.forward(X - H)
            finally:
                self._inner = False
            self._d = (up - down) / (2 * H)
        return Y

    def backward(self, dY):
        return dY * self._d
'''
#: 2 * (4*5 + 3*5 + 3) forwards inside one forward of Linear on a (4, 5) input; 2 of ReLU's
LINEAR_INNER = 2 * (20 + 15 + 3)


def test_h1_differences_taken_inside_forward_fail_the_policy_in_the_backward_case_words(tmp_path):
    """H1: the forward that re-enters itself fails under the policy, with the count and the backward case's sentence."""
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, FD_IN_FORWARD) as sb:
        for cls, init, n in (("Linear", INIT, LINEAR_INNER), ("ReLU", {}, 2)):
            layer = sb.load_layer("layers.py", cls, init, no_forward_in_backward=True)
            with pytest.raises(SandboxError) as info:
                layer.forward(X)
            text = " ".join(str(info.value).split())
            assert info.value.reason == "policy", text
            assert f"{cls}.forward called {cls}.forward again {n} time(s)" in text, text
            assert "This assignment requires a backward derived by hand" in text
            assert "never forward again (as central differences of forward do)" in text


def test_h1_the_many_forwards_of_numerical_differences_are_counted_too(tmp_path):
    """forward_many (the numerical gradient's round trip) runs the same count on each forward: the cheat cannot move
    its differences into the grader's perturbed forwards."""
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, FD_IN_FORWARD) as sb:
        layer = sb.load_layer("layers.py", "ReLU", {}, no_forward_in_backward=True)
        with pytest.raises(SandboxError, match=r"ReLU.forward called ReLU.forward again 2 time") as info:
            layer.forward_many([X, X + 1.0])
        assert info.value.reason == "policy"


def test_h1_without_the_policy_forward_is_not_counted(tmp_path):
    """Off by default: the same layer's numbers are right, so check passes and nothing is counted."""
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, FD_IN_FORWARD) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT)
        assert check_layer(layer, X, twin=None).passed


#: legitimate forwards that call other forwards, each passing the policy with an honest backward
LEGIT = {
    # a container whose forward calls its children's forward (other classes)
    "container": ('''
class Net:
    def __init__(self, in_features, out_features):
        self.lin, self.act = Linear(in_features, out_features, rng=0), ReLU()
        self.params, self.grads = self.lin.params, self.lin.grads

    def forward(self, X, training=False):
        return self.act.forward(self.lin.forward(X))

    def backward(self, dY):
        return self.lin.backward(self.act.backward(dY))
''', "Net"),
    # a layer whose forward calls a helper function (the same helper in every call)
    "helper": ('''
def _affine(X, W, b):
    return X @ W.T + b


class Helped(Linear):
    def forward(self, X, training=False):
        self.X = X
        return _affine(X, self.params["W"], self.params["b"])
''', "Helped"),
    # a subclass calling its base's forward once: one entry per class level
    "super": ('''
class Doubled(Linear):
    def forward(self, X, training=False):
        return 2.0 * super().forward(X)

    def backward(self, dY):
        return super().backward(2.0 * dY)
''', "Doubled"),
}


@pytest.mark.parametrize("how", sorted(LEGIT))
def test_h1_forwards_calling_other_forwards_legitimately_pass_the_policy(tmp_path, how):
    """A container, a helper, ``super().forward(X)`` once: no call beyond the entry is counted, check passes under the
    policy and backward counts 0 calls; loaded with a probe (as the grader loads the layer it grades on X), the
    probe's calls of forward are its own."""
    body, cls = LEGIT[how]
    X = np.random.default_rng(1).standard_normal((4, 5)) + 0.5
    with _sandbox(tmp_path, SOLUTION + body) as sb:
        layer = sb.load_layer("layers.py", cls, INIT, no_forward_in_backward=True)
        assert check_layer(layer, X, twin=None).passed and layer.forward_calls_in_backward == 0
        probed = sb.load_layer("layers.py", cls, INIT, probe_inputs=[X], no_forward_in_backward=True)
        assert check_layer(probed, X, twin=None).passed and probed.forward_calls_in_backward == 0


#: FD_IN_FORWARD's Linear keeping its Jacobian for the same input: taken during the load's probe (the grader probes the
#: layer on the input it grades), found again by the graded forward, which then calls nothing
FD_CACHED = FD_IN_FORWARD.replace(
    "        if not self._inner:\n            Xc = np.array(X, dtype=float, order=\"C\")  # C: a Fortran X's reshape(-1) "
    "is a copy (test_verify40)\n            self._inner = True",
    "        if not self._inner and not (getattr(self, '_at', None) is not None and np.array_equal(self._at, X)):\n"
    "            self._at = np.array(X, dtype=float)\n            Xc = np.array(X, dtype=float, order=\"C\")\n"
    "            self._inner = True", 1)


def test_h1_differences_taken_in_forward_on_the_probe_input_fail_the_policy_at_the_load(tmp_path):
    """The probe's forwards are counted too (beyond the probe's own calls of forward): the cheat that takes its
    differences there, on the graded input, and finds them again in the graded forward, is refused at the load."""
    assert FD_CACHED != FD_IN_FORWARD
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    with _sandbox(tmp_path, FD_CACHED) as sb:
        free = sb.load_layer("layers.py", "Linear", INIT, probe_inputs=[X])  # without the policy: loaded, not counted
        free.forward(X)
        np.testing.assert_allclose(free.backward(dY), dY @ free.params["W"], rtol=1e-6)  # right numbers
        with pytest.raises(SandboxError) as info:
            sb.load_layer("layers.py", "Linear", INIT, probe_inputs=[X], no_forward_in_backward=True)
        text = " ".join(str(info.value).split())
        assert info.value.reason == "policy", text
        said = re.search(r"Linear.forward or backward, called on the probe input while Linear was loaded, called "
                         r"Linear.forward (\d+) time\(s\) more than the grader did. This assignment requires a backward "
                         r"derived by hand", text)
        assert said and int(said.group(1)) % LINEAR_INNER == 0 and int(said.group(1)) > 0, text  # once per probe X


def test_h1_a_subclass_taking_differences_of_its_base_forward_is_counted(tmp_path):
    """The class-level entry allows one call of the base's forward per call: a subclass whose forward takes central
    differences of ``super().forward`` (every further call) fails the policy."""
    src = SOLUTION + '''
class Sneaky(Linear):
    def forward(self, X, training=False):
        Y = super().forward(X)
        Xc = np.array(X, dtype=float)
        self._dX = []
        for i in range(Xc.size):
            Xc.flat[i] += 1e-5
            up = super().forward(Xc)
            Xc.flat[i] -= 2e-5
            self._dX.append((up - super().forward(Xc)) / 2e-5)
            Xc.flat[i] += 1e-5
        self.X = X
        return Y
'''
    with _sandbox(tmp_path, src) as sb:
        layer = sb.load_layer("layers.py", "Sneaky", INIT, no_forward_in_backward=True)
        with pytest.raises(SandboxError, match=r"Sneaky.forward called Sneaky.forward again 40 time") as info:
            layer.forward(np.ones((4, 5)))
        assert info.value.reason == "policy"


@pytest.mark.parametrize("source, score", [(FD_IN_FORWARD, 3.0), (SOLUTION, 7.0)])
def test_h1_the_marker_fails_differences_in_forward_in_the_graded_test(tmp_path, source, score):
    """Graded: the marked test of test_grading_policy's TESTS fails for the cheat (3 of 7 points, where it had 7), the
    solution keeps 7."""
    r, data = graded(tmp_path, source)
    assert r.score == pytest.approx(score), data
    if source is FD_IN_FORWARD:
        failed = [t for t in data["tests"] if t["status"] == "failed"]
        assert [t["max_score"] for t in failed] == [4.0], failed
        assert "called Linear.forward" in shown(failed[0]["output"]) and "time(s)" in failed[0]["output"], failed[0]


# --- S1: starvation is the time spent waiting for a CPU ---------------------------------------------------------------

SLEEPY = ("import time\ntime.sleep(60)\n\nclass ReLU:\n    def forward(self, X):\n        return X\n\n"
          "    def backward(self, dY):\n        return dY\n")


def _asleep_but_runnable_when_read(monkeypatch, waited=0.0):
    """``/proc`` as redteam30's starve cases made the grader read it: runnable and no CPU time had at each reading
    (it spins only then), and ``waited`` s on a run queue for a CPU (it slept otherwise: none): ``_tree_usage``, the
    sandbox's one walk (CPU, runnable, wait)."""
    monkeypatch.setattr(sandbox, "_tree_usage", lambda pid: (0.0, True, waited))


def test_s1_a_call_asleep_between_readings_is_stopped_at_its_limit_as_its_own_timeout(tmp_path, monkeypatch):
    """Was: SandboxStarved "... still runnable and 0.50 s short ...: the grading machine was too busy" after
    STARVED_FACTOR limits (a grader error, graded 0 and regraded every run; ``check`` exit 2). It waited for no CPU:
    the submission's timeout, with no allowance."""
    (tmp_path / "slow.py").write_text(SLEEPY)
    _asleep_but_runnable_when_read(monkeypatch)
    with Sandbox(files=[str(tmp_path / "slow.py")], timeout=0.5) as sb:
        with pytest.raises(SandboxError) as info:
            sb.load_layer("slow.py", "ReLU", {})
        assert not isinstance(info.value, SandboxStarved)
        assert info.value.reason == "timeout" and "did not finish within 0.5 s (wall clock)" in str(info.value)
        assert sb._grace == 0.0 and sb._waited_back == 0.0  # nothing given


def test_s1_the_owed_time_is_the_run_queue_wait_not_the_cpu_time_short():
    """The rule (``sandbox._owed``): short of its CPU time, a call is owed the wait since it began less what it was
    given back; asleep (no wait) nothing, whatever the CPU reading; without ``schedstat`` the reading of before."""
    owed = sandbox._owed
    assert owed(0.5, True, 10.0, 10.0, 0.0) is None  # spun only when read: no wait, nothing owed
    assert owed(0.5, True, 10.3, 10.0, 0.0) == pytest.approx(0.3)  # waited 0.3 s for a CPU
    assert owed(0.5, False, 10.3, 10.0, 0.0) == pytest.approx(0.3)  # asleep now, owed what it waited before
    assert owed(0.5, True, 10.3, 10.0, 0.3) is None  # given back already
    assert owed(0.02, True, 15.0, 10.0, 0.0) is None  # had its CPU time: its own
    assert owed(0.5, True, None, None, 0.0) == 0.5 and owed(0.5, False, None, None, 0.0) is None  # no schedstat


def test_s1_a_session_asleep_between_readings_is_not_starved(tmp_path, monkeypatch):
    """The session's limit, likewise: runnable and short of its CPU time when read, but no run-queue wait since it
    was ready: its own timeout, never SandboxStarved."""
    (tmp_path / "ok.py").write_text(SLEEPY.replace("time.sleep(60)", "pass"))
    with Sandbox(files=[str(tmp_path / "ok.py")], timeout=2.0, session_timeout=4.0) as sb:
        sb.load_layer("ok.py", "ReLU", {})
        _asleep_but_runnable_when_read(monkeypatch, waited=7.0)
        sb._started, sb._extra, sb._slack, sb._given, sb._due = 1000.0, 0.0, 0.0, 0.0, None
        sb._req_wall, sb._req_t0, sb._ready_cpu, sb._ready_wait = 1.0, 1002.0, 0.3, 7.0
        assert not sb._session_starved(1004.0) and sb._given == 0.0 and sb._session_short is None
        sb._ready_wait = 4.5  # waited 2.5 s for a CPU since it was ready: given back
        assert sb._session_starved(1004.0) and sb._given == pytest.approx(2.5)


class _Meter:
    """A stand-in of ``runner._TreeMeter``: the tree's CPU seconds, whether it is runnable and its run-queue wait."""

    def __init__(self, used, busy, waited):
        self.used, self.busy, self.waited = used, busy, waited

    def sample(self):
        return self.used


def test_s1_the_runner_gives_back_only_the_time_the_tree_waited_for_a_cpu():
    """``runner._starved_end`` at the submission's limit: a tree runnable and short when read but with no run-queue
    wait is "slow" (was: its CPU time short given, then "starved", a grader error); one that waited 3 s for a CPU
    gets 3 s more, and at the backstop, still owed, is "starved"."""
    start = time.monotonic() - 10.0  # a 10 s limit just passed
    assert runner._starved_end(_Meter(1.0, True, 0.0), start, 10.0)[1] == "slow"
    end, why = runner._starved_end(_Meter(1.0, True, 3.0), start, 10.0)
    assert why == "" and end - start == pytest.approx(13.0, abs=0.5)
    late = time.monotonic() - sandbox.STARVED_FACTOR * 10.0
    assert runner._starved_end(_Meter(1.0, True, 1e6), late, 10.0)[1] == "starved"


def test_s1_the_run_queue_wait_of_a_process_tree_is_read():
    """``sandbox._tree_wait``: this process's (its threads' schedstat, summed) is a number, of no process none."""
    if not sandbox._SCHEDSTAT:
        pytest.skip("no /proc/PID/schedstat on this kernel")
    mine = sandbox._tree_waits(os.getpid())  # (with this test process's children, if any)
    assert os.getpid() in {k[0] for k in mine} and all(isinstance(v, float) and v >= 0.0 for v in mine.values())
    assert sandbox._tree_wait(2 ** 22 + 7) == 0.0  # no such process


# --- S2: trees deeper than Python's recursion limit ---------------------------------------------------------------

def _nots(n, then="import helper"):
    """``if not not ... False:`` with ``n`` nots: its body runs when ``n`` is odd."""
    return "\nif " + "not " * n + "False:\n    " + then + "\n"


#: an expression the import scan's lookup of ``getattr(builtins..., name)`` follows by recursion
DEEP_LOOKUP = "\nname = 'x'\nz = getattr(builtins" + ".__dict__" * 1500 + ", name)\n"


@pytest.mark.parametrize("n", [1500, 1501])
def test_s2_a_chain_of_nots_is_read_to_its_end(tmp_path, n):
    """The red team's line: ``_taken`` read ``not`` by recursion (RecursionError); now in a loop, with the right
    parity: 1,500 nots of False is False (the import is dead), 1,501 True (it runs)."""
    (tmp_path / "layers.py").write_text(SOLUTION + _nots(n, "import torch"))
    (tmp_path / "helper.py").write_text("X = 1\n")
    path = str(tmp_path / "layers.py")
    runs = n % 2 == 1
    found = static.forbidden_imports([path], ["torch"])
    assert [(v.module, v.statement) for v in found] == ([("torch", "import torch")] if runs else [])
    assert not static.scan(path).unchecked
    gone = static.unavailable_imports([path], root=str(tmp_path))
    assert [v.module for v in gone] == (["torch"] if runs else [])
    (tmp_path / "layers.py").write_text(SOLUTION + _nots(n))
    files = {"layers.py": path, "helper.py": str(tmp_path / "helper.py")}
    assert _import_scan.imported_files("layers.py", files) == (["layers.py", "helper.py"] if runs else ["layers.py"])


def test_s2_a_file_too_deep_for_the_scan_is_unchecked_as_an_unreadable_one(tmp_path):
    """Where the scan still recurses (a lookup 1,500 attributes deep), the file is unchecked: the guard's verdict for a
    file it cannot parse (forbid_imports: a violation saying why; the checker's copies: every file may be loaded),
    never a RecursionError."""
    (tmp_path / "layers.py").write_text(SOLUTION + DEEP_LOOKUP)
    (tmp_path / "helper.py").write_text("X = 1\n")
    path = str(tmp_path / "layers.py")
    assert "nested too deeply for the scan of its imports" in static.scan(path).unchecked
    [v] = static.forbidden_imports([path], ["torch"])
    assert v.module is None and v.line == 0 and "cannot be checked" in v.statement
    assert static.unavailable_imports([path], root=str(tmp_path)) == []  # not read: the import itself reports it
    files = {"layers.py": path, "helper.py": str(tmp_path / "helper.py")}
    assert sorted(_import_scan.imported_files("layers.py", files)) == ["helper.py", "layers.py"]


def test_s2_an_undecided_condition_too_deep_to_write_is_named_so(tmp_path):
    """``static._conditions`` walked the tree by recursion and wrote each undecided ``if``'s test with
    ``ast.unparse`` (both RecursionError on a 1,500-deep test); now its own stack, and the test named as too deep."""
    (tmp_path / "layers.py").write_text(SOLUTION + "\nx = 1\nif " + "-" * 1500 + "x:\n    import scipy\n")
    [v] = static.unavailable_imports([str(tmp_path / "layers.py")], root=str(tmp_path))
    assert v.module == "scipy" and v.condition == "(a condition nested too deeply to show)"


def test_s2_the_checkers_copies_read_past_a_deep_line(tmp_path):
    """The float64 copy and the eps reading of ``gradcheck check`` walk the checked file's imports too: a deep line
    beside a float32 cast leaves the cast found; a text too deep for the eps rewrite is one without eps (None)."""
    src = SOLUTION.replace("return dY @ self.params[\"W\"]", "return (dY @ self.params[\"W\"]).astype(np.float32)")
    assert src != SOLUTION
    (tmp_path / "layers.py").write_text(src + _nots(1500) + DEEP_LOOKUP)
    path, files = str(tmp_path / "layers.py"), {"layers.py": str(tmp_path / "layers.py")}
    lines = _float64_copy.cast_lines(path, "Linear", files)
    assert len(lines) == 1 and "astype(np.float32)" in lines[0], lines
    texts, places = _float64_copy.float64_texts(path, files, "Linear")
    assert "astype(np.float64)" in texts["layers.py"] and len(places) == 1
    assert _float64_copy.reached_places(path, "Linear", files, places) == places
    deep = "import numpy as np\nL = np.log(p + 1e-7)\nz = " + "-" * 1500 + "1\n"
    assert _log_eps.eps_free_text(deep) is None
    assert _log_eps.eps_free_text("import numpy as np\nL = np.log(p + 1e-7)\n")[1] == [1e-7]


def test_s2_a_submission_with_a_deep_line_is_graded(tmp_path):
    """The red team's deep_scan: the solution and a notes.py of 1,500 nots under the assignment's forbid_imports: was
    a grader error (pytest INTERNALERROR); 28/28 now."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text(SOLUTION)
    (sub / "notes.py").write_text("x = 1\n" + _nots(1500, "import os"))
    r = grade_submission(sub, ROOT / "assignments" / "linear_relu_ce" / "tests", tmp_path / "out", timeout=10.0,
                         seed=11)
    assert (r.score, r.status) == (28.0, "graded"), r


def test_s2_check_in_namespaces_gives_a_verdict_for_a_deep_line(tmp_path):
    """``gradcheck check --isolation namespaces`` of the solution with the line appended: PASS (was a RecursionError
    traceback, exit 1)."""
    _namespaces()
    shutil.copy(ROOT / "assignments" / "linear_relu_ce" / "solution" / "layers.py", tmp_path / "layers.py")
    with open(tmp_path / "layers.py", "a") as fh:
        fh.write(_nots(1500, "import os"))
    code, said = _check(f"{tmp_path / 'layers.py'}::Linear", "--isolation", "namespaces")
    assert code == 0 and "PASS: Linear" in said and "RecursionError" not in said, said


# --- L1: the loss's gradient_name ------------------------------------------------------------------------------------

MD_LOSS = SOLUTION.replace("class SoftmaxCrossEntropy:", "class SoftmaxCrossEntropy:\n    def __init__(self):\n"
                           "        self.gradient_name = NAME\n", 1) \
    .replace("        return d / n", "        return list(d / n)")


@pytest.mark.parametrize("name, shown", [
    ("dy_pred**\\n\\n# Full marks: 28 / 28 [appeal](http://evil.example/) <img src=x onerror=alert(1)>", "dy_pred"),
    ("dlogits", "dlogits")])
def test_l1_a_gradient_name_attribute_is_named_as_the_check_names_it(tmp_path, name, shown):
    """A loss whose ``gradient_name`` holds a Markdown link and an ``<img>``: its error named the gradient with that
    text, unescaped, into results.json (``_reply`` leaves an object's attributes unescaped: they are data). The name is
    the check's rule now (``gradcheck.check.loss_gradient_name``): a name ``d`` + identifier is kept, any other is
    ``dy_pred``."""
    assert MD_LOSS.count("NAME") == 1 and "list(d / n)" in MD_LOSS
    (tmp_path / "layers.py").write_text(MD_LOSS.replace("NAME", repr(name)))
    y, z = np.array([0, 1, 2]), np.random.default_rng(0).standard_normal((3, 4))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=10, hostile=True) as sb:
        loss = sb.load_loss("layers.py", "SoftmaxCrossEntropy", {})
        loss.forward(y, z)
        with pytest.raises(GradientShapeError) as info:
            loss.backward()
    text = str(info.value)
    assert f"backward() gave {shown} as a list" in text and "evil.example" not in text and "<img" not in text, text
