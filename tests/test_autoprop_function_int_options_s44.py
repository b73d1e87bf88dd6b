"""autoprop.function: a 0-d integer argument given to autoprop's functions as an option their Python computes with
(``ddof``, a spacing, ``ord``) is refused, naming it; it was replayed with the first call's value (verify44a H1:
``anp.var(x, ddof=k)`` traced with k=1 returned 713.90 for k=2, numpy 753.57). Each case: the traced function equals
numpy on every call or refuses; the ordinary uses of a 0-d integer argument still replay each call's value."""
import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp

X = np.arange(20.0).reshape(4, 5) ** 1.5

OPTIONS = {
    "var ddof": (lambda t, k: anp.var(t, ddof=k), lambda a, k: np.var(a, ddof=k)),
    "std ddof": (lambda t, k: anp.std(t, ddof=k), lambda a, k: np.std(a, ddof=k)),
    "Tensor.var ddof": (lambda t, k: t.var(ddof=k), lambda a, k: a.var(ddof=k)),
    "var correction": (lambda t, k: anp.var(t, axis=0, correction=k), lambda a, k: np.var(a, axis=0, ddof=k)),
    "gradient spacing": (lambda t, k: anp.gradient(t, k, axis=1), lambda a, k: np.gradient(a, k, axis=1)),
    "norm ord": (lambda t, k: anp.linalg.norm(t[0], ord=k), lambda a, k: np.linalg.norm(a[0], ord=k)),
}


@pytest.mark.parametrize("name", OPTIONS)
def test_int_argument_as_computed_option_is_refused_not_replayed(name):
    f, ref = OPTIONS[name]
    traced = ap.function(f)
    with pytest.raises(ap.TraceError) as info:
        for k in (1, 2):
            np.testing.assert_allclose(traced(X, np.array(k)).numpy(), ref(X, k), rtol=1e-12)
    msg = str(info.value)
    assert "`k`" in msg and "test_autoprop_function_int_options_s44.py" in msg and "Python ints" in msg


ORDINARY = {
    "t[k]": (lambda t, k: t[k], lambda a, k: a[k]),
    "t[:, k]": (lambda t, k: t[:, k], lambda a, k: a[:, k]),
    "t * k": (lambda t, k: t * k, lambda a, k: a * k),
    "t ** k": (lambda t, k: t ** k, lambda a, k: a ** k),
    "where(t > k)": (lambda t, k: anp.where(t > k, t, 0.0), lambda a, k: np.where(a > k, a, 0.0)),
    "clip(t, 0, k)": (lambda t, k: anp.clip(t, 0.0, k), lambda a, k: np.clip(a, 0.0, k)),
}


@pytest.mark.parametrize("name", ORDINARY)
def test_int_argument_as_data_still_replays_each_value(name):
    f, ref = ORDINARY[name]
    traced = ap.function(f)
    for k in (1, 3, 0, 2):
        np.testing.assert_allclose(traced(X, np.array(k)).numpy(), ref(X, k), rtol=1e-12)
