"""Public numpy code corpus39 ran through `gradcheck check` and autoprop (session 39; its harness, outside the tree,
reproduces each finding on the upstream code itself). Written here in those layouts, not copied:

- H2: a repository whose root holds an ``__init__.py`` of metadata in a folder whose name is no identifier
  (RECHE23/NumPy-Neural-Network: ``NumPy-Neural-Network/__init__.py``, ``neural_network/modules/linear.py`` with
  ``from . import Module``): "attempted relative import with no known parent package", though Python imports
  ``neural_network.modules.linear`` from that root;
- H1: a file that puts its folder's parent on ``sys.path`` from ``__file__`` (naye971012/numpy_transformer's
  ``commons/attention.py``: ``sys.path.append(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))``) and
  imports a sibling folder without ``__init__.py`` (``from activations.softmax import softmax_np``): "not installed
  here ... install the package's requirements";
- H3: forward and backward under a decorator whose wrapper is ``wrap(*args, **kwargs)`` (RECHE23's ``@trace()``,
  no functools.wraps): called with ``training=``, then "forward must accept a training keyword";
- H4 (autoprop): ``t += v`` on a view whose base nothing holds (``v = np.var(x, axis=1).reshape(-1, 1); v += eps``,
  naye971012's LayerNorm) was refused as if numpy's write-through could be seen.
"""

import textwrap

import numpy as np
import pytest
from test_cli import run_here

import autoprop as ap
from gradcheck import sandbox


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


LINEAR = """
    import numpy as np


    class Linear(Module):
        def __init__(self, n_in=5, n_out=3):
            rng = np.random.default_rng(0)
            self.W, self.b = rng.standard_normal((n_out, n_in)), rng.standard_normal(n_out)

        def forward(self, x):
            self.x = x
            return x @ self.W.T + self.b

        def backward(self, dy):
            self.dW, self.db = dy.T @ self.x, dy.sum(axis=0)
            return dy @ self.W
"""


def _output(p):
    return p.stdout + p.stderr


def _metadata_root(tmp_path):
    """RECHE23's layout: a root ``__init__.py`` of metadata in a folder whose name is no identifier."""
    repo = tmp_path / "NumPy-Neural-Network"
    _write(repo, {
        "__init__.py": '__version__ = "0.0.7"\n',
        "neural_network/__init__.py": "",
        "neural_network/tools.py": "def trace(f):\n    return f\n",
        "neural_network/modules/__init__.py": "from .module import Module\n",
        "neural_network/modules/module.py": "from neural_network.tools import trace\n\n\nclass Module:\n    pass\n",
        "neural_network/modules/linear.py": "from . import Module\n" + textwrap.dedent(LINEAR),
    })
    return repo


def test_h2_a_repository_root_of_metadata_named_as_no_identifier_is_not_the_package_root(tmp_path):
    p = run_here("check", "neural_network/modules/linear.py::Linear", "--input-shape", "4,5", "--isolation",
                 "process", cwd=_metadata_root(tmp_path))
    assert p.returncode == 0, _output(p)
    assert "PASS: Linear: every gradient (dX, dW, db) matches" in p.stdout, _output(p)


@pytest.mark.skipif(sandbox.support()[0] == "none", reason="no namespaces sandbox here")
def test_h2_under_the_namespaces_sandbox_the_own_package_is_named_not_the_relative_import(tmp_path):
    p = run_here("check", "neural_network/modules/linear.py::Linear", "--input-shape", "4,5", "--isolation",
                 "namespaces", cwd=_metadata_root(tmp_path))
    out = " ".join(_output(p).split())
    assert "neural_network/, imported by name in linear.py, was not copied into the sandbox" in out, out


TRACED = '''
import numpy as np


def trace(display=False):
    def parameterized(func):
        def wrap(*args, **kwargs):
            if display:
                print(func.__name__, [a.shape for a in args[1:]], list(kwargs.items()))
            result = func(*args, **kwargs)
            return result
        wrap.calls = {}
        return wrap
    return parameterized


class Linear:
    def __init__(self, n_in=5, n_out=3):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((n_out, n_in)), rng.standard_normal(n_out)

    @trace()
    def forward(self, input_data):
        self.x = input_data
        return input_data @ self.W.T + self.b

    @trace()
    def backward(self, upstream_gradients):
        self.dW, self.db = upstream_gradients.T @ self.x, upstream_gradients.sum(axis=0)
        return upstream_gradients @ self.W
'''


