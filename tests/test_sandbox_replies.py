"""gradcheck.sandbox: what the parent makes of replies no other test produces.

A native crash, a forward or a loss's backward that returns None, a loss that returns an array,
``params`` the checker cannot perturb, a function pair loaded as a loss, and ``forward_many``
called wrongly: each must end with the error that names it, never a silent result.
"""

import os
import textwrap
import time

import numpy as np
import pytest

from gradcheck.errors import GradientShapeError, ProtocolError, UsageError
from gradcheck.sandbox import Sandbox, SandboxError, sibling_files, support

LINEAR = """
import numpy as np

class Linear:
    def __init__(self):
        self.params = PARAMS
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return FORWARD

    def backward(self, dY):
        self.grads = {"W": dY.T @ self.X}
        return dY @ self.params["W"]
"""
GOOD_PARAMS = '{"W": np.ones((3, 5))}'
GOOD_FORWARD = 'X @ self.params["W"].T'

MSE = """
import numpy as np

class MSE:
    def forward(self, y_true, y_pred):
        self.d = y_pred - y_true
        return FORWARD

    def backward(self):
        BACKWARD
"""


def sandbox(tmp_path, source):
    (tmp_path / "student.py").write_text(textwrap.dedent(source))
    return Sandbox(files=[str(tmp_path / "student.py")], timeout=5)


def linear(tmp_path, params=GOOD_PARAMS, forward=GOOD_FORWARD):
    return sandbox(tmp_path, LINEAR.replace("PARAMS", params).replace("FORWARD", forward))


def test_a_native_crash_is_named_by_its_signal(tmp_path):
    with linear(tmp_path, forward="__import__('os').abort()") as sb:
        layer = sb.load_layer("student.py", "Linear")
        with pytest.raises(SandboxError, match=r"Linear\.forward.* killed by SIGABRT") as ei:
            layer.forward(np.ones((2, 5)))
        assert ei.value.reason == "signal"
        with pytest.raises(SandboxError, match="stopped earlier"):  # the sandbox stays dead
            layer.forward(np.ones((2, 5)))


def test_a_forward_returning_none_is_refused(tmp_path):
    """tester10 T9: a forward that stores its output (self.output, Neural Networks from Scratch) and returns None
    was a wrong result (exit 1) "... the error is in forward"; it is a protocol gradcheck cannot read (exit 3),
    told how to return it."""
    with linear(tmp_path, forward="None") as sb:
        layer = sb.load_layer("student.py", "Linear")
        with pytest.raises(ProtocolError, match="returned None, so there is no output to check") as ei:
            layer.forward(np.ones((2, 5)))
        assert ei.value.exit_code == 3 and "the Y it stores in self.output" in " ".join(str(ei.value).split())


