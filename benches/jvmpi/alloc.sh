#!/usr/bin/env bash
# OBJECT_ALLOC through the JVMPI layer (an agent that only counts) against heap=sites, on H2 with 4 JDBC threads.
# Usage: benches/jvmpi/alloc.sh [rounds]   (default 5 interleaved rounds)
set -euo pipefail
exec python3 "$(dirname "$0")/alloc.py" "$@"
