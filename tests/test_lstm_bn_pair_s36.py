"""Session 36, session 35's leftovers (note35, item 3). newuser35 L1: an LSTM step's backward bugs were "no known bug
pattern"; each common one is now named (:func:`gradcheck.diagnose._lstm_signature`: the step's backward recomputed
with one line changed, named only when its gradients are the student's on every tensor), on CS231n's lstm_step pair
and on a class in manualprop.LSTM's layout (tests/buggy_layers/session36.py). newuser35 H2 for a CS231n pair:
``batchnorm_forward``'s running statistics in ``bn_param`` compared with ``--reference manualprop.BatchNorm1D``."""

import inspect

import numpy as np
import pytest
from test_cli import ROOT, run_here
from test_cli_newuser35 import CS_BN, LSTM_BUG

from gradcheck import _adapters
from gradcheck.diagnose import diagnose_layer
from tests.buggy_layers import diagnose, first_code, session24
from tests.buggy_layers.session36 import INPUT, INPUTS, LSTMCellTorch

#: what each planted bug's sentence says, ``{dh}``/``{dc}`` the upstream gradients' names in backward
WORDS = {
    "fcell": "with df = dc_t * c_t, the new cell state, where df = dc_t * c_prev is due: c_t = f * c_prev + i * g "
             "multiplies f by the cell state the step was given",
    "nof": "with dc_prev = dc_t where dc_prev = dc_t * f is due",
    "tanhc": "with dc_t = {dc} + {dh} * o where dc_t = {dc} + {dh} * o * (1 - tanh(c_t)**2) is due",
    "prei": "with the input gate i's derivative taken at the pre-activation a (a_i * (1 - a_i)) where da_i = di * i * "
            "(1 - i) is due",
    "nosig": "with the output gate o's derivative left out (da_o = do) where da_o = do * o * (1 - o) is due",
    "fdh": "with df = {dh} * c_prev where df = dc_t * c_prev is due",
}
PAIR = {**WORDS, "order": "with the gates' gradients joined in the order i, f, g, o where forward's order i, f, o, g "
                          "is due"}
TORCH = {**WORDS, "order": "with the gates' gradients joined in the order i, f, o, g where forward's order i, f, g, o "
                           "is due"}
CASES = [(f"session36.py::lstm{b}", w.format(dh="dnext_h", dc="dnext_c")) for b, w in PAIR.items()] + [
    (f"session36.py::LSTMCellTorch{b.capitalize()}", w.format(dh="dh", dc="dc")) for b, w in TORCH.items()]


@pytest.mark.parametrize(("key", "words"), CASES, ids=[k for k, _ in CASES])
def test_each_planted_lstm_bug_is_named_on_every_failing_tensor(key, words):
    """L1: every failing tensor of each planted bug (only dprev_c for the missing forget gate) is named by the one
    line, in one sentence with its fix; main said "no known bug pattern" (the order: dWx, dWh alone, as permuted)."""
    d = diagnose(key)
    assert not d.passed and first_code(d) == "lstm-line", d.sentence()
    assert {f.code for f in d.errors} == {"lstm-line"}, d.sentence()
    assert {f.tensor for f in d.errors} == set(d.result.failing_tensors), d.sentence()
    assert ("nof" in key.lower()) is (len(d.result.failing_tensors) == 1), d.sentence()
    assert words in " ".join(d.sentence().split()), d.sentence()
    assert {f.lesson for f in d.errors} == {"lessons/32-lstm.md"}


@pytest.mark.parametrize("key", ["session36.py::lstm", "session36.py::LSTMCellTorch"])
def test_the_correct_lstm_steps_pass(key):
    """Controls: the correct step, in either layout, PASSes (nothing named)."""
    d = diagnose(key)
    assert d.passed and not d.errors, d.sentence()


def test_an_unrelated_bug_keeps_its_own_name():
    """Control: db the batch's mean (the other gradients right) is named as before, not as a line of the LSTM."""
    d = diagnose("session36.py::lstmmeandb")
    assert first_code(d) == "bias-mean" and "lstm-line" not in d.codes, d.sentence()
    assert d.result.failing_tensors == ["db"]


def test_two_bugs_at_once_are_not_named_as_one():
    """Control: the input gate's derivative at a and the gates joined in another order: no one line gives these
    gradients on every tensor, so nothing is named "lstm-line" (the evidence must be exact)."""
    d = diagnose("session36.py::lstmtwo")
    assert not d.passed and "lstm-line" not in d.codes, d.sentence()


