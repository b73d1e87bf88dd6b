"""Layers with several outputs (session 7, a new-user tester's T3 and T4): CS231n's
``lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b) -> (next_h, next_c, cache)`` with
``lstm_step_backward(dnext_h, dnext_c, cache)``, and a class-style LSTM cell ``forward(x, h_prev,
c_prev) -> (h, c)`` with ``backward(dh, dc)``. The adapter presents the k outputs as one ``Y``
(stacked when they share a shape, else flattened and concatenated) and cuts ``dY`` back into the
k upstream gradients; the header says so.

Run through the installed console script (``gradcheck``), as the tester did (a pair without its cache), or its
``gradcheck.cli.main`` in this process (``test_cli.run_here``, the student's code in its sandbox process); the
adapter's join and split are compared with HIPS autograd's vector-Jacobian products (an oracle outside our
pipeline).
"""

import json
import re

import numpy as np
import pytest
from test_cli import both as flat
from test_cli import run, run_here, student

LSTM_SHAPES = "3,2;3,4;3,4;2,16;4,16;16"

CS231N = """
import numpy as np


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b
    i, f, o, g = sigmoid(a[:, :H]), sigmoid(a[:, H:2*H]), sigmoid(a[:, 2*H:3*H]), np.tanh(a[:, 3*H:])
    next_c = f * prev_c + i * g
    next_h = o * np.tanh(next_c)
    return next_h, next_c, (x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c)


def lstm_step_backward(dnext_h, dnext_c, cache):
    x, prev_h, prev_c, Wx, Wh, i, f, o, g, c = cache
    tc = np.tanh(c)
    dc = dnext_c + dnext_h * o * (1 - tc ** 2)
    do = dnext_h * tc
    da = np.concatenate([dc * g * i * (1 - i), dc * prev_c * f * (1 - f), do * o * (1 - o),
                         dc * i * (1 - g ** 2)], axis=1)
    dprev_c = dc * f
    dWh = prev_h.T @ da
    return da @ Wx.T, da @ Wh.T, dprev_c, x.T @ da, dWh, da.sum(0)
"""

CELL = """
import numpy as np


def sig(x):
    return 1 / (1 + np.exp(-x))


class LSTMCell:
    def __init__(self, D, Hd):
        rng = np.random.default_rng(1)
        self.Wx = rng.standard_normal((D, 4 * Hd)) * 0.5
        self.Wh = rng.standard_normal((Hd, 4 * Hd)) * 0.5
        self.b = rng.standard_normal(4 * Hd) * 0.1

    def forward(self, x, h_prev, c_prev):
        H = h_prev.shape[1]
        a = x @ self.Wx + h_prev @ self.Wh + self.b
        i, f, o, g = sig(a[:, :H]), sig(a[:, H:2*H]), sig(a[:, 2*H:3*H]), np.tanh(a[:, 3*H:])
        c = f * c_prev + i * g
        h = o * np.tanh(c)
        self.cache = (x, h_prev, c_prev, i, f, o, g, c)
        return h, c

    def backward(self, dh, dc):
        x, h_prev, c_prev, i, f, o, g, c = self.cache
        tc = np.tanh(c)
        dc = dc + dh * o * (1 - tc ** 2)
        do = dh * tc
        da = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), do * o * (1 - o),
                             dc * i * (1 - g ** 2)], axis=1)
        self.dWx = x.T @ da
        self.dWh = h_prev.T @ da
        self.db = da.sum(0)
        return da @ self.Wx.T, da @ self.Wh.T, dc * f
"""

#: planted bugs: (the correct line, the buggy one, the gradients that must be named, those that must not)
CS231N_BUGS = {
    "dnext_c dropped": ("dc = dnext_c + dnext_h * o", "dc = dnext_h * o", ["dprev_c", "dWh"], []),
    "dWh from prev_c": ("dWh = prev_h.T @ da", "dWh = prev_c.T @ da", ["dWh"], ["dx", "dprev_c", "dWx", "db"]),
    "dprev_c times i": ("dprev_c = dc * f", "dprev_c = dc * i", ["dprev_c"], ["dx", "dprev_h", "dWx", "dWh", "db"]),
}


