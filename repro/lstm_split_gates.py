# ruff: noqa: E402, I001
"""fix37h's leftover: an LSTM step pair whose weights are one per gate (Wf, Wi, Wo, Wg on [x, h], each (D + H, H))
is not recognised as an LSTM step (diagnose._cell_kind): its doubled dx gets attention's or 1/batch's words."""
import subprocess
import sys
import tempfile

SRC = '''
import numpy as np


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def lstm_step_forward(x, prev_h, prev_c, Wf, Wi, Wo, Wg, bf, bi, bo, bg):
    z = np.concatenate([x, prev_h], axis=1)
    f, i, o = sigmoid(z @ Wf + bf), sigmoid(z @ Wi + bi), sigmoid(z @ Wo + bo)
    g = np.tanh(z @ Wg + bg)
    next_c = f * prev_c + i * g
    next_h = o * np.tanh(next_c)
    return next_h, next_c, (z, prev_c, f, i, o, g, next_c, Wf, Wi, Wo, Wg)


def lstm_step_backward(dnext_h, dnext_c, cache):
    z, prev_c, f, i, o, g, next_c, Wf, Wi, Wo, Wg = cache
    tc = np.tanh(next_c)
    dc = dnext_c + dnext_h * o * (1 - tc ** 2)
    daf, dai = dc * prev_c * f * (1 - f), dc * g * i * (1 - i)
    dao, dag = dnext_h * tc * o * (1 - o), dc * i * (1 - g ** 2)
    dz = daf @ Wf.T + dai @ Wi.T + dao @ Wo.T + dag @ Wg.T
    D = z.shape[1] - prev_c.shape[1]
    return (FACTOR * dz[:, :D], dz[:, D:], dc * f, z.T @ daf, z.T @ dai, z.T @ dao, z.T @ dag,
            daf.sum(0), dai.sum(0), dao.sum(0), dag.sum(0))
'''

with tempfile.TemporaryDirectory() as d:
    for factor in (1, 2):
        open(f"{d}/pair.py", "w").write(SRC.replace("FACTOR", str(factor)))
        for n in (2, 3, 4):
            p = subprocess.run([sys.executable, "-m", "gradcheck", "check", f"{d}/pair.py::lstm_step_forward",
                                "--input-shape", f"{n},2;{n},4;{n},4;6,4;6,4;6,4;6,4;4;4;4;4"],
                               capture_output=True, text=True)
            out = " ".join((p.stdout + p.stderr).split())
            print(factor, n, p.returncode, out[out.find("diagnosis"):][:400] if "diagnosis" in out else out[-300:])
