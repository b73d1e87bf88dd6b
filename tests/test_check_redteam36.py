"""redteam36's findings on ``gradcheck check`` of a submission (fixr36).

F3: ``check --tape --jacobian`` sized ``np.eye(n)`` from the ``Y`` of the child's tape reply (the 400-element
``JACOBIAN_MAX`` was checked on the plain forward only): a reply claiming ``Y`` of shape ``(6000,)`` cost the checking
process 1.2 GB, and the message blamed the student's forward. Now the tape's ``Y`` must have the forward's shape first.
"""

from test_cli import both, run_here, student

from tests.test_grading_policy import SOLUTION

#: the solution whose Linear constructor wraps the child's ``reply`` (found through ``sys._getframe``, as redteam35's
#: F2 and redteam36's cases/tape_huge) so that the tape reply to a request with no upstream gradient (the first of
#: ``StudentTape.jacobian``) claims ``Y = zeros(N)``
_TAPE_Y = SOLUTION + '''
import sys as _sys


def _forge():
    f = _sys._getframe(1)
    while f is not None:
        s = f.f_locals.get("self")
        if s is not None and hasattr(s, "reply") and hasattr(s, "serve"):
            break
        f = f.f_back
    else:
        return
    if getattr(s, "_forged", False):
        return
    s._forged, orig, g = True, s.reply, f.f_globals

    def reply(ok, meta=None, packer=None, error=None):
        if ok and meta and "unconnected_read" in meta and packer is not None and not meta["grads"]:
            meta = dict(meta, value=g["describe"](s.np, packer, s.np.zeros(N)))
        return orig(ok, meta, packer, error)
    s.reply = reply


_Linear_init = Linear.__init__


def _init(self, *a, **k):
    _forge()
    _Linear_init(self, *a, **k)


Linear.__init__ = _init
'''

_JACOBIAN = ("--init", '{"in_features": 5, "out_features": 3}', "--input-shape", "4,5", "--tape", "--jacobian")


def test_f3_a_tape_reply_whose_y_disagrees_with_the_forwards_fails_before_the_jacobian_is_sized(tmp_path):
    """Before: the reply's (3000,) sized a 3000 x 3000 identity and 3000 upstream gradients; the check PASSed (exit 0)
    with "Linear.forward raised ValueError on autoprop tensors" (the child refusing the gradients' shape). Now the
    tape's Y is compared with the forward's (4, 3) before anything is built from it: FAIL, naming both shapes."""
    f = student(tmp_path, _TAPE_Y.replace("zeros(N)", "zeros(3000)"), "layers.py")
    p = run_here("check", f"{f}::Linear", *_JACOBIAN)
    out = both(p)
    assert p.returncode == 1, out
    assert ("jacobian dY/dX in eval mode: FAIL: Linear: the tape's Y has shape (3000,); the forward's Y on numpy "
            "arrays has shape (4, 3).") in out, out
    assert "raised ValueError on autoprop tensors" not in out, out


def test_f3_an_honest_tape_jacobian_still_compares(tmp_path):
    f = student(tmp_path, SOLUTION, "layers.py")
    p = run_here("check", f"{f}::Linear", *_JACOBIAN)
    out = both(p)
    assert p.returncode == 0, out
    assert "jacobian dY/dX in eval mode (12 x 20): tape (your forward, stacked VJPs) vs central differences" in out, out


# F4b / F4: the search for a failing model's first failing layer (diagnose.first_failing_sublayer) checked each
# sub-layer with the search still on: a model whose ``layers`` held itself nested checks (109 sub-layer requests,
# 56 s) until the grader's own stack overflowed, and that RecursionError was told as the child's ("Does the code
# write to file descriptors it does not own?"); ``layers = [lin] * 40`` ran 82 full checks. Now a sub-layer's check
# searches no further, the model itself in its own layers ends the search, an object met again is run but not checked
# again, and the search stops after MAX_SUBLAYERS layers, saying so.

_MODEL = '''
import numpy as np


class Lin:
    def __init__(self, n=5):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((n, n)) / 3, "b": rng.standard_normal(n)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return dY @ self.params["W"].T


class Model:
    def __init__(self):
        self.lin = Lin()
        self.layers = LAYERS
        self.params = self.lin.params
        self.grads = self.lin.grads

    def forward(self, X, training=False):
        return self.lin.forward(X)

    def backward(self, dY):
        dX = self.lin.backward(dY)
        self.grads = self.lin.grads
        return 2 * dX  # wrong: the model's dX doubled, its layers all correct
'''


def _counted_check(tmp_path, monkeypatch, layers):
    """``gradcheck check`` of the failing Model whose ``layers`` is ``layers`` (Python code), sandboxed: (exit code,
    output, the sub-layers requested from the child, the sub-layers given a full check of their own)."""
    from gradcheck import diagnose, sandbox

    requests, checks = [], []
    sublayer, diagnose_layer = sandbox.RemoteLayer.sublayer, diagnose.diagnose_layer
    monkeypatch.setattr(sandbox.RemoteLayer, "sublayer", lambda self, i, *a: requests.append(i) or sublayer(self, i, *a))
    monkeypatch.setattr(diagnose, "diagnose_layer", lambda layer, *a, **k: (
        checks.append(k.get("name")) if str(k.get("name")).startswith("layers[") else None) or
        diagnose_layer(layer, *a, **k))
    f = student(tmp_path, _MODEL.replace("LAYERS", layers), "layers.py")
    p = run_here("check", f"{f}::Model", "--input-shape", "4,5")
    return p.returncode, both(p), requests, checks


