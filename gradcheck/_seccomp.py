"""The seccomp filter of the namespaces sandbox: a classic BPF program, built here in pure Python, that bwrap
loads (``--seccomp FD``) just before it executes the sandbox's interpreter.

Namespaces and a dedicated uid do not isolate what the kernel keeps per uid or outside any namespace: the
kernel keyrings (a key added to the user keyring of a sandbox uid outlives the sandbox and the uid pool is
reused, so a later sandbox running another student's code could read it: a channel between students), another
process's memory, anonymous memory files (``memfd_create``) and System V shared memory and message queues (memory
not counted by ``RLIMIT_AS``), BPF, io_uring,
mounts and new namespaces, and a lower priority, another scheduling policy or a pinned CPU (a submission
starving itself to be granted more time). Each of :data:`DENIED` fails with ``EPERM``; ``clone`` asking for a new namespace
or a new thread (:data:`CLONE_THREAD`: the child runs one thread; Python says "can't start new thread") too; ``clone3`` fails with ``ENOSYS`` (its flags are in memory a filter cannot read; the C library then uses
``clone``); a system call of another ABI (i386 or x32 on x86_64) fails with ``EPERM``. Flatpak's filter, which
bwrap's option was made for, denies the same families. Only x86_64 and aarch64 are known: elsewhere
:func:`program` is None and the sandbox runs without the filter (its other walls hold).
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["CLONE_THREAD", "DENIED", "program"]

#: System calls the sandbox's child may not make (``EPERM``), by family.
DENIED = (
    "keyctl", "add_key", "request_key",  # kernel keyrings: per uid, they outlive the sandbox
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
    "memfd_create", "memfd_secret", "userfaultfd",  # memory outside RLIMIT_AS; page-fault stalls
    "perf_event_open", "bpf", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "unshare", "setns", "name_to_handle_at", "open_by_handle_at", "fanotify_init",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "acct", "swapon",
    "swapoff", "reboot", "syslog", "quotactl", "lookup_dcookie",
    # a lower priority or another policy (os.nice(19), SCHED_IDLE) starved the submission on purpose and claimed
    # the starvation extension of its time limit (tester19g F7); without CAP_SYS_NICE only lowering is possible;
    # so does pinning itself to one busy core (os.sched_setaffinity(0, {0}), tester23g L4)
    "setpriority", "sched_setparam", "sched_setscheduler", "sched_setattr", "sched_setaffinity",
    # System V shared memory, message queues and semaphores, POSIX message queues: kernel memory outside RLIMIT_AS,
    # as memfd_create's (redteam29b M6: shmget + shmat held 1 GiB under --memory-mb 256, for the sandbox's life)
    "shmget", "shmat", "msgget", "semget", "mq_open",
    "iopl", "ioperm", "modify_ldt", "uselib",  # x86_64 only (_X86_64_ONLY)
)

# (audit arch, {name: number}) per machine; the numbers of <asm/unistd_64.h> and <asm-generic/unistd.h>
#: The calls only x86_64 has (aarch64 never had them).
_X86_64_ONLY = ("iopl", "ioperm", "modify_ldt", "uselib")
_X86_64 = dict(zip(
    DENIED + ("clone", "clone3"),
    (250, 248, 249, 101, 310, 311, 312, 438, 440, 319, 447, 323, 298, 321, 425, 426, 427, 165, 166, 155, 161,
     428, 429, 430, 431, 432, 433, 442, 272, 308, 303, 304, 300, 246, 320, 175, 313, 176, 163, 167, 168, 169,
     103, 179, 212, 141, 142, 144, 314, 203, 29, 30, 68, 64, 240, 172, 173, 154, 134, 56, 435), strict=True))
_AARCH64 = dict(zip(
    tuple(n for n in DENIED if n not in _X86_64_ONLY) + ("clone", "clone3"),
    (219, 217, 218, 117, 270, 271, 272, 438, 440, 279, 447, 282, 241, 280, 425, 426, 427, 40, 39, 41, 51, 428,
     429, 430, 431, 432, 433, 442, 97, 268, 264, 265, 262, 104, 294, 105, 273, 106, 89, 224, 225, 142, 116, 60,
     18, 140, 118, 119, 274, 122, 194, 196, 186, 190, 180, 220, 435), strict=True))
_MACHINES = {"x86_64": (0xC000003E, _X86_64), "amd64": (0xC000003E, _X86_64),
             "aarch64": (0xC00000B7, _AARCH64), "arm64": (0xC00000B7, _AARCH64)}
#: clone flags asking for a namespace (user, mount, pid, net, ipc, uts, cgroup)
_CLONE_NEW = 0x10000000 | 0x00020000 | 0x20000000 | 0x40000000 | 0x08000000 | 0x04000000 | 0x02000000
#: the clone flag of a new thread: the child runs one thread (redteam26 L2: a fresh ``_thread`` module made by
#: ``_imp.create_builtin`` undid the child's Python-level refusal; the kernel's refusal cannot be undone from Python)
CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000
# classic BPF opcodes and seccomp return values
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default this one's, ``platform.machine()``) as bytes of ``struct sock_filter``
    (what ``seccomp_export_bpf`` writes and ``bwrap --seccomp`` reads), or None for a machine not known here.

    Parameters
    ----------
    machine : str, optional
        ``x86_64`` or ``aarch64`` (``amd64``, ``arm64``).

    Returns
    -------
    bytes or None
        8 bytes per instruction, native byte order.
    """
    arch, nrs = _MACHINES.get((machine or platform.machine()).lower(), (None, None))
    if arch is None:
        return None
    denied = [nrs[name] for name in DENIED if name in nrs]
    # layout: arch check, [x32 check], one jump per denied call, clone3, clone + its flags, then the returns
    head = [_op(_LD_ABS, 4), _op(_JEQ, arch, 1, 0), _op(_RET, _ERRNO | errno.EPERM), _op(_LD_ABS, 0)]
    body = [("jge", _X32_BIT)] if arch == 0xC000003E else []
    body += [("jeq", nr) for nr in denied]
    n = len(body)  # instructions after the body: clone3, clone, ld arg0, jset, ALLOW, DENY, ENOSYS
    out = [_op(_JGE if kind == "jge" else _JEQ, k, n - i - 1 + 5, 0) for i, (kind, k) in enumerate(body)]
    out += [_op(_JEQ, nrs["clone3"], 5, 0),  # -> ENOSYS
            _op(_JEQ, nrs["clone"], 0, 2),  # not clone -> ALLOW
            _op(_LD_ABS, 16),  # low 32 bits of arg0 (little-endian machines): the flags
            _op(_JSET, _CLONE_NEW | CLONE_THREAD, 1, 0),  # -> DENY
            _op(_RET, _ALLOW), _op(_RET, _ERRNO | errno.EPERM), _op(_RET, _ERRNO | errno.ENOSYS)]
    return b"".join(head + out)
