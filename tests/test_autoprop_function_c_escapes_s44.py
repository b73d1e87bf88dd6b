"""fn44: an integer array argument of autoprop.function left its guard through numpy's C methods called on the base
class and through the buffer protocol (``np.ndarray.tolist(idx)``, ``memoryview(idx)``, ``struct.unpack``,
``ctypes``, ``np.ndarray(buffer=idx)``, ``np.nditer(idx)``, ...): the guard was an ndarray subclass, whose memory C
code reads past every Python hook, so ``(x @ W)[:, np.ndarray.tolist(idx)]`` replayed the first call's columns at
every later call, a wrong gradient and no error. The guard is no longer an ndarray for C code (as JAX's tracers
are not): each route now raises while tracing (TypeError from C, TraceError naming the argument from Python).
autoprop's own numpy read such an argument in Python as a shape, axes or split points (``anp.reshape(x, y)``,
``anp.split(x, y)``): the first call's at every replay; refused now, as the user's own reads are."""
import array
import ctypes
import io
import struct

import numpy as np
import pytest

import autoprop as ap
import autoprop.numpy as anp

W = ap.Variable(np.arange(1.0, 13.0).reshape(3, 4))
X = np.arange(6.0).reshape(2, 3)
B = np.ndarray
IDS = ([0, 2], [1, 3], [3, 0])  # the trace's, then two calls with other ids


def _ints(buffer):
    return np.frombuffer(bytes(buffer), dtype=np.int64).tolist()


def _base(idx):
    b = B.base.__get__(idx)
    return idx if b is None else b  # (eager: the caller's array itself)


ROUTES = {  # each gives the ids as Python ints; eagerly, the columns asked for
    "ndarray.tolist": lambda idx: B.tolist(idx),
    "ndarray.item": lambda idx: [B.item(idx, 0), B.item(idx, 1)],
    "ndarray.tobytes": lambda idx: _ints(B.tobytes(idx)),
    "ndarray.__getitem__": lambda idx: [int(B.__getitem__(idx, 0)), int(B.__getitem__(idx, 1))],
    "ndarray.__array__": lambda idx: B.__array__(idx).tolist(),
    "ndarray.view": lambda idx: B.view(idx, np.ndarray).tolist(),
    "ndarray.__reduce__": lambda idx: _ints(B.__reduce__(idx)[2][4]),
    "ndarray.argmax": lambda idx: [int(B.argmax(idx)) * 2 + 1],
    "ndarray.data": lambda idx: B.data.__get__(idx).tolist(),
    "ndarray.base": lambda idx: _base(idx).tolist(),
    "ndarray.flat": lambda idx: [int(v) for v in B.flat.__get__(idx)],
    "ndarray.__array_interface__": lambda idx: list(
        (ctypes.c_int64 * 2).from_address(B.__array_interface__.__get__(idx)["data"][0])),
    "astype(subok=False)": lambda idx: idx.astype(np.int64, subok=False).tolist(),
    "memoryview": lambda idx: memoryview(idx).tolist(),
    "array.frombytes": lambda idx: (lambda a: (a.frombytes(memoryview(idx).cast("B")), a.tolist())[1])(
        array.array("q")),
    "struct.unpack": lambda idx: list(struct.unpack("2q", idx)),
    "int.from_bytes": lambda idx: [int.from_bytes(bytes(memoryview(idx))[8 * i:8 * i + 8], "little") for i in (0, 1)],
    "ctypes.from_buffer_copy": lambda idx: list((ctypes.c_int64 * 2).from_buffer_copy(idx)),
    "ctypes.from_buffer": lambda idx: list((ctypes.c_int64 * 2).from_buffer(idx)),
    "io.BytesIO": lambda idx: _ints(io.BytesIO(idx).getvalue()),
    "np.ndarray(buffer=)": lambda idx: np.ndarray((2,), np.int64, buffer=idx).tolist(),
    "np.nditer": lambda idx: [int(v) for v in np.nditer(idx)],
    "np.rec.fromarrays": lambda idx: np.rec.fromarrays([idx]).f0.tolist(),
    "np.require": lambda idx: np.require(idx, requirements="E").tolist(),
    "anp.asarray": lambda idx: anp.asarray(idx).tolist(),  # (autoprop's wrapper: numpy's plain array)
    "anp.array": lambda idx: anp.array(idx).tolist(),
}


