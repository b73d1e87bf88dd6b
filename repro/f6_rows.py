"""corpus37 F6: a conv/pool backward whose loop over output rows stops early gets 'no known bug pattern'."""
# ruff: noqa: E402, I001
import sys
sys.path[:0] = [".", "tests"]
from buggy_layers import diagnose

for key in ("session38b.py::ConvReturnAfterRow", "session38b.py::ConvFirstRowOnly", "session38b.py::ConvRowsColsMissLast", "session38b.py::MaxPoolRowBreak",
            "session38b.py::MaxPoolEight", "session38b.py::ConvRows"):
    d = diagnose(key)
    print(key, d.passed, d.codes)
    print("   ", " ".join(d.sentence().split())[:600])
