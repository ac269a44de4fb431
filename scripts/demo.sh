#!/usr/bin/env bash
# Profiles the bundled demo program (java/demo/Demo.java) with the freshly built agent and shows the report.
# Run through `make demo`, which builds first. Two runs: CPU samples and lock contention in one, exact
# allocation sites in the other (counting every allocation costs CPU, which would crowd the CPU profile).
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
[ -x "$JAVA_HOME/bin/javac" ] || JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
out=target/demo
mkdir -p "$out/classes"
"$JAVA_HOME/bin/javac" -d "$out/classes" java/demo/Demo.java
agent="$PWD/target/release/libhprof.so"

run() {
  echo "+ java -agentpath:target/release/libhprof.so=$1 -cp $out/classes Demo"
  "$JAVA_HOME/bin/java" "-agentpath:$agent=$1" -cp "$out/classes" Demo
}
run "cpu=samples,monitor=y,depth=6,file=$out/demo.hprof.txt,flamegraph=$out/cpu-flamegraph.html"
run "heap=sites,depth=6,file=$out/demo-sites.hprof.txt"

# The first lines of a section, then the TRACE behind its top row.
show() {
  local file=$1 section=$2
  awk -v s="$section" '
    index($0, s " BEGIN") == 1 { show = 1; n = 0 }
    show { print; n++ }
    index($0, s " END") == 1 { show = 0; print "" }
    show && n == 14 { print "   ..."; show = 0; print "" }
  ' "$file"
  local top
  # The trace serial is the 5th column of CPU SAMPLES and MONITOR TIME rows, the 8th of SITES rows.
  top=$(awk -v s="$section BEGIN" 'index($0, s) == 1 { getline; getline; if (s ~ /SITES/) getline; print; exit }' "$file" |
    awk -v col="$([ "$section" = SITES ] && echo 8 || echo 5)" '{ print ($1 ~ /^[0-9]+$/) ? $col : "" }')
  [ -n "$top" ] || return 0
  echo "----- the top $section row's trace:"
  awk -v t="TRACE $top:" 'index($0, t) == 1 { show = 1; print; next } show && /^\t/ { print; next } { show = 0 }' "$file"
  echo
}

echo
echo "===== $out/demo.hprof.txt (cpu=samples, monitor=y): first lines of each section ====="
show "$out/demo.hprof.txt" "MONITOR TIME"
show "$out/demo.hprof.txt" "CPU SAMPLES"
echo "===== $out/demo-sites.hprof.txt (heap=sites): every allocation counted ====="
show "$out/demo-sites.hprof.txt" "SITES"
for f in "$out/cpu-flamegraph.html" "$out/cpu-flamegraph.locks.html"; do
  [ -f "$f" ] && echo "flame graph: $f (open it in a browser)"
done
echo "full reports: $out/demo.hprof.txt, $out/demo-sites.hprof.txt"
