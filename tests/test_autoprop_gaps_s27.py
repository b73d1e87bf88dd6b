"""autoprop gaps left by session 26 (note26 "Left"), closed in session 27: ``np.linalg.qr`` of empty
matrices (tester26t: 20 of PyTorch OpInfo's cases raised numpy's "zero-size array to reduction
operation maximum"), and t.logpdf's derivative in df near df = 100. Expected values: numpy's own
results (qr), torch.linalg.qr's empty gradients, mpmath (40 digits) for the t distribution.
"""

import numpy as np
import pytest

import autoprop as ap

EMPTY = [(5, 0), (2, 0), (0, 5), (0, 2), (0, 0), (2, 5, 0), (2, 0, 5), (2, 0, 0), (0, 5, 0), (0, 0, 5),
         (1, 1, 5, 0), (1, 1, 0, 2), (1, 1, 0, 0), (0, 5, 2)]


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", EMPTY, ids=str)
def test_qr_of_an_empty_matrix_is_numpys_and_its_derivatives_are_empty(shape, mode):
    """numpy's Q and R (a tall A with no columns: complete Q = I); the gradient is an empty array of A's shape
    (torch.linalg.qr's for mode='reduced'/'r'; torch refuses complete with m > n), the JVP empty too."""
    a0 = np.zeros(shape)
    want = np.linalg.qr(a0, mode=mode)
    want = want if isinstance(want, tuple) else (want,)
    a = ap.Variable(a0)
    with ap.GradientTape() as tape:
        out = np.linalg.qr(a, mode=mode)
        outs = out if isinstance(out, tuple) else (out,)
        loss = sum(np.sum(o * float(k + 1)) for k, o in enumerate(outs))
    for o, w in zip(outs, want):
        assert o.shape == w.shape
        np.testing.assert_array_equal(o.numpy(), w)
    g = tape.gradient(loss, a)
    assert g is not None and g.shape == shape and not np.any(g.numpy())
    with ap.ForwardAccumulator(a, np.ones(shape)) as acc:
        outf = np.linalg.qr(a, mode=mode)
    for o, w in zip(outf if isinstance(outf, tuple) else (outf,), want):
        jv = acc.jvp(o)
        assert jv.shape == w.shape and not np.any(jv.numpy())


def test_qr_beside_an_empty_batch_still_checks_the_rank():
    """The empty-A path is taken for empty inputs only: a rank-deficient A still raises by name."""
    a = ap.Variable(np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]]))
    with ap.GradientTape() as tape:
        q, r = np.linalg.qr(a)
        loss = np.sum(q)
    with pytest.raises(ValueError, match="rank-deficient"):
        tape.gradient(loss, a)


# --- Student's t: log normalising constant and logpdf, derivatives in df around df = 100 --------------------
@pytest.mark.parametrize("df0, value, d1, d2", [  # mpmath, 40 digits: loggamma((df+1)/2) - loggamma(df/2) - log(df pi)/2
    (0.5, -1.3105329259115095, 0.5707963267948967, -1.663862376708876),
    (3, -1.0008888496235098, 0.026480513893278643, -0.01691147786855766),
    (20, -0.9314333403794015, 0.0006242226154826338, -6.234490563975322e-05),
    (40, -0.9251878826503641, 0.00015620123274876562, -7.807626310531757e-06),
    (80, -0.9220634518397159, 3.905944919522924e-05, -9.76409983571709e-07),
    (99, -0.9214637427930916, 2.5506300255156678e-05, -5.152525153625378e-07),
    (99.99, -0.9214387415555071, 2.500375050001878e-05, -5.001000199995033e-07),
    (100, -0.9214384915430046, 2.4998750249893827e-05, -4.999500149915078e-07),
    (100.01, -0.921438241580497, 2.4993751499519002e-05, -4.99800069968522e-07),
    (150, -0.9206051875263187, 1.1110864219474594e-05, -1.4814156466370218e-07),
])
def test_t_log_norm_and_its_df_derivatives_on_both_sides_of_100(df0, value, d1, d2):
    """Below 100 the gammaln difference's derivative (digamma's of size 1/df cancelling to O(1/df^2)) was off by
    2.4e-12 at 99, 6.7e-12 at 99.99, 1.2e-12 at 40; above, the four-term series' derivatives by 3e-15 and 1.5e-14
    at 100. Now the series (seven terms) at df + 100 and the recurrence's steps log1p(-1/(df + 2k + 1)^2) / 2."""
    from autoprop.core.prims.special import t_log_norm

    df = ap.Variable(np.float64(df0))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = t_log_norm(df)
        g = inner.gradient(y, df)
    h = outer.gradient(g, df)
    with ap.ForwardAccumulator(df, np.float64(1.0)) as acc:
        yf = t_log_norm(df)
    np.testing.assert_allclose(float(y), value, rtol=1e-15)
    np.testing.assert_allclose([float(g), float(acc.jvp(yf))], [d1, d1], rtol=2e-15)
    np.testing.assert_allclose(float(h), d2, rtol=2e-15)


@pytest.mark.parametrize("x0, df0, d1, d2", [  # mpmath, 40 digits: d/d(df) of log t.pdf(x, df)
    (0.5, 99.99, 3.5917452193475266e-05, -7.181366280869161e-07),
    (0.5, 40, 0.00022415617109532477, -1.1195323544434771e-05),
    (3, 99, -0.0013926401070176388, 2.6409437708990988e-05),
    (0, 99.9, 2.5048820338998345e-05, -5.014527693526092e-07),
    (-2, 60, -0.0004289924307174819, 1.3419334598749411e-05),
    (0.5, 100.01, 3.590309376726304e-05, -7.177060505218711e-07),
])
def test_t_logpdf_derivatives_in_df_near_100(x0, df0, d1, d2):
    from autoprop.scipy import stats

    df = ap.Variable(np.float64(df0))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = stats.t.logpdf(np.float64(x0), df)
        g = inner.gradient(y, df)
    h = outer.gradient(g, df)
    np.testing.assert_allclose(float(g), d1, rtol=1e-14)
    np.testing.assert_allclose(float(h), d2, rtol=1e-14)
