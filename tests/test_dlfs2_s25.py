"""tester25s: Deep Learning from Scratch 2's layers (``tests/fixtures/dlfs2/layers.py``, the book's code verbatim)
and one planted bug each, checked by ``gradcheck check``.

* H1: ``TimeSoftmaxWithLoss.forward`` begins ``if ts.ndim == 3: ts = ts.argmax(axis=2)`` (its one-hot branch); that
  rebinding, run on one path only, was read as rebinding ``ts`` always, so ``ts != self.ignore_label`` compared no
  target, no label was set to -1, and a backward forgetting the mask PASSED.
* H2: ``self.grads[0] = dW`` (the ``[...]`` forgotten) PASSED: the gradient was read from the new array, while a
  model that collected ``layer.grads`` keeps the old one and never moves its weights.
"""

import textwrap
from pathlib import Path

import numpy as np
import pytest
from test_cli import both, run_here

from gradcheck._switch_reach import compared_constants

BOOK = Path(__file__).resolve().parent / "fixtures" / "dlfs2" / "layers.py"
SOURCE = BOOK.read_text(encoding="utf-8")


def _edited(tmp_path, *edits, name="layers.py"):
    """The book's file with each ``(old, new)`` made once (each must occur exactly once)."""
    text = SOURCE
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return f


def _book():
    ns = {}
    exec(compile(SOURCE, str(BOOK), "exec"), ns)  # noqa: S102 - the fixture, the book's code
    return ns


# --- H1: a name rebound on one path keeps what it held on the others ---------------------------------------------

COPY = ("        dx = ys\n", "        dx = ys.copy()\n")  # tester25s's b2_tswl_copy: backward no longer writes ys
NOMASK = ("        dx *= mask[:, np.newaxis]  # ignore_labelに該当するデータは勾配を0にする\n", "")
TSWL = ["--loss", "--input-shape", "2,3,5", "--targets", "labels:5"]


def test_the_one_hot_branch_leaves_the_targets_compared_with_the_ignore_label():
    book = _book()
    loss = book["TimeSoftmaxWithLoss"]()
    assert compared_constants(loss, "ts") == [-1.0]  # was []: ts read as ts.argmax(axis=2) always
    assert compared_constants(book["SoftmaxWithLoss"](), "t") == []  # compares self.t.size, not its values


def test_a_masked_time_loss_with_a_one_hot_branch_is_checked_at_the_ignore_label(tmp_path):
    f = _edited(tmp_path, COPY, NOMASK)
    bad = run_here("check", f"{f}::TimeSoftmaxWithLoss", *TSWL)
    text = both(bad)
    assert bad.returncode == 1, text
    assert "forward compares ts with -1, which the drawn ts never hold" in text, text
    assert "whose target is -1, where the loss's gradient is 0" in text, text
    good = run_here("check", f"{_edited(tmp_path, COPY, name='good.py')}::TimeSoftmaxWithLoss", *TSWL)
    assert good.returncode == 0 and "PASS: TimeSoftmaxWithLoss" in both(good), both(good)


# --- H2: self.grads[0] = dW rebinds what a model collected ------------------------------------------------------

W = '{"W": [[0.3, -1.2, 0.5], [1.1, 0.4, -0.7], [-0.2, 0.9, 1.3], [0.6, -0.5, 0.1], [-1.0, 0.2, 0.8]]}'
REBIND = "backward replaced grads[0] with a new array instead of writing into it; models that collected layer.grads " \
    "keep the old one: write `self.grads[0][...] = dW`, not `self.grads[0] = dW`"


def test_a_rebound_list_gradient_fails_naming_the_rebind(tmp_path):
    f = _edited(tmp_path, ("        dW = np.dot(self.x.T, dout)\n        self.grads[0][...] = dW\n",
                           "        dW = np.dot(self.x.T, dout)\n        self.grads[0] = dW\n"))
    bad = run_here("check", f"{f}::MatMul", "--input-shape", "4,5", "--init", W)
    assert bad.returncode == 1 and f"FAIL: MatMul: {REBIND}." in both(bad), both(bad)
    good = run_here("check", f"{BOOK}::MatMul", "--input-shape", "4,5", "--init", W)
    assert good.returncode == 0 and "PASS: MatMul" in both(good) and "replaced" not in both(good), both(good)


