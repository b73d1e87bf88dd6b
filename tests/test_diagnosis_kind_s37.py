"""Session 37 (fix37a): a diagnosis names no pattern of a kind of layer the checked one is not.

- verify36 F8: an LSTM step whose dx is doubled, at a batch of 2 beside h of 4 units, was told "a 1/sqrt(d) factor is
  missing, e.g. attention's 1/sqrt(d_k) with d_k = 4". A stacked output (h and c) now has its batch on axis 1 for the
  check at one sample more, which finds the same factor at a batch of 3 (no 1/batch), and the attention hints are
  withheld from a layer recognised as another kind (``diagnose._layer_kind``): a constant factor, said as one.
- corpus36 F5: Victor Zhou's softmax (uses dY's first nonzero entry alone: a return inside the loop over dY) was told
  "backward assigns (=) where it must add (+=) ... in max pooling" and "dweights and dbiases are the gradient of the
  first sample only". Now "the gradient for one entry of dY alone, its first nonzero one".
"""

from buggy_layers import diagnose


def test_an_lstm_steps_doubled_dx_is_a_constant_factor_not_attention():
    d = diagnose("session37.py::LSTMCellTorchDx2")
    text = d.sentence()
    assert not d.passed and d.codes[:1] == ["factor"], text
    assert "dX0 is 2 times the correct gradient: a constant factor is wrong somewhere" in text, text
    assert "the same factor at a batch of 3, so it is no 1/batch" in text, text
    assert "attention" not in text and "sqrt" not in text, text


def test_zhous_softmax_is_told_it_uses_one_entry_of_dy_not_pooling():
    d = diagnose("session37.py::ZhouSoftmaxFirst")
    text = d.sentence()
    assert not d.passed and set(d.codes) == {"dy-one-entry"}, text
    assert ("dX, dweights, dbiases are the gradient for one entry of dY alone, its first nonzero one (dY[0]), the other "
            "2 entries of dY left out") in text, text
    assert "right only when dY has one nonzero entry" in text, text
    assert "pooling" not in text and "sample" not in text, text
    assert [f.lesson for f in d.errors if f.lesson] == [], [f.lesson for f in d.errors]  # no pooling lesson to read


def test_one_entry_of_each_samples_row_is_named_per_sample():
    d = diagnose("session37.py::SoftmaxRowsLast")
    text = d.sentence()
    assert not d.passed and set(d.codes) == {"dy-one-entry"}, text
    assert ("dX and dW are the gradient for one entry of dY per sample alone, its last nonzero one (dY[i, 2] of each "
            "sample i), the other 8 entries of dY left out") in text, text
    assert "pooling" not in text, text


def test_the_correct_counterparts_pass():
    for key in ("session37.py::ZhouSoftmax", "session37.py::SoftmaxRows", "session36.py::LSTMCellTorch"):
        d = diagnose(key)
        assert d.passed, d.report()
