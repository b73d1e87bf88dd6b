"""Run from the worktree root: PYTHONPATH=. .venv/bin/python repro/f5_check_layer_rebuild.py

verify37 F5: check_layer rebuilds the layer for its constructor-argument re-check by copying it and setting the
attribute: a correct Softplus deriving self.inv = 1/beta in __init__ wrongly FAILs at beta=0.7; a 1/p dropout storing
p as self.drop is not re-checked (a wrong PASS, nothing said)."""
import sys

import gradcheck

sys.path[:0] = [".", "tests"]
from tests.test_fix38a import _DropP as DropP  # noqa: E402 - the test's classes, not copies
from tests.test_fix38a import _Softplus as Softplus  # noqa: E402

if __name__ == "__main__":
    r = gradcheck.check_layer(Softplus(1.0), (4, 3), twin=None)
    print("Softplus(beta=1.0), correct:", "PASS" if r.passed else "FAIL", r.name, [n for n in r.notes if "constructor" in n])
    r = gradcheck.check_layer(DropP(0.5), (4, 3), twin=None)
    print("DropP(p=0.5) dividing by p, wrong:", "PASS" if r.passed else "FAIL", r.name,
          [n for n in r.notes if "constructor" in n])
    r = gradcheck.check_layer(DropP(0.5), (4, 3), twin=None, init={"p": 0.5})
    print("DropP(p=0.5), init={'p': 0.5}:", "PASS" if r.passed else "FAIL", r.name,
          [n for n in r.notes if "constructor" in n])
