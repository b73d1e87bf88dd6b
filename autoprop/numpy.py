"""numpy's names over autoprop Tensors: ``import autoprop.numpy as anp``.

Each function accepts Tensors, numpy arrays and Python scalars and returns a Tensor;
when a tape tracks an input the operation is recorded. Plain ``np.`` calls on Tensors
reach the same functions through ``__array_function__`` / ``__array_ufunc__``.
"""

import numpy as _np

from .core import registry as _R

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
sqrt = _R.sqrt
square = _R.square
abs = absolute = _R.absolute  # noqa: A001
sin = _R.sin
cos = _R.cos
tanh = _R.tanh
maximum = _R.maximum
minimum = _R.minimum
matmul = _R.matmul
where = _R.where
sign = _R.sign
floor = _R.floor
ceil = _R.ceil
round = _R.round  # noqa: A001
argmax = _R.argmax
argmin = _R.argmin
sum = _R._FUNCTIONS[_np.sum]  # noqa: A001
mean = _R._FUNCTIONS[_np.mean]
max = amax = _R._FUNCTIONS[_np.max]  # noqa: A001
min = amin = _R._FUNCTIONS[_np.min]  # noqa: A001
reshape = _R._FUNCTIONS[_np.reshape]
transpose = _R._FUNCTIONS[_np.transpose]
broadcast_to = _R._FUNCTIONS[_np.broadcast_to]
squeeze = _R._FUNCTIONS[_np.squeeze]
expand_dims = _R._FUNCTIONS[_np.expand_dims]
swapaxes = _R._FUNCTIONS[_np.swapaxes]
