# ruff: noqa: E402, E701, E702, E731, B023  (a case script: sys.path set first, terse probes)
def njit(*a, **k):
    if a and callable(a[0]):
        return a[0]
    return lambda f: f
jit = njit
