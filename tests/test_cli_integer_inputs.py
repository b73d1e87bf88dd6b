"""Layers whose input holds integer indices (a new-user tester's U1, session 8): an embedding lookup
``W[idx]`` cannot run on the standard-normal floats ``gradcheck check`` draws, and the student was
blamed (exit 3). ``--indices HIGH`` (input 0) or ``--indices POS:HIGH`` draws that input from
``[0, HIGH)``; an integer input has no gradient, so only ``dW`` is checked. The classic bug of the
lookup's backward, ``dW[idx] += dY`` (numpy's buffered assignment keeps one update per repeated
row), is named ("repeated-index"), with ``np.add.at`` as the fix.

The right ``dW`` is built independently here (a loop over the ids, no ``np.add.at``) to pin what a
PASS means on these ids.
"""

import json

import numpy as np
from test_cli import both, run, run_here, student

LAYERS = """
import numpy as np

class Embedding:
    def __init__(self, vocab_size, dim):
        self.W = np.random.default_rng(0).standard_normal((vocab_size, dim))
        self.dW = np.zeros_like(self.W)

    def forward(self, idx):
        self.idx = idx
        return self.W[idx]

    def backward(self, dY):
        self.dW = np.zeros_like(self.W)
        np.add.at(self.dW, self.idx, dY)
        return None

class EmbeddingBuffered(Embedding):
    def backward(self, dY):
        self.dW = np.zeros_like(self.W)
        self.dW[self.idx] += dY
        return None

def word_embedding_forward(x, W):
    return W[x], (x, W)

def word_embedding_backward(dout, cache):
    x, W = cache
    dW = np.zeros_like(W)
    np.add.at(dW, x, dout)
    return dW
"""
INIT = ["--init", '{"vocab_size": 5, "dim": 3}']


def test_embedding_with_indices_passes_and_checks_dW(tmp_path):
    f = student(tmp_path, LAYERS)
    p = run("check", f"{f}::Embedding", "--input-shape", "8,4", "--indices", "5", *INIT,  # the console script
            "--mode", "full", "--json", tmp_path / "r.json")
    text = both(p)
    assert p.returncode == 0, text
    assert "input 0: integer indices in [0, 5)" in text
    assert "integer input (indices): it has no gradient" in text
    assert "PASS: Embedding: every gradient (dW) matches" in text
    rep = json.loads((tmp_path / "r.json").read_text())
    assert "dW" in json.dumps(rep) and "dX" not in rep.get("failing_tensors", [])


def test_buffered_fancy_index_add_is_named(tmp_path):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::EmbeddingBuffered", "--input-shape", "8,4", "--indices", "5", *INIT)
    text = both(p)
    assert p.returncode == 1, text
    assert "keeps one update per row where an index repeats" in text
    assert "np.add.at(dW, idx, dY)" in text


def test_cs231n_lookup_returns_dW_only(tmp_path):
    """CS231n's word_embedding_backward returns dW alone: the integer x has none."""
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::word_embedding", "--input-shape", "2,4;5,3", "--indices", "0:5", "--mode", "full")
    text = both(p)
    assert p.returncode == 0, text
    assert "x is an integer input (indices)" in text and "PASS" in text


def test_without_indices_the_message_says_how(tmp_path):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::Embedding", "--input-shape", "8,4", *INIT)
    text = both(p)
    assert p.returncode == 3, text
    assert "give --indices HIGH" in text and "standard-normal floats" in text


def test_bad_indices_are_usage_errors(tmp_path):
    f = student(tmp_path, LAYERS)
    for bad in ("0", "x", "1:5", "0:5,0:6", "-1:5"):
        p = run_here("check", f"{f}::Embedding", "--input-shape", "8,4", f"--indices={bad}", *INIT)
        assert p.returncode == 2, (bad, both(p))
        assert "--indices takes HIGH" in both(p), bad
    p = run_here("check", f"{f}::Embedding", "--input-shape", "8,4", "--indices", "5", "--jacobian", *INIT)
    assert p.returncode == 2 and "not with --loss or --jacobian" in both(p)


