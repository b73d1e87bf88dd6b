"""Session 16 (issue 10 leftovers): the sandbox child's resources.

* ``RLIMIT_CPU`` follows the session's wall-clock limit (plus 1 s) as it grows by ``timeout`` per further call
  of a batch or of a load's probes (it stayed at the first limit: a CPU-bound submission given more time was
  killed by SIGXCPU), and a SIGXCPU death is reported as that CPU limit, named.
* M6: a frame's payload lived until Python's cyclic collector ran (the decoder's two recursive closures held it in
  a cycle), so each request of a 2000x2000 input kept 30.5 MiB more in the child: ``gradcheck check --mode sample``
  of a correct ReLU ran out of the 2 GiB limit after some 60 requests.
* A runaway recursion under a raised recursion limit (Python frames on the heap) or an unlimited C stack filled
  the memory limit and ran into the time limit (25-34 s) instead of ending as the RecursionError or the crash
  (SIGSEGV) it is.
"""

import gc
import resource
import sys
import textwrap

import numpy as np
import pytest

from gradcheck import _sandbox_child as wire
from gradcheck.sandbox import STACK_BYTES, Sandbox, SandboxError, support

RELU = textwrap.dedent('''
    import numpy as np


    class ReLU:
        def forward(self, X):
            self.mask = X > 0
            return X * self.mask

        def backward(self, dY):
            return dY * self.mask
''')


def _limits(sb):
    """The child's limits as the kernel holds them (``/proc/PID/limits``: readable where ``prlimit`` of another
    uid is not), ``{"Max cpu time": (soft, hard), ...}``; under bubblewrap the last of bwrap's descendants."""
    pid = sb._proc.pid
    while kids := open(f"/proc/{pid}/task/{pid}/children").read().split():
        pid = int(kids[-1])
    with open(f"/proc/{pid}/limits") as fh:
        rows = [line[:26].strip() for line in fh][1:], [line[26:].split()[:2] for line in open(f"/proc/{pid}/limits")][1:]
    return {name: tuple(-1 if v == "unlimited" else int(v) for v in vals) for name, vals in zip(*rows)}


def _vm_mib(pid):
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmSize:")) / 1024


@pytest.mark.parametrize("isolation", ["process", "namespaces"])
def test_the_cpu_limit_grows_with_the_session_limit(tmp_path, isolation):
    """The child's soft RLIMIT_CPU, read from the kernel, is the session's limit plus 1 s after the load's probes
    and a batch of 12 forwards extended it (before: 5 s, the first limit, whatever the extension)."""
    if isolation == "namespaces" and support()[0] == "none":
        pytest.skip("no namespaces on this machine")
    (tmp_path / "relu.py").write_text(RELU)
    with Sandbox(files=[str(tmp_path / "relu.py")], timeout=1.5, session_timeout=4.0, isolation=isolation) as sb:
        layer = sb.load_layer("relu.py", "ReLU", {}, probe_inputs=[np.ones((2, 2))])
        assert len(layer.forward_many([np.ones((2, 2))] * 12)) == 12
        assert sb._extra_calls >= 11 + 5
        limits = _limits(sb)
    assert limits["Max cpu time"][0] == int(4.0 + 1.5 * sb._extra_calls) + 1, (limits, sb._extra_calls)
    assert limits["Max cpu time"][1] > limits["Max cpu time"][0]
    assert limits["Max stack size"] == (STACK_BYTES, STACK_BYTES)


def test_a_sigxcpu_death_is_reported_as_the_cpu_limit_it_is(tmp_path):
    """SIGXCPU (sent by the kernel at the soft CPU limit; raised here by the submission itself, which costs no CPU
    time) is a time limit: reason "timeout", the limit named (before: 'killed by SIGXCPU (the CPU-time limit was
    reached)', reason "signal", no figure)."""
    (tmp_path / "burn.py").write_text(RELU.replace("self.mask = X > 0", (
        "self.mask = X > 0\n        if X.size > 4:  # not the probe's\n"
        "            __import__('signal').raise_signal(__import__('signal').SIGXCPU)")))
    with Sandbox(files=[str(tmp_path / "burn.py")], timeout=2.0, session_timeout=6.0) as sb:
        layer = sb.load_layer("burn.py", "ReLU", {}, probe_inputs=[np.ones((2, 2))])
        with pytest.raises(SandboxError) as err:
            layer.forward(np.ones((3, 3)))
    limit = int(6.0 + 2.0 * sb._extra_calls) + 1
    assert err.value.reason == "timeout", err.value
    assert (f"ReLU.forward(X) with X of shape (3, 3) used up the sandbox's CPU-time limit of {limit} s (the "
            "session's wall-clock limit, as far as this request could extend it, plus 1 s): the sandbox process was "
            "killed by SIGXCPU.") in " ".join(str(err.value).split()), err.value


