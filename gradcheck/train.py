"""Train one network twice, with manual and with tape gradients, and compare step by step.

An MLP (``Linear(64, hidden) -> Tanh -> Linear(hidden, 10)``) or CNN (``Conv2D(1, channels, 3,
padding=1) -> ReLU -> MaxPool2D(2) -> Flatten -> Linear(channels*16, 10)``), softmax cross-entropy,
SGD with momentum, on scikit-learn's 8x8 digits; both runs start from the same weights and see the
same minibatches. Requirements (:attr:`TrainReport.requirements`): test accuracies of
:data:`MIN_ACCURACY_BY_MODEL`; per step, losses within ``LOSS_RTOL`` and gradients within
``GRAD_RTOL`` by :func:`gradcheck.compare.compare` (floor ``GRAD_FLOOR``).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from .compare import compare, relative_error
from .sources import copy_params_to_twin

__all__ = ["TrainConfig", "TrainReport", "load_digits_split", "run_training",
           "LOSS_RTOL", "GRAD_RTOL", "GRAD_FLOOR", "MIN_ACCURACY"]

#: Per-step loss agreement required between manual and tape training.
LOSS_RTOL = 1e-9
#: Per-step gradient agreement required (max element-wise relative error).
GRAD_RTOL = 1e-9
#: Denominator floor for gradient relative errors (entries below it compared absolutely, to 1e-15).
GRAD_FLOOR = 1e-6
#: Minimum test accuracy of each run, per model (``MIN_ACCURACY``: the MLP's).
MIN_ACCURACY_BY_MODEL = {"mlp": 0.95, "cnn": 0.97}
MIN_ACCURACY = MIN_ACCURACY_BY_MODEL["mlp"]


@dataclass
class TrainConfig:
    """Hyperparameters of the comparison run (``seed`` seeds the split, the initial weights and the batch order;
    ``hidden``: MLP units, ``channels``: CNN filters, ``activation``: "tanh" or "relu")."""

    epochs: int = 30
    model: str = "mlp"
    hidden: int = 32
    channels: int = 8
    activation: str = "tanh"
    batch_size: int = 32
    learning_rate: float = 0.05
    momentum: float = 0.9
    seed: int = 0
    test_size: float = 0.25


@dataclass
class TrainReport:
    """What :func:`run_training` measured: per step (shape ``(steps,)``) and per epoch the losses and their
    differences; the test accuracies, ``final_param_max_abs_diff``, ``seconds``, ``plot_path``."""

    config: TrainConfig
    loss_manual: np.ndarray
    loss_tape: np.ndarray
    rel_loss_diff: np.ndarray
    rel_grad_diff: np.ndarray
    epoch_loss_manual: np.ndarray
    epoch_loss_tape: np.ndarray
    test_accuracy_manual: float
    test_accuracy_tape: float
    final_param_max_abs_diff: float
    steps_per_epoch: int
    seconds: float
    plot_path: str | None = None

    @property
    def max_rel_loss_diff(self) -> float:
        """Largest per-step relative loss difference."""
        return float(self.rel_loss_diff.max(initial=0.0))

    @property
    def max_rel_grad_diff(self) -> float:
        """Largest per-step gradient relative error."""
        return float(self.rel_grad_diff.max(initial=0.0))

    @property
    def requirements(self) -> list[tuple[str, float, str, float, bool]]:
        """``(name, value, op, threshold, ok)`` for every requirement."""
        acc = MIN_ACCURACY_BY_MODEL[self.config.model]
        rows = [("test accuracy, manualprop", self.test_accuracy_manual, ">=", acc),
                ("test accuracy, autoprop", self.test_accuracy_tape, ">=", acc),
                ("max per-step relative loss difference", self.max_rel_loss_diff, "<=", LOSS_RTOL),
                ("max per-step gradient relative error", self.max_rel_grad_diff, "<=", GRAD_RTOL)]
        return [(*r, r[1] >= r[3] if r[2] == ">=" else r[1] <= r[3]) for r in rows]

    @property
    def passed(self) -> bool:
        """True when every requirement holds."""
        return all(r[-1] for r in self.requirements)

    def epochs_note(self) -> str:
        """Why an accuracy requirement failed when the run was shorter than the default (:class:`TrainConfig`'s
        ``epochs``), the length the thresholds are set for (newuser27: ``--epochs 2`` FAILed with no word of it);
        "" otherwise."""
        default = TrainConfig.__dataclass_fields__["epochs"].default
        failed = [name for name, *_, ok in self.requirements if not ok]
        if self.config.epochs >= default or not failed or not all(n.startswith("test accuracy") for n in failed):
            return ""
        acc = MIN_ACCURACY_BY_MODEL[self.config.model]
        return (f"The accuracy threshold ({acc:g} for the {self.config.model.upper()}) assumes the default "
                f"{default} epochs; this run had {self.config.epochs}, too few to reach it. Manual and tape training "
                "agree step by step (the rows above): the gradients are not at fault. Run without --epochs (or "
                f"--epochs {default}) for the accuracy requirement.")

    def summary(self) -> str:
        """Text summary: loss per epoch, differences, accuracies, requirements."""
        c = self.config
        net = (f"MLP 64-{c.hidden}-10 ({c.activation})" if c.model == "mlp" else
               f"CNN Conv2D(1, {c.channels}, 3, padding=1)-ReLU-MaxPool2D(2)-Flatten-Linear({c.channels * 16}, 10)")
        lines = [
            f"{net}, softmax cross-entropy, SGD lr={c.learning_rate} "
            f"momentum={c.momentum}, batch {c.batch_size}, {c.epochs} epochs x {self.steps_per_epoch} steps, "
            f"seed {c.seed}; {self.seconds:.1f} s", "",
            f"{'epoch':>5}  {'loss manualprop':>17}  {'loss autoprop':>17}  {'rel diff':>9}"]
        for e, (a, b) in enumerate(zip(self.epoch_loss_manual, self.epoch_loss_tape), 1):
            lines.append(f"{e:>5}  {a:>17.12f}  {b:>17.12f}  {float(relative_error(a, b)):>9.1e}")
        lines += [
            "", f"max per-step relative loss difference |Lm-Lt|/(|Lm|+|Lt|): {self.max_rel_loss_diff:.3e}",
            f"max per-step gradient relative error |gm-gt|/max(|gm|+|gt|, {GRAD_FLOOR:g}): {self.max_rel_grad_diff:.3e}",
            f"max |parameter difference| after training:                {self.final_param_max_abs_diff:.3e}",
            f"test accuracy: manualprop {self.test_accuracy_manual:.4f}, autoprop {self.test_accuracy_tape:.4f}", ""]
        lines += [f"[{'ok' if ok else 'FAIL'}] {name}: {value:.4g} {op} {thr:g}"
                  for name, value, op, thr, ok in self.requirements]
        return "\n".join(lines)


def load_digits_split(seed: int = 0, test_size: float = 0.25):
    """Digits scaled to [0, 1], split stratified: ``X_train, X_test`` (float64, 64 features), ``y_train, y_test``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    X, y = load_digits(return_X_y=True)
    return train_test_split(X.astype(np.float64) / 16.0, y, test_size=test_size, stratify=y,
                            random_state=seed)


