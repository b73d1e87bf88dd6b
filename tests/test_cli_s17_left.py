"""Session 16's tester findings fixed in session 17 (left17), in-process and on small shapes: the float32 warning
printed once (finding 9), argparse's own message when its internals are missing (the "did you mean" helper), ..."""

from test_cli import both, run_here, student

F32 = """
import numpy as np

class F32:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
        self.dW = np.zeros_like(self.W)
    def forward(self, x):
        self.x = x
        return x @ self.W
    def backward(self, dY):
        self.dW = self.x.T @ dY
        return dY @ self.W.T
"""


def test_the_float32_warning_is_printed_once_under_the_students_name(tmp_path):
    """Finding 9: ``F32.W is float32`` then ``F32.params['W'] is float32``, the diagnosis's proxy hiding the
    attribute protocol from the name."""
    f = student(tmp_path, F32)
    p = run_here("check", f"{f}::F32", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert text.count("is float32; it is perturbed in place") == 1, text
    assert "F32.W is float32" in text and "params['W']" not in text, text


SOFTMAX = """
import numpy as np

class SoftmaxRows:
    def forward(self, x):
        e = np.exp(x); self.s = e / e.sum(axis=1, keepdims=True); return self.s
    def backward(self, dy):
        s = self.s
        return s * (dy - (dy * s).sum(axis=1, keepdims=True))
"""


class _PublicOnly:
    """A parser as another Python's argparse might build it: parse_args works, no ``_actions`` to read."""

    def __init__(self, parser):
        self._parser = parser

    def parse_args(self, argv):
        return self._parser.parse_args(argv)


def test_a_parser_without_its_private_actions_gets_argparses_own_message(tmp_path, monkeypatch):
    """The "did you mean" helper read ``parser._actions`` (and ``argparse._SubParsersAction``): where a parser
    lacks them it must leave the usage error to argparse, never crash (a traceback, exit 1)."""
    import gradcheck.cli as cli

    real = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda: _PublicOnly(real()))
    f = student(tmp_path, SOFTMAX)
    p = run_here("check", f"{f}::SoftmaxRows", "--input-shpe", "4,5")
    assert p.returncode == 2 and "Traceback" not in both(p), both(p)
    assert "usage: gradcheck check" in p.stderr and "--input-shape" in p.stderr, both(p)
    assert "did you mean" not in p.stderr


def test_a_subcommand_parser_without_a_list_of_actions_is_left_to_argparse(monkeypatch):
    import gradcheck.cli as cli

    p = cli.build_parser()
    check = next(a.choices for a in p._actions if isinstance(a.choices, dict))["check"]
    monkeypatch.setattr(check, "_actions", "not a list")
    assert cli._misspelt(p, ["check", "f.py::X", "--input-shpe", "4,5"]) is None


def test_the_did_you_mean_helper_still_names_the_close_option(tmp_path):
    f = student(tmp_path, SOFTMAX)
    p = run_here("check", f"{f}::SoftmaxRows", "--input-shape", "4,5", "--rtoll", "1e-3")
    assert p.returncode == 2 and "unrecognized option --rtoll; did you mean --rtol?" in p.stderr, both(p)
    p = run_here("assignment", "release", "x.ipynb", "--outt", "d")
    assert p.returncode == 2 and "usage: gradcheck assignment release" in p.stderr, both(p)
    assert "did you mean --out?" in p.stderr, both(p)


TWO_OUT = """
import numpy as np

class TwoOut:
    def __init__(self):
        self.W = np.random.default_rng(0).standard_normal((5, 3))
        self.dW = np.zeros_like(self.W)
    def forward(self, x):
        self.x = x
        return np.tanh(x @ self.W), 2.0 * (x @ self.W)
    def backward(self, dh, dz):
        da = self.da(dh, dz)
        self.dW = self.x.T @ da
        return da @ self.W.T
    def da(self, dh, dz):
        return dh * (1 - np.tanh(self.x @ self.W) ** 2) + 2.0 * dz

class TwoOutIgnore(TwoOut):
    def da(self, dh, dz):
        return dh * (1 - np.tanh(self.x @ self.W) ** 2)
"""


