"""Session 35's leftovers in the grader (note35, items 4-6), fixed in session 36 (fixg36):

- keys35: a staff's reference class whose ``forward`` takes no ``training`` keyword made ``grade.layer_gradients``
  (and ``grade.layer_forward``) a grader error (TypeError from ``training=False``): the reference is now called as
  the sandbox child calls the student's layer (:func:`gradcheck._adapters.forward_in_mode`).
- redteam35/keys35: the sandbox cut every key of the child's at 120 characters on receipt, so a parameter named with
  more matched no key of the reference and a correct layer scored 0. Keys are compared whole now, and a long name is
  cut only where results.json shows it (:func:`gradcheck.grading.static.name_span`), the cut said.
- keys35: since session 35 made Markdown in one place escaping everything, the grader's own code spans showed their
  backticks. gradcheck marks its own spans (:func:`gradcheck.errors.code`, dropped by ``str(error)``) and
  :func:`gradcheck.grading.static.markdown_text` renders those as code; a submission's backticks stay text.
- redteam35: a bare URL in a submission's string (an error message, a parameter's name) was auto-linked by
  GitHub-style renderers (GFM's autolink extension; Gradescope renders Markdown). The characters the extension reads
  (``:`` before ``//``, ``.`` after ``www``, ``@`` in an address) are backslash-escaped: shown as written, linked
  nowhere.
- redteam35/note35 item 6: a submission's signal handler raising while the sandbox child waited for the next request
  ended the child; the grader's next send failed and it said "Does the code use file descriptors it does not own?".
  The child now names what raised (exit ``WAITING_EXIT``, one line on stderr) and the grader says so.
"""

import hashlib
import pathlib
import signal
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_grading_keys_s35 import (  # noqa: E402
    HOSTILE_TEST,
    PLAIN,
    PLAIN_TEST,
    _grade,
    _parts,
    _plain_test,
    shown,
)

REF = PLAIN.replace("class Affine", "class RefAffine")
NO_TRAINING = REF.replace("def forward(self, X, training=False)", "def forward(self, X)")


def _test_with(reference: str, forward: bool = False) -> str:
    test = PLAIN_TEST.replace("from layers import Affine as RefAffine", reference)
    if forward:
        test = test.replace("grade.layer_gradients(", "grade.layer_forward(")
    return test


@pytest.mark.parametrize("forward", [False, True], ids=["layer_gradients", "layer_forward"])
def test_a_reference_without_training_grades_a_correct_layer(tmp_path, forward):
    """keys35: the reference's forward(self, X) raised TypeError on training=False: "Not graded: the autograder's own
    code failed", the submission's status "grader error". Now the correct layer gets full marks."""
    assert "def forward(self, X):\n" in NO_TRAINING
    r, data = _grade(tmp_path, {"layers.py": PLAIN}, _test_with(NO_TRAINING, forward))
    (t,) = data["tests"]
    assert (r.status, t["score"], t["max_score"]) == ("graded", 3.0, 3.0), t["output"]
    assert t["output"] == ("All checked: `Y` ok." if forward else "All checked: `dX`, `dw_in[0]`, `db_out` ok."), \
        t["output"]


def test_a_reference_without_training_still_finds_the_wrong_part(tmp_path):
    """The student's dw_in[0] halved, graded against a reference whose forward takes no training: that part alone is
    wrong (the diagnosis reruns the reference: reference_source, the directional confirmation)."""
    src = PLAIN.replace('self.grads["w_in[0]"] = self.X.T @ dY', 'self.grads["w_in[0]"] = 0.5 * self.X.T @ dY')
    r, data = _grade(tmp_path, {"layers.py": src}, _test_with(NO_TRAINING))
    (t,) = data["tests"]
    assert (r.status, t["score"]) == ("graded", 2.0), t["output"]
    assert _parts(t["output"]) == {"dX": "ok", "dw_in[0]": "wrong", "db_out": "ok"}, t["output"]
    assert "0.5 times the correct gradient" in t["output"] or "half" in t["output"], t["output"]


def test_a_reference_with_its_own_switch_name_gets_the_mode(tmp_path):
    """A reference whose switch is ``train_flg`` (DLfS's name) gets the test's mode under that name, as the student's
    layer gets it: a reference that returns garbage unless told eval mode grades a correct layer 3/3."""
    ref = NO_TRAINING.replace("def forward(self, X)", "def forward(self, X, train_flg=True)").replace(
        "        return X @ self.params[\"w_in[0]\"] + self.params[\"b_out\"]",
        "        return X @ self.params[\"w_in[0]\"] + self.params[\"b_out\"] + (100.0 if train_flg else 0.0)")
    assert "100.0 if train_flg" in ref
    r, data = _grade(tmp_path, {"layers.py": PLAIN}, _test_with(ref, forward=True))
    (t,) = data["tests"]
    assert (r.status, t["score"]) == ("graded", 3.0), t["output"]


