#!/usr/bin/env bash
# cpu=samples end to end, taken apart: agent load, hooks and clocks, signals, DebugNonSafepoints (javac).
# Usage: benches/cpu-samples/startup.sh [rounds]   (default 5)
set -euo pipefail
exec python3 "$(dirname "$0")/startup.py" "$@"
