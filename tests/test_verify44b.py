"""verify44b's findings on session 44's changes: a wrong gradient where every central difference is exactly 0 (a
saturated tanh at X + 1000) is a FAIL, not NOT CHECKED; the autodiff guard's ``if __name__ == "__main__":`` skip
needs a ``__name__`` the file cannot have rebound."""

import textwrap

import numpy as np
import pytest


class _SaturatedTanh:
    """tanh at inputs near 1000 (1 - tanh(x)**2 is 0.0 in float64), whose backward adds ``bug`` to dX."""

    params: dict = {}
    grads: dict = {}

    def __init__(self, bug):
        self.bug = bug

    def forward(self, X, training=False):
        self.Y = np.tanh(X)
        return self.Y

    def backward(self, dY):
        return dY * (1 - self.Y ** 2) + self.bug


def test_a_wrong_gradient_where_the_differences_are_all_zero_fails_at_a_large_input():
    """F1: every difference is 0 (the loss, of round-off 4e-13, never moves), so dX = 1e-6 is wrong, not unsettled
    by the floor's atol 1e-9 times max|x| = 1000; the right layer passes."""
    from gradcheck import check_layer

    X = np.random.default_rng(3).standard_normal((3, 5)) + 1000.0
    assert np.all(1 - np.tanh(X) ** 2 == 0.0)
    bad = check_layer(_SaturatedTanh(1e-6), X, twin=None, seed=0, mode="full")
    assert bad.failing_tensors == ["dX"] and not bad.unchecked, (bad.failing_tensors, bad.unchecked)
    assert check_layer(_SaturatedTanh(0.0), X, twin=None, seed=0, mode="full").passed


def _files(tmp_path, **texts):
    out = {}
    for name, text in texts.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
        out[f"{name}.py"] = str(tmp_path / f"{name}.py")
    return out


@pytest.mark.parametrize("rebind", [
    'def _load(__name__="__main__"):\n    if __name__ == "__main__":\n        import autograd\n',
    'f = lambda __name__="__main__": __import__("autograd") if __name__ == "__main__" else None\n',
    'match "__main__":\n    case __name__:\n        pass\nif __name__ == "__main__":\n    import autograd\n',
    'from helper import MAIN as __name__\nif __name__ == "__main__":\n    import autograd\n',
    'globals().update({"__na" + "me__": "__main__"})\nif __name__ == "__main__":\n    import autograd\n',
    'k = "".join(map(chr, [95, 95, 110, 97, 109, 101, 95, 95]))\ng = getattr(_f, "__glo" "bals__")\n'
    'if __name__ == "__main__":\n    import autograd\n'])
def test_a_main_block_whose_name_may_be_rebound_is_read(tmp_path, rebind):
    """F2: a parameter, a match capture, ``import ... as``, or a write through the namespace made ``__name__``
    "__main__" where the scan saw no rebinding, and the autodiff import there went unreported."""
    from gradcheck.grading.static import forbidden_imports

    files = _files(tmp_path, layers=rebind)
    assert [v.module for v in forbidden_imports(list(files.values()), ["autograd"])] == ["autograd"], rebind


def test_a_self_test_in_a_layer_file_that_uses_getattr_on_self_is_still_skipped(tmp_path):
    """newuser44 F1 stays fixed: a layer's own attributes (getattr, vars, __dict__ of self), np.stack and a mode
    "eval" are no rebinding of ``__name__``."""
    from gradcheck.grading.static import forbidden_imports

    files = _files(tmp_path, layers="""\
        import numpy as np
        class Linear:
            def __init__(self):
                self.mode, self.W = "eval", np.zeros(3)
                print(vars(self), self.__dict__)
            def step(self, names):
                return np.stack([getattr(self, k) for k in names])
            def eval(self):
                return self
        if __name__ == "__main__":
            import autograd
        """)
    assert forbidden_imports(list(files.values()), ["autograd"]) == []


@pytest.mark.parametrize("load", [
    'import runpy\nns = runpy.run_path(__file__.replace("layers.py", "helper.py"))\n',
    'import pkgutil\nanp = pkgutil.resolve_name("helper:anp")\n',
    'import pydoc\nanp = pydoc.locate("helper.anp")\n',
    'import pickle\nanp = pickle.loads(b"chelper\\nanp\\n.")\n'])
def test_a_helper_loaded_by_data_is_graded(tmp_path, load):
    """F3: a file the graded one loads by a path or a name given as data (not an import) is read by the guard."""
    from gradcheck.grading.static import forbidden_imports, graded_files

    files = _files(tmp_path, layers=load, helper="import autograd.numpy as anp\n", check_mine="import autograd\n")
    got = graded_files("layers.py", files)
    assert sorted(got) == sorted(files.values())
    assert "autograd.numpy" in [v.module for v in forbidden_imports(got, ["autograd"])]
