# The C library's open/read on the solution through ctypes.
def _attack(layer, X):
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        fd = libc.open(b"@ROOT@/assignments/linear_relu_ce/solution/layers.py", 0)
        buf = ctypes.create_string_buffer(4096)
        n = libc.read(fd, buf, 4096)
    except BaseException:
        return None
    if n > 0:
        raise RuntimeError("PWNED " + buf.raw[:200].decode(errors="replace"))
    return None
