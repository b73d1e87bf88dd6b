"""autoprop.function (session 39, verify38's findings F7, F8, F9): integer labels of any dtype,
the attention layers and Embedding are traced, and each replay equals the eager step bit for bit.

Each model is built twice with the same seeds; one copy steps eagerly, the other through
``@ap.function``, on the same batches (a new batch each call). Losses, gradients and variables
must be equal with ``np.array_equal`` over four calls with Adam: the replay runs the same forwards
and VJPs on the same values in the same order, so there is no tolerance to give.
"""

import numpy as np
import pytest
from test_autoprop_function_s38 import _step_fn as _step  # (returns loss, grads)

import autoprop as ap
from autoprop import layers as al
from autoprop import losses as alo
from autoprop.tracing import TraceError

STEPS = 4


def _both(make_model, batches, loss_fn=None):
    """Step an eager copy and an @ap.function copy; assert losses, gradients and variables equal."""
    loss_fn = loss_fn or alo.SoftmaxCrossEntropy()
    runs = []
    for decorate in (False, True):
        model = make_model()
        step = _step(model, ap.optimizers.Adam(learning_rate=0.01), loss_fn)
        fn = ap.function(step) if decorate else step
        seen = []
        for x, y in batches:
            loss, grads = fn(x, y)
            seen += [loss.numpy()] + [g.numpy() for g in grads] + [v.numpy() for v in model.trainable_variables]
        runs.append(seen)
    assert len(runs[0]) == len(runs[1])
    for a, b in zip(*runs):
        assert np.array_equal(a, b)
    assert fn.trace_count == 1 and fn.traces == 1  # one trace, then replays
    return runs


def _dense_batches(dtype, column=False):
    rng = np.random.default_rng(0)
    out = []
    for _ in range(STEPS):
        y = rng.integers(0, 4, 16).astype(dtype)
        out.append((rng.random((16, 5)), y[:, None] if column else y))
    return out


# --- F7: labels in another integer dtype than int64 (the loss's own cast is a replay event) --------
@pytest.mark.parametrize("dtype,column", [(np.int32, False), (np.uint8, False), (np.int64, True),
                                          (np.int32, True)])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_integer_labels_of_any_dtype_replay_the_eager_step(dtype, column, reduction):
    _both(lambda: al.Sequential(al.Linear(5, 4, rng=0)), _dense_batches(dtype, column),
          alo.SoftmaxCrossEntropy(reduction=reduction))


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_the_hinge_loss_replays_the_eager_step(dtype):
    # its one-hot matrix of the labels was "neither an argument nor a Variable" for int64 labels too
    _both(lambda: al.Sequential(al.Linear(5, 4, rng=0)), _dense_batches(dtype), alo.MulticlassHinge())


@pytest.mark.parametrize("loss_fn", [alo.SoftmaxCrossEntropy(), alo.MulticlassHinge()], ids=["ce", "hinge"])
def test_integer_labels_as_a_tensor_replay_the_eager_step(loss_fn):
    # (refused before: "a numpy conversion of a traced tensor", the loss's own np.asarray)
    batches = [(x, ap.constant(y)) for x, y in _dense_batches(np.int32)]
    _both(lambda: al.Sequential(al.Linear(5, 4, rng=0)), batches, loss_fn)


def test_int32_labels_out_of_range_at_a_replay_raise_as_eagerly():
    model, loss_fn = al.Sequential(al.Linear(5, 4, rng=0)), alo.SoftmaxCrossEntropy()
    traced = ap.function(lambda x, y: loss_fn(y, model(x)))
    x = np.ones((3, 5))
    traced(x, np.array([0, 1, 3], np.int32))
    for bad, seen in (([0, 1, 4], "max 4"), ([0, -1, 2], "min -1")):
        with pytest.raises(ValueError, match=rf"labels must be in \[0, 4\); got .*{seen}"):
            traced(x, np.array(bad, np.int32))
    assert traced.trace_count == 1


