"""Inputs the numbers could not be trusted for (issue 10, section 3): arrays whose entries share
memory are refused, and a batch of one sample is warned about. API and CLI."""

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided, sliding_window_view
from student_layers import StudentLinear

import manualprop as mp
from gradcheck import check_layer, check_loss
from gradcheck._validation import shared_entries
from gradcheck.diagnose import diagnose_layer
from gradcheck.errors import EXIT_PASS, EXIT_STUDENT, GradientShapeError, ProtocolError, UsageError

ROOT = Path(__file__).resolve().parents[1]


def _layout(a):
    return shared_entries(a.shape, a.strides, a.itemsize)


# ----------------------------------------------------------------- entries that share memory


def test_shared_entries_tells_views_from_overlaps():
    a = np.arange(24.0).reshape(2, 3, 4)
    for view in (a, a.T, a[:, ::-1, ::2], a[..., 1], a[None], np.ones((1, 5)), np.asfortranarray(a)):
        assert _layout(view) == "", view.strides
    # distinct offsets although the fast span test fails: decided exactly
    assert _layout(as_strided(np.zeros(6), (2, 3), (24, 16))) == ""
    assert _layout(np.broadcast_to(np.ones(3), (4, 3))) == "stride 0 along axis 0"
    assert _layout(np.broadcast_to(np.ones((4, 1)), (4, 3))) == "stride 0 along axis 1"
    assert _layout(sliding_window_view(np.arange(6.0), 3)) == "overlapping strides (8, 8)"


@pytest.mark.parametrize("how", ["broadcast_to", "as_strided stride 0", "sliding window"])
def test_input_sharing_memory_is_refused_before_the_copy(how):
    row = np.random.default_rng(0).standard_normal(5)
    X = {"broadcast_to": np.broadcast_to(row, (4, 5)),
         "as_strided stride 0": as_strided(row, (4, 5), (0, 8)),
         "sliding window": sliding_window_view(np.random.default_rng(1).standard_normal(8), 5)[:4]}[how]
    with pytest.raises(UsageError, match="input X of Linear has entries that share memory") as ei:
        check_layer(mp.Linear(5, 3, rng=0), X)
    msg = str(ei.value)
    assert ("stride 0 along axis 0" if how != "sliding window" else "overlapping strides") in msg
    assert "perturb one entry at a time" in msg and "a.copy()" in msg
    with pytest.raises(UsageError, match="share memory"):
        diagnose_layer(mp.Linear(5, 3, rng=0), X)
    # the same numbers with their own memory are checked (and pass)
    assert check_layer(mp.Linear(5, 3, rng=0), np.array(X)).passed


def test_one_of_several_inputs_sharing_memory_is_named():
    rng = np.random.default_rng(2)
    Q, K = rng.standard_normal((2, 3, 4)), np.broadcast_to(rng.standard_normal(4), (2, 3, 4))
    layer = mp.ScaledDotProductAttention()
    with pytest.raises(UsageError, match="input 1 of .* has entries that share memory"):
        check_layer(layer, [Q, K, Q.copy()])


def test_loss_prediction_sharing_memory_is_refused():
    logits = np.broadcast_to(np.array([0.5, -1.0, 2.0]), (4, 3))
    with pytest.raises(UsageError, match="y_pred of SoftmaxCrossEntropy has entries that share memory"):
        check_loss(mp.SoftmaxCrossEntropy(), np.array([0, 1, 2, 0]), logits)
    assert check_loss(mp.SoftmaxCrossEntropy(), np.array([0, 1, 2, 0]), logits.copy()).passed


def test_integer_input_sharing_memory_is_fine():
    """Indices are not perturbed: a broadcast index array is not refused."""
    emb = mp.Embedding(6, 3, rng=0)
    idx = np.broadcast_to(np.array([1, 4, 2]), (2, 3))
    assert check_layer(emb, idx).passed


class _StridedW(StudentLinear):
    """A Linear whose W is one row repeated through a zero stride (writable): perturbing
    W[0, j] moves the whole column j."""

    def __init__(self):
        super().__init__(4, 3)
        row = np.random.default_rng(5).standard_normal(4)
        self.params["W"] = as_strided(row, (3, 4), (0, row.itemsize))


def test_parameter_sharing_memory_is_refused():
    layer = _StridedW()
    assert layer.params["W"].flags.writeable
    with pytest.raises(ProtocolError, match=r"_StridedW.params\['W'\] has entries that share memory") as ei:
        check_layer(layer, (5, 4), twin=None)
    assert "stride 0 along axis 0" in str(ei.value) and "np.array(W)" in str(ei.value)


# ----------------------------------------------------------------- batch of one


class _MeanDb(StudentLinear):
    """db averaged over the batch: the right numbers for one sample, wrong for more."""

    def db(self, dY):
        return dY.mean(axis=0)


def _batch_warnings(caught):
    return [str(w.message) for w in caught if "batch of one" in str(w.message)]


def test_batch_of_one_warns_and_notes_the_result():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = check_layer(_MeanDb(), (1, 4), twin=None)
    assert res.passed  # the bug is invisible with one sample ...
    (msg,) = _batch_warnings(caught)
    assert "X of shape (1, 4)" in msg and "at least 2, e.g. (2, 4)" in msg
    assert msg in res.notes
    assert not check_layer(_MeanDb(), (2, 4), twin=None).passed  # ... and found with two