def test_a_model_whose_layer_rebinds_its_gradients_is_told_why_they_are_zero(tmp_path):
    old = "        self.grads[0][...] = dW\n        self.grads[1][...] = db\n"
    f = _edited(tmp_path, (old, "        self.grads[0] = dW\n        self.grads[1] = db\n"))
    init = '{"input_size": 4, "hidden_size": 5, "output_size": 3}'
    bad = run_here("check", f"{f}::TwoLayerNet", "--input-shape", "6,4", "--init", init, "--targets", "labels:3")
    text = both(bad)
    assert bad.returncode == 1, text
    assert ("diagnosis: backward replaced layers.0.grads[0], layers.0.grads[1], layers.2.grads[0] and "
            "layers.2.grads[1] with new arrays instead of writing into them; models that collected layer.grads keep "
            "the old ones (this model's grads[0], grads[1], grads[2] and grads[3], never written: its optimizer steps "
            "with zeros)") in text, text
    assert "backward never computes them" not in text, text


# --- M3: the book's time layers: only params[i] are parameters, stateful is the layer as built -------------------

RNN_INIT = ('{"Wx": [[-0.2, 0.13, 0.3, -0.49], [0.38, 0.13, 0.39, 0.14], [0.58, -0.47, 0.89, 0.6]], '
            '"Wh": [[0.45, 0.38, -0.01, 0.33], [-0.33, -0.91, 0.84, 0.24], [-1.03, -0.53, -0.31, 0.17], '
            '[0.66, 0.15, -0.22, 0.23]], "b": [0.2, -0.28, 0.29, 0.02]}')


def _f64(tmp_path, *edits, name="layers64.py"):
    """The book's file in float64 (its ``dtype='f'`` made ``'d'``, as tester25s's fx64), with ``edits``."""
    f = _edited(tmp_path, *edits, name=name)
    f.write_text(f.read_text(encoding="utf-8").replace("dtype='f'", "dtype='d'"), encoding="utf-8")
    return f


def _time_rnn(f, *more):
    return run_here("check", f"{f}::TimeRNN", "--input-shape", "2,3,3", "--init", RNN_INIT, *more)


def test_the_books_time_rnn_passes_with_stateful_as_built(tmp_path):
    p = _time_rnn(_f64(tmp_path))
    text = both(p)
    assert p.returncode == 0 and "PASS: TimeRNN: every gradient (dX, dparams[0], dparams[1], dparams[2])" in text, text
    assert "WARNING: forward branches on self.stateful, the layer's configuration as built" in text, text
    assert "h/dh" not in text and "cache[" not in text and "required positional argument" not in text, text


def test_a_stateful_time_rnn_pairs_no_state_or_cache_and_is_not_checked_for_its_carried_h(tmp_path):
    init = RNN_INIT[:-1] + ', "stateful": true}'
    p = run_here("check", f"{_f64(tmp_path)}::TimeRNN", "--input-shape", "2,3,3", "--init", init)
    text = both(p)
    assert p.returncode == 3 and "NOT CHECKED: TimeRNN: forward changes the layer's state" in text, text
    assert "each call updates state (self.h) that the next call reads" in text, text
    assert "h/dh" not in text and "shape of dh" not in text and "dlayers.0.cache" not in text, text
    assert "required positional argument" not in text, text


def test_a_time_rnn_bug_is_named_not_gradchecks_call_of_its_cell(tmp_path):
    f = _f64(tmp_path, ("            dx, dh = layer.backward(dhs[:, t, :] + dh)\n",
                        "            dx, dh = layer.backward(dhs[:, t, :])\n"))
    p = _time_rnn(f)
    text = both(p)
    assert p.returncode == 1 and "FAIL: TimeRNN: gradient mismatch in dX" in text, text
    assert "backward does not add the gradient that comes back from the later steps" in text, text
    assert "required positional argument" not in text and "first layer whose own check fails" not in text, text


