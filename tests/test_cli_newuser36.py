"""newuser36's findings (session 36) in ``gradcheck check``: a constructor argument at a value where a wrong backward
cancels (``Dropout(p=0.5)``: ``1/p == 1/(1-p)``; ``alpha=1.0``) checked again at another value (H1)."""

import numpy as np
import pytest
from test_cli import run_here

import gradcheck
import manualprop as mp

DROPOUT = '''import numpy as np


class Dropout:
    def __init__(self, p=0.5, rng=None):
        self.p, self.rng, self.masks = p, np.random.default_rng(rng), {}
        self.params, self.grads = {}, {}

    def forward(self, X, training=True):
        if not training:
            return X
        if X.shape not in self.masks:
            self.masks[X.shape] = self.rng.random(X.shape) >= self.p
        self.mask = self.masks[X.shape]
        return X * self.mask / (1.0 - self.p)

    def backward(self, dY):
        return dY * self.mask / SCALE
'''

ELU = '''import numpy as np


class ELU:
    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def forward(self, x):
        self.x = x
        return np.where(x > 0, x, self.alpha * (np.exp(x) - 1))

    def backward(self, dy):
        return dy * np.where(self.x > 0, 1.0, LOCAL)


class Scale:
    def __init__(self, temperature=1.0):
        self.t = temperature

    def forward(self, x):
        return x / self.t

    def backward(self, dy):
        return dy OP self.t


class Picky:
    """Correct, with a bug that cancels at 1.0, and a constructor that refuses any other value."""

    def __init__(self, alpha=1.0):
        if alpha != 1.0:
            raise ValueError("alpha must be 1.0")
        self.alpha = alpha

    def forward(self, x):
        return x * self.alpha

    def backward(self, dy):
        return dy / self.alpha
'''


def _check(tmp_path, text, target, *more):
    (tmp_path / "layer.py").write_text(text)
    p = run_here("check", f"layer.py::{target}", *more, cwd=tmp_path)
    return p.returncode, " ".join((p.stdout + p.stderr).split())


def test_dropout_with_1_over_p_fails_at_p_0_3_though_p_0_5_cancels_it(tmp_path):
    """H1: lesson 24's exercise 2 "fixed" with ``/ self.p`` PASSed at the default p = 0.5, where 1/p = 1/(1-p); the
    layer is built again at p = 0.3, where it FAILs, the argument and both values named."""
    code, out = _check(tmp_path, DROPOUT.replace("SCALE", "self.p"), "Dropout", "--training", "--input-shape", "4,6")
    assert code == 1
    assert "constructor argument p=0.5 (1/p = 1/(1-p) and p = 1-p) can hide a wrong backward: also checked at p=0.3" \
        in out
    assert "with p=0.3 dX is wrong; at p=0.5 the bug cancels" in out
    assert "FAIL: Dropout [p=0.3]: gradient mismatch in dX." in out
    assert "mask with entries 0 and 3.33333" in out and "read: lessons/24-dropout.md" in out  # 1/0.3, 1/(1-0.3)


def test_correct_dropout_passes_and_says_which_values_were_checked(tmp_path):
    """H1's control: the right backward PASSes at p = 0.5 and at p = 0.3, and the header says both were checked; given
    p = 0.25 by --init, no second value (0.25 hides nothing)."""
    code, out = _check(tmp_path, DROPOUT.replace("SCALE", "(1.0 - self.p)"), "Dropout", "--training",
                       "--input-shape", "4,6")
    assert code == 0 and "PASS: Dropout" in out
    assert "constructor argument p=0.5 (1/p = 1/(1-p) and p = 1-p) can hide a wrong backward: also checked at p=0.3 " \
           "(passed)" in out
    code, out = _check(tmp_path, DROPOUT.replace("SCALE", "(1.0 - self.p)"), "Dropout", "--training",
                       "--input-shape", "4,6", "--init", '{"p": 0.25}')
    assert code == 0 and "constructor argument" not in out


@pytest.mark.parametrize("local, code, word", [("np.exp(self.x)", 1, "FAIL"),
                                               ("self.alpha * np.exp(self.x)", 0, "PASS")])
def test_elu_without_alpha_fails_at_alpha_0_7(tmp_path, local, code, word):
    """H1: an ELU whose backward leaves out alpha PASSed at alpha = 1.0 (PyTorch's and Keras's default); the right one
    still PASSes."""
    got, out = _check(tmp_path, ELU.replace("LOCAL", local).replace("OP", "/"), "ELU", "--input-shape", "8,5")
    assert got == code and "can hide a wrong backward: also checked at alpha=0.7" in out
    assert f"{word}: ELU" in out
    assert ("with alpha=0.7 dX is wrong; at alpha=1.0 the bug cancels" in out) == (code == 1)


