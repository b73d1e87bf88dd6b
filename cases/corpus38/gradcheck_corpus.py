# ruff: noqa: E402, E701, E702, E731, B023  (a case script: sys.path set first, terse probes)
"""corpus38 part (b) and the findings: `gradcheck check` on public numpy layers with hand-written backward, each
verdict set against central differences computed here. Usage: python gradcheck_corpus.py CHECKOUT UPSTREAM_DIR.
Prints one line per finding, REPRODUCED or FIXED, and `U<n>` lines for the upstream bugs (not ours)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

CHECKOUT, UP = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.join(CHECKOUT, ".venv", "bin", "python")
sys.path.insert(0, CHECKOUT); sys.path.insert(1, HERE)
import numpy as np
from common import central, relerr

HIP, AKI = f"{UP}/wiseodd+hipsternet", f"{UP}/AkiRusProd+numpy-transformer"
TMP = tempfile.mkdtemp(prefix="c38-")

def check(target, *args, cwd=None):
    env = dict(os.environ, PYTHONPATH=CHECKOUT, COLUMNS="200")
    p = subprocess.run([PY, "-m", "gradcheck", "check", "--isolation", "process", target, *args], cwd=cwd or CHECKOUT,
                       env=env, capture_output=True, text=True, timeout=600)
    return p.returncode, re.sub(r"\s*\n\s*", " ", p.stdout + p.stderr)

def line(fid, reproduced, text):
    print(f"{fid} {'REPRODUCED' if reproduced else 'FIXED'}: {text}")

# a copy of numpy-transformer that imports here: numba (in its requirements, not installed) stubbed, and
# transformer/layers/__init__.py added (F1's workaround)
AKI2 = f"{TMP}/aki"; shutil.copytree(AKI, AKI2)
shutil.copy(f"{HERE}/numba_stub.py", f"{AKI2}/transformer/numba.py")
shutil.copy(f"{HERE}/numba_stub.py", f"{AKI2}/transformer/layers/combined/numba.py")
open(f"{AKI2}/transformer/layers/__init__.py", "w").close()
MHA = "transformer/layers/combined/self_attention.py::MultiHeadAttention"
MHA_INIT = '{"d_model": 8, "heads_num": 2, "dropout": 0.0}'

# F1: transformer/layers/ holds only sub-folders (base/, combined/): not copied into the sandbox
code, out = check(MHA, "--input-shape", "2,3,8;2,4,8;2,4,8;2,1,4", "--indices", "3:2", "--init", MHA_INIT, cwd=AKI)
line("F1", "No module named 'transformer.layers'" in out,
     f"numpy-transformer's {MHA} from its root (exit {code}): "
     + (re.search(r"ModuleNotFoundError: No module named '[^']+'", out) or re.search(r"gradcheck:.{0,160}|.{0,160}", out)).group(0))

# F2: a float-input layer beside an integer mask whose backward returns one gradient per float input
ATT = textwrap.dedent('''
    import numpy as np

    class MaskedAttention:
        """Scaled dot-product attention with a 0/1 key mask, backward returning (dq, dk, dv): corpus38's own."""
        def __init__(self):
            self.params, self.grads = {}, {}

        def forward(self, q, k, v, mask):
            self.q, self.k, self.v = q, k, v
            s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
            s = np.where(mask == 0, -1e9, s)
            p = np.exp(s - s.max(-1, keepdims=True))
            self.p = p / p.sum(-1, keepdims=True)
            return self.p @ v

        def backward(self, dy):
            dv = self.p.transpose(0, 2, 1) @ dy
            dp = dy @ self.v.transpose(0, 2, 1)
            ds = self.p * (dp - (dp * self.p).sum(-1, keepdims=True)) / np.sqrt(self.q.shape[-1])
            return ds @ self.k, ds.transpose(0, 2, 1) @ self.q, dv
