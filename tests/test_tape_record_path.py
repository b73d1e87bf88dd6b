"""The tape's record path after session 8 (docs/speed.md, "the tape's per-record cost").

What a record stores and when is pinned here, never how fast: a node names its tracked
inputs as ``(position, key)`` pairs (``parents`` and ``keys`` are their halves); what it
saves comes from a plan cached per primitive and per set of tracked positions, so the same
primitive recorded with different inputs tracked, or with a different number of arguments,
must save what each case's VJPs read; ``np.<ufunc>(tensor)`` goes straight to its primitive
and records exactly one node; ``prim(...)`` is ``tape.call`` and ``tape.apply`` still works.
"""

from __future__ import annotations

import numpy as np
import pytest

import autoprop as ap
from autoprop.core import registry as R
from autoprop.core import tape as T


def _nodes(tape):
    return tape._nodes


def test_a_node_names_its_tracked_inputs_by_position_and_key():
    x = ap.constant([[1.0, 2.0]])
    c = ap.constant([[3.0, 4.0]])
    w = ap.Variable([[0.5, -1.0]])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = x * c  # only x tracked: position 0
        z = c * w  # w read: watched on access, position 1
    (n1, n2) = _nodes(tape)
    assert n1.pairs == ((0, x._key),) and n1.parents == (0,) and n1.keys == (x._key,)
    assert n2.pairs == ((1, w._key),) and n2.parents == (1,) and n2.keys == (w._key,)
    assert n1.key == y._key and n2.key == z._key
    assert tape.watched_variables() == (w,)


def test_node_init_keeps_its_old_signature():
    n = T.Node(R.tanh, ("a",), ["v"], {}, None, (0,), (7,), 8)
    assert n.pairs == ((0, 7),) and n.parents == (0,) and n.keys == (7,) and n.key == 8


def test_cached_plans_save_what_each_tracked_set_reads():
    """multiply's VJP for a reads b and vice versa: tracking a alone saves b only, both save
    both, b alone saves a only; recorded in this order the plans are cached and reused."""
    a = ap.constant(np.array([1.0, 2.0, 3.0]))
    b = ap.constant(np.array([4.0, -5.0, 6.0]))
    for _ in range(2):  # the second round uses the cached plans
        for watched, not_saved in (([a], {0}), ([a, b], set()), ([b], {1})):
            with ap.GradientTape() as tape:
                tape.watch(watched)
                y = a * b
            (node,) = _nodes(tape)
            got = {i for i, v in enumerate(node.vals) if isinstance(v, T.NotSaved)}
            assert got == not_saved
            assert isinstance(node.out, T.NotSaved)  # multiply's VJPs never read the output
            g = tape.gradient(y, watched)
            want = {id(a): b.numpy(), id(b): a.numpy()}
            for s, gs in zip(watched, g):
                np.testing.assert_array_equal(gs.numpy(), want[id(s)])


def test_a_variadic_primitive_with_another_argument_count_gets_its_own_plan():
    x = ap.constant(np.array([1.0, 2.0]))
    c = ap.constant(np.array([3.0]))
    d = ap.constant(np.array([4.0, 5.0, 6.0]))
    for parts, n in (([x, c], 2), ([x, c, d], 3), ([x, d], 2)):
        with ap.GradientTape() as tape:
            tape.watch(x)
            y = ap.numpy.concatenate(parts)
        (node,) = _nodes(tape)
        assert node.pairs == ((0, x._key),) and len(node.vals) == n
        g = tape.gradient(y, x, output_gradients=np.arange(1.0, y.shape[0] + 1))
        np.testing.assert_array_equal(g.numpy(), [1.0, 2.0])


def test_a_saved_plain_array_argument_is_copied_and_an_unsaved_one_is_not_kept():
    arr = np.array([2.0, 3.0])
    x = ap.constant([1.0, 1.0])
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = x * arr  # the VJP for x reads arr: saved, as a copy
        z = x + arr  # add reads nothing: arr is not kept
    m, a = _nodes(tape)
    assert m.vals[1] is not arr and isinstance(a.vals[1], T.NotSaved)
    arr[:] = 100.0  # the caller changes its array after the forward pass
    np.testing.assert_array_equal(tape.gradient([y, z], x).numpy(), [3.0, 4.0])


def test_two_recording_tapes_record_once_each_and_a_cut_is_noted_once():
    x = ap.constant([0.5, -0.25])
    with ap.GradientTape() as outer:
        outer.watch(x)
        with ap.GradientTape() as inner:
            inner.watch(x)
            y = np.tanh(x)
            k = y.astype(np.int64)  # non-differentiable: cut, not recorded
    assert [n.prim.name for n in _nodes(inner)] == ["tanh"]
    assert [n.prim.name for n in _nodes(outer)] == ["tanh"]
    assert len(outer._cuts) == 1 and len(inner._cuts) == 1
    assert "int64" in inner.explain(k, x)
    g = inner.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), 1 - np.tanh(x.numpy()) ** 2, rtol=1e-15)


