"""Keras's deferred build on autoprop layers: ``build(input_shape)`` runs once, on the first
call, before ``call``; ``add_weight`` (Keras's shape, initializer, dtype, trainable, name);
``built``; unknown constructor keywords refused with the close match. Repro before: a
``build`` was never called (``AttributeError: 'MyDense' object has no attribute 'w'``),
``add_weight`` did not exist, and ``Linear(3, 4, rgn=0)`` said only "unexpected keyword"
(``ReLU(foo=1)`` named ``Layer.__init__()``). Oracles: central differences, HIPS autograd."""

import autograd
import autograd.numpy as agn
import numpy as np
import pytest
from oracles import central

import autoprop as ap
from manualprop.init import keras_initial_value


class SimpleDense(ap.layers.Layer):
    """Keras's own example layer: y = tanh(x @ kernel + bias), weights made in build."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.shapes_seen = []

    def build(self, input_shape):
        self.shapes_seen.append(input_shape)
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units),
                                      initializer="glorot_uniform", name="kernel", rng=0)
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")
        self.count = self.add_weight(shape=(), initializer="zeros", trainable=False,
                                     name="count")

    def call(self, x):  # no training argument, as Keras allows
        assert self.built
        return ap.tanh(x @ self.kernel + self.bias)


def test_build_runs_once_on_the_first_call_with_the_input_shape_before_call():
    layer = SimpleDense(3)
    assert not layer.built and layer.trainable_variables == [] and layer.variables == {}
    x = np.random.default_rng(1).standard_normal((5, 4))
    y = layer(x)
    assert layer.built and layer.shapes_seen == [(5, 4)]
    assert y.shape == (5, 3)
    assert layer.trainable_variables == [layer.kernel, layer.bias]
    assert layer.non_trainable_variables == [layer.count]
    assert list(layer.variables) == ["kernel", "bias", "count"]
    layer(x[:2], training=True)  # training dropped: call does not take it
    assert layer.shapes_seen == [(5, 4)]  # not built again


def test_a_built_layer_s_gradients_match_central_differences_and_autograd():
    layer = SimpleDense(3)
    x = np.random.default_rng(2).standard_normal((5, 4))
    layer(x)  # build
    K, b = layer.kernel.numpy(), np.random.default_rng(3).standard_normal(3)
    layer.bias.assign(b)
    with ap.GradientTape() as tape:
        loss = ap.sum(layer(x) ** 2)
    dK, db, dcount = tape.gradient(loss, [layer.kernel, layer.bias, layer.count])
    assert dcount is None  # non-trainable: not watched

    def plain(K_, b_):
        return np.sum(np.tanh(x @ K_ + b_) ** 2)

    np.testing.assert_allclose(dK.numpy(), central(lambda k: plain(k, b), K, h=1e-6),
                               rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(db.numpy(), central(lambda c: plain(K, c), b, h=1e-6),
                               rtol=1e-7, atol=1e-9)
    ref = autograd.grad(lambda K_, b_: agn.sum(agn.tanh(x @ K_ + b_) ** 2), argnum=(0, 1))(K, b)
    np.testing.assert_allclose(dK.numpy(), ref[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(db.numpy(), ref[1], rtol=1e-12, atol=1e-14)


def test_a_model_builds_its_layers_and_fit_trains_only_the_trainable_weights():
    model = ap.layers.Sequential(SimpleDense(4), ap.layers.Linear(4, 1, rng=0))
    assert model.trainable_variables == model.layers[1].trainable_variables  # not built yet
    x = np.random.default_rng(4).standard_normal((16, 2))
    y = x[:, :1] - x[:, 1:]
    model.compile("sgd", ap.losses.MeanSquaredError())
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    dense = model.layers[0]
    assert dense.built and dense.shapes_seen == [(8, 2)]
    assert list(model.variables) == ["0.kernel", "0.bias", "0.count", "1.W", "1.b"]
    assert dense.count.numpy() == 0.0  # non-trainable: fit leaves it
    assert np.any(dense.bias.numpy() != 0.0)  # trainable: fit moved it


def test_fit_builds_a_model_whose_only_weights_come_from_build():
    model = ap.layers.Sequential(SimpleDense(1))
    assert model.trainable_variables == []  # fit used to stop here: "nothing to train"
    x = np.random.default_rng(5).standard_normal((12, 3))
    model.compile("sgd", ap.losses.MeanSquaredError())
    model.fit(x, 0.1 * x[:, :1], epochs=1, batch_size=4, verbose=0, shuffle=False)
    dense = model.layers[0]
    assert dense.shapes_seen == [(4, 3)]  # the first batch's shape, as Keras
    before = keras_initial_value("glorot_uniform", (3, 1), np.float64, rng=0)
    assert np.any(dense.kernel.numpy() != before)  # trained from its initial value


def test_a_model_subclass_s_own_build_and_an_explicit_build():
    class Scale(ap.layers.Model):
        def build(self, input_shape):
            self.s = self.add_weight(shape=input_shape[1:], initializer="ones", name="s")

        def call(self, x, training=False):
            return x * self.s

    m = Scale()
    assert not m.built and m.variables == {}
    m.build((None, 3))  # Keras: an explicit build builds too
    assert m.built and m.variables["s"].shape == (3,)
    np.testing.assert_array_equal(m(np.ones((2, 3))).numpy(), np.ones((2, 3)))
    assert list(m.variables) == ["s"]  # not built twice: no "variable_1"


def test_build_receives_a_list_of_shapes_for_a_list_of_inputs():
    class Add(ap.layers.Layer):
        def build(self, input_shape):
            self.got = input_shape

        def call(self, xs):
            return xs[0] + xs[1]

    layer = Add()
    layer([np.ones((2, 3)), ap.constant(np.ones((2, 3)))])
    assert layer.got == [(2, 3), (2, 3)]


def test_build_receives_the_structure_of_shapes_for_dict_list_and_tuple_inputs():
    class Takes(ap.layers.Layer):  # Keras: build gets tree.map_structure of the shapes
        def build(self, input_shape):
            self.got = input_shape
            width = input_shape["a"][-1] if isinstance(input_shape, dict) else input_shape[0][-1]
            self.w = self.add_weight(shape=(width,), initializer="ones", name="w")

        def call(self, xs):
            first = xs["a"] if isinstance(xs, dict) else xs[0]
            return first * self.w

    a, b = np.ones((2, 3)), ap.constant(np.ones((2, 4)))
    cases = [
        ({"a": a, "b": b}, {"a": (2, 3), "b": (2, 4)}),
        ([a, b], [(2, 3), (2, 4)]),
        ((a, b), ((2, 3), (2, 4))),
        ({"a": a, "rest": [b, (a, b)]}, {"a": (2, 3), "rest": [(2, 4), ((2, 3), (2, 4))]}),
    ]
    for xs, shapes in cases:
        layer = Takes()
        assert layer(xs).shape == (2, 3)
        assert layer.got == shapes and type(layer.got) is type(shapes)
        assert layer.variables["w"].shape == (3,)


def test_build_of_a_list_of_numbers_gets_its_array_shape():
    class Keep(ap.layers.Layer):
        def build(self, input_shape):
            self.got = input_shape

        def call(self, x):
            return ap.constant(x)

    layer = Keep()
    layer([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])  # one array written as lists, not a structure
    assert layer.got == (2, 3)


def test_layers_without_their_own_build_are_built_at_construction():
    assert ap.layers.Linear(2, 3, rng=0).built and ap.layers.ReLU().built
    assert ap.layers.Sequential().built and ap.layers.Layer().built


# --- add_weight --------------------------------------------------------------------------
class Holder(ap.layers.Layer):
    def call(self, x):
        return x


def test_add_weight_defaults_names_dtypes_and_trainable():
    h = Holder()
    w = h.add_weight()
    assert w.shape == () and w.dtype == np.float64 and w.name == "variable" and w.trainable
    w1 = h.add_weight(shape=(2, 3), initializer="ones", dtype="float32", trainable=False)
    assert w1.name == "variable_1" and w1.dtype == np.float32
    np.testing.assert_array_equal(w1.numpy(), np.ones((2, 3), np.float32))
    assert h.trainable_variables == [w] and h.non_trainable_variables == [w1]
    assert Holder(dtype="float32").add_weight(shape=(2,)).dtype == np.float32  # the layer's dtype
    n = h.add_weight(shape=(2,), dtype=np.int64)  # a non-float dtype defaults to zeros
    assert n.dtype == np.int64 and not n.numpy().any()


def test_add_weight_refuses_what_keras_refuses():
    h = Holder()
    h.add_weight(shape=(2,), name="w")
    with pytest.raises(ValueError, match=r"^Holder.add_weight: the layer already has a weight named 'w'"):
        h.add_weight(shape=(2,), name="w")
    with pytest.raises(ValueError, match=r"name must be passed as a keyword argument; got "
                                         r"add_weight\('k', \.\.\.\)"):
        h.add_weight("k", (2,))
    with pytest.raises(ValueError, match=r"shape must be fully defined"):
        h.add_weight(shape=(None, 2))
    with pytest.raises(ValueError) as e:
        h.add_weight(shape=(2,), initializer="glorot_unifrom")
    assert str(e.value).startswith(
        "Holder.add_weight: unknown initializer 'glorot_unifrom' (did you mean 'glorot_uniform'?)")
    with pytest.raises(ValueError, match=r"returned shape \(3,\); the weight has shape \(2,\)"):
        h.add_weight(shape=(2,), initializer=lambda shape, dtype=None: np.zeros(3))


def test_a_frozen_layer_s_new_weights_are_not_trainable():
    h = Holder(trainable=False)
    w = h.add_weight(shape=(2,))
    assert not h.trainable and h.trainable_variables == [] and h.non_trainable_variables == [w]


def test_unfreezing_leaves_the_weights_declared_non_trainable_frozen():
    # Keras's setter touches only the trainable weights; ours set every Variable's flag,
    # so a running counter became trainable (and trained by fit) after freeze/unfreeze
    outer = ap.layers.Sequential(SimpleDense(2))
    outer(np.ones((1, 3)))
    dense = outer.layers[0]
    dense.fixed_attr = ap.Variable(1.0, trainable=False)
    outer.trainable = False
    assert outer.trainable_variables == []
    outer.trainable = True
    assert outer.trainable_variables == [dense.kernel, dense.bias]
    assert not dense.count.trainable and not dense.fixed_attr.trainable
    frozen = SimpleDense(2, trainable=False)  # made non-trainable by the freeze, not declared
    frozen(np.ones((1, 3)))
    frozen.trainable = True
    assert frozen.trainable_variables == [frozen.kernel, frozen.bias]
    assert frozen.non_trainable_variables == [frozen.count]


def test_a_callable_initializer_gets_shape_and_dtype():
    seen = {}

    def init(shape, dtype=None):
        seen["args"] = (shape, dtype)
        return np.arange(np.prod(shape)).reshape(shape)

    w = Holder().add_weight(shape=(2, 3), initializer=init, dtype=np.float32)
    assert seen["args"] == ((2, 3), np.dtype(np.float32))
    np.testing.assert_array_equal(w.numpy(), np.arange(6.0).reshape(2, 3))
    assert w.dtype == np.float32


@pytest.mark.parametrize("name,bound,std", [
    # Keras: uniform limit sqrt(3 scale / fan); normal: truncated at 2 pre-truncation std
    # sqrt(scale / fan) / 0.8796..., so the kept values have std sqrt(scale / fan)
    ("glorot_uniform", np.sqrt(6 / (200 + 300)), np.sqrt(2 / (200 + 300))),
    ("he_uniform", np.sqrt(6 / 200), np.sqrt(2 / 200)),
    ("lecun_uniform", np.sqrt(3 / 200), np.sqrt(1 / 200)),
    ("glorot_normal", 2 * np.sqrt(2 / 500) / 0.87962566103423978, np.sqrt(2 / 500)),
    ("he_normal", 2 * np.sqrt(2 / 200) / 0.87962566103423978, np.sqrt(2 / 200)),
    ("lecun_normal", 2 * np.sqrt(1 / 200) / 0.87962566103423978, np.sqrt(1 / 200)),
    ("random_uniform", 0.05, 0.05 / np.sqrt(3)),
    ("truncated_normal", 0.1, 0.05 * 0.87962566103423978),
])
def test_keras_initializers_have_keras_s_spread(name, bound, std):
    w = keras_initial_value(name, (200, 300), np.float64, rng=0)
    assert np.abs(w).max() <= bound
    assert np.abs(w).max() > 0.9 * bound  # the whole range is used
    assert abs(w.std() / std - 1) < 0.02  # 60,000 draws: about 0.3% sampling error
    assert abs(w.mean()) < 0.01 * std


def test_keras_fans_of_a_kernel_count_the_receptive_field():
    w = keras_initial_value("he_uniform", (3, 3, 8, 16), np.float64, rng=0)
    assert np.abs(w).max() <= np.sqrt(6 / (3 * 3 * 8)) and np.abs(w).max() > 0.9 * np.sqrt(6 / 72)


# --- unknown constructor keywords --------------------------------------------------------
def test_a_twin_refuses_an_unknown_keyword_naming_it_and_the_close_match():
    with pytest.raises(TypeError) as e:
        ap.layers.Linear(3, 4, rgn=0)
    assert str(e.value) == ("Linear() got an unexpected keyword argument 'rgn' (did you mean "
                            "'rng'?); it takes in_features, out_features, rng, dtype, name, "
                            "trainable")
    with pytest.raises(TypeError) as e:
        ap.layers.ReLU(negative_slope=0.1)
    assert str(e.value) == ("ReLU() got an unexpected keyword argument 'negative_slope'; it "
                            "takes name, trainable")
    with pytest.raises(TypeError, match=r"arguments 'pp' \(did you mean 'p'\?\), 'sead' \(did "
                       r"you mean 'seed'\?\); it takes p, rng, rate, seed, name, trainable$"):
        ap.layers.Dropout(pp=0.1, sead=0)
    with pytest.raises(TypeError) as e:  # a Keras name is in the list, so is its typo's match
        ap.layers.Dropout(rat=0.5)
    assert "'rat' (did you mean 'rate'?)" in str(e.value)
    with pytest.raises(TypeError) as e:  # a layer with its own __init__, checked the same way
        ap.layers.MultiHeadAttention(4, 2, casual=True)
    assert str(e.value) == ("MultiHeadAttention() got an unexpected keyword argument 'casual' "
                            "(did you mean 'causal'?); it takes embed_dim, num_heads, causal, "
                            "rng, dtype, name, trainable")


def test_a_subclass_passing_keywords_on_gets_keras_s_base_keywords_checked():
    with pytest.raises(TypeError) as e:
        SimpleDense(3, trainabel=False)
    assert str(e.value) == ("SimpleDense() got an unexpected keyword argument 'trainabel' (did "
                            "you mean 'trainable'?); it takes trainable, name, dtype")
    with pytest.raises(TypeError, match=r"'nmae' \(did you mean 'name'\?\)"):
        ap.layers.Model(nmae="m")
    layer = SimpleDense(3, name="enc", trainable=False)
    assert layer.name == "enc" and not layer.trainable and SimpleDense(2).name == "SimpleDense"
    layer(np.ones((1, 2)))
    assert layer.trainable_variables == [] and len(layer.non_trainable_variables) == 3


class _DropNorm(ap.layers.Layer):  # calls its sub-layers without training=
    def __init__(self):
        super().__init__()
        self.drop = ap.layers.Dropout(0.5, rng=0)
        self.bn = ap.layers.BatchNorm1D(6)

    def call(self, x):
        return self.bn(self.drop(x))


class _Wrap(ap.layers.Layer):  # two deep: _Wrap -> _DropNorm -> Dropout, BatchNorm1D
    def __init__(self):
        super().__init__()
        self.inner = _DropNorm()

    def call(self, x):
        return self.inner(x)


def _expected_running_stats(bn, dropped):
    """PyTorch's rule from the initial (0, 1): momentum times the batch mean and the
    unbiased batch variance, each worked out here from the dropout output."""
    m = bn.momentum
    return m * dropped.mean(axis=0), (1 - m) + m * dropped.var(axis=0, ddof=1)


def test_nested_layers_inherit_training_from_the_outer_call_as_keras_call_context():
    """Tester 8's V5: a Dropout called in a block's call without training= never dropped,
    in a direct training=True call or in fit. Keras: it inherits the outer call's value."""
    X = np.ones((4, 6))
    w = _Wrap()
    y = w(X)  # outermost default: inference
    bn = w.inner.bn
    np.testing.assert_array_equal(y.numpy(), (X - 0) / np.sqrt(1 + bn.eps))
    assert np.all(bn.running_mean == 0) and np.all(bn.running_var == 1)
    w(X, training=True)
    keep = w.inner.drop.mask
    assert 0 < np.sum(~keep) < keep.size  # units dropped
    dropped = X * keep * 2.0
    mean, var = _expected_running_stats(bn, dropped)
    np.testing.assert_allclose(bn.running_mean, mean, rtol=1e-14)
    np.testing.assert_allclose(bn.running_var, var, rtol=1e-14)
    before = bn.running_mean.copy()
    w(X, training=False)  # explicit False: the running statistics stay
    np.testing.assert_array_equal(bn.running_mean, before)

    class Explicit(ap.layers.Layer):  # an explicit value wins over the outer call's
        def __init__(self):
            super().__init__()
            self.drop = ap.layers.Dropout(0.5, rng=0)

        def call(self, x):
            return self.drop(x, training=False)
    np.testing.assert_array_equal(ap.Sequential(Explicit())(X, training=True).numpy(), X)


