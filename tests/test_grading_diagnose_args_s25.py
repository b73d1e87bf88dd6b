"""review25g L6: ``gradcheck.grading.diagnosis.diagnose(..., layer=...)`` without ``upstream`` ran check's
signatures with G = NaN and said "no known bug pattern" where, with the upstream gradient, it names the bug
(MaxPoolOverlapOverwrites). A layer without its upstream gradient or inputs is now refused, naming what is
missing."""

import numpy as np
import pytest

from gradcheck.grading.diagnosis import diagnose
from tests.buggy_layers.pool_embed_rnn import MaxPoolOverlap, MaxPoolOverlapOverwrites


def _case():
    rng = np.random.default_rng(3)
    X = rng.standard_normal(MaxPoolOverlap.INPUT)
    ref, bug = MaxPoolOverlap(), MaxPoolOverlapOverwrites()
    G = rng.standard_normal(ref.forward(X).shape)
    ref.forward(X)
    expected = ref.backward(G)
    bug.forward(X)
    return bug, X, G, expected, bug.backward(G.copy())


def test_a_layer_without_its_upstream_gradient_is_refused():
    bug, X, G, expected, got = _case()
    named = diagnose("dX", got, expected, layer=bug, inputs=[X], upstream=G)
    assert named and "no known bug pattern" not in named, named
    with pytest.raises(ValueError, match=r"MaxPoolOverlapOverwrites.*upstream.*not given"):
        diagnose("dX", got, expected, layer=bug, inputs=[X])
    with pytest.raises(ValueError, match=r"MaxPoolOverlapOverwrites.*; inputs .*not given"):
        diagnose("dX", got, expected, layer=bug, upstream=G)
    assert diagnose("dX", -expected, expected) == diagnose("dX", -expected, expected, upstream=G)  # no layer: numbers
