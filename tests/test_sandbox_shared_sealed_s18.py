"""The memory shared with the sandbox child cannot change size (tester18g HIGH 2).

A submission patched ``socket.recv_fds`` at import to keep a duplicate of the memfd of each request, then
``os.ftruncate(fd, 0)``: the grader's next read of its mapping (``Shared.changed()``) died of SIGBUS, a
permanent "grader error" (hostile b1/sigbus, b9/sigbus_backward). The memfd is now sealed against shrinking
and growing before it is sent: the truncation fails in the child (EPERM), the grader reads on.
"""

import os

import numpy as np
import pytest

from gradcheck.errors import StudentCodeError
from gradcheck.sandbox import Sandbox, Shared

SIGBUS_LINEAR = '''
import os, socket
import numpy as np
_orig, _kept, _tried = socket.recv_fds, [], []
def _recv_fds(sock, bufsize, maxfds, flags=0):
    msg, fds, fl, addr = _orig(sock, bufsize, maxfds, flags)
    _kept.extend(os.dup(fd) for fd in fds)
    return msg, fds, fl, addr
socket.recv_fds = _recv_fds

class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X.copy()
        for d in _kept:
            try:
                os.ftruncate(d, 0)
                _tried.append("truncated")
            except OSError as exc:
                _tried.append(exc.strerror)
        if len(_kept) > 1:
            raise RuntimeError("tried: " + ", ".join(_tried))
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads["W"], self.grads["b"] = dY.T @ self.X, dY.sum(axis=0)
        return dY @ self.params["W"]
'''


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="memfd is Linux's")
def test_shared_memory_file_cannot_shrink_or_grow():
    sh = Shared([np.arange(6.0).reshape(2, 3)])
    dup = os.dup(sh.fd)
    try:
        for size in (0, 1 << 20):
            with pytest.raises(PermissionError):
                os.ftruncate(dup, size)
        assert os.fstat(dup).st_size == 64 and sh.changed() == []
    finally:
        os.close(dup)
        sh.close_fd()


def test_child_truncating_the_shared_memory_does_not_kill_the_grader(tmp_path):
    f = tmp_path / "student.py"
    f.write_text(SIGBUS_LINEAR)
    with Sandbox(files={"student.py": str(f)}, timeout=5) as sb:
        layer = sb.load_layer("student.py", "Linear", {"in_features": 3, "out_features": 2})
        X = np.arange(12.0).reshape(4, 3)
        Y = layer.forward(X)
        assert np.array_equal(Y, X @ layer.params["W"].T)
        assert sb._proc.poll() is None
        with pytest.raises(StudentCodeError, match="tried: Operation not permitted, Operation not permitted, "):
            layer.forward(X)  # the second request: the duplicate kept from the first one is tried too
