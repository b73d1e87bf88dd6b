"""Time one training step: plain numpy, manualprop, autoprop and (when installed) their peers.

Issue 15's benchmark. One step is forward + softmax cross-entropy + backward + SGD update
of a tanh MLP on scikit-learn's digits (float64, 1 BLAS thread). Every engine starts from
the same data and the same weights; before any timing, one step of each is checked against
the plain-numpy step (updated weights and loss within 1e-10). The steps then run
interleaved in one process (each engine on its own copy of the weights) and the medians
are compared as ratios to plain numpy, which is written as hand-made functions with no
layer objects. Each engine's turn is ``--block`` steps back to back (default 10, the first untimed:
it pays for the previous engine's caches, see :func:`interleaved`). Usage::

    python benchmarks/train_step.py                  # the table, the CNN/LSTM and memory lines
    python benchmarks/train_step.py --repeats 2000
    python benchmarks/train_step.py --profile        # also the cProfile breakdown of one step
    python benchmarks/train_step.py --peers torch,autograd   # peers without jax
    python benchmarks/train_step.py --block 1        # one timed step a turn (before session 36)

``autoprop.function`` (session 38) is autoprop's step traced once and replayed (``ap.function``,
``tf.function``'s counterpart): its row has autoprop's targets; the memory lines add the
forward values its replay holds.

Peers (torch eager, HIPS autograd, jax.jit) are optional: ``make bench-peers`` installs
them into their own environment (``.venv-peers``) and runs this script there; without
them their rows say "not installed". HIPS autograd is in the test extra, so it is
usually there.

Targets (issue 15): manualprop <= 1.10x plain numpy at 64-256-10 B64 and <= 1.5x at
64-32-10 B16; autoprop <= 1.10x and <= 2.5x and below torch eager's ratio of the same
run; autoprop <= 1.3x manualprop on the CNN of ``gradcheck train --model cnn`` and on one
LSTM step (and one RNN step, the same target); the bytes the tape saves
(``tape.summary()``) <= 1.2x manualprop's caches (MLP, CNN, LSTM and RNN).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import re
import statistics
import sys
import time

# jax reads its thread settings at import: one intra-op thread, as BLAS below.
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _blas import blas_kernel, one_blas_thread  # noqa: E402  (benchmarks/ is no package)

import autoprop as ap  # noqa: E402
import manualprop as mp  # noqa: E402
from autoprop import layers as al  # noqa: E402
from autoprop import losses as alo  # noqa: E402

LR = 0.05
AGREE = 1e-10
SIZES = (((64, 256, 10), 64, 1.10, 1.10), ((64, 32, 10), 16, 1.5, 2.5))  # sizes, batch, manual, auto
NESTED_TARGET = 1.3  # autoprop / manualprop on the CNN and the LSTM (and RNN) step
MEMORY_TARGET = 1.2  # tape bytes (parameters not counted) / manualprop cache bytes
BLOCK = 10  # --block's default: steps of one engine a turn (interleaved), the first untimed


# ---------------------------------------------------------------------------- data and weights
def digits_batch(batch, seed=0):
    """The first ``batch`` images of a fixed shuffle of digits: X (batch, 64) in [0, 1], y (batch,)."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(seed).permutation(len(X))[:batch]
    return np.ascontiguousarray(X[idx] / 16.0), y[idx].astype(np.int64)


def initial_weights(sizes, seed=0):
    """[W1, b1, W2, b2], W as (out, in), from manualprop's Linear initialisation."""
    net = mp.Sequential(mp.Linear(sizes[0], sizes[1], rng=seed), mp.Tanh(),
                        mp.Linear(sizes[1], sizes[2], rng=seed + 1))
    return [net.params[k].copy() for k in ("0.W", "0.b", "2.W", "2.b")]


# ---------------------------------------------------------------------------- plain numpy
def np_forward(params, X, y):
    """Loss and the values the backward pass reads (the seed's style: functions, no objects)."""
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1.T + b1)
    z = h @ W2.T + b2
    shifted = z - z.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    n = len(y)
    loss = -(shifted[np.arange(n), y] - np.log(s[:, 0])).mean()
    return loss, (X, h, e / s)


def np_backward(params, y, saved):
    """[dW1, db1, dW2, db2] of the mean cross-entropy."""
    W1, b1, W2, b2 = params
    X, h, p = saved
    dz = p.copy()
    dz[np.arange(len(y)), y] -= 1.0
    dz /= len(y)
    dh = dz @ W2
    da = dh * (1.0 - h * h)
    return [da.T @ X, da.sum(axis=0), dz.T @ h, dz.sum(axis=0)]


