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
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_grading_fixg36 import HANDLER  # noqa: E402
from test_grading_keys_s35 import _grade, _plain_test  # noqa: E402

#: fixg36's layer whose forward arms a 50 ms timer, its handler calling os._exit(3) instead of raising
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
    r, data = _grade(tmp_path, {"layers.py": EXITING}, _plain_test(tmp_path))
    (t,) = data["tests"]
    assert (r.status, t["score"]) == ("graded", 0.0), t["output"]
    _says_the_handler_exited(t["output"].replace("\\_", "_"))


@pytest.mark.parametrize("isolation", ["process", "namespaces"])
def test_the_sandbox_names_the_handler_s_os_exit_on_the_next_call(tmp_path, isolation):
    """The sandbox's own API, run directly and under bubblewrap (whose exit code is the child's): the handler fires
    while the child waits; the next call raises SandboxError naming the exit (reason "exception")."""
    import numpy as np

    from gradcheck.sandbox import Sandbox, SandboxError, support

    if isolation == "namespaces" and support()[0] == "none":
        pytest.skip("no namespaces on this machine")
    (tmp_path / "layers.py").write_text(EXITING)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20, hostile=True,
                 isolation=isolation) as sb:
        sb.import_file("layers.py")
        layer = sb.load_layer("layers.py", "Affine", {"n_in": 4, "n_out": 3})
        assert layer.forward(np.ones((2, 4))).shape == (2, 3)
        time.sleep(0.5)  # the timer fires (50 ms) while the child waits for the next request
        with pytest.raises(SandboxError) as err:
            layer.forward(np.ones((2, 4)))
    assert err.value.reason == "exception", (err.value.reason, str(err.value))
    _says_the_handler_exited(str(err.value))


def test_os_exit_inside_a_call_is_still_the_call_s_exit(tmp_path):
    """Control: os._exit(3) in forward itself (not while the child waits) keeps the message of an exit in a call."""
    import numpy as np

    from gradcheck.sandbox import Sandbox, SandboxError

    (tmp_path / "layers.py").write_text(EXITING.replace("signal.setitimer(signal.ITIMER_REAL, 0.05)",
                                                        "import os; os._exit(3)"))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=20, hostile=True,
                 isolation="process") as sb:
        sb.import_file("layers.py")
        with pytest.raises(SandboxError) as err:  # the load's probe runs forward already
            sb.load_layer("layers.py", "Affine", {"n_in": 4, "n_out": 3}).forward(np.ones((2, 4)))
    assert err.value.reason == "exit", (err.value.reason, str(err.value))
    assert "ended the sandbox process with exit code 3, without returning. Does the code call sys.exit, exit() or " \
           "os._exit?" in str(err.value), str(err.value)
