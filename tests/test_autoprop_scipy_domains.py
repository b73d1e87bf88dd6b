"""autoprop.scipy's twins at the edges of their domains (review24a, session 24): the names in
``autoprop.scipy.special`` refuse a gradient for the order or shape parameter as scipy's ufuncs
do (they returned None for it, silently), and ``autoprop.scipy.stats`` gives scipy's values off
the support (0, -inf, 1) and nan for a parameter out of its domain (a scale <= 0, a shape <= 0),
where the formulas gave nan, or a finite wrong number (``gamma.pdf(-0.5, a=1)`` was 1.65, scipy's
0; ``norm.cdf(x, 0, -1)`` was ndtr(-x), scipy's nan).

Each value is scipy's own (scipy.stats is the reference for the values); each gradient inside the
support is checked against central differences of scipy's function, and is 0 off the support
(a constant there) and at an invalid parameter (nan, a constant).
"""

import numpy as np
import pytest
import scipy.special as ss

import autoprop as ap
from autoprop.scipy import special as aps

IN_X = ["gammainc", "gammaincc", "jv", "jn", "yv", "yn", "iv", "ive"]


@pytest.mark.parametrize("name", IN_X)
def test_the_special_twins_refuse_a_parameter_that_carries_gradient(name):
    p, x = ap.Variable(2.0), ap.Variable(0.8)
    with ap.GradientTape(), pytest.raises(TypeError, match=rf"{'jv' if name == 'jn' else name}\(.*\) is "
                                                            r"recorded in x only.* carries gradient"):
        getattr(aps, name)(p, x)
    with ap.ForwardAccumulator(p, 1.0), pytest.raises(TypeError, match="recorded in x only"):
        getattr(aps, name)(p, 0.8)


@pytest.mark.parametrize("name", IN_X)
def test_the_special_twins_still_record_x_and_give_scipys_value(name):
    x = ap.Variable([0.8, 1.9])
    with ap.GradientTape() as tape:
        y = getattr(aps, name)(2.0, x)
    ref = getattr(ss, name)(2.0, np.array([0.8, 1.9]))
    np.testing.assert_array_equal(y.numpy(), ref)
    h = 1e-6
    cd = (getattr(ss, name)(2.0, np.array([0.8, 1.9]) + h) - getattr(ss, name)(2.0, np.array([0.8, 1.9]) - h)) / (2 * h)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), cd, rtol=1e-6)
    # a plain order array, a constant Tensor order: values, no refusal
    np.testing.assert_array_equal(getattr(aps, name)(ap.constant([2.0, 3.0]), 0.8).numpy(),
                                  getattr(ss, name)([2.0, 3.0], 0.8))
