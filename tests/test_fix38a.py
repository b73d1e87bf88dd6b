"""Session 38 (fix38a), issue 10: session 37's verify37 findings F4, F5, F8, F9, F13, a classic (non-inverted)
dropout named as such, and a grader test at a kink with ``numerical=True`` naming the kink. Each test failed before
its fix (the repro scripts are under the fix38a branch's repro/ in the session's notes)."""

import numpy as np
from test_dropout_conventions import CS231N

from gradcheck import cli


def test_f13_an_import_the_sandbox_lacks_but_installed_here_is_told_of_process_isolation_not_pip(tmp_path, capsys):
    """verify37 F13: under --isolation namespaces (the grader's sandbox, numpy alone) a file importing an installed
    package (scipy; pytest here, installed wherever the suite runs) was told to ``pip install -r requirements.txt``,
    which cannot help in the sandbox; now it is told --isolation process imports it. Without the sandbox a package not
    installed keeps the pip advice."""
    f = tmp_path / "layer_f13.py"
    f.write_text("import numpy as np\nimport pytest\nimport not_installed_f13\n")
    cli._warn_unavailable_imports([str(f)], graders=True)
    sandboxed = " ".join(capsys.readouterr().out.split())
    cli._warn_unavailable_imports([str(f)], graders=False)
    plain = " ".join(capsys.readouterr().out.split())
    installed = sandboxed[sandboxed.index("imports pytest"):sandboxed.index("imports not_installed_f13")]
    assert "pip install -r" not in installed, installed
    assert "No pip install can help inside the sandbox" in installed and "--isolation process imports it" in installed
    missing = sandboxed[sandboxed.index("imports not_installed_f13"):]
    assert "pip install -r requirements.txt) and check it with --isolation process" in missing, missing
    assert "install the package's requirements where gradcheck runs (pip install -r requirements.txt)" in plain, plain


def test_a_graded_gradient_at_a_kink_with_central_differences_names_the_kink_not_a_faulty_test():
    """A grader test putting LeakyReLU's inputs exactly at 0 with numerical=True (the default): a submission taking
    x >= 0 as the positive side raised GradingTestError ("the reference's own gradient dX disagrees with central
    differences": "Not graded: this test is faulty"), the kink never named, because the reference's confirming
    difference crossed the kink. Now the direction leaves those entries at 0 and the row says the kink, as with
    numerical=False (_at_zero_parts); a correct LeakyReLU keeps full marks."""
    import manualprop as mp
    from gradcheck.grading import away_from_kinks
    from gradcheck.grading import checks as C

    class AtZero:
        def __init__(self, negative_slope=0.1, ge=True):
            self.negative_slope, self.ge = negative_slope, ge

        def forward(self, X, training=False):
            self.pos = X >= 0 if self.ge else X > 0
            return np.where(self.pos, X, self.negative_slope * X)

        def backward(self, dY):
            return np.where(self.pos, dY, self.negative_slope * dY)

    X = away_from_kinks(np.random.default_rng(0).standard_normal((4, 6)))
    X[:, ::2] = 0.0
    with np.errstate(all="ignore"):
        v = C.layer_gradients(AtZero(), X, mp.LeakyReLU(0.1), seed=3)
        right = C.layer_gradients(AtZero(ge=False), X, mp.LeakyReLU(0.1), seed=3)
    (p,) = v.parts
    assert not p.passed and p.message.startswith(
        "dX differs from the expected value only where the input is exactly 0 (12 of 24 entries, each at x = 0), and "
        "matches everywhere else; your dX / dY there is 1, the expected 0.1. At a kink the derivative is a convention"
    ), p.message
    assert right.passed, [q.message for q in right.parts]


#: CS231n assignment 2's dropout pair (p the probability of KEEPING a unit), correct: test_dropout_conventions's
CS231N_DROPOUT = CS231N.replace("BACKWARD", "dout * mask")


