"""Session 24 (left24): session 23's leftovers in the diagnosis: four planted bugs that were "no known bug pattern"
(tester23s's rnn_offbyone, rnn_wlast, lstm_nodc, FullyConnectedTanh_bug_noact) and two_branch's dX, each named from
the numbers, every failing tensor in one sentence; the correct twins PASS (the planted-bug table runs them all)."""

import pytest

from tests.buggy_layers import diagnose, first_code


@pytest.mark.parametrize(("key", "code", "words"), [
    ("session24.py::rnnoffbyone", "first-step-missing",
     "dx, dh0, dWx, dWh and db are the gradients of the sequence without its first step"),
    ("session24.py::rnnwlast", "steps-not-summed", "dWx, dWh, db: right for a sequence of one time step but not for 3 steps"),
    ("session24.py::lstmnodc", "state-carry-incomplete",
     "dx, dh0, dWx, dWh and db are right for a sequence of one time step"),
    ("session24.py::NmDenseTanhNoAct", "weight-skips-derivative",
     "dX = dY @ parameters['W'].T, dparameters['W'] = X.T @ dY and dparameters['b'] = dY.sum(axis=0, keepdims=True): "
     "each takes dY itself where the gradient at the pre-activation"),
])
def test_session_23s_unnamed_bugs_are_named(key, code, words):
    d = diagnose(key)
    text = d.sentence()
    assert first_code(d) == code and words in text, text
    assert "no known bug pattern" not in text, text


def test_every_tensor_of_the_dense_tanh_without_its_derivative_is_named_so():
    """numpy-ml's dense tanh whose _bwd takes dZ = dLdy: dX, dW and db all skip tanh's derivative. db (1, n_out), a
    keepdims sum, was named "the gradient db would have if W were zero" (a branch given dY: b = 0 at init made it
    true by chance) and dX had no name."""
    d = diagnose("session24.py::NmDenseTanhNoAct")
    text = d.sentence()
    assert d.codes == ["weight-skips-derivative"], text  # one sentence for the three
    assert "dparameters['b'] = dZ.sum(axis=0, keepdims=True)" in text and "branch" not in text, text


def test_two_branch_dx_is_named_through_the_same_dh():
    """lesson 35's two_branch_bug.py: dA named a branch given dY (session 23); dX = dH + d1 @ A with d1 from dY is
    wrong through the same missing term, which the numbers show: dX - (the first part's gradient for dY) + dY,
    given to the first part as its upstream gradient, gives the correct dX."""
    d = diagnose("lessons23.py::TwoBranchBlockDY")
    text = d.sentence()
    assert d.codes == ["branch-upstream-dY"], text
    assert "no known bug pattern" not in text and "dX is wrong through the same dH" in text, text
