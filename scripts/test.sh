#!/usr/bin/env bash
# `make test`: the whole suite, then every test that could not run (a missing corpus, JDK or tool), by name.
# Tests record their skips in target/release/test-skips.log (jvm_harness::skip); a skip never passes silently.
set -uo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
log=target/release/test-skips.log
rm -f "$log"
$CARGO test --release --workspace "$@"
status=$?
echo
if [ -s "$log" ]; then
  echo "test summary: $(sort -u "$log" | wc -l) skip(s) — these did not run (all or in part):"
  sort -u "$log" | sed 's/^/  SKIPPED /'
else
  echo "test summary: no test skipped"
fi
[ $status -eq 0 ] && echo "test summary: all tests passed" || echo "test summary: FAILED (cargo test exit $status)"
exit $status