LONG = "w_" + "x" * 148  # a parameter's name of 150 characters (the gradient's part: "d" + it, 151)


def test_a_parameter_named_with_150_characters_is_graded(tmp_path):
    """Before: "Affine's parameters are b_out, w_xxx...; the assignment expects b_out, w_xxx...x", 0/3 for a correct
    layer. Now 3/3, and the name is shown cut, the cut said after its code span."""
    assert len(LONG) == 150
    src = PLAIN.replace("w_in[0]", LONG)
    r, data = _grade(tmp_path, {"layers.py": src}, _test_with(REF.replace("w_in[0]", LONG)))
    (t,) = data["tests"]
    assert (r.status, t["score"], t["max_score"]) == ("graded", 3.0, 3.0), t["output"]
    cut = (f"`d{LONG[:119]}`... (cut: 151 characters; ends `{LONG[-16:]}`; sha256 "  # (verify36 F9: the end, a hash)
           f"{hashlib.sha256(('d' + LONG).encode()).hexdigest()[:8]})")
    assert t["output"] == f"All checked: `dX`, {cut}, `db_out` ok.", t["output"]


def test_a_wrong_gradient_of_a_long_named_parameter_costs_its_point(tmp_path):
    """Its gradient halved: that part alone is wrong (2 of 3 points), named by its cut name."""
    src = PLAIN.replace('self.grads["w_in[0]"] = self.X.T @ dY', 'self.grads["w_in[0]"] = 0.5 * self.X.T @ dY')
    r, data = _grade(tmp_path, {"layers.py": src.replace("w_in[0]", LONG)}, _test_with(REF.replace("w_in[0]", LONG)))
    (t,) = data["tests"]
    assert (r.status, t["score"]) == ("graded", 2.0), t["output"]
    assert t["output"].startswith(f"- `d{LONG[:119]}`... (cut: 151 characters; ends `{LONG[-16:]}`; sha256 "), \
        t["output"]
    assert "): **wrong**" in t["output"].splitlines()[0], t["output"]
    assert _parts(t["output"]) == {"dX": "ok", "db_out": "ok"}, t["output"]  # (the cut one read above)


# A file whose import prints a line with backticks and HTML, then ends its process: the first test says so, quoting
# the printed line (the submission's); the second says the same and that it happened "when `layers.py` was first
# imported" (the grader's code span).
ENDS_AT_IMPORT = 'import os\nprint("see `evil` and <b>x</b>", flush=True)\nos._exit(3)\n' + PLAIN


def test_the_graders_code_span_is_code_and_the_submissions_backticks_are_text(tmp_path):
    """Before: "This happened when \\`layers.py\\` was first imported": the grader's span rendered as backticks."""
    mistune = pytest.importorskip("mistune")
    r, data = _grade(tmp_path, {"layers.py": ENDS_AT_IMPORT}, HOSTILE_TEST)
    first, later = (mistune.html(t["output"]) for t in data["tests"])
    assert [t["score"] for t in data["tests"]] == [0.0, 0.0], data
    for html in (first, later):  # the submission's printed line: its own text, no code, no tag
        assert "Last output: 'see `evil` and &lt;b&gt;x&lt;/b&gt;'." in html, html
        assert "<code>evil</code>" not in html and "<b>" not in html, html
    assert "This happened when <code>layers.py</code> was first imported" in later, later
    assert "uses <code>layers.py</code> fails for this reason" in later, later
    assert later.count("<code>") == 2, later


def test_a_protocol_hint_s_code_is_code(tmp_path):
    """A forward that stores its output in self.out and returns None: check's hint (a ProtocolError raised in the
    grader's process) reaches results.json with its code as code spans (before: \\`return self.out\\`)."""
    mistune = pytest.importorskip("mistune")
    src = PLAIN.replace('        return X @ self.params["w_in[0]"] + self.params["b_out"]\n',
                        '        self.out = X @ self.params["w_in[0]"] + self.params["b_out"]\n')
    assert "self.out =" in src
    r, data = _grade(tmp_path, {"layers.py": src}, _test_with(REF))
    (t,) = data["tests"]
    html = mistune.html(t["output"])
    assert "end forward with <code>return</code> of it (e.g. <code>return self.out</code>), or store it as " \
           "self.output." in html, (t["output"], html)


