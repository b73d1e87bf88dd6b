"""Issue 12 §3, never a silently wrong number: TapeEscapeWarning and strict mode, forward
mode with positional arguments, forward mode and forward-over-reverse against reverse mode
over the whole registry and the zoo, prod's second derivatives at exact zeros, and
batch_jacobian's cross-row probe."""

import re
import warnings

import numpy as np
import pytest
from primitive_samples import SAMPLES

import autoprop as ap
from autoprop.core import registry as R

# --- TapeEscapeWarning ------------------------------------------------------------------


def _escapes(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [w for w in rec if issubclass(w.category, ap.TapeEscapeWarning)]


def test_np_array_of_tensors_warns_at_that_line_naming_tensor_shape_and_fix():
    x, y = ap.Variable([1.0, 2.0], name="x"), ap.Variable([3.0, 4.0], name="y")
    with ap.GradientTape() as tape:
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            z = np.array([x, y]); line = __import__("inspect").currentframe().f_lineno  # noqa: E702
        loss = ap.sum(x * z[0])
    got = [w for w in rec if issubclass(w.category, ap.TapeEscapeWarning)]
    assert len(got) == 1  # one per line per recording (x and y left at this line)
    w = got[0]
    assert w.filename == __file__ and w.lineno == line
    msg = str(w.message)
    assert "Variable 'x'" in msg and "shape (2,)" in msg
    assert "np.stack([a, b])" in msg and "ap.numpy_function" in msg and ".numpy()" in msg
    # the escape cut the path: only x's direct use would count (a wrong [1, 2]), so it is refused
    with pytest.raises(ap.TapeEscapeError, match="1 value computed from Variable 'x'"):
        tape.gradient(loss, x)


def test_assignment_into_an_ndarray_and_a_numpy_call_bypassing_dispatch_warn():
    x = ap.Variable(np.arange(6.0).reshape(3, 2), name="X")
    with ap.GradientTape():
        h = ap.tanh(x)
        cols = np.zeros((3, 4))
        idx = [1, 3]
        got = _escapes(lambda: cols.__setitem__((slice(None), idx), h))
        assert len(got) == 1 and "computed by tanh" in str(got[0].message)
        assert "shape (3, 2)" in str(got[0].message)
        got = _escapes(lambda: np.asarray(h))
        assert len(got) == 1
        scipy_special = pytest.importorskip("scipy.special")
        got = _escapes(lambda: scipy_special.logsumexp(h))
        assert len(got) >= 1 and got[0].filename == __file__


def test_tolist_of_a_gradient_carrier_warns_and_names_the_fix():
    """sum(v.tolist()) + np.sum(v) read like tensor code; the tolist half used to drop its
    gradient silently (gradient [1, 1, 1], truth [2, 2, 2]: the tester's round 18)."""
    v = ap.Variable(np.array([1.0, -2.0, 3.0]))
    with ap.GradientTape() as tape:
        got = _escapes(lambda: v.tolist())
        assert len(got) == 1 and ".tolist()" in str(got[0].message)
        assert "t.numpy().tolist() (quiet)" in str(got[0].message) and got[0].filename == __file__
        with pytest.warns(ap.TapeEscapeWarning):
            y = sum(v.tolist()) + np.sum(v)
    with pytest.raises(ap.TapeEscapeError, match=r"\.tolist\(\)"):  # (was the warned cut, [1, 1, 1])
        tape.gradient(y, v)
    assert v.tolist() == [1.0, -2.0, 3.0] and not _escapes(lambda: v.tolist())  # no tape recording
    with ap.strict_mode(), ap.GradientTape(), pytest.raises(ap.TapeEscapeError, match="tolist"):
        v.tolist()
    with ap.ForwardAccumulator(v, np.ones(3)):
        assert len(_escapes(lambda: v.tolist())) == 1


def test_np_array_of_a_list_of_tensors_warns_with_the_np_stack_fix():
    """numpy gives np.array/np.asarray of a list no dispatch hook: the warning names the
    recorded spelling, np.stack([...]), whose gradient is HIPS autograd's for np.array
    (autograd: [[2, 4, 6], [32, 40, 48]] for sum(array([x[0], 2 x[1]]) ** 2))."""
    x0 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    v = ap.Variable(x0)
    with ap.GradientTape(persistent=True) as tape:
        got = _escapes(lambda: np.array([v[0], v[1] * 2]))
        assert len(got) == 1 and "np.stack([a, b]) instead of np.array([a, b])" in str(got[0].message)
        y = np.sum(np.stack([v[0], v[1] * 2]) ** 2)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [[2.0, 4.0, 6.0], [32.0, 40.0, 48.0]])


