"""Deep Learning from Scratch 1 and 2 (Koki Saito) as the books lay them out (tester25s, session 25): the files beside
the books' own ``common/`` package (``tests/fixtures/dlfs2``, MIT, copied with their provenance). Each test fails on
the code before its fix.

- M5: the books' ``log(y + 1e-7)`` in ``common/functions.py``'s cross_entropy_error is read as a float guard (its
  copy without the eps could not be written into a package's folder, so the check FAILed "no known bug pattern");
  a model's check PASSes with a note naming it, as a loss's does, and the eps of ``common/util.py``, a file nothing
  checked imports, is not named.
- M6: Rnnlm's tokens (N, T) take targets (N, T): ``--targets labels:K@N,T``; the error on the default t says so.
- M8: the books' folders: a file of ``common/`` itself, and one in ``ch05/`` with ``sys.path.append(os.pardir)``,
  are checked with the package copied (they exited 3, "No module named 'common'").
- M4: TimeEmbedding's ``out = np.empty(..., dtype='f')`` beside float64 weights and integer ids is float32's
  round-off, named as a float32 Y is for a float64 input (it was a gradient mismatch of 2e-3, the sub-layer blamed
  for the float ids the localisation gave it).
"""

import pathlib

from test_cli import both, run_here

from gradcheck._log_eps import eps_free_texts, imported_files
from gradcheck.sandbox import sibling_files

DLFS2 = pathlib.Path(__file__).parent / "fixtures" / "dlfs2"


def test_only_the_files_the_checked_file_imports_are_read_for_an_eps():
    files = sibling_files(str(DLFS2 / "two_layer_net.py"))
    assert "common/util.py" in files  # copied into the sandbox, but imported by nothing here
    used = imported_files("two_layer_net.py", files)
    assert set(used) == {"two_layer_net.py", "common/__init__.py", "common/layers.py", "common/functions.py",
                         "common/np.py", "common/config.py"}
    texts, consts, places = eps_free_texts(str(DLFS2 / "two_layer_net.py"), files, True, 1e-2)
    assert sorted(texts) == ["common/functions.py"] and consts == [1e-7] and places == ["log"]
    # rnnlm imports common.util through common.base_model (`from common.util import to_gpu, to_cpu`)
    assert "common/util.py" in imported_files("rnnlm.py", sibling_files(str(DLFS2 / "rnnlm.py")))


def test_a_models_cross_entropy_guard_is_a_pass_with_a_note():
    p = run_here("check", "two_layer_net.py::TwoLayerNet", "--input-shape", "6,4",
                 "--init", '{"input_size":4,"hidden_size":5,"output_size":3}', "--targets", "labels:3", cwd=DLFS2)
    out = both(p)
    assert p.returncode == 0, out  # was 1: "dparams[3] ... max relative error 1.175e-06 > rtol 1e-06"
    assert "PASS: TwoLayerNet" in out
    assert ("backward is the derivative of the loss without the 1e-07 that forward adds inside a log "
            "(common/functions.py;") in out
    assert "as written the difference is at most a relative 1.2e-06 here" in out


def test_a_loss_whose_guard_is_in_the_books_common_package_passes_with_a_note():
    p = run_here("check", "simple_time_loss.py::Simple_TimeSoftmaxWithLoss", "--input-shape", "2,3,5", "--loss",
                 "--targets", "labels:5", cwd=DLFS2)
    out = both(p)
    assert p.returncode == 0, out  # was 1: "5 of 30 elements (no known bug pattern)", relative error 1.307e-06
    assert "NOTE: backward is the derivative of the loss without its 1e-07 (forward's log(y + 1e-07) read as" in out
    assert "1e-06" not in out.split("NOTE:")[1].split("which is no bug")[0]  # common/util.py's eps is not named
    assert "with the eps the difference is at most a relative 1.3e-06 here" in out


RNNLM = ["check", "rnnlm.py::Rnnlm", "--input-shape", "2,3", "--init",
         '{"vocab_size":5,"wordvec_size":3,"hidden_size":4}', "--indices", "5"]


