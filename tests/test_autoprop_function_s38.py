"""autoprop.function (session 38): a replay equals the eager step bit for bit, and every value a
trace would freeze is refused at trace time with the line named.

Each model is built twice with the same seeds; one copy steps eagerly, the other through
``@ap.function``, on the same batches (a new batch each step: the replay reads its arguments
anew). Losses, gradients, variables (and BatchNorm's running statistics) must be equal with
``np.array_equal``: the replay runs the same forwards and VJPs on the same values in the same
order, so there is no tolerance to give.
"""

import numpy as np
import pytest

import autoprop as ap
from autoprop import layers as al
from autoprop import losses as alo
from autoprop.tracing import TraceError

STEPS = 4


def _digits(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 64))
    y = rng.integers(0, 10, n).astype(np.int64)
    return X, y


def _mlp():
    return al.Sequential(al.Linear(64, 32, rng=0), al.Tanh(), al.Linear(32, 10, rng=1))


def _cnn():  # the model of `gradcheck train --model cnn` (channels 4)
    return al.Sequential(al.Conv2D(1, 4, 3, padding=1, rng=0), al.ReLU(), al.MaxPool2D(2), al.Flatten(),
                         al.Linear(4 * 16, 10, rng=1))


class _Recurrent(al.Model):
    def __init__(self, kind):
        super().__init__()
        self.rnn = getattr(al, kind)(8, 16, rng=0)
        self.head = al.Linear(16, 10, rng=1)

    def call(self, x, training=False):
        return self.head(self.rnn(x)[:, -1])


def _bn_dropout():
    return al.Sequential(al.Linear(64, 32, rng=0), al.BatchNorm1D(32), al.ReLU(), al.Dropout(0.3, rng=7),
                         al.Linear(32, 10, rng=1))


def _step_fn(model, opt, loss_fn):
    def step(x, y):
        with ap.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads
    return step


def _batches(shape, n=8, steps=STEPS):
    rng = np.random.default_rng(3)
    return [(rng.random((n,) + shape), rng.integers(0, 10, n).astype(np.int64)) for _ in range(steps)]


def _run_both(make_model, make_opt, shape, n=8):
    """Step an eager copy and an @ap.function copy side by side; assert every value equal."""
    m_eager, m_fn = make_model(), make_model()
    for a, b in zip(m_eager.trainable_variables, m_fn.trainable_variables):
        assert np.array_equal(a.numpy(), b.numpy())
    eager = _step_fn(m_eager, make_opt(), alo.SoftmaxCrossEntropy())
    traced = ap.function(_step_fn(m_fn, make_opt(), alo.SoftmaxCrossEntropy()))
    # every eager step first: an eager BatchNorm step sets its layer's attributes, which makes the
    # function trace again (tensor._STATE); here the function's calls after the first are replays
    expected = [(le.numpy(), [g.numpy() for g in ge], [v.numpy() for v in m_eager.trainable_variables])
                for le, ge in (eager(x, y) for x, y in _batches(shape, n))]
    for (x, y), (le, ge, ve) in zip(_batches(shape, n), expected):
        lf, gf = traced(x, y)
        assert np.array_equal(le, lf.numpy())
        for a, b in zip(ge, gf):
            assert np.array_equal(a, b.numpy())
        for a, b in zip(ve, m_fn.trainable_variables):
            assert np.array_equal(a, b.numpy())
    assert traced.trace_count == 1 and traced.traces == 1  # one trace, then replays
    return m_eager, m_fn


@pytest.mark.parametrize("opt", ["sgd", "momentum", "adam"])
def test_mlp_replay_is_eager_bit_for_bit(opt):
    make = {"sgd": lambda: ap.optimizers.SGD(learning_rate=0.1),
            "momentum": lambda: ap.optimizers.SGD(learning_rate=0.1, momentum=0.9),
            "adam": lambda: ap.optimizers.Adam(learning_rate=0.01)}[opt]
    _run_both(_mlp, make, (64,), n=16)


def test_cnn_replay_is_eager_bit_for_bit():
    _run_both(_cnn, lambda: ap.optimizers.SGD(learning_rate=0.1, momentum=0.9), (1, 8, 8))


@pytest.mark.parametrize("kind", ["LSTM", "RNN"])
def test_recurrent_replay_is_eager_bit_for_bit(kind):
    _run_both(lambda: _Recurrent(kind), lambda: ap.optimizers.Adam(learning_rate=0.01), (5, 8))