def test_explicit_conversions_constants_and_no_tape_stay_quiet():
    x = ap.Variable([1.0, 2.0])
    c = ap.constant([5.0, 6.0])
    with ap.GradientTape() as tape:
        y = x * 2
        assert not _escapes(lambda: (y.numpy(), y[1].item(), y.numpy().tolist()))
        # float() is what math.exp(t) calls, so it cannot be quiet (the tester's round 5)
        assert len(_escapes(lambda: float(y[0]))) == 1
        assert not _escapes(lambda: np.array([c, c]))  # carries no gradient
        loss = ap.sum(y)
    assert not _escapes(lambda: np.array([x, y]))  # no tape recording
    with ap.GradientTape(watch_accessed_variables=False):
        assert not _escapes(lambda: np.asarray(x))  # not watched, never will be
    assert tape.gradient(loss, x) is not None


def test_strict_mode_makes_it_an_error_as_call_and_as_context_manager():
    x = ap.Variable([1.0, 2.0], name="w")
    with ap.strict_mode():
        with ap.GradientTape():
            with pytest.raises(ap.TapeEscapeError, match="Variable 'w'.*shape \\(2,\\)"):
                np.array([x, x])
            x.numpy()  # explicit: still allowed
    with ap.GradientTape():
        assert len(_escapes(lambda: np.asarray(x))) == 1  # off again after the block
    ap.strict_mode()
    try:
        with ap.GradientTape():
            with pytest.raises(ap.TapeEscapeError):
                np.asarray(x)
    finally:
        ap.strict_mode(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ap.TapeEscapeWarning)  # the standard way works too
        with ap.GradientTape():
            with pytest.raises(ap.TapeEscapeWarning):
                np.asarray(x)


def test_the_library_itself_never_escapes_in_a_training_step():
    model = ap.layers.Sequential(ap.layers.Conv2D(1, 2, 3, padding=1, rng=0), ap.layers.ReLU(),
                                 ap.layers.MaxPool2D(2), ap.layers.Flatten(),
                                 ap.layers.BatchNorm1D(8), ap.layers.Linear(8, 3, rng=1))
    X = ap.constant(np.random.default_rng(0).standard_normal((4, 1, 4, 4)))
    with ap.strict_mode():
        with ap.GradientTape() as tape:
            loss = ap.losses.SoftmaxCrossEntropy()(np.array([0, 1, 2, 1]), model(X, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None for g in grads)


# --- forward mode with positional arguments ----------------------------------------------
POSITIONAL = [
    ("reshape(6, 4)", lambda x: x.reshape(6, 4)), ("reshape(-1)", lambda x: x.reshape(-1)),
    ("transpose(1, 0, 2)", lambda x: x.transpose(1, 0, 2)), ("transpose((2, 0, 1))", lambda x: x.transpose((2, 0, 1))),
    ("swapaxes(0, 2)", lambda x: x.swapaxes(0, 2)), ("flatten()", lambda x: x.flatten()),
    ("flatten('F')", lambda x: x.flatten("F")), ("ravel()", lambda x: x.ravel()), ("T", lambda x: x.T),
    ("np.transpose", lambda x: np.transpose(x, (1, 0, 2))), ("np.swapaxes", lambda x: np.swapaxes(x, 2, 0)),
    ("np.reshape F", lambda x: np.reshape(x, (4, 6), order="F")), ("np.moveaxis", lambda x: np.moveaxis(x, 0, -1)),
]


@pytest.mark.parametrize("name, f", POSITIONAL, ids=[p[0] for p in POSITIONAL])
def test_forward_mode_with_positional_arguments(name, f):
    rng = np.random.default_rng(3)
    x0, t = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    x = ap.constant(x0)
    with ap.ForwardAccumulator(x, t) as acc:
        y = f(x)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), f(ap.constant(t)).numpy())  # linear maps
    np.testing.assert_array_equal(y.numpy(), f(ap.constant(x0)).numpy())


