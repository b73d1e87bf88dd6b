"""redteam38's attacks on the checkout in the working directory (RUN.sh runs this with that checkout's venv, from
its root, so its gradcheck is the one attacked). One line per finding: REPRODUCED / FIXED, or HELD for a wall that
held (or BROKEN for a wall the brief lists that did not). Each attack is a file of this folder; unhook.py is their
shared prelude (switches the child's audit hook off: known, by design, so only the OS walls are met)."""
import json, os, re, shutil, subprocess, sys, tempfile, time  # noqa: E401

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
TMP = tempfile.mkdtemp(prefix="redteam38-")
os.chmod(TMP, 0o755)


def sub(attack, name=None, prelude=True):
    """A submission folder holding layers.py = unhook.py + attack (or attack alone)."""
    d = os.path.join(TMP, "subs", name or attack.split(".")[0])
    os.makedirs(d, exist_ok=True)
    src = open(os.path.join(HERE, attack)).read()
    with open(os.path.join(d, "layers.py"), "w") as fh:
        fh.write((open(os.path.join(HERE, "unhook.py")).read() if prelude else "") + "\n" + src)
    return d


def run(*args, timeout=300):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}  # the checkout's gradcheck, for the drivers here too
    p = subprocess.run([PY, *args], capture_output=True, text=True, timeout=timeout, env=env)
    return p.stdout + p.stderr


def line(verdict, fid, text):
    print(f"{verdict:10s} {fid}: {text}", flush=True)


def lingering():
    """Host pids of sandbox reapers left behind: bwrap processes re-parented to init, paused (F3b's shellcode)."""
    out = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            st = open(f"/proc/{p}/stat").read()
            comm, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
            sysc = open(f"/proc/{p}/syscall").read().split()[0]
        except (OSError, IndexError):
            continue
        if comm == "bwrap" and rest[1] == "1" and sysc == "34":
            out.append(int(p))
    return out


# F1: the sandbox's autogroup niced to 19 (/proc/self/autogroup), at root's level and at a non-root grader's
ag = sub("autogroup_nice.py")
for level, fid in (("namespaces+uid", "F1a (root level: prctl DUMPABLE + /proc/self/autogroup)"),
                   ("namespaces", "F1b (non-root level: /proc/self/autogroup)")):
    out = run(os.path.join(HERE, "load_level.py"), os.path.join(ag, "layers.py"), level)
    m = re.search(r"AUTOGROUP \[.*?\]", out)
    said = m.group(0) if m else out[-300:]
    line("REPRODUCED" if "nice 19" in said else "FIXED", fid, said)

# F3: the child writes into bwrap's pid 1 (non-root level); F3b: pid 1 then outlives the grader
p1 = sub("pid1_mem.py")
out = run(os.path.join(HERE, "load_level.py"), os.path.join(p1, "layers.py"), "namespaces")
m = re.search(r"PID1 [^(]*", out)
line("REPRODUCED" if "PID1_MEM_WRITTEN" in out else "FIXED", "F3 (non-root level: /proc/1/mem of bwrap writable)",
     m.group(0).strip() if m else out[-300:])
before = set(lingering())
lg = sub("pid1_linger.py")
out = run(os.path.join(HERE, "load_level.py"), os.path.join(lg, "layers.py"), "namespaces")
time.sleep(1.0)
left = sorted(set(lingering()) - before)
for pid in left:  # ours: started by this run, killed by pid
    os.kill(pid, 9)
line("REPRODUCED" if left else "FIXED", "F3b (non-root level: bwrap pid 1 hijacked, outlives the grader)",
     f"left behind: pids {left} (killed now)" if left else "nothing left behind; " + " ".join(out.split())[:200])

# F2 (known: test_grading_fix37b's strict xfail) + HELD fds: one graded batch of three
batch = os.path.join(TMP, "batch")
for name in ("policy_control", "policy_tamper"):
    os.makedirs(os.path.join(batch, name))
    shutil.copy(os.path.join(HERE, name + ".py"), os.path.join(batch, name, "layers.py"))
shutil.copytree(sub("fd_probe.py"), os.path.join(batch, "fd_probe"))
out = run("-m", "gradcheck", "grade", batch, "--tests", "assignments/linear_relu_ce/tests", "--out",
          os.path.join(TMP, "graded"), "--workers", "2", "--no-progress", timeout=600)
res = {}
for name in ("policy_control", "policy_tamper", "fd_probe"):
    try:
        res[name] = json.load(open(os.path.join(TMP, "graded", name, "results.json")))
    except OSError:
        res[name] = None
if res["policy_control"] and res["policy_tamper"]:
    c, t = res["policy_control"]["score"], res["policy_tamper"]["score"]
    line("REPRODUCED" if t > c else "FIXED", "F2 (policy counter replaced in the child: central differences)",
         f"tampered {t}/28 vs the same backward untampered {c}/28")
else:
    line("ERROR", "F2", out[-300:])
fd = json.dumps(res["fd_probe"] or {})
m = re.search(r"FDS ([^(]*)", fd)
fds = m.group(1) if m else "?"
extra = [f for f in re.findall(r"(\d+):([^ ]+):", fds) if not f[1].startswith(("pipe", "socket", "/dev/null"))]
line("HELD" if m and not extra else "BROKEN", "H1 (descriptors in a batch of two)", fds.replace("\\\\", "")[:200])

# HELD: the OS walls the brief lists, one probe file; each must be refused by the kernel
op = sub("os_probe.py")
out = run(os.path.join(HERE, "load_level.py"), os.path.join(op, "layers.py"), "namespaces+uid")
m = re.search(r"PROBE (\{.*\})", out)
R = json.loads(m.group(1)) if m else {}
refused = {"io_uring_setup", "userfaultfd", "clone3_newuser", "clone_newuser", "clone_plain(fork)",
           "open_by_handle_at", "name_to_handle_at", "ptrace_attach_1", "process_vm_readv", "kill_1_STOP",
           "tgkill_1", "memfd_create", "shmget", "mq_open", "perf_event_open", "bpf", "keyctl", "unshare_user",
           "setns", "fanotify_init"}
bad = [k for k in refused if not (isinstance(R.get(k), list) and R[k][0] == -1)]
bad += [k for k in ("proc1_mem", "proc1_environ", "proc1_root", "setrlimit_raise_nproc", "af_inet", "af_netlink",
                    "write_submission", "proc_sys_write") if not str(R.get(k, "")).startswith(("Permission", "Value",
                                                                                           "OSError", "FileNot"))]
line("HELD" if R and not bad else "BROKEN", "H2 (root level: io_uring, userfaultfd, clone3/clone new namespaces, fork, "
     "open_by_handle_at, ptrace/process_vm of pid 1, /proc/1/mem, signals to pid 1, memfd, SysV/POSIX shm+mq, "
     "perf, bpf, keyrings, unshare/setns, AF_INET/NETLINK, setrlimit raise)", f"not refused: {bad}" if bad else
     f"{len(refused) + 8} refused by the kernel")

st = sub("sigstop_self.py", prelude=False)
out = run(os.path.join(HERE, "load2.py"), os.path.join(st, "layers.py"))
line("HELD" if "had stopped itself" in out and "Starved" not in out else "BROKEN", "H3 (SIGSTOP of itself in forward)",
     " ".join(out.split())[:160])
shutil.rmtree(TMP, ignore_errors=True)
