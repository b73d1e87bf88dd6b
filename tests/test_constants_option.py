"""Tester 13 H4: an array forward only reads, that moves the output, with no gradient beside weights with theirs, may
be a weight whose gradient backward forgot or a genuine constant; the checker cannot tell them apart by behaviour.
Neither PASS nor FAIL: the checked gradients are shown and the layer is NOT CHECKED as a whole (exit 3), in every
storage style (attributes, a params dict, sub-layers) and in the diagnosis; ``--constants NAME`` declares a constant,
and the layer then PASSes. Known buffer names (mask, running_mean) stay WARNING + PASS. ``--constants`` and
``--help`` run the console script, the other checks its ``gradcheck.cli.main`` in this process
(``test_cli.run_here``), which spares the start of a Python per check."""

import pytest
from test_cli import both, run, run_here, student

CONST = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W = rng.standard_normal((5, 3)) * 0.3
        self.b = np.zeros(3)
        self.NAME = np.array([1.0, 0.5, 2.0])  # fixed, not trained

    def forward(self, X):
        self.X = X
        return (X @ self.W + self.b) * self.NAME

    def backward(self, dY):
        d = dY * self.NAME
        self.dW = self.X.T @ d
        self.db = d.sum(axis=0)
        return d @ self.W.T
"""

DICT = """
import numpy as np

class L:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((5, 3)) * 0.3, "b": np.zeros(3)}
        self.grads = {}
        self.NAME = np.array([1.0, 2.0, 0.5])

    def forward(self, X, training=False):
        self.X = X
        return (X @ self.params["W"] + self.params["b"]) * self.NAME

    def backward(self, dY):
        d = dY * self.NAME
        self.grads["W"] = self.X.T @ d
        self.grads["b"] = d.sum(0)
        return d @ self.params["W"].T
"""

OUTER = CONST.replace("class L:", "class Inner:") + """

class L:
    def __init__(self):
        self.inner = Inner()

    def forward(self, X):
        return self.inner.forward(X)

    def backward(self, dY):
        return self.inner.backward(dY)
"""


def _check(tmp_path, body, name, *extra, via=run_here):
    """``gradcheck check`` of ``body`` (``via``: in this process, or ``run``, the console script)."""
    path = student(tmp_path, body.replace("NAME", name), f"h4_{name}_{len(body)}.py")
    p = via("check", f"{path}::L", "--input-shape", "8,5", *extra)
    return p, both(p)


@pytest.mark.parametrize("name", ["class_weights", "w0", "bg", "scale"])
def test_a_constant_named_like_a_weight_is_not_checked_exit_3(tmp_path, name):
    p, out = _check(tmp_path, CONST, name)
    assert p.returncode == 3, out
    assert " dW (5, 3) " in out and " db (3,) " in out, out  # the checked ones shown
    assert (f"NOT CHECKED as a whole: L: the gradients that were checked match (see above), but gradcheck cannot "
            f"tell whether {name} is a weight whose gradient backward forgot (then set self.d{name}) or a constant "
            f"(then name it self._{name}, or pass --constants {name}).") in out, out
    assert "PASS" not in out and "FAIL" not in out and "Traceback" not in out, out


def test_constants_option_makes_it_pass_and_says_so(tmp_path):
    p, out = _check(tmp_path, CONST, "class_weights", "--constants", "class_weights", via=run)
    assert p.returncode == 0, out
    assert "read as a constant buffer (declared a constant by --constants)" in out, out
    assert "PASS: L: every gradient (dX, dW, db) matches" in out and "NOT CHECKED" not in out, out


def test_params_dict_layer_gets_the_same_verdict(tmp_path):
    """The same constant beside a params dict: once WARNING + PASS, now the same exit 3 as the attribute style."""
    p, out = _check(tmp_path, DICT, "class_weights")
    assert p.returncode == 3, out
    assert ("cannot tell whether class_weights is a weight whose gradient backward forgot (then set "
            "grads['class_weights'], with it in params) or a constant (then name it "
            "self._class_weights, or pass --constants class_weights).") in out, out
    assert "PASS" not in out, out
    p, out = _check(tmp_path, DICT, "class_weights", "--constants", "class_weights")
    assert p.returncode == 0 and "PASS: L:" in out and "declared a constant by --constants" in out, out


def test_sub_layer_constant_is_named_by_its_path(tmp_path):
    p, out = _check(tmp_path, OUTER, "scale")
    assert p.returncode == 3, out
    assert ("cannot tell whether inner.scale is a weight whose gradient backward forgot (then set "
            "self.inner.dscale) or a constant (then name it self.inner._scale, or pass --constants inner.scale)"
            ) in out, out
    p, out = _check(tmp_path, OUTER, "scale", "--constants", "inner.scale")
    assert p.returncode == 0 and "PASS: L:" in out, out


@pytest.mark.parametrize("given", ["W", "nosuch"])
def test_constants_naming_no_such_array_is_a_usage_error(tmp_path, given):
    p, out = _check(tmp_path, CONST, "scale", "--constants", given)
    assert p.returncode == 2, out
    assert (f"--constants {given}: not an array attribute forward reads without a gradient (those are: scale)"
            in out), out


def test_a_constant_is_told_by_its_private_name_not_by_a_buffer_like_name(tmp_path):
    """Tester 15 H3: a float array forward only reads is undecided whatever it is called (``mask`` too, as
    Goodfellow's output bias ``c``); a private name (``_mask``) says it is a constant: WARNING + PASS."""
    p, out = _check(tmp_path, CONST, "mask")
    assert p.returncode == 3 and "cannot tell whether mask is a weight" in out, out
    p, out = _check(tmp_path, CONST, "_mask")
    assert p.returncode == 0 and "read as a constant buffer" in out and "PASS: L:" in out, out


def test_constants_is_in_help_and_readme():
    from pathlib import Path

    out = both(run("check", "--help"))
    assert "--constants NAME[,NAME]" in out and "NOT CHECKED (exit 3)" in out, out
    readme = (Path(__file__).resolve().parents[1] / "docs" / "checking.md").read_text()  # the README's reference page
    assert "--constants" in readme


def test_diagnose_reports_the_same_undecided_finding():
    """The diagnosis (the library's, the planted-bug set's) names it weight-or-constant, not a wrong PASS."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from buggy_layers import diagnose

    d = diagnose("styles.py::HiddenBiasNoGrad")
    assert not d.passed and d.codes == ["weight-or-constant"], d.sentence()
    assert ("cannot tell whether bh is a weight whose gradient backward forgot (then set self.dbh) or a constant "
            "(then name it self._bh, or pass --constants bh)") in d.sentence(), d.sentence()
