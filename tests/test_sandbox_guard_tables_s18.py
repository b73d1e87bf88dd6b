"""The audit guard's tables are out of a submission's reach (tester18g HIGH 3).

The guard's PermissionError carries the hook's frame in its traceback; its ``f_globals`` held the table of
forbidden events, a plain dict: ``.clear()`` let ctypes and gc in (hostile b10, b11). The tables are now
immutable and in the hook's closure; the frame's ``f_locals`` is a snapshot, and a trace function, which could
write it back into the closure, is refused. The guard is a second line (the OS isolates the grader's sandbox):
this test uses the process sandbox, where it is the only one.
"""

import pytest

from gradcheck.errors import StudentCodeError
from gradcheck.sandbox import Sandbox

ATTACK = '''
import os, sys
import numpy as np

def _hook_frames():
    try:
        os.listdir("/etc")
    except PermissionError as e:
        tb, out = e.__traceback__, []
        while tb is not None:
            out.append(tb.tb_frame)
            tb = tb.tb_next
        return out
    return []

def _unguard():  # tester18g's helper, and the same on the hook's locals
    done = []
    for f in _hook_frames():
        if f.f_code.co_name != "hook":
            continue
        if isinstance(f.f_globals.get("_FORBIDDEN_EVENTS"), dict):
            f.f_globals["_FORBIDDEN_EVENTS"].clear()
            done.append("_FORBIDDEN_EVENTS")
        for k, v in list(f.f_locals.items()):
            if isinstance(v, (dict, set, list)):
                v.clear()
                done.append(k)
    return done

def _try(fn):
    try:
        return repr(fn())[:40]
    except BaseException as exc:
        return type(exc).__name__

def _ctypes():
    import ctypes
    return ctypes.CDLL(None).getpid()

def _trace():  # rebind the hook's closure through a trace function's f_locals
    def tr(frame, event, arg):
        if frame.f_code.co_name == "hook":
            frame.f_locals["forbidden"] = frozenset()
        return tr
    sys.settrace(tr)
    return "settrace accepted"

def _profile():
    sys.setprofile(lambda *a: None)
    return "setprofile accepted"

class Linear:
    def __init__(self, in_features, out_features, rng=None):
        self.params = {"W": np.zeros((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        report = [_try(_unguard), _try(_ctypes), _try(_trace), _try(_profile), _try(_ctypes)]
        raise RuntimeError("REPORT " + " | ".join(report))

    def backward(self, dY):
        return dY @ self.params["W"]
'''


def test_guard_tables_cannot_be_cleared_nor_traced(tmp_path):
    f = tmp_path / "student.py"
    f.write_text(ATTACK)
    with Sandbox(files={"student.py": str(f)}, timeout=5) as sb:
        layer = sb.load_layer("student.py", "Linear", {"in_features": 3, "out_features": 2})
        with pytest.raises(StudentCodeError) as err:
            layer.forward(__import__("numpy").ones((2, 3)))
    report = str(err.value).split("REPORT ", 1)[1].split(" (at student.py")[0]
    unguard, ctypes1, trace, profile, ctypes2 = (p.strip().strip("'") for p in report.split(" | ")[:5])
    assert unguard == "[]", report  # nothing mutable found in the hook's frame
    assert (ctypes1, trace, profile, ctypes2) == ("PermissionError",) * 4, report
