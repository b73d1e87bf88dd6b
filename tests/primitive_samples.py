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
_P = np.array([[1.0, 0.4, -0.2], [0.3, 1.0, 0.5], [-0.1, 0.2, 1.0]])
_EIG = _P @ np.diag([0.5, 1.5, 3.0]) @ np.linalg.inv(_P)  # not symmetric, a real spectrum
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
    "nextafter": S((3, 4), (4,), domain=[(-3, 3), (-3, 3)]),
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
    "floor_divide": S((3, 4), (4,), domain=[(-5, 5), (0.7, 1.3)]),
    "isfinite": S((4,)), "isnan": S((4,)), "isinf": S((4,)), "signbit": S((4,)),
    "isneginf": S((4,)), "isposinf": S((4,)),
    "argmax": S((3, 4), axis=1), "argmin": S((3, 4), axis=None),
    # reductions
    "sum": S((2, 3, 4), axis=(0, 2), keepdims=False),
    "mean": S((2, 3, 4), axis=1, keepdims=True),
    "max": S((3, 4), axis=0),
    "min": S((3, 4), axis=None),
    "prod": S((3, 4), axis=1, keepdims=False),
    "cumsum": S((3, 4), axis=0),
    "logcumsumexp": S((3, 4), axis=1),
    "logsumexp": S((3, 4), axis=-1),
    "logsumexp_b": S((3, 4), (3, 1), axis=0, domain=[None, POS]),
    "log_softmax": S((3, 4), axis=-1),
    "softmax": S((3, 4), axis=0),
    "norm": S((3, 4), axis=1, keepdims=False),
    "sparse_softmax_cross_entropy_with_logits": S((4, 5), np.array([0, 4, 4, 1]), domain=[(-4, 4)]),
    "sparse_softmax_cross_entropy_mean": S((4, 5), np.array([0, 4, 4, 1]), domain=[(-4, 4)]),
    # shape and indexing
    "reshape": S((2, 6), shape=(3, 4)),
    "transpose": S((2, 3, 4), axes=(2, 0, 1)),
    "broadcast_to": S((3, 1), shape=(2, 3, 4)),
    "squeeze": S((3, 1, 2), axis=1),
    "flip": S((3, 4), axis=1),
    "pad": S((2, 3), pad_width=((1, 0), (2, 1)), constant_values=0.5),
    "concatenate": S((2, 3), (1, 3), (4, 3), axis=0),
    "stack": S((2, 3), (2, 3), (2, 3), axis=-2),
    "split_pieces": S((3, 5), pieces=((0, 2), (2, 2), (2, 5)), axis=1),  # one output per piece
    "getitem": S((4, 3), key=(np.array([0, 3, 0]), slice(None, 2))),
    "index_add": S((4,), key=(np.array([0, 2, 0, 1]),), shape=(3,)),
    "take_along_axis": S((3, 5), _IDX, axis=1),
    "scatter_along_axis": S((3, 3), _IDX, axis=1, shape=(3, 5)),
    "tensor_scatter_nd_add": S((4, 3), np.array([[0], [2], [0]]), (3, 3)),  # rows, a repeat (added)
    "tensor_scatter_nd_update": S((4, 3), np.array([[0], [2], [0]]), (3, 3)),  # rows, a repeat (the last wins)
    # linear algebra
    "matmul": S((2, 3, 4), (4, 5)),
    "linear": S((4, 3), (2, 3), (2,)),
    "linear_at": S((4, 3), (2, 3), (4, 5, 2), key=(slice(None), 3)),
    "lstm_gates": S((3, 8), domain=[(-4, 4)]),
    "rnn_cell": S((4, 3), (3, 3), (4, 5, 3), key=(slice(None), 2)),
    "rnn_tanh": S((4, 5, 2), (4, 3), (3, 2), (3, 3), (3,), (3,), domain=[(-2, 2), ANY, (-2, 2)]),  # x, h0, W_ih, W_hh, b_ih, b_hh
    "lstm_gates_at": S((4, 2), (8, 2), (4, 5, 8), key=(slice(None), 3), domain=[ANY, ANY, (-2, 2)]),
    "lstm_cell": S((4, 3), (4, 3), (4, 3), (4, 3), (4, 3), domain=[ANY, (0, 1), (0, 1), (-1, 1), (0, 1)]),  # c, i, f, g, o
    "tensordot": S((2, 3, 4), (4, 3, 5), axes=((1, 2), (1, 0))),
    "einsum": S((2, 3), (3, 4), (4,), subscripts="ij,jk,k->i"),
    "inv": S(_A2),
    "det": S(_A2),
    "slogdet": S(_A * np.array([1.0, -1.0, 1.0])),  # a negative determinant
    "solve": S(_A2, np.array([0.5, -1.0, 2.0])),  # a batch of A, one vector b (broadcast)
    "cholesky": S(np.stack([_SPD, _SPD + np.eye(3)])),
    "eigh": S(_SPD),
    "expm": S(_A2),
    "sqrtm": S(np.stack([_SPD, _A @ _A.T + np.eye(3)])),
    "solve_sylvester": S(_A, np.array([[1.0, 0.2], [0.1, 2.0]]), (3, 2)),
    "eig": S(_EIG),
    "charpoly": S(_EIG),  # np.poly of a matrix (prims/polynomial.py)
    "polyroots": S(np.array([1.0, -4.75, 2.375, 8.9375, -4.375])),  # np.roots: distinct real roots
    "svd": S(np.array([[2.0, 0.3, -0.4, 0.5], [0.1, 1.5, 0.2, -0.7], [-0.3, 0.4, 1.0, 0.2]])),
    "svdvals": S(np.array([[2.0, 0.3, -0.4, 0.5], [0.1, 1.5, 0.2, -0.7], [-0.3, 0.4, 1.0, 0.2]])),
    "qr": S(np.concatenate([_A2, _A2[:, :1] + 0.5], axis=1)),  # a batch of tall (4, 3) matrices
    "pinv": S(np.array([[2.0, 0.3, -0.4, 0.5], [0.1, 1.5, 0.2, -0.7], [-0.3, 0.4, 1.0, 0.2]]), rcond=1e-15),
    # more ufuncs and scipy.special (prims/special.py)
    "exp2": S((4,), domain=[(-3, 3)]),
    "cbrt": S((4,), domain=[(0.3, 3)]),
    "arcsinh": S((4,), domain=[(-3, 3)]),
    "arccosh": S((4,), domain=[(1.2, 4)]),
    "arctanh": S((4,), domain=[(-0.9, 0.9)]),
    "hypot": S((3, 4), (4,), domain=[(0.3, 3), (-3, -0.3)]),
    "logaddexp2": S((3, 4), (4,), domain=[(-3, 3), (-3, 3)]),
    "fmax": S((3, 4), (4,), domain=[(-3, 3), (-3, 3)]),
    "fmin": S((3, 4), (3, 4), domain=[(-3, 3), (-3, 3)]),
    "remainder": S((3, 4), (4,), domain=[(0.1, 5), (0.7, 1.3)]),
    "fmod": S((3, 4), (4,), domain=[(-5, 5), (0.7, 1.3)]),
    "trunc": S((4,)),
    "sinc": S((5,), domain=[(-2, 2)]),
    # complex parts (real samples here; complex values: tests/test_autoprop_complex.py)
    "real": S((4,)),
    "imag": S((4,)),
    "conj": S((4,)),
    "angle": S((4,), domain=[(0.2, 2)]),
    # numpy.fft (complex results)
    "fft": S((3, 4)),
    "ifft": S((4, 3), axis=0),
    "fft2": S((2, 3, 4)),
    "ifft2": S((3, 4), norm="ortho"),
    "fftn": S((2, 3, 2), axes=(0, 2)),
    "ifftn": S((3, 2), norm="forward"),
    "rfft": S((2, 5)),
    "irfftn": S((3, 4), axes=(1,)),
    "logit": S((4,), domain=[(0.1, 0.9)]),
    "xlogy": S((3, 4), (4,), domain=[(-2, 2), (0.3, 3)]),
    "gammaln": S((4,), domain=[(0.3, 4)]),
    "digamma": S((4,), domain=[(0.3, 4)]),
    "polygamma": S((4,), n=2, domain=[(0.3, 4)]),
    "erfinv": S((4,), domain=[(-0.8, 0.8)]),
    "ndtr": S((4,)),
    "log_ndtr": S((4,), domain=[(-6, 3)]),
    "ndtri": S((4,), domain=[(0.1, 0.9)]),
    "gamma": S((4,), domain=[(0.3, 4)]),
    "loggamma": S((4,), domain=[(0.3, 4)]),
    "i0": S((4,)),
    "i1": S((4,)),
    "i0_numpy": S((4,)),
    "modf_fraction": S((4,), domain=[(1.1, 1.9)]),
    "entr": S((4,), domain=[(0.2, 3)]),
    "log_expit": S((4,)),
    "erfcx": S((4,)),
    "betaln": S((3, 4), (4,), domain=[(0.3, 3), (0.3, 3)]),
    "beta": S((3, 4), (4,), domain=[(0.3, 3), (0.3, 3)]),
    "zeta": S((3,), (3,), domain=[(1.5, 4.5), (0.5, 3)]),
    "zeta_dx": S(2.5, (3,), domain=[None, (0.5, 3)]),  # (its x-derivatives: the gaps_s26 tests; the third refused)
    "zeta_dxx": S(2.5, (3,), domain=[None, (0.5, 3)]),  # (its x-derivative, the third, is refused)
    "i0e": S((4,)), "i1e": S((4,)), "exp1": S((4,), domain=[(0.3, 3)]), "expi": S((4,), domain=[(0.3, 3)]),
    "spence": S((4,), domain=[(0.3, 3)]),
    "rel_entr": S((3, 4), (4,), domain=[(0.3, 3), (0.3, 3)]), "kl_div": S((4,), (3, 4), domain=[(0.3, 3), (0.3, 3)]),
    "betainc": S(np.array([2.0, 0.5, 3.0]), np.array([1.5, 2.0, 0.7]), (3,), domain=[None, None, (0.05, 0.95)]),
    "xlog1py": S((3, 4), (4,), domain=[(-2, 2), (-0.5, 3)]),
    "gammainc": S(np.array([0.7, 2.0, 3.5]), (3,), domain=[None, (0.3, 3)]),
    "gammaincc": S(np.array([[0.7], [3.5]]), (2, 3), domain=[None, (0.3, 3)]),
    # (a's derivatives: tests/test_autoprop_incgamma.py, against jax and mpmath; the third in a is refused)
    # (a a number: the property tests differentiate every float array twice, and the third in a is refused)
    "gammainc_da": S(2.0, (3,), domain=[None, (0.3, 3)]),
    "gammainc_daa": S(0.7, (2, 3), domain=[None, (0.3, 3)]),
    "jv": S(np.array([0.5, 2.0, 1.3]), (3,), domain=[None, (0.3, 5)]),
    "yv": S(np.array([0.5, 2.0, 1.3]), (3,), domain=[None, (0.5, 5)]),
    "yn": S(np.array([0, 2, 1]), (3,), domain=[None, (0.5, 5)]),
    "iv": S(np.array([0.0, 1.0, 2.0]), (3,)),
    "ive": S(np.array([0.5, 1.0, 2.5]), (3,), domain=[None, (0.2, 4)]),
    "j0": S((4,), domain=[(-8, 8)]),
    "j1": S((4,), domain=[(-8, 8)]),
    "y0": S((4,), domain=[(0.5, 8)]),
    "y1": S((4,), domain=[(0.5, 8)]),
    "erfcinv": S((4,), domain=[(0.2, 1.8)]),
    "rgamma": S((4,), domain=[(0.3, 4)]),
    "gammasgn": S((4,), domain=[(-3.7, 4)]),
    "stdtr": S(np.array([0.7, 3.0, 250.0]), (3,), domain=[None, (-3, 3)]),
    "t_logcdf": S(np.array([0.7, 3.0, 1e4]), (3,), domain=[None, (-3, 3)]),
    # windows (im2col / col2im)
    "extract_patches": S((2, 3, 5, 6), **_PATCH),
    "scatter_patches": S((2, 3, 3, 2, 3, 4), x_shape=(2, 3, 5, 6), **_PATCH),
}


