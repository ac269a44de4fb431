#!/usr/bin/env bash
# cpu=samples in steady state: the sampler's cost inside one JVM, sampling switched off and on.
# Usage: benches/cpu-samples/onoff.sh [seconds] [phase] [runs] [control|jfr]   (default 60 s, 0.2 s phases, 1 run)
set -euo pipefail
exec python3 "$(dirname "$0")/onoff.py" "$@"
