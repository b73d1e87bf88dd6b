"""load.py FILE [uid]: load FILE's Linear in the grader's namespaces sandbox (as grading does) and print what came
back (the exception's message and the child's output). A quick driver for developing the attacks; RUN.sh grades."""
import sys
import numpy as np
from gradcheck.sandbox import Sandbox
path = sys.argv[1]
with Sandbox(files={"layers.py": path}, timeout=10, isolation="namespaces", hostile=True) as sb:
    try:
        layer = sb.load_layer("layers.py", "Linear", {"in_features": 5, "out_features": 3})
        print("LOADED", layer.forward(np.ones((2, 5))))
    except Exception as e:  # noqa: BLE001
        print(type(e).__name__, getattr(e, "reason", None), str(e)[:3000])
        print("OUTPUT:", getattr(e, "output", "")[-6000:])
