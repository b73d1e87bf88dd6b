"""Session 31, fixm31: numpy-ml's layer conventions through ``gradcheck check`` (tester31m's M1, M2, M3, M6, L1).

Each test runs our own minimal numpy-ml-style fixture (tests/fixtures/numpyml_style.py) through
``gradcheck.cli.main`` in this process (``test_cli.run_here``), as a student runs the console script.
"""

import os

from test_cli import both, run_here

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "numpyml_style.py")


def test_read_only_trainable_of_a_sublayer_is_not_written():
    """M1: a sub-layer's ``trainable`` is a read-only property whose getter reads another object: gradcheck wrote it
    and blamed forward (exit 3, "property 'trainable' of 'Wrapper' object has no setter"); now it is no switch,
    the layer is checked as it is (training), the right one PASSes and the planted bug FAILs."""
    p = run_here("check", f"{FIX}::Outer", "--input-shape", "3,4")
    out = both(p)
    assert p.returncode == 0 and "PASS: Outer" in out and "no setter" not in out, out
    p = run_here("check", f"{FIX}::OuterBug", "--input-shape", "3,4")
    out = both(p)
    assert p.returncode == 1 and "FAIL OuterBug dX" in out, out


def test_forward_returning_a_and_c_with_backward_of_one_gradient_checks_a():
    """M2: numpy-ml's LSTMCell returns ``(At, Ct)``, its backward takes dLdAt alone: was exit 1 "gave Y as a
    tuple"; now At is checked, the header says Ct is not, and a planted bug in dX FAILs."""
    p = run_here("check", f"{FIX}::CellAC", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS: CellAC" in out, out
    assert "2 outputs: At (6, 3) checked as Y, backward gets its dY; Ct (6, 3) (float64): backward takes no " \
           "upstream gradient for it, so it is not checked" in out, out
    p = run_here("check", f"{FIX}::CellACBug", "--input-shape", "6,4")
    out = both(p)
    assert p.returncode == 1 and "FAIL CellACBug dX" in out, out


def test_a_backward_failing_after_the_reset_hook_says_gradcheck_called_it():
    """M6: numpy-ml's RNNCell raised in backward after gradcheck's flush_gradients(), which neither the header nor
    the message named (the message blamed backward alone). Its own update() calls the hook after each step, so its
    training loop fails at the second step the same way: the check still cannot pass, and now says why."""
    p = run_here("check", f"{FIX}::CellFlushed", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == 3, out
    assert "flush_gradients() (numpy-ml's update() calls it after each step) called before each forward" in out, out
    assert "CellFlushed.backward(dY) with dY of shape (6, 3) raised ValueError" in out, out
    assert "gradcheck called CellFlushed.flush_gradients() (numpy-ml's update() calls it after each step) before " \
           "the forward of this backward" in out, out
    assert "that loop raises the same at its second step" in out, out


def test_a_forward_taking_its_inputs_as_one_list_is_named():
    """M3: numpy-ml's Add.forward(X, retain_derived) takes a list: with two inputs the second went to
    retain_derived and the error blamed forward or the input shape; with one, backward's list was unexplained. Now
    both messages say forward takes one list and how to check it."""
    advice = "Sum.forward takes its inputs as one list (X), but gradcheck passes each array of --input-shape as its own"
    for shape in ("6,4;6,4", "6,4"):
        p = run_here("check", f"{FIX}::Sum", "--input-shape", shape)
        out = " ".join(both(p).split())
        assert p.returncode == 3 and advice in out and "return self.layer.forward([X1, X2])" in out, (shape, out)
        assert "X had the shape --input-shape gave" not in out, (shape, out)


def test_a_string_set_from_a_constructor_argument_is_configuration():
    """L1: numpy-ml's Embedding's ``self.pool = pool`` was checked as a switch at 'mean' and 'sum' (each value
    set, the 'sum' branch run for a layer built with 'mean'), never at its default None; docs/checking.md calls such
    a setting configuration. Now the layer is checked as built, at each value alike."""
    for pool in ("mean", "sum"):
        p = run_here("check", f"{FIX}::Pooled", "--input-shape", "6,3", "--init", f'{{"pool": "{pool}"}}')
        out = " ".join(both(p).split())
        assert p.returncode == 0 and "PASS: Pooled" in out, out
        assert "each value of self.pool" not in out and "[self.pool=" not in out, out
        assert "forward branches on self.pool, the layer's configuration as built" in out, out


def test_an_unreadable_import_of_another_module_says_it_is_elsewhere():
    """L3: numpy-ml's losses were warned about utils/kernels.py:269 (``eval`` of a parameter string) as if the
    checked file held it; the WARNING now says the line is in a module the checked file imports."""
    f = os.path.join(os.path.dirname(__file__), "fixtures", "numpyml_scan", "sqloss.py")
    p = run_here("check", f"{f}::SqLoss", "--loss", "--input-shape", "4,3")
    out = " ".join(both(p).split())
    assert p.returncode == 0, out
    assert "WARNING: kern.py:8 (in a module sqloss.py imports, directly or through its package, not in the checked " \
           "file; whether the checked code runs it is not known): cannot tell statically what this imports" in out, out


def test_a_softmax_jacobian_without_its_outer_product_is_named():
    """tester31m's softmax_diag mutant (np.diagflat(yi) alone): was "no known bug pattern"; now named, and the right
    softmax PASSes (the rule needs the manual dX to differ from the numerical one)."""
    p = run_here("check", f"{FIX}::RowSoftmaxDiag", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == 1 and "diagnosis: dX = p * dY: the Jacobian is built as diag(p) alone" in out, out
    assert "no known bug pattern" not in out, out
    p = run_here("check", f"{FIX}::RowSoftmax", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS: RowSoftmax" in out and "outer product" not in out, out


def test_a_weight_left_out_of_dx_is_named():
    """tester31m's bn_no_scaler mutant (``dN = dLdy`` for ``dLdy * scaler``): was "no known bug pattern"; now named,
    and the right layer PASSes."""
    p = run_here("check", f"{FIX}::NormNoScaler", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == 1 and "diagnosis: dX times parameters['scaler'] is the correct gradient" in out, out
    p = run_here("check", f"{FIX}::Norm", "--input-shape", "6,4")
    out = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS: Norm" in out, out
