"""Nested arguments of the tape and the accumulator (tester17a's findings): dicts pair by key and
structures must match (tf.nest), nested Jacobian targets, Jacobians under a ForwardAccumulator,
escapes under an accumulator alone, convert_to_tensor of a list, a primal given twice.

Oracles: HIPS autograd and central differences."""

import collections
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
import scipy.special

import autoprop as ap
from manualprop import optim

R = np.random.RandomState(17)


def central(f, x, u, h=1e-6):
    """d/dt f(x + t u) at t = 0, by central differences."""
    return (np.asarray(f(x + h * u)) - np.asarray(f(x - h * u))) / (2 * h)


# --- 1. dicts pair by key; the structures must match -----------------------------------------
def test_accumulator_pairs_dict_tangents_with_primals_by_key():
    v0, w0, tv, tw = 0.7, -1.3, 0.25, 2.0
    v, w = ap.Variable(v0), ap.Variable(w0)
    with ap.ForwardAccumulator({"a": v, "b": w}, {"b": tw, "a": tv}) as acc:  # other order
        y = np.sin(v) * w ** 2
    f = lambda z: np.sin(z[0]) * z[1] ** 2  # noqa: E731
    expected = central(f, np.array([v0, w0]), np.array([tv, tw]))
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected, rtol=1e-7)
    got = acc.jvp({"b": w, "a": v})
    assert list(got) == ["b", "a"] and got["a"].numpy() == tv and got["b"].numpy() == tw


def test_gradient_pairs_dict_output_gradients_with_targets_by_key():
    x0 = R.randn(3)
    gp, gq = R.randn(3), R.randn(3)
    x = ap.Variable(x0)
    with ap.GradientTape(persistent=True) as t:
        tg = {"p": x * 2.0, "q": np.sin(x)}
    g = t.gradient(tg, x, output_gradients={"q": gq, "p": gp})
    ref = autograd.grad(lambda z: anp.sum(2 * z * gp + anp.sin(z) * gq))(x0)
    np.testing.assert_allclose(g.numpy(), ref, rtol=1e-12)
    # backward_source pairs them the same way
    src = t.backward_source(tg, x, output_gradients={"q": gq, "p": gp})
    np.testing.assert_allclose(src.run(), ref, rtol=1e-12)


def test_nested_sources_come_back_in_their_own_structure_and_types():
    Pair = collections.namedtuple("Pair", "first second")
    v, w = ap.Variable(2.0), ap.Variable(3.0)
    with ap.GradientTape(persistent=True) as t:
        y = v * v * w
    g = t.gradient(y, Pair(v, {"z": w, "a": v}))
    assert type(g) is Pair and list(g.second) == ["z", "a"]
    assert (g.first.numpy(), g.second["z"].numpy(), g.second["a"].numpy()) == (12.0, 4.0, 12.0)
    od = t.gradient(y, collections.OrderedDict(w=w, v=v))
    assert type(od) is collections.OrderedDict and list(od) == ["w", "v"]
    assert (od["w"].numpy(), od["v"].numpy()) == (4.0, 12.0)
    j = t.jacobian(y, {"w": w, "v": v})
    assert (j["w"].numpy(), j["v"].numpy()) == (4.0, 12.0)


@pytest.mark.parametrize("primals, tangents, shown", [
    ("[v, [w]]", "[[1.0], 5.0]", ("[., [.]]", "[[.], .]")),
    ("{'a': v, 'b': w}", "{'a': 1.0, 'c': 2.0}", ("{'a': ., 'b': .}", "{'a': ., 'c': .}")),
    ("[v, w]", "{'a': 1.0, 'b': 2.0}", ("[., .]", "{'a': ., 'b': .}")),
    ("(v, w)", "[1.0, 2.0, 3.0]", ("(., .)", "[., ., .]")),
])
def test_accumulator_refuses_tangents_of_another_structure(primals, tangents, shown):
    v, w = ap.Variable(1.0), ap.Variable(2.0)  # noqa: F841 (read by eval)
    with pytest.raises(ValueError, match="same nested structure") as e:
        ap.ForwardAccumulator(eval(primals), eval(tangents))
    assert all(s in str(e.value) for s in shown)


