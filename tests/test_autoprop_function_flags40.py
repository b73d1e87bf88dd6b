"""flags40 (review39 F5): another thread's draw from numpy's global random state while ``autoprop.function`` traces
is not the traced function's. The trace compared the global state before and after and refused itself ("drew from
numpy's global random state while tracing") when a background thread drew meanwhile; now the draws other threads
make through ``np.random``'s names are recorded (under the generator's own lock, with the state before and after
each), and only a change they do not account for is the trace's: a draw of its own through a name bound before the
trace is still refused, with another thread drawing beside it.
"""

import threading
import time

import numpy as np
import pytest

import autoprop as ap
from autoprop import layers as al
from autoprop import losses as alo
from autoprop.tracing import TraceError

X, Y = np.random.default_rng(0).random((6, 4)), np.array([0, 1, 2, 0, 1, 2])


class _Drawing:
    """A background thread drawing from numpy's global state through ``np.random``'s names until stopped."""

    def __init__(self):
        self.count, self.stop = 0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.is_set():
            np.random.rand(3)
            np.random.normal(size=2)
            self.count += 1

    def wait_for(self, n):
        """Return once the thread has drawn ``n`` more times (the draws fall inside the caller's code)."""
        start, t0 = self.count, time.monotonic()
        while self.count < start + n and time.monotonic() - t0 < 30:
            time.sleep(0.001)
        assert self.count >= start + n, "the background thread did not draw"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(10)


def _steps(traced, drawing):
    """Three SGD steps of a small model, eagerly or through ``ap.function``; the step's Python waits, while it runs
    (eagerly: each step; traced: the trace only), for the background thread to draw 20 times."""
    m = al.Sequential([al.Linear(4, 5, rng=1), al.ReLU(), al.Linear(5, 3, rng=2)])
    lf, opt = alo.SoftmaxCrossEntropy(), ap.optimizers.SGD(learning_rate=0.1)

    def step(x, y):
        with ap.GradientTape() as tape:
            loss = lf(y, m(x, training=True))
        drawing.wait_for(20)
        g = tape.gradient(loss, m.trainable_variables)
        opt.apply_gradients(zip(g, m.trainable_variables))
        return loss, g[0]

    f = ap.function(step) if traced else step
    out = [tuple(t.numpy() for t in f(X, Y)) for _ in range(3)]
    return out, [v.numpy() for v in m.trainable_variables], getattr(f, "traces", None)


def test_another_threads_draws_while_tracing_leave_the_replay_bit_equal_to_eager():
    with _Drawing() as drawing:
        eager, eager_w, _ = _steps(False, drawing)
        traced, traced_w, traces = _steps(True, drawing)  # main: TraceError "drew from numpy's global random state"
    assert traces == 1  # the first call traced, the next two replayed
    for (le, ge), (lt, gt) in zip(eager, traced):
        assert np.array_equal(le, lt) and np.array_equal(ge, gt), (le, lt)
    assert all(np.array_equal(a, b) for a, b in zip(eager_w, traced_w))


def test_the_traces_own_draw_is_still_refused_beside_another_threads():
    draw = np.random.rand  # bound before the trace: not the patched name

    with _Drawing() as drawing:
        def f(x):
            drawing.wait_for(10)
            noise = draw()  # the trace's own draw, between the other thread's
            drawing.wait_for(10)
            return x * 2.0 + noise

        with pytest.raises(TraceError, match="global random state"):
            ap.function(f)(X)
