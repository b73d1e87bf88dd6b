"""One reader of the imports a file makes (``grading/static._imports``), for the grader's two purposes: what a
submission imports that the sandbox lacks (``unavailable_imports``, which reads the own modules it imports) and
what the grading tests import from outside their folder (``runner._static_imports``, the resume digest). Session
20 merged ``runner``'s own walk into it: an import either reader saw, both see."""
import textwrap
from pathlib import Path

from gradcheck.grading import runner
from gradcheck.grading.static import forbidden_imports, unavailable_imports


def _tree(root):
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helper.py").write_text("import scipy\n")
    (root / "sibling.py").write_text("import tqdm\n")
    (root / "layers.py").write_text(textwrap.dedent("""\
        import numpy as np
        from . import sibling
        from pkg import helper
        """))


def test_a_submission_s_relative_import_and_package_submodule_are_read(tmp_path):
    _tree(tmp_path)
    found = [(v.file, v.line, v.module) for v in unavailable_imports([str(tmp_path / "layers.py")])]
    # before: neither own module was read (relative imports were skipped, only a top-level helper.py followed)
    assert found == [("helper.py", 1, "scipy"), ("sibling.py", 1, "tqdm")]
    got = forbidden_imports([str(tmp_path / "layers.py")], ["sibling", "pkg"])
    assert [(v.line, v.module) for v in got] == [(3, "pkg")]  # a relative import is the submission's own


def test_the_grading_tests_relative_import_package_submodule_and_exec_are_digested(tmp_path, monkeypatch):
    staff = tmp_path / "staff"
    staff.mkdir()
    _tree(staff)
    (staff / "extra_s20.py").write_text("X = 1\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "helper_s20.py").write_text("Y = 2\n")
    (tests / "test_a.py").write_text(textwrap.dedent("""\
        from . import helper_s20
        from pkg import helper
        exec("import extra_s20")
        """))
    monkeypatch.syspath_prepend(str(staff))
    hits, dynamic = runner._static_imports(str(tests))
    files = sorted(str(p.relative_to(tmp_path)) for _, f in hits for p in [Path(f)])
    assert files == ["staff/extra_s20.py", "staff/pkg/__init__.py", "staff/pkg/helper.py", "tests/helper_s20.py"]
    assert dynamic == []  # before: exec's import was not read (no file, no dynamic mark)


def _saito_layout(root):
    """Deep Learning from Scratch 2's layout (tester25s): the checked file beside a package ``common`` whose
    modules import the package by its name (``from common.np import *``), and ``if GPU: import cupy``."""
    (root / "common").mkdir()
    (root / "common" / "__init__.py").write_text("")
    (root / "common" / "config.py").write_text("GPU = False\n")
    (root / "common" / "np.py").write_text("from common.config import GPU\nif GPU:\n    import cupy as np\n"
                                           "else:\n    import numpy as np\n")
    (root / "common" / "functions.py").write_text("from common.np import *\nimport scipy\n")
    (root / "layers.py").write_text("from common.functions import *\n")


def test_a_package_module_importing_its_package_by_name_is_the_submission_s_own(tmp_path):
    _saito_layout(tmp_path)
    found = [(v.file, v.line, v.module, v.condition) for v in unavailable_imports([str(tmp_path / "layers.py")])]
    # before: `common` was looked for beside common/functions.py (inside common/), not found, and reported as
    # a missing module in functions.py and np.py; and cupy's import was reported as unconditional
    assert found == [("functions.py", 2, "scipy", None), ("np.py", 3, "cupy", "GPU")]


def test_check_words_a_conditional_import_as_conditional(tmp_path, capsys):
    from gradcheck.cli import _warn_unavailable_imports

    _saito_layout(tmp_path)
    _warn_unavailable_imports([str(tmp_path / "layers.py")])
    out = " ".join(capsys.readouterr().out.split())
    assert "imports common" not in out
    elsewhere = ("(in a module layers.py imports, directly or through its package, not in the checked file; whether "
                 "the checked code runs it is not known)")  # tester31m L3
    assert (f"WARNING: np.py:3 {elsewhere} imports cupy (`import cupy as np`) under `if GPU:`, which the grader's "
            "sandbox does not provide") in out and "fails if `GPU` is true there" in out
    cupy = out[out.index("np.py:3"):]
    assert "remove it" not in cupy.split("WARNING")[0]
    assert f"WARNING: functions.py:2 {elsewhere} imports scipy (`import scipy`), which" in out  # unconditional
