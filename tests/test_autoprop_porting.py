"""Lesson 10, section 9 (porting from HIPS autograd): the transforms it writes on the tape API
(``grad``, ``value_and_grad``, ``elementwise_grad``, ``jacobian``, ``hvp``), taken from the
lesson's own code block, agree with HIPS autograd's transforms and with central differences."""

import doctest
import pathlib

import autograd
import autograd.numpy as agn
import numpy as np
import pytest
from autograd.differential_operators import hessian_vector_product

import autoprop as ap

LESSON = pathlib.Path(__file__).resolve().parents[1] / "lessons" / "10-gradient-tape.md"


@pytest.fixture(scope="module")
def ported():
    """The lesson's definitions (the ``def`` examples of section 9 and ``elementwise_grad = grad``),
    run as the lesson runs them."""
    text = LESSON.read_text(encoding="utf-8")
    section = text[text.index("## 9. Porting from HIPS autograd"):text.index("## Differences from TensorFlow")]
    ns = {"ap": ap, "np": np}
    for ex in doctest.DocTestParser().get_examples(section):
        if ex.source.startswith(("def ", "elementwise_grad = ")):
            exec(compile(ex.source, str(LESSON), "exec"), ns)
    assert {"grad", "value_and_grad", "elementwise_grad", "jacobian", "hvp"} <= set(ns)
    return ns


def _f(np):
    return lambda x: np.sum(np.tanh(x) ** 2 * np.exp(-x)) + x[0] * x[1] ** 3


X0 = np.array([0.4, -0.7, 1.3])


def test_grad_and_value_and_grad(ported):
    value, g = ported["value_and_grad"](_f(np))(X0)
    np.testing.assert_allclose(g.numpy(), autograd.grad(_f(agn))(X0), rtol=1e-13)
    assert float(value) == pytest.approx(_f(np)(X0), rel=1e-15)
    h = 1e-6
    cd = [(_f(np)(X0 + h * e) - _f(np)(X0 - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(g.numpy(), cd, rtol=1e-7)


def test_nested_grad_elementwise_grad_jacobian_and_hvp(ported):
    d2 = ported["grad"](ported["grad"](lambda x: np.sin(x) * x**2))(0.9)
    assert float(d2) == pytest.approx(autograd.grad(autograd.grad(lambda x: agn.sin(x) * x**2))(0.9), rel=1e-13)
    np.testing.assert_allclose(ported["elementwise_grad"](np.tanh)(X0).numpy(),
                               autograd.elementwise_grad(agn.tanh)(X0), rtol=1e-14)
    jac = ported["jacobian"](lambda x: np.outer(x, x[:2]))(X0).numpy()
    np.testing.assert_allclose(jac, autograd.jacobian(lambda x: agn.outer(x, x[:2]))(X0), rtol=1e-14)
    v = np.array([0.3, -1.0, 2.0])
    hv = ported["hvp"](_f(np))(X0, v).numpy()
    np.testing.assert_allclose(hv, hessian_vector_product(_f(agn))(X0, v), rtol=1e-12)
    h = 1e-5
    gp = ported["grad"](_f(np))(X0 + h * v).numpy()
    gm = ported["grad"](_f(np))(X0 - h * v).numpy()
    np.testing.assert_allclose(hv, (gp - gm) / (2 * h), rtol=1e-6)
