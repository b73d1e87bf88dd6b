"""numpy's names over autoprop Tensors: ``import autoprop.numpy as anp``.

Each function accepts Tensors, numpy arrays and Python scalars and returns a Tensor;
when a tape tracks an input the operation is recorded. Plain ``np.`` calls on Tensors
reach the same functions through ``__array_function__`` / ``__array_ufunc__``, so numpy
code is differentiated as written. A numpy function outside this list, ``out=``, and
in-place updates raise TypeError naming the function, why the tape cannot record it,
and what to write instead.

The derivative of each name: ``autoprop.explain(name)``. Conventions at kinks and
ties (``abs'(0) = 0``, ties in max/maximum split evenly): see
:mod:`autoprop.core.registry`. Source: ``lessons/10-gradient-tape.md``.

Examples
--------
>>> import numpy as np
>>> import autoprop as ap
>>> import autoprop.numpy as anp
>>> x = ap.Variable([1.0, 2.0, 3.0])
>>> with ap.GradientTape() as tape:
...     y = anp.sum(anp.square(x)) + np.sum(x)   # both spellings are recorded
>>> tape.gradient(y, x).numpy()
array([3., 5., 7.])
"""

import types as _types

import numpy as _np

from .core import registry as _R

_F = _R._FUNCTIONS

# elementwise (ufuncs)
add = _R.add
subtract = _R.subtract
multiply = _R.multiply
divide = true_divide = _R.divide
power = _R.power
negative = _R.negative
exp = _R.exp
expm1 = _R.expm1
log = _R.log
log1p = _R.log1p
log2 = _R.log2
log10 = _R.log10
sqrt = _R.sqrt
square = _R.square
reciprocal = _R.reciprocal
abs = absolute = _R.absolute  # noqa: A001
sin = _R.sin
cos = _R.cos
tan = _R.tan
arcsin = _R.arcsin
arccos = _R.arccos
arctan = _R.arctan
arctan2 = _R.arctan2
sinh = _R.sinh
cosh = _R.cosh
tanh = _R.tanh
maximum = _R.maximum
minimum = _R.minimum
logaddexp = _R.logaddexp
matmul = _R.matmul
where = _F[_np.where]
clip = _F[_np.clip]


def positive(x):
    """``+x``: the same tensor (the identity; its VJP passes ``g`` through)."""
    return _R._t(x)


# not differentiable: the path is cut (None), see autoprop.explain("argmax")
sign = _R.sign
floor = _R.floor
ceil = _R.ceil
round = _R.round  # noqa: A001
argmax = _R.argmax
argmin = _R.argmin
less = _R.less
less_equal = _R.less_equal
greater = _R.greater
greater_equal = _R.greater_equal
equal = _R.equal
not_equal = _R.not_equal
# elementwise predicates: bool Tensors (no gradient), as the comparisons
isnan, isfinite, isinf, isneginf, isposinf, signbit = (
    _R.isnan, _R.isfinite, _R.isinf, _R.isneginf, _R.isposinf, _R.signbit)
isin = _F[_np.isin]  # (values only: an ndarray of bools, prims/extra.py's VALUES_ONLY)

# reductions
sum = _F[_np.sum]  # noqa: A001
mean = _F[_np.mean]
max = amax = _F[_np.max]  # noqa: A001
min = amin = _F[_np.min]  # noqa: A001
prod = _F[_np.prod]
cumsum = _F[_np.cumsum]
var = _F[_np.var]
std = _F[_np.std]

# linear algebra
dot = _F[_np.dot]
einsum = _F[_np.einsum]
tensordot = _F[_np.tensordot]
outer = _F[_np.outer]

