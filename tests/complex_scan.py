"""Every primitive and every composite of tests/primitive_samples.py on complex inputs:
agrees with numpy (value), HIPS autograd (where it has the function) and central
differences (gradient, and ForwardAccumulator's tangent), or is refused with a TypeError
that says complex; anything else is ``wrong`` (a silently wrong number) or ``error``
(another exception). Run ``python -m tests.complex_scan`` for the table; used by
tests/test_autoprop_complex.py."""

from __future__ import annotations

import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import scipy.special

import autoprop as ap
import autoprop.numpy as apn
from autoprop.core.registry import PRIMITIVES
from autoprop.scipy import special as aps
from tests.primitive_samples import FUNCTION_SAMPLES, SAMPLES

W = 0.6 - 0.8j  # the weight of the real part in the loss


def _z(m, x):
    # complex inputs away from the real axis, where log, sqrt and the inverse functions cut
    return x * (1 + 0.3j) + 0.7j


def _loss(m, out):
    parts = out if isinstance(out, (list, tuple)) else [out]
    total = 0.0
    for p in parts:
        if getattr(p, "dtype", np.dtype(int)).kind in "fc":
            total = total + 0.5 * m.sum(m.abs(p) ** 2) + m.sum(m.real(p * W))
    return total


def _close(a, b, rtol=1e-5, atol=1e-7):
    return np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=False)


def _central(f, xs, h=1e-6):
    out = []
    for k, x in enumerate(xs):
        d = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[i] = h
            up = [y + e if j == k else y for j, y in enumerate(xs)]
            dn = [y - e if j == k else y for j, y in enumerate(xs)]
            d[i] = (f(*up) - f(*dn)) / (2 * h)
        out.append(d)
    return out


def classify(apply_tape, apply_np, apply_ag, xs):
    """``(verdict, detail)`` for a function of the complex inputs ``_z(x)`` of real ``xs``:
    ``apply_tape(zs)`` on Tensors, ``apply_np(zs)`` on ndarrays (numpy's value),
    ``apply_ag(zs)`` under autograd (None: autograd lacks it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ref = apply_np([_z(np, x) for x in xs])
        except Exception as exc:  # noqa: BLE001 - numpy itself refuses complex input
            if "autoprop" in str(exc) and "complex" in str(exc):
                return "refused", str(exc)[:90]
            return "numpy refuses", type(exc).__name__
    vs = [ap.Variable(x) for x in xs]
    u = [np.cos(np.arange(x.size)).reshape(x.shape) for x in xs]
    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            with ap.GradientTape() as t:
                with ap.ForwardAccumulator(vs, u) as acc:
                    out = apply_tape([_z(np, v) for v in vs])
                    loss = _loss(np, out)
            grads = t.gradient(loss, vs)
            tangent = acc.jvp(loss)
    except TypeError as exc:
        if "complex" in str(exc):
            return "refused", str(exc)[:90]
        return "error", f"TypeError: {str(exc)[:90]}"
    except Exception as exc:  # noqa: BLE001
        return "error", f"{type(exc).__name__}: {str(exc)[:90]}"
    if warned:
        return "warned", f"{warned[0].category.__name__}: {str(warned[0].message)[:80]}"
    parts = out if isinstance(out, (list, tuple)) else [out]
    refs = ref if isinstance(ref, (list, tuple)) else [ref]
    if not all(_close(p.numpy(), r, 1e-9, 1e-12) for p, r in zip(parts, refs)):
        return "wrong", "value differs from numpy's"
    grads = [np.zeros_like(x) if g is None else g.numpy() for g, x in zip(grads, xs)]
    num = _central(lambda *ys: _loss(np, apply_np([_z(np, y) for y in ys])), xs)
    if not all(_close(g, n) for g, n in zip(grads, num)):
        return "wrong", "gradient differs from central differences"
    jv = 0.0 if tangent is None else float(tangent.numpy())
    if not _close(jv, sum(float(np.sum(g * d)) for g, d in zip(grads, u)), 1e-8, 1e-10):
        return "wrong", "ForwardAccumulator's tangent differs from the gradient"
    if apply_ag is not None:
        try:
            ag = autograd.grad(lambda *ys: _loss(anp, apply_ag([_z(anp, y) for y in ys])),
                               argnum=tuple(range(len(xs))))(*xs)
        except Exception as exc:  # noqa: BLE001
            return "agree (autograd fails)", f"{type(exc).__name__}"
        if not all(_close(g, a, 1e-8, 1e-10) for g, a in zip(grads, ag)):
            return "agree (autograd differs)", "central differences agree with autoprop, not autograd"
        return "agree", "numpy, autograd, central differences"
    return "agree", "numpy, central differences"


def scan_primitive(name, rng):
    s = SAMPLES[name]
    args, kwargs = s.make(rng)
    pos = [i for i, a in enumerate(s.args) if isinstance(a, tuple)
           or isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not pos:
        return "no float input", ""
    prim = PRIMITIVES[name]

    def fill(zs):
        full = list(args)
        for i, z in zip(pos, zs):
            full[i] = z
        return full
    xs = [args[i] for i in pos]
    return classify(lambda zs: prim(*fill(zs), **kwargs), lambda zs: prim.fwd(*fill(zs), **kwargs), None, xs)


class _Both:
    """autoprop.numpy's names, numpy's for the rest (as tests/test_autoprop_vocabulary.py)."""

    def __getattr__(self, name):
        return getattr(apn, name) if hasattr(apn, name) else getattr(np, name)


def scan_function(name, rng):
    f = FUNCTION_SAMPLES[name]
    xs = f.make(rng)
    tape_ns, np_ns = (aps, scipy.special) if name == "scipy_special" else (_Both(), np)
    return classify(lambda zs: f.fn(tape_ns, *zs), lambda zs: f.fn(np_ns, *zs),
                    (lambda zs: f.fn(anp, *zs)) if f.autograd and name != "scipy_special" else None, xs)


def scan():
    rng = np.random.default_rng(1)
    rows = [("primitive", n, *scan_primitive(n, rng)) for n in sorted(SAMPLES)]
    rows += [("function", n, *scan_function(n, rng)) for n in sorted(FUNCTION_SAMPLES)]
    return rows


if __name__ == "__main__":
    from collections import Counter

    rows = scan()
    for kind, name, verdict, detail in rows:
        print(f"{kind:9s} {name:32s} {verdict:22s} {detail}")
    print(Counter(v for _, _, v, _ in rows))
