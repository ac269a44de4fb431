#!/usr/bin/env bash
# cpu=flat overhead on javac against no agent and cpu=samples (interval=10), interleaved rounds.
# Usage: benches/cpu-samples/flat.sh [runs]   (default 8)
set -euo pipefail
exec python3 "$(dirname "$0")/flat.py" "$@"
