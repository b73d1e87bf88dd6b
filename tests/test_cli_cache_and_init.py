"""`gradcheck check` on a backward that writes into its cache and on --init (first found by a new-user
tester, session 3, items 7 and 11): such a backward is refused like one that writes into dY (in process and
in the sandbox); --init keys the constructor or forward cannot take are usage errors (exit 2); a forward
returning cache None is named.
"""

import textwrap

import numpy as np
import pytest

from gradcheck import check_layer
from gradcheck._adapters import pair
from gradcheck.cli import main
from gradcheck.errors import StudentCodeError
from gradcheck.sandbox import Sandbox

RELU = """
import numpy as np

def relu_forward(x):
    return np.maximum(x, 0.0), x

def relu_backward(dout, cache):
    x = cache
    BODY
    return dx
"""
INPLACE = "x[x <= 0] = 0\n    dx = dout * (x > 0)"
CLEAN = "dx = dout * (x > 0)"

CLASS = """
import numpy as np

class ReLU:
    def __init__(self):
        self.dW_buffer = None

    def forward(self, X):
        self.cache = (X, X > 0)
        return np.maximum(X, 0.0)

    def backward(self, dY):
        X, mask = self.cache
        BODY
        return dY * mask
"""


def gc(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, " ".join(err.split())


def write(tmp_path, text, name="layers.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text))
    return f


def test_a_backward_that_writes_into_its_cache_is_refused_by_gradcheck_check(tmp_path, capsys):
    """The tester's relu: `x = cache; x[x <= 0] = 0` (the caller's x) got PASS; a clean one still passes."""
    f = write(tmp_path, RELU.replace("BODY", INPLACE))
    code, _, err = gc(capsys, "check", f"{f}::relu", "--input-shape", "4,5")
    assert code == 3
    assert "relu_backward modified its cache (x, element [" in err and "copy before writing" in err
    g = write(tmp_path, RELU.replace("BODY", CLEAN), "clean.py")
    assert gc(capsys, "check", f"{g}::relu", "--input-shape", "4,5")[0] == 0


def _module(text):
    ns = {}
    exec(compile(textwrap.dedent(text), "<student>", "exec"), ns)  # noqa: S102 - the test's own code
    return ns


def test_a_cache_write_into_the_callers_x_is_refused_in_process_for_a_pair_and_a_class_and_named():
    X = np.random.default_rng(0).standard_normal((4, 5))
    ns = _module(RELU.replace("BODY", INPLACE))
    first = [int(i) for i in np.argwhere(X <= 0)[0]]  # the first element x[x <= 0] = 0 changes
    with pytest.raises(StudentCodeError, match=rf"relu_backward modified its cache \(x, element \{first}\)"):
        check_layer(pair(ns["relu_forward"], ns["relu_backward"], {}), X, twin=None)
    ns = _module(RELU.replace("BODY", CLEAN))
    assert check_layer(pair(ns["relu_forward"], ns["relu_backward"], {}), X, twin=None).passed
    from gradcheck._adapters import adapt

    # session 26, as gradcheck check (sources.cache_write_verdict): the mask is an array forward made, not the caller's
    # x, so the write is checked, not refused: backward after its own forward sets dX[0, 1] where X[0, 1] <= 0: FAIL
    assert X[0, 1] <= 0
    bad = _module(CLASS.replace("BODY", "mask[0, 1] = True"))["ReLU"]()
    layer, _ = adapt(bad, [X])
    res = check_layer(layer, X, twin=None)
    assert not res.passed and res.failing_tensors == ["dX"], res.notes
    assert any(n.startswith("ReLU.backward modified its cache (self.cache[1], element [0, 1]) in place, an array its "
                            "forward made") for n in res.notes), res.notes
    bad = _module(CLASS.replace("BODY", "X[0, 1] = 7.0"))["ReLU"]()  # the caller's X, held in the cache: refused
    layer, _ = adapt(bad, [X])
    with pytest.raises(StudentCodeError, match=r"ReLU.backward modified its cache \(self.cache\[0\], element \[0, 1\]\)"):
        check_layer(layer, X, twin=None)
    # a gradient buffer backward fills is no cache
    ok = _module(CLASS.replace("BODY", "self.dW_buffer = np.zeros(3); self.dW_buffer[0] = 1"))["ReLU"]()
    layer, _ = adapt(ok, [X])
    assert check_layer(layer, X, twin=None).passed


def test_a_cache_write_is_refused_in_the_sandbox_as_grading_runs_it(tmp_path):
    f = write(tmp_path, RELU.replace("BODY", INPLACE))
    X = np.random.default_rng(1).standard_normal((3, 4))
    with Sandbox(files={"layers.py": str(f)}, timeout=60) as sb:
        layer = sb.load_layer("layers.py", "relu")
        layer.forward(X.copy())
        with pytest.raises(StudentCodeError, match=r"relu_backward modified its cache \(x, element"):
            layer.backward(np.ones_like(X))


@pytest.mark.parametrize("init, needles", [
    ('{"bogus": 1}', ["--init key 'bogus' is not an argument of Linear(in_features, out_features", "accepts: "
                      "in_features, out_features"]),
])
def test_an_unknown_init_key_of_a_class_is_a_usage_error(tmp_path, capsys, init, needles):
    f = write(tmp_path, """
        import numpy as np

        class Linear:
            def __init__(self, in_features, out_features):
                self.W = np.ones((out_features, in_features))

            def forward(self, X):
                return X @ self.W.T

            def backward(self, dY):
                self.dW = dY.T @ X
                return dY @ self.W
        """)
    code, _, err = gc(capsys, "check", f"{f}::Linear", "--input-shape", "4,5", "--init", init)
    assert code == 2 and "usage error" in err
    for n in needles:
        assert n in err


CONV = """
import numpy as np

def scale_forward(x, w, scale_param):
    return x * w * scale_param["k"], (x, w, scale_param["k"])

def scale_backward(dout, cache):
    x, w, k = cache
    return dout * w * k, (dout * x * k).sum(0)
"""


@pytest.mark.parametrize("shape, init, needles", [
    ("4,3", '{"scale_param": {"k": 2.0}, "x": 5}', ["--init key 'x': x is an array input of scale_forward(x, w, "
                                                     "scale_param)", "--input-shape", "other arguments (scale_param)"]),
    ("4,3;3", '{"scale_param": {"k": 2.0}, "w": 5}', ["--init key 'w': w is an array input"]),
    ("4,3;3", '{"scale_param": {"k": 2.0}, "bogus": 5}', ["--init key 'bogus' is not an argument of scale_forward",
                                                           "accepts: scale_param"]),
])
def test_init_keys_of_a_function_pair_that_name_arrays_or_nothing_are_usage_errors(tmp_path, capsys, shape, init,
                                                                                   needles):
    f = write(tmp_path, CONV)
    code, _, err = gc(capsys, "check", f"{f}::scale", "--input-shape", shape, "--init", init)
    assert code == 2, err
    for n in needles:
        assert n in err
    assert gc(capsys, "check", f"{f}::scale", "--input-shape", "4,3;3", "--init", '{"scale_param": {"k": 2.0}}')[0] == 0


def test_a_forward_returning_cache_none_is_named_not_called_before(tmp_path, capsys):
    """The tester's glob pair: backward read module globals; the message said 'called before forward'."""
    f = write(tmp_path, """
        _last = {}

        def glob_forward(x, w):
            _last["x"], _last["w"] = x.copy(), w.copy()
            return x @ w, None

        def glob_backward(dout, cache):
            return dout @ _last["w"].T, _last["x"].T @ dout
        """)
    code, _, err = gc(capsys, "check", f"{f}::glob", "--input-shape", "4,5;5,3")
    assert code == 3
    assert "glob_forward returned cache None, so glob_backward(dout, cache) would get cache=None" in err
    assert "called before" not in err


SOFTMAX = """
import numpy as np

def softmax_loss(x, y):
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.log(p[np.arange(n), y]).mean()
    dx = p.copy()
    dx[np.arange(n), y] -= 1
    return loss, SIGN dx / n
"""


def test_a_cs231n_loss_functions_gradient_is_named_after_its_first_argument(tmp_path, capsys):
    """softmax_loss(x, y) -> (loss, dx): reports said dy_pred, a name not in the student's code."""
    good = write(tmp_path, SOFTMAX.replace("SIGN", ""), "good.py")
    code, out, _ = gc(capsys, "check", "--loss", f"{good}::softmax_loss", "--input-shape", "4,5", "--targets", "labels")
    assert code == 0 and "PASS: softmax_loss: dL/dx matches" in out and "dy_pred" not in out
    bad = write(tmp_path, SOFTMAX.replace("SIGN", "-"), "bad.py")
    code, out, _ = gc(capsys, "check", "--loss", f"{bad}::softmax_loss", "--input-shape", "4,5", "--targets", "labels")
    assert code == 1 and "FAIL: softmax_loss: gradient mismatch in dx." in out and "dy_pred" not in out
