"""Session 37 (fix37a; note36 item 5): the constructor-argument re-check in ``check_layer`` and ``gradcheck grade``.

fixn36 (newuser36 H1) checks a layer built with a float constructor argument at 0.5, 1.0, 0 or -1 again at a second
value (0.3, 0.7, 0.3, -0.7), because a wrong backward can cancel there (a dropout's 1/p for 1/(1-p) at p = 0.5, an ELU
without alpha at alpha = 1): ``gradcheck check`` and ``diagnose_layer`` only. ``check_layer``, and so the grader's
central differences, passed such a layer. The loop is now one (:func:`gradcheck.sources.each_other_arg`), run by all
three.
"""

import json

import numpy as np

from gradcheck import check_layer
from gradcheck.grading.runner import grade_submission

# A dropout whose mask is drawn per call from the layer's seed (so that the reference, built alike, draws the same
# one: the assignment prescribes it), its backward dividing by p where forward divides by 1 - p; and the right one.
DROPOUT = '''
import numpy as np


class Dropout:
    def __init__(self, p=0.5, seed=0):
        self.p, self.seed = p, seed
        self.params, self.grads = {}, {}

    def forward(self, X, training=False):
        if not training:
            return X
        self.mask = np.random.default_rng(self.seed).random(X.shape) >= self.p
        return X * self.mask / (1 - self.p)

    def backward(self, dY):
        return dY * self.mask / (1 - self.p)
'''
WRONG = DROPOUT.replace("class Dropout:", "class RightDropout:") + DROPOUT.replace(
    "        return dY * self.mask / (1 - self.p)", "        return dY * self.mask / self.p")
# A Huber loss whose backward clips at 1 where delta is due (the same at delta = 1.0), and the right one.
HUBER = """
import numpy as np


class Huber:
    def __init__(self, delta=1.0):
        self.delta = delta

    def forward(self, y_true, y_pred):
        self.r = y_pred - y_true
        a, d = np.abs(self.r), self.delta
        return float(np.mean(np.where(a <= d, 0.5 * self.r ** 2, d * (a - 0.5 * d))))

    def backward(self):
        return np.clip(self.r, -self.delta, self.delta) / self.r.size
"""
WRONG_HUBER = HUBER.replace("np.clip(self.r, -self.delta, self.delta)", "np.clip(self.r, -1.0, 1.0)")
# A leaky ReLU whose backward refuses slope != 1 on purpose (verify48d F3: 0/1 told "the numerical check could not
# run ... The exercise is not written yet"), and the right one (the reference).
LEAKY = """


class Leaky:
    def __init__(self, slope=1.0):
        self.slope, self.params, self.grads = slope, {}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.where(X > 0, X, self.slope * X)

    def backward(self, dY):
        return np.where(self.X > 0, dY, self.slope * dY)
"""
REFUSING = LEAKY.replace("        return np.where(self.X > 0, dY", """        if self.slope != 1.0:
            raise NotImplementedError("only slope=1 is supported in backward")
        return np.where(self.X > 0, dY""")

TEST = "\nimport pytest" + DROPOUT.replace("class Dropout:", "class RefDropout:") + HUBER.replace(
    "class Huber:", "class RefHuber:") + LEAKY.replace("class Leaky:", "class RefLeaky:") + """


@pytest.mark.points(1)
def test_leaky(student, grade, rng):
    \"\"\"Leaky\"\"\"
    layer = student.layer("layers.py", "Leaky", slope=1.0)
    grade.layer_gradients(layer, rng.standard_normal((4, 5)), RefLeaky(1.0), points=1)


@pytest.mark.points(2)
def test_dropout(student, grade, rng):
    \"\"\"Dropout\"\"\"
    layer = student.layer("layers.py", "Dropout", p=0.5)
    grade.layer_gradients(layer, rng.standard_normal((4, 5)), RefDropout(0.5), training=True, points=2)


@pytest.mark.points(2)
def test_right_dropout(student, grade, rng):
    \"\"\"RightDropout\"\"\"
    layer = student.layer("layers.py", "RightDropout", p=0.5)
    grade.layer_gradients(layer, rng.standard_normal((4, 5)), RefDropout(0.5), training=True, points=2)


@pytest.mark.points(1)
def test_huber(student, grade, rng):
    \"\"\"Huber\"\"\"
    loss = student.loss("layers.py", "Huber", delta=1.0)
    grade.loss_gradient(loss, rng.standard_normal((4, 3)), 2 * rng.standard_normal((4, 3)), RefHuber(1.0))
"""


