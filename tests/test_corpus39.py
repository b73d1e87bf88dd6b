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


def test_h2_a_repository_root_of_metadata_named_as_no_identifier_is_not_the_package_root(tmp_path):
    repo = tmp_path / "NumPy-Neural-Network"
    _write(repo, {
        "__init__.py": '__version__ = "0.0.7"\n',
        "neural_network/__init__.py": "",
        "neural_network/tools.py": "def trace(f):\n    return f\n",
        "neural_network/modules/__init__.py": "from .module import Module\n",
        "neural_network/modules/module.py": "from neural_network.tools import trace\n\n\nclass Module:\n    pass\n",
        "neural_network/modules/linear.py": "from . import Module\n" + textwrap.dedent(LINEAR),
    })
    p = run_here("check", "neural_network/modules/linear.py::Linear", "--input-shape", "4,5", "--isolation",
                 "process", cwd=repo)
    assert p.returncode == 0, _output(p)
    assert "PASS: Linear: every gradient (dX, dW, db) matches" in p.stdout, _output(p)


def test_h2_under_the_namespaces_sandbox_the_own_package_is_named_not_the_relative_import(tmp_path):
    repo = tmp_path / "NumPy-Neural-Network"
    _write(repo, {
        "__init__.py": '__version__ = "0.0.7"\n',
        "neural_network/__init__.py": "",
        "neural_network/modules/__init__.py": "class Module:\n    pass\n",
        "neural_network/modules/linear.py": "from . import Module\n" + textwrap.dedent(LINEAR),
    })
    p = run_here("check", "neural_network/modules/linear.py::Linear", "--input-shape", "4,5", "--isolation",
                 "namespaces", cwd=repo)
    out = _output(p)
    if "namespaces" in out and "not available" in out:  # a machine without bubblewrap: refused, exit 2
        pytest.skip("no namespaces sandbox here")
    assert "neural_network/, imported by name in linear.py, was not copied into the sandbox" in " ".join(out.split())