def test_batchnorm_and_dropout_replay_is_eager_bit_for_bit():
    m_eager, m_fn = _run_both(_bn_dropout, lambda: ap.optimizers.SGD(learning_rate=0.1), (64,), n=16)
    bn_e, bn_f = m_eager.layers[1], m_fn.layers[1]
    assert np.array_equal(bn_e.running_mean, bn_f.running_mean)
    assert np.array_equal(bn_e.running_var, bn_f.running_var)
    assert not np.array_equal(bn_f.running_mean, np.zeros(32))  # (updated at each replay, not frozen)
    drop = m_fn.layers[3]
    assert drop.mask is not None


def test_inference_batchnorm_reads_the_running_statistics_at_each_replay():
    model = _bn_dropout()
    ref = _bn_dropout()
    predict = ap.function(lambda x: model(x, training=False))
    x, _ = _batches((64,), 16)[0]
    predict(x)
    for bn in (model.layers[1], ref.layers[1]):
        bn.running_mean = np.full(32, 0.25)
        bn.running_var = np.full(32, 2.0)
    assert np.array_equal(predict(x).numpy(), ref(x, training=False).numpy())


def test_a_new_shape_traces_again_and_stays_exact():
    make = lambda: ap.optimizers.SGD(learning_rate=0.1)  # noqa: E731
    m_e, m_f = _mlp(), _mlp()
    eager, traced = _step_fn(m_e, make(), alo.SoftmaxCrossEntropy()), None
    traced = ap.function(_step_fn(m_f, make(), alo.SoftmaxCrossEntropy()))
    for n in (16, 8, 16, 8):
        x, y = _digits(n, seed=n)
        le, _ = eager(x, y)
        lf, _ = traced(x, y)
        assert np.array_equal(le.numpy(), lf.numpy())
    assert traced.trace_count == 2
    for a, b in zip(m_e.trainable_variables, m_f.trainable_variables):
        assert np.array_equal(a.numpy(), b.numpy())


def test_overlapping_slices_accumulate_as_the_walk_does():
    def f(x):
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = (x[:2] * x[1:]).sum() + np.tanh(x[0]).sum() + (x[::2] ** 2).sum() + (x * x).sum()
        return y, tape.gradient(y, x)

    traced = ap.function(f)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.standard_normal((3, 4))
        (ye, ge), (yf, gf) = f(ap.constant(x)), traced(x)
        assert np.array_equal(ye.numpy(), yf.numpy()) and np.array_equal(ge.numpy(), gf.numpy())
    assert traced.trace_count == 1


def _freeze_layer(m):
    m.layers[0].trainable = False  # model.trainable_variables is two Variables fewer


def _freeze_variable(m):
    m.trainable_variables[0].trainable = False  # Variable.trainable: the replay read the old list (the lead's review)


@pytest.mark.parametrize("freeze", [_freeze_layer, _freeze_variable], ids=["layer", "variable"])
def test_a_layer_or_variable_frozen_between_calls_traces_again(freeze):
    models = [_mlp(), _mlp()]
    steps = [_step_fn(models[0], ap.optimizers.SGD(learning_rate=0.1), alo.SoftmaxCrossEntropy()),
             ap.function(_step_fn(models[1], ap.optimizers.SGD(learning_rate=0.1), alo.SoftmaxCrossEntropy()))]
    for i, (x, y) in enumerate(_batches((64,), 16)):
        if i == 2:
            for m in models:
                freeze(m)
        (le, _), (lf, _) = (step(x, y) for step in steps)
        assert np.array_equal(le.numpy(), lf.numpy())
        for a, b in zip(models[0].variables, models[1].variables):
            assert np.array_equal(np.asarray(a), np.asarray(b))
    assert steps[1].traces == 2 and steps[1].trace_count == 1
    assert len(models[1].trainable_variables) == len(models[0].trainable_variables)


