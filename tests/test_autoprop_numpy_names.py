"""``import autoprop.numpy as np`` as a drop-in for ``import autograd.numpy as np`` (tester24a's
MEDIUM 2: 22 of HIPS autograd's 29 examples stopped on ``zeros``, ``arange``, ``newaxis``,
``random``, ... or ``from autograd.numpy.linalg import solve``). A name autoprop.numpy does not
define is numpy's own object, so a Tensor through it is recorded or refused exactly as through
plain numpy; no differentiable numpy name returns a value computed from a Tensor's values off
the tape without a TapeEscapeWarning (then gradient() refuses) or an error."""

import importlib
import signal
import warnings

import autograd
import autograd.numpy as agn
import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp

MISSING_IN_S24 = ["zeros", "ones", "arange", "eye", "full", "newaxis", "pi", "inf", "allclose",
                  "shape", "float64", "empty", "identity", "seterr"]


def test_the_testers_missing_names_and_submodules_resolve_to_numpys():
    for name in MISSING_IN_S24:
        assert getattr(anp, name) is getattr(np, name), name
    from autoprop.numpy.linalg import LinAlgError, solve
    assert LinAlgError is np.linalg.LinAlgError and solve is anp.linalg.solve
    for sub in ("linalg", "fft", "random"):
        mod = importlib.import_module(f"autoprop.numpy.{sub}")
        assert getattr(anp, sub) is mod
    from autoprop.numpy.random import randn
    assert randn is np.random.randn and anp.fft.rfft is np.fft.rfft and anp.linalg.eig is np.linalg.eig
    assert isinstance(anp.zeros((2, 3)), np.ndarray)  # a constructor gives a plain array, as autograd's


def test_every_numpy_name_autograd_numpy_offers_is_offered():
    missing = [n for n in dir(agn) if not n.startswith("_") and hasattr(np, n) and not hasattr(anp, n)]
    assert missing == []
    for sub in ("linalg", "fft", "random"):
        theirs = importlib.import_module(f"autograd.numpy.{sub}")
        mine = getattr(anp, sub)
        assert [n for n in dir(theirs) if not n.startswith("_") and hasattr(getattr(np, sub), n)
                and not hasattr(mine, n)] == [], sub


def test_an_unknown_name_says_numpy_has_none_either_and_dunders_stay_module_machinery():
    with pytest.raises(AttributeError, match="'autoprop.numpy' has no attribute 'zeroes', and neither has numpy"):
        anp.zeroes  # noqa: B018
    with pytest.raises(AttributeError):
        anp.__wrapped__  # noqa: B018
    assert "zeros" in dir(anp) and "solve" in dir(anp.linalg)


def test_a_port_of_an_autograd_program_agrees_with_autograd_and_central_differences():
    """gaussian_process.py's shape: anp.eye, anp.newaxis, anp.arange and linalg.solve on Tensors."""
    from autoprop.numpy.linalg import solve

    def f(params, np, solve):
        x = np.arange(4.0)[:, np.newaxis] * 0.5
        k = np.exp(-((x - x.T) ** 2) * np.exp(params[0])) + np.eye(4) * (0.1 + np.exp(params[1]))
        y = np.sin(np.arange(4.0))
        return np.sum(y * solve(k, y)) + np.log(np.linalg.det(k))

    p0 = np.array([0.3, -1.2])
    p = ap.Variable(p0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ap.TapeEscapeWarning)
        with ap.GradientTape() as tape:
            loss = f(p, anp, solve)
    g = tape.gradient(loss, p).numpy()
    want = autograd.grad(lambda q: f(q, agn, agn.linalg.solve))(p0)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    h = 1e-6
    cd = [(f(p0 + h * e, np, np.linalg.solve) - f(p0 - h * e, np, np.linalg.solve)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(g, cd, rtol=1e-7)


# numpy names not called with a Tensor here: files, printing options, doc helpers
_NOT_CALLED = {"save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt", "fromfile",
               "info", "show_config", "show_runtime", "test", "memmap", "DataSource", "set_printoptions",
               "printoptions", "setbufsize", "seterr", "seterrcall", "errstate", "lookfor", "source",
               "get_include", "fromregex", "add_newdoc", "add_docstring", "add_newdoc_ufunc", "deprecate",
               "disp", "recfromcsv", "recfromtxt", "safe_eval", "byte_bounds", "who", "busday_count",
               "nested_iters",
               # the global generator's state (a Tensor given to set_state would be kept there)
               "seed", "set_state", "get_state", "set_bit_generator", "get_bit_generator"}
# a float result off the tape that is right: non-differentiable by the one rule (lesson 10, C04),
# uninitialised, or the argument itself
_NO_DERIVATIVE = {"around", "rint", "empty_like", "real_if_close"}


def _floats(r):
    if isinstance(r, (tuple, list)):
        return any(_floats(x) for x in r)
    if isinstance(r, (float, complex, np.floating, np.complexfloating)):
        return True
    return isinstance(r, (np.ndarray, ap.Tensor)) and r.dtype.kind in "fc"


def _through(fn):
    w = ap.Variable(np.array([[0.5, 0.2, 0.1], [0.3, 0.9, 0.4], [0.2, 0.1, 0.7]]))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with ap.GradientTape() as tape:
            try:
                r = fn(w)
            except Exception:  # refused (TypeError naming the function) or numpy's own error
                return "raised"
    if any(issubclass(x.category, ap.TapeEscapeWarning) for x in rec):
        return "warned"
    leaves = r if isinstance(r, (tuple, list)) else [r]
    if any(isinstance(x, ap.Tensor) and x._key in tape._tracked for x in leaves):
        return "recorded"
    return "no gradient: " + type(r).__name__ if not _floats(r) else "SILENT"


@pytest.mark.parametrize("sub", [None, "linalg", "fft", "random"])
def test_no_numpy_name_silently_bypasses_the_tape(sub):
    mod, ours = (np, anp) if sub is None else (getattr(np, sub), getattr(anp, sub))
    own = set(vars(ours))
    handler = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError()))
    generator, state = np.random.get_bit_generator(), np.random.get_state()
    try:
        seen = _sweep(mod, ours, own)
    finally:  # (the draws moved numpy's global generator: later tests' seeds stay theirs)
        np.random.set_bit_generator(generator)
        np.random.set_state(state)
        signal.signal(signal.SIGALRM, handler)
    silent = sorted(n for n, v in seen.items() if v == "SILENT" and n not in _NO_DERIVATIVE)
    assert silent == [], silent
    assert len(seen) > (100 if sub is None else 5)
    if sub is None:  # numpy's own dispatch reached: recorded, refused by name, or warned
        assert seen["searchsorted"] != "SILENT" and seen["asanyarray"] == "warned"


def _sweep(mod, ours, own):
    seen = {}
    for name in dir(mod):
        f = getattr(mod, name)
        if name.startswith("_") or name in _NOT_CALLED or name in own or not callable(f) or (
                isinstance(f, type) and not issubclass(f, np.generic)):
            continue
        assert getattr(ours, name) is f, name  # numpy's own: through it as through numpy
        signal.alarm(10)
        try:
            seen[name] = _through(f)
        finally:
            signal.alarm(0)
    return seen