def test_gradient_refuses_output_gradients_of_another_structure():
    x = ap.Variable([1.0, 2.0])
    with ap.GradientTape(persistent=True) as t:
        a, b = x * 2.0, x * 3.0
    with pytest.raises(ValueError, match=r"target is \[\., \[\.\]\], output_gradients is \[\[\.\], \.\]"):
        t.gradient([a, [b]], x, output_gradients=[[np.ones(2)], np.ones(2)])
    with pytest.raises(ValueError, match="same nested structure"):
        t.gradient({"p": a, "q": b}, x, output_gradients={"p": np.ones(2), "r": np.ones(2)})
    # what stays accepted: a list of numbers as one tangent / gradient, TF's [dy] for one target
    with ap.ForwardAccumulator(x, [1.0, -1.0]) as acc:
        y = x * x
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [2.0, -4.0])
    np.testing.assert_array_equal(t.gradient(a, x, output_gradients=[np.array([1.0, 5.0])]).numpy(), [2.0, 10.0])
    np.testing.assert_array_equal(t.gradient(a, x, output_gradients=[1.0, 5.0]).numpy(), [2.0, 10.0])
    np.testing.assert_array_equal(t.gradient([a], x, output_gradients=np.array([1.0, 5.0])).numpy(), [2.0, 10.0])


# --- 4. a primal given twice -----------------------------------------------------------------
def test_accumulator_refuses_a_primal_given_twice():
    v = ap.Variable(2.0, name="v")
    with pytest.raises(ValueError, match=r"Variable 'v' .* more than once.*sum of its tangents"):
        ap.ForwardAccumulator([v, v], [1.0, 10.0])
    with pytest.raises(ValueError, match="more than once"):
        ap.ForwardAccumulator({"a": v, "b": [v]}, {"a": 1.0, "b": [1.0]})


# --- 8. an iterable that is not a nest -----------------------------------------------------------
def test_dict_views_and_generators_as_sources_say_to_pass_a_list():
    d = {"a": ap.Variable(1.0), "b": ap.Variable(2.0)}
    with ap.GradientTape(persistent=True) as t:
        z = d["a"] * d["b"]
    for sources in (d.values(), (s for s in d.values())):
        with pytest.raises(TypeError, match=r"pass list\(\.\.\.\) of it"):
            t.gradient(z, sources)
    assert [g.numpy() for g in t.gradient(z, list(d.values()))] == [2.0, 1.0]


# --- 2. Jacobians under a ForwardAccumulator (forward-over-reverse) --------------------------
def _f(x):
    return np.sin(x) * np.sum(x ** 2)


def _jac(x0):
    x = ap.constant(x0)
    with ap.GradientTape() as t:
        t.watch(x)
        y = _f(x)
    return t.jacobian(y, x).numpy()


def test_jacobian_under_an_accumulator_carries_its_tangent():
    x0, u = R.randn(3), R.randn(3)
    x = ap.constant(x0)
    with ap.ForwardAccumulator(x, u) as acc:
        with ap.GradientTape() as t:
            t.watch(x)
            y = _f(x)
        J = t.jacobian(y, x)
    np.testing.assert_allclose(J.numpy(), _jac(x0), rtol=1e-12)
    np.testing.assert_allclose(acc.jvp(J).numpy(), central(_jac, x0, u), rtol=1e-6, atol=1e-8)


def test_batch_jacobian_under_an_accumulator_carries_its_tangent():
    X0, U = R.randn(2, 3), R.randn(2, 3)

    def bjac(X0):
        X = ap.constant(X0)
        with ap.GradientTape() as t:
            t.watch(X)
            Y = np.tanh(X) * np.sum(X ** 2, axis=1, keepdims=True)
        return t.batch_jacobian(Y, X).numpy()

    X = ap.constant(X0)
    with ap.ForwardAccumulator(X, U) as acc:
        with ap.GradientTape() as t:
            t.watch(X)
            Y = np.tanh(X) * np.sum(X ** 2, axis=1, keepdims=True)
        BJ = t.batch_jacobian(Y, X)
    np.testing.assert_allclose(BJ.numpy(), bjac(X0), rtol=1e-12)
    np.testing.assert_allclose(acc.jvp(BJ).numpy(), central(bjac, X0, U), rtol=1e-6, atol=1e-8)


