"""Session 42's speed changes keep every value and every error (issue 15, issue 10's checker figure).

``im2col`` builds its strided view directly (no ``np.pad``, ``sliding_window_view`` or ``moveaxis``):
the columns must be the ones the old construction gives, element for element, in the same C layout,
for any kernel, stride, padding and dilation, any memory layout of the input, and the same error
when a window does not fit.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from manualprop._im2col import im2col


def _reference(X, kernel_size, stride, padding, dilation):
    """The construction of sessions 1-41: np.pad, sliding_window_view of the dilated span, slices, moveaxis."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    X = np.asarray(X)
    if ph or pw:
        X = np.pad(X, [(0, 0)] * (X.ndim - 2) + [(ph, ph), (pw, pw)])
    v = sliding_window_view(X, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(-2, -1))
    v = v[..., ::sh, ::sw, ::dh, ::dw]
    return np.ascontiguousarray(np.moveaxis(v, (-2, -1), (-4, -3)))


SPECS = [
    ((3, 3), (1, 1), (1, 1), (1, 1)),
    ((3, 3), (2, 2), (0, 0), (1, 1)),
    ((2, 3), (2, 1), (1, 2), (2, 1)),
    ((1, 1), (1, 1), (0, 0), (1, 1)),
    ((5, 2), (3, 2), (2, 0), (1, 3)),
    ((4, 4), (1, 3), (3, 1), (2, 2)),
]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("layout", ["C", "F", "sliced", "reversed"])
def test_im2col_gives_the_old_columns_bit_for_bit_in_every_layout(spec, layout):
    rng = np.random.default_rng(len(layout))
    X = rng.standard_normal((2, 3, 9, 11))
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "sliced":
        X = rng.standard_normal((3, 5, 19, 23))[::2, ::2, 1::2, ::2]
    elif layout == "reversed":
        X = X[:, ::-1, ::-1, ::-1]
    got, want = im2col(X, *spec), _reference(X, *spec)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.flags.c_contiguous
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, bool])
def test_im2col_keeps_the_dtype_and_pads_with_zeros(dtype):
    X = (np.arange(2 * 5 * 6).reshape(2, 5, 6) % 7).astype(dtype)
    got, want = im2col(X, 3, 1, 2), _reference(X, (3, 3), (1, 1), (2, 2), (1, 1))
    assert got.dtype == want.dtype == np.dtype(dtype)
    assert np.array_equal(got, want)


def test_im2col_of_a_spatial_only_and_an_empty_batch():
    X = np.arange(30.0).reshape(5, 6)
    assert np.array_equal(im2col(X, 2, 1, 1), _reference(X, (2, 2), (1, 1), (1, 1), (1, 1)))
    E = np.zeros((0, 3, 6, 6))
    assert im2col(E, 3, 1, 1).shape == _reference(E, (3, 3), (1, 1), (1, 1), (1, 1)).shape == (0, 3, 3, 3, 6, 6)


def test_im2col_does_not_write_or_alias_its_input():
    X = np.random.default_rng(0).standard_normal((2, 2, 5, 5))
    keep = X.copy()
    cols = im2col(X, 3, 1, 1)
    cols[...] = 7.0  # the columns are a new, writeable array
    assert np.array_equal(X, keep)
    cols = im2col(X, 3, 1, 0)
    assert not np.shares_memory(cols, X)


@pytest.mark.parametrize("args", [((2, 2, 3, 3), 5, 1, 0), ((2, 2, 3, 3), 3, 1, 0, 3), ((4,), 1, 1, 0)])
def test_im2col_raises_as_before_when_a_window_does_not_fit(args):
    shape, *spec = args
    X = np.ones(shape)
    with pytest.raises(ValueError) as new:
        im2col(X, *spec)
    full = [(s, s) if isinstance(s, int) else s for s in spec] + [(1, 1)] * (4 - len(spec))
    with pytest.raises(ValueError) as old:
        _reference(X, *full)
    assert str(new.value) == str(old.value)