# --- numpy functions built from the primitives (composites) -----------------------------
class Fn(NamedTuple):
    """A numpy function over Tensors: ``fn(np, *arrays)`` (``np`` is numpy for the tape,
    ``autograd.numpy`` for the oracle), its float inputs (shapes, drawn from ``domain``),
    and whether HIPS autograd has the function (else the oracle is central differences
    only)."""

    fn: Any
    args: list
    domain: tuple = ()
    autograd: bool = True

    def make(self, rng):
        return Sample(list(self.args), {}, tuple(self.domain)).make(rng)[0]


def F(fn, *args, domain=(), autograd=True):
    return Fn(fn, list(args), tuple(domain), autograd)


_POS2 = [(0.5, 2.0), (0.5, 2.0)]
FUNCTION_SAMPLES: dict[str, Fn] = {
    "nanprod": F(lambda np, a: np.nanprod(a, axis=0), (3, 2), autograd=False),
    "nancumsum": F(lambda np, a: np.nancumsum(a, axis=1), (2, 3), autograd=False),
    "cumulative_sum": F(lambda np, a: np.cumulative_sum(a, axis=1, include_initial=True), (2, 3),
                        autograd=False),
    "heaviside": F(lambda np, a, b: np.heaviside(a, b) * a ** 2, (4,), (4,), autograd=False),
    "copysign": F(lambda np, a, b: np.copysign(a, b) * a, (4,), (4,), autograd=False),
    "nanstd": F(lambda np, a: np.nanstd(a, axis=1, ddof=1), (2, 3), autograd=False),
    "compress": F(lambda np, a: np.compress([True, False, True], a, axis=1) ** 2, (2, 3), autograd=False),
    "extract": F(lambda np, a: np.extract([[1, 0, 1], [0, 1, 1]], a) ** 2, (2, 3), autograd=False),
    "delete": F(lambda np, a: np.delete(a, [0, 2], axis=1) ** 2 + np.delete(a, 1).sum(), (2, 3),
                autograd=False),
    "interp": F(lambda np, x, fp: np.interp(x * 2.0 + 2.0, [0.0, 1.0, 2.5, 4.0], fp, left=-1.0), (5,), (4,),
                autograd=False),
    "bincount": F(lambda np, a: np.bincount([0, 2, 2, 1], weights=a, minlength=4) ** 2, (4,), autograd=False),
    "block": F(lambda np, a, b: np.block([[a, b], [b, a]]) ** 2 + np.block([a[0], 1.0]).sum(), (2, 2), (2, 2),
               autograd=False),
    "ldexp": F(lambda np, a: np.ldexp(a, [1, -2, 3]), (3,), autograd=False),
    "vstack": F(lambda np, a, b: np.vstack([a, b]), (2, 3), (3,)),
    "hstack": F(lambda np, a, b: np.hstack((a, b)), (2, 3), (2, 1)),
    "dstack": F(lambda np, a, b: np.dstack([a, b]), (2, 3), (2, 3)),
    "column_stack": F(lambda np, a, b: np.column_stack([a, b]), (3,), (3, 2)),
    "append": F(lambda np, a, b: np.append(a, b, axis=0), (2, 3), (1, 3)),
    "atleast_3d": F(lambda np, a: np.atleast_3d(a) * 2.0, (3,)),
    "repeat": F(lambda np, a: np.repeat(a, 2, axis=1), (2, 3)),
    "tile": F(lambda np, a: np.tile(a, (2, 1, 2)), (2, 3)),
    "roll": F(lambda np, a: np.roll(a, -2, axis=1), (2, 5)),
    "rot90": F(lambda np, a: np.rot90(a, 3), (2, 3)),
    "fliplr": F(lambda np, a: np.fliplr(a) + np.flipud(a), (3, 3)),
    "diag": F(lambda np, a, v: np.diag(a, 1) * np.diag(v, -1)[:3, :2].sum(), (3, 4), (3,),
              autograd=False),
    "diagonal": F(lambda np, a: np.diagonal(a, offset=-1, axis1=2, axis2=0), (3, 2, 4),
                  autograd=False),
    "diagflat": F(lambda np, a: np.diagflat(a, k=1), (2, 2), autograd=False),
    "trace": F(lambda np, a: np.trace(a, offset=1), (4, 3, 2)),
    "array_split": F(lambda np, a: np.array_split(a, 3, axis=1)[2] * 3.0, (2, 7)),
    "hsplit": F(lambda np, a: np.hsplit(a, 2)[1] ** 2, (3, 4)),
    "vsplit": F(lambda np, a: np.vsplit(a, [1])[1] ** 2, (3, 4)),
    "dsplit": F(lambda np, a: np.dsplit(a, 2)[0] ** 2, (2, 2, 4)),
    "sort": F(lambda np, a: np.sort(a, axis=0) * np.arange(4.0), (3, 4), autograd=False),
    "sort_1d": F(lambda np, a: np.sort(a) * np.arange(5.0), (5,)),
    "partition": F(lambda np, a: np.partition(a, 2)[..., 2:] ** 2, (3, 5), autograd=False),
    "diff": F(lambda np, a: np.diff(a, n=2, axis=0, prepend=0.5) ** 2, (4, 3), autograd=False),
    "gradient": F(lambda np, a: np.gradient(a, 0.5, axis=1, edge_order=2) ** 2, (3, 5),
                  autograd=False),
    "cross": F(lambda np, a, b: np.cross(a, b), (4, 3), (3,), autograd=False),
    "kron": F(lambda np, a, b: np.kron(a, b), (2, 3), (3, 2)),
    "inner": F(lambda np, a, b: np.inner(a, b), (2, 3), (4, 3)),
    "vdot": F(lambda np, a, b: np.vdot(a, b), (2, 3), (3, 2), autograd=False),
    "linspace": F(lambda np, a, b: np.linspace(a, b, 5, axis=1), (3,), (3,), autograd=False),
    "linspace_scalars": F(lambda np, a, b: np.linspace(a, b, 4), (), ()),
    "select": F(lambda np, a, b: np.select([a > 0, b > 0], [a * b, b ** 2], 0.25), (5,), (5,),
                domain=[(-2, 2), (-2, 2)]),
    "nan_to_num": F(lambda np, a: np.sin(np.nan_to_num(a + np.array([0.0, np.nan, np.inf]))), (3,)),
    "real_imag_conj": F(lambda np, a: np.real(a) * np.conj(a) + np.imag(a), (3,)),
    "cumprod": F(lambda np, a: np.cumprod(a, axis=1) + np.cumprod(a * np.array([1.0, 0.0, 1.0, 1.0]))[:4],
                 (2, 4), autograd=False),
    "median": F(lambda np, a: np.median(a, axis=0) + np.median(a), (4, 3), autograd=False),
    "average": F(lambda np, a, w: np.average(a, axis=1, weights=w), (2, 3), (3,),
                 domain=[(-2, 2), (0.5, 2)], autograd=False),
    "ptp": F(lambda np, a: np.ptp(a, axis=1), (3, 4), autograd=False),
    "nansum": F(lambda np, a: np.nansum(a + np.array([1.0, np.nan, 2.0]), axis=-1)
                + np.nanmean(a + np.array([1.0, np.nan, 2.0])), (2, 3), autograd=False),
    "nanmax": F(lambda np, a: np.nanmax(a + np.array([1.0, np.nan, 2.0]), axis=1)
                + np.nanmin(a), (2, 3), autograd=False),
    "cov": F(lambda np, a: np.cov(a), (3, 5), autograd=False),
    "corrcoef": F(lambda np, a: np.corrcoef(a, rowvar=False)[0], (5, 3), autograd=False),
    "meshgrid": F(lambda np, a, b: np.meshgrid(a, b)[0] * np.meshgrid(a, b, indexing="ij")[1].T,
                  (3,), (2,), autograd=False),
    "broadcast_arrays": F(lambda np, a, b: np.broadcast_arrays(a, b)[1] * 2.0, (3, 1), (4,),
                          autograd=False),
    "pad_reflect_edge": F(lambda np, a: np.pad(a, ((1, 2), (2, 0)), mode="reflect") ** 2
                          + np.pad(a, 1, mode="edge").sum() + np.pad(a, 2, mode="wrap").sum()
                          * np.pad(a, (1, 3), mode="symmetric")[0, 0], (3, 3), autograd=False),
    "einsum_interleaved_diagonal": F(lambda np, a, b: np.einsum(a, [0, 0], b, [0, 1], [1])
                                     + np.einsum("ii", a) + np.einsum("iij->j", a[:, :, None] * b[0]),
                                     (3, 3), (3, 2), autograd=False),  # autograd: no 'ii' VJP
    "array_of_mixed_list": F(lambda np, a: np.array([[a[0], 2.0], [a[1] * a[0], 1.5]]) ** 2, (2,)),
    "remainder_operator": F(lambda np, a, b: (a % b) + np.fmod(a, b) ** 2 + (1.0 % b) * (a % 0.5),
                            (4,), (4,), domain=[(1.1, 1.4), (0.7, 0.9)], autograd=False),
    "cbrt_hyperbolic": F(lambda np, a: np.cbrt(a) * np.arcsinh(a) + np.arccosh(a + 1.0)
                         + np.arctanh(a / 3.0), (4,), domain=[(0.3, 2.5)], autograd=False),
    "fabs_deg2rad": F(lambda np, a: np.fabs(a) * np.deg2rad(a) + np.rad2deg(a) ** 2
                      + np.radians(a) * np.degrees(a), (4,), domain=[(0.2, 2)]),
    # session 19 (tester 18's refusals); jax's gradients and HVPs: tests/vocab19_refs.py
    "insert": F(lambda np, a, v: np.insert(a, np.asarray([1, 3]), v, axis=1) ** 2 + np.insert(a, 2, v[0] * 0.5).sum()
                + np.insert(a, 1, v[1], axis=0)[1].sum() * 3.0, (2, 3), (2,), autograd=False),
    "cond": F(lambda np, a: np.linalg.cond(a + 3.0 * np.eye(3)) + 0.7 * np.linalg.cond(a + 3.0 * np.eye(3), "fro")
              - 1.3 * np.linalg.cond(a + 3.0 * np.eye(3), -2) + 0.9 * np.linalg.cond(a + 3.0 * np.eye(3), "nuc")
              + 1.1 * np.linalg.cond(a + 3.0 * np.eye(3), 1) + 0.6 * np.linalg.cond(a + 3.0 * np.eye(3), -1)
              + 0.8 * np.linalg.cond(a + 3.0 * np.eye(3), np.inf) - 0.5 * np.linalg.cond(a + 3.0 * np.eye(3), -np.inf)
              + np.linalg.cond(a[:2] + np.eye(2, 3), 2), (3, 3), autograd=False),
    "piecewise": F(lambda np, a: np.piecewise(a, [a < 0, a > 1], [lambda v: v ** 3, lambda v: np.sin(v),
                                                                   lambda v: 2.0 * v]), (2, 5), autograd=False),
    "polyfit": F(lambda np, x, y, w: np.polyfit(x, y, 2, w=w, cov=True), (6,), (6,), (6,),
                 domain=[(-1, 1), (-1, 1), (0.5, 2)], autograd=False),
    "polyfit_2d": F(lambda np, x, y: np.polyfit(x, y, 1, cov="unscaled")[0] + np.polyfit(x, y, 3)[1],
                    (6,), (6, 2), domain=[(-1, 1), (-1, 1)], autograd=False),
    "var_std_mean": F(lambda np, a: np.var(a, axis=1, mean=np.mean(a, axis=1, keepdims=True), ddof=1)
                      + np.std(a, axis=0, mean=np.mean(a, axis=0, keepdims=True) + 0.1)[:2], (2, 3), autograd=False),
    "pad_linear_ramp": F(lambda np, a: np.pad(a, ((2, 1), (0, 3)), mode="linear_ramp", end_values=((0.5, -1), (2, 0)))
                         ** 2, (3, 2), autograd=False),
    "pad_mean_median": F(lambda np, a: np.pad(a, ((1, 2), (2, 1)), mode="mean", stat_length=2) ** 2
                         + np.pad(a, 1, mode="median")[0, 0], (3, 4), autograd=False),
    "pad_max_min": F(lambda np, a: np.pad(a, ((1, 0), (2, 1)), mode="maximum") ** 2
                     + np.pad(a, (1, 2), mode="minimum", stat_length=((2, 1), (3, 2)))[-1], (3, 4), autograd=False),
    "pad_odd": F(lambda np, a: np.pad(a, ((4, 1), (1, 2)), mode="reflect", reflect_type="odd") ** 2
                 + np.pad(a, ((1, 5), (2, 0)), mode="symmetric", reflect_type="odd")[-1].sum(), (3, 2),
                 autograd=False),
    "median_axes": F(lambda np, a: np.median(a, axis=(0, 2)) + np.median(a, axis=(2, 1), keepdims=True).sum()
                     + np.nanmedian(a + np.array([0.0, np.nan, 0.0, 0.0]), axis=(0, 2)) ** 2, (2, 3, 4),
                     autograd=False),
    "nanquantile": F(lambda np, a, q: np.nanquantile(a + np.array([0.0, np.nan, 0.0, 0.0, 0.0]), q, axis=1)
                     + np.nanpercentile(a + np.array([[0.0], [np.nan], [0.0]]), 30.0, axis=(0, 1)),
                     (3, 5), (2,), domain=[(-1.5, 1.5), (0.1, 0.9)], autograd=False),
    "vander": F(lambda np, a: np.vander(a, 4) * 2.0 + np.vander(a, 3, increasing=True).sum(), (3,), autograd=False),
    "nanmedian": F(lambda np, a: np.nanmedian(a + np.array([0.0, np.nan, 0.0, 0.0]), axis=1) ** 2, (3, 4),
                   autograd=False),
    "nanpercentile": F(lambda np, a: np.nanpercentile(a + np.array([np.nan, 0.0, 0.0]), [20.0, 65.0], axis=1,
                                                      method="hazen"), (2, 3), autograd=False),
    "scipy_special": F(lambda sp, a, b: sp.logsumexp(a, axis=0) + sp.softmax(a, axis=1).sum(0)
                       + sp.log_softmax(a, axis=0)[0] * sp.expit(b) + sp.logit(sp.expit(b))
                       + sp.xlogy(b, a[0] ** 2) + sp.gammaln(b + 2.0) + sp.digamma(b + 2.0)
                       + sp.erfinv(b / 3.0) + sp.erf(b) * sp.erfc(b),
                       (2, 3), (3,), autograd=False),
}
#: np.quantile of every method numpy has, q a Tensor too (the continuous methods are linear in it)
QUANTILE_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
                    "midpoint", "nearest")
for _m in QUANTILE_METHODS:
    FUNCTION_SAMPLES["quantile_" + _m] = F(
        lambda np, a, q, m=_m: np.quantile(a, q, axis=1, method=m) + np.percentile(a, 100.0 * q[0], method=m),
        (3, 5), (2,), domain=[(-1.5, 1.5), (0.05, 0.95)], autograd=False)
