"""ap.custom_gradient checks what grad_fn returns (tester 7's T20): each input's gradient has
exactly the input's shape (never broadcast), None is "no gradient" (as TensorFlow), another
real dtype is cast to the input's. Repro: a hand-written backward returning dX of shape (1, 3)
for a (4, 3) input was broadcast into a wrong (4, 3) gradient without a word."""

import gc

import autograd
import autograd.numpy as agn
import numpy as np
import pytest
from oracles import central

import autoprop as ap


@pytest.fixture(autouse=True)
def _free_exited_tapes():
    """A caught error's traceback holds its frames, and so the exited tapes, in a cycle: an
    exited tape alive listens for late operations (tape.explain), so a later test in this
    worker would see its observer called. Collect them after each test."""
    yield
    gc.collect()


NOT_BROADCAST = "the gradient of an input must have exactly its shape (it is not broadcast)"


def _gradient_error(fn, *xs):
    with ap.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        loss = ap.sum(fn(*xs))
    with pytest.raises(ValueError) as e:
        tape.gradient(loss, list(xs))
    return str(e.value)


def test_a_backward_summed_over_the_batch_is_refused_not_broadcast():
    class BuggyScale:  # y = 2 x; backward sums dX over the batch with keepdims: (1, 3)
        def forward(self, X):
            return 2 * X

        def backward(self, dY):
            return 2 * dY.sum(axis=0, keepdims=True)

    layer = BuggyScale()

    @ap.custom_gradient
    def manual(x):  # lesson 10, section 7's pattern
        y = layer.forward(x.numpy())
        return y, lambda dY: layer.backward(np.array(dY))

    x = ap.Variable(np.arange(12.0).reshape(4, 3))
    G = np.random.default_rng(0).standard_normal((4, 3))
    assert _gradient_error(lambda v: manual(v) * G, x) == (
        "custom_gradient(manual): grad_fn returned a gradient for argument 0 (x) of shape "
        f"(1, 3); the input has shape (4, 3), and {NOT_BROADCAST}"
    )


def test_a_smaller_gradient_and_a_python_number_are_refused():
    @ap.custom_gradient
    def f(x):
        return x.numpy() ** 2, lambda dy: 2 * x.numpy()[:1] * np.asarray(dy)[:1]

    @ap.custom_gradient
    def twice(a):
        return 2 * a.numpy(), lambda dy: 2.0  # ignores dy: right only for dy = 1

    x = ap.Variable([1.0, 2.0])
    assert _gradient_error(f, x) == (
        "custom_gradient(f): grad_fn returned a gradient for argument 0 (x) of shape (1,); "
        f"the input has shape (2,), and {NOT_BROADCAST}"
    )
    assert _gradient_error(lambda a: twice(a) * np.array([1.0, 10.0]), x) == (
        "custom_gradient(twice): grad_fn returned a gradient for argument 0 (a) of shape (); "
        f"the input has shape (2,), and {NOT_BROADCAST}"
    )


def test_the_message_names_the_argument_by_position_and_name_and_a_variable():
    w = ap.Variable(np.ones(3), name="w")

    @ap.custom_gradient
    def mul(scale, a, b):  # scale is a number: a constant, its gradient None (as TF)
        def grad_fn(dy):
            return None, dy * b, (dy * a)[:2]
        return scale * a * b, grad_fn

    a, b = ap.constant([1.0, 2.0, 3.0]), ap.constant([4.0, 5.0, 6.0])
    assert _gradient_error(lambda a_, b_: mul(2.0, a_, b_), a, b) == (
        "custom_gradient(mul): grad_fn returned a gradient for argument 2 (b) of shape (2,); "
        f"the input has shape (3,), and {NOT_BROADCAST}"
    )

    @ap.custom_gradient
    def scaled(x):
        def grad_fn(dy, variables=None):
            return dy * w, [ap.sum(dy * x)]  # a scalar for the (3,) Variable w
        return x * w, grad_fn

    with ap.GradientTape() as tape:
        y = ap.sum(scaled(ap.constant([1.0, 2.0, 3.0])))
    with pytest.raises(ValueError) as e:
        tape.gradient(y, w)
    assert str(e.value) == (
        "custom_gradient(scaled): grad_fn returned a gradient for variable 'w' of shape (); "
        f"the input has shape (3,), and {NOT_BROADCAST}"
    )


