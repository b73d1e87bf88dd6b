"""np.linalg's decompositions as multi-output records (session 18): ``eigh``, ``eig``, ``svd``,
``qr`` and ``slogdet`` are one record each whose outputs are numpy's (``EighResult``, ``SVDResult``,
``QRResult``, ``SlogdetResult``, ``EigResult``), with a VJP term for each output that got a
gradient (None for an unused one) and a JVP per output.

Checked against jax 0.10.2 (first and second order: gradients and Hessian-vector products, stored
in tests/linalg_multi_refs.py by ``linalg_multi_cases.write_jax_refs``), HIPS autograd (eigh, eig,
svd, slogdet; it has no qr) and central differences, on single and stacked matrices. At repeated
eigenvalues (singular values) the eigenvalues' gradient is defined, to any order, as in jax; a
gradient reaching the eigenvectors there is refused by name (jax gives NaN) and forward mode gives
those eigenvectors a NaN tangent (jax's inf/NaN). Complex inputs: these records have no complex
rules (not in ``COMPLEX_READY``), so a tape refuses them by name.
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import autoprop as ap
from autoprop.core import registry
from tests.linalg_multi_cases import CASES, SQB, SYM, TALL, direction
from tests.linalg_multi_refs import REFS


def _grad_and_hvp(loss, x0, t):
    """The tape's gradient of loss(np, x) at x0 and its Hessian-vector product along t
    (nested tapes: d/dx <grad, t>)."""
    x = ap.Variable(x0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = loss(np, x)
        g = inner.gradient(y, x)
        gt = np.sum(g * t)
    return g.numpy(), outer.gradient(gt, x).numpy()


def _sym(g):
    return (g + np.swapaxes(g, -1, -2)) / 2


def _directional(loss, x0, t, h=1e-6):
    return (float(loss(np, x0 + h * t)) - float(loss(np, x0 - h * t))) / (2 * h)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_and_hessian_vector_product_match_jax_and_central_differences(name):
    x0, loss = CASES[name]
    t = direction(name)
    g, hvp = _grad_and_hvp(loss, x0, t)
    ref_g, ref_hvp = (np.array(r) for r in REFS[name])
    if name.startswith("eigh"):  # jax symmetrises eigh's input: (G + G^T) / 2 of the lower-triangle G
        g_cmp, hvp_cmp = _sym(g), _sym(hvp)
        assert np.all(np.triu(g, 1) == 0)  # numpy reads the lower triangle: the upper gets nothing
    else:
        g_cmp, hvp_cmp = g, hvp
    np.testing.assert_allclose(g_cmp, ref_g, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(hvp_cmp, ref_hvp, rtol=1e-8, atol=1e-10)
    # first order against central differences along the direction and along one more
    for d in (t, np.cos(np.arange(t.size)).reshape(t.shape)):
        d = _sym(d) if name.startswith("eigh") else d
        np.testing.assert_allclose(np.sum(g * d), _directional(loss, x0, d), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("name", ["eigh", "eigh_values", "svd_tall", "svd_wide", "svd_batch", "svd_values", "slogdet"])
def test_gradient_matches_autograd(name):
    x0, loss = CASES[name]
    x = ap.Variable(x0)
    with ap.GradientTape() as tape:
        y = loss(np, x)
    ref = autograd.grad(lambda a: loss(anp, a))(x0)  # eigh: autograd's lower-triangle convention too
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), ref, rtol=1e-10, atol=1e-12)


# --- one record, numpy's result types, an output that got no gradient -------------------------
def test_each_decomposition_is_one_record_returning_numpys_result_type():
    x = ap.Variable(SYM[0])
    with ap.GradientTape(persistent=True) as tape:
        e = np.linalg.eigh(x)
        s = np.linalg.svd(x)
        q = np.linalg.qr(x)
        d = np.linalg.slogdet(x)
    assert [n.prim.name for n in tape._nodes] == ["eigh", "svd", "qr", "slogdet"]  # no getitem slices
    assert [len(n.outs()) for n in tape._nodes] == [2, 3, 2, 2]
    for got, want, fields in ((e, np.linalg.eigh(SYM[0]), ("eigenvalues", "eigenvectors")),
                              (s, np.linalg.svd(SYM[0]), ("U", "S", "Vh")), (q, np.linalg.qr(SYM[0]), ("Q", "R")),
                              (d, np.linalg.slogdet(SYM[0]), ("sign", "logabsdet"))):
        assert type(got).__name__ == type(want).__name__ and got._fields == fields
        for f in fields:
            assert isinstance(getattr(got, f), ap.Tensor)
            np.testing.assert_array_equal(getattr(got, f).numpy(), getattr(want, f))
    w, v = e  # unpacks as numpy's
    assert w is e.eigenvalues and v is e[1]


@pytest.mark.parametrize("which", [0, 1, 2])
def test_svd_one_output_alone_matches_autograd(which):
    a0 = TALL
    wgt = np.cos(np.arange(12.0)).reshape(4, 3)[: (4, 3, 3)[which]]

    def loss(m, a):
        out = m.linalg.svd(a, full_matrices=False)[which]
        return m.sum(wgt[..., : out.shape[-1]] * out ** 2) if which != 1 else m.sum(wgt[0] * out)

    x = ap.Variable(a0)
    with ap.GradientTape() as tape:
        y = loss(np, x)
    got = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(got, autograd.grad(lambda a: loss(anp, a))(a0), rtol=1e-10, atol=1e-12)
    d = np.sin(np.arange(12.0)).reshape(4, 3)
    np.testing.assert_allclose(np.sum(got * d), _directional(loss, a0, d), rtol=1e-7)


@pytest.mark.parametrize("which", [0, 1])
def test_qr_one_output_alone_matches_central_differences(which):
    a0 = TALL
    wgt = np.cos(np.arange(12.0)).reshape(4, 3)[: (4, 3)[which]]

    def loss(m, a):
        return m.sum(wgt * m.linalg.qr(a)[which] ** 2)

    x = ap.Variable(a0)
    with ap.GradientTape() as tape:
        y = loss(np, x)
    got = tape.gradient(y, x).numpy()
    for d in (np.sin(np.arange(12.0)).reshape(4, 3), np.cos(np.arange(12.0) * 0.7).reshape(4, 3)):
        np.testing.assert_allclose(np.sum(got * d), _directional(loss, a0, d), rtol=1e-7)
    if which == 1:  # mode='r' is R alone (numpy's array), the same gradient
        with ap.GradientTape() as tape:
            r = np.linalg.qr(x, mode="r")
            y = np.sum(wgt * r ** 2)
        assert isinstance(r, ap.Tensor)
        np.testing.assert_allclose(r.numpy(), np.linalg.qr(a0, mode="r"), rtol=1e-14)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), got, rtol=1e-14)


def test_slogdet_sign_is_an_output_with_a_zero_gradient_as_jax():
    x = ap.Variable(SQB)
    with ap.GradientTape(persistent=True) as tape:
        sign, logabsdet = np.linalg.slogdet(x)
    np.testing.assert_array_equal(sign.numpy(), np.linalg.slogdet(SQB).sign)
    np.testing.assert_array_equal(tape.gradient(sign, x).numpy(), np.zeros_like(SQB))  # jax: zeros
    np.testing.assert_allclose(tape.gradient(logabsdet, x).numpy(), np.swapaxes(np.linalg.inv(SQB), -1, -2),
                               rtol=1e-12)
    acc_t = np.cos(np.arange(18.0)).reshape(2, 3, 3)
    with ap.ForwardAccumulator(x, ap.constant(acc_t)) as acc:
        sign, logabsdet = np.linalg.slogdet(x)
    np.testing.assert_array_equal(acc.jvp(sign).numpy(), np.zeros(2))
    np.testing.assert_allclose(acc.jvp(logabsdet).numpy(),
                               np.trace(np.linalg.solve(SQB, acc_t), axis1=-2, axis2=-1), rtol=1e-12)


def test_eig_of_a_stacked_real_spectrum_matches_autograd_each_output_and_both():
    p = np.array([[1.0, 0.3, -0.2], [0.1, 1.0, 0.4], [-0.3, 0.2, 1.0]])
    a0 = np.stack([p @ np.diag([0.5, 1.5, 3.0]) @ np.linalg.inv(p), p.T @ np.diag([-1.0, 0.7, 2.0]) @ np.linalg.inv(p.T)])
    ww, wv = np.array([[0.3, -1.1, 0.8], [1.2, 0.4, -0.5]]), np.cos(np.arange(18.0)).reshape(2, 3, 3)
    for use in ("w", "v", "both"):
        def loss(m, a, use=use):
            w, v = m.linalg.eig(a)
            return (m.sum(ww * w) if use != "v" else 0.0) + (m.sum(wv * v ** 2) if use != "w" else 0.0)

        x = ap.Variable(a0)
        with ap.GradientTape() as tape:
            y = loss(np, x)
        got = tape.gradient(y, x).numpy()
        np.testing.assert_allclose(got, autograd.grad(lambda a, f=loss: f(anp, a))(a0), rtol=1e-9, atol=1e-11)
        d = np.sin(np.arange(18.0)).reshape(2, 3, 3)
        np.testing.assert_allclose(np.sum(got * d), _directional(loss, a0, d), rtol=1e-7)
        hvp = _grad_and_hvp(loss, a0, d)[1]  # second order: autograd's Hessian-vector product
        ref = autograd.hessian_vector_product(lambda a, f=loss: f(anp, a))(a0, d)
        np.testing.assert_allclose(hvp, ref, rtol=1e-8, atol=1e-10)


# --- repeated eigenvalues and singular values: as jax ------------------------------------------
def test_repeated_eigenvalues_first_order_defined_second_order_and_eigenvectors_refused_forward_nan():
    a0 = np.diag([1.0, 1.0, 3.0])
    x = ap.Variable(a0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            w, v = np.linalg.eigh(x)  # v unused: its gradient is None, no eigenvector term
            y = np.sum(w ** 2)
        g = inner.gradient(y, x)  # recorded by the outer tape (main refused here: its gV was a Tensor)
        gt = np.sum(g * np.eye(3))
    np.testing.assert_allclose(g.numpy(), np.diag([2.0, 2.0, 6.0]), atol=1e-15)  # jax's
    with pytest.raises(ValueError, match=r"autoprop\.eigh: .*repeated eigenvalues"):
        outer.gradient(gt, x)  # the second derivative goes through V: undefined at the tie (jax: NaN)
    with ap.GradientTape() as tape:
        w, v = np.linalg.eigh(x)
        y = np.sum(v[:, 0] ** 3)
    with pytest.raises(ValueError, match=r"autoprop\.eigh: .*repeated eigenvalues.*jax gives NaN.*eigvalsh"):
        tape.gradient(y, x)
    with ap.ForwardAccumulator(x, ap.constant(np.ones((3, 3)))) as acc:
        w, v = np.linalg.eigh(x)
    np.testing.assert_allclose(acc.jvp(w).numpy(), [1.0, 1.0, 1.0])  # jax's
    dv = acc.jvp(v).numpy()
    assert np.all(np.isnan(dv[:, :2]))  # the tied pair: undefined (jax: inf/NaN)
    np.testing.assert_allclose(dv[:, 2], [0.5, 0.5, 0.0], atol=1e-15)  # jax's, the distinct one


def test_repeated_singular_values_values_defined_vectors_refused():
    a0 = np.diag([2.0, 2.0, 1.0])
    x = ap.Variable(a0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = np.sum(np.linalg.svd(x)[1] ** 2)
        g = inner.gradient(y, x)  # recorded by the outer tape (main refused here)
        gt = np.sum(g * a0)
    np.testing.assert_allclose(g.numpy(), np.diag([4.0, 4.0, 2.0]), atol=1e-15)  # jax's
    with pytest.raises(ValueError, match=r"autoprop\.svd: .*repeated"):
        outer.gradient(gt, x)  # through U and V: undefined at the tie (jax: NaN)
    with ap.GradientTape() as tape:
        y = np.sum(np.linalg.svd(x)[0] ** 3)
    with pytest.raises(ValueError, match=r"autoprop\.svd: .*repeated or zero singular values.*compute_uv=False"):
        tape.gradient(y, x)
    with ap.ForwardAccumulator(x, ap.constant(np.ones((3, 3)))) as acc:
        u, s, vh = np.linalg.svd(x)
    np.testing.assert_allclose(acc.jvp(s).numpy(), [1.0, 1.0, 1.0], atol=1e-15)
    assert np.isnan(acc.jvp(u).numpy()).any()


# --- options: what has no derivative is refused by name ----------------------------------------
def test_options_without_a_derivative_are_refused_by_name():
    x = ap.Variable(TALL)
    with pytest.raises(TypeError, match=r"hermitian=True\) only with compute_uv=False"):  # (values: tape44 M2)
        np.linalg.svd(x, hermitian=True)
    with pytest.raises(TypeError, match="mode='raw'"):
        np.linalg.qr(x, mode="raw")
    with ap.GradientTape() as tape:
        u, s, vh = np.linalg.svd(x)  # full_matrices=True: U (4, 4), its last column not unique
        y = np.sum(u)
    assert u.shape == (4, 4)
    with pytest.raises(ValueError, match="full_matrices=True"):
        tape.gradient(y, x)
    with ap.GradientTape() as tape:
        s = np.linalg.svd(x, compute_uv=False)  # numpy's S alone
        y = np.sum(s ** 2)
    assert isinstance(s, ap.Tensor)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * TALL, rtol=1e-12, atol=1e-14)  # |A|_F^2


def test_complex_input_is_refused_by_name_on_a_tape_and_an_accumulator():
    h = np.array([[2.0, 1.0 - 1.0j], [1.0 + 1.0j, 3.0]])  # Hermitian: eigenvalues real, eigenvectors complex
    z = ap.Variable(h)
    w, v = np.linalg.eigh(z)  # no tape: plain values
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(h))
    # (complex eigh, svd and qr are differentiated since session 20, tests/test_autoprop_vocab20.py;
    # eig since session 21, tests/test_autoprop_vocab21.py)
    with ap.GradientTape():
        np.testing.assert_array_equal(np.linalg.eig(z)[0].numpy(), np.linalg.eig(h)[0])
    with ap.ForwardAccumulator(z, ap.constant(np.eye(2, dtype=complex))):
        with pytest.raises(TypeError, match=r"autoprop\.cholesky: complex values are not supported"):
            np.linalg.cholesky(z)


# --- backward_source: one statement for all outputs ------------------------------------------
def test_backward_source_writes_a_decomposition_as_one_statement_and_runs():
    A = ap.Variable(TALL, name="A")
    with ap.GradientTape(persistent=True) as tape:
        s = np.linalg.svd(A, compute_uv=False)
        loss = np.sum(s ** 2)
    src = tape.backward_source(loss, [A])  # svdvals' VJP records the svd record
    assert "u, _, vh = np.linalg.svd(A, full_matrices=False)  # (4, 3), (3,), (3, 3)" in src.code, src.code
    assert "concatenate" not in src.code
    np.testing.assert_allclose(src.run()[0], tape.gradient(loss, A).numpy(), rtol=1e-14)
    S = ap.Variable(np.diag([1.0, 1.0, 3.0]), name="S")  # tied eigenvalues: the values' code is defined
    with ap.GradientTape(persistent=True) as tape:
        w, v = np.linalg.eigh(S)
        loss = np.sum(w ** 2)
    src = tape.backward_source(loss, [S])  # main refused: its packed VJP computed the gaps on Tensors
    np.testing.assert_allclose(src.run()[0], np.diag([2.0, 2.0, 6.0]), atol=1e-15)


def test_split_pieces_template_overlapping_and_single_pieces():
    from autoprop.core.source import call_source

    prim = registry.PRIMITIVES["split_pieces"]
    x = np.arange(12.0).reshape(2, 6)
    for pieces in (((0, 2), (1, 4)), ((1, 3),), ((0, 2), (2, 6))):
        code, inputs = call_source(prim, x, pieces=pieces, axis=1)
        ns = {"np": np, **inputs}
        exec(code, ns)  # noqa: S102
        want = prim.fwd(x, pieces, 1)
        assert len(ns["out"]) == len(want), code
        for got, w in zip(ns["out"], want):
            np.testing.assert_array_equal(got, w, err_msg=code)
    assert call_source(prim, x, pieces=((0, 2), (2, 6)), axis=1)[0] == "out = np.split(a0, [2], axis=1)"


def test_reverse_over_forward_mode_through_every_decomposition_matches_central_differences():
    a0 = np.array([[2.0, 0.3, 0.1], [0.2, -1.0, 0.4], [0.0, 0.5, 1.5]])

    def jvp_sum(x):  # one scalar of the forward-mode tangents of every record's outputs
        with ap.ForwardAccumulator(x, ap.constant(np.eye(3))) as acc:
            _, logabsdet = np.linalg.slogdet(x)
            w, _ = np.linalg.eigh(x @ x.T)
            _, s, vh = np.linalg.svd(x)
            q, r = np.linalg.qr(x)
        return (acc.jvp(logabsdet) + np.sum(acc.jvp(w)) + np.sum(acc.jvp(s)) + np.sum(acc.jvp(r))
                + np.sum(acc.jvp(vh) ** 2) + np.sum(acc.jvp(q) ** 2))

    x = ap.Variable(a0)
    with ap.GradientTape() as tape:
        y = jvp_sum(x)
    got = tape.gradient(y, x).numpy()
    num = np.zeros((3, 3))
    for i in range(3):
        for k in range(3):
            e = np.zeros((3, 3))
            e[i, k] = 1e-6
            num[i, k] = (float(jvp_sum(ap.constant(a0 + e))) - float(jvp_sum(ap.constant(a0 - e)))) / 2e-6
    np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-7)
