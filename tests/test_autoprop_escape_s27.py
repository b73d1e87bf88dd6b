"""tester27t's findings on published numpy code run on Tensors (session 27).

H1: pickling a tracked Tensor inside a tape dropped its gradient path without a word
(``h2 = pickle.loads(pickle.dumps(h)); loss = np.sum(h2 * x)`` gave [1, 2] for 2x = [2, 4]):
pickling is now an implicit escape, as ``np.asarray(t)`` (warning, breadcrumb, refusal);
copy.copy / copy.deepcopy stay recorded copies and a Variable's pickle a new Variable.
M1: the escape warning for ``scipy.stats.norm.logpdf`` said "scipy.stats.logpdf ... has no
autoprop twin": it names ``autoprop.scipy.stats.norm.logpdf``.
M2: the refusals of ``tape.gradient`` (a plain target, a partial escape) name the line, quote
it and repeat the warning's word on it (buffer write, np.array of Tensors, sklearn's
check_array, ``a.dot(t)``), so a notebook that filters warnings still reads the fix.
L3: ndarray metadata a Tensor lacked (itemsize, nbytes) and clear errors for the rest.
Each right value is checked against HIPS autograd or an explicit sum.
"""

import copy
import pickle
import warnings

import autograd
import autograd.numpy as agn
import autograd.scipy.stats as ags
import numpy as np
import pytest
import scipy.stats
import sklearn.metrics
import sklearn.utils
from numpy.lib.stride_tricks import as_strided, sliding_window_view

import autoprop as ap
import autoprop.numpy as anp
from autoprop.scipy import stats as aps

X0 = np.array([1.0, 2.0])


def _line(marker):
    with open(__file__) as fh:
        return next(i for i, text in enumerate(fh, 1) if marker in text and "_line(" not in text)


def _site(marker):
    return f"test_autoprop_escape_s27.py:{_line(marker)}"


