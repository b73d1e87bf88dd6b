"""review24g: a masked cross-entropy whose ``ignore_index`` is a default of forward's own parameter
(``forward(self, logits, labels, ignore_index=-100)``, as torch's ``F.cross_entropy``) was not checked again at that
label: ``compared_constants`` read numbers, module constants and ``self`` attributes, not forward's defaults, so a
backward forgetting the mask PASSed (session 23's re-check covered ``self.ignore_index`` only)."""

from test_cli import both, run_here, student

from gradcheck._switch_reach import compared_constants

LIMIT = 3.0  # a module constant a forward's parameter of the same name hides

CE = """
import numpy as np


class ArgCE:
    def forward(self, logits, labels, ignore_index=-100):
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        self.P, self.labels = e / e.sum(axis=1, keepdims=True), labels
        self.mask = labels != ignore_index
        self.kept = max(int(self.mask.sum()), 1)
        safe = np.where(self.mask, labels, 0)
        return -(np.log(self.P[np.arange(len(labels)), safe]) * self.mask).sum() / self.kept

    def _d(self):
        d = self.P.copy()
        d[np.arange(len(self.labels)), np.where(self.mask, self.labels, 0)] -= 1
        return d

    def backward(self):
        return self._d() * self.mask[:, None] / self.kept


class ArgCENoMask(ArgCE):
    def backward(self):
        return self._d() / self.kept  # BUG: the ignored rows' gradient not masked
"""


def test_a_default_of_forwards_parameter_is_a_constant_it_compares_with():
    class Clip:
        def forward(self, X, lo=0.25, hi=None, training=False):
            return X.clip(lo, 6.0) if hi is None else X

    class Shadow:  # a parameter without a default hides a module constant of the same name
        def forward(self, X, LIMIT):
            return X > LIMIT

    class Module:  # the module constant itself is read
        def forward(self, X):
            return X > LIMIT

    assert compared_constants(Clip()) == [0.25, 6.0]
    assert compared_constants(Module()) == [3.0] and compared_constants(Shadow()) == []


def test_a_masked_loss_whose_ignore_index_is_a_default_is_checked_at_it(tmp_path):
    f = student(tmp_path, CE)
    bad = run_here("check", f"{f}::ArgCENoMask", "--loss", "--input-shape", "12,4", "--targets", "labels")
    text = both(bad)
    assert bad.returncode == 1 and "forward compares labels with -100" in text, text
    assert "whose target is -100, where the loss's gradient is 0" in text, text
    good = run_here("check", f"{f}::ArgCE", "--loss", "--input-shape", "12,4", "--targets", "labels")
    assert good.returncode == 0 and "PASS: ArgCE" in both(good), both(good)
