"""One checker of a layer's ``params`` (``_validation.checked_params``): in process (``layer_params``) and as the
sandbox's child describes them (``sandbox._params_from``) a layer gets the same message (session 20: the two
wrote a non-string key differently, "got key 0." and "got a key of type int.")."""
import types

import numpy as np
import pytest

from gradcheck._validation import layer_params
from gradcheck.errors import ProtocolError
from gradcheck.sandbox import _params_from


def _both(params, desc):
    """The messages of the two paths for one layer: in process, and from the child's description ``desc``."""
    out = []
    for run in (lambda: layer_params(types.SimpleNamespace(params=params), "L"),
                lambda: _params_from({"params": desc}, "L")):
        with pytest.raises(ProtocolError) as e:
            run()
        out.append(" ".join(str(e.value).split()))
    return out


def test_a_key_that_is_not_a_string():
    W = np.ones(3)
    got = _both({0: W}, {"kind": "dict", "items": {"0": {"key_type": "int", "kind": "array", "array": W}}})
    assert got == ["L.params keys must be strings; got a key of type int (0)."] * 2


def test_a_value_that_is_not_a_float_array_and_params_that_are_not_a_dict():
    I = np.ones(3, dtype=np.int64)
    got = _both({"W": I}, {"kind": "dict", "items": {"W": {"key_type": "str", "kind": "array", "array": I}}})
    assert got == ["L.params['W'] must be a numpy float array (it is perturbed in place to compute the numerical "
                   "gradient); got ndarray of dtype int64. Write it as float: np.array([[1.0, 2.0], ...]) or "
                   ".astype(float) for an array, 1.0 for a number."] * 2
    got = _both([np.ones(3)], {"kind": "other", "type": "list"})
    assert got == ["L.params must be a dict mapping names to numpy arrays; got list."] * 2


def test_entries_that_share_memory_are_refused_on_both_paths():
    W = np.broadcast_to(np.ones(1), (3,))
    desc = {"kind": "dict", "items": {"W": {"key_type": "str", "kind": "array", "array": np.ones(3),
                                            "layout": [[3], [0], 8]}}}
    a, b = _both({"W": W}, desc)
    assert a == b and "L.params['W'] has entries that share memory" in a
    assert layer_params(types.SimpleNamespace(params={"W": np.ones(2)}), "L")["W"].shape == (2,)