def test_operations_after_a_tape_closes_are_traced():
    # a tape that stops listening after its block (unwatch) once cleared the core's flag for the
    # trace too, so the trace missed every operation after it (a KeyError in the plan, or a step lost)
    v = ap.Variable(np.array([1.0, 2.0]))

    def f(x):
        with ap.GradientTape() as tape:
            tape.watch(x)  # (a tape that watched a tensor listens after its block until gradient)
            y = (x * v).sum()
        g = tape.gradient(y, v)
        with ap.GradientTape() as tape2:
            z = (np.tanh(x) * v).sum()
        return g * 2.0 + tape2.gradient(z, v) + x, y

    traced = ap.function(f)
    for k in range(3):
        x = np.array([0.5, -1.0]) * (k + 1)
        (ge, ye), (gf, yf) = f(ap.constant(x)), traced(x)
        assert np.array_equal(ge.numpy(), gf.numpy()) and np.array_equal(ye.numpy(), yf.numpy())


def test_a_variable_assigned_between_calls_is_read_at_replay():
    v = ap.Variable(np.array([1.0, 2.0]))
    f = ap.function(lambda x: x * v)
    x = np.array([3.0, 4.0])
    assert f(x).numpy().tolist() == [3.0, 8.0]
    v.assign(np.array([10.0, 20.0]))
    assert f(x).numpy().tolist() == [30.0, 80.0]


def test_a_method_is_traced_per_instance_and_tensor_arguments_replay():
    class Scaler:
        def __init__(self, k):
            self.k = ap.Variable(np.array(k))

        @ap.function
        def __call__(self, x):
            return x * self.k

    a, b = Scaler(2.0), Scaler(3.0)
    for x in (np.array([1.0, 2.0]), ap.constant([4.0, 5.0]), ap.constant([6.0, 7.0])):
        assert a(x).numpy().tolist() == (np.asarray(x) * 2.0).tolist()
        assert b(x).numpy().tolist() == (np.asarray(x) * 3.0).tolist()
    assert a.__call__.trace_count == 2  # an array, then a Tensor of the same shape: two signatures


def test_python_side_effects_run_only_while_tracing():
    seen = []

    @ap.function
    def f(x):
        seen.append(1)
        return x * 2.0

    for _ in range(3):
        f(np.ones(2))
    assert seen == [1]


def test_labels_are_checked_at_each_replay():
    step = ap.function(_step_fn(_mlp(), ap.optimizers.SGD(learning_rate=0.1), alo.SoftmaxCrossEntropy()))
    x, y = _digits(16)
    step(x, y)
    y[3] = -1  # a negative label would index the last class silently
    with pytest.raises(ValueError, match="y_true"):
        step(x, y)


# ---------------------------------------------------------------------------- refusals
def _trace_error(fn, *args, match):
    f = ap.function(fn)
    with pytest.raises(TraceError, match=match) as info:
        f(*args)
    assert "test_autoprop_function_s38.py:" in str(info.value)  # the line is named
    assert f.trace_count == 0
    return str(info.value)


@pytest.mark.parametrize("conversion, what", [
    (lambda t: float(t.sum()), r"float\(\)"),
    (lambda t: int(t[0]), r"int\(\)"),
    (lambda t: t.numpy(), r"\.numpy\(\)"),
    (lambda t: np.asarray(t), "numpy conversion"),
    (lambda t: t.sum().item(), r"\.item\(\)"),
    (lambda t: t if t.sum() > 0 else -t, r"bool\(\)"),
    (lambda t: list(range(t[0])), r"operator\.index"),
])
def test_converting_a_traced_tensor_is_refused(conversion, what):
    _trace_error(conversion, np.array([1.0, 2.0]), match=what)


@pytest.mark.parametrize("fn, what", [
    (lambda t: t * 2.0 if np.allclose(t, 1.0) else t * 3.0, "np.allclose"),
    (lambda t: t * np.count_nonzero(t > 1.5), "np.count_nonzero"),
    (lambda t: t * 2.0 if np.any(t > 5.0) else t, "np.any"),
])
def test_a_plain_value_computed_from_a_traced_tensor_is_refused(fn, what):
    # eagerly these give a Python bool or int: the replay would keep the first call's (a flipped
    # branch, a wrong count) had the trace not refused it
    _trace_error(fn, np.array([1.0, 2.0]), match=what)


def test_custom_gradient_is_refused():
    @ap.custom_gradient
    def double(x):
        return x * 2.0, lambda g: g * 2.0

    _trace_error(lambda x: double(x) + 1.0, np.array([1.0, 2.0]), match="custom_gradient")


def test_np_random_is_refused():
    msg = _trace_error(lambda x: x * np.random.rand(2), np.ones(2), match="np.random.rand")
    assert "argument" in msg