def test_a_scalar_input_takes_a_scalar_gradient():
    @ap.custom_gradient
    def cube(x):
        return x.numpy() ** 3, lambda dy: dy * 3 * x ** 2

    @ap.custom_gradient
    def cube_1d(x):
        return x.numpy() ** 3, lambda dy: np.reshape(dy * 3 * x.numpy() ** 2, (1,))

    x = ap.Variable(2.0)
    with ap.GradientTape() as tape:
        y = cube(x)
    assert tape.gradient(y, x).numpy() == 12.0
    assert _gradient_error(cube_1d, x) == (
        "custom_gradient(cube_1d): grad_fn returned a gradient for argument 0 (x) of shape "
        f"(1,); the input has shape (), and {NOT_BROADCAST}"
    )


def test_the_check_holds_when_an_outer_tape_records_the_backward_pass():
    @ap.custom_gradient
    def f(x):
        return x * x, lambda dy: ap.sum(2 * dy * x, axis=0, keepdims=True)

    x = ap.Variable(np.ones((2, 3)))
    with ap.GradientTape() as outer:
        with ap.GradientTape() as inner:
            y = ap.sum(f(x))
        with pytest.raises(ValueError, match=r"argument 0 \(x\) of shape \(1, 3\); the input "
                                             r"has shape \(2, 3\)"):
            inner.gradient(y, x)
    del outer


