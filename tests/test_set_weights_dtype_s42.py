"""verify42b F6: set_weights of a state value that is not real numbers (a BatchNorm's running_var as strings or
complex) raised after the weights were copied in, or dropped the imaginary part with numpy's warning; it is refused
with a TypeError before anything is assigned, in both packages (one check, manualprop._weights)."""
import numpy as np
import pytest

import autoprop as ap
import manualprop as mp


def models():
    m = mp.Sequential(mp.Linear(3, 4, rng=1), mp.BatchNorm1D(4))
    a = ap.Sequential([ap.layers.Linear(3, 4), ap.layers.BatchNorm1D(4)])
    a(ap.constant(np.ones((2, 3))))  # built
    return [m, a]


@pytest.mark.parametrize("bad", [np.array(["1"] * 4), np.ones(4) * (1 + 2j)], ids=["strings", "complex"])
@pytest.mark.parametrize("which", [0, 1], ids=["manualprop", "autoprop"])
def test_a_state_that_is_not_real_numbers_is_refused_before_anything_is_assigned(bad, which):
    model = models()[which]
    before = [np.array(w, copy=True) for w in model.get_weights()]
    values = [w + 1.0 for w in before]
    values[-1] = bad  # running_var
    with pytest.raises(TypeError, match=r"set_weights: value \d+ for state BatchNorm1D\.running_var has dtype"):
        model.set_weights(values)
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), before))  # nothing assigned