def test_decoding_a_frame_keeps_no_reference_to_its_payload():
    """M6's leak, in one frame: the payload is back to its own references when decode returns, without waiting for
    the cyclic collector (disabled here, as it is between its passes)."""
    packer = wire.Packer(np)
    header = packer.encode({"inputs": [np.arange(12.0).reshape(4, 3)]})
    payload = packer.payload()
    gc.disable()
    try:
        before = sys.getrefcount(payload)
        out = wire.decode(np, header, payload)
        after = sys.getrefcount(payload)
    finally:
        gc.enable()
    assert after == before
    assert np.array_equal(out["inputs"][0], np.arange(12.0).reshape(4, 3))


def test_forwards_of_a_large_input_do_not_pile_up_in_the_child(tmp_path):
    """8 forwards of a (700, 700) input (3.7 MiB each way): the child's address space stays within 3 inputs of
    where it was after the first two (before: one input more after every request: 30 MiB here)."""
    (tmp_path / "relu.py").write_text(RELU)
    X = np.random.default_rng(0).standard_normal((700, 700))
    with Sandbox(files=[str(tmp_path / "relu.py")], timeout=30.0) as sb:
        layer = sb.load_layer("relu.py", "ReLU", {}, probe_inputs=[np.ones((2, 2))])
        for _ in range(2):
            layer.forward(X)
        small = np.ones((2, 2))
        # measured while the child waits: a small forward first, since the child lets go of a request after its
        # reply (stop 47's CI, under load: measured before the last large request was freed, 18.7 MiB)
        layer.forward(small)
        start = _vm_mib(sb._proc.pid)
        for _ in range(8):
            assert np.array_equal(layer.forward(X), X * (X > 0))
        layer.forward(small)
        grown = _vm_mib(sb._proc.pid) - start
    assert grown < 3 * X.nbytes / 2**20, grown


RECURSE_PY = textwrap.dedent('''
    import sys


    def deep(n):
        return deep(n + 1) + 1


    class ReLU:
        def forward(self, X):
            sys.setrecursionlimit(10**9)
            return deep(0) * X

        def backward(self, dY):
            return dY
''')

RECURSE_C = textwrap.dedent('''
    import resource
    import sys


    class Deep:
        def __getattr__(self, name):  # each level a C call too: the C stack overflows
            return getattr(self, name)


    class ReLU:
        def forward(self, X):
            try:  # a stack as deep as the machine allows
                resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            except (ValueError, OSError):
                pass
            sys.setrecursionlimit(10**9)
            return Deep().x * X

        def backward(self, dY):
            return dY
''')


def test_a_runaway_python_recursion_is_the_recursion_error_it_is(tmp_path):
    """sys.setrecursionlimit(10**9) is held at 100000: the RecursionError comes after 100000 frames, the message
    says why (before: the frames filled the 2 GiB limit and the load hit its time limit, 34 s)."""
    (tmp_path / "rec.py").write_text(RECURSE_PY)
    with Sandbox(files=[str(tmp_path / "rec.py")], timeout=10.0) as sb:
        layer = sb.load_layer("rec.py", "ReLU", {})  # no probe: one recursion
        with pytest.raises(SandboxError) as err:
            layer.forward(np.ones((2, 2)))
    msg = " ".join(str(err.value).split())
    assert err.value.reason != "timeout" and "RecursionError: maximum recursion depth exceeded (the sandbox holds " \
        "the recursion limit at 100000: the code asked sys.setrecursionlimit for 1000000000)" in msg, msg
    assert "rec.py:6 in deep" in msg, msg


def test_a_c_stack_overflow_is_a_crash_even_under_an_unlimited_stack(tmp_path):
    """A grader started with ``ulimit -s unlimited`` (its child inherits it) and a C recursion: the child's stack is
    held at 8 MiB, which the submission cannot raise, so it crashes at once (SIGSEGV, named) instead of growing
    through the 2 GiB memory limit (25 s: the time limit under load)."""
    (tmp_path / "rec.py").write_text(RECURSE_C)
    old = resource.getrlimit(resource.RLIMIT_STACK)
    if old[1] != resource.RLIM_INFINITY:
        pytest.skip("this machine's hard stack limit is finite")
    resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, old[1]))
    try:
        sb = Sandbox(files=[str(tmp_path / "rec.py")], timeout=10.0)
    finally:
        resource.setrlimit(resource.RLIMIT_STACK, old)
    with sb, pytest.raises(SandboxError) as err:
        sb.load_layer("rec.py", "ReLU", {}, probe_inputs=[np.ones((2, 2))])
    msg = " ".join(str(err.value).split())
    assert err.value.reason == "signal" and "killed by SIGSEGV" in msg, msg
    assert "a recursion that overflowed the C stack of 8 MiB" in msg, msg