def _models(config: TrainConfig):
    """The network of ``config`` in manualprop (seeded) and in autoprop.layers, same weights."""
    import autoprop.layers as apl
    import manualprop as mp
    act = {"tanh": "Tanh", "relu": "ReLU"}.get(config.activation)
    if act is None:
        raise ValueError(f"activation must be 'tanh' or 'relu'; got {config.activation!r}")
    if config.model not in ("mlp", "cnn"):
        raise ValueError(f"model must be 'mlp' or 'cnn'; got {config.model!r}")
    c, h = config.channels, config.hidden

    def build(ns, **rng):
        if config.model == "cnn":
            return ns.Sequential(ns.Conv2D(1, c, 3, padding=1, **rng), ns.ReLU(), ns.MaxPool2D(2), ns.Flatten(),
                                 ns.Linear(c * 16, 10, **rng))
        return ns.Sequential(ns.Linear(64, h, **rng), getattr(ns, act)(), ns.Linear(h, 10, **rng))

    manual, tape = build(mp, rng=np.random.default_rng(config.seed)), build(apl)
    copy_params_to_twin(manual, tape, "Sequential")
    return manual, tape


def run_training(config: TrainConfig | None = None, *, progress: bool = True, plots_dir: str | None = None,
                 log=print) -> TrainReport:
    """Train manual and tape models side by side (module docstring): a :class:`TrainReport`. ``progress``:
    a tqdm bar on a terminal (else epoch lines to ``log``); ``plots_dir``: write ``training.png`` there."""
    import autoprop as ap
    import manualprop as mp
    from autoprop.losses import SoftmaxCrossEntropy as TapeCE
    from manualprop.training import accuracy, iterate_minibatches, progress_bar

    tqdm = progress_bar()
    config = config or TrainConfig()
    progress = progress and bool(getattr(sys.stderr, "isatty", lambda: False)())  # no bar in a log
    X_tr, X_te, y_tr, y_te = load_digits_split(config.seed, config.test_size)
    if config.model == "cnn":  # images as NCHW
        X_tr, X_te = X_tr.reshape(-1, 1, 8, 8), X_te.reshape(-1, 1, 8, 8)
    manual, tape_model = _models(config)
    sgd = dict(learning_rate=config.learning_rate, momentum=config.momentum)
    runs = [(model, loss, mp.optim.SGD(**sgd))
            for model, loss in ((manual, mp.SoftmaxCrossEntropy()), (tape_model, TapeCE()))]
    keys = list(manual.params)
    if list(tape_model.variables) != keys:
        raise RuntimeError(f"twin variable keys {list(tape_model.variables)} differ from params keys {keys}")
    order_rng = np.random.default_rng(config.seed + 1)
    spe = int(np.ceil(len(X_tr) / config.batch_size))
    steps = []  # per step: loss manual, loss tape, their relative difference, worst gradient error
    t0 = time.perf_counter()
    with tqdm(total=spe * config.epochs, desc="manual+tape", unit="step", disable=not progress,
              leave=False) as bar:
        for epoch in range(config.epochs):
            for idx in iterate_minibatches(len(X_tr), config.batch_size, True, order_rng):
                steps.append(_step(*runs, keys, X_tr[idx], y_tr[idx]))
                bar.update(1)
            # progress only: the epoch losses are the summary's table (newuser21 L8: printed twice)
            msg = f"epoch {epoch + 1:>3}/{config.epochs} done ({time.perf_counter() - t0:.1f} s)"
            if progress:
                bar.write(msg)
            elif log is not None:
                log(msg)
    seconds = time.perf_counter() - t0
    Lm, Lt, dl, dg = np.array(steps, dtype=np.float64).reshape(-1, 4).T
    report = TrainReport(
        config=config, loss_manual=Lm, loss_tape=Lt, rel_loss_diff=dl, rel_grad_diff=dg,
        epoch_loss_manual=Lm.reshape(config.epochs, spe).mean(axis=1),
        epoch_loss_tape=Lt.reshape(config.epochs, spe).mean(axis=1),
        test_accuracy_manual=accuracy(y_te, manual.forward(X_te)),
        test_accuracy_tape=accuracy(y_te, tape_model(ap.constant(X_te)).numpy()),
        final_param_max_abs_diff=max(
            float(np.max(np.abs(manual.params[k] - tape_model.variables[k].numpy()))) for k in keys),
        steps_per_epoch=spe, seconds=seconds)
    if plots_dir is not None:
        from .plots import plot_training, save_figure
        fig = plot_training(np.arange(1, len(Lm) + 1), Lm, Lt, dl, dg, steps_per_epoch=spe,
                            tolerance=LOSS_RTOL, model_name=config.model.upper())
        report.plot_path = save_figure(fig, os.path.join(plots_dir, "training.png"))
    return report


