"""review36 F2-F4: the running statistics compared with ``--reference manualprop.BatchNorm1D`` (newuser35 H2's check).

F2: a right Keras-convention layer (momentum=0.99 keeps 0.99 of the old value; PyTorch's momentum m keeps 1 - m)
FAILed and was told to rewrite its formula: a running average keeping one share everywhere, the layer's own momentum
in one convention, is accepted as another rate (said, with the --reference-init that compares the rate too); the
same share without that momentum FAILs naming the rate and that option; a share under a half (0.99 in PyTorch's
formula, keeping 0.01) stays a swapped convention. F3: a running_var never updated was blamed on the eval forward:
every running statistic the reference holds is compared, and one that kept its old value is named not updated.
F4: "structural checks failed: running statistics ()" printed empty parentheses.
"""
import pytest
from test_cli import run_here
from test_cli_newuser35 import REF, SWAPPED, TORCH, _bn, _one_line

KERAS = SWAPPED  # running = m * running + (1 - m) * batch: m is the share kept


@pytest.mark.parametrize("unbiased", [True, False])
def test_keras_momentum_099_is_another_rate_not_a_wrong_formula(tmp_path, unbiased):
    p = run_here("check", _bn(tmp_path, KERAS, "0.99", unbiased), "--input-shape", "8,4", "--init", '{"D": 4}', *REF)
    text = _one_line(p)
    assert p.returncode == 0, text  # (before: exit 1, "Fix: running = (1 - momentum) * running + momentum * ...")
    assert ("running_mean, running_var are running averages keeping 0.99 of the old value, your momentum=0.99 in "
            "CS231n's and Keras's convention") in text, text
    assert 'add "momentum": 0.01 to --reference-init' in text and "Fix: running =" not in text, text
    assert "after a training forward and the eval output after it match manualprop.BatchNorm1D's" in text, text


def test_keras_momentum_099_compared_at_its_rate_passes_without_the_rate_note(tmp_path):
    ref = ("--reference", "manualprop.BatchNorm1D", "--reference-init", '{"num_features": 4, "momentum": 0.01}')
    p = run_here("check", _bn(tmp_path, KERAS, "0.99", True), "--input-shape", "8,4", "--init", '{"D": 4}', *ref)
    text = _one_line(p)
    assert p.returncode == 0 and "another rate" not in text, text
    assert "after a training forward and the eval output after it match manualprop.BatchNorm1D's" in text, text


def test_a_rate_that_is_not_the_layers_momentum_fails_naming_the_rate_and_the_option(tmp_path):
    """0.99 kept with momentum=0.9 (the constant written in the formula): a FAIL, told it is a running average at
    another rate and how to compare at it, not to rewrite the formula."""
    p = run_here("check", _bn(tmp_path, ("0.99 * self.running_mean + 0.01 * mu", "0.99 * self.running_var + 0.01 * var"),
                              "0.9"), "--input-shape", "8,4", "--init", '{"D": 4}', *REF)
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "Yours is a running average at another rate: every entry keeps 0.99 of the old value" in text, text
    assert 'add "momentum": 0.01 to --reference-init' in text and "Fix: running =" not in text, text


def test_keras_value_in_pytorchs_formula_stays_a_swapped_convention(tmp_path):
    """momentum=0.99 in (1 - m) * running + m * batch keeps 0.01: a value of one convention in the other's formula."""
    p = run_here("check", _bn(tmp_path, TORCH, "0.99"), "--input-shape", "8,4", "--init", '{"D": 4}', *REF)
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "yours keeps 0.01 of the old value" in text and "the momentum looks swapped" in text, text
    assert "another rate" not in text, text


def test_a_running_var_never_updated_is_named_not_the_eval_forward(tmp_path):
    p = run_here("check", _bn(tmp_path, (TORCH[0], "self.running_var")), "--input-shape", "8,4", "--init",
                 '{"D": 4}', *REF)
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "running_var is [1, 1, 1, ...] after a training forward from [1, 1, 1, ...]" in text, text
    assert "not updated by the training forward: it keeps all of its old value" in text, text
    assert "the eval forward does not normalise" not in text, text
    # F4: the failed probe without a detail prints its name alone
    assert "structural checks failed: running statistics" in text and "running statistics ()" not in text, text


def test_a_class_keeping_its_own_momentum_01_is_the_swapped_momentum(tmp_path):
    """newuser37 F6: a class with momentum=0.1 in CS231n's formula (m * running + (1 - m) * batch) keeps 0.1 of the
    old value: PyTorch's momentum in the other convention's formula. It PASSed as "another rate" while the grader,
    given the same reference, took the points: a FAIL naming the swap (a CS231n pair's bn_param momentum=0.1 is its
    API's share kept and stays accepted: tests/test_verify36_fixes.py)."""
    p = run_here("check", _bn(tmp_path, KERAS, "0.1"), "--input-shape", "8,4", "--init", '{"D": 4}', *REF)
    text = _one_line(p)
    assert p.returncode == 1, text  # (before: exit 0, "accepted as another rate")
    assert "yours keeps 0.1 of the old value" in text and "the momentum looks swapped" in text, text
    assert "another rate" not in text, text