# --- 3. nested Jacobian targets ----------------------------------------------------------------
def test_jacobian_of_a_nested_target_is_nested_like_it():
    x0 = R.randn(2)
    x = ap.Variable(x0)
    with ap.GradientTape() as t:  # not persistent: every leaf still gets its Jacobian
        tg = {"s": x * 3.0, "pair": (np.sin(x), x[0] * x[1])}
    J = t.jacobian(tg, x)
    assert set(J) == {"s", "pair"} and type(J["pair"]) is tuple
    np.testing.assert_allclose(J["s"].numpy(), 3.0 * np.eye(2))
    np.testing.assert_allclose(J["pair"][0].numpy(), autograd.jacobian(anp.sin)(x0), rtol=1e-12)
    np.testing.assert_allclose(J["pair"][1].numpy(), [x0[1], x0[0]], rtol=1e-12)
    with pytest.raises(RuntimeError, match="already used"):
        t.jacobian(tg, x)
    with ap.GradientTape(persistent=True) as t:
        z = [x * 2.0, x * 3.0]
    Jz = t.jacobian(z, x, unconnected_gradients="zero")
    assert [j.numpy().tolist() for j in Jz] == [[[2.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [0.0, 3.0]]]
    with pytest.raises(TypeError, match="the target is None"):
        t.jacobian([z[0], None], x)


def test_batch_jacobian_of_a_nested_target_and_a_clear_error_for_a_list_source():
    X0 = R.randn(2, 3)
    X = ap.constant(X0)
    with ap.GradientTape(persistent=True) as t:
        t.watch(X)
        ys = [np.tanh(X), X * 2.0]
    bj = t.batch_jacobian(ys, X)
    ref = autograd.jacobian(anp.tanh)(X0)  # (2, 3, 2, 3): the per-example blocks on its diagonal
    np.testing.assert_allclose(bj[0].numpy(), np.stack([ref[i, :, i, :] for i in range(2)]), rtol=1e-12)
    np.testing.assert_allclose(bj[1].numpy(), np.stack([2.0 * np.eye(3)] * 2))
    with pytest.raises(TypeError, match="source must be one Tensor"):
        t.batch_jacobian(ys[0], [X])


# --- 5. escapes with only a ForwardAccumulator open ------------------------------------------
@pytest.mark.parametrize("escape", [
    lambda x: np.asarray(x),
    lambda x: np.array([x, x * 2.0]),
    lambda x: scipy.special.logsumexp(x),
], ids=["asarray", "array-of-tensors", "scipy-logsumexp"])
def test_implicit_escape_warns_under_an_accumulator_alone(escape):
    x = ap.Variable([1.0, 2.0, 3.0])
    with ap.ForwardAccumulator(x, [1.0, 0.0, 0.0]):
        with pytest.warns(ap.TapeEscapeWarning, match="recording ForwardAccumulator"):
            escape(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.asarray(ap.constant([1.0, 2.0]))  # no tangent: nothing lost, no warning


# --- 6. convert_to_tensor / constant of Tensors ------------------------------------------------
def test_convert_to_tensor_of_a_list_of_tensors_is_recorded():
    x, y = ap.Variable(1.5), ap.Variable(-2.0)
    with ap.GradientTape(persistent=True) as t:
        z = np.sum(ap.convert_to_tensor([x, y, 4.0]) * np.array([1.0, 3.0, 5.0]))
        c = ap.constant(x * x)  # tf.constant of a Tensor "even transmits gradients"
        e = ap.convert_to_tensor(x * x, dtype=np.float32)
    assert [g.numpy() for g in t.gradient(z, [x, y])] == [1.0, 3.0]
    assert z.numpy() == 1.5 - 6.0 + 20.0
    assert t.gradient(c, x).numpy() == 3.0 and t.gradient(e, x).numpy() == 3.0
    with ap.GradientTape() as t:
        with pytest.warns(ap.TapeEscapeWarning):
            k = ap.constant([x, y])  # as tf.constant: a constant, and the warning says so
        total = np.sum(k)
    # made of the escaped values: refused, naming the escape (fn41; TensorFlow's gradient would be None)
    with pytest.raises(TypeError, match=r"the target is a constant Tensor .* Every gradient would be None"):
        t.gradient(total, [x, y])


# --- 7. optimizer.iterations ----------------------------------------------------------------------
def test_optimizer_counts_its_updates_as_keras_iterations():
    v = ap.Variable([1.0, 2.0])
    opt = ap.optimizers.Adam(learning_rate=0.1)
    assert opt.iterations == 0
    opt.apply_gradients([(ap.constant([1.0, 1.0]), v)])
    opt.apply_gradients([(ap.constant([1.0, 1.0]), v)])
    with pytest.raises(ValueError):
        opt.apply_gradients([(ap.constant([np.nan, 1.0]), v)])
    assert opt.iterations == 2
    p = {"w": np.ones(2)}
    sgd = optim.SGD(learning_rate=0.1)
    sgd.step(p, {"w": np.ones(2)})
    assert sgd.iterations == 1 and p["w"].tolist() == [0.9, 0.9]
