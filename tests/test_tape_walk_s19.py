"""Session 19 (issue 15): the reverse walk's buffer ownership by identity, and split's VJP
without generator frames (docs/speed.md, "Session 19 (autoprop)")."""

import numpy as np

import autoprop as ap


def test_a_buffer_handed_on_as_g_is_never_written_by_another_inputs_slices():
    # a's gradient is the walk's own buffer (two slices of a); add's VJP hands that very
    # array on to c (the same shape: g itself), and c's own slice comes later in the walk:
    # it must be added into a copy, never into a's buffer (a is a source: its gradient is returned)
    x = np.arange(12.0).reshape(4, 3)
    c = ap.constant(x)
    with ap.GradientTape() as tape:
        tape.watch(c)
        s = c[0]  # recorded first: walked last
        a = c + 0.0
        y = ap.sum(a[0]) + ap.sum(a[1] * 3.0) + ap.sum(s * 5.0)
    ga, gc = tape.gradient(y, [a, c])
    expect_a = np.zeros((4, 3))
    expect_a[0], expect_a[1] = 1.0, 3.0
    np.testing.assert_array_equal(ga.numpy(), expect_a)
    expect_a[0] += 5.0
    np.testing.assert_array_equal(gc.numpy(), expect_a)


def test_a_dense_term_between_slices_ends_the_buffer_and_the_sum_stays_exact():
    x = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    c = ap.constant(x)
    with ap.GradientTape(persistent=True) as tape:
        tape.watch(c)
        y = ap.sum(c[3] * 7.0)  # walked last: a slice after the dense term
        y = y + ap.sum(c * c)  # dense: 2x, replaces the buffer with a new sum
        y = y + ap.sum(c[0]) + ap.sum(c[1:3] * 2.0)  # walked first: the walk's buffer
    g1 = tape.gradient(y, c).numpy()
    g2 = tape.gradient(y, c).numpy()  # a second walk of the same records: the same values
    expect = np.zeros_like(x)  # in the walk's order: the slices' buffer, c * c's two terms, c[3]
    expect[1:3] += 2.0
    expect[0] += 1.0
    expect = expect + x + x
    expect[3] += 7.0
    np.testing.assert_array_equal(g1, expect)
    np.testing.assert_array_equal(g2, expect)


def test_split_pieces_that_tile_and_that_overlap_get_their_gradients_back():
    x = np.arange(24.0).reshape(4, 6)
    for bounds, axis in (([2, 4], 1), ([3], 0), ([4, 2], 1), ([5, 5], 1)):
        c = ap.constant(x)
        with ap.GradientTape() as tape:
            tape.watch(c)
            pieces = np.split(c, bounds, axis=axis)
            y = sum(ap.sum(p * float(i + 1)) for i, p in enumerate(pieces))
        got = tape.gradient(y, c).numpy()
        expect = np.zeros_like(x)
        for i, p in enumerate(np.split(np.arange(x.size).reshape(x.shape), bounds, axis=axis)):
            np.add.at(expect.reshape(-1), p.reshape(-1), float(i + 1))
        np.testing.assert_array_equal(got, expect, err_msg=f"{bounds} axis={axis}")
