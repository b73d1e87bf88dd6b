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
from tests.more_samples import SAMPLES19 as _MORE
from tests.poly29_cases import SAMPLES29 as _POLY29
from tests.primitive_samples import FUNCTION_SAMPLES, SAMPLES, F

W = 0.6 - 0.8j  # the weight of the real part in the loss


def _z(m, x):
    # complex inputs away from the real axis, where log, sqrt and the inverse functions cut
    return x * (1 + 0.3j) + 0.7j


#: records whose complex outputs (eigenvectors, singular vectors) are defined up to a phase each:
#: scanned with a loss of |p|^2 alone there (Re(p W) depends on the phase, which is refused)
PHASES = {"eigh", "eig", "svd"}


def _loss(m, out, phases=False):
    parts = out if isinstance(out, (list, tuple)) else [out]
    total = 0.0
    for p in parts:
        kind = getattr(p, "dtype", np.dtype(int)).kind
        if kind in "fc":
            total = total + 0.5 * m.sum(m.abs(p) ** 2)
            if not (phases and kind == "c"):
                total = total + m.sum(m.real(p * W))
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


def classify(apply_tape, apply_np, apply_ag, xs, phases=False):
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
                    loss = _loss(np, out, phases)
            grads = t.gradient(loss, vs)
            tangent = acc.jvp(loss)
    except (TypeError, ValueError) as exc:
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
    num = _central(lambda *ys: _loss(np, apply_np([_z(np, y) for y in ys]), phases), xs)
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
    return classify(lambda zs: prim(*fill(zs), **kwargs), lambda zs: prim.fwd(*fill(zs), **kwargs), None, xs,
                    phases=name in PHASES)


class _Both:
    """autoprop.numpy's names, numpy's for the rest (as tests/test_autoprop_vocabulary.py)."""

    def __getattr__(self, name):
        return getattr(apn, name) if hasattr(apn, name) else getattr(np, name)