# --- forward mode and forward-over-reverse agree with reverse mode -----------------------
def _for_and_ror(call, prim_tensors, rng):
    """Forward-over-reverse and reverse-over-reverse of L = sum(call() * G) along u."""
    with ap.GradientTape() as probe:
        probe.watch(prim_tensors)
        shape = call().shape
    del probe
    G = rng.standard_normal(shape)
    us = [rng.standard_normal(p.shape) for p in prim_tensors]
    with ap.ForwardAccumulator(prim_tensors, us) as acc:
        with ap.GradientTape() as tape:
            tape.watch(prim_tensors)
            L = ap.sum(call() * G)
        gs = tape.gradient(L, prim_tensors, unconnected_gradients="zero")
    f_o_r = [acc.jvp(g, unconnected_gradients="zero").numpy() for g in gs]
    with ap.GradientTape() as outer:
        outer.watch(prim_tensors)
        with ap.GradientTape() as tape:
            tape.watch(prim_tensors)
            L = ap.sum(call() * G)
        gs = tape.gradient(L, prim_tensors, unconnected_gradients="zero")
        s = sum(ap.sum(g * u) for g, u in zip(gs, us))
    r_o_r = [r.numpy() for r in outer.gradient(s, prim_tensors, unconnected_gradients="zero")]
    return f_o_r, r_o_r


def _jvp_and_vjp(call, prim_tensors, rng):
    """<v, J u> from forward mode and <J^T v, u> from reverse mode."""
    us = [rng.standard_normal(p.shape) for p in prim_tensors]
    with ap.ForwardAccumulator(prim_tensors, us) as acc:
        y = call()
    jv = acc.jvp(y, unconnected_gradients="zero").numpy()
    v = rng.standard_normal(y.shape)
    with ap.GradientTape() as tape:
        tape.watch(prim_tensors)
        y2 = call()
    gs = tape.gradient(y2, prim_tensors, output_gradients=v, unconnected_gradients="zero")
    return float(np.sum(v * jv)), float(sum(np.sum(u * g.numpy()) for u, g in zip(us, gs)))


@pytest.mark.parametrize("name", sorted(n for n, p in R.PRIMITIVES.items() if p.vjps is not None))
def test_forward_over_reverse_matches_reverse_over_reverse_for_every_primitive(name):
    prim = R.PRIMITIVES[name]
    rng = np.random.default_rng(11)
    args, kwargs = SAMPLES[name].make(rng)
    ts = [ap.constant(a) if isinstance(a, np.ndarray) else a for a in args]
    diff = [ts[i] for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
            and prim.vjps[i] is not None]
    def call():
        y = prim(*ts, **kwargs)  # a MultiPrimitive's outputs (split) end to end, as one tensor
        return np.concatenate([o.reshape(-1) for o in y]) if isinstance(y, list) else y

    f_o_r, r_o_r = _for_and_ror(call, diff, rng)
    rtol = 1e-5 if name == "cast" else 1e-8
    for a, b in zip(f_o_r, r_o_r):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-10)


