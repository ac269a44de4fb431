#!/usr/bin/env bash
# Profiles the bundled demo program (java/demo/Demo.java) with the freshly built agent and shows the report.
# Run through `make demo`, which builds first.
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
[ -x "$JAVA_HOME/bin/javac" ] || JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
out=target/demo
mkdir -p "$out/classes"
"$JAVA_HOME/bin/javac" -d "$out/classes" java/demo/Demo.java
options="cpu=samples,heap=sites,monitor=y,depth=6,file=$out/demo.hprof.txt,flamegraph=$out/cpu-flamegraph.html"
echo "+ java -agentpath:target/release/libhprof.so=$options -cp $out/classes Demo"
"$JAVA_HOME/bin/java" "-agentpath:$PWD/target/release/libhprof.so=$options" -cp "$out/classes" Demo
echo
echo "===== report: $out/demo.hprof.txt (first lines of each section) ====="
awk '
  /^(SITES|CPU SAMPLES|MONITOR TIME) BEGIN/ { show = 1; n = 0 }
  show { print; n++ }
  /^(SITES|CPU SAMPLES|MONITOR TIME) END/ { show = 0; print "" }
  show && n == 14 { print "   ..."; show = 0 }
' "$out/demo.hprof.txt"
# The traces the top rows point at.
for section in "CPU SAMPLES" "SITES"; do
  top=$(awk -v s="$section BEGIN" 'index($0, s) == 1 { getline; getline; if (s ~ /SITES/) getline; print; exit }' "$out/demo.hprof.txt" | awk '{ print ($1 ~ /^[0-9]+$/) ? ($NF ~ /^[0-9]+$/ ? $NF : $(NF-1)) : "" }')
  [ -n "$top" ] || continue
  echo "----- top $section row's trace:"
  awk -v t="TRACE $top:" 'index($0, t) == 1 { show = 1; print; next } show && /^\t/ { print; next } { show = 0 }' "$out/demo.hprof.txt"
done
echo
for f in "$out/cpu-flamegraph.html" "$out/cpu-flamegraph.locks.html"; do
  [ -f "$f" ] && echo "flame graph: $f (open it in a browser)"
done
echo "full report: $out/demo.hprof.txt"
