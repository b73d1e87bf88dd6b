"""The namespaces sandbox's seccomp filter (gradcheck._seccomp), tester18g's HIGH 1 and MEDIUM 4.

A submission that got past the Python audit guard (its tables were reachable) reached the kernel keyrings
with ctypes: a key added to the user keyring of a sandbox uid outlived the sandbox and the uid pool is
reused, so a later student's sandbox read it (hostile b10/b11: 26/28 instead of 14/28); ``memfd_create``
held memory that ``--memory-mb`` (RLIMIT_AS) does not count (b4/memfd_hog). The test runs a plain Python
script, no guard at all, in the very bwrap command of the sandbox: only the operating system stands.
"""

import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from gradcheck import _seccomp
from gradcheck import isolation as iso
from gradcheck.errors import StudentCodeError
from gradcheck.sandbox import Sandbox, support

SCRIPT = r'''
import ctypes, json, os, sys
sys.path.insert(0, SITE)
libc = ctypes.CDLL(None, use_errno=True)
NR = NUMBERS
def call(nr, *args):
    r = libc.syscall(nr, *args)
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())
def memfd():
    try:
        fd = os.memfd_create("hog")
        os.ftruncate(fd, 1 << 20)
        return "ok"
    except OSError as exc:
        return os.strerror(exc.errno)
out = {
    "add_key": call(NR["add_key"], b"user", b"fixg18", b"secret", 6, -4),  # the sandbox uid's user keyring
    "add_key_session": call(NR["add_key"], b"user", b"fixg18", b"secret", 6, -3),
    "keyctl": call(NR["keyctl"], 10, -4, b"user", b"fixg18", 0),  # KEYCTL_SEARCH
    "request_key": call(NR["request_key"], b"user", b"fixg18", None, 0),
    "memfd_create": memfd(),
    "unshare": call(NR["unshare"], 0x10000000),  # CLONE_NEWUSER
    "clone_newuser": call(NR["clone"], 0x10000000 | 17, 0, 0, 0, 0),
    "ptrace": call(NR["ptrace"], 16, 1, 0, 0),  # PTRACE_ATTACH to the namespace's init
    # redteam29b M6: System V IPC (and POSIX message queues) hold kernel memory RLIMIT_AS does not count
    "shmget": call(NR["shmget"], 0, 1 << 20, 0o1600),  # IPC_PRIVATE, IPC_CREAT | 0600
    "shmat": call(NR["shmat"], 0, 0, 0),
    "msgget": call(NR["msgget"], 0, 0o1600),
    "semget": call(NR["semget"], 0, 1, 0o1600),
    "mq_open": call(NR["mq_open"], b"fixd29", 0o100 | 2, 0o600, None),  # O_CREAT | O_RDWR
}
import _thread
try:  # redteam26 L2: clone with CLONE_THREAD, the one Python-independent refusal of a thread
    _thread.start_new_thread(print, ())
    out_thread = "started"
except RuntimeError as exc:
    out_thread = str(exc)
os.environ["OPENBLAS_NUM_THREADS"] = "1"  # as the sandbox sets it: under the filter OpenBLAS cannot start its threads
import numpy
pid = os.fork()  # what the sandbox allows still works: fork, numpy
if pid == 0:
    os._exit(7)
out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
out["numpy"] = float(numpy.arange(4.0).sum())
out["thread"] = out_thread
print(json.dumps(out))
'''


#: The x86_64 numbers of the calls the script makes, from Linux's arch/x86/entry/syscalls/syscall_64.tbl (the same as
#: <asm/unistd_64.h>): the reference the filter's own table (_seccomp._X86_64) is tested against, never that table
#: itself (review30: the script took its numbers from the table it tests, so a wrong number there, shmget -> 67,
#: was called by the script too and still refused: the mutant survived).
X86_64_REFERENCE = {"add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "clone": 56, "ptrace": 101,
                    "shmget": 29, "shmat": 30, "semget": 64, "msgget": 68, "mq_open": 240, "memfd_create": 319}
X86_64_HEADER = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
GENERIC_HEADER = "/usr/include/asm-generic/unistd.h"  # aarch64's numbers


