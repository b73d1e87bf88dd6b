"""A BatchNorm that keeps ``self.cache = (xh, var, training)`` reads, in eval mode, ``var`` = its running variance:
check named ``cache[1]`` among the buffers that might be weights, "store dcache[1] in backward" (newuser32 F6). A
cache entry forward writes and backward reads is no weight: said so, and no dcache[1] is asked for."""
import textwrap

from test_cli import both, run_here

BN = textwrap.dedent('''
    import numpy as np


    class BN:
        def __init__(self, D, eps=1e-5, momentum=0.9):
            self.params = {"gamma": np.ones(D) * 1.3, "beta": np.zeros(D) + 0.1}
            self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
            self.rm, self.rv, self.eps, self.m = np.zeros(D) + 0.2, np.ones(D) * 2.0, eps, momentum

        def forward(self, X, training=False):
            g, b = self.params["gamma"], self.params["beta"]
            if training:
                mu, var = X.mean(0), X.var(0)
                self.rm = self.m * self.rm + (1 - self.m) * mu
                self.rv = self.m * self.rv + (1 - self.m) * var
            else:
                mu, var = self.rm, self.rv
            xh = (X - mu) / np.sqrt(var + self.eps)
            self.cache = (xh, var, training)
            return g * xh + b

        def backward(self, dY):
            xh, var, training = self.cache
            g, N = self.params["gamma"], dY.shape[0]
            self.grads["gamma"], self.grads["beta"] = (dY * xh).sum(0), dY.sum(0)
            inv = 1 / np.sqrt(var + self.eps)
            if training:
                dxh = dY * g
                return inv / N * (N * dxh - dxh.sum(0) - xh * (dxh * xh).sum(0))
            return dY * g * inv
''')


def test_a_cache_entry_is_not_named_as_a_weight(tmp_path):
    path = tmp_path / "bn.py"
    path.write_text(BN)
    p = run_here("check", f"{path}::BN", "--input-shape", "6,3", "--init", '{"D": 3}')
    text = " ".join(both(p).split())
    assert p.returncode == 0 and "PASS" in text, text
    assert "dcache[1]" not in text, text  # "If they are weights, store drm, drv, dcache[1] in backward" before
    assert "note: cache[1] is an entry of what forward stores for backward" in text, text
    assert "WARNING: forward uses rm, rv but backward sets no gradient for them (drm, drv)" in text, text
