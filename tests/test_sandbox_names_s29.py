"""gradcheck.sandbox: a submitted file's name and folders never lead the grader's copy out of place (redteam29).

F5: a file named ``a\\..\\..\\...\\tmp\\x\\conftest.py`` (one legal Linux file name: a backslash is a plain character)
was read by ``os.path.normpath`` before its backslashes became separators, so the ``..`` check passed and the grader
created the file at the absolute path it spells, as root, before any student code ran (a conftest.py planted in the
staff's tests forged the next submissions' scores). F4: a folder of a submission swapped for a link between the copy's
check (by path) and its open (by path) made the open follow the link: a staff file copied into the sandbox. Each test
here is a hostile submission and fails on the code before the fix.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from gradcheck.errors import UsageError
from gradcheck.sandbox import Sandbox, support

LAYER = textwrap.dedent("""
    import numpy as np

    class Linear:
        def __init__(self, n_in, n_out):
            self.params = {"W": np.ones((n_out, n_in))}
            self.grads = {}

        def forward(self, X, training=False):
            self.X = X
            return X @ self.params["W"].T

        def backward(self, dY):
            self.grads = {"W": dY.T @ self.X}
            return dY @ self.params["W"]
""")

PLANT = "def pytest_unconfigure(config):\n    open('/tmp/forged', 'w').write('28/28')\n"


def _backslash_name(target_dir: str) -> str:
    """One file name that, its backslashes read as separators, climbs to / and goes down to target_dir/conftest.py."""
    return "a\\" + "..\\" * 30 + target_dir.strip("/").replace("/", "\\") + "\\conftest.py"


def _submission(tmp_path, target):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "layers.py").write_text(LAYER)
    evil = _backslash_name(str(target))
    (sub / evil).write_text(PLANT)  # one file at the submission's top
    return sub, evil


@pytest.mark.parametrize("isolation", ["process", "namespaces"])
def test_a_backslash_name_is_refused_and_nothing_is_written_outside(tmp_path, isolation):
    if isolation == "namespaces" and support()[0] == "none":
        pytest.skip("no namespaces here")
    target = tmp_path / "staff" / "tests"
    target.mkdir(parents=True)
    sub, evil = _submission(tmp_path, target)
    files = {"layers.py": str(sub / "layers.py"), evil: str(sub / evil)}
    with Sandbox(files=files, hostile=True, isolation=isolation, timeout=20) as sb:
        copied = sorted(os.listdir(sb.workdir))
        notes = sb.notes
        layer = sb.load_layer("layers.py", "Linear", {"n_in": 5, "n_out": 3})
        assert layer.params["W"].shape == (3, 5)  # the correct file beside it is graded
    assert not (target / "conftest.py").exists()  # before: created there, with the submission's bytes
    assert os.listdir(target) == []
    assert "layers.py" in copied and evil not in copied and not any("\\" in c for c in copied)
    assert len(notes) == 1 and "was not copied into the sandbox" in notes[0] and "backslash" in notes[0]


def test_gradcheck_check_isolation_namespaces_writes_nothing_outside(tmp_path):
    # F5b: the mode for a file one did not write copies its folder as the grader does
    if support()[0] == "none":
        pytest.skip("no namespaces here")
    target = tmp_path / "elsewhere"
    target.mkdir()
    sub, evil = _submission(tmp_path, target)
    init = "{\"n_in\": 5, \"n_out\": 3}"
    r = subprocess.run([sys.executable, "-m", "gradcheck", "check", "layers.py::Linear", "--init", init,
                        "--input-shape", "4,5", "--isolation", "namespaces"], cwd=sub, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    assert os.listdir(target) == [], r.stdout + r.stderr  # before: elsewhere/conftest.py, exit 0
    assert "backslash" in r.stdout + r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("name, why", [
    ("a\\b.py", "backslash"), ("../x.py", "'..'"), ("a/../../x.py", "'..'"), ("/etc/x.py", "absolute"),
    ("a//b.py", "empty part"), ("", "empty"), ("a\0b.py", "NUL")])
def test_submitted_parts_refuses_every_name_that_could_leave_the_folder(name, why):
    from gradcheck.sandbox import submitted_parts

    with pytest.raises(ValueError, match=why):
        submitted_parts(name)


def test_submitted_parts_and_inside_on_plain_names(tmp_path):
    from gradcheck.sandbox import inside, submitted_parts

    assert submitted_parts("mypkg/sub/mod.py") == ("mypkg", "sub", "mod.py")
    assert submitted_parts("./layers.py") == ("layers.py",)
    (tmp_path / "w").mkdir()
    os.symlink("/etc", tmp_path / "w" / "out")
    assert inside(str(tmp_path / "w"), str(tmp_path / "w" / "a" / "b.py"))  # not created yet: still resolved
    assert not inside(str(tmp_path / "w"), str(tmp_path / "w" / "out" / "b.py"))  # through a link
    assert not inside(str(tmp_path / "w"), str(tmp_path / "w" / "a" / ".." / ".." / "b.py"))
    assert not inside(str(tmp_path / "w"), str(tmp_path / "wx" / "b.py"))  # a prefix of the name is not inside


def test_a_trusted_callers_bad_name_is_still_a_usage_error(tmp_path):
    (tmp_path / "x.py").write_text("x = 1\n")
    for name in ("../x.py", "a\\..\\..\\x.py"):
        with pytest.raises(UsageError, match="must be a relative path inside the sandbox"):
            Sandbox(files={name: str(tmp_path / "x.py")})


def _race_submission(tmp_path):
    """sub/q/x/S/secret.py (the student's placeholder) and staff/secret.py (the staff's file)."""
    staff = tmp_path / "staff"
    staff.mkdir()
    (staff / "secret.py").write_text("SECRET = 'the hidden tests'\n")
    folder = tmp_path / "sub" / "q" / "x" / "S"
    folder.mkdir(parents=True)
    (folder / "secret.py").write_text("X = 1\n")
    (tmp_path / "sub" / "layers.py").write_text(LAYER)
    return tmp_path / "sub", staff, folder


def test_a_folder_swapped_for_a_link_while_copied_never_reads_the_staff_file(tmp_path, monkeypatch):
    # F4, deterministically: the swap (a renameat2(RENAME_EXCHANGE) in the attack) is made just before the grader opens
    # the file, after every check; the copy must read the folder it checked, not the link now in its place
    sub, staff, folder = _race_submission(tmp_path)
    real_open, swapped = os.open, []

    def open_then_swap(path, *args, **kw):
        if os.path.basename(os.fspath(path)) == "secret.py" and not swapped:
            os.rename(folder, folder.with_name("S_old"))
            os.symlink(staff, folder)
            swapped.append(path)
        return real_open(path, *args, **kw)

    monkeypatch.setattr(os, "open", open_then_swap)
    files = {"layers.py": str(sub / "layers.py"), "q/x/S/secret.py": str(folder / "secret.py")}
    with Sandbox(files=files, hostile=True, isolation="process", timeout=20) as sb:
        monkeypatch.setattr(os, "open", real_open)
        with open(os.path.join(sb.workdir, "q", "x", "S", "secret.py")) as fh:
            copied = fh.read()
    assert swapped
    assert "SECRET" not in copied and copied == "X = 1\n"  # before: the staff's file, copied into the sandbox


def test_a_folder_that_is_a_link_when_walked_is_refused_with_a_note(tmp_path):
    sub, staff, folder = _race_submission(tmp_path)
    os.rename(folder, folder.with_name("S_old"))
    os.symlink(staff, folder)
    files = {"layers.py": str(sub / "layers.py"), "q/x/S/secret.py": str(folder / "secret.py")}
    with Sandbox(files=files, hostile=True, isolation="process", timeout=20) as sb:
        assert not os.path.exists(os.path.join(sb.workdir, "q", "x", "S", "secret.py"))
        assert sb.notes == ["q/x/S/secret.py was not copied into the sandbox: its folder q/x/S/ is a symbolic link "
                            "or not a folder (links are never followed)."]


def test_a_gradient_with_40_axes_is_a_wrong_shape_not_a_forged_frame(tmp_path):
    # F3: numpy allows 64 axes; a db of 40 was read as a malformed protocol frame ("Does the code write to file
    # descriptors it does not own?") and the sandbox's restart cost the right dX and dW too
    import numpy as np

    from gradcheck.grading.checks import layer_gradients
    from manualprop import Linear as RefLinear

    src = LAYER.replace('self.params = {"W": np.ones((n_out, n_in))}',
                        'self.params = {"W": np.ones((n_out, n_in)), "b": np.zeros(n_out)}')
    src = src.replace('self.grads = {"W": dY.T @ self.X}',
                      'self.grads = {"W": dY.T @ self.X, "b": dY.sum(axis=0).reshape((1,) * 39 + (-1,))}')
    src = src.replace('return X @ self.params["W"].T', 'return X @ self.params["W"].T + self.params["b"]')
    (tmp_path / "layers.py").write_text(src)
    with Sandbox(files={"layers.py": str(tmp_path / "layers.py")}, hostile=True, timeout=20) as sb:
        layer = sb.load_layer("layers.py", "Linear", {"n_in": 5, "n_out": 3})
        layer.forward(np.ones((4, 5)))
        layer.backward(np.ones((4, 3)))
        assert layer.grads["b"].shape == (1,) * 39 + (3,)
        ref = RefLinear(5, 3)
        ref.params["W"][...] = 1.0
        ref.params["b"][...] = 0.0
        verdict = layer_gradients(layer, np.random.default_rng(0).standard_normal((4, 5)), ref,
                                  parts={"dX": 2, "dW": 2, "db": 2}, params=ref.params)
        assert not sb._dead  # no restart
    got = {p.name: (p.passed, " ".join(p.message.split())) for p in verdict.parts}
    assert got["dX"][0] and got["dW"][0], got  # before: lost with the sandbox's restart
    assert not got["db"][0] and "malformed" not in got["db"][1] and "file descriptors" not in got["db"][1], got
    assert "(3,)" in got["db"][1], got
