"""Softmax's VJP on saturated rows (session 46): the textbook ``P * (dP - sum(dP * P))`` subtracts two numbers of
size |dP| that agree to 1e-13 at a nearly one-hot row's winner and returns their round-off (attention at X + 3000:
dW_q -5.2e-10 where the true one is -1.6e-13). Both tracks now shift dP by its value at the row's largest P. The
reference is the exact gradient in 60-digit decimal arithmetic, from the same float inputs."""
from decimal import Decimal as D
from decimal import localcontext

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp


def _exact_softmax_vjp(S, G):
    """Rows of exact softmax(S)^T-VJP of G (last axis), as 60-digit Decimals -> float64; -inf entries get p = 0."""
    out = np.zeros(S.shape)
    with localcontext() as ctx:
        ctx.prec = 60
        for idx in np.ndindex(S.shape[:-1]):
            s = [D(float(v)) if np.isfinite(v) else None for v in S[idx]]
            m = max(v for v in s if v is not None)
            e = [(v - m).exp() if v is not None else D(0) for v in s]
            z = sum(e)
            p = [v / z for v in e]
            g = [D(float(v)) for v in G[idx]]
            c = sum(a * b for a, b in zip(g, p))
            out[idx] = [float(pi * (gi - c)) for pi, gi in zip(p, g)]
    return out


def _exact_attention(Q, K, V, dY, causal):
    """(dQ, dK, dV) of softmax(Q K^T / sqrt(d) + mask) V: the scores and dP exact in decimal, rounded once."""
    d = Q.shape[-1]
    with localcontext() as ctx:
        ctx.prec = 60
        Qd, Kd, Vd, Gd = (np.vectorize(lambda v: D(float(v)), otypes=[object])(a) for a in (Q, K, V, dY))
        scale = 1 / D(d).sqrt()
        S = np.einsum("...ik,...jk->...ij", Qd, Kd) * scale
        T = S.shape[-1]
        mask = np.triu(np.ones((S.shape[-2], T), bool), 1) if causal else np.zeros((S.shape[-2], T), bool)
        dP = np.einsum("...ik,...jk->...ij", Gd, Vd)
        dS = np.empty(S.shape, object)
        P = np.empty(S.shape, object)
        for idx in np.ndindex(S.shape[:-1]):
            row = [None if mask[idx[-1], j] else S[idx][j] for j in range(T)]
            m = max(v for v in row if v is not None)
            e = [(v - m).exp() if v is not None else D(0) for v in row]
            z = sum(e)
            P[idx] = p = [v / z for v in e]
            c = sum(a * b for a, b in zip(dP[idx], p))
            dS[idx] = [pi * (gi - c) * scale for pi, gi in zip(p, dP[idx])]
        dQ = np.einsum("...ij,...jk->...ik", dS, Kd)
        dK = np.einsum("...ij,...ik->...jk", dS, Qd)
        dV = np.einsum("...ij,...ik->...jk", P, Gd)
    return tuple(a.astype(float) for a in (dQ, dK, dV))


def _saturated_qkv(spread, offset):
    """Keys of size ``offset`` (as an attention's projections of X + 3000) whose scores differ by ~``spread`` within
    a row (30: rows nearly one-hot), so dQ = dS @ K multiplies dS's error by |K|; Q, V and dY ordinary."""
    rng = np.random.default_rng(3)
    Q = rng.standard_normal((2, 5, 4)) * 2
    K = rng.standard_normal((2, 5, 4)) * spread / 2 + offset
    return Q, K, rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 3)) * 1e3


def _assert_close_to(got, ref, name):
    """Each row (one query's / key's gradient) within 1e-6 of that row's largest exact entry: a saturated row's
    true gradient is tiny, and the textbook form returned 1e2 times it (spread 30, keys at 3000)."""
    err = np.max(np.abs(got - ref), axis=-1) / np.maximum(np.max(np.abs(ref), axis=-1), 1e-300)
    assert np.max(err) <= 1e-6, (name, np.max(err), got, ref)