def test_im2col_every_small_spec_against_the_reference():
    X = np.random.default_rng(1).standard_normal((1, 2, 6, 7))
    for kh, kw, sh, sw, ph, pw, dh, dw in itertools.product((1, 2, 3), (1, 3), (1, 2), (1, 3), (0, 1), (0, 2),
                                                            (1, 2), (1,)):
        spec = ((kh, kw), (sh, sw), (ph, pw), (dh, dw))
        assert np.array_equal(im2col(X, *spec), _reference(X, *spec)), spec


# ---------------------------------------------------------------- autoprop.function's layout check at each call
def _model():
    from autoprop import layers as al

    m = al.Model()
    m.blocks = [al.Linear(4, 4, rng=0), al.Linear(4, 4, rng=1)]
    m.stages = [[al.Linear(4, 4, rng=2)], (al.Tanh(), [])]
    m.heads = {"a": al.Linear(4, 3, rng=3), "b": [al.Linear(4, 3, rng=4)]}
    m.numbers = [1, 2, 3]  # no layer: not in the layout
    m.empty = []
    return m


def _changes():
    from autoprop import layers as al

    other = al.Linear(4, 4, rng=9)
    yield "unchanged", lambda m: None
    yield "popped", lambda m: m.blocks.pop()
    yield "appended", lambda m: m.blocks.append(other)
    yield "replaced in a list", lambda m: m.blocks.__setitem__(0, other)
    yield "swapped", lambda m: m.blocks.reverse()
    yield "nested list changed", lambda m: m.stages[0].append(other)
    yield "nested empty list filled", lambda m: m.stages[1][1].append(other)
    yield "dict item replaced", lambda m: m.heads.__setitem__("a", other)
    yield "dict key added", lambda m: m.heads.__setitem__("c", other)
    yield "dict key removed", lambda m: m.heads.pop("a")
    yield "dict nested list emptied", lambda m: m.heads["b"].clear()
    yield "a list of numbers now holds a layer", lambda m: m.numbers.append(other)
    yield "an empty list filled", lambda m: m.empty.append(other)
    yield "a list replaced behind __setattr__", lambda m: m.__dict__.__setitem__("blocks", list(m.blocks))
    yield "a layer list now holds only numbers", lambda m: m.__dict__.__setitem__("stages", [[1], (2, [])])


@pytest.mark.parametrize("name, change", list(_changes()), ids=[n for n, _ in _changes()])
def test_the_layout_walk_says_what_the_built_comparison_says(name, change):
    """``_layout_same`` (the walk without building the layout, session 42) against ``_same(_layout(...))``, the
    comparison of sessions 39-41, after each kind of in-place change of a layer's lists and dicts."""
    from autoprop.layers.base import _layout, _layout_same
    from autoprop.tracing import _same

    m = _model()
    then = _layout(m)
    change(m)
    want = _same(_layout(m), then)
    assert _layout_same(m, then) is want
    assert want is (name in ("unchanged", "a list replaced behind __setattr__"))


def test_a_traced_step_traces_again_after_each_layout_change():
    import autoprop as ap
    from autoprop import layers as al

    net = al.Sequential(al.Linear(4, 3, rng=0), al.Tanh(), al.Linear(3, 2, rng=1))
    x = np.random.default_rng(0).random((5, 4))

    @ap.function
    def f(x):
        return ap.reduce_sum(net(x))

    first = float(f(x).numpy())
    assert float(f(x).numpy()) == first and f.trace_count == 1
    net.layers.pop()  # in place: no attribute set
    assert float(f(x).numpy()) == float(ap.reduce_sum(net(x)).numpy()) != first
    net.layers.append(al.Linear(3, 2, rng=2))
    assert float(f(x).numpy()) == float(ap.reduce_sum(net(x)).numpy())


SCALE = 2.0


