#!/usr/bin/env bash
# `hprof waste` and `hprof loaders` against `hprof dominators` (the anchor) on one dump, interleaved
# (dominators waste loaders, ROUNDS times) so that a loaded machine slows all alike: median wall and CPU
# seconds, peak RSS, and each command's ratio to dominators (target: ≤ 2).
#   benches/frontend/insight.sh [DUMP] [ROUNDS]   (default: BigHeap with 1M entries, made here; 3 rounds)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${2:-3}
. benches/lib/heap.sh
WORK=target/bench-frontend
DUMP=${1:-$WORK/big-1000000.hprof}
[ -n "${1:-}" ] || big_heap_dump "$DUMP" 1000000 1g
HPROF=target/release/hprof
LOG=$(mktemp)
trap 'rm -f "$LOG" "$LOG".*' EXIT
cat "$DUMP" >/dev/null # warm the page cache
echo "dump: $DUMP ($(du -m "$DUMP" | cut -f1) MB); load: $(uptime | sed 's/.*load average: //')"
for cmd in dominators waste loaders; do : >"$LOG.$cmd"; done
for _ in $(seq "$ROUNDS"); do
  for cmd in dominators waste loaders; do timed $HPROF $cmd "$DUMP" >>"$LOG.$cmd"; done
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
