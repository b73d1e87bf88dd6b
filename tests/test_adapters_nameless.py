"""redteam25 M2: a correct CS231n forward written as ``affine_forward = functools.partial(_affine_forward)`` scored 0,
and ``gradcheck check`` exited 3 with "affine.__init__() raised AttributeError: 'functools.partial' object has no
attribute '__name__'": the adapters' own error, blamed on the student. A callable without ``__name__`` is now named
after the name it was found under (:func:`gradcheck._adapters.named`), and an error of the adapters' own code while a
layer is loaded is gradcheck's (:class:`gradcheck.errors.InternalError`), never the submission's.
"""

import functools
from pathlib import Path

import numpy as np
import pytest

from gradcheck import _adapters as AD
from gradcheck import _sandbox_child, check_layer, function_pair
from gradcheck.cli import main
from gradcheck.errors import InternalError
from gradcheck.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "assignments" / "cs231n_layers" / "solution" / "layers.py").read_text()
#: the solution with affine_forward (and relu_backward, a callable object) bound without a __name__
NAMELESS = (SOLUTION.replace("def affine_forward(x, w, b):", "def _affine_forward(x, w, b):", 1)
            .replace("def relu_backward(dout, cache):", "def _relu_backward(dout, cache):", 1)
            + "\n\nimport functools\naffine_forward = functools.partial(_affine_forward)\n\n\n"
              "class _Call:\n    def __call__(self, dout, cache):\n        return _relu_backward(dout, cache)\n\n\n"
              "relu_backward = _Call()\n")


@pytest.mark.parametrize("name, shape", [("affine", "4,5;5,3;3"), ("relu", "4,5")])
def test_check_passes_a_nameless_forward_or_backward(tmp_path, capsys, name, shape):
    """``gradcheck check layers.py::affine`` (a partial forward) and ``::relu`` (a callable object as backward)
    PASS, exit 0, where they exited 3 blaming the student for gradcheck's AttributeError."""
    (tmp_path / "layers.py").write_text(NAMELESS)
    code = main(["check", str(tmp_path / "layers.py") + "::" + name, "--input-shape", shape])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert f"PASS: {name}:" in out.out and "__name__" not in out.out + out.err


def test_function_pair_of_a_partial():
    """The public ``function_pair`` takes a partial too (its forward named ``layer_forward``)."""
    def scale_forward(x, a):
        return x * a, (x, a)

    def scale_backward(dout, cache):
        x, a = cache
        return dout * a, dout * x
    layer = function_pair(functools.partial(scale_forward), functools.partial(scale_backward))
    assert check_layer(layer, [(3, 2), (3, 2)], twin=None).passed


def test_an_error_of_the_adapters_own_code_is_not_the_students(tmp_path, monkeypatch):
    """An exception raised in the adapters' module with no frame of the submission's files is the adapters' own
    (the old ``fwd.__name__`` read, put back here); one raised in the student's function is the student's."""
    monkeypatch.setattr(AD, "named", lambda f, name, g: f)  # the adapters before the fix
    (tmp_path / "s.py").write_text("def boom(x):\n    raise ValueError('student')\n")
    ns = {}
    exec(compile((tmp_path / "s.py").read_text(), str(tmp_path / "s.py"), "exec"), ns)

    def raised(fn):
        try:
            fn()
        except Exception as exc:  # noqa: BLE001
            return exc
        raise AssertionError("nothing raised")
    own = raised(lambda: AD.build("functions", (functools.partial(ns["boom"]), ns["boom"]), {}, 0))
    assert isinstance(own, AttributeError) and _sandbox_child._adapters_own(AD, own, str(tmp_path))
    student = raised(lambda: AD.pair(ns["boom"], ns["boom"], {}).forward(np.ones(2)))
    assert not _sandbox_child._adapters_own(AD, student, str(tmp_path))


def test_the_parent_words_an_internal_load_failure_as_gradchecks(tmp_path, monkeypatch):
    """A load the child reports as the adapters' own failure (stage "internal") is an InternalError (a grader error:
    the submission not graded, staff told), its message saying it is gradcheck's error, not the submitted code's."""
    (tmp_path / "layers.py").write_text(SOLUTION)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, timeout=10) as sb:
        monkeypatch.setattr(sb, "request", lambda op, args, **kw: (
            False, {"stage": "internal"}, {"type": "AttributeError", "message": "'X' object has no attribute 'y'"}))
        with pytest.raises(InternalError) as info:
            sb.load_layer("layers.py", "affine", {})
    text = " ".join(str(info.value).split())
    assert "its own adapter failed with AttributeError" in text and "not of the submitted code" in text