def _quiet(fn, *xs, persistent=False):
    """Record fn(*xs) with every warning filtered, as many course notebooks do."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ap.GradientTape(persistent=persistent) as tape:
            y = fn(*xs)
    return tape, y


# --- H1: pickling inside a tape --------------------------------------------------------------------
def _pickled(h):
    return pickle.loads(pickle.dumps(h))  # PICKLE-LINE


def test_pickling_a_tracked_tensor_warns_at_the_line_and_the_partial_gradient_is_refused():
    x = ap.Variable(X0, name="x")
    with pytest.warns(ap.TapeEscapeWarning, match=r"was pickled here.*pickle t\.numpy\(\)") as caught:
        with ap.GradientTape() as tape:
            loss = np.sum(_pickled(x * 1.0) * x)  # = sum(x^2): before, the gradient was x = [1, 2]
    assert caught[0].filename == __file__ and caught[0].lineno == _line("PICKLE-LINE")
    with pytest.raises(ap.TapeEscapeError) as err:
        tape.gradient(loss, x)
    msg = str(err.value)
    assert f"left through pickling at {__file__}:{_line('PICKLE-LINE')}" in msg
    assert "`return pickle.loads(pickle.dumps(h))  # PICKLE-LINE`" in msg and "pickle t.numpy()" in msg
    # warnings filtered: the same refusal, not [1, 2]
    tape, loss = _quiet(lambda v: np.sum(_pickled(v * 1.0) * v), x)
    with pytest.raises(ap.TapeEscapeError, match=r"left through pickling"):
        tape.gradient(loss, x)
    with ap.strict_mode(), pytest.raises(ap.TapeEscapeError, match=r"was pickled here"):
        with ap.GradientTape():
            _pickled(x * 1.0)


def test_pickling_loses_the_tangent_too_and_the_jvp_is_refused():
    x = ap.Variable(X0, name="x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ap.ForwardAccumulator(x, np.ones(2)) as acc:
            loss = np.sum(_pickled(x * 1.0) * x)  # before: 3, where 2 x . 1 = 6 is right
    with pytest.raises(ap.TapeEscapeError, match=r"ForwardAccumulator\.jvp: refused.*left through pickling"):
        acc.jvp(loss)


def test_a_target_reached_only_through_the_pickle_gets_none_and_explain_names_it():
    x = ap.Variable(X0, name="x")
    with pytest.warns(ap.TapeEscapeWarning, match=r"was pickled here"):
        with ap.GradientTape(persistent=True) as tape:
            loss = np.sum(_pickled(x * 1.0) * 2.0)
    # a Tensor target with no recorded path, made of the escaped value: refused as a plain target is (fn41: it was
    # None, zeros with unconnected_gradients='zero', silently wrong where warnings are filtered)
    with pytest.raises(TypeError, match=r"the target is a constant Tensor .* by pickling"):
        tape.gradient(loss, x)
    assert "through pickling" in tape.explain(loss, x)


def test_copies_stay_recorded_and_pickles_of_constants_and_variables_stay_quiet():
    x = ap.Variable(X0, name="x")
    right = autograd.grad(lambda v: agn.sum(v * v))(X0)  # 2x
    for make in (copy.copy, copy.deepcopy, lambda t: copy.deepcopy({"h": t})["h"], lambda t: t.copy()):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning at all
            with ap.GradientTape() as tape:
                loss = np.sum(make(x * 1.0) * x)
            np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), right)
    c = ap.constant([3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ap.GradientTape() as tape:
            c2, x2 = _pickled(c), _pickled(x)  # a constant; a Variable: a new Variable (Keras-style saving)
            loss = np.sum(x * c2 + x2 * 5.0)
        gx, gx2 = tape.gradient(loss, [x, x2])
    assert type(x2) is ap.Variable and x2.name == "x" and x2._key != x._key
    assert gx.numpy().tolist() == [3.0, 4.0] and gx2.numpy().tolist() == [5.0, 5.0]
    y = _pickled(x * 2.0)  # outside a tape: a plain round trip
    assert type(y) is ap.Tensor and y.numpy().tolist() == [2.0, 4.0]


# --- M1: the warning names scipy.stats' twins ------------------------------------------------------
def test_scipy_stats_distribution_methods_name_their_autoprop_twin():
    x = ap.Variable([0.5, -1.0, 2.0], name="x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ap.GradientTape():
            scipy.stats.norm.logpdf(x, 0.3, 1.2)
            scipy.stats.multivariate_normal.logpdf(x, np.zeros(3), np.eye(3))
            scipy.stats.norm.ppf(x * 0.0 + 0.3)
            scipy.stats.norm(0.3, 1.2).logpdf(x)  # frozen: the method it runs is norm.logpdf's
    msgs = [str(w.message) for w in caught]
    assert len(msgs) == 4
    assert ("inside scipy.stats.norm.logpdf, a scipy function that converts its input to numpy: use "
            "autoprop.scipy.stats.norm.logpdf (the same signature, recorded)") in msgs[0]
    assert "use autoprop.scipy.stats.multivariate_normal.logpdf (the same signature" in msgs[1]
    assert ("inside scipy.stats.norm.ppf, a scipy function that converts its input to numpy and has no autoprop "
            "twin (autoprop.scipy.stats.norm twins cdf, logcdf, logpdf, logsf, pdf, sf only)") in msgs[2]
    assert "use autoprop.scipy.stats.norm.logpdf" in msgs[3]
    assert all("scipy.stats.logpdf" not in m for m in msgs)
    # the twins it names are recorded, with autograd's gradients
    with ap.GradientTape() as tape:
        y = np.sum(aps.norm.logpdf(x, 0.3, 1.2)) + aps.multivariate_normal.logpdf(x, np.zeros(3), np.eye(3))
    ref = autograd.grad(lambda v: agn.sum(ags.norm.logpdf(v, 0.3, 1.2))
                        + ags.multivariate_normal.logpdf(v, np.zeros(3), np.eye(3)))(np.array([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), ref, rtol=1e-13)


# --- M2: the refusals carry the line, its source and the specific fix -------------------------------
def word_embedding_forward(x, W):
    """CS231n assignment 3's word embedding, as students write it."""
    N, T = x.shape
    out = np.zeros((N, T, W.shape[1]))
    out[:, :] = W[x]  # BUFFER-LINE
    return out


def test_a_buffer_write_names_the_line_and_the_buffer_not_np_asarray():
    W = ap.Variable(np.arange(18.0).reshape(6, 3) / 10, name="W")
    idx = np.array([[0, 3, 3], [5, 0, 1]])
    tape, loss = _quiet(lambda w: np.sum(word_embedding_forward(idx, w) ** 2), W)
    with pytest.raises(TypeError) as err:
        tape.gradient(loss, W)
    msg = str(err.value)
    assert "the target is a plain numpy float64" in msg and _site("BUFFER-LINE") in msg
    assert "`out[:, :] = W[x]  # BUFFER-LINE`" in msg
    assert "It happened in an assignment into a numpy array" in msg and "`out = W[x]` for a gather" in msg
    assert "It happened in np.array" not in msg
    # the rewrite the message names is recorded, with autograd's gradient
    with ap.GradientTape() as tape:
        loss = np.sum(W[idx] ** 2)
    ref = autograd.grad(lambda w: agn.sum(w[idx] ** 2))(W.numpy())
    np.testing.assert_allclose(tape.gradient(loss, W).numpy(), ref, rtol=1e-15)


