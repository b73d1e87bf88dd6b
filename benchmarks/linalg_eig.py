"""Batched eigenvalue gradients: ``np.linalg.eigvals`` forward + ``tape.gradient`` on stacks of small matrices.

The eig rule bounds each eigenvalue's derivative with LAPACK's rounding model (``linalg_eig.lapack_coupling``:
gebal matrix by matrix, the rest batched since session 33; before, a Python loop of gebal twice and the bound per
matrix: review32 measured (2000, 3, 3) at 0.18-0.24 s against 0.01 s for the forward). Rows: the gradient of
``sum(Re(w)^2)`` (record + walk) beside numpy's ``eig`` of the same stack (the last row: 2000 matrices with a
Jordan block beside a simple eigenvalue, where every eigenvalue gets the second look, ``resolvent_bound``), thread CPU seconds, medians of
interleaved repeats, one BLAS thread. ``--base REF`` times git revision REF's autoprop too (tape_ops.load_base).
Usage::

    python benchmarks/linalg_eig.py
    python benchmarks/linalg_eig.py --base main --repeats 20
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _blas import blas_kernel, one_blas_thread  # noqa: E402  (benchmarks/ is no package)
from tape_ops import medians, trees_of  # noqa: E402

SHAPES = [(2000, 3, 3), (200, 3, 3), (200, 8, 8), (20, 30, 30)]
JORDAN = np.array([[2.0, 1.0, 0.3], [0.0, 2.0, 0.7], [0.0, 0.0, 5.0]])  # (the second look on every eigenvalue)


def stacks(rng):
    """``(label, stack)`` rows: random stacks of each shape, then 2000 copies of a Jordan block beside 5."""
    for shape in SHAPES:
        yield str(shape), rng.standard_normal(shape)
    yield "2000 x Jordan", np.tile(JORDAN, (2000, 1, 1))


def grad_step(ap, a):
    """One forward + gradient of ``sum(Re(eigvals(A))^2)`` on the stack ``a``."""

    def step():
        t = ap.Variable(a)
        with ap.GradientTape() as tape:
            y = np.sum(np.real(np.linalg.eigvals(t)) ** 2)
        tape.gradient(y, t)

    return step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="also time the autoprop of this git revision (A/B)")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    trees = trees_of(args.base)
    rng = np.random.default_rng(0)
    with one_blas_thread():
        print(f"BLAS: {blas_kernel()}")
        print(f"{'stack':>14s} {'numpy eig':>10s} " + " ".join(f"{name + ' grad':>11s}" for name, _ in trees))
        for label, a in stacks(rng):
            steps = [lambda a=a: np.linalg.eig(a)] + [grad_step(ap, a) for _, ap in trees]
            times = medians(steps, args.repeats, warmup=2)
            print(f"{label:>14s} {times[0]:10.4f} " + " ".join(f"{t:11.4f}" for t in times[1:]))


if __name__ == "__main__":
    main()
