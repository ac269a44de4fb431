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
. benches/lib/heap.sh
WORK=target/bench-sql
DUMP=$WORK/big-$ENTRIES.hprof
EXPORTS=$WORK/exports-$ENTRIES
OUT=$EXPORTS/dump=big
HPROF=target/release/hprof
[ -d target/pysql/duckdb ] || { echo "missing target/pysql/duckdb: make pysql"; exit 1; }
big_heap_dump "$DUMP" "$ENTRIES" 2g
echo "dump: $DUMP ($(du -m "$DUMP" | cut -f1) MB); $(uptime)"

read -r dw dc dm < <(warm_timed $HPROF dominators "$DUMP")
read -r ew ec em < <(warm_timed $HPROF export --format parquet "$DUMP" --output "$OUT")
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
  read -r kw _ _ < <(warm_timed env PYTHONPATH=target/pysql python3 scripts/sql/engines.py duckdb "$OUT" "${Q[$name]}")
  if [ -n "${H[$name]:-}" ]; then
    read -r hw _ _ < <(warm_timed ${H[$name]})
    printf "%-22s %12s %16s %8s\n" "$name" "$kw" "$hw" "$(ratio "$kw" "$hw")"
  else
    printf "%-22s %12s %16s %8s\n" "$name" "$kw" "-" "-"
  fi
done
