#!/usr/bin/env bash
# The JVMPI layer's load-time capabilities: CPU cost on CpuBound with an agent (GcStats) that enables none of
# the events behind them. Usage: benches/jvmpi/run.sh [rounds] [NAME=/path/libjvmpi.so | NAME=layer-options ...]
# (default 8 rounds: the built layer with locals=auto, its default, and with locals=y)
set -euo pipefail
exec python3 "$(dirname "$0")/caps.py" "$@"