def lstm(tmp_path, src=CS231N, name="cs.py"):
    return run_here("check", f"{student(tmp_path, src, name)}::lstm_step", "--input-shape", LSTM_SHAPES)


def cell(tmp_path, src=CELL):
    return run_here("check", f"{student(tmp_path, src, 'rnn.py')}::LSTMCell", "--input-shape", "3,2;3,4;3,4",
               "--init", '{"D": 2, "Hd": 4}')


def failing(p):
    """The tensors named on the ``FAIL: ...: gradient mismatch in ...`` line."""
    line = next(ln for ln in p.stdout.splitlines() if "gradient mismatch in" in ln)
    return [t.strip(" .") for t in line.split("gradient mismatch in", 1)[1].split(",")]


# --------------------------------------------------------------------------- the CS231n pair


def test_cs231n_lstm_step_passes_and_header_says_how_the_outputs_are_checked(tmp_path):
    p = lstm(tmp_path)
    assert p.returncode == 0, flat(p)
    assert ("protocol: CS231n function pair (lstm_step_forward/lstm_step_backward), every array argument is an "
            "input; 2 outputs (next_h (3, 4), next_c (3, 4)) checked as one stacked Y (2, 3, 4) (Y[j] is output "
            "j, in this order); backward gets dY[0], dY[1]") in flat(p)
    assert "PASS: lstm_step: every gradient (dx, dprev_h, dprev_c, dWx, dWh, db) match" in flat(p)


@pytest.mark.parametrize("bug", list(CS231N_BUGS))
def test_cs231n_lstm_step_planted_bug_fails_naming_the_gradient(tmp_path, bug):
    good, bad, named, clean = CS231N_BUGS[bug]
    src = CS231N.replace(good, bad)
    assert src != CS231N
    p = lstm(tmp_path, src)
    assert p.returncode == 1, flat(p)
    got = failing(p)
    assert set(named) <= set(got) and not set(clean) & set(got), (got, flat(p))
    assert "the checked code failed" not in flat(p)


def test_full_mode_json_records_every_entry_of_the_planted_dprev_c_bug(tmp_path):
    out = tmp_path / "r.json"
    src = CS231N.replace(*CS231N_BUGS["dprev_c times i"][:2])
    p = run_here("check", f"{student(tmp_path, src, 'cs.py')}::lstm_step", "--input-shape", LSTM_SHAPES,
            "--mode", "full", "--json", out)
    assert p.returncode == 1, flat(p)
    data = json.loads(out.read_text())
    assert "2 outputs (next_h (3, 4), next_c (3, 4))" in data["protocol"]["text"]
    assert failing(p) == ["dprev_c"]


def test_a_pair_whose_backward_takes_one_upstream_gradient_is_a_usage_error(tmp_path):
    """Three results for a backward(dout, cache): gradcheck cannot read them; that is no failure of the
    code (exit 2, not 3), and the message has no doubled period."""
    src = CS231N.replace("def lstm_step_backward(dnext_h, dnext_c, cache):",
                         "def lstm_step_backward(dnext_h, cache):\n    dnext_c = 0 * dnext_h")
    p = lstm(tmp_path, src)
    assert p.returncode == 2, flat(p)
    text = flat(p)
    assert "usage error (exit 2)" in text and "the checked code failed" not in text
    assert not re.search(r"[^.]\.\.(?!\.)", text), text  # a doubled period (an ellipsis is fine)
    assert ("gradcheck cannot read what lstm_step_forward returned: a tuple of 3 (ndarray (3, 4), ndarray (3, 4), "
            "tuple), with lstm_step_backward(dnext_h, cache)") in text
    assert "(out_1, ..., out_k, cache) when the backward takes (dout_1, ..., dout_k, cache)" in text