def test_a_mark_in_a_submissions_message_forges_no_code_span(tmp_path):
    """A forward raising with gradcheck's mark around its backticks: the sandbox writes the mark as the text
    ``\\u2060`` (printable), so the message's backticks stay text."""
    mistune = pytest.importorskip("mistune")
    src = PLAIN.replace("        self.X = X\n", '        raise ValueError("\\u2060`forged\\u2060` <i>")\n', 1)
    assert "forged" in src
    r, data = _grade(tmp_path, {"layers.py": src}, HOSTILE_TEST.split("\n\n@pytest.mark.points(2)")[0])
    (t,) = data["tests"]
    html = mistune.html(t["output"])
    assert "ValueError: \\u2060`forged\\u2060` &lt;i&gt;" in html, (t["output"], html)
    assert "<code>" not in html and "<i>" not in html, html


def test_markdown_text_renders_marked_spans_only():
    """The one Markdown rule: a marked span is a code span whatever it quotes (a backtick in it too); an unpaired
    mark's backtick, and every other backtick, is text; str() of an error drops the marks."""
    mistune = pytest.importorskip("mistune")
    from gradcheck.errors import UsageError, code
    from gradcheck.grading.static import markdown_text

    text = f"run {code('gradcheck grade')} on `x`, then {code('a`b')}{code('c')} \\" + code("d") + " \u2060`end"
    assert str(UsageError(text)) == "run `gradcheck grade` on `x`, then `a`b``c` \\`d` `end"
    html = mistune.html(markdown_text(text))
    assert html.strip() == ("<p>run <code>gradcheck grade</code> on `x`, then <code>a`b</code> <code>c</code> "
                            "\\<code>d</code> `end</p>"), (markdown_text(text), html)


URLS = "see http://e.vil/x, (https://e.vil/y) www.e.vil.com and mail a.b@e.vil.com"
URL_KEY = "https://e.vil/w"
WITH_URLS = PLAIN.replace("w_in[0]", URL_KEY) + f"""

class Raising(Affine):
    def __init__(self, n_in, n_out):
        self.params = {{"w_in[0]": np.ones((n_in, n_out)), "b_out": np.zeros(n_out)}}
        self.grads = {{}}

    def forward(self, X, training=False):
        raise ValueError({URLS!r})
"""


def test_bare_urls_of_a_submission_link_nowhere_and_read_as_written(tmp_path):
    """A parameter named like a URL (its names quoted as text in the message) and an error message with a URL, a www
    address and an email: rendered with mistune's URL plugin (GFM-style bare links), none is a link, each reads as
    written; the raw Markdown breaks GFM's www and email patterns too (an escaped character is its own text)."""
    mistune = pytest.importorskip("mistune")
    md = mistune.create_markdown(plugins=["url"])
    assert "<a " in md(URLS), md(URLS)  # the plugin links a bare URL
    r, data = _grade(tmp_path, {"layers.py": WITH_URLS}, HOSTILE_TEST)
    affine, raising = (t["output"] for t in data["tests"])
    assert [t["score"] for t in data["tests"]] == [0.0, 0.0], data
    html = md(raising)
    assert "<a " not in html and "<a " not in md(affine), (raising, affine)
    assert "Affine's parameters are b_out, https\\://e\\.vil/w;" in affine, affine  # (the reference's: w_in[0])
    assert f"ValueError: {URLS}" in html, html  # as written
    assert "https://e.vil/w" in md(affine), md(affine)
    assert "www\\.e\\.vil\\.com" in raising and "a\\.b\\@e\\.vil\\.com" in raising, raising  # (fix37b: and every
    assert "http\\://e\\.vil/x" in raising, raising  # dot before a letter, for markdown-it's linkify of bare domains)


# The plain layer whose forward arms a 0.2 s timer; the timer's handler raises, by then while the child waits (the
# tests wait 0.5 s after a forward; 0.2 s leaves the child time to reply and reach its wait on a loaded machine).
HANDLER = PLAIN + """
import signal


def _boom(signum, frame):
    raise ValueError("raised in the handler")


signal.signal(signal.SIGALRM, _boom)
_forward = Affine.forward


def _timed(self, X, training=False):
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    return _forward(self, X, training)


Affine.forward = _timed
"""


