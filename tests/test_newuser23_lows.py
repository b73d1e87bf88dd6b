"""newuser23's LOW findings: a probe's error cut mid-word in the header and "no gradient found" for a class whose
backward never ran (L1); the output tail counted as if it were all of it (L2); stray punctuation in --tape's
message (L4); check_layer in Python told to leave out the CLI's --indices alone (L8)."""

import numpy as np
import pytest
from test_cli import both, run_here, student

from gradcheck import check_layer
from gradcheck._adapters import _raised
from gradcheck.cli import _show_output
from gradcheck.errors import UsageError


def test_raised_cuts_a_long_message_at_a_word():
    msg = ("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
           "(n?,k),(k,m?)->(n?,m?) (size 4 is different from 5)")
    got = _raised(ValueError(msg))
    assert got.endswith(" ...") and len(got) < 150 and "size 4 is ..." in got, got
    assert _raised(ValueError("short")) == "raised ValueError: short"


def test_header_of_a_class_whose_forward_raised_on_the_probe(tmp_path):
    f = student(tmp_path, """
        import numpy as np
        class Affine:
            def __init__(self, n_in, n_out):
                self.W = np.ones((n_in, n_out)); self.b = np.zeros(n_out)
            def forward(self, X):
                self.X = X
                return X @ self.W + self.b
            def backward(self, dY):
                self.dW = self.X.T @ dY; self.db = dY.sum(0)
                return dY @ self.W.T
        """)
    p = run_here("check", f"{f}::Affine", "--input-shape", "3,5", "--init", '{"n_in": 4, "n_out": 3}')
    text = both(p)
    assert "its gradients not known (backward was not run)" in text and "no gradient found" not in text, text
    assert "is ; arrays" not in text and "size 4 is ...; arrays not checked" in text, text


def test_output_tail_says_what_was_dropped(capsys):
    text = "[... 47133752 earlier bytes of output dropped ...]\n" + "\n".join(f"line {i}" for i in range(300))
    _show_output(text, "Chatty", verbose=True)
    err = " ".join(capsys.readouterr().err.split())
    assert "(the last 200 distinct lines of its last" in err and "47,133,752 earlier bytes were not kept" in err, err
    assert "of 300 distinct lines" not in err and "earlier bytes of output dropped" not in err
    _show_output("a\nb\n", "Quiet", verbose=False)
    err = capsys.readouterr().err
    assert "not kept" not in err and "| a" in err


def test_tape_message_has_no_stray_punctuation(tmp_path):
    f = student(tmp_path, """
        import numpy as np
        class ReLUInplace:
            def __init__(self): self.params = {}; self.grads = {}
            def forward(self, X, training=False):
                Y = X.copy()
                Y[Y < 0] = 0
                self.mask = X > 0
                return Y
            def backward(self, dY):
                return dY * self.mask
        """)
    p = run_here("check", f"{f}::ReLUInplace", "--input-shape", "3,4", "--tape")
    text = both(p)
    assert "; manual vs numerical only" in text, text
    assert ". ;" not in text and " ; manual" not in text, text


def test_python_integer_input_message_names_python_and_the_cli():
    class Tanh:
        params, grads = {}, {}

        def forward(self, X, training=False):
            self.Y = np.tanh(X)
            return self.Y

        def backward(self, dY):
            return dY * (1 - self.Y ** 2)
    with pytest.raises(UsageError) as e:
        check_layer(Tanh(), np.arange(12).reshape(3, 4), twin=None)
    msg = " ".join(str(e.value).split())
    assert "X.astype(np.float64)) in Python" in msg and "on the command line" in msg, msg
