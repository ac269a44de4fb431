#!/usr/bin/env bash
# cstack's cost on javac against no agent, Java-only sampling and async-profiler (built here from its source
# when a checkout is given in ASYNC_PROFILER_SRC, e.g. a clone of github.com/async-profiler/async-profiler).
# Usage: [ASYNC_PROFILER_SRC=dir] benches/cpu-samples/cstack.sh [rounds]   (default 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=""
if [ -n "${ASYNC_PROFILER_SRC:-}" ]; then
  (cd "$ASYNC_PROFILER_SRC" && JAVA_HOME=${HPROF_JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64} \
     make build/lib build/lib/libasyncProfiler.so >&2) && lib="$ASYNC_PROFILER_SRC/build/lib/libasyncProfiler.so"
fi
exec python3 "$root/benches/cpu-samples/cstack.py" "${1:-3}" $lib
