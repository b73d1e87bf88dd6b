"""A forward returning ``(Y, argmax)`` as torch's ``return_indices=True`` (tester22s): the integer output has no
gradient; Y is checked and the header says the indices were not differentiated (was exit 1 "gave Y as a tuple")."""

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck import _adapters as AD

POOL = """
import numpy as np

class MaxPoolWithIndices:
    def forward(self, X):
        N, D = X.shape
        Xr = X.reshape(N, D // 2, 2)
        self.idx = Xr.argmax(-1)
        self.shape = X.shape
        return Xr.max(-1), self.idx

    def backward(self, dY):
        N, D = self.shape
        dX = np.zeros((N, D // 2, 2))
        np.put_along_axis(dX, SLOT, dY[..., None], -1)
        return dX.reshape(N, D)
"""


@pytest.mark.parametrize("slot, rc", [("self.idx[..., None]", 0), ("1 - self.idx[..., None]", 1)])
def test_an_index_output_is_not_differentiated_and_y_is_checked(tmp_path, slot, rc):
    f = student(tmp_path, POOL.replace("SLOT", slot), "pool.py")
    p = run_here("check", f"{f}::MaxPoolWithIndices", "--input-shape", "5,4", "--mode", "full")
    out = both(p)
    assert p.returncode == rc, out
    assert ("2 outputs: output 1 (5, 2) checked as Y, backward gets its dY; output 2 (5, 2) (int64), an integer "
            "output, is not differentiated (indices have no gradient)") in out, out
    assert "as a tuple" not in out
    assert ("PASS: MaxPoolWithIndices" in out) == (rc == 0) and ("gradient mismatch in dX" in out) == (rc == 1)


def test_outputs_join_and_split_keep_the_float_output_alone():
    Y, idx = np.arange(6.0).reshape(3, 2), np.zeros((3, 2), dtype=np.int64)
    outs = AD.Outputs(["Y", "idx"], [Y, idx], keep=[0])
    assert outs.join((Y, idx)) is Y
    dY = np.ones((3, 2))
    assert outs.split(dY)[0] is dY and len(outs.split(dY)) == 1
    assert outs.data() == ["stacked", "Y|dY[0]|3,2"]  # one output: the diagnosis reads no k outputs
