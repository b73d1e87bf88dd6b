#!/bin/sh
# mk.sh ATTACK.py OUTDIR: a submission folder OUTDIR/layers.py = unhook.py + ATTACK.py
d=$(dirname "$0"); mkdir -p "$2"; cat "$d/unhook.py" "$d/$1" > "$2/layers.py"