def test_element_writes_through_float_name_the_buffer_in_the_warning_and_the_refusal():
    x = ap.Variable([0.5, -1.0, 2.0], name="x")

    def rows(v):
        out = np.zeros(3)
        for i in range(3):
            out[i] = np.sum(v[i] * 2.0)  # ELEMENT-LINE
        return out

    with pytest.warns(ap.TapeEscapeWarning, match=r"float\(\) here, to be written into an element of a numpy "
                                                   r"array.*It happened in an assignment into a numpy array"):
        with ap.GradientTape() as tape:
            loss = np.sum(rows(x))
    with pytest.raises(TypeError) as err:
        tape.gradient(loss, x)
    msg = str(err.value)
    assert f"by float() at {__file__}:{_line('ELEMENT-LINE')}" in msg and "3 implicit conversions in all" in msg
    assert "It happened in an assignment into a numpy array" in msg and "np.exp(t), np.sqrt(t)" not in msg


def test_np_array_of_tensors_sklearn_and_dot_each_get_their_own_words():
    x = ap.Variable([0.5, -1.0, 2.0], name="x")
    P = ap.Variable(np.full((4, 3), 1 / 3), name="P")
    X = np.arange(6.0).reshape(2, 3)
    cases = [
        (lambda: np.sum(np.array([x[0] * 2.0, x[1]])), x, "ARRAY-LINE",  # ARRAY-LINE
         "It happened in np.array(...) / np.asarray(...) of Tensors", "np.stack([a, b])"),
        (lambda: sklearn.metrics.log_loss([0, 1, 2, 1], P), P, "SKLEARN-LINE",  # SKLEARN-LINE
         "It happened inside sklearn.metrics.log_loss, a scikit-learn function: it checks its input with "
         "check_array", "autoprop has no twins of scikit-learn's functions"),
        (lambda: np.sum(sklearn.utils.check_array(P)), P, "CHECK-LINE",  # CHECK-LINE
         "It happened inside sklearn.utils.validation.check_array, scikit-learn's input check", "call check_array on t.numpy()"),
        (lambda: np.sum(X.dot(x) ** 2), x, "DOT-LINE",  # DOT-LINE
         "It happened inside a.dot(t)", "Write a @ t or np.dot(a, t) (recorded)"),
    ]
    for fn, source, marker, what, fix in cases:
        tape, loss = _quiet(fn)
        with pytest.raises(TypeError) as err:
            tape.gradient(loss, source)
        msg = str(err.value)
        assert _site(marker) in msg, (marker, msg)  # the user's line, not one inside scikit-learn
        assert what in msg and fix in msg, (marker, msg)


def test_the_partial_escape_refusal_repeats_the_dot_hint():
    # repro_dot_msg.py: with an L2 term the target stays a Tensor; the refusal named the line but not X @ W
    rng = np.random.default_rng(0)
    X, W0 = rng.standard_normal((4, 5)), rng.standard_normal((5, 3))
    W = ap.Variable(W0, name="W")
    tape, loss = _quiet(lambda w: np.sum(X.dot(w) ** 2) + np.sum(w * w), W)  # PARTIAL-DOT
    with pytest.raises(ap.TapeEscapeError) as err:
        tape.gradient(loss, W)
    msg = str(err.value)
    assert _site("PARTIAL-DOT") in msg and "It happened inside a.dot(t)" in msg and "Write a @ t" in msg
    with ap.GradientTape() as tape:
        loss = np.sum((X @ W) ** 2) + np.sum(W * W)
    ref = autograd.grad(lambda w: agn.sum(agn.dot(X, w) ** 2) + agn.sum(w * w))(W0)
    np.testing.assert_allclose(tape.gradient(loss, W).numpy(), ref, rtol=1e-13)


# --- L3: ndarray attributes ---------------------------------------------------------------------------
def to_frames(x, frame_width, stride, as_strided=as_strided):
    """numpy-ml's dsp.to_frames: overlapping frames by as_strided, strides from x.itemsize."""
    byte = x.itemsize
    n_frames = (len(x) - frame_width) // stride + 1
    return as_strided(x, shape=(n_frames, frame_width), strides=(byte * stride, byte))  # STRIDED-LINE