class PlainNumpy:
    name = "plain numpy"

    def __init__(self, weights, X, y):
        self.p, self.X, self.y = [w.copy() for w in weights], X, y

    def step(self):
        loss, saved = np_forward(self.p, self.X, self.y)
        for p, g in zip(self.p, np_backward(self.p, self.y, saved)):
            p -= LR * g
        return loss

    def weights(self):
        return self.p


# ---------------------------------------------------------------------------- our two tracks
class Manualprop:
    name = "manualprop"

    def __init__(self, weights, X, y):
        s = (weights[0].shape[1], weights[0].shape[0], weights[2].shape[0])
        self.net = mp.Sequential(mp.Linear(s[0], s[1]), mp.Tanh(), mp.Linear(s[1], s[2]))
        for k, w in zip(("0.W", "0.b", "2.W", "2.b"), weights):
            self.net.params[k][...] = w
        self.loss, self.opt, self.X, self.y = mp.SoftmaxCrossEntropy(), mp.SGD(learning_rate=LR), X, y

    def step(self):
        net = self.net
        loss = self.loss.forward(self.y, net.forward(self.X, training=True))
        net.backward(self.loss.backward(), input_grad=False)  # X is data, as in every peer
        self.opt.step(net)  # = step(net.params, net.grads) without the two flat dicts (as fit does)
        return loss

    def weights(self):
        return [self.net.params[k] for k in ("0.W", "0.b", "2.W", "2.b")]


class ManualpropDicts(Manualprop):
    """manualprop's step as the lessons write it: ``opt.step(net.params, net.grads)``."""

    name = "manualprop (step(params, grads))"

    def step(self):
        net = self.net
        loss = self.loss.forward(self.y, net.forward(self.X, training=True))
        net.backward(self.loss.backward(), input_grad=False)
        self.opt.step(net.params, net.grads)
        return loss


class Autoprop:
    name = "autoprop"

    def __init__(self, weights, X, y):
        s = (weights[0].shape[1], weights[0].shape[0], weights[2].shape[0])
        self.net = al.Sequential(al.Linear(s[0], s[1]), al.Tanh(), al.Linear(s[1], s[2]))
        self.vars = self.net.trainable_variables
        for v, w in zip(self.vars, weights):
            v.assign(w)
        self.loss, self.opt = alo.SoftmaxCrossEntropy(), ap.optimizers.SGD(learning_rate=LR)
        self.X, self.y = ap.constant(X), y

    def step(self):
        with ap.GradientTape() as tape:
            loss = self.loss(self.y, self.net(self.X, training=True))
        grads = tape.gradient(loss, self.vars)
        self.opt.apply_gradients(zip(grads, self.vars))
        return float(loss.numpy())

    def weights(self):
        return [v.numpy() for v in self.vars]


class AutopropFunction(Autoprop):
    """autoprop's step under ``@ap.function`` (session 38): traced once here (then the weights are
    set back), so that the checked step and every timed one are replays."""

    name = "autoprop.function"

    def __init__(self, weights, X, y):
        super().__init__(weights, X, y)
        self.Xa = X
        net, loss_fn, opt, variables = self.net, self.loss, self.opt, self.vars

        @ap.function
        def train_step(x, labels):
            with ap.GradientTape() as tape:
                loss = loss_fn(labels, net(x, training=True))
            grads = tape.gradient(loss, variables)
            opt.apply_gradients(zip(grads, variables))
            return loss

        self.train_step = train_step
        train_step(X, y)  # the trace (plain SGD keeps no state: setting the weights back undoes it)
        for v, w in zip(self.vars, weights):
            v.assign(w)

    def step(self):
        return float(self.train_step(self.Xa, self.y).numpy())

    def replay_saved_bytes(self):
        """Bytes of the forward's values the replay holds when its gradient plan starts (its op
        results and what the records' forwards saved for their VJPs; not the arguments, not the
        Variables' values; the arguments, X among them, as the tape counts X): the counterpart of the
        tape's saved bytes."""
        trace = next(iter(self.train_step._traces.values()))[0]
        steps = trace.steps
        first_grad = next(i for i, s in enumerate(steps) if s[0] == "grad")
        trace.steps = steps[:first_grad]
        try:
            env = trace.replay([self.Xa, self.y])
        finally:
            trace.steps = steps
        outs = set(trace.argslots)
        for s in steps[:first_grad]:
            if s[0] == "op":
                outs.update(s[6])
                outs.add(s[8])
        seen, total = set(), 0

        def count(a):
            nonlocal total
            if isinstance(a, dict):
                for v in a.values():
                    count(v)
            elif isinstance(a, (tuple, list)):
                for v in a:
                    count(v)
            elif isinstance(a, np.ndarray):
                base = a if a.base is None else a.base
                if id(base) not in seen:
                    seen.add(id(base))
                    total += base.nbytes

        for s in sorted(outs):
            count(env[s])
        return total


