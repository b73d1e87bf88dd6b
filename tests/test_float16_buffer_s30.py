"""A float16 buffer in float16 code (session 30; session 29's leftover): the float64 copy wrote float32's declared
dtypes float64 and kept float16's (a cast to float16 in float32 code is a rounding the student wrote, tester28s H),
so a layer that preallocates its float16 output buffer in ``__init__`` was not rewritten and
``gradcheck check --dtype float16`` on it was a FAIL ("forward returns float16 for a float64 input") its author could
not avoid. In float16 code (``--dtype float16``, or float16 parameters) float16's declarations are now rewritten in
the same place as float32's (:func:`gradcheck._float64_copy.float64_text`, ``half``); in float32 code a float16 cast
is still kept."""

from test_cli import check_source

from gradcheck._float64_copy import float64_text

BUF16 = '''import numpy as np


class Buf16:
    """Preallocates its float16 output buffer in __init__."""

    def __init__(self, n=4, d=3):
        self.params, self.grads = [], []
        self.out = np.empty((n, d), dtype=np.float16)

    def forward(self, x):
        self.x = x
        self.out[...] = 3.0 * x * x
        return self.out

    def backward(self, dout):
        return FACTOR * self.x * dout
'''
ARGS = ("--input-shape", "4,3", "--dtype", "float16")


def _check(tmp_path, factor, *args):
    return check_source(tmp_path, BUF16.replace("FACTOR", factor), "Buf16", *args, file="buf16.py")


def test_float16_declarations_are_rewritten_in_float16_code_only():
    src = "import numpy as np\na = np.empty(3, dtype=np.float16)\nb = np.zeros(3, 'e')\nc = x.astype('float32')\n"
    assert float64_text(src, half=True)[0] == ("import numpy as np\na = np.empty(3, dtype=np.float64)\n"
                                               "b = np.zeros(3, 'd')\nc = x.astype('float64')\n")
    assert float64_text(src)[0] == ("import numpy as np\na = np.empty(3, dtype=np.float16)\nb = np.zeros(3, 'e')\n"
                                    "c = x.astype('float64')\n")  # float32 code: its float16 rounding kept


def test_a_float16_buffer_made_in_init_is_checked_on_the_float64_copy(tmp_path):
    """Was: exit 1, "FAIL: Buf16: wrong dtype of Y ... forward returns float16 for a float64 input"."""
    code, text = _check(tmp_path, "6.0", *ARGS)
    assert code == 0 and "PASS: Buf16 (its float16 code checked on a float64 copy" in text, text
    assert "Its own float16 backward, run on the same inputs and parameters, gives the copy's gradients within " \
           "float16's round-off" in text, text


def test_a_doubled_gradient_of_the_float16_buffer_layer_fails(tmp_path):
    code, text = _check(tmp_path, "12.0", *ARGS)
    assert code == 1 and "FAIL: Buf16: gradient mismatch in dX" in text and "2 times" in text, text


def test_a_float16_only_branch_is_its_own_backwards_fail(tmp_path):
    """The copy's float64 buffer takes the other branch: the original's own float16 backward is compared with it."""
    code, text = _check(tmp_path, "(12.0 if self.out.itemsize == 2 else 6.0)", *ARGS)
    assert code == 1 and "FAIL: Buf16" in text, text
    assert "own float16" in text and "2 times" in text, text


def test_without_dtype_the_float16_buffer_is_named_with_the_option(tmp_path):
    """Was: the downcast FAIL named no line and no option (the float16 buffer was not a declaration)."""
    code, text = _check(tmp_path, "6.0", "--input-shape", "4,3")
    assert code == 1 and "FAIL: Buf16: wrong dtype of Y." in text, text
    assert "line 9: self.out = np.empty((n, d), dtype=np.float16)" in text, text
    assert "if Buf16 is meant to run in float16, check it with --dtype float16" in text, text
