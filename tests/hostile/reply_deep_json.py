# A reply header nested 100000 levels deep (a recursion bomb for the parent's JSON decoder).
import json, os, struct, sys
def _attack(layer, X):
    cfg = json.loads(sys.argv[1])
    hb = b"[" * 100000 + b"]" * 100000
    data = b"GCSB" + struct.pack(">IQ", len(hb), 0) + hb
    view = memoryview(data)
    while view:
        view = view[os.write(cfg["fd_out"], view):]
    os._exit(0)