def _says_the_handler_raised(text: str, kind: str = "ValueError") -> None:
    assert "file descriptors" not in text and "sys.exit" not in text, text
    assert "the sandbox process ended while it waited for this request, before running it: the submission's code " \
           f"raised {kind}: raised in the handler (at layers.py:" in text, text
    assert "in _boom; the handler of SIGALRM) between two requests" in text, text


def waiting_test(tmp_path):
    """The staff test of :func:`_plain_test` calling the loaded layer's forward once (which arms the timer in the
    sandbox child), then waiting 0.5 s before it grades: the handler fires while the child waits, so the grading's
    first request after the wait (:data:`AFTER_THE_WAIT`) finds the child ended. Before (timer47), the test waited
    after ``student.layer`` alone, which runs no forward (the layer's probe runs with the grading's own input, after
    the wait): the timer was armed only by the grading's forwards, and fired only if the grader took longer than it
    between two of them, so a fast grading (the zygote's, or a quiet machine's) ended first, 3/3 for 0/3."""
    text = _plain_test(tmp_path)
    old = '    grade.layer_gradients(layer,'
    assert text.count(old) == 1
    return text.replace(old, '    assert layer.forward(np.ones((5, 4))).shape == (5, 3)  # in the child: arms the timer\n'
                             '    __import__("time").sleep(0.5)  # the child waits: the timer fires\n' + old)


#: The grading's first request after :func:`waiting_test`'s wait (the layer built again with the test's input as its
#: probe): the one that finds the child ended, as the timer fired during the wait, not in a later gap of the grading
AFTER_THE_WAIT = ("importing layers.py and building layers.py::Affine(n_in=4, n_out=3): the sandbox process ended while "
                  "it waited for this request")


def test_a_signal_handler_raising_while_the_child_waits_is_named(tmp_path):
    """Graded: the next request's shared memory could not be sent (a broken pipe), which the grader blamed on file
    descriptors; now the test's output names the exception, where it was raised and the signal."""
    r, data = _grade(tmp_path, {"layers.py": HANDLER}, waiting_test(tmp_path))
    (t,) = data["tests"]
    assert (r.status, t["score"]) == ("graded", 0.0), t["output"]
    assert AFTER_THE_WAIT in shown(t["output"]), t["output"]
    _says_the_handler_raised(shown(t["output"]))


def next_call_error(tmp_path, source: str, isolation: str = "process"):
    """The SandboxError of the second forward of ``source``'s Affine, sandboxed: the first returns, then the child
    waits 0.5 s for the next request (a 0.2 s timer of the first forward's fires meanwhile)."""
    import numpy as np

    from gradcheck.sandbox import Sandbox, SandboxError

    (tmp_path / "layers.py").write_text(source)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20, hostile=True,
                 isolation=isolation) as sb:
        sb.import_file("layers.py")
        layer = sb.load_layer("layers.py", "Affine", {"n_in": 4, "n_out": 3})
        assert layer.forward(np.ones((2, 4))).shape == (2, 3)
        time.sleep(0.5)  # the timer fires (0.2 s) while the child waits for the next request
        with pytest.raises(SandboxError) as err:
            layer.forward(np.ones((2, 4)))
    return err.value


@pytest.mark.parametrize("kind", ["ValueError", "EOFError"])
def test_the_sandbox_names_the_handler_s_exception_on_the_next_call(tmp_path, kind):
    """The sandbox's own API: the first forward returns; the handler fires while the child waits; the next call
    raises SandboxError naming it (reason "exception"), whichever pipe the grader found broken first. An EOFError of
    the handler's is not the end of the grader's input (sigfix47: the child exited 0, "Does the code call
    sys.exit...")."""
    err = next_call_error(tmp_path, HANDLER.replace("raise ValueError(", f"raise {kind}("))
    assert err.reason == "exception", (err.reason, str(err))
    _says_the_handler_raised(str(err), kind)


@pytest.mark.parametrize("isolation", ["process", "namespaces"])
def test_a_timer_fires_in_the_sandbox_whatever_signals_the_grader_blocks(tmp_path, isolation):
    """suitetime44: a signal mask is kept across fork and exec, so a sandbox started by a process or thread of the
    grader's that blocks SIGALRM ran the submission with SIGALRM blocked and its timer never fired (the symptom of the
    two handler tests with the zygote-forked grading child in CI: 3 points for 0). The child unblocks every signal
    before any submitted code runs, as a process started anew by a shell has it."""
    from gradcheck.sandbox import support

    if isolation == "namespaces" and support()[0] == "none":
        pytest.skip("no namespaces on this machine")
    old = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
    try:
        err = next_call_error(tmp_path, HANDLER, isolation)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    assert err.reason == "exception", err.reason
    _says_the_handler_raised(str(err))


