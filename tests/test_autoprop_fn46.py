"""Session 46, fn46: autoprop's leftovers found by session 45's testers.

verify45d F1: an item assignment into ``layer.variables`` was lost without a word once the layer held sub-layers
(the dict is built at each access), and on a layer without sub-layers it replaced the Variable without an
``autoprop.function`` noticing (the replay kept the old one). Now a key of the layer's own weights is set in the
layer, whatever it holds; a sub-layer's or attribute's path raises TypeError naming where to set it and ``.assign``
(``tf.Module.variables`` is a tuple: item assignment raises; Keras's list loses it).
"""

import copy
import pickle

import numpy as np
import pytest

import autoprop as ap


class _Block(ap.layers.Layer):
    """The verify45d F1 layer: a sub-layer, then a weight of its own set as manualprop's params."""

    def __init__(self):
        super().__init__()
        self.fc = ap.layers.Linear(3, 2, rng=0)
        self.variables["scale"] = ap.Variable(np.array([2.0, -3.0]))

    def call(self, x):
        return self.fc(x) * self.variables["scale"]


class _MLP(ap.Model):
    def __init__(self):
        super().__init__()
        self.l1 = ap.layers.Linear(3, 4, rng=0)
        self.l2 = ap.layers.Linear(4, 2, rng=1)
        self.W1 = ap.Variable(np.ones(2))

    def call(self, x):
        return self.l2(self.l1(x)) * self.W1


def test_own_weight_set_in_a_layer_holding_sublayers_is_kept_and_trained():
    block = _Block()
    assert list(block.variables) == ["scale", "fc.W", "fc.b"]
    assert block.trainable_variables[0] is block.variables["scale"]
    x = np.ones((1, 3))
    with ap.GradientTape() as tape:
        y = ap.reduce_sum(block(x))
    g = tape.gradient(y, block.variables["scale"])
    np.testing.assert_array_equal(g.numpy(), block.fc(x).numpy()[0])
    d = block.variables
    del d["scale"]
    assert "scale" not in d and list(block.variables) == ["fc.W", "fc.b"]
    # copies are plain dicts; a layer pickles with its own dict
    m = _MLP()
    assert type(copy.deepcopy(m.variables)) is dict and type(dict(m.variables)) is dict
    m2 = pickle.loads(pickle.dumps(m))
    assert list(m2.variables) == list(m.variables)
    m2.l1.variables["W"] = ap.Variable(np.zeros((4, 3)))
    assert m2.variables["l1.W"] is m2.l1.variables["W"] and not np.array_equal(m.l1.variables["W"].numpy(), 0)


@pytest.mark.parametrize("key, words", [
    ("l1.W", ["'l1.W' is not one of _MLP's own weights", "layer.l1.variables['W'] = ap.Variable(",
              "layer.variables['l1.W'].assign(value)"]),
    ("W1", ["held by the attribute 'W1'", "layer.W1 = ap.Variable(...)"]),
    ("l1.extra", ["'l1' is a sub-layer or attribute of _MLP", "add_weight("]),
])
def test_assigning_a_sublayer_path_raises_naming_where(key, words):
    m = _MLP()
    before = {k: v for k, v in m.variables.items()}
    with pytest.raises(TypeError) as err:
        m.variables[key] = ap.Variable(np.zeros((4, 3)))
    for w in words:
        assert w in str(err.value), str(err.value)
    assert dict(m.variables) == before
    with pytest.raises(TypeError, match="cannot be deleted"):
        del m.variables["l2.b"]


def test_a_non_variable_is_refused_naming_assign():
    m = _MLP()
    for layer, key in [(m, "s"), (ap.layers.Linear(3, 2, rng=0), "W")]:
        with pytest.raises(TypeError, match=r"layer.variables\['%s'\].assign\(value\)" % key):
            layer.variables[key] = np.zeros(3)


@pytest.mark.parametrize("make, key", [
    (lambda: ap.layers.Sequential(ap.layers.Linear(3, 2, rng=0)), "0.W"),
    (lambda: ap.layers.TransformerBlock(4, 2, 8, rng=0), "linear1.W"),
    (lambda: ap.layers.TiedEmbedding(5, 4, rng=0), "W"),
])
def test_containers_refuse_item_assignment_and_blocks_refuse_variables_set(make, key):
    layer = make()
    old = layer.variables[key]
    with pytest.raises(TypeError, match="cannot be assigned"):
        layer.variables[key] = ap.Variable(np.zeros(old.shape))
    assert layer.variables[key] is old
    if not isinstance(layer, ap.layers.Sequential):  # was ignored without a word
        with pytest.raises(TypeError, match=r"variables cannot be assigned.*set_weights"):
            layer.variables = {key: ap.Variable(np.zeros(old.shape))}


