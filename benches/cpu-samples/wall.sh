#!/usr/bin/env bash
# cpu=wall at 1,000 threads against no agent and (when built from source) async-profiler's wall mode.
# Usage: benches/cpu-samples/wall.sh [runs]   (default 5)
set -euo pipefail
exec python3 "$(dirname "$0")/wall.py" "$@"