def test_forward_takes_reads_the_signature():
    from gradcheck._adapters import forward_takes

    book = _book()
    rnn = book["RNN"](*(np.zeros(s) for s in ((3, 4), (4, 4), (4,))))
    assert not forward_takes(rnn, 1) and forward_takes(rnn, 2) and forward_takes(book["Sigmoid"](), 1)


def test_a_time_rnn_built_not_stateful_that_carries_h_fails(tmp_path):
    old = "        if not self.stateful or self.h is None:\n            self.h = np.zeros((N, H), dtype='f')\n\n" \
        "        for t in range(T):\n            layer = RNN(*self.params)"
    f = _f64(tmp_path, (old, old.replace("if not self.stateful", "if self.stateful")))
    p = _time_rnn(f)
    text = both(p)
    assert p.returncode == 1 and "FAIL: TimeRNN: forward changes the layer's state" in text, text
    assert "the layer is built with self.stateful = False: each forward must start from a fresh state" in text, text


EMB = ["--input-shape", "6,4", "--indices", "3", "--init",
       '{"W": [[-1.14, -1.07, -0.76], [0.77, -1.04, -1.03], [-0.39, 1.39, -0.92]]}']


def test_the_books_float32_time_embedding_is_not_blamed_on_its_cells(tmp_path):
    """No cell is blamed for float ids. Built with the book's float32 weights it PASSes; given float64 weights its
    float32 output is a downcast (session 29; sessions 26-28 checked it on a float64 copy), FAILed naming its buffer,
    not its Embedding cells."""
    from test_float32_code_s26 import book_built

    (tmp_path / "layers.py").write_text(SOURCE, encoding="utf-8")
    p = run_here("check", f"{book_built(tmp_path / 'layers.py', 'TimeEmbedding', 'W')}::TimeEmbedding", *EMB)
    text = both(p)
    assert p.returncode == 0 and "PASS: TimeEmbedding" in text, text
    assert "first layer whose own check fails" not in text and "IndexError" not in text, text
    p = run_here("check", f"{BOOK}::TimeEmbedding", *EMB)
    text = " ".join(both(p).split())
    assert p.returncode == 1 and "FAIL: TimeEmbedding: wrong dtype of Y." in text, text
    assert "its source makes the lower precision at layers.py line 484: out = np.empty((N, T, D), dtype='f')" in text
    assert "first layer whose own check fails" not in text and "IndexError" not in text, text
    good = run_here("check", f"{_f64(tmp_path)}::TimeEmbedding", *EMB)
    assert good.returncode == 0 and "PASS: TimeEmbedding" in both(good), both(good)


# --- review26g H1: every way a name keeps on some path what it held keeps the constants it may hold ---------------