def test_repeated_index_rule_against_a_loop():
    """What the diagnosis calls right and wrong, against a plain loop over the ids."""
    from gradcheck.diagnose import _repeated_index_signature

    rng = np.random.default_rng(1)
    W, idx = rng.standard_normal((5, 3)), rng.integers(0, 5, size=(8, 4))
    G = rng.standard_normal((8, 4, 3))
    right = np.zeros_like(W)
    for s in np.ndindex(idx.shape):
        right[idx[s]] += G[s]
    last = np.zeros_like(W)
    for s in np.ndindex(idx.shape):  # the buffered assignment: the last occurrence wins
        last[idx[s]] = G[s]

    class L:
        names, inputs, params = ["X"], [idx], {"W": W}

        def numer(self, keys):
            return {"W": right}

    L.G = G
    found = _repeated_index_signature(L(), "W", last)
    assert found is not None and found[0] == "repeated-index"
    assert found[1]["k"] == int((np.bincount(idx.ravel(), minlength=5) > 1).sum())
    assert _repeated_index_signature(L(), "W", right + 0.1) is None


def test_indices_beyond_the_table_name_indices(tmp_path):
    """--indices 9 for a table of 5 rows (the verifying tester's V11b): the message names --indices."""
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::Embedding", "--input-shape", "8,4", "--indices", "9", *INIT)
    assert p.returncode == 3
    assert "--indices 9 drew ids up to HIGH - 1" in both(p) and "vocabulary size" in both(p)


def test_drawn_ids_always_repeat_one():
    """tester19s H: with 1000 rows, the ids drawn for 40 or 6 lookups (seeds 2, 5; 0-3) were all distinct, so
    the buffered ``dW[idx] += dY`` PASSed: a drawn index array of two or more entries repeats one, whatever the
    seed; one entry stays as drawn."""
    from gradcheck._validation import index_inputs

    for shape, seeds in (((8, 5), (2, 5)), ((2, 3), range(4)), ((2,), range(20))):
        for seed in seeds:
            ids = index_inputs(shape, {0: 1000}, seed)
            assert ids.shape == shape and len(np.unique(ids)) < ids.size, (shape, seed)
    assert index_inputs((1,), {0: 1000}, 0).shape == (1,)
    mixed = index_inputs([(4,), (3, 2)], {0: 10**6}, 1)  # a float input beside: its shape stays a shape
    assert len(np.unique(mixed[0])) == 3 and mixed[1] == (3, 2)


def test_buffered_add_fails_on_distinct_seeds(tmp_path):
    """The layer of the finding fails on seeds whose draw had no repeat (20 rows, 6 ids: seeds 0-3; a table of
    20, not the finding's 1000, keeps the diagnosis cheap): with the np.add.at sentence in the full and fast
    modes; the sample mode fails too, its directional test outside the sampled entries."""
    f = student(tmp_path, LAYERS)
    for seed, mode in ((0, "full"), (1, "fast"), (2, "sample")):
        p = run_here("check", f"{f}::EmbeddingBuffered", "--input-shape", "2,3", "--indices", "20", "--init",
                     json.dumps({"vocab_size": 20, "dim": 2}), "--seed", seed, "--mode", mode)
        text = " ".join(both(p).split())
        assert p.returncode == 1, text
        assert "FAIL: EmbeddingBuffered: gradient mismatch in dW" in text
        assert mode == "sample" or "accumulate with np.add.at(dW, idx, dY)" in text, text


def test_distinct_ids_given_are_warned():
    """Ids the user gives (the Python API) that repeat none: a scatter-add bug cannot show, and the note says so."""
    from gradcheck import check_layer

    ns = {}
    exec(LAYERS, ns)
    res = check_layer(ns["EmbeddingBuffered"](5, 3), np.array([[0, 1], [2, 3]]), twin=None)
    assert res.passed
    assert any("no index repeats in X (4 distinct entries)" in n and "np.add.at" in n for n in res.notes), res.notes
    res = check_layer(ns["EmbeddingBuffered"](5, 3), np.array([[0, 1], [2, 0]]), twin=None)
    assert not res.passed and not any("no index repeats" in n for n in res.notes)
