"""A/B of one training step: manualprop and autoprop of a git revision beside this tree's, in one process.

``train_step.py``'s MLP steps (a tanh MLP with softmax cross-entropy on digits, one SGD step, 64-32-10
B16 and 64-256-10 B64) of both tracks, for the packages of ``--base REF`` (``git archive`` unpacked as
``manualprop_base`` and ``autoprop_base``, ``tape_ops.load_base``) and of this tree, with plain numpy
beside them: five engines, a new seeded order each repeat (``train_step.interleaved``), medians. A
change of a few percent is lost between two whole-benchmark runs on a shared machine; here both trees
run the same minute, behind the same neighbours. Two identical trees read within about 1% of each
other (session 30). At the end both trees' weights must be the same bits (a change that moves a
number is reported, exit 1). No peers: their steps between ours move every ratio (docs/speed.md,
session 30). Usage::

    python benchmarks/ab_step.py --base main                 # wall clock, 2,000 repeats
    python benchmarks/ab_step.py --base main --clock cpu     # this thread's CPU time
    python benchmarks/ab_step.py --base main --clock cpu --block 10   # turns of 10 steps, as train_step.py
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _blas import blas_kernel, one_blas_thread  # noqa: E402  (benchmarks/ is no package)
from tape_ops import load_base, mlp_steps  # noqa: E402
from train_step import CLOCK, LR, PlainNumpy, digits_batch, initial_weights, interleaved  # noqa: E402

KEYS = ("0.W", "0.b", "2.W", "2.b")


def manual_step(mp, w0, X, y):
    """``train_step.Manualprop``'s step on the manualprop module ``mp``; returns (step, weights)."""
    s = (w0[0].shape[1], w0[0].shape[0], w0[2].shape[0])
    net = mp.Sequential(mp.Linear(s[0], s[1]), mp.Tanh(), mp.Linear(s[1], s[2]))
    for k, w in zip(KEYS, w0):
        net.params[k][...] = w
    loss, opt = mp.SoftmaxCrossEntropy(), mp.SGD(learning_rate=LR)

    def step():
        value = loss.forward(y, net.forward(X, training=True))
        net.backward(loss.backward(), input_grad=False)
        opt.step(net)
        return value

    return step, lambda: [net.params[k] for k in KEYS]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the git revision to compare with (main, HEAD~1, ...)")
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    parser.add_argument("--block", type=int, default=1,
                        help="steps of one engine a turn, the first untimed (train_step.py's --block; default 1: "
                             "one timed step a turn, each after another engine's)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    import autoprop
    import manualprop

    load_base(args.base, ("autoprop", "manualprop"))
    trees = {"base": (sys.modules["manualprop_base"], sys.modules["autoprop_base"]), "this": (manualprop, autoprop)}
    differ = []
    with one_blas_thread():
        print(f"BLAS: {blas_kernel()}; medians of {args.repeats} interleaved steps ({args.clock} clock, turns of "
              f"{args.block}); base: {args.base}")
        print(f"  {'step':<16}{'plain numpy':>12}{'manual base':>13}{'this':>9}{'this/base':>11}"
              f"{'auto base':>11}{'this':>9}{'this/base':>11}   (ratios to plain numpy)")
        for sizes, batch in (((64, 32, 10), 16), ((64, 256, 10), 64)):
            X, y = digits_batch(batch)
            w0 = initial_weights(sizes)
            engines = {"plain": (PlainNumpy(w0, X, y).step, None)}
            for tree, (mp, ap) in trees.items():
                engines[f"manual {tree}"] = manual_step(mp, w0, X, y)
                engines[f"auto {tree}"] = mlp_steps(ap, sizes, batch)[1:]  # (tape_ops' autoprop step)
            med = dict(zip(engines, interleaved([f for f, _ in engines.values()], args.repeats,
                                                clock=CLOCK[args.clock], block=args.block)))
            for track in ("manual", "auto"):
                a, b = engines[f"{track} base"][1](), engines[f"{track} this"][1]()
                if not all(np.array_equal(p, q) for p, q in zip(a, b)):
                    differ.append(f"{track} B{batch}")
            p = med["plain"]
            row = f"  {'-'.join(map(str, sizes)) + f' B{batch}':<16}{p * 1e6:>9.1f} us"
            for track in ("manual", "auto"):
                base, this = med[f"{track} base"], med[f"{track} this"]
                row += f"{base / p:>13.3f}{this / p:>9.3f}{this / base:>11.3f}"
            print(row)
    if differ:
        print(f"the two trees' weights differ after the same steps ({', '.join(differ)}): a change moved a number")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
