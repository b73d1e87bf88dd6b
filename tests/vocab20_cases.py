"""The session-20 names checked against an independent engine: each case is a scalar loss
``fn(np, *inputs)`` at fixed inputs (``np`` is numpy over autoprop Tensors, or the engine's
numpy), and ``write_refs`` (run by hand under .venv-peers: jax 0.10.2 and torch 2.13) stores the
engine's gradient of each in tests/vocab20_refs.py.

* Histograms (``histogram2d``/``histogramdd``, weighted, density) and ``betainc`` in x: jax.numpy
  and jax.scipy, which differentiate them as numpy defines them (the edges through min and max).
* The set functions: jax 0.10.2 returns a zero gradient for union1d & co., so the reference is
  torch, gathering each sorted unique value at its first occurrence in ``concatenate(ar1, ar2)``
  found by brute force (``(cat == v).nonzero()[0]``), the convention autoprop documents."""

import numpy as np

_r = np.random.default_rng(20)
X7, Y7, W7 = _r.standard_normal(7), _r.standard_normal(7), _r.uniform(0.5, 2.0, 7)
S62 = _r.uniform(0.0, 1.0, (6, 2))
A = np.array([3.0, 1.0, 3.0, 2.0, 0.5])
B = np.array([2.0, 5.0, 3.0, 0.25])
XB = np.array([0.1, 0.4, 0.9, 0.55])


def _weights(n):
    return np.arange(1.0, n + 1.0)


#: name: (fn(np, *inputs) -> scalar, inputs); histograms and betainc (jax references)
JAX_CASES = {
    "histogram2d_weighted_density": (lambda np, x, y, w: (
        np.histogram2d(x, y, bins=[2, 3], weights=w, density=True)[0] * np.arange(6.0).reshape(2, 3)).sum()
        + (np.histogram2d(x, y, bins=[2, 3], weights=w)[0] ** 2).sum()
        + (np.histogram2d(x, y, bins=2)[1] ** 2).sum() + np.histogram2d(x, y, bins=2)[2].sum(), (X7, Y7, W7)),
    "histogramdd_weighted": (lambda np, s, w: (np.histogramdd(s, bins=(2, 3), weights=w)[0]
                                               * np.arange(6.0).reshape(2, 3)).sum()
                             + (np.histogramdd(s, bins=(3, 2), range=[(0.0, 1.0), (0.2, 0.8)], weights=w,
                                               density=True)[0] ** 2).sum(), (S62, W7[:6])),
    "histogram_weighted": (lambda np, x, w: (np.histogram(x, bins=4, weights=w)[0] ** 2).sum()
                           + (np.histogram(x, bins=4, weights=w, density=True)[0] * np.arange(4.0)).sum(),
                           (X7, W7)),
    "betainc_x": (lambda np, x: (betainc(np, np.array([2.0, 0.5, 3.0, 1.0]), np.array([1.5, 2.0, 0.7, 1.0]), x)
                                 ** 2).sum(), (XB,)),
}


def betainc(np, a, b, x):
    if np.__name__.startswith("jax"):
        import jax.scipy.special as js
        return js.betainc(a, b, x)
    import scipy.special
    return scipy.special.betainc(a, b, x)


#: name: (numpy function, its keywords, inputs); loss = sum(result * (1, 2, 3, ...)) (torch references)
SET_CASES = {
    "union1d": (np.union1d, {}, (A, B)),
    "intersect1d": (np.intersect1d, {}, (A, B)),
    "setdiff1d": (np.setdiff1d, {}, (A, B)),
    "setxor1d": (np.setxor1d, {}, (A, B)),
    "union1d_self": (np.union1d, {}, (A, A[1:])),
}


def set_loss(np, f, kw, a, b):
    r = f(a, b, **kw)
    return (r * _weights(r.shape[0])).sum()


def write_refs(path):  # pragma: no cover - run by hand under .venv-peers (jax and torch)
    """``cd tests && ../../main/.venv-peers/bin/python -c "import vocab20_cases as c;
    c.write_refs('vocab20_refs.py')"``."""
    import jax
    import jax.numpy as jnp
    import torch

    jax.config.update("jax_enable_x64", True)
    refs = {}
    for name, (fn, xs) in JAX_CASES.items():
        g = jax.grad(lambda *a, fn=fn: fn(jnp, *a), argnums=tuple(range(len(xs))))(*[jnp.asarray(x) for x in xs])
        refs[name] = [np.asarray(d).tolist() for d in g]
    for name, (f, kw, (a, b)) in SET_CASES.items():
        ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
        cat = torch.cat([ta, tb]) if f in (np.union1d, np.setxor1d) else ta  # where the values come from
        vals = f(a, b, **kw)
        picked = torch.stack([cat[int((cat.detach() == float(v)).nonzero()[0, 0])] for v in vals])
        (picked * torch.tensor(_weights(len(vals)))).sum().backward()
        refs[name] = [(t.grad if t.grad is not None else torch.zeros_like(t)).numpy().tolist() for t in (ta, tb)]
    with open(path, "w") as fh:
        fh.write('"""jax 0.10.2 and torch 2.13 references for tests/test_autoprop_vocab20.py, written by\n'
                 '``vocab20_cases.write_refs``."""\n\nREFS = {\n')
        for k, v in refs.items():
            fh.write(f"    {k!r}: {v!r},\n")
        fh.write("}\n")
