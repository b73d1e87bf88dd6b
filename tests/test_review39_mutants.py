"""review39: tests that kill the mutants of session 38's change (autoprop.function's signature keys, its state
counter and layer containers, the optimizer hook, the replay, the guarded integer arguments; gradcheck's random
mean against a reference without ``training=``) that session 38's own tests let live. Each failed against its
mutant (the driver and the list of mutants: /work/wt/notes/review39, outside the tree) and passes on main."""

import threading
import warnings

import numpy as np
import pytest

import autoprop as ap
from autoprop import layers as al
from autoprop.tracing import TraceError

X = np.random.default_rng(0).standard_normal((3, 4))


# ---------------------------------------------------------------- signature keys
def test_a_python_values_type_is_part_of_the_signature():
    """1 and 1.0 are equal and hash alike; a constant of the trace returned (or used) as given differs."""
    f = ap.function(lambda x, k: (x * 2.0, k))
    assert type(f(X, 1)[1]) is int
    assert type(f(X, 1.0)[1]) is float
    assert f.trace_count == 2


def test_an_arrays_dtype_is_part_of_the_signature():
    def grad(x):
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = ap.reduce_sum(x * x)
        return tape.gradient(y, x)

    f = ap.function(grad)
    assert f(X).numpy().dtype == np.float64
    g = f(X.astype(np.float32))
    assert g.numpy().dtype == np.float32 and f.trace_count == 2


def test_keyword_arguments_are_not_a_positional_dict():
    def f(x, opts=None, **kw):
        return x * (2.0 if opts is not None else 3.0)

    traced = ap.function(f)
    assert np.array_equal(traced(X, {"a": 1}).numpy(), X * 2.0)
    assert np.array_equal(traced(X, a=1).numpy(), X * 3.0)


def test_two_variables_are_two_signatures():
    f = ap.function(lambda v: v * 1.0)
    a, b = ap.Variable(np.ones(2)), ap.Variable(np.full(2, 5.0))
    assert np.array_equal(f(a).numpy(), [1.0, 1.0])
    assert np.array_equal(f(b).numpy(), [5.0, 5.0])


def test_a_dicts_keys_and_a_lists_length_are_part_of_the_signature():
    f = ap.function(lambda d: d["a"] - d["b"])
    one, two = np.ones(2), np.full(2, 2.0)
    assert np.array_equal(f({"a": one, "b": two}).numpy(), [-1.0, -1.0])
    assert np.array_equal(f({"b": one, "a": two}).numpy(), [1.0, 1.0])  # same leaves, other keys
    h = ap.function(lambda xs: xs[0] * (2.0 if type(xs) is tuple else 3.0))  # a tuple and a list of one array
    assert np.array_equal(h((one,)).numpy(), one * 2.0) and np.array_equal(h([one]).numpy(), one * 3.0)
    g = ap.function(lambda xs: xs[0][0] * float(len(xs)))  # [[a, b]] and [[a], b]: the same leaves in order
    assert np.array_equal(g([[one, two]]).numpy(), one)
    assert np.array_equal(g([[one], two]).numpy(), one * 2.0)


# ---------------------------------------------------------------- layer containers and the state counter
class _Blocks(al.Model):
    def __init__(self, extra=()):
        super().__init__()
        self.blocks = [al.Linear(4, 4, rng=1), al.Linear(4, 4, rng=5), *extra]
        self.heads = {"a": al.Linear(4, 3, rng=2)}

    def call(self, x, training=False):
        for b in self.blocks:
            x = b(x)
        return sum(h(x) for h in self.heads.values())


@pytest.mark.parametrize("change", [
    lambda m, s: m.blocks.append(s), lambda m, s: m.blocks.insert(0, s), lambda m, s: m.blocks.extend([s]),
    lambda m, s: m.blocks.__setitem__(0, s), lambda m, s: m.heads.__setitem__("c", m.heads["a"]),
    lambda m, s: m.heads.update(c=m.heads["a"]), lambda m, s: m.blocks.pop()],
    ids=["append", "insert", "extend", "set", "dict-set", "dict-update", "mixed-pop"])
