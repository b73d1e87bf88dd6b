"""verify40 H1: a layer whose numbers change with the memory layout of its input or of dY PASSed.

A pooling whose ``as_strided`` windows take their strides from the shape (``(L*s, 2*s, s)``) instead of from
``X.strides`` is right on a C-contiguous X and wrong on the same values laid out otherwise (a column slice or a
transpose of the previous layer's output); a backward that reads dY's buffer as C order is wrong on a Fortran-ordered
dY. Every array the check drew, or was given (``check_layer(layer, X[:, ::2])``), reached the layer C-contiguous: the
sandbox's shared memory and codec rebuild arrays in C order, and check_layer copies. Both PASSed (exit 0). The check
now runs forward at Fortran-ordered inputs and backward at a Fortran-ordered dY once more, at its end, and compares
with the C-ordered run (PyTorch's ``test_noncontiguous_samples`` checks the same): one forward and one backward more.
verify40b F5: a layer that raised there PASSed with a note; it raises now, naming the layout (PyTorch's test fails).
"""

import numpy as np
import pytest
from test_cli import check_source

import gradcheck
import manualprop as mp
from gradcheck.errors import StudentCodeError
from gradcheck.result import LAYOUT_PAIR
from tests.test_grading_policy import _sandbox

LAYERS = """
import numpy as np
from numpy.lib.stride_tricks import as_strided


class SumPool1D:
    def forward(self, X):
        N, L = X.shape
        s = X.itemsize
        self.shape = X.shape
        return as_strided(X, shape=(N, L // 2, 2), strides=(L * s, 2 * s, s)).sum(axis=2)

    def backward(self, dY):
        return np.repeat(dY, 2, axis=1)


class SumPool1DStrides(SumPool1D):
    def forward(self, X):
        N, L = X.shape
        a, b = X.strides
        return as_strided(X, shape=(N, L // 2, 2), strides=(a, 2 * b, b)).sum(axis=2)


class ReadsBufferInCOrder:
    def forward(self, X):
        return 3.0 * X

    def backward(self, dY):
        flat = np.frombuffer(np.ascontiguousarray(dY.T if dY.flags.f_contiguous and dY.ndim > 1 else dY).data,
                             dtype=dY.dtype)
        return 3.0 * flat.reshape(dY.shape)


class ShapeSet:
    def forward(self, X):
        v = X.view()
        v.shape = (X.size,)  # numpy refuses this in-place reshape of a non-C-contiguous array
        return 2.0 * v.reshape(X.shape)

    def backward(self, dY):
        return 2.0 * dY
"""


def _layers(tmp_path):
    ns = {}
    exec(compile(LAYERS, str(tmp_path / "layers.py"), "exec"), ns)  # noqa: S102 - the test's own source
    return ns


def _fortran(a):
    return a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous


def test_check_layer_fails_a_forward_whose_strides_come_from_the_shape(tmp_path):
    X = np.random.default_rng(0).standard_normal((4, 12))[:, ::2]  # the student's strided X, given on purpose
    r = gradcheck.check_layer(_layers(tmp_path)["SumPool1D"](), X)
    assert not r.passed  # before: passed (the layer ran on a C-contiguous copy only)
    assert any("memory layout" in n and "X and dY in Fortran (column-major) order" in n and "as_strided" in n
               for n in r.notes)
    assert r.records[0].tensor == "Y" and not r.records[0].passed
    assert [c.pair for c in r.records[0].comparisons if not c.passed] == [LAYOUT_PAIR]
    assert r.mismatch() == ("Y changes with the memory layout (the same values in Fortran order or as a strided view "
                            "give other numbers)")
    assert "C~Fortran" in r.table() and "C-order=" in r.table() and "Fortran-order=" in r.table()
    right = gradcheck.check_layer(_layers(tmp_path)["SumPool1DStrides"](), X)  # strides from the array: right
    assert right.passed and not any("memory layout" in n for n in right.notes) and "C~Fortran" not in right.table()


def test_check_layer_fails_a_backward_reading_dy_in_c_order(tmp_path):
    r = gradcheck.check_layer(_layers(tmp_path)["ReadsBufferInCOrder"](), np.random.default_rng(1).standard_normal((4, 6)))
    assert not r.passed
    assert [x.tensor for x in r.records if not x.passed] == ["dX"]
    assert any("and dX differs from the run on C-ordered arrays" in n for n in r.notes)


