"""The small CNN on digits, trained with manualprop and with autoprop from identical weights."""

import subprocess
import sys

from gradcheck.train import TrainConfig, run_training


def test_cnn_both_tracks_reach_097_and_agree_step_by_step(tmp_path):
    report = run_training(TrainConfig(model="cnn", epochs=12), progress=False, log=None,
                          plots_dir=str(tmp_path))
    assert report.test_accuracy_manual >= 0.97
    assert report.test_accuracy_tape >= 0.97
    assert report.max_rel_loss_diff <= 1e-9
    assert report.max_rel_grad_diff <= 1e-9
    assert report.final_param_max_abs_diff < 1e-10
    assert report.passed
    assert (tmp_path / "training.png").stat().st_size > 10_000


def test_cli_train_cnn_option_is_documented():
    out = subprocess.run([sys.executable, "-m", "gradcheck", "train", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "--model {mlp,cnn}" in out
