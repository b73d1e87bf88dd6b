"""verify37 F2: a BatchNorm whose training forward never writes its running statistics PASSed ``gradcheck check
--reference manualprop.BatchNorm1D`` (only a WARNING: read in eval mode alone, a running statistic): the statistics were
compared only when forward writes them. The reference's statistics the layer holds under the same names (or
``moving_*``) are compared when forward writes none (:func:`gradcheck._running_stats._held_unwritten`): they keep all
of their old value, a FAIL naming them.
"""

from test_cli import run_here
from test_cli_newuser35 import BN, REF, TORCH, _bn, _one_line


def test_running_statistics_never_written_fail_as_not_updated(tmp_path):
    never = BN.replace("            self.running_mean = UPDATE_MEAN\n            self.running_var = UPDATE_VAR\n", "")
    assert never != BN
    f = tmp_path / "bn.py"
    f.write_text(never.replace("MOMENTUM", "0.1"))
    p = run_here("check", f"{f}::BatchNorm", "--input-shape", "8,4", "--init", '{"D": 4}', *REF)
    text = _one_line(p)
    assert p.returncode == 1, text  # (before: exit 0, PASS)
    assert "running statistics differ from the reference" in text, text
    assert ("running_mean is [0, 0, 0, ...] after a training forward from [0, 0, 0, ...], manualprop.BatchNorm1D's"
            in text), text
    assert "(not updated by the training forward: it keeps all of its old value)" in text, text


def test_a_right_update_still_passes(tmp_path):
    p = run_here("check", _bn(tmp_path, TORCH, "0.1", True), "--input-shape", "8,4", "--init", '{"D": 4}', *REF)
    assert p.returncode == 0, _one_line(p)
