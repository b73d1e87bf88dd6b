"""Manual vs tape training on digits: the stated requirements, with real numbers."""

import numpy as np
import pytest

from gradcheck.train import (
    GRAD_RTOL,
    LOSS_RTOL,
    MIN_ACCURACY,
    TrainConfig,
    load_digits_split,
    run_training,
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return run_training(TrainConfig(), progress=False, log=None,
                        plots_dir=str(tmp_path_factory.mktemp("train")))


def test_split_is_stratified_and_scaled():
    X_tr, X_te, y_tr, y_te = load_digits_split(seed=0)
    assert X_tr.shape == (1347, 64) and X_te.shape == (450, 64)
    assert X_tr.min() == 0.0 and X_tr.max() == 1.0
    # stratified: every class keeps its share, 25% of its images (+-1) in the test set
    total = np.bincount(np.concatenate([y_tr, y_te]), minlength=10)
    assert np.all(np.abs(np.bincount(y_te, minlength=10) - 0.25 * total) <= 1)


def test_requirements_hold(report):
    assert report.passed, report.summary()
    assert report.test_accuracy_manual >= MIN_ACCURACY
    assert report.test_accuracy_tape >= MIN_ACCURACY
    assert report.max_rel_loss_diff <= LOSS_RTOL
    assert report.max_rel_grad_diff <= GRAD_RTOL


def test_runs_agree_step_by_step(report):
    n = report.config.epochs * report.steps_per_epoch
    assert report.loss_manual.shape == report.loss_tape.shape == (n,)
    np.testing.assert_allclose(report.loss_tape, report.loss_manual, rtol=2e-9, atol=0)
    assert report.final_param_max_abs_diff < 1e-10
    # training did train: the last epoch's loss is far below log(10) = 2.30
    assert report.epoch_loss_manual[-1] < 0.1 < 2.0 < report.loss_manual[0]


def test_the_run_time_is_reported(report):
    """Speed is measured in benchmarks, not asserted here: only that the time is measured and shown."""
    assert report.seconds > 0 and f"{report.seconds:.1f} s" in report.summary()


def test_plot_and_summary(report):
    with open(report.plot_path, "rb") as f:
        assert f.read(4) == b"\x89PNG"
    s = report.summary()
    assert "test accuracy: manualprop" in s and "[ok]" in s and "[FAIL]" not in s


def test_failed_requirement_is_reported():
    r = run_training(TrainConfig(epochs=1, learning_rate=1e-4), progress=False, log=None)
    assert not r.passed
    failed = [name for name, *_, ok in r.requirements if not ok]
    assert failed == ["test accuracy, manualprop", "test accuracy, autoprop"]
    assert "[FAIL] test accuracy, manualprop" in r.summary()