def test_f4b_a_model_holding_itself_is_not_searched_within_itself(tmp_path, monkeypatch):
    """Before: 109 sub-layer requests, the diagnosis "the first layer whose own check fails is layers[0] (Model)" 107
    times and the grader's RecursionError told as the child's; now the model in its own layers ends the search."""
    code, out, requests, checks = _counted_check(tmp_path, monkeypatch, "[self]")
    assert code == 1, out
    assert "FAIL: Model: gradient mismatch in dX." in out and "dX is 2 times the correct gradient" in out, out
    assert "first layer whose own check fails" not in out and "recursion" not in out, out
    assert set(requests) == {0} and checks == [], (requests, checks)


def test_f4_a_layer_object_listed_again_is_checked_once_and_the_search_is_bounded(tmp_path, monkeypatch):
    """Before: ``[self.lin] * 40`` gave 82 sub-layer requests, each a full check (fixr36: 66, one per reference up to
    MAX_SUBLAYERS, each run); now each mode asks for layers[0] alone, checks it once, and says why the search ends
    there: every later layer is that object again (redteam36 F4)."""
    code, out, requests, checks = _counted_check(tmp_path, monkeypatch, "[self.lin] * 40")
    assert code == 1, out
    assert "FAIL: Model: gradient mismatch in dX." in out, out
    modes = requests.count(0)
    assert modes in (1, 2) and requests == [0] * modes and checks == ["layers[0] Lin"] * modes, (requests, checks)
    assert ("note: layers[1] and after are layers met before in the model's layers (the same objects, each checked "
            "where it was first met) or the model itself: not checked or run again, so no layer of the model fails "
            "its own check") in out, out
    assert "the search stopped there" not in out, out


def test_f4_the_search_over_distinct_layers_is_bounded_and_says_so(tmp_path, monkeypatch):
    """Layers met before followed by a new one are run (the new one's input is theirs), each one request, up to
    MAX_SUBLAYERS, and the search stops there, saying so (the new layer at 35 is not reached)."""
    from gradcheck.diagnose import MAX_SUBLAYERS

    code, out, requests, checks = _counted_check(tmp_path, monkeypatch, "[self.lin] * 35 + [Lin()]")
    assert code == 1, out
    modes = requests.count(0)
    assert modes in (1, 2) and set(checks) == {"layers[0] Lin"} and len(checks) == modes, (requests, checks)
    assert sorted(requests) == sorted(list(range(MAX_SUBLAYERS + 1)) * modes), requests
    assert (f"note: no layer among the first {MAX_SUBLAYERS} layers of the model fails its own check; the search "
            f"stopped there (layers[{MAX_SUBLAYERS}] and after are not checked alone)") in out, out


def test_f4_in_process_a_listed_again_layer_and_the_model_itself_are_not_checked_again(monkeypatch):
    """The same rule for a model checked in this process (no sandbox): its layers' objects by identity."""
    import numpy as np

    from gradcheck import diagnose

    ns: dict = {}
    exec(_MODEL.replace("LAYERS", "[self.lin, self.lin, self, self.lin]"), ns)
    checks = []
    diagnose_layer = diagnose.diagnose_layer
    monkeypatch.setattr(diagnose, "diagnose_layer", lambda layer, *a, **k: (
        checks.append(k.get("name")) if str(k.get("name")).startswith("layers[") else None) or
        diagnose_layer(layer, *a, **k))
    X = np.random.default_rng(0).standard_normal((4, 5))
    diag = diagnose.diagnose_layer(ns["Model"](), X, training=False)
    assert not diag.passed and diag.sublayer is None
    assert checks == ["layers[0] Lin"], checks  # layers[1] the same object, layers[2] the model: the search ends
    assert [(f.code, f.severity) for f in diag.findings if f.code.startswith("sublayers-")] == [
        ("sublayers-repeated", "info")], diag.findings
    assert "layers[1] and after are layers met before" in next(
        f.message for f in diag.findings if f.code == "sublayers-repeated")

    checks.clear()  # a new layer after one met again: that one is run (its input is the new one's), the new one checked
    exec(_MODEL.replace("LAYERS", "[self.lin, self.lin, Lin(), self.lin]"), ns)
    diag = diagnose.diagnose_layer(ns["Model"](), X, training=False)
    assert not diag.passed and checks == ["layers[0] Lin", "layers[2] Lin"], checks
    assert [f.code for f in diag.findings if f.code.startswith("sublayers-")] == ["sublayers-repeated"]
    assert "layers[3] and after are layers met before" in next(
        f.message for f in diag.findings if f.code == "sublayers-repeated")


