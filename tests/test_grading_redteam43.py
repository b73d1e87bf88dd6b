"""redteam43 F1: a batchnorm whose test mode also moves bn_param's running statistics toward the test batch (CS231n's
starter layout: the batch statistics computed before the ``if``, the update written after the ``if/elif``, where the
starter's comment "Store the updated running means back into bn_param" stands) scored 48 / 48 on cs231n_layers: the
test-mode tests compared the output alone, and the one test of bn_param ran training mode. The visible test-mode test
now also reads bn_param after the call. In process (tests/test_grading_hidden_inputs' harness)."""

import pytest

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

