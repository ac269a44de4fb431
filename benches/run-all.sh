#!/usr/bin/env bash
# Runs every benchmark under benches/*/run.sh in turn (they take minutes each; not part of `make test`).
# Each prints its own table of ratios; BENCHMARKS.md records the results and the command that produced them.
set -euo pipefail
cd "$(dirname "$0")/.."
for script in benches/*/run.sh; do
  echo "===== $script"
  "$script" "$@"
done
echo "===== benches/jvmpi/alloc.sh (OBJECT_ALLOC through the JVMPI layer vs heap=sites, H2 with 4 threads)"
benches/jvmpi/alloc.sh
echo "===== benches/cpu-samples/onoff.sh (the sampler's steady-state cost; then JFR's sampler the same way)"
benches/cpu-samples/onoff.sh 60 0.2 10
benches/cpu-samples/onoff.sh 60 0.2 3 jfr
echo "===== benches/cpu-samples/wall.sh (cpu=wall at 1,000 threads; async-profiler's wall mode when built)"
benches/cpu-samples/wall.sh 5
