"""verify43b F5: ``autoprop.function`` of a ``functools.partial`` or a callable object raised AttributeError
(``'Function' object has no attribute '__name__'``) at the first call; it now traces the function they run, whose
global names are watched as a plain function's (a global rebound between calls traces again)."""

import functools

import numpy as np

import autoprop as ap
import autoprop.numpy as anp

SCALE = 0.5


def body(x, k=1.0):
    return anp.sum(x * SCALE * k)


class Scaled:
    def __call__(self, x):
        return anp.sum(x * SCALE)


def _calls(fn):
    global SCALE
    f, out = ap.function(fn), []
    try:
        for i in range(3):
            SCALE = 0.5 + i  # rebound between calls: an eager call reads the new value
            out.append((float(f(np.ones(3)).numpy()), float(fn(ap.constant(np.ones(3))).numpy())))
    finally:
        SCALE = 0.5
    return f, out


def test_a_partial_is_traced_and_its_globals_watched():
    f, out = _calls(functools.partial(body, k=2.0))
    assert out == [(3.0, 3.0), (9.0, 9.0), (15.0, 15.0)] and f.traces == 3
    assert f.__name__ == "body"


def test_a_callable_object_is_traced_and_its_globals_watched():
    f, out = _calls(Scaled())
    assert out == [(1.5, 1.5), (4.5, 4.5), (7.5, 7.5)] and f.traces == 3
    assert f.__name__ == "Scaled"


def test_a_partial_names_the_arguments_after_its_own():
    def step(scale, y):
        return anp.sum(anp.ones(3) * scale) + y.tolist()[0]
    f = ap.function(functools.partial(step, 2.0))
    try:
        f(np.array([1, 2]))
    except ap.TraceError as e:
        assert "`y`" in str(e), str(e)
    else:
        raise AssertionError("the integer argument's .tolist() was not refused")
