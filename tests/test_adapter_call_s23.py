"""One call of the adapters' functions for a sandboxed and a local layer (session 23, issue 10 §4): the diagnosis
runs ``hold_random``, ``random_draws``, ``state_values`` and ``set_weights`` through
``gradcheck.diagnose.adapter_call``, in the sandbox's child for a sandboxed layer (one ``adapter`` request, the
child's ``ADAPTER_CALLS``) and here for a local one; both must give the same answers on the same layer."""

import importlib.util

import numpy as np
import pytest

from gradcheck import _adapters as AD
from gradcheck import _sandbox_child as child
from gradcheck.diagnose import adapter_call
from gradcheck.errors import GraderError
from gradcheck.sandbox import Sandbox

SOURCE = """
import numpy as np

class Drop:
    def __init__(self):
        self.rng = np.random.default_rng(3)
        self.fixed, self.t, self.mean = False, 0, np.zeros(3)
        self.W = np.arange(12.0).reshape(4, 3) / 10
    def fix_mask(self, on=True):
        self.fixed = on
    def forward(self, X, training=False):
        self.t += 1
        self.mean = 0.5 * self.mean + 0.5 * X.mean(axis=0)
        if not (self.fixed and hasattr(self, 'mask')):
            self.mask = self.rng.random(X.shape) > 0.5
        return X * self.mask
    def backward(self, dY):
        return dY * self.mask
"""


@pytest.fixture()
def layers(tmp_path):
    path = tmp_path / "drop.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("drop_s23", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with Sandbox(files=[str(path)], timeout=10) as sb:
        yield mod.Drop(), sb.load_layer("drop.py", "Drop")


def test_the_same_answers_here_and_in_the_child(layers):
    local, remote = layers
    X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    assert adapter_call(local, "hold_random") == adapter_call(remote, "hold_random") == "Drop"
    for lay in layers:
        lay.forward(X.copy())
    here, there = adapter_call(local, "state_values"), adapter_call(remote, "state_values")
    assert sorted(here) == sorted(there) == ["W", "mean", "t"]
    assert all(np.array_equal(here[k], there[k]) for k in here)
    np.testing.assert_array_equal(there["mean"], 0.5 * X.mean(axis=0))
    assert there["t"] == 1.0 and there["t"].dtype == np.float64
    draws = adapter_call(remote, "random_draws")
    assert set(draws) == set(adapter_call(local, "random_draws")) >= {"its Generator", "numpy's global generator"}
    assert all(isinstance(v, str) and len(v) == 16 for v in draws.values())
    for lay in layers:  # the grader's point for a weight without a gradient, set where the layer lives
        adapter_call(lay, "set_weights", {"W": np.full((4, 3), 0.25)})
        np.testing.assert_array_equal(adapter_call(lay, "state_values")["W"], np.full((4, 3), 0.25))
    with pytest.raises(AD.AdapterError, match="'t' is not a float array attribute of Drop"):  # here: raised
        adapter_call(local, "set_weights", {"t": np.zeros(())})
    with pytest.raises(GraderError, match="refused its own request: 't' is not a float array attribute"):
        adapter_call(remote, "set_weights", {"t": np.zeros(())})  # in the child: gradcheck's own failure


def test_the_child_runs_only_the_listed_functions():
    """The request names the function; the child runs none but :data:`ADAPTER_CALLS`'s (the parent's table of
    reply types names the same ones)."""
    from gradcheck.sandbox import _ADAPTER_REPLIES

    assert set(child.ADAPTER_CALLS) == set(_ADAPTER_REPLIES)
    assert all(callable(getattr(AD, name)) for name in child.ADAPTER_CALLS)
    box = child.Child(np, AD, "/", lambda *a, **k: None, lambda *a: None)
    with pytest.raises(child.ProtocolViolation, match="no adapter call 'walk'"):
        box.op_adapter(object(), {"name": "walk", "args": []}, child.Packer(np))


def test_random_draws_fingerprints_move_with_each_generator_and_every_word_of_a_state():
    """Session 46: a fingerprint hashes a state's arrays by their bytes (``_state_digest``), not their ``repr`` (numpy's
    printing of the global generator's 624-word key was 5 % of a diagnosis, and prints an array of more than 1000
    values with "..." in place of its middle). Each generator's draw moves its own fingerprint alone; a state that
    differs in one word in the middle of a long key gets another digest."""
    import hashlib
    import random

    class Rng:
        def __init__(self):
            self.rng = np.random.default_rng(1)

    lay = Rng()
    before = AD.random_draws(lay)
    assert AD.random_draws(lay) == before
    for draw, name in ((lambda: lay.rng.random(), "its Generator"), (np.random.rand, "numpy's global generator"),
                       (random.random, "Python's random module")):
        draw()
        after = AD.random_draws(lay)
        assert [k for k in after if after[k] != before[k]] == [name]
        before = after

    def digest(state):
        h = hashlib.sha1()
        AD._state_digest(state, h)
        return h.hexdigest()

    key = np.arange(2001, dtype=np.uint32)
    moved = key.copy()
    moved[1000] += 1
    assert digest(("MT19937", key, 5)) != digest(("MT19937", moved, 5))
    assert digest(("MT19937", key, 5)) == digest(("MT19937", key.copy(), 5))
    assert digest({"state": {"key": key}, "pos": 5}) != digest({"state": {"key": key}, "pos": 6})
