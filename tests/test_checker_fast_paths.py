"""The fast paths of ``check_layer``'s fast mode (issue 10, chkspeed2) keep every number and verdict.

Speed is measured in ``benchmarks/checker.py``, never here; these tests pin what a shortcut must
not change: the generator each mode starts from, the directional derivatives, the errors of a bad
output, and what the cache guard and the mask hold see.
"""

from __future__ import annotations

import copy

import numpy as np

from gradcheck import check as C


def test_rewound_generator_draws_as_a_deep_copy_and_leaves_the_original():
    rng = np.random.default_rng(7)
    rng.standard_normal(5)  # mid-stream, as after the inputs were drawn
    rng.integers(0, 2**32)  # PCG64's buffered 32-bit half is part of the state
    twin = copy.deepcopy(rng)
    new = C._rewound(rng)
    assert new is not rng and new.bit_generator is not rng.bit_generator
    np.testing.assert_array_equal(new.standard_normal((3, 4)), twin.standard_normal((3, 4)))
    assert new.integers(0, 2**32) == twin.integers(0, 2**32)
    again = C._rewound(rng)  # the original was not advanced by the rewound ones' draws
    np.testing.assert_array_equal(again.standard_normal(3), rng.standard_normal(3))


def test_rewound_keeps_the_bit_generator_type():
    rng = np.random.Generator(np.random.Philox(3))
    rng.random(2)
    new = C._rewound(rng)
    assert type(new.bit_generator) is np.random.Philox
    np.testing.assert_array_equal(new.random(4), copy.deepcopy(rng).random(4))
