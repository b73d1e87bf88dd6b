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
