"""Session 33 (fixv33, review33 NML_TWO_ARG_GRAD_READ_AS_SOFTMAX_CE, a wrong FAIL): every class with ``loss(y,
y_pred)`` and a two-argument ``grad(y, y_pred)`` was read as numpy-ml's CrossEntropy (dL/dz, ``y_pred =
softmax(z)``), so a correct squared error FAILed (``--targets onehot``) or was refused (default targets). Now the
reading is numpy-ml's CrossEntropy's by its name, else the one that matches the loss's central differences; neither
matching FAILs with both named."""

import os
import types

import numpy as np
import pytest
from test_cli import both, run_here

from gradcheck import _adapters

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "numpyml_style.py")


@pytest.mark.parametrize("targets", [[], ["--targets", "onehot"], ["--targets", "probs"]])
def test_two_argument_squared_error_is_read_as_dl_dy_pred(targets):
    p = run_here("check", f"{FIX}::TwoArgSquaredError", "--loss", "--input-shape", "4,3", *targets)
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert "numpy-ml's loss protocol: L = the sum of loss(y, y_pred)'s per-element losses, dL/dy_pred = grad(y, " \
        "y_pred)" in text, text
    assert "softmax" not in text and "PASS: TwoArgSquaredError: dL/dy_pred matches" in text, text


def test_two_argument_grad_matching_neither_reading_fails_naming_both():
    p = run_here("check", f"{FIX}::TwoArgSquaredErrorBug", "--loss", "--input-shape", "4,3", "--targets", "onehot")
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "PASS" not in text, text
    assert "neither reading of grad(y, y_pred) matches loss's central differences" in text, text
    assert "as dL/dy_pred, relative error" in text and "as dL/dz with y_pred = softmax(z)" in text, text
    assert "FAIL: TwoArgSquaredErrorBug: gradient mismatch in dy_pred" in text, text


def _load(name):
    ns = {}
    with open(FIX) as f:
        exec(compile(f.read(), FIX, "exec"), ns)  # noqa: S102 - our own fixture
    return ns[name]()


@pytest.mark.parametrize(("name", "soft"), [("TwoArgSquaredError", False), ("SoftmaxCrossEntropy", True)])
def test_reading_told_by_central_differences(name, soft):
    obj = _load(name)
    assert _adapters._two_arg_reading(obj, "loss", "grad", {"loss": False, "grad": False}) == (soft, "")


def test_numpyml_cross_entropy_read_by_its_qualified_name():
    """numpy-ml's own CrossEntropy is read as dL/dz without a probe (its module and name)."""
    cls = type("CrossEntropy", (), {"loss": staticmethod(lambda y, y_pred: 0.0),
                                     "grad": staticmethod(lambda y, y_pred: np.zeros_like(y))})
    cls.__module__ = "numpy_ml.neural_nets.losses.losses"
    assert _adapters._two_arg_reading(cls(), "loss", "grad", {"loss": False, "grad": False}) == (True, "")
    other = types.new_class("CrossEntropy")
    other.loss, other.grad = cls.loss, cls.grad
    soft, words = _adapters._two_arg_reading(other(), "loss", "grad", {"loss": False, "grad": False})
    assert not soft and "neither reading" in words, words