COMPOSITES = {  # numpy functions built from primitives, with the list among them
    "max": lambda x: np.max(x, axis=1), "min": lambda x: np.min(x, axis=0),
    "logsumexp": lambda x: ap.logsumexp(x, axis=1), "norm": lambda x: np.linalg.norm(x, axis=1),
    "norm_fro": lambda x: np.linalg.norm(x), "norm_nuc": lambda x: np.linalg.norm(x, "nuc"),
    "std": lambda x: np.std(x, axis=0), "var": lambda x: np.var(x, axis=1, ddof=1),
    "prod": lambda x: np.prod(x, axis=1), "outer": lambda x: np.outer(x[0], x[1]),
    "einsum": lambda x: np.einsum("ij,kj->ik", x, x), "reshape": lambda x: x.reshape(4, 3) ** 3,
    "transpose": lambda x: x.transpose(1, 0) ** 2, "swapaxes": lambda x: np.swapaxes(x, 0, 1) ** 2,
    "stack": lambda x: np.stack([x, x * x], axis=1), "split": lambda x: np.split(x, 2, axis=1)[1] ** 2,
    "take": lambda x: np.take(x, [0, 2, 2], axis=1) ** 2, "cumsum": lambda x: np.cumsum(x ** 2, axis=1),
    "tril": lambda x: np.tril(x @ x.T), "softmax": lambda x: ap.softmax(x, axis=0),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_forward_mode_and_forward_over_reverse_through_composites(name):
    rng = np.random.default_rng(5)
    x = ap.constant(rng.uniform(0.5, 1.5, (3, 4)))
    f = COMPOSITES[name]
    lhs, rhs = _jvp_and_vjp(lambda: f(x), [x], rng)
    assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-12)
    (a,), (b,) = _for_and_ror(lambda: f(x), [x], rng)
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def _zoo_cases():
    from gradcheck.zoo import discover, entries_for

    return [pytest.param(name, kind, e, id=e.label) for name, kind in discover() for e in entries_for(name)]


@pytest.mark.parametrize("name, kind, entry", _zoo_cases())
def test_forward_mode_and_forward_over_reverse_through_every_zoo_layer_and_loss(name, kind, entry):
    from gradcheck import zoo

    rng = np.random.default_rng(0)
    ns = ap.layers if kind == "layer" else ap.losses
    obj = entry.make(ns, rng)
    data = np.random.default_rng(1)
    if kind == "layer":
        X = entry.inputs(data) if entry.inputs is not None else entry.input_shape
        xs = ([data.standard_normal(s) for s in X] if isinstance(X, list)
              else [data.standard_normal(X)] if isinstance(X, tuple) else [X])
        ts = [ap.constant(x) for x in xs]

        def call():
            return obj(*ts, training=entry.training)
        prim = [t for t in ts if t.dtype.kind == "f"] + list(getattr(obj, "trainable_variables", []))
    else:
        y_pred = data.standard_normal(entry.input_shape)
        y_true = (entry.targets or zoo._real_targets)(data, entry.input_shape)
        ts = [ap.constant(y_pred)]

        def call():
            return obj(y_true, ts[0])
        prim = ts
    lhs, rhs = _jvp_and_vjp(call, prim, rng)
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-11)
    f_o_r, r_o_r = _for_and_ror(call, prim, rng)
    for a, b in zip(f_o_r, r_o_r):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