def test_rebound_names_are_seen_one_by_one_globals_and_cells():
    """``_Names.rebound`` (compared as read, session 42) says what comparing the built ``values()`` list said, for a
    rebound global, a rebound closure cell and a cell not yet filled."""
    from autoprop.tracing import _Names

    def outer():
        factor = 3.0

        def f(x):
            return x * SCALE * factor * later  # noqa: F821  (later: a cell filled after f is made)

        names = _Names(f)
        saved = names.values()
        assert not names.rebound(saved)
        later = 1.0  # noqa: F841  (fills the cell)
        yield names, saved
        factor = 4.0  # noqa: F841
        yield names, saved

    global SCALE
    runs = outer()
    names, saved = next(runs)
    assert names.rebound(saved)  # the cell filled since
    saved = names.values()
    assert not names.rebound(saved)
    SCALE = 5.0
    try:
        assert names.rebound(saved) is any(a is not b for a, b in zip(saved, names.values())) is True
        saved = names.values()
        assert not names.rebound(saved)
        names, _ = next(runs)
        assert names.rebound(saved)  # the closure's factor rebound
    finally:
        SCALE = 2.0


# ---------------------------------------------------------------- manualprop: the checks after warm steps
def _warm_mlp():
    import manualprop as mp

    net = mp.Sequential(mp.Linear(6, 5, rng=0), mp.Tanh(), mp.Linear(5, 3, rng=1))
    loss, opt = mp.SoftmaxCrossEntropy(), mp.SGD(learning_rate=0.1)
    X, y = np.random.default_rng(0).random((4, 6)), np.array([0, 2, 1, 2])

    def step(X=X, y=y):
        value = loss.forward(y, net.forward(X, training=True))
        net.backward(loss.backward(), input_grad=False)
        opt.step(net)
        return value

    for _ in range(3):
        step()
    return net, step, X


def _in_place_reshape(net):
    net.layers[0].params["W"].shape = (6, 5)


def _nan_in_x(X):
    X[1, 2] = np.nan


@pytest.mark.parametrize("change, error, said", [
    (lambda net, X: {"X": X[:, :5].copy()}, ValueError, r"Linear\(in_features=6, out_features=5\)\.forward"),
    (lambda net, X: {"X": X.astype(np.float32)}, TypeError, r"Linear\(in_features=6, out_features=5\)\.forward"),
    (lambda net, X: net.layers[0].params.__setitem__("W", np.zeros((5, 7))), ValueError,
     r"params\['W'\] has shape \(5, 7\), expected \(5, 6\)"),
    (lambda net, X: _in_place_reshape(net), ValueError, r"params\['W'\] has shape \(6, 5\), expected \(5, 6\)"),
    (lambda net, X: net.layers[2].params.__setitem__("b", np.zeros((1, 3))), ValueError,
     r"params\['b'\] has shape \(1, 3\), expected \(3,\)"),
    (lambda net, X: _nan_in_x(X), ValueError, r"NaN"),
], ids=["narrower X", "float32 X", "W replaced", "W reshaped in place", "b replaced", "NaN written into X"])
def test_manualprop_checks_fire_after_warm_steps_when_the_signature_changes(change, error, said):
    """Issue 15's "check once per input signature ... with the same clear errors": whatever a future cache keeps,
    a step after three good ones with the same objects must still refuse a changed input or parameter (the same
    X object written in place, W reshaped in place, a parameter replaced), naming the layer or the parameter."""
    net, step, X = _warm_mlp()
    kw = change(net, X) or {}
    with pytest.raises(error, match=said):
        step(**kw)


# ---------------------------------------------------------------- autoprop: a layer call's training flag
def test_a_bool_training_flag_builds_no_message_and_a_wrong_one_is_still_refused():
    """``Layer.__call__(x, training=True)`` formatted the layer's repr (a Sequential's lists every layer: 6-10 us, 5%
    of a B16 MLP step) for check_training's message on every call; a bool now passes without it, and an array there
    (PyTorch's positional state or mask) is refused with the message naming the layer, as before (verify41 H3)."""
    from autoprop import layers as al

    class Counted(al.Sequential):
        reprs = 0

        def __repr__(self):
            Counted.reprs += 1
            return super().__repr__()

    net = Counted(al.Linear(4, 3, rng=0), al.Tanh())
    x = np.ones((2, 4))
    for flag in (True, False, None, True):
        net(x, training=flag)
    assert Counted.reprs == 0
    with pytest.raises(TypeError, match=r"(?s)Sequential\(.*\.__call__: training must be True or False; got ndarray"):
        net(x, training=np.zeros((2, 3)))
    assert Counted.reprs == 1
    for flag in (np.True_, 0, 1):  # still accepted, through check_training
        net(x, training=flag)