def test_a_numpy_ufunc_on_a_tensor_records_its_primitive_once():
    x = ap.constant(np.array([0.3, -1.2]))
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = np.tanh(x)
        z = np.multiply(y, x)
        p = np.positive(z)
    assert [n.prim.name for n in _nodes(tape)] == ["tanh", "multiply", "reshape"]  # (t.copy()'s record)
    assert p is not z  # np.positive is a recorded copy, as numpy's is a new array (fixr23)
    np.testing.assert_array_equal(p.numpy(), z.numpy())
    with pytest.raises(TypeError, match="out="):
        np.tanh(x, out=np.zeros(2))
    with pytest.raises(TypeError, match="reduceat"):  # np.add.reduce is the recorded sum now; reduceat is not
        np.add.reduceat(x, [0])
    with pytest.raises(TypeError, match="no registered derivative"):
        np.spacing(x)


def test_prim_call_is_tape_call_and_apply_still_works():
    assert R.Primitive.__call__ is T.call
    x = ap.constant(np.array([0.1, 0.2]))
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = T.apply(R.tanh, (x,), {})
        z = R.sum(y, axis=[0])  # axis given as a list is a tuple, as TensorFlow
    assert [n.prim.name for n in _nodes(tape)] == ["tanh", "sum"]
    assert _nodes(tape)[1].kwargs["axis"] == (0,)
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), 1 - np.tanh([0.1, 0.2]) ** 2,
                               rtol=1e-15)


def test_a_forward_error_names_the_operation():
    a = ap.constant(np.ones((2, 3)))
    b = ap.constant(np.ones((4, 5)))
    with pytest.raises(ValueError, match=r"autoprop\.matmul\(float64\(2, 3\), float64\(4, 5\)\)"):
        a @ b


def test_the_tape_ops_benchmark_runs_with_few_repeats():
    # the figures are not looked at here, only that every row is printed (the recurrent
    # rows first check that the twins agree with manualprop to 1e-10)
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "tape_ops.py"
    p = subprocess.run([sys.executable, str(script), "--repeats", "1"], capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    for row in ("copy", "tanh", "multiply", "add", "slice", "LSTM", "GRU", "RNN", "MLP 64-32-10"):
        assert f"  {row}" in p.stdout
    p = subprocess.run([sys.executable, str(script), "--repeats", "0"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "--repeats must be at least 1" in p.stderr


def test_autoprops_own_array_reaches_the_forward_and_vjps_as_a_plain_view(monkeypatch):
    """An ``observe.own`` array argument (a recurrent layer's zero state, Dropout's mask) is a plain
    ndarray view in the node's ``vals``, which the forward and the VJPs compute with, so numpy never
    calls ``OwnArray.__array_ufunc__`` (Python frames a step, session 29); the node's ``args`` keep
    the marked array, which the escape check reads; an unsaved one is kept as given, not a NotSaved
    (which that check would count as a value that may have left the tape). Values unchanged."""
    from autoprop.core.observe import OwnArray, own
    from autoprop.layers import RNN

    calls = []
    real = OwnArray.__array_ufunc__
    monkeypatch.setattr(OwnArray, "__array_ufunc__",
                        lambda self, *a, **k: calls.append(a[0].__name__) or real(self, *a, **k))
    layer = RNN(3, 4, rng=0)
    x = ap.constant(np.random.default_rng(0).standard_normal((2, 5, 3)))
    with ap.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
    rnn = next(n for n in tape._nodes if n.prim.name == "rnn_tanh")  # h0, its second argument
    assert type(rnn.args[1]) is OwnArray and type(rnn.vals[1]) is np.ndarray
    assert np.shares_memory(rnn.args[1], rnn.vals[1])
    grads = tape.gradient(y, [x, *layer.variables.values()])
    assert calls == []  # neither the forward's h @ W.T nor the VJP's da^T @ h went through it
    zero = ap.constant(np.zeros((2, 4)))  # the same zero state as a Tensor constant: the same numbers
    with ap.GradientTape() as tape:
        tape.watch(x)
        y2 = layer(x, h0=zero)
    assert np.array_equal(y.numpy(), y2.numpy())
    for a, b in zip(grads, tape.gradient(y2, [x, *layer.variables.values()])):
        assert np.array_equal(a.numpy(), b.numpy())
    c = own(np.full((2, 3), 2.0))
    w = ap.Variable(np.ones((2, 3)))
    with ap.GradientTape() as tape:
        s = ap.sum(w - c)  # subtract's VJPs read neither operand: c is not saved
    node = next(n for n in tape._nodes if n.prim.name == "subtract")
    assert node.args[1] is c and type(node.vals[1]) is np.ndarray
    assert tape.gradient(s, w).numpy().tolist() == [[1.0] * 3] * 2
