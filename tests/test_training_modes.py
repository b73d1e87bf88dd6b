"""Training mode: a forward with a ``training`` argument is checked in both modes by default."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import manualprop as mp
from gradcheck import check_layer, diagnose_layer
from gradcheck.config import CheckConfig, training_modes
from gradcheck.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]

#: CS231n-style batch normalisation whose training backward forgets the paths
#: through the batch mean and variance (the eval backward is right).
FORGETFUL_BN = """
import numpy as np

class ForgetfulBN:
    def __init__(self, num_features=4, eps=1e-5, momentum=0.1):
        self.eps, self.momentum = eps, momentum
        self.params = {"gamma": np.linspace(0.5, 1.5, num_features), "beta": np.linspace(-0.2, 0.3, num_features)}
        self.grads = {}
        self.running_mean = np.full(num_features, 0.1)
        self.running_var = np.full(num_features, 1.3)

    def forward(self, X, training=False):
        if training:
            mu, var = X.mean(axis=0), X.var(axis=0)
        else:
            mu, var = self.running_mean, self.running_var
        self.xhat = (X - mu) / np.sqrt(var + self.eps)
        self.std = np.sqrt(var + self.eps)
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dY):
        self.grads = {"gamma": np.sum(dY * self.xhat, axis=0), "beta": dY.sum(axis=0)}
        return dY * self.params["gamma"] / self.std  # forgets d mu / dX and d var / dX in training
"""


def _forgetful():
    ns = {}
    exec(FORGETFUL_BN, ns)  # noqa: S102 - our own test source
    return ns["ForgetfulBN"]()


def test_forgetful_batchnorm_fails_by_default_in_training_mode():
    X = np.random.default_rng(0).standard_normal((6, 4))
    res = check_layer(_forgetful(), X, twin=None)
    assert not res.passed
    assert res.training is True and res.failing_tensors == ["dX"]
    assert res.modes == ["training", "eval"] and res.other_modes[0].passed
    table = res.table()
    assert "ForgetfulBN [training]" in table and "ForgetfulBN [eval]" in table
    # one mode at a time
    assert check_layer(_forgetful(), X, twin=None, training=False).passed
    assert not check_layer(_forgetful(), X, twin=None, training=True).passed


def test_correct_batchnorm_passes_both_modes():
    bn = mp.BatchNorm1D(4)
    X = np.random.default_rng(1).standard_normal((6, 4))
    res = check_layer(bn, X, twin="auto")
    assert res.passed and sorted(res.modes) == ["eval", "training"]
    assert res.to_dict()["other_modes"][0]["passed"] is True


def test_same_output_in_both_modes_is_checked_once():
    res = check_layer(mp.Linear(5, 3, rng=0), (4, 5))
    assert res.passed and res.modes == ["eval"]
    assert any("checked once" in n for n in res.notes)


def test_dropout_mask_is_held_for_the_training_check_and_released():
    drop = mp.Dropout(0.5, rng=0)
    res = check_layer(drop, (4, 6))
    assert res.passed, res.table()
    assert sorted(res.modes) == ["eval", "training"]
    assert drop._masks.fixed is False  # released: the next forward draws again
    assert not check_layer(mp.Dropout(0.5, rng=0), (4, 6), training=True).passed  # asked for: not held


def test_training_setting_is_validated():
    with pytest.raises(UsageError, match="training must be"):
        CheckConfig(training="yes")
    assert training_modes(mp.Linear(2, 2), "auto") == [False, True]
    assert training_modes(mp.Linear(2, 2), "both") == [False, True]
    assert training_modes(mp.Linear(2, 2), True) == [True]

    class NoMode:
        def forward(self, X):
            return X

    assert training_modes(NoMode(), "auto") == [False]


def test_diagnose_names_the_mode():
    X = np.random.default_rng(0).standard_normal((6, 4))
    d = diagnose_layer(_forgetful(), X, mode="full")
    assert not d.passed and "[training]" in d.sentence()
    assert diagnose_layer(_forgetful(), X, mode="full", training=False).passed


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "gradcheck", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def _cli_here(*args):
    from test_cli import run_here

    return run_here(*args, cwd=ROOT)


def test_cli_checks_both_modes_by_default(tmp_path):
    f = tmp_path / "bn.py"
    f.write_text(textwrap.dedent(FORGETFUL_BN))
    p = _cli("check", f"{f}::ForgetfulBN", "--input-shape", "6,4")
    out = " ".join(p.stdout.split())
    assert p.returncode == 1, p.stdout + p.stderr
    assert "mode: eval and training" in out and "[training]" in out
    p = _cli_here("check", f"{f}::ForgetfulBN", "--input-shape", "6,4", "--eval")  # the first: the console script
    assert p.returncode == 0, p.stdout + p.stderr
    assert "mode: eval (" in " ".join(p.stdout.split())
    p = _cli_here("check", f"{f}::ForgetfulBN", "--input-shape", "6,4", "--training")
    assert p.returncode == 1 and "mode: training (" in " ".join(p.stdout.split())
