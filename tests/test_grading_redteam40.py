"""redteam40: the grader (``gradcheck grade``) as a hostile student and as careful staff. F1: a right dropout at a
low rate or on a small input lost its points at many seeds (5 of 60 in the sandbox at p = 0.05 on 6 entries; a model
Dropout(0.01) -> Linear 14 of 40): its forwards, or the reference's, agreed by chance and were read as not random, or
the expectation's 400 reference draws never met a rare drop. F2: one submission folder
holding a path longer than the system's limit (17 folders of 250-byte names, inside every cap) made the resume's
digest raise ENAMETOOLONG, so every resumed batch ended in a traceback. F3: a model holding a dropout whose wrong
backward answered the grader's expectation calls (the test's own input and dY, draws free) with gradients of another
shape was "no claim" there and kept its points. Hostile submissions as tests, in process (redteam40-findings.md
graded them in the sandbox)."""

import os
import types

import numpy as np

import manualprop as mp
from gradcheck.diagnose import reference_draws
from gradcheck.grading import runner
from gradcheck.grading.checks import layer_gradients


class Dropout:
    """A right inverted dropout, p the probability of dropping an entry."""

    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)

    def forward(self, X, training=False):
        if not training:
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY * self.mask


class DropLinear:
    """A right model Dropout(p) -> Linear(5, 4) (each entry of dX decided by one mask bit)."""

    def __init__(self, p=0.3, seed=0):
        r = np.random.default_rng(seed)
        self.params = {"1.W": r.standard_normal((4, 5)) * 0.3, "1.b": np.zeros(4)}
        self.grads, self.rng, self.p = {}, np.random.default_rng(seed + 1), p

    def forward(self, X, training=False):
        self.mask = (self.rng.random(X.shape) >= self.p) / (1 - self.p) if training else np.ones_like(X)
        self.A = X * self.mask
        return self.A @ self.params["1.W"].T + self.params["1.b"]

    def backward(self, dY):
        self.grads = {"1.W": dY.T @ self.A, "1.b": dY.sum(axis=0)}
        return (dY @ self.params["1.W"]) * self.mask


def test_a_reference_whose_forwards_agree_but_draw_is_random():
    """F1 (1): eight training forwards of Dropout(0.01) on two entries keep both every time (this seed), but its
    generator moved: it draws (on main: False, read as deterministic, and a right layer compared with its mask)."""
    X = np.array([[0.5, -1.2]])
    ref = mp.Dropout(0.01, rng=1)
    Y = [ref.forward(X.copy(), training=True) for _ in range(8)]
    assert all(np.array_equal(Y[0], y) for y in Y) and np.all(Y[0] != 0)
    assert reference_draws(mp.Dropout(0.01, rng=1), [X], True) is True
    assert reference_draws(mp.Linear(2, 3, rng=0), [X], True) is False  # deterministic: no generator moves


def test_a_right_dropout_on_six_entries_at_a_low_rate_passes_at_every_seed():
    """F1 (1), (2): a right Dropout(0.05) on X (2, 3), seeds 0..59 (on main 5 of them FAILed: "dX differs from the
    correct gradient ... got -0, expected -2.18", "Dropout's training forward gives the same output at every call")."""
    failed = []
    for seed in range(60):
        X = np.random.default_rng(100 + seed).standard_normal((2, 3))
        v = layer_gradients(Dropout(0.05, seed), X, mp.Dropout(0.05, rng=seed + 1000), training=True, seed=seed)
        failed += [] if v.passed else [(seed, v.parts[0].message[:120])]
    assert failed == []


def test_a_right_model_whose_dx_entries_one_rare_drop_decides_passes():
    """F1 (3): a right Dropout(0.01) -> Linear(5, 4) at seeds where the expectation's 400 reference draws never dropped
    an entry of X that the student's 32 calls dropped once (on main: "... its spread gives a standard error of
    9.45e-17")."""
    for seed in (15, 19):
        X = np.random.default_rng(100 + seed).standard_normal((6, 5))
        ref = mp.Sequential([mp.Dropout(0.01, rng=seed + 1000), mp.Linear(5, 4, rng=1)])
        v = layer_gradients(DropLinear(0.01, seed), X, ref, training=True, seed=seed)
        assert v.passed, (seed, [p.message[:160] for p in v.parts if not p.passed])


