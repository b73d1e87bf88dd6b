"""outside44 H1: drawn ids repeat within a line along each axis, so an embedding backward that loops over rows
(karpathy/nn-zero-to-hero#57: ``for k: dC[Xb[k]] += demb[k]``) or over time steps with numpy's buffered
fancy-index add inside cannot PASS on a large vocabulary, where the ids drawn repeated only across lines."""
import numpy as np

from gradcheck._validation import index_inputs


def _loop_add(ids, dY, axis):
    """The buffered add of each line along ``axis``: a repeat within a line keeps one of its rows."""
    dW = np.zeros((int(ids.max()) + 1, dY.shape[-1]))
    for k in range(ids.shape[axis]):
        i = ids[k] if axis == 0 else ids[:, k]
        dW[i] += dY[k] if axis == 0 else dY[:, k]
    return dW


def test_drawn_ids_repeat_within_rows_and_time_steps():
    """(4, 3) ids from 100 rows: the seeds 0-5 all drew repeats across rows alone (before the fix), so both loops
    agreed with np.add.at; now each loop loses a repeat on every seed."""
    for shape in ((4, 3), (8, 5), (2, 6)):
        for seed in range(6):
            ids = index_inputs(shape, {0: 100}, seed)
            dY = np.random.default_rng(seed).standard_normal(shape + (2,))
            right = np.zeros((int(ids.max()) + 1, 2))
            np.add.at(right, ids, dY)
            for axis in (0, 1):
                assert not np.allclose(_loop_add(ids, dY, axis), right), (shape, seed, axis)
    assert index_inputs((5,), {0: 1000}, 0).shape == (5,)

