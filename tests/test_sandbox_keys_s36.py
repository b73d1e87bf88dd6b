"""Names the child sends as dict keys (a parameter's ``params`` key) are compared as sent and sent back: a key holding
an invisible character was escaped on arrival (``"W\\u200b"`` became the text ``W\\u200b``), so the parent perturbed an
array the child did not have, its numerical gradient was 0, and a backward storing zeros for that weight PASSed
(redteam36 F1z). Such a key is now refused, as one with a tab or a newline (shown as a space, it would name no array
either); a key of any length is kept whole."""
import numpy as np
import pytest
from test_cli import check_source

from gradcheck import sandbox

LAYER = '''
import numpy as np

KEY = {key!r}

class KeyLinear:
    def __init__(self, n_in=5, n_out=3):
        rng = np.random.default_rng(0)
        self.params = {{KEY: rng.standard_normal((n_in, n_out)), "b": rng.standard_normal(n_out)}}
        self.grads = {{}}

    def forward(self, X, training=False):
        self.X = X
        return X @ self.params[KEY] + self.params["b"]

    def backward(self, dY):
        self.grads = {{KEY: {dw}, "b": dY.sum(axis=0)}}
        return dY @ self.params[KEY].T
'''


@pytest.mark.parametrize("key", ["W\u200b", "W\x1b[2J", "\u202eW"])
def test_a_key_with_an_invisible_character_is_refused_never_a_pass(tmp_path, key):
    code, out = check_source(tmp_path, LAYER.format(key=key, dw="np.zeros_like(self.params[KEY])"), "KeyLinear",
                             "--input-shape", "4,5")
    assert code == 3, out
    assert "holds characters that cannot be shown as they are" in out and "rename it" in out, out
    assert "PASS" not in out, out


@pytest.mark.parametrize("key", ["W\tin", "W\nin"])
def test_a_key_with_a_tab_or_a_newline_is_refused_too(tmp_path, key):
    code, out = check_source(tmp_path, LAYER.format(key=key, dw="np.zeros_like(self.params[KEY])"), "KeyLinear",
                             "--input-shape", "4,5")
    assert code == 3 and "rename it" in out and "PASS" not in out, out


def test_clean_strings_keeps_keys_whole_and_refuses_invisible_ones():
    long = "w_" + "x" * 300
    assert list(sandbox._clean_strings({long: [1], "a b": "c\x1bd"}, 120)) == [long, "a b"]
    assert sandbox._clean_strings({"k": "c\x1bd"})["k"] == "c\\x1bd"
    with pytest.raises(sandbox.MalformedReply, match="rename it"):
        sandbox._clean_strings({"params": {"W\u200b": np.zeros(2)}})
