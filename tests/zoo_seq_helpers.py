"""Shared helpers of tests/test_zoo_seq.py and tests/test_zoo_attention.py (not a test module).

The three-way check for a layer with one or several inputs:

* manual: ``forward(*inputs)`` then ``backward(G)`` (a tuple for several inputs),
* tape: the autoprop twin under a GradientTape with ``output_gradients=G``,
* numerical: central differences of ``L = sum(forward(*inputs) * G)``
  (``gradcheck.numerical.numerical_gradient``),

with ``G`` a random, non-uniform upstream gradient, for every float input and
every parameter.
"""

from __future__ import annotations

import numpy as np

import autoprop as ap
from gradcheck.numerical import numerical_gradient

RTOL_TWIN = 1e-7  # manual vs tape (and vs autograd): the same formula, rounding only
ATOL_TWIN = 1e-12  # for gradients that are analytically 0 (both sides ~1e-16)
RTOL_FD, ATOL_FD = 1e-6, 1e-8  # vs central differences


def is_float(x) -> bool:
    return np.asarray(x).dtype.kind == "f"


def as_tuple(g):
    return g if isinstance(g, tuple) else (g,)


def manual_grads(layer, inputs, G, **kw):
    """Forward + backward of the manual layer. Returns (Y, input grads tuple, param grads)."""
    Y = layer.forward(*inputs, **kw)
    d_inputs = as_tuple(layer.backward(G))
    return Y, d_inputs, {k: v.copy() for k, v in layer.grads.items()}


def tape_grads(twin, inputs, G, **kw):
    """Gradients of ``sum(twin(*inputs) * G)`` by the tape (None for integer inputs)."""
    xs = [ap.Variable(x) if is_float(x) else x for x in inputs]
    watched = [x for x in xs if isinstance(x, ap.Variable)]
    names = list(twin.variables)
    with ap.GradientTape() as tape:
        for x in watched:
            tape.watch(x)
        y = twin(*xs, **kw)
    grads = tape.gradient(
        y, watched + [twin.variables[k] for k in names], output_gradients=G,
        unconnected_gradients="zero",
    )
    grads = [g.numpy() for g in grads]
    d_inputs, it = [], iter(grads[: len(watched)])
    for x in xs:
        d_inputs.append(next(it) if isinstance(x, ap.Variable) else None)
    return y.numpy(), tuple(d_inputs), dict(zip(names, grads[len(watched):], strict=True))


def numerical_grads(layer, inputs, G, **kw):
    """Central differences of ``sum(layer.forward(*inputs) * G)`` for float inputs and params."""
    inputs = [np.array(x) for x in inputs]  # perturbed in place: work on copies

    def L():
        return float(np.sum(layer.forward(*inputs, **kw) * G))

    d_inputs = tuple(numerical_gradient(L, x) if is_float(x) else None for x in inputs)
    d_params = {k: numerical_gradient(L, p) for k, p in layer.params.items()}
    return d_inputs, d_params


def copy_params(layer, twin):
    for k, v in layer.params.items():
        twin.variables[k].assign(v)


def randomize_params(layer, rng, scale=0.5):
    """Non-zero values everywhere (e.g. attention's zero-initialised biases), in place."""
    for v in layer.params.values():
        v[...] = rng.normal(scale=scale, size=v.shape)


def assert_close(actual, expected, rtol, atol, what):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def three_way(layer, twin, inputs, G, **kw):
    """Assert manual == tape (1e-7), manual == FD, tape == FD for every input and param.

    Returns the manual (d_inputs, d_params) for further checks.
    """
    copy_params(layer, twin)
    Y, dm_in, dm_p = manual_grads(layer, inputs, G, **kw)
    Yt, dt_in, dt_p = tape_grads(twin, inputs, G, **kw)
    dn_in, dn_p = numerical_grads(layer, inputs, G, **kw)
    assert_close(Yt, Y, RTOL_TWIN, ATOL_TWIN, "forward: tape vs manual")
    assert dm_p.keys() == dt_p.keys() == layer.params.keys()
    for i, (m, t, n) in enumerate(zip(dm_in, dt_in, dn_in, strict=True)):
        if n is None:  # integer input: no gradient anywhere
            assert m is None and t is None
            continue
        assert m.shape == inputs[i].shape
        assert_close(m, t, RTOL_TWIN, ATOL_TWIN, f"input {i}: manual vs tape")
        assert_close(m, n, RTOL_FD, ATOL_FD, f"input {i}: manual vs numerical")
        assert_close(t, n, RTOL_FD, ATOL_FD, f"input {i}: tape vs numerical")
    for k in dm_p:
        assert dm_p[k].shape == layer.params[k].shape
        assert_close(dm_p[k], dt_p[k], RTOL_TWIN, ATOL_TWIN, f"{k}: manual vs tape")
        assert_close(dm_p[k], dn_p[k], RTOL_FD, ATOL_FD, f"{k}: manual vs numerical")
        assert_close(dt_p[k], dn_p[k], RTOL_FD, ATOL_FD, f"{k}: tape vs numerical")
    return dm_in, dm_p


def assert_same_init(make_manual, make_twin):
    """Same constructor + same seed (int or Generator) -> identical initial parameters."""
    for seed in (0, 7):
        m, t = make_manual(seed), make_twin(seed)
        assert list(m.params) == list(t.variables)
        for k in m.params:
            np.testing.assert_array_equal(m.params[k], t.variables[k].numpy())
        m2 = make_manual(np.random.default_rng(seed))
        for k in m.params:
            np.testing.assert_array_equal(m.params[k], m2.params[k])
