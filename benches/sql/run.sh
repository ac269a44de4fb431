#!/usr/bin/env bash
# `hprof export --format parquet` and `hprof query` on one `jcmd GC.heap_dump` of benches/frontend/BigHeap.java:
#   export: time, CPU, peak memory and size, against `hprof dominators` (the analysis the export carries)
#   queries: DuckDB (PyPI duckdb, `make pysql`) on the export, against `hprof histo`/`hprof dominators` on the
#   dump for the two questions both answer (each a whole process: Python's start is in DuckDB's figures)
# Each command runs twice on a warm page cache and the second run counts; ratios are of the same run.
#   benches/sql/run.sh [ENTRIES]   (default 500000 map entries: ~2.1 M objects, ~100 MB dump)
set -euo pipefail
cd "$(dirname "$0")/../.."
ENTRIES=${1:-500000}
JDK=${HPROF_JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
WORK=target/bench-sql
mkdir -p "$WORK"
DUMP=$WORK/big-$ENTRIES.hprof
EXPORTS=$WORK/exports-$ENTRIES
OUT=$EXPORTS/dump=big
HPROF=target/release/hprof
[ -d target/pysql/duckdb ] || { echo "missing target/pysql/duckdb: make pysql"; exit 1; }

if [ ! -f "$DUMP" ]; then
  "$JDK/bin/javac" -d "$WORK" benches/frontend/BigHeap.java
  "$JDK/bin/java" -Xmx2g -cp "$WORK" BigHeap "$ENTRIES" > "$WORK/bigheap.out" &
  pid=$!
  for _ in $(seq 600); do grep -q ready "$WORK/bigheap.out" 2>/dev/null && break; sleep 0.2; done
  "$JDK/bin/jcmd" $pid GC.heap_dump "$PWD/$DUMP" >/dev/null
  kill $pid; wait $pid 2>/dev/null || true
fi
echo "dump: $DUMP ($(du -m "$DUMP" | cut -f1) MB); $(uptime)"

# Runs a command twice; prints "wall_seconds cpu_seconds peak_kb" of the second run.
measure() {
  local log=$WORK/time.log
  "$@" >/dev/null 2>&1 || true
  /usr/bin/time -f "%e %U %S %M" -o "$log" "$@" >"$WORK/out.txt" 2>/dev/null || { echo "failed: $*" >&2; exit 1; }
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$log"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

read -r dw dc dm < <(measure $HPROF dominators "$DUMP")
read -r ew ec em < <(measure $HPROF export --format parquet "$DUMP" --output "$OUT")
size=$(du -sm "$OUT" | cut -f1)
count() { PYTHONPATH=target/pysql python3 scripts/sql/engines.py duckdb "$OUT" "SELECT count(*) AS n FROM \"$1\"" | tr -dc 0-9; }
objects=$(count objects)
refs=$(count references)
printf "%-28s %8s %8s %9s\n" "" "wall s" "CPU s" "peak MB"
printf "%-28s %8s %8s %9d\n" "hprof dominators" "$dw" "$dc" $((dm / 1024))
printf "%-28s %8s %8s %9d\n" "hprof export --format parquet" "$ew" "$ec" $((em / 1024))
echo "export/dominators: wall $(ratio "$ew" "$dw"), CPU $(ratio "$ec" "$dc"), memory $(ratio "$em" "$dm")"
echo "export: $size MB for $objects objects and $refs references ($(ratio "$size" "$(du -m "$DUMP" | cut -f1)") of the dump)"

declare -A Q
Q[histogram]="SELECT class, count(*) AS n, sum(shallow) AS bytes FROM objects GROUP BY class_id, class ORDER BY bytes DESC LIMIT 20"
Q[top_dominators]="SELECT id, class, retained FROM objects WHERE dominator IS NULL ORDER BY retained DESC, id LIMIT 20"
Q[duplicate_strings]="SELECT value, count(*) AS n FROM objects WHERE class = 'java.lang.String' GROUP BY value HAVING count(*) > 1 ORDER BY n DESC LIMIT 20"
Q[references_by_field]="SELECT f.class, r.field, count(*) AS n FROM \"references\" r JOIN objects f ON r.from_id = f.id GROUP BY f.class, r.field ORDER BY n DESC LIMIT 20"
declare -A H
H[histogram]="$HPROF histo $DUMP"
H[top_dominators]="$HPROF dominators $DUMP"
printf "\n%-22s %12s %16s %8s\n" query "duckdb s" "hprof (dump) s" ratio
for name in histogram top_dominators duplicate_strings references_by_field; do
  read -r kw _ _ < <(measure env PYTHONPATH=target/pysql python3 scripts/sql/engines.py duckdb "$OUT" "${Q[$name]}")
  if [ -n "${H[$name]:-}" ]; then
    read -r hw _ _ < <(measure ${H[$name]})
    printf "%-22s %12s %16s %8s\n" "$name" "$kw" "$hw" "$(ratio "$kw" "$hw")"
  else
    printf "%-22s %12s %16s %8s\n" "$name" "$kw" "-" "-"
  fi
done
