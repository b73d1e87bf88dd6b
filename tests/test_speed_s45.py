"""Session 45's speed change keeps every value and every error (issue 15).

``Optimizer.apply_gradients`` of plain SGD hands its pairs straight to the checked array update
(``manualprop.optim._SGD_ON``: ``_sgd_on_arrays`` for arrays, autoprop's ``_sgd_on_variables`` for
Variables), as ``step`` does, instead of through ``_update_all``. The update must be the general
path's bit for bit, a bad pair must get the general path's message with no variable changed, and a
subclass's ``_update_all``, momentum and a None gradient must still take the general path.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autoprop as ap
from manualprop import optim as moptim


def _pairs(kind, bad=None):
    """Three (grad, var) pairs of Variables and Tensors (``kind="ap"``) or of arrays (``"np"``);
    ``bad``: (position, what) makes that gradient NaN, +inf, -inf, float32 or of the wrong shape."""
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (3,), (2, 3)]
    vs = [rng.standard_normal(s) for s in shapes]
    gs = [rng.standard_normal(s) for s in shapes]
    if bad is not None:
        i, what = bad
        if what == "shape":
            gs[i] = rng.standard_normal((5,))
        elif what == "float32":
            gs[i] = gs[i].astype(np.float32)
        else:
            gs[i] = gs[i].copy()
            gs[i].flat[1] = {"nan": np.nan, "+inf": np.inf, "-inf": -np.inf}[what]
    if kind == "ap":
        return [ap.constant(g) for g in gs], [ap.Variable(v) for v in vs]
    return gs, vs


def _values(variables):
    return [np.array(v.numpy() if hasattr(v, "numpy") else v) for v in variables]


def _outcome(kind, bad, opt, general):
    """(error type and message or None, warnings, the variables after) of one apply_gradients call;
    ``general``: with ``_SGD_ON`` empty, so that only the general path (``_update_all``) runs."""
    grads, variables = _pairs(kind, bad)
    saved = dict(moptim._SGD_ON)
    if general:
        moptim._SGD_ON.clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                opt.apply_gradients(zip(grads, variables))
                error = None
            except (TypeError, ValueError) as exc:
                error = (type(exc), str(exc))
    finally:
        moptim._SGD_ON.clear()
        moptim._SGD_ON.update(saved)
    return error, [str(w.message) for w in caught], _values(variables), opt.iterations


def _same(a, b):
    """Two outcomes of :func:`_outcome` alike: the same error, warnings and iterations, the variables bit for bit."""
    return a[0] == b[0] and a[1] == b[1] and a[3] == b[3] and all(
        x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a[2], b[2]))


@pytest.mark.parametrize("kind", ["ap", "np"])
def test_plain_sgd_skips_update_all_and_gives_its_bits(kind, monkeypatch):
    grads, variables = _pairs(kind)
    expected = [v - 0.1 * g for v, g in zip(_values(variables), _values(grads))]
    called = []
    real = moptim.Optimizer._update_all
    monkeypatch.setattr(moptim.Optimizer, "_update_all", lambda self, *a, **k: called.append(1) or real(self, *a, **k))
    opt = ap.optimizers.SGD(0.1)
    opt.apply_gradients(zip(grads, variables))
    assert called == []  # (fails before session 45: every call went through _update_all)
    assert all(np.array_equal(a, b) for a, b in zip(expected, _values(variables)))
    assert opt.iterations == 1
    # the general path, forced, gives the same bits
    assert _same(_outcome(kind, None, ap.optimizers.SGD(0.1), False), _outcome(kind, None, ap.optimizers.SGD(0.1), True))


@pytest.mark.parametrize("kind", ["ap", "np"])
@pytest.mark.parametrize("bad", [(2, "nan"), (0, "+inf"), (1, "-inf"), (2, "shape"), (1, "float32")])
def test_a_bad_pair_gets_the_general_message_and_nothing_changes(kind, bad):
    fast = _outcome(kind, bad, ap.optimizers.SGD(0.1), False)
    general = _outcome(kind, bad, ap.optimizers.SGD(0.1), True)
    assert _same(fast, general)
    if bad[1] != "float32":  # (a float32 gradient is cast, as the general path does)
        error, _, after, iterations = fast
        assert error is not None and error[0] is ValueError and "#" + str(bad[0]) in error[1]
        assert all(np.array_equal(a, b) for a, b in zip(_values(_pairs(kind)[1]), after))
        assert iterations == 0


def test_none_gradient_warns_and_updates_the_others():
    fast = _outcome("ap", None, ap.optimizers.SGD(0.1), False)
    grads, variables = _pairs("ap")
    grads[1] = None
    opt = ap.optimizers.SGD(0.1)
    with pytest.warns(UserWarning, match="gradients do not exist for variable #1"):
        opt.apply_gradients(zip(grads, variables))
    after = _values(variables)
    assert np.array_equal(after[0], fast[2][0]) and np.array_equal(after[2], fast[2][2])
    assert np.array_equal(after[1], _values(_pairs("ap")[1])[1])


def test_a_subclass_update_all_and_momentum_take_the_general_path(monkeypatch):
    seen = []

    class Logged(ap.optimizers.SGD):
        def _update_all(self, grads, variables, *args, **kwargs):
            seen.append(len(grads))
            return super()._update_all(grads, variables, *args, **kwargs)

    grads, variables = _pairs("ap")
    Logged(0.1).apply_gradients(zip(grads, variables))
    assert seen == [3]  # (fails when the fast path ignores an overridden _update_all)
    called = []
    real = moptim.Optimizer._update_all
    monkeypatch.setattr(moptim.Optimizer, "_update_all", lambda self, *a, **k: called.append(1) or real(self, *a, **k))
    grads, variables = _pairs("ap")
    ap.optimizers.SGD(0.1, momentum=0.9).apply_gradients(zip(grads, variables))
    assert called == [1]  # (fails when the fast path ignores momentum)