def test_a_models_error_on_the_drawn_targets_shape_says_how_to_give_another():
    p = run_here(*RNNLM, "--targets", "labels:5", cwd=DLFS2)
    out = both(p)
    assert p.returncode == 3, out
    assert "'ts = ts.reshape(N * T)'" in out
    assert ("gradcheck drew the targets t (--targets labels:5) with shape (2,), one per example of the batch: if "
            "forward expects t of another shape") in out
    assert "--targets labels:5@2,3" in out


def test_targets_at_a_shape_draws_t_of_that_shape():
    p = run_here(*RNNLM, "--targets", "labels:5@2,3", cwd=DLFS2)
    out = both(p)
    assert "t fixed (--targets labels:5@2,3: 5-class labels of shape (2, 3))" in out
    assert "cannot reshape" not in out  # forward ran on t (2, 3): the check went on (its verdict is another matter)


def test_targets_at_a_shape_is_refused_with_loss_and_when_not_a_shape(tmp_path):
    p = run_here("check", "simple_time_loss.py::Simple_TimeSoftmaxWithLoss", "--input-shape", "2,3,5", "--loss",
                 "--targets", "labels:5@2,3", cwd=DLFS2)
    assert p.returncode == 2 and "'@SHAPE' gives the shape of a model's targets t (without --loss)" in both(p)
    p = run_here(*RNNLM, "--targets", "labels:5@2;x", cwd=DLFS2)
    assert p.returncode == 2 and "after '@' comes the shape of t" in both(p), both(p)


W3 = '{"W":[[-1.1421,-1.0693,-0.7573],[0.7687,-1.0379,-1.026],[-0.3926,1.3877,-0.9175]]}'


def test_a_float32_output_beside_float64_weights_and_integer_ids_is_named_float32():
    p = run_here("check", "time_embedding.py::TimeEmbedding", "--input-shape", "6,4", "--init", W3, "--indices", "3",
                 cwd=DLFS2)
    out = " ".join(both(p).split())
    assert "max relative error" not in out, out  # was: dparams[0] 2.110e-03 > rtol, manual=1.023, numerical=1.019
    # sessions 26-28 checked it on a float64 copy of its files (PASS); session 29 (review28g H2, the lead's policy):
    # given float64 weights it really returns float32, a downcast its copy would not show: FAIL naming the 'f' buffer
    assert p.returncode == 1 and "FAIL: TimeEmbedding: wrong dtype of Y." in out, out
    assert "forward returns float32 for float64 parameters (the input holds integers)" in out, out
    assert ("TimeEmbedding was given float64 parameters, and its source makes the lower precision at "
            "time_embedding.py line 19: out = np.empty((N, T, D), dtype='f'); code that is float32 throughout, built "
            "with float32 parameters") in out, out
    assert "first layer whose own check fails" not in out, out  # no Embedding blamed for float ids


DLFS1 = pathlib.Path(__file__).parent / "fixtures" / "dlfs1"
AFFINE = ["--input-shape", "4,5", "--init",
          '{"W":[[0.3,0.8,0.3],[-1.3,0.9,0.4],[-0.5,0.5,0.3],[0.2,0.02,0.5],[-0.7,-0.1,-0.4]],"b":[0.1,-0.5,-0.4]}']


def test_a_file_of_the_books_common_package_is_checked_where_it_is():
    """Before: exit 3 "No module named 'common' ... remove it" for common/layers.py's own `from common.functions`."""
    p = run_here("check", "common/layers.py::Affine", *AFFINE, cwd=DLFS1)
    assert p.returncode == 0 and "PASS: Affine" in both(p), both(p)


def test_a_file_in_a_chapters_folder_appending_its_parent_to_sys_path_is_checked():
    """Before: exit 3 "No module named 'common'" for ch05/my_layers.py's `sys.path.append(os.pardir)`, from the
    folder above and from ch05/ itself."""
    for cwd, f in ((DLFS1, "ch05/my_layers.py"), (DLFS1 / "ch05", "my_layers.py")):
        p = run_here("check", f"{f}::Affine", *AFFINE, cwd=cwd)
        assert p.returncode == 0 and "PASS: Affine" in both(p), both(p)


