"""review38's independent checks of numbers session 37 introduced (HIPS autograd, central differences, scipy).

Run from /work/wt/review38: .venv/bin/python review38/oracles.py
"""
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout: tests' oracles

import autograd
import autograd.numpy as anp
import numpy as np
from scipy import stats

import autoprop as ap
import manualprop as mp
from autoprop.core import registry as R
from manualprop._extremes import sech2
from tests.oracles import central
from tests.test_autoprop_rnn_tanh import _ref as rnn_ref


def oracle_rnn_bias_grads_not_aliased():
    """rnn_tanh's db_ih and db_hh (one sum, then a copy) when b_ih is also used elsewhere on the tape: each bias's
    gradient against autograd."""
    rng = np.random.default_rng(4)
    args = [rng.standard_normal((3, 5, 2)), np.tanh(rng.standard_normal((3, 4))), rng.standard_normal((4, 2)),
            rng.standard_normal((4, 4)) / 2, rng.standard_normal(4) / 3, rng.standard_normal(4) / 3]
    G, c = rng.standard_normal((3, 5, 4)), rng.standard_normal(4)
    ts = [ap.constant(a) for a in args]
    with ap.GradientTape() as tape:
        tape.watch(ts)
        L = ap.reduce_sum(R.rnn_tanh(*ts) * G) + ap.reduce_sum(ts[4] * c) + ap.reduce_sum(ts[5] * ts[5])
    got = tape.gradient(L, ts)
    f = lambda *a: anp.sum(rnn_ref(*a) * G) + anp.sum(a[4] * c) + anp.sum(a[5] * a[5])  # noqa: E731
    worst = 0.0
    for i in range(6):
        want = autograd.grad(f, argnum=i)(*args)
        num = central(lambda v, i=i: float(f(*(args[:i] + [v] + args[i + 1:]))), args[i], h=1e-6)
        worst = max(worst, float(np.max(np.abs(got[i].numpy() - want) / (np.abs(want) + 1e-12))))
        assert np.allclose(got[i].numpy(), want, rtol=1e-12, atol=1e-14), (i, got[i].numpy(), want)
        assert np.allclose(num, want, rtol=1e-6, atol=1e-8)
    # b_ih == b_hh passed as one tensor: its gradient is the two sums added
    b = ap.constant(args[4])
    with ap.GradientTape() as tape:
        tape.watch(b)
        L = ap.reduce_sum(R.rnn_tanh(*[ap.constant(a) for a in args[:4]], b, b) * G)
    want = autograd.grad(lambda v: anp.sum(rnn_ref(*args[:4], v, v) * G))(args[4])
    assert np.allclose(tape.gradient(L, b).numpy(), want, rtol=1e-12, atol=1e-14)
    print(f"rnn_tanh 6 gradients with b_ih, b_hh reused: max rel diff vs autograd {worst:.1e}; shared bias OK")


def oracle_rnn_float32_bias_promotion():
    """float32 x/W with float64 biases: numpy's promotion (a + b_ih + b_hh) vs the record."""
    rng = np.random.default_rng(2)
    args = [rng.standard_normal((2, 3, 2)).astype(np.float32), np.zeros((2, 4), np.float32),
            rng.standard_normal((4, 2)).astype(np.float32), (rng.standard_normal((4, 4)) / 2).astype(np.float32),
            rng.standard_normal(4), rng.standard_normal(4)]
    y = R.rnn_tanh(*[ap.constant(a) for a in args]).numpy()
    want = rnn_ref(*args)
    print(f"rnn_tanh float32 x with float64 biases: dtype {y.dtype} (numpy's {want.dtype}), max abs diff "
          f"{np.max(np.abs(y - want)):.1e}")
    assert y.dtype == want.dtype


