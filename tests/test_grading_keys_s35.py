"""Issue 10, session 34's first left item (nielsen34 F3): the grader Markdown-escaped every string the sandbox child
sent, on receipt, so a parameter ``biases[0]`` came back ``biases\\[0\\]``, matched no key of the reference, and
``grade.layer_gradients`` of a correct Nielsen network (``student.layer(..., targets=...)``) scored 0/6.

The child's strings are data now (compared and looked up as sent); text becomes Markdown where results.json is
written (:func:`gradcheck.grading.static.markdown_text`, :func:`~gradcheck.grading.static.code_span`). These tests
grade through the runner (``grade_submission``) and read results.json; the hostile ones render its Markdown with
mistune (CommonMark) and look for what a student's string must never make: a link, an image, HTML, emphasis, a
heading, a table, a forged score.
"""

import json
import pathlib
import re

import pytest

from gradcheck.grading.runner import grade_submission

NIELSEN = pathlib.Path(__file__).parent / "fixtures" / "nielsen_s34" / "network.py"

# A staff test of Nielsen's backprop as docs/gradescope.md writes one: the model forward(X) -> its cost with the
# test's targets (fixn34's student.layer(..., targets=...)); one point per graded tensor (dX, 3 biases, 3 weights).
NIELSEN_TEST = '''
import numpy as np
import pytest

SIZES = [4, 3, 3, 3]


class RefNetwork:
    """forward(X) -> 0.5 * sum over the columns of ||a - t||^2 (Nielsen's quadratic cost, summed over samples)."""

    def __init__(self, sizes, t):
        rng = np.random.default_rng(0)
        self.params, self.grads, self.t, self.n = {}, {}, t, len(sizes) - 1
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            self.params[f"biases[{i}]"] = rng.standard_normal((b, 1))
            self.params[f"weights[{i}]"] = rng.standard_normal((b, a))

    def forward(self, X, training=False):
        self.acts, a = [X], X
        for i in range(self.n):
            a = 1 / (1 + np.exp(-(self.params[f"weights[{i}]"] @ a + self.params[f"biases[{i}]"])))
            self.acts.append(a)
        return np.array([0.5 * np.sum((a - self.t) ** 2)])

    def backward(self, dL):
        a = self.acts[-1]
        delta = dL[0] * (a - self.t) * a * (1 - a)
        for i in reversed(range(self.n)):
            self.grads[f"biases[{i}]"] = delta.sum(axis=1, keepdims=True)
            self.grads[f"weights[{i}]"] = delta @ self.acts[i].T
            dA = self.params[f"weights[{i}]"].T @ delta
            delta = dA * self.acts[i] * (1 - self.acts[i]) if i else dA
        return delta


@pytest.mark.points(7)
def test_backprop(student, grade, rng):
    """Network.backprop"""
    net = student.layer("network.py", "Network", targets="real@3,3", sizes=SIZES)
    grade.layer_gradients(net, rng.standard_normal((4, 3)), RefNetwork(SIZES, net.targets), points=7)
'''

TENSORS = ["dX", "dbiases[0]", "dweights[0]", "dbiases[1]", "dweights[1]", "dbiases[2]", "dweights[2]"]


def shown(markdown: str) -> str:
    """The text a Markdown output shows, as far as the grader's escapes go: CommonMark's backslash escapes removed (a
    backslash before ASCII punctuation shows the punctuation), the inverse of
    :func:`gradcheck.grading.static.markdown_text`. For tests that compare results.json's output with plain text
    (``gradcheck check``'s line)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def test_shown_inverts_markdown_text():
    from gradcheck.grading.static import markdown_text

    for text in ("self._class_weights ** 2 <b> x](y) # h", EVIL, "a\\*b \\x1b [31m __init__ dy_pred", "\\\\", ""):
        assert shown(markdown_text(text)) == text, (text, markdown_text(text))


def _grade(tmp_path, files: dict[str, str], test: str, seed: int = 1):
    (tmp_path / "sub").mkdir()
    for name, text in files.items():
        (tmp_path / "sub" / name).write_text(text)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(test)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", seed=seed)
    return r, json.loads((tmp_path / "out" / "results.json").read_text())


def _parts(output: str) -> dict[str, str]:
    """``{tensor: "ok" | "wrong"}`` of a failing test's Markdown list (``- `dbiases[2]`: **wrong** - ...``)."""
    return {m[1]: "ok" if m[2] == "ok" else "wrong" for m in re.finditer(r"^- `([^`]+)`: (ok|\*\*wrong\*\*)", output,
                                                                           re.M)}


