"""A long ``gradcheck check`` says so (session 24's leftover: a buggy tanh at 2000x4000, under the 10**7 cap, ran for
minutes with no word): a line on stderr before the layer is loaded, naming the sizes, the planned forwards, a smaller
input and a quicker mode, and on a terminal a tqdm bar over the forwards. Decided by counts (planned forwards times
the input's elements over ``check_command.LONG_CHECK``, forced small here), never by time."""

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck import check_command as cc
from gradcheck.sandbox import Shared, _sent_elements

LAYERS = """
import numpy as np
class TanhBug:
    def __init__(self):
        self.params = {}; self.grads = {}
    def forward(self, X, training=False):
        self.Y = np.tanh(X); return self.Y
    def backward(self, dY):
        return dY * (1 - self.Y)
class Linear:
    def __init__(self, in_features=3, out_features=2):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self.grads = {}
    def forward(self, X):
        self.X = X; return X @ self.params["W"].T + self.params["b"]
    def backward(self, dY):
        self.grads = {"W": dY.T @ self.X, "b": dY.sum(axis=0)}
        return dY @ self.params["W"]
"""


def test_the_plan_counts_forwards_per_mode():
    """2000x4000 in fast mode: 150 for probes, directional tests and diagnosis, and 2 x 64 for a failing tensor's
    sampled entries; full mode every entry twice; sample mode 8 entries per tensor."""
    assert cc.planned_forwards("fast", "central", [8_000_000]) == cc.CHECK_CALLS + 2 * 64 == 278
    assert cc.planned_forwards("fast", "central", [30]) == 150 + 60  # at most 10,000 entries: all of them
    assert cc.planned_forwards("full", "central", [30, 15, 3]) == 150 + 2 * 48
    assert cc.planned_forwards("full", "richardson", [30]) == 150 + 4 * 30
    assert cc.planned_forwards("full", "complex", [30]) == 150 + 2 * 30  # its parameters are central
    assert cc.planned_forwards("sample", "central", [8_000_000, 5]) == 150 + 2 * (8 + 5)


def test_sizes_under_the_threshold_say_nothing(tmp_path):
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::TanhBug", "--input-shape", "20,40")
    assert p.returncode == 1 and "a long check" not in both(p), both(p)


def test_a_long_check_says_so_before_the_load_and_runs_as_before(tmp_path, monkeypatch):
    monkeypatch.setattr(cc, "LONG_CHECK", 278 * 12_000 - 1)  # the plan of a 120x100 input, fast mode: 278 x 12,000
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::TanhBug", "--input-shape", "120,100")
    text = " ".join(p.stderr.split())
    assert ("gradcheck: a long check: TanhBug's input (120, 100) has 12,000 elements, and --mode fast runs up to "
            "about 278 forwards of it. A smaller batch finds the same bugs: --input-shape 8,100; --mode sample "
            "differences 8 random entries per tensor.") in text, text
    assert p.returncode == 1 and "FAIL: TanhBug" in p.stdout and "a long check" not in p.stdout
    monkeypatch.setattr(cc, "LONG_CHECK", 278 * 12_000)  # exactly the plan: not over it
    assert "a long check" not in both(run_here("check", f"{f}::TanhBug", "--input-shape", "120,100"))


def test_full_mode_suggests_fast_and_sample(tmp_path, monkeypatch):
    monkeypatch.setattr(cc, "LONG_CHECK", 1)
    f = student(tmp_path, LAYERS)
    text = " ".join(both(run_here("check", f"{f}::TanhBug", "--input-shape", "6,5", "--mode", "full")).split())
    assert "forwards of it. --mode fast (the default)" in text and "--mode sample 8 random entries" in text, text
    assert "--input-shape" not in text, text  # review26g L1: a batch of 6 is small already


def test_a_plan_made_long_by_a_weight_advises_a_smaller_layer_not_a_smaller_batch(tmp_path, monkeypatch):
    """review26g L1: a 784 -> 2048 Linear on a batch of 4 was told "A smaller batch finds the same bugs: --input-shape
    4,784". Here a 30 -> 40 Linear on 4 x 30: W's 1,200 entries are 2,400 of the 2,870 planned forwards."""
    monkeypatch.setattr(cc, "LONG_CHECK", 390 * 120)  # the input's plan, 390 forwards of 120 elements: not over it
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::Linear", "--input-shape", "4,30", "--mode", "full", "--init",
                 '{"in_features": 30, "out_features": 40}')
    text = " ".join(p.stderr.split())
    assert p.returncode == 0 and "Linear's input (4, 30) has 120 elements, and --mode full runs up to about 2,870 " \
        "forwards of it. Most of them perturb W's 1,200 entries: a smaller layer (fewer units, e.g. through --init) " \
        "finds the same bugs; --mode fast (the default)" in text, text
    assert "--input-shape" not in text, text


