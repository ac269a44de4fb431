#!/usr/bin/env bash
# benches/frontend/serve.sh DUMP [ROUNDS] — how long `hprof serve` takes to build its index on DUMP, and how
# long each drill-down of its application's JSON API then takes (median and worst of ROUNDS, default 5),
# with the server's peak resident memory. Uses curl. The load average is printed: the machine is shared.
# Answers computed when first asked and then kept (a filtered package grouping, the dump diff object by
# object) are also timed the first time. With DIFF=1 the dump is served twice, as its own diff's base, for
# the object-by-object diff (`diffobjects`, computed in the background after the index: waited for, then
# timed): two indexes, twice the memory.
#   benches/frontend/run.sh 7000000 && benches/frontend/serve.sh target/bench-frontend/big-7000000.hprof
set -euo pipefail
dump=${1:?usage: serve.sh DUMP [ROUNDS]}
rounds=${2:-5}
hprof=${HPROF:-target/release/hprof}
out=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$out"' EXIT

start=$(date +%s.%N)
files=("$dump")
[ "${DIFF:-}" = 1 ] && files+=("$dump")
"$hprof" serve "${files[@]}" --port 0 >"$out/url" 2>/dev/null &
pid=$!
until grep -q http "$out/url" 2>/dev/null; do sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$out/url" | head -1)
url=${url%/}
until curl -s "$url/api/status" | python3 -c "import json,sys; s=json.load(sys.stdin); sys.exit(any(f['state']!='ready' for f in s['files']))"; do
  curl -s "$url/api/status" | grep -q '"state":"failed"' && { echo "the index failed"; exit 1; }
  sleep 0.5
done
echo "index built in $(echo "$(date +%s.%N) - $start" | bc) s; $(uptime | sed 's/.*load/load/')"

get() { curl -s -o "$out/body" -w '%{time_total}' "$url/api/$1"; }
if [ "${DIFF:-}" = 1 ]; then
  # The object diffs are computed in the background after the index: asked meanwhile, "computing" at once.
  t=$(get 'diffobjects?b=1')
  echo "diffobjects?b=1 right after the index: $(echo "$t * 1000" | bc) ms, $(head -c 80 "$out/body")"
  until ! curl -s "$url/api/status" | grep -q '"diffobjects"'; do sleep 0.5; done
  echo "object diffs computed in the background by $(echo "$(date +%s.%N) - $start" | bc) s; $(uptime | sed 's/.*load/load/')"
fi
first() { python3 -c "import json,sys; print(json.load(open('$out/body'))$1)"; }
# Ids to drill into: the biggest object under the roots, its biggest child, and that one's.
get 'dominators?limit=1' >/dev/null; a=$(first '["children"][0]["id"]')
get "dominators?id=$a&limit=1" >/dev/null; b=$(first '["children"][0]["id"]')
get "dominators?id=$b&limit=1" >/dev/null; c=$(first '["children"][0]["id"]' 2>/dev/null || echo "$b")
class=$(get 'histo?limit=1' >/dev/null; first '["classes"][0]["class"]')
enc=$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))" "$class")
queries=(
  summary 'histo?limit=100' 'histo?group=package' 'histo?group=loader&sort=instances'
  'dominators?limit=50' "dominators?id=$a&limit=50" "dominators?id=$b&limit=50" "dominators?id=$b&limit=50&offset=100000"
  "object?id=$c" "incoming?id=$c" "path?id=$c" "objects?class=$enc&limit=50" "objects?class=$enc&limit=50&offset=100000"
)
# Kept once computed: the first answer costs the computation.
kept=('histo?group=package&filter=java.util.*')
[ "${DIFF:-}" = 1 ] && kept+=('diffobjects?b=1')
printf '%-48s %9s\n' "first answer (ms)" first
for q in "${kept[@]}"; do
  printf '%-48s %9.1f\n' "$q" "$(echo "$(get "$q") * 1000" | bc)"
done
queries+=("${kept[@]}")
printf '%-48s %9s %9s\n' "request (ms)" median worst
for q in "${queries[@]}"; do
  ts=()
  for _ in $(seq "$rounds"); do ts+=("$(get "$q")"); done
  printf '%s\n' "${ts[@]}" | sort -n | awk -v q="$q" '{t[NR]=$1*1000} END {printf "%-48s %9.1f %9.1f\n", substr(q,1,48), t[int((NR+1)/2)], t[NR]}'
done
echo "peak resident: $(awk '/VmHWM/ {printf "%.0f MB", $2/1024}' "/proc/$pid/status"); $(uptime | sed 's/.*load/load/')"