# --- prod: second derivatives at exact zeros ------------------------------------------------
def test_prod_second_derivatives_at_exact_zeros():
    f = lambda x: np.prod(x)  # noqa: E731
    x0, v = np.array([0.0, 2.0]), np.array([1.0, 1.0])
    np.testing.assert_array_equal(ap.hessian(f, x0).numpy(), [[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(ap.hessian_vector_product(f, x0, v).numpy(), [1.0, 1.0])  # reverse-over-reverse
    x = ap.constant(x0)
    with ap.ForwardAccumulator(x, v) as acc:
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    np.testing.assert_array_equal(acc.jvp(g).numpy(), [1.0, 1.0])  # forward-over-reverse
    with ap.GradientTape() as tape:
        tape.watch(x)
        with ap.ForwardAccumulator(x, v) as acc:
            y = f(x)
        d = acc.jvp(y)
    np.testing.assert_array_equal(tape.gradient(d, x).numpy(), [1.0, 1.0])  # reverse-over-forward


@pytest.mark.parametrize("x0, axis", [
    (np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]]), 1), (np.array([[0.0, 2.0], [3.0, 4.0]]), None),
    (np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 5.0]]), 0), (np.array([0.0, 0.0, 3.0]), None),
])
def test_prod_hessian_with_zeros_against_the_formula(x0, axis):
    # d2 prod / dx_k dx_l = product of the elements other than k and l (same reduced row)
    H = ap.hessian(lambda x: ap.sum(np.prod(x, axis=axis)), x0).numpy().reshape(x0.size, x0.size)
    flat = x0.ravel()
    rows = (np.zeros(x0.shape, int) if axis is None else
            np.indices(x0.shape)[1 - axis]).ravel()
    want = np.zeros_like(H)
    for k in range(flat.size):
        for m in range(flat.size):
            if k != m and rows[k] == rows[m]:
                want[k, m] = np.prod([flat[j] for j in range(flat.size) if rows[j] == rows[k] and j not in (k, m)])
    np.testing.assert_array_equal(H, want)


# --- batch_jacobian: the cross-row probe --------------------------------------------------
def test_batch_jacobian_warns_when_rows_interact_and_is_quiet_otherwise():
    x = ap.constant(np.random.default_rng(0).standard_normal((4, 3)))
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        independent = ap.tanh(x) * x[:, :1]
        mixed = x - ap.reduce_mean(x, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        J = tape.batch_jacobian(independent, x).numpy()
    full = tape.jacobian(independent, x).numpy()
    for i in range(4):
        np.testing.assert_allclose(J[i], full[i, :, i, :], rtol=1e-14)
    with pytest.warns(UserWarning, match="rows depend on other rows.*tape.jacobian"):
        tape.batch_jacobian(mixed, x)
    bn = ap.layers.BatchNorm1D(3)
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = bn(x, training=True)
    with pytest.warns(UserWarning, match="rows depend on other rows"):
        tape.batch_jacobian(y, x)


# --- augmented assignment on a view (numpy writes through; a tensor cannot) ----------------


def _numpy_then_tape(fn, x):
    """fn on a plain array (numpy's value), then on a Variable under a tape."""
    want = fn(np.array(x, dtype=float))
    v = ap.Variable(np.array(x, dtype=float))
    with ap.GradientTape() as tape:
        y = fn(v)
    return want, y, tape, v


@pytest.mark.parametrize("write, op", [
    (lambda b: b[0].__imul__(3.0), "*="),            # row = b[0]; row *= 3
    (lambda b: b.T.__isub__(1.0), "-="),             # z = b.T; z -= 1
    (lambda b: b[:1].__itruediv__(2.0), "/="),       # z = b[:1]; z /= 2
    (lambda b: b.reshape(-1).__iadd__(1.0), "+="),   # z = b.reshape(-1); z += 1
    (lambda b: b[..., 1:].__ipow__(2.0), "**="),
])
def test_augmented_op_on_a_view_is_refused_where_numpy_would_write_through(write, op):
    def f(a):
        b = a * 1.0
        write(b)
        return (b ** 2).sum()

    x = [[1.0, 2.0], [3.0, 4.0]]
    plain = f(np.array(x))
    assert plain != (np.array(x) ** 2).sum()  # numpy's b did change through the view
    with pytest.raises(TypeError, match=rf"`t {re.escape(op)} value` on a tensor made by .*a view "
                                        r"of another tensor's values.*numpy would write through"):
        with ap.GradientTape():
            f(ap.Variable(x))


def test_augmented_op_on_a_variables_slice_is_refused():
    v = ap.Variable([[1.0, 2.0], [3.0, 4.0]])
    row = v[0]
    with pytest.raises(TypeError, match="getitem of a tensor of shape \\(2, 2\\)"):
        row *= 2.0
    np.testing.assert_array_equal(v.numpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_augmented_op_on_a_new_tensor_or_a_copy_matches_numpy_with_its_gradient():
    def f(a):
        c = a * 1.0 + 0.0    # a new tensor, no view
        c *= 3.0
        r = c[[0]]           # advanced indexing copies in numpy too
        r += 10.0
        return (c ** 2).sum() + r.sum()

    x = [[1.0, 2.0], [3.0, 4.0]]
    want, y, tape, v = _numpy_then_tape(f, x)
    assert float(y) == want == 9 * 30 + 3 * 3 + 20
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), 18 * np.array(x) + [[3, 3], [0, 0]])