def test_a_backward_ignoring_one_outputs_gradient_fails_naming_it(tmp_path):
    """TwoOutIgnore: FAILed as "no known bug pattern" and "dW is the gradient of the first sample only"; the
    sandboxed layer's protocol now carries its outputs, and the diagnosis names the ignored dz and its output."""
    f = student(tmp_path, TWO_OUT)
    p = run_here("check", f"{f}::TwoOutIgnore", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert ("diagnosis: dX, dW are the gradients with dz set to zero: backward does not use the upstream gradient "
            "dz of forward's output out1 (output 1 of 2)") in text, text
    assert "first sample only" not in text and "no known bug pattern" not in text, text
    p = run_here("check", f"{f}::TwoOut", "--input-shape", "4,5")
    assert p.returncode == 0 and "PASS: TwoOut" in both(p), both(p)


BESIDE = """
import numpy as np

class DropScaleBug:
    def __init__(self):
        self.rng = np.random.default_rng(0)
    def forward(self, X, training=False, use_dropout=True):
        self.scale = 3.0 if use_dropout else 2.0
        self.mask = (self.rng.random(X.shape) > 0.5) * 2.0 if training and use_dropout else np.ones_like(X)
        return X * self.mask * self.scale
    def backward(self, dY):
        return dY * self.mask * (self.scale if self.scale == 3.0 else 1.0)

class SquareMode:
    def forward(self, X, training=True, mode="fast"):
        self.X, self.mode = X, mode
        if mode == "fast":
            return X**2
        elif mode == "slow":
            return X * X
        return X
    def backward(self, dY):
        return (2.0 if self.mode == "fast" or self.ok else 1.0) * self.X * dY
    ok = True

class SquareModeBug(SquareMode):
    ok = False

class TooMany:
    def forward(self, X, training=True, a=False, b=False, mode="fast"):
        self.s, self.mode = 1.0 + a + b, mode
        if mode == "fast":
            return X * self.s
        elif mode == "slow":
            return 2 * X * self.s
        elif mode == "off":
            return X
        return X
    def backward(self, dY):
        return dY * self.s * (2 if self.mode == "slow" else 1)
"""


def test_a_boolean_beside_training_is_checked_at_each_value_in_the_modes_asked(tmp_path):
    """forward(X, training, use_dropout): use_dropout=False was never run, in either mode or with --eval (a wrong
    PASS); now each of its values is combined with training, and --eval/--training check each in that mode."""
    f = student(tmp_path, BESIDE)
    for flag, mode in (([], "False"), (["--eval"], "False"), (["--training"], "True")):
        p = run_here("check", f"{f}::DropScaleBug", "--input-shape", "3,2", *flag)
        text = " ".join(both(p).split())
        assert p.returncode == 1, text
        assert f"FAIL: DropScaleBug [training={mode}, use_dropout=False]: gradient mismatch in dX." in text, text
        assert "dX is 0.5 times the correct gradient" in text, text
    assert "every combination of the booleans forward reads is checked; --training: each in training mode" in text
    assert "[training=False" not in text, text


def test_a_string_beside_training_is_checked_at_each_value(tmp_path):
    """forward(X, training=True, mode='fast'): 'slow' was never run (a wrong PASS of a bug there)."""
    f = student(tmp_path, BESIDE)
    p = run_here("check", f"{f}::SquareModeBug", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "FAIL: SquareModeBug [training=False, mode='slow']: gradient mismatch in dX." in text, text
    p = run_here("check", f"{f}::SquareMode", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 0, text
    assert ("mode: also [training=False, mode='slow']; [training=True, mode='slow']: every combination of the "
            "switches forward reads (its booleans and each value of its string argument) is checked") in text, text


def test_switch_combinations_past_the_cap_are_not_checked_naming_them(tmp_path):
    f = student(tmp_path, BESIDE)
    p = run_here("check", f"{f}::TooMany", "--input-shape", "4,5")
    text = " ".join(both(p).split())
    assert p.returncode == 3, text
    assert ("NOT CHECKED: TooMany: forward reads a = False (other value True not run: gradcheck checks every "
            "combination of forward's switches up to 8 checks, and training with a, b, mode make 24)") in text, text
    assert "mode = 'fast' (other values 'slow', 'off' not run)" in text, text


NG = """
import numpy as np

class NgDictDbHalf:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.parameters = {"W1": rng.standard_normal((3, 4)), "b1": np.zeros((3, 1))}
        self.grads = {}
    def forward(self, A):
        self.A = A
        return self.parameters["W1"] @ A + self.parameters["b1"]
    def backward(self, dZ):
        self.grads["dW1"] = dZ @ self.A.T
        self.grads["db1"] = dZ.sum(axis=1, keepdims=True) / 2
        return self.parameters["W1"].T @ dZ
"""


def test_ng_gradients_are_named_as_the_students_code_names_them(tmp_path):
    """Finding 8: the rows, the FAIL line and the diagnosis said dparameters['b1'] for the student's grads['db1']."""
    f = student(tmp_path, NG)
    p = run_here("check", f"{f}::NgDictDbHalf", "--input-shape", "4,6")
    text = " ".join(both(p).split())
    assert p.returncode == 1, text
    assert "dparameters" not in text, text
    assert "NgDictDbHalf dX (4, 6)" in text and "grads['dW1'] (3, 4)" in text and "grads['db1'] (3, 1)" in text, text
    assert "FAIL: NgDictDbHalf: gradient mismatch in grads['db1']." in text, text
    assert "diagnosis: grads['db1'] is 0.5 times the correct gradient" in text, text
