"""The zoo: every built-in layer and loss, checked manual vs tape vs numerical.

Classes are discovered (:func:`discover`), not listed; the twin is autoprop's class of the same
name (none: manual vs numerical). :data:`ENTRIES` says how to build a class (kwargs, input shape,
targets, variants such as ``GELU[tanh]``); a class without an entry is built with no arguments on
:data:`DEFAULT_INPUT_SHAPE`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from .check import CheckResult, check_layer, check_loss, copy_params_to_twin
from .errors import GradcheckError

__all__ = ["ZooEntry", "ENTRIES", "REGISTRY", "DEFAULT_INPUT_SHAPE", "discover", "entries_for", "run_zoo"]

#: Input shape for a layer without a registry entry: batch 4, 6 features.
DEFAULT_INPUT_SHAPE = (4, 6)


def _labels(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(0, shape[-1], size=shape[0])


def _real_targets(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape)


@dataclass(frozen=True)
class ZooEntry:
    """How to build class ``name`` for the zoo: constructor ``kwargs`` (``rng`` added when taken),
    ``input_shape`` (of ``X``, a list for several inputs, or ``y_pred``), ``build(namespace, rng)`` for
    containers, ``targets(rng, input_shape)`` for losses, ``inputs(rng)`` where a shape is not enough,
    ``training`` for ``forward``; shown as ``name[variant]``."""

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    input_shape: tuple[int, ...] | list[tuple[int, ...]] = DEFAULT_INPUT_SHAPE
    build: Callable[[ModuleType, np.random.Generator], Any] | None = None
    targets: Callable[[np.random.Generator, tuple[int, ...]], Any] | None = None
    inputs: Callable[[np.random.Generator], Any] | None = None
    training: bool = False
    variant: str = ""

    @property
    def label(self) -> str:
        """Display name: ``name`` or ``name[variant]``."""
        return f"{self.name}[{self.variant}]" if self.variant else self.name

    def make(self, namespace: ModuleType, rng: np.random.Generator) -> Any:
        """Build the class from ``namespace`` (``manualprop`` or an autoprop module)."""
        if self.build is not None:
            return self.build(namespace, rng)
        cls = getattr(namespace, self.name)
        rng_arg = {"rng": rng} if "rng" in inspect.signature(cls).parameters else {}
        return cls(**{**rng_arg, **self.kwargs})


def _fixed_dropout(namespace: ModuleType, rng: np.random.Generator) -> Any:
    """Dropout with its mask held fixed (a fresh mask per call makes finite differences meaningless: C29)."""
    layer = namespace.Dropout(0.5, rng=rng)
    layer.fix_mask(rng.random((4, 6)) >= 0.5)
    return layer


#: One line per class (or variant) that needs constructor arguments, an input shape, or targets.
ENTRIES: list[ZooEntry] = [
    ZooEntry("Linear", {"in_features": 5, "out_features": 3}, (8, 5)),
    ZooEntry("Sequential", input_shape=(8, 5), build=lambda ns, rng: ns.Sequential(
        ns.Linear(5, 4, rng=rng), ns.Tanh(), ns.Linear(4, 3, rng=rng))),
    ZooEntry("Residual", input_shape=(8, 5), build=lambda ns, rng: ns.Residual(
        ns.Linear(5, 5, rng=rng), ns.Tanh(), ns.Linear(5, 5, rng=rng))),
    ZooEntry("Flatten", input_shape=(2, 3, 4)),
    ZooEntry("Conv2D", {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1}, (2, 2, 5, 6)),
    ZooEntry("Conv2D", {"in_channels": 2, "out_channels": 2, "kernel_size": (2, 3), "stride": 2}, (2, 2, 6, 7),
             variant="stride2"),
    ZooEntry("ConvTranspose2D", {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1}, (2, 2, 4, 5)),
    ZooEntry("ConvTranspose2D", {"in_channels": 3, "out_channels": 2, "kernel_size": (3, 2), "stride": 2,
                                 "padding": (1, 0), "output_padding": 1}, (2, 3, 3, 4), variant="stride2"),
    ZooEntry("ConvTranspose2D", {"in_channels": 2, "out_channels": 2, "kernel_size": 2, "stride": 2,
                                 "dilation": 3, "output_padding": 2, "bias": False}, (2, 2, 3, 4),
             variant="dilated"),
    ZooEntry("MaxPool2D", {"kernel_size": 2}, (2, 2, 4, 6)), ZooEntry("AvgPool2D", {"kernel_size": 2}, (2, 2, 4, 6)),
    ZooEntry("BatchNorm1D", {"num_features": 4}, (8, 4), training=True, variant="train"),
    ZooEntry("BatchNorm1D", {"num_features": 4}, (8, 4), variant="eval"),
    ZooEntry("BatchNorm2D", {"num_features": 3}, (4, 3, 2, 3), training=True, variant="train"),
    ZooEntry("BatchNorm2D", {"num_features": 3}, (4, 3, 2, 3), variant="eval"),
    ZooEntry("LayerNorm", {"normalized_shape": 5}, (4, 5)),
    ZooEntry("Dropout", input_shape=(4, 6), build=_fixed_dropout, training=True, variant="train"),
    ZooEntry("LayerNorm", {"normalized_shape": (3, 4)}, (2, 3, 4), variant="2d"),
    ZooEntry("Embedding", {"num_embeddings": 7, "dim": 3}, inputs=lambda rng: rng.integers(0, 7, size=(4, 5))),
    ZooEntry("TiedEmbedding", build=lambda ns, rng: ns.TiedEmbedding(
        7, 4, ns.Linear(4, 4, rng=rng), ns.Tanh(), rng=rng),
        inputs=lambda rng: rng.integers(0, 7, size=9)),  # 9 ids from 7 rows: some are read twice
    ZooEntry("RNN", {"input_size": 3, "hidden_size": 4}, (2, 5, 3)),
    ZooEntry("LSTM", {"input_size": 3, "hidden_size": 4}, (2, 5, 3)),
    ZooEntry("GRU", {"input_size": 3, "hidden_size": 4}, (2, 5, 3)),
    ZooEntry("ScaledDotProductAttention", input_shape=[(2, 4, 3), (2, 5, 3), (2, 5, 6)]),
    ZooEntry("ScaledDotProductAttention", {"causal": True}, [(2, 4, 3), (2, 4, 3), (2, 4, 5)], variant="causal"),
    ZooEntry("MultiHeadAttention", {"embed_dim": 6, "num_heads": 2}, (2, 4, 6)),
    ZooEntry("MultiHeadAttention", {"embed_dim": 6, "num_heads": 2, "causal": True}, (2, 4, 6), variant="causal"),
    ZooEntry("TransformerBlock", {"embed_dim": 6, "num_heads": 2, "ff_dim": 8}, (2, 4, 6)),
    ZooEntry("TransformerBlock", {"embed_dim": 6, "num_heads": 2, "ff_dim": 8, "norm_first": False,
                                  "causal": True}, (2, 4, 6), variant="postLN-causal"),
    ZooEntry("GELU"), ZooEntry("GELU", {"approximate": "tanh"}, variant="tanh"),
    ZooEntry("SoftmaxCrossEntropy", input_shape=(8, 4), targets=_labels),
    ZooEntry("SoftmaxCrossEntropy", {"reduction": "sum"}, (8, 4), targets=_labels, variant="sum"),
    ZooEntry("SoftmaxCrossEntropy", {"label_smoothing": 0.1}, (8, 4), targets=_labels, variant="smooth0.1"),
    ZooEntry("MeanSquaredError", input_shape=(8, 3), targets=_real_targets),
    ZooEntry("MeanSquaredError", {"reduction": "sum"}, (8, 3), targets=_real_targets, variant="sum"),
    ZooEntry("Huber", input_shape=(8, 3), targets=_real_targets),
    ZooEntry("BinaryCrossEntropyWithLogits", input_shape=(8, 3),
             targets=lambda rng, shape: rng.uniform(0.0, 1.0, size=shape)),
    ZooEntry("MulticlassHinge", input_shape=(8, 4), targets=_labels),
    ZooEntry("MulticlassHinge", {"margin": 0.5, "reduction": "sum"}, (8, 4), targets=_labels, variant="sum")]

#: ``name -> [entries]``, built from :data:`ENTRIES`.
REGISTRY: dict[str, list[ZooEntry]] = {}
for _e in ENTRIES:
    REGISTRY.setdefault(_e.name, []).append(_e)
del _e


def entries_for(name: str) -> list[ZooEntry]:
    """Registry entries of class ``name``, or one default entry (no kwargs, input (4, 6))."""
    return REGISTRY.get(name) or [ZooEntry(name)]


def discover() -> list[tuple[str, str]]:
    """The ``(name, "layer" | "loss")`` of every public ``manualprop`` class with ``forward`` and
    ``backward`` (not only raising NotImplementedError), layers first; ``forward(y_true, ...)``: a loss."""
    import manualprop
    found = []
    names = getattr(manualprop, "__all__", None) or [n for n in dir(manualprop) if n[0] != "_"]
    for n in names:
        cls = getattr(manualprop, n, None)
        methods = [getattr(cls, m, None) for m in ("forward", "backward")]
        if not isinstance(cls, type) or not all(callable(m) for m in methods):
            continue
        codes = [getattr(m, "__code__", None) for m in methods]
        if not any(c is not None and c.co_names == ("NotImplementedError",) for c in codes):
            loss = "y_true" in inspect.signature(cls.forward).parameters
            found.append((n, "loss" if loss else "layer"))
    return [f for f in found if f[1] == "layer"] + [f for f in found if f[1] == "loss"]


def _twin(entry: ZooEntry, kind: str, obj: Any, seed: int) -> tuple[Any, str]:
    """The autoprop twin of ``obj`` built from ``entry``, given its parameters, or ``(None, why not)``."""
    mod = f"autoprop.{'layers' if kind == 'layer' else 'losses'}"
    try:
        ns = importlib.import_module(mod)
    except ImportError:
        return None, f"{mod} is not importable"
    if not isinstance(getattr(ns, entry.name, None), type):
        return None, f"no class {mod}.{entry.name}"
    try:
        twin = entry.make(ns, np.random.default_rng(seed))
    except TypeError as exc:  # the twin does not take these arguments (yet): manual vs numerical
        args = ", ".join(f"{k}={v!r}" for k, v in entry.kwargs.items()) or "the same arguments"
        return None, f"{mod}.{entry.name} does not accept {args} ({exc})"
    except Exception as exc:  # noqa: BLE001
        raise GradcheckError(f"could not build the twin {mod}.{entry.name} with the registry "
                             f"arguments ({type(exc).__name__}: {exc})") from exc
    if kind == "layer":
        copy_params_to_twin(obj, twin, entry.name)
    return twin, ""


def run_zoo(seed: int = 0, rtol: float = 1e-6, atol: float = 1e-9) -> tuple[list[CheckResult], list[tuple[str, str]]]:
    """Check every discovered layer and loss, everything drawn from ``seed``: ``(results, errors)``, the
    errors ``(name, message)`` of classes that could not be checked (each counts as a failure)."""
    import manualprop
    results: list[CheckResult] = []
    errors: list[tuple[str, str]] = []
    for name, kind, entry in [(n, k, e) for n, k in discover() for e in entries_for(n)]:
        try:
            try:
                obj = entry.make(manualprop, np.random.default_rng(seed))
            except Exception as exc:  # noqa: BLE001
                raise GradcheckError(
                    f"could not build manualprop.{name} ({type(exc).__name__}: {exc}); "
                    f"add a ZooEntry for it to ENTRIES in gradcheck/zoo.py with its constructor kwargs") from exc
            twin, note = _twin(entry, kind, obj, seed)
            data_rng = np.random.default_rng(seed + 1)
            kw = dict(twin=twin, seed=seed, rtol=rtol, atol=atol, name=entry.label)
            if kind == "layer":
                X = entry.inputs(data_rng) if entry.inputs is not None else entry.input_shape
                res = check_layer(obj, X, training=entry.training, **kw)
            else:
                y_pred = data_rng.standard_normal(entry.input_shape)
                y_true = (entry.targets or _real_targets)(data_rng, entry.input_shape)
                res = check_loss(obj, y_true, y_pred, **kw)
            if twin is None:
                res.twin_note = note
            results.append(res)
        except GradcheckError as exc:
            errors.append((entry.label, str(exc)))
    return results, errors
