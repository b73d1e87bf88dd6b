"""`gradcheck check --twin` and `--jacobian` on a random layer (session 6).

A student's Dropout draws its mask from ``np.random`` or from a generator it stores. The check
holds those draws fixed for manual vs numerical (the layer's own ``fix_mask``, or its generators
rewound before every forward). The autoprop twin draws its own mask, which gradcheck cannot make
the same as the student's: in a mode where the forward is random the twin is not compared, and the
header says so. The Jacobian is taken with the draws held, the
same way. A correct layer never FAILs; a wrong backward still FAILs with its bug named.

Run through the installed console script (``gradcheck``), as a student does.
"""

import textwrap

import numpy as np
import pytest
from test_cli import both as flat
from test_cli import run, run_here

#: forward(X, training=False): random in training mode only, as torch.nn.Dropout.
TRAINING = """
import numpy as np

class Dropout:
    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        self.mask = (DRAW >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else BACK
"""
#: forward(X) without a training argument: random on every call (checked as "eval").
ALWAYS = """
import numpy as np

class Dropout:
    def __init__(self, p=0.5, seed=0):
        self.p, self.rng = p, np.random.default_rng(seed)

    def forward(self, X):
        self.mask = (DRAW >= self.p) / (1 - self.p)
        return X * self.mask

    def backward(self, dY):
        return BACK
"""
STORED, GLOBAL = "self.rng.random(X.shape)", "np.random.rand(*X.shape)"
RIGHT, WRONG = "dY * self.mask", "dY"  # WRONG: the mask missing from dX


