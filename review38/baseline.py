import subprocess
import time

from mutants import MUTANTS

seen = []
for m in MUTANTS:
    if m[4] not in seen:
        seen.append(m[4])
for t in seen:
    t0 = time.time()
    p = subprocess.run([".venv/bin/python", "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", *t],
                       capture_output=True, text=True)
    print(p.returncode, f"{time.time()-t0:.0f}s", " ".join(t), (p.stdout.strip().splitlines() or [""])[-1], flush=True)