def test_the_parents_packages_are_copied_only_when_the_file_reaches_them_so():
    from gradcheck.sandbox import sibling_files

    files = sibling_files(str(DLFS1 / "ch05" / "my_layers.py"))
    assert {"common/__init__.py", "common/layers.py", "common/functions.py", "common/util.py"} <= set(files)
    assert sibling_files(str(DLFS1 / "common" / "layers.py"))["common/functions.py"] == str(
        DLFS1 / "common" / "functions.py")



def test_the_parents_package_is_not_copied_for_a_file_that_does_not_reach_it_so(tmp_path):
    from gradcheck.sandbox import sibling_files

    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text("")
    (tmp_path / "common" / "layers.py").write_text("X = 1\n")
    (tmp_path / "ch05").mkdir()
    f = tmp_path / "ch05" / "mine.py"
    f.write_text("from common.layers import X\n")  # no sys.path.append(os.pardir): run from ch05/, it fails too
    assert "common/layers.py" not in sibling_files(str(f))
    f.write_text("import sys, os\nsys.path.append(os.pardir)\nfrom common.layers import X\n")
    assert sibling_files(str(f))["common/layers.py"] == str(tmp_path / "common" / "layers.py")


SIGMOID_NODIV = '''
# After oreilly-japan/deep-learning-from-scratch-2 common/layers.py (SigmoidWithLoss), MIT License, Copyright (c) 2018
# Koki Saitoh; backward's division by the batch size taken out (the bug checked for).
import numpy as np
from common.functions import cross_entropy_error


class SigmoidWithLoss:
    def forward(self, x, t):
        self.t = t
        self.y = 1 / (1 + np.exp(-x))
        return cross_entropy_error(np.c_[1 - self.y, self.y], self.t)

    def backward(self, dout=1):
        return (self.y - self.t) * dout
'''


def test_a_missing_batch_division_of_1d_predictions_names_the_batch_size(tmp_path):
    """Before: "dy_pred is 6 times the correct gradient: a constant factor is wrong", 6 the batch size unsaid."""
    import shutil

    shutil.copytree(DLFS2 / "common", tmp_path / "common")
    (tmp_path / "swl.py").write_text(SIGMOID_NODIV)
    p = run_here("check", "swl.py::SigmoidWithLoss", "--input-shape", "6", "--loss", "--targets", "labels:2",
                 cwd=tmp_path)
    out = both(p)
    assert p.returncode == 1, out
    assert "dy_pred is 6 times too large (batch size 6): a 1/batch is missing" in out, out


def test_a_reference_with_another_eps_than_the_books_batchnorm_is_told_so():
    """Before: "check the settings ... or look for a forward bug": the book's 10e-7 under the square root unsaid."""
    init = '{"gamma":[0.0006,0.1494,-0.1371,-0.4453],"beta":[-1.7383,-1.3366,-1.3611,-0.3516]}'
    args = ["check", "common/layers.py::BatchNormalization", "--input-shape", "6,4", "--init", init, "--training",
            "--reference", "manualprop.BatchNorm1D", "--reference-init"]
    p = run_here(*args, '{"num_features":4}', cwd=DLFS1)
    out = both(p)
    assert p.returncode == 1, out
    assert ("Forward adds 10e-7 (= 1e-06) under its square root, its eps, where the reference's eps is 1e-05" in out)
    assert """--reference-init '{..., "eps": 1e-06}'""" in out, out
    p = run_here(*args, '{"num_features":4,"eps":1e-06}', cwd=DLFS1)  # the advice, taken
    assert p.returncode == 0 and "and the forward output match" in both(p), both(p)


