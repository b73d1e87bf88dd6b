"""Findings of session 34's reviewer (review34) on session 33's diff, fixed by fixv34 (the "exactly 0" rule's
are in test_cli_tester33.py, beside tester33 F3's)."""

import numpy as np

NML_CE_COPY = '''
import numpy as np


def _is_binary(x):
    if not np.array_equal(x, x.astype(bool)):
        raise ValueError("Matrix must be binary")


def _is_stochastic(X):
    if not np.allclose(np.sum(X, axis=-1), np.ones(X.shape[0])):
        raise ValueError("Array should be stochastic")


class CrossEntropy:
    @staticmethod
    def loss(y, y_pred):
        _is_binary(y)
        _is_stochastic(y_pred)
        return -np.sum(y * np.log(y_pred + np.finfo(float).eps))

    @staticmethod
    def grad(y, y_pred):
        _is_binary(y)
        _is_stochastic(y_pred)
        return y_pred - y
'''


def test_a_copy_of_numpy_mls_cross_entropy_with_its_input_checks_is_probed_on_the_targets_asked_for(tmp_path):
    """NML_CE_COPY_PROBE_NOT_BINARY (MEDIUM): numpy-ml's CrossEntropy copied into a student's file, with its checks
    (y binary, y_pred stochastic), raised on the reading probe's soft targets: both readings "relative error 1",
    checked as dL/dy_pred, exit 3 with ``--targets onehot``. The probe draws the targets as --targets asks."""
    from test_cli import both, run_here, student

    f = student(tmp_path, NML_CE_COPY)
    p = run_here("check", f"{f}::CrossEntropy", "--loss", "--input-shape", "4,3", "--targets", "onehot")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "dL/dz = grad(y, y_pred) with y_pred = softmax(z)" in text, text
    assert "PASS: CrossEntropy: dL/dy_pred matches" in text and "neither reading" not in text, text


def test_a_reading_that_raises_on_the_probe_is_named_as_raising_not_as_relative_error_1():
    from gradcheck import _adapters

    ns = {}
    exec(compile(NML_CE_COPY, "nml_ce_copy.py", "exec"), ns)  # noqa: S102 - the test's own text
    obj, first = ns["CrossEntropy"](), {"loss": False, "grad": False}
    soft, words = _adapters._two_arg_reading(obj, "loss", "grad", first)  # no probe: soft targets (4, 3)
    assert "as dL/dy_pred, raised ValueError: Matrix must be binary" in words, words
    assert "as dL/dz with y_pred = softmax(z) (numpy-ml's CrossEntropy), raised ValueError: Matrix must be binary" \
        in words and "relative error" not in words, words
    onehot = np.eye(3)[np.random.default_rng(0).integers(0, 3, 5)]
    assert _adapters._two_arg_reading(obj, "loss", "grad", first, (onehot, np.zeros((5, 3)))) == (True, "")
    probs = np.full((5, 3), 1 / 3)  # rows summing to 1, not binary: raises again, named
    assert "raised ValueError" in _adapters._two_arg_reading(obj, "loss", "grad", first, (probs, probs))[1]
