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


def _lstm_pair_dx2() -> str:
    """CS231n's lstm_step_forward / lstm_step_backward pair (every array an input: x, prev_h, prev_c, Wx, Wh, b; gates
    i, f, o, g; tests/buggy_layers/session24.py's) whose backward returns dx doubled (verify37 F6)."""
    import inspect

    from buggy_layers import session24 as s

    src = "\n\n".join(inspect.getsource(f) for f in (s.sigmoid, s.lstm_step_forward, s.lstm_step_backward))
    assert src.count("return da.dot(Wx.T), ") == 1, src
    return "import numpy as np\n\n" + src.replace("return da.dot(Wx.T), ", "return 2 * da.dot(Wx.T), ")


def test_cs231n_lstm_step_pairs_doubled_dx_is_a_constant_factor_not_attention(tmp_path):
    """verify37 F6: the pair at 3 samples (h of 4 units: 2 = sqrt(4)) was told "a factor 1/sqrt(4) is missing, e.g.
    attention's scores Q K^T / sqrt(d_k) ... read: lessons/33-attention.md", and at 2 samples (x of 2 features, so
    Wx (2, 16) has the batch's size on axis 0) "a 1/batch is missing"; the class layout's words now, LSTM's lesson."""
    from test_cli import check_source

    for n in (2, 3, 4):
        code, out = check_source(tmp_path, _lstm_pair_dx2(), "lstm_step_forward", "--input-shape",
                                 f"{n},2;{n},4;{n},4;2,16;4,16;16")
        text = " ".join(out.split())
        assert code == 1, out
        assert "diagnosis: dx is 2 times the correct gradient: a constant factor is wrong somewhere" in text, out
        assert "read: lessons/32-lstm.md" in text, out
        assert "attention" not in text and "sqrt" not in text and "1/batch is missing" not in text, out
        assert ("the same factor at a batch of 3, so it is no 1/batch" in text) == (n == 2), out


def test_zhous_softmax_through_the_cli_names_one_entry_of_dy_first_for_every_tensor():
    """verify37 F7: ``gradcheck check`` (its layer in the sandbox, whose grads are not zeroed between the probe's
    calls) opened with "backward is not linear in dY: backward(0) gives a nonzero dweights and dbiases (a term that
    does not multiply dY)", false: backward skips dY's zero entries, so backward(0) writes no grads and the previous
    call's are left; and the one-entry sentence named dX alone. Now that sentence comes first and names all three;
    the grads left at dY = 0 are said after it, as what they are."""
    from test_cli import ROOT, run_here

    p = run_here("check", "tests/buggy_layers/session37.py::ZhouSoftmaxFirst", "--input-shape", "2,2,2", cwd=ROOT)
    out = p.stdout + p.stderr
    text = " ".join(out[out.index("diagnosis:"):].split())
    assert p.returncode == 1, out
    assert text.startswith("diagnosis: dX, dweights, dbiases are the gradient for one entry of dY alone, its first "
                           "nonzero one (dY[0]), the other 2 entries of dY left out"), out
    assert "not linear in dY" not in out and "does not multiply dY" not in out, out
    assert ("dweights and dbiases are left from the previous call when dY is 0: backward(0) gives the dweights and "
            "dbiases of the backward before it") in text, out
