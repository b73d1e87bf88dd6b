"""The tape's per-operation cost: record and reverse-walk microseconds of one primitive.

For each kind of operation a loop of 50 of them at 16x32 (float64) runs under a
``GradientTape`` (record), then ``tape.gradient`` walks them (walk); both are divided by 50
and the same arithmetic on plain arrays (the forward, and what the VJPs compute) is printed
beside them. Then one forward + backward of the LSTM, GRU and RNN twins (16->32, B16, T=8,
``train_step.py``'s nested rows) against manualprop, and the B16 MLP step of
``train_step.py`` against plain numpy. CPU time of the thread (``time.thread_time``),
medians of interleaved repeats: on a shared machine wall time measures the neighbours.

``--base REF`` runs the same rows on the autoprop of git revision ``REF`` too, in the same
process: ``git archive REF autoprop`` is unpacked into a temporary directory as the package
``autoprop_base`` (its imports of itself and the module names it tests renamed: ``load_base``), and the two trees'
steps alternate. Usage::

    python benchmarks/tape_ops.py                   # this tree
    python benchmarks/tape_ops.py --base main       # main and this tree, interleaved
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import manualprop as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _blas import blas_kernel, one_blas_thread  # noqa: E402  (benchmarks/ is no package)
from train_step import interleaved  # noqa: E402

N_OPS = 50
SHAPE = (16, 32)


def load_base(ref, packages=("autoprop",)):
    """The packages of git revision ``ref`` as ``<name>_base`` (``autoprop_base``, ...); returns the
    first one. Their imports of each other are renamed too: with ``("autoprop", "manualprop")`` the
    base autoprop runs on the base manualprop (``ab_step.py``); with autoprop alone, on this tree's."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tmp = tempfile.mkdtemp(prefix="autoprop_base_")
    tar = subprocess.run(["git", "-C", root, "archive", ref, *packages], check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=tar, check=True)
    for name in packages:
        os.rename(os.path.join(tmp, name), os.path.join(tmp, name + "_base"))
    # "import autoprop as ap", "from autoprop.x import", "import manualprop as mp", and the module
    # names the packages compare with (manualprop's "is this layer one of ours" test)
    renamed = re.compile(r"\b(import|from) (%s)\b|(?<=[\"'])(%s)(?=\.)" % (("|".join(packages),) * 2))
    for d, _, files in os.walk(tmp):
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(d, f)
                with open(p) as fh:
                    s = fh.read()
                t = renamed.sub(lambda m: f"{m.group(1)} {m.group(2)}_base" if m.group(1) else m.group(3) + "_base", s)
                if t != s:
                    with open(p, "w") as fh:
                        fh.write(t)
    sys.path.insert(0, tmp)
    for name in packages[1:]:
        importlib.import_module(name + "_base")
    return importlib.import_module(packages[0] + "_base")


def trees_of(base=None):
    """``[("this", autoprop)]``, with ``("base", the autoprop of git revision base)`` first when given (:func:`load_base`)."""
    import autoprop

    return [("base", load_base(base)), ("this", autoprop)] if base else [("this", autoprop)]


def medians(steps, repeats, warmup=5):
    """Median thread CPU seconds of each step, the steps alternating (``train_step.interleaved``)."""
    return interleaved(steps, repeats, warmup=warmup, clock=time.thread_time)


COPY = {}


def _copy_prim(ap):
    """A primitive with no arithmetic to speak of (a 4 KB copy, the VJP passes g on): what a
    record and a walk step cost beyond numpy. Not registered (no numpy name dispatches to it)."""
    R = importlib.import_module(ap.__name__ + ".core.registry")
    if ap.__name__ not in COPY:
        COPY[ap.__name__] = R.Primitive("bench_copy", lambda x: x.copy(), (lambda g, ans, x: g,),
                                        {}, reads=((),))
    return COPY[ap.__name__]


