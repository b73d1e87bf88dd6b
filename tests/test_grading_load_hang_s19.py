"""tester19g F6: a load whose probe forward hangs costs one timeout per class and arguments, not one per test.

loop_forward (``while True`` in forward) spent a 3 s timeout in each of 4 tests (58.5 s under load): each test
loaded the class again and the load's probe forward hung again. The same load (file, class, arguments: the
same probe input) is now refused at once after its first timeout, saying why. No sandbox child: a stand-in.
"""

import types

import pytest

from gradcheck.grading import plugin
from gradcheck.sandbox import SandboxError


class _Sandbox:
    def __init__(self):
        self.loads = 0

    def load_layer(self, file, class_name, init, **kw):
        self.loads += 1
        raise SandboxError("Linear.forward (called on the probe input while layers.py::Linear was loaded) did not "
                           "finish within 3 s.", reason="timeout")


def _student(holder):
    item = types.SimpleNamespace(get_closest_marker=lambda name: None, iter_markers=lambda name: iter(()),
                                 config=types.SimpleNamespace(getoption=lambda name: 3.0 if "timeout" in name else 0))
    return plugin.Student(holder, item)


def test_a_hanging_load_is_timed_once_per_class_and_arguments():
    sb = _Sandbox()
    holder = types.SimpleNamespace(require=lambda f: None, files=lambda: {}, root=".", load_failures={},
                                   imported=lambda file, timeout: sb)
    for _ in range(3):
        with pytest.raises(SandboxError) as err:
            _student(holder).layer("layers.py", "Linear", in_features=4, out_features=3)
    assert sb.loads == 1 and err.value.reason == "timeout"
    assert str(err.value).startswith("Not run: Linear.forward (called on the probe input") and \
        "first loaded with these arguments and input shapes, in an earlier test" in str(err.value)
    with pytest.raises(SandboxError):  # other arguments: another probe input, tried
        _student(holder).layer("layers.py", "Linear", in_features=5, out_features=3)
    assert sb.loads == 2


class _Probed:
    def __init__(self, calls):
        self.calls = calls

    def probed(self, xs):
        self.calls.append([x.shape for x in xs])
        raise SandboxError("Linear.forward (called on the probe input) did not finish within 3 s.", reason="timeout")


def test_a_probe_that_hangs_on_the_test_s_input_is_timed_once_per_input_shape():
    import numpy as np
    calls = []
    sb = types.SimpleNamespace(load_layer=lambda *a, **k: _Probed(calls))
    holder = types.SimpleNamespace(require=lambda f: None, files=lambda: {}, root=".", load_failures={},
                                   imported=lambda file, timeout: sb)
    for shape in ((8, 5), (8, 5), (3, 5), (8, 5)):
        layer = _student(holder).layer("layers.py", "Linear", in_features=5, out_features=3)
        with pytest.raises(SandboxError):
            layer.probed([np.zeros(shape)])
    assert calls == [[(8, 5)], [(3, 5)]]  # each input shape once
