#!/usr/bin/env bash
# heap=dump: a changed agent's dump reads the same (hprof histo, dominators) as a reference agent's, both in one JVM.
# Usage: benches/heap-dump/same.sh REFERENCE_AGENT [AGENT] [--orders N] [--jdk HOME ...]
set -euo pipefail
exec python3 "$(dirname "$0")/same.py" "$@"
