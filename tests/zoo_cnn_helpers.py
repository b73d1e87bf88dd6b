"""Shared helpers of tests/test_zoo_conv.py and tests/test_zoo_norm.py (not a test module).

The three-way check of a layer with one input ``X``:

* manual: ``forward(X, training)`` then ``backward(G)``;
* tape: the autoprop twin under a GradientTape with ``output_gradients=G``;
* numerical: central differences of ``L = sum(forward(X) * G)``, once through the
  manual forward and once through the twin's forward,

with ``G`` a random, NON-UNIFORM upstream gradient (a sum loss, ``G = 1``, cannot
see a wrong batch-norm backward: the true dX is then exactly 0), for the input and
every parameter. Parameters are randomised first (gamma = 1, beta = 0 would hide a
missing gamma factor) and copied into the twin.
"""

from __future__ import annotations

import numpy as np

import autoprop as ap

RTOL = 1e-7  # the brief's bound for every pair (max-norm relative error)
H = 1e-6  # finite-difference step


def rel_err(a, b) -> float:
    """``max|a - b| / max(max|a|, max|b|)`` (0 when both are 0)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0))
    diff = np.abs(a - b).max(initial=0.0)
    return 0.0 if diff == 0 else diff / scale


def numerical_grad(f, x, h=H):
    """Central differences of the scalar ``f()`` w.r.t. the array ``x`` (perturbed in place)."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + h
        fp = f()
        x[idx] = old - h
        fm = f()
        x[idx] = old
        g[idx] = (fp - fm) / (2 * h)
    return g


def randomize_params(layer, rng, scale=1.0):
    """Random non-trivial parameter values (in place, keeping the arrays)."""
    for v in layer.params.values():
        v[...] = rng.uniform(0.5, 1.5, v.shape) * rng.choice([-1.0, 1.0], v.shape) * scale


def copy_params(layer, twin):
    assert set(layer.params) == set(twin.variables), (sorted(layer.params), sorted(twin.variables))
    for k, v in layer.params.items():
        twin.variables[k].assign(v)


def manual_grads(layer, X, G, training):
    Y = layer.forward(X.copy(), training=training)
    out = {"X": layer.backward(G)}
    out.update({k: v.copy() for k, v in layer.grads.items()})
    return Y, out


def tape_grads(twin, X, G, training):
    x = ap.constant(X)
    names = list(twin.variables)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = twin(x, training=training)
    gs = tape.gradient(
        y, [x] + [twin.variables[k] for k in names], output_gradients=G,
        unconnected_gradients="zero",
    )
    out = {"X": gs[0].numpy()}
    out.update({k: g.numpy() for k, g in zip(names, gs[1:])})
    return y.numpy(), out


def fd_manual(layer, X, G, training):
    X = X.copy()

    def L():
        return float(np.sum(layer.forward(X, training=training) * G))

    out = {"X": numerical_grad(L, X)}
    for k, p in layer.params.items():
        out[k] = numerical_grad(L, p)
    return out


def fd_tape(twin, X, G, training):
    X = X.copy()
    arrays = {k: v.numpy() for k, v in twin.variables.items()}

    def L():
        for k, a in arrays.items():
            twin.variables[k].assign(a)
        return float(np.sum(twin(X, training=training).numpy() * G))

    out = {"X": numerical_grad(L, X)}
    for k, a in arrays.items():
        out[k] = numerical_grad(L, a)
    for k, a in arrays.items():
        twin.variables[k].assign(a)
    return out


def three_way(layer, twin, X, G, training=False, rtol=RTOL, fd=True):
    """Assert manual == tape == numerical (each pair, every gradient); return the manual ones."""
    copy_params(layer, twin)
    Y_m, g_m = manual_grads(layer, X, G, training)
    Y_t, g_t = tape_grads(twin, X, G, training)
    assert rel_err(Y_m, Y_t) < rtol, ("Y", rel_err(Y_m, Y_t))
    assert set(g_m) == set(g_t) == {"X", *layer.params}
    for k in g_m:
        assert rel_err(g_m[k], g_t[k]) < rtol, (k, "manual vs tape", rel_err(g_m[k], g_t[k]))
    if fd:
        g_fm = fd_manual(layer, X, G, training)
        g_ft = fd_tape(twin, X, G, training)
        for k in g_m:
            assert rel_err(g_m[k], g_fm[k]) < rtol, (k, "manual vs FD", rel_err(g_m[k], g_fm[k]))
            assert rel_err(g_t[k], g_ft[k]) < rtol, (k, "tape vs FD", rel_err(g_t[k], g_ft[k]))
    return Y_m, g_m
