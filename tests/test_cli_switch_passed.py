"""Session 18 (lead's L1, L2): forward's switch arguments beside ``training`` in a params/grads-dict layer, and passed
on to other code (each test fails on the code before its fix).

L1: ``forward(X, training=True, mode='fast')`` in a manualprop layer (params/grads dicts) was left unwrapped while its
other combinations were listed, so setting one was refused: exit 3 "Base3's switches raised an exception: (no
message)", the student blamed for gradcheck's refusal. L2: ``Sub.forward`` passing ``mode`` on (``super().forward(X,
training, mode)``) PASSed 'fast' alone: the base's comparison with 'slow' was never read. The planted-bug layers of
``tests/buggy_layers/switch_passed.py`` are counted in the hit table (``python -m tests.buggy_layers``).
"""

import importlib.util

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck import _adapters, _switch_reach
from gradcheck.errors import GraderError

LAYERS = """
import numpy as np


def _deep1(mode):
    return _deep2(mode)


def _deep2(mode):
    return _deep3(mode)


def _deep3(mode):
    return _deep4(mode)


def _deep4(mode):
    return mode == "slow"


class Base3:
    def __init__(self):
        self.params = {"W": np.random.default_rng(0).standard_normal((4, 3))}
        self.grads = {}

    def forward(self, X, training=True, mode="fast"):
        self.X, self.slow = X, mode == "slow"
        return X @ self.params["W"]

    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T * (2.0 if self.slow else 1.0)  # BUG at mode='slow'


class Sub3(Base3):
    def forward(self, X, training=True, mode="fast"):
        return super().forward(X, training=training, mode=mode)


class Good(Base3):
    def backward(self, dY):
        self.grads["W"] = self.X.T @ dY
        return dY @ self.params["W"].T


class SubGood(Good):
    def forward(self, X, training=True, mode="fast"):
        return super().forward(X, training, mode)


class Deep(Base3):
    def forward(self, X, training=True, mode="fast"):
        self.X, self.slow = X, _deep1(mode)
        return X @ self.params["W"]
"""


@pytest.mark.parametrize(("cls", "code", "said"), [
    ("Base3", 1, "FAIL: Base3 [training=False, mode='slow']: gradient mismatch in dX"),  # L1: was exit 3
    ("Sub3", 1, "FAIL: Sub3 [training=False, mode='slow']: gradient mismatch in dX"),  # L2: was PASS
    ("SubGood", 0, "PASS: SubGood"),
    ("Deep", 3, "NOT CHECKED: Deep: forward reads mode = 'fast' (its other values: none found")])
def test_a_string_switch_beside_training_is_checked_at_each_value(tmp_path, cls, code, said):
    f = student(tmp_path, LAYERS, "modes.py")
    p = run_here("check", f"{f}::{cls}", "--input-shape", "3,4")
    out = " ".join(both(p).split())
    assert p.returncode == code and said in out, out
    assert "(no message)" not in out and "switches raised" not in out, out
    if cls != "Deep":  # every combination run, named in the header
        assert "mode: also [training=False, mode='slow']; [training=True, mode='slow']" in out, out


def test_a_usage_reply_of_the_child_is_gradchecks_failure_not_the_students(tmp_path):
    """A request the child's adapters refuse (a switch variant that does not exist) replies ``stage="usage"`` with no
    exception of the student's: it was read as one, "Base3's switches raised an exception: (no message)" (exit 3)."""
    from gradcheck.sandbox import Sandbox

    with Sandbox(files={"modes.py": str(student(tmp_path, LAYERS, "modes.py"))}) as sb:
        layer = sb.load_layer("modes.py", "Base3", probe_inputs=[np.ones((3, 4))])
        assert layer.protocol.get("switch_variants"), layer.protocol
        with pytest.raises(GraderError) as info:
            layer.set_switch(99)
    msg = " ".join(str(info.value).split())
    assert info.value.exit_code == 2 and "no switch variant 99" in msg and "not a fault of the checked code" in msg, msg
    assert "(no message)" not in msg and "raised" not in msg, msg


def _module(tmp_path, code, name):
    """The module of ``code`` written as ``name.py`` (its source readable, as a student's file is)."""
    spec = importlib.util.spec_from_file_location(f"switch_passed_{name}", student(tmp_path, code, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BASE = """
import numpy as np
SLOW = "slow"

def is_slow(m):
    return m == SLOW

class Base:
    TABLE = {"fast": 1.0, "slow": 2.0, "exact": 3.0}
    def forward(self, X, training=True, mode="fast"):
        self.slow = mode == "slow"
        return X
"""


@pytest.mark.parametrize(("body", "words", "lost"), [
    ("return super().forward(X, training, mode)", ["slow"], False),
    ("return super().forward(X, training=training, mode=mode)", ["slow"], False),
    ("return Base.forward(self, X, True, mode)", ["slow"], False),
    ("m = mode\n        return self._impl(X, m)", ["exact"], False),
    ("self.slow = is_slow(mode)\n        return X", ["slow"], False),
    ("self.k = self.TABLE[mode]\n        return X", ["fast", "slow", "exact"], False),
    ("self.k = {'a': 1}.get(mode.lower())\n        return X", [], True),
    ("return getattr(self, '_' + 'impl')(X, mode)", [], True),
    ("return super().forward(X, training)", [], False)])
def test_the_values_of_an_argument_passed_on_are_read_where_it_goes(tmp_path, body, words, lost):
    """L2: :func:`gradcheck._switch_reach.argument_words` follows the argument as the attribute switches are
    followed (the base's forward by ``super()`` or by name, a helper, a module function), a dict keyed by it gives its
    keys; where its value goes unread (a method of it, a call gradcheck cannot resolve) it says so."""
    code = BASE + f"""
class Sub(Base):
    def forward(self, X, training=True, mode="fast"):
        {body}
    def _impl(self, X, how):
        if how in ("exact",):
            return X
        return X
"""
    assert _switch_reach.argument_words(_module(tmp_path, code, "sub").Sub().forward, "mode") == (words, lost)


def test_an_argument_passed_past_three_calls_is_lost_and_named_not_run(tmp_path):
    ns = vars(_module(tmp_path, LAYERS, "layers"))
    fwd = ns["Deep"]().forward
    assert _switch_reach.argument_words(fwd, "mode") == ([], True)
    assert _adapters._dispatched_strings(fwd, None) == [("mode", "fast")]
    assert _adapters.mode_words(ns["Sub3"]().forward, "mode") == ["slow"]
