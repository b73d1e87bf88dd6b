# A hostile layers.py: switches the audit hook off (unhook.py), then tries the OS walls the brief lists and
# raises their outcomes from Linear.__init__, so results.json's first failing test shows them.
# Each probe prints NAME=OUTCOME; "HOLD" means the kernel refused it as the sandbox promises.
import os, errno, json, signal, socket, struct, sys, resource  # noqa: E401
import numpy as np

R = {}
R["unhook"] = unhook()[:12]
import ctypes  # noqa: E402
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def sc(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return r, errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())


def probe(name, fn):
    try:
        R[name] = fn()
    except Exception as e:  # noqa: BLE001
        R[name] = f"{type(e).__name__}:{str(e)[:60]}"


buf = ctypes.create_string_buffer(256)
probe("io_uring_setup", lambda: sc(425, 4, buf))
probe("userfaultfd", lambda: sc(323, 0))
# clone3 with CLONE_NEWUSER in a struct clone_args
ca = ctypes.create_string_buffer(struct.pack("=11Q", 0x10000000, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0), 88)
probe("clone3_newuser", lambda: sc(435, ca, 88))
probe("clone_newuser", lambda: sc(56, 0x10000000 | 17, 0, 0, 0, 0))
probe("clone_plain(fork)", lambda: sc(56, 17, 0, 0, 0, 0))
probe("vfork", lambda: "not tried (would share memory)")
probe("open_by_handle_at", lambda: sc(304, -100, buf, 0))
probe("name_to_handle_at", lambda: sc(303, -100, b"/", buf, buf, 0))
probe("ptrace_attach_1", lambda: sc(101, 16, 1, 0, 0))
probe("process_vm_readv", lambda: sc(310, 1, 0, 0, 0, 0, 0))
probe("pidfd_open_1", lambda: sc(434, 1, 0))
probe("kill_1_STOP", lambda: sc(62, 1, signal.SIGSTOP))
probe("kill_-1_0", lambda: sc(62, -1, 0))
probe("tgkill_1", lambda: sc(234, 1, 1, 0))
probe("memfd_create", lambda: sc(319, b"x", 0))
probe("shmget", lambda: sc(29, 0, 1 << 20, 0o1666))
probe("mq_open", lambda: sc(240, b"x", 0o100, 0o600, 0))
probe("perf_event_open", lambda: sc(298, buf, 0, -1, -1, 0))
probe("bpf", lambda: sc(321, 0, buf, 0))
probe("keyctl", lambda: sc(250, 0, 0, 0, 0, 0))
probe("unshare_user", lambda: sc(272, 0x10000000))
probe("setns", lambda: sc(308, 0, 0))
probe("personality", lambda: sc(135, 0xffffffff))
probe("ioctl_tiocsti_0", lambda: sc(16, 0, 0x5412, ctypes.c_char_p(b"x")))
probe("inotify_init", lambda: sc(253))
probe("fanotify_init", lambda: sc(300, 0, 0))
probe("landlock_create", lambda: sc(444, 0, 0, 1))
probe("seccomp_get_notif_sizes", lambda: sc(317, 3, 0, buf))
probe("mseal/mprotect", lambda: "skip")
probe("setrlimit_raise_nproc", lambda: (resource.setrlimit(resource.RLIMIT_NPROC, (1000, 1000)), "RAISED")[1])
probe("rlimits", lambda: {n: resource.getrlimit(getattr(resource, "RLIMIT_" + n)) for n in ("NPROC", "AS", "CPU", "NOFILE", "FSIZE")})
probe("ids", lambda: (os.getresuid(), os.getresgid(), os.getgroups()))
def _fds():
    out = {}
    for f in os.listdir("/proc/self/fd"):
        try:
            out[f] = (os.readlink(f"/proc/self/fd/{f}"), os.get_inheritable(int(f)))
        except OSError:
            pass
    return out


probe("fds", _fds)
probe("fd_flags", lambda: {int(f): (os.get_inheritable(int(f))) for f in os.listdir("/proc/self/fd") if f.isdigit() and int(f) > 2 and os.path.exists(f"/proc/self/fd/{f}")})
probe("proc_pids", lambda: sorted(p for p in os.listdir("/proc") if p.isdigit()))
probe("proc1_status_uid", lambda: [ln for ln in open("/proc/1/status") if ln.startswith(("Uid", "CapEff", "NoNewPrivs", "Seccomp"))])
probe("proc_self_status", lambda: [ln.strip() for ln in open("/proc/self/status") if ln.startswith(("Uid", "CapEff", "NoNewPrivs", "Seccomp", "CapBnd"))])
probe("proc1_mem", lambda: open("/proc/1/mem", "rb").read(1))
probe("proc1_environ", lambda: open("/proc/1/environ", "rb").read(200))
probe("proc1_root", lambda: os.listdir("/proc/1/root/"))
probe("proc1_fd", lambda: os.listdir("/proc/1/fd"))
probe("unix_abstract", lambda: open("/proc/net/unix").read()[:300])
probe("abstract_connect", lambda: socket.socket(socket.AF_UNIX).connect("\0/tmp/.X11-unix/X0"))
probe("af_inet", lambda: socket.socket(socket.AF_INET))
probe("af_netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
probe("sysfs", lambda: os.listdir("/sys")[:5])
probe("proc_sys_write", lambda: open("/proc/sys/kernel/hostname", "w").write("x"))
probe("proc_sysrq", lambda: open("/proc/sysrq-trigger", "w").write("h"))
probe("dev_list", lambda: os.listdir("/dev"))
probe("tmp_statvfs", lambda: (os.statvfs("/tmp").f_blocks * os.statvfs("/tmp").f_bsize, os.statvfs("/tmp").f_files))
probe("write_submission", lambda: open("/submission/x", "w").write("x"))
probe("mountinfo_n", lambda: len(open("/proc/self/mountinfo").read().splitlines()))
probe("cgroup", lambda: open("/proc/self/cgroup").read()[:100])
probe("cgroupfs", lambda: os.listdir("/sys/fs/cgroup")[:5])

OUT = json.dumps(R, default=str)


class Linear:
    def __init__(self, *a, **k):
        sys.stderr.write("PROBE " + OUT + "\n")
        sys.stderr.flush()
        os._exit(3)

    def forward(self, X, training=False):
        return X

    def backward(self, dY):
        return dY