#: A masked loss's target handling before ``ts != self.ignore_label``, each form with the constants right for it:
#: [-1.0] where ts may still hold the targets there, [] where every path rebinds it to something else.
TS_FORMS = {
    "if": ("if ts.ndim == 3:\n    ts = ts.argmax(axis=2)\n", [-1.0]),
    "conditional expression": ("ts = ts.argmax(axis=2) if ts.ndim == 3 else ts\n", [-1.0]),
    "conditional, both rebinding": ("ts = ts.argmax(axis=2) if ts.ndim == 3 else ts.argmin(axis=2)\n", []),
    "if/else, both assigning": (
        "if ts.ndim == 3:\n    ts = ts.argmax(axis=2)\nelse:\n    ts = ts.astype(np.int64)\n", [-1.0]),
    "if/else, both rebinding": (
        "if ts.ndim == 3:\n    ts = ts.argmax(axis=2)\nelse:\n    ts = ts.argmin(axis=1)\n", []),
    "if/elif/else, one keeping": (
        "if ts.ndim == 3:\n    ts = ts.argmax(axis=2)\nelif ts.ndim == 1:\n    ts = ts.reshape(1, -1)\n"
        "else:\n    ts = np.argmin(ts)\n", [-1.0]),
    "if/elif, no else": (
        "if ts.ndim == 3:\n    ts = ts.argmax(axis=2)\nelif ts.ndim == 1:\n    ts = np.argmin(ts)\n", [-1.0]),
    "or": ("ts = self.labels or ts\n", [-1.0]),
    "and/or": ("ts = ts.ndim == 3 and ts.argmax(axis=2) or ts\n", [-1.0]),
    "walrus on some paths": ("if ts.ndim == 3 and (ts := ts.argmax(axis=2)) is None:\n    pass\n", [-1.0]),
    "walrus always": ("if (ts := ts.argmax(axis=2)) is None:\n    pass\n", []),
    "for": ("for _ in range(ts.ndim - 2):\n    ts = ts.argmax(axis=-1)\n", [-1.0]),
    "for/else after a break": (
        "for d in range(3):\n    if d == ts.ndim:\n        break\nelse:\n    ts = ts.argmax(axis=2)\n", [-1.0]),
    "for/else, no break": ("for d in range(ts.ndim):\n    pass\nelse:\n    ts = ts.argmax(axis=2)\n", []),
    "for/else, a break in an inner loop's else": (
        "for d in range(3):\n    if d:\n        for e in range(2):\n            pass\n        else:\n            break\n"
        "else:\n    ts = ts.argmax(axis=2)\n", [-1.0]),
    "while/else after a break": (
        "while ts.ndim > 5:\n    break\nelse:\n    ts = ts.argmax(axis=2)\n", [-1.0]),
    "with": ("with contextlib.suppress(ValueError):\n    ts = ts.argmax(axis=2)\n", [-1.0]),
    "try body": ("try:\n    ts = ts.argmax(axis=2)\nexcept ValueError:\n    pass\n", [-1.0]),
    "except handler": ("try:\n    pass\nexcept ValueError:\n    ts = ts.argmax(axis=2)\n", [-1.0]),
    "match case": ("match ts.ndim:\n    case 3:\n        ts = ts.argmax(axis=2)\n", [-1.0]),
    "match, every case rebinding": (
        "match ts.ndim:\n    case 3:\n        ts = ts.argmax(axis=2)\n    case _:\n        ts = np.argmin(ts)\n", []),
    "nested function's own ts": (
        "def onehot(ts):\n    ts = ts.argmax(axis=2)\n    return ts\nif ts.ndim == 3:\n    ts = onehot(ts)\n", [-1.0]),
    "nested function's nonlocal ts": (
        "def onehot():\n    nonlocal ts\n    ts = ts.argmax(axis=2)\nif ts.ndim == 3:\n    onehot()\n", [-1.0]),
    "nested function's nonlocal ts moved": (
        "def shift():\n    nonlocal ts\n    ts = ts - 1\nif ts.min() > 0:\n    shift()\n", [-1.0, 0.0]),
    "nested function moving its own ts": ("def shift(ts):\n    ts = ts - 1\n    return ts\n", [-1.0]),
    "nested function comparing its ts": (
        "def masked(ts):\n    return ts != self.ignore_label\nm = masked(ts)\nts = ts.argmax(axis=2)\n", [-1.0]),
    "rebound always": ("ts = ts.argmax(axis=2)\n", []),
}
TS_TEMPLATE = """
import contextlib
import numpy as np


class Loss:
    def __init__(self):
        self.ignore_label, self.labels = -1, None

    def forward(self, xs, ts):
{branch}        mask = (ts != self.ignore_label)
        return float(np.sum(xs) * mask.sum())
"""


