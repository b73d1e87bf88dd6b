"""Notebooks 07 and 09 as a student meets them with wrong answers (newuser27 #1, #2, #7).

Executed with nbclient on the project kernel (as tests/test_exercises.py and tests/test_grading_cs231n.py do):

* notebook 09 with four wrong exercises (affine_backward's dx not reshaped, softmax_loss's dx without 1/N,
  batchnorm_backward without the variance path, max_pool_backward assigning the window): every other exercise's test cell still passes (``results`` is made
  in the setup cell, not in Exercise 1's), and each failing cell says the checker's diagnosis, the one
  ``gradcheck check`` prints, with the pair's own tensor names (``dx``, not ``dX``);
* notebook 07's Exercise 3 answered by editing the cached ``p`` in place fails its visible tests with the words
  of the hidden ``check_repeatable``.
"""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from gradcheck.assignment import BEGIN_HIDDEN_TESTS

ROOT = Path(__file__).resolve().parents[1]
NB07, NB09 = ROOT / "notebooks" / "07-exercises.ipynb", ROOT / "notebooks" / "09-cs231n-exercises.ipynb"

WINDOW_ASSIGNED = '''    x, pool_param = cache
    ph, pw, s = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    dx = np.zeros_like(x)
    N, C, Ho, Wo = dout.shape
    for i in range(Ho):
        for j in range(Wo):
            win = x[:, :, i*s:i*s+ph, j*s:j*s+pw]
            mask = win == win.max(axis=(2, 3), keepdims=True)
            dx[:, :, i*s:i*s+ph, j*s:j*s+pw] = mask * dout[:, :, i, j][:, :, None, None]
'''


def cell(nb, cid):
    (c,) = [c for c in nb.cells if c.get("id") == cid]
    return c


def replace(nb, cid, old, new):
    c = cell(nb, cid)
    assert c.source.count(old) == 1, (cid, old)
    c.source = c.source.replace(old, new)


def run(nb, path):
    NotebookClient(nb, kernel_name="backprop-lab", timeout=600, allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def text(c):
    out = []
    for o in c.get("outputs", []):
        out.append(o.get("text", "") if o.output_type == "stream" else
                   f"{o.get('ename', '')}: {o.get('evalue', '')}" if o.output_type == "error" else "")
    return " ".join("".join(out).split())


def error(c):
    errs = [o for o in c.get("outputs", []) if o.output_type == "error"]
    return f"{errs[0].ename}: {' '.join(errs[0].evalue.split())}" if errs else None


@pytest.fixture(scope="module")
def nb09_wrong():
    nb = nbformat.read(NB09, as_version=4)
    replace(nb, "ex1-solution", "dx = (dout @ w.T).reshape(x.shape)", "dx = dout @ w.T")
    replace(nb, "ex3-solution", "    dx /= N\n", "")
    replace(nb, "ex4-solution",
            "dx = inv_std / N * (N * dxhat - dxhat.sum(axis=0) - xhat * (dxhat * xhat).sum(axis=0))",
            "dx = inv_std * (dxhat - dxhat.mean(axis=0))  # forgot the variance path")
    sol = cell(nb, "ex6-solution")
    head, rest = sol.source.split("def max_pool_backward", 1)
    sig, _, tail = rest.partition("### BEGIN SOLUTION\n")
    body, _, end = tail.partition("    ### END SOLUTION")
    sol.source = f"{head}def max_pool_backward{sig}### BEGIN SOLUTION\n{WINDOW_ASSIGNED}    ### END SOLUTION{end}"
    return run(nb, NB09)


def test_nb09_a_wrong_exercise_leaves_the_later_ones_be(nb09_wrong):
    nb = nb09_wrong
    assert [cid for cid in ("ex1-tests", "ex2-tests", "ex3-tests", "ex4-tests", "ex5-tests", "ex6-tests")
            if error(cell(nb, cid)) is not None] == ["ex1-tests", "ex3-tests", "ex4-tests", "ex6-tests"]
    for name, cid in (("relu", "ex2-tests"), ("conv", "ex5-tests")):
        assert f"{name}: tests passed" in text(cell(nb, cid))
    summary = text(cell(nb, "summary"))
    assert error(cell(nb, "summary")) is None
    # max_pool's first check (stride 2, no overlap) passes; its overlapping-window check fails: not in the plot
    # either (verify27: the plot said "4/4 passed" with a max_pool bar)
    assert ("not in the plot: affine, softmax_loss, batchnorm, max_pool (a test failed or did not run: see its cell)"
            in summary)
    assert any("image/png" in o.get("data", {}) for o in cell(nb, "summary").outputs)


def test_nb09_a_wrong_shape_names_the_function_and_the_tensor(nb09_wrong):
    assert error(cell(nb09_wrong, "ex1-tests")) == (
        "AssertionError: affine_backward's dx has shape (4, 6); expected (4, 2, 3), x's shape: reshape to x.shape")


def test_nb09_says_the_checkers_diagnosis(nb09_wrong):
    bn = error(cell(nb09_wrong, "ex4-tests"))
    assert bn.startswith("AssertionError: batchnorm_forward/batchnorm_backward: FAIL: batchnorm:")
    assert "dx lacks the gradient through the batch variance" in bn
    assert "dx lacks the gradient through the batch variance" in text(cell(nb09_wrong, "ex4-tests"))
    pool = error(cell(nb09_wrong, "ex6-tests"))
    assert pool.startswith("AssertionError: max_pool_forward/max_pool_backward: FAIL: max_pool:")
    assert "assigns (=)" in pool and " dx" in pool and "dX" not in pool
    assert error(cell(nb09_wrong, "ex3-tests")) == (
        "AssertionError: softmax_loss: dx is 8 times too large (batch size 8): a 1/batch is missing (a sum where a "
        "mean is due)")
    relu = text(cell(nb09_wrong, "ex2-tests"))
    assert "relu dx (3, 4, 5)" in relu and "dX" not in relu


def test_nb07_in_place_cache_fails_the_visible_tests_with_the_hidden_tests_words():
    nb = nbformat.read(NB07, as_version=4)
    replace(nb, "ex3-solution", "dz = p.copy()\n        dz[np.arange(N), y] -= 1\n        return dz / N",
            "p[np.arange(N), y] -= 1\n        return p / N")
    tests = cell(nb, "ex3-tests")
    tests.source = tests.source.split(BEGIN_HIDDEN_TESTS)[0]  # the student version's visible tests
    for k in (1, 2):  # the exercises before it, visible tests alone
        c = cell(nb, f"ex{k}-tests")
        c.source = c.source.split(BEGIN_HIDDEN_TESTS)[0]
    nb.cells = nb.cells[: nb.cells.index(tests) + 1]
    run(nb, NB07)
    assert error(cell(nb, "ex2-tests")) is None
    assert error(tests) == (
        "AssertionError: Exercise 3, SoftmaxCrossEntropy: a second backward() after the same forward returned a "
        "different gradient (max difference 0.2): backward changes the forward cache in place. Work on a copy "
        "(x = x.copy(), x the array it writes into) instead of editing the cached array.")  # (fixg27's words)
