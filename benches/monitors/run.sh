#!/usr/bin/env bash
# monitor=y against no agent and JFR's jdk.JavaMonitorEnter: the overhead on two contended workloads and how
# much of the blocked time each profiler reports. Usage: benches/monitors/run.sh [runs per configuration, 5]
# JDK: HPROF_BENCH_JAVA_HOME, default /usr/lib/jvm/java-17-openjdk-amd64 (needs javac and jfr).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS="${1:-5}"
JAVA_HOME="${HPROF_BENCH_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"

if [ ! -x "$JAVA_HOME/bin/javac" ] || [ ! -x "$JAVA_HOME/bin/jfr" ]; then
  echo "benches/monitors: no JDK with javac and jfr at $JAVA_HOME; installing openjdk-17-jdk-headless" >&2
  if command -v apt-get >/dev/null; then
    ${SUDO:-$( [ "$(id -u)" = 0 ] || echo sudo )} apt-get install -y openjdk-17-jdk-headless >&2
  else
    echo "benches/monitors: install a JDK 17 and set HPROF_BENCH_JAVA_HOME" >&2; exit 1
  fi
fi
command -v python3 >/dev/null || { echo "benches/monitors: python3 is needed (apt-get install python3)" >&2; exit 1; }

echo "benches/monitors: building the agent (cargo build --release)" >&2
cargo build --release -p hprof-agent >&2
AGENT="$PWD/target/release/libhprof.so"

CLASSES="$(mktemp -d)"
trap 'rm -rf "$CLASSES"' EXIT
"$JAVA_HOME/bin/javac" -d "$CLASSES" benches/monitors/MonitorBench.java
python3 benches/monitors/bench.py "$JAVA_HOME" "$AGENT" "$CLASSES" "$REPS"