def test_parameters_that_make_the_plan_long_are_said_after_the_load(tmp_path, monkeypatch):
    """Full mode of a 4x3 Linear: inputs alone plan 150 + 2 x 12 = 174 forwards of 12 elements, with W and b
    150 + 2 x 20 = 190: a threshold between the two is crossed only once the parameters are known."""
    monkeypatch.setattr(cc, "LONG_CHECK", 180 * 12)
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::Linear", "--input-shape", "4,3", "--mode", "full")
    text = " ".join(p.stderr.split())
    assert "Linear's input (4, 3) has 12 elements, and --mode full runs up to about 190 forwards" in text, text
    assert text.count("a long check") == 1 and p.returncode == 0


class Bar:
    """A tqdm stand-in recording what the check does with it."""

    made: list = []

    def __init__(self, total, **kw):
        self.total, self.kw, self.n, self.closed = total, kw, 0, False
        if kw.get("desc", "").startswith("checking"):  # not the scans' own bars (numerical._progress)
            Bar.made.append(self)

    def update(self, k=1):
        self.n += k

    def close(self):
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_on_a_terminal_a_bar_counts_the_forwards(tmp_path, monkeypatch):
    import manualprop.training

    Bar.made = []
    monkeypatch.setattr(cc, "LONG_CHECK", 1)
    monkeypatch.setattr(cc, "_on_terminal", lambda: True)
    monkeypatch.setattr(manualprop.training, "progress_bar", lambda: Bar)
    calls = []
    from gradcheck import sandbox

    real = sandbox.Sandbox.call

    def counted(self, op, *a, **k):
        calls.append(op)
        return real(self, op, *a, **k)
    monkeypatch.setattr(sandbox.Sandbox, "call", counted)
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::TanhBug", "--input-shape", "20,40")
    assert p.returncode == 1, both(p)
    (bar,) = Bar.made
    assert bar.closed and bar.kw["desc"] == "checking TanhBug" and bar.kw["unit"] == "forward"
    work = sum(op in ("forward", "forward_many", "backward") for op in calls)
    assert bar.n >= work >= 50 and bar.total == max(150 + 2 * 800, bar.n), (bar.n, work, bar.total)


def test_no_bar_off_a_terminal(tmp_path, monkeypatch):
    import manualprop.training

    Bar.made = []
    monkeypatch.setattr(cc, "LONG_CHECK", 1)
    monkeypatch.setattr(manualprop.training, "progress_bar", lambda: Bar)
    f = student(tmp_path, LAYERS)
    p = run_here("check", f"{f}::TanhBug", "--input-shape", "20,40")
    assert p.returncode == 1 and "a long check" in both(p) and Bar.made == []


def test_the_elements_sent_count_each_forward():
    X, Z = np.ones((4, 5)), np.ones((2, 5))
    assert _sent_elements({"batches": [[X], None, None, [Z, Z]]}, None) == 20 * 3 + 20
    assert _sent_elements({}, Shared([X, Z])) == 30
    assert _sent_elements({}, None) == 0


@pytest.mark.parametrize("shape, small", [((2000, 4000), "8,4000"), ((20, 3, 8, 8), "8,3,8,8"), ((5, 3, 8, 8), None)])
def test_the_smaller_input_keeps_all_but_the_batch(shape, small, capsys, monkeypatch):
    """A batch of 8 or fewer is not advised again (review26g L1: "--input-shape 5,3,8,8" for an input of (5, 3, 8, 8))."""
    from types import SimpleNamespace

    monkeypatch.setattr(cc, "LONG_CHECK", 1)
    cc.LongCheck(SimpleNamespace(mode="sample", method="central"), shape, "L", None)
    err = " ".join(capsys.readouterr().err.split())
    if small is None:
        assert "a long check" in err and "--input-shape" not in err and "smaller batch" not in err, err
    else:
        assert f"--input-shape {small}." in err and "--mode sample" not in err.split("--input-shape")[1], err
