"""newuser29 M2: the classic embedding bug ``dW[idx] += dY`` (numpy's buffered fancy-index assignment keeps one update
per repeated row) checked with 1-D ids (``--input-shape 6 --indices 50``), one id per sample (4,1) or a batch of one
(1,4) was named a loop bug, "dW lacks the contribution of the first sample ... range(1, N)" or "the first output
position", and sent to lessons 01/20; with 2-D ids it was named right. The numbers of the two are the same where the
one repeated row is sample 0's, so the repeated index, the more specific reading of an integer input, is tried
first."""

import pytest
from test_cli import both, run_here, student

EMB = """
import numpy as np
class EmbeddingBug:
    def __init__(self, V, D):
        self.W = np.random.default_rng(0).normal(size=(V, D))
    def forward(self, idx):
        self.idx = idx; return self.W[idx]
    def backward(self, dY):
        self.dW = np.zeros_like(self.W)
        self.dW[self.idx] += dY
        return None
class Embedding(EmbeddingBug):
    def backward(self, dY):
        self.dW = np.zeros_like(self.W)
        np.add.at(self.dW, self.idx, dY)
        return None
"""


@pytest.mark.parametrize("shape", ["6", "4,1", "1,4", "2,6"])
def test_buffered_assignment_is_named_whatever_the_ids_shape(tmp_path, shape):
    f = student(tmp_path, EMB)
    p = run_here("check", f"{f}::EmbeddingBug", "--input-shape", shape, "--indices", "50", "--init",
                 '{"V": 50, "D": 3}')
    text = both(p)
    assert p.returncode == 1 and "FAIL: EmbeddingBug" in text, text
    diagnosis = text.split("diagnosis:")[1]
    assert "keeps one update per row where an index repeats" in diagnosis and "np.add.at(dW, idx, dY)" in diagnosis
    assert "range(1" not in diagnosis and "30-embedding.md" in diagnosis, text


@pytest.mark.parametrize("shape", ["6", "4,1", "1,4"])
def test_the_add_at_embedding_passes(tmp_path, shape):
    f = student(tmp_path, EMB)
    p = run_here("check", f"{f}::Embedding", "--input-shape", shape, "--indices", "50", "--init", '{"V": 50, "D": 3}')
    assert p.returncode == 0 and "PASS: Embedding" in both(p), both(p)
