"""The namespaces sandbox's exact bwrap command (its seccomp filter too), run with a shell probe as the uid given
(65534: the level ``namespaces`` of a grader not run as root; 0: root's command, then the probe as uid 62000 as
the child drops to): can the sandbox nice its own autogroup (/proc/self/autogroup, made by bwrap --new-session)?
Prints the autogroup line after the write, or the refusal."""
import os, subprocess, sys, tempfile  # noqa: E401
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from test_sandbox_dev_redteam31 import _command  # noqa: E402
from gradcheck import isolation as iso  # noqa: E402

PROBE = sys.argv[2] if len(sys.argv) > 2 else ("cat /proc/self/autogroup; (echo 19 > /proc/self/autogroup) 2>&1 && echo WRITTEN; cat /proc/self/autogroup;"
         "ls -ln /proc/self/autogroup")
uid = int(sys.argv[1]) if len(sys.argv) > 1 else 65534
with tempfile.TemporaryDirectory() as d:
    os.chmod(d, 0o755)
    cmd = _command(d, root=uid == 0)
    fd = iso.seccomp_fd()
    i = cmd.index("--")
    cmd = [*cmd[:i], "--seccomp", str(fd), *cmd[i:-3]]
    if uid == 0:  # the child's own drop, as drop_privileges does (setpriv is in /usr/bin, mounted)
        cmd += ["/usr/bin/setpriv", "--reuid", "62000", "--regid", "62000", "--clear-groups"]
    cmd += ["/bin/sh", "-c", PROBE]
    kw = {} if uid == 0 else {"user": uid, "group": uid, "extra_groups": []}
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, pass_fds=(fd,), **kw)
    print(p.returncode, p.stdout, p.stderr[-500:])
