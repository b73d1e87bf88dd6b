"""Complex ``np.linalg.eig``/``eigvals`` (session 21) checked against torch: each case is a scalar
loss ``f(np, a)`` at a fixed matrix ``a`` (``np`` is numpy over autoprop Tensors, or numpy's
names over torch), invariant under the eigenvectors' phases (the eigenvalues, ``|V|^2``,
``V f(w) V^-1``), and ``write_refs`` (run by hand under .venv-peers: torch 2.13) stores torch's
gradient of each (``dL/dx + i dL/dy``, autoprop's public convention; the real part for a real
``a``) in tests/vocab21_refs.py.

Matrices: a complex 3x3 and 4x4, and real 3x3 and 4x4 matrices with complex spectra (numpy
returns complex eigenvalues and eigenvectors there); all eigenvalues distinct."""

import numpy as np

_r = np.random.default_rng(21)


def _cm(*shape):
    return _r.standard_normal(shape) + 1j * _r.standard_normal(shape)


C33, C44 = _cm(3, 3), _cm(4, 4)
R33 = np.array([[0.5, -2.0, 0.3], [1.5, 0.2, -0.7], [0.4, 0.9, 1.1]])  # eigenvalues: a conjugate pair and a real one
R44 = np.array([[1.0, 2.0, 0.0, 0.5], [-3.0, 0.5, 1.0, 0.0], [0.2, 0.0, -1.0, 4.0], [0.0, 0.3, -2.0, 0.2]])
CW = {n: (_r.standard_normal(n), _r.standard_normal(n), _r.standard_normal((n, n)), _cm(n, n)) for n in (3, 4)}


def loss_eig(np, a, c=CW):
    """The eigenvalues' real and imaginary parts, |V|^2 (unit columns: each column's phase
    cancels) and V exp(w) V^-1 (a matrix function: V's column scales cancel)."""
    w, v = np.linalg.eig(a)
    cr, ci, cv, cb = c[a.shape[-1]]
    return ((np.real(w) * cr).sum() + (np.imag(w) * ci).sum() + (np.abs(v) ** 2 * cv).sum()
            + np.real(((v * np.exp(w)) @ np.linalg.inv(v) * cb).sum()))


def loss_eigvals(np, a, c=CW):
    w = np.linalg.eigvals(a)
    cr, ci, _, _ = c[a.shape[-1]]
    return (np.abs(w) ** 2 * cr).sum() + np.real((w * w * ci).sum()) + np.imag(np.exp(w).sum())


#: name: (loss(np, a), a); torch references
CASES = {
    "eig_complex33": (loss_eig, C33), "eig_complex44": (loss_eig, C44),
    "eig_real33": (loss_eig, R33), "eig_real44": (loss_eig, R44),
    "eigvals_complex33": (loss_eigvals, C33), "eigvals_real44": (loss_eigvals, R44),
}


def write_refs(path):  # pragma: no cover - run by hand under .venv-peers (torch)
    """``cd tests && ../../main/.venv-peers/bin/python -c "import vocab21_cases as c;
    c.write_refs('vocab21_refs.py')"``."""
    import torch

    class TNP:  # numpy's names the losses use, over torch
        class linalg:
            eig = staticmethod(torch.linalg.eig)
            eigvals = staticmethod(torch.linalg.eigvals)
            inv = staticmethod(torch.linalg.inv)
        abs, exp, real, imag = torch.abs, torch.exp, torch.real, torch.imag

    c = {n: tuple(torch.tensor(x) for x in cs) for n, cs in CW.items()}
    refs = {}
    for name, (f, a) in CASES.items():
        ta = torch.tensor(a, requires_grad=True)
        f(TNP, ta, c=c).backward()
        refs[name] = ta.grad.numpy().tolist()
    with open(path, "w") as fh:
        fh.write('"""torch 2.13 references for tests/test_autoprop_vocab21.py, written by\n'
                 '``vocab21_cases.write_refs``."""\n\nREFS = {\n')
        for k, v in refs.items():
            fh.write(f"    {k!r}: {v!r},\n")
        fh.write("}\n")
