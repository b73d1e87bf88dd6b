# ruff: noqa: E402, E701, E702, E731, B023  (a case script: sys.path set first, terse probes)
"""corpus38 F7, F8: two autoprop refusals met in scikit-network's GNN code. Usage: python autoprop_findings.py CHECKOUT"""
import os
import sys

sys.path.insert(0, os.path.abspath(sys.argv[1]))
import numpy as np
from scipy import sparse

import autoprop as ap
import autoprop.scipy.special as aps

# F7: the escape warning advises autoprop.scipy.special.softmax "(the same signature, recorded)"; on a plain array it
# returns a Tensor, so the library's own numpy path (sknetwork loss.py: one_hot = np.zeros_like(probs); one_hot[i, y] = 1)
# raises once the import is swapped, where scipy's (and HIPS autograd's twins) return an ndarray
probs = aps.softmax(np.array([[1.0, 2.0], [0.5, 0.1]]), axis=1)
try:
    one_hot = np.zeros_like(probs); one_hot[np.arange(2), [0, 1]] = 1
    ok = True
except TypeError:
    ok = False
print(f"F7 {'FIXED' if ok else 'REPRODUCED'}: autoprop.scipy.special.softmax(ndarray) is a {type(probs).__name__}; "
      f"np.zeros_like of it then one_hot[i, y] = 1 {'works' if ok else 'raises TypeError (Tensors are immutable)'}")

# F8: Tensor @ scipy.sparse matrix: a ValueError about gufunc dimensions that does not say "sparse"
A = sparse.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
x = ap.Variable(np.ones((2, 3)))
msg = ""
with ap.GradientTape():
    try:
        x.T @ A
    except Exception as e:  # noqa: BLE001
        msg = f"{type(e).__name__}: {e}"
print(f"F8 {'REPRODUCED' if msg and 'sparse' not in msg else 'FIXED'}: Tensor @ scipy.sparse.csr_matrix -> {msg[:200] or 'no error'}")