def test_a_numpy_constant_is_refused_not_frozen():
    _trace_error(lambda x: x * np.array([1.0, 2.0]), np.ones(2), match="neither an argument")
    rng = np.random.default_rng(0)
    _trace_error(lambda x: x + rng.normal(size=2), np.ones(2), match="neither an argument")


def test_a_variable_made_inside_is_refused():
    def f(x):
        v = ap.Variable(np.ones(2))
        v.assign_add(x)
        return v * 1.0

    def g(x):
        return x * ap.Variable(np.ones(2))

    _trace_error(f, np.ones(2), match="Variable made inside")
    _trace_error(g, np.ones(2), match="Variable made inside")


def test_a_variable_assigned_inside_is_assigned_at_each_replay():
    v = ap.Variable(np.zeros(2))
    counter = ap.Variable(np.zeros(()))

    @ap.function
    def f(x):
        v.assign_add(x * 2.0)
        counter.assign_add(1.0)
        return v * 1.0

    for k in range(1, 4):
        out = f(np.array([1.0, 2.0]))
        assert out.numpy().tolist() == [2.0 * k, 4.0 * k]
    assert counter.numpy() == 3.0


def test_a_tensor_made_inside_from_a_numpy_value_is_refused():
    _trace_error(lambda x: x * ap.constant(np.array([1.0, 2.0])), np.ones(2), match="made inside the function")


def _with_tape(**kw):
    def f(x):
        with ap.GradientTape(**kw) as tape:
            tape.watch(x)
            y = (x * x).sum()
        return tape.gradient(y, x)
    return f


@pytest.mark.parametrize("kw, what", [({"persistent": True}, "persistent"),
                                      ({"watch_accessed_variables": False}, "watch_accessed_variables")])
def test_tape_options_are_refused(kw, what):
    _trace_error(_with_tape(**kw), np.ones(2), match=what)


def test_jacobian_nested_tapes_stop_recording_and_forward_mode_are_refused():
    def jac(x):
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.jacobian(y, x)

    def nested(x):
        with ap.GradientTape() as outer:
            outer.watch(x)
            with ap.GradientTape() as inner:
                inner.watch(x)
                y = (x * x).sum()
            g = inner.gradient(y, x)
        return g

    def paused(x):
        with ap.GradientTape() as tape:
            tape.watch(x)
            with tape.stop_recording():
                y = x * 2.0
        return y

    def forward(x):
        with ap.ForwardAccumulator(x, np.ones(2)):
            y = x * 2.0
        return y

    _trace_error(jac, np.ones(2), match="jacobian")
    _trace_error(nested, np.ones(2), match="nested")
    _trace_error(paused, np.ones(2), match="stop_recording")
    _trace_error(forward, np.ones(2), match="ForwardAccumulator")


def test_a_call_while_a_tape_records_is_refused():
    f = ap.function(lambda x: x * 2.0)
    x = ap.Variable(np.ones(2))
    with ap.GradientTape():
        with pytest.raises(TraceError, match="records"):
            f(x)


# ---------------------------------------------------------------------------- random programs
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_UNARY = [np.tanh, np.sin, np.square, np.negative, lambda t: t * 0.5, lambda t: t.T.T, lambda t: t[:, ::-1]]
_BINARY = [np.add, np.multiply, np.subtract, lambda a, b: np.maximum(a, b), lambda a, b: a @ b.T @ a]
_OP = st.one_of(st.tuples(st.just(1), st.integers(0, len(_UNARY) - 1), st.integers(0, 20)),
                st.tuples(st.just(2), st.integers(0, len(_BINARY) - 1), st.integers(0, 20), st.integers(0, 20)))