class _NoTanhCell(LSTMCellTorch):
    """Not an LSTM step (h = o * c, no tanh), with backward's df taking c for c_prev: forward is not recomputed by
    any gate order, so the LSTM's lines are not tried."""

    def forward(self, x, h_prev, c_prev):
        _, c = super().forward(x, h_prev, c_prev)
        return self.cache[7] * c, c  # o * c

    def backward(self, dh, dc):
        x, h_prev, c_prev, a, i, f, g, o, c = self.cache
        dc = dc + dh * o
        da = np.concatenate([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g ** 2),
                             dh * c * o * (1 - o)], axis=1)
        self.grads["W_ih"], self.grads["W_hh"] = da.T @ x, da.T @ h_prev
        self.grads["b_ih"] = self.grads["b_hh"] = da.sum(axis=0)
        return da @ self.params["W_ih"], da @ self.params["W_hh"], dc * f


def test_a_step_that_is_no_lstm_is_not_named_as_one():
    """Control: the same bug (df = dc * c) in a cell whose forward is not an LSTM step's: FAIL, not "lstm-line"."""
    d = diagnose_layer(_NoTanhCell(), INPUT)
    assert not d.passed and "lstm-line" not in d.codes, d.sentence()


def _text(p):
    return " ".join((p.stdout + p.stderr).split())


def test_newuser35s_lstm_cell_is_named_from_the_cli(tmp_path):
    """L1 as reported: newuser35's LSTMCell (df = dh * c_prev, where the total dc is due) from the command line."""
    (tmp_path / "lstm.py").write_text(LSTM_BUG)
    p = run_here("check", f"{tmp_path / 'lstm.py'}::LSTMCell", "--input-shape", "4,3;4,5;4,5",
                 "--init", '{"input_size": 3, "hidden_size": 5}')
    text = _text(p)
    assert p.returncode == 1 and "no known bug" not in text, text
    assert ("diagnosis: dx, dh_prev, dWx, dWh, db are what an LSTM step's backward gives with df = dh * c_prev where "
            "df = dc_t * c_prev is due: f reaches the outputs through c_t alone, whose whole gradient is dc_t = dc + "
            "dh * o * (1 - tanh(c_t)**2); df = dc_t * c_prev") in text
    assert "read: lessons/32-lstm.md" in text


def test_a_cs231n_lstm_step_pair_is_named_from_the_cli(tmp_path):
    """L1 on CS231n's pair from the command line: the sentence in backward's own names (dnext_h, dnext_c)."""
    shapes = ";".join(",".join(map(str, s)) for s in INPUTS["lstmtanhc"])
    own = (ROOT / "tests" / "buggy_layers" / "session36.py").read_text()  # one file: session24's forward inside
    (tmp_path / "cs_lstm.py").write_text(own.replace("from .session24 import lstm_step_forward\n",
                                                     inspect.getsource(session24.lstm_step_forward)))
    p = run_here("check", f"{tmp_path / 'cs_lstm.py'}::lstmtanhc", "--input-shape", shapes)
    text = _text(p)
    assert p.returncode == 1, text
    assert ("diagnosis: dx, dprev_h, dprev_c, dWx, dWh, db are what an LSTM step's backward gives with dc_t = dnext_c "
            "+ dnext_h * o where dc_t = dnext_c + dnext_h * o * (1 - tanh(c_t)**2) is due") in text


# --------------------------------------------------------------------------- a CS231n pair's running statistics

REF = ("--reference", "manualprop.BatchNorm1D", "--reference-init", '{"num_features": 4}')
#: CS231n's update: momentum (0.9) is the share kept; CS_BN (newuser35's) has it swapped
KEPT = CS_BN.replace("rm = (1 - momentum) * rm + momentum * mu", "rm = momentum * rm + (1 - momentum) * mu").replace(
    "rv = (1 - momentum) * rv + momentum * var", "rv = momentum * rv + (1 - momentum) * var")


def _pair(tmp_path, text, mode="train", *more):
    (tmp_path / "cs_bn.py").write_text(text)
    p = run_here("check", f"{tmp_path / 'cs_bn.py'}::batchnorm", "--input-shape", "8,4;4;4",
                 "--init", f'{{"bn_param": {{"mode": "{mode}"}}}}', *more)
    return p, _text(p)


