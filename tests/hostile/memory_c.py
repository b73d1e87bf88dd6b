# Exhaust memory in C (numpy allocation of 80 GB) and keep going.
import numpy as _np
try:
    _junk = _np.ones(10 ** 10)
except BaseException:
    pass
