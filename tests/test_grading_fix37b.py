"""Session 36's leftovers in the sandbox and the grader (note36 items 3 and 7), fixed in session 37 (fix37b):

- A submission's signal handler that calls ``os._exit(N)`` while the sandbox child waits for the next request ended the
  child with exit code N, and the grader said "ended the sandbox process with exit code N, without returning. Does the
  code call sys.exit, exit() or os._exit?", as for an exit inside a call. ``os._exit`` raises no audit event, so the
  child puts :func:`gradcheck._sandbox_child._exit_said` in its place: while the child waits it says, on stderr, which
  line called it and from which signal's handler, then ends the process with N, and the grader tells it as fixg36
  tells a handler that raises ("the handler of SIGALRM").
"""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_grading_fixg36 import AFTER_THE_WAIT, HANDLER, next_call_error, waiting_test  # noqa: E402
from test_grading_keys_s35 import _grade, shown  # noqa: E402

#: fixg36's layer whose forward arms a 0.2 s timer, its handler calling os._exit(3) instead of raising
EXITING = HANDLER.replace('''def _boom(signum, frame):
    raise ValueError("raised in the handler")''', '''def _boom(signum, frame):
    import os
    os._exit(3)''')


def _says_the_handler_exited(text: str) -> None:
    assert "Does the code call sys.exit" not in text and "file descriptors" not in text, text
    assert ("the sandbox process ended while it waited for this request, before running it: the submission's code "
            "called os._exit(3) (at layers.py:") in text, text
    assert ("in _boom; the handler of SIGALRM), which ended the process with exit code 3, between two requests"
            in text), text


def test_a_signal_handler_calling_os_exit_while_the_child_waits_is_named(tmp_path):
    """Graded: the row said "ended the sandbox process with exit code 3 ... Does the code call sys.exit, exit() or
    os._exit?"; now it names the call, its line and the signal whose handler made it."""
    assert EXITING != HANDLER
    r, data = _grade(tmp_path, {"layers.py": EXITING}, waiting_test(tmp_path))
    (t,) = data["tests"]
    assert (r.status, t["score"]) == ("graded", 0.0), t["output"]
    assert AFTER_THE_WAIT in shown(t["output"]), t["output"]
    _says_the_handler_exited(shown(t["output"]))


@pytest.mark.parametrize("isolation", ["process", "namespaces"])
def test_the_sandbox_names_the_handler_s_os_exit_on_the_next_call(tmp_path, isolation):
    """The sandbox's own API, run directly and under bubblewrap (whose exit code is the child's): the handler fires
    while the child waits; the next call raises SandboxError naming the exit (reason "exception")."""
    from gradcheck.sandbox import support

    if isolation == "namespaces" and support()[0] == "none":
        pytest.skip("no namespaces on this machine")
    err = next_call_error(tmp_path, EXITING, isolation)
    assert err.reason == "exception", (err.reason, str(err))
    _says_the_handler_exited(str(err))


def test_os_exit_inside_a_call_is_still_the_call_s_exit(tmp_path):
    """Control: os._exit(3) in forward itself (not while the child waits) keeps the message of an exit in a call."""
    import numpy as np

    from gradcheck.sandbox import Sandbox, SandboxError

    assert EXITING.count("signal.setitimer(signal.ITIMER_REAL, 0.2)") == 1
    (tmp_path / "layers.py").write_text(EXITING.replace("signal.setitimer(signal.ITIMER_REAL, 0.2)",
                                                        "import os; os._exit(3)"))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20, hostile=True,
                 isolation="process") as sb:
        sb.import_file("layers.py")
        with pytest.raises(SandboxError) as err:  # the load's probe runs forward already
            sb.load_layer("layers.py", "Affine", {"n_in": 4, "n_out": 3}).forward(np.ones((2, 4)))
    assert err.value.reason == "exit", (err.value.reason, str(err.value))
    assert "ended the sandbox process with exit code 3, without returning. Does the code call sys.exit, exit() or " \
           "os._exit?" in str(err.value), str(err.value)


# note34/note35/note36 item 7: the ``tape`` and ``sublayer`` requests were not counted under the staff policy (no
# forward in backward): code of the submission's that ran in them called forward as often as it liked, and a sub-layer
# the diagnosis of a failed test reads as a layer of its own was checked without the policy. Now each is counted as
# the other requests are (the grader's own calls of forward taken off as a forward's and a load probe's), and a sub-layer
# inherits the model's policy.

