"""fix37a's leftover: an LSTM step's doubled dW_ih at a batch of 2 was read as 'a 1/batch is missing'."""
# ruff: noqa: E402, I001
import sys
sys.path[:0] = [".", "tests"]
from buggy_layers.session36 import LSTMCellTorch
from gradcheck.diagnose import diagnose_layer


class LSTMCellTorchDWih2(LSTMCellTorch):
    def backward(self, dh, dc):
        out = super().backward(dh, dc)
        self.grads["W_ih"] = 2.0 * self.grads["W_ih"]  # BUG: dW_ih doubled
        return out


for n in (2, 3):
    d = diagnose_layer(LSTMCellTorchDWih2(), [(n, 2), (n, 4), (n, 4)])
    print(n, d.codes, " ".join(d.sentence().split())[:700])

# CS231n's pair (Wx an input): dWx doubled
import inspect
import subprocess
import tempfile
from buggy_layers import session24 as s

src = "\n\n".join(inspect.getsource(f) for f in (s.sigmoid, s.lstm_step_forward, s.lstm_step_backward))
src = "import numpy as np\n\n" + src.replace("x.T.dot(da), prev_h", "2 * x.T.dot(da), prev_h")
with tempfile.TemporaryDirectory() as d:
    open(f"{d}/pair.py", "w").write(src)
    for n in (2, 3):
        p = subprocess.run([sys.executable, "-m", "gradcheck", "check", f"{d}/pair.py::lstm_step_forward", "--input-shape",
                            f"{n},2;{n},4;{n},4;2,16;4,16;16"], capture_output=True, text=True)
        out = " ".join(p.stdout.split())
        print(n, p.returncode, out[out.find("diagnosis"):][:300])
