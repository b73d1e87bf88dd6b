"""The shared optimizer remembers what kind of input passed (issue 15), and every error still fires.

``manualprop.optim`` learns once per class how to read a variable or gradient object (its
``__array__`` or its ``numpy()``), and ``check_update`` once per signature that a gradient's
dtype and shape fit; finiteness is checked on every call. Each test first updates with good
input, twice, for each kind of pair (arrays in place, autoprop Variables with Tensor
gradients, duck-typed objects with only ``numpy()``), then gives a bad input of the SAME kind
and shape, so that a check that only ran on the first call would be caught missing. The
messages are the ones the optimizer gave before it remembered anything.
"""

import numpy as np
import pytest

import autoprop as ap
import manualprop as mp


class DuckVariable:
    """assign_sub() and numpy(), no __array__ (read through numpy())."""

    def __init__(self, value):
        self.value = np.array(value, dtype=float)

    def assign_sub(self, delta):
        self.value = self.value - delta

    def numpy(self):
        return self.value.copy()


class DuckGradient:
    def __init__(self, value):
        self.value = np.asarray(value)

    def numpy(self):
        return self.value


def _pair(kind, value, grad):
    if kind == "array":
        return np.array(grad), np.array(value, dtype=float)
    if kind == "tensor":
        return ap.constant(np.array(grad)), ap.Variable(np.array(value, dtype=float))
    return DuckGradient(grad), DuckVariable(value)


def _value(var):
    return np.array(var if isinstance(var, np.ndarray) else var.numpy())


KINDS = ["array", "tensor", "duck"]


def _warm(opt, kind, n=2):
    """Two good updates of the kind and shape the test then spoils (each a fresh variable)."""
    for _ in range(n):
        g, v = _pair(kind, [1.0, 2.0], [0.5, 0.5])
        opt.apply_gradients([(g, v)])
        assert np.all(_value(v) < [1.0, 2.0])  # a step downhill was taken


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_gradient_after_good_ones_is_refused_before_any_update(kind, bad):
    opt = mp.SGD(learning_rate=0.1)
    _warm(opt, kind)
    g0, v0 = _pair(kind, [1.0, 2.0], [0.5, 0.5])
    g1, v1 = _pair(kind, [1.0, 2.0], [0.5, bad])
    with pytest.raises(ValueError, match=r"^SGD\(.*\)\.apply_gradients: gradient for variable #1 "
                                         r"must contain only finite values; got 1 NaN/inf value"):
        opt.apply_gradients([(g0, v0), (g1, v1)])
    np.testing.assert_array_equal(_value(v0), [1.0, 2.0])  # nothing updated


@pytest.mark.parametrize("kind", KINDS)
def test_a_gradient_of_the_wrong_shape_after_good_ones_is_refused(kind):
    opt = mp.Adam()
    _warm(opt, kind)
    g, v = _pair(kind, [1.0, 2.0], [0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match=r"^Adam\(.*\)\.apply_gradients: gradient for variable #0 "
                                         r"must have the variable's shape \(2,\); got \(3,\)$"):
        opt.apply_gradients([(g, v)])


@pytest.mark.parametrize("kind", KINDS)
def test_an_integer_gradient_after_good_ones_is_refused(kind):
    opt = mp.RMSProp()
    _warm(opt, kind)
    g, v = _pair(kind, [1.0, 2.0], np.array([1, 2]))
    with pytest.raises(TypeError, match=r"gradient for variable #0 must have dtype float32 or "
                                        r"float64; got int64"):
        opt.apply_gradients([(g, v)])


def test_a_gradient_numpy_cannot_read_after_good_ones_is_refused():
    class Ragged:
        def numpy(self):
            return [[1.0], [1.0, 2.0]]

    opt = mp.SGD(learning_rate=0.1)
    _warm(opt, "duck")
    with pytest.raises(TypeError, match=r"gradient for variable #0 must have dtype float32 or "
                                        r"float64; got object"):
        opt.apply_gradients([(DuckGradient(np.array([None, 1.0])), DuckVariable([1.0, 2.0]))])
    with pytest.raises(TypeError, match=r"gradient for variable #0 must be a NumPy array; got list "
                                        r"that NumPy cannot convert"):
        opt.apply_gradients([(Ragged(), DuckVariable([1.0, 2.0]))])


@pytest.mark.parametrize("kind", KINDS)
def test_a_variable_of_no_known_kind_after_good_ones_is_refused(kind):
    opt = mp.SGD(learning_rate=0.1)
    _warm(opt, kind)
    g, _ = _pair(kind, [1.0, 2.0], [0.5, 0.5])
    with pytest.raises(TypeError, match=r"variable #0 must be a NumPy array \(updated in place\) "
                                        r"or an object with assign_sub\(\) and numpy\(\); got list"):
        opt.apply_gradients([(g, [1.0, 2.0])])


def test_an_object_whose_methods_are_its_own_is_checked_every_time():
    # the class does not define assign_sub/numpy, one object of it does: remembering the
    # class would let the next object through; it is checked object by object instead
    class Bare:
        pass

    opt = mp.SGD(learning_rate=0.1)
    good = Bare()
    good.value = np.array([1.0])
    good.assign_sub = lambda d: setattr(good, "value", good.value - d)
    good.numpy = lambda: good.value.copy()
    for _ in range(2):
        opt.apply_gradients([(np.array([1.0]), good)])
    np.testing.assert_allclose(good.value, [0.8])
    with pytest.raises(TypeError, match=r"variable #0 must be a NumPy array .* got Bare"):
        opt.apply_gradients([(np.array([1.0]), Bare())])


def test_a_read_only_array_after_good_ones_is_refused():
    opt = mp.SGD(learning_rate=0.1)
    _warm(opt, "array")
    frozen = np.array([1.0, 2.0])
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"variable #0 must be a writeable array \(updated in "
                                         r"place\); got a read-only array"):
        opt.apply_gradients([(np.array([0.5, 0.5]), frozen)])