@pytest.mark.parametrize("op, code", [("*", 1), ("/", 0)])
def test_temperature_multiplied_for_divided_fails_at_0_7(tmp_path, op, code):
    """H1: ``dy * self.t`` for ``dy / self.t`` PASSed at temperature = 1.0, read from the signature though the layer
    keeps it as ``self.t``."""
    got, out = _check(tmp_path, ELU.replace("LOCAL", "1.0").replace("OP", op), "Scale", "--input-shape", "8,5")
    assert got == code and "also checked at temperature=0.7" in out


def test_constructor_refusing_the_other_value_keeps_the_pass_and_claims_nothing(tmp_path):
    """H1: a constructor that raises at alpha = 0.7: the first check's verdict stands, no header claims the second;
    a note says it was tried there and why it gave no verdict (again48: it was dropped unsaid)."""
    code, out = _check(tmp_path, ELU.replace("LOCAL", "1.0").replace("OP", "/"), "Picky", "--input-shape", "8,5")
    said = " ".join(out.split())
    assert code == 0 and "PASS: Picky" in out and "also checked at alpha" not in said
    assert "also tried at alpha=0.7: no verdict there: at alpha=0.7 its constructor raised (Picky.__init__(" in said


SCALED = '''import numpy as np


class Scaled:
    def __init__(self, temperature=1.0):
        self.t = temperature
        self.scale = np.linspace(0.5, 1.5, 5)
        self.W = np.random.default_rng(0).standard_normal((5, 5))

    def forward(self, x):
        self.x = x
        return (x @ self.W) * self.scale / self.t

    def backward(self, dy):
        g = dy * self.scale / self.t
        self.dW = self.x.T @ g
        return g @ self.W.T FACTOR
'''


@pytest.mark.parametrize("factor, code", [("", 0), (" * self.t", 1)])
def test_other_value_keeps_what_constants_declared(tmp_path, factor, code):
    """H1 with --constants: the layer built again at temperature = 0.7 keeps ``scale`` declared a constant (it was
    NOT CHECKED there, a wrong exit 1 of a correct layer); a wrong dX there still FAILs."""
    (tmp_path / "s.py").write_text(SCALED.replace(" FACTOR", factor))
    p = run_here("check", "s.py::Scaled", "--input-shape", "4,5", "--constants", "scale", cwd=tmp_path)
    out = " ".join(p.stdout.split())
    assert p.returncode == code and "also checked at temperature=0.7" in out and "NOT CHECKED" not in out, out
    assert ("FAIL: Scaled [temperature=0.7]: gradient mismatch in dX." in out) == (code == 1)


def test_other_value_not_checkable_there_is_not_claimed(tmp_path):
    """H1: an L2 strength at 0.0 built again at 0.3 adds a penalty's term to dW that gradcheck cannot check (NOT
    CHECKED at --init l2=0.3): the PASS at 0.0 stands and the header does not claim l2=0.3 was checked; a note says
    it gave no verdict there (again48: dropped unsaid before)."""
    (tmp_path / "d.py").write_text("import numpy as np\n\n\nclass Dense:\n    def __init__(self, l2=0.0, scale=1.0):\n"
                                   "        self.W = np.random.default_rng(0).standard_normal((5, 3))\n"
                                   "        self.l2, self.scale = l2, scale\n\n    def forward(self, x):\n        self.x = x\n"
                                   "        return x @ self.W * self.scale\n\n    def backward(self, dy):\n"
                                   "        dy = dy * self.scale\n"
                                   "        self.dW = self.x.T @ dy + self.l2 * self.W\n        return dy @ self.W.T\n")
    p = run_here("check", "d.py::Dense", "--input-shape", "4,5", cwd=tmp_path)
    out = " ".join(p.stdout.split())
    assert p.returncode == 0 and "PASS: Dense" in out
    assert "constructor argument scale=1.0 (times scale = divided by scale = unchanged) can hide a wrong backward: " \
           "also checked at scale=0.7 (passed)" in out and "checked at l2" not in out, out
    assert "also tried at l2=0.3: no verdict there: at l2=0.3 no gradient could be judged (NOT CHECKED there)" in out


