"""verify40 H1: a layer whose numbers change with the memory layout of its input or of dY PASSed.

A pooling whose ``as_strided`` windows take their strides from the shape (``(L*s, 2*s, s)``) instead of from
``X.strides`` is right on a C-contiguous X and wrong on the same values laid out otherwise (a column slice or a
transpose of the previous layer's output); a backward that reads dY's buffer as C order is wrong on a Fortran-ordered
dY. Every array the check drew, or was given (``check_layer(layer, X[:, ::2])``), reached the layer C-contiguous: the
sandbox's shared memory and codec rebuild arrays in C order, and check_layer copies. Both PASSed (exit 0). The check
now also runs forward at Fortran-ordered inputs and backward at a Fortran-ordered dY (PyTorch's
``test_noncontiguous_samples`` checks the same) and compares with the C-ordered run.
"""

import numpy as np
from test_cli import check_source

import gradcheck
import manualprop as mp

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
"""


def _layers(tmp_path):
    ns = {}
    exec(compile(LAYERS, str(tmp_path / "layers.py"), "exec"), ns)  # noqa: S102 - the test's own source
    return ns


def test_check_layer_fails_a_forward_whose_strides_come_from_the_shape(tmp_path):
    X = np.random.default_rng(0).standard_normal((4, 12))[:, ::2]  # the student's strided X, given on purpose
    r = gradcheck.check_layer(_layers(tmp_path)["SumPool1D"](), X)
    assert not r.passed  # before: passed (the layer ran on a C-contiguous copy only)
    assert any("memory layout" in n and "as_strided" in n for n in r.notes)
    assert r.records[0].tensor == "Y" and not r.records[0].passed


def test_check_layer_fails_a_backward_reading_dy_in_c_order(tmp_path):
    r = gradcheck.check_layer(_layers(tmp_path)["ReadsBufferInCOrder"](), np.random.default_rng(1).standard_normal((4, 6)))
    assert not r.passed
    assert [x.tensor for x in r.records if not x.passed] == ["dX"]


def test_layers_right_in_any_layout_still_pass(tmp_path):
    X = np.random.default_rng(2).standard_normal((4, 6))
    assert gradcheck.check_layer(_layers(tmp_path)["SumPool1DStrides"](), X).passed
    for layer in (mp.Linear(6, 3, rng=0), mp.BatchNorm1D(6), mp.Dropout(0.3, rng=0)):
        r = gradcheck.check_layer(layer, X)
        assert r.passed and not any("memory layout" in n for n in r.notes)


def test_the_sandboxed_check_gives_the_layout_to_the_layer(tmp_path):
    code, out = check_source(tmp_path, LAYERS, "SumPool1D", "--input-shape", "4,6")
    assert code == 1 and "memory layout" in out  # before: exit 0, PASS
    code, out = check_source(tmp_path, LAYERS, "ReadsBufferInCOrder", "--input-shape", "4,6")
    assert code == 1 and "memory layout" in out
    code, out = check_source(tmp_path, LAYERS, "SumPool1DStrides", "--input-shape", "4,6")
    assert code == 0, out