def test_no_batch_warning_from_a_batch_of_two_or_without_a_batch_axis():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = check_layer(mp.Linear(5, 3, rng=0), (2, 5))
        b = check_layer(mp.ReLU(), (7,))
    assert _batch_warnings(caught) == []
    assert not any("batch of one" in n for n in a.notes + b.notes)


def test_diagnose_layer_warns_once_about_a_batch_of_one():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        diag = diagnose_layer(mp.Linear(5, 3, rng=0), (1, 5))
    assert diag.passed
    assert len(_batch_warnings(caught)) == 1
    assert any("batch of one" in n for n in diag.result.notes)


class _ColumnDense:
    """Nielsen's layout (newuser30 F12): x a column (n_in, 1), z = W x + b; db = delta, no sum over the columns."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((3, 4)), "b": rng.standard_normal((3, 1))}
        self.grads = {}

    def forward(self, x):
        self.x = x
        return self.params["W"] @ x + self.params["b"]

    def backward(self, delta):
        self.grads = {"W": delta @ self.x.T, "b": delta}  # right for one column only
        return self.params["W"].T @ delta


def test_batch_last_layouts_warn_about_a_batch_of_one_on_axis_1():
    """A column layout's batch is axis 1: (4, 1) is one sample, the db = delta bug it hides is found at (4, 2)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = check_layer(_ColumnDense(), (4, 1), twin=None)
    assert res.passed  # one column: db = delta is right ...
    (msg,) = _batch_warnings(caught)
    assert "X of shape (4, 1) (its batch axis is axis 1" in msg and "at least 2, e.g. (4, 2)" in msg
    assert msg in res.notes
    with pytest.raises(GradientShapeError, match=r"b.*\(3, 2\)"):  # ... two columns: db has the batch's shape, (3, 2)
        check_layer(_ColumnDense(), (4, 2), twin=None)
    with warnings.catch_warnings(record=True) as caught:  # batch-first, one feature: 5 samples, no warning
        warnings.simplefilter("always")
        check_layer(mp.Linear(1, 3, rng=0), (5, 1))
        diagnose_layer(_ColumnDense(), (4, 2))
    assert _batch_warnings(caught) == []


COURSERA_DB = """
import numpy as np

def linear_forward(A, W, b):
    return np.dot(W, A) + b, (A, W, b)

def linear_backward(dZ, cache):
    A_prev, W, b = cache
    return np.dot(W.T, dZ), np.dot(dZ, A_prev.T), dZ  # db = dZ: no sum over the batch (axis 1)
"""


def test_cli_warns_about_a_batch_of_one_in_a_coursera_pair(tmp_path):
    """Coursera's linear_forward(A, W, b), A (n_in, m): m = 1 is axis 1's size (newuser30 F12)."""
    from test_cli import run_here

    (tmp_path / "lin.py").write_text(COURSERA_DB)
    p = run_here("check", f"{tmp_path / 'lin.py'}::linear", "--input-shape", "5,1;3,5;3,1")
    err = " ".join(p.stderr.split())
    assert p.returncode == EXIT_PASS, p.stdout + p.stderr
    assert "batch of one: linear is checked with A of shape (5, 1) (its batch axis is axis 1" in err
    assert "e.g. (5, 2)" in err and err.count("gradcheck: warning: batch of one") == 1
    p2 = run_here("check", f"{tmp_path / 'lin.py'}::linear", "--input-shape", "5,2;3,5;3,1")
    assert p2.returncode != EXIT_PASS and "batch of one" not in p2.stdout + p2.stderr


STUDENT = """
import numpy as np

class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {"W": rng.standard_normal((out_features, in_features)),
                       "b": rng.standard_normal(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": dY.T @ self.X, "b": dY.sum(axis=0)}
        return dY @ self.params["W"]
"""

STRIDED = STUDENT.replace(
    '"W": rng.standard_normal((out_features, in_features)),',
    '"W": np.lib.stride_tricks.as_strided(rng.standard_normal(in_features), '
    '(out_features, in_features), (0, 8)),')


def _cli(tmp_path, body, shape, here=False):
    """``gradcheck check`` on ``body``: the console script, or (``here``) in this process."""
    f = tmp_path / "student.py"
    f.write_text(textwrap.dedent(body))
    if here:
        from test_cli import run_here

        return run_here("check", f"{f}::Linear", "--input-shape", shape, "--init", '{"in_features": 5, "out_features": 3}')
    script = Path(sys.executable).parent / "gradcheck"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "gradcheck"]
    return subprocess.run(cmd + ["check", f"{f}::Linear", "--input-shape", shape, "--init",
                                 '{"in_features": 5, "out_features": 3}'],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MPLBACKEND": "Agg"})


def test_cli_warns_about_a_batch_of_one(tmp_path):
    p = _cli(tmp_path, STUDENT, "1,5")
    assert p.returncode == EXIT_PASS, p.stdout + p.stderr
    err = " ".join(p.stderr.split())
    assert "gradcheck: warning: batch of one: Linear is checked with X of shape (1, 5)" in err
    assert err.count("batch of one") == 1
    assert "at least 2" in " ".join(p.stdout.split())  # the note under the table
    p2 = _cli(tmp_path, STUDENT, "2,5", here=True)
    assert p2.returncode == EXIT_PASS and "batch of one" not in p2.stdout + p2.stderr


def test_cli_refuses_a_parameter_sharing_memory(tmp_path):
    p = _cli(tmp_path, STRIDED, "4,5", here=True)
    out = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == EXIT_STUDENT, out
    assert "Linear.params['W'] has entries that share memory (stride 0 along axis 0" in out
    assert "Traceback" not in out
