"""The one table of sample inputs per autoprop primitive, keyed by the primitive's name.

Every property test over primitives draws from here: the dot-product identity and the
transpose-trick check (tests/test_autoprop_forward.py), the hypothesis tests against
HIPS autograd (tests/test_autoprop_properties.py) and the fixed-input autograd checks
(tests/test_autoprop_core.py). tests/test_autoprop_registry.py fails when a registered
primitive has no entry (or an entry names no primitive).

An entry is ``Sample(args, kwargs, domain)``: each positional argument is either a
shape tuple (a float64 array of that shape is drawn uniformly from the argument's
domain) or a literal value (integer indices, boolean masks, scalars); ``domain`` gives
one ``(low, high)`` per positional argument where the primitive is smooth, so
derivatives are compared away from poles, kinks and branch cuts (default
``(-1.5, 1.5)``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

ANY = (-1.5, 1.5)
POS = (0.3, 2.0)


class Sample(NamedTuple):
    args: list
    kwargs: dict = {}
    domain: tuple = ()

    def dom(self, i):
        """The (low, high) range of positional argument ``i``."""
        return self.domain[i] if i < len(self.domain) and self.domain[i] is not None else ANY

    def make(self, rng):
        """(args, kwargs) with fresh float arrays from ``rng``; literals are copied."""
        args = []
        for i, a in enumerate(self.args):
            if isinstance(a, tuple):
                args.append(rng.uniform(*self.dom(i), a))
            else:
                args.append(np.array(a) if isinstance(a, np.ndarray) else a)
        return args, dict(self.kwargs)


def S(*args: Any, domain=(), **kwargs):
    return Sample(list(args), kwargs, tuple(domain))


_IDX = np.array([[4, 0, 4], [1, 1, 2], [0, 3, 3]])
_PATCH = dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2))
# well-conditioned matrices for np.linalg (fixed: a uniform draw can be near-singular)
_A = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.2], [-0.3, 0.4, 1.8]])
_A2 = np.stack([_A, _A.T + 0.5 * np.eye(3)])  # a batch of two
_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])  # distinct eigenvalues
_MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])

SAMPLES: dict[str, Sample] = {
    # elementwise binary (broadcasting)
    "add": S((3, 4), (4,), domain=[(-3, 3), (-3, 3)]),
    "subtract": S((3, 1), (1, 4), domain=[(-3, 3), (-3, 3)]),
    "multiply": S((2, 3), (2, 3), domain=[(-3, 3), (-3, 3)]),
    "divide": S((3,), (2, 3), domain=[(-3, 3), (0.5, 3)]),
    "power": S((2, 3), (3,), domain=[(0.3, 3), (-2, 2)]),
    "maximum": S((3, 4), (4,), domain=[(-3, 3), (-3, 3)]),
    "minimum": S((3, 4), (3, 4), domain=[(-3, 3), (-3, 3)]),
    "logaddexp": S((3, 4), (4,), domain=[(-3, 3), (-3, 3)]),
    "arctan2": S((3, 4), (4,), domain=[(0.5, 3), (0.5, 3)]),
    "clip": S((3, 4), (4,), (3, 1), domain=[ANY, (-2.5, -1.0), (1.0, 2.5)]),
    "where": S(_MASK, (3, 4), (4,)),
    # elementwise unary
    "negative": S((3,), domain=[(-3, 3)]),
    "exp": S((3, 2), domain=[(-3, 3)]),
    "expm1": S((5,), domain=[(-3, 3)]),
    "log": S((3, 2), domain=[(0.2, 5)]),
    "log1p": S((5,), domain=[(-0.7, 5)]),
    "log2": S((4,), domain=[(0.2, 5)]),
    "log10": S((4,), domain=[(0.2, 5)]),
    "sqrt": S((4,), domain=[(0.2, 5)]),
    "square": S((4,), domain=[(-3, 3)]),
    "reciprocal": S((4,), domain=[(0.3, 3)]),
    "absolute": S((5,), domain=[(0.1, 3)]),
    "sin": S((5,), domain=[(-3, 3)]),
    "cos": S((5,), domain=[(-3, 3)]),
    "tan": S((4,), domain=[(-1.2, 1.2)]),
    "arcsin": S((4,), domain=[(-0.9, 0.9)]),
    "arccos": S((4,), domain=[(-0.9, 0.9)]),
    "arctan": S((4,), domain=[(-3, 3)]),
    "sinh": S((4,), domain=[(-3, 3)]),
    "cosh": S((4,), domain=[(-3, 3)]),
    "tanh": S((4,), domain=[(-3, 3)]),
    "sigmoid": S((4,), domain=[(-5, 5)]),
    "relu": S((5,), domain=[(0.1, 3)]),
    "erf": S((5,), domain=[(-2, 2)]),
    "erfc": S((5,), domain=[(-2, 2)]),
    "cast": S((3,), dtype=np.dtype(np.float32)),
    # non-differentiable (no gradient, no tangent)
    "less": S((4,), 0.5), "less_equal": S((4,), 0.5), "greater": S((4,), 0.5),
    "greater_equal": S((4,), 0.5), "equal": S((4,), 0.5), "not_equal": S((4,), 0.5),
    "logical_and": S(_MASK, ~_MASK), "logical_or": S(_MASK, ~_MASK), "logical_not": S(_MASK),
    "sign": S((4,)), "floor": S((4,)), "ceil": S((4,)), "round": S((4,)),
    "isfinite": S((4,)), "isnan": S((4,)),
    "argmax": S((3, 4), axis=1), "argmin": S((3, 4), axis=None),
    # reductions
    "sum": S((2, 3, 4), axis=(0, 2), keepdims=False),
    "mean": S((2, 3, 4), axis=1, keepdims=True),
    "max": S((3, 4), axis=0),
    "min": S((3, 4), axis=None),
    "prod": S((3, 4), axis=1, keepdims=False),
    "cumsum": S((3, 4), axis=0),
    "logsumexp": S((3, 4), axis=-1),
    "log_softmax": S((3, 4), axis=-1),
    "softmax": S((3, 4), axis=0),
    "norm": S((3, 4), axis=1, keepdims=False),
    "sparse_softmax_cross_entropy_with_logits": S((4, 5), np.array([0, 4, 4, 1]), domain=[(-4, 4)]),
    # shape and indexing
    "reshape": S((2, 6), shape=(3, 4)),
    "transpose": S((2, 3, 4), axes=(2, 0, 1)),
    "broadcast_to": S((3, 1), shape=(2, 3, 4)),
    "squeeze": S((3, 1, 2), axis=1),
    "flip": S((3, 4), axis=1),
    "pad": S((2, 3), pad_width=((1, 0), (2, 1)), constant_values=0.5),
    "concatenate": S((2, 3), (1, 3), (4, 3), axis=0),
    "getitem": S((4, 3), key=(np.array([0, 3, 0]), slice(None, 2))),
    "index_add": S((4,), key=(np.array([0, 2, 0, 1]),), shape=(3,)),
    "take_along_axis": S((3, 5), _IDX, axis=1),
    "scatter_along_axis": S((3, 3), _IDX, axis=1, shape=(3, 5)),
    # linear algebra
    "matmul": S((2, 3, 4), (4, 5)),
    "tensordot": S((2, 3, 4), (4, 3, 5), axes=((1, 2), (1, 0))),
    "einsum": S((2, 3), (3, 4), (4,), subscripts="ij,jk,k->i"),
    "inv": S(_A2),
    "det": S(_A2),
    "slogdet": S(_A * np.array([1.0, -1.0, 1.0])),  # a negative determinant
    "solve": S(_A2, np.array([0.5, -1.0, 2.0])),  # a batch of A, one vector b (broadcast)
    "cholesky": S(np.stack([_SPD, _SPD + np.eye(3)])),
    "eigh": S(_SPD),
    "svd": S(np.array([[2.0, 0.3, -0.4, 0.5], [0.1, 1.5, 0.2, -0.7], [-0.3, 0.4, 1.0, 0.2]])),
    # windows (im2col / col2im)
    "extract_patches": S((2, 3, 5, 6), **_PATCH),
    "scatter_patches": S((2, 3, 3, 2, 3, 4), x_shape=(2, 3, 5, 6), **_PATCH),
}
