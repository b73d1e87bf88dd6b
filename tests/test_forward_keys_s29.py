"""review28g L1 (session 29): the grader's count of forward calls in backward (the staff's no-forward-in-backward
policy) keyed a copy of forward's code as forward's only while its file, qualified name and first line were forward's;
``code.replace(co_firstlineno=...)`` or ``co_qualname=...`` made it 0 calls again. A copy keeps forward's text
(``_sandbox_child._text_key``: bytecode, the constants it loads, names, variable names, line table), which honest
code compiled from other text does not have: a helper whose bytecode is forward's (``x ** 2`` beside ``x ** 3``)
is not counted."""

import textwrap

import numpy as np

from gradcheck._sandbox_child import code_key, forward_keys
from tests.test_grading_policy import _sandbox

CUBE = textwrap.dedent('''\
    import numpy as np


    class Cube:
        def __init__(self):
            self.params, self.grads = {}, {}

        def forward(self, x):
            self.x = x
            return x ** 3

        def square(self, x):
            self.x = x
            return x ** 2

        def backward(self, dout):
            return 3 * self.square(self.x) * dout
    ''')


def _cube():
    ns = {}
    exec(compile(CUBE, "cube.py", "exec"), ns)  # noqa: S102 - the test's own class
    return ns["Cube"]


def test_copies_of_forwards_code_with_another_place_or_name_are_forwards():
    fwd = _cube().forward.__code__
    key = forward_keys([fwd])
    for copy in (fwd.replace(co_consts=fwd.co_consts + ("pad",)),
                 fwd.replace(co_consts=fwd.co_consts + ("pad",), co_firstlineno=fwd.co_firstlineno + 1),
                 fwd.replace(co_consts=fwd.co_consts + ("pad",), co_name="h", co_qualname="h"),
                 fwd.replace(co_consts=("another docstring", *fwd.co_consts[1:], "pad"), co_firstlineno=1)):
        assert code_key(copy) != code_key(fwd) and key(copy) == code_key(fwd)


def test_a_helper_with_forwards_bytecode_and_other_constants_or_names_is_not_forward():
    Cube = _cube()
    fwd, sq = Cube.forward.__code__, Cube.square.__code__
    assert sq.co_code == fwd.co_code and sq.co_linetable == fwd.co_linetable  # x ** 2 beside x ** 3, same layout
    key = forward_keys([fwd])
    assert key(sq) == code_key(sq) != code_key(fwd)


def test_the_policy_does_not_count_an_honest_helper_with_forwards_bytecode(tmp_path):
    """End to end, as the grader calls it: backward calls ``square``, whose bytecode is forward's: 0 calls."""
    x = np.random.default_rng(0).standard_normal((4, 5))
    with _sandbox(tmp_path, CUBE) as sb:
        layer = sb.load_layer("layers.py", "Cube", {}, no_forward_in_backward=True)
        layer.forward(x)
        np.testing.assert_allclose(layer.backward(np.ones_like(x)), 3 * x ** 2)
        assert layer.forward_calls_in_backward == 0