def test_h3_a_pass_through_decorator_is_seen_through_no_training_keyword_passed(tmp_path):
    (tmp_path / "traced.py").write_text(TRACED)
    p = run_here("check", tmp_path / "traced.py::Linear", "--input-shape", "4,5", "--isolation", "process")
    assert p.returncode == 0, _output(p)
    assert "PASS: Linear: every gradient (dX, dW, db) matches" in p.stdout, _output(p)
    assert "mode: forward has no training switch: one mode" in p.stdout, p.stdout


def test_h3_a_wrapper_that_reads_training_from_its_kwargs_keeps_it():
    from gradcheck._adapters import see_through

    def consumes(func):
        def wrap(*args, **kwargs):
            kwargs.pop("training", None)
            return func(*args, **kwargs)
        return wrap

    def passes(func):
        def wrap(*args, **kwargs):
            return func(*args, **kwargs)
        return wrap

    class L:
        @consumes
        def forward(self, x):
            return x

        @passes
        def backward(self, dy):
            return dy

    layer = L()
    assert see_through(layer.forward) == layer.forward  # its training keyword is the wrapper's own
    assert see_through(layer.backward).__func__.__name__ == "backward"
    assert see_through(layer.backward)(3) == 3


def test_h3_check_layer_in_python_checks_the_decorated_layer_too(tmp_path):
    import importlib.util

    import gradcheck

    (tmp_path / "traced_api.py").write_text(TRACED)
    spec = importlib.util.spec_from_file_location("traced_api", tmp_path / "traced_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = gradcheck.check_layer(module.Linear(), np.random.default_rng(1).standard_normal((4, 5)))
    assert result.passed, result


SOFTMAX_LAYER = """
    import os
    import sys

    import numpy as np

    current_path = os.path.dirname(os.path.realpath(__file__))
    parent_path = os.path.dirname(current_path)
    sys.path.append(parent_path)

    from activations.softmax import softmax_np


    class Scores:
        def __init__(self):
            self.W = np.random.default_rng(0).standard_normal((3, 4))
            self.softmax = softmax_np()

        def forward(self, x):
            self.x = x
            return self.softmax.forward(x @ self.W)

        def backward(self, dy):
            ds = self.softmax.backward(dy)
            self.dW = self.x.T @ ds
            return ds @ self.W.T
"""

SOFTMAX = """
    import numpy as np


    class softmax_np:
        def forward(self, x):
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            self.out = e / e.sum(axis=-1, keepdims=True)
            return self.out

        def backward(self, dy):
            g = self.out * dy
            return g - self.out * g.sum(axis=-1, keepdims=True)
"""


def test_h1_a_parent_folder_put_on_sys_path_from_file_gives_its_namespace_package(tmp_path):
    _write(tmp_path / "numpy_functions", {"commons/attention.py": SOFTMAX_LAYER, "activations/softmax.py": SOFTMAX})
    p = run_here("check", tmp_path / "numpy_functions/commons/attention.py::Scores", "--input-shape", "2,3",
                 "--isolation", "process")
    assert p.returncode == 0, _output(p)
    assert "PASS: Scores: every gradient (dX, dW) matches" in p.stdout, _output(p)
    assert "not installed" not in _output(p)


def test_h1_the_folders_a_file_puts_on_sys_path_are_read_not_run():
    from gradcheck.sandbox import _path_entries

    assert _path_entries(textwrap.dedent(SOFTMAX_LAYER), "/r/pkg/commons/attention.py") == ["/r/pkg"]
    joined = "import os, sys\nsys.path.append(os.path.join(os.path.dirname(__file__), os.pardir))\n"
    assert _path_entries(joined, "/r/pkg/ch05/f.py") == ["/r/pkg"]
    pathlib = "import sys\nfrom pathlib import Path\nsys.path.insert(0, str(Path(__file__).resolve().parents[1]))\n"
    assert _path_entries(pathlib, "/r/pkg/ch05/f.py") == ["/r/pkg"]
    assert _path_entries("import os, sys\nsys.path.append(os.getcwd())\n", "/r/f.py") == []
    assert _path_entries("import sys\nd = '/x'\nd = '/y'\nsys.path.append(d)\n", "/r/f.py") == []


class LayerNormNoAffine:
    """naye971012/numpy_transformer's Layer_Normalization_np.forward, its layout: the variance reshaped to a column
    (a view of np.var's result, which nothing holds), then ``+= eps`` on it."""

    def forward(self, x, eps=1e-5):
        n = x.shape[0]
        x = x.reshape(n, -1)
        self.feature_mu = np.mean(x, axis=1).reshape(-1, 1)
        self.feature_var = np.var(x, axis=1).reshape(-1, 1)
        self.feature_var += eps
        return (x - self.feature_mu) / np.sqrt(self.feature_var)


def test_h4_plus_equals_on_a_view_of_a_temporary_rebinds_and_its_gradient_is_central_differences():
    X = np.random.default_rng(3).standard_normal((4, 5))
    G = np.random.default_rng(4).standard_normal((4, 5))
    x = ap.Variable(X)
    with ap.GradientTape() as tape:
        y = LayerNormNoAffine().forward(x)
        loss = np.sum(y * G)
    np.testing.assert_allclose(y.numpy(), LayerNormNoAffine().forward(X), rtol=0, atol=0)
    num = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        up, down = X.copy(), X.copy()
        up[i] += 1e-6
        down[i] -= 1e-6
        num[i] = (np.sum(LayerNormNoAffine().forward(up) * G) - np.sum(LayerNormNoAffine().forward(down) * G)) / 2e-6
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), num, rtol=1e-6, atol=1e-8)