def test_a_pair_forward_that_returns_no_cache_is_a_usage_error_at_load(tmp_path):
    src = """
    import numpy as np

    def relu_forward(x):
        return np.maximum(x, 0)

    def relu_backward(dout, cache):
        return dout * (cache > 0)
    """
    p = run("check", f"{student(tmp_path, src, 'relu.py')}::relu", "--input-shape", "4,5")
    assert p.returncode == 2, flat(p)
    assert ("usage error (exit 2): relu.py::relu: gradcheck cannot read what relu_forward returned: ndarray "
            "(4, 5), with relu_backward(dout, cache). It reads a CS231n forward's result as (out, cache)") in flat(p)


def test_a_pair_whose_outputs_differ_in_shape_is_checked_as_one_flat_y(tmp_path):
    """y = x / |x| per row and n = |x|: (4, 3) and (4,), flattened and concatenated (16,)."""
    src = """
    import numpy as np

    def unit_forward(x):
        n = np.sqrt((x * x).sum(1))
        y = x / n[:, None]
        return y, n, (x, n)

    def unit_backward(dy, dn, cache):
        x, n = cache
        y = x / n[:, None]
        dx = (dy - y * (dy * y).sum(1, keepdims=True)) / n[:, None] + dn[:, None] * y
        return dx
    """
    f = student(tmp_path, src, "unit.py")
    p = run_here("check", f"{f}::unit", "--input-shape", "4,3")
    assert p.returncode == 0, flat(p)
    assert ("2 outputs (y (4, 3), n (4,)) checked as one Y (16,), each flattened and concatenated in this "
            "order; backward gets dY cut back into their shapes") in flat(p)
    wrong = src.replace("+ dn[:, None] * y", "+ dn[:, None] * x")  # dn's path: x instead of x / |x|
    p = run_here("check", f"{student(tmp_path, wrong, 'unit2.py')}::unit", "--input-shape", "4,3")
    assert p.returncode == 1 and failing(p) == ["dx"], flat(p)  # one input: d + its own name (tester17 #9)


# --------------------------------------------------------------------------- the class-style cell


def test_class_lstm_cell_passes_with_its_weight_gradients_checked(tmp_path):
    p = cell(tmp_path)
    assert p.returncode == 0, flat(p)
    assert ("protocol: attribute style (Wx/dWx, Wh/dWh, b/db); 2 outputs (h (3, 4), c (3, 4)) checked as one "
            "stacked Y (2, 3, 4)") in flat(p)
    assert "backward computes no" not in flat(p)
    assert "PASS: LSTMCell: every gradient (dx, dh_prev, dc_prev, dWx, dWh, db) match" in flat(p)


def test_class_lstm_cell_that_drops_the_incoming_dc_fails(tmp_path):
    src = CELL.replace("dc = dc + dh * o", "dc = dh * o")
    assert src != CELL
    p = cell(tmp_path, src)
    assert p.returncode == 1, flat(p)
    assert {"dc_prev", "dWx", "dWh", "db"} <= set(failing(p)), flat(p)


def test_class_lstm_cell_with_a_wrong_dWh_fails_on_dWh_alone(tmp_path):
    src = CELL.replace("self.dWh = h_prev.T @ da", "self.dWh = c_prev.T @ da")
    assert src != CELL
    p = cell(tmp_path, src)
    assert p.returncode == 1 and failing(p) == ["dWh"], flat(p)


def test_class_lstm_cell_on_the_tape_agrees_with_its_backward_and_central_differences(tmp_path):
    """--tape: the student's own forward (two outputs) recorded by autoprop, a third column."""
    p = run_here("check", f"{student(tmp_path, CELL, 'rnn.py')}::LSTMCell", "--input-shape", "3,2;3,4;3,4",
            "--init", '{"D": 2, "Hd": 4}', "--tape", "--mode", "full")
    assert p.returncode == 0, flat(p)
    assert "PASS: LSTMCell: every gradient (dx, dh_prev, dc_prev, dWx, dWh, db) and the forward output match" in flat(p)
    rows = [ln.split() for ln in p.stdout.splitlines() if ln.split()[:1] in (["dWh"], ["LSTMCell"])]
    assert any(r[-1] == "ok" and "(2, 3, 4)" in " ".join(r) for r in rows), p.stdout  # Y (fwd): the stacked outputs


