"""newuser37 F6, F6b, F8: an eval output graded after training forwards (a TA's test of BatchNorm's running statistics)
said only "the output differs ... (no known bug pattern)" where ``gradcheck check`` named the bug. The grader now reads
the running statistics the reference holds (``running_*``, ``moving_*``) from the student's layer before and after
the eval forward (:func:`gradcheck.grading.checks._running_stats_said`): statistics the eval forward changed are
"updated in eval mode", in check's words; statistics that already differ from the reference's are said with both
values and the update rule the reference follows. A correct layer still gets full marks, with no such words.
"""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_grading_keys_s35 import _grade  # noqa: E402

BN = '''import numpy as np


class BatchNorm1D:
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.eps, self.momentum = eps, momentum
        self.gamma, self.beta = np.ones(num_features), np.zeros(num_features)
        self.running_mean, self.running_var = np.zeros(num_features), np.ones(num_features)

    def forward(self, X, training=True):
        m = X.shape[0]
        bm, bv = X.mean(axis=0), X.var(axis=0)
        if training:
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * bm
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * bv * m / (m - 1)
            mu, var = bm, bv
        else:
            mu, var = self.running_mean, self.running_var
        self.inv = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (X - mu) * self.inv
        return self.gamma * self.xhat + self.beta

    def backward(self, dY):
        raise NotImplementedError
'''

NAMES = ["BatchNorm1D", "BN_biased", "BN_eval_updates", "BN_never", "BN_swapped"]
TEST = "import pytest\nimport manualprop as mp\n" + "".join(f'''

@pytest.mark.points(2)
def test_{name.lower()}(student, grade, rng):
    """{name}: eval output after 3 training batches"""
    layer, ref = student.layer("layers.py", "{name}", num_features=4), mp.BatchNorm1D(4)
    for k in range(3):
        grade.layer_forward(layer, rng.standard_normal((8, 4)) * 3 + 2, ref, training=True, points=0.5)
    grade.layer_forward(layer, rng.standard_normal((8, 4)) * 3 + 2, ref, training=False, points=0.5)
''' for name in NAMES)

TRAIN = '''        if training:
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * bm
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * bv * m / (m - 1)
'''
BUGS = {
    # F8: the statistics updated at every call, eval too
    "eval_updates": TRAIN.replace("        if training:\n", "        if True:\n"),
    # F6: PyTorch's momentum in CS231n's formula
    "swapped": TRAIN.replace("(1 - self.momentum) * self.running_mean + self.momentum * bm",
                             "self.momentum * self.running_mean + (1 - self.momentum) * bm").replace(
        "(1 - self.momentum) * self.running_var + self.momentum * bv * m / (m - 1)",
        "self.momentum * self.running_var + (1 - self.momentum) * bv * m / (m - 1)"),
    # F6b: the biased batch variance where the reference keeps the unbiased
    "biased": TRAIN.replace(" * bv * m / (m - 1)", " * bv"),
    # verify37 F9 (fix38a): never updated, which the grader said as a wrong momentum's convention
    "never": "        if training:\n",
}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """The five classes (a correct one and the four bugs) graded in one submission: ``{class name: its row}``."""
    src = BN + "".join(BN.split("\n\n\n", 1)[1].replace("class BatchNorm1D", f"\n\nclass BN_{bug}").replace(TRAIN, code)
                       for bug, code in sorted(BUGS.items()))
    r, data = _grade(tmp_path_factory.mktemp("bn"), {"layers.py": src}, TEST)
    assert r.status == "graded" and len(data["tests"]) == len(NAMES), data
    return {n: t for n in NAMES for t in data["tests"] if t["name"].startswith(f"{n}:")}


def test_a_correct_layer_gets_full_marks_without_running_statistics_words(rows):
    t = rows["BatchNorm1D"]
    assert (t["score"], t["max_score"]) == (2.0, 2.0), t["output"]
    assert "running statistics" not in t["output"], t["output"]


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_a_running_statistics_bug_is_named_where_the_eval_output_differs(rows, bug):
    assert TRAIN in BN and BUGS[bug] != TRAIN
    t = rows[f"BN_{bug}"]
    out = " ".join(t["output"].split())
    assert t["score"] == 1.5, out  # the three training outputs are right (batch statistics); the eval output is not
    assert "the output differs from the expected one" in out, out
    if bug == "eval_updates":  # (before: "... expected -5.3." and nothing on the statistics)
        assert ("Your eval forward changed running_mean, running_var: running statistics updated in eval mode") in out
        assert "update running_mean and running_var only when training=True" in out, out
        assert "already differ" not in out, out
    else:
        said = "running_var is" if bug == "biased" else "running_mean is"
        assert ("Before this eval forward your running statistics already differ from the expected ones after the "
                "same training forwards: ") in out and said in out, out
        assert ("running = (1 - momentum) \\* running + momentum \\* batch statistic with momentum=0.1, the "
                "variance the unbiased batch variance, as PyTorch") in out, out
        assert ("running_mean is" in out) == (bug in ("swapped", "never")), out  # right with a biased variance
        never = ("running_mean is [0, 0, 0, ...], the expected [0.", "(not updated by the training forward: it still "
                 "holds its initial value); running_var is [1, 1, 1, ...]", "Your training forward never updates "
                 "running_mean, running_var: update them in the training forward as the reference does (running =")
        assert all(w in out for w in never) == (bug == "never"), out  # verify37 F9 (before: "the momentum's convention")
        assert ("check the momentum's convention" in out) == (bug != "never"), out
        assert "eval mode" not in out, out
