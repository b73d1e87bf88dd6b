"""The sandbox's seccomp filter allows sockets of AF_UNIX alone (redteam37 F1).

A network namespace does not separate every socket family: AF_VSOCK's ports and peers (the hypervisor, CID 2) are
the whole VM's, so a submission in the "no network" sandbox bound a vsock port that a process outside held, and could
connect to the hypervisor. The filter refuses ``socket`` and ``socketpair`` of any family but AF_UNIX with
EAFNOSUPPORT. The script runs with no Python guard at all, in the very bwrap command of the sandbox (as
test_sandbox_seccomp_s18 does): only the operating system stands. Each refused family is one the kernel here has
(AF_INET, AF_INET6, AF_NETLINK are always built in; AF_VSOCK where this is a VM): without the filter they are created,
or refused for want of a privilege (AF_PACKET: EPERM), never with EAFNOSUPPORT.
"""

import errno
import json
import struct

import pytest
from test_sandbox_seccomp_s18 import run_plain

from gradcheck import _seccomp
from gradcheck.sandbox import support

#: The families of <linux/socket.h> the script tries (numbers, not the socket module's names: AF_VSOCK may be missing)
FAMILIES = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16, "AF_PACKET": 17, "AF_ALG": 38,
            "AF_VSOCK": 40}

SCRIPT = r'''
import json, os, socket
if os.getuid() == 0:  # as the sandbox child does first (drop_privileges): a uid of its own
    os.setgroups([]); os.setresgid(62999, 62999, 62999); os.setresuid(62999, 62999, 62999)
out = {}
for name, fam in FAMILIES.items():
    for typ in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_SEQPACKET, socket.SOCK_RAW):
        try:
            socket.socket(fam, typ).close()
            out[name] = "created"
            break
        except OSError as exc:
            out[name] = exc.errno
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.sendall(b"ping")
    out["socketpair_unix"] = b.recv(4).decode()
except OSError as exc:
    out["socketpair_unix"] = exc.errno
try:
    socket.socketpair(socket.AF_INET, socket.SOCK_STREAM)  # the kernel alone: EOPNOTSUPP
    out["socketpair_inet"] = "created"
except OSError as exc:
    out["socketpair_inet"] = exc.errno
print(json.dumps(out))
'''


def test_program_sends_socket_and_socketpair_to_the_family_test():
    """On both machines: socket and socketpair jump to a load of arg0 whose one allowed value is AF_UNIX, and the
    other families return EAFNOSUPPORT."""
    for machine, (nr_socket, nr_pair) in (("x86_64", (41, 53)), ("aarch64", (198, 199))):  # the kernel's numbers
        prog = _seccomp.program(machine)
        ops = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
        at = {k: i for i, (code, _jt, _jf, k) in enumerate(ops) if code == 0x15}
        for nr in (nr_socket, nr_pair):
            target = at[nr] + 1 + ops[at[nr]][1]
            assert ops[target] == (0x20, 0, 0, 16)  # the family, arg0's low 32 bits
            assert [op[3] for op in ops[target + 1:target + 1 + len(_seccomp.SOCKET_FAMILIES)]] == [1]
            refusal = target + 1 + len(_seccomp.SOCKET_FAMILIES)
            assert ops[refusal] == (0x06, 0, 0, 0x00050000 | errno.EAFNOSUPPORT)
            unix = target + 1
            assert ops[unix + 1 + ops[unix][1]] == (0x06, 0, 0, 0x7FFF0000)  # AF_UNIX: allowed


@pytest.mark.skipif(support()[0] == "none" or _seccomp.program() is None, reason="no namespaces or filter here")
def test_bwrap_refuses_every_socket_family_but_unix_without_any_python_guard():
    proc = run_plain(SCRIPT.replace("FAMILIES.items()", repr(FAMILIES) + ".items()"))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["AF_UNIX"] == "created" and out["socketpair_unix"] == "ping", out
    refused = {k: v for k, v in out.items() if k not in ("AF_UNIX", "socketpair_unix")}
    assert refused == dict.fromkeys(refused, errno.EAFNOSUPPORT), out