def test_argument_forward_does_not_read_is_not_checked_again(tmp_path):
    """H1's control (tests/buggy_layers' correct counterparts): a ``bug=1.0`` factor that backward alone reads is the
    layer's own; built at 0.7 forward gives the same output, so nothing of forward can cancel there: no verdict
    taken from it, no claim."""
    (tmp_path / "k.py").write_text("import numpy as np\n\n\nclass Knob:\n    def __init__(self, bug=1.0):\n"
                                   "        self.bug = bug\n\n    def forward(self, x):\n        return 2 * x\n\n"
                                   "    def backward(self, dy):\n        return 2 * dy * self.bug\n")
    p = run_here("check", "k.py::Knob", "--input-shape", "4,5", cwd=tmp_path)
    out = " ".join(p.stdout.split())
    assert p.returncode == 0 and "PASS: Knob" in out and "constructor argument" not in out, out


def test_diagnose_layer_checks_a_local_layer_at_the_other_value():
    """H1 in Python: manualprop's Dropout and ELU pass at both values (controls); a local ELU without alpha fails at
    alpha = 0.7, its attribute set on a copy (the layer itself keeps alpha = 1.0)."""
    X = np.random.default_rng(0).standard_normal((4, 6))
    for layer, training in [(mp.Dropout(0.5), True), (mp.ELU(), "auto")]:
        d = gradcheck.diagnose_layer(layer, X, training=training)
        assert d.passed and d.other_args and not d.args_failed

    class BadELU(mp.ELU):
        def _local_grad(self, saved):  # alpha left out
            mask, neg = saved
            return np.where(mask, 1.0, np.exp(neg))

    bad = BadELU()
    d = gradcheck.diagnose_layer(bad, X)
    assert not d.passed and d.args_failed and d.other_args == [("alpha", 1.0, 0.7)] and d.name == "BadELU [alpha=0.7]"
    assert bad.alpha == 1.0


# --------------------------------------------------------------------------- M1: --tape on float32 code

LINEAR32 = '''import numpy as np


class Linear:
    def __init__(self, in_features, out_features):
        rng = np.random.default_rng(0)
        self.W = (rng.standard_normal((in_features, out_features)) * 0.1).astype(np.float32)
        self.b = np.zeros(out_features, dtype=np.float32)

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b

    def backward(self, dy):
        self.dW = self.x.T @ dy
        self.db = dy.sum(axis=0)
        return dy @ self.W.T FACTOR
'''
LINEAR_INIT = '{"in_features": 5, "out_features": 3}'


@pytest.mark.parametrize("seed", [0, 2])
def test_tape_on_correct_float32_layer_compares_the_float64_copys_tape(tmp_path, seed):
    """M1: ``--tape`` on a correct float32 Linear FAILed at seed 0 (manual~tape 3.6e-06: float32's round-off against
    rtol 1e-6), the copy's check using the float32 original's tape (and the copy's sandbox refusing autoprop). Now the
    copy's own tape is compared (0.0e+00), at every seed, and the float32 warning, which the copy's note contradicted,
    is not shown."""
    (tmp_path / "lin.py").write_text(LINEAR32.replace(" FACTOR", ""))
    p = run_here("check", "lin.py::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--tape", "--seed", seed,
                 cwd=tmp_path)
    out = " ".join(p.stdout.split())
    assert p.returncode == 0, out
    assert "manual~tape" in out and "no tape comparison" not in out
    assert "PASS: Linear (its float32 code checked on a float64 copy: see the note)" in out
    assert "is float32; it is perturbed in place" not in p.stderr


def test_tape_on_wrong_float32_layer_still_fails(tmp_path):
    """M1's control: a dX 1.01 times too large FAILs with --tape, on the copy, the factor named."""
    (tmp_path / "lin.py").write_text(LINEAR32.replace(" FACTOR", " * 1.01"))
    p = run_here("check", "lin.py::Linear", "--input-shape", "8,5", "--init", LINEAR_INIT, "--tape", cwd=tmp_path)
    assert p.returncode == 1 and "dX is 1.01 times the correct gradient" in " ".join(p.stdout.split())


# --------------------------------------------------------------------------- M2: backward's None for a mask

MASKED = '''import numpy as np


class MaskedMean:
    def forward(self, x, mask):
        self.mask = mask
        self.cnt = mask.sum(axis=1, keepdims=True)
        return (x * mask[..., None]).sum(axis=1) / self.cnt

    def backward(self, dy):
        return dy[:, None, :] * self.mask[..., None] / self.cnt[..., None] FACTOR, DMASK
'''


