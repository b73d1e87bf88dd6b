"""verify42b F16: a list of ints given as an option of autoprop.numpy's functions inside autoprop.function (a shape,
axes, split points) and changed in place between calls was replayed with its first items (a wrong gradient, no
retrace); its items are part of the trace's signature, as np.pad's pad_width and np.tile's reps already were."""
import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp

W = ap.Variable(np.arange(1.0, 7.0))
SHAPE, AXES, SECT, BSHAPE, SRC, EXP = [2, 3], [0, 1], [2], [2, 6], [0, 1], [0]

CASES = {
    "reshape": (lambda: anp.sum(anp.cumsum(anp.reshape(W, SHAPE), axis=1) ** 2),
                lambda: SHAPE.__setitem__(slice(None), [3, 2])),
    "transpose": (lambda: anp.sum(anp.cumsum(anp.transpose(anp.reshape(W, (2, 3)), AXES), axis=0) ** 2),
                  AXES.reverse),
    "split": (lambda: anp.sum(anp.split(W, SECT)[0] ** 2), lambda: SECT.__setitem__(0, SECT[0] + 1)),
    "broadcast_to": (lambda: anp.sum(anp.cumsum(anp.broadcast_to(W, BSHAPE), axis=0) ** 2),
                     lambda: BSHAPE.__setitem__(0, BSHAPE[0] + 1)),
    "moveaxis": (lambda: anp.sum(anp.cumsum(anp.moveaxis(anp.reshape(W, (2, 3)), SRC, [1, 0]), axis=0) ** 2),
                 SRC.reverse),
    "expand_dims": (lambda: anp.sum(anp.cumsum(anp.expand_dims(anp.reshape(W, (2, 3)), EXP), axis=1) ** 2),
                    lambda: EXP.__setitem__(0, EXP[0] + 1)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_list_option_changed_in_place_between_calls_traces_again(name):
    loss, change = CASES[name]

    def step():
        with ap.GradientTape() as tape:
            y = loss()
        return tape.gradient(y, W)

    traced = ap.function(step)
    for _ in range(3):
        got, want = traced().numpy(), step().numpy()
        assert np.array_equal(got, want), (name, got, want)
        change()