#: A model whose one layer (``Lin``) takes central differences of its own forward inside forward (redteam30 H1's
#: trick: a Jacobian stored for backward to apply) whenever it is called on its own, not from the model's forward:
#: when the grader reads it as a layer of its own (a sublayer request) or runs it on autoprop tensors (``tape``).
NESTED = '''
import numpy as np

RUNNING = [False]


class Lin:
    def __init__(self, n=5):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((n, n)) / 3, "b": rng.standard_normal(n)}
        self.grads, self.inside, self.jac = {}, False, None

    def forward(self, X, training=False):
        if not self.inside and (WHEN):
            self.inside = True
            try:
                flat = np.array(X, dtype=float).ravel()
                cols = []
                for i in range(flat.size):
                    e = np.zeros_like(flat)
                    e[i] = 1e-6
                    up = self.forward((flat + e).reshape(X.shape))
                    down = self.forward((flat - e).reshape(X.shape))
                    cols.append((up - down) / 2e-6)
                self.jac = cols
            finally:
                self.inside = False
        self.X = X
        return X @ self.params["W"] + self.params["b"]

    def backward(self, dY):
        BACKWARD


class Model:
    def __init__(self):
        self.lin = Lin()
        self.layers = [self.lin]
        self.params = self.lin.params
        self.grads = self.lin.grads

    def forward(self, X, training=False):
        RUNNING[0] = True
        try:
            return self.lin.forward(X)
        finally:
            RUNNING[0] = False

    def backward(self, dY):
        dX = self.lin.backward(dY)
        self.grads = self.lin.grads
        return 2 * dX  # wrong: so a check of the model reads its layers one by one
'''
_HONEST = '''self.grads = {"W": self.X.T @ dY, "b": dY.sum(axis=0)}
        return dY @ self.params["W"].T'''
#: Lin's backward as central differences of its forward (called from backward: the policy's plain case)
_DIFFERENCES = '''g = {"W": np.zeros_like(self.params["W"]), "b": np.zeros_like(self.params["b"])}
        for k, a in self.params.items():
            for i in np.ndindex(a.shape):
                old = a[i]
                a[i] = old + 1e-6
                up = np.sum(self.forward(self.X) * dY)
                a[i] = old - 1e-6
                down = np.sum(self.forward(self.X) * dY)
                a[i] = old
                g[k][i] = (up - down) / 2e-6
        self.grads = g
        return dY @ self.params["W"].T'''


def _nested(when, backward=_HONEST):
    return NESTED.replace("WHEN", when).replace("BACKWARD", backward)


def _policy_error(err) -> str:
    assert err.value.reason == "policy", (err.value.reason, str(err.value))
    return str(err.value)


def test_a_sublayer_request_is_counted_under_the_policy(tmp_path):
    """Before: the sub-layer's forward, probed in the child as a layer of its own, took 50 differences of itself
    (its Jacobian kept), and the model's proxy returned the sub-layer; now the policy fails that request."""
    import numpy as np

    from gradcheck.sandbox import Sandbox, SandboxError

    (tmp_path / "layers.py").write_text(_nested("not RUNNING[0]"))
    X = np.random.default_rng(0).standard_normal((4, 5))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20, hostile=True,
                 isolation="process") as sb:
        model = sb.load_layer("layers.py", "Model", {}, probe_inputs=[X], no_forward_in_backward=True)
        assert model.forward(X).shape == (4, 5)  # the model's own forward: Lin called from it, no differences
        with pytest.raises(SandboxError) as err:
            model.sublayer(0, [X], False)
    text = _policy_error(err)
    assert "Reading one of Model's layers as a layer of its own (on the input it gets in Model) called a layer's " \
           "forward" in text and "beyond the grader's calls" in text, text
    assert "This assignment requires a backward derived by hand" in text, text


def test_a_sublayer_checked_inside_a_model_keeps_the_model_s_policy(tmp_path):
    """Before: the sub-layer's proxy had the policy off, so its backward made of central differences of its forward
    passed in the sub-layer's check; now its backward request is counted and fails the policy. Control: without the
    policy the same calls run."""
    import numpy as np

    from gradcheck.sandbox import Sandbox, SandboxError

    (tmp_path / "layers.py").write_text(_nested("False", _DIFFERENCES))
    X = np.random.default_rng(0).standard_normal((4, 5))
    for policy in (False, True):
        with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20, hostile=True,
                     isolation="process") as sb:
            model = sb.load_layer("layers.py", "Model", {}, probe_inputs=[X], no_forward_in_backward=policy)
            sub = model.sublayer(0, [X], False)
            assert sub is not None and sub.no_forward_in_backward is policy
            Y = sub.forward(X)
            if not policy:
                dX = sub.backward(np.ones_like(Y))
                assert np.allclose(dX, np.ones_like(Y) @ sub.params["W"].T)
                continue
            with pytest.raises(SandboxError) as err:
                sub.backward(np.ones_like(Y))
            text = _policy_error(err)
            assert "Lin.backward called Lin.forward 60 time(s) while computing the gradient." in text, text


