"""Session 33 (fixv33): tests that kill review33's surviving mutants outside the sandbox (mut/SUMMARY.txt), each
pinning one condition whose change no earlier test saw: ``check_command._same_loss``'s uniqueness and its 1e-9
tolerance (cc_same_loss_first_hit, cc_same_loss_loose), ``_adapters._order_unread``'s second threshold
(nml_swapped_thresh), ``_adapters._child_of``'s longest prefix (child_of_min) and ``diagnose._variance_exponent``'s eps
range and |c - 1| guard (dg_varexp_eps_range, dg_varexp_no_c1)."""

import numpy as np

import manualprop as mp
from gradcheck import _adapters
from gradcheck.check_command import _same_loss


def _points():
    rng = np.random.default_rng(0)
    y = rng.standard_normal((4, 3))
    return y, y + 3.0 * rng.standard_normal((4, 3))


def test_same_loss_names_the_one_class_with_that_value():
    y, p = _points()
    assert _same_loss(mp.MeanSquaredError(), y, p) == "MeanSquaredError"
    assert _same_loss(mp.Huber(), y, p) == "Huber"


def test_same_loss_names_none_when_several_classes_have_that_value():
    """At y_pred = y_true MeanSquaredError and Huber are both 0: no one class to suggest (not the first by name)."""
    y, _ = _points()
    assert mp.MeanSquaredError().forward(y, y.copy()) == mp.Huber().forward(y, y.copy()) == 0.0
    assert _same_loss(mp.MeanSquaredError(), y, y.copy()) is None


def test_same_loss_needs_the_value_within_1e_9():
    """A loss 1e-6 (relative) off MeanSquaredError's value is not MeanSquaredError."""
    y, p = _points()

    class Off:
        def forward(self, y_true, y_pred, scale=1 + 1e-6):
            return mp.MeanSquaredError().forward(y_true, y_pred) * scale
    assert _same_loss(Off(), y, p) is None

    class Close(Off):
        def forward(self, y_true, y_pred, scale=1 + 1e-12):
            return super().forward(y_true, y_pred, scale)
    assert _same_loss(Close(), y, p) == "MeanSquaredError"


class _Symmetric:
    """loss(a, b) = 0.5 (a + b)^2: its gradient a + b is the derivative in either argument, so either order matches
    the central differences and none may be suggested."""

    @staticmethod
    def loss(a, b):
        return 0.5 * (a + b) ** 2

    @staticmethod
    def gradient(a, b):
        return a + b


class _PredFirst:
    """loss(a, b) = 0.5 (a - b)^2 with gradient a - b: dL/da, right only with the prediction first."""

    @staticmethod
    def loss(a, b):
        return 0.5 * (a - b) ** 2

    @staticmethod
    def gradient(a, b):
        return a - b


def test_other_order_suggested_only_when_the_assumed_order_does_not_match():
    said = _adapters._order_unread(_PredFirst(), "loss", "gradient")
    assert _adapters.ORDER_UNREAD in said and "in the other order" in said, said
    said = _adapters._order_unread(_Symmetric(), "loss", "gradient")  # both orders match: nothing to suggest
    assert _adapters.ORDER_UNREAD in said and "in the other order" not in said, said


def test_child_of_is_the_longest_sub_layer_prefix():
    """A nested container's ``layers.0`` holds ``layers.0.W``: that sub-layer, not its parent ``layers``."""
    children = {"layers": object(), "layers.0": object(), "head": object()}
    assert _adapters._child_of("layers.0.W", children) == "layers.0"
    assert _adapters._child_of("layers.1.W", children) == "layers"
    assert _adapters._child_of("head.b", children) == "head"
    assert _adapters._child_of("other.W", children) == "other"


def _bn_dx(var, e, seed=0):
    """``(m, n, X, G)``: a batch norm's (over axis 0, gamma 1) true dX ``n`` and one ``m`` whose variance term has
    ``var + e`` times its right weight per feature (tester32c M2: ``(var + eps)**(-1/2)`` where ``**(-3/2)`` is due),
    for X (64, 3) with the per-feature variances ``var``; G correlated with x_hat so the variance term is large."""
    rng = np.random.default_rng(seed)
    var = np.asarray(var)
    X = rng.standard_normal((64, 3))
    X = (X - X.mean(0)) / X.std(0) * np.sqrt(var) + rng.standard_normal(3)
    sd = np.sqrt(X.var(0))
    xh = (X - X.mean(0)) / sd
    G = 3 * xh + rng.standard_normal((64, 3))
    n = (G - G.mean(0) - xh * (G * xh).mean(0)) / sd
    m = (G - G.mean(0) - (X.var(0) + e) * xh * (G * xh).mean(0)) / sd
    return m, n, X, G


def test_variance_exponent_named_for_an_eps_up_to_0_1():
    from gradcheck.diagnose import _norm_signature
    m, n, X, G = _bn_dx([1.0, 2.0, 3.0], 0.05)
    name, out = _norm_signature(m, n, X, G=G)
    assert name == "variance-exponent" and abs(out["eps"] - 0.05) < 1e-9, out


def test_variance_exponent_not_named_for_an_eps_beyond_0_1():
    """var + 0.5 times the right weight: not a layer's eps (mutant dg_varexp_eps_range named it eps = 0.5)."""
    from gradcheck.diagnose import _norm_signature
    m, n, X, G = _bn_dx([1.0, 2.0, 3.0], 0.5)
    assert _norm_signature(m, n, X, G=G) is None


def test_variance_exponent_not_named_where_var_plus_eps_is_about_1():
    """Every feature's variance within 5e-2 of 1: var + eps times the right weight cannot be told from a right
    weight near 1 (mutant dg_varexp_no_c1 named it)."""
    from gradcheck.diagnose import _norm_signature
    for var, e in (([0.97, 1.0, 1.03], 0.0), ([0.96, 0.99, 1.02], 0.01)):
        m, n, X, G = _bn_dx(var, e)
        assert _norm_signature(m, n, X, G=G) is None
