#!/usr/bin/env bash
# cpu=samples in steady state: the sampler's cost inside one JVM, sampling switched off and on.
# Usage: benches/cpu-samples/onoff.sh [seconds] [phase]   (default 60 s, 1 s phases)
set -euo pipefail
exec python3 "$(dirname "$0")/onoff.py" "$@"
