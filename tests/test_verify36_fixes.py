"""verify36's findings fixed in session 36 (fixw36):

- F3: ``autoprop.Variable.assign``/``assign_add``/``assign_sub`` wrapped an integer its integer dtype cannot
  hold (int8 given 300 became 44, int32 given 2**40 became 0, int64 given uint64 2**63 became -2**63), where
  ``tf.Variable`` refuses it; a value within the bounds is still converted exactly.
"""

import numpy as np
import pytest

import autoprop as ap


@pytest.mark.parametrize("dtype, value, came", [
    (np.int8, np.array([300, 2]), "int64"),
    (np.int32, np.array([2 ** 40, 1]), "int64"),
    (np.int64, np.array([2 ** 63, 2 ** 63], dtype=np.uint64), "uint64"),
    (np.uint8, np.array([-1, 0]), "int64"),
])
@pytest.mark.parametrize("what", ["assign", "assign_add", "assign_sub"])
def test_f3_an_integer_outside_the_dtype_is_refused_naming_variable_dtype_and_value(dtype, value, came, what):
    v = ap.Variable(np.array([1, 2], dtype=dtype), name="counts")
    with pytest.raises(TypeError) as e:
        getattr(v, what)(value)
    msg = str(e.value)
    assert f"Variable 'counts'.{what}: the variable's dtype {np.dtype(dtype)} cannot hold" in msg, msg
    assert f"of dtype {came} (got [{value[0]}" in msg, msg
    info = np.iinfo(dtype)
    assert f"{np.dtype(dtype)} holds {info.min} to {info.max}" in msg, msg
    assert v.numpy().tolist() == [1, 2]  # unchanged


@pytest.mark.parametrize("dtype, value", [(np.int8, [127, -128]), (np.uint8, [255, 0]), (np.int32, [2 ** 31 - 1, 0])])
def test_f3_an_integer_within_the_dtype_is_converted_exactly(dtype, value):
    v = ap.Variable(np.array([1, 2], dtype=dtype))
    v.assign(np.array(value))  # int64 values the narrower dtype holds
    assert v.dtype == np.dtype(dtype) and v.numpy().tolist() == value


# --------------------------------------------------------------------------- F5: a kept share equal to the momentum

from test_cli import run_here  # noqa: E402
from test_cli_newuser35 import REF, SWAPPED, TORCH, _bn, _one_line  # noqa: E402
from test_lstm_bn_pair_s36 import KEPT  # noqa: E402


@pytest.mark.parametrize("momentum", ["0.1", "0.3"])
def test_f5_a_class_keeping_its_own_momentum_under_a_half_is_the_swapped_momentum(tmp_path, momentum):
    """running = m * running + (1 - m) * batch with m = 0.1 keeps 0.1. verify36 F5 had it accepted as CS231n's and
    Keras's convention at that rate; newuser37 F6 showed the cost: the grader, given the same reference, takes the
    points, so check PASSed a layer its grade FAILs. No library keeps under half at its usual rates (PyTorch's 0.1
    keeps 0.9, CS231n's 0.9, Keras's 0.99), so a class keeping its own momentum under a half has PyTorch's value in
    the other formula: a FAIL naming the swap. A CS231n pair, whose bn_param momentum is the share kept by its API,
    stays accepted (below)."""
    p = run_here("check", _bn(tmp_path, SWAPPED, momentum), "--input-shape", "8,4", "--init", '{"D": 4}', *REF)
    text = _one_line(p)
    assert p.returncode == 1, text
    assert f"yours keeps {momentum} of the old value" in text and "the momentum looks swapped" in text, text
    assert "another rate" not in text, text


def test_f5_a_value_and_formula_of_different_conventions_still_fail(tmp_path):
    """momentum=0.9 in PyTorch's formula keeps 0.1 (not the layer's 0.9, under a half): swapped, a FAIL."""
    p = run_here("check", _bn(tmp_path, TORCH, "0.9"), "--input-shape", "8,4", "--init", '{"D": 4}', *REF)
    text = _one_line(p)
    assert p.returncode == 1, text
    assert "yours keeps 0.1 of the old value" in text and "the momentum looks swapped" in text, text


