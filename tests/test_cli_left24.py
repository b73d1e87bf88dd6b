"""Session 24 (left24): session 23's leftovers through the CLI in this process (the checked code in its sandbox) and
through check_layer: a numpy-ml-like layer storing its inputs in a list without a flush method (tester23s's
nmlike.py::D_xlist) refused with what to add; the usage errors of a class or function gradcheck cannot use as
given, exit 2."""

import textwrap

import pytest
from test_cli import both, run_here

XLIST = '''
import numpy as np


class XList:
    """numpy-ml's storage without its flush_gradients(): forward appends X, backward returns one dX per input."""

    def __init__(self, n_in=4, n_out=3):
        rng = np.random.default_rng(1)
        self.parameters = {"W": rng.standard_normal((n_in, n_out)), "b": np.zeros((1, n_out))}
        self.gradients = {"W": np.zeros((n_in, n_out)), "b": np.zeros((1, n_out))}
        self.X = []

    def forward(self, X, retain_derived=True):
        if retain_derived:
            self.X.append(X)
        return X @ self.parameters["W"] + self.parameters["b"]

    def backward(self, dLdy, retain_grads=True):
        if not isinstance(dLdy, list):
            dLdy = [dLdy]
        dX = []
        for dy, x in zip(dLdy, self.X):
            dX.append(dy @ self.parameters["W"].T)
            if retain_grads:
                self.gradients["W"] = x.T @ dy
                self.gradients["b"] = dy.sum(axis=0, keepdims=True)
        return dX[0] if len(self.X) == 1 else dX


class XListFlushed(XList):
    def flush_gradients(self):
        self.X = []
        for k, v in self.gradients.items():
            self.gradients[k] = np.zeros_like(v)
'''


@pytest.fixture
def xlist(tmp_path):
    f = tmp_path / "nmlike.py"
    f.write_text(textwrap.dedent(XLIST))
    return f


def test_stored_inputs_without_a_flush_are_refused_with_what_to_add(xlist):
    """tester23s's D_xlist: exit 1 "gave dX as a list" with an "if" of advice (the sandbox's reply does not carry
    the list). The child names the list forward appends to: exit 2, the class not usable as given, and the method to
    add; with that method (numpy-ml's flush_gradients()) the same layer PASSes."""
    p = run_here("check", f"{xlist}::XList", "--input-shape", "6,4", cwd=xlist.parent)
    text = " ".join(both(p).split())
    assert p.returncode == 2, text
    assert "usage error (exit 2)" in text and "forward appends its input to self.X" in text, text
    assert "def flush_gradients(self): self.X = []" in text and "If forward appends" not in text, text
    ok = run_here("check", f"{xlist}::XListFlushed", "--input-shape", "6,4", cwd=xlist.parent)
    assert ok.returncode == 0 and "PASS" in ok.stdout, both(ok)


def test_stored_inputs_without_a_flush_are_refused_in_python_too(xlist):
    """check_layer on the object itself: the list was read as a (1, 6, 4) dX, "a keepdims=True too many"."""
    import importlib.util

    from gradcheck import check_layer
    from gradcheck._adapters import adapt
    from gradcheck.errors import EXIT_USAGE, UnusableError

    spec = importlib.util.spec_from_file_location("nmlike_left24", xlist)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import numpy as np

    layer, _ = adapt(mod.XList(), [np.ones((6, 4))])
    with pytest.raises(UnusableError, match=r"forward appends its input to self\.X") as ei:
        check_layer(layer, (6, 4))
    assert "keepdims" not in str(ei.value) and ei.value.exit_code == EXIT_USAGE
    from gradcheck.diagnose import diagnose_layer

    d = diagnose_layer(adapt(mod.XList(), [np.ones((6, 4))])[0], (6, 4))  # the diagnosis's probes refuse it alike
    assert isinstance(d.error, UnusableError) and "def flush_gradients(self): self.X = []" in str(d.error), d.error


