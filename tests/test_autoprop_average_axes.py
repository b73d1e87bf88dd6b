"""np.average with weights shaped like the reduced axes (numpy >= 2.0; its docstring example
``np.average(data, axis=(0, 1), weights=[[1/4, 3/4], [1, 1/2]])``), and numpy's own errors where
numpy raises (session 29, fixt29). Gradients against jax 0.10.2 (the references below, written
by ``jax.grad`` of the same losses under .venv-peers with x64) and float64 central differences;
the JVP against the same differences."""

import numpy as np
import pytest
from oracles import central_each

import autoprop as ap

X8 = np.array([[[-0.26997181778755863, 1.0037933791428697], [2.011540417777827, 2.8591219283623266]], [[3.7775329869111003, 4.71243861954612], [5.936296776554195, 6.928137161125948]]])
W22 = np.array([[0.2546903906680003, 0.7976423477290502], [1.1576212787596958, 0.6235190763659336]])
X234 = np.array([[[-1.6699613153859187, -2.2324993797182415, 0.06011966573083541, -0.8305089208950167], [-0.7551370241324996, -0.5807141142442936, 0.41772361621879156, 0.5678085702934009], [0.6860170259645172, 0.9247965351503759, 2.9825211297644363, 0.2947190698353022]], [[0.1543671895776007, -2.182201585413012, -1.6840606356409922, 2.192950883395955], [2.7457863435768988, 0.44634547717970313, -0.08028189799892683, 0.557088849689639], [-2.035279763150223, -0.5306071528504179, -0.4054187209770992, 1.7354992811557899]]])
W42 = np.array([[0.7188226088564011, 0.9175701532622609], [0.5432376384395161, 1.2928984015440674], [0.6608760386643614, 1.1584303209117537], [0.7363896251698548, 1.4451614493628995]])


def _avg_tuple(np, x, w):
    return (np.average(x, axis=(0, 1), weights=w) * np.array([1.0, 2.0])).sum()


def _avg_tuple_reversed(np, x, w):  # weights in the order of axis: shape (x.shape[2], x.shape[0])
    return (np.average(x, axis=(2, 0), weights=w, keepdims=True) ** 2).sum()


CASES = {"axis_tuple": (_avg_tuple, (X8, W22)), "axis_tuple_reversed": (_avg_tuple_reversed, (X234, W42))}
#: jax.grad of each loss, argnums (0, 1)
JAX = {
    'axis_tuple': [[[[0.08988629228568382, 0.17977258457136763], [0.2815069426819195, 0.563013885363839]], [[0.40855206333387045, 0.8171041266677409], [0.22005470169852623, 0.44010940339705246]]], [[-3.650601466477305, -1.535822488091239], [0.3955972822292493, 2.7214216875740043]]],
    'axis_tuple_reversed': [[[[-0.11445384772542438, -0.08649649744266227, -0.10522736007846273, -0.11725093922666253], [0.09381199635290464, 0.07089677860456545, 0.0862495138091691, 0.09610462995961741], [0.06868870918074202, 0.051910292891551586, 0.06315149449258019, 0.07036736488781262]], [[-0.14609923687007012, -0.20586052101253624, -0.18444996848538908, -0.23010446030235762], [0.11975011193418006, 0.16873339630105905, 0.15118425561678106, 0.18860491997139472], [0.087680477260769, 0.12354581117752197, 0.11069641165829966, 0.1380956487615684]]], [[0.04040190855180467, -0.05321669723181788], [0.17555217011701546, 0.16250852625328893], [0.1374465404380837, 0.026426159316491393], [0.04200433343632992, -0.30312520262594456]]],
}


def _central(fn, xs, h=1e-6):
    return central_each(lambda *a: fn(np, *a), xs, h=h)  # fn(np, *arrays)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_against_jax_and_central_differences_and_the_jvp(name):
    fn, xs = CASES[name]
    ts = [ap.Variable(x) for x in xs]
    with ap.GradientTape() as tape:
        y = fn(np, *ts)
    assert float(y.numpy()) == float(fn(np, *xs))  # numpy's own value
    fds = _central(fn, xs)
    for g, ref, fd in zip(tape.gradient(y, ts), JAX[name], fds):
        np.testing.assert_allclose(g.numpy(), ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g.numpy(), fd, rtol=1e-6, atol=1e-8)
    us = [np.random.default_rng(3).standard_normal(x.shape) for x in xs]
    cs = [ap.constant(x) for x in xs]
    with ap.ForwardAccumulator(cs, [ap.constant(u) for u in us]) as acc:
        y = fn(np, *cs)
    want = sum(float(np.sum(fd * u)) for fd, u in zip(fds, us))
    assert abs(float(acc.jvp(y).numpy()) - want) <= 1e-7 * (1 + abs(want))


def test_average_with_weights_shaped_like_the_axes_is_numpy_s_docstring_example():
    data = ap.Variable(np.arange(8.0).reshape(2, 2, 2))
    w = [[1. / 4, 3. / 4], [1., 1. / 2]]
    with ap.GradientTape() as tape:
        avg, scl = np.average(data, axis=(0, 1), weights=w, returned=True)
        loss = np.sum(avg * np.array([1.0, 10.0]))
    np.testing.assert_array_equal(avg.numpy(), np.average(np.arange(8.0).reshape(2, 2, 2), axis=(0, 1), weights=w))
    np.testing.assert_array_equal(avg.numpy(), [3.4, 4.4])
    np.testing.assert_array_equal(scl.numpy(), [2.5, 2.5])
    # d avg_j / d x_ikj = w_ik / sum(w) = w_ik / 2.5
    np.testing.assert_allclose(tape.gradient(loss, data).numpy(),
                               np.asarray(w)[:, :, None] / 2.5 * np.array([1.0, 10.0]), rtol=1e-15)


@pytest.mark.parametrize("call, err, words", [
    (lambda d, w: np.average(d, axis=0, weights=w), ValueError, "Shape of weights must be consistent"),
    (lambda d, w: np.average(d, weights=w), TypeError, "Axis must be specified when shapes of a and weights differ"),
    (lambda d, w: np.average(d, axis=(0, 3), weights=w), np.exceptions.AxisError, "axis 3 is out of bounds"),
    (lambda d, w: np.average(d, axis=(0, 0), weights=w), ValueError, "repeated axis"),
    (lambda d, w: np.average(d, axis=(0, 1), weights=w * 0.0), ZeroDivisionError, "Weights sum to zero"),
])
def test_average_raises_numpy_s_own_errors(call, err, words):
    d, w = np.arange(8.0).reshape(2, 2, 2), np.array([[1. / 4, 3. / 4], [1., 1. / 2]])
    with pytest.raises(err, match=words):
        call(d, w)  # numpy itself
    with pytest.raises(err, match=words):
        call(ap.constant(d), ap.constant(w))