def test_f4_a_cs231n_dropout_pair_takes_the_mean_rule_with_the_reference_at_the_rate_it_drops(tmp_path):
    """verify37 F4: a correct CS231n dropout pair (seeded by dropout_param['seed'], so deterministic per call) against
    --reference manualprop.Dropout was compared element by element with the reference's own mask, in eval mode: a
    wrong FAIL ('other-function'). The pair's mode 'train' now runs the reference in training mode, random there: not
    compared element-wise (RANDOM_REFERENCE) but by check's mean rule (gradcheck.diagnose.random_mean_finding), as a class's random
    forward, as built and at dropout_param['p']=0.3 with the reference built with the rate the pair drops (0.7). The
    correct pair PASSes; keep probability p=0.5 dividing by 1 - p (right only at 0.5) FAILs at 0.3."""
    from test_cli import run_here

    bug = CS231N_DROPOUT.replace("< p) / p", "< p) / (1 - p)")
    assert bug != CS231N_DROPOUT
    init = '{"dropout_param": {"p": 0.5, "mode": "train", "seed": 1}}'
    out = {}
    for name, src in (("bug", bug), ("ok", CS231N_DROPOUT)):
        f = tmp_path / f"dropout_{name}.py"
        f.write_text(src)
        p = run_here("check", f"{f}::dropout", "--input-shape", "4,5", "--init", init, "--reference",
                     "manualprop.Dropout", "--reference-init", '{"p": 0.5}', "--isolation", "process")
        out[name] = (p.returncode, " ".join(p.stdout.split()))
    code, text = out["bug"]
    assert code == 1 and "a random forward's mean differs from the reference" in text, text
    assert ("in training mode, dropout's output at dropout_param['p']=0.3 (manualprop.Dropout built with p=0.7, the "
            "rate it drops) averages 0.4") in text, text
    code, text = out["ok"]
    assert code == 0 and "at dropout_param['p']=0.3 (manualprop.Dropout built with p=0.7, the rate it drops): " in text
    assert "--reference manualprop.Dropout was compared in 'train' mode by the output's mean alone" in text, text


def test_f8_a_cs231n_batchnorm_pair_that_never_stores_its_running_statistics_fails_naming_them():
    """verify37 F8: the planted-bug table's CS231n batchnorm pair, which never stores running_mean/running_var in
    bn_param, against --reference manualprop.BatchNorm1D got a usage error about parameters ('The reference
    BatchNorm1D has parameters ['beta', 'gamma'] but batchnorm has []'); now the reference serves the running
    statistics alone, compared after a training forward: a FAIL saying they were not updated and never stored."""
    from test_cli import ROOT, run_here

    p = run_here("check", ROOT / "tests" / "buggy_layers" / "cs231n.py::batchnorm", "--input-shape", "8,4;4;4", "--init",
                 '{"bn_param": {"mode": "train"}}', "--reference", "manualprop.BatchNorm1D", "--reference-init",
                 '{"num_features": 4}', "--isolation", "process")
    text = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 1 and "FAIL: batchnorm: running statistics differ from the reference" in text, text
    assert "(not updated by the training forward: it keeps all of its old value)" in text, text
    assert ("batchnorm's forward never stores bn_param['running_mean'], bn_param['running_var'] (no assignment "
            "bn_param['running_mean'] = ... in its file)") in text, text


class _Softplus:
    """PyTorch's Softplus(beta), correct: Y = log(1 + exp(beta X)) / beta, 1/beta derived in __init__."""

    def __init__(self, beta=1.0):
        self.beta, self.inv = beta, 1.0 / beta

    def forward(self, X, training=False):
        self.X = X
        return np.logaddexp(0, self.beta * X) * self.inv

    def backward(self, dY):
        return dY / (1 + np.exp(-self.beta * self.X))


class _DropP:
    """Inverted dropout whose backward divides by p (right at p = 0.5 alone), p stored as self.drop."""

    def __init__(self, p=0.5, seed=0):
        self.drop, self.rng, self.mask, self.mask_fixed = p, np.random.default_rng(seed), None, False

    def fix_mask(self, on=True):
        self.mask_fixed = on

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        if not (self.mask_fixed and self.mask is not None):
            self.mask = self.rng.random(X.shape) >= self.drop
        return X * self.mask / (1 - self.drop)

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask / self.drop


