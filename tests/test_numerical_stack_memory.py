"""tester15 M6: an input whose perturbed copies for one entry would exceed STACK_MAX elements in one forward is
differenced one entry at a time (no forward on k stacked copies), with a note; the numbers are the same plan's."""

import numpy as np

from gradcheck.numerical import STACK_MAX, layer_numerical_gradients


def test_a_large_input_is_not_stacked_and_its_sampled_entries_are_right():
    rng = np.random.default_rng(0)
    n = STACK_MAX // 2 // 1000 + 1  # two copies just over STACK_MAX
    X, G = rng.standard_normal((n, 1000)), rng.standard_normal((n, 1000))
    rows = []

    def forward(x):
        rows.append(x.shape[0])
        return np.tanh(x)

    notes, idx = [], [(0, 0), (n - 1, 999), (7, 3)]
    out = layer_numerical_gradients(forward, [X], {}, G, input_names=["X"], indices={"X": idx}, notes=notes)
    assert max(rows) == n  # never a stacked batch of copies
    assert any("not stacked as one batch: the copies of one entry of X would be 2 times its size" in s
               for s in notes), notes
    want = G * (1 - np.tanh(X) ** 2)
    for ix in idx:
        assert abs(out["X"][ix] - want[ix]) < 1e-6 * (1 + abs(want[ix]))


def test_a_small_input_is_still_stacked():
    rng = np.random.default_rng(0)
    X, G = rng.standard_normal((8, 5)), rng.standard_normal((8, 5))
    rows = []

    def forward(x):
        rows.append(x.shape[0])
        return np.tanh(x)

    layer_numerical_gradients(forward, [X], {}, G, input_names=["X"])
    assert max(rows) > 8