def test_backward_none_for_a_mask_is_an_input_without_gradient(tmp_path):
    """M2: ``(dx, None)``, PyTorch's autograd.Function convention, was a wrong FAIL "returned None for dmask"; now dx
    is checked, the header says dmask was not, and that the output does depend on the mask."""
    (tmp_path / "m.py").write_text(MASKED.replace(" FACTOR", "").replace("DMASK", "None"))
    p = run_here("check", "m.py::MaskedMean", "--input-shape", "2,4,3;2,4", cwd=tmp_path)
    out = " ".join(p.stdout.split())
    assert p.returncode == 0 and "PASS: MaskedMean: every gradient (dx) matches" in out
    head = out.split("name tensor")[0]  # the header, before the table
    assert "mask: backward returned None for its gradient (as PyTorch's autograd.Function does for an input without " \
           "one): taken as an input without a gradient, dmask not checked; forward's output does depend on mask" in head
    assert "--indices 1:2" in head and out.count("backward returned None for its gradient") == 1


def test_backward_none_for_a_mask_beside_a_wrong_dx_fails_on_dx(tmp_path):
    """M2's control: a wrong dx beside the None still FAILs, on dx."""
    (tmp_path / "m.py").write_text(MASKED.replace(" FACTOR", " * 2").replace("DMASK", "None"))
    p = run_here("check", "m.py::MaskedMean", "--input-shape", "2,4,3;2,4", cwd=tmp_path)
    out = " ".join(p.stdout.split())
    assert p.returncode == 1 and "FAIL: MaskedMean: gradient mismatch in dx." in out


def test_none_for_every_input_is_still_a_missing_gradient():
    """M2's limits: None for a lone input, for every float input, or for any input of a CS231n function pair (its
    weights are inputs: affine_backward's None for db, tests/test_pair_own_names_s31.py) is a missing gradient (the
    error as before); an integer input's None is not a float input's."""
    from gradcheck import _validation as V
    from gradcheck.errors import GradientShapeError

    x, m = np.ones((2, 3)), np.ones((2, 3))
    kw = dict(owner="L", produced_by="backward(dY)", names=["x", "mask"], keys=["@x", "@mask"])
    assert set(V.check_input_grads((x, None), inputs=[x, m], **kw)) == {"@x"}
    assert V.without_gradient((x, None), [x, m]) == {1}
    with pytest.raises(GradientShapeError, match="returned None for dx"):
        V.check_input_grads((None, None), inputs=[x, m], **kw)
    with pytest.raises(GradientShapeError, match="returned None for dx"):
        V.check_input_grads(None, inputs=[x], owner="L", produced_by="backward(dY)", names=["x"], keys=["@x"])
    assert V.without_gradient((x, None), [x, m.astype(int)]) == set()
    assert V.without_gradient((x, None), [x, m], pair=True) == set()  # a CS231n pair's inputs are its weights: db
    with pytest.raises(GradientShapeError, match="returned None for dmask"):
        V.check_input_grads((x, None), inputs=[x, m], pair=True, **kw)


def test_constants_naming_a_forward_argument_points_to_none_and_indices(tmp_path):
    """M2: ``--constants mask`` for forward's argument said "not an array attribute forward reads" alone (exit 2);
    now it says mask is forward's argument, and what to do: None in backward's tuple, or --indices 1:2."""
    (tmp_path / "m.py").write_text(MASKED.replace(" FACTOR", "").replace("DMASK", "None"))
    p = run_here("check", "m.py::MaskedMean", "--input-shape", "2,4,3;2,4", "--constants", "mask", cwd=tmp_path)
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "--constants mask: mask is an argument of forward, not an array attribute" in err
    assert "return None in dmask's place" in err and "--indices 1:2" in err


# --------------------------------------------------------------------------- lows: L1, L4, L6, the output's count

SWAP = '''import numpy as np


class BilinearSwap:
    def __init__(self, dx, dy, seed=0):
        self.W = np.random.default_rng(seed).standard_normal((dx, dy))

    def forward(self, x, y):
        self.x, self.y = x, y
        self.z = x @ self.W
        return self.z * y

    def backward(self, dout):
        dz = dout * self.y
        self.dW = self.x.T @ dz
        return dout * self.z, dz @ self.W.T
'''


