#!/usr/bin/env bash
# Compiles cpu=times' Java probes (java/probes/java/lang/HprofCpuTimes.java) into the class file the agent
# embeds (crates/hprof-agent/src/capabilities/cpu_times/HprofCpuTimes.class). Run after editing the source.
# Needs a JDK 21+ javac (the class calls Thread.currentCarrierThread, which JDK 17 lacks and never reaches);
# the class file is version 61, so JDK 17 loads it. Usage: scripts/probe-class.sh [JAVA_HOME]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
home=${1:-/usr/lib/jvm/temurin-25-jdk-amd64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$home/bin/javac" -source 17 -target 17 -Xlint:-options -g:none --patch-module java.base="$root/java/probes" \
  -d "$out" "$root/java/probes/java/lang/HprofCpuTimes.java"
cp "$out/java/lang/HprofCpuTimes.class" "$root/crates/hprof-agent/src/capabilities/cpu_times/HprofCpuTimes.class"
echo "wrote crates/hprof-agent/src/capabilities/cpu_times/HprofCpuTimes.class"
