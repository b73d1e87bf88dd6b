"""tester25s: Deep Learning from Scratch 2's layers (``tests/fixtures/dlfs2/layers.py``, the book's code verbatim)
and one planted bug each, checked by ``gradcheck check``.

* H1: ``TimeSoftmaxWithLoss.forward`` begins ``if ts.ndim == 3: ts = ts.argmax(axis=2)`` (its one-hot branch); that
  rebinding, run on one path only, was read as rebinding ``ts`` always, so ``ts != self.ignore_label`` compared no
  target, no label was set to -1, and a backward forgetting the mask PASSED.
* H2: ``self.grads[0] = dW`` (the ``[...]`` forgotten) PASSED: the gradient was read from the new array, while a
  model that collected ``layer.grads`` keeps the old one and never moves its weights.
"""

import ast
from pathlib import Path

import numpy as np
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


def test_only_assignments_on_some_paths_are_partial():
    from gradcheck._switch_reach import _partial_assignments

    tree = ast.parse(
        "def f(x, t):\n"
        "    a = x\n"                      # 0: always
        "    if t.ndim == 3:\n"
        "        t = t.argmax(axis=2)\n"   # 1: one branch only
        "    if x.ndim == 2:\n"
        "        x = x + 1\n"              # 2: both branches assign x
        "    else:\n"
        "        x = x - 1\n"              # 3
        "    for i in range(3):\n"
        "        a = a * 2\n"              # 4: a loop may run no time
        "    return a\n")
    assigns = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)]
    assigns.sort(key=lambda n: n.lineno)
    partial = _partial_assignments(tree)
    assert [id(a) in partial for a in assigns] == [False, True, False, False, True]


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


def test_the_books_float32_time_embedding_is_checked_on_its_float64_copy_not_blamed_on_its_cells(tmp_path):
    """Its float32 output FAILed "wrong dtype of Y" until session 26; its formulas are now checked on a float64 copy
    of its files (tests/test_float32_code_s26.py), and no cell is blamed for float ids."""
    p = run_here("check", f"{BOOK}::TimeEmbedding", *EMB)
    text = both(p)
    assert p.returncode == 0 and "PASS: TimeEmbedding (its float32 code checked on a float64 copy" in text, text
    assert "note: TimeEmbedding computes in float32" in text, text
    assert "first layer whose own check fails" not in text and "IndexError" not in text, text
    good = run_here("check", f"{_f64(tmp_path)}::TimeEmbedding", *EMB)
    assert good.returncode == 0 and "PASS: TimeEmbedding" in both(good), both(good)
