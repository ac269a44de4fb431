#!/usr/bin/env bash
# Two builds of `hprof` on one dump, interleaved (A B A B …) so that a loaded machine slows both alike:
# `histo` and `dominators`, ROUNDS rounds each, median wall and CPU (user+sys) seconds and peak RSS.
#   benches/frontend/compare.sh OLD_HPROF NEW_HPROF DUMP [ROUNDS]   (default 5)
# For "is the new build slower?": build the old commit in a worktree with its own CARGO_TARGET_DIR.
set -euo pipefail
OLD=$1 NEW=$2 DUMP=$3 ROUNDS=${4:-5}
. "$(dirname "$0")/../lib/heap.sh"
LOG=$(mktemp)
trap 'rm -f "$LOG" "$LOG".*' EXIT
cat "$DUMP" >/dev/null # warm the page cache
for cmd in histo dominators; do
  : >"$LOG.old"; : >"$LOG.new"
  "$OLD" $cmd "$DUMP" >/dev/null 2>&1; "$NEW" $cmd "$DUMP" >/dev/null 2>&1 # warm-up
  for _ in $(seq "$ROUNDS"); do
    timed "$OLD" $cmd "$DUMP" >>"$LOG.old"
    timed "$NEW" $cmd "$DUMP" >>"$LOG.new"
  done
  for which in old new; do
    f=$LOG.$which
    printf "%-11s %-4s wall %6.2f s  cpu %6.2f s  peak %5d MB   (%d rounds)\n" "$cmd" "$which" \
      "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f2 "$f" | median)" \
      "$(( $(cut -d' ' -f3 "$f" | median | cut -d. -f1) / 1024 ))" "$ROUNDS"
  done
  rm -f "$LOG.old" "$LOG.new"
done
