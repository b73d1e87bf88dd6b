"""tester19g F3: a reply's bytes are held once by the grader, not three times.

A forged reply frame claiming ~1 GiB (under the cap of ``--memory-mb``) made the grader's ``_read_exact`` grow a
bytearray and copy it twice (``bytes(buf[:n])``): about 3x ``--memory-mb`` in the grader. A large read now goes into
one buffer of its exact size. No sandbox child: the reader on a pipe, its peak measured by tracemalloc.
"""

import os
import threading
import time
import tracemalloc

from gradcheck.sandbox import Sandbox


def _reader(fd: int) -> Sandbox:
    sb = Sandbox.__new__(Sandbox)  # only what _read_exact reads
    sb._r, sb._rbuf, sb._reading, sb._grace = fd, bytearray(), 0, 0.0
    sb._req_t0, sb._req_wall, sb.session_timeout, sb._extra, sb._slack = time.monotonic(), 0.0, 60.0, 0.0, 0.0
    sb._wait = lambda deadline, what: time.sleep(0.001)
    sb._died = lambda what: (_ for _ in ()).throw(EOFError(what))
    return sb


def test_a_large_reply_is_held_once():
    n = 24 << 20
    r, w = os.pipe()

    def write():
        chunk = bytes(range(256)) * 4096  # 1 MiB
        try:
            for _ in range(n >> 20):
                os.write(w, chunk)
            os.write(w, b"next")
        except BrokenPipeError:  # the reader failed and closed its end: the test reports its error, never hangs
            pass
        finally:
            os.close(w)
    t = threading.Thread(target=write)
    sb = _reader(r)
    sb._rbuf += b"\x00\x01"  # bytes of it already read with the frame's header
    tracemalloc.start()
    t.start()
    try:
        out = sb._read_exact(n + 2, time.monotonic() + 60, "a reply")
        peak = tracemalloc.get_traced_memory()[1]
    except BaseException:
        os.close(r)  # the writer blocked on a full pipe gets EPIPE and ends (this test hung when the stub fell behind)
        raise
    finally:
        tracemalloc.stop()
        t.join()
    assert len(out) == n + 2 and out[:4] == b"\x00\x01\x00\x01" and out[-1] == 255
    assert peak < n + (4 << 20)  # once, plus a chunk (before: about 3 n)
    assert sb._read_exact(4, time.monotonic() + 60, "the next") == b"next"  # nothing read past n
    os.close(r)
