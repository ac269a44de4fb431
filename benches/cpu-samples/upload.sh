#!/usr/bin/env bash
# cpu=samples uploading every 10 s (otlp=) vs writing a file, steady state: the program's speed and the upload
# threads' own CPU time. Usage: benches/cpu-samples/upload.sh [seconds] [rounds]   (default 60 s, 3 rounds)
set -euo pipefail
exec python3 "$(dirname "$0")/upload.py" "$@"