def test_a_list_or_dict_of_layers_grown_in_place_traces_again(change):
    """session 38's test pops and deletes; these add a layer made before the trace (making one sets attributes,
    which counts anyway), and pop from a list holding a plain function beside its layers."""
    m, spare = _Blocks(extra=(ap.tanh,)), al.Linear(4, 4, rng=7)
    f = ap.function(lambda x: m(x))
    f(X)
    change(m, spare)
    assert np.array_equal(f(X).numpy(), m(X).numpy())
    assert f.traces == 2


class _Scaled(al.Layer):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def call(self, x, training=False):
        return x * self.scale


def test_a_layers_python_attribute_set_between_calls_traces_again():
    layer = _Scaled()
    f = ap.function(lambda x: layer(x))
    f(X)
    layer.scale = 3.0
    assert np.array_equal(f(X).numpy(), X * 3.0)


def test_sequential_layers_set_to_functions_count_their_in_place_changes():
    model = al.Sequential(al.Linear(4, 4, rng=0))
    model.layers = [lambda x, training=None: x * 2.0]  # (no Layer in it: Sequential's own conversion)
    f = ap.function(lambda x: model(x))
    f(X)
    model.layers.append(lambda x, training=None: x * 3.0)
    assert np.array_equal(f(X).numpy(), X * 6.0)


# ---------------------------------------------------------------- the optimizer hook and the replay
def test_a_none_gradient_replays_as_the_eager_step():
    out = []
    for traced in (False, True):
        v1, v2 = ap.Variable(np.ones(2)), ap.Variable(np.ones(2))
        opt = ap.optimizers.SGD(learning_rate=0.1)

        def step(x, v1=v1, v2=v2, opt=opt):
            with ap.GradientTape() as tape:
                loss = ap.reduce_sum(v1 * x)
            opt.apply_gradients(zip(tape.gradient(loss, [v1, v2]), [v1, v2]))  # v2's gradient is None
            return loss

        f = ap.function(step) if traced else step
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for i in range(3):
                f(np.full(2, i + 1.0))
        out.append((v1.numpy(), v2.numpy(), len(w)))
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    assert out[0][2] == out[1][2] == 3


def test_apply_gradients_to_a_numpy_array_inside_a_trace_is_refused():
    w = np.ones(2)
    opt = ap.optimizers.SGD(learning_rate=0.1)

    def step(x):
        opt.apply_gradients([(x * 1.0, w)])
        return x * 1.0

    with pytest.raises(TraceError, match="not an autoprop.Variable"):
        ap.function(step)(np.ones(2))


def test_assigning_a_variable_made_inside_is_refused():
    kept = []

    def step(x):
        v = ap.Variable(np.zeros(2))
        v.assign(x * 2.0)  # (each eager call: a new Variable; a replay would assign the first call's)
        kept.append(v)
        return x * 1.0

    with pytest.raises(TraceError, match="made inside"):
        ap.function(step)(np.ones(2))


def test_a_replayed_scalar_result_is_an_array_and_a_tuple_stays_a_tuple():
    f = ap.function(lambda x: (ap.reduce_sum(x * x), ap.reduce_mean(x)))
    f(X)
    loss, mean = f(X + 1.0)  # a replay
    assert isinstance(f(X), tuple)
    assert np.asarray(loss).shape == () and float(np.asarray(loss)) == float(np.sum((X + 1.0) ** 2))
    assert float(mean.numpy()) == float(np.mean(X + 1.0))


def test_a_target_given_twice_is_seeded_twice_as_the_walk_does():
    def grad(x):
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = ap.reduce_sum(x * x)
        return tape.gradient([y, y], x)

    eager = grad(ap.constant(X)).numpy()
    f = ap.function(grad)
    f(X)
    assert np.array_equal(f(X).numpy(), eager)


def test_two_slices_of_one_input_without_a_dense_use_replay():
    """Two Scatter gradients met in one slot (no dense gradient between them): the walk's scatter_into, not +."""
    def grad(x):
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = ap.reduce_sum(x[:2] * x[:2]) + ap.reduce_sum(x[1:] * 3.0)
        return tape.gradient(y, x)

    x = np.arange(1.0, 5.0)
    f = ap.function(grad)
    f(x)
    assert np.array_equal(f(x + 1.0).numpy(), grad(ap.constant(x + 1.0)).numpy())