# ---------------------------------------------------------------------------- peers
class TorchEager:
    name = "torch eager"

    def __init__(self, weights, X, y):
        import torch

        torch.set_num_threads(1)
        self.torch = torch
        self.p = [torch.tensor(w, dtype=torch.float64, requires_grad=True) for w in weights]
        self.X, self.y = torch.from_numpy(X), torch.from_numpy(y)

    def step(self):
        torch = self.torch
        W1, b1, W2, b2 = self.p
        z = torch.tanh(self.X @ W1.T + b1) @ W2.T + b2
        loss = torch.nn.functional.cross_entropy(z, self.y)
        loss.backward()
        with torch.no_grad():
            for p in self.p:
                p -= LR * p.grad
                p.grad = None
        return loss.item()

    def weights(self):
        return [p.detach().numpy() for p in self.p]


def _loss_fn(xnp):
    """The mean cross-entropy of the MLP written with ``xnp`` (autograd.numpy or jax.numpy)."""
    def loss(params, X, y):
        W1, b1, W2, b2 = params
        z = xnp.tanh(X @ W1.T + b1) @ W2.T + b2
        shifted = z - xnp.max(z, axis=1, keepdims=True)
        log_p = shifted - xnp.log(xnp.sum(xnp.exp(shifted), axis=1, keepdims=True))
        return -xnp.mean(log_p[xnp.arange(len(y)), y])

    return loss


class HipsAutograd:
    name = "HIPS autograd"

    def __init__(self, weights, X, y):
        import autograd
        import autograd.numpy as anp

        self.vg = autograd.value_and_grad(_loss_fn(anp))
        self.p, self.X, self.y = [w.copy() for w in weights], X, y

    def step(self):
        loss, grads = self.vg(self.p, self.X, self.y)
        for p, g in zip(self.p, grads):
            p -= LR * g
        return float(loss)

    def weights(self):
        return self.p


class JaxJit:
    name = "jax.jit"

    def __init__(self, weights, X, y):
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        vg = jax.value_and_grad(_loss_fn(jnp))

        def step(params, X, y):
            loss, grads = vg(params, X, y)
            return loss, [p - LR * g for p, g in zip(params, grads)]

        self.jstep = jax.jit(step)
        self.p = [jnp.asarray(w) for w in weights]
        self.X, self.y = jnp.asarray(X), jnp.asarray(y)

    def step(self):
        loss, self.p = self.jstep(self.p, self.X, self.y)
        self.p[0].block_until_ready()
        return float(loss)

    def weights(self):
        return [np.asarray(p) for p in self.p]


PEERS = ((TorchEager, "torch"), (HipsAutograd, "autograd"), (JaxJit, "jax"))


