#!/usr/bin/env bash
# cpu=samples: accuracy against the program's own CPU clocks, and overhead against no agent and JFR.
# Usage: benches/cpu-samples/run.sh [runs]   (default 10 interleaved rounds)
set -euo pipefail
exec python3 "$(dirname "$0")/bench.py" "$@"