def test_class_backward_taking_star_args_is_read_as_several_outputs(tmp_path):
    src = CELL.replace("def backward(self, dh, dc):", "def backward(self, *grads):\n        dh, dc = grads")
    assert src != CELL
    p = cell(tmp_path, src)
    assert p.returncode == 0, flat(p)
    assert "2 outputs (h (3, 4), c (3, 4))" in flat(p)


def test_class_returning_out_and_cache_by_mistake_keeps_todays_message(tmp_path):
    """backward(dY) takes one gradient: (out, X) is a mistake, not two outputs."""
    src = """
    import numpy as np

    class Scale:
        def __init__(self):
            self.W = np.random.default_rng(0).standard_normal(4) + 2.0

        def forward(self, X):
            self.X = X
            return X * self.W, X

        def backward(self, dY):
            self.dW = (dY * self.X).sum(0)
            return dY * self.W
    """
    p = run_here("check", f"{student(tmp_path, src, 'scale.py')}::Scale", "--input-shape", "3,4")
    assert p.returncode == 1, flat(p)
    assert ("gradcheck: wrong result (exit 1): Scale.forward(X) with X of shape (3, 4) gave Y as a tuple; "
            "expected Y alone, whose gradient backward(dY) takes") in flat(p)
    assert "the error is in forward" not in flat(p)  # L7: the protocol, not the input shape
    assert "outputs (" not in flat(p)


def test_no_claim_about_a_backward_that_raised_on_the_probe(tmp_path):
    """T4's false note: "backward computes no dW" is said only when backward ran and set none."""
    src = """
    import numpy as np

    class Broken:
        def __init__(self):
            self.W = np.ones(4) * 2.0

        def forward(self, X):
            self.X = X
            return X * self.W

        def backward(self, dY):
            self.dW = (dY * self.X).sum(0)
            return dY * undefined_name  # noqa: F821
    """
    p = run_here("check", f"{student(tmp_path, src, 'broken.py')}::Broken", "--input-shape", "3,4")
    assert p.returncode == 3, flat(p)
    assert "backward computes no" not in flat(p)
    assert "backward raised when gradcheck called it after a probe forward, so it could not see whether " \
           "backward sets dW" in flat(p)
    assert "raised NameError: name 'undefined_name' is not defined" in flat(p)


# --------------------------------------------------------------------------- against HIPS autograd


def _namespace(src):
    import textwrap
    ns = {}
    exec(compile(textwrap.dedent(src), "<student>", "exec"), ns)  # noqa: S102 - the test's own source
    return ns


def _autograd_lstm():
    """The LSTM step in autograd.numpy, the two outputs of one function."""
    anp = pytest.importorskip("autograd.numpy")

    def step(x, prev_h, prev_c, Wx, Wh, b):
        H = prev_h.shape[1]
        a = anp.dot(x, Wx) + anp.dot(prev_h, Wh) + b
        s = 1 / (1 + anp.exp(-a[:, :3 * H]))
        i, f, o, g = s[:, :H], s[:, H:2 * H], s[:, 2 * H:], anp.tanh(a[:, 3 * H:])
        c = f * prev_c + i * g
        return o * anp.tanh(c), c
    return step


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in [(3, 2), (3, 4), (3, 4), (2, 16), (4, 16), (16,)]]