def test_a_correct_nielsen_network_gets_full_marks(tmp_path):
    """F3: biases[0] reached the grader as biases\\[0\\]: 0/6, "Network's parameters are biases\\[0\\], ...; the
    assignment expects biases[0], ...". Now every tensor is compared: 7/7."""
    r, data = _grade(tmp_path, {"network.py": NIELSEN.read_text()}, NIELSEN_TEST)
    (t,) = data["tests"]
    assert (r.status, r.score, t["score"], t["max_score"]) == ("graded", 7.0, 7.0, 7.0), t["output"]
    assert t["output"] == "All checked: " + ", ".join(f"`{n}`" for n in TENSORS) + " ok.", t["output"]


def test_a_nielsen_network_loses_exactly_its_wrong_tensors_point(tmp_path):
    """The last layer's nabla_b doubled (its delta, the weights' gradients and dX unchanged): dbiases[2] alone is
    wrong, 6 of 7 points (0 of 7 before: no key matched)."""
    src = NIELSEN.read_text()
    assert src.count("            nb[-k] = delta\n") == 1
    src = src.replace("            nb[-k] = delta\n", "            nb[-k] = delta * (2.0 if k == 1 else 1.0)\n")
    r, data = _grade(tmp_path, {"network.py": src}, NIELSEN_TEST)
    (t,) = data["tests"]
    assert (r.status, t["score"], t["status"]) == ("graded", 6.0, "failed"), t["output"]
    assert _parts(t["output"]) == {n: "wrong" if n == "dbiases[2]" else "ok" for n in TENSORS}, t["output"]
    assert "2 times the correct gradient" in t["output"], t["output"]


# A plain params/grads layer whose parameter names hold '_' and '[0]' (as a student's list of weights would).
PLAIN = '''
import numpy as np


class Affine:
    def __init__(self, n_in, n_out):
        rng = np.random.default_rng(1)
        self.params = {"w_in[0]": rng.standard_normal((n_in, n_out)), "b_out": np.zeros(n_out)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["w_in[0]"] + self.params["b_out"]

    def backward(self, dY):
        self.grads["w_in[0]"] = self.X.T @ dY
        self.grads["b_out"] = dY.sum(axis=0)
        return dY @ self.params["w_in[0]"].T
'''

PLAIN_TEST = '''
import numpy as np
import pytest
from layers import Affine as RefAffine


@pytest.mark.points(3)
def test_affine(student, grade, rng):
    """Affine"""
    layer = student.layer("layers.py", "Affine", n_in=4, n_out=3)
    grade.layer_gradients(layer, rng.standard_normal((5, 4)), RefAffine(4, 3), points=3)
'''


def _plain_test(tmp_path):
    """The staff test imports its reference from a copy of the correct layer beside it (the test's own module)."""
    return PLAIN_TEST.replace("from layers import Affine as RefAffine", PLAIN.replace("class Affine", "class RefAffine"))


def test_a_parameter_named_with_underscore_and_brackets_is_graded(tmp_path):
    """'w_in[0]' came back 'w_in\\[0\\]' and matched no key of the reference: 0/3. Now 3/3, and the output names it
    whole in a code span."""
    r, data = _grade(tmp_path, {"layers.py": PLAIN}, _plain_test(tmp_path))
    (t,) = data["tests"]
    assert (r.status, t["score"]) == ("graded", 3.0), t["output"]
    assert t["output"] == "All checked: `dX`, `dw_in[0]`, `db_out` ok.", t["output"]