def layer(tmp_path, template, draw=STORED, back=RIGHT, name="drop.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(template).replace("DRAW", draw).replace("BACK", back))
    return f


def check(f, *extra, through=run_here):
    return through("check", f"{f}::Dropout", "--input-shape", "4,3", "--init", '{"p": 0.5}', *extra)


# ------------------------------------------------------------------------------------ --twin

@pytest.mark.parametrize("draw", [STORED, GLOBAL], ids=["stored-generator", "np.random"])
def test_twin_on_a_correct_random_dropout_passes_and_the_header_says_where_the_twin_was_compared(tmp_path, draw):
    p = check(layer(tmp_path, TRAINING, draw), "--twin")
    out = flat(p)
    assert p.returncode == 0, out
    assert "was rewound before every forward, so each call drew the same mask" in out
    assert ("twin: compared in eval mode only; in training mode the forward is random, so it is checked "
            "with the draws held: manual vs numerical (the autoprop twin draws its own mask, and gradcheck "
            "cannot give it yours)") in out
    assert "no tape comparison for Dropout [training]: the forward is random in this mode" in out
    assert "FAIL" not in out
    assert "PASS: Dropout: every gradient (dX) and the forward output match" in out
    rows = {line.split()[0] + " " + line.split()[1]: line for line in p.stdout.splitlines()
            if line.startswith("Dropout [")}
    # eval: manual, tape and numerical; training: manual vs numerical only ('-' in the tape columns)
    # columns: name (2 words), tensor, shape (2 words), manual~num, tape~num, manual~tape, ...
    assert rows["Dropout [eval]"].split()[2:9] == ["Y", "(fwd)", "(4,", "3)", "-", "-", "0.0e+00"], rows
    train = rows["Dropout [training]"].split()  # no Y (fwd) row: no forward to compare with
    assert train[2] == "dX" and train[6:8] == ["-", "-"], rows


def test_twin_on_a_random_dropout_with_a_wrong_backward_fails_on_that_bug(tmp_path):
    p = check(layer(tmp_path, TRAINING, back=WRONG), "--twin", through=run)  # the console script
    out = flat(p)
    assert p.returncode == 1, out
    assert "FAIL: Dropout [training]: gradient mismatch in dX." in out  # dX, not the twin's Y
    assert "FAIL Dropout [training] dX (gradient, manual-vs-numerical)" in out
    assert "manual-vs-tape" not in out and "tape-vs-numerical" not in out
    assert "dX equals dY: the local derivative of the activation is missing" in out


def test_twin_on_a_forward_random_in_every_mode_is_not_compared_and_the_header_says_why(tmp_path):
    p = check(layer(tmp_path, ALWAYS), "--twin")
    out = flat(p)
    assert p.returncode == 0, out
    assert ("twin: not compared: the forward is random in eval mode, so it is checked with the draws "
            "held: manual vs numerical (the autoprop twin draws its own mask, and gradcheck cannot give "
            "it yours)") in out
    assert "PASS: Dropout: every gradient (dX) match" in out


def test_tape_on_a_random_dropout_runs_the_students_own_draws_and_is_compared(tmp_path):
    """--tape records the student's own forward in the sandbox, where the draws are held: the
    same mask, so the tape column stays (no header line about the twin)."""
    p = check(layer(tmp_path, TRAINING), "--tape")
    out = flat(p)
    assert p.returncode == 0, out
    assert "twin:" not in out and "no tape comparison" not in out
    train = next(line for line in p.stdout.splitlines() if line.startswith("Dropout [training]"))
    assert train.split()[2:10] == ["Y", "(fwd)", "(4,", "3)", "-", "-", "0.0e+00", "0.0e+00"], train


def test_diagnose_layer_in_process_drops_the_twin_where_the_mask_was_held():
    """manualprop.Dropout checked in process against its own twin: the training mask is held by
    fix_mask(True), which the twin does not share through the check's proxy (it used to FAIL)."""
    import autoprop as ap
    import manualprop as mp
    from gradcheck.diagnose import RANDOM_TWIN, diagnose_layer

    d = diagnose_layer(mp.Dropout(0.5, rng=0), (4, 3), twin=ap.layers.Dropout(0.5), mode="full")
    assert d.passed, d.report()
    by_mode = {r.training: r for r in [d.result, *d.result.other_modes]}
    assert by_mode[True].twin is None and by_mode[True].twin_note == RANDOM_TWIN
    assert by_mode[False].twin == "autoprop.layers.dropout.Dropout"
    assert by_mode[False].records[0].get("manual-vs-tape").max_abs_error == 0.0
    wrong = mp.Dropout(0.5, rng=0)
    wrong.backward = lambda dY: dY  # the mask missing
    d = diagnose_layer(wrong, (4, 3), twin=ap.layers.Dropout(0.5), mode="full")
    assert not d.passed and d.result.failing_tensors == ["dX"]


# ------------------------------------------------------------------------------------ --jacobian

@pytest.mark.parametrize("draw", [STORED, GLOBAL], ids=["stored-generator", "np.random"])
def test_jacobian_of_a_correct_random_dropout_is_taken_with_the_draws_held(tmp_path, draw):
    p = check(layer(tmp_path, ALWAYS, draw), "--tape", "--jacobian")
    out = flat(p)
    assert p.returncode == 0, out
    # what ran (session 19: the always-random Dropout has no mode; the line said "in eval mode")
    assert ("jacobian dY/dX (your forward with its random draws held: the same draws in every call) (12 x 12): tape (your forward, stacked VJPs) vs "
            "central differences: max relative error 0.0e+00") in out
    assert "eval mode" not in out
    assert "FAIL" not in out
    assert "PASS: Dropout: every gradient (dX) and the forward output match" in out


def test_jacobian_of_a_random_dropout_with_a_wrong_backward_names_the_backward_bug(tmp_path):
    p = check(layer(tmp_path, ALWAYS, back=WRONG), "--tape", "--jacobian")
    out = flat(p)
    assert p.returncode == 1, out
    assert "the tape's Jacobian differs" not in out  # the forward is right: its Jacobian matches
    assert "jacobian dY/dX (your forward with its random draws held: the same draws in every call) (12 x 12): tape (your forward, stacked VJPs) vs central differences" in out
    assert ": ok" in out
    assert "FAIL: Dropout: gradient mismatch in dX." in out
    assert "dX equals dY: the local derivative of the activation is missing" in out


def test_twin_jacobian_of_a_random_forward_is_not_compared_and_says_why(tmp_path):
    p = check(layer(tmp_path, ALWAYS), "--twin", "--jacobian")
    out = flat(p)
    assert p.returncode == 0, out
    assert ("jacobian dY/dX (your forward with its random draws held: the same draws in every call): not compared: the forward is random and the "
            "autoprop twin draws its own mask, which gradcheck cannot make the same as yours (--tape takes the "
            "Jacobian of your own forward, with the draws held)") in out
    assert "PASS: Dropout" in out


def test_twin_jacobian_of_a_dropout_random_only_in_training_is_compared_in_eval_mode(tmp_path):
    """A Jacobian per mode checked: in eval mode, where this forward is deterministic, the twin's is
    compared; in training mode, where it is random, it is not, and the line says why."""
    p = check(layer(tmp_path, TRAINING), "--twin", "--jacobian")
    out = flat(p)
    assert p.returncode == 0, out
    assert "jacobian dY/dX in eval mode (12 x 12): tape (GradientTape.jacobian) vs central differences: max " \
           "relative error 0.0e+00" in out
    assert ("jacobian dY/dX in training mode: not compared: the forward is random in training mode and the "
            "autoprop twin draws its own mask") in out


@pytest.mark.parametrize("draw", [STORED, GLOBAL], ids=["stored-generator", "np.random"])
def test_tape_jacobian_of_a_dropout_random_in_training_is_taken_with_the_draws_held(tmp_path, draw):
    """--tape runs the student's own forward in training mode with the check's draws held: compared there too."""
    p = check(layer(tmp_path, TRAINING, draw), "--tape", "--jacobian")
    out = flat(p)
    assert p.returncode == 0, out
    for mode in ("eval", "training"):
        assert (f"jacobian dY/dX in {mode} mode (12 x 12): tape (your forward, stacked VJPs) vs central "
                "differences: max relative error 0.0e+00") in out


def test_held_forward_holds_a_global_generator_and_reports_it():
    """The one hold the check and the Jacobian share (gradcheck.diagnose.held_forward), in process."""
    from gradcheck.diagnose import held_forward

    class Drop:
        def forward(self, X, training=False):
            return X * (np.random.rand(*X.shape) >= 0.5) * 2.0

        def backward(self, dY):
            raise AssertionError("not called")

    X = np.arange(1.0, 13.0).reshape(4, 3)
    proxy, how = held_forward(Drop(), [X], "Drop")
    assert how == "rewound-rng"
    y1, y2 = proxy.forward(X), proxy.forward(X)
    assert np.array_equal(y1, y2) and set(np.unique(y1 / X)) <= {0.0, 2.0}
    steady = type("Steady", (), {"forward": lambda self, X, training=False: 2 * X, "backward": None})()
    proxy, how = held_forward(steady, [X], "Steady")
    assert how == "" and np.array_equal(proxy.forward(X), 2 * X)


# ------------------------------------------------------------------------------------ --reference

def test_reference_on_a_correct_random_dropout_passes_and_the_header_says_where_it_was_compared(tmp_path):
    """manualprop.Dropout as --reference draws its own mask too: not compared where the forward is random."""
    p = check(layer(tmp_path, TRAINING, GLOBAL), "--reference", "manualprop.Dropout")
    out = flat(p)
    assert p.returncode == 0, out
    assert ("reference: compared in eval mode only; in training mode the forward is random, so it is checked "
            "with the draws held: manual vs numerical (manualprop.Dropout draws its own mask, and gradcheck "
            "cannot give it yours; the training output's mean is compared with it instead: see the note below)") in out
    assert "reference: the training output's mean compared with manualprop.Dropout's over 4002 entries" in out, out  # (1334 rows of 3)
    assert "FAIL" not in out
    assert "PASS: Dropout: every gradient (dX) and the forward output match" in out


def test_reference_on_a_random_dropout_with_a_wrong_backward_fails_on_that_bug(tmp_path):
    p = check(layer(tmp_path, TRAINING, GLOBAL, back=WRONG), "--reference", "manualprop.Dropout")
    out = flat(p)
    assert p.returncode == 1, out
    assert "FAIL: Dropout [training]: gradient mismatch in dX." in out
    assert "manual-vs-reference" not in out
    assert "dX equals dY: the local derivative of the activation is missing" in out
