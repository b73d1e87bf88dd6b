"""A *partial* escape: part of the target's computation left the tape implicitly (float(),
__array__, an assignment into an ndarray), another part stayed, so the target is still a
Tensor and the tape would return a partial gradient (tester24a's HIGH 1: a CS231n loop conv
into np.zeros plus the L2 term gave db None and dw = reg * w only). gradient() refuses it with
a TapeEscapeError naming the first escape's line, how it left, how many and the rewrite.
Escapes after the target was made, explicit exits (.numpy(), .item()) and escapes of values
that depend on no requested source stay allowed. Each rewrite's gradient is checked against
HIPS autograd and central differences."""

import math
import warnings

import autograd
import autograd.numpy as agn
import numpy as np
import pytest

import autoprop as ap

RS = np.random.RandomState(0)
X = RS.randn(1, 2, 4, 4)
W0 = 0.3 * RS.randn(3, 2, 2, 2)
B0 = RS.randn(3)
G = RS.randn(1, 3, 3, 3)
REG = 0.1


def conv_loop(x, w, b):
    """A student's loop conv (stride 1, no pad), writing each output into an np.zeros buffer."""
    n, c, hh, ww = x.shape
    f, _, kh, kw = w.shape
    out = np.zeros((n, f, hh - kh + 1, ww - kw + 1))
    for i in range(n):
        for j in range(f):
            for k in range(out.shape[2]):
                for m in range(out.shape[3]):
                    out[i, j, k, m] = np.sum(x[i, :, k:k + kh, m:m + kw] * w[j]) + b[j]  # ESCAPE-LINE
    return out


def conv_stacked(x, w, b, np=np):
    """The rewrite the error names: collect the pieces in a list and stack them."""
    n, c, hh, ww = x.shape
    f, _, kh, kw = w.shape
    ho, wo = hh - kh + 1, ww - kw + 1
    pieces = [np.sum(x[i, :, k:k + kh, m:m + kw] * w[j]) + b[j]
              for i in range(n) for j in range(f) for k in range(ho) for m in range(wo)]
    return np.reshape(np.stack(pieces), (n, f, ho, wo))


def _loss(out, w, np=np):
    return np.sum(out * G) + 0.5 * REG * np.sum(w * w)


def _line(marker):
    with open(__file__) as fh:
        return next(i for i, text in enumerate(fh, 1) if marker in text and "def _line" not in text
                    and "marker" not in text)