def test_a_float32_variables_gradient_stays_float32_at_replay():
    c = ap.constant(np.full(3, 2.0))  # float64, captured: the product is float64

    def grad(v):
        with ap.GradientTape() as tape:
            y = ap.reduce_sum(v * c)
        return tape.gradient(y, v)

    v = ap.Variable(np.ones(3, dtype=np.float32))
    f = ap.function(grad)
    eager = grad(v).numpy()
    f(v)
    g = f(v).numpy()
    assert g.dtype == eager.dtype == np.float32 and np.array_equal(g, eager)


def test_a_layers_replayed_value_that_is_not_an_array_is_refused():
    from autoprop.core.tape import replayed

    with pytest.raises(TypeError, match="not an array"):
        ap.function(lambda x: x * replayed(lambda: 2.0))(X)


def test_a_variables_value_as_a_python_number_is_refused():
    v = ap.Variable(2.0)
    with pytest.raises(TraceError, match="float"):
        ap.function(lambda x: x * float(v))(X)  # (an assign between calls would not be seen)


def test_a_traced_function_called_inside_another_is_inlined():
    inner = ap.function(lambda x: x * 3.0)
    outer = ap.function(lambda x: inner(x) + 1.0)
    assert np.array_equal(outer(X).numpy(), X * 3.0 + 1.0)
    assert np.array_equal(outer(X + 1.0).numpy(), (X + 1.0) * 3.0 + 1.0)  # a replay


def test_a_draw_through_a_name_bound_before_the_trace_is_refused():
    draw = np.random.rand  # (bound before the trace: not the patched name)
    f = ap.function(lambda x: x * 2.0 + draw())
    with pytest.raises(TraceError, match="global random state"):
        f(X)


def test_another_threads_draw_is_numpys_own_while_a_trace_runs():
    started, go, drawn = threading.Event(), threading.Event(), []

    def body(x):
        started.set()
        go.wait(10)
        return x * 2.0

    t = threading.Thread(target=lambda: _quiet(body))
    t.start()
    started.wait(10)
    try:
        drawn.append(np.random.default_rng(0).random(1))  # (a generator: untouched)
        drawn.append(np.random.rand(2))  # the module's function: this thread is not traced
    finally:
        go.set()
        t.join(10)
    assert drawn[1].shape == (2,)


def _quiet(body):
    try:
        ap.function(body)(X)
    except TraceError:  # (the other thread's draw moved the global state: the trace refuses itself, LOW finding)
        pass


def test_a_returned_tensor_made_inside_from_an_untraced_value_is_refused():
    with pytest.raises(TraceError, match="returns a tensor made inside"):
        ap.function(lambda x: (x * 2.0, ap.constant(np.ones(2))))(X)


def test_a_boolean_index_argument_is_refused_and_an_integer_one_replayed():
    with pytest.raises(TraceError, match="keyword argument key=.*a boolean mask"):
        ap.function(lambda x, m: x[m] * 1.0)(X, np.array([True, False, True]))
    f = ap.function(lambda x, i: x[i] * 1.0)  # (fix39fn: an integer argument's index array is this call's)
    for i in ([0, 2], [2, 1]):
        assert np.array_equal(f(X, np.array(i)).numpy(), X[i])
    assert f.traces == 1


# ---------------------------------------------------------------- guarded integer arguments
@pytest.mark.parametrize("body", ["range(n)", "y.sort()", "y.argmax()", "int(y.reshape(-1).sum())",
                                  "int(y.T.max())", "float(n)", "y.fill(0)", "int(np.copy(y).max())"])
def test_more_numpy_on_an_integer_argument_is_refused(body):
    def f(x, y, n):
        exec(body, {"y": y, "n": n, "np": np})
        return x * 1.0

    with pytest.raises(TraceError, match="integer or boolean array argument"):
        ap.function(f)(X, np.array([2, 0, 1]), np.array(3))


def test_an_integer_mask_times_a_tensor_is_recorded():
    f = ap.function(lambda x, m: ap.reduce_sum(m * x))
    a, b = np.array([[1, 0, 1, 0]] * 3), np.array([[0, 1, 1, 1]] * 3)
    assert float(f(X, a).numpy()) == float(np.sum(a * X))
    assert float(f(X, b).numpy()) == float(np.sum(b * X))  # a replay, the new mask


