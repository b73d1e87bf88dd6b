"""Session 23 (issue 15, the grader's speed): what each grading child repeated is done once, with the same result."""

import os
import sys

from gradcheck.grading import runner


def test_realpath_with_folders_resolved_once_is_os_realpath(tmp_path):
    """``runner._realpath`` resolves each folder once for :func:`runner.tests_imports` (650 modules live in about 60
    folders): the same path as ``os.path.realpath`` for plain files, links to files, files in linked folders, a
    link to a link, ``..`` and ``.``, relative names, missing files and every module loaded now."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.py").write_text("")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "b.py").write_text("")
    os.symlink(tmp_path / "real", tmp_path / "linked")
    os.symlink(tmp_path / "other" / "b.py", tmp_path / "real" / "c.py")
    os.symlink(tmp_path / "real" / "c.py", tmp_path / "real" / "d.py")
    names = ["real/a.py", "linked/a.py", "linked/c.py", "real/d.py", "linked/../other/b.py", "real/./a.py",
             "real/missing.py", "linked/missing.py", "real/..", "linked/.", "real/"]
    paths = [str(tmp_path / n) for n in names] + [os.path.join("tests", "x.py"), "x.py", ""]
    paths += [m.__file__ for m in list(sys.modules.values()) if isinstance(getattr(m, "__file__", None), str)]
    folders: dict[str, str] = {}
    got = [runner._realpath(p, folders) for p in paths + paths]  # the second time from the memo
    assert got == [os.path.realpath(p) for p in paths + paths]
    assert runner._realpath(str(tmp_path / "linked" / "c.py"), folders) == str(tmp_path / "other" / "b.py")
    assert len(folders) < len(paths) / 3
