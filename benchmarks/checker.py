"""Time gradcheck's numerical modes on a Conv2D and a Linear (and torch.autograd.gradcheck if importable).

Layers (float64):

* ``manualprop.Conv2D(8, 16, 3, padding=1)`` on ``X`` of shape 4x8x16x16:
  8,192 input + 1,152 weight + 16 bias = 9,360 elements;
* ``manualprop.Linear(32, 64)`` at batch 16: 512 + 2,048 + 64 = 2,624 elements.

For each, ``gradcheck.check_layer`` (manual vs numerical, no tape column) is timed
in ``full``, ``fast`` and ``sample`` mode (median of ``--repeats`` runs, after one
warm-up), and the full mode once more with the input scan forced through the
element loop (``batched=False``) to show what the vectorisation buys. When
``torch`` is importable, ``torch.autograd.gradcheck`` runs on the same layer
(``torch.nn.functional.conv2d`` / ``linear`` with the same weights, float64);
torch is not a dependency, so the import is guarded.

How the full mode is fast: a layer whose samples do not interact (probed with
:func:`gradcheck.numerical.batch_independent`) gets its input gradient from
perturbed copies of the batch stacked along axis 0, one forward call per chunk of
about 131k input elements: exactly the element-by-element central differences
(same steps, same quotients), in ~1/60 of the Python calls. Parameters are still
perturbed one element at a time (2 forwards per element). Targets of issue 5:
full mode <= 3.8 s on the Conv2D (a tenth of torch.autograd.gradcheck's 38 s
measured on the development machine), fast mode < 50 ms.

Usage::

    python benchmarks/checker.py
    python benchmarks/checker.py --repeats 5 --skip-loop
    python benchmarks/checker.py --clock cpu      # CPU time: on a machine other jobs share
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import manualprop as mp
from gradcheck import check_layer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _blas import blas_kernel, one_blas_thread  # noqa: E402  (benchmarks/ is no package)

#: The rounding error of a central difference grows with the number of terms in L
#: (about u |L| / h): for the Conv2D's 16,384 output elements it reaches 8e-9, above the
#: default atol of 1e-9 (sized for the zoo's small layers), so the benchmark uses 1e-7.
ATOL = 1e-7

TARGET_FULL_CONV = 3.8
TARGET_FAST = 0.050


#: The clock of :func:`_time`: wall time (``perf_counter``), or with ``--clock cpu`` this process's CPU time
#: (``process_time``), which other processes on a shared machine inflate far less.
CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = time.perf_counter


def _time(fn, repeats: int) -> float:
    fn()  # warm-up
    ts = []
    for _ in range(repeats):
        t = _clock()
        fn()
        ts.append(_clock() - t)
    return statistics.median(ts)


def _torch_time(kind: str, layer, X: np.ndarray) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)  # as numpy's BLAS (one_blas_thread)
    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    W = torch.tensor(layer.params["W"], dtype=torch.float64, requires_grad=True)
    b = torch.tensor(layer.params["b"], dtype=torch.float64, requires_grad=True)
    if kind == "conv":
        def f(x, W, b):
            return torch.nn.functional.conv2d(x, W, b, padding=1)
    else:
        def f(x, W, b):
            return torch.nn.functional.linear(x, W, b)
    t = time.perf_counter()
    ok = torch.autograd.gradcheck(f, (x, W, b), eps=1e-6, atol=1e-5)
    dt = time.perf_counter() - t
    assert ok
    return dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-loop", action="store_true", help="skip the element-loop comparison run")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall",
                    help="wall time (default) or this process's CPU time (a loaded, shared machine)")
    args = ap.parse_args(argv)
    global _clock
    _clock = CLOCK[args.clock]
    with one_blas_thread():
        return _table(args)


def _table(args) -> int:
    print(f"BLAS: {blas_kernel()}; float64; medians of {args.repeats} runs ({args.clock} clock)")
    rng = np.random.default_rng(0)
    cases = [
        ("conv", "Conv2D(8->16, 3x3, pad 1) on 4x8x16x16", mp.Conv2D(8, 16, 3, padding=1, rng=0),
         rng.standard_normal((4, 8, 16, 16))),
        ("linear", "Linear(32->64) at batch 16", mp.Linear(32, 64, rng=0), rng.standard_normal((16, 32))),
    ]
    print(f"{'layer':40s} {'elements':>8s} {'full':>9s} {'fast':>9s} {'sample':>9s} {'full, loop':>11s} "
          f"{'torch gradcheck':>16s}")
    ok = True
    for kind, label, layer, X in cases:
        n = X.size + sum(p.size for p in layer.params.values())
        res = check_layer(layer, X, twin=None, atol=ATOL, mode="full")
        assert res.passed, res.table()
        t_full = _time(lambda layer=layer, X=X: check_layer(layer, X, twin=None, atol=ATOL, mode="full"), args.repeats)
        t_fast = _time(lambda layer=layer, X=X: check_layer(layer, X, twin=None, atol=ATOL, mode="fast"), max(args.repeats, 5))
        t_sample = _time(lambda layer=layer, X=X: check_layer(layer, X, twin=None, atol=ATOL, mode="sample"), max(args.repeats, 5))
        t_loop = None if args.skip_loop else _time(
            lambda layer=layer, X=X: check_layer(layer, X, twin=None, atol=ATOL, mode="full", batched=False), 1)
        t_torch = _torch_time(kind, layer, X)
        loop = "-" if t_loop is None else f"{t_loop:10.3f}s"
        torch_s = "torch not installed" if t_torch is None else f"{t_torch:15.3f}s"
        print(f"{label:40s} {n:8d} {t_full:8.3f}s {t_fast * 1e3:7.1f}ms {t_sample * 1e3:7.1f}ms {loop:>11s} "
              f"{torch_s:>16s}")
        if kind == "conv":
            ok &= t_full <= TARGET_FULL_CONV and t_fast < TARGET_FAST
            print(f"{'':40s} targets: full <= {TARGET_FULL_CONV} s: {'met' if t_full <= TARGET_FULL_CONV else 'MISSED'}"
                  f"; fast < {TARGET_FAST * 1e3:.0f} ms: {'met' if t_fast < TARGET_FAST else 'MISSED'}")
    print("full, loop: full mode with the input scan forced through the element loop (batched=False), to show what "
          "stacking perturbed copies of the batch buys")
    if not ok:
        print(f"exit 1: a target above was MISSED (full <= {TARGET_FULL_CONV} s and fast < {TARGET_FAST * 1e3:.0f} ms on "
              "the Conv2D); on a machine other jobs share, --clock cpu times this process's CPU only")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