def test_h4_still_refused_while_the_base_or_another_view_of_it_lives():
    x = ap.Variable(np.arange(20.0).reshape(4, 5))
    v = np.var(x, axis=1)
    col = v.reshape(-1, 1)
    with pytest.raises(TypeError, match="a view of another tensor's values"):
        col += 1.0  # numpy would change v
    row = v[None]
    del v
    with pytest.raises(TypeError, match="a view of another tensor's values"):
        col += 1.0  # numpy would change row, a view of the same memory
    del row
    col += 1.0
    np.testing.assert_allclose(col.numpy()[:, 0], np.var(np.arange(20.0).reshape(4, 5), axis=1) + 1.0)
    w = x.sum(axis=0)
    wt = w.T
    with pytest.raises(TypeError, match="on a tensor that has a view"):
        w += 1.0  # numpy would change wt
    del wt
    w += 1.0
    t = x.T
    with pytest.raises(TypeError, match="a view of another tensor's values"):
        t += 1.0  # x, a Variable, lives


CONNECTED = """
import numpy as np


class Linear:
    '''chaoming0625/NumpyDL's layout: the weights are made by connect_to(prev_layer), which its Model calls.'''

    first_layer = False

    def __init__(self, n_out, n_in=None):
        self.n_out, self.n_in = n_out, n_in
        self.W = self.b = self.dW = self.db = self.last_input = None

    def connect_to(self, prev_layer=None):
        n_in = self.n_in if prev_layer is None else prev_layer.out_shape[-1]
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((n_in, self.n_out)), rng.standard_normal(self.n_out)

    def forward(self, input, *args, **kwargs):
        self.last_input = input
        return np.dot(input, self.W) + self.b

    def backward(self, pre_grad, *args, **kwargs):
        self.dW = np.dot(self.last_input.T, pre_grad)
        self.db = np.REDUCE(pre_grad, axis=0)
        if not self.first_layer:
            return np.dot(pre_grad, self.W.T)
"""


@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_m1_a_layer_built_by_connect_to_is_connected_then_checked(tmp_path, reduce):
    (tmp_path / "core.py").write_text(CONNECTED.replace("REDUCE", reduce))
    p = run_here("check", tmp_path / "core.py::Linear", "--input-shape", "4,5", "--init", '{"n_out": 3}',
                 "--isolation", "process")
    out = " ".join(_output(p).split())
    assert "connect_to(prev_layer) called as NumpyDL's Model calls it, prev_layer.out_shape (4, 5)" in out, out
    if reduce == "sum":
        assert p.returncode == 0 and "PASS: Linear: every gradient (dX, dW, db) matches" in out, out
    else:  # NumpyDL's own Linear: db is the mean
        assert p.returncode == 1 and "db is the mean over the batch, not the sum" in out, out