def _importable(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


# ---------------------------------------------------------------------------- timing
#: the clock of the timed tables: wall time, or with ``--clock cpu`` this thread's CPU time
#: (on a shared machine a wall-clock median measures the neighbours; CPU time does not)
CLOCK = {"wall": time.perf_counter, "cpu": time.thread_time}
_clock = [time.perf_counter]


def interleaved(steps, repeats, warmup=30, clock=None, block=1):
    """Median seconds of each step function over ``repeats`` timed steps, the functions taking turns.

    Each round gives every function one turn, in a new order drawn by a seeded shuffle (the same
    orders in every run), so that no engine always follows the same one. (Until session 28 the
    order turned by one each repeat, which keeps every engine behind the same neighbour: speed28
    measured autoprop's B16 ratio 7% lower that way than with shuffled orders, 3.25 against 3.51
    at load.) A turn is ``block`` steps of one engine back to back, as a training loop in a
    notebook runs them. With ``block`` > 1 the first step of a turn runs untimed: it pays for the
    caches and branch history the previous engine's step left (speed36, 64-32-10 B16 with every
    peer in turns of 20: plain numpy 88 us for the first step of a turn, 43 for the second, 34 from
    the fifth on; autoprop 380, 139, 105); the next two or three pay a little, which the median of
    the timed steps mostly leaves out. That cost depends on which engines share the run (after our own engines plain
    numpy's first step pays more in proportion than autoprop's, after the peers every engine pays
    two to three times its step), not on the engine timed. ``block=1``: every turn one timed step,
    each after another engine's (this benchmark's method until session 36).
    ``clock``: ``--clock``'s (wall time by default; ``time.thread_time`` for CPU time on a shared
    machine).
    """
    clock = clock or _clock[0]
    for _ in range(warmup):
        for step in steps:
            step()
    times = [[] for _ in steps]
    order, rng = list(range(len(steps))), random.Random(0)
    untimed = 1 if block > 1 else 0
    while len(times[0]) < repeats:
        rng.shuffle(order)
        for i in order:
            step, timed = steps[i], times[i]
            for _ in range(untimed):
                step()
            for _ in range(min(block - untimed, repeats - len(timed))):
                t0 = clock()
                step()
                timed.append(clock() - t0)
    return [statistics.median(t) for t in times]


def steps_run(repeats, block):
    """How many steps :func:`interleaved` runs of each function after its warm-up: ``repeats``
    timed ones and, with ``block`` > 1, the untimed first step of each turn."""
    if block <= 1:
        return repeats
    return repeats + -(-repeats // (block - 1))


def check_agrees(engine, reference_weights, reference_loss):
    """Largest absolute difference of one step's loss and updated weights to plain numpy's."""
    loss = engine.step()
    diff = abs(float(loss) - float(reference_loss))
    for a, b in zip(engine.weights(), reference_weights):
        diff = max(diff, float(np.max(np.abs(np.asarray(a) - b))))
    return diff


def saturated_steps(w0, X, y, first, last):
    """``(steps, entries)``: how many of plain numpy's steps ``first``..``last - 1`` (counted from
    ``w0``, the first step 0) ran with hidden units near saturation (``1 - h^2 < 1/8``), and how
    many such entries the last of them had.

    There manualprop's ``Tanh`` and autoprop's ``tanh`` take ``1 / cosh(x)^2`` (lesson 02's
    precision) on those entries, where plain numpy keeps ``1 - h^2``: a dearer step (about +5 us
    of a 64-32-10 B16 step of about 55 us, session 27). Every engine follows plain numpy's
    weights (to 1e-10), so this says which steps the medians mixed: at 64-32-10 B16 the first
    saturated step is about step 1,008, so a run of ``--repeats`` over about 1,000 times both kinds.
    """
    p = [w.copy() for w in w0]
    steps = entries = 0
    for i in range(last):
        if i >= first:
            h = np.tanh(X @ p[0].T + p[1])
            entries = int(np.count_nonzero(1.0 - h * h < 0.125))
            steps += entries > 0
        _loss, saved = np_forward(p, X, y)
        for w, g in zip(p, np_backward(p, y, saved)):
            w -= LR * g
    return steps, entries


def mlp_table(repeats, peers=None, block=1):
    """One block per size: every engine's median and ratio to plain numpy, ok/MISS.

    ``peers``: the module names of the peers to run (default: every importable one); ``block``:
    :func:`interleaved`'s steps of one engine a turn."""
    verdicts = []
    for sizes, batch, manual_target, auto_target in SIZES:
        X, y = digits_batch(batch)
        w0 = initial_weights(sizes)
        ref = PlainNumpy(w0, X, y)
        ref_loss = ref.step()
        ref_weights = [p.copy() for p in ref.weights()]
        engines, missing = [], []
        for cls in (PlainNumpy, Manualprop, Autoprop, AutopropFunction):
            engines.append(cls(w0, X, y))
        for cls, module in PEERS:
            if peers is not None and module not in peers:
                continue
            if _importable(module):
                engines.append(cls(w0, X, y))
            else:
                missing.append(cls.name)
        for e in engines:
            diff = check_agrees(e, ref_weights, ref_loss)
            if not diff <= AGREE:
                raise SystemExit(f"{e.name} disagrees with plain numpy by {diff:.3g} (> {AGREE}) "
                                 f"at {sizes} B{batch}: not timed")
        steps = [e.step for e in engines]
        meds = dict(zip((e.name for e in engines), interleaved(steps, repeats, block=block)))
        base = meds["plain numpy"]
        ratios = {k: v / base for k, v in meds.items()}
        net = "-".join(map(str, sizes))
        print(f"\n{net}, batch {batch} (one step; all agree with plain numpy to {AGREE:g})")
        print(f"  {'engine':<15}{'median (us)':>12}{'ratio':>8}  target")
        torch_ratio = ratios.get("torch eager")
        for e in engines:
            target, ok = "", None
            if e.name == "manualprop":
                target, ok = f"<= {manual_target}", ratios[e.name] <= manual_target
            elif e.name in ("autoprop", "autoprop.function"):
                target, ok = f"<= {auto_target}", ratios[e.name] <= auto_target
                if torch_ratio is not None:
                    target += f" and < torch {torch_ratio:.2f}"
                    ok = ok and ratios[e.name] < torch_ratio
            verdict = "" if ok is None else ("ok" if ok else "MISS")
            if ok is not None:
                verdicts.append((f"{e.name} {net} B{batch}", verdict))
            print(f"  {e.name:<17}{meds[e.name] * 1e6:>10.1f}{ratios[e.name]:>8.2f}  {target:<28}{verdict}")
        for name in missing:
            print(f"  {name:<15}{'not installed':>12}")
        # (every engine ran one checked step and 30 warm-up steps before the timed ones)
        run = steps_run(repeats, block)
        sat, entries = saturated_steps(w0, X, y, 31, 31 + run)
        print(f"  steps after the warm-up with saturated tanh units (1 - h^2 < 1/8, the precise "
              f"derivative's dearer path): {sat} of {run}" + (f", {entries} of {batch * sizes[1]} units at the last" if sat else ""))
    return verdicts


# ---------------------------------------------------------------------------- CNN and LSTM
def _saved_bytes_manual(objs):
    """Bytes of the ndarrays in the ``cache`` of every layer and loss: each block of memory
    counted once, a view as the array it views (as ``tape.summary()`` counts)."""
    seen, total = set(), 0

    def visit(v):
        nonlocal total
        if isinstance(v, np.ndarray):
            while isinstance(v.base, np.ndarray):
                v = v.base
            if id(v) not in seen:
                seen.add(id(v))
                total += v.nbytes
        elif isinstance(v, dict):
            for x in v.values():
                visit(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                visit(x)

    for o in objs:
        visit(getattr(o, "cache", None))
    return total


def _saved_bytes_tape(tape):
    """Bytes the tape keeps for backward (``tape.summary()``: each block of memory once, a
    view as the array it views) minus the current values of Variables: the parameters,
    which manualprop's caches do not hold either (its layers read ``params`` in backward)."""
    m = re.search(r"\((\d+) bytes\), of which .* \((\d+) bytes\) current values of Variables",
                  tape.summary())
    return int(m.group(1)) - int(m.group(2))


def nested_rows(repeats, block=1):
    """autoprop / manualprop on the CNN training step and one LSTM and one RNN step, and the
    saved bytes."""
    from gradcheck.train import TrainConfig, _models

    verdicts = []
    print(f"\nautoprop / manualprop (target <= {NESTED_TARGET}); saved bytes tape / manual caches "
          f"(target <= {MEMORY_TARGET}; neither counts the parameters)")
    print(f"  {'network':<36}{'manual (us)':>12}{'tape (us)':>11}{'ratio':>7}  "
          f"{'manual B':>9}{'tape B':>9}{'bytes':>7}")
    X, y = digits_batch(32)
    rows = []
    # the MLP of the table (memory only: its time ratio is above)
    w0 = initial_weights((64, 32, 10))
    X16, y16 = X[:16].copy(), y[:16].copy()  # owned arrays: a view would count as all of X
    rows.append(("MLP 64-32-10, B16", Manualprop(w0, X16, y16), Autoprop(w0, X16, y16), False))

    config = TrainConfig(model="cnn")
    manual, tape_model = _models(config)
    Xc = X.reshape(-1, 1, 8, 8)

    class Net:
        def __init__(self, manual, tape_model, X, y):
            self.m, self.t = manual, tape_model
            self.X, self.Xt, self.y = X, ap.constant(X), y
            self.m_loss, self.t_loss = mp.SoftmaxCrossEntropy(), alo.SoftmaxCrossEntropy()
            self.m_opt, self.t_opt = mp.SGD(learning_rate=LR), ap.optimizers.SGD(learning_rate=LR)
            self.vars = tape_model.trainable_variables

        def manual_step(self):
            self.m_loss.forward(self.y, self.m.forward(self.X, training=True))
            self.m.backward(self.m_loss.backward(), input_grad=False)
            self.m_opt.step(self.m.params, self.m.grads)

        def tape_step(self):
            with ap.GradientTape() as tape:
                loss = self.t_loss(self.y, self.t(self.Xt, training=True))
            grads = tape.gradient(loss, self.vars)
            self.t_opt.apply_gradients(zip(grads, self.vars))

        def recorded(self):  # a tape before gradient() releases it, for its summary
            with ap.GradientTape() as tape:
                self.t_loss(self.y, self.t(self.Xt, training=True))
            return tape

    cnn = Net(manual, tape_model, Xc, y)
    rows.append((f"CNN (gradcheck train --model cnn), B{len(y)}", cnn, cnn, True))

    rng = np.random.default_rng(0)
    Xs = rng.standard_normal((16, 8, 16))
    G = rng.standard_normal((16, 8, 32))
    xs = ap.constant(Xs)

    class Recurrent:
        """One forward + backward of a recurrent layer (dL/dX and the weights' gradients)."""

        def __init__(self, kind):
            self.m, self.t = getattr(mp, kind)(16, 32, rng=0), getattr(al, kind)(16, 32)
            for k, v in self.t.variables.items():
                v.assign(self.m.params[k])
            self.vars = list(self.t.variables.values())

        def manual_step(self):
            self.m.forward(Xs, training=True)
            self.dX = self.m.backward(G)

        def tape_step(self):
            tape = self.recorded()
            self.tgrads = tape.gradient(self.out, [xs] + self.vars, output_gradients=G)

        def recorded(self):
            with ap.GradientTape() as tape:
                tape.watch(xs)
                self.out = self.t(xs, training=True)
            return tape

    for kind in ("LSTM", "RNN"):
        rec = Recurrent(kind)
        rows.append((f"{kind} 16->32, B16, T=8 (fwd+bwd)", rec, rec, True))

    for name, m, t, timed in rows:
        if isinstance(m, Manualprop):
            m.step()
            mbytes = _saved_bytes_manual(list(m.net.layers) + [m.loss])
            with ap.GradientTape() as tape:
                t.loss(t.y, t.net(t.X, training=True))
            tbytes = _saved_bytes_tape(tape)
        else:
            m.manual_step()
            t.tape_step()
            layers = [m.m] if isinstance(m, Recurrent) else m.m.layers
            mbytes = _saved_bytes_manual(list(layers) + ([m.m_loss] if hasattr(m, "m_loss") else []))
            tbytes = _saved_bytes_tape(t.recorded())
        if isinstance(m, Recurrent):  # the two tracks agree before they are timed
            diff = max(float(np.max(np.abs(a - b))) for a, b in zip(
                [m.dX] + [m.m.grads[k] for k in m.t.variables], [g.numpy() for g in m.tgrads]))
            if not diff <= AGREE:
                raise SystemExit(f"{name}: autoprop disagrees with manualprop by {diff:.3g}")
        mem = tbytes / mbytes
        mem_v = "ok" if mem <= MEMORY_TARGET else "MISS"
        if timed:
            mm, mt = interleaved([m.manual_step, t.tape_step], max(1, repeats // 4), warmup=5,
                                 block=block)
            ratio = mt / mm
            v = "ok" if ratio <= NESTED_TARGET else "MISS"
            verdicts.append((f"autoprop/manualprop {name.split(' ')[0]}", v))
            timing = f"{mm * 1e6:>12.1f}{mt * 1e6:>11.1f}{ratio:>7.2f} {v:<4}"
        else:
            timing = f"{'(above)':>12}{'':>11}{'':>7} {'':<4}"
        verdicts.append((f"saved bytes {name.split(' ')[0]}", mem_v))
        print(f"  {name:<36}{timing} {mbytes:>9}{tbytes:>9}{mem:>7.2f} {mem_v}")
    # the replay of autoprop.function keeps every forward value of the step until it returns
    m = Manualprop(w0, X16, y16)
    m.step()
    mbytes = _saved_bytes_manual(list(m.net.layers) + [m.loss])
    fbytes = AutopropFunction(w0, X16, y16).replay_saved_bytes()
    mem = fbytes / mbytes
    mem_v = "ok" if mem <= MEMORY_TARGET else "MISS"
    verdicts.append(("saved bytes MLP (autoprop.function replay)", mem_v))
    print(f"  {'MLP 64-32-10, B16: autoprop.function':<36}{'(replay: forward values held)':>30} "
          f"{mbytes:>9}{fbytes:>9}{mem:>7.2f} {mem_v}")
    return verdicts


# ---------------------------------------------------------------------------- profile
def _inclusive(stats, inside):
    """Seconds spent in functions for which ``inside(file, name)`` holds, callees included,
    counting only calls that enter the group from outside (so nothing is counted twice)."""
    total = 0.0
    for (file, _line, name), (_cc, _nc, _tt, _ct, callers) in stats.stats.items():
        if not inside(file, name):
            continue
        for (cfile, _cl, cname), cstat in callers.items():
            if not inside(cfile, cname):
                total += cstat[3]
    return total


def _plain_phases(params, X, y):
    """One plain-numpy step (np_forward/np_backward and the update) split into the phases of
    :func:`phase_table`: seconds of forward, loss (forward and gradient), backward, update."""
    clock = time.perf_counter
    W1, b1, W2, b2 = params
    t0 = clock()
    h = np.tanh(X @ W1.T + b1)
    z = h @ W2.T + b2
    t1 = clock()
    shifted = z - z.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    n = len(y)
    _loss = -(shifted[np.arange(n), y] - np.log(s[:, 0])).mean()  # as np_forward
    dz = e / s
    dz[np.arange(n), y] -= 1.0
    dz /= n
    t2 = clock()
    da = (dz @ W2) * (1.0 - h * h)
    grads = [da.T @ X, da.sum(axis=0), dz.T @ h, dz.sum(axis=0)]
    t3 = clock()
    for p, g in zip(params, grads):
        p -= LR * g
    t4 = clock()
    return t1 - t0, t2 - t1, t3 - t2, t4 - t3


def _manual_phases(m):
    """The same four phases of one :class:`Manualprop` step (update: ``opt.step(net)``)."""
    clock = time.perf_counter
    net = m.net
    t0 = clock()
    z = net.forward(m.X, training=True)
    t1 = clock()
    m.loss.forward(m.y, z)
    dz = m.loss.backward()
    t2 = clock()
    net.backward(dz, input_grad=False)
    t3 = clock()
    m.opt.step(net)
    t4 = clock()
    return t1 - t0, t2 - t1, t3 - t2, t4 - t3


def phase_table(repeats):
    """Medians of each phase, manualprop and the same arithmetic in plain numpy, interleaved.

    No profiler: the plain-numpy column is the arithmetic, the difference is what manualprop
    adds (its checks and its bookkeeping: objects, caches, dicts, calls). The validation share
    of that difference comes from the cProfile run of :func:`profile`.
    """
    names = ("forward", "loss fwd+bwd", "backward", "update")
    print(f"\nper-phase medians of {repeats} interleaved steps (no profiler): the arithmetic "
          "(plain numpy) and what manualprop adds")
    for sizes, batch, _, _ in SIZES:
        X, y = digits_batch(batch)
        w0 = initial_weights(sizes)
        m, p = Manualprop(w0, X, y), PlainNumpy(w0, X, y)
        for _ in range(30):
            m.step()
            p.step()
        mt, pt = [], []
        for _ in range(repeats):
            mt.append(_manual_phases(m))
            pt.append(_plain_phases(p.p, X, y))
        print(f"  {'-'.join(map(str, sizes))} B{batch:<6}{'plain numpy':>13}{'manualprop':>12}{'added':>9}")
        tot_m = tot_p = 0.0
        for i, name in enumerate(names):
            a = statistics.median(t[i] for t in pt) * 1e6
            b = statistics.median(t[i] for t in mt) * 1e6
            tot_m, tot_p = tot_m + b, tot_p + a
            print(f"    {name:<15}{a:>10.1f} us{b:>9.1f} us{b - a:>+7.1f} us")
        print(f"    {'sum':<15}{tot_p:>10.1f} us{tot_m:>9.1f} us{tot_m - tot_p:>+7.1f} us")


#: the profiler's clock: CPU time of this thread, so that time the process waits while other
#: processes run (a busy shared machine) is not counted; the profiler's own cost still is
_CPU = time.thread_time


def profile(n=300):
    """cProfile of manualprop's and autoprop's step at 64-32-10 B16, split by phase and by kind."""
    sizes, batch = (64, 32, 10), 16
    X, y = digits_batch(batch)
    w0 = initial_weights(sizes)
    sep = os.sep

    def in_validation(file, name):
        return file.endswith(f"manualprop{sep}_validation.py") or (
            f"manualprop{sep}" in file and name in ("_where", "__repr__", "_repr_args", "_check_dY"))

    m = Manualprop(w0, X, y)
    net, loss, opt = m.net, m.loss, m.opt
    state = {}
    phases = {
        "forward": lambda: state.__setitem__("z", net.forward(X, training=True)),
        "loss": lambda: (loss.forward(y, state["z"]), state.__setitem__("dz", loss.backward())),
        "backward": lambda: net.backward(state["dz"], input_grad=False),  # as in the step
        "update": lambda: opt.step(net.params, net.grads),
    }
    print(f"\ncProfile, {n} steps at 64-32-10 B16 (CPU time of this thread under the profiler, "
          "per step)")
    print("  manualprop      phase total   validation+messages   arithmetic+rest")
    for _ in range(20):
        m.step()
    totals = {p: 0.0 for p in phases}
    valid = {p: 0.0 for p in phases}
    for phase in phases:
        prof = cProfile.Profile(_CPU)
        for _ in range(n):
            for p, fn in phases.items():
                if p == phase:
                    prof.enable()
                    fn()
                    prof.disable()
                else:
                    fn()
        st = pstats.Stats(prof)
        totals[phase] = st.total_tt / n
        valid[phase] = _inclusive(st, in_validation) / n
    for phase in phases:
        print(f"  {phase:<14}{totals[phase] * 1e6:>10.1f} us{valid[phase] * 1e6:>16.1f} us"
              f"{(totals[phase] - valid[phase]) * 1e6:>17.1f} us")
    tot, val = sum(totals.values()), sum(valid.values())
    print(f"  {'step':<14}{tot * 1e6:>10.1f} us{val * 1e6:>16.1f} us{(tot - val) * 1e6:>17.1f} us"
          f"   ({100 * val / tot:.0f}% validation)")

    a = Autoprop(w0, X, y)
    prims = f"autoprop{sep}core{sep}prims{sep}"

    def in_prims(file, name):
        return prims in file

    def in_optim(file, name):
        return file.endswith(f"manualprop{sep}optim.py") or file.endswith(f"autoprop{sep}optimizers.py")

    def in_validation_only(file, name):  # (the optimizer makes its common checks inline: the dot)
        return file.endswith(f"manualprop{sep}_validation.py") or file == "~" and (
            name.endswith(".vdot>") or name == "<built-in method math.isfinite>")

    for _ in range(20):
        a.step()
    rec, grad, upd = cProfile.Profile(_CPU), cProfile.Profile(_CPU), cProfile.Profile(_CPU)
    for _ in range(n):
        rec.enable()
        with ap.GradientTape() as tape:
            lv = a.loss(a.y, a.net(a.X, training=True))
        rec.disable()
        grad.enable()
        grads = tape.gradient(lv, a.vars)
        grad.disable()
        upd.enable()
        a.opt.apply_gradients(zip(grads, a.vars))
        upd.disable()
    sr, sg, su = (pstats.Stats(p) for p in (rec, grad, upd))
    fwd = _inclusive(sr, in_prims) / n
    vjp = _inclusive(sg, in_prims) / n
    rt, gt, ut = sr.total_tt / n, sg.total_tt / n, su.total_tt / n
    uv = _inclusive(su, in_validation_only) / n
    rc, gc_, uc = (st.total_calls // n for st in (sr, sg, su))  # Python calls: load-independent
    print("  autoprop        phase total   Python calls   of which")
    print(f"  {'record':<14}{rt * 1e6:>10.1f} us{rc:>9d}        forward arithmetic (prims) "
          f"{fwd * 1e6:.1f} us, layers + Tensor + tape recording {(rt - fwd) * 1e6:.1f} us")
    print(f"  {'walk + VJP':<14}{gt * 1e6:>10.1f} us{gc_:>9d}        VJPs (prims) {vjp * 1e6:.1f} us, "
          f"walk (tape.gradient's own) {(gt - vjp) * 1e6:.1f} us")
    print(f"  {'update':<14}{ut * 1e6:>10.1f} us{uc:>9d}        gradient checks {uv * 1e6:.1f} us")
    print(f"  {'step':<14}{(rt + gt + ut) * 1e6:>10.1f} us{rc + gc_ + uc:>9d}")
    for label, st in (("record", sr), ("walk + VJP", sg)):
        print(f"  top functions by own time, autoprop {label}:")
        rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:6]
        for (file, line, name), (_cc, nc, tt, _ct, _callers) in rows:
            where = f"{os.path.basename(file)}:{line}" if line else file
            print(f"    {tt / n * 1e6:>7.1f} us  {nc // n:>3} calls  {name} ({where})")


# ---------------------------------------------------------------------------- main
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1000)
    parser.add_argument("--profile", action="store_true", help="also print the cProfile breakdown")
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall",
                        help="wall (default) or cpu: this thread's CPU time, for a machine shared "
                             "with other work (BLAS runs on this thread: one BLAS thread is pinned)")
    parser.add_argument("--skip-nested", action="store_true", help="only the MLP table")
    parser.add_argument("--peers", default=None,
                        help="comma-separated peers to run, of torch,autograd,jax (default: every "
                             "importable one)")
    parser.add_argument("--block", type=int, default=BLOCK,
                        help=f"steps of one engine a turn, the first untimed (default {BLOCK}: a training "
                             "loop's steps back to back, as in a notebook); 1: one timed step a turn, "
                             "each after another engine's (the method until session 36)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1; got {args.repeats}")
    if args.block < 1:
        parser.error(f"--block must be at least 1; got {args.block}")
    peers = None if args.peers is None else {p.strip() for p in args.peers.split(",") if p.strip()}
    known = {m for _, m in PEERS}
    if peers is not None and not peers <= known:
        parser.error(f"--peers: unknown {sorted(peers - known)}; choose from {sorted(known)}")
    _clock[0] = CLOCK[args.clock]
    with one_blas_thread():
        turns = ("one step a turn" if args.block == 1 else
                 f"turns of {args.block} steps of one engine, the first of each untimed")
        print(f"BLAS: {blas_kernel()}; float64; SGD lr {LR}; medians of {args.repeats} timed steps, "
              f"the engines taking turns ({turns})"
              f"{'' if args.clock == 'wall' else '; CPU time of this thread'}")
        verdicts = mlp_table(args.repeats, peers, args.block)
        if not args.skip_nested:
            verdicts += nested_rows(args.repeats, args.block)
        if args.profile:
            phase_table(args.repeats)
            profile()
    print("\n" + ", ".join(f"{k}: {v}" for k, v in verdicts))
    print("other load on the machine moves every column; compare ratios from one run, not across runs")
    missed = [k for k, v in verdicts if v == "MISS"]
    if missed:  # make bench names this script among those that missed a target
        print(f"train_step.py: {len(missed)} target(s) missed: {', '.join(missed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
