"""Session 38 (fix38a), issue 10: session 37's verify37 findings F4, F5, F8, F9, F13, a classic (non-inverted)
dropout named as such, and a grader test at a kink with ``numerical=True`` naming the kink. Each test failed before
its fix (the repro scripts are under the fix38a branch's repro/ in the session's notes)."""

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
