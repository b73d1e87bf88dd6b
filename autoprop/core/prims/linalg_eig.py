"""np.linalg.eig and eigvals of a general real matrix with a real spectrum (a record of
its own beside ``linalg``'s eigh, which reads one triangle of a symmetric matrix).
Derivation: Magnus 1985; the same formula as HIPS autograd's ``grad_eig`` on real values.
"""

from __future__ import annotations

import numpy as np

from ..registry import defcomposite, defprim
from ..tensor import Tensor
from ._common import _mT, _shape, _t
from .linalg import _eigh_gap, _eye, _result_type, _used

__all__ = ["eig", "eigvals"]


# --- eig of a general real matrix with a real spectrum ---------------------------------
# A = V diag(w) V^-1 with distinct real eigenvalues, numpy's unit-norm columns. With
# P = V^-1 dA V: dw = diag(P), dV = Q - V diag(diag(V^T Q)), Q = V (F o P) (the second
# term keeps each column at unit norm); the adjoint: dA = V^-T (diag(gw) + F o (V^T G)) V^T,
# G = gV - V diag(diag(V^T gV)) (Magnus 1985, "On differentiating eigenvalues and
# eigenvectors", Econometric Theory 1; the formula of autograd's grad_eig on real values).
def _eig_fwd(a):
    w, v = np.linalg.eig(a)
    if w.dtype.kind == "c":
        raise ValueError(
            "this matrix has complex eigenvalues, and autoprop differentiates "
            "real functions only. A symmetric matrix (a covariance, a Hessian) has a real "
            "spectrum: use np.linalg.eigh (it reads one triangle); for the values alone, "
            "t.numpy() leaves the tape.")
    return w, v


def _eig_vjp(g, ans, a):
    gw, gv = g
    w, v = ans
    n = _shape(w)[-1]
    m = None if gw is None else np.expand_dims(gw, -2) * _eye(n, w)  # diag(gw)
    if _used(gv):  # (eigenvalues alone, eigvals: no eigenvector term, defined at ties)
        gv = gv - v * np.sum(v * gv, axis=-2, keepdims=True)  # the unit-norm constraint
        e = _eigh_gap(w, "eig") * (_mT(v) @ gv)
        m = e if m is None else m + e
    if m is None:
        return np.zeros(_shape(v), v.dtype)
    return np.linalg.solve(_mT(v), m @ _mT(v))


def _eig_jvp(t, ans, a):
    w, v = ans
    p = np.linalg.solve(v, t @ v)  # V^-1 dA V
    n = _shape(w)[-1]
    dw = np.sum(p * _eye(n, p), axis=-1)
    q = v @ (_eigh_gap(w, "eig", undefined="nan") * p)
    return dw, q - v * np.sum(v * q, axis=-2, keepdims=True)


def _np_eig(a):
    return _EigResult(*eig(_t(a)))


_EigResult = _result_type("EigResult", "eigenvalues eigenvectors")


eig = defprim(
    "eig", _eig_fwd, _eig_vjp, jvp=_eig_jvp,
    jacobian="A = V diag(w) V^-1, P = V^-1 dA V: dw = diag(P), dV = Q - V diag(diag(V^T Q)), "
             "Q = V (F o P), F_ij = 1/(w_j - w_i) (i != j), 0 on the diagonal",
    vjp="G = gV - V diag(diag(V^T gV)); dA = V^-T (diag(gw) + F o (V^T G)) V^T (Magnus 1985)",
    shapes="A (..., n, n) with a real spectrum -> eigenvalues (..., n) (numpy's order), "
           "eigenvectors (..., n, n) (unit-norm columns): numpy's EigResult",
    kinks="complex eigenvalues: ValueError (real functions only; eigh for a symmetric A); "
          "repeated eigenvalues: the eigenvalues' gradient is defined, a gradient reaching the "
          "eigenvectors is refused, ValueError (forward mode: a NaN tangent)",
    numpy=(np.linalg.eig,), np_call=_np_eig, source="{out} = np.linalg.eig({a})", multi=True,
    reads=(("ans",),),
)


@defcomposite("eigvals", "the eigenvalue row of eig: dA = V^-T diag(g) V^T",
              numpy=(np.linalg.eigvals,))
def eigvals(a):
    return _np_eig(a).eigenvalues
