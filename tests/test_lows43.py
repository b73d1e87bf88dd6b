"""Session 43's LOW fixes (helper fixes43): each test failed before its fix."""

import numpy as np

from gradcheck import diagnose_layer


class _Linear:
    """X @ W with ``self.dW`` made in __init__; backward stores W's gradient under ``slot``."""

    def __init__(self, slot):
        self.W, self.dW, self.slot = np.random.default_rng(0).standard_normal((5, 3)), np.zeros((5, 3)), slot

    def forward(self, X):
        self.X = X
        return X @ self.W

    def backward(self, dY):
        if self.slot:
            setattr(self, self.slot, self.X.T @ dY)
        return dY @ self.W.T


def _zero_finding(slot):
    d = diagnose_layer(_Linear(slot), np.random.default_rng(1).standard_normal((6, 5)))
    assert not d.passed
    (f,) = [f for f in d.findings if f.tensor == "dW"]
    assert f.code == "zero", f.message
    return f.message


def test_a_gradient_stored_under_a_misspelt_name_is_named():
    """newuser42 F4: ``self.dw`` for ``self.dW`` was "backward never computes dW"."""
    msg = _zero_finding("dw")
    assert "backward stores self.dw (equal to W's gradient" in msg and "misspelt" in msg, msg
    assert "never computes" not in msg, msg
    assert "self.dW_ (equal" in _zero_finding("dW_")


def test_a_backward_that_never_computes_dw_is_still_said_so():
    assert "backward never computes dW" in _zero_finding(None)
    assert "backward never computes dW" in _zero_finding("grad_of_x")  # no near name: no claim


DENSE = '''import numpy as np


class Dense:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((5, 3)) * 0.5, rng.standard_normal(3) * 0.1

    def forward(self, X):
        self.X = X
        return (X @ self.W + self.b){cast}

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(axis=0)
        return dY @ self.W.T
'''


def _dtype_note(tmp_path, capsys, cast):
    from gradcheck.cli import main

    f = tmp_path / "dense.py"
    f.write_text(DENSE.format(cast=cast))
    code = main(["check", f"{f}::Dense", "--input-shape", "8,5", "--dtype", "float16"])
    return code, " ".join(capsys.readouterr().out.split())


def test_the_float16_note_says_float64_weights_promote_the_layer(tmp_path, capsys):
    """newuser42 F2: "Dense computes in float16" was said of float16 X @ float64 W, which numpy makes float64."""
    code, out = _dtype_note(tmp_path, capsys, "")
    assert code == 0 and "note: Dense's output is float64 for float16 inputs: its float64 weights promote" in out, out
    assert "Dense computes in float16" not in out and "no float16 or float32 dtype declared" in out, out
    assert "integers above 2048 that float16 cannot hold" in out and "2**24 that float32" not in out, out


def test_a_layer_keeping_its_inputs_float16_still_computes_in_float16(tmp_path, capsys):
    code, out = _dtype_note(tmp_path, capsys, ".astype(X.dtype)")
    assert code == 0 and "note: Dense computes in float16" in out, out


def test_nested_batchnorm_states_are_listed_in_layer_order_in_both_packages():
    """verify42b F15: Sequential([BN_a, Sequential([BN_b]), BN_c]) listed the running statistics a, c, b."""
    import autoprop as ap
    import manualprop as mp

    bns = [mp.BatchNorm1D(2) for _ in range(3)]
    for bn, v in zip(bns, (1.0, 2.0, 3.0)):
        bn.running_mean = np.full(2, v)
    w = mp.Sequential([bns[0], mp.Sequential([bns[1]]), bns[2]]).get_weights()
    assert [float(x[0]) for x in w[6::2]] == [1.0, 2.0, 3.0]  # before: [1, 3, 2]
    m = ap.Sequential([ap.layers.BatchNorm1D(2), ap.Sequential([ap.layers.BatchNorm1D(2)]), ap.layers.BatchNorm1D(2)])
    m(np.random.default_rng(0).standard_normal((4, 2)))
    m.set_weights(w)
    got = [m.layers[0].running_mean, m.layers[1].layers[0].running_mean, m.layers[2].running_mean]
    assert [float(g[0]) for g in got] == [1.0, 2.0, 3.0]
    assert [float(x[0]) for x in m.get_weights()[6::2]] == [1.0, 2.0, 3.0]  # before: [1, 3, 2]


def test_running_statistics_not_declared_by_a_layer_of_ones_own_are_warned_of():
    """verify42b F13: a user's centering layer's running_mean was left out of get_weights without a word."""
    import warnings

    import manualprop as mp

    class Centre(mp.layers.Layer):
        def __init__(self, n):
            super().__init__()
            self.running_mean, self.params, self.grads = np.zeros(n), {}, {}

        def forward(self, X, training=False):
            return X - self.running_mean

        def backward(self, dY):
            return dY

    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        assert len(mp.Sequential([mp.Linear(3, 3, rng=1), Centre(3)]).get_weights()) == 2
        mp.Sequential([mp.Linear(3, 3, rng=1), mp.BatchNorm1D(3)]).get_weights()
    (w,) = ws  # the BatchNorm's statistics are declared: no warning
    assert "lists no Centre.running_mean" in str(w.message) and "_state_names" in str(w.message), str(w.message)
