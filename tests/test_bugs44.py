"""Realistic buggy layers from public reports (session 43's bugs43 cases, their sources outside the tree) that
``gradcheck check`` FAILed without naming, or named misleadingly, now named (session 44, bugs44); written here in
those layouts, not copied. Each named reading is a hypothesis confirmed numerically (a candidate gradient computed
and compared), never the source read; the right layer beside each keeps passing unnamed.

- bugs43 L6: ``gradcheck.diagnose_layer`` (the API) and ``gradcheck check`` give one verdict on a dropout whose drop
  probability p is scaled by 1/p (CS231n's keep-probability formula): the own-mean check runs in the diagnosis.
"""

import gradcheck

KEEP_DROP = """
class Drop:
    def __init__(self, p=0.5, seed=0):
        self.p = p
        self.rng = np.random.default_rng(seed)
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        if not training:
            self.mask = None
            return X
        self.mask = (self.rng.random(X.shape) >= self.p) / DIVISOR
        return X * self.mask

    def backward(self, dY):
        return dY if self.mask is None else dY * self.mask
"""


def _layer(source: str, name: str, **kw):
    ns: dict = {}
    exec(source, ns)  # noqa: S102 - the test's own layer, in this process
    return ns[name](**kw)


def test_the_api_fails_a_drop_probability_scaled_by_one_over_p_as_the_cli_does():
    d = gradcheck.diagnose_layer(_layer(KEEP_DROP.replace("DIVISOR", "self.p"), "Drop", p=0.3), (6, 5))
    assert not d.passed and "own-mean" in [f.code for x in [d, *d.other_modes] for f in x.findings], d.codes
    ok = gradcheck.diagnose_layer(_layer(KEEP_DROP.replace("DIVISOR", "(1 - self.p)"), "Drop", p=0.3), (6, 5))
    assert ok.passed, ok.codes
