"""tester19g F2: a submitted module never runs before "ready" and the guards.

The bootstrap put the submission's folder first on ``sys.path`` and then imported numpy, whose import of
``copy`` tries ``from org.python.core import PyStringMap`` (a Jython check): a submitted ``org.py`` ran
there, before the guards, and its ``os._exit(1)`` was "a problem of the grader's setup", regraded each run.
"""

import json
import os
import textwrap

import pytest

import gradcheck
from gradcheck.errors import UsageError
from gradcheck.sandbox import Sandbox

LAYER = textwrap.dedent("""
    import numpy as np
    class Double:
        def __init__(self):
            self.params, self.grads = {}, {}
        def forward(self, X, training=False):
            import json, sys
            import org
            return 2 * X + org.RAN + (sorted(json.loads(sys.argv[1])) != ["fd_in", "fd_out"])  # F9: fds, no path
        def backward(self, dY):
            return 2 * dY
""")


def test_a_submitted_org_module_runs_only_when_the_submission_imports_it(tmp_path):
    (tmp_path / "layers.py").write_text(LAYER)
    (tmp_path / "org.py").write_text("RAN = 0.0\n")
    files = {"layers.py": str(tmp_path / "layers.py"), "org.py": str(tmp_path / "org.py")}
    with Sandbox(files=files, timeout=20, hostile=True, isolation="process") as sb:
        sb.import_file("layers.py")
        layer = sb.load_layer("layers.py", "Double", {})
        import numpy as np
        Y = layer.forward(np.ones((2, 3)))
        assert Y.tolist() == [[2.0] * 3] * 2  # the submission's own modules still import
        with open(f"/proc/{sb._proc.pid}/cmdline", "rb") as fh:  # tester19g F9: no host path on the command line
            cmdline = fh.read()
        config = json.loads(cmdline.split(b"\0")[-2])
        assert list(config) == ["fd_config"] and os.path.dirname(gradcheck.__file__).encode() not in cmdline


def test_an_org_module_that_exits_does_not_stop_the_start(tmp_path):
    (tmp_path / "layers.py").write_text(LAYER)
    (tmp_path / "org.py").write_text("import os\nos._exit(1)\n")
    files = {"layers.py": str(tmp_path / "layers.py"), "org.py": str(tmp_path / "org.py")}
    with Sandbox(files=files, timeout=20, hostile=True, isolation="process") as sb:
        sb.import_file("layers.py")  # before the fix: SandboxError(reason="start"), the grader's setup
        assert sb.load_layer("layers.py", "Double", {}) is not None
        with pytest.raises(UsageError) as err:  # tester19g F8: the grader's wording, not check's "after '::'"
            sb.load_layer("layers.py", "double", {})
        assert "The tests look for the class `double` in `layers.py`" in str(err.value) and "::'" not in str(err.value)
