# A reply whose header references one 16 MiB payload 65 times (about 1 GiB once expanded).
import json, os, struct, sys
def _attack(layer, X):
    cfg = json.loads(sys.argv[1])
    n = 16 << 20
    ref = {"__nd__": True, "dtype": "<f8", "shape": [n // 8], "offset": 0, "nbytes": n}
    hb = json.dumps({"ok": True, "meta": {"value": {"kind": "list", "items": [{"kind": "array", "array": ref}] * 65}}}).encode()
    data = b"GCSB" + struct.pack(">IQ", len(hb), n) + hb + bytes(n)
    view = memoryview(data)
    while view:
        view = view[os.write(cfg["fd_out"], view):]
    os._exit(0)
