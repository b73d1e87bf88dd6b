"""Inputs and losses shared by tests/test_autoprop_linalg_multi.py and the jax references in
tests/linalg_multi_refs.py: each loss is written over a numpy-like module ``m`` (numpy on
autoprop Tensors, ``autograd.numpy``, ``jax.numpy``) and uses the decomposition's outputs in a
way that does not depend on the eigenvector/singular-vector signs LAPACK picks (squares), so
every engine's numbers are comparable. Inputs: rounded draws of ``default_rng(18)``.
"""

import numpy as np

_rng = np.random.default_rng(18)


def _r(*s):
    return np.round(_rng.standard_normal(s), 2)


_B = _r(2, 3, 3)
SYM = _B @ np.swapaxes(_B, -1, -2) + np.diag([0.0, 1.0, 2.0])  # (2, 3, 3) symmetric, distinct eigenvalues
SYM = np.round((SYM + np.swapaxes(SYM, -1, -2)) / 2, 2)
TALL, WIDE, SQB, TALLB, SLOG = _r(4, 3), _r(3, 4), _r(2, 3, 3), _r(2, 4, 3), _r(2, 3, 3)
W = {k: _r(*s) for k, s in dict(
    ww=(2, 3), wv=(2, 3, 3), ws_t=(3,), wu_t=(4, 3), wvh_t=(3, 3), ws_w=(3,), wu_w=(3, 3), wvh_w=(3, 4),
    ws_b=(2, 3), wu_b=(2, 3, 3), wvh_b=(2, 3, 3), wq_t=(4, 3), wr_t=(3, 3), wq_b=(2, 4, 3), wr_b=(2, 3, 3),
    wq_w=(3, 3), wr_w=(3, 4)).items()}
_T = {k: _r(*s) for k, s in dict(sym=(2, 3, 3), tall=(4, 3), wide=(3, 4), sqb=(2, 3, 3), tallb=(2, 4, 3),
                                  slog=(2, 3, 3)).items()}
_T["sym"] = (_T["sym"] + np.swapaxes(_T["sym"], -1, -2)) / 2


def _eigh(m, a):
    w, v = m.linalg.eigh(a)
    return m.sum(W["ww"] * w) + m.sum(W["wv"] * v ** 2)


def _eigh_values(m, a):
    return m.sum(W["ww"] * m.linalg.eigh(a)[0] ** 2)


def _svd(k):
    def loss(m, a):
        u, s, vh = m.linalg.svd(a, full_matrices=False)
        return m.sum(W["ws_" + k] * s) + m.sum(W["wu_" + k] * u ** 2) + m.sum(W["wvh_" + k] * vh ** 2)
    return loss


def _svd_values(m, a):
    return m.sum(W["ws_b"] * m.linalg.svd(a, full_matrices=False)[1] ** 2)


def _qr(k):
    def loss(m, a):
        q, r = m.linalg.qr(a)
        return m.sum(W["wq_" + k] * q ** 2) + m.sum(W["wr_" + k] * r ** 2)
    return loss


def _slogdet(m, a):
    return m.sum(np.array([1.3, -0.7]) * m.linalg.slogdet(a)[1])


#: name -> (input, loss(m, a)); direction(name) is the Hessian-vector product's direction
CASES = {
    "eigh": (SYM, _eigh), "eigh_values": (SYM, _eigh_values),
    "svd_tall": (TALL, _svd("t")), "svd_wide": (WIDE, _svd("w")), "svd_batch": (SQB, _svd("b")),
    "svd_values": (SQB, _svd_values),
    "qr_tall": (TALL, _qr("t")), "qr_batch": (TALLB, _qr("b")), "qr_wide": (WIDE, _qr("w")),
    "slogdet": (SLOG, _slogdet),
}
_DIR = {"eigh": "sym", "eigh_values": "sym", "svd_tall": "tall", "svd_wide": "wide", "svd_batch": "sqb",
        "svd_values": "sqb", "qr_tall": "tall", "qr_batch": "tallb", "qr_wide": "wide", "slogdet": "slog"}


def direction(name):
    return _T[_DIR[name]]


def write_jax_refs(path):  # pragma: no cover - run by hand, under jax (not installed for the tests)
    """Write tests/linalg_multi_refs.py: each case's gradient and Hessian-vector product by jax
    (``python -c "import sys; sys.path.insert(0, 'tests'); import linalg_multi_cases as c;
    c.write_jax_refs('tests/linalg_multi_refs.py')"`` in an environment with jax)."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    out = ['"""jax references for tests/test_autoprop_linalg_multi.py: the gradient and the Hessian-vector\n'
           'product (along ``linalg_multi_cases.direction``) of each loss in tests/linalg_multi_cases.py, by\n'
           f'jax {jax.__version__} (x64, CPU), written by ``linalg_multi_cases.write_jax_refs``. jax symmetrises\n'
           "eigh's input, so its eigh gradient is (G + G^T) / 2 of autoprop's lower-triangle G.\"\"\"\n\nREFS = {"]
    for name, (x, loss) in CASES.items():
        f = lambda a, loss=loss: loss(jnp, a)  # noqa: E731
        g = jax.grad(f)(jnp.asarray(x))
        _, hvp = jax.jvp(jax.grad(f), (jnp.asarray(x),), (jnp.asarray(direction(name)),))
        out.append(f"    {name!r}: ({np.array(g).tolist()!r},\n        {np.array(hvp).tolist()!r}),")
    out.append("}\n")
    with open(path, "w") as fh:
        fh.write("\n".join(out))