def test_a_layer_raising_on_fortran_ordered_arrays_raises_naming_the_layout(tmp_path):
    """verify40b F5: PASS with a note before; numpy's functions take any layout, PyTorch's test fails such an op."""
    with pytest.raises(StudentCodeError) as info:
        gradcheck.check_layer(_layers(tmp_path)["ShapeSet"](), (4, 5))
    text = " ".join(str(info.value).split())
    assert text.startswith("ShapeSet raised when forward and backward ran again with X and dY in Fortran "
                           "(column-major) order"), text
    assert "Incompatible shape for in-place modification" in text and "np.ascontiguousarray(x)" in text


def test_the_rerun_is_one_forward_and_one_backward_and_right_layers_keep_their_verdict():
    calls = []

    class Tanh:
        drift = 0.0

        def __init__(self):
            self.params, self.grads, self.n = {}, {}, 0

        def forward(self, X, training=False):
            calls.append("forward F" if _fortran(X) else "forward")
            self.X = X
            return np.tanh(X)

        def backward(self, dY):
            calls.append("backward F" if _fortran(dY) else "backward")
            self.n += 1  # drift: each backward after the first is a little off (not the layout's doing)
            return (1.0 + self.drift * (self.n > 1)) * dY * (1 - np.tanh(self.X) ** 2)

    r = gradcheck.check_layer(Tanh(), (5, 4), twin=None, mode="fast")
    assert r.passed and [c for c in calls if c.endswith(" F")] == ["forward F", "backward F"], calls
    assert calls.index("backward F") == calls.index("forward F") + 1

    class Drifting(Tanh):
        drift = 1e-3

    calls.clear()
    r = gradcheck.check_layer(Drifting(), (5, 4), twin=None, mode="fast", training=False)
    # the Fortran-ordered run differs, and so does the C-ordered pair run again: not the layout's, today's PASS
    assert r.passed and not any("memory layout" in n for n in r.notes), r.table()
    at = calls.index("forward F")
    assert calls[at:at + 4] == ["forward F", "backward F", "forward", "backward"], calls
    X = np.random.default_rng(2).standard_normal((4, 6))
    for layer in (mp.Linear(6, 3, rng=0), mp.BatchNorm1D(6), mp.Dropout(0.3, rng=0)):
        r = gradcheck.check_layer(layer, X)
        assert r.passed and not any("memory layout" in n for n in r.notes) and "C~Fortran" not in r.table()


def test_the_sandboxed_check_gives_the_layout_to_the_layer(tmp_path):
    code, out = check_source(tmp_path, LAYERS, "SumPool1D", "--input-shape", "4,6")
    assert code == 1 and "FAIL: SumPool1D: Y changes with the memory layout" in out  # before: exit 0, PASS
    assert "diagnosis: Y changes when the inputs and dY hold the same values in Fortran order" in " ".join(out.split())
    code, out = check_source(tmp_path, LAYERS, "ReadsBufferInCOrder", "--input-shape", "4,6")
    assert code == 1 and "FAIL: ReadsBufferInCOrder: dX changes with the memory layout" in out
    code, out = check_source(tmp_path, LAYERS, "ShapeSet", "--input-shape", "4,6")
    assert code == 3 and "ran again with X and dY in Fortran (column-major) order" in " ".join(out.split()), out
    code, out = check_source(tmp_path, LAYERS, "SumPool1DStrides", "--input-shape", "4,6")
    assert code == 0 and "memory layout" not in out, out


def test_redteam30s_differences_in_forward_lose_dx_on_a_fortran_ordered_input(tmp_path):
    """redteam30's cheat as it wrote it (``np.array(X)`` keeps a Fortran X's order, whose ``reshape(-1)`` is a copy,
    so its Jacobian's dX is 0): right on C-ordered inputs, wrong in a network handing it a transpose; in the sandbox,
    without the staff policy, its dX fails the rerun (test_grading_redteam30's copy builds Xc in C order)."""
    from tests.test_grading_redteam30 import FD_IN_FORWARD, INIT
    source = FD_IN_FORWARD.replace('np.array(X, dtype=float, order="C")', "np.array(X, dtype=float)")
    assert source != FD_IN_FORWARD
    X = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, source) as sb:
        r = gradcheck.check_layer(sb.load_layer("layers.py", "Linear", INIT), X, twin=None)
    assert not r.passed and r.failing_tensors == ["dX"], r.table()  # before: passed
    assert "dX changes with the memory layout" in r.mismatch()
