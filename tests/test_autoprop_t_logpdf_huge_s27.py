"""Student-t logpdf where z^2 overflows (review27a L5): the kernel -(df + 1)/2 log1p(z^2/df) was -inf past
|z| = 1.34e154 (scipy, jax and torch are -inf there too); it now goes through special._log1p_sq. Values and
derivatives from mpmath at 80 digits (mp.diff in df; d/dx = -(df + 1) x / (df + x^2))."""

import warnings

import numpy as np
import pytest

import autoprop as ap
from autoprop.scipy import stats

CASES = [  # x, df, logpdf, d/dx, d/d(df)
    (1e200, 5.0, -2759.2424174446073, -6.0000000000000002e-200, -459.10248579536547),
    (-1e300, 3.0, -2761.905775865142, 3.9999999999999998e-300, -689.53307457331971),
    (1e160, 50.0, -18690.261710393028, -5.1e-159, -365.94750339631726),
    (2.0, 5.0, -2.731979583761081, -1.3333333333333333, -0.017412818557780861),
]


@pytest.mark.parametrize("x, df, value, dx, ddf", CASES)
def test_value_and_gradient_past_the_square_overflow(x, df, value, dx, ddf):
    xv, dv = ap.Variable(np.array(x)), ap.Variable(np.array(df))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning of autoprop's own
        with ap.GradientTape() as tape:
            y = stats.t.logpdf(xv, dv)
        gx, gd = tape.gradient(y, [xv, dv])
    assert float(y.numpy()) == pytest.approx(value, rel=1e-15)
    assert float(gx.numpy()) == pytest.approx(dx, rel=1e-14)
    assert float(gd.numpy()) == pytest.approx(ddf, rel=1e-14)


def test_a_huge_entry_beside_series_entries_keeps_every_gradient_finite():
    """The series (z^2/df < 0.1) and the log1p form in one array: the square of the huge entry is not formed in the
    series' branch, so the derivative in df is not NaN (an overflowed square times a zero cotangent)."""
    xv, dv = ap.Variable(np.array([0.1, 1e200, 3.0])), ap.Variable(np.array(5.0))
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(stats.t.logpdf(xv, dv))
    gx, gd = tape.gradient(y, [xv, dv])
    alone = []
    for x in (0.1, 1e200, 3.0):
        d = ap.Variable(np.array(5.0))
        with ap.GradientTape() as t1:
            y1 = stats.t.logpdf(ap.constant(np.array(x)), d)
        alone.append(float(t1.gradient(y1, d).numpy()))
    assert np.all(np.isfinite(gx.numpy()))
    assert float(gd.numpy()) == pytest.approx(sum(alone), rel=1e-14)
    assert gx.numpy()[1] == pytest.approx(-6e-200, rel=1e-14)
