"""newuser42 F1: a row the table marks ``FAIL (<check>)`` (its compared elements agree; another check found the tensor
wrong) is ``passed: false`` in the JSON report, with the check that failed it, and so is the report's ``result``."""
import json

import numpy as np

from gradcheck import diagnose_layer


class DenseL2Bug:
    """dW = X.T @ dY + 1e-4 W: a weight-decay term in backward that forward does not have (within the comparison's
    tolerance; found by the dY-free probe)."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.W, self.b = rng.standard_normal((5, 3)) * 0.5, rng.standard_normal(3) * 0.1

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY + 1e-4 * self.W, dY.sum(axis=0)
        return dY @ self.W.T


def test_a_row_failed_by_a_probe_is_failed_in_the_json_report():
    d = diagnose_layer(DenseL2Bug(), np.random.default_rng(1).standard_normal((8, 5)))
    assert not d.passed and d.result.passed  # the numbers alone agree: the Python result is the comparison's
    report = json.loads(json.dumps(d.to_dict()))
    rows = {row["tensor"]: row for row in report["result"]["rows"]}
    assert report["passed"] is False and report["result"]["passed"] is False
    assert rows["dW"]["passed"] is False and rows["dW"]["failed_by"] == "dY-free term"
    assert rows["dX"]["passed"] is True and "failed_by" not in rows["dX"]
    assert "FAIL (dY-free term)" in d.report()