# timer47: a signal that came after the reply was sent, while the child's signals were still sealed (the few
# milliseconds before its wait), had its handler run by the wait's _unseal, which dropped the handler's exception: the
# child lived on and the grading went on (full marks for the submission whose timer landed 1 ms earlier). Made certain
# here without a timer: the submission's stderr.flush, which the child calls just before it sends the reply, blocks
# SIGALRM and raises it, so it is pending when the reply has gone.
PENDING_AT_REPLY = HANDLER.replace("\nAffine.forward = _timed\n", '''

class _Flush:
    def __init__(self, stream):
        self.stream, self.armed = stream, False

    def write(self, text):
        return self.stream.write(text)

    def flush(self):
        if self.armed:
            self.armed = False
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
            signal.raise_signal(signal.SIGALRM)
        return self.stream.flush()


def _pending(self, X, training=False):
    import sys
    sys.stderr = sys.stderr if isinstance(sys.stderr, _Flush) else _Flush(sys.stderr)
    sys.stderr.armed = True
    return _forward(self, X, training)


Affine.forward = _pending
''')


def pending_second_forward(tmp_path, source: str, policy: bool = True):
    """The SandboxError of the second forward of ``source``'s Affine (:data:`PENDING_AT_REPLY`'s kind), sandboxed
    with (``policy``) or without the staff policy; None when it returned."""
    import numpy as np

    from gradcheck.sandbox import Sandbox, SandboxError

    assert source.count("Affine.forward = _pending") == 1
    (tmp_path / "layers.py").write_text(source)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20, hostile=True) as sb:
        sb.import_file("layers.py")
        layer = sb.load_layer("layers.py", "Affine", {"n_in": 4, "n_out": 3}, no_forward_in_backward=policy)
        assert layer.forward(np.ones((2, 4))).shape == (2, 3)
        try:
            assert layer.forward(np.ones((2, 4))).shape == (2, 3)
        except SandboxError as exc:
            return exc
    return None


@pytest.mark.parametrize("kind", ["ValueError", "EOFError"])
def test_a_signal_pending_when_the_reply_is_sent_is_named_as_the_wait_s(tmp_path, kind):
    """Under the staff policy (no_forward_in_backward, as graded): the handler runs as the child starts to wait; the
    next call says it ended the child while it waited, as a handler whose signal came during the wait. An EOFError
    of the handler's is named too (sigfix47: it was read as the end of input, the child exited 0 and the grader
    asked whether forward called sys.exit)."""
    err = pending_second_forward(tmp_path, PENDING_AT_REPLY.replace("raise ValueError(", f"raise {kind}("))
    assert err is not None and err.reason == "exception", (err and err.reason, str(err))
    _says_the_handler_raised(str(err), kind)


def test_without_the_staff_policy_a_signal_the_submission_blocked_stays_blocked(tmp_path):
    """sigfix47: the wait's unseal (timer47) is the staff policy's, whose windows seal the signals; without the
    policy (``gradcheck check``) the child leaves the mask as the submission set it: the SIGALRM it blocked itself
    stays pending and its handler never runs, so the second forward returns (it ended the child before)."""
    assert pending_second_forward(tmp_path, PENDING_AT_REPLY, policy=False) is None


def test_a_handler_raising_after_the_read_is_named_as_the_wait_s(tmp_path):
    """verify47b F3: a handler whose signal lands after the request was read, while the child decodes it, was blamed
    on forward ("raised ValueError ... Expected forward to return") or on the sandbox's own code (exit 70). Made
    certain here: the submission's numpy.frombuffer, which the child's decode calls, raises SIGALRM once."""
    source = HANDLER.replace("\nAffine.forward = _timed\n", '''

def _pending(self, X, training=False):
    frombuffer = np.frombuffer

    def _raising(*args, **kw):
        np.frombuffer = frombuffer
        signal.raise_signal(signal.SIGALRM)
        return frombuffer(*args, **kw)
    np.frombuffer = _raising
    return _forward(self, X, training)


Affine.forward = _pending
''')
    err = pending_second_forward(tmp_path, source, policy=False)
    assert err is not None and err.reason == "exception", (err and err.reason, str(err))
    assert "file descriptors" not in str(err) and "sys.exit" not in str(err), str(err)
    assert "the sandbox process ended while it waited for this request, before running it: the submission's code " \
           "raised ValueError: raised in the handler (at layers.py:" in str(err)
    assert "in _boom) between two requests" in str(err), str(err)
