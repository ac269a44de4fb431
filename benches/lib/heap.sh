# Sourced by the front-end benchmarks (run from the repository root): making the big test heap's dump and
# timing one command. Each figure a script prints comes from these, so the scripts differ only in what they compare.

JDK=${HPROF_JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}

# big_heap_dump DUMP ENTRIES [XMX]: `jcmd GC.heap_dump` of benches/frontend/BigHeap.java holding ENTRIES map
# entries (about 4.25 objects an entry), written to DUMP unless it exists.
big_heap_dump() {
  local dump=$1 entries=$2 xmx=${3:-3g} dir out pid
  [ -f "$dump" ] && return 0
  dir=$(dirname "$dump")
  out=$dir/bigheap-$entries.out
  mkdir -p "$dir"
  "$JDK/bin/javac" -d "$dir" benches/frontend/BigHeap.java
  "$JDK/bin/java" -Xmx"$xmx" -cp "$dir" BigHeap "$entries" >"$out" &
  pid=$!
  for _ in $(seq 3000); do grep -q ready "$out" 2>/dev/null && break; sleep 0.2; done
  "$JDK/bin/jcmd" $pid GC.heap_dump "$PWD/$dump" >/dev/null
  kill $pid
  wait $pid 2>/dev/null || true
}

# timed CMD...: one run, printed as "wall_seconds cpu_seconds peak_kb" (cpu = user + sys); its stdout goes to
# $TIMED_OUT (default /dev/null). Exits the script when the command fails.
timed() {
  local log
  log=$(mktemp)
  /usr/bin/time -f "%e %U %S %M" -o "$log" "$@" >"${TIMED_OUT:-/dev/null}" 2>/dev/null || {
    echo "failed: $*" >&2
    rm -f "$log"
    exit 1
  }
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$log"
  rm -f "$log"
}

# warm_timed CMD...: runs CMD once to warm caches, then `timed`.
warm_timed() {
  "$@" >/dev/null 2>&1 || true
  timed "$@"
}

# median: the median of the numbers on stdin, one a line.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ratio A B: A / B with two decimals, "n/a" when B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
