"""newuser31's findings F1-F3 on the diagnosis's words: the lesson a bug points to is the checked layer's (lesson
23's own LayerNorm bug pointed to lesson 22, a GRU's unknown bug to 01b, a Conv2D's db to 01), a Conv2D's averaged
db is "the mean over the batch and the positions", and a backward without the carried hidden-state gradient is
said to be wrong at every step but the last only when every step was seen so ("at steps 0 and 4 of 0..5" read as if
steps 1 to 3 were right)."""

import contextlib
import io
import os
import re
from pathlib import Path

import numpy as np
import pytest
from buggy_layers import diagnose
from buggy_layers.rnn_seq import RNN

import manualprop as mp
from gradcheck.cli import main
from gradcheck.diagnose import diagnose_layer

ROOT = Path(__file__).resolve().parents[1]


def _check(tmp_path, args):
    """``gradcheck check ARGS`` run in ``tmp_path``: (exit code, stdout lines)."""
    out, old = io.StringIO(), os.getcwd()
    try:
        os.chdir(tmp_path)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["check", *args])
    finally:
        os.chdir(old)
    return code, out.getvalue().splitlines()


def test_lesson_23s_own_layernorm_bug_points_to_lesson_23(tmp_path):
    text = (ROOT / "lessons" / "23-layernorm.md").read_text()
    (tmp_path / "layernorm_bug.py").write_text(re.search(r"```python file=layernorm_bug.py[^\n]*\n(.*?)```", text,
                                                         re.S)[1])
    code, lines = _check(tmp_path, ["layernorm_bug.py::LayerNorm", "--input-shape", "4,6", "--init", '{"dim": 6}'])
    assert code == 1 and [ln for ln in lines if ln.startswith("read:")] == ["read: lessons/23-layernorm.md"], lines
    assert any("dX lacks the gradient through the per-sample mean" in ln for ln in lines), lines


@pytest.mark.parametrize("key, code, layer, lesson", [
    ("norm.py::LayerNormNaive", "missing-mean-var-paths", "LayerNorm", "23-layernorm.md"),  # was 22
    ("norm.py::LayerNormMeanBeta", "bias-mean", "LayerNorm", "23-layernorm.md"),  # was 01
    ("norm.py::LayerNormWrongAxis", "norm-wrong-axis", "LayerNorm", "23-layernorm.md"),  # was 22
    ("norm.py::BatchNormNaive", "missing-mean-var-paths", "BatchNorm", "22-batchnorm.md"),
    ("norm.py::BatchNormMeanBeta", "bias-mean", "BatchNorm", "22-batchnorm.md"),  # was 01
    ("conv.py::ConvNaiveMeanBias", "bias-mean", "Conv", "20-conv2d.md"),  # was 01
    ("tester18.py::AvgPool2x2NoArea", "pool-area-missing", "Pool", "21-pooling.md"),  # was 20
    ("rnn_seq.py::RNNNoCarry", "rnn-no-carry", "RNN", "31-rnn-bptt.md"),
    ("session24.py::lstmnodc", "state-carry-incomplete", "LSTM", "32-lstm.md"),  # was 31
    ("linear.py::LinearMeanBias", "bias-mean", "", "01-linear-layer.md"),  # no layer of a lesson of its own
    ("lessons23.py::GRUCellNoDirectPath", "gated-skip-missing", "", "32b-gru.md"),  # a signature's own lesson
])
def test_the_lesson_is_the_layers_own_for_a_bug_family_taught_in_another(key, code, layer, lesson):
    d = diagnose(key)
    f = d.errors[0]
    assert (f.code, f.layer, f.lesson) == (code, layer, f"lessons/{lesson}"), d.report()
    assert f"read: lessons/{lesson}" in d.report() and d.to_dict()["findings"][0]["lesson"] == f"lessons/{lesson}"


class _GRUOff(mp.GRU):
    """A GRU whose dX is off by a term linear in dY that no signature knows (0.3 dY[..., :3] X**2)."""

    def backward(self, dY):
        return super().backward(dY) + 0.3 * dY[..., :3] * self.cache["X"] ** 2


class _LSTMOff(mp.LSTM):
    def backward(self, dY):
        return super().backward(dY) + 0.3 * dY[..., :3] * self.cache["X"] ** 2


@pytest.mark.parametrize("cls, layer, lesson", [(_GRUOff, "GRU", "32b-gru.md"), (_LSTMOff, "LSTM", "32-lstm.md")])
def test_a_recurrent_layers_unknown_bug_points_to_its_lesson_not_to_numerical_gradients(cls, layer, lesson):
    d = diagnose_layer(cls(3, 4, rng=0), np.random.default_rng(1).standard_normal((2, 4, 3)))
    f = d.errors[0]
    assert (f.code, f.layer, f.lesson) == ("wrong-values", layer, f"lessons/{lesson}"), d.report()  # was 01b


def test_a_conv_bias_averaged_over_batch_and_positions_is_said_so():
    d = diagnose("conv.py::ConvNaiveMeanBias")
    assert d.errors[0].message.startswith("db is the mean over the batch and the positions, not the sum: it is "), \
        d.errors[0].message
    assert "summed positions: batch x positions" in d.errors[0].message
    lin = diagnose("linear.py::LinearMeanBias").errors[0].message
    assert lin.startswith("db is the mean over the batch, not the sum: it is "), lin


def test_no_carry_is_said_of_every_step_when_every_step_is_so():
    layer = diagnose("rnn_seq.py::RNNNoCarry", )
    text = layer.errors[0].message
    assert ("dxs[:, t] is the gradient of step t's own output alone at every step (0..3), which is right only at the "
            "last: backward does not add") in text, text
    assert "so every step but the last misses the later steps' gradients" in text and "at steps 0 and" not in text


class _RNNCarryAtTwo(RNN):
    """The carry added at step 2 alone: steps 0, 1, 3 and 4 of 0..5 get their own output's gradient alone."""

    def backward(self, dhs):
        for g in self.grads.values():
            g[...] = 0
        dxs, dprev = np.zeros_like(self.xs), np.zeros_like(self.hs[0])
        for t in reversed(range(self.xs.shape[1])):
            dxs[:, t], dprev = self.step_backward(dhs[:, t] + dprev * (t == 2), t)
        return dxs, dprev


def test_no_carry_at_some_steps_lists_them_and_the_others():
    rng = np.random.default_rng(0)
    d = diagnose_layer(_RNNCarryAtTwo(), [rng.standard_normal((3, 6, 2)), rng.standard_normal((3, 3))])
    text = d.errors[0].message
    assert d.errors[0].code == "rnn-no-carry" and (
        "own output alone at steps 0, 1, 3 and 4 of 0..5 and at the last (where it is right), not at step 2: "
        "backward does not add") in text, d.report()
    assert "so steps 0, 1, 3 and 4 miss the later steps' gradients" in text and "every step" not in text, text