def _header(path: str) -> dict[str, int]:
    """``{name: number}`` of a kernel header's ``#define __NR_name number`` lines; empty when it is not here."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return {}
    return {m[1]: int(m[2]) for m in re.finditer(r"^#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$", text, re.M)}


def test_the_reference_numbers_are_the_kernel_headers():
    numbers = _header(X86_64_HEADER)
    if not numbers:
        pytest.skip(f"no {X86_64_HEADER} here")
    assert {n: numbers[n] for n in X86_64_REFERENCE} == X86_64_REFERENCE


@pytest.mark.parametrize("machine, table, header", [("x86_64", "_X86_64", X86_64_HEADER),
                                                    ("aarch64", "_AARCH64", GENERIC_HEADER)])
def test_the_filters_numbers_are_the_kernels(machine, table, header):
    """Each number of the filter's table is the kernel's for that name: from the header when it is here, else the
    reference list above (x86_64)."""
    numbers = _header(header) or (X86_64_REFERENCE if machine == "x86_64" else {})
    own = getattr(_seccomp, table)
    if not numbers:
        pytest.skip(f"no {header} here")
    wrong = {n: (k, numbers[n]) for n, k in own.items() if n in numbers and numbers[n] != k}
    assert not wrong, wrong  # {name: (the filter's number, the kernel's)}
    if numbers is not X86_64_REFERENCE:
        assert set(own) <= set(numbers), set(own) - set(numbers)


def test_program_is_well_formed():
    """Every denied call has a number on both machines (but x86-only ones), every jump lands inside."""
    for machine, arch in (("x86_64", 0xC000003E), ("aarch64", 0xC00000B7)):
        prog = _seccomp.program(machine)
        ops = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
        assert ops[1][::3] == (0x15, arch) and ops[1][1] == 0  # the arch check: another ABI jumps to EPERM
        assert ops[1 + 1 + ops[1][2]] == (6, 0, 0, 0x50001)
        jumps = [k for code, _jt, _jf, k in ops if code in (0x15, 0x35)]
        table = _seccomp._X86_64 if machine == "x86_64" else _seccomp._AARCH64
        want = {table[n] for n in _seccomp.DENIED if n in table}
        assert want <= set(jumps) and table["keyctl"] in jumps and table["memfd_create"] in jumps
        assert len(want) == len(_seccomp.DENIED) - (0 if machine == "x86_64" else 4)
        for i, (code, jt, jf, _k) in enumerate(ops):
            assert code == 6 or i + 1 + max(jt, jf) < len(ops)  # a return, or a jump that lands inside
        assert ops[-3:] == [(6, 0, 0, 0x7FFF0000), (6, 0, 0, 0x50001), (6, 0, 0, 0x50026)]
        # clone's flags: a new namespace or a new thread (redteam26 L2) jumps to EPERM, else to ALLOW
        jset = [(i, op) for i, op in enumerate(ops) if op[0] == 0x45]
        assert len(jset) == 1 and jset[0][1][3] == _seccomp._CLONE_NEW | _seccomp.CLONE_THREAD
        i, (_, jt, jf, _) = jset[0]
        assert (ops[i + 1 + jt], ops[i + 1 + jf]) == ((6, 0, 0, 0x50001), (6, 0, 0, 0x7FFF0000))
    assert _seccomp.program("riscv64") is None


def run_plain(script: str) -> subprocess.CompletedProcess:
    """Run the Python ``script`` (no guard at all: ``-I -S -c``) in the sandbox's very bwrap command and seccomp filter,
    in an empty folder as its ``/submission``: only the operating system stands."""
    with tempfile.TemporaryDirectory() as work:
        os.chmod(work, 0o755)  # traversable by a uid the script drops to
        fd = iso.seccomp_fd()
        try:
            cmd = iso.bwrap_command(iso.bwrap_path(), work, root=os.geteuid() == 0, seccomp=fd)
            return subprocess.run([*cmd, os.path.realpath(sys.executable), "-I", "-S", "-c", script],
                                  capture_output=True, text=True, timeout=60, pass_fds=(fd,))
        finally:
            os.close(fd)


@pytest.mark.skipif(support()[0] == "none" or _seccomp.program() is None, reason="no namespaces or filter here")
def test_bwrap_denies_keyrings_and_memfd_without_any_python_guard():
    if _seccomp.program() != _seccomp.program("x86_64"):
        pytest.skip("the script's reference numbers are x86_64's")
    numbers = X86_64_REFERENCE  # not the table under test (review30)
    proc = run_plain(SCRIPT.replace("SITE", repr(iso.SITE)).replace("NUMBERS", repr(numbers)))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    denied = {k: v for k, v in out.items() if k not in ("fork", "numpy", "thread")}
    assert denied == dict.fromkeys(denied, "Operation not permitted"), out
    assert (out["fork"], out["numpy"], out["thread"]) == (7, 6.0, "can't start new thread")


MEMFD_LINEAR = '''
import os
import numpy as np

class Linear:
    def __init__(self, in_features, out_features, rng=None):
        self.params = {"W": np.zeros((out_features, in_features)), "b": np.zeros(out_features)}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, X, training=False):
        try:  # no audit event guards memfd_create: only the filter stands
            fd = os.memfd_create("hog")
            os.ftruncate(fd, 64 << 20)
            what = "memfd created"
        except OSError as exc:
            what = exc.strerror
        raise RuntimeError(f"MEMFD {what}")

    def backward(self, dY):
        return dY @ self.params["W"]
'''


@pytest.mark.skipif(not sys.platform.startswith("linux") or _seccomp.program() is None, reason="Linux's seccomp")
def test_process_sandbox_child_installs_the_filter_itself(tmp_path):
    """The process sandbox (gradcheck check, --unsafe-no-isolation) has no bwrap: its child installs the filter
    (prctl) before any submitted code runs. memfd_create, which no audit event guards, fails there too."""
    f = tmp_path / "student.py"
    f.write_text(MEMFD_LINEAR)
    with Sandbox(files={"student.py": str(f)}, timeout=5) as sb:
        assert sb.isolation == "process"
        layer = sb.load_layer("student.py", "Linear", {"in_features": 3, "out_features": 2})
        with pytest.raises(StudentCodeError, match="MEMFD Operation not permitted"):
            layer.forward(np.ones((2, 3)))