# --- F9: the attention layers (their transposes' axes tuples; the causal mask) ---------------------
class _Attending(al.Model):
    def __init__(self, kind, causal):
        super().__init__()
        self.kind = kind
        self.inp, self.head = al.Linear(8, 8, rng=1), al.Linear(8, 3, rng=2)
        self.att = {"sdpa": lambda: al.ScaledDotProductAttention(causal=causal),
                    "mha": lambda: al.MultiHeadAttention(8, 2, causal=causal, rng=0),
                    "block": lambda: al.TransformerBlock(8, 2, 16, causal=causal, rng=0)}[kind]()

    def call(self, x, training=False):
        n, t, e = x.shape
        h = self.inp(x.reshape(n * t, e)).reshape(n, t, e)
        h = self.att(h, h, h) if self.kind == "sdpa" else self.att(h, training=training)
        return self.head(ap.reduce_mean(h, axis=1))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("kind", ["sdpa", "mha", "block"])
def test_attention_layers_replay_the_eager_step(kind, causal):
    rng = np.random.default_rng(0)
    batches = [(rng.random((4, 5, 8)), rng.integers(0, 3, 4)) for _ in range(STEPS)]
    _both(lambda: _Attending(kind, causal), batches)


# --- F8: Embedding's lookup (an integer index argument as a replayed gather) -----------------------
class _Embedded(al.Model):
    def __init__(self, how):
        super().__init__()
        self.how = how
        if how == "tied":
            self.tied = al.TiedEmbedding(10, 6, al.Tanh(), rng=0)
        else:
            self.e, self.h = al.Embedding(10, 6, rng=0), al.Linear(6, 3, rng=1)

    def call(self, x, training=False):
        if self.how == "tied":
            return ap.reduce_mean(self.tied(x), axis=1)[:, :3]
        e = self.e(x) if self.how == "layer" else self.e.variables["W"][x]  # (the user's own W[x])
        return self.h(ap.reduce_mean(e, axis=1))


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("how", ["layer", "index", "tied"])
def test_embedding_lookups_replay_the_eager_step(how, dtype):
    rng = np.random.default_rng(0)
    batches = [(rng.integers(0, 10, (4, 5)).astype(dtype), rng.integers(0, 3, 4)) for _ in range(STEPS)]
    _both(lambda: _Embedded(how), batches)


def test_embedding_checks_each_replays_indices_as_eagerly():
    model = _Embedded("layer")
    traced = ap.function(lambda x: model(x))
    traced(np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match=r"Embedding.*indices in \[0, 10\).*value 10"):
        traced(np.full((2, 3), 10))
    assert traced.trace_count == 1


@pytest.mark.parametrize("body,why", [("W[m]", "a boolean mask"),
                                      # (W[np.arange(3)] is a constant of the trace since fn46: made from numbers)
                                      ("W[np.array([0, 1, 2])]", "not an integer argument of the call")])
def test_other_index_arrays_are_still_refused(body, why):
    W = ap.Variable(np.arange(12.0).reshape(6, 2))
    traced = ap.function(eval(f"lambda m, y: {body}", {"W": W, "np": np}))
    with pytest.raises(TraceError, match=why):
        traced(np.array([True, False] * 3), np.array([1, 2, 3]))


def test_an_index_by_np_asarray_of_an_integer_argument_reads_each_calls_values():
    # np.asarray(y) of the guarded argument is the argument itself (session 43, verify42b F18), read at each replay
    W = ap.Variable(np.arange(12.0).reshape(6, 2))
    traced = ap.function(lambda y: W[np.asarray(y)])
    for ids in ([1, 2, 3], [5, 0, 0]):
        assert np.array_equal(traced(np.array(ids)).numpy(), W.numpy()[ids])
    assert traced.trace_count == 1