def op_steps(ap, kind):
    """(record, walk) step functions of 50 operations of ``kind`` on ``ap``."""
    R = importlib.import_module(ap.__name__ + ".core.registry")
    _copy_prim(ap)
    rng = np.random.default_rng(0)
    x = ap.constant(rng.standard_normal(SHAPE) * 0.1)
    w = ap.constant(rng.standard_normal(SHAPE))
    wide = ap.constant(rng.standard_normal((SHAPE[0], 4 * SHAPE[1])))
    G = np.ones(SHAPE)
    H = SHAPE[1]
    state = {}

    def forward():
        with ap.GradientTape() as tape:
            if kind == "tanh":
                tape.watch(x)
                y = x
                for _ in range(N_OPS):
                    y = R.tanh(y)
                outs = [y]
            elif kind == "multiply":
                tape.watch([x, w])
                y = x
                for _ in range(N_OPS):
                    y = y * w
                outs = [y]
            elif kind == "add":
                tape.watch([x, w])
                y = x
                for _ in range(N_OPS):
                    y = y + w
                outs = [y]
            elif kind == "copy":  # the machinery alone: a copy forward, the identity VJP
                tape.watch(x)
                y = x
                for _ in range(N_OPS):
                    y = COPY[ap.__name__](y)
                outs = [y]
            elif kind == "slice":
                tape.watch(wide)
                outs = [wide[:, (k % 4) * H:(k % 4 + 1) * H] for k in range(N_OPS)]
            else:
                raise ValueError(kind)
        state["tape"], state["outs"] = tape, outs

    def walk():
        tape, outs = state["tape"], state["outs"]
        src = wide if kind == "slice" else x
        tape.gradient(outs, src, output_gradients=[G] * len(outs))

    return forward, walk


def arithmetic(kind):
    """The numpy arithmetic of the 50 operations: the forward loop, and what the VJPs compute."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(SHAPE) * 0.1, rng.standard_normal(SHAPE)
    wide = rng.standard_normal((SHAPE[0], 4 * SHAPE[1]))
    g = np.ones(SHAPE)
    H = SHAPE[1]
    if kind == "tanh":
        ys = [x]
        for _ in range(N_OPS):
            ys.append(np.tanh(ys[-1]))

        def fwd():
            y = x
            for _ in range(N_OPS):
                y = np.tanh(y)

        def vjp():
            d = g
            for y in ys[:0:-1]:
                d = d * (1.0 - y * y)
        return fwd, vjp
    if kind == "multiply":
        ys = [x]
        for _ in range(N_OPS):
            ys.append(ys[-1] * w)

        def fwd():
            y = x
            for _ in range(N_OPS):
                y = y * w

        def vjp():
            d, dw = g, None
            for y in ys[-2::-1]:
                e = d * y
                dw = e if dw is None else dw + e
                d = d * w
        return fwd, vjp
    if kind == "copy":
        def fwd():
            y = x
            for _ in range(N_OPS):
                y = y.copy()
        return fwd, lambda: None
    if kind == "add":
        def fwd():
            y = x
            for _ in range(N_OPS):
                y = y + w

        def vjp():
            for _ in range(N_OPS):
                g + g
        return fwd, vjp

    def fwd():
        for k in range(N_OPS):
            wide[:, (k % 4) * H:(k % 4 + 1) * H]

    def vjp():
        buf = np.zeros_like(wide)
        for k in range(N_OPS):
            part = buf[:, (k % 4) * H:(k % 4 + 1) * H]
            np.add(part, g, out=part)
    return fwd, vjp


def _timed_pair(record, walk, times):
    """A step that runs ``record`` then ``walk`` and appends both CPU times to ``times`` (the
    walk uses the tape up, so no recorded tape lingers as a listener of the next ones)."""
    def step():
        t0 = time.thread_time()
        record()
        t1 = time.thread_time()
        walk()
        times.append((t1 - t0, time.thread_time() - t1))
    return step


def per_op(trees, repeats):
    print(f"per operation, {N_OPS} of a kind at {SHAPE[0]}x{SHAPE[1]}, CPU time (us)")
    names = [n for n, _ in trees]
    print(f"  {'op':<10}{'numpy fwd':>10}{'numpy vjp':>10}" + "".join(
        f"{n + ' rec':>12}{n + ' walk':>12}" for n in names))
    for kind in ("copy", "tanh", "multiply", "add", "slice"):
        fa, va = arithmetic(kind)
        split = [[] for _ in trees]  # per tree: (record, walk) seconds, the trees alternating
        fns = [fa, va] + [_timed_pair(*op_steps(ap, kind), split[j]) for j, (_, ap) in enumerate(trees)]
        ms = medians(fns, repeats)
        row = f"  {kind:<10}{ms[0] / N_OPS * 1e6:>10.2f}{ms[1] / N_OPS * 1e6:>10.2f}"
        for times in split:
            rec = statistics.median(r for r, _ in times)
            walk = statistics.median(w for _, w in times)
            row += f"{rec / N_OPS * 1e6:>12.2f}{walk / N_OPS * 1e6:>12.2f}"
        print(row)


def recurrent_steps(ap, kind):
    al = importlib.import_module(ap.__name__ + ".layers")
    rng = np.random.default_rng(0)
    Xs = rng.standard_normal((16, 8, 16))
    G = rng.standard_normal((16, 8, 32))
    xs = ap.constant(Xs)
    m, t = getattr(mp, kind)(16, 32, rng=0), getattr(al, kind)(16, 32)
    for k, v in t.variables.items():
        v.assign(m.params[k])
    vs = list(t.variables.values())

    def manual():
        m.forward(Xs, training=True)
        return m.backward(G)

    def tape_step():
        with ap.GradientTape() as tape:
            tape.watch(xs)
            out = t(xs, training=True)
        return tape.gradient(out, [xs] + vs, output_gradients=G)

    dX = manual()
    gs = tape_step()
    diff = max(float(np.max(np.abs(a - np.asarray(b.numpy()))))
               for a, b in zip([dX] + [m.grads[k] for k in t.variables], gs))
    assert diff < 1e-10, (kind, diff)
    return manual, tape_step


def mlp_steps(ap, sizes=(64, 32, 10), batch=16):
    """plain numpy's and autoprop's step of ``train_step.py`` (one SGD step of the MLP ``sizes`` on a
    batch of ``batch`` digits) on the autoprop module ``ap``: ``(plain step, autoprop step, autoprop's
    weights)``, the last a function that returns the Variables' values (``ab_step.py``)."""
    import train_step as ts

    al = importlib.import_module(ap.__name__ + ".layers")
    alo = importlib.import_module(ap.__name__ + ".losses")
    w0 = ts.initial_weights(sizes)
    X, y = ts.digits_batch(batch)
    net = al.Sequential(al.Linear(sizes[0], sizes[1]), al.Tanh(), al.Linear(sizes[1], sizes[2]))
    vs = net.trainable_variables
    for v, w in zip(vs, w0):
        v.assign(w)
    loss_fn, opt, Xt = alo.SoftmaxCrossEntropy(), ap.optimizers.SGD(learning_rate=ts.LR), ap.constant(X)

    def step():
        with ap.GradientTape() as tape:
            loss = loss_fn(y, net(Xt, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, vs), vs))

    return ts.PlainNumpy(w0, X.copy(), y.copy()).step, step, lambda: [v.numpy() for v in vs]


