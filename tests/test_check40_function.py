"""autoprop.function (session 40, verify39 F2 and F3): a Python list of integer labels is traced as
tf.function takes a list (its values are part of the input signature: a new list of other values traces
again), and a replay raises the eager call's error, type and message.

The oracle is the same step undecorated: losses, gradients and variables equal with ``np.array_equal``
(the replay runs the same forwards and VJPs on the same values), errors equal as ``type: message``.
"""

import numpy as np
import pytest
from test_autoprop_function_s38 import _step_fn as _step  # (returns loss, grads)

import autoprop as ap
from autoprop import layers as al
from autoprop import losses as alo


def _run(fn, model, calls):
    seen = []
    for x, y in calls:
        try:
            loss, grads = fn(x, y)
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            seen.append(f"{type(e).__name__}: {e}")
            continue
        seen.append([loss.numpy()] + [g.numpy() for g in grads] + [v.numpy() for v in model.trainable_variables])
    return seen


def _both(make_model, calls, loss_fn):
    runs, fns = [], []
    for decorate in (False, True):
        model = make_model()
        step = _step(model, ap.optimizers.Adam(learning_rate=0.01), loss_fn)
        fn = ap.function(step) if decorate else step
        runs.append(_run(fn, model, calls))
        fns.append(fn)
    for a, b in zip(*runs):
        if isinstance(a, str) or isinstance(b, str):
            assert a == b
        else:
            assert len(a) == len(b) and all(np.array_equal(p, q) for p, q in zip(a, b))
    return runs, fns[1]


def _x(n=16, seed=0):
    return np.random.default_rng(seed).random((n, 5))


@pytest.mark.parametrize("loss_fn", [alo.SoftmaxCrossEntropy(), alo.SoftmaxCrossEntropy(reduction="sum"),
                                     alo.MulticlassHinge()])
def test_a_list_of_int_labels_is_traced_per_value_and_replayed_bit_equal(loss_fn):
    a, b = [0, 1, 2, 3] * 4, [3, 2, 1, 0] * 4
    calls = [(_x(seed=0), a), (_x(seed=1), list(a)), (_x(seed=2), b), (_x(seed=3), a), (_x(seed=4), tuple(b))]
    runs, fn = _both(lambda: al.Sequential(al.Linear(5, 4, rng=0)), calls, loss_fn)
    assert all(not isinstance(r, str) for r in runs[1]), runs[1]
    assert fn.trace_count == 3  # a, b as lists; b as a tuple (tf.function: the list's values are its signature)


def test_a_label_list_changed_in_place_after_its_trace_is_not_replayed_with_its_new_values():
    a = [0, 1, 2, 3] * 4
    model = al.Sequential(al.Linear(5, 4, rng=0))
    fn = ap.function(lambda x, y: alo.SoftmaxCrossEntropy()(y, model(x)))
    x = _x()
    first = fn(x, a).numpy()
    a[:] = [3] * 16  # the traced list now holds other values; a new list holds the traced ones
    assert fn(x, [0, 1, 2, 3] * 4).numpy() == first
    assert fn(x, a).numpy() == alo.SoftmaxCrossEntropy()(np.full(16, 3), model(x)).numpy()


def test_a_list_of_out_of_range_labels_raises_the_eager_error():
    runs, _ = _both(lambda: al.Sequential(al.Linear(5, 4, rng=0)), [(_x(), [0, 1, 2, 7] * 4)], alo.SoftmaxCrossEntropy())
    assert runs[1][0].startswith("ValueError: autoprop.losses.SoftmaxCrossEntropy(reduction='mean'): y_true labels must be in [0, 4)")


@pytest.mark.parametrize("loss_fn", [alo.SoftmaxCrossEntropy(), alo.MulticlassHinge()])
def test_float_labels_raise_the_eager_error_under_the_trace(loss_fn):
    y = np.random.default_rng(0).integers(0, 4, 16).astype(np.float64)
    runs, _ = _both(lambda: al.Sequential(al.Linear(5, 4, rng=0)), [(_x(), y), (_x(seed=1), y)], loss_fn)
    assert runs[1][0].startswith(f"ValueError: autoprop.losses.{type(loss_fn).__name__}(")
    assert "y_true must be integer class labels" in runs[1][0]


class _Lookup(al.Model):
    def __init__(self):
        super().__init__()
        self.e, self.h = al.Embedding(10, 6, rng=0), al.Linear(6, 3, rng=1)

    def call(self, x, training=False):
        return self.h(ap.reduce_mean(self.e.variables["W"][x], axis=-2))


@pytest.mark.parametrize("bad", [np.array([[1, 10]]), np.array([[1, 200]], np.uint8), np.array([[-11, 2]])])
def test_an_out_of_range_index_at_a_replay_raises_the_eager_error(bad):
    good = np.array([[1, 2]], bad.dtype)
    runs, fn = _both(_Lookup, [(good, np.array([1])), (bad, np.array([1])), (good, np.array([1]))],
                     alo.SoftmaxCrossEntropy())
    assert runs[1][1].startswith("IndexError: autoprop.getitem(float64(10, 6)): index ")
    assert fn.trace_count == 1 and fn.traces == 1  # (the error came from a replay)


def test_a_label_list_read_from_outside_the_arguments_is_read_anew_at_each_replay():
    labels = [0, 1, 2, 3] * 4
    model = al.Sequential(al.Linear(5, 4, rng=0))
    fn = ap.function(lambda x: alo.MulticlassHinge()(labels, model(x)))
    x = _x()
    assert fn(x).numpy() == alo.MulticlassHinge()(np.array(labels), model(x)).numpy()
    labels[:] = [3, 3, 1, 0] * 4  # changed in place: no new signature; eager reads the new values
    assert fn(x).numpy() == alo.MulticlassHinge()(np.array(labels), model(x)).numpy()
    assert fn.traces == 1


def test_an_index_list_argument_is_traced_per_value_and_a_list_read_from_outside_anew():
    W = ap.Variable(np.arange(12.0).reshape(6, 2))
    fn = ap.function(lambda idx: ap.reduce_sum(W[idx] * W[idx]))
    assert fn([1, 4]).numpy() == 4 + 9 + 64 + 81 == fn([1, 4]).numpy()
    assert fn([[0, 0]]).numpy() == 2 * (0 + 1) and fn.traces == 2
    kept = [5]
    gn = ap.function(lambda: ap.reduce_sum(W[kept, :]))
    assert gn().numpy() == 21
    kept[0] = 2
    assert gn().numpy() == 9 and gn.traces == 1