@pytest.mark.parametrize("route", list(ROUTES))
def test_an_integer_arguments_memory_read_past_its_guard_is_refused_while_tracing(route):
    pick = ROUTES[route]

    def step(x, idx):
        with ap.GradientTape() as tape:
            y = anp.sum((x @ W)[:, pick(idx)] ** 2)
        return tape.gradient(y, W)

    wants = [step(X, np.array(ids)).numpy() for ids in IDS]  # eager numpy: the columns of each call's ids
    traced = ap.function(step)
    with pytest.raises((ap.TraceError, TypeError), match=r"_TracedInts|argument `idx`"):
        for ids, want in zip(IDS, wants):  # (on main: the later calls replayed the first ids' columns)
            assert np.array_equal(traced(X, np.array(ids)).numpy(), want), (route, ids)
    assert traced.trace_count == 0  # (refused at the trace: nothing cached)


def test_the_guard_still_passes_for_an_array_in_autoprops_and_the_users_ordinary_code():
    """(Not a failure on main: a failure of the first version of this change, eb7dc742, which refused
    ``np.asanyarray(y)``; ``isinstance(y, np.ndarray)`` is what the losses' label checks read.)"""
    loss_fn = ap.losses.SoftmaxCrossEntropy()

    def step(x, y):
        assert isinstance(y, np.ndarray) and y.shape == (2,) and len(y) == 2 and y.dtype.kind == "i"
        y = np.asanyarray(y)
        with ap.GradientTape() as tape:
            loss = loss_fn(y, x @ W) + anp.sum((x @ W)[:, y])
        return [loss, tape.gradient(loss, W)]

    traced = ap.function(step)
    for ids in IDS:
        for got, want in zip(traced(X, np.array(ids)), step(X, np.array(ids))):
            assert np.array_equal(got.numpy(), want.numpy()), ids
    assert traced.trace_count == 1


W3 = ap.Variable(np.arange(1.0, 25.0).reshape(2, 3, 4))
OPTIONS = {  # autoprop's numpy given an integer argument as a shape, axes, split points or a count; ids per call
    "reshape": (lambda y: anp.reshape(W3, y), ([2, 12], [4, 6], [3, 8])),
    "broadcast_to": (lambda y: anp.broadcast_to(W3[0, 0], y), ([2, 4], [3, 4], [1, 4])),
    "split": (lambda y: anp.split(W3, y, axis=2)[0], ([1, 3], [2, 3], [3, 3])),
    "array_split": (lambda y: anp.array_split(W3, y, axis=2)[0], ([1, 3], [2, 3], [3, 3])),
    "transpose": (lambda y: anp.transpose(W3, y), ([0, 1, 2], [2, 1, 0], [1, 0, 2])),
    "moveaxis": (lambda y: anp.moveaxis(W3, y, [0]), ([0], [1], [2])),
    "diff": (lambda y: anp.diff(W3 ** 2, n=y), (1, 2, 3)),
    "expand_dims": (lambda y: anp.expand_dims(W3, axis=y), ([0], [1], [3])),
}


@pytest.mark.parametrize("name", list(OPTIONS))
def test_an_integer_argument_as_a_shape_or_axes_of_autoprops_numpy_is_refused(name):
    """(on main: the first call's shape, axes or split points at every replay, read in Python by autoprop's code)"""
    body, idss = OPTIONS[name]

    def step(y):
        return body(y) * 2.0

    wants = [step(np.array(ids)).numpy() for ids in idss]
    traced = ap.function(step)
    with pytest.raises(ap.TraceError, match=r"reads the values of the integer .* argument `y` in Python"):
        for ids, want in zip(idss, wants):
            got = traced(np.array(ids)).numpy()
            assert got.shape == want.shape and np.array_equal(got, want), (name, ids)