def test_replacing_a_weight_after_tracing_traces_again():
    lin = ap.layers.Linear(3, 2, rng=0)
    f = ap.function(lambda x: lin(x))
    x = np.ones((1, 3))
    f(x)
    lin.variables["W"] = ap.Variable(np.zeros((2, 3)))
    np.testing.assert_array_equal(f(x).numpy(), lin(x).numpy())
    np.testing.assert_array_equal(f(x).numpy(), lin.variables["b"].numpy()[None])


# --- autoprop.function: the arrays the user's numpy makes from shapes (fn46 2a-2c) ----------------------------

import autograd  # noqa: E402  (HIPS autograd: the oracle)
import autograd.numpy as agnp  # noqa: E402

import autoprop.numpy as anp  # noqa: E402

_LOGITS = np.random.default_rng(46).normal(size=(5, 3))
_LABELS = [np.array([0, 2, 1, 1, 0]), np.array([1, 1, 0, 2, 2]), np.array([2, 0, 0, 1, 2])]


# verify46b F2, F3: a write into a made array, before or after an operation read it, from a global or the labels
def _write_after_index(x, y):
    rows = np.arange(x.shape[0])
    out = ap.constant(x)[rows, y]  # the labels' logits
    rows[:] = 0  # the buffer reused afterwards (the replays read 0s in the forward: F2)
    return out


def _zeros_like_index_written(x, y):
    rows = np.zeros_like(y)
    out = ap.constant(x)[rows, y]
    rows += 2
    return out


_IGNORE = np.zeros(3, dtype=bool)  # classes ignored: none yet (F3: the write changes no byte at the trace)
_PERM = np.arange(5)


def _masked_by_global(x, y):
    mask = np.ones(3)
    mask[_IGNORE] = 0.0
    return anp.sum(ap.constant(x) * mask)


def _offset_by_global(x, y):
    o = np.zeros(3)
    o += _IGNORE
    return anp.sum(ap.constant(x) + o)


def _rows_from_global(x, y):
    rows = np.arange(5)
    rows[:] = _PERM
    return ap.constant(x)[rows, 0]


def _zeros_like_written_before(x, y):
    z = np.zeros_like(y, dtype=np.float64)
    z[0] = 1.0
    return x * z


@pytest.mark.parametrize("f, line", [
    (_write_after_index, r"rows\[:\] = 0"), (_zeros_like_index_written, "rows \\+= 2"),
    (_masked_by_global, r"mask\[_IGNORE\] = 0.0"), (_offset_by_global, "o \\+= _IGNORE"),
    (_rows_from_global, r"rows\[:\] = _PERM"), (_zeros_like_written_before, r"z\[0\] = 1.0")])
def test_a_write_into_a_made_array_is_refused_at_the_first_call_naming_it(f, line):
    with pytest.raises(ap.TraceError, match=line + r".*made arrays there: `\w+` \(np\.\w+\(.*ap.where.*ap.one_hot"):
        ap.function(f)(_LOGITS, _LABELS[0])


class _Pruned(ap.layers.Layer):
    """verify46b F1: a pruning mask made at the first call and kept on the layer, pruned in place between steps."""

    def __init__(self):
        super().__init__()
        self.W = ap.Variable(np.arange(6.0).reshape(3, 2) / 10)
        self.mask = None

    def call(self, x):
        if self.mask is None:
            self.mask = np.ones(self.W.shape)
        return ap.matmul(x, self.W * self.mask)


_CACHE = {}


def _cached_eye(k):
    if k not in _CACHE:  # (functools.lru_cache's effect)
        _CACHE[k] = np.eye(k)
    return _CACHE[k]