def test_none_is_no_gradient_as_tensorflow():
    @ap.custom_gradient
    def f(a, b):
        return a.numpy() * b.numpy(), lambda dy: (None, dy * a)

    a, b = ap.Variable([1.0, 2.0]), ap.Variable([3.0, 4.0])
    with ap.GradientTape(persistent=True) as tape:
        y = ap.sum(f(a, b))
        z = y + ap.sum(a * a)  # a reaches z another way too
    da, db = tape.gradient(y, [a, b])
    assert da is None
    np.testing.assert_array_equal(db.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(tape.gradient(y, a, unconnected_gradients="zero").numpy(),
                                  [0.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(z, a).numpy(), [2.0, 4.0])  # only a * a
    assert tape.gradient(z, a).numpy().dtype == np.float64
    assert tape.explain(y, a).endswith(
        "so the gradient is not None (it may be zero, e.g. at a kink or where a mask is 0) "
        "unless a custom_gradient's grad_fn returned None ('no gradient') for it: the paths "
        "pass custom_gradient(f)."
    )


def test_another_real_dtype_is_cast_to_the_inputs_a_complex_one_is_refused():
    @ap.custom_gradient
    def f(x):
        return 2 * x.numpy(), lambda dy: np.asarray(dy, np.float64) * 2.5

    @ap.custom_gradient
    def g(x):
        return 2 * x.numpy(), lambda dy: np.asarray(dy) * (2 + 1j)

    x = ap.Variable(np.ones(3, np.float32))
    with ap.GradientTape() as tape:
        y = ap.sum(f(x))
    grad = tape.gradient(y, x)
    assert grad.dtype == np.float32
    np.testing.assert_array_equal(grad.numpy(), np.full(3, 2.5, np.float32))
    message = _gradient_error(g, x)
    assert message == (
        "custom_gradient(g): grad_fn returned a gradient for argument 0 (x) of complex dtype "
        "complex64; the input is real (float32): return the gradient's real part if that is "
        "what you mean"
    )


def test_a_right_custom_gradient_agrees_with_autograd():
    # a stable softplus with its hand-written gradient, inside a larger taped function
    @ap.custom_gradient
    def softplus(x):
        def grad_fn(dy):
            return dy * ap.sigmoid(x)
        return ap.logaddexp(0.0, x), grad_fn

    X = np.random.default_rng(3).standard_normal((4, 3))
    W = np.random.default_rng(4).standard_normal((3, 2))
    x = ap.Variable(X)
    with ap.GradientTape() as tape:
        loss = ap.sum(ap.tanh(softplus(x) @ W) ** 2)
    ours = tape.gradient(loss, x).numpy()
    ref = autograd.grad(lambda v: agn.sum(agn.tanh(agn.logaddexp(0.0, v) @ W) ** 2))(X)
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-14)


# --- f reads a Variable (TF's grad_fn(*upstream, variables=None)) ------------------------
def _tanh_layer(W):
    """y = tanh(W @ x) with W a Variable read inside f, and its hand-written VJPs
    (lesson 02's tanh' = 1 - tanh^2; dW = outer(delta, x), dx = W^T delta)."""
    @ap.custom_gradient
    def layer(x):
        t = ap.tanh(W @ x)  # W read by an operation: f uses it (TF's VariableWatcher)

        def grad_fn(dy, variables=None):
            delta = np.asarray(dy) * (1 - t.numpy() ** 2)
            assert variables is not None and len(variables) == 1 and variables[0] is W
            return W.numpy().T @ delta, [np.outer(delta, x.numpy())]
        return t, grad_fn
    return layer


def test_a_variable_read_inside_f_gets_grad_fn_s_gradient_matching_finite_differences():
    rng = np.random.default_rng(5)
    W0, x0, c = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal(2)
    W = ap.Variable(W0, name="W")
    layer = _tanh_layer(W)
    x = ap.constant(x0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        loss = ap.sum(layer(x) * c) ** 2
    dx, dW = tape.gradient(loss, [x, W])

    def plain(Wv, xv):
        return np.sum(np.tanh(Wv @ xv) * c) ** 2

    np.testing.assert_allclose(dx.numpy(), central(lambda v: plain(W0, v), x0, h=1e-6),
                               rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(dW.numpy(), central(lambda v: plain(v, x0), W0, h=1e-6),
                               rtol=1e-7, atol=1e-9)
    ag = autograd.grad(lambda Wv, xv: agn.sum(agn.tanh(Wv @ xv) * c) ** 2, argnum=(0, 1))(W0, x0)
    np.testing.assert_allclose(dW.numpy(), ag[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dx.numpy(), ag[1], rtol=1e-12, atol=1e-14)


def test_a_variable_passed_as_an_argument_is_an_input_not_one_of_the_variables():
    # TF: variables = those f read that are not among its inputs. Before, x (a Variable
    # argument that f reads) was also counted as a variable: "expected 1 and 2" for a
    # right grad_fn.
    w = ap.Variable(2.0, name="w")
    seen = {}

    @ap.custom_gradient
    def f(x):
        def grad_fn(dy, variables=None):
            seen["variables"] = variables
            return dy * w * 3.0, [dy * x * 5.0]  # deliberately not the true derivative
        return x * w, grad_fn

    x = ap.Variable(3.0, name="x")
    with ap.GradientTape() as tape:
        y = f(x)
    dx, dw = tape.gradient(y, [x, w])
    assert [v.name for v in seen["variables"]] == ["w"]
    assert (dx.numpy(), dw.numpy()) == (6.0, 15.0)  # grad_fn's numbers, each for its source


def test_f_reading_a_variable_needs_grad_fn_to_take_variables_as_tensorflow():
    w = ap.Variable(2.0, name="w")

    @ap.custom_gradient
    def scale(x):
        return x * w, lambda dy: dy * w  # w's gradient would be lost without a word

    with pytest.raises(TypeError) as e:
        scale(ap.constant(1.0))
    assert str(e.value) == (
        "custom_gradient: grad_fn of scale must accept the keyword argument 'variables', "
        "since scale uses variables: ['w'] (write grad_fn(*upstream, variables=None) "
        "returning (input_grads, variable_grads), as tf.custom_gradient)"
    )


def test_grad_fn_taking_variables_when_f_reads_none_is_called_without_them():
    # TF calls grad_fn(*upstream) when f read no Variable, so it returns the input
    # gradients alone; a non-trainable Variable is not watched, so not one of them
    frozen = ap.Variable(4.0, trainable=False)

    @ap.custom_gradient
    def f(x):
        def grad_fn(dy, variables=None):
            assert variables is None
            return dy * frozen
        return x * frozen, grad_fn

    x = ap.constant(2.0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert tape.gradient(y, x).numpy() == 4.0


def test_grad_fn_with_kwargs_receives_the_variables():
    w = ap.Variable(np.array([1.0, -2.0]), name="w")

    @ap.custom_gradient
    def dot(x):
        def grad_fn(dy, **kwargs):
            (v,) = kwargs["variables"]
            return dy * v, [dy * x]
        return ap.sum(x * w), grad_fn

    x = ap.constant([3.0, 5.0])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = dot(x)
    dx, dw = tape.gradient(y, [x, w])
    np.testing.assert_array_equal(dx.numpy(), [1.0, -2.0])
    np.testing.assert_array_equal(dw.numpy(), [3.0, 5.0])


def test_grad_fn_not_returning_the_pair_is_named():
    w = ap.Variable(2.0, name="w")

    @ap.custom_gradient
    def f(x):
        return x * w, lambda dy, variables=None: dy * w  # the input gradient alone

    x = ap.constant(1.0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    with pytest.raises(ValueError) as e:
        tape.gradient(y, x)
    assert str(e.value) == (
        "custom_gradient: grad_fn of f was called with variables= (1 Variable(s) f read) "
        "and must return (input_grads, variable_grads), variable_grads a list of one "
        "gradient per variable; got Tensor"
    )


def test_a_numpy_input_is_an_input_as_tensorflow_converts_it_and_the_variable_is_right():
    """Tester 8's V6: f(numpy X) reading a Variable w raised "returned 1 input gradients
    and 1 variable gradients; expected 0 and 1" (the ndarray was not counted as an
    input), and fit of a layer using it crashed. TF converts it to a tensor: one input."""
    rng = np.random.default_rng(8)
    X, w0, c = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal((2, 3))
    w = ap.Variable(w0, name="w")
    seen = []

    @ap.custom_gradient
    def f(x):
        seen.append(type(x))

        def grad(dy, variables=None):
            return dy * w, [ap.sum(dy * x, axis=0)]
        return x * w, grad

    with ap.GradientTape() as tape:
        loss = ap.sum(f(X) * c) ** 2
    dw = tape.gradient(loss, w)
    assert len(seen) == 1 and issubclass(seen[0], ap.Tensor)  # f sees a Tensor, as TF
    expected = central(lambda v: np.sum(X * v * c) ** 2, w0, h=1e-6)
    np.testing.assert_allclose(dw.numpy(), expected, rtol=1e-7, atol=1e-9)
    assert not np.allclose(expected, 0)

    class Scale(ap.layers.Layer):  # the tester's cg4: fit through such a layer
        def build(self, s):
            self.w = self.add_weight(shape=(s[-1],), initializer="ones", name="w")

        def call(self, x):
            return f_scale(x, self.w)

    def f_scale(x, wv):
        @ap.custom_gradient
        def g(x):
            def grad(dy, variables=None):
                return dy * wv, [ap.sum(dy * x, axis=0)]
            return x * wv, grad
        return g(x)

    class M(ap.Model):
        def __init__(self):
            super().__init__()
            self.s = Scale()

        def call(self, x, training=False):
            return self.s(x)

    Xf = np.arange(6.).reshape(2, 3)
    m = M()
    m.compile(optimizer=ap.optimizers.SGD(0.1), loss=ap.losses.MeanSquaredError())
    m.fit(Xf, np.zeros((2, 3)), epochs=1, verbose=0, batch_size=2, shuffle=False)
    # L = mean((x w)^2) over 6 entries: dL/dw_j = sum_i 2 x_ij^2 w_j / 6 at w = 1
    np.testing.assert_allclose(m.s.w.numpy(), 1 - 0.1 * 2 * (Xf ** 2).sum(0) / 6, rtol=1e-13)


# --- number arguments: constants with a gradient slot, as tf.custom_gradient ---------------
# TensorFlow converts every positional argument (a Python float too) and expects one
# gradient per argument; a number's is None or a value, never used. Before, a number got no
# slot: grad_fn(dy) -> (dx, None) for f(x, 3.0) raised "returned 2 ...; expected 1".
@ap.custom_gradient
def _scaled_sin(x, k):
    seen_k.append(k)

    def grad_fn(dy):
        return dy * np.cos(x.numpy()) * k, None
    return np.sin(x.numpy()) * k, grad_fn


seen_k = []


@pytest.mark.parametrize("k", [3.0, 2, True, np.float32(0.5), np.int64(-3)])
def test_a_number_argument_is_a_constant_whose_gradient_slot_is_none(k):
    x0 = np.array([0.3, -1.1, 2.0])
    weights = np.array([1.0, -2.0, 0.5])
    x = ap.Variable(x0)
    seen_k.clear()
    with ap.GradientTape() as tape:
        loss = ap.sum(_scaled_sin(x, k) * weights)
    assert seen_k == [k] and type(seen_k[0]) is type(k)  # f receives the number itself
    got = tape.gradient(loss, x)
    assert got.dtype == np.float64
    want = autograd.grad(lambda v: agn.sum(agn.sin(v) * float(k) * weights))(x0)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if type(k) is np.float32 else 1e-13)
    fd = central(lambda v: np.sum(np.sin(v) * float(k) * weights), x0.copy(), h=1e-6)
    np.testing.assert_allclose(got.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_a_value_for_a_number_is_checked_and_dropped_and_the_order_is_the_arguments():
    @ap.custom_gradient
    def axpy(a, alpha, b):  # a number between two Tensors: gradients in argument order
        def grad_fn(dy):
            return dy * alpha, ap.sum(dy * a), dy  # a value for alpha: accepted, unused
        return alpha * a.numpy() + b.numpy(), grad_fn

    a, b = ap.Variable([1.0, 2.0]), ap.Variable([3.0, 4.0])
    with ap.GradientTape() as tape:
        loss = ap.sum(axpy(a, 2.5, b) * np.array([1.0, 10.0]))
    da, db = tape.gradient(loss, [a, b])
    np.testing.assert_array_equal(da.numpy(), [2.5, 25.0])
    np.testing.assert_array_equal(db.numpy(), [1.0, 10.0])


def test_grad_fn_leaving_out_a_number_s_slot_is_refused_as_tensorflow():
    @ap.custom_gradient
    def times(x, k):
        return x.numpy() * k, lambda dy: dy * k  # one gradient: TF expects 2

    x = ap.Variable([1.0, 2.0])
    assert _gradient_error(lambda v: times(v, 3), x) == (
        "custom_gradient: grad_fn of times returned 1 input gradients and 0 variable "
        "gradients; expected 2 and 0: one per argument that is a Tensor or a number, as "
        "tf.custom_gradient; argument 1 (k) is a number, a constant: return None for it"
    )

    @ap.custom_gradient
    def shaped(x, k):
        return x.numpy() * k, lambda dy: (dy * k, dy)  # k is a scalar: dy (2,) is not its

    assert _gradient_error(lambda v: shaped(v, 3.0), x) == (
        "custom_gradient(shaped): grad_fn returned a gradient for argument 1 (k) of shape (2,); "
        f"the input has shape (), and {NOT_BROADCAST}"
    )


def test_keyword_and_non_numeric_arguments_get_no_slot():
    @ap.custom_gradient
    def act(x, name, *, scale=1.0):
        assert name == "relu"
        return np.maximum(x.numpy(), 0) * scale, lambda dy: dy * (x.numpy() > 0) * scale

    x = ap.Variable([-1.0, 2.0])
    with ap.GradientTape() as tape:
        loss = ap.sum(act(x, "relu", scale=2.0))
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [0.0, 2.0])


@pytest.mark.parametrize("flag", [True, np.bool_(True), np.array(True), np.array([True, False])],
                         ids=["bool", "np.bool_", "0-d bool array", "bool array"])
def test_a_boolean_argument_has_a_gradient_slot_as_tensorflow_counts_it(flag):
    # verify9 X15: Python's True counted (TF converts it to a bool tensor), np.bool_(True) and
    # np.array(True) did not: grad_fn returning (dx, None) raised "returned 2 ... expected 1"
    @ap.custom_gradient
    def pick(x, on):
        def grad_fn(dy):
            return dy * np.asarray(on, dtype=float), None
        return x.numpy() * np.asarray(on, dtype=float), grad_fn

    x = ap.Variable([1.0, 2.0])
    with ap.GradientTape() as tape:
        loss = ap.sum(pick(x, flag) * np.array([3.0, 5.0]))
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), np.array([3.0, 5.0]) * np.asarray(flag))

    @ap.custom_gradient
    def forgot(x, on):
        return x.numpy() * 1.0, lambda dy: dy  # one gradient: the boolean's slot is missing

    assert _gradient_error(lambda v: forgot(v, flag), x) == (
        "custom_gradient: grad_fn of forgot returned 1 input gradients and 0 variable "
        "gradients; expected 2 and 0: one per argument that is a Tensor, a number or a boolean, "
        "as tf.custom_gradient; argument 1 (on) is a boolean, a constant: return None for it"
    )


def test_a_fraction_operand_is_refused_not_a_silent_none_gradient():
    # verify9 X15: x * Fraction(2, 1) made an object-dtype Tensor, the tape cut it, and
    # tape.gradient returned None without a word (in custom_gradient and outside it)
    from fractions import Fraction

    x = ap.Variable([1.0, 2.0, 3.0])
    with ap.GradientTape(), pytest.raises(TypeError) as e:
        x * Fraction(2, 1)
    assert str(e.value) == (
        "autoprop.multiply(float64(3,), Fraction(2, 1)): the result has dtype object (an operand "
        "of type Fraction is kept as a Python object by numpy), which no tape can differentiate. "
        "Convert it to a float first (float(value), or np.asarray(value, dtype=float))")

    @ap.custom_gradient
    def scale(v, a):
        return v * a, lambda dy: (dy * a, None)

    with ap.GradientTape(), pytest.raises(TypeError, match="an operand of type Fraction"):
        scale(x, Fraction(2, 1))
    with ap.ForwardAccumulator(x, np.ones(3)), pytest.raises(TypeError, match="dtype object"):
        x * Fraction(1, 3)
    with ap.GradientTape() as tape:  # converted first: the gradient, 1/3
        y = ap.sum(x * float(Fraction(1, 3)))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.full(3, 1 / 3), rtol=1e-15)