def test_adapter_join_and_split_agree_with_autograd_vjps():
    """The pair and the class through the adapter (forward -> stacked Y, backward(dY)): Y[0], Y[1] are
    autograd's next_h, next_c, and the gradients are autograd's VJPs with (dY[0], dY[1])."""
    from autograd import grad

    from gradcheck import _adapters as AD

    step = _autograd_lstm()
    xs = _inputs()
    dY = np.random.default_rng(5).standard_normal((2, 3, 4))
    want_y = step(*xs)

    def loss(*args):  # L = sum(next_h * dY[0]) + sum(next_c * dY[1]): its gradients are the VJPs
        h, c = step(*args)
        return (h * dY[0]).sum() + (c * dY[1]).sum()
    want = [grad(loss, k)(*xs) for k in range(6)]
    ns = _namespace(CS231N)
    layer = AD.pair(ns["lstm_step_forward"], ns["lstm_step_backward"], {})
    layer, info = AD.adapt(layer, [x.copy() for x in xs])
    assert "2 outputs (out0 (3, 4), out1 (3, 4))" in info["text"]  # exec'd text: no source to name them
    Y = layer.forward(*xs)
    np.testing.assert_allclose(Y, np.stack(want_y), rtol=1e-12, atol=1e-14)
    for got, w in zip(layer.backward(dY), want, strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-10, atol=1e-12)

    cell_ns = _namespace(CELL)
    obj = cell_ns["LSTMCell"](2, 4)
    obj.Wx, obj.Wh, obj.b = xs[3].copy(), xs[4].copy(), xs[5].copy()
    layer, info = AD.adapt(obj, [x.copy() for x in xs[:3]])
    assert info["protocol"] == "attribute" and "2 outputs (out0 (3, 4), out1 (3, 4))" in info["text"]
    np.testing.assert_allclose(layer.forward(*xs[:3]), np.stack(want_y), rtol=1e-12, atol=1e-14)
    for got, w in zip(layer.backward(dY), want[:3], strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-10, atol=1e-12)
    for k, w in zip(("Wx", "Wh", "b"), want[3:]):
        np.testing.assert_allclose(layer.grads[k], w, rtol=1e-10, atol=1e-12)


def test_flat_split_hands_each_output_its_own_gradient():
    """Different shapes: Y is out0's entries then out1's; split gives views of dY in those shapes."""
    from gradcheck import _adapters as AD

    outs = AD.Outputs(["y", "n"], [np.zeros((4, 3)), np.zeros(4)])
    Y = outs.join([np.arange(12.0).reshape(4, 3), np.arange(12.0, 16.0)])
    np.testing.assert_array_equal(Y, np.arange(16.0))
    dY = np.arange(100.0, 116.0)
    dy, dn = outs.split(dY)
    np.testing.assert_array_equal(dy, np.arange(100.0, 112.0).reshape(4, 3))
    np.testing.assert_array_equal(dn, np.arange(112.0, 116.0))
    assert np.shares_memory(dy, dY) and np.shares_memory(dn, dY)
    with pytest.raises(AD.AdapterError, match=r"dY has shape \(15,\)"):
        outs.split(np.zeros(15))


def test_each_copy_of_a_class_layer_splits_dY_by_its_own_last_forward():
    """The checker deep-copies layers: a copy's forward on another batch size must not change how the
    original cuts its dY (the outputs' shapes are kept per object, not per class)."""
    import copy

    from gradcheck import _adapters as AD

    ns = _namespace('''
import numpy as np

class Unit:
    def forward(self, x):
        self.n = np.sqrt((x * x).sum(1))
        self.y = x / self.n[:, None]
        return self.y, self.n

    def backward(self, dy, dn):
        y, n = self.y, self.n
        return (dy - y * (dy * y).sum(1, keepdims=True)) / n[:, None] + dn[:, None] * y
''')
    rng = np.random.default_rng(0)
    layer, info = AD.adapt(ns["Unit"](), [rng.standard_normal((3, 2))])
    assert "2 outputs (out0 (3, 2), out1 (3,)) checked as one Y (9,)" in info["text"]
    other = copy.deepcopy(layer)
    x3, x5 = rng.standard_normal((3, 2)), rng.standard_normal((5, 2))
    assert layer.forward(x3).shape == (9,)
    assert other.forward(x5).shape == (15,)
    dY = rng.standard_normal(9)
    n = np.sqrt((x3 * x3).sum(1))
    y = x3 / n[:, None]
    dy, dn = dY[:6].reshape(3, 2), dY[6:]
    want = (dy - y * (dy * y).sum(1, keepdims=True)) / n[:, None] + dn[:, None] * y
    np.testing.assert_allclose(layer.backward(dY), want, rtol=1e-13)
