"""Session 26 (left26c, note25 "Left"): a model holding a stateful layer gets the layer's own verdict.

Deep Learning from Scratch 2's Rnnlm builds its TimeLSTM with ``stateful=True``. Checked alone, that TimeLSTM is NOT
CHECKED (its state is carried from one call to the next: finite differences need an output of this call's input
alone); inside Rnnlm it was blamed as the "first failing layer" and the model FAILed (exit 1). One rule now: the model
is NOT CHECKED for the same reason, the stateful sub-layer named, with how to have its formulas checked.
"""

import json
from pathlib import Path

import numpy as np
from test_cli import both, run_here

DLFS2 = Path(__file__).resolve().parent / "fixtures" / "dlfs2"
RNNLM = ["check", "rnnlm.py::Rnnlm", "--input-shape", "2,3", "--init",
         '{"vocab_size":5,"wordvec_size":3,"hidden_size":4}', "--indices", "5", "--targets", "labels:5@2,3"]
CARRIED = "state carried from one call to the next"


def test_a_model_with_a_stateful_lstm_is_not_checked_as_the_lstm_alone_is():
    p = run_here(*RNNLM, cwd=DLFS2)
    out = both(p)
    assert p.returncode == 3, out  # was 1: FAIL: Rnnlm: first failing layer (see the diagnosis)
    assert "NOT CHECKED: Rnnlm: layers[1] (TimeLSTM) cannot be checked inside the model (see the diagnosis)." in out
    assert "diagnosis: layers[1] (TimeLSTM) cannot be checked inside the model, as it cannot alone: forward(X) " \
           "changes the layer's state" in out, out
    assert CARRIED in out and "(self.h, self.c)" in out, out
    assert "checking TimeLSTM alone, built not stateful (gradcheck check FILE::TimeLSTM --init '{\"stateful\": " \
           "false, ...its weights}')" in out, out
    assert "FAIL" not in out and "first layer whose own check fails" not in out, out


def test_the_stateful_lstm_alone_is_not_checked_for_the_same_reason():
    rng = np.random.default_rng(0)
    init = {"Wx": rng.standard_normal((3, 16)).round(3).tolist(), "Wh": rng.standard_normal((4, 16)).round(3).tolist(),
            "b": rng.standard_normal(16).round(3).tolist(), "stateful": True}
    p = run_here("check", "layers.py::TimeLSTM", "--input-shape", "2,3,3", "--init", json.dumps(init), cwd=DLFS2)
    out = both(p)
    assert p.returncode == 3 and "NOT CHECKED: TimeLSTM: forward changes the layer's state" in out, out
    assert CARRIED in out and "(self.h, self.c)" in out, out