def test_itemsize_and_nbytes_are_the_values_and_to_frames_reaches_the_clear_refusal():
    for value in (np.arange(6.0).reshape(2, 3), np.ones(5, np.float32), np.arange(4)):
        t = ap.constant(value)
        assert (t.itemsize, t.nbytes) == (value.itemsize, value.nbytes)
    sig = np.linspace(-1.0, 1.0, 8)
    x = ap.Variable(sig, name="x")
    G = np.arange(12.0).reshape(3, 4)
    numpys_own = np.lib.stride_tricks.as_strided  # (numpy's own: it never dispatches)
    tape, loss = _quiet(lambda v: np.sum(to_frames(v, 4, 2, numpys_own) * G), x)  # before: AttributeError itemsize
    with pytest.raises(TypeError) as err:
        tape.gradient(loss, x)
    assert _site("STRIDED-LINE") in str(err.value) and "sliding_window_view" in str(err.value)
    want = np.zeros(8)
    for i in range(3):
        want[2 * i:2 * i + 4] += G[i]
    for frames in (lambda v: sliding_window_view(v, 4)[::2],  # the rewrite it names
                   lambda v: to_frames(v, 4, 2, anp.lib.stride_tricks.as_strided)):  # session 35: recorded
        with ap.GradientTape() as tape:
            loss = np.sum(frames(x) * G)
        np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), want)


def test_the_other_ndarray_attributes_say_why_and_what_to_write():
    t = ap.Variable(np.arange(6.0).reshape(2, 3) - 2.0, name="t")
    for call, words in [
        (lambda: t.view(), r"no \.view\(\).*t\.reshape\(shape\).*t\.numpy\(\)\.view\(dtype\)"),
        (lambda: t.view(np.int64), r"no \.view\(\)"),
        (lambda: t.itemset(0, 1.0), r"immutable: t\.itemset\(i, v\).*ap\.where"),
        (lambda: t.setflags(write=True), r"immutable: t\.setflags\(write=True.*t\.numpy\(\)"),
        (lambda: t.tobytes(), r"no \.tobytes\(\).*t\.numpy\(\)\.tobytes\(order='C'\)"),
        (lambda: t.clip(0, None, out=t), r"cannot record Tensor\.clip\(\.\.\., out=\.\.\.\) \(numpy's out, given as "
                                         r"out= or as its 3rd positional argument\).*Drop it"),  # (session 38: the method's place)
    ]:
        with pytest.raises(TypeError, match=words):
            call()
    with pytest.raises(AttributeError, match=r"no __array_interface__.*t\.numpy\(\)\.__array_interface__"):
        t.__array_interface__  # noqa: B018
    assert not hasattr(t, "__array_interface__")  # numpy converts a Tensor through __array__, as before
    assert t.setflags(write=False) is None  # read-only already: nothing to do
    np.testing.assert_array_equal(t.clip(0, None).numpy(), np.clip(t.numpy(), 0, None))


# --- session 28 (review28a L3, L4) ---

@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_tensor_off_the_tape_pickles_at_every_protocol(protocol):
    """review28a L3: protocols 0 and 1 raised Python's __slots__ TypeError; numpy's arrays pickle at any."""
    t = pickle.loads(pickle.dumps(ap.constant(np.array([1.0, -2.5])), protocol=protocol))
    assert type(t) is ap.Tensor
    np.testing.assert_array_equal(t.numpy(), [1.0, -2.5])
    v = pickle.loads(pickle.dumps(ap.Variable(np.array([3.0]), name="w"), protocol=protocol))
    assert type(v) is ap.Variable and v.name == "w" and v.trainable
    np.testing.assert_array_equal(v.numpy(), [3.0])


def test_a_tracked_tensor_pickled_at_protocol_0_is_still_an_escape():
    x = ap.Variable(np.array([1.0, 2.0]))
    with ap.GradientTape() as tape:
        h = x * 1.0
        with pytest.warns(ap.TapeEscapeWarning):
            h2 = pickle.loads(pickle.dumps(h, protocol=0))
        y = ap.reduce_sum(h2 * x)
    with pytest.raises(ap.TapeEscapeError):
        tape.gradient(y, x)


def test_setflags_is_numpys_except_making_a_tensor_writable():
    """review28a L4: t.setflags() (numpy: changes nothing) and setflags(write=False, align=False) were refused."""
    base = np.zeros(3)
    t = ap.constant(base)
    u = t[:]
    assert t.setflags() is None and t.setflags(write=False) is None
    assert t.flags.aligned and not t.flags.writeable
    assert t.setflags(write=False, align=False) is None and t.setflags(align=True, uic=False) is None
    assert t.flags.aligned and not t.flags.writeable  # (t.flags reads the memory: a fresh view each time)
    assert u.flags.aligned and base.flags.aligned
    np.testing.assert_array_equal(t.numpy(), base)
    for write in (True, 1):
        with pytest.raises(TypeError, match=r"immutable: t\.setflags\(write=(True|1)\) cannot make a Tensor writable"):
            t.setflags(write=write)
    with pytest.raises(ValueError, match="WRITEBACKIFCOPY"):  # numpy's own refusal, as np.zeros(3).setflags(uic=True)
        t.setflags(uic=True)
