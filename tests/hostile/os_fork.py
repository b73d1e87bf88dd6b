# os.fork, then the child reads the solution and writes a results file.
import os
def _attack(layer, X):
    try:
        if os.fork() == 0:
            try:
                open("@OUT@/os_fork/results.json", "w").write('{"score": 1000}')
            finally:
                os._exit(0)
    except BaseException:
        pass
    return None
