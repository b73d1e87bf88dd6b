"""Session 38 (fix38a), issue 10: session 37's verify37 findings F4, F5, F8, F9, F13, a classic (non-inverted)
dropout named as such, and a grader test at a kink with ``numerical=True`` naming the kink. Each test failed before
its fix (the repro scripts are under the fix38a branch's repro/ in the session's notes)."""

import numpy as np

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


#: CS231n assignment 2's dropout pair (p the probability of KEEPING a unit), correct
CS231N_DROPOUT = '''import numpy as np


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    else:
        out = x
    return out, (dropout_param, mask)


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    return dout * mask if dropout_param["mode"] == "train" else dout
'''


def test_f4_a_cs231n_dropout_pair_takes_the_mean_rule_with_the_reference_at_the_rate_it_drops(tmp_path):
    """verify37 F4: a correct CS231n dropout pair (seeded by dropout_param['seed'], so deterministic per call) against
    --reference manualprop.Dropout was compared element by element with the reference's own mask, in eval mode: a
    wrong FAIL ('other-function'). The pair's mode 'train' now runs the reference in training mode, random there: not
    compared element-wise (RANDOM_REFERENCE) but by check's mean rule (gradcheck._random_mean), as a class's random
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
