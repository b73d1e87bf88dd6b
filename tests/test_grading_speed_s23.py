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


def test_tree_cpu_reads_the_same_as_with_file_objects(tmp_path):
    """``sandbox._tree_cpu`` (at every request: the CPU time of the sandbox's process tree) reads ``/proc`` with
    ``os.read`` to each file's end (``_proc_read``), no file object: the same CPU time, state and children as the
    reading it replaced, on a tree of sleeping processes (their CPU time stays put), and 0 for a process gone."""
    import subprocess
    import time

    from gradcheck import sandbox

    def with_files(pid):
        tick, total, busy, todo, seen = os.sysconf("SC_CLK_TCK"), 0, False, [pid], set()
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            try:
                with open(f"/proc/{p}/stat", "rb") as f:
                    fields = f.read().rpartition(b")")[2].split()
                for task in os.listdir(f"/proc/{p}/task"):
                    with open(f"/proc/{p}/task/{task}/children", "rb") as f:
                        todo.extend(int(c) for c in f.read().split())
            except (OSError, ValueError):
                continue
            busy = busy or fields[0] == b"R"
            total += int(fields[11]) + int(fields[12])
        return total / tick, busy, seen

    proc = subprocess.Popen(["sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; sleep 30 & sleep 30 & wait"])
    try:
        deadline = time.monotonic() + 30
        while len(with_files(proc.pid)[2]) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        cpu, busy, seen = with_files(proc.pid)
        assert len(seen) == 3 and cpu > 0  # the shell counted to 30,000 first: some CPU time to read
        assert sandbox._tree_cpu(proc.pid) == (cpu, busy)
        assert sandbox._proc_read(f"/proc/{proc.pid}/stat") == open(f"/proc/{proc.pid}/stat", "rb").read()
    finally:
        proc.kill()
        proc.wait()
    assert sandbox._tree_cpu(proc.pid) == (0.0, False)
