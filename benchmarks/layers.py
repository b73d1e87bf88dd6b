"""Time forward + backward of single layers: manual vs tape (and PyTorch CPU if importable).

For every entry of :data:`ENTRIES` the manual step (``forward`` + ``backward``) and the
tape step (the twin under a ``GradientTape``, then ``gradient`` w.r.t. the input and
every variable, with the same random upstream gradient) run interleaved in one process
on the same data and the same initial parameters; the medians and the ratio
tape/manual are printed. When ``torch`` is importable the same layer in PyTorch
(float64, ``torch.set_num_threads(1)``) is timed too; numpy's BLAS runs one thread
(``_blas.one_blas_thread``), as torch's, and the kernel is printed. Usage::

    python benchmarks/layers.py                  # every entry
    python benchmarks/layers.py --only Conv2D --repeats 50

Adding a layer family is one :class:`Entry` in :data:`ENTRIES` (a name, the input
shape, a builder returning ``(manual_layer, tape_twin)``, optionally a PyTorch builder
and a target ratio). Targets of the layer zoo issue: tape/manual <= 1.3 for Conv2D on
32x3x32x32 with 16 3x3 filters and for BatchNorm2D on 32x16x32x32.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import autoprop as ap
import manualprop as mp
from autoprop import layers as al

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _blas import blas_kernel, one_blas_thread  # noqa: E402  (benchmarks/ is no package)
from train_step import interleaved  # noqa: E402

try:  # optional: PyTorch CPU as a reference point
    import torch
except ImportError:  # torch is not a dependency
    torch = None


@dataclass
class Entry:
    """One timed layer.

    Attributes
    ----------
    name : str
        Shown in the table (may carry a variant, e.g. ``"BatchNorm2D (train)"``).
    input_shape : tuple of int
    build : callable
        ``build(seed) -> (manual_layer, tape_twin)`` with the same initial parameters.
    training : bool
        Passed to ``forward`` / ``__call__``.
    torch_build : callable, optional
        ``torch_build(manual_layer) -> torch.nn.Module`` with the same parameters
        (only called when torch is importable).
    target : float, optional
        Target ratio tape/manual, printed next to the measurement.
    """

    name: str
    input_shape: tuple
    build: Callable[[int], tuple[Any, Any]]
    training: bool = False
    torch_build: Callable[[Any], Any] | None = None
    target: float | None = None


def _twins(cls_name, *args, **kwargs):
    def build(seed):
        kw = dict(kwargs)
        if "rng" in kw:
            kw["rng"] = seed
        return getattr(mp, cls_name)(*args, **kw), getattr(al, cls_name)(*args, **kw)

    return build


def _torch_conv(layer):
    m = torch.nn.Conv2d(layer.in_channels, layer.out_channels, layer.kernel_size, layer.stride,
                        layer.padding, layer.dilation, bias=layer.bias).double()
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(layer.params["W"]))
        if layer.bias:
            m.bias.copy_(torch.from_numpy(layer.params["b"]))
    return m


def _torch_bn2d(layer):
    return torch.nn.BatchNorm2d(layer.num_features, eps=layer.eps, momentum=layer.momentum).double()


def _torch_simple(factory):
    return lambda layer: factory(layer).double()


#: The timed layers; append an Entry per layer family.
ENTRIES: list[Entry] = [
    Entry("Conv2D 3->16 3x3 pad 1", (32, 3, 32, 32), _twins("Conv2D", 3, 16, 3, padding=1, rng=0),
          torch_build=_torch_conv, target=1.3),
    Entry("BatchNorm2D (train)", (32, 16, 32, 32), _twins("BatchNorm2D", 16), training=True,
          torch_build=_torch_bn2d, target=1.3),
    Entry("BatchNorm2D (infer)", (32, 16, 32, 32), _twins("BatchNorm2D", 16), training=False,
          torch_build=_torch_bn2d),
    Entry("MaxPool2D 2x2", (32, 16, 32, 32), _twins("MaxPool2D", 2),
          torch_build=_torch_simple(lambda layer: torch.nn.MaxPool2d(layer.kernel_size))),
    Entry("AvgPool2D 2x2", (32, 16, 32, 32), _twins("AvgPool2D", 2),
          torch_build=_torch_simple(lambda layer: torch.nn.AvgPool2d(layer.kernel_size))),
    Entry("BatchNorm1D (train)", (256, 512), _twins("BatchNorm1D", 512), training=True,
          torch_build=lambda layer: torch.nn.BatchNorm1d(layer.num_features).double()),
    Entry("LayerNorm 512", (256, 512), _twins("LayerNorm", 512),
          torch_build=lambda layer: torch.nn.LayerNorm(layer.normalized_shape).double()),
    Entry("Dropout p=0.5 (train)", (256, 512), _twins("Dropout", 0.5, rng=0), training=True,
          torch_build=_torch_simple(lambda layer: torch.nn.Dropout(layer.p))),
    # sequence / attention (tests/test_zoo_seq.py, tests/test_zoo_attention.py). Embedding
    # (integer input) and ScaledDotProductAttention (three inputs) need a harness that
    # builds non-float / several inputs; MultiHeadAttention times the latter inside.
    Entry("RNN 32->64, T=50", (32, 50, 32), _twins("RNN", 32, 64, rng=0)),
    Entry("LSTM 32->64, T=50", (32, 50, 32), _twins("LSTM", 32, 64, rng=0)),
    Entry("MultiHeadAttention 64/4", (32, 50, 64), _twins("MultiHeadAttention", 64, 4, rng=0)),
    Entry("MultiHeadAttention causal", (32, 50, 64),
          _twins("MultiHeadAttention", 64, 4, causal=True, rng=0)),
]


def time_entry(entry: Entry, repeats: int, warmup: int = 3, seed: int = 0):
    """Median seconds of (manual, tape, torch or None) for one entry, interleaved (``train_step.interleaved``)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(entry.input_shape)
    manual, twin = entry.build(seed)
    Y = manual.forward(X, training=entry.training)
    G = rng.standard_normal(Y.shape)
    x = ap.constant(X)
    variables = list(getattr(twin, "variables", {}).values())
    training = entry.training

    def manual_step():
        manual.forward(X, training=training)
        manual.backward(G)

    def tape_step():
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = twin(x, training=training)
        tape.gradient(y, [x] + variables, output_gradients=G)

    steps = [manual_step, tape_step]
    if torch is not None and entry.torch_build is not None:
        torch.set_num_threads(1)
        module = entry.torch_build(manual)
        module.train(training)
        tx = torch.from_numpy(X.copy()).requires_grad_(True)
        tG = torch.from_numpy(G)

        def torch_step():
            module.zero_grad(set_to_none=True)
            tx.grad = None
            module(tx).backward(tG)

        steps.append(torch_step)
    meds = interleaved(steps, repeats, warmup=warmup, clock=time.perf_counter)
    return meds[0], meds[1], (meds[2] if len(meds) > 2 else None)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--only", default=None, help="run the entries whose name contains this text")
    args = parser.parse_args(argv)
    with one_blas_thread():
        _table(args)


def _table(args):
    print(f"numpy {np.__version__}; BLAS: {blas_kernel()}; "
          f"torch: {'%s (1 thread, float64)' % torch.__version__ if torch else 'not installed'}")
    head = f"{'layer':<26}{'input':>18}{'manual (ms)':>13}{'tape (ms)':>11}{'tape/manual':>13}{'target':>8}"
    print(head + (f"{'torch (ms)':>12}" if torch else ""))
    for entry in ENTRIES:
        if args.only and args.only not in entry.name:
            continue
        tm, tt, tp = time_entry(entry, args.repeats)
        shape = "x".join(map(str, entry.input_shape))
        target = f"{entry.target:.1f}" if entry.target else "-"
        row = f"{entry.name:<26}{shape:>18}{tm * 1e3:>13.2f}{tt * 1e3:>11.2f}{tt / tm:>13.2f}{target:>8}"
        if torch:
            row += f"{tp * 1e3:>12.2f}" if tp is not None else f"{'-':>12}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
