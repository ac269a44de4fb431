#!/usr/bin/env bash
# Where a cpu=times probe's time goes, for both kinds of probes. The agent built with probe-modes.patch (the
# JNI probes, HPROF_CPU_TIMES_PROBES=jni; HPROF_CT_MODE: 0 = the probe returns at once, 1 = + thread's profile
# lookup and lock, 2 = + one clock read, unset = everything) and java-probe-modes.patch (the Java probes, the
# default; HPROF_CT_MODE: 0 = return at once, 1 = + thread lookup and tree without a clock, 2 = + one clock
# read per call (at entry), unset = everything: a read at entry and at exit), run on EmptyCalls (CPU ns per
# call) and CpuBound (user + system seconds of the process), against no agent.
# Usage: benches/cpu-times/breakdown/run.sh [CpuBound rounds]   (default 30; JDK 17 `java` on PATH; a JDK 21+
# javac for the probe class, scripts/probe-class.sh's default). Builds a copy of the tree under target/ with
# the patches; the checkout itself is left as it is.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${1:-30}
work="$root/target/cpu-times-breakdown"
rm -rf "$work" && mkdir -p "$work/classes"
git -C "$root" worktree add --detach "$work/src" HEAD >/dev/null
trap 'git -C "$root" worktree remove --force "$work/src"' EXIT
git -C "$work/src" apply "$here/probe-modes.patch" "$here/java-probe-modes.patch"
"$work/src/scripts/probe-class.sh" >&2
CARGO_TARGET_DIR="$root/target" cargo build --release -p hprof-agent --manifest-path "$work/src/Cargo.toml" >&2
agent="$root/target/release/libhprof.so"
javac -d "$work/classes" "$here/EmptyCalls.java" "$root/java/bench/CpuBound.java"
uptime
echo "EmptyCalls 20,000,000, CPU ns per call (three passes):"
echo "  none: $(java -cp "$work/classes" EmptyCalls 20000000 | tr '\n' ' ')"
for probes in jni java; do
  for m in 0 1 2 9; do
    echo "  $probes mode $m: $(HPROF_CPU_TIMES_PROBES=$probes HPROF_CT_MODE=$m java -agentpath:"$agent=cpu=times,file=$work/e$m.txt" -cp "$work/classes" EmptyCalls 20000000 2>/dev/null | grep ns/call | tr '\n' ' ')"
  done
done
echo "CpuBound $rounds, wall / user / system seconds:"
/usr/bin/time -o "$work/time" -f '%e %U %S' java -cp "$work/classes" CpuBound "$rounds" >/dev/null
echo "  none: $(cat "$work/time")"
for probes in jni java; do
  for m in 0 1 2 9; do
    HPROF_CPU_TIMES_PROBES=$probes HPROF_CT_MODE=$m /usr/bin/time -o "$work/time" -f '%e %U %S' \
      java -agentpath:"$agent=cpu=times,file=$work/c$m.txt" -cp "$work/classes" CpuBound "$rounds" >/dev/null 2>&1
    echo "  $probes mode $m: $(cat "$work/time")"
  done
done
uptime
echo "(target/release/libhprof.so now has the switches: run cargo build --release before other benchmarks)"
