"""Session 20 (session 19's leftover 1): an EMA running mean that forward updates as carried state.

The layer is NOT CHECKED forward-changes-state (exit 3) in both paths, and the sentence names the attribute it
changes (``self.mean``), also from the CLI, whose layer lives in its sandboxed child (the attributes were not read
there: "reset the state it changes"). The header calls ``mean`` state forward updates (a buffer, as PyTorch's
``register_buffer``), never "a parameter with no gradient".
"""

from test_cli import both, run_here, student

from gradcheck import _adapters
from gradcheck.diagnose import diagnose_layer

EMA = """
import numpy as np

class CenterEMA:
    def __init__(self):
        self.mean = None

    def forward(self, X):
        m = X.mean(axis=0)
        self.mean = m if self.mean is None else 0.9 * self.mean + 0.1 * m
        return X - self.mean

    def backward(self, dY):
        return dY - dY.mean(axis=0)
"""

SEED_EMA = """
import numpy as np

class ScaleEMA:
    def __init__(self):
        self.W = np.linspace(0.5, 1.5, 5)
        self.mean = None

    def forward(self, X):
        m = X.mean(axis=0)
        self.mean = m if self.mean is None else 0.9 * self.mean + 0.1 * m
        return (X - self.mean) * self.W

    def backward(self, dY):
        return (dY - dY.mean(axis=0)) * self.W
"""


def _load(tmp_path, body, name):
    ns = {}
    exec(compile(body, str(student(tmp_path, body, f"{name}.py")), "exec"), ns)  # noqa: S102 - the test's layer
    return ns[name]()


def test_in_process_names_the_state_and_the_header_calls_it_a_buffer(tmp_path):
    import numpy as np

    obj = _load(tmp_path, EMA, "CenterEMA")
    X = np.random.default_rng(0).standard_normal((4, 5))
    layer, info = _adapters.adapt(obj, [X])
    assert info["protocol"] == "plain" and info["unchecked"] == [] and info["buffers"] == ["mean"], info
    assert "state forward updates: mean (a buffer, as PyTorch's register_buffer" in info["text"], info["text"]
    d = diagnose_layer(layer, X)
    assert [f.code for f in d.findings if f.severity == "error"][:1] == ["forward-changes-state"], d.report()
    s = d.sentence()
    assert "each call updates state (self.mean) that the next call reads" in s, s
    assert "reset self.mean before each forward" in s and "the state it changes" not in s, s


def test_cli_names_the_state_from_the_sandbox_and_no_parameter(tmp_path):
    p = run_here("check", f"{student(tmp_path, EMA, 'ema.py')}::CenterEMA", "--input-shape", "4,5")
    out = both(p)
    assert p.returncode == 3, out
    assert "each call updates state (self.mean) that the next call reads" in out, out
    assert "reset self.mean before each forward" in out and "the state it changes" not in out, out
    assert "state forward updates: mean (a buffer, as PyTorch's register_buffer and Keras's non-trainable " \
           "weights" in out, out
    assert "is a parameter" not in out and "parameters with no gradient" not in out, out


def test_seed_weights_beside_state_keep_their_note_and_the_state_is_not_one_of_them(tmp_path):
    import numpy as np

    obj = _load(tmp_path, SEED_EMA, "ScaleEMA")
    X = np.random.default_rng(0).standard_normal((4, 5))
    _, info = _adapters.adapt(obj, [X])
    assert info["protocol"] == "seed" and info["unchecked"] == ["W"] and info["buffers"] == ["mean"], info
    assert info["text"].startswith("array attributes without gradients (W): backward(dY) -> dX only; state "
                                   "forward updates: mean"), info["text"]
