"""redteam43 F1: a batchnorm whose test mode also moves bn_param's running statistics toward the test batch (CS231n's
starter layout: the batch statistics computed before the ``if``, the update written after the ``if/elif``, where the
starter's comment "Store the updated running means back into bn_param" stands) scored 48 / 48 on cs231n_layers: the
test-mode tests compared the output alone, and the one test of bn_param ran training mode. The visible test-mode test
now also reads bn_param after the call. In process (tests/test_grading_hidden_inputs' harness).

F5: a class batchnorm whose training forward never updated its running statistics, or swapped the momentum, kept every
point of a training-mode gradient test against manualprop.BatchNorm1D, while ``gradcheck check --training --reference``
FAILed it; the grader now compares them as check does."""

import numpy as np
import pytest

import manualprop as mp
from gradcheck.grading.checks import layer_gradients
from tests.test_grading_hidden_inputs import CS, _submission, score

BN_TRAIN = '''    if mode == "train":
        mean, var = x.mean(axis=0), x.var(axis=0)
        bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mean
        bn_param["running_var"] = momentum * running_var + (1 - momentum) * var
    elif mode == "test":
        mean, var = running_mean, running_var
'''
STARTER_LAYOUT = '''    sample_mean, sample_var = x.mean(axis=0), x.var(axis=0)
    if mode == "train":
        mean, var = sample_mean, sample_var
    elif mode == "test":
        mean, var = running_mean, running_var
'''
STORE = ('        raise ValueError(f"batchnorm_forward: bn_param[\'mode\'] must be \'train\' or \'test\'; got {mode!r}")\n',
         '        raise ValueError(f"batchnorm_forward: bn_param[\'mode\'] must be \'train\' or \'test\'; got {mode!r}")\n'
         '    # Store the updated running means back into bn_param\n'
         '    bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * sample_mean\n'
         '    bn_param["running_var"] = momentum * running_var + (1 - momentum) * sample_var\n')
# a right variant of the same layout: the running statistics written back after the if/elif, unchanged in test mode
STORE_RIGHT = (STORE[0], STORE[0] + '    if mode == "train":\n'
               '        running_mean = momentum * running_mean + (1 - momentum) * sample_mean\n'
               '        running_var = momentum * running_var + (1 - momentum) * sample_var\n'
               '    bn_param["running_mean"], bn_param["running_var"] = running_mean, running_var\n')


def _visible(test):
    """A visible test (no ``grading_seed``) as the harness's ``score`` calls a hidden one."""
    def run(student, grade, rng, grading_seed):  # noqa: ARG001 - the harness's keyword
        return test(student=student, grade=grade, rng=rng)
    return run


@pytest.mark.parametrize("seed", [0, 1])
def test_a_test_mode_that_updates_the_running_statistics_loses_the_test_mode_point(monkeypatch, seed):
    from gradcheck.grading import checks

    monkeypatch.setattr(checks, "DIAGNOSIS_FORWARDS", 0)  # scores only (test_grading_hidden_inputs' rule)
    bug = _submission("cs231n_layers", "starter_layout", (BN_TRAIN, STARTER_LAYOUT), STORE)
    right = _submission("cs231n_layers", "starter_right", (BN_TRAIN, STARTER_LAYOUT), STORE_RIGHT)
    solution = _submission("cs231n_layers", "solution")
    assert score(_visible(CS.test_batchnorm_forward_test_mode), bug, seed) == pytest.approx(1 / 2)  # before: 1 (output right)
    assert score(_visible(CS.test_batchnorm_forward_test_mode), right, seed) == 1.0
    assert score(_visible(CS.test_batchnorm_forward_test_mode), solution, seed) == 1.0
    assert score(_visible(CS.test_batchnorm_running_statistics), bug, seed) == 1.0  # its training mode is right


class BatchNorm:
    """A class batchnorm (the manualprop protocol, PyTorch's running-average convention) with one edit: ``update``
    "right", "none" (the training forward never updates the running statistics) or "swapped" (``running = m *
    running + (1 - m) * batch`` with PyTorch's m = 0.1)."""

    def __init__(self, num_features, update="right", momentum=0.1, eps=1e-5):
        self.update, self.momentum, self.eps = update, momentum, eps
        self.params = {"gamma": np.ones(num_features), "beta": np.zeros(num_features)}
        self.grads = {}
        self.running_mean, self.running_var = np.zeros(num_features), np.ones(num_features)

    def forward(self, X, training=False):
        if training:
            mean, var, n, m = X.mean(axis=0), X.var(axis=0), len(X), self.momentum
            if self.update == "right":
                self.running_mean = (1 - m) * self.running_mean + m * mean
                self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)
            elif self.update == "swapped":
                self.running_mean = m * self.running_mean + (1 - m) * mean
                self.running_var = m * self.running_var + (1 - m) * var * n / (n - 1)
        else:
            mean, var = self.running_mean, self.running_var
        self.training, self.inv_std = training, 1.0 / np.sqrt(var + self.eps)
        self.xhat = (X - mean) * self.inv_std
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dY):
        self.grads = {"beta": dY.sum(axis=0), "gamma": (dY * self.xhat).sum(axis=0)}
        dxhat = dY * self.params["gamma"]
        if not self.training:
            return dxhat * self.inv_std
        n = len(dY)
        return self.inv_std / n * (n * dxhat - dxhat.sum(axis=0) - self.xhat * (dxhat * self.xhat).sum(axis=0))


@pytest.mark.parametrize("update", ["none", "swapped"])
def test_a_class_batchnorm_with_wrong_running_statistics_loses_its_training_points(update):
    """F5: against manualprop.BatchNorm1D in training mode, as ``gradcheck check --training --reference`` FAILs it."""
    X = np.random.default_rng(3).normal(1.0, 2.0, (6, 4))
    right = layer_gradients(BatchNorm(4), X, mp.BatchNorm1D(4), training=True, seed=1)
    assert right.passed, right.markdown()
    bug = layer_gradients(BatchNorm(4, update), X, mp.BatchNorm1D(4), training=True, seed=1)
    assert not any(p.passed for p in bug.parts), bug.markdown()  # before: every part passed
    assert "running" in bug.parts[0].message
    # the eval gradients of a fresh layer hold the initial statistics on both sides: not what this compares
    assert layer_gradients(BatchNorm(4, update), X, mp.BatchNorm1D(4), training=False, seed=1).passed