@pytest.mark.parametrize("form", list(TS_FORMS))
def test_a_target_kept_on_some_path_is_compared_with_the_ignore_label(tmp_path, form):
    """review26g H1: ``ts = ts.argmax(axis=2) if ts.ndim == 3 else ts`` and an if/else assigning ts in both branches
    gave [] (the conditional expression's value was read as no function of ts; the first branch dropped ts before the
    second was read), so a TimeSoftmaxWithLoss forgetting its mask PASSED. Each branch is read from what the names
    held before it, and after it a name holds what any path left in it."""
    branch, want = TS_FORMS[form]
    ns = _loaded(tmp_path, TS_TEMPLATE.format(branch=textwrap.indent(branch, " " * 8)))
    assert compared_constants(ns["Loss"](), "ts") == want


def _loaded(tmp_path, src, name="forms.py"):
    f = tmp_path / name
    f.write_text(src, encoding="utf-8")
    ns = {}
    exec(compile(src, str(f), "exec"), ns)  # noqa: S102 - the test's own source
    return ns


def test_a_branch_reads_the_names_as_they_were_before_the_if():
    """Each branch of an if/else starts from the names before it: the else branch's ``x - 1`` is X - 1, not the
    first branch's X + 1 moved again (which would give a constant 2 the code never compares X with)."""

    class Shifted:
        def forward(self, X):
            if X.ndim == 2:
                X = X + 1
            else:
                X = X - 1
            return np.maximum(X, 1)

    class Either:
        def forward(self, X):
            h = X * 2 if X.ndim == 2 else X - 3
            return np.minimum(h, 4)

    assert compared_constants(Shifted()) == [0.0, 2.0]
    assert compared_constants(Either()) == [2.0, 7.0]


TSWL_FORMS = """
import numpy as np


def softmax(x):
    x = x - x.max(axis=1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=1, keepdims=True)


class _Base:
    def __init__(self):
        self.params, self.grads = [], []
        self.cache = None
        self.ignore_label = -1

    def _rest(self, xs, ts):
        N, T, V = xs.shape
        mask = (ts != self.ignore_label)
        xs = xs.reshape(N * T, V)
        ts = ts.reshape(N * T)
        mask = mask.reshape(N * T)
        ys = softmax(xs)
        ls = np.log(ys[np.arange(N * T), ts])
        ls *= mask
        self.cache = (ts, ys, mask, (N, T, V))
        return -np.sum(ls) / mask.sum()

    def backward(self, dout=1):
        ts, ys, mask, (N, T, V) = self.cache
        dx = ys.copy()
        dx[np.arange(N * T), ts] -= 1
        dx *= dout
        dx /= mask.sum()
        dx *= MASKED * mask[:, np.newaxis] + (1 - MASKED)
        return dx.reshape((N, T, V))


class IfExp(_Base):
    def forward(self, xs, ts):
        ts = ts.argmax(axis=2) if ts.ndim == 3 else ts
        mask = (ts != self.ignore_label)
        return self._rest(xs, ts)


class IfElse(_Base):
    def forward(self, xs, ts):
        if ts.ndim == 3:
            ts = ts.argmax(axis=2)
        else:
            ts = ts.astype(np.int64)
        mask = (ts != self.ignore_label)
        return self._rest(xs, ts)
"""


@pytest.mark.parametrize("cls", ["IfExp", "IfElse"])
def test_a_time_loss_forgetting_its_mask_fails_whatever_its_one_hot_branch(tmp_path, cls):
    """review26g H1 end to end: the two forms PASSED without the mask (backward 0.2417 from central differences and
    from HIPS autograd on the -1 rows); with the mask they PASS."""
    for masked, code in ((0, 1), (1, 0)):
        f = tmp_path / f"tswl{masked}.py"
        f.write_text(TSWL_FORMS + f"\nMASKED = {masked}\n", encoding="utf-8")
        p = run_here("check", f"{f}::{cls}", *TSWL)
        assert p.returncode == code, both(p)
        if not masked:
            assert "forward compares ts with -1, which the drawn ts never hold" in both(p), both(p)


# --- review26g M1: a list-style layer's weight kept outside params, its gradient stored by name -----------------

