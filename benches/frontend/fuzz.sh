#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for a while each (default 120 s), seeded with small corpus dumps.
# Needs a nightly toolchain and `cargo install cargo-fuzz`. Crashes land in fuzz/artifacts/<target>/.
#   benches/frontend/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../../fuzz"
SECS=${1:-120}
command -v cargo-fuzz >/dev/null || { echo "cargo install cargo-fuzz first"; exit 1; }
CORPUS=../../shared/corpus/hprof
for t in records analysis; do
  mkdir -p corpus/$t
  for f in mat_sun_jdk5_13_x32.hprof slurp_jhat_hprof-32.bin mat_sun_jdk6_30_x64_compressedOops.hprof; do
    [ -f "$CORPUS/$f" ] && [ ! -f corpus/$t/$f ] && head -c 200000 "$CORPUS/$f" > corpus/$t/$f
  done
  cargo +nightly fuzz run $t corpus/$t -- -max_total_time="$SECS" -rss_limit_mb=2048 -malloc_limit_mb=512
done
