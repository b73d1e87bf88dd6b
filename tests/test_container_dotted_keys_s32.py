"""dup31's leftover (session 31): a container whose ``params`` keys hold dots (a Sequential of Sequentials naming
its weights ``"0.0.W"``, as manualprop's Sequential and PyTorch's state_dict do) passed in process but failed the
sandbox's probe with ``KeyError: 'layers.0.0.0'`` (the sub-layer's key split at its last dot). Now the probe reads
it as check does: every nested weight checked, a wrong one FAILs."""
import numpy as np

from gradcheck import check_layer
from tests.test_grading_policy import INIT, _sandbox
from tests.test_grading_policy_s31 import NESTED

DOTTED = NESTED.replace('f"{i}_{k}"', 'f"{i}.{k}"')
assert DOTTED.count('f"{i}.{k}"') == 3
X = np.random.default_rng(1).standard_normal((4, 5))


def test_nested_dotted_keys_are_probed_and_checked(tmp_path):
    with _sandbox(tmp_path, DOTTED) as sb:
        probed = sb.load_layer("layers.py", "Deep", INIT, probe_inputs=[X])  # raised KeyError: 'layers.0.0.0'
        assert sorted(probed.params) == ["0.0.0.W", "0.0.0.b", "0.1.W", "0.1.b", "2.0.W", "2.0.b"]
        res = check_layer(probed, X, twin=None)
        assert res.passed, res.mismatch()
        assert {"d0.0.0.W", "d0.1.W", "d2.0.W"} <= {r.tensor for r in res.records if r.kind == "gradient"}


def test_a_wrong_nested_weight_gradient_fails_after_the_probe(tmp_path):
    src = DOTTED.replace('self.grads["W"] = dY.T @ self.X', 'self.grads["W"] = 2 * (dY.T @ self.X)')
    assert src != DOTTED
    with _sandbox(tmp_path, src) as sb:
        probed = sb.load_layer("layers.py", "Deep", INIT, probe_inputs=[X])
        res = check_layer(probed, X, twin=None)
        assert not res.passed and {"d0.0.0.W", "d0.1.W", "d2.0.W"} <= set(res.failing_tensors), res.failing_tensors