# numpy.linalg (derivatives: autoprop.explain("inv"), ..., "eigh")
linalg = _types.SimpleNamespace(
    inv=_F[_np.linalg.inv], det=_F[_np.linalg.det], slogdet=_F[_np.linalg.slogdet],
    solve=_F[_np.linalg.solve], cholesky=_F[_np.linalg.cholesky], eigh=_F[_np.linalg.eigh],
    eigvalsh=_F[_np.linalg.eigvalsh], norm=_F[_np.linalg.norm],
    matrix_power=_F[_np.linalg.matrix_power], multi_dot=_F[_np.linalg.multi_dot],
    svd=_F[_np.linalg.svd], qr=_F[_np.linalg.qr], pinv=_F[_np.linalg.pinv],
    lstsq=_F[_np.linalg.lstsq], tensorsolve=_F[_np.linalg.tensorsolve],
    tensorinv=_F[_np.linalg.tensorinv], cond=_F[_np.linalg.cond],
    **{k: _F[getattr(_np.linalg, k)] for k in ("svdvals", "vector_norm", "matrix_norm")
       if hasattr(_np.linalg, k)},  # numpy >= 2
)

# shape
reshape = _F[_np.reshape]
ravel = _F[_np.ravel]
transpose = _F[_np.transpose]
swapaxes = _F[_np.swapaxes]
moveaxis = _F[_np.moveaxis]
expand_dims = _F[_np.expand_dims]
squeeze = _F[_np.squeeze]
broadcast_to = _F[_np.broadcast_to]
concatenate = _F[_np.concatenate]
stack = _F[_np.stack]
split = _F[_np.split]
pad = _F[_np.pad]
flip = _F[_np.flip]
take = _F[_np.take]
take_along_axis = _F[_np.take_along_axis]
triu = _F[_np.triu]
tril = _F[_np.tril]

# more ufuncs (prims/special.py); erf/erfc are scipy.special's (public here too)
mod, fix, conjugate = _R.remainder, _R.trunc, _R.conj
for _name in ("exp2", "cbrt", "arcsinh", "arccosh", "arctanh", "hypot", "logaddexp2", "fmax",
              "fmin", "remainder", "fmod", "trunc", "erf", "erfc", "conj", "sinc", "fabs",
              "deg2rad", "rad2deg", "radians", "degrees", "real", "imag", "nan_to_num",
              # stacking, splitting, rearranging, statistics (prims/stacking.py)
              "vstack", "hstack", "dstack", "column_stack", "append", "atleast_1d", "atleast_2d",
              "atleast_3d", "repeat", "tile", "roll", "rot90", "fliplr", "flipud", "rollaxis",
              "diagonal", "diag", "diagflat", "trace", "array_split", "hsplit", "vsplit", "dsplit",
              "sort", "partition", "diff", "gradient", "cross", "kron", "inner", "vdot",
              "linspace", "select", "cumprod", "median", "average", "ptp", "nansum", "nanmean",
              "nanmax", "nanmin", "cov", "corrcoef", "meshgrid", "broadcast_arrays",
              # numeric helpers (prims/numeric.py)
              "quantile", "percentile", "nanquantile", "nanpercentile", "nanmedian", "insert", "vander",
              "piecewise", "polyfit",
              # selections, set functions and histograms (prims/extra.py; the set functions'
              # gradient goes to each value's first occurrence in concatenate(ar1, ar2), as unique's)
              "unique", "union1d", "intersect1d", "setdiff1d", "setxor1d", "histogram",
              "histogram_bin_edges", "histogram2d", "histogramdd", "cumulative_sum", "cumulative_prod"):
    globals()[_name] = getattr(_R, _name)
del _name
row_stack = vstack  # noqa: F821 (numpy < 2's name)
# np.array / np.asarray / np.r_ / np.c_ cannot be intercepted on lists: these keep the
# Tensors of a list on the tape
array = _R.array
asarray = _R.asarray
r_ = _R.r_
c_ = _R.c_

# constants shaped like a tensor (not connected to it)
zeros_like = _F[_np.zeros_like]
ones_like = _F[_np.ones_like]
full_like = _F[_np.full_like]

__all__ = [n for n in dir() if not n.startswith("_")]
