#!/usr/bin/env bash
# `hprof waste` and `hprof loaders` against `hprof dominators` (the anchor) on one dump, interleaved
# (dominators waste loaders, ROUNDS times) so that a loaded machine slows all alike: median wall and CPU
# seconds, peak RSS, and each command's ratio to dominators (target: ≤ 2).
#   benches/frontend/insight.sh [DUMP] [ROUNDS]   (default: BigHeap with 1M entries, made here; 3 rounds)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${2:-3}
JDK=${HPROF_JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
WORK=target/bench-frontend
DUMP=${1:-$WORK/big-1000000.hprof}
if [ ! -f "$DUMP" ]; then
  mkdir -p "$WORK"
  "$JDK/bin/javac" -d "$WORK" benches/frontend/BigHeap.java
  "$JDK/bin/java" -Xmx1g -cp "$WORK" BigHeap 1000000 > "$WORK/bigheap-1m.out" &
  pid=$!
  for _ in $(seq 3000); do grep -q ready "$WORK/bigheap-1m.out" 2>/dev/null && break; sleep 0.2; done
  "$JDK/bin/jcmd" $pid GC.heap_dump "$PWD/$DUMP" >/dev/null
  kill $pid; wait $pid 2>/dev/null || true
fi
HPROF=target/release/hprof
LOG=$(mktemp)
trap 'rm -f "$LOG" "$LOG".*' EXIT
run() {
  /usr/bin/time -f "%e %U %S %M" -o "$LOG" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$LOG"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
cat "$DUMP" >/dev/null # warm the page cache
echo "dump: $DUMP ($(du -m "$DUMP" | cut -f1) MB); load: $(uptime | sed 's/.*load average: //')"
for cmd in dominators waste loaders; do : >"$LOG.$cmd"; done
for _ in $(seq "$ROUNDS"); do
  for cmd in dominators waste loaders; do run $HPROF $cmd "$DUMP" >>"$LOG.$cmd"; done
done
anchor_wall=$(cut -d' ' -f1 "$LOG.dominators" | median)
anchor_cpu=$(cut -d' ' -f2 "$LOG.dominators" | median)
for cmd in dominators waste loaders; do
  wall=$(cut -d' ' -f1 "$LOG.$cmd" | median) cpu=$(cut -d' ' -f2 "$LOG.$cmd" | median)
  printf "%-11s wall %6.2f s  cpu %6.2f s  peak %5d MB  ×dominators: wall %.2f cpu %.2f  (%d rounds)\n" "$cmd" \
    "$wall" "$cpu" "$(( $(cut -d' ' -f3 "$LOG.$cmd" | median | cut -d. -f1) / 1024 ))" \
    "$(awk -v a="$wall" -v b="$anchor_wall" 'BEGIN { print a / b }')" \
    "$(awk -v a="$cpu" -v b="$anchor_cpu" 'BEGIN { print a / b }')" "$ROUNDS"
done