def test_a_made_array_kept_after_the_call_is_refused_at_the_first_call():
    layer = _Pruned()
    with pytest.raises(ap.TraceError, match=r"np.ones\(...\) made at .*self.mask = np.ones.*outlives the traced call"):
        ap.function(lambda x: anp.sum(layer(x)))(np.ones((2, 3)))
    _CACHE.clear()
    with pytest.raises(ap.TraceError, match=r"np.eye\(...\) made at .*outlives the traced call.*Variable"):
        ap.function(lambda x, y: anp.sum(x * anp.take(_cached_eye(3), y, axis=0)))(_LOGITS, _LABELS[0])
    # made anew at each call, it is a constant of the trace (the idioms): test_cross_entropy_idioms_replay...


def test_a_made_array_held_only_by_a_reference_cycle_is_not_kept(monkeypatch):
    """The check settles reference cycles before it judges (a made array in a cycle of the call's own objects is
    garbage, not kept), and runs a full collection only then: a trace whose made arrays reference counting freed,
    or one that made none, runs none (cut47: ~0.9 CPU-s each in a process holding the test suite's modules)."""
    import gc

    calls = []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or collect(*a))

    def cyclic(x, y):
        box = {"eye": np.eye(3)}
        box["self"] = box  # a cycle: only gc.collect frees the made array after the call
        return anp.sum(x * anp.take(box["eye"], y, axis=0))

    picked = float(_LOGITS[np.arange(5), _LABELS[0]].sum())
    assert ap.function(cyclic)(_LOGITS, _LABELS[0]).numpy() == pytest.approx(picked, rel=1e-15)
    assert len(calls) == 1
    f2 = ap.function(lambda x, y: anp.sum(x * anp.take(np.eye(3), y, axis=0)))
    assert f2(_LOGITS, _LABELS[0]).numpy() == pytest.approx(picked, rel=1e-15)
    f3 = ap.function(lambda x: anp.sum(x * x))
    assert f3(_LOGITS).numpy() == pytest.approx(float(np.sum(_LOGITS * _LOGITS)), rel=1e-15)
    assert len(calls) == 1, "a trace with no made array alive ran a full gc.collect"


def _ce_autograd(logits, y):
    z = logits - agnp.max(logits, axis=1, keepdims=True)
    logp = z - agnp.log(agnp.sum(agnp.exp(z), axis=1, keepdims=True))
    return -agnp.mean(logp[np.arange(logits.shape[0]), y])


@pytest.mark.parametrize("spelling", ["arange", "take_eye"])
def test_cross_entropy_idioms_replay_each_calls_labels(spelling):
    W = ap.Variable(np.eye(3) + 0.1)

    def loss(x, y):
        with ap.GradientTape() as tape:
            logits = x @ W
            z = logits - anp.max(logits, axis=1, keepdims=True)
            logp = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
            if spelling == "arange":  # CS231n's idiom
                picked = logp[np.arange(logits.shape[0]), y]
            else:  # a one-hot taken from a constant made in the code
                picked = anp.sum(logp * anp.take(np.eye(3), y, axis=0), axis=1)
            out = -anp.mean(picked)
        return out, tape.gradient(out, W)
    traced = ap.function(loss)
    for y in _LABELS * 2:  # the first call traces, the others replay
        (l_t, g_t), (l_e, g_e) = traced(_LOGITS, y), loss(ap.constant(_LOGITS), y)
        np.testing.assert_array_equal(l_t.numpy(), l_e.numpy())
        np.testing.assert_array_equal(g_t.numpy(), g_e.numpy())
        ref = autograd.grad(lambda w, y=y: _ce_autograd(_LOGITS @ w, y))(W.numpy())
        np.testing.assert_allclose(g_t.numpy(), ref, rtol=1e-12, atol=1e-15)
    assert traced.traces == 1


def test_gathers_from_plain_arrays_are_refused_naming_what_works():
    table = np.eye(3)
    with pytest.raises(ap.TraceError, match=r"T = autoprop.constant\(table\), then autoprop.numpy.take\(T, y"):
        ap.function(lambda x, y: anp.sum(x * anp.take(table, y, axis=0)))(_LOGITS, _LABELS[0])
    with pytest.raises(ap.TraceError, match=r"logits\[np.arange\(N\), y\].*take_along_axis\(logits, y\[:, None\]"):
        ap.function(lambda x, y: anp.sum(x[np.asarray(list(range(5))), y]))(_LOGITS, _LABELS[0])
    with pytest.raises(ap.TraceError, match=r"autoprop.numpy.take\(np.eye\(C\), y, axis=0\)"):
        ap.function(lambda x, y: anp.sum(x * np.eye(3)[y]))(_LOGITS, _LABELS[0])