@pytest.mark.parametrize("kind", KINDS)
def test_pairs_and_missing_gradients_after_good_ones(kind):
    opt = mp.SGD(learning_rate=0.1)
    _warm(opt, kind)
    g, v = _pair(kind, [1.0, 2.0], [0.5, 0.5])
    with pytest.raises(TypeError, match=r"item 1 must be a \(grad, var\) pair \(tuple or list of "
                                        r"2\); got tuple"):
        opt.apply_gradients([(g, v), (g, v, v)])
    with pytest.raises(ValueError, match=r"no gradients provided for any variable \(variable #0"
                                         r".*, variable #1.*\): the loss does not depend on them"):
        opt.apply_gradients([(None, v), (None, v)])
    with pytest.warns(UserWarning, match=r"gradients do not exist for variable #0.*; they are not "
                                         r"updated"):
        opt.apply_gradients([(None, v), (g, v)])
    np.testing.assert_array_equal(_value(v), np.array([1.0, 2.0]) - 0.1 * np.array([0.5, 0.5]))


def test_step_after_good_ones_still_refuses_a_nan_and_different_keys():
    opt = mp.SGD(learning_rate=0.1)
    params = {"w": np.ones(3)}
    for _ in range(2):
        opt.step(params, {"w": np.full(3, 0.5)})
    with pytest.raises(ValueError, match=r"\.step: gradient for params\['w'\] must contain only "
                                         r"finite values"):
        opt.step(params, {"w": np.array([0.5, np.nan, 0.5])})
    with pytest.raises(ValueError, match=r"\.step: params and grads must have the same keys; got "
                                         r"params-only \['w'\], grads-only \['v'\]"):
        opt.step(params, {"v": np.ones(3)})
    np.testing.assert_array_equal(params["w"], 1.0 - 0.1 * 0.5 - 0.1 * 0.5)


def test_a_tensor_read_by_the_optimizer_is_a_read_only_view_and_the_update_is_exact():
    # the optimizer calls a Tensor's __array__ itself: the same read-only view np.asarray gives
    from manualprop.optim import _via_array

    t = ap.constant([1.0, 2.0])
    a = _via_array(t)
    assert not a.flags.writeable and np.shares_memory(a, t._value)
    v = ap.Variable([1.0, 2.0])
    opt = mp.SGD(learning_rate=0.25, momentum=0.5)
    for _ in range(3):
        opt.apply_gradients([(ap.constant([1.0, -1.0]), v)])
    p, buf = np.array([1.0, 2.0]), None
    for _ in range(3):  # PyTorch's momentum by hand
        buf = np.array([1.0, -1.0]) if buf is None else 0.5 * buf + np.array([1.0, -1.0])
        p = p - 0.25 * buf
    np.testing.assert_array_equal(v.numpy(), p)
