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
``clone``); a system call of another ABI (i386 or x32 on x86_64) fails with ``EPERM``; ``socket`` and ``socketpair``
of any family but AF_UNIX fail with ``EAFNOSUPPORT`` (:data:`SOCKET_FAMILIES`: the network namespace leaves AF_VSOCK
the VM's, redteam37 F1). Flatpak's filter, which bwrap's option was made for, denies most of these calls too and
also allows only a list of socket families. Only x86_64 and aarch64 are known: elsewhere
:func:`program` is None and the sandbox runs without the filter (its other walls hold).
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["CLONE_THREAD", "DENIED", "SOCKET_FAMILIES", "program"]

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

#: The socket families the sandbox's child may create (``socket``, ``socketpair``); any other fails with
#: ``EAFNOSUPPORT``, as the kernel answers a family it does not have. AF_UNIX alone: the child's own sockets come
#: from its parent as descriptors, and a network namespace does not separate every family: AF_VSOCK's ports and
#: peers (the hypervisor, CID 2) are the whole VM's (redteam37 F1: a sandbox bound a vsock port a process outside
#: held; AF_INET reached the host's network from the process sandbox, past the audit hook: redteam37 F2c). Flatpak's
#: filter allows a list of families too, and Docker's default profile refuses AF_VSOCK.
SOCKET_FAMILIES = (1,)  # AF_UNIX

# (audit arch, {name: number}) per machine; the numbers of <asm/unistd_64.h> and <asm-generic/unistd.h>
#: The calls only x86_64 has (aarch64 never had them).
_X86_64_ONLY = ("iopl", "ioperm", "modify_ldt", "uselib")
_X86_64 = dict(zip(
    DENIED + ("clone", "clone3", "socket", "socketpair"),
    (250, 248, 249, 101, 310, 311, 312, 438, 440, 319, 447, 323, 298, 321, 425, 426, 427, 165, 166, 155, 161,
     428, 429, 430, 431, 432, 433, 442, 272, 308, 303, 304, 300, 246, 320, 175, 313, 176, 163, 167, 168, 169,
     103, 179, 212, 141, 142, 144, 314, 203, 29, 30, 68, 64, 240, 172, 173, 154, 134, 56, 435, 41, 53), strict=True))
_AARCH64 = dict(zip(
    tuple(n for n in DENIED if n not in _X86_64_ONLY) + ("clone", "clone3", "socket", "socketpair"),
    (219, 217, 218, 117, 270, 271, 272, 438, 440, 279, 447, 282, 241, 280, 425, 426, 427, 40, 39, 41, 51, 428,
     429, 430, 431, 432, 433, 442, 97, 268, 264, 265, 262, 104, 294, 105, 273, 106, 89, 224, 225, 142, 116, 60,
     18, 140, 118, 119, 274, 122, 194, 196, 186, 190, 180, 220, 435, 198, 199), strict=True))
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

    Its decisions, in order: another ABI (audit arch, x32 bit): ``EPERM``; a call of :data:`DENIED`: ``EPERM``;
    ``clone3``: ``ENOSYS``; ``socket`` or ``socketpair`` of a family other than :data:`SOCKET_FAMILIES`:
    ``EAFNOSUPPORT``; ``clone`` with a flag of :data:`_CLONE_NEW` or :data:`CLONE_THREAD`: ``EPERM``; anything else
    is allowed. Classic BPF jumps forward only, so every test jumps to the returns at the end.

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
    # (opcode, k, where to go if true, if false): a label of the returns below, or None for the next instruction
    code = [(_LD_ABS, 4, None, None), (_JEQ, arch, None, "deny"), (_LD_ABS, 0, None, None)]
    if arch == 0xC000003E:  # x32's numbers have this bit set
        code.append((_JGE, _X32_BIT, "deny", None))
    code += [(_JEQ, nrs[name], "deny", None) for name in DENIED if name in nrs]
    code += [(_JEQ, nrs["clone3"], "enosys", None),
             (_JEQ, nrs["socket"], "family", None),
             (_JEQ, nrs["socketpair"], "family", None),
             (_JEQ, nrs["clone"], None, "allow"),
             (_LD_ABS, 16, None, None),  # low 32 bits of arg0 (little-endian machines): the flags
             (_JSET, _CLONE_NEW | CLONE_THREAD, "deny", "allow")]
    returns = {"allow": _ALLOW, "deny": _ERRNO | errno.EPERM, "enosys": _ERRNO | errno.ENOSYS}
    # socket(family, type, protocol): the kernel reads the family as an int, the low 32 bits of arg0
    family = [(_LD_ABS, 16, None, None)] + [(_JEQ, f, "allow", None) for f in SOCKET_FAMILIES]
    family.append((_RET, _ERRNO | errno.EAFNOSUPPORT, None, None))
    where = {"family": len(code), **{name: len(code) + len(family) + i for i, name in enumerate(returns)}}
    out = []
    for i, (op, k, jt, jf) in enumerate(code + family + [(_RET, v, None, None) for v in returns.values()]):
        out.append(_op(op, k, where[jt] - i - 1 if jt else 0, where[jf] - i - 1 if jf else 0))
    return b"".join(out)