# --- F0b: a global or closure name rebound between calls traces again (an eager call reads it) -----
_STEP = """
def step(x, y):
    with ap.GradientTape() as tape:
        loss = lf(y, model(x, training=True)) + reg * ap.reduce_sum(model.trainable_variables[0] ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""


def test_a_rebound_global_traces_again():
    # a new optimizer (lr 1.0) was replayed as the old one (lr 0.1), silently, where a new model traced again
    batches, runs, traces = _dense_batches(np.int64) * 2, [], None
    for decorate in (False, True):
        ns = {"ap": ap, "lf": alo.SoftmaxCrossEntropy(), "model": al.Sequential(al.Linear(5, 4, rng=0)),
              "opt": ap.optimizers.SGD(learning_rate=0.1), "reg": 0.0}
        exec(_STEP, ns)
        fn = ap.function(ns["step"]) if decorate else ns["step"]
        seen = []
        for i, (x, y) in enumerate(batches):
            if i == 2:
                ns["opt"] = ap.optimizers.SGD(learning_rate=1.0)
            elif i == 4:
                ns["reg"] = 1.0
            elif i == 6:
                ns["model"] = al.Sequential(al.Linear(5, 4, rng=1))
            seen.append(fn(x, y).numpy())
        runs.append(seen + [v.numpy() for v in ns["model"].trainable_variables])
        traces = getattr(fn, "traces", traces)
    for a, b in zip(*runs):
        assert np.array_equal(a, b)
    assert traces == 4  # (the first call, then one per rebinding; the other calls replay)


def test_a_rebound_closure_name_traces_again_and_a_traced_side_effect_does_not():
    calls = []

    def make(lr):
        opt = ap.optimizers.SGD(learning_rate=lr)
        model = al.Sequential(al.Linear(5, 4, rng=0))
        loss_fn = alo.SoftmaxCrossEntropy()

        def step(x, y):
            calls.append(1)  # (a Python side effect: runs while tracing only, as in TensorFlow)
            with ap.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        def rebind():
            nonlocal opt
            opt = ap.optimizers.SGD(learning_rate=1.0)
        return step, rebind

    (eager, rebind_e), (step, rebind_f) = make(0.1), make(0.1)
    traced = ap.function(step)
    for i, (x, y) in enumerate(_dense_batches(np.int64)):
        if i == 2:
            rebind_e()
            rebind_f()
        assert np.array_equal(eager(x, y).numpy(), traced(x, y).numpy())
    assert traced.traces == 2 and len(calls) == 4 + 2


# --- note38: the input checks for NaN/inf run at each replay, as at each eager call ----------------
def _bn_model():
    return al.Sequential(al.Linear(5, 4, rng=0), al.BatchNorm1D(4), al.Tanh(), al.Linear(4, 4, rng=1))


@pytest.mark.parametrize("make,shape", [(_bn_model, (16, 5)), (lambda: al.Sequential(), (16, 4))],
                         ids=["batchnorm", "logits"])
def test_a_nan_input_raises_at_a_replay_as_eagerly(make, shape):
    # the replay returned a NaN loss (and BatchNorm's running statistics took the NaN) where eager raised
    models = [make(), make()]
    steps = [_step(m, ap.optimizers.SGD(learning_rate=0.1), alo.SoftmaxCrossEntropy()) for m in models]
    steps[1] = ap.function(steps[1])
    batches = _dense_batches(np.int64)
    for i, (x, y) in enumerate(batches):
        x = np.random.default_rng(i).random(shape)
        if i == 2:
            x[3, 1] = np.nan
            errors = []
            for step in steps:
                with pytest.raises(ValueError, match="must contain only finite values") as e:
                    step(x, y)
                errors.append(str(e.value))
            assert errors[0] == errors[1]
            continue
        (le, _), (lf, _) = (step(x, y) for step in steps)
        assert np.array_equal(le.numpy(), lf.numpy())
    for a, b in zip(models[0].variables.values(), models[1].variables.values()):
        assert np.array_equal(a.numpy(), b.numpy())
    if models[0].layers:
        assert np.array_equal(models[0].layers[1].running_mean, models[1].layers[1].running_mean)
        assert np.isfinite(models[1].layers[1].running_var).all()
    assert steps[1].trace_count == 1


def test_axes_are_constants_of_the_trace_and_a_list_operand_is_still_refused():
    bodies = ["x.swapaxes(0, 1) * 2.0", "x.transpose([1, 0]) + 1.0", "x.transpose((1, 0)).reshape(3, 2)"]
    for body in bodies:
        fn = eval(f"lambda x: {body}")
        traced = ap.function(fn)
        for k in range(3):
            x = np.arange(6.0).reshape(3, 2) + k
            assert np.array_equal(traced(x).numpy(), fn(ap.constant(x)).numpy())
        assert traced.trace_count == 1
    w = [0.5, 2.0]  # (a list may change in place between calls, unseen: refused, not frozen)
    with pytest.raises(TraceError, match="gets a Python list as an array"):
        ap.function(lambda x: x * w)(np.ones((3, 2)))
