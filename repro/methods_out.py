"""Tensor methods' positional out: x.sum(0, None, buf) refused with out= wording; x.any(0, buf) writes buf."""
# ruff: noqa: E402, I001
import sys
sys.path[:0] = ["."]
import numpy as np
import autoprop as ap

x = ap.Variable([[1.0, -2.0], [0.0, 4.0]])
for label, call in [
    ("sum(0, None, buf)", lambda: x.sum(0, None, np.zeros(2))),
    ("mean(0, None, buf)", lambda: x.mean(0, None, np.zeros(2))),
    ("max(0, buf)", lambda: x.max(0, np.zeros(2))),
    ("clip(0, 1, buf)", lambda: x.clip(0, 1, np.zeros((2, 2)))),
    ("cumsum(0, None, buf)", lambda: x.cumsum(0, None, np.zeros((2, 2)))),
    ("std(0, None, buf)", lambda: x.std(0, None, np.zeros(2))),
    ("round(0, buf)", lambda: x.round(0, np.zeros((2, 2)))),
    ("dot(y, buf)", lambda: x.dot(x, np.zeros((2, 2)))),
    ("sum(out=buf)", lambda: x.sum(out=np.zeros(()))),
    ("np.any(x, 0, out=buf)", lambda: np.any(x, 0, out=np.zeros(2, bool))),
    ("np.sum(int, out=buf)", lambda: np.sum(ap.constant([1, 2]), out=np.zeros((), int))),
]:
    try:
        r = call()
        print(f"{label}: ran ->", r)
    except Exception as e:
        print(f"{label}: {type(e).__name__}: {e}")
for meth in ("any", "all", "argmax", "argmin"):
    buf = np.zeros(2, dtype=bool if meth in ("any", "all") else np.int64)
    try:
        r = getattr(x, meth)(0, buf)
        print(f"{meth}(0, buf): ran ->", r, "buf now", buf)
    except Exception as e:
        print(f"{meth}(0, buf): {type(e).__name__}: {e}")
