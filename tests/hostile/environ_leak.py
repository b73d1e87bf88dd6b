# Quote the grader's environment (the parent's /proc/<pid>/environ, and our own).
import os
def _attack(layer, X):
    text = repr(dict(os.environ))
    for pid in [os.getppid(), *range(1, 64)]:
        try:
            text += open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
        except BaseException:
            pass
    if "GRADCHECK_HOSTILE_CANARY" in text:
        raise RuntimeError("PWNED " + text[:300])
    return None
