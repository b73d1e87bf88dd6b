"""load_level.py FILE LEVEL: load FILE's Linear in the grader's namespaces sandbox at the level given
(``namespaces``: bwrap in a user namespace, as a grader not run as root gets it; ``namespaces+uid``: root's), call
forward once, and print what came back and the child's output. Run as root, ``namespaces`` shows what a non-root
grader's sandbox allows (this machine's Python is under /root, which another uid cannot run)."""
import sys
import numpy as np
from gradcheck import isolation as iso
from gradcheck.sandbox import Sandbox
iso.level_when_available = lambda: sys.argv[2]
with Sandbox(files={"layers.py": sys.argv[1]}, timeout=10, isolation="namespaces", hostile=True) as sb:
    try:
        layer = sb.load_layer("layers.py", "Linear", {"in_features": 5, "out_features": 3})
        print("LOADED", layer.forward(np.ones((2, 5))).shape)
    except Exception as e:  # noqa: BLE001
        print(type(e).__name__, getattr(e, "reason", None), str(e)[:1500])
    print("OUTPUT:", sb.output[-6000:])
