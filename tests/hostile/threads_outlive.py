# A thread that keeps running after the call and later writes results.
import threading, time
def _late():
    time.sleep(2)
    try:
        open("@OUT@/threads_outlive/results.json", "w").write('{"score": 1000}')
    except BaseException:
        pass
try:
    threading.Thread(target=_late, daemon=True).start()
except BaseException:
    pass