def _step(manual_run, tape_run, keys, xb, yb) -> tuple[float, float, float, float]:
    """One step of both runs on one batch: (loss manual, loss tape, their and the gradients' relative error)."""
    import autoprop as ap
    (manual, loss_m, opt_m), (tape_model, loss_t, opt_t) = manual_run, tape_run
    lm = float(loss_m.forward(yb, manual.forward(xb, training=True)))
    manual.backward(loss_m.backward())
    g_manual = [manual.grads[k].copy() for k in keys]
    variables = tape_model.trainable_variables
    with ap.GradientTape() as tape:
        lt = loss_t(yb, tape_model(ap.constant(xb), training=True))
    g_tape = [g.numpy() for g in tape.gradient(lt, variables)]
    lt = float(lt.numpy())
    dl = compare(np.array(lm), np.array(lt), "manual-vs-tape", rtol=LOSS_RTOL, atol=0.0).max_rel_error
    dg = max(compare(a, b, "manual-vs-tape", rtol=GRAD_RTOL, atol=GRAD_RTOL * GRAD_FLOOR).max_rel_error
             for a, b in zip(g_manual, g_tape))
    opt_m.step(manual.params, dict(zip(keys, g_manual)))
    opt_t.apply_gradients(zip(g_tape, variables))
    return lm, lt, dl, dg
