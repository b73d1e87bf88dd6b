"""review38's mutant driver: apply one hand-made mutant by text replacement, run the tests named for it, restore.

Usage (from the worktree root): .venv/bin/python review38/mutate.py [ID ...] [--baseline] [--timeout S]

Each mutant of mutants.MUTANTS is (id, file, old, new, tests, what): ``old`` must occur exactly once in ``file``
(the driver refuses otherwise, so no mutant silently hits another line). The file is restored with
``git checkout -- FILE`` in a ``finally`` (and its .pyc removed before and after, so no stale bytecode of a same-sized
mutant is imported). Results are appended to mutants.tsv: id, KILLED/SURVIVED/TIMEOUT/BAD, seconds, tests.
``--baseline`` runs each mutant's tests on the unmutated code (a killed mutant means nothing when its tests fail
anyway).
"""

import glob
import os
import subprocess
import sys
import time

from mutants import MUTANTS

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the worktree (this file is in review38/)
PY = os.path.join(HERE, ".venv", "bin", "python")


def _drop_pyc(path):
    d, base = os.path.split(path)
    for f in glob.glob(os.path.join(HERE, d, "__pycache__", base[:-3] + ".*.pyc")):
        os.remove(f)


def _run(tests, timeout):
    cmd = [PY, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", *tests]
    t0 = time.time()
    try:
        # PYTHONPATH: the grading child imports this tree's gradcheck (without it, runner._child_env lets the child
        # import the editable install, /work/main: a mutant of the grader's plugin or checks is never run there)
        env = {**os.environ, "PYTHONPATH": HERE}
        p = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "TIMEOUT", time.time() - t0, ""
    tail = (p.stdout.strip().splitlines() or [""])[-1]
    return p.returncode, time.time() - t0, tail


def run_one(m, timeout, baseline=False):
    mid, path, old, new, tests, what = m
    full = os.path.join(HERE, path)
    src = open(full).read()
    if src.count(old) != 1:
        return "BAD", 0.0, f"old text occurs {src.count(old)} times"
    if subprocess.run(["git", "diff", "--quiet", "--", path], cwd=HERE).returncode != 0:
        return "BAD", 0.0, "file already modified"
    try:
        if not baseline:
            with open(full, "w") as f:
                f.write(src.replace(old, new))
        _drop_pyc(path)
        rc, secs, tail = _run(tests, timeout)
    finally:
        subprocess.run(["git", "checkout", "--", path], cwd=HERE, check=True)
        _drop_pyc(path)
    if rc == "TIMEOUT":
        return "TIMEOUT", secs, tail
    if baseline:
        return ("BASE-OK" if rc == 0 else f"BASE-FAIL(rc={rc})"), secs, tail
    return ("SURVIVED" if rc == 0 else "KILLED" if rc == 1 else f"ERROR(rc={rc})"), secs, tail


def main():
    args = sys.argv[1:]
    baseline = "--baseline" in args
    timeout = 900
    if "--timeout" in args:
        timeout = float(args[args.index("--timeout") + 1])
        args = [a for a in args if a != str(args[args.index("--timeout") + 1])]
    ids = [a for a in args if not a.startswith("--")]
    chosen = [m for m in MUTANTS if not ids or m[0] in ids]
    if os.environ.get("MUTATE_TESTS"):  # the killing tests of review38 in place of each mutant's own
        chosen = [(*m[:4], os.environ["MUTATE_TESTS"].split(), m[5]) for m in chosen]
    with open(os.path.join(HERE, "review38", os.environ.get("MUTATE_LOG") or ("mutants.tsv" if not baseline else "baseline.tsv")), "a") as log:
        for m in chosen:
            verdict, secs, tail = run_one(m, timeout, baseline)
            line = f"{m[0]}\t{verdict}\t{secs:.0f}s\t{' '.join(m[4])}\t{tail}"
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()


if __name__ == "__main__":
    main()