@pytest.mark.parametrize("causal,spread,offset", [(True, 30.0, 3000.0), (False, 30.0, -3000.0), (True, 1.0, 0.0)])
def test_attention_gradients_on_saturated_rows_are_the_exact_ones(causal, spread, offset):
    Q, K, V, dY = _saturated_qkv(spread, offset)
    ref = _exact_attention(Q, K, V, dY, causal)
    layer = mp.ScaledDotProductAttention(causal=causal)
    layer.forward(Q, K, V)
    for name, got, r in zip(("dQ", "dK", "dV"), layer.backward(dY), ref):
        _assert_close_to(got, r, "manualprop " + name)
    twin = ap.layers.ScaledDotProductAttention(causal=causal)
    q, k, v = (ap.Variable(a) for a in (Q, K, V))
    with ap.GradientTape() as tape:
        y = twin(q, k, v)
    for name, got, r in zip(("dQ", "dK", "dV"), tape.gradient(y, [q, k, v], output_gradients=dY), ref):
        _assert_close_to(np.asarray(got), r, "autoprop " + name)


def test_softmax_layer_and_prim_vjp_on_a_saturated_row_keep_relative_accuracy():
    """Every entry within 1e-9 relative of the exact VJP (the textbook form: 6e-7 at the winner, 2**32 ulps)."""
    rng = np.random.default_rng(0)
    S = rng.standard_normal((6, 8)) * 30
    G = rng.standard_normal((6, 8)) * 3000 + 5000
    ref = _exact_softmax_vjp(S, G)
    layer = mp.Softmax(axis=-1)
    layer.forward(S)
    x = ap.Variable(S)
    with ap.GradientTape() as tape:
        y = ap.softmax(x, axis=-1)
    acc = ap.ForwardAccumulator(x, G)
    for name, got in (("manualprop", layer.backward(G)), ("autoprop", np.asarray(tape.gradient(y, x, output_gradients=G)))):
        rel = np.abs(got - ref) / np.abs(ref)
        assert np.max(rel) <= 1e-9, (name, np.max(rel))
    with acc:  # the JVP: J symmetric, the same product
        yj = ap.softmax(x, axis=-1)
    rel = np.abs(np.asarray(acc.jvp(yj)) - ref) / np.abs(ref)
    assert np.max(rel) <= 1e-9, ("jvp", np.max(rel))
    # the tape's backward pass as numpy code (the VJP recorded on Tensors): the same operations, the same bits
    # (softmax47: the clean-clone CI of session 46 found the code's textbook form 9.9e-17 off the tape's)
    w = ap.constant(G)
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(ap.softmax(x, axis=-1) * (w * x))
    src = tape.backward_source(y, x)
    assert "take_along_axis" in src.code, src.code
    assert np.array_equal(src.run(), tape.gradient(y, x).numpy()), src.code


def test_an_upstream_gradient_near_the_largest_float_does_not_overflow_in_the_shift():
    """verify46c F2: dY rows with entries of both signs near 1e308 (finite): g - g[argmax p] overflows to inf;
    the VJP then halves dY and doubles its result, and stays the exact one (session 46's shifted form: NaN)."""
    S = np.array([[0.5, 2.0, -1.0, 1.0, 0.0], [3.0, -2.0, 0.5, 1.0, 2.5], [0.1, 0.2, 0.3, 0.4, 0.5]])
    G = np.array([[1e308, -1e308, 1e308, 0.0, 0.0], [-1.7e308, 1.7e308, 0.5, -3.0, 1e300], [1.0, 2.0, 3.0, 4.0, 5.0]])
    ref = _exact_softmax_vjp(S, G)
    assert np.all(np.isfinite(ref))
    layer = mp.Softmax(axis=-1)
    layer.forward(S)
    x = ap.Variable(S)
    with ap.GradientTape() as tape:
        y = ap.softmax(x, axis=-1)
    for name, got in (("manualprop", layer.backward(G)),
                      ("autoprop", np.asarray(tape.gradient(y, x, output_gradients=G)))):
        assert np.all(np.isfinite(got)), (name, got)
        err = np.max(np.abs(got - ref), axis=-1) / np.max(np.abs(ref), axis=-1)
        assert np.max(err) <= 1e-14, (name, err)