def test_fit_trains_nested_dropout_and_batch_norm_and_predict_does_not():
    class M(ap.Model):
        def __init__(self):
            super().__init__()
            self.wrap = _Wrap()
            self.head = ap.layers.Linear(6, 1, rng=0)

        def call(self, x, training=False):
            return self.head(self.wrap(x))  # no training= passed on

    X = np.random.default_rng(3).standard_normal((8, 6))
    m = M()
    m.compile(optimizer=ap.optimizers.SGD(0.01), loss=ap.losses.MeanSquaredError())
    m.fit(X, np.zeros((8, 1)), epochs=1, batch_size=8, shuffle=False, verbose=0)
    inner = m.wrap.inner
    keep = inner.drop.mask
    assert keep is not None and 0 < np.sum(~keep) < keep.size
    mean, var = _expected_running_stats(inner.bn, X * keep * 2.0)
    np.testing.assert_allclose(inner.bn.running_mean, mean, rtol=1e-13)
    np.testing.assert_allclose(inner.bn.running_var, var, rtol=1e-13)
    m.predict(X)
    m.evaluate(X, np.zeros((8, 1)), verbose=0)
    np.testing.assert_allclose(inner.bn.running_mean, mean, rtol=1e-13)
    assert inner.drop.mask is keep  # no new mask drawn in inference