def test_a_tape_request_is_counted_under_the_policy(tmp_path):
    """``--tape``'s request (a sandbox that lets autoprop in: never the grader's, but the policy is the API's too):
    before, the layer's forward took differences of itself when run on autoprop tensors, uncounted; now the policy
    fails the tape request. Control: the same layer without the policy gives its tape gradients."""
    import numpy as np

    from gradcheck.sandbox import Sandbox, SandboxError
    from gradcheck.student_tape import StudentTape

    (tmp_path / "layers.py").write_text(_nested("type(X).__module__.startswith('autoprop')").replace(
        "flat = np.array(X, dtype=float).ravel()", "flat = X.numpy().ravel()"))
    X = np.random.default_rng(0).standard_normal((4, 5))
    for policy in (False, True):
        with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20,
                     allow_packages=("autoprop", "manualprop")) as sb:
            lin = sb.load_layer("layers.py", "Lin", {}, probe_inputs=[X], no_forward_in_backward=policy)
            if not policy:
                meta = StudentTape(lin)._request([X], [np.ones((4, 5))], False)
                assert meta["grads"] and "forward_calls" not in meta, meta
                continue
            with pytest.raises(SandboxError) as err:
                StudentTape(lin)._request([X], [np.ones((4, 5))], False)
            text = _policy_error(err)
            assert "Lin.forward on autoprop tensors (--tape) called Lin.forward again 40 time(s)." in text, text


def test_honest_tape_and_sublayer_requests_pass_under_the_policy(tmp_path):
    """Control: an honest layer's tape request and an honest model's sub-layer (read, run, its backward) count 0."""
    import numpy as np

    from gradcheck.sandbox import Sandbox
    from gradcheck.student_tape import StudentTape

    (tmp_path / "layers.py").write_text(_nested("False"))
    X = np.random.default_rng(0).standard_normal((4, 5))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20,
                 allow_packages=("autoprop", "manualprop")) as sb:
        lin = sb.load_layer("layers.py", "Lin", {}, probe_inputs=[X], no_forward_in_backward=True)
        meta = StudentTape(lin)._request([X], [np.ones((4, 5))], False)
        assert meta["forward_calls"] == 0, meta
        model = sb.load_layer("layers.py", "Model", {}, probe_inputs=[X], no_forward_in_backward=True)
        sub = model.sublayer(0, [X], False)
        assert sub is not None and sub.no_forward_in_backward
        Y = sub.forward(X)
        assert np.allclose(sub.backward(np.ones_like(Y)), np.ones_like(Y) @ sub.params["W"].T)
        assert sub.forward_calls_in_backward == 0


# note36 item 3: markdown-it's linkify (linkify-it's fuzzy links: a bare domain of a known top-level domain, no scheme,
# no www) linked ``e.vil.com`` in a submission's message, and ``layers.py`` (Paraguay's domain) in the grader's own
# text: only mistune's URL plugin was tested. markdown_text now escapes a dot between a word's character and a letter
# too, and each test renders under every renderer installed.

def _mistune():
    mistune = pytest.importorskip("mistune")
    return mistune.create_markdown(plugins=["url"])  # GFM's extended autolinks (www, scheme, email)


def _markdown_it():
    markdown_it = pytest.importorskip("markdown_it")
    pytest.importorskip("linkify_it")  # (markdown-it-py[linkify])
    return markdown_it.MarkdownIt("gfm-like").render  # tables, strikethrough and linkify on


RENDERERS = [pytest.param(_mistune, id="mistune"), pytest.param(_markdown_it, id="markdown-it")]
#: a submission's text with a bare domain, a path on one, a subdomain chain, an upper-case one, a protocol-relative
#: address and Paraguay's ``.py``: each auto-linked by linkify-it; the grader's own ``layers.py`` beside them
BARE = "log in at e.vil.com or EVIL.COM/appeal, sub.e.vil.co.uk, //e.vil.com/x; see layers.py and 1.5e-06"


