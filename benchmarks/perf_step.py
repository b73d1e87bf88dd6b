"""Where a training step's CPU time goes, by library: the interpreter, numpy, BLAS, libc, the kernel.

``train_step.py``'s MLP step (plain numpy, manualprop, autoprop) run ``--steps`` times in a
child process that ``perf record -e cpu-clock -p`` samples only while those steps run (after its
imports and 50 warm-up steps; CPU-time samples of that process, so other load on the machine is
not counted), divided by the steps: microseconds a step in each shared object and symbol.
cProfile cannot split a layer's own time into its Python and its arithmetic, and callgrind counts
instructions, not the cache misses that make the same Python slower after a large array went
through the cache (session 31 of docs/speed.md); this can. Session 34 read with it why
manualprop's extra time over plain numpy is larger at 64-256-10 B64 than at 64-32-10 B16: the
interpreter's share, not extra arithmetic. Usage::

    python benchmarks/perf_step.py                       # both sizes, the three engines
    python benchmarks/perf_step.py --batch 64 --top 25   # one size, more symbols

Needs Linux ``perf`` allowed to sample its own child (the software ``cpu-clock`` event, no
hardware counters: ``kernel.perf_event_paranoid`` <= 2). Not run by ``make bench``.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _blas import blas_kernel, one_blas_thread  # noqa: E402  (benchmarks/ is no package)

HZ = 4000  # samples per CPU-second
ENGINES = ("plain", "manual", "auto")
#: the rows of the library table: a shared object's name starts with the key
LIBRARIES = (("libpython", "interpreter"), ("_multiarray_umath", "numpy"), ("libscipy_openblas", "BLAS"),
             ("libc.so", "libc"), ("[kernel", "kernel"))
_ROW = re.compile(r"\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[.\]\s+(.*)")  # "  12.34%   567  libfoo.so  [.] symbol"


def child(engine: str, batch: int, steps: int) -> None:
    """The profiled process: 50 warm-up steps of ``engine``, "ready" and the BLAS on stdout, then
    ``steps`` steps once a line comes on stdin (the profiler attached), then exit at once."""
    import train_step as ts

    sizes = {b: s for s, b, _manual, _auto in ts.SIZES}[batch]
    X, y = ts.digits_batch(batch)
    cls = {"plain": ts.PlainNumpy, "manual": ts.Manualprop, "auto": ts.Autoprop}[engine]
    step = cls(ts.initial_weights(sizes), X, y).step
    with one_blas_thread():
        for _ in range(50):
            step()
        print("ready", blas_kernel(), flush=True)
        sys.stdin.readline()
        for _ in range(steps):
            step()
    os._exit(0)  # no interpreter shutdown (its collection of every object) inside the samples


def _wait_attached(perf_pid: int, timeout: float = 60.0) -> None:
    """Return once ``perf record -p`` (process ``perf_pid``) has opened its counters on the child (it
    holds a ``perf_event`` file descriptor), and half a second more; at most ``timeout`` seconds.

    A fixed half second was too short on a loaded machine: at load 29 (session 35) perf started after
    the child had run its 200 steps and exited, and ``perf record`` failed (exit 255) for want of a
    process to attach to."""
    fds, end = f"/proc/{perf_pid}/fd", time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if any(os.readlink(os.path.join(fds, fd)) == "anon_inode:[perf_event]" for fd in os.listdir(fds)):
                break
        except OSError:  # perf not started yet, or a descriptor closed while we looked
            pass
        time.sleep(0.01)
    time.sleep(0.5)  # (its counters are enabled just after they are opened)


def per_step(engine: str, batch: int, steps: int, tmp: str) -> tuple[dict, str]:
    """Microseconds a step per (shared object, symbol), sampled while the child's steps run, and
    the child's BLAS (:func:`blas_kernel`)."""
    data = os.path.join(tmp, f"{engine}{batch}.data")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, str(batch), str(steps)]
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        ready, _, kernel = proc.stdout.readline().strip().partition(" ")
        if ready != "ready":
            raise SystemExit(f"perf_step.py: the {engine} B{batch} child did not start")
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ), "-o", data,
                                 "-p", str(proc.pid)], stdout=subprocess.DEVNULL)
        _wait_attached(perf.pid)  # the child waits idle meanwhile
        proc.stdin.write("go\n")
        proc.stdin.close()
        proc.wait()
    if perf.wait() != 0 or proc.returncode:
        raise SystemExit(f"perf_step.py: perf record failed for {engine} B{batch} (perf_event_paranoid?)")
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym", "-n", "--stdio"],
                         check=True, capture_output=True, text=True).stdout
    us = collections.defaultdict(float)
    for line in out.splitlines():
        m = _ROW.match(line)
        if m:
            us[(m.group(2), m.group(3).strip())] += int(m.group(1)) / HZ / steps * 1e6
    return us, kernel


def library(dso: str) -> str:
    """The row of the library table a shared object is counted in."""
    return next((name for prefix, name in LIBRARIES if dso.startswith(prefix)), "other")


def table(batch: int, steps: int, top: int, tmp: str) -> None:
    """Print one size's table: us a step by library, then the ``top`` symbols, per engine."""
    runs = {e: per_step(e, batch, steps, tmp) for e in ENGINES}
    us = {e: d for e, (d, _kernel) in runs.items()}
    print(f"\nbatch {batch} ({steps} steps each; us a step from CPU-time samples at {HZ} Hz; "
          f"BLAS: {runs[ENGINES[0]][1]})")
    print(f"  {'':<34}" + "".join(f"{e:>10}" for e in ENGINES))
    libs = collections.defaultdict(collections.Counter)
    for e, d in us.items():
        for (dso, _sym), v in d.items():
            libs[library(dso)][e] += v
    for name in [n for _, n in LIBRARIES] + ["other"]:
        print(f"  {name:<34}" + "".join(f"{libs[name][e]:>10.1f}" for e in ENGINES))
    print(f"  {'step':<34}" + "".join(f"{sum(us[e].values()):>10.1f}" for e in ENGINES))
    print(f"  the {top} symbols of most time in any engine:")
    keys = set().union(*us.values())
    for k in sorted(keys, key=lambda k: -max(us[e].get(k, 0.0) for e in ENGINES))[:top]:
        print(f"  {k[1][:34]:<34}" + "".join(f"{us[e].get(k, 0.0):>10.1f}" for e in ENGINES)
              + f"  {library(k[0])}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, choices=(16, 64), action="append",
                        help="16 (64-32-10) or 64 (64-256-10); both when not given")
    parser.add_argument("--steps", type=int, default=None,
                        help="steps a run (default: 20,000 at B16, 5,000 at B64)")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--child", nargs=3, metavar=("ENGINE", "BATCH", "STEPS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]), int(args.child[2]))
        return 0
    if args.steps is not None and args.steps < 1:
        parser.error(f"--steps must be at least 1; got {args.steps}")
    if shutil.which("perf") is None:
        print("perf_step.py: Linux perf is not installed (Debian: apt-get install linux-perf)")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        for batch in args.batch or (64, 16):
            table(batch, args.steps or {16: 20000, 64: 5000}[batch], args.top, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
