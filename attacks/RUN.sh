#!/bin/sh
# RUN.sh [CHECKOUT]: redteam38's attacks on CHECKOUT (default /work/main), as root; one line per finding.
# Uses CHECKOUT's venv (else /work/main/.venv), run from CHECKOUT's root so that its gradcheck is the one attacked.
set -e
here=$(cd "$(dirname "$0")" && pwd)
co=$(cd "${1:-/work/main}" && pwd)
py="$co/.venv/bin/python"; [ -x "$py" ] || py=/work/main/.venv/bin/python
cd "$co" && exec "$py" "$here/run_all.py"
