# Read every inherited file descriptor, looking for the grader's files.
import os
def _attack(layer, X):
    for fd in range(3, 256):
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if "pipe:" in path or "/dev/" in path:
            continue
        raise RuntimeError("PWNED fd " + path)
    return None
