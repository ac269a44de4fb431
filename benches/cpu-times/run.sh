#!/usr/bin/env bash
# cpu=times: overhead against no agent and cpu=samples, on javac (java/util) and a CPU-bound program.
# Usage: benches/cpu-times/run.sh [rounds] [CpuBound rounds]   (default 3 interleaved rounds, CpuBound 100)
set -euo pipefail
exec python3 "$(dirname "$0")/bench.py" "$@"