def _record(fn, *values, persistent=False):
    ts = [ap.Variable(v, name=n) for v, n in zip(values, "wbcdef")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ap.GradientTape(persistent=persistent) as tape:
            target = fn(*ts)
    return tape, target, ts, [c for c in caught if issubclass(c.category, ap.TapeEscapeWarning)]


def test_loop_conv_plus_l2_is_refused_naming_line_how_count_and_rewrite():
    tape, loss, (w, b), warned = _record(lambda w, b: _loss(conv_loop(X, w, b), w), W0, B0)
    assert isinstance(loss, ap.Tensor)  # the L2 term kept it on the tape
    with pytest.raises(ap.TapeEscapeError) as err:
        tape.gradient(loss, [w, b])
    msg = str(err.value)
    assert f"test_autoprop_escape_partial.py:{_line('ESCAPE-LINE')}" in msg
    assert "float()" in msg and "assignment into a numpy array" in msg
    assert "27 values" in msg  # 1 x 3 x 3 x 3 outputs, each left once
    assert "np.stack" in msg and ".item()" in msg
    # L2: one warning per source line per recording (not 27), saying the rest are counted
    assert len(warned) == 1 and "not repeated" in str(warned[0].message)


def test_the_rewrite_agrees_with_autograd_and_central_differences():
    w, b = ap.Variable(W0), ap.Variable(B0)
    with ap.GradientTape() as tape:
        loss = _loss(conv_stacked(X, w, b), w)
    dw, db = tape.gradient(loss, [w, b])

    def f(wv, bv):
        return _loss(conv_stacked(X, wv, bv, np=agn), wv, np=agn)
    ag_w, ag_b = autograd.grad(f, 0)(W0, B0), autograd.grad(f, 1)(W0, B0)
    np.testing.assert_allclose(dw.numpy(), ag_w, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(db.numpy(), ag_b, rtol=1e-12, atol=1e-13)
    h, u = 1e-6, RS.randn(*W0.shape)
    cd = (f(W0 + h * u, B0) - f(W0 - h * u, B0)) / (2 * h)
    assert abs(cd - np.sum(dw.numpy() * u)) < 1e-7 * max(1.0, abs(cd))
    # and the loop's own value (what the refused gradient would have differentiated)
    np.testing.assert_allclose(f(W0, B0), _loss(conv_loop(X, W0, B0), W0), rtol=1e-13)


def max_pool_loop(x):
    n, c, hh, ww = x.shape
    out = np.zeros((n, c, hh // 2, ww // 2))
    for i in range(n):
        for j in range(c):
            for k in range(hh // 2):
                for m in range(ww // 2):
                    out[i, j, k, m] = np.max(x[i, j, 2 * k:2 * k + 2, 2 * m:2 * m + 2])
    return out


def rnn_loop(x, wx, wh):
    n, t_len, _ = x.shape
    h = np.zeros((n, t_len, wh.shape[0]))
    prev = np.zeros((n, wh.shape[0]))
    for t in range(t_len):
        nxt = np.tanh(x[:, t, :] @ wx + prev @ wh)
        h[:, t, :] = nxt  # a (n, H) Tensor into a slice: numpy's __array__
        prev = nxt
    return h


X1 = RS.randn(1, 2, 4, 4)
XS, WX0, WH0 = RS.randn(2, 3, 4), RS.randn(4, 5), 0.3 * RS.randn(5, 5)
KINDS = {  # each a loss whose other part keeps it a Tensor
    "max_pool": (lambda x: np.sum(max_pool_loop(x) * 2.5) + np.sum(x * x), [X1]),
    "rnn": (lambda wx, wh: np.sum(rnn_loop(XS, wx, wh) * 1.5) + REG * np.sum(wh * wh), [WX0, WH0]),
    "tolist": (lambda x: sum(np.ravel(x).tolist()) + np.sum(x), [X1]),
    # the value that left is itself on the target's recorded path
    "math.exp": (lambda x: np.sum(x) * math.exp(np.sum(x) / 10), [X1]),
    "np.array list": (lambda x: np.sum(np.array([x[0, 0, 0, 0], x[0, 1, 1, 1]]) * 2.0) + np.sum(x), [X1]),
}


@pytest.mark.parametrize("case", list(KINDS))
def test_every_partial_escape_kind_is_refused(case):
    fn, vals = KINDS[case]
    tape, loss, ts, _ = _record(fn, *vals)
    assert isinstance(loss, ap.Tensor)
    with pytest.raises(ap.TapeEscapeError, match="left the tape implicitly"):
        tape.gradient(loss, ts)


def test_jacobian_and_a_persistent_tape_refuse_only_targets_made_after_the_escape():
    w = ap.Variable([1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        with ap.GradientTape(persistent=True) as tape:
            before = w * w * 2.0  # made before the escape: allowed, always
            buf = np.zeros(3)
            buf[0] = w[0] * w[1]  # float(): the product leaves the tape
            after = w * 3.0 + buf  # could have been fed by it: refused
    np.testing.assert_array_equal(tape.jacobian(before, w).numpy(), np.diag([4.0, 8.0, 12.0]))
    with pytest.raises(ap.TapeEscapeError):
        tape.jacobian(after, w)
    with pytest.raises(ap.TapeEscapeError):
        tape.gradient(after, w)
    v = ap.Variable([[1.0], [2.0], [3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        with ap.GradientTape(persistent=True) as tape2:
            buf = np.zeros((3, 1))
            buf[0, 0] = v[0, 0] * 2.0
            rows = v * 3.0 + buf
    with pytest.raises(ap.TapeEscapeError):
        tape2.batch_jacobian(rows, v)
    np.testing.assert_array_equal(tape.gradient(before, w).numpy(), [4.0, 8.0, 12.0])


def _tape(fn, *vals):
    ts = [ap.Variable(v) for v in vals]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        with ap.GradientTape(persistent=True) as tape:
            out = fn(*ts)
    return tape, out, ts


def test_escapes_that_cannot_have_fed_the_target_stay_allowed():
    def after(w):  # an escape after the target was made cannot have fed it
        loss = np.sum(w * w * 1.5)
        assert float(np.sum(w * w)) == 5.0 and float(loss) == 7.5
        return loss
    tape, loss, (w,) = _tape(after, [1.0, 2.0])
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [3.0, 6.0])

    def other_source(w, c):  # the value that left depends on c only
        return np.sum(w * 4.0) + float(np.sum(c))
    tape, loss, (w, c) = _tape(other_source, [1.0, 2.0], [3.0, -1.0])
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [4.0, 4.0])
    with pytest.raises(ap.TapeEscapeError):
        tape.gradient(loss, [w, c])  # c requested: its only path left through float()

    def explicit(w):  # .numpy() and .item() are the explicit exits (TensorFlow's): never refused
        mid = w * w
        return np.sum(mid * 0.5) + np.sum(mid.numpy()) + mid[0].item()
    tape, loss, (w,) = _tape(explicit, [1.0, 2.0])
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [1.0, 2.0])

    def no_reentry(w):  # an implicit escape, but no constant that could hold it enters the target
        assert float(np.sum(w * w)) == 5.0
        return np.sum(w**2)
    tape, loss, (w,) = _tape(no_reentry, [1.0, 2.0])
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [2.0, 4.0])


def test_strict_mode_setitem_raises_our_error():
    w = ap.Variable([1.0, 2.0])
    out = np.zeros(2)
    with ap.strict_mode(), ap.GradientTape():
        with pytest.raises(ap.TapeEscapeError, match="carries gradient"):
            out[:] = w * 2.0
        # one element: numpy's C setitem replaces any exception that float() of an object with
        # __getitem__ raises by its own ValueError; ours is its cause, shown above it
        with pytest.raises(ValueError, match="sequence") as err:
            out[0] = w[0] * w[1]
        assert isinstance(err.value.__cause__, ap.TapeEscapeError)


def test_one_warning_per_line_per_recording():
    w = ap.Variable(np.arange(6.0))
    for _ in range(2):  # a new recording warns again
        out = np.zeros(6)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with ap.GradientTape():
                for i in range(6):
                    out[i] = w[i] * 2.0  # one line, six escapes
                out[0] = w[0] * 3.0  # another line
        assert len(caught) == 2, [str(c.message)[:80] for c in caught]


def test_a_forward_accumulator_refuses_a_partial_escape_too():
    x = ap.constant([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        with ap.ForwardAccumulator(x, [1.0, 1.0]) as acc:
            before = x * x * 2.0
            buf = np.zeros(2)
            buf[0] = x[0] * x[1]  # the product and its tangent leave through float()
            after = x * 3.0 + buf
            clean = x**2
    np.testing.assert_array_equal(acc.jvp(before).numpy(), [4.0, 8.0])
    np.testing.assert_array_equal(acc.jvp(clean).numpy(), [2.0, 4.0])
    with pytest.raises(ap.TapeEscapeError, match="ForwardAccumulator.jvp.*float"):
        acc.jvp(after)


def test_explain_names_a_cut_path_by_the_same_rule():
    w = ap.Variable([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ap.TapeEscapeWarning)
        with ap.GradientTape(persistent=True) as tape:
            cut = float(np.sum(w * w))
            fed = np.sum(w * cut)
            clean = np.sum(w**2)
    assert "a path was cut" in tape.explain(fed, w)
    assert "a path was cut" not in tape.explain(clean, w)
