# ruff: noqa: E402, E701, E702, E731, B023  (a case script: sys.path set first, terse probes)
"""Helpers for corpus38's cases: load upstream files, flatten parameter trees, compare gradients."""
import importlib.util

import numpy as onp


def load(path, name, np_module=None):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    if np_module is not None:
        m.np = np_module
    return m

def leaves(tree, out=None, path=()):
    out = [] if out is None else out
    if isinstance(tree, dict):
        for k in tree: leaves(tree[k], out, path + (k,))
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree): leaves(v, out, path + (i,))
    else:
        out.append((path, tree))
    return out

def rebuild(tree, vals, it=None):
    it = iter(vals) if it is None else it
    if isinstance(tree, dict): return {k: rebuild(v, vals, it) for k, v in tree.items()}
    if isinstance(tree, list): return [rebuild(v, vals, it) for v in tree]
    if isinstance(tree, tuple): return tuple(rebuild(v, vals, it) for v in tree)
    return next(it)

def central(f, arrays, h=1e-6):
    """central differences of scalar f(list of arrays) w.r.t. each array, float64."""
    grads = []
    for i, a in enumerate(arrays):
        g = onp.zeros_like(a, dtype=float)
        for idx in onp.ndindex(a.shape):
            ap_, am = [x.copy() for x in arrays], [x.copy() for x in arrays]
            ap_[i][idx] += h; am[i][idx] -= h
            g[idx] = (f(ap_) - f(am)) / (2 * h)
        grads.append(g)
    return grads

def relerr(a, b):
    a, b = onp.asarray(a, float), onp.asarray(b, float)
    return float(onp.max(onp.abs(a - b)) / max(1e-12, onp.max(onp.abs(a) + onp.abs(b))))

def compare(label, f_ap, f_ag, f_np, arrays, G=None, names=None):
    """Run f under autoprop (Variables), autograd and central differences of sum(f * G); print one line per array."""
    import warnings

    import autograd
    import autograd.numpy as anp

    import autoprop as ap
    names = names or [f'a{i}' for i in range(len(arrays))]
    out0 = onp.asarray(f_np(*[a.copy() for a in arrays]))
    G = onp.random.default_rng(1).normal(size=out0.shape) if G is None else G
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        try:
            vs = [ap.Variable(a.copy(), name=n) for a, n in zip(arrays, names)]
            with ap.GradientTape() as tape:
                y = onp.sum(f_ap(*vs) * G)
            got = tape.gradient(y, vs)
            got = [None if t is None else t.numpy() for t in got]
            err = None
        except Exception as e:
            err = e
    for ww in w: print(f'  [{label}] warning {ww.category.__name__}: {str(ww.message)[:400]}')
    try:
        ref = autograd.grad(lambda as_: anp.sum(f_ag(*as_) * G))([a.copy() for a in arrays])
    except Exception as e:
        print(f'  [{label}] (autograd cannot run it: {type(e).__name__}: {str(e)[:120]})')
        ref = None
    num = central(lambda as_: float(onp.sum(onp.asarray(f_np(*as_)) * G)), [a.copy() for a in arrays])
    if err is not None:
        print(f'  [{label}] autoprop ERROR {type(err).__name__}: {str(err)[:1500]}')
        return None
    res = []
    ref = ref if ref is not None else [onp.full_like(c, onp.nan) for c in num]
    for n, a, r, c in zip(names, got, ref, num):
        if a is None:
            print(f'  [{label}] {n}: autoprop gave None; autograd~central {relerr(r, c):.1e}'); res.append(None); continue
        e1, e2, e3 = relerr(a, r), relerr(a, c), relerr(r, c)
        print(f'  [{label}] {n:8s} ap~autograd {e1:.1e} ap~central {e2:.1e} autograd~central {e3:.1e}')
        res.append((e1, e2, e3))
    return res