def test_second_order_through_softmax_matches_autograd():
    """Nested tapes and forward-over-reverse record the softmax VJP itself (given Tensors): its Hessian-vector product
    equals HIPS autograd's (s46-leadm's numpy-only VJP raised TypeError on Tensor.argmax(keepdims=))."""
    agrad = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    rng = np.random.default_rng(0)
    x0, w, v = (rng.standard_normal((2, 4)) for _ in range(3))

    def f(x):
        e = anp.exp(x - anp.max(x, -1, keepdims=True))
        return anp.sum(e / anp.sum(e, -1, keepdims=True) * w)

    ref = agrad.grad(lambda x: anp.sum(agrad.grad(f)(x) * v))(x0)
    x = ap.Variable(x0)
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = ap.reduce_sum(ap.softmax(x, axis=-1) * w)
        z = ap.reduce_sum(inner.gradient(y, x) * v)
    with ap.ForwardAccumulator(x, ap.constant(v)) as acc:
        with ap.GradientTape() as tape:
            y2 = ap.reduce_sum(ap.softmax(x, axis=-1) * w)
        g2 = tape.gradient(y2, x)
    for name, got in (("nested tapes", outer.gradient(z, x)), ("forward-over-reverse", acc.jvp(g2))):
        assert np.max(np.abs(np.asarray(got) - ref)) <= 1e-14 * np.max(np.abs(ref)), name


def test_float32_softmax_vjp_on_a_long_row_sums_pairwise():
    """float32, rows of 1e5: within 4e-7 of the exact VJP of the same P (2e-7 here; a sequential row sum, einsum's: 1.5e-6)."""
    rng = np.random.default_rng(0)
    S, G = (rng.standard_normal((2, 100_000)).astype(np.float32) for _ in range(2))
    layer = mp.Softmax(axis=-1)
    x = ap.Variable(S)
    with ap.GradientTape() as tape:
        y = ap.softmax(x, axis=-1)
    for name, P, got in (("manualprop", layer.forward(S), lambda: layer.backward(G)),
                         ("autoprop", np.asarray(y), lambda: np.asarray(tape.gradient(y, x, output_gradients=G)))):
        P64 = P.astype(np.float64)
        ref = P64 * (G - (G * P64).sum(-1, keepdims=True))  # the exact VJP of this P (float32 products exact in float64)
        got = got()
        assert got.dtype == np.float32
        err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
        assert err <= 4e-7, (name, err)


def _textbook_vjp(p, g, axis=-1):
    """Lessons 33/34's softmax VJP: right, and cancelling on a saturated row (its round-off where the stable one gives 0)."""
    return p * (g - (g * p).sum(axis=axis, keepdims=True))


def test_a_textbook_attention_checked_against_manualprops_passes_at_large_inputs(monkeypatch):
    """softmax47/attn48: a right MultiHeadAttention with the textbook VJP differs from manualprop's at X - 1000 by its
    round-off (db_k 4.4e-11 where manualprop's is 0, dW_q 4.9e-8; atols 6.0e-13 and 1.4e-9) and FAILed; each
    gradient's atol there is now 4 eps |x|^2 times the scale of its kind (``shifted_roundoff``)."""
    import manualprop.attention as mpa
    from gradcheck import check_layer

    class Textbook(mp.MultiHeadAttention):
        def backward(self, dY):
            with monkeypatch.context() as m:
                m.setattr(mpa, "softmax_vjp", _textbook_vjp)
                return super().backward(dY)

    X = np.random.default_rng(0).standard_normal((3, 8, 16))
    ref = mp.MultiHeadAttention(16, 2, rng=np.random.default_rng(0))
    res = check_layer(Textbook(16, 2, rng=np.random.default_rng(0)), X, twin=None, reference=ref, seed=0, mode="fast")
    assert res.passed, [r.tensor for r in res.records if not r.passed]
    assert any(r.tensor == "db_k (X - 1000)" for r in res.records)  # compared there, not skipped
    # verify48a F1: the report states the atol each large-input row was compared with, not the check's own
    row = next(r for r in res.records if r.tensor == "dW_q (X - 1000)")
    used = row.comparisons[0].atol
    assert used > 100 * res.atol and res.atol_of("dW_q (X - 1000)") == used
    assert f"{used:.3g} (dW_q (X - 1000))" in res.atol_words()


#: a textbook MultiHeadAttention with one planted error: (where, what) -> the records that must FAIL
WRONG = {
    "dX off 1e-8 at large inputs": ["dX (X + 1000)", "dX (X - 1000)"],
    "dW_q off 1e-8 at large inputs": ["dW_q (X + 1000)", "dW_q (X - 1000)"],
    "db_k off 1e-8 at large inputs": ["db_k (X + 1000)", "db_k (X - 1000)"],
    "db_q sign": ["db_q"],
    "softmax VJP sign": ["dX", "dW_q", "dW_k", "db_q", "db_k"],
}


