"""The primitive families of :mod:`autoprop.core.registry`, one module per family.

``elementwise`` (arithmetic, ufuncs, comparisons, where, clip), ``reductions`` (sum,
mean, max, logsumexp, softmax, norm, prod, var, ...), ``shape`` (reshape, transpose,
indexing, concatenate, gathers along an axis), ``linalg`` (matmul, tensordot, einsum,
dot, outer, numpy.linalg), ``windows`` (extract_patches / scatter_patches: im2col and
col2im), ``special`` (more ufuncs, scipy.special), ``stacking`` (numpy's stacking,
splitting, sorting and statistics functions as composites), ``fused`` (one record per
layer operation: ``linear``, Linear's ``X @ W.T + b``), ``array_api`` (numpy 2's
array-API names: ``numpy.linalg.matmul``, ``trace``, ``vecdot``, ``matvec``, ... over the last axes),
``linalg_tensor`` (numpy.linalg's tensorsolve and tensorinv over ``solve`` and ``inv``).
Importing :mod:`autoprop.core.registry` imports them all; each record is defined once.
"""