def test_a_pairs_swapped_momentum_fails_against_the_reference(tmp_path):
    """H2 for a pair: bn_param's update with the momentum swapped (keeps 0.1 of the old value) FAILs naming the
    convention; main refused --reference for the pair (usage error: its gamma, beta are inputs)."""
    p, text = _pair(tmp_path, CS_BN, "train", *REF)
    assert p.returncode == 1, text
    assert "running statistics differ from the reference" in text
    assert "bn_param['running_mean'] is [" in text and "bn_param['running_var'] is [" in text
    assert ("yours keeps 0.1 of the old value, manualprop.BatchNorm1D (momentum=0.1) keeps 0.9" in text
            and "the momentum looks swapped" in text and "read: lessons/22-batchnorm.md" in text)


def test_a_pairs_right_update_passes_against_the_reference(tmp_path):
    """H2 for a pair: CS231n's update (momentum 0.9 kept, the biased variance: accepted and said) and its test-mode
    output after it agree with the reference; the PASS says so, and that the reference served them alone."""
    p, text = _pair(tmp_path, KEPT, "train", *REF)
    assert p.returncode == 0, text
    assert ("note: running statistics: bn_param['running_mean'], bn_param['running_var'] after a training forward "
            "and the eval output after it match manualprop.BatchNorm1D's") in text
    assert "bn_param['running_var'] keeps the biased batch variance" in text and "NOT checked" not in text
    assert "--reference manualprop.BatchNorm1D served the running statistics alone" in text


def test_a_pairs_test_mode_that_ignores_the_statistics_fails(tmp_path):
    """H2 for a pair: the right update, but the test-mode forward divides by running_var, not its square root: the
    statistics agree, the eval outputs do not (FAIL, said)."""
    wrong = KEPT.replace("xhat = (x - rm) / np.sqrt(rv + eps)", "xhat = (x - rm) / (rv + eps)")
    p, text = _pair(tmp_path, wrong, "train", *REF)
    assert p.returncode == 1, text
    assert ("after one training forward, batchnorm's running statistics (bn_param['running_mean'], "
            "bn_param['running_var']) equal manualprop.BatchNorm1D's, but the eval forward on another batch differs "
            "from manualprop.BatchNorm1D's") in text


def test_a_pair_checked_in_test_mode_says_why_nothing_was_compared(tmp_path):
    """A pair run in mode 'test' (--init) writes no update: not compared, said, and the PASS says NOT checked."""
    p, text = _pair(tmp_path, CS_BN, "test", *REF)
    assert p.returncode == 0, text
    assert ("running statistics: not compared with manualprop.BatchNorm1D: the forward runs in mode 'test' (--init), "
            "not CS231n's 'train'") in text
    assert "NOT checked" in text and "--reference manualprop.BatchNorm1D compared nothing here" in text


def test_set_pair_keywords_sets_and_puts_back_a_pairs_dict():
    """The adapter call the comparison makes (in the sandbox's child): bn_param's items set for the next forwards,
    then put back to --init's; refused for what is no pair."""
    ns = {}
    exec(compile(KEPT, "cs_bn.py", "exec"), ns)  # noqa: S102 - the test's own pair
    pair = _adapters.FunctionPair(ns["batchnorm_forward"], ns["batchnorm_backward"], {"bn_param": {"mode": "train"}})
    x, g, b = np.arange(8.0).reshape(4, 2), np.ones(2), np.zeros(2)
    _adapters.set_pair_keywords(pair, {"bn_param": {"running_mean": np.array([1.0, 2.0])}})
    pair.forward(x, g, b)
    assert np.allclose(pair.call_keywords["bn_param"]["running_mean"], 0.9 * np.array([1.0, 2.0]) + 0.1 * x.mean(0))
    _adapters.set_pair_keywords(pair, None)
    assert pair._kwargs == {"bn_param": {"mode": "train"}}
    pair.forward(x, g, b)
    assert np.allclose(pair.call_keywords["bn_param"]["running_mean"], 0.1 * x.mean(0))
    with pytest.raises(_adapters.AdapterError, match="no function pair"):
        _adapters.set_pair_keywords(object(), {"bn_param": {}})
    with pytest.raises(_adapters.AdapterError, match="'conv_param' is not a dict argument of batchnorm_forward"):
        _adapters.set_pair_keywords(pair, {"conv_param": {}})