def test_a_pass_of_a_loss_whose_backward_branches_on_the_targets_names_the_other_kind():
    """Book 1's SoftmaxWithLoss: `if self.t.size == self.y.size:` (one-hot) else labels; a PASS on labels checked
    one branch. Before: nothing said (a bug in the one-hot branch passed unseen on labels)."""
    p = run_here("check", "common/layers.py::SoftmaxWithLoss", "--input-shape", "4,5", "--loss", "--targets",
                 "labels:5", cwd=DLFS1)
    out = both(p)
    assert p.returncode == 0, out
    assert ("NOTE: backward branches on the targets (`if self.t.size == self.y.size:`, line 86): only the branch "
            "these targets (labels) take was checked; check with --targets onehot:5 too") in out, out
    p = run_here("check", "common/layers.py::Affine", *AFFINE, cwd=DLFS1)
    assert "branches on the targets" not in both(p)


def test_an_eps_larger_than_rtol_is_no_float_guard_and_fails_named(tmp_path):
    """review26g M2: the bound of the PASS with a note (every constant at most the check's rtol, :func:`large_eps`'
    rule) could be removed with every test passing. The book's TwoLayerNet with ``log(y + 1e-3)``: a FAIL naming the
    0.001, not a PASS."""
    import shutil

    root = tmp_path / "book"
    shutil.copytree(DLFS2, root)
    f = root / "common" / "functions.py"
    text = f.read_text(encoding="utf-8")
    assert text.count("+ 1e-7)) / batch_size") == 1
    f.write_text(text.replace("+ 1e-7)) / batch_size", "+ 1e-3)) / batch_size"), encoding="utf-8")
    p = run_here("check", "two_layer_net.py::TwoLayerNet", "--input-shape", "6,4",
                 "--init", '{"input_size":4,"hidden_size":5,"output_size":3}', "--targets", "labels:3", cwd=root)
    out = both(p)
    assert p.returncode == 1 and "FAIL: TwoLayerNet: gradient mismatch in dX" in out, out
    assert "differ from the numerical gradient only by the constant 0.001 that forward adds inside np.log" in out, out
    assert "PASS" not in out, out


def test_relative_imports_are_read_from_the_importing_files_package(tmp_path):
    """review26g M2: ``imported_files`` read ``from .b import g`` as a top-level ``b`` and every test passed."""
    for name, text in {"main.py": "from pkg.a import f\n", "pkg/__init__.py": "", "pkg/a.py":
                       "from .b import g\nfrom . import c\n", "pkg/b.py": "x = 1\n", "pkg/c.py": "y = 2\n",
                       "pkg/d.py": "from ..pkg import b\n", "b.py": "z = 3\n"}.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    files = {n: str(tmp_path / n) for n in ("main.py", "b.py", "pkg/__init__.py", "pkg/a.py", "pkg/b.py",
                                             "pkg/c.py", "pkg/d.py")}
    assert sorted(imported_files("main.py", files)) == ["main.py", "pkg/__init__.py", "pkg/a.py", "pkg/b.py",
                                                         "pkg/c.py"]
    assert sorted(imported_files("pkg/d.py", files)) == ["pkg/__init__.py", "pkg/b.py", "pkg/d.py"]


FLOAT32 = '''
"""A tanh computing in float32 (this docstring's dtype='f' is no code)."""
import numpy as np


class Tanh32:
    def forward(self, X):
        self.Y = CAST
        return self.Y

    def backward(self, dY):
        return dY * (1 - self.Y ** 2)
'''


def test_the_books_dtype_f_advice_is_given_only_to_code_using_dtype_f(tmp_path):
    """review26g L2: every float32 message carried Deep Learning from Scratch 2's dtype='f' advice, a plain
    ``astype(np.float32)`` too."""
    for cast, told in (("np.tanh(X.astype(np.float32))", False), ("np.tanh(X).astype(np.float32, copy=False) + "
                                                                   "np.zeros(X.shape, dtype='f')", True)):
        f = tmp_path / f"tanh{told}.py"
        f.write_text(FLOAT32.replace("CAST", cast), encoding="utf-8")
        p = run_here("check", f"{f}::Tanh32", "--input-shape", "4,5")
        out = " ".join(both(p).split())
        assert p.returncode == 1 and "FAIL: Tanh32: wrong dtype of Y." in out, out
        assert "no astype(np.float32)" in out, out
        assert ("an array made with dtype='f' (Deep Learning from Scratch 2's" in out) is told, out
