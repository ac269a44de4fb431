#!/usr/bin/env bash
# heap=dump's floor: what the JVM's heap walks cost with callbacks that do nothing (floor.c), beside
# `jcmd GC.heap_dump` (wall and the process's CPU), on benches/heap-dump's heap, alternately, N times.
# Usage: benches/heap-dump/floor/floor.sh [JDK_HOME ...]   (default JDK 17 and 25; needs cc and JDK 17's javac)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jdk17=/usr/lib/jvm/java-17-openjdk-amd64
cc -O2 -shared -fPIC -I$jdk17/include -I$jdk17/include/linux -o "$work/libfloor.so" "$here/floor.c"
$jdk17/bin/javac --release 17 -d "$work/classes" "$here/../HeapDumpOrders.java"
[ $# -gt 0 ] || set -- $jdk17 /usr/lib/jvm/temurin-25-jdk-amd64
cd "$work"
for jdk in "$@"; do
  [ -x "$jdk/bin/jcmd" ] || { echo "skipping $jdk: no jcmd"; continue; }
  echo "== $jdk"
  rm -f release out.txt err.txt
  "$jdk/bin/java" -Xmx4g -Xms2g -agentpath:"$work/libfloor.so" -cp classes HeapDumpOrders 1000000 >out.txt 2>err.txt &
  pid=$!
  while ! grep -q ready out.txt 2>/dev/null; do sleep 0.2; done
  "$jdk/bin/jcmd" $pid GC.run >/dev/null; sleep 1
  for _ in 1 2 3; do
    echo "load average $(cut -d' ' -f1 /proc/loadavg)"
    before=$(awk '{print $14 + $15}' /proc/$pid/stat)
    secs=$("$jdk/bin/jcmd" $pid GC.heap_dump "$work/jcmd.hprof" | grep -o 'in [0-9.]* secs' || true)
    after=$(awk '{print $14 + $15}' /proc/$pid/stat)
    rm -f "$work/jcmd.hprof"
    echo "jcmd GC.heap_dump $secs, process CPU $(( (after - before) * 1000 / $(getconf CLK_TCK) )) ms"
    walks=$(grep -c FollowReferences err.txt || true)
    kill -QUIT $pid
    while [ "$(grep -c FollowReferences err.txt || true)" -le "$walks" ]; do sleep 0.2; done
  done
  grep floor: err.txt
  touch release
  wait $pid
done