@pytest.mark.parametrize("bug", sorted(WRONG))
def test_a_wrong_attention_still_fails_against_the_reference(monkeypatch, bug):
    """attn48: the allowance at X +/- 1000 is 4 eps |x|^2 (8.9e-10) times the scale of each gradient's own kind, so an
    error of 1e-8 of that scale (dX's own largest |value|, the largest of the (E, E) weights' or the biases'
    gradients), planted only at large inputs (the layer right at the drawn input), FAILs there, in that tensor
    alone, also in db_k and dW_q, whose values there are about 0 (smfix47's single scale, dW_o's 1.1e4, let dX's
    pass). An error of 1e-8 of an entry's own size is below the check's rtol (1e-6) anywhere. A sign error FAILs at
    the drawn input. (A sign error in db_k alone is no bug: no output depends on b_k, its gradient is 0 at every
    input, exactly.)"""
    import manualprop.attention as mpa
    from gradcheck import check_layer

    class Wrong(mp.MultiHeadAttention):
        def forward(self, X, training=False):
            self.large = bool((np.abs(X) > 500).any())
            return super().forward(X, training)

        def backward(self, dY):
            vjp = ((lambda p, g, axis=-1: p * (g + (g * p).sum(axis=axis, keepdims=True)))
                   if bug == "softmax VJP sign" else _textbook_vjp)
            with monkeypatch.context() as m:
                m.setattr(mpa, "softmax_vjp", vjp)
                dX = super().backward(dY)
            if bug == "db_q sign":
                self.grads["b_q"] = -self.grads["b_q"]
            if self.large and bug.endswith("off 1e-8 at large inputs"):
                key = bug.split()[0][1:]
                t = dX if key == "X" else self.grads[key]
                kind = [dX] if key == "X" else [g for g in self.grads.values() if g.shape == t.shape]
                t += 1e-8 * max(np.max(np.abs(g)) for g in kind)
            return dX

    X = np.random.default_rng(0).standard_normal((3, 8, 16))
    ref = mp.MultiHeadAttention(16, 2, rng=np.random.default_rng(0))
    res = check_layer(Wrong(16, 2, rng=np.random.default_rng(0)), X, twin=None, reference=ref, seed=0, mode="fast")
    assert sorted(r.tensor for r in res.records if not r.passed) == sorted(WRONG[bug])


@pytest.mark.parametrize("off", [1e-6, 1e-8])
def test_a_softmax_off_only_at_large_inputs_still_fails_against_the_reference(off):
    """smfix47: the allowance at X +/- 1000 (4 eps |x|^2 S = 8.9e-10 S, S the largest |dX| there) leaves a finite error
    of ``off`` S there a FAIL (dX off by that much where the saturated rows' is about 0), on the shifted rows alone:
    the layer is right at the drawn input."""
    from gradcheck import check_layer

    class Off(mp.Softmax):
        def forward(self, X):
            self.large = bool((np.abs(X) > 500).any())
            return super().forward(X)

        def backward(self, dY):
            dX = super().backward(dY)
            return dX + off * np.max(np.abs(dX)) if self.large else dX

    X = np.random.default_rng(0).standard_normal((4, 10)) * 3
    res = check_layer(Off(axis=-1), X, twin=None, reference=mp.Softmax(axis=-1), seed=0, mode="fast")
    assert [r.tensor for r in res.records if not r.passed] == ["dX (X + 1000)", "dX (X - 1000)"]


def test_the_allowance_at_large_inputs_keeps_each_gradients_units():
    """attn48: ``shifted_roundoff`` scales an input gradient by its own largest value and a parameter gradient by the
    largest of its shape's (its kind), never by another kind's: dW = X^T dY at X ~ 1000 is |x| N times dX, and
    smfix47's one scale over all let a backward of central differences (dX 1e-6 off) pass."""
    from gradcheck._large_inputs import shifted_roundoff

    X = np.full((8, 5), 1000.0)
    grads = {"@X": np.full((8, 5), 2.0), "W": np.full((3, 5), -4e4), "b": np.full((3,), 8.0),
             "W2": np.zeros((3, 5)), "b2": np.zeros(3)}
    got = shifted_roundoff([X, np.arange(3)], grads)
    e = 4 * np.finfo(np.float64).eps * 1e6
    assert got == {"@X": e * 2.0, "W": e * 4e4, "b": e * 8.0, "W2": e * 4e4, "b2": e * 8.0}
    assert shifted_roundoff([np.arange(3)], grads) == {}