class _SizedDrop(_DropP):
    """_DropP with a required constructor argument it does not store."""

    def __init__(self, n, p=0.5):
        super().__init__(p)
        self.p = p


def test_f5_check_layer_builds_the_layer_again_through_its_constructor_and_says_when_it_cannot():
    """verify37 F5: check_layer's constructor-argument re-check copied the layer and set the attribute: a correct
    Softplus deriving 1/beta in __init__ FAILed at beta=0.7 (a wrong FAIL), and a dropout dividing by p that stores p
    as self.drop was not checked again, unsaid. Now it is built through its constructor (its arguments from
    init=, else its attributes of the same names): the Softplus PASSes checked at 0.7; the dropout FAILs at p=0.3 given
    init={'p': 0.5}, and without init the result says p was not checked again, and why; so does a layer whose
    constructor takes an argument it does not store."""
    from gradcheck import check_layer

    r = check_layer(_Softplus(1.0), (4, 3), twin=None)
    assert r.passed and r.other_args == [("beta", 1.0, 0.7)], (r.name, r.notes)
    r = check_layer(_DropP(0.5), (4, 3), twin=None, init={"p": 0.5})
    assert not r.passed and r.args_failed and r.name == "_DropP [p=0.3]", (r.name, r.notes)
    r = check_layer(_DropP(0.5), (4, 3), twin=None)
    assert r.passed and ("constructor argument p (default 0.5: 1/p = 1/(1-p) and p = 1-p) was not checked again at "
                         "p=0.3: _DropP holds no attribute p, so the value it was built with is not known; pass the "
                         "constructor's arguments as init={...}") in r.notes[-1], r.notes
    r = check_layer(_SizedDrop(3, 0.5), (4, 3), twin=None)
    assert r.passed and ("constructor argument p=0.5 (1/p = 1/(1-p) and p = 1-p) was not checked again at p=0.3: "
                         "_SizedDrop cannot be built again through its constructor (its constructor's argument n is "
                         "no attribute of the layer (self.n))") in r.notes[-1], r.notes



def test_classic_dropout_scaled_at_test_time_is_named_and_its_inverted_control_passes():
    """A dropout scaling at test time (Y = X * mask in training, Y = (1 - p) X in eval: classic, non-inverted
    dropout) PASSed both modes unnamed, each backward following its forward. The planted bug of the table
    (activations.py::DropoutClassic) is now named 'classic-dropout' with the fix; its control, inverted dropout with
    CS231n's keep probability (DropoutKeepProb), still PASSes."""
    from buggy_layers import diagnose, first_code

    d = diagnose("activations.py::DropoutClassic")
    sentence = " ".join(d.sentence().split())
    assert first_code(d) == "classic-dropout", sentence
    assert ("DropoutClassic is classic dropout, scaled at test time: in training it keeps " in sentence
            and "in eval mode it scales every entry by 0.5 (Y = 0.5 X)" in sentence
            and "scale the kept entries by 1 / (the keep probability) in training (here 1/0.5 = 2)" in sentence), sentence
    ok = diagnose("activations.py::DropoutKeepProb")
    assert ok.passed, ok.report()


def test_f5_diagnose_layer_says_the_arguments_it_could_not_check_again():
    """diagnose_layer shares check_layer's rebuild (gradcheck.sources.each_other_arg): an argument it cannot check
    again is an info finding with check_layer's words, never a silent PASS."""
    from gradcheck import diagnose_layer

    d = diagnose_layer(_SizedDrop(3, 0.5), (4, 3))
    notes = [f.message for f in d.findings if f.code == "other-args-note"]
    assert d.passed and notes and notes[0].startswith(
        "constructor argument p=0.5 (1/p = 1/(1-p) and p = 1-p) was not checked again at p=0.3: _SizedDrop cannot be "
        "built again through its constructor"), notes
