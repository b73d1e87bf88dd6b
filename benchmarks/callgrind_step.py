"""One step of ``train_step.py``/``tape_ops.py``, repeated inside ``functools.reduce`` for callgrind.

Instruction counts do not depend on the machine's load (docs/speed.md, sessions 10-16)::

    OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=functools_reduce --callgrind-out-file=cg.out \\
        python benchmarks/callgrind_step.py lstm tape
    callgrind_annotate cg.out | grep "PROGRAM TOTALS"     # divide by the printed step count

``KIND``: ``rnn``, ``lstm``, ``gru`` (16->32, B16, T=8, forward + backward; 10 steps after 3)
or ``mlp64``, ``mlp16`` (one SGD step at 64-256-10 B64, 64-32-10 B16; 20 steps after 5).
``ENGINE``: ``tape`` (autoprop), ``manual`` (manualprop) or, for the MLPs, ``plain`` (numpy) and
``manualdicts`` (manualprop stepping with ``opt.step(net.params, net.grads)``, not ``opt.step(net)``).
Count with ``--collect-atstart=no``: only the steps inside ``reduce`` are counted.
(callgrind counts each iteration of a ``rep stosb`` as an instruction: ``memset``'s count is
about the bytes zeroed, mostly OpenBLAS zeroing a product's output, which costs far less time.)
"""

from __future__ import annotations

import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tape_ops  # noqa: E402  (benchmarks/ is no package)
import train_step as ts  # noqa: E402

import autoprop as ap  # noqa: E402


def step_of(kind, engine):
    """``(step, count, warm-ups)`` for ``kind`` and ``engine`` (see the module docstring)."""
    if kind in ("rnn", "lstm", "gru"):
        manual, tape = tape_ops.recurrent_steps(ap, kind.upper())
        return {"tape": tape, "manual": manual}[engine], 10, 3
    batch, sizes = {"mlp64": (64, (64, 256, 10)), "mlp16": (16, (64, 32, 10))}[kind]
    X, y = ts.digits_batch(batch)
    cls = {"tape": ts.Autoprop, "manual": ts.Manualprop, "manualdicts": ts.ManualpropDicts,
           "plain": ts.PlainNumpy}[engine]
    return cls(ts.initial_weights(sizes), X, y).step, 20, 5


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    kind, engine = argv[0], argv[1] if len(argv) > 1 else "tape"
    step, n, warm = step_of(kind, engine)
    for _ in range(warm):
        step()
    functools.reduce(lambda a, _: step(), range(n), None)
    print(f"{kind} {engine}: {n} steps counted")


if __name__ == "__main__":
    main()
