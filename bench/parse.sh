#!/usr/bin/env bash
# FakeParse on this machine (run by hand, not by CI), against SQLite's own insert rate measured in the
# same run:
#
#   bench/parse.sh [installations]
#
# `harness serve` (release) from an empty state; bench/parse_bench.py registers that many devices with
# FakeAPNs, saves an installation for each through Parse's REST API (four client threads), inserts as
# many rows into a plain SQLite file (WAL, a transaction each, four threads: the anchor), then sends one
# push to all of them and reads from its _PushStatus how long FakeParse took from the call to the last
# APNs answer. Prints Markdown for docs/benchmarks.md.
source "$(dirname "$0")/common.sh" "curl" curl
count=${1:-10000}
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

"$harness" serve --ephemeral-ports --endpoints "$work/endpoints.json" --state-dir "$work/state" --fresh \
    >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do grep -q "services are up" "$work/serve.log" 2>/dev/null && break; sleep 0.05; done
result=$("$python" bench/parse_bench.py "$work/endpoints.json" "$count" "$work/anchor.sqlite")
field() { "$python" -c "import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, d))" "$result" "$1"; }

echo "$(nproc) cores, $count installations, $(date -u +%Y-%m-%d)"
echo
echo "| measure | anchor | FakeParse | FakeParse / anchor |"
echo "|---|---|---|---|"
saves=$(field savesPerSecond); inserts=$(field sqliteInsertsPerSecond)
echo "| installation saves per second (REST, 4 clients) | $inserts (SQLite inserts, WAL, a transaction each, 4 threads) | $saves | $(awk "BEGIN {printf \"%.2f\", $saves / $inserts}") |"
echo "| push to every installation: pushes per second, call to last APNs answer | target 5,000 | $(field "push['pushesPerSecond']") ($(field "push['seconds']") s; $(field "push['numSent']") sent, $(field "push['numFailed']") failed) | $(awk "BEGIN {printf \"%.2f\", $(field "push['pushesPerSecond']") / 5000}") of the target |"
[ "$(field saveFailures)" = 0 ] || echo "(saves refused: $(field saveFailures))"