def test_f5_a_cs231n_pair_with_bn_param_momentum_01_is_accepted_with_the_note(tmp_path):
    (tmp_path / "cs_bn.py").write_text(KEPT)
    p = run_here("check", f"{tmp_path / 'cs_bn.py'}::batchnorm", "--input-shape", "8,4;4;4", "--init",
                 '{"bn_param": {"mode": "train", "momentum": 0.1}}', *REF)
    text = _one_line(p)
    assert p.returncode == 0, text  # (before: exit 1, "Fix: the momentum looks swapped")
    assert ("bn_param['running_mean'], bn_param['running_var'] are running averages keeping 0.1 of the old value, "
            "your momentum=0.1 in CS231n's and Keras's convention") in text, text
    assert "the momentum looks swapped" not in text, text
    # under a half: the note says which formula PyTorch's value would need (kills review37's ar_less_half_note_off)
    assert ("It keeps less than half: if your 0.1 is PyTorch's momentum (the batch's share), your formula is the "
            "other convention's") in text, text


# --------------------------------------------------------------------------- F4: a dict backward missing or adding a key

from test_cli import check_source  # noqa: E402
from test_cli_corpus36 import LN_ARGS, layernorm  # noqa: E402


def test_f4_a_dict_without_a_weights_key_is_a_wrong_result_naming_it(tmp_path):
    """(dX, {'gamma': dgamma}): exit 3 "returned a tuple of 3 items ((2, 3, 6), (6,), NoneType)" before."""
    code, out = check_source(tmp_path, layernorm(keys="'gamma': dgamma"), "LayerNorm", *LN_ARGS)
    text = " ".join(out.split())
    assert code == 1, text
    assert "dbeta not returned (the dict has no key for beta)" in text, text
    assert "returned None for dbeta; expected an array of shape (6,)" in text, text
    assert "tuple of 3 items" not in text, text


def test_f4_a_dict_with_a_key_naming_no_weight_says_the_dict_is_read_and_names_the_key(tmp_path):
    code, out = check_source(tmp_path, layernorm(keys="'gamma': dgamma, 'beta': dbeta, 'eps': 0.0"), "LayerNorm",
                             *LN_ARGS)
    text = " ".join(out.split())
    assert code == 3, text
    assert ("returned a tuple of 2 items ((2, 3, 6), dict): its last item, a dict, is read as the weights' gradients "
            "by key") in text, text
    assert "but 'eps' names no weight (the weights: gamma, beta)" in text, text
    assert "expected dX alone" not in text, text


# --------------------------------------------------------------------------- F9, F10 (LOW)

from gradcheck.grading.static import NAME_SHOWN, name_span  # noqa: E402


def test_f9_two_long_names_sharing_their_shown_start_are_shown_apart():
    a, b = "w_" + "x" * 148, "w_" + "x" * 130 + "y" * 18
    assert a[:NAME_SHOWN] == b[:NAME_SHOWN]
    sa, sb = name_span(a), name_span(b)
    assert sa != sb, sa  # (before: both "`w_xx...x`... (cut: 150 characters)")
    assert sb.startswith(f"`{b[:NAME_SHOWN]}`... (cut: 150 characters; ends `{b[-16:]}`; sha256 "), sb
    assert name_span("dw_in[0]") == "`dw_in[0]`"


FACTORY = """
import numpy as np

class Dense:
    def __init__(self, W, b):
        self.W, self.b = np.asarray(W, float), np.asarray(b, float)

    @classmethod
    def initialize(cls, units_prev, units_curr):
        return cls(np.ones((units_prev, units_curr)), np.zeros(units_curr))

    def forward(self, X):
        self.X = X
        return X @ self.W + self.b

    def backward(self, dY):
        self.dW, self.db = self.X.T @ dY, dY.sum(0)
        return dY @ self.W.T
"""


def test_f10_a_classmethod_factory_is_named_in_the_usage_error(tmp_path):
    code, out = check_source(tmp_path, FACTORY, "Dense", "--input-shape", "5,4")
    text = " ".join(out.split())
    assert code == 2, text
    assert "needs W, b, which only --init can give" in text, text
    assert ("Dense.initialize(units_prev, units_curr) looks like a factory: gradcheck builds the class with __init__ "
            "(it does not call the factory); give --init the values the factory would pass to Dense(W, b).") in text, text