def test_a_list_from_backward_without_stored_inputs_stays_a_wrong_result(tmp_path):
    """Only a list forward fills is refused as unusable: dX built as a Python list is still a wrong result (exit 1)."""
    f = tmp_path / "listy.py"
    f.write_text(textwrap.dedent('''
        class Listy:
            def __init__(self):
                self.params, self.grads = {}, {}
                self.history = [1, 2]  # a list, of no arrays
            def forward(self, X, training=False):
                return 2 * X
            def backward(self, dY):
                return [2 * dY]
    '''))
    p = run_here("check", f"{f}::Listy", "--input-shape", "3,4", cwd=tmp_path)
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "gave dX as a list" in text and "numpy-ml" not in text, text


@pytest.mark.parametrize(("source", "target", "extra", "words"), [
    ("class NoForward:\n    def backward(self, dY):\n        return dY\n", "NoForward", [], "has no forward() method"),
    ("class NoBackward:\n    def forward(self, X):\n        return 2 * X\n", "NoBackward", [],
     "has no backward() method"),
    ("class LossNoBackward:\n    def forward(self, y_true, y_pred):\n        return float(((y_pred - y_true)**2).sum())\n",
     "LossNoBackward", ["--loss"], "has no backward() method"),
    ("def bare(x):\n    return x\n", "bare", [], "is a function, not a class"),
])
def test_a_class_or_function_not_usable_as_written_is_a_usage_error(tmp_path, source, target, extra, words):
    """Session 23's leftover: a class without forward exited 3 ("the checked code failed", though nothing had run)
    where a bare function exited 2. Both are the named thing not usable as written: exit 2, saying what is due."""
    f = tmp_path / "mine.py"
    f.write_text(source)
    p = run_here("check", f"{f}::{target}", "--input-shape", "3,4", *extra, cwd=tmp_path)
    text = " ".join(both(p).split())
    assert p.returncode == 2 and "usage error (exit 2)" in text and words in text, text
    assert "Expected" in text, text  # what is due


def test_check_layer_on_an_object_without_backward_is_a_usage_error():
    from gradcheck import check_layer
    from gradcheck.errors import EXIT_USAGE, ProtocolError, UnusableError

    class NoBackward:
        params, grads = {}, {}

        def forward(self, X, training=False):
            return X

    with pytest.raises(UnusableError, match=r"no backward\(\) method") as ei:
        check_layer(NoBackward(), (3, 4))
    assert ei.value.exit_code == EXIT_USAGE and isinstance(ei.value, ProtocolError)


def test_one_atol_figure_for_one_check(tmp_path):
    """newuser23's offset.py (y = 3x + 3e14, a sign-flipped backward): the notes gave dX's check three atol figures,
    7.5e+04 (the default step's, which no comparison used), 30 and 29.9 (one number at two precisions). Every figure
    is now the one dX was compared with; the verdict stays NOT CHECKED (exit 3)."""
    import re

    f = tmp_path / "offset.py"
    f.write_text(textwrap.dedent('''
        class Offset:
            def __init__(self):
                self.params = {}; self.grads = {}
            def forward(self, X, training=False):
                return 3.0 * X + 3e14
            def backward(self, dY):
                return -3.0 * dY
    '''))
    p = run_here("check", f"{f}::Offset", "--input-shape", "3,4", cwd=tmp_path)
    text = " ".join(both(p).split())
    assert p.returncode == 3 and "NOT CHECKED" in text, text
    # one figure, the one dX was compared with (29.9 at the old default_rng(0) G, 38.7 at fixn29's probe_rng(0) G:
    # it scales with sum|Y*G|, a draw), and above every |dX| (why NOT CHECKED)
    figures = set(re.findall(r"atol=([0-9.e+-]+[0-9])", text))
    compared = re.search(r"compared with atol=([0-9.e+-]+[0-9])", text)
    assert compared and figures == {compared.group(1)}, (figures, text)
    largest = re.search(r"than every \|dX\| \(at most ([0-9.e+-]+[0-9])\)", text)
    assert largest and float(compared.group(1)) > float(largest.group(1)), text