def test_a_dropout_dividing_by_p_loses_its_points_at_p_0_5(tmp_path):
    """Before: 2/2 for ``dY * mask / p`` at p = 0.5 (1/p = 1/(1-p) there). Now the layer is built again at p = 0.3,
    where dX disagrees with its own forward: 0/2, the message naming both values; the right backward keeps 2/2. So
    too a Huber loss clipping at 1 where delta = 1.0 is due: 0/1 (1/1 before), built again at delta = 0.7."""
    assert WRONG.count("/ self.p\n") == 1 and WRONG_HUBER.count("-1.0, 1.0") == 1
    for d, files in (("sub", {"layers.py": WRONG + WRONG_HUBER + REFUSING}), ("tests", {"test_it.py": TEST})):
        (tmp_path / d).mkdir()
        for name, text in files.items():
            (tmp_path / d / name).write_text(text)
    r = grade_submission(tmp_path / "sub", tmp_path / "tests", tmp_path / "out", seed=1)
    rows = {t["name"]: t for t in json.loads((tmp_path / "out" / "results.json").read_text())["tests"]}
    wrong, right, huber = rows["Dropout"], rows["RightDropout"], rows["Huber"]
    assert (r.status, wrong["score"], right["score"], huber["score"]) == ("graded", 0.0, 2.0, 0.0), rows
    assert ("dy_pred disagrees with central differences of the loss at delta=0.7" in huber["output"]
            and "This test builds your loss with delta=1.0, where dy_pred matched the reference" in huber["output"]), \
        huber["output"]
    assert right["output"] == "All checked: `dX` ok.", right["output"]
    assert "dX disagrees with central differences at p=0.3" in wrong["output"], wrong["output"]
    leaky = " ".join(rows["Leaky"]["output"].replace("\\", "").split())  # (results.json's Markdown escapes)
    assert rows["Leaky"]["score"] == 0.0 and "Leaky passes at slope=1.0 but at slope=0.7 its backward raised " \
        "NotImplementedError" in leaky and "second value of each float constructor argument" in leaky, leaky
    assert "numerical check could not run" not in leaky and "not written yet" not in leaky, leaky
    assert ("This test builds your layer with p=0.5, where dX matched the reference; at that value a wrong backward "
            "can give the right numbers (1/p = 1/(1-p) and p = 1-p), so, as gradcheck check does, the grader also "
            "builds your layer with p=0.3, and there your backward disagrees with your own forward") \
        in wrong["output"], wrong["output"]


class _ELU:
    """ELU(alpha=1.0), backward without alpha (``BUG``) or with it."""

    BUG = True

    def __init__(self, alpha=1.0):
        self.alpha, self.params, self.grads = alpha, {}, {}

    def forward(self, X, training=False):
        self.X = X
        return np.where(X > 0, X, self.alpha * (np.exp(X) - 1))

    def backward(self, dY):
        return dY * np.where(self.X > 0, 1.0, (1.0 if self.BUG else self.alpha) * np.exp(self.X))


class _RightELU(_ELU):
    BUG = False


