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


DENSE = """
import numpy as np

class Dense:
    def __init__(self, n_in, n_out):
        r = np.random.default_rng(0)
        self.W, self.b = r.standard_normal((n_in, n_out)), np.zeros(n_out)

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(axis=0)
        return dY @ self.W.T
"""


def test_twin_without_a_class_of_the_name_says_autoprops_close_names(capsys, tmp_path):
    """newuser42 F3: ``--twin`` on a class named as Keras names it (``Dense``) said only that autoprop has no class of
    that name; it now says which of autoprop's classes it may mean (``Linear``)."""
    from gradcheck.cli import main
    from gradcheck.result import twin_names_near

    f = tmp_path / "dense.py"
    f.write_text(DENSE)
    code = main(["check", f"{f}::Dense", "--init", '{"n_in": 5, "n_out": 3}', "--input-shape", "6,5", "--twin"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0, out
    assert "has no class of that name): Dense; autoprop's close names: Linear (name your class" in out, out
    assert twin_names_near("autoprop.layers.BatchNorm")[:1] == ["BatchNorm1D"]
    assert "Conv2D" in twin_names_near("autoprop.layers.conv_naive")
    assert twin_names_near("autoprop.layers.Relu")[:1] == ["ReLU"]  # case aside (verify42b F9)
    assert twin_names_near("autoprop.layers.Zebra") == []
