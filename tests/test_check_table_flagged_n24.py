"""A tensor a structural check found wrong is not ``ok`` in the table (newuser24 L4).

``gradcheck check hunt.py::OneEntry --mode sample`` (dX off by 1e-4 in one entry the 8 sampled elements missed)
printed the row ``dX (8, 5) 3.3e-10 ... 8/40 ok`` above "FAIL: OneEntry: wrong result of dX": the probe "backward
linear in dY" had caught it, and nothing in the table said so. The row now reads ``FAIL (not linear in dY)``.
"""

import numpy as np

from gradcheck.cli import main
from gradcheck.diagnose import diagnose_layer

ONE_ENTRY = """
import numpy as np

class OneEntry:
    def forward(self, X):
        self.X = X
        return np.tanh(X)

    def backward(self, dY):
        dX = dY * (1 - np.tanh(self.X) ** 2)
        dX[0, 0] += 1e-4  # BUG: one entry off, and not times dY
        return dX
"""


class OneEntry:
    def forward(self, X, training=False):
        self.X = X
        return np.tanh(X)

    def backward(self, dY):
        dX = dY * (1 - np.tanh(self.X) ** 2)
        dX[0, 0] += 1e-4
        return dX


def _row(text: str, tensor: str) -> str:
    return next(line for line in text.splitlines() if line.split()[:2] in (["OneEntry", tensor], [tensor]))


def test_the_row_of_a_tensor_a_probe_failed_says_which_check(tmp_path, capsys):
    f = tmp_path / "hunt.py"
    f.write_text(ONE_ENTRY)
    code = main(["check", f"{f}::OneEntry", "--input-shape", "8,5", "--mode", "sample"])
    out = capsys.readouterr().out
    assert code == 1, out
    row = _row(out, "dX")
    assert "8/40" in row and row.endswith("FAIL (not linear in dY)"), out
    assert "FAIL OneEntry dX (not linear in dY): the compared elements agree with the numerical gradient" in " ".join(
        out.split()), out
    assert "FAIL: OneEntry: wrong result of dX." in out


def test_diagnosis_report_marks_the_row_and_a_pass_is_unchanged():
    diag = diagnose_layer(OneEntry(), (8, 5), mode="sample")
    assert not diag.passed and diag.result.records[0].passed  # the sampled elements agree: the probe failed it
    assert _row(diag.report(), "dX").endswith("FAIL (not linear in dY)"), diag.report()
    assert _row(diag.result.table(), "dX").endswith("ok")  # the comparison alone, as before
    good = diagnose_layer(type("Tanh", (), {"forward": OneEntry.forward,
                                            "backward": lambda s, dY: dY * (1 - np.tanh(s.X) ** 2)})(), (8, 5),
                          mode="sample")
    assert good.passed and good.flagged() == {} and "FAIL" not in good.report()
