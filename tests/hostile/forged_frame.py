# Write a reply frame that claims the grader's side failed, then exit.
import json, os, struct, sys
def _attack(layer, X):
    cfg = json.loads(sys.argv[1])
    hb = json.dumps({"ok": False, "meta": {"stage": "grader"},
                     "error": {"type": "MemoryError", "message": "the checker broke <b>[x](http://e)</b>", "where": ""}}).encode()
    os.write(cfg["fd_out"], b"GCSB" + struct.pack(">IQ", len(hb), 0) + hb)
    os._exit(0)