def test_f4b_the_graders_own_recursion_error_is_the_graders_not_the_childs(tmp_path, monkeypatch):
    """A RecursionError while a reply is read, with the grader's own stack past half of Python's limit (F4b's nested
    checks), is a GraderError ("not a fault of the checked code"); from a shallow stack (a reply nested deep, the
    submission's doing) it stays the submission's protocol failure."""
    import sys

    import numpy as np
    import pytest

    from gradcheck import sandbox
    from gradcheck.errors import GraderError
    from gradcheck.sandbox import SandboxError
    from tests.test_grading_policy import INIT, SOLUTION, _sandbox

    def deep(n, fn):
        return fn() if n == 0 else deep(n - 1, fn)

    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, SOLUTION) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT)

        def recursing(op, *a):
            if op == "forward":
                raise RecursionError("maximum recursion depth exceeded")
        monkeypatch.setattr(sandbox, "_check_reply", recursing)
        with pytest.raises(GraderError) as info:
            deep(sys.getrecursionlimit() * 3 // 5, lambda: layer.forward(X))
    text = " ".join(str(info.value).split())
    assert "RecursionError: gradcheck's own calls were" in text and "This is not a fault of the checked code" in text
    assert "file descriptors" not in text, text
    with _sandbox(tmp_path, SOLUTION) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT)
        monkeypatch.setattr(sandbox, "_check_reply", recursing)
        with pytest.raises(SandboxError) as info:
            layer.forward(X)
    assert not isinstance(info.value, GraderError) and info.value.reason == "protocol", info.value


# F2 / F2c / F2d: gradcheck's adapters read the attributes of their own wrappers (a CS231n pair's ``keyword_names``,
# ``student_forward``, ``student_backward``) from whatever object was loaded: a student's ``self.keyword_names = 5``
# raised TypeError in ``_adapters.signature`` ("Linear.__init__(...) raised TypeError": 14/28 graded; ``check``: exit 2),
# and a helper method ``student_forward(self, X, labels, mask)`` was read as forward ("Linear.forward takes 3 inputs").

_INIT_LINE = "        self.grads = {name: np.zeros_like(p) for name, p in self.params.items()}\n"
_KW_NAMES = SOLUTION.replace(_INIT_LINE, _INIT_LINE + "        self.keyword_names = 5\n", 1)
_HELPER = SOLUTION.replace(_INIT_LINE, _INIT_LINE + '''
    def student_forward(self, X, labels, mask):
        return self.forward(X * mask)
''', 1)


def test_f2_the_solution_with_a_keyword_names_attribute_is_graded_in_full(tmp_path):
    from tests.test_grading_policy import graded

    assert _KW_NAMES != SOLUTION and _HELPER != SOLUTION
    r, res = graded(tmp_path, _KW_NAMES)
    text = " ".join(str(t.get("output", "")) for t in res["tests"])
    assert res["score"] == sum(t["max_score"] for t in res["tests"]) > 0, text
    assert "raised TypeError" not in text, text


def test_f2c_f2d_check_reads_a_layer_whatever_attributes_it_has(tmp_path):
    for source in (_KW_NAMES, _HELPER):
        f = student(tmp_path, source, "layers.py")
        p = run_here("check", f"{f}::Linear", "--init", '{"in_features": 5, "out_features": 3}', "--input-shape",
                     "4,5")
        out = both(p)
        assert p.returncode == 0, out
        assert "PASS: Linear: every gradient (dX, dW, db) matches" in out, out


def test_f2_the_childs_own_failure_after_the_constructor_is_not_the_constructors(tmp_path):
    """The child failing in its own code after the constructor returned (here: the submission replaced the adapters'
    ``signature``, which the child calls to describe the object; before the fix, F2's ``keyword_names`` did it) is said
    as that, not as "Linear.__init__(...) raised" (a hostile sandbox does not believe the child's word that the fault is
    gradcheck's, so it is no grader error either)."""
    import pytest

    from gradcheck.sandbox import Sandbox, SandboxError
    from tests.test_grading_policy import INIT

    source = SOLUTION + '''
import sys as _sys


def _break_signature():
    f = _sys._getframe(1)
    while f is not None:
        s = f.f_locals.get("self")
        if s is not None and hasattr(s, "reply") and hasattr(s, "serve"):
            s.AD.signature = len  # a built-in: no frame of the submission's in the traceback
            return
        f = f.f_back


_Linear_init = Linear.__init__


def _init(self, *a, **k):
    _break_signature()
    _Linear_init(self, *a, **k)


Linear.__init__ = _init
'''
    (tmp_path / "layers.py").write_text(source)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=10, hostile=True) as sb:
        with pytest.raises(SandboxError) as info:
            sb.load_layer("layers.py", "Linear", INIT)
    text = " ".join(str(info.value).split())
    assert ("layers.py::Linear(in_features=5, out_features=3) was built, then the sandbox process failed reading it, "
            "outside the constructor: TypeError: object of type ") in text, text
    assert "__init__" not in text and info.value.reason == "exception", text