# --- ap.numpy_function whose output changes shape: what to do (fn46 2d) ------------------------------------------

def _positive(a):
    return a[a > 0]


def test_numpy_function_refusals_say_what_to_do():
    x0, x1 = np.array([1.0, -2.0, 3.0]), np.array([-1.0, -2.0, 3.0])
    inside = ap.function(lambda x: anp.sum(ap.numpy_function(_positive, [x * 2.0], stateful=False)))
    inside(x0)
    with pytest.raises(ap.TraceError, match=r"every input of func is an argument of the call itself.*lambda a"):
        inside(x1)
    pure = ap.function(lambda x: anp.sum(ap.numpy_function(_positive, [x], stateful=False)))
    assert [float(pure(x).numpy()) for x in (x0, x1, x0)] == [4.0, 3.0, 4.0]
    with pytest.raises(TypeError, match="returns 2 outputs.*one numpy_function call per output"):
        ap.function(lambda x: ap.numpy_function(lambda a: (a, a[:1]), [x])[0])(x0)


# --- verify46b F7, F6, F4 ---------------------------------------------------------------------------------------

class _Holder(ap.layers.Layer):
    def __init__(self):
        super().__init__()
        self.fc = ap.layers.Linear(3, 2, rng=0)

    def call(self, x):
        return self.fc(x)


def test_whole_dict_assignment_refuses_a_sublayer_path_and_ior_keeps_own_keys():
    b = _Holder()
    with pytest.raises(TypeError, match=r"'fc.W' is not one of _Holder's own weights.*layer.fc.variables\['W'\]"):
        b.variables = {"fc.W": ap.Variable(np.zeros((2, 3)))}
    assert b.variables["fc.W"] is b.fc.variables["W"] and len(b.trainable_variables) == 2
    blk = _Block()
    blk.variables |= {"shift": ap.Variable(np.zeros(2))}
    assert list(blk.__dict__["_variables"]) == ["scale", "shift"]  # (was: the sub-layer's paths too, stale)
    blk.fc.variables["W"] = new = ap.Variable(np.ones((2, 3)))
    assert blk.variables["fc.W"] is new and len(blk.trainable_variables) == 4


def test_labels_as_an_integer_tensor_get_advice_that_works():
    def pick(x, y):
        return x[np.arange(x.shape[0]), y]
    with pytest.raises(ap.TraceError, match=r"integer autoprop Tensor argument `y`.*y.numpy\(\) outside.*ap.one_hot"):
        ap.function(pick)(ap.constant(_LOGITS), ap.constant(_LABELS[0]))
    traced = ap.function(pick)  # the advice: the numpy labels
    np.testing.assert_array_equal(traced(ap.constant(_LOGITS), _LABELS[0]).numpy(), _LOGITS[np.arange(5), _LABELS[0]])


class _Net(ap.Model):
    def __init__(self):
        super().__init__()
        self.l1 = ap.layers.Linear(3, 2, rng=0)
        self.opt = ap.optimizers.SGD(0.1)

    def call(self, x):
        return self.l1(x)

    @ap.function
    def train_step(self, x):
        with ap.GradientTape() as tape:
            loss = anp.sum(self(x))
        self.opt.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))
        return loss


@pytest.mark.parametrize("how", ["deepcopy", "pickle", "copy"])
def test_a_model_whose_traced_method_ran_copies_and_its_copy_trains_itself(how):
    m = _Net()
    m.train_step(np.ones((1, 3)))
    c = {"deepcopy": copy.deepcopy, "pickle": lambda m: pickle.loads(pickle.dumps(m)), "copy": copy.copy}[how](m)
    if how == "copy":  # (a shallow copy shares the Variables: its step is the original's object's, not the old cache)
        assert c.train_step is not m.train_step and c.train_step._fn.__self__ is c
        return
    b_m, b_c = m.l1.variables["b"].numpy().copy(), c.l1.variables["b"].numpy().copy()
    c.train_step(np.ones((1, 3)))
    np.testing.assert_array_equal(m.l1.variables["b"].numpy(), b_m)
    np.testing.assert_array_equal(c.l1.variables["b"].numpy(), b_c - 0.1)
