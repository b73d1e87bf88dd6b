# ruff: noqa: E402, I001
"""fix37h's leftover: an LSTM step pair whose weights are one per gate (Wf, Wi, Wo, Wg on [x, h], each (D + H, H))
is not recognised as an LSTM step (diagnose._cell_kind): its doubled dx gets attention's or 1/batch's words.
The pair is tests/buggy_layers/session38b.py's (read with inspect), checked through the CLI at batches 2, 3, 4."""
import inspect
import subprocess
import sys
import tempfile

sys.path[:0] = [".", "tests"]
from buggy_layers import session38b as s

SRC = "import numpy as np\n\n" + "\n\n".join(inspect.getsource(f) for f in (
    s.sigmoid, s.lstmsplit_forward, s.lstmsplit_backward, s.lstmsplitdx2_backward)).replace(
    "lstmsplitdx2_backward", "lstm_dx2_backward").replace("lstmsplit_forward", "lstm_dx2_forward") + (
    "\n\nlstmsplit_forward = lstm_dx2_forward\n")

with tempfile.TemporaryDirectory() as d:
    open(f"{d}/pair.py", "w").write(SRC)
    for name in ("lstmsplit", "lstm_dx2"):
        for n in (2, 3, 4):
            p = subprocess.run([sys.executable, "-m", "gradcheck", "check", f"{d}/pair.py::{name}_forward",
                                "--input-shape", f"{n},2;{n},4;{n},4;6,4;6,4;6,4;6,4;4;4;4;4"],
                               capture_output=True, text=True)
            out = " ".join((p.stdout + p.stderr).split())
            print(name, n, p.returncode, out[out.find("diagnosis"):][:400] if "diagnosis" in out else out[-200:])