def test_swapped_gradients_of_the_right_shape_are_not_a_wrong_shape(tmp_path):
    """L1: (dy, dx) for (dx, dy), both (6, 3), said "wrong shape of dx"; now "returned in the wrong order"."""
    (tmp_path / "s.py").write_text(SWAP)
    p = run_here("check", "s.py::BilinearSwap", "--input-shape", "6,3;6,3", "--init", '{"dx": 3, "dy": 3}',
                 cwd=tmp_path)
    out = " ".join(p.stdout.split())
    assert p.returncode == 1 and "FAIL: BilinearSwap: gradient mismatch in dx, dy; returned in the wrong order." in out
    assert "wrong shape" not in out and "backward returns its gradients in the wrong order" in out


TORCH_DROPOUT = '''import numpy as np


class TorchDropout:
    def __init__(self, p=0.3):
        self.p, self.training, self.rng = p, True, np.random.default_rng(0)

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        if self.training:
            self.mask = (self.rng.random(x.shape) >= self.p) / (1 - self.p)
            return x * self.mask
        return x

    def backward(self, dy):
        return dy
'''


def test_dropout_backward_without_its_mask_reads_the_dropout_lesson(tmp_path):
    """L4: a random forward held for the check whose backward forgets the mask was sent to lesson 02 (activations);
    now to lesson 24 (dropout). A ReLU's missing derivative still reads lesson 02 (control)."""
    (tmp_path / "d.py").write_text(TORCH_DROPOUT)
    p = run_here("check", "d.py::TorchDropout", "--input-shape", "8,5", cwd=tmp_path)
    assert p.returncode == 1 and "read: lessons/24-dropout.md" in p.stdout and "02-activations" not in p.stdout
    (tmp_path / "r.py").write_text("class ReLU:\n    def forward(self, x):\n        return x * (x > 0)\n\n"
                                   "    def backward(self, dy):\n        return dy\n")
    p = run_here("check", "r.py::ReLU", "--input-shape", "8,5", cwd=tmp_path)
    assert p.returncode == 1 and "read: lessons/02-activations.md" in p.stdout


ATTN = '''import numpy as np


class SelfAttention:
    def __init__(self, d, seed=0):
        self.Wq = np.random.default_rng(seed).standard_normal((d, d)) * 0.3

    def forward(self, x):
        self.x = x
        q = x @ self.Wq
        s = q @ x.transpose(0, 2, 1)
        s = s - s.max(-1, keepdims=True)
        a = np.exp(s)
        a /= a.sum(-1, keepdims=True)
        self.q, self.a = q, a
        return a @ x, a

    def backward(self, dout):
        x, q, a = self.x, self.q, self.a
        dx = a.transpose(0, 2, 1) @ dout
        da = dout @ x.transpose(0, 2, 1)
        ds = a * (da - (da * a).sum(-1, keepdims=True))
        dq = ds @ x
        dx += ds.transpose(0, 2, 1) @ q
        self.dWq = np.einsum("bti,btj->ij", x, dq)
        dx += dq @ self.Wq.T
        return dx FACTOR
'''


@pytest.mark.parametrize("factor, code", [("", 0), (" * 1.5", 1)])
def test_output_and_attention_scores_with_one_gradient_checks_the_output(tmp_path, factor, code):
    """L6: ``return a @ x, a`` with ``backward(dout)`` was exit 1 "gave Y as a tuple" though nothing was compared;
    now read as numpy-ml's ``(A, C)``: the first output checked, the scores said not checked."""
    (tmp_path / "a.py").write_text(ATTN.replace(" FACTOR", factor))
    p = run_here("check", "a.py::SelfAttention", "--input-shape", "2,4,3", "--init", '{"d": 3}', cwd=tmp_path)
    out = " ".join(p.stdout.split())
    assert p.returncode == code, out + p.stderr
    assert "2 outputs: output 1 (2, 4, 3) checked as Y, backward gets its dY; a (2, 4, 4) (float64): backward takes " \
           "no upstream gradient for it, so it is not checked" in out
    assert ("PASS: SelfAttention" in out) == (code == 0)


def test_output_dropped_by_the_child_and_the_parent_is_one_count(capsys):
    """The output of a forward that writes 5 MB a call: the parent's count of bytes not kept and the child's marker of
    a long write's dropped head were two different counts in one block; now one, their sum, the marker not shown."""
    from gradcheck.cli import _show_output

    text = ("[... 2953831 earlier bytes of output dropped ...]\nxxxx\n[... 4967233 earlier bytes of output dropped "
            "...]\n" + "\n".join(f"line {i}" for i in range(5)))
    _show_output(text, "Noisy", verbose=False)
    err = " ".join(capsys.readouterr().err.split())
    assert f"{2953831 + 4967233:,} earlier bytes were not kept" in err and "bytes of output dropped" not in err
    assert "| line 4" in err and "| xxxx" in err
