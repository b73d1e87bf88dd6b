"""The small CNN on digits, trained with manualprop and with autoprop from identical weights."""

from test_cli import run_here

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
    p = run_here("train", "--help")  # gradcheck.cli.main in this process: the same parser, its help
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "--model {mlp,cnn}" in out
