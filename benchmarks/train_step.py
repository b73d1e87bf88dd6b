"""Time one training step (forward + backward + SGD update), manual vs tape.

The two steps run interleaved in one process on the same data and the same initial
weights, so the ratio tape/manual is measured side by side. Usage::

    python benchmarks/train_step.py            # both sizes of the issue
    python benchmarks/train_step.py --repeats 2000

Targets: tape/manual <= 1.3 for 64-256-10 at batch 64, <= 2.5 for 64-32-10 at
batch 16 (where per-operation overhead dominates).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import autoprop as ap
import manualprop as mp
from autoprop import layers as al
from autoprop import losses as alo


def build(sizes, seed):
    manual = mp.Sequential(mp.Linear(sizes[0], sizes[1], rng=seed), mp.Tanh(),
                           mp.Linear(sizes[1], sizes[2], rng=seed + 1))
    tape = al.Sequential(al.Linear(sizes[0], sizes[1], rng=seed), al.Tanh(),
                         al.Linear(sizes[1], sizes[2], rng=seed + 1))
    return manual, tape


def run(sizes, batch, repeats, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((batch, sizes[0]))
    y = rng.integers(0, sizes[2], size=batch)
    manual, tape_model = build(sizes, seed)
    m_loss, t_loss = mp.SoftmaxCrossEntropy(), alo.SoftmaxCrossEntropy()
    m_opt, t_opt = mp.SGD(learning_rate=1e-3), ap.optimizers.SGD(learning_rate=1e-3)
    Xt = ap.constant(X)

    def manual_step():
        logits = manual.forward(X, training=True)
        m_loss.forward(y, logits)
        manual.backward(m_loss.backward())
        m_opt.step(manual.params, manual.grads)

    def tape_step():
        with ap.GradientTape() as tape:
            logits = tape_model(Xt, training=True)
            loss = t_loss(y, logits)
        variables = tape_model.trainable_variables
        grads = tape.gradient(loss, variables)
        t_opt.apply_gradients(zip(grads, variables))

    for _ in range(50):  # warm-up
        manual_step()
        tape_step()
    tm, tt = [], []
    clock = time.perf_counter
    for _ in range(repeats):
        t0 = clock()
        manual_step()
        t1 = clock()
        tape_step()
        t2 = clock()
        tm.append(t1 - t0)
        tt.append(t2 - t1)
    mm, mt = statistics.median(tm), statistics.median(tt)
    return mm, mt


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1000)
    args = parser.parse_args(argv)
    print(f"{'network':<12}{'batch':>6}{'manual (us)':>14}{'tape (us)':>12}{'tape/manual':>13}{'target':>8}")
    for sizes, batch, target in (((64, 256, 10), 64, 1.3), ((64, 32, 10), 16, 2.5)):
        mm, mt = run(sizes, batch, args.repeats)
        ratio = mt / mm
        verdict = "ok" if ratio <= target else "MISS"
        print(f"{'-'.join(map(str, sizes)):<12}{batch:>6}{mm * 1e6:>14.1f}{mt * 1e6:>12.1f}"
              f"{ratio:>13.2f}{'<=' + str(target):>8}  {verdict}")
    print("medians of interleaved steps; other load on the machine moves both columns "
          "(compare ratios from one run, not across runs)")


if __name__ == "__main__":
    main()
