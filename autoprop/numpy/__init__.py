"""numpy's names over autoprop Tensors: ``import autoprop.numpy as anp``.

Each function accepts Tensors, numpy arrays and Python scalars and returns a Tensor;
when a tape tracks an input the operation is recorded. Each name is numpy's own dispatch of
that numpy function (``anp.f(...)`` does what ``np.f(...)`` does on Tensors, through
``__array_function__`` / ``__array_ufunc__``'s code), so numpy code is differentiated as
written and both spellings follow one rule: a call in which no Tensor is float or complex
(integer or boolean Tensors, arrays, numbers) is numpy's own function on the values, in
numpy's values and dtype, returned as constant Tensors. ``out=`` and in-place updates raise
TypeError naming the function, why the tape cannot record it, and what to write instead.
A ufunc's name has numpy's methods too: ``anp.add.reduce``, ``anp.maximum.accumulate``,
``anp.multiply.outer``, ``anp.logaddexp.reduce`` are recorded as the numpy function each computes
(sum, a running max, a broadcast product, logsumexp), exactly as ``np.add.reduce(t)``;
``reduceat``, ``at`` on a Tensor and the methods with no recorded function raise TypeError
naming what to write (``at`` on plain arrays is numpy's own, in place).

Every other numpy name is numpy's own object, as ``autograd.numpy`` re-exports numpy:
``anp.zeros is np.zeros`` (plain arrays from constructors, ``anp.pi``, ``anp.newaxis``; ``anp.array`` and
``anp.asarray`` of plain data give numpy's plain array too, a Tensor only with a Tensor inside), and
``autoprop.numpy.linalg``, ``.fft`` and ``.random`` are modules
(``from autoprop.numpy.linalg import solve``). A Tensor given to such a function is recorded or
refused exactly as through plain numpy: numpy dispatches it to autoprop, which records the
function or raises TypeError naming it (``np.searchsorted``); a function that does not
dispatch converts the Tensor to an array, which warns (``TapeEscapeWarning``), and
``tape.gradient`` refuses a target it may have fed. Porting from HIPS autograd: lesson 10, §9.

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

import numpy as _np
import scipy.special as _sp

from ..core import registry as _R
from ..core.prims.stacking import _nested_has_tensor
from ._names import numpy_attr as _numpy_attr
from ._names import numpy_dir as _numpy_dir

# Each name is numpy's own dispatch of that numpy function or ufunc (``registry.numpy_name``):
# ``anp.f(...)`` does what ``np.f(...)`` does on Tensors, one rule for both spellings (a call in
# which no Tensor is float or complex is numpy's own function on the values, constant Tensors;
# a ufunc's result in the ufunc's own dtype), and returns Tensors for arrays and numbers too.
_b = _R.numpy_name

# elementwise (ufuncs)
add = _b(_np.add)
subtract = _b(_np.subtract)
multiply = _b(_np.multiply)
divide = true_divide = _b(_np.divide)
power = _b(_np.power)
negative = _b(_np.negative)
exp = _b(_np.exp)
expm1 = _b(_np.expm1)
log = _b(_np.log)
log1p = _b(_np.log1p)
log2 = _b(_np.log2)
log10 = _b(_np.log10)
sqrt = _b(_np.sqrt)
square = _b(_np.square)
reciprocal = _b(_np.reciprocal)
abs = absolute = _b(_np.absolute)  # noqa: A001
sin = _b(_np.sin)
cos = _b(_np.cos)
tan = _b(_np.tan)
arcsin = _b(_np.arcsin)
arccos = _b(_np.arccos)
arctan = _b(_np.arctan)
arctan2 = _b(_np.arctan2)
sinh = _b(_np.sinh)
cosh = _b(_np.cosh)
tanh = _b(_np.tanh)
maximum = _b(_np.maximum)
minimum = _b(_np.minimum)
logaddexp = _b(_np.logaddexp)
matmul = _b(_np.matmul)
where = _b(_np.where)
clip = _b(_np.clip)


def positive(x):
    """``+x``: a new tensor with ``x``'s values, as numpy's ``+a`` is a new array (a recorded copy,
    ``Tensor.__pos__``; its VJP passes ``g`` through)."""
    return +_R._t(x)


# not differentiable: the path is cut (None), see autoprop.explain("argmax")
sign = _b(_np.sign)
floor = _b(_np.floor)
ceil = _b(_np.ceil)
round = _b(_np.round)  # noqa: A001
argmax = _b(_np.argmax)
argmin = _b(_np.argmin)
less = _b(_np.less)
less_equal = _b(_np.less_equal)
greater = _b(_np.greater)
greater_equal = _b(_np.greater_equal)
equal = _b(_np.equal)
not_equal = _b(_np.not_equal)
# elementwise predicates: bool Tensors (no gradient), as the comparisons
isnan, isfinite, isinf, isneginf, isposinf, signbit = (
    _b(_np.isnan), _b(_np.isfinite), _b(_np.isinf), _b(_np.isneginf), _b(_np.isposinf), _b(_np.signbit))
isin = _b(_np.isin)  # (values only: an ndarray of bools, prims/extra.py's VALUES_ONLY)

# reductions
sum = _b(_np.sum)  # noqa: A001
mean = _b(_np.mean)
max = amax = _b(_np.max)  # noqa: A001
min = amin = _b(_np.min)  # noqa: A001
prod = _b(_np.prod)
cumsum = _b(_np.cumsum)
var = _b(_np.var)
std = _b(_np.std)

# linear algebra
dot = _b(_np.dot)
einsum = _b(_np.einsum)
tensordot = _b(_np.tensordot)
outer = _b(_np.outer)

# numpy.linalg, numpy.fft, numpy.random: real submodules, as autograd.numpy's
# (``from autoprop.numpy.linalg import solve``; derivatives: autoprop.explain("inv"), ...)
from . import fft, lib, linalg, random  # noqa: E402, F401 (in __all__)

# shape
reshape = _b(_np.reshape)
ravel = _b(_np.ravel)
transpose = _b(_np.transpose)
swapaxes = _b(_np.swapaxes)
moveaxis = _b(_np.moveaxis)
expand_dims = _b(_np.expand_dims)
squeeze = _b(_np.squeeze)
broadcast_to = _b(_np.broadcast_to)
concatenate = _b(_np.concatenate)
stack = _b(_np.stack)
split = _b(_np.split)
pad = _b(_np.pad)
flip = _b(_np.flip)
take = _b(_np.take)
take_along_axis = _b(_np.take_along_axis)
triu = _b(_np.triu)
tril = _b(_np.tril)

# more ufuncs (prims/special.py); erf/erfc are scipy.special's (public here too)
mod, fix, conjugate = _b(_np.remainder), _b(_np.fix), _b(_np.conjugate)
erf, erfc = _b(_sp.erf), _b(_sp.erfc)
for _name in ("exp2", "cbrt", "arcsinh", "arccosh", "arctanh", "hypot", "logaddexp2", "fmax",
              "fmin", "remainder", "fmod", "trunc", "conj", "sinc", "fabs",
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
    globals()[_name] = _b(getattr(_np, _name))
del _name
row_stack = vstack  # noqa: F821 (numpy < 2's name)
# np.array / np.asarray / np.r_ / np.c_ cannot be intercepted on lists: these keep the
# Tensors of a list on the tape


def array(object, dtype=None, *, copy=True, ndmin=0, **kw):  # noqa: A002
    """``numpy.array``: with a Tensor in ``object`` (nested lists mixing Tensors and numbers) a Tensor,
    the Tensors kept on the tape (:func:`autoprop.core.prims.stacking.array`); plain data gives numpy's plain
    array, as the other constructors (``anp.zeros``) and autograd.numpy's ``array`` do, so the data a script
    prepares stays writable in place (fn41: HIPS autograd's ``make_pinwheel``, ``features = rs.randn(n, 2) *
    np.array([a, b])`` then ``features[:, 0] += 1``, was refused as a write into a Tensor).

    Returns
    -------
    Tensor or numpy.ndarray
    """
    if _nested_has_tensor(object):
        return _R.array(object, dtype, copy=copy, ndmin=ndmin, **kw)
    return _np.array(object, dtype, copy=copy, ndmin=ndmin, **kw)


def asarray(a, dtype=None, **kw):
    """``numpy.asarray``: a Tensor as it is, lists mixing Tensors and numbers as :func:`array`; plain data
    numpy's own ``asarray`` (a plain array).

    Returns
    -------
    Tensor or numpy.ndarray
    """
    if _nested_has_tensor(a):
        return _R.asarray(a, dtype=dtype, **kw)
    return _np.asarray(a, dtype=dtype, **kw)


r_ = _R.r_
c_ = _R.c_

# constants shaped like a tensor (not connected to it)
zeros_like = _b(_np.zeros_like)
ones_like = _b(_np.ones_like)
full_like = _b(_np.full_like)

__all__ = [n for n in dir() if not n.startswith("_")]  # (autoprop's own names; numpy's come on use)


def __getattr__(name):
    """Every other numpy name is numpy's own object (``anp.zeros is np.zeros``, ``anp.pi``,
    ``anp.newaxis``, ``anp.float64``), as ``autograd.numpy`` re-exports numpy: a Tensor given to
    it is recorded or refused exactly as through plain numpy (``__array_function__``)."""
    return _numpy_attr(_np, __name__, name)


def __dir__():
    return _numpy_dir(_np, globals())

