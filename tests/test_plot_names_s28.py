"""Session 28 (redteam28 F1, F2): a figure's file name and texts hold names the checked code chose.

F1: ``check --plots`` named each failing tensor's heatmap ``f"{cname}-{t}-heatmap.png"`` with ``t`` from a parameter
key, and ``save_figure`` created folders: a key ``"W/" + "../" * 12 + TARGET`` wrote a PNG outside ``--plots`` (with
``--isolation namespaces`` too). Now one plain file name inside ``--plots`` (``plots.safe_file_name``).
F2: a key ``W$\\undefinedmacro{x}$`` crashed ``check --plots`` with matplotlib's ParseFatalException, exit 1 (FAIL's
code) for a correct layer. Now the names are drawn as written (``$`` escaped) and a figure that cannot be drawn is a
warning.
"""

import os

from test_cli import both, run_here, student

INIT = '{"in_features": 5, "out_features": 3}'

KEYED = """
import numpy as np

K = KEY


class Linear:
    def __init__(self, in_features, out_features, rng=None):
        rng = np.random.default_rng(rng)
        self.params = {K: rng.standard_normal((out_features, in_features)), "b": rng.standard_normal(out_features)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params[K].T + self.params["b"]

    def backward(self, dY):
        self.grads[K] = FACTOR * dY.T @ self.X
        self.grads["b"] = dY.sum(axis=0)
        return dY @ self.params[K]
"""


def _keyed(tmp_path, key, factor):
    d = tmp_path / "sub"
    d.mkdir()
    return student(d, KEYED.replace("KEY", repr(key)).replace("FACTOR", str(factor)), "layers.py")


def _files(root):
    return sorted(os.path.relpath(os.path.join(r, f), root) for r, _, fs in os.walk(root) for f in fs)


def test_a_parameter_key_that_is_a_path_stays_one_file_name_inside_plots(tmp_path):
    """Was: ``plots: .../plots/a/b/Linear.png, .../target/escaped-heatmap.png`` (and a folder Linear-dW/ made)."""
    target = tmp_path / "target"
    target.mkdir()
    f = _keyed(tmp_path, "W/" + "../" * 12 + str(target / "escaped"), 2)
    plots = tmp_path / "plots" / "a" / "b"
    p = run_here("check", f"{f}::Linear", "--input-shape", "8,5", "--init", INIT, "--plots", plots)
    text = both(p)
    assert p.returncode == 1, text
    assert _files(target) == [], text
    names = os.listdir(plots)
    assert len(names) == 2 and "Linear.png" in names, names
    heat = next(n for n in names if n != "Linear.png")
    assert heat.startswith("Linear-dW-") and heat.endswith("-heatmap.png") and "escaped" in heat, heat
    assert "/" not in heat and ".." not in heat, heat
    assert _files(tmp_path / "plots") == [os.path.join("a", "b", n) for n in sorted(names)]


def test_safe_file_name_keeps_one_plain_name_and_numbers_collisions():
    from gradcheck.plots import safe_file_name

    taken = set()
    got = [safe_file_name(n, taken) for n in ("Linear-dW/../x-heatmap.png", "Linear-dW:..:x-heatmap.png",
                                               "../.hidden.png", "Linear.png", "/", "a\\b\x1b[2J.png")]
    assert got == ["Linear-dW-.-x-heatmap.png", "Linear-dW-.-x-heatmap-2.png", "hidden.png", "Linear.png",
                   "figure.png", "a-b-2J.png"]
    for name in got:
        assert os.sep not in name and ".." not in name and not name.startswith(".")
    assert len(safe_file_name("d" * 500 + ".png")) == 124
