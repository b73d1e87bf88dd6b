"""verify41 M3: ``seq.variables = other.variables`` on a Sequential changed nothing, without a word.

Keras's ``Sequential.variables`` has no setter; ours refuses any value but the ``{}`` that
``Layer.__init__`` assigns, and says how to copy a model instead.
"""
import numpy as np
import pytest

import autoprop as ap


def _pair():
    rng = np.random.default_rng(0)
    a = ap.Sequential([ap.layers.Linear(4, 3, rng=rng), ap.layers.Tanh()])
    b = ap.Sequential([ap.layers.Linear(4, 3, rng=rng), ap.layers.Tanh()])
    return a, b


def test_assigning_a_sequentials_variables_is_refused_naming_the_way_to_copy():
    a, b = _pair()
    before = {k: v.numpy().copy() for k, v in b.variables.items()}
    with pytest.raises(TypeError, match=r"Sequential\.variables cannot be assigned.*set_weights"):
        b.variables = a.variables
    for k, v in b.variables.items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_the_way_the_message_names_copies_the_model():
    a, b = _pair()
    x = np.random.default_rng(1).normal(size=(5, 4))
    assert not np.array_equal(a(x).numpy(), b(x).numpy())
    b.set_weights(a.get_weights())
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())


def test_the_empty_dict_of_layer_init_is_still_accepted():
    seq = ap.Sequential([ap.layers.Tanh()])
    seq.variables = {}
    assert seq.variables == {}
