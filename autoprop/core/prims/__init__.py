"""The primitive families of :mod:`autoprop.core.registry`, one module per family.

``elementwise`` (arithmetic, ufuncs, comparisons, where, clip), ``logexp`` (logsumexp,
its running form logcumsumexp, its signed weights, softmax, log_softmax), ``reductions`` (sum,
mean, max, norm, prod, var, the fused sparse cross-entropy, ...), ``shape`` (reshape, transpose,
indexing, concatenate, gathers along an axis), ``linalg`` (matmul, tensordot, einsum,
dot, outer, numpy.linalg), ``windows`` (extract_patches / scatter_patches: im2col and
col2im), ``special`` (more ufuncs, scipy.special), ``incgamma`` (scipy.special.gammainc and
gammaincc, differentiable in both arguments), ``stacking`` (numpy's stacking,
splitting, sorting and statistics functions as composites), ``fused`` (one record per
layer operation: ``linear``, Linear's ``X @ W.T + b``), ``array_api`` (numpy 2's
array-API names: ``numpy.linalg.matmul``, ``trace``, ``vecdot``, ``matvec``, ... over the last axes),
``linalg_tensor`` (numpy.linalg's tensorsolve and tensorinv over ``solve`` and ``inv``),
``recurrent`` (``rnn_cell``, ``rnn_tanh``, ``lstm_gates``, ``lstm_gates_at``), ``linalg_eig`` (eigh, eigvalsh, eig, eigvals),
``numeric`` (trapezoid, quantile, polyfit, interp, ... as composites), ``fft`` (numpy.fft),
``extra`` (the values-only table, selections, histograms, more statistics), ``polynomial``
(numpy's poly* functions, roots, ediff1d, resize, unwrap, apply_over_axes, modf, frexp, i0), ``scatter_nd``
(TensorFlow's tensor_scatter_nd_add and tensor_scatter_nd_update);
``_linalg_helpers`` and ``_linalg_complex`` beside ``linalg``, ``_common`` the helpers of every
family; ``dispatch``: numpy's protocols routed to the records.

A keyword argument that carries a derivative (``np.pad``'s ``constant_values``, ``initial=``,
``nan_to_num``'s ``nan=``, a histogram's ``range``) is recorded when it is a Tensor, never cut.

The families sit above the registry (they import its ``defprim`` & co.; it imports none of
them). Importing this package imports them all, each record defined once, and then gives the
registry their names, so that :mod:`autoprop.core.registry` stays the one table of every
record by name (``registry.tanh``, ``registry.unbroadcast``, ``registry.dispatch_ufunc``).
"""

from .. import registry as _registry  # noqa: I001  (the families in their registration order)
from . import _common
from . import elementwise, logexp, reductions, shape, linalg, windows
from . import special, incgamma, stacking, fused, array_api, linalg_tensor, recurrent, linalg_eig, numeric, fft
from . import extra, polynomial, scatter_nd
from . import dispatch

FAMILIES = (elementwise, logexp, reductions, shape, linalg, windows, special, incgamma, stacking, fused, array_api,
            linalg_tensor, recurrent, linalg_eig, numeric, fft, extra, polynomial, scatter_nd)

#: What the registry holds besides the families' records: the helpers of every VJP
#: (``registry.unbroadcast``, lesson 00; ``registry._t``), numpy dispatch, and the numpy-order
#: reshape that ``Tensor.reshape`` calls.
_HELPERS = {"_check_kw": _common._check_kw, "_no_out": _common._no_out, "_t": _common._t,
            "unbroadcast": _common.unbroadcast, "zero_rule": _common.zero_rule,
            "_np_reshape": shape._np_reshape, "FAMILIES": FAMILIES,
            **{k: getattr(dispatch, k) for k in dispatch.__all__}}

vars(_registry).update({k: getattr(f, k) for f in FAMILIES for k in f.__all__}, **_HELPERS)
_registry.__all__ = sorted(
    {*_registry.__all__, "FAMILIES", "dispatch_ufunc", "dispatch_function", "unbroadcast"}
    | {k for f in FAMILIES for k in f.__all__})
