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
JDK=${HPROF_JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
WORK=target/bench-frontend
mkdir -p "$WORK"
DUMP=$WORK/big-$ENTRIES.hprof

cargo build --release -p hprof-cli >/dev/null 2>&1
for tool in hprof-slurp hprof-analyzer; do
  command -v $tool >/dev/null || { echo "missing $tool: cargo install ${tool/hprof-analyzer/--locked hprof-analyzer}"; exit 1; }
done

if [ ! -f "$DUMP" ]; then
  "$JDK/bin/javac" -d "$WORK" benches/frontend/BigHeap.java
  "$JDK/bin/java" -Xmx3g -cp "$WORK" BigHeap "$ENTRIES" > "$WORK/bigheap.out" &
  pid=$!
  for _ in $(seq 600); do grep -q ready "$WORK/bigheap.out" 2>/dev/null && break; sleep 0.2; done
  "$JDK/bin/jcmd" $pid GC.heap_dump "$PWD/$DUMP" >/dev/null
  kill $pid; wait $pid 2>/dev/null || true
fi
echo "dump: $DUMP ($(du -m "$DUMP" | cut -f1) MB)"

# Runs a command twice; prints "seconds peak_kb" of the second run.
measure() {
  local log=$WORK/time.log
  "$@" >/dev/null 2>&1 || true
  /usr/bin/time -v "$@" >"$WORK/out.txt" 2>"$log" || { echo "failed: $*" >&2; tail -5 "$log" >&2; }
  local wall rss
  wall=$(grep "Elapsed (wall clock)" "$log" | awk '{print $NF}' | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  rss=$(grep "Maximum resident set size" "$log" | awk '{print $NF}')
  echo "$wall $rss"
}

HPROF=target/release/hprof
read -r t1 m1 < <(measure $HPROF histo "$DUMP")
read -r t2 m2 < <(measure hprof-slurp "$DUMP")
read -r t3 m3 < <(measure $HPROF dominators "$DUMP")
read -r t4 m4 < <(measure hprof-analyzer "$DUMP" "$WORK/analyzer-report.md")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
printf "%-22s %9s %12s\n" tool seconds "peak MB"
printf "%-22s %9s %12d\n" "hprof histo" "$t1" $((m1 / 1024))
printf "%-22s %9s %12d\n" "hprof-slurp" "$t2" $((m2 / 1024))
printf "%-22s %9s %12d\n" "hprof dominators" "$t3" $((m3 / 1024))
printf "%-22s %9s %12d\n" "hprof-analyzer" "$t4" $((m4 / 1024))
echo "histo/slurp:         time $(ratio "$t1" "$t2"), memory $(ratio "$m1" "$m2")   (target: both <= 1)"
echo "dominators/analyzer: time $(ratio "$t3" "$t4"), memory $(ratio "$m3" "$m4")   (target: time <= 0.5, memory <= 1)"
