"""review26g L4 (session 26, left): ``_log_eps.imported_files`` and ``grading/static``'s guard each walked a file's
imports their own way. One walk now (``gradcheck._import_scan.walk_imports``) over the one reading of imports
(``_imports``), keeping the stricter behaviour of each: the checker's copies follow ``importlib.import_module`` of a
literal name, skip a branch that cannot run, and take every file when a module is named only at run time (or a file
does not parse); the grader's guard keeps following its own modules (relative, packages) as before."""

import os

from gradcheck._import_scan import imported_files, walk_imports
from gradcheck._log_eps import eps_free_texts
from gradcheck.grading.static import unavailable_imports


def _tree(tmp_path, files):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return {rel: str(tmp_path / rel) for rel in files}


def test_the_checkers_walk_reads_imports_as_the_grader_does(tmp_path):
    """import_module("pkg.a") loads pkg/a.py (the old walk missed it: its eps was never taken out); an import under
    ``if False:`` never runs (the old walk named pkg/dead.py's eps); a try-guarded import runs."""
    files = _tree(tmp_path, {
        "main.py": "import importlib\nif False:\n    import pkg.dead\ntry:\n    from pkg import b\nexcept ImportError:\n"
                   "    b = None\nloss = importlib.import_module('pkg.a')\n",
        "pkg/__init__.py": "", "pkg/a.py": "import numpy as np\ndef f(p):\n    return -np.log(p + 1e-7)\n",
        "pkg/b.py": "", "pkg/dead.py": "import numpy as np\ndef g(p):\n    return np.log(p + 1e-6)\n",
        "other.py": "import numpy as np\ndef h(p):\n    return np.log(p + 1e-5)\n"})
    assert imported_files("main.py", files) == ["main.py", "pkg/__init__.py", "pkg/b.py", "pkg/a.py"]
    texts, consts, _ = eps_free_texts(files["main.py"], files)
    assert sorted(texts) == ["pkg/a.py"] and consts == [1e-7]  # not dead.py's 1e-6, not other.py's 1e-5


def test_a_module_named_at_run_time_or_a_file_that_does_not_parse_takes_every_file(tmp_path):
    files = _tree(tmp_path, {"main.py": "import importlib\nname = 'helpers'\nm = importlib.import_module(name)\n",
                             "helpers.py": "", "other.py": ""})
    assert imported_files("main.py", files) == list(files)
    files = _tree(tmp_path / "b", {"main.py": "import helpers\n", "helpers.py": "def (:\n", "other.py": ""})
    assert imported_files("main.py", files) == list(files)
    assert imported_files("absent.py", files) == []


def test_the_one_walk_visits_each_file_once_in_the_order_reached(tmp_path):
    files = _tree(tmp_path, {"a.py": "import b\nimport c\n", "b.py": "import a\nimport c\n", "c.py": "import a\n"})
    seen = []

    def follow(path, node, mod):
        return [files[f"{mod}.py"]] if f"{mod}.py" in files else []

    for path, parsed in walk_imports([files["a.py"]], follow, lambda p: (open(p).read().splitlines(),
                                     __import__("ast").parse(open(p).read())), guarded=True):
        seen.append((os.path.basename(path), [m for _, m in parsed[2]]))
    assert seen == [("a.py", ["b", "c"]), ("b.py", ["a", "c"]), ("c.py", ["a"])]


def test_the_graders_guard_still_follows_its_own_modules(tmp_path):
    """The guard's walk through the submission's own modules (a relative import in a package, a helper beside the
    file) finds what the sandbox cannot import, as before the merge; a guarded import is not reported."""
    files = _tree(tmp_path, {"layers.py": "from pkg import helper\nimport util\n",
                             "pkg/__init__.py": "", "pkg/helper.py": "from . import deep\n",
                             "pkg/deep.py": "import cupy\n", "util.py": "try:\n    import torch\nexcept ImportError:\n"
                                                                        "    torch = None\nimport sklearn\n"})
    got = {(v.file, v.module) for v in unavailable_imports([files["layers.py"]], root=str(tmp_path))}
    assert got == {(os.path.join("pkg", "deep.py"), "cupy"), ("util.py", "sklearn")}


def test_the_sandboxs_package_search_reads_imports_by_the_same_scan(tmp_path):
    """``sandbox._imported_tops`` (which packages above a checked file to copy) was a third reading of imports:
    ``import_module("f.g")`` of a literal is a package it needs (was missed), ``if False: import h`` is not."""
    from gradcheck.sandbox import _imported_tops

    f = tmp_path / "loss.py"
    f.write_text("import importlib\nimport a.b\nfrom c import d\nfrom . import e\nif False:\n    import h\n"
                 "m = importlib.import_module('f.g')\n")
    assert _imported_tops(str(f))[0] == {"importlib", "a", "c", "f"}