''')
os.makedirs(f"{TMP}/att"); open(f"{TMP}/att/att.py", "w").write(ATT)
code, out = check(f"{TMP}/att/att.py::MaskedAttention", "--input-shape", "2,3,4;2,5,4;2,5,4;2,1,5", "--indices", "3:2")
line("F2", code == 1 and "dmask is missing" in out, f"a correct masked attention, backward -> (dq, dk, dv): exit {code}, "
     + (re.search(r"(PASS|FAIL)[^:]*:[^.]*\.|gradcheck: wrong result.{0,120}", out) or re.search(".{0,150}", out)).group(0)[:220])
code, out = check(MHA, "--input-shape", "3,3,8;3,4,8;3,4,8;3,1,4", "--indices", "3:2", "--init", MHA_INIT, cwd=AKI2)
line("F2b", "dmask is missing" in out, f"numpy-transformer's MultiHeadAttention (batch 3): exit {code}, "
     + (re.search(r"diagnosis:.{0,140}", out) or re.search(r"gradcheck: wrong result.{0,160}", out) or re.search(".{0,150}", out)).group(0))

# F3: hipsternet's bn_forward(X, gamma, beta, cache, momentum, train) -> (out, cache, running_mean, running_var)
HIPC = f"{TMP}/hip"; shutil.copytree(f"{HIP}/hipsternet", f"{HIPC}/hipsternet")
code, out = check(f"{HIPC}/hipsternet/layer.py::bn", "--input-shape", "5,4;4;4")
line("F3a", "needs cache, which no --init gives" in out, f"bn without --init: exit {code}: " + out[out.find("gradcheck"):][:200])
code, out = check(f"{HIPC}/hipsternet/layer.py::bn", "--input-shape", "5,4;4;4", "--init", '{"cache": [[0,0,0,0],[1,1,1,1]]}')
claims = re.search(r"given to the (constructor|forward function) as float64 arrays", out) is not None
line("F3b", "can't multiply sequence" in out or "multiple values for argument 'cache'" in out,
     f"bn with --init cache (header {'says' if claims else 'does not say'} arrays): exit {code}: "
     + (re.search(r"gradcheck: .{0,220}|(PASS|FAIL): .{0,100}", out) or re.search(".{0,100}", out)).group(0))
src = open(f"{HIPC}/hipsternet/layer.py").read().replace("def bn_forward(X, gamma, beta, cache,", "def bn_forward(X, gamma, beta, running,").replace(
    "running_mean, running_var = cache", "running_mean, running_var = np.asarray(running)")
os.makedirs(f"{TMP}/hip3/hipsternet"); [shutil.copy(f"{HIPC}/hipsternet/{f}", f"{TMP}/hip3/hipsternet/") for f in os.listdir(f"{HIPC}/hipsternet") if f.endswith(".py")]
open(f"{TMP}/hip3/hipsternet/layer.py", "w").write(src)
code, out = check(f"{TMP}/hip3/hipsternet/layer.py::bn", "--input-shape", "5,4;4;4", "--init", '{"running": [[0,0,0,0],[1,1,1,1]]}')
line("F3c", "cannot read what bn_forward returned" in out, f"bn returning (out, cache, running_mean, running_var): exit {code}: "
     + (re.search(r"(PASS|FAIL): .{0,120}|gradcheck: .{0,200}", out) or re.search(".{0,100}", out)).group(0))

# F4: hipsternet maxpool_backward reads `n, d, w, h = X.shape`: right on square inputs only
sys.path.insert(2, HIP)
import hipsternet.layer as hl


def pool_err(shape):
    X = np.random.default_rng(0).normal(size=shape); out, cache = hl.maxpool_forward(X)
    G = np.random.default_rng(1).normal(size=out.shape)
    return relerr(hl.maxpool_backward(G, cache), central(lambda a: float(np.sum(hl.maxpool_forward(a[0])[0] * G)), [X])[0])
e_sq, e_rect = pool_err((2, 3, 4, 4)), pool_err((2, 3, 4, 6))
c_sq, o_sq = check(f"{HIPC}/hipsternet/layer.py::maxpool", "--input-shape", "2,3,4,4")
c_re, o_re = check(f"{HIPC}/hipsternet/layer.py::maxpool", "--input-shape", "2,3,4,6")
warned = re.search(r"square|height and width|H == W|H = W", o_sq, re.I) is not None
line("F4", c_sq == 0 and not warned, f"maxpool (central differences here: rel err {e_sq:.1e} at 4x4, {e_rect:.1e} at 4x6): "
     f"gradcheck 2,3,4,4 exit {c_sq} {'with' if warned else 'without'} a square-input warning; 2,3,4,6 exit {c_re}: "
     + (re.search(r"diagnosis:.{0,110}", o_re) or re.search(".{0,80}", o_re)).group(0))

# F5: numpy-transformer's LayerNormalization backward keeps gamma outside the sums (right for equal gammas only)
sys.path.insert(2, AKI2)
import transformer.layers.base.layer_norm as lnm

ln = lnm.LayerNormalization(6, data_type=None); r = np.random.default_rng(0)
ln.gamma, ln.beta = 1 + 0.5 * r.normal(size=6), r.normal(size=6)
X, G = r.normal(size=(2, 3, 6)), r.normal(size=(2, 3, 6))
ln.forward(X); dX = ln.backward(G)
num = central(lambda a: float(np.sum(ln.forward(a[0]) * G)), [X])[0]
code, out = check("transformer/layers/base/layer_norm.py::LayerNormalization", "--input-shape", "2,3,6", "--init",
                  '{"normalized_shape": 6, "data_type": null}', cwd=AKI2)
line("F5", "no known bug pattern" in out, f"LayerNormalization (central differences here: dX rel err {relerr(dX, num):.1e} at drawn gamma): exit {code}, "
     + (re.search(r"diagnosis:.{0,150}", out) or re.search(".{0,80}", out)).group(0))

# F6: --constants scale refused where the (masked) batch of one does not move the output with scale
code, out = check(MHA, "--input-shape", "1,3,8;1,4,8;1,4,8;1,1,4", "--indices", "3:2", "--init", MHA_INIT, "--constants", "scale", cwd=AKI2)
line("F6", code == 2 and "not an array attribute forward reads" in out, f"MultiHeadAttention batch 1 --constants scale: exit {code}: "
     + out[out.find("gradcheck"):][:200])

# F9 (by design?): hipsternet fc_backward's db (H,) for a bias (1, H): values right, shape wrong -> FAIL
code, out = check(f"{HIPC}/hipsternet/layer.py::fc", "--input-shape", "4,5;5,3;1,3")
line("F9", code == 1 and "values right, shape wrong" in out, f"fc with b (1, 3): exit {code}: " + (re.search(r"FAIL: .{0,60}", out) or re.search(".{0,60}", out)).group(0))

# upstream bugs gradcheck names (not ours): numpy-transformer Softmax backward's / batch_size
code, out = check("transformer/activations.py::Softmax", "--input-shape", "3,5", cwd=AKI2)
print(f"U3 upstream AkiRusProd/numpy-transformer activations.py Softmax.backward divides by batch_size: gradcheck exit {code}, "
      + (re.search(r"diagnosis:.{0,90}", out) or re.search(".{0,80}", out)).group(0))
shutil.rmtree(TMP, ignore_errors=True)
