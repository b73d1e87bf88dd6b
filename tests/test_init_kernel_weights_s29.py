"""review29 KERNEL_LIST: ``--init '{"kernel": [1, 0, -1]}'`` (Keras names a weight ``kernel``) stayed a list of Python
ints after tester28s M4's size rule, so a correct 1-D correlation FAILed ("forward reads kernel, Python list of
numbers"). A size is positive: a flat list of ints named like a kernel is a size only when every entry is at least 1.
"""

import numpy as np
from test_cli import both, run_here, student

CONV1D = """
import numpy as np


class Conv1D:
    def __init__(self, kernel):
        self.kernel = kernel

    def forward(self, x):
        self.x = x
        k = len(self.kernel)
        return np.stack([sum(self.kernel[j] * x[:, i + j] for j in range(k)) for i in range(x.shape[1] - k + 1)], 1)

    def backward(self, dy):
        k = len(self.kernel)
        dx, dk = np.zeros_like(self.x), np.zeros(k)
        for i in range(dy.shape[1]):
            for j in range(k):
                dx[:, i + j] += self.kernel[j] * dy[:, i]
                dk[j] += np.sum(self.x[:, i + j] * dy[:, i])
        self.dkernel = {factor} * dk
        return dx
"""


def test_a_kernel_with_an_entry_below_one_is_a_weight():
    from gradcheck._adapters import init_arrays

    got = init_arrays({"kernel": [1, 0, -1], "kernel_size": [3, 3]})[0]
    assert isinstance(got["kernel"], np.ndarray) and got["kernel"].dtype == np.float64
    assert got["kernel_size"] == [3, 3] and all(type(k) is int for k in got["kernel_size"])


def test_a_learnable_kernel_from_init_is_checked(tmp_path):
    args = ("--input-shape", "3,6", "--init", '{"kernel": [1, 0, -1]}', "--mode", "full")
    ok = student(tmp_path, CONV1D.replace("{factor}", "1"), "ok.py")
    p = run_here("check", f"{ok}::Conv1D", *args)
    assert p.returncode == 0 and "PASS: Conv1D" in both(p) and "dkernel" in both(p), both(p)
    bad = student(tmp_path, CONV1D.replace("{factor}", "2"), "bad.py")
    p = run_here("check", f"{bad}::Conv1D", *args)
    assert p.returncode == 1 and "dkernel" in both(p) and "Python list" not in both(p), both(p)
