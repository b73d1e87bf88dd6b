"""nielsen34's n16, left by session 35: a sigmoid that computes in place in its own z (``np.negative(z, out=z);
np.exp(z, out=z); return 1/(1+z)``) leaves exp(-z) in backprop's ``zs``, which ``sigmoid_prime`` then reads (and
rewrites twice): every gradient wrong, "no known bug pattern". Now named (a row of
:data:`gradcheck.diagnose._BACKPROP_LINES`, simulated by :func:`gradcheck.diagnose._nielsen_backprop`'s ``inplace``).
The network is tests/fixtures/nielsen_s34/network2.py (written for these tests), the bug a replaced line.
"""

import numpy as np
from test_nielsen_s35 import ALL, CE, HIDDEN, _check

from gradcheck import diagnose as D

SIGMOID = "    return 1.0 / (1.0 + np.exp(-z))"
IN_PLACE = (SIGMOID, "    np.negative(z, out=z)\n    np.exp(z, out=z)\n    return 1.0 / (1.0 + z)")
SAID = ("what backprop gives with a sigmoid that writes into its own z (np.negative(z, out=z), np.exp(z, out=z): "
        "zs[-l] holds exp(-z) after the forward pass, and sigmoid_prime(zs[-l]) calls it twice more on that array) "
        "where a sigmoid that leaves z as it is is due: backprop keeps each z in zs for sigmoid_prime, so an "
        "activation computed in place in z destroys it")


def test_an_in_place_sigmoid_is_named(tmp_path):
    """n16 with the quadratic cost: every tensor wrong (the output delta reads sigmoid_prime too), named."""
    code, text = _check(tmp_path, IN_PLACE)
    assert code == 1, text
    assert f"diagnosis: {ALL} {SAID}" in text, text
    assert "no known bug pattern" not in text, text


def test_an_in_place_sigmoid_with_the_cross_entropy_is_named_for_the_hidden_layers(tmp_path):
    """With the cross-entropy cost the output delta a - y reads no sigmoid_prime: the hidden layers' tensors alone."""
    code, text = _check(tmp_path, IN_PLACE, CE)
    assert code == 1, text
    assert f"diagnosis: {HIDDEN} {SAID}" in text, text


def test_the_simulated_in_place_sigmoid_is_that_code():
    """The simulation is the code it names: the in-place sigmoid run as n16 writes it, on one network, gives the
    same gradients as _nielsen_backprop(inplace=True) (and other ones than the correct backprop)."""
    rng = np.random.default_rng(0)
    Ws = [rng.standard_normal((3, 4)), rng.standard_normal((3, 3))]
    bs = [rng.standard_normal((3, 1)), rng.standard_normal((3, 1))]
    X, T = rng.standard_normal((4, 1)), rng.uniform(0.1, 0.9, (3, 1))

    def sigmoid(z):
        np.negative(z, out=z)
        np.exp(z, out=z)
        return 1.0 / (1.0 + z)

    def sigmoid_prime(z):
        return sigmoid(z) * (1 - sigmoid(z))

    acts, zs = [X], []
    for W, b in zip(Ws, bs):
        zs.append(W @ acts[-1] + b)
        acts.append(sigmoid(zs[-1]))
    delta = (acts[-1] - T) * sigmoid_prime(zs[-1])
    nb = [None, delta]
    delta = (Ws[1].T @ delta) * sigmoid_prime(zs[-2])
    nb[0] = delta
    got = D._nielsen_backprop(Ws, bs, X, T, "quadratic", inplace=True)
    right = D._nielsen_backprop(Ws, bs, X, T, "quadratic")
    for a, b in zip(nb, got[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert not np.allclose(got[0][0], right[0][0])