# ---------------------------------------------------------------- gradcheck: the random mean's reference call
def test_the_random_mean_calls_a_reference_through_its_own_switch():
    from gradcheck.diagnose import random_mean_finding

    class NoScale:
        def __init__(self, p=0.5):
            self.p, self.rng = p, np.random.default_rng(0)

        def forward(self, X, training=False):
            self.mask = self.rng.random(X.shape) >= self.p if training else np.ones(X.shape, bool)
            return X * self.mask

        def backward(self, dY):
            return dY * self.mask

    class TrainFlg:  # DLFS's dropout: forward(x, train_flg=True), inverted
        def __init__(self, p=0.5):
            self.p, self.rng = p, np.random.default_rng(1)

        def forward(self, x, train_flg=True):
            return x * (self.rng.random(x.shape) >= self.p) / (1 - self.p) if train_flg else x

    found = random_mean_finding([(NoScale(), TrainFlg(), "")], "NoScale", (6, 5), 7, "TrainFlg")
    assert found is not None and found.code == "random-mean", found


# ---------------------------------------------------------------- gradcheck: _own_fault at the second point
def test_an_index_error_of_diagnoses_own_at_the_drawn_point_is_raised(monkeypatch):
    from buggy_layers import diagnose

    import gradcheck.diagnose as D

    broken = D.DIAGNOSES["weight-not-on-input"]._replace(message="{eq[999]}")  # (str.format: an IndexError of ours)
    monkeypatch.setitem(D.DIAGNOSES, "weight-not-on-input", broken)
    with pytest.raises(IndexError):
        diagnose("lead38.py::ShiftLinearDW")


def test_a_value_error_of_diagnoses_own_at_the_drawn_point_is_not_raised(monkeypatch):
    """_own_fault raises programming errors only (TypeError, NameError, AttributeError, KeyError, IndexError)."""
    from buggy_layers import diagnose

    import gradcheck.diagnose as D

    broken = D.DIAGNOSES["weight-not-on-input"]._replace(message="{eq:d}")  # (str.format of a str: ValueError)
    monkeypatch.setitem(D.DIAGNOSES, "weight-not-on-input", broken)
    d = diagnose("lead38.py::ShiftLinearDW")  # the drawn point's diagnosis cannot be had: the first point's stands
    assert d.passed


def test_a_type_error_raised_outside_diagnose_at_the_drawn_point_is_not_ours(monkeypatch):
    """The raising frame is read (the innermost), not the frame that caught it (diagnose.py's own _again_at)."""
    from buggy_layers import diagnose

    import gradcheck.diagnose as D

    def drawn_values(*args, **kwargs):
        raise TypeError("not diagnose.py's")

    monkeypatch.setattr(D.V, "drawn_values", drawn_values)
    d = diagnose("lead38.py::ShiftLinearDW")  # its drawn point cannot be had: the first point's verdict stands
    assert d.passed and not d.drawn_failed