def _deep(root, levels=17, name="d" * 250):
    """``root``/name/name/.../notes.txt, ``levels`` deep, made through directory descriptors (the path is longer than
    PATH_MAX); returns the descriptor-free length of that path."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        fd, old = os.open(name, os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    out = os.open("notes.txt", os.O_CREAT | os.O_WRONLY, dir_fd=fd)
    os.write(out, b"hi")
    os.close(out)
    os.close(fd)
    return len(str(root)) + levels * (len(name) + 1) + len("/notes.txt")


def test_a_path_longer_than_path_max_is_digested_and_its_changes_seen(tmp_path):
    """F2: the digest walks by directory descriptors: a path over PATH_MAX is read, and a change deep inside it is a
    changed submission (on main: OSError ENAMETOOLONG)."""
    sub = tmp_path / "bob"
    sub.mkdir()
    (sub / "layers.py").write_text("x = 1\n")
    assert _deep(sub) > 4096
    before = runner.submission_digest(sub)
    assert len(before) == 64
    fd = os.open(sub, os.O_RDONLY)
    for _ in range(17):
        fd, old = os.open("d" * 250, os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.unlink("notes.txt", dir_fd=fd)
    os.close(fd)
    assert runner.submission_digest(sub) != before


def test_a_submission_the_resume_cannot_read_is_graded_again_not_the_end_of_the_batch(tmp_path, monkeypatch):
    """F2: whatever the digest cannot read, the resume grades that submission again (its saved result kept for none)
    and goes on with the others."""
    a, b = tmp_path / "alice", tmp_path / "bob"
    for s in (a, b):
        s.mkdir()
        (s / "layers.py").write_text("x = 1\n")
    digests = {a.name: runner.submission_digest(a)}

    def saved(path, key):
        name = path.parent.name
        return types.SimpleNamespace(name=name, files_sha256=digests.get(name, ""))

    def digest(path):
        if os.path.basename(path) == "bob":
            raise OSError(36, "File name too long")
        return digests[os.path.basename(path)]

    monkeypatch.setattr(runner, "_load_done", saved)
    monkeypatch.setattr(runner, "submission_digest", digest)
    kept, todo, changed, _ = runner._resume([a, b], {a.name: tmp_path / "out" / "alice",
                                                     b.name: tmp_path / "out" / "bob"}, b"k", False)
    assert [r.name for r in kept] == ["alice"] and todo == [b] and changed == ["bob"]
    assert runner._never_started([b], [], {b.name: tmp_path / "out" / "bob"}, b"k") == []


class NoClaimModel:
    """F3: a model Linear(5, 4) -> Dropout(0.3) whose backward's dX is twice the right one; its forward answers an
    input within 1e-3 of the last with the linear map that dX is the adjoint of (redteam39 F4: the held central
    differences agree), and once its generator has been rewound (a state seen again at forward's entry) and runs free
    again, backward gives its gradients cut to one row (the expectation's calls)."""

    def __init__(self, noclaim=True, seed=0):
        r = np.random.default_rng(seed)
        self.params = {"0.W": r.standard_normal((4, 5)) * 0.3, "0.b": np.zeros(4)}
        self.grads, self.rng, self.p, self.last = {}, np.random.default_rng(seed + 1), 0.3, None
        self.noclaim, self.seen, self.was_held, self.free_after_held = noclaim, set(), False, False

    def forward(self, X, training=False):
        W, b = self.params["0.W"], self.params["0.b"]
        if not training:
            return X @ W.T + b
        state = self.rng.bit_generator.state["state"]["state"]
        held, self.was_held = state in self.seen, self.was_held or state in self.seen
        self.seen.add(state)
        self.free_after_held = self.was_held and not held
        if self.last is not None and X.shape == self.last.shape and 0 < np.abs(X - self.last).max() < 1e-3:
            return self.Y + 2 * ((X - self.last) @ W.T) * self.mask
        self.X, self.last = X, np.array(X, dtype=float)
        self.mask = (self.rng.random((X.shape[0], 4)) >= self.p) / (1 - self.p)
        self.Y = (X @ W.T + b) * self.mask
        return self.Y

    def backward(self, dY):
        dZ = dY * self.mask
        self.grads = {"0.W": dZ.T @ self.X, "0.b": dZ.sum(axis=0)}
        dX = 2 * dZ @ self.params["0.W"]  # wrong: twice the right dX
        if self.noclaim and self.free_after_held:
            self.grads = {k: v[:1] for k, v in self.grads.items()}
            return dX[:1]
        return dX


def _model_verdict(noclaim):
    X = np.random.default_rng(0).standard_normal((6, 5))
    ref = mp.Sequential([mp.Linear(5, 4, rng=1), mp.Dropout(0.3, rng=3)])
    return layer_gradients(NoClaimModel(noclaim), X, ref, training=True, seed=7)


def test_a_gradient_of_another_shape_in_the_expectation_calls_fails_its_part():
    """F3: each part the held differences passed fails, saying the test's own call gave an array of the reference's
    shape and the same call again another (on main: passed, 3/3)."""
    v = _model_verdict(True)
    assert not v.passed
    parts = {p.name: p for p in v.parts}
    assert not parts["dX"].passed and "(6, 5) in this test's own call" in parts["dX"].message
    assert "backward gave it as an array of shape (1, 5)" in parts["dX"].message
    assert not parts["d0.W"].passed and "of shape (1, 5)" in parts["d0.W"].message
    assert not parts["d0.b"].passed and "of shape (1,)" in parts["d0.b"].message
