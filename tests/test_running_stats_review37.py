"""review37 F2 and the surviving running-statistics mutants: running statistics named otherwise than the
reference's (Keras's ``moving_mean``/``moving_variance``, a plain class's ``self.mean``/``self.var``) were not
compared, and the PASS pointed to "the notes above", which did not exist: a swapped momentum PASSed. Now they are
compared by role when one buffer alone has it, and a buffer with no counterpart is named in a note."""
import pytest
from test_cli import run_here
from test_cli_newuser35 import BN, REF, SWAPPED, TORCH, _one_line

ARGS = ("--input-shape", "8,4", "--init", '{"D": 4}', *REF)


def _named(tmp_path, update, momentum, mean, var):
    """newuser35's BatchNorm with its running statistics named ``self.<mean>``, ``self.<var>``."""
    text = BN.replace("MOMENTUM", momentum).replace("UPDATE_MEAN", update[0]).replace("UPDATE_VAR", update[1])
    f = tmp_path / "bn.py"
    f.write_text(text.replace("self.running_mean", f"self.{mean}").replace("self.running_var", f"self.{var}"))
    return f"{f}::BatchNorm"


@pytest.mark.parametrize("mean, var, update, momentum", [
    ("moving_mean", "moving_variance", TORCH, "0.9"),  # Keras's names, CS231n's value in PyTorch's formula
    ("mean", "var", SWAPPED, "0.1"),  # a plain class's names, PyTorch's value in CS231n's formula
])
def test_a_swapped_momentum_under_other_names_fails(tmp_path, mean, var, update, momentum):
    p = run_here("check", _named(tmp_path, update, momentum, mean, var), *ARGS)
    text = _one_line(p)
    assert p.returncode == 1, text  # (before: exit 0, "the notes above say why", no note)
    assert f"{mean} compared as manualprop.BatchNorm1D's running_mean" in text, text
    assert f"{var} compared as manualprop.BatchNorm1D's running_var" in text, text
    assert "yours keeps 0.1 of the old value" in text and "the momentum looks swapped" in text, text


@pytest.mark.parametrize("mean, var, update, momentum, said", [
    ("mean", "var", TORCH, "0.1", "after a training forward and the eval output after it match"),
    ("moving_mean", "moving_variance", SWAPPED, "0.99", "keeping 0.99 of the old value, your momentum=0.99"),
])
def test_right_running_averages_under_other_names_pass_compared(tmp_path, mean, var, update, momentum, said):
    p = run_here("check", _named(tmp_path, update, momentum, mean, var), *ARGS)
    text = _one_line(p)
    assert p.returncode == 0, text
    assert f"{mean} compared as manualprop.BatchNorm1D's running_mean" in text and said in text, text
    assert "was NOT checked" not in text, text


def test_buffers_named_without_a_role_are_compared_by_their_update(tmp_path):
    """Before session 46 running_mu, running_sigma2 had "no counterpart" (a note) and were NOT checked; the one role
    finder (find_roles, tests/test_running_roles_s46.py) now finds them by what a training forward does to them."""
    p = run_here("check", _named(tmp_path, TORCH, "0.1", "running_mu", "running_sigma2"), *ARGS)
    text = _one_line(p)
    assert p.returncode == 0, text
    assert ("running statistics: running_mu compared as manualprop.BatchNorm1D's running_mean (found by its update"
            in text), text
    assert "was NOT checked" not in text and "no counterpart" not in text, text


def test_a_swapped_mean_with_a_variance_never_updated_is_named_swapped(tmp_path):
    """review37's rs_swapped_never survived: the mean keeps the reference's momentum 0.1 (swapped), the variance
    keeps all of its old value; no one share fits both, and the swap is named from the mean alone."""
    p = run_here("check", _named(tmp_path, (SWAPPED[0], "self.running_var"), "0.1", "running_mean", "running_var"),
                 *ARGS)
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "running_var is [1, 1, 1, ...] after a training forward from [1, 1, 1, ...]" in text, text
    assert "yours keeps 0.1 of the old value" in text and "the momentum looks swapped" in text, text


@pytest.mark.parametrize("update, momentum, convention", [
    (TORCH, "0.1", "PyTorch's convention (momentum is the batch's share)"),
    (SWAPPED, "0.9", "CS231n's and Keras's convention (momentum is the share kept)"),
])
def test_one_update_keeping_09_gets_one_verdict_whichever_convention_its_momentum_is_in(
        tmp_path, update, momentum, convention):
    """review37's ar_ref_m_ok (the decision pinned): against a reference given momentum=0.9 (PyTorch's formula,
    keeping 0.1), a PyTorch class with momentum=0.1 and a CS231n class with momentum=0.9 make the same update,
    keeping 0.9 at their own momentum: both accepted as another rate (docs/checking.md). Before, the PyTorch class
    FAILed as "the momentum looks swapped" while the CS231n class PASSed."""
    ref = ("--reference", "manualprop.BatchNorm1D", "--reference-init", '{"num_features": 4, "momentum": 0.9}')
    p = run_here("check", _named(tmp_path, update, momentum, "running_mean", "running_var"), "--input-shape", "8,4",
                 "--init", '{"D": 4}', *ref)
    text = _one_line(p)
    assert p.returncode == 0, text
    assert (f"are running averages keeping 0.9 of the old value, your momentum={momentum} in {convention}; "
            "manualprop.BatchNorm1D (momentum=0.9) keeps 0.1") in text, text
    assert "looks swapped" not in text, text


def test_mean_and_variance_at_two_rates_are_not_accepted_as_the_mean_rate(tmp_path):
    """momentum=0.99 (Keras's convention) for the mean, 0.5 kept by the variance: no one share fits both, so no
    "another rate" for the layer's momentum (kills review37's ar_one_share_loose, which took the mean's 0.99)."""
    update = ("m * self.running_mean + (1 - m) * mu", "0.5 * self.running_var + 0.5 * var")
    p = run_here("check", _named(tmp_path, update, "0.99", "running_mean", "running_var"), *ARGS)
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "another rate" not in text and "running statistics differ from the reference" in text, text


def test_statistics_never_updated_at_momentum_1_fail(tmp_path):
    """momentum=1.0 in CS231n's formula keeps all of the old value: the statistics never move, a FAIL, not a
    running average "at the layer's own momentum" (kills review37's ar_k_range_off)."""
    p = run_here("check", _named(tmp_path, SWAPPED, "1.0", "running_mean", "running_var"), *ARGS)
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "not updated by the training forward: it keeps all of its old value" in text, text
    assert "another rate" not in text, text