def test_a_layer_frozen_before_build_keeps_its_build_weights_frozen_through_fit():
    """Tester 8's V8: weights made in build (a Variable or a sub-layer assigned there) of a
    layer frozen before its first call were trainable, and fit changed them."""
    class VarDense(ap.layers.Layer):  # a Variable assigned in build, not add_weight
        def build(self, s):
            self.w = ap.Variable(np.ones((s[-1], 2)), name="w")

        def call(self, x):
            return x @ self.w

    class Lazy(ap.layers.Layer):  # a sub-layer created in build, built after
        def build(self, s):
            self.inner = SimpleDense(2)

        def call(self, x):
            return self.inner(x)

    class M(ap.Model):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.head = VarDense(), Lazy(), SimpleDense(1)

        def call(self, x, training=False):
            return self.head(self.a(x) + self.b(x))

    m = M()
    m.a.trainable = False
    m.b.trainable = False
    X = np.random.default_rng(0).standard_normal((8, 3))
    m(X)
    frozen = [m.a.w, m.b.inner.kernel, m.b.inner.bias]
    assert not any(v.trainable for v in frozen)
    assert m.trainable_variables == [m.head.kernel, m.head.bias]
    before = [v.numpy().copy() for v in frozen]
    head0 = m.head.kernel.numpy().copy()
    m.compile(optimizer=ap.optimizers.SGD(0.1), loss=ap.losses.MeanSquaredError())
    m.fit(X, np.random.default_rng(1).standard_normal((8, 1)), epochs=3, verbose=0)
    for v, b in zip(frozen, before):
        np.testing.assert_array_equal(v.numpy(), b)
    assert not np.array_equal(m.head.kernel.numpy(), head0)  # the fit did train
    m.b.trainable = True  # unfreezing makes them trainable again, as Keras
    assert m.b.inner.kernel.trainable and m.b.inner.bias.trainable
    assert not m.b.inner.count.trainable  # declared non-trainable: stays so
    m.a.trainable = True
    assert m.a.w.trainable