def test_check_layer_checks_alpha_1_again_at_0_7():
    """Before: check_layer passed the ELU without alpha at alpha = 1.0. Now it fails at alpha = 0.7, named so, and the
    right one passes with the line saying both values were checked."""
    res = check_layer(_ELU(), (3, 4), twin=None)
    assert not res.passed and res.args_failed and res.other_args == [("alpha", 1.0, 0.7)], res.notes
    assert res.name == "_ELU [alpha=0.7]" and res.failing_tensors == ["dX"], res.name
    assert ("constructor argument alpha=1.0 (times alpha = divided by alpha = unchanged) can hide a wrong backward: "
            "also checked at alpha=0.7: with alpha=0.7 dX is wrong; at alpha=1.0 the bug cancels") in res.notes[-1]
    res = check_layer(_RightELU(), (3, 4), twin=None)
    assert res.passed and not res.args_failed and res.other_args == [("alpha", 1.0, 0.7)], res.notes
    assert res.notes[-1].endswith("also checked at alpha=0.7 (passed)"), res.notes
    assert check_layer(_ELU(), (3, 4), twin=None, values=False).passed  # the layer as given alone: the bug cancels


def test_check_loss_checks_delta_1_again_at_0_7():
    """A loss too: check_loss passed the Huber clipping at 1 at delta = 1.0; now it fails at delta = 0.7, and the
    right one passes with the line saying both values were checked."""
    from gradcheck import check_loss

    rng = np.random.default_rng(0)
    y, z = rng.standard_normal((4, 3)), 2 * rng.standard_normal((4, 3))
    wrong, right = ({}, {})
    exec(WRONG_HUBER, wrong)  # noqa: S102 - the test's own source text
    exec(HUBER, right)  # noqa: S102
    res = check_loss(wrong["Huber"](), y, z, twin=None)
    assert not res.passed and res.args_failed and res.other_args == [("delta", 1.0, 0.7)], res.notes
    assert res.name == "Huber [delta=0.7]" and res.failing_tensors == ["dy_pred"], res.name
    assert check_loss(wrong["Huber"](), y, z, twin=None, values=False).passed  # as given alone: the bug cancels
    res = check_loss(right["Huber"](), y, z, twin=None)
    assert res.passed and res.notes[-1].endswith("also checked at delta=0.7 (passed)"), res.notes


def test_symmetric_args_lists_each_value_that_hides_a_term_and_skips_a_probability_at_0_or_1():
    """gradcheck.sources.symmetric_args: 1 (times = divided by), -1, 0 (a term vanishes) and 0.5 are checked again
    at 0.7, -0.7, 0.3 and 0.3; a probability (p, *_rate, drop, keep, prob) only at 0.5, since at 0 or 1 the layer is
    another one (kills review37's ca_zero_off, ca_minus1_off, ca_prob_any, run on gradcheck/sources.py where
    fix37a moved the code)."""
    from gradcheck.sources import symmetric_args

    class Layer:
        def __init__(self, alpha=1.0, p=1.0, scale=-1.0, beta=0.0, drop_rate=0.0, keep=0.5, gamma=2.0):
            self.alpha, self.p, self.scale, self.beta = alpha, p, scale, beta
            self.drop_rate, self.keep, self.gamma = drop_rate, keep, gamma

        def forward(self, X):
            return X

    assert sorted(symmetric_args(Layer())) == [("alpha", 1.0, 0.7), ("beta", 0.0, 0.3), ("keep", 0.5, 0.3),
                                               ("scale", -1.0, -0.7)]


def test_an_integer_constructor_argument_is_not_checked_again_at_a_float():
    """stride=1 (an int default) is a count, not a factor: built again at 0.7 it would be another layer or raise
    (kills review37's ca_int_defaults: int defaults taken as float arguments)."""
    from gradcheck.sources import symmetric_args

    class Layer:
        def __init__(self, stride=1, n=0, alpha=1.0):
            self.stride, self.n, self.alpha = stride, n, alpha

        def forward(self, X):
            return X

    assert symmetric_args(Layer()) == [("alpha", 1.0, 0.7)]