# every composite that tests/primitive_samples.py's FUNCTION_SAMPLES does not name, on complex
# inputs (``a.real`` in a lambda: a real input beside complex ones); test_autoprop_complex.py
# asserts that each name of registry.COMPOSITES has a sample here or there.
_SP, _np = scipy.special, np  # (autoprop.numpy.linalg lacks the array-API names: numpy's dispatch)
COMPOSITE_SAMPLES = {
    "vector_norm": F(lambda np, a: np.linalg.vector_norm(a, ord=3, axis=1), (2, 3), autograd=False),
    # overlapping windows of each row (numpy's own function on arrays, the recorded gather on Tensors)
    "as_strided": F(lambda np, a: apn.lib.stride_tricks.as_strided(a, (2, 2, 2), (a.strides[0], a.strides[1],
                                                                                   a.strides[1])) * 1.0,
                    (2, 3), autograd=False),
    "matrix_norm": F(lambda np, a: np.linalg.matrix_norm(a), (2, 3), autograd=False),
    "var": F(lambda np, a: np.var(a, axis=0, ddof=1), (3, 2), autograd=False),
    "std": F(lambda np, a: np.std(a), (3, 2), autograd=False),
    "ravel": F(lambda np, a: np.ravel(a) * 2.0, (2, 3), autograd=False),
    "moveaxis": F(lambda np, a: np.moveaxis(a, 0, -1), (2, 3, 2), autograd=False),
    "split": F(lambda np, a: np.split(a, 2, axis=1)[1], (2, 4), autograd=False),
    "take": F(lambda np, a: np.take(a, [2, 0, 2], axis=1), (2, 3), autograd=False),
    "tril": F(lambda np, a: np.tril(a, -1) + np.triu(a, 1) * 2.0, (3, 3), autograd=False),
    "triu": F(lambda np, a: np.triu(a), (3, 4), autograd=False),
    "copy": F(lambda np, a: np.copy(a) * a, (3,), autograd=False),
    "outer": F(lambda np, a, b: np.outer(a, b), (3,), (2,), autograd=False),
    "dot": F(lambda np, a, b: np.dot(a, b), (2, 3), (3,), autograd=False),
    "dot_mixed": F(lambda np, a, b: np.dot(a.real, b), (2, 3), (3, 2), autograd=False),
    "matrix_power": F(lambda np, a: np.linalg.matrix_power(a, 3), (2, 2), autograd=False),
    "multi_dot": F(lambda np, a, b, c: np.linalg.multi_dot([a, b, c]), (2, 3), (3, 2), (2,),
                   autograd=False),
    "lstsq": F(lambda np, a, b: np.linalg.lstsq(a, b)[0], (3, 2), (3,), autograd=False),
    "fabs": F(lambda np, a: np.fabs(a), (3,), autograd=False),
    "deg2rad": F(lambda np, a: np.deg2rad(a) + np.radians(a), (3,), autograd=False),
    "rad2deg": F(lambda np, a: np.rad2deg(a) + np.degrees(a), (3,), autograd=False),
    "radians": F(lambda np, a: np.radians(a), (3,), autograd=False),
    "degrees": F(lambda np, a: np.degrees(a), (3,), autograd=False),
    "real_if_close": F(lambda np, a: np.real_if_close(a), (3,), autograd=False),
    "expit": F(lambda np, a: _SP.expit(a), (3,), autograd=False),
    "flipud": F(lambda np, a: np.flipud(a), (3, 2), autograd=False),
    "rollaxis": F(lambda np, a: np.rollaxis(a, 2), (2, 3, 2), autograd=False),
    "atleast_1d": F(lambda np, a: np.atleast_1d(a) * np.atleast_2d(a), (3,), autograd=False),
    "atleast_2d": F(lambda np, a: np.atleast_2d(a), (3,), autograd=False),
    "convolve": F(lambda np, a, v: np.convolve(a, v, mode="same"), (5,), (3,), autograd=False),
    "convolve_short": F(lambda np, a, v: np.convolve(a, v), (2,), (4,), autograd=False),
    "convolve_mixed": F(lambda np, a, v: np.convolve(a.real, v, mode="valid"), (4,), (2,), autograd=False),
    "correlate": F(lambda np, a, v: np.correlate(a, v), (5,), (3,), autograd=False),
    "correlate_full": F(lambda np, a, v: np.correlate(a, v, mode="full"), (4,), (3,), autograd=False),
    "correlate_same": F(lambda np, a, v: np.correlate(a, v, mode="same"), (4,), (3,), autograd=False),
    "correlate_short": F(lambda np, a, v: np.correlate(a, v, mode="full"), (2,), (4,), autograd=False),
    "correlate_real_a": F(lambda np, a, v: np.correlate(a.real, v, mode="same"), (4,), (3,), autograd=False),
    "correlate_real_v": F(lambda np, a, v: np.correlate(a, v.real, mode="full"), (4,), (3,), autograd=False),
    "nanmean": F(lambda np, a: np.nanmean(a, axis=0), (3, 2), autograd=False),
    "nanmin": F(lambda np, a: np.nanmin(a, axis=0), (3, 2), autograd=False),
    "array_api_vecdot": F(lambda np, a, b: np.vecdot(a, b), (2, 3), (3,), autograd=False),
    "array_api_vecdot_mixed": F(lambda np, a, b: np.vecdot(a.real, b), (2, 3), (3,), autograd=False),
    "array_api_matrix_transpose": F(lambda np, a: np.matrix_transpose(a), (2, 3), autograd=False),
    "array_api_matvec": F(lambda np, a, b: np.matvec(a, b), (2, 3), (3,), autograd=False),
    "array_api_vecmat": F(lambda np, a, b: np.vecmat(a, b), (3,), (3, 2), autograd=False),
    "array_api_linalg_vecdot": F(lambda np, a, b: _np.linalg.vecdot(a, b), (2, 3), (3,), autograd=False),
    "array_api_linalg_matrix_transpose": F(lambda np, a: _np.linalg.matrix_transpose(a), (2, 3),
                                           autograd=False),
    "array_api_linalg_trace": F(lambda np, a: _np.linalg.trace(a), (2, 3, 3), autograd=False),
    "array_api_linalg_diagonal": F(lambda np, a: _np.linalg.diagonal(a), (2, 3), autograd=False),
    "array_api_linalg_outer": F(lambda np, a, b: _np.linalg.outer(a, b), (3,), (2,), autograd=False),
    "array_api_linalg_cross": F(lambda np, a, b: _np.linalg.cross(a, b), (2, 3), (3,), autograd=False),
    "array_api_linalg_matmul": F(lambda np, a, b: _np.linalg.matmul(a, b), (2, 3), (3, 2), autograd=False),
    "array_api_linalg_tensordot": F(lambda np, a, b: _np.linalg.tensordot(a, b, axes=1), (2, 3), (3,),
                                    autograd=False),
    "tensorsolve": F(lambda np, a, b: np.linalg.tensorsolve(a, b), (2, 2, 4), (2, 2), autograd=False),
    "tensorinv": F(lambda np, a: np.linalg.tensorinv(a, ind=1), (4, 2, 2), autograd=False),
    "eigvalsh": F(lambda np, a: np.linalg.eigvalsh(a + np.conj(np.swapaxes(a, -1, -2))), (3, 3),
                  autograd=False),
    "eigvals": F(lambda np, a: np.sum(_np.linalg.eigvals(a) ** 2), (2, 2), autograd=False),
    "trapezoid": F(lambda np, a, x: np.trapezoid(a, x.real), (4,), (4,), autograd=False),
    "polyval": F(lambda np, p, x: np.polyval(p, x), (3,), (4,), autograd=False),
    "quantile": F(lambda np, a: np.quantile(a, 0.3), (5,), autograd=False),
    "percentile": F(lambda np, a: np.percentile(a, 40), (5,), autograd=False),
    "apply_along_axis": F(lambda np, a: np.apply_along_axis(lambda r: r * r[0], 1, a), (2, 3), autograd=False),
    "float_power": F(lambda np, a, b: np.float_power(a, b), (3,), (3,), autograd=False),
    "float_power_real_exponent": F(lambda np, a, b: np.float_power(a, b.real), (3,), (3,), autograd=False),
    "fftshift": F(lambda np, a: np.fft.fftshift(a) + np.fft.ifftshift(a), (2, 3), autograd=False),
    "ifftshift": F(lambda np, a: np.fft.ifftshift(a, axes=1), (2, 3), autograd=False),
}
COMPOSITE_SAMPLES.update(_MORE)  # (tests/more_samples.py: session 19's names)
COMPOSITE_SAMPLES.update(_POLY29)  # (tests/poly29_cases.py: polynomial.py's names)


def scan_function(name, rng):
    f = FUNCTION_SAMPLES[name] if name in FUNCTION_SAMPLES else COMPOSITE_SAMPLES[name]
    xs = f.make(rng)
    tape_ns, np_ns = (aps, scipy.special) if name == "scipy_special" else (_Both(), np)
    return classify(lambda zs: f.fn(tape_ns, *zs), lambda zs: f.fn(np_ns, *zs),
                    (lambda zs: f.fn(anp, *zs)) if f.autograd and name != "scipy_special" else None, xs)


def scan():
    rng = np.random.default_rng(1)
    rows = [("primitive", n, *scan_primitive(n, rng)) for n in sorted(SAMPLES)]
    rows += [("function", n, *scan_function(n, rng)) for n in sorted(FUNCTION_SAMPLES)]
    rows += [("composite", n, *scan_function(n, rng)) for n in sorted(COMPOSITE_SAMPLES)]
    return rows


if __name__ == "__main__":
    from collections import Counter

    rows = scan()
    for kind, name, verdict, detail in rows:
        print(f"{kind:9s} {name:32s} {verdict:22s} {detail}")
    print(Counter(v for _, _, v, _ in rows))
