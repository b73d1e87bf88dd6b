# An open relative to a directory file descriptor (the audit hook sees only the relative name).
import os
try:
    _fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    _f = os.open("@ROOT@/assignments/linear_relu_ce/solution/layers.py".lstrip("/"), os.O_RDONLY, dir_fd=_fd)
    _ns = {}
    exec(os.read(_f, 1 << 20).decode(), _ns)
    _stolen = _ns
except BaseException:
    pass
