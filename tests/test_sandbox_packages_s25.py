"""review25g M4 (a regression of b28a0db): a data folder of more than PACKAGE_ENTRIES (20,000) files beside the
checked file stopped every local package from being copied into the sandbox, so ``from mypkg.act import tanh``
failed there. The bound now applies to each top folder alone, skipping only that folder (with a warning saying
so), and the entries of folders without .py files are not counted (they are listed, never entered)."""

import os
import warnings

from test_cli import both, run_here, student

from gradcheck import sandbox

TANH = """
import numpy as np
from mypkg.act import tanh


class Tanh:
    def __init__(self):
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        self.Y = tanh(X)
        return self.Y

    def backward(self, dY):
        return dY * (1 - self.Y ** 2)
"""


def _project(tmp_path, n_data):
    f = student(tmp_path, TANH, name="layer.py")
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "act.py").write_text("import numpy as np\n\n\ndef tanh(x):\n    return np.tanh(x)\n")
    (tmp_path / "data").mkdir()
    for i in range(n_data):
        (tmp_path / "data" / f"img{i:05d}.png").write_text("")
    return f


def test_a_large_data_folder_does_not_stop_the_local_package_from_being_copied(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "PACKAGE_ENTRIES", 6)
    f = _project(tmp_path, 7)  # more entries than the bound, no .py among them
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = sorted(sandbox.sibling_files(str(f)))
    assert got == ["layer.py", "mypkg/__init__.py", "mypkg/act.py"] and not seen, (got, [str(w.message) for w in seen])
    p = run_here("check", f"{f}::Tanh", "--input-shape", "4,3")
    assert p.returncode == 0 and "PASS" in both(p), both(p)


def test_a_folder_with_python_past_the_bound_is_skipped_alone_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "PACKAGE_ENTRIES", 6)
    f = _project(tmp_path, 0)
    (tmp_path / "scripts").mkdir()
    for i in range(7):
        (tmp_path / "scripts" / f"s{i}.py").write_text("")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = sorted(sandbox.sibling_files(str(f)))
    assert got == ["layer.py", "mypkg/__init__.py", "mypkg/act.py"], got
    said = [str(w.message) for w in seen]
    assert len(said) == 1 and said[0].startswith("scripts/ ") and "more than 6 entries" in said[0], said
    assert "mypkg" not in said[0], said


def test_too_many_modules_in_one_folder_skip_that_folder_only(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "PACKAGE_FILES", 3)
    f = _project(tmp_path, 0)
    (tmp_path / "zlib_copy").mkdir()
    for i in range(4):
        (tmp_path / "zlib_copy" / f"m{i}.py").write_text("")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = sorted(sandbox.sibling_files(str(f)))
    assert got == ["layer.py", "mypkg/__init__.py", "mypkg/act.py"], got
    assert [str(w.message).split()[0] for w in seen] == ["zlib_copy/"], [str(w.message) for w in seen]
    assert os.path.exists(tmp_path / "zlib_copy" / "m3.py")
