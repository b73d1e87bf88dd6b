"""review30 LOW: a layer whose ``grads`` is a ``collections.abc.MutableMapping`` (not a dict) was refused in the sandbox
("LinMM.grads must be a dict; got _G", exit 3) while the in-process check (``_validation.check_grads``) reads any
Mapping: one rule now, the sandbox's child reads it as a dict too, its values checked as any grads'."""

import pytest
from test_check_dtype_x_v30 import INIT, LIN
from test_cli import both, run_here, student

SRC = """
import collections.abc


class _G(collections.abc.MutableMapping):
    def __init__(self):
        self.d = {}

    def __getitem__(self, k):
        return self.d[k]

    def __setitem__(self, k, v):
        self.d[k] = v

    def __delitem__(self, k):
        del self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)
""" + LIN.replace("class Lin:", "class LinMM:").replace("self.grads = {}", "self.grads = _G()")


@pytest.mark.parametrize("k, rc, said", [("1.0", 0, "PASS: LinMM"), ("2.0", 1, "FAIL: LinMM: gradient mismatch in dW")])
def test_a_mapping_grads_is_read_in_the_sandbox_as_in_process(tmp_path, k, rc, said):
    f = student(tmp_path, SRC.replace("K", k), "gd.py")
    p = run_here("check", f"{f}::LinMM", "--input-shape", "4,3", "--init", INIT, "--isolation", "process")
    text = " ".join(both(p).split())
    assert p.returncode == rc and said in text and "must be a dict" not in text, text
