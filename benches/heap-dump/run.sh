#!/usr/bin/env bash
# heap=dump: dump time, file size and extra peak memory against `jcmd GC.heap_dump` on the same heap.
# Usage: benches/heap-dump/run.sh [runs] [--orders N] [--jdk HOME ...] [--agent LIB] [--nmt]   (default 3 dumps of each kind)
set -euo pipefail
exec python3 "$(dirname "$0")/run.py" "$@"