@pytest.mark.parametrize("view", [np.fliplr, np.flipud, np.rot90, np.squeeze, np.atleast_2d, np.real,
                                  lambda b: np.split(b, 2)[1], lambda b: np.moveaxis(b, 0, 1),
                                  lambda b: np.expand_dims(b, 0)])
def test_numpy_functions_that_give_views_are_views_whatever_autoprop_computes(view):
    # fliplr/rot90 are gathers here and atleast_2d/squeeze/real returned the input tensor itself:
    # `v += 2` gave numpy's b unchanged (124.5 for numpy's 186.5), with no error
    def f(a):
        b = a * 1.0
        v = view(b)
        v += 2.0
        return (b ** 2).sum()

    x = np.arange(1.0, 7.0).reshape(2, 3)
    assert f(x.copy()) != (x ** 2).sum()  # numpy wrote through the view
    with pytest.raises(TypeError, match="a view of another tensor's values"):
        with ap.GradientTape():
            f(ap.Variable(x))


@pytest.mark.parametrize("piece", range(4))
def test_every_piece_of_a_recorded_split_is_a_view(piece):
    # session 24: call_multi marks the pieces after the first against the input found for the
    # first (the same base array) without searching again; each piece is still refused as a
    # view (numpy would write through into b), under its own name as the LSTM twin unpacks them
    from autoprop.core import registry as R

    b0 = ap.Variable(np.arange(16.0).reshape(2, 8))
    with ap.GradientTape():
        b = b0 * 1.0
        pieces = dict(zip("ifgo", R.split(b, 4, axis=1)))  # (the list is gone: names hold them)
        t = pieces.pop("ifgo"[piece])
        with pytest.raises(TypeError, match="a view of another tensor's values"):
            t += 1.0
    np.testing.assert_array_equal(b.numpy(), np.arange(16.0).reshape(2, 8))


@pytest.mark.parametrize("take", [lambda b: b[0], lambda b: b.reshape(-1), lambda b: np.fliplr(b)])
def test_an_augmented_op_on_a_tensor_that_has_a_view_is_refused(take):
    # row = b[0]; b *= 2: numpy's row changes too (56.0), the tensor's row did not (14.0)
    b = ap.constant([[1.0, 2.0], [3.0, 4.0]]) * 1.0
    row = take(b)
    with pytest.raises(TypeError, match="on a tensor that has a view"):
        b *= 2.0
    del row  # the view gone (corpus39 H4): numpy's write-through is seen by no one, and b is rebound
    b *= 2.0
    np.testing.assert_array_equal(b.numpy(), [[2.0, 4.0], [6.0, 8.0]])


def test_copy_and_flatten_are_new_arrays_as_in_numpy_so_their_augmented_ops_are_rebindings():
    def f(a):
        b = a.reshape(2, 3)   # a view of the input: the checker's X often is one
        z = b.copy()
        z -= 1.0
        w = b.flatten()
        w *= 2.0
        c = np.copy(b)
        c += 3.0
        return (z ** 2).sum() + w.sum() + c.sum() + (b ** 2).sum()

    x = np.arange(1.0, 7.0)
    want, y, tape, v = _numpy_then_tape(f, x)
    assert float(y) == want
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), 2 * (x - 1) + 2 + 1 + 2 * x, rtol=1e-15)
