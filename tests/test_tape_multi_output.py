"""Multi-output records (``tape.MultiNode``): ``np.split`` and its kin as ONE node with an output
per piece, checked against HIPS autograd and central differences: reverse mode, forward mode,
second order, unused pieces, pieces used twice or as sources, overlapping pieces, the view
(in-place) refusals, ``summary()``'s bytes and ``backward_source``.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from oracles import central

import autoprop as ap
from autoprop.core.tape import MultiNode

RNG = np.random.default_rng(17)
X0 = RNG.standard_normal((4, 6, 2))

# (autoprop/numpy call, autograd call): the pieces of x, each used in a different way
SPLITS = {
    "split": (lambda m, x: m.split(x, 3, axis=1)),
    "split_indices": (lambda m, x: m.split(x, [1, 4], axis=1)),
    "split_negative_axis": (lambda m, x: m.split(x, 2, axis=-1)),
    "array_split": (lambda m, x: m.array_split(x, 4, axis=1)),  # 2, 2, 1, 1
    "hsplit": (lambda m, x: m.hsplit(x, [2])),
    "vsplit": (lambda m, x: m.vsplit(x, 2)),
    "dsplit": (lambda m, x: m.dsplit(x, [1])),
    # x[:, :4], x[:, 4:2] (empty), x[:, 2:] (HIPS autograd's own split VJP gets these wrong: its
    # reference is the three slices)
    "overlapping": (lambda m, x: m.split(x, [4, 2], axis=1) if m is np else [x[:, :4], x[:, 4:2], x[:, 2:]]),
    "past_the_end": (lambda m, x: m.split(x, [2, 9], axis=1)),  # a last piece of size 0
}


def _loss(m, pieces, unused=()):
    """A scalar from the pieces: piece k enters as sum(sin(p) * (k + 1) * p), skipped if in ``unused``."""
    total = 0.0
    for k, p in enumerate(pieces):
        if k not in unused:
            total = total + m.sum(m.sin(p) * (k + 1.0) * p)
    return total


def _tape_grad(split, x0, unused=()):
    x = ap.constant(x0)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        pieces = split(np, x)
        loss = _loss(np, pieces, unused)
    return tape, tape.gradient(loss, x)


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_one_record_for_all_pieces_and_the_gradient_of_autograd(name):
    split = SPLITS[name]
    tape, g = _tape_grad(split, X0)
    assert [type(n) for n in tape._nodes].count(MultiNode) == 1
    assert [n.prim.name for n in tape._nodes].count("getitem") == 0
    ref = autograd.grad(lambda x: _loss(anp, split(anp, x)))(X0)
    np.testing.assert_allclose(g.numpy(), ref, rtol=1e-12, atol=1e-13)
    if name in ("split", "overlapping"):  # and central differences, once
        fd = central(lambda x: float(_loss(np, split(np, x))), X0, h=1e-6)
        np.testing.assert_allclose(g.numpy(), fd, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("unused", [(0,), (1,), (0, 2)])
def test_unused_pieces_get_zeros_and_no_piece_used_gives_none(unused):
    split = SPLITS["split"]
    _, g = _tape_grad(split, X0, unused)
    ref = autograd.grad(lambda x: _loss(anp, split(anp, x), unused))(X0)
    np.testing.assert_array_equal(g.numpy(), ref)  # zeros exactly where the unused pieces sit
    for k in unused:
        assert not g.numpy()[:, 2 * k : 2 * k + 2].any()
    x = ap.constant(X0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        np.split(x, 3, axis=1)
        other = np.sum(x * 2.0)
    assert tape.gradient(other, x).numpy() == pytest.approx(np.full(X0.shape, 2.0))
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a, b, c = np.split(x, 3, axis=1)
        loss = np.sum(b * 0.0 + 1.0)
    y = ap.constant(np.ones(3))
    assert tape.gradient(np.sum(y), x) is None  # not connected: None, not zeros
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), np.zeros(X0.shape))


def test_a_piece_used_twice_and_a_piece_as_a_source_and_as_a_target():
    x = ap.constant(X0)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a, b = np.split(x, [2], axis=1)
        loss = np.sum(a * a) + np.sum(np.tanh(a) * b[:, :2]) + np.sum(b)
    ref = autograd.grad(lambda x: (lambda a, b: anp.sum(a * a) + anp.sum(anp.tanh(a) * b[:, :2])
                                   + anp.sum(b))(*anp.split(x, [2], axis=1)))(X0)
    gx, ga, gb = tape.gradient(loss, [x, a, b])
    np.testing.assert_allclose(gx.numpy(), ref, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(ga.numpy(), ref[:, :2], rtol=1e-13, atol=1e-14)  # a piece as a source
    np.testing.assert_allclose(gb.numpy(), ref[:, 2:], rtol=1e-13, atol=1e-14)
    np.testing.assert_array_equal(tape.gradient(a, x).numpy()[:, :2], np.ones((4, 2, 2)))  # as a target
    np.testing.assert_array_equal(tape.gradient(a, x).numpy()[:, 2:], 0.0)


def test_second_order_against_autograd():
    split = SPLITS["array_split"]
    f = lambda m, x: _loss(m, split(m, x), unused=(1,))  # noqa: E731
    x = ap.constant(X0)
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            loss = f(np, x)
        g = inner.gradient(loss, x)
        s = np.sum(g * g * 0.5)
    hv = outer.gradient(s, x)  # H g
    ref = autograd.grad(lambda x: anp.sum(autograd.grad(lambda y: f(anp, y))(x) ** 2 * 0.5))(X0)
    np.testing.assert_allclose(hv.numpy(), ref, rtol=1e-11, atol=1e-12)


def test_forward_mode_and_forward_over_reverse_against_autograd():
    split = SPLITS["overlapping"]
    t0 = RNG.standard_normal(X0.shape)
    x = ap.constant(X0)
    with ap.ForwardAccumulator(x, t0) as acc:
        pieces = split(np, x)
        loss = _loss(np, pieces)
    for p, ref in zip(pieces, split(np, t0)):  # linear: each piece's tangent is that piece of t
        np.testing.assert_array_equal(acc.jvp(p).numpy(), ref)
    jvp_ref = np.sum(autograd.grad(lambda x: _loss(anp, split(anp, x)))(X0) * t0)
    assert float(acc.jvp(loss)) == pytest.approx(jvp_ref, rel=1e-12)
    with ap.ForwardAccumulator(x, t0) as acc:  # forward over reverse: H t
        with ap.GradientTape() as tape:
            tape.watch(x)
            loss = _loss(np, split(np, x), unused=(0,))
        g = tape.gradient(loss, x)
    ref = autograd.make_hvp(lambda x: _loss(anp, split(anp, x), unused=(0,)))(X0)[0](t0)
    np.testing.assert_allclose(acc.jvp(g).numpy(), ref, rtol=1e-11, atol=1e-12)


def test_float32_and_complex_keep_their_dtype():
    x32 = ap.constant(X0.astype(np.float32))
    with ap.GradientTape() as tape:
        tape.watch(x32)
        a, b = np.split(x32, 2, axis=0)
        loss = np.sum(a * 3.0)
    g = tape.gradient(loss, x32)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g.numpy(), np.concatenate([np.full((2, 6, 2), 3.0), np.zeros((2, 6, 2))]))
    z0 = X0[:, :, 0] + 1j * X0[:, :, 1]
    z = ap.constant(z0)
    with ap.GradientTape() as tape:
        tape.watch(z)
        a, b = np.split(z, 2, axis=1)
        loss = np.real(np.sum(a * a))
    ref = autograd.grad(lambda z: anp.real(anp.sum(anp.split(z, 2, axis=1)[0] ** 2)))(z0)
    # tape.gradient gives TensorFlow's convention for a complex source, the conjugate of autograd's (lesson 10 §5b)
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), np.conj(ref), rtol=1e-13)


def test_pieces_are_views_and_the_in_place_refusals_still_fire():
    x = ap.constant(X0)
    with ap.GradientTape() as tape:
        tape.watch(x)
        a, b = np.split(x, 2, axis=1)
        with pytest.raises(TypeError, match="view"):
            a *= 2.0  # numpy would write into x
        with pytest.raises(TypeError, match="view"):
            x += 1.0  # numpy would change a and b
        loss = np.sum(a) + np.sum(b * b)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(),
                               np.concatenate([np.ones((4, 3, 2)), 2 * X0[:, 3:]], axis=1))
    x = ap.constant(X0)  # also outside a tape (no record): still views
    a, b = np.split(x, 2, axis=1)
    with pytest.raises(TypeError, match="view"):
        b -= 1.0


def test_summary_counts_nothing_for_the_pieces_and_lists_them():
    x = ap.Variable(X0)
    with ap.GradientTape() as tape:
        a, b, c = np.split(x, 3, axis=1)
        loss = np.sum(np.tanh(a) * b) + np.sum(c)
    text = tape.summary()
    line = next(ln for ln in text.splitlines() if "split_pieces" in ln)
    assert line.split()[-2:] == ["0", "B"] and line.count("[(4, 2, 2)]") == 3
    assert "total saved for backward" in text
    assert tape.gradient(loss, x) is not None


def test_backward_source_writes_the_split_vjp_as_a_concatenate():
    x = ap.Variable(X0, name="x")
    with ap.GradientTape(persistent=True) as tape:
        a, b, c = np.split(x, 3, axis=1)
        loss = np.sum(np.tanh(a) * c)  # b unused: zeros in the concatenate
    src = tape.backward_source(loss, [x])
    assert "np.concatenate(" in src.code
    np.testing.assert_allclose(src.run()[0], tape.gradient(loss, x).numpy(), rtol=1e-14)


def test_explain_and_trace_see_through_the_record():
    x = ap.constant(X0)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a, b = np.split(x, 2, axis=1)
        loss = np.sum(b)
    assert "connected" in tape.explain(loss, x)
    assert "connected" in tape.explain(loss, b)