def test_cli_a_forward_storing_self_output_is_read_whatever_backward_returns(tmp_path):
    """Neural Networks from Scratch's pair (self.output, self.dinputs) is read there (tester10 T9); a forward that
    stores self.output beside a backward that returns dX is read there too (tester14 #3: once exit 3, told to
    `return self.output`, while the NNFS pair passed)."""
    from test_cli import both, run, student

    nnfs = """
import numpy as np

class Activation_ReLU:
    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.maximum(0, inputs)

    def backward(self, dvalues):
        self.dinputs = dvalues.copy()
        self.dinputs[self.inputs <= 0] = 0
"""
    p = run("check", f"{student(tmp_path, nnfs)}::Activation_ReLU", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == 0, out
    assert "stores Y in self.output" in out and "stores dX in self.dinputs" in out, out
    half = nnfs.replace("self.dinputs = dvalues.copy()", "dinputs = dvalues.copy()").replace(
        "self.dinputs[self.inputs <= 0] = 0", "dinputs[self.inputs <= 0] = 0\n        return dinputs")
    p = run("check", f"{student(tmp_path, half, 'half.py')}::Activation_ReLU", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == 0, out
    assert ("forward returns nothing and stores Y in self.output (Neural Networks from Scratch): Y is read there, dX "
            "is what backward returns") in out, out
    assert "PASS: Activation_ReLU: every gradient (dX) matches" in out, out


@pytest.mark.parametrize("params, needle", [
    ('{"W": np.ones((3, 5), dtype=int)}',
     r"params\['W'\] must be a numpy float array .* got ndarray of dtype int64"),
    ('{0: np.ones((3, 5))}', "params keys must be strings; got a key of type int"),
])
def test_params_the_checker_cannot_perturb_are_a_protocol_error(tmp_path, params, needle):
    with linear(tmp_path, params=params) as sb, pytest.raises(ProtocolError, match=needle):
        sb.load_layer("student.py", "Linear")


def test_a_loss_whose_params_are_not_a_dict_is_a_protocol_error(tmp_path):
    # a layer's params reach the parent through gradcheck._adapters (a dict or none), a loss's
    # as the student wrote them
    source = MSE.replace("class MSE:", "class MSE:\n    params = [np.ones(3)]")
    needle = "MSE.params must be a dict mapping names to numpy arrays; got list"
    with sandbox(tmp_path, source) as sb, pytest.raises(ProtocolError, match=needle):
        sb.load_loss("student.py", "MSE")


def test_forward_many_refuses_calls_it_cannot_serve(tmp_path):
    with linear(tmp_path) as sb:
        layer = sb.load_layer("student.py", "Linear")
        with pytest.raises(UsageError, match="first entry of inputs_list cannot be None"):
            layer.forward_many([None, np.ones((2, 5))])
        with pytest.raises(UsageError, match="params_list has 1 entries for 2 inputs"):
            layer.forward_many([np.ones((2, 5)), None], params_list=[None])
        ys = layer.forward_many([np.ones((2, 5)), None], edits_list=[[], [("W", 0, 2.0)]])
        assert ys[0][0, 0] == 5.0 and ys[1][0, 0] == 6.0  # the edit holds for its forward only
        assert layer.forward(np.ones((2, 5)))[0, 0] == 5.0


@pytest.mark.parametrize("forward, backward, error, needle", [
    ("np.ones(2)", "return 2 * self.d", GradientShapeError,
     r"returned an array of shape \(2,\); expected a single number"),
    ("float(np.mean(self.d ** 2))", "2 * self.d", GradientShapeError,
     "returned None for dy_pred; expected a numpy array. Did you forget the return statement?"),
])
def test_a_loss_must_return_a_number_and_a_gradient(tmp_path, forward, backward, error, needle):
    source = MSE.replace("FORWARD", forward).replace("BACKWARD", backward)
    with sandbox(tmp_path, source) as sb:
        loss = sb.load_loss("student.py", "MSE")
        with pytest.raises(error, match=needle):
            loss.forward(np.zeros((2, 1)), np.ones((2, 1)))
            loss.backward()


def test_a_function_pair_is_not_a_loss(tmp_path):
    source = """
        def affine_forward(x, w, b):
            return x @ w + b, (x, w)

        def affine_backward(dout, cache):
            x, w = cache
            return dout @ w.T, x.T @ dout, dout.sum(axis=0)
    """
    with sandbox(tmp_path, source) as sb, pytest.raises(UsageError, match="a loss is a class"):
        sb.load_loss("student.py", "affine")


def test_a_hostile_sandbox_copies_regular_files_only(tmp_path):
    (tmp_path / "student.py").write_text("x = 1\n")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")  # opening it to copy would wait for a writer
    files = {"student.py": str(tmp_path / "student.py"), "folder.py": str(tmp_path / "folder"),
             "pipe.py": str(tmp_path / "pipe")}
    with Sandbox(files=files, hostile=True, timeout=5) as sb:
        sb.import_file("student.py")
        notes = sb.notes
    assert notes == [f"{name} was not copied into the sandbox: it is not a regular file (a folder, "
                     "a device or a pipe)." for name in ("folder.py", "pipe.py")]
    with pytest.raises(UsageError, match="missing.py' does not exist"):
        Sandbox(files={"x.py": str(tmp_path / "missing.py")}, hostile=True)
    with pytest.raises(UsageError, match="is not a file"):
        sibling_files(str(tmp_path / "folder"))


def test_forward_many_gives_each_forward_the_time_limit(tmp_path, never_starved):
    # 120 forwards of 0.02 s each pass the 1 s limit of one call together, each far under it: all served
    # (a correct layer on a loaded machine); a forward that loops is still stopped by the limit of one call,
    # named with the forwards done before it, not after 120 limits
    source = LINEAR.replace("PARAMS", GOOD_PARAMS).replace("FORWARD", "self.slow(X)") + textwrap.dedent("""
        calls = [0]
        def slow(self, X):
            import time
            Linear.calls[0] += 1
            time.sleep(0.02)
            while Linear.calls[0] > 170:
                pass
            return X @ self.params["W"].T
        Linear.calls, Linear.slow = calls, slow
    """)
    (tmp_path / "student.py").write_text(source)
    with Sandbox(files=[str(tmp_path / "student.py")], timeout=1.0, session_timeout=60.0) as sb:
        layer = sb.load_layer("student.py", "Linear")
        X = np.ones((2, 5))
        ys = layer.forward_many([X] + [None] * 119)
        assert len(ys) == 120 and all(np.array_equal(y, np.full((2, 3), 5.0)) for y in ys)
        never_starved()  # the loop is stopped at its limit, as having had its CPU time: the bound below is the rule's
        start = time.monotonic()
        with pytest.raises(SandboxError, match=r"forward_many \(120 forwards\): a forward after the first \d+ "
                           r"did not finish within 1 s \(wall clock\), the limit of one call") as ei:
            layer.forward_many([X] + [None] * 119)
        assert ei.value.reason == "timeout"
        assert time.monotonic() - start < 20.0  # the loop began at forward 50: about 2 s, never 120 limits


OVERSIZED = """
import numpy as np

class Linear:
    def __init__(self):
        self.params = {"W": np.ones((3, 5))}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        if X.shape[0] == 7:  # 2 GiB that cost nothing until copied for the reply
            return np.broadcast_to(np.float64(1.0), (1 << 28,))
        return X @ self.params["W"].T

    def backward(self, dY):
        self.grads = {"W": dY.T @ self.X}
        if dY.shape[0] == 6:  # 96 MiB of its own, 2 x 96 MiB more to copy: over 256 MiB
            return np.ones((12 << 20,))
        return dY @ self.params["W"]
"""


@pytest.mark.parametrize("isolation", ["process", "namespaces"])
def test_an_oversized_reply_is_reported_as_one_naming_its_size_and_the_limit(tmp_path, isolation):
    # Z8 (L4): a MemoryError while the child copied a result for its reply read "forward raised
    # MemoryError" (it did not raise), and failed the test as the student's error
    if isolation == "namespaces" and support()[0] == "none":
        pytest.skip(f"no namespaces here: {support()[1]}")
    (tmp_path / "big.py").write_text(OVERSIZED)
    with Sandbox(files={"big.py": str(tmp_path / "big.py")}, isolation=isolation, memory_mb=256, timeout=20) as sb:
        layer = sb.load_layer("big.py", "Linear")
        with pytest.raises(SandboxError) as info:
            layer.forward(np.ones((7, 5)))
        msg = " ".join(str(info.value).split())
        assert info.value.reason == "reply", msg
        assert "produced an oversized reply" in msg and "2147483648 bytes (2.00 GiB)" in msg, msg
        assert "shape (268435456,)" in msg and "256 MiB (--memory-mb)" in msg, msg
        assert "shape (7, 5) raised" not in msg and "Its code did not raise" in msg, msg  # not the call's error
        assert layer.forward(np.ones((2, 5))).shape == (2, 3)  # the sandbox lives on
        layer.forward(np.ones((6, 5)))
        with pytest.raises(SandboxError) as info:
            layer.backward(np.ones((6, 3)))
        msg = " ".join(str(info.value).split())
        assert info.value.reason == "reply" and "100663296 bytes (96.0 MiB)" in msg, msg


def test_a_frame_over_the_reader_s_limit_names_its_size_and_the_limit(tmp_path):
    # Z8: "sent a reply of N bytes and was stopped. Does the code write to file descriptors it does not own?"
    forward = ("__import__('os').write(__import__('json').loads(__import__('sys').argv[1])['fd_out'], b'GCSB' + "
               "__import__('struct').pack('>IQ', 2, (256 << 20) + 1) + b'{}') and X")
    (tmp_path / "big.py").write_text(LINEAR.replace("PARAMS", GOOD_PARAMS).replace("FORWARD", forward))
    with Sandbox(files={"big.py": str(tmp_path / "big.py")}, memory_mb=256, timeout=20) as sb:
        layer = sb.load_layer("big.py", "Linear")
        with pytest.raises(SandboxError) as info:
            layer.forward(np.ones((2, 5)))
    msg = " ".join(str(info.value).split())
    assert info.value.reason == "reply", msg
    assert "produced an oversized reply: the sandbox process sent a reply of 268435459 bytes (over the limit of " \
           "268435456 bytes of arrays)" in msg, msg
