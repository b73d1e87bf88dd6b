"""A copy of a Tensor kept aside for a hand-written backward (corpus36 F4, SkalskiP's
``self._a_prev = np.array(a_prev, copy=True)``): the tape cannot tell that the plain copy feeds
nothing, so a later plain constant on the way to the target makes ``gradient`` refuse; the
refusal must say it is a suspicion and name the two ways to keep such a copy, and both must work."""
import numpy as np
import pytest

import autoprop as ap


def _x():
    return ap.Variable(np.arange(1.0, 7.0).reshape(2, 3), name="a_prev")


def test_the_refusal_names_the_explicit_copy_and_np_copy():
    x = _x()
    with pytest.warns(ap.TapeEscapeWarning), ap.GradientTape() as tape:
        cache = np.array(x, copy=True)  # noqa: F841 (kept aside, as the layer does)
        loss = np.sum(x * 2.0)
    with pytest.raises(ap.TapeEscapeError) as err:
        tape.gradient(loss, x)
    text = str(err.value)
    assert "t.numpy().copy()" in text and "np.copy(t)" in text
    assert "may hold them" in text and "partly off the tape" not in text


@pytest.mark.parametrize("keep", [lambda x: x.numpy().copy(), lambda x: np.copy(x)], ids=["numpy_copy", "np_copy"])
def test_both_named_copies_give_the_gradient(keep):
    x = _x()
    with ap.GradientTape() as tape:
        cache = keep(x)
        loss = np.sum(x * 2.0)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(np.asarray(cache), np.arange(1.0, 7.0).reshape(2, 3))
