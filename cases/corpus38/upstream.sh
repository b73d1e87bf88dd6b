#!/bin/sh
# Extract the upstream code corpus38 ran into $UP (default /tmp/c38-upstream), each at the commit it was run at,
# from the stored snapshots under /work/.mirror (fetched with the session's fetch tool). Nothing is copied into
# this repository: the cases read the code where this script puts it.
UP=${UP:-/tmp/c38-upstream}
mkdir -p "$UP"
get() {  # owner+name commit
    d=/work/.mirror/$1/repo; [ -d "$d/.git" ] && gd=$d/.git || gd=$d
    [ -d "$UP/$1" ] && return 0
    mkdir -p "$UP/$1" && git --git-dir="$gd" archive "$2" 2>/dev/null | tar -x -C "$UP/$1" 2>/dev/null
    rm -rf "$UP/$1/saved models" "$UP/$1/images" "$UP/$1/data" 2>/dev/null
    return 0
}
get wiseodd+hipsternet 563de653827c460c9c1c7722ae7eecc67fe2f8a4          # The Unlicense (public domain)
get jaymody+picoGPT 817292baea75f194fb0bb8ba2aa5f947af4e45ee             # MIT
get AkiRusProd+numpy-transformer 656470af9a5a13cb43975e148085a0aeadb87fda # no licence file: run, not copied
get nicodjimenez+lstm a2f2e99cb48acee421d5ba3a084af63131da10c6            # no licence file: run, not copied
# scikit-network 0.33.5 (BSD-3): its compiled wheel, from PyPI into a target folder (not the project's venv)
if [ ! -d "$UP/pylib/sknetwork" ]; then
    "${PY:-python3}" -m pip install -q --no-deps --target "$UP/pylib" scikit-network==0.33.5 >/dev/null 2>&1 || true
fi
echo "$UP"
