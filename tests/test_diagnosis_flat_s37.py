"""A missing ``.T`` in dX of a layer that flattens its input first (corpus37 F3): named as on a 2-D input."""

from buggy_layers import diagnose, first_code


def test_missing_transpose_after_flattening_is_named():
    d = diagnose("session37.py::LinearFlatDxNoT")
    assert first_code(d) == "transposed-weight", d.sentence()  # before: "wrong-values", no known bug pattern
    s = " ".join(d.sentence().split())
    assert "dX = dY @ W.T, not dY @ W (on X flattened to (N, 6), then reshaped to X's shape)" in s, s


def test_the_correct_flattening_layer_passes():
    assert diagnose("session37.py::LinearFlat").passed
