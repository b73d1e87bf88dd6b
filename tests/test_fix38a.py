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
