"""The session-20 names checked against an independent engine: each case is a scalar loss
``fn(np, *inputs)`` at fixed inputs (``np`` is numpy over autoprop Tensors, or the engine's
numpy), and ``write_refs`` (run by hand under .venv-peers: jax 0.10.2 and torch 2.13) stores the
engine's gradient of each in tests/vocab20_refs.py.

* Histograms (``histogram2d``/``histogramdd``, weighted, density) and ``betainc`` in x: jax.numpy
  and jax.scipy, which differentiate them as numpy defines them (the edges through min and max).
* Complex ``np.linalg.eigh`` (as numpy reads A: its lower or upper triangle mirrored, the real
  part of the diagonal; torch is given that Hermitian matrix, built from the input), ``svd``
  (square, tall, wide) and ``qr`` (square, tall, wide) with losses invariant under the vectors'
  phases (``|V|^2``, ``V f(w) V^H``, ``U f(s) V^H``): torch's gradient (``dL/dx + i dL/dy``, autoprop's
  public convention).
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


def _cm(*shape):
    return _r.standard_normal(shape) + 1j * _r.standard_normal(shape)


A33, A42, A24, A23 = _cm(3, 3), _cm(4, 2), _cm(2, 4), _cm(2, 3)
CW = {k: _r.standard_normal(s) for k, s in (("w", 3), ("v", (3, 3)), ("u42", (4, 2)), ("v42", (2, 2)), ("s", 2),
                                           ("u24", (2, 2)), ("v24", (2, 4)), ("s3", 3))}
CB = {k: _cm(*s) for k, s in (("33", (3, 3)), ("42", (4, 2)), ("24", (2, 4)), ("23", (2, 3)))}


def loss_eigh(np, a, uplo="L", c=CW, b=CB):
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return ((w * c["w"]).sum() + (np.abs(v) ** 2 * c["v"]).sum()
            + np.real(((v * np.exp(w)) @ np.conj(np.swapaxes(v, -1, -2)) * b["33"]).sum()))


def loss_svd(np, a, ku, kv, ks, kb, c=CW, b=CB):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return ((s * c[ks]).sum() + (np.abs(u) ** 2 * c[ku]).sum() + (np.abs(vh) ** 2 * c[kv]).sum()
            + np.real(((u * np.sin(s)) @ vh * b[kb]).sum()))


def loss_qr(np, a, kb, c=CW, b=CB):
    q, r = np.linalg.qr(a)
    return (np.real((q * b[kb][: q.shape[0], : q.shape[1]]).sum())
            + np.imag((r * np.conj(b[kb][: r.shape[0], : r.shape[1]])).sum()) + (np.abs(r) ** 2).sum())


#: name: (loss(np, a, *extra), a, extra); torch references
COMPLEX_CASES = {
    "eigh": (loss_eigh, A33, ()), "eigh_upper": (loss_eigh, A33, ("U",)),
    "svd_square": (loss_svd, A33, ("v", "v", "s3", "33")), "svd_tall": (loss_svd, A42, ("u42", "v42", "s", "42")),
    "svd_wide": (loss_svd, A24, ("u24", "v24", "s", "24")),
    "qr_square": (loss_qr, A33, ("33",)), "qr_tall": (loss_qr, A42, ("42",)), "qr_wide": (loss_qr, A23, ("23",)),
}


def _torch_complex_refs(torch):  # pragma: no cover - under .venv-peers
    class TNP:  # numpy's names the losses use, over torch
        class linalg:
            eigh = staticmethod(lambda a, UPLO="L": torch.linalg.eigh(a))  # a: the Hermitian numpy reads
            svd = staticmethod(lambda a, full_matrices=False: torch.linalg.svd(a, full_matrices=False))
            qr = staticmethod(torch.linalg.qr)
        abs, exp, sin, real, imag, conj = torch.abs, torch.exp, torch.sin, torch.real, torch.imag, torch.conj
        swapaxes = staticmethod(lambda x, i, j: x.transpose(i, j))

    c = {k: torch.tensor(v) for k, v in CW.items()}
    b = {k: torch.tensor(v) for k, v in CB.items()}
    refs = {}
    for name, (f, a, extra) in COMPLEX_CASES.items():
        ta = torch.tensor(a, requires_grad=True)
        x = ta
        if f is loss_eigh:  # the Hermitian matrix numpy's eigh reads from A
            tri = (lambda t: torch.triu(t, 1)) if extra == ("U",) else (lambda t: torch.tril(t, -1))
            x = tri(ta) + tri(ta).conj().transpose(-1, -2) + torch.diag(torch.real(torch.diagonal(ta))).to(ta.dtype)
        f(TNP, x, *extra, c=c, b=b).backward()
        refs[name] = ta.grad.numpy().tolist()
    return refs


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
    refs.update(_torch_complex_refs(torch))
    with open(path, "w") as fh:
        fh.write('"""jax 0.10.2 and torch 2.13 references for tests/test_autoprop_vocab20.py, written by\n'
                 '``vocab20_cases.write_refs``."""\n\nREFS = {\n')
        for k, v in refs.items():
            fh.write(f"    {k!r}: {v!r},\n")
        fh.write("}\n")