# ---------------------------------------------------------------- gradcheck: positions-cut of a 1-D convolution
class _Conv1DCut:
    """A 1-D convolution (N, C, L) whose backward's loop over output positions stops at half."""

    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((2, 1, 3)), "b": np.zeros(2)}
        self.grads = {}

    def forward(self, X):
        self.X = X
        W = self.params["W"]
        Y = np.stack([np.einsum("nck,fck->nf", X[:, :, i:i + 3], W) for i in range(X.shape[2] - 2)], axis=2)
        return Y + self.params["b"][None, :, None]

    def backward(self, dY):
        W, X = self.params["W"], self.X
        dX, dW = np.zeros_like(X), np.zeros_like(W)
        for i in range(dY.shape[2] // 2):  # the bug: range(L_out // 2)
            dX[:, :, i:i + 3] += np.einsum("nf,fck->nck", dY[:, :, i], W)
            dW += np.einsum("nf,nck->fck", dY[:, :, i], X[:, :, i:i + 3])
        self.grads["W"], self.grads["b"] = dW, dY.sum(axis=(0, 2))
        return dX


def test_a_1d_convs_positions_cut_short_are_named():
    import gradcheck

    d = gradcheck.diagnose_layer(_Conv1DCut(), np.random.default_rng(1).standard_normal((2, 1, 6)))
    assert [f.code for f in d.findings][:1] == ["positions-cut"], d.sentence()
    assert "range(2) where range(4) is due along axis 2" in " ".join(d.sentence().split())


def test_an_rnn_that_carries_no_gradient_back_is_not_told_positions_cut():
    """Its dh0 is the first step's dY alone: a block of dY at the start of the time axis, _carry_signature's (a
    sequence layer is causal, so _block_signature leaves it)."""
    from buggy_layers import diagnose, first_code

    for key in ("rnn_seq.py::RNNNoCarry", "cs231n.py::rnnnodprev"):
        d = diagnose(key)
        assert first_code(d) == "rnn-no-carry", d.sentence()


@pytest.mark.parametrize("eval_scale", ["one-minus-p", "none", "eval-only"],
                         ids=["scaled-in-both-modes", "never-scaled", "identity-in-training"])
def test_dropouts_that_are_not_classic_are_not_told_classic(eval_scale):
    """Inverted in training and scaled again in eval; or unscaled in training and the identity in eval (the missing
    1/(1 - p)): neither is classic dropout ('scaled at test time by a constant in (0, 1)', a training scale of 1)."""
    from buggy_layers import load
    from buggy_layers.activations import Dropout

    from gradcheck.diagnose import diagnose_layer

    class Other(Dropout):
        def forward(self, X, training=False):
            if not training:
                self.mask = np.full_like(X, 1.0 if eval_scale == "none" else 1 - self.p)
                return X * self.mask
            if eval_scale == "eval-only":  # (keeps every entry in training: no dropout there)
                self.mask = np.ones_like(X)
                return X
            if eval_scale == "none":
                self.mask = (self.rng.random(X.shape) >= self.p).astype(X.dtype)
                return X * self.mask
            return super().forward(X, training=True)

    _, X, kwargs = load("activations.py::DropoutClassic")
    d = diagnose_layer(Other(), X, **kwargs)
    assert "classic-dropout" not in d.codes, d.sentence()


# ---------------------------------------------------------------- gradcheck: the loss probe at y_pred +- 1000
def test_a_reference_that_overflows_at_large_logits_is_not_compared_there():
    from test_newuser38 import (  # (softmax cross-entropy without / with the log-sum-exp shift)
        NoShiftCE,
        ShiftCE,
    )

    import gradcheck

    rng = np.random.default_rng(0)
    y, z = rng.integers(0, 4, size=8), rng.standard_normal((8, 4))
    with np.errstate(all="ignore"):
        res = gradcheck.check_loss(ShiftCE(), y, z, twin=None, reference=NoShiftCE())
    assert res.passed, res.notes
    assert not any("1000" in r.tensor for r in res.records)


class _MSE:
    def forward(self, y_true, y_pred):
        self.d = y_pred - y_true
        return float(np.mean(self.d ** 2))

    def backward(self):
        return 2 * self.d / self.d.size


def test_the_losses_state_after_the_probe_is_its_forwards_at_y_pred():
    """_at_large_predictions' promise: the loss's forward at y_pred is run again after the probe at y_pred - 1000."""
    import gradcheck
    import manualprop as mp

    rng = np.random.default_rng(2)
    t, z = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    loss = _MSE()
    res = gradcheck.check_loss(loss, t, z, twin=None, reference=mp.MeanSquaredError())
    assert res.passed and any("y_pred - 1000" in r.tensor for r in res.records)
    assert np.allclose(loss.backward(), 2 * (z - t) / z.size, rtol=1e-12, atol=0)


class _TanhDenseNoDerivative:
    """A dense tanh layer at small pre-activations (nearly linear there) whose dW skips tanh's derivative."""

    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((4, 3)) * 0.05, "b": np.full(3, 0.01)}
        self.grads = {}

    def forward(self, X):
        self.X = X
        self.Y = np.tanh(X @ self.params["W"] + self.params["b"])
        return self.Y

    def backward(self, dY):
        dZ = dY * (1 - self.Y ** 2)
        self.grads["W"], self.grads["b"] = self.X.T @ dY, dZ.sum(axis=0)
        return dZ @ self.params["W"].T


def test_a_nearly_linear_tanh_layer_is_not_told_affine():
    """The affinity test's tolerance is round-off's, not a share: tanh at |Z| of 0.1 is 1% off linear."""
    import gradcheck

    d = gradcheck.diagnose_layer(_TanhDenseNoDerivative(), np.random.default_rng(1).standard_normal((6, 4)))
    assert [f.code for f in d.findings][:1] == ["weight-skips-derivative"], d.sentence()
