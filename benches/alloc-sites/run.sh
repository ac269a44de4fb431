#!/usr/bin/env bash
# heap=sites: exactness against the program's own counts, and overhead against no agent and JFR.
# Usage: benches/alloc-sites/run.sh [runs]   (default 8 interleaved rounds)
set -euo pipefail
exec python3 "$(dirname "$0")/bench.py" "$@"