@pytest.mark.parametrize("renderer", RENDERERS)
def test_bare_domains_in_text_link_nowhere_and_read_as_written(renderer):
    """Before: markdown-it linked e.vil.com, EVIL.COM/appeal, sub.e.vil.co.uk, //e.vil.com/x and layers.py (mistune's
    URL plugin links none of them). Now neither renderer makes a link, and the text reads as written."""
    import html as html_module

    from gradcheck.errors import code
    from gradcheck.grading.static import markdown_text

    render = renderer()
    text = "ValueError: " + BARE + " (run " + code("gradcheck check layers.py::Linear") + ")"
    html = render(markdown_text(text))
    assert "<a " not in html, (markdown_text(text), html)
    assert f"<p>ValueError: {BARE} (run <code>gradcheck check layers.py::Linear</code>)</p>" == \
        html_module.unescape(html).strip(), html


@pytest.mark.parametrize("renderer", RENDERERS)
def test_a_submission_s_bare_domain_in_results_json_links_nowhere(tmp_path, renderer):
    """Graded: a forward raising with bare domains in its message; results.json's output under each renderer has no
    link and shows the message as written."""
    import html as html_module

    from test_grading_keys_s35 import HOSTILE_TEST, PLAIN

    render = renderer()
    src = PLAIN.replace("        self.X = X\n", f"        raise ValueError({BARE!r})\n", 1)
    assert BARE in src
    r, data = _grade(tmp_path, {"layers.py": src}, HOSTILE_TEST.split("\n\n@pytest.mark.points(2)")[0])
    (t,) = data["tests"]
    html = render(t["output"])
    assert t["score"] == 0.0 and "<a " not in html, (t["output"], html)
    assert f"ValueError: {BARE}" in html_module.unescape(html), html


@pytest.mark.parametrize("renderer", RENDERERS)
def test_the_graders_own_code_in_its_messages_renders_as_code(renderer):
    """The grader's messages that quoted code in plain backticks (escaped by markdown_text, so shown as backticks):
    a backward-only loss's fix, a notebook's export command, the runner's fixture names and ulimit. Now each is
    gradcheck's own code span (errors.code): code in results.json's Markdown, the same backticks in str(error)."""
    import html as html_module

    from gradcheck import _validation
    from gradcheck.errors import UsageError, marked
    from gradcheck.grading.static import markdown_text
    from gradcheck.sandbox import _backward_only_loss

    render = renderer()
    loss = UsageError(_backward_only_loss("Activation_Softmax_Loss_CategoricalCrossentropy", ["backward"]))
    with pytest.raises(UsageError) as notebook:
        _validation.parse_target("lab.ipynb::Linear")
    for err, span in ((loss, "def forward(self, inputs, y_true): softmax = Activation_Softmax();"),
                      (notebook.value, "jupyter nbconvert --to script lab.ipynb")):
        assert f"`{span}" in str(err) and "\u2060" not in str(err), str(err)
        html = html_module.unescape(render(markdown_text(marked(err))))
        assert f"<code>{span}" in html and "`" not in html and "<a " not in html, html


#: review34 finding 2 (note34-36 item 7: "the policy counter replaceable in-process"): the policy's count of forward
#: calls is taken in the sandbox child, the submission's own process, whose Python reaches everything: this submission
#: replaces the child's ``_count_calls`` (found as ``sys.modules["__main__"]``) at import by one that runs the real
#: count and reports 0, and its backward is central differences of its forward (test_grading_policy's CHEAT).
TAMPERED = """
import sys as _sys

_child = _sys.modules.get("__main__")
if _child is not None and callable(getattr(_child, "_count_calls", None)):
    _real = _child._count_calls

    def _zero(*args, **kw):
        return _real(*args, **kw)[0], 0

    _child._count_calls = _zero
"""


@pytest.mark.xfail(strict=True, reason="not fixed (fix37b): the count is the child's word, and the child's Python is "
                   "the submission's; no count the child's Python can reach is a limit, and the parent sees no Python "
                   "call across the process boundary (docs/gradescope.md, 'What is isolated from what')")
def test_a_submission_that_replaces_the_child_s_counter_still_fails_the_policy(tmp_path):
    """The marked test (4 of 7 points) must fail for a backward of central differences, whatever the child reports:
    today it scores 7/7 (the control without the replacement, test_grading_policy: 3/7)."""
    from test_grading_policy import CHEAT, graded

    r, data = graded(tmp_path, CHEAT + TAMPERED)
    assert r.score == pytest.approx(3.0), [(t["score"], t["output"][:200]) for t in data["tests"]]
