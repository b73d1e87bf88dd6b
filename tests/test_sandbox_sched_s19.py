"""tester19g F7: a submission may not lower its own priority or change its scheduling policy.

``os.nice(19)`` and ``os.sched_setscheduler(0, SCHED_IDLE, ...)`` worked in the sandbox: a submission starved
itself and was granted the starvation extension of its time limit. The seccomp filter now denies
setpriority, sched_setparam, sched_setscheduler and sched_setattr with EPERM (raising needs CAP_SYS_NICE,
which the sandbox never has). The process sandbox's child installs the same filter itself: one child here.
"""

import os
import sys

import numpy as np
import pytest

from gradcheck import _seccomp
from gradcheck.errors import StudentCodeError
from gradcheck.sandbox import Sandbox

LAYER = '''
import os
import numpy as np

def _try(f):
    try:
        f()
        return "+"
    except OSError as exc:
        return "E" if exc.errno == 1 else "?"

class Linear:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        got = [_try(lambda: os.nice(19)), _try(lambda: os.setpriority(os.PRIO_PROCESS, 0, 10)),
               _try(lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))),
               _try(lambda: os.sched_setparam(0, os.sched_param(0))),
               _try(lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})),  # tester23g L4
               str(os.getpriority(os.PRIO_PROCESS, 0)), str(os.sched_getscheduler(0))]
        raise RuntimeError("SCHED " + "".join(got))

    def backward(self, dY):
        return dY
'''


@pytest.mark.skipif(not sys.platform.startswith("linux") or _seccomp.program() is None, reason="Linux's seccomp")
def test_the_sandbox_cannot_deprioritise_itself(tmp_path):
    f = tmp_path / "student.py"
    f.write_text(LAYER)
    with Sandbox(files={"student.py": str(f)}, timeout=5) as sb:
        layer = sb.load_layer("student.py", "Linear", {})
        with pytest.raises(StudentCodeError) as err:
            layer.forward(np.ones((2, 3)))
    own = f"{os.getpriority(os.PRIO_PROCESS, 0)}{os.sched_getscheduler(0)}"  # the grader's nice and policy, kept
    assert f"SCHED EEEEE{own} " in str(err.value)  # each denied (EPERM)


def test_the_filter_lists_the_scheduling_calls_on_both_machines():
    for table in (_seccomp._X86_64, _seccomp._AARCH64):
        assert {"setpriority", "sched_setparam", "sched_setscheduler", "sched_setattr", "sched_setaffinity"} <= set(table)
    assert {_seccomp._X86_64[n] for n in ("setpriority", "sched_setscheduler", "sched_setattr")} == {141, 144, 314}
    assert (_seccomp._X86_64["sched_setaffinity"], _seccomp._AARCH64["sched_setaffinity"]) == (203, 122)