def test_a_wrong_gradient_of_such_a_parameter_costs_its_point(tmp_path):
    """dw_in[0] halved: that part alone is wrong (1 of 3 points lost; all 3 before, for the name)."""
    src = PLAIN.replace('self.grads["w_in[0]"] = self.X.T @ dY', 'self.grads["w_in[0]"] = 0.5 * self.X.T @ dY')
    r, data = _grade(tmp_path, {"layers.py": src}, _plain_test(tmp_path))
    (t,) = data["tests"]
    assert (r.status, t["score"]) == ("graded", 2.0), t["output"]
    assert _parts(t["output"]) == {"dX": "ok", "dw_in[0]": "wrong", "db_out": "ok"}, t["output"]


# Hostile strings: a parameter name and an exception message made of Markdown, HTML, a link, a newline, backticks,
# a table's bar and a forged score. Neither may render as anything but its own text, nor change a score or a name.
LINE = "W](http://e.vil/x) `c` | a | **full marks** <img src=x onerror=alert(1)> _em_ ![i](http://e.vil/i.png)"
EVIL = LINE + "\n\n# 9 / 9"  # (111 characters: a name is cut for display only, above 120)
SHOWN = "W](http://e.vil/x) `c` | a | **full marks** &lt;img src=x onerror=alert(1)&gt; _em_ ![i](http://e.vil/i.png)"

HOSTILE = '''
import numpy as np

EVIL = {evil!r}


class Affine:
    def __init__(self, n_in, n_out):
        self.params = {{EVIL: np.ones((n_in, n_out)), "b_out": np.zeros(n_out)}}
        self.grads = {{}}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params[EVIL] + self.params["b_out"]

    def backward(self, dY):
        self.grads[EVIL] = self.X.T @ dY
        self.grads["b_out"] = dY.sum(axis=0)
        return dY @ self.params[EVIL].T


class Raising(Affine):
    def __init__(self, n_in, n_out):
        self.params = {{"w_in[0]": np.ones((n_in, n_out)), "b_out": np.zeros(n_out)}}
        self.grads = {{}}

    def forward(self, X, training=False):
        raise ValueError(EVIL)
'''.format(evil=EVIL)

HOSTILE_TEST = PLAIN_TEST.replace("from layers import Affine as RefAffine", PLAIN.replace("class Affine", "class RefAffine")) + '''

@pytest.mark.points(2)
def test_raising(student, grade, rng):
    """Raising"""
    layer = student.layer("layers.py", "Raising", n_in=4, n_out=3)
    grade.layer_gradients(layer, rng.standard_normal((5, 4)), RefAffine(4, 3), points=2)
'''


def test_hostile_names_and_messages_render_as_their_own_text(tmp_path):
    """The parameter's name and the exception's message reach results.json as text: rendered, no link, image, HTML
    tag, emphasis, heading or table comes from them; the scores and the tests' names are the grader's."""
    mistune = pytest.importorskip("mistune")
    r, data = _grade(tmp_path, {"layers.py": HOSTILE}, HOSTILE_TEST)
    assert r.status == "graded", data
    assert [(t["name"], t["score"], t["max_score"]) for t in data["tests"]] == [("Affine", 0.0, 3.0),
                                                                                 ("Raising", 0.0, 2.0)], data
    assert data["score"] == 0.0, data
    for t in data["tests"]:
        out = t["output"]
        html = mistune.html(out)
        assert SHOWN in html, (out, html)  # the submission's text is shown, each of its characters as written
        for tag in ("<a ", "<img", "<h1", "<h2", "<table", "<em>", "<strong>full", "<script"):
            assert tag not in html, (tag, out, html)
        assert "\n#" not in out and "\n\n# 9" not in out, out  # no line of it starts a heading
    affine, raising = (mistune.html(t["output"]) for t in data["tests"])
    # (its newline makes the name unprintable: refused as such since session 36, shown as text with a space for it)
    assert f"a name in it, '{SHOWN}  # 9 / 9', holds characters that cannot be shown as they are" in affine, affine
    assert f"ValueError: {SHOWN}" in raising, raising  # the message's first line
