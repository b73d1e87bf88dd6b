"""``gradcheck check --loss`` against a reference (session 40, verify39 F6): a loss summed over the batch where the
reference averages (its gradient right for its own L) is named as the factor N, not "no known bug pattern"."""

from pathlib import Path

import pytest
from test_cli import check_source

#: the planted-bug table's pair (tests/buggy_layers/loss_reference40.py), without its table-only lines
SOURCE = "\n".join(line for line in (Path(__file__).parent / "buggy_layers" / "loss_reference40.py").read_text()
                   .split('"""', 2)[2].splitlines() if "manualprop" not in line and "REFERENCE" not in line)
ARGS = ("--input-shape", "6,5", "--loss", "--targets", "labels", "--reference", "manualprop.SoftmaxCrossEntropy")


@pytest.mark.parametrize("name,init,what", [
    ("CESum", None, "L is 6 times too large: L and dy_pred are the reference's times N = 6, the batch size, and "
     "dy_pred agrees with central differences of this L: the loss sums over the batch where the reference averages; "
     "divide by N"),
    ("CEMean", '{"reduction": "sum"}', "L is 6 times too small: L and dy_pred are the reference's divided by N = 6, "
     "the batch size, and dy_pred agrees with central differences of this L: the loss averages over the batch where "
     "the reference sums; multiply by N"),
])
def test_a_loss_reduced_over_the_batch_otherwise_than_its_reference_is_named_as_the_factor_n(tmp_path, name, init,
                                                                                           what):
    code, out = check_source(tmp_path, SOURCE, name, *ARGS, *(("--reference-init", init) if init else ()))
    text = " ".join(out.split())
    assert code == 1, text
    assert f"FAIL: {name}: the loss value L differs from the reference's; gradient mismatch in dy_pred." in text, text
    assert what in text, text  # (before: "dy_pred differs from the correct gradient in 0 of 30 elements")


def test_the_summed_loss_passes_against_a_reference_built_to_sum(tmp_path):
    code, out = check_source(tmp_path, SOURCE, "CESum", *ARGS, "--reference-init", '{"reduction": "sum"}')
    assert code == 0 and "PASS: CESum: dL/dy_pred and L match" in " ".join(out.split()), out
