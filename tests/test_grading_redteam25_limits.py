"""redteam25 H2: the bug diagnosis (up to ``checks.DIAGNOSIS_FORWARDS`` forwards per wrong part) ran inside the
submission's time limits, so a slow buggy submission lost points on its CORRECT parts ("too slow":
``subs_slow3/bug_0.45`` 20/28 where 22.67 is right). Now its forwards are the grader's: each extends the sandbox's
session limit by its own per-call limit (:meth:`gradcheck.sandbox.Sandbox.uncharged`, as a batch's forwards do),
its seconds are added to ``--submission-timeout`` (:class:`gradcheck.grading.diagnosis.DiagnosisClock`, charged as
the scan's), and when the clock runs out the sentence says so and no score changes. Counts and a fake clock: no
timed test.
"""

import numpy as np
import pytest

import manualprop
from gradcheck.grading import checks
from gradcheck.grading import diagnosis as D
from gradcheck.sandbox import Sandbox


class _Ticking(manualprop.Linear):
    """A Linear whose forward advances a fake clock by one second (a slow forward, without waiting)."""

    now = [0.0]

    def forward(self, X, training=False):
        self.now[0] += 1.0
        return super().forward(X, training=training)


class _OneWrongDX(_Ticking):
    """dX wrong in one element (no known bug pattern: the diagnosis runs the layer again, 149 forwards here)."""

    def backward(self, dY):
        dX = super().backward(dY)
        dX[0, 0] += 0.3 * dX[0, 0] + 0.01
        return dX


def _graded(clock):
    """``layer_gradients`` of the one-wrong-dX Linear, with ``clock`` as the submission's diagnosis clock."""
    rng = np.random.default_rng(0)
    D.CLOCK[0] = clock
    try:
        return checks.layer_gradients(_OneWrongDX(5, 3, rng=1), rng.standard_normal((8, 5)), manualprop.Linear(5, 3),
                                      parts={"dX": 2, "dW": 2, "db": 2}, seed=1)
    finally:
        D.CLOCK[0] = None


def test_a_diagnosis_out_of_time_says_so_and_changes_no_score():
    """With 10 s for the diagnoses (10 forwards of the fake clock), the dX part's sentence ends with the note, the
    correct dW and db keep their points (4 of 6) as without a clock, and the 10 s were charged to the grader."""
    charged = []
    clock = D.DiagnosisClock(10.0, charged.append, clock=lambda: _Ticking.now[0], every=0.0)
    timed, free = _graded(clock), _graded(None)
    assert [(p.name, p.passed) for p in timed.parts] == [(p.name, p.passed) for p in free.parts] == [
        ("dX", False), ("dW", True), ("db", True)]
    assert timed.fraction == free.fraction == pytest.approx(2 / 3)
    assert timed.parts[0].message.endswith(D.OUT_OF_TIME) and D.OUT_OF_TIME not in free.parts[0].message
    assert timed.parts[0].message.startswith("dX differs from the correct gradient in 1 of 40 elements")
    assert clock.left <= 0 and sum(charged) == pytest.approx(10.0, abs=1.0)
    again = _graded(clock)  # nothing left: no forward of the diagnosis at all, the same note
    assert again.fraction == pytest.approx(2 / 3) and again.parts[0].message.endswith(D.OUT_OF_TIME)


def test_a_diagnosis_within_its_time_is_charged_to_the_grader():
    """Enough time: the sentence has no note, and every second the diagnosis took (one per forward of the fake
    clock, 149) was handed to ``charge`` (the runner's extension of --submission-timeout)."""
    charged = []
    clock = D.DiagnosisClock(1e6, charged.append, clock=lambda: _Ticking.now[0])
    verdict = _graded(clock)
    assert verdict.fraction == pytest.approx(2 / 3) and D.OUT_OF_TIME not in verdict.parts[0].message
    assert 100 <= sum(charged) <= 400 and clock.left == pytest.approx(1e6 - sum(charged))


LINEAR = '''import numpy as np


class Linear:
    def __init__(self, in_features, out_features):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params["W"].T + self.params["b"]

    def backward(self, dY):
        self.grads = {"W": dY.T @ self.X, "b": dY.sum(axis=0)}
        dX = dY @ self.params["W"]
        dX[0, 0] += 0.3 * dX[0, 0] + 0.01
        return dX
'''


def test_the_diagnosis_requests_extend_the_session_limit(tmp_path):
    """Each request of the diagnosis extends the sandbox's session limit by the per-call limit (counted: the
    session's extension grows by as many calls as the diagnosis made requests), so its forwards never bring the
    session nearer its end; the score is the same as without the diagnosis (numerical=False: numbers alone)."""
    (tmp_path / "layers.py").write_text(LINEAR)
    X = np.random.default_rng(0).standard_normal((8, 5))
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=10) as sb:
        layer = sb.load_layer("layers.py", "Linear", {"in_features": 5, "out_features": 3})
        made, request = [], sb.request

        def counting(op, args, **kw):
            made.append(sb._uncharged > 0)
            return request(op, args, **kw)
        sb.request = counting
        before = sb._extra_calls
        named = checks.layer_gradients(layer, X, manualprop.Linear(5, 3), seed=1)
        plain = checks.layer_gradients(layer, X, manualprop.Linear(5, 3), seed=1, numerical=False)
    assert sum(made) >= 10 and sb._extra_calls - before >= sum(made)
    assert [(p.name, p.passed) for p in named.parts] == [(p.name, p.passed) for p in plain.parts] == [
        ("dX", False), ("dW", True), ("db", True)]


def test_the_clock_charges_at_most_every_interval_while_a_diagnosis_runs():
    """review26g M2: a clock ignoring ``every`` (charging only at the end or when out of time) survived every test.
    Fake times in binary fractions: exact sums."""
    now, charged = [0.0], []
    clock = D.DiagnosisClock(10.0, charged.append, clock=lambda: now[0], every=0.25)
    with clock.running() as tick:
        for t in (0.125, 0.25, 0.375, 0.5):
            now[0] = t
            tick()
        now[0] = 0.625
    assert charged == [0.25, 0.25, 0.125] and clock.left == 10.0 - 0.625


class _Options:
    """The two attributes of a pytest config the plugin's clock reads: its options and its stash."""

    def __init__(self, options, partial):
        from gradcheck.grading import plugin

        self.options, self.stash = options, {plugin._PARTIAL: partial}

    def getoption(self, name, default=None):
        return self.options.get(name, default)


@pytest.mark.parametrize(("scanned", "left"), [(7.5, 2.5), (12.0, 0.0)])
def test_the_diagnosis_clock_has_what_the_scan_left_of_the_submission_timeout(tmp_path, scanned, left):
    """review26g M2: the plugin's clock started with the whole --submission-timeout though the grader's scan had spent
    part of what the runner adds back (a clock not reduced by it survived every test). Its charges join the scan's."""
    from gradcheck.grading import plugin

    partial = {"grader_seconds": scanned}
    results = tmp_path / "results.json"
    config = _Options({"--grading-submission-timeout": 10, "--grading-results": str(results)}, partial)
    try:
        plugin._start_diagnosis_clock(config)
        clock = D.CLOCK[0]
        assert clock is not None and clock.left == left
        clock.charge(0.5)
    finally:
        D.CLOCK[0] = None
    assert partial["grader_seconds"] == scanned + 0.5
    assert results.with_name(plugin.GRADER_SECONDS).read_text() == f"{scanned + 0.5:.3f}"