BIAS_OUTSIDE = """
import numpy as np

W0 = np.array([[0.3, -1.2, 0.5], [1.1, 0.4, -0.7], [-0.2, 0.9, 1.3], [0.6, -0.5, 0.1], [-1.0, 0.2, 0.8]])


class BiasOutside:
    def __init__(self):
        self.params, self.grads = [W0.copy()], [np.zeros_like(W0)]
        self.b, self.db = np.array([0.1, -0.2, 0.3]), np.zeros(3)

    def forward(self, x):
        self.x = x
        return x @ self.params[0] + self.b

    def backward(self, dout):
        self.grads[0][...] = self.x.T @ dout
        self.db = dout.SUM(axis=0)
        return dout @ self.params[0].T
"""
OUTSIDE = "WARNING: forward uses b, which is not in self.params: a model that collects layer.params and"


def test_a_bias_kept_outside_params_is_checked_by_name_and_named_as_outside(tmp_path):
    """review26g M1: at 360d4c8 the wrong db FAILed; session 25's list rule (only params[i] are parameters) made both
    NOT CHECKED with "backward sets no gradient attribute for it (then set self.db)", which backward does."""
    for how, code, verdict in (("sum", 0, "PASS: BiasOutside: every gradient (dX, dparams[0], db)"),
                               ("mean", 1, "FAIL: BiasOutside: gradient mismatch in db.")):
        f = tmp_path / f"outside_{how}.py"
        f.write_text(BIAS_OUTSIDE.replace("SUM", how), encoding="utf-8")
        p = run_here("check", f"{f}::BiasOutside", "--input-shape", "4,5")
        text = both(p)
        assert p.returncode == code and verdict in text, text
        assert OUTSIDE in text and "append self.b to self.params and self.db to self.grads" in text, text
        assert "sets no gradient attribute" not in text and "NOT CHECKED" not in text, text
        if how == "mean":
            assert "db is the mean over the batch, not the sum" in text, text


MIXED = """
import numpy as np


class Mixed:
    def __init__(self):
        self.W = np.array([[0.3, -1.2, 0.5], [1.1, 0.4, -0.7], [-0.2, 0.9, 1.3], [0.6, -0.5, 0.1], [-1.0, 0.2, 0.8]])
        self.b = np.array([0.1, -0.2, 0.3])
        self.params = [self.W, self.b]
        self.grads = [np.zeros_like(self.W), np.zeros_like(self.b)]

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b

    def backward(self, dout):
        self.dW, self.db = self.x.T @ dout, dout.sum(axis=0)
        self.grads[0][...] = self.dW
        self.grads[1][...] = self.db
        return dout @ self.W.T
"""


def test_book_ones_names_of_book_twos_params_are_no_weights_outside_params(tmp_path):
    """self.W is params[0], the same array (review26g's list_alias Mixed): checked once as params[0], no WARNING;
    reading it as a weight outside params checked dW and dparams[0] each against the summed gradient (FAIL 0.33)."""
    f = tmp_path / "mixed.py"
    f.write_text(MIXED, encoding="utf-8")
    p = run_here("check", f"{f}::Mixed", "--input-shape", "4,5")
    text = both(p)
    assert p.returncode == 0 and "PASS: Mixed: every gradient (dX, dparams[0], dparams[1])" in text, text
    assert "not in self.params" not in text, text


def test_the_books_dtype_f_is_told_only_to_code_that_uses_it(tmp_path, monkeypatch):
    """Kills dtype_f_always: a float32 result of code without dtype='f' is not told of Deep Learning from Scratch 2."""
    import importlib

    import manualprop as mp
    from gradcheck.diagnose import _DLFS_F, _dlfs_f

    assert _dlfs_f(np.float32, mp.Linear(3, 2)) == ""
    f = tmp_path / "dlfs_like_fixg27.py"
    f.write_text("import numpy as np\nclass T:\n    def forward(self, x):\n        return np.empty(x.shape, dtype='f')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("dlfs_like_fixg27")
    assert _dlfs_f(np.float32, mod.T()) == _DLFS_F and _dlfs_f(np.float64, mod.T()) == ""
