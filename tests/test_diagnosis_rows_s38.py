"""A conv's or a pool's backward whose loop over output positions stops early (corpus37 F6, "no known bug pattern"
before): named with the block of dY it used, which rows, and the loops' bounds to check. An LSTM step's doubled
parameter gradient at a batch of 2 (fix37a's leftover): a constant factor, not a missing 1/batch. An LSTM step pair
with one weight per gate on [x, h] (fix37h's leftover) is an LSTM step: its doubled dx a constant factor, not
attention's 1/sqrt(d_k)."""

from buggy_layers import diagnose


def test_a_pools_break_after_two_rows_is_named_with_the_rows():
    d = diagnose("session38b.py::MaxPoolRowBreak")
    s = " ".join(d.sentence().split())
    assert d.codes == ["positions-cut"], s
    assert ("dX is the gradient of dY[:, :, :2, :] alone (the first 2 of 4 output positions along axis 2); the rest of "
            "dY is left out: the loop over output positions stops early (range(2) where range(4) is due along axis 2, "
            "or a break or return inside it?)") in s, s
    assert "check the bounds of the loops over the output's positions" in s, s
    assert d.errors[0].lesson == "lessons/21-pooling.md", d.errors[0].lesson


def test_a_convs_rows_and_columns_cut_short_are_named_for_dx_and_dw():
    d = diagnose("session38b.py::ConvRowsColsMissLast")
    s = " ".join(d.sentence().split())
    assert d.codes == ["positions-cut", "positions-cut"], s
    assert ("dX and dW are the gradient of dY[:, :, :2, :2] alone (the first 2 of 3 output positions along axis 2 and "
            "the first 2 of 3 output positions along axis 3)") in s, s
    assert "range(2) where range(3) is due along axis 2, range(2) where range(3) is due along axis 3" in s, s
    assert "no known bug pattern" not in s, s


def test_the_controls_pass():
    for key in ("session38b.py::ConvRows", "session38b.py::MaxPoolEight", "session38b.py::lstmsplit"):
        assert diagnose(key).passed, key


def test_an_lstm_steps_doubled_dw_ih_at_a_batch_of_two_is_a_constant_factor():
    d = diagnose("session38b.py::LSTMCellTorchDWih2")
    s = " ".join(d.sentence().split())
    assert d.codes == ["factor"], s  # before: factor-batch, "a 1/batch is missing (a sum where a mean is due)"
    assert ("dW_ih is 2 times the correct gradient: a constant factor is wrong somewhere; it equals the batch size 2 "
            "here by chance: the same factor at a batch of 3, so it is no 1/batch") in s, s


def test_an_lstm_pair_with_one_weight_per_gate_is_an_lstm_step():
    d = diagnose("session38b.py::lstmsplitdx2")
    s = " ".join(d.sentence().split())
    assert d.codes == ["factor"], s  # before: factor-sqrt-dk, "attention's scores Q K^T / sqrt(d_k)"
    assert "dx is 2 times the correct gradient: a constant factor is wrong somewhere" in s, s
    assert "attention" not in s and "sqrt" not in s and "1/batch is missing" not in s, s
    assert [f.lesson for f in d.errors] == ["lessons/32-lstm.md"], [f.lesson for f in d.errors]
