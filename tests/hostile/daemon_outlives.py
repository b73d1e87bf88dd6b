# A double-forked daemon (via _posixsubprocess, no audit event) that outlives the batch.
import os
try:
    import _posixsubprocess
    args = [b"/bin/sh", b"-c", b"sleep 3; echo '{\"score\": 1000}' > @OUT@/daemon_outlives/results.json"]
    _posixsubprocess.fork_exec(args, [args[0]], True, (), None, None, -1, -1, -1, -1, -1, -1,
                               -1, -1, False, True, None, None, None, -1, None, False)
except BaseException:
    pass
