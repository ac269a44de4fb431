#!/usr/bin/env bash
# Checks that two builds of `hprof` print byte-identical `dominators` output (plain, --json,
# --keep-unreachable, --top 200) on every corpus dump and on the given big dumps. Run before landing a
# change to the heap index or the dominator tree.
#   benches/frontend/same_output.sh OLD_HPROF NEW_HPROF [BIG_DUMP...]
# The corpus is $HPROF_CORPUS (default /work/shared/corpus/hprof); files neither build reads are skipped.
set -uo pipefail
OLD=$1 NEW=$2
shift 2
CORPUS=${HPROF_CORPUS:-/work/shared/corpus/hprof}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
same=0 differ=0 skipped=0
for dump in "$CORPUS"/*.hprof "$CORPUS"/*.hprof.gz "$CORPUS"/*.bin "$CORPUS"/*.android-hprof "$@"; do
  [ -f "$dump" ] || continue
  for opts in "" "--json" "--keep-unreachable" "--top 200"; do
    # shellcheck disable=SC2086
    "$OLD" dominators $opts "$dump" >"$OUT/old" 2>"$OUT/old.err"; a=$?
    # shellcheck disable=SC2086
    "$NEW" dominators $opts "$dump" >"$OUT/new" 2>"$OUT/new.err"; b=$?
    if [ $a -ne 0 ] && [ ! -s "$OUT/old" ]; then skipped=$((skipped + 1)); continue; fi
    if [ $a -eq $b ] && cmp -s "$OUT/old" "$OUT/new"; then
      same=$((same + 1))
    else
      differ=$((differ + 1))
      echo "DIFFERENT: $(basename "$dump") ${opts:-plain} (exit $a vs $b)"
      diff "$OUT/old" "$OUT/new" | head -5
    fi
  done
done
echo "same: $same  different: $differ  skipped (neither reads): $skipped"
[ $differ -eq 0 ]