def whole_steps(trees, repeats):
    print("\nwhole steps, CPU time (us); ratio: tape / manualprop (recurrent), autoprop / plain numpy (MLP)")
    print(f"  {'step':<26}{'reference':>10}" + "".join(f"{n:>10}{'ratio':>7}" for n, _ in trees))
    for kind in ("LSTM", "GRU", "RNN"):
        fns = []
        for _, ap in trees:
            man, tp = recurrent_steps(ap, kind)
            fns += [man, tp]
        ms = medians(fns, repeats)
        ref = statistics.mean(ms[0::2])
        row = f"  {kind + ' 16->32 B16 T=8':<26}{ref * 1e6:>10.1f}"
        for j in range(len(trees)):
            row += f"{ms[2 * j + 1] * 1e6:>10.1f}{ms[2 * j + 1] / ms[2 * j]:>7.2f}"
        print(row)
    fns = []
    for _, ap in trees:
        plain, step, _ = mlp_steps(ap)
        fns += [plain, step]
    ms = medians(fns, repeats * 4)
    row = f"  {'MLP 64-32-10 B16':<26}{statistics.mean(ms[0::2]) * 1e6:>10.1f}"
    for j in range(len(trees)):
        row += f"{ms[2 * j + 1] * 1e6:>10.1f}{ms[2 * j + 1] / ms[2 * j]:>7.2f}"
    print(row)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="also time the autoprop of this git revision (A/B)")
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--skip-ops", action="store_true")
    parser.add_argument("--skip-steps", action="store_true")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    trees = trees_of(args.base)
    with one_blas_thread():
        print(f"BLAS: {blas_kernel()}")
        if not args.skip_ops:
            per_op(trees, args.repeats)
        if not args.skip_steps:
            whole_steps(trees, args.repeats)


if __name__ == "__main__":
    main()