def oracle_sech2():
    """sech2 against autograd's tanh derivative and a high-precision value from log-space (no cancellation)."""
    x = np.concatenate([np.linspace(-30, 30, 601), [-709.0, 709.0, 711.0, -711.0, 0.0]])
    d = autograd.elementwise_grad(anp.tanh)(x)
    # 4 e^{-2|x|} / (1 + e^{-2|x|})^2, exact-ish in float64 for every |x|
    e = np.exp(-2 * np.abs(x))
    ref = 4 * e / (1 + e) ** 2
    s = sech2(x)
    rel = np.abs(s - ref) / np.where(ref > 0, ref, 1)
    print(f"sech2 vs 4e^-2|x|/(1+e^-2|x|)^2 over [-30, 30] and +-709..711: max rel {rel.max():.1e}; "
          f"autograd's 1-tanh^2 at x=20: {d[np.argmin(np.abs(x - 20))]:.3e}, sech2: {s[np.argmin(np.abs(x - 20))]:.3e}")
    assert rel.max() < 1e-14
    assert float(sech2(np.float64(20.0))) == s[np.argmin(np.abs(x - 20))]


def oracle_random_mean_calibration(trials=300):
    """The z statistic of gradcheck._random_mean for a correct inverted dropout against manualprop.Dropout: should
    be about N(0, 1) (the 6-SE threshold then errs with probability 2 * norm.sf(6) = 2e-9)."""
    from gradcheck._random_mean import ENTRIES, SAMPLES, SIGMAS, _mean_ratio

    out = {}
    for p, shape in ((0.5, (6, 5)), (0.3, (6, 5)), (0.5, (4, 3, 5, 5))):
        zs = []
        rest = shape[1:]
        n = max(shape[0], -(-ENTRIES // int(np.prod(rest))), SAMPLES)
        for s in range(trials):
            X = np.random.default_rng([s, 37]).uniform(0.5, 1.5, (n, *rest))
            if len(shape) == 2:
                a, b = mp.Dropout(p, rng=s), mp.Dropout(p, rng=10_000 + s)
                ya, yb = a.forward(X.copy(), training=True), b.forward(X.copy(), training=True)
            else:  # spatial dropout: one mask per sample and channel, inverted
                r = np.random.default_rng(s)
                ya = X * (r.random((n, rest[0], 1, 1)) >= p) / (1 - p)
                yb = X * (r.random((n, rest[0], 1, 1)) >= p) / (1 - p)
            g, w = _mean_ratio(ya, X), _mean_ratio(yb, X)
            zs.append((g[0] - w[0]) / np.hypot(g[1], w[1]))
        zs = np.array(zs)
        ks = stats.kstest(zs, "norm")
        out[(p, shape)] = (zs.std(), np.abs(zs).max(), ks.pvalue)
        print(f"random mean z, correct dropout p={p} shape {shape}: std {zs.std():.3f}, max |z| {np.abs(zs).max():.2f}, "
              f"KS p-value vs N(0,1) {ks.pvalue:.3f} ({trials} trials)")
    print(f"P(|Z| > {SIGMAS:g}) = {2 * stats.norm.sf(SIGMAS):.2e} (the module says about 2e-9)")
    return out


def oracle_random_mean_power():
    """What the 6-SE threshold can see: the smallest scale error of an inverted dropout at p = 0.5 detected, from the
    SE (SE of each mean at p = 0.5 is sqrt(p/(1-p)/N) = 1/sqrt(4000))."""
    se = np.hypot(*[np.sqrt(0.5 / 0.5 / 4000)] * 2)
    print(f"p=0.5, 4000 entries: SE of the difference {se:.4f}; a scale error of {6 * se:.3f} (x{1 + 6 * se:.3f}) "
          "is found half the time at 6 SE (about x1.2, 9 SE, nearly always)")


def oracle_positional_out_values():
    """np.<func>(tensor, positional options with out=None) against numpy's value and autograd's gradient."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    for name, args, kw_ag in (("max", (0, None, True), dict(axis=0, keepdims=True)),
                              ("sum", (1, None, None, True), dict(axis=1, keepdims=True)),
                              ("mean", (0, None, None, True), dict(axis=0, keepdims=True)),
                              ("prod", (None, None, None, False), dict()),
                              ("cumsum", (1, None, None), dict(axis=1))):
        t = ap.constant(a)
        with ap.GradientTape() as tape:
            tape.watch(t)
            y = getattr(np, name)(t, *args)
        want = getattr(np, name)(a, *args)
        G = rng.standard_normal(np.shape(want))
        g = tape.gradient(y, t, output_gradients=G).numpy()
        ag = autograd.grad(lambda v, name=name, kw_ag=kw_ag, G=G: anp.sum(getattr(anp, name)(v, **kw_ag) * G))(a)
        assert np.shape(y.numpy()) == np.shape(want) and np.allclose(y.numpy(), want, rtol=1e-14), name
        assert np.allclose(g, ag, rtol=1e-12, atol=1e-14), (name, g, ag)
    # the masked write np.maximum(x, y, out, where=m): numpy's value; gradient by central differences
    x, z, buf, m = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal(5), rng.random(5) > 0.4
    import autoprop.numpy as anpx
    xt = ap.constant(x)
    with ap.GradientTape() as tape:
        tape.watch(xt)
        y = anpx.maximum(xt, z, ap.constant(buf.copy()), where=m)
    want = np.maximum(x, z, buf.copy(), where=m)
    G = rng.standard_normal(5)
    g = tape.gradient(y, xt, output_gradients=G).numpy()
    num = central(lambda v: float(np.sum(np.maximum(v, z, buf.copy(), where=m) * G)), x, h=1e-6)
    print(f"positional options with out=None (max, sum, mean, prod, cumsum): values = numpy's, VJPs = autograd's; "
          f"masked write maximum(x, z, out, where=m): value diff {np.max(np.abs(y.numpy() - want)):.1e}, "
          f"grad vs central {np.max(np.abs(g - num)):.1e}")
    assert np.allclose(y.numpy(), want) and np.allclose(g, num, atol=1e-8)


def oracle_weight_decay_exclusion():
    """SGD(momentum) + decoupled decay with one array excluded by name in step(): against Keras's formula by hand
    (keras/src/optimizers/base_optimizer.py _apply_weight_decay: v -= v * wd * lr, then the step)."""
    P = {"l1.W": np.array([[1.0, -2.0], [0.5, 3.0]]), "l1.b": np.array([1.0, 2.0])}
    Gs = [{"l1.W": np.array([[0.1, 0.2], [-0.3, 0.4]]), "l1.b": np.array([0.5, -0.5])} for _ in range(3)]
    opt = mp.optim.SGD(learning_rate=0.1, momentum=0.9, weight_decay=0.01)
    opt.exclude_from_weight_decay(var_names=[r"\.b$"])
    want = {k: v.copy() for k, v in P.items()}
    vel = {k: np.zeros_like(v) for k, v in P.items()}
    for g in Gs:
        opt.step(P, g)
        for k in want:
            if k != "l1.b":
                want[k] = want[k] - want[k] * 0.01 * 0.1
            vel[k] = 0.9 * vel[k] - 0.1 * g[k]
            want[k] = want[k] + vel[k]
    diff = max(float(np.max(np.abs(P[k] - want[k]))) for k in P)
    print(f"SGD(momentum=0.9, wd=0.01) 3 steps, l1.b excluded by name: max diff vs Keras's formula {diff:.1e}")
    assert diff < 1e-14


if __name__ == "__main__":
    warnings.simplefilter("default")
    oracle_sech2()
    oracle_rnn_bias_grads_not_aliased()
    oracle_rnn_float32_bias_promotion()
    oracle_positional_out_values()
    oracle_weight_decay_exclusion()
    oracle_random_mean_power()
    oracle_random_mean_calibration()