def _program(ops, W):
    def prog(x):
        with ap.GradientTape() as tape:
            tape.watch(x)
            pool = [x, W]
            for op in ops:
                if op[0] == 1:
                    pool.append(_UNARY[op[1]](pool[op[2] % len(pool)]))
                else:
                    pool.append(_BINARY[op[1]](pool[op[2] % len(pool)], pool[op[3] % len(pool)]))
            loss = np.sum(pool[-1]) + np.sum(pool[len(pool) // 2])  # (a reused value: gradients accumulate)
        return loss, tape.gradient(loss, [x, W])
    return prog


@settings(max_examples=30, deadline=None)
@given(ops=st.lists(_OP, min_size=1, max_size=8), seed=st.integers(0, 2**16))
def test_random_programs_replay_as_eager(ops, seed):
    rng = np.random.default_rng(seed)
    W = ap.Variable(rng.standard_normal((3, 3)))
    eager, traced = _program(ops, W), ap.function(_program(ops, W))
    for _ in range(3):
        x = rng.standard_normal((3, 3))
        (le, ge), (lf, gf) = eager(ap.constant(x)), traced(x)
        assert np.array_equal(le.numpy(), lf.numpy())
        for a, b in zip(ge, gf):
            assert (a is None) == (b is None)
            if a is not None:
                assert np.array_equal(a.numpy(), b.numpy())
        W.assign(W.numpy() * 0.9)  # read by reference at the next replay
    assert traced.trace_count == 1


class _Blocks(ap.Model):
    """A Model holding its layers in its own list and dict (verify38: in-place changes to them were replayed)."""

    def __init__(self):
        super().__init__()
        self.blocks = [ap.layers.Linear(8, 8, rng=1), ap.layers.Linear(8, 8, rng=5)]
        self.heads = {"a": ap.layers.Linear(8, 4, rng=2), "b": ap.layers.Linear(8, 4, rng=3)}

    def call(self, x, training=False):
        for b in self.blocks:
            x = np.tanh(b(x))
        return sum(h(x) for h in self.heads.values())


@pytest.mark.parametrize("change", [lambda m: m.blocks.pop(), lambda m: m.blocks.reverse(),
                                    lambda m: m.blocks.__delitem__(0), lambda m: m.heads.pop("b"),
                                    lambda m: m.heads.__delitem__("a")],
                         ids=["pop", "reverse", "del", "dict-pop", "dict-del"])
def test_a_models_own_list_or_dict_of_layers_changed_in_place_traces_again(change):
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((16, 8)), rng.integers(0, 4, 16)
    losses = eager_and_traced_losses(_Blocks, change, X, Y, steps=4, at=2)
    assert all(np.array_equal(a, b) for a, b in zip(*losses)), losses  # before: the old architecture replayed


def eager_and_traced_losses(make, change, X, Y, steps, at):
    """The losses of ``steps`` SGD steps of a model ``make()`` eagerly, then through ``ap.function`` (a new model),
    ``change(model)`` before step ``at`` in both (tests/test_autoprop_function_review39.py uses it too)."""
    losses = []
    for traced in (False, True):
        m, lf, opt = make(), alo.SoftmaxCrossEntropy(), ap.optimizers.SGD(learning_rate=0.1)

        def step(x, y, m=m, lf=lf, opt=opt):
            with ap.GradientTape() as tape:
                loss = lf(y, m(x, training=True))
            g = tape.gradient(loss, m.trainable_variables)
            opt.apply_gradients(zip(g, m.trainable_variables))
            return loss

        f = ap.function(step) if traced else step
        out = []
        for i in range(steps):
            if i == at:
                change(m)
            out.append(f(X, Y).numpy())
        losses.append(out)
    return losses


@pytest.mark.parametrize("model, shape", [(_mlp, (64,)), (lambda: _Recurrent("RNN"), (5, 8))])
def test_a_replay_keeps_what_the_vjps_read_as_the_tape_does(model, shape, monkeypatch):
    """speed49: a forward that keeps what its VJPs read for a tape (the cross-entropy's softmax, the RNN's
    pre-activations) keeps it at a replay too, so the replay's gradient step does not form it again: the
    VJPs are called with the same ``saved`` in both (before, the replay's was None and the softmax was formed
    twice a step); the values stay the eager step's bit for bit (_run_both)."""
    from autoprop.core.prims import recurrent, reductions

    seen = []
    ce_vjp, rnn_local = reductions._softmax_minus_onehot, recurrent._rnn_local
    monkeypatch.setattr(reductions, "_softmax_minus_onehot",
                        lambda z, y, p=None: seen.append(p is None) or ce_vjp(z, y, p))
    monkeypatch.setattr(recurrent, "_rnn_local",
                        lambda args, saved: seen.append(saved is None) or rnn_local(args, saved))
    m_eager, m_fn = _run_both(model, lambda: ap.optimizers.SGD(learning_rate=0.1), shape)
    # each step's cross-entropy VJP (and the RNN's), eager and traced (the first call traces, the others replay)
    assert len(seen) == 2 * STEPS * (1 if model is _mlp else 2)
    assert not any(seen)  # every VJP read the kept values
