#!/usr/bin/env bash
# The front end against the analysers people use, on one big `jcmd GC.heap_dump`:
#   hprof histo      vs hprof-slurp     (class histogram)
#   hprof dominators vs hprof-analyzer  (dominator tree / retained sizes)
# Prints wall time and peak RSS (/usr/bin/time -v) of each, and the ratios. Each tool runs twice on a warm
# page cache and the second run counts.
#   benches/frontend/run.sh [ENTRIES]   (default 2000000 map entries: ~8.5M objects, ~400 MB dump)
# Needs: JDK 17 (javac, java, jcmd), `cargo install hprof-slurp`, `cargo install --locked hprof-analyzer`.
set -euo pipefail
cd "$(dirname "$0")/../.."
ENTRIES=${1:-2000000}
. benches/lib/heap.sh
WORK=target/bench-frontend
DUMP=$WORK/big-$ENTRIES.hprof

cargo build --release -p hprof-cli >/dev/null 2>&1
for tool in hprof-slurp hprof-analyzer; do
  command -v $tool >/dev/null || { echo "missing $tool: cargo install ${tool/hprof-analyzer/--locked hprof-analyzer}"; exit 1; }
done
big_heap_dump "$DUMP" "$ENTRIES" 3g
echo "dump: $DUMP ($(du -m "$DUMP" | cut -f1) MB)"

HPROF=target/release/hprof
read -r t1 _ m1 < <(warm_timed $HPROF histo "$DUMP")
read -r t2 _ m2 < <(warm_timed hprof-slurp "$DUMP")
read -r t3 _ m3 < <(warm_timed $HPROF dominators "$DUMP")
read -r t4 _ m4 < <(warm_timed hprof-analyzer "$DUMP" "$WORK/analyzer-report.md")
printf "%-22s %9s %12s\n" tool seconds "peak MB"
printf "%-22s %9s %12d\n" "hprof histo" "$t1" $((m1 / 1024))
printf "%-22s %9s %12d\n" "hprof-slurp" "$t2" $((m2 / 1024))
printf "%-22s %9s %12d\n" "hprof dominators" "$t3" $((m3 / 1024))
printf "%-22s %9s %12d\n" "hprof-analyzer" "$t4" $((m4 / 1024))
echo "histo/slurp:         time $(ratio "$t1" "$t2"), memory $(ratio "$m1" "$m2")   (target: both <= 1)"
echo "dominators/analyzer: time $(ratio "$t3" "$t4"), memory $(ratio "$m3" "$m4")   (target: time <= 0.5, memory <= 1)"
